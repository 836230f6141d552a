//! The checkpoints' statements (the tables are created by migrations 2 and 5).
//!
//! `checkpoint_files` is the tree as the last walk saw it: per path its fingerprint (JSON
//! of [`Fingerprint`]), mode, and the blob of its content (NULL with a `note` when the
//! content was not kept). `checkpoints` has one row per checkpoint: `kind` `call`, `undo`
//! or `outside` (changes no call made), `scope` `project` (what a walk saw) or `files` (the
//! files a file tool named), `status` `open` (the call is running, or its process died) or
//! `done`, `reverts` (an undo: the checkpoint it reverted) and `undone_by` (the undo that
//! reverted it). `checkpoint_changes` has one row per path a checkpoint changed: mode and
//! blob before and after, a NULL mode meaning "absent". `checkpoint_claims` holds the files
//! an open `files` checkpoint claims (walks leave them to it). `checkpoint_settings` holds
//! project-wide facts (`off`: why checkpoints are off for the project; `baseline`: the
//! first walk is stored; `tree`: the stored tree's generation, see
//! [`Store::tree_generation`]).

use std::collections::{BTreeMap, HashSet};

use anyhow::Result;
use rusqlite::{OptionalExtension, params};

use super::Store;
use crate::fingerprint::Fingerprint;

/// One path of the stored tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeEntry {
    /// What the last walk saw.
    pub fingerprint: Fingerprint,
    /// Its `st_mode`.
    pub mode: u32,
    /// The blob of its content; `None` when not kept.
    pub blob: Option<String>,
    /// Why the content was not kept.
    pub note: Option<String>,
}

/// What one checkpoint did to one path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileChange {
    /// The `/`-separated path relative to the project.
    pub path: String,
    /// Mode before; `None` when the path was absent.
    pub before_mode: Option<u32>,
    /// Content before; `None` when absent or not kept.
    pub before_blob: Option<String>,
    /// Mode after; `None` when the path is absent after.
    pub after_mode: Option<u32>,
    /// Content after; `None` when absent or not kept.
    pub after_blob: Option<String>,
    /// Why a content was not kept.
    pub note: Option<String>,
}

/// One checkpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckpointRow {
    /// Its id (increasing).
    pub id: i64,
    /// `call`, `undo`, or `outside` (changes no call made, seen between calls).
    pub kind: String,
    /// The session of the call.
    pub session_id: String,
    /// The caller's call id, when it had one.
    pub call_id: Option<String>,
    /// The tool (`undo` for an undo).
    pub tool: String,
    /// The command or the paths, in words.
    pub command: String,
    /// Milliseconds since the epoch.
    pub time_created: i64,
    /// `open` or `done`.
    pub status: String,
    /// The process that took it.
    pub pid: i64,
    /// An undo: the checkpoint it reverted.
    pub reverts: Option<i64>,
    /// The undo that reverted this checkpoint.
    pub undone_by: Option<i64>,
    /// Checkpoints whose window overlapped this one's, comma-separated ids.
    pub overlaps: String,
    /// `project` (what a walk saw change) or `files` (the files a file tool named, claimed
    /// while it ran).
    pub scope: String,
    /// The folders checkpoints do not keep that the call changed, in words (`node_modules/
    /// (installed packages)`, comma-separated; empty: none).
    pub left_out: String,
}

/// A checkpoint about to be opened.
#[derive(Debug, Clone)]
pub struct NewCheckpoint<'a> {
    /// `call`, `undo`, or `outside` (changes no call made, seen between calls).
    pub kind: &'a str,
    /// The session.
    pub session_id: &'a str,
    /// The caller's call id.
    pub call_id: Option<&'a str>,
    /// The tool.
    pub tool: &'a str,
    /// The command or paths.
    pub command: &'a str,
    /// An undo: what it reverts.
    pub reverts: Option<i64>,
    /// Ids of checkpoints still open in live processes.
    pub overlaps: &'a str,
    /// The files the call may change (a file tool's), claimed until it closes; `None`: a
    /// walk of the project tells what it changed.
    pub files: Option<&'a [String]>,
}

const ROW_COLUMNS: &str = "id, kind, session_id, call_id, tool, command, time_created, status, \
     pid, reverts, undone_by, overlaps, scope, left_out";

fn row(r: &rusqlite::Row) -> rusqlite::Result<CheckpointRow> {
    Ok(CheckpointRow {
        id: r.get(0)?,
        kind: r.get(1)?,
        session_id: r.get(2)?,
        call_id: r.get(3)?,
        tool: r.get(4)?,
        command: r.get(5)?,
        time_created: r.get(6)?,
        status: r.get(7)?,
        pid: r.get(8)?,
        reverts: r.get(9)?,
        undone_by: r.get(10)?,
        overlaps: r.get(11)?,
        scope: r.get(12)?,
        left_out: r.get(13)?,
    })
}

const CHANGE_COLUMNS: &str = "path, before_mode, before_blob, after_mode, after_blob, note";

fn change(r: &rusqlite::Row) -> rusqlite::Result<FileChange> {
    Ok(FileChange {
        path: r.get(0)?,
        before_mode: r.get(1)?,
        before_blob: r.get(2)?,
        after_mode: r.get(3)?,
        after_blob: r.get(4)?,
        note: r.get(5)?,
    })
}

/// Writes tree updates (`None` removes the path) inside a transaction. `walked`: the
/// updates come from a walk, and start a new generation; the updates of named files (a
/// file tool's checkpoint) keep it, since a walk that trusts the cache reports every file
/// whose fingerprint differs from the cache's, and the stored entry then tells that the
/// file was recorded already.
fn update_tree(
    tx: &rusqlite::Transaction,
    updates: &[(String, Option<TreeEntry>)],
    walked: bool,
) -> rusqlite::Result<()> {
    let mut put = tx.prepare_cached(
        "INSERT OR REPLACE INTO checkpoint_files (path, fingerprint, mode, blob, note)
         VALUES (?1, ?2, ?3, ?4, ?5)",
    )?;
    let mut delete = tx.prepare_cached("DELETE FROM checkpoint_files WHERE path = ?1")?;
    if walked && !updates.is_empty() {
        // A new generation: a walk cache saved for the old one no longer stands for the
        // tree (see `Store::tree_generation`).
        tx.execute(
            "INSERT OR REPLACE INTO checkpoint_settings (key, value) VALUES ('tree', ?1)",
            params![new_generation().to_string()],
        )?;
    }
    for (path, entry) in updates {
        match entry {
            Some(e) => {
                let fp = serde_json::to_string(&e.fingerprint).unwrap_or_default();
                put.execute(params![path, fp, e.mode, e.blob, e.note])?;
            }
            None => {
                delete.execute(params![path])?;
            }
        }
    }
    Ok(())
}

/// A random, nonzero tree generation (random rather than counted, so a database copied
/// back from elsewhere never matches a cache saved for another tree).
fn new_generation() -> u64 {
    let mut bytes = [0u8; 8];
    // SAFETY: getrandom writes at most `bytes.len()` bytes into the buffer.
    let n = unsafe { libc::getrandom(bytes.as_mut_ptr().cast(), bytes.len(), 0) };
    let random = u64::from_le_bytes(bytes);
    if n == 8 && random != 0 {
        return random;
    }
    // No randomness (never on Linux ≥ 3.17): the clock and the process id will do.
    let clock = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(1, |d| d.as_nanos() as u64);
    (clock ^ (u64::from(std::process::id()) << 32)) | 1
}

/// The fingerprint stored as JSON; an unreadable one reads as "changed", so the path is
/// looked at again.
fn parse_fingerprint(text: &str) -> Fingerprint {
    serde_json::from_str(text).unwrap_or(Fingerprint {
        size: u64::MAX,
        mtime_ns: 0,
        ino: 0,
        ctime_ns: 0,
        mode: 0,
    })
}

/// Records changes of checkpoint `id`; a path it already changed keeps its earlier
/// before-state and takes the new after-state.
fn add_changes(
    tx: &rusqlite::Transaction,
    id: i64,
    changes: &[FileChange],
) -> rusqlite::Result<()> {
    let mut put = tx.prepare_cached(
        "INSERT INTO checkpoint_changes (checkpoint_id, path, before_mode, before_blob,
         after_mode, after_blob, note) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
         ON CONFLICT (checkpoint_id, path) DO UPDATE SET after_mode = excluded.after_mode,
         after_blob = excluded.after_blob, note = coalesce(excluded.note, note)",
    )?;
    for c in changes {
        put.execute(params![
            id,
            c.path,
            c.before_mode,
            c.before_blob,
            c.after_mode,
            c.after_blob,
            c.note
        ])?;
    }
    Ok(())
}

impl Store {
    /// The stored tree by path.
    pub fn checkpoint_tree(&self) -> Result<BTreeMap<String, TreeEntry>> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT path, fingerprint, mode, blob, note FROM checkpoint_files")?;
        let rows = stmt.query_map([], |r| {
            let fp: String = r.get(1)?;
            Ok((r.get::<_, String>(0)?, fp, r.get(2)?, r.get(3)?, r.get(4)?))
        })?;
        let mut tree = BTreeMap::new();
        for item in rows {
            let (path, fp, mode, blob, note) = item?;
            let fingerprint = parse_fingerprint(&fp);
            tree.insert(
                path,
                TreeEntry {
                    fingerprint,
                    mode,
                    blob,
                    note,
                },
            );
        }
        Ok(tree)
    }

    /// The stored entries of `paths` (those the tree holds), by path: what a walk that
    /// reported only differences needs, instead of the whole tree.
    pub fn checkpoint_entries<'a>(
        &self,
        paths: impl IntoIterator<Item = &'a String>,
    ) -> Result<BTreeMap<String, TreeEntry>> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT fingerprint, mode, blob, note FROM checkpoint_files WHERE path = ?1",
        )?;
        let mut entries = BTreeMap::new();
        for path in paths {
            let entry = stmt
                .query_row(params![path], |r| {
                    let fp: String = r.get(0)?;
                    Ok(TreeEntry {
                        fingerprint: parse_fingerprint(&fp),
                        mode: r.get(1)?,
                        blob: r.get(2)?,
                        note: r.get(3)?,
                    })
                })
                .optional()?;
            if let Some(entry) = entry {
                entries.insert(path.clone(), entry);
            }
        }
        Ok(entries)
    }

    /// The stored tree's generation: a random number that changes with every update of
    /// the tree, so a walk cache saved for it (`tree::listing`) is known to
    /// hold the same fingerprints. Set on first use.
    pub fn tree_generation(&mut self) -> Result<u64> {
        let current = self
            .checkpoint_setting("tree")?
            .and_then(|v| v.parse::<u64>().ok())
            .filter(|&g| g != 0);
        match current {
            Some(generation) => Ok(generation),
            None => {
                let generation = new_generation();
                self.set_checkpoint_setting("tree", &generation.to_string())?;
                Ok(generation)
            }
        }
    }

    /// Checkpoints still open (their calls running, or their processes dead), newest
    /// first.
    pub fn open_checkpoints(&self) -> Result<Vec<CheckpointRow>> {
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT {ROW_COLUMNS} FROM checkpoints WHERE status = 'open' ORDER BY id DESC"
        ))?;
        let rows = stmt.query_map([], row)?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// A project-wide checkpoint setting.
    pub fn checkpoint_setting(&self, key: &str) -> Result<Option<String>> {
        Ok(self
            .conn
            .query_row(
                "SELECT value FROM checkpoint_settings WHERE key = ?1",
                params![key],
                |r| r.get(0),
            )
            .optional()?)
    }

    /// Sets a project-wide checkpoint setting.
    pub fn set_checkpoint_setting(&mut self, key: &str, value: &str) -> Result<()> {
        self.write(|tx| {
            tx.execute(
                "INSERT OR REPLACE INTO checkpoint_settings (key, value) VALUES (?1, ?2)",
                params![key, value],
            )
        })?;
        Ok(())
    }

    /// Applies tree updates and opens a checkpoint, in one transaction; returns its id.
    pub fn open_checkpoint(
        &mut self,
        updates: &[(String, Option<TreeEntry>)],
        new: &NewCheckpoint,
    ) -> Result<i64> {
        let now = super::unix_millis() as i64;
        self.write(|tx| {
            update_tree(tx, updates, new.files.is_none())?;
            tx.execute(
                "INSERT INTO checkpoints (kind, session_id, call_id, tool, command, time_created,
                 status, pid, reverts, overlaps, scope)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'open', ?7, ?8, ?9, ?10)",
                params![
                    new.kind,
                    new.session_id,
                    new.call_id,
                    new.tool,
                    new.command,
                    now,
                    i64::from(std::process::id()),
                    new.reverts,
                    new.overlaps,
                    if new.files.is_some() {
                        "files"
                    } else {
                        "project"
                    }
                ],
            )?;
            let id = tx.last_insert_rowid();
            let mut claim = tx.prepare_cached(
                "INSERT OR IGNORE INTO checkpoint_claims (checkpoint_id, path) VALUES (?1, ?2)",
            )?;
            for path in new.files.unwrap_or_default() {
                claim.execute(params![id, path])?;
            }
            Ok(id)
        })
    }

    /// Applies tree updates and closes checkpoint `id` with its changes, in one
    /// transaction; a checkpoint without changes is removed. Returns whether it was kept.
    pub fn close_checkpoint(
        &mut self,
        id: i64,
        updates: &[(String, Option<TreeEntry>)],
        changes: &[FileChange],
    ) -> Result<bool> {
        self.write(|tx| {
            let scope: String = tx.query_row(
                "SELECT scope FROM checkpoints WHERE id = ?1",
                params![id],
                |r| r.get(0),
            )?;
            update_tree(tx, updates, scope != "files")?;
            add_changes(tx, id, changes)?;
            tx.execute(
                "DELETE FROM checkpoint_claims WHERE checkpoint_id = ?1",
                params![id],
            )?;
            let count: i64 = tx.query_row(
                "SELECT COUNT(*) FROM checkpoint_changes WHERE checkpoint_id = ?1",
                params![id],
                |r| r.get(0),
            )?;
            let left_out: String = tx.query_row(
                "SELECT left_out FROM checkpoints WHERE id = ?1",
                params![id],
                |r| r.get(0),
            )?;
            if count == 0 && left_out.is_empty() {
                tx.execute("DELETE FROM checkpoints WHERE id = ?1", params![id])?;
                return Ok(false);
            }
            tx.execute(
                "UPDATE checkpoints SET status = 'done' WHERE id = ?1",
                params![id],
            )?;
            Ok(true)
        })
    }

    /// Applies tree updates and adds changes to the still open checkpoint `id` (what
    /// another process's walk saw happen while that call ran), in one transaction.
    pub fn add_to_open_checkpoint(
        &mut self,
        id: i64,
        updates: &[(String, Option<TreeEntry>)],
        changes: &[FileChange],
    ) -> Result<()> {
        self.write(|tx| {
            update_tree(tx, updates, true)?;
            add_changes(tx, id, changes)
        })
    }

    /// The newest checkpoint that changed `path`, if any.
    pub fn last_change_of(&self, path: &str) -> Result<Option<i64>> {
        Ok(self.conn.query_row(
            "SELECT MAX(checkpoint_id) FROM checkpoint_changes WHERE path = ?1",
            params![path],
            |r| r.get(0),
        )?)
    }

    /// Adds changes to checkpoint `id`, open or done (see `checkpoints::record`: a
    /// path's later changes go to the newest checkpoint that changed it).
    pub fn extend_checkpoint(&mut self, id: i64, changes: &[FileChange]) -> Result<()> {
        self.write(|tx| add_changes(tx, id, changes))
    }

    /// Applies tree updates only (a person's edits seen by a walk, or a first baseline;
    /// `walked` false: seen by a file tool's checkpoint in the files it names).
    pub fn update_checkpoint_tree(
        &mut self,
        updates: &[(String, Option<TreeEntry>)],
        walked: bool,
    ) -> Result<()> {
        self.write(|tx| update_tree(tx, updates, walked))
    }

    /// Removes the records of `paths` from checkpoint `id` (a file tool's files it did
    /// not change after all).
    pub fn remove_changes(&mut self, id: i64, paths: &[String]) -> Result<()> {
        self.write(|tx| {
            let mut delete = tx.prepare_cached(
                "DELETE FROM checkpoint_changes WHERE checkpoint_id = ?1 AND path = ?2",
            )?;
            for path in paths {
                delete.execute(params![id, path])?;
            }
            Ok(())
        })
    }

    /// The files claimed by open checkpoints: (checkpoint id, its process, path).
    pub fn checkpoint_claims(&self) -> Result<Vec<(i64, i64, String)>> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT c.checkpoint_id, k.pid, c.path FROM checkpoint_claims c
             JOIN checkpoints k ON k.id = c.checkpoint_id WHERE k.status = 'open'",
        )?;
        let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Checkpoints, newest first; only `session`'s when given; open ones too.
    pub fn checkpoints(&self, session: Option<&str>) -> Result<Vec<CheckpointRow>> {
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT {ROW_COLUMNS} FROM checkpoints WHERE ?1 IS NULL OR session_id = ?1
             ORDER BY id DESC"
        ))?;
        let rows = stmt.query_map(params![session], row)?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// At most `limit` checkpoints older than `before` (all when `None`), newest first;
    /// only `session`'s when given: a page of the history, at the same cost however long
    /// it is.
    pub fn checkpoints_page(
        &self,
        session: Option<&str>,
        before: Option<i64>,
        limit: usize,
    ) -> Result<Vec<CheckpointRow>> {
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT {ROW_COLUMNS} FROM checkpoints
             WHERE (?1 IS NULL OR session_id = ?1) AND (?2 IS NULL OR id < ?2)
             ORDER BY id DESC LIMIT ?3"
        ))?;
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let rows = stmt.query_map(params![session, before, limit], row)?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// The newest finished checkpoint of kind `call` nobody has undone that changed files
    /// (the default target of an undo).
    pub fn newest_undoable(&self) -> Result<Option<CheckpointRow>> {
        Ok(self
            .conn
            .query_row(
                &format!(
                    "SELECT {ROW_COLUMNS} FROM checkpoints WHERE kind = 'call' AND status = \
                     'done' AND undone_by IS NULL AND EXISTS (SELECT 1 FROM checkpoint_changes \
                     c WHERE c.checkpoint_id = checkpoints.id) ORDER BY id DESC LIMIT 1"
                ),
                [],
                row,
            )
            .optional()?)
    }

    /// The finished calls newer than `id` that changed only folders checkpoints do not
    /// keep, oldest first (an undo of `id` passes over them).
    pub fn passed_over(&self, id: i64) -> Result<Vec<CheckpointRow>> {
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT {ROW_COLUMNS} FROM checkpoints WHERE id > ?1 AND kind = 'call' AND status = \
             'done' AND undone_by IS NULL AND left_out != '' AND NOT EXISTS (SELECT 1 FROM \
             checkpoint_changes c WHERE c.checkpoint_id = checkpoints.id) ORDER BY id"
        ))?;
        let rows = stmt.query_map(params![id], row)?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Records the folders checkpoints do not keep that checkpoint `id`'s call changed.
    pub fn set_left_out(&mut self, id: i64, left_out: &str) -> Result<()> {
        self.write(|tx| {
            tx.execute(
                "UPDATE checkpoints SET left_out = ?2 WHERE id = ?1",
                params![id, left_out],
            )
        })?;
        Ok(())
    }

    /// The checkpoints whose window overlapped `id`'s: those it lists, and the later ones
    /// that list it.
    pub fn overlapping(&self, id: i64) -> Result<Vec<i64>> {
        let listed: String = self
            .conn
            .query_row(
                "SELECT overlaps FROM checkpoints WHERE id = ?1",
                params![id],
                |r| r.get(0),
            )
            .optional()?
            .unwrap_or_default();
        let mut ids: Vec<i64> = listed.split(',').filter_map(|s| s.parse().ok()).collect();
        // Only a checkpoint opened while `id` was open lists it: a later id.
        let mut stmt = self.conn.prepare_cached(
            "SELECT id FROM checkpoints WHERE id > ?1 AND overlaps != ''
             AND (',' || overlaps || ',') LIKE ('%,' || ?1 || ',%')",
        )?;
        for later in stmt.query_map(params![id], |r| r.get::<_, i64>(0))? {
            ids.push(later?);
        }
        Ok(ids)
    }

    /// Finished checkpoints created before `cutoff` (milliseconds), oldest first.
    pub fn checkpoints_before(&self, cutoff: i64) -> Result<Vec<i64>> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT id FROM checkpoints WHERE time_created < ?1 AND status = 'done' ORDER BY id",
        )?;
        let rows = stmt.query_map(params![cutoff], |r| r.get(0))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// The oldest finished checkpoint.
    pub fn oldest_done(&self) -> Result<Option<i64>> {
        Ok(self
            .conn
            .query_row(
                "SELECT id FROM checkpoints WHERE status = 'done' ORDER BY id LIMIT 1",
                [],
                |r| r.get(0),
            )
            .optional()?)
    }

    /// One checkpoint.
    pub fn checkpoint(&self, id: i64) -> Result<Option<CheckpointRow>> {
        Ok(self
            .conn
            .query_row(
                &format!("SELECT {ROW_COLUMNS} FROM checkpoints WHERE id = ?1"),
                params![id],
                row,
            )
            .optional()?)
    }

    /// What checkpoint `id` changed, in path order.
    pub fn checkpoint_changes(&self, id: i64) -> Result<Vec<FileChange>> {
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT {CHANGE_COLUMNS} FROM checkpoint_changes WHERE checkpoint_id = ?1
             ORDER BY path"
        ))?;
        let rows = stmt.query_map(params![id], change)?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// The changes of `path` by closed checkpoints from `id` on, oldest first.
    pub fn path_changes_since(&self, path: &str, id: i64) -> Result<Vec<(i64, FileChange)>> {
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT c.checkpoint_id, {} FROM checkpoint_changes c
             JOIN checkpoints k ON k.id = c.checkpoint_id
             WHERE c.path = ?1 AND c.checkpoint_id >= ?2 AND k.status = 'done'
             ORDER BY c.checkpoint_id",
            CHANGE_COLUMNS
                .split(", ")
                .map(|c| format!("c.{c}"))
                .collect::<Vec<_>>()
                .join(", ")
        ))?;
        let rows = stmt.query_map(params![path, id], |r| {
            let id: i64 = r.get(0)?;
            Ok((
                id,
                FileChange {
                    path: r.get(1)?,
                    before_mode: r.get(2)?,
                    before_blob: r.get(3)?,
                    after_mode: r.get(4)?,
                    after_blob: r.get(5)?,
                    note: r.get(6)?,
                },
            ))
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Sets (or clears) who undid checkpoint `id`.
    pub fn set_undone_by(&mut self, id: i64, by: Option<i64>) -> Result<()> {
        self.write(|tx| {
            tx.execute(
                "UPDATE checkpoints SET undone_by = ?2 WHERE id = ?1",
                params![id, by],
            )
        })?;
        Ok(())
    }

    /// Removes checkpoints and their changes (pruning).
    pub fn delete_checkpoints(&mut self, ids: &[i64]) -> Result<()> {
        self.write(|tx| {
            for id in ids {
                tx.execute(
                    "DELETE FROM checkpoint_changes WHERE checkpoint_id = ?1",
                    params![id],
                )?;
                tx.execute(
                    "DELETE FROM checkpoint_claims WHERE checkpoint_id = ?1",
                    params![id],
                )?;
                tx.execute("DELETE FROM checkpoints WHERE id = ?1", params![id])?;
            }
            Ok(())
        })
    }

    /// Every blob the stored tree or a checkpoint refers to.
    pub fn referenced_blobs(&self) -> Result<HashSet<String>> {
        let mut blobs = HashSet::new();
        for sql in [
            "SELECT blob FROM checkpoint_files WHERE blob IS NOT NULL",
            "SELECT before_blob FROM checkpoint_changes WHERE before_blob IS NOT NULL",
            "SELECT after_blob FROM checkpoint_changes WHERE after_blob IS NOT NULL",
        ] {
            let mut stmt = self.conn.prepare_cached(sql)?;
            for blob in stmt.query_map([], |r| r.get::<_, String>(0))? {
                blobs.insert(blob?);
            }
        }
        Ok(blobs)
    }
}

impl Store {
    /// Makes process `pid` the owner of the still open checkpoint `id` (the supervisor of
    /// the monitor or background job the call started: `checkpoints::handoff`); whether
    /// the checkpoint was open.
    pub fn adopt_checkpoint(&mut self, id: i64, pid: i64) -> Result<bool> {
        let changed = self.write(|tx| {
            tx.execute(
                "UPDATE checkpoints SET pid = ?2 WHERE id = ?1 AND status = 'open'",
                params![id, pid],
            )
        })?;
        Ok(changed == 1)
    }
}
