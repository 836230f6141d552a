//! A private `/tmp` per project: inside the sandbox, `/tmp` is the project's own
//! directory `.tinytool/tmp` (made once, mode 1777, kept across calls so that a monitor's
//! server and a later bash call see the same files, and removed with the project's
//! state), not the host's `/tmp`, which every process of the machine shares. What must
//! keep its host view though it lies under `/tmp` — the project itself, the home
//! directory, the policy's writable paths and sockets, the paths the sandbox protects —
//! is bound back at its own path, from a handle opened before `/tmp` was covered.
//! `TMPDIR`, when it lies under `/tmp`, exists in the private one.
//!
//! The child mounts it ([`super::namespaces`]): it opens a handle on every kept path
//! (in its own mount namespace: a bind's source must be in it), mounts the private
//! directory on `/tmp`, then binds each kept path onto a mount point made for it from
//! `/proc/self/fd/N` (the handle reaches the host's path, which `/tmp` now hides).

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// The most host paths under `/tmp` bound back (the child keeps their handles on its
/// stack); more is a failure of the mount layer.
pub(crate) const MAX_KEPT: usize = 64;

/// What the child needs to give a command a private `/tmp`.
#[derive(Debug)]
pub(crate) struct PrivateTmp {
    /// The project's `.tinytool/tmp`.
    pub source: CString,
    /// The host paths under `/tmp` bound back.
    pub keep: Vec<Kept>,
    /// Directories made in the private `/tmp` (`TMPDIR`).
    pub make: Vec<CString>,
}

impl PrivateTmp {
    /// Whether a command sees the host's `path` (absolute, resolved): anything outside
    /// `/tmp`, and under it what is kept.
    pub fn shows(&self, path: &Path) -> bool {
        use std::os::unix::ffi::OsStrExt;
        !path.starts_with("/tmp")
            || self.keep.iter().any(|kept| {
                path.starts_with(Path::new(std::ffi::OsStr::from_bytes(
                    kept.target.as_bytes(),
                )))
            })
    }
}

/// One host path under `/tmp` that keeps its host view.
#[derive(Debug)]
pub(crate) struct Kept {
    /// The path.
    pub target: CString,
    /// Whether it is a directory (else a mount point file is made for it).
    pub dir: bool,
}

/// The private `/tmp` of the project in `dir` (resolved), keeping `mounted` (the paths
/// the plan mounts: writable, protected, anchored) where they lie under `/tmp`; `None`
/// where there is none to make (the project is `/tmp` or above it, or its folder cannot
/// be made: the host's `/tmp` is then the command's, as it was).
pub(crate) fn prepare(dir: &Path, mounted: &[PathBuf]) -> Option<PrivateTmp> {
    let tmp = crate::paths::canonicalize("/tmp").ok()?;
    if tmp.starts_with(dir) {
        return None;
    }
    let source = crate::project::ensure_own_subdir(dir, "tmp").ok()?;
    if std::fs::symlink_metadata(&source)
        .ok()?
        .permissions()
        .mode()
        & 0o7777
        != 0o1777
    {
        std::fs::set_permissions(&source, std::fs::Permissions::from_mode(0o1777)).ok()?;
    }
    // The outermost of the mounted paths under /tmp (one below another comes along).
    let mut under: Vec<PathBuf> = mounted
        .iter()
        .filter(|p| p.starts_with(&tmp) && **p != tmp)
        .cloned()
        .collect();
    under.sort_by_key(|p| p.components().count());
    let mut outer: Vec<PathBuf> = Vec::new();
    for path in under {
        if !outer.iter().any(|o| path.starts_with(o)) {
            outer.push(path);
        }
    }
    let mut keep = Vec::new();
    for path in outer {
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        keep.push(Kept {
            target: CString::new(path.as_os_str().as_bytes()).ok()?,
            dir: meta.is_dir(),
        });
    }
    let make = crate::paths::canonicalize(std::env::temp_dir())
        .ok()
        .filter(|t| t.starts_with(&tmp) && *t != tmp && !keep_covers(&keep, t))
        .and_then(|t| CString::new(t.as_os_str().as_bytes()).ok())
        .into_iter()
        .collect();
    Some(PrivateTmp {
        source: CString::new(source.as_os_str().as_bytes()).ok()?,
        keep,
        make,
    })
}

fn keep_covers(keep: &[Kept], path: &Path) -> bool {
    keep.iter()
        .any(|k| path.starts_with(Path::new(std::ffi::OsStr::from_bytes(k.target.as_bytes()))))
}

/// Whether `path` is visible inside the sandbox when `/tmp` is `private`: outside `/tmp`,
/// or under a kept path.
pub(crate) fn visible(private: Option<&PrivateTmp>, path: &Path) -> bool {
    let Some(private) = private else {
        return true;
    };
    !path.starts_with("/tmp") || keep_covers(&private.keep, path)
}
