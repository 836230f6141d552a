//! The conventions of an existing text file, and how changed text is written back in them.
//!
//! write, edit and apply_patch never let their own normalisation leak into a file: a UTF-8
//! BOM, the line endings (LF or CRLF) and whether the file ends with a newline are read
//! from the file before any change ([`Conventions`]) and restored afterwards. Matching works
//! on a normalised copy of the text ([`TextDoc::text`]: no BOM, every CRLF turned into LF)
//! and changes are expressed as [`Splice`]s of that copy; [`TextDoc::render`] turns them
//! back into bytes where every untouched byte is the original one (a file with mixed line
//! endings keeps each line's own ending) and every inserted line gets the file's dominant
//! ending. A lone CR (not followed by LF) is ordinary text and never converted.

use std::ops::Range;

/// The UTF-8 byte order mark.
pub const BOM: &str = "\u{feff}";

/// How `read` shows a file's leading BOM, once, at the start of line 1: the character
/// itself is invisible, so a model could neither see it nor know whether to copy it. It is
/// no part of the text: edit and write take a leading marker off text copied from read's
/// output when the file has a BOM ([`strip_bom_marker`]), and keep the BOM themselves.
pub const BOM_MARKER: &str = "[BOM]";

/// `text` without a leading [`BOM_MARKER`] when it is meant for a file that starts with a
/// BOM (`bom`) whose own text does not start with the marker (`marker_is_text`): what a
/// model copied from line 1 of read's output. Otherwise `text` as it is.
pub fn strip_bom_marker(text: &str, bom: bool, marker_is_text: bool) -> &str {
    if !bom || marker_is_text {
        return text;
    }
    text.strip_prefix(BOM_MARKER).unwrap_or(text)
}

/// A line ending.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// `\n`
    Lf,
    /// `\r\n`
    Crlf,
}

impl Ending {
    /// The bytes of the ending.
    pub fn as_str(self) -> &'static str {
        match self {
            Ending::Lf => "\n",
            Ending::Crlf => "\r\n",
        }
    }

    /// `"lf"` or `"crlf"`, for metadata.
    pub fn name(self) -> &'static str {
        match self {
            Ending::Lf => "lf",
            Ending::Crlf => "crlf",
        }
    }
}

/// What a file's bytes say about how it is written; detectable whether or not it is UTF-8.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Conventions {
    /// The file starts with a UTF-8 BOM.
    pub bom: bool,
    /// The dominant line ending: CRLF when more lines end in CRLF than in a bare LF.
    pub ending: Ending,
    /// The file (after its BOM) ends with a newline.
    pub final_newline: bool,
    /// The file has content besides a BOM: only then is its final-newline state kept.
    pub nonempty: bool,
    /// The file has at least one line break: only then are its endings imposed.
    pub line_breaks: bool,
}

impl Default for Conventions {
    /// The conventions of a new file: no BOM, LF, final-newline state left as written.
    fn default() -> Self {
        Conventions {
            bom: false,
            ending: Ending::Lf,
            final_newline: false,
            nonempty: false,
            line_breaks: false,
        }
    }
}

impl Conventions {
    /// Reads the conventions from a file's bytes.
    pub fn detect(bytes: &[u8]) -> Conventions {
        let bom = bytes.starts_with(BOM.as_bytes());
        let body = if bom { &bytes[BOM.len()..] } else { bytes };
        let mut lf = 0usize;
        let mut crlf = 0usize;
        for i in memchr::memchr_iter(b'\n', body) {
            if i > 0 && body[i - 1] == b'\r' {
                crlf += 1;
            } else {
                lf += 1;
            }
        }
        Conventions {
            bom,
            ending: if crlf > lf { Ending::Crlf } else { Ending::Lf },
            final_newline: body.last() == Some(&b'\n'),
            nonempty: !body.is_empty(),
            line_breaks: lf + crlf > 0,
        }
    }

    /// A whole new content for a file with these conventions (write, Add File over an
    /// existing file): line endings converted to the file's, its BOM restored, and its
    /// final-newline state kept when it had content. What the file cannot say anything
    /// about (endings of a file without line breaks, everything of a new or empty file)
    /// is left as given.
    pub fn apply_whole(&self, content: &str) -> Vec<u8> {
        let content = if self.bom {
            content.strip_prefix(BOM).unwrap_or(content)
        } else {
            content
        };
        let mut out = String::with_capacity(content.len() + content.len() / 16 + 4);
        if self.bom {
            out.push_str(BOM);
        }
        if self.line_breaks {
            push_with_ending(&mut out, &content.replace("\r\n", "\n"), self.ending);
        } else {
            out.push_str(content);
        }
        let mut bytes = out.into_bytes();
        if self.nonempty {
            fix_final_newline(&mut bytes, self.final_newline, self.ending, self.bom);
        }
        bytes
    }
}

/// A replacement of `range` (byte offsets into [`TextDoc::text`]) with `text` (LF endings).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Splice {
    /// The replaced byte range of the normalised text.
    pub range: Range<usize>,
    /// The new text, with `\n` line breaks.
    pub text: String,
}

/// An existing UTF-8 text file, normalised for matching.
#[derive(Debug, Clone)]
pub struct TextDoc {
    /// The file's conventions.
    pub conventions: Conventions,
    /// The text without BOM and with every CRLF turned into LF.
    pub text: String,
    /// Offsets in `text` of the `\n`s that were CRLF in the file, ascending.
    crlf_at: Vec<usize>,
}

impl TextDoc {
    /// Decodes a file's bytes; `None` when they are not UTF-8.
    pub fn decode(bytes: &[u8]) -> Option<TextDoc> {
        let conventions = Conventions::detect(bytes);
        let body = if conventions.bom {
            &bytes[BOM.len()..]
        } else {
            bytes
        };
        let raw = std::str::from_utf8(body).ok()?;
        let mut text = String::with_capacity(raw.len());
        let mut crlf_at = Vec::new();
        let mut rest = raw;
        while let Some(i) = memchr::memchr(b'\n', rest.as_bytes()) {
            let line = &rest[..i];
            if let Some(stripped) = line.strip_suffix('\r') {
                text.push_str(stripped);
                crlf_at.push(text.len());
            } else {
                text.push_str(line);
            }
            text.push('\n');
            rest = &rest[i + 1..];
        }
        text.push_str(rest);
        Some(TextDoc {
            conventions,
            text,
            crlf_at,
        })
    }

    /// Whether the `\n` at byte `offset` of [`Self::text`] was a CRLF in the file.
    pub fn is_crlf_at(&self, offset: usize) -> bool {
        self.crlf_at.binary_search(&offset).is_ok()
    }

    /// The ending inserted lines get.
    pub fn ending(&self) -> Ending {
        self.conventions.ending
    }

    /// The file's bytes after `splices` (sorted, non-overlapping ranges of [`Self::text`]).
    /// Untouched bytes are the original ones; inserted line breaks get the file's ending;
    /// the BOM is restored; the final-newline state is kept (for a file that had content)
    /// unless `final_newline` says what it must be.
    pub fn render(&self, splices: &[Splice], final_newline: Option<bool>) -> Vec<u8> {
        let mut out = String::with_capacity(self.text.len() + self.crlf_at.len() + 64);
        if self.conventions.bom {
            out.push_str(BOM);
        }
        let mut pos = 0;
        for splice in splices {
            self.push_original(&mut out, pos..splice.range.start);
            push_with_ending(&mut out, &splice.text, self.ending());
            pos = splice.range.end;
        }
        self.push_original(&mut out, pos..self.text.len());
        let mut bytes = out.into_bytes();
        let wanted = final_newline.or(self
            .conventions
            .nonempty
            .then_some(self.conventions.final_newline));
        if let Some(wanted) = wanted {
            fix_final_newline(&mut bytes, wanted, self.ending(), self.conventions.bom);
        }
        bytes
    }

    /// Pushes a range of the normalised text with the file's original line endings.
    fn push_original(&self, out: &mut String, range: Range<usize>) {
        if range.start >= range.end {
            return;
        }
        let first = self.crlf_at.partition_point(|&p| p < range.start);
        let mut pos = range.start;
        for &at in &self.crlf_at[first..] {
            if at >= range.end {
                break;
            }
            out.push_str(&self.text[pos..at]);
            out.push('\r');
            pos = at;
        }
        out.push_str(&self.text[pos..range.end]);
    }
}

/// Pushes `text` with every `\n` written as `ending`.
fn push_with_ending(out: &mut String, text: &str, ending: Ending) {
    match ending {
        Ending::Lf => out.push_str(text),
        Ending::Crlf => {
            let mut first = true;
            for piece in text.split('\n') {
                if !first {
                    out.push_str("\r\n");
                }
                out.push_str(piece);
                first = false;
            }
        }
    }
}

/// Makes `bytes` end (or not) with a line break, leaving an empty result (or a lone BOM)
/// alone.
fn fix_final_newline(bytes: &mut Vec<u8>, wanted: bool, ending: Ending, bom: bool) {
    let floor = if bom { BOM.len() } else { 0 };
    if bytes.len() <= floor {
        return;
    }
    let ends = bytes.last() == Some(&b'\n');
    if wanted && !ends {
        bytes.extend_from_slice(ending.as_str().as_bytes());
    } else if !wanted && ends {
        bytes.pop();
        if bytes.len() > floor && bytes.last() == Some(&b'\r') && ending == Ending::Crlf {
            bytes.pop();
        }
    }
}

/// Lines of context around each change in [`unified_diff`].
const DIFF_CONTEXT: usize = 3;

/// The unified diff (3 lines of context, `\ No newline at end of file` where it applies)
/// between two texts, with the given file names in its header; empty when they are equal.
///
/// Only the part between the common first and last lines is compared, so describing a small
/// change of a huge file costs as little as the change (the line numbers are the files').
pub fn unified_diff(old: &str, new: &str, old_name: &str, new_name: &str) -> String {
    let a: Vec<&str> = old.split_inclusive('\n').collect();
    let b: Vec<&str> = new.split_inclusive('\n').collect();
    let prefix = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let suffix = a[prefix..]
        .iter()
        .rev()
        .zip(b[prefix..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    if prefix == a.len() && prefix == b.len() {
        return String::new();
    }
    let lo = prefix.saturating_sub(DIFF_CONTEXT);
    let a_hi = (a.len() - suffix + DIFF_CONTEXT).min(a.len());
    let b_hi = (b.len() - suffix + DIFF_CONTEXT).min(b.len());
    let (a_part, b_part) = (a[lo..a_hi].concat(), b[lo..b_hi].concat());
    let diff = similar::TextDiff::from_lines(a_part.as_str(), b_part.as_str());
    let mut out = format!("--- {old_name}\n+++ {new_name}\n");
    for hunk in diff
        .unified_diff()
        .context_radius(DIFF_CONTEXT)
        .iter_hunks()
    {
        let ops = hunk.ops();
        let (Some(first), Some(last)) = (ops.first(), ops.last()) else {
            continue;
        };
        let old_range = first.old_range().start..last.old_range().end;
        let new_range = first.new_range().start..last.new_range().end;
        out.push_str(&format!(
            "@@ -{} +{} @@\n",
            hunk_range(lo + old_range.start, old_range.len()),
            hunk_range(lo + new_range.start, new_range.len())
        ));
        for change in hunk.iter_changes() {
            let sign = match change.tag() {
                similar::ChangeTag::Equal => ' ',
                similar::ChangeTag::Delete => '-',
                similar::ChangeTag::Insert => '+',
            };
            out.push(sign);
            out.push_str(change.value());
            if !change.value().ends_with('\n') {
                out.push_str("\n\\ No newline at end of file\n");
            }
        }
    }
    out
}

/// A hunk header range: `start,count` (1-based), `start` alone for one line, and the line
/// before for an empty range, as GNU diff writes them.
fn hunk_range(start: usize, len: usize) -> String {
    match len {
        0 => format!("{start},0"),
        1 => format!("{}", start + 1),
        _ => format!("{},{len}", start + 1),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bom_marker_comes_off_only_where_read_could_have_shown_it() {
        assert_eq!(strip_bom_marker("[BOM]import x", true, false), "import x");
        // No BOM: the marker can only be the file's own text.
        assert_eq!(
            strip_bom_marker("[BOM]import x", false, false),
            "[BOM]import x"
        );
        // The file's text itself starts with the marker: it is text, kept.
        assert_eq!(strip_bom_marker("[BOM]x", true, true), "[BOM]x");
        assert_eq!(strip_bom_marker("import x", true, false), "import x");
    }

    fn splice(range: Range<usize>, text: &str) -> Splice {
        Splice {
            range,
            text: text.to_string(),
        }
    }

    #[test]
    fn conventions_are_detected_from_bytes() {
        let c = Conventions::detect(b"\xef\xbb\xbfa\r\nb\r\nc\n");
        assert!(c.bom);
        assert_eq!(c.ending, Ending::Crlf);
        assert!(c.final_newline);
        let c = Conventions::detect(b"a\nb\r\nc");
        assert_eq!(c.ending, Ending::Lf, "a tie is LF");
        assert!(!c.final_newline);
        assert!(!Conventions::detect(b"").nonempty);
        assert!(!Conventions::detect(BOM.as_bytes()).nonempty);
    }

    #[test]
    fn untouched_bytes_keep_their_own_endings() {
        let original = b"one\r\ntwo\nthree\r\nfour\r\n";
        let doc = TextDoc::decode(original).unwrap();
        assert_eq!(doc.text, "one\ntwo\nthree\nfour\n");
        let crlf: Vec<bool> = memchr::memchr_iter(b'\n', doc.text.as_bytes())
            .map(|at| doc.is_crlf_at(at))
            .collect();
        assert_eq!(crlf, [true, false, true, true]);
        assert_eq!(doc.render(&[], None), original);
        // Replace "three" with two lines: the new break gets the dominant CRLF.
        let at = doc.text.find("three").unwrap();
        let out = doc.render(&[splice(at..at + 5, "3a\n3b")], None);
        assert_eq!(out, b"one\r\ntwo\n3a\r\n3b\r\nfour\r\n");
    }

    #[test]
    fn bom_and_final_newline_state_are_restored() {
        let doc = TextDoc::decode(b"\xef\xbb\xbfx = 1\ny = 2").unwrap();
        assert_eq!(doc.text, "x = 1\ny = 2");
        let end = doc.text.len();
        let out = doc.render(&[splice(6..end, "y = 3\n")], None);
        assert_eq!(out, b"\xef\xbb\xbfx = 1\ny = 3");
        let doc = TextDoc::decode(b"a\r\nb\r\n").unwrap();
        let out = doc.render(&[splice(2..3, "c")], None);
        assert_eq!(out, b"a\r\nc\r\n");
        assert_eq!(doc.render(&[splice(0..4, "")], None), b"");
        assert_eq!(doc.render(&[], Some(false)), b"a\r\nb");
    }

    #[test]
    fn lone_carriage_returns_are_text() {
        let doc = TextDoc::decode(b"a\rb\n").unwrap();
        assert_eq!(doc.text, "a\rb\n");
        assert_eq!(doc.ending(), Ending::Lf);
    }

    #[test]
    fn whole_content_takes_the_files_conventions() {
        let c = Conventions::detect(b"\xef\xbb\xbfold\r\nfile\r\n");
        assert_eq!(
            c.apply_whole("new\ncontent"),
            b"\xef\xbb\xbfnew\r\ncontent\r\n"
        );
        let c = Conventions::detect(b"old\nfile");
        assert_eq!(c.apply_whole("a\r\nb\r\n"), b"a\nb");
        let c = Conventions::default();
        assert_eq!(
            c.apply_whole("a\r\nb\n"),
            b"a\r\nb\n",
            "a new file is left as given"
        );
        let c = Conventions::detect(b"no break");
        assert_eq!(c.apply_whole("a\r\nb"), b"a\r\nb");
        let c = Conventions::detect(b"x\n");
        assert_eq!(c.apply_whole(""), b"");
    }

    #[test]
    fn diffs_number_lines_as_in_the_files() {
        let old: String = (1..=100).map(|i| format!("line {i}\n")).collect();
        let new = old.replace("line 50\n", "line fifty\n");
        assert_eq!(
            unified_diff(&old, &new, "a/f", "b/f"),
            "--- a/f\n+++ b/f\n@@ -47,7 +47,7 @@\n line 47\n line 48\n line 49\n-line 50\n+line fifty\n line 51\n line 52\n line 53\n"
        );
        assert_eq!(
            unified_diff("a\n", "a\nb", "x", "y"),
            "--- x\n+++ y\n@@ -1 +1,2 @@\n a\n+b\n\\ No newline at end of file\n"
        );
        assert_eq!(
            unified_diff("", "new\n", "/dev/null", "b/n"),
            "--- /dev/null\n+++ b/n\n@@ -0,0 +1 @@\n+new\n"
        );
        assert_eq!(unified_diff("same", "same", "x", "y"), "");
        let two = old
            .replace("line 10\n", "ten\n")
            .replace("line 90\n", "ninety\n");
        let d = unified_diff(&old, &two, "a", "b");
        assert!(
            d.contains("@@ -7,7 +7,7 @@") && d.contains("@@ -87,7 +87,7 @@"),
            "{d}"
        );
    }

    #[test]
    fn non_utf8_is_refused() {
        assert!(TextDoc::decode(b"caf\xe9\n").is_none());
    }
}
