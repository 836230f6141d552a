//! Which git paths of a project the sandbox protects, and the ones it must keep from
//! appearing: everything git reads that could make a later `git` run by the user (outside
//! the sandbox) execute code or read another repository's configuration.
//!
//! The repository is the one git itself would find from `--dir`: `<dir>/.git`, or else the
//! nearest ancestor's `.git` (a project that is a subdirectory of a checkout, whose git
//! directory may lie in a writable `/tmp`). Its `.git` is either
//! - a directory: anchored (a mount point of its own, so it cannot be renamed or removed);
//! - a file (`gitdir: <path>`, a linked worktree or a submodule): bound read-only, so it
//!   cannot be pointed at a planted git directory; the directory it names is protected.
//!
//! In a full git directory (the main one, the common one of a linked worktree, every
//! `modules/*` below it, nested modules included): `config` and `hooks/` (created empty
//! when missing) are read-only; `commondir` (which would redirect config and hooks
//! elsewhere) is read-only when present and otherwise must stay absent; the `.git` file of
//! the work tree its `core.worktree` names (a submodule's) is read-only. In a linked
//! worktree's own directory (`worktrees/*`, or the one a `.git` file names): `commondir`
//! and `config.worktree` are read-only when present; `config.worktree` must stay absent
//! only where the common config enables `extensions.worktreeConfig`.
//!
//! A path that must stay absent cannot be bound (mounts need an existing target):
//! [`Layout::absent`] lists them and the plan removes any the command created as soon as
//! it ends (`Plan::sweep`). Likewise where `--dir` has no `.git` of its own: one the
//! command creates there ([`Layout::fresh`]) is protected from the next call on, and
//! what it planted in it during this one (hooks that are not samples, a `commondir`,
//! config settings that run a program: `core.fsmonitor`, filters, `!` aliases, …) is
//! removed ([`sweep_fresh`]).

use std::path::{Path, PathBuf};

/// What the plan does with a project's git paths.
#[derive(Debug, Default)]
pub(crate) struct Layout {
    /// Directories made mount points of their own.
    pub anchors: Vec<PathBuf>,
    /// Files and directories bound read-only.
    pub protected: Vec<PathBuf>,
    /// Paths that do not exist and must not be created.
    pub absent: Vec<PathBuf>,
    /// Where `--dir` has no `.git`: the one a command could create there.
    pub fresh: Option<PathBuf>,
}

/// How deep `modules/*/modules/*` nesting is followed.
const MODULE_DEPTH: usize = 4;

/// The `.git` entry git would use for `dir`: its own, else the nearest ancestor's.
fn dot_git(dir: &Path) -> Option<PathBuf> {
    dir.ancestors()
        .map(|a| a.join(".git"))
        .find(|p| std::fs::symlink_metadata(p).is_ok())
}

/// The directory a `.git` file or a `commondir` file names, relative to `base`.
fn named_by(file: &Path, prefix: &str, base: &Path) -> Option<PathBuf> {
    let text = std::fs::read_to_string(file).ok()?;
    let target = text.trim();
    let target = if prefix.is_empty() {
        target
    } else {
        target.strip_prefix(prefix)?.trim()
    };
    (!target.is_empty()).then(|| base.join(target))
}

/// The layout for the project in `dir` (module doc).
pub(crate) fn layout(dir: &Path) -> Layout {
    let mut out = Layout::default();
    let own = dir.join(".git");
    if std::fs::symlink_metadata(&own).is_err() {
        // A repository the command creates (nested in a checkout or not).
        out.fresh = Some(own);
    }
    let Some(entry) = dot_git(dir) else {
        return out;
    };
    let Ok(meta) = std::fs::symlink_metadata(&entry) else {
        return out;
    };
    let mut full = Vec::new();
    if meta.is_dir() {
        full.push(entry);
    } else {
        out.protected.push(entry.clone());
        let base = entry.parent().unwrap_or(dir).to_path_buf();
        if let Some(real) = named_by(&entry, "gitdir:", &base) {
            match named_by(&real.join("commondir"), "", &real) {
                Some(common) => {
                    full.push(common);
                    out.worktree(&real, full.first());
                }
                // A submodule's `.git` file names a full git directory.
                None => full.push(real),
            }
        }
    }
    let mut depth = 0;
    while !full.is_empty() && depth <= MODULE_DEPTH {
        let mut next = Vec::new();
        for git in &full {
            out.full(git);
            if let Ok(entries) = std::fs::read_dir(git.join("worktrees")) {
                for e in entries.flatten() {
                    if e.path().is_dir() {
                        out.worktree(&e.path(), Some(git));
                    }
                }
            }
            if let Ok(entries) = std::fs::read_dir(git.join("modules")) {
                next.extend(
                    entries
                        .flatten()
                        .map(|e| e.path())
                        .filter(|p| p.is_dir() && p.join("config").exists()),
                );
            }
        }
        full = next;
        depth += 1;
    }
    out
}

impl Layout {
    /// A full git directory: config, hooks, commondir.
    fn full(&mut self, git: &Path) {
        let hooks = git.join("hooks");
        if !hooks.exists() {
            // A missing hooks folder could be created and planted: it is created (empty,
            // as `git init` would) so that it can be bound read-only.
            let _ = std::fs::create_dir(&hooks);
        }
        self.anchors.push(git.to_path_buf());
        self.protected.push(git.join("config"));
        self.protected.push(hooks);
        self.present_or_absent(git.join("commondir"));
        // A submodule's work tree has a `.git` file naming this directory: rewritten, it
        // would send git (`git status` recurses into submodules) to a planted one.
        if let Some(tree) = core_worktree(git) {
            let file = tree.join(".git");
            if std::fs::symlink_metadata(&file).is_ok_and(|m| m.is_file()) {
                self.protected.push(file);
            }
        }
        if worktree_config(git) {
            self.present_or_absent(git.join("config.worktree"));
        }
    }

    /// A linked worktree's own directory, whose common directory is `common`.
    fn worktree(&mut self, own: &Path, common: Option<&PathBuf>) {
        self.anchors.push(own.to_path_buf());
        let commondir = own.join("commondir");
        if commondir.exists() {
            self.protected.push(commondir);
        }
        let config = own.join("config.worktree");
        if config.exists() {
            self.protected.push(config);
        } else if common.is_some_and(|c| worktree_config(c)) {
            self.absent.push(config);
        }
    }

    fn present_or_absent(&mut self, path: PathBuf) {
        if std::fs::symlink_metadata(&path).is_ok() {
            self.protected.push(path);
        } else {
            self.absent.push(path);
        }
    }
}

/// The `core.worktree` of the config of `git` (relative to `git`), as a submodule's git
/// directory records its work tree.
fn core_worktree(git: &Path) -> Option<PathBuf> {
    let text = std::fs::read_to_string(git.join("config")).ok()?;
    text.lines().find_map(|line| {
        let (key, value) = line.split_once('=')?;
        key.trim()
            .eq_ignore_ascii_case("worktree")
            .then(|| git.join(value.trim()))
    })
}

/// Whether the config of `git` enables `extensions.worktreeConfig`.
fn worktree_config(git: &Path) -> bool {
    std::fs::read_to_string(git.join("config"))
        .map(|t| t.to_ascii_lowercase().contains("worktreeconfig"))
        .unwrap_or(false)
}

/// In a repository created during the call at `fresh`: removes what `git init` never
/// writes and a later `git` run by the user would execute or follow — a hook that is not
/// a `*.sample`, a `commondir`, a `config.worktree`, config settings that run something,
/// or `fresh` itself when it is a `.git` file or link — and returns what it removed.
pub(crate) fn sweep_fresh(fresh: &Path) -> Vec<PathBuf> {
    match std::fs::symlink_metadata(fresh) {
        Ok(meta) if meta.is_dir() => {}
        // A `.git` file or link would send git to a directory planted elsewhere.
        Ok(_) => return sweep(&[fresh.to_path_buf()]),
        Err(_) => return Vec::new(),
    }
    let mut planted: Vec<PathBuf> = std::fs::read_dir(fresh.join("hooks"))
        .map(|entries| {
            entries
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_none_or(|x| x != "sample"))
                .collect()
        })
        .unwrap_or_default();
    planted.push(fresh.join("commondir"));
    planted.push(fresh.join("config.worktree"));
    let mut removed = sweep(&planted);
    let config = fresh.join("config");
    if let Ok(text) = std::fs::read_to_string(&config)
        && let Some(kept) = without_commands(&text)
        && std::fs::write(&config, kept).is_ok()
    {
        removed.push(config);
    }
    removed
}

/// Whether `key` (lowercase) in section `base` (lowercase, without its subsection) makes
/// git run a program, follow another repository or read another file.
fn runs_something(base: &str, sub: bool, key: &str, value: &str) -> bool {
    match base {
        "core" => matches!(
            key,
            "fsmonitor"
                | "hookspath"
                | "sshcommand"
                | "editor"
                | "pager"
                | "askpass"
                | "gitproxy"
                | "worktree"
        ),
        "sequence" => key == "editor",
        "diff" => key == "external" || (sub && matches!(key, "textconv" | "command")),
        "filter" => sub,
        "merge" => sub && key == "driver",
        "credential" | "pager" | "include" | "includeif" | "browser" | "man" => true,
        "gpg" => key == "program",
        "alias" => value.trim_start().starts_with('!'),
        "remote" => sub && matches!(key, "uploadpack" | "receivepack" | "vcs"),
        "uploadpack" => key == "packobjectshook",
        "web" => key == "browser",
        "extensions" => key == "worktreeconfig",
        _ => false,
    }
}

/// `text` (a git config file) without the settings that run something
/// ([`runs_something`]); `None` when it has none. A line-level filter: a section header
/// is `[name]`, `[name "sub"]` or `[name.sub]`; a setting is `key = value` or `key`; a
/// value ending in `\` continues on the next line, which goes with it.
fn without_commands(text: &str) -> Option<String> {
    let mut out = String::with_capacity(text.len());
    let (mut base, mut sub) = (String::new(), false);
    let mut dropping = false;
    let mut continued = false;
    let mut changed = false;
    for line in text.split_inclusive('\n') {
        let trimmed = line.trim();
        if continued {
            continued = trimmed.ends_with('\\');
            if dropping {
                continue;
            }
            out.push_str(line);
            continue;
        }
        dropping = false;
        if let Some(header) = trimmed.strip_prefix('[') {
            let name = header.split(']').next().unwrap_or_default().trim();
            let (head, rest) = match name.find([' ', '.']) {
                Some(at) => (&name[..at], &name[at..]),
                None => (name, ""),
            };
            base = head.to_ascii_lowercase();
            sub = !rest.trim().is_empty();
            out.push_str(line);
            continue;
        }
        if !trimmed.is_empty() && !trimmed.starts_with(['#', ';']) {
            let (key, value) = trimmed.split_once('=').unwrap_or((trimmed, ""));
            let key = key.trim().to_ascii_lowercase();
            if runs_something(&base, sub, &key, value) {
                dropping = true;
                changed = true;
                continued = trimmed.ends_with('\\');
                continue;
            }
            continued = trimmed.ends_with('\\');
        }
        out.push_str(line);
    }
    changed.then_some(out)
}

/// Removes each of `absent` that exists now (whatever it is: file, link or directory);
/// returns the ones removed.
pub(crate) fn sweep(absent: &[PathBuf]) -> Vec<PathBuf> {
    let mut removed = Vec::new();
    for path in absent {
        let Ok(meta) = std::fs::symlink_metadata(path) else {
            continue;
        };
        let gone = if meta.is_dir() {
            std::fs::remove_dir_all(path)
        } else {
            std::fs::remove_file(path)
        };
        if gone.is_ok() {
            removed.push(path.clone());
        }
    }
    removed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_that_run_something_are_dropped_and_the_rest_kept() {
        let config = "[core]\n\trepositoryformatversion = 0\n\tfsmonitor = echo pwn\n\tbare = false\n\
                      [filter \"x\"]\n\tclean = evil \\\n\t  more\n[alias]\n\tst = status\n\tp = !sh -c pwn\n\
                      [remote \"origin\"]\n\turl = ../o\n\tuploadpack = evil\n[include]\n\tpath = /tmp/x\n";
        let kept = without_commands(config).unwrap();
        for gone in ["fsmonitor", "clean", "more", "!sh", "uploadpack", "/tmp/x"] {
            assert!(!kept.contains(gone), "{gone}: {kept}");
        }
        for stays in [
            "repositoryformatversion",
            "bare = false",
            "st = status",
            "url = ../o",
        ] {
            assert!(kept.contains(stays), "{stays}: {kept}");
        }
        assert_eq!(without_commands("[core]\n\tbare = false\n"), None);
    }
}
