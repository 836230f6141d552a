//! One problem a language server reports, in the form tinytool shows it: 1-based lines and
//! columns counted in characters (a server counts UTF-16 units), a severity, the code and
//! the message.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// How bad a problem is, worst first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// The code does not compile or type-check.
    Error,
    /// A likely mistake.
    Warning,
    /// Information.
    Information,
    /// A hint (unused names, deprecations).
    Hint,
}

impl Severity {
    /// The LSP `DiagnosticSeverity` number (a missing one is an error, as the protocol
    /// leaves it to the client and editors show it so).
    fn from_lsp(number: Option<u64>) -> Severity {
        match number {
            Some(2) => Severity::Warning,
            Some(3) => Severity::Information,
            Some(4) => Severity::Hint,
            _ => Severity::Error,
        }
    }

    /// The word shown in a problem line.
    pub fn word(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Information => "info",
            Severity::Hint => "hint",
        }
    }
}

/// One problem of one file.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Problem {
    /// 1-based line of its start.
    pub line: u32,
    /// 1-based column of its start, in characters.
    pub column: u32,
    /// 1-based line of its end.
    pub end_line: u32,
    /// 1-based column of its end, in characters.
    pub end_column: u32,
    /// How bad it is.
    pub severity: Severity,
    /// The server's code for it (`reportUndefinedVariable`, `2322`), when it gives one.
    pub code: Option<String>,
    /// What produced it (`Pylance`, `typescript`), when the server says.
    pub source: Option<String>,
    /// The message.
    pub message: String,
}

/// The longest message kept; a server that writes more is cut.
const MAX_MESSAGE: usize = 2000;

impl Problem {
    /// The problem line: `path:line:col: severity: message [code]`, the message on one line.
    pub fn line_for(&self, path: &str) -> String {
        let message = self
            .message
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        match &self.code {
            Some(code) => format!(
                "{path}:{}:{}: {}: {message} [{code}]",
                self.line,
                self.column,
                self.severity.word()
            ),
            None => format!(
                "{path}:{}:{}: {}: {message}",
                self.line,
                self.column,
                self.severity.word()
            ),
        }
    }

    /// An LSP `Diagnostic` of a document whose text is `text`; `None` when the value is not
    /// one. Each is decoded on its own, so one odd item does not cost the others.
    pub fn from_lsp(value: &Value, text: &str) -> Option<Problem> {
        let diagnostic: lsp_types::Diagnostic = serde_json::from_value(value.clone()).ok()?;
        let start = diagnostic.range.start;
        let end = diagnostic.range.end;
        let (line, column) = to_characters(text, start.line, start.character);
        let (end_line, end_column) = to_characters(text, end.line, end.character);
        let code = diagnostic.code.map(|code| match code {
            lsp_types::NumberOrString::Number(n) => n.to_string(),
            lsp_types::NumberOrString::String(s) => s,
        });
        Some(Problem {
            line,
            column,
            end_line,
            end_column,
            severity: Severity::from_lsp(
                diagnostic
                    .severity
                    .and_then(|s| serde_json::to_value(s).ok())
                    .and_then(|v| v.as_u64()),
            ),
            code,
            source: diagnostic.source,
            message: cut(diagnostic.message),
        })
    }

    /// A diagnostic of tsserver's own protocol (`semanticDiagnosticsSync` with
    /// `includeLinePosition`): 1-based `startLocation`/`endLocation` whose `offset` counts
    /// UTF-16 units, a `category` word and a numeric `code`.
    pub fn from_tsserver(value: &Value, text: &str) -> Option<Problem> {
        let position = |key: &str| -> Option<(u32, u32)> {
            let location = value.get(key)?;
            let line = location.get("line")?.as_u64()?;
            let offset = location.get("offset")?.as_u64()?;
            let line = u32::try_from(line.checked_sub(1)?).ok()?;
            let offset = u32::try_from(offset.checked_sub(1)?).ok()?;
            Some(to_characters(text, line, offset))
        };
        let (line, column) = position("startLocation")?;
        let (end_line, end_column) = position("endLocation").unwrap_or((line, column));
        let severity = match value.get("category").and_then(Value::as_str) {
            Some("error") => Severity::Error,
            Some("warning") => Severity::Warning,
            Some("suggestion") => Severity::Hint,
            _ => Severity::Information,
        };
        Some(Problem {
            line,
            column,
            end_line,
            end_column,
            severity,
            code: value.get("code").map(|c| match c {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            }),
            source: Some("typescript".to_string()),
            message: cut(value.get("message").and_then(Value::as_str)?.to_string()),
        })
    }
}

fn cut(mut message: String) -> String {
    if message.len() > MAX_MESSAGE {
        let mut end = MAX_MESSAGE;
        while !message.is_char_boundary(end) {
            end -= 1;
        }
        message.truncate(end);
        message.push('…');
    }
    message
}

/// A 0-based line and UTF-16 column in `text`, as 1-based line and character column. A
/// column past the end of its line is the line's end, a line past the end is kept.
fn to_characters(text: &str, line: u32, utf16_column: u32) -> (u32, u32) {
    let Some(content) = text.split('\n').nth(line as usize) else {
        return (line + 1, utf16_column + 1);
    };
    let mut units = 0u32;
    let mut characters = 0u32;
    for c in content.chars() {
        if units >= utf16_column {
            break;
        }
        units += c.len_utf16() as u32;
        characters += 1;
    }
    (line + 1, characters + 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn utf16_columns_become_character_columns() {
        let text = "a = 1\nx = \"😀é\" + y\n";
        // `y` is character 13 (1-based) of line 2; in UTF-16 units it is at 0-based 13.
        assert_eq!(to_characters(text, 1, 13), (2, 13));
        assert_eq!(to_characters(text, 0, 2), (1, 3));
        assert_eq!(to_characters(text, 0, 99), (1, 6));
        assert_eq!(to_characters(text, 9, 4), (10, 5));
    }

    #[test]
    fn lsp_and_tsserver_diagnostics_are_read_and_shown_alike() {
        let text = "print(undefined_name)\n";
        let lsp = Problem::from_lsp(
            &json!({"range": {"start": {"line": 0, "character": 6},
                               "end": {"line": 0, "character": 20}},
                    "severity": 1, "code": "reportUndefinedVariable", "source": "Pyright",
                    "message": "\"undefined_name\" is not defined"}),
            text,
        )
        .unwrap();
        assert_eq!(
            lsp.line_for("a.py"),
            "a.py:1:7: error: \"undefined_name\" is not defined [reportUndefinedVariable]"
        );
        let ts = Problem::from_tsserver(
            &json!({"message": "Type 'string' is not assignable\nto type 'number'.",
                    "category": "error", "code": 2322,
                    "startLocation": {"line": 1, "offset": 7},
                    "endLocation": {"line": 1, "offset": 8}}),
            "const x: number = \"s\";\n",
        )
        .unwrap();
        assert_eq!(
            ts.line_for("a.ts"),
            "a.ts:1:7: error: Type 'string' is not assignable to type 'number'. [2322]"
        );
        // Not a diagnostic: refused, not guessed.
        assert!(Problem::from_lsp(&json!({"message": "x"}), text).is_none());
    }
}
