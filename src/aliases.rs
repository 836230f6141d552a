//! Parameter names and enum words other agents use.
//!
//! Models trained on Claude Code, opencode or codex send those agents' spellings of the
//! same arguments. [`apply`] renames them to tinytool's before schema validation and says
//! so, one repair line per translation (they land in `metadata.repairs`).
//!
//! Grammar of the table: `(tool, alias, canonical)`. A rename happens only when the alias
//! is present and the canonical name is not (both given is left for the schema to report
//! as an unknown parameter: choosing one would be a guess). Only one-to-one renames are
//! listed: no unit conversions, no alias that could mean two parameters.
//!
//! Sources (facts): opencode's edit/read/write send `filePath`, `oldString`, `newString`,
//! `replaceAll`; Claude Code's `Grep` sends `glob` for the file filter; codex's JSON
//! `apply_patch` sends the patch text as `input`. Claude Code's `TodoWrite` and opencode's
//! `todowrite` use status `completed` and `cancelled` and priority `medium`; Claude Code
//! adds `activeForm`, which has no meaning here and is dropped.

use serde_json::{Map, Value};

/// `(tool, alias, canonical)` parameter renames.
const RENAMES: &[(&str, &str, &str)] = &[
    ("edit", "filePath", "file_path"),
    ("edit", "oldString", "old_string"),
    ("edit", "newString", "new_string"),
    ("edit", "replaceAll", "replace_all"),
    ("read", "filePath", "file_path"),
    ("write", "filePath", "file_path"),
    ("grep", "glob", "include"),
    ("apply_patch", "input", "patch"),
];

/// Renames other agents' spellings in `args` for `tool`; returns the repairs made.
pub fn apply(tool: &str, args: &mut Value) -> Vec<String> {
    let mut repairs = Vec::new();
    let Value::Object(map) = args else {
        return repairs;
    };
    for &(_, alias, canonical) in RENAMES.iter().filter(|(t, _, _)| *t == tool) {
        if map.contains_key(canonical) {
            continue;
        }
        if let Some(value) = map.remove(alias) {
            map.insert(canonical.to_string(), value);
            repairs.push(format!("renamed parameter {alias} to {canonical}"));
        }
    }
    if tool == "todowrite"
        && let Some(Value::Array(items)) = map.get_mut("todos")
    {
        for (i, item) in items.iter_mut().enumerate() {
            if let Value::Object(fields) = item {
                todo_item(i, fields, &mut repairs);
            }
        }
    }
    repairs
}

/// Translates one todo item's words: `completed` → `done`, `medium` → `normal`, a missing
/// priority → `normal`, `activeForm` dropped. `cancelled` is a status of its own.
fn todo_item(i: usize, fields: &mut Map<String, Value>, repairs: &mut Vec<String>) {
    let mut word = |key: &str, from: &str, to: &str| {
        if fields.get(key).and_then(Value::as_str) == Some(from) {
            fields.insert(key.into(), Value::String(to.into()));
            repairs.push(format!("todo[{i}]: {key} \"{from}\" read as \"{to}\""));
        }
    };
    word("status", "completed", "done");
    word("priority", "medium", "normal");
    if !fields.contains_key("priority") {
        fields.insert("priority".into(), Value::String("normal".into()));
        repairs.push(format!("todo[{i}]: no priority, \"normal\" assumed"));
    }
    if fields.remove("activeForm").is_some() {
        repairs.push(format!("todo[{i}]: activeForm ignored"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn edit_aliases_are_renamed_and_listed() {
        let mut args =
            json!({"filePath": "a", "oldString": "x", "newString": "y", "replaceAll": true});
        let repairs = apply("edit", &mut args);
        assert_eq!(
            args,
            json!({"file_path": "a", "old_string": "x", "new_string": "y", "replace_all": true})
        );
        assert_eq!(repairs.len(), 4);
    }

    #[test]
    fn both_spellings_are_left_for_the_schema() {
        let mut args = json!({"filePath": "a", "file_path": "b"});
        assert!(apply("read", &mut args).is_empty());
        assert_eq!(args, json!({"filePath": "a", "file_path": "b"}));
    }

    #[test]
    fn aliases_belong_to_their_tool() {
        let mut args = json!({"glob": "*.rs"});
        assert!(apply("glob", &mut args).is_empty());
        assert_eq!(apply("grep", &mut args).len(), 1);
        assert_eq!(args, json!({"include": "*.rs"}));
    }

    #[test]
    fn todo_words_are_translated() {
        let mut args = json!({"todos": [
            {"content": "a", "status": "completed", "priority": "medium"},
            {"content": "b", "status": "cancelled", "activeForm": "Doing b"},
        ]});
        let repairs = apply("todowrite", &mut args);
        assert_eq!(
            args,
            json!({"todos": [
                {"content": "a", "status": "done", "priority": "normal"},
                {"content": "b", "status": "cancelled", "priority": "normal"},
            ]})
        );
        assert_eq!(
            repairs,
            [
                "todo[0]: status \"completed\" read as \"done\"",
                "todo[0]: priority \"medium\" read as \"normal\"",
                "todo[1]: no priority, \"normal\" assumed",
                "todo[1]: activeForm ignored",
            ]
        );
    }
}
