//! Running one shell command so that it can neither hang the call nor outlive it.
//!
//! - `sh -c COMMAND` starts in the working directory as the leader of a new session (so
//!   a new process group, and no controlling terminal: `ssh`, `sudo` and friends cannot
//!   open `/dev/tty` to ask for a password), with stdin `/dev/null` (so `read x` gets end
//!   of file even when tinytool's own stdin is an open pipe) and the environment of
//!   `environment`.
//! - The shell gets `PR_SET_PDEATHSIG` = SIGKILL: if tinytool is killed, so is it. A
//!   SIGINT/SIGTERM/SIGHUP handler kills every running group before tinytool dies of the
//!   signal. (A SIGKILL of tinytool cannot be caught: then only the shell itself dies,
//!   and what it started in the background may survive.)
//! - stdout and stderr are read with `poll` into two bounded captures, so memory does not
//!   depend on how much the command prints. A pidfd (or, on kernels without one, a 10 ms
//!   tick) wakes the loop when the shell exits.
//! - When the shell exits, everything left in its group is killed (SIGKILL) before the
//!   shell is reaped (the zombie keeps the group id from being reused), what is already
//!   in the pipes is read for at most 250 ms more, and the call returns: a background
//!   process holding the pipes open never makes it wait.
//! - During the call tinytool is a child subreaper (`PR_SET_CHILD_SUBREAPER`), so the
//!   killed leftovers become its children and are reaped before the call returns: not
//!   even a zombie of the command is left behind.
//! - A cancelled call (MCP `notifications/cancelled`) kills the group at once.
//! - At the deadline the group gets SIGTERM (and SIGCONT, so stopped processes see it),
//!   then SIGKILL 500 ms later if the shell is still there; the call returns within
//!   timeout + 1 s even if the shell cannot be reaped.

use std::ffi::OsString;
use std::io::{self, ErrorKind, Read};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::session::CancelFlag;
use crate::truncate::{Capture, Limits};

/// Time between SIGTERM and SIGKILL on timeout.
pub const GRACE: Duration = Duration::from_millis(500);
/// How long output is still read after the shell exited.
pub const DRAIN: Duration = Duration::from_millis(250);
/// The latest a timed-out call returns, after its deadline.
pub const HARD_STOP: Duration = Duration::from_millis(950);
/// How often a cancellation is looked for while a command runs.
const CANCEL_TICK: Duration = Duration::from_millis(50);
/// How long the killed leftovers of a group are waited for.
const REAP: Duration = Duration::from_millis(200);
/// Bytes read per `read` call.
const CHUNK: usize = 256 * 1024;
/// The pipe buffer asked for (the default is 64 KiB).
const PIPE_SIZE: libc::c_int = 1024 * 1024;
/// Reads per stream per loop turn, so one flooding stream cannot starve the timers.
const READS_PER_TURN: usize = 16;

/// What to run.
#[derive(Debug, Clone)]
pub struct Request<'a> {
    /// The command line, run as `sh -c COMMAND`.
    pub command: &'a str,
    /// The working directory.
    pub dir: &'a Path,
    /// The whole environment of the child.
    pub env: Vec<(OsString, OsString)>,
    /// When to stop it.
    pub timeout: Duration,
    /// Limits of the output captures.
    pub limits: Limits,
    /// Set when the call is cancelled (MCP `notifications/cancelled`): the group is killed
    /// at once, as the reference kills a command whose context is cancelled.
    pub cancel: Option<CancelFlag>,
}

/// How the shell ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// It exited with this status.
    Exited(i32),
    /// A signal ended it.
    Signaled {
        /// The signal number.
        signal: i32,
        /// Whether it dumped core.
        core: bool,
    },
}

/// A finished run.
#[derive(Debug)]
pub struct Finished {
    /// What it wrote to stdout (bounded).
    pub stdout: Capture,
    /// What it wrote to stderr (bounded).
    pub stderr: Capture,
    /// How the shell ended.
    pub ending: Ending,
    /// Whether the deadline ended it.
    pub timed_out: bool,
    /// Whether a cancellation ended it.
    pub cancelled: bool,
    /// How long the call took.
    pub duration: Duration,
}

/// Runs a command to completion, timeout or kill (see the module doc). `Err` only when
/// the shell cannot be started or the pipes cannot be watched.
pub fn run(request: Request) -> io::Result<Finished> {
    signals::install();
    let _subreaper = Subreaper::enter();
    let start = Instant::now();
    let mut child = spawn(&request)?;
    let pid = child.id() as libc::pid_t;
    let _registered = signals::Registration::new(pid);
    let result = watch(&mut child, pid, &request, start);
    if result.is_err() {
        kill_group(pid, libc::SIGKILL);
        let _ = child.wait();
    }
    let hard_stop = start + request.timeout + HARD_STOP;
    reap_group(pid, (Instant::now() + REAP).min(hard_stop));
    result
}

/// Reaps the (killed) members of a group that became tinytool's children, until none is
/// left or `until`.
fn reap_group(pgid: libc::pid_t, until: Instant) {
    loop {
        // SAFETY: kill with signal 0 only checks for existence.
        let members_left = unsafe { libc::kill(-pgid, 0) } == 0;
        if !members_left {
            return;
        }
        let mut status = 0;
        // SAFETY: waitpid writes the status into a valid integer.
        let reaped = unsafe { libc::waitpid(-pgid, &mut status, libc::WNOHANG) };
        if reaped > 0 {
            continue;
        }
        if Instant::now() >= until {
            return;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// While any command runs, orphaned descendants become tinytool's children
/// (`PR_SET_CHILD_SUBREAPER`), so that killed leftovers can be reaped; outside calls the
/// flag is off, so processes that escaped a command's group are not adopted for good.
struct Subreaper;

static RUNNING: std::sync::Mutex<usize> = std::sync::Mutex::new(0);

impl Subreaper {
    fn enter() -> Subreaper {
        let mut running = RUNNING.lock().unwrap_or_else(|e| e.into_inner());
        if *running == 0 {
            set_subreaper(1);
        }
        *running += 1;
        Subreaper
    }
}

impl Drop for Subreaper {
    fn drop(&mut self) {
        let mut running = RUNNING.lock().unwrap_or_else(|e| e.into_inner());
        *running = running.saturating_sub(1);
        if *running == 0 {
            set_subreaper(0);
        }
    }
}

fn set_subreaper(on: libc::c_ulong) {
    // SAFETY: prctl with integer arguments; failure only means no reaping.
    unsafe {
        libc::prctl(libc::PR_SET_CHILD_SUBREAPER, on, 0, 0, 0);
    }
}

fn spawn(request: &Request) -> io::Result<Child> {
    let parent = std::process::id() as libc::pid_t;
    let mut command = Command::new("sh");
    command
        .arg("-c")
        .arg(request.command)
        .current_dir(request.dir)
        .env_clear()
        .envs(request.env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // SAFETY: the closure runs in the forked child before exec and only makes
    // async-signal-safe system calls (setsid, prctl, getppid, raise).
    unsafe {
        command.pre_exec(move || {
            if libc::setsid() == -1 {
                return Err(io::Error::last_os_error());
            }
            libc::prctl(
                libc::PR_SET_PDEATHSIG,
                libc::SIGKILL as libc::c_ulong,
                0,
                0,
                0,
            );
            // tinytool died between fork and prctl: the death signal would never come.
            if libc::getppid() != parent {
                libc::raise(libc::SIGKILL);
            }
            Ok(())
        });
    }
    command.spawn()
}

/// One output stream being read.
struct Stream {
    fd: Option<std::fs::File>,
    capture: Capture,
}

impl Stream {
    fn new(fd: Option<OwnedFd>, limits: Limits) -> io::Result<Stream> {
        if let Some(fd) = &fd {
            set_nonblocking(fd.as_raw_fd())?;
            // A larger pipe means fewer wake-ups for a command that prints a lot; failure
            // (a lower system limit) only costs speed.
            // SAFETY: fcntl on a descriptor we own, with integer arguments.
            unsafe {
                libc::fcntl(fd.as_raw_fd(), libc::F_SETPIPE_SZ, PIPE_SIZE);
            }
        }
        Ok(Stream {
            fd: fd.map(std::fs::File::from),
            capture: Capture::new(limits),
        })
    }

    fn is_open(&self) -> bool {
        self.fd.is_some()
    }

    /// Reads what is available; closes the stream at end of file or on error.
    fn read_available(&mut self, buf: &mut [u8]) {
        let Some(file) = &mut self.fd else { return };
        for _ in 0..READS_PER_TURN {
            match file.read(buf) {
                Ok(0) => {
                    self.fd = None;
                    return;
                }
                Ok(n) => self.capture.push(&buf[..n]),
                Err(err) if err.kind() == ErrorKind::Interrupted => {}
                Err(err) if err.kind() == ErrorKind::WouldBlock => return,
                Err(_) => {
                    self.fd = None;
                    return;
                }
            }
        }
    }
}

fn watch(
    child: &mut Child,
    pid: libc::pid_t,
    request: &Request,
    start: Instant,
) -> io::Result<Finished> {
    let stdout = child.stdout.take().map(OwnedFd::from);
    let stderr = child.stderr.take().map(OwnedFd::from);
    let mut streams = [
        Stream::new(stdout, request.limits)?,
        Stream::new(stderr, request.limits)?,
    ];
    let pidfd = pidfd_open(pid);
    let deadline = start + request.timeout;
    let hard_stop = deadline + HARD_STOP;
    let mut buf = vec![0u8; CHUNK];
    let mut timed_out = false;
    let mut cancelled = false;
    let mut kill_at: Option<Instant> = None;
    let mut ending: Option<Ending> = None;
    let mut drain_until: Option<Instant> = None;
    loop {
        if ending.is_none() && has_exited(pid) {
            // Leftovers die while the unreaped shell still holds the group id.
            kill_group(pid, libc::SIGKILL);
            let status = child.wait()?;
            ending = Some(match (status.code(), status.signal()) {
                (Some(code), _) => Ending::Exited(code),
                (None, Some(signal)) => Ending::Signaled {
                    signal,
                    core: status.core_dumped(),
                },
                (None, None) => Ending::Exited(-1),
            });
            let mut until = Instant::now() + DRAIN;
            if timed_out {
                until = until.min(hard_stop);
            }
            drain_until = Some(until);
        }
        let now = Instant::now();
        if let Some(until) = drain_until
            && (now >= until || streams.iter().all(|s| !s.is_open()))
        {
            break;
        }
        if ending.is_none() {
            if !cancelled && request.cancel.as_ref().is_some_and(CancelFlag::is_set) {
                cancelled = true;
                kill_group(pid, libc::SIGKILL);
            }
            if !timed_out && now >= deadline {
                timed_out = true;
                kill_group(pid, libc::SIGTERM);
                kill_group(pid, libc::SIGCONT);
                kill_at = Some(now + GRACE);
            }
            if let Some(at) = kill_at
                && now >= at
            {
                kill_group(pid, libc::SIGKILL);
                kill_at = None;
            }
            if timed_out && now >= hard_stop {
                // The shell cannot be reaped (uninterruptible sleep): give up on it.
                ending = Some(Ending::Signaled {
                    signal: libc::SIGKILL,
                    core: false,
                });
                break;
            }
        }
        let wake = [
            (!timed_out && ending.is_none()).then_some(deadline),
            kill_at,
            (timed_out && ending.is_none()).then_some(hard_stop),
            drain_until,
        ]
        .into_iter()
        .flatten()
        .min();
        let mut wait = wake.map_or(Duration::from_secs(1), |w| w.saturating_duration_since(now));
        let watch_exit = ending.is_none();
        if watch_exit && pidfd.is_none() {
            wait = wait.min(Duration::from_millis(10));
        }
        if watch_exit && request.cancel.is_some() {
            wait = wait.min(CANCEL_TICK);
        }
        poll_and_read(
            &mut streams,
            pidfd.as_ref().filter(|_| watch_exit),
            wait,
            &mut buf,
        )?;
    }
    let [out, err] = streams;
    Ok(Finished {
        stdout: out.capture,
        stderr: err.capture,
        ending: ending.unwrap_or(Ending::Exited(-1)),
        timed_out,
        cancelled,
        duration: start.elapsed(),
    })
}

fn poll_and_read(
    streams: &mut [Stream; 2],
    pidfd: Option<&OwnedFd>,
    wait: Duration,
    buf: &mut [u8],
) -> io::Result<()> {
    let mut fds: Vec<libc::pollfd> = Vec::with_capacity(3);
    let mut owners: Vec<Option<usize>> = Vec::with_capacity(3);
    for (k, stream) in streams.iter().enumerate() {
        if let Some(fd) = &stream.fd {
            fds.push(libc::pollfd {
                fd: fd.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            });
            owners.push(Some(k));
        }
    }
    if let Some(pidfd) = pidfd {
        fds.push(libc::pollfd {
            fd: pidfd.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        });
        owners.push(None);
    }
    // Round up so that a wait of a few microseconds does not spin.
    let millis = wait.as_micros().div_ceil(1000).min(i32::MAX as u128) as libc::c_int;
    if fds.is_empty() {
        std::thread::sleep(wait);
        return Ok(());
    }
    // SAFETY: `fds` is a valid array of `fds.len()` pollfd records for the whole call.
    let ready = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, millis) };
    if ready < 0 {
        let err = io::Error::last_os_error();
        return if err.kind() == ErrorKind::Interrupted {
            Ok(())
        } else {
            Err(err)
        };
    }
    for (pfd, owner) in fds.iter().zip(owners) {
        if let Some(k) = owner
            && pfd.revents != 0
        {
            streams[k].read_available(buf);
        }
    }
    Ok(())
}

/// Whether the process has exited, without reaping it.
fn has_exited(pid: libc::pid_t) -> bool {
    // SAFETY: a zeroed siginfo_t is a valid out-parameter; waitid only writes to it.
    unsafe {
        let mut info: libc::siginfo_t = std::mem::zeroed();
        let rc = libc::waitid(
            libc::P_PID,
            pid as libc::id_t,
            &mut info,
            libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
        );
        rc == 0 && info.si_pid() != 0
    }
}

fn kill_group(pgid: libc::pid_t, signal: libc::c_int) {
    if pgid > 0 {
        // SAFETY: kill has no memory-safety preconditions; a stale group is ESRCH.
        unsafe {
            libc::kill(-pgid, signal);
        }
    }
}

/// A pidfd for `pid` (Linux ≥ 5.3), readable once the process exits.
fn pidfd_open(pid: libc::pid_t) -> Option<OwnedFd> {
    // SAFETY: pidfd_open takes a pid and flags and returns a new descriptor or -1.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
    if fd < 0 {
        return None;
    }
    // SAFETY: the descriptor was just created and is owned by nobody else.
    Some(unsafe { OwnedFd::from_raw_fd(fd as RawFd) })
}

fn set_nonblocking(fd: RawFd) -> io::Result<()> {
    // SAFETY: fcntl on a descriptor we own, with integer arguments.
    unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        if flags < 0 || libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK) < 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Killing running process groups when tinytool is interrupted or terminated.
mod signals {
    use std::sync::Once;
    use std::sync::atomic::{AtomicI32, Ordering};

    /// Process groups of commands running now (0 = free slot). Many concurrent calls are
    /// not expected in one process; beyond the slots, the death signal alone applies.
    static GROUPS: [AtomicI32; 64] = [const { AtomicI32::new(0) }; 64];
    static INSTALL: Once = Once::new();

    /// Installs the handler for SIGINT, SIGTERM and SIGHUP once (a signal that was
    /// ignored when tinytool started, as under `nohup`, stays ignored).
    pub fn install() {
        INSTALL.call_once(|| {
            for signal in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
                // SAFETY: sigaction with valid, zero-initialised records; the handler
                // only calls async-signal-safe functions.
                unsafe {
                    let mut old: libc::sigaction = std::mem::zeroed();
                    if libc::sigaction(signal, std::ptr::null(), &mut old) != 0
                        || old.sa_sigaction == libc::SIG_IGN
                    {
                        continue;
                    }
                    let mut new: libc::sigaction = std::mem::zeroed();
                    new.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as usize;
                    new.sa_flags = libc::SA_RESETHAND;
                    libc::sigemptyset(&mut new.sa_mask);
                    libc::sigaction(signal, &new, std::ptr::null_mut());
                }
            }
        });
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

#[cfg(test)]
mod tests {
    use super::*;

    fn run_sh(command: &str, timeout_ms: u64) -> Finished {
        let dir = std::env::temp_dir();
        run(Request {
            command,
            dir: &dir,
            env: std::env::vars_os().collect(),
            timeout: Duration::from_millis(timeout_ms),
            limits: Limits::default(),
            cancel: None,
        })
        .unwrap()
    }

    #[test]
    fn exit_status_and_streams() {
        let done = run_sh("echo out; echo err >&2; exit 3", 10_000);
        assert_eq!(done.ending, Ending::Exited(3));
        assert!(!done.timed_out);
        assert_eq!(done.stdout.finish().text, "out\n");
        assert_eq!(done.stderr.finish().text, "err\n");
    }

    #[test]
    fn a_signal_is_reported() {
        let done = run_sh("kill -TERM $$", 10_000);
        assert_eq!(
            done.ending,
            Ending::Signaled {
                signal: libc::SIGTERM,
                core: false
            }
        );
    }

    #[test]
    fn a_cancellation_kills_the_group() {
        let cancel = CancelFlag::default();
        let setter = cancel.clone();
        let waker = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(100));
            setter.set();
        });
        let dir = std::env::temp_dir();
        let done = run(Request {
            command: "echo started; sleep 30",
            dir: &dir,
            env: std::env::vars_os().collect(),
            timeout: Duration::from_secs(60),
            limits: Limits::default(),
            cancel: Some(cancel),
        })
        .unwrap();
        waker.join().unwrap();
        assert!(done.cancelled);
        assert!(!done.timed_out);
        assert_eq!(
            done.ending,
            Ending::Signaled {
                signal: libc::SIGKILL,
                core: false
            }
        );
        assert_eq!(done.stdout.finish().text, "started\n");
    }

    #[test]
    fn the_deadline_stops_the_group() {
        let done = run_sh("trap '' TERM; sleep 30", 200);
        assert!(done.timed_out);
        assert!(matches!(done.ending, Ending::Signaled { signal, .. } if signal == libc::SIGKILL));
    }
}
