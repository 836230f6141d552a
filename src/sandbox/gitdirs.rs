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
//! it ends (`Plan::sweep`).

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
