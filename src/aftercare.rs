//! What follows every file change by write, edit and apply_patch: the configured formatter
//! and the `file.modified` bus event.
//!
//! The formatter of the first config glob matching the file runs only when the policy allows
//! its command line as a `shell` access (a cloned repository's config must not run
//! arbitrary programs); it runs in the project directory with stdin closed and at most
//! [`FORMATTER_TIMEOUT`] to finish. Its failure is reported after the tool's output and
//! never undoes the write. The note follows the reference: `Formatted with NAME` when the
//! file changed, `Formatter failed: …` on failure, nothing when it left the file as it was.

use std::path::Path;
use std::time::Duration;

use serde_json::{Map, Value, json};

use crate::process::command;
use crate::session::CallContext;

/// How long a formatter may run before it is killed and reported as failed.
const FORMATTER_TIMEOUT: Duration = Duration::from_secs(60);

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
    let command = command::shell_join(&argv);
    let accesses = command::command_accesses(ctx, &argv);
    let allowed = if ctx.session.config.formatter_from_project(&rel) {
        ctx.allows_project_command(&accesses)
    } else {
        ctx.allows(&accesses)
    };
    if let Err(refusal) = allowed {
        return Formatted::Skipped {
            command,
            reason: refusal.message,
        };
    }
    let before = crate::atomic::read_regular(path).ok();
    let plan = crate::sandbox::plan_for(ctx.session, crate::sandbox::Purpose::default());
    match run(&argv, &ctx.session.dir, plan) {
        Ok(()) => {
            if crate::atomic::read_regular(path).ok() == before {
                Formatted::Unchanged { command }
            } else {
                let name = Path::new(&argv[0])
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_else(|| argv[0].clone());
                Formatted::Changed { command, name }
            }
        }
        // A formatter's complaint quotes the file; for a file the caller may not read,
        // only that it failed is said.
        Err(_) if crate::secrets::is_secret(ctx, path) => Formatted::Failed {
            command,
            error: format!("its messages are not shown: {}", crate::secrets::HIDDEN),
        },
        Err(error) => Formatted::Failed { command, error },
    }
}

/// Runs `argv` in `dir` to completion or timeout, in the sandbox of `plan`; the error says
/// what went wrong (a `required` sandbox that could not be set up included).
fn run(
    argv: &[String],
    dir: &Path,
    plan: Option<std::sync::Arc<crate::sandbox::Plan>>,
) -> Result<(), String> {
    let program = argv.first().map_or("", String::as_str);
    let done = command::run_collect(argv, dir, None, FORMATTER_TIMEOUT, 0, plan.clone()).map_err(
        |err| match plan.as_ref().and_then(|p| p.refusal()) {
            Some(refusal) => format!("{program}: {refusal}"),
            None => format!("{program}: cannot start: {err}"),
        },
    )?;
    match done.failure(program, FORMATTER_TIMEOUT, STDERR_TAIL) {
        Some(failure) => Err(failure),
        None => Ok(()),
    }
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
