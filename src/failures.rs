//! What a failing run's output says went wrong: the failure lines and blocks test runners
//! and compilers print, and their summary lines, found line by line as the output streams
//! (so a preview can show them wherever they are: mocha and pytest print the summary
//! before the details, TAP prints failures inline, all of which can fall in the middle a
//! head-and-tail preview leaves out).
//!
//! Recognised, at the start of a line (after its indentation):
//! - failures: pytest `FAILED ` (and `… FAILED [ 36%]`), its `___ name ___` sections and
//!   `E ` lines; unittest
//!   `FAIL: `/`ERROR: `; Python tracebacks; mocha's numbered failures (with their details
//!   after `N failing`);
//!   jest `●` and `FAIL `; TAP and node's test runner `not ok`; cargo `test … FAILED`,
//!   `thread '…' panicked at` and `---- name stdout ----`; go `--- FAIL:`, `x_test.go:N:`
//!   messages and `panic:`; unittest's verbose `… ... FAIL`;
//!   compilers `error:`/`error[E…]:`, `file:line:col: error` and `error TS…`; programs'
//!   `Error:`, `ERROR`, `FATAL`, `fatal:`, `Caused by:` and `SomeError: …`/`SomeException: …`;
//! - summaries: pytest's `=== … passed/failed … ===` and `short test summary info`,
//!   mocha `N passing/failing/pending`, jest `Tests:`/`Test Suites:`, cargo `test result:`,
//!   TAP `# tests/pass/fail N`, unittest `Ran N tests` and `FAILED (…)`, go `ok`/`FAIL`
//!   package lines.
//!
//! A block is its first line and the lines after it up to a blank line, the next
//! recognised line or its kind's length. What is kept is bounded by a byte budget; blocks
//! beyond it are only counted.

/// One failure block or summary line: its 0-based line index in the output and its lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Excerpt {
    /// Index of its first line.
    pub first: u64,
    /// Its lines, without line endings.
    pub lines: Vec<String>,
}

/// The failures and summaries of one output, as it streams.
#[derive(Debug, Clone, Default)]
pub struct Failures {
    excerpts: Vec<Excerpt>,
    bytes: usize,
    budget: usize,
    /// Blocks found that the budget had no room for.
    more: u64,
    /// The block being gathered: how many more lines it may take, and whether it is a
    /// traceback (which goes on while lines are indented, and takes the first one that
    /// is not).
    open: Option<(usize, bool)>,
    /// Whether mocha's `N failing` was seen (its numbered failures follow).
    mocha_failing: bool,
    /// Whether a test runner reported a failed test (not only a compiler error).
    failed_tests: bool,
}

/// Most bytes of one kept line.
const LINE_BYTES: usize = 500;

/// What a line is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A test runner's failure, starting a block of at most this many lines.
    Test(usize),
    /// A compiler's or program's error, starting a block of at most this many lines.
    Error(usize),
    /// A Python traceback.
    Traceback,
    /// A summary line.
    Summary,
}

impl Failures {
    /// Keeps at most `budget` bytes of excerpts.
    pub fn new(budget: usize) -> Failures {
        Failures {
            budget,
            ..Failures::default()
        }
    }

    /// Whether anything was found.
    pub fn found(&self) -> bool {
        !self.excerpts.is_empty() || self.more > 0
    }

    /// Whether a test runner reported a failed test.
    pub fn failed_tests(&self) -> bool {
        self.failed_tests
    }

    /// The excerpts kept, in output order.
    pub fn excerpts(&self) -> &[Excerpt] {
        &self.excerpts
    }

    /// Blocks found beyond the budget.
    pub fn more(&self) -> u64 {
        self.more
    }

    /// Whether `bytes` (many lines) may hold a line this module recognises: a quick scan
    /// that lets a caller skip lines it does not keep otherwise.
    pub fn might_hold(bytes: &[u8]) -> bool {
        const NEEDLES: [&[u8]; 14] = [
            b"not ok",
            b"FAIL",
            b"rror",
            b"panic",
            b"Traceback",
            b"failing",
            "●".as_bytes(),
            b"E  ",
            b"passed",
            b"passing",
            b"test result",
            b"# fail",
            b"Tests:",
            b"Ran ",
        ];
        NEEDLES
            .iter()
            .any(|needle| memchr::memmem::find(bytes, needle).is_some())
    }

    /// Looks at line `index` of the output.
    pub fn see(&mut self, index: u64, line: &[u8]) {
        let line = &line[..line.len().min(LINE_BYTES)];
        // No recognised line is without a letter (or `●`): numbers and rules go by fast.
        if self.open.is_none() && !line.iter().any(|b| b.is_ascii_alphabetic() || *b >= 0x80) {
            return;
        }
        let text = String::from_utf8_lossy(line);
        let text = text.trim_end_matches('\r');
        let mut kind = self.classify(text);
        let indented = text.starts_with([' ', '\t']);
        let in_traceback = matches!(self.open, Some((_, true)));
        if self.open.is_some() && (indented || in_traceback) && matches!(kind, Some(Kind::Error(_)))
        {
            // An error line inside a block (a TAP diagnostic's `error:`, the exception a
            // traceback ends with) is part of it.
            kind = None;
        }
        // A passing test ends the block before it.
        let trimmed = text.trim_start();
        let passed = ["ok ", "--- PASS", "=== RUN", "✔ ", "PASS "]
            .iter()
            .any(|p| trimmed.starts_with(p));
        if let Some((left, traceback)) = self.open {
            let continues =
                kind.is_none() && !passed && if traceback { true } else { !text.is_empty() };
            if continues && left > 0 {
                let last_of_traceback = traceback && !indented;
                self.extend(text);
                self.open = if last_of_traceback {
                    None
                } else {
                    Some((left - 1, traceback))
                };
                return;
            }
            self.open = None;
        }
        let Some(kind) = kind else { return };
        let (block, traceback) = match kind {
            Kind::Test(n) => {
                self.failed_tests = true;
                (n, false)
            }
            Kind::Error(n) => (n, false),
            Kind::Traceback => (25, true),
            Kind::Summary => (1, false),
        };
        if self.bytes + text.len() > self.budget {
            if kind != Kind::Summary {
                self.more += 1;
            }
            return;
        }
        self.bytes += text.len() + 1;
        self.excerpts.push(Excerpt {
            first: index,
            lines: vec![text.to_string()],
        });
        self.open = (block > 1).then_some((block - 1, traceback));
    }

    /// Takes what `other` found in a stream that follows this one's first `offset` lines.
    pub fn absorb(&mut self, other: Failures, offset: u64) {
        for excerpt in other.excerpts {
            let size: usize = excerpt.lines.iter().map(|l| l.len() + 1).sum();
            if self.bytes + size > self.budget {
                self.more += 1;
                continue;
            }
            self.bytes += size;
            self.excerpts.push(Excerpt {
                first: excerpt.first + offset,
                ..excerpt
            });
        }
        self.more += other.more;
        self.failed_tests |= other.failed_tests;
        self.mocha_failing |= other.mocha_failing;
    }

    fn extend(&mut self, text: &str) {
        if self.bytes + text.len() > self.budget {
            self.open = None;
            return;
        }
        if let Some(last) = self.excerpts.last_mut() {
            self.bytes += text.len() + 1;
            last.lines.push(text.to_string());
        }
    }

    fn classify(&mut self, text: &str) -> Option<Kind> {
        let line = text.trim_start();
        let starts = |p: &str| line.starts_with(p);
        if starts("not ok ") || starts("FAILED ") || starts("--- FAIL:") {
            return Some(Kind::Test(if starts("not ok ") { 16 } else { 8 }));
        }
        if starts("FAIL: ") || starts("ERROR: ") {
            return Some(Kind::Test(15));
        }
        if starts("● ") {
            return Some(Kind::Test(14));
        }
        if text.starts_with("FAIL ") || text.starts_with("FAIL\t") || text == "FAIL" {
            return Some(Kind::Summary);
        }
        if line.contains(" ... FAILED")
            || line.ends_with(" ... FAIL")
            || line.ends_with(" ... ERROR")
            || line.contains(" FAILED [")
        {
            return Some(Kind::Test(1));
        }
        if let Some((file, _)) = line.split_once(": ")
            && let Some((name, number)) = file.rsplit_once(':')
            && name.ends_with("_test.go")
            && number.bytes().all(|b| b.is_ascii_digit())
        {
            // go test's `x_test.go:7: message` under the failing test.
            return Some(Kind::Test(4));
        }
        if starts("thread '") && line.contains("' panicked at") {
            return Some(Kind::Test(8));
        }
        if starts("---- ") && line.ends_with(" stdout ----") {
            return Some(Kind::Test(10));
        }
        if text.starts_with("___") && text.ends_with("___") && text.len() > 8 {
            return Some(Kind::Test(15));
        }
        if text.starts_with("E   ") {
            return Some(Kind::Test(6));
        }
        if starts("Traceback (most recent call last)") {
            return Some(Kind::Traceback);
        }
        if starts("panic: ") {
            return Some(Kind::Error(10));
        }
        if is_numbered(line) && text.starts_with("  ") {
            // mocha: `  1) title` inline in the listing, then with its details after
            // `N failing`.
            return Some(Kind::Test(if self.mocha_failing { 10 } else { 1 }));
        }
        if starts("error[E") || starts("error: ") || starts("error TS") {
            return Some(Kind::Error(8));
        }
        if [
            "Error:",
            "ERROR",
            "FATAL",
            "Fatal",
            "fatal:",
            "Uncaught",
            "Caused by:",
        ]
        .iter()
        .any(|p| starts(p))
        {
            return Some(Kind::Error(6));
        }
        if let Some((word, _)) = line.split_once(": ")
            && !word.contains(' ')
            && (word.ends_with("Error") || word.ends_with("Exception"))
        {
            // `ValueError: bad`, `java.lang.IllegalStateException: x`.
            return Some(Kind::Error(6));
        }
        if let Some(at) = line.find(": error") {
            // `src/x.c:12:5: error: …`, `src/x.ts(3,1): error TS…`.
            if at < 200 && line[..at].contains(':') || line[..at].ends_with(')') {
                return Some(Kind::Error(6));
            }
        }
        if is_summary(line) {
            if let Some(count) = line
                .strip_suffix(" failing")
                .or_else(|| line.split_once(" failing").map(|(count, _)| count))
                && count.trim().parse::<u64>().is_ok_and(|n| n > 0)
            {
                self.mocha_failing = true;
                self.failed_tests = true;
            }
            return Some(Kind::Summary);
        }
        None
    }
}

/// `1) ` … `999) `: a numbered item.
fn is_numbered(line: &str) -> bool {
    let digits = line.bytes().take_while(u8::is_ascii_digit).count();
    digits > 0 && line[digits..].starts_with(") ")
}

/// Whether a line (without its indentation) is a runner's summary line.
fn is_summary(line: &str) -> bool {
    let counted = |words: &[&str]| {
        let digits = line.bytes().take_while(u8::is_ascii_digit).count();
        digits > 0
            && line[digits..]
                .strip_prefix(' ')
                .is_some_and(|rest| words.iter().any(|w| rest.starts_with(w)))
    };
    (line.starts_with('=')
        && line.ends_with('=')
        && ["passed", "failed", "error", "short test summary info"]
            .iter()
            .any(|w| line.contains(w)))
        || counted(&["passing", "failing", "pending"])
        || line.starts_with("Tests:")
        || line.starts_with("Test Suites:")
        || line.starts_with("test result: ")
        || [
            "# tests ",
            "# pass ",
            "# fail ",
            "# suites ",
            "# cancelled ",
        ]
        .iter()
        .any(|p| line.starts_with(p))
        || (line.starts_with("Ran ") && line.contains(" test"))
        || line.starts_with("FAILED (")
        || line.starts_with("ok  \t")
        || line.starts_with("error: could not compile")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(text: &str) -> Failures {
        let mut failures = Failures::new(10_000);
        for (i, line) in text.lines().enumerate() {
            failures.see(i as u64, line.as_bytes());
        }
        failures
    }

    fn firsts(failures: &Failures) -> Vec<(u64, String)> {
        failures
            .excerpts()
            .iter()
            .map(|e| (e.first, e.lines[0].clone()))
            .collect()
    }

    #[test]
    fn tap_failures_are_found_with_their_diagnostics() {
        let text =
            "ok 1 - a\nnot ok 2 - b\n  ---\n  error: 'x'\n  ...\nok 3 - c\n# tests 3\n# fail 1\n";
        let failures = found(text);
        assert!(failures.failed_tests());
        assert_eq!(
            firsts(&failures),
            [
                (1, "not ok 2 - b".to_string()),
                (6, "# tests 3".to_string()),
                (7, "# fail 1".to_string())
            ]
        );
        assert_eq!(failures.excerpts()[0].lines.len(), 4);
    }

    #[test]
    fn mocha_numbered_failures_take_their_details_after_failing() {
        let text = "  1) inline title\n    ✔ ok\n  12 passing (1s)\n  1 failing\n\n  1) suite\n       does x:\n     AssertionError: 1 == 2\n\n";
        let failures = found(text);
        let lines: Vec<String> = firsts(&failures).into_iter().map(|(_, l)| l).collect();
        assert_eq!(
            lines,
            [
                "  1) inline title",
                "  12 passing (1s)",
                "  1 failing",
                "  1) suite"
            ]
        );
        assert_eq!(failures.excerpts()[0].lines.len(), 1);
        assert_eq!(failures.excerpts()[3].lines.len(), 3);
    }

    #[test]
    fn a_traceback_ends_with_its_exception() {
        let text = "start\nTraceback (most recent call last):\n  File \"x.py\", line 1\n    boom()\nValueError: bad\nafter\n";
        let failures = found(text);
        assert_eq!(
            failures.excerpts()[0].lines,
            [
                "Traceback (most recent call last):",
                "  File \"x.py\", line 1",
                "    boom()",
                "ValueError: bad"
            ]
        );
        assert_eq!(failures.excerpts().len(), 1);
        assert!(!failures.failed_tests());
    }

    #[test]
    fn runners_and_compilers_are_recognised() {
        for (line, test) in [
            ("FAILED tests/test_x.py::test_y - assert 1 == 2", true),
            ("FAIL: test_z (mod.Case)", true),
            ("  ● Suite › does a thing", true),
            ("test tests::adds ... FAILED", true),
            ("thread 'main' panicked at src/lib.rs:3:5:", true),
            ("--- FAIL: TestX (0.00s)", true),
            ("error[E0308]: mismatched types", false),
            ("src/a.c:3:7: error: expected ';'", false),
            ("src/a.ts(3,1): error TS2304: Cannot find name 'x'.", false),
            (
                "Error: listen EADDRINUSE: address already in use :::3000",
                false,
            ),
            ("ValueError: invalid literal for int()", false),
            ("java.lang.IllegalStateException: closed", false),
        ] {
            let failures = found(line);
            assert_eq!(failures.excerpts().len(), 1, "{line}");
            assert_eq!(failures.failed_tests(), test, "{line}");
        }
        for line in [
            "test result: FAILED. 1 passed; 1 failed",
            "==== 1 failed, 3 passed in 0.1s ====",
            "Tests:       1 failed, 4 passed, 5 total",
            "Ran 4 tests in 0.001s",
        ] {
            assert_eq!(firsts(&found(line)).len(), 1, "{line}");
        }
        assert!(!found("all good\nerror handling works\n").found());
    }

    #[test]
    fn blocks_beyond_the_budget_are_counted() {
        let mut failures = Failures::new(40);
        for i in 0..10 {
            failures.see(i, format!("not ok {i} - something").as_bytes());
        }
        assert_eq!(failures.excerpts().len(), 1);
        assert_eq!(failures.more(), 9);
    }

    #[test]
    fn the_quick_scan_finds_what_the_lines_hold() {
        assert!(Failures::might_hold(b"1\n2\nnot ok 3\n"));
        assert!(!Failures::might_hold(b"1\n2\n3\n"));
    }
}
