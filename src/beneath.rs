//! Reaching a checked path without following anything on the way.
//!
//! A file tool resolves its path once (`paths::resolve`: every symlink followed, so the
//! result names real directories only) and the policy judges that result. Acting on it
//! later by name would resolve it again, and a directory swapped for a symlink in between
//! would carry the write somewhere the policy never saw. So every operation here opens
//! the directory that holds the target as a handle, refusing any symlink on the way
//! (`openat2` with `RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS`, or, where the kernel has
//! no `openat2` or a filter forbids it, a walk opening one component at a time with
//! `O_NOFOLLOW`), and then acts on the final name with a `*at` call relative to that
//! handle: `openat`, `mkdirat`, `renameat`, `linkat`, `unlinkat`. What is changed is
//! therefore exactly the path that was checked, or nothing: a symlink found where a
//! directory was checked is an error ([`swapped`]), never followed.
//!
//! A symlink inside the project that leads inside stays usable because the path was
//! resolved through it before the check; one that leads out was resolved to the outside
//! path, which the policy judged as an `external_directory` access.
//!
//! The final component is not followed either, except by [`open_read`] with
//! `follow_final` (reading what a symlink points to is sometimes the point, e.g. comparing a
//! deleted link's target with a patch).

use std::ffi::{CString, OsStr};
use std::fs::{File, Metadata};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path};
use std::sync::atomic::{AtomicBool, Ordering};

/// Set once `openat2` proved unusable (old kernel, or a seccomp filter): the walk is used.
static NO_OPENAT2: AtomicBool = AtomicBool::new(false);

/// The error for a symlink met where the checked path had a directory (or, for a final
/// component opened without following, a file).
pub fn swapped(path: &Path) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        format!(
            "{} changed while in use: a symbolic link is now on the path that was checked \
             (a directory or file was replaced by a link). Nothing was done through it; \
             retry the call.",
            path.display()
        ),
    )
}

fn cstring(bytes: &[u8]) -> io::Result<CString> {
    CString::new(bytes).map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))
}

fn check(ret: libc::c_int) -> io::Result<libc::c_int> {
    if ret < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(ret)
    }
}

/// Opens the directory `path` as an `O_PATH` handle, following no symlink anywhere.
pub fn open_dir(path: &Path) -> io::Result<OwnedFd> {
    let flags = libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC;
    let result = if NO_OPENAT2.load(Ordering::Relaxed) {
        walk(path, flags)
    } else {
        match openat2(path, flags) {
            Err(err)
                if matches!(
                    err.raw_os_error(),
                    Some(libc::ENOSYS | libc::EPERM | libc::E2BIG)
                ) =>
            {
                NO_OPENAT2.store(true, Ordering::Relaxed);
                walk(path, flags)
            }
            other => other,
        }
    };
    result.map_err(|err| match err.raw_os_error() {
        Some(libc::ELOOP) => swapped(path),
        _ => err,
    })
}

#[cfg(target_os = "linux")]
fn openat2(path: &Path, flags: libc::c_int) -> io::Result<OwnedFd> {
    let name = cstring(path.as_os_str().as_bytes())?;
    /// The kernel's `struct open_how` (libc's is non-exhaustive).
    #[repr(C)]
    struct OpenHow {
        flags: u64,
        mode: u64,
        resolve: u64,
    }
    let how = OpenHow {
        flags: flags as u64,
        mode: 0,
        resolve: libc::RESOLVE_NO_SYMLINKS | libc::RESOLVE_NO_MAGICLINKS,
    };
    // SAFETY: a valid NUL-terminated path and a fully initialised `open_how` whose size is
    // passed; the returned descriptor is owned by no one else.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_openat2,
            libc::AT_FDCWD,
            name.as_ptr(),
            &how as *const OpenHow,
            std::mem::size_of::<OpenHow>(),
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a fresh descriptor returned by the kernel.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as RawFd) })
}

#[cfg(not(target_os = "linux"))]
fn openat2(_path: &Path, _flags: libc::c_int) -> io::Result<OwnedFd> {
    Err(io::Error::from_raw_os_error(libc::ENOSYS))
}

/// `openat` relative to `dir` (or the working directory when `None`).
fn openat(
    dir: Option<&OwnedFd>,
    name: &[u8],
    flags: libc::c_int,
    mode: u32,
) -> io::Result<OwnedFd> {
    let name = cstring(name)?;
    let base = dir.map_or(libc::AT_FDCWD, AsRawFd::as_raw_fd);
    // SAFETY: a valid NUL-terminated name; the descriptor returned is owned by no one else.
    let fd = check(unsafe { libc::openat(base, name.as_ptr(), flags, mode as libc::c_uint) })?;
    // SAFETY: a fresh descriptor returned by the kernel.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// The fallback: one component at a time, each opened with `O_NOFOLLOW` and checked to be
/// a directory (an `O_PATH | O_NOFOLLOW` open of a symlink yields the link itself).
fn walk(path: &Path, flags: libc::c_int) -> io::Result<OwnedFd> {
    let mut current: Option<OwnedFd> = None;
    let step_flags = libc::O_PATH | libc::O_NOFOLLOW | libc::O_CLOEXEC;
    for component in path.components() {
        let name: &[u8] = match component {
            Component::RootDir => b"/",
            Component::CurDir => b".",
            Component::ParentDir => b"..",
            Component::Normal(name) => name.as_bytes(),
            Component::Prefix(_) => return Err(io::Error::from_raw_os_error(libc::EINVAL)),
        };
        let next = openat(current.as_ref(), name, step_flags, 0)?;
        if !File::from(next.try_clone()?).metadata()?.is_dir() {
            return Err(io::Error::from_raw_os_error(libc::ELOOP));
        }
        current = Some(next);
    }
    match current {
        Some(fd) => Ok(fd),
        None => openat(None, b".", flags, 0),
    }
}

/// The directory holding `path` (as a handle) and `path`'s final name.
pub fn parent(path: &Path) -> io::Result<(OwnedFd, &OsStr)> {
    let name = path
        .file_name()
        .ok_or_else(|| io::Error::from_raw_os_error(libc::EINVAL))?;
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    Ok((open_dir(dir)?, name))
}

/// Opens `name` in `dir` with `flags` (plus `O_CLOEXEC`).
pub fn open_at(dir: &OwnedFd, name: &OsStr, flags: libc::c_int, mode: u32) -> io::Result<File> {
    Ok(File::from(openat(
        Some(dir),
        name.as_bytes(),
        flags | libc::O_CLOEXEC,
        mode,
    )?))
}

/// The metadata of `path`, no directory on the way followed; the final component is
/// followed only when `follow_final`.
pub fn metadata(path: &Path, follow_final: bool) -> io::Result<Metadata> {
    let (dir, name) = parent(path)?;
    let nofollow = if follow_final { 0 } else { libc::O_NOFOLLOW };
    open_at(&dir, name, libc::O_PATH | nofollow, 0)?.metadata()
}

/// Opens the file at `path` for reading (non-blocking, no controlling terminal), no
/// directory on the way followed; the final component only when `follow_final` (else a
/// symlink there is [`swapped`]).
pub fn open_read(path: &Path, follow_final: bool) -> io::Result<File> {
    let (dir, name) = parent(path)?;
    let nofollow = if follow_final { 0 } else { libc::O_NOFOLLOW };
    open_at(
        &dir,
        name,
        libc::O_RDONLY | libc::O_NONBLOCK | libc::O_NOCTTY | nofollow,
        0,
    )
    .map_err(|err| match err.raw_os_error() {
        Some(libc::ELOOP) => swapped(path),
        _ => err,
    })
}

/// Creates the directory `path` with `mode` (the umask applies), its parent reached
/// without following anything.
pub fn mkdir(path: &Path, mode: u32) -> io::Result<()> {
    let (dir, name) = parent(path)?;
    mkdir_at(&dir, name, mode)
}

/// `mkdirat` in `dir`.
fn mkdir_at(dir: &OwnedFd, name: &OsStr, mode: u32) -> io::Result<()> {
    let name = cstring(name.as_bytes())?;
    // SAFETY: a valid NUL-terminated name relative to an open directory handle.
    check(unsafe { libc::mkdirat(dir.as_raw_fd(), name.as_ptr(), mode as libc::mode_t) })?;
    Ok(())
}

/// `renameat` of a name in `from_dir` to a name in `to_dir` (a symlink is moved itself).
pub fn rename_at(from_dir: &OwnedFd, from: &OsStr, to_dir: &OwnedFd, to: &OsStr) -> io::Result<()> {
    let (from, to) = (cstring(from.as_bytes())?, cstring(to.as_bytes())?);
    // SAFETY: valid NUL-terminated names relative to open directory handles.
    check(unsafe {
        libc::renameat(
            from_dir.as_raw_fd(),
            from.as_ptr(),
            to_dir.as_raw_fd(),
            to.as_ptr(),
        )
    })?;
    Ok(())
}

/// Renames `from` to `to`, both parents reached without following anything.
pub fn rename(from: &Path, to: &Path) -> io::Result<()> {
    let (from_dir, from_name) = parent(from)?;
    let (to_dir, to_name) = parent(to)?;
    rename_at(&from_dir, from_name, &to_dir, to_name)
}

/// Gives `from` (a symlink itself, never what it points to) the second name `to`.
pub fn hard_link(from: &Path, to: &Path) -> io::Result<()> {
    let (from_dir, from_name) = parent(from)?;
    let (to_dir, to_name) = parent(to)?;
    let (from_name, to_name) = (cstring(from_name.as_bytes())?, cstring(to_name.as_bytes())?);
    // SAFETY: valid NUL-terminated names relative to open directory handles; flags 0 (a
    // final symlink is linked itself).
    check(unsafe {
        libc::linkat(
            from_dir.as_raw_fd(),
            from_name.as_ptr(),
            to_dir.as_raw_fd(),
            to_name.as_ptr(),
            0,
        )
    })?;
    Ok(())
}

/// `unlinkat` in `dir`: a file or symlink, or an empty directory when `directory`.
pub fn unlink_at(dir: &OwnedFd, name: &OsStr, directory: bool) -> io::Result<()> {
    let name = cstring(name.as_bytes())?;
    let flags = if directory { libc::AT_REMOVEDIR } else { 0 };
    // SAFETY: a valid NUL-terminated name relative to an open directory handle.
    check(unsafe { libc::unlinkat(dir.as_raw_fd(), name.as_ptr(), flags) })?;
    Ok(())
}

/// Removes the file or symlink `path` (a directory is refused by the kernel: `EISDIR`).
pub fn remove_file(path: &Path) -> io::Result<()> {
    let (dir, name) = parent(path)?;
    unlink_at(&dir, name, false)
}

/// Removes the empty directory `path`.
pub fn remove_dir(path: &Path) -> io::Result<()> {
    let (dir, name) = parent(path)?;
    unlink_at(&dir, name, true)
}

/// Flushes the directories holding `paths` (each once), making renames and deletions in
/// them durable. A filesystem that cannot sync a directory still has the files in place, so
/// failures are ignored.
pub fn sync_dirs<'a>(paths: impl IntoIterator<Item = &'a Path>) {
    let mut dirs: Vec<&Path> = paths.into_iter().filter_map(Path::parent).collect();
    dirs.sort();
    dirs.dedup();
    for dir in dirs {
        if let Ok(handle) = std::fs::File::open(dir) {
            let _ = handle.sync_all();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_symlinked_directory_on_the_path_is_never_followed() {
        let tmp = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(tmp.path()).unwrap();
        std::fs::create_dir_all(root.join("real")).unwrap();
        std::fs::create_dir_all(root.join("outside")).unwrap();
        std::os::unix::fs::symlink(root.join("outside"), root.join("link")).unwrap();
        std::fs::write(root.join("outside/f"), "secret").unwrap();
        assert!(open_dir(&root.join("real")).is_ok());
        let err = open_dir(&root.join("link")).unwrap_err();
        assert!(err.to_string().contains("changed while in use"), "{err}");
        assert!(open_read(&root.join("link/f"), true).is_err());
        assert!(mkdir(&root.join("link/new"), 0o755).is_err());
        assert!(!root.join("outside/new").exists());
        // A final symlink is read through only when asked to.
        std::os::unix::fs::symlink("../outside/f", root.join("real/l")).unwrap();
        assert!(open_read(&root.join("real/l"), false).is_err());
        assert!(open_read(&root.join("real/l"), true).is_ok());
        assert!(metadata(&root.join("real/l"), false).unwrap().is_symlink());
        // The walk behaves the same way.
        let flags = libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC;
        assert!(walk(&root.join("real"), flags).is_ok());
        assert_eq!(
            walk(&root.join("link"), flags).unwrap_err().raw_os_error(),
            Some(libc::ELOOP)
        );
    }

    #[test]
    fn renames_links_and_removals_act_on_the_names_given() {
        let tmp = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(tmp.path()).unwrap();
        std::fs::write(root.join("a"), "a").unwrap();
        hard_link(&root.join("a"), &root.join("b")).unwrap();
        rename(&root.join("b"), &root.join("c")).unwrap();
        assert_eq!(std::fs::read(root.join("c")).unwrap(), b"a");
        remove_file(&root.join("c")).unwrap();
        mkdir(&root.join("d"), 0o755).unwrap();
        assert_eq!(
            remove_file(&root.join("d")).unwrap_err().raw_os_error(),
            Some(libc::EISDIR)
        );
        remove_dir(&root.join("d")).unwrap();
        assert!(!root.join("c").exists() && !root.join("d").exists());
    }
}
