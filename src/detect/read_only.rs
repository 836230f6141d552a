//! The one read-only classifier: whether a command line only looks at things.
//!
//! Plan mode, spill-file reads and checkpoints ask the same question: can this line
//! change anything? It is answered with the detectors' own lexer and parser ([`super::lex`],
//! [`super::parse`]), so a line is split exactly as the policy splits it: lists,
//! pipelines, subshells, compound commands and command substitutions. A line is read-only
//! only when **every** simple command in it is (substitutions included), no redirection
//! writes anywhere but `/dev/null` or another descriptor, and the line could be parsed
//! within the bounds ([`super::too_complex`]). Anything else — an unknown command, a
//! function definition, an option that writes or runs something (`find -delete`,
//! `sort -o`, `rg --pre`, `git -c`, `git diff --output`) — is not read-only: the
//! classifier fails closed.
//!
//! Grammar of the list ([`READ_ONLY`]): command names (the last path component of the
//! command word, `/bin/ls` is `ls`); `git` is read-only with one of [`GIT_READ_ONLY`] as
//! its subcommand after the global options `-C DIR`, `--no-pager`, `-P`,
//! `--git-dir=…`, `--work-tree=…`.

use super::args::command_name;
use super::expand::{self, Vars};
use super::lex::{self, RedirOp};
use super::parse::{self, Item, Simple};

/// Commands that only read or print, whatever their operands (options that write are
/// rejected per command in [`is_read_only`]).
pub const READ_ONLY: &[&str] = &[
    "cat",
    "head",
    "tail",
    "wc",
    "ls",
    "pwd",
    "echo",
    "printf",
    "true",
    "false",
    "grep",
    "egrep",
    "fgrep",
    "rg",
    "find",
    "file",
    "stat",
    "du",
    "df",
    "date",
    "whoami",
    "id",
    "uname",
    "basename",
    "dirname",
    "realpath",
    "readlink",
    "tree",
    "sort",
    "cut",
    "tr",
    "diff",
    "cmp",
    "nl",
    "which",
    "type",
    "test",
    "[",
    "cd",
    "hostname",
    "git",
    "jq",
    "md5sum",
    "sha1sum",
    "sha256sum",
    "cksum",
    "column",
    "comm",
    "rev",
    "seq",
    "sleep",
];

/// `git` subcommands that only read (with the option checks in [`is_read_only`]).
const GIT_READ_ONLY: &[&str] = &[
    "status",
    "log",
    "diff",
    "show",
    "rev-parse",
    "ls-files",
    "blame",
    "grep",
    "shortlog",
    "describe",
    "cat-file",
    "ls-tree",
];

/// Nesting of substitutions followed before giving up (not read-only).
const MAX_DEPTH: usize = 8;

/// Whether every command of a shell line only reads: false on anything it cannot parse
/// or does not know.
pub fn line_is_read_only(line: &str) -> bool {
    line_at(line, 0)
}

fn line_at(line: &str, depth: usize) -> bool {
    if depth > MAX_DEPTH || super::too_complex(line) {
        return false;
    }
    if line.trim().is_empty() {
        return false;
    }
    let lexed = lex::lex(line);
    let items = parse::parse(&lexed);
    if items.is_empty() {
        return false;
    }
    let vars = expand::initial_vars();
    items.iter().all(|item| match item {
        Item::Simple(simple) => simple_is_read_only(simple, &vars, depth),
        // Defining a function or looping is not itself a look; refuse rather than follow.
        Item::Function { .. } | Item::Loop { .. } => false,
    })
}

fn simple_is_read_only(simple: &Simple, vars: &Vars, depth: usize) -> bool {
    // `X=1 cmd` or a bare assignment changes nothing outside the shell, but its value
    // may hold a substitution that runs.
    let mut subs = Vec::new();
    for (_, value) in &simple.assigns {
        expand::expand(value, vars, &mut subs);
    }
    let mut argv = Vec::new();
    for word in &simple.words {
        argv.extend(
            expand::expand(word, vars, &mut subs)
                .into_iter()
                .map(|a| a.text),
        );
    }
    for redir in &simple.redirs {
        match redir.op {
            RedirOp::In | RedirOp::DupIn | RedirOp::HereDoc | RedirOp::HereString => {}
            RedirOp::DupOut => {
                // `2>&1` duplicates a descriptor; `>&file` writes a file.
                let target = redir.target.literal().unwrap_or_default();
                let descriptor = target.chars().all(|c| c.is_ascii_digit()) || target == "-";
                if !descriptor && target != "/dev/null" {
                    return false;
                }
            }
            _ => {
                if redir.target.literal().as_deref() != Some("/dev/null") {
                    return false;
                }
            }
        }
        expand::expand(&redir.target, vars, &mut subs);
    }
    if !subs.iter().all(|code| line_at(code, depth + 1)) {
        return false;
    }
    // A bare assignment (`X=1`) alone is harmless.
    argv.is_empty() && !simple.assigns.is_empty() || is_read_only(&argv)
}

/// Whether one command's argument vector (as the shell would run it) only reads.
fn is_read_only(argv: &[String]) -> bool {
    let Some((first, args)) = argv.split_first() else {
        return false;
    };
    let name = command_name(first);
    if name == "sed" {
        return sed_only_prints(args);
    }
    if !READ_ONLY.contains(&name) {
        return false;
    }
    let has = |flags: &[&str]| {
        args.iter().any(|a| {
            flags
                .iter()
                .any(|f| a == f || (f.starts_with("--") && a.starts_with(&format!("{f}="))))
        })
    };
    match name {
        "find" => !has(&[
            "-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf",
            "-fls",
        ]),
        "rg" => !has(&["--pre", "--pre-glob"]),
        "sort" => {
            !has(&["--output", "--compress-program"])
                && !args
                    .iter()
                    .any(|a| a.starts_with('-') && !a.starts_with("--") && a.contains('o'))
        }
        "git" => git_is_read_only(args),
        _ => true,
    }
}

/// `sed -n` whose scripts only print line ranges (`sed -n 100,120p FILE`, `sed -n
/// '5p;5q'`): an address of line numbers or `$` (a range `A,B` or `A,+N`), then `p`, `=`
/// or `q`. Any other option (`-i` edits in place) or command (`w` writes a file, `e` runs
/// one, `s///w` both) is not read-only.
fn sed_only_prints(args: &[String]) -> bool {
    let mut quiet = false;
    let mut scripts: Vec<&str> = Vec::new();
    let mut operands: Vec<&str> = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        match a {
            "-n" | "--quiet" | "--silent" => quiet = true,
            "-E" | "-r" | "--regexp-extended" => {}
            "-e" => {
                let Some(script) = args.get(i + 1) else {
                    return false;
                };
                scripts.push(script);
                i += 1;
            }
            _ if a.starts_with("--expression=") => scripts.push(&a["--expression=".len()..]),
            "--" => {
                operands.extend(args[i + 1..].iter().map(String::as_str));
                break;
            }
            _ if a.starts_with('-') && a.len() > 1 => return false,
            _ => operands.push(a),
        }
        i += 1;
    }
    if scripts.is_empty() {
        if operands.is_empty() {
            return false;
        }
        scripts.push(operands[0]);
    }
    let address = |s: &str| s == "$" || (!s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()));
    let command_prints = |command: &str| {
        let command = command.trim();
        let Some(last) = command.chars().last() else {
            return true;
        };
        if !matches!(last, 'p' | '=' | 'q') {
            return false;
        }
        let range = command[..command.len() - 1].trim();
        if range.is_empty() {
            return true;
        }
        match range.split_once(',') {
            Some((from, to)) => {
                address(from.trim())
                    && (address(to.trim()) || to.trim().strip_prefix('+').is_some_and(address))
            }
            None => address(range),
        }
    };
    quiet
        && scripts
            .iter()
            .all(|script| script.split([';', '\n']).all(command_prints))
}

/// `git [global options] SUBCOMMAND …` with a reading subcommand and no option that
/// writes a file or names code to run.
fn git_is_read_only(args: &[String]) -> bool {
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        match a {
            "-C" => i += 2,
            "--no-pager" | "-P" | "--no-optional-locks" | "--bare" | "--literal-pathspecs" => {
                i += 1
            }
            _ if a.starts_with("--git-dir=") || a.starts_with("--work-tree=") => i += 1,
            // `-c key=value` can name a pager, an alias or a hook: code.
            _ => break,
        }
    }
    let Some(sub) = args.get(i) else { return false };
    if !GIT_READ_ONLY.contains(&sub.as_str()) {
        return false;
    }
    // `--output=FILE` writes; `--ext-diff`/`--textconv` run configured programs.
    !args[i + 1..].iter().any(|a| {
        a == "--output"
            || a.starts_with("--output=")
            || a == "-o" && sub == "grep"
            || a == "--ext-diff"
            || a.starts_with("--open-files-in-pager")
            || a == "-O"
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reading_lines_are_read_only() {
        for line in [
            "ls -la",
            "cat README.md | head -n 5",
            "grep -rn foo src && wc -l src/main.rs",
            "find . -name '*.rs'",
            "git status",
            "git --no-pager log --oneline -5",
            "git -C sub diff HEAD~1",
            "rg foo 2>/dev/null",
            "echo hi 2>&1 | tail -1",
            "cd src; ls",
            "pwd",
            "true",
            "/bin/ls",
            "echo $(pwd)",
            "X=1 ls",
            "sed -n 100,120p out.txt",
            "sed -n '5p;5q' out.txt",
            "sed -n -e '$p' -e 1p out.txt",
            "sed -n 10,+5p out.txt | head",
        ] {
            assert!(line_is_read_only(line), "{line}");
        }
    }

    #[test]
    fn writing_or_unknown_lines_are_not() {
        for line in [
            "",
            "rm -rf x",
            "ls; rm x",
            "echo hi > out.txt",
            "cat a >> b",
            "find . -delete",
            "find . -exec rm {} +",
            "sort -o out in",
            "rg --pre ./x foo",
            "git push",
            "git -c core.pager=sh log",
            "git diff --output=x",
            "echo $(rm -rf x)",
            "ls `touch y`",
            "f() { ls; }",
            "for f in *; do cat $f; done",
            "python -c 'print(1)'",
            "sed -i s/a/b/ f",
            "sed 1p f",
            "sed -n 1w copy f",
            "sed -n -i 1p f",
            "sed -n s/a/b/w f",
            "sed -n 1e f",
            "sed -n '/x/p' f",
            "sed -n",
            "ls | xargs rm",
            "cat <(touch x)",
            "ls >&out",
        ] {
            assert!(!line_is_read_only(line), "{line}");
        }
    }

    #[test]
    fn deep_or_huge_lines_are_not_read_only_and_do_not_crash() {
        let mut nested = String::from("x");
        for _ in 0..8000 {
            nested = format!("${{a:-{nested}}}");
        }
        assert!(!line_is_read_only(&format!("echo {nested}")));
        let subs = "$(".repeat(5000) + &")".repeat(5000);
        assert!(!line_is_read_only(&format!("echo {subs}")));
    }

    #[test]
    fn commands_are_judged_on_their_argv() {
        let argv = |s: &str| s.split(' ').map(String::from).collect::<Vec<_>>();
        assert!(is_read_only(&argv("git show HEAD")));
        assert!(!is_read_only(&argv("git commit -m x")));
        assert!(!is_read_only(&argv("git")));
        assert!(!is_read_only(&[]));
    }
}
