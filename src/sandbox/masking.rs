//! Which of the files the scan found ([`crate::secret_scan`]) a command sees as empty, what
//! covers each, and which of them the command opened.
//!
//! - A file is masked when it is a secret by the one definition ([`crate::secret_file`]:
//!   its content decides where its name cannot), git does not track it, no
//!   `sandbox.unmask` pattern of the user policy names it, and no `secret-shell` allow rule
//!   covers the command.
//! - A tracked secret is never masked: its content is in the repository's history
//!   (`git show` reads it), so masking protects nothing, and a masked tracked file is what
//!   `git commit -a`, `git stash` and `git diff` would record as emptied. The user is told
//!   once per file ([`Masking::tracked_notice`]). Where the index cannot be read, every
//!   secret is masked (fail closed) and `metadata.sandbox` says so.
//! - Each masked file is covered by an empty file of its own
//!   (`.tinytool/sandbox/masks/N`, read-only, in tinytool's protected folder), watched
//!   with inotify for opens, so that a result can name the masked files the command read.

use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use crate::git_index::Tracked;

/// What the masking of one call is.
#[derive(Debug, Default)]
pub struct Masking {
    /// The secret files covered (absolute).
    pub masked: Vec<PathBuf>,
    /// Secrets git tracks, left as they are.
    pub tracked: Vec<PathBuf>,
    /// Secrets a `sandbox.unmask` pattern or a `secret-shell` allow rule opened.
    pub unmasked: Vec<PathBuf>,
    /// Whether some repository's index could not be read (its secrets stay masked).
    pub index_unread: bool,
}

/// Judges the scanned `candidates` of the project in `dir` and their other names
/// (`aliases`, hard links: masked with the secret they are): `unmask` are the user's
/// `sandbox.unmask` patterns, `unmask_all` whether a `secret-shell` allow rule covers the
/// command.
pub fn decide(
    dir: &Path,
    candidates: &[PathBuf],
    aliases: &[PathBuf],
    unmask: &[String],
    unmask_all: bool,
) -> Masking {
    let mut secrets: Vec<PathBuf> = candidates
        .iter()
        .filter(|path| {
            std::fs::symlink_metadata(path).is_ok_and(|m| m.is_file())
                && crate::secret_file::is_secret(path)
        })
        .cloned()
        .collect();
    // In path order, whatever order the directories were listed in.
    secrets.sort();
    let mut masking = Masking::default();
    if secrets.is_empty() {
        return masking;
    }
    let tracked = crate::git_index::tracked(&secrets);
    for (path, tracked) in secrets.into_iter().zip(tracked) {
        match tracked {
            Tracked::Yes => masking.tracked.push(path),
            _ if unmask_all || unmasked_by(dir, &path, unmask) => masking.unmasked.push(path),
            Tracked::Unknown => {
                masking.index_unread = true;
                masking.masked.push(path);
            }
            Tracked::No => masking.masked.push(path),
        }
    }
    // A secret under another name is the secret: covered when it is.
    let identity = |path: &Path| {
        use std::os::unix::fs::MetadataExt;
        std::fs::symlink_metadata(path)
            .ok()
            .filter(|m| m.is_file())
            .map(|m| (m.dev(), m.ino()))
    };
    let masked: Vec<(u64, u64)> = masking.masked.iter().filter_map(|p| identity(p)).collect();
    let mut linked: Vec<PathBuf> = aliases
        .iter()
        .filter(|alias| !masking.masked.contains(alias))
        .filter(|alias| identity(alias).is_some_and(|id| masked.contains(&id)))
        .cloned()
        .collect();
    linked.sort();
    masking.masked.extend(linked);
    masking
}

/// Whether a `sandbox.unmask` pattern names `path`: a pattern (the policy's wildcards,
/// `~/` for the home directory) is matched against the path relative to the project,
/// the absolute path, and, when it has no `/`, the file name.
fn unmasked_by(dir: &Path, path: &Path, patterns: &[String]) -> bool {
    let absolute = path.to_string_lossy();
    let relative = path
        .strip_prefix(dir)
        .map(|r| r.to_string_lossy())
        .unwrap_or_default();
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy())
        .unwrap_or_default();
    patterns.iter().any(|pattern| {
        let pattern = if pattern.starts_with('~') {
            crate::paths::expand_home(pattern)
                .to_string_lossy()
                .into_owned()
        } else {
            pattern.trim_start_matches("./").to_string()
        };
        crate::wildcard::matches(&pattern, &absolute)
            || (!relative.is_empty() && crate::wildcard::matches(&pattern, &relative))
            || (!pattern.contains('/') && crate::wildcard::matches(&pattern, &name))
    })
}

impl Masking {
    /// The line telling the user, once per file and project, that tracked secrets are
    /// not masked and how to make them secret again; `None` when there is nothing new to
    /// tell. What was told is kept in `.tinytool/sandbox/told`.
    pub fn tracked_notice(&self, dir: &Path) -> Option<String> {
        if self.tracked.is_empty() {
            return None;
        }
        let told_path = crate::project::tinytool_dir(dir)
            .join("sandbox")
            .join("told");
        let told = std::fs::read(&told_path).unwrap_or_default();
        let told: Vec<&[u8]> = told.split(|&b| b == b'\n').collect();
        let fresh: Vec<String> = self
            .tracked
            .iter()
            .map(|p| shown(dir, p))
            .filter(|p| !told.contains(&p.as_bytes()))
            .collect();
        if fresh.is_empty() {
            return None;
        }
        let mut all: Vec<u8> = told.join(&b'\n');
        for path in &fresh {
            if !all.is_empty() && !all.ends_with(b"\n") {
                all.push(b'\n');
            }
            all.extend_from_slice(path.as_bytes());
        }
        if crate::project::ensure_own_subdir(dir, "sandbox").is_ok() {
            let _ = crate::atomic::write(&told_path, &all, 0o644);
        }
        Some(tracked_line(&fresh))
    }
}

/// The notice for secrets git tracks.
pub fn tracked_line(paths: &[String]) -> String {
    let list = paths.join(", ");
    let first = &paths[0];
    format!(
        "[sandbox: {list} {are} tracked by git, so {its} content is in the repository's history and commands see {it} as {it_is} (masking {it} would corrupt commits); to keep {it} secret: git rm --cached {first}, add {it} to .gitignore, and rewrite the history (git filter-repo --invert-paths --path {first}) if it was ever shared]",
        are = if paths.len() == 1 { "is" } else { "are" },
        its = if paths.len() == 1 { "its" } else { "their" },
        it = if paths.len() == 1 { "it" } else { "them" },
        it_is = if paths.len() == 1 {
            "it is"
        } else {
            "they are"
        },
    )
}

/// A path as the project shows it: relative inside `dir`, else absolute.
pub fn shown(dir: &Path, path: &Path) -> String {
    path.strip_prefix(dir)
        .unwrap_or(path)
        .to_string_lossy()
        .into_owned()
}

/// `count` empty read-only files, one per masked secret (`.tinytool/sandbox/masks/N`),
/// made once and reused; `None` when they cannot be made.
pub fn placeholders(tinytool: &Path, count: usize) -> Option<Vec<PathBuf>> {
    use std::os::unix::fs::PermissionsExt;
    let folder = tinytool.join("sandbox").join("masks");
    match std::fs::symlink_metadata(&folder) {
        Ok(meta) if meta.is_dir() => {}
        Ok(_) => return None,
        Err(_) => std::fs::create_dir_all(&folder).ok()?,
    }
    (0..count)
        .map(|i| {
            let path = folder.join(i.to_string());
            match std::fs::symlink_metadata(&path) {
                Ok(meta) if meta.is_file() && meta.len() == 0 => return Some(path),
                Ok(_) => std::fs::remove_file(&path).ok()?,
                Err(_) => {}
            }
            // create_new: never through a link put there since it was looked at.
            std::fs::File::options()
                .write(true)
                .create_new(true)
                .open(&path)
                .ok()?;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o444)).ok()?;
            Some(path)
        })
        .collect()
}

/// An inotify instance watching the placeholders for opens.
///
/// Closing an inotify instance that had watches waits for the kernel to free them (an
/// SRCU grace period, several milliseconds): the watches are removed as soon as the
/// command's opens are read, so that the grace period passes while the result is
/// composed, and the instance is closed on a thread of its own.
#[derive(Debug)]
pub struct Opens {
    fd: Option<std::os::fd::OwnedFd>,
    /// The watch descriptor of each placeholder, in order.
    watches: Vec<i32>,
    /// What [`Opens::opened`] found, once it looked.
    seen: std::sync::OnceLock<Vec<usize>>,
}

impl Drop for Opens {
    fn drop(&mut self) {
        if let Some(fd) = self.fd.take() {
            // Nothing waits for this thread; where the process exits first, the exit
            // closes the instance.
            let _ = std::thread::Builder::new()
                .name("inotify-close".into())
                .spawn(move || drop(fd));
        }
    }
}

impl Opens {
    /// Watches `placeholders`; `None` where inotify is not available (the result then
    /// cannot name what was read, nothing else changes).
    pub fn watch(placeholders: &[PathBuf]) -> Option<Opens> {
        use std::os::fd::FromRawFd;
        // SAFETY: plain system call; the descriptor is owned below.
        let raw = unsafe { libc::inotify_init1(libc::IN_NONBLOCK | libc::IN_CLOEXEC) };
        if raw < 0 {
            return None;
        }
        // SAFETY: `raw` is a fresh descriptor this process owns.
        let fd = unsafe { std::os::fd::OwnedFd::from_raw_fd(raw) };
        let mut watches = Vec::with_capacity(placeholders.len());
        for path in placeholders {
            let path = std::ffi::CString::new(path.as_os_str().as_bytes()).ok()?;
            // SAFETY: a valid descriptor and NUL-terminated path.
            let wd = unsafe {
                libc::inotify_add_watch(
                    std::os::fd::AsRawFd::as_raw_fd(&fd),
                    path.as_ptr(),
                    libc::IN_OPEN | libc::IN_DONT_FOLLOW,
                )
            };
            if wd < 0 {
                return None;
            }
            watches.push(wd);
        }
        Some(Opens {
            fd: Some(fd),
            watches,
            seen: std::sync::OnceLock::new(),
        })
    }

    /// The indices of the placeholders opened since the watch began; the first call
    /// reads them and ends the watch (call it once the command ended).
    pub fn opened(&self) -> Vec<usize> {
        self.seen.get_or_init(|| self.read_and_stop()).clone()
    }

    fn read_and_stop(&self) -> Vec<usize> {
        use std::os::fd::AsRawFd;
        let Some(fd) = self.fd.as_ref().map(|fd| fd.as_raw_fd()) else {
            return Vec::new();
        };
        let mut seen = vec![false; self.watches.len()];
        let mut buffer = [0u8; 4096];
        loop {
            // SAFETY: reads into a buffer of the given length.
            let n = unsafe { libc::read(fd, buffer.as_mut_ptr().cast(), buffer.len()) };
            if n <= 0 {
                break;
            }
            let n = n as usize;
            let mut at = 0;
            let header = std::mem::size_of::<libc::inotify_event>();
            while at + header <= n {
                // SAFETY: the kernel wrote whole events; read unaligned from the buffer.
                let event: libc::inotify_event =
                    unsafe { std::ptr::read_unaligned(buffer[at..].as_ptr().cast()) };
                if event.mask & libc::IN_OPEN != 0
                    && let Some(i) = self.watches.iter().position(|&w| w == event.wd)
                {
                    seen[i] = true;
                }
                at += header + event.len as usize;
            }
        }
        for &wd in &self.watches {
            // SAFETY: removes a watch of this instance; a failure only means it is gone.
            unsafe {
                libc::inotify_rm_watch(fd, wd);
            }
        }
        (0..seen.len()).filter(|&i| seen[i]).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    fn git(dir: &Path, args: &[&str]) {
        assert!(
            Command::new("git")
                .args(args)
                .current_dir(dir)
                .status()
                .unwrap()
                .success()
        );
    }

    #[test]
    fn tracked_public_and_unmasked_files_are_not_masked() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        git(root, &["init", "-q"]);
        let write = |rel: &str, text: &str| {
            let path = root.join(rel);
            std::fs::write(&path, text).unwrap();
            path
        };
        let tracked = write("config.env", "K=v");
        let cert = write(
            "ca.pem",
            "-----BEGIN CERTIFICATE-----\nx\n-----END CERTIFICATE-----\n",
        );
        let key = write(
            "tls.key",
            "-----BEGIN PRIVATE KEY-----\nx\n-----END PRIVATE KEY-----\n",
        );
        let local = write(".env.local", "K=v");
        let opened = write(".env.test", "K=v");
        git(root, &["add", "config.env"]);
        let all = [
            tracked.clone(),
            cert,
            key.clone(),
            local.clone(),
            opened.clone(),
        ];
        let masking = decide(root, &all, &[], &[".env.test".into()], false);
        assert_eq!(masking.masked, [local, key]);
        assert_eq!(masking.tracked, std::slice::from_ref(&tracked));
        assert_eq!(masking.unmasked, [opened]);
        assert!(!masking.index_unread);
        // A secret-shell allow rule opens every untracked secret.
        let all_open = decide(root, &all, &[], &[], true);
        assert!(all_open.masked.is_empty());
        assert_eq!(all_open.unmasked.len(), 3);
        // The notice is given once.
        std::fs::create_dir_all(root.join(".tinytool")).unwrap();
        let line = masking.tracked_notice(root).unwrap();
        assert!(line.contains("config.env is tracked by git"), "{line}");
        assert!(line.contains("git rm --cached config.env"), "{line}");
        assert_eq!(masking.tracked_notice(root), None);
        // An index that cannot be read masks (fail closed) and says so.
        std::fs::write(root.join(".git/index"), b"DIRC\0\0\0\x07").unwrap();
        let unread = decide(root, &all, &[], &[], false);
        assert!(unread.index_unread);
        assert!(unread.masked.contains(&tracked));
    }

    #[test]
    fn unmask_patterns() {
        let dir = Path::new("/p");
        let at = |rel: &str| dir.join(rel);
        let pats = |p: &[&str]| p.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert!(unmasked_by(
            dir,
            &at("fixtures/a.env"),
            &pats(&["fixtures/*"])
        ));
        assert!(unmasked_by(
            dir,
            &at("deep/x/.env.test"),
            &pats(&[".env.test"])
        ));
        assert!(unmasked_by(dir, &at("x/.env"), &pats(&["/p/x/.env"])));
        assert!(!unmasked_by(
            dir,
            &at("x/.env"),
            &pats(&["y/*", ".env.local"])
        ));
    }

    #[test]
    fn opens_of_a_placeholder_are_seen() {
        let dir = tempfile::tempdir().unwrap();
        let files = placeholders(dir.path(), 3).unwrap();
        assert!(files.iter().all(|f| std::fs::read(f).unwrap().is_empty()));
        let opens = Opens::watch(&files).unwrap();
        // The `read` above came before the watch; this one is seen, a `stat` is not.
        let _ = std::fs::read(&files[1]).unwrap();
        let _ = std::fs::metadata(&files[2]).unwrap();
        assert_eq!(opens.opened(), [1]);
        // The watch ended with the first look.
        let _ = std::fs::read(&files[0]).unwrap();
        assert_eq!(opens.opened(), [1]);
        // Made once, reused.
        assert_eq!(placeholders(dir.path(), 2).unwrap(), files[..2]);
    }
}
