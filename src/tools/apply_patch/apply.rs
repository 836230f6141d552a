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
//! first, in order. An envelope chunk takes the first match after the previous chunk (at
//! the end of the file when it is marked `*** End of File`); a unified hunk takes the match
//! nearest to the line its header names. Context lines keep the file's own characters.
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
//! Add File over an existing file and a move onto an existing file overwrite it (as Codex
//! does), keeping the existing file's conventions; deleting a directory fails. Directories
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
use crate::tools::edit::feedback::visible;
use crate::tools::edit::lines::FileLines;
use crate::tools::edit::punctuation::fold;

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

/// How a step went: applied (with the hunks found already in place) or already applied.
enum Step {
    Applied(Vec<usize>),
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
        };
        match step {
            Step::Applied(already) => outcome.already = already,
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
                    state.set(target, Entry::File { bytes: new, mode })?;
                    Ok(Step::Applied(Vec::new()))
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
                    Ok(Step::Applied(Vec::new()))
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
                    Ok(Step::Applied(Vec::new()))
                }
                Entry::File { bytes, mode } => {
                    read_only(mode, "delete", &show(target))?;
                    if let Some(expected) = lines {
                        check_deleted_content(&bytes, expected)
                            .map_err(|e| format!("Cannot delete {}: {e}", show(target)))?;
                    }
                    state.set(target, Entry::Absent)?;
                    Ok(Step::Applied(Vec::new()))
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
                            Step::Applied(Vec::new())
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
            Ok(Step::Applied(result.already))
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
}

/// Applies `hunks` to `doc` (module doc); the error names the file, the hunk and the first
/// differing line.
fn apply_hunks(
    doc: &TextDoc,
    hunks: &[Hunk],
    format: Format,
    shown: &str,
) -> Result<HunkResult, String> {
    let file = FileLines::new(&doc.text);
    let lines: Vec<&str> = (0..file.len()).map(|i| file.line(i)).collect();
    let mut cursor = 0usize;
    let mut offset: i64 = 0;
    let mut replacements: Vec<(usize, usize, Vec<String>)> = Vec::new();
    let mut already = Vec::new();
    let count = hunks.len();
    for (k, hunk) in hunks.iter().enumerate() {
        let number = k + 1;
        let mut from = cursor;
        for scope in &hunk.scopes {
            match locate(&lines, std::slice::from_ref(scope), from, false, None) {
                Some(at) => from = at + 1,
                None => {
                    return Err(format!(
                        "{shown}: hunk {number} of {count} (patch line {}): its scope line `{}` is \
                         not in the file{}",
                        hunk.line,
                        visible(scope),
                        after_text(from)
                    ));
                }
            }
        }
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
            } else {
                // `@@ -K,0 …` inserts after line K.
                hunk.hint.map_or(lines.len(), |h| {
                    (h as i64 + offset).clamp(0, lines.len() as i64) as usize
                })
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
        let mut found = locate(&lines, old, from, hunk.end_of_file, hint);
        if found.is_none() && old.last().is_some_and(String::is_empty) {
            // A trailing empty context line stands for the final newline.
            old = &old[..old.len() - 1];
            if new.last().is_some_and(String::is_empty) {
                new = &new[..new.len() - 1];
            }
            found = if old.is_empty() {
                None
            } else {
                locate(&lines, old, from, hunk.end_of_file, hint)
            };
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
                replacements.push((
                    at,
                    old.len(),
                    keep_context(&lines[at..at + old.len()], old, new),
                ));
                offset += new.len() as i64 - old.len() as i64;
                cursor = at + old.len();
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
    })
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

/// The new lines of a located hunk, with each context line as the file has it (the hunk
/// may have matched it ignoring whitespace): only the lines the hunk changes change.
fn keep_context(found: &[&str], old: &[String], new: &[String]) -> Vec<String> {
    let mut out = new.to_vec();
    for op in similar::capture_diff_slices(similar::Algorithm::Myers, old, new) {
        if let similar::DiffOp::Equal {
            old_index,
            new_index,
            len,
        } = op
        {
            for k in 0..len {
                out[new_index + k] = found[old_index + k].to_string();
            }
        }
    }
    out
}

fn lines_equal(have: &[&str], want: &[String]) -> bool {
    have.len() == want.len() && have.iter().zip(want).all(|(h, w)| h.trim() == w.trim())
}

/// Finds `pattern` in `lines` at or after `from`: exactly, then ignoring trailing
/// whitespace, then ignoring the whitespace around each line, then also with Unicode
/// punctuation folded to ASCII (`punctuation`). With `eof` the end of the
/// file is tried first; with a `hint` the match nearest to it wins, otherwise the first.
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
    let comparisons: [fn(&str, &str) -> bool; 4] = [
        |a, b| a == b,
        |a, b| a.trim_end() == b.trim_end(),
        |a, b| a.trim() == b.trim(),
        |a, b| fold(a.trim()).trim() == fold(b.trim()).trim(),
    ];
    for same in comparisons {
        let matches_at = |i: usize| {
            pattern
                .iter()
                .enumerate()
                .all(|(j, p)| same(lines[i + j], p))
        };
        if eof && last_start >= from && matches_at(last_start) {
            return Some(last_start);
        }
        if from > last_start {
            continue;
        }
        let found = match hint {
            Some(h) => (from..=last_start)
                .filter(|&i| matches_at(i))
                .min_by_key(|&i| i.abs_diff(h)),
            None => (from..=last_start).find(|&i| matches_at(i)),
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
            "  foo\nbaz\n"
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
        assert!(err.contains("its first 2 lines match lines 1-2, but hunk line 3 is `three` where line 3 of the file is `THREE`"), "{err}");
        let err = apply_text("x\n", &envelope("@@\n-nothing\n+y\n")).unwrap_err();
        assert!(
            err.contains("its first line `nothing` is not in the file"),
            "{err}"
        );
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
