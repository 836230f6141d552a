//! The cascade: which strategy's match is applied, or why none is.
//!
//! The strategies (`strategies`) run in a fixed order (`strategies` numbers them); the first that finds anything
//! decides. Each one is tried on `old_string` as given and then on its **variants**, in this
//! order:
//! - blank lines at either end of `old_string` dropped (fewest first), the same number of
//!   blank lines dropped from the same end of `new_string` — for when the model framed its
//!   snippet with blank lines the file does not have; the exact strategy on such a variant
//!   is strategy 7, `trimmed-boundary`;
//! - literal `\t` turned into TAB in both strings, first only in indentation, then
//!   everywhere — for when the model escaped its tabs;
//! - every escape sequence of the escape-normalizing strategy unescaped in both strings
//!   (`\n`, `\t`, `\r`, `\'`, `\"`, `` \` ``, `\$`, `\\`, and a backslash before a line
//!   break dropped), read left to right so that `\\n` is a backslash and an `n` — for when
//!   the model sent the file's text as a string literal's source.
//!
//! A backslash sequence that matched as it was is never touched, since the unescaped forms
//! are tried only when it did not.
//!
//! So a stricter strategy on a variant wins over a looser one on the original. What the
//! first finding strategy found is then decided:
//! - **one region** (of the best rank) is edited — even when a looser strategy would have
//!   found more: one literal occurrence is edited;
//! - **several** equally good regions are refused as ambiguous, at every stage, unless
//!   `replace_all` asks for all of them (non-overlapping ones, left to right, each
//!   re-indented for itself). The three fuzzy strategies count as one stage here, so two
//!   regions passing the fuzzy gate are ambiguous whichever strategy accepted each;
//! - a fuzzy region that leans on a line differing in code is **stale**: the search goes
//!   on with the next variant and stage (an escaped `old_string` may look stale as given
//!   and fit once unescaped), and the first stale finding is the answer only when nothing
//!   else fits;
//! - nothing anywhere is "not found".
//!
//! Line strategies build their replacement with `reindent`; the exact and sub-line matches
//! insert `new_string` as given. An empty `new_string` for whole lines (not ending in a
//! newline) removes their line break too, so a deleted block leaves no empty line behind.

use std::ops::Range;

use super::lines::{Block, FileLines, is_blank};
use super::punctuation::fold_foreign;
use super::reindent;
use super::strategies::{self, Candidate, Input, Region};
use crate::textdoc::Splice;

/// How many blank boundary lines at each end a variant may drop.
const MAX_BOUNDARY_DROP: usize = 3;

/// A successful match, ready to render.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edit {
    /// The changes to the normalised text, sorted and non-overlapping.
    pub splices: Vec<Splice>,
    /// The strategy that matched.
    pub strategy: &'static str,
    /// What was adjusted in the strings first (`trimmed-boundary`, `unescaped-tabs`,
    /// `unescaped-sequences`).
    pub adjustments: Vec<&'static str>,
    /// The replaced regions as 1-based inclusive line spans of the original.
    pub spans: Vec<(usize, usize)>,
    /// Lines re-indented, and shared lines written as the file has them (all regions).
    pub writing: reindent::Writing,
}

/// Why nothing was edited.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// `old_string` is empty and the file is not.
    EmptyOld,
    /// No strategy found a region.
    NotFound,
    /// `old_string` is the file's text but for one line that differs in code: the model's
    /// copy of the file is stale (or it mistyped the line).
    Stale {
        /// The 1-based line of the file.
        line: usize,
        /// The file's line.
        found: String,
        /// `old_string`'s line.
        expected: String,
    },
    /// Several regions matched equally well at one stage.
    Ambiguous {
        /// How many.
        count: usize,
        /// Their 1-based inclusive line spans (all of them).
        spans: Vec<(usize, usize)>,
        /// The strategy that found them.
        strategy: &'static str,
    },
}

/// The strategies of the fuzzy stage, the only ones that forgive a differing line.
const FUZZY: [&str; 3] = ["context-aware", "block-anchor-relaxed", "multi-occurrence"];

/// A strategy as the cascade runs it.
type Strategy = fn(Input) -> Vec<Candidate>;

/// The stages in order; `fuzzy` is strategies 8–10 together, strategy 7 is
/// the exact stage on a boundary variant, and Unicode punctuation folding comes
/// just before the fuzzy ones.
const STAGES: [Strategy; 8] = [
    strategies::exact,
    strategies::line_trimmed,
    strategies::block_anchor,
    strategies::whitespace_normalized,
    strategies::indentation_flexible,
    strategies::escape_normalized,
    strategies::unicode_normalized,
    strategies::fuzzy,
];

/// `old_string`/`new_string` as one variant tries them.
#[derive(Debug, Clone)]
struct Variant {
    old_text: String,
    old: Block,
    new: Block,
    trimmed: bool,
    unescaped: Unescaped,
}

/// Which unescaping made a variant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Unescaped {
    /// None: the strings as given.
    No,
    /// Literal `\t` read as TAB.
    Tabs,
    /// Every escape sequence read as its character.
    All,
}

impl Variant {
    fn new(old_text: String, new_text: &str, trimmed: bool, unescaped: Unescaped) -> Variant {
        Variant {
            old: Block::parse(&old_text),
            old_text,
            new: Block::parse(new_text),
            trimmed,
            unescaped,
        }
    }

    fn adjustments(&self) -> Vec<&'static str> {
        let mut out = Vec::new();
        if self.trimmed {
            out.push("trimmed-boundary");
        }
        match self.unescaped {
            Unescaped::No => {}
            Unescaped::Tabs => out.push("unescaped-tabs"),
            Unescaped::All => out.push("unescaped-sequences"),
        }
        out
    }
}

/// Runs the cascade on the normalised `text` (module doc). `old` and `new` may use CRLF;
/// they are normalised like the text.
pub fn run(text: &str, old: &str, new: &str, replace_all: bool) -> Result<Edit, Refusal> {
    let old = normalize_input(old);
    let new = normalize_input(new);
    if old.is_empty() {
        if !text.is_empty() {
            return Err(Refusal::EmptyOld);
        }
        return Ok(Edit {
            splices: vec![Splice {
                range: 0..0,
                text: new,
            }],
            strategy: "exact",
            adjustments: Vec::new(),
            spans: vec![(1, 1)],
            writing: reindent::Writing::default(),
        });
    }
    let file = FileLines::new(text);
    let variants = variants(&old, &new);
    let fallback_unit = std::cell::OnceCell::new();
    let unit = || *fallback_unit.get_or_init(|| reindent::file_unit(&file));
    // A variant whose fuzzy match leans on a line that differs in code is refused as
    // stale only when no other variant (unescaped, trimmed) and no later stage fits: an
    // escaped old_string whose raw text looks stale may fit once unescaped.
    let mut stale = None;
    for (stage, strategy) in STAGES.iter().enumerate() {
        for variant in &variants {
            if variant.old.first_nonblank().is_none() && stage > 0 {
                // Whitespace alone only ever matches literally.
                continue;
            }
            let input = Input {
                file: &file,
                old: &variant.old,
                old_text: &variant.old_text,
                replace_all,
            };
            let mut found = strategy(input);
            if found.is_empty() {
                continue;
            }
            if stage == 0 && variant.trimmed {
                for candidate in &mut found {
                    candidate.strategy = "trimmed-boundary";
                }
            }
            match decide(&file, variant, found, replace_all, &unit) {
                Err(refusal @ Refusal::Stale { .. }) => {
                    stale.get_or_insert(refusal);
                }
                decided => return decided,
            }
        }
    }
    Err(stale.unwrap_or(Refusal::NotFound))
}

/// CRLF → LF and no BOM, as the text was normalised.
fn normalize_input(s: &str) -> String {
    let s = s.strip_prefix(crate::textdoc::BOM).unwrap_or(s);
    s.replace("\r\n", "\n")
}

/// Turns what one stage found into an edit or a refusal (module doc).
fn decide(
    file: &FileLines,
    variant: &Variant,
    found: Vec<Candidate>,
    replace_all: bool,
    unit: &dyn Fn() -> reindent::Unit,
) -> Result<Edit, Refusal> {
    let strategy = found[0].strategy;
    let chosen: Vec<Candidate> = if replace_all {
        let mut all = found;
        all.sort_by_key(|c| region_bytes(file, variant, &c.region).start);
        let mut kept: Vec<Candidate> = Vec::new();
        let mut end = 0;
        for c in all {
            let range = region_bytes(file, variant, &c.region);
            if kept.is_empty() || range.start >= end {
                end = range.end.max(range.start);
                kept.push(c);
            }
        }
        kept
    } else {
        let best = found.iter().map(|c| c.rank).min().unwrap_or(0);
        let group: Vec<Candidate> = found.into_iter().filter(|c| c.rank == best).collect();
        if group.len() > 1 {
            return Err(Refusal::Ambiguous {
                count: group.len(),
                spans: group.iter().map(|c| span(file, &c.region)).collect(),
                strategy,
            });
        }
        group
    };
    // A fuzzy match never forgives a line that differs in code: the model's picture of the
    // file is stale there, whether the edit replaces that line or only leans on it.
    for c in &chosen {
        if let Region::Lines { start, .. } = c.region
            && FUZZY.contains(&c.strategy)
            && let Some(j) = strategies::differing_code(file, start, &variant.old)
        {
            return Err(Refusal::Stale {
                line: start + j + 1,
                found: file.line(start + j).to_string(),
                expected: variant.old.lines[j].clone(),
            });
        }
    }
    let mut splices = Vec::with_capacity(chosen.len());
    let mut spans = Vec::with_capacity(chosen.len());
    let mut writing = reindent::Writing::default();
    for c in &chosen {
        spans.push(span(file, &c.region));
        let (splice, done) = splice(file, variant, &c.region, unit);
        splices.push(splice);
        writing.reindented += done.reindented;
        writing.kept_from_file += done.kept_from_file;
    }
    Ok(Edit {
        splices,
        strategy: chosen.first().map_or(strategy, |c| c.strategy),
        adjustments: variant.adjustments(),
        spans,
        writing,
    })
}

/// The 1-based inclusive line span of a region.
fn span(file: &FileLines, region: &Region) -> (usize, usize) {
    match region {
        Region::Lines { start, len } => (start + 1, start + len.max(&1)),
        Region::Bytes(range) => {
            let first = file.line_of(range.start);
            let last = file.line_of(range.end.saturating_sub(1).max(range.start));
            (first + 1, last + 1)
        }
    }
}

/// The bytes a region replaces: whole lines with their last break when `old_string` ends
/// with one; also the break when whole lines are deleted (module doc).
fn region_bytes(file: &FileLines, variant: &Variant, region: &Region) -> Range<usize> {
    let deleting = variant.new.is_empty() && !variant.old.terminated;
    match region {
        Region::Lines { start, len } => {
            let last = start + len - 1;
            let end = if (variant.old.terminated || deleting) && file.has_break(last) {
                file.start(last + 1)
            } else {
                file.end(last)
            };
            file.start(*start)..end
        }
        Region::Bytes(range) => {
            let text = file.text();
            let whole_lines = file.is_line_start(range.start)
                && text.as_bytes().get(range.end) == Some(&b'\n')
                && range.end > range.start;
            if deleting && whole_lines {
                range.start..range.end + 1
            } else {
                range.clone()
            }
        }
    }
}

/// The splice that applies `variant` at `region`, and what writing it did.
fn splice(
    file: &FileLines,
    variant: &Variant,
    region: &Region,
    unit: &dyn Fn() -> reindent::Unit,
) -> (Splice, reindent::Writing) {
    let range = region_bytes(file, variant, region);
    let lines = match region {
        Region::Lines { start, .. } => Some(*start),
        Region::Bytes(bytes) => whole_line_start(file, variant, bytes),
    };
    let (mut text, writing) = match lines {
        Some(start) => reindent::written(file, start, &variant.old, &variant.new, unit),
        None => (variant.new.text(), reindent::Writing::default()),
    };
    if let Some(folded) = fold_foreign(&variant.old_text, &file.text()[range.clone()], &text) {
        text = folded;
    }
    (Splice { range, text }, writing)
}

/// The first line of a byte match that covers exactly `old_string`'s lines, whole.
fn whole_line_start(file: &FileLines, variant: &Variant, bytes: &Range<usize>) -> Option<usize> {
    if !file.is_line_start(bytes.start) || bytes.end <= bytes.start {
        return None;
    }
    let first = file.line_of(bytes.start);
    let last = file.line_of(bytes.end - 1);
    let ends_whole = if variant.old.terminated {
        file.text().as_bytes().get(bytes.end - 1) == Some(&b'\n')
    } else {
        bytes.end == file.end(last)
    };
    (ends_whole && last + 1 - first == variant.old.len()).then_some(first)
}

/// `old`/`new` as given, then their variants (module doc).
fn variants(old: &str, new: &str) -> Vec<Variant> {
    let mut bases = vec![(old.to_string(), new.to_string(), Unescaped::No)];
    if old.contains("\\t") {
        for mode in [Unescape::Indentation, Unescape::Everywhere] {
            let (o, n) = (unescape_tabs(old, mode), unescape_tabs(new, mode));
            if o != old && bases.iter().all(|(b, _, _)| *b != o) {
                bases.push((o, n, Unescaped::Tabs));
            }
        }
    }
    if old.contains('\\') {
        let (o, n) = (unescape_all(old), unescape_all(new));
        if !o.is_empty() && bases.iter().all(|(b, _, _)| *b != o) {
            bases.push((o, n, Unescaped::All));
        }
    }
    let mut out = Vec::new();
    for (o, n, unescaped) in bases {
        let base = Variant::new(o, &n, false, unescaped);
        let trims = boundary_drops(&base.old);
        let new_block = base.new.clone();
        let old_block = base.old.clone();
        out.push(base);
        for (lead, trail) in trims {
            let old = drop_boundary(&old_block, lead, trail, false);
            let new = drop_boundary(&new_block, lead, trail, true);
            out.push(Variant::new(old.text(), &new.text(), true, unescaped));
        }
    }
    out
}

/// The (leading, trailing) numbers of blank lines a variant may drop, fewest first; never
/// all of the non-blank content.
fn boundary_drops(old: &Block) -> Vec<(usize, usize)> {
    let (Some(first), Some(last)) = (old.first_nonblank(), old.last_nonblank()) else {
        return Vec::new();
    };
    let lead = first.min(MAX_BOUNDARY_DROP);
    let trail = (old.len() - 1 - last).min(MAX_BOUNDARY_DROP);
    let mut out: Vec<(usize, usize)> = (0..=lead)
        .flat_map(|a| (0..=trail).map(move |b| (a, b)))
        .filter(|&p| p != (0, 0))
        .collect();
    out.sort_by_key(|&(a, b)| (a + b, b));
    out
}

/// `block` without `lead` blank lines at its start and `trail` at its end; with `lenient`
/// (new_string) only as many as are blank.
fn drop_boundary(block: &Block, lead: usize, trail: usize, lenient: bool) -> Block {
    let lines = &block.lines;
    let lead = if lenient {
        lines.iter().take(lead).take_while(|l| is_blank(l)).count()
    } else {
        lead
    };
    let trail = if lenient {
        lines[lead..]
            .iter()
            .rev()
            .take(trail)
            .take_while(|l| is_blank(l))
            .count()
    } else {
        trail
    };
    Block {
        lines: lines[lead..lines.len() - trail].to_vec(),
        terminated: block.terminated,
    }
}

/// Where literal `\t` becomes a TAB.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Unescape {
    /// In the leading whitespace of each line only.
    Indentation,
    /// Everywhere (an escaped backslash, `\\`, is left alone).
    Everywhere,
}

/// `s` with every escape sequence of the escape-normalizing strategy read as the
/// character it stands for, left to right (module doc); other backslashes stay.
fn unescape_all(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let unescaped = match chars.peek() {
            Some('n') => Some('\n'),
            Some('t') => Some('\t'),
            Some('r') => Some('\r'),
            Some(&q @ ('\'' | '"' | '`' | '$' | '\\' | '\n')) => Some(q),
            _ => None,
        };
        match unescaped {
            Some(u) => {
                chars.next();
                out.push(u);
            }
            None => out.push(c),
        }
    }
    // A `\r` the model escaped before a `\n` is the file's CRLF, which the text has set aside.
    out.replace("\r\n", "\n")
}

fn unescape_tabs(s: &str, mode: Unescape) -> String {
    let mut out = String::with_capacity(s.len());
    for (n, line) in s.split('\n').enumerate() {
        if n > 0 {
            out.push('\n');
        }
        let mut leading = true;
        let mut rest = line;
        while let Some(c) = rest.chars().next() {
            if c == '\\' && rest[1..].starts_with('t') && (leading || mode == Unescape::Everywhere)
            {
                out.push('\t');
                rest = &rest[2..];
                continue;
            }
            if c == '\\' && rest[1..].starts_with('\\') {
                out.push_str("\\\\");
                rest = &rest[2..];
                leading = false;
                continue;
            }
            if c != ' ' && c != '\t' {
                leading = false;
            }
            out.push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn apply(
        text: &str,
        old: &str,
        new: &str,
        all: bool,
    ) -> Result<(String, &'static str), Refusal> {
        let edit = run(text, old, new, all)?;
        let mut out = String::new();
        let mut pos = 0;
        for s in &edit.splices {
            out.push_str(&text[pos..s.range.start]);
            out.push_str(&s.text);
            pos = s.range.end;
        }
        out.push_str(&text[pos..]);
        Ok((out, edit.strategy))
    }

    fn ok(text: &str, old: &str, new: &str) -> String {
        apply(text, old, new, false).unwrap().0
    }

    #[test]
    fn cascade_cases_of_the_reference() {
        assert_eq!(ok("hello world", "hello", "hi"), "hi world");
        assert_eq!(
            ok(
                "func foo() {\n  return 1\n}",
                "func foo() {\nreturn 1\n}",
                "func bar() {}"
            ),
            "func bar() {}"
        );
        assert_eq!(
            apply("aa bb aa", "aa", "cc", false),
            Err(Refusal::Ambiguous {
                count: 2,
                spans: vec![(1, 1), (1, 1)],
                strategy: "exact"
            })
        );
        assert_eq!(apply("hello world", "", "x", false), Err(Refusal::EmptyOld));
        assert_eq!(
            apply("hi", "hello world!", "x", false),
            Err(Refusal::NotFound)
        );
        assert_eq!(
            ok("你好世界 hello", "你好世界", "こんにちは"),
            "こんにちは hello"
        );
        assert_eq!(ok("start 🎉🎊 end", "🎉🎊", "🔥"), "start 🔥 end");
        assert_eq!(
            ok("café résumé naïve", "résumé", "resume"),
            "café resume naïve"
        );
        assert_eq!(
            apply("foo bar foo baz foo", "foo", "qux", true).unwrap().0,
            "qux bar qux baz qux"
        );
        assert_eq!(
            apply(
                "func a() {}\nfunc b() {}\nfunc a() {}",
                "func a() {}",
                "func x() {}",
                true
            )
            .unwrap()
            .0,
            "func x() {}\nfunc b() {}\nfunc x() {}"
        );
        assert_eq!(ok("", "", "new"), "new");
    }

    #[test]
    fn one_literal_occurrence_wins_over_fuzzy_ones() {
        let text = "  x = 1\nx = 1 \n";
        assert_eq!(
            apply(text, "x = 1 ", "y", false).unwrap(),
            ("  x = 1\ny\n".into(), "exact")
        );
    }

    #[test]
    fn boundary_blank_lines_not_in_the_file_are_dropped_on_both_sides() {
        let text = "a()\nb()\nc()\n";
        let (out, strategy) = apply(text, "\n\nb()\n\n", "\n\nB()\n\n", false).unwrap();
        assert_eq!(out, "a()\nB()\nc()\n");
        assert_eq!(strategy, "trimmed-boundary");
        // A blank line that is in the file is kept in the match.
        let text = "a()\n\nb()\n";
        assert_eq!(ok(text, "\nb()", "\nB()"), "a()\n\nB()\n");
    }

    #[test]
    fn escaped_tabs_are_unescaped_only_when_needed() {
        let text = "\tif x {\n\t\tprint(\"a\\tb\")\n\t}\n";
        let old = "\\tif x {\n\\t\\tprint(\"a\\tb\")\n\\t}";
        let new = "\\tif x {\n\\t\\tprint(\"a\\tc\")\n\\t}";
        let (out, _) = apply(text, old, new, false).unwrap();
        assert_eq!(out, "\tif x {\n\t\tprint(\"a\\tc\")\n\t}\n");
        assert_eq!(
            unescape_tabs("\\t\\\\t x\\t", Unescape::Everywhere),
            "\t\\\\t x\t"
        );
    }

    #[test]
    fn every_escape_sequence_is_read_left_to_right() {
        assert_eq!(unescape_all(r#"a\nb\t\'\"\`\$\\n\q"#), "a\nb\t'\"`$\\n\\q");
        assert_eq!(unescape_all("x\\\ny"), "x\ny");
        let (out, _) = apply(
            "s = \"it's\"\n",
            r#"s = \"it\'s\""#,
            r#"s = \"it\'ll\""#,
            false,
        )
        .unwrap();
        assert_eq!(out, "s = \"it'll\"\n");
    }

    #[test]
    fn deleting_whole_lines_removes_their_break() {
        assert_eq!(ok("a\nb\nc\n", "b", ""), "a\nc\n");
        assert_eq!(ok("a\n  b\n  c\nd\n", "b\nc", ""), "a\nd\n");
        assert_eq!(ok("ab\n", "b", ""), "a\n");
    }

    #[test]
    fn equally_good_regions_are_refused_and_better_ones_win() {
        let text =
            "class A:\n    def f(self):\n        pass\nclass B:\n    def f(self):\n        pass\n";
        let err = apply(text, "def f(self):\n    pass", "x", false).unwrap_err();
        assert!(
            matches!(err, Refusal::Ambiguous { count: 2, .. }),
            "{err:?}"
        );
        let text = "    run()\n    stop()\n        run()\n        stop()\n";
        let (out, _) = apply(text, "    run()\n    stop() ", "    go()", false).unwrap();
        assert_eq!(out, "    go()\n        run()\n        stop()\n");
    }

    #[test]
    fn replace_all_reindents_each_occurrence() {
        let text = "if a:\n    x = 1\n    if b:\n        x = 1\n";
        let (out, _) = apply(text, "x = 1 ", "x = 2\ny = 3", true).unwrap();
        assert_eq!(
            out,
            "if a:\n    x = 2\n    y = 3\n    if b:\n        x = 2\n        y = 3\n"
        );
    }

    /// A deterministic generator (no dependency): strings over an alphabet full of the
    /// characters the cascade treats specially.
    struct Lcg(u64);

    impl Lcg {
        fn next(&mut self) -> u64 {
            self.0 = self
                .0
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            self.0 >> 33
        }

        fn text(&mut self, max: u64) -> String {
            const PIECES: &[&str] = &[
                "a", "b", "x = 1", " ", "  ", "    ", "\t", "\n", "\n", "\r\n", "\r", "\\t", "\\",
                "t", "\u{a0}", "\u{feff}", "é", "🎉", "{", "}", "fn f()", "\n\n",
            ];
            let len = self.next() % max;
            (0..len)
                .map(|_| PIECES[(self.next() % PIECES.len() as u64) as usize])
                .collect()
        }
    }

    #[test]
    fn random_inputs_never_panic_and_splices_stay_in_bounds() {
        let mut rng = Lcg(42);
        for round in 0..3000 {
            let text = rng.text(40);
            // Half the time old_string is a piece of the text, perturbed.
            let old = if round % 2 == 0 && !text.is_empty() {
                let a = (rng.next() as usize) % text.len();
                let b = a + (rng.next() as usize) % (text.len() - a + 1);
                let piece: String = text.get(a..b).unwrap_or("").to_string();
                piece.replace('\t', "    ").replace("    ", "\t")
            } else {
                rng.text(12)
            };
            let new = rng.text(12);
            let all = rng.next().is_multiple_of(3);
            if let Ok(edit) = run(&text, &old, &new, all) {
                let mut end = 0;
                for s in &edit.splices {
                    assert!(
                        s.range.start >= end && s.range.end <= text.len(),
                        "{text:?} {old:?}"
                    );
                    assert!(
                        text.is_char_boundary(s.range.start) && text.is_char_boundary(s.range.end)
                    );
                    end = s.range.end;
                }
            }
        }
    }
}
