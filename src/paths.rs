//! Path resolution shared by every file tool and by the policy.
//!
//! A path argument is resolved against the session's directory: `~` and `~/…` expand to
//! the home directory, a relative path is joined onto the directory, the result is cleaned
//! lexically (`.` and `..` removed), and symlinks are resolved — for a path that does not
//! exist yet, those of its deepest existing ancestor — so that a symlink can never make a
//! path look like it is somewhere it is not.

use std::path::{Component, Path, PathBuf};

/// Resolves a tool's path argument against `dir` (which should itself be resolved).
pub fn resolve(dir: &Path, input: &str) -> PathBuf {
    let expanded = expand_home(input);
    let joined = if expanded.is_absolute() {
        expanded
    } else {
        dir.join(expanded)
    };
    resolve_symlinks(&clean(&joined))
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

/// Resolves symlinks of the deepest existing ancestor of `path` and re-appends the rest.
pub fn resolve_symlinks(path: &Path) -> PathBuf {
    if let Ok(real) = std::fs::canonicalize(path) {
        return real;
    }
    let mut missing = Vec::new();
    let mut current = path.to_path_buf();
    while let Some(parent) = current.parent().map(Path::to_path_buf) {
        if let Some(name) = current.file_name() {
            missing.push(name.to_os_string());
        }
        if let Ok(mut real) = std::fs::canonicalize(&parent) {
            for name in missing.iter().rev() {
                real.push(name);
            }
            return real;
        }
        current = parent;
    }
    path.to_path_buf()
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

/// How a path is shown to the model: relative to `dir` when inside it, else absolute.
pub fn display(dir: &Path, path: &Path) -> String {
    relative_inside(dir, path).unwrap_or_else(|| path.to_string_lossy().into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(relative_inside(&dir, Path::new("/etc/passwd")), None);
        assert_eq!(display(&dir, Path::new("/etc/passwd")), "/etc/passwd");
    }
}
