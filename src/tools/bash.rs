//! `bash`: runs a shell command.
//!
//! The command runs as `sh -c COMMAND` in the working directory, in its own session and
//! process group, with stdin `/dev/null` and a filtered, non-interactive environment
//! ([`environment`]); it is stopped at its timeout, whatever it leaves behind is killed
//! (also what left its group with `setsid`, daemons included), and nothing in its group
//! outlives tinytool, even a tinytool killed with SIGKILL (a sentinel in its group;
//! [`run`]: the process handling bash shares with `monitor` and `task`). Deliberate improvements over the reference: the whole process group is
//! killed (the reference kills only `sh`), a background process never makes the call
//! wait, and output is streamed into bounded captures instead of 10 MB buffers (so there
//! is no `[output truncated at 10MB]` marker: the preview says the real size).
//!
//! Output: the lines of stdout and stderr in the order they arrived, each stderr line
//! marked `STDERR: ` (as monitor marks them; [`crate::interleave`]): a compiler error sits
//! next to the step that caused it. The command keeps its pipes (never a terminal), so it
//! behaves as it does anywhere else; the order is line-granular and best effort for
//! writes a few milliseconds apart. This replaces the reference's shape (all of stdout,
//! then a `STDERR:` block). A failure puts one line first: `Command exited with error:
//! exit status N` (or `signal: killed`, …) or `Command timed out after 2m0s` (Go duration
//! text).
//!
//! Under bounded memory: the merged stream is captured as it arrives (first lines, last
//! lines, totals, and the spill file), so the preview is that of the whole output and its
//! counts are those of everything printed; each stream is also captured on its own,
//! without a spill file, for the sandbox's explanations and the byte counts.

use std::time::Duration;

use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::detect::{Kind, Places, shell_accesses};
use crate::process::words::{go_duration, signal_name, signal_text};
use crate::process::{environment, run};
use crate::sandbox;
use crate::schema;
use crate::session::{CallContext, Session};
use crate::tool::{Access, ToolDef, ToolDoc, ToolOutput, parse_args};
use crate::truncate::Capture;
use run::{Ending, Finished, Program, Request};

/// Timeout when none is given, in milliseconds.
pub const DEFAULT_TIMEOUT_MS: u64 = 120_000;
/// The longest timeout, in milliseconds; larger values are lowered to it.
pub const MAX_TIMEOUT_MS: u64 = 600_000;

/// The `bash` tool's definition.
pub fn definition() -> ToolDef {
    ToolDef {
        name: "bash",
        summary: "Run a shell command",
        description: "Execute a shell command and return its output. The command runs as \
            `sh -c` in the working directory with no input (stdin is empty) and no terminal, \
            so it must not wait for a person. Output is stdout and stderr lines in the order \
            they arrived, stderr lines starting with `STDERR: `. \
            The command is stopped after `timeout` milliseconds (default 120000, at most \
            600000), and anything it leaves running in the background is stopped when it \
            exits: use `monitor` for servers and watchers. Credential-looking environment \
            variables are not passed on. Destructive commands and commands naming secret \
            files need extra permission.",
        permission: "shell",
        schema: parameters,
        execute,
        access: Some(access),
        precheck: None,
        checkpoint: Some(checkpoint),
        needs: None,
        // With `lsp.after_bash`, the language servers' verdict on the files it changed.
        after_changes: Some(crate::tool::AfterChanges {
            wanted: |session| session.config.lsp.enabled && session.config.lsp.after_bash,
            apply: crate::lsp::after_command,
        }),
        doc: ToolDoc {
            output: "the lines of stdout and stderr in the order they arrived (line by line, \
                best effort for writes a few milliseconds apart), each stderr line starting with \
                `STDERR: `; this replaces a separate `STDERR:` block after stdout. An output of more than 2000 lines or 51200 bytes is previewed (its first \
                and last lines — for a failed run, also the failure lines and summaries test \
                runners and compilers print in between, each after `[line L]`, its line in \
                the spill file — around a header `[preview: S of N lines, B bytes total; full \
                output: PATH]` and a hint how to read the rest); the whole output is in the \
                spill file PATH under .tinytool/outputs/ (metadata.full_output). A non-zero \
                exit, a signal or the timeout makes the call an error (exit status 1) whose \
                output starts with `Command exited with error: exit status N`, `Command \
                exited with error: signal: killed` or `Command timed out after 2m0s`, \
                followed by the output so far. metadata: exit_code (null when a signal \
                ended the shell), signal, timed_out, duration_ms, timeout_ms, stdout_bytes, \
                stderr_bytes; full_output when previewed; cancelled when an MCP cancellation killed the command; lossy \
                when output was not UTF-8.",
            errors: "`Command cannot be empty`; the failures above; a refusal (exit status \
                3) when the policy does not allow `shell` for the command, `secret-shell` \
                for a command naming a secret file (`.env`, `credentials.json`, `*.key`, \
                `*.pem`, tinytool's own files — except a line that only reads spill files \
                under .tinytool/outputs/) or `destructive-shell` for a destructive \
                one (`rm -rf`, `git push --force`, `DROP TABLE`, `kubectl delete`, …).",
            examples: &[
                ("Run the tests", "tinytool bash --command 'cargo test'"),
                (
                    "Give a slow command ten minutes",
                    "tinytool bash --command 'make release' --timeout 600000",
                ),
                (
                    "The same call as JSON on standard input",
                    "echo '{\"command\":\"git status\"}' | tinytool bash",
                ),
            ],
        },
    }
}

fn parameters() -> Value {
    schema::object(
        json!({
            "command": {
                "type": "string",
                "description": "The shell command to run (sh -c, in the working directory)."
            },
            "timeout": {
                "type": "integer",
                "description": "Timeout in milliseconds (default 120000, at most 600000; 0 or less means the default)."
            },
            "description": {
                "type": "string",
                "description": "What the command does, in a few words (for logs; no effect)."
            }
        }),
        &["command"],
    )
}

/// A call needs `shell` for the command, plus `secret-shell` and `destructive-shell`
/// when the detectors find something.
fn access(ctx: &CallContext, args: &Map<String, Value>) -> Vec<Access> {
    let command = args
        .get("command")
        .and_then(Value::as_str)
        .unwrap_or_default();
    shell_accesses(command, &Places::for_session(ctx.session))
}

/// Whether the command may see the secret files as they are (the sandbox then masks
/// none): a `secret-shell` allow rule of the user's, or a stored approval, covers every
/// command of its line, whether or not the line names a secret (a test suite reading
/// `.env` names none). A `* * allow` rule is no such rule: it allows, it does not unmask.
pub fn secrets_allowed(ctx: &CallContext, command: &str) -> bool {
    let asked: Vec<Access> = shell_accesses(command, &Places::for_session(ctx.session))
        .into_iter()
        .filter(|a| a.permission == "shell")
        .map(|a| Access {
            permission: Kind::Secret.permission().to_string(),
            ..a
        })
        .collect();
    ctx.session.gate.allows_explicitly(ctx, &asked)
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct BashArgs {
    command: String,
    timeout: Option<i64>,
    /// Accepted and otherwise unused: the reference only logs it.
    #[allow(dead_code)]
    description: Option<String>,
}

/// The effective timeout: the default for none or ≤ 0, lowered to the maximum.
pub fn effective_timeout(requested: Option<i64>) -> Duration {
    let ms = match requested {
        Some(ms) if ms > 0 => (ms as u64).min(MAX_TIMEOUT_MS),
        _ => DEFAULT_TIMEOUT_MS,
    };
    Duration::from_millis(ms)
}

fn execute(ctx: &CallContext, args: Map<String, Value>) -> anyhow::Result<ToolOutput> {
    let args: BashArgs = match parse_args(args) {
        Ok(args) => args,
        Err(output) => return Ok(output),
    };
    if args.command.trim().is_empty() {
        return Ok(ToolOutput::error("Command cannot be empty"));
    }
    let timeout = effective_timeout(args.timeout);
    let unmask_all = secrets_allowed(ctx, &args.command);
    let plan = sandbox::plan_for(
        ctx.session,
        sandbox::Purpose {
            unmask_all,
            read_only: args
                .command
                .lines()
                .all(crate::detect::read_only::line_is_read_only),
            ..Default::default()
        },
    );
    let mut request = Request::in_call(
        ctx.session,
        Program::Shell(&args.command),
        environment::child_env(std::env::vars_os()),
        timeout,
    );
    // What a command allowed to read secrets prints is kept where later commands,
    // which are not, cannot read it.
    if unmask_all {
        request.limits = request.limits.sealed();
    }
    let limits = request.limits.clone();
    request.sandbox = plan.clone();
    let finished = match run::run_interleaved(request) {
        Ok(finished) => finished,
        Err(_) if let Some(refusal) = super::sandbox_refusal(&plan) => return Ok(refusal),
        Err(err) => {
            return Ok(ToolOutput::error(format!(
                "Command exited with error: cannot run sh in {}: {err}",
                ctx.session.dir.display()
            )));
        }
    };
    Ok(compose(
        finished,
        timeout,
        limits,
        plan.as_deref(),
        &args.command,
    ))
}

/// The tool output of a finished run (see the module doc for the shape).
fn compose(
    finished: Finished,
    timeout: Duration,
    limits: crate::truncate::Limits,
    plan: Option<&sandbox::Plan>,
    command: &str,
) -> ToolOutput {
    let Finished {
        stdout,
        stderr,
        both,
        ending,
        timed_out,
        cancelled,
        duration,
    } = finished;
    let failure = if timed_out {
        Some(format!("Command timed out after {}", go_duration(timeout)))
    } else {
        match ending {
            Ending::Exited(0) => None,
            Ending::Exited(code) => Some(format!("Command exited with error: exit status {code}")),
            Ending::Signaled { signal, core } => Some(format!(
                "Command exited with error: signal: {}{}",
                signal_text(signal),
                if core { " (core dumped)" } else { "" }
            )),
        }
    };
    let notes = plan.map_or_else(Vec::new, |plan| {
        sandbox_notes(
            plan,
            &stdout,
            &stderr,
            failure.is_some(),
            timed_out,
            command,
        )
    });
    let stdout_bytes = stdout.total_bytes();
    let stderr_bytes = stderr.total_bytes();
    let mut output = Capture::new(limits);
    if let Some(line) = &failure {
        output.mark_failed();
        output.push_str(line);
        output.push_str("\n");
    }
    if let Some(both) = both {
        output.append(both);
    }
    for line in notes {
        output.push_str("\n");
        output.push_str(&line);
    }
    let mut result = ToolOutput::captured(output)
        .with("exit_code", ending.exit_code())
        .with("timed_out", timed_out)
        .with("duration_ms", duration.as_millis() as u64)
        .with("timeout_ms", timeout.as_millis() as u64)
        .with("stdout_bytes", stdout_bytes)
        .with("stderr_bytes", stderr_bytes);
    if let Some(signal) = ending.signal() {
        result = result.with("signal", signal_name(signal));
    }
    if cancelled {
        result = result.with("cancelled", true);
    }
    result = result.with("sandbox", sandbox::metadata_of(plan));
    result.is_error = failure.is_some();
    result
}

/// The `[sandbox: …]` lines that end a result: protected paths the command planted and
/// the sandbox removed, secrets git tracks (once), masked secrets the command read, and
/// why a failure (or a timeout, or a failure a pipeline hid) may be the sandbox's doing.
fn sandbox_notes(
    plan: &sandbox::Plan,
    stdout: &crate::truncate::Capture,
    stderr: &crate::truncate::Capture,
    failed: bool,
    timed_out: bool,
    command: &str,
) -> Vec<String> {
    let mut notes: Vec<String> = plan.stopped_line().into_iter().collect();
    notes.extend(plan.undone_line());
    notes.extend(plan.masking_lines());
    let why = if timed_out {
        plan.explain(&[stdout, stderr])
            .or_else(|| plan.explain_timeout())
    } else if failed {
        plan.explain(&[stdout, stderr])
            .or_else(|| plan.explain_refused_socket(&[stdout, stderr], command))
            .or_else(|| plan.explain_private_tmp(&[stdout, stderr], command))
            .or_else(|| plan.explain_quiet_network(command))
    } else {
        plan.explain_hidden_failure(&[stdout, stderr])
    };
    notes.extend(why.filter(|line| !notes.contains(line)));
    notes
}

/// A command may change the project unless every line of it is read-only: its
/// checkpoint shows the command.
fn checkpoint(_: &Session, args: &Map<String, Value>) -> Option<crate::tool::Checkpoint> {
    let command = args
        .get("command")
        .and_then(Value::as_str)
        .unwrap_or_default();
    (!command
        .lines()
        .all(crate::detect::read_only::line_is_read_only))
    .then(|| crate::tool::Checkpoint {
        shown: command.to_string(),
        covers: crate::tool::Covers::Project,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn permissions(command: &str) -> Vec<(String, Option<String>)> {
        shell_accesses(command, &Places::fixed())
            .into_iter()
            .map(|a| (a.permission, a.reason))
            .collect()
    }

    fn patterns(command: &str) -> Vec<String> {
        shell_accesses(command, &Places::fixed())
            .into_iter()
            .map(|a| format!("{} {}", a.permission, a.pattern))
            .collect()
    }

    #[test]
    fn a_plain_command_needs_shell_only() {
        assert_eq!(permissions("cargo test"), [("shell".into(), None)]);
    }

    #[test]
    fn secret_then_destructive_each_with_a_reason() {
        assert_eq!(
            permissions("rm -rf build"),
            [
                ("shell".into(), None),
                (
                    "destructive-shell".into(),
                    Some("destructive: rm -rf build".into())
                ),
            ]
        );
        assert_eq!(
            permissions("cat .env && git push --force origin main"),
            [
                ("shell".into(), None),
                ("shell".into(), None),
                ("secret-shell".into(), Some("secret file: .env".into())),
                (
                    "destructive-shell".into(),
                    Some("destructive: git push --force origin main".into())
                ),
            ]
        );
        assert_eq!(
            permissions("cat .tinytool/state.db"),
            [
                ("shell".into(), None),
                (
                    "secret-shell".into(),
                    Some("protected path: .tinytool/state.db".into())
                ),
            ]
        );
    }

    #[test]
    fn each_command_is_its_own_access() {
        assert_eq!(
            patterns("rm -rf a; kill -9 1 && ls"),
            [
                "shell rm -rf a",
                "shell kill -9 1",
                "shell ls",
                "destructive-shell rm -rf a",
                "destructive-shell kill -9 1"
            ]
        );
        // A finding that needs the line's context judges the line whole.
        let accesses = shell_accesses("X=rm; $X -rf /", &Places::fixed());
        let whole = accesses.last().unwrap();
        assert_eq!(whole.permission, "destructive-shell");
        assert!(whole.whole);
        assert_eq!(whole.pattern, "X=rm; $X -rf /");
        // Past the parser's bounds: one whole access per permission.
        let deep = format!("echo {}", "${a:-".repeat(100));
        let accesses = shell_accesses(&deep, &Places::fixed());
        assert!(accesses.iter().all(|a| a.whole && a.pattern == deep));
        assert_eq!(accesses.len(), 3);
    }

    #[test]
    fn timeouts_default_and_clamp() {
        assert_eq!(effective_timeout(None), Duration::from_secs(120));
        assert_eq!(effective_timeout(Some(0)), Duration::from_secs(120));
        assert_eq!(effective_timeout(Some(-5)), Duration::from_secs(120));
        assert_eq!(effective_timeout(Some(1_500)), Duration::from_millis(1_500));
        assert_eq!(
            effective_timeout(Some(10_000_000)),
            Duration::from_secs(600)
        );
    }
}
