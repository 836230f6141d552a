//! The ten matching strategies, each a function from the file
//! and `old_string` to the regions it matches. The cascade (`cascade`) decides what to do
//! with them; nothing here changes text.
//!
//! | # | name | a region matches when |
//! |---|---|---|
//! | 1 | exact | it is `old_string`, byte for byte |
//! | 2 | line-trimmed | its lines equal `old_string`'s once each is trimmed |
//! | 3 | block-anchor | first and last lines equal (trimmed), interior similarity 1.0 |
//! | 4 | whitespace-normalized | its lines equal with whitespace runs collapsed |
//! | 5 | indentation-flexible | its lines equal once the common indentation is removed |
//! | 6 | escape-normalized | it equals with tabs as 4 spaces, special spaces as spaces, CR as LF |
//! | 7 | trimmed-boundary | `old_string` without blank boundary lines matches exactly (a variant in `cascade`) |
//! | 7½ | unicode-normalized | it equals with dashes, curly quotes, ellipsis and odd spaces folded to ASCII (bytes, else whole lines with whitespace collapsed) |
//! | 8 | context-aware | its non-blank lines equal (trimmed); blank lines of `old_string` are wildcards |
//! | 9 | block-anchor-relaxed | first and last lines equal, mean interior similarity ≥ 0.7 |
//! | 10 | multi-occurrence | mean line similarity ≥ 0.8 (never with `replace_all`) |
//!
//! Where this differs from the reference: strategies 8–10 only consider regions
//! that pass the **fuzzy gate** ([`gate_collapsed`]): `old_string`'s first and last non-blank lines
//! equal the region's after whitespace normalisation, the blank lines around them are blank
//! in the region too, at most one line between them differs, and what does match carries
//! enough text to identify the region. The gate scales with the block: when a line differs,
//! the anchors (first and last lines) are not evidence enough — some *other interior* line
//! must equal and carry text (at least 3 letters or digits), so a 3-line block whose middle
//! line differs in content (not only whitespace) is refused however well its anchors match,
//! and with fewer than four equal non-blank lines the differing line must still be at
//! least half similar to the file's. Line strategies rank their regions (same
//! indentation, then same relative indentation, then any) so that the cascade can tell an
//! exact-indentation match from a look-alike at another depth; similarity counts characters
//! (`levenshtein`).

use std::ops::Range;

use super::comments::{differs_in_code, has_comment};
use super::levenshtein::{similar_at_least, similarity};
use super::lines::{Block, FileLines, collapse, indent, is_blank};
use super::punctuation::{fold, fold_with_origin, has_foldable};
use super::reindent::{Depth, Unit, detect_unit, measure};

/// Where a strategy matched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Region {
    /// Whole lines `start..start + len` of the file.
    Lines {
        /// First line (0-based).
        start: usize,
        /// Number of lines.
        len: usize,
    },
    /// A byte range of the normalised text (exact and escape-normalized matches).
    Bytes(Range<usize>),
}

/// One matched region.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    /// Where.
    pub region: Region,
    /// How good the match is within its strategy: 0 is best; the cascade only compares
    /// candidates of the best rank.
    pub rank: u8,
    /// The strategy that matched it.
    pub strategy: &'static str,
}

/// What every strategy looks at.
#[derive(Debug, Clone, Copy)]
pub struct Input<'a> {
    /// The file's lines.
    pub file: &'a FileLines<'a>,
    /// `old_string` as lines.
    pub old: &'a Block,
    /// `old_string` as text.
    pub old_text: &'a str,
    /// Whether every occurrence is wanted.
    pub replace_all: bool,
}

/// Strategy 1: every occurrence of `old_string`. Overlapping ones all count (so that `aa`
/// in `aaa` is ambiguous), except with `replace_all`, which replaces left to right.
pub fn exact(input: Input) -> Vec<Candidate> {
    byte_matches(input.file.text(), input.old_text, input.replace_all)
        .into_iter()
        .map(|range| Candidate {
            region: Region::Bytes(range),
            rank: 0,
            strategy: "exact",
        })
        .collect()
}

/// Occurrences of `needle` in `hay`: overlapping ones unless `disjoint`.
fn byte_matches(hay: &str, needle: &str, disjoint: bool) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    if needle.is_empty() {
        return out;
    }
    let mut from = 0;
    while let Some(i) = hay[from..].find(needle) {
        let at = from + i;
        out.push(at..at + needle.len());
        from = if disjoint {
            at + needle.len()
        } else {
            at + hay[at..].chars().next().map_or(1, char::len_utf8)
        };
        if from > hay.len() {
            break;
        }
    }
    out
}

/// Strategy 2: windows whose lines equal `old_string`'s after trimming each line.
pub fn line_trimmed(input: Input) -> Vec<Candidate> {
    let old: Vec<&str> = input.old.lines.iter().map(|l| l.trim()).collect();
    windows(input, "line-trimmed", |file, i| {
        old.iter()
            .enumerate()
            .all(|(j, o)| file.line(i + j).trim() == *o)
    })
}

/// Strategy 3 (strict block anchor): first and last lines non-blank and equal after
/// trimming, and every interior line identical after trimming (mean similarity 1.0).
pub fn block_anchor(input: Input) -> Vec<Candidate> {
    let k = input.old.len();
    if k < 2 || is_blank(&input.old.lines[0]) || is_blank(&input.old.lines[k - 1]) {
        return Vec::new();
    }
    let old: Vec<&str> = input.old.lines.iter().map(|l| l.trim()).collect();
    windows(input, "block-anchor", |file, i| {
        file.line(i).trim() == old[0]
            && file.line(i + k - 1).trim() == old[k - 1]
            && (1..k - 1).all(|j| file.line(i + j).trim() == old[j])
    })
}

/// Strategy 4: windows whose lines equal `old_string`'s with whitespace runs collapsed.
pub fn whitespace_normalized(input: Input) -> Vec<Candidate> {
    let old: Vec<String> = input.old.lines.iter().map(|l| collapse(l)).collect();
    if old.iter().all(String::is_empty) {
        return Vec::new();
    }
    windows(input, "whitespace-normalized", |file, i| {
        old.iter()
            .enumerate()
            .all(|(j, o)| file.collapsed(i + j) == o)
    })
}

/// Strategy 5: windows equal to `old_string` once each side's smallest indentation is
/// removed (relative indentation and trailing whitespace must be the same).
pub fn indentation_flexible(input: Input) -> Vec<Candidate> {
    let k = input.old.len();
    let old = dedent(input.old.lines.iter().map(String::as_str));
    windows(input, "indentation-flexible", |file, i| {
        let region = dedent((i..i + k).map(|n| file.line(n)));
        region == old
    })
}

/// Lines with their smallest (non-blank) indentation removed; blank lines become empty.
fn dedent<'a>(lines: impl Iterator<Item = &'a str> + Clone) -> Vec<String> {
    let common = lines
        .clone()
        .filter(|l| !is_blank(l))
        .map(|l| indent(l).len())
        .min()
        .unwrap_or(0);
    lines
        .map(|l| {
            if is_blank(l) {
                String::new()
            } else if indent(l).len() >= common {
                l[common..].to_string()
            } else {
                l.trim_start().to_string()
            }
        })
        .collect()
}

/// Strategy 6: `old_string` found in the text once both have tabs as four spaces, the
/// special spaces (U+00A0, U+2007, U+202F, U+FEFF) as spaces and lone CRs as LF. A match
/// must begin and end on whole characters of the original (never inside a tab).
pub fn escape_normalized(input: Input) -> Vec<Candidate> {
    let text = input.file.text();
    if !text.contains(['\t', '\r', '\u{a0}', '\u{2007}', '\u{202f}', '\u{feff}'])
        && !input
            .old_text
            .contains(['\t', '\r', '\u{a0}', '\u{2007}', '\u{202f}', '\u{feff}'])
    {
        // Both sides normalise to themselves: nothing beyond what exact found.
        return Vec::new();
    }
    let (hay, origin) = input.file.escaped(escape_normalize);
    let (needle, _) = escape_normalize(input.old_text);
    mapped_matches(
        text,
        hay,
        origin,
        &needle,
        input.replace_all,
        "escape-normalized",
    )
}

/// The matches of `needle` in `hay` (a transformed copy of `text` whose byte `n` came from
/// `text[origin[n]]`) that begin and end on whole characters of the original, as regions
/// of `text`.
fn mapped_matches(
    text: &str,
    hay: &str,
    origin: &[u32],
    needle: &str,
    replace_all: bool,
    strategy: &'static str,
) -> Vec<Candidate> {
    let boundary = |n: usize| n == 0 || n == hay.len() || origin[n] != origin[n - 1];
    byte_matches(hay, needle, replace_all)
        .into_iter()
        .filter(|m| boundary(m.start) && boundary(m.end))
        .map(|m| {
            let start = origin[m.start] as usize;
            let end = origin.get(m.end).map_or(text.len(), |&o| o as usize);
            Candidate {
                region: Region::Bytes(start..end),
                rank: 0,
                strategy,
            }
        })
        .collect()
}

/// The escape normalisation of strategy 6, with the original offset of every output byte.
fn escape_normalize(s: &str) -> (String, Vec<u32>) {
    let mut out = String::with_capacity(s.len() + s.len() / 8);
    let mut origin = Vec::with_capacity(s.len() + s.len() / 8);
    for (i, c) in s.char_indices() {
        let before = out.len();
        match c {
            '\t' => out.push_str("    "),
            '\u{a0}' | '\u{2007}' | '\u{202f}' | '\u{feff}' => out.push(' '),
            '\r' => out.push('\n'),
            other => out.push(other),
        }
        origin.extend(std::iter::repeat_n(i as u32, out.len() - before));
    }
    (out, origin)
}

/// Unicode punctuation folding (between strategies 7 and 8): `old_string` found
/// once both sides have dashes, curly quotes, ellipsis and odd spaces folded to ASCII
/// (`punctuation`) — byte for byte first (a fragment of a line), else as whole lines that
/// equal with whitespace runs collapsed too. A byte match begins and ends on whole
/// characters of the original.
pub fn unicode_normalized(input: Input) -> Vec<Candidate> {
    let text = input.file.text();
    if !has_foldable(text) && !has_foldable(input.old_text) {
        // Folding changes neither side: nothing beyond what the earlier strategies found.
        return Vec::new();
    }
    let (hay, origin) = fold_with_origin(text);
    let needle = fold(input.old_text);
    let found = mapped_matches(
        text,
        &hay,
        &origin,
        &needle,
        input.replace_all,
        "unicode-normalized",
    );
    if !found.is_empty() {
        return found;
    }
    let old: Vec<String> = input.old.lines.iter().map(|l| collapse(&fold(l))).collect();
    if old.iter().all(String::is_empty) {
        return Vec::new();
    }
    let file = input.file;
    let folded: Vec<String> = (0..file.len())
        .map(|i| collapse(&fold(file.line(i))))
        .collect();
    windows(input, "unicode-normalized", |_, i| {
        old.iter().enumerate().all(|(j, o)| folded[i + j] == *o)
    })
}

/// Strategies 8–10 together: every window that passes the fuzzy gate and the criterion of
/// at least one of them, named after the first that accepts it. The cascade treats them as
/// one stage, so two such windows are ambiguous whichever strategy found each.
pub fn fuzzy(input: Input) -> Vec<Candidate> {
    let file = input.file;
    let old = input.old;
    let mut out = Vec::new();
    for (start, _) in gated(input) {
        let strategy = if context_aware(file, start, old) {
            "context-aware"
        } else if block_anchor_relaxed(file, start, old) {
            "block-anchor-relaxed"
        } else if !input.replace_all && multi_occurrence(file, start, old) {
            "multi-occurrence"
        } else {
            continue;
        };
        out.push(Candidate {
            region: Region::Lines {
                start,
                len: old.len(),
            },
            rank: 0,
            strategy,
        });
    }
    out
}

/// Every window that passes the fuzzy gate, with what the gate found.
fn gated(input: Input) -> Vec<(usize, Gate)> {
    let file = input.file;
    let old = input.old;
    let (Some(first), Some(_)) = (old.first_nonblank(), old.last_nonblank()) else {
        return Vec::new();
    };
    let wanted: Vec<String> = old.lines.iter().map(|l| collapse(l)).collect();
    // Only a first line with a comment can differ from the file's by a comment slip.
    let first_has_comment = has_comment(&old.lines[first]);
    let mut out = Vec::new();
    for i in first..file.len() {
        if file.collapsed(i) != wanted[first]
            && !(first_has_comment && comment_slip(file.line(i), &old.lines[first]))
        {
            continue;
        }
        let start = i - first;
        if start + old.len() > file.len() {
            continue;
        }
        if let Some(gate) = gate_collapsed(file, start, old, &wanted) {
            out.push((start, gate));
        }
    }
    out
}

/// The line of `old_string` (an index) that differs in code from the window at `start`, a
/// window the fuzzy gate passed: the model's copy of that line is stale or mistyped. A
/// difference in whitespace or inside a comment is none.
pub fn differing_code(file: &FileLines, start: usize, old: &Block) -> Option<usize> {
    let wanted: Vec<String> = old.lines.iter().map(|l| collapse(l)).collect();
    let j = gate_collapsed(file, start, old, &wanted)?.differing?;
    (!is_blank(&old.lines[j]) && differs_in_code(file.line(start + j), &old.lines[j])).then_some(j)
}

/// What the fuzzy gate found about a window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Gate {
    /// The one line (index into `old`) that differs, if any.
    pub differing: Option<usize>,
}

/// Alphanumeric characters the equal non-blank lines of a fuzzy match must hold at least:
/// a match on lines like `}` and `end` alone identifies nothing.
const MIN_SUPPORT: usize = 10;
/// Alphanumeric characters the equal lines strictly between the first and last non-blank
/// lines must hold when one line differs: a block whose only interior line differs (a
/// 3-line block, or one whose other interior lines are blank or bare braces) is a
/// different block, however well its anchors match.
const MIN_INTERIOR_SUPPORT: usize = 3;
/// With fewer than four equal non-blank lines, the differing line must still be this
/// similar to the file's.
const MIN_DIFFERING_SIMILARITY: f64 = 0.5;

/// [`gate_collapsed`] for lines not collapsed yet.
#[cfg(test)]
pub fn gate(file: &FileLines, start: usize, old: &Block) -> Option<Gate> {
    let wanted: Vec<String> = old.lines.iter().map(|l| collapse(l)).collect();
    gate_collapsed(file, start, old, &wanted)
}

/// The fuzzy gate for the window of `old.len()` lines at `start`: `old`'s first
/// and last non-blank lines equal the window's after whitespace normalisation, the blank
/// lines outside them are blank in the window, at most one line between them differs,
/// and the lines that are equal carry enough text (module doc). `wanted` is `old`'s lines
/// already collapsed.
fn gate_collapsed(file: &FileLines, start: usize, old: &Block, wanted: &[String]) -> Option<Gate> {
    let first = old.first_nonblank()?;
    let last = old.last_nonblank()?;
    if first >= last || start + old.len() > file.len() {
        return None;
    }
    let mut differing = None;
    let mut support = 0usize;
    let mut equal_nonblank = 0usize;
    let mut interior_support = 0usize;
    let mut slips = 0usize;
    for (j, wanted) in wanted.iter().enumerate() {
        if file.collapsed(start + j) != wanted && comment_slip(file.line(start + j), &old.lines[j])
        {
            // Differs only inside a comment: neither evidence nor a difference.
            slips += 1;
            continue;
        }
        if file.collapsed(start + j) == wanted {
            if !wanted.is_empty() {
                equal_nonblank += 1;
                let alnum = wanted.chars().filter(|c| c.is_alphanumeric()).count();
                support += alnum;
                if j > first && j < last {
                    interior_support += alnum;
                }
            }
            continue;
        }
        if j <= first || j >= last || differing.is_some() {
            return None;
        }
        differing = Some(j);
    }
    if slips > 0 && (slips > 2 || support < MIN_SUPPORT || equal_nonblank < slips.max(2)) {
        return None;
    }
    if let Some(j) = differing {
        // The anchors never vouch for the interior on their own: some interior line that
        // is not the differing one must equal, with some text of its own.
        if support < MIN_SUPPORT || interior_support < MIN_INTERIOR_SUPPORT {
            return None;
        }
        if equal_nonblank < 4
            && !similar_at_least(
                file.line(start + j).trim(),
                old.lines[j].trim(),
                MIN_DIFFERING_SIMILARITY,
            )
        {
            return None;
        }
    }
    Some(Gate { differing })
}

/// Whether two non-blank lines differ, but only inside a comment.
fn comment_slip(have: &str, want: &str) -> bool {
    !is_blank(have)
        && !is_blank(want)
        && collapse(have) != collapse(want)
        && !differs_in_code(have, want)
}

/// Strategy 8's criterion: at least 3 lines and 2 non-blank ones; every non-blank line of
/// `old` equals the window's after trimming; blank lines of `old` match anything.
fn context_aware(file: &FileLines, start: usize, old: &Block) -> bool {
    let anchors = old.lines.iter().filter(|l| !is_blank(l)).count();
    old.len() >= 3
        && anchors >= 2
        && start + old.len() <= file.len()
        && old
            .lines
            .iter()
            .enumerate()
            .all(|(j, l)| is_blank(l) || file.line(start + j).trim() == l.trim())
}

/// Strategy 9's criterion: at least 3 lines, first and last non-blank and equal after
/// trimming, mean similarity of the interior lines at least 0.7.
fn block_anchor_relaxed(file: &FileLines, start: usize, old: &Block) -> bool {
    let k = old.len();
    if k < 3 || start + k > file.len() {
        return false;
    }
    let (first, last) = (old.lines[0].trim(), old.lines[k - 1].trim());
    if first.is_empty()
        || last.is_empty()
        || file.line(start).trim() != first
        || file.line(start + k - 1).trim() != last
    {
        return false;
    }
    let total: f64 = (1..k - 1)
        .map(|j| similarity(file.line(start + j).trim(), old.lines[j].trim()))
        .sum();
    total / (k - 2) as f64 >= 0.7
}

/// Strategy 10's criterion: mean similarity of all lines (trimmed) at least 0.8.
fn multi_occurrence(file: &FileLines, start: usize, old: &Block) -> bool {
    let k = old.len();
    if k == 0 || start + k > file.len() {
        return false;
    }
    let total: f64 = (0..k)
        .map(|j| similarity(file.line(start + j).trim(), old.lines[j].trim()))
        .sum();
    total / k as f64 >= 0.8
}

/// Every window of `old.len()` lines accepted by `accept`, ranked.
fn windows(
    input: Input,
    strategy: &'static str,
    accept: impl Fn(&FileLines, usize) -> bool,
) -> Vec<Candidate> {
    let k = input.old.len();
    let n = input.file.len();
    if k == 0 || k > n {
        return Vec::new();
    }
    (0..=n - k)
        .filter(|&i| accept(input.file, i))
        .map(|start| Candidate {
            region: Region::Lines { start, len: k },
            rank: rank(input.file, start, input.old),
            strategy,
        })
        .collect()
}

/// 0 when every non-blank line has exactly `old`'s indentation, 1 when the indentation
/// has the same structure (each line's depth relative to the first, each side measured in
/// its own unit), 2 otherwise.
pub fn rank(file: &FileLines, start: usize, old: &Block) -> u8 {
    let pairs: Vec<(&str, &str)> = old
        .lines
        .iter()
        .enumerate()
        .filter(|(_, l)| !is_blank(l))
        .map(|(j, l)| (l.as_str(), file.line(start + j)))
        .collect();
    if pairs.iter().all(|(o, f)| indent(o) == indent(f)) {
        return 0;
    }
    let old_lines: Vec<&str> = pairs.iter().map(|p| p.0).collect();
    let file_lines: Vec<&str> = pairs.iter().map(|p| p.1).collect();
    let old_unit = detect_unit(std::slice::from_ref(&old_lines)).unwrap_or(Unit::Spaces(1));
    let file_unit = detect_unit(std::slice::from_ref(&file_lines)).unwrap_or(Unit::Spaces(1));
    let relative = |lines: &[&str], unit: Unit| -> Vec<Depth> {
        let base = measure(lines[0], unit);
        lines
            .iter()
            .map(|l| {
                let d = measure(l, unit);
                Depth {
                    levels: d.levels - base.levels,
                    extra: d.extra - base.extra,
                }
            })
            .collect()
    };
    if relative(&old_lines, old_unit) == relative(&file_lines, file_unit) {
        1
    } else {
        2
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(strategy: fn(Input) -> Vec<Candidate>, text: &str, old: &str) -> Vec<Candidate> {
        let file = FileLines::new(text);
        let block = Block::parse(old);
        strategy(Input {
            file: &file,
            old: &block,
            old_text: old,
            replace_all: false,
        })
    }

    fn starts(found: &[Candidate]) -> Vec<usize> {
        found
            .iter()
            .map(|c| match c.region {
                Region::Lines { start, .. } => start,
                Region::Bytes(ref r) => r.start,
            })
            .collect()
    }

    #[test]
    fn exact_counts_overlapping_occurrences() {
        assert_eq!(starts(&run(exact, "hello world", "world")), vec![6]);
        assert!(run(exact, "hello world", "xyz").is_empty());
        assert_eq!(run(exact, "aaa", "a").len(), 3);
        assert_eq!(run(exact, "aaa", "aa").len(), 2);
        let file = FileLines::new("aaa");
        let block = Block::parse("aa");
        let all = exact(Input {
            file: &file,
            old: &block,
            old_text: "aa",
            replace_all: true,
        });
        assert_eq!(all.len(), 1);
    }

    #[test]
    fn line_trimmed_cases_of_the_reference() {
        let found = run(
            line_trimmed,
            "  func foo() {\n    return 1\n  }",
            "func foo() {\n  return 1\n}",
        );
        assert_eq!(starts(&found), vec![0]);
        let found = run(
            line_trimmed,
            "\tfunc foo() {\n\t\treturn 1\n\t}",
            "func foo() {\n    return 1\n}",
        );
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].rank, 1, "same structure, other indentation");
        assert!(run(line_trimmed, "func foo() {}", "func bar() {}").is_empty());
    }

    #[test]
    fn ranks_tell_exact_indentation_from_look_alikes() {
        let text = "    a()\n    b()\nx\n        a()\n        b()\ny\n    a()\n      b()\n";
        let found = run(line_trimmed, text, "    a()\n    b() ");
        let ranks: Vec<u8> = found.iter().map(|c| c.rank).collect();
        assert_eq!(starts(&found), vec![0, 3, 6]);
        assert_eq!(ranks, vec![0, 1, 2]);
    }

    #[test]
    fn block_anchor_strict_cases() {
        let block = "func a() {\n  x := 1\n  y := 2\n}";
        assert_eq!(run(block_anchor, block, block).len(), 1);
        assert!(run(block_anchor, "func foo() {", "func foo() {").is_empty());
        assert!(run(block_anchor, "func foo() {\n}", "func bar() {\n}").is_empty());
    }

    #[test]
    fn whitespace_normalized_cases() {
        assert_eq!(run(whitespace_normalized, "x  =  1", "x = 1").len(), 1);
        assert_eq!(
            run(
                whitespace_normalized,
                "  func  foo()  {\n    return  1\n  }",
                "func foo() {\n  return 1\n}"
            )
            .len(),
            1
        );
        assert!(run(whitespace_normalized, "hello world", "goodbye world").is_empty());
    }

    #[test]
    fn indentation_flexible_cases() {
        let text = "\t\tfunc foo() {\n\t\t\treturn 1\n\t\t}";
        assert_eq!(
            run(indentation_flexible, text, "func foo() {\n\treturn 1\n}").len(),
            1
        );
        assert!(run(indentation_flexible, "func foo() {}", "func bar() {}").is_empty());
        assert!(
            run(indentation_flexible, "\tx\n\t\ty", "x\n    y").is_empty(),
            "tabs against spaces"
        );
        assert_eq!(
            run(indentation_flexible, "\t\t\tx\n\t\t\t\ty", "\tx\n\t\ty").len(),
            1
        );
    }

    #[test]
    fn escape_normalized_maps_back_to_whole_characters() {
        let found = run(escape_normalized, "hello\tworld\n", "hello    world");
        assert_eq!(found[0].region, Region::Bytes(0..11));
        let found = run(escape_normalized, "a\u{a0}b", "a b");
        assert_eq!(found[0].region, Region::Bytes(0..4));
        // Two of a tab's four spaces are not a match.
        assert!(run(escape_normalized, "x\ty", "x  y").is_empty());
        assert!(run(escape_normalized, "hello world", "goodbye world").is_empty());
    }

    #[test]
    fn fuzzy_needs_the_gate() {
        let text = "def save(self):\n    self.check()\n    self.db.write(self)\n    return True\n";
        // One interior line differs: accepted, and the cascade tells whether it differs
        // in code.
        let old = "def save(self):\n    self.check()\n    self.db.write(self, flush=True)\n    return True";
        let found = run(fuzzy, text, old);
        assert_eq!(starts(&found), vec![0]);
        let (file, block) = (FileLines::new(text), Block::parse(old));
        assert_eq!(differing_code(&file, 0, &block), Some(2));
        // One interior line differs inside a comment: accepted.
        let text = "def save(self):\n    self.check()  # validate first\n    self.db.write(self)\n    return True\n";
        let old = "def save(self):\n    self.check()  # validates first\n    self.db.write(self)\n    return True";
        assert_eq!(starts(&run(fuzzy, text, old)), vec![0]);
        let (file, block) = (FileLines::new(text), Block::parse(old));
        assert_eq!(differing_code(&file, 0, &block), None);
        // The last line differs: refused whatever the similarity.
        let old = "def save(self):\n    self.check()\n    self.db.write(self)\n    return False";
        assert!(run(fuzzy, text, old).is_empty());
        // Two interior lines differ: refused.
        let old = "def save(self):\n    self.verify()\n    self.db.put(self)\n    return True";
        assert!(run(fuzzy, text, old).is_empty());
        // A 3-line block whose middle line differs in content: refused however long its
        // anchors, while a whitespace-only difference is no difference.
        let text = "function add(first, second) {\n  return first + second;\n}\n";
        assert!(
            run(
                fuzzy,
                text,
                "function add(first, second) {\n  return first - second;\n}"
            )
            .is_empty()
        );
        let file = FileLines::new(text);
        let old = Block::parse("function add(first, second) {\n  return  first + second;\n}");
        assert_eq!(gate(&file, 0, &old), Some(Gate { differing: None }));
        // Anchors that identify nothing: refused.
        assert!(run(fuzzy, "}\n    bar();\n}\n", "}\n    baz();\n}").is_empty());
    }

    #[test]
    fn context_aware_cases_of_the_reference() {
        let text = "import (\n\t\"fmt\"\n\t\"os\"\n)";
        let file = FileLines::new(text);
        assert!(context_aware(&file, 0, &Block::parse(text)));
        assert!(!context_aware(&file, 0, &Block::parse("import (")));
        let file = FileLines::new("a\nb\nc\nd");
        assert!(!context_aware(&file, 0, &Block::parse("x\ny\nz\nw")));
        let file = FileLines::new("fn a() {\n    x();\n    y();\n}");
        assert!(context_aware(
            &file,
            0,
            &Block::parse("fn a() {\n\n    y();\n}")
        ));
    }

    #[test]
    fn relaxed_and_multi_occurrence_criteria() {
        let file = FileLines::new("start\n  value = compute(a, b)\nend");
        let old = Block::parse("start\n  value = compute(a, c)\nend");
        assert!(block_anchor_relaxed(&file, 0, &old));
        assert!(multi_occurrence(&file, 0, &old));
        let far = Block::parse("start\n  nothing alike here at all\nend");
        assert!(!block_anchor_relaxed(&file, 0, &far));
    }
}
