//! `tinytool checkpoints [--json]`, `tinytool checkpoints show ID` and
//! `tinytool undo [ID] [--dry-run] [--force]` (the work is in
//! `crate::checkpoints`).
//!
//! `checkpoints` prints newest first, per checkpoint a header line
//! `ID KIND TIME TOOL: COMMAND [notes]` and one indented summary line per file (see
//! `checkpoints::report`); `--json` prints an array of objects with `id`, `kind`, `tool`,
//! `time` (milliseconds since the epoch), `paths` and more. The global `--session` (flag
//! or `TINYTOOL_SESSION`), when given, lists only that session's checkpoints. `undo`
//! prints what it restored; with conflicts and without `--force` it lists them and exits
//! 1 having changed nothing.

use std::io::Write;

use clap::{Arg, ArgAction, ArgMatches, Command};
use serde_json::Value;

use super::Output;
use crate::checkpoints::record;
use crate::checkpoints::report::{self, Secrets};
use crate::checkpoints::undo::{self, Outcome};
use crate::exit::ExitStatus;
use crate::session::Session;

/// The `checkpoints` subcommand.
pub fn checkpoints_command() -> Command {
    Command::new("checkpoints")
        .about("List the checkpoints taken before calls, newest first")
        .long_about(
            "List the checkpoints taken before every call that may change the project (write, \
             edit, apply_patch, bash unless read-only, monitor start, task), newest first: \
             id, kind (call, undo, or outside: a change no call made), time, tool, command or \
             paths, and a summary line per file (`M path +ADDED -REMOVED`, `A path`, `D path`, \
             and files not kept with why). The newest 20 unless --limit says otherwise; \
             --before ID lists older ones. \
             With the global --session, only that session's. `checkpoints show ID` prints the \
             unified diff of one checkpoint; secret files (those whose read the policy \
             refuses) show `[content of a secret file not shown]`.",
        )
        .arg(
            Arg::new("json")
                .long("json")
                .action(ArgAction::SetTrue)
                .help("Print a JSON array of {id, kind, tool, time, paths, ...}"),
        )
        .arg(
            Arg::new("limit")
                .long("limit")
                .value_name("N")
                .value_parser(clap::value_parser!(usize))
                .help("List at most N checkpoints [default: 20]"),
        )
        .arg(
            Arg::new("before")
                .long("before")
                .value_name("ID")
                .value_parser(clap::value_parser!(i64))
                .help("List the checkpoints older than ID (the next page)"),
        )
        .subcommand(
            Command::new("show")
                .about("Print the unified diff of one checkpoint")
                .arg(
                    Arg::new("id")
                        .value_name("ID")
                        .required(true)
                        .value_parser(clap::value_parser!(i64))
                        .help("The checkpoint"),
                )
                .arg(
                    Arg::new("path")
                        .value_name("PATH")
                        .help("Only the diff of this file, or of the files below this folder"),
                ),
        )
}

/// The `undo` subcommand.
pub fn undo_command() -> Command {
    Command::new("undo")
        .about("Revert the changes of a checkpoint")
        .long_about(
            "Revert a checkpoint: without an ID the newest call checkpoint not undone yet (so \
             repeated undos walk back), with an ID that one (an undo's ID reverts the undo). \
             Every path it changed gets its state before the call back (bytes and mode; created \
             files are removed). It takes back only that checkpoint's changes: a path changed \
             since by a later call (named), by no call (a person's editor), being changed by a \
             running call, or possibly written by a command that ran at the same time is a \
             conflict: the undo lists the conflicts, changes nothing and exits 1 unless \
             --force is given. Newer calls that changed only folders checkpoints do not keep \
             are passed over and named. The restore is one multi-file atomic commit and is \
             itself a checkpoint.",
        )
        .arg(
            Arg::new("id")
                .value_name("ID")
                .value_parser(clap::value_parser!(i64))
                .help("The checkpoint to revert [default: the newest not undone]"),
        )
        .arg(
            Arg::new("dry-run")
                .long("dry-run")
                .action(ArgAction::SetTrue)
                .help("List what the undo would restore and remove (paths and sizes) and change nothing"),
        )
        .arg(
            Arg::new("force")
                .long("force")
                .action(ArgAction::SetTrue)
                .help("Restore conflicting paths too"),
        )
}

fn fail(message: &str) -> ExitStatus {
    let _ = writeln!(std::io::stderr(), "tinytool: {message}");
    ExitStatus::ToolError
}

/// Runs `checkpoints`; `session_filter` is the explicitly given session.
pub fn run_checkpoints(
    session: &Session,
    session_filter: Option<&str>,
    sub: &ArgMatches,
    out: &mut Output,
) -> ExitStatus {
    let blobs = record::blobs(session);
    // A killed call's checkpoint is completed before it is listed (a failure leaves it
    // listed as open, for the next call to complete).
    let _ = crate::checkpoints::recovery::complete_dead(session);
    if let Some(("show", show)) = sub.subcommand() {
        let id = show.get_one::<i64>("id").copied().unwrap_or_default();
        let found = session.state.read(|store| {
            Ok(match store.checkpoint(id)? {
                Some(row) => Some((row, store.checkpoint_changes(id)?)),
                None => None,
            })
        });
        return match found {
            Ok(Some(Some((row, changes)))) => {
                let secrets = Secrets::new(session);
                let path = show.get_one::<String>("path").map(String::as_str);
                match report::show_text(&blobs, &secrets, &row, &changes, path) {
                    Ok(text) => out.raw(text.as_bytes()),
                    Err(why) => fail(&why),
                }
            }
            Ok(_) => fail(&format!("no checkpoint {id} (see `tinytool checkpoints`)")),
            Err(err) => fail(&format!("cannot read the checkpoints: {err:#}")),
        };
    }
    let before = sub.get_one::<i64>("before").copied();
    let limit = sub
        .get_one::<usize>("limit")
        .copied()
        .unwrap_or(report::PAGE);
    let listed = session
        .state
        .read(|store| report::page(store, session_filter, before, limit));
    let page = match listed {
        Ok(page) => page.unwrap_or_default(),
        Err(err) => return fail(&format!("cannot read the checkpoints: {err:#}")),
    };
    if sub.get_flag("json") {
        let array = page
            .entries
            .iter()
            .map(|(row, changes)| report::entry_json(row, changes))
            .collect();
        return out.json(&Value::Array(array));
    }
    let next = |id: i64| format!("`tinytool checkpoints --before {id}`");
    out.raw(report::listing_text(&blobs, &page, next).as_bytes())
}

/// Runs `undo`.
pub fn run_undo(session: &Session, sub: &ArgMatches, out: &mut Output) -> ExitStatus {
    let id = sub.get_one::<i64>("id").copied();
    let force = sub.get_flag("force");
    if sub.get_flag("dry-run") {
        let plan = match undo::plan_settled(session, id) {
            Ok(plan) => plan,
            Err(err) => return fail(&format!("{err:#}")),
        };
        let text = undo::dry_run_text(&plan);
        let status = out.raw(text.as_bytes());
        return if !plan.conflicts.is_empty() && !force {
            ExitStatus::ToolError
        } else {
            status
        };
    }
    match undo::undo(session, id, force) {
        Ok(Outcome::Refused(plan)) => {
            let _ = out.raw(undo::refused_text(&plan).as_bytes());
            ExitStatus::ToolError
        }
        Ok(Outcome::Done(plan, undo_id)) => out.raw(undo::done_text(&plan, undo_id).as_bytes()),
        Err(err) => fail(&format!("{err:#}")),
    }
}
