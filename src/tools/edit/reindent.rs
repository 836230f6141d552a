//! Writing `new_string` into a region matched line by line ("Re-indent").
//!
//! A line strategy may match a region whose indentation differs from `old_string`'s: the
//! model shifted it, stripped it, or used spaces where the file has tabs. The replacement is
//! then built line by line:
//! - a `new_string` line that `old_string` also has, unchanged, at the corresponding place
//!   (found by a line diff of the two) is the file's own line, byte for byte: what the model
//!   did not mean to change does not change, trailing whitespace and all;
//! - any other line keeps its depth relative to `old_string`'s first non-blank line,
//!   measured in `old_string`'s indent unit (tab, 2 or 4 spaces), and is written at the
//!   region's base indentation in the file's own unit (tabs stay tabs); whitespace-only
//!   lines become empty. Two shortcuts come first, because they reproduce the file's own
//!   bytes (alignment spaces, odd styles): a line indented exactly like some line of
//!   `old_string` gets the indentation the file has for that line, and when the region is
//!   `old_string` with one indentation prefix swapped for another (a pure shift), the
//!   line gets the same swap.
//!
//! When every non-blank line of `old_string` has exactly the region's indentation, changed
//! lines are written as given.

use similar::{Algorithm, DiffOp};

use super::lines::{Block, FileLines, indent, is_blank};

/// An indentation unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// One tab per level.
    Tab,
    /// This many spaces per level.
    Spaces(usize),
}

impl Unit {
    /// One level of indentation.
    fn text(self) -> String {
        match self {
            Unit::Tab => "\t".to_string(),
            Unit::Spaces(n) => " ".repeat(n),
        }
    }

    fn width(self) -> usize {
        match self {
            Unit::Tab => 4,
            Unit::Spaces(n) => n.max(1),
        }
    }
}

/// An indentation measured in a unit: whole levels and the spaces left over (alignment).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Depth {
    /// Whole levels.
    pub levels: i64,
    /// Spaces beyond the levels.
    pub extra: i64,
}

/// Measures a line's indentation in `unit`.
pub fn measure(line: &str, unit: Unit) -> Depth {
    let ws = indent(line);
    match unit {
        Unit::Tab => {
            let tabs = ws.chars().filter(|&c| c == '\t').count() as i64;
            let spaces = ws.chars().filter(|&c| c == ' ').count() as i64;
            // Spaces standing in for tabs (a mixed line) count as levels of four.
            Depth {
                levels: tabs + spaces / 4,
                extra: spaces % 4,
            }
        }
        Unit::Spaces(n) => {
            let n = n.max(1) as i64;
            let width: i64 = ws.chars().map(|c| if c == '\t' { n } else { 1 }).sum();
            Depth {
                levels: width / n,
                extra: width % n,
            }
        }
    }
}

/// The unit the indentation of these line sequences is written in, when they say: a tab
/// when a non-blank line is indented with one, else the usual step between consecutive
/// indentation widths — 2 when steps of 2 (or 6) are at least half as common as steps of 4
/// (or 8), else 4. Odd steps and steps over 8 are alignment and say nothing.
pub fn detect_unit(sequences: &[Vec<&str>]) -> Option<Unit> {
    let (mut twos, mut fours) = (0usize, 0usize);
    for lines in sequences {
        let nonblank: Vec<&str> = lines.iter().copied().filter(|l| !is_blank(l)).collect();
        if nonblank.iter().any(|l| indent(l).contains('\t')) {
            return Some(Unit::Tab);
        }
        for pair in nonblank.windows(2) {
            match indent(pair[0]).len().abs_diff(indent(pair[1]).len()) {
                2 | 6 => twos += 1,
                4 | 8 => fours += 1,
                _ => {}
            }
        }
    }
    if twos == 0 && fours == 0 {
        None
    } else if twos > 0 && twos * 2 >= fours {
        Some(Unit::Spaces(2))
    } else {
        Some(Unit::Spaces(4))
    }
}

/// The file's unit where the region does not say: a tab when more indented lines start
/// with a tab than with a space, else the step of its space indentation, else 4 spaces.
pub fn file_unit(file: &FileLines) -> Unit {
    let mut tabs = 0usize;
    let mut spaces = 0usize;
    let mut sample: Vec<&str> = Vec::new();
    for i in 0..file.len() {
        let line = file.line(i);
        if is_blank(line) {
            continue;
        }
        match line.as_bytes().first() {
            Some(b'\t') => tabs += 1,
            Some(b' ') => spaces += 1,
            _ => {}
        }
        sample.push(line);
        if sample.len() >= 4000 {
            break;
        }
    }
    if tabs > spaces {
        return Unit::Tab;
    }
    detect_unit(&[sample]).unwrap_or(Unit::Spaces(4))
}

/// [`written`]'s text alone.
#[cfg(test)]
pub fn replacement(
    file: &FileLines,
    start: usize,
    old: &Block,
    new: &Block,
    fallback_unit: &dyn Fn() -> Unit,
) -> String {
    written(file, start, old, new, fallback_unit).0
}

/// What building a replacement did beyond writing `new_string` as given.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Writing {
    /// Lines of `new_string` written at another indentation than given (re-indented).
    pub reindented: usize,
    /// Lines `old_string` and `new_string` share, written as the file has them where that
    /// differs from how `new_string` has them (the file's indentation and spacing).
    pub kept_from_file: usize,
}

/// Builds the text that replaces the file's lines `start..start + old.len()`, which a line
/// strategy matched against `old` (module doc), and says what it did ([`Writing`]). The
/// result has `new`'s terminator.
pub fn written(
    file: &FileLines,
    start: usize,
    old: &Block,
    new: &Block,
    fallback_unit: &dyn Fn() -> Unit,
) -> (String, Writing) {
    let region: Vec<&str> = (start..start + old.len()).map(|i| file.line(i)).collect();
    let shifted = old
        .lines
        .iter()
        .zip(&region)
        .any(|(o, r)| !is_blank(o) && indent(o) != indent(r));
    let copies = unchanged_lines(old, new);
    let plan = shifted.then(|| Reindent::new(&region, old, new, fallback_unit));
    let mut out: Vec<String> = Vec::with_capacity(new.len());
    let mut writing = Writing::default();
    for (m, line) in new.lines.iter().enumerate() {
        if let Some(j) = copies[m] {
            if region[j] != line {
                writing.kept_from_file += 1;
            }
            out.push(region[j].to_string());
        } else if let Some(plan) = &plan {
            let shifted = plan.apply(line);
            if shifted != *line && !is_blank(line) {
                writing.reindented += 1;
            }
            out.push(shifted);
        } else {
            out.push(line.clone());
        }
    }
    let mut text = out.join("\n");
    if new.terminated {
        text.push('\n');
    }
    (text, writing)
}

/// For each line of `new`, the index of the line of `old` it repeats unchanged, found by a
/// line diff (so a line moved elsewhere does not count).
fn unchanged_lines(old: &Block, new: &Block) -> Vec<Option<usize>> {
    let mut map = vec![None; new.len()];
    let ops = similar::capture_diff_slices(Algorithm::Myers, &old.lines, &new.lines);
    for op in ops {
        if let DiffOp::Equal {
            old_index,
            new_index,
            len,
        } = op
        {
            for k in 0..len {
                map[new_index + k] = Some(old_index + k);
            }
        }
    }
    map
}

/// How changed lines are re-indented for one matched region.
struct Reindent {
    /// What each indentation of `old_string`'s non-blank lines is in the file (only those
    /// that always correspond to the same one): a new line indented like an old line gets
    /// the file's bytes for it.
    table: Vec<(String, String)>,
    /// When every non-blank line of the region is `old_string`'s with one leading prefix
    /// swapped for another (`.0` in old_string, `.1` in the file), new lines get the same
    /// swap: the exact bytes of the file's indentation, alignment included.
    shift: Option<(String, String)>,
    old_unit: Unit,
    file_unit: Unit,
    old_base: Depth,
    file_base: Depth,
    base_text: String,
}

impl Reindent {
    fn new(region: &[&str], old: &Block, new: &Block, fallback: &dyn Fn() -> Unit) -> Reindent {
        let first = old.first_nonblank().unwrap_or(0);
        let base_text = indent(region.get(first).copied().unwrap_or("")).to_string();
        let file_unit = if base_text.contains('\t') {
            Unit::Tab
        } else {
            detect_unit(&[region.to_vec()]).unwrap_or_else(fallback)
        };
        let old_lines: Vec<&str> = old.lines.iter().map(String::as_str).collect();
        let new_lines: Vec<&str> = new.lines.iter().map(String::as_str).collect();
        let old_unit = detect_unit(&[old_lines, new_lines]).unwrap_or(match file_unit {
            Unit::Spaces(n) => Unit::Spaces(n),
            Unit::Tab => Unit::Spaces(4),
        });
        let old_first = old.lines.get(first).map(String::as_str).unwrap_or("");
        Reindent {
            table: indent_table(region, old),
            shift: pure_shift(region, old),
            old_unit,
            file_unit,
            old_base: measure(old_first, old_unit),
            file_base: measure(&base_text, file_unit),
            base_text,
        }
    }

    fn apply(&self, line: &str) -> String {
        if is_blank(line) {
            return String::new();
        }
        let content = &line[indent(line).len()..];
        if let Some((_, to)) = self.table.iter().find(|(from, _)| from == indent(line)) {
            return format!("{to}{content}");
        }
        if let Some((from, to)) = &self.shift
            && let Some(rest) = indent(line).strip_prefix(from.as_str())
        {
            return format!("{to}{rest}{content}");
        }
        let depth = measure(line, self.old_unit);
        let delta = depth.levels - self.old_base.levels;
        let extra_delta = depth.extra - self.old_base.extra;
        if extra_delta == 0 && delta >= 0 {
            let unit = self.file_unit.text().repeat(delta as usize);
            return format!("{}{unit}{content}", self.base_text);
        }
        let levels = (self.file_base.levels + delta).max(0) as usize;
        let mut extra = (self.file_base.extra + extra_delta).max(0) as usize;
        let mut text = self.file_unit.text().repeat(levels);
        if self.file_unit == Unit::Tab && extra >= self.file_unit.width() {
            text.push_str(&"\t".repeat(extra / 4));
            extra %= 4;
        }
        text.push_str(&" ".repeat(extra));
        text.push_str(content);
        text
    }
}

/// The indentation of each non-blank line of `old` paired with its region line's, without
/// the indentations that correspond to different ones.
fn indent_table(region: &[&str], old: &Block) -> Vec<(String, String)> {
    let mut table: Vec<(String, String)> = Vec::new();
    let mut conflicts: Vec<String> = Vec::new();
    for (o, r) in old.lines.iter().zip(region) {
        if is_blank(o) {
            continue;
        }
        let (from, to) = (indent(o), indent(r));
        match table.iter().find(|(f, _)| f == from) {
            Some((_, t)) if t != to => conflicts.push(from.to_string()),
            Some(_) => {}
            None => table.push((from.to_string(), to.to_string())),
        }
    }
    table.retain(|(from, _)| !conflicts.contains(from));
    table
}

/// The prefix swap that turns every non-blank line's indentation in `old` into the region's
/// (see [`Reindent`]), when there is one.
fn pure_shift(region: &[&str], old: &Block) -> Option<(String, String)> {
    let first = old.first_nonblank()?;
    let (a, b) = (indent(&old.lines[first]), indent(region.get(first)?));
    // The longest common ending of the two indentations is the part both share.
    let common = a
        .chars()
        .rev()
        .zip(b.chars().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let from = &a[..a.len() - common];
    let to = &b[..b.len() - common];
    let consistent = old.lines.iter().zip(region).all(|(o, r)| {
        is_blank(o)
            || indent(o)
                .strip_prefix(from)
                .is_some_and(|rest| indent(r).strip_prefix(to) == Some(rest))
    });
    consistent.then(|| (from.to_string(), to.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rebuild(file: &str, start: usize, old: &str, new: &str) -> String {
        let lines = FileLines::new(file);
        replacement(
            &lines,
            start,
            &Block::parse(old),
            &Block::parse(new),
            &|| file_unit(&lines),
        )
    }

    #[test]
    fn units_are_detected_from_steps() {
        assert_eq!(
            detect_unit(&[vec!["a", "    b", "        c"]]),
            Some(Unit::Spaces(4))
        );
        assert_eq!(
            detect_unit(&[vec!["a", "  b", "    c"]]),
            Some(Unit::Spaces(2))
        );
        assert_eq!(detect_unit(&[vec!["a", "\tb"]]), Some(Unit::Tab));
        assert_eq!(detect_unit(&[vec!["  a", "  b"]]), None);
        assert_eq!(
            detect_unit(&[vec!["/**", " * doc", " */", "fn x() {", "    y", "}"]]),
            Some(Unit::Spaces(4)),
            "odd steps are alignment"
        );
    }

    #[test]
    fn a_shifted_block_is_written_at_the_regions_depth() {
        let file = "class A:\n    def f(self):\n        return 1\n";
        let out = rebuild(
            file,
            1,
            "def f(self):\n    return 1",
            "def f(self):\n    x = 2\n    return x",
        );
        assert_eq!(out, "    def f(self):\n        x = 2\n        return x");
    }

    #[test]
    fn spaces_become_tabs_in_a_tab_indented_file() {
        let file = "func main() {\n\tif ok {\n\t\trun()\n\t}\n}\n";
        let out = rebuild(
            file,
            1,
            "    if ok {\n        run()\n    }",
            "    if ok {\n        run()\n        stop()\n    }",
        );
        assert_eq!(out, "\tif ok {\n\t\trun()\n\t\tstop()\n\t}");
    }

    #[test]
    fn unchanged_lines_keep_the_files_bytes_and_blank_lines_are_emptied() {
        let file = "  a = 1   \n  b = 2\n";
        let out = rebuild(file, 0, "a = 1\nb = 2", "a = 1\n   \nb = 3\n");
        assert_eq!(out, "  a = 1   \n\n  b = 3\n");
    }

    #[test]
    fn two_space_models_write_into_four_space_files() {
        let file = "fn x() {\n    if a {\n        b();\n    }\n}\n";
        let out = rebuild(
            file,
            1,
            "if a {\n  b();\n}",
            "if a {\n  b();\n  if c {\n    d();\n  }\n}",
        );
        assert_eq!(
            out,
            "    if a {\n        b();\n        if c {\n            d();\n        }\n    }"
        );
    }

    #[test]
    fn a_pure_shift_keeps_alignment_bytes() {
        let file = "int f(void)\n     __attribute__((pure));\n";
        let out = rebuild(
            file,
            0,
            "  int f(void)\n       __attribute__((pure));",
            "  int f(void)\n       __attribute__((const));",
        );
        assert_eq!(out, "int f(void)\n     __attribute__((const));");
    }

    #[test]
    fn indentations_seen_in_old_string_map_to_the_files() {
        let file = "struct s\n  {\n    int a;\n    int b;\n  }\n";
        let out = rebuild(
            file,
            0,
            "struct s\n  {\n\tint a;\n\tint b;\n  }",
            "struct s\n  {\n\tint a;\n\tint c;\n  } x;",
        );
        assert_eq!(out, "struct s\n  {\n    int a;\n    int c;\n  } x;");
    }

    #[test]
    fn alignment_steps_do_not_make_a_two_space_unit() {
        let lines = vec![
            "        if x:",
            "            raise E(a,",
            "                              b)",
            "        y()",
        ];
        assert_eq!(detect_unit(&[lines]), Some(Unit::Spaces(4)));
    }

    #[test]
    fn dedents_below_the_first_line_are_measured_from_the_base() {
        let file = "\t\treturn x\n\t}\n";
        let out = rebuild(file, 0, "    return x\n}", "    return y\n}\n// end");
        assert_eq!(out, "\t\treturn y\n\t}\n\t// end");
    }
}
