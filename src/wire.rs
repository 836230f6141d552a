//! The call envelopes `tinytool exec` accepts, turned into a [`ToolCall`].
//!
//! ```text
//! OpenAI, flat:      {"id": "call_1", "name": "read", "arguments": "{\"file_path\":\"a.rs\"}"}
//! OpenAI, nested:    {"id": "call_1", "type": "function",
//!                     "function": {"name": "read", "arguments": "{…}" | {…}}}
//! OpenAI Responses:  {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "read", "arguments": "{…}"}
//! Anthropic:         {"type": "tool_use", "id": "toolu_1", "name": "read", "input": {…}}
//! Gemini:            {"functionCall": {"id": "c1", "name": "read", "args": {…}}}, the same in
//!                    snake_case ({"function_call": …}, as the Python SDK dumps a `Part`, its
//!                    other fields null), or the bare {"id": …, "name": …, "args": {…}}
//! ```
//!
//! `arguments` may be a JSON string (repaired by the registry when malformed) or an object;
//! missing arguments mean `{}`. Other keys of the envelope are ignored. The call's id is
//! echoed in the result: `call_id` when the envelope has one (a Responses item's `id` names
//! the item, and the function_call_output must quote `call_id`), else `id`, else the `id`
//! inside the wrapped call (a Gemini `Part`'s `functionCall.id`).
//!
//! The envelope also names the shape a result's images come back in ([`shape_of`]): an
//! image read answers an Anthropic call with an Anthropic image block, a Gemini one with
//! an `inlineData` part (see `media`).

use std::io::BufRead;

use serde_json::{Map, Value};

use crate::media::Shape;
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
#[cfg(test)]
pub fn parse_call(text: &str) -> Result<ToolCall, (Option<Value>, String)> {
    parse_envelope(text).map(|(call, _)| call)
}

/// Parses one call envelope from JSON text, with the receiver shape its envelope names
/// (the shape the result's images are given in, see [`shape_of`]).
pub fn parse_envelope(text: &str) -> Result<(ToolCall, Shape), (Option<Value>, String)> {
    let value: Value = serde_json::from_str(text.trim()).map_err(|err| {
        (
            None,
            format!("Invalid tool call: not a JSON object ({err}). {SHAPES}"),
        )
    })?;
    let shape = shape_of(&value);
    parse_call_value(value).map(|call| (call, shape))
}

const SHAPES: &str = "Send {\"name\": TOOL, \"arguments\": {...}} (OpenAI), \
{\"type\": \"function\", \"function\": {\"name\": TOOL, \"arguments\": ...}} (Chat Completions), \
{\"type\": \"function_call\", \"call_id\": ID, \"name\": TOOL, \"arguments\": ...} (Responses), \
{\"type\": \"tool_use\", \"name\": TOOL, \"input\": {...}} (Anthropic) \
or {\"functionCall\": {\"name\": TOOL, \"args\": {...}}} (Gemini).";

/// The keys that wrap a call, in the order they are looked for: OpenAI's `function`,
/// Gemini's `functionCall` and its snake_case spelling.
const WRAPPERS: [&str; 3] = ["function", "functionCall", "function_call"];

/// The receiver shape an envelope names: Anthropic for `tool_use` (or an `input`),
/// OpenAI Responses for `function_call` items (or a `call_id`), Gemini for a
/// `functionCall` part or an `args` object (snake_case for `function_call`), else OpenAI
/// Chat Completions.
pub fn shape_of(envelope: &Value) -> Shape {
    let present = |key: &str| envelope.get(key).is_some_and(|v| !v.is_null());
    let kind = envelope.get("type").and_then(Value::as_str);
    if kind == Some("tool_use") || present("input") {
        Shape::Anthropic
    } else if kind == Some("function_call") || present("call_id") {
        Shape::OpenAiResponses
    } else if present("functionCall") {
        Shape::Gemini
    } else if present("function_call") {
        Shape::GeminiSnake
    } else if present("args") && !present("function") {
        Shape::Gemini
    } else {
        Shape::OpenAiChat
    }
}

/// A usable call id: a string or a number.
fn usable_id(id: Option<Value>) -> Option<Value> {
    id.filter(|id| id.is_string() || id.is_number())
}

/// Parses one call envelope from a JSON value.
fn parse_call_value(value: Value) -> Result<ToolCall, (Option<Value>, String)> {
    let Value::Object(mut envelope) = value else {
        return Err((
            None,
            format!("Invalid tool call: expected a JSON object. {SHAPES}"),
        ));
    };
    let call_id = usable_id(envelope.remove("call_id"));
    let item_id = usable_id(envelope.remove("id"));
    let mut id = call_id.or(item_id);
    // The first wrapper that is there and not null (a dumped Gemini `Part` carries every
    // field, most of them null).
    let wrapper = WRAPPERS
        .iter()
        .find_map(|key| envelope.remove(*key).filter(|v| !v.is_null()));
    let mut inner = match wrapper {
        Some(Value::Object(function)) => function,
        Some(_) => {
            return Err((
                id,
                format!("Invalid tool call: `function` must be an object. {SHAPES}"),
            ));
        }
        None => envelope,
    };
    // Gemini puts the id inside the call it wraps: `{"functionCall": {"id", ...}}`.
    if id.is_none() {
        id = usable_id(inner.remove("id"));
    }
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
        .find_map(|key| inner.remove(*key).filter(|v| !v.is_null()))
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
    fn a_gemini_part_keeps_the_id_of_the_call_it_wraps() {
        for text in [
            r#"{"functionCall":{"id":"g-1","name":"glob","args":{"pattern":"*"}},"thoughtSignature":"c2ln"}"#,
            r#"{"function_call":{"id":"g-1","name":"glob","args":{"pattern":"*"}},"inline_data":null,"text":null,"thought":null}"#,
            r#"{"id":"g-1","name":"glob","args":{"pattern":"*"}}"#,
        ] {
            let (call, shape) = parse_envelope(text).unwrap();
            assert_eq!(call.id, Some(json!("g-1")), "{text}");
            assert_eq!(call.name, "glob");
            assert_eq!(call.arguments, Arguments::Value(json!({"pattern": "*"})));
            assert!(
                matches!(shape, Shape::Gemini | Shape::GeminiSnake),
                "{text}"
            );
        }
        // An outer id (OpenAI's nested shape) still wins over none inside.
        let (call, shape) = parse_envelope(
            r#"{"id":"o","type":"function","function":{"name":"glob","arguments":"{}"}}"#,
        )
        .unwrap();
        assert_eq!((call.id, shape), (Some(json!("o")), Shape::OpenAiChat));
        let (_, shape) =
            parse_envelope(r#"{"type":"tool_use","id":"t","name":"read","input":{}}"#).unwrap();
        assert_eq!(shape, Shape::Anthropic);
        let (_, shape) = parse_envelope(
            r#"{"type":"function_call","call_id":"c","name":"read","arguments":"{}"}"#,
        )
        .unwrap();
        assert_eq!(shape, Shape::OpenAiResponses);
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
