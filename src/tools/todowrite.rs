//! `todowrite`: replaces the session's todo list.
//!
//! Every item is validated first and all problems are reported together in the
//! reference's words; then the whole list replaces the stored one in one transaction, and
//! `session.todos.updated` is published. `tinytool state todos` prints the list.

use serde_json::{Map, Value, json};

use crate::schema;
use crate::session::CallContext;
use crate::state::Todo;
use crate::tool::{ToolDef, ToolDoc, ToolOutput};

const STATUSES: &[&str] = &["pending", "in_progress", "done", "cancelled"];
const PRIORITIES: &[&str] = &["high", "normal", "low"];

/// The `todowrite` tool's definition.
pub fn definition() -> ToolDef {
    ToolDef {
        name: "todowrite",
        summary: "Replace the session's todo list",
        description: "Replace the session's todo list with the given items. Each item has \
            content, status (pending, in_progress, done, cancelled) and priority (high, normal, low; \
            default normal). \
            Send the whole list every time: it replaces what was stored. An empty list clears it.",
        permission: "edit",
        schema: parameters,
        execute,
        access: None,
        precheck: None,
        checkpoint: None,
        needs: None,
        after_changes: None,
        doc: ToolDoc {
            output: "`Successfully updated N todos for session ID`. metadata: count.",
            errors: "`Validation errors:` followed by one line per problem, e.g. \
                `todo[0]: content is required`, `todo[1]: invalid status \"x\" (must be \
                pending/in_progress/done/cancelled)`, `todo[2]: invalid priority \"x\" (must be high/normal/low)`.",
            examples: &[
                (
                    "Record two todos",
                    "tinytool todowrite --todos '[{\"content\":\"write tests\",\"status\":\"in_progress\",\"priority\":\"high\"},{\"content\":\"docs\",\"status\":\"pending\",\"priority\":\"low\"}]'",
                ),
                (
                    "Record one todo (priority defaults to normal)",
                    "tinytool todowrite --todos '[{\"content\":\"docs\",\"status\":\"pending\"}]'",
                ),
            ],
        },
    }
}

fn parameters() -> Value {
    schema::object(
        json!({
            "todos": {
                "type": "array",
                "description": "The complete todo list, in order.",
                "items": {
                    "type": "object",
                    "properties": {
                        "content": {"type": "string", "description": "What to do."},
                        "status": {"type": "string", "enum": STATUSES},
                        "priority": {"type": "string", "enum": PRIORITIES}
                    },
                    "required": ["content", "status"],
                    "additionalProperties": false
                }
            }
        }),
        &["todos"],
    )
}

fn execute(ctx: &CallContext, args: Map<String, Value>) -> anyhow::Result<ToolOutput> {
    let items = match args.get("todos") {
        Some(Value::Array(items)) => items.as_slice(),
        _ => &[],
    };
    let (todos, problems) = validate(items);
    if !problems.is_empty() {
        return Ok(ToolOutput::error(format!(
            "Validation errors:\n{}",
            problems.join("\n")
        )));
    }
    let session = &ctx.session.id;
    ctx.session
        .state
        .write(|store| store.replace_todos(session, &todos))?;
    let mut props = Map::new();
    props.insert("count".into(), json!(todos.len()));
    ctx.publish("session.todos.updated", props);
    Ok(ToolOutput::text(format!(
        "Successfully updated {} todos for session {session}",
        todos.len()
    ))
    .with("count", todos.len()))
}

/// Checks every item, collecting all problems in order (per item: content, status,
/// priority, unknown fields).
fn validate(items: &[Value]) -> (Vec<Todo>, Vec<String>) {
    let mut todos = Vec::new();
    let mut problems = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let Some(fields) = item.as_object() else {
            problems.push(format!(
                "todo[{i}]: must be an object with content, status and priority"
            ));
            continue;
        };
        let text = |key: &str| {
            fields
                .get(key)
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string()
        };
        let (content, status) = (text("content"), text("status"));
        // Priority is optional (aliases fill it in before the schema; a direct caller of
        // this function may still leave it out).
        let priority = match text("priority") {
            p if p.is_empty() && !fields.contains_key("priority") => "normal".to_string(),
            p => p,
        };
        if content.trim().is_empty() {
            problems.push(format!("todo[{i}]: content is required"));
        }
        if !STATUSES.contains(&status.as_str()) {
            problems.push(format!(
                "todo[{i}]: invalid status \"{status}\" (must be pending/in_progress/done/cancelled)"
            ));
        }
        if !PRIORITIES.contains(&priority.as_str()) {
            problems.push(format!(
                "todo[{i}]: invalid priority \"{priority}\" (must be high/normal/low)"
            ));
        }
        for key in fields.keys() {
            if !["content", "status", "priority"].contains(&key.as_str()) {
                problems.push(format!(
                    "todo[{i}]: unknown field \"{key}\" (fields are content, status, priority)"
                ));
            }
        }
        todos.push(Todo {
            content,
            status,
            priority,
        });
    }
    (todos, problems)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn problems_are_collected_per_item_in_order() {
        let items = vec![
            json!({"content": "", "status": "bad", "priority": "bad"}),
            json!({"content": "ok", "status": "done", "priority": "low"}),
            json!({"content": "x", "status": "pending", "priority": "critical", "id": 3}),
        ];
        let (_, problems) = validate(&items);
        assert_eq!(
            problems,
            [
                "todo[0]: content is required",
                "todo[0]: invalid status \"bad\" (must be pending/in_progress/done/cancelled)",
                "todo[0]: invalid priority \"bad\" (must be high/normal/low)",
                "todo[2]: invalid priority \"critical\" (must be high/normal/low)",
                "todo[2]: unknown field \"id\" (fields are content, status, priority)",
            ]
        );
        assert!(validate(&[]).1.is_empty());
    }
}
