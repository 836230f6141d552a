//! What one edit call asks for, as a list of changes applied in order.
//!
//! A call is one of three forms, never a mix:
//! - `old_string` + `new_string` (+ `replace_all`): one replacement;
//! - `edits: [{old_string, new_string, replace_all?}, …]`: replacements applied one after
//!   the other, each to the text the one before left, all or nothing (Claude Code's
//!   `MultiEdit`, opencode's `multiedit`);
//! - `insert_line` + `new_string` (no `old_string`, or an empty one): `new_string` as whole
//!   lines after that line, 0 meaning at the top (the text editor's `insert`). A final line
//!   break of `new_string` ends its last line rather than adding an empty one.
//!
//! [`changes`] reads and checks the form before the policy is asked; [`insertion`] is where
//! an insert goes in a text.

use serde_json::{Map, Value};

use crate::textdoc::Splice;

/// One change of a call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// Replace `old` with `new` (every occurrence with `all`).
    Replace {
        /// The text to find.
        old: String,
        /// Its replacement.
        new: String,
        /// Every occurrence.
        all: bool,
    },
    /// Insert `text` as whole lines after line `after` (1-based; 0: at the top).
    Insert {
        /// The line it goes after.
        after: u64,
        /// The lines.
        text: String,
    },
}

/// The fields an item of `edits` may have.
const ITEM_FIELDS: &str = "old_string, new_string, replace_all";

/// The changes a call's (schema-checked) arguments ask for, or what is wrong with them.
pub fn changes(args: &Map<String, Value>) -> Result<Vec<Change>, String> {
    let text = |key: &str| args.get(key).and_then(Value::as_str).map(str::to_string);
    let (old, new) = (text("old_string"), text("new_string"));
    let all = args.get("replace_all").and_then(Value::as_bool);
    let insert_line = args.get("insert_line").and_then(Value::as_u64);
    if let Some(edits) = args.get("edits") {
        let mixed: Vec<&str> = ["old_string", "new_string", "replace_all", "insert_line"]
            .into_iter()
            .filter(|key| args.contains_key(*key))
            .collect();
        if !mixed.is_empty() {
            return Err(format!(
                "edits is given with {}: send every replacement as an item of edits, or one \
                 with old_string and new_string",
                mixed.join(", ")
            ));
        }
        return items(edits);
    }
    if let Some(after) = insert_line {
        if old.as_deref().is_some_and(|o| !o.is_empty()) {
            return Err(
                "insert_line inserts new_string after a line and replaces nothing: leave \
                 old_string out (or replace with old_string and no insert_line)"
                    .into(),
            );
        }
        if all.is_some() {
            return Err("replace_all means nothing with insert_line: leave it out".into());
        }
        let Some(text) = new else {
            return Err("missing required parameter `new_string` (the lines to insert)".into());
        };
        return Ok(vec![Change::Insert { after, text }]);
    }
    let mut missing = Vec::new();
    if old.is_none() {
        missing.push("missing required parameter `old_string`");
    }
    if new.is_none() {
        missing.push("missing required parameter `new_string`");
    }
    match (old, new) {
        (Some(old), Some(new)) => Ok(vec![Change::Replace {
            old,
            new,
            all: all.unwrap_or(false),
        }]),
        _ => Err(format!(
            "{} (or edits, a list of replacements)",
            missing.join("; ")
        )),
    }
}

/// The replacements of `edits`, checked item by item.
fn items(edits: &Value) -> Result<Vec<Change>, String> {
    let Some(items) = edits.as_array() else {
        return Err("edits must be an array of {old_string, new_string, replace_all}".into());
    };
    if items.is_empty() {
        return Err("edits is empty: give at least one {old_string, new_string}".into());
    }
    let mut changes = Vec::new();
    let mut problems = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let Some(fields) = item.as_object() else {
            problems.push(format!("edits[{i}]: must be an object ({ITEM_FIELDS})"));
            continue;
        };
        for key in fields.keys() {
            if !ITEM_FIELDS.split(", ").any(|f| f == key) {
                problems.push(format!(
                    "edits[{i}]: unknown field \"{key}\" (fields are {ITEM_FIELDS})"
                ));
            }
        }
        let text = |key: &str| match fields.get(key) {
            Some(Value::String(s)) => Ok(s.clone()),
            Some(other) => Err(format!("edits[{i}]: {key} must be a string, got {other}")),
            None => Err(format!("edits[{i}]: {key} is required")),
        };
        let all = match fields.get("replace_all") {
            None | Some(Value::Null) => Ok(false),
            Some(Value::Bool(b)) => Ok(*b),
            Some(other) => Err(format!(
                "edits[{i}]: replace_all must be true or false, got {other}"
            )),
        };
        match (text("old_string"), text("new_string"), all) {
            (Ok(old), Ok(new), Ok(_)) if old == new => problems.push(format!(
                "edits[{i}]: old_string and new_string are identical: there is nothing to change"
            )),
            (Ok(old), Ok(new), Ok(all)) => changes.push(Change::Replace { old, new, all }),
            (old, new, all) => {
                problems.extend([old.err(), new.err(), all.err()].into_iter().flatten())
            }
        }
    }
    if problems.is_empty() {
        Ok(changes)
    } else {
        Err(problems.join("; "))
    }
}

/// The lines of a text: a final line break ends the last line (it does not start one).
pub fn line_count(text: &str) -> u64 {
    if text.is_empty() {
        return 0;
    }
    let breaks = text.bytes().filter(|&b| b == b'\n').count() as u64;
    breaks + u64::from(!text.ends_with('\n'))
}

/// Where an insert after line `after` goes in `text` (LF line breaks), and how many lines
/// it adds; `None` when `after` is past the last line.
pub fn insertion(text: &str, after: u64, new: &str) -> Option<(Splice, u64)> {
    let lines = line_count(text);
    if after > lines {
        return None;
    }
    let new = new.replace("\r\n", "\n");
    let body = new.strip_suffix('\n').unwrap_or(&new);
    let added = body.split('\n').count() as u64;
    let at = if after == 0 {
        0
    } else {
        // After the `after`-th line break, or at the end of a last line without one.
        text.match_indices('\n')
            .nth((after - 1) as usize)
            .map_or(text.len(), |(i, _)| i + 1)
    };
    let inserted = if at == text.len() && !text.is_empty() && !text.ends_with('\n') {
        format!("\n{body}")
    } else {
        format!("{body}\n")
    };
    Some((
        Splice {
            range: at..at,
            text: inserted,
        },
        added,
    ))
}

/// `text` with `splices` (sorted, non-overlapping) applied.
pub fn spliced(text: &str, splices: &[Splice]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut pos = 0;
    for splice in splices {
        out.push_str(&text[pos..splice.range.start]);
        out.push_str(&splice.text);
        pos = splice.range.end;
    }
    out.push_str(&text[pos..]);
    out
}

/// The one splice that turns `old` into `new`: the part between what they share at both
/// ends (empty when they are equal), so every byte outside it keeps its original form.
pub fn difference(old: &str, new: &str) -> Splice {
    let prefix = old
        .char_indices()
        .zip(new.chars())
        .find(|((_, a), b)| a != b)
        .map_or(old.len().min(new.len()), |((i, _), _)| i);
    let max_suffix = old.len().min(new.len()) - prefix;
    let suffix = old[prefix..]
        .chars()
        .rev()
        .zip(new[prefix..].chars().rev())
        .take_while(|(a, b)| a == b)
        .map(|(a, _)| a.len_utf8())
        .scan(0, |sum, len| {
            *sum += len;
            Some(*sum)
        })
        .take_while(|sum| *sum <= max_suffix)
        .last()
        .unwrap_or(0);
    Splice {
        range: prefix..old.len() - suffix,
        text: new[prefix..new.len() - suffix].to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn of(args: Value) -> Result<Vec<Change>, String> {
        changes(args.as_object().unwrap())
    }

    #[test]
    fn the_three_forms() {
        assert_eq!(
            of(json!({"file_path": "a", "old_string": "x", "new_string": "y"})),
            Ok(vec![Change::Replace {
                old: "x".into(),
                new: "y".into(),
                all: false
            }])
        );
        assert_eq!(
            of(json!({"file_path": "a", "edits": [
                {"old_string": "x", "new_string": "y"},
                {"old_string": "p", "new_string": "q", "replace_all": true}
            ]}))
            .map(|c| c.len()),
            Ok(2)
        );
        assert_eq!(
            of(json!({"file_path": "a", "insert_line": 3, "new_string": "z", "old_string": ""})),
            Ok(vec![Change::Insert {
                after: 3,
                text: "z".into()
            }])
        );
    }

    #[test]
    fn mixed_or_incomplete_forms_say_what_to_send() {
        let err = of(json!({"file_path": "a"})).unwrap_err();
        assert!(
            err.contains("`old_string`") && err.contains("`new_string`") && err.contains("edits"),
            "{err}"
        );
        let err = of(json!({"file_path": "a", "old_string": "x", "edits": []})).unwrap_err();
        assert!(err.contains("edits is given with old_string"), "{err}");
        assert!(of(json!({"edits": []})).unwrap_err().contains("empty"));
        let err = of(json!({"insert_line": 1, "old_string": "x", "new_string": "y"})).unwrap_err();
        assert!(err.contains("leave old_string out"), "{err}");
        let err = of(json!({"edits": [
            {"old_string": "x"},
            {"old_string": "a", "new_string": "a"},
            {"old_string": "b", "new_string": "c", "replace_all": "yes", "path": "p"},
            "text"
        ]}))
        .unwrap_err();
        assert_eq!(
            err,
            "edits[0]: new_string is required; \
             edits[1]: old_string and new_string are identical: there is nothing to change; \
             edits[2]: unknown field \"path\" (fields are old_string, new_string, replace_all); \
             edits[2]: replace_all must be true or false, got \"yes\"; \
             edits[3]: must be an object (old_string, new_string, replace_all)"
        );
    }

    #[test]
    fn inserts_go_between_whole_lines() {
        let at = |text: &str, after: u64, new: &str| {
            insertion(text, after, new).map(|(splice, n)| (spliced(text, &[splice]), n))
        };
        assert_eq!(at("a\nb\n", 0, "x"), Some(("x\na\nb\n".into(), 1)));
        assert_eq!(at("a\nb\n", 1, "x\ny\n"), Some(("a\nx\ny\nb\n".into(), 2)));
        assert_eq!(at("a\nb\n", 2, "x"), Some(("a\nb\nx\n".into(), 1)));
        assert_eq!(at("a\nb", 2, "x"), Some(("a\nb\nx".into(), 1)));
        assert_eq!(at("", 0, "x"), Some(("x\n".into(), 1)));
        assert_eq!(at("a\n", 1, ""), Some(("a\n\n".into(), 1)));
        assert_eq!(at("a\n", 0, "x\r\ny"), Some(("x\ny\na\n".into(), 2)));
        assert_eq!(at("a\nb\n", 3, "x"), None);
        assert_eq!(at("", 1, "x"), None);
        assert_eq!(line_count("a\nb"), 2);
        assert_eq!(line_count("a\n\n"), 2);
    }

    #[test]
    fn the_difference_is_the_changed_middle() {
        let check = |old: &str, new: &str| {
            let splice = difference(old, new);
            assert_eq!(
                spliced(old, std::slice::from_ref(&splice)),
                new,
                "{old:?} → {new:?}"
            );
            splice
        };
        assert_eq!(check("abc", "abc").range, 3..3);
        assert_eq!(check("abXc", "abc").range, 2..3);
        assert_eq!(check("aaa", "aaaa").text, "a");
        assert_eq!(check("é-é", "é+é").range, 2..3);
        check("", "x");
        check("x", "");
        check("ab", "ba");
    }
}
