//! The folders a walk leaves out (dependencies, virtual environments, caches, ignored
//! build outputs) and whether anything happened in them during a call: checkpoints do not
//! keep their files, but a call that changed only them says so, and an undo that passes
//! over it names it.
//!
//! What happened in a folder is told by the stamps (inode, modification and change time)
//! of the folder and of the folders below it, breadth first, at most [`DEPTH`] levels deep
//! and [`BUDGET`] folders in all: creating, removing or renaming an entry changes its
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

/// Per folder, a hash of its stamps (module doc); a folder that is gone has none.
pub fn stamps(root: &Path, folders: &[String]) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    if folders.is_empty() {
        return out;
    }
    let share = (BUDGET / folders.len()).max(1);
    for folder in folders {
        let top = root.join(folder);
        let Ok(meta) = std::fs::symlink_metadata(&top) else {
            continue;
        };
        if !meta.is_dir() {
            continue;
        }
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        super::listing::Stamp::of(&meta).hash(&mut hasher);
        let mut queue = std::collections::VecDeque::from([(top, 0usize)]);
        let mut taken = 1;
        while let Some((dir, depth)) = queue.pop_front() {
            if depth >= DEPTH || taken >= share {
                continue;
            }
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            let mut subdirs: Vec<_> = entries
                .flatten()
                .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
                .map(|e| e.path())
                .collect();
            subdirs.sort();
            for sub in subdirs {
                if taken >= share {
                    break;
                }
                if let Ok(meta) = std::fs::symlink_metadata(&sub) {
                    sub.hash(&mut hasher);
                    super::listing::Stamp::of(&meta).hash(&mut hasher);
                    taken += 1;
                    queue.push_back((sub, depth + 1));
                }
            }
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
        let before = stamps(root, &folders);
        assert_eq!(
            changed(&before, &stamps(root, &folders)),
            Vec::<String>::new()
        );
        std::fs::create_dir(root.join("venv/lib/python3.11/site-packages/new")).unwrap();
        assert_eq!(changed(&before, &stamps(root, &folders)), ["venv/lib"]);
        std::fs::remove_dir_all(root.join("node_modules")).unwrap();
        assert_eq!(
            changed(&before, &stamps(root, &folders)),
            ["node_modules", "venv/lib"]
        );
    }

    #[test]
    fn a_folder_made_during_the_call_counts_as_changed() {
        let before = BTreeMap::new();
        let after = BTreeMap::from([("dist".to_string(), 7u64)]);
        assert_eq!(changed(&before, &after), ["dist"]);
    }
}
