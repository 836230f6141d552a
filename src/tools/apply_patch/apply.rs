//! Applying a parsed patch: all or nothing.
//!
//! Every operation is first applied to an in-memory view of the files it touches
//! ([`Plan`]), in patch order, so later operations see earlier ones. Only when every hunk
//! of every file applied are the results written, by [`crate::atomic::commit`]: every new
//! content is staged beside its target, every file to replace or delete is set aside under
//! a hidden name (a deletion fails there, exactly as deleting would), then the new contents
//! are renamed into place and the set-aside names removed. A failing step undoes the ones
//! before it, so the tree is exactly as it was (created directories removed again).
//!
//! Hunk context is located exactly, then ignoring trailing whitespace, then ignoring the
//! whitespace around each line, then with Unicode punctuation (dashes, curly quotes,
//! ellipsis, odd spaces) folded to ASCII as Codex folds it; scope lines (`@@ def f():`)
//! first, in order. A hunk is placed only where it fits one way (module section below):
//! after the previous hunk, before the latest place the later hunks could still fit, at the
//! strictest comparison that finds it (at the end of the file when it is marked `*** End of
//! File` and fits there). Several places are refused, naming each, unless a unified header's
//! line names exactly one of them or a scope line's block (the lines indented deeper than
//! it) holds exactly one. Context lines keep the file's own characters.
//!
//! **Re-indenting.** When a hunk's old lines matched at another indentation than the file's,
//! or its added lines are indented with the other character (spaces in a tab-indented file,
//! tabs in a space-indented one), each run of added lines follows the nearest context or
//! removed line above it (below it at the start of a hunk): an added line indented deeper
//! than that line keeps the extra depth, in the file's characters; a shallower one is
//! measured in levels of the patch's unit. The report says so per hunk.
//!
//! **Stale lines.** A hunk that is in the file but for one line (all its other lines are
//! there, around it) is refused naming both versions of that line: the model's copy is
//! stale, and writing over it would undo someone's change.
//!
//! A chunk without context or removed lines is placed as Codex places it: an envelope one
//! at the end of the file (before its last line when that is empty) — its scope lines must
//! be in the file but do not move it, and it does not move the next chunk's search; a
//! unified one at the line its header names (after its scope line when it has one). An
//! envelope update that changes a file ends it with a newline, as Codex's does; a unified
//! diff follows its `\ No newline at end of file` markers.
//!
//! A hunk whose old lines are not found but whose new lines are (right where its old lines
//! would be, or where it would insert) is **already applied** and skipped; a patch whose
//! every operation is already in place succeeds with `already applied` and writes nothing.
//! Deleting a missing file counts as already done only when some other part of the patch
//! shows it was applied; on its own it is an error.
//!
//! In the envelope, Add File over an existing file and a move onto an existing file
//! overwrite it (as Codex does), keeping the existing file's conventions; a unified diff's
//! new file or rename onto an existing file is refused, as git refuses it; deleting a directory fails. Directories
//! a deletion or a move leaves empty are removed (inside the project directory only). A
//! FIFO, socket or device is refused by every operation and never opened.
//!
//! Symlinks ([`targets`]), as Codex and git treat them: Add File, Update File and a move's
//! destination write through a link (the file it points to changes, the link stays); Delete
//! File and the source of a move remove the link itself — its parent directories resolved,
//! its final component not — and leave the file it points to alone. A moved link's content
//! is read through it; a link moved onto the file it points to is an update of that file.
//! Once a patch has removed a link, later operations on that name act on the plain path
//! (Delete then Add makes a regular file in the link's place).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use super::parse::{FileOp, Format, Hunk, Patch};
use crate::atomic::{self, Kind};
use crate::textdoc::{Conventions, Splice, TextDoc};
use crate::tools::edit::comments::{differs_in_code, has_code};
use crate::tools::edit::feedback::visible;
use crate::tools::edit::lines::{FileLines, indent};
use crate::tools::edit::punctuation::{fold, fold_foreign};
use crate::tools::edit::reindent::{self, Unit, detect_unit, measure};

/// What a file is, on disk or in the plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    /// No file.
    Absent,
    /// A directory or a special file (FIFO, socket, device), described (`a directory`, `a
    /// FIFO (named pipe)`, ...); never opened, never changed.
    Other(&'static str),
    /// A symlink (only where an operation acts on the link itself), with what it points to.
    Link(PathBuf),
    /// A file with these bytes and permission bits.
    File {
        /// The content.
        bytes: Vec<u8>,
        /// Permission bits.
        mode: u32,
    },
}

/// How one operation of the patch turned out, for the report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// `Created`, `Modified`, `Deleted` or `Moved`.
    pub verb: &'static str,
    /// The path(s) as shown: `a`, or `a -> b` for a move.
    pub shown: String,
    /// The file the formatter runs on and the note attaches to.
    pub written: Option<PathBuf>,
    /// Hunks (1-based) found already applied.
    pub already: Vec<usize>,
    /// The whole operation was already in place.
    pub fully_applied_before: bool,
    /// What was adjusted while applying it (re-indented added lines), one line each.
    pub notes: Vec<String>,
}

/// The result of planning: the final state of every touched path, and the report.
#[derive(Debug)]
pub struct Plan {
    /// Paths in the order the patch first touches them, with their state before.
    pub before: Vec<(PathBuf, Entry)>,
    /// Their state after.
    pub after: BTreeMap<PathBuf, Entry>,
    /// One outcome per operation, in patch order.
    pub outcomes: Vec<Outcome>,
}

impl Plan {
    /// Whether applying the plan changes nothing.
    pub fn is_noop(&self) -> bool {
        self.before
            .iter()
            .all(|(path, entry)| self.after.get(path) == Some(entry))
    }
}

/// The description [`Entry::Other`] carries for a directory.
const DIRECTORY: &str = "a directory";

/// Reads what is at `path` itself (a symlink is reported, not followed; the paths of
/// [`targets`] are only links where the operation acts on the link). Only a regular file
/// is opened.
fn read_entry(path: &Path) -> std::io::Result<Entry> {
    match atomic::kind_of_link(path)? {
        Kind::Missing => Ok(Entry::Absent),
        Kind::Directory => Ok(Entry::Other(DIRECTORY)),
        Kind::Special(what) => Ok(Entry::Other(what)),
        Kind::Symlink => Ok(Entry::Link(std::fs::read_link(path)?)),
        Kind::File => Ok(Entry::File {
            bytes: read_bounded(path)?,
            mode: atomic::mode_for(path),
        }),
    }
}

/// Reads a regular file after checking its size from metadata: a file over
/// [`atomic::MAX_EDIT_BYTES`] is refused before any of it is read (a sparse file can claim
/// terabytes).
fn read_bounded(path: &Path) -> std::io::Result<Vec<u8>> {
    let len = crate::beneath::metadata(path, false)?.len();
    if len > atomic::MAX_EDIT_BYTES {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!(
                "it has {len} bytes, over the limit of {} bytes for patching in place",
                atomic::MAX_EDIT_BYTES
            ),
        ));
    }
    atomic::read_regular(path)
}

/// Where one operation acts on disk (module doc: symlinks).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// The file the operation changes: written (Add, Update), or removed (Delete, the
    /// source of a move).
    pub path: PathBuf,
    /// `path` is a symlink the operation removes itself (Delete, the source of a move).
    pub link: bool,
    /// A moved link: the file its content is read from (the file it points to).
    pub read: Option<PathBuf>,
    /// The destination of a move; `None` when the move ends where it started.
    pub dest: Option<PathBuf>,
}

/// How the paths of a patch are resolved: `follow` resolves every symlink (the final
/// component's too), `own` all but the final component (the path of a link itself).
pub struct Resolver<'a> {
    /// Every symlink followed (`paths::resolve`).
    pub follow: &'a dyn Fn(&str) -> PathBuf,
    /// The final component kept (`paths::resolve_link`).
    pub own: &'a dyn Fn(&str) -> PathBuf,
}

/// Where each operation of `patch` acts, in patch order (module doc: symlinks). Looks only
/// at which paths are symlinks, so the policy can be asked before anything is read.
pub fn targets(patch: &Patch, resolver: &Resolver) -> Vec<Target> {
    let is_link = |p: &Path| matches!(atomic::kind_of_link(p), Ok(Kind::Symlink));
    // Links this patch removes: later operations on their names act on the plain path.
    let mut unlinked: BTreeSet<PathBuf> = BTreeSet::new();
    let written = |p: &str, unlinked: &BTreeSet<PathBuf>| {
        let own = (resolver.own)(p);
        if unlinked.contains(&own) {
            own
        } else {
            (resolver.follow)(p)
        }
    };
    let mut out = Vec::with_capacity(patch.ops.len());
    for op in &patch.ops {
        let target = match op {
            FileOp::Add { path, .. }
            | FileOp::Update {
                path,
                move_to: None,
                ..
            } => Target {
                path: written(path, &unlinked),
                link: false,
                read: None,
                dest: None,
            },
            FileOp::Delete { path, .. } => {
                // The path itself: for anything but a link the same as the followed one.
                let own = (resolver.own)(path);
                let link = !unlinked.contains(&own) && is_link(&own);
                if link {
                    unlinked.insert(own.clone());
                }
                Target {
                    path: own,
                    link,
                    read: None,
                    dest: None,
                }
            }
            FileOp::Update {
                path,
                move_to: Some(to),
                ..
            } => {
                let own = (resolver.own)(path);
                let link = !unlinked.contains(&own) && is_link(&own);
                let source = if link {
                    own.clone()
                } else {
                    written(path, &unlinked)
                };
                let content = if link {
                    (resolver.follow)(path)
                } else {
                    source.clone()
                };
                let dest = written(to, &unlinked);
                if dest == content || dest == source {
                    // Moved onto itself (or a link onto the file it points to): an update.
                    Target {
                        path: content,
                        link: false,
                        read: None,
                        dest: None,
                    }
                } else {
                    if link {
                        unlinked.insert(own);
                    }
                    Target {
                        path: source,
                        link,
                        read: link.then_some(content),
                        dest: Some(dest),
                    }
                }
            }
        };
        out.push(target);
    }
    out
}

/// How a step went: applied (with the hunks found already in place, and notes) or already
/// applied.
enum Step {
    Applied(Vec<usize>, Vec<String>),
    AlreadyApplied,
    MissingDelete,
}

/// Where a file that is not there was probably meant to be (a `Did you mean:` line), for
/// the message that says it is not found.
pub type Hint<'a> = &'a dyn Fn(&Path) -> Option<String>;

/// Plans the whole patch. `targets` says where each operation acts ([`targets`]), `show`
/// how outputs show a resolved path, `hint` what a missing file's message adds. The error
/// is the refusal message.
pub fn plan(
    patch: &Patch,
    targets: &[Target],
    show: &dyn Fn(&Path) -> String,
    hint: Hint,
) -> Result<Plan, String> {
    let mut state = State {
        before: Vec::new(),
        after: BTreeMap::new(),
    };
    let mut outcomes = Vec::new();
    let mut missing_deletes = Vec::new();
    if targets.len() != patch.ops.len() {
        return Err("internal error: the patch's operations and targets differ".into());
    }
    for (n, (op, target)) in patch.ops.iter().zip(targets).enumerate() {
        let step = apply_op(&mut state, op, target, patch.format, show, hint)?;
        let in_place = matches!(step, Step::AlreadyApplied | Step::MissingDelete);
        let (verb, shown, written) = describe(op, target, show, &state, in_place);
        let mut outcome = Outcome {
            verb,
            shown,
            written,
            already: Vec::new(),
            fully_applied_before: false,
            notes: Vec::new(),
        };
        match step {
            Step::Applied(already, notes) => {
                outcome.already = already;
                outcome.notes = notes;
            }
            Step::AlreadyApplied => outcome.fully_applied_before = true,
            Step::MissingDelete => {
                outcome.fully_applied_before = true;
                missing_deletes.push(n);
            }
        }
        outcomes.push(outcome);
    }
    let evidence = outcomes.iter().enumerate().any(|(n, o)| {
        !missing_deletes.contains(&n) && (o.fully_applied_before || !o.already.is_empty())
    });
    if let Some(&n) = missing_deletes.first()
        && !evidence
    {
        return Err(not_found("delete", &targets[n].path, show, hint));
    }
    Ok(Plan {
        before: state.before,
        after: state.after,
        outcomes,
    })
}

/// The in-memory view of the touched files.
struct State {
    before: Vec<(PathBuf, Entry)>,
    after: BTreeMap<PathBuf, Entry>,
}

impl State {
    fn get(&mut self, path: &Path) -> Result<Entry, String> {
        if let Some(entry) = self.after.get(path) {
            return Ok(entry.clone());
        }
        let entry =
            read_entry(path).map_err(|e| format!("Error reading {}: {e}", path.display()))?;
        self.before.push((path.to_path_buf(), entry.clone()));
        self.after.insert(path.to_path_buf(), entry.clone());
        Ok(entry)
    }

    fn set(&mut self, path: &Path, entry: Entry) -> Result<(), String> {
        self.get(path)?;
        self.after.insert(path.to_path_buf(), entry);
        Ok(())
    }
}

/// The report's verb, path(s) and written file of one operation. An Add File over an
/// existing file is `Modified`, unless the file already held that content (`in_place`):
/// an operation already applied keeps its own verb.
fn describe(
    op: &FileOp,
    target: &Target,
    show: &dyn Fn(&Path) -> String,
    state: &State,
    in_place: bool,
) -> (&'static str, String, Option<PathBuf>) {
    let path = &target.path;
    match (op, &target.dest) {
        (FileOp::Add { .. }, _) => {
            let existed = !in_place
                && state
                    .before
                    .iter()
                    .any(|(p, e)| p == path && matches!(e, Entry::File { .. }));
            let verb = if existed { "Modified" } else { "Created" };
            (verb, show(path), Some(path.clone()))
        }
        (FileOp::Delete { .. }, _) => ("Deleted", show(path), None),
        (FileOp::Update { .. }, Some(dest)) => (
            "Moved",
            format!("{} -> {}", show(path), show(dest)),
            Some(dest.clone()),
        ),
        (FileOp::Update { .. }, None) => ("Modified", show(path), Some(path.clone())),
    }
}

/// The refusal for a target that is not a regular file: a directory gets the operation's
/// own message (`directory`), anything else is named for what it is.
fn not_a_file(what: &str, shown: &str, directory: String) -> String {
    if what == DIRECTORY {
        directory
    } else {
        atomic::not_regular(shown, what)
    }
}

/// The refusal for an existing file without any write bit (checked from the mode, so a
/// read-only mark holds even for root, as in an editor).
fn read_only(mode: u32, verb: &str, shown: &str) -> Result<(), String> {
    if mode & 0o222 == 0 {
        return Err(format!(
            "Cannot {verb} {shown}: it is read-only (mode {:04o}, no write bit). Make it \
             writable first (chmod u+w) if it is meant to change.",
            mode & 0o7777
        ));
    }
    Ok(())
}

/// A link where a file is to be read or written: only when resolving it failed (a loop).
/// `File to VERB not found: PATH`, and the hint's line when it has one.
fn not_found(verb: &str, path: &Path, show: &dyn Fn(&Path) -> String, hint: Hint) -> String {
    let mut message = format!("File to {verb} not found: {}", show(path));
    if let Some(hint) = hint(path) {
        message.push('\n');
        message.push_str(&hint);
    }
    message
}

fn unresolved_link(shown: &str) -> String {
    format!("Cannot use {shown}: it is a symbolic link that does not resolve to a file")
}

fn apply_op(
    state: &mut State,
    op: &FileOp,
    at: &Target,
    format: Format,
    show: &dyn Fn(&Path) -> String,
    hint: Hint,
) -> Result<Step, String> {
    match op {
        FileOp::Add {
            lines,
            no_newline,
            mode,
            ..
        } => {
            let target = &at.path;
            let mut content = lines.join("\n");
            if !lines.is_empty() && !no_newline {
                content.push('\n');
            }
            match state.get(target)? {
                Entry::Other(what) => Err(not_a_file(
                    what,
                    &show(target),
                    format!("Cannot add {}: a directory is in the way", show(target)),
                )),
                Entry::Link(_) => Err(unresolved_link(&show(target))),
                Entry::File {
                    bytes,
                    mode: old_mode,
                } => {
                    read_only(old_mode, "replace", &show(target))?;
                    let new = Conventions::detect(&bytes).apply_whole(&content);
                    let mode = mode.unwrap_or(old_mode);
                    if new == bytes && mode == old_mode {
                        return Ok(Step::AlreadyApplied);
                    }
                    if format == Format::Unified {
                        // A diff's new file is one that was not there: overwriting a file
                        // the diff never saw would lose it (git apply refuses it too).
                        return Err(format!(
                            "Cannot create {}: it already exists, and the diff adds it as a new \
                             file. Change it with a hunk, or delete it first in the same patch.",
                            show(target)
                        ));
                    }
                    state.set(target, Entry::File { bytes: new, mode })?;
                    Ok(Step::Applied(Vec::new(), Vec::new()))
                }
                Entry::Absent => {
                    let mode = mode.unwrap_or(atomic::NEW_FILE_MODE);
                    state.set(
                        target,
                        Entry::File {
                            bytes: content.into_bytes(),
                            mode,
                        },
                    )?;
                    Ok(Step::Applied(Vec::new(), Vec::new()))
                }
            }
        }
        FileOp::Delete { lines, .. } => {
            let target = &at.path;
            match state.get(target)? {
                Entry::Other(what) => Err(not_a_file(
                    what,
                    &show(target),
                    format!(
                        "Cannot delete {}: it is a directory, not a file",
                        show(target)
                    ),
                )),
                Entry::Absent => Ok(Step::MissingDelete),
                Entry::Link(points_to) => {
                    if let Some(expected) = lines {
                        check_deleted_link(target, &points_to, expected)
                            .map_err(|e| format!("Cannot delete {}: {e}", show(target)))?;
                    }
                    state.set(target, Entry::Absent)?;
                    Ok(Step::Applied(Vec::new(), Vec::new()))
                }
                Entry::File { bytes, mode } => {
                    read_only(mode, "delete", &show(target))?;
                    if let Some(expected) = lines {
                        check_deleted_content(&bytes, expected)
                            .map_err(|e| format!("Cannot delete {}: {e}", show(target)))?;
                    }
                    state.set(target, Entry::Absent)?;
                    Ok(Step::Applied(Vec::new(), Vec::new()))
                }
            }
        }
        FileOp::Update { hunks, mode, .. } => {
            let source = &at.path;
            let dest = at.dest.as_ref();
            // A moved link is read through; anything else is read where it is.
            let content_path = at.read.as_ref().unwrap_or(source);
            if at.read.is_some() {
                match state.get(source)? {
                    Entry::Link(_) => {}
                    Entry::Absent => {
                        return Err(not_found("update", source, show, hint));
                    }
                    _ => return Err(unresolved_link(&show(source))),
                }
            }
            let (bytes, old_mode) = match state.get(content_path)? {
                Entry::File { bytes, mode } => {
                    read_only(mode, "update", &show(content_path))?;
                    (bytes, mode)
                }
                Entry::Other(what) => {
                    return Err(not_a_file(
                        what,
                        &show(content_path),
                        format!(
                            "Cannot update {}: it is a directory, not a file",
                            show(content_path)
                        ),
                    ));
                }
                Entry::Link(_) => return Err(unresolved_link(&show(content_path))),
                Entry::Absent => {
                    // A move that already happened leaves the destination with the new text.
                    if let Some(dest) = dest
                        && let Entry::File { bytes, .. } = state.get(dest)?
                        && let Some(doc) = TextDoc::decode(&bytes)
                        && let Ok(result) = apply_hunks(&doc, hunks, format, &show(dest))
                        && result.already.len() == hunks.len()
                    {
                        return Ok(Step::AlreadyApplied);
                    }
                    return Err(not_found("update", content_path, show, hint));
                }
            };
            let Some(doc) = TextDoc::decode(&bytes) else {
                return Err(format!(
                    "Cannot update {}: it is not UTF-8 text",
                    show(content_path)
                ));
            };
            let result = apply_hunks(&doc, hunks, format, &show(content_path))?;
            let new_bytes = doc.render(&result.splices, result.final_newline);
            let new_mode = mode.unwrap_or(old_mode);
            match dest {
                None => {
                    if new_bytes == bytes && new_mode == old_mode {
                        return Ok(if hunks.is_empty() {
                            Step::Applied(Vec::new(), Vec::new())
                        } else {
                            Step::AlreadyApplied
                        });
                    }
                    state.set(
                        source,
                        Entry::File {
                            bytes: new_bytes,
                            mode: new_mode,
                        },
                    )?;
                }
                Some(dest) => {
                    match state.get(dest)? {
                        Entry::Other(what) => {
                            return Err(not_a_file(
                                what,
                                &show(dest),
                                format!(
                                    "Cannot move {} to {}: a directory is in the way",
                                    show(source),
                                    show(dest)
                                ),
                            ));
                        }
                        Entry::Link(_) => return Err(unresolved_link(&show(dest))),
                        Entry::File { .. } if format == Format::Unified => {
                            return Err(format!(
                                "Cannot move {} to {}: {} already exists, and a diff's rename \
                                 does not replace a file (git apply refuses it too). Delete it \
                                 first in the same patch.",
                                show(source),
                                show(dest),
                                show(dest)
                            ));
                        }
                        Entry::Absent | Entry::File { .. } => {}
                    }
                    state.set(source, Entry::Absent)?;
                    state.set(
                        dest,
                        Entry::File {
                            bytes: new_bytes,
                            mode: new_mode,
                        },
                    )?;
                }
            }
            Ok(Step::Applied(result.already, result.notes))
        }
    }
}

/// A unified diff's deletion of a symlink lists either the link's own text (git's blob of a
/// link) or the lines of the file it points to: refuse to delete the link when it is
/// neither.
fn check_deleted_link(link: &Path, points_to: &Path, expected: &[String]) -> Result<(), String> {
    let own = points_to.as_os_str().as_encoded_bytes();
    let own_error = match check_deleted_content(own, expected) {
        Ok(()) => return Ok(()),
        Err(err) => err,
    };
    if let Ok(Kind::File) = atomic::kind(link)
        && let Ok(bytes) = atomic::read_regular_through(link)
        && check_deleted_content(&bytes, expected).is_ok()
    {
        return Ok(());
    }
    Err(format!(
        "it is a symbolic link to {} and {own_error}",
        points_to.display()
    ))
}

/// A unified diff's deletion lists the file's lines: refuse to delete something else.
fn check_deleted_content(bytes: &[u8], expected: &[String]) -> Result<(), String> {
    let Some(doc) = TextDoc::decode(bytes) else {
        return Ok(());
    };
    let file = FileLines::new(&doc.text);
    let actual: Vec<&str> = (0..file.len()).map(|i| file.line(i).trim_end()).collect();
    let wanted: Vec<&str> = expected.iter().map(|l| l.trim_end()).collect();
    if actual == wanted {
        return Ok(());
    }
    let at = actual
        .iter()
        .zip(&wanted)
        .position(|(a, w)| a != w)
        .unwrap_or(actual.len().min(wanted.len()));
    Err(format!(
        "its content is not what the patch deletes (they differ at line {}: the patch has `{}`, \
         the file `{}`)",
        at + 1,
        wanted
            .get(at)
            .map_or("<end of file>".into(), |l| visible(l)),
        actual
            .get(at)
            .map_or("<end of file>".into(), |l| visible(l)),
    ))
}

/// What applying the hunks of one file gives.
#[derive(Debug)]
struct HunkResult {
    /// The changes, sorted.
    pub splices: Vec<Splice>,
    /// Hunks (1-based) that were already applied.
    pub already: Vec<usize>,
    /// What `\ No newline at end of file` markers require.
    pub final_newline: Option<bool>,
    /// Hunks whose added lines were re-indented, said for the report.
    pub notes: Vec<String>,
}

/// Applies `hunks` to `doc` (module doc); the error names the file, the hunk and the first
/// differing line, or every place an ambiguous hunk fits.
fn apply_hunks(
    doc: &TextDoc,
    hunks: &[Hunk],
    format: Format,
    shown: &str,
) -> Result<HunkResult, String> {
    let file = FileLines::new(&doc.text);
    let lines: Vec<&str> = (0..file.len()).map(|i| file.line(i)).collect();
    let unit = std::cell::OnceCell::new();
    let file_unit = || *unit.get_or_init(|| reindent::file_unit(&file));
    let limits = later_limits(&lines, hunks);
    // Prose says nothing about blocks by its indentation.
    let structured = !["md", "markdown", "rst", "txt", "adoc", "org"]
        .iter()
        .any(|ext| {
            shown
                .rsplit_once('.')
                .is_some_and(|(_, e)| e.eq_ignore_ascii_case(ext))
        });
    let mut cursor = 0usize;
    let mut offset: i64 = 0;
    let mut replacements: Vec<(usize, usize, Vec<String>)> = Vec::new();
    let mut already = Vec::new();
    let mut notes = Vec::new();
    let count = hunks.len();
    for (k, hunk) in hunks.iter().enumerate() {
        let number = k + 1;
        // Every way the scope lines can be read (a scope line may be in the file more than
        // once): where the search starts, and the last scope line's place.
        let scoped = scope_starts(&lines, &hunk.scopes, cursor).map_err(|(scope, from)| {
            format!(
                "{shown}: hunk {number} of {count} (patch line {}): its scope line `{}` is not in \
                 the file{}",
                hunk.line,
                visible(scope),
                after_text(from)
            )
        })?;
        let from = scoped[0].0;
        let hint = hunk.hint.map(|h| {
            let shifted = h as i64 - 1 + offset;
            shifted.max(0) as usize
        });
        let (mut old, mut new): (&[String], &[String]) = (&hunk.old, &hunk.new);
        if old.is_empty() {
            let envelope = format == Format::Envelope;
            let at = if envelope {
                // As Codex places it: at the end of the file, before its last line when that
                // is empty; a scope only has to be there.
                if lines.last().is_some_and(|l| l.is_empty()) {
                    lines.len() - 1
                } else {
                    lines.len()
                }
            } else if !hunk.scopes.is_empty() {
                from
            } else if let Some(h) = hunk.hint {
                // `@@ -K,0 …` inserts after line K.
                (h as i64 + offset).clamp(0, lines.len() as i64) as usize
            } else if new.is_empty() {
                return Err(format!(
                    "{shown}: hunk {number} of {count} (patch line {}) has no lines.",
                    hunk.line
                ));
            } else {
                return Err(format!(
                    "{shown}: hunk {number} of {count} (patch line {}) has only added lines and \
                     no line numbers: add a context line or two around them (or an `@@ -K,0 \
                     +K+1,N @@` header) so that it fits one place.",
                    hunk.line
                ));
            };
            let at = if envelope {
                at
            } else {
                at.max(cursor).min(lines.len())
            };
            let n = new.len();
            // Inserted before: the lines are right where they would go (or, at the end of
            // the file, right before it).
            let there = lines.get(at..at + n).is_some_and(|s| lines_equal(s, new))
                || ((at == lines.len() || envelope)
                    && at >= n
                    && lines_equal(&lines[at - n..at], new));
            if n > 0 && there {
                already.push(number);
                continue;
            }
            replacements.push((at, 0, new.to_vec()));
            if !envelope {
                offset += new.len() as i64;
                cursor = at;
            }
            continue;
        }
        let place = |old: &[String]| {
            let mut places: Vec<usize> = Vec::new();
            for &(from, scope_at) in &scoped {
                match place(&lines, old, from, hunk, hint, limits[k], scope_at) {
                    Ok(Some(at)) if !places.contains(&at) => places.push(at),
                    Ok(_) => {}
                    Err(starts) => {
                        return Err(ambiguous(hunk, number, count, shown, old.len(), &starts));
                    }
                }
            }
            match places[..] {
                [] => Ok(None),
                [at] => Ok(Some(at)),
                _ => Err(ambiguous(hunk, number, count, shown, old.len(), &places)),
            }
        };
        let mut found = place(old)?;
        if found.is_none() && old.last().is_some_and(String::is_empty) {
            // A trailing empty context line stands for the final newline.
            old = &old[..old.len() - 1];
            if new.last().is_some_and(String::is_empty) {
                new = &new[..new.len() - 1];
            }
            found = if old.is_empty() { None } else { place(old)? };
        }
        if found.is_none() {
            // Blank context lines the file does not have at the hunk's edges (one imagined
            // before the first line, or past the end of the file) locate nothing.
            let blank = |l: &String| l.trim().is_empty();
            let lead = old
                .iter()
                .zip(new.iter())
                .take_while(|(o, n)| blank(o) && blank(n))
                .count();
            let trail = old
                .iter()
                .rev()
                .zip(new.iter().rev())
                .take_while(|(o, n)| blank(o) && blank(n))
                .count();
            if lead + trail > 0 && lead + trail < old.len().min(new.len()) {
                let trimmed = &old[lead..old.len() - trail];
                if let Some(at) = place(trimmed)? {
                    old = trimmed;
                    new = &new[lead..new.len() - trail];
                    found = Some(at);
                }
            }
        }
        let mut out_of_order = false;
        if found.is_none()
            && from > 0
            && locate(&lines, new, from, hunk.end_of_file, hint).is_none()
            && let Ok(Some(at)) = place_anywhere(&lines, old)
            && !replacements
                .iter()
                .any(|&(start, len, _)| at < start + len.max(1) && start < at + old.len())
        {
            // Before the previous hunk, and the one place in the whole file: the hunks were
            // written out of order.
            found = Some(at);
            out_of_order = true;
        }
        match found {
            Some(at)
                if new.len() > old.len()
                    && lines
                        .get(at..at + new.len())
                        .is_some_and(|s| lines_equal(s, new)) =>
            {
                // The old lines are a prefix of the new ones and the new ones are there.
                already.push(number);
                cursor = at + new.len();
            }
            Some(at) => {
                let (written, note) =
                    write_new_lines(&lines[at..at + old.len()], old, new, &file_unit, structured);
                if let Some(note) = note {
                    notes.push(format!("hunk {number}: {note}"));
                }
                replacements.push((at, old.len(), written));
                if out_of_order {
                    notes.push(format!(
                        "hunk {number}: placed at line {}, before the hunk above it in the patch",
                        at + 1
                    ));
                } else {
                    offset += new.len() as i64 - old.len() as i64;
                    cursor = at + old.len();
                }
            }
            None => match locate(&lines, new, from, hunk.end_of_file, hint)
                .filter(|_| !new.is_empty())
            {
                Some(at) => {
                    already.push(number);
                    cursor = at + new.len();
                }
                None => {
                    return Err(mismatch(&lines, hunk, old, from, number, count, shown));
                }
            },
        }
    }
    let final_newline = if hunks.iter().any(|h| h.new_no_newline) {
        Some(false)
    } else if hunks.iter().any(|h| h.old_no_newline)
        || (format == Format::Envelope && !replacements.is_empty())
    {
        // An envelope update ends its file with a newline, as Codex's does.
        Some(true)
    } else {
        None
    };
    // Envelope additions at the end may precede later chunks; a stable sort keeps the
    // patch order of those at one place.
    replacements.sort_by_key(|&(at, len, _)| (at, len));
    let splices = replacements
        .into_iter()
        .map(|(at, len, new)| line_splice(&file, at, len, &new))
        .collect();
    Ok(HunkResult {
        splices,
        already,
        final_newline,
        notes,
    })
}

/// Where a hunk's search starts after its scope lines (each located after the one before,
/// from `cursor`), for every place the first scope line is in the file (up to 20), with the
/// last scope line's index. No scopes: the cursor alone. The error is the scope line that
/// is not there and where the search for it started.
#[allow(clippy::type_complexity)]
fn scope_starts<'a>(
    lines: &[&str],
    scopes: &'a [String],
    cursor: usize,
) -> Result<Vec<(usize, Option<usize>)>, (&'a String, usize)> {
    let Some((first, rest)) = scopes.split_first() else {
        return Ok(vec![(cursor, None)]);
    };
    let pattern = std::slice::from_ref(first);
    let Some(at) = locate(lines, pattern, cursor, false, None) else {
        return Err((first, cursor));
    };
    // The other places of the first scope line, compared as strictly as the first was found.
    let level = (0..LEVELS.len())
        .find(|&l| matches_at(lines, pattern, at, l))
        .unwrap_or(0);
    let mut out = Vec::new();
    let mut failed = None;
    for start in (at..lines.len())
        .filter(|&i| matches_at(lines, pattern, i, level))
        .take(20)
    {
        let mut from = start + 1;
        let mut last = start;
        let mut whole = true;
        for scope in rest {
            match locate(lines, std::slice::from_ref(scope), from, false, None) {
                Some(i) => {
                    from = i + 1;
                    last = i;
                }
                None => {
                    failed.get_or_insert((scope, from));
                    whole = false;
                    break;
                }
            }
        }
        if whole {
            out.push((from, Some(last)));
        }
    }
    match (out.is_empty(), failed) {
        (true, Some(failure)) => Err(failure),
        (true, None) => Err((first, cursor)),
        _ => Ok(out),
    }
}

/// For each hunk, the line before which it must end so that the hunks after it still fit
/// in order: the latest place the next placeable hunk could start (found with every
/// tolerance, so the limit is never too tight). A hunk that cannot be placed at all limits
/// nothing; it fails on its own turn.
fn later_limits(lines: &[&str], hunks: &[Hunk]) -> Vec<usize> {
    let mut limits = vec![lines.len(); hunks.len()];
    let mut limit = lines.len();
    for (k, hunk) in hunks.iter().enumerate().rev() {
        limits[k] = limit;
        let mut old: &[String] = &hunk.old;
        if old.last().is_some_and(String::is_empty) && old.len() > 1 {
            old = &old[..old.len() - 1];
        }
        if old.is_empty() || old.len() > limit {
            continue;
        }
        if let Some(start) = (0..=limit - old.len())
            .rev()
            .find(|&i| matches_at(lines, old, i, SLIPS))
        {
            limit = start;
        }
    }
    limits
}

/// How context is compared, strictest first: exactly, ignoring trailing whitespace,
/// ignoring the whitespace around each line, and with Unicode punctuation folded to ASCII.
const LEVELS: [fn(&str, &str) -> bool; 4] = [
    |a, b| a == b,
    |a, b| a.trim_end() == b.trim_end(),
    |a, b| a.trim() == b.trim(),
    |a, b| fold(a.trim()).trim() == fold(b.trim()).trim(),
];

/// The loosest comparison, after [`LEVELS`]: a few lines may differ inside a comment
/// ([`slipped`]).
const SLIPS: usize = LEVELS.len();

/// Whether `pattern` is at line `i` at comparison level `level` (an index into [`LEVELS`],
/// or [`SLIPS`]).
fn matches_at(lines: &[&str], pattern: &[String], i: usize, level: usize) -> bool {
    if i + pattern.len() > lines.len() {
        return false;
    }
    let Some(same) = LEVELS.get(level) else {
        return slipped(&lines[i..i + pattern.len()], pattern);
    };
    pattern
        .iter()
        .enumerate()
        .all(|(j, p)| same(lines[i + j], p))
}

/// Whether `window` is `pattern` at the loosest level of [`LEVELS`], or but for a slip
/// inside a comment on a line or two, with at least as many other lines of code equal (and
/// two at least) to vouch for the place. A line that differs in code never
/// passes: it is stale.
fn slipped(window: &[&str], pattern: &[String]) -> bool {
    let loosest = LEVELS[LEVELS.len() - 1];
    let (mut slips, mut evidence) = (0usize, 0usize);
    for (have, want) in window.iter().zip(pattern) {
        if loosest(have, want) {
            if has_code(want) {
                evidence += 1;
            }
            continue;
        }
        if want.trim().is_empty() || have.trim().is_empty() || differs_in_code(have, want) {
            return false;
        }
        slips += 1;
    }
    // No slip at all is the loosest level's match: the looser one includes the stricter.
    slips == 0 || (slips <= 2 && evidence >= slips.max(2))
}

/// Where the changed lines of a hunk go: the one place at or after `from` where they fit
/// (at the strictest comparison that finds any) and that leaves room for the hunks after
/// it (`limit`). Several places are `Err` with all of them, unless a unified header's line
/// names exactly one of them, or a scope line's block holds exactly one. `*** End of File`
/// takes the end of the file when the lines are there.
fn place(
    lines: &[&str],
    old: &[String],
    from: usize,
    hunk: &Hunk,
    hint: Option<usize>,
    limit: usize,
    scope_at: Option<usize>,
) -> Result<Option<usize>, Vec<usize>> {
    if old.is_empty() || old.len() > lines.len() {
        return Ok(None);
    }
    let last_start = lines.len() - old.len();
    for level in 0..=SLIPS {
        if hunk.end_of_file && last_start >= from && matches_at(lines, old, last_start, level) {
            return Ok(Some(last_start));
        }
        let until = limit.min(lines.len()).saturating_sub(old.len()).max(from);
        let mut starts: Vec<usize> = (from..=until.min(last_start))
            .filter(|&i| matches_at(lines, old, i, level))
            .collect();
        if starts.is_empty() {
            // A place past the later hunks' room is still the only one: they fail on
            // their own turn, with their own message.
            starts = (from..=last_start)
                .filter(|&i| matches_at(lines, old, i, level))
                .take(1)
                .collect();
        }
        match starts.len() {
            0 => continue,
            1 => return Ok(Some(starts[0])),
            _ => {}
        }
        if let Some(h) = hint
            && let [only] = starts.iter().filter(|&&s| s == h).collect::<Vec<_>>()[..]
        {
            return Ok(Some(*only));
        }
        if let Some(scope) = scope_at
            && let Some(end) = block_end(lines, scope)
        {
            let inside: Vec<usize> = starts.iter().copied().filter(|&s| s < end).collect();
            if inside.len() == 1 {
                return Ok(Some(inside[0]));
            }
        }
        return Err(starts);
    }
    Ok(None)
}

/// The one place of a hunk's old lines in the whole file, whatever came before it; the
/// error lists the places when there are several.
fn place_anywhere(lines: &[&str], old: &[String]) -> Result<Option<usize>, Vec<usize>> {
    place(lines, old, 0, &Hunk::default(), None, lines.len(), None)
}

/// The end of the block a scope line opens, when the lines after it are indented deeper:
/// the first later line indented no deeper than the scope line. `None` for a scope line
/// whose next line is not deeper (a heading in a flat file), which says nothing of where
/// its part ends.
fn block_end(lines: &[&str], scope: usize) -> Option<usize> {
    let width = |l: &str| l.len() - l.trim_start().len();
    let depth = width(lines[scope]);
    let next = (scope + 1..lines.len()).find(|&i| !lines[i].trim().is_empty())?;
    if width(lines[next]) <= depth {
        return None;
    }
    Some(
        (next..lines.len())
            .find(|&i| !lines[i].trim().is_empty() && width(lines[i]) <= depth)
            .unwrap_or(lines.len()),
    )
}

/// The refusal for a hunk whose lines fit several places.
fn ambiguous(
    hunk: &Hunk,
    number: usize,
    count: usize,
    shown: &str,
    len: usize,
    starts: &[usize],
) -> String {
    const SHOWN: usize = 10;
    let mut places: Vec<String> = starts
        .iter()
        .take(SHOWN)
        .map(|&s| {
            if len == 1 {
                format!("line {}", s + 1)
            } else {
                format!("lines {}-{}", s + 1, s + len)
            }
        })
        .collect();
    if starts.len() > SHOWN {
        places.push(format!("and {} more", starts.len() - SHOWN));
    }
    format!(
        "{shown}: hunk {number} of {count} (patch line {}) fits {} places ({}), so it was not \
         applied anywhere: add context lines that occur only at the intended place (or an `@@ \
         LINE` scope line naming the enclosing function or class).",
        hunk.line,
        starts.len(),
        places.join(", ")
    )
}

fn after_text(from: usize) -> String {
    if from == 0 {
        String::new()
    } else {
        format!(" after line {from}")
    }
}

/// The splice replacing `len` lines at `at` with `new` (inserting when `len` is 0).
fn line_splice(file: &FileLines, at: usize, len: usize, new: &[String]) -> Splice {
    let text_len = file.text().len();
    if len == 0 {
        let mut text = new.join("\n");
        if at < file.len() {
            text.push('\n');
            let start = file.start(at);
            return Splice {
                range: start..start,
                text,
            };
        }
        if file.text().ends_with('\n') || file.is_empty() {
            text.push('\n');
        } else {
            text.insert(0, '\n');
        }
        return Splice {
            range: text_len..text_len,
            text,
        };
    }
    let last = at + len - 1;
    let breaks = file.has_break(last);
    let end = if breaks {
        file.start(last + 1)
    } else {
        file.end(last)
    };
    let mut text = new.join("\n");
    if breaks && !new.is_empty() {
        text.push('\n');
    }
    Splice {
        range: file.start(at)..end,
        text,
    }
}

/// One run of added lines in a hunk: where it is in `new`, and the old lines around it.
struct Run {
    /// The added lines (indexes into `new`).
    lines: std::ops::Range<usize>,
    /// The old line whose indentation the run follows (the nearest non-blank one above, or
    /// below at the start of a hunk).
    anchor: Option<usize>,
    /// The nearest non-blank old line above the run and below it (indexes into `old`).
    above: Option<usize>,
    below: Option<usize>,
    /// The first non-blank removed line the run replaces.
    replaced: Option<usize>,
}

/// The new lines of a located hunk (`found` is where its old lines are in the file): each
/// context line as the file has it (the hunk may have matched it ignoring whitespace), and
/// each added line at the file's indentation (module doc: re-indenting). The note says
/// what was re-indented. `structured` is false for prose (Markdown, text), whose
/// indentation says nothing about blocks.
fn write_new_lines(
    found: &[&str],
    old: &[String],
    new: &[String],
    file_unit: &dyn Fn() -> Unit,
    structured: bool,
) -> (Vec<String>, Option<String>) {
    let mut out = new.to_vec();
    let nonblank = |j: &usize| !old[*j].trim().is_empty();
    let above = |end: usize| (0..end).rev().find(nonblank);
    let below = |start: usize| (start..old.len()).find(nonblank);
    let mut runs: Vec<Run> = Vec::new();
    // Which old lines are context (in the new lines too).
    let mut context = vec![false; old.len()];
    for op in similar::capture_diff_slices(similar::Algorithm::Myers, old, new) {
        match op {
            similar::DiffOp::Equal {
                old_index,
                new_index,
                len,
            } => {
                for k in 0..len {
                    out[new_index + k] = found[old_index + k].to_string();
                    context[old_index + k] = true;
                }
            }
            similar::DiffOp::Insert {
                old_index,
                new_index,
                new_len,
            } => runs.push(Run {
                lines: new_index..new_index + new_len,
                anchor: above(old_index).or_else(|| below(old_index)),
                above: above(old_index),
                below: below(old_index),
                replaced: None,
            }),
            similar::DiffOp::Replace {
                old_index,
                old_len,
                new_index,
                new_len,
            } => runs.push(Run {
                lines: new_index..new_index + new_len,
                anchor: above(old_index + old_len).or_else(|| below(old_index)),
                above: above(old_index),
                below: below(old_index + old_len),
                replaced: (old_index..old_index + old_len).find(nonblank),
            }),
            similar::DiffOp::Delete { .. } => {}
        }
    }
    let added = |run: &Run| run.lines.clone().filter(|&n| !new[n].trim().is_empty());
    let shifted = old
        .iter()
        .zip(found)
        .any(|(o, f)| !o.trim().is_empty() && indent(o) != indent(f));
    let unit = file_unit();
    let foreign = |line: &str| match unit {
        Unit::Tab => indent(line).starts_with(' '),
        Unit::Spaces(_) => indent(line).contains('\t'),
    };
    let added_foreign = runs.iter().any(|run| added(run).any(|n| foreign(&new[n])));
    let mut changed = 0usize;
    let mut moves: Vec<i64> = Vec::new();
    let mut note = |changed: &mut usize, given: &str, written: &str| {
        *changed += 1;
        let by = columns(indent(written)) - columns(indent(given));
        if !moves.contains(&by) {
            moves.push(by);
        }
    };
    let mut why = "";
    if shifted || added_foreign {
        let old_lines: Vec<&str> = old.iter().map(String::as_str).collect();
        let new_lines: Vec<&str> = new.iter().map(String::as_str).collect();
        let patch_unit = detect_unit(&[old_lines, new_lines]).unwrap_or(match unit {
            Unit::Tab => Unit::Spaces(4),
            spaces => spaces,
        });
        let scale = shifted.then(|| depth_scale(found, old)).flatten();
        let eaten = prefix_eaten(old, new, &context, &runs, unit);
        for run in &runs {
            let Some(a) = run.anchor else { continue };
            // The context line's indentation as the model meant it.
            let given = if eaten && context[a] {
                format!(" {}", indent(&old[a]))
            } else {
                indent(&old[a]).to_string()
            };
            for n in run.lines.clone() {
                let line = &new[n];
                if line.trim().is_empty() {
                    out[n] = String::new();
                    continue;
                }
                let written = match scale {
                    Some(scale) if !eaten => scaled(line, &given, indent(found[a]), scale, unit),
                    _ => None,
                }
                .unwrap_or_else(|| follow_indent(line, &given, indent(found[a]), patch_unit, unit));
                if written != *line {
                    note(&mut changed, line, &written);
                    out[n] = written;
                }
            }
        }
        if shifted {
            why = "context matched ignoring indentation; ";
        }
    } else if structured {
        for run in &runs {
            let Some(shift) = too_shallow(run, found, &out, &added(run).collect::<Vec<_>>()) else {
                continue;
            };
            let prefix = match unit {
                Unit::Tab => format!("{}{}", "\t".repeat(shift / 4), " ".repeat(shift % 4)),
                Unit::Spaces(_) => " ".repeat(shift),
            };
            for n in added(run) {
                let written = format!("{prefix}{}", new[n]);
                note(&mut changed, &new[n], &written);
                out[n] = written;
            }
            why = "added lines were shallower than the block they are in; ";
        }
    }
    let old_text = old.join("\n");
    let found_text = found.join("\n");
    for run in &runs {
        for n in run.lines.clone() {
            if let Some(folded) = fold_foreign(&old_text, &found_text, &out[n]) {
                out[n] = folded;
            }
        }
    }
    if changed == 0 {
        return (out, None);
    }
    let how = match moves[..] {
        [0] => match unit {
            Unit::Tab => "with tabs, as the file indents".to_string(),
            Unit::Spaces(_) => "with spaces, as the file indents".to_string(),
        },
        [by] => format!("by {by:+} columns"),
        _ => "to the depth of the lines above them".to_string(),
    };
    let plural = if changed == 1 { "" } else { "s" };
    (
        out,
        Some(format!(
            "{why}{changed} added line{plural} re-indented {how}"
        )),
    )
}

/// Whether the model wrote its context lines with one space too few: the envelope's ` `
/// prefix was its indentation's first space (every context line is one short of a whole
/// level of the file's unit, every added line is at a whole level). Such a hunk's context
/// is measured with the space given back.
fn prefix_eaten(
    old: &[String],
    new: &[String],
    context: &[bool],
    runs: &[Run],
    unit: Unit,
) -> bool {
    let Unit::Spaces(step) = unit else {
        return false;
    };
    if step < 2 {
        return false;
    }
    let spaces = |line: &str| {
        let own = indent(line);
        (!own.contains('\t')).then_some(own.len())
    };
    let mut contexts = old
        .iter()
        .zip(context)
        .filter(|(line, is)| **is && !line.trim().is_empty())
        .map(|(line, _)| spaces(line))
        .peekable();
    let mut added = runs
        .iter()
        .flat_map(|run| run.lines.clone())
        .filter(|&n| !new[n].trim().is_empty())
        .map(|n| spaces(&new[n]))
        .peekable();
    contexts.peek().is_some()
        && added.peek().is_some()
        && contexts.all(|w| w.is_some_and(|w| (w + 1) % step == 0))
        && added.all(|w| w.is_some_and(|w| w % step == 0))
}

/// A line that opens a block or goes on on the next line: what follows it may be deeper.
fn opens(line: &str) -> bool {
    let code = line.trim_end();
    [
        ":", "{", "(", "[", ",", "\\", "=", "=>", "->", "&&", "||", "+", ".",
    ]
    .iter()
    .any(|end| code.ends_with(end))
}

/// By how many columns a run of added lines (`added`, non-blank, as written in `out`) must
/// move deeper when it is plainly shallower than the block it is in: right after a line
/// that opens a block it is not deeper than that line although the file's lines there are,
/// or the file's next line is deeper than the run's last line, which opens nothing. A run
/// that replaces lines goes to the depth of the first line it replaces; one that only adds
/// goes to the depth of the file's next line. `None` when the run fits.
fn too_shallow(run: &Run, found: &[&str], out: &[String], added: &[usize]) -> Option<usize> {
    let (&first, &last) = (added.first()?, added.last()?);
    let depth = |l: &str| columns(indent(l));
    let (d_first, d_last) = (depth(&out[first]), depth(&out[last]));
    let comment = |l: &str| {
        let t = l.trim_start();
        t.starts_with('#') || t.starts_with("//") || t.starts_with("/*") || t.starts_with('*')
    };
    // A run that starts by closing a block may well be shallower than its neighbours.
    let closes = |l: &str| {
        let t = l.trim_start();
        t.starts_with(['}', ')', ']'])
            || [
                "end", "else", "elif", "elsif", "except", "finally", "case", "default", "fi",
                "done", "esac",
            ]
            .iter()
            .any(|w| {
                t.starts_with(w)
                    && !t[w.len()..].starts_with(|c: char| c.is_alphanumeric() || c == '_')
            })
    };
    if comment(&out[first]) || comment(&out[last]) || closes(&out[first]) {
        return None;
    }
    let above = run.above.map(|j| found[j]);
    let below = run.below.map(|j| depth(found[j]));
    let replaced = run.replaced.map(|j| depth(found[j]));
    let target = if let Some(above) = above
        && opens(above)
        && d_first <= depth(above)
        && let Some(deeper) = replaced.or(below).filter(|&d| d > depth(above))
    {
        Some(replaced.unwrap_or(deeper))
    } else if let Some(below) = below
        && below > d_last
        && !opens(&out[last])
    {
        Some(replaced.unwrap_or(below + d_first - d_last))
    } else {
        None
    }?;
    usize::try_from(target - d_first).ok().filter(|&s| s > 0)
}

/// How the depths of the hunk's old lines relate to the file's when the patch was written
/// at another width (every level 4 columns where the file has 2): `(file, patch)` column
/// steps, when all non-blank old lines agree on one ratio other than 1 and both sides are
/// indented with spaces only.
fn depth_scale(found: &[&str], old: &[String]) -> Option<(i64, i64)> {
    let pairs: Vec<(i64, i64)> = old
        .iter()
        .zip(found)
        .filter(|(o, _)| !o.trim().is_empty())
        .map(|(o, f)| (columns(indent(o)), columns(indent(f))))
        .collect();
    let (p_min, p_max) = (
        pairs.iter().map(|p| p.0).min()?,
        pairs.iter().map(|p| p.0).max()?,
    );
    let (f_min, f_max) = (
        pairs.iter().map(|p| p.1).min()?,
        pairs.iter().map(|p| p.1).max()?,
    );
    let (dp, df) = (p_max - p_min, f_max - f_min);
    if dp == 0 || df == 0 || dp == df {
        return None;
    }
    let fits = pairs
        .iter()
        .all(|(p, f)| (p - p_min) * df == (f - f_min) * dp);
    let spaces_only = old.iter().all(|l| !indent(l).contains('\t'))
        && found.iter().all(|l| !indent(l).contains('\t'));
    (fits && spaces_only).then_some((df, dp))
}

/// `line` re-indented by the depth scale: its depth relative to the anchor (`given` in the
/// patch, `actual` in the file) times `file / patch`; `None` when that is not whole columns
/// or the line uses tabs.
fn scaled(
    line: &str,
    given: &str,
    actual: &str,
    (file, patch): (i64, i64),
    unit: Unit,
) -> Option<String> {
    if indent(line).contains('\t') {
        return None;
    }
    let relative = columns(indent(line)) - columns(given);
    let step = match unit {
        Unit::Spaces(n) => n.max(1) as i64,
        Unit::Tab => return None,
    };
    // Whole columns, and whole levels of the file's unit.
    if relative * file % patch != 0 || (relative * file / patch) % step != 0 {
        return None;
    }
    let width = columns(actual) + relative * file / patch;
    let width = usize::try_from(width).ok()?;
    Some(format!(
        "{}{}",
        " ".repeat(width),
        &line[indent(line).len()..]
    ))
}

/// The width of an indentation in columns, a tab counting four.
fn columns(indent: &str) -> i64 {
    indent.chars().map(|c| if c == '\t' { 4 } else { 1 }).sum()
}

/// `line` (an added line) re-indented the way its anchor moved: the anchor is `given` in the
/// patch and `actual` in the file. Deeper lines keep their extra depth, converted to the
/// file's indentation characters; shallower ones are measured in levels of the patch's unit.
fn follow_indent(line: &str, given: &str, actual: &str, patch_unit: Unit, unit: Unit) -> String {
    let content = &line[indent(line).len()..];
    let own = indent(line);
    if let Some(rest) = own.strip_prefix(given) {
        let rest = match unit {
            Unit::Tab if rest.starts_with(' ') => {
                let width = match patch_unit {
                    Unit::Spaces(n) => n.max(1),
                    Unit::Tab => 4,
                };
                let spaces = rest.chars().take_while(|&c| c == ' ').count();
                format!(
                    "{}{}{}",
                    "\t".repeat(spaces / width),
                    " ".repeat(spaces % width),
                    &rest[spaces..]
                )
            }
            Unit::Spaces(n) if rest.contains('\t') => rest.replace('\t', &" ".repeat(n.max(1))),
            _ => rest.to_string(),
        };
        return format!("{actual}{rest}{content}");
    }
    let (depth, anchor) = (measure(line, patch_unit), measure(given, patch_unit));
    let base = measure(actual, unit);
    let levels = (base.levels + depth.levels - anchor.levels).max(0) as usize;
    let extra = (base.extra + depth.extra - anchor.extra).max(0) as usize;
    let step = match unit {
        Unit::Tab => "\t".to_string(),
        Unit::Spaces(n) => " ".repeat(n.max(1)),
    };
    format!("{}{}{content}", step.repeat(levels), " ".repeat(extra))
}

fn lines_equal(have: &[&str], want: &[String]) -> bool {
    have.len() == want.len() && have.iter().zip(want).all(|(h, w)| h.trim() == w.trim())
}

/// Finds `pattern` in `lines` at or after `from` at the strictest comparison that finds it
/// ([`LEVELS`]). With `eof` the end of the file is tried first; with a `hint` the match
/// nearest to it wins, otherwise the first. Used for scope lines and for telling a hunk
/// already applied, where the first fit is what is meant.
fn locate(
    lines: &[&str],
    pattern: &[String],
    from: usize,
    eof: bool,
    hint: Option<usize>,
) -> Option<usize> {
    if pattern.is_empty() || pattern.len() > lines.len() {
        return None;
    }
    let last_start = lines.len() - pattern.len();
    for level in 0..LEVELS.len() {
        if eof && last_start >= from && matches_at(lines, pattern, last_start, level) {
            return Some(last_start);
        }
        if from > last_start {
            continue;
        }
        let mut fits = (from..=last_start).filter(|&i| matches_at(lines, pattern, i, level));
        let found = match hint {
            Some(h) => fits.min_by_key(|&i| i.abs_diff(h)),
            None => fits.next(),
        };
        if found.is_some() {
            return found;
        }
    }
    None
}

/// The refusal for a hunk whose lines are not in the file: the longest run of its first
/// lines that is there, and the first line that differs.
fn mismatch(
    lines: &[&str],
    hunk: &Hunk,
    old: &[String],
    from: usize,
    number: usize,
    count: usize,
    shown: &str,
) -> String {
    let head = format!(
        "{shown}: hunk {number} of {count} (patch line {}) does not match the file",
        hunk.line
    );
    // One window where every line but one is there: that line changed since the model
    // read the file (or it mistyped it).
    if old.len() > 2 && old.len() <= lines.len() {
        let near: Vec<(usize, usize)> = (0..=lines.len() - old.len())
            .filter_map(|s| {
                let mut differing =
                    (0..old.len()).filter(|&j| lines[s + j].trim() != old[j].trim());
                match (differing.next(), differing.next()) {
                    (Some(j), None) => Some((s, j)),
                    _ => None,
                }
            })
            .take(2)
            .collect();
        if let [(start, j)] = near[..] {
            return format!(
                "{head}: line {} reads `{}`, the patch expects `{}` (the hunk's other {} lines \
                 are there, in lines {}-{}). The file has changed since it was read, or the \
                 patch mistyped the line: read the file again and write the hunk from what is \
                 there.",
                start + j + 1,
                visible(lines[start + j]),
                visible(&old[j]),
                old.len() - 1,
                start + 1,
                start + old.len(),
            );
        }
    }
    let mut best: Option<(usize, usize)> = None;
    for start in 0..lines.len() {
        let run = old
            .iter()
            .enumerate()
            .take_while(|(j, p)| lines.get(start + j).is_some_and(|l| l.trim() == p.trim()))
            .count();
        if run == 0 {
            continue;
        }
        let better = match best {
            None => true,
            Some((b, r)) => run > r || (run == r && start >= from && b < from),
        };
        if better {
            best = Some((start, run));
        }
    }
    match best {
        Some((start, run)) if run < old.len() => {
            let file_line = lines
                .get(start + run)
                .map_or("<end of file>".to_string(), |l| format!("`{}`", visible(l)));
            format!(
                "{head}: its first {run} line{} match lines {}-{}, but hunk line {} is `{}` where \
                 line {} of the file is {file_line}.",
                if run == 1 { "" } else { "s" },
                start + 1,
                start + run,
                run + 1,
                visible(&old[run]),
                start + run + 1,
            )
        }
        Some((start, _)) => format!(
            "{head}: its lines are at line {} but before the previous hunk; hunks must be in file \
             order.",
            start + 1
        ),
        None => match old.first() {
            Some(first) => format!(
                "{head}: its first line `{}` is not in the file.",
                visible(first)
            ),
            None => format!("{head}: it has no context or removed line to locate it by."),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::apply_patch::parse::parse;

    fn apply_text(text: &str, patch: &str) -> Result<String, String> {
        let patch = parse(patch).map_err(|e| e.to_string())?;
        let FileOp::Update { hunks, .. } = &patch.ops[0] else {
            panic!()
        };
        let doc = TextDoc::decode(text.as_bytes()).unwrap();
        let result = apply_hunks(&doc, hunks, patch.format, "f")?;
        Ok(String::from_utf8(doc.render(&result.splices, result.final_newline)).unwrap())
    }

    fn envelope(body: &str) -> String {
        format!("*** Begin Patch\n*** Update File: f\n{body}*** End Patch\n")
    }

    #[test]
    fn reference_hunks_apply() {
        let diff = "--- a/f\n+++ b/f\n@@ -2 +2,3 @@\n b\n+b1\n+b2\n";
        assert_eq!(apply_text("a\nb\nc\n", diff).unwrap(), "a\nb\nb1\nb2\nc\n");
        let diff = "--- a/f\n+++ b/f\n@@ -2,2 +2,0 @@\n-b\n-c\n";
        assert_eq!(apply_text("a\nb\nc\nd\n", diff).unwrap(), "a\nd\n");
        let diff =
            "--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n@@ -5,3 +5,3 @@\n e\n-f\n+F\n g\n";
        assert_eq!(
            apply_text("a\nb\nc\nd\ne\nf\ng\n", diff).unwrap(),
            "a\nB\nc\nd\ne\nF\ng\n"
        );
    }

    #[test]
    fn context_tolerates_whitespace_in_three_passes() {
        let patch = envelope("@@\n foo  \n-bar\n+baz\n");
        assert_eq!(
            apply_text("  foo\n\tbar\n", &patch).unwrap(),
            "  foo\n\tbaz\n",
            "the added line takes the indentation of the removed line above it"
        );
    }

    #[test]
    fn scopes_locate_the_chunk() {
        let text = "class A:\n    def f(self):\n        return 1\nclass B:\n    def f(self):\n        return 1\n";
        let patch =
            envelope("@@ class B:\n@@     def f(self):\n-        return 1\n+        return 2\n");
        assert_eq!(
            apply_text(text, &patch).unwrap(),
            "class A:\n    def f(self):\n        return 1\nclass B:\n    def f(self):\n        return 2\n"
        );
        let patch = envelope("@@ class C:\n-x\n+y\n");
        assert!(
            apply_text(text, &patch)
                .unwrap_err()
                .contains("scope line `class C:`")
        );
    }

    #[test]
    fn end_of_file_anchors_at_the_end() {
        let patch = envelope("@@\n-x\n+y\n*** End of File\n");
        assert_eq!(apply_text("x\nmid\nx\n", &patch).unwrap(), "x\nmid\ny\n");
    }

    #[test]
    fn envelope_pure_additions_go_where_codex_puts_them() {
        // At the end, and the update ends the file with a newline.
        assert_eq!(
            apply_text("a\nb", &envelope("@@\n+c\n")).unwrap(),
            "a\nb\nc\n"
        );
        // A scope must be there but does not move the addition.
        assert_eq!(
            apply_text("a\nb\n", &envelope("@@ a\n+x\n")).unwrap(),
            "a\nb\nx\n"
        );
        assert!(apply_text("a\nb\n", &envelope("@@ zz\n+x\n")).is_err());
        // Before a last empty line; a later chunk is still searched from the top.
        assert_eq!(
            apply_text("l1\nl2\nl3\n\n", &envelope("@@\n+end\n@@\n l1\n-l2\n+L2\n")).unwrap(),
            "l1\nL2\nl3\nend\n\n"
        );
        // A unified hunk still inserts where its header says.
        let unified = "--- a/f\n+++ b/f\n@@ -1,0 +2,1 @@\n+x\n";
        assert_eq!(apply_text("a\nb\n", unified).unwrap(), "a\nx\nb\n");
    }

    #[test]
    fn trailing_blank_lines_and_unicode_punctuation() {
        let patch =
            "*** Begin Patch\n*** Update File: f\n@@\n-x\n+y\n*** End of File\n\n\n*** End Patch\n";
        assert_eq!(apply_text("w\nx\n", patch).unwrap(), "w\ny\n");
        let patch = envelope("@@\n a \u{2014} b\n-say \"hi\"...\n+say \"bye\"\n\n\n");
        assert_eq!(
            apply_text("a \u{2013} b\nsay \u{201c}hi\u{201d}\u{2026}\n", &patch).unwrap(),
            "a \u{2013} b\nsay \"bye\"\n"
        );
    }

    #[test]
    fn already_applied_hunks_are_recognised() {
        let patch = envelope("@@\n a\n-b\n+B\n c\n");
        let doc = TextDoc::decode(b"a\nB\nc\n").unwrap();
        let parsed = parse(&patch).unwrap();
        let FileOp::Update { hunks, .. } = &parsed.ops[0] else {
            panic!()
        };
        let result = apply_hunks(&doc, hunks, Format::Envelope, "f").unwrap();
        assert_eq!(result.already, vec![1]);
        assert!(result.splices.is_empty());
        let added = envelope("@@\n a\n+x\n b\n");
        let doc = TextDoc::decode(b"a\nx\nb\n").unwrap();
        let parsed = parse(&added).unwrap();
        let FileOp::Update { hunks, .. } = &parsed.ops[0] else {
            panic!()
        };
        assert_eq!(
            apply_hunks(&doc, hunks, Format::Envelope, "f")
                .unwrap()
                .already,
            vec![1]
        );
    }

    #[test]
    fn a_mismatch_names_the_hunk_and_the_first_differing_line() {
        let patch = envelope("@@\n one\n two\n-three\n+3\n");
        let err = apply_text("one\ntwo\nTHREE\n", &patch).unwrap_err();
        assert!(
            err.starts_with("f: hunk 1 of 1 (patch line 3) does not match the file"),
            "{err}"
        );
        assert!(
            err.contains("line 3 reads `THREE`, the patch expects `three`"),
            "one line off is a stale line: {err}"
        );
        let patch = envelope("@@\n one\n two\n-three\n-four\n+3\n");
        let err = apply_text("one\ntwo\nTHREE\nFOUR\n", &patch).unwrap_err();
        assert!(err.contains("its first 2 lines match lines 1-2, but hunk line 3 is `three` where line 3 of the file is `THREE`"), "{err}");
        let err = apply_text("x\n", &envelope("@@\n-nothing\n+y\n")).unwrap_err();
        assert!(
            err.contains("its first line `nothing` is not in the file"),
            "{err}"
        );
    }

    #[test]
    fn a_hunk_that_fits_two_places_is_refused_naming_both() {
        let text = "a\nx = 1\nb\na\nx = 1\nb\n";
        let err = apply_text(text, &envelope("@@\n a\n-x = 1\n+x = 2\n")).unwrap_err();
        assert!(
            err.contains("fits 2 places (lines 1-2, lines 4-5)"),
            "{err}"
        );
        // Two hunks for the two places: each has one place the other leaves it.
        let both = envelope("@@\n a\n-x = 1\n+x = 2\n@@\n a\n-x = 1\n+x = 3\n");
        assert_eq!(
            apply_text(text, &both).unwrap(),
            "a\nx = 2\nb\na\nx = 3\nb\n"
        );
        // A unified header breaks the tie only by naming one of the places exactly.
        let named = "--- a/f\n+++ b/f\n@@ -4,2 +4,2 @@\n a\n-x = 1\n+x = 2\n";
        assert_eq!(
            apply_text(text, named).unwrap(),
            "a\nx = 1\nb\na\nx = 2\nb\n"
        );
        let off = "--- a/f\n+++ b/f\n@@ -3,2 +3,2 @@\n a\n-x = 1\n+x = 2\n";
        assert!(apply_text(text, off).unwrap_err().contains("fits 2 places"));
    }

    #[test]
    fn a_scope_block_holding_one_place_decides() {
        let text = "def f():\n    x = 1\n\ndef g():\n    x = 1\n\ndef h():\n    x = 1\n";
        let patch = envelope("@@ def g():\n-    x = 1\n+    x = 2\n");
        assert_eq!(
            apply_text(text, &patch).unwrap(),
            "def f():\n    x = 1\n\ndef g():\n    x = 2\n\ndef h():\n    x = 1\n"
        );
    }

    fn reindented(file: &str, found_at: usize, old: &[&str], new: &[&str]) -> Vec<String> {
        let lines: Vec<&str> = file.lines().collect();
        let doc = FileLines::new(file);
        let old: Vec<String> = old.iter().map(|s| s.to_string()).collect();
        let new: Vec<String> = new.iter().map(|s| s.to_string()).collect();
        let found = &lines[found_at..found_at + old.len()];
        write_new_lines(found, &old, &new, &|| reindent::file_unit(&doc), true).0
    }

    #[test]
    fn python_added_lines_follow_the_context_they_were_written_against() {
        let file = "class A:\n    def f(self):\n        if x:\n            y()\n        return 1\n";
        // The model wrote the method four columns too shallow.
        let out = reindented(
            file,
            2,
            &["    if x:", "        y()", "    return 1"],
            &[
                "    if x:",
                "        y()",
                "        z()",
                "    log()",
                "    return 1",
            ],
        );
        assert_eq!(
            out,
            [
                "        if x:",
                "            y()",
                "            z()",
                "        log()",
                "        return 1"
            ]
        );
    }

    #[test]
    fn offsets_follow_the_nearest_matched_line_above() {
        // The context's first line is shifted by 4, its later lines by 2 (a model that
        // mixed widths): each added run follows the line right above it.
        let file = "    a:\n      b: 1\n      c: 2\n";
        let out = reindented(
            file,
            0,
            &["a:", "    b: 1", "    c: 2"],
            &["a:", "  z: 0", "    b: 1", "    c: 2", "    d: 3"],
        );
        assert_eq!(
            out,
            [
                "    a:",
                "      z: 0",
                "      b: 1",
                "      c: 2",
                "      d: 3"
            ]
        );
    }

    #[test]
    fn yaml_added_lines_are_shifted_with_their_context() {
        let file = "jobs:\n  test:\n    steps:\n      - run: a\n";
        let out = reindented(
            file,
            2,
            &["steps:", "  - run: a"],
            &["steps:", "  - run: a", "  - run: b"],
        );
        assert_eq!(out, ["    steps:", "      - run: a", "      - run: b"]);
    }

    #[test]
    fn makefile_recipes_keep_their_tabs() {
        let file = "all: app\n\napp: main.o\n\tcc -o app main.o\n\tstrip app\n";
        let out = reindented(
            file,
            2,
            &["app: main.o", "    cc -o app main.o"],
            &["app: main.o", "    cc -o app main.o", "    ls -l app"],
        );
        assert_eq!(out, ["app: main.o", "\tcc -o app main.o", "\tls -l app"]);
        // Context that matched exactly, an added line indented with spaces: tabs still.
        let out = reindented(
            file,
            2,
            &["app: main.o", "\tcc -o app main.o"],
            &["app: main.o", "\tcc -o app main.o", "    ls -l app"],
        );
        assert_eq!(out[2], "\tls -l app");
    }

    #[test]
    fn exact_context_leaves_added_lines_as_given() {
        let file = "def f():\n    return 1\n";
        let out = reindented(
            file,
            0,
            &["def f():", "    return 1"],
            &["def f():", "  # odd", "    return 1"],
        );
        assert_eq!(out, ["def f():", "  # odd", "    return 1"]);
    }

    #[test]
    fn a_chunk_of_only_a_blank_context_line_is_refused_without_panicking() {
        let err = apply_text("a\nb\n", &envelope("@@\n\n+x\n")).unwrap_err();
        assert!(err.contains("no context or removed line"), "{err}");
    }

    #[test]
    fn crlf_files_keep_their_endings_and_no_newline_markers_apply() {
        let patch = envelope("@@\n a\n-b\n+B\n+C\n");
        assert_eq!(apply_text("a\r\nb\r\n", &patch).unwrap(), "a\r\nB\r\nC\r\n");
        let diff = "--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n\\ No newline at end of file\n";
        assert_eq!(apply_text("a\n", diff).unwrap(), "b");
        let diff = "--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n\\ No newline at end of file\n+b\n";
        assert_eq!(apply_text("a", diff).unwrap(), "b\n");
    }

    #[test]
    fn unified_hunks_prefer_the_match_nearest_their_line() {
        let text = "x\ny\nx\ny\nx\ny\n";
        let diff = "--- a/f\n+++ b/f\n@@ -5,2 +5,2 @@\n x\n-y\n+Y\n";
        assert_eq!(apply_text(text, diff).unwrap(), "x\ny\nx\ny\nx\nY\n");
    }

    #[test]
    fn random_patches_never_panic() {
        let mut seed: u64 = 7;
        let mut next = move || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) as usize
        };
        const LINES: &[&str] = &[
            " a",
            "-a",
            "+a",
            " b",
            "-b",
            "+c",
            "",
            " ",
            "@@",
            "@@ a",
            "*** End of File",
            "\\ No newline at end of file",
            "@@ -1,2 +1,2 @@",
            "@@ -0,0 +1 @@",
            "--- a/f",
            "+++ b/f",
            " \t",
            "-\r",
            "+é",
        ];
        for _ in 0..3000 {
            let body: Vec<&str> = (0..next() % 8)
                .map(|_| LINES[next() % LINES.len()])
                .collect();
            let text: String = (0..next() % 6)
                .map(|i| ["a\n", "b\n", "\n", "c"][(i + next()) % 4])
                .collect();
            for patch in [
                envelope(&format!("{}\n", body.join("\n"))),
                format!("--- a/f\n+++ b/f\n{}\n", body.join("\n")),
            ] {
                let Ok(parsed) = parse(&patch) else { continue };
                let Some(FileOp::Update { hunks, .. }) = parsed.ops.first() else {
                    continue;
                };
                let doc = TextDoc::decode(text.as_bytes()).unwrap();
                if let Ok(result) = apply_hunks(&doc, hunks, parsed.format, "f") {
                    let mut end = 0;
                    for s in &result.splices {
                        assert!(
                            s.range.start >= end && s.range.end <= doc.text.len(),
                            "{patch:?} on {text:?}"
                        );
                        end = s.range.end;
                    }
                    let _ = doc.render(&result.splices, result.final_newline);
                }
            }
        }
    }
}
