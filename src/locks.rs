//! Per-file locks that every tinytool process finds, whatever its `--dir`.
//!
//! A lock is an exclusive OS lock (`flock`) on a lock file in **one per-user directory**:
//! `$XDG_RUNTIME_DIR/tinytool/locks/` when that variable names a directory of this user,
//! else `/run/user/<uid>/tinytool/locks/` when that exists and is this user's, else
//! `locks/` in the user's state directory (`$XDG_STATE_HOME/tinytool`, or
//! `~/.local/state/tinytool`), else `/tmp/tinytool-<uid>/locks/`. Keying locks inside each project's `.tinytool/` let two
//! processes whose `--dir` differ (`P` and `P/sub`) edit one file at once and lose updates.
//!
//! The lock file's name is the file's identity, not the path as typed:
//! `<dev>-<ino>-<hash>.lock`, where dev/ino identify the nearest existing directory above
//! the file (the file's own directory, normally) and hash is a 64-bit FNV-1a of the path
//! components from that directory down to the file. The directory and not the file is
//! identified because an atomic write gives the file a new inode on every change, while
//! its directory keeps its inode; a file that does not exist yet has a lock too. Two
//! names of one directory (a symlink, a bind mount, `P` and `P/sub/..`) give one lock.
//!
//! Taking a lock: open (create) the lock file with `O_NOFOLLOW` relative to the handle of
//! the lock directory, lock it, then re-check (a) that the name still names the locked
//! file (the previous holder removes the file when it lets go, so a waiter can end up
//! holding a removed file) and (b) that the target's path still leads to the identity that
//! was locked (its directory may have been renamed or replaced meanwhile). Either check
//! failing means starting again. A holder that is killed releases the lock; the file it
//! leaves is reused and removed by the next holder.
//!
//! The directories are created with mode 0700 and must be owned by this user with no
//! access for group or others, and be real directories (not links): otherwise every call
//! that needs a lock fails, saying which directory is wrong and how to fix it (another user
//! who owns `/tmp/tinytool-<uid>` could otherwise hold or fake every lock).

use std::ffi::{CString, OsStr};
use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// An exclusive lock on one file (by identity), held until dropped; the holder removes
/// its lock file when it lets go, so the lock directory holds only locks in use (plus any
/// left by a killed holder, reused and removed by the next one).
#[derive(Debug)]
pub struct PathLock {
    file: File,
    dir: OwnedFd,
    name: CString,
    #[cfg(test)]
    shown: PathBuf,
}

/// The longest a lock is waited for: a holder writes one file (or one patch) and lets
/// go; one that holds it longer is stuck, or is not tinytool.
const MAX_WAIT: std::time::Duration = std::time::Duration::from_secs(120);

/// Takes the lock of `file`, waiting until `give_up` at most.
fn wait_for(file: &File, give_up: std::time::Instant) -> io::Result<()> {
    let mut nap = std::time::Duration::from_micros(200);
    loop {
        match file.try_lock() {
            Ok(()) => return Ok(()),
            Err(std::fs::TryLockError::WouldBlock) => {}
            Err(std::fs::TryLockError::Error(err)) => return Err(err),
        }
        if std::time::Instant::now() >= give_up {
            return Err(io::Error::new(io::ErrorKind::TimedOut, "gave up waiting"));
        }
        std::thread::sleep(nap);
        nap = (nap * 2).min(std::time::Duration::from_millis(20));
    }
}

impl PathLock {
    /// Waits (at most [`MAX_WAIT`]) until this process holds the lock of `path` (resolved: symlinks followed,
    /// absolute). The file need not exist.
    pub fn acquire(path: &Path) -> io::Result<PathLock> {
        let (dir, shown) = lock_dir()?;
        let give_up = std::time::Instant::now() + MAX_WAIT;
        loop {
            let name = lock_name(path)?;
            let file = open_lock_file(&dir, &name, &shown)?;
            wait_for(&file, give_up).map_err(|err| {
                io::Error::new(
                    err.kind(),
                    format!(
                        "{} has been locked by another process for {} s (lock file {}): {err}; \
                         if no tinytool call is working on it, that process is stuck or not \
                         tinytool's",
                        path.display(),
                        MAX_WAIT.as_secs(),
                        shown.join(OsStr::from_bytes(name.as_bytes())).display()
                    ),
                )
            })?;
            let lock = PathLock {
                file,
                dir: dir.try_clone()?,
                name,
                #[cfg(test)]
                shown: shown.clone(),
            };
            // (a) the name still names the locked file, (b) the path still leads to the
            // identity locked; else the lock guards nothing (dropping it removes our file
            // only when it is still ours).
            if lock.still_named() && lock_name(path)? == lock.name {
                return Ok(lock);
            }
        }
    }

    /// The lock file, for tests.
    #[cfg(test)]
    fn lock_file(&self) -> PathBuf {
        self.shown.join(OsStr::from_bytes(self.name.as_bytes()))
    }

    /// Whether the lock file's name still names the open file.
    fn still_named(&self) -> bool {
        use std::os::unix::fs::MetadataExt;
        let Ok(open) = self.file.metadata() else {
            return false;
        };
        match stat_at(&self.dir, &self.name) {
            Some(named) => named.st_dev == open.dev() && named.st_ino == open.ino(),
            None => false,
        }
    }
}

impl Drop for PathLock {
    fn drop(&mut self) {
        // Removed while still held, so a waiter wakes on a removed file and retries; the
        // check keeps a file that someone else put there from being removed.
        if self.still_named() {
            // SAFETY: a valid directory handle and a NUL-terminated name, both owned by
            // `self` for the whole call.
            unsafe { libc::unlinkat(self.dir.as_raw_fd(), self.name.as_ptr(), 0) };
        }
    }
}

/// The name of the lock file of `path`: `<dev>-<ino>-<hash>.lock` (module doc).
fn lock_name(path: &Path) -> io::Result<CString> {
    use std::os::unix::fs::MetadataExt;
    let mut rest: Vec<&OsStr> = Vec::new();
    let mut current = path;
    let meta = loop {
        let Some(name) = current.file_name() else {
            // The root, or a path ending in `..`: identify it as it is.
            break std::fs::metadata(current)?;
        };
        rest.push(name);
        let parent = match current.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        match std::fs::metadata(parent) {
            Ok(meta) if meta.is_dir() => break meta,
            Ok(_) => {
                return Err(io::Error::new(
                    io::ErrorKind::NotADirectory,
                    format!("{} is not a directory", parent.display()),
                ));
            }
            Err(err) if err.kind() == io::ErrorKind::NotFound => current = parent,
            Err(err) => return Err(err),
        }
    };
    let mut hash = FNV_OFFSET;
    for component in rest.iter().rev() {
        hash = fnv1a(hash, component.as_bytes());
        hash = fnv1a(hash, b"/");
    }
    let name = format!("{:x}-{:x}-{hash:016x}.lock", meta.dev(), meta.ino());
    CString::new(name).map_err(|err| io::Error::new(io::ErrorKind::InvalidInput, err))
}

/// Opens (creating, mode 0600) the lock file `name` in the lock directory: never through a
/// link planted there, never blocking on a FIFO (`O_NONBLOCK` makes opening one without a
/// reader fail at once; flock's own waiting is unaffected), and only a regular file.
fn open_lock_file(dir: &OwnedFd, name: &CString, shown: &Path) -> io::Result<File> {
    let flags = libc::O_RDWR
        | libc::O_CREAT
        | libc::O_NOFOLLOW
        | libc::O_NONBLOCK
        | libc::O_NOCTTY
        | libc::O_CLOEXEC;
    // SAFETY: a valid directory handle and a NUL-terminated name that outlive the call.
    let fd = unsafe { libc::openat(dir.as_raw_fd(), name.as_ptr(), flags, 0o600 as libc::c_uint) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` was just opened and is owned by nothing else.
    let file = File::from(unsafe { OwnedFd::from_raw_fd(fd) });
    if !file.metadata()?.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "{} is not a regular file",
                shown.join(OsStr::from_bytes(name.as_bytes())).display()
            ),
        ));
    }
    Ok(file)
}

/// `fstatat` of `name` in `dir`, not following a link; `None` when it fails.
fn stat_at(dir: &OwnedFd, name: &CString) -> Option<libc::stat> {
    let mut stat = std::mem::MaybeUninit::<libc::stat>::uninit();
    // SAFETY: valid handle, NUL-terminated name, and a buffer of the right type and size.
    let rc = unsafe {
        libc::fstatat(
            dir.as_raw_fd(),
            name.as_ptr(),
            stat.as_mut_ptr(),
            libc::AT_SYMLINK_NOFOLLOW,
        )
    };
    // SAFETY: fstatat filled the buffer when it returned 0.
    (rc == 0).then(|| unsafe { stat.assume_init() })
}

/// The handle of this user's lock directory (created when missing) and its path for
/// messages; an error names a directory that is not safe to use and how to fix it.
pub fn lock_dir() -> io::Result<(OwnedFd, PathBuf)> {
    // SAFETY: geteuid cannot fail.
    let uid = unsafe { libc::geteuid() };
    let (base, sub) = lock_base(uid);
    let mut dir = open_dir_at(None, &base)?;
    let mut shown = base;
    for name in sub {
        dir = make_private_dir(&dir, &shown, &name, uid)?;
        shown = shown.join(&name);
    }
    Ok((dir, shown))
}

/// The first directory (already there, not created) and the names below it to create:
/// `$XDG_RUNTIME_DIR` + `tinytool/locks`, `/run/user/<uid>` + `tinytool/locks`, the
/// state directory + `locks`, or `/tmp` + `tinytool-<uid>/locks`.
fn lock_base(uid: libc::uid_t) -> (PathBuf, Vec<String>) {
    let ours = |dir: &Path| {
        use std::os::unix::fs::MetadataExt;
        dir.is_absolute()
            && std::fs::symlink_metadata(dir).is_ok_and(|m| m.is_dir() && m.uid() == uid)
    };
    let nested = || vec!["tinytool".to_string(), "locks".to_string()];
    if let Some(runtime) = std::env::var_os("XDG_RUNTIME_DIR").map(PathBuf::from)
        && ours(&runtime)
    {
        return (runtime, nested());
    }
    let run_user = PathBuf::from(format!("/run/user/{uid}"));
    if ours(&run_user) {
        return (run_user, nested());
    }
    // The user's own state directory before the shared /tmp, where another user could
    // make `tinytool-<uid>` first and so stop every write of this one.
    if let Some(state) = crate::approvals::user_state_dir() {
        use std::os::unix::fs::DirBuilderExt;
        let _ = std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&state);
        if ours(&state) {
            return (state, vec!["locks".to_string()]);
        }
    }
    (
        PathBuf::from("/tmp"),
        vec![format!("tinytool-{uid}"), "locks".to_string()],
    )
}

/// Opens the directory `path` (relative to `parent` when given) without following a
/// final symlink.
fn open_dir_at(parent: Option<&OwnedFd>, path: &Path) -> io::Result<OwnedFd> {
    let name = CString::new(path.as_os_str().as_bytes())
        .map_err(|err| io::Error::new(io::ErrorKind::InvalidInput, err))?;
    let flags = libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC;
    let at = parent.map_or(libc::AT_FDCWD, AsRawFd::as_raw_fd);
    // SAFETY: a valid handle (or AT_FDCWD) and a NUL-terminated name outliving the call.
    let fd = unsafe { libc::openat(at, name.as_ptr(), flags) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` was just opened and is owned by nothing else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Creates (mode 0700) or opens the directory `name` in `parent` and checks that it is a
/// real directory owned by `uid` with no access for group or others.
fn make_private_dir(
    parent: &OwnedFd,
    parent_shown: &Path,
    name: &str,
    uid: libc::uid_t,
) -> io::Result<OwnedFd> {
    let shown = parent_shown.join(name);
    let c_name =
        CString::new(name).map_err(|err| io::Error::new(io::ErrorKind::InvalidInput, err))?;
    // SAFETY: a valid handle and a NUL-terminated name outliving the call.
    let rc = unsafe { libc::mkdirat(parent.as_raw_fd(), c_name.as_ptr(), 0o700) };
    if rc != 0 {
        let err = io::Error::last_os_error();
        if err.kind() != io::ErrorKind::AlreadyExists {
            return Err(io::Error::new(
                err.kind(),
                format!(
                    "cannot create the lock directory {}: {err}",
                    shown.display()
                ),
            ));
        }
    }
    let unsafe_dir = |why: String| {
        io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!(
                "the lock directory {} {why}; tinytool refuses to use it (another user could \
                 hold or fake its locks). Remove it (or fix it: `chmod 700`, owned by you) \
                 and retry.",
                shown.display()
            ),
        )
    };
    let dir = match open_dir_at(Some(parent), Path::new(name)) {
        Ok(dir) => dir,
        // O_NOFOLLOW with O_DIRECTORY fails on a link with ELOOP or ENOTDIR.
        Err(err) if matches!(err.raw_os_error(), Some(libc::ELOOP | libc::ENOTDIR)) => {
            return Err(unsafe_dir(
                "is a symbolic link or not a directory".to_string(),
            ));
        }
        Err(err) => {
            return Err(io::Error::new(
                err.kind(),
                format!("cannot open the lock directory {}: {err}", shown.display()),
            ));
        }
    };
    let meta = File::from(dir.try_clone()?).metadata()?;
    use std::os::unix::fs::MetadataExt;
    if meta.uid() != uid {
        return Err(unsafe_dir(format!("is owned by uid {}", meta.uid())));
    }
    if meta.mode() & 0o077 != 0 {
        return Err(unsafe_dir(format!(
            "has mode {:04o} (group or others have access)",
            meta.mode() & 0o7777
        )));
    }
    Ok(dir)
}

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;

/// 64-bit FNV-1a continued from `hash`: stable in every tinytool version and process.
fn fnv1a(hash: u64, bytes: &[u8]) -> u64 {
    bytes.iter().fold(hash, |hash, &b| {
        (hash ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// Runs `check` until it gives an answer, for tests of a release: a lock let go is free only
/// once every copy of its open file is closed, and a sibling test that forks a child in that
/// instant holds a copy until the child's `exec`. Gives up after about two seconds.
#[cfg(test)]
pub(crate) fn once_forks_let_go<T>(mut check: impl FnMut() -> Option<T>) -> Option<T> {
    for _ in 0..200 {
        if let Some(answer) = check() {
            return Some(answer);
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_file_has_one_lock_whatever_the_path_says() {
        let tmp = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(tmp.path()).unwrap();
        std::fs::create_dir(root.join("sub")).unwrap();
        std::os::unix::fs::symlink(root.join("sub"), root.join("alias")).unwrap();
        let a = lock_name(&root.join("sub/f.txt")).unwrap();
        assert_eq!(a, lock_name(&root.join("sub/../sub/f.txt")).unwrap());
        assert_eq!(a, lock_name(&root.join("alias/f.txt")).unwrap());
        assert_ne!(a, lock_name(&root.join("sub/g.txt")).unwrap());
        // Missing directories: keyed on the nearest one that exists.
        let deep = lock_name(&root.join("sub/x/y.txt")).unwrap();
        assert_ne!(deep, lock_name(&root.join("sub/x/z.txt")).unwrap());
        std::fs::write(root.join("sub/f.txt"), "x").unwrap();
        assert_eq!(a, lock_name(&root.join("sub/f.txt")).unwrap());
    }

    #[test]
    fn a_lock_held_elsewhere_is_waited_for_until_the_deadline() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("held.lock");
        let holder = File::create(&path).unwrap();
        holder.lock().unwrap();
        // A read-only open is enough to hold one.
        let waiter = File::open(&path).unwrap();
        let soon = std::time::Instant::now() + std::time::Duration::from_millis(30);
        let err = wait_for(&waiter, soon).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::TimedOut);
        drop(holder);
        let later = std::time::Instant::now() + std::time::Duration::from_secs(5);
        assert!(wait_for(&waiter, later).is_ok());
    }

    #[test]
    fn a_lock_excludes_a_second_holder_until_dropped() {
        let tmp = tempfile::tempdir().unwrap();
        let target = tmp.path().join("file.txt");
        let lock = PathLock::acquire(&target).unwrap();
        let path = lock.lock_file();
        let other = File::options().write(true).open(&path).unwrap();
        assert!(other.try_lock().is_err());
        drop(lock);
        // Released and removed: the folder keeps no lock nobody holds.
        assert!(once_forks_let_go(|| other.try_lock().ok()).is_some());
        assert!(!path.exists());
        assert_ne!(fnv1a(FNV_OFFSET, b"a"), fnv1a(FNV_OFFSET, b"b"));
    }

    #[test]
    fn a_waiter_on_a_removed_lock_file_locks_the_new_one() {
        let tmp = tempfile::tempdir().unwrap();
        let target = tmp.path().join("file.txt");
        let first = PathLock::acquire(&target).unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        let waiter = std::thread::spawn(move || {
            let second = PathLock::acquire(&target).unwrap();
            tx.send(()).unwrap();
            // The second holder's file is the one now in the folder, and it is locked.
            let named = File::options()
                .write(true)
                .open(second.lock_file())
                .unwrap();
            assert!(named.try_lock().is_err());
        });
        assert!(
            rx.recv_timeout(std::time::Duration::from_millis(200))
                .is_err()
        );
        drop(first);
        rx.recv().unwrap();
        waiter.join().unwrap();
    }

    #[test]
    fn a_lock_file_that_is_not_a_regular_file_is_an_error_not_a_wait() {
        let tmp = tempfile::tempdir().unwrap();
        let target = tmp.path().join("file.txt");
        let entry = PathLock::acquire(&target).unwrap().lock_file();
        let name = CString::new(entry.as_os_str().as_bytes()).unwrap();
        // SAFETY: a valid NUL-terminated path that outlives the call.
        assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0);
        assert!(PathLock::acquire(&target).is_err());
        std::fs::remove_file(&entry).unwrap();
        std::os::unix::fs::symlink(tmp.path().join("elsewhere"), &entry).unwrap();
        assert!(PathLock::acquire(&target).is_err());
        assert!(!tmp.path().join("elsewhere").exists());
        std::fs::remove_file(&entry).unwrap();
    }

    #[test]
    fn a_shared_or_foreign_lock_directory_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let parent = open_dir_at(None, tmp.path()).unwrap();
        // SAFETY: geteuid cannot fail.
        let uid = unsafe { libc::geteuid() };
        make_private_dir(&parent, tmp.path(), "ok", uid).unwrap();
        use std::os::unix::fs::PermissionsExt;
        let ok_mode = std::fs::metadata(tmp.path().join("ok"))
            .unwrap()
            .permissions();
        assert_eq!(ok_mode.mode() & 0o777, 0o700);
        std::fs::create_dir(tmp.path().join("open")).unwrap();
        std::fs::set_permissions(
            tmp.path().join("open"),
            std::fs::Permissions::from_mode(0o777),
        )
        .unwrap();
        let err = make_private_dir(&parent, tmp.path(), "open", uid).unwrap_err();
        assert!(err.to_string().contains("mode 0777"), "{err}");
        std::os::unix::fs::symlink(tmp.path().join("ok"), tmp.path().join("link")).unwrap();
        let err = make_private_dir(&parent, tmp.path(), "link", uid).unwrap_err();
        assert!(err.to_string().contains("symbolic link"), "{err}");
        let err = make_private_dir(&parent, tmp.path(), "ok", uid + 1).unwrap_err();
        assert!(err.to_string().contains("owned by uid"), "{err}");
    }
}
