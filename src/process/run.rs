//! Running one command so that it can neither hang its caller nor outlive it.
//!
//! - The command (`sh -c COMMAND` for bash and monitor, a program with arguments for a
//!   subagent) starts in the working directory with stdin `/dev/null` (so `read x` gets
//!   end of file even when tinytool's own stdin is an open pipe) or a pipe fed with the
//!   given bytes (a subagent's prompt), and the environment it is given (see
//!   `environment`).
//! - Isolation ([`Isolation`]): as the leader of a new session (bash, a foreground task: a
//!   new process group and no controlling terminal, so `ssh`, `sudo` and friends cannot
//!   open `/dev/tty` to ask for a password), or, under a supervisor that is itself a
//!   session leader without a terminal, as the leader of a new process group.
//! - Nothing in the group outlives tinytool, however tinytool dies. The leader gets
//!   `PR_SET_PDEATHSIG` = SIGKILL; a SIGINT/SIGTERM/SIGHUP handler kills every running
//!   group before tinytool dies of the signal (or, in a supervisor, asks the running
//!   command to stop: [`super::stop_on_signals`]); and before `exec` the leader starts a
//!   sentinel in its group (see `sentinel`), a child of tinytool that kills the whole group
//!   when tinytool disappears, SIGKILL included, or when it is still there (stopped, hung)
//!   about two seconds past the deadline. Its cost is one more clone per command, with no
//!   effect on what the command sees: the sentinel is not its child and holds none of its
//!   descriptors.
//! - stdout and stderr are read with `poll` and handed to a [`Watcher`]: [`run`] keeps them
//!   in two bounded captures, so memory does not depend on how much the command prints; a
//!   monitor's supervisor splits them into lines. A pidfd (or, on kernels without one, a
//!   10 ms tick) wakes the loop when the leader exits.
//! - When the leader exits, everything left in its group is killed (SIGKILL), the sentinel
//!   included, before the leader is reaped (the zombie keeps the group id from being
//!   reused), what is already in the pipes is read for at most 250 ms more, and the call
//!   returns: a background process holding the pipes open never makes it wait.
//! - While a command runs, tinytool is a child subreaper (`PR_SET_CHILD_SUBREAPER`), so the
//!   killed leftovers become its children and are reaped before the call returns: not
//!   even a zombie of the command is left behind (the sentinel is its child anyway). What
//!   is still dying after a short wait is reaped by a thread as soon as it dies (see
//!   `reaper`).
//! - What left the group (`setsid`, a double-forking daemon) was adopted the same way; it
//!   carries the command's token in `TINYTOOL_RUN` and is killed and reaped next (see
//!   `adopted`), still before the subreaper flag goes.
//! - A cancellation ([`Request::cancel`]: an MCP `notifications/cancelled`, a monitor's
//!   `stop`, a job's `cancel`) kills the group at once.
//! - At the deadline the group gets SIGTERM (and SIGCONT, so stopped processes see it),
//!   then SIGKILL 500 ms later if the leader is still there; the call returns within
//!   timeout + 1 s even if the leader cannot be reaped.
//! - A spawn that fails after the sentinel started (`exec` of a missing program) kills and
//!   reaps the sentinel before it returns the error.

use std::ffi::OsString;
use std::io::{self, ErrorKind, Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::time::{Duration, Instant};

use super::reaper::reap_group;
use super::sentinel::{Launcher, Witness};
use super::{adopted, kill_group};
use crate::session::{CancelFlag, Session};
use crate::truncate::{Capture, Limits};

/// Time between SIGTERM and SIGKILL on timeout.
const GRACE: Duration = Duration::from_millis(500);
/// How long output is still read after the leader exited.
const DRAIN: Duration = Duration::from_millis(250);
/// The latest a timed-out call returns, after its deadline.
const HARD_STOP: Duration = Duration::from_millis(950);
/// How long after the latest tinytool stops a command at its deadline the sentinel kills
/// the group itself (tinytool is then stopped or hung).
const BACKSTOP: Duration = Duration::from_secs(1);
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

/// What to start.
#[derive(Debug, Clone, Copy)]
pub enum Program<'a> {
    /// A command line, run as `sh -c COMMAND`.
    Shell(&'a str),
    /// A program and its arguments (a subagent command from the config).
    Argv(&'a [String]),
}

/// How the command is separated from the process that runs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Isolation {
    /// The leader of a new session: a new process group without a controlling terminal.
    Session,
    /// The leader of a new process group in the caller's session. For supervisors, which
    /// are session leaders without a terminal themselves and are found again through the
    /// group (see `background`).
    Group,
}

/// What to run.
#[derive(Debug, Clone)]
pub struct Request<'a> {
    /// The program.
    pub program: Program<'a>,
    /// The working directory.
    pub dir: &'a Path,
    /// The whole environment of the child.
    pub env: Vec<(OsString, OsString)>,
    /// What the child's stdin is.
    pub stdin: Input<'a>,
    /// When to stop it.
    pub timeout: Duration,
    /// Limits of the output captures of [`run`] (unused by [`run_with`]).
    pub limits: Limits,
    /// Set when the call is cancelled (MCP `notifications/cancelled`, a monitor's stop, a
    /// job's cancel): the group is killed at once, as the reference kills a command whose
    /// context is cancelled.
    pub cancel: Option<CancelFlag>,
    /// How the command is separated from tinytool.
    pub isolation: Isolation,
    /// The kernel sandbox the command is started in (`crate::sandbox`); `None`: none.
    pub sandbox: Option<std::sync::Arc<crate::sandbox::Plan>>,
}

impl<'a> Request<'a> {
    /// A command a tool call runs in the foreground (bash, a foreground task): in the
    /// session's directory, captured with its output limits, killed when the call is
    /// cancelled, in a session of its own; stdin `/dev/null`.
    pub fn in_call(
        session: &'a Session,
        program: Program<'a>,
        env: Vec<(OsString, OsString)>,
        timeout: Duration,
    ) -> Request<'a> {
        Request {
            program,
            dir: &session.dir,
            env,
            stdin: Input::Null,
            timeout,
            limits: session.limits.clone(),
            cancel: Some(session.cancel_flag()),
            isolation: Isolation::Session,
            sandbox: None,
        }
    }
}

/// What a command gets on its standard input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Input<'a> {
    /// `/dev/null`: a read gets end of file at once.
    Null,
    /// These bytes, then end of file (a subagent's prompt).
    Bytes(&'a [u8]),
    /// A pipe kept open, handed to the watcher ([`Watcher::stdin`]): a program spoken to
    /// while it runs (a language server).
    Pipe,
}

/// Which output stream bytes came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    /// Standard output.
    Stdout,
    /// Standard error.
    Stderr,
}

/// Receives what a running command does, on the thread that runs it.
pub trait Watcher {
    /// The command started as the leader of process group `pgid`. An error kills the group
    /// at once, and [`run_with`] returns it.
    fn started(&mut self, _pgid: libc::pid_t) -> io::Result<()> {
        Ok(())
    }

    /// The write end of the command's stdin, when the request asked for [`Input::Pipe`].
    fn stdin(&mut self, _pipe: ChildStdin) {}

    /// Bytes the command wrote.
    fn output(&mut self, stream: Stream, bytes: &[u8]);

    /// Called on every turn of the loop; returns when it wants to be called again at the
    /// latest (a monitor flushes its lines on a timer).
    fn tick(&mut self, _now: Instant) -> Option<Instant> {
        None
    }
}

/// How the leader ended.
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

impl Ending {
    /// The exit status, when the leader exited.
    pub fn exit_code(self) -> Option<i32> {
        match self {
            Ending::Exited(code) => Some(code),
            Ending::Signaled { .. } => None,
        }
    }

    /// The signal that ended the leader, when one did.
    pub fn signal(self) -> Option<i32> {
        match self {
            Ending::Exited(_) => None,
            Ending::Signaled { signal, .. } => Some(signal),
        }
    }
}

/// How a run ended, whatever watched its output.
#[derive(Debug, Clone, Copy)]
pub struct Outcome {
    /// How the leader ended.
    pub ending: Ending,
    /// Whether the deadline ended it.
    pub timed_out: bool,
    /// Whether a cancellation ended it.
    pub cancelled: bool,
    /// How long the run took.
    pub duration: Duration,
}

/// A finished run of [`run`].
#[derive(Debug)]
pub struct Finished {
    /// What it wrote to stdout (bounded).
    pub stdout: Capture,
    /// What it wrote to stderr (bounded).
    pub stderr: Capture,
    /// Both streams as one, lines in the order they arrived, standard error lines marked
    /// (a run of [`run_interleaved`]; `None` otherwise).
    pub both: Option<Capture>,
    /// How the leader ended.
    pub ending: Ending,
    /// Whether the deadline ended it.
    pub timed_out: bool,
    /// Whether a cancellation ended it.
    pub cancelled: bool,
    /// How long the call took.
    pub duration: Duration,
}

/// A [`Watcher`] keeping both streams in bounded captures.
#[derive(Debug)]
pub struct Captures {
    /// What was written to stdout.
    pub stdout: Capture,
    /// What was written to stderr.
    pub stderr: Capture,
    /// Both, merged line by line (see [`run_interleaved`]).
    both: Option<crate::interleave::Interleaved>,
}

impl Captures {
    /// Two empty captures.
    pub fn new(limits: Limits) -> Captures {
        Captures {
            stdout: Capture::new(limits.clone()),
            stderr: Capture::new(limits),
            both: None,
        }
    }

    /// The captures of [`run_interleaved`]: both streams merged into one capture with
    /// `limits` (and its spill file), each stream also sketched on its own (its byte count
    /// and both ends, for messages a sandbox explanation looks for).
    pub fn interleaved(limits: Limits) -> Captures {
        Captures {
            stdout: Capture::sketch(),
            stderr: Capture::sketch(),
            both: Some(crate::interleave::Interleaved::new(Capture::new(limits))),
        }
    }

    /// The finished run these captures watched.
    pub fn finish(self, outcome: Outcome) -> Finished {
        Finished {
            stdout: self.stdout,
            stderr: self.stderr,
            both: self.both.map(crate::interleave::Interleaved::finish),
            ending: outcome.ending,
            timed_out: outcome.timed_out,
            cancelled: outcome.cancelled,
            duration: outcome.duration,
        }
    }
}

impl Watcher for Captures {
    fn output(&mut self, stream: Stream, bytes: &[u8]) {
        use crate::interleave::Source;
        match stream {
            Stream::Stdout => self.stdout.push(bytes),
            Stream::Stderr => self.stderr.push(bytes),
        }
        if let Some(both) = &mut self.both {
            let source = match stream {
                Stream::Stdout => Source::Out,
                Stream::Stderr => Source::Err,
            };
            both.push(source, bytes);
        }
    }
}

/// Runs a command to completion, timeout or kill (see the module doc), keeping its output
/// in two captures. `Err` only when it cannot be started or the pipes cannot be watched.
pub fn run(request: Request) -> io::Result<Finished> {
    let mut captures = Captures::new(request.limits.clone());
    let outcome = run_with(request, &mut captures)?;
    Ok(captures.finish(outcome))
}

/// [`run`], also keeping both streams as one ([`Finished::both`], in the request's
/// limits, with the spill file; the separate captures then have none).
pub fn run_interleaved(request: Request) -> io::Result<Finished> {
    let mut captures = Captures::interleaved(request.limits.clone());
    let outcome = run_with(request, &mut captures)?;
    Ok(captures.finish(outcome))
}

/// Runs a command to completion, timeout or kill (see the module doc), handing what it
/// does to `watcher`. `Err` when it cannot be started, the pipes cannot be watched, or
/// the watcher refused the start.
pub fn run_with(mut request: Request, watcher: &mut dyn Watcher) -> io::Result<Outcome> {
    super::signals::install();
    let _subreaper = Subreaper::enter();
    let start = Instant::now();
    let token = adopted::fresh_token();
    adopted::mark(&mut request.env, &token);
    let witness = Witness::new()?;
    let mut child = spawn(&request, &witness)?;
    drop(witness);
    let pid = child.id() as libc::pid_t;
    let registered = super::signals::Registration::new(pid);
    if let Err(err) = watcher.started(pid) {
        kill_group(pid, libc::SIGKILL);
        let _ = child.wait();
        reap_group(pid, Instant::now() + REAP);
        drop(registered);
        adopted::kill_adopted(&token, Instant::now() + REAP);
        return Err(err);
    }
    // A supervised command (a monitor, a background job) outlives calls: its sandbox
    // watches the project for what appears meanwhile (`sandbox::guard`).
    let long_lived = matches!(request.isolation, Isolation::Group);
    let guard = request
        .sandbox
        .as_ref()
        .and_then(|plan| plan.guard(pid, long_lived));
    match (request.stdin, child.stdin.take()) {
        (Input::Bytes(input), Some(pipe)) => feed(pipe, input.to_vec()),
        (Input::Pipe, Some(pipe)) => watcher.stdin(pipe),
        _ => {}
    }
    // A call whose client wants progress (MCP) learns how many lines came so far.
    let result = if crate::session::wants_progress() {
        let mut counting = Counting {
            inner: watcher,
            lines: 0,
            start,
        };
        watch(&mut child, pid, &request, start, &mut counting)
    } else {
        watch(&mut child, pid, &request, start, watcher)
    };
    // Stopped before the group is reaped: its id stays the command's while the guard
    // may still signal it.
    drop(guard);
    if result.is_err() {
        kill_group(pid, libc::SIGKILL);
        let _ = child.wait();
    }
    let hard_stop = start + request.timeout + HARD_STOP;
    reap_group(pid, (Instant::now() + REAP).min(hard_stop));
    // Reaped: the group id may be anyone's now, so the signal handler must forget it.
    drop(registered);
    // Before the subreaper flag goes: what escaped the group was adopted by now.
    adopted::kill_adopted(&token, (Instant::now() + REAP).min(hard_stop));
    result
}

/// Counts the lines a command writes and reports them as the call's progress.
struct Counting<'w> {
    inner: &'w mut dyn Watcher,
    lines: u64,
    start: Instant,
}

impl Watcher for Counting<'_> {
    fn started(&mut self, pgid: libc::pid_t) -> io::Result<()> {
        self.inner.started(pgid)
    }

    fn output(&mut self, stream: Stream, bytes: &[u8]) {
        self.lines += memchr::memchr_iter(b'\n', bytes).count() as u64;
        crate::session::report_progress(&crate::session::Progress {
            elapsed: self.start.elapsed(),
            lines: self.lines,
        });
        self.inner.output(stream, bytes);
    }

    fn tick(&mut self, now: Instant) -> Option<Instant> {
        self.inner.tick(now)
    }
}

/// Writes the input on a thread of its own, then closes the pipe. The thread is not
/// waited for: a reader that never reads (or a leftover that escaped the group holding
/// the pipe) must not hold up the call; it ends with EPIPE once the readers are gone.
fn feed(mut pipe: ChildStdin, input: Vec<u8>) {
    let spawned = std::thread::Builder::new()
        .name("stdin".into())
        .spawn(move || {
            let _ = pipe.write_all(&input);
        });
    // Without a thread the pipe is dropped here: the command sees end of file at once.
    drop(spawned);
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

/// Starts the command (module doc); when the spawn fails after the leader started its
/// sentinel (`exec` failed), kills and reaps the sentinel, alone in its group, first.
fn spawn(request: &Request, witness: &Witness) -> io::Result<Child> {
    let mut command = match request.program {
        Program::Shell(line) => {
            let mut command = Command::new("sh");
            // `--` ends sh's options, so a command line starting with `-` is run, not parsed.
            command.args(["-c", "--"]).arg(line);
            command
        }
        Program::Argv(argv) => {
            let (program, args) = argv
                .split_first()
                .ok_or_else(|| io::Error::new(ErrorKind::InvalidInput, "the command is empty"))?;
            let mut command = Command::new(program);
            command.args(args);
            command
        }
    };
    command
        .current_dir(request.dir)
        .env_clear()
        .envs(request.env.iter().map(|(k, v)| (k, v)))
        .stdin(if request.stdin == Input::Null {
            Stdio::null()
        } else {
            Stdio::piped()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let launcher = witness.launcher(request.timeout + HARD_STOP + BACKSTOP);
    let sandbox = match &request.sandbox {
        Some(plan) => {
            let exec = crate::sandbox::Exec::of(&command, &request.env).ok_or_else(|| {
                io::Error::new(ErrorKind::InvalidInput, "the command holds a NUL byte")
            })?;
            Some((plan.clone(), exec))
        }
        None => None,
    };
    isolate(&mut command, request.isolation, launcher, sandbox);
    let spawned = command.spawn();
    if spawned.is_err()
        && let Some(pgid) = witness.group()
    {
        // The sentinel is a member, so the group id is still ours to kill.
        kill_group(pgid, libc::SIGKILL);
        reap_group(pgid, Instant::now() + REAP);
    }
    spawned
}

/// Makes the child a session or group leader that dies with tinytool, guarded by a
/// sentinel.
fn isolate(
    command: &mut Command,
    isolation: Isolation,
    launcher: Launcher,
    sandbox: Option<(std::sync::Arc<crate::sandbox::Plan>, crate::sandbox::Exec)>,
) {
    let parent = std::process::id() as libc::pid_t;
    // SAFETY: the closure runs in the forked child before exec and only makes
    // async-signal-safe system calls (setsid, setpgid, prctl, getppid, raise, and the
    // clone of `Launcher::launch`).
    unsafe {
        command.pre_exec(move || {
            let separated = match isolation {
                Isolation::Session => libc::setsid(),
                Isolation::Group => libc::setpgid(0, 0),
            };
            if separated == -1 {
                return Err(io::Error::last_os_error());
            }
            libc::prctl(
                libc::PR_SET_PDEATHSIG,
                libc::SIGKILL as libc::c_ulong,
                0,
                0,
                0,
            );
            // The parent died between fork and prctl: the death signal would never come.
            if libc::getppid() != parent {
                libc::raise(libc::SIGKILL);
            }
            // A command that cannot have its guard does not run: the guarantee that
            // nothing outlives tinytool would not hold (and a system that cannot clone
            // once more could not run the command's own children either).
            launcher.launch()?;
            // The sentinel stays outside the sandbox; the command enters it.
            match &sandbox {
                Some((plan, exec)) => crate::sandbox::enter(plan, exec),
                None => Ok(()),
            }
        });
    }
}

/// One output stream being read.
struct Pipe {
    fd: Option<std::fs::File>,
    stream: Stream,
}

impl Pipe {
    fn new(fd: Option<OwnedFd>, stream: Stream) -> io::Result<Pipe> {
        if let Some(fd) = &fd {
            set_nonblocking(fd.as_raw_fd())?;
            // A larger pipe means fewer wake-ups for a command that prints a lot; failure
            // (a lower system limit) only costs speed.
            // SAFETY: fcntl on a descriptor we own, with integer arguments.
            unsafe {
                libc::fcntl(fd.as_raw_fd(), libc::F_SETPIPE_SZ, PIPE_SIZE);
            }
        }
        Ok(Pipe {
            fd: fd.map(std::fs::File::from),
            stream,
        })
    }

    fn is_open(&self) -> bool {
        self.fd.is_some()
    }

    /// Reads what is available; closes the pipe at end of file or on error.
    fn read_available(&mut self, buf: &mut [u8], watcher: &mut dyn Watcher) {
        let Some(file) = &mut self.fd else { return };
        for _ in 0..READS_PER_TURN {
            match file.read(buf) {
                Ok(0) => {
                    self.fd = None;
                    return;
                }
                Ok(n) => watcher.output(self.stream, &buf[..n]),
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
    watcher: &mut dyn Watcher,
) -> io::Result<Outcome> {
    let stdout = child.stdout.take().map(OwnedFd::from);
    let stderr = child.stderr.take().map(OwnedFd::from);
    let mut pipes = [
        Pipe::new(stdout, Stream::Stdout)?,
        Pipe::new(stderr, Stream::Stderr)?,
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
            // Leftovers die while the unreaped leader still holds the group id.
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
        let watcher_wake = watcher.tick(now);
        if let Some(until) = drain_until
            && (now >= until || pipes.iter().all(|p| !p.is_open()))
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
                // The leader cannot be reaped (uninterruptible sleep): give up on it.
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
            watcher_wake,
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
            &mut pipes,
            pidfd.as_ref().filter(|_| watch_exit),
            wait,
            &mut buf,
            watcher,
        )?;
    }
    Ok(Outcome {
        ending: ending.unwrap_or(Ending::Exited(-1)),
        timed_out,
        cancelled,
        duration: start.elapsed(),
    })
}

fn poll_and_read(
    pipes: &mut [Pipe; 2],
    pidfd: Option<&OwnedFd>,
    wait: Duration,
    buf: &mut [u8],
    watcher: &mut dyn Watcher,
) -> io::Result<()> {
    let mut fds: Vec<libc::pollfd> = Vec::with_capacity(3);
    let mut owners: Vec<Option<usize>> = Vec::with_capacity(3);
    for (k, pipe) in pipes.iter().enumerate() {
        if let Some(fd) = &pipe.fd {
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
            pipes[k].read_available(buf, watcher);
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

#[cfg(test)]
mod tests {
    use super::*;

    fn request<'a>(program: Program<'a>, dir: &'a Path, timeout_ms: u64) -> Request<'a> {
        Request {
            program,
            dir,
            env: std::env::vars_os().collect(),
            stdin: Input::Null,
            timeout: Duration::from_millis(timeout_ms),
            limits: Limits::default(),
            cancel: None,
            isolation: Isolation::Session,
            sandbox: None,
        }
    }

    fn run_sh(command: &str, timeout_ms: u64) -> Finished {
        let dir = std::env::temp_dir();
        run(request(Program::Shell(command), &dir, timeout_ms)).unwrap()
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
        let mut req = request(Program::Shell("echo started; sleep 30"), &dir, 60_000);
        req.cancel = Some(cancel);
        let done = run(req).unwrap();
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

    #[test]
    fn a_program_gets_its_input_on_stdin() {
        let dir = std::env::temp_dir();
        let argv = ["sh".to_string(), "-c".to_string(), "tr a-z A-Z".to_string()];
        let mut req = request(Program::Argv(&argv), &dir, 10_000);
        req.stdin = Input::Bytes(b"prompt text");
        let done = run(req).unwrap();
        assert_eq!(done.ending, Ending::Exited(0));
        assert_eq!(done.stdout.finish().text, "PROMPT TEXT");
    }

    #[test]
    fn a_missing_program_is_an_error() {
        let dir = std::env::temp_dir();
        let argv = ["/nonexistent/agent".to_string()];
        assert!(run(request(Program::Argv(&argv), &dir, 1_000)).is_err());
        assert!(run(request(Program::Argv(&[]), &dir, 1_000)).is_err());
    }

    #[test]
    fn in_the_sandbox_a_program_runs_with_its_arguments_and_only_its_environment() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = crate::paths::canonicalize(tmp.path()).unwrap();
        let settings = crate::sandbox_settings::Settings::default();
        let plan = || {
            crate::sandbox::Plan::new(&settings, &dir, crate::sandbox::Purpose::default())
                .map(std::sync::Arc::new)
        };
        // Found through the given PATH (not tinytool's), run with its arguments and
        // the given environment alone.
        let argv = [
            "sh".to_string(),
            "-c".to_string(),
            "printf '%s|%s|%s' \"$0\" \"$ONLY\" \"$HOME\"".to_string(),
            "zero".to_string(),
        ];
        let mut req = request(Program::Argv(&argv), &dir, 10_000);
        req.env = vec![
            ("PATH".into(), "/usr/bin:/bin".into()),
            ("ONLY".into(), "this".into()),
        ];
        req.sandbox = plan();
        let done = run(req).unwrap();
        assert_eq!(done.stdout.finish().text, "zero|this|");
        // A program that is not there fails the spawn, as without the sandbox.
        let argv = ["/nonexistent/agent".to_string()];
        let mut req = request(Program::Argv(&argv), &dir, 1_000);
        req.sandbox = plan();
        let err = run(req).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::NotFound, "{err}");
        let argv = ["no-such-program-anywhere".to_string()];
        let mut req = request(Program::Argv(&argv), &dir, 1_000);
        req.sandbox = plan();
        assert!(run(req).is_err());
    }

    #[test]
    fn a_watcher_can_refuse_the_start() {
        struct Refuse(Option<libc::pid_t>);
        impl Watcher for Refuse {
            fn started(&mut self, pgid: libc::pid_t) -> io::Result<()> {
                self.0 = Some(pgid);
                Err(io::Error::other("no"))
            }
            fn output(&mut self, _: Stream, _: &[u8]) {}
        }
        let dir = std::env::temp_dir();
        let mut refuse = Refuse(None);
        let err = run_with(
            request(Program::Shell("sleep 30"), &dir, 60_000),
            &mut refuse,
        );
        assert!(err.is_err());
        let pgid = refuse.0.unwrap();
        // SAFETY: existence check only.
        assert_ne!(unsafe { libc::kill(-pgid, 0) }, 0, "the group is gone");
    }

    /// A process as the tests see it.
    #[derive(Debug, PartialEq)]
    struct Member {
        pid: i32,
        comm: String,
        state: char,
        ppid: i32,
        session: i32,
    }

    /// Processes in group `pgid`, zombies included.
    fn members(pgid: libc::pid_t) -> Vec<Member> {
        std::fs::read_dir("/proc")
            .unwrap()
            .flatten()
            .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
            .filter_map(|pid| {
                let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
                let (head, rest) = stat.rsplit_once(')')?;
                let fields: Vec<&str> = rest.split_whitespace().collect();
                let member = Member {
                    pid,
                    comm: head.split_once('(')?.1.to_string(),
                    state: fields.first()?.chars().next()?,
                    ppid: fields.get(1)?.parse().ok()?,
                    session: fields.get(3)?.parse().ok()?,
                };
                (fields.get(2)?.parse::<i32>().ok()? == pgid).then_some(member)
            })
            .collect()
    }

    /// The open descriptors of a process as `FD TARGET`, in order.
    fn descriptors(pid: i32) -> Vec<String> {
        let Ok(entries) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
            return vec!["unreadable".into()];
        };
        let mut fds: Vec<(i32, String)> = entries
            .flatten()
            .filter_map(|e| {
                let fd = e.file_name().to_str()?.parse().ok()?;
                let target = std::fs::read_link(e.path()).ok()?;
                Some((fd, target.display().to_string()))
            })
            .collect();
        fds.sort();
        fds.into_iter().map(|(fd, t)| format!("{fd} {t}")).collect()
    }

    #[test]
    fn a_sentinel_guards_the_group_beside_the_command_and_is_gone_with_it() {
        struct Look(Option<libc::pid_t>, Vec<Member>, Vec<String>);
        impl Watcher for Look {
            fn started(&mut self, pgid: libc::pid_t) -> io::Result<()> {
                self.0 = Some(pgid);
                // The sentinel is a member already; it names itself once armed.
                let until = Instant::now() + Duration::from_secs(5);
                loop {
                    self.1 = members(pgid);
                    if let Some(guard) = self.1.iter().find(|m| m.comm == "tinytool-guard") {
                        self.2 = descriptors(guard.pid);
                        return Ok(());
                    }
                    if Instant::now() >= until {
                        return Ok(());
                    }
                    std::thread::sleep(Duration::from_millis(5));
                }
            }
            fn output(&mut self, _: Stream, _: &[u8]) {}
        }
        let me = std::process::id() as i32;
        // SAFETY: getsid(0) has no preconditions.
        let my_session = unsafe { libc::getsid(0) };
        let dir = std::env::temp_dir();
        for isolation in [Isolation::Session, Isolation::Group] {
            let mut req = request(Program::Shell("sleep 30 & echo started"), &dir, 10_000);
            req.isolation = isolation;
            let mut look = Look(None, Vec::new(), Vec::new());
            let outcome = run_with(req, &mut look).unwrap();
            assert_eq!(outcome.ending, Ending::Exited(0));
            let pgid = look.0.unwrap();
            let guards: Vec<&Member> = look
                .1
                .iter()
                .filter(|m| m.comm == "tinytool-guard")
                .collect();
            assert_eq!(guards.len(), 1, "{isolation:?}: {:?}", look.1);
            let guard = guards[0];
            // Ours, not the command's child, and in the command's session.
            assert_eq!(guard.ppid, me, "{isolation:?}");
            assert_ne!(guard.pid, pgid);
            let session = match isolation {
                Isolation::Session => pgid,
                Isolation::Group => my_session,
            };
            assert_eq!(guard.session, session, "{isolation:?}");
            // Named once armed, it holds nothing of the command's: /dev/null on 0-2 only
            // (a copy of an output pipe would keep tinytool from reading end of file).
            assert_eq!(
                look.2,
                ["0 /dev/null", "1 /dev/null", "2 /dev/null"],
                "{isolation:?}"
            );
            assert_eq!(
                members(pgid),
                Vec::new(),
                "{isolation:?}: the group is gone, zombies included"
            );
        }
    }

    #[test]
    fn a_failed_exec_leaves_no_sentinel_behind() {
        let dir = std::env::temp_dir();
        let argv = ["/nonexistent/agent".to_string()];
        let witness = Witness::new().unwrap();
        let err = spawn(&request(Program::Argv(&argv), &dir, 1_000), &witness).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::NotFound);
        // The leader got as far as starting its sentinel before exec failed...
        let pgid = witness.group().expect("a sentinel was started");
        // ...which was killed and reaped with its group.
        assert_eq!(members(pgid), Vec::new());
    }
}
