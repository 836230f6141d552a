//! Checkpoints of the files a call names (a file tool's, an undo's): exactly what that
//! call changed, whatever runs beside it.
//!
//! A walk of the project sees everybody's changes: two calls running at once would each
//! record the other's. A file tool knows the files it may change, so its checkpoint covers
//! those and nothing else:
//!
//! 1. [`begin`] *claims* the files (rows of `checkpoint_claims`, under the checkpoint lock)
//!    and records what each holds now as the provisional before-and-after of the
//!    checkpoint. A file another running call has claimed is waited for (up to
//!    [`CLAIM_WAIT`]), so two calls changing one file take turns and each records its own
//!    change. A kept file that differs from the stored tree was changed between calls: it
//!    goes where a walk would put it (a running command's checkpoint, else only the tree).
//! 2. The tool runs. Every walk of the project meanwhile leaves claimed files alone: a
//!    command running beside it does not record the file tool's change.
//! 3. [`finish_locked`] (from `record::finish`) reads the files again, records those that changed (their before-state
//!    stays the one of step 1), updates the stored tree for the files walks keep
//!    ([`crate::tree::left_out`]) and releases the claims, in one transaction.
//!
//! A process that dies between 1 and 3 leaves its claims with a dead pid: they no longer
//! hold anybody, and the next walk completes the checkpoint the same way (see
//! `record::settle_locked`).

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::Result;

use super::record::{self, Began, Open};
use crate::session::Session;
use crate::state::{FileChange, NewCheckpoint, Store, TreeEntry};

/// How long [`begin`] waits for another running call to release a file it claimed.
pub const CLAIM_WAIT: Duration = Duration::from_secs(20);

/// The checkpoint around a call that changes only `files` (relative, clean paths inside
/// the project); waits for other calls' claims on them (module doc).
pub fn begin(session: &Session, new: NewCheckpoint, files: &[String]) -> Began {
    if !session.config.checkpoints.enabled {
        return Began::Skipped;
    }
    if files.is_empty() {
        return Began::Skipped;
    }
    let deadline = Instant::now() + CLAIM_WAIT;
    let mut pause = Duration::from_millis(1);
    loop {
        let _lock = match record::lock(&session.dir) {
            Ok(lock) => lock,
            Err(err) => return Began::Notice(format!("checkpoint not taken: {err:#}")),
        };
        let busy = match session.state.read(|store| busy_claim(store, files, None)) {
            Ok(busy) => busy.flatten(),
            Err(err) => return Began::Notice(format!("checkpoint not taken: {err:#}")),
        };
        match busy {
            None => {
                return match begin_locked(session, new, files) {
                    Ok(began) => began,
                    Err(err) => Began::Notice(format!("checkpoint not taken: {err:#}")),
                };
            }
            Some((id, path)) if Instant::now() >= deadline => {
                return Began::Notice(format!(
                    "checkpoint not taken: {path} has been changing under checkpoint {id} \
                     for {} s (another call that is still running)",
                    CLAIM_WAIT.as_secs()
                ));
            }
            Some(_) => {}
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(50));
    }
}

/// A claim on one of `files` by an open checkpoint of a live process other than
/// `except`: (its id, the path).
pub fn busy_claim(
    store: &Store,
    files: &[String],
    except: Option<i64>,
) -> Result<Option<(i64, String)>> {
    Ok(store
        .checkpoint_claims()?
        .into_iter()
        .find(|(id, pid, path)| {
            Some(*id) != except && record::pid_alive(*pid) && files.contains(path)
        })
        .map(|(id, _, path)| (id, path)))
}

/// [`begin`] with the lock held and no claim in the way.
pub fn begin_locked(session: &Session, new: NewCheckpoint, files: &[String]) -> Result<Began> {
    let cfg = session.config.checkpoints;
    let blobs = record::blobs(session).deferred();
    let not_project = session.config.not_project_for_checkpoints();
    let now: Vec<(String, Option<TreeEntry>)> = files
        .iter()
        .map(|path| (path.clone(), look(&session.dir, path, &blobs, &cfg)))
        .collect();
    blobs.sync()?;
    let kept: Vec<String> = files
        .iter()
        .filter(|path| crate::tree::left_out(&session.dir, path, &not_project).is_none())
        .cloned()
        .collect();
    let id = session.state.write(|store| {
        if let Some(off) = store.checkpoint_setting("off")? {
            return Ok(Err(off));
        }
        // Kept files that differ from the stored tree changed between calls.
        let stored = store.checkpoint_entries(kept.iter())?;
        let between: Vec<(String, Option<TreeEntry>)> = now
            .iter()
            .filter(|(path, entry)| {
                kept.contains(path)
                    && stored.get(path).map(|e| e.fingerprint)
                        != entry.as_ref().map(|e| e.fingerprint)
            })
            .cloned()
            .collect();
        if !between.is_empty() {
            let changes = record::changes_between(&stored, &between);
            let running = store
                .open_checkpoints()?
                .into_iter()
                .find(|c| c.scope == "project" && record::pid_alive(c.pid));
            match running {
                Some(running) => {
                    store.extend_checkpoint(running.id, &changes)?;
                    store.update_checkpoint_tree(&between, false)?;
                }
                // Before the baseline every file is new to the stored tree.
                None if store.checkpoint_setting("baseline")?.is_none() => {
                    store.update_checkpoint_tree(&between, false)?;
                }
                None => record::record_outside(store, &session.id, &between, &changes, false)?,
            }
        }
        let id = store.open_checkpoint(
            &[],
            &NewCheckpoint {
                files: Some(files),
                ..new
            },
        )?;
        // The provisional record: each file as it is now, before and after.
        let provisional: Vec<FileChange> = now
            .iter()
            .map(|(path, entry)| unchanged(path, entry.as_ref()))
            .collect();
        store.extend_checkpoint(id, &provisional)?;
        Ok(Ok(id))
    })?;
    Ok(match id {
        Err(off) => Began::Notice(off),
        Ok(id) => Began::Open(Open::of_files(id)),
    })
}

/// The provisional change of a file as it is (before = after).
fn unchanged(path: &str, entry: Option<&TreeEntry>) -> FileChange {
    FileChange {
        path: path.to_string(),
        before_mode: entry.map(|e| e.mode),
        before_blob: entry.and_then(|e| e.blob.clone()),
        after_mode: entry.map(|e| e.mode),
        after_blob: entry.and_then(|e| e.blob.clone()),
        note: entry.and_then(|e| e.note.clone()),
    }
}

/// What `path` is now, stored (`None`: absent, or not a file the project can hold).
fn look(
    root: &Path,
    path: &str,
    blobs: &super::store::BlobStore,
    cfg: &crate::config::Checkpoints,
) -> Option<TreeEntry> {
    let meta = crate::beneath::metadata(&root.join(path), false).ok()?;
    if meta.is_dir() {
        return None;
    }
    let fp = crate::tree::fingerprint(&meta);
    Some(record::observe(root, path, fp, blobs, cfg))
}

/// Closes the files checkpoint `id` with the lock held: what changed in its files since
/// [`begin`], the stored tree updated for the kept ones, the claims released.
pub fn finish_locked(session: &Session, id: i64) -> Result<record::Closed> {
    let cfg = session.config.checkpoints;
    let blobs = record::blobs(session).deferred();
    let not_project = session.config.not_project_for_checkpoints();
    let provisional = session
        .state
        .read(|store| store.checkpoint_changes(id))?
        .unwrap_or_default();
    let mut updates = Vec::new();
    let mut changes = Vec::new();
    let mut unchanged_paths = Vec::new();
    for before in &provisional {
        // Only clean relative paths were claimed; one read back that is not is skipped.
        if !crate::paths::is_clean_relative(&before.path) {
            continue;
        }
        let after = look(&session.dir, &before.path, &blobs, &cfg);
        let same = match (&after, before.after_mode) {
            (None, None) => true,
            (Some(a), Some(mode)) => {
                a.mode == mode && a.blob.is_some() && a.blob == before.after_blob
            }
            _ => false,
        };
        if crate::tree::left_out(&session.dir, &before.path, &not_project).is_none() {
            updates.push((before.path.clone(), after.clone()));
        }
        if same {
            unchanged_paths.push(before.path.clone());
        } else {
            changes.push(FileChange {
                path: before.path.clone(),
                before_mode: before.before_mode,
                before_blob: before.before_blob.clone(),
                after_mode: after.as_ref().map(|a| a.mode),
                after_blob: after.as_ref().and_then(|a| a.blob.clone()),
                note: after
                    .as_ref()
                    .and_then(|a| a.note.clone())
                    .or_else(|| before.note.clone()),
            });
        }
    }
    if !changes.is_empty() {
        blobs.sync()?;
    }
    let kept = session.state.write(|store| {
        store.remove_changes(id, &unchanged_paths)?;
        store.close_checkpoint(id, &updates, &changes)
    })?;
    Ok(record::Closed {
        kept,
        changes,
        stored: blobs.stored_bytes(),
        left_out: Vec::new(),
    })
}
