//! The context of a call: what lasts for the whole process ([`Session`]: directory,
//! session id, events, limits, the permission gate and the after-hook) and what is made
//! fresh for each call ([`CallContext`]).

use std::cell::RefCell;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::access::Access;
use crate::config::Config;
use crate::events::EventSink;
use crate::paths;
use crate::state::State;
use crate::truncate::Limits;

/// The permission hook of the execution flow. The policy engine
/// implements it; [`AllowAll`] stands in where no policy applies.
pub trait PermissionGate: Send + Sync {
    /// Decides the accesses of a call before it runs (every one must be allowed); `Err`
    /// refuses the call. Tools also use it for commands they run on the side (formatters).
    fn check(&self, ctx: &CallContext, accesses: &[Access]) -> Result<(), Refusal>;

    /// Decides the accesses of a command a **project** config names (a formatter, a
    /// subagent): as [`PermissionGate::check`], and unless the project is trusted, every
    /// allow must come from a rule of the user (never the built-in `* * allow` alone), so
    /// nothing a repository ships runs by default.
    fn check_project_command(&self, ctx: &CallContext, accesses: &[Access]) -> Result<(), Refusal> {
        self.check(ctx, accesses)
    }

    /// Whether one access would be allowed without asking anybody (never prompts): skill
    /// uses it to leave out skills whose file the caller may not read.
    fn permits(&self, _ctx: &CallContext, _access: &Access) -> bool {
        true
    }

    /// Whether a rule naming the permission (not a `*` one, not a built-in) or a stored
    /// approval allows every access, without asking: a `secret-shell` allow rule for a
    /// command lifts the sandbox's masking for it.
    fn allows_explicitly(&self, _ctx: &CallContext, _accesses: &[Access]) -> bool {
        false
    }

    /// The judge of `read` for every path below `root` (resolved) that a search meets,
    /// built once per call; like `permits`, it never asks anybody.
    fn read_judge(&self, _ctx: &CallContext, _root: &Path) -> crate::policy::ReadJudge {
        crate::policy::ReadJudge::allow_all()
    }

    /// Whether the tool `name` (of permission category `permission`) is hidden from
    /// `tools` listings (disabled or denied outright).
    fn hides(&self, _session: &Session, _name: &str, _permission: &str) -> bool {
        false
    }

    /// Whether a tool is disabled (a call answers `Tool <name> is disabled`).
    fn is_disabled(&self, _name: &str) -> bool {
        false
    }
}

/// A refused call: the message the caller sees and the facts for `metadata`.
#[derive(Debug, Clone, Default)]
pub struct Refusal {
    /// What was refused, why, and the rule that would allow it.
    pub message: String,
    /// Structured facts: permission, pattern, deciding rule.
    pub metadata: Map<String, Value>,
}

/// A gate that allows every call.
#[derive(Debug, Default)]
pub struct AllowAll;

impl PermissionGate for AllowAll {
    fn check(&self, _: &CallContext, _: &[Access]) -> Result<(), Refusal> {
        Ok(())
    }
}

/// The after-hook of the execution flow: may replace a successful call's output and error flag.
pub trait AfterHook: Send + Sync {
    /// Returns the new `(output, is_error)` when the hook changed the result.
    fn apply(&self, ctx: &CallContext, output: &str, is_error: bool) -> Option<(String, bool)>;
}

/// Subagents cannot nest deeper than this (reference `maxSubagentDepth`): a session at
/// this [`Session::depth`] starts none.
pub const MAX_SUBAGENT_DEPTH: u32 = 5;

/// Everything a call needs that lasts longer than the call.
pub struct Session {
    /// SessionID: todos, agent mode, jobs and approvals are per session.
    pub id: String,
    /// The Directory: relative paths resolve here (resolved, absolute).
    pub dir: PathBuf,
    /// Where bus events go.
    pub events: EventSink,
    /// Output limits for previews.
    pub limits: Limits,
    /// The merged config files.
    pub config: Config,
    /// Subagent depth of this process (`TINYTOOL_SUBAGENT_DEPTH`).
    pub depth: u32,
    /// The session state database (opened lazily).
    pub state: State,
    /// The answers file for `question` (`--answers`).
    pub answers: Option<PathBuf>,
    /// The explicit policy file (`--policy` / `TINYTOOL_POLICY`), handed on to subagents.
    pub policy_file: Option<PathBuf>,
    /// The permission hook.
    pub gate: Box<dyn PermissionGate>,
    /// The after-hook, when one is configured.
    pub after_hook: Option<Box<dyn AfterHook>>,
    /// Who answers `question` besides the answers file and the terminal (MCP elicitation).
    pub asker: Option<Box<dyn Asker>>,
    /// Set when the running call is cancelled (MCP `notifications/cancelled`); tools that
    /// wait on processes poll it and kill what they started.
    pub cancel: CancelFlag,
    /// The kernel sandbox settings of the commands this session runs.
    pub sandbox: crate::sandbox_settings::Settings,
}

/// Asks the user through the client of a protocol session (MCP elicitation).
pub trait Asker: Send + Sync {
    /// The answer; `Ok(None)` when this asker cannot ask (the client offers no way), `Err`
    /// when the user declined or cancelled.
    fn ask(&self, question: &str, options: &[String]) -> Result<Option<String>, String>;

    /// Whether the client in front of this thread's request could be asked (it offered a
    /// way): what decides whether `question` is offered. `true` when that cannot be told.
    fn reachable(&self) -> bool {
        true
    }
}

/// A cancellation flag shared between the thread running a call and the one that may
/// cancel it.
#[derive(Debug, Clone, Default)]
pub struct CancelFlag(std::sync::Arc<std::sync::atomic::AtomicBool>);

impl CancelFlag {
    /// Whether the running call was cancelled.
    pub fn is_set(&self) -> bool {
        self.0.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Cancels the running call.
    pub fn set(&self) {
        self.0.store(true, std::sync::atomic::Ordering::SeqCst);
    }

    /// Clears the flag before the next call.
    pub fn clear(&self) {
        self.0.store(false, std::sync::atomic::Ordering::SeqCst);
    }
}

/// What one call running on a thread of its own carries besides the session (the MCP
/// server runs calls concurrently on a pool): its own cancellation flag and where its
/// progress goes. A thread-local, so the tools and the process runner need no new
/// parameter; outside a scope the session's flag applies and progress goes nowhere.
#[derive(Clone, Default)]
pub struct CallScope {
    /// Set when this call is cancelled.
    pub cancel: CancelFlag,
    /// Receives progress of a long call (see [`report_progress`]).
    pub progress: Option<ProgressSink>,
}

/// Where a call's progress goes.
type ProgressSink = std::sync::Arc<dyn Fn(&Progress) + Send + Sync>;

/// How far a long call has come: what a progress notification says.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Progress {
    /// Time since the command started.
    pub elapsed: std::time::Duration,
    /// Lines of output so far (both streams).
    pub lines: u64,
}

thread_local! {
    static SCOPE: RefCell<Option<CallScope>> = const { RefCell::new(None) };
}

/// Runs `work` with `scope` as this thread's call scope.
pub fn in_scope<R>(scope: CallScope, work: impl FnOnce() -> R) -> R {
    let previous = SCOPE.with(|slot| slot.replace(Some(scope)));
    let result = work();
    SCOPE.with(|slot| slot.replace(previous));
    result
}

/// Hands progress of the running call to its scope's receiver, if any.
pub fn report_progress(progress: &Progress) {
    let receiver = SCOPE.with(|slot| slot.borrow().as_ref().and_then(|s| s.progress.clone()));
    if let Some(receiver) = receiver {
        receiver(progress);
    }
}

/// Whether the running call has a progress receiver (so the runner counts lines).
pub fn wants_progress() -> bool {
    SCOPE.with(|slot| slot.borrow().as_ref().is_some_and(|s| s.progress.is_some()))
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("id", &self.id)
            .field("dir", &self.dir)
            .finish_non_exhaustive()
    }
}

impl Session {
    /// The cancellation flag of the call running on this thread: its scope's own (see
    /// [`CallScope`]), else the session's.
    pub fn cancel_flag(&self) -> CancelFlag {
        SCOPE
            .with(|slot| slot.borrow().as_ref().map(|s| s.cancel.clone()))
            .unwrap_or_else(|| self.cancel.clone())
    }

    /// A session in `dir` (resolved here) that allows everything and records no events.
    pub fn new(id: impl Into<String>, dir: &Path) -> Self {
        let dir = paths::resolve_symlinks(&paths::clean(dir));
        let state_path = crate::project::tinytool_dir(&dir).join("state.db");
        Session {
            id: id.into(),
            state: State::new(state_path, dir.clone()),
            answers: None,
            policy_file: None,
            dir,
            events: EventSink::none(),
            limits: Limits::default(),
            config: Config::default(),
            depth: 0,
            gate: Box::new(AllowAll),
            after_hook: None,
            asker: None,
            cancel: CancelFlag::default(),
            sandbox: crate::sandbox_settings::Settings::default(),
        }
    }
}

/// Work a tool leaves for the end of its call (a pending agent switch is applied after the
/// call, not during it).
type Deferred = Box<dyn FnOnce(&CallContext)>;

/// The fresh per-call context a tool runs with.
pub struct CallContext<'a> {
    /// The session the call belongs to.
    pub session: &'a Session,
    /// The tool being called.
    pub tool: &'a str,
    deferred: RefCell<Vec<Deferred>>,
    /// Every path argument resolved in this call, by (final link kept, input): the policy
    /// judges a path when the call's accesses are listed and the tool acts on it later;
    /// resolving again in between could give another answer once a directory was swapped
    /// for a symlink, so a call resolves each path once.
    resolved: RefCell<std::collections::HashMap<(bool, String), PathBuf>>,
    /// The call's open checkpoint, for a supervisor the call starts to take over.
    handoff: Handoff,
}

/// A call's open checkpoint on its way to the supervisor of a monitor or background job
/// the call starts, which keeps it open until its command ends (`checkpoints::handoff`
/// says how). It travels with the call's context, so concurrent calls never see each
/// other's.
#[derive(Debug, Default)]
struct Handoff {
    /// The open checkpoint, until a supervisor takes it.
    offered: std::cell::Cell<Option<i64>>,
    /// The checkpoint a supervisor of this call adopted.
    handed: std::cell::Cell<Option<i64>>,
}

impl std::fmt::Debug for CallContext<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallContext")
            .field("session", &self.session.id)
            .field("tool", &self.tool)
            .finish_non_exhaustive()
    }
}

impl<'a> CallContext<'a> {
    /// A fresh context for one call of `tool`.
    pub fn new(session: &'a Session, tool: &'a str) -> Self {
        CallContext {
            session,
            tool,
            deferred: RefCell::new(Vec::new()),
            resolved: RefCell::new(std::collections::HashMap::new()),
            handoff: Handoff::default(),
        }
    }

    /// Offers the call's open checkpoint `id` to a supervisor the call may start.
    pub fn offer_checkpoint(&self, id: i64) {
        self.handoff.offered.set(Some(id));
        self.handoff.handed.set(None);
    }

    /// Takes the offered checkpoint (once: a second supervisor of the same call gets none).
    pub fn take_checkpoint_offer(&self) -> Option<i64> {
        self.handoff.offered.take()
    }

    /// Records that a supervisor adopted checkpoint `id` and answered that its command runs.
    pub fn checkpoint_handed(&self, id: i64) {
        self.handoff.handed.set(Some(id));
    }

    /// Ends the offer after the call; the checkpoint id when a supervisor adopted it (the
    /// call must then leave it open).
    pub fn withdraw_checkpoint_offer(&self) -> Option<i64> {
        self.handoff.offered.set(None);
        self.handoff.handed.take()
    }

    /// Leaves work for the end of the call (after the tool's output is complete).
    pub fn defer(&self, work: Deferred) {
        self.deferred.borrow_mut().push(work);
    }

    /// Runs the deferred work, in order.
    pub fn run_deferred(&self) {
        let work: Vec<Deferred> = self.deferred.borrow_mut().drain(..).collect();
        for item in work {
            item(self);
        }
    }

    /// Resolves a path argument against the session's directory (see `paths::resolve`),
    /// once per call: a second request for the same input gets the first answer.
    pub fn resolve(&self, input: &str) -> PathBuf {
        self.resolve_once(false, input)
    }

    /// Resolves a path argument except its final component (see `paths::resolve_link`),
    /// once per call like [`CallContext::resolve`].
    pub fn resolve_link(&self, input: &str) -> PathBuf {
        self.resolve_once(true, input)
    }

    fn resolve_once(&self, link: bool, input: &str) -> PathBuf {
        let key = (link, input.to_string());
        if let Some(path) = self.resolved.borrow().get(&key) {
            return path.clone();
        }
        let path = if link {
            paths::resolve_link(&self.session.dir, input)
        } else {
            paths::resolve(&self.session.dir, input)
        };
        self.resolved.borrow_mut().insert(key, path.clone());
        path
    }

    /// How a path is shown in outputs: relative inside the directory, else absolute.
    pub fn display(&self, path: &Path) -> String {
        paths::display(&self.session.dir, path)
    }

    /// The `Did you mean:` sentence for `path` (resolved), which does not exist: the
    /// paths [`crate::suggest`] finds in the project that the policy lets the model read
    /// without asking (a suggestion must not reveal what a read would be refused), shown
    /// as outputs show paths; `None` when there is none.
    pub fn did_you_mean(&self, path: &Path, want: crate::suggest::Want) -> Option<String> {
        let dir = &self.session.dir;
        let gate = &self.session.gate;
        let judge = gate.read_judge(self, dir);
        // The judge speaks for paths below the project; a sibling outside it is decided
        // like a read of its own.
        let keep = |candidate: &Path| match paths::relative_inside(dir, candidate) {
            Some(rel) if rel != "." => judge.permits(candidate),
            _ => gate.permits(
                self,
                &Access::resolved(self, "read", candidate.to_path_buf()),
            ),
        };
        let not_project = self.session.config.not_project_for_search();
        crate::suggest::missing(dir, path, want, &not_project, &keep).sentence(|p| self.display(p))
    }

    /// Asks the permission gate about accesses the tool needs beyond the call's own (a
    /// formatter or subagent command as a `shell` access).
    pub fn allows(&self, accesses: &[Access]) -> Result<(), Refusal> {
        self.session.gate.check(self, accesses)
    }

    /// As [`CallContext::allows`], for a command the project config names.
    pub fn allows_project_command(&self, accesses: &[Access]) -> Result<(), Refusal> {
        self.session.gate.check_project_command(self, accesses)
    }

    /// Publishes a bus event with the session id added to its properties.
    pub fn publish(&self, kind: &str, mut properties: Map<String, Value>) {
        if self.session.events.is_enabled() {
            properties.insert("sessionID".into(), Value::String(self.session.id.clone()));
            self.session.events.publish(kind, Value::Object(properties));
        }
    }
}

/// The file accesses of a call: paths resolved once per call ([`CallContext::resolve`]).
impl Access {
    /// A file access: `input` is resolved against the directory, and the pattern is the
    /// path relative to it (forward slashes, symlinks resolved), or absolute outside it.
    pub fn path(ctx: &CallContext, permission: impl Into<String>, input: &str) -> Self {
        Access::resolved(ctx, permission, ctx.resolve(input))
    }

    /// A file access for a path already resolved (see `paths`): the pattern is the path
    /// relative to the directory, or absolute outside it.
    pub fn resolved(ctx: &CallContext, permission: impl Into<String>, path: PathBuf) -> Self {
        Access {
            permission: permission.into(),
            pattern: ctx.display(&path),
            reason: None,
            path: Some(path),
            normalized: None,
            whole: false,
        }
    }

    /// The file access of a call whose path is its `file_path` argument.
    pub fn file_path(
        ctx: &CallContext,
        permission: &str,
        args: &Map<String, Value>,
    ) -> Vec<Access> {
        let path = args
            .get("file_path")
            .and_then(Value::as_str)
            .unwrap_or_default();
        vec![Access::path(ctx, permission, path)]
    }
}

/// The shell detectors' places, as a session knows them.
impl crate::detect::Places {
    /// The places of a session: those of its directory, and its explicit policy file.
    pub fn for_session(session: &Session) -> crate::detect::Places {
        crate::detect::Places {
            policy_file: session.policy_file.clone(),
            ..crate::detect::Places::for_dir(&session.dir)
        }
    }
}
