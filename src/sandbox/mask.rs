//! The secret files of a project that the sandbox covers with an empty read-only file.
//!
//! A file is secret when the secret detector says its name is
//! ([`crate::detect::secret::name_is_secret`]; `.env.example` and friends are not). The
//! scan visits the directories that ignore files do not prune (a `node_modules` or
//! `target` never hold the project's own secrets, and a 20,000-file tree must not cost
//! every call a walk), but lists every file in them, ignored or not: `.env` is usually in
//! `.gitignore`. It stops after [`CAP`] directory entries (said in `metadata.sandbox`).
//!
//! The result is cached in `<dir>/.tinytool/sandbox/secrets.json`:
//!
//! ```json
//! {"dirs": [["/p", 1733300000123456789], ["/p/src", 1733300000000000000]],
//!  "files": ["/p/.env"], "capped": false}
//! ```
//!
//! Valid while every listed directory still has the modification time recorded (a file
//! created, removed or renamed in a directory changes its time); otherwise the scan runs
//! again. Checking costs one `stat` per directory, not a listing.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The most directory entries a scan looks at.
pub const CAP: usize = 50_000;

/// The secret files found.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Scan {
    /// Every directory listed, with its modification time in nanoseconds.
    dirs: Vec<(PathBuf, i128)>,
    /// The secret files (absolute).
    pub files: Vec<PathBuf>,
    /// Whether the scan stopped at [`CAP`].
    pub capped: bool,
}

fn mtime(path: &Path) -> Option<i128> {
    let meta = std::fs::symlink_metadata(path).ok()?;
    Some(meta.mtime() as i128 * 1_000_000_000 + meta.mtime_nsec() as i128)
}

fn cache_path(dir: &Path) -> PathBuf {
    crate::project::tinytool_dir(dir)
        .join("sandbox")
        .join("secrets.json")
}

/// The secret files of the project in `dir`, from the cache when it is still valid.
pub fn scan(dir: &Path) -> Scan {
    let cache = cache_path(dir);
    if let Ok(text) = std::fs::read(&cache)
        && let Ok(cached) = serde_json::from_slice::<Scan>(&text)
        && !cached.dirs.is_empty()
        && unchanged(&cached.dirs)
    {
        return cached;
    }
    let fresh = walk(dir);
    if let Some(parent) = cache.parent()
        && crate::project::ensure_own_subdir(dir, "sandbox").is_ok()
        && let Ok(text) = serde_json::to_vec(&fresh)
        && let Ok(mut file) = tempfile::NamedTempFile::new_in(parent)
        && std::io::Write::write_all(&mut file, &text).is_ok()
    {
        let _ = file.persist(&cache);
    }
    fresh
}

/// Whether every directory still has its recorded time: one `stat` each, spread over a
/// few threads (on a 20,000-file tree this check is most of the sandbox's cost per call).
fn unchanged(dirs: &[(PathBuf, i128)]) -> bool {
    const PER_THREAD: usize = 512;
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, 4)
        .min(dirs.len().div_ceil(PER_THREAD));
    if threads <= 1 {
        return dirs.iter().all(|(path, time)| mtime(path) == Some(*time));
    }
    let chunk = dirs.len().div_ceil(threads);
    std::thread::scope(|scope| {
        let checks: Vec<_> = dirs
            .chunks(chunk)
            .map(|part| {
                scope.spawn(move || part.iter().all(|(path, time)| mtime(path) == Some(*time)))
            })
            .collect();
        // A thread that panicked proves nothing: scan again.
        checks
            .into_iter()
            .all(|check| check.join().unwrap_or(false))
    })
}

fn walk(dir: &Path) -> Scan {
    let mut scan = Scan::default();
    let mut seen = 0usize;
    let walker = ignore::WalkBuilder::new(dir)
        .hidden(false)
        .require_git(false)
        .follow_links(false)
        .filter_entry(|e| {
            let name = e.file_name();
            !(e.depth() > 0 && (name == ".git" || name == ".tinytool"))
        })
        .build();
    for entry in walker.flatten() {
        if !entry.file_type().is_some_and(|t| t.is_dir()) {
            continue;
        }
        let path = entry.path();
        let Some(time) = mtime(path) else { continue };
        scan.dirs.push((path.to_path_buf(), time));
        let Ok(list) = std::fs::read_dir(path) else {
            continue;
        };
        for item in list.flatten() {
            seen += 1;
            if seen > CAP {
                scan.capped = true;
                return scan;
            }
            let is_file = item.file_type().is_ok_and(|t| t.is_file());
            if is_file
                && let Some(name) = item.file_name().to_str()
                && crate::detect::secret::name_is_secret(name)
                && !is_template(name)
            {
                scan.files.push(item.path());
            }
        }
    }
    scan
}

/// Example files committed with a project (`.env.example`, `.env.sample`, `.env.template`,
/// `.env.dist`): not secret, and builds read them.
fn is_template(name: &str) -> bool {
    [".example", ".sample", ".template", ".dist"]
        .iter()
        .any(|suffix| name.ends_with(suffix))
}

/// The empty read-only file secrets are covered with (`.tinytool/sandbox/empty`, made
/// once); `None` when it cannot be made.
pub fn empty_file(tinytool: &Path) -> Option<PathBuf> {
    let path = tinytool.join("sandbox").join("empty");
    match std::fs::symlink_metadata(&path) {
        Ok(meta) if meta.is_file() && meta.len() == 0 => return Some(path),
        Ok(_) => {
            let _ = std::fs::remove_file(&path);
        }
        Err(_) => {}
    }
    crate::project::ensure_own_subdir(tinytool.parent()?, "sandbox").ok()?;
    // create_new: never through a link put there since it was looked at.
    std::fs::File::options()
        .write(true)
        .create_new(true)
        .open(&path)
        .ok()?;
    Some(path)
}

/// The empty read-only directory (`.tinytool/sandbox/empty.d`) that covers the checkpoint
/// store in the sandbox: the store holds copies of secret files, and the command never
/// needs it (tinytool itself writes checkpoints, outside the sandbox).
pub fn empty_dir(tinytool: &Path) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let path = tinytool.join("sandbox").join("empty.d");
    match std::fs::symlink_metadata(&path) {
        Ok(meta) if meta.is_dir() && std::fs::read_dir(&path).ok()?.next().is_none() => {
            return Some(path);
        }
        Ok(_) => return None,
        Err(_) => {}
    }
    std::fs::create_dir_all(&path).ok()?;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o555)).ok()?;
    Some(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_ignored_env_files_and_caches_until_a_directory_changes() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::write(root.join(".gitignore"), ".env\nbuild/\n").unwrap();
        std::fs::write(root.join(".env"), "K=v").unwrap();
        std::fs::write(root.join(".env.example"), "K=").unwrap();
        std::fs::create_dir(root.join("build")).unwrap();
        std::fs::write(root.join("build/.env"), "K=v").unwrap();
        let first = scan(&root);
        assert_eq!(first.files, vec![root.join(".env")]);
        std::fs::create_dir(root.join("sub")).unwrap();
        std::fs::write(root.join("sub/id_rsa"), "k").unwrap();
        let second = scan(&root);
        assert!(second.files.contains(&root.join("sub/id_rsa")));
    }

    #[test]
    fn a_change_in_any_of_many_directories_is_seen() {
        // Enough directories for the check to be split over threads.
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        for i in 0..700 {
            std::fs::create_dir(root.join(format!("d{i:04}"))).unwrap();
        }
        assert!(scan(&root).files.is_empty());
        assert!(scan(&root).files.is_empty());
        std::fs::write(root.join("d0699/.env"), "K=v").unwrap();
        assert_eq!(scan(&root).files, vec![root.join("d0699/.env")]);
    }
}
