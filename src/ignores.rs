//! Ignore files for `grep` and `glob`: the rules ripgrep and fd
//! apply by default, decided here so that the walk can count and name what they prune.
//!
//! The walker of the `ignore` crate can apply these files itself, but then an ignored
//! entry is dropped before any filter sees it, and the summary line could not say that
//! `target/` was left out. So the walk applies no ignore files and asks [`IgnoreRules`]
//! about each entry instead, with ripgrep's rules:
//!
//! - In every directory from the file system root down to the entry's directory, `.ignore`
//!   and `.gitignore` (gitignore syntax, patterns relative to that directory) are read, and
//!   `.git/info/exclude` where a `.git` entry (a directory, or a worktree's `gitdir:` file)
//!   marks a repository; git's global excludes (`core.excludesFile`, else
//!   `$XDG_CONFIG_HOME/git/ignore`) are read once per call.
//! - `.gitignore`, `info/exclude` and the global excludes count only inside a git
//!   repository (a `.git` in the entry's directory or above it), and only up to the nearest
//!   repository's root: an outer repository's files do not reach into a nested one.
//!   `.ignore` counts everywhere.
//! - Within one kind of file the nearest directory's decision wins (so `!keep.log` below
//!   overrides `*.log` above); across kinds `.ignore` wins over `.gitignore`, which wins
//!   over `info/exclude`, which wins over the global excludes. A whitelist match (`!x`)
//!   means "not ignored".
//! - Hidden files are not skipped (grep and glob search them) and the search root itself is
//!   never judged: an explicit `path` inside an ignored directory is searched.
//!
//! A file that cannot be read or parsed counts as empty. Directory layers are loaded once
//! per call, when the walk first meets an entry in them, and shared between the walker
//! threads.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use ignore::Match;
use ignore::gitignore::{Gitignore, GitignoreBuilder};

/// The ignore rules of one search: git's global excludes and the layers of the directories
/// met so far.
pub struct IgnoreRules {
    global: Option<Gitignore>,
    layers: Mutex<HashMap<PathBuf, Arc<Layer>>>,
}

/// The ignore files of one directory, linked to its parent's.
struct Layer {
    parent: Option<Arc<Layer>>,
    dot_ignore: Option<Gitignore>,
    gitignore: Option<Gitignore>,
    exclude: Option<Gitignore>,
    /// A `.git` entry is here: this directory is a repository's root.
    has_git: bool,
    /// This directory or one above it is a repository's root.
    in_git: bool,
    /// This layer or one above it has rules (when not, only the global excludes can match).
    any_rules: bool,
}

impl IgnoreRules {
    /// The rules for a walk below `root` (an absolute path), with git's global excludes
    /// as the environment's git configuration names them.
    pub fn new(root: &Path) -> IgnoreRules {
        let (global, _) = GitignoreBuilder::new(root).build_global();
        IgnoreRules {
            global: (!global.is_empty()).then_some(global),
            layers: Mutex::new(HashMap::new()),
        }
    }

    /// Whether the entry at `path` (a directory when `is_dir`) is ignored by the rules of
    /// the directories above it.
    pub fn is_ignored(&self, path: &Path, is_dir: bool) -> bool {
        let Some(dir) = path.parent() else {
            return false;
        };
        let layer = self.layer(dir);
        let global_applies = layer.in_git && self.global.is_some();
        if !layer.any_rules && !global_applies {
            return false;
        }
        let mut dot_ignore = None;
        let mut gitignore = None;
        let mut exclude = None;
        let mut past_repository_root = false;
        let mut current = Some(&layer);
        while let Some(here) = current {
            if dot_ignore.is_none() {
                dot_ignore = decision(here.dot_ignore.as_ref(), path, is_dir);
            }
            if layer.in_git && !past_repository_root {
                if gitignore.is_none() {
                    gitignore = decision(here.gitignore.as_ref(), path, is_dir);
                }
                if exclude.is_none() {
                    exclude = decision(here.exclude.as_ref(), path, is_dir);
                }
            }
            past_repository_root |= here.has_git;
            current = here.parent.as_ref();
        }
        let global = if layer.in_git {
            decision(self.global.as_ref(), path, is_dir)
        } else {
            None
        };
        dot_ignore
            .or(gitignore)
            .or(exclude)
            .or(global)
            .unwrap_or(false)
    }

    /// The layer of `dir`, loaded (with the layers above it) when first needed.
    fn layer(&self, dir: &Path) -> Arc<Layer> {
        if let Some(layer) = self.lock().get(dir) {
            return Arc::clone(layer);
        }
        let parent = dir.parent().map(|parent| self.layer(parent));
        // Loaded without the lock held, so threads entering different directories read
        // their ignore files at the same time; a layer two threads loaded at once is kept
        // once.
        let layer = Arc::new(Layer::load(dir, parent));
        Arc::clone(self.lock().entry(dir.to_path_buf()).or_insert(layer))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<PathBuf, Arc<Layer>>> {
        self.layers.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// One file's decision: `Some(true)` ignored, `Some(false)` whitelisted, `None` no rule.
fn decision(rules: Option<&Gitignore>, path: &Path, is_dir: bool) -> Option<bool> {
    match rules?.matched(path, is_dir) {
        Match::None => None,
        Match::Ignore(_) => Some(true),
        Match::Whitelist(_) => Some(false),
    }
}

impl Layer {
    fn load(dir: &Path, parent: Option<Arc<Layer>>) -> Layer {
        let dot_ignore = rules_file(dir, &dir.join(".ignore"));
        let gitignore = rules_file(dir, &dir.join(".gitignore"));
        let git = dir.join(".git");
        let has_git = std::fs::symlink_metadata(&git).is_ok();
        let exclude = if has_git {
            git_common_dir(&git).and_then(|common| rules_file(dir, &common.join("info/exclude")))
        } else {
            None
        };
        let parent_in_git = parent.as_ref().is_some_and(|p| p.in_git);
        let parent_rules = parent.as_ref().is_some_and(|p| p.any_rules);
        Layer {
            in_git: has_git || parent_in_git,
            any_rules: parent_rules
                || dot_ignore.is_some()
                || gitignore.is_some()
                || exclude.is_some(),
            parent,
            dot_ignore,
            gitignore,
            exclude,
            has_git,
        }
    }
}

/// The rules of one ignore file, relative to `root`; `None` when it is missing, unreadable
/// or has no rules.
fn rules_file(root: &Path, file: &Path) -> Option<Gitignore> {
    let bytes = std::fs::read(file).ok()?;
    let text = String::from_utf8_lossy(&bytes);
    let mut builder = GitignoreBuilder::new(root);
    for line in text.lines() {
        // A line that is not a valid glob is left out, as git does.
        let _ = builder.add_line(Some(file.to_path_buf()), line);
    }
    builder.build().ok().filter(|rules| !rules.is_empty())
}

/// The directory holding `info/exclude` for the repository whose `.git` entry is `git`:
/// the directory itself, or for a worktree (a `gitdir: PATH` file) the main repository's
/// directory that the worktree's `commondir` names.
fn git_common_dir(git: &Path) -> Option<PathBuf> {
    if git.is_dir() {
        return Some(git.to_path_buf());
    }
    let text = std::fs::read_to_string(git).ok()?;
    let gitdir = text.strip_prefix("gitdir:")?.trim();
    let gitdir = git.parent()?.join(gitdir);
    match std::fs::read_to_string(gitdir.join("commondir")) {
        Ok(common) => Some(gitdir.join(common.trim())),
        Err(_) => Some(gitdir),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn put(root: &Path, rel: &str, text: &str) {
        let path = root.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    #[test]
    fn gitignore_counts_only_inside_a_repository_and_ignore_everywhere() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("plain");
        put(&root, ".gitignore", "target/\n");
        put(&root, ".ignore", "dist/\n");
        let rules = IgnoreRules::new(&root);
        assert!(!rules.is_ignored(&root.join("target"), true));
        assert!(rules.is_ignored(&root.join("dist"), true));
        std::fs::create_dir_all(root.join(".git/info")).unwrap();
        let rules = IgnoreRules::new(&root);
        assert!(rules.is_ignored(&root.join("target"), true));
        assert!(
            !rules.is_ignored(&root.join("target"), false),
            "dir-only rule"
        );
        assert!(rules.is_ignored(&root.join("dist"), true));
    }

    #[test]
    fn nearest_wins_whitelists_and_kinds_keep_their_order() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("repo");
        std::fs::create_dir_all(root.join(".git/info")).unwrap();
        put(&root, ".git/info/exclude", "*.tmp\n");
        put(&root, ".gitignore", "*.log\n/build\n");
        put(&root, "sub/.gitignore", "!keep.log\n");
        put(&root, "sub/.ignore", "*.tmp\n!special.log\n");
        let rules = IgnoreRules::new(&root);
        assert!(rules.is_ignored(&root.join("a.log"), false));
        assert!(rules.is_ignored(&root.join("deep/a.log"), false));
        assert!(!rules.is_ignored(&root.join("sub/keep.log"), false));
        assert!(rules.is_ignored(&root.join("sub/other.log"), false));
        assert!(rules.is_ignored(&root.join("x.tmp"), false));
        assert!(rules.is_ignored(&root.join("build"), true));
        assert!(!rules.is_ignored(&root.join("sub/build"), true), "anchored");
        assert!(!rules.is_ignored(&root.join("a.rs"), false));
    }

    #[test]
    fn an_outer_repository_stops_at_a_nested_one() {
        let tmp = tempfile::tempdir().unwrap();
        let outer = tmp.path().join("outer");
        std::fs::create_dir_all(outer.join(".git")).unwrap();
        put(&outer, ".gitignore", "*.gen\n");
        std::fs::create_dir_all(outer.join("inner/.git")).unwrap();
        let rules = IgnoreRules::new(&outer);
        assert!(rules.is_ignored(&outer.join("a.gen"), false));
        assert!(!rules.is_ignored(&outer.join("inner/a.gen"), false));
    }

    #[test]
    fn a_worktree_reads_the_main_repositorys_exclude() {
        let tmp = tempfile::tempdir().unwrap();
        let main = tmp.path().join("main");
        put(&main, ".git/info/exclude", "secret.txt\n");
        put(&main, ".git/worktrees/wt/commondir", "../..\n");
        let wt = tmp.path().join("wt");
        put(
            &wt,
            ".git",
            &format!("gitdir: {}\n", main.join(".git/worktrees/wt").display()),
        );
        let rules = IgnoreRules::new(&wt);
        assert!(rules.is_ignored(&wt.join("secret.txt"), false));
        assert!(!rules.is_ignored(&wt.join("public.txt"), false));
    }
}
