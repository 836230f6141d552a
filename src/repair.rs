//! Malformed tool-call repair.
//!
//! Models wrap arguments in markdown fences and leave trailing commas. [`parse_arguments`]
//! turns argument text into a JSON value, repairing those two mistakes and saying which
//! repairs it made; text it cannot repair is reported so the registry can route the call
//! to the `invalid` tool. Empty arguments mean `{}` (a deliberate difference from the
//! reference, which routes them to `invalid`). Arguments encoded twice (a JSON string whose
//! text is a JSON object) are decoded by [`decode_twice`], whichever way they came.

use serde_json::Value;

/// Arguments parsed from text, with the repairs that were needed.
#[derive(Debug, Clone, PartialEq)]
pub struct Parsed {
    /// The argument value.
    pub value: Value,
    /// What had to be repaired, in order (empty when the text was valid JSON).
    pub repairs: Vec<String>,
}

/// Parses tool-call argument text: valid JSON as is, else with a markdown fence stripped
/// and trailing commas removed. Returns the JSON parser's message for text that cannot be
/// repaired.
pub fn parse_arguments(text: &str) -> Result<Parsed, String> {
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return Ok(Parsed {
            value: Value::Object(Default::default()),
            repairs: Vec::new(),
        });
    }
    let first_error = match serde_json::from_str::<Value>(trimmed) {
        Ok(value) => {
            return Ok(Parsed {
                value,
                repairs: Vec::new(),
            });
        }
        Err(err) => err.to_string(),
    };
    let mut repairs = Vec::new();
    let mut candidate = trimmed.to_string();
    if let Some(inner) = strip_fence(&candidate) {
        candidate = inner.trim().to_string();
        repairs.push("stripped a markdown code fence".to_string());
        if let Ok(value) = serde_json::from_str::<Value>(&candidate) {
            return Ok(Parsed { value, repairs });
        }
    }
    let without_commas = remove_trailing_commas(&candidate);
    if without_commas != candidate {
        repairs.push("removed trailing commas".to_string());
        if let Ok(value) = serde_json::from_str::<Value>(without_commas.trim()) {
            return Ok(Parsed { value, repairs });
        }
    }
    Err(first_error)
}

/// The repair line of arguments that were a JSON string holding an object.
pub const DECODED_TWICE: &str = "arguments were JSON-encoded twice; decoded";

/// Decodes arguments that are a JSON string whose text is a JSON object (a caller
/// serialised them twice), with the repairs that took; any other value is returned as it
/// is, with none. The text may need the repairs of [`parse_arguments`] itself.
pub fn decode_twice(value: Value) -> (Value, Vec<String>) {
    let Value::String(text) = &value else {
        return (value, Vec::new());
    };
    if text.trim().is_empty() {
        return (value, Vec::new());
    }
    match parse_arguments(text) {
        Ok(Parsed {
            value: inner @ Value::Object(_),
            repairs,
        }) => {
            let mut all = vec![DECODED_TWICE.to_string()];
            all.extend(repairs);
            (inner, all)
        }
        _ => (value, Vec::new()),
    }
}

/// Strips a leading ```` ``` ```` fence (with an optional `json` tag in any case) and a
/// trailing one. Returns `None` when the text does not start with a fence.
fn strip_fence(text: &str) -> Option<&str> {
    let rest = text.strip_prefix("```")?;
    let rest = match rest.get(..4) {
        Some(tag) if tag.eq_ignore_ascii_case("json") => &rest[4..],
        _ => rest,
    };
    let rest = rest.trim_start_matches([' ', '\t', '\r']);
    let rest = rest.strip_prefix('\n').unwrap_or(rest);
    let trimmed_end = rest.trim_end();
    let body = trimmed_end.strip_suffix("```").unwrap_or(trimmed_end);
    Some(body)
}

/// Removes every comma that is followed (after whitespace) by `}` or `]`, outside string
/// literals.
fn remove_trailing_commas(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_string = false;
    let mut escaped = false;
    let chars: Vec<char> = text.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        if in_string {
            out.push(c);
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => {
                in_string = true;
                out.push(c);
            }
            ',' => {
                let next = chars[i + 1..].iter().find(|c| !c.is_whitespace());
                if !matches!(next, Some('}') | Some(']')) {
                    out.push(c);
                }
            }
            _ => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn repaired(text: &str) -> Value {
        parse_arguments(text).unwrap().value
    }

    #[test]
    fn valid_json_is_unchanged_and_needs_no_repair() {
        let parsed = parse_arguments(r#"{"key": "val"}"#).unwrap();
        assert_eq!(parsed.value, json!({"key": "val"}));
        assert!(parsed.repairs.is_empty());
        assert_eq!(repaired("  \n {}\n "), json!({}));
    }

    #[test]
    fn fences_are_stripped_with_or_without_a_language_tag() {
        assert_eq!(repaired("```json\n{\"a\": 1}\n```"), json!({"a": 1}));
        assert_eq!(repaired("```\n{\"a\": 1}\n```"), json!({"a": 1}));
        assert_eq!(repaired("```JSON\n{\"a\": 1}\n```"), json!({"a": 1}));
        assert_eq!(repaired("```json   \n{\"a\": 1}\n```   "), json!({"a": 1}));
        assert_eq!(repaired("```json{\"a\": 1}```"), json!({"a": 1}));
    }

    #[test]
    fn trailing_commas_are_removed_at_every_depth() {
        assert_eq!(repaired(r#"{"a": 1, "b": 2,}"#), json!({"a": 1, "b": 2}));
        assert_eq!(repaired("[1, 2, 3,]"), json!([1, 2, 3]));
        assert_eq!(
            repaired(r#"{"a": [1, 2,], "b": {"c": 3,},}"#),
            json!({"a": [1, 2], "b": {"c": 3}})
        );
    }

    #[test]
    fn fence_and_trailing_comma_together_list_both_repairs() {
        let parsed = parse_arguments("```json\n{\"a\": 1, \"b\": 2,}\n```").unwrap();
        assert_eq!(parsed.value, json!({"a": 1, "b": 2}));
        assert_eq!(parsed.repairs.len(), 2);
    }

    #[test]
    fn commas_inside_strings_are_left_alone() {
        assert_eq!(
            repaired(r#"{"text": "a,}", "n": 1,}"#),
            json!({"text": "a,}", "n": 1})
        );
        assert_eq!(
            repaired(r#"{"text": "quote \" ,]", }"#),
            json!({"text": "quote \" ,]"})
        );
    }

    #[test]
    fn empty_arguments_are_an_empty_object() {
        assert_eq!(repaired(""), json!({}));
        assert_eq!(repaired("   "), json!({}));
    }

    #[test]
    fn arguments_encoded_twice_are_decoded() {
        let text = serde_json::to_string(&json!({"a": 1}).to_string()).unwrap();
        let parsed = parse_arguments(&text).unwrap();
        assert_eq!(parsed.value, json!("{\"a\":1}"));
        assert_eq!(
            decode_twice(parsed.value),
            (json!({"a": 1}), vec![DECODED_TWICE.to_string()])
        );
        let (value, repairs) = decode_twice(json!("```json\n{\"a\": 1,}\n```"));
        assert_eq!(value, json!({"a": 1}));
        assert_eq!(repairs.len(), 3);
        // Only an object is decoded: other strings stay for the schema to refuse.
        for other in [
            json!("[1, 2]"),
            json!("hello"),
            json!("42"),
            json!(""),
            json!({"a": 1}),
        ] {
            assert_eq!(decode_twice(other.clone()), (other, Vec::new()));
        }
    }

    #[test]
    fn garbage_is_not_repaired() {
        assert!(parse_arguments("{not json at all").is_err());
        assert!(parse_arguments("```json\n{broken\n```").is_err());
    }
}
