//! `edit`: replace `old_string` with `new_string` in a file.
//!
//! The flow of a call:
//! 1. `old_string == new_string` is refused before the file is touched.
//! 2. The file's OS lock (`locks::PathLock`, in the per-user lock directory, keyed by the
//!    file's identity) is taken and held to the end, so edits of one file by concurrent
//!    processes are serialised and none is lost, whatever their `--dir`.
//!    The path is resolved (symlinks followed): a link is edited through, the policy judged
//!    the file really changed, and the atomic rename replaces that file, not the link. A
//!    FIFO, socket or device is refused before anything opens it.
//! 3. The file is decoded (`textdoc`): its BOM and CRLF endings are set aside.
//! 4. The cascade (`cascade`) finds the region — exact first, then the looser strategies
//!    (`strategies`), refusing ambiguity at every stage — and builds the replacement
//!    (`reindent`); a refusal says why and shows the closest region (`feedback`).
//! 5. The result is rendered with the file's conventions (BOM, line endings, final
//!    newline) where no byte outside the matched region changes, and written atomically
//!    with the file's permissions (`atomic`).
//! 6. The configured formatter runs and `file.modified` is published with operation
//!    `edit` (`aftercare`).
//!
//! An empty `old_string` on a missing file creates it with `new_string` (parents made, as
//! `write` does; `metadata.strategy` is `created`); on an existing non-empty file it stays
//! refused, since where it would go is ambiguous.
//!
//! Besides one replacement, a call may carry `edits` (several, applied in order, each to
//! the text the one before left, all or nothing: one lock, one write, one checkpoint) or
//! `insert_line` (`new_string` as whole lines after that line); `changes` reads the form.
//! A failing edit of `edits` writes nothing and says which it was; an insert past the end
//! of the file is refused with the lines there are.
//!
//! With `cell` (an index) or `cell_id`, the file is a Jupyter notebook and the changes
//! apply to that cell's source alone (`notebook`): its lines are the text every change
//! sees (line numbers count from the cell's first line), and only the cell's `"source"`
//! value is rewritten in the file, the way it was written; the diff is the cell's.
//!
//! A file the caller may not read (`secrets`: `.env` under the default policy) is edited
//! like any other, but no output shows its content: a refusal says why without the
//! closest region, and the diff is replaced by `[content of a secret file not shown]`.
//!
//! `metadata` of a success: path, strategy, adjustments, start_line/end_line (1-based span
//! of the first replaced region in the original file), spans (all of them), replacements,
//! diff (unified, 3 lines of context, LF endings, cut at 256 KB), formatter, and — only when
//! what was written is not `new_string` as given — reindented_lines
//! (`new_string` lines re-indented to the matched block) and file_lines_kept (lines
//! `old_string` and `new_string` share, written as the file has them). With `edits`:
//! path, edits_applied, replacements (all of them), edits (per edit: strategy, adjustments,
//! spans in the text that edit saw, replacements), diff, formatter. An insert: path,
//! strategy `insert`, start_line/end_line of the inserted lines, spans, replacements (1),
//! diff, formatter. Of a refusal: reason (`identical`, `empty_old_string`, `not_found`,
//! `ambiguous`, `stale`, `insert_line`), and with `edits` failed_edit (its index). Each
//! replacement not found as given is retried with read's marks taken out of its strings
//! (`read_shaped`); what that repaired is in `repairs`.
//!
//! A fuzzy match (strategies 8–10) forgives its differing line only where the difference
//! is whitespace or inside a comment (`comments`). A line that differs in code is refused
//! as `stale`, whether the edit replaces it (it would overwrite a change the model has not
//! seen) or keeps it (the model's picture of the file is wrong there).

mod cascade;
mod changes;
pub mod comments;
pub mod feedback;
mod levenshtein;
pub mod lines;
pub mod punctuation;
mod read_shaped;
pub mod reindent;
mod strategies;

use std::io::ErrorKind;

use serde_json::{Map, Value, json};

use crate::aftercare;
use crate::atomic::{self, Kind};
use crate::locks::PathLock;
use crate::notebook;
use crate::schema;
use crate::session::CallContext;
use crate::textdoc::{self, Splice, TextDoc};
use crate::tool::{Access, ToolDef, ToolDoc, ToolOutput};
use cascade::Refusal;
use changes::Change;

/// The `edit` tool's definition.
pub fn definition() -> ToolDef {
    ToolDef {
        name: "edit",
        summary: "Replace text in a file",
        description: "Edit a file by replacing old_string with new_string. old_string should be \
            copied exactly from the file (without the line-number prefix of read's output) and \
            include enough surrounding lines to be unique; with replace_all every occurrence is \
            replaced. When old_string does not match exactly, differences in indentation, \
            trailing whitespace, tabs versus spaces, line endings, escape sequences, Unicode \
            dashes/quotes/ellipses/spaces versus ASCII ones or blank boundary lines are \
            tolerated, and a block with a single differing interior line is \
            still found — but only when exactly one region of the file fits, and never when \
            that line differs in code (the file changed since you read it: the refusal names \
            the line); new_string is then re-indented to the \
            file's indentation. Text copied from read with its line-number prefixes, or \
            ending in read's cut mark, is read as meant. Ambiguous or unmatched edits are refused \
            with the closest region of the file shown. The file's line endings, BOM and final \
            newline are kept (a `[BOM]` copied from read's line 1 is no text and is ignored). An empty old_string creates a file that does not exist yet \
            (with its parent directories). Several replacements in one file: `edits`, a list \
            of {old_string, new_string, replace_all} applied in order, each to the text the \
            one before left; if one fails nothing is written. To insert lines without \
            replacing any: insert_line N with new_string (after line N; 0 inserts at the top). \
            In a Jupyter notebook (.ipynb), cell N (as read shows it) or cell_id applies the \
            change to that cell's source alone; the rest of the notebook is kept byte for \
            byte.",
        permission: "edit",
        schema: parameters,
        execute,
        access: Some(access),
        precheck: Some(precheck),
        checkpoint: Some(crate::tool::checkpoint_of_file_path),
        needs: None,
        after_changes: None,
        doc: ToolDoc {
            output: "`Replaced in PATH at lines A-B.` (or `Replaced N occurrences in PATH ...` with \
                replace_all), a note naming the strategy when old_string did not match exactly, \
                the formatter's note when one is configured, and `Read as meant: …` per repair \
                (read's line numbers removed from old_string, a line read cut matched to the \
                whole line). With cell or cell_id the summary names `PATH (cell N)` and its \
                lines are the cell's; metadata adds cell (its index) and cell_id, and the diff \
                is of the cell's source (`b/PATH#cellN`). metadata: repairs, path, strategy (created, exact, \
                line-trimmed, block-anchor, whitespace-normalized, indentation-flexible, \
                escape-normalized, trimmed-boundary, unicode-normalized, context-aware, block-anchor-relaxed, \
                multi-occurrence), adjustments, start_line, end_line, spans, replacements, diff \
                (unified), formatter, diagnostics, and when they happened reindented_lines and \
                file_lines_kept. When a language server runs for the file's language, a `Diagnostics (SERVER): …` line follows (problems introduced by the change, already there, fixed; or that the server is still busy) and one line per problem, `path:line:col: severity: message [code]`, errors first; metadata.diagnostics has remaining, introduced, fixed, already_there, others_introduced, others_fixed, files (path, items with line, column, end_line, end_column, severity, code, source, message, new), others and servers (language, server, state fresh/busy/down/refused/unavailable/failed, elapsed_ms, pid, message). \
                What a match that is not exact writes: a line that old_string and new_string \
                share (unchanged, at the corresponding place) is written as it stands in the \
                file, with the file's indentation, spacing and characters; every other line of \
                new_string is re-indented to the matched block (its depth relative to \
                old_string's first line, in the file's indent unit: tabs stay tabs). \
                metadata.reindented_lines counts the new_string lines written at another \
                indentation than given, metadata.file_lines_kept the shared lines written as \
                the file has them where new_string has them otherwise. With edits: `Applied N \
                edits to PATH:` and a line per edit (`edits[0]: Replaced in PATH at line L.`, its \
                lines those of the text that edit saw), with metadata.edits_applied, \
                metadata.edits (strategy, adjustments, spans, replacements of each) and the \
                diff of the whole change. With insert_line: `Inserted N lines in PATH after \
                line L (now lines A-B).`, metadata.strategy `insert`.",
            errors: "`old_string and new_string are identical`; `File not found: PATH` with \
                `Did you mean: PATH?` naming the file probably meant, as read does; \
                `PATH is not a regular file: it is a FIFO` (or a socket or device: never \
                opened); \
                `old_string not found in PATH.` followed by the closest region with line numbers \
                and whitespace made visible (tabs, trailing spaces, carriage returns and non-breaking \
                spaces are marked); \
                `old_string appears N times in PATH` with the regions (add context or use \
                replace_all); `old_string not found in PATH as written: line N reads `X`, \
                old_string expects `Y`` (a stale copy: the one line of the block that differs \
                in code, outside comments); an empty old_string on an existing non-empty file; a file that is not UTF-8. \
                Nothing is changed on error. \
                The fuzzy gate: a block whose lines do not all match (whitespace aside) is \
                accepted only when its first and last non-blank lines match, at most one line \
                between them differs, and the block has interior evidence for its size: some \
                other line between the first and last must match and carry text (at least 3 \
                letters or digits); with fewer than four matching non-blank lines the differing \
                line must also be at least half similar to the file's. So a 3-line block whose \
                middle line differs in content is refused as a different block, with the \
                closest region shown, however well its first and last lines match. \
                With edits: the failing edit's refusal, after `edits[I] (the Nth of M) failed, \
                so nothing was written`; an item without old_string or new_string, with \
                unknown fields or identical strings is refused before anything is read. \
                With insert_line: `insert_line L is past the end of PATH (N lines): give 0 \
                (at the top) to N (at the end)`; old_string or replace_all given with it. \
                With cell or cell_id: `Cannot edit a cell of PATH: ...` for a file that is no \
                notebook (bad JSON with its line and column, nbformat 3, a malformed cell), \
                `cell N does not exist: the notebook has T cells (0 to T-1)`, `no cell has id \
                ...; the ids are ...`; both given is refused; a refusal of the change names \
                `PATH (cell N)` and the cell's lines.",
            examples: &[
                (
                    "Rename a call",
                    "tinytool edit --file-path src/main.rs --old-string 'run(cfg)' --new-string 'run(&cfg)'",
                ),
                (
                    "Replace every occurrence",
                    "tinytool edit --file-path notes.md --old-string teh --new-string the --replace-all",
                ),
                (
                    "Two replacements, both or neither",
                    "tinytool edit --file-path src/lib.rs --edits '[{\"old_string\":\"fn a(\",\"new_string\":\"fn b(\"},{\"old_string\":\"a()\",\"new_string\":\"b()\",\"replace_all\":true}]'",
                ),
                (
                    "Insert a line after line 3",
                    "tinytool edit --file-path notes.md --insert-line 3 --new-string '- one more'",
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
                "description": "Path of the file to edit: absolute, or relative to the working directory."
            },
            "old_string": {
                "type": "string",
                "description": "The text to replace, copied from the file with enough context to be unique."
            },
            "new_string": {
                "type": "string",
                "description": "The text to put in its place (must differ from old_string); with insert_line, the lines to insert."
            },
            "replace_all": {
                "type": "boolean",
                "description": "Replace every occurrence of old_string (default false)."
            },
            "edits": {
                "type": "array",
                "description": "Several replacements instead of old_string/new_string, applied in order, each to the text the one before left; if one fails, nothing is written.",
                "items": {
                    "type": "object",
                    "properties": {
                        "old_string": {"type": "string", "description": "The text to replace."},
                        "new_string": {"type": "string", "description": "Its replacement."},
                        "replace_all": {"type": "boolean", "description": "Every occurrence (default false)."}
                    },
                    "required": ["old_string", "new_string"],
                    "additionalProperties": false
                }
            },
            "insert_line": {
                "type": "integer",
                "minimum": 0,
                "description": "Insert new_string as whole lines after this line (1-based; 0: at the top) instead of replacing old_string."
            },
            "cell": {
                "type": "integer",
                "minimum": 0,
                "description": "For a Jupyter notebook (.ipynb): edit only this cell's source, the cell's 0-based index as read shows it (`[cell N: ...]`); old_string, edits and insert_line then apply to that source alone."
            },
            "cell_id": {
                "type": "string",
                "description": "For a Jupyter notebook: edit only the source of the cell with this id (instead of cell)."
            }
        }),
        &["file_path"],
    )
}

/// The form of the call (`changes`) and its path's syntax, before the policy is asked.
fn precheck(args: &Map<String, Value>) -> Option<String> {
    crate::tool::check_paths(args)
        .or_else(|| {
            changes::changes(args)
                .err()
                .map(|problem| format!("Invalid arguments: {problem}"))
        })
        .or_else(|| {
            notebook::selector(args)
                .err()
                .map(|problem| format!("Invalid arguments: {problem}"))
        })
}

/// An edit needs `edit` of the resolved path.
fn access(ctx: &CallContext, args: &Map<String, Value>) -> Vec<Access> {
    Access::file_path(ctx, "edit", args)
}

fn execute(ctx: &CallContext, args: Map<String, Value>) -> anyhow::Result<ToolOutput> {
    let changes = match changes::changes(&args) {
        Ok(changes) => changes,
        Err(problem) => return Ok(ToolOutput::error(format!("Invalid arguments: {problem}"))),
    };
    let Some(file_path) = args.get("file_path").and_then(Value::as_str) else {
        return Ok(ToolOutput::error(
            "Invalid arguments: missing required parameter `file_path`",
        ));
    };
    let cell = match notebook::selector(&args) {
        Ok(cell) => cell,
        Err(problem) => return Ok(ToolOutput::error(format!("Invalid arguments: {problem}"))),
    };
    if let [Change::Replace { old, new, .. }] = changes.as_slice()
        && old == new
    {
        return Ok(ToolOutput::error(
            "old_string and new_string are identical: there is nothing to change. Give the new \
             text in new_string.",
        )
        .with("reason", "identical"));
    }
    let path = ctx.resolve(file_path);
    let shown = ctx.display(&path);
    // Learned without opening: a FIFO would block the call until killed.
    match atomic::kind(&path) {
        Ok(Kind::Directory) => {
            return Ok(ToolOutput::error(format!(
                "{shown} is a directory, not a file"
            )));
        }
        Ok(Kind::Special(what)) => return Ok(ToolOutput::error(atomic::not_regular(&shown, what))),
        Ok(Kind::File | Kind::Symlink) => {}
        Ok(Kind::Missing)
            if cell.is_none()
                && matches!(changes.first(), Some(Change::Replace { old, .. }) if old.is_empty()) =>
        {
            return Ok(create(ctx, &path, &changes));
        }
        Ok(Kind::Missing) => {
            let mut message = format!("File not found: {shown}");
            if let Some(suggestion) = ctx.did_you_mean(&path, crate::suggest::Want::Existing) {
                message.push('\n');
                message.push_str(&suggestion);
            }
            message.push_str("\n(To create a file, use write, or edit with an empty old_string.)");
            return Ok(ToolOutput::error(message));
        }
        Err(err) => {
            return Ok(ToolOutput::error(format!(
                "Error reading file: {shown}: {err}"
            )));
        }
    }
    let _lock = match PathLock::acquire(&path) {
        Ok(lock) => lock,
        Err(err) => {
            return Ok(ToolOutput::error(format!(
                "Error editing file: {shown}: cannot take its lock: {err}"
            )));
        }
    };
    // Checked from metadata, under the lock and before reading: a huge file (a sparse one
    // can claim terabytes) would exhaust memory, and a read-only mark is honoured.
    if let Some(refusal) = atomic::refuse_change(&path, &shown, Some(atomic::MAX_EDIT_BYTES)) {
        return Ok(ToolOutput::error(refusal));
    }
    // Read under the lock: what another process wrote just before is what we edit.
    let bytes = match atomic::read_regular(&path) {
        Ok(bytes) => bytes,
        Err(err) if err.kind() == ErrorKind::NotFound => {
            return Ok(ToolOutput::error(format!("File not found: {shown}")));
        }
        Err(err) => {
            return Ok(ToolOutput::error(format!(
                "Error reading file: {shown}: {err}"
            )));
        }
    };
    if let Some(cell) = cell {
        return Ok(edit_cell(ctx, &path, &shown, &bytes, &cell, &changes));
    }
    let Some(doc) = TextDoc::decode(&bytes) else {
        return Ok(ToolOutput::error(format!(
            "Cannot edit {shown}: it is not UTF-8 text. Use write to replace it entirely."
        )));
    };
    let applied = match apply(ctx, &path, &doc, &doc.text, &changes, &shown) {
        Ok(applied) => applied,
        Err(refusal) => return Ok(refusal),
    };
    let updated = applied.rendered(&doc);
    let new_text = TextDoc::decode(&updated)
        .map(|d| d.text)
        .unwrap_or_default();
    let diff = Diff {
        old: &doc.text,
        new: &new_text,
        name: shown.clone(),
    };
    let output = finish(ctx, &path, shown.clone(), &bytes, &updated, &applied, diff);
    // The server reads the file as written; other writers wait no longer for it.
    drop(_lock);
    if updated == bytes {
        return Ok(output);
    }
    Ok(crate::lsp::append(
        ctx,
        output,
        &[crate::lsp::Change {
            path: &path,
            before: Some(&bytes),
            deleted: false,
        }],
    ))
}

/// The texts the diff of an edit compares, and the name it shows for them.
struct Diff<'a> {
    old: &'a str,
    new: &'a str,
    name: String,
}

/// Writes what an edit made of the file (`updated`, from `bytes`) and says what it did:
/// the refusal of a change that would show a secret, the write, the formatter, the diff.
fn finish(
    ctx: &CallContext,
    path: &std::path::Path,
    shown: String,
    bytes: &[u8],
    updated: &[u8],
    applied: &Applied,
    diff: Diff,
) -> ToolOutput {
    if let Some(refusal) = crate::secrets::declassifying(ctx, path, updated, &shown) {
        return ToolOutput::error(refusal)
            .with("path", shown)
            .with("reason", "secret");
    }
    let (old_name, new_name) = (format!("a/{}", diff.name), format!("b/{}", diff.name));
    let diff = if crate::secrets::is_secret(ctx, path) {
        crate::secrets::hidden_diff(&old_name, &new_name)
    } else {
        crate::textdoc::unified_diff(diff.old, diff.new, &old_name, &new_name)
    };
    let mut text = applied.summary(&shown);
    for repair in &applied.repairs {
        text.push_str(&format!("\nRead as meant: {repair}"));
    }
    let mut formatter = None;
    if updated == bytes {
        text.push_str("\nThe new text equals what was there: the file is unchanged.");
        if applied.bom_marker {
            text.push_str(
                " (`[BOM]` in read's output stands for the file's byte order mark, which is no \
                 text: edit keeps it.)",
            );
        }
    } else {
        if let Err(err) = atomic::write(path, updated, atomic::mode_for(path)) {
            return ToolOutput::error(format!("Error writing file: {shown}: {err}"));
        }
        let formatted = aftercare::format(ctx, path);
        text.push_str(&formatted.note());
        formatter = formatted.metadata();
        aftercare::file_modified(ctx, path, "edit");
    }
    let mut output = applied.metadata(
        ToolOutput::text(text).with("path", shown),
        bounded_diff(diff),
    );
    if let Some(meta) = formatter {
        output = output.with("formatter", meta);
    }
    if !applied.repairs.is_empty() {
        output = output.with("repairs", json!(applied.repairs));
    }
    output
}

/// An edit of one notebook cell's source (`cell` or `cell_id`): the changes apply to that
/// source alone, and only its `"source"` value is rewritten in the file
/// (`notebook::replace_source`), written the way it was.
fn edit_cell(
    ctx: &CallContext,
    path: &std::path::Path,
    shown: &str,
    bytes: &[u8],
    cell: &notebook::Selector,
    changes: &[Change],
) -> ToolOutput {
    let cannot = |why: String| {
        ToolOutput::error(format!("Cannot edit a cell of {shown}: {why}")).with("path", shown)
    };
    let Ok(text) = std::str::from_utf8(bytes) else {
        return cannot("the file is not UTF-8 text, so no notebook".into());
    };
    let parsed = match notebook::parse(bytes) {
        Ok(parsed) => parsed,
        Err(why) => return cannot(why),
    };
    let index = match parsed.find(cell) {
        Ok(index) => index,
        Err(why) => return cannot(why),
    };
    let source = &parsed.cells[index].source;
    let Some(doc) = TextDoc::decode(source.as_bytes()) else {
        return cannot("the cell's source is not text".into());
    };
    let named = format!("{shown} (cell {index})");
    let applied = match apply(ctx, path, &doc, &doc.text, changes, &named) {
        Ok(applied) => applied,
        Err(refusal) => return refusal.with("cell", index),
    };
    let new_source = String::from_utf8_lossy(&applied.rendered(&doc)).into_owned();
    let updated = match notebook::replace_source(text, index, &new_source) {
        Ok(updated) => updated,
        Err(why) => return cannot(why),
    };
    let diff = Diff {
        old: source,
        new: &new_source,
        name: format!("{shown}#cell{index}"),
    };
    let mut output = finish(ctx, path, named, bytes, updated.as_bytes(), &applied, diff)
        .with("path", shown)
        .with("cell", index);
    if let Some(id) = &parsed.cells[index].id {
        output = output.with("cell_id", id.as_str());
    }
    output
}

/// What one change did.
enum Step {
    /// A replacement, as the cascade made it.
    Replaced(cascade::Edit),
    /// An insert: the line it went after and how many lines it added.
    Inserted { after: u64, lines: u64 },
}

/// A call's changes applied to a text.
struct Applied {
    /// The text after them all.
    text: String,
    /// Each change's step, in order.
    steps: Vec<Step>,
    /// With one change, its splices of the original text.
    single: Option<Vec<Splice>>,
    /// What was repaired in the strings (`read_shaped`), each line saying which edit.
    repairs: Vec<String>,
    /// A `[BOM]` marker copied from read's line 1 was taken out of an old_string.
    bom_marker: bool,
}

impl Applied {
    /// What the text becomes, with `doc`'s conventions. One change is rendered from its own
    /// splices; several from the one splice between the original and the final text: either
    /// way no byte outside what changed is rewritten.
    fn rendered(&self, doc: &TextDoc) -> Vec<u8> {
        match &self.single {
            Some(splices) => doc.render(splices, None),
            None => doc.render(&[changes::difference(&doc.text, &self.text)], None),
        }
    }

    /// The first lines of the output.
    fn summary(&self, shown: &str) -> String {
        match self.steps.as_slice() {
            [Step::Replaced(edit)] => summary(edit, shown),
            [Step::Inserted { after, lines }] => inserted(shown, *after, *lines),
            steps => {
                let mut text = format!("Applied {} edits to {shown}:", steps.len());
                for (i, step) in steps.iter().enumerate() {
                    let line = match step {
                        Step::Replaced(edit) => summary(edit, shown),
                        Step::Inserted { after, lines } => inserted(shown, *after, *lines),
                    };
                    text.push_str(&format!("\nedits[{i}]: {}", line.replace('\n', "\n  ")));
                }
                text
            }
        }
    }

    /// The metadata of a success (path already in `output`), with its diff.
    fn metadata(&self, output: ToolOutput, diff: String) -> ToolOutput {
        match self.steps.as_slice() {
            [Step::Replaced(edit)] => {
                let (start_line, end_line) = edit.spans.first().copied().unwrap_or((1, 1));
                let spans: Vec<Value> = edit.spans.iter().map(|(a, b)| json!([a, b])).collect();
                let mut output = output
                    .with("strategy", edit.strategy)
                    .with("adjustments", json!(edit.adjustments))
                    .with("start_line", start_line)
                    .with("end_line", end_line)
                    .with("spans", spans)
                    .with("replacements", edit.splices.len())
                    .with("diff", diff);
                // Say when what was written is not new_string as given.
                if edit.writing.reindented > 0 {
                    output = output.with("reindented_lines", edit.writing.reindented);
                }
                if edit.writing.kept_from_file > 0 {
                    output = output.with("file_lines_kept", edit.writing.kept_from_file);
                }
                output
            }
            [Step::Inserted { after, lines }] => output
                .with("strategy", "insert")
                .with("adjustments", json!([]))
                .with("start_line", after + 1)
                .with("end_line", after + lines)
                .with("spans", json!([[after + 1, after + lines]]))
                .with("replacements", 1)
                .with("diff", diff),
            steps => {
                let mut total = 0;
                let each: Vec<Value> = steps
                    .iter()
                    .map(|step| match step {
                        Step::Replaced(edit) => {
                            total += edit.splices.len();
                            json!({
                                "strategy": edit.strategy,
                                "adjustments": edit.adjustments,
                                "spans": edit.spans.iter().map(|(a, b)| json!([a, b])).collect::<Vec<_>>(),
                                "replacements": edit.splices.len(),
                            })
                        }
                        Step::Inserted { after, lines } => {
                            total += 1;
                            json!({
                                "strategy": "insert",
                                "spans": [[after + 1, after + lines]],
                                "replacements": 1,
                            })
                        }
                    })
                    .collect();
                output
                    .with("edits_applied", steps.len())
                    .with("replacements", total)
                    .with("edits", each)
                    .with("diff", diff)
            }
        }
    }
}

/// The output line of an insert.
fn inserted(shown: &str, after: u64, lines: u64) -> String {
    let plural = if lines == 1 { "" } else { "s" };
    let place = if after == 0 {
        "at the top".to_string()
    } else {
        format!("after line {after}")
    };
    let now = if lines == 1 {
        format!("line {}", after + 1)
    } else {
        format!("lines {}-{}", after + 1, after + lines)
    };
    format!("Inserted {lines} line{plural} in {shown} {place} (now {now}).")
}

/// Applies `changes` in order to `text` (the file's normalised text, or what a created
/// file starts with); the refusal of the first that cannot be made, with nothing written.
fn apply(
    ctx: &CallContext,
    path: &std::path::Path,
    doc: &TextDoc,
    text: &str,
    changes: &[Change],
    shown: &str,
) -> Result<Applied, ToolOutput> {
    let several = changes.len() > 1;
    let mut current = text.to_string();
    let mut steps = Vec::new();
    let mut single = None;
    let mut repairs = Vec::new();
    let mut bom_marker = false;
    for (i, change) in changes.iter().enumerate() {
        let (splices, step) = match change {
            Change::Replace { old, new, all } => match replace(doc, &current, old, new, *all) {
                Ok((edit, repaired, marker)) => {
                    let which = if several {
                        format!("edits[{i}]: ")
                    } else {
                        String::new()
                    };
                    repairs.extend(repaired.into_iter().map(|r| format!("{which}{r}")));
                    bom_marker |= marker;
                    (edit.splices.clone(), Step::Replaced(edit))
                }
                Err(refusal) => {
                    // Line endings are the file's only before the first change.
                    let original = i == 0 && current == doc.text;
                    let output = refused(ctx, path, doc, &current, original, &refusal, old, shown);
                    return Err(failed_step(output, i, changes.len(), several));
                }
            },
            Change::Insert { after, text } => match changes::insertion(&current, *after, text) {
                Some((splice, lines)) => (
                    vec![splice],
                    Step::Inserted {
                        after: *after,
                        lines,
                    },
                ),
                None => {
                    let lines = changes::line_count(&current);
                    let output = ToolOutput::error(format!(
                        "insert_line {after} is past the end of {shown} ({lines} line{}): give \
                         0 (at the top) to {lines} (at the end)",
                        if lines == 1 { "" } else { "s" }
                    ))
                    .with("path", shown)
                    .with("reason", "insert_line");
                    return Err(failed_step(output, i, changes.len(), several));
                }
            },
        };
        current = changes::spliced(&current, &splices);
        if !several {
            single = Some(splices);
        }
        steps.push(step);
    }
    Ok(Applied {
        text: current,
        steps,
        single,
        repairs,
        bom_marker,
    })
}

/// One replacement in `current`: the cascade on the strings as given (without a `[BOM]`
/// marker copied from read's first line, which is no text), then, when they are not found,
/// with read's marks taken out (`read_shaped`). Returns the edit, the repairs, and whether a
/// BOM marker was dropped.
fn replace(
    doc: &TextDoc,
    current: &str,
    old: &str,
    new: &str,
    all: bool,
) -> Result<(cascade::Edit, Vec<String>, bool), Refusal> {
    // The BOM is not in the text (it is kept aside and written back), so neither is the
    // marker read shows for it.
    let bom = doc.conventions.bom;
    let marker_is_text = current.starts_with(textdoc::BOM_MARKER);
    let old_string = textdoc::strip_bom_marker(old, bom, marker_is_text);
    let marker = old_string.len() < old.len();
    let new_string = if marker || (!old_string.is_empty() && current.starts_with(old_string)) {
        textdoc::strip_bom_marker(new, bom, marker_is_text)
    } else {
        new
    };
    let refusal = match cascade::run(current, old_string, new_string, all) {
        Ok(edit) => return Ok((edit, Vec::new(), marker)),
        Err(refusal) => refusal,
    };
    if let Refusal::NotFound | Refusal::Stale { .. } = refusal
        && let Some(repaired) = read_shaped::repair(
            current,
            &old_string.replace("\r\n", "\n"),
            &new_string.replace("\r\n", "\n"),
        )
        && let Ok(edit) = cascade::run(current, &repaired.old, &repaired.new, all)
    {
        return Ok((edit, repaired.repairs, marker));
    }
    Err(refusal)
}

/// The refusal of a replacement the cascade could not make in `text`.
#[allow(clippy::too_many_arguments)]
fn refused(
    ctx: &CallContext,
    path: &std::path::Path,
    doc: &TextDoc,
    text: &str,
    original: bool,
    refusal: &Refusal,
    old: &str,
    shown: &str,
) -> ToolOutput {
    let file = lines::FileLines::new(text);
    // The text has CRLF set aside; the view shows each line's CR where the file has one.
    let crlf = |i: usize| original && file.has_break(i) && doc.is_crlf_at(file.end(i));
    let message = if crate::secrets::is_secret(ctx, path) {
        hidden_refusal(refusal, shown)
    } else {
        feedback::message(refusal, &file, &crlf, old, shown)
    };
    let reason = match refusal {
        Refusal::EmptyOld => "empty_old_string",
        Refusal::NotFound => "not_found",
        Refusal::Ambiguous { .. } => "ambiguous",
        Refusal::Stale { .. } => "stale",
    };
    ToolOutput::error(message)
        .with("path", shown)
        .with("reason", reason)
}

/// A refusal of the `i`th of `count` changes: with `edits`, it says which, and that
/// nothing was written.
fn failed_step(output: ToolOutput, i: usize, count: usize, several: bool) -> ToolOutput {
    if !several {
        return output;
    }
    let ToolOutput {
        body,
        is_error,
        metadata,
    } = output;
    let text = match body {
        crate::tool::Body::Text(text) => text,
        _ => String::new(),
    };
    let seen = if i == 0 {
        String::new()
    } else {
        " Its line numbers are those of the text the edits before it left.".to_string()
    };
    let mut failed = ToolOutput {
        body: crate::tool::Body::Text(format!(
            "edits[{i}] (the {} of {count}) failed, so nothing was written: the edits apply \
             all or none.{seen}\n{text}",
            ordinal(i + 1)
        )),
        is_error,
        metadata,
    };
    failed = failed.with("failed_edit", i);
    failed
}

fn ordinal(n: usize) -> String {
    let suffix = match (n % 10, n % 100) {
        (_, 11..=13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("{n}{suffix}")
}

/// An empty `old_string` on a missing file creates it with
/// `new_string` (and its parent directories), as `write` would; the lock is taken as for
/// any edit, and a file that appeared meanwhile is not overwritten. With `edits`, the
/// others apply to that text before anything is written.
fn create(ctx: &CallContext, path: &std::path::Path, changes: &[Change]) -> ToolOutput {
    let shown = ctx.display(path);
    let Some(Change::Replace { new: first, .. }) = changes.first() else {
        return ToolOutput::error(format!("File not found: {shown}"));
    };
    let rest = &changes[1..];
    let content = if rest.is_empty() {
        first.clone()
    } else {
        let start = first.replace("\r\n", "\n");
        let Some(doc) = TextDoc::decode(start.as_bytes()) else {
            // A Rust string is UTF-8: decoding it cannot fail.
            return ToolOutput::error(format!("Cannot edit {shown}: new_string is not UTF-8"));
        };
        match apply(ctx, path, &doc, &start, rest, &shown) {
            Ok(applied) => applied.text,
            Err(refusal) => return refusal,
        }
    };
    if let Err(err) = atomic::create_parents(path) {
        return ToolOutput::error(format!(
            "Error creating directory: {}: {err}",
            path.parent().map(|p| ctx.display(p)).unwrap_or_default()
        ));
    }
    let _lock = match PathLock::acquire(path) {
        Ok(lock) => lock,
        Err(err) => {
            return ToolOutput::error(format!(
                "Error editing file: {shown}: cannot take its lock: {err}"
            ));
        }
    };
    if !matches!(atomic::kind(path), Ok(Kind::Missing)) {
        return ToolOutput::error(format!(
            "{shown} appeared while it was being created: an empty old_string only creates a \
             missing file. Read it and edit it."
        ))
        .with("path", shown)
        .with("reason", "empty_old_string");
    }
    let bytes = crate::textdoc::Conventions::default().apply_whole(&content);
    if let Err(err) = atomic::write(path, &bytes, atomic::mode_for(path)) {
        return ToolOutput::error(format!("Error writing file: {shown}: {err}"));
    }
    let formatted = aftercare::format(ctx, path);
    aftercare::file_modified(ctx, path, "edit");
    let new_text = String::from_utf8_lossy(&bytes).into_owned();
    let diff = crate::textdoc::unified_diff("", &new_text, "/dev/null", &format!("b/{shown}"));
    let lines = new_text.lines().count().max(1);
    let edits = if rest.is_empty() {
        String::new()
    } else {
        format!(", then the {} other edits applied to it", rest.len())
    };
    let mut output = ToolOutput::text(format!(
        "Created {shown} with new_string ({} bytes): old_string was empty and the file did not exist{edits}.{}",
        bytes.len(),
        formatted.note()
    ))
    .with("path", shown)
    .with("strategy", "created")
    .with("created", true)
    .with("adjustments", json!([]))
    .with("start_line", 1)
    .with("end_line", lines)
    .with("spans", json!([[1, lines]]))
    .with("replacements", 1)
    .with("diff", bounded_diff(diff));
    if !rest.is_empty() {
        output = output.with("edits_applied", changes.len());
    }
    if let Some(meta) = formatted.metadata() {
        output = output.with("formatter", meta);
    }
    drop(_lock);
    crate::lsp::append(
        ctx,
        output,
        &[crate::lsp::Change {
            path,
            before: None,
            deleted: false,
        }],
    )
}

/// The refusal of an edit of a file the caller may not read (`secrets`): why, and where
/// for an ambiguous match (line numbers only), but no line of the file.
fn hidden_refusal(refusal: &Refusal, shown: &str) -> String {
    let hidden = crate::secrets::HIDDEN;
    match refusal {
        Refusal::EmptyOld => format!(
            "old_string is empty but {shown} is not: an empty old_string only creates a file \
             that does not exist, it never overwrites one. To change part of it, give the exact \
             text to replace as old_string; to replace the whole file, use write."
        ),
        Refusal::NotFound | Refusal::Stale { .. } => format!(
            "old_string not found in {shown}. {hidden}: the policy does not allow reading it, \
             so its closest region is not shown."
        ),
        Refusal::Ambiguous { count, spans, .. } => {
            let places: Vec<String> = spans
                .iter()
                .take(MAX_LISTED_SPANS)
                .map(|(a, b)| format!("{a}-{b}"))
                .collect();
            format!(
                "old_string appears {count} times in {shown} (lines {}). Use replace_all to \
                 change every occurrence, or include more surrounding lines in old_string to \
                 make the match unique. {hidden}: the policy does not allow reading it.",
                places.join(", ")
            )
        }
    }
}

/// Replaced regions the output lists by line (all of them are in `metadata.spans`).
const MAX_LISTED_SPANS: usize = 20;
/// Bytes of `metadata.diff` kept; a larger diff is cut at a line boundary and says so.
const MAX_DIFF_BYTES: usize = 256 * 1024;

/// `diff` cut to [`MAX_DIFF_BYTES`] at a line boundary, with a last line saying how much was
/// left out.
pub fn bounded_diff(diff: String) -> String {
    if diff.len() <= MAX_DIFF_BYTES {
        return diff;
    }
    let cut = diff[..MAX_DIFF_BYTES].rfind('\n').map_or(0, |i| i + 1);
    format!(
        "{}… diff cut: {} more bytes\n",
        &diff[..cut],
        diff.len() - cut
    )
}

/// The first lines of a successful edit's output.
fn summary(edit: &cascade::Edit, shown: &str) -> String {
    let places: Vec<String> = edit
        .spans
        .iter()
        .take(MAX_LISTED_SPANS)
        .map(|&(a, b)| {
            if a == b {
                a.to_string()
            } else {
                format!("{a}-{b}")
            }
        })
        .collect();
    let mut text = if edit.spans.len() == 1 {
        let plural = if places[0].contains('-') { "s" } else { "" };
        format!("Replaced in {shown} at line{plural} {}.", places[0])
    } else {
        let more = edit.spans.len().saturating_sub(MAX_LISTED_SPANS);
        let more = if more > 0 {
            format!(" and {more} more")
        } else {
            String::new()
        };
        format!(
            "Replaced {} occurrences in {shown} (lines {}{more}).",
            edit.spans.len(),
            places.join(", ")
        )
    };
    let mut how: Vec<&str> = Vec::new();
    if edit.adjustments.contains(&"trimmed-boundary") {
        how.push("blank lines at its ends that the file does not have were dropped");
    }
    if edit.adjustments.contains(&"unescaped-tabs") {
        how.push("its literal \\t were read as tabs");
    }
    if edit.adjustments.contains(&"unescaped-sequences") {
        how.push(
            "its escape sequences (\\n, \\t, \\\", \\', \\$, \\\\ ...) were read as the characters they \
             stand for, in new_string too",
        );
    }
    match edit.strategy {
        "exact" | "trimmed-boundary" => {}
        "escape-normalized" => how.push("tabs and special spaces were treated as spaces"),
        "unicode-normalized" => how.push(
            "dashes, curly quotes, ellipses and special spaces were compared as their ASCII forms",
        ),
        "context-aware" | "block-anchor-relaxed" | "multi-occurrence" => {
            how.push("one line of it differs from the file, whose line was kept unless new_string changes it")
        }
        _ => how.push("whitespace differences were ignored and new_string follows the file's indentation"),
    }
    if !how.is_empty() {
        text.push_str(&format!(
            "\nold_string did not match exactly ({}): {}.",
            edit.strategy,
            how.join("; ")
        ));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::Session;

    #[test]
    fn the_access_is_edit_of_the_resolved_path() {
        let tmp = tempfile::tempdir().unwrap();
        let session = Session::new("s", tmp.path());
        let ctx = CallContext::new(&session, "edit");
        let args = json!({"file_path": "a/../b.txt", "old_string": "x", "new_string": "y"});
        let accesses = access(&ctx, args.as_object().unwrap());
        assert_eq!(accesses.len(), 1);
        assert_eq!(
            (
                accesses[0].permission.as_str(),
                accesses[0].pattern.as_str()
            ),
            ("edit", "b.txt")
        );
        assert_eq!(accesses[0].path, Some(session.dir.join("b.txt")));
    }

    #[test]
    fn large_diffs_are_cut_at_a_line() {
        let diff: String = (0..40_000).map(|i| format!("+line {i}\n")).collect();
        let cut = bounded_diff(diff.clone());
        assert!(cut.len() < MAX_DIFF_BYTES + 64);
        assert!(cut.ends_with(" more bytes\n"), "{}", &cut[cut.len() - 60..]);
        assert!(cut.contains("\n… diff cut: "));
        assert_eq!(bounded_diff("small\n".into()), "small\n");
    }
}
