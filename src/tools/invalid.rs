//! `invalid`: where malformed tool calls end up.
//!
//! The registry routes a call whose arguments cannot be repaired here, with the parse
//! error, the original tool name and the raw arguments. It always fails, telling the model
//! which call to retry. It is never listed by `tools` or MCP.

use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::schema;
use crate::session::CallContext;
use crate::tool::{ToolDef, ToolDoc, ToolOutput, parse_args};

/// The `invalid` tool's definition.
pub fn definition() -> ToolDef {
    ToolDef {
        name: crate::registry::INVALID,
        summary: "Report a malformed tool call (internal, never listed)",
        description: "Fallback for tool calls whose arguments were not valid JSON. \
            Always fails, naming the original tool and the parse error.",
        permission: "read",
        schema: parameters,
        execute,
        access: None,
        precheck: None,
        checkpoint: None,
        needs: None,
        after_changes: None,
        doc: ToolDoc {
            output: "Never succeeds.",
            errors: "`Tool call to \"NAME\" failed: the arguments were not valid JSON.` followed by \
                the parse error and a request to retry with valid JSON.",
            examples: &[(
                "What a model sees after sending broken arguments",
                "tinytool invalid --error 'unexpected EOF' --original-name read",
            )],
        },
    }
}

fn parameters() -> Value {
    schema::object(
        json!({
            "error": {"type": "string", "description": "The JSON parse error."},
            "original_name": {"type": "string", "description": "The tool the model tried to call."},
            "original_args": {"type": "string", "description": "The raw arguments it sent."}
        }),
        &["error", "original_name"],
    )
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct InvalidArgs {
    error: String,
    original_name: String,
    #[serde(default)]
    original_args: Option<String>,
}

fn execute(_ctx: &CallContext, args: Map<String, Value>) -> anyhow::Result<ToolOutput> {
    let args: InvalidArgs = match parse_args(args) {
        Ok(args) => args,
        Err(_) => {
            return Ok(ToolOutput::error(
                "Tool call had invalid JSON arguments. Please retry with valid JSON.",
            ));
        }
    };
    let mut output = ToolOutput::error(format!(
        "Tool call to {:?} failed: the arguments were not valid JSON.\nError: {}\n\
         Please retry with correctly formatted JSON arguments.",
        args.original_name, args.error
    ))
    .with("original_name", args.original_name);
    if let Some(raw) = args.original_args {
        output = output.with("original_args", raw);
    }
    Ok(output)
}
