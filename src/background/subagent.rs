//! How a subagent run ends, in the words its job and the `task` tool answer with: its
//! status, its result, and why it failed (with the end of its stderr).

use std::time::Duration;

use crate::process::command::shell_join;
use crate::process::run::{Ending, Finished};
use crate::process::words::{go_duration, signal_text};

/// How much of a failed subagent's stderr its error keeps (the end of it).
const STDERR_IN_ERROR: usize = 4_000;

/// Why a subagent command could not start.
pub fn start_error(command: &[String], err: &std::io::Error) -> String {
    format!(
        "cannot start the subagent command `{}`: {err} (check subagents.<type>.command in the config)",
        shell_join(command)
    )
}

/// How a subagent run ended, as a job records it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Concluded {
    /// completed | failed | cancelled.
    pub status: &'static str,
    /// Its standard output (previewed when over the output limits).
    pub result: String,
    /// Empty, or why it failed, with the end of its stderr.
    pub error: String,
}

/// Why a run did not succeed, `None` when it did.
pub fn failure(kind: &str, finished: &Finished, deadline: Duration) -> Option<String> {
    if finished.cancelled {
        return Some("cancelled".into());
    }
    if finished.timed_out {
        return Some(format!(
            "the {kind} subagent timed out after {}",
            go_duration(deadline)
        ));
    }
    match finished.ending {
        Ending::Exited(0) => None,
        Ending::Exited(code) => Some(format!("the {kind} subagent exited with status {code}")),
        Ending::Signaled { signal, .. } => Some(format!(
            "the {kind} subagent was killed (signal: {})",
            signal_text(signal)
        )),
    }
}

/// Turns a finished subagent run into a job's status, result and error.
pub fn conclude(kind: &str, finished: Finished, deadline: Duration) -> Concluded {
    let failed = failure(kind, &finished, deadline);
    let cancelled = finished.cancelled;
    let result = finished.stdout.finish().text;
    let Some(mut error) = failed else {
        return Concluded {
            status: "completed",
            result,
            error: String::new(),
        };
    };
    let stderr = finished.stderr.finish().text;
    let stderr = stderr.trim_end();
    if !stderr.is_empty() {
        error.push('\n');
        error.push_str(&tail(stderr, STDERR_IN_ERROR));
    }
    Concluded {
        status: if cancelled { "cancelled" } else { "failed" },
        result,
        error,
    }
}

/// The last `max` bytes of `text` (on a character boundary), with `…` in front when cut.
fn tail(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    format!("…{}", &text[text.ceil_char_boundary(text.len() - max)..])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tails_keep_the_end_on_a_character_boundary() {
        assert_eq!(tail("short", 10), "short");
        assert_eq!(tail("ééé", 3), "…é");
    }
}
