//! The folders a walk leaves out (dependencies, virtual environments, caches, ignored
//! build outputs) and whether anything happened in them during a call: checkpoints do not
//! keep their files, but a call that changed only them says so, and an undo that passes
//! over it names it.
//!
//! What happened in a folder is told by the stamps (inode, modification and change time)
//! of the folder and of the folders below it, breadth first, at most [`DEPTH`] levels deep
//! and a share of [`BUDGET`] folders: creating, removing or renaming an entry changes its
//! folder's stamp, so installing or removing a package, or a build writing new files, is
//! seen; rewriting a file in place deep inside one is not (its folder's stamp stays).

use std::collections::BTreeMap;
use std::hash::{Hash, Hasher};
use std::path::Path;

use super::listing::{Cache, Kind};

/// How many levels below a left-out folder its stamps are taken.
pub const DEPTH: usize = 3;

/// How many folders' stamps one call takes in all (shared by the left-out folders).
pub const BUDGET: usize = 128;

/// The least share of [`BUDGET`] one left-out folder gets.
pub const LEAST: usize = 16;

/// The folders the walk left out, by path relative to the root, git's and tinytool's own
/// excepted (every git command changes `.git`; neither is ever the project's work).
pub fn folders(cache: &Cache) -> Vec<String> {
    let mut out = Vec::new();
    for (rel, listing) in &cache.dirs {
        for (i, (name, kind)) in listing.names.iter().enumerate() {
            if *kind != Kind::Dir
                || listing.kept.get(i).copied().unwrap_or(true)
                || crate::skip_dirs::is_own(name)
            {
                continue;
            }
            let Some(name) = name.to_str() else { continue };
            out.push(if rel.is_empty() {
                name.to_string()
            } else {
                format!("{rel}/{name}")
            });
        }
    }
    out.sort();
    out
}

/// The file that keeps each left-out folder's [`Plan`] between calls.
const FILE: &str = "unkept.json";

/// Per left-out folder, the folders below it whose stamps count (found breadth first, at
/// most [`DEPTH`] levels deep). Kept between calls, so that a call only `lstat`s them: a
/// folder made or removed at a level changes the stamp of the folder above it, so a
/// changed plan always shows as a changed stamp, and is then found again.
#[derive(Debug, Default, Clone, serde::Serialize, serde::Deserialize)]
pub struct Plan {
    below: BTreeMap<String, Vec<String>>,
    #[serde(skip)]
    dirty: bool,
}

impl Plan {
    /// The plan saved under `root`'s `.tinytool/checkpoints/` (empty when there is none).
    pub fn load(root: &Path) -> Plan {
        let path = crate::project::tinytool_dir(root)
            .join("checkpoints")
            .join(FILE);
        std::fs::read(&path)
            .ok()
            .and_then(|bytes| serde_json::from_slice(&bytes).ok())
            .unwrap_or_default()
    }

    /// Saves the plan when it changed since it was loaded.
    pub fn save(&mut self, root: &Path) {
        if !self.dirty {
            return;
        }
        let Ok(parent) = crate::project::ensure_own_subdir(root, "checkpoints") else {
            return;
        };
        if let (Ok(mut file), Ok(bytes)) = (
            tempfile::NamedTempFile::new_in(&parent),
            serde_json::to_vec(self),
        ) && std::io::Write::write_all(&mut file, &bytes).is_ok()
            && file.persist(parent.join(FILE)).is_ok()
        {
            self.dirty = false;
        }
    }

    /// Finds again the folders below each of `folders` (their plan went stale).
    pub fn refresh(&mut self, root: &Path, folders: &[String], count: usize) {
        for folder in folders {
            self.below.remove(folder);
            if root.join(folder).is_dir() {
                let below = below(root, folder, share(count));
                self.below.insert(folder.clone(), below);
            }
            self.dirty = true;
        }
    }
}

/// How many folders below one left-out folder of `count` are stamped: an equal share of
/// [`BUDGET`], at least [`LEAST`] (most left-out folders, caches, have none below them, so
/// the folders that do, a virtual environment's, still get theirs).
fn share(count: usize) -> usize {
    (BUDGET / count.max(1)).max(LEAST) - 1
}

/// The folders below `folder`, breadth first, at most [`DEPTH`] levels and `limit` folders.
fn below(root: &Path, folder: &str, limit: usize) -> Vec<String> {
    let mut out = Vec::new();
    let mut queue = std::collections::VecDeque::from([(folder.to_string(), 0usize)]);
    while let Some((dir, depth)) = queue.pop_front() {
        if depth >= DEPTH || out.len() >= limit {
            continue;
        }
        let Ok(entries) = std::fs::read_dir(root.join(&dir)) else {
            continue;
        };
        let mut subdirs: Vec<String> = entries
            .flatten()
            .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
            .filter_map(|e| e.file_name().to_str().map(|n| format!("{dir}/{n}")))
            .collect();
        subdirs.sort();
        for sub in subdirs {
            if out.len() >= limit {
                break;
            }
            out.push(sub.clone());
            queue.push_back((sub, depth + 1));
        }
    }
    out
}

/// Per folder, a hash of its stamps and those of the folders its plan lists (module doc);
/// a folder that is gone has none. A folder without a plan gets one.
pub fn stamps(root: &Path, folders: &[String], plan: &mut Plan) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    for folder in folders {
        let Ok(meta) = std::fs::symlink_metadata(root.join(folder)) else {
            continue;
        };
        if !meta.is_dir() {
            continue;
        }
        if !plan.below.contains_key(folder) {
            plan.refresh(root, std::slice::from_ref(folder), folders.len());
        }
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        super::listing::Stamp::of(&meta).hash(&mut hasher);
        for sub in plan.below.get(folder).into_iter().flatten() {
            sub.hash(&mut hasher);
            std::fs::symlink_metadata(root.join(sub))
                .ok()
                .map(|m| super::listing::Stamp::of(&m))
                .hash(&mut hasher);
        }
        out.insert(folder.clone(), hasher.finish());
    }
    out
}

/// The folders whose stamps differ between `before` and `after`: changed, made or
/// removed.
pub fn changed(before: &BTreeMap<String, u64>, after: &BTreeMap<String, u64>) -> Vec<String> {
    let mut out: Vec<String> = before
        .iter()
        .filter(|(folder, stamp)| after.get(*folder) != Some(stamp))
        .map(|(folder, _)| folder.clone())
        .collect();
    out.extend(
        after
            .keys()
            .filter(|folder| !before.contains_key(*folder))
            .cloned(),
    );
    out.sort();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_package_installed_three_levels_down_changes_the_folders_stamps() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("venv/lib/python3.11/site-packages/old")).unwrap();
        std::fs::create_dir_all(root.join("node_modules/a")).unwrap();
        let folders = vec!["venv/lib".to_string(), "node_modules".to_string()];
        let mut plan = Plan::default();
        let before = stamps(root, &folders, &mut plan);
        plan.save(root);
        // Another call, from the saved plan: only `lstat`s.
        let mut plan = Plan::load(root);
        assert_eq!(plan.below["venv/lib"].len(), 3, "{plan:?}");
        let none = Vec::<String>::new();
        assert_eq!(changed(&before, &stamps(root, &folders, &mut plan)), none);
        assert!(!plan.dirty);
        std::fs::create_dir(root.join("venv/lib/python3.11/site-packages/new")).unwrap();
        let now = stamps(root, &folders, &mut plan);
        assert_eq!(changed(&before, &now), ["venv/lib"]);
        // Found again, the plan stands for the tree as it is now.
        plan.refresh(root, &["venv/lib".to_string()], folders.len());
        let settled = stamps(root, &folders, &mut plan);
        assert_eq!(changed(&settled, &stamps(root, &folders, &mut plan)), none);
        std::fs::remove_dir_all(root.join("node_modules")).unwrap();
        assert_eq!(
            changed(&settled, &stamps(root, &folders, &mut plan)),
            ["node_modules"]
        );
    }

    #[test]
    fn a_folder_made_during_the_call_counts_as_changed() {
        let before = BTreeMap::new();
        let after = BTreeMap::from([("dist".to_string(), 7u64)]);
        assert_eq!(changed(&before, &after), ["dist"]);
    }
}
