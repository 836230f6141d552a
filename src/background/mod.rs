//! Background work — monitors and background task jobs — that outlives the call that
//! started it, is visible to every later tinytool process, and never leaks a process.
//!
//! tinytool runs each call in its own short-lived process, so work that must keep running
//! between calls lives under a small detached supervisor, `tinytool __supervise KIND ID`
//! (a hidden subcommand, see `supervisor`), with its state in SQLite (`state`: the
//! `monitors`, `monitor_lines` and `jobs` tables).
//!
//! # Starting
//! 1. The call reaps (below), then records the work as `starting` — for a monitor in the
//!    same transaction that checks that fewer than [`MAX_MONITORS`] are unfinished.
//! 2. It starts the supervisor detached: a new session (no terminal, out of the caller's
//!    process group), stdin and stderr `/dev/null`, stdout a pipe for one handshake line,
//!    no death signal (it must outlive the call), and in its environment the marker
//!    `TINYTOOL_SUPERVISED=<token>` (a fresh random token, also stored in the row), which
//!    everything it starts inherits.
//! 3. The supervisor starts the command as the leader of a new process group in its own
//!    session, with `PR_SET_PDEATHSIG` = SIGKILL and a sentinel in that group (a child of
//!    the supervisor that the leader starts before `exec`: `process::sentinel`). It
//!    records its identity — pid, start time in clock ticks after boot, boot id — and the
//!    group id in the row (`starting` → `running`), answers `ok SANDBOX` on the pipe
//!    (`SANDBOX`: the command's `metadata.sandbox` as one JSON object) and closes it. The
//!    call returns: `Monitor started: …`, or the job id, with that `metadata.sandbox`.
//!    The supervisor itself is not sandboxed: it gets the session's sandbox settings in
//!    `TINYTOOL_SANDBOX` (it loads no policy) and builds the command's namespaces, whose
//!    first process dies with it, so the command lives exactly as long as its supervisor.
//!    When `required` mode keeps the command from starting it answers `refused SANDBOX`
//!    (with `message`), and the call is refused (exit status 3).
//!
//! # While it runs
//! The supervisor watches the command (`process::run`): it is a child subreaper, so
//! orphaned descendants become its children; it streams a monitor's lines into the
//! database (flushed every 100 ms, the newest 100 unread lines kept) or keeps a job's
//! output in bounded captures; at the deadline it sends the group SIGTERM, then SIGKILL
//! 500 ms later. When the command's leader exits, whatever it left in its group is killed,
//! and so is what left the group (`setsid`, daemons) and was adopted by the supervisor
//! (`process::adopted`), at the deadline too; a monitor or job started through a nested
//! tinytool has a supervisor of its own and is left to it.
//! When the starting call's checkpoint was handed to it (`checkpoints::handoff`), the
//! supervisor closes that checkpoint once the command ended, before recording the end.
//! The supervisor then records the end (monitor: `exited` with the code or signal,
//! `stopped`, `timed_out`, `failed`; job: `completed`, `failed`, `cancelled`, publishing
//! `job.completed`) and exits. It never lives more than about a second past the deadline
//! plus the database's busy timeout.
//!
//! # Stopping
//! `monitor stop` and `task cancel` send SIGTERM to the supervisor — through a pidfd,
//! after checking its identity, so a stranger that got its pid is never signalled. The
//! supervisor's handler only raises a flag: it kills the group with SIGKILL, reaps it,
//! records `stopped` / `cancelled` and exits. The call waits for that record (at most
//! [`STOP_WAIT`]); a supervisor that does not answer is killed with SIGKILL, its marked
//! group too, and the row is ended by the call.
//!
//! # When a supervisor is killed
//! - By SIGTERM, SIGINT or SIGHUP: handled as a stop.
//! - By SIGKILL (or a crash): the kernel sends the leader its death signal (SIGKILL) and
//!   the sentinel its own; the sentinel sees its parent gone and kills the whole group,
//!   itself included. Nothing in the group is left running (what had left the group with
//!   `setsid` is then re-parented to init and survives: a known limit).
//! - Stopped (SIGSTOP) or hung: the sentinel kills the group itself one second after the
//!   latest the supervisor would have stopped it at its deadline (deadline + 1.95 s).
//! - Whatever remains unrecorded is settled by the next call that touches monitors or jobs
//!   (`monitor`, `task`, `state monitors|jobs`), which reaps first ([`reap`]): every
//!   unfinished row whose supervisor is gone (no process with its pid, start time and boot
//!   id, or only its zombie) — or still alive more than [`OVERDUE_MS`] past its deadline
//!   (stopped, hung), which is then killed — gets its group killed if a living member
//!   carries the row's marker (`process::identity::kill_marked_group`: the only proof that
//!   the group id was not reused by a stranger), and is ended as `failed` with the reason.
//!   A row still `starting` after [`STARTING_GRACE_MS`] without a supervisor is ended the
//!   same way (its supervisor, if it ever records itself, finds the row ended and kills
//!   its command).
//!
//! # Retention
//! Finished monitors and jobs are pruned 7 days after they ended, by the same reaping.

pub mod subagent;
pub mod supervisor;

use std::io::{ErrorKind, Read};
use std::os::fd::AsRawFd;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::Result;
use serde_json::json;

use crate::events::{EventSink, unix_millis};
use crate::process::identity::{self, Identity};
use crate::process::{self, MARKER_VAR};
use crate::session::{CallContext, Session};
use crate::state::{Background, Supervision, Unfinished};

/// At most this many monitors run at once in a project.
pub const MAX_MONITORS: usize = 5;
/// The unread lines a monitor keeps (the oldest are dropped).
pub const KEEP_LINES: usize = 100;
/// Finished monitors and jobs are pruned this long after they ended (7 days).
const RETENTION_MS: i64 = 7 * 24 * 60 * 60 * 1000;
/// A row still `starting` without a supervisor after this long is abandoned.
const STARTING_GRACE_MS: i64 = 30_000;
/// A supervisor still running this long after its deadline is killed by the next call.
const OVERDUE_MS: i64 = 5_000;
/// How long a stop or cancel waits for the supervisor to record the end.
const STOP_WAIT: Duration = Duration::from_secs(3);
/// How long a start waits for the supervisor's handshake (the database's busy timeout is
/// 5 s).
const HANDSHAKE_WAIT: Duration = Duration::from_secs(10);

/// The marker entry (`TINYTOOL_SUPERVISED=<token>`) of a row's processes.
pub fn marker(token: &str) -> String {
    format!("{MARKER_VAR}={token}")
}

/// Why a supervisor did not start its command.
#[derive(Debug, Clone)]
pub struct StartFailure {
    /// Why, in words.
    pub why: String,
    /// `metadata.sandbox` (with `refused`) when `required` mode refused the command.
    pub refused: Option<serde_json::Value>,
}

impl From<String> for StartFailure {
    fn from(why: String) -> StartFailure {
        StartFailure { why, refused: None }
    }
}

/// Starts the supervisor of a recorded row and waits for its handshake: the command's
/// `metadata.sandbox`. `Err` says why it did not start (the row is then still `starting`;
/// the caller ends it). `unmask_all`: a `secret-shell` allow rule covers the command.
pub fn spawn_supervisor(
    ctx: &CallContext,
    kind: Background,
    id: i64,
    token: &str,
    unmask_all: bool,
) -> std::result::Result<serde_json::Value, StartFailure> {
    let session = ctx.session;
    // The running binary itself, even if its file was replaced since it started.
    let mut command = Command::new("/proc/self/exe");
    command
        .arg0("tinytool")
        .arg("--dir")
        .arg(&session.dir)
        .arg("--state")
        .arg(session.state.path());
    if let Some(events) = session.events.file_path() {
        command.arg("--events").arg(events);
    }
    if let Some(policy) = &session.policy_file {
        command.env(crate::process::environment::POLICY_VAR, policy);
    }
    let settings = crate::sandbox_settings::Settings {
        unmask_all,
        ..session.sandbox.clone()
    };
    command.env(crate::sandbox_settings::SETTINGS_VAR, settings.encode());
    // The call's open checkpoint goes to the supervisor, which closes it when the command
    // ends (`checkpoints::handoff`).
    let checkpoint = ctx.take_checkpoint_offer();
    command
        .arg(supervisor::SUBCOMMAND)
        .arg(supervisor::kind_name(kind))
        .arg(id.to_string());
    if let Some(checkpoint) = checkpoint {
        command.arg("--checkpoint").arg(checkpoint.to_string());
    }
    command
        .current_dir(&session.dir)
        .env(MARKER_VAR, token)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let (supervisor_pid, answer) = start_detached(command, HANDSHAKE_WAIT)
        .map_err(|e| format!("cannot start the supervisor: {e}"))?;
    let parse = |text: &str| serde_json::from_str::<serde_json::Value>(text).ok();
    // Recorded for every later read, stop or lookup of this row (`sandbox_of`).
    let record = |meta: &serde_json::Value| {
        let _ = session
            .state
            .write(|s| s.set_background_sandbox(kind, id, &meta.to_string()));
    };
    let outcome = match answer.as_deref() {
        Some(line) if line.starts_with("ok") => {
            // The supervisor adopts the checkpoint before it answers `ok`; only one it
            // did adopt is left open by the call.
            if let Some(checkpoint) = checkpoint
                && crate::checkpoints::handoff::adopted_by(session, checkpoint, supervisor_pid)
            {
                ctx.checkpoint_handed(checkpoint);
            }
            Ok(line
                .strip_prefix("ok ")
                .and_then(parse)
                .unwrap_or_else(|| crate::sandbox::metadata_of(None)))
        }
        Some(line) if let Some(refused) = line.strip_prefix("refused ").and_then(parse) => {
            Err(StartFailure {
                why: refused["message"]
                    .as_str()
                    .unwrap_or("the sandbox refused the command")
                    .to_string(),
                refused: Some(refused),
            })
        }
        Some(line) => Err(line
            .strip_prefix("error: ")
            .unwrap_or(line)
            .to_string()
            .into()),
        None => Err(format!(
            "the supervisor did not answer within {} s",
            HANDSHAKE_WAIT.as_secs()
        )
        .into()),
    };
    match &outcome {
        Ok(meta) => record(meta),
        Err(StartFailure {
            refused: Some(meta),
            ..
        }) => record(meta),
        Err(_) => {}
    }
    outcome
}

/// The `metadata.sandbox` of a monitor's or job's command as recorded when it started;
/// where none was (its supervisor never answered, or a row older than the record), the
/// session's mode with no layer and `"recorded": false`.
pub fn sandbox_of(session: &Session, kind: Background, id: i64) -> serde_json::Value {
    session
        .state
        .read(|s| s.background_sandbox(kind, id))
        .ok()
        .flatten()
        .flatten()
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or_else(|| {
            serde_json::json!({
                "mode": session.sandbox.mode.as_str(),
                "layers": [],
                "missing": [],
                "recorded": false,
            })
        })
}

/// The `metadata.sandbox` of a result about several monitors or jobs: the one they share,
/// or the first one's with every one by id in `by_id` when they differ (none: the
/// session's mode, `"recorded": false`).
pub fn sandbox_of_all(session: &Session, kind: Background, ids: &[i64]) -> serde_json::Value {
    let all: Vec<serde_json::Value> = ids
        .iter()
        .map(|&id| sandbox_of(session, kind, id))
        .collect();
    let Some(first) = all.first() else {
        return sandbox_of(session, kind, 0);
    };
    let mut meta = first.clone();
    if all.iter().any(|m| m != first) {
        meta["by_id"] = ids
            .iter()
            .zip(&all)
            .map(|(&id, m)| (kind.label(id), m.clone()))
            .collect::<serde_json::Map<_, _>>()
            .into();
    }
    meta
}

/// Starts `command` (whose stdout must be piped) in a session of its own, detached from
/// this process's terminal and signals, and returns its pid and the one handshake line it
/// answers within `wait` (`None`: it answered nothing, and was killed). It is reaped
/// whenever it ends, without waiting for it here: a long-lived `exec --jsonl` or `mcp`
/// process would otherwise collect zombies.
pub fn start_detached(
    mut command: Command,
    wait: Duration,
) -> std::io::Result<(u32, Option<String>)> {
    process::detach(&mut command);
    let mut child = command.spawn()?;
    let pid = child.id();
    let answer = child
        .stdout
        .take()
        .and_then(|pipe| read_line_within(pipe, wait));
    if answer.is_none() {
        // Killing it kills what it started (death signal, sentinel).
        let _ = child.kill();
    }
    let _ = std::thread::Builder::new()
        .name("detached".into())
        .spawn(move || {
            let _ = child.wait();
        });
    Ok((pid, answer))
}

/// Reads one line (without its newline) from a pipe, giving up at end of file or after
/// `wait`.
fn read_line_within(mut pipe: std::process::ChildStdout, wait: Duration) -> Option<String> {
    let until = Instant::now() + wait;
    let mut line = Vec::new();
    let mut buf = [0u8; 512];
    loop {
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return None;
        }
        let mut fds = [libc::pollfd {
            fd: pipe.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        }];
        let millis = left.as_millis().clamp(1, i32::MAX as u128) as libc::c_int;
        // SAFETY: one valid pollfd record for the whole call.
        let ready = unsafe { libc::poll(fds.as_mut_ptr(), 1, millis) };
        if ready <= 0 {
            continue;
        }
        match pipe.read(&mut buf) {
            Ok(0) => return None,
            Ok(n) => {
                line.extend_from_slice(&buf[..n]);
                if let Some(end) = line.iter().position(|b| *b == b'\n') {
                    line.truncate(end);
                    return Some(String::from_utf8_lossy(&line).into_owned());
                }
                if line.len() > 64 * 1024 {
                    return None;
                }
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(_) => return None,
        }
    }
}

/// The identity of a row's supervisor.
fn supervisor_identity(s: &Supervision) -> Identity {
    Identity {
        pid: i32::try_from(s.pid).unwrap_or(-1),
        start: u64::try_from(s.start).unwrap_or(0),
        boot_id: s.boot_id.clone(),
    }
}

/// Why an unfinished row must be ended now, and whether its supervisor is alive (and must
/// be killed); `None` when it is in order.
fn verdict(row: &Unfinished, now: i64) -> Option<(String, bool)> {
    match &row.supervision {
        None => (now - row.time_created > STARTING_GRACE_MS).then(|| {
            (
                format!(
                    "its supervisor did not start it within {} s",
                    STARTING_GRACE_MS / 1000
                ),
                false,
            )
        }),
        Some(s) => {
            if !supervisor_identity(s).is_alive() {
                Some((
                    format!(
                        "its supervisor (pid {}) died; what it had started was killed",
                        s.pid
                    ),
                    false,
                ))
            } else if now > row.deadline.saturating_add(OVERDUE_MS) {
                Some((
                    format!(
                        "its supervisor (pid {}) did not end it at its deadline; both were killed",
                        s.pid
                    ),
                    true,
                ))
            } else {
                None
            }
        }
    }
}

/// Kills what a row's supervisor left (and the supervisor itself when `supervisor`).
fn kill_row(row: &Unfinished, supervisor: bool) {
    if let Some(s) = &row.supervision {
        if supervisor {
            supervisor_identity(s).signal(libc::SIGKILL);
        }
        identity::kill_marked_group(i32::try_from(s.pgid).unwrap_or(0), &marker(&row.token));
    }
}

/// Settles unfinished rows of `kind` whose supervisor is gone or overdue (module doc) and
/// prunes finished work older than 7 days. Reads first and writes only when something
/// must change; does nothing when there is no state database.
pub fn reap(session: &Session, kind: Background) -> Result<()> {
    let now = unix_millis() as i64;
    let before = now - RETENTION_MS;
    let found = session
        .state
        .read(|s| Ok((s.unfinished(kind)?, s.has_prunable(before)?)))?;
    let Some((rows, prunable)) = found else {
        return Ok(());
    };
    for row in rows {
        let Some((reason, supervisor_alive)) = verdict(&row, now) else {
            continue;
        };
        kill_row(&row, supervisor_alive);
        end_row(session, kind, &row, "failed", &reason)?;
    }
    if prunable {
        session.state.write(|s| s.prune_background(before))?;
    }
    Ok(())
}

/// Publishes `job.completed` (`{jobID, status, result, error}`, plus the job's session).
fn publish_job_completed(
    events: &EventSink,
    job_session: &str,
    id: i64,
    status: &str,
    result: &str,
    error: &str,
) {
    if events.is_enabled() {
        events.publish(
            "job.completed",
            json!({
                "jobID": Background::Job.label(id),
                "status": status,
                "result": result,
                "error": error,
                "sessionID": job_session,
            }),
        );
    }
}

/// Ends an unfinished row the supervisor did not end, as `status` with `reason`; a job's
/// end is published as its supervisor would have.
fn end_row(
    session: &Session,
    kind: Background,
    row: &Unfinished,
    status: &str,
    reason: &str,
) -> Result<()> {
    let ended = session
        .state
        .write(|s| s.abandon(kind, row.id, status, reason))?;
    if ended && kind == Background::Job {
        publish_job_completed(&session.events, &row.session_id, row.id, status, "", reason);
    }
    Ok(())
}

/// Stops an unfinished row (module doc, "Stopping"); `Ok(false)` when it was not
/// unfinished. `status` is what the row ends as when the call has to end it itself.
pub fn stop(session: &Session, kind: Background, id: i64, status: &str) -> Result<bool> {
    let until = Instant::now() + STOP_WAIT;
    let mut signalled = false;
    let mut last: Option<Unfinished> = None;
    loop {
        let row = session
            .state
            .read(|s| s.unfinished(kind))?
            .unwrap_or_default()
            .into_iter()
            .find(|r| r.id == id);
        let Some(row) = row else {
            // Finished: by the supervisor (after killing and reaping its group), or
            // before this call.
            return Ok(last.is_some());
        };
        if !signalled && let Some(s) = &row.supervision {
            signalled = supervisor_identity(s).signal(libc::SIGTERM);
        }
        let gone = row
            .supervision
            .as_ref()
            .is_some_and(|s| !supervisor_identity(s).is_alive());
        if gone || Instant::now() >= until {
            kill_row(&row, !gone);
            let reason = if gone {
                "its supervisor died before it could record the stop"
            } else {
                "its supervisor did not answer; both were killed"
            };
            end_row(session, kind, &row, status, reason)?;
            return Ok(true);
        }
        last = Some(row);
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// The status a row is shown with: `starting` (its supervisor has not started the command
/// yet) shows as `running`.
pub fn shown_status(status: &str) -> &str {
    if status == "starting" {
        "running"
    } else {
        status
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_judged_by_their_supervisor() {
        let me = Identity::of_self().unwrap();
        let alive = Supervision {
            pid: i64::from(me.pid),
            start: me.start as i64,
            boot_id: me.boot_id.clone(),
            pgid: 0,
        };
        let row = |supervision: Option<Supervision>, created: i64, deadline: i64| Unfinished {
            id: 1,
            session_id: "s".into(),
            status: "running".into(),
            time_created: created,
            deadline,
            supervision,
            token: "t".into(),
        };
        let now = 1_000_000;
        assert_eq!(verdict(&row(Some(alive.clone()), now, now + 10), now), None);
        let overdue = verdict(&row(Some(alive.clone()), 0, now - OVERDUE_MS - 1), now);
        assert!(overdue.is_some_and(|(_, kill)| kill));
        let dead = Supervision {
            start: alive.start + 1,
            ..alive
        };
        let died = verdict(&row(Some(dead), now, now + 10), now).unwrap();
        assert!(died.0.contains("died") && !died.1, "{died:?}");
        assert_eq!(verdict(&row(None, now - 1_000, now + 10), now), None);
        assert!(verdict(&row(None, now - STARTING_GRACE_MS - 1, now + 10), now).is_some());
    }

    #[test]
    fn ids_round_trip() {
        assert_eq!(Background::Monitor.label(3), "mon_3");
        assert_eq!(Background::Monitor.parse("mon_3"), Some(3));
        assert_eq!(Background::Job.parse("job_12"), Some(12));
        for bad in ["mon_", "job_3", "mon_-1", "mon_0", "mon_1x", "3", ""] {
            assert_eq!(Background::Monitor.parse(bad), None, "{bad}");
        }
    }
}
