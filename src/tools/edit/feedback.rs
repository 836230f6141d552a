//! What a refused edit tells the model ("Feedback"): the reference's messages
//! (`old_string appears N times in PATH`, `old_string not found in PATH`) followed by the
//! closest region(s) of the file, numbered, with tabs, trailing spaces, carriage returns and
//! non-breaking spaces made visible, and for each line that differs the line `old_string`
//! has there — so the next attempt can copy what is really in the file. The lines come from
//! the normalised text (CRLF set aside), so the caller says which of them ended in CRLF and
//! those get their `␍` back: a line `two \r\n` shows as `two·␍`.
//!
//! The closest region is found by votes: every non-blank line of `old_string` that occurs
//! in the file (whitespace collapsed) votes for the window that would put it in its place;
//! the windows with most votes win. When no line occurs at all, the file line most similar
//! to `old_string`'s first non-blank line anchors the window (if it is at least half
//! similar).

use std::collections::HashMap;
use std::fmt::Write as _;

use super::cascade::Refusal;
use super::levenshtein::similarity;
use super::lines::{Block, FileLines, collapse, is_blank};

/// Regions shown at most.
const MAX_REGIONS: usize = 3;
/// Lines of one region shown at most before equal runs are elided.
const MAX_SHOWN: usize = 40;
/// Characters of a line compared when looking for a similar first line.
const MAX_COMPARED: usize = 300;
/// Character comparisons the search for a similar first line may spend (a few tens of
/// milliseconds); a refusal of a huge file shows what was found within it.
const SIMILARITY_BUDGET: usize = 50_000_000;

/// Shows a line with its invisible characters made visible: TAB `→`, a trailing space `·`,
/// CR `␍`, the non-breaking spaces U+00A0/U+2007/U+202F `⍽`, U+FEFF `⟨BOM⟩`.
pub fn visible(line: &str) -> String {
    let trailing_from = line.trim_end_matches(' ').len();
    let mut out = String::with_capacity(line.len() + 8);
    for (i, c) in line.char_indices() {
        match c {
            '\t' => out.push('→'),
            ' ' if i >= trailing_from => out.push('·'),
            '\r' => out.push('␍'),
            '\u{a0}' | '\u{2007}' | '\u{202f}' => out.push('⍽'),
            '\u{feff}' => out.push_str("⟨BOM⟩"),
            other => out.push(other),
        }
    }
    out
}

/// Whether [`visible`] changes anything in the line.
fn has_invisibles(line: &str) -> bool {
    line.ends_with(' ') || line.contains(['\t', '\r', '\u{a0}', '\u{2007}', '\u{202f}', '\u{feff}'])
}

/// Whether line `i` (0-based) of the normalised text ended in CRLF in the file.
type CrlfLines<'a> = &'a dyn Fn(usize) -> bool;

/// Line `i` of the file as the views show it: [`visible`], with the `␍` of a CRLF ending.
fn file_line(file: &FileLines, crlf: CrlfLines, i: usize) -> (String, bool) {
    let line = file.line(i);
    let mut shown = visible(line);
    let cr = crlf(i);
    if cr {
        shown.push('␍');
    }
    (shown, cr || has_invisibles(line))
}

/// The message of a refusal for the file shown as `shown`; `crlf` tells which lines of
/// `file` ended in CRLF.
pub fn message(
    refusal: &Refusal,
    file: &FileLines,
    crlf: CrlfLines,
    old: &str,
    shown: &str,
) -> String {
    match refusal {
        Refusal::EmptyOld => format!(
            "old_string is empty but {shown} is not: an empty old_string only creates a file \
             that does not exist, it never overwrites one. To change part of it, give the exact \
             text to replace as old_string; to replace the whole file, use write."
        ),
        Refusal::Ambiguous {
            count,
            spans,
            strategy,
        } => ambiguous(file, crlf, *count, spans, strategy, shown),
        Refusal::NotFound => not_found(file, crlf, old, shown),
        Refusal::Stale {
            line,
            found,
            expected,
        } => format!(
            "old_string not found in {shown} as written: line {line} reads `{}`, old_string \
             expects `{}` (its other lines are there). The file has changed since it was read, \
             or old_string mistyped the line: read the file again and copy the text from there.",
            visible(found),
            visible(expected)
        ),
    }
}

fn ambiguous(
    file: &FileLines,
    crlf: CrlfLines,
    count: usize,
    spans: &[(usize, usize)],
    strategy: &str,
    shown: &str,
) -> String {
    let how = match strategy {
        "exact" => "",
        "trimmed-boundary" => " (without its blank boundary lines)",
        "context-aware" | "block-anchor-relaxed" | "multi-occurrence" => {
            " when one differing line is allowed"
        }
        _ => " when whitespace is ignored",
    };
    let mut out = format!(
        "old_string appears {count} times in {shown}{how}. Use replace_all to change every \
         occurrence, or include more surrounding lines in old_string to make the match unique.\n"
    );
    let mut invisible = false;
    for &(first, last) in spans.iter().take(MAX_REGIONS * 2) {
        let plural = if last > first { "s" } else { "" };
        let _ = writeln!(out, "At line{plural} {}:", range_text(first, last));
        for n in first..=last.min(first + 2) {
            let (line, marked) = file_line(file, crlf, n - 1);
            invisible |= marked;
            let _ = writeln!(out, "{n:>6} | {line}");
        }
        if last > first + 2 {
            let _ = writeln!(out, "       ⋮");
        }
    }
    if spans.len() > MAX_REGIONS * 2 {
        let _ = writeln!(out, "… and {} more.", spans.len() - MAX_REGIONS * 2);
    }
    if invisible {
        out.push_str(LEGEND);
    }
    out.trim_end().to_string()
}

const LEGEND: &str = "(→ tab, · trailing space, ␍ carriage return, ⍽ non-breaking space)\n";

fn range_text(first: usize, last: usize) -> String {
    if first == last {
        first.to_string()
    } else {
        format!("{first}-{last}")
    }
}

/// Whether every non-blank line of `old` starts with a line number and a tab, as `read`
/// shows lines: text copied from its output with the numbers left in.
fn has_read_line_numbers(old: &str) -> bool {
    let mut lines = old
        .lines()
        .filter(|line| !line.trim().is_empty())
        .peekable();
    lines.peek().is_some()
        && lines.all(|line| {
            let digits = line.trim_start_matches(' ');
            let number = digits.bytes().take_while(u8::is_ascii_digit).count();
            number > 0 && digits.as_bytes().get(number) == Some(&b'\t')
        })
}

fn not_found(file: &FileLines, crlf: CrlfLines, old: &str, shown: &str) -> String {
    let numbered = has_read_line_numbers(old);
    let old = Block::parse(&old.replace("\r\n", "\n"));
    let regions = closest(file, &old);
    let mut out = format!("old_string not found in {shown}.");
    if numbered {
        out.push_str(
            " Every line of old_string starts with a line number and a tab, as read shows \
             them: those numbers are not in the file, so leave them out of old_string and \
             new_string.",
        );
    }
    if regions.is_empty() {
        out.push_str(
            " No line of it is in the file, nor anything similar. Read the file again and copy \
             the text to replace exactly.",
        );
        return out;
    }
    let total = old.lines.iter().filter(|l| !is_blank(l)).count();
    let mut invisible = false;
    for (n, region) in regions.iter().enumerate() {
        let last = (region.start + old.len()).min(file.len());
        let heading = if n == 0 {
            "The closest region"
        } else {
            "An equally close region"
        };
        let _ = write!(
            out,
            "\n{heading} is line{} {} ({} of {total} non-blank lines equal when whitespace is \
             ignored):\n",
            if last - region.start > 1 { "s" } else { "" },
            range_text(region.start + 1, last),
            region.votes
        );
        invisible |= render_region(&mut out, file, crlf, &old, region.start, last);
    }
    if invisible {
        out.push_str(LEGEND);
    }
    out.push_str(
        "Lines marked ! differ; old_string's version is shown under each. Copy the lines \
         exactly as the file has them and retry.",
    );
    out
}

/// Appends the numbered lines `start..last` with `!` marks under differences; returns
/// whether something invisible was shown.
fn render_region(
    out: &mut String,
    file: &FileLines,
    crlf: CrlfLines,
    old: &Block,
    start: usize,
    last: usize,
) -> bool {
    let differs: Vec<bool> = (start..last)
        .map(|i| {
            let j = i - start;
            old.lines
                .get(j)
                .is_none_or(|o| collapse(o) != file.collapsed(i))
        })
        .collect();
    let keep: Vec<bool> = (0..differs.len())
        .map(|k| {
            differs.len() <= MAX_SHOWN
                || k == 0
                || k + 1 == differs.len()
                || differs[k.saturating_sub(1)..(k + 2).min(differs.len())]
                    .iter()
                    .any(|&d| d)
        })
        .collect();
    let mut invisible = false;
    let mut elided = 0usize;
    for (k, i) in (start..last).enumerate() {
        if !keep[k] {
            elided += 1;
            continue;
        }
        if elided > 0 {
            let _ = writeln!(out, "       ⋮ ({elided} equal lines)");
            elided = 0;
        }
        let (line, marked) = file_line(file, crlf, i);
        invisible |= marked;
        let mark = if differs[k] { '!' } else { ' ' };
        let _ = writeln!(out, "{mark}{:>5} | {line}", i + 1);
        if differs[k]
            && let Some(o) = old.lines.get(k)
        {
            invisible |= has_invisibles(o);
            let _ = writeln!(out, "       | old_string has: {}", visible(o));
        }
    }
    invisible
}

/// A candidate region for the feedback.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Closest {
    start: usize,
    votes: usize,
}

/// The windows most like `old` (module doc), best first, at most [`MAX_REGIONS`].
fn closest(file: &FileLines, old: &Block) -> Vec<Closest> {
    if file.is_empty() || old.is_empty() {
        return Vec::new();
    }
    let mut wanted: HashMap<String, Vec<usize>> = HashMap::new();
    for (j, line) in old.lines.iter().enumerate() {
        if !is_blank(line) {
            wanted.entry(collapse(line)).or_default().push(j);
        }
    }
    let mut votes: HashMap<usize, usize> = HashMap::new();
    for i in 0..file.len() {
        if let Some(js) = wanted.get(file.collapsed(i)) {
            for &j in js {
                if i >= j {
                    *votes.entry(i - j).or_default() += 1;
                }
            }
        }
    }
    if let Some(&best) = votes.values().max() {
        let mut starts: Vec<usize> = votes
            .iter()
            .filter(|&(_, &v)| v == best)
            .map(|(&s, _)| s)
            .collect();
        starts.sort_unstable();
        return starts
            .into_iter()
            .take(MAX_REGIONS)
            .map(|start| Closest { start, votes: best })
            .collect();
    }
    let Some(first) = old.first_nonblank() else {
        return Vec::new();
    };
    let needle: String = old.lines[first].trim().chars().take(MAX_COMPARED).collect();
    let needle_len = needle.chars().count();
    let mut best: Option<(f64, usize)> = None;
    let mut budget = SIMILARITY_BUDGET;
    for i in 0..file.len() {
        let line = file.line(i).trim();
        if line.is_empty() {
            continue;
        }
        let line: String = line.chars().take(MAX_COMPARED).collect();
        let line_len = line.chars().count();
        // Half as long or less can never be half similar.
        if line_len.abs_diff(needle_len) * 2 > line_len.max(needle_len) {
            continue;
        }
        let cost = line_len * needle_len;
        if cost > budget {
            break;
        }
        budget -= cost;
        let score = similarity(&line, &needle);
        if best.is_none_or(|(s, _)| score > s) {
            best = Some((score, i));
        }
    }
    match best {
        Some((score, i)) if score >= 0.5 && i >= first => vec![Closest {
            start: i - first,
            votes: 0,
        }],
        Some((score, i)) if score >= 0.5 => vec![Closest { start: i, votes: 0 }],
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file without CRLF endings.
    const LF: fn(usize) -> bool = |_| false;

    #[test]
    fn invisible_characters_are_shown() {
        assert_eq!(visible("\tx = 1  "), "→x = 1··");
        assert_eq!(visible("a b\r"), "a b␍");
        assert_eq!(visible("a\u{a0}b"), "a⍽b");
        assert_eq!(visible("  lead"), "  lead");
    }

    #[test]
    fn line_numbers_copied_from_read_are_named() {
        assert!(has_read_line_numbers("1\ta\n2\tb\n"));
        assert!(has_read_line_numbers("   12\tfn x() {\n\n   13\t}"));
        assert!(!has_read_line_numbers("a\tb"));
        assert!(!has_read_line_numbers("1\ta\nplain"));
        assert!(!has_read_line_numbers("12 a"));
        assert!(!has_read_line_numbers("\n"));
        let file = FileLines::new("a\nb\n");
        let text = message(&Refusal::NotFound, &file, &LF, "1\ta\n2\tb\n", "f.txt");
        assert!(text.contains("leave them out of old_string"), "{text}");
        let text = message(&Refusal::NotFound, &file, &LF, "zzz\n", "f.txt");
        assert!(!text.contains("line number"), "{text}");
    }

    #[test]
    fn not_found_shows_the_closest_region_with_the_difference() {
        let text = "fn a() {\n\tlet x = 1;\n\tlet y = 2;\n\tx + y\n}\n";
        let file = FileLines::new(text);
        let old = "fn a() {\n    let x = 1;\n    let y = 3;\n    x + y\n}";
        let msg = message(&Refusal::NotFound, &file, &LF, old, "src/a.rs");
        assert!(
            msg.starts_with("old_string not found in src/a.rs."),
            "{msg}"
        );
        assert!(
            msg.contains("lines 1-5 (4 of 5 non-blank lines equal"),
            "{msg}"
        );
        assert!(
            msg.contains("!    3 | →let y = 2;\n       | old_string has:     let y = 3;"),
            "{msg}"
        );
        assert!(msg.contains("     2 | →let x = 1;"), "{msg}");
        assert!(msg.contains("→ tab"), "{msg}");
    }

    #[test]
    fn a_similar_first_line_anchors_the_region_when_nothing_is_equal() {
        let file = FileLines::new("alpha\nfn compute_total(a: i32) {\n}\n");
        let msg = message(
            &Refusal::NotFound,
            &file,
            &LF,
            "fn compute_totals(a: u32) {",
            "f",
        );
        assert!(msg.contains("line 2 (0 of 1"), "{msg}");
        let msg = message(&Refusal::NotFound, &file, &LF, "zzzzzzzz qqqq", "f");
        assert!(msg.contains("No line of it is in the file"), "{msg}");
    }

    #[test]
    fn carriage_returns_of_crlf_lines_are_shown_where_the_file_has_them() {
        let file = FileLines::new("one\ntwo \nthree\n");
        let crlf = |i: usize| i == 1;
        let msg = message(&Refusal::NotFound, &file, &crlf, "one\ntwo\nthreeX", "f");
        assert!(
            msg.contains("     1 | one\n     2 | two·␍\n!    3 | three\n"),
            "{msg}"
        );
        assert!(msg.contains("␍ carriage return"), "{msg}");
        let file = FileLines::new("x\ny\nx\n");
        let refusal = Refusal::Ambiguous {
            count: 2,
            spans: vec![(1, 1), (3, 3)],
            strategy: "exact",
        };
        let msg = message(&refusal, &file, &|i: usize| i == 0, "x", "f");
        assert!(msg.contains("     1 | x␍\n"), "{msg}");
        assert!(msg.contains("     3 | x\n"), "{msg}");
        assert!(msg.contains("␍ carriage return"), "{msg}");
    }

    #[test]
    fn ambiguity_lists_every_region() {
        let file = FileLines::new("x = 1\ny\nx = 1\n");
        let refusal = Refusal::Ambiguous {
            count: 2,
            spans: vec![(1, 1), (3, 3)],
            strategy: "exact",
        };
        let msg = message(&refusal, &file, &LF, "x = 1", "a.py");
        assert!(
            msg.starts_with("old_string appears 2 times in a.py. Use replace_all"),
            "{msg}"
        );
        assert!(msg.contains("At line 3:\n     3 | x = 1"), "{msg}");
    }
}
