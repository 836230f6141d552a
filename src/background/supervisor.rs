//! The supervisor: the hidden subcommand `tinytool __supervise monitor|job ID` that runs
//! one monitor or background job detached from the call that started it (see the parent
//! module for the whole design).
//!
//! Protocol with the starting call: the row is `starting` in the database given by
//! `--state`; the supervisor answers one line on stdout — `ok` once the command runs and
//! the row is `running` with the supervisor's identity, else `error: <why>` — and then
//! points stdout at `/dev/null`. Everything else goes through the database: a monitor's
//! lines, the end of the work. It is hidden from help, completions and man pages.

use std::collections::VecDeque;
use std::io::{self, Write};
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use clap::{Arg, ArgMatches, Command};

use super::KEEP_LINES;
use crate::events::{EventSink, unix_millis};
use crate::exit::ExitStatus;
use crate::process::environment;
use crate::process::identity::Identity;
use crate::process::run::{self, Captures, Isolation, Outcome, Program, Request, Stream, Watcher};
use crate::session::CancelFlag;
use crate::state::{Background, Store, Supervision};
use crate::truncate::Limits;

/// The hidden subcommand's name.
pub const SUBCOMMAND: &str = "__supervise";

/// How often a monitor's new lines are written to the database.
const FLUSH_EVERY: Duration = Duration::from_millis(100);

/// The longest line a monitor keeps (the reference reads lines of up to 64 KiB); longer
/// lines are cut on a character boundary and end in `…`.
const MAX_LINE: usize = 64 * 1024;
/// What stderr lines of a monitor start with.
const STDERR_PREFIX: &str = "STDERR: ";

/// The name of a kind on the command line.
pub fn kind_name(kind: Background) -> &'static str {
    match kind {
        Background::Monitor => "monitor",
        Background::Job => "job",
    }
}

/// The hidden subcommand (only in the full command line, never in the documented one).
pub fn command() -> Command {
    Command::new(SUBCOMMAND)
        .hide(true)
        .about("Internal: supervise one monitor or background job (started by monitor and task)")
        .arg(
            Arg::new("kind")
                .value_name("KIND")
                .required(true)
                .value_parser(["monitor", "job"]),
        )
        .arg(
            Arg::new("id")
                .value_name("ID")
                .required(true)
                .value_parser(clap::value_parser!(i64)),
        )
        .arg(
            Arg::new("checkpoint")
                .long("checkpoint")
                .value_name("CHECKPOINT")
                .value_parser(clap::value_parser!(i64)),
        )
}

/// Runs the subcommand: `dir` and `state` come from the global options, `events` too.
pub fn main(dir: &Path, state: &Path, events: Option<&str>, sub: &ArgMatches) -> ExitStatus {
    // Started through /proc/self/exe, it would show as `exe` in ps and top.
    // SAFETY: prctl with a pointer to a static NUL-terminated name.
    unsafe {
        libc::prctl(
            libc::PR_SET_NAME,
            c"tinytool".as_ptr() as libc::c_ulong,
            0,
            0,
            0,
        );
    }
    let mut handshake = Handshake { pending: true };
    let stop = CancelFlag::default();
    crate::process::stop_on_signals(stop.clone());
    let kind = match sub.get_one::<String>("kind").map(String::as_str) {
        Some("job") => Background::Job,
        _ => Background::Monitor,
    };
    let id = sub.get_one::<i64>("id").copied().unwrap_or(0);
    let events = events.and_then(|spec| EventSink::open(spec).ok());
    // Always set by the starting call; without it the default (`auto`) applies, never none.
    let sandbox = std::env::var(crate::sandbox_settings::SETTINGS_VAR)
        .map(|text| crate::sandbox_settings::Settings::decode(&text))
        .unwrap_or_default();
    let setup = Setup {
        dir: dir.to_path_buf(),
        state: state.to_path_buf(),
        events: events.unwrap_or_default(),
        stop,
        sandbox,
        checkpoint: sub.get_one::<i64>("checkpoint").copied(),
    };
    match supervise(&setup, kind, id, &mut handshake) {
        Ok(()) => ExitStatus::Success,
        Err(err) => {
            handshake.answer(&format!("error: {err:#}"));
            ExitStatus::ToolError
        }
    }
}

struct Setup {
    dir: PathBuf,
    state: PathBuf,
    events: EventSink,
    stop: CancelFlag,
    /// The session's sandbox settings, from `TINYTOOL_SANDBOX`.
    sandbox: crate::sandbox_settings::Settings,
    /// The starting call's open checkpoint (`--checkpoint`), adopted once the command
    /// runs and closed when it ends (`checkpoints::handoff`).
    checkpoint: Option<i64>,
}

impl Setup {
    /// Closes the adopted checkpoint once the command ended (before the end is recorded,
    /// so whoever sees the end sees the complete checkpoint).
    fn close_checkpoint(&self, start: &Start<'_>) {
        if let (Some(id), true) = (self.checkpoint, start.adopted) {
            let _ = crate::checkpoints::handoff::close(&self.dir, &self.state, id);
        }
    }
}

impl Setup {
    /// The sandbox plan of the command (`None`: the mode is off).
    fn plan(&self, purpose: crate::sandbox::Purpose) -> Option<Arc<crate::sandbox::Plan>> {
        crate::sandbox::Plan::new(&self.sandbox, &self.dir, purpose).map(Arc::new)
    }
}

/// This process's environment without the sandbox settings meant for it alone.
fn inherited_env() -> impl Iterator<Item = (std::ffi::OsString, std::ffi::OsString)> {
    std::env::vars_os().filter(|(name, _)| name != crate::sandbox_settings::SETTINGS_VAR)
}

/// The one line answered to the starting call.
struct Handshake {
    pending: bool,
}

impl Handshake {
    fn answer(&mut self, line: &str) {
        if !self.pending {
            return;
        }
        self.pending = false;
        let mut out = io::stdout().lock();
        let _ = writeln!(out, "{}", line.replace('\n', " "));
        let _ = out.flush();
        drop(out);
        // The caller stops reading after the line; later writes must not go to its pipe.
        if let Ok(null) = std::fs::OpenOptions::new().write(true).open("/dev/null") {
            // SAFETY: dup2 between two descriptors this process owns.
            unsafe {
                libc::dup2(null.as_raw_fd(), 1);
            }
        }
    }
}

fn supervise(setup: &Setup, kind: Background, id: i64, handshake: &mut Handshake) -> Result<()> {
    let mut store = Store::open(&setup.state, &setup.dir)?;
    let me = Identity::of_self().context("cannot read the supervisor's own identity")?;
    match kind {
        Background::Monitor => supervise_monitor(setup, &mut store, id, me, handshake),
        Background::Job => supervise_job(setup, &mut store, id, me, handshake),
    }
}

/// What every supervised start does once the command runs: record the supervisor and the
/// group (refused when a later call gave up on the row meanwhile), then answer `ok`.
struct Start<'a> {
    kind: Background,
    id: i64,
    me: Identity,
    handshake: &'a mut Handshake,
    started: bool,
    /// Why recording the start failed (the command was then killed at once).
    refused: Option<String>,
    /// The command's sandbox, reported in the handshake.
    plan: Option<Arc<crate::sandbox::Plan>>,
    /// The starting call's checkpoint, to adopt once the command runs.
    checkpoint: Option<i64>,
    /// Whether it was adopted.
    adopted: bool,
}

impl<'a> Start<'a> {
    fn new(
        kind: Background,
        id: i64,
        me: Identity,
        handshake: &'a mut Handshake,
        plan: Option<Arc<crate::sandbox::Plan>>,
        checkpoint: Option<i64>,
    ) -> Self {
        Start {
            kind,
            id,
            me,
            handshake,
            started: false,
            refused: None,
            plan,
            checkpoint,
            adopted: false,
        }
    }

    /// When the command did not start: answers `refused SANDBOX` if `required` mode is
    /// why (the caller's error answer is then not sent).
    fn answer_refusal(&mut self) {
        if let Some(plan) = &self.plan
            && let Some(message) = plan.refusal()
        {
            let mut meta = plan.metadata();
            meta["refused"] = serde_json::json!(true);
            meta["message"] = serde_json::json!(message);
            self.handshake.answer(&format!("refused {meta}"));
        }
    }

    /// After the run: whether the command started; `Err` when recording its start failed.
    fn started(&mut self) -> Result<bool> {
        match self.refused.take() {
            Some(why) => bail!("{why}"),
            None => Ok(self.started),
        }
    }

    fn record(&mut self, store: &mut Store, pgid: libc::pid_t) -> io::Result<()> {
        let supervision = Supervision {
            pid: i64::from(self.me.pid),
            start: self.me.start as i64,
            boot_id: self.me.boot_id.clone(),
            pgid: i64::from(pgid),
        };
        match store.set_running(self.kind, self.id, &supervision) {
            Ok(true) => {
                self.started = true;
                // Before `ok`: the call leaves an adopted checkpoint open for us. Not
                // adopted, the call closes it as usual.
                if let Some(checkpoint) = self.checkpoint {
                    self.adopted =
                        crate::checkpoints::handoff::adopt(store, checkpoint, self.me.pid)
                            .unwrap_or(false);
                }
                // The sandbox is set up once the command runs (spawn returned after exec).
                let meta = crate::sandbox::metadata_of(self.plan.as_deref());
                self.handshake.answer(&format!("ok {meta}"));
                Ok(())
            }
            Ok(false) => self.refuse(format!(
                "{} was given up on before its supervisor started it",
                self.kind.label(self.id)
            )),
            Err(err) => self.refuse(format!("cannot record the start: {err:#}")),
        }
    }

    fn refuse(&mut self, why: String) -> io::Result<()> {
        self.refused = Some(why.clone());
        Err(io::Error::other(why))
    }
}

/// Milliseconds left until `deadline` (Unix milliseconds), at least 1.
fn time_left(deadline: i64) -> Duration {
    let left = deadline - unix_millis() as i64;
    Duration::from_millis(left.max(1) as u64)
}

fn supervise_monitor(
    setup: &Setup,
    store: &mut Store,
    id: i64,
    me: Identity,
    handshake: &mut Handshake,
) -> Result<()> {
    let Some(row) = store.monitor(id)? else {
        bail!("monitor {} is not recorded", Background::Monitor.label(id));
    };
    if row.status != "starting" {
        bail!(
            "monitor {} is {}, not starting",
            Background::Monitor.label(id),
            row.status
        );
    }
    let plan = setup.plan(crate::sandbox::Purpose {
        unmask_all: setup.sandbox.unmask_all,
        ..Default::default()
    });
    let request = Request {
        program: Program::Shell(&row.command),
        dir: &setup.dir,
        env: environment::child_env(inherited_env()),
        stdin: run::Input::Null,
        timeout: time_left(row.deadline),
        limits: Limits::default(),
        cancel: Some(setup.stop.clone()),
        isolation: Isolation::Group,
        sandbox: plan.clone(),
    };
    // Every line goes to a spill file too (read and grep open it): a read returns only the
    // newest unread lines.
    let outputs = crate::spill::Outputs::new(&setup.dir, crate::spill::KEEP_BYTES);
    let outputs = if setup.sandbox.unmask_all {
        outputs.sealed()
    } else {
        outputs
    };
    let log = outputs.create().ok();
    if let Some(log) = &log {
        let _ = store.set_monitor_log(id, &log.rel_path());
    }
    let mut watcher = MonitorWatcher {
        store,
        start: Start::new(
            Background::Monitor,
            id,
            me,
            handshake,
            plan,
            setup.checkpoint,
        ),
        lines: Lines {
            log,
            ..Lines::default()
        },
        next_flush: None,
        tail: Vec::new(),
    };
    let outcome = run::run_with(request, &mut watcher);
    if outcome.is_err() {
        watcher.start.answer_refusal();
    }
    setup.close_checkpoint(&watcher.start);
    let started = watcher.start.started()?;
    watcher.lines.finish();
    // As for bash: a failed command's last line names the sandbox rule that stopped it.
    if let (Ok(outcome), Some(plan)) = (&outcome, watcher.start.plan.clone()) {
        let failed = !outcome.cancelled && outcome.ending.exit_code() != Some(0);
        let text = String::from_utf8_lossy(&watcher.tail).into_owned();
        for line in plan.masking_lines() {
            watcher.lines.add(line);
        }
        let line = plan
            .stopped_line()
            .or_else(|| plan.undone_line())
            .or_else(|| failed.then(|| plan.explain_text(&text)).flatten())
            .or_else(|| {
                failed
                    .then(|| plan.explain_quiet_network(&row.command))
                    .flatten()
            });
        if let Some(line) = line {
            watcher.lines.add(line);
        }
    }
    watcher.flush();
    if let Some(log) = watcher.lines.log.take() {
        let logged = watcher.lines.logged;
        log.keep(logged);
    }
    let store = watcher.store;
    let (status, exit_code, signal, error) = match &outcome {
        Ok(outcome) => monitor_end(outcome),
        Err(err) => ("failed", None, None, Some(format!("cannot run sh: {err}"))),
    };
    store.finish_monitor(id, status, exit_code, signal, error.as_deref())?;
    if !started {
        // sh could not start: the starting call reports why.
        bail!(
            "{}",
            error.unwrap_or_else(|| "the monitor did not start".into())
        );
    }
    Ok(())
}

/// A monitor's end: status, exit code, signal, error.
fn monitor_end(outcome: &Outcome) -> (&'static str, Option<i64>, Option<i64>, Option<String>) {
    let code = outcome.ending.exit_code().map(i64::from);
    let signal = outcome.ending.signal().map(i64::from);
    let status = if outcome.cancelled {
        "stopped"
    } else if outcome.timed_out {
        "timed_out"
    } else {
        "exited"
    };
    (status, code, signal, None)
}

struct MonitorWatcher<'a, 'h> {
    store: &'a mut Store,
    start: Start<'h>,
    lines: Lines,
    next_flush: Option<Instant>,
    /// The end of the command's output (both streams, at most [`TAIL_BYTES`]), for the
    /// sandbox's explanatory line.
    tail: Vec<u8>,
}

/// How much of a monitor's output end the sandbox's explanation looks at.
const TAIL_BYTES: usize = 16 * 1024;

impl MonitorWatcher<'_, '_> {
    fn flush(&mut self) {
        if self.lines.pending.is_empty() && self.lines.dropped == 0 {
            return;
        }
        let lines: Vec<String> = self.lines.pending.drain(..).collect();
        let dropped = std::mem::take(&mut self.lines.dropped);
        if let Some(log) = &mut self.lines.log {
            log.flush();
        }
        // A database that stays busy past its timeout loses these lines, not the monitor.
        let _ = self
            .store
            .append_monitor_lines(self.start.id, &lines, dropped, KEEP_LINES);
    }
}

impl Watcher for MonitorWatcher<'_, '_> {
    fn started(&mut self, pgid: libc::pid_t) -> io::Result<()> {
        self.start.record(self.store, pgid)
    }

    fn output(&mut self, stream: Stream, bytes: &[u8]) {
        self.lines.push(stream, bytes);
        self.tail.extend_from_slice(bytes);
        if self.tail.len() > TAIL_BYTES {
            let excess = self.tail.len() - TAIL_BYTES;
            self.tail.drain(..excess);
        }
    }

    fn tick(&mut self, now: Instant) -> Option<Instant> {
        if self.lines.pending.is_empty() {
            return None;
        }
        let at = *self.next_flush.get_or_insert(now + FLUSH_EVERY);
        if now >= at {
            self.flush();
            self.next_flush = None;
            return None;
        }
        Some(at)
    }
}

/// Splits a monitor's two streams into lines: a trailing `\r` removed, stderr lines
/// prefixed with `STDERR: `, lines longer than [`MAX_LINE`] cut, invalid UTF-8 replaced,
/// and only the newest [`KEEP_LINES`] kept between flushes (the rest counted as dropped).
#[derive(Debug, Default)]
pub struct Lines {
    partial: [Vec<u8>; 2],
    cut: [bool; 2],
    /// Complete lines not written yet.
    pub pending: VecDeque<String>,
    /// Lines dropped since the last write.
    pub dropped: u64,
    /// Where every line also goes (the monitor's spill file).
    pub log: Option<crate::spill::SpillFile>,
    /// Bytes handed to the log.
    pub logged: u64,
}

impl Lines {
    /// Takes bytes of one stream.
    pub fn push(&mut self, stream: Stream, mut bytes: &[u8]) {
        let k = stream as usize;
        while !bytes.is_empty() {
            let (piece, ends) = match memchr::memchr(b'\n', bytes) {
                Some(pos) => (&bytes[..pos], Some(pos + 1)),
                None => (bytes, None),
            };
            let room = MAX_LINE.saturating_sub(self.partial[k].len());
            if piece.len() > room {
                self.cut[k] = true;
            }
            self.partial[k].extend_from_slice(&piece[..piece.len().min(room)]);
            match ends {
                Some(next) => {
                    self.end_line(k);
                    bytes = &bytes[next..];
                }
                None => bytes = &[],
            }
        }
    }

    /// Ends unterminated last lines (the command is over).
    pub fn finish(&mut self) {
        for k in 0..2 {
            if !self.partial[k].is_empty() || self.cut[k] {
                self.end_line(k);
            }
        }
    }

    fn end_line(&mut self, k: usize) {
        let mut bytes = std::mem::take(&mut self.partial[k]);
        let cut = std::mem::take(&mut self.cut[k]);
        if bytes.last() == Some(&b'\r') && !cut {
            bytes.pop();
        }
        if cut {
            // Back off an incomplete character at the cut.
            if let Err(err) = std::str::from_utf8(&bytes)
                && err.error_len().is_none()
            {
                bytes.truncate(err.valid_up_to());
            }
        }
        let mut line = String::new();
        if k == Stream::Stderr as usize {
            line.push_str(STDERR_PREFIX);
        }
        line.push_str(&String::from_utf8_lossy(&bytes));
        if cut {
            line.push('…');
        }
        self.add(line);
    }

    /// Adds a complete line: logged, and kept among the newest [`KEEP_LINES`].
    pub fn add(&mut self, line: String) {
        if let Some(log) = &mut self.log {
            log.write(line.as_bytes());
            log.write(b"\n");
            self.logged += line.len() as u64 + 1;
        }
        if self.pending.len() == KEEP_LINES {
            self.pending.pop_front();
            self.dropped += 1;
        }
        self.pending.push_back(line);
    }
}

fn supervise_job(
    setup: &Setup,
    store: &mut Store,
    id: i64,
    me: Identity,
    handshake: &mut Handshake,
) -> Result<()> {
    let label = Background::Job.label(id);
    let Some(row) = store.job(id)? else {
        bail!("job {label} is not recorded");
    };
    if row.status != "starting" {
        bail!("job {label} is {}, not starting", row.status);
    }
    let limits = crate::config::Config::load(&setup.dir)
        .map(|config| config.limits_in(&setup.dir))
        .unwrap_or_default();
    let timeout = time_left(row.deadline);
    // A subagent is a tinytool user: `.tinytool/` and its configured paths stay writable.
    let writable = crate::config::Config::load(&setup.dir)
        .map(|config| crate::sandbox::subagent_writable(&config, &row.subagent_type))
        .unwrap_or_default();
    let plan = setup.plan(crate::sandbox::Purpose {
        tinytool_writable: true,
        extra_writable: &writable,
        ..Default::default()
    });
    let request = Request {
        program: Program::Argv(&row.command),
        dir: &setup.dir,
        // The starting call put an explicit policy into this process's environment.
        env: environment::subagent_env(inherited_env(), row.depth.max(0) as u32, None),
        stdin: run::Input::Bytes(row.prompt.as_bytes()),
        timeout,
        limits: limits.clone(),
        cancel: Some(setup.stop.clone()),
        isolation: Isolation::Group,
        sandbox: plan.clone(),
    };
    let mut watcher = JobWatcher {
        store,
        start: Start::new(Background::Job, id, me, handshake, plan, setup.checkpoint),
        captures: Captures::new(limits),
    };
    let outcome = run::run_with(request, &mut watcher);
    if outcome.is_err() {
        watcher.start.answer_refusal();
    }
    setup.close_checkpoint(&watcher.start);
    let started = watcher.start.started()?;
    let JobWatcher {
        store, captures, ..
    } = watcher;
    let concluded = match outcome {
        Ok(outcome) => super::subagent::conclude(
            &row.subagent_type,
            captures.finish(outcome),
            Duration::from_millis(row.deadline_ms.max(0) as u64),
        ),
        Err(err) => super::subagent::Concluded {
            status: "failed",
            result: String::new(),
            error: super::subagent::start_error(&row.command, &err),
        },
    };
    let recorded = store.finish_job(id, concluded.status, &concluded.result, &concluded.error)?;
    if !started {
        bail!("{}", concluded.error);
    }
    if recorded {
        super::publish_job_completed(
            &setup.events,
            &row.session_id,
            id,
            concluded.status,
            &concluded.result,
            &concluded.error,
        );
    }
    Ok(())
}

struct JobWatcher<'a, 'h> {
    store: &'a mut Store,
    start: Start<'h>,
    captures: Captures,
}

impl Watcher for JobWatcher<'_, '_> {
    fn started(&mut self, pgid: libc::pid_t) -> io::Result<()> {
        self.start.record(self.store, pgid)
    }

    fn output(&mut self, stream: Stream, bytes: &[u8]) {
        self.captures.output(stream, bytes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(input: &[(Stream, &[u8])]) -> Lines {
        let mut lines = Lines::default();
        for (stream, bytes) in input {
            lines.push(*stream, bytes);
        }
        lines.finish();
        lines
    }

    #[test]
    fn streams_are_split_into_prefixed_lines() {
        let got = lines(&[
            (Stream::Stdout, b"one\r\ntw"),
            (Stream::Stderr, b"oops\n"),
            (Stream::Stdout, b"o\nlast"),
        ]);
        assert_eq!(
            Vec::from(got.pending),
            ["one", "STDERR: oops", "two", "last"]
        );
        assert_eq!(got.dropped, 0);
    }

    #[test]
    fn only_the_newest_lines_are_kept() {
        let text: String = (1..=250).map(|n| format!("{n}\n")).collect();
        let got = lines(&[(Stream::Stdout, text.as_bytes())]);
        assert_eq!(got.pending.len(), KEEP_LINES);
        assert_eq!(got.pending.front().map(String::as_str), Some("151"));
        assert_eq!(got.dropped, 150);
    }

    #[test]
    fn long_lines_are_cut_on_a_character_boundary() {
        let mut long = "a".repeat(MAX_LINE - 1).into_bytes();
        long.extend_from_slice("é and more\n".as_bytes());
        let got = lines(&[(Stream::Stdout, &long), (Stream::Stdout, b"next\n")]);
        let first = &got.pending[0];
        assert!(first.ends_with("a…"), "{}", &first[first.len() - 8..]);
        assert_eq!(first.len(), MAX_LINE - 1 + '…'.len_utf8());
        assert_eq!(got.pending[1], "next");
    }

    #[test]
    fn invalid_utf8_is_replaced() {
        let got = lines(&[(Stream::Stdout, b"a\xffb\n")]);
        assert_eq!(got.pending[0], "a\u{fffd}b");
    }
}
