//! The statements of background work: monitors, their lines, background task jobs, and the
//! records of their supervisors (the tables are created by the migrations of `super`).

use crate::events::unix_millis;
use anyhow::Result;
use rusqlite::{OptionalExtension, params};

use super::{Store, query_all};

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
    /// The file holding every line of its output, relative to the project (empty: none).
    pub log: String,
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
    (SELECT COUNT(*) FROM monitor_lines WHERE monitor_id = monitors.id), dropped, acknowledged,
    log";

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
        log: r.get(15)?,
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

    /// Records where a monitor's whole output is kept.
    pub fn set_monitor_log(&mut self, id: i64, log: &str) -> Result<()> {
        self.write(|tx| {
            tx.execute(
                "UPDATE monitors SET log = ?2 WHERE id = ?1",
                rusqlite::params![id, log],
            )
        })?;
        Ok(())
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
