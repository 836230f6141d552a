//! The sentinel: a forked copy of a supervisor that joins the supervised command's process
//! group and kills that group when the supervisor dies, however it dies.
//!
//! The command's leader has `PR_SET_PDEATHSIG` = SIGKILL, but what the leader started does
//! not: a supervisor killed with SIGKILL would leave those processes running past their
//! deadline. The sentinel closes that hole from inside the group:
//!
//! 1. it drops every inherited descriptor (a copy of the write end of the command's stdin
//!    pipe would keep the command from ever seeing end of file, a copy of the caller's
//!    pipe would keep the caller waiting) and puts `/dev/null` on 0, 1 and 2;
//! 2. it blocks its death signal (taken with `sigwaitinfo`) and ignores the signals a
//!    group-wide stop or a terminal sends, so that it lasts until the SIGKILL that ends
//!    the whole group;
//! 3. it joins the group (`setpgid`, done by the parent too so that the sentinel is a member
//!    before the parent goes on; failure means the group is already gone and there is
//!    nothing to guard), asks for SIGUSR2 when its parent dies, and checks that the parent
//!    did not die before that;
//! 4. every time a signal arrives it compares its parent with the supervisor's pid: once
//!    it was reparented, it sends SIGKILL to its own group (itself included);
//! 5. it also kills the group at a backstop time (the command's deadline plus the time
//!    the supervisor needs to stop it at that deadline, plus a second): a supervisor that
//!    is alive but stopped or hung cannot keep its command past the deadline either.
//!
//! Because the sentinel is a member, the group id stays allocated while it lives: the
//! group it kills cannot be a stranger's. A stray SIGUSR2 (a command signalling its own
//! group) finds the parent alive and changes nothing.
//!
//! The fork may happen while other threads hold locks (an MCP server, the stdin feeder),
//! so the child only makes async-signal-safe system calls and never returns: no
//! allocation, no Rust runtime, `_exit` at the end.

use std::io;
use std::time::Duration;

/// The death signal the sentinel waits for.
const DEATH_SIGNAL: libc::c_int = libc::SIGUSR2;

/// Signals the sentinel ignores: a deadline's SIGTERM to the group, terminal signals.
const IGNORED: [libc::c_int; 7] = [
    libc::SIGTERM,
    libc::SIGINT,
    libc::SIGHUP,
    libc::SIGQUIT,
    libc::SIGTSTP,
    libc::SIGTTIN,
    libc::SIGTTOU,
];

/// Forks a sentinel for process group `pgid` (whose leader is a child of this process)
/// that kills the group when this process dies or, at the latest, `backstop` from now;
/// returns its pid.
pub fn spawn(pgid: libc::pid_t, backstop: Duration) -> io::Result<libc::pid_t> {
    // SAFETY: getpid has no preconditions.
    let parent = unsafe { libc::getpid() };
    let end = monotonic_ns().saturating_add(backstop.as_nanos().min(i64::MAX as u128) as i64);
    // SAFETY: fork has no preconditions; the child runs `guard`, which only makes
    // async-signal-safe calls and never returns.
    match unsafe { libc::fork() } {
        -1 => Err(io::Error::last_os_error()),
        // SAFETY: we are the freshly forked child (see `guard`).
        0 => unsafe { guard(parent, pgid, end) },
        pid => {
            // The parent moves the child too (as shells do), so that the sentinel is a
            // member when this returns, whichever of the two runs first.
            // SAFETY: setpgid on our own child, which never execs.
            unsafe {
                libc::setpgid(pid, pgid);
            }
            Ok(pid)
        }
    }
}

/// The sentinel's whole life (module doc, steps 1–4).
///
/// # Safety
/// Only to be called in a freshly forked child: it closes every descriptor and exits.
unsafe fn guard(parent: libc::pid_t, pgid: libc::pid_t, end: i64) -> ! {
    // SAFETY: every call below is an async-signal-safe system call wrapper taking plain
    // integers or pointers to locals and statics that live for the whole call.
    unsafe {
        // Seen as `tinytool-guard` in ps and top (its command line is the supervisor's).
        libc::prctl(
            libc::PR_SET_NAME,
            c"tinytool-guard".as_ptr() as libc::c_ulong,
            0,
            0,
            0,
        );
        close_from(3);
        let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDWR);
        if null >= 0 {
            for fd in 0..3 {
                libc::dup2(null, fd);
            }
            if null > 2 {
                libc::close(null);
            }
        }
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, DEATH_SIGNAL);
        libc::sigprocmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
        for signal in IGNORED {
            let mut ignore: libc::sigaction = std::mem::zeroed();
            ignore.sa_sigaction = libc::SIG_IGN;
            libc::sigemptyset(&mut ignore.sa_mask);
            libc::sigaction(signal, &ignore, std::ptr::null_mut());
        }
        if libc::setpgid(0, pgid) != 0 {
            libc::_exit(0);
        }
        libc::prctl(
            libc::PR_SET_PDEATHSIG,
            DEATH_SIGNAL as libc::c_ulong,
            0,
            0,
            0,
        );
        loop {
            let left = end.saturating_sub(monotonic_ns());
            if libc::getppid() != parent || left <= 0 {
                libc::kill(0, libc::SIGKILL);
                libc::_exit(0);
            }
            let wait = libc::timespec {
                tv_sec: (left / 1_000_000_000) as libc::time_t,
                tv_nsec: (left % 1_000_000_000) as libc::c_long,
            };
            libc::sigtimedwait(&set, std::ptr::null_mut(), &wait);
        }
    }
}

/// Nanoseconds on the monotonic clock (`clock_gettime` is async-signal-safe).
fn monotonic_ns() -> i64 {
    // SAFETY: a zeroed timespec is a valid out-parameter.
    unsafe {
        let mut now: libc::timespec = std::mem::zeroed();
        libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut now);
        (now.tv_sec as i64)
            .saturating_mul(1_000_000_000)
            .saturating_add(now.tv_nsec as i64)
    }
}

/// Closes every descriptor from `first` up (`close_range`, else one by one up to the
/// descriptor limit, at most 65,536).
///
/// # Safety
/// Closes descriptors other code may own: only for a forked child about to live on its own.
unsafe fn close_from(first: libc::c_int) {
    // SAFETY: plain system calls with integer arguments and a pointer to a local.
    unsafe {
        if libc::syscall(
            libc::SYS_close_range,
            first as libc::c_uint,
            libc::c_uint::MAX,
            0,
        ) == 0
        {
            return;
        }
        let mut limit: libc::rlimit = std::mem::zeroed();
        let max = if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) == 0 {
            limit.rlim_cur.min(65_536) as libc::c_int
        } else {
            4_096
        };
        for fd in first..max {
            libc::close(fd);
        }
    }
}
