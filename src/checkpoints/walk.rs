//! The stat walk behind checkpoints: one pass of `lstat` calls over the project tree.
//!
//! Which files are walked: everything below the root except what `.gitignore`, `.ignore`
//! and git's exclude files leave out (also outside a git repository), the skip
//! directories of [`crate::search::SKIP_DIRS`] and `target` (build output). Symlinks are
//! recorded as themselves (their fingerprint), never followed. Paths are relative to the
//! root, `/`-separated, and only valid UTF-8 paths are walked (others are counted).
//!
//! A [`Fingerprint`] is (size, mtime, inode, ctime, mode, kind). Two walks are compared
//! with [`diff`]: a path whose fingerprint is equal in both is unchanged without reading
//! it; only added, removed and re-stamped paths need their contents read and hashed.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use anyhow::{Context, Result};

/// Directories a checkpoint never enters, besides [`crate::search::SKIP_DIRS`].
const EXTRA_SKIP_DIRS: [&str; 1] = ["target"];

/// What a stat call says about one path; equal fingerprints mean "not changed".
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Fingerprint {
    /// Size in bytes.
    pub size: u64,
    /// Modification time, nanoseconds since the epoch.
    pub mtime_ns: i64,
    /// Inode number (a replacing rename changes it even when size and mtime agree).
    pub ino: u64,
    /// Status change time, nanoseconds since the epoch (a `touch -d` cannot set it back).
    pub ctime_ns: i64,
    /// Permission bits and file type, as `st_mode`.
    pub mode: u32,
}

/// One walk's result: fingerprints by relative path, and what was left out.
#[derive(Debug, Default)]
pub struct Walk {
    /// Regular files and symlinks by `/`-separated path relative to the root.
    pub files: BTreeMap<String, Fingerprint>,
    /// Paths that could not be walked or are not UTF-8 (counted, not recorded).
    pub unreadable: usize,
}

/// How a path differs between two walks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Change {
    /// Present now, absent before.
    Added,
    /// Present before, absent now.
    Removed,
    /// Present in both with different fingerprints (contents may still be equal).
    Restamped,
}

/// True for a directory name no checkpoint walk enters.
fn is_skipped(name: &OsStr) -> bool {
    crate::search::is_skip_dir(name) || EXTRA_SKIP_DIRS.iter().any(|d| name == OsStr::new(d))
}

/// Fingerprint of one `lstat` result.
pub fn fingerprint(meta: &std::fs::Metadata) -> Fingerprint {
    Fingerprint {
        size: meta.size(),
        mtime_ns: meta
            .mtime()
            .saturating_mul(1_000_000_000)
            .saturating_add(meta.mtime_nsec()),
        ino: meta.ino(),
        ctime_ns: meta
            .ctime()
            .saturating_mul(1_000_000_000)
            .saturating_add(meta.ctime_nsec()),
        mode: meta.mode(),
    }
}

/// Walks `root` with stat calls only (see the module doc for what is left out).
pub fn walk(root: &Path) -> Result<Walk> {
    let meta = std::fs::symlink_metadata(root)
        .with_context(|| format!("cannot walk {}", root.display()))?;
    anyhow::ensure!(meta.is_dir(), "{} is not a directory", root.display());
    let mut out = Walk::default();
    let walker = ignore::WalkBuilder::new(root)
        .hidden(false)
        .parents(false)
        .require_git(false)
        .follow_links(false)
        .filter_entry(|entry| {
            entry.depth() == 0
                || !entry.file_type().is_some_and(|t| t.is_dir())
                || !is_skipped(entry.file_name())
        })
        .build();
    for entry in walker {
        let Ok(entry) = entry else {
            out.unreadable += 1;
            continue;
        };
        let Some(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() {
            continue;
        }
        let Ok(rel) = entry.path().strip_prefix(root) else {
            continue;
        };
        let (Some(rel), Ok(meta)) = (rel.to_str(), entry.path().symlink_metadata()) else {
            out.unreadable += 1;
            continue;
        };
        out.files.insert(rel.to_owned(), fingerprint(&meta));
    }
    Ok(out)
}

/// The paths whose fingerprints differ between `before` and `after`, in path order.
pub fn diff(
    before: &BTreeMap<String, Fingerprint>,
    after: &BTreeMap<String, Fingerprint>,
) -> Vec<(String, Change)> {
    let mut changes = Vec::new();
    for (path, fp) in after {
        match before.get(path) {
            None => changes.push((path.clone(), Change::Added)),
            Some(old) if old != fp => changes.push((path.clone(), Change::Restamped)),
            Some(_) => {}
        }
    }
    for path in before.keys() {
        if !after.contains_key(path) {
            changes.push((path.clone(), Change::Removed));
        }
    }
    changes.sort();
    changes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn walk_skips_ignored_and_skip_dirs_and_diff_sees_changes() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::write(root.join(".gitignore"), "build/\n*.log\n").unwrap();
        for dir in [
            "src",
            "build",
            "node_modules/x",
            "target",
            ".git",
            ".tinytool",
        ] {
            std::fs::create_dir_all(root.join(dir)).unwrap();
        }
        for file in [
            "src/a.rs",
            "build/o",
            "node_modules/x/i.js",
            "target/big",
            ".git/HEAD",
        ] {
            std::fs::write(root.join(file), "x").unwrap();
        }
        std::fs::write(root.join("run.log"), "log").unwrap();
        std::fs::write(root.join(".tinytool/state.db"), "db").unwrap();
        std::fs::write(root.join("b.txt"), "b").unwrap();
        let first = walk(root).unwrap();
        let paths: Vec<&str> = first.files.keys().map(String::as_str).collect();
        assert_eq!(paths, [".gitignore", "b.txt", "src/a.rs"]);
        assert!(diff(&first.files, &walk(root).unwrap().files).is_empty());

        std::fs::remove_file(root.join("b.txt")).unwrap();
        std::fs::write(root.join("c.txt"), "c").unwrap();
        std::fs::write(root.join("src/a.rs"), "longer").unwrap();
        let second = walk(root).unwrap();
        assert_eq!(
            diff(&first.files, &second.files),
            [
                ("b.txt".to_owned(), Change::Removed),
                ("c.txt".to_owned(), Change::Added),
                ("src/a.rs".to_owned(), Change::Restamped),
            ]
        );
    }
}
