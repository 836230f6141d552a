//! `old_string` copied from `read`'s output with read's marks still in it.
//!
//! Two slips are repaired when the text as given is not in the file, each said in
//! `metadata.repairs`:
//! - every line carries read's line-number prefix (`12\t…`), the numbers consecutive: the
//!   prefixes are dropped (from `new_string` too when all of its lines carry one);
//! - a line ends in the mark of a line `read` cut (`... [N more characters on this line; …]`,
//!   or a bare `...` on the last line): it stands for the whole line of the file that
//!   starts with the shown text, when exactly one place has such a line with the other
//!   lines around it. A `new_string` line ending in the same mark gets the rest of the
//!   file's line back.

use super::lines::FileLines;

/// `old_string` and `new_string` with read's marks taken out, and what was done.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Repaired {
    /// The repaired `old_string`.
    pub old: String,
    /// The repaired `new_string`.
    pub new: String,
    /// One line per repair, for `metadata.repairs`.
    pub repairs: Vec<String>,
}

/// Repairs read's marks in `old`/`new` against `text` (module doc); `None` when there is
/// nothing to repair or the repair would be a guess.
pub fn repair(text: &str, old: &str, new: &str) -> Option<Repaired> {
    let mut old = old.to_string();
    let mut new = new.to_string();
    let mut repairs = Vec::new();
    if let Some((first, stripped)) = strip_numbers(&old, true) {
        let last = first + old.lines().count().saturating_sub(1);
        repairs.push(format!(
            "old_string: read's line numbers {first}-{last} removed from its lines"
        ));
        old = stripped;
        if let Some((_, stripped)) = strip_numbers(&new, false) {
            repairs.push("new_string: read's line numbers removed from its lines".to_string());
            new = stripped;
        }
    }
    if let Some((o, n, said)) = expand_cut_lines(text, &old, &new) {
        old = o;
        new = n;
        repairs.push(said);
    }
    (!repairs.is_empty()).then_some(Repaired { old, new, repairs })
}

/// The number of a line shown by `read` (`  12\t…`) and the text after the tab.
fn numbered(line: &str) -> Option<(usize, &str)> {
    let digits = line.trim_start_matches(' ');
    let count = digits.bytes().take_while(u8::is_ascii_digit).count();
    if count == 0 || digits.as_bytes().get(count) != Some(&b'\t') {
        return None;
    }
    Some((digits[..count].parse().ok()?, &digits[count + 1..]))
}

/// `s` without read's prefixes when every non-blank line has one; with `consecutive`, the
/// numbers must count up by one from line to line (a blank line may have lost its
/// number). Returns the first number and the text.
fn strip_numbers(s: &str, consecutive: bool) -> Option<(usize, String)> {
    let mut first = None;
    let mut out = Vec::new();
    for (k, line) in s.split('\n').enumerate() {
        if line.trim().is_empty() {
            out.push(String::new());
            continue;
        }
        let (number, rest) = numbered(line)?;
        let start = *first.get_or_insert(number.checked_sub(k)?);
        if consecutive && number != start + k {
            return None;
        }
        out.push(rest.to_string());
    }
    Some((first?, out.join("\n")))
}

/// The shown text of a line ending in read's cut mark, and the mark.
fn cut(line: &str, last: bool) -> Option<(&str, &str)> {
    if let Some(at) = line.rfind("... [")
        && line.ends_with(" goes on]")
        && line[at..].contains(" more characters on this line")
    {
        return Some((&line[..at], &line[at..]));
    }
    if last && let Some(shown) = line.strip_suffix("...") {
        return Some((shown, "..."));
    }
    None
}

/// `old` with each cut line replaced by the file's whole line, and `new` with the same mark
/// replaced by the rest of that line (module doc).
fn expand_cut_lines(text: &str, old: &str, new: &str) -> Option<(String, String, String)> {
    let old_lines: Vec<&str> = old.split('\n').collect();
    let count = old_lines.len();
    let marks: Vec<Option<(&str, &str)>> = old_lines
        .iter()
        .enumerate()
        .map(|(j, l)| {
            cut(
                l,
                j + 1 == count || (j + 2 == count && old_lines[j + 1].is_empty()),
            )
        })
        .collect();
    if marks.iter().all(Option::is_none) {
        return None;
    }
    let file = FileLines::new(text);
    let fits = |s: usize| {
        old_lines
            .iter()
            .zip(&marks)
            .enumerate()
            .all(|(j, (o, mark))| {
                let line = file.line(s + j);
                match mark {
                    Some((shown, _)) => {
                        let shown = shown.trim_start();
                        !shown.trim().is_empty()
                            && line.trim_start().starts_with(shown)
                            && line.trim_start().len() > shown.len()
                    }
                    None => line.trim() == o.trim(),
                }
            })
    };
    let lines_needed = if old_lines.last() == Some(&"") {
        count - 1
    } else {
        count
    };
    if lines_needed == 0 || lines_needed > file.len() {
        return None;
    }
    let mut places = (0..=file.len() - lines_needed).filter(|&s| fits(s));
    let (Some(start), None) = (places.next(), places.next()) else {
        return None;
    };
    let mut old_out = Vec::with_capacity(count);
    // For each cut line: its mark, the file's whole line and the part after what was shown.
    let mut rests: Vec<(&str, &str, &str)> = Vec::new();
    for (j, (o, mark)) in old_lines.iter().zip(&marks).enumerate() {
        match mark {
            Some((shown, mark)) => {
                let line = file.line(start + j);
                let skip = line.len() - line.trim_start().len() + shown.trim_start().len();
                rests.push((mark, line, &line[skip..]));
                old_out.push(line.to_string());
            }
            None => old_out.push(o.to_string()),
        }
    }
    let mut new_out = Vec::new();
    let mut used = 0;
    for line in new.split('\n') {
        let ends_in_mark = rests
            .iter()
            .position(|(mark, _, _)| *mark != "..." && line.ends_with(mark))
            .or_else(|| (line.ends_with("...") && used < rests.len()).then_some(used));
        match ends_in_mark {
            Some(k) => {
                let (mark, _, rest) = rests[k];
                new_out.push(format!("{}{rest}", &line[..line.len() - mark.len()]));
                used = k + 1;
            }
            None => new_out.push(line.to_string()),
        }
    }
    let said = format!(
        "old_string: {} line{} cut by read matched to the whole line{} of the file (line {})",
        rests.len(),
        if rests.len() == 1 { "" } else { "s" },
        if rests.len() == 1 { "" } else { "s" },
        start + marks.iter().position(Option::is_some).unwrap_or(0) + 1
    );
    Some((old_out.join("\n"), new_out.join("\n"), said))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn consecutive_read_prefixes_are_removed() {
        let r = repair("a\nb\nc\n", "  2\tb\n  3\tc", "2\tB\n3\tc").unwrap();
        assert_eq!(r.old, "b\nc");
        assert_eq!(r.new, "B\nc");
        assert_eq!(r.repairs.len(), 2);
        // A blank line that lost its number still counts.
        let r = repair("", "4\tx\n\n6\ty", "x").unwrap();
        assert_eq!(r.old, "x\n\ny");
        assert_eq!(r.new, "x", "new_string without prefixes is left alone");
    }

    #[test]
    fn numbers_that_do_not_count_up_are_data() {
        assert!(repair("", "1\ta\n5\tb", "x").is_none());
        assert!(repair("", "1\ta\nb", "x").is_none());
        assert!(repair("", "a\tb", "x").is_none());
    }

    #[test]
    fn a_cut_line_stands_for_the_whole_line() {
        let long = format!("data = [{}]", "1, ".repeat(900));
        let text = format!("x = 1\n{long}\ny = 2\n");
        let shown: String = long.chars().take(2000).collect();
        let mark = " more characters on this line; char_offset=2000 with offset=1 goes on]";
        let old = format!("x = 1\n{shown}... [{}{mark}", long.len() - 2000);
        let new = format!("x = 10\n{shown}... [{}{mark}", long.len() - 2000);
        let r = repair(&text, &old, &new).unwrap();
        assert_eq!(r.old, format!("x = 1\n{long}"));
        assert_eq!(r.new, format!("x = 10\n{long}"));
    }

    #[test]
    fn a_bare_ellipsis_on_the_last_line_matches_a_unique_prefix() {
        let text = "head\nconst config = { a: 1, b: 2, c: 3 };\ntail\n";
        let r = repair(
            text,
            "head\nconst config = { a: 1...",
            "head2\nconst config = { a: 1...",
        )
        .unwrap();
        assert_eq!(r.old, "head\nconst config = { a: 1, b: 2, c: 3 };");
        assert_eq!(r.new, "head2\nconst config = { a: 1, b: 2, c: 3 };");
        // Two lines start that way: no guess.
        let text = "head\nconst a = 1;\nhead\nconst a = 2;\n";
        assert!(repair(text, "head\nconst a...", "x").is_none());
    }
}
