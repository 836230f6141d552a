//! Session state in one SQLite file: every SQL statement of tinytool lives here.
//!
//! The database (`<dir>/.tinytool/state.db` unless `--state` says otherwise) is shared by
//! every tinytool process of a project: WAL journal, a 5 s busy timeout, and
//! `BEGIN IMMEDIATE` for every write transaction (a deferred transaction that reads and then
//! writes fails at once under contention). The schema is versioned with
//! `PRAGMA user_version` and migrated forward on open.
//!
//! The store is opened only when a tool needs it. Policy decisions open it read-only and
//! only when it exists: deciding never creates state. Creating the default database creates
//! `.tinytool/` with its `.gitignore`.
//!
//! Tables: `todos`, `agents` (agent mode and pending switch per session), `approvals`
//! ("always" answers, per project), `answers` (how many answers of the answers file a
//! session used), `notes` (notepad), `findings` (report_findings), `monitors` and
//! `monitor_lines` (monitor: per project, with the lines not read yet), `jobs` (background
//! tasks, per session; their statements are in the submodule `background`). Monitors and
//! jobs record who supervises them; finished ones are pruned after 7 days. `checkpoint_files`, `checkpoints`,
//! `checkpoint_changes` and `checkpoint_settings` are the checkpoints' (their statements
//! are in the submodule `checkpoints`).

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use anyhow::{Context, Result};
use rusqlite::{Connection, OpenFlags, OptionalExtension, TransactionBehavior, params};
use serde::Serialize;

use crate::events::unix_millis;

mod background;
mod checkpoints;
pub use background::{
    Background, Job, Monitor, MonitorSlot, NewJob, NewMonitor, Supervision, UNFINISHED, Unfinished,
};
pub use checkpoints::{CheckpointRow, FileChange, NewCheckpoint, TreeEntry};

/// Schema migrations, applied in order; `user_version` counts the ones applied.
const MIGRATIONS: &[&str] = &[
    // 1: the session tools and the policy.
    "CREATE TABLE todos (
        session_id TEXT NOT NULL,
        position INTEGER NOT NULL,
        content TEXT NOT NULL,
        status TEXT NOT NULL,
        priority TEXT NOT NULL,
        time_created INTEGER NOT NULL,
        time_updated INTEGER NOT NULL,
        PRIMARY KEY (session_id, position)
    );
    CREATE TABLE agents (
        session_id TEXT PRIMARY KEY,
        agent TEXT NOT NULL,
        pending TEXT,
        time_updated INTEGER NOT NULL
    );
    CREATE TABLE approvals (
        permission TEXT NOT NULL,
        pattern TEXT NOT NULL,
        time_created INTEGER NOT NULL,
        PRIMARY KEY (permission, pattern)
    );
    CREATE TABLE answers (
        session_id TEXT PRIMARY KEY,
        used INTEGER NOT NULL
    );
    CREATE TABLE notes (
        session_id TEXT NOT NULL,
        key TEXT NOT NULL,
        content TEXT NOT NULL,
        time_updated INTEGER NOT NULL,
        PRIMARY KEY (session_id, key)
    );
    CREATE TABLE findings (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        session_id TEXT NOT NULL,
        file TEXT NOT NULL,
        line INTEGER,
        severity TEXT,
        category TEXT,
        summary TEXT NOT NULL,
        failure_scenario TEXT,
        level TEXT,
        time_created INTEGER NOT NULL
    );
    CREATE INDEX findings_session ON findings (session_id, id);",
    // 2: monitors (with their unread lines) and background task jobs. A row's supervisor
    // (pid, start time in clock ticks, boot id), its command's process group and the
    // marker token let any later process find out whether the work is still supervised.
    "CREATE TABLE monitors (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        session_id TEXT NOT NULL,
        command TEXT NOT NULL,
        description TEXT NOT NULL,
        status TEXT NOT NULL,
        exit_code INTEGER,
        signal INTEGER,
        error TEXT,
        timeout_ms INTEGER NOT NULL,
        time_created INTEGER NOT NULL,
        deadline INTEGER NOT NULL,
        time_ended INTEGER,
        supervisor_pid INTEGER,
        supervisor_start INTEGER,
        boot_id TEXT,
        pgid INTEGER,
        token TEXT NOT NULL,
        dropped INTEGER NOT NULL DEFAULT 0,
        acknowledged INTEGER NOT NULL DEFAULT 0
    );
    CREATE INDEX monitors_status ON monitors (status);
    CREATE TABLE monitor_lines (
        monitor_id INTEGER NOT NULL,
        seq INTEGER NOT NULL,
        line TEXT NOT NULL,
        PRIMARY KEY (monitor_id, seq)
    );
    CREATE TABLE jobs (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        session_id TEXT NOT NULL,
        subagent_type TEXT NOT NULL,
        description TEXT NOT NULL,
        prompt TEXT NOT NULL,
        command TEXT NOT NULL,
        depth INTEGER NOT NULL,
        status TEXT NOT NULL,
        result TEXT NOT NULL DEFAULT '',
        error TEXT NOT NULL DEFAULT '',
        deadline_ms INTEGER NOT NULL,
        time_created INTEGER NOT NULL,
        deadline INTEGER NOT NULL,
        time_ended INTEGER,
        supervisor_pid INTEGER,
        supervisor_start INTEGER,
        boot_id TEXT,
        pgid INTEGER,
        token TEXT NOT NULL
    );
    CREATE INDEX jobs_session ON jobs (session_id, id);
    CREATE INDEX jobs_status ON jobs (status);",
    // 2: checkpoints: the tree as the last walk saw it, the checkpoints, and
    // what each changed (a NULL mode is "absent", a NULL blob with a mode "not kept").
    "CREATE TABLE checkpoint_files (
        path TEXT PRIMARY KEY,
        fingerprint TEXT NOT NULL,
        mode INTEGER NOT NULL,
        blob TEXT,
        note TEXT
    );
    CREATE TABLE checkpoints (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        kind TEXT NOT NULL,
        session_id TEXT NOT NULL,
        call_id TEXT,
        tool TEXT NOT NULL,
        command TEXT NOT NULL,
        time_created INTEGER NOT NULL,
        status TEXT NOT NULL,
        pid INTEGER NOT NULL,
        reverts INTEGER,
        undone_by INTEGER,
        overlaps TEXT NOT NULL DEFAULT ''
    );
    CREATE INDEX checkpoints_status ON checkpoints (status);
    CREATE TABLE checkpoint_changes (
        checkpoint_id INTEGER NOT NULL,
        path TEXT NOT NULL,
        before_mode INTEGER,
        before_blob TEXT,
        after_mode INTEGER,
        after_blob TEXT,
        note TEXT,
        PRIMARY KEY (checkpoint_id, path)
    );
    CREATE INDEX checkpoint_changes_path ON checkpoint_changes (path, checkpoint_id);
    CREATE TABLE checkpoint_settings (
        key TEXT PRIMARY KEY,
        value TEXT NOT NULL
    );",
    // 4: the `metadata.sandbox` of a monitor's or job's command, one JSON
    // object recorded when it starts, repeated by every later read, stop or lookup.
    "ALTER TABLE monitors ADD COLUMN sandbox TEXT NOT NULL DEFAULT '';
    ALTER TABLE jobs ADD COLUMN sandbox TEXT NOT NULL DEFAULT '';",
    // 5: checkpoints of file tools cover the files they name (`scope` 'files', the
    // files claimed while the call runs, so nobody else's walk records them), the
    // indexes that keep listing and undo independent of the history's length, and the
    // folders checkpoints do not keep that a call changed (`left_out`).
    "ALTER TABLE checkpoints ADD COLUMN scope TEXT NOT NULL DEFAULT 'project';
    CREATE TABLE checkpoint_claims (
        checkpoint_id INTEGER NOT NULL,
        path TEXT NOT NULL,
        PRIMARY KEY (checkpoint_id, path)
    );
    CREATE INDEX checkpoint_claims_path ON checkpoint_claims (path);
    CREATE INDEX checkpoints_session ON checkpoints (session_id, id);
    CREATE INDEX checkpoints_time ON checkpoints (time_created);
    ALTER TABLE checkpoints ADD COLUMN left_out TEXT NOT NULL DEFAULT '';",
    // 6: where a monitor's whole output is kept (a spill file under .tinytool/outputs/,
    // relative to the project; empty: none).
    "ALTER TABLE monitors ADD COLUMN log TEXT NOT NULL DEFAULT '';",
];

/// The agent a session is in when nothing is stored.
pub const DEFAULT_AGENT: &str = "build";

/// One todo item.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Todo {
    /// What to do.
    pub content: String,
    /// `pending`, `in_progress`, `done` or `cancelled`.
    pub status: String,
    /// `high`, `normal` or `low`.
    pub priority: String,
}

/// One notepad entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Note {
    /// The key.
    pub key: String,
    /// The stored text.
    pub content: String,
    /// Last update, Unix milliseconds.
    pub time_updated: i64,
}

/// One reported finding.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// File the finding is about.
    pub file: String,
    /// Line in that file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<i64>,
    /// critical | high | medium | low | info.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub severity: Option<String>,
    /// Free-form category.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub category: Option<String>,
    /// One-line summary.
    pub summary: String,
    /// How it fails.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure_scenario: Option<String>,
    /// Effort level of the review that reported it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub level: Option<String>,
}

/// An open state database.
#[derive(Debug)]
pub struct Store {
    conn: Connection,
    writable: bool,
}

impl Store {
    /// Opens (creating if needed) the database at `path` for reading and writing, and
    /// migrates it. `project_dir` is the project whose `.tinytool/` folder gets its
    /// `.gitignore` when the database lives there.
    pub fn open(path: &Path, project_dir: &Path) -> Result<Store> {
        if let Some(parent) = path.parent() {
            if parent == crate::project::tinytool_dir(project_dir) {
                crate::project::ensure_tinytool_dir(project_dir)
                    .with_context(|| format!("cannot create {}", parent.display()))?;
            } else if !parent.as_os_str().is_empty() {
                std::fs::create_dir_all(parent)
                    .with_context(|| format!("cannot create {}", parent.display()))?;
            }
        }
        // Never through a symlink planted at the database's name.
        let flags = rusqlite::OpenFlags::default() | rusqlite::OpenFlags::SQLITE_OPEN_NOFOLLOW;
        let conn = Connection::open_with_flags(path, flags)
            .with_context(|| format!("cannot open the state database {}", path.display()))?;
        conn.busy_timeout(Duration::from_secs(5))?;
        retry_busy(|| conn.pragma_update(None, "journal_mode", "WAL"))?;
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        // Each call is its own process, so every write would otherwise end with a checkpoint
        // of the WAL on close (10-15 ms); SQLite's automatic checkpoints keep it bounded.
        conn.set_db_config(
            rusqlite::config::DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE,
            true,
        )?;
        let mut store = Store {
            conn,
            writable: true,
        };
        store.migrate()?;
        Ok(store)
    }

    /// Opens an existing database read-only; `None` when there is none (nothing is created).
    fn open_read_only(path: &Path) -> Result<Option<Store>> {
        if !path.exists() {
            return Ok(None);
        }
        let conn = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .with_context(|| format!("cannot open the state database {}", path.display()))?;
        conn.busy_timeout(Duration::from_secs(5))?;
        let version: i64 = conn.pragma_query_value(None, "user_version", |r| r.get(0))?;
        if version == 0 {
            // Created but never migrated (another process is doing it right now).
            return Ok(None);
        }
        Ok(Some(Store {
            conn,
            writable: false,
        }))
    }

    /// Whether the database's schema is older than this build's: a read of it would miss
    /// the tables and columns the later migrations add.
    fn outdated(&self) -> bool {
        self.conn
            .pragma_query_value(None, "user_version", |r| r.get::<_, i64>(0))
            .is_ok_and(|version| version < MIGRATIONS.len() as i64)
    }

    /// Whether this connection may write.
    fn is_writable(&self) -> bool {
        self.writable
    }

    fn migrate(&mut self) -> Result<()> {
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let version: i64 = tx.pragma_query_value(None, "user_version", |r| r.get(0))?;
        let version = usize::try_from(version).unwrap_or(usize::MAX);
        if version > MIGRATIONS.len() {
            anyhow::bail!(
                "the state database was written by a newer tinytool (schema {version}, this one knows {})",
                MIGRATIONS.len()
            );
        }
        for (i, sql) in MIGRATIONS.iter().enumerate().skip(version) {
            tx.execute_batch(sql)
                .with_context(|| format!("state migration {} failed", i + 1))?;
        }
        tx.pragma_update(None, "user_version", MIGRATIONS.len() as i64)?;
        tx.commit()?;
        Ok(())
    }

    fn write<T>(
        &mut self,
        f: impl FnOnce(&rusqlite::Transaction) -> rusqlite::Result<T>,
    ) -> Result<T> {
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let value = f(&tx)?;
        tx.commit()?;
        Ok(value)
    }

    /// Replaces a session's todo list.
    pub fn replace_todos(&mut self, session: &str, todos: &[Todo]) -> Result<()> {
        let now = unix_millis() as i64;
        self.write(|tx| {
            tx.execute("DELETE FROM todos WHERE session_id = ?1", [session])?;
            let mut insert = tx.prepare(
                "INSERT INTO todos (session_id, position, content, status, priority, time_created, time_updated)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6)",
            )?;
            for (i, todo) in todos.iter().enumerate() {
                insert.execute(params![session, i as i64, todo.content, todo.status, todo.priority, now])?;
            }
            Ok(())
        })
    }

    /// A session's todo list, in order.
    pub fn todos(&self, session: &str) -> Result<Vec<Todo>> {
        Ok(query_all(
            &self.conn,
            "SELECT content, status, priority FROM todos WHERE session_id = ?1 ORDER BY position",
            [session],
            |r| {
                Ok(Todo {
                    content: r.get(0)?,
                    status: r.get(1)?,
                    priority: r.get(2)?,
                })
            },
        )?)
    }

    /// The agent a session is in.
    pub fn agent(&self, session: &str) -> Result<String> {
        let agent: Option<String> = self
            .conn
            .query_row(
                "SELECT agent FROM agents WHERE session_id = ?1",
                [session],
                |r| r.get(0),
            )
            .optional()?;
        Ok(agent.unwrap_or_else(|| DEFAULT_AGENT.to_string()))
    }

    /// Records a pending switch of a session to `agent` (applied by
    /// [`Store::apply_pending_agent`] when the call ends).
    pub fn set_pending_agent(&mut self, session: &str, agent: &str) -> Result<()> {
        let now = unix_millis() as i64;
        self.write(|tx| {
            tx.execute(
                "INSERT INTO agents (session_id, agent, pending, time_updated) VALUES (?1, ?2, ?3, ?4)
                 ON CONFLICT (session_id) DO UPDATE SET pending = excluded.pending, time_updated = excluded.time_updated",
                params![session, DEFAULT_AGENT, agent, now],
            )?;
            Ok(())
        })
    }

    /// Applies a session's pending switch; returns `(from, to)` when there was one.
    pub fn apply_pending_agent(&mut self, session: &str) -> Result<Option<(String, String)>> {
        let now = unix_millis() as i64;
        self.write(|tx| {
            let row: Option<(String, Option<String>)> = tx
                .query_row(
                    "SELECT agent, pending FROM agents WHERE session_id = ?1",
                    [session],
                    |r| Ok((r.get(0)?, r.get(1)?)),
                )
                .optional()?;
            let Some((from, Some(to))) = row else {
                return Ok(None);
            };
            tx.execute(
                "UPDATE agents SET agent = ?2, pending = NULL, time_updated = ?3 WHERE session_id = ?1",
                params![session, to, now],
            )?;
            Ok(Some((from, to)))
        })
    }

    /// Stored "always" approvals as `(permission, pattern)`, oldest first.
    pub fn approvals(&self) -> Result<Vec<(String, String)>> {
        Ok(query_all(
            &self.conn,
            "SELECT permission, pattern FROM approvals ORDER BY time_created, rowid",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?)
    }

    /// Takes the index of the next unused answer of the answers file for a session.
    pub fn take_answer_index(&mut self, session: &str) -> Result<u64> {
        self.write(|tx| {
            let used: i64 = tx
                .query_row(
                    "SELECT used FROM answers WHERE session_id = ?1",
                    [session],
                    |r| r.get(0),
                )
                .optional()?
                .unwrap_or(0);
            tx.execute(
                "INSERT INTO answers (session_id, used) VALUES (?1, ?2)
                 ON CONFLICT (session_id) DO UPDATE SET used = excluded.used",
                params![session, used + 1],
            )?;
            Ok(used as u64)
        })
    }

    /// Gives back an answer index taken by [`Store::take_answer_index`] (the answer did not
    /// exist), so the count stays the number of answers really used.
    pub fn untake_answer_index(&mut self, session: &str) -> Result<()> {
        self.write(|tx| {
            tx.execute(
                "UPDATE answers SET used = MAX(used - 1, 0) WHERE session_id = ?1",
                [session],
            )?;
            Ok(())
        })
    }

    /// A session's notes, by key.
    pub fn notes(&self, session: &str) -> Result<Vec<Note>> {
        Ok(query_all(
            &self.conn,
            "SELECT key, content, time_updated FROM notes WHERE session_id = ?1 ORDER BY key",
            [session],
            |r| {
                Ok(Note {
                    key: r.get(0)?,
                    content: r.get(1)?,
                    time_updated: r.get(2)?,
                })
            },
        )?)
    }

    /// One note.
    pub fn note(&self, session: &str, key: &str) -> Result<Option<String>> {
        Ok(self
            .conn
            .query_row(
                "SELECT content FROM notes WHERE session_id = ?1 AND key = ?2",
                params![session, key],
                |r| r.get(0),
            )
            .optional()?)
    }

    /// Stores a note unless that would exceed `max_entries` notes (an existing key can
    /// always be updated). Returns whether it was stored.
    pub fn set_note(
        &mut self,
        session: &str,
        key: &str,
        content: &str,
        max_entries: usize,
    ) -> Result<bool> {
        let now = unix_millis() as i64;
        self.write(|tx| {
            let exists: bool = tx.query_row(
                "SELECT EXISTS (SELECT 1 FROM notes WHERE session_id = ?1 AND key = ?2)",
                params![session, key],
                |r| r.get(0),
            )?;
            if !exists {
                let count: i64 = tx.query_row(
                    "SELECT COUNT(*) FROM notes WHERE session_id = ?1",
                    [session],
                    |r| r.get(0),
                )?;
                if count as usize >= max_entries {
                    return Ok(false);
                }
            }
            tx.execute(
                "INSERT INTO notes (session_id, key, content, time_updated) VALUES (?1, ?2, ?3, ?4)
                 ON CONFLICT (session_id, key) DO UPDATE SET content = excluded.content, time_updated = excluded.time_updated",
                params![session, key, content, now],
            )?;
            Ok(true)
        })
    }

    /// Deletes a note; returns whether it existed.
    pub fn delete_note(&mut self, session: &str, key: &str) -> Result<bool> {
        self.write(|tx| {
            let n = tx.execute(
                "DELETE FROM notes WHERE session_id = ?1 AND key = ?2",
                params![session, key],
            )?;
            Ok(n > 0)
        })
    }

    /// Appends findings to a session; returns the session's total afterwards.
    pub fn add_findings(&mut self, session: &str, findings: &[Finding]) -> Result<u64> {
        let now = unix_millis() as i64;
        self.write(|tx| {
            let mut insert = tx.prepare(
                "INSERT INTO findings (session_id, file, line, severity, category, summary, failure_scenario, level, time_created)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
            )?;
            for f in findings {
                insert.execute(params![
                    session, f.file, f.line, f.severity, f.category, f.summary, f.failure_scenario, f.level, now
                ])?;
            }
            let total: i64 = tx.query_row(
                "SELECT COUNT(*) FROM findings WHERE session_id = ?1",
                [session],
                |r| r.get(0),
            )?;
            Ok(total as u64)
        })
    }

    /// A session's findings, in the order reported.
    pub fn findings(&self, session: &str) -> Result<Vec<Finding>> {
        Ok(query_all(
            &self.conn,
            "SELECT file, line, severity, category, summary, failure_scenario, level
             FROM findings WHERE session_id = ?1 ORDER BY id",
            [session],
            |r| {
                Ok(Finding {
                    file: r.get(0)?,
                    line: r.get(1)?,
                    severity: r.get(2)?,
                    category: r.get(3)?,
                    summary: r.get(4)?,
                    failure_scenario: r.get(5)?,
                    level: r.get(6)?,
                })
            },
        )?)
    }
}

/// Every row `sql` returns, each made a value by `map`; `conn` may be a transaction.
pub(crate) fn query_all<T>(
    conn: &Connection,
    sql: &str,
    params: impl rusqlite::Params,
    map: impl FnMut(&rusqlite::Row) -> rusqlite::Result<T>,
) -> rusqlite::Result<Vec<T>> {
    let mut stmt = conn.prepare(sql)?;
    let rows = stmt.query_map(params, map)?;
    rows.collect()
}

/// Retries an operation that failed because another process held the database (setting
/// WAL mode takes an exclusive lock and does not always wait for the busy timeout).
fn retry_busy<T>(mut op: impl FnMut() -> rusqlite::Result<T>) -> rusqlite::Result<T> {
    let mut attempt = 0;
    loop {
        match op() {
            Err(rusqlite::Error::SqliteFailure(e, _))
                if e.code == rusqlite::ErrorCode::DatabaseBusy && attempt < 200 =>
            {
                attempt += 1;
                std::thread::sleep(Duration::from_millis(25));
            }
            other => return other,
        }
    }
}

/// The state of a process: the path of the database and a lazily opened connection
/// (read-only until something needs to write).
#[derive(Debug)]
pub struct State {
    path: PathBuf,
    project_dir: PathBuf,
    store: Mutex<Option<Store>>,
}

impl State {
    /// State at `path` for the project in `project_dir`; nothing is opened yet.
    pub fn new(path: PathBuf, project_dir: PathBuf) -> State {
        State {
            path,
            project_dir,
            store: Mutex::new(None),
        }
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn lock(&self) -> Result<std::sync::MutexGuard<'_, Option<Store>>> {
        self.store
            .lock()
            .map_err(|_| anyhow::anyhow!("the state connection was poisoned by a panic"))
    }

    /// Runs `f` on a read-only view; `Ok(None)` when no database exists yet.
    pub fn read<T>(&self, f: impl FnOnce(&Store) -> Result<T>) -> Result<Option<T>> {
        let mut guard = self.lock()?;
        if guard.is_none() {
            *guard = match Store::open_read_only(&self.path)? {
                // Written by an older build: migrated first (which needs a writer).
                Some(store) if store.outdated() => {
                    Some(Store::open(&self.path, &self.project_dir)?)
                }
                other => other,
            };
        }
        match guard.as_ref() {
            Some(store) => Ok(Some(f(store)?)),
            None => Ok(None),
        }
    }

    /// Runs `f` on a writable store, creating the database when needed.
    pub fn write<T>(&self, f: impl FnOnce(&mut Store) -> Result<T>) -> Result<T> {
        let mut guard = self.lock()?;
        if !guard.as_ref().is_some_and(Store::is_writable) {
            *guard = Some(Store::open(&self.path, &self.project_dir)?);
        }
        match guard.as_mut() {
            Some(store) => f(store),
            None => anyhow::bail!("the state database could not be opened"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store() -> (tempfile::TempDir, Store) {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join(".tinytool/state.db"), dir.path()).unwrap();
        (dir, store)
    }

    #[test]
    fn creating_the_database_writes_the_gitignore_and_migrates() {
        let (dir, store) = store();
        assert_eq!(
            std::fs::read_to_string(dir.path().join(".tinytool/.gitignore")).unwrap(),
            "*\n"
        );
        let version: i64 = store
            .conn
            .pragma_query_value(None, "user_version", |r| r.get(0))
            .unwrap();
        assert_eq!(version as usize, MIGRATIONS.len());
        drop(store);
        // Reopening migrates nothing and keeps the data.
        Store::open(&dir.path().join(".tinytool/state.db"), dir.path()).unwrap();
    }

    #[test]
    fn todos_replace_per_session() {
        let (_dir, mut store) = store();
        let todo = |c: &str| Todo {
            content: c.into(),
            status: "pending".into(),
            priority: "high".into(),
        };
        store
            .replace_todos("a", &[todo("one"), todo("two")])
            .unwrap();
        store.replace_todos("b", &[todo("other")]).unwrap();
        store.replace_todos("a", &[todo("three")]).unwrap();
        assert_eq!(store.todos("a").unwrap(), vec![todo("three")]);
        assert_eq!(store.todos("b").unwrap().len(), 1);
    }

    #[test]
    fn pending_agent_switches_apply_once() {
        let (_dir, mut store) = store();
        assert_eq!(store.agent("s").unwrap(), "build");
        store.set_pending_agent("s", "plan").unwrap();
        assert_eq!(store.agent("s").unwrap(), "build");
        assert_eq!(
            store.apply_pending_agent("s").unwrap(),
            Some(("build".into(), "plan".into()))
        );
        assert_eq!(store.apply_pending_agent("s").unwrap(), None);
        assert_eq!(store.agent("s").unwrap(), "plan");
        assert_eq!(store.agent("other").unwrap(), "build");
    }

    #[test]
    fn notes_respect_the_entry_limit_but_allow_updates() {
        let (_dir, mut store) = store();
        assert!(store.set_note("s", "a", "1", 1).unwrap());
        assert!(!store.set_note("s", "b", "2", 1).unwrap());
        assert!(store.set_note("s", "a", "updated", 1).unwrap());
        assert_eq!(store.note("s", "a").unwrap().as_deref(), Some("updated"));
        assert!(store.delete_note("s", "a").unwrap());
        assert!(!store.delete_note("s", "a").unwrap());
    }

    #[test]
    fn read_only_state_never_creates_the_database() {
        let dir = tempfile::tempdir().unwrap();
        let state = State::new(
            dir.path().join(".tinytool/state.db"),
            dir.path().to_path_buf(),
        );
        assert_eq!(state.read(|s| s.agent("x")).unwrap(), None);
        assert!(!dir.path().join(".tinytool").exists());
        state.write(|s| s.set_pending_agent("x", "plan")).unwrap();
        assert!(dir.path().join(".tinytool/state.db").exists());
    }

    #[test]
    fn answers_are_counted_per_session() {
        let (_dir, mut store) = store();
        assert_eq!(store.take_answer_index("s").unwrap(), 0);
        assert_eq!(store.take_answer_index("s").unwrap(), 1);
        store.untake_answer_index("s").unwrap();
        assert_eq!(store.take_answer_index("s").unwrap(), 1);
        assert_eq!(store.take_answer_index("t").unwrap(), 0);
    }

    #[test]
    fn a_version_one_database_migrates_and_keeps_its_data() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.db");
        {
            let conn = Connection::open(&path).unwrap();
            conn.execute_batch(MIGRATIONS[0]).unwrap();
            conn.pragma_update(None, "user_version", 1).unwrap();
            conn.execute(
                "INSERT INTO notes (session_id, key, content, time_updated) VALUES ('s', 'k', 'v', 1)",
                [],
            )
            .unwrap();
        }
        let mut store = Store::open(&path, dir.path()).unwrap();
        assert_eq!(store.note("s", "k").unwrap().as_deref(), Some("v"));
        assert_eq!(
            store.start_monitor(&new_monitor("a"), 5).unwrap(),
            MonitorSlot::Taken(1)
        );
    }

    #[test]
    fn a_database_of_an_older_build_is_migrated_before_its_first_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.db");
        {
            let conn = Connection::open(&path).unwrap();
            for sql in &MIGRATIONS[..4] {
                conn.execute_batch(sql).unwrap();
            }
            conn.pragma_update(None, "user_version", 4).unwrap();
        }
        let state = State::new(path.clone(), dir.path().to_path_buf());
        // A table migration 5 adds, read before anything is written.
        let claims = state.read(|store| store.checkpoint_claims()).unwrap();
        assert_eq!(claims, Some(Vec::new()));
        let conn = Connection::open(&path).unwrap();
        let version: i64 = conn
            .pragma_query_value(None, "user_version", |r| r.get(0))
            .unwrap();
        assert_eq!(version, MIGRATIONS.len() as i64);
    }

    fn new_monitor<'a>(command: &'a str) -> NewMonitor<'a> {
        NewMonitor {
            session_id: "s",
            command,
            description: command,
            timeout_ms: 1_000,
            token: "t",
        }
    }

    #[test]
    fn monitor_starts_respect_the_limit_and_ids_are_never_reused() {
        let (_dir, mut store) = store();
        assert_eq!(
            store.start_monitor(&new_monitor("a"), 2).unwrap(),
            MonitorSlot::Taken(1)
        );
        assert_eq!(
            store.start_monitor(&new_monitor("b"), 2).unwrap(),
            MonitorSlot::Taken(2)
        );
        assert_eq!(
            store.start_monitor(&new_monitor("c"), 2).unwrap(),
            MonitorSlot::Full(vec![1, 2])
        );
        assert!(
            store
                .finish_monitor(1, "exited", Some(0), None, None)
                .unwrap()
        );
        assert!(
            !store
                .finish_monitor(1, "stopped", None, None, None)
                .unwrap()
        );
        assert_eq!(store.monitor(1).unwrap().unwrap().status, "exited");
        assert_eq!(
            store.start_monitor(&new_monitor("d"), 2).unwrap(),
            MonitorSlot::Taken(3)
        );
        let supervision = Supervision {
            pid: 10,
            start: 20,
            boot_id: "b".into(),
            pgid: 11,
        };
        assert!(
            store
                .set_running(Background::Monitor, 3, &supervision)
                .unwrap()
        );
        assert!(
            !store
                .set_running(Background::Monitor, 3, &supervision)
                .unwrap()
        );
        let unfinished = store.unfinished(Background::Monitor).unwrap();
        assert_eq!(unfinished.iter().map(|u| u.id).collect::<Vec<_>>(), [2, 3]);
        assert_eq!(unfinished[1].supervision, Some(supervision));
        assert_eq!(unfinished[0].supervision, None);
    }

    #[test]
    fn monitor_lines_keep_the_newest_and_count_the_dropped() {
        let (_dir, mut store) = store();
        store.start_monitor(&new_monitor("a"), 5).unwrap();
        let lines = |range: std::ops::RangeInclusive<u32>| -> Vec<String> {
            range.map(|n| n.to_string()).collect()
        };
        store.append_monitor_lines(1, &lines(1..=3), 0, 4).unwrap();
        store.append_monitor_lines(1, &lines(4..=6), 2, 4).unwrap();
        assert_eq!(store.monitor(1).unwrap().unwrap().buffered, 4);
        let (taken, dropped) = store.take_monitor_lines(1).unwrap();
        assert_eq!(taken, lines(3..=6));
        assert_eq!(dropped, 4, "2 from the supervisor, 2 from the table");
        assert_eq!(store.take_monitor_lines(1).unwrap(), (Vec::new(), 0));
        store.append_monitor_lines(1, &lines(7..=7), 0, 4).unwrap();
        assert_eq!(store.take_monitor_lines(1).unwrap().0, lines(7..=7));
    }

    #[test]
    fn jobs_finish_once_and_finished_work_is_pruned() {
        let (_dir, mut store) = store();
        let command = vec!["agent".to_string(), "--print".to_string()];
        let id = store
            .insert_job(&NewJob {
                session_id: "s",
                subagent_type: "build",
                description: "d",
                prompt: "p",
                command: &command,
                depth: 1,
                deadline_ms: 1_000,
                token: "t",
            })
            .unwrap();
        let job = store.job(id).unwrap().unwrap();
        assert_eq!(job.command, command);
        assert_eq!(job.status, "starting");
        assert!(store.finish_job(id, "completed", "out", "").unwrap());
        assert!(
            !store
                .abandon(Background::Job, id, "failed", "late")
                .unwrap()
        );
        assert_eq!(store.jobs("s").unwrap()[0].result, "out");
        assert!(store.jobs("other").unwrap().is_empty());
        store.start_monitor(&new_monitor("a"), 5).unwrap();
        let now = unix_millis() as i64;
        assert!(!store.has_prunable(now - 60_000).unwrap());
        assert!(store.has_prunable(now + 60_000).unwrap());
        assert_eq!(store.prune_background(now + 60_000).unwrap(), 1);
        assert!(store.job(id).unwrap().is_none());
        assert!(store.monitor(1).unwrap().is_some(), "unfinished work stays");
    }
}
