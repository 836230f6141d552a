//! Knowing a process again in a later tinytool call, without ever signalling a stranger
//! that got the same pid.
//!
//! A pid alone is not an identity: after a process dies its pid is reused. An
//! [`Identity`] adds what cannot repeat: the start time in clock ticks after boot (field 22
//! of `/proc/PID/stat`) and the boot id (`/proc/sys/kernel/random/boot_id`). A process
//! whose state is zombie counts as gone (it has exited; its children already got their
//! death signals).
//!
//! Signals go through a pidfd opened *before* the identity is checked, so that the process
//! checked is the process signalled (`pidfd_send_signal`); on kernels without pidfds a
//! plain `kill` follows the check.
//!
//! A process group is killed only when it is proven to be ours: [`kill_marked_group`]
//! requires a living member whose environment carries the marker variable its supervisor
//! was started with. Such a member keeps the group id allocated (the kernel never reuses a
//! pid that is still a group id), and only descendants of our own command can be in that
//! group (a process can only join a group of its own session), so every member is ours.

use std::fs;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

/// A process, recognisable across pid reuse and reboots.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    /// The process id.
    pub pid: i32,
    /// Its start time, clock ticks after boot.
    pub start: u64,
    /// The boot it belongs to.
    pub boot_id: String,
}

/// What tinytool reads of `/proc/PID/stat`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stat {
    state: u8,
    pgrp: i32,
    start: u64,
}

impl Identity {
    /// The identity of this process.
    pub fn of_self() -> io::Result<Identity> {
        let pid = std::process::id() as i32;
        Identity::of(pid).ok_or_else(|| io::Error::other("cannot read /proc/self/stat"))
    }

    /// The identity of a living process, `None` when there is none with that pid.
    pub fn of(pid: i32) -> Option<Identity> {
        let stat = stat(pid)?;
        Some(Identity {
            pid,
            start: stat.start,
            boot_id: boot_id(),
        })
    }

    /// Whether this very process is still running (a zombie is not).
    pub fn is_alive(&self) -> bool {
        self.pid > 0
            && self.boot_id == boot_id()
            && stat(self.pid).is_some_and(|s| s.start == self.start && !is_dead(s.state))
    }

    /// Sends `signal` to this very process; returns whether it was sent.
    pub fn signal(&self, signal: libc::c_int) -> bool {
        if self.pid <= 0 {
            return false;
        }
        match pidfd_open(self.pid) {
            Some(pidfd) => {
                // The pidfd pins the process: checked after opening it, the identity is
                // that of the process the pidfd refers to.
                if !self.is_alive() {
                    return false;
                }
                // SAFETY: pidfd_send_signal on a descriptor we own, without siginfo.
                let rc = unsafe {
                    libc::syscall(
                        libc::SYS_pidfd_send_signal,
                        pidfd.as_raw_fd(),
                        signal,
                        std::ptr::null::<libc::siginfo_t>(),
                        0,
                    )
                };
                rc == 0
            }
            None => {
                // SAFETY: kill has no memory-safety preconditions.
                self.is_alive() && unsafe { libc::kill(self.pid, signal) } == 0
            }
        }
    }
}

/// Kills process group `pgid` (SIGKILL) when one of its living members has `marker`
/// (`NAME=VALUE`) in its environment (module doc); returns whether it did.
pub fn kill_marked_group(pgid: i32, marker: &str) -> bool {
    if pgid <= 1 || marker.is_empty() {
        return false;
    }
    let Ok(entries) = fs::read_dir("/proc") else {
        return false;
    };
    let proven = entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| stat(*pid).is_some_and(|s| s.pgrp == pgid && !is_dead(s.state)))
        .any(|pid| carries(pid, marker));
    if proven {
        // SAFETY: kill has no memory-safety preconditions.
        unsafe {
            libc::kill(-pgid, libc::SIGKILL);
        }
    }
    proven
}

/// Whether a process's environment holds exactly the entry `marker`.
fn carries(pid: i32, marker: &str) -> bool {
    fs::read(format!("/proc/{pid}/environ")).is_ok_and(|env| {
        env.split(|b| *b == 0)
            .any(|entry| entry == marker.as_bytes())
    })
}

/// Zombie or dead states of `/proc/PID/stat`.
fn is_dead(state: u8) -> bool {
    matches!(state, b'Z' | b'X' | b'x')
}

fn stat(pid: i32) -> Option<Stat> {
    let text = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    parse_stat(&text)
}

/// Parses a `/proc/PID/stat` line. The command name (field 2) may hold spaces and
/// parentheses, so fields are counted from the last `)`.
fn parse_stat(text: &str) -> Option<Stat> {
    let (_, rest) = text.rsplit_once(')')?;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // Fields 3 (state), 5 (pgrp) and 22 (starttime), counted from 1.
    let state = *fields.first()?.as_bytes().first()?;
    let pgrp = fields.get(2)?.parse().ok()?;
    let start = fields.get(19)?.parse().ok()?;
    Some(Stat { state, pgrp, start })
}

/// This boot's id (empty when unreadable, which then never matches a recorded one
/// unless that was unreadable too).
pub fn boot_id() -> String {
    fs::read_to_string("/proc/sys/kernel/random/boot_id")
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

fn pidfd_open(pid: i32) -> Option<OwnedFd> {
    // SAFETY: pidfd_open takes a pid and flags and returns a new descriptor or -1.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
    if fd < 0 {
        return None;
    }
    // SAFETY: the descriptor was just created and is owned by nobody else.
    Some(unsafe { OwnedFd::from_raw_fd(fd as RawFd) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_lines_with_odd_names_parse() {
        let line =
            "1234 (a) b (c)) S 1 1200 1200 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 987654 1000 10";
        assert_eq!(
            parse_stat(line),
            Some(Stat {
                state: b'S',
                pgrp: 1200,
                start: 987654
            })
        );
        assert_eq!(parse_stat("garbage"), None);
    }

    #[test]
    fn this_process_is_alive_and_a_changed_start_time_is_not() {
        let me = Identity::of_self().unwrap();
        assert!(me.is_alive());
        let stranger = Identity {
            start: me.start + 1,
            ..me.clone()
        };
        assert!(!stranger.is_alive());
        assert!(!stranger.signal(0));
        assert!(me.signal(0));
        let other_boot = Identity {
            boot_id: "another boot".into(),
            ..me
        };
        assert!(!other_boot.is_alive());
    }

    #[test]
    fn only_a_marked_group_is_killed() {
        use std::os::unix::process::CommandExt;
        let marker = format!("TINYTOOL_SUPERVISED=test-{}", std::process::id());
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .env("TINYTOOL_SUPERVISED", marker.split_once('=').unwrap().1)
            .process_group(0)
            .spawn()
            .unwrap();
        let pgid = child.id() as i32;
        assert!(!kill_marked_group(pgid, "TINYTOOL_SUPERVISED=someone-else"));
        assert!(kill_marked_group(pgid, &marker));
        let status = child.wait().unwrap();
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(status.signal(), Some(libc::SIGKILL));
    }
}
