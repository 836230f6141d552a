//! The sentinel: a member of every command's process group that kills the group when
//! tinytool dies, however it dies.
//!
//! The command's leader has `PR_SET_PDEATHSIG` = SIGKILL, and a handler kills the running
//! groups when tinytool gets SIGINT, SIGTERM or SIGHUP; but what the leader started has no
//! death signal, and SIGKILL cannot be handled: a tinytool killed with SIGKILL would leave
//! `sleep 300 &` running, re-parented to init, past its deadline. The sentinel closes that
//! hole from inside the group.
//!
//! # Where it comes from
//! A process can only join a group of its own session, and a foreground command (bash, a
//! foreground task) leads a session of its own, so that `ssh` and `sudo` have no terminal
//! to prompt on. So the sentinel is not forked by tinytool: the command's leader starts it
//! itself, in the forked child after `setsid` (or, under a supervisor, `setpgid`) and
//! before `exec` ([`Launcher::launch`]), where it is born a member of the new group. It is
//! cloned with `CLONE_PARENT`: the child of tinytool (of the thread that runs the
//! command), not of the command, which therefore never sees a child it did not start (a
//! shell's `wait`, a program waiting for all its children), and which tinytool reaps with
//! the rest of the group when the call ends.
//!
//! # What it does
//! 1. It drops every inherited descriptor first (a copy of the write end of an output
//!    pipe would keep tinytool from ever reading end of file, of the standard library's
//!    exec-error pipe keep the spawn waiting, of the write end of a subagent's stdin pipe
//!    keep the subagent from seeing the end of its prompt) and puts `/dev/null` on 0, 1
//!    and 2. Until it has run that far, the spawn does wait: that wait, and the one for
//!    its death at the end, are most of what the sentinel costs a call.
//! 2. It blocks every signal (its death signal is taken with `sigtimedwait`), so that
//!    nothing the command sends its group (a deadline's SIGTERM, a terminal's signals,
//!    SIGUSR1, SIGALRM) ends it: it lasts until the SIGKILL that ends the whole group: when the leader exits, at the deadline, on a
//!    cancellation, tinytool kills the group, sentinel included, and reaps it.
//! 3. It asks for SIGUSR2 when its parent dies and checks that the parent did not die
//!    before that.
//! 4. Every time a signal arrives it compares its parent with tinytool's pid: once it was
//!    re-parented, it sends SIGKILL to its own group (itself included).
//! 5. It also kills the group at a backstop time (the command's deadline plus the time
//!    tinytool needs to stop it at that deadline, plus a second): a tinytool that is alive
//!    but stopped or hung cannot keep its command past the deadline either.
//!
//! Because the sentinel is a member, the group id stays allocated while it lives (and,
//! as a zombie, until tinytool reaps it): the group it kills, or tinytool kills, cannot be
//! a stranger's. A stray SIGUSR2 (a command signalling its own group) finds the parent
//! alive and changes nothing.
//!
//! # When `exec` fails
//! The sentinel is started before `exec`, which can still fail (a missing program, an
//! argument list too long): the leader then exits at once and the spawn fails, leaving the
//! sentinel alone in its group. The leader records the group in a page shared with
//! tinytool ([`Witness`]) once the sentinel exists, so that the failed spawn can kill and
//! reap it.
//!
//! Both the leader and the sentinel run in a fork of a process that may have other
//! threads holding locks (an MCP server, the stdin feeder), so they only make
//! async-signal-safe system calls; the sentinel never returns: no allocation, no Rust
//! runtime, `_exit` at the end.

use std::io;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicI32, Ordering};
use std::time::Duration;

/// The death signal the sentinel waits for.
const DEATH_SIGNAL: libc::c_int = libc::SIGUSR2;

/// A page shared with the forked child, in which its leader records the group its
/// sentinel guards (module doc, "When `exec` fails"). Unmapped when dropped.
pub struct Witness {
    cell: NonNull<AtomicI32>,
}

impl Witness {
    /// Maps a fresh shared page (zero: no group recorded).
    pub fn new() -> io::Result<Witness> {
        // SAFETY: an anonymous shared mapping with no address hint touches no existing
        // memory; the result is checked before use.
        let page = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                size_of::<AtomicI32>(),
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if page == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let cell = NonNull::new(page.cast::<AtomicI32>())
            .ok_or_else(|| io::Error::other("mmap returned a null page"))?;
        Ok(Witness { cell })
    }

    /// The group whose sentinel the child started, if it started one.
    pub fn group(&self) -> Option<libc::pid_t> {
        // SAFETY: the page is mapped, zero-initialised and aligned while `self` lives.
        let pgid = unsafe { self.cell.as_ref() }.load(Ordering::SeqCst);
        (pgid > 0).then_some(pgid)
    }

    /// What the forked child needs to start a sentinel that kills its group when this
    /// process dies or, at the latest, `backstop` after it was started.
    pub fn launcher(&self, backstop: Duration) -> Launcher {
        Launcher {
            cell: self.cell.as_ptr() as usize,
            parent: std::process::id() as libc::pid_t,
            backstop_ns: backstop.as_nanos().min(i64::MAX as u128) as i64,
        }
    }
}

impl Drop for Witness {
    fn drop(&mut self) {
        // SAFETY: unmaps exactly the mapping made in `new`; nothing refers to it any more
        // (the child's copy of the launcher lives in the child's own address space).
        unsafe {
            libc::munmap(self.cell.as_ptr().cast(), size_of::<AtomicI32>());
        }
    }
}

/// Starts a sentinel from the forked child (see [`Launcher::launch`]): plain values, so it
/// can be moved into a `pre_exec` closure.
#[derive(Debug, Clone, Copy)]
pub struct Launcher {
    /// Address of the [`Witness`] cell (valid in the child, which has a copy of the
    /// mapping).
    cell: usize,
    /// tinytool's pid.
    parent: libc::pid_t,
    /// How long after its start the sentinel kills the group anyway.
    backstop_ns: i64,
}

impl Launcher {
    /// Starts the sentinel of the calling process's group, to be called in the forked
    /// child once it leads its group, before `exec`; then records the group in the
    /// witness. Returns in the child only (the sentinel never returns).
    ///
    /// # Safety
    /// Only in a child forked from the process that made the [`Witness`] (which must
    /// still be alive in that process), before `exec`: it clones the calling process.
    pub unsafe fn launch(&self) -> io::Result<()> {
        let end = monotonic_ns().saturating_add(self.backstop_ns);
        // SAFETY: getpgrp has no preconditions.
        let pgid = unsafe { libc::getpgrp() };
        // The sentinel is born with every signal blocked: the command runs as soon as the
        // leader execs, and a signal it sends its group at once (`kill -USR1 0`) must not
        // reach the sentinel before `guard` has run. The leader gets its mask back.
        // SAFETY: sigprocmask with a filled set and an out-parameter on this stack.
        let old = unsafe {
            let mut all: libc::sigset_t = std::mem::zeroed();
            let mut old: libc::sigset_t = std::mem::zeroed();
            libc::sigfillset(&mut all);
            libc::sigprocmask(libc::SIG_BLOCK, &all, &mut old);
            old
        };
        // SAFETY: the clone continues on a copy of this stack, as fork does, and only
        // runs `guard` (async-signal-safe calls only, never returns).
        let cloned = unsafe { clone_sibling() };
        if cloned != 0 {
            // SAFETY: restores the mask saved above.
            unsafe {
                libc::sigprocmask(libc::SIG_SETMASK, &old, std::ptr::null_mut());
            }
        }
        match cloned {
            -1 => Err(io::Error::last_os_error()),
            // SAFETY: we are the freshly cloned sentinel (see `guard`).
            0 => unsafe { guard(self.parent, end) },
            _ => {
                // SAFETY: the child has a copy of the shared mapping at the same address.
                unsafe { &*(self.cell as *const AtomicI32) }.store(pgid, Ordering::SeqCst);
                Ok(())
            }
        }
    }
}

/// Clones the calling process as a child of its parent (`CLONE_PARENT`), like `fork`
/// otherwise (a copy of the address space, the same stack pointer); returns 0 in the
/// clone, its pid in the caller, -1 on failure.
///
/// # Safety
/// As `fork`, and more: the C library does not know of the clone (no fork handlers, its
/// thread id cached for the caller), so the clone may only make plain system calls that
/// do not use the calling thread's id.
unsafe fn clone_sibling() -> libc::pid_t {
    let flags = (libc::CLONE_PARENT | libc::SIGCHLD) as libc::c_ulong;
    let none: libc::c_ulong = 0;
    // SAFETY: clone without a new stack or thread-id pointers behaves as fork; s390x
    // takes the stack argument first.
    let pid = unsafe {
        if cfg!(target_arch = "s390x") {
            libc::syscall(libc::SYS_clone, none, flags, none, none, none)
        } else {
            libc::syscall(libc::SYS_clone, flags, none, none, none, none)
        }
    };
    pid as libc::pid_t
}

/// The sentinel's whole life (module doc, "What it does").
///
/// # Safety
/// Only to be called in a freshly cloned child: it closes every descriptor and exits.
unsafe fn guard(parent: libc::pid_t, end: i64) -> ! {
    // SAFETY: every call below is an async-signal-safe system call wrapper taking plain
    // integers or pointers to locals and statics that live for the whole call.
    unsafe {
        // Every signal is blocked: whatever the command sends its own group (a deadline's
        // SIGTERM, SIGUSR1, SIGALRM, SIGPIPE, terminal signals) stays pending and harmless;
        // only SIGKILL (and SIGSTOP) can still end or stop it. The death signal is taken
        // with `sigtimedwait`. The clone was born with this mask ([`Launcher::launch`]);
        // set again so that `guard` does not depend on its caller.
        let mut all: libc::sigset_t = std::mem::zeroed();
        libc::sigfillset(&mut all);
        libc::sigprocmask(libc::SIG_BLOCK, &all, std::ptr::null_mut());
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
        libc::prctl(
            libc::PR_SET_PDEATHSIG,
            DEATH_SIGNAL as libc::c_ulong,
            0,
            0,
            0,
        );
        // Seen as `tinytool-guard` in ps and top (its command line is tinytool's); named
        // last, so that a process of that name is an armed sentinel.
        libc::prctl(
            libc::PR_SET_NAME,
            c"tinytool-guard".as_ptr() as libc::c_ulong,
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
