//! `tinytool state todos|notes|findings|jobs|monitors|disk`: the stored data as JSON, read
//! without creating anything. `disk` lists each store under `.tinytool/` (state,
//! outputs, checkpoints, journal) with its size in bytes and its cap (`null`: none). `jobs` are the session's background tasks, `monitors` the
//! project's monitors; both first settle work whose supervisor is gone (see `background`)
//! when the database exists.

use clap::{Arg, ArgMatches, Command};
use serde_json::Value;

use super::Output;
use crate::exit::ExitStatus;
use crate::session::Session;
use crate::state::Background;
use crate::tools::{monitor, task};

/// What `state` can print.
pub const KINDS: &[&str] = &["todos", "notes", "findings", "jobs", "monitors", "disk"];

/// The `state` subcommand.
pub fn command() -> Command {
    Command::new("state")
        .about("Print the session's stored state as JSON")
        .arg(
            Arg::new("kind")
                .value_name("KIND")
                .required(true)
                .value_parser(KINDS.to_vec())
                .help("Which part of the state"),
        )
}

/// Runs `state KIND`.
pub fn run(session: &Session, sub: &ArgMatches, out: &mut Output) -> ExitStatus {
    let kind = sub
        .get_one::<String>("kind")
        .map_or("todos", String::as_str);
    let id = &session.id;
    if kind == "disk" {
        return out.json(&disk(session));
    }
    let reaped = match kind {
        "jobs" => crate::background::reap(session, Background::Job),
        "monitors" => crate::background::reap(session, Background::Monitor),
        _ => Ok(()),
    };
    if let Err(err) = reaped {
        return super::usage(&format!("cannot read the state: {err:#}"));
    }
    let value = session.state.read(|store| {
        Ok(match kind {
            "notes" => serde_json::to_value(store.notes(id)?)?,
            "findings" => serde_json::to_value(store.findings(id)?)?,
            "jobs" => Value::Array(store.jobs(id)?.iter().map(task::job_entry).collect()),
            "monitors" => Value::Array(
                store
                    .monitors(true)?
                    .iter()
                    .map(monitor::state_entry)
                    .collect(),
            ),
            _ => serde_json::to_value(store.todos(id)?)?,
        })
    });
    match value {
        Ok(value) => out.json(&value.unwrap_or(Value::Array(Vec::new()))),
        Err(err) => super::usage(&format!("cannot read the state: {err:#}")),
    }
}

/// Bytes of the files below `path` (a file counts itself; a missing path is 0).
fn size_of(path: &std::path::Path) -> u64 {
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return 0;
    };
    if !meta.is_dir() {
        return meta.len();
    }
    std::fs::read_dir(path)
        .map(|entries| entries.flatten().map(|e| size_of(&e.path())).sum())
        .unwrap_or(0)
}

/// `state disk`: each store under `.tinytool/` against its cap.
fn disk(session: &Session) -> Value {
    let tinytool = crate::project::tinytool_dir(&session.dir);
    let state = session.state.path();
    let state_bytes: u64 = ["", "-wal", "-shm"]
        .iter()
        .map(|suffix| {
            let mut name = state.as_os_str().to_owned();
            name.push(suffix);
            size_of(std::path::Path::new(&name))
        })
        .sum();
    let cp = session.config.checkpoints;
    let stores = [
        ("state", state.to_path_buf(), state_bytes, None),
        (
            "outputs",
            tinytool.join("outputs"),
            size_of(&tinytool.join("outputs")),
            Some(
                session
                    .config
                    .keep_bytes
                    .unwrap_or(crate::spill::KEEP_BYTES),
            ),
        ),
        (
            "checkpoints",
            tinytool.join("checkpoints"),
            size_of(&tinytool.join("checkpoints")),
            Some(cp.max_bytes),
        ),
        (
            "journal",
            tinytool.join("journal"),
            size_of(&tinytool.join("journal")),
            None,
        ),
    ];
    Value::Array(
        stores
            .into_iter()
            .map(|(name, path, bytes, cap)| {
                serde_json::json!({
                    "store": name,
                    "path": crate::paths::display(&session.dir, &path),
                    "bytes": bytes,
                    "cap": cap,
                })
            })
            .collect(),
    )
}
