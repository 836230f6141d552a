//! `read`: a page of a file's lines, numbered `N<TAB>content`.
//!
//! The file is streamed: lines before `offset` are skipped, the page is built within the
//! output limits, and the rest is only counted for the "more lines" footer, so memory
//! depends on the page, never on the file — a 1 GB file, or one without a single newline,
//! is no different.
//!
//! read pages itself instead of being previewed: a page holds at most `limit`
//! lines (and at most `max_lines`), and as many whole numbered lines as fit `max_bytes`
//! minus room for the footer. When the file goes on, the last line says where:
//!
//! ```text
//! [lines A-B of T shown, R more lines; continue with offset=B]
//! ```
//!
//! `A` and `B` are 1-based line numbers; `offset=B` is the 0-based offset to send next.
//! No spill file is written: the file itself is the source. Lines are cut at 2,000
//! characters (on a character boundary, marked `...` and followed by how many characters are
//! left and the `char_offset` that goes on from there: a minified file's line can be read
//! through),
//! a trailing CR is not shown, and bytes that are not UTF-8 are replaced (`metadata.lossy`).
//! A UTF-8 BOM at the start of the file is shown as [`textdoc::BOM_MARKER`] at the start of
//! line 1 (only there): an invisible character would be copied into edits, or not, by luck.
//! Deliberate differences from the reference: a trailing newline does not produce an extra
//! numbered line, there is no 10 MB cut-off, and negative offsets or limits are refused.
//!
//! Images (`.jpg`, `.jpeg`, `.png`, `.gif`, `.webp`) come back as an image part
//! (`media::fit`: judged by content, refused over `images.max_pixels` before decoding,
//! decoded whole, downscaled over `images.max_bytes` or `images.max_side`), the text saying `[image 1: LABEL]`; notebooks
//! (`.ipynb`) as their cells, source then outputs, images as image parts, paged by cells
//! (`notebook::page`). Neither is previewed. Binary files are refused, judged by their first 8,192
//! bytes ([`crate::binary`]: a known signature such as gzip, zip or ELF, or more than 30%
//! non-text bytes, where invalid UTF-8 counts as non-text). A mostly-text file with a few
//! invalid bytes (Latin-1 accents) is shown with them replaced and `metadata.lossy`.

use std::io::{BufRead, BufReader, ErrorKind, Read};
use std::path::Path;

use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::binary;
use crate::media::{self, Image, Part};
use crate::notebook;
use crate::schema;
use crate::session::CallContext;
use crate::suggest::Want;
use crate::textdoc;
use crate::tool::{Access, Body, ToolDef, ToolDoc, ToolOutput, parse_args};

/// Lines shown when no `limit` is given.
const DEFAULT_LIMIT: u64 = 2_000;
/// Characters of a line shown before it is cut with `...`.
pub const MAX_LINE_CHARS: usize = 2_000;

/// The `read` tool's definition.
pub fn definition() -> ToolDef {
    ToolDef {
        name: "read",
        summary: "Read a file's lines, numbered",
        description: "Read a file. Returns its lines numbered as `N<TAB>content` (1-based), \
            2000 lines from the start unless offset/limit say otherwise; lines longer than \
            2000 characters are cut with `...` and a note (`char_offset` reads on). A page holds as many whole lines as fit 51200 \
            bytes; when the file goes on, its last line gives the offset to continue with. \
            Images come back as images, .ipynb notebooks as cells (offset and limit count \
            cells); binaries are refused.",
        permission: "read",
        schema: parameters,
        execute,
        access: Some(access),
        precheck: None,
        checkpoint: None,
        needs: None,
        after_changes: None,
        doc: ToolDoc {
            output: "Numbered lines `N<TAB>content`, one per line of the file: at most `limit` \
                lines (2000 by default), and as many whole lines as fit 51200 bytes. read is \
                never previewed: when the file goes on, the last line says where, e.g. \
                `[lines 1-1161 of 2093 shown, 932 more lines; continue with offset=1161]` \
                (send that offset, 0-based, to continue). An empty file reads as `(empty \
                file)`. A file with a few bytes that are not UTF-8 (Latin-1 accents) is shown \
                with them replaced. Spill files under .tinytool/outputs/ are read like any \
                file. metadata: path, total_lines, start_line, end_line; mime for images; \
                lossy when bytes were not UTF-8. A UTF-8 byte order mark at the start of the \
                file shows as `[BOM]` at the start of line 1, once (the character itself is \
                invisible); the file is not changed, and edit and write keep the mark and take \
                a `[BOM]` copied into their text back off. An image is an image part of the \
                result (under exec in the shape of the call's provider, over MCP an image \
                block), the output text saying `[image 1: PATH, MIME, WxH, N bytes]`; an image \
                over images.max_bytes (3932160 by default) or with a side over images.max_side \
                (8000) is downscaled until it fits and the text says from what size; every image \
                is decoded first, so a truncated or damaged one is refused rather than sent; metadata: path, mime, bytes, width, height, \
                downscaled_from. A notebook reads as `[cell N: TYPE, id ID, execution_count \
                C]` followed by the cell's source (no line numbers, so edit's old_string can \
                be copied from it), then `[output N.M: KIND]` and each output: its image as \
                an image part, else its text (stream, text/plain, an error's traceback without \
                colour codes), each cut at 8192 bytes; offset and limit count cells, whole \
                cells fill the page and `[cells A-B of T shown, R more; continue with \
                offset=B+1]` ends it when cells are left; images of one read are capped at \
                images.max_bytes in all. metadata: path, cells, start_cell, end_cell, images.",
            errors: "`File not found: PATH`, with `Did you mean: PATH?` (or `Did you mean one \
                of: ...?`) naming the file probably meant: with `\\` read as `/`, without the \
                project's folder name or other leading folders, an absolute path's tail found in \
                the project, the files of the same name elsewhere in the project (five at most, \
                with how many more), else a sibling sharing the first three characters or more; \
                only files the policy lets you read are named. A path outside the project that \
                does not exist is refused (exit status 3) with `Refused: PATH does not exist` and \
                the same suggestion, never a rule to allow it; `PATH is a directory, not a file`; `Binary file \
                detected: PATH (KIND, N bytes)` for a known binary signature (gzip, zip, xz, \
                zstd, bzip2, 7z, ELF, Mach-O, PE, wasm, class, SQLite, PDF, ...) or more than \
                30% non-text bytes in the first 8192 (invalid UTF-8 counts); `Offset N is beyond end of \
                file (M lines; the last valid offset is M-1)` (offsets are 0-based; for an \
                empty file only offset 0 reads, as `(empty file)`); `Cannot read image PATH: \
                ...` for a file that is not a PNG, JPEG, GIF or WebP by its content, a broken \
                header, data that does not decode, or more pixels than images.max_pixels \
                (32000000 by default, refused before decoding); `Image too large` for an \
                image file over 67108864 bytes; `Cannot read notebook PATH: ...` naming the \
                line and column of bad JSON, an nbformat 3 notebook or the cell whose field is \
                wrong.",
            examples: &[
                (
                    "Read the first 40 lines of a file",
                    "tinytool read --file-path src/main.rs --limit 40",
                ),
                (
                    "The same call as JSON on standard input",
                    "echo '{\"file_path\":\"src/main.rs\",\"limit\":40}' | tinytool read",
                ),
                (
                    "Read lines 101 to 150",
                    "tinytool read --file-path big.log --offset 100 --limit 50",
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
                "description": "Path of the file to read: absolute, or relative to the working directory."
            },
            "offset": {
                "type": "integer",
                "minimum": 0,
                "description": "0-based index of the first line to show (default 0)."
            },
            "limit": {
                "type": "integer",
                "minimum": 1,
                "description": "Maximum number of lines to show (default 2000)."
            },
            "char_offset": {
                "type": "integer",
                "minimum": 0,
                "description": "0-based character of the line at offset to start from (reads on in a cut line; default 0)."
            }
        }),
        &["file_path"],
    )
}

/// A read needs `read` of the resolved path.
fn access(ctx: &CallContext, args: &Map<String, Value>) -> Vec<Access> {
    Access::file_path(ctx, "read", args)
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ReadArgs {
    file_path: String,
    #[serde(default)]
    offset: u64,
    limit: Option<u64>,
    #[serde(default)]
    char_offset: u64,
}

fn execute(ctx: &CallContext, args: Map<String, Value>) -> anyhow::Result<ToolOutput> {
    let args: ReadArgs = match parse_args(args) {
        Ok(args) => args,
        Err(output) => return Ok(output),
    };
    let path = ctx.resolve(&args.file_path);
    let shown = ctx.display(&path);
    let meta = match std::fs::metadata(&path) {
        Ok(meta) => meta,
        Err(err) if err.kind() == ErrorKind::NotFound => {
            let mut message = format!("File not found: {shown}");
            if let Some(suggestion) = ctx.did_you_mean(&path, Want::Existing) {
                message.push('\n');
                message.push_str(&suggestion);
            }
            return Ok(ToolOutput::error(message));
        }
        Err(err) => {
            return Ok(ToolOutput::error(format!(
                "Error accessing file: {shown}: {err}"
            )));
        }
    };
    if meta.is_dir() {
        return Ok(ToolOutput::error(format!(
            "{shown} is a directory, not a file (use glob to list its files)"
        )));
    }
    if !meta.is_file() {
        return Ok(ToolOutput::error(format!(
            "{shown} is not a regular file (a device, socket or pipe cannot be read)"
        )));
    }
    if is_image(&path) {
        return read_image(ctx, &path, &shown, meta.len());
    }
    if path
        .extension()
        .is_some_and(|ext| ext.eq_ignore_ascii_case("ipynb"))
    {
        return read_notebook(ctx, &path, &shown, meta.len(), &args);
    }
    // Through the checked directories only: a directory swapped for a symlink since the
    // path was resolved and judged is refused, not followed.
    let mut file = match crate::beneath::open_read(&path, false) {
        Ok(file) => file,
        Err(err) => {
            return Ok(ToolOutput::error(format!(
                "Error reading file: {shown}: {err}"
            )));
        }
    };
    let mut sniff = Vec::with_capacity(binary::CHECK_SIZE);
    (&mut file)
        .take(binary::CHECK_SIZE as u64)
        .read_to_end(&mut sniff)?;
    if let Some(kind) = binary::detect(&sniff) {
        let what = match kind {
            "data" => String::new(),
            kind => format!("{kind}, "),
        };
        return Ok(ToolOutput::error(format!(
            "Binary file detected: {shown} ({what}{} bytes). Cannot display binary content.",
            meta.len()
        )));
    }
    let reader = BufReader::with_capacity(256 * 1024, std::io::Cursor::new(sniff).chain(file));
    let limits = &ctx.session.limits;
    let limit = args
        .limit
        .unwrap_or(DEFAULT_LIMIT)
        .min(limits.max_lines.saturating_sub(1).max(1) as u64);
    let budget = limits.max_bytes.saturating_sub(FOOTER_ROOM).max(1);
    let page = read_page(reader, args.offset, args.char_offset, limit, budget)?;
    if args.char_offset > 0 && args.char_offset >= page.first_line_chars {
        return Ok(ToolOutput::error(format!(
            "char_offset {} is beyond the end of line {} ({} characters)",
            args.char_offset,
            args.offset + 1,
            page.first_line_chars
        )));
    }
    if page.total_lines == 0 && args.offset == 0 {
        return Ok(ToolOutput::text("(empty file)")
            .with("path", shown)
            .with("total_lines", 0));
    }
    if args.offset >= page.total_lines {
        return Ok(ToolOutput::error(beyond_end(args.offset, page.total_lines))
            .with("total_lines", page.total_lines));
    }
    let end = page.end;
    let mut text = page.text;
    if end < page.total_lines {
        text.push_str(&format!(
            "[lines {}-{end} of {} shown, {} more lines; continue with offset={end}]\n",
            args.offset + 1,
            page.total_lines,
            page.total_lines - end
        ));
    }
    let mut output = ToolOutput {
        body: Body::Paged(text),
        is_error: false,
        metadata: Map::new(),
    }
    .with("path", shown)
    .with("total_lines", page.total_lines)
    .with("start_line", args.offset + 1)
    .with("end_line", end);
    if page.lossy {
        output = output.with("lossy", true);
    }
    Ok(output)
}

/// The refusal of an `offset` at or past the end of a file of `total` lines, naming the
/// last offset that reads something (offsets are 0-based, so it is `total - 1`; an empty
/// file reads only at 0, as `(empty file)`).
fn beyond_end(offset: u64, total: u64) -> String {
    match total {
        0 => {
            format!("Offset {offset} is beyond end of file (the file is empty; offset 0 reads it)")
        }
        1 => format!("Offset {offset} is beyond end of file (1 line; the last valid offset is 0)"),
        _ => format!(
            "Offset {offset} is beyond end of file ({total} lines; the last valid offset is {})",
            total - 1
        ),
    }
}

/// Bytes of the output budget kept free for read's footer.
const FOOTER_ROOM: usize = 160;

/// A page of numbered lines and what was learned about the whole file on the way.
struct Page {
    text: String,
    /// 0-based index of the first line not shown.
    end: u64,
    total_lines: u64,
    lossy: bool,
    /// Characters of the line at the offset.
    first_line_chars: u64,
}

/// The characters `bytes` start (UTF-8 lead bytes and bytes that are not UTF-8 at all
/// count one each).
fn chars_in(bytes: &[u8]) -> u64 {
    bytes
        .iter()
        .filter(|&&b| b & 0b1100_0000 != 0b1000_0000)
        .count() as u64
}

/// The byte of `bytes` where its character number `n` (0-based) starts, or its length.
fn char_start(bytes: &[u8], n: u64) -> usize {
    let mut seen = 0;
    for (i, &b) in bytes.iter().enumerate() {
        if b & 0b1100_0000 != 0b1000_0000 {
            if seen == n {
                return i;
            }
            seen += 1;
        }
    }
    bytes.len()
}

/// Streams `reader`, writing lines `offset..offset+limit` as `N<TAB>content` while they
/// fit `budget` bytes (the first line always does, from its character `start_char`), and
/// counting every line.
fn read_page(
    mut reader: impl BufRead,
    offset: u64,
    start_char: u64,
    limit: u64,
    budget: usize,
) -> std::io::Result<Page> {
    // Enough bytes for 2,000 characters of up to 4 bytes each, plus a possible CR.
    const KEEP_BYTES: usize = 4 * MAX_LINE_CHARS + 1;
    let mut page = Page {
        text: String::new(),
        end: offset.saturating_add(limit),
        total_lines: 0,
        lossy: false,
        first_line_chars: 0,
    };
    let mut index: u64 = 0;
    let mut kept: Vec<u8> = Vec::new();
    let mut line_len: u64 = 0;
    // Of the line being read (in the page): its characters so far and the bytes skipped
    // before `start_char`.
    let mut chars: u64 = 0;
    let mut skipped: u64 = 0;
    loop {
        let buf = reader.fill_buf()?;
        if buf.is_empty() {
            break;
        }
        let len = buf.len();
        if index >= page.end {
            // Past the page: only count the remaining lines.
            index += memchr::memchr_iter(b'\n', buf).count() as u64;
            line_len = match buf.last() {
                Some(b'\n') => 0,
                _ => line_len + 1,
            };
            reader.consume(len);
            continue;
        }
        let mut pos = 0;
        while pos < len {
            let rest = &buf[pos..];
            let (segment, newline) = match memchr::memchr(b'\n', rest) {
                Some(i) => (&rest[..i], true),
                None => (rest, false),
            };
            let in_page = index >= offset && index < page.end;
            if in_page {
                let skip_to = if index == offset { start_char } else { 0 };
                let from = if chars >= skip_to {
                    0
                } else {
                    char_start(segment, skip_to - chars)
                };
                if kept.len() < KEEP_BYTES {
                    let part = &segment[from..];
                    let room = KEEP_BYTES - kept.len();
                    kept.extend_from_slice(&part[..part.len().min(room)]);
                }
                skipped += from as u64;
                chars += chars_in(segment);
            }
            line_len += segment.len() as u64;
            pos += segment.len() + usize::from(newline);
            if newline {
                if index >= offset && index < page.end {
                    let from = if index == offset { start_char } else { 0 };
                    page.add_line(index, &kept, line_len - skipped, (from, chars), budget);
                }
                kept.clear();
                line_len = 0;
                chars = 0;
                skipped = 0;
                index += 1;
                if index >= page.end {
                    let tail = &buf[pos..];
                    index += memchr::memchr_iter(b'\n', tail).count() as u64;
                    line_len = tail.len() as u64
                        - tail
                            .iter()
                            .rposition(|&b| b == b'\n')
                            .map_or(0, |p| p as u64 + 1);
                    pos = len;
                }
            }
        }
        reader.consume(len);
    }
    if line_len > 0 {
        // A last line without a newline.
        if index >= offset && index < page.end {
            let from = if index == offset { start_char } else { 0 };
            page.add_line(index, &kept, line_len - skipped, (from, chars), budget);
        }
        index += 1;
    }
    page.end = page.end.min(index);
    page.total_lines = index;
    Ok(page)
}

impl Page {
    /// Adds line `index` (its kept bytes, the length of what is left of it from the first
    /// character shown, and that character with the line's count of characters) while it
    /// fits `budget` bytes (the first line always does); otherwise the page ends before it.
    fn add_line(
        &mut self,
        index: u64,
        kept: &[u8],
        line_len: u64,
        (from, chars): (u64, u64),
        budget: usize,
    ) {
        if self.text.is_empty() {
            self.first_line_chars = chars;
        }
        let (line, was_lossy) = format_line(index, kept, line_len, (from, chars));
        if self.text.is_empty() || self.text.len() + line.len() <= budget {
            self.text.push_str(&line);
            self.lossy |= was_lossy;
        } else {
            self.end = index;
        }
    }
}

/// One numbered line and whether bytes had to be replaced. A line cut at
/// [`MAX_LINE_CHARS`] characters ends in `...` and says how many characters are left and
/// how to read on (`from`: the character the line is shown from; `chars`: its count).
fn format_line(
    index: u64,
    kept: &[u8],
    full_len: u64,
    (from, chars): (u64, u64),
) -> (String, bool) {
    let complete = kept.len() as u64 == full_len;
    let bytes = match kept {
        [rest @ .., b'\r'] if complete => rest,
        _ => kept,
    };
    let (text, lossy) = match std::str::from_utf8(bytes) {
        Ok(text) => (std::borrow::Cow::Borrowed(text), false),
        Err(err) if !complete && err.error_len().is_none() => {
            (String::from_utf8_lossy(&bytes[..err.valid_up_to()]), false)
        }
        Err(_) => (String::from_utf8_lossy(bytes), true),
    };
    let cut_at = text.char_indices().nth(MAX_LINE_CHARS).map(|(i, _)| i);
    let shown = match cut_at {
        Some(i) => &text[..i],
        None => &text[..],
    };
    // The BOM stays a character of the line for char_offset (it is one in the file); only
    // how it looks changes, and only at the very start of the file.
    let visible = match shown.strip_prefix(textdoc::BOM) {
        Some(rest) if index == 0 && from == 0 => format!("{}{rest}", textdoc::BOM_MARKER),
        _ => shown.to_string(),
    };
    let line = if cut_at.is_some() || !complete {
        let next = from + shown.chars().count() as u64;
        format!(
            "{}\t{visible}... [{} more characters on this line; char_offset={next} with offset={index} goes on]\n",
            index + 1,
            chars.saturating_sub(next)
        )
    } else {
        format!("{}\t{visible}\n", index + 1)
    };
    (line, lossy)
}

/// Whether `path` names an image by its extension (its content decides which kind).
fn is_image(path: &Path) -> bool {
    path.extension()
        .and_then(|ext| ext.to_str())
        .is_some_and(|ext| {
            matches!(
                ext.to_ascii_lowercase().as_str(),
                "jpg" | "jpeg" | "png" | "gif" | "webp"
            )
        })
}

/// A notebook's cells `offset..` (at most `limit`) as text and images (`notebook::page`).
fn read_notebook(
    ctx: &CallContext,
    path: &Path,
    shown: &str,
    size: u64,
    args: &ReadArgs,
) -> anyhow::Result<ToolOutput> {
    if size > notebook::MAX_FILE_BYTES {
        return Ok(ToolOutput::error(format!(
            "Notebook too large: {shown} is {size} bytes; read takes notebooks of at most {} bytes",
            notebook::MAX_FILE_BYTES
        )));
    }
    if args.char_offset > 0 {
        return Ok(ToolOutput::error(
            "char_offset does not apply to a notebook: its offset and limit count cells",
        ));
    }
    let mut bytes = Vec::with_capacity(size as usize);
    crate::beneath::open_read(path, false)?
        .take(notebook::MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)?;
    let parsed = match notebook::parse(&bytes) {
        Ok(parsed) => parsed,
        Err(why) => {
            return Ok(
                ToolOutput::error(format!("Cannot read notebook {shown}: {why}"))
                    .with("path", shown),
            );
        }
    };
    let total = parsed.cells.len();
    if total == 0 {
        return Ok(ToolOutput::text("(empty notebook)")
            .with("path", shown)
            .with("cells", 0));
    }
    let offset = usize::try_from(args.offset).unwrap_or(usize::MAX);
    if offset >= total {
        return Ok(ToolOutput::error(format!(
            "Offset {offset} is beyond the notebook's last cell ({total} cells; offset counts \
             cells from 0, so the last valid offset is {})",
            total - 1
        ))
        .with("cells", total));
    }
    let limits = &ctx.session.limits;
    let limit = usize::try_from(args.limit.unwrap_or(DEFAULT_LIMIT)).unwrap_or(usize::MAX);
    let budget = limits.max_bytes.saturating_sub(FOOTER_ROOM).max(1);
    let page = notebook::page(&parsed, offset, limit, budget, &ctx.session.config.images);
    Ok(ToolOutput {
        body: Body::Parts(page.parts),
        is_error: false,
        metadata: Map::new(),
    }
    .with("path", shown)
    .with("cells", total)
    .with("start_cell", offset)
    .with("end_cell", page.end)
    .with("images", page.images))
}

/// An image file as an image part, made fit to send (`media::fit`: judged by its content,
/// refused over the pixel cap before decoding, downscaled over the byte cap).
fn read_image(
    ctx: &CallContext,
    path: &Path,
    shown: &str,
    size: u64,
) -> anyhow::Result<ToolOutput> {
    let caps = ctx.session.config.images;
    let too_large = |size: u64| {
        ToolOutput::error(format!(
            "Image too large: {shown} is {size} bytes; read takes image files of at most {} bytes \
             (and sends at most {} bytes of one, downscaling larger ones: images.max_bytes in \
             config.json)",
            media::MAX_FILE_BYTES,
            caps.max_bytes
        ))
    };
    if size > media::MAX_FILE_BYTES {
        return Ok(too_large(size));
    }
    let mut bytes = Vec::with_capacity(size as usize);
    crate::beneath::open_read(path, false)?
        .take(media::MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)?;
    if bytes.len() as u64 > media::MAX_FILE_BYTES {
        return Ok(too_large(bytes.len() as u64));
    }
    let original = bytes.len();
    let fitted = match media::fit(bytes, &caps) {
        Ok(fitted) => fitted,
        Err(why) => {
            return Ok(
                ToolOutput::error(format!("Cannot read image {shown}: {why}")).with("path", shown),
            );
        }
    };
    let label = fitted.label(shown, &caps);
    let (width, height) = fitted.size;
    let mut output = ToolOutput {
        body: Body::Parts(vec![Part::Image(Image::new(
            fitted.mime,
            &fitted.bytes,
            label,
        ))]),
        is_error: false,
        metadata: Map::new(),
    }
    .with("path", shown)
    .with("mime", fitted.mime)
    .with("bytes", fitted.bytes.len())
    .with("width", width)
    .with("height", height);
    if let Some((w, h, _)) = fitted.downscaled_from {
        output = output.with(
            "downscaled_from",
            json!({"width": w, "height": h, "bytes": original}),
        );
    }
    Ok(output)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(text: &[u8], offset: u64, limit: u64) -> (String, u64) {
        let page = read_page(text, offset, 0, limit, 51_000).unwrap();
        (page.text, page.total_lines)
    }

    #[test]
    fn numbers_lines_without_an_extra_line_for_the_final_newline() {
        assert_eq!(
            page(b"line 1\nline 2\nline 3\n", 0, 2000),
            ("1\tline 1\n2\tline 2\n3\tline 3\n".into(), 3)
        );
        assert_eq!(page(b"a\nb", 0, 2000), ("1\ta\n2\tb\n".into(), 2));
        assert_eq!(page(b"", 0, 2000), (String::new(), 0));
        assert_eq!(page(b"\n", 0, 2000), ("1\t\n".into(), 1));
    }

    #[test]
    fn offset_and_limit_select_a_page_and_the_rest_is_counted() {
        let text: String = (1..=100).map(|i| format!("x{i}\n")).collect();
        let (out, total) = page(text.as_bytes(), 10, 5);
        assert_eq!(out, "11\tx11\n12\tx12\n13\tx13\n14\tx14\n15\tx15\n");
        assert_eq!(total, 100);
        let (_, total) = page(b"a\nb\nc", 0, 1);
        assert_eq!(total, 3);
    }

    #[test]
    fn long_lines_are_cut_at_2000_characters_on_a_boundary() {
        let line = "ж".repeat(2_500);
        let (out, _) = page(line.as_bytes(), 0, 10);
        let shown = out
            .strip_prefix("1\t")
            .unwrap()
            .strip_suffix(
                "... [500 more characters on this line; char_offset=2000 with offset=0 goes on]\n",
            )
            .unwrap();
        assert_eq!(shown.chars().count(), 2_000);
        let exact = "a".repeat(2_000);
        assert_eq!(page(exact.as_bytes(), 0, 1).0, format!("1\t{exact}\n"));
        let huge = vec![b'q'; 1_000_000];
        let (out, total) = page(&huge, 0, 1);
        assert_eq!(total, 1);
        assert!(
            out.ends_with("... [998000 more characters on this line; char_offset=2000 with offset=0 goes on]\n"),
            "{}",
            &out[out.len() - 100..]
        );
    }

    #[test]
    fn a_cut_line_goes_on_from_its_char_offset() {
        let mut line = "ж".repeat(2_500);
        line.push_str("end\nnext\n");
        let page = read_page(line.as_bytes(), 0, 2_000, 10, 51_000).unwrap();
        assert_eq!(page.text, format!("1\t{}end\n2\tnext\n", "ж".repeat(500)));
        assert_eq!(page.first_line_chars, 2_503);
        // Across reads of a small buffer, a character is never split.
        let reader = std::io::BufReader::with_capacity(7, line.as_bytes());
        let page = read_page(reader, 0, 2_501, 1, 51_000).unwrap();
        assert_eq!(page.text, "1\tnd\n");
    }

    #[test]
    fn crlf_is_not_shown_and_invalid_utf8_is_replaced() {
        assert_eq!(page(b"a\r\nb\r\n", 0, 10).0, "1\ta\n2\tb\n");
        let page = read_page(&b"ok\n\xff\n"[..], 0, 0, 10, 51_000).unwrap();
        assert!(page.lossy);
        assert_eq!(page.text, "1\tok\n2\t\u{fffd}\n");
    }

    #[test]
    fn a_page_holds_whole_lines_within_the_budget_and_ends_where_it_stopped() {
        let text: String = (1..=100).map(|i| format!("{i:039}\n")).collect();
        let page = read_page(text.as_bytes(), 0, 0, 2000, 1_000).unwrap();
        // Each numbered line is "N\t" + 39 digits + newline.
        assert!(page.text.len() <= 1_000, "{}", page.text.len());
        assert_eq!(page.end, page.text.lines().count() as u64);
        assert_eq!(page.end, 23);
        assert_eq!(page.total_lines, 100);
        let next = read_page(text.as_bytes(), page.end, 0, 2000, 1_000).unwrap();
        assert!(next.text.starts_with("24\t"), "{}", &next.text[..10]);
    }

    #[test]
    fn tiny_buffers_give_the_same_page() {
        let text: String = (1..=50).map(|i| format!("line number {i}\n")).collect();
        let reader = BufReader::with_capacity(3, text.as_bytes());
        let got = read_page(reader, 7, 0, 9, 51_000).unwrap();
        assert_eq!(got.total_lines, 50);
        assert_eq!(got.text, page(text.as_bytes(), 7, 9).0);
    }

    #[test]
    fn a_bom_shows_once_as_a_marker_at_the_start_of_line_one() {
        let text = "\u{feff}import x\n\u{feff}second\n";
        assert_eq!(
            page(text.as_bytes(), 0, 10).0,
            "1\t[BOM]import x\n2\t\u{feff}second\n"
        );
        // A page from line 2 has no marker, and line 1 read on from a character either.
        assert_eq!(page(text.as_bytes(), 1, 10).0, "2\t\u{feff}second\n");
        let page = read_page(text.as_bytes(), 0, 1, 1, 51_000).unwrap();
        assert_eq!(page.text, "1\timport x\n");
        // The BOM counts as the line's first character, as in the file.
        let long = format!("\u{feff}{}", "a".repeat(2_100));
        let page = read_page(long.as_bytes(), 0, 0, 1, 51_000).unwrap();
        assert!(page.text.starts_with("1\t[BOM]aaa"), "{}", &page.text[..20]);
        assert!(
            page.text.ends_with(
                "... [101 more characters on this line; char_offset=2000 with offset=0 goes on]\n"
            ),
            "{}",
            &page.text[page.text.len() - 90..]
        );
    }

    #[test]
    fn an_offset_past_the_end_names_the_last_valid_one() {
        assert_eq!(
            beyond_end(688, 688),
            "Offset 688 is beyond end of file (688 lines; the last valid offset is 687)"
        );
        assert_eq!(
            beyond_end(3, 1),
            "Offset 3 is beyond end of file (1 line; the last valid offset is 0)"
        );
        assert_eq!(
            beyond_end(1, 0),
            "Offset 1 is beyond end of file (the file is empty; offset 0 reads it)"
        );
    }
}
