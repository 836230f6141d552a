//! `tinytool state todos|notes|findings`: the session's stored data as JSON, read without
//! creating anything.

use clap::{Arg, ArgMatches, Command};
use serde_json::Value;

use super::Output;
use crate::exit::ExitStatus;
use crate::session::Session;

/// What `state` can print.
pub const KINDS: &[&str] = &["todos", "notes", "findings"];

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
    let value = session.state.read(|store| {
        Ok(match kind {
            "notes" => serde_json::to_value(store.notes(id)?)?,
            "findings" => serde_json::to_value(store.findings(id)?)?,
            _ => serde_json::to_value(store.todos(id)?)?,
        })
    });
    match value {
        Ok(value) => out.json(&value.unwrap_or(Value::Array(Vec::new()))),
        Err(err) => super::usage(&format!("cannot read the state: {err:#}")),
    }
}
