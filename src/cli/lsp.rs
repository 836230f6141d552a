//! `tinytool lsp status|stop`: which language server runs for each language of the project
//! (its process, memory, open files, how long it has been idle), why a language has none
//! (not installed, turned off, refused by policy), and stopping them all.
//!
//! Text: one line per language, `LANGUAGE: SERVER running (pid P, N MiB, F open files,
//! idle S s)`, `LANGUAGE: SERVER not running` or `LANGUAGE: none: WHY`. JSON (`--json`):
//! `{"languages": [{"language", "server", "unavailable", "running": [status…]}]}`. `stop`
//! prints how many servers it stopped. The exit status is 0 either way.

use clap::{Arg, ArgAction, ArgMatches, Command};
use serde_json::json;

use super::Output;
use crate::exit::ExitStatus;
use crate::session::{CallContext, Session};

/// The `lsp` subcommand.
pub fn command() -> Command {
    Command::new("lsp")
        .about("Show or stop the language servers behind diagnostics")
        .long_about(
            "Show which language server runs for each language of the project in --dir \
             (process, memory, open files, idle time), and why a language has none: not \
             installed, turned off in the config, or refused by policy; or stop every \
             server of the project. Servers start on the first change that needs them and \
             stop after lsp.idle_ms without calls.",
        )
        .subcommand_required(true)
        .subcommand(
            Command::new("status")
                .about("Print the servers of the project, per language")
                .arg(
                    Arg::new("json")
                        .long("json")
                        .action(ArgAction::SetTrue)
                        .help("Print one JSON object instead of lines"),
                ),
        )
        .subcommand(Command::new("stop").about("Stop every language server of the project"))
}

/// Runs `lsp`.
pub fn run(session: &Session, sub: &ArgMatches, out: &mut Output) -> ExitStatus {
    match sub.subcommand() {
        Some(("stop", _)) => {
            let stopped = crate::lsp::stop(&session.dir);
            out.raw(format!("stopped {stopped} language server(s)\n").as_bytes())
        }
        Some(("status", status)) => {
            let ctx = CallContext::new(session, "lsp");
            let languages = crate::lsp::status(&ctx);
            if status.get_flag("json") {
                return out.json(&json!({"languages": languages}));
            }
            let mut text = String::new();
            for language in &languages {
                let name = &language.language;
                let server = language.server.as_deref().unwrap_or("none");
                if language.running.is_empty() {
                    match &language.unavailable {
                        Some(why) => text.push_str(&format!("{name}: none: {why}\n")),
                        None => text.push_str(&format!("{name}: {server} not running\n")),
                    }
                }
                for running in &language.running {
                    let pid = running
                        .pid
                        .map_or_else(|| "no process".to_string(), |p| format!("pid {p}"));
                    text.push_str(&format!(
                        "{name}: {} {} ({pid}, {} MiB, {} open files, idle {} s){}\n",
                        running.server,
                        running.state,
                        running.memory_kib / 1024,
                        running.open_files,
                        running.idle_ms / 1000,
                        running
                            .reason
                            .as_ref()
                            .map(|r| format!(": {r}"))
                            .unwrap_or_default()
                    ));
                }
            }
            out.raw(text.as_bytes())
        }
        _ => ExitStatus::Usage,
    }
}
