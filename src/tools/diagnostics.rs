//! `diagnostics`: what the project's language servers say is wrong with a file, a folder or
//! the project now, so a model can check its work before it finishes (the servers are
//! those the diagnostics after every change use: `crate::lsp`).
//!
//! A folder is checked by its source files in the languages a server is known for, the
//! most recently changed first, at most [`crate::lsp::MAX_FOLDER_FILES`]; what ignore
//! files rule out and the folders that are not the project's own work are left out, as
//! grep leaves them out.

use std::path::PathBuf;
use std::time::SystemTime;

use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::schema;
use crate::session::CallContext;
use crate::tool::{Access, ToolDef, ToolDoc, ToolOutput, parse_args};

/// The `diagnostics` tool's definition.
pub fn definition() -> ToolDef {
    ToolDef {
        name: "diagnostics",
        summary: "The language servers' errors for a file, a folder or the project",
        description: "Ask the project's language servers (pyright or basedpyright, \
            typescript-language-server, rust-analyzer, gopls, clangd, when installed) what \
            is wrong now with a file, a folder or the whole project (`path`, default the \
            working directory; `paths` for several), e.g. to check that everything type-checks before you finish. \
            One line per problem, `path:line:col: severity: message [code]`, errors first. \
            A folder is checked by its 50 most recently changed source files. write, edit \
            and apply_patch already report the problems of the files they change.",
        permission: "read",
        schema: parameters,
        execute,
        access: Some(access),
        precheck: None,
        checkpoint: None,
        needs: None,
        after_changes: None,
        doc: ToolDoc {
            output: "A first line `Checked N files` (with `of M, the most recently changed` \
                when a folder holds more than 50), then per language `Diagnostics (SERVER): \
                N errors` (or `no errors`, or why the server could not answer in time), then \
                one line per problem, `path:line:col: severity: message [code]`, errors \
                first, at most lsp.max_lines, then `… N more`. A language without a server \
                gets `No LANGUAGE server: WHY` with what to install. metadata: checked, \
                files_found, diagnostics (remaining, files with their items, servers with \
                their state and elapsed_ms).",
            errors: "`Path not found: PATH` (with `Did you mean:`); `No source file in PATH \
                is in a language a server is known for`.",
            examples: &[
                ("Check the whole project", "tinytool diagnostics"),
                ("Check one file", "tinytool diagnostics src/app.py"),
                ("Check two folders", "tinytool diagnostics src tests"),
            ],
        },
    }
}

fn parameters() -> Value {
    schema::object(
        json!({
            "path": {
                "type": "string",
                "description": "File or folder to check (default: the working directory)."
            },
            "paths": {
                "type": "array",
                "items": {"type": "string"},
                "description": "Several files or folders to check, instead of path."
            }
        }),
        &[],
    )
}

fn access(ctx: &CallContext, args: &Map<String, Value>) -> Vec<Access> {
    asked_paths(args.get("path").and_then(Value::as_str), args.get("paths"))
        .iter()
        .map(|path| Access::path(ctx, "read", path))
        .collect()
}

/// The paths a call names: `paths`, else `path`, else the working directory.
fn asked_paths(path: Option<&str>, paths: Option<&Value>) -> Vec<String> {
    let many: Vec<String> = paths
        .and_then(Value::as_array)
        .map(|items| {
            items
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default();
    if !many.is_empty() {
        return many;
    }
    vec![path.unwrap_or(".").to_string()]
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct DiagnosticsArgs {
    path: Option<String>,
    paths: Option<Vec<String>>,
}

fn execute(ctx: &CallContext, args: Map<String, Value>) -> anyhow::Result<ToolOutput> {
    let args: DiagnosticsArgs = match parse_args(args) {
        Ok(args) => args,
        Err(output) => return Ok(output),
    };
    let paths = asked_paths(args.path.as_deref(), args.paths.map(Value::from).as_ref());
    let mut files: Vec<PathBuf> = Vec::new();
    let mut found = 0;
    let mut shown_all = Vec::new();
    for input in &paths {
        let root = ctx.resolve(input);
        let shown = ctx.display(&root);
        let meta = match crate::search::root_metadata(ctx, &root, &shown) {
            Ok(meta) => meta,
            Err(output) => return Ok(output),
        };
        if meta.is_dir() {
            let (mut some, total) = sources_in(ctx, &root);
            found += total;
            files.append(&mut some);
        } else {
            found += 1;
            files.push(root);
        }
        shown_all.push(shown);
    }
    files.sort();
    files.dedup();
    files.truncate(crate::lsp::MAX_FOLDER_FILES);
    let shown = shown_all.join(", ");
    if files.is_empty() || !files.iter().all(|f| crate::lsp::has_language(f)) {
        return Ok(ToolOutput::error(format!(
            "No source file in {shown} is in a language a server is known for (Python, \
             JavaScript/TypeScript, Rust, Go, C/C++)."
        )));
    }
    let report = crate::lsp::current(ctx, &files);
    let (note, metadata) = crate::lsp::render(ctx, &report);
    let mut text = if found > files.len() && paths.len() > 1 {
        format!("Checked {} files of {found}", files.len())
    } else if found > files.len() {
        format!(
            "Checked {} files of {found}, the most recently changed",
            files.len()
        )
    } else if files.len() == 1 {
        format!("Checked {}", ctx.display(&files[0]))
    } else {
        format!("Checked {} files", files.len())
    };
    text.push_str(&note);
    for (language, why) in report.unavailable() {
        text.push_str(&format!("\nNo {language} server: {why}"));
    }
    if note.is_empty() && report.unavailable().is_empty() {
        text.push_str("\nNo server was asked: diagnostics are off (lsp.enabled), or every file is one you may not read or larger than 4 MiB.");
    }
    let mut output = ToolOutput::text(text)
        .with("checked", files.len())
        .with("files_found", found);
    if let Some(metadata) = metadata {
        output = output.with("diagnostics", metadata);
    }
    Ok(output)
}

/// The source files below `root` in a language a server is known for, most recently
/// changed first, at most [`crate::lsp::MAX_FOLDER_FILES`], and how many there are.
fn sources_in(ctx: &CallContext, root: &std::path::Path) -> (Vec<PathBuf>, usize) {
    let not_project = ctx.session.config.not_project_for_search();
    let mut found: Vec<(SystemTime, PathBuf)> = Vec::new();
    let walk = ignore::WalkBuilder::new(root)
        .standard_filters(true)
        .follow_links(false)
        .filter_entry(move |entry| {
            entry.depth() == 0
                || !entry.file_type().is_some_and(|t| t.is_dir())
                || (!crate::skip_dirs::is_own(entry.file_name())
                    && not_project.judge(entry.path()).is_none())
        })
        .build();
    for entry in walk.flatten() {
        if !entry.file_type().is_some_and(|t| t.is_file())
            || !crate::lsp::has_language(entry.path())
        {
            continue;
        }
        let modified = entry
            .metadata()
            .ok()
            .and_then(|m| m.modified().ok())
            .unwrap_or(SystemTime::UNIX_EPOCH);
        found.push((modified, entry.into_path()));
    }
    let total = found.len();
    found.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    let files = found
        .into_iter()
        .take(crate::lsp::MAX_FOLDER_FILES)
        .map(|(_, path)| path)
        .collect();
    (files, total)
}
