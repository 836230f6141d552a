//! Jupyter notebooks (`.ipynb`, nbformat 4): read as cells, and one cell's source
//! replaced in the file's own text.
//!
//! A notebook reads as its cells in order, each its source and then its outputs, as text
//! and images ([`page`]):
//!
//! ```text
//! [cell 0: markdown, id intro]
//! # Title
//! [cell 1: code, id 7f3a, execution_count 3]
//! import numpy as np
//! print(np.pi)
//! [output 1.0: stream stdout]
//! 3.141592653589793
//! [output 1.1: display_data]
//! [image 1: output 1.1, image/png, 640x480, 23415 bytes]
//! [cells 0-1 of 9 shown, 7 more; continue with offset=2]
//! ```
//!
//! Sources are shown as they are, without line numbers, so that `edit` with `cell` can
//! take an `old_string` copied from them. An output shows its image (PNG, JPEG, GIF, WebP,
//! made fit by `media::fit`) when it has one, else its first text form (`text/plain`,
//! `text/markdown`, `text/html`, `application/json`, …); a stream its text; an error its
//! name, value and traceback with the terminal's colour codes taken out. Each output's text
//! is cut at [`MAX_OUTPUT_BYTES`].
//!
//! [`replace_source`] writes a new source for one cell by splicing the file's text: only
//! the bytes of that cell's `"source"` value change, written the way they were (an array of
//! lines with the same indentation and line ending, or one string), so the rest of the
//! notebook keeps its formatting byte for byte.

use std::ops::Range;

use base64::Engine;
use serde_json::{Map, Value};

use crate::media::{self, Caps, Image, Part};

/// Largest notebook read or edited: the whole file is parsed.
pub const MAX_FILE_BYTES: u64 = 64 * 1024 * 1024;
/// Bytes of one output's text shown; the rest is counted.
pub const MAX_OUTPUT_BYTES: usize = 8 * 1024;

/// One cell.
#[derive(Debug, Clone, PartialEq)]
pub struct Cell {
    /// `code`, `markdown` or `raw`.
    pub kind: String,
    /// Its id (nbformat 4.5 and later).
    pub id: Option<String>,
    /// Its source, the lines joined.
    pub source: String,
    /// The execution count of a code cell that ran.
    pub execution_count: Option<i64>,
    /// Its outputs, as they are in the file.
    outputs: Vec<Value>,
}

/// A parsed notebook.
#[derive(Debug, Clone, PartialEq)]
pub struct Notebook {
    /// The cells, in order.
    pub cells: Vec<Cell>,
}

/// How a cell is named: by its index (0-based) or by its id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Selector {
    /// The cell at this 0-based index.
    Index(u64),
    /// The cell with this id.
    Id(String),
}

/// A text field of nbformat: one string or a list of strings joined.
fn multiline(value: Option<&Value>, what: &str) -> Result<String, String> {
    match value {
        None | Some(Value::Null) => Ok(String::new()),
        Some(Value::String(text)) => Ok(text.clone()),
        Some(Value::Array(items)) => items
            .iter()
            .map(|item| {
                item.as_str()
                    .ok_or_else(|| format!("{what} holds a list item that is not a string"))
            })
            .collect(),
        Some(_) => Err(format!("{what} is neither a string nor a list of strings")),
    }
}

/// Parses a notebook's bytes; the error says what is wrong (JSON with its line and column,
/// or which field of which cell).
pub fn parse(bytes: &[u8]) -> Result<Notebook, String> {
    let value: Value = serde_json::from_slice(bytes).map_err(|err| {
        format!(
            "not valid JSON at line {} column {}: {err}",
            err.line(),
            err.column()
        )
    })?;
    let Value::Object(top) = value else {
        return Err("not a notebook: the JSON is not an object".into());
    };
    if top.contains_key("worksheets") {
        return Err(
            "an nbformat 3 notebook (worksheets): convert it with `jupyter nbconvert \
             --to notebook --nbformat 4` first"
                .into(),
        );
    }
    let Some(Value::Array(cells)) = top.get("cells") else {
        return Err("not a notebook: no `cells` list".into());
    };
    let mut parsed = Vec::with_capacity(cells.len());
    for (i, cell) in cells.iter().enumerate() {
        let Value::Object(cell) = cell else {
            return Err(format!("cell {i} is not an object"));
        };
        let kind = match cell.get("cell_type") {
            Some(Value::String(kind)) => kind.clone(),
            _ => return Err(format!("cell {i} has no `cell_type`")),
        };
        let source = multiline(cell.get("source"), &format!("the source of cell {i}"))?;
        let outputs = match cell.get("outputs") {
            Some(Value::Array(outputs)) => outputs.clone(),
            None | Some(Value::Null) => Vec::new(),
            Some(_) => return Err(format!("the outputs of cell {i} are not a list")),
        };
        parsed.push(Cell {
            kind,
            id: cell.get("id").and_then(Value::as_str).map(str::to_string),
            source,
            execution_count: cell.get("execution_count").and_then(Value::as_i64),
            outputs,
        });
    }
    Ok(Notebook { cells: parsed })
}

impl Notebook {
    /// The index of the cell `selector` names, or why there is none (with the cells there
    /// are).
    pub fn find(&self, selector: &Selector) -> Result<usize, String> {
        match selector {
            Selector::Index(i) => {
                let n = self.cells.len();
                usize::try_from(*i)
                    .ok()
                    .filter(|i| *i < n)
                    .ok_or_else(|| match n {
                        0 => format!("cell {i} does not exist: the notebook has no cells"),
                        _ => format!(
                            "cell {i} does not exist: the notebook has {n} cells (0 to {})",
                            n - 1
                        ),
                    })
            }
            Selector::Id(id) => self
                .cells
                .iter()
                .position(|c| c.id.as_deref() == Some(id.as_str()))
                .ok_or_else(|| {
                    let ids: Vec<&str> = self.cells.iter().filter_map(|c| c.id.as_deref()).collect();
                    if ids.is_empty() {
                        format!("no cell has id {id:?}: the cells have no ids; name one by `cell`, its index")
                    } else {
                        let shown: Vec<&str> = ids.iter().take(20).copied().collect();
                        format!(
                            "no cell has id {id:?}; the ids are {}{}",
                            shown.join(", "),
                            if ids.len() > 20 { ", …" } else { "" }
                        )
                    }
                }),
        }
    }
}

/// A page of a notebook: its parts (text and images) and where it ends.
#[derive(Debug)]
pub struct Page {
    /// The text and images, in order.
    pub parts: Vec<Part>,
    /// Index of the first cell not shown.
    pub end: usize,
    /// Images on the page.
    pub images: usize,
}

/// Cells `offset..` (at most `limit`) of `notebook` as parts, whole cells while their text
/// fits `budget` bytes and their images `caps.max_bytes` in all (the first cell always,
/// cut to fit), followed by where to continue when cells are left.
pub fn page(notebook: &Notebook, offset: usize, limit: usize, budget: usize, caps: &Caps) -> Page {
    let mut parts: Vec<Part> = Vec::new();
    let mut text_used = 0;
    let mut image_bytes = 0u64;
    let mut images = 0;
    let mut end = offset;
    let total = notebook.cells.len();
    let last = offset.saturating_add(limit).min(total);
    for (i, cell) in notebook.cells.iter().enumerate().take(last).skip(offset) {
        let mut cell_parts = cell_parts(i, cell, caps);
        let text: usize = cell_parts
            .iter()
            .map(|p| match p {
                Part::Text(t) => t.len(),
                Part::Image(image) => image.label.len() + 16,
            })
            .sum();
        let bytes: u64 = cell_parts
            .iter()
            .map(|p| match p {
                Part::Image(image) => image.data.len() as u64 / 4 * 3,
                Part::Text(_) => 0,
            })
            .sum();
        let first = i == offset;
        if !first && (text_used + text > budget || image_bytes + bytes > caps.max_bytes) {
            break;
        }
        if first {
            fit_first(&mut cell_parts, budget, caps.max_bytes);
        }
        text_used += text;
        image_bytes += bytes;
        images += cell_parts
            .iter()
            .filter(|p| matches!(p, Part::Image(_)))
            .count();
        for part in cell_parts {
            // One text part between images, however many cells it spans.
            match (parts.last_mut(), part) {
                (Some(Part::Text(text)), Part::Text(more)) => text.push_str(&more),
                (_, part) => parts.push(part),
            }
        }
        end = i + 1;
    }
    if end < total {
        let footer = format!(
            "[cells {offset}-{} of {total} shown, {} more; continue with offset={end}]\n",
            end - 1,
            total - end
        );
        match parts.last_mut() {
            Some(Part::Text(text)) => text.push_str(&footer),
            _ => parts.push(Part::Text(footer)),
        }
    }
    Page { parts, end, images }
}

/// Makes a page's only cell fit: its text cut to `budget`, its images past `max_bytes` in
/// all left out with a note.
fn fit_first(parts: &mut [Part], budget: usize, max_bytes: u64) {
    let mut used = 0usize;
    let mut image_bytes = 0u64;
    for part in parts.iter_mut() {
        match part {
            Part::Text(text) => {
                if used + text.len() > budget {
                    let keep = budget.saturating_sub(used);
                    let mut end = keep.min(text.len());
                    while !text.is_char_boundary(end) {
                        end -= 1;
                    }
                    let cut = text.len() - end;
                    text.truncate(end);
                    text.push_str(&format!(
                        "\n[... {cut} more bytes of this cell not shown: the page is full]\n"
                    ));
                }
                used += text.len();
            }
            Part::Image(image) => {
                let bytes = image.data.len() as u64 / 4 * 3;
                if image_bytes + bytes > max_bytes {
                    *part = Part::Text(format!(
                        "[image left out: {}; the images of one read are capped at {max_bytes} \
                         bytes in all (images.max_bytes in config.json)]\n",
                        image.label
                    ));
                } else {
                    image_bytes += bytes;
                }
            }
        }
    }
}

/// One cell as parts: its header and source, then each output.
fn cell_parts(i: usize, cell: &Cell, caps: &Caps) -> Vec<Part> {
    let mut header = format!("[cell {i}: {}", cell.kind);
    if let Some(id) = &cell.id {
        header.push_str(&format!(", id {id}"));
    }
    if let Some(count) = cell.execution_count {
        header.push_str(&format!(", execution_count {count}"));
    }
    header.push_str("]\n");
    let mut text = header;
    text.push_str(&cell.source);
    if !cell.source.is_empty() && !cell.source.ends_with('\n') {
        text.push('\n');
    }
    let mut parts = Vec::new();
    for (j, output) in cell.outputs.iter().enumerate() {
        let kind = output
            .get("output_type")
            .and_then(Value::as_str)
            .unwrap_or("output");
        let mut head = format!("[output {i}.{j}: {kind}");
        if let Some(name) = output.get("name").and_then(Value::as_str) {
            head.push_str(&format!(" {name}"));
        }
        head.push_str("]\n");
        text.push_str(&head);
        match output_body(output, &format!("output {i}.{j}"), caps) {
            Body::Text(body) => {
                text.push_str(&cut_output(&body));
                if !text.ends_with('\n') {
                    text.push('\n');
                }
            }
            Body::Image(image) => {
                parts.push(Part::Text(std::mem::take(&mut text)));
                parts.push(Part::Image(image));
            }
        }
    }
    if !text.is_empty() {
        parts.push(Part::Text(text));
    }
    parts
}

/// What one output shows.
enum Body {
    Text(String),
    Image(Image),
}

/// The image types an output's image is taken from, in order of preference.
const IMAGE_TYPES: [&str; 4] = ["image/png", "image/jpeg", "image/gif", "image/webp"];
/// The text types an output's text is taken from, in order of preference.
const TEXT_TYPES: [&str; 5] = [
    "text/plain",
    "text/markdown",
    "text/latex",
    "text/html",
    "application/json",
];

/// An output's image, else its text.
fn output_body(output: &Value, name: &str, caps: &Caps) -> Body {
    let data = output.get("data").and_then(Value::as_object);
    if let Some(data) = data
        && let Some((mime, encoded)) = IMAGE_TYPES
            .iter()
            .find_map(|mime| Some((*mime, data.get(*mime)?)))
    {
        return match image_of(encoded, caps) {
            Ok(fitted) => {
                let label = fitted.label(name, caps);
                Body::Image(Image::new(fitted.mime, &fitted.bytes, label))
            }
            Err(why) => Body::Text(format!("[{mime} that cannot be shown: {why}]")),
        };
    }
    if let Some(data) = data {
        for mime in TEXT_TYPES {
            match data.get(mime) {
                Some(Value::Object(_) | Value::Array(_)) if mime == "application/json" => {
                    return Body::Text(data[mime].to_string());
                }
                Some(value) => {
                    if let Ok(text) = multiline(Some(value), mime) {
                        return Body::Text(text);
                    }
                }
                None => {}
            }
        }
        let kinds: Vec<&str> = data.keys().map(String::as_str).collect();
        return Body::Text(format!("[no text form: {}]", kinds.join(", ")));
    }
    match output.get("output_type").and_then(Value::as_str) {
        Some("stream") => Body::Text(multiline(output.get("text"), "a stream").unwrap_or_default()),
        Some("error") => {
            let field = |key: &str| output.get(key).and_then(Value::as_str).unwrap_or("");
            let mut text = format!("{}: {}\n", field("ename"), field("evalue"));
            if let Some(Value::Array(lines)) = output.get("traceback") {
                for line in lines.iter().filter_map(Value::as_str) {
                    text.push_str(&strip_ansi(line));
                    text.push('\n');
                }
            }
            Body::Text(text)
        }
        _ => Body::Text(String::new()),
    }
}

/// An output's base64 image (one string or lines), made fit to send.
fn image_of(encoded: &Value, caps: &Caps) -> Result<media::Fitted, String> {
    let text = multiline(Some(encoded), "the image")?;
    let compact: String = text.chars().filter(|c| !c.is_ascii_whitespace()).collect();
    if compact.len() as u64 > MAX_FILE_BYTES {
        return Err(format!("{} bytes of base64, too many", compact.len()));
    }
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(compact.as_bytes())
        .map_err(|err| format!("its base64 does not decode ({err})"))?;
    media::fit(bytes, caps)
}

/// At most [`MAX_OUTPUT_BYTES`] of an output's text, and how much was left.
fn cut_output(text: &str) -> String {
    if text.len() <= MAX_OUTPUT_BYTES {
        return text.to_string();
    }
    let mut end = MAX_OUTPUT_BYTES;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!(
        "{}\n[... {} more bytes of this output]\n",
        &text[..end],
        text.len() - end
    )
}

/// `line` without the terminal's escape sequences (CSI `ESC [ ... final`, and lone ESCs).
fn strip_ansi(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\u{1b}' {
            out.push(c);
            continue;
        }
        if chars.peek() == Some(&'[') {
            chars.next();
            for c in chars.by_ref() {
                if ('@'..='~').contains(&c) {
                    break;
                }
            }
        }
    }
    out
}

/// `text` (a notebook's whole file) with the source of cell `index` replaced by `source`,
/// written as that value was (see the module doc). The notebook must have parsed.
pub fn replace_source(text: &str, index: usize, source: &str) -> Result<String, String> {
    let span = source_span(text.as_bytes(), index)?;
    let old = &text[span.clone()];
    let ascii = escapes_non_ascii(text);
    let new = if old.trim_start().starts_with('[') {
        as_list(text, span.start, old, source, ascii)
    } else {
        json_string(source, ascii)
    };
    let mut out = String::with_capacity(text.len() + new.len());
    out.push_str(&text[..span.start]);
    out.push_str(&new);
    out.push_str(&text[span.end..]);
    Ok(out)
}

/// Whether the file writes every character past ASCII as a `\uXXXX` escape (Python's
/// `json.dump` with `ensure_ascii`, the default outside nbformat): it holds such an escape
/// and no byte past ASCII.
fn escapes_non_ascii(text: &str) -> bool {
    text.is_ascii()
        && text.match_indices("\\u").any(|(at, _)| {
            let escaped = text[..at].chars().rev().take_while(|c| *c == '\\').count() % 2 == 1;
            !escaped
                && text
                    .get(at + 2..at + 6)
                    .and_then(|hex| u32::from_str_radix(hex, 16).ok())
                    .is_some_and(|code| code >= 0x80)
        })
}

/// A string as JSON, as the file writes strings: non-ASCII as it is (nbformat), or as
/// `\uXXXX` escapes when `ascii`.
fn json_string(s: &str, ascii: bool) -> String {
    let json = serde_json::to_string(s).unwrap_or_else(|_| "\"\"".to_string());
    if !ascii || json.is_ascii() {
        return json;
    }
    let mut out = String::with_capacity(json.len() + 16);
    for c in json.chars() {
        if c.is_ascii() {
            out.push(c);
        } else {
            let mut units = [0u16; 2];
            for unit in c.encode_utf16(&mut units) {
                out.push_str(&format!("\\u{unit:04x}"));
            }
        }
    }
    out
}

/// `source` as a list of lines shaped like `old`, the list that starts at `start` of
/// `text`: one line per item with the same indentation and line ending, or on one line
/// when it was.
fn as_list(text: &str, start: usize, old: &str, source: &str, ascii: bool) -> String {
    let lines: Vec<String> = source
        .split_inclusive('\n')
        .map(|line| json_string(line, ascii))
        .collect();
    if lines.is_empty() {
        return "[]".to_string();
    }
    let newline = if old.contains("\r\n") || text.contains("\r\n") {
        "\r\n"
    } else {
        "\n"
    };
    let inner = &old[1..old.len().saturating_sub(1)];
    if !inner.trim().is_empty() && !inner.contains('\n') {
        // Written on one line: keep it on one line, with its separator.
        let separator = if inner.contains(", ") { ", " } else { "," };
        return format!("[{}]", lines.join(separator));
    }
    // The indentation of the line the list opens on, and of its items.
    let line_start = text[..start].rfind('\n').map_or(0, |n| n + 1);
    let base: String = text[line_start..]
        .chars()
        .take_while(|c| *c == ' ' || *c == '\t')
        .collect();
    let (item_indent, close_indent) = if inner.trim().is_empty() {
        (format!("{base} "), base.clone())
    } else {
        let first_line = inner.split('\n').nth(1).unwrap_or("");
        let item: String = first_line
            .chars()
            .take_while(|c| *c == ' ' || *c == '\t')
            .collect();
        let last_line = inner.rsplit('\n').next().unwrap_or("");
        let close: String = last_line
            .chars()
            .take_while(|c| *c == ' ' || *c == '\t')
            .collect();
        (item, close)
    };
    let mut out = String::from("[");
    for (i, line) in lines.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(newline);
        out.push_str(&item_indent);
        out.push_str(line);
    }
    out.push_str(newline);
    out.push_str(&close_indent);
    out.push(']');
    out
}

/// The byte span of the `source` value of cell `index` in a notebook's JSON text.
fn source_span(bytes: &[u8], index: usize) -> Result<Range<usize>, String> {
    let mut scan = Scan { bytes, at: 0 };
    let cells = scan
        .member_of_object("cells")?
        .ok_or("not a notebook: no `cells` list")?;
    scan.at = cells.start;
    let cell = scan.item_of_array(index)?;
    scan.at = cell.start;
    scan.member_of_object("source")?
        .ok_or_else(|| format!("cell {index} has no `source`"))
}

/// A cursor over JSON text that was parsed already: it finds spans, it does not validate.
struct Scan<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Scan<'_> {
    fn skip_ws(&mut self) {
        while self
            .bytes
            .get(self.at)
            .is_some_and(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
        {
            self.at += 1;
        }
    }

    fn expect(&mut self, byte: u8) -> Result<(), String> {
        self.skip_ws();
        if self.bytes.get(self.at) == Some(&byte) {
            self.at += 1;
            Ok(())
        } else {
            Err(format!("expected `{}` at byte {}", byte as char, self.at))
        }
    }

    /// Skips one value; its span.
    fn value(&mut self) -> Result<Range<usize>, String> {
        self.skip_ws();
        let start = self.at;
        match self.bytes.get(self.at) {
            Some(b'"') => self.string()?,
            Some(open @ (b'{' | b'[')) => {
                let close = if *open == b'{' { b'}' } else { b']' };
                self.at += 1;
                loop {
                    self.skip_ws();
                    match self.bytes.get(self.at) {
                        Some(b) if *b == close => {
                            self.at += 1;
                            break;
                        }
                        Some(b',' | b':') => self.at += 1,
                        Some(_) => {
                            self.value()?;
                        }
                        None => return Err("the JSON ends early".into()),
                    }
                }
            }
            Some(_) => {
                while self.bytes.get(self.at).is_some_and(|b| {
                    !matches!(b, b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r')
                }) {
                    self.at += 1;
                }
            }
            None => return Err("the JSON ends early".into()),
        }
        Ok(start..self.at)
    }

    /// Skips a string starting at the cursor.
    fn string(&mut self) -> Result<(), String> {
        self.at += 1;
        while let Some(b) = self.bytes.get(self.at) {
            match b {
                b'\\' => self.at += 2,
                b'"' => {
                    self.at += 1;
                    return Ok(());
                }
                _ => self.at += 1,
            }
        }
        Err("a string does not end".into())
    }

    /// The span of member `key`'s value in the object at the cursor.
    fn member_of_object(&mut self, key: &str) -> Result<Option<Range<usize>>, String> {
        self.expect(b'{')?;
        loop {
            self.skip_ws();
            match self.bytes.get(self.at) {
                Some(b'}') => return Ok(None),
                Some(b',') => self.at += 1,
                Some(b'"') => {
                    let name = self.value()?;
                    let name: String = serde_json::from_slice(&self.bytes[name])
                        .map_err(|err| format!("a key does not read: {err}"))?;
                    self.expect(b':')?;
                    let value = self.value()?;
                    if name == key {
                        self.skip_ws();
                        return Ok(Some(value.start..value.end));
                    }
                }
                _ => return Err(format!("unexpected byte at {} in an object", self.at)),
            }
        }
    }

    /// The span of item `index` of the array at the cursor.
    fn item_of_array(&mut self, index: usize) -> Result<Range<usize>, String> {
        self.expect(b'[')?;
        let mut i = 0;
        loop {
            self.skip_ws();
            match self.bytes.get(self.at) {
                Some(b']') | None => return Err(format!("cell {index} does not exist")),
                Some(b',') => self.at += 1,
                Some(_) => {
                    let item = self.value()?;
                    if i == index {
                        return Ok(item);
                    }
                    i += 1;
                }
            }
        }
    }
}

/// The cell selector of an edit's arguments: `cell` (an index) or `cell_id`; `None` when
/// neither is given, an error when both are.
pub fn selector(args: &Map<String, Value>) -> Result<Option<Selector>, String> {
    match (args.get("cell"), args.get("cell_id")) {
        (Some(_), Some(_)) => Err("give `cell` (an index) or `cell_id`, not both".to_string()),
        (Some(cell), None) => cell
            .as_u64()
            .map(|i| Some(Selector::Index(i)))
            .ok_or_else(|| "`cell` must be a cell's index, 0 or more".to_string()),
        (None, Some(id)) => id
            .as_str()
            .map(|id| Some(Selector::Id(id.to_string())))
            .ok_or_else(|| "`cell_id` must be a string".to_string()),
        (None, None) => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A notebook as nbformat writes it (indent 1, lists of lines).
    const NOTEBOOK: &str = r##"{
 "cells": [
  {
   "cell_type": "markdown",
   "id": "intro",
   "metadata": {},
   "source": [
    "# Title\n",
    "Some text"
   ]
  },
  {
   "cell_type": "code",
   "execution_count": 3,
   "id": "7f3a",
   "metadata": {},
   "outputs": [
    {
     "name": "stdout",
     "output_type": "stream",
     "text": [
      "3.14\n"
     ]
    },
    {
     "ename": "ValueError",
     "evalue": "bad",
     "output_type": "error",
     "traceback": ["\u001b[0;31mValueError\u001b[0m: bad"]
    }
   ],
   "source": [
    "import math\n",
    "print(round(math.pi, 2))"
   ]
  },
  {
   "cell_type": "code",
   "execution_count": null,
   "id": "empty",
   "metadata": {},
   "outputs": [],
   "source": []
  }
 ],
 "metadata": {"kernelspec": {"name": "python3"}},
 "nbformat": 4,
 "nbformat_minor": 5
}
"##;

    #[test]
    fn cells_read_as_source_then_outputs() {
        let nb = parse(NOTEBOOK.as_bytes()).unwrap();
        assert_eq!(nb.cells.len(), 3);
        let page = page(&nb, 0, usize::MAX, 50_000, &Caps::default());
        assert_eq!(page.end, 3);
        let text = media::text_of(&page.parts);
        assert_eq!(
            text,
            "[cell 0: markdown, id intro]\n# Title\nSome text\n\
             [cell 1: code, id 7f3a, execution_count 3]\nimport math\nprint(round(math.pi, 2))\n\
             [output 1.0: stream stdout]\n3.14\n\
             [output 1.1: error]\nValueError: bad\nValueError: bad\n\
             [cell 2: code, id empty]\n"
        );
        let second = page_of(&nb, 1, 1);
        assert!(second.ends_with("[cells 1-1 of 3 shown, 1 more; continue with offset=2]\n"));
    }

    fn page_of(nb: &Notebook, offset: usize, limit: usize) -> String {
        media::text_of(&page(nb, offset, limit, 50_000, &Caps::default()).parts)
    }

    #[test]
    fn a_cell_source_is_replaced_in_the_file_text_only() {
        let new = replace_source(NOTEBOOK, 1, "import math\nprint(math.tau)\n").unwrap();
        assert_eq!(
            new,
            NOTEBOOK.replace(
                "    \"import math\\n\",\n    \"print(round(math.pi, 2))\"\n",
                "    \"import math\\n\",\n    \"print(math.tau)\\n\"\n"
            )
        );
        assert_eq!(
            parse(new.as_bytes()).unwrap().cells[1].source,
            "import math\nprint(math.tau)\n"
        );
        // An empty list gets the indentation of its line, one deeper for the items.
        let filled = replace_source(NOTEBOOK, 2, "x = 1").unwrap();
        assert!(
            filled.contains("   \"source\": [\n    \"x = 1\"\n   ]\n"),
            "{filled}"
        );
        // A string stays a string; a one-line list stays on one line.
        let compact = r#"{"cells":[{"cell_type":"code","source":"a\nb","outputs":[]},{"cell_type":"raw","source":["x\n","y"]}]}"#;
        let a = replace_source(compact, 0, "c\nd").unwrap();
        assert_eq!(a, compact.replace(r#""a\nb""#, r#""c\nd""#));
        let b = replace_source(compact, 1, "é\n\"q\"").unwrap();
        assert!(b.contains(r#""source":["é\n","\"q\""]}"#), "{b}");
        assert!(replace_source(compact, 5, "x").is_err());
    }

    #[test]
    fn a_file_that_escapes_non_ascii_gets_its_new_source_escaped_too() {
        let escaped =
            r#"{"cells":[{"cell_type":"code","source":["s = '\u65e5'\n"],"outputs":[]}]}"#;
        let new = replace_source(escaped, 0, "s = '日本 😀'\n").unwrap();
        assert!(new.is_ascii(), "{new}");
        assert!(
            new.contains(r#""s = '\u65e5\u672c \ud83d\ude00'\n""#),
            "{new}"
        );
        assert_eq!(
            parse(new.as_bytes()).unwrap().cells[0].source,
            "s = '日本 😀'\n"
        );
        // An escaped backslash before `u` is no escape of a character.
        assert!(!escapes_non_ascii(r#"{"a": "\\u00e9"}"#));
        assert!(escapes_non_ascii(r#"{"a": "\u00e9"}"#));
    }

    #[test]
    fn malformed_notebooks_and_missing_cells_say_what_is_wrong() {
        assert!(parse(b"{\"cells\": [").unwrap_err().contains("line 1"));
        assert!(parse(b"[]").unwrap_err().contains("not an object"));
        assert!(
            parse(b"{\"worksheets\": []}")
                .unwrap_err()
                .contains("nbformat 3")
        );
        assert!(
            parse(br#"{"cells": [{"cell_type": "code", "source": 5}]}"#)
                .unwrap_err()
                .contains("source of cell 0")
        );
        let nb = parse(NOTEBOOK.as_bytes()).unwrap();
        assert_eq!(nb.find(&Selector::Id("7f3a".into())), Ok(1));
        assert!(
            nb.find(&Selector::Index(9))
                .unwrap_err()
                .contains("3 cells (0 to 2)")
        );
        assert!(
            nb.find(&Selector::Id("nope".into()))
                .unwrap_err()
                .contains("intro, 7f3a, empty")
        );
    }

    #[test]
    fn image_outputs_are_images_and_bad_ones_are_named() {
        let mut png = Vec::new();
        image::DynamicImage::new_rgb8(3, 2)
            .write_to(&mut std::io::Cursor::new(&mut png), image::ImageFormat::Png)
            .unwrap();
        let encoded = base64::engine::general_purpose::STANDARD.encode(&png);
        let nb = serde_json::json!({"cells": [{"cell_type": "code", "source": "plot()", "outputs": [
            {"output_type": "display_data", "data": {"image/png": format!("{encoded}\n"), "text/plain": "<Figure>"}},
            {"output_type": "display_data", "data": {"image/png": "bm90IGFuIGltYWdl"}},
        ]}]});
        let nb = parse(nb.to_string().as_bytes()).unwrap();
        let page = page(&nb, 0, 10, 50_000, &Caps::default());
        assert_eq!(page.images, 1);
        assert!(matches!(&page.parts[1], Part::Image(i) if i.mime == "image/png"));
        let text = media::text_of(&page.parts);
        assert!(
            text.contains("[image 1: output 0.0, image/png, 3x2, "),
            "{text}"
        );
        assert!(
            text.contains("[image/png that cannot be shown: not a PNG"),
            "{text}"
        );
        assert!(!text.contains("<Figure>"));
    }
}
