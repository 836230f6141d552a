//! The shell-command detectors behind the `destructive-shell` and `secret-shell`
//! permissions, shared by `bash`, `monitor` and
//! `policy explain`. Nothing is run: a command is lexed ([`lex`]), split into its simple
//! commands ([`parse`]), its words expanded as far as can be known, and each command
//! judged as the shell would run it.
//!
//! **Parse, not grep.** Lists, pipelines, subshells, compound commands, `$(…)` and
//! backticks are split into simple commands; a command line is destructive when any of
//! them is. Text that is only printed, searched or stored (`echo`, `grep` patterns,
//! `git commit -m`, comments) is data and never matches a rule; text handed to something
//! that runs it (`sh -c`, `eval`, `python -c`, `find -exec`, `xargs`, `ssh host CMD`,
//! `docker exec`, a pipe or here-document into `sh`/`psql`, …) is code, judged as if typed
//! ([`runs`]). Wrappers (`sudo`, `env`, `nice`, `timeout`, …), absolute paths, quotes
//! inside the command word and a leading backslash never hide the command.
//!
//! **Code nobody can read** is destructive when run: text fetched from the network and
//! handed to an interpreter (`curl URL | sh`, `bash -c "$(curl URL)"`, `source <(wget …)`,
//! `curl -o x.sh URL && sh x.sh`) is "runs code fetched from the network".
//!
//! **Secret files** are judged on the file name of every path a word could name, in any
//! command, including here-strings, redirections and code handed on ([`secret`]); a path
//! inside `.tinytool/` or tinytool's user config directory needs `secret-shell` too, also
//! through a glob that could match it or a relative path after a `cd` — but not a spill
//! file under `.tinytool/outputs/` named by a line that only reads ([`outputs`]). Each word is read
//! in its role ([`roles`]): a search pattern or a message is data, a `find -name` pattern
//! is a pattern even when quoted.
//!
//! Each [`Finding`] carries a reason (`destructive: git push --force origin main`,
//! `secret file: .env`) for `policy explain` and refusals.

mod args;
pub mod commands;
mod destructive;
mod expand;
mod lex;
mod outputs;
mod parse;
pub mod read_only;
mod roles;
mod runs;
mod script;
mod secret;
mod sql;

use std::path::{Path, PathBuf};

use crate::access::Access;

use expand::{Arg, Feed, Vars};
use lex::{Lexed, RedirOp, Word};
use parse::{Item, Simple};
use roles::Role;
use runs::{Inner, Lang};
use secret::Shape;

/// Which permission a finding calls for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// `destructive-shell`.
    Destructive,
    /// `secret-shell`.
    Secret,
}

impl Kind {
    /// The permission category.
    pub fn permission(self) -> &'static str {
        match self {
            Kind::Destructive => "destructive-shell",
            Kind::Secret => "secret-shell",
        }
    }
}

/// One thing found in a command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// The permission it calls for.
    pub kind: Kind,
    /// Why: `destructive: rm -rf build`, `secret file: .env`, `protected path: .tinytool/x`.
    pub reason: String,
}

/// Where relative paths resolve and which places are protected: the inputs of [`judge`]
/// besides the command. Nothing else of the session is needed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Places {
    /// The working directory (`--dir`).
    pub dir: PathBuf,
    /// The home directory, for `~` and `$HOME`.
    pub home: Option<PathBuf>,
    /// tinytool's user config directory (`$XDG_CONFIG_HOME/tinytool`).
    pub config_dir: Option<PathBuf>,
    /// The explicit policy file in effect (`--policy`), resolved: protected like the
    /// config directory.
    pub policy_file: Option<PathBuf>,
}

impl Places {
    /// The places of a session in `dir`, from the environment (`HOME`, `XDG_CONFIG_HOME`).
    pub fn for_dir(dir: &Path) -> Places {
        Places {
            dir: dir.to_path_buf(),
            home: std::env::var_os("HOME")
                .filter(|h| !h.is_empty())
                .map(PathBuf::from),
            config_dir: crate::config::user_config_dir(),
            policy_file: None,
        }
    }

    /// Fixed places (`/project`, `/home/user`, `/home/user/.config/tinytool`), for tests
    /// and tables that must not depend on the environment.
    #[cfg(test)]
    pub fn fixed() -> Places {
        Places {
            dir: PathBuf::from("/project"),
            home: Some(PathBuf::from("/home/user")),
            config_dir: Some(PathBuf::from("/home/user/.config/tinytool")),
            policy_file: None,
        }
    }
}

/// Judges a command line without running anything: every finding, secrets first, each
/// reason once.
pub fn judge(command: &str, places: &Places) -> Vec<Finding> {
    let mut judge = Judge {
        places,
        findings: Vec::new(),
        depth: 0,
        work: 0,
        files: std::collections::HashMap::new(),
        fetched: std::collections::HashMap::new(),
        moved: None,
        outputs: Vec::new(),
    };
    judge.shell(command, &mut expand::initial_vars());
    let mut findings = judge.findings;
    // Spill files are readable by a line that only reads ([`outputs`]).
    if !judge.outputs.is_empty() && !read_only::line_is_read_only(command) {
        for finding in judge.outputs {
            if findings.len() < MAX_FINDINGS && !findings.contains(&finding) {
                findings.push(finding);
            }
        }
    }
    findings.sort_by_key(|f| f.kind != Kind::Secret);
    findings
}

/// The reasons of one kind joined with `; ` (for an access's reason), if any.
pub fn reason(findings: &[Finding], kind: Kind) -> Option<String> {
    let reasons: Vec<&str> = findings
        .iter()
        .filter(|f| f.kind == kind)
        .map(|f| f.reason.as_str())
        .collect();
    if reasons.is_empty() {
        None
    } else {
        Some(reasons.join("; "))
    }
}

/// The deepest nesting of brackets (`(`, `{`, `$(`, `${`) a line may have to be parsed.
const MAX_NESTING: usize = 64;
/// The longest line parsed, in bytes.
const MAX_LEN: usize = 128 * 1024;

/// Whether a line is beyond what the parser follows (nested deeper than [`MAX_NESTING`]
/// or longer than [`MAX_LEN`]): such a line is judged whole as unparseable, never
/// walked (a 65 KB `${a:-${a:-…}}` would otherwise exhaust the stack). Quotes are not
/// read here, so brackets inside them count too: the bound errs on the closed side.
pub fn too_complex(line: &str) -> bool {
    if line.len() > MAX_LEN {
        return true;
    }
    let mut depth = 0usize;
    for b in line.bytes() {
        match b {
            b'(' | b'{' => {
                depth += 1;
                if depth > MAX_NESTING {
                    return true;
                }
            }
            b')' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    false
}

/// The reason given for a line [`too_complex`] to judge.
pub const TOO_COMPLEX: &str =
    "command too complex to judge (nested deeper than 64 or longer than 128 KiB)";

/// How deep code inside code is followed (`sh -c "ssh h 'bash -c …'"`).
const MAX_DEPTH: usize = 16;
/// A bound on the work for one command line, against inputs built to explode.
const MAX_WORK: usize = 20_000;
/// The most findings kept.
const MAX_FINDINGS: usize = 16;

struct Judge<'a> {
    places: &'a Places,
    findings: Vec<Finding>,
    depth: usize,
    work: usize,
    /// Files this command line writes with known text (`echo 'rm -rf x' > a.sh`), so that
    /// running them later in the line (`sh a.sh`) is judged.
    files: std::collections::HashMap<String, String>,
    /// Files this command line downloads (`curl -o x.sh URL`), with the command that did:
    /// running them later in the line runs code fetched from the network.
    fetched: std::collections::HashMap<String, String>,
    /// The places with the working directory a `cd` moved to (`cd ~/.config && cat
    /// tinytool/policy.json`); an empty directory when the target is unknown.
    moved: Option<Places>,
    /// `secret-shell` findings for paths that name only spill files (`.tinytool/outputs/…`):
    /// they stand only when the line does more than read.
    outputs: Vec<Finding>,
}

impl Judge<'_> {
    fn add(&mut self, kind: Kind, reason: String) {
        if self.findings.len() < MAX_FINDINGS
            && !self
                .findings
                .iter()
                .any(|f| f.kind == kind && f.reason == reason)
        {
            self.findings.push(Finding { kind, reason });
        }
    }

    fn destructive(&mut self, what: String) {
        self.add(Kind::Destructive, format!("destructive: {what}"));
    }

    /// Code nobody has seen, fetched from the network, is run: `curl URL | sh`,
    /// `bash -c "$(curl URL)"`, `curl -o x.sh URL && sh x.sh`. Issue 8 judges code handed
    /// to an interpreter as if typed; this code cannot be read, so it is taken as
    /// destructive.
    fn runs_fetched(&mut self, how: String) {
        self.destructive(format!("runs code fetched from the network: {how}"));
    }

    /// The places relative paths resolve against: after a `cd`, its target.
    fn places(&self) -> &Places {
        self.moved.as_ref().unwrap_or(self.places)
    }

    /// Follows `cd DIR` / `pushd DIR` for the words after it.
    fn change_dir(&mut self, argv: &[String]) {
        let Some(first) = argv.first() else { return };
        if !matches!(first.as_str(), "cd" | "pushd") {
            return;
        }
        let target = argv[1..]
            .iter()
            .find(|a| !(a.starts_with('-') && a.len() > 1));
        let places = self.places();
        let dir = match target.map(String::as_str) {
            None => places.home.clone(),
            Some("-") => None,
            Some(t) if t.contains(['*', '?', '[']) => None,
            Some(t) => secret::resolve(t, places),
        };
        let mut moved = places.clone();
        // An unknown directory: relative paths then name nothing absolute.
        moved.dir = dir.unwrap_or_default();
        self.moved = Some(moved);
    }

    /// Enters one level of nesting; false when too deep or too much work was done.
    fn enter(&mut self) -> bool {
        self.work += 1;
        if self.depth >= MAX_DEPTH || self.work > MAX_WORK {
            return false;
        }
        self.depth += 1;
        true
    }

    fn leave(&mut self) {
        self.depth -= 1;
    }

    /// Judges shell code.
    fn shell(&mut self, code: &str, vars: &mut Vars) {
        if !self.enter() {
            return;
        }
        if too_complex(code) {
            // Fail closed: what cannot be parsed needs both permissions.
            self.add(Kind::Secret, TOO_COMPLEX.to_string());
            self.destructive(TOO_COMPLEX.to_string());
            self.leave();
            return;
        }
        // A `cd` inside this code (a `sh -c`, a substitution) does not move the caller.
        let outer = self.moved.clone();
        let lexed = lex::lex(code);
        let items = parse::parse(&lexed);
        let compact: String = code.chars().filter(|c| !c.is_whitespace()).collect();
        let mut previous: Option<Feed> = None;
        for item in &items {
            match item {
                Item::Loop { var, items } => {
                    let mut subs = Vec::new();
                    let values: Vec<Arg> = items
                        .iter()
                        .flat_map(|w| self.expand_checked(w, vars, &mut subs))
                        .collect();
                    for sub in subs {
                        self.shell(&sub, &mut vars.clone());
                    }
                    if let Some(first) = values.first() {
                        vars.insert(var.clone(), first.text.clone());
                    }
                }
                Item::Function { name } => {
                    // A function that pipes into itself in the background: a fork bomb.
                    if !name.is_empty() && compact.contains(&format!("{name}|{name}&")) {
                        self.destructive(format!("fork bomb {name}()"));
                    }
                }
                Item::Simple(simple) => {
                    let input = if simple.piped { previous.take() } else { None };
                    previous = self.simple(simple, &lexed, vars, input);
                }
            }
        }
        if self.depth > 1 {
            self.moved = outer;
        }
        self.leave();
    }

    /// Judges one simple command; returns what it prints, as far as known.
    fn simple(
        &mut self,
        simple: &Simple,
        lexed: &Lexed,
        vars: &mut Vars,
        mut input: Option<Feed>,
    ) -> Option<Feed> {
        let mut subs = Vec::new();
        let mut assigned = Vec::new();
        for (name, value) in &simple.assigns {
            let text = joined(&self.expand_checked(value, vars, &mut subs));
            assigned.push((name.clone(), text));
        }
        let argv: Vec<Arg> = simple
            .words
            .iter()
            .flat_map(|w| expand::expand(w, vars, &mut subs))
            .collect();
        let texts: Vec<String> = argv.iter().map(|a| a.text.clone()).collect();
        for (arg, role) in argv.iter().zip(roles::roles(&texts)) {
            let shape = match role {
                Role::Data => continue,
                Role::Path | Role::Command if arg.glob => Shape::Glob,
                Role::Path | Role::Command => Shape::Literal,
                Role::Name { fold } => Shape::Name { fold },
                Role::WholePath { fold } => Shape::WholePath { fold },
                Role::Regex { fold } => Shape::Regex { fold },
            };
            // A command word without a slash is looked up in `PATH`: a `cd` does not
            // change what it names (`cd ~/.config/tinytool && cat x` runs no `./cat`).
            let looked_up = role == Role::Command && !arg.text.contains('/');
            self.path_as(&arg.text, shape, !looked_up);
        }
        if argv.is_empty() {
            vars.extend(assigned);
        } else if matches!(
            argv[0].text.as_str(),
            "export" | "declare" | "typeset" | "local" | "readonly"
        ) {
            for arg in &argv[1..] {
                if let Some((name, value)) = arg.text.split_once('=')
                    && runs::is_assignment(&arg.text)
                {
                    vars.insert(name.to_string(), value.to_string());
                }
            }
        }
        let mut own_text: Option<String> = None;
        for redir in &simple.redirs {
            match redir.op {
                RedirOp::HereDoc => {
                    let Some(doc) = redir.heredoc.and_then(|k| lexed.heredocs.get(k)) else {
                        continue;
                    };
                    if !doc.quoted {
                        // An unquoted body is expanded: its substitutions run.
                        for part in lex::double_quoted_parts(&doc.body) {
                            if let lex::Part::Sub { code, .. } = part {
                                subs.push(code);
                            }
                        }
                    }
                    own_text = Some(doc.body.clone());
                }
                RedirOp::HereString => {
                    let text = joined(&self.expand_checked(&redir.target, vars, &mut subs));
                    own_text = Some(format!("{text}\n"));
                }
                op => {
                    let targets = expand::expand(&redir.target, vars, &mut subs);
                    for target in &targets {
                        self.path(target);
                        if op.writes() {
                            self.redirect_target(&target.text);
                        }
                    }
                    if op == RedirOp::In {
                        input = None;
                    }
                }
            }
        }
        if let Some(text) = &own_text {
            input = Some(Feed::Text(text.clone()));
        }
        for sub in subs {
            self.shell(&sub, &mut vars.clone());
        }
        self.command(&texts, &texts, input.as_ref());
        if let Some(expand::Fetch::File(file)) = expand::fetch(&texts) {
            self.fetched.insert(file_key(&file), texts.join(" "));
        }
        self.change_dir(&texts);
        let output = expand::printed(&texts, input.as_ref());
        self.remember_files(simple, vars, &texts, input.as_ref(), output.as_ref());
        output
    }

    /// Records files written with known text, or with text fetched from the network:
    /// stdout redirections and `tee` operands.
    fn remember_files(
        &mut self,
        simple: &Simple,
        vars: &Vars,
        argv: &[String],
        input: Option<&Feed>,
        output: Option<&Feed>,
    ) {
        if let Some(Feed::Fetched(source)) = output {
            // `curl URL > x.sh`: running x.sh later runs what was fetched.
            for redir in &simple.redirs {
                if matches!(redir.fd, None | Some(1))
                    && matches!(redir.op, RedirOp::Out | RedirOp::OutAll | RedirOp::Append)
                {
                    let mut ignored = Vec::new();
                    for target in expand::expand(&redir.target, vars, &mut ignored) {
                        self.fetched.insert(file_key(&target.text), source.clone());
                    }
                }
            }
        }
        if let (Some(name), Some(Feed::Fetched(source))) = (argv.first(), input)
            && args::command_name(name) == "tee"
        {
            for file in argv[1..].iter().filter(|a| !a.starts_with('-')) {
                self.fetched.insert(file_key(file), source.clone());
            }
        }
        if let Some(Feed::Text(text)) = output {
            for redir in &simple.redirs {
                let to_stdout = matches!(redir.fd, None | Some(1));
                let (truncate, append) = (
                    matches!(redir.op, RedirOp::Out | RedirOp::OutAll),
                    redir.op == RedirOp::Append,
                );
                if !(to_stdout && (truncate || append)) {
                    continue;
                }
                let mut ignored = Vec::new();
                for target in expand::expand(&redir.target, vars, &mut ignored) {
                    let entry = self.files.entry(file_key(&target.text)).or_default();
                    if truncate {
                        entry.clear();
                    }
                    entry.push_str(text);
                }
            }
        }
        if let (Some(name), Some(Feed::Text(text))) = (argv.first(), input)
            && args::command_name(name) == "tee"
        {
            let append = argv.iter().any(|a| a == "-a" || a == "--append");
            for file in argv[1..].iter().filter(|a| !a.starts_with('-')) {
                let entry = self.files.entry(file_key(file)).or_default();
                if !append {
                    entry.clear();
                }
                entry.push_str(text);
            }
        }
    }

    /// A write redirection onto a raw disk, an account file or a kernel setting.
    fn redirect_target(&mut self, target: &str) {
        if destructive::is_raw_disk(target) {
            self.destructive(format!("write to {target}"));
        } else if let Some(what) = destructive::system_write(target) {
            self.destructive(format!("{what}: write to {target}"));
        }
    }

    /// Judges a command's argument vector and whatever it runs in turn.
    /// `typed` is the command as written, wrappers included (`sudo bash`), for reasons.
    fn command(&mut self, argv: &[String], typed: &[String], input: Option<&Feed>) {
        if argv.is_empty() || !self.enter() {
            return;
        }
        if let Some(what) = destructive::check(argv) {
            self.destructive(what);
        }
        if argv[0].contains(expand::FETCHED) {
            self.runs_fetched(typed.join(" "));
        }
        if let Some(source) = self.fetched.get(&file_key(&argv[0])).cloned() {
            self.runs_fetched(format!("{} (from {source})", typed.join(" ")));
        }
        // Running a file written earlier in the line (`./a.sh`).
        if let Some(text) = self.files.get(&file_key(&argv[0])).cloned() {
            let lang =
                if text.starts_with("#!") && !text.lines().next().unwrap_or("").contains("sh") {
                    Lang::Script
                } else {
                    Lang::Shell
                };
            self.code(lang, &text);
        }
        for inner in runs::inners(argv) {
            match inner {
                Inner::Argv(next) => {
                    // A wrapper's words were already checked as paths.
                    self.command(&next, typed, input);
                }
                Inner::Code(lang, code) => {
                    if code.contains(expand::FETCHED) {
                        self.runs_fetched(typed.join(" "));
                    }
                    self.code(lang, &code);
                }
                Inner::Stdin(lang) => match input {
                    Some(Feed::Fetched(source)) => {
                        self.runs_fetched(format!("{source} | {}", typed.join(" ")));
                    }
                    Some(Feed::Text(text)) => self.code(lang, text),
                    Some(Feed::Args(args)) => {
                        for arg in args {
                            self.code(lang, arg);
                            if lang == Lang::Shell {
                                self.script(arg, true);
                            }
                        }
                    }
                    None => {}
                },
                Inner::File(lang, file) => {
                    if file.contains(expand::FETCHED) {
                        self.runs_fetched(typed.join(" "));
                    }
                    if let Some(source) = self.fetched.get(&file_key(&file)).cloned() {
                        self.runs_fetched(format!("{} (from {source})", typed.join(" ")));
                    }
                    if let Some(text) = self.files.get(&file_key(&file)).cloned() {
                        self.code(lang, &text);
                    }
                }
            }
        }
        self.leave();
    }

    fn code(&mut self, lang: Lang, code: &str) {
        match lang {
            Lang::Shell => self.shell(code, &mut expand::initial_vars()),
            Lang::Sql => self.sql(code),
            Lang::Script => self.script(code, false),
        }
    }

    fn sql(&mut self, code: &str) {
        if let Some(statement) = sql::check(code) {
            self.destructive(statement);
        }
        // Client meta-commands that run a shell (`\! cmd` in psql, `system cmd` in mysql).
        for line in code.lines() {
            let line = line.trim();
            let shell = line
                .strip_prefix("\\!")
                .or_else(|| line.strip_prefix("system "))
                .or_else(|| line.strip_prefix(".shell "))
                .or_else(|| line.strip_prefix(".system "));
            if let Some(shell) = shell {
                self.shell(shell, &mut expand::initial_vars());
            }
        }
        for word in code
            .split(|c: char| c.is_whitespace() || matches!(c, '\'' | '"' | ',' | '(' | ')' | ';'))
        {
            if !word.is_empty() {
                self.path(&Arg {
                    text: word.to_string(),
                    glob: false,
                });
            }
        }
    }

    /// Judges script code; `commands` forces its literals to be read as shell code.
    fn script(&mut self, code: &str, commands: bool) {
        if !self.enter() {
            return;
        }
        let scan = script::scan(code);
        if let Some(hazard) = scan.hazard {
            self.destructive(hazard);
        }
        for literal in &scan.literals {
            if let Some(statement) = sql::check(literal) {
                self.destructive(statement);
            }
            if scan.runs_commands || commands {
                self.shell(literal, &mut expand::initial_vars());
            } else {
                self.path(&Arg {
                    text: literal.clone(),
                    glob: false,
                });
            }
        }
        if scan.runs_commands || commands {
            for run in &scan.runs {
                self.shell(run, &mut expand::initial_vars());
            }
        }
        self.leave();
    }

    /// Expands a word, checking every field it gives as a path.
    fn expand_checked(&mut self, word: &Word, vars: &Vars, subs: &mut Vec<String>) -> Vec<Arg> {
        let args = expand::expand(word, vars, subs);
        for arg in &args {
            self.path(arg);
        }
        args
    }

    fn path(&mut self, arg: &Arg) {
        let shape = if arg.glob {
            Shape::Glob
        } else {
            Shape::Literal
        };
        self.path_as(&arg.text, shape, true);
    }

    /// Judges a word as a path of the given shape, relative to the directory a `cd`
    /// moved to when `moved`, else to the session's.
    fn path_as(&mut self, text: &str, shape: Shape, moved: bool) {
        let places = if moved { self.places() } else { self.places };
        if let Some(reason) = secret::check_word(text, shape, places) {
            let glob = match shape {
                Shape::Literal => Some(false),
                Shape::Glob => Some(true),
                _ => None,
            };
            if reason.starts_with("protected path: ")
                && glob.is_some_and(|glob| {
                    outputs::names_only_outputs(text, glob, places, &self.places.dir)
                })
            {
                let finding = Finding {
                    kind: Kind::Secret,
                    reason,
                };
                if !self.outputs.contains(&finding) {
                    self.outputs.push(finding);
                }
                return;
            }
            self.add(Kind::Secret, reason);
        }
    }
}

/// The fields of an expansion as one text, separated by spaces.
fn joined(args: &[Arg]) -> String {
    args.iter()
        .map(|a| a.text.as_str())
        .collect::<Vec<_>>()
        .join(" ")
}

/// How a written or run file is recognised: the path without a leading `./`.
fn file_key(path: &str) -> String {
    path.trim_start_matches("./").to_string()
}

/// The accesses a shell command needs (bash, monitor): `shell`, then `secret-shell` when it
/// names a secret file or a protected place, then `destructive-shell` when it is
/// destructive; each pattern is the command, each extra access says why.
pub fn shell_accesses(command: &str, places: &Places) -> Vec<Access> {
    let findings = judge(command, places);
    let Some(commands) = commands::split(command) else {
        // Not parseable within the bounds: judged whole, only `*` can allow it.
        let whole = |access: Access| Access {
            whole: true,
            ..access
        };
        let mut accesses = vec![whole(Access::new("shell", command))];
        for kind in [Kind::Secret, Kind::Destructive] {
            if let Some(reason) = reason(&findings, kind) {
                accesses.push(whole(
                    Access::new(kind.permission(), command).because(reason),
                ));
            }
        }
        return accesses;
    };
    let of = |permission: &str, c: &commands::Command| Access {
        normalized: Some(c.normalized.clone()),
        ..Access::new(permission, c.text.clone())
    };
    let mut accesses: Vec<Access> = commands.iter().map(|c| of("shell", c)).collect();
    for kind in [Kind::Secret, Kind::Destructive] {
        if reason(&findings, kind).is_none() {
            continue;
        }
        // Only the commands the detector flags are judged; when none is flagged alone
        // (the finding needs the line's context: `X=rm; $X -rf /`), the line is judged
        // whole.
        let mut flagged = false;
        for c in &commands {
            let own = judge(&c.text, places);
            if let Some(reason) = reason(&own, kind) {
                accesses.push(of(kind.permission(), c).because(reason));
                flagged = true;
            }
        }
        if !flagged && let Some(reason) = reason(&findings, kind) {
            accesses.push(Access {
                whole: true,
                ..Access::new(kind.permission(), command).because(reason)
            });
        }
    }
    accesses
}

#[cfg(test)]
mod tests;
