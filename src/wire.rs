//! The call envelopes `tinytool exec` accepts, turned into a [`ToolCall`].
//!
//! ```text
//! OpenAI, flat:      {"id": "call_1", "name": "read", "arguments": "{\"file_path\":\"a.rs\"}"}
//! OpenAI, nested:    {"id": "call_1", "type": "function",
//!                     "function": {"name": "read", "arguments": "{…}" | {…}}}
//! OpenAI Responses:  {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "read", "arguments": "{…}"}
//! Anthropic:         {"type": "tool_use", "id": "toolu_1", "name": "read", "input": {…}}
//! Gemini:            {"functionCall": {"name": "read", "args": {…}}}, the same in snake_case
//!                    ({"function_call": …}, as the Python SDK dumps a `Part`), or {"name": …, "args": {…}}
//! ```
//!
//! `arguments` may be a JSON string (repaired by the registry when malformed) or an object;
//! missing arguments mean `{}`. Other keys of the envelope are ignored. The call's id is
//! echoed in the result: `call_id` when the envelope has one (a Responses item's `id` names
//! the item, and the function_call_output must quote `call_id`), else `id`.

use std::io::BufRead;

use serde_json::{Map, Value};

use crate::registry::{Arguments, ToolCall};

/// Reads the next message of a line-per-message stream (`exec --jsonl`, MCP on stdio)
/// into `line`, skipping blank lines; `Ok(false)` at end of input.
pub fn read_message(reader: &mut impl BufRead, line: &mut Vec<u8>) -> std::io::Result<bool> {
    loop {
        line.clear();
        if reader.read_until(b'\n', line)? == 0 {
            return Ok(false);
        }
        if !line.iter().all(u8::is_ascii_whitespace) {
            return Ok(true);
        }
    }
}

/// Parses one call envelope from JSON text. The error says what shapes are accepted.
pub fn parse_call(text: &str) -> Result<ToolCall, (Option<Value>, String)> {
    let value: Value = serde_json::from_str(text.trim()).map_err(|err| {
        (
            None,
            format!("Invalid tool call: not a JSON object ({err}). {SHAPES}"),
        )
    })?;
    parse_call_value(value)
}

const SHAPES: &str = "Send {\"name\": TOOL, \"arguments\": {...}} (OpenAI), \
{\"type\": \"tool_use\", \"name\": TOOL, \"input\": {...}} (Anthropic) \
or {\"type\": \"function\", \"function\": {\"name\": TOOL, \"arguments\": ...}}.";

/// Parses one call envelope from a JSON value.
fn parse_call_value(value: Value) -> Result<ToolCall, (Option<Value>, String)> {
    let Value::Object(mut envelope) = value else {
        return Err((
            None,
            format!("Invalid tool call: expected a JSON object. {SHAPES}"),
        ));
    };
    let call_id = envelope.remove("call_id");
    let item_id = envelope.remove("id");
    let id = call_id
        .filter(|id| id.is_string() || id.is_number())
        .or_else(|| item_id.filter(|id| id.is_string() || id.is_number()));
    let mut inner = match envelope
        .remove("function")
        .or_else(|| envelope.remove("functionCall"))
        .or_else(|| envelope.remove("function_call"))
    {
        Some(Value::Object(function)) => function,
        Some(_) => {
            return Err((
                id,
                format!("Invalid tool call: `function` must be an object. {SHAPES}"),
            ));
        }
        None => envelope,
    };
    let name = match inner.remove("name") {
        Some(Value::String(name)) if !name.is_empty() => name,
        Some(_) => {
            return Err((
                id,
                format!("Invalid tool call: `name` must be a non-empty string. {SHAPES}"),
            ));
        }
        None => return Err((id, format!("Invalid tool call: missing `name`. {SHAPES}"))),
    };
    let arguments = match take_arguments(&mut inner) {
        None | Some(Value::Null) => Arguments::Value(Value::Object(Map::new())),
        Some(Value::String(text)) => Arguments::Text(text),
        Some(other) => Arguments::Value(other),
    };
    Ok(ToolCall {
        id,
        name,
        arguments,
    })
}

fn take_arguments(inner: &mut Map<String, Value>) -> Option<Value> {
    ["arguments", "input", "args", "parameters"]
        .iter()
        .find_map(|key| inner.remove(*key))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn openai_flat_with_string_arguments() {
        let call =
            parse_call(r#"{"id":"call_1","name":"read","arguments":"{\"file_path\":\"a\"}"}"#)
                .unwrap();
        assert_eq!(call.id, Some(json!("call_1")));
        assert_eq!(call.name, "read");
        assert_eq!(
            call.arguments,
            Arguments::Text(r#"{"file_path":"a"}"#.into())
        );
    }

    #[test]
    fn openai_nested_with_object_arguments() {
        let call = parse_call(r#"{"id":"c","type":"function","function":{"name":"read","arguments":{"file_path":"a"}}}"#).unwrap();
        assert_eq!(call.name, "read");
        assert_eq!(call.arguments, Arguments::Value(json!({"file_path": "a"})));
    }

    #[test]
    fn anthropic_tool_use() {
        let call = parse_call(
            r#"{"type":"tool_use","id":"toolu_1","name":"read","input":{"file_path":"a"}}"#,
        )
        .unwrap();
        assert_eq!(call.id, Some(json!("toolu_1")));
        assert_eq!(call.arguments, Arguments::Value(json!({"file_path": "a"})));
    }

    #[test]
    fn responses_and_gemini_shapes() {
        let call = parse_call(
            r#"{"type":"function_call","id":"fc_9","call_id":"x","name":"read","arguments":"{}"}"#,
        )
        .unwrap();
        assert_eq!(call.id, Some(json!("x")));
        let call =
            parse_call(r#"{"functionCall":{"name":"glob","args":{"pattern":"*"}}}"#).unwrap();
        assert_eq!(call.name, "glob");
        assert_eq!(call.id, None);
        let call =
            parse_call(r#"{"function_call":{"name":"glob","args":{"pattern":"*"}}}"#).unwrap();
        assert_eq!(call.name, "glob");
        assert_eq!(call.arguments, Arguments::Value(json!({"pattern": "*"})));
    }

    #[test]
    fn missing_arguments_are_empty() {
        let call = parse_call(r#"{"name":"plan_enter"}"#).unwrap();
        assert_eq!(call.arguments, Arguments::Value(json!({})));
    }

    #[test]
    fn malformed_envelopes_explain_the_shapes() {
        let (_, err) = parse_call("nonsense").unwrap_err();
        assert!(err.contains("Invalid tool call") && err.contains("tool_use"));
        let (id, err) = parse_call(r#"{"id":"k","arguments":{}}"#).unwrap_err();
        assert_eq!(id, Some(json!("k")));
        assert!(err.contains("missing `name`"));
    }
}
