//! Tool definitions in each provider's shape (`tinytool tools --format F`).
//!
//! | format | one element |
//! |---|---|
//! | `openai` | `{"type": "function", "function": {"name", "description", "parameters"}}` (with `--strict`: `"strict": true` and a strict schema, see [`strict_schema`]) |
//! | `openai-responses` | `{"type": "function", "name", "description", "parameters"}` (the Responses API's flat shape; `--strict` as for `openai`) |
//! | `anthropic` | `{"name", "description", "input_schema"}` (with `--strict`: `"strict": true` and a schema under Anthropic's rules, see [`anthropic_strict_schema`]) |
//! | `gemini` | `{"name", "description", "parameters"}` (OpenAPI subset: no `additionalProperties`, no `$schema`) |
//! | `mcp` | `{"name", "title", "description", "inputSchema", "outputSchema", "annotations"}` (see `mcp::results`) |
//! | `json` | `{"name", "summary", "description", "permission", "parameters"}` |

use serde_json::{Map, Value, json};

use crate::tool::ToolDef;

/// The formats of `tinytool tools`.
pub const FORMATS: &[&str] = &[
    "openai",
    "openai-responses",
    "anthropic",
    "gemini",
    "mcp",
    "json",
];

/// One JSON array of the tools in `format` (one of [`FORMATS`]); `strict` applies to
/// `openai`, `openai-responses` and `anthropic`. `describe` gives each tool's description
/// as this session shows it ([`crate::registry::description`]).
pub fn render(
    tools: &[&ToolDef],
    format: &str,
    strict: bool,
    describe: &dyn Fn(&ToolDef) -> String,
) -> Value {
    Value::Array(
        tools
            .iter()
            .map(|def| render_one(def, &describe(def), format, strict))
            .collect(),
    )
}

fn render_one(def: &ToolDef, description: &str, format: &str, strict: bool) -> Value {
    let parameters = (def.schema)();
    match format {
        "openai" if strict => json!({
            "type": "function",
            "function": {
                "name": def.name,
                "description": description,
                "parameters": strict_schema(parameters),
                "strict": true,
            },
        }),
        "openai-responses" if strict => json!({
            "type": "function",
            "name": def.name,
            "description": description,
            "parameters": strict_schema(parameters),
            "strict": true,
        }),
        "openai-responses" => json!({
            "type": "function",
            "name": def.name,
            "description": description,
            "parameters": parameters,
        }),
        "anthropic" if strict => json!({
            "name": def.name,
            "description": description,
            "input_schema": anthropic_strict_schema(parameters),
            "strict": true,
        }),
        "anthropic" => json!({
            "name": def.name,
            "description": description,
            "input_schema": parameters,
        }),
        "gemini" => {
            // Gemini rejects an object schema without properties, so a tool without
            // parameters declares none at all.
            let parameters = gemini_schema(parameters);
            let empty = parameters
                .get("properties")
                .and_then(Value::as_object)
                .is_none_or(Map::is_empty);
            if empty {
                json!({"name": def.name, "description": description})
            } else {
                json!({"name": def.name, "description": description, "parameters": parameters})
            }
        }
        "mcp" => crate::mcp::results::tool_entry(def, description),
        "json" => json!({
            "name": def.name,
            "summary": def.summary,
            "description": description,
            "permission": def.permission,
            "parameters": parameters,
        }),
        _ => json!({
            "type": "function",
            "function": {
                "name": def.name,
                "description": description,
                "parameters": parameters,
            },
        }),
    }
}

/// Anthropic's strict tool use: every object closed (`additionalProperties: false`),
/// optional properties stay optional, numeric bounds (unsupported there) moved into the
/// description, and a free-form map (webfetch `headers`) sent as a JSON-encoded string,
/// which the argument checks parse back. Applies at every depth.
fn anthropic_strict_schema(schema: Value) -> Value {
    let Value::Object(mut map) = schema else {
        return schema;
    };
    let kind = map
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let description = map
        .get("description")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    if kind == "object" && !map.contains_key("properties") {
        let text = format!("{description} A JSON object, encoded as a string.");
        return json!({"type": "string", "description": text.trim()});
    }
    let mut notes = Vec::new();
    for (key, word) in [("minimum", "at least"), ("maximum", "at most")] {
        if let Some(bound) = map.remove(key) {
            notes.push(format!("{word} {bound}"));
        }
    }
    if !notes.is_empty() {
        let joined = format!("{description} ({}).", notes.join(", "));
        map.insert("description".into(), json!(joined.trim()));
    }
    if let Some(Value::Object(properties)) = map.remove("properties") {
        let properties: Map<String, Value> = properties
            .into_iter()
            .map(|(name, prop)| (name, anthropic_strict_schema(prop)))
            .collect();
        map.insert("properties".into(), Value::Object(properties));
        map.insert("additionalProperties".into(), json!(false));
    }
    if let Some(items) = map.remove("items") {
        map.insert("items".into(), anthropic_strict_schema(items));
    }
    Value::Object(map)
}

/// OpenAI's strict mode: every object closed (`additionalProperties: false`) with every
/// property required, optional properties nullable (`["T", "null"]`, enums with `null`),
/// numeric bounds moved into the description, and free-form maps (an object with only
/// `additionalProperties`, like webfetch `headers`) sent as a JSON-encoded string, which
/// the argument checks parse back. Applies at every depth.
fn strict_schema(schema: Value) -> Value {
    strict_node(schema, true)
}

fn strict_node(node: Value, required: bool) -> Value {
    let Value::Object(mut map) = node else {
        return node;
    };
    let kind = map
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let mut notes = Vec::new();
    for (key, word) in [("minimum", "at least"), ("maximum", "at most")] {
        if let Some(bound) = map.remove(key) {
            notes.push(format!("{word} {bound}"));
        }
    }
    map.remove("default");
    if kind == "object" && !map.contains_key("properties") {
        // A free-form map: strict mode cannot express it, so it travels as JSON text.
        let description = map
            .get("description")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let mut text = Map::new();
        text.insert("type".into(), json!("string"));
        text.insert(
            "description".into(),
            json!(
                format!("{description} A JSON object, encoded as a string.")
                    .trim()
                    .to_string()
            ),
        );
        return nullable(Value::Object(text), required);
    }
    if kind == "object" {
        let properties = map.remove("properties").and_then(|p| match p {
            Value::Object(p) => Some(p),
            _ => None,
        });
        let was_required: Vec<String> = map
            .get("required")
            .and_then(Value::as_array)
            .map(|r| {
                r.iter()
                    .filter_map(|v| v.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default();
        let mut strict_props = Map::new();
        for (name, prop) in properties.unwrap_or_default() {
            let is_required = was_required.contains(&name);
            strict_props.insert(name, strict_node(prop, is_required));
        }
        let names: Vec<Value> = strict_props.keys().map(|k| json!(k)).collect();
        map.insert("properties".into(), Value::Object(strict_props));
        map.insert("required".into(), Value::Array(names));
        map.insert("additionalProperties".into(), json!(false));
    }
    if kind == "array"
        && let Some(items) = map.remove("items")
    {
        map.insert("items".into(), strict_node(items, true));
    }
    if !notes.is_empty() {
        let description = map
            .get("description")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let joined = format!("{description} ({}).", notes.join(", "));
        map.insert("description".into(), json!(joined.trim().to_string()));
    }
    nullable(Value::Object(map), required)
}

/// Makes an optional property nullable: its type becomes `[T, "null"]` and an enum gains
/// `null`.
fn nullable(node: Value, required: bool) -> Value {
    let Value::Object(mut map) = node else {
        return node;
    };
    if required {
        return Value::Object(map);
    }
    if let Some(Value::String(kind)) = map.get("type").cloned() {
        map.insert("type".into(), json!([kind, "null"]));
    }
    if let Some(Value::Array(values)) = map.get_mut("enum")
        && !values.contains(&Value::Null)
    {
        values.push(Value::Null);
    }
    Value::Object(map)
}

/// Removes what Gemini's OpenAPI subset does not accept, at every depth: no
/// `additionalProperties` or `$schema`, no empty `required`, and no object without
/// properties — a free-form map (webfetch `headers`) travels as a JSON-encoded string,
/// which the argument checks parse back.
fn gemini_schema(value: Value) -> Value {
    let Value::Object(map) = value else {
        return value;
    };
    let free_form = map.get("type").and_then(Value::as_str) == Some("object")
        && map
            .get("properties")
            .and_then(Value::as_object)
            .is_none_or(Map::is_empty)
        && map.contains_key("additionalProperties");
    if free_form {
        let description = map.get("description").and_then(Value::as_str).unwrap_or("");
        let text = format!("{description} A JSON object, encoded as a string.");
        return json!({"type": "string", "description": text.trim()});
    }
    let mut out = Map::new();
    for (key, value) in map {
        match key.as_str() {
            "additionalProperties" | "$schema" => {}
            "required" if value.as_array().is_some_and(Vec::is_empty) => {}
            "properties" => {
                let props = match value {
                    Value::Object(props) => props
                        .into_iter()
                        .map(|(name, prop)| (name, gemini_schema(prop)))
                        .collect(),
                    _ => Map::new(),
                };
                out.insert(key, Value::Object(props));
            }
            _ => {
                out.insert(key, gemini_schema_in(value));
            }
        }
    }
    Value::Object(out)
}

/// Walks into arrays and nested schemas (`items`) of a Gemini schema.
fn gemini_schema_in(value: Value) -> Value {
    match value {
        Value::Object(_) => gemini_schema(value),
        Value::Array(items) => Value::Array(items.into_iter().map(gemini_schema_in).collect()),
        other => other,
    }
}
