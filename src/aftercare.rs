//! What follows every file change by write, edit and apply_patch: the configured formatter
//! (spec 8.3 write, DESIGN §7) and the `file.modified` bus event (DESIGN §8).
//!
//! The formatter of the first config glob matching the file runs only when the policy allows
//! its command line as a `shell` access (a cloned repository's config must not run
//! arbitrary programs); it runs in the project directory with stdin closed and at most
//! [`FORMATTER_TIMEOUT`] to finish. Its failure is reported after the tool's output and
//! never undoes the write. The note follows the reference: `Formatted with NAME` when the
//! file changed, `Formatter failed: …` on failure, nothing when it left the file as it was.

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};

use crate::session::CallContext;
use crate::tool::Access;

/// How long a formatter may run before it is killed and reported as failed.
pub const FORMATTER_TIMEOUT: Duration = Duration::from_secs(60);

/// Bytes of a failing formatter's stderr quoted in the note.
const STDERR_TAIL: usize = 600;

/// What the formatter step did, for the output note and `metadata.formatter`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Formatted {
    /// No formatter is configured for the file.
    None,
    /// The policy does not allow the formatter's command.
    Skipped {
        /// The command line.
        command: String,
        /// Why it was not run.
        reason: String,
    },
    /// It ran and left the file as it was.
    Unchanged {
        /// The command line.
        command: String,
    },
    /// It ran and changed the file.
    Changed {
        /// The command line.
        command: String,
        /// The program's name, as the note shows it.
        name: String,
    },
    /// It could not start, failed or timed out.
    Failed {
        /// The command line.
        command: String,
        /// What went wrong.
        error: String,
    },
}

impl Formatted {
    /// The note appended to the tool's output (`""`, or text starting with a newline).
    pub fn note(&self) -> String {
        match self {
            Formatted::None | Formatted::Unchanged { .. } => String::new(),
            Formatted::Skipped { command, reason } => {
                format!("\nFormatter not run ({command}): {reason}")
            }
            Formatted::Changed { name, .. } => format!("\nFormatted with {name}"),
            Formatted::Failed { error, .. } => format!("\nFormatter failed: {error}"),
        }
    }

    /// `metadata.formatter`, or `None` when no formatter is configured.
    pub fn metadata(&self) -> Option<Value> {
        let (command, status, detail) = match self {
            Formatted::None => return None,
            Formatted::Skipped { command, reason } => (command, "skipped", Some(reason)),
            Formatted::Unchanged { command } => (command, "unchanged", None),
            Formatted::Changed { command, .. } => (command, "formatted", None),
            Formatted::Failed { command, error } => (command, "failed", Some(error)),
        };
        let mut map = Map::new();
        map.insert("command".into(), json!(command));
        map.insert("status".into(), json!(status));
        if let Some(detail) = detail {
            map.insert("detail".into(), json!(detail));
        }
        Some(Value::Object(map))
    }
}

/// Runs the configured formatter on `path` (resolved) when the policy allows it.
pub fn format(ctx: &CallContext, path: &Path) -> Formatted {
    let rel = ctx.display(path);
    let file_arg = path.to_string_lossy();
    let Some(argv) = ctx.session.config.formatter_for(&rel, &file_arg) else {
        return Formatted::None;
    };
    let command = shell_join(&argv);
    if let Err(refusal) = ctx.allows(&[Access::new("shell", command.clone())]) {
        return Formatted::Skipped {
            command,
            reason: refusal.message,
        };
    }
    let before = std::fs::read(path).ok();
    match run(&argv, &ctx.session.dir) {
        Ok(()) => {
            if std::fs::read(path).ok() == before {
                Formatted::Unchanged { command }
            } else {
                let name = Path::new(&argv[0])
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_else(|| argv[0].clone());
                Formatted::Changed { command, name }
            }
        }
        Err(error) => Formatted::Failed { command, error },
    }
}

/// Runs `argv` in `dir` to completion or timeout; the error says what went wrong.
fn run(argv: &[String], dir: &Path) -> Result<(), String> {
    let (program, args) = argv.split_first().ok_or("the command is empty")?;
    let mut child = Command::new(program)
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|err| format!("{program}: cannot start: {err}"))?;
    // Drained on a thread so that a chatty formatter cannot block on a full pipe.
    let stderr = child.stderr.take().map(|mut pipe| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = pipe.read_to_end(&mut buf);
            buf
        })
    });
    let deadline = Instant::now() + FORMATTER_TIMEOUT;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() >= deadline => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!(
                    "{program} timed out after {} s and was killed",
                    FORMATTER_TIMEOUT.as_secs()
                ));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
            Err(err) => return Err(format!("{program}: {err}")),
        }
    };
    let stderr = stderr
        .and_then(|handle| handle.join().ok())
        .unwrap_or_default();
    if status.success() {
        return Ok(());
    }
    let text = String::from_utf8_lossy(&stderr);
    let text = text.trim();
    let tail = match text.char_indices().rev().nth(STDERR_TAIL) {
        Some((i, _)) => format!("…{}", &text[i..]),
        None => text.to_string(),
    };
    let code = match status.code() {
        Some(code) => format!("exit status {code}"),
        None => "killed by a signal".to_string(),
    };
    if tail.is_empty() {
        Err(format!("{program}: {code}"))
    } else {
        Err(format!("{program}: {code}: {tail}"))
    }
}

/// A command line as a shell would read it: words with special characters single-quoted.
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

/// Publishes `file.modified` for `path` (resolved) with `operation` write, edit, create or
/// delete.
pub fn file_modified(ctx: &CallContext, path: &Path, operation: &str) {
    let mut properties = Map::new();
    properties.insert("path".into(), json!(path.to_string_lossy()));
    properties.insert("operation".into(), json!(operation));
    ctx.publish("file.modified", properties);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::Session;

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
            shell_join(&argv(&["sh", "-c", "x 'y'", ""])),
            r#"sh -c 'x '\''y'\''' ''"#
        );
    }

    #[test]
    fn the_formatter_runs_and_its_failure_is_reported() {
        let tmp = tempfile::tempdir().unwrap();
        let mut session = Session::new("s", tmp.path());
        let file = session.dir.join("a.txt");
        std::fs::write(&file, "x\n").unwrap();
        let ctx_of = |session: &Session| -> Formatted {
            let ctx = CallContext::new(session, "write");
            format(&ctx, &file)
        };
        assert_eq!(ctx_of(&session), Formatted::None);
        session.config.formatters = vec![(
            "*.txt".into(),
            argv(&["sh", "-c", "printf 'y\\n' > \"$0\"", "{file}"]),
        )];
        match ctx_of(&session) {
            Formatted::Changed { name, .. } => assert_eq!(name, "sh"),
            other => panic!("{other:?}"),
        }
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "y\n");
        assert!(matches!(ctx_of(&session), Formatted::Unchanged { .. }));
        session.config.formatters = vec![(
            "*.txt".into(),
            argv(&["sh", "-c", "echo bad syntax >&2; exit 3"]),
        )];
        let failed = ctx_of(&session);
        assert_eq!(
            failed.note(),
            "\nFormatter failed: sh: exit status 3: bad syntax"
        );
        assert_eq!(failed.metadata().unwrap()["status"], "failed");
        session.config.formatters = vec![("*.txt".into(), argv(&["/no/such/formatter"]))];
        assert!(ctx_of(&session).note().contains("cannot start"));
    }
}
