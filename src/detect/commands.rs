//! A command line split into the simple commands `shell` policy rules judge one by one:
//! the same lexer and parser split as the detectors use, so lists,
//! pipelines, subshells, compound commands, `$(…)` and code handed to `sh -c`/`eval`
//! give one [`Command`] each.
//!
//! A command's [`Command::text`] is its words as written re-joined with single spaces
//! (wrappers kept: `sudo rm x`); [`Command::normalized`] drops wrappers (`sudo`,
//! `env VAR=…`, `timeout N`, `nice`, `nohup`, `command`, `exec`, `xargs`, …), leading
//! assignments and git's global options (`-C X`, `-c k=v`, `--no-pager`, …), for deny and
//! ask rules. [`Command::span`] is its byte range in the line when the command is
//! written there literally (not for code inside a quoted `sh -c` argument), and
//! [`Command::op`] the operator joining it to the next (`;`, `&&`, `|`, …).
//!
//! [`split`] returns `None` for a line it cannot parse within the bounds
//! ([`super::too_complex`]) or with no command: such a line is judged whole.

use std::ops::Range;

use super::args::command_name;
use super::lex::{self, Op, Part, Token};
use super::runs::{self, Inner, Lang};

/// One simple command of a line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Command {
    /// Its words as written, joined with single spaces.
    pub text: String,
    /// The command with wrappers, assignments and git global options dropped.
    pub normalized: String,
    /// Its byte range in the line, when it stands there literally.
    pub span: Option<Range<usize>>,
    /// The operator after it (`;`, `&`, `&&`, `||`, `|`, `|&`, newline as `\n`).
    pub op: Option<String>,
}

/// Words that open or close compound commands, or prefix a pipeline, where a command
/// name could stand: not part of the command after them.
const RESERVED: &[&str] = &[
    "if", "then", "elif", "else", "fi", "do", "done", "while", "until", "{", "}", "!", "time",
    "esac", "in",
];

/// How deep code inside code is split.
const MAX_DEPTH: usize = 8;

/// The simple commands of a line, in order; `None` when it cannot be parsed.
pub fn split(line: &str) -> Option<Vec<Command>> {
    let mut out = Vec::new();
    if !split_into(line, 0, 0, &mut out) || out.is_empty() {
        return None;
    }
    Some(out)
}

fn split_into(code: &str, base: usize, depth: usize, out: &mut Vec<Command>) -> bool {
    if depth > MAX_DEPTH || super::too_complex(code) {
        return false;
    }
    let lexed = lex::lex(code);
    let mut words: Vec<(String, Range<usize>)> = Vec::new();
    let mut inner: Vec<String> = Vec::new();
    let mut case_patterns = false;
    let finish = |words: &mut Vec<(String, Range<usize>)>,
                  op: Option<&str>,
                  out: &mut Vec<Command>,
                  inner: &mut Vec<String>|
     -> bool {
        // Reserved words before the command name are not part of it.
        while words
            .first()
            .is_some_and(|(w, _)| RESERVED.contains(&w.as_str()))
        {
            words.remove(0);
        }
        if let (Some(first), Some(last)) = (words.first(), words.last()) {
            let texts: Vec<String> = words.iter().map(|(w, _)| w.clone()).collect();
            out.push(Command {
                text: texts.join(" "),
                normalized: normalize(&texts).join(" "),
                span: Some(base + first.1.start..base + last.1.end),
                op: op.map(str::to_string),
            });
        }
        words.clear();
        let mut ok = true;
        for code in inner.drain(..) {
            ok &= split_nested(&code, depth, out);
        }
        ok
    };
    let mut ok = true;
    for (token, span) in lexed.tokens.iter().zip(&lexed.spans) {
        let raw = code[span.clone()].trim().to_string();
        match token {
            Token::Word(word) => {
                if case_patterns {
                    if raw == "esac" {
                        case_patterns = false;
                    }
                    continue;
                }
                if words.is_empty() && raw == "case" {
                    // `case WORD in PATTERN)`: patterns are not commands.
                    case_patterns = true;
                    continue;
                }
                collect_subs(&word.parts, &mut inner);
                words.push((raw, span.clone()));
            }
            Token::Redir(redir) => {
                collect_subs(&redir.target.parts, &mut inner);
                if let Some(doc) = redir.heredoc.and_then(|k| lexed.heredocs.get(k))
                    && !doc.quoted
                {
                    for part in lex::double_quoted_parts(&doc.body) {
                        if let Part::Sub { code, .. } = part {
                            inner.push(code);
                        }
                    }
                }
                words.push((raw, span.clone()));
            }
            Token::Op(op) => {
                if case_patterns {
                    continue;
                }
                let shown = match op {
                    Op::Semi => ";",
                    Op::Amp => "&",
                    Op::And => "&&",
                    Op::Or => "||",
                    Op::Pipe => "|",
                    Op::PipeAll => "|&",
                    Op::Newline => "\n",
                    Op::CaseEnd => ";;",
                    Op::LParen => "(",
                    Op::RParen => ")",
                };
                // Code handed on by this command (`sh -c`, `eval`) is split too.
                let argv: Vec<String> = words.iter().map(|(w, _)| unquote(w)).collect();
                inner.extend(handed_on(&argv));
                ok &= finish(&mut words, Some(shown), out, &mut inner);
            }
        }
    }
    let argv: Vec<String> = words.iter().map(|(w, _)| unquote(w)).collect();
    inner.extend(handed_on(&argv));
    ok &= finish(&mut words, None, out, &mut inner);
    ok
}

/// Splits code found inside a command (a substitution, a `sh -c` argument): its commands
/// carry no span in the outer line.
fn split_nested(code: &str, depth: usize, out: &mut Vec<Command>) -> bool {
    let mut nested = Vec::new();
    let ok = split_into(code, 0, depth + 1, &mut nested);
    out.extend(nested.into_iter().map(|c| Command { span: None, ..c }));
    ok
}

fn collect_subs(parts: &[Part], inner: &mut Vec<String>) {
    for part in parts {
        if let Part::Sub { code, .. } = part {
            inner.push(code.clone());
        }
    }
}

/// A word as written with its quotes removed (for reading what a command hands on).
fn unquote(raw: &str) -> String {
    let lexed = lex::lex(raw);
    match lexed.tokens.first() {
        Some(Token::Word(w)) => w.literal().unwrap_or_else(|| raw.to_string()),
        _ => raw.to_string(),
    }
}

/// Shell code a command runs (`sh -c CODE`, `eval …`), through its wrappers.
fn handed_on(argv: &[String]) -> Vec<String> {
    let mut codes = Vec::new();
    let mut todo = vec![argv.to_vec()];
    let mut steps = 0;
    while let Some(argv) = todo.pop() {
        steps += 1;
        if steps > 32 {
            break;
        }
        for inner in runs::inners(&argv) {
            match inner {
                Inner::Argv(next) => todo.push(next),
                Inner::Code(Lang::Shell, code) => codes.push(code),
                _ => {}
            }
        }
    }
    codes
}

/// Wrappers dropped from the normalised form.
const WRAPPERS: &[&str] = &[
    "sudo", "doas", "env", "timeout", "nice", "ionice", "nohup", "command", "exec", "xargs",
    "stdbuf", "setsid", "time", "builtin",
];

/// A command without its wrappers, leading assignments and git global options.
pub fn normalize(words: &[String]) -> Vec<String> {
    let mut current: Vec<String> = words.to_vec();
    for _ in 0..16 {
        while current.first().is_some_and(|w| runs::is_assignment(w)) {
            current.remove(0);
        }
        let Some(first) = current.first() else { break };
        if !WRAPPERS.contains(&command_name(first)) {
            break;
        }
        let unquoted: Vec<String> = current.iter().map(|w| unquote(w)).collect();
        let next = runs::inners(&unquoted).into_iter().find_map(|i| match i {
            Inner::Argv(next) => Some(next),
            _ => None,
        });
        match next {
            // Keep the inner words as written: they are the tail of `current`.
            Some(next) if next.len() < current.len() => {
                current = current[current.len() - next.len()..].to_vec();
            }
            _ => break,
        }
    }
    if current.first().is_some_and(|w| command_name(w) == "git") {
        let mut i = 1;
        while i < current.len() {
            let w = current[i].as_str();
            match w {
                "-C" | "-c" | "--git-dir" | "--work-tree" | "--namespace" => i += 2,
                _ if w.starts_with("--") && w.contains('=') => i += 1,
                "--no-pager"
                | "-P"
                | "-p"
                | "--paginate"
                | "--bare"
                | "--no-replace-objects"
                | "--literal-pathspecs"
                | "--no-optional-locks"
                | "--glob-pathspecs"
                | "--noglob-pathspecs"
                | "--icase-pathspecs" => i += 1,
                _ => break,
            }
        }
        let mut kept = vec![current[0].clone()];
        kept.extend(current[i.min(current.len())..].iter().cloned());
        current = kept;
    }
    current
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(line: &str) -> Vec<(String, String)> {
        split(line)
            .unwrap()
            .into_iter()
            .map(|c| (c.text, c.normalized))
            .collect()
    }

    #[test]
    fn lines_split_into_commands_with_spans_and_operators() {
        let line = "rm -rf target/x;  rm   -rf victim && ls | wc -l";
        let commands = split(line).unwrap();
        let shown: Vec<_> = commands.iter().map(|c| c.text.as_str()).collect();
        assert_eq!(shown, ["rm -rf target/x", "rm -rf victim", "ls", "wc -l"]);
        assert_eq!(&line[commands[1].span.clone().unwrap()], "rm   -rf victim");
        let ops: Vec<_> = commands.iter().map(|c| c.op.as_deref()).collect();
        assert_eq!(ops, [Some(";"), Some("&&"), Some("|"), None]);
    }

    #[test]
    fn nested_code_is_split_too() {
        let all = texts("cd . && (git push --force) ; echo $(rm -rf x) ; sh -c 'git push'");
        let shown: Vec<_> = all.iter().map(|(t, _)| t.as_str()).collect();
        assert_eq!(
            shown,
            [
                "cd .",
                "git push --force",
                "echo $(rm -rf x)",
                "rm -rf x",
                "sh -c 'git push'",
                "git push"
            ]
        );
        assert_eq!(texts("if true; then time ! ls; fi")[1].0, "ls");
    }

    #[test]
    fn wrappers_and_git_options_are_normalised_away() {
        for (line, normal) in [
            ("timeout 9 git push --force", "git push --force"),
            ("git -C . push --force", "git push --force"),
            ("sudo -u root env X=1 nice -n 5 rm -rf /", "rm -rf /"),
            ("X=1 git --no-pager -c a=b push", "git push"),
            ("nohup xargs rm", "rm"),
        ] {
            assert_eq!(texts(line)[0].1, normal, "{line}");
            assert_eq!(texts(line)[0].0, line);
        }
    }

    #[test]
    fn unparseable_lines_are_none() {
        assert!(split("").is_none());
        assert!(split(&"$(".repeat(100)).is_none());
    }
}
