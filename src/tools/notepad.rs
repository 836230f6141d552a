//! `notepad`: a per-session key/value scratch space in the state database.
//! At most 50 notes of at most 10 KiB each; updating an existing key is always allowed.

use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::schema;
use crate::session::CallContext;
use crate::tool::{ToolDef, ToolDoc, ToolOutput, parse_args};

/// Most notes a session keeps.
const MAX_ENTRIES: usize = 50;
/// Largest note, in bytes.
const MAX_VALUE_BYTES: usize = 10 * 1024;

/// The `notepad` tool's definition.
pub fn definition() -> ToolDef {
    ToolDef {
        name: "notepad",
        summary: "Keep notes for the session",
        description: "A scratch space for the session that survives between calls: write a \
            note under a key, read it back, list the keys, or delete one. At most 50 notes of \
            10 KiB each.",
        permission: "",
        schema: parameters,
        execute,
        access: None,
        precheck: None,
        checkpoint: None,
        needs: None,
        after_changes: None,
        doc: ToolDoc {
            output: "write: `Saved note \"KEY\" (N bytes)`; read: the note; list: `N notes:` then \
                `  KEY: first line` per note (`No notes stored.` when empty); delete: \
                `Deleted note \"KEY\"`.",
            errors: "A key with no note (read, delete: `key \"KEY\" not found`, an error), a missing key or content for the action, a note over 10 KiB, a full notepad.",
            examples: &[
                (
                    "Save a note",
                    "tinytool notepad --action write --key plan --content 'step 1: tests'",
                ),
                ("List the notes", "tinytool notepad --action list"),
            ],
        },
    }
}

fn parameters() -> Value {
    schema::object(
        json!({
            "action": {"type": "string", "enum": ["read", "write", "list", "delete"], "description": "What to do."},
            "key": {"type": "string", "description": "The note's key (read, write, delete)."},
            "content": {"type": "string", "description": "The note's text (write)."}
        }),
        &["action"],
    )
}

/// The error for a key the session has no note under.
fn not_found(key: &str) -> ToolOutput {
    ToolOutput::error(format!(
        "key \"{key}\" not found; `notepad --action list` shows the keys"
    ))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct NotepadArgs {
    action: String,
    key: Option<String>,
    content: Option<String>,
}

fn execute(ctx: &CallContext, args: Map<String, Value>) -> anyhow::Result<ToolOutput> {
    let args: NotepadArgs = match parse_args(args) {
        Ok(args) => args,
        Err(output) => return Ok(output),
    };
    let session = &ctx.session.id;
    let key = args.key.as_deref().map(str::trim).filter(|k| !k.is_empty());
    let needs_key =
        |action: &str| ToolOutput::error(format!("key is required for {action}: name the note"));
    match args.action.as_str() {
        "write" => {
            let Some(key) = key else {
                return Ok(needs_key("write"));
            };
            let Some(content) = args.content else {
                return Ok(ToolOutput::error(
                    "content is required for write: give the note's text",
                ));
            };
            if content.len() > MAX_VALUE_BYTES {
                return Ok(ToolOutput::error(format!(
                    "note too large: {} bytes (max {MAX_VALUE_BYTES}); shorten it or split it under several keys",
                    content.len()
                )));
            }
            let stored = ctx
                .session
                .state
                .write(|store| store.set_note(session, key, &content, MAX_ENTRIES))?;
            if !stored {
                return Ok(ToolOutput::error(format!(
                    "notepad is full ({MAX_ENTRIES} notes); delete a note first or update an existing key"
                )));
            }
            Ok(ToolOutput::text(format!(
                "Saved note \"{key}\" ({} bytes)",
                content.len()
            )))
        }
        "read" => {
            let Some(key) = key else {
                return Ok(needs_key("read"));
            };
            let note = ctx
                .session
                .state
                .read(|store| store.note(session, key))?
                .flatten();
            // A missing note is an error, so a caller that checks only the status (exit 1,
            // `is_error`) cannot mistake the message for the note's text.
            Ok(note.map_or_else(|| not_found(key), ToolOutput::text))
        }
        "delete" => {
            let Some(key) = key else {
                return Ok(needs_key("delete"));
            };
            let deleted = ctx
                .session
                .state
                .write(|store| store.delete_note(session, key))?;
            Ok(if deleted {
                ToolOutput::text(format!("Deleted note \"{key}\""))
            } else {
                not_found(key)
            })
        }
        _ => {
            let notes = ctx
                .session
                .state
                .read(|store| store.notes(session))?
                .unwrap_or_default();
            if notes.is_empty() {
                return Ok(ToolOutput::text("No notes stored."));
            }
            let mut text = format!("{} notes:", notes.len());
            for note in &notes {
                let first = note.content.lines().next().unwrap_or("");
                let shown = if first.chars().count() > 80 {
                    format!("{}...", first.chars().take(77).collect::<String>())
                } else {
                    first.to_string()
                };
                text.push_str(&format!("\n  {}: {shown}", note.key));
            }
            Ok(ToolOutput::text(text).with("count", notes.len()))
        }
    }
}
