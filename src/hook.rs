//! The configured after-hook: a command from the user config
//! that receives each successful call's result as JSON on stdin and may print a modified
//! one. It runs only when the policy allows it as a `shell` call, gets 30 seconds, and a
//! hook that fails, times out or prints something unusable leaves the result unchanged
//! (with a note on standard error).
//!
//! Input: `{"sessionID", "tool", "output", "is_error"}`. Output: empty (no change) or a JSON
//! object with `output` and/or `is_error`.

use std::time::Duration;

use serde_json::{Value, json};

use crate::process::command;
use crate::session::{AfterHook, CallContext};

/// How long a hook may run.
const HOOK_TIMEOUT: Duration = Duration::from_secs(30);
/// The most a hook may print.
const MAX_OUTPUT: usize = 16 * 1024 * 1024;

/// An after-hook command.
#[derive(Debug, Clone)]
pub struct CommandHook {
    command: Vec<String>,
}

impl CommandHook {
    /// A hook running `command` (program and arguments).
    pub fn new(command: Vec<String>) -> Self {
        CommandHook { command }
    }

    /// Runs the hook in the session's sandbox (it is a process tinytool starts, like any).
    fn run(&self, ctx: &CallContext, input: &[u8]) -> Result<Vec<u8>, String> {
        let program = self.command.first().map_or("", String::as_str);
        let plan = crate::sandbox::plan_for(ctx.session, crate::sandbox::Purpose::default());
        let done = command::run_collect(
            &self.command,
            &ctx.session.dir,
            Some(input),
            HOOK_TIMEOUT,
            MAX_OUTPUT,
            plan.clone(),
        )
        .map_err(|e| match plan.as_ref().and_then(|p| p.refusal()) {
            Some(refusal) => format!("cannot start {program}: {refusal}"),
            None => format!("cannot start {program}: {e}"),
        })?;
        match done.failure(program, HOOK_TIMEOUT, 300) {
            Some(failure) => Err(failure),
            None => Ok(done.stdout),
        }
    }
}

impl AfterHook for CommandHook {
    fn apply(&self, ctx: &CallContext, output: &str, is_error: bool) -> Option<(String, bool)> {
        let line = command::shell_join(&self.command);
        if ctx
            .allows(&command::command_accesses(ctx, &self.command))
            .is_err()
        {
            eprintln!(
                "tinytool: the after-hook `{line}` is not allowed as a shell call by the policy; skipped"
            );
            return None;
        }
        let input = json!({
            "sessionID": ctx.session.id,
            "tool": ctx.tool,
            "output": output,
            "is_error": is_error,
        });
        let printed = match self.run(ctx, input.to_string().as_bytes()) {
            Ok(printed) => printed,
            Err(err) => {
                eprintln!("tinytool: the after-hook `{line}` failed ({err}); result unchanged");
                return None;
            }
        };
        if printed.iter().all(u8::is_ascii_whitespace) {
            return None;
        }
        match serde_json::from_slice::<Value>(&printed) {
            Ok(Value::Object(map)) => {
                let new_output = map
                    .get("output")
                    .and_then(Value::as_str)
                    .unwrap_or(output)
                    .to_string();
                let new_error = map
                    .get("is_error")
                    .and_then(Value::as_bool)
                    .unwrap_or(is_error);
                Some((new_output, new_error))
            }
            _ => {
                eprintln!(
                    "tinytool: the after-hook `{line}` printed something that is not a JSON object; result unchanged"
                );
                None
            }
        }
    }
}
