//! Output truncation: the registry's head+tail preview (DESIGN §3) and the directional
//! `TruncHead` / `TruncTail` cuts of spec 8.2.
//!
//! The preview is computed from a [`Capture`], a bounded record of a stream: the first 30
//! lines, the last 20 lines and the totals. Tools that read or run something large (read,
//! bash) write straight into a capture, so memory never depends on the size of the source;
//! in-memory strings go through the same code via [`preview`].
//!
//! Preview format, when the whole output has more than 50 lines or more than `max_bytes`
//! bytes (51,200 by default):
//!
//! ```text
//! <first 30 lines, at most max_bytes/2 bytes>
//! [preview: S of N lines, SIZE total]
//! ...
//! <last 20 lines of the whole output, at most max_bytes/2 bytes>
//! ```
//!
//! `N` and `SIZE` describe the whole output (a trailing newline does not start a line), `S`
//! is the number of lines shown. A line cut to fit its half of the budget ends in `…`. The
//! tail never repeats a head line: with fewer than 50 lines it holds the lines after the
//! 30th, and it is left out (with its `...` line) when there are none.

use std::borrow::Cow;
use std::collections::VecDeque;

/// Spec 8.2 `MaxLines`: the line limit of [`truncate`].
pub const MAX_LINES: usize = 2_000;
/// Spec 8.2 `MaxBytes`: the byte limit of the preview and of [`truncate`].
pub const MAX_BYTES: usize = 51_200;
/// Lines kept from the start of a previewed output.
pub const PREVIEW_HEAD_LINES: usize = 30;
/// Lines kept from the end of a previewed output.
pub const PREVIEW_TAIL_LINES: usize = 20;

/// The output limits in effect (config `output.max_lines` / `output.max_bytes`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Line limit of [`truncate`].
    pub max_lines: usize,
    /// Byte limit of the preview and of [`truncate`]; head and tail get half each.
    pub max_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_lines: MAX_LINES,
            max_bytes: MAX_BYTES,
        }
    }
}

/// One line as kept by a [`Capture`]: a bounded prefix and the line's real length.
#[derive(Debug, Clone, Default)]
struct KeptLine {
    bytes: Vec<u8>,
    full_len: usize,
}

impl KeptLine {
    fn is_cut(&self) -> bool {
        self.full_len > self.bytes.len()
    }
}

/// A bounded record of a stream of output bytes, enough to render either the whole output
/// (when it is under the preview thresholds) or its preview.
///
/// Memory is bounded by the limits: at most 50 lines of at most `max_bytes` bytes each,
/// whatever is pushed.
#[derive(Debug, Clone)]
pub struct Capture {
    max_bytes: usize,
    head: Vec<KeptLine>,
    tail: VecDeque<KeptLine>,
    current: KeptLine,
    total_bytes: u64,
    complete_lines: u64,
}

/// What a finished [`Capture`] renders to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rendered {
    /// The whole output, or its preview.
    pub text: String,
    /// Whether `text` is a preview.
    pub truncated: bool,
    /// Whether bytes that are not UTF-8 were replaced.
    pub lossy: bool,
    /// Lines of the whole output (a trailing newline does not start a line).
    pub total_lines: u64,
    /// Bytes of the whole output.
    pub total_bytes: u64,
}

impl Capture {
    /// An empty capture for the given limits.
    pub fn new(limits: Limits) -> Self {
        Capture {
            max_bytes: limits.max_bytes.max(16),
            head: Vec::new(),
            tail: VecDeque::new(),
            current: KeptLine::default(),
            total_bytes: 0,
            complete_lines: 0,
        }
    }

    /// Appends bytes of the stream.
    pub fn push(&mut self, mut bytes: &[u8]) {
        self.total_bytes += bytes.len() as u64;
        while !bytes.is_empty() {
            match memchr::memchr(b'\n', bytes) {
                Some(pos) => {
                    self.extend_current(&bytes[..pos]);
                    self.end_line();
                    bytes = &bytes[pos + 1..];
                }
                None => {
                    self.extend_current(bytes);
                    bytes = &[];
                }
            }
        }
    }

    /// Appends text of the stream.
    pub fn push_str(&mut self, text: &str) {
        self.push(text.as_bytes());
    }

    /// Bytes pushed so far.
    pub fn total_bytes(&self) -> u64 {
        self.total_bytes
    }

    fn extend_current(&mut self, bytes: &[u8]) {
        // Every line is kept up to the whole byte budget: a line the head has no room for
        // can still be one of the last lines the tail shows.
        let room = self.max_bytes.saturating_sub(self.current.bytes.len());
        let keep = room.min(bytes.len());
        self.current.bytes.extend_from_slice(&bytes[..keep]);
        self.current.full_len += bytes.len();
    }

    fn end_line(&mut self) {
        self.complete_lines += 1;
        if self.head.len() < PREVIEW_HEAD_LINES {
            let line = std::mem::take(&mut self.current);
            self.head.push(line);
        } else {
            // Reuse the evicted line's buffer: a command printing millions of lines
            // should not allocate once per line.
            let mut spare = if self.tail.len() == PREVIEW_TAIL_LINES {
                self.tail.pop_front().unwrap_or_default()
            } else {
                KeptLine::default()
            };
            spare.bytes.clear();
            spare.full_len = 0;
            let line = std::mem::replace(&mut self.current, spare);
            self.tail.push_back(line);
        }
    }

    /// Appends another capture's stream after this one's, as if its bytes had been pushed
    /// here: the result keeps the first lines, the last lines and the totals of the
    /// concatenation (what was dropped from the middle of `other` is counted, not kept).
    pub fn append(&mut self, other: Capture) {
        let Capture {
            head,
            tail,
            current,
            total_bytes,
            complete_lines,
            ..
        } = other;
        let kept = (head.len() + tail.len()) as u64;
        for line in head {
            self.push_kept(&line);
            self.end_line();
        }
        let dropped = complete_lines.saturating_sub(kept);
        if dropped > 0 {
            // Lines only leave `other`'s tail once it is full, so its 20 tail lines replace
            // whatever this capture's tail held; the dropped ones are only counted.
            self.complete_lines += dropped;
            self.tail.clear();
        }
        for line in tail {
            self.push_kept(&line);
            self.end_line();
        }
        self.push_kept(&current);
        // The replayed pieces were counted above only as lines; the bytes are the other
        // stream's total.
        self.total_bytes += total_bytes;
    }

    /// Extends the current line with a kept (possibly cut) line of another capture.
    fn push_kept(&mut self, line: &KeptLine) {
        let room = self.max_bytes.saturating_sub(self.current.bytes.len());
        let keep = room.min(line.bytes.len());
        self.current.bytes.extend_from_slice(&line.bytes[..keep]);
        self.current.full_len += line.full_len;
    }

    /// Renders the whole output, or its preview when it is over the thresholds.
    pub fn finish(mut self) -> Rendered {
        let ends_with_newline = self.current.full_len == 0;
        if !ends_with_newline {
            self.end_line();
            self.complete_lines -= 1;
        }
        let total_lines = self.complete_lines + u64::from(!ends_with_newline);
        let over = total_lines > (PREVIEW_HEAD_LINES + PREVIEW_TAIL_LINES) as u64
            || self.total_bytes > self.max_bytes as u64;
        let mut lossy = false;
        let lines = self.head.iter().chain(self.tail.iter());
        if !over {
            let mut text = String::with_capacity(self.total_bytes as usize);
            for (i, line) in lines.enumerate() {
                if i > 0 {
                    text.push('\n');
                }
                let (s, was_lossy) = decode(&line.bytes);
                lossy |= was_lossy;
                text.push_str(&s);
            }
            if ends_with_newline && total_lines > 0 {
                text.push('\n');
            }
            return Rendered {
                text,
                truncated: false,
                lossy,
                total_lines,
                total_bytes: self.total_bytes,
            };
        }
        let budget = self.max_bytes / 2;
        let mut head = fit_lines(self.head.iter(), budget, &mut lossy);
        // Head lines the head's bytes could not show are last lines like the tail's: the
        // tail takes the last 20 of them all (a 5 MB line must not hide the lines after it).
        let rest: Vec<&KeptLine> = self.head[head.len()..].iter().chain(&self.tail).collect();
        let from = rest.len().saturating_sub(PREVIEW_TAIL_LINES);
        let mut tail = fit_lines(rest[from..].iter().rev().copied(), budget, &mut lossy);
        tail.reverse();
        let shown = head.len() + tail.len();
        let mut text = head.join("\n");
        head.clear();
        text.push_str(&format!(
            "\n[preview: {shown} of {total_lines} lines, {} total]\n",
            format_size(self.total_bytes)
        ));
        if !tail.is_empty() {
            text.push_str("...\n");
            text.push_str(&tail.join("\n"));
            if ends_with_newline {
                text.push('\n');
            }
        }
        Rendered {
            text,
            truncated: true,
            lossy,
            total_lines,
            total_bytes: self.total_bytes,
        }
    }
}

/// Takes lines in the given order while they fit `budget` bytes (each counted with its
/// newline); the first line that does not fit is cut on a character boundary and ends in
/// `…`, and nothing after it is taken.
fn fit_lines<'a>(
    lines: impl Iterator<Item = &'a KeptLine>,
    budget: usize,
    lossy: &mut bool,
) -> Vec<String> {
    const ELLIPSIS: &str = "…";
    let mut remaining = budget;
    let mut out = Vec::new();
    for line in lines {
        let (text, was_lossy) = decode(&line.bytes);
        *lossy |= was_lossy;
        if !line.is_cut() && text.len() < remaining {
            remaining -= text.len() + 1;
            out.push(text.into_owned());
            continue;
        }
        let room = remaining.saturating_sub(ELLIPSIS.len() + 1);
        let cut = text.floor_char_boundary(room);
        out.push(format!("{}{ELLIPSIS}", &text[..cut]));
        break;
    }
    out
}

/// Decodes a kept prefix of a line. An incomplete character at the very end (where the
/// prefix was cut) is dropped rather than replaced; other invalid bytes become U+FFFD.
fn decode(bytes: &[u8]) -> (Cow<'_, str>, bool) {
    match std::str::from_utf8(bytes) {
        Ok(s) => (Cow::Borrowed(s), false),
        Err(err) if err.error_len().is_none() => {
            let valid = &bytes[..err.valid_up_to()];
            // `valid_up_to` marks a valid prefix, so this cannot fail; stay lossy anyway.
            (String::from_utf8_lossy(valid), false)
        }
        Err(_) => (
            Cow::Owned(String::from_utf8_lossy(bytes).into_owned()),
            true,
        ),
    }
}

/// Renders a byte count the way the preview header shows it: `1.5MB`, `2KB`, `300B`.
pub fn format_size(bytes: u64) -> String {
    const KB: u64 = 1024;
    const MB: u64 = 1024 * 1024;
    if bytes >= MB {
        format!("{:.1}MB", bytes as f64 / MB as f64)
    } else if bytes >= KB {
        format!("{}KB", bytes / KB)
    } else {
        format!("{bytes}B")
    }
}

/// The registry's preview of an in-memory output: `None` when it is within the limits.
pub fn preview(text: &str, limits: Limits) -> Option<String> {
    let mut capture = Capture::new(limits);
    capture.push_str(text);
    let rendered = capture.finish();
    rendered.truncated.then_some(rendered.text)
}

/// Which end of the output [`truncate`] keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// Spec `TruncHead`: cut the head, keep the tail.
    Head,
    /// Spec `TruncTail`: cut the tail, keep the head.
    Tail,
}

/// Spec 8.2 `Truncate`: keeps one end of `content` within `limits.max_lines` lines and
/// `limits.max_bytes` bytes, cut on a character boundary, and says what was cut:
/// `... [truncated N bytes, showing last M lines] ...` before the kept tail, or
/// `... [truncated N bytes, showing first M lines] ...` after the kept head. `N` is the
/// number of bytes removed. Returns the text and whether anything was cut.
pub fn truncate(content: &str, direction: Direction, limits: Limits) -> (String, bool) {
    let line_count = count_lines(content);
    if content.len() <= limits.max_bytes && line_count <= limits.max_lines {
        return (content.to_string(), false);
    }
    let kept: &str = match direction {
        Direction::Tail => {
            let mut end = content.floor_char_boundary(limits.max_bytes);
            if let Some(pos) = nth_newline(content[..end].bytes(), limits.max_lines) {
                end = pos;
            }
            &content[..end]
        }
        Direction::Head => {
            let mut start =
                content.ceil_char_boundary(content.len().saturating_sub(limits.max_bytes));
            // Count lines from the end, ignoring a trailing newline of the whole output.
            let body = content.strip_suffix('\n').unwrap_or(content);
            if let Some(pos) = nth_newline(body[start..].bytes().rev(), limits.max_lines) {
                start = body.len() - pos;
            }
            &content[start..]
        }
    };
    let removed = content.len() - kept.len();
    let shown = count_lines(kept);
    let text = match direction {
        Direction::Tail => format!(
            "{kept}{}... [truncated {removed} bytes, showing first {shown} lines] ...",
            if kept.ends_with('\n') { "" } else { "\n" }
        ),
        Direction::Head => {
            format!("... [truncated {removed} bytes, showing last {shown} lines] ...\n{kept}")
        }
    };
    (text, true)
}

/// Position (in iteration order) of the `n`-th newline, if there are that many.
fn nth_newline(bytes: impl Iterator<Item = u8>, n: usize) -> Option<usize> {
    bytes
        .enumerate()
        .filter(|(_, b)| *b == b'\n')
        .nth(n.checked_sub(1)?)
        .map(|(i, _)| i)
}

/// Lines of a text; a trailing newline does not start a line.
pub fn count_lines(text: &str) -> usize {
    if text.is_empty() {
        return 0;
    }
    let newlines = memchr::memchr_iter(b'\n', text.as_bytes()).count();
    newlines + usize::from(!text.ends_with('\n'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn numbered(n: usize) -> String {
        (1..=n).map(|i| format!("line {i}\n")).collect()
    }

    #[test]
    fn short_output_is_unchanged() {
        assert_eq!(preview("short content", Limits::default()), None);
        let forty: String = (0..40).map(|_| "short line\n").collect();
        assert_eq!(preview(&forty, Limits::default()), None);
    }

    #[test]
    fn exactly_fifty_lines_is_unchanged_with_or_without_final_newline() {
        let fifty = numbered(50);
        assert_eq!(preview(&fifty, Limits::default()), None);
        assert_eq!(preview(fifty.trim_end(), Limits::default()), None);
    }

    #[test]
    fn fifty_one_lines_show_first_thirty_and_last_twenty() {
        let text = numbered(51);
        let out = preview(&text, Limits::default()).unwrap();
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines[0], "line 1");
        assert_eq!(lines[29], "line 30");
        assert_eq!(lines[30], "[preview: 50 of 51 lines, 399B total]");
        assert_eq!(lines[31], "...");
        assert_eq!(lines[32], "line 32");
        assert_eq!(*lines.last().unwrap(), "line 51");
        assert!(out.ends_with("line 51\n"));
    }

    #[test]
    fn header_counts_whole_output_not_a_cut() {
        let text: String = (0..200).map(|_| "line content\n").collect();
        let out = preview(&text, Limits::default()).unwrap();
        assert!(
            out.contains("[preview: 50 of 200 lines, 2KB total]"),
            "{out}"
        );
    }

    #[test]
    fn tail_comes_from_the_end_of_the_whole_output_past_the_byte_limit() {
        // 300,000 lines: far beyond the byte limit; the tail must be the real last lines.
        let text = numbered(300_000);
        let out = preview(&text, Limits::default()).unwrap();
        assert!(out.contains("of 300000 lines"));
        assert!(out.ends_with("line 300000\n"));
        let tail: Vec<&str> = out.lines().rev().take(20).collect();
        assert_eq!(tail[0], "line 300000");
        assert_eq!(tail[19], "line 299981");
    }

    #[test]
    fn a_single_huge_line_is_cut_on_a_character_boundary_with_an_ellipsis() {
        let text = "é".repeat(40_000); // 80,000 bytes, one line
        let out = preview(&text, Limits::default()).unwrap();
        let first = out.lines().next().unwrap();
        assert!(first.ends_with('…'));
        assert!(first.len() <= 25_600);
        assert!(first.trim_end_matches('…').chars().all(|c| c == 'é'));
        assert!(out.contains("[preview: 1 of 1 lines, 78KB total]"), "{out}");
        assert!(!out.contains("..."));
    }

    #[test]
    fn head_and_tail_each_stay_within_half_the_budget() {
        let line = "x".repeat(2_000);
        let text: String = (0..100).map(|_| format!("{line}\n")).collect();
        let out = preview(&text, Limits::default()).unwrap();
        let (head, rest) = out.split_once("\n[preview:").unwrap();
        let tail = rest.split_once("...\n").unwrap().1;
        assert!(head.len() <= 25_600, "head {}", head.len());
        assert!(tail.len() <= 25_600, "tail {}", tail.len());
        let shown = head.lines().count() + tail.lines().count();
        assert!(out.contains(&format!("[preview: {shown} of 100 lines")));
    }

    #[test]
    fn byte_limit_alone_with_few_lines_has_no_repeated_lines() {
        let line = "y".repeat(1_500);
        let text: String = (0..40).map(|i| format!("{i} {line}\n")).collect();
        let out = preview(&text, Limits::default()).unwrap();
        let starts: Vec<&str> = out.lines().filter_map(|l| l.split(' ').next()).collect();
        let mut sorted = starts.clone();
        sorted.dedup();
        assert_eq!(starts.len(), sorted.len());
        assert!(out.trim_end().ends_with(&line));
        assert!(out.contains("39 y"));
    }

    #[test]
    fn invalid_utf8_is_replaced_and_reported() {
        let mut capture = Capture::new(Limits::default());
        capture.push(b"ok\n\xff\xfe bad\n");
        let rendered = capture.finish();
        assert!(rendered.lossy);
        assert_eq!(rendered.text, "ok\n\u{fffd}\u{fffd} bad\n");
        assert!(!rendered.truncated);
    }

    #[test]
    fn lines_after_a_huge_line_are_shown_in_the_tail() {
        // A short output whose third line eats the head's bytes: the lines after it are
        // the last lines of the output and must not disappear.
        let text = format!("HTTP 200 OK\n\n{}\n\n[body cut]", "x".repeat(200_000));
        let preview = preview(&text, Limits::default()).unwrap();
        let lines: Vec<&str> = preview.lines().collect();
        assert_eq!(lines[0], "HTTP 200 OK");
        assert!(lines[2].ends_with('…') && lines[2].len() < 25_600);
        assert_eq!(lines[3], "[preview: 5 of 5 lines, 195KB total]");
        assert_eq!(&lines[4..], ["...", "", "[body cut]"]);
    }

    #[test]
    fn capture_in_small_pieces_equals_capture_at_once() {
        let text = numbered(500);
        let mut pieces = Capture::new(Limits::default());
        for chunk in text.as_bytes().chunks(7) {
            pieces.push(chunk);
        }
        assert_eq!(
            pieces.finish().text,
            preview(&text, Limits::default()).unwrap()
        );
    }

    #[test]
    fn appending_captures_equals_capturing_the_concatenation() {
        let cases: Vec<(String, String)> = vec![
            (numbered(3), numbered(4)),
            ("no newline".into(), "rest\nmore".into()),
            (numbered(100), "STDERR:\nboom\n".into()),
            (numbered(10), numbered(200)),
            (numbered(500), numbered(500)),
            (String::new(), numbered(60)),
            (numbered(60), String::new()),
            ("x".repeat(60_000), "y\n".repeat(5)),
        ];
        for (a, b) in cases {
            let mut first = Capture::new(Limits::default());
            first.push_str(&a);
            let mut second = Capture::new(Limits::default());
            second.push_str(&b);
            first.append(second);
            let mut whole = Capture::new(Limits::default());
            whole.push_str(&a);
            whole.push_str(&b);
            assert_eq!(first.finish(), whole.finish(), "{:.40} + {:.40}", a, b);
        }
    }

    #[test]
    fn empty_output_has_no_lines() {
        let rendered = Capture::new(Limits::default()).finish();
        assert_eq!(rendered.text, "");
        assert_eq!(rendered.total_lines, 0);
    }

    #[test]
    fn sizes_format_like_the_reference() {
        assert_eq!(format_size(300), "300B");
        assert_eq!(format_size(2_600), "2KB");
        assert_eq!(format_size(1_572_864), "1.5MB");
    }

    #[test]
    fn truncate_tail_keeps_the_head() {
        let text = numbered(2_100);
        let (out, cut) = truncate(&text, Direction::Tail, Limits::default());
        assert!(cut);
        assert!(out.starts_with("line 1\n"));
        assert!(out.contains("showing first 2000 lines"));
        assert!(!out.contains("line 2001\n"));
    }

    #[test]
    fn truncate_head_keeps_the_tail() {
        let text = numbered(2_100);
        let (out, cut) = truncate(&text, Direction::Head, Limits::default());
        assert!(cut);
        assert!(out.contains("showing last 2000 lines"));
        assert!(out.ends_with("line 2100\n"));
        assert!(!out.contains("\nline 100\n"));
        assert!(out.contains("\nline 101\n"));
    }

    #[test]
    fn truncate_counts_removed_bytes_and_respects_characters() {
        let text = "ü".repeat(30_000); // 60,000 bytes
        let (out, cut) = truncate(&text, Direction::Tail, Limits::default());
        assert!(cut);
        assert!(
            out.contains("[truncated 8800 bytes"),
            "{}",
            &out[out.len() - 80..]
        );
        let (out, _) = truncate(&text, Direction::Head, Limits::default());
        assert!(out.contains("[truncated 8800 bytes, showing last 1 lines]"));
        assert!(!truncate("short content", Direction::Tail, Limits::default()).1);
    }
}
