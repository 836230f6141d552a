//! Running a command from the user's config (a formatter, the after-hook): a program with
//! arguments (no shell), the environment of config commands, optional bytes on stdin, its
//! whole process group killed at the deadline like any other child of tinytool, and its
//! output collected up to a bound.
//!
//! Also [`shell_join`], the one way a command line is written for a `shell` policy check.

use std::io;
use std::path::Path;
use std::time::Duration;

use super::environment;
use super::run::{self, Isolation, Outcome, Program, Request, Stream, Watcher};
use crate::access::Access;
use crate::detect::Places;
use crate::session::CallContext;
use crate::truncate::Limits;

/// What a config command printed and how it ended.
#[derive(Debug)]
pub struct Collected {
    /// How it ended.
    pub outcome: Outcome,
    /// Its stdout, up to the bound it was run with.
    pub stdout: Vec<u8>,
    /// The end of its stderr (at most [`STDERR_TAIL_BYTES`]).
    pub stderr_tail: Vec<u8>,
}

/// How much of the end of stderr is kept for error messages.
const STDERR_TAIL_BYTES: usize = 4096;

impl Collected {
    /// Why the command failed, in one line naming `program` and ending with the last
    /// `tail_chars` characters of its stderr; `None` when it exited with status 0.
    pub fn failure(&self, program: &str, timeout: Duration, tail_chars: usize) -> Option<String> {
        let what = if self.outcome.timed_out {
            format!("timed out after {} s and was killed", timeout.as_secs())
        } else {
            match self.outcome.ending {
                run::Ending::Exited(0) => return None,
                run::Ending::Exited(code) => format!("exit status {code}"),
                run::Ending::Signaled { signal, .. } => format!("killed by signal {signal}"),
            }
        };
        let text = String::from_utf8_lossy(&self.stderr_tail);
        let text = text.trim();
        let tail = match text.char_indices().rev().nth(tail_chars) {
            Some((i, _)) => format!("…{}", &text[i..]),
            None => text.to_string(),
        };
        Some(if tail.is_empty() {
            format!("{program}: {what}")
        } else {
            format!("{program}: {what}: {tail}")
        })
    }
}

struct Collector {
    stdout: Vec<u8>,
    max_stdout: usize,
    stderr: Vec<u8>,
}

impl Watcher for Collector {
    fn output(&mut self, stream: Stream, bytes: &[u8]) {
        match stream {
            Stream::Stdout => {
                let room = self.max_stdout.saturating_sub(self.stdout.len());
                self.stdout
                    .extend_from_slice(&bytes[..room.min(bytes.len())]);
            }
            Stream::Stderr => {
                self.stderr.extend_from_slice(bytes);
                if self.stderr.len() > 2 * STDERR_TAIL_BYTES {
                    let cut = self.stderr.len() - STDERR_TAIL_BYTES;
                    self.stderr.drain(..cut);
                }
            }
        }
    }
}

/// Runs `argv` in `dir` to completion or `timeout`, feeding `stdin`, keeping at most
/// `max_stdout` bytes of stdout, in the `sandbox` given (`crate::sandbox`). `Err` when it
/// cannot be started.
pub fn run_collect(
    argv: &[String],
    dir: &Path,
    stdin: Option<&[u8]>,
    timeout: Duration,
    max_stdout: usize,
    sandbox: Option<std::sync::Arc<crate::sandbox::Plan>>,
) -> io::Result<Collected> {
    let mut collector = Collector {
        stdout: Vec::new(),
        max_stdout,
        stderr: Vec::new(),
    };
    let outcome = run::run_with(
        Request {
            program: Program::Argv(argv),
            dir,
            env: environment::config_command_env(std::env::vars_os()),
            stdin: stdin.map_or(run::Input::Null, run::Input::Bytes),
            timeout,
            limits: Limits::default(),
            cancel: None,
            isolation: Isolation::Session,
            sandbox,
        },
        &mut collector,
    )?;
    let keep = collector.stderr.len().saturating_sub(STDERR_TAIL_BYTES);
    collector.stderr.drain(..keep);
    Ok(Collected {
        outcome,
        stdout: collector.stdout,
        stderr_tail: collector.stderr,
    })
}

/// The accesses a command from the config needs before it runs: the same as a bash command
/// with that command line (`shell`, then `secret-shell` and `destructive-shell` when the
/// detectors find them), so a cloned repository's formatter or subagent can never run what
/// a model's command could not.
pub fn command_accesses(ctx: &CallContext, argv: &[String]) -> Vec<Access> {
    crate::detect::shell_accesses(&shell_join(argv), &Places::for_session(ctx.session))
}

/// A command line as a shell would read it, and as `shell` policy rules match it: words
/// joined by spaces, a word with characters a shell treats specially single-quoted.
pub fn shell_join(argv: &[String]) -> String {
    argv.iter()
        .map(|word| {
            let plain = !word.is_empty()
                && word
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c));
            if plain {
                word.clone()
            } else {
                format!("'{}'", word.replace('\'', r"'\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| w.to_string()).collect()
    }

    #[test]
    fn command_lines_quote_what_a_shell_would_split() {
        assert_eq!(
            shell_join(&argv(&["rustfmt", "/p/a.rs"])),
            "rustfmt /p/a.rs"
        );
        assert_eq!(
            shell_join(&argv(&["sh", "-c", "x 'y'", "", "it's"])),
            r#"sh -c 'x '\''y'\''' '' 'it'\''s'"#
        );
    }

    #[test]
    fn output_is_collected_within_bounds_and_the_deadline_kills() {
        let dir = std::env::temp_dir();
        let done = run_collect(
            &argv(&["sh", "-c", "cat; echo oops >&2; exit 3"]),
            &dir,
            Some(b"in"),
            Duration::from_secs(20),
            1,
            None,
        )
        .unwrap();
        assert_eq!(done.stdout, b"i");
        assert_eq!(done.stderr_tail, b"oops\n");
        assert_eq!(done.outcome.ending, run::Ending::Exited(3));
        assert_eq!(
            done.failure("sh", Duration::from_secs(20), 100).as_deref(),
            Some("sh: exit status 3: oops")
        );
        let slow = run_collect(
            &argv(&["sleep", "20"]),
            &dir,
            None,
            Duration::from_millis(200),
            0,
            None,
        )
        .unwrap();
        assert!(slow.outcome.timed_out);
        assert!(
            slow.failure("sleep", Duration::from_secs(1), 10)
                .unwrap()
                .contains("timed out")
        );
    }
}
