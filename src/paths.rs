//! Path resolution shared by every file tool and by the policy.
//!
//! A path argument is resolved against the session's directory: `~` and `~/…` expand to
//! the home directory, a relative path is joined onto the directory, the result is cleaned
//! lexically (`.` and `..` removed), and symlinks are resolved — for a path that does not
//! exist yet, those of its deepest existing ancestor, and a dangling symlink is followed to
//! the path it names — so that a symlink can never make a path look like it is somewhere it
//! is not.
//!
//! [`resolve_link`] is the variant for operations on a symlink itself (apply_patch deleting
//! or moving a link): the parent directories are resolved, the final component is kept.

use std::path::{Component, Path, PathBuf};

/// Resolves a tool's path argument against `dir` (which should itself be resolved).
pub fn resolve(dir: &Path, input: &str) -> PathBuf {
    resolve_symlinks(&absolute(dir, input))
}

/// Resolves a path argument like [`resolve`] except its final component: when that is a
/// symlink, the result is the link itself (in its real directory), not what it points to.
pub fn resolve_link(dir: &Path, input: &str) -> PathBuf {
    let path = absolute(dir, input);
    match (path.parent(), path.file_name()) {
        (Some(parent), Some(name)) => resolve_symlinks(parent).join(name),
        _ => resolve_symlinks(&path),
    }
}

/// `input` with `~` expanded, joined onto `dir` when relative, cleaned lexically.
fn absolute(dir: &Path, input: &str) -> PathBuf {
    let expanded = expand_home(input);
    let joined = if expanded.is_absolute() {
        expanded
    } else {
        dir.join(expanded)
    };
    clean(&joined)
}

/// Expands a leading `~` to the home directory (when `HOME` is set).
pub fn expand_home(input: &str) -> PathBuf {
    let home = std::env::var_os("HOME").filter(|h| !h.is_empty());
    match (input, home) {
        ("~", Some(home)) => PathBuf::from(home),
        (s, Some(home)) if s.starts_with("~/") => PathBuf::from(home).join(&s[2..]),
        (s, _) => PathBuf::from(s),
    }
}

/// Removes `.` components and resolves `..` lexically (never above the root).
pub fn clean(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() && !path.is_absolute() {
                    out.push("..");
                }
            }
            other => out.push(other.as_os_str()),
        }
    }
    if out.as_os_str().is_empty() {
        out.push(if path.is_absolute() { "/" } else { "." });
    }
    out
}

/// Dangling symlinks followed in one resolution at most (Linux's own limit): a longer chain
/// is a loop, and the path is then left where the loop starts.
const MAX_DANGLING_LINKS: usize = 40;

/// Resolves symlinks of the deepest existing ancestor of `path` and re-appends the rest;
/// when the first missing component is a dangling symlink, the path it names takes its
/// place (so writing through it creates the file it names, and is judged there).
pub fn resolve_symlinks(path: &Path) -> PathBuf {
    let mut path = path.to_path_buf();
    for _ in 0..=MAX_DANGLING_LINKS {
        if let Ok(real) = canonicalize(&path) {
            return real;
        }
        let mut missing = Vec::new();
        let mut current = path.clone();
        let mut found = None;
        while let Some(parent) = current.parent().map(Path::to_path_buf) {
            if let Some(name) = current.file_name() {
                missing.push(name.to_os_string());
            }
            if let Ok(real) = canonicalize(&parent) {
                found = Some(real);
                break;
            }
            current = parent;
        }
        let Some(mut real) = found else {
            return path;
        };
        // `missing` runs from the final component up to the one right under `real`.
        let Some(first) = missing.pop() else {
            return real;
        };
        let link = real.join(&first);
        let target = std::fs::symlink_metadata(&link)
            .ok()
            .filter(|meta| meta.file_type().is_symlink())
            .and_then(|_| std::fs::read_link(&link).ok());
        match target {
            Some(target) => {
                let mut next = clean(&real.join(target));
                for name in missing.iter().rev() {
                    next.push(name);
                }
                path = next;
            }
            None => {
                real.push(first);
                for name in missing.iter().rev() {
                    real.push(name);
                }
                return real;
            }
        }
    }
    path
}

/// The canonical form of an existing path, as [`std::fs::canonicalize`] gives it, in
/// three system calls (open the path as a handle, read back the kernel's name for it,
/// close) rather than a `readlink` per component: every tool call and every sandbox
/// plan resolves a few dozen paths. Falls back to the standard library where the kernel's
/// name cannot serve (no `/proc`, a path outside this process's root, a file removed
/// meanwhile).
pub fn canonicalize(path: impl AsRef<Path>) -> std::io::Result<PathBuf> {
    let path = path.as_ref();
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    use std::os::unix::ffi::{OsStrExt, OsStringExt};
    let Ok(c) = std::ffi::CString::new(path.as_os_str().as_bytes()) else {
        return std::fs::canonicalize(path);
    };
    // SAFETY: a valid NUL-terminated path; the descriptor is owned below.
    let fd = unsafe { libc::open(c.as_ptr(), libc::O_PATH | libc::O_CLOEXEC) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: a descriptor open just returned, owned by nobody else.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    let link = format!("/proc/self/fd/{}\0", fd.as_raw_fd());
    let mut buf = vec![0u8; libc::PATH_MAX as usize + 1];
    // SAFETY: `link` is NUL-terminated; readlink writes at most `buf.len()` bytes.
    let n = unsafe { libc::readlink(link.as_ptr().cast(), buf.as_mut_ptr().cast(), buf.len()) };
    let usable = |name: &[u8]| name.first() == Some(&b'/') && !name.ends_with(b" (deleted)");
    match usize::try_from(n) {
        Ok(n) if n < buf.len() && usable(&buf[..n]) => {
            buf.truncate(n);
            Ok(PathBuf::from(std::ffi::OsString::from_vec(buf)))
        }
        _ => std::fs::canonicalize(path),
    }
}

/// The path relative to `dir` with forward slashes and no leading `./`, when it is inside
/// `dir` (`dir` itself gives `.`); `None` when it is outside.
pub fn relative_inside(dir: &Path, path: &Path) -> Option<String> {
    let rest = path.strip_prefix(dir).ok()?;
    let parts: Vec<String> = rest
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if parts.is_empty() {
        Some(".".to_string())
    } else {
        Some(parts.join("/"))
    }
}

/// Whether `path` is a relative path as tinytool records one inside a project: not
/// empty, not absolute, every component a plain name (no `.`, `..` or empty component,
/// no trailing `/`), no NUL. A stored path that is not cannot be joined to the project
/// directory safely: `../x` and `/etc/x` lead out of it.
pub fn is_clean_relative(path: &str) -> bool {
    !path.is_empty()
        && !path.contains('\0')
        && path
            .split('/')
            .all(|part| !part.is_empty() && part != "." && part != "..")
}

/// How a path is shown to the model: relative to `dir` when inside it, else absolute.
pub fn display(dir: &Path, path: &Path) -> String {
    relative_inside(dir, path).unwrap_or_else(|| path.to_string_lossy().into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clean_relative_paths() {
        for good in ["a", "src/main.rs", ".env", "a/.b/..c", "a b/c"] {
            assert!(is_clean_relative(good), "{good}");
        }
        for bad in [
            "",
            "/etc/passwd",
            "../x",
            "a/../../x",
            "a/./b",
            "./a",
            "a//b",
            "a/",
            "..",
            ".",
            "a\0b",
        ] {
            assert!(!is_clean_relative(bad), "{bad:?}");
        }
    }

    #[test]
    fn canonicalize_agrees_with_the_standard_library() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        std::fs::create_dir_all(root.join("a/b c")).unwrap();
        std::fs::write(root.join("a/b c/f\nx"), "").unwrap();
        std::os::unix::fs::symlink("a/b c", root.join("up")).unwrap();
        std::os::unix::fs::symlink("missing", root.join("dangling")).unwrap();
        std::os::unix::fs::symlink("loop", root.join("loop")).unwrap();
        let relative = std::env::current_dir().unwrap();
        for path in [
            root.to_path_buf(),
            root.join("a/b c/f\nx"),
            root.join("up"),
            root.join("up/../b c/./f\nx"),
            root.join("up/f\nx/"),
            root.join("dangling"),
            root.join("loop"),
            root.join("nothing"),
            PathBuf::from("/"),
            PathBuf::from("."),
            PathBuf::new(),
            relative,
        ] {
            let ours = canonicalize(&path).map_err(|e| e.kind());
            let std = std::fs::canonicalize(&path).map_err(|e| e.kind());
            assert_eq!(ours, std, "{path:?}");
        }
    }

    #[test]
    fn cleaning_removes_dots_lexically() {
        assert_eq!(clean(Path::new("/a/./b/../c")), PathBuf::from("/a/c"));
        assert_eq!(clean(Path::new("/../x")), PathBuf::from("/x"));
        assert_eq!(clean(Path::new("a/..")), PathBuf::from("."));
    }

    #[test]
    fn relative_paths_resolve_against_the_directory_and_through_symlinks() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = std::fs::canonicalize(tmp.path()).unwrap();
        std::fs::create_dir(dir.join("real")).unwrap();
        std::os::unix::fs::symlink(dir.join("real"), dir.join("link")).unwrap();
        assert_eq!(resolve(&dir, "link/new.txt"), dir.join("real/new.txt"));
        assert_eq!(resolve(&dir, "./real/../real/x/y"), dir.join("real/x/y"));
        assert_eq!(
            relative_inside(&dir, &dir.join("real/x/y")).as_deref(),
            Some("real/x/y")
        );
        assert_eq!(relative_inside(&dir, &dir).as_deref(), Some("."));
        // The link itself, in its real directory.
        std::fs::write(dir.join("real/f"), "x").unwrap();
        std::os::unix::fs::symlink("f", dir.join("real/l")).unwrap();
        assert_eq!(resolve(&dir, "link/l"), dir.join("real/f"));
        assert_eq!(resolve_link(&dir, "link/l"), dir.join("real/l"));
        assert_eq!(resolve_link(&dir, "real/f"), dir.join("real/f"));
        assert_eq!(resolve_link(&dir, "link/new"), dir.join("real/new"));
        assert_eq!(relative_inside(&dir, Path::new("/etc/passwd")), None);
        assert_eq!(display(&dir, Path::new("/etc/passwd")), "/etc/passwd");
    }

    #[test]
    fn dangling_links_lead_to_the_path_they_name() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = std::fs::canonicalize(tmp.path()).unwrap();
        let link = |target: &str, name: &str| {
            std::os::unix::fs::symlink(target, dir.join(name)).unwrap();
        };
        link("sub/new.txt", "pending");
        assert_eq!(resolve(&dir, "pending"), dir.join("sub/new.txt"));
        assert_eq!(resolve_link(&dir, "pending"), dir.join("pending"));
        link("/nowhere/x", "abs");
        assert_eq!(resolve(&dir, "abs"), PathBuf::from("/nowhere/x"));
        // A dangling directory link in the middle, through a chain of two.
        link("hop", "gone-dir");
        link("../elsewhere", "hop");
        assert_eq!(
            resolve(&dir, "gone-dir/a/b.txt"),
            dir.parent().unwrap().join("elsewhere/a/b.txt")
        );
        // A loop ends without hanging, at a path inside the loop.
        link("loop-b", "loop-a");
        link("loop-a", "loop-b");
        let looped = resolve(&dir, "loop-a");
        assert!(
            looped == dir.join("loop-a") || looped == dir.join("loop-b"),
            "{looped:?}"
        );
    }
}
