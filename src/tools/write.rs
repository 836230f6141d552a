//! `write`: create or overwrite a file with the given content.
//!
//! Parent directories are created (0755). The write is atomic (`atomic`): temporary file in
//! the same directory, fsync, rename; an existing file keeps its permission bits, a new one
//! gets 0644. An existing file's conventions are kept (`textdoc`): its line endings (CRLF
//! stays CRLF, LF stays LF), its UTF-8 BOM and whether it ends with a newline; a new file
//! gets the content exactly as given. The path's lock (`locks::PathLock`) is held for the
//! whole call so a concurrent edit of the same file cannot interleave. Afterwards the
//! configured formatter runs (its failure is reported, never undoes the write) and
//! `file.modified` is published with operation `write`.
//!
//! A symlink is written through: the path is resolved first (`paths::resolve`, a dangling
//! link to the file it names), so the policy judges the file really written and the atomic
//! rename replaces that file, leaving the link in place. A FIFO, socket or device is refused
//! without being opened (opening a FIFO would block until someone opens its other end).
//!
//! Deliberate differences from the reference: no "you have not read this file" warning,
//! and an existing file's mode and conventions are kept.

use std::io::ErrorKind;

use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::aftercare;
use crate::atomic::{self, Kind};
use crate::locks::PathLock;
use crate::schema;
use crate::session::CallContext;
use crate::textdoc::{self, Conventions};
use crate::tool::{Access, ToolDef, ToolDoc, ToolOutput, parse_args};

/// The `write` tool's definition.
pub fn definition() -> ToolDef {
    ToolDef {
        name: "write",
        summary: "Create or overwrite a file",
        description: "Write a file: creates it (and any missing parent directories) or \
            replaces its whole content. The write is atomic. When the file already exists, \
            its line endings (CRLF or LF), UTF-8 BOM, final-newline state and permissions \
            are kept. Prefer `edit` to change part of an existing file.",
        permission: "edit",
        schema: parameters,
        execute,
        access: Some(access),
        precheck: None,
        checkpoint: Some(crate::tool::checkpoint_of_file_path),
        needs: None,
        after_changes: None,
        doc: ToolDoc {
            output: "`Successfully wrote N bytes to PATH` (N counts the bytes on disk, after line \
                endings and BOM were applied), followed by `Formatted with NAME` or `Formatter \
                failed: ...` when a formatter is configured for the file. metadata: path, \
                bytes, created, line_endings, bom, formatter, diagnostics. When a language server runs for the file's language, a `Diagnostics (SERVER): …` line follows (problems introduced by the change, already there, fixed; or that the server is still busy) and one line per problem, `path:line:col: severity: message [code]`, errors first; metadata.diagnostics has remaining, introduced, fixed, already_there, others_introduced, others_fixed, files (path, items with line, column, end_line, end_column, severity, code, source, message, new), others and servers (language, server, state fresh/busy/down/refused/unavailable/failed, elapsed_ms, pid, message).",
            errors: "`PATH is a directory`; `PATH is not a regular file: it is a FIFO` (or a \
                socket or device: never opened, nothing written); `Error creating directory: ...`; `Error writing file: \
                ...` (permissions, disk full). Nothing is changed on error.",
            examples: &[
                (
                    "Create a file (and its directory)",
                    "tinytool write --file-path notes/todo.md --content '# Todo'",
                ),
                (
                    "The same call as JSON on standard input",
                    "echo '{\"file_path\":\"notes/todo.md\",\"content\":\"# Todo\\n\"}' | tinytool write",
                ),
            ],
        },
    }
}

fn parameters() -> Value {
    schema::object(
        json!({
            "file_path": {
                "type": "string",
                "description": "Path of the file to write: absolute, or relative to the working directory."
            },
            "content": {
                "type": "string",
                "description": "The complete new content of the file."
            }
        }),
        &["file_path", "content"],
    )
}

/// A write needs `edit` of the resolved path.
fn access(ctx: &CallContext, args: &Map<String, Value>) -> Vec<Access> {
    Access::file_path(ctx, "edit", args)
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct WriteArgs {
    file_path: String,
    content: String,
}

fn execute(ctx: &CallContext, args: Map<String, Value>) -> anyhow::Result<ToolOutput> {
    let args: WriteArgs = match parse_args(args) {
        Ok(args) => args,
        Err(output) => return Ok(output),
    };
    let path = ctx.resolve(&args.file_path);
    let shown = ctx.display(&path);
    // The path is resolved (symlinks followed), so this is what the rename will replace.
    match atomic::kind(&path) {
        Ok(Kind::Directory) => {
            return Ok(ToolOutput::error(format!(
                "{shown} is a directory; give the path of a file to write"
            )));
        }
        Ok(Kind::Special(what)) => return Ok(ToolOutput::error(atomic::not_regular(&shown, what))),
        Ok(Kind::File | Kind::Missing | Kind::Symlink) => {}
        Err(err) => {
            return Ok(ToolOutput::error(format!(
                "Error writing file: {shown}: {err}"
            )));
        }
    }
    if let Err(err) = atomic::create_parents(&path) {
        return Ok(ToolOutput::error(format!(
            "Error creating directory: {}: {err}",
            path.parent().map(|p| ctx.display(p)).unwrap_or_default()
        )));
    }
    let lock = match PathLock::acquire(&path) {
        Ok(lock) => lock,
        Err(err) => {
            return Ok(ToolOutput::error(format!(
                "Error writing file: {shown}: cannot take its lock: {err}"
            )));
        }
    };
    // A read-only mark is honoured (checked from the mode, so even for root).
    if let Some(refusal) = atomic::refuse_change(&path, &shown, None) {
        return Ok(ToolOutput::error(refusal));
    }
    let (conventions, before, marker_is_text) = match atomic::read_regular(&path) {
        Ok(bytes) => {
            let conventions = Conventions::detect(&bytes);
            let body = bytes.get(textdoc::BOM.len()..).unwrap_or_default();
            let marker_is_text = body.starts_with(textdoc::BOM_MARKER.as_bytes());
            (conventions, Some(bytes), marker_is_text)
        }
        Err(err) if err.kind() == ErrorKind::NotFound => (Conventions::default(), None, false),
        Err(err) => {
            return Ok(ToolOutput::error(format!(
                "Error reading file: {shown}: {err}"
            )));
        }
    };
    // Content copied from read's output may start with its BOM marker; the BOM itself is
    // kept by `apply_whole`.
    let content = textdoc::strip_bom_marker(&args.content, conventions.bom, marker_is_text);
    let bytes = conventions.apply_whole(content);
    if let Err(err) = atomic::write(&path, &bytes, atomic::mode_for(&path)) {
        return Ok(ToolOutput::error(format!(
            "Error writing file: {shown}: {err}"
        )));
    }
    let created = before.is_none();
    let formatted = aftercare::format(ctx, &path);
    aftercare::file_modified(ctx, &path, "write");
    // The server reads the file as written; other writers wait no longer for it.
    drop(lock);
    let (diagnosed, diagnostics) = crate::lsp::diagnose(
        ctx,
        &[crate::lsp::Change {
            path: &path,
            before: before.as_deref(),
            deleted: false,
        }],
    );
    let mut output = ToolOutput::text(format!(
        "Successfully wrote {} bytes to {shown}{}{diagnosed}",
        bytes.len(),
        formatted.note()
    ))
    .with("path", shown)
    .with("bytes", bytes.len())
    .with("created", created)
    .with("line_endings", conventions.ending.name())
    .with("bom", conventions.bom);
    if let Some(meta) = formatted.metadata() {
        output = output.with("formatter", meta);
    }
    if let Some(diagnostics) = diagnostics {
        output = output.with("diagnostics", diagnostics);
    }
    Ok(output)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::Session;

    fn call(session: &Session, args: Value) -> ToolOutput {
        let ctx = CallContext::new(session, "write");
        let Value::Object(map) = args else {
            unreachable!()
        };
        execute(&ctx, map).unwrap()
    }

    #[test]
    fn the_access_is_edit_of_the_resolved_path() {
        let tmp = tempfile::tempdir().unwrap();
        let session = Session::new("s", tmp.path());
        let ctx = CallContext::new(&session, "write");
        let args = json!({"file_path": "./src/../src/a.rs", "content": ""});
        let accesses = access(&ctx, args.as_object().unwrap());
        assert_eq!(accesses.len(), 1);
        assert_eq!(accesses[0].permission, "edit");
        assert_eq!(accesses[0].pattern, "src/a.rs");
        assert_eq!(accesses[0].path, Some(session.dir.join("src/a.rs")));
        let outside = access(
            &ctx,
            json!({"file_path": "/etc/x", "content": ""})
                .as_object()
                .unwrap(),
        );
        assert_eq!(outside[0].pattern, "/etc/x");
    }

    #[test]
    fn conventions_of_an_existing_file_survive_a_write() {
        let tmp = tempfile::tempdir().unwrap();
        let session = Session::new("s", tmp.path());
        let file = session.dir.join("win.txt");
        std::fs::write(&file, b"\xef\xbb\xbfa\r\nb\r\n").unwrap();
        let out = call(&session, json!({"file_path": "win.txt", "content": "x\ny"}));
        assert!(!out.is_error);
        assert_eq!(std::fs::read(&file).unwrap(), b"\xef\xbb\xbfx\r\ny\r\n");
        assert_eq!(out.metadata["bytes"], 9);
        assert_eq!(out.metadata["created"], false);
    }

    #[test]
    fn a_directory_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let session = Session::new("s", tmp.path());
        std::fs::create_dir(session.dir.join("d")).unwrap();
        let out = call(&session, json!({"file_path": "d", "content": "x"}));
        assert!(out.is_error);
    }
}
