//! Whether git tracks a file: read from the index of the repository the file lies in,
//! without running git (a `git ls-files` would cost every sandboxed call a process, and
//! would run whatever the repository's config tells git to run).
//!
//! The repository of a file is the nearest folder above it holding `.git` (a directory,
//! or a file `gitdir: PATH` as in linked worktrees and submodules). Its index is read as
//! git writes it (`Documentation/gitformat-index.txt`): the header `DIRC`, a version (2,
//! 3 or 4) and an entry count, then per entry 40 bytes of stat data, the object id (20
//! bytes, 32 in a SHA-256 repository), 16 bits of flags (another 16 when the extended
//! flag is set, versions 3 and up) and the path: NUL-padded to a multiple of 8 bytes in
//! versions 2 and 3, prefix-compressed against the previous path in version 4.
//!
//! An index this reader cannot vouch for (another version, a split index whose entries
//! live in a shared file, a truncated file) is [`Tracked::Unknown`]: the caller decides
//! how to fail. A repository without an index tracks nothing.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

/// What the index says of one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tracked {
    /// The file is in its repository's index.
    Yes,
    /// It is in no repository, or its repository's index does not list it.
    No,
    /// Its repository's index could not be read.
    Unknown,
}

/// Whether git tracks each of `files` (absolute paths), in order.
pub fn tracked(files: &[PathBuf]) -> Vec<Tracked> {
    let mut repos: HashMap<PathBuf, Option<Repo>> = HashMap::new();
    let mut found_in: HashMap<PathBuf, Option<PathBuf>> = HashMap::new();
    let mut out = Vec::with_capacity(files.len());
    for file in files {
        let Some(parent) = file.parent() else {
            out.push(Tracked::No);
            continue;
        };
        let root = found_in
            .entry(parent.to_path_buf())
            .or_insert_with(|| work_tree_of(parent))
            .clone();
        let Some(root) = root else {
            out.push(Tracked::No);
            continue;
        };
        let repo = repos
            .entry(root.clone())
            .or_insert_with(|| Repo::open(&root));
        let Some(repo) = repo else {
            out.push(Tracked::Unknown);
            continue;
        };
        let rel = file.strip_prefix(&root).ok().map(path_bytes);
        out.push(match rel {
            Some(rel) if repo.paths.contains(rel) => Tracked::Yes,
            _ => Tracked::No,
        });
    }
    out
}

fn path_bytes(path: &Path) -> &[u8] {
    use std::os::unix::ffi::OsStrExt;
    path.as_os_str().as_bytes()
}

/// The work tree holding `dir`: the nearest folder at or above it with a `.git`.
fn work_tree_of(dir: &Path) -> Option<PathBuf> {
    dir.ancestors()
        .find(|d| std::fs::symlink_metadata(d.join(".git")).is_ok())
        .map(Path::to_path_buf)
}

/// The paths one repository's index holds.
struct Repo {
    paths: HashSet<Vec<u8>>,
}

impl Repo {
    /// The index of the work tree `root`; `None` when it cannot be read as git wrote it.
    fn open(root: &Path) -> Option<Repo> {
        let git = git_dir(root)?;
        let bytes = match std::fs::read(git.join("index")) {
            Ok(bytes) => bytes,
            // No index yet (`git init` and nothing added): nothing is tracked.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(_) => return None,
        };
        if bytes.is_empty() {
            return Some(Repo {
                paths: HashSet::new(),
            });
        }
        parse(&bytes, object_id_len(&git)).map(|paths| Repo { paths })
    }
}

/// The git directory of a work tree: `.git` itself, or where a `.git` file points.
fn git_dir(root: &Path) -> Option<PathBuf> {
    let dot_git = root.join(".git");
    let meta = std::fs::symlink_metadata(&dot_git).ok()?;
    if meta.is_dir() {
        return Some(dot_git);
    }
    let text = std::fs::read_to_string(&dot_git).ok()?;
    let target = text.trim().strip_prefix("gitdir:")?.trim();
    Some(root.join(target))
}

/// The length of an object id in this repository: 32 for SHA-256, else 20. A linked
/// worktree's settings are in the common directory.
fn object_id_len(git: &Path) -> usize {
    let common = std::fs::read_to_string(git.join("commondir"))
        .map(|c| git.join(c.trim()))
        .unwrap_or_else(|_| git.to_path_buf());
    let config = std::fs::read_to_string(common.join("config")).unwrap_or_default();
    let sha256 = config.lines().any(|line| {
        let line = line.trim().to_ascii_lowercase();
        line.starts_with("objectformat") && line.ends_with("sha256")
    });
    if sha256 { 32 } else { 20 }
}

/// The paths of an index file's entries; `None` when the file is not an index this
/// reader can vouch for.
fn parse(bytes: &[u8], id_len: usize) -> Option<HashSet<Vec<u8>>> {
    let u32_at = |at: usize| -> Option<u32> {
        Some(u32::from_be_bytes(bytes.get(at..at + 4)?.try_into().ok()?))
    };
    let u16_at = |at: usize| -> Option<u16> {
        Some(u16::from_be_bytes(bytes.get(at..at + 2)?.try_into().ok()?))
    };
    if bytes.get(..4)? != b"DIRC" {
        return None;
    }
    let version = u32_at(4)?;
    if !(2..=4).contains(&version) {
        return None;
    }
    let count = u32_at(8)? as usize;
    let mut paths = HashSet::with_capacity(count.min(1 << 20));
    let mut at = 12;
    let mut previous: Vec<u8> = Vec::new();
    for _ in 0..count {
        let start = at;
        let flags = u16_at(at + 40 + id_len)?;
        at += 40 + id_len + 2;
        if flags & 0x4000 != 0 {
            if version < 3 {
                return None;
            }
            at += 2;
        }
        let path = if version == 4 {
            // The number of bytes to drop from the previous path, as an offset varint.
            let mut strip = 0usize;
            loop {
                let byte = *bytes.get(at)?;
                at += 1;
                strip = strip.checked_shl(7)? | usize::from(byte & 0x7f);
                if byte & 0x80 == 0 {
                    break;
                }
                strip = strip.checked_add(1)?;
            }
            let keep = previous.len().checked_sub(strip)?;
            let end = at + bytes.get(at..)?.iter().position(|&b| b == 0)?;
            let mut path = previous[..keep].to_vec();
            path.extend_from_slice(&bytes[at..end]);
            at = end + 1;
            path
        } else {
            let end = at + bytes.get(at..)?.iter().position(|&b| b == 0)?;
            let path = bytes[at..end].to_vec();
            // Padded with 1 to 8 NULs to a multiple of 8 from the entry's start.
            at = start + (end - start + 8) / 8 * 8;
            path
        };
        previous.clone_from(&path);
        paths.insert(path);
    }
    // A split index keeps most entries in a shared file this reader does not follow.
    let checksum = bytes.len().checked_sub(id_len)?;
    while at + 8 <= checksum {
        let signature = bytes.get(at..at + 4)?;
        if signature == b"link" {
            return None;
        }
        at = at.checked_add(8 + u32_at(at + 4)? as usize)?;
    }
    Some(paths)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    fn git(dir: &Path, args: &[&str]) {
        let ok = Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@t"])
            .args(args)
            .current_dir(dir)
            .status()
            .unwrap()
            .success();
        assert!(ok, "git {args:?}");
    }

    fn repo_with(version: &str) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        git(root, &["init", "-q"]);
        std::fs::create_dir_all(root.join("a/deeply/nested")).unwrap();
        for rel in [
            ".env",
            "a/config.env",
            "a/deeply/nested/server.pem",
            "a/deeply/nested/server.pem.2",
        ] {
            std::fs::write(root.join(rel), "x").unwrap();
        }
        // A path longer than the 12 bits of the flags.
        let long = format!("a/{}.env", "x".repeat(200));
        std::fs::write(root.join(&long), "x").unwrap();
        git(root, &["add", "-A"]);
        git(root, &["update-index", "--index-version", version]);
        std::fs::write(root.join("a/untracked.env"), "x").unwrap();
        dir
    }

    #[test]
    fn every_index_version_is_read() {
        for version in ["2", "3", "4"] {
            let dir = repo_with(version);
            let root = dir.path();
            if version == "3" {
                // An entry with the extended flag (intent to add).
                std::fs::write(root.join("intent.env"), "x").unwrap();
                git(root, &["add", "-N", "intent.env"]);
            }
            let long = format!("a/{}.env", "x".repeat(200));
            let files: Vec<PathBuf> = [
                ".env",
                "a/config.env",
                "a/deeply/nested/server.pem",
                &long,
                "a/untracked.env",
                "a/deeply/nested/other.pem",
            ]
            .iter()
            .map(|rel| root.join(rel))
            .collect();
            use Tracked::{No, Yes};
            assert_eq!(
                tracked(&files),
                [Yes, Yes, Yes, Yes, No, No],
                "index version {version}"
            );
            if version == "3" {
                assert_eq!(tracked(&[root.join("intent.env")]), [Yes]);
            }
        }
    }

    #[test]
    fn no_repository_no_index_and_an_unreadable_index() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::write(root.join(".env"), "x").unwrap();
        // Outside any repository (the temporary directory is in none).
        assert_eq!(tracked(&[root.join(".env")]), [Tracked::No]);
        git(root, &["init", "-q"]);
        assert_eq!(tracked(&[root.join(".env")]), [Tracked::No]);
        std::fs::write(root.join(".git/index"), b"DIRC\0\0\0\x09\0\0\0\x01").unwrap();
        assert_eq!(tracked(&[root.join(".env")]), [Tracked::Unknown]);
        std::fs::write(root.join(".git/index"), b"DIRC\0\0\0\x02\0\0\0\x05short").unwrap();
        assert_eq!(tracked(&[root.join(".env")]), [Tracked::Unknown]);
    }

    #[test]
    fn a_split_index_is_not_vouched_for_and_a_linked_worktree_is_read() {
        let dir = repo_with("2");
        let root = dir.path();
        git(root, &["commit", "-qm", "x"]);
        let worktree = root.join("wt");
        git(root, &["worktree", "add", "-q", worktree.to_str().unwrap()]);
        assert_eq!(tracked(&[worktree.join(".env")]), [Tracked::Yes]);
        git(root, &["update-index", "--split-index"]);
        assert_eq!(tracked(&[root.join(".env")]), [Tracked::Unknown]);
    }
}
