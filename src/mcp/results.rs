//! How tools and their results look over MCP: the tool entries of `tools/list` (title,
//! annotations, `inputSchema`, `outputSchema`) and the `tools/call` result.
//!
//! A result says everything twice, so a client that reads only one half still gets it all:
//!
//! ```text
//! content            = [ text OUTPUT | image ] [ resource_link tinytool://output/NAME ]
//! structuredContent  = { "tool": NAME, "output": OUTPUT, "is_error": BOOL,
//!                        "truncated": BOOL, "metadata": { ... } }
//! isError            = is_error
//! ```
//!
//! `structuredContent` is the `exec` result object without its `id`, and validates against
//! the `outputSchema` every tool declares ([`output_schema`]). The `resource_link` is added
//! when the output was previewed and the whole output was kept in a spill file
//! (`metadata.full_output`, see `resources`).

use serde_json::{Map, Value, json};

use crate::registry::CallResult;
use crate::tool::ToolDef;

use super::resources;

/// The `tools/list` entry of one tool, with its description as the session shows it.
pub fn tool_entry(def: &ToolDef, description: &str) -> Value {
    let title = title(def.name);
    let mut annotations = annotations(def.name);
    annotations.insert("title".into(), json!(title));
    json!({
        "name": def.name,
        "title": title,
        "description": description,
        "inputSchema": (def.schema)(),
        "outputSchema": output_schema(),
        "annotations": Value::Object(annotations),
    })
}

/// The schema of every tool's `structuredContent`: the result object of `exec`.
fn output_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "tool": {"type": "string", "description": "The tool that ran."},
            "output": {"type": "string", "description": "What the model should see: the tool's output, or the error message (a head+tail preview when `truncated`)."},
            "is_error": {"type": "boolean", "description": "Whether the call failed."},
            "truncated": {"type": "boolean", "description": "Whether `output` is a preview of a longer output."},
            "metadata": {"type": "object", "description": "Structured facts about the call (tool-specific).", "additionalProperties": true},
        },
        "required": ["output", "is_error", "truncated", "metadata"],
        "additionalProperties": false,
    })
}

/// A human-readable title for a tool.
pub fn title(name: &str) -> &'static str {
    match name {
        "read" => "Read file",
        "write" => "Write file",
        "edit" => "Edit file",
        "apply_patch" => "Apply patch",
        "bash" => "Run shell command",
        "monitor" => "Monitor background command",
        "grep" => "Search file contents",
        "glob" => "Find files by name",
        "question" => "Ask the user",
        "webfetch" => "Fetch URL",
        "websearch" => "Search the web",
        "task" => "Run subagent",
        "todowrite" => "Update todo list",
        "report_findings" => "Report findings",
        "notepad" => "Session notepad",
        "plan_enter" => "Enter plan mode",
        "plan_exit" => "Leave plan mode",
        "skill" => "Run skill",
        "checkpoint" => "Checkpoints and undo",
        "exit" => "End session",
        "invalid" => "Malformed call",
        _ => "Tool",
    }
}

/// The four hints, each set explicitly (the protocol's defaults assume the worst: not
/// read-only, destructive, not idempotent, open world).
///
/// - read-only: reads files or asks; changes nothing in the project or the world;
/// - destructive: may overwrite or delete what exists (files, via commands);
/// - idempotent: repeating the call with the same arguments changes nothing more;
/// - open world: reaches beyond the project (network, arbitrary commands).
fn annotations(name: &str) -> Map<String, Value> {
    // (read-only, destructive, idempotent, open world)
    let (read_only, destructive, idempotent, open_world) = match name {
        "read" | "grep" | "glob" | "skill" => (true, false, true, false),
        "question" => (true, false, false, false),
        "webfetch" | "websearch" => (true, false, true, true),
        "write" => (false, true, true, false),
        "edit" | "apply_patch" => (false, true, false, false),
        "bash" | "monitor" | "task" => (false, true, false, true),
        // Session state only: the todo list or mode is replaced, nothing in the project.
        "todowrite" | "plan_enter" | "plan_exit" => (false, false, true, false),
        // Notes can be overwritten and deleted.
        "notepad" => (false, true, false, false),
        "report_findings" => (false, false, false, false),
        // Lists and shows change nothing, but an undo rewrites and removes files (never
        // a person's changes without `force`); repeating it walks further back.
        "checkpoint" => (false, true, false, false),
        _ => (false, true, false, true),
    };
    let mut hints = Map::new();
    hints.insert("readOnlyHint".into(), json!(read_only));
    hints.insert("destructiveHint".into(), json!(destructive));
    hints.insert("idempotentHint".into(), json!(idempotent));
    hints.insert("openWorldHint".into(), json!(open_world));
    hints
}

/// A call result in MCP's shape; `links` says whether the client's revision knows
/// `resource_link` content (2025-06-18 and later).
pub fn call_result(result: &CallResult, links: bool) -> Value {
    let image = result
        .metadata
        .get("mime")
        .and_then(Value::as_str)
        .filter(|m| m.starts_with("image/"))
        .and_then(|mime| {
            let data = result
                .output
                .strip_prefix(&format!("data:{mime};base64,"))?;
            Some(json!({"type": "image", "data": data, "mimeType": mime}))
        });
    let mut content = vec![image.unwrap_or_else(|| json!({"type": "text", "text": result.output}))];
    if links && let Some(link) = resources::link_for(&result.metadata) {
        content.push(link);
    }
    json!({
        "content": content,
        "isError": result.is_error,
        "structuredContent": structured(result),
    })
}

/// The `structuredContent` of a result (see the module doc).
pub fn structured(result: &CallResult) -> Value {
    json!({
        "tool": result.tool,
        "output": result.output,
        "is_error": result.is_error,
        "truncated": result.truncated,
        "metadata": Value::Object(result.metadata.clone()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_tool_has_a_title_and_four_explicit_hints() {
        for def in crate::tools::documented().all() {
            assert_ne!(title(def.name), "Tool", "{} has no title", def.name);
            let hints = annotations(def.name);
            for key in [
                "readOnlyHint",
                "destructiveHint",
                "idempotentHint",
                "openWorldHint",
            ] {
                assert!(hints[key].is_boolean(), "{}: {key}", def.name);
            }
            // A read-only tool cannot be destructive.
            if hints["readOnlyHint"] == true {
                assert_eq!(hints["destructiveHint"], false, "{}", def.name);
            }
        }
    }
}
