//! Language servers behind every change: after write, edit and apply_patch, the project's
//! language server says what is wrong with the files as written, and the result tells the
//! problems the change introduced from those that were there and those it fixed.
//!
//! - **One server per project, language and sandbox**, kept warm by a broker
//!   (`broker`): a detached `tinytool __lsp` process that runs the server under the same
//!   sandbox as bash, answers every tinytool process of the project (CLI calls,
//!   `exec --jsonl`, MCP) over a Unix socket in `.tinytool/lsp/`, and stops the server
//!   after `lsp.idle_ms`, over `lsp.max_memory_mb`, or when it hangs. The socket's name is
//!   a hash of everything that decides what the server may do (the project, the language,
//!   the command, the sandbox settings, the caps, tinytool's build): a call never reaches
//!   a server started under other settings.
//! - **Only what is true of the text as written** (`client`): every change is a new
//!   document version, and a problem set counts only when it is of the version the file
//!   holds (pull requests answered after the change, tsserver's synchronous diagnostics,
//!   publishes carrying that version).
//! - **Bounded waits**: a call waits at most `lsp.wait_ms` for a warm server and
//!   `lsp.cold_wait_ms` for one it starts; past that the result says the server is busy,
//!   and the next call or the diagnostics tool reports what arrived.
//! - **The policy decides** whether a server runs: its command is judged as a `shell` call
//!   (one the project config names, as a project command). Files the caller may not read
//!   are never sent to a server.

mod broker;
mod client;
mod exchange;
mod frame;
mod link;
mod problem;
mod report;
mod servers;

use std::collections::BTreeMap;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::Value;

pub use broker::{SUBCOMMAND, main as broker_main};
pub use exchange::Status;
pub use report::Report;
use servers::Found;

use crate::session::{CallContext, Session};

/// A call's bound past the broker's own, for the socket round trip.
const MARGIN: Duration = Duration::from_secs(3);
/// Files larger than this are not sent to a server.
const MAX_FILE_BYTES: u64 = 4 * 1024 * 1024;
/// Files the diagnostics tool checks at most in a folder (the most recently changed).
pub const MAX_FOLDER_FILES: usize = 50;

/// One file a call changed.
#[derive(Debug, Clone, Copy)]
pub struct Change<'a> {
    /// The file (resolved).
    pub path: &'a Path,
    /// Its content before the change; `None` when the change created it.
    pub before: Option<&'a [u8]>,
    /// The change deleted it.
    pub deleted: bool,
}

/// One file a check asks about.
struct Asked {
    path: PathBuf,
    /// Its text before the change (`Some(None)`: the change created it); `None`: nothing
    /// to compare with (the diagnostics tool).
    before: Option<Option<String>>,
    deleted: bool,
}

/// The diagnostics of the files a call changed, compared with their text before.
fn after_change(ctx: &CallContext, changes: &[Change]) -> Report {
    let files = changes
        .iter()
        .map(|c| Asked {
            path: c.path.to_path_buf(),
            before: Some(c.before.map(|b| String::from_utf8_lossy(b).into_owned())),
            deleted: c.deleted,
        })
        .collect();
    check(ctx, files)
}

/// [`after_change`], rendered: the note for the tool's output (`""` or text starting with
/// a newline) and `metadata.diagnostics`.
pub fn diagnose(ctx: &CallContext, changes: &[Change]) -> (String, Option<Value>) {
    render(ctx, &after_change(ctx, changes))
}

/// Appends the diagnostics of `changes` to a tool's successful output: the note to its
/// text, `metadata.diagnostics`.
pub fn append(
    ctx: &CallContext,
    output: crate::tool::ToolOutput,
    changes: &[Change],
) -> crate::tool::ToolOutput {
    if output.is_error {
        return output;
    }
    let (note, metadata) = diagnose(ctx, changes);
    add_to(output, note, metadata)
}

/// Adds a note and `metadata.diagnostics` to an output (a captured one gets the note as
/// its last line).
fn add_to(
    mut output: crate::tool::ToolOutput,
    note: String,
    metadata: Option<Value>,
) -> crate::tool::ToolOutput {
    match &mut output.body {
        crate::tool::Body::Text(text) | crate::tool::Body::Paged(text) => text.push_str(&note),
        crate::tool::Body::Captured(capture) => capture.push_str(&note),
        crate::tool::Body::Parts(_) => {}
    }
    match metadata {
        Some(metadata) => output.with("diagnostics", metadata),
        None => output,
    }
}

/// Files of a command's changes checked at most (the first, in path order).
const MAX_COMMAND_FILES: usize = 20;

/// The diagnostics of the files a command (bash) changed, as its checkpoint saw them,
/// appended to its output (`lsp.after_bash`).
pub fn after_command(
    ctx: &CallContext,
    output: crate::tool::ToolOutput,
    changed: &[crate::tool::ChangedFile],
) -> crate::tool::ToolOutput {
    let files: Vec<Asked> = changed
        .iter()
        .filter(|c| has_language(&c.path))
        .take(MAX_COMMAND_FILES)
        .map(|c| Asked {
            path: c.path.clone(),
            // A file whose earlier content the checkpoint did not keep is not compared.
            before: match (&c.before, c.existed) {
                (Some(bytes), _) => Some(Some(String::from_utf8_lossy(bytes).into_owned())),
                (None, false) => Some(None),
                (None, true) => None,
            },
            deleted: c.deleted,
        })
        .collect();
    if files.is_empty() {
        return output;
    }
    let (note, metadata) = render(ctx, &check(ctx, files));
    add_to(output, note, metadata)
}

/// The current diagnostics of `paths` (files), compared with nothing.
pub fn current(ctx: &CallContext, paths: &[PathBuf]) -> Report {
    check(
        ctx,
        paths
            .iter()
            .map(|p| Asked {
                path: p.clone(),
                before: None,
                deleted: false,
            })
            .collect(),
    )
}

impl Report {
    /// The languages of the report that have no server, with why.
    pub fn unavailable(&self) -> Vec<(String, String)> {
        self.parts
            .iter()
            .filter_map(|part| match &part.outcome {
                report::Outcome::Unavailable(why) => Some((part.language.clone(), why.clone())),
                _ => None,
            })
            .collect()
    }
}

/// Whether `path` is in a language tinytool knows a server for.
pub fn has_language(path: &Path) -> bool {
    servers::language_of(path).is_some()
}

fn check(ctx: &CallContext, files: Vec<Asked>) -> Report {
    let config = &ctx.session.config.lsp;
    let mut report = Report {
        parts: Vec::new(),
        warnings: config.warnings,
        max_lines: config.max_lines,
    };
    if !config.enabled {
        return report;
    }
    let mut by_language: BTreeMap<&'static str, Vec<Asked>> = BTreeMap::new();
    for file in files {
        let Some(language) = servers::language_of(&file.path) else {
            continue;
        };
        // A file outside the project is not the project server's; a file the caller may
        // not read is never shown to a server (its problems quote it).
        if !file.path.starts_with(&ctx.session.dir) || crate::secrets::is_secret(ctx, &file.path) {
            continue;
        }
        // A generated file of many megabytes is no source a server should hold.
        if std::fs::metadata(&file.path).is_ok_and(|m| m.len() > MAX_FILE_BYTES) {
            continue;
        }
        by_language.entry(language.name).or_default().push(file);
    }
    for (name, files) in by_language {
        let Some(language) = servers::language_named(name) else {
            continue;
        };
        let befores: Vec<Option<Option<String>>> = files.iter().map(|f| f.before.clone()).collect();
        let (server, outcome) = match servers::find(config, language) {
            Found::None { why } => (String::new(), report::Outcome::Unavailable(why)),
            Found::Server {
                argv,
                named,
                name: server,
                from_project,
            } => {
                let outcome = match allowed(ctx, &named, from_project) {
                    Err(refusal) => report::Outcome::Refused(refusal),
                    Ok(()) => ask_check(ctx, language.name, &server, argv, &files),
                };
                (server, outcome)
            }
        };
        report.parts.push(report::Part {
            language: name.to_string(),
            server,
            outcome,
            befores,
        });
    }
    report
}

/// Whether the policy lets the server's command run, judged as a `shell` call (one the
/// project config names, as a project command). Never asked for: a server starts on a
/// change, and a question on every edit would be no answer.
fn allowed(ctx: &CallContext, named: &[String], from_project: bool) -> Result<(), String> {
    let accesses = crate::process::command::command_accesses(ctx, named);
    if accesses.iter().any(|a| !ctx.session.gate.permits(ctx, a)) {
        let shown = crate::process::command::shell_join(named);
        return Err(format!(
            "the policy does not allow `{shown}` (it is denied, or asked for, and a language \
             server is never asked for: it starts on a change); to run it, allow it in the \
             policy: {{\"permission\": \"shell\", \"pattern\": \"{}*\", \"action\": \"allow\"}}",
            named.first().map_or("", String::as_str)
        ));
    }
    if from_project {
        return ctx
            .allows_project_command(&accesses)
            .map_err(|refusal| refusal.message);
    }
    Ok(())
}

fn ask_check(
    ctx: &CallContext,
    language: &str,
    server: &str,
    argv: Vec<String>,
    files: &[Asked],
) -> report::Outcome {
    let config = &ctx.session.config.lsp;
    let spec = match spec_for(ctx.session, language, server, argv) {
        Ok(spec) => spec,
        Err(err) => return report::Outcome::Failed(err),
    };
    let question = exchange::Ask::Check {
        files: files
            .iter()
            .map(|file| exchange::FileAsk {
                path: file.path.to_string_lossy().into_owned(),
                before: file.before.clone().flatten(),
                deleted: file.deleted,
            })
            .collect(),
        wait_ms: config.wait_ms,
        cold_wait_ms: config.cold_wait_ms,
    };
    let deadline =
        Instant::now() + Duration::from_millis(config.cold_wait_ms.max(config.wait_ms)) + MARGIN;
    let cancel = ctx.session.cancel_flag();
    match link::ask(
        &spec,
        &ctx.session.sandbox,
        &question,
        deadline,
        Some(&cancel),
    ) {
        Ok(answer) => match serde_json::from_value::<exchange::Checked>(answer) {
            Ok(checked) => report::Outcome::Checked(checked),
            Err(err) => report::Outcome::Failed(format!("the broker's answer is broken: {err}")),
        },
        Err(err) => report::Outcome::Failed(err),
    }
}

/// The broker of `language` in `session`'s project: its socket, lock and settings.
fn spec_for(
    session: &Session,
    language: &str,
    server: &str,
    argv: Vec<String>,
) -> Result<broker::Spec, String> {
    let folder = crate::project::ensure_own_subdir(&session.dir, "lsp")
        .map_err(|err| format!("cannot make .tinytool/lsp: {err}"))?;
    let config = &session.config.lsp;
    let max_memory_mb = config
        .servers
        .get(language)
        .and_then(|s| s.max_memory_mb)
        .unwrap_or(config.max_memory_mb);
    let mut hasher = std::hash::DefaultHasher::new();
    session.dir.hash(&mut hasher);
    language.hash(&mut hasher);
    argv.hash(&mut hasher);
    session.sandbox.encode().hash(&mut hasher);
    config.idle_ms.hash(&mut hasher);
    max_memory_mb.hash(&mut hasher);
    env!("CARGO_PKG_VERSION").hash(&mut hasher);
    // A rebuilt binary speaks to its own brokers only.
    if let Ok(meta) = std::fs::metadata("/proc/self/exe") {
        use std::os::unix::fs::MetadataExt;
        (meta.len(), meta.mtime(), meta.mtime_nsec(), meta.ino()).hash(&mut hasher);
    }
    let key = format!("{language}-{:016x}", hasher.finish());
    Ok(broker::Spec {
        dir: session.dir.clone(),
        language: language.to_string(),
        server: server.to_string(),
        argv,
        socket: folder.join(format!("{key}.sock")),
        lock: folder.join(format!("{key}.lock")),
        idle_ms: config.idle_ms,
        max_memory_mb,
        cache: cache_dir(language),
    })
}

/// Where servers keep their caches: `$XDG_CACHE_HOME/tinytool/lsp/<language>` (else under
/// `~/.cache`, else the temporary folder).
fn cache_dir(language: &str) -> PathBuf {
    cache_root().join(language)
}

/// `$XDG_CACHE_HOME/tinytool/lsp` (else under `~/.cache`, else the temporary folder).
fn cache_root() -> PathBuf {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|h| !h.is_empty())
                .map(|h| PathBuf::from(h).join(".cache"))
        })
        .unwrap_or_else(std::env::temp_dir);
    base.join("tinytool").join("lsp")
}

/// The sockets of the brokers of the project in `dir`.
fn sockets(dir: &Path) -> Vec<PathBuf> {
    let folder = crate::project::tinytool_dir(dir).join("lsp");
    let mut found: Vec<PathBuf> = std::fs::read_dir(folder)
        .map(|entries| {
            entries
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|e| e == "sock"))
                .collect()
        })
        .unwrap_or_default();
    found.sort();
    found
}

/// One language of `tinytool lsp status`.
#[derive(Debug, Clone, serde::Serialize)]
pub struct LanguageStatus {
    /// The language.
    pub language: String,
    /// The server that would run, when one is found.
    pub server: Option<String>,
    /// Why none runs for it (not installed, turned off, refused by policy).
    pub unavailable: Option<String>,
    /// The brokers running for it (one per sandbox setting).
    pub running: Vec<Status>,
}

/// What runs for each language in the project, and why a language has none.
pub fn status(ctx: &CallContext) -> Vec<LanguageStatus> {
    let mut running: Vec<Status> = sockets(&ctx.session.dir)
        .iter()
        .filter_map(|socket| {
            let answer = link::ask_running(socket, &exchange::Ask::Status, Duration::from_secs(5))?;
            serde_json::from_value::<Status>(answer).ok()
        })
        .collect();
    servers::LANGUAGES
        .iter()
        .map(|language| {
            let (server, unavailable) = match servers::find(&ctx.session.config.lsp, language) {
                Found::None { why } => (None, Some(why)),
                Found::Server {
                    named,
                    name,
                    from_project,
                    ..
                } => match allowed(ctx, &named, from_project) {
                    Ok(()) => (Some(name), None),
                    Err(refusal) => (Some(name), Some(format!("refused by policy: {refusal}"))),
                },
            };
            let mine = running
                .iter()
                .filter(|s| s.language == language.name)
                .cloned()
                .collect();
            running.retain(|s| s.language != language.name);
            LanguageStatus {
                language: language.name.to_string(),
                server,
                unavailable,
                running: mine,
            }
        })
        .collect()
}

/// Stops every broker of the project in `dir` and its server; returns how many stopped.
pub fn stop(dir: &Path) -> usize {
    let mut stopped = 0;
    for socket in sockets(dir) {
        if link::ask_running(&socket, &exchange::Ask::Stop, Duration::from_secs(10)).is_some() {
            stopped += 1;
        }
        // Gone once the broker ended; one whose broker died earlier is stale.
        let deadline = Instant::now() + Duration::from_secs(3);
        while socket.exists() && Instant::now() < deadline {
            if link::ask_running(&socket, &exchange::Ask::Status, Duration::from_millis(200))
                .is_none()
            {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    stopped
}

/// `metadata.diagnostics` and the note of a report, paths shown as the call shows them.
pub fn render(ctx: &CallContext, report: &Report) -> (String, Option<Value>) {
    let dir = ctx.session.dir.clone();
    report.render(&move |path: &str| crate::paths::display(&dir, Path::new(path)))
}
