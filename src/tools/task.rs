//! `task`: runs a subagent.
//!
//! A subagent is a command from the config (`subagents.<type>.command`, type `build` by
//! default). It gets the prompt on stdin, `TINYTOOL_SUBAGENT_DEPTH` = this process's depth
//! plus one (refused at 5) and the parent's environment with non-interactive defaults
//! (`process::environment::subagent_env`); its stdout is the result. The command line
//! is what the policy decides, as a `shell` access: the call's access *is* the subagent
//! command, so a refusal names it and the rule that would allow it.
//!
//! Three ways to call it:
//! - foreground: runs the subagent in this call (its own session and process group, killed
//!   with everything it started at the deadline, on cancellation or when tinytool dies)
//!   and returns its stdout;
//! - `background: true`: records a job, starts it under a detached supervisor (see
//!   `background`) and returns at once exactly `{"job_id", "status": "running",
//!   "message"}`;
//! - `task_id` (no prompt or description needed): returns exactly `{"id", "status",
//!   "result", "error"}` of the session's job; with `cancel: true` it cancels the job first.
//!
//! Jobs end `completed` (exit status 0; the result is the stdout), `failed` (non-zero
//! exit, signal, deadline, a supervisor that died; the error says which, with the end of
//! stderr) or `cancelled`, and publish `job.completed`. The deadline is `task.deadline_ms`
//! of the config (default 30 minutes), for foreground calls too.
//!
//! Deliberate differences from the reference: a status lookup needs no prompt (the
//! reference checked the prompt first; its docs planned the reordering); jobs live in
//! SQLite rather than in one process's memory, so any later process sees them, and they
//! are pruned 7 days after they end rather than 10 minutes after they were created.

use std::time::Duration;

use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::background::subagent::{conclude, failure, start_error};
use crate::background::{self, spawn_supervisor};
use crate::events::new_id;
use crate::process::command::command_accesses;
use crate::process::environment;
use crate::process::run::{self, Program, Request};
use crate::schema;
use crate::session::{CallContext, MAX_SUBAGENT_DEPTH as MAX_DEPTH, Session};
use crate::state::{Background, Job, NewJob, UNFINISHED};
use crate::tool::{Access, Needs, ToolDef, ToolDoc, ToolOutput, parse_args};

/// The subagent type when none is given.
const DEFAULT_TYPE: &str = "build";
/// A job's deadline when the config sets none: 30 minutes.
const DEFAULT_DEADLINE_MS: u64 = 30 * 60 * 1000;

/// The `task` tool's definition.
pub fn definition() -> ToolDef {
    ToolDef {
        name: "task",
        summary: "Run a subagent, in the foreground or as a background job",
        description: "Hand a self-contained task to a subagent and get its answer. The \
            subagent is the command configured for `subagent_type` (default `build`); it \
            receives `prompt` on its input and its output is the result. Give a short \
            `description` and a complete `prompt`: the subagent sees nothing else. With \
            `background: true` the call returns a job id at once and the subagent keeps \
            working; call again with `task_id` (nothing else needed) to get \
            {\"id\", \"status\", \"result\", \"error\"} — status is running, completed, \
            failed or cancelled — and with `task_id` and `cancel: true` to cancel it. \
            Subagents cannot nest more than 5 deep. Each `subagent_type` must be configured \
            under `subagents` in config.json (none is by default); an unconfigured one \
            fails with the line to add.",
        permission: "shell",
        schema: parameters,
        execute,
        access: Some(access),
        precheck: None,
        checkpoint: Some(checkpoint),
        needs: Some(Needs {
            doc: "task needs a subagent command under `subagents` in config.json (the user's, or the \
                project's .tinytool/config.json; none is configured by default), and a \
                process that is not itself a subagent at the maximum depth (5).",
            missing: unconfigured,
        }),
        after_changes: None,
        doc: ToolDoc {
            output: "Foreground: the subagent's standard output (long outputs are \
                previewed); metadata: subagent_type, depth (the subagent's), exit_code, \
                duration_ms, stderr_bytes. `background: true`: exactly \
                {\"job_id\": \"job_N\", \"status\": \"running\", \"message\": \"Background task \
                started: DESCRIPTION\"}. With `task_id`: exactly {\"id\": \"job_N\", \"status\": \
                \"running|completed|failed|cancelled\", \"result\": \"...\", \"error\": \"...\"} \
                (a failed job is not a failed call; a result too long for the output limit \
                is cut in the middle). Jobs are per session; `tinytool state jobs` lists them \
                and each end publishes `job.completed`. The deadline is the config's \
                `task.deadline_ms` (default 1800000), for foreground calls too.",
            errors: "`prompt is required`, `description is required` (to start a task); \
                `Maximum subagent depth (5) exceeded. Cannot create nested subagent.` when \
                TINYTOOL_SUBAGENT_DEPTH is 5 or more; no command configured for the type \
                (the message shows the config to add); `Subagent error: ...` when the \
                subagent cannot start, exits non-zero, is killed or reaches its deadline; \
                `Job job_N not found`; `Job job_N is not running (status: ...)` for a cancel; \
                a refusal (exit status 3) when the policy does not allow `shell` for the \
                subagent command line.",
            examples: &[
                (
                    "Run the default subagent and wait for its answer",
                    "tinytool task --description 'find dead code' --prompt 'List unused functions in src/'",
                ),
                (
                    "Start it in the background",
                    "tinytool task --description 'write tests' --prompt '...' --background",
                ),
                ("Ask how the job is doing", "tinytool task --task-id job_1"),
                ("Cancel it", "tinytool task --task-id job_1 --cancel"),
            ],
        },
    }
}

fn parameters() -> Value {
    schema::object(
        json!({
            "description": {
                "type": "string",
                "description": "A short (3-5 word) description of the task. Required to start one."
            },
            "prompt": {
                "type": "string",
                "description": "The complete task for the subagent, which sees nothing else. Required to start one."
            },
            "subagent_type": {
                "type": "string",
                "description": "Which configured subagent runs it (a key of `subagents` in the config; default build)."
            },
            "task_id": {
                "type": "string",
                "description": "A background job's id (job_N): returns its status and result; no prompt or description needed."
            },
            "background": {
                "type": "boolean",
                "description": "Run in the background and return a job id at once (default false)."
            },
            "cancel": {
                "type": "boolean",
                "description": "With task_id: cancel that running job."
            }
        }),
        &[],
    )
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct TaskArgs {
    description: Option<String>,
    prompt: Option<String>,
    subagent_type: Option<String>,
    task_id: Option<String>,
    background: Option<bool>,
    cancel: Option<bool>,
}

/// What keeps any subagent from starting in `session`: none is configured, or this
/// process is a subagent at the maximum depth.
fn unconfigured(session: &Session) -> Option<String> {
    if session.config.subagents.is_empty() {
        return Some(
            "no subagent is configured: add one to config.json, for example \
             {\"subagents\": {\"build\": {\"command\": [\"my-agent\", \"--print\"]}}}"
                .to_string(),
        );
    }
    (session.depth >= MAX_DEPTH).then(|| {
        format!(
            "this process is a subagent at the maximum depth ({MAX_DEPTH}): it cannot start another"
        )
    })
}

/// The subagent type a call asks for: `subagent_type`, else `build`.
fn type_or_default(subagent_type: Option<&str>) -> &str {
    subagent_type
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .unwrap_or(DEFAULT_TYPE)
}

/// A start needs what the subagent command line would need as a bash command (`shell`,
/// and `secret-shell` / `destructive-shell` when the detectors find them); a status
/// lookup, a cancel or a type without a command needs `shell` for `task`.
fn access(ctx: &CallContext, args: &Map<String, Value>) -> Vec<Access> {
    let lookup = args
        .get("task_id")
        .and_then(Value::as_str)
        .is_some_and(|id| !id.trim().is_empty());
    let kind = type_or_default(args.get("subagent_type").and_then(Value::as_str));
    match ctx.session.config.subagents.get(kind) {
        Some(subagent) if !lookup => {
            let mut accesses = command_accesses(ctx, &subagent.command);
            if let Some(first) = accesses.first_mut() {
                first.reason = Some(format!("the {kind} subagent"));
            }
            accesses
        }
        _ => vec![Access::new("shell", "task")],
    }
}

fn execute(ctx: &CallContext, args: Map<String, Value>) -> anyhow::Result<ToolOutput> {
    let args: TaskArgs = match parse_args(args) {
        Ok(args) => args,
        Err(output) => return Ok(output),
    };
    let kind = type_or_default(args.subagent_type.as_deref()).to_string();
    if let Some(task_id) = args.task_id.as_deref().filter(|id| !id.trim().is_empty()) {
        return lookup(ctx, task_id.trim(), args.cancel.unwrap_or(false));
    }
    if args.cancel == Some(true) {
        return Ok(ToolOutput::error(
            "cancel needs task_id: the id of the background job to cancel (job_N)",
        ));
    }
    let Some(prompt) = args.prompt.filter(|p| !p.trim().is_empty()) else {
        return Ok(ToolOutput::error("prompt is required"));
    };
    let Some(description) = args.description.filter(|d| !d.trim().is_empty()) else {
        return Ok(ToolOutput::error("description is required"));
    };
    if ctx.session.depth >= MAX_DEPTH {
        return Ok(ToolOutput::error(format!(
            "Maximum subagent depth ({MAX_DEPTH}) exceeded. Cannot create nested subagent."
        )));
    }
    let Some(subagent) = ctx.session.config.subagents.get(&kind) else {
        return Ok(ToolOutput::error(missing_subagent(ctx, &kind)));
    };
    // A subagent the project config names runs only when the user policy allows it.
    if ctx
        .session
        .config
        .from_project
        .contains(&format!("subagents.{kind}"))
        && let Err(refusal) = ctx.allows_project_command(&command_accesses(ctx, &subagent.command))
    {
        return Ok(ToolOutput::error(refusal.message).with("refused", true));
    }
    let start = Start {
        kind: &kind,
        command: &subagent.command,
        prompt: &prompt,
        description: description.trim(),
        deadline: deadline(ctx),
        depth: ctx.session.depth + 1,
    };
    if args.background.unwrap_or(false) {
        start_job(ctx, &start)
    } else {
        Ok(foreground(ctx, &start))
    }
}

/// What starting a subagent needs.
struct Start<'a> {
    kind: &'a str,
    command: &'a [String],
    prompt: &'a str,
    description: &'a str,
    deadline: Duration,
    depth: u32,
}

/// The deadline of a subagent: `task.deadline_ms`, else 30 minutes.
fn deadline(ctx: &CallContext) -> Duration {
    Duration::from_millis(
        ctx.session
            .config
            .task_deadline_ms
            .filter(|ms| *ms > 0)
            .unwrap_or(DEFAULT_DEADLINE_MS),
    )
}

/// The error for a type without a command: what to put in which file.
fn missing_subagent(ctx: &CallContext, kind: &str) -> String {
    let configured: Vec<&str> = ctx
        .session
        .config
        .subagents
        .keys()
        .map(String::as_str)
        .collect();
    let known = if configured.is_empty() {
        "No subagent is configured".to_string()
    } else {
        format!("Configured subagent types: {}", configured.join(", "))
    };
    let user = crate::config::user_config_dir()
        .map(|d| d.join("config.json").display().to_string())
        .unwrap_or_else(|| "~/.config/tinytool/config.json".into());
    format!(
        "No subagent command is configured for type \"{kind}\". {known}. Add one to the \
         config ({user}, or .tinytool/config.json in the project), for example: \
         {{\"subagents\": {{\"{kind}\": {{\"command\": [\"my-agent\", \"--print\"]}}}}}} — the \
         command gets the prompt on standard input and its standard output is the result."
    )
}

fn foreground(ctx: &CallContext, start: &Start) -> ToolOutput {
    // A subagent is a tinytool user: `.tinytool/` and its configured paths stay writable,
    // and its own tinytool sandboxes what it starts.
    let writable = crate::sandbox::subagent_writable(&ctx.session.config, start.kind);
    let plan = crate::sandbox::plan_for(
        ctx.session,
        crate::sandbox::Purpose {
            tinytool_writable: true,
            extra_writable: &writable,
            ..Default::default()
        },
    );
    let request = Request {
        stdin: crate::process::run::Input::Bytes(start.prompt.as_bytes()),
        sandbox: plan.clone(),
        ..Request::in_call(
            ctx.session,
            Program::Argv(start.command),
            environment::subagent_env(
                std::env::vars_os(),
                start.depth,
                ctx.session.policy_file.as_deref(),
            ),
            start.deadline,
        )
    };
    let finished = match run::run(request) {
        Ok(finished) => finished,
        Err(_) if let Some(refusal) = super::sandbox_refusal(&plan) => {
            return refusal
                .with("subagent_type", start.kind)
                .with("depth", start.depth);
        }
        Err(err) => {
            return ToolOutput::error(format!(
                "Subagent error: {}",
                start_error(start.command, &err)
            ))
            .with("subagent_type", start.kind)
            .with("depth", start.depth);
        }
    };
    let exit_code = finished.ending.exit_code();
    let duration_ms = finished.duration.as_millis() as u64;
    let stderr_bytes = finished.stderr.total_bytes();
    let output = if failure(start.kind, &finished, start.deadline).is_none() {
        ToolOutput::captured(finished.stdout)
    } else {
        // As for bash: the last line names the sandbox rule that stopped the subagent.
        let line = plan.as_deref().and_then(|p| {
            p.stopped_line()
                .or_else(|| p.undone_line())
                .or_else(|| p.explain(&[&finished.stdout, &finished.stderr]))
        });
        let concluded = conclude(start.kind, finished, start.deadline);
        let line = line.map(|l| format!("\n{l}")).unwrap_or_default();
        ToolOutput::error(format!("Subagent error: {}{line}", concluded.error))
    };
    let output = output
        .with("subagent_type", start.kind)
        .with("depth", start.depth)
        .with("exit_code", exit_code)
        .with("duration_ms", duration_ms)
        .with("stderr_bytes", stderr_bytes);
    output.with("sandbox", crate::sandbox::metadata_of(plan.as_deref()))
}

fn start_job(ctx: &CallContext, start: &Start) -> anyhow::Result<ToolOutput> {
    let session = ctx.session;
    background::reap(session, Background::Job)?;
    let token = new_id("tok");
    let id = session.state.write(|s| {
        s.insert_job(&NewJob {
            session_id: &session.id,
            subagent_type: start.kind,
            description: start.description,
            prompt: start.prompt,
            command: start.command,
            depth: i64::from(start.depth),
            deadline_ms: start.deadline.as_millis() as i64,
            token: &token,
        })
    })?;
    let label = Background::Job.label(id);
    let sandbox = match spawn_supervisor(ctx, Background::Job, id, &token, false) {
        Ok(sandbox) => sandbox,
        Err(failure) => {
            let why = failure.why;
            session
                .state
                .write(|s| s.abandon(Background::Job, id, "failed", &why))?;
            let output = match failure.refused {
                Some(refused) => ToolOutput::error(why).with("sandbox", refused),
                None => ToolOutput::error(format!("Subagent error: {why}")),
            };
            return Ok(output.with("job_id", label).with("status", "failed"));
        }
    };
    let text = json!({
        "job_id": label,
        "status": "running",
        "message": format!("Background task started: {}", start.description),
    });
    Ok(ToolOutput::text(text.to_string())
        .with("job_id", label)
        .with("status", "running")
        .with("subagent_type", start.kind)
        .with("depth", start.depth)
        .with("sandbox", sandbox))
}

fn lookup(ctx: &CallContext, task_id: &str, cancel: bool) -> anyhow::Result<ToolOutput> {
    let session = ctx.session;
    let not_found = || {
        ToolOutput::error(format!(
            "Job {task_id} not found (job ids look like job_1; `tinytool state jobs` lists this session's jobs)"
        ))
    };
    let Some(id) = Background::Job.parse(task_id) else {
        return Ok(not_found());
    };
    if !session.state.path().exists() {
        return Ok(not_found());
    }
    background::reap(session, Background::Job)?;
    let mine = |job: Option<Job>| job.filter(|j| j.session_id == session.id);
    let Some(job) = mine(session.state.write(|s| s.job(id))?) else {
        return Ok(not_found());
    };
    let job = if cancel {
        if !UNFINISHED.contains(&job.status.as_str()) {
            return Ok(ToolOutput::error(format!(
                "Job {task_id} is not running (status: {})",
                job.status
            )));
        }
        background::stop(session, Background::Job, id, "cancelled")?;
        match mine(session.state.write(|s| s.job(id))?) {
            Some(job) => job,
            None => return Ok(not_found()),
        }
    } else {
        job
    };
    let status = background::shown_status(&job.status);
    let text = status_text(
        &Background::Job.label(id),
        status,
        &job.result,
        &job.error,
        session.limits.max_bytes,
    );
    Ok(ToolOutput::text(text)
        .with("job_id", Background::Job.label(id))
        .with("status", status)
        .with(
            "sandbox",
            background::sandbox_of(session, Background::Job, id),
        ))
}

/// The status object as one line of JSON that fits in `limit` bytes (so that the preview
/// never cuts it into invalid JSON): an over-long result, then error, is cut in the middle.
fn status_text(id: &str, status: &str, result: &str, error: &str, limit: usize) -> String {
    let render = |result: &str, error: &str| {
        json!({"id": id, "status": status, "result": result, "error": error}).to_string()
    };
    let mut result = result.to_string();
    let mut error = error.to_string();
    for _ in 0..16 {
        let text = render(&result, &error);
        if text.len() <= limit {
            return text;
        }
        let excess = text.len() - limit;
        let field = if result.len() >= error.len() {
            &mut result
        } else {
            &mut error
        };
        if field.is_empty() {
            return text;
        }
        // Escaping makes the JSON of a text longer than the text: scale the cut by the
        // field's own ratio, and leave room for the note.
        let escaped = Value::String(field.clone()).to_string().len().max(1);
        let target = escaped.saturating_sub(excess + 96);
        let keep = (field.len() as u128 * target as u128 / escaped as u128) as usize;
        *field = cut_middle(field, keep);
    }
    render(&result, &error)
}

/// `text` with its middle replaced by a note, keeping about `keep` bytes.
fn cut_middle(text: &str, keep: usize) -> String {
    let half = keep / 2;
    let head = text.floor_char_boundary(half);
    let tail = text.ceil_char_boundary(text.len().saturating_sub(half).max(head));
    format!(
        "{}\n[… {} bytes left out to fit the output limit …]\n{}",
        &text[..head],
        tail - head,
        &text[tail..]
    )
}

/// A job as `tinytool state jobs` shows it.
pub fn job_entry(job: &Job) -> Value {
    json!({
        "id": Background::Job.label(job.id),
        "subagent_type": job.subagent_type,
        "description": job.description,
        "status": background::shown_status(&job.status),
        "result": job.result,
        "error": job.error,
        "depth": job.depth,
        "created": crate::clock::rfc3339(job.time_created),
        "deadline": crate::clock::rfc3339(job.deadline),
        "ended": job.time_ended.map(crate::clock::rfc3339),
    })
}

/// A subagent may change the project, unless the call is refused for its depth: its
/// checkpoint shows the task's description.
fn checkpoint(session: &Session, args: &Map<String, Value>) -> Option<crate::tool::Checkpoint> {
    (session.depth < MAX_DEPTH).then(|| crate::tool::Checkpoint {
        shown: args
            .get("description")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string(),
        covers: crate::tool::Covers::Project,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_objects_fit_the_limit_and_stay_valid_json() {
        let short = status_text("job_1", "completed", "done", "", 51_200);
        assert_eq!(
            short,
            r#"{"id":"job_1","status":"completed","result":"done","error":""}"#
        );
        let long_result = "line \"quoted\"\n".repeat(10_000);
        let text = status_text("job_1", "completed", &long_result, "", 51_200);
        assert!(
            text.len() <= 51_200 && text.len() > 45_000,
            "{}",
            text.len()
        );
        let value: Value = serde_json::from_str(&text).unwrap();
        let result = value["result"].as_str().unwrap();
        assert!(result.starts_with("line \"quoted\"\n"));
        assert!(result.contains("bytes left out to fit the output limit"));
        assert!(result.ends_with("line \"quoted\"\n"));
    }
}
