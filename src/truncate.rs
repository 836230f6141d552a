//! Output truncation: the registry's head+tail preview.
//!
//! The preview is computed from a [`Capture`], a bounded record of a stream: the first
//! lines, the last lines and the totals. Tools that run or fetch something large (bash,
//! grep, webfetch) write straight into a capture, so memory never depends on the size of
//! the source; in-memory strings go through the same code via [`preview`]. Once the stream
//! is over the thresholds, a capture with a spill place ([`Limits::spill`]) also streams
//! every byte into a spill file ([`crate::spill`]), so nothing is lost.
//!
//! An output is previewed only when it has more than `max_lines` lines (2,000) or more
//! than `max_bytes` bytes (51,200). Preview format:
//!
//! ```text
//! <head: whole lines, at most 60 % of max_lines and of max_bytes>
//! [preview: S of N lines, B bytes total; full output: PATH]
//! [to see the rest: read PATH with offset=H limit=2000, or grep it]
//! <tail: the last whole lines of the whole output, at most 40 % of both budgets>
//! ```
//!
//! The output of a failed run (the caller says so: [`Capture::mark_failed`]) or one where a
//! test runner reported failed tests gets a different preview when failure lines or
//! summaries ([`crate::failures`]) lie in the lines a head and tail would leave out: a
//! head of 20 % and a tail of 30 % of the budgets, and between them every failure block
//! and summary line found there that fits the rest, each after `[line L]` (its 1-based
//! line number in the spill file), under a header saying so:
//!
//! ```text
//! <head>
//! [preview: S of N lines, B bytes total; full output: PATH]
//! [the run failed: the failure lines and summaries found …; to see the rest: read PATH …]
//! [line 1523]
//! not ok 301 - case 300
//! [K more failure blocks not shown: grep PATH]
//! [the last lines:]
//! <tail>
//! ```
//!
//! `N` and `B` describe the whole output (a trailing newline does not start a line), `S`
//! is the number of lines shown, `H` the 0-based index of the first line the head does not
//! show whole. Without a spill file (none configured, or it could not be written) the
//! header is `[preview: S of N lines, B bytes total]` and the hint line says
//! `[full output not kept]`. A single line longer than its share is cut on a character
//! boundary and ends in `…`. The tail never repeats a head line.

use std::borrow::Cow;
use std::collections::VecDeque;
use std::sync::Arc;

use crate::failures::Failures;
use crate::spill::{Outputs, SpillFile};

/// The line limit of the preview (`MaxLines`).
const MAX_LINES: usize = 2_000;
/// The byte limit of the preview (`MaxBytes`).
pub const MAX_BYTES: usize = 51_200;
/// The head's share of a preview's budgets, in percent (the tail has the rest).
const HEAD_PERCENT: usize = 60;

/// The output limits in effect (config `output.max_lines` / `output.max_bytes`), and where
/// the whole output of a previewed result is kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// Line limit of the preview.
    pub max_lines: usize,
    /// Byte limit of the preview.
    pub max_bytes: usize,
    /// Where spill files go; `None`: a preview keeps nothing else.
    pub spill: Option<Arc<Outputs>>,
}

impl Limits {
    /// These limits for a call that saw secrets: its spill files go to the sealed folder
    /// ([`crate::spill::SEALED_DIR`]), out of commands' reach.
    pub fn sealed(&self) -> Limits {
        Limits {
            spill: self.spill.as_ref().map(|outputs| outputs.sealed()),
            ..self.clone()
        }
    }
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_lines: MAX_LINES,
            max_bytes: MAX_BYTES,
            spill: None,
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
/// (when it is under the preview thresholds) or its preview, plus the spill file holding
/// the whole stream once it is over them.
///
/// Memory is bounded by the limits: a head of at most 60 % of `max_bytes` (or one line cut
/// to `max_bytes`), a tail of at most `max_bytes` and one line of at most `max_bytes`,
/// whatever is pushed.
#[derive(Debug)]
pub struct Capture {
    max_lines: usize,
    max_bytes: usize,
    head: Vec<KeptLine>,
    head_bytes: usize,
    head_closed: bool,
    tail: VecDeque<KeptLine>,
    tail_bytes: usize,
    current: KeptLine,
    spare: Option<KeptLine>,
    total_bytes: u64,
    complete_lines: u64,
    outputs: Option<Arc<Outputs>>,
    /// The stream so far, while it is under the thresholds and a spill place is set.
    raw: Vec<u8>,
    spill: Option<SpillFile>,
    spill_failed: bool,
    /// The failure blocks and summary lines seen so far ([`crate::failures`]).
    failures: Failures,
    /// Whether the output is a failed run's ([`Capture::mark_failed`]).
    failed: bool,
    /// Whether lines are being replayed from another capture (already looked at there).
    replaying: bool,
    /// A sketch keeps only the totals, the first and the last bytes ([`Capture::sketch`]).
    sketch: Option<Box<Sketch>>,
}

/// The first and last bytes of a stream (see [`Capture::sketch`]).
#[derive(Debug, Default)]
struct Sketch {
    head: Vec<u8>,
    tail: Vec<u8>,
}

/// Bytes a sketch keeps at each end.
const SKETCH_BYTES: usize = 16 * 1024;

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
    /// The spill file holding the whole output, relative to the working directory.
    pub full_output: Option<String>,
}

impl Capture {
    /// The kept lines (head, tail and the unfinished line), lossily decoded and joined by
    /// newlines, without finishing the capture: enough to look for a known message.
    pub fn kept_text(&self) -> String {
        if let Some(sketch) = &self.sketch {
            let mut text = String::from_utf8_lossy(&sketch.head).into_owned();
            text.push('\n');
            text.push_str(&String::from_utf8_lossy(&sketch.tail));
            return text;
        }
        let mut text = String::new();
        for line in self
            .head
            .iter()
            .chain(self.tail.iter())
            .chain([&self.current])
        {
            text.push_str(&String::from_utf8_lossy(&line.bytes));
            text.push('\n');
        }
        text
    }

    /// An empty capture for the given limits.
    pub fn new(limits: Limits) -> Self {
        Capture {
            max_lines: limits.max_lines.max(2),
            max_bytes: limits.max_bytes.max(16),
            head: Vec::new(),
            head_bytes: 0,
            head_closed: false,
            tail: VecDeque::new(),
            tail_bytes: 0,
            current: KeptLine::default(),
            spare: None,
            total_bytes: 0,
            complete_lines: 0,
            outputs: limits.spill,
            raw: Vec::new(),
            spill: None,
            spill_failed: false,
            failures: Failures::new(limits.max_bytes.max(16)),
            failed: false,
            replaying: false,
            sketch: None,
        }
    }

    /// A capture that keeps only the byte count and the first and last 16 KB, never
    /// looking at lines: for a stream also captured whole elsewhere (a command's stdout
    /// beside the merged stream), where only a message near either end is looked for
    /// ([`Capture::kept_text`]). It is not meant to be rendered.
    pub fn sketch() -> Self {
        Capture {
            sketch: Some(Box::default()),
            ..Capture::new(Limits::default())
        }
    }

    /// Marks the output as a failed run's (a non-zero exit): its preview then shows the
    /// failures found in what it would leave out (see [`Capture::finish`]).
    pub fn mark_failed(&mut self) {
        self.failed = true;
    }

    fn head_line_cap(&self) -> usize {
        (self.max_lines * HEAD_PERCENT / 100).max(1)
    }

    fn head_byte_cap(&self) -> usize {
        self.max_bytes * HEAD_PERCENT / 100
    }

    /// Appends bytes of the stream.
    pub fn push(&mut self, bytes: &[u8]) {
        if let Some(sketch) = &mut self.sketch {
            self.total_bytes += bytes.len() as u64;
            let room = SKETCH_BYTES.saturating_sub(sketch.head.len());
            sketch
                .head
                .extend_from_slice(&bytes[..bytes.len().min(room)]);
            let rest = &bytes[bytes.len().min(room)..];
            sketch
                .tail
                .extend_from_slice(&rest[rest.len().saturating_sub(SKETCH_BYTES)..]);
            if sketch.tail.len() > 2 * SKETCH_BYTES {
                let cut = sketch.tail.len() - SKETCH_BYTES;
                sketch.tail.drain(..cut);
            }
            return;
        }
        if let Some(spill) = &mut self.spill {
            spill.write(bytes);
        } else if self.outputs.is_some() && !self.spill_failed {
            self.raw.extend_from_slice(bytes);
        }
        self.push_lines(bytes);
        self.check_spill();
    }

    /// Starts the spill file once the stream is over (or at) the thresholds.
    fn check_spill(&mut self) {
        if self.spill.is_none()
            && !self.spill_failed
            && self.outputs.is_some()
            && (self.total_bytes > self.max_bytes as u64
                || self.complete_lines >= self.max_lines as u64)
        {
            self.start_spill();
        }
    }

    fn start_spill(&mut self) {
        if self.spill.is_some() || self.spill_failed {
            return;
        }
        let Some(outputs) = &self.outputs else { return };
        match outputs.create() {
            Ok(mut file) => {
                file.write(&self.raw);
                self.spill = Some(file);
            }
            Err(_) => self.spill_failed = true,
        }
        self.raw = Vec::new();
    }

    fn push_lines(&mut self, mut bytes: &[u8]) {
        self.total_bytes += bytes.len() as u64;
        // Lines that may be failures are looked at one by one, never skipped.
        let skippable = bytes.len() <= 2 * self.max_bytes + 2 || !Failures::might_hold(bytes);
        while !bytes.is_empty() {
            if skippable && self.head_closed && bytes.len() > 2 * self.max_bytes + 2 {
                bytes = self.skip_middle(bytes);
                continue;
            }
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

    /// With the head complete, a large piece of the stream only matters for its count of
    /// lines and for its last `max_bytes` bytes of whole lines (older lines would leave the
    /// tail anyway): ends the current line, counts the lines in between without keeping
    /// them, and returns the rest to be taken line by line.
    fn skip_middle<'b>(&mut self, bytes: &'b [u8]) -> &'b [u8] {
        let Some(first) = memchr::memchr(b'\n', bytes) else {
            self.extend_current(bytes);
            return &[];
        };
        self.extend_current(&bytes[..first]);
        self.end_line();
        let rest = &bytes[first + 1..];
        let Some(last) = memchr::memrchr(b'\n', rest) else {
            return rest;
        };
        let complete = &rest[..=last];
        if complete.len() <= self.max_bytes + 2 {
            return rest;
        }
        // The lines after the newline before `cut` hold more than `max_bytes + 1` bytes:
        // every line up to that newline would be evicted from the tail.
        let cut = complete.len() - self.max_bytes - 2;
        let Some(boundary) = memchr::memrchr(b'\n', &complete[..cut]) else {
            return rest;
        };
        let skipped = memchr::memchr_iter(b'\n', &complete[..=boundary]).count();
        self.complete_lines += skipped as u64;
        for line in self.tail.drain(..) {
            self.spare = Some(line);
        }
        self.tail_bytes = 0;
        &rest[boundary + 1..]
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
        if !self.replaying {
            self.failures
                .see(self.complete_lines - 1, &self.current.bytes);
        }
        let len = self.current.bytes.len() + 1;
        if !self.head_closed {
            let fits = self.head.len() < self.head_line_cap()
                && self.head_bytes + len <= self.head_byte_cap();
            if fits || self.head.is_empty() {
                self.head_bytes += len;
                let line = std::mem::take(&mut self.current);
                self.head.push(line);
                return;
            }
            self.head_closed = true;
        }
        // Reuse an evicted line's buffer: a command printing millions of lines should not
        // allocate once per line.
        let mut spare = self.spare.take().unwrap_or_default();
        spare.bytes.clear();
        spare.full_len = 0;
        let line = std::mem::replace(&mut self.current, spare);
        self.tail_bytes += len;
        self.tail.push_back(line);
        while self.tail.len() > 1
            && (self.tail_bytes > self.max_bytes + 1 || self.tail.len() > self.max_lines)
        {
            if let Some(old) = self.tail.pop_front() {
                self.tail_bytes -= old.bytes.len() + 1;
                self.spare = Some(old);
            }
        }
    }

    /// Appends another capture's stream after this one's, as if its bytes had been pushed
    /// here: the result keeps the first lines, the last lines and the totals of the
    /// concatenation, and its spill file (if any) holds the whole concatenation.
    pub fn append(&mut self, mut other: Capture) {
        if other.spill.is_none() && other.outputs.is_some() && !other.spill_failed {
            // Still under the thresholds: the other stream is all here.
            let raw = std::mem::take(&mut other.raw);
            self.push(&raw);
            return;
        }
        if let Some(file) = other.spill.take() {
            self.start_spill();
            match &mut self.spill {
                Some(spill) => spill.append_file(file),
                None => drop(file),
            }
        } else if other.spill_failed {
            self.spill_failed = true;
            self.spill = None;
        }
        let offset = self.complete_lines;
        self.failed |= other.failed;
        let Capture {
            head,
            tail,
            current,
            total_bytes,
            complete_lines,
            failures,
            ..
        } = other;
        self.failures.absorb(failures, offset);
        self.replaying = true;
        let kept = (head.len() + tail.len()) as u64;
        for line in head {
            self.push_kept(&line);
            self.end_line();
        }
        let dropped = complete_lines.saturating_sub(kept);
        if dropped > 0 {
            // Lines only leave `other`'s tail once newer lines filled it, so its tail
            // lines replace whatever this capture's tail held; the dropped ones are only
            // counted.
            self.complete_lines += dropped;
            self.tail.clear();
            self.tail_bytes = 0;
        }
        for line in tail {
            self.push_kept(&line);
            self.end_line();
        }
        self.push_kept(&current);
        self.replaying = false;
        // The replayed pieces were counted above only as lines; the bytes are the other
        // stream's total.
        self.total_bytes += total_bytes;
        self.check_spill();
    }

    /// Extends the current line with a kept (possibly cut) line of another capture.
    fn push_kept(&mut self, line: &KeptLine) {
        let room = self.max_bytes.saturating_sub(self.current.bytes.len());
        let keep = room.min(line.bytes.len());
        self.current.bytes.extend_from_slice(&line.bytes[..keep]);
        self.current.full_len += line.full_len;
    }

    /// Renders the whole output, or its preview when it is over the thresholds (keeping
    /// the spill file then, removing it otherwise).
    pub fn finish(mut self) -> Rendered {
        let ends_with_newline = self.current.full_len == 0;
        if !ends_with_newline {
            // The unfinished last line joins the lines without being counted twice.
            self.end_line();
            self.complete_lines -= 1;
        }
        let total_lines = self.complete_lines + u64::from(!ends_with_newline);
        let over = total_lines > self.max_lines as u64 || self.total_bytes > self.max_bytes as u64;
        let mut lossy = false;
        if !over {
            let mut text = String::with_capacity(self.total_bytes as usize);
            for (i, line) in self.head.iter().chain(self.tail.iter()).enumerate() {
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
                full_output: None,
            };
        }
        if self.failures.found() && (self.failed || self.failures.failed_tests()) {
            return self.finish_failed(total_lines, ends_with_newline);
        }
        let head_lines = self.head_line_cap();
        let tail_lines = self.max_lines - head_lines;
        let head_budget = self.head_byte_cap();
        let tail_budget = self.max_bytes - head_budget;
        let (mut head, tail) = self.ends(
            (head_lines, head_budget),
            (tail_lines, tail_budget),
            &mut lossy,
        );
        let head_cut = head.last().is_some_and(|l| l.1);
        let shown_head = head.len();
        let shown = head.len() + tail.len();
        let full_output = match self.spill.take() {
            Some(file) => file.keep(self.total_bytes),
            None => None,
        };
        let next = shown_head - usize::from(head_cut);
        let mut text = String::new();
        for (line, _) in head.drain(..) {
            text.push_str(&line);
            text.push('\n');
        }
        match &full_output {
            Some(path) => text.push_str(&format!(
                "[preview: {shown} of {total_lines} lines, {} bytes total; full output: {path}]\n\
                 [to see the rest: read {path} with offset={next} limit={}, or grep it]\n",
                self.total_bytes, MAX_LINES
            )),
            None => text.push_str(&format!(
                "[preview: {shown} of {total_lines} lines, {} bytes total]\n\
                 [full output not kept]\n",
                self.total_bytes
            )),
        }
        push_tail(&mut text, tail, ends_with_newline);
        Rendered {
            text,
            truncated: true,
            lossy,
            total_lines,
            total_bytes: self.total_bytes,
            full_output,
        }
    }
}

impl Capture {
    /// The head (at most `head_lines` lines and `head_budget` bytes) and the tail of a
    /// preview, each line with whether it was cut. Head lines the head could not show are
    /// last lines like the tail's: the tail takes the last of them all (a 5 MB line must
    /// not hide the lines after it).
    #[allow(clippy::type_complexity)]
    fn ends(
        &self,
        (head_lines, head_budget): (usize, usize),
        (tail_lines, tail_budget): (usize, usize),
        lossy: &mut bool,
    ) -> (Vec<(String, bool)>, Vec<(String, bool)>) {
        let head = fit_lines(self.head.iter().take(head_lines), head_budget, lossy);
        let rest: Vec<&KeptLine> = self.head[head.len()..].iter().chain(&self.tail).collect();
        let mut tail = fit_lines(rest.iter().rev().copied(), tail_budget, lossy);
        tail.truncate(tail_lines);
        tail.reverse();
        (head, tail)
    }

    /// The preview of a failed run (module doc): a shorter head and tail around the
    /// failure blocks and summary lines found in the lines between them, each after its
    /// 1-based line number in the whole output.
    fn finish_failed(mut self, total_lines: u64, ends_with_newline: bool) -> Rendered {
        let mut lossy = false;
        let head_lines = (self.max_lines * FAILED_HEAD_PERCENT / 100).max(1);
        let tail_lines = (self.max_lines * FAILED_TAIL_PERCENT / 100).max(1);
        let head_budget = self.max_bytes * FAILED_HEAD_PERCENT / 100;
        let tail_budget = self.max_bytes * FAILED_TAIL_PERCENT / 100;
        let (head, tail) = self.ends(
            (head_lines, head_budget),
            (tail_lines, tail_budget),
            &mut lossy,
        );
        let head_cut = head.last().is_some_and(|l| l.1);
        let shown_head = head.len();
        let tail_from = total_lines.saturating_sub(tail.len() as u64);
        let used: usize = head.iter().chain(&tail).map(|(l, _)| l.len() + 1).sum();
        let mut room = self.max_bytes.saturating_sub(used + 600);
        let mut blocks = String::new();
        let mut block_lines = 0;
        let mut left_out = self.failures.more();
        for excerpt in self.failures.excerpts() {
            let between: Vec<(u64, &String)> = excerpt
                .lines
                .iter()
                .enumerate()
                .map(|(k, line)| (excerpt.first + k as u64, line))
                .filter(|(at, _)| *at >= shown_head as u64 && *at < tail_from)
                .collect();
            let Some((first, _)) = between.first() else {
                continue;
            };
            let mut block = format!("[line {}]\n", first + 1);
            for (_, line) in &between {
                block.push_str(line);
                block.push('\n');
            }
            if block.len() > room {
                left_out += 1;
                continue;
            }
            room -= block.len();
            block_lines += between.len();
            blocks.push_str(&block);
        }
        let shown = head.len() + block_lines + tail.len();
        let full_output = match self.spill.take() {
            Some(file) => file.keep(self.total_bytes),
            None => None,
        };
        let next = shown_head - usize::from(head_cut);
        let mut text = String::new();
        for (line, _) in &head {
            text.push_str(line);
            text.push('\n');
        }
        let found = "the run failed: the failure lines and summaries found in the lines \
                     between the first and the last follow, each after its line number in the \
                     full output";
        match &full_output {
            Some(path) => text.push_str(&format!(
                "[preview: {shown} of {total_lines} lines, {} bytes total; full output: {path}]\n\
                 [{found}; to see the rest: read {path} with offset={next} limit={}, or grep it]\n",
                self.total_bytes, MAX_LINES
            )),
            None => text.push_str(&format!(
                "[preview: {shown} of {total_lines} lines, {} bytes total]\n\
                 [{found}; the full output was not kept]\n",
                self.total_bytes
            )),
        }
        text.push_str(&blocks);
        if left_out > 0 {
            text.push_str(&format!(
                "[{left_out} more failure blocks not shown{}]\n",
                full_output
                    .as_deref()
                    .map(|path| format!(": grep {path}"))
                    .unwrap_or_default()
            ));
        }
        text.push_str("[the last lines:]\n");
        push_tail(&mut text, tail, ends_with_newline);
        Rendered {
            text,
            truncated: true,
            lossy,
            total_lines,
            total_bytes: self.total_bytes,
            full_output,
        }
    }
}

/// The head's share of a failed run's preview, in percent.
const FAILED_HEAD_PERCENT: usize = 20;
/// The tail's share of a failed run's preview, in percent (the failures have the rest).
const FAILED_TAIL_PERCENT: usize = 30;

/// Appends a preview's tail lines, the last one with a newline only when the output ended
/// with one.
fn push_tail(text: &mut String, tail: Vec<(String, bool)>, ends_with_newline: bool) {
    let count = tail.len();
    for (i, (line, _)) in tail.into_iter().enumerate() {
        text.push_str(&line);
        if i + 1 < count || ends_with_newline {
            text.push('\n');
        }
    }
}

/// Takes lines in the given order while they fit `budget` bytes (each counted with its
/// newline); the first line that does not fit is cut on a character boundary and ends in
/// `…` — only when nothing was taken yet, so that whole lines are shown where possible —
/// and nothing after it is taken. Each line comes with whether it was cut.
fn fit_lines<'a>(
    lines: impl Iterator<Item = &'a KeptLine>,
    budget: usize,
    lossy: &mut bool,
) -> Vec<(String, bool)> {
    const ELLIPSIS: &str = "…";
    let mut remaining = budget;
    let mut out = Vec::new();
    for line in lines {
        let (text, was_lossy) = decode(&line.bytes);
        *lossy |= was_lossy;
        if !line.is_cut() && text.len() < remaining {
            remaining -= text.len() + 1;
            out.push((text.into_owned(), false));
            continue;
        }
        if out.is_empty() {
            let room = remaining.saturating_sub(ELLIPSIS.len() + 1);
            let cut = text.floor_char_boundary(room);
            out.push((format!("{}{ELLIPSIS}", &text[..cut]), true));
        }
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

/// Renders a byte count for people: `1.5MB`, `2KB`, `300B`.
#[cfg(test)]
fn format_size(bytes: u64) -> String {
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
pub fn preview(text: &str, limits: Limits) -> Option<Rendered> {
    let mut capture = Capture::new(limits);
    capture.push_str(text);
    let rendered = capture.finish();
    rendered.truncated.then_some(rendered)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn numbered(n: usize) -> String {
        (1..=n).map(|i| format!("line {i}\n")).collect()
    }

    fn lim(max_lines: usize, max_bytes: usize) -> Limits {
        Limits {
            max_lines,
            max_bytes,
            spill: None,
        }
    }

    fn text_of(text: &str, limits: Limits) -> String {
        preview(text, limits).map(|r| r.text).unwrap_or_default()
    }

    #[test]
    fn output_within_the_maxima_is_unchanged() {
        assert!(preview("short content", Limits::default()).is_none());
        assert!(preview(&numbered(2_000), Limits::default()).is_none());
        assert!(preview(numbered(2_000).trim_end(), Limits::default()).is_none());
        assert!(preview(&"x".repeat(51_200), Limits::default()).is_none());
    }

    #[test]
    fn one_line_over_shows_head_header_hint_and_tail_with_the_last_line_last() {
        let text = numbered(2_001);
        let out = text_of(&text, Limits::default());
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines[0], "line 1");
        assert_eq!(lines[1199], "line 1200");
        assert!(
            lines[1200].starts_with("[preview: 2000 of 2001 lines, 18903 bytes total]"),
            "{}",
            lines[1200]
        );
        assert_eq!(lines[1201], "[full output not kept]");
        assert_eq!(lines[1202], "line 1202");
        assert_eq!(*lines.last().unwrap(), "line 2001");
        assert!(out.ends_with("line 2001\n"));
    }

    #[test]
    fn header_counts_the_whole_output_not_a_cut() {
        let text: String = (0..3_000).map(|_| "line content\n").collect();
        let out = text_of(&text, Limits::default());
        assert!(
            out.contains("[preview: 2000 of 3000 lines, 39000 bytes total]"),
            "{out:.200}"
        );
    }

    #[test]
    fn tail_comes_from_the_end_of_the_whole_output_past_the_byte_limit() {
        let text = numbered(300_000);
        let out = text_of(&text, Limits::default());
        assert!(out.contains("of 300000 lines"));
        assert!(out.ends_with("line 300000\n"));
        let (head, tail) = out.split_once("[full output not kept]\n").unwrap();
        let head = head.rsplit_once("[preview").unwrap().0;
        assert!(head.len() <= 30_720, "head {}", head.len());
        assert!(tail.len() <= 20_480, "tail {}", tail.len());
        assert!(tail.starts_with("line "));
        let shown = head.lines().count() + tail.lines().count();
        assert!(out.contains(&format!("[preview: {shown} of 300000 lines")));
    }

    #[test]
    fn a_single_huge_line_is_cut_on_a_character_boundary_with_an_ellipsis() {
        let text = "é".repeat(40_000); // 80,000 bytes, one line
        let out = text_of(&text, Limits::default());
        let first = out.lines().next().unwrap();
        assert!(first.ends_with('…'));
        assert!(first.len() <= 30_720);
        assert!(first.trim_end_matches('…').chars().all(|c| c == 'é'));
        assert!(
            out.contains("[preview: 1 of 1 lines, 80000 bytes total]"),
            "{out:.100}"
        );
    }

    #[test]
    fn byte_limit_alone_with_few_lines_has_no_repeated_lines() {
        let line = "y".repeat(1_500);
        let text: String = (0..40).map(|i| format!("{i} {line}\n")).collect();
        let out = text_of(&text, Limits::default());
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
        let text = format!("HTTP 200 OK\n\n{}\n\n[body cut]", "x".repeat(200_000));
        let out = text_of(&text, Limits::default());
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines[0], "HTTP 200 OK");
        assert_eq!(lines[1], "");
        assert!(
            lines[2].starts_with("[preview: 4 of 5 lines"),
            "{}",
            lines[2]
        );
        assert_eq!(&lines[4..], ["", "[body cut]"]);
    }

    #[test]
    fn capture_in_pieces_equals_capture_at_once() {
        for (text, limits) in [
            (numbered(5_000), Limits::default()),
            (numbered(300_000), Limits::default()),
            (numbered(3_000), lim(100, 2_000)),
            ("ab\n".repeat(100_000), lim(50, 300)),
        ] {
            let whole = preview(&text, limits.clone()).unwrap();
            for size in [7, 4_096, 200_000] {
                let mut pieces = Capture::new(limits.clone());
                for chunk in text.as_bytes().chunks(size) {
                    pieces.push(chunk);
                }
                assert_eq!(pieces.finish(), whole, "chunks of {size}");
            }
        }
    }

    #[test]
    fn appending_captures_equals_capturing_the_concatenation() {
        let cases: Vec<(String, String)> = vec![
            (numbered(3), numbered(4)),
            ("no newline".into(), "rest\nmore".into()),
            (numbered(3_000), "STDERR:\nboom\n".into()),
            (numbered(10), numbered(20_000)),
            (numbered(5_000), numbered(5_000)),
            (String::new(), numbered(6_000)),
            (numbered(6_000), String::new()),
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
    fn a_spilled_preview_names_the_file_that_holds_the_whole_output() {
        let dir = tempfile::tempdir().unwrap();
        let limits = Limits {
            spill: Some(crate::spill::Outputs::new(
                dir.path(),
                crate::spill::KEEP_BYTES,
            )),
            ..Limits::default()
        };
        let text = numbered(200_000);
        let mut out = Capture::new(limits.clone());
        out.push_str("Command exited with error: exit status 1\n");
        let mut stdout = Capture::new(limits.clone());
        for chunk in text.as_bytes().chunks(65_536) {
            stdout.push(chunk);
        }
        out.append(stdout);
        out.push_str("STDERR:\n");
        let mut stderr = Capture::new(limits.clone());
        stderr.push_str("boom\n");
        out.append(stderr);
        let rendered = out.finish();
        let path = rendered.full_output.clone().unwrap();
        let whole = std::fs::read_to_string(dir.path().join(&path)).unwrap();
        assert_eq!(
            whole,
            format!("Command exited with error: exit status 1\n{text}STDERR:\nboom\n")
        );
        assert!(rendered.text.contains(&format!(
            "lines, {} bytes total; full output: {path}]\n[to see the rest: read {path} with offset=",
            whole.len()
        )));
        assert!(rendered.text.ends_with("STDERR:\nboom\n"));
        // Within the limits, no file is left behind.
        let mut small = Capture::new(limits);
        small.push_str(&"x".repeat(60_000));
        let mut replaced = Capture::new(Limits::default());
        replaced.push_str("short\n");
        small.append(replaced);
        drop(small);
        let left: Vec<_> = std::fs::read_dir(dir.path().join(crate::spill::OUTPUTS_DIR))
            .unwrap()
            .collect();
        assert_eq!(left.len(), 1);
    }

    #[test]
    fn empty_output_has_no_lines() {
        let rendered = Capture::new(Limits::default()).finish();
        assert_eq!(rendered.text, "");
        assert_eq!(rendered.total_lines, 0);
    }

    #[test]
    fn sizes_format_for_people() {
        assert_eq!(format_size(300), "300B");
        assert_eq!(format_size(2_600), "2KB");
        assert_eq!(format_size(1_572_864), "1.5MB");
    }
}
