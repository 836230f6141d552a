//! Reaping the killed members of a command's group, at once and for as long as it takes.
//!
//! When a command ends, its whole group is killed and the members that are tinytool's
//! children (the leader, the sentinel, leftovers adopted while tinytool is a subreaper) are
//! reaped before the call returns, waiting a fraction of a second at most ([`reap_group`]).
//! A member still dying by then (a loaded machine, uninterruptible sleep, a call already
//! past its hard stop, which gets no wait at all) would otherwise stay a zombie for as
//! long as tinytool runs: in an MCP server, for days. Such a group is handed to one reaper
//! thread, which waits for its members as they die and ends when no group is left.
//!
//! Only `waitpid(-pgid)` is used, never `waitpid(-1)`: another call's leader must stay for
//! its own thread to wait for. A group is let go when it is gone (`kill(-pgid, 0)` fails;
//! its id stays allocated while a zombie member is left, so it cannot be a stranger's
//! before that), when none of its members is tinytool's child any more (`ECHILD`: not
//! ours to reap), or after [`GIVE_UP`].

use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How long a handed-over group is waited for at most (a member in uninterruptible sleep
/// on a dead network file system may never die).
const GIVE_UP: Duration = Duration::from_secs(600);
/// The reaper's longest nap between two looks.
const NAP: Duration = Duration::from_millis(20);

/// What the reaper waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Target {
    /// The members of a process group.
    Group(libc::pid_t),
    /// One process (a leftover that had left the command's group, see `adopted`).
    Process(libc::pid_t),
}

impl Target {
    /// Whether something of it is still to be reaped.
    fn pending(self) -> bool {
        match self {
            Target::Group(pgid) => reap_dead(pgid) == Left::Ours,
            Target::Process(pid) => {
                let mut status = 0;
                // SAFETY: waitpid writes the status into a valid integer.
                let rc = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
                // Still running (0); reaped, or not ours (ECHILD), otherwise.
                rc == 0
            }
        }
    }
}

/// What the reaper waits for, with when each was handed over, and whether its thread runs.
struct Handed {
    groups: Vec<(Target, Instant)>,
    running: bool,
}

static HANDED: Mutex<Handed> = Mutex::new(Handed {
    groups: Vec::new(),
    running: false,
});

/// What is left of a group after reaping what could be reaped without waiting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Left {
    /// Nothing: the group is gone.
    Gone,
    /// Members, none of them tinytool's child.
    Others,
    /// Members of which some are tinytool's children, not dead yet.
    Ours,
}

/// Reaps every member of group `pgid` that is tinytool's child and already dead.
fn reap_dead(pgid: libc::pid_t) -> Left {
    loop {
        // SAFETY: kill with signal 0 only checks for existence.
        if unsafe { libc::kill(-pgid, 0) } != 0 {
            return Left::Gone;
        }
        let mut status = 0;
        // SAFETY: waitpid writes the status into a valid integer.
        let reaped = unsafe { libc::waitpid(-pgid, &mut status, libc::WNOHANG) };
        match reaped {
            0 => return Left::Ours,
            n if n > 0 => {}
            _ if std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) => {}
            _ => return Left::Others,
        }
    }
}

/// Reaps the (killed) members of group `pgid` that are tinytool's children, waiting for
/// them until `until` at most; those still dying then are handed to the reaper thread.
pub fn reap_group(pgid: libc::pid_t, until: Instant) {
    // A killed process is usually gone within a fraction of a millisecond (the sentinel
    // is always there to be reaped): a fixed 2 ms nap would cost every call 2 ms.
    let mut nap = Duration::from_micros(20);
    loop {
        match reap_dead(pgid) {
            Left::Gone => return,
            // A member's own children come to tinytool (the subreaper) when it dies:
            // worth the bounded wait, as before.
            Left::Others | Left::Ours if Instant::now() < until => {}
            Left::Others => return,
            Left::Ours => return hand_over(Target::Group(pgid)),
        }
        std::thread::sleep(nap);
        nap = (nap * 2).min(Duration::from_millis(2));
    }
}

/// Has the reaper thread reap process `pid`, a child of tinytool that was killed, as soon
/// as it dies.
pub fn reap_later(pid: libc::pid_t) {
    hand_over(Target::Process(pid));
}

/// Has the reaper thread wait for `target`.
fn hand_over(target: Target) {
    let mut handed = HANDED.lock().unwrap_or_else(|e| e.into_inner());
    if !handed.groups.iter().any(|(t, _)| *t == target) {
        handed.groups.push((target, Instant::now()));
    }
    if handed.running {
        return;
    }
    let spawned = std::thread::Builder::new()
        .name("reaper".into())
        .spawn(reaper);
    // Without a thread the zombie stays until tinytool ends, as before there was one.
    handed.running = spawned.is_ok();
}

/// The reaper thread: looks at every handed-over group, ever less often up to [`NAP`],
/// until none is left.
fn reaper() {
    let mut nap = Duration::from_micros(100);
    loop {
        {
            let mut handed = HANDED.lock().unwrap_or_else(|e| e.into_inner());
            handed
                .groups
                .retain(|(target, since)| target.pending() && since.elapsed() < GIVE_UP);
            if handed.groups.is_empty() {
                handed.running = false;
                return;
            }
        }
        std::thread::sleep(nap);
        nap = (nap * 2).min(NAP);
    }
}

/// The groups handed over and not settled yet.
#[cfg(test)]
fn pending() -> usize {
    HANDED.lock().map(|h| h.groups.len()).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::CommandExt;

    #[test]
    fn a_member_still_dying_at_the_deadline_is_reaped_by_the_thread() {
        // A group of its own whose leader ignores nothing but takes a moment to die: it is
        // given no time at all, so the thread must reap it.
        let mut command = std::process::Command::new("sleep");
        command.arg("30").process_group(0);
        let child = command.spawn().unwrap();
        let pid = child.id() as libc::pid_t;
        // SAFETY: signals the group just made.
        unsafe { libc::kill(-pid, libc::SIGKILL) };
        reap_group(pid, Instant::now());
        let deadline = Instant::now() + Duration::from_secs(10);
        // SAFETY: kill with signal 0 only checks for existence.
        while unsafe { libc::kill(pid, 0) } == 0 {
            assert!(
                Instant::now() < deadline,
                "the killed leader was never reaped"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
        drop(child);
        let deadline = Instant::now() + Duration::from_secs(10);
        while pending() > 0 {
            assert!(Instant::now() < deadline, "the reaper kept a settled group");
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}
