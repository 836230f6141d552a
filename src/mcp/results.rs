//! How tools and their results look over MCP: the tool entries of `tools/list` (title,
//! annotations, `inputSchema`, `outputSchema`) and the `tools/call` result.
//!
//! A result says its text twice, so a client that reads only one half still gets it all,
//! and its images once:
//!
//! ```text
//! content            = ( [ text OUTPUT ] | PARTS ) [ resource_link tinytool://output/NAME ]
//! PARTS              = ( text | image )+   (an image read: image, text OUTPUT)
//! structuredContent  = { "tool": NAME, "output": OUTPUT, "is_error": BOOL,
//!                        "truncated": BOOL, "metadata": { ... } }
//! isError            = is_error
//! ```
//!
//! `structuredContent` is the `exec` result object without its `id` (and without its
//! `content`), and validates against the `outputSchema` every tool declares
//! ([`output_schema`]). Where a result holds an image, OUTPUT says `[image N: LABEL]`: it
//! refers to the N-th image block of `content`, never repeats its data (see `media`). The
//! `resource_link` is added when the output was previewed and the whole output was kept in
//! a spill file (`metadata.full_output`, see `resources`).
//!
//! Every result fits the room its message has (`mcp.max_message_bytes`, 8 MiB by default,
//! less the envelope): a result that would not is cut, never sent broken. Images go first,
//! from the last, each replaced by a note saying it was left out and why; then the text is
//! cut to what fits, with a note; `truncated` is set and `metadata.message_cut` says how
//! large the result would have been and the cap.

use serde_json::{Map, Value, json};

use crate::media::{self, Part, Shape};
use crate::registry::CallResult;
use crate::tool::ToolDef;

use super::resources;

/// The `tools/list` entry of one tool, with its description as the session shows it.
pub fn tool_entry(def: &ToolDef, description: &str) -> Value {
    let title = title(def.name);
    let mut annotations = annotations(def.name);
    annotations.insert("title".into(), json!(title));
    json!({
        "name": def.name,
        "title": title,
        "description": description,
        "inputSchema": (def.schema)(),
        "outputSchema": output_schema(),
        "annotations": Value::Object(annotations),
    })
}

/// The schema of every tool's `structuredContent`: the result object of `exec`.
fn output_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "tool": {"type": "string", "description": "The tool that ran."},
            "output": {"type": "string", "description": "What the model should see: the tool's output, or the error message (a head+tail preview when `truncated`)."},
            "is_error": {"type": "boolean", "description": "Whether the call failed."},
            "truncated": {"type": "boolean", "description": "Whether `output` is a preview of a longer output."},
            "metadata": {"type": "object", "description": "Structured facts about the call (tool-specific).", "additionalProperties": true},
        },
        "required": ["output", "is_error", "truncated", "metadata"],
        "additionalProperties": false,
    })
}

/// A human-readable title for a tool.
pub fn title(name: &str) -> &'static str {
    match name {
        "read" => "Read file",
        "write" => "Write file",
        "edit" => "Edit file",
        "apply_patch" => "Apply patch",
        "bash" => "Run shell command",
        "monitor" => "Monitor background command",
        "grep" => "Search file contents",
        "glob" => "Find files by name",
        "question" => "Ask the user",
        "webfetch" => "Fetch URL",
        "websearch" => "Search the web",
        "task" => "Run subagent",
        "todowrite" => "Update todo list",
        "report_findings" => "Report findings",
        "notepad" => "Session notepad",
        "plan_enter" => "Enter plan mode",
        "plan_exit" => "Leave plan mode",
        "skill" => "Run skill",
        "checkpoint" => "Checkpoints and undo",
        "diagnostics" => "Language server diagnostics",
        "exit" => "End session",
        "invalid" => "Malformed call",
        _ => "Tool",
    }
}

/// The four hints, each set explicitly (the protocol's defaults assume the worst: not
/// read-only, destructive, not idempotent, open world).
///
/// - read-only: reads files or asks; changes nothing in the project or the world;
/// - destructive: may overwrite or delete what exists (files, via commands);
/// - idempotent: repeating the call with the same arguments changes nothing more;
/// - open world: reaches beyond the project (network, arbitrary commands).
fn annotations(name: &str) -> Map<String, Value> {
    // (read-only, destructive, idempotent, open world)
    let (read_only, destructive, idempotent, open_world) = match name {
        "read" | "grep" | "glob" | "skill" | "diagnostics" => (true, false, true, false),
        "question" => (true, false, false, false),
        "webfetch" | "websearch" => (true, false, true, true),
        "write" => (false, true, true, false),
        "edit" | "apply_patch" => (false, true, false, false),
        "bash" | "monitor" | "task" => (false, true, false, true),
        // Session state only: the todo list or mode is replaced, nothing in the project.
        "todowrite" | "plan_enter" | "plan_exit" => (false, false, true, false),
        // Notes can be overwritten and deleted.
        "notepad" => (false, true, false, false),
        "report_findings" => (false, false, false, false),
        // Lists and shows change nothing, but an undo rewrites and removes files (never
        // a person's changes without `force`); repeating it walks further back.
        "checkpoint" => (false, true, false, false),
        _ => (false, true, false, true),
    };
    let mut hints = Map::new();
    hints.insert("readOnlyHint".into(), json!(read_only));
    hints.insert("destructiveHint".into(), json!(destructive));
    hints.insert("idempotentHint".into(), json!(idempotent));
    hints.insert("openWorldHint".into(), json!(open_world));
    hints
}

/// A call result in MCP's shape, in at most `room` bytes of JSON (see the module doc);
/// `links` says whether the client's revision knows `resource_link` content (2025-06-18
/// and later).
pub fn call_result(result: &CallResult, links: bool, room: usize) -> Value {
    let value = shaped(result, links);
    let size = encoded_len(&value);
    if size <= room {
        return value;
    }
    cut(result, links, room, size)
}

/// A call result in MCP's shape, whatever its size.
fn shaped(result: &CallResult, links: bool) -> Value {
    let mut content = if result.parts.is_empty() {
        vec![json!({"type": "text", "text": result.output})]
    } else {
        media::render(&result.parts, &result.output, Shape::Mcp)
    };
    if links && let Some(link) = resources::link_for(&result.metadata) {
        content.push(link);
    }
    json!({
        "content": content,
        "isError": result.is_error,
        "structuredContent": structured(result),
    })
}

/// Bytes of `value` as JSON.
fn encoded_len(value: &Value) -> usize {
    serde_json::to_vec(value).map_or(usize::MAX, |bytes| bytes.len())
}

/// What stands for the part of a result cut to fit a message.
fn cut_note(size: usize, room: usize) -> String {
    format!(
        "[cut: this result was {size} bytes of JSON, more than the {room} bytes one MCP message \
         has room for (mcp.max_message_bytes in config.json raises the cap)]"
    )
}

/// `result` cut to fit `room` bytes (see the module doc); `size` is its whole size.
fn cut(result: &CallResult, links: bool, room: usize, size: usize) -> Value {
    let mut small = result.clone();
    small.truncated = true;
    small
        .metadata
        .insert("message_cut".into(), json!({"bytes": size, "room": room}));
    // Images first, from the last: each leaves a note where it stood.
    while let Some(last) = small
        .parts
        .iter()
        .rposition(|p| matches!(p, Part::Image(_)))
    {
        if let Part::Image(image) = &small.parts[last] {
            let note = format!(
                "[image left out: {}; {}]\n",
                image.label,
                cut_note(size, room)
                    .trim_start_matches('[')
                    .trim_end_matches(']')
            );
            small.parts[last] = Part::Text(note);
        }
        small.output = media::text_of(&small.parts);
        let value = shaped(&small, links);
        if encoded_len(&value) <= room {
            return value;
        }
    }
    // Then the text: it is in the content and in structuredContent, escaped.
    small.parts.clear();
    let note = cut_note(size, room);
    let full = std::mem::take(&mut small.output);
    let bare = encoded_len(&shaped(&small, links));
    let mut keep = room.saturating_sub(bare + 2 * note.len() + 64) / 2;
    for _ in 0..8 {
        let end = floor_char_boundary(&full, keep);
        small.output = format!("{}\n{note}", &full[..end]);
        let value = shaped(&small, links);
        let now = encoded_len(&value);
        if now <= room {
            return value;
        }
        // Escapes made it larger than its bytes: shrink in proportion, and a little more.
        let over = now.saturating_sub(bare) as f64;
        let wanted = room.saturating_sub(bare) as f64;
        keep = (keep as f64 * wanted / over.max(1.0) * 0.95) as usize;
    }
    // Nothing of the text fits (the metadata alone is too large): the note alone.
    small.output = note;
    small.metadata = Map::new();
    small
        .metadata
        .insert("message_cut".into(), json!({"bytes": size, "room": room}));
    shaped(&small, false)
}

/// The largest char boundary of `text` at or below `at`.
fn floor_char_boundary(text: &str, at: usize) -> usize {
    let mut at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// The `structuredContent` of a result (see the module doc).
pub fn structured(result: &CallResult) -> Value {
    json!({
        "tool": result.tool,
        "output": result.output,
        "is_error": result.is_error,
        "truncated": result.truncated,
        "metadata": Value::Object(result.metadata.clone()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::media::Image;

    fn result(parts: Vec<Part>, output: String) -> CallResult {
        let mut result =
            CallResult::failure(None, "read", output, crate::exit::ExitStatus::Success);
        result.is_error = false;
        result.parts = parts;
        result
    }

    #[test]
    fn an_image_is_sent_once_and_the_structured_output_refers_to_it() {
        let parts = vec![Part::Image(Image::new(
            "image/png",
            &[7u8; 3000],
            "a.png".into(),
        ))];
        let r = result(parts.clone(), media::text_of(&parts));
        let value = call_result(&r, true, 1 << 20);
        let data = value["content"][0]["data"].as_str().unwrap();
        assert_eq!(value.to_string().matches(data).count(), 1);
        assert_eq!(value["content"][1]["text"], "[image 1: a.png]\n");
        assert_eq!(value["structuredContent"]["output"], "[image 1: a.png]\n");
    }

    #[test]
    fn a_result_over_its_room_loses_its_last_images_then_its_text_never_its_shape() {
        let image = |n: u8| Part::Image(Image::new("image/png", &[n; 30_000], format!("i{n}")));
        let parts = vec![Part::Text("cell\n".into()), image(1), image(2)];
        let r = result(parts.clone(), media::text_of(&parts));
        let value = call_result(&r, true, 60_000);
        assert!(value.to_string().len() <= 60_000);
        let content = value["content"].as_array().unwrap();
        assert_eq!(content[1]["type"], "image");
        assert!(
            content[2]["text"]
                .as_str()
                .unwrap()
                .starts_with("[image left out: i2; cut:")
        );
        assert_eq!(value["structuredContent"]["truncated"], true);
        assert!(
            value["structuredContent"]["metadata"]["message_cut"]["bytes"]
                .as_u64()
                .unwrap()
                > 80_000
        );
        // Text that escapes to six times its bytes is cut to fit, with the note.
        let r = result(Vec::new(), "\u{1}".repeat(100_000));
        let value = call_result(&r, false, 70_000);
        let len = value.to_string().len();
        assert!(len <= 70_000 && len > 35_000, "{len}");
        let text = value["content"][0]["text"].as_str().unwrap();
        assert!(text.ends_with("raises the cap)]"));
        assert_eq!(value["structuredContent"]["output"], text);
    }

    #[test]
    fn every_tool_has_a_title_and_four_explicit_hints() {
        for def in crate::tools::documented().all() {
            assert_ne!(title(def.name), "Tool", "{} has no title", def.name);
            let hints = annotations(def.name);
            for key in [
                "readOnlyHint",
                "destructiveHint",
                "idempotentHint",
                "openWorldHint",
            ] {
                assert!(hints[key].is_boolean(), "{}: {key}", def.name);
            }
            // A read-only tool cannot be destructive.
            if hints["readOnlyHint"] == true {
                assert_eq!(hints["destructiveHint"], false, "{}", def.name);
            }
        }
    }
}
