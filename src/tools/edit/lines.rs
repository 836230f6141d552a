//! Line views the strategies share: the file's normalised text as numbered lines with their
//! byte offsets ([`FileLines`]), `old_string`/`new_string` as lists of lines ([`Block`]), and
//! the whitespace notions every comparison uses.

/// The normalised text (LF endings, no BOM) as lines. A final `\n` ends the last line; it
/// does not start an empty one. Line `i` is `text[start(i)..end(i)]`.
#[derive(Debug)]
pub struct FileLines<'a> {
    text: &'a str,
    starts: Vec<usize>,
    /// Each line with its whitespace runs collapsed (see [`collapse`]), computed on first
    /// use: the exact strategy never needs it.
    collapsed: std::cell::OnceCell<Vec<String>>,
    /// The escape normalisation of the text (strategy 6), computed on first use and shared
    /// by every variant of `old_string`.
    escaped: std::cell::OnceCell<(String, Vec<u32>)>,
}

impl<'a> FileLines<'a> {
    /// Splits `text` into lines.
    pub fn new(text: &'a str) -> Self {
        let mut starts = Vec::new();
        if !text.is_empty() {
            starts.push(0);
            for i in memchr::memchr_iter(b'\n', text.as_bytes()) {
                if i + 1 < text.len() {
                    starts.push(i + 1);
                }
            }
        }
        FileLines {
            text,
            starts,
            collapsed: std::cell::OnceCell::new(),
            escaped: std::cell::OnceCell::new(),
        }
    }

    /// The text normalised by `normalize`, with the original offset of every output byte,
    /// computed once.
    pub fn escaped(&self, normalize: fn(&str) -> (String, Vec<u32>)) -> &(String, Vec<u32>) {
        self.escaped.get_or_init(|| normalize(self.text))
    }

    /// The whole text.
    pub fn text(&self) -> &'a str {
        self.text
    }

    /// Number of lines.
    pub fn len(&self) -> usize {
        self.starts.len()
    }

    /// Whether there are no lines (empty text).
    pub fn is_empty(&self) -> bool {
        self.starts.is_empty()
    }

    /// Byte offset where line `i` starts (`text.len()` for `i == len()`).
    pub fn start(&self, i: usize) -> usize {
        self.starts.get(i).copied().unwrap_or(self.text.len())
    }

    /// Byte offset where line `i` ends, before its `\n`.
    pub fn end(&self, i: usize) -> usize {
        match self.starts.get(i + 1) {
            Some(&next) => next - 1,
            None if self.text.ends_with('\n') => self.text.len() - 1,
            None => self.text.len(),
        }
    }

    /// Whether line `i` is followed by a line break.
    pub fn has_break(&self, i: usize) -> bool {
        i + 1 < self.len() || self.text.ends_with('\n')
    }

    /// Line `i` without its line break.
    pub fn line(&self, i: usize) -> &'a str {
        &self.text[self.start(i)..self.end(i)]
    }

    /// Line `i` with whitespace runs collapsed.
    pub fn collapsed(&self, i: usize) -> &str {
        let all = self
            .collapsed
            .get_or_init(|| (0..self.len()).map(|n| collapse(self.line(n))).collect());
        &all[i]
    }

    /// The index of the line containing byte `offset` (the last line for `text.len()`).
    pub fn line_of(&self, offset: usize) -> usize {
        self.starts
            .partition_point(|&s| s <= offset)
            .saturating_sub(1)
    }

    /// Whether `offset` is where a line starts.
    pub fn is_line_start(&self, offset: usize) -> bool {
        self.starts.binary_search(&offset).is_ok()
    }
}

/// `old_string` or `new_string` as lines. A final `\n` is the terminator of the last line
/// (`terminated`), not an extra empty line; the empty string has no lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block {
    /// The lines, without line breaks.
    pub lines: Vec<String>,
    /// Whether the text ended with a line break.
    pub terminated: bool,
}

impl Block {
    /// Splits text (LF endings) into a block.
    pub fn parse(text: &str) -> Block {
        if text.is_empty() {
            return Block {
                lines: Vec::new(),
                terminated: false,
            };
        }
        let (body, terminated) = match text.strip_suffix('\n') {
            Some(body) => (body, true),
            None => (text, false),
        };
        Block {
            lines: body.split('\n').map(str::to_string).collect(),
            terminated,
        }
    }

    /// The text again.
    pub fn text(&self) -> String {
        let mut text = self.lines.join("\n");
        if self.terminated {
            text.push('\n');
        }
        text
    }

    /// Number of lines.
    pub fn len(&self) -> usize {
        self.lines.len()
    }

    /// Whether the block has no lines.
    pub fn is_empty(&self) -> bool {
        self.lines.is_empty()
    }

    /// Index of the first line that is not blank.
    pub fn first_nonblank(&self) -> Option<usize> {
        self.lines.iter().position(|l| !is_blank(l))
    }

    /// Index of the last line that is not blank.
    pub fn last_nonblank(&self) -> Option<usize> {
        self.lines.iter().rposition(|l| !is_blank(l))
    }
}

/// The indentation of a line: its leading spaces and tabs.
pub fn indent(line: &str) -> &str {
    let n = line.len() - line.trim_start_matches([' ', '\t']).len();
    &line[..n]
}

/// Whether a line holds nothing but whitespace.
pub fn is_blank(line: &str) -> bool {
    line.trim().is_empty()
}

/// The line with every run of whitespace (Unicode, so tabs and non-breaking spaces too)
/// turned into one space, and none at either end.
pub fn collapse(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    for word in line.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_lines_do_not_count_the_final_newline_as_a_line() {
        let f = FileLines::new("a\nbb\n");
        assert_eq!(f.len(), 2);
        assert_eq!((f.line(0), f.line(1)), ("a", "bb"));
        assert_eq!((f.start(1), f.end(1)), (2, 4));
        assert!(f.has_break(1));
        let f = FileLines::new("a\n\nc");
        assert_eq!(f.len(), 3);
        assert_eq!(f.line(1), "");
        assert!(!f.has_break(2));
        assert_eq!(f.line_of(3), 2);
        assert!(f.is_line_start(2) && !f.is_line_start(1));
        assert!(FileLines::new("").is_empty());
        assert_eq!(FileLines::new("\n").len(), 1);
    }

    #[test]
    fn blocks_keep_their_terminator_apart() {
        let b = Block::parse("x\ny\n");
        assert_eq!(b.lines, vec!["x", "y"]);
        assert!(b.terminated);
        assert_eq!(b.text(), "x\ny\n");
        assert_eq!(Block::parse("\n").lines, vec![""]);
        assert!(Block::parse("").is_empty());
        let b = Block::parse("\n  a\n\n");
        assert_eq!((b.first_nonblank(), b.last_nonblank()), (Some(1), Some(1)));
    }

    #[test]
    fn whitespace_helpers() {
        assert_eq!(indent("\t  x y"), "\t  ");
        assert_eq!(indent("   "), "   ");
        assert_eq!(collapse("  a \t b\u{a0} c  "), "a b c");
        assert!(is_blank(" \t\u{a0}"));
    }
}
