//! Killing what left a command's process group: processes that called `setsid` (a
//! `setsid daemon &`, a double-forking daemon, which may also ignore SIGTERM) escape the
//! group kill, yet must not outlive the call (bash) or the deadline (monitor, job).
//!
//! While a command runs, the process running it is a child subreaper (see `run`), so a
//! descendant whose parent dies becomes its child instead of init's. Every command gets a
//! token of its own in [`RUN_VAR`] (`TINYTOOL_RUN`), which all its descendants inherit;
//! when the command ends (exit, deadline, cancellation) and its group was killed and
//! reaped, [`kill_adopted`] SIGKILLs every child of this process whose environment
//! (`/proc/PID/environ`, readable for processes of the same user) carries the token, reaps
//! it, and looks again, because a killed daemon's own children are then adopted in turn
//! (a daemon caught between its two forks too). The subreaper flag stays on meanwhile.
//!
//! Only the token decides, so that what tinytool started for other reasons is left alone:
//! another call's command running concurrently in an MCP server (a token of its own), the
//! supervisors of monitors the server started. A nested tinytool appends its own token to
//! the inherited value (`outer:inner`), so that what a nested call left is still the outer
//! call's to kill. One exception: a monitor's or job's supervisor that a command started
//! through a nested tinytool (`tinytool monitor start` in a bash command, a subagent's
//! background work) is meant to outlive the call; it is recorded in the state database,
//! ends its work at its own deadline, and kills whatever escapes its own command the same
//! way. It is recognised by its `__supervise` argument and its supervision marker.
//!
//! The search is cheap when there is nothing to find: a `waitid` tells whether this
//! process has any child at all (a command-line tinytool has none once the group is
//! reaped), and only then are the children listed (`/proc/self/task/*/children`, else a
//! scan of `/proc/*/stat` for kernels without `CONFIG_PROC_CHILDREN`). Only direct
//! children are signalled: their pids cannot be reused before this process reaps them, so
//! a stranger is never hit.
//!
//! Known limits:
//! - A process that dropped the token (started with a fresh environment: `env -i`,
//!   `sudo`) cannot be told from tinytool's other children and is left alone.
//! - When tinytool itself is killed with SIGKILL, the sentinel kills the command's group,
//!   but what escaped it is then re-parented to init (or to tinytool's own subreaper) and
//!   nobody kills it.
//! - An escaped process that exits on its own while adopted stays a zombie of a
//!   long-lived process (an MCP server) until it exits: a zombie's environment cannot be
//!   read, and reaping an unknown child could steal another call's exit status.

use std::ffi::OsString;
use std::fs;
use std::hash::{BuildHasher, Hasher};
use std::io::ErrorKind;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// The variable carrying the tokens of the commands a process descends from, separated by
/// `:`, the innermost last.
const RUN_VAR: &str = "TINYTOOL_RUN";

/// The argument that names a supervisor process (`background::supervisor::SUBCOMMAND`).
const SUPERVISE_ARG: &[u8] = b"__supervise";

/// A fresh token, unique among the commands of this process and, thanks to a random part,
/// among those of any process.
pub fn fresh_token() -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    // The standard library seeds each `RandomState` from the operating system's randomness.
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u64(n);
    format!("{}-{n}-{:08x}", std::process::id(), hasher.finish() as u32)
}

/// Sets [`RUN_VAR`] in `env` to its inherited value with `token` appended.
pub fn mark(env: &mut Vec<(OsString, OsString)>, token: &str) {
    let inherited = env
        .iter()
        .position(|(name, _)| name == RUN_VAR)
        .map(|k| env.remove(k).1);
    let value = match inherited {
        Some(mut value) if !value.is_empty() => {
            value.push(":");
            value.push(token);
            value
        }
        _ => OsString::from(token),
    };
    env.push((OsString::from(RUN_VAR), value));
}

/// Kills and reaps every child of this process that carries `token` (module doc), and
/// those adopted while doing so. Signals at least once; waits for the killed ones to be
/// reaped until `until` at the latest.
pub fn kill_adopted(token: &str, until: Instant) {
    loop {
        if !has_children() {
            return;
        }
        let killed: Vec<libc::pid_t> = children()
            .into_iter()
            .filter(|pid| carries(*pid, token) && !is_supervisor(*pid))
            .filter(|pid| {
                // SAFETY: kill has no memory-safety preconditions; the pid is an unreaped
                // child of this process, so it cannot belong to anyone else.
                unsafe { libc::kill(*pid, libc::SIGKILL) == 0 }
            })
            .collect();
        if killed.is_empty() || !reap(&killed, until) {
            return;
        }
    }
}

/// Whether this process has any child, exited or not (without reaping it).
fn has_children() -> bool {
    // SAFETY: a zeroed siginfo_t is a valid out-parameter; waitid only writes to it.
    unsafe {
        let mut info: libc::siginfo_t = std::mem::zeroed();
        let rc = libc::waitid(
            libc::P_ALL,
            0,
            &mut info,
            libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
        );
        !(rc == -1 && std::io::Error::last_os_error().raw_os_error() == Some(libc::ECHILD))
    }
}

/// The children of every thread of this process.
fn children() -> Vec<libc::pid_t> {
    let Ok(tasks) = fs::read_dir("/proc/self/task") else {
        return children_by_scan();
    };
    let mut found = Vec::new();
    for task in tasks.flatten() {
        match fs::read_to_string(task.path().join("children")) {
            Ok(list) => found.extend(
                list.split_whitespace()
                    .filter_map(|p| p.parse::<libc::pid_t>().ok()),
            ),
            Err(err) if err.kind() == ErrorKind::NotFound && task.path().exists() => {
                // The thread is there but the kernel has no children lists.
                return children_by_scan();
            }
            // A thread that ended meanwhile.
            Err(_) => {}
        }
    }
    found
}

/// The children of this process found by their parent in `/proc/*/stat`.
fn children_by_scan() -> Vec<libc::pid_t> {
    let me = std::process::id() as libc::pid_t;
    let Ok(entries) = fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<libc::pid_t>().ok())
        .filter(|pid| {
            fs::read_to_string(format!("/proc/{pid}/stat"))
                .ok()
                .and_then(|stat| parent_in_stat(&stat))
                == Some(me)
        })
        .collect()
}

/// The parent (field 4) of a `/proc/PID/stat` line, counted from the last `)`, since the
/// command name may hold spaces and parentheses.
fn parent_in_stat(stat: &str) -> Option<libc::pid_t> {
    let (_, rest) = stat.rsplit_once(')')?;
    rest.split_whitespace().nth(1)?.parse().ok()
}

/// Whether the environment of `pid` has [`RUN_VAR`] with `token` among its tokens.
fn carries(pid: libc::pid_t, token: &str) -> bool {
    let Ok(env) = fs::read(format!("/proc/{pid}/environ")) else {
        return false;
    };
    environment_carries(&env, token)
}

/// Whether a NUL-separated environment has [`RUN_VAR`] with `token` among its tokens.
fn environment_carries(env: &[u8], token: &str) -> bool {
    let prefix = [RUN_VAR.as_bytes(), b"="].concat();
    env.split(|b| *b == 0)
        .filter_map(|entry| entry.strip_prefix(prefix.as_slice()))
        .any(|value| value.split(|b| *b == b':').any(|t| t == token.as_bytes()))
}

/// Whether `pid` is a monitor's or job's supervisor (module doc).
fn is_supervisor(pid: libc::pid_t) -> bool {
    let supervises = fs::read(format!("/proc/{pid}/cmdline"))
        .is_ok_and(|args| args.split(|b| *b == 0).any(|a| a == SUPERVISE_ARG));
    supervises
        && fs::read(format!("/proc/{pid}/environ")).is_ok_and(|env| {
            let prefix = [super::MARKER_VAR.as_bytes(), b"="].concat();
            env.split(|b| *b == 0).any(|e| e.starts_with(&prefix))
        })
}

/// Reaps the killed children; returns whether all were reaped before `until` (those still
/// dying then are reaped by the reaper thread as soon as they die).
fn reap(killed: &[libc::pid_t], until: Instant) -> bool {
    let mut left: Vec<libc::pid_t> = killed.to_vec();
    let mut nap = Duration::from_micros(20);
    loop {
        left.retain(|pid| {
            let mut status = 0;
            // SAFETY: waitpid writes the status into a valid integer.
            let rc = unsafe { libc::waitpid(*pid, &mut status, libc::WNOHANG) };
            // Still running (0); reaped or no longer ours (ECHILD) otherwise.
            rc == 0
        });
        if left.is_empty() {
            return true;
        }
        if Instant::now() >= until {
            for pid in left {
                super::reaper::reap_later(pid);
            }
            return false;
        }
        std::thread::sleep(nap);
        nap = (nap * 2).min(Duration::from_millis(2));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsStr;

    #[test]
    fn tokens_are_appended_to_the_inherited_value() {
        let mut env = vec![(OsString::from("PATH"), OsString::from("/bin"))];
        mark(&mut env, "a");
        assert_eq!(env[1], (OsString::from(RUN_VAR), OsString::from("a")));
        mark(&mut env, "b");
        let values: Vec<&OsStr> = env
            .iter()
            .filter(|(n, _)| n == RUN_VAR)
            .map(|(_, v)| v.as_os_str())
            .collect();
        assert_eq!(values, [OsStr::new("a:b")]);
        assert_ne!(fresh_token(), fresh_token());
    }

    #[test]
    fn only_the_whole_token_counts() {
        let env = b"PATH=/bin\0TINYTOOL_RUN=outer-1:inner-22\0X=inner-2\0";
        assert!(environment_carries(env, "outer-1"));
        assert!(environment_carries(env, "inner-22"));
        assert!(!environment_carries(env, "inner-2"));
        assert!(!environment_carries(env, "outer"));
        assert!(!environment_carries(
            b"NOT_TINYTOOL_RUN=inner-2\0",
            "inner-2"
        ));
    }

    #[test]
    fn parents_are_read_after_the_last_parenthesis() {
        assert_eq!(parent_in_stat("12 (a) b (c)) S 7 12 12 0"), Some(7));
        assert_eq!(parent_in_stat("garbage"), None);
    }

    #[test]
    fn children_are_listed_both_ways() {
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        let pid = child.id() as libc::pid_t;
        assert!(has_children());
        assert!(children().contains(&pid));
        assert!(children_by_scan().contains(&pid));
        child.kill().unwrap();
        child.wait().unwrap();
    }

    #[test]
    fn only_marked_children_are_killed_and_reaped() {
        let token = fresh_token();
        let mut env: Vec<(OsString, OsString)> = std::env::vars_os().collect();
        mark(&mut env, &token);
        let spawn = |env: &[(OsString, OsString)]| {
            std::process::Command::new("sleep")
                .arg("30")
                .env_clear()
                .envs(env.iter().map(|(k, v)| (k, v)))
                .spawn()
                .unwrap()
        };
        let mut marked = spawn(&env);
        let mut other = spawn(&[]);
        kill_adopted(&token, Instant::now() + Duration::from_secs(5));
        // Reaped already: there is nothing left to wait for.
        assert_eq!(
            marked.wait().unwrap_err().raw_os_error(),
            Some(libc::ECHILD)
        );
        assert_eq!(other.try_wait().unwrap(), None, "the other one still runs");
        other.kill().unwrap();
        other.wait().unwrap();
    }
}
