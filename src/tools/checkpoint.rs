//! `checkpoint`: the checkpoints and undo as a tool, so an agent host that
//! talks `exec --jsonl` or MCP can list checkpoints, show one, and undo, as
//! `tinytool checkpoints` and `tinytool undo` do on the command line (the work is in
//! `crate::checkpoints`).
//!
//! `action: list` (the default) and `show`, and an undo with `dry_run`, change nothing
//! and need no permission (secret files' contents are never shown). `action: undo`
//! needs the `undo` permission (default `ask`), its pattern the target — the id, or
//! `latest` for the newest call not undone yet — followed by ` --force` when forced, so a
//! policy can allow undos but not forced ones (`"pattern": "* --force", "action": "deny"`).
//!
//! Output: the text the command line prints; `metadata.checkpoints` (list: the array of
//! `tinytool checkpoints --json`), `metadata.entry` (show), or for an undo
//! `metadata.undo` (`target`, `paths` with `A`/`D`/`M`, `conflicts`, `skipped`,
//! `removed_dirs`) and `metadata.checkpoint` (`{"id", "files"}` of the undo's own
//! checkpoint, which `undo` with that id reverts). Conflicts without `force` are an
//! error result that changed nothing.

use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::checkpoints::record;
use crate::checkpoints::report::{self, Secrets};
use crate::checkpoints::undo::{self, Outcome};
use crate::schema;
use crate::session::CallContext;
use crate::tool::{Access, ToolDef, ToolDoc, ToolOutput, parse_args};

/// The `checkpoint` tool's definition.
pub fn definition() -> ToolDef {
    ToolDef {
        name: "checkpoint",
        summary: "List the checkpoints taken before calls, show one, or undo one",
        description: "Every call that may change the project (write, edit, apply_patch, \
            bash unless read-only, monitor start, task) gets a checkpoint first, so its \
            changes can be taken back. `action: list` (default) lists them newest first, \
            20 at a time (`limit`; `before: ID` for older ones) (id, kind call/undo/outside: a change no call made, time, tool, command, and `M path +A -R` / `A path` / \
            `D path` per file; `session_id` filters). `action: show` with `id` prints one \
            checkpoint's unified diff (`path`: only that file, or the files below that folder). `action: undo` reverts `id`, or without it the newest \
            call not undone yet (repeat to walk back); undoing an undo's id brings its \
            changes back. An undo takes back only that checkpoint's changes: a file changed \
            since by a later call (named), by no call (a person's editor) or by a call running \
            now is a conflict: nothing is changed unless `force` is true. Newer calls that \
            changed only folders checkpoints do not keep (node_modules/, a virtualenv) are \
            passed over and named. `dry_run` lists what an undo \
            would restore and remove, with sizes (show gives the diff of a path).",
        permission: "undo",
        schema: parameters,
        execute,
        access: Some(access),
        precheck: None,
        checkpoint: None,
        needs: None,
        after_changes: None,
        doc: ToolDoc {
            output: "list: the text of `tinytool checkpoints`, with metadata.checkpoints the \
                array of `tinytool checkpoints --json` ({\"id\", \"kind\", \"tool\", \"time\", \
                \"command\", \"status\", \"reverts\", \"undone_by\", \"overlaps\", \"paths\"}). \
                show: the checkpoint's header, summary and unified diff (`[content of a \
                secret file not shown]` for files whose read the policy refuses), with \
                metadata.entry. undo: `reverted checkpoint N (TOOL: COMMAND): restored R files, \
                removed M (checkpoint U; ...)` and a line per path (`A`, `D`, `M`), with metadata.undo {\"target\", \
                \"paths\", \"conflicts\", \"skipped\", \"removed_dirs\", \"passed_over\"} and \
                metadata.checkpoint {\"id\": U, \"files\"} (undo U reverts this undo); \
                dry_run: `would revert checkpoint N (TOOL: COMMAND): restore R files, remove M`, \
                the conflicts, and a line per path with its size (`D src/x.py 2.1 KB`).",
            errors: "`no checkpoint N`; `nothing to undo: ...`; `checkpoint N is already \
                undone by checkpoint U` (undo U redoes it); `checkpoint N did not change PATH`; `checkpoint N is still \
                open: its call is running`; `id is required for show`; conflicts: \
                `conflict: PATH: WHY` lines and `undo of checkpoint N refused` (an error \
                result, nothing changed; give force to restore anyway); a refusal (exit \
                status 3) when the policy does not allow the undo (`undo` permission, \
                default ask).",
            examples: &[
                ("List the checkpoints", "tinytool checkpoint"),
                (
                    "Show one as a diff",
                    "tinytool checkpoint --action show --id 12",
                ),
                (
                    "See what the next undo would do",
                    "tinytool checkpoint --action undo --dry-run",
                ),
                ("Undo the newest call", "tinytool checkpoint --action undo"),
            ],
        },
    }
}

fn parameters() -> Value {
    schema::object(
        json!({
            "action": {
                "type": "string",
                "enum": ["list", "show", "undo"],
                "description": "What to do (default: list)."
            },
            "id": {
                "type": "integer",
                "description": "The checkpoint to show or undo (undo's default: the newest call checkpoint not undone yet)."
            },
            "dry_run": {
                "type": "boolean",
                "description": "undo: show the diff it would apply and change nothing."
            },
            "force": {
                "type": "boolean",
                "description": "undo: restore paths changed since by something else too (conflicts)."
            },
            "session_id": {
                "type": "string",
                "description": "list: only this session's checkpoints."
            },
            "path": {
                "type": "string",
                "description": "show: only the diff of this file, or of the files below this folder."
            },
            "limit": {
                "type": "integer",
                "minimum": 1,
                "description": "list: at most this many checkpoints (default 20)."
            },
            "before": {
                "type": "integer",
                "description": "list: only checkpoints older than this id (the next page)."
            }
        }),
        &[],
    )
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CheckpointArgs {
    action: Option<String>,
    id: Option<i64>,
    dry_run: Option<bool>,
    force: Option<bool>,
    session_id: Option<String>,
    path: Option<String>,
    limit: Option<u64>,
    before: Option<i64>,
}

/// Only an undo that changes files asks: its target, ` --force` when forced.
fn access(_ctx: &CallContext, args: &Map<String, Value>) -> Vec<Access> {
    let action = args.get("action").and_then(Value::as_str).unwrap_or("list");
    let flag = |key: &str| args.get(key).and_then(Value::as_bool).unwrap_or(false);
    if action != "undo" || flag("dry_run") {
        return Vec::new();
    }
    let target = match args.get("id").and_then(Value::as_i64) {
        Some(id) => id.to_string(),
        None => "latest".to_string(),
    };
    let pattern = if flag("force") {
        format!("{target} --force")
    } else {
        target
    };
    vec![Access::new("undo", pattern)]
}

fn execute(ctx: &CallContext, args: Map<String, Value>) -> anyhow::Result<ToolOutput> {
    let args: CheckpointArgs = match parse_args(args) {
        Ok(args) => args,
        Err(output) => return Ok(output),
    };
    let action = args.action.as_deref().unwrap_or("list");
    if matches!(action, "list" | "show" | "") {
        // A killed call's checkpoint is completed before it is listed.
        let _ = crate::checkpoints::recovery::complete_dead(ctx.session);
    }
    match action {
        "list" | "" => list(ctx, &args),
        "show" => match args.id {
            Some(id) => show(ctx, id, args.path.as_deref()),
            None => Ok(ToolOutput::error("id is required for show")),
        },
        "undo" if args.dry_run == Some(true) => dry_run(ctx, args.id, args.force == Some(true)),
        "undo" => revert(ctx, args.id, args.force == Some(true)),
        other => Ok(ToolOutput::error(format!(
            "Unknown action: {other} (list, show or undo)"
        ))),
    }
}

fn list(ctx: &CallContext, args: &CheckpointArgs) -> anyhow::Result<ToolOutput> {
    let session = ctx.session;
    let limit = args.limit.unwrap_or(report::PAGE as u64);
    let limit = usize::try_from(limit).unwrap_or(usize::MAX);
    let page = session
        .state
        .read(|store| report::page(store, args.session_id.as_deref(), args.before, limit))?
        .unwrap_or_default();
    let next = |id: i64| format!("action list with before: {id}");
    let text = report::listing_text(&record::blobs(session), &page, next)
        .trim_end()
        .to_string();
    let array: Vec<Value> = page
        .entries
        .iter()
        .map(|(row, changes)| report::entry_json(row, changes))
        .collect();
    let mut output = ToolOutput::text(text);
    output
        .metadata
        .insert("checkpoints".into(), Value::Array(array));
    Ok(output)
}

fn show(ctx: &CallContext, id: i64, path: Option<&str>) -> anyhow::Result<ToolOutput> {
    let session = ctx.session;
    let found = session
        .state
        .read(|store| {
            Ok(match store.checkpoint(id)? {
                Some(row) => Some((row, store.checkpoint_changes(id)?)),
                None => None,
            })
        })?
        .flatten();
    let Some((row, changes)) = found else {
        return Ok(ToolOutput::error(format!(
            "no checkpoint {id} (action list shows them)"
        )));
    };
    let blobs = record::blobs(session);
    let text = match report::show_text(&blobs, &Secrets::new(session), &row, &changes, path) {
        Ok(text) => text,
        Err(why) => return Ok(ToolOutput::error(why)),
    };
    let mut output = ToolOutput::text(text);
    output
        .metadata
        .insert("entry".into(), report::entry_json(&row, &changes));
    Ok(output)
}

fn dry_run(ctx: &CallContext, id: Option<i64>, force: bool) -> anyhow::Result<ToolOutput> {
    let plan = match undo::plan_settled(ctx.session, id) {
        Ok(plan) => plan,
        Err(err) => return Ok(ToolOutput::error(format!("{err:#}"))),
    };
    let mut output = ToolOutput::text(undo::dry_run_text(&plan));
    output.is_error = !plan.conflicts.is_empty() && !force;
    let mut meta = undo::plan_json(&plan);
    meta["dry_run"] = json!(true);
    output.metadata.insert("undo".into(), meta);
    Ok(output)
}

fn revert(ctx: &CallContext, id: Option<i64>, force: bool) -> anyhow::Result<ToolOutput> {
    match undo::undo(ctx.session, id, force) {
        Err(err) => Ok(ToolOutput::error(format!("{err:#}"))),
        Ok(Outcome::Refused(plan)) => {
            let mut output = ToolOutput::error(undo::refused_text(&plan));
            output
                .metadata
                .insert("undo".into(), undo::plan_json(&plan));
            Ok(output)
        }
        Ok(Outcome::Done(plan, undo_id)) => {
            let mut output = ToolOutput::text(undo::done_text(&plan, undo_id));
            output
                .metadata
                .insert("undo".into(), undo::plan_json(&plan));
            if let Some(undo_id) = undo_id {
                output.metadata.insert(
                    "checkpoint".into(),
                    json!({"id": undo_id, "files": plan.steps.len()}),
                );
            }
            Ok(output)
        }
    }
}
