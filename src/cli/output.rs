//! Writing results to standard output: one JSON line per result, or only the output text
//! with `--text`. A closed pipe (`tinytool grep ... | head`) ends the writing quietly and
//! counts as success.

use std::io::{ErrorKind, Write};

use serde_json::Value;

use crate::exit::ExitStatus;
use crate::media::Shape;
use crate::registry::CallResult;

/// Standard output in the chosen mode.
#[derive(Debug)]
pub struct Output {
    text_mode: bool,
    closed: bool,
}

impl Output {
    /// Standard output; `text_mode` prints only output texts.
    pub fn stdout(text_mode: bool) -> Self {
        Output {
            text_mode,
            closed: false,
        }
    }

    /// Whether only output texts are printed (`--text`).
    pub fn is_text(&self) -> bool {
        self.text_mode
    }

    /// Whether the reader went away (a broken pipe).
    pub fn is_closed(&self) -> bool {
        self.closed
    }

    /// Writes one call result and returns the status it stands for; images (its `content`)
    /// in MCP's neutral shape.
    pub fn result(&mut self, result: &CallResult) -> ExitStatus {
        self.result_in(result, Shape::Mcp)
    }

    /// Writes one call result with its images (`content`) in `shape`, and returns the
    /// status it stands for. `--text` prints the text alone, with a placeholder for each
    /// image.
    pub fn result_in(&mut self, result: &CallResult, shape: Shape) -> ExitStatus {
        let mut line = if self.text_mode {
            result.output.clone()
        } else {
            result.to_json_line_in(shape)
        };
        if !line.ends_with('\n') {
            line.push('\n');
        }
        match self.write(line.as_bytes()) {
            ExitStatus::Success => result.status,
            other => other,
        }
    }

    /// Writes a JSON value on one line.
    pub fn json(&mut self, value: &Value) -> ExitStatus {
        let mut line = value.to_string();
        line.push('\n');
        self.write(line.as_bytes())
    }

    /// Writes bytes as they are.
    pub fn raw(&mut self, bytes: &[u8]) -> ExitStatus {
        self.write(bytes)
    }

    fn write(&mut self, bytes: &[u8]) -> ExitStatus {
        if self.closed {
            return ExitStatus::Success;
        }
        let mut stdout = std::io::stdout().lock();
        match stdout.write_all(bytes).and_then(|()| stdout.flush()) {
            Ok(()) => ExitStatus::Success,
            Err(err) if err.kind() == ErrorKind::BrokenPipe => {
                self.closed = true;
                ExitStatus::Success
            }
            Err(err) => {
                let _ = writeln!(
                    std::io::stderr(),
                    "tinytool: cannot write to standard output: {err}"
                );
                ExitStatus::Usage
            }
        }
    }
}
