//! What a call shows of the servers' answers: which problems the change introduced, which
//! were there before and which it fixed, as a compact note (one line per problem, errors
//! first, capped) and as `metadata.diagnostics`.

use std::collections::HashMap;

use serde_json::{Value, json};

use super::exchange::{Checked, FileProblems, Progress};
use super::problem::{Problem, Severity};

/// Problems per file kept in the metadata.
const MAX_METADATA_ITEMS: usize = 100;

/// What one language's server said about a call's files.
#[derive(Debug)]
pub enum Outcome {
    /// No server runs for it (not installed, turned off).
    Unavailable(String),
    /// The policy does not allow its command.
    Refused(String),
    /// The broker could not be reached or started.
    Failed(String),
    /// The broker answered.
    Checked(Checked),
}

/// One language's part of a result.
#[derive(Debug)]
pub struct Part {
    /// The language.
    pub language: String,
    /// The server's name.
    pub server: String,
    /// What came of it.
    pub outcome: Outcome,
    /// Per asked file: its text before the change, `Some(None)` when the change created
    /// it, `None` when there is nothing to compare with (the diagnostics tool).
    pub befores: Vec<Option<Option<String>>>,
}

/// The diagnostics of one call.
#[derive(Debug, Default)]
pub struct Report {
    /// One per language touched.
    pub parts: Vec<Part>,
    /// Warnings are shown besides errors.
    pub warnings: bool,
    /// Problem lines shown at most.
    pub max_lines: usize,
}

/// One problem as shown, with whether the change introduced it.
struct Shown<'a> {
    path: String,
    problem: &'a Problem,
    /// `Some(true)`: new; `Some(false)`: already there; `None`: unknown or not compared.
    new: Option<bool>,
}

#[derive(Default)]
struct Counts {
    introduced: usize,
    already: usize,
    unknown: usize,
    fixed: usize,
}

impl Report {
    fn shown(&self, problem: &Problem) -> bool {
        problem.severity == Severity::Error
            || (self.warnings && problem.severity == Severity::Warning)
    }

    fn noun(&self, count: usize) -> String {
        let word = if self.warnings { "problem" } else { "error" };
        if count == 1 {
            format!("1 {word}")
        } else {
            format!("{count} {word}s")
        }
    }

    /// Compares one file's problems with its baseline.
    fn compare<'a>(
        &self,
        display: &dyn Fn(&str) -> String,
        file: &'a FileProblems,
        before_text: Option<&Option<String>>,
        counts: &mut Counts,
        lines: &mut Vec<Shown<'a>>,
    ) {
        let Some(items) = &file.items else {
            return;
        };
        let now: Vec<&Problem> = items.iter().filter(|p| self.shown(p)).collect();
        let path = display(&file.path);
        let baseline: Option<Vec<&Problem>> = match before_text {
            // Created by the change: everything is new.
            Some(None) => Some(Vec::new()),
            Some(Some(_)) => file
                .before
                .as_ref()
                .map(|b| b.iter().filter(|p| self.shown(p)).collect()),
            None => None,
        };
        let Some(baseline) = baseline else {
            for problem in now {
                counts.unknown += 1;
                lines.push(Shown {
                    path: path.clone(),
                    problem,
                    new: None,
                });
            }
            return;
        };
        let old_text = before_text.and_then(|t| t.as_deref()).unwrap_or("");
        let new_text = file.text.as_deref().unwrap_or("");
        let new_flags = match_problems(&baseline, &now, old_text, new_text);
        let matched = new_flags.iter().filter(|new| !**new).count();
        counts.fixed += baseline.len().saturating_sub(matched);
        for (problem, new) in now.into_iter().zip(new_flags) {
            if new {
                counts.introduced += 1;
            } else {
                counts.already += 1;
            }
            lines.push(Shown {
                path: path.clone(),
                problem,
                new: Some(new),
            });
        }
    }

    /// The note appended to the tool's output (`""` when there is nothing to say, else
    /// text starting with a newline), and `metadata.diagnostics` (`None` likewise).
    pub fn render(&self, display: &dyn Fn(&str) -> String) -> (String, Option<Value>) {
        let mut note = String::new();
        let mut servers = Vec::new();
        let mut lines: Vec<Shown> = Vec::new();
        let mut other_lines: Vec<Shown> = Vec::new();
        let mut totals = Counts::default();
        let mut elsewhere = Counts::default();
        let mut compared = false;
        let mut metadata_files = Vec::new();
        let mut metadata_others = Vec::new();
        for part in &self.parts {
            let mut entry = json!({"language": part.language, "server": part.server});
            match &part.outcome {
                Outcome::Unavailable(why) => {
                    entry["state"] = json!("unavailable");
                    entry["message"] = json!(why);
                }
                Outcome::Refused(why) => {
                    entry["state"] = json!("refused");
                    entry["message"] = json!(why);
                    note.push_str(&format!("\nDiagnostics not run ({}): {why}", part.server));
                }
                Outcome::Failed(why) => {
                    entry["state"] = json!("failed");
                    entry["message"] = json!(why);
                    note.push_str(&format!("\nDiagnostics ({}): {why}", part.server));
                }
                Outcome::Checked(checked) => {
                    entry["state"] = json!(match checked.progress {
                        Progress::Fresh => "fresh",
                        Progress::Busy => "busy",
                        Progress::Down => "down",
                    });
                    entry["elapsed_ms"] = json!(checked.elapsed_ms);
                    if let Some(pid) = checked.pid {
                        entry["pid"] = json!(pid);
                    }
                    if let Some(message) = &checked.message {
                        entry["message"] = json!(message);
                    }
                    let mut counts = Counts::default();
                    let start = lines.len();
                    for (index, file) in checked.files.iter().enumerate() {
                        let before = part.befores.get(index).and_then(Option::as_ref);
                        compared |= before.is_some();
                        self.compare(display, file, before, &mut counts, &mut lines);
                    }
                    for file in &checked.files {
                        metadata_files.push(file_metadata(display, file, &lines[start..]));
                    }
                    let other_start = other_lines.len();
                    let mut other_counts = Counts::default();
                    for other in &checked.others {
                        // The text did not change: matched line for line.
                        let before = Some(other.text.clone().unwrap_or_default());
                        self.compare(
                            display,
                            other,
                            Some(&before),
                            &mut other_counts,
                            &mut other_lines,
                        );
                    }
                    other_lines.retain(|s| s.new != Some(false));
                    elsewhere.introduced += other_counts.introduced + other_counts.unknown;
                    elsewhere.fixed += other_counts.fixed;
                    for other in &checked.others {
                        metadata_others.push(file_metadata(
                            display,
                            other,
                            &other_lines[other_start.min(other_lines.len())..],
                        ));
                    }
                    let unchecked = checked.files.iter().filter(|f| f.items.is_none()).count();
                    note.push_str(&self.summary(part, checked, &counts, unchecked));
                    totals.introduced += counts.introduced;
                    totals.already += counts.already;
                    totals.unknown += counts.unknown;
                    totals.fixed += counts.fixed;
                }
            }
            servers.push(entry);
        }
        // Nothing to say when no language had a server: an edit in a project without one
        // stays as it was (the diagnostics tool and `lsp status` say why).
        if self
            .parts
            .iter()
            .all(|p| matches!(p.outcome, Outcome::Unavailable(_)))
        {
            return (String::new(), None);
        }
        let rank = |s: &Shown| (s.problem.severity, s.new != Some(true));
        lines.sort_by(|a, b| {
            rank(a)
                .cmp(&rank(b))
                .then_with(|| a.path.cmp(&b.path))
                .then_with(|| {
                    (a.problem.line, a.problem.column).cmp(&(b.problem.line, b.problem.column))
                })
        });
        let total = lines.len() + other_lines.len();
        let mut shown = 0;
        for line in &lines {
            if shown == self.max_lines {
                break;
            }
            note.push('\n');
            note.push_str(&line.problem.line_for(&line.path));
            if line.new == Some(false) {
                note.push_str(" (already there)");
            }
            shown += 1;
        }
        if elsewhere.introduced + elsewhere.fixed > 0 && shown < self.max_lines {
            let mut said = Vec::new();
            if elsewhere.introduced > 0 {
                let noun = self.noun(elsewhere.introduced);
                // "1 error" → "1 new error".
                said.push(noun.replacen(' ', " new ", 1));
            }
            if elsewhere.fixed > 0 {
                said.push(format!("{} fixed", self.noun(elsewhere.fixed)));
            }
            note.push_str(&format!(
                "\nIn other open files, after this change: {}",
                said.join(", ")
            ));
            for line in &other_lines {
                if shown == self.max_lines {
                    break;
                }
                note.push('\n');
                note.push_str(&line.problem.line_for(&line.path));
                shown += 1;
            }
        }
        if total > shown {
            note.push_str(&format!(
                "\n… {} more (`tinytool diagnostics PATH` lists a file's problems)",
                total - shown
            ));
        }
        let mut metadata = json!({
            "remaining": totals.introduced + totals.already + totals.unknown,
            "files": metadata_files,
            "others": metadata_others,
            "servers": servers,
        });
        if elsewhere.introduced + elsewhere.fixed > 0 {
            metadata["others_introduced"] = json!(elsewhere.introduced);
            metadata["others_fixed"] = json!(elsewhere.fixed);
        }
        if compared {
            metadata["introduced"] = json!(totals.introduced);
            metadata["fixed"] = json!(totals.fixed);
            metadata["already_there"] = json!(totals.already);
        }
        if total > shown {
            metadata["lines_not_shown"] = json!(total - shown);
        }
        (note, Some(metadata))
    }

    /// The summary line of one language.
    fn summary(&self, part: &Part, checked: &Checked, counts: &Counts, unchecked: usize) -> String {
        let head = format!("\nDiagnostics ({}): ", part.server);
        match checked.progress {
            Progress::Down => {
                return format!(
                    "{head}{}",
                    checked
                        .message
                        .as_deref()
                        .unwrap_or("the server is not running")
                );
            }
            Progress::Busy if unchecked == checked.files.len() => {
                return format!(
                    "{head}{}; the next change or `tinytool diagnostics` reports what it finds",
                    checked.message.as_deref().unwrap_or("the server is busy")
                );
            }
            _ => {}
        }
        let remaining = counts.introduced + counts.already + counts.unknown;
        let compared = part.befores.iter().any(Option::is_some);
        let mut text = if compared && counts.unknown > 0 {
            format!(
                "{} (the text before the change could not be checked in time, so which are \
                 new is not known)",
                self.noun(remaining)
            )
        } else if !compared {
            if remaining == 0 {
                format!("no {}s", if self.warnings { "problem" } else { "error" })
            } else {
                self.noun(remaining)
            }
        } else if remaining == 0 && counts.fixed == 0 {
            format!("no {}s", if self.warnings { "problem" } else { "error" })
        } else if remaining == 0 {
            format!("{} fixed, 0 remaining", self.noun(counts.fixed))
        } else {
            let fixed = if counts.fixed > 0 {
                format!("{} fixed, ", self.noun(counts.fixed))
            } else {
                String::new()
            };
            format!(
                "{fixed}{} remaining: {} introduced by this change, {} already there",
                if counts.fixed > 0 {
                    remaining.to_string()
                } else {
                    self.noun(remaining)
                },
                counts.introduced,
                counts.already
            )
        };
        if unchecked > 0 {
            text.push_str(&format!(
                "; {unchecked} file(s) not checked yet ({})",
                checked.message.as_deref().unwrap_or("the server is busy")
            ));
        }
        format!("{head}{text}")
    }
}

fn file_metadata(display: &dyn Fn(&str) -> String, file: &FileProblems, shown: &[Shown]) -> Value {
    let path = display(&file.path);
    let Some(items) = &file.items else {
        return json!({"path": path, "checked": false});
    };
    let novelty: HashMap<*const Problem, Option<bool>> = shown
        .iter()
        .filter(|s| s.path == path)
        .map(|s| (s.problem as *const Problem, s.new))
        .collect();
    let listed: Vec<Value> = items
        .iter()
        .take(MAX_METADATA_ITEMS)
        .map(|p| {
            let mut item = json!({
                "line": p.line, "column": p.column,
                "end_line": p.end_line, "end_column": p.end_column,
                "severity": p.severity, "code": p.code, "source": p.source,
                "message": p.message,
            });
            if let Some(Some(new)) = novelty.get(&(p as *const Problem)) {
                item["new"] = json!(new);
            }
            item
        })
        .collect();
    let mut value = json!({"path": path, "checked": true, "items": listed});
    if items.len() > MAX_METADATA_ITEMS {
        value["items_not_listed"] = json!(items.len() - MAX_METADATA_ITEMS);
    }
    value
}

/// For each problem of `now`, whether it is new: not matched by a problem of `before`
/// with the same severity, code and message — at the line the old line moved to, else
/// anywhere (a problem the change moved is not new).
fn match_problems(
    before: &[&Problem],
    now: &[&Problem],
    old_text: &str,
    new_text: &str,
) -> Vec<bool> {
    let moved = line_map(old_text, new_text);
    let mut used = vec![false; before.len()];
    let mut new = vec![true; now.len()];
    let same = |a: &Problem, b: &Problem| {
        a.severity == b.severity && a.code == b.code && a.message == b.message
    };
    for (i, problem) in now.iter().enumerate() {
        if let Some(j) = before.iter().enumerate().position(|(j, old)| {
            !used[j] && same(old, problem) && moved.get(&old.line) == Some(&problem.line)
        }) {
            used[j] = true;
            new[i] = false;
        }
    }
    for (i, problem) in now.iter().enumerate() {
        if !new[i] {
            continue;
        }
        if let Some(j) = before
            .iter()
            .enumerate()
            .position(|(j, old)| !used[j] && same(old, problem))
        {
            used[j] = true;
            new[i] = false;
        }
    }
    new
}

/// Where each unchanged old line (1-based) is in the new text.
fn line_map(old_text: &str, new_text: &str) -> HashMap<u32, u32> {
    let diff = similar::TextDiff::from_lines(old_text, new_text);
    let mut map = HashMap::new();
    for op in diff.ops() {
        if let similar::DiffOp::Equal {
            old_index,
            new_index,
            len,
        } = *op
        {
            for k in 0..len {
                map.insert((old_index + k + 1) as u32, (new_index + k + 1) as u32);
            }
        }
    }
    map
}

#[cfg(test)]
mod tests {
    use super::*;

    fn problem(line: u32, message: &str) -> Problem {
        Problem {
            line,
            column: 1,
            end_line: line,
            end_column: 2,
            severity: Severity::Error,
            code: Some("c".into()),
            source: None,
            message: message.into(),
        }
    }

    #[test]
    fn a_problem_the_change_moved_is_not_new_and_a_repeat_of_it_is() {
        let old = "a\nb\nbad()\n";
        let new = "inserted\na\nb\nbad()\nbad()\n";
        let before = [problem(3, "bad")];
        let now = [problem(4, "bad"), problem(5, "bad")];
        let flags = match_problems(
            &before.iter().collect::<Vec<_>>(),
            &now.iter().collect::<Vec<_>>(),
            old,
            new,
        );
        assert_eq!(flags, [false, true]);
    }

    fn checked(items: Vec<Problem>, before: Option<Vec<Problem>>) -> Checked {
        Checked {
            progress: Progress::Fresh,
            message: None,
            pid: Some(7),
            elapsed_ms: 5,
            files: vec![FileProblems {
                path: "/p/a.py".into(),
                items: Some(items),
                before,
                text: Some("x\n".into()),
            }],
            others: Vec::new(),
        }
    }

    fn render(checked: Checked, before: Option<Option<String>>) -> (String, Value) {
        let report = Report {
            parts: vec![Part {
                language: "python".into(),
                server: "pyright".into(),
                outcome: Outcome::Checked(checked),
                befores: vec![before],
            }],
            warnings: false,
            max_lines: 20,
        };
        let (note, metadata) = report.render(&|p: &str| p.trim_start_matches("/p/").to_string());
        (note, metadata.unwrap())
    }

    #[test]
    fn fixes_introductions_and_what_was_there_are_told_apart() {
        let (note, metadata) = render(
            checked(Vec::new(), Some(vec![problem(1, "a"), problem(1, "b")])),
            Some(Some("x\n".into())),
        );
        assert_eq!(note, "\nDiagnostics (pyright): 2 errors fixed, 0 remaining");
        assert_eq!(metadata["fixed"], 2);
        let (note, metadata) = render(
            checked(
                vec![problem(1, "a"), problem(1, "n")],
                Some(vec![problem(1, "a")]),
            ),
            Some(Some("x\n".into())),
        );
        assert_eq!(
            note,
            "\nDiagnostics (pyright): 2 errors remaining: 1 introduced by this change, 1 already \
             there\na.py:1:1: error: n [c]\na.py:1:1: error: a [c] (already there)"
        );
        assert_eq!(metadata["files"][0]["items"][1]["new"], true);
        // Created by the change: all new.
        let (note, _) = render(checked(vec![problem(1, "a")], None), Some(None));
        assert!(note.contains("1 error remaining: 1 introduced"), "{note}");
        // The baseline could not be checked: never claimed as introduced.
        let (note, metadata) = render(
            checked(vec![problem(1, "a")], None),
            Some(Some("y\n".into())),
        );
        assert!(note.contains("which are new is not known"), "{note}");
        assert_eq!(metadata["introduced"], 0);
    }
}
