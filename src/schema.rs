//! Tool parameter schemas: the subset of JSON Schema tinytool's tools are described with,
//! and the checks every call's arguments pass before a tool sees them.
//!
//! A tool's schema is an object schema whose `properties` are, in order, the tool's
//! parameters. Each property has a `type` (`string`, `integer`, `number`, `boolean`, `array`
//! or `object`) and may have `enum`, `minimum`, `maximum`, `items` (arrays) and
//! `additionalProperties` (maps). The checks of [`normalize`] are the contract every entry
//! point shares:
//! - the arguments are an object (`null` and empty mean `{}`);
//! - an unknown key is an error that names the valid ones;
//! - `null` for a parameter means it is absent (OpenAI strict mode sends it);
//! - every required parameter is present;
//! - values have their parameter's type; the text of a JSON array or object where one is
//!   wanted is parsed, and numbers or booleans sent as strings are converted, each such
//!   repair being listed;
//! - enum values and numeric bounds of top-level parameters hold.
//!
//! The inside of array items and object values is checked only for its type: tools give
//! their own, more specific messages for item fields (todowrite's `todo[0]: ...`).

use serde_json::{Map, Value};

use crate::repair;

/// Arguments that passed the checks, and the repairs made on the way.
#[derive(Debug, Clone, PartialEq)]
pub struct Normalized {
    /// The checked arguments object.
    pub args: Map<String, Value>,
    /// Repairs made, one sentence each.
    pub repairs: Vec<String>,
}

/// Checks `args` against the tool's `schema` (see the module doc). The error text lists
/// every problem found and is meant for the model: it says what to send instead.
pub fn normalize(tool: &str, schema: &Value, args: Value) -> Result<Normalized, String> {
    let properties = schema
        .get("properties")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let object = match args {
        Value::Null => Map::new(),
        Value::Object(map) => map,
        other => {
            return Err(format!(
                "the arguments of {tool} must be a JSON object, got {}",
                kind(&other)
            ));
        }
    };
    let mut problems = Vec::new();
    let mut repairs = Vec::new();
    let mut out = Map::new();
    let mut unknown = Vec::new();
    // Given but wrong: its own problem says so, so it is not also called missing.
    let mut rejected = Vec::new();
    for (key, value) in object {
        let Some(prop) = properties.get(&key) else {
            unknown.push(key);
            continue;
        };
        if value.is_null() {
            continue;
        }
        match check(&key, prop, value, true, &mut repairs) {
            Ok(value) => {
                out.insert(key, value);
            }
            Err(problem) => {
                problems.push(problem);
                rejected.push(key);
            }
        }
    }
    if !unknown.is_empty() {
        let names: Vec<&str> = properties.keys().map(String::as_str).collect();
        let valid = if names.is_empty() {
            format!("{tool} takes no parameters")
        } else {
            format!("valid parameters are {}", names.join(", "))
        };
        let plural = if unknown.len() == 1 { "" } else { "s" };
        problems.insert(
            0,
            format!(
                "unknown parameter{plural} {} ({valid})",
                unknown
                    .iter()
                    .map(|k| format!("\"{k}\""))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        );
    }
    for name in required {
        if !out.contains_key(name) && !rejected.iter().any(|key| key == name) {
            problems.push(format!("missing required parameter `{name}`"));
        }
    }
    if problems.is_empty() {
        Ok(Normalized { args: out, repairs })
    } else {
        Err(problems.join("; "))
    }
}

/// Checks one value against its property schema; `deep` also checks enums and bounds.
fn check(
    path: &str,
    schema: &Value,
    value: Value,
    deep: bool,
    repairs: &mut Vec<String>,
) -> Result<Value, String> {
    let Some(wanted) = schema.get("type").and_then(Value::as_str) else {
        return Ok(value);
    };
    let value = match (wanted, value) {
        ("string", value @ Value::String(_)) => value,
        ("integer", Value::Number(n)) => Value::Number(integer(path, &n)?),
        ("integer", Value::String(s)) => match s.trim().parse::<i64>() {
            Ok(n) => {
                repairs.push(format!("converted `{path}` from a string to an integer"));
                Value::from(n)
            }
            Err(_) => {
                return Err(format!(
                    "`{path}` must be an integer, got the string \"{s}\""
                ));
            }
        },
        ("number", value @ Value::Number(_)) => value,
        ("number", Value::String(s)) => match s
            .trim()
            .parse::<f64>()
            .ok()
            .and_then(serde_json::Number::from_f64)
        {
            Some(n) => {
                repairs.push(format!("converted `{path}` from a string to a number"));
                Value::Number(n)
            }
            None => return Err(format!("`{path}` must be a number, got the string \"{s}\"")),
        },
        ("boolean", value @ Value::Bool(_)) => value,
        ("boolean", Value::String(s)) if s == "true" || s == "false" => {
            repairs.push(format!("converted `{path}` from a string to a boolean"));
            Value::Bool(s == "true")
        }
        ("array", Value::Array(items)) => Value::Array(check_items(path, schema, items, repairs)?),
        ("object", Value::Object(map)) => Value::Object(check_map(path, schema, map, repairs)?),
        ("array" | "object", Value::String(text)) => {
            let parsed = repair::parse_arguments(&text).ok().map(|p| p.value);
            match parsed {
                Some(Value::Array(items)) if wanted == "array" => {
                    repairs.push(format!("parsed `{path}` from JSON text into an array"));
                    Value::Array(check_items(path, schema, items, repairs)?)
                }
                Some(Value::Object(map)) if wanted == "object" => {
                    repairs.push(format!("parsed `{path}` from JSON text into an object"));
                    Value::Object(check_map(path, schema, map, repairs)?)
                }
                _ => {
                    return Err(format!(
                        "`{path}` must be {}, got a string that is not one",
                        article(wanted)
                    ));
                }
            }
        }
        (_, other) => {
            return Err(format!(
                "`{path}` must be {}, got {}",
                article(wanted),
                kind(&other)
            ));
        }
    };
    if deep {
        check_enum(path, schema, &value)?;
        check_bounds(path, schema, &value)?;
    }
    Ok(value)
}

fn integer(path: &str, n: &serde_json::Number) -> Result<serde_json::Number, String> {
    if n.is_i64() || n.is_u64() {
        return Ok(n.clone());
    }
    match n.as_f64() {
        Some(f) if f.fract() == 0.0 && f.abs() < 9.0e15 => Ok(serde_json::Number::from(f as i64)),
        _ => Err(format!("`{path}` must be an integer, got {n}")),
    }
}

fn check_items(
    path: &str,
    schema: &Value,
    items: Vec<Value>,
    repairs: &mut Vec<String>,
) -> Result<Vec<Value>, String> {
    let Some(item_schema) = schema.get("items") else {
        return Ok(items);
    };
    items
        .into_iter()
        .enumerate()
        .map(|(i, item)| check(&format!("{path}[{i}]"), item_schema, item, false, repairs))
        .collect()
}

fn check_map(
    path: &str,
    schema: &Value,
    map: Map<String, Value>,
    repairs: &mut Vec<String>,
) -> Result<Map<String, Value>, String> {
    let Some(value_schema) = schema.get("additionalProperties").filter(|s| s.is_object()) else {
        return Ok(map);
    };
    map.into_iter()
        .map(|(k, v)| {
            let checked = check(&format!("{path}.{k}"), value_schema, v, false, repairs)?;
            Ok((k, checked))
        })
        .collect()
}

fn check_enum(path: &str, schema: &Value, value: &Value) -> Result<(), String> {
    let Some(allowed) = schema.get("enum").and_then(Value::as_array) else {
        return Ok(());
    };
    if allowed.contains(value) {
        return Ok(());
    }
    let names: Vec<String> = allowed
        .iter()
        .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_string))
        .collect();
    Err(format!(
        "`{path}` must be one of {} (got {value})",
        names.join(", ")
    ))
}

fn check_bounds(path: &str, schema: &Value, value: &Value) -> Result<(), String> {
    let Some(n) = value.as_f64() else {
        return Ok(());
    };
    if let Some(min) = schema.get("minimum").and_then(Value::as_f64)
        && n < min
    {
        return Err(format!("`{path}` must be at least {min} (got {value})"));
    }
    if let Some(max) = schema.get("maximum").and_then(Value::as_f64)
        && n > max
    {
        return Err(format!("`{path}` must be at most {max} (got {value})"));
    }
    Ok(())
}

fn article(kind: &str) -> &'static str {
    match kind {
        "string" => "a string",
        "integer" => "an integer",
        "number" => "a number",
        "boolean" => "a boolean (true or false)",
        "array" => "an array",
        "object" => "an object",
        _ => "a value of another type",
    }
}

/// A short name of a JSON value's kind, for messages.
pub fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// A tool's parameter schema: an object with these `properties` (a JSON object whose key
/// order is the parameter order), these required names, and no other keys.
pub fn object(properties: Value, required: &[&str]) -> Value {
    serde_json::json!({
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": false,
    })
}

/// The parameter names of a schema, in order, with whether each is required.
pub fn parameters(schema: &Value) -> Vec<(String, bool)> {
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|props| {
            props
                .keys()
                .map(|k| (k.clone(), required.contains(&k.as_str())))
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "file_path": {"type": "string"},
                "offset": {"type": "integer", "minimum": 0},
                "format": {"type": "string", "enum": ["text", "html"]},
                "flag": {"type": "boolean"},
                "todos": {"type": "array", "items": {"type": "object"}},
                "headers": {"type": "object", "additionalProperties": {"type": "string"}}
            },
            "required": ["file_path"]
        })
    }

    fn ok(args: Value) -> Normalized {
        normalize("t", &schema(), args).unwrap()
    }

    fn err(args: Value) -> String {
        normalize("t", &schema(), args).unwrap_err()
    }

    #[test]
    fn empty_object_is_rejected_when_parameters_are_required() {
        assert_eq!(err(json!({})), "missing required parameter `file_path`");
        assert_eq!(err(Value::Null), "missing required parameter `file_path`");
    }

    #[test]
    fn unknown_keys_name_the_valid_ones() {
        let e = err(json!({"file_path": "a", "path": "b"}));
        assert!(e.starts_with("unknown parameter \"path\""), "{e}");
        assert!(
            e.contains("valid parameters are file_path, offset, format"),
            "{e}"
        );
    }

    #[test]
    fn null_means_absent_for_optional_parameters() {
        let n = ok(json!({"file_path": "a", "offset": null}));
        assert!(!n.args.contains_key("offset"));
        assert!(err(json!({"file_path": null})).contains("missing required"));
    }

    #[test]
    fn types_are_checked_with_a_clear_message() {
        assert_eq!(
            err(json!({"file_path": 3})),
            "`file_path` must be a string, got a number"
        );
        assert!(err(json!({"file_path": "a", "offset": 1.5})).contains("must be an integer"));
        assert!(err(json!([1])).contains("must be a JSON object"));
    }

    #[test]
    fn a_required_parameter_given_wrong_is_not_also_called_missing() {
        let schema = json!({
            "type": "object",
            "properties": {"todos": {"type": "array", "items": {"type": "object"}}},
            "required": ["todos"]
        });
        let e = normalize("todowrite", &schema, json!({"todos": [5]})).unwrap_err();
        assert_eq!(e, "`todos[0]` must be an object, got a number");
        let e = normalize("todowrite", &schema, json!({})).unwrap_err();
        assert_eq!(e, "missing required parameter `todos`");
    }

    #[test]
    fn bounds_and_enums_are_checked() {
        assert_eq!(
            err(json!({"file_path": "a", "offset": -1})),
            "`offset` must be at least 0 (got -1)"
        );
        assert_eq!(
            err(json!({"file_path": "a", "format": "pdf"})),
            "`format` must be one of text, html (got \"pdf\")"
        );
    }

    #[test]
    fn stringified_values_are_converted_and_listed() {
        let n = ok(json!({"file_path": "a", "offset": "7", "flag": "true",
                          "todos": "[{\"content\": \"x\"}]", "headers": "{\"A\": \"b\"}"}));
        assert_eq!(n.args["offset"], json!(7));
        assert_eq!(n.args["flag"], json!(true));
        assert_eq!(n.args["todos"], json!([{"content": "x"}]));
        assert_eq!(n.args["headers"], json!({"A": "b"}));
        assert_eq!(n.repairs.len(), 4);
        assert!(n.repairs.iter().any(|r| r.contains("`todos`")));
        assert!(err(json!({"file_path": "a", "todos": "not json"})).contains("must be an array"));
        assert!(
            err(json!({"file_path": "a", "todos": [1]})).contains("`todos[0]` must be an object")
        );
        assert!(
            err(json!({"file_path": "a", "headers": {"A": 1}}))
                .contains("`headers.A` must be a string")
        );
    }

    #[test]
    fn integral_floats_are_integers() {
        assert_eq!(
            ok(json!({"file_path": "a", "offset": 3.0})).args["offset"],
            json!(3)
        );
    }
}
