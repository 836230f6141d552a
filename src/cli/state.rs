//! `tinytool state todos|notes|findings|jobs|monitors`: the stored data as JSON, read
//! without creating anything. `jobs` are the session's background tasks, `monitors` the
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
pub const KINDS: &[&str] = &["todos", "notes", "findings", "jobs", "monitors"];

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
