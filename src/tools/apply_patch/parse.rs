//! The two patch formats apply_patch accepts, parsed into one model ([`Patch`]).
//!
//! The format is detected: a line reading `*** Begin Patch` means the envelope, otherwise a
//! `--- `/`+++ ` pair or a `diff --git` line means a unified diff. CRLF line breaks in the
//! patch are read as LF, and a Markdown fence (```` ``` ````) around the whole patch is
//! ignored.
//!
//! ## The envelope (Codex's apply_patch format)
//!
//! ```text
//! patch      = [ prose ] "*** Begin Patch" NL { operation } "*** End Patch" [ NL prose ]
//! operation  = add | delete | update
//! add        = "*** Add File: " path NL { "+" line NL }
//! delete     = "*** Delete File: " path NL
//! update     = "*** Update File: " path NL [ "*** Move to: " path NL ] { chunk }
//! chunk      = { "@@" [ " " scope-line ] NL } change { change } [ "*** End of File" NL ]
//! change     = ( " " | "-" | "+" ) line NL      (context, removed, added)
//!            | NL                               (an empty context line)
//! ```
//! - Every `***` marker and `@@` line may be padded with whitespace on either side.
//! - The first chunk of an update may omit its `@@` line; an `@@` line starts a new chunk,
//!   and several in a row are nested scopes: each scope line is located (in order, after
//!   the previous chunk) before the chunk's context.
//! - `*** End of File` anchors its chunk at the end of the file.
//! - In an added file, an empty line between `+` lines is an empty content line.
//! - Blank lines before a chunk has begun (between chunks, after `*** End of File`) are
//!   skipped, as Codex skips them; unprefixed blank lines (or whitespace-only lines not
//!   starting with a space) ending an update's last chunk, before the next operation or
//!   `*** End Patch`, are spacing and dropped. An explicit ` ` context line always stays.
//! - An update needs at least one chunk unless it only moves the file.
//!
//! Slips read as meant (listed in [`Patch::repairs`]): a marker closed with ` ***`
//! (`*** Begin Patch ***`); no `*** End Patch` once there is an operation (the patch ends at
//! the end of the text or at a closing Markdown fence); a chunk line without a prefix is a
//! context line that lost its space (it must still match the file), and then the chunk's
//! ` ` lines keep their leading space as their own, since a model that dropped the prefix
//! dropped it everywhere.
//!
//! ## Unified diffs (`diff -u`, `git diff`)
//!
//! ```text
//! diff       = { [ junk ] file }
//! file       = [ "diff --git " a-path " " b-path NL { extended NL } ]
//!              [ "--- " old-path [ TAB date ] NL "+++ " new-path [ TAB date ] NL { hunk } ]
//! extended   = "new file mode " mode | "deleted file mode " mode | "old mode " mode
//!            | "new mode " mode | "rename from " path | "rename to " path
//!            | "similarity index " n "%" | "dissimilarity index " n "%" | "index " ...
//! hunk       = "@@ -" start [ "," count ] " +" start [ "," count ] " @@" [ heading ] NL
//!              { ( " " | "-" | "+" ) line NL | NL | "\ No newline at end of file" NL }
//! ```
//! - `/dev/null` as the old path adds a file, as the new path deletes one; a different new
//!   path (or `rename from`/`rename to`) moves it. The `a/` and `b/` prefixes are removed when
//!   the diff uses them (a `diff --git` line, or `a/…` against `b/…`); C-quoted paths are
//!   unquoted.
//! - The counts of a hunk delimit its body; when they are wrong, the body ends at the next
//!   `@@`, `diff --git` or `---`/`+++` pair, or at a line that is not a hunk line.
//! - `\ No newline at end of file` after a removed (or context) line says the file lacks a
//!   final newline; after an added (or context) line, that the result must lack it.
//! - Binary patches and copies are refused.
//! - A bare `@@` (or `@@ scope` without line numbers) starts a hunk that is located by its
//!   lines alone (with the scope line first, as in the envelope); its body ends at the next
//!   hunk or file section.
//! - While a hunk's counts expect more lines, a line without a prefix that is followed by
//!   more hunk lines is a context line that lost its space (as in the envelope).

/// Which format a patch was written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// `*** Begin Patch` … `*** End Patch`.
    Envelope,
    /// `---`/`+++`/`@@`.
    Unified,
}

/// A parsed patch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Patch {
    /// The format it was written in.
    pub format: Format,
    /// The file operations, in patch order.
    pub ops: Vec<FileOp>,
    /// Slips in the patch's shape that were read as meant (module doc), one line each.
    pub repairs: Vec<String>,
}

/// One operation on one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileOp {
    /// Create (or overwrite) a file with these lines.
    Add {
        /// The path as written.
        path: String,
        /// The content's lines.
        lines: Vec<String>,
        /// The content must not end with a newline.
        no_newline: bool,
        /// Permission bits requested by a git header.
        mode: Option<u32>,
        /// 1-based line of the patch where the operation starts.
        line: usize,
    },
    /// Remove a file.
    Delete {
        /// The path as written.
        path: String,
        /// The lines a unified diff says the file has (checked before deleting).
        lines: Option<Vec<String>>,
        /// 1-based line of the patch.
        line: usize,
    },
    /// Change a file (and maybe move it).
    Update {
        /// The path as written.
        path: String,
        /// Where the file goes.
        move_to: Option<String>,
        /// The changes, in order.
        hunks: Vec<Hunk>,
        /// Permission bits requested by a git header.
        mode: Option<u32>,
        /// 1-based line of the patch.
        line: usize,
    },
}

impl FileOp {
    /// The paths the operation touches, as written: the file, and the destination of a move.
    pub fn paths(&self) -> Vec<&str> {
        match self {
            FileOp::Add { path, .. } | FileOp::Delete { path, .. } => vec![path],
            FileOp::Update { path, move_to, .. } => {
                let mut out = vec![path.as_str()];
                if let Some(dest) = move_to {
                    out.push(dest);
                }
                out
            }
        }
    }
}

/// One chunk of changes to a file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Hunk {
    /// Scope lines (`@@ scope`) located first, in order.
    pub scopes: Vec<String>,
    /// The 1-based start line the unified header gives for the old side.
    pub hint: Option<usize>,
    /// Context and removed lines: what must be in the file.
    pub old: Vec<String>,
    /// Context and added lines: what replaces it.
    pub new: Vec<String>,
    /// Anchored at the end of the file.
    pub end_of_file: bool,
    /// The old side ends without a final newline.
    pub old_no_newline: bool,
    /// The new side ends without a final newline.
    pub new_no_newline: bool,
    /// 1-based line of the patch where the hunk starts.
    pub line: usize,
}

/// Why a patch cannot be parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    /// 1-based line of the patch (0: the patch as a whole).
    pub line: usize,
    /// What is wrong and what is expected.
    pub message: String,
}

impl std::fmt::Display for ParseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.line == 0 {
            f.write_str(&self.message)
        } else {
            write!(f, "line {}: {}", self.line, self.message)
        }
    }
}

fn error(line: usize, message: impl Into<String>) -> ParseError {
    ParseError {
        line,
        message: message.into(),
    }
}

/// Parses a patch in either format.
pub fn parse(text: &str) -> Result<Patch, ParseError> {
    let text = text.replace("\r\n", "\n");
    let mut lines: Vec<&str> = text.split('\n').collect();
    if lines.last() == Some(&"") {
        lines.pop();
    }
    strip_fence(&mut lines);
    if lines.iter().all(|l| l.trim().is_empty()) {
        return Err(error(0, "The patch is empty."));
    }
    if lines.iter().any(|l| marker(l) == BEGIN)
        || lines.iter().any(|l| {
            let m = marker(l);
            m.starts_with(UPDATE) || m.starts_with(ADD) || m.starts_with(DELETE)
        })
    {
        parse_envelope(&lines)
    } else if lines.iter().enumerate().any(|(i, l)| {
        l.starts_with("diff --git ")
            || (l.starts_with("--- ") && lines.get(i + 1).is_some_and(|n| n.starts_with("+++ ")))
    }) {
        parse_unified(&lines)
    } else {
        Err(error(
            0,
            "Unrecognized patch format: expected `*** Begin Patch` … `*** End Patch` (with `*** \
             Add File:`, `*** Delete File:` or `*** Update File:` sections) or a unified diff \
             (`--- a/PATH`, `+++ b/PATH`, `@@ -start,count +start,count @@` hunks).",
        ))
    }
}

/// Removes a Markdown fence around the whole patch (the line numbers in errors then count
/// from the fence's next line, which is what the model wrote as its patch).
fn strip_fence(lines: &mut Vec<&str>) {
    let first = lines.iter().position(|l| !l.trim().is_empty());
    let last = lines.iter().rposition(|l| !l.trim().is_empty());
    if let (Some(first), Some(last)) = (first, last)
        && first < last
        && lines[first].trim_start().starts_with("```")
        && lines[last].trim() == "```"
    {
        lines.truncate(last);
        lines.drain(..=first);
    }
}

const BEGIN: &str = "*** Begin Patch";
const END: &str = "*** End Patch";
const ADD: &str = "*** Add File:";
const DELETE: &str = "*** Delete File:";
const UPDATE: &str = "*** Update File:";
const MOVE: &str = "*** Move to:";
const EOF_MARK: &str = "*** End of File";

/// A line as a `***` marker: trimmed, and without the ` ***` some models close it with
/// (`*** Begin Patch ***`).
fn marker(line: &str) -> &str {
    let trimmed = line.trim();
    match trimmed.strip_suffix("***") {
        Some(rest) if trimmed.starts_with("***") && rest.len() > 3 => rest.trim_end(),
        _ => trimmed,
    }
}

/// A Markdown fence that closes a patch lacking `*** End Patch`: a fence line at the first
/// column, with no `***` marker after it. A fence anywhere else is text: a context line of a
/// Markdown file starts with ` ` then the fence.
fn closes_patch(lines: &[&str], i: usize) -> bool {
    lines[i].starts_with("```") && !lines[i + 1..].iter().any(|l| marker(l).starts_with("***"))
}

fn is_operation(trimmed: &str) -> bool {
    trimmed == END
        || trimmed.starts_with(ADD)
        || trimmed.starts_with(DELETE)
        || trimmed.starts_with(UPDATE)
}

fn parse_envelope(lines: &[&str]) -> Result<Patch, ParseError> {
    let mut repairs = Vec::new();
    let mut i = match lines.iter().position(|l| marker(l) == BEGIN) {
        Some(begin) => {
            if lines[begin].trim() != BEGIN {
                repairs.push(format!("read `{}` as `{BEGIN}`", lines[begin].trim()));
            }
            begin + 1
        }
        None => {
            repairs.push("no `*** Begin Patch`: read from the first file operation".to_string());
            lines
                .iter()
                .position(|l| {
                    let m = marker(l);
                    m.starts_with(UPDATE) || m.starts_with(ADD) || m.starts_with(DELETE)
                })
                .unwrap_or(0)
        }
    };
    let mut ops = Vec::new();
    loop {
        // The end of the text, or a closing fence, ends a patch that lacks `*** End Patch`
        // once it has an operation: what came before is whole (a cut-off hunk still has to
        // match the file).
        let at_end = match lines.get(i) {
            None => true,
            Some(_) => closes_patch(lines, i),
        };
        if at_end {
            if ops.is_empty() {
                return Err(error(
                    lines.len(),
                    "The patch ends without `*** End Patch` (was it cut off?).",
                ));
            }
            repairs.push("no `*** End Patch`: the patch was read to its last line".to_string());
            break;
        }
        let raw = lines[i];
        let trimmed = marker(raw);
        let number = i + 1;
        if trimmed == END {
            break;
        }
        if trimmed.is_empty() {
            i += 1;
            continue;
        }
        if let Some(path) = trimmed.strip_prefix(ADD) {
            let path = file_path(path, number)?;
            i += 1;
            let mut content = Vec::new();
            while let Some(line) = lines.get(i) {
                if let Some(rest) = line.strip_prefix('+') {
                    content.push(rest.to_string());
                    i += 1;
                    continue;
                }
                // An empty line between `+` lines is an empty line of the content whose `+`
                // the model left out.
                let resumes = lines[i..]
                    .iter()
                    .find(|l| !l.is_empty())
                    .is_some_and(|l| l.starts_with('+'));
                if line.is_empty() && resumes {
                    content.push(String::new());
                    i += 1;
                    continue;
                }
                break;
            }
            ops.push(FileOp::Add {
                path,
                lines: content,
                no_newline: false,
                mode: None,
                line: number,
            });
        } else if let Some(path) = trimmed.strip_prefix(DELETE) {
            ops.push(FileOp::Delete {
                path: file_path(path, number)?,
                lines: None,
                line: number,
            });
            i += 1;
        } else if let Some(path) = trimmed.strip_prefix(UPDATE) {
            let path = file_path(path, number)?;
            i += 1;
            let mut move_to = None;
            if let Some(dest) = lines.get(i).and_then(|l| l.trim().strip_prefix(MOVE)) {
                move_to = Some(file_path(dest, i + 1)?);
                i += 1;
            }
            let (hunks, next) = parse_chunks(lines, i, &path, &mut repairs)?;
            i = next;
            if hunks.is_empty() && move_to.is_none() {
                return Err(error(
                    number,
                    format!(
                        "`*** Update File: {path}` has no changes: add `@@` chunks with context \
                         (` `), removed (`-`) and added (`+`) lines."
                    ),
                ));
            }
            ops.push(FileOp::Update {
                path,
                move_to,
                hunks,
                mode: None,
                line: number,
            });
        } else {
            return Err(error(
                number,
                format!(
                    "`{trimmed}` is not a valid file operation. Valid ones: `*** Add File: PATH`, \
                     `*** Delete File: PATH`, `*** Update File: PATH`, and `*** End Patch` to \
                     finish."
                ),
            ));
        }
    }
    if ops.is_empty() {
        return Err(error(
            0,
            "The patch has no file operations between `*** Begin Patch` and `*** End Patch`.",
        ));
    }
    Ok(Patch {
        format: Format::Envelope,
        ops,
        repairs,
    })
}

fn file_path(raw: &str, line: usize) -> Result<String, ParseError> {
    let path = raw.trim();
    if path.is_empty() {
        return Err(error(line, "The file operation has no path."));
    }
    Ok(path.to_string())
}

/// Parses the chunks of an envelope update starting at line index `i`; returns them and the
/// index of the first line after them.
fn parse_chunks(
    lines: &[&str],
    mut i: usize,
    path: &str,
    repairs: &mut Vec<String>,
) -> Result<(Vec<Hunk>, usize), ParseError> {
    let mut hunks = Vec::new();
    let mut current = Hunk::default();
    // Whether the current chunk has begun (an `@@` line or a change), and has changes.
    let mut started = false;
    let mut has_changes = false;
    // Unprefixed blank lines (each an empty context line) ending the current chunk so far.
    let mut trailing_blank = 0usize;
    // Unprefixed lines read as context (a model that dropped their leading space).
    let mut flush_left = 0usize;
    // The current chunk's ` ` lines (indexes into old and new) and whether it has
    // unprefixed ones: a model that dropped the prefix wrote indented lines unprefixed too,
    // so their leading space is the line's own.
    let mut spaced: Vec<(usize, usize)> = Vec::new();
    let mut chunk_flush_left = false;
    while let Some(raw) = lines.get(i) {
        let trimmed = marker(raw);
        if is_operation(trimmed) || closes_patch(lines, i) {
            break;
        }
        if let Some(scope) = trimmed.strip_prefix("@@") {
            if has_changes {
                own_spaces(&mut current, &mut spaced, &mut chunk_flush_left);
                hunks.push(std::mem::take(&mut current));
                has_changes = false;
                started = false;
            }
            trailing_blank = 0;
            if !started {
                current.line = i + 1;
                started = true;
            }
            let scope = scope.trim();
            // `@@ -12,7 +12,8 @@` from a unified diff says nothing to locate.
            let numeric = scope.starts_with('-') && scope.contains(" +") && scope.ends_with("@@");
            if !scope.is_empty() && !numeric {
                current.scopes.push(scope.to_string());
            }
            i += 1;
            continue;
        }
        if trimmed == EOF_MARK {
            current.end_of_file = true;
            own_spaces(&mut current, &mut spaced, &mut chunk_flush_left);
            if has_changes || !current.scopes.is_empty() {
                hunks.push(std::mem::take(&mut current));
            }
            has_changes = false;
            started = false;
            trailing_blank = 0;
            i += 1;
            continue;
        }
        if !started && trimmed.is_empty() {
            // Blank lines between chunks (after `*** End of File`, before `*** End Patch`)
            // separate them, as in Codex; they start no chunk.
            i += 1;
            continue;
        }
        if !started {
            current.line = i + 1;
            started = true;
        }
        if trimmed.is_empty() && !raw.starts_with(' ') {
            trailing_blank += 1;
        } else {
            trailing_blank = 0;
        }
        match raw.chars().next() {
            None => {
                current.old.push(String::new());
                current.new.push(String::new());
            }
            Some(c) if c != ' ' && trimmed.is_empty() => {
                // A whitespace-only line the model left unprefixed: an empty context line.
                current.old.push(String::new());
                current.new.push(String::new());
            }
            Some(' ') => {
                spaced.push((current.old.len(), current.new.len()));
                current.old.push(raw[1..].to_string());
                current.new.push(raw[1..].to_string());
            }
            Some('-') => current.old.push(raw[1..].to_string()),
            Some('+') => current.new.push(raw[1..].to_string()),
            Some(_) if raw.starts_with("***") => {
                return Err(error(
                    i + 1,
                    format!(
                        "Unexpected line in the changes of {path}: `{raw}`. Every line of a chunk \
                         starts with ` ` (context), `-` (removed) or `+` (added); `@@` starts a \
                         new chunk; `*** Update File:`, `*** Add File:`, `*** Delete File:` or \
                         `*** End Patch` end the changes."
                    ),
                ));
            }
            Some(_) => {
                // A context line that lost its leading space: it still has to be in the
                // file, so reading it as context can only fail, never misplace a change.
                current.old.push(raw.to_string());
                current.new.push(raw.to_string());
                flush_left += 1;
                chunk_flush_left = true;
            }
        }
        has_changes = true;
        i += 1;
    }
    if has_changes {
        // Unprefixed blank lines before the next operation or `*** End Patch` are the
        // model's spacing, not context (an explicit ` ` context line stays).
        for _ in 0..trailing_blank {
            current.old.pop();
            current.new.pop();
        }
        has_changes = !current.old.is_empty() || !current.new.is_empty();
    }
    own_spaces(&mut current, &mut spaced, &mut chunk_flush_left);
    if flush_left > 0 {
        repairs.push(format!(
            "{path}: {flush_left} line{} without a ` `, `-` or `+` read as context",
            if flush_left == 1 { "" } else { "s" }
        ));
    }
    if has_changes {
        hunks.push(current);
    } else if !current.scopes.is_empty() {
        return Err(error(
            current.line,
            format!(
                "The `@@ {}` chunk of {path} has no lines.",
                current.scopes.join(" ")
            ),
        ));
    }
    Ok((hunks, i))
}

/// Gives back the leading space of a chunk's ` ` lines when the chunk also has unprefixed
/// context lines (see `parse_chunks`), and starts the next chunk's record.
fn own_spaces(hunk: &mut Hunk, spaced: &mut Vec<(usize, usize)>, flush_left: &mut bool) {
    if *flush_left {
        for &(o, n) in spaced.iter() {
            if let Some(line) = hunk.old.get_mut(o) {
                line.insert(0, ' ');
            }
            if let Some(line) = hunk.new.get_mut(n) {
                line.insert(0, ' ');
            }
        }
    }
    spaced.clear();
    *flush_left = false;
}

/// The header facts of one file section of a unified diff.
#[derive(Debug, Default)]
struct Section {
    git: bool,
    git_paths: Option<(String, String)>,
    old_path: Option<String>,
    new_path: Option<String>,
    rename_from: Option<String>,
    rename_to: Option<String>,
    new_file: bool,
    deleted: bool,
    mode: Option<u32>,
    line: usize,
}

fn parse_unified(lines: &[&str]) -> Result<Patch, ParseError> {
    let mut ops = Vec::new();
    let mut repairs = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        let starts_file = line.starts_with("diff --git ")
            || (line.starts_with("--- ")
                && lines.get(i + 1).is_some_and(|n| n.starts_with("+++ ")));
        if !starts_file {
            // Anything between files (commit messages, `Only in`, blank lines) is ignored.
            i += 1;
            continue;
        }
        let mut section = Section {
            line: i + 1,
            ..Section::default()
        };
        if let Some(rest) = line.strip_prefix("diff --git ") {
            section.git = true;
            section.git_paths = split_git_paths(rest);
            i += 1;
            while let Some(&header) = lines.get(i) {
                if header.starts_with("--- ")
                    || header.starts_with("diff --git ")
                    || header.starts_with("@@")
                {
                    break;
                }
                extended_header(&mut section, header, i + 1)?;
                i += 1;
            }
        }
        if lines.get(i).is_some_and(|l| l.starts_with("--- "))
            && lines.get(i + 1).is_some_and(|l| l.starts_with("+++ "))
        {
            section.old_path = Some(header_path(&lines[i][4..]));
            section.new_path = Some(header_path(&lines[i + 1][4..]));
            i += 2;
        }
        let mut hunks = Vec::new();
        while lines.get(i).is_some_and(|l| l.starts_with("@@")) {
            let (hunk, next) = parse_hunk(lines, i, &mut repairs)?;
            hunks.push(hunk);
            i = next;
        }
        ops.push(section_op(section, hunks)?);
    }
    if ops.is_empty() {
        return Err(error(
            0,
            "The diff has no file sections (`--- PATH` and `+++ PATH` lines).",
        ));
    }
    Ok(Patch {
        format: Format::Unified,
        ops,
        repairs,
    })
}

fn extended_header(section: &mut Section, header: &str, line: usize) -> Result<(), ParseError> {
    // The permission bits of a regular file; git's other file types (symlink 120000,
    // submodule 160000) would otherwise become a regular file with mode 0.
    let mode = |s: &str| -> Result<Option<u32>, ParseError> {
        let Ok(m) = u32::from_str_radix(s.trim(), 8) else {
            return Ok(None);
        };
        match m & 0o170000 {
            0 | 0o100000 => Ok(Some(m & 0o7777)),
            0o120000 => Err(error(
                line,
                "Creating a symbolic link is not supported (mode 120000): add a regular file, \
                 or create the link with a shell command.",
            )),
            _ => Err(error(
                line,
                format!(
                    "Mode {} is not a regular file's: only files can be patched.",
                    s.trim()
                ),
            )),
        }
    };
    if let Some(m) = header.strip_prefix("new file mode ") {
        section.new_file = true;
        section.mode = mode(m)?;
    } else if header.starts_with("deleted file mode ") {
        // Deleting works on whatever the path is: a symlink is removed itself.
        section.deleted = true;
    } else if let Some(m) = header.strip_prefix("new mode ") {
        section.mode = mode(m)?;
    } else if let Some(p) = header.strip_prefix("rename from ") {
        section.rename_from = Some(unquote(p));
    } else if let Some(p) = header.strip_prefix("rename to ") {
        section.rename_to = Some(unquote(p));
    } else if header.starts_with("copy from ") || header.starts_with("copy to ") {
        return Err(error(
            line,
            "Copies are not supported: add the new file with its content instead.",
        ));
    } else if header.starts_with("GIT binary patch") || header.starts_with("Binary files ") {
        return Err(error(line, "Binary patches are not supported."));
    }
    // `index`, `old mode`, `similarity index` and the like say nothing we need.
    Ok(())
}

/// Splits `a/x b/y` of a `diff --git` line (both sides equal when it is ambiguous).
fn split_git_paths(rest: &str) -> Option<(String, String)> {
    let rest = rest.trim();
    if rest.starts_with('"') {
        let end = closing_quote(rest)?;
        let (a, b) = rest.split_at(end + 1);
        return Some((unquote(a), unquote(b.trim())));
    }
    let candidates: Vec<usize> = rest.match_indices(" b/").map(|(i, _)| i).collect();
    let split = candidates
        .iter()
        .copied()
        .find(|&i| rest[..i].strip_prefix("a/") == Some(&rest[i + 3..]))
        .or_else(|| (candidates.len() == 1).then(|| candidates[0]))?;
    Some((rest[..split].to_string(), rest[split + 1..].to_string()))
}

fn closing_quote(s: &str) -> Option<usize> {
    let bytes = s.as_bytes();
    let mut i = 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'"' => return Some(i),
            _ => i += 1,
        }
    }
    None
}

/// The path of a `---`/`+++` line: without a tab-separated timestamp, unquoted.
fn header_path(rest: &str) -> String {
    let rest = rest.trim_end();
    if rest.starts_with('"') {
        return unquote(rest);
    }
    let path = rest.split('\t').next().unwrap_or(rest);
    path.trim_end().to_string()
}

/// Undoes git's C-style quoting (`"a/x\ty"`, octal bytes); other text is returned as is.
fn unquote(s: &str) -> String {
    let s = s.trim();
    let Some(inner) = s.strip_prefix('"').and_then(|r| r.strip_suffix('"')) else {
        return s.to_string();
    };
    let mut bytes = Vec::with_capacity(inner.len());
    let raw = inner.as_bytes();
    let mut i = 0;
    while i < raw.len() {
        if raw[i] != b'\\' || i + 1 == raw.len() {
            bytes.push(raw[i]);
            i += 1;
            continue;
        }
        let c = raw[i + 1];
        i += 2;
        match c {
            b'n' => bytes.push(b'\n'),
            b't' => bytes.push(b'\t'),
            b'r' => bytes.push(b'\r'),
            b'a' => bytes.push(7),
            b'b' => bytes.push(8),
            b'f' => bytes.push(12),
            b'v' => bytes.push(11),
            b'0'..=b'7' => {
                let mut value = u32::from(c - b'0');
                let mut digits = 1;
                while digits < 3 && i < raw.len() && (b'0'..=b'7').contains(&raw[i]) {
                    value = value * 8 + u32::from(raw[i] - b'0');
                    i += 1;
                    digits += 1;
                }
                bytes.push((value & 0xff) as u8);
            }
            other => bytes.push(other),
        }
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

/// Whether the line at `j` starts a hunk or a file section.
fn ends_hunk(lines: &[&str], j: usize) -> bool {
    let line = lines[j];
    line.starts_with("@@")
        || line.starts_with("diff --git ")
        || (line.starts_with("--- ") && lines.get(j + 1).is_some_and(|n| n.starts_with("+++ ")))
}

/// Whether a hunk line (` `, `-` or `+`) follows `j` before the hunk ends: an unprefixed
/// line is then a context line that lost its space, not the text after the diff.
fn hunk_goes_on(lines: &[&str], j: usize) -> bool {
    (j + 1..lines.len())
        .take_while(|&k| !ends_hunk(lines, k))
        .any(|k| matches!(lines[k].as_bytes().first(), Some(b' ' | b'-' | b'+')))
}

/// Parses the hunk whose header is at index `i`; returns it and the next index. A bare
/// `@@` (or `@@ scope` without line numbers) starts a hunk located by its lines alone.
fn parse_hunk(
    lines: &[&str],
    i: usize,
    repairs: &mut Vec<String>,
) -> Result<(Hunk, usize), ParseError> {
    let header = lines[i];
    let bare = header
        .trim()
        .strip_prefix("@@")
        .map(str::trim)
        .filter(|rest| {
            // `@@`, `@@ @@`, `@@ ... @@`, or `@@ scope line` without numbers.
            rest.trim_matches(['@', '.', ' ']).is_empty()
                || *rest == "@@"
                || (!rest.starts_with(['-', '+']) && !rest.contains("@@"))
        });
    let counts = match bare {
        Some(_) => None,
        None => Some(hunk_header(header).ok_or_else(|| {
            error(
                i + 1,
                format!(
                    "Invalid hunk header `{header}`: expected `@@ -START[,COUNT] +START[,COUNT] \
                     @@`."
                ),
            )
        })?),
    };
    let mut hunk = Hunk {
        hint: counts.map(|(start, _, _)| start),
        line: i + 1,
        ..Hunk::default()
    };
    if let Some(scope) = bare.filter(|s| !s.trim_matches(['@', '.', ' ']).is_empty()) {
        hunk.scopes.push(scope.to_string());
    }
    let (old_count, new_count) = counts.map_or((usize::MAX, usize::MAX), |(_, o, n)| (o, n));
    let (mut old_seen, mut new_seen) = (0usize, 0usize);
    let mut last_kind = ' ';
    let mut flush_left = 0usize;
    let mut spaced: Vec<(usize, usize)> = Vec::new();
    let mut j = i + 1;
    while let Some(&line) = lines.get(j) {
        let done = old_seen >= old_count && new_seen >= new_count;
        if line.starts_with("@@") || line.starts_with("diff --git ") {
            break;
        }
        if (done || counts.is_none())
            && line.starts_with("--- ")
            && lines.get(j + 1).is_some_and(|n| n.starts_with("+++ "))
        {
            break;
        }
        if line.starts_with('\\') {
            match last_kind {
                '-' => hunk.old_no_newline = true,
                '+' => hunk.new_no_newline = true,
                _ => {
                    hunk.old_no_newline = true;
                    hunk.new_no_newline = true;
                }
            }
            j += 1;
            continue;
        }
        let kind = match line.chars().next() {
            None if !done && (counts.is_some() || hunk_goes_on(lines, j)) => ' ',
            Some(c @ (' ' | '-' | '+')) => c,
            Some(_) if !done && hunk_goes_on(lines, j) => {
                flush_left += 1;
                'u'
            }
            _ => break,
        };
        let text = match kind {
            'u' => line,
            _ if line.is_empty() => "",
            _ => &line[1..],
        };
        if kind == ' ' && !line.is_empty() {
            spaced.push((hunk.old.len(), hunk.new.len()));
        }
        let kind = if kind == 'u' { ' ' } else { kind };
        match kind {
            ' ' => {
                hunk.old.push(text.to_string());
                hunk.new.push(text.to_string());
                old_seen += 1;
                new_seen += 1;
            }
            '-' => {
                hunk.old.push(text.to_string());
                old_seen += 1;
            }
            _ => {
                hunk.new.push(text.to_string());
                new_seen += 1;
            }
        }
        last_kind = kind;
        j += 1;
    }
    let mut unprefixed = flush_left > 0;
    own_spaces(&mut hunk, &mut spaced, &mut unprefixed);
    if flush_left > 0 {
        repairs.push(format!(
            "hunk at patch line {}: {flush_left} line{} without a ` `, `-` or `+` read as context",
            i + 1,
            if flush_left == 1 { "" } else { "s" }
        ));
    }
    if bare.is_some() {
        repairs.push(format!(
            "hunk at patch line {}: no line numbers in `{}`, located by its lines",
            i + 1,
            header.trim()
        ));
    }
    Ok((hunk, j))
}

/// `@@ -a[,b] +c[,d] @@ …` → (a, b, d); a missing count is 1.
fn hunk_header(header: &str) -> Option<(usize, usize, usize)> {
    let rest = header.strip_prefix("@@")?.trim_start();
    let end = rest.find("@@")?;
    let mut fields = rest[..end].split_whitespace();
    let old = fields.next()?.strip_prefix('-')?;
    let new = fields.next()?.strip_prefix('+')?;
    let range = |s: &str| -> Option<(usize, usize)> {
        match s.split_once(',') {
            Some((start, count)) => Some((start.parse().ok()?, count.parse().ok()?)),
            None => Some((s.parse().ok()?, 1)),
        }
    };
    let (old_start, old_count) = range(old)?;
    let (_, new_count) = range(new)?;
    Some((old_start, old_count, new_count))
}

/// The operation of a unified diff's file section.
fn section_op(section: Section, hunks: Vec<Hunk>) -> Result<FileOp, ParseError> {
    let prefixed = |path: &str, prefix: &str| path.strip_prefix(prefix).map(str::to_string);
    let old_raw = section
        .old_path
        .clone()
        .or_else(|| section.git_paths.as_ref().map(|p| p.0.clone()));
    let new_raw = section
        .new_path
        .clone()
        .or_else(|| section.git_paths.as_ref().map(|p| p.1.clone()));
    let (Some(old_raw), Some(new_raw)) = (old_raw, new_raw) else {
        return Err(error(
            section.line,
            "The file section names no file (`--- PATH` and `+++ PATH`).",
        ));
    };
    let null = |p: &str| p == "/dev/null";
    let strip = section.git
        || ((null(&old_raw) || old_raw.starts_with("a/"))
            && (null(&new_raw) || new_raw.starts_with("b/"))
            && !(null(&old_raw) && null(&new_raw)));
    let clean = |raw: &str, prefix: &str| {
        if strip && !null(raw) {
            prefixed(raw, prefix).unwrap_or_else(|| raw.to_string())
        } else {
            raw.to_string()
        }
    };
    let old_path = section
        .rename_from
        .clone()
        .unwrap_or_else(|| clean(&old_raw, "a/"));
    let new_path = section
        .rename_to
        .clone()
        .unwrap_or_else(|| clean(&new_raw, "b/"));
    let added = |hunks: &[Hunk]| -> (Vec<String>, bool) {
        let lines = hunks.iter().flat_map(|h| h.new.iter().cloned()).collect();
        (lines, hunks.iter().any(|h| h.new_no_newline))
    };
    if null(&old_path) || (section.new_file && hunks.iter().all(|h| h.old.is_empty())) {
        if null(&new_path) {
            return Err(error(
                section.line,
                "Both sides of the file section are /dev/null.",
            ));
        }
        let (lines, no_newline) = added(&hunks);
        return Ok(FileOp::Add {
            path: new_path,
            lines,
            no_newline,
            mode: section.mode,
            line: section.line,
        });
    }
    if null(&new_path) || section.deleted {
        let lines: Vec<String> = hunks.iter().flat_map(|h| h.old.iter().cloned()).collect();
        return Ok(FileOp::Delete {
            path: old_path,
            lines: (!hunks.is_empty()).then_some(lines),
            line: section.line,
        });
    }
    let move_to = (old_path != new_path).then(|| new_path.clone());
    if hunks.is_empty() && move_to.is_none() && section.mode.is_none() {
        return Err(error(
            section.line,
            format!("The diff of {new_path} has no hunks (`@@ -START,COUNT +START,COUNT @@`)."),
        ));
    }
    Ok(FileOp::Update {
        path: old_path,
        move_to,
        hunks,
        mode: section.mode,
        line: section.line,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn envelope_operations_and_chunks() {
        let patch = parse(
            "*** Begin Patch\n*** Add File: a.txt\n+one\n+two\n*** Delete File: b.txt\n\
             *** Update File: c.txt\n*** Move to: d/c.txt\n@@ class A\n@@ def f():\n \
             keep\n-old\n+new\n\n*** End of File\n*** End Patch\n",
        )
        .unwrap();
        assert_eq!(patch.format, Format::Envelope);
        assert_eq!(patch.ops.len(), 3);
        assert_eq!(
            patch.ops[0],
            FileOp::Add {
                path: "a.txt".into(),
                lines: strings(&["one", "two"]),
                no_newline: false,
                mode: None,
                line: 2
            }
        );
        let FileOp::Update { move_to, hunks, .. } = &patch.ops[2] else {
            panic!()
        };
        assert_eq!(move_to.as_deref(), Some("d/c.txt"));
        assert_eq!(hunks.len(), 1);
        assert_eq!(hunks[0].scopes, strings(&["class A", "def f():"]));
        assert_eq!(hunks[0].old, strings(&["keep", "old", ""]));
        assert_eq!(hunks[0].new, strings(&["keep", "new", ""]));
        assert!(hunks[0].end_of_file);
    }

    #[test]
    fn empty_lines_inside_added_content_are_content() {
        let patch = parse("*** Begin Patch\n*** Add File: a\n+x\n\n+y\n\n*** End Patch\n").unwrap();
        let FileOp::Add { lines, .. } = &patch.ops[0] else {
            panic!()
        };
        assert_eq!(lines, &strings(&["x", "", "y"]));
    }

    #[test]
    fn envelope_errors_name_the_line() {
        let err = parse("*** Begin Patch\n*** Frobnicate File: foo\n*** End Patch\n").unwrap_err();
        assert_eq!(err.line, 2);
        assert!(err.message.contains("not a valid file operation"), "{err}");
        let err = parse("*** Begin Patch\n*** End Patch\n").unwrap_err();
        assert!(err.message.contains("no file operations"));
        let err = parse("*** Begin Patch\n*** Update File: foo.txt\n*** End Patch\n").unwrap_err();
        assert!(err.message.contains("has no changes"), "{err}");
        let err = parse("*** Begin Patch\n").unwrap_err();
        assert!(err.message.contains("without `*** End Patch`"), "{err}");
        let err = parse("*** Begin Patch\n*** Update File: f\n@@\n-a\n*** Bogus\n*** End Patch")
            .unwrap_err();
        assert_eq!(err.line, 5);
        assert!(parse("   \n").unwrap_err().message.contains("empty"));
        assert!(
            parse("hello\n")
                .unwrap_err()
                .message
                .contains("Unrecognized")
        );
    }

    #[test]
    fn padded_markers_and_fences_are_accepted() {
        let patch = parse("```diff\n *** Begin Patch \n  *** Update File: f.txt\n@@\n-one\n+two\n *** End Patch\n```\n").unwrap();
        assert_eq!(patch.ops[0].paths(), vec!["f.txt"]);
    }

    #[test]
    fn first_chunk_may_omit_its_header_and_numeric_scopes_are_ignored() {
        let patch = parse(
            "*** Begin Patch\n*** Update File: f\n-a\n+b\n@@ -10,2 +10,2 @@\n-c\n+d\n*** End Patch",
        )
        .unwrap();
        let FileOp::Update { hunks, .. } = &patch.ops[0] else {
            panic!()
        };
        assert_eq!(hunks.len(), 2);
        assert!(hunks[1].scopes.is_empty());
    }

    #[test]
    fn unified_git_diff_with_adds_deletes_renames_and_markers() {
        let diff = "diff --git a/src/x.rs b/src/x.rs\nindex 1..2 100644\n--- a/src/x.rs\n+++ b/src/x.rs\n\
                    @@ -1,3 +1,3 @@ fn main\n a\n-b\n+B\n c\n\\ No newline at end of file\n\
                    diff --git a/new.txt b/new.txt\nnew file mode 100755\n--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1,2 @@\n+first\n+second\n\
                    diff --git a/gone.txt b/gone.txt\ndeleted file mode 100644\n--- a/gone.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-bye\n\
                    diff --git a/old name.txt b/new name.txt\nsimilarity index 100%\nrename from old name.txt\nrename to new name.txt\n";
        let patch = parse(diff).unwrap();
        assert_eq!(patch.format, Format::Unified);
        assert_eq!(patch.ops.len(), 4);
        let FileOp::Update { path, hunks, .. } = &patch.ops[0] else {
            panic!()
        };
        assert_eq!(path, "src/x.rs");
        assert_eq!(hunks[0].hint, Some(1));
        assert_eq!(hunks[0].old, strings(&["a", "b", "c"]));
        assert!(hunks[0].old_no_newline && hunks[0].new_no_newline);
        assert_eq!(
            patch.ops[1],
            FileOp::Add {
                path: "new.txt".into(),
                lines: strings(&["first", "second"]),
                no_newline: false,
                mode: Some(0o755),
                line: 11
            }
        );
        assert!(
            matches!(&patch.ops[2], FileOp::Delete { path, lines: Some(l), .. } if path == "gone.txt" && l == &strings(&["bye"]))
        );
        let FileOp::Update {
            path,
            move_to,
            hunks,
            ..
        } = &patch.ops[3]
        else {
            panic!()
        };
        assert_eq!(
            (path.as_str(), move_to.as_deref()),
            ("old name.txt", Some("new name.txt"))
        );
        assert!(hunks.is_empty());
    }

    #[test]
    fn git_modes_other_than_a_files_are_refused() {
        let link = "diff --git a/l b/l\nnew file mode 120000\n--- /dev/null\n+++ b/l\n@@ -0,0 +1 @@\n+target\n\\ No newline at end of file\n";
        let err = parse(link).unwrap_err();
        assert!(err.message.contains("symbolic link"), "{err}");
        assert_eq!(err.line, 2);
        let module = "diff --git a/m b/m\nold mode 100644\nnew mode 160000\n";
        assert!(parse(module).unwrap_err().message.contains("Mode 160000"));
        let gone = "diff --git a/l b/l\ndeleted file mode 120000\n--- a/l\n+++ /dev/null\n@@ -1 +0,0 @@\n-target\n\\ No newline at end of file\n";
        assert!(matches!(&parse(gone).unwrap().ops[0], FileOp::Delete { path, .. } if path == "l"));
        let exec = "diff --git a/x b/x\nold mode 100644\nnew mode 100755\n";
        assert!(matches!(
            &parse(exec).unwrap().ops[0],
            FileOp::Update {
                mode: Some(0o755),
                ..
            }
        ));
    }

    #[test]
    fn plain_unified_diffs_keep_their_paths_and_wrong_counts_are_tolerated() {
        let diff = "--- notes.txt\t2024-01-01 10:00:00\n+++ notes.txt\t2024-01-02 10:00:00\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n d\n\n";
        let patch = parse(diff).unwrap();
        let FileOp::Update { path, hunks, .. } = &patch.ops[0] else {
            panic!()
        };
        assert_eq!(path, "notes.txt");
        assert_eq!(hunks[0].old, strings(&["a", "b", "d"]));
        let err = parse("--- a/f\n+++ b/f\n@@ nonsense @@\n").unwrap_err();
        assert!(err.message.contains("Invalid hunk header"), "{err}");
    }

    #[test]
    fn counts_disambiguate_removed_lines_that_look_like_headers() {
        let diff = "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n--- x\n+++ y\n a\n";
        let patch = parse(diff).unwrap();
        let FileOp::Update { hunks, .. } = &patch.ops[0] else {
            panic!()
        };
        assert_eq!(hunks[0].old, strings(&["-- x", "a"]));
        assert_eq!(hunks[0].new, strings(&["++ y", "a"]));
    }

    #[test]
    fn quoted_paths_are_unquoted() {
        assert_eq!(unquote("\"a/caf\\303\\251 x.txt\""), "a/café x.txt");
        assert_eq!(
            split_git_paths("a/with space.txt b/with space.txt"),
            Some(("a/with space.txt".into(), "b/with space.txt".into()))
        );
    }
}
