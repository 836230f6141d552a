//! MCP resources: the whole output of a previewed result, kept in a spill file.
//!
//! A result whose `metadata.full_output` is `.tinytool/outputs/NAME` (relative to the
//! directory) links it as `tinytool://output/NAME`, and `resources/read` serves exactly
//! those URIs:
//!
//! ```text
//! uri  = "tinytool://output/" NAME
//! NAME = [A-Za-z0-9] [A-Za-z0-9._-]*     (no slash: the file is directly in the folder)
//! ```
//!
//! The spill files of calls that saw secrets (`.tinytool/sealed/NAME`, out of commands'
//! reach) are `tinytool://sealed-output/NAME` the same way.
//!
//! A file larger than the room one message has (`mcp.max_message_bytes`) is served cut,
//! with a note naming the file to page through with `read` instead.
//!
//! Any other URI, a NAME outside the grammar, or a file that is missing or not a regular
//! file directly under `<dir>/.tinytool/outputs/` (a symlink included) is `-32602`, with
//! the URI in `data.uri`.

use std::path::Path;

use serde_json::{Map, Value, json};

/// The URI prefix of spill files.
pub const PREFIX: &str = "tinytool://output/";
/// Where spill files live, relative to the directory.
const FOLDER: &str = ".tinytool/outputs/";
/// The URI prefix and the folder of sealed spill files.
const SEALED_PREFIX: &str = "tinytool://sealed-output/";
const SEALED_FOLDER: &str = ".tinytool/sealed/";
/// Each URI prefix with its folder.
const KINDS: [(&str, &str); 2] = [(PREFIX, FOLDER), (SEALED_PREFIX, SEALED_FOLDER)];
/// The largest spill file served (a spill file is bounded by its writer; this keeps a
/// file put there by hand from filling memory).
const MAX_BYTES: u64 = 64 * 1024 * 1024;

/// Whether `name` is a valid spill file name.
pub fn valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphanumeric())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
}

/// The `resource_link` content for a result's spill file, when it has one.
pub fn link_for(metadata: &Map<String, Value>) -> Option<Value> {
    let path = metadata.get("full_output")?.as_str()?;
    let (prefix, name) = KINDS
        .iter()
        .find_map(|(prefix, folder)| Some((prefix, path.strip_prefix(folder)?)))?;
    if !valid_name(name) {
        return None;
    }
    Some(json!({
        "type": "resource_link",
        "uri": format!("{prefix}{name}"),
        "name": name,
        "title": "Whole output",
        "description": "The whole output of this call; the text above is a preview.",
        "mimeType": "text/plain",
    }))
}

/// The `resources/read` result for `uri` in at most `room` bytes of JSON, or the error
/// message of a `-32602`.
pub fn read(dir: &Path, uri: &str, room: usize) -> Result<Value, String> {
    let unknown = || format!("Resource not found: {uri}");
    let (folder, name) = KINDS
        .iter()
        .find_map(|(prefix, folder)| Some((folder, uri.strip_prefix(prefix)?)))
        .ok_or_else(unknown)?;
    if !valid_name(name) {
        return Err(unknown());
    }
    let path = dir.join(folder).join(name);
    // Never follow a link out of the folder: only a regular file is served.
    let meta = std::fs::symlink_metadata(&path).map_err(|_| unknown())?;
    if !meta.file_type().is_file() {
        return Err(unknown());
    }
    if meta.len() > MAX_BYTES {
        return Err(format!("Resource too large to serve: {uri}"));
    }
    let bytes = std::fs::read(&path).map_err(|err| format!("cannot read {uri}: {err}"))?;
    let text = String::from_utf8_lossy(&bytes);
    let answer =
        |text: &str| json!({"contents": [{"uri": uri, "mimeType": "text/plain", "text": text}]});
    let whole = answer(&text);
    let size = serde_json::to_vec(&whole).map_or(usize::MAX, |b| b.len());
    if size <= room {
        return Ok(whole);
    }
    let note = format!(
        "\n[cut: {folder}{name} is {} bytes, more than one MCP message has room for \
         (mcp.max_message_bytes in config.json); read it with the read tool, page by page]",
        bytes.len()
    );
    let mut keep = room.saturating_sub(note.len() + uri.len() * 2 + 256);
    for _ in 0..8 {
        let mut end = keep.min(text.len());
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        let cut = answer(&format!("{}{note}", &text[..end]));
        let now = serde_json::to_vec(&cut).map_or(usize::MAX, |b| b.len());
        if now <= room {
            return Ok(cut);
        }
        // Escapes made it larger than its bytes: shrink in proportion, and a little more.
        keep = (keep as f64 * room as f64 / now as f64 * 0.95) as usize;
    }
    Ok(answer(note.trim_start()))
}

/// The `resources/templates/list` result: the URI templates served.
pub fn templates() -> Value {
    json!({"resourceTemplates": [{
        "uriTemplate": format!("{PREFIX}{{name}}"),
        "name": "output",
        "title": "Whole output of a previewed result",
        "mimeType": "text/plain",
    }, {
        "uriTemplate": format!("{SEALED_PREFIX}{{name}}"),
        "name": "sealed-output",
        "title": "Whole output of a previewed result that showed secrets",
        "mimeType": "text/plain",
    }]})
}

#[cfg(test)]
mod tests {
    use super::*;

    const ROOM: usize = 1 << 20;

    #[test]
    fn a_file_larger_than_a_message_is_served_cut_with_a_note() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(FOLDER)).unwrap();
        // Control characters take six bytes each in JSON.
        let text = "a\u{1}".repeat(20_000);
        std::fs::write(dir.path().join(FOLDER).join("big.txt"), &text).unwrap();
        let served = read(dir.path(), "tinytool://output/big.txt", 10_000).unwrap();
        assert!(serde_json::to_vec(&served).unwrap().len() <= 10_000);
        let shown = served["contents"][0]["text"].as_str().unwrap();
        assert!(shown.starts_with("a\u{1}a") && shown.ends_with("page by page]"));
        let whole = read(dir.path(), "tinytool://output/big.txt", ROOM).unwrap();
        assert_eq!(whole["contents"][0]["text"], text);
    }

    #[test]
    fn names_follow_the_grammar() {
        for good in ["a", "bash-1a2b.txt", "X_1.log"] {
            assert!(valid_name(good), "{good}");
        }
        for bad in ["", ".hidden", "-x", "a/b", "..", "a b", "é"] {
            assert!(!valid_name(bad), "{bad}");
        }
    }

    #[test]
    fn only_spill_files_are_served() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(FOLDER)).unwrap();
        std::fs::write(dir.path().join(FOLDER).join("bash-1.txt"), "whole").unwrap();
        std::fs::write(dir.path().join("secret"), "no").unwrap();
        let ok = read(dir.path(), "tinytool://output/bash-1.txt", ROOM).unwrap();
        assert_eq!(ok["contents"][0]["text"], "whole");
        for bad in [
            "tinytool://output/../../secret",
            "tinytool://output/missing",
            "file:///etc/passwd",
            "tinytool://output/",
        ] {
            assert!(read(dir.path(), bad, ROOM).is_err(), "{bad}");
        }
        std::os::unix::fs::symlink(
            dir.path().join("secret"),
            dir.path().join(FOLDER).join("link"),
        )
        .unwrap();
        assert!(read(dir.path(), "tinytool://output/link", ROOM).is_err());
        // A sealed spill file has a URI of its own, and its name is no way out either.
        std::fs::create_dir_all(dir.path().join(SEALED_FOLDER)).unwrap();
        std::fs::write(dir.path().join(SEALED_FOLDER).join("out-1.txt"), "key").unwrap();
        let sealed = read(dir.path(), "tinytool://sealed-output/out-1.txt", ROOM).unwrap();
        assert_eq!(sealed["contents"][0]["text"], "key");
        assert!(read(dir.path(), "tinytool://output/out-1.txt", ROOM).is_err());
        assert!(
            read(
                dir.path(),
                "tinytool://sealed-output/../outputs/bash-1.txt",
                ROOM
            )
            .is_err()
        );
        let mut meta = Map::new();
        meta.insert("full_output".into(), json!(".tinytool/sealed/out-1.txt"));
        assert_eq!(
            link_for(&meta).unwrap()["uri"],
            "tinytool://sealed-output/out-1.txt"
        );
    }
}
