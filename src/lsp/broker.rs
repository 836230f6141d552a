//! The broker: the hidden subcommand `tinytool __lsp` that keeps one language server warm
//! for one project, language and sandbox, and answers every tinytool process of the
//! project over a Unix socket (see the parent module for the whole design).
//!
//! It is started detached by the first call that needs it (its own session, its standard
//! streams away from the caller's, one handshake line on stdout), holds a lock file for
//! its whole life (a second broker of the same key answers `busy` and exits), and runs the
//! server with `process::run` in the sandbox of the settings it was started under, with
//! stdin kept open as the protocol's input. It stops the server after the idle time, when
//! its processes use more memory than the cap, or when it stops answering; a crashed
//! server is started again by the next call, unless it crashed three times in five minutes.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::process::ChildStdin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::client::{Conversation, Interrupted, Phase};
use super::exchange::{Ask, Checked, FileProblems, Progress, Status};
use super::frame::Decoder;
use crate::exit::ExitStatus;
use crate::process::run::{Input, Isolation, Program, Request, Stream, Watcher};
use crate::session::CancelFlag;

/// The hidden subcommand's name.
pub const SUBCOMMAND: &str = "__lsp";
/// The variable that carries the broker's [`Spec`] as JSON.
pub const SPEC_VAR: &str = "TINYTOOL_LSP_SPEC";
/// The longest question a call may send (file texts included).
const MAX_ASK: u64 = 256 * 1024 * 1024;
/// How often memory and the idle time are looked at.
const TICK: Duration = Duration::from_secs(1);
/// A request unanswered this long, with nothing heard from the server meanwhile, means
/// the server hangs: it is stopped.
const HANG: Duration = Duration::from_secs(60);
/// The longest a server lives, idle or not.
const LIFETIME: Duration = Duration::from_secs(24 * 3600);
/// Crashes within [`CRASH_WINDOW`] after which a server is not started again for that
/// long.
const MAX_CRASHES: usize = 3;
const CRASH_WINDOW: Duration = Duration::from_secs(300);
/// Requests left unanswered after which a server that still talks is taken as hung.
const MAX_PENDING: usize = 256;
/// Open files whose problems are asked again after a change (pull and tsserver).
const MAX_OTHERS: usize = 8;

/// What the broker runs, handed over by the call that starts it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Spec {
    /// The project directory (resolved).
    pub dir: PathBuf,
    /// The language (`python`).
    pub language: String,
    /// The server's name.
    pub server: String,
    /// The server's command.
    pub argv: Vec<String>,
    /// The socket's path.
    pub socket: PathBuf,
    /// The lock file's path.
    pub lock: PathBuf,
    /// Idle time after which it stops, in milliseconds.
    pub idle_ms: u64,
    /// Memory cap of the server's processes, in MiB.
    pub max_memory_mb: u64,
    /// A folder the server may write its caches to.
    pub cache: PathBuf,
}

/// Shared by the broker's threads.
struct Broker {
    spec: Spec,
    conversation: Conversation,
    /// Set to stop the running server (its group is killed).
    kill: CancelFlag,
    /// Set when the broker is ending.
    ending: AtomicBool,
    /// Calls being answered.
    active: AtomicUsize,
    /// When the last call came.
    last_call: std::sync::Mutex<Instant>,
    /// Why the server was stopped on purpose (memory, hang, idle), for its end.
    stop_reason: std::sync::Mutex<Option<String>>,
    /// One check at a time: versions and waits of two checks would interleave.
    checking: std::sync::Mutex<()>,
    sandbox: crate::sandbox_settings::Settings,
}

/// Runs the broker; the spec comes from [`SPEC_VAR`].
pub fn main() -> ExitStatus {
    // SAFETY: prctl with a pointer to a static NUL-terminated name.
    unsafe {
        libc::prctl(
            libc::PR_SET_NAME,
            c"tinytool-lsp".as_ptr() as libc::c_ulong,
            0,
            0,
            0,
        );
    }
    let Some(spec) = std::env::var(SPEC_VAR)
        .ok()
        .and_then(|text| serde_json::from_str::<Spec>(&text).ok())
    else {
        answer_handshake("error: no broker spec");
        return ExitStatus::Usage;
    };
    let stop = CancelFlag::default();
    crate::process::stop_on_signals(stop.clone());
    let lock = match std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&spec.lock)
    {
        Ok(file) => file,
        Err(err) => {
            answer_handshake(&format!(
                "error: cannot open {}: {err}",
                spec.lock.display()
            ));
            return ExitStatus::ToolError;
        }
    };
    if lock.try_lock().is_err() {
        answer_handshake("busy");
        return ExitStatus::Success;
    }
    let listener = match bind(&spec.socket) {
        Ok(listener) => listener,
        Err(err) => {
            answer_handshake(&format!(
                "error: cannot listen on {}: {err}",
                spec.socket.display()
            ));
            return ExitStatus::ToolError;
        }
    };
    let sandbox = std::env::var(crate::sandbox_settings::SETTINGS_VAR)
        .map(|text| crate::sandbox_settings::Settings::decode(&text))
        .unwrap_or_default();
    let broker = Arc::new(Broker {
        conversation: Conversation::new(&spec.dir),
        spec,
        kill: CancelFlag::default(),
        ending: AtomicBool::new(false),
        active: AtomicUsize::new(0),
        last_call: std::sync::Mutex::new(Instant::now()),
        stop_reason: std::sync::Mutex::new(None),
        checking: std::sync::Mutex::new(()),
        sandbox,
    });
    let runner = {
        let broker = broker.clone();
        std::thread::Builder::new()
            .name("server".into())
            .spawn(move || broker.run_servers())
    };
    answer_handshake("ok");
    let _ = listener.set_nonblocking(true);
    let mut next_look = Instant::now() + TICK;
    loop {
        if stop.is_set() || broker.ending.load(Ordering::SeqCst) {
            break;
        }
        // A call is taken the moment it connects; the wait's end looks at the idle time,
        // a stop and the project.
        if readable(&listener, Duration::from_millis(100)) {
            while let Ok((stream, _)) = listener.accept() {
                let broker = broker.clone();
                broker.active.fetch_add(1, Ordering::SeqCst);
                let _ = std::thread::Builder::new()
                    .name("call".into())
                    .spawn(move || {
                        broker.serve(stream);
                        broker.touch();
                        broker.active.fetch_sub(1, Ordering::SeqCst);
                    });
            }
            continue;
        }
        if broker.idle() {
            break;
        }
        if Instant::now() >= next_look {
            next_look = Instant::now() + TICK;
            if broker.orphaned() {
                break;
            }
        }
    }
    // Gone from the socket first, so no call waits on a broker that is ending.
    let _ = std::fs::remove_file(&broker.spec.socket);
    broker.stop_server("idle");
    broker.ending.store(true, Ordering::SeqCst);
    broker.conversation.notify();
    if let Ok(runner) = runner {
        let _ = runner.join();
    }
    drop(lock);
    ExitStatus::Success
}

/// Whether `listener` has a connection to accept within `wait`.
fn readable(listener: &UnixListener, wait: Duration) -> bool {
    use std::os::fd::AsRawFd;
    let mut pending = libc::pollfd {
        fd: listener.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: poll of one descriptor this process owns, with a record of that size.
    let ready = unsafe { libc::poll(&mut pending, 1, wait.as_millis() as libc::c_int) };
    ready > 0 && pending.revents & libc::POLLIN != 0
}

/// Writes the one handshake line, then points stdout at `/dev/null`: the caller reads
/// until end of file.
fn answer_handshake(line: &str) {
    let mut out = std::io::stdout();
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
    if let Ok(null) = std::fs::OpenOptions::new().write(true).open("/dev/null") {
        use std::os::fd::AsRawFd;
        // SAFETY: dup2 of two descriptors this process owns.
        unsafe {
            libc::dup2(null.as_raw_fd(), libc::STDOUT_FILENO);
        }
    }
}

/// Listens on `path` (replacing a stale socket: only the lock holder gets here), reachable
/// by its owner only. A path longer than a socket address holds is bound through its
/// folder's descriptor.
fn bind(path: &Path) -> std::io::Result<UnixListener> {
    let _ = std::fs::remove_file(path);
    let listener = super::link::through_folder(path, |p| UnixListener::bind(p))?;
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))?;
    Ok(listener)
}

impl Broker {
    fn touch(&self) {
        *self.last_call.lock().unwrap_or_else(|p| p.into_inner()) = Instant::now();
    }

    /// Whether nobody asked for the idle time.
    fn idle(&self) -> bool {
        let last = *self.last_call.lock().unwrap_or_else(|p| p.into_inner());
        self.active.load(Ordering::SeqCst) == 0
            && last.elapsed() >= Duration::from_millis(self.spec.idle_ms)
    }

    /// Whether the project or the broker's socket is gone (a deleted checkout, a removed
    /// `.tinytool`): nobody can reach it any more.
    fn orphaned(&self) -> bool {
        !self.spec.dir.is_dir() || std::fs::symlink_metadata(&self.spec.socket).is_err()
    }

    /// Stops the running server: `shutdown`, `exit`, then its group is killed.
    fn stop_server(&self, reason: &str) {
        *self.stop_reason.lock().unwrap_or_else(|p| p.into_inner()) = Some(reason.to_string());
        let state = self.conversation.lock();
        if state.pid.is_none() {
            return;
        }
        let mut state = state;
        if state.ready() {
            state.shut_down();
            let deadline = Instant::now() + Duration::from_secs(2);
            let (state, _) = self
                .conversation
                .wait_until(state, deadline, |s| s.shutdown_answered());
            state.exit();
            let deadline = Instant::now() + Duration::from_secs(1);
            let (state, _) = self
                .conversation
                .wait_until(state, deadline, |s| s.pid.is_none());
            drop(state);
        } else {
            drop(state);
        }
        self.kill.set();
        let deadline = Instant::now() + Duration::from_secs(3);
        let state = self.conversation.lock();
        drop(
            self.conversation
                .wait_until(state, deadline, |s| s.pid.is_none())
                .0,
        );
    }

    /// The server thread: starts a server whenever a call wants one, until the broker ends.
    fn run_servers(&self) {
        let mut crashes: VecDeque<Instant> = VecDeque::new();
        loop {
            {
                let mut state = self.conversation.lock();
                if !state.wanted {
                    state = self.conversation.park(state, TICK);
                }
                if self.ending.load(Ordering::SeqCst) {
                    state.wanted = false;
                    return;
                }
                if !state.wanted {
                    continue;
                }
                while crashes.front().is_some_and(|t| t.elapsed() > CRASH_WINDOW) {
                    crashes.pop_front();
                }
                if crashes.len() >= MAX_CRASHES {
                    state.wanted = false;
                    state.phase = Phase::Down(Some(format!(
                        "{} crashed {MAX_CRASHES} times in {} minutes; it is started again \
                         after {} minutes (or after `tinytool lsp stop`)",
                        self.spec.server,
                        CRASH_WINDOW.as_secs() / 60,
                        CRASH_WINDOW.as_secs() / 60
                    )));
                    drop(state);
                    self.conversation.notify();
                    continue;
                }
                state.phase = Phase::Starting(Instant::now());
            }
            self.kill.clear();
            *self.stop_reason.lock().unwrap_or_else(|p| p.into_inner()) = None;
            let reason = self.run_one();
            let on_purpose = self
                .stop_reason
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .take();
            let reason = match on_purpose {
                Some(why) => format!("{} was stopped: {why}", self.spec.server),
                None => {
                    crashes.push_back(Instant::now());
                    reason
                }
            };
            self.conversation.ended(reason);
        }
    }

    /// Runs one server to its end; returns how it ended.
    fn run_one(&self) -> String {
        let _ = std::fs::create_dir_all(&self.spec.cache);
        let extra = [self.spec.cache.clone()];
        let plan = crate::sandbox::Plan::new(
            &self.sandbox,
            &self.spec.dir,
            crate::sandbox::Purpose {
                extra_writable: &extra,
                ..Default::default()
            },
        )
        .map(Arc::new);
        let mut env = crate::process::environment::child_env(std::env::vars_os());
        env.retain(|(k, _)| k != SPEC_VAR && k != crate::sandbox_settings::SETTINGS_VAR);
        env.push((
            "XDG_CACHE_HOME".into(),
            self.spec.cache.clone().into_os_string(),
        ));
        let request = Request {
            program: Program::Argv(&self.spec.argv),
            dir: &self.spec.dir,
            env,
            stdin: Input::Pipe,
            timeout: LIFETIME,
            limits: crate::truncate::Limits::default(),
            cancel: Some(self.kill.clone()),
            isolation: Isolation::Group,
            sandbox: plan.clone(),
        };
        let mut watcher = ServerWatcher {
            broker: self,
            decoder: Decoder::default(),
            pid: 0,
            next_tick: Instant::now() + TICK,
        };
        match crate::process::run::run_with(request, &mut watcher) {
            Ok(outcome) => {
                let how = match outcome.ending {
                    crate::process::run::Ending::Exited(code) => format!("exit status {code}"),
                    crate::process::run::Ending::Signaled { signal, .. } => {
                        format!("signal {signal}")
                    }
                };
                let sandbox = plan.as_ref().and_then(|p| p.stopped_line());
                match sandbox {
                    Some(line) => {
                        format!("{} was stopped by the sandbox: {line}", self.spec.server)
                    }
                    None => {
                        let said = self.conversation.lock().stderr_tail();
                        let last = said
                            .lines()
                            .rev()
                            .map(str::trim)
                            .find(|l| !l.is_empty())
                            .map(|l| {
                                format!(
                                    " (its last words: {})",
                                    l.chars().take(300).collect::<String>()
                                )
                            })
                            .unwrap_or_default();
                        format!(
                            "{} exited ({how}){last}; the next call starts it again",
                            self.spec.server
                        )
                    }
                }
            }
            Err(err) => match plan.as_ref().and_then(|p| p.refusal()) {
                Some(refusal) => format!("{} could not start: {refusal}", self.spec.server),
                None => format!("{} could not start: {err}", self.spec.server),
            },
        }
    }

    /// Answers one connection: one question, one answer.
    fn serve(&self, stream: UnixStream) {
        let _ = stream.set_nonblocking(false);
        if !same_user(&stream) {
            return;
        }
        let mut line = String::new();
        let mut reader = BufReader::new(std::io::Read::take(&stream, MAX_ASK));
        if reader.read_line(&mut line).is_err() {
            return;
        }
        let answer = match serde_json::from_str::<Ask>(&line) {
            Ok(Ask::Check {
                files,
                wait_ms,
                cold_wait_ms,
            }) => {
                self.touch();
                serde_json::to_value(self.check(&files, wait_ms, cold_wait_ms))
            }
            Ok(Ask::Status) => serde_json::to_value(self.status()),
            Ok(Ask::Stop) => {
                self.stop_server("tinytool lsp stop");
                self.ending.store(true, Ordering::SeqCst);
                self.conversation.notify();
                Ok(serde_json::json!({"stopped": true}))
            }
            Err(err) => Ok(serde_json::json!({"error": format!("not a question: {err}")})),
        };
        if let Ok(answer) = answer {
            let mut stream = &stream;
            let _ = writeln!(stream, "{answer}");
        }
    }

    fn status(&self) -> Status {
        let state = self.conversation.lock();
        let last = *self.last_call.lock().unwrap_or_else(|p| p.into_inner());
        let (name, reason) = match &state.phase {
            Phase::Ready => ("running", None),
            Phase::Starting(_) => ("starting", None),
            Phase::Down(None) => ("stopped", None),
            Phase::Down(Some(why)) => ("stopped", Some(why.clone())),
        };
        Status {
            language: self.spec.language.clone(),
            server: self.spec.server.clone(),
            command: self.spec.argv.clone(),
            state: name.to_string(),
            reason,
            pid: state.pid,
            memory_kib: state.memory_kib,
            broker_pid: std::process::id(),
            open_files: state.open_files(),
            starts: state.starts,
            idle_ms: last.elapsed().as_millis() as u64,
            stderr_tail: state.stderr_tail(),
        }
    }

    /// Checks `files` as they are on disk now.
    fn check(
        &self,
        files: &[super::exchange::FileAsk],
        wait_ms: u64,
        cold_wait_ms: u64,
    ) -> Checked {
        let start = Instant::now();
        let cold = !self.conversation.lock().ready();
        let deadline = start + Duration::from_millis(if cold { cold_wait_ms } else { wait_ms });
        // One check at a time, but never past this one's own bound.
        let _one = loop {
            match self.checking.try_lock() {
                Ok(guard) => break guard,
                Err(std::sync::TryLockError::Poisoned(p)) => break p.into_inner(),
                Err(std::sync::TryLockError::WouldBlock) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(5));
                }
                Err(std::sync::TryLockError::WouldBlock) => {
                    let state = self.conversation.lock();
                    return Checked {
                        progress: Progress::Busy,
                        message: Some(format!(
                            "{} is busy with another call's check",
                            self.spec.server
                        )),
                        pid: state.pid,
                        elapsed_ms: start.elapsed().as_millis() as u64,
                        files: unchecked(files),
                        others: Vec::new(),
                    };
                }
            }
        };
        let mut state = self.conversation.lock();
        if cold && matches!(state.phase, Phase::Down(_)) {
            state.wanted = true;
        }
        let answer =
            |state: &super::client::State, progress, message: Option<String>, files| Checked {
                progress,
                message,
                pid: state.pid,
                elapsed_ms: start.elapsed().as_millis() as u64,
                files,
                others: Vec::new(),
            };
        self.conversation.notify();
        let (mut state, ready) = self.conversation.wait_until(state, deadline, |s| s.ready());
        if let Err(why) = ready {
            let (progress, message) = match why {
                Interrupted::Late => (
                    Progress::Busy,
                    format!(
                        "{} is still starting after {:.1} s",
                        self.spec.server,
                        start.elapsed().as_secs_f64()
                    ),
                ),
                Interrupted::Down(reason) => (Progress::Down, reason),
            };
            return answer(&state, progress, Some(message), unchecked(files));
        }
        // The baselines: the problems of each file's text before the change, unless the
        // server holds that text already and they are known.
        let mut targets: Vec<(PathBuf, Option<String>)> = Vec::new();
        let mut watched = Vec::new();
        for file in files {
            let path = PathBuf::from(&file.path);
            if file.deleted {
                state.close(&path);
                watched.push((path.clone(), true));
                targets.push((path, None));
                continue;
            }
            let text = match crate::atomic::read_regular(&path) {
                Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
                Err(_) => {
                    targets.push((path, None));
                    continue;
                }
            };
            if file.before.is_none() && state.version_of(&path).is_none() {
                watched.push((path.clone(), false));
            }
            targets.push((path, Some(text)));
        }
        state.files_changed(&watched);
        let mut befores: Vec<Option<Vec<super::problem::Problem>>> = vec![None; files.len()];
        for (index, file) in files.iter().enumerate() {
            let Some(before) = &file.before else {
                continue;
            };
            let path = PathBuf::from(&file.path);
            let language_id = super::servers::language_id(&path);
            if state.text_of(&path) == Some(before.as_str())
                && let Some(known) = state.problems_of(&path)
            {
                befores[index] = Some(known.clone());
                continue;
            }
            state.sync(&path, before, language_id);
            let (next, got) = self.conversation.wait_until(state, deadline, |s| {
                s.ask(&path);
                s.problems_of(&path).is_some()
            });
            state = next;
            match got {
                Ok(()) => befores[index] = state.problems_of(&path).cloned(),
                Err(Interrupted::Down(reason)) => {
                    return answer(&state, Progress::Down, Some(reason), unchecked(files));
                }
                Err(Interrupted::Late) => {}
            }
        }
        let mut paths = Vec::new();
        for (path, text) in &targets {
            if let Some(text) = text {
                state.sync(path, text, super::servers::language_id(path));
                paths.push(path.clone());
            }
        }
        // Other open files, to see what the change broke or fixed there.
        let others: Vec<PathBuf> = state.others(&paths).into_iter().take(MAX_OTHERS).collect();
        let earlier: Vec<Option<Vec<super::problem::Problem>>> = others
            .iter()
            .map(|p| state.problems_of(p).cloned())
            .collect();
        // Every file is asked before any is waited for (`all` would stop at the first).
        let (state_now, waited) = self.conversation.wait_until(state, deadline, |s| {
            paths.iter().for_each(|p| s.ask(p));
            paths.iter().all(|p| s.problems_of(p).is_some())
        });
        state = state_now;
        let (progress, message) = match waited {
            Ok(()) => (Progress::Fresh, None),
            Err(Interrupted::Late) => (
                Progress::Busy,
                Some(format!(
                    "{} is still checking after {:.1} s",
                    self.spec.server,
                    start.elapsed().as_secs_f64()
                )),
            ),
            Err(Interrupted::Down(reason)) => (Progress::Down, Some(reason)),
        };
        if progress == Progress::Fresh && !others.is_empty() {
            // The changed files first; then, within the call's bound, the other open
            // files, asked again now that the server holds the change. A push server
            // republishes them on its own; what it published meanwhile is taken.
            for other in &others {
                state.ask_again(other);
            }
            // Every file is asked again when the server asks for a refresh meanwhile.
            let (next, _) = self.conversation.wait_until(state, deadline, |s| {
                paths.iter().chain(&others).for_each(|p| s.ask(p));
                paths
                    .iter()
                    .chain(&others)
                    .all(|p| s.problems_of(p).is_some())
            });
            state = next;
        }
        let mut result = answer(&state, progress, message, Vec::new());
        for ((path, text), before) in targets.iter().zip(befores) {
            let items = match text {
                None => Some(Vec::new()),
                Some(text) if state.text_of(path) == Some(text.as_str()) => {
                    state.problems_of(path).cloned()
                }
                Some(_) => None,
            };
            result.files.push(FileProblems {
                path: path.to_string_lossy().into_owned(),
                items,
                before,
                text: text.clone(),
            });
        }
        for (path, earlier) in others.iter().zip(earlier) {
            // Only a file whose earlier problems are known can be said to have changed.
            if let Some(now) = state.problems_of(path)
                && let Some(earlier) = earlier
                && &earlier != now
            {
                result.others.push(FileProblems {
                    path: path.to_string_lossy().into_owned(),
                    items: Some(now.clone()),
                    before: Some(earlier),
                    text: state.text_of(path).map(str::to_string),
                });
            }
        }
        result
    }
}

/// The answer's entries of files whose problems did not arrive.
fn unchecked(files: &[super::exchange::FileAsk]) -> Vec<FileProblems> {
    files
        .iter()
        .map(|f| FileProblems {
            path: f.path.clone(),
            items: None,
            before: None,
            text: None,
        })
        .collect()
}

/// Whether the peer runs as this process's user.
fn same_user(stream: &UnixStream) -> bool {
    use std::os::fd::AsRawFd;
    let mut credentials = libc::ucred {
        pid: 0,
        uid: 0,
        gid: 0,
    };
    let mut length = std::mem::size_of::<libc::ucred>() as libc::socklen_t;
    // SAFETY: getsockopt with a buffer of the size given.
    let done = unsafe {
        libc::getsockopt(
            stream.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_PEERCRED,
            (&mut credentials as *mut libc::ucred).cast(),
            &mut length,
        )
    };
    // SAFETY: getuid has no preconditions.
    done == 0 && credentials.uid == unsafe { libc::getuid() }
}

/// Hands a running server's output to the conversation and its input to a writer thread.
struct ServerWatcher<'b> {
    broker: &'b Broker,
    decoder: Decoder,
    pid: i32,
    next_tick: Instant,
}

impl Watcher for ServerWatcher<'_> {
    fn started(&mut self, pgid: libc::pid_t) -> std::io::Result<()> {
        self.pid = pgid;
        Ok(())
    }

    fn stdin(&mut self, pipe: ChildStdin) {
        let (outbox, inbox) = mpsc::channel::<lsp_server::Message>();
        let _ = std::thread::Builder::new()
            .name("server-input".into())
            .spawn(move || write_messages(pipe, inbox));
        self.broker.conversation.started(
            self.pid,
            outbox,
            super::client::initialize_params(&self.broker.spec.dir),
        );
    }

    fn output(&mut self, stream: Stream, bytes: &[u8]) {
        if stream == Stream::Stderr {
            self.broker.conversation.stderr(bytes);
            return;
        }
        match self.decoder.push(bytes) {
            Ok(bodies) => {
                for body in bodies {
                    // A body that is not a message is skipped, as a log line would be.
                    if let Ok(message) = serde_json::from_slice::<lsp_server::Message>(&body) {
                        self.broker.conversation.receive(message);
                    }
                }
            }
            Err(err) => {
                *self
                    .broker
                    .stop_reason
                    .lock()
                    .unwrap_or_else(|p| p.into_inner()) =
                    Some(format!("it wrote what is not the protocol ({})", err.0));
                self.broker.kill.set();
            }
        }
    }

    fn tick(&mut self, now: Instant) -> Option<Instant> {
        if now < self.next_tick {
            return Some(self.next_tick);
        }
        self.next_tick = now + TICK;
        let memory = tree_memory_kib(self.pid);
        let mut state = self.broker.conversation.lock();
        state.memory_kib = memory;
        let hung = state
            .oldest_pending()
            .is_some_and(|sent| sent.elapsed() > HANG && state.last_heard.elapsed() > HANG);
        let unanswered = state.pending_count();
        drop(state);
        let cap = self.broker.spec.max_memory_mb * 1024;
        let reason = if memory > cap {
            Some(format!(
                "its processes used {} MiB, over lsp.max_memory_mb ({} MiB)",
                memory / 1024,
                self.broker.spec.max_memory_mb
            ))
        } else if unanswered > MAX_PENDING {
            Some(format!(
                "it left {unanswered} requests unanswered while it went on talking"
            ))
        } else if hung {
            Some(format!("it answered nothing for {} s", HANG.as_secs()))
        } else {
            None
        };
        if let Some(reason) = reason {
            *self
                .broker
                .stop_reason
                .lock()
                .unwrap_or_else(|p| p.into_inner()) = Some(reason);
            self.broker.kill.set();
        }
        Some(self.next_tick)
    }
}

/// Writes messages to the server until the channel closes or the pipe breaks (a server
/// that exits mid-write is a crash, seen as its exit).
fn write_messages(pipe: ChildStdin, inbox: mpsc::Receiver<lsp_server::Message>) {
    // `Message::write` flushes each message.
    let mut pipe = std::io::BufWriter::new(pipe);
    for message in inbox {
        if message.write(&mut pipe).is_err() {
            break;
        }
    }
}

/// Resident memory of `pid` and its descendants, in KiB.
fn tree_memory_kib(pid: i32) -> u64 {
    let page_kib = {
        // SAFETY: sysconf has no preconditions.
        let size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        (size.max(4096) / 1024) as u64
    };
    let mut total = 0;
    let mut pending = vec![pid];
    let mut seen = 0;
    while let Some(pid) = pending.pop() {
        seen += 1;
        if seen > 4096 {
            break;
        }
        if let Ok(statm) = std::fs::read_to_string(format!("/proc/{pid}/statm"))
            && let Some(resident) = statm.split_whitespace().nth(1)
        {
            total += resident.parse::<u64>().unwrap_or(0) * page_kib;
        }
        if let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) {
            for task in tasks.flatten() {
                if let Ok(children) = std::fs::read_to_string(task.path().join("children")) {
                    pending.extend(
                        children
                            .split_whitespace()
                            .filter_map(|c| c.parse::<i32>().ok()),
                    );
                }
            }
        }
    }
    total
}
