//! Where a line's code ends and its comment begins, so that a fuzzy match may forgive a
//! slip inside a comment but never one in code.
//!
//! Language-agnostic on purpose: a comment starts at the first `#`, `//`, `/*`, `<!--` or
//! `-- ` outside a string literal, or a line is all comment when it starts with `*` (the
//! inside of a block comment). A `#` that opens a C preprocessor directive or a Rust
//! attribute (`#include`, `#[derive]`, `#!`) is code. When in doubt a line counts as code:
//! a comment taken for code only costs a refusal, code taken for a comment could cost a
//! wrong edit.

use super::lines::collapse;

/// Splits `line` into its code and its comment (`None` when it has none).
fn split(line: &str) -> (&str, Option<&str>) {
    let trimmed = line.trim_start();
    if trimmed.starts_with('*') && !trimmed.starts_with("*/") && !trimmed.starts_with("**") {
        return ("", Some(trimmed));
    }
    let mut quote: Option<char> = None;
    let mut escaped = false;
    let mut previous: Option<char> = None;
    for (i, c) in line.char_indices() {
        let before = previous.replace(c);
        if let Some(q) = quote {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == q {
                quote = None;
            }
            continue;
        }
        let rest = &line[i..];
        match c {
            '"' | '\'' | '`' => {
                // An apostrophe after a letter (`don't`) opens no string.
                let word_before = before.is_some_and(char::is_alphanumeric);
                if !(c == '\'' && word_before) {
                    quote = Some(c);
                }
            }
            '#' if !directive(rest) => return (&line[..i], Some(rest)),
            '/' if rest.starts_with("//") || rest.starts_with("/*") => {
                return (&line[..i], Some(rest));
            }
            '<' if rest.starts_with("<!--") => return (&line[..i], Some(rest)),
            '-' if rest.starts_with("-- ") => return (&line[..i], Some(rest)),
            _ => {}
        }
    }
    (line, None)
}

/// A `#` that is code: a preprocessor directive, an attribute, a shebang, or one glued to a
/// word (`r#"…"#`, `a#b`).
fn directive(rest: &str) -> bool {
    const DIRECTIVES: [&str; 12] = [
        "include", "define", "if", "ifdef", "ifndef", "endif", "else", "elif", "pragma", "undef",
        "error", "import",
    ];
    let after = &rest[1..];
    after.starts_with('[')
        || after.starts_with('!')
        || after.starts_with('"')
        || DIRECTIVES.iter().any(|d| {
            after.starts_with(d)
                && !after[d.len()..].starts_with(|c: char| c.is_alphanumeric() || c == '_')
        })
}

/// Whether a line has a comment.
pub fn has_comment(line: &str) -> bool {
    split(line).1.is_some()
}

/// Whether a line has code outside its comment.
pub fn has_code(line: &str) -> bool {
    !split(line).0.trim().is_empty()
}

/// Whether two lines differ in their code (not only in whitespace or inside a comment).
pub fn differs_in_code(a: &str, b: &str) -> bool {
    let (code_a, comment_a) = split(a);
    let (code_b, comment_b) = split(b);
    if collapse(code_a) != collapse(code_b) {
        return true;
    }
    // Equal code: the lines differ in their comments, which both must have.
    comment_a.is_none() != comment_b.is_none()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slip_inside_a_comment_is_not_a_code_difference() {
        assert!(!differs_in_code("x = 1  # the count", "x = 1  # teh count"));
        assert!(!differs_in_code(
            "    // returns the sum",
            "    // return the sum"
        ));
        assert!(!differs_in_code(" * Loads the file.", " * Load the file."));
        assert!(!differs_in_code("a = b; /* old */", "a = b; /* new */"));
        assert!(!differs_in_code("SELECT 1; -- one", "SELECT 1; -- uno"));
    }

    #[test]
    fn code_differences_count_wherever_they_are() {
        assert!(differs_in_code("timeout=30", "timeout=10"));
        assert!(differs_in_code("x = 1  # count", "x = 2  # count"));
        assert!(differs_in_code(
            "s = \"# not a comment\"",
            "s = \"# not a remark\""
        ));
        assert!(differs_in_code("url = 'http://a'", "url = 'http://b'"));
        assert!(differs_in_code("#include <a.h>", "#include <b.h>"));
        assert!(differs_in_code("#[derive(Debug)]", "#[derive(Clone)]"));
        assert!(differs_in_code("x = 1", "x = 1  # added"));
        assert!(differs_in_code("let s = r#\"a\"#;", "let s = r#\"b\"#;"));
    }

    #[test]
    fn apostrophes_in_words_open_no_string() {
        assert!(!differs_in_code(
            "don't(x)  # it's here",
            "don't(x)  # it is here"
        ));
    }
}
