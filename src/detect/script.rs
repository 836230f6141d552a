//! Code in a scripting language (`python -c`, `node -e`, `ruby -e`, `perl -e`, awk
//! programs, `mongosh --eval`), read without knowing the language exactly.
//!
//! What matters in such code is (1) the string literals — a path (`open('.env')`), SQL
//! (`execute("DROP TABLE x")`), or a command line handed to a shell (`os.system("rm -rf
//! x")`, `execSync('…')`, awk's `system("…")`); (2) runs of literals that form an argument
//! vector (`subprocess.run(["rm", "-rf", "x"])`); and (3) a few well-known calls that are
//! destructive by themselves (`shutil.rmtree`, `fs.rmSync(…, {recursive: true})`,
//! `FileUtils.rm_rf`, a kill with signal 9, `db.dropDatabase()`).

/// What a scan of script code found.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Scan {
    /// String literals, escapes decoded.
    pub literals: Vec<String>,
    /// Runs of two or more literals separated only by commas, brackets, parentheses, `+`
    /// or blanks, joined with spaces.
    pub runs: Vec<String>,
    /// Whether the code calls something that runs commands (then literals are judged as
    /// shell code).
    pub runs_commands: bool,
    /// A destructive call, described.
    pub hazard: Option<String>,
}

/// Identifiers of APIs that run a command line or program.
const EXEC_MARKERS: &[&str] = &[
    "system",
    "exec",
    "popen",
    "spawn",
    "subprocess",
    "check_output",
    "check_call",
    "call(",
    "run(",
    "Popen",
    "shell_exec",
    "passthru",
    "proc_open",
    "child_process",
    "Command::new",
    "getRuntime",
    "Open3",
    "getline",
    "qx",
    "%x",
    "| \"",
    "|\"",
];

/// Scans script code.
pub fn scan(code: &str) -> Scan {
    let (literals, runs) = literals(code);
    let backticks = literals.iter().any(|(_, tick)| *tick);
    Scan {
        runs_commands: backticks || EXEC_MARKERS.iter().any(|m| code.contains(m)),
        literals: literals.into_iter().map(|(l, _)| l).collect(),
        runs,
        hazard: hazard(code),
    }
}

/// The literals of the code (each with whether it was a backtick literal) and the runs.
fn literals(code: &str) -> (Vec<(String, bool)>, Vec<String>) {
    let chars: Vec<char> = code.chars().collect();
    let mut out = Vec::new();
    let mut runs = Vec::new();
    let mut run: Vec<String> = Vec::new();
    let mut i = 0;
    let mut gap_ok = true;
    while i < chars.len() {
        let c = chars[i];
        if matches!(c, '\'' | '"' | '`') {
            let triple = chars.get(i + 1) == Some(&c) && chars.get(i + 2) == Some(&c);
            let (text, next) = if triple {
                read_triple(&chars, i + 3, c)
            } else {
                read_quoted(&chars, i + 1, c)
            };
            if !gap_ok && run.len() > 1 {
                runs.push(run.join(" "));
            }
            if !gap_ok {
                run.clear();
            }
            run.push(text.trim().to_string());
            out.push((text, c == '`'));
            i = next;
            gap_ok = true;
            continue;
        }
        if !(c.is_whitespace() || matches!(c, ',' | '[' | ']' | '(' | ')' | '+' | '{' | '}')) {
            gap_ok = false;
        }
        i += 1;
    }
    if run.len() > 1 {
        runs.push(run.join(" "));
    }
    (out, runs)
}

fn read_quoted(chars: &[char], mut i: usize, quote: char) -> (String, usize) {
    let mut text = String::new();
    while i < chars.len() {
        let c = chars[i];
        if c == quote {
            return (text, i + 1);
        }
        if c == '\\' && i + 1 < chars.len() {
            let e = chars[i + 1];
            text.push(match e {
                'n' => '\n',
                't' => '\t',
                other => other,
            });
            i += 2;
            continue;
        }
        if c == '\n' && quote != '`' {
            // An unterminated literal ends at the line (a quote in a comment, a regex).
            return (text, i + 1);
        }
        text.push(c);
        i += 1;
    }
    (text, i)
}

fn read_triple(chars: &[char], mut i: usize, quote: char) -> (String, usize) {
    let mut text = String::new();
    while i < chars.len() {
        if chars[i] == quote && chars.get(i + 1) == Some(&quote) && chars.get(i + 2) == Some(&quote)
        {
            return (text, i + 3);
        }
        text.push(chars[i]);
        i += 1;
    }
    (text, i)
}

/// A destructive library call in the code.
fn hazard(code: &str) -> Option<String> {
    const ALWAYS: &[&str] = &[
        "rmtree",
        "rm_rf",
        "rm_r(",
        "rm_r ",
        "remove_dir",
        "remove_tree",
        "removedirs",
        "rimraf",
        "dropDatabase",
        "SIGKILL",
    ];
    if let Some(hit) = ALWAYS.iter().find(|m| code.contains(*m)) {
        return Some(format!(
            "{} in script code",
            hit.trim_end_matches(['(', ' '])
        ));
    }
    let recursive = code.contains("recursive");
    for call in [
        "rmSync",
        "rmdirSync",
        "fs.rm(",
        "fs.rmdir(",
        "promises.rm(",
        "fs.rmdir (",
    ] {
        if recursive && code.contains(call) {
            return Some(format!(
                "{} recursive in script code",
                call.trim_end_matches('(')
            ));
        }
    }
    let compact: String = code.chars().filter(|c| !c.is_whitespace()).collect();
    for call in [".drop()", "deleteMany({})", ".remove({})"] {
        if compact.contains(call) {
            return Some(format!("{call} in script code"));
        }
    }
    if kill_nine(code) {
        return Some("kill with signal 9 in script code".to_string());
    }
    None
}

/// A `kill(…, 9)`, `kill 9, …`, `kill -9 …` or `kill('KILL')` call.
fn kill_nine(code: &str) -> bool {
    let mut rest = code;
    while let Some(at) = rest.find("kill") {
        let before_ok = rest[..at]
            .chars()
            .next_back()
            .is_none_or(|c| !c.is_alphanumeric() && c != '_');
        let after = &rest[at + 4..];
        let args: String = after
            .chars()
            .take_while(|c| !matches!(c, ')' | ';' | '\n'))
            .take(60)
            .collect();
        if before_ok
            && args
                .split(|c: char| !c.is_ascii_alphanumeric())
                .any(|t| matches!(t, "9" | "KILL" | "SIGKILL"))
        {
            return true;
        }
        rest = after;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_and_runs() {
        let scan = scan(r#"import subprocess; subprocess.run(["rm", "-rf", "build"], check=True)"#);
        assert!(scan.runs_commands);
        assert_eq!(scan.literals, ["rm", "-rf", "build"]);
        assert_eq!(scan.runs, ["rm -rf build"]);
        let scan = super::scan("print('hello'); x = \"a\\nb\"");
        assert!(!scan.runs_commands);
        assert_eq!(scan.literals, ["hello", "a\nb"]);
        assert!(scan.runs.is_empty());
    }

    #[test]
    fn destructive_calls() {
        assert!(scan("import shutil; shutil.rmtree('x')").hazard.is_some());
        assert!(
            scan("require('fs').rmSync('dist', { recursive: true, force: true })")
                .hazard
                .is_some()
        );
        assert!(scan("import os; os.kill(1234, 9)").hazard.is_some());
        assert!(scan("process.kill(pid, 'SIGKILL')").hazard.is_some());
        assert!(scan("db.users.drop()").hazard.is_some());
        assert_eq!(scan("os.kill(pid, signal.SIGTERM)").hazard, None);
        assert_eq!(scan("fs.rmSync('a.txt')").hazard, None);
        assert_eq!(scan("console.log(skill)").hazard, None);
    }
}
