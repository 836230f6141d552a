//! Secret files and tinytool's protected places, judged on the file name of every path a
//! command names.
//!
//! A word names paths in several ways: itself (`cat .env`), the value of `--flag=path`
//! or `name=path`, `@path` (curl), and the part after a `:` (`git show HEAD:.env`,
//! `scp host:.env .`, URLs). Each candidate's last component is judged:
//!
//! - `.env` and its variants: `.env`, `.env.local`, `.env-prod`, `.env_x`, and `env` as a
//!   later dot-separated component (`config.env`, `app.env.production`) — except code
//!   reading variables (`process.env.X`, `import.meta.env.X`, `Deno.env`, `ctx.env.API_KEY`);
//! - `credentials` as the whole name or stem, or a stem ending in `-credentials`
//!   (`credentials.json`, `.git-credentials`);
//! - a final `.key` or `.pem`, also when only a backup suffix follows (`server.key.bak`,
//!   `tls.pem~`); public halves (`.pub`, `.crt`, `.csr`) are not secret;
//! - beyond the list, files that hold secrets by convention: private SSH keys
//!   (`id_rsa`, `id_ed25519`, …), `.netrc`, `.pgpass`, `.htpasswd`, `.vault-token`,
//!   `secrets.*`, and key stores (`.p12`, `.pfx`, `.jks`, `.keystore`, `.kdbx`).
//!
//! A glob names a secret file when it would match one of a set of typical secret names
//! and none of a set of ordinary names (`.env*` and `*.pem` do; `*` and `*.json` do not).
//! Separately, any path inside a `.tinytool` folder or tinytool's user config directory is
//! protected (DESIGN §4).

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
];

/// Backup suffixes that may follow a secret file's name (`server.key.bak`, `id_rsa~`).
const BACKUP_SUFFIXES: &[&str] = &[
    "~", ".bak", ".backup", ".old", ".orig", ".save", ".swp", ".tmp", ".copy", ".prev", ".1", ".2",
];

/// What a word names, if anything worth a `secret-shell` check: the reason.
pub fn check_word(text: &str, glob: bool, places: &Places) -> Option<String> {
    for candidate in candidates(text) {
        if let Some(protected) = protected(candidate, places) {
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
            continue;
        }
        let secret = if glob && has_glob(&name) {
            glob_is_secret(&name)
        } else {
            name_is_secret(&name)
        };
        if secret {
            return Some(format!("secret file: {candidate}"));
        }
    }
    None
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

/// Whether a file name (no directory) is a secret file's.
pub fn name_is_secret(name: &str) -> bool {
    env_file(name) || credentials(name) || key_file(name) || other_secret(name)
}

/// Other files that hold secrets by convention: private SSH keys, `.netrc`, `.pgpass`,
/// `secrets.*`, key stores.
fn other_secret(name: &str) -> bool {
    let lower = lower_without_backup_suffixes(name);
    const NAMES: &[&str] = &[
        "id_rsa",
        "id_dsa",
        "id_ecdsa",
        "id_ed25519",
        "id_ecdsa_sk",
        "id_ed25519_sk",
        ".netrc",
        "_netrc",
        ".pgpass",
        ".htpasswd",
        ".vault-token",
    ];
    const EXTENSIONS: &[&str] = &[".p12", ".pfx", ".jks", ".keystore", ".kdbx"];
    // `secrets.md` or `secret.rs` is documentation or code about secrets, not a store.
    const NOT_DATA: &[&str] = &[
        "md", "rst", "adoc", "rs", "py", "go", "ts", "tsx", "js", "jsx", "mjs", "java", "kt", "rb",
        "php", "cs", "c", "h", "cpp", "hpp", "swift", "scala", "sh", "html", "css",
    ];
    let stem = lower.split('.').next().unwrap_or(&lower);
    let extension = lower.rsplit('.').next().unwrap_or("");
    NAMES.contains(&lower.as_str())
        || EXTENSIONS.iter().any(|e| lower.ends_with(e))
        || (lower.contains('.')
            && matches!(stem, "secrets" | "secret")
            && !NOT_DATA.contains(&extension))
}

fn env_file(name: &str) -> bool {
    let comps: Vec<&str> = name.split('.').collect();
    for k in 1..comps.len() {
        let comp = comps[k].to_ascii_lowercase();
        let is_env = comp == "env" || comp.starts_with("env-") || comp.starts_with("env_");
        if !is_env {
            continue;
        }
        if k == 1 && comps[0].is_empty() {
            return true;
        }
        // Code reading variables: the identifiers around `env` (`log(process.env.HOME)`).
        let previous = trailing_identifier(comps[k - 1]).to_ascii_lowercase();
        if matches!(previous.as_str(), "process" | "meta" | "deno" | "bun") {
            continue;
        }
        if comp == "env"
            && let Some(next) = comps.get(k + 1)
            && is_variable_name(leading_identifier(next))
        {
            continue;
        }
        return true;
    }
    false
}

fn trailing_identifier(text: &str) -> &str {
    let start = text
        .char_indices()
        .rev()
        .find(|(_, c)| !(c.is_ascii_alphanumeric() || *c == '_'))
        .map_or(0, |(k, c)| k + c.len_utf8());
    &text[start..]
}

fn leading_identifier(text: &str) -> &str {
    let end = text
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(text.len());
    &text[..end]
}

/// `API_KEY`, `HOME`: how environment variables are named (code reading one).
fn is_variable_name(text: &str) -> bool {
    text.len() >= 2
        && text.chars().any(|c| c.is_ascii_uppercase())
        && text
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
}

fn credentials(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    let hidden = lower.starts_with('.');
    let bare = lower.trim_start_matches('.');
    let stem = bare.split('.').next().unwrap_or(bare);
    // `.git-credentials`, `gcp-credentials.json` — but not a word like `set-credentials`.
    stem == "credentials" || (stem.ends_with("-credentials") && (hidden || bare.contains('.')))
}

fn key_file(name: &str) -> bool {
    let lower = lower_without_backup_suffixes(name);
    lower.ends_with(".key") || lower.ends_with(".pem")
}

/// A name lower-cased, without up to three backup suffixes (`id_rsa.bak.orig` is `id_rsa`).
fn lower_without_backup_suffixes(name: &str) -> String {
    let mut lower = name.to_ascii_lowercase();
    for _ in 0..3 {
        match BACKUP_SUFFIXES.iter().find(|s| lower.ends_with(*s)) {
            Some(suffix) => lower.truncate(lower.len() - suffix.len()),
            None => break,
        }
    }
    lower
}

/// Whether a glob (file-name part) would match a typical secret file and no ordinary one.
pub fn glob_is_secret(pattern: &str) -> bool {
    SECRET_SAMPLES.iter().any(|s| glob_match(pattern, s))
        && !ORDINARY_SAMPLES.iter().any(|s| glob_match(pattern, s))
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

/// A path inside `.tinytool/` or tinytool's user config directory.
fn protected(candidate: &str, places: &Places) -> Option<String> {
    let path = Path::new(candidate);
    let components: Vec<String> = path
        .components()
        .filter_map(|c| match c {
            Component::Normal(s) => Some(s.to_string_lossy().into_owned()),
            _ => None,
        })
        .collect();
    if components.iter().any(|c| c == ".tinytool") {
        return Some(format!("protected path: {candidate}"));
    }
    if components
        .windows(2)
        .any(|w| w[0] == ".config" && w[1] == "tinytool")
    {
        return Some(format!("tinytool config: {candidate}"));
    }
    let config_dir = places.config_dir.as_ref()?;
    let expanded = expand(candidate, places)?;
    if crate::paths::clean(&expanded).starts_with(config_dir) {
        return Some(format!("tinytool config: {candidate}"));
    }
    None
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

    #[test]
    fn secret_names() {
        for name in [
            ".env",
            ".env.local",
            ".env-prod",
            ".env.example",
            "config.env",
            "app.env.production",
            "credentials",
            "credentials.json",
            ".git-credentials",
            "server.key",
            "cert.pem",
            "server.key.bak",
            "tls.pem~",
            "$X.env",
            "id_rsa",
            "id_ed25519",
            ".netrc",
            "secrets.json",
            "cert.p12",
        ] {
            assert!(name_is_secret(name), "{name}");
        }
    }

    #[test]
    fn ordinary_names() {
        for name in [
            ".envrc",
            ".venv",
            "env.rs",
            "environment.ts",
            "python-dotenv",
            "process.env.HOME",
            "process.env",
            "import.meta.env",
            "import.meta.env.VITE_URL",
            "ctx.env.API_KEY",
            "credentials_test",
            "id.keys",
            "id_rsa.pub",
            "server.crt",
            "server.csr",
            "keys.txt",
            "monkey",
            "secret",
            "secrets",
            "id_rsa.pub",
            "id_ed25519.pub",
            "known_hosts",
            "secrets.md",
            "secret.rs",
            "é.env.HOME",
            "set-credentials",
        ] {
            assert!(!name_is_secret(name), "{name}");
        }
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
        assert!(check_word("--env-file=.env", false, &places).is_some());
        assert!(check_word("HEAD:.env", false, &places).is_some());
        assert!(check_word("@credentials.json", false, &places).is_some());
        assert!(check_word("~/.aws/credentials", false, &places).is_some());
        assert_eq!(
            check_word(".tinytool/state.db", false, &places).as_deref(),
            Some("protected path: .tinytool/state.db")
        );
        assert!(check_word("~/.config/tinytool/policy.json", false, &places).is_some());
        assert!(check_word("$XDG_CONFIG_HOME/tinytool", false, &places).is_some());
        assert!(check_word("/home/user/.config/tinytool/x", false, &places).is_some());
        assert_eq!(check_word("src/main.rs", false, &places), None);
        assert_eq!(check_word("~/.config/other", false, &places), None);
    }
}
