//! Where a path that does not exist was probably meant to point: the `Did you mean:` of a
//! file that is not found, and of a refusal for a path outside the project that is not
//! there either.
//!
//! A model's usual slips with paths, and how each is answered, first that finds something:
//!
//! 1. **Exact rewrites**, each naming one path: `\` read as `/` (`src\click\globals.py`);
//!    the longest tail of the path that exists under the project, which takes off the
//!    project's own folder name in front (`click/src/click/globals.py` when the project is
//!    `…/click`), any other leading folders, or the `/` of a project path written as
//!    absolute (`/src/click/globals.py`). A tail of one component only when it is a folder
//!    (`click/src` → `src`): a file's base name is rule 2's, which names all its
//!    candidates.
//! 2. **The same base name** elsewhere in the project (`globals.py` →
//!    `src/click/globals.py`), found by a bounded walk ([`MAX_ENTRIES`] entries, breadth
//!    first, never into the folders that are not the project's ([`crate::skip_dirs`]) nor
//!    into what the ignore files leave out ([`crate::ignores`]), symlinks not followed).
//!    At most [`MAX_LISTED`] are named: those whose trailing folders agree most with the
//!    path asked for, then the shallowest, then by name; an exact-case name before one that
//!    differs only in case.
//! 3. **A sibling** whose name shares the longest prefix (three characters or more,
//!    ignoring case) with the missing name (`conf.yaml` → `config.toml`).
//!
//! Every path named exists, and passes the caller's `keep` (the policy's read judgement:
//! a suggestion must not reveal a file the model may not read). For a file about to be
//! created ([`Want::Creatable`]), rule 1 also accepts a tail whose folder exists under the
//! project (`/src/click/new.py` → `src/click/new.py`).

use std::collections::VecDeque;
use std::ffi::OsStr;
use std::path::{Component, Path, PathBuf};

use crate::ignores::IgnoreRules;
use crate::skip_dirs::NotProject;

/// Most paths one suggestion names.
pub const MAX_LISTED: usize = 5;
/// Most directory entries the base-name walk looks at: enough for a large project's own
/// files, a bound for a home directory opened by mistake.
pub const MAX_ENTRIES: usize = 50_000;
/// Most same-named files the walk keeps for ranking (each costs a path).
const MAX_CANDIDATES: usize = 1_000;

/// What the missing path was for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Want {
    /// A path that should exist (read, edit, update, delete).
    Existing,
    /// A file that may be created: an existing file, or a place whose folder exists.
    Creatable,
}

/// What was found for one missing path.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Found {
    /// The paths to name, best first (absolute, existing), at most [`MAX_LISTED`].
    pub paths: Vec<PathBuf>,
    /// Further files of the same base name the walk saw and did not name.
    pub more: usize,
    /// The base name the walk looked for, when the paths came from it.
    pub name: Option<String>,
}

impl Found {
    /// The sentence that names the paths (`Did you mean: X?`, `Did you mean one of: X,
    /// Y?`, with how many more share the name), each shown by `show`; `None` when there is
    /// none.
    pub fn sentence(&self, show: impl Fn(&Path) -> String) -> Option<String> {
        let shown: Vec<String> = self.paths.iter().map(|p| show(p)).collect();
        let mut text = match shown.as_slice() {
            [] => return None,
            [one] => format!("Did you mean: {one}?"),
            many => format!("Did you mean one of: {}?", many.join(", ")),
        };
        if self.more > 0
            && let Some(name) = &self.name
        {
            text.push_str(&format!(
                " ({} more files are named {name}: glob `**/{name}` lists them)",
                self.more
            ));
        }
        Some(text)
    }
}

/// Suggestions for `path` (resolved, absolute), which does not exist, in the project
/// `dir` (resolved): see the module doc. `keep` decides whether a path may be named;
/// `not_project` is the list of folders no walk enters.
pub fn missing(
    dir: &Path,
    path: &Path,
    want: Want,
    not_project: &NotProject,
    keep: &dyn Fn(&Path) -> bool,
) -> Found {
    let forms = forms(dir, path);
    for parts in &forms {
        if let Some(found) = rewrite(dir, parts, want, keep) {
            return Found {
                paths: vec![found],
                ..Found::default()
            };
        }
    }
    let Some(name) = forms.last().and_then(|parts| parts.last()).cloned() else {
        return Found::default();
    };
    let tail = forms.last().cloned().unwrap_or_default();
    let (paths, more) = same_name(dir, &name, &tail, not_project, keep);
    if !paths.is_empty() {
        return Found {
            paths,
            more,
            name: Some(name),
        };
    }
    Found {
        paths: sibling(path).filter(|p| keep(p)).into_iter().collect(),
        ..Found::default()
    }
}

/// The components of `path` as the model may have meant them: relative to `dir` when it
/// is inside (absolute otherwise), and again with every `\` read as `/` when it has one.
fn forms(dir: &Path, path: &Path) -> Vec<Vec<String>> {
    let inside = path.strip_prefix(dir).ok();
    let parts: Vec<String> = inside
        .unwrap_or(path)
        .components()
        .filter_map(|c| match c {
            Component::Normal(name) => Some(name.to_string_lossy().into_owned()),
            _ => None,
        })
        .collect();
    let mut forms = vec![parts.clone()];
    if parts.iter().any(|p| p.contains('\\')) {
        let slashed: Vec<String> = parts
            .iter()
            .flat_map(|p| p.split('\\'))
            .filter(|p| !p.is_empty() && *p != ".")
            .map(str::to_string)
            .collect();
        forms.push(slashed);
    }
    forms
}

/// The one path rule 1 finds for `parts`: the path itself when `\` made it differ, else the
/// longest tail of two components or more that exists under `dir`.
fn rewrite(
    dir: &Path,
    parts: &[String],
    want: Want,
    keep: &dyn Fn(&Path) -> bool,
) -> Option<PathBuf> {
    if parts.iter().any(|p| p == "..") {
        return None;
    }
    let under = |tail: &[String]| -> PathBuf {
        let mut path = dir.to_path_buf();
        path.extend(tail);
        path
    };
    let exists = |p: &Path| std::fs::metadata(p).is_ok() && keep(p);
    // Most to least of the path: the whole (a project path written absolute, or a
    // converted `\` path), then without its first folders.
    for len in (2..=parts.len()).rev() {
        let candidate = under(&parts[parts.len() - len..]);
        if exists(&candidate) {
            return Some(candidate);
        }
    }
    // One component: a folder at the top of the project (`click/src` or `/src` → `src`);
    // a file of that name is rule 2's, with the others of its name.
    if let Some(last) = parts.last() {
        let candidate = dir.join(last);
        if (parts.len() == 1 && exists(&candidate)) || (candidate.is_dir() && keep(&candidate)) {
            return Some(candidate);
        }
    }
    if want == Want::Creatable {
        for len in (2..=parts.len()).rev() {
            let candidate = under(&parts[parts.len() - len..]);
            if candidate.parent().is_some_and(Path::is_dir) {
                return Some(candidate);
            }
        }
    }
    None
}

/// Files named `name` under `dir` (rule 2), best first, at most [`MAX_LISTED`], and how
/// many more the walk saw. `tail` is the path asked for, whose trailing folders rank them.
fn same_name(
    dir: &Path,
    name: &str,
    tail: &[String],
    not_project: &NotProject,
    keep: &dyn Fn(&Path) -> bool,
) -> (Vec<PathBuf>, usize) {
    let wanted = name.to_lowercase();
    let rules = IgnoreRules::new(dir);
    let mut found: Vec<(Vec<String>, bool)> = Vec::new();
    let mut queue = VecDeque::from([(dir.to_path_buf(), Vec::<String>::new())]);
    let mut seen = 0usize;
    'walk: while let Some((folder, rel)) = queue.pop_front() {
        let Ok(entries) = std::fs::read_dir(&folder) else {
            continue;
        };
        let mut entries: Vec<_> = entries.filter_map(Result::ok).collect();
        entries.sort_by_key(|e| e.file_name());
        for entry in entries {
            seen += 1;
            if seen > MAX_ENTRIES || found.len() >= MAX_CANDIDATES {
                break 'walk;
            }
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let entry_name = entry.file_name();
            let Some(text) = entry_name.to_str() else {
                continue;
            };
            let path = entry.path();
            let mut entry_rel = rel.clone();
            entry_rel.push(text.to_string());
            if kind.is_dir() {
                if !crate::skip_dirs::is_own(OsStr::new(text))
                    && not_project.judge(&path).is_none()
                    && !rules.is_ignored(&path, true)
                {
                    queue.push_back((path, entry_rel));
                }
            } else if text.to_lowercase() == wanted && !rules.is_ignored(&path, false) {
                found.push((entry_rel, text == name));
            }
        }
    }
    // Trailing folders in common with the path asked for, most first; then exact case,
    // then the shallowest, then by name.
    let agreement = |rel: &[String]| {
        rel.iter()
            .rev()
            .skip(1)
            .zip(tail.iter().rev().skip(1))
            .take_while(|(a, b)| a == b)
            .count()
    };
    found.sort_by(|(a, a_exact), (b, b_exact)| {
        agreement(b)
            .cmp(&agreement(a))
            .then(b_exact.cmp(a_exact))
            .then(a.len().cmp(&b.len()))
            .then(a.cmp(b))
    });
    let mut listed = Vec::new();
    let mut more = 0;
    for (rel, _) in found {
        let mut path = dir.to_path_buf();
        path.extend(&rel);
        if !keep(&path) {
            continue;
        }
        if listed.len() < MAX_LISTED {
            listed.push(path);
        } else {
            more += 1;
        }
    }
    (listed, more)
}

/// A sibling of a missing path whose name shares the longest prefix (at least 3
/// characters, ignoring case) with the missing name; the first in name order wins ties.
pub fn sibling(path: &Path) -> Option<PathBuf> {
    let parent = path.parent()?;
    let wanted = path.file_name()?.to_string_lossy().to_lowercase();
    let mut names: Vec<String> = std::fs::read_dir(parent)
        .ok()?
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let mut best: Option<(usize, &String)> = None;
    for name in &names {
        let score = wanted
            .chars()
            .zip(name.to_lowercase().chars())
            .take_while(|(a, b)| a == b)
            .count();
        if score >= 3 && best.is_none_or(|(s, _)| score > s) {
            best = Some((score, name));
        }
    }
    best.map(|(_, name)| parent.join(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn project() -> (tempfile::TempDir, PathBuf) {
        let tmp = tempfile::tempdir().unwrap();
        let dir = std::fs::canonicalize(tmp.path()).unwrap().join("click");
        for file in [
            "src/click/globals.py",
            "src/click/core.py",
            "tests/test_core.py",
            "docs/conf.py",
        ] {
            let path = dir.join(file);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, "").unwrap();
        }
        (tmp, dir)
    }

    fn all(_: &Path) -> bool {
        true
    }

    fn suggest(dir: &Path, path: &Path) -> Vec<PathBuf> {
        missing(dir, path, Want::Existing, &NotProject::default(), &all).paths
    }

    #[test]
    fn exact_rewrites_name_the_one_path_meant() {
        let (_tmp, dir) = project();
        let meant = vec![dir.join("src/click/globals.py")];
        for slip in [
            dir.join("src\\click\\globals.py"),
            dir.join("click/src/click/globals.py"),
            dir.join("lib/src/click/globals.py"),
            PathBuf::from("/src/click/globals.py"),
            PathBuf::from("/home/someone/click/src/click/globals.py"),
            dir.join("C:\\Users\\me\\click\\src\\click\\globals.py"),
        ] {
            assert_eq!(suggest(&dir, &slip), meant, "{slip:?}");
        }
    }

    #[test]
    fn a_folder_meant_at_the_top_of_the_project_is_named() {
        let (_tmp, dir) = project();
        for slip in [
            dir.join("click/src"),
            PathBuf::from("/src"),
            dir.join("click\\tests"),
        ] {
            let found = suggest(&dir, &slip);
            assert_eq!(found.len(), 1, "{slip:?}");
            assert!(
                found[0].is_dir() && found[0].parent() == Some(dir.as_path()),
                "{slip:?}"
            );
        }
        assert_eq!(
            suggest(&dir, &dir.join("lib/src/click")),
            vec![dir.join("src/click")]
        );
    }

    #[test]
    fn a_base_name_finds_the_files_of_that_name_best_first() {
        let (_tmp, dir) = project();
        assert_eq!(
            suggest(&dir, &dir.join("globals.py")),
            vec![dir.join("src/click/globals.py")]
        );
        for file in ["a/globals.py", "z/y/x/globals.py", "tests/GLOBALS.py"] {
            std::fs::create_dir_all(dir.join(file).parent().unwrap()).unwrap();
            std::fs::write(dir.join(file), "").unwrap();
        }
        // The shallowest first, an exact-case name before another case.
        let found = missing(
            &dir,
            &dir.join("globals.py"),
            Want::Existing,
            &NotProject::default(),
            &all,
        );
        assert_eq!(
            found.paths,
            vec![
                dir.join("a/globals.py"),
                dir.join("src/click/globals.py"),
                dir.join("z/y/x/globals.py"),
                dir.join("tests/GLOBALS.py"),
            ]
        );
        assert_eq!(
            found.sentence(|p| p.strip_prefix(&dir).unwrap().display().to_string()),
            Some(
                "Did you mean one of: a/globals.py, src/click/globals.py, z/y/x/globals.py, \
                 tests/GLOBALS.py?"
                    .to_string()
            )
        );
        // The folders the path asked for rank a deeper file first.
        assert_eq!(
            suggest(&dir, &dir.join("x/globals.py"))[0],
            dir.join("z/y/x/globals.py")
        );
    }

    #[test]
    fn at_most_five_are_named_and_the_rest_counted() {
        let (_tmp, dir) = project();
        for i in 0..8 {
            let path = dir.join(format!("pkg{i}/mod.rs"));
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, "").unwrap();
        }
        let found = missing(
            &dir,
            &dir.join("mod.rs"),
            Want::Existing,
            &NotProject::default(),
            &all,
        );
        assert_eq!(found.paths.len(), MAX_LISTED);
        assert_eq!(found.more, 3);
        let sentence = found.sentence(|p| p.display().to_string()).unwrap();
        assert!(
            sentence.ends_with("(3 more files are named mod.rs: glob `**/mod.rs` lists them)"),
            "{sentence}"
        );
    }

    #[test]
    fn the_walk_stays_out_of_other_peoples_folders_and_ignored_ones() {
        let (_tmp, dir) = project();
        for file in [
            "node_modules/x/only.js",
            ".git/only.js",
            "build/only.js",
            "kept/only.js",
        ] {
            std::fs::create_dir_all(dir.join(file).parent().unwrap()).unwrap();
            std::fs::write(dir.join(file), "").unwrap();
        }
        std::fs::write(dir.join(".ignore"), "build/\n").unwrap();
        assert_eq!(
            suggest(&dir, &dir.join("only.js")),
            vec![dir.join("kept/only.js")]
        );
    }

    #[test]
    fn only_existing_paths_that_keep_allows_are_named() {
        let (_tmp, dir) = project();
        assert!(suggest(&dir, &dir.join("nothing-like-it.txt")).is_empty());
        assert!(suggest(&dir, Path::new("/nowhere/at/all.txt")).is_empty());
        let hidden = |p: &Path| !p.ends_with("src/click/globals.py");
        let found = missing(
            &dir,
            Path::new("/src/click/globals.py"),
            Want::Existing,
            &NotProject::default(),
            &hidden,
        );
        assert!(found.paths.is_empty(), "{found:?}");
        // The sibling rule, last.
        assert_eq!(
            suggest(&dir, &dir.join("docs/config.py")),
            vec![dir.join("docs/conf.py")]
        );
    }

    #[test]
    fn a_file_to_create_may_go_where_its_folder_exists_in_the_project() {
        let (_tmp, dir) = project();
        let found =
            |path: &Path| missing(&dir, path, Want::Creatable, &NotProject::default(), &all).paths;
        assert_eq!(
            found(Path::new("/src/click/new.py")),
            vec![dir.join("src/click/new.py")]
        );
        // An existing file is still named first.
        assert_eq!(
            found(Path::new("/src/click/core.py")),
            vec![dir.join("src/click/core.py")]
        );
        assert!(found(Path::new("/nowhere/new.py")).is_empty());
        // Not for a path that only wants to exist.
        assert!(suggest(&dir, Path::new("/src/click/new.py")).is_empty());
    }

    #[test]
    fn suggestions_need_three_common_characters() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("config.toml"), "").unwrap();
        std::fs::write(dir.path().join("cargo.lock"), "").unwrap();
        assert_eq!(
            sibling(&dir.path().join("Config.yaml")),
            Some(dir.path().join("config.toml"))
        );
        assert_eq!(sibling(&dir.path().join("cat.txt")), None);
        // Characters, not bytes: `éé` is two characters (four bytes), and `é`/`è` share
        // a first byte.
        std::fs::write(dir.path().join("ééxfile"), "").unwrap();
        assert_eq!(sibling(&dir.path().join("ééyfile")), None);
        assert_eq!(sibling(&dir.path().join("éèè")), None);
        assert_eq!(
            sibling(&dir.path().join("ééxother")),
            Some(dir.path().join("ééxfile"))
        );
    }
}
