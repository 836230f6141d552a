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
//! tasks, per session). Monitors and jobs record who supervises them (see `background`);
//! finished ones are pruned after 7 days. `checkpoint_files`, `checkpoints`,
//! `checkpoint_changes` and `checkpoint_settings` are the checkpoints' (their statements
//! are in the submodule `checkpoints`).

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use anyhow::{Context, Result};
use rusqlite::{Connection, OpenFlags, OptionalExtension, TransactionBehavior, params};
use serde::Serialize;

use crate::events::unix_millis;

mod checkpoints;
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

/// Background work kept in the state: monitors and background task jobs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Background {
    /// A `monitor`.
    Monitor,
    /// A background `task` job.
    Job,
}

impl Background {
    fn table(self) -> &'static str {
        match self {
            Background::Monitor => "monitors",
            Background::Job => "jobs",
        }
    }

    fn prefix(self) -> &'static str {
        match self {
            Background::Monitor => "mon_",
            Background::Job => "job_",
        }
    }

    /// The id shown to callers (`mon_3`, `job_3`).
    pub fn label(self, id: i64) -> String {
        format!("{}{id}", self.prefix())
    }

    /// The row id of a shown id (`mon_3` → 3); `None` for anything else.
    pub fn parse(self, label: &str) -> Option<i64> {
        label
            .trim()
            .strip_prefix(self.prefix())
            .filter(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|n| n.parse().ok())
            .filter(|n| *n > 0)
    }
}

/// Statuses of work that is not finished (a row is `starting` until its supervisor has
/// started the command).
pub const UNFINISHED: [&str; 2] = ["starting", "running"];

/// Who supervises a row's command, as recorded by the supervisor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Supervision {
    /// The supervisor's pid.
    pub pid: i64,
    /// The supervisor's start time, clock ticks after boot.
    pub start: i64,
    /// The boot the supervisor runs in.
    pub boot_id: String,
    /// The process group of the supervised command.
    pub pgid: i64,
}

/// A monitor or job that is not finished, for the reaping of later calls.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unfinished {
    /// The row id.
    pub id: i64,
    /// The session that started it.
    pub session_id: String,
    /// `starting` or `running`.
    pub status: String,
    /// When it was recorded, Unix milliseconds.
    pub time_created: i64,
    /// When it must be over, Unix milliseconds.
    pub deadline: i64,
    /// Its supervisor, once recorded.
    pub supervision: Option<Supervision>,
    /// The marker token its processes carry.
    pub token: String,
}

/// What a new monitor is.
#[derive(Debug, Clone)]
pub struct NewMonitor<'a> {
    /// The session starting it.
    pub session_id: &'a str,
    /// The command line.
    pub command: &'a str,
    /// Its label.
    pub description: &'a str,
    /// How long it may run, milliseconds.
    pub timeout_ms: i64,
    /// The marker token its processes carry.
    pub token: &'a str,
}

/// A stored monitor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Monitor {
    /// Row id (`mon_<id>`).
    pub id: i64,
    /// The session that started it.
    pub session_id: String,
    /// The command line.
    pub command: String,
    /// Its label.
    pub description: String,
    /// starting | running | exited | stopped | timed_out | failed.
    pub status: String,
    /// Exit status, when the shell exited.
    pub exit_code: Option<i64>,
    /// The signal that ended the shell, when one did.
    pub signal: Option<i64>,
    /// What went wrong, for `failed`.
    pub error: Option<String>,
    /// How long it may run, milliseconds.
    pub timeout_ms: i64,
    /// Start, Unix milliseconds.
    pub time_created: i64,
    /// Deadline, Unix milliseconds.
    pub deadline: i64,
    /// End, Unix milliseconds.
    pub time_ended: Option<i64>,
    /// Lines waiting to be read.
    pub buffered: i64,
    /// Lines dropped from the full buffer since the last read.
    pub dropped: i64,
    /// Whether a read or stop has reported its end (it then leaves `list`).
    pub acknowledged: bool,
}

/// The outcome of [`Store::start_monitor`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MonitorSlot {
    /// Recorded as `starting` with this id.
    Taken(i64),
    /// The limit is reached: the unfinished monitors, oldest first.
    Full(Vec<i64>),
}

/// What a new background job is.
#[derive(Debug, Clone)]
pub struct NewJob<'a> {
    /// The session starting it.
    pub session_id: &'a str,
    /// The subagent type.
    pub subagent_type: &'a str,
    /// Its short description.
    pub description: &'a str,
    /// The prompt fed to the subagent.
    pub prompt: &'a str,
    /// The subagent command (program and arguments).
    pub command: &'a [String],
    /// `TINYTOOL_SUBAGENT_DEPTH` of the subagent.
    pub depth: i64,
    /// How long it may run, milliseconds.
    pub deadline_ms: i64,
    /// The marker token its processes carry.
    pub token: &'a str,
}

/// A stored background job.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Job {
    /// Row id (`job_<id>`).
    pub id: i64,
    /// The session that started it.
    pub session_id: String,
    /// The subagent type.
    pub subagent_type: String,
    /// Its short description.
    pub description: String,
    /// The prompt.
    pub prompt: String,
    /// The subagent command.
    pub command: Vec<String>,
    /// The subagent's depth.
    pub depth: i64,
    /// starting | running | completed | failed | cancelled.
    pub status: String,
    /// The subagent's output.
    pub result: String,
    /// What went wrong.
    pub error: String,
    /// How long it may run, milliseconds.
    pub deadline_ms: i64,
    /// Start, Unix milliseconds.
    pub time_created: i64,
    /// Deadline, Unix milliseconds.
    pub deadline: i64,
    /// End, Unix milliseconds.
    pub time_ended: Option<i64>,
}

const MONITOR_COLUMNS: &str =
    "id, session_id, command, description, status, exit_code, signal, error,
    timeout_ms, time_created, deadline, time_ended,
    (SELECT COUNT(*) FROM monitor_lines WHERE monitor_id = monitors.id), dropped, acknowledged";

fn monitor_row(r: &rusqlite::Row) -> rusqlite::Result<Monitor> {
    Ok(Monitor {
        id: r.get(0)?,
        session_id: r.get(1)?,
        command: r.get(2)?,
        description: r.get(3)?,
        status: r.get(4)?,
        exit_code: r.get(5)?,
        signal: r.get(6)?,
        error: r.get(7)?,
        timeout_ms: r.get(8)?,
        time_created: r.get(9)?,
        deadline: r.get(10)?,
        time_ended: r.get(11)?,
        buffered: r.get(12)?,
        dropped: r.get(13)?,
        acknowledged: r.get(14)?,
    })
}

const JOB_COLUMNS: &str = "id, session_id, subagent_type, description, prompt, command, depth,
    status, result, error, deadline_ms, time_created, deadline, time_ended";

fn job_row(r: &rusqlite::Row) -> rusqlite::Result<Job> {
    let command: String = r.get(5)?;
    Ok(Job {
        id: r.get(0)?,
        session_id: r.get(1)?,
        subagent_type: r.get(2)?,
        description: r.get(3)?,
        prompt: r.get(4)?,
        // Written by `insert_job` from a list of strings; anything else reads as empty.
        command: serde_json::from_str(&command).unwrap_or_default(),
        depth: r.get(6)?,
        status: r.get(7)?,
        result: r.get(8)?,
        error: r.get(9)?,
        deadline_ms: r.get(10)?,
        time_created: r.get(11)?,
        deadline: r.get(12)?,
        time_ended: r.get(13)?,
    })
}

const UNFINISHED_COLUMNS: &str = "id, session_id, status, time_created, deadline, supervisor_pid,
    supervisor_start, boot_id, pgid, token";

fn unfinished_row(r: &rusqlite::Row) -> rusqlite::Result<Unfinished> {
    let pid: Option<i64> = r.get(5)?;
    let start: Option<i64> = r.get(6)?;
    let boot_id: Option<String> = r.get(7)?;
    let pgid: Option<i64> = r.get(8)?;
    let supervision = match (pid, start, boot_id, pgid) {
        (Some(pid), Some(start), Some(boot_id), Some(pgid)) => Some(Supervision {
            pid,
            start,
            boot_id,
            pgid,
        }),
        _ => None,
    };
    Ok(Unfinished {
        id: r.get(0)?,
        session_id: r.get(1)?,
        status: r.get(2)?,
        time_created: r.get(3)?,
        deadline: r.get(4)?,
        supervision,
        token: r.get(9)?,
    })
}

/// Background work: monitors, their lines, jobs, and the records of their supervisors.
impl Store {
    /// Records a new monitor as `starting` unless `max_unfinished` monitors of the project
    /// are unfinished already (checked and recorded in one transaction, so concurrent
    /// starts cannot exceed the limit).
    pub fn start_monitor(
        &mut self,
        new: &NewMonitor,
        max_unfinished: usize,
    ) -> Result<MonitorSlot> {
        let now = unix_millis() as i64;
        self.write(|tx| {
            let running: Vec<i64> = query_all(
                tx,
                "SELECT id FROM monitors WHERE status IN ('starting', 'running') ORDER BY id",
                [],
                |r| r.get(0),
            )?;
            if running.len() >= max_unfinished {
                return Ok(MonitorSlot::Full(running));
            }
            tx.execute(
                "INSERT INTO monitors (session_id, command, description, status, timeout_ms,
                     time_created, deadline, token)
                 VALUES (?1, ?2, ?3, 'starting', ?4, ?5, ?6, ?7)",
                params![
                    new.session_id,
                    new.command,
                    new.description,
                    new.timeout_ms,
                    now,
                    now.saturating_add(new.timeout_ms),
                    new.token
                ],
            )?;
            Ok(MonitorSlot::Taken(tx.last_insert_rowid()))
        })
    }

    /// One monitor.
    pub fn monitor(&self, id: i64) -> Result<Option<Monitor>> {
        Ok(self
            .conn
            .query_row(
                &format!("SELECT {MONITOR_COLUMNS} FROM monitors WHERE id = ?1"),
                [id],
                monitor_row,
            )
            .optional()?)
    }

    /// The project's monitors, oldest first; with `all` unset, only those whose end no
    /// read or stop has reported yet.
    pub fn monitors(&self, all: bool) -> Result<Vec<Monitor>> {
        let filter = if all { "" } else { "WHERE acknowledged = 0" };
        Ok(query_all(
            &self.conn,
            &format!("SELECT {MONITOR_COLUMNS} FROM monitors {filter} ORDER BY id"),
            [],
            monitor_row,
        )?)
    }

    /// Appends lines to a monitor's buffer and keeps only its newest `keep` lines;
    /// `dropped` lines were lost before these (the supervisor's own buffer overflowed).
    pub fn append_monitor_lines(
        &mut self,
        id: i64,
        lines: &[String],
        dropped: u64,
        keep: usize,
    ) -> Result<()> {
        self.write(|tx| {
            let last: i64 = tx.query_row(
                "SELECT COALESCE(MAX(seq), 0) FROM monitor_lines WHERE monitor_id = ?1",
                [id],
                |r| r.get(0),
            )?;
            let mut insert = tx
                .prepare("INSERT INTO monitor_lines (monitor_id, seq, line) VALUES (?1, ?2, ?3)")?;
            for (k, line) in lines.iter().enumerate() {
                insert.execute(params![id, last + 1 + k as i64, line])?;
            }
            let count: i64 = tx.query_row(
                "SELECT COUNT(*) FROM monitor_lines WHERE monitor_id = ?1",
                [id],
                |r| r.get(0),
            )?;
            let excess = (count - keep as i64).max(0);
            if excess > 0 {
                tx.execute(
                    "DELETE FROM monitor_lines WHERE monitor_id = ?1 AND seq IN
                     (SELECT seq FROM monitor_lines WHERE monitor_id = ?1 ORDER BY seq LIMIT ?2)",
                    params![id, excess],
                )?;
            }
            let lost = excess.saturating_add(i64::try_from(dropped).unwrap_or(i64::MAX));
            if lost > 0 {
                tx.execute(
                    "UPDATE monitors SET dropped = dropped + ?2 WHERE id = ?1",
                    params![id, lost],
                )?;
            }
            Ok(())
        })
    }

    /// Takes (returns and deletes) a monitor's buffered lines, oldest first, with the
    /// count of lines dropped since the last take.
    pub fn take_monitor_lines(&mut self, id: i64) -> Result<(Vec<String>, i64)> {
        self.write(|tx| {
            let lines: Vec<String> = query_all(
                tx,
                "SELECT line FROM monitor_lines WHERE monitor_id = ?1 ORDER BY seq",
                [id],
                |r| r.get(0),
            )?;
            tx.execute("DELETE FROM monitor_lines WHERE monitor_id = ?1", [id])?;
            let dropped: i64 = tx
                .query_row("SELECT dropped FROM monitors WHERE id = ?1", [id], |r| {
                    r.get(0)
                })
                .optional()?
                .unwrap_or(0);
            tx.execute("UPDATE monitors SET dropped = 0 WHERE id = ?1", [id])?;
            Ok((lines, dropped))
        })
    }

    /// Marks a monitor's end as reported (it leaves `list`).
    pub fn acknowledge_monitor(&mut self, id: i64) -> Result<()> {
        self.write(|tx| {
            tx.execute("UPDATE monitors SET acknowledged = 1 WHERE id = ?1", [id])?;
            Ok(())
        })
    }

    /// Records how a monitor ended, unless it already has; returns whether it was recorded.
    pub fn finish_monitor(
        &mut self,
        id: i64,
        status: &str,
        exit_code: Option<i64>,
        signal: Option<i64>,
        error: Option<&str>,
    ) -> Result<bool> {
        let now = unix_millis() as i64;
        self.write(|tx| {
            let n = tx.execute(
                "UPDATE monitors SET status = ?2, exit_code = ?3, signal = ?4, error = ?5, time_ended = ?6
                 WHERE id = ?1 AND status IN ('starting', 'running')",
                params![id, status, exit_code, signal, error, now],
            )?;
            Ok(n > 0)
        })
    }

    /// Records a new job as `starting`; returns its id.
    pub fn insert_job(&mut self, new: &NewJob) -> Result<i64> {
        let now = unix_millis() as i64;
        let command = serde_json::to_string(new.command)?;
        self.write(|tx| {
            tx.execute(
                "INSERT INTO jobs (session_id, subagent_type, description, prompt, command, depth,
                     status, deadline_ms, time_created, deadline, token)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'starting', ?7, ?8, ?9, ?10)",
                params![
                    new.session_id,
                    new.subagent_type,
                    new.description,
                    new.prompt,
                    command,
                    new.depth,
                    new.deadline_ms,
                    now,
                    now.saturating_add(new.deadline_ms),
                    new.token
                ],
            )?;
            Ok(tx.last_insert_rowid())
        })
    }

    /// One job, whatever its session.
    pub fn job(&self, id: i64) -> Result<Option<Job>> {
        Ok(self
            .conn
            .query_row(
                &format!("SELECT {JOB_COLUMNS} FROM jobs WHERE id = ?1"),
                [id],
                job_row,
            )
            .optional()?)
    }

    /// A session's jobs, oldest first.
    pub fn jobs(&self, session: &str) -> Result<Vec<Job>> {
        Ok(query_all(
            &self.conn,
            &format!("SELECT {JOB_COLUMNS} FROM jobs WHERE session_id = ?1 ORDER BY id"),
            [session],
            job_row,
        )?)
    }

    /// Records how a job ended, unless it already has; returns whether it was recorded.
    pub fn finish_job(&mut self, id: i64, status: &str, result: &str, error: &str) -> Result<bool> {
        let now = unix_millis() as i64;
        self.write(|tx| {
            let n = tx.execute(
                "UPDATE jobs SET status = ?2, result = ?3, error = ?4, time_ended = ?5
                 WHERE id = ?1 AND status IN ('starting', 'running')",
                params![id, status, result, error, now],
            )?;
            Ok(n > 0)
        })
    }

    /// The marker token of a monitor or job.
    pub fn token(&self, kind: Background, id: i64) -> Result<Option<String>> {
        Ok(self
            .conn
            .query_row(
                &format!("SELECT token FROM {} WHERE id = ?1", kind.table()),
                [id],
                |r| r.get(0),
            )
            .optional()?)
    }

    /// Records a row's supervisor and moves it from `starting` to `running`; `false` when
    /// it is no longer `starting` (a later call gave up on it).
    pub fn set_running(&mut self, kind: Background, id: i64, s: &Supervision) -> Result<bool> {
        self.write(|tx| {
            let n = tx.execute(
                &format!(
                    "UPDATE {} SET status = 'running', supervisor_pid = ?2, supervisor_start = ?3,
                         boot_id = ?4, pgid = ?5
                     WHERE id = ?1 AND status = 'starting'",
                    kind.table()
                ),
                params![id, s.pid, s.start, s.boot_id, s.pgid],
            )?;
            Ok(n > 0)
        })
    }

    /// The unfinished monitors or jobs of the project, oldest first.
    pub fn unfinished(&self, kind: Background) -> Result<Vec<Unfinished>> {
        Ok(query_all(
            &self.conn,
            &format!(
                "SELECT {UNFINISHED_COLUMNS} FROM {} WHERE status IN ('starting', 'running') ORDER BY id",
                kind.table()
            ),
            [],
            unfinished_row,
        )?)
    }

    /// Ends an unfinished row as `status` with `error` (a job's or a monitor's error text);
    /// returns whether it was still unfinished.
    pub fn abandon(
        &mut self,
        kind: Background,
        id: i64,
        status: &str,
        error: &str,
    ) -> Result<bool> {
        let now = unix_millis() as i64;
        self.write(|tx| {
            let n = tx.execute(
                &format!(
                    "UPDATE {} SET status = ?2, error = ?3, time_ended = ?4
                     WHERE id = ?1 AND status IN ('starting', 'running')",
                    kind.table()
                ),
                params![id, status, error, now],
            )?;
            Ok(n > 0)
        })
    }

    /// Whether any monitor or job ended before `before` (Unix milliseconds), so that
    /// [`Store::prune_background`] has work (checked read-only first: pruning writes).
    pub fn has_prunable(&self, before: i64) -> Result<bool> {
        Ok(self.conn.query_row(
            "SELECT EXISTS (SELECT 1 FROM monitors WHERE time_ended < ?1)
                 OR EXISTS (SELECT 1 FROM jobs WHERE time_ended < ?1)",
            [before],
            |r| r.get(0),
        )?)
    }

    /// Records the `metadata.sandbox` (JSON) of a monitor's or job's command.
    pub fn set_background_sandbox(&mut self, kind: Background, id: i64, json: &str) -> Result<()> {
        self.write(|tx| {
            tx.execute(
                &format!("UPDATE {} SET sandbox = ?2 WHERE id = ?1", kind.table()),
                params![id, json],
            )?;
            Ok(())
        })
    }

    /// The recorded `metadata.sandbox` (JSON) of a monitor's or job's command; `None`
    /// when the row is gone or nothing was recorded.
    pub fn background_sandbox(&self, kind: Background, id: i64) -> Result<Option<String>> {
        let text: Option<String> = self
            .conn
            .query_row(
                &format!("SELECT sandbox FROM {} WHERE id = ?1", kind.table()),
                [id],
                |r| r.get(0),
            )
            .optional()?;
        Ok(text.filter(|t| !t.is_empty()))
    }

    /// Deletes monitors (with their lines) and jobs that ended before `before` (Unix
    /// milliseconds); returns how many rows went.
    pub fn prune_background(&mut self, before: i64) -> Result<usize> {
        self.write(|tx| {
            tx.execute(
                "DELETE FROM monitor_lines WHERE monitor_id IN
                 (SELECT id FROM monitors WHERE time_ended IS NOT NULL AND time_ended < ?1)",
                [before],
            )?;
            let monitors = tx.execute(
                "DELETE FROM monitors WHERE time_ended IS NOT NULL AND time_ended < ?1",
                [before],
            )?;
            let jobs = tx.execute(
                "DELETE FROM jobs WHERE time_ended IS NOT NULL AND time_ended < ?1",
                [before],
            )?;
            Ok(monitors + jobs)
        })
    }
}

/// Every row `sql` returns, each made a value by `map`; `conn` may be a transaction.
fn query_all<T>(
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
            *guard = Store::open_read_only(&self.path)?;
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
