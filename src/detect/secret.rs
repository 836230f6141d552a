//! Secret files and tinytool's protected places, judged on the file name of every path a
//! command names.
//!
//! A word names paths in several ways: itself (`cat .env`), the value of `--flag=path`
//! or `name=path`, `@path` (curl), and the part after a `:` (`git show HEAD:.env`,
//! `scp host:.env .`, URLs). Each candidate's last component is judged by the one
//! definition of a secret file ([`crate::secret_file`]): by its name, and where the name
//! cannot tell (`cert.pem`, `credentials.json`), by the content of the file it resolves
//! to, when there is one.
//!
//! A glob names a secret file when it would match a typical secret name or one of its
//! simplest instances may be a secret's name (`*.env.local` matches `x.env.local`), and it
//! matches none of a set of ordinary names (`.env*` and `*.pem` do; `*` and `*.json` do
//! not). Patterns a command matches itself ([`Shape::Name`], [`Shape::WholePath`],
//! [`Shape::Regex`], chosen by [`super::roles`]) are judged with that command's rules.
//!
//! Separately, any path inside a `.tinytool` folder or tinytool's user config directory is
//! protected, also when spelled with `~`, `$HOME` or `$XDG_CONFIG_HOME`, and
//! also through a glob that could match it (`.tiny*`, `.[t]inytool`, `~/.config/tiny*`,
//! `find -path '*tinytool*'`). A glob as broad as `.*`, `.??*`, `*` or `~/.config/*` is
//! not taken as naming them: it matches every hidden name or every entry, and names
//! `.tinytool/` no more than `.` or `~` do, unless what follows is only tinytool's
//! (`.*/state.db`, `~/.config/*/policy.json`).

use std::path::{Component, Path, PathBuf};

use super::Places;

/// Names that stand for secret files when matching globs.
const SECRET_SAMPLES: &[&str] = &[
    ".env",
    ".env.local",
    ".env.production",
    ".env-prod",
    "config.env",
    "app.env.local",
    "credentials",
    "credentials.json",
    ".git-credentials",
    "server.key",
    "server.pem",
    "server.key.bak",
];

/// Ordinary names: a glob matching any of these is too broad to name a secret file.
const ORDINARY_SAMPLES: &[&str] = &[
    "README.md",
    "main.rs",
    "package.json",
    "index.js",
    "notes.txt",
    "Makefile",
    "src",
    "a",
    ".gitignore",
    ".bashrc",
    "app.py",
    "config.yaml",
    "data.csv",
    "index.html",
    "style.css",
    "lib.go",
    "test",
    "tools",
    "environment.ts",
];

/// How a word is matched against file names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// A literal path (quoted glob characters are plain characters).
    Literal,
    /// A shell glob: `*`, `?`, `[…]` within one component; a leading dot is literal.
    Glob,
    /// A file-name pattern a command matches itself (`find -name`, `rg -g`): `*` also
    /// matches a leading dot.
    Name {
        /// Case-insensitive.
        fold: bool,
    },
    /// A whole-path pattern a command matches itself (`find -path`): `*` matches `/`.
    WholePath {
        /// Case-insensitive.
        fold: bool,
    },
    /// A regular expression over whole paths (`find -regex`); judged as the glob it
    /// amounts to when it is that simple, else as literal text.
    Regex {
        /// Case-insensitive.
        fold: bool,
    },
}

/// What a word names, if anything worth a `secret-shell` check: the reason.
pub fn check_word(text: &str, shape: Shape, places: &Places) -> Option<String> {
    match shape {
        Shape::Literal | Shape::Glob => candidates(text)
            .into_iter()
            .find_map(|candidate| check_candidate(candidate, shape, places)),
        // An option's attached value (`--include=*.env`, `--glob=*.pem`) is the pattern.
        Shape::Name { .. } | Shape::WholePath { .. } | Shape::Regex { .. }
            if text.starts_with('-') && text.contains('=') =>
        {
            let value = text.split_once('=').map_or(text, |(_, value)| value);
            check_word(value, shape, places)
        }
        Shape::Name { fold } | Shape::WholePath { fold } => {
            let folded = if fold {
                text.to_lowercase()
            } else {
                text.to_string()
            };
            check_pattern(text, &folded, shape, places)
        }
        Shape::Regex { fold } => match regex_glob(text) {
            Some(glob) => {
                let glob = if fold { glob.to_lowercase() } else { glob };
                check_pattern(text, &glob, Shape::WholePath { fold }, places)
            }
            None => check_word(text, Shape::Literal, places),
        },
    }
}

/// One candidate path of a literal word or a shell glob.
fn check_candidate(candidate: &str, shape: Shape, places: &Places) -> Option<String> {
    let glob = shape == Shape::Glob;
    if let Some(protected) = protected(candidate, glob, places) {
        return Some(protected);
    }
    let trimmed = candidate.trim_end_matches('/');
    let name = trimmed.rsplit('/').next().unwrap_or(trimmed);
    // Regular-expression spellings (`^\.env$` in a grep pattern) name the same file.
    let name: String = name.chars().filter(|c| *c != '\\').collect();
    let name = name.strip_prefix('^').unwrap_or(&name);
    let name = name.strip_suffix('$').unwrap_or(name).to_string();
    // Text with blanks or code punctuation is not a file name (`load_dotenv('.env')` is
    // code; its literal is judged on its own).
    if name.is_empty()
        || (!glob && name.contains(|c: char| c.is_whitespace() || "(){};,'\"<>|&`".contains(c)))
    {
        return None;
    }
    let secret = if glob && has_glob(&name) {
        glob_is_secret(&name)
    } else {
        literal_is_secret(candidate, &name, places)
    };
    secret.then(|| format!("secret file: {candidate}"))
}

/// A pattern a command matches itself ([`Shape::Name`], [`Shape::WholePath`]); `shown` is
/// the word as written, `pattern` the pattern to match (case-folded when it ignores case).
fn check_pattern(shown: &str, pattern: &str, shape: Shape, places: &Places) -> Option<String> {
    if !has_glob(pattern) {
        return check_word(pattern, Shape::Literal, places)
            .map(|reason| reason.replace(pattern, shown));
    }
    let p: Vec<char> = pattern.chars().collect();
    let matches = |name: &str| matches_from(&p, &name.chars().collect::<Vec<char>>());
    let whole = matches!(shape, Shape::WholePath { .. });
    let (tinytool, config) = if whole {
        let config = places.config_dir.as_ref().is_some_and(|dir| {
            let dir = dir.to_string_lossy();
            matches(&dir) || matches(&format!("{dir}/policy.json"))
        });
        let tinytool = PROTECTED_PATHS.iter().any(|s| matches(s));
        let broad = ordinary_paths(places).iter().any(|s| matches(s));
        (tinytool && !broad, config && !broad)
    } else {
        let broad = ORDINARY_SAMPLES
            .iter()
            .chain(ORDINARY_DOT_NAMES)
            .any(|s| matches(s));
        (matches(TINYTOOL) && !broad, false)
    };
    if tinytool {
        return Some(format!("protected path: {shown} (matches {TINYTOOL}/)"));
    }
    if config {
        return Some(format!(
            "tinytool config: {shown} (matches {})",
            config_display(places)
        ));
    }
    let secret = if whole {
        glob_secret(
            pattern,
            |sample| {
                ["./", "./config/"]
                    .iter()
                    .any(|d| matches(&format!("{d}{sample}")))
            },
            matches,
        )
    } else {
        glob_secret(pattern, matches, matches)
    };
    secret.then(|| format!("secret file: {shown}"))
}

/// The paths a word may name.
fn candidates(text: &str) -> Vec<&str> {
    let mut out = vec![text];
    if let Some((_, value)) = text.split_once('=') {
        out.push(value);
    }
    if let Some((_, value)) = text.rsplit_once('=') {
        out.push(value);
    }
    if let Some(rest) = text.strip_prefix('@') {
        out.push(rest);
    }
    if let Some((_, rest)) = text.rsplit_once(':') {
        out.push(rest);
    }
    out.retain(|c| !c.is_empty());
    out
}

fn has_glob(name: &str) -> bool {
    name.contains(['*', '?', '['])
}

/// Whether a literal path names a secret file ([`crate::secret_file`]): by its name, and
/// where the name cannot tell (`cert.pem`), by the content of the file it resolves to
/// when there is one (a file not there yet may become a secret).
fn literal_is_secret(candidate: &str, name: &str, places: &Places) -> bool {
    use crate::secret_file::{ByName, by_name, is_secret};
    match by_name(name) {
        ByName::Public => false,
        ByName::Secret => true,
        ByName::Content(_) => match resolve(candidate, places) {
            Some(path) if path.is_file() => is_secret(&path),
            _ => crate::secret_file::name_may_be_secret(name),
        },
    }
}

/// Whether a shell glob (file-name part) would match a secret file and no ordinary one.
fn glob_is_secret(pattern: &str) -> bool {
    glob_secret(
        pattern,
        |name| glob_match(pattern, name),
        |name| glob_match(pattern, name),
    )
}

/// Whether a pattern names secret files: it matches a typical secret name (through
/// `sample`), or one of its simplest instances (through `instance`) is a secret name, and
/// it matches no ordinary name (through `sample`), which would make it too broad.
fn glob_secret(
    pattern: &str,
    sample: impl Fn(&str) -> bool,
    instance: impl Fn(&str) -> bool,
) -> bool {
    let hits = SECRET_SAMPLES.iter().any(|s| sample(s))
        || instances(pattern).iter().any(|i| {
            let name = i.trim_end_matches('/').rsplit('/').next().unwrap_or(i);
            instance(i) && crate::secret_file::name_may_be_secret(name)
        });
    hits && !ORDINARY_SAMPLES.iter().any(|s| sample(s))
}

/// The simplest names a pattern matches: each `*` as nothing, then as `x`; `?` as `x`; a
/// class as its first member. Used to see `*.env.local` name `x.env.local`.
fn instances(pattern: &str) -> Vec<String> {
    let chars: Vec<char> = pattern.chars().collect();
    let mut out = Vec::new();
    for star in ["", "x"] {
        let mut text = String::new();
        let mut i = 0;
        while i < chars.len() {
            match chars[i] {
                '*' => text.push_str(star),
                '?' => text.push('x'),
                '[' => {
                    let end = chars[i + 1..]
                        .iter()
                        .skip(1)
                        .position(|c| *c == ']')
                        .map(|k| i + 2 + k);
                    match (end, chars.get(i + 1)) {
                        (Some(end), Some(first)) if !matches!(first, '!' | '^') => {
                            text.push(*first);
                            i = end;
                        }
                        (Some(end), _) => {
                            text.push('x');
                            i = end;
                        }
                        (None, _) => text.push('['),
                    }
                }
                c => text.push(c),
            }
            i += 1;
        }
        out.push(text);
    }
    out
}

/// Shell pattern matching of one file name: `*`, `?`, `[…]` (with `!`/`^` and ranges); a
/// leading dot must be matched literally.
pub fn glob_match(pattern: &str, name: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let n: Vec<char> = name.chars().collect();
    if n.first() == Some(&'.') && p.first() != Some(&'.') {
        return false;
    }
    matches_from(&p, &n)
}

fn matches_from(p: &[char], n: &[char]) -> bool {
    let (mut pi, mut ni) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ni < n.len() {
        if pi < p.len() {
            match p[pi] {
                '*' => {
                    star = Some((pi, ni));
                    pi += 1;
                    continue;
                }
                '?' => {
                    pi += 1;
                    ni += 1;
                    continue;
                }
                '[' => {
                    if let Some((matched, next)) = class(p, pi, n[ni])
                        && matched
                    {
                        pi = next;
                        ni += 1;
                        continue;
                    }
                }
                c if c == n[ni] => {
                    pi += 1;
                    ni += 1;
                    continue;
                }
                _ => {}
            }
        }
        match star {
            Some((sp, sn)) => {
                pi = sp + 1;
                ni = sn + 1;
                star = Some((sp, sn + 1));
            }
            None => return false,
        }
    }
    p[pi..].iter().all(|c| *c == '*')
}

/// Matches a `[…]` class starting at `p[start]`: (matched, index after the class).
fn class(p: &[char], start: usize, c: char) -> Option<(bool, usize)> {
    let mut i = start + 1;
    let negate = matches!(p.get(i), Some('!' | '^'));
    if negate {
        i += 1;
    }
    let mut matched = false;
    let mut first = true;
    while i < p.len() && (first || p[i] != ']') {
        first = false;
        if p.get(i + 1) == Some(&'-') && p.get(i + 2).is_some_and(|e| *e != ']') {
            if p[i] <= c && c <= p[i + 2] {
                matched = true;
            }
            i += 3;
        } else {
            if p[i] == c {
                matched = true;
            }
            i += 1;
        }
    }
    if i >= p.len() {
        return None;
    }
    Some((matched != negate, i + 1))
}

/// The name of the project's own folder.
const TINYTOOL: &str = ".tinytool";

/// Paths inside `.tinytool/` as `find -path` sees them.
const PROTECTED_PATHS: &[&str] = &[
    "./.tinytool",
    "./.tinytool/state.db",
    "./.tinytool/policy.json",
    "./.tinytool/config.json",
    ".tinytool/policy.json",
];

/// Ordinary hidden names: a glob matching any of these is too broad to name `.tinytool`
/// (`.*`, `.??*`, `.[!.]*` match everything hidden, so `rm -rf .*` or `du -sh .*` is not
/// taken as naming it; `.t*`, `.tiny*`, `.[t]inytool` are).
const ORDINARY_DOT_NAMES: &[&str] = &[
    ".git",
    ".github",
    ".gitignore",
    ".bashrc",
    ".profile",
    ".vscode",
    ".idea",
    ".cache",
    ".config",
    ".local",
    ".npm",
    ".cargo",
    ".ssh",
    ".venv",
    ".DS_Store",
];

/// Ordinary entries of a config directory: a glob for the entry that is tinytool's
/// matching any of these is too broad (`~/.config/*` is every program's configuration).
const ORDINARY_CONFIG_NAMES: &[&str] = &[
    "git", "nvim", "gh", "fish", "Code", "systemd", "htop", "pip", "go", "helix", "src", "a",
];

/// Ordinary paths as `find -path` sees them: a pattern matching any is too broad.
fn ordinary_paths(places: &Places) -> Vec<String> {
    let mut out: Vec<String> = [
        "./src/main.rs",
        "./README.md",
        "./package.json",
        "./.git/config",
        "./.github/workflows/ci.yml",
        "./.gitignore",
        "./docs/guide.md",
        "./node_modules/x/index.js",
        "./tools/build.rs",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    if let Some(parent) = places.config_dir.as_deref().and_then(Path::parent) {
        out.push(parent.join("git/config").to_string_lossy().into_owned());
    }
    out
}

/// The user config directory as a reason shows it (`~/.config/tinytool/`).
fn config_display(places: &Places) -> String {
    match (&places.config_dir, &places.home) {
        (Some(dir), Some(home)) if dir.starts_with(home) => match dir.strip_prefix(home) {
            Ok(rest) => format!("~/{}/", rest.to_string_lossy()),
            Err(_) => format!("{}/", dir.display()),
        },
        (Some(dir), _) => format!("{}/", dir.display()),
        (None, _) => ".config/tinytool/".to_string(),
    }
}

/// Whether one path component (`glob`: a shell glob) names `target`, and no ordinary
/// name of `ordinary` (for a glob).
fn component_names(component: &str, target: &str, glob: bool, ordinary: &[&str]) -> bool {
    component == target
        || (glob
            && has_glob(component)
            && glob_match(component, target)
            && !ordinary.iter().any(|o| glob_match(component, o)))
}

/// Entries only tinytool's places hold (`state.db-wal` too): after a glob as broad as `.*`
/// or `~/.config/*`, one of these still names them (`.*/state.db`,
/// `~/.config/*/policy.json`), as no ordinary folder holds it.
const OWN_ENTRIES: &[&str] = &["state.db", "state.db-*", "policy.json"];

/// Whether `component` is a glob that could match `target`, however broadly, and `next`
/// (the component after it) names one of [`OWN_ENTRIES`] without being broad itself.
fn broad_glob_names(component: &str, target: &str, next: Option<&str>, glob: bool) -> bool {
    let Some(next) = next else { return false };
    glob && has_glob(component)
        && glob_match(component, target)
        && OWN_ENTRIES.iter().any(|e| {
            if has_glob(next) {
                instances(e).iter().any(|i| glob_match(next, i))
                    && !ORDINARY_SAMPLES.iter().any(|o| glob_match(next, o))
            } else {
                glob_match(e, next)
            }
        })
}

/// A path inside `.tinytool/` or tinytool's user config directory; `glob` when the word
/// is a shell glob, which names them when it could match them and is not so broad that
/// it matches any hidden name (`.*`) or every config directory (`~/.config/*`).
fn protected(candidate: &str, glob: bool, places: &Places) -> Option<String> {
    let components: Vec<&str> = candidate
        .split('/')
        .filter(|c| !c.is_empty() && *c != "." && *c != "..")
        .collect();
    if let Some(c) = components.iter().enumerate().find_map(|(k, c)| {
        (component_names(c, TINYTOOL, glob, ORDINARY_DOT_NAMES)
            || broad_glob_names(c, TINYTOOL, components.get(k + 1).copied(), glob))
        .then_some(c)
    }) {
        return Some(if *c == TINYTOOL {
            format!("protected path: {candidate}")
        } else {
            format!("protected path: {candidate} (matches {TINYTOOL}/)")
        });
    }
    let config_reason = || {
        if glob && has_glob(candidate) {
            format!(
                "tinytool config: {candidate} (matches {})",
                config_display(places)
            )
        } else {
            format!("tinytool config: {candidate}")
        }
    };
    if components.windows(2).enumerate().any(|(k, w)| {
        component_names(w[0], ".config", glob, &[])
            && (component_names(w[1], "tinytool", glob, ORDINARY_CONFIG_NAMES)
                || broad_glob_names(w[1], "tinytool", components.get(k + 2).copied(), glob))
    }) {
        return Some(config_reason());
    }
    // An option (`-n`) is no file, also when a `cd` moved into the config directory.
    if candidate.starts_with('-') {
        return None;
    }
    let expanded = resolve(candidate, places)?;
    if let Some(policy) = &places.policy_file
        && names_path(&expanded, policy, glob)
    {
        return Some(format!(
            "protected path: {candidate} (the policy file in effect)"
        ));
    }
    let config_dir = places.config_dir.as_ref()?;
    let config: Vec<String> = config_dir
        .components()
        .filter_map(|c| match c {
            Component::Normal(s) => Some(s.to_string_lossy().into_owned()),
            _ => None,
        })
        .collect();
    let path: Vec<String> = expanded
        .components()
        .filter_map(|c| match c {
            Component::Normal(s) => Some(s.to_string_lossy().into_owned()),
            _ => None,
        })
        .collect();
    let inside = !config.is_empty()
        && path.len() >= config.len()
        && config
            .iter()
            .zip(&path)
            .enumerate()
            .all(|(k, (want, have))| {
                if k + 1 < config.len() {
                    return component_names(have, want, glob, &[]);
                }
                component_names(have, want, glob, ORDINARY_CONFIG_NAMES)
                    || broad_glob_names(have, want, path.get(k + 1).map(String::as_str), glob)
            });
    inside.then(config_reason)
}

/// Whether `path` (a word made absolute) is `target`, component by component; each
/// component of a glob word may be a pattern that matches the target's.
fn names_path(path: &Path, target: &Path, glob: bool) -> bool {
    let normal = |p: &Path| -> Vec<String> {
        p.components()
            .filter_map(|c| match c {
                Component::Normal(s) => Some(s.to_string_lossy().into_owned()),
                _ => None,
            })
            .collect()
    };
    let (have, want) = (normal(path), normal(target));
    have.len() == want.len()
        && have
            .iter()
            .zip(&want)
            .all(|(h, w)| component_names(h, w, glob, &[]))
}

/// The glob a simple regular expression amounts to (`.*tinytool.*` is `*tinytool*`,
/// `.*\.env` is `*.env`), anchored at both ends as `find -regex` is; `None` when it uses
/// grouping, alternation or repetition of anything but `.`.
fn regex_glob(regex: &str) -> Option<String> {
    let regex = regex.strip_prefix('^').unwrap_or(regex);
    let regex = regex.strip_suffix('$').unwrap_or(regex);
    let chars: Vec<char> = regex.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < chars.len() {
        match chars[i] {
            '.' => match chars.get(i + 1) {
                Some('*') => {
                    out.push('*');
                    i += 1;
                }
                Some('+') => {
                    out.push_str("?*");
                    i += 1;
                }
                _ => out.push('?'),
            },
            '\\' => {
                let escaped = *chars.get(i + 1)?;
                if matches!(escaped, '*' | '?' | '[' | ']') || escaped.is_ascii_alphanumeric() {
                    return None;
                }
                out.push(escaped);
                i += 1;
            }
            '[' => {
                let end = chars[i + 1..]
                    .iter()
                    .skip(1)
                    .position(|c| *c == ']')
                    .map(|k| i + 2 + k)?;
                out.push('[');
                for (k, c) in chars[i + 1..end].iter().enumerate() {
                    out.push(if k == 0 && *c == '^' { '!' } else { *c });
                }
                out.push(']');
                i = end;
            }
            '*' | '+' | '?' | '(' | ')' | '|' | '{' | '}' => return None,
            c => out.push(c),
        }
        i += 1;
    }
    Some(out)
}

/// A path as the shell would resolve it (`~`, `$HOME`, `$XDG_CONFIG_HOME`, relative to
/// the directory), cleaned; `None` when it starts with another variable.
pub fn resolve(candidate: &str, places: &Places) -> Option<PathBuf> {
    expand(candidate, places).map(|path| crate::paths::clean(&path))
}

/// Expands `~`, `$HOME` and `$XDG_CONFIG_HOME` and makes a path absolute against the
/// directory.
fn expand(candidate: &str, places: &Places) -> Option<PathBuf> {
    let home = places.home.as_deref();
    let config_home = places.config_dir.as_deref().and_then(Path::parent);
    let rest = |prefix: &str| {
        candidate
            .strip_prefix(prefix)
            .map(|r| r.trim_start_matches('/'))
    };
    let path = if candidate == "~" || candidate == "$HOME" || candidate == "${HOME}" {
        home?.to_path_buf()
    } else if let Some(r) = rest("~/")
        .or_else(|| rest("$HOME/"))
        .or_else(|| rest("${HOME}/"))
    {
        home?.join(r)
    } else if let Some(r) = rest("$XDG_CONFIG_HOME").or_else(|| rest("${XDG_CONFIG_HOME}")) {
        config_home?.join(r)
    } else if candidate.starts_with('$') || candidate.starts_with('~') {
        return None;
    } else {
        places.dir.join(candidate)
    };
    Some(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reason(text: &str, shape: Shape) -> Option<String> {
        check_word(text, shape, &Places::fixed())
    }

    #[test]
    fn globs_that_could_match_the_protected_places() {
        for glob in [
            ".tiny*",
            ".[t]inytool/state.db",
            ".tinytoo?",
            ".t*",
            "./.tinytool*/x",
            "~/.config/tiny*",
            "$HOME/.config/tiny*/policy.json",
            "${HOME}/.conf*/tinytool",
            "~/.*/tinytool/policy.json",
            "$XDG_CONFIG_HOME/t*",
            "/home/*/.config/tinytool/policy.json",
            "/home/user/.config/t[i]nytool",
        ] {
            assert!(reason(glob, Shape::Glob).is_some(), "{glob}");
        }
        assert_eq!(
            reason(".[t]inytool/state.db", Shape::Glob).as_deref(),
            Some("protected path: .[t]inytool/state.db (matches .tinytool/)")
        );
        assert_eq!(
            reason("$HOME/.config/tiny*", Shape::Glob).as_deref(),
            Some("tinytool config: $HOME/.config/tiny* (matches ~/.config/tinytool/)")
        );
        for broad in [
            ".*",
            ".??*",
            ".[!.]*",
            ".[a-z]*",
            "*",
            ".git*",
            "~/.config/*",
            "~/.config/*/config.toml",
            "~/.*",
            "src/*",
            "*.rs",
        ] {
            assert_eq!(reason(broad, Shape::Glob), None, "{broad}");
        }
        // A broad glob followed by what only tinytool's places hold still names them.
        for glob in [
            ".*/state.db",
            ".??*/state.db-wal",
            ".*/*.db",
            ".*/policy.json",
            "~/.config/*/policy.json",
            "$HOME/.*/*/policy.json",
        ] {
            assert!(reason(glob, Shape::Glob).is_some(), "{glob}");
        }
        for broad in [".*/config", ".*/*", ".*/*.json", "~/.config/*/config.json"] {
            assert_eq!(reason(broad, Shape::Glob), None, "{broad}");
        }
        // Quoted, the characters are literal: a file named `.tiny*` is no protected place.
        assert_eq!(reason(".tiny*", Shape::Literal), None);
    }

    #[test]
    fn patterns_a_command_matches_itself() {
        let name = Shape::Name { fold: false };
        let path = Shape::WholePath { fold: false };
        assert!(reason("*tiny*", name).is_some());
        assert!(reason("*TINYTOOL*", Shape::Name { fold: true }).is_some());
        assert!(reason("*TINYTOOL*", name).is_none());
        assert!(reason(".env*", name).is_some());
        assert!(reason("*.env.local", name).is_some());
        // Templates hold no secrets.
        assert!(reason("*.env.example", name).is_none());
        assert!(reason("--include=*.pem", name).is_some());
        assert!(reason("*", name).is_none());
        assert!(reason(".*", name).is_none());
        assert!(reason("*tool*", name).is_none());
        assert!(reason("*tinytool*", path).is_some());
        assert!(reason("./.tinytool/*", path).is_some());
        assert!(reason("*/.config/tiny*", path).is_some());
        assert!(reason("*/.env*", path).is_some());
        assert!(reason("./src/*", path).is_none());
        assert!(reason("*/.config/*", path).is_none());
        assert!(reason("*", path).is_none());
        let regex = Shape::Regex { fold: false };
        assert!(reason(".*tinytool.*", regex).is_some());
        assert!(reason(".*\\.env", regex).is_some());
        assert!(reason(".*\\.\\(js\\|ts\\)", regex).is_none());
    }

    #[test]
    fn regular_expressions_as_globs() {
        assert_eq!(regex_glob(".*tinytool.*").as_deref(), Some("*tinytool*"));
        assert_eq!(regex_glob("^\\./\\.env$").as_deref(), Some("./.env"));
        assert_eq!(regex_glob(".+[^a]x").as_deref(), Some("?*[!a]x"));
        assert_eq!(regex_glob("a|b"), None);
        assert_eq!(regex_glob("\\w+"), None);
    }

    #[test]
    fn simplest_instances() {
        assert_eq!(
            instances("*.env.example"),
            [".env.example", "x.env.example"]
        );
        assert_eq!(instances(".e?v[abc][!x]"), [".exvax", ".exvax"]);
        assert!(!glob_is_secret("*.env.example"));
        assert!(glob_is_secret("*.env.local"));
        assert!(glob_is_secret("*.env.*"));
        assert!(!glob_is_secret("*env*"));
    }

    #[test]
    fn globs() {
        assert!(glob_is_secret(".env*"));
        assert!(glob_is_secret("*.pem"));
        assert!(glob_is_secret(".e?v"));
        assert!(glob_is_secret("*credentials*"));
        assert!(!glob_is_secret("*"));
        assert!(!glob_is_secret("*.json"));
        assert!(!glob_is_secret(".*"));
        assert!(glob_match("[a-c]x", "bx"));
        assert!(!glob_match("[!a-c]x", "bx"));
        assert!(!glob_match("*", ".env"));
    }

    #[test]
    fn candidates_and_protected_places() {
        let places = Places::fixed();
        assert!(check_word("--env-file=.env", Shape::Literal, &places).is_some());
        assert!(check_word("HEAD:.env", Shape::Literal, &places).is_some());
        assert!(check_word("@credentials.json", Shape::Literal, &places).is_some());
        assert!(check_word("~/.aws/credentials", Shape::Literal, &places).is_some());
        assert_eq!(
            check_word(".tinytool/state.db", Shape::Literal, &places).as_deref(),
            Some("protected path: .tinytool/state.db")
        );
        assert!(check_word("~/.config/tinytool/policy.json", Shape::Literal, &places).is_some());
        assert!(check_word("$XDG_CONFIG_HOME/tinytool", Shape::Literal, &places).is_some());
        assert!(check_word("/home/user/.config/tinytool/x", Shape::Literal, &places).is_some());
        assert_eq!(check_word("src/main.rs", Shape::Literal, &places), None);
        assert_eq!(check_word("~/.config/other", Shape::Literal, &places), None);
    }
}
