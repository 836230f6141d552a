//! Which words of a command name files, which are patterns the command matches file
//! names with, and which are only data: the secret-file rules read each word in its role.
//!
//! Issue 8 counts search patterns and messages as data: `grep -i credentials README.md`
//! searches README.md for a word, it does not open a file called `credentials`. So the
//! pattern of `grep`/`egrep`/`fgrep`/`rg`/`ag`/`ack`/`git grep` (the first operand, or
//! the values of `-e`/`--regexp`), `sed` scripts, awk programs, jq filters, `git log --grep`/`-S`/`-G`
//! values and `git commit -m` messages are [`Role::Data`]. The remaining operands are
//! still paths, and so is a pattern *file* (`grep -f .env`).
//!
//! The reverse also holds: a name pattern that a command matches itself names the files
//! it matches even when quoted (`find . -name ".env*"`, `find . -path "*tinytool*"`,
//! `rg -g '*.pem'`, `grep --include='*.env'`), so those words are judged as patterns with
//! the command's own matching rules ([`Role::Name`], [`Role::WholePath`],
//! [`Role::Regex`]).
//!
//! Roles follow wrappers (`sudo grep …`, `timeout 5 rg …`, `find -exec grep …`,
//! `xargs grep …`): the wrapped command's words get the roles it gives them.

use super::args::{self, Spec, command_name};
use super::runs::{self, Inner};

/// How one word of a command is read by the secret-file rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// A path, or text that may be one (the default); a shell glob when it holds unquoted
    /// glob characters.
    Path,
    /// The command word, of the command or of one a wrapper runs (`sudo cat`): looked up
    /// in `PATH` unless it holds a `/`, so never a file of the working directory.
    Command,
    /// Text that is never a file: a search pattern, a filter, a script, a message.
    Data,
    /// A file-name pattern the command matches itself, quoted or not (`find -name`,
    /// `rg -g`, `grep --include`): `*` also matches a leading dot; `fold` ignores case.
    Name {
        /// Case-insensitive (`-iname`, `--iglob`).
        fold: bool,
    },
    /// A whole-path pattern the command matches itself (`find -path`): `*` matches `/`.
    WholePath {
        /// Case-insensitive (`-ipath`).
        fold: bool,
    },
    /// A regular expression matched against whole paths (`find -regex`).
    Regex {
        /// Case-insensitive (`-iregex`).
        fold: bool,
    },
}

/// How many wrappers deep roles are followed (each level copies the argument vector).
const MAX_DEPTH: usize = 8;

/// The role of every word of `argv` (the command word included).
pub fn roles(argv: &[String]) -> Vec<Role> {
    roles_at(argv, 0)
}

fn roles_at(argv: &[String], depth: usize) -> Vec<Role> {
    let mut roles = vec![Role::Path; argv.len()];
    let Some((first, args)) = argv.split_first() else {
        return roles;
    };
    roles[0] = Role::Command;
    let own = match command_name(first) {
        "grep" | "egrep" | "fgrep" | "zgrep" | "zegrep" | "zfgrep" | "bzgrep" | "xzgrep"
        | "zstdgrep" | "lzgrep" | "ggrep" | "pcregrep" | "pcre2grep" | "ugrep" | "ug" => grep(args),
        "rg" => ripgrep(args),
        "ag" | "pt" => ag(args),
        "ack" | "ack-grep" => ack(args),
        "sed" | "gsed" => sed(args),
        "awk" | "gawk" | "mawk" | "nawk" => awk(args),
        "jq" | "yq" | "gojq" | "jaq" => query(args),
        "find" | "gfind" | "bfs" => find(args),
        "git" => git(args),
        "echo" | "printf" => all_data(args, |_| true),
        // A page or program name, looked up in their own search paths; `man ./x.1` with a
        // `/` does open that file.
        "man" | "which" | "type" | "whatis" | "apropos" | "whereis" | "info" => {
            all_data(args, |word| !word.contains('/'))
        }
        _ => Vec::new(),
    };
    for (k, role) in own {
        if let Some(slot) = roles.get_mut(k + 1) {
            *slot = role;
        }
    }
    if depth < MAX_DEPTH {
        for inner in runs::inners(argv) {
            let Inner::Argv(next) = inner else { continue };
            let Some(at) = position(argv, &next) else {
                continue;
            };
            for (j, role) in roles_at(&next, depth + 1).into_iter().enumerate() {
                if role != Role::Path {
                    roles[at + j] = role;
                }
            }
        }
    }
    roles
}

/// Every argument that `is_data` accepts is [`Role::Data`]: the words of a command that only
/// prints them or looks them up by name, never opening a file they name.
fn all_data(args: &[String], is_data: impl Fn(&str) -> bool) -> Vec<(usize, Role)> {
    args.iter()
        .enumerate()
        .filter(|(_, word)| is_data(word))
        .map(|(k, _)| (k, Role::Data))
        .collect()
}

/// Where a wrapped command's words sit in the wrapper's (they are a run of its words).
fn position(argv: &[String], inner: &[String]) -> Option<usize> {
    if inner.is_empty() || inner.len() >= argv.len() {
        return None;
    }
    (1..=argv.len() - inner.len()).find(|&at| argv[at..at + inner.len()] == *inner)
}

/// What one argument is to an option parser.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Slot<'a> {
    /// An operand.
    Operand,
    /// A flag (`-r`, `--files`) or a cluster of flags; its letters or long name.
    Flag(Name<'a>),
    /// An option's value, in this word or attached to the option in it (`-e.env`,
    /// `--regexp=.env`), and the value itself.
    Value(Name<'a>, &'a str),
}

/// An option's name; a long one as the parser resolved it: its full name when it is
/// known or an unambiguous abbreviation of a known one, else as given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Name<'a> {
    Short(char),
    Long(&'a str),
}

impl Name<'_> {
    /// Whether this is the short option `short` or the long option `long` (`""`: none).
    fn is(self, short: Option<char>, long: &str) -> bool {
        match self {
            Name::Short(c) => Some(c) == short,
            Name::Long(name) => !long.is_empty() && name == long,
        }
    }
}

/// How a command reads its options.
struct Parser<'a> {
    /// The options taking a value.
    spec: Spec<'a>,
    /// Letters that take only an attached value (`sed -i.bak`).
    optional: &'a str,
    /// The long options the roles depend on, flags included, to resolve abbreviations.
    known: Vec<&'a str>,
    /// Whether unambiguous prefixes of long options count (getopt_long, git, ack's
    /// Getopt::Long do; ripgrep does not).
    abbreviate: bool,
}

impl<'a> Parser<'a> {
    /// The full name `given` stands for: itself when known (an exact name wins over
    /// longer ones it is a prefix of: `--type` is not `--type-list`), else the only
    /// known name it abbreviates (at least three letters), else itself.
    fn resolve(&self, given: &'a str) -> &'a str {
        if self.known.contains(&given) || !self.abbreviate || given.len() < 3 {
            return given;
        }
        let mut hits = self.known.iter().filter(|k| k.starts_with(given));
        match (hits.next(), hits.next()) {
            (Some(one), None) => one,
            _ => given,
        }
    }

    /// Scans GNU-style arguments (options may follow operands; `--` ends them) into
    /// slots.
    fn scan(&self, args: &'a [String]) -> Vec<(usize, Slot<'a>)> {
        let mut out = Vec::new();
        let mut i = 0;
        let mut operands_only = false;
        while i < args.len() {
            let arg = args[i].as_str();
            if operands_only || arg == "-" || !arg.starts_with('-') {
                out.push((i, Slot::Operand));
                i += 1;
                continue;
            }
            if arg == "--" {
                operands_only = true;
                i += 1;
                continue;
            }
            if let Some(long) = arg.strip_prefix("--") {
                match long.split_once('=') {
                    Some((name, value)) => {
                        out.push((i, Slot::Value(Name::Long(self.resolve(name)), value)));
                    }
                    None => {
                        let name = Name::Long(self.resolve(long));
                        out.push((i, Slot::Flag(name)));
                        let Name::Long(full) = name else { continue };
                        if self.spec.long.contains(&full)
                            && let Some(value) = args.get(i + 1)
                        {
                            out.push((i + 1, Slot::Value(name, value)));
                            i += 1;
                        }
                    }
                }
                i += 1;
                continue;
            }
            // The word's slot is its last option's; a value-taking letter ends the cluster
            // and takes the rest of it, or else the next word, as its value.
            let cluster = &arg[1..];
            let mut slot = None;
            let mut takes_next = None;
            for (k, c) in cluster.char_indices() {
                let name = Name::Short(c);
                slot = Some(Slot::Flag(name));
                if self.optional.contains(c) {
                    break;
                }
                if self.spec.short.contains(c) {
                    let rest = &cluster[k + c.len_utf8()..];
                    if rest.is_empty() {
                        takes_next = Some(name);
                    } else {
                        slot = Some(Slot::Value(name, rest));
                    }
                    break;
                }
            }
            if let Some(slot) = slot {
                out.push((i, slot));
            }
            if let Some(name) = takes_next
                && let Some(value) = args.get(i + 1)
            {
                out.push((i + 1, Slot::Value(name, value)));
                i += 1;
            }
            i += 1;
        }
        out
    }
}

/// The roles of a search tool's words: the values of the pattern options are data; the
/// first operand is the pattern unless an option gave one; file-name filters are name
/// patterns, exclusions data.
/// Options are named by their short letter and long name (`""` when there is none).
struct Search<'a> {
    spec: Spec<'a>,
    /// Letters that take only an attached value (`sed -i.bak`).
    optional: &'a str,
    /// Whether unambiguous prefixes of long options count.
    abbreviate: bool,
    /// Options whose value is a pattern (data), and which stand in for the operand.
    pattern: &'a [(Option<char>, &'a str)],
    /// Options whose value stands in for the pattern operand but is still judged as a
    /// path: a file of patterns (`grep -f FILE`), a file-name pattern (`ag -g .env`).
    pattern_path: &'a [(Option<char>, &'a str)],
    /// Options whose value is data but which do not replace the pattern operand; among
    /// them the exclusions (`--exclude=.env`, `--exclude-dir=.tinytool`), which keep the
    /// command away from the files they match.
    data: &'a [(Option<char>, &'a str)],
    /// Options whose value is a file-name pattern of files to search, and whether it
    /// ignores case.
    names: &'a [(Option<char>, &'a str, bool)],
    /// Whether a leading `!` turns a file-name pattern into an exclusion (`rg -g '!.env'`).
    negate: bool,
    /// Flags after which there is no pattern operand (`rg --files`).
    no_pattern: &'a [(Option<char>, &'a str)],
}

impl Search<'_> {
    const NONE: Search<'static> = Search {
        spec: Spec::new("", &[]),
        optional: "",
        abbreviate: true,
        pattern: &[],
        pattern_path: &[],
        data: &[],
        names: &[],
        negate: false,
        no_pattern: &[],
    };

    fn parser(&self) -> Parser<'_> {
        let mut known: Vec<&str> = self
            .spec
            .long
            .iter()
            .copied()
            .chain(
                [self.pattern, self.pattern_path, self.data, self.no_pattern]
                    .into_iter()
                    .flatten()
                    .map(|(_, long)| *long),
            )
            .chain(self.names.iter().map(|(_, long, _)| *long))
            .filter(|long| !long.is_empty())
            .collect();
        known.sort_unstable();
        known.dedup();
        Parser {
            spec: self.spec,
            optional: self.optional,
            known,
            abbreviate: self.abbreviate,
        }
    }
}

fn search(args: &[String], tool: &Search) -> Vec<(usize, Role)> {
    let is = |name: Name, list: &[(Option<char>, &str)]| {
        list.iter().any(|(short, long)| name.is(*short, long))
    };
    let slots = tool.parser().scan(args);
    let mut out = Vec::new();
    let mut has_pattern = false;
    for (k, slot) in &slots {
        match *slot {
            Slot::Value(name, _) if is(name, tool.pattern) => {
                has_pattern = true;
                out.push((*k, Role::Data));
            }
            Slot::Value(name, _) if is(name, tool.data) => out.push((*k, Role::Data)),
            Slot::Value(name, _) if is(name, tool.pattern_path) => has_pattern = true,
            Slot::Value(name, value) => {
                if let Some((_, _, fold)) = tool
                    .names
                    .iter()
                    .find(|(short, long, _)| name.is(*short, long))
                {
                    let excluded = tool.negate && value.starts_with('!');
                    let role = if excluded {
                        Role::Data
                    } else {
                        Role::Name { fold: *fold }
                    };
                    out.push((*k, role));
                }
            }
            Slot::Flag(name) if is(name, tool.no_pattern) => has_pattern = true,
            _ => {}
        }
    }
    if !has_pattern && let Some((k, _)) = slots.iter().find(|(_, s)| *s == Slot::Operand) {
        out.push((*k, Role::Data));
    }
    out
}

fn grep(args: &[String]) -> Vec<(usize, Role)> {
    search(
        args,
        &Search {
            spec: Spec::new(
                "efmABCdD",
                &[
                    "regexp",
                    "file",
                    "max-count",
                    "after-context",
                    "before-context",
                    "context",
                    "directories",
                    "devices",
                    "include",
                    "exclude",
                    "exclude-from",
                    "exclude-dir",
                    "label",
                    "binary-files",
                    "group-separator",
                ],
            ),
            pattern: &[(Some('e'), "regexp")],
            pattern_path: &[(Some('f'), "file")],
            data: &[
                (None, "label"),
                (None, "group-separator"),
                (None, "exclude"),
                (None, "exclude-dir"),
            ],
            names: &[(None, "include", false)],
            ..Search::NONE
        },
    )
}

fn ripgrep(args: &[String]) -> Vec<(usize, Role)> {
    search(
        args,
        &Search {
            spec: Spec::new(
                "efgmABCMjEtTrd",
                &[
                    "regexp",
                    "file",
                    "glob",
                    "iglob",
                    "type",
                    "type-not",
                    "type-add",
                    "type-clear",
                    "max-count",
                    "after-context",
                    "before-context",
                    "context",
                    "max-columns",
                    "threads",
                    "encoding",
                    "replace",
                    "max-depth",
                    "maxdepth",
                    "max-filesize",
                    "path-separator",
                    "sort",
                    "sortr",
                    "color",
                    "colors",
                    "context-separator",
                    "field-match-separator",
                    "field-context-separator",
                    "engine",
                    "dfa-size-limit",
                    "regex-size-limit",
                    "ignore-file",
                    "pre",
                    "pre-glob",
                    "hostname-bin",
                    "hyperlink-format",
                    "generate",
                ],
            ),
            pattern: &[(Some('e'), "regexp")],
            pattern_path: &[(Some('f'), "file")],
            data: &[
                (Some('r'), "replace"),
                (None, "context-separator"),
                (None, "field-match-separator"),
                (None, "field-context-separator"),
                // Which searched files go through `--pre`: it adds none.
                (None, "pre-glob"),
            ],
            names: &[(Some('g'), "glob", false), (None, "iglob", true)],
            negate: true,
            // ripgrep's parser takes long options only spelled out.
            abbreviate: false,
            no_pattern: &[
                (None, "files"),
                (None, "type-list"),
                (None, "version"),
                (None, "help"),
            ],
            ..Search::NONE
        },
    )
}

/// The Silver Searcher (and `pt`, which reads the same options).
fn ag(args: &[String]) -> Vec<(usize, Role)> {
    search(
        args,
        &Search {
            spec: Spec::new(
                "ABCGgmpW",
                &[
                    "file-search-regex",
                    "max-count",
                    "path-to-ignore",
                    "ignore",
                    "ignore-dir",
                    "depth",
                    "pager",
                    "width",
                ],
            ),
            // `-g PATTERN` lists the files whose names match it, in place of a search.
            pattern_path: &[(Some('g'), "")],
            data: &[
                (Some('G'), "file-search-regex"),
                (None, "ignore"),
                (None, "ignore-dir"),
            ],
            ..Search::NONE
        },
    )
}

fn ack(args: &[String]) -> Vec<(usize, Role)> {
    search(
        args,
        &Search {
            spec: Spec::new(
                "ABCgm",
                &[
                    "after-context",
                    "before-context",
                    "context",
                    "match",
                    "max-count",
                    "type",
                    "ignore-dir",
                    "ignore-directory",
                    "ignore-file",
                    "output",
                    "files-from",
                    "pager",
                    "type-add",
                    "type-set",
                ],
            ),
            pattern: &[(None, "match")],
            // `-g REGEX` lists the files whose names match it, in place of a search.
            pattern_path: &[(Some('g'), "")],
            data: &[
                (None, "output"),
                (None, "ignore-dir"),
                (None, "ignore-directory"),
                (None, "ignore-file"),
            ],
            // `ack -f` lists the files it would search: no pattern.
            no_pattern: &[(Some('f'), "")],
            ..Search::NONE
        },
    )
}

/// `sed SCRIPT FILE…`, `sed -e SCRIPT … FILE…`: the script is data (`-f` names a file).
fn sed(args: &[String]) -> Vec<(usize, Role)> {
    search(
        args,
        &Search {
            spec: Spec::new("efl", &["expression", "file", "line-length"]),
            optional: "i",
            pattern: &[(Some('e'), "expression")],
            pattern_path: &[(Some('f'), "file")],
            ..Search::NONE
        },
    )
}

/// `awk PROGRAM FILE…`, `awk -f PROG FILE…`: the program is code, judged as such on its own
/// (its string literals are paths it may open), so as a word it is data.
fn awk(args: &[String]) -> Vec<(usize, Role)> {
    search(
        args,
        &Search {
            spec: Spec::new(
                "FvfeWil",
                &[
                    "field-separator",
                    "assign",
                    "file",
                    "source",
                    "include",
                    "load",
                ],
            ),
            pattern: &[(Some('e'), "source")],
            pattern_path: &[(Some('f'), "file")],
            data: &[(Some('F'), "field-separator")],
            ..Search::NONE
        },
    )
}

/// The filter of `jq`/`yq`: an expression, not a path (`jq .scripts.env`).
fn query(args: &[String]) -> Vec<(usize, Role)> {
    let mut k = 0;
    while k < args.len() {
        let text = args[k].as_str();
        if !text.starts_with('-') || text == "-" {
            return vec![(k, Role::Data)];
        }
        // Options whose values are not the filter.
        k += match text {
            "--arg" | "--argjson" | "--slurpfile" | "--rawfile" => 3,
            "-L" | "--indent" => 2,
            _ => 1,
        };
    }
    Vec::new()
}

/// `find`'s name tests: `-name`/`-iname`/`-lname` patterns, `-path`/`-wholename`
/// patterns and `-regex` expressions, quoted or not. `-exec … ;` is skipped (its command
/// gets its own roles as a wrapped command). A test that only keeps find away from what
/// it matches is data: negated (`-not -path './.tinytool/*'`, `! ( … )`) or pruned before
/// an alternative (`-path ./.tinytool -prune -o -print`, `( … ) -prune -o …`).
fn find(args: &[String]) -> Vec<(usize, Role)> {
    // (the test's index, its pattern's index, the pattern's role)
    let mut tests = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let role = match args[i].as_str() {
            "-name" | "-lname" => Some(Role::Name { fold: false }),
            "-iname" | "-ilname" => Some(Role::Name { fold: true }),
            "-path" | "-wholename" => Some(Role::WholePath { fold: false }),
            "-ipath" | "-iwholename" => Some(Role::WholePath { fold: true }),
            "-regex" => Some(Role::Regex { fold: false }),
            "-iregex" => Some(Role::Regex { fold: true }),
            "-printf" | "-fprintf" => Some(Role::Data),
            "-exec" | "-execdir" | "-ok" | "-okdir" => {
                while i < args.len() && args[i] != ";" && args[i] != "+" {
                    i += 1;
                }
                None
            }
            _ => None,
        };
        match role {
            Some(role) if i + 1 < args.len() => {
                // `-fprintf FILE FORMAT`: the file is a path, the format data.
                let at = if args[i] == "-fprintf" { i + 2 } else { i + 1 };
                if at < args.len() {
                    tests.push((i, at, role));
                }
                i = at + 1;
            }
            _ => i += 1,
        }
    }
    let excluded = find_exclusions(args);
    tests
        .into_iter()
        .map(|(test, at, role)| {
            if excluded.iter().any(|(lo, hi)| (*lo..=*hi).contains(&test)) {
                (at, Role::Data)
            } else {
                (at, role)
            }
        })
        .collect()
}

/// The ranges of `find` arguments (inclusive) that only exclude: the primary after `!` or
/// `-not`, and the primary before `-prune -o`; a primary is one test with its value or a
/// parenthesised group.
fn find_exclusions(args: &[String]) -> Vec<(usize, usize)> {
    let word = |k: usize| args.get(k).map(String::as_str);
    let mut out = Vec::new();
    for (k, arg) in args.iter().enumerate() {
        match arg.as_str() {
            "!" | "-not" => match word(k + 1) {
                Some("(") => {
                    if let Some(close) = matching(args, k + 1, 1) {
                        out.push((k + 1, close));
                    }
                }
                Some(_) => out.push((k + 1, k + 1)),
                None => {}
            },
            "-prune" if matches!(word(k + 1), Some("-o" | "-or")) && k > 0 => {
                let before = if matches!(word(k - 1), Some("-a" | "-and")) && k > 1 {
                    k - 2
                } else {
                    k - 1
                };
                if args[before] == ")" {
                    if let Some(open) = matching(args, before, -1) {
                        out.push((open, before));
                    }
                } else if before > 0 {
                    // The test whose value this is.
                    out.push((before - 1, before));
                }
            }
            _ => {}
        }
    }
    out
}

/// The index of the parenthesis matching the one at `at`, looking forwards (`step` 1)
/// or backwards (`step` -1).
fn matching(args: &[String], at: usize, step: isize) -> Option<usize> {
    let (open, close) = if step > 0 { ("(", ")") } else { (")", "(") };
    let mut depth = 0usize;
    let mut k = at;
    loop {
        let arg = args.get(k)?.as_str();
        if arg == open {
            depth += 1;
        } else if arg == close {
            depth -= 1;
            if depth == 0 {
                return Some(k);
            }
        }
        k = k.checked_add_signed(step)?;
    }
}

/// `git grep` patterns, `git log --grep`/`-S`/`-G`/`--author` values and commit, tag,
/// merge and stash messages.
fn git(args: &[String]) -> Vec<(usize, Role)> {
    let Some(verb_at) = args::first_operand(args, runs::GIT_GLOBAL) else {
        return Vec::new();
    };
    let rest = &args[verb_at + 1..];
    let shift = |found: Vec<(usize, Role)>| -> Vec<(usize, Role)> {
        found
            .into_iter()
            .map(|(k, role)| (k + verb_at + 1, role))
            .collect()
    };
    let messages = |spec: Spec, data: &[(Option<char>, &str)]| -> Vec<(usize, Role)> {
        let tool = Search {
            spec,
            data,
            ..Search::NONE
        };
        tool.parser()
            .scan(rest)
            .into_iter()
            .filter_map(|(k, slot)| match slot {
                Slot::Value(name, _) if data.iter().any(|(s, l)| name.is(*s, l)) => {
                    Some((k, Role::Data))
                }
                _ => None,
            })
            .collect()
    };
    match args[verb_at].as_str() {
        "grep" => shift(search(
            rest,
            &Search {
                spec: Spec::new(
                    "efmABC",
                    &[
                        "max-count",
                        "after-context",
                        "before-context",
                        "context",
                        "max-depth",
                        "threads",
                    ],
                ),
                // `-O[PAGER]` takes only an attached value.
                optional: "O",
                pattern: &[(Some('e'), "")],
                pattern_path: &[(Some('f'), "")],
                ..Search::NONE
            },
        )),
        "log" | "show" | "whatchanged" | "rev-list" | "shortlog" | "reflog" => shift(messages(
            Spec::new(
                "SGn",
                &[
                    "grep",
                    "author",
                    "committer",
                    "grep-reflog",
                    "max-count",
                    "format",
                    "pretty",
                    "since",
                    "until",
                ],
            ),
            &[
                (Some('S'), ""),
                (Some('G'), ""),
                (None, "grep"),
                (None, "author"),
                (None, "committer"),
                (None, "grep-reflog"),
                (None, "format"),
                (None, "pretty"),
            ],
        )),
        "commit" | "tag" | "merge" | "stash" | "notes" => shift(messages(
            Spec::new(
                "mFcCt",
                &["message", "file", "author", "template", "trailer"],
            ),
            &[(Some('m'), "message"), (None, "author"), (None, "trailer")],
        )),
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roles_of(command: &str) -> Vec<(String, Role)> {
        let argv: Vec<String> = command.split_whitespace().map(String::from).collect();
        argv.iter().cloned().zip(roles(&argv)).collect()
    }

    fn data(command: &str) -> Vec<String> {
        roles_of(command)
            .into_iter()
            .filter(|(_, r)| *r == Role::Data)
            .map(|(w, _)| w)
            .collect()
    }

    #[test]
    fn the_pattern_of_a_search_is_data() {
        assert_eq!(data("grep -i credentials README.md"), ["credentials"]);
        assert_eq!(data("grep -rn -A 3 KEY .env"), ["KEY"]);
        assert_eq!(data("grep -e .env -e .pem docs"), [".env", ".pem"]);
        assert_eq!(data("grep --regexp=.env docs"), ["--regexp=.env"]);
        assert!(data("grep -f .env docs").is_empty());
        assert_eq!(data("grep docs -r -e x"), ["x"]);
        assert_eq!(data("rg -n \\.env src"), ["\\.env"]);
        assert_eq!(data("rg -t rust -g *.rs credentials src"), ["credentials"]);
        assert!(data("rg --files .env").is_empty());
        assert_eq!(data("ack --match credentials lib"), ["credentials"]);
        assert_eq!(data("git -C repo grep -n credentials"), ["credentials"]);
        assert_eq!(
            data("git log --grep=.env -S credentials"),
            ["--grep=.env", "credentials"]
        );
        assert_eq!(
            data("git commit -am credentials.json"),
            ["credentials.json"]
        );
        assert_eq!(data("sed -i.bak s/a/b/ .env"), ["s/a/b/"]);
        assert_eq!(data("sed -n -e /KEY/p .env"), ["/KEY/p"]);
        assert_eq!(data("jq -r .env config.json"), [".env"]);
    }

    #[test]
    fn options_taking_a_value_are_skipped_with_it() {
        assert_eq!(
            data("grep -A 3 -m 5 credentials README.md"),
            ["credentials"]
        );
        assert_eq!(data("grep -C3 -d skip credentials src"), ["credentials"]);
        assert_eq!(data("grep -rnfpatterns .env"), Vec::<String>::new());
        assert_eq!(data("grep -rne KEY .env"), ["KEY"]);
        assert_eq!(data("grep -- -KEY .env"), ["-KEY"]);
        assert_eq!(data("rg -t md -T txt -j 2 -M 100 KEY .env"), ["KEY"]);
        assert_eq!(data("rg --type md --max-depth 2 KEY .env"), ["KEY"]);
        assert_eq!(data("rg -tmd --type=md KEY .env"), ["KEY"]);
        assert_eq!(data("rg -g *.md -m3 KEY .env"), ["KEY"]);
        assert_eq!(data("ag -G md$ KEY .env"), ["md$", "KEY"]);
        assert_eq!(data("git grep --max-depth 2 -O KEY .env"), ["KEY"]);
    }

    #[test]
    fn long_options_resolve_as_their_parsers_do() {
        // An exact name wins over the longer names it begins (`--type`, not `--type-list`).
        assert_eq!(data("rg --type md KEY .env"), ["KEY"]);
        // getopt_long takes an unambiguous prefix; ripgrep takes none.
        assert_eq!(data("grep --reg KEY .env"), ["KEY"]);
        assert_eq!(data("grep --max 2 KEY .env"), ["KEY"]);
        assert_eq!(data("rg --regex KEY .env"), ["KEY"]);
        assert_eq!(data("rg --typ md KEY .env"), ["md"]);
        let tool = Search {
            spec: Spec::new("", &["exclude", "exclude-dir", "include"]),
            ..Search::NONE
        };
        let parser = tool.parser();
        assert_eq!(parser.resolve("exclude"), "exclude");
        assert_eq!(parser.resolve("inc"), "include");
        assert_eq!(parser.resolve("exc"), "exc");
        assert_eq!(parser.resolve("in"), "in");
    }

    #[test]
    fn exclusions_are_data_and_inclusions_name_files() {
        let roles = roles_of("grep -r --exclude=.env --exclude-dir .ssh --include=*.env KEY .");
        assert_eq!(roles[2].1, Role::Data);
        assert_eq!(roles[4].1, Role::Data);
        assert_eq!(roles[5].1, Role::Name { fold: false });
        let roles = roles_of("rg -g !.env --glob=!*.pem -g!*.key --iglob !*.P12 -g .env* KEY");
        assert_eq!(roles[2].1, Role::Data);
        assert_eq!(roles[3].1, Role::Data);
        assert_eq!(roles[4].1, Role::Data);
        assert_eq!(roles[6].1, Role::Data);
        assert_eq!(roles[8].1, Role::Name { fold: false });
        assert_eq!(
            data("ag --ignore .env --ignore-dir .tinytool KEY"),
            [".env", ".tinytool", "KEY"]
        );
        assert_eq!(
            data("ack --ignore-dir=.tinytool KEY"),
            ["--ignore-dir=.tinytool", "KEY"]
        );
        // A pattern for the preprocessor adds no file to the search.
        assert_eq!(data("rg --pre-glob *.env --pre ./x KEY"), ["*.env", "KEY"]);
    }

    #[test]
    fn excluding_find_tests_are_data() {
        let kinds = |command: &str| -> Vec<Role> {
            roles_of(command)
                .into_iter()
                .filter(|(w, _)| w.contains("tinytool") || w.contains(".env"))
                .map(|(_, r)| r)
                .collect()
        };
        let path = Role::WholePath { fold: false };
        let name = Role::Name { fold: false };
        assert_eq!(
            kinds("find . -not -path */.tinytool/* -type f"),
            [Role::Data]
        );
        assert_eq!(kinds("find . ! -name .env*"), [Role::Data]);
        assert_eq!(
            kinds("find . ! ( -name .env -o -path *tinytool* )"),
            [Role::Data, Role::Data]
        );
        assert_eq!(
            kinds("find . -path ./.tinytool -prune -o -print"),
            [Role::Data]
        );
        assert_eq!(
            kinds("find . -path ./.tinytool -a -prune -or -print"),
            [Role::Data]
        );
        assert_eq!(
            kinds("find . ( -path ./.git -o -path ./.tinytool ) -prune -o -name .env -print"),
            [Role::Data, name]
        );
        // `-prune` alone still prints what it matched.
        assert_eq!(kinds("find . -path ./.tinytool -prune"), [path]);
        assert_eq!(kinds("find . -name *.rs -o -name .env*"), [name]);
        // Unbalanced parentheses are no exclusion.
        assert_eq!(kinds("find . -path ./.tinytool ) -prune -o -print"), [path]);
        assert_eq!(kinds("find . ! ( -path ./.tinytool"), [path]);
    }

    #[test]
    fn command_words_are_marked() {
        let roles = roles_of("sudo -u root cat policy.json");
        assert_eq!(roles[0].1, Role::Command);
        assert_eq!(roles[3].1, Role::Command);
        assert_eq!(roles[4].1, Role::Path);
        assert_eq!(roles_of("./run.sh x")[0].1, Role::Command);
    }

    #[test]
    fn an_awk_program_is_data() {
        assert_eq!(data("awk /credentials/ README.md"), ["/credentials/"]);
        assert_eq!(data("awk -F= {print} .env"), ["-F=", "{print}"]);
        assert!(data("awk -f prog.awk .env").is_empty());
        assert_eq!(data("gawk -e /x/ credentials.json"), ["/x/"]);
    }

    #[test]
    fn roles_follow_wrappers() {
        assert_eq!(
            data("sudo -u root grep credentials README.md"),
            ["credentials"]
        );
        assert_eq!(data("timeout 5 rg credentials docs"), ["credentials"]);
        assert_eq!(
            data("find . -type f -exec grep -l credentials {} +"),
            ["credentials"]
        );
        assert_eq!(data("xargs -0 grep -l .pem"), [".pem"]);
    }

    #[test]
    fn name_tests_are_patterns() {
        let roles = roles_of("find . -name .env* -ipath *TINY* -regex .*key -exec cat {} ;");
        assert_eq!(roles[3].1, Role::Name { fold: false });
        assert_eq!(roles[5].1, Role::WholePath { fold: true });
        assert_eq!(roles[7].1, Role::Regex { fold: false });
        assert_eq!(roles[10].1, Role::Path);
        let roles = roles_of("rg --iglob *.PEM -g .env* x");
        assert_eq!(roles[2].1, Role::Name { fold: true });
        assert_eq!(roles[4].1, Role::Name { fold: false });
    }
}
