//! `exit`: ends an `exec --jsonl` loop cleanly. Not served over MCP, where
//! no tool may end the server under its client.

use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::schema;
use crate::session::CallContext;
use crate::tool::{ToolDef, ToolDoc, ToolOutput, parse_args};

/// The `exit` tool's definition.
pub fn definition() -> ToolDef {
    ToolDef {
        name: "exit",
        summary: "End the session's tool loop",
        description: "Signal that the work is finished. Ends a persistent `exec --jsonl` \
            session after this call's result has been written.",
        permission: "",
        schema: parameters,
        execute,
        access: None,
        precheck: None,
        checkpoint: None,
        needs: None,
        after_changes: None,
        doc: ToolDoc {
            output: "`Exiting: REASON`. In `exec --jsonl`, no further calls are read (not served over MCP).",
            errors: "None.",
            examples: &[(
                "Finish a persistent session",
                "echo '{\"name\":\"exit\",\"arguments\":{\"reason\":\"done\"}}' | tinytool exec --jsonl",
            )],
        },
    }
}

fn parameters() -> Value {
    schema::object(
        json!({
            "reason": {"type": "string", "description": "Why the work ends (default \"task complete\")."}
        }),
        &[],
    )
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ExitArgs {
    reason: Option<String>,
}

fn execute(ctx: &CallContext, args: Map<String, Value>) -> anyhow::Result<ToolOutput> {
    let args: ExitArgs = match parse_args(args) {
        Ok(args) => args,
        Err(output) => return Ok(output),
    };
    let reason = args.reason.unwrap_or_else(|| "task complete".to_string());
    let mut props = Map::new();
    props.insert("reason".into(), Value::String(reason.clone()));
    ctx.publish("app.exit", props);
    Ok(ToolOutput::text(format!("Exiting: {reason}")).with("exit", true))
}
