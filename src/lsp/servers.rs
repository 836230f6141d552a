//! Which language a file is in and which server checks it: the standard servers looked up
//! on `PATH`, or the command the config names.

use std::path::{Path, PathBuf};

use crate::config::Lsp;

/// A language tinytool knows a server for.
#[derive(Debug)]
pub struct Language {
    /// Its name in the config (`lsp.servers.<name>`) and in results.
    pub name: &'static str,
    /// The file extensions it covers.
    extensions: &'static [&'static str],
    /// The standard servers, in order of preference.
    candidates: &'static [&'static [&'static str]],
    /// How to get a server, for a result that has none.
    pub install: &'static str,
}

/// The languages, each with its standard servers.
pub const LANGUAGES: &[Language] = &[
    Language {
        name: "python",
        extensions: &["py", "pyi"],
        candidates: &[
            &["pyright-langserver", "--stdio"],
            &["basedpyright-langserver", "--stdio"],
        ],
        install: "npm install -g pyright (or pip install basedpyright)",
    },
    Language {
        name: "typescript",
        extensions: &["ts", "tsx", "mts", "cts", "js", "jsx", "mjs", "cjs"],
        candidates: &[&["typescript-language-server", "--stdio"]],
        install: "npm install -g typescript-language-server typescript",
    },
    Language {
        name: "rust",
        extensions: &["rs"],
        candidates: &[&["rust-analyzer"]],
        install: "rustup component add rust-analyzer",
    },
    Language {
        name: "go",
        extensions: &["go"],
        candidates: &[&["gopls"]],
        install: "go install golang.org/x/tools/gopls@latest",
    },
    Language {
        name: "c",
        extensions: &["c", "h", "cc", "cpp", "cxx", "hpp", "hh", "hxx"],
        candidates: &[&["clangd"]],
        install: "apt-get install clangd (or your system's clangd package)",
    },
];

/// The language of `path`, by its extension.
pub fn language_of(path: &Path) -> Option<&'static Language> {
    let extension = path.extension()?.to_str()?.to_ascii_lowercase();
    LANGUAGES
        .iter()
        .find(|l| l.extensions.contains(&extension.as_str()))
}

/// The language by its config name.
pub fn language_named(name: &str) -> Option<&'static Language> {
    LANGUAGES.iter().find(|l| l.name == name)
}

/// The LSP `languageId` of `path` (`didOpen`).
pub fn language_id(path: &Path) -> &'static str {
    let extension = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
        .unwrap_or_default();
    match extension.as_str() {
        "py" | "pyi" => "python",
        "ts" | "mts" | "cts" => "typescript",
        "tsx" => "typescriptreact",
        "js" | "mjs" | "cjs" => "javascript",
        "jsx" => "javascriptreact",
        "rs" => "rust",
        "go" => "go",
        "c" | "h" => "c",
        _ => "cpp",
    }
}

/// The server of a language, or why there is none.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Found {
    /// This command runs it.
    Server {
        /// Program (resolved on `PATH`) and arguments.
        argv: Vec<String>,
        /// The command as the config or the standard list names it: what the policy judges.
        named: Vec<String>,
        /// Its name in results (the program's file name).
        name: String,
        /// The project config named the command: it runs only when the user policy allows it.
        from_project: bool,
    },
    /// None runs for the language.
    None {
        /// Why, with what to do.
        why: String,
    },
}

/// The server for `language` under `config`.
pub fn find(config: &Lsp, language: &Language) -> Found {
    if !config.enabled {
        return Found::None {
            why: "diagnostics are off (lsp.enabled is false)".to_string(),
        };
    }
    let set = config.servers.get(language.name);
    if set.and_then(|s| s.enabled) == Some(false) {
        return Found::None {
            why: format!(
                "the {} server is off (lsp.servers.{}.enabled is false)",
                language.name, language.name
            ),
        };
    }
    if let Some(set) = set
        && let Some(command) = &set.command
    {
        return match command.split_first().and_then(|(p, _)| on_path(p)) {
            Some(program) => Found::Server {
                argv: std::iter::once(program.to_string_lossy().into_owned())
                    .chain(command[1..].iter().cloned())
                    .collect(),
                named: command.clone(),
                name: file_name(&command[0]),
                from_project: set.from_project,
            },
            None => Found::None {
                why: format!(
                    "the configured server `{}` (lsp.servers.{}.command) is not installed",
                    command.join(" "),
                    language.name
                ),
            },
        };
    }
    for candidate in language.candidates {
        if let Some(program) = on_path(candidate[0])
            && works(candidate[0], &program)
        {
            return Found::Server {
                argv: std::iter::once(program.to_string_lossy().into_owned())
                    .chain(candidate[1..].iter().map(|a| a.to_string()))
                    .collect(),
                named: candidate.iter().map(|a| a.to_string()).collect(),
                name: candidate[0].to_string(),
                from_project: false,
            };
        }
    }
    let names: Vec<&str> = language.candidates.iter().map(|c| c[0]).collect();
    Found::None {
        why: format!(
            "no {} language server is installed ({} not found on PATH); install one \
             ({}) or name it in lsp.servers.{}.command",
            language.name,
            names.join(", "),
            language.install,
            language.name
        ),
    }
}

fn file_name(program: &str) -> String {
    Path::new(program)
        .file_name()
        .map_or_else(|| program.to_string(), |n| n.to_string_lossy().into_owned())
}

/// The program `name` resolves to: itself when it holds a `/`, else the first executable
/// file of that name on `PATH`.
pub fn on_path(name: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let executable = |path: &Path| {
        std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    if name.contains('/') {
        let path = PathBuf::from(name);
        return executable(&path).then_some(path);
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .filter(|dir| dir.is_absolute())
        .map(|dir| dir.join(name))
        .find(|candidate| executable(candidate))
}

/// Whether a found program is a working server. rustup installs `rust-analyzer` as a proxy
/// even when the component is missing (it then fails with "Unknown binary"), so that one
/// is asked for its version; the others are taken as found.
///
/// The answer is kept for [`PROBE_KEEP`] in the user's cache (the proxy takes a quarter of
/// a second to answer, which every edit of a Rust file would pay), keyed by the program's
/// identity.
fn works(name: &str, program: &Path) -> bool {
    if name != "rust-analyzer" {
        return true;
    }
    let Ok(meta) = std::fs::metadata(program) else {
        return false;
    };
    let key = {
        use std::hash::{Hash, Hasher};
        use std::os::unix::fs::MetadataExt;
        let mut hasher = std::hash::DefaultHasher::new();
        (
            program,
            meta.len(),
            meta.mtime(),
            meta.mtime_nsec(),
            meta.ino(),
        )
            .hash(&mut hasher);
        format!("{name}-{:016x}", hasher.finish())
    };
    let file = super::cache_root().join("probes").join(key);
    let now = std::time::SystemTime::now();
    if let Ok(known) = std::fs::read_to_string(&file)
        && std::fs::metadata(&file)
            .and_then(|m| m.modified())
            .is_ok_and(|at| now.duration_since(at).is_ok_and(|age| age < PROBE_KEEP))
    {
        return known.trim() == "works";
    }
    let works = probe(program);
    if let Some(folder) = file.parent()
        && std::fs::create_dir_all(folder).is_ok()
    {
        let _ = crate::atomic::write(&file, if works { b"works\n" } else { b"broken\n" }, 0o644);
    }
    works
}

/// How long a probe's answer is kept.
const PROBE_KEEP: std::time::Duration = std::time::Duration::from_secs(600);

/// Whether `program --version` succeeds.
fn probe(program: &Path) -> bool {
    crate::process::command::run_collect(
        &[
            program.to_string_lossy().into_owned(),
            "--version".to_string(),
        ],
        Path::new("/"),
        None,
        std::time::Duration::from_secs(10),
        4096,
        None,
    )
    .is_ok_and(|done| done.outcome.ending.exit_code() == Some(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_language_the_config_accepts_has_servers() {
        let names: Vec<&str> = LANGUAGES.iter().map(|l| l.name).collect();
        assert_eq!(names, crate::config::LSP_LANGUAGES);
        assert_eq!(language_of(Path::new("a/b.PY")).unwrap().name, "python");
        assert_eq!(language_of(Path::new("x.tsx")).unwrap().name, "typescript");
        assert!(language_of(Path::new("Makefile")).is_none());
        assert_eq!(language_id(Path::new("x.tsx")), "typescriptreact");
    }

    #[test]
    fn a_missing_server_says_what_to_install_and_the_setting() {
        let mut config = Lsp::default();
        config.servers.insert(
            "python".into(),
            crate::config::LspServer {
                command: Some(vec!["no-such-server-xyz".into()]),
                ..Default::default()
            },
        );
        let python = language_named("python").unwrap();
        match find(&config, python) {
            Found::None { why } => assert!(why.contains("lsp.servers.python.command"), "{why}"),
            other => panic!("{other:?}"),
        }
        config.servers.clear();
        config.enabled = false;
        assert!(
            matches!(find(&config, python), Found::None { why } if why.contains("lsp.enabled"))
        );
    }
}
