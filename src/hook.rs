//! The configured after-hook (spec 8.1 AfterHook, DESIGN §7): a command from the user config
//! that receives each successful call's result as JSON on stdin and may print a modified
//! one. It runs only when the policy allows it as a `shell` call, gets 30 seconds, and a
//! hook that fails, times out or prints something unusable leaves the result unchanged
//! (with a note on standard error).
//!
//! Input: `{"sessionID", "tool", "output", "is_error"}`. Output: empty (no change) or a JSON
//! object with `output` and/or `is_error`.

use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};
use wait_timeout::ChildExt;

use crate::session::{AfterHook, CallContext};
use crate::tool::Access;

/// How long a hook may run.
pub const HOOK_TIMEOUT: Duration = Duration::from_secs(30);

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

    fn run(&self, input: &[u8]) -> Result<Vec<u8>, String> {
        let (program, args) = self
            .command
            .split_first()
            .ok_or("the after-hook command is empty")?;
        let mut child = Command::new(program)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| format!("cannot start {program}: {e}"))?;
        if let Some(mut stdin) = child.stdin.take() {
            let input = input.to_vec();
            std::thread::spawn(move || {
                let _ = stdin.write_all(&input);
            });
        }
        let mut stdout = child.stdout.take().ok_or("no stdout")?;
        let reader = std::thread::spawn(move || {
            let mut out = Vec::new();
            let _ = stdout.by_ref().take(16 * 1024 * 1024).read_to_end(&mut out);
            out
        });
        let status = match child
            .wait_timeout(HOOK_TIMEOUT)
            .map_err(|e| e.to_string())?
        {
            Some(status) => status,
            None => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("timed out after {} s", HOOK_TIMEOUT.as_secs()));
            }
        };
        let out = reader.join().map_err(|_| "the output reader failed")?;
        if !status.success() {
            return Err(format!("exited with {status}"));
        }
        Ok(out)
    }
}

impl AfterHook for CommandHook {
    fn apply(&self, ctx: &CallContext, output: &str, is_error: bool) -> Option<(String, bool)> {
        let line = shell_words_join(&self.command);
        if ctx.allows(&[Access::new("shell", line.clone())]).is_err() {
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
        let printed = match self.run(input.to_string().as_bytes()) {
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

/// A command line as the policy sees it: words joined by spaces, quoted when needed.
pub fn shell_words_join(words: &[String]) -> String {
    words
        .iter()
        .map(|w| {
            if !w.is_empty()
                && w.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./=:,@+%{}".contains(c))
            {
                w.clone()
            } else {
                format!("'{}'", w.replace('\'', r"'\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_lines_quote_only_what_needs_it() {
        let words: Vec<String> = ["rustfmt", "--edition", "2024", "my file.rs", "it's"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(
            shell_words_join(&words),
            r"rustfmt --edition 2024 'my file.rs' 'it'\''s'"
        );
    }
}
