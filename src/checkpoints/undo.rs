//! `tinytool undo`: reverting a checkpoint.
//!
//! The target is the given checkpoint, or the newest finished `call` checkpoint nobody has
//! undone yet (so repeated undos walk back like an editor's). Every path it changed goes
//! back to its state before that call: its old bytes and mode, or absent. The state a path
//! is expected in now is the after-state of the newest checkpoint that changed it (the
//! target or a later one, undos included); a path in any other state was changed by
//! something the checkpoints do not know (a person's editor) and is a conflict, as is a
//! path another call may have written while the target's call ran (an overlap). Conflicts
//! stop the undo unless forced. A path whose earlier content was not kept cannot be
//! restored and is listed as skipped.
//!
//! The restore is one multi-file [`crate::atomic::commit`], inside a checkpoint of kind
//! `undo` (so an undo is undone by undoing its id); the target is marked undone by it, and
//! when the target is itself an undo, what that undo reverted counts as not undone again.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use super::record::{self, Began};
use super::report;
use crate::atomic;
use crate::session::Session;
use crate::state::{CheckpointRow, NewCheckpoint, Store};

/// One path to restore.
#[derive(Debug)]
pub struct Step {
    /// Relative path.
    pub path: String,
    /// What is there now: mode and bytes, `None` when absent.
    pub current: Option<(u32, Vec<u8>)>,
    /// What it gets: mode and bytes, `None` to remove it.
    pub goal: Option<(u32, Vec<u8>)>,
}

/// What an undo would do.
#[derive(Debug)]
pub struct Plan {
    /// The checkpoint reverted.
    pub target: CheckpointRow,
    /// The paths to restore.
    pub steps: Vec<Step>,
    /// Paths changed since by another call, outside the checkpoints, or by an overlapping
    /// call, or being changed right now, with why.
    pub conflicts: Vec<String>,
    /// Paths that cannot be restored, with why.
    pub skipped: Vec<String>,
    /// Directories the reverted call created that the restore left empty and removed
    /// (filled in by [`undo`]).
    pub removed_dirs: Vec<String>,
    /// Directories standing where a restored file goes: emptied by the restore's
    /// deletions, then removed before the file is written.
    pub dirs_in_the_way: Vec<String>,
    /// Newer calls the undo passes over: they changed only folders checkpoints do not
    /// keep (`checkpoint N (TOOL: COMMAND): changed only FOLDERS`).
    pub passed_over: Vec<String>,
}

/// How an undo ended.
#[derive(Debug)]
pub enum Outcome {
    /// Nothing was changed: the plan has conflicts and the undo was not forced.
    Refused(Plan),
    /// Restored; the undo's own checkpoint id (`None` when nothing needed restoring).
    Done(Plan, Option<i64>),
}

/// The target checkpoint: `id`, or the default one.
fn target(store: &Store, id: Option<i64>) -> Result<CheckpointRow> {
    match id {
        Some(id) => {
            let Some(row) = store.checkpoint(id)? else {
                bail!("no checkpoint {id} (see `tinytool checkpoints`)");
            };
            if row.status != "done" {
                bail!("checkpoint {id} is still open: its call is running");
            }
            if let Some(by) = row.undone_by.filter(|by| *by != id) {
                bail!(
                    "checkpoint {id} is already undone by checkpoint {by}; `tinytool undo {by}` \
                     redoes it"
                );
            }
            if !row.left_out.is_empty() && store.checkpoint_changes(id)?.is_empty() {
                bail!(
                    "checkpoint {id} ({}: {}) changed only {}, which checkpoints do not keep: \
                     there is nothing to restore",
                    row.tool,
                    row.command,
                    row.left_out
                );
            }
            Ok(row)
        }
        None => match store.newest_undoable()? {
            Some(row) => Ok(row),
            None => bail!("nothing to undo: no checkpoint that has not been undone"),
        },
    }
}

/// The type bits of a mode.
const S_IFMT: u32 = 0o170000;
/// A symlink's type bits.
const S_IFLNK: u32 = 0o120000;

/// What two states must share to be the same: the kind (file or symlink) and the
/// permission bits.
fn shape(mode: u32) -> u32 {
    mode & (S_IFMT | 0o7777)
}

fn is_link(mode: u32) -> bool {
    mode & S_IFMT == S_IFLNK
}

fn permissions(mode: u32) -> u32 {
    mode & 0o7777
}

/// What [`current`] says of a directory.
const IS_DIR: &str = "is now a directory";

/// What is at `path` now; `Err` names what it is when not a regular file.
fn current(session: &Session, path: &str) -> Result<Option<(u32, Vec<u8>)>, String> {
    let full = session.dir.join(path);
    match std::fs::symlink_metadata(&full) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        // A file where a parent directory was (`rm -rf src && touch src`): the path is
        // absent, and the restore removes that file first.
        Err(e) if e.raw_os_error() == Some(libc::ENOTDIR) => Ok(None),
        Err(e) => Err(format!("cannot be read: {e}")),
        Ok(meta) if meta.file_type().is_file() => {
            use std::os::unix::fs::MetadataExt;
            atomic::read_regular(&full)
                .map(|bytes| Some((meta.mode(), bytes)))
                .map_err(|e| format!("cannot be read: {e}"))
        }
        Ok(meta) if meta.is_dir() => Err(IS_DIR.into()),
        Ok(meta) if meta.file_type().is_symlink() => {
            use std::os::unix::ffi::OsStringExt;
            use std::os::unix::fs::MetadataExt;
            std::fs::read_link(&full)
                .map(|target| Some((meta.mode(), target.into_os_string().into_vec())))
                .map_err(|e| format!("cannot be read: {e}"))
        }
        Ok(_) => Err("is now a special file".into()),
    }
}

/// Plans reverting `id` (or the default target) against the tree as it is now.
pub fn plan(session: &Session, id: Option<i64>) -> Result<Plan> {
    let blobs = record::blobs(session);
    session.state.write(|store| {
        let target = target(store, id)?;
        let changes = store.checkpoint_changes(target.id)?;
        // Paths read back from the state database are joined to the project only once
        // each is known to stay in it: a database the project ships, or one a command
        // could write, may name `../x` or `/etc/x`.
        if let Some(bad) = changes
            .iter()
            .find(|c| !crate::paths::is_clean_relative(&c.path))
        {
            anyhow::bail!(
                "checkpoint {} records the path {:?}, which is not a relative path inside the \
                 project: the state database ({}) was not written by tinytool alone; nothing \
                 was restored. Remove that database if you do not trust it (tinytool starts \
                 a new one)",
                target.id,
                bad.path,
                session.state.path().display()
            );
        }
        let mut overlapping = BTreeSet::new();
        for other in store.overlapping(target.id)? {
            for change in store.checkpoint_changes(other)? {
                overlapping.insert((change.path, other));
            }
        }
        // Files claimed by calls running now (file tools, undos): (checkpoint, path).
        let claimed: Vec<(i64, String)> = store
            .checkpoint_claims()?
            .into_iter()
            .filter(|(_, pid, _)| record::pid_alive(*pid))
            .map(|(id, _, path)| (id, path))
            .collect();
        let mut plan = Plan {
            target: target.clone(),
            steps: Vec::new(),
            conflicts: Vec::new(),
            skipped: Vec::new(),
            removed_dirs: Vec::new(),
            dirs_in_the_way: Vec::new(),
            passed_over: store
                .passed_over(target.id)?
                .into_iter()
                .map(|row| {
                    format!(
                        "checkpoint {} ({}: {}): changed only {}",
                        row.id, row.tool, row.command, row.left_out
                    )
                })
                .collect(),
        };
        for change in changes {
            let path = change.path.clone();
            let goal = match (change.before_mode, &change.before_blob) {
                (None, _) => None,
                (Some(mode), Some(blob)) => Some((
                    mode,
                    blobs
                        .get(blob)
                        .with_context(|| format!("the stored content of {path} is gone"))?,
                )),
                (Some(_), None) => {
                    let why = change.note.clone().unwrap_or_else(|| "not kept".into());
                    plan.skipped
                        .push(format!("{path}: its earlier content was not kept ({why})"));
                    continue;
                }
            };
            for (p, other) in &overlapping {
                if *p == path {
                    plan.conflicts.push(format!(
                        "{path}: checkpoint {other} ran at the same time and may have written it"
                    ));
                }
            }
            if let Some((id, _)) = claimed
                .iter()
                .find(|(id, p)| *p == path && *id != target.id)
            {
                plan.conflicts.push(format!(
                    "{path}: {} is changing it right now; undo when that call is done",
                    described(store, *id)?
                ));
                continue;
            }
            // Changed since by later checkpoints, not undone since: the newest of them.
            let chain = store.path_changes_since(&path, target.id)?;
            let last_id = chain.last().map_or(target.id, |(id, _)| *id);
            let newest = chain
                .iter()
                .rev()
                .find(|(id, _)| *id != target.id)
                .map(|(id, c)| (*id, c.clone()));
            let now = match current(session, &path) {
                Ok(now) => now,
                // A directory where the file was (`rm f && mkdir f`): fine when the
                // restore empties it (checked below); it is removed before the write.
                Err(what) if what == IS_DIR && goal.is_some() => {
                    plan.dirs_in_the_way.push(path.clone());
                    None
                }
                Err(what) => {
                    plan.conflicts.push(format!("{path}: {what}"));
                    continue;
                }
            };
            let holds = |mode: Option<u32>, blob: &Option<String>| match (&now, mode, blob) {
                (None, None, _) => true,
                (Some((m, bytes)), Some(want), Some(blob)) => {
                    shape(*m) == shape(want) && blobs.get(blob).is_ok_and(|kept| kept == *bytes)
                }
                _ => false,
            };
            // As the target left it: nobody's change since remains (later ones were
            // undone), so restoring takes nothing but the target's change back.
            if !holds(change.after_mode, &change.after_blob) {
                match newest {
                    Some((id, later)) if holds(later.after_mode, &later.after_blob) => {
                        plan.conflicts.push(format!(
                            "{path}: changed since by {}; undo {id} first (--force reverts \
                             that change too)",
                            described(store, id)?
                        ));
                    }
                    _ => plan.conflicts.push(format!(
                        "{path}: changed since checkpoint {last_id} by something outside the \
                         checkpoints"
                    )),
                }
            }
            let same = match (&now, &goal) {
                (None, None) => true,
                (Some((m, b)), Some((gm, gb))) => shape(*m) == shape(*gm) && b == gb,
                _ => false,
            };
            if !same {
                plan.steps.push(Step {
                    path,
                    current: now,
                    goal,
                });
            }
        }
        // A directory in the way may hold only what the restore deletes.
        let deleted: BTreeSet<&str> = plan
            .steps
            .iter()
            .filter(|s| s.goal.is_none())
            .map(|s| s.path.as_str())
            .collect();
        let mut foreign = Vec::new();
        for dir in &plan.dirs_in_the_way {
            let mut others = Vec::new();
            files_under(&session.dir, Path::new(dir), &mut others);
            if let Some(other) = others.iter().find(|f| !deleted.contains(f.as_str())) {
                foreign.push(format!(
                    "{dir}: is now a directory holding {other}, which the checkpoints did not \
                     record"
                ));
            }
        }
        plan.conflicts.extend(foreign);
        Ok(plan)
    })
}

/// Checkpoint `id` in words: `checkpoint 7 (edit: src/a.py)`.
fn described(store: &Store, id: i64) -> Result<String> {
    Ok(match store.checkpoint(id)? {
        Some(row) => format!("checkpoint {id} ({}: {})", row.tool, row.command),
        None => format!("checkpoint {id}"),
    })
}

/// Every non-directory under `rel` (relative to `root`), relative paths, not following
/// symlinks.
fn files_under(root: &Path, rel: &Path, out: &mut Vec<String>) {
    let Ok(listing) = std::fs::read_dir(root.join(rel)) else {
        out.push(format!("{} (unreadable)", rel.display()));
        return;
    };
    for entry in listing.flatten() {
        let child = rel.join(entry.file_name());
        match entry.file_type() {
            Ok(kind) if kind.is_dir() => files_under(root, &child, out),
            _ => out.push(child.to_string_lossy().into_owned()),
        }
    }
}

/// Removes the directory `rel` under `root` and every directory in it, all empty by now
/// (never a file: `rmdir` refuses a directory that is not empty).
fn remove_empty_tree(root: &Path, rel: &Path) -> std::io::Result<()> {
    for entry in std::fs::read_dir(root.join(rel))?.flatten() {
        if entry.file_type().is_ok_and(|k| k.is_dir()) {
            remove_empty_tree(root, &rel.join(entry.file_name()))?;
        }
    }
    crate::beneath::remove_dir(&root.join(rel))
}

/// The commit step of one restore step.
fn change<'a>((step, target): (&'a Step, &'a PathBuf)) -> atomic::Change<'a> {
    match &step.goal {
        Some((mode, bytes)) => atomic::Change::Write {
            target,
            bytes,
            mode: permissions(*mode),
        },
        None => atomic::Change::Delete { target },
    }
}

/// Applies a plan's steps. One multi-file commit, unless the shape of the tree changed
/// (a file where a restored file's directory goes, or a directory where a restored file
/// goes): then the deletions are one commit, the directories in the way are removed, and
/// the writes are a second commit.
fn restore(session: &Session, plan: &Plan) -> Result<()> {
    let targets: Vec<_> = plan
        .steps
        .iter()
        .map(|s| session.dir.join(&s.path))
        .collect();
    let deleted: Vec<&Path> = plan
        .steps
        .iter()
        .filter(|s| s.goal.is_none())
        .map(|s| Path::new(s.path.as_str()))
        .collect();
    let blocked = plan
        .steps
        .iter()
        .any(|s| s.goal.is_some() && deleted.iter().any(|d| Path::new(&s.path).starts_with(d)));
    let commit = |changes: &[atomic::Change]| {
        atomic::commit(&session.dir, changes).map_err(|failure| {
            anyhow::anyhow!(
                "the restore failed on {} ({}); nothing was changed{}",
                failure.target.display(),
                failure.error,
                if failure.damage.is_empty() {
                    String::new()
                } else {
                    format!(", except: {:?}", failure.damage)
                }
            )
        })
    };
    let links: Vec<(&Step, &PathBuf)> = plan
        .steps
        .iter()
        .zip(&targets)
        .filter(|(s, _)| s.goal.as_ref().is_some_and(|(mode, _)| is_link(*mode)))
        .collect();
    if !blocked && plan.dirs_in_the_way.is_empty() && links.is_empty() {
        let changes: Vec<_> = plan.steps.iter().zip(&targets).map(change).collect();
        commit(&changes)?;
        return Ok(());
    }
    let (deletions, writes): (Vec<_>, Vec<_>) = plan
        .steps
        .iter()
        .zip(&targets)
        .filter(|(s, _)| !s.goal.as_ref().is_some_and(|(mode, _)| is_link(*mode)))
        .map(change)
        .partition(|c| matches!(c, atomic::Change::Delete { .. }));
    commit(&deletions)?;
    for dir in &plan.dirs_in_the_way {
        remove_empty_tree(&session.dir, Path::new(dir)).with_context(|| {
            format!(
                "the restore deleted what it had to but cannot remove the directory {dir} \
                 where a file goes back"
            )
        })?;
    }
    commit(&writes).context("the files to delete are gone, but the rest was not restored")?;
    for (step, target) in links {
        let Some((_, bytes)) = &step.goal else {
            continue;
        };
        make_link(&session.dir, target, bytes).with_context(|| {
            format!("the files are restored, but not the symlink {}", step.path)
        })?;
    }
    Ok(())
}

/// Makes `target` a symlink to `to` (bytes), replacing a file or symlink there and
/// creating missing parent directories; nothing on the way is followed.
fn make_link(root: &Path, target: &Path, to: &[u8]) -> std::io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    if let Some(parent) = target.parent()
        && let Ok(rel) = parent.strip_prefix(root)
    {
        let mut at = root.to_path_buf();
        for part in rel.components() {
            at.push(part);
            match crate::beneath::mkdir(&at, 0o777) {
                Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => return Err(e),
                _ => {}
            }
        }
    }
    match crate::beneath::remove_file(target) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
        _ => {}
    }
    let (dir, name) = crate::beneath::parent(target)?;
    let to =
        std::ffi::CString::new(to).map_err(|_| std::io::Error::from_raw_os_error(libc::EINVAL))?;
    let name = std::ffi::CString::new(name.as_bytes())
        .map_err(|_| std::io::Error::from_raw_os_error(libc::EINVAL))?;
    // SAFETY: valid NUL-terminated strings and an open directory handle.
    let rc = unsafe {
        libc::symlinkat(
            to.as_ptr(),
            std::os::fd::AsRawFd::as_raw_fd(&dir),
            name.as_ptr(),
        )
    };
    if rc < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Removes the directories holding `removed` (relative paths of files the restore
/// deleted) that are empty now and were created at or after `since` (milliseconds since
/// the epoch: the reverted checkpoint's start), deepest first; returns them. A directory
/// the call did not create (older, or its creation time unknown to the file system) stays,
/// as does one holding anything: leaving an empty directory is harmless, removing a
/// person's is not. Checkpoints keep files only, so an empty directory a call removed is
/// not brought back (one that held files comes back with them).
fn remove_created_dirs(root: &Path, removed: &[&str], since: i64) -> Vec<String> {
    // File systems stamp with the kernel's coarse clock, which lags the real clock by up
    // to a tick: a directory made right after the checkpoint opened can look older, so
    // allow a second.
    let since = std::time::UNIX_EPOCH
        + std::time::Duration::from_millis(since.saturating_sub(1000).max(0) as u64);
    let mut dirs = BTreeSet::new();
    for path in removed {
        let mut dir = Path::new(path).parent();
        while let Some(d) = dir.filter(|d| !d.as_os_str().is_empty()) {
            dirs.insert(d.to_path_buf());
            dir = d.parent();
        }
    }
    // Deepest first, so a parent is looked at once its children are gone.
    let mut dirs: Vec<PathBuf> = dirs.into_iter().collect();
    dirs.sort_by_key(|d| std::cmp::Reverse(d.components().count()));
    let mut gone = Vec::new();
    for dir in dirs {
        let full = root.join(&dir);
        let Ok(meta) = crate::beneath::metadata(&full, false) else {
            continue;
        };
        let created_by_call = meta.is_dir() && meta.created().is_ok_and(|t| t >= since);
        // rmdir itself refuses a directory that is not empty.
        if created_by_call && crate::beneath::remove_dir(&full).is_ok() {
            gone.push(dir.to_string_lossy().into_owned());
        }
    }
    gone
}

/// The conflict and skipped lines of a plan (`conflict: PATH: WHY`, `skipped: ...`).
fn plan_text(plan: &Plan) -> String {
    let mut text = String::new();
    for conflict in &plan.conflicts {
        text.push_str(&format!("conflict: {conflict}\n"));
    }
    for skipped in &plan.skipped {
        text.push_str(&format!("skipped: {skipped}\n"));
    }
    for call in &plan.passed_over {
        text.push_str(&format!(
            "skipped {call}, which checkpoints do not keep (undo cannot take that back)\n"
        ));
    }
    text
}

/// The letter of a restore step: `A` (brought back), `D` (removed), `M` (rewritten).
fn step_letter(step: &Step) -> char {
    match (&step.current, &step.goal) {
        (None, Some(_)) => 'A',
        (Some(_), None) => 'D',
        _ => 'M',
    }
}

/// What `undo --dry-run` prints: the target, what it would restore and remove (counts),
/// the conflicts, and one line per path with the size it would have (`A src/x.py 2.1 KB`);
/// the diff of a path is `checkpoints show ID PATH`'s (a summary, not a dump: a dry run of
/// a whole deleted folder stays a few lines per file).
pub fn dry_run_text(plan: &Plan) -> String {
    let restored = plan.steps.iter().filter(|s| s.goal.is_some()).count();
    let removed = plan.steps.len() - restored;
    let id = plan.target.id;
    let mut text = format!(
        "would revert checkpoint {id} ({}: {}): restore {restored} {}, remove {removed}\n",
        plan.target.tool,
        plan.target.command,
        if restored == 1 { "file" } else { "files" }
    );
    text.push_str(&plan_text(plan));
    for step in &plan.steps {
        let bytes = step
            .goal
            .as_ref()
            .or(step.current.as_ref())
            .map_or(0, |(_, b)| b.len());
        text.push_str(&format!(
            "{} {} {}\n",
            step_letter(step),
            step.path,
            report::size_text(bytes as u64)
        ));
    }
    if let Some(step) = plan.steps.first() {
        text.push_str(&format!(
            "(`tinytool checkpoints show {id} PATH` shows what checkpoint {id} changed in a \
             path, e.g. `tinytool checkpoints show {id} {}`)\n",
            step.path
        ));
    }
    text
}

/// What a refused undo prints.
pub fn refused_text(plan: &Plan) -> String {
    let mut text = plan_text(plan);
    text.push_str(&format!(
        "undo of checkpoint {} refused: {} {} in conflict (above); nothing was restored \
         (--force restores them anyway, --dry-run lists what it would do)\n",
        plan.target.id,
        plan.conflicts.len(),
        if plan.conflicts.len() == 1 {
            "path"
        } else {
            "paths"
        }
    ));
    text
}

/// What a done undo prints: the target, its own checkpoint, and a line per path.
pub fn done_text(plan: &Plan, undo_id: Option<i64>) -> String {
    let mut text = format!(
        "reverted checkpoint {} ({}: {})",
        plan.target.id, plan.target.tool, plan.target.command
    );
    let restored = plan.steps.iter().filter(|s| s.goal.is_some()).count();
    let removed = plan.steps.len() - restored;
    match undo_id {
        Some(u) => text.push_str(&format!(
            ": restored {restored} {}, removed {removed} (checkpoint {u}; `tinytool undo {u}` \
             reverts this undo)\n",
            if restored == 1 { "file" } else { "files" }
        )),
        None => {
            text.push_str(": nothing needed restoring (the files are as they were before it)\n")
        }
    }
    text.push_str(&plan_text(plan));
    for step in &plan.steps {
        text.push_str(&format!("{} {}\n", step_letter(step), step.path));
    }
    for dir in &plan.removed_dirs {
        text.push_str(&format!("D {dir}/ (created by the call, now empty)\n"));
    }
    text
}

/// A plan as JSON (the `checkpoint` tool's metadata): the target, the paths with their
/// letters, conflicts, skipped paths and removed directories.
pub fn plan_json(plan: &Plan) -> serde_json::Value {
    serde_json::json!({
        "target": plan.target.id,
        "paths": plan.steps.iter().map(|s| serde_json::json!({
            "path": s.path,
            "change": step_letter(s).to_string(),
        })).collect::<Vec<_>>(),
        "conflicts": plan.conflicts,
        "skipped": plan.skipped,
        "removed_dirs": plan.removed_dirs,
        "passed_over": plan.passed_over,
    })
}

/// Brings the checkpoints up to date (a dead call's changes complete its checkpoint) and
/// plans reverting `id` (or the default target), changing no file (`--dry-run`).
pub fn plan_settled(session: &Session, id: Option<i64>) -> Result<Plan> {
    let _lock = record::lock(&session.dir)?;
    if let Err(notice) = record::settle_locked(session)? {
        bail!("{notice}");
    }
    plan(session, id)
}

/// Reverts `id` (or the default target): under the checkpoint lock, opens an `undo`
/// checkpoint (which first completes a dead call's checkpoint), plans, and when there are
/// no conflicts or `force` is set, restores.
pub fn undo(session: &Session, id: Option<i64>, force: bool) -> Result<Outcome> {
    let _lock = record::lock(&session.dir)?;
    if let Err(notice) = record::settle_locked(session)? {
        bail!("{notice}");
    }
    let plan = self::plan(session, id)?;
    if !plan.conflicts.is_empty() && !force {
        return Ok(Outcome::Refused(plan));
    }
    let target = plan.target.clone();
    let command = format!("undo {}", target.id);
    // The undo's own checkpoint covers exactly the files it restores (so a call running
    // beside it never lands in it), claimed like a file tool's.
    let files: Vec<String> = plan.steps.iter().map(|s| s.path.clone()).collect();
    let began = super::files::begin_locked(
        session,
        NewCheckpoint {
            kind: "undo",
            session_id: &session.id,
            call_id: None,
            tool: "undo",
            command: &command,
            reverts: Some(target.id),
            overlaps: "",
            files: None,
        },
        &files,
    )?;
    let open = match began {
        Began::Open(open) => open,
        Began::Notice(notice) => bail!("{notice}"),
        Began::Skipped => bail!("checkpoints are disabled"),
    };
    let committed = restore(session, &plan);
    let closed = super::files::finish_locked(session, open.id)?;
    let (kept, stored) = (closed.kept, closed.stored);
    committed?;
    let removed: Vec<&str> = plan
        .steps
        .iter()
        .filter(|s| s.goal.is_none())
        .map(|s| s.path.as_str())
        .collect();
    let removed_dirs = remove_created_dirs(&session.dir, &removed, target.time_created);
    let plan = Plan {
        removed_dirs,
        ..plan
    };
    let undo_id = kept.then_some(open.id);
    session.state.write(|store| {
        store.set_undone_by(target.id, Some(undo_id.unwrap_or(target.id)))?;
        if target.kind == "undo"
            && let Some(reverted) = target.reverts
        {
            // What the target undid counts as not undone again; when that was itself an
            // undo (the target was a redo), what it had undone is undone by it again.
            store.set_undone_by(reverted, None)?;
            if let Some(row) = store.checkpoint(reverted)?
                && row.kind == "undo"
                && let Some(again) = row.reverts
            {
                store.set_undone_by(again, Some(reverted))?;
            }
        }
        Ok(())
    })?;
    record::prune(session, stored)?;
    Ok(Outcome::Done(plan, undo_id))
}
