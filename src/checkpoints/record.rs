//! Taking checkpoints around calls: [`begin`] before a call that may change the project,
//! [`finish`] after it.
//!
//! Both steps run under an exclusive lock on `<dir>/.tinytool/checkpoints/lock` (so two
//! processes never interleave their walks and updates) and end in one SQLite transaction.
//! [`begin`] walks the tree and brings the stored tree up to date first: on the project's
//! first checkpoint that is the baseline (every kept file stored; a baseline over
//! `checkpoints.max_bytes` turns checkpoints off for the project instead), later it picks
//! up what changed between calls: a person's edits; the changes of a call whose process
//! died mid-call, which complete that call's open checkpoint; or, while another call is
//! running, that call's changes so far, added to its open checkpoint (the new checkpoint
//! records the overlap, and undo treats the paths both touched as conflicts). So every before-image is
//! stored before the call runs. [`finish`] walks again and records, per path that differs,
//! the content before (from the stored tree) and after; a call that changed nothing leaves
//! no checkpoint. A change to a path that a newer checkpoint already changed goes to that
//! one (overlapping calls), so undoing newest first walks each path back in order.
//! Afterwards checkpoints older than `keep_days` and, while the blob store exceeds
//! `max_bytes`, the oldest ones are pruned with the blobs nobody refers to.
//!
//! A file tool's call names its files: its checkpoint is those files alone
//! ([`super::files`], [`Scope::Files`]), and every walk here leaves the files such a
//! running call has claimed to it, so a command beside it never records them.
//!
//! Regular files and symlinks (as their target) are kept: a special file, and a file over
//! `max_file_bytes`, is recorded with a note saying why it was not kept.

use std::collections::BTreeMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, Result};
use serde_json::{Value, json};

use super::store::BlobStore;
use crate::config::Checkpoints;
use crate::session::Session;
use crate::state::{FileChange, NewCheckpoint, Store, TreeEntry};
use crate::tree::watch::Watch;
use crate::tree::{self as walk, Fingerprint};

const S_IFMT: u32 = 0o170000;
const S_IFREG: u32 = 0o100000;
const S_IFLNK: u32 = 0o120000;

/// A checkpoint opened by [`begin`], to be closed by [`finish`].
#[derive(Debug)]
pub struct Open {
    /// Its id.
    pub id: i64,
    /// What the walk before the call saw and the watch on its directories (taken by the
    /// walk after the call, which then `stat`s only the directories that changed).
    before: std::sync::Mutex<Option<(Arc<walk::listing::Cache>, Arc<Watch>)>>,
    /// Bytes the walk before the call stored (the baseline, or changes made between
    /// calls), reported with the call's own when together they are large.
    stored_before: u64,
    /// Whether it covers the files its call named ([`super::files`]) rather than what a
    /// walk sees.
    files: bool,
    /// The stamps of the folders the walk before the call left out
    /// ([`walk::unkept`]), to tell whether the call changed them, and what they were
    /// taken of.
    unkept: std::sync::Mutex<(BTreeMap<String, u64>, walk::unkept::Plan)>,
}

/// What closing a checkpoint did.
#[derive(Debug, Default)]
pub struct Closed {
    /// Whether the checkpoint was kept (it changed files, or folders checkpoints do not
    /// keep).
    pub kept: bool,
    /// The changes of the files.
    pub changes: Vec<FileChange>,
    /// Bytes of new contents stored.
    pub stored: u64,
    /// The folders checkpoints do not keep that the call changed, in words.
    pub left_out: Vec<String>,
}

impl Open {
    /// The open checkpoint `id`, closed by a full walk (one taken in another process).
    pub fn new(id: i64) -> Open {
        Open {
            id,
            before: std::sync::Mutex::new(None),
            stored_before: 0,
            files: false,
            unkept: std::sync::Mutex::default(),
        }
    }

    /// The open checkpoint `id` of the files its call named ([`super::files`]).
    pub fn of_files(id: i64) -> Open {
        Open {
            files: true,
            ..Open::new(id)
        }
    }
}

/// What a call's checkpoint covers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scope {
    /// What a walk of the project sees change (a command).
    Project,
    /// These files (relative, clean paths inside the project): a file tool's.
    Files(Vec<String>),
}

/// What [`begin`] did.
#[derive(Debug)]
pub enum Began {
    /// The call is not checkpointed (checkpoints disabled by the user).
    Skipped,
    /// Checkpoints are off for the project, or failed: the one-line notice for
    /// `metadata.checkpoint`.
    Notice(String),
    /// A checkpoint is open.
    Open(Open),
}

/// A call's command as its checkpoint shows it: one line of at most 200 bytes (cut with
/// `…`).
pub fn shown_command(command: &str) -> String {
    let mut line = command.replace('\n', " ");
    if line.len() > 200 {
        let mut end = 200;
        while !line.is_char_boundary(end) {
            end -= 1;
        }
        line.truncate(end);
        line.push('…');
    }
    line
}

/// The lock that serializes checkpoint work of one project across processes (held until
/// dropped).
pub struct Lock {
    _file: File,
}

/// Takes the project's checkpoint lock, creating `.tinytool/checkpoints/` when needed.
pub fn lock(dir: &Path) -> Result<Lock> {
    let folder = crate::project::ensure_tinytool_dir(dir)
        .with_context(|| format!("cannot create {}", dir.join(".tinytool").display()))?
        .join("checkpoints");
    std::fs::create_dir_all(&folder)
        .with_context(|| format!("cannot create {}", folder.display()))?;
    let path = folder.join("lock");
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .with_context(|| format!("cannot open {}", path.display()))?;
    file.lock()
        .with_context(|| format!("cannot lock {}", path.display()))?;
    Ok(Lock { _file: file })
}

/// The blob store of the session's project.
pub fn blobs(session: &Session) -> BlobStore {
    BlobStore::new(&crate::project::tinytool_dir(&session.dir))
}

/// The blob store with one flush for all new blobs ([`BlobStore::sync`]), for walks.
fn walk_blobs(session: &Session) -> BlobStore {
    blobs(session).deferred()
}

/// Opens a checkpoint before a call (module doc; a call that names its files gets a
/// checkpoint of those, [`super::files`]).
pub fn begin(
    session: &Session,
    tool: &str,
    call_id: Option<&str>,
    command: &str,
    scope: &Scope,
) -> Began {
    if !session.config.checkpoints.enabled {
        return Began::Skipped;
    }
    let new = NewCheckpoint {
        kind: "call",
        session_id: &session.id,
        call_id,
        tool,
        command,
        reverts: None,
        overlaps: "",
        files: None,
    };
    if let Scope::Files(files) = scope {
        return super::files::begin(session, new, files);
    }
    let _lock = match lock(&session.dir) {
        Ok(lock) => lock,
        Err(err) => return Began::Notice(format!("checkpoint not taken: {err:#}")),
    };
    match begin_locked(session, new) {
        Ok(Began::Open(open)) => Began::Open(open),
        // No finish follows: withdraw the walk's published stamps now.
        Ok(other) => {
            walk::forget();
            other
        }
        Err(err) => {
            walk::forget();
            Began::Notice(format!("checkpoint not taken: {err:#}"))
        }
    }
}

/// [`begin`] with the lock held (undo opens its own checkpoint this way).
pub fn begin_locked(session: &Session, new: NewCheckpoint) -> Result<Began> {
    let watch = Watch::new().map(Arc::new);
    let (alive, listings, stored_before) = match settle(session, watch.as_deref())? {
        Err(notice) => return Ok(Began::Notice(notice)),
        Ok(settled) => settled,
    };
    // Every folder is watched from here on (the walk added the watches).
    let made = std::time::Instant::now();
    let overlaps: Vec<String> = alive.iter().map(i64::to_string).collect();
    let overlaps = overlaps.join(",");
    let new = NewCheckpoint {
        overlaps: &overlaps,
        ..new
    };
    let id = session
        .state
        .write(|store| store.open_checkpoint(&[], &new))?;
    let mut plan = walk::unkept::Plan::load(&session.dir);
    let stamps = walk::unkept::stamps(&session.dir, &walk::unkept::folders(&listings), &mut plan);
    let open = Open {
        stored_before,
        unkept: std::sync::Mutex::new((stamps, plan)),
        ..Open::new(id)
    };
    if let (Some(watch), Ok(mut before)) = (watch, open.before.lock()) {
        // The sandbox asks it what a command changed (`sandbox::Plan::sweep`).
        crate::tree::watch::publish(&session.dir, made, &watch);
        *before = Some((listings, watch));
    }
    Ok(Began::Open(open))
}

/// Brings the stored tree up to date with the lock held (the first part of [`begin`]):
/// the baseline, a person's edits, a dead call's changes completing its checkpoint, or a
/// running call's changes so far. Returns the ids of checkpoints still open in live
/// processes, or the notice when checkpoints are off for the project.
pub fn settle_locked(session: &Session) -> Result<Result<Vec<i64>, String>> {
    Ok(settle(session, None)?.map(|(alive, _, _)| alive))
}

/// [`settle_locked`], watching every directory walked with `watch`; also returns the
/// listings the walk took and the bytes it stored.
#[allow(clippy::type_complexity)]
fn settle(
    session: &Session,
    watch: Option<&Watch>,
) -> Result<Result<(Vec<i64>, Arc<walk::listing::Cache>, u64), String>> {
    let cfg = session.config.checkpoints;
    let blobs = walk_blobs(session);
    // A file tool's checkpoint whose process died is completed from its own files first.
    // (The writable connection the rest of the settle uses.)
    let open = session.state.write(|store| store.open_checkpoints())?;
    for dead in open
        .iter()
        .filter(|c| c.scope == "files" && !pid_alive(c.pid))
    {
        super::files::finish_locked(session, dead.id)?;
    }
    let (walked, listings) = walk_project(
        session,
        walk::Options {
            watch,
            ..walk::Options::default()
        },
    )?;
    let mut left_to_claims = false;
    let settled = session.state.write(|store| {
        if let Some(off) = store.checkpoint_setting("off")? {
            return Ok(Err(off));
        }
        if store.checkpoint_setting("baseline")?.is_none() {
            let kept: u64 = walked
                .seen
                .values()
                .flatten()
                .filter(|fp| fp.mode & S_IFMT == S_IFREG && fp.size <= cfg.max_file_bytes)
                .map(|fp| fp.size)
                .sum();
            if kept > cfg.max_bytes {
                let notice = format!(
                    "checkpoints off for this project: its baseline ({kept} bytes) exceeds \
                     checkpoints.max_bytes ({})",
                    cfg.max_bytes
                );
                store.set_checkpoint_setting("off", &notice)?;
                return Ok(Err(notice));
            }
        }
        let (before, candidates) = differences(store, &walked)?;
        let (candidates, claimed) = unclaimed(store, candidates)?;
        left_to_claims = claimed;
        let (updates, changes) = observe_changes(&session.dir, &blobs, &cfg, &before, candidates);
        if !updates.is_empty() {
            blobs.sync()?;
        }
        // Open checkpoints of processes that died mid-call: the changes since belong to
        // the newest of them (its before-images were stored when it began). A file
        // tool's running checkpoint claims its files and has nothing else to do with
        // what a walk sees.
        let open: Vec<_> = store
            .open_checkpoints()?
            .into_iter()
            .filter(|c| c.scope == "project")
            .collect();
        let (dead, alive): (Vec<_>, Vec<_>) = open.into_iter().partition(|c| !pid_alive(c.pid));
        let mut dead = dead.into_iter();
        if let Some(newest) = dead.next() {
            let changes = assign(store, newest.id, changes)?;
            store.close_checkpoint(newest.id, &updates, &changes)?;
            for other in dead {
                store.close_checkpoint(other.id, &[], &[])?;
            }
        } else if let Some(running) = alive.first() {
            // Changed while another call runs: that call's (the newest running one), so
            // each change is recorded exactly once; both record the overlap.
            let changes = assign(store, running.id, changes)?;
            store.add_to_open_checkpoint(running.id, &updates, &changes)?;
        } else if store.checkpoint_setting("baseline")?.is_some() {
            record_outside(store, &session.id, &updates, &changes, true)?;
        } else {
            store.update_checkpoint_tree(&updates, true)?;
        }
        if store.checkpoint_setting("baseline")?.is_none() {
            store.set_checkpoint_setting("baseline", "done")?;
        }
        let generation = store.tree_generation()?;
        Ok(Ok((alive.iter().map(|c| c.id).collect(), generation)))
    })?;
    Ok(settled.map(|(alive, generation)| {
        let listings = keep_listings(session, &walked, listings, generation, !left_to_claims);
        walk::publish(&session.dir, listings.clone());
        (alive, listings, blobs.stored_bytes())
    }))
}

/// Records changes no call can be tied to (made between calls: a person's editor, a
/// process outside tinytool) as a checkpoint of kind `outside`, so the history shows them
/// and an undo that meets them names them; applies the tree `updates` either way (`walked`:
/// they come from a walk).
pub(super) fn record_outside(
    store: &mut Store,
    session_id: &str,
    updates: &[(String, Option<TreeEntry>)],
    changes: &[FileChange],
    walked: bool,
) -> Result<()> {
    store.update_checkpoint_tree(updates, walked)?;
    if changes.is_empty() {
        return Ok(());
    }
    let id = store.open_checkpoint(
        &[],
        &NewCheckpoint {
            kind: "outside",
            session_id,
            call_id: None,
            tool: "outside",
            command: "changed between calls, by no call of tinytool",
            reverts: None,
            overlaps: "",
            files: None,
        },
    )?;
    store.close_checkpoint(id, &[], changes)?;
    Ok(())
}

/// Walks the project, trusting the walk cache when it was saved for the stored tree's
/// generation (so the walk reports only differences); never before the baseline.
fn walk_project(
    session: &Session,
    options: walk::Options,
) -> Result<(walk::Walk, walk::listing::Cache)> {
    let generation = session.state.write(|store| {
        Ok(match store.checkpoint_setting("baseline")? {
            Some(_) => Some(store.tree_generation()?),
            None => None,
        })
    })?;
    let not_project = session.config.not_project_for_checkpoints();
    walk::walk(
        &session.dir,
        walk::Options {
            tree: generation,
            not_project: Some(&not_project),
            ..options
        },
    )
}

/// The stored entries a walk is compared with and the paths that differ from them (the
/// new fingerprint, `None` for a path that is gone): from the walk's differences alone
/// when it is complete, else from the whole stored tree.
#[allow(clippy::type_complexity)]
fn differences(
    store: &mut Store,
    walked: &walk::Walk,
) -> Result<(
    BTreeMap<String, TreeEntry>,
    Vec<(String, Option<Fingerprint>)>,
)> {
    if walked.complete {
        // Only this process changes the tree while it holds the lock.
        anyhow::ensure!(
            store.tree_generation()? == walked.based_on,
            "the stored tree changed during the walk"
        );
        let before = store.checkpoint_entries(walked.seen.keys())?;
        let candidates = walked
            .seen
            .iter()
            .filter(|(path, fp)| before.get(*path).map(|e| e.fingerprint) != **fp)
            .map(|(path, fp)| (path.clone(), *fp))
            .collect();
        return Ok((before, candidates));
    }
    let tree = store.checkpoint_tree()?;
    let candidates = walk::differing(&tree, &walked.files(), |e| &e.fingerprint);
    Ok((tree, candidates))
}

/// Saves a walk's listings for the stored tree's `generation` (now that the tree matches
/// them) when they differ from the cache file; returns them for [`walk::publish`]. A walk
/// that left claimed files to their calls (`matches` false) saw a tree the stored one
/// does not match yet: its listings are not saved.
fn keep_listings(
    session: &Session,
    walked: &walk::Walk,
    mut listings: walk::listing::Cache,
    generation: u64,
    matches: bool,
) -> Arc<walk::listing::Cache> {
    listings.tree = generation;
    if matches && (walked.dirty || generation != walked.based_on) {
        walk::listing::save(&session.dir, &listings);
    }
    Arc::new(listings)
}

/// From how many bytes of new contents stored around one call its result says so.
const STORED_NOTE_BYTES: u64 = 50 * 1024 * 1024;

/// `metadata.checkpoint.note` of a call around which `bytes` of new contents were stored
/// (the call's own changes, the first checkpoint of the project, or files added between
/// calls): how much, where, and the settings that cap it.
fn stored_note(session: &Session, bytes: u64) -> (u64, String) {
    let cfg = session.config.checkpoints;
    let size = super::report::size_text;
    (
        bytes,
        format!(
            "{} of file contents were stored in .tinytool/checkpoints/ around this call (so \
             that undo can bring them back); a file over checkpoints.max_file_bytes ({}) is \
             not kept, and checkpoints.max_bytes ({}) caps the store (the oldest checkpoints \
             go first)",
            size(bytes),
            size(cfg.max_file_bytes),
            size(cfg.max_bytes)
        ),
    )
}

/// Closes a checkpoint after its call and prunes (module doc); the value for
/// `metadata.checkpoint`, `None` when the call changed nothing.
pub fn finish(session: &Session, open: Open) -> Option<Value> {
    finish_with_changes(session, open).0
}

/// [`finish`], with the changes of the files the checkpoint recorded.
pub fn finish_with_changes(session: &Session, open: Open) -> (Option<Value>, Vec<FileChange>) {
    let result = lock(&session.dir).and_then(|_lock| {
        let finished = if open.files {
            super::files::finish_locked(session, open.id)
        } else {
            finish_locked(session, &open)
        };
        walk::forget();
        let closed = finished?;
        // Only new contents can push the store over its cap: an unchanged tree stays a
        // walk of stat calls.
        let added = open.stored_before + closed.stored;
        if closed.kept || added > 0 {
            prune(session, added)?;
        }
        Ok(closed)
    });
    walk::forget();
    let stored = |stored: u64| {
        let total = open.stored_before + stored;
        (total >= STORED_NOTE_BYTES).then(|| stored_note(session, total))
    };
    let changes = match &result {
        Ok(closed) => closed.changes.clone(),
        Err(_) => Vec::new(),
    };
    let value = match result {
        Ok(Closed {
            kept: false,
            stored: bytes,
            ..
        }) => stored(bytes).map(|(bytes, note)| json!({"stored_bytes": bytes, "note": note})),
        Ok(Closed {
            changes,
            stored: bytes,
            left_out,
            ..
        }) => {
            let mut value = json!({"id": open.id, "files": changes.len()});
            let mut notes = Vec::new();
            if !left_out.is_empty() {
                value["left_out"] = json!(left_out);
                notes.push(left_out_note(changes.is_empty(), &left_out));
            }
            if let Some((bytes, note)) = stored(bytes) {
                value["stored_bytes"] = json!(bytes);
                notes.push(note);
            }
            if !notes.is_empty() {
                value["note"] = json!(notes.join("; "));
            }
            Some(value)
        }
        Err(err) => Some(Value::String(format!(
            "checkpoint {} not completed: {err:#}",
            open.id
        ))),
    };
    (value, changes)
}

/// `metadata.checkpoint.note` of a call that changed folders checkpoints do not keep.
fn left_out_note(only: bool, left_out: &[String]) -> String {
    format!(
        "{} {}, which checkpoints do not keep: undo cannot take {} back (it passes over \
         this call, and says so)",
        if only { "changed only" } else { "also changed" },
        left_out.join(", "),
        if left_out.len() == 1 { "that" } else { "those" }
    )
}

/// The left-out folders (with why) whose stamps differ from `before`'s, the walk after the
/// call having listed `listings`.
fn changed_unkept(session: &Session, open: &Open, listings: &walk::listing::Cache) -> Vec<String> {
    let Ok(mut unkept) = open.unkept.lock() else {
        return Vec::new();
    };
    let (before, plan) = &mut *unkept;
    let mut folders = walk::unkept::folders(listings);
    folders.extend(before.keys().cloned());
    folders.sort();
    folders.dedup();
    let after = walk::unkept::stamps(&session.dir, &folders, plan);
    let changed = walk::unkept::changed(before, &after);
    plan.refresh(&session.dir, &changed, folders.len());
    plan.save(&session.dir);
    let not_project = session.config.not_project_for_checkpoints();
    let mut shown: Vec<String> = changed
        .into_iter()
        .map(|folder| outermost_marked(session, &not_project, folder))
        .collect();
    shown.dedup();
    shown
        .into_iter()
        .map(|folder| {
            let why =
                walk::left_out_folder(&session.dir, &folder, &not_project).unwrap_or("left out");
            format!("{folder}/ ({why})")
        })
        .collect()
}

/// The outermost folder holding `folder` that is not the project's by a marker inside it
/// (a virtual environment's `lib/` is shown as the environment), else `folder`.
fn outermost_marked(
    session: &Session,
    not_project: &crate::skip_dirs::NotProject,
    folder: String,
) -> String {
    let mut prefix = String::new();
    for part in folder.split('/') {
        if !prefix.is_empty() {
            prefix.push('/');
        }
        prefix.push_str(part);
        let dir = session.dir.join(&prefix);
        if not_project
            .by_content(|marker| std::fs::symlink_metadata(dir.join(marker)).is_ok())
            .is_some()
        {
            return prefix;
        }
    }
    folder
}

/// [`finish`] with the lock held, without pruning.
pub fn finish_locked(session: &Session, open: &Open) -> Result<Closed> {
    let cfg = session.config.checkpoints;
    let blobs = walk_blobs(session);
    let before = open.before.lock().ok().and_then(|mut before| before.take());
    // Only a walk before the call in this process took the left-out folders' stamps.
    let watched_before = before.is_some();
    let (old, quiet) = match before {
        Some((listings, watch)) => (Some(listings), watch.quiet()),
        None => (None, None),
    };
    let (walked, listings) = walk_project(
        session,
        walk::Options {
            old: old.as_deref(),
            quiet: quiet.as_ref(),
            ..walk::Options::default()
        },
    )?;
    let left_out = if watched_before {
        changed_unkept(session, open, &listings)
    } else {
        Vec::new()
    };
    let (kept, changes, generation, claimed) = session.state.write(|store| {
        let (before, candidates) = differences(store, &walked)?;
        let (candidates, claimed) = unclaimed(store, candidates)?;
        let (updates, changes) = observe_changes(&session.dir, &blobs, &cfg, &before, candidates);
        if !updates.is_empty() {
            blobs.sync()?;
        }
        let changes = assign(store, open.id, changes)?;
        if !left_out.is_empty() {
            store.set_left_out(open.id, &left_out.join(", "))?;
        }
        let kept = store.close_checkpoint(open.id, &updates, &changes)?;
        Ok((kept, changes, store.tree_generation()?, claimed))
    })?;
    keep_listings(session, &walked, listings, generation, !claimed);
    Ok(Closed {
        kept,
        changes,
        stored: blobs.stored_bytes(),
        left_out,
    })
}

/// The candidates of a walk without the files that open checkpoints of file tools claim
/// (their calls record them, [`super::files`]), and whether any was left out.
#[allow(clippy::type_complexity)]
fn unclaimed(
    store: &Store,
    candidates: Vec<(String, Option<Fingerprint>)>,
) -> Result<(Vec<(String, Option<Fingerprint>)>, bool)> {
    let claims = store.checkpoint_claims()?;
    if claims.is_empty() {
        return Ok((candidates, false));
    }
    let claimed: std::collections::HashSet<&str> =
        claims.iter().map(|(_, _, path)| path.as_str()).collect();
    let before = candidates.len();
    let rest: Vec<_> = candidates
        .into_iter()
        .filter(|(path, _)| !claimed.contains(path.as_str()))
        .collect();
    let left = rest.len() != before;
    Ok((rest, left))
}

/// Records the changes a walk saw that belong to a newer checkpoint than `target` there,
/// and returns the rest, for `target`. A path whose last change is in a newer checkpoint
/// (overlapping calls: an older call's walk saw what happened after a newer one
/// recorded the path) keeps its later changes in that newer checkpoint, so the changes of
/// one path always sit in checkpoints of increasing id in the order they happened, and
/// undoing checkpoints newest first walks every path back through them.
fn assign(store: &mut Store, target: i64, changes: Vec<FileChange>) -> Result<Vec<FileChange>> {
    let mut own = Vec::new();
    let mut newer: BTreeMap<i64, Vec<FileChange>> = BTreeMap::new();
    for change in changes {
        match store.last_change_of(&change.path)? {
            Some(id) if id > target => newer.entry(id).or_default().push(change),
            _ => own.push(change),
        }
    }
    for (id, changes) in newer {
        store.extend_checkpoint(id, &changes)?;
    }
    Ok(own)
}

/// Whether process `pid` exists (a reused pid reads as alive: the overlap is then only
/// recorded, never lost).
pub(crate) fn pid_alive(pid: i64) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    if pid <= 0 {
        return false;
    }
    // SAFETY: kill with signal 0 only checks that the process exists.
    let rc = unsafe { libc::kill(pid, 0) };
    rc == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

/// The stored-tree updates and the content changes for the `candidates` (paths whose
/// fingerprint differs from their entry in `tree`, with the new one or `None` when gone):
/// each is looked at (read and stored when kept).
#[allow(clippy::type_complexity)]
fn observe_changes(
    root: &Path,
    blobs: &BlobStore,
    cfg: &Checkpoints,
    tree: &BTreeMap<String, TreeEntry>,
    candidates: Vec<(String, Option<Fingerprint>)>,
) -> (Vec<(String, Option<TreeEntry>)>, Vec<FileChange>) {
    let updates: Vec<(String, Option<TreeEntry>)> = candidates
        .into_iter()
        .map(|(path, now)| {
            let after = now.map(|fp| observe(root, &path, fp, blobs, cfg));
            (path, after)
        })
        .collect();
    let changes = changes_between(tree, &updates);
    (updates, changes)
}

/// The content changes from the stored `tree` to the observed `updates` (a path whose
/// mode and kept content are equal did not change).
pub(super) fn changes_between(
    tree: &BTreeMap<String, TreeEntry>,
    updates: &[(String, Option<TreeEntry>)],
) -> Vec<FileChange> {
    let mut changes = Vec::new();
    for (path, after) in updates {
        let before = tree.get(path);
        let same = match (before, after) {
            (Some(b), Some(a)) => b.mode == a.mode && b.blob.is_some() && b.blob == a.blob,
            (None, None) => true,
            _ => false,
        };
        if !same {
            changes.push(FileChange {
                path: path.clone(),
                before_mode: before.map(|b| b.mode),
                before_blob: before.and_then(|b| b.blob.clone()),
                after_mode: after.as_ref().map(|a| a.mode),
                after_blob: after.as_ref().and_then(|a| a.blob.clone()),
                note: after
                    .as_ref()
                    .and_then(|a| a.note.clone())
                    .or_else(|| before.and_then(|b| b.note.clone())),
            });
        }
    }
    changes
}

/// The stored entry of one walked path: its content kept when it is a regular file
/// within `max_file_bytes`.
pub(super) fn observe(
    root: &Path,
    path: &str,
    fp: Fingerprint,
    blobs: &BlobStore,
    cfg: &Checkpoints,
) -> TreeEntry {
    let entry = |blob: Option<String>, note: Option<String>| TreeEntry {
        fingerprint: fp,
        mode: fp.mode,
        blob,
        note,
    };
    match fp.mode & S_IFMT {
        S_IFREG => {}
        // A symlink is kept as its target's bytes (undo makes the link again, never
        // following it).
        S_IFLNK => {
            use std::os::unix::ffi::OsStrExt;
            return match std::fs::read_link(root.join(path)) {
                Ok(target) => match blobs.put(target.as_os_str().as_bytes()) {
                    Ok(id) => entry(Some(id), None),
                    Err(err) => entry(None, Some(format!("not stored: {err:#}"))),
                },
                Err(err) => entry(None, Some(format!("unreadable link: {err}"))),
            };
        }
        _ => return entry(None, Some("not a regular file: not kept".into())),
    }
    if fp.size > cfg.max_file_bytes {
        return entry(
            None,
            Some(format!(
                "{} bytes, over checkpoints.max_file_bytes ({}): not kept",
                fp.size, cfg.max_file_bytes
            )),
        );
    }
    let full: PathBuf = root.join(path);
    match crate::atomic::read_regular(&full).map_err(anyhow::Error::from) {
        Ok(bytes) => match blobs.put(&bytes) {
            Ok(id) => entry(Some(id), None),
            Err(err) => entry(None, Some(format!("not stored: {err:#}"))),
        },
        Err(err) => entry(None, Some(format!("unreadable: {err:#}"))),
    }
}

/// Prunes by the store's policy: checkpoints older than `keep_days` go, then the oldest
/// while the blobs exceed `max_bytes`, each time with the blobs nobody refers to any more;
/// open checkpoints stay. `added`: the bytes of new blobs since the last prune. The store's
/// size is kept as a running count (the setting `blob_bytes`), measured again only when
/// something was pruned or the count passes the cap, so a call costs the same however
/// long the history is.
pub fn prune(session: &Session, added: u64) -> Result<()> {
    let cfg = session.config.checkpoints;
    let blobs = blobs(session);
    let cutoff = crate::events::unix_millis() as i64
        - i64::try_from(cfg.keep_days.saturating_mul(86_400_000)).unwrap_or(i64::MAX);
    session.state.write(|store| {
        let expired = store.checkpoints_before(cutoff)?;
        let counted = store
            .checkpoint_setting("blob_bytes")?
            .and_then(|v| v.parse::<u64>().ok());
        let mut total = match counted {
            Some(total) if expired.is_empty() => total.saturating_add(added),
            _ => {
                store.delete_checkpoints(&expired)?;
                if !expired.is_empty() {
                    collect_garbage(store, &blobs)?;
                }
                blobs.total_bytes()?
            }
        };
        if total > cfg.max_bytes {
            total = blobs.total_bytes()?;
            while total > cfg.max_bytes {
                let Some(oldest) = store.oldest_done()? else {
                    break;
                };
                store.delete_checkpoints(&[oldest])?;
                collect_garbage(store, &blobs)?;
                total = blobs.total_bytes()?;
            }
        }
        store.set_checkpoint_setting("blob_bytes", &total.to_string())
    })
}

/// Removes every blob neither the stored tree nor a checkpoint refers to (temporary files
/// of writers still running start with a dot and are left alone).
fn collect_garbage(store: &Store, blobs: &BlobStore) -> Result<()> {
    let referenced = store.referenced_blobs()?;
    for id in blobs.ids()? {
        if !referenced.contains(&id) {
            blobs.remove(&id)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_checkpoint_shows_one_line_of_the_command_at_most_200_bytes() {
        assert_eq!(shown_command("make\nmake install"), "make make install");
        let long = "é".repeat(150);
        let shown = shown_command(&long);
        assert!(shown.len() <= 200 + '…'.len_utf8(), "{}", shown.len());
        assert!(shown.ends_with('…'));
    }

    #[test]
    fn a_later_change_of_a_path_goes_to_the_newest_checkpoint_that_changed_it() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join(".tinytool/state.db"), dir.path()).unwrap();
        let new = NewCheckpoint {
            kind: "call",
            session_id: "s",
            call_id: None,
            tool: "bash",
            command: "x",
            reverts: None,
            overlaps: "",
            files: None,
        };
        let older = store.open_checkpoint(&[], &new).unwrap();
        let newer = store.open_checkpoint(&[], &new).unwrap();
        let change = |path: &str, before: &str, after: &str| FileChange {
            path: path.into(),
            before_mode: Some(0o100644),
            before_blob: Some(before.into()),
            after_mode: Some(0o100644),
            after_blob: Some(after.into()),
            note: None,
        };
        // The newer call's window recorded f's first change (it was observed there)...
        store
            .extend_checkpoint(newer, &[change("f", "b1", "b2")])
            .unwrap();
        // ...so the older call, closing later, leaves f's next change to it.
        let own = assign(
            &mut store,
            older,
            vec![change("f", "b2", "b3"), change("g", "c1", "c2")],
        )
        .unwrap();
        assert_eq!(own.len(), 1);
        assert_eq!(own[0].path, "g");
        let f = store.checkpoint_changes(newer).unwrap();
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].before_blob.as_deref(), Some("b1"));
        assert_eq!(f[0].after_blob.as_deref(), Some("b3"));
    }

    #[test]
    fn a_changed_file_is_recorded_with_before_and_after_and_a_big_one_is_noted() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::write(root.join("a.txt"), "one").unwrap();
        std::fs::write(root.join("big"), vec![0u8; 100]).unwrap();
        let blobs = BlobStore::new(&root.join(".tinytool"));
        let cfg = Checkpoints {
            max_file_bytes: 50,
            ..Checkpoints::default()
        };
        let first: Vec<_> = walk::files(root)
            .unwrap()
            .into_iter()
            .map(|(path, fp)| (path, Some(fp)))
            .collect();
        let (updates, changes) = observe_changes(root, &blobs, &cfg, &BTreeMap::new(), first);
        assert_eq!(changes.len(), 2);
        let tree: BTreeMap<String, TreeEntry> = updates
            .into_iter()
            .filter_map(|(p, e)| e.map(|e| (p, e)))
            .collect();
        assert!(tree["big"].blob.is_none());
        assert!(
            tree["big"]
                .note
                .as_deref()
                .unwrap()
                .contains("max_file_bytes")
        );
        std::fs::write(root.join("a.txt"), "two!").unwrap();
        let second = walk::files(root).unwrap();
        let candidates = walk::differing(&tree, &second, |e| &e.fingerprint);
        let (_, changes) = observe_changes(root, &blobs, &cfg, &tree, candidates);
        assert_eq!(changes.len(), 1);
        let change = &changes[0];
        assert_eq!(change.path, "a.txt");
        assert_eq!(
            blobs.get(change.before_blob.as_ref().unwrap()).unwrap(),
            b"one"
        );
        assert_eq!(
            blobs.get(change.after_blob.as_ref().unwrap()).unwrap(),
            b"two!"
        );
    }
}
