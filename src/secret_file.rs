//! What a secret file is: the one definition that `read`, `grep` and `glob` (through the
//! built-in `read <secret file> ask` rule), the shell's `secret-shell` detector and the
//! sandbox's masking all ask. It depends on nothing else in tinytool.
//!
//! A file is judged by its name and, where the name alone cannot tell, by its content:
//!
//! | name | verdict |
//! |---|---|
//! | a source-code or documentation extension (`.py`, `.js`, `.ts`, `.go`, `.rs`, `.md`, …; [`CODE_EXTENSIONS`]) | public, whatever the stem (`credentials.py`, `jest.env.js`, `secrets.ts`) |
//! | a template (`.env.example`, `x.env.sample`, `.template`, `.dist`) | public |
//! | a dotenv file (`.env`, `.env.local`, `config.env`, `app.env.production`) | secret, or by content when it has a data extension (`app.env.json`) |
//! | `.pem`, `.key` (`.crt`, `.cer`, `.csr` too) | by content: secret when it holds a private key (or is not PEM at all, for `.pem` and `.key`); certificates, CRLs, requests and public keys are public |
//! | `credentials`, `-credentials` stems (`credentials.json`, `.git-credentials`) | secret, or by content with a data extension |
//! | `secrets.*`, `secret.*` | secret, or by content with a data extension (`secrets.yaml`) |
//! | `.npmrc`, `.pypirc`, `.envrc` | by content: a registry's token, a password, a key makes one a secret |
//! | credential stores: SSH private keys (`id_rsa`, …), `.netrc`, `.pgpass`, `.htpasswd`, `.vault-token`, key stores (`.p12`, `.pfx`, `.jks`, `.keystore`, `.kdbx`) | secret |
//!
//! Code that reads variables (`process.env.HOME`, `import.meta.env.VITE_URL`) is not a
//! file name. A backup suffix (`server.key.bak`, `id_rsa~`) or an editor's autosave
//! (`#.env#`) is judged as the name it saves. Content is read up to [`CONTENT_LIMIT`]; a
//! file that cannot be read, or is larger, is judged a secret (fail closed).

use std::io::Read;
use std::path::Path;

/// Extensions of source code and documentation: a file with one is never a secret by
/// name (a model and a test suite need `credentials.py` and `jest.env.js` as they are).
const CODE_EXTENSIONS: &[&str] = &[
    "py", "pyi", "pyx", "ipynb", "js", "jsx", "mjs", "cjs", "ts", "tsx", "mts", "cts", "go", "rs",
    "java", "kt", "kts", "scala", "groovy", "gradle", "rb", "erb", "php", "cs", "fs", "vb", "c",
    "h", "cc", "cpp", "cxx", "hpp", "hh", "m", "mm", "swift", "dart", "lua", "pl", "pm", "r", "jl",
    "ex", "exs", "erl", "hrl", "hs", "ml", "mli", "clj", "cljs", "elm", "zig", "nim", "v", "sh",
    "bash", "zsh", "fish", "ps1", "bat", "cmd", "vue", "svelte", "astro", "html", "htm", "css",
    "scss", "sass", "less", "md", "markdown", "mdx", "rst", "adoc", "tex", "snap", "map", "sql",
    "proto", "graphql", "tf", "nix",
];

/// Extensions of data files: a secret-looking name with one is judged by its content.
const DATA_EXTENSIONS: &[&str] = &[
    "json",
    "jsonc",
    "json5",
    "yaml",
    "yml",
    "toml",
    "ini",
    "cfg",
    "conf",
    "xml",
    "plist",
    "properties",
    "txt",
];

/// Suffixes of committed templates, which hold no secrets.
const TEMPLATE_EXTENSIONS: &[&str] = &["example", "sample", "template", "dist", "tmpl", "tpl"];

/// Backup suffixes that may follow a secret file's name (`server.key.bak`, `id_rsa~`).
const BACKUP_SUFFIXES: &[&str] = &[
    "~", ".bak", ".backup", ".old", ".orig", ".save", ".swp", ".tmp", ".copy", ".prev", ".1", ".2",
];

/// The most of a file read to judge its content; a larger file is judged a secret.
const CONTENT_LIMIT: u64 = 1 << 20;

/// What a file's name says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ByName {
    /// Not a secret, whatever it holds.
    Public,
    /// A secret, whatever it holds.
    Secret,
    /// Its content decides.
    Content(Kind),
}

/// How content is judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// PEM text: secret when a block is a private key or of an unknown kind; without
    /// any block, `unmarked_is_secret` decides (a binary `.key` is a key, a binary `.crt`
    /// a certificate).
    Pem {
        /// Whether non-empty content with no PEM block is a secret.
        unmarked_is_secret: bool,
    },
    /// A data file (`credentials.json`, `app.env.yaml`, `.npmrc`): secret when it names
    /// a secret field (a password, a token, a private key, …).
    Data {
        /// Whether a file of this name is taken for a secret when it cannot be read
        /// (`credentials.json` is; `.npmrc` is not: most hold only a registry's address).
        by_name: bool,
    },
}

/// The verdict of a file name (no directory).
pub fn by_name(name: &str) -> ByName {
    let base = without_backup_suffixes(name);
    let lower = base.to_ascii_lowercase();
    let parts: Vec<&str> = lower.split('.').collect();
    // `.env` has no extension: its one part after the dot is its name.
    let extension = if parts.len() > 1 && !(parts.len() == 2 && parts[0].is_empty()) {
        parts[parts.len() - 1]
    } else {
        ""
    };
    if CODE_EXTENSIONS.contains(&extension) || TEMPLATE_EXTENSIONS.contains(&extension) {
        return ByName::Public;
    }
    let data = DATA_EXTENSIONS.contains(&extension);
    if matches!(extension, "pem" | "key") {
        return ByName::Content(Kind::Pem {
            unmarked_is_secret: true,
        });
    }
    if matches!(extension, "crt" | "cer" | "csr") {
        return ByName::Content(Kind::Pem {
            unmarked_is_secret: false,
        });
    }
    if store(&lower, extension) {
        return ByName::Secret;
    }
    let stem = lower.split('.').next().unwrap_or(&lower);
    let secrets_store = lower.contains('.') && matches!(stem, "secrets" | "secret");
    // Package managers' settings: a registry's token beside public settings.
    if matches!(lower.as_str(), ".npmrc" | ".pypirc") {
        return ByName::Content(Kind::Data { by_name: false });
    }
    // Package managers' settings and direnv's file: a token beside public settings.
    if lower == ".envrc" {
        return ByName::Content(Kind::Data { by_name: false });
    }
    if env_file(&base) || credentials(&lower) || secrets_store {
        return if data {
            ByName::Content(Kind::Data { by_name: true })
        } else {
            ByName::Secret
        };
    }
    ByName::Public
}

/// Whether a file of this name is taken for a secret when its content cannot be read:
/// what a name alone says, for paths that do not exist and for patterns (`server.key`
/// and `credentials.json` are; `server.crt` is not, though a private key inside one
/// would make it one).
pub fn name_may_be_secret(name: &str) -> bool {
    match by_name(name) {
        ByName::Public => false,
        ByName::Secret => true,
        ByName::Content(Kind::Pem { unmarked_is_secret }) => unmarked_is_secret,
        ByName::Content(Kind::Data { by_name }) => by_name,
    }
}

/// Whether a file of this name is worth judging at all (its content may make it a
/// secret): what a scan for secrets collects.
pub fn worth_judging(name: &str) -> bool {
    by_name(name) != ByName::Public
}

/// Whether the file at `path` is a secret: by its name, then, where the name cannot
/// tell, by its content (a file that cannot be read is judged a secret).
pub fn is_secret(path: &Path) -> bool {
    let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
        return false;
    };
    match by_name(name) {
        ByName::Public => false,
        ByName::Secret => true,
        ByName::Content(kind) => match read_head(path) {
            Some(bytes) => content_is_secret(kind, &bytes),
            None => true,
        },
    }
}

/// Whether a file named `name` holding `bytes` (any content, e.g. an older version of
/// it) would be a secret: [`is_secret`] without reading the file.
pub fn content_makes_secret(name: &str, bytes: &[u8]) -> bool {
    match by_name(name) {
        ByName::Public => false,
        ByName::Secret => true,
        ByName::Content(kind) => {
            bytes.len() as u64 > CONTENT_LIMIT || content_is_secret(kind, bytes)
        }
    }
}

/// The file's content when it is at most [`CONTENT_LIMIT`] long and readable.
fn read_head(path: &Path) -> Option<Vec<u8>> {
    let file = std::fs::File::open(path).ok()?;
    let mut bytes = Vec::new();
    file.take(CONTENT_LIMIT + 1).read_to_end(&mut bytes).ok()?;
    (bytes.len() as u64 <= CONTENT_LIMIT).then_some(bytes)
}

/// PEM labels of blocks that hold nothing secret.
const PUBLIC_LABELS: &[&str] = &[
    "CERTIFICATE",
    "TRUSTED CERTIFICATE",
    "X509 CERTIFICATE",
    "X509 CRL",
    "CERTIFICATE REQUEST",
    "NEW CERTIFICATE REQUEST",
    "PUBLIC KEY",
    "RSA PUBLIC KEY",
    "SSH2 PUBLIC KEY",
    "PKCS7",
    "CMS",
    "DH PARAMETERS",
    "X9.42 DH PARAMETERS",
    "EC PARAMETERS",
    "DSA PARAMETERS",
    "ATTRIBUTE CERTIFICATE",
    "PGP PUBLIC KEY BLOCK",
    "PGP SIGNATURE",
    "OCSP RESPONSE",
];

/// Words that name a secret field in a data file.
const SECRET_FIELDS: &[&str] = &[
    "secret",
    "password",
    "passwd",
    "token",
    "private_key",
    "privatekey",
    "private key",
    "api_key",
    "apikey",
    "api-key",
    "access_key",
    "accesskey",
    "credential",
];

/// Whether content of this kind holds a secret.
fn content_is_secret(kind: Kind, bytes: &[u8]) -> bool {
    match kind {
        Kind::Pem { unmarked_is_secret } => {
            let text = String::from_utf8_lossy(bytes);
            let mut blocks = 0;
            for line in text.lines() {
                let Some(rest) = line.trim().strip_prefix("-----BEGIN ") else {
                    continue;
                };
                blocks += 1;
                let label = rest.split("-----").next().unwrap_or(rest).trim();
                if !PUBLIC_LABELS.contains(&label) {
                    return true;
                }
            }
            blocks == 0 && unmarked_is_secret && !text.trim().is_empty()
        }
        Kind::Data { .. } => {
            let lower = String::from_utf8_lossy(bytes).to_ascii_lowercase();
            SECRET_FIELDS.iter().any(|field| lower.contains(field))
        }
    }
}

/// Credential stores by name (`lower`: lower-cased, backup suffixes removed).
fn store(lower: &str, extension: &str) -> bool {
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
    const KEY_STORES: &[&str] = &["p12", "pfx", "jks", "keystore", "kdbx"];
    NAMES.contains(&lower) || KEY_STORES.contains(&extension)
}

/// Dotenv files: `.env`, `.env.local`, `.env-prod`, and `env` as a later dot-separated
/// component (`config.env`, `app.env.production`), except code reading variables
/// (`process.env.X`, `import.meta.env.X`, `Deno.env`, `ctx.env.API_KEY`).
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

/// `credentials`, `credentials.json`, `.git-credentials`, `gcp-credentials.json`, but not a
/// word such as `set-credentials` (`lower`: lower-cased).
fn credentials(lower: &str) -> bool {
    let hidden = lower.starts_with('.');
    let bare = lower.trim_start_matches('.');
    let stem = bare.split('.').next().unwrap_or(bare);
    stem == "credentials" || (stem.ends_with("-credentials") && (hidden || bare.contains('.')))
}

/// A lower-cased name without up to three backup suffixes (`id_rsa.bak.orig` is `id_rsa`).
fn without_backup_suffixes(name: &str) -> String {
    // An editor's autosave (`#.env#`) is the file it saves.
    let name = match name.strip_prefix('#').and_then(|l| l.strip_suffix('#')) {
        Some(inner) if !inner.is_empty() => inner,
        _ => name,
    };
    let mut name = name.to_string();
    for _ in 0..3 {
        let lower = name.to_ascii_lowercase();
        match BACKUP_SUFFIXES
            .iter()
            .find(|s| lower.ends_with(*s) && lower.len() > s.len())
        {
            Some(suffix) => name.truncate(name.len() - suffix.len()),
            None => break,
        }
    }
    name
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The one table: each name with what its name says.
    const TABLE: &[(&str, &str)] = &[
        // Editors' backups and autosaves of a secret, and direnv's file.
        (".env~", "secret"),
        ("#.env#", "secret"),
        (".env.local~", "secret"),
        ("#id_rsa#", "secret"),
        (".envrc", "content"),
        ("#notes.txt#", "public"),
        ("main.rs~", "public"),
        // Source code and documentation are never secret by name.
        ("credentials.py", "public"),
        ("jest.env.js", "public"),
        ("app.env.ts", "public"),
        ("options.env.test.js", "public"),
        ("secrets.ts", "public"),
        ("secret.rs", "public"),
        ("secrets.md", "public"),
        ("env.rs", "public"),
        (".env.js", "public"),
        ("credentials.test.js.snap", "public"),
        // Templates.
        (".env.example", "public"),
        (".env.sample", "public"),
        (".env.template", "public"),
        (".env.dist", "public"),
        (".ENV.EXAMPLE", "public"),
        ("prod.env.example", "public"),
        // Dotenv files.
        (".env", "secret"),
        (".env.local", "secret"),
        (".env.test", "secret"),
        (".env-prod", "secret"),
        ("config.env", "secret"),
        ("app.env.production", "secret"),
        ("$X.env", "secret"),
        (".env.bak", "secret"),
        ("app.env.json", "content"),
        // Keys and certificates.
        ("server.key", "content"),
        ("cert.pem", "content"),
        ("server.key.bak", "content"),
        ("tls.pem~", "content"),
        ("server.crt", "content"),
        ("server.csr", "content"),
        ("id_rsa.pub", "public"),
        // Credential stores.
        ("credentials", "secret"),
        (".git-credentials", "secret"),
        ("credentials.json", "content"),
        ("gcp-credentials.json", "content"),
        ("id_rsa", "secret"),
        ("id_ed25519", "secret"),
        ("id_rsa~", "secret"),
        (".netrc", "secret"),
        (".pgpass", "secret"),
        ("secrets.json", "content"),
        ("secrets.yaml", "content"),
        ("secrets.enc", "secret"),
        ("credentials.yml.enc", "secret"),
        ("cert.p12", "secret"),
        ("app.keystore", "secret"),
        (".npmrc", "content"),
        (".pypirc", "content"),
        // Ordinary names.
        (".venv", "public"),
        ("environment.ts", "public"),
        ("python-dotenv", "public"),
        ("process.env.HOME", "public"),
        ("process.env", "public"),
        ("import.meta.env", "public"),
        ("import.meta.env.VITE_URL", "public"),
        ("ctx.env.API_KEY", "public"),
        ("credentials_test", "public"),
        ("set-credentials", "public"),
        ("id.keys", "public"),
        ("keys.txt", "public"),
        ("monkey", "public"),
        ("secret", "public"),
        ("secrets", "public"),
        ("known_hosts", "public"),
        ("é.env.HOME", "public"),
        ("package.json", "public"),
    ];

    #[test]
    fn the_table_of_names() {
        for (name, want) in TABLE {
            let got = match by_name(name) {
                ByName::Public => "public",
                ByName::Secret => "secret",
                ByName::Content(_) => "content",
            };
            assert_eq!(got, *want, "{name}");
            assert_eq!(worth_judging(name), *want != "public", "{name}");
            // Certificates, package managers' settings and direnv's file: by content only.
            let by_content_only = name.ends_with(".crt")
                || name.ends_with(".csr")
                || [".npmrc", ".pypirc", ".envrc"].contains(name);
            assert_eq!(
                name_may_be_secret(name),
                *want != "public" && !by_content_only,
                "{name}"
            );
        }
    }

    const CERT: &str = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";
    const CRL: &str = "-----BEGIN X509 CRL-----\nMIIB\n-----END X509 CRL-----\n";
    const CSR: &str =
        "-----BEGIN CERTIFICATE REQUEST-----\nMIIB\n-----END CERTIFICATE REQUEST-----\n";
    const KEY: &str = "-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----\n";
    const RSA: &str = "-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----\n";
    const OPENSSH: &str =
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3Bl\n-----END OPENSSH PRIVATE KEY-----\n";

    #[test]
    fn pem_content_is_judged_by_its_blocks() {
        let pem = Kind::Pem {
            unmarked_is_secret: true,
        };
        let crt = Kind::Pem {
            unmarked_is_secret: false,
        };
        for public in [CERT, CRL, CSR, &format!("{CERT}{CERT}{CRL}"), "", "\n"] {
            assert!(!content_is_secret(pem, public.as_bytes()), "{public}");
        }
        for secret in [KEY, RSA, OPENSSH, &format!("{CERT}{KEY}")] {
            assert!(content_is_secret(pem, secret.as_bytes()), "{secret}");
            assert!(content_is_secret(crt, secret.as_bytes()), "{secret}");
        }
        // Unknown blocks and binary keys are secrets; a binary certificate is not.
        let odd = "-----BEGIN SOMETHING NEW-----\nx\n-----END SOMETHING NEW-----\n";
        assert!(content_is_secret(pem, odd.as_bytes()));
        assert!(content_is_secret(pem, &[0x30, 0x82, 0x04, 0xa4]));
        assert!(!content_is_secret(crt, &[0x30, 0x82, 0x04, 0xa4]));
    }

    const DATA: Kind = Kind::Data { by_name: true };

    #[test]
    fn data_content_is_judged_by_its_fields() {
        for secret in [
            r#"{"type": "service_account", "private_key": "x"}"#,
            "aws_secret_access_key = x",
            "password: hunter2",
            r#"{"refresh_token": "x"}"#,
        ] {
            assert!(content_is_secret(DATA, secret.as_bytes()), "{secret}");
        }
        assert!(content_is_secret(
            DATA,
            b"//registry.npmjs.org/:_authToken=npm_x\n"
        ));
        for public in [
            "{}",
            "",
            r#"{"NODE_ENV": "test", "PORT": 3000}"#,
            "registry=https://registry.npmjs.org/\nsave-exact=true\n",
        ] {
            assert!(!content_is_secret(DATA, public.as_bytes()), "{public}");
        }
    }

    #[test]
    fn paths_are_judged_by_name_then_content() {
        let dir = tempfile::tempdir().unwrap();
        let write = |name: &str, text: &str| {
            let path = dir.path().join(name);
            std::fs::write(&path, text).unwrap();
            path
        };
        assert!(!is_secret(&write("ca.pem", CERT)));
        assert!(is_secret(&write("server.pem", KEY)));
        assert!(is_secret(&write("tls.key", KEY)));
        assert!(!is_secret(&write("credentials.py", "PASSWORD = 'x'")));
        assert!(is_secret(&write(".env", "")));
        assert!(!is_secret(&write("credentials.json", "{}")));
        // Unreadable or missing content fails closed.
        assert!(is_secret(&dir.path().join("missing.pem")));
        let big = dir.path().join("bundle.pem");
        std::fs::write(&big, CERT.repeat((CONTENT_LIMIT as usize / CERT.len()) + 2)).unwrap();
        assert!(is_secret(&big));
    }
}
