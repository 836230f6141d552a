//! Tool definitions in each provider's shape (`tinytool tools --format F`).
//!
//! | format | one element |
//! |---|---|
//! | `openai` | `{"type": "function", "function": {"name", "description", "parameters"}}` |
//! | `anthropic` | `{"name", "description", "input_schema"}` |
//! | `gemini` | `{"name", "description", "parameters"}` (OpenAPI subset: no `additionalProperties`, no `$schema`) |
//! | `mcp` | `{"name", "description", "inputSchema", "annotations"}` |
//! | `json` | `{"name", "summary", "description", "permission", "parameters"}` |

use serde_json::{Map, Value, json};

use crate::tool::ToolDef;

/// The formats of `tinytool tools`.
pub const FORMATS: &[&str] = &["openai", "anthropic", "gemini", "mcp", "json"];

/// One JSON array of the tools in `format` (one of [`FORMATS`]).
pub fn render(tools: &[&ToolDef], format: &str) -> Value {
    Value::Array(tools.iter().map(|def| render_one(def, format)).collect())
}

fn render_one(def: &ToolDef, format: &str) -> Value {
    let parameters = (def.schema)();
    match format {
        "anthropic" => json!({
            "name": def.name,
            "description": def.description,
            "input_schema": parameters,
        }),
        "gemini" => json!({
            "name": def.name,
            "description": def.description,
            "parameters": gemini_schema(parameters),
        }),
        "mcp" => json!({
            "name": def.name,
            "description": def.description,
            "inputSchema": parameters,
            "annotations": mcp_annotations(def.name),
        }),
        "json" => json!({
            "name": def.name,
            "summary": def.summary,
            "description": def.description,
            "permission": def.permission,
            "parameters": parameters,
        }),
        _ => json!({
            "type": "function",
            "function": {
                "name": def.name,
                "description": def.description,
                "parameters": parameters,
            },
        }),
    }
}

/// MCP tool annotations: hints about what a tool does to the world.
pub fn mcp_annotations(name: &str) -> Value {
    let mut hints = Map::new();
    hints.insert("title".into(), Value::String(name.to_string()));
    match name {
        "read" | "grep" | "glob" | "skill" | "question" => {
            hints.insert("readOnlyHint".into(), Value::Bool(true));
        }
        "bash" | "write" | "edit" | "apply_patch" => {
            hints.insert("destructiveHint".into(), Value::Bool(true));
        }
        "webfetch" | "websearch" => {
            hints.insert("openWorldHint".into(), Value::Bool(true));
        }
        _ => {}
    }
    Value::Object(hints)
}

/// Removes what Gemini's OpenAPI subset does not accept, at every depth.
fn gemini_schema(value: Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.into_iter()
                .filter(|(k, _)| k != "additionalProperties" && k != "$schema")
                .map(|(k, v)| (k, gemini_schema(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.into_iter().map(gemini_schema).collect()),
        other => other,
    }
}
