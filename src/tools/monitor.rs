//! `monitor`: long-running commands — dev servers, watchers, log tails — that keep running
//! between calls.
//!
//! `start` runs the command as `sh -c` under a detached supervisor (see `background`):
//! in its own process group, with bash's environment rules, stopped at its deadline
//! (`timeout_ms`, default 300,000, at most 1,800,000). It needs the same permissions as
//! the same command in `bash` (`shell`, plus `secret-shell` / `destructive-shell` when the
//! detectors find something), so the policy decides it exactly as it would decide bash.
//! At most 5 monitors run at once in a project; the 6th start is refused.
//!
//! Output: the supervisor keeps the newest 100 lines not read yet (stderr lines start
//! with `STDERR: `), and writes every line to a spill file under `.tinytool/outputs/`
//! (`metadata.log`; a read that left lines out names it, and read or grep open it);
//! `read` returns and clears them, headed by the monitor's state —
//! where the reference delivers them "at the next turn boundary":
//!
//! ```text
//! [Monitor mon_1 (npm run dev) — running]
//! ready on http://localhost:3000
//! STDERR: warning: ...
//! ```
//!
//! `list` is the reference's JSON array (`id`, `description`, `started`, `deadline`,
//! `buffered_lines`, `running`; times in RFC 3339, UTC); `stop` kills the monitor's group.
//! Monitors belong to the project (like the reference's manager, shared by the sessions
//! of a registry): every session sees and may stop them. A monitor leaves `list` once a
//! `read` or `stop` reported its end; `tinytool state monitors` shows all of them until
//! they are pruned, 7 days after their end.

use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::background::{self, KEEP_LINES, MAX_MONITORS, spawn_supervisor};
use crate::detect::Places;
use crate::detect::shell_accesses;
use crate::events::new_id;
use crate::process::words::{go_duration, signal_name};
use crate::schema;
use crate::session::{CallContext, Session};
use crate::state::{Background, Monitor, MonitorSlot, NewMonitor, UNFINISHED};
use crate::tool::{Access, ToolDef, ToolDoc, ToolOutput, parse_args};

/// Run time when none is given, in milliseconds (5 minutes).
pub const DEFAULT_TIMEOUT_MS: i64 = 300_000;
/// The longest run time, in milliseconds (30 minutes); larger values are lowered to it.
pub const MAX_TIMEOUT_MS: i64 = 1_800_000;
/// A label made from the command keeps this many bytes of it.
const LABEL_BYTES: usize = 60;

/// The `monitor` tool's definition.
pub fn definition() -> ToolDef {
    ToolDef {
        name: "monitor",
        summary: "Run a long-lived command in the background and read its output later",
        description: "Run a long-lived shell command — a dev server, a watcher, a log tail — \
            in the background, and read what it prints in later calls. \
            `action: start` (the default when `command` is given) runs `command` with `sh -c` \
            and returns its id (mon_N); it is stopped after `timeout_ms` milliseconds \
            (default 300000, at most 1800000). `action: read` with `monitor_id` returns the \
            lines printed since the last read (the newest 100; every line is also in the file \
            metadata.log names, for read and grep; stderr lines start with `STDERR: `) and whether it is still running or how it exited; without \
            `monitor_id` it reads every monitor with news. `action: list` returns a JSON \
            array of the monitors; `action: stop` with `monitor_id` stops one and everything \
            it started. At most 5 run at once. Use bash for commands that finish on their \
            own.",
        permission: "shell",
        schema: parameters,
        execute,
        access: Some(access),
        precheck: None,
        checkpoint: Some(checkpoint),
        needs: None,
        after_changes: None,
        doc: ToolDoc {
            output: "start: `Monitor started: LABEL (ID: mon_N)` and a line saying how to read \
                and stop it (LABEL is the description, or the command cut to 60 bytes plus \
                `...`). read: a block per monitor, `[Monitor mon_N (LABEL) — STATE]` then its \
                new lines (`(no new output)` when there are none); STATE is `running`, \
                `exited with code N`, `killed by SIGNAL`, `stopped`, `stopped at its deadline \
                (timeout 5m0s)` or `failed: WHY`; when more than 100 lines arrived between reads, a \
                line `[N earlier lines not in this read …: every line is in PATH (read or grep \
                it)]` names the spill file that holds every line (metadata.log); a read of more than 2000 lines \
                or 51200 bytes is previewed like any output, its whole text kept in the \
                spill file named by metadata.full_output. list: a JSON array of \
                {\"id\", \"description\", \"started\", \"deadline\", \"buffered_lines\", \
                \"running\"} (RFC 3339 times, UTC), the monitors whose end no read or stop has \
                reported yet. stop: `Monitor mon_N stopped`. metadata: monitor_id, state, \
                running, lines, dropped as they apply. `tinytool state monitors` shows every \
                stored monitor.",
            errors: "`command is required to start a monitor`; `Failed to start monitor: \
                maximum concurrent monitors (5) reached ...` (stop one first); \
                `monitor_id is required for stop action` (and for a read of one monitor by \
                id, give `mon_N`); `Failed to stop monitor: monitor mon_N not found`; a \
                refusal (exit status 3) when the policy does not allow the command as it \
                would not allow it in bash (`shell`, `secret-shell`, `destructive-shell`).",
            examples: &[
                (
                    "Start a dev server",
                    "tinytool monitor --command 'npm run dev' --description 'dev server'",
                ),
                (
                    "See what it printed",
                    "tinytool monitor --action read --monitor-id mon_1",
                ),
                ("List the monitors", "tinytool monitor --action list"),
                (
                    "Stop it",
                    "tinytool monitor --action stop --monitor-id mon_1",
                ),
            ],
        },
    }
}

fn parameters() -> Value {
    schema::object(
        json!({
            "action": {
                "type": "string",
                "enum": ["start", "list", "read", "stop"],
                "description": "What to do (default: start, or stop when only monitor_id is given)."
            },
            "command": {
                "type": "string",
                "description": "The shell command to run (sh -c, in the working directory). Required to start."
            },
            "timeout_ms": {
                "type": "integer",
                "description": "Stop the command after this many milliseconds (default 300000, at most 1800000; 0 or less means the default)."
            },
            "description": {
                "type": "string",
                "description": "A short label for the monitor (default: the command)."
            },
            "monitor_id": {
                "type": "string",
                "description": "The monitor to read or stop (mon_N)."
            }
        }),
        &[],
    )
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct MonitorArgs {
    action: Option<String>,
    command: Option<String>,
    timeout_ms: Option<i64>,
    description: Option<String>,
    monitor_id: Option<String>,
}

/// The reference's default action: `stop` when only `monitor_id` is given, else `start`.
fn effective_action<'a>(
    action: Option<&'a str>,
    monitor_id: Option<&str>,
    command: Option<&str>,
) -> &'a str {
    let given = |s: Option<&str>| s.is_some_and(|s| !s.is_empty());
    match action.filter(|a| !a.is_empty()) {
        Some(action) => action,
        None if given(monitor_id) && !given(command) => "stop",
        None => "start",
    }
}

/// [`effective_action`] of unparsed arguments.
fn action_of(args: &Map<String, Value>) -> &str {
    let text = |key: &str| args.get(key).and_then(Value::as_str);
    effective_action(text("action"), text("monitor_id"), text("command"))
}

/// A start needs exactly what the same command needs in bash; the other actions need
/// `shell` for `monitor` (the reference's pattern for a call without a command).
fn access(ctx: &CallContext, args: &Map<String, Value>) -> Vec<Access> {
    let command = args
        .get("command")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if action_of(args) == "start" && !command.trim().is_empty() {
        shell_accesses(command, &Places::for_session(ctx.session))
    } else {
        vec![Access::new("shell", "monitor")]
    }
}

/// The effective run time: the default for none or ≤ 0, lowered to the maximum.
pub fn effective_timeout(requested: Option<i64>) -> i64 {
    match requested {
        Some(ms) if ms > 0 => ms.min(MAX_TIMEOUT_MS),
        _ => DEFAULT_TIMEOUT_MS,
    }
}

/// The label: the description, else the command cut to 60 bytes (on a character
/// boundary) plus `...`.
pub fn label(command: &str, description: Option<&str>) -> String {
    if let Some(description) = description.map(str::trim).filter(|d| !d.is_empty()) {
        return description.to_string();
    }
    if command.len() <= LABEL_BYTES {
        return command.to_string();
    }
    format!(
        "{}...",
        &command[..command.floor_char_boundary(LABEL_BYTES)]
    )
}

fn execute(ctx: &CallContext, args: Map<String, Value>) -> anyhow::Result<ToolOutput> {
    let args: MonitorArgs = match parse_args(args) {
        Ok(args) => args,
        Err(output) => return Ok(output),
    };
    let action = effective_action(
        args.action.as_deref(),
        args.monitor_id.as_deref(),
        args.command.as_deref(),
    );
    match action {
        "start" => start(ctx, &args),
        "list" => list(ctx),
        "read" => read(ctx, args.monitor_id.as_deref()),
        "stop" => stop(ctx, args.monitor_id.as_deref()),
        other => Ok(ToolOutput::error(format!("Unknown action: {other}"))),
    }
}

fn start(ctx: &CallContext, args: &MonitorArgs) -> anyhow::Result<ToolOutput> {
    let session = ctx.session;
    let command = args.command.as_deref().unwrap_or_default();
    if command.trim().is_empty() {
        return Ok(ToolOutput::error("command is required to start a monitor"));
    }
    let timeout_ms = effective_timeout(args.timeout_ms);
    let label = label(command, args.description.as_deref());
    background::reap(session, Background::Monitor)?;
    let token = new_id("tok");
    let slot = session.state.write(|s| {
        s.start_monitor(
            &NewMonitor {
                session_id: &session.id,
                command,
                description: &label,
                timeout_ms,
                token: &token,
            },
            MAX_MONITORS,
        )
    })?;
    let id = match slot {
        MonitorSlot::Taken(id) => id,
        MonitorSlot::Full(running) => {
            let ids: Vec<String> = running
                .iter()
                .map(|id| Background::Monitor.label(*id))
                .collect();
            let first = ids.first().cloned().unwrap_or_else(|| "mon_1".into());
            return Ok(ToolOutput::error(format!(
                "Failed to start monitor: maximum concurrent monitors ({MAX_MONITORS}) reached \
                 (running: {}). Stop one first: {{\"action\": \"stop\", \"monitor_id\": \"{first}\"}}.",
                ids.join(", ")
            )));
        }
    };
    let monitor_id = Background::Monitor.label(id);
    let unmask_all = crate::tools::bash::secrets_allowed(ctx, command);
    let sandbox = match spawn_supervisor(ctx, Background::Monitor, id, &token, unmask_all) {
        Ok(sandbox) => sandbox,
        Err(failure) => {
            let why = failure.why;
            session
                .state
                .write(|s| s.abandon(Background::Monitor, id, "failed", &why))?;
            if let Some(refused) = failure.refused {
                return Ok(ToolOutput::error(why)
                    .with("monitor_id", monitor_id)
                    .with("sandbox", refused));
            }
            return Ok(ToolOutput::error(format!("Failed to start monitor: {why}"))
                .with("monitor_id", monitor_id));
        }
    };
    let text = format!(
        "Monitor started: {label} (ID: {monitor_id})\n\
         Read its output with {{\"action\": \"read\", \"monitor_id\": \"{monitor_id}\"}}; it \
         runs until it exits, is stopped or reaches its deadline ({}).",
        go_duration(std::time::Duration::from_millis(timeout_ms as u64))
    );
    Ok(ToolOutput::text(text)
        .with("monitor_id", monitor_id)
        .with("timeout_ms", timeout_ms)
        .with("sandbox", sandbox))
}

/// A monitor as `list` shows it (the reference's fields).
fn list_entry(monitor: &Monitor) -> Value {
    json!({
        "id": Background::Monitor.label(monitor.id),
        "description": monitor.description,
        "started": crate::clock::rfc3339(monitor.time_created),
        "deadline": crate::clock::rfc3339(monitor.deadline),
        "buffered_lines": monitor.buffered,
        "running": is_running(monitor),
    })
}

/// A monitor as `tinytool state monitors` shows it.
pub fn state_entry(monitor: &Monitor) -> Value {
    json!({
        "id": Background::Monitor.label(monitor.id),
        "session": monitor.session_id,
        "description": monitor.description,
        "command": monitor.command,
        "status": background::shown_status(&monitor.status),
        "state": state_text(monitor),
        "exit_code": monitor.exit_code,
        "started": crate::clock::rfc3339(monitor.time_created),
        "deadline": crate::clock::rfc3339(monitor.deadline),
        "ended": monitor.time_ended.map(crate::clock::rfc3339),
        "buffered_lines": monitor.buffered,
        "running": is_running(monitor),
    })
}

fn is_running(monitor: &Monitor) -> bool {
    UNFINISHED.contains(&monitor.status.as_str())
}

/// The state shown after a monitor's id: `running`, `exited with code 0`, ….
fn state_text(monitor: &Monitor) -> String {
    match monitor.status.as_str() {
        "starting" | "running" => "running".into(),
        "stopped" => "stopped".into(),
        "timed_out" => format!(
            "stopped at its deadline (timeout {})",
            go_duration(std::time::Duration::from_millis(
                monitor.timeout_ms.max(0) as u64
            ))
        ),
        "failed" => format!(
            "failed: {}",
            monitor.error.as_deref().unwrap_or("unknown error")
        ),
        _ => match (monitor.exit_code, monitor.signal) {
            (Some(code), _) => format!("exited with code {code}"),
            (None, Some(signal)) => format!(
                "killed by {}",
                signal_name(i32::try_from(signal).unwrap_or(0))
            ),
            (None, None) => "exited".into(),
        },
    }
}

fn list(ctx: &CallContext) -> anyhow::Result<ToolOutput> {
    let session = ctx.session;
    background::reap(session, Background::Monitor)?;
    let monitors = session
        .state
        .read(|s| s.monitors(false))?
        .unwrap_or_default();
    let entries: Vec<Value> = monitors.iter().map(list_entry).collect();
    let ids: Vec<i64> = monitors.iter().map(|m| m.id).collect();
    Ok(ToolOutput::text(Value::Array(entries).to_string())
        .with(
            "sandbox",
            background::sandbox_of_all(session, Background::Monitor, &ids),
        )
        .with("count", monitors.len())
        .with("running", monitors.iter().filter(|m| is_running(m)).count()))
}

/// Looks a monitor id up; the error text when it does not name a stored monitor.
fn find(
    ctx: &CallContext,
    monitor_id: &str,
    verb: &str,
) -> anyhow::Result<Result<Monitor, String>> {
    let missing = || format!("Failed to {verb} monitor: monitor {monitor_id} not found");
    let Some(id) = Background::Monitor.parse(monitor_id) else {
        return Ok(Err(missing()));
    };
    let monitor = ctx.session.state.read(|s| s.monitor(id))?.flatten();
    Ok(monitor.ok_or_else(missing))
}

/// One read block: the header, then the lines; the monitor's end, once reported, is
/// acknowledged (it leaves `list`).
fn read_block(ctx: &CallContext, monitor: &Monitor) -> anyhow::Result<(String, usize, i64)> {
    // The state is read before the lines: a monitor seen finished has flushed every line.
    let (lines, dropped) = ctx
        .session
        .state
        .write(|s| s.take_monitor_lines(monitor.id))?;
    if !is_running(monitor) {
        ctx.session
            .state
            .write(|s| s.acknowledge_monitor(monitor.id))?;
    }
    let mut block = format!(
        "[Monitor {} ({}) \u{2014} {}]",
        Background::Monitor.label(monitor.id),
        monitor.description,
        state_text(monitor)
    );
    if dropped > 0 {
        let log = ctx
            .session
            .state
            .read(|s| s.monitor(monitor.id))?
            .flatten()
            .map(|m| m.log)
            .unwrap_or_default();
        if log.is_empty() {
            block.push_str(&format!(
                "\n[{dropped} earlier lines dropped: a monitor keeps its newest {KEEP_LINES} unread lines]"
            ));
        } else {
            block.push_str(&format!(
                "\n[{dropped} earlier lines not in this read (a read returns the newest \
                 {KEEP_LINES} unread lines): every line is in {log} (read or grep it)]"
            ));
        }
    }
    if lines.is_empty() {
        block.push_str("\n(no new output)");
    }
    for line in &lines {
        block.push('\n');
        block.push_str(line);
    }
    Ok((block, lines.len(), dropped))
}

fn read(ctx: &CallContext, monitor_id: Option<&str>) -> anyhow::Result<ToolOutput> {
    let session = ctx.session;
    background::reap(session, Background::Monitor)?;
    if let Some(monitor_id) = monitor_id.map(str::trim).filter(|m| !m.is_empty()) {
        let monitor = match find(ctx, monitor_id, "read")? {
            Ok(monitor) => monitor,
            Err(message) => return Ok(ToolOutput::error(message)),
        };
        let (block, lines, dropped) = read_block(ctx, &monitor)?;
        let log = session
            .state
            .read(|s| s.monitor(monitor.id))?
            .flatten()
            .map(|m| m.log)
            .filter(|log| !log.is_empty());
        return Ok(ToolOutput::text(block)
            .with("log", log)
            .with("monitor_id", monitor_id)
            .with("state", state_text(&monitor))
            .with("running", is_running(&monitor))
            .with("exit_code", monitor.exit_code)
            .with("lines", lines)
            .with("dropped", dropped)
            .with(
                "sandbox",
                background::sandbox_of(session, Background::Monitor, monitor.id),
            ));
    }
    let monitors = session
        .state
        .read(|s| s.monitors(false))?
        .unwrap_or_default();
    let mut blocks = Vec::new();
    let mut read_ids = Vec::new();
    let mut total = 0;
    for monitor in &monitors {
        if monitor.buffered == 0 && monitor.dropped == 0 && is_running(monitor) {
            continue;
        }
        let (block, lines, _) = read_block(ctx, monitor)?;
        total += lines;
        blocks.push(block);
        read_ids.push(monitor.id);
    }
    let running = monitors.iter().filter(|m| is_running(m)).count();
    if blocks.is_empty() {
        let ids: Vec<i64> = monitors.iter().map(|m| m.id).collect();
        return Ok(
            ToolOutput::text(format!("No new monitor output ({running} running)."))
                .with("lines", 0)
                .with("running", running)
                .with(
                    "sandbox",
                    background::sandbox_of_all(session, Background::Monitor, &ids),
                ),
        );
    }
    Ok(ToolOutput::text(blocks.join("\n\n"))
        .with("lines", total)
        .with("running", running)
        .with(
            "sandbox",
            background::sandbox_of_all(session, Background::Monitor, &read_ids),
        ))
}

fn stop(ctx: &CallContext, monitor_id: Option<&str>) -> anyhow::Result<ToolOutput> {
    let session = ctx.session;
    let Some(monitor_id) = monitor_id.map(str::trim).filter(|m| !m.is_empty()) else {
        return Ok(ToolOutput::error("monitor_id is required for stop action"));
    };
    background::reap(session, Background::Monitor)?;
    let monitor = match find(ctx, monitor_id, "stop")? {
        Ok(monitor) => monitor,
        Err(message) => return Ok(ToolOutput::error(message)),
    };
    let sandbox = background::sandbox_of(session, Background::Monitor, monitor.id);
    let was_running = is_running(&monitor)
        && background::stop(session, Background::Monitor, monitor.id, "stopped")?;
    session.state.write(|s| s.acknowledge_monitor(monitor.id))?;
    if was_running {
        return Ok(ToolOutput::text(format!("Monitor {monitor_id} stopped"))
            .with("monitor_id", monitor_id)
            .with("state", "stopped")
            .with("sandbox", sandbox));
    }
    let ended = session
        .state
        .read(|s| s.monitor(monitor.id))?
        .flatten()
        .unwrap_or(monitor);
    let state = state_text(&ended);
    Ok(
        ToolOutput::text(format!("Monitor {monitor_id} had already ended: {state}"))
            .with("monitor_id", monitor_id)
            .with("state", state)
            .with("sandbox", sandbox),
    )
}

/// A call that starts a command may change the project (reading, listing or stopping a
/// monitor does not): its checkpoint shows the command.
fn checkpoint(_: &Session, args: &Map<String, Value>) -> Option<crate::tool::Checkpoint> {
    let text = |key: &str| args.get(key).and_then(Value::as_str).unwrap_or_default();
    let starts = match text("action") {
        "" => text("monitor_id").is_empty() || !text("command").is_empty(),
        action => action == "start",
    };
    (starts && !text("command").trim().is_empty()).then(|| crate::tool::Checkpoint {
        shown: text("command").to_string(),
        covers: crate::tool::Covers::Project,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(value: Value) -> Map<String, Value> {
        value.as_object().unwrap().clone()
    }

    #[test]
    fn the_action_defaults_like_the_reference() {
        assert_eq!(action_of(&args(json!({"command": "x"}))), "start");
        assert_eq!(action_of(&args(json!({"monitor_id": "mon_1"}))), "stop");
        assert_eq!(
            action_of(&args(json!({"monitor_id": "mon_1", "command": "x"}))),
            "start"
        );
        assert_eq!(action_of(&args(json!({"action": "list"}))), "list");
        assert_eq!(action_of(&args(json!({}))), "start");
    }

    #[test]
    fn a_start_needs_what_bash_needs() {
        let tmp = tempfile::tempdir().unwrap();
        let session = crate::session::Session::new("s", tmp.path());
        let ctx = CallContext::new(&session, "monitor");
        let perms = |value: Value| -> Vec<String> {
            access(&ctx, &args(value))
                .into_iter()
                .map(|a| format!("{} {}", a.permission, a.pattern))
                .collect()
        };
        assert_eq!(
            perms(json!({"command": "npm run dev"})),
            ["shell npm run dev"]
        );
        assert_eq!(
            perms(json!({"command": "tail -f .env"})),
            ["shell tail -f .env", "secret-shell tail -f .env"]
        );
        assert_eq!(
            perms(json!({"command": "rm -rf build; sleep 100"})),
            [
                "shell rm -rf build",
                "shell sleep 100",
                "destructive-shell rm -rf build"
            ]
        );
        assert_eq!(perms(json!({"action": "list"})), ["shell monitor"]);
        assert_eq!(perms(json!({"monitor_id": "mon_2"})), ["shell monitor"]);
    }

    #[test]
    fn timeouts_default_and_clamp() {
        assert_eq!(effective_timeout(None), 300_000);
        assert_eq!(effective_timeout(Some(0)), 300_000);
        assert_eq!(effective_timeout(Some(-1)), 300_000);
        assert_eq!(effective_timeout(Some(500)), 500);
        assert_eq!(effective_timeout(Some(99_999_999)), 1_800_000);
    }

    #[test]
    fn labels_cut_long_commands_on_a_character_boundary() {
        assert_eq!(label("npm run dev", None), "npm run dev");
        assert_eq!(label("npm run dev", Some("  dev server ")), "dev server");
        assert_eq!(label("npm run dev", Some("  ")), "npm run dev");
        let long = format!("{}é{}", "a".repeat(59), "b".repeat(20));
        assert_eq!(label(&long, None), format!("{}...", "a".repeat(59)));
        let exact = "x".repeat(60);
        assert_eq!(label(&exact, None), exact);
    }
}
