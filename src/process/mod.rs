//! Child processes that can neither hang a call nor outlive what they belong to, shared by
//! `bash`, `monitor` and `task`.
//!
//! - [`run`]: running one command to completion, deadline or cancellation with bounded
//!   output, its whole process group killed and reaped at the end (bash, a foreground
//!   task, and the command under a supervisor);
//! - [`environment`]: the environment a command gets (bash's rules: credential-looking
//!   variables removed, non-interactive defaults);
//! - `adopted`: killing what left the group (`setsid`, daemons) and was adopted by the
//!   subreaper while the command ran;
//! - `reaper`: reaping the killed members of a group as soon as they die, also after the
//!   call returned;
//! - `sentinel`: the member of every command's group, started by the command's leader
//!   before `exec`, that kills the group when tinytool dies, even of SIGKILL;
//! - [`identity`]: recognising a process again in a later call (pid + start time + boot
//!   id) and killing a group only when it is provably ours;
//! - [`detach`] and the signal handling shared by all of them.
//!
//! How background work (monitors, background tasks) is kept from leaking is described in
//! `background`, which builds on these pieces.

mod adopted;
pub mod command;
pub mod environment;
pub mod identity;
mod reaper;
pub mod run;
mod sentinel;
pub mod words;

use std::os::unix::process::CommandExt;
use std::process::Command;

/// The variable every supervised process carries (`TINYTOOL_SUPERVISED=<token>`): the
/// proof that a process group is ours when a later call kills what a dead supervisor
/// left (see [`identity::kill_marked_group`]).
pub const MARKER_VAR: &str = "TINYTOOL_SUPERVISED";

/// Makes `command` start detached: the leader of a new session (no controlling terminal,
/// out of the caller's process group, so neither a terminal's signals nor a group kill
/// aimed at the caller reach it) and without a death signal, so that it outlives the
/// call that started it. For supervisors only: everything they start dies with them.
pub fn detach(command: &mut Command) {
    // SAFETY: setsid is async-signal-safe and runs in the forked child before exec.
    unsafe {
        command.pre_exec(|| {
            if libc::setsid() == -1 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// Marks every descriptor from 3 up close-on-exec, first thing at start-up: what
/// tinytool's caller handed down (a directory, a socket, a pipe left open by a shell or an
/// agent framework) stays usable by tinytool itself but reaches no process it starts, so
/// no command gets a way around the sandbox's paths or network through it. tinytool's own
/// descriptors are close-on-exec from birth (the standard library opens them so).
pub fn keep_inherited_descriptors_from_children() {
    const CLOSE_RANGE_CLOEXEC: libc::c_uint = 1 << 2;
    // SAFETY: plain system call with integer arguments; it only sets descriptor flags.
    let marked = unsafe {
        libc::syscall(
            libc::SYS_close_range,
            3 as libc::c_uint,
            libc::c_uint::MAX,
            CLOSE_RANGE_CLOEXEC,
        )
    } == 0;
    if marked {
        return;
    }
    // Kernels before 5.11: each descriptor the process has.
    let Ok(listing) = std::fs::read_dir("/proc/self/fd") else {
        return;
    };
    let fds: Vec<libc::c_int> = listing
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse().ok())
        .filter(|&fd| fd > 2)
        .collect();
    for fd in fds {
        // SAFETY: sets a flag on a descriptor number; one closed meanwhile is EBADF.
        unsafe {
            let flags = libc::fcntl(fd, libc::F_GETFD);
            if flags >= 0 {
                libc::fcntl(fd, libc::F_SETFD, flags | libc::FD_CLOEXEC);
            }
        }
    }
}

/// Sends `signal` to process group `pgid` (nothing for a non-positive id).
pub fn kill_group(pgid: libc::pid_t, signal: libc::c_int) {
    if pgid > 0 {
        // SAFETY: kill has no memory-safety preconditions; a stale group is ESRCH.
        unsafe {
            libc::kill(-pgid, signal);
        }
    }
}

/// Makes SIGINT, SIGTERM and SIGHUP set `flag` instead of killing the process: a
/// supervisor then cancels its command (kills the group), records the end and exits.
/// Must be called before the first [`run::run_with`], which otherwise installs the
/// kill-and-die handler.
pub fn stop_on_signals(flag: crate::session::CancelFlag) {
    signals::stop_mode(flag);
}

/// Killing running process groups when tinytool is interrupted or terminated.
mod signals {
    use std::sync::atomic::{AtomicI32, Ordering};
    use std::sync::{Once, OnceLock};

    use crate::session::CancelFlag;

    /// Process groups of commands running now (0 = free slot). Many concurrent calls are
    /// not expected in one process; beyond the slots, the death signal alone applies.
    static GROUPS: [AtomicI32; 64] = [const { AtomicI32::new(0) }; 64];
    static INSTALL: Once = Once::new();
    /// Set in a supervisor: signals raise this flag instead of killing the process.
    static STOP: OnceLock<CancelFlag> = OnceLock::new();
    const SIGNALS: [libc::c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

    /// Installs the kill-and-die handler for SIGINT, SIGTERM and SIGHUP once (a signal
    /// that was ignored when tinytool started, as under `nohup`, stays ignored).
    pub fn install() {
        INSTALL.call_once(|| {
            for signal in SIGNALS {
                // SAFETY: sigaction with valid, zero-initialised records; the handler
                // only calls async-signal-safe functions.
                unsafe {
                    let mut old: libc::sigaction = std::mem::zeroed();
                    if libc::sigaction(signal, std::ptr::null(), &mut old) != 0
                        || old.sa_sigaction == libc::SIG_IGN
                    {
                        continue;
                    }
                    set_handler(
                        signal,
                        on_signal as extern "C" fn(libc::c_int) as usize,
                        true,
                    );
                }
            }
        });
    }

    /// Installs the flag-raising handler (see `stop_on_signals`), whatever was there.
    pub fn stop_mode(flag: CancelFlag) {
        let _ = STOP.set(flag);
        // Later `install` calls must not replace this handler.
        INSTALL.call_once(|| {});
        for signal in SIGNALS {
            // SAFETY: as in `install`; the handler only stores to an atomic.
            unsafe {
                set_handler(
                    signal,
                    on_stop as extern "C" fn(libc::c_int) as usize,
                    false,
                );
            }
        }
    }

    /// # Safety
    /// `handler` must be an `extern "C" fn(c_int)` that is async-signal-safe.
    unsafe fn set_handler(signal: libc::c_int, handler: usize, once: bool) {
        // SAFETY: a zeroed sigaction is valid; the fields set are plain values.
        unsafe {
            let mut new: libc::sigaction = std::mem::zeroed();
            new.sa_sigaction = handler;
            new.sa_flags = if once { libc::SA_RESETHAND } else { 0 };
            libc::sigemptyset(&mut new.sa_mask);
            libc::sigaction(signal, &new, std::ptr::null_mut());
        }
    }

    extern "C" fn on_signal(signal: libc::c_int) {
        for slot in &GROUPS {
            let pgid = slot.load(Ordering::SeqCst);
            if pgid > 0 {
                // SAFETY: kill is async-signal-safe.
                unsafe {
                    libc::kill(-pgid, libc::SIGKILL);
                }
            }
        }
        // The handler was reset to the default on entry: die of the same signal.
        // SAFETY: raise is async-signal-safe.
        unsafe {
            libc::raise(signal);
        }
    }

    extern "C" fn on_stop(_signal: libc::c_int) {
        if let Some(flag) = STOP.get() {
            flag.set();
        }
    }

    /// A running group, known to the handler until dropped.
    pub struct Registration(Option<usize>);

    impl Registration {
        /// Registers `pgid`.
        pub fn new(pgid: libc::pid_t) -> Registration {
            let slot = GROUPS.iter().position(|slot| {
                slot.compare_exchange(0, pgid, Ordering::SeqCst, Ordering::SeqCst)
                    .is_ok()
            });
            Registration(slot)
        }
    }

    impl Drop for Registration {
        fn drop(&mut self) {
            if let Some(k) = self.0 {
                GROUPS[k].store(0, Ordering::SeqCst);
            }
        }
    }
}
