//! tinytool's own folder in a project, `<dir>/.tinytool/`: where the state database, the
//! project policy and config, and the lock files live.
//!
//! The folder is created on first need with a `.gitignore` containing `*`, so the project's
//! `git status` stays clean. Lock files (DESIGN §5) live in `.tinytool/locks/`, named by a
//! hash of the resolved path they guard — never beside a user's file.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// `<dir>/.tinytool`.
pub fn tinytool_dir(dir: &Path) -> PathBuf {
    dir.join(".tinytool")
}

/// Creates `<dir>/.tinytool/` (with its `.gitignore`) when missing, and returns it.
pub fn ensure_tinytool_dir(dir: &Path) -> io::Result<PathBuf> {
    let folder = tinytool_dir(dir);
    if !folder.is_dir() {
        std::fs::create_dir_all(&folder)?;
    }
    let ignore = folder.join(".gitignore");
    if !ignore.exists() {
        // Another process may create it at the same moment; both write the same bytes.
        std::fs::write(&ignore, "*\n")?;
    }
    Ok(folder)
}

/// An exclusive OS lock (flock) on the lock file of one resolved path, held until dropped.
/// A holder that is killed releases it. The holder removes the lock file when it lets go,
/// so `.tinytool/locks/` holds only the locks in use (plus any left by a killed holder,
/// which the next holder of that path reuses and removes).
#[derive(Debug)]
pub struct PathLock {
    file: File,
    path: PathBuf,
}

impl PathLock {
    /// Blocks until this process holds the lock for `path` (a resolved path) in the
    /// project in `dir`.
    pub fn acquire(dir: &Path, path: &Path) -> io::Result<PathLock> {
        let locks = ensure_tinytool_dir(dir)?.join("locks");
        let name = format!("{:016x}.lock", fnv1a(path.as_os_str().as_encoded_bytes()));
        let lock_path = locks.join(&name);
        loop {
            std::fs::create_dir_all(&locks)?;
            // Never follows a link planted there, and never blocks on a FIFO (O_NONBLOCK
            // makes opening one without a reader fail at once; flock's own waiting is
            // unaffected).
            let file = OpenOptions::new()
                .create(true)
                .truncate(false)
                .write(true)
                .custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW | libc::O_NOCTTY)
                .open(&lock_path)?;
            if !file.metadata()?.is_file() {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!(".tinytool/locks/{name} is not a regular file"),
                ));
            }
            file.lock()?;
            // The previous holder may have removed the file while this process waited on
            // it: a lock on a removed file excludes no one, so start again on the new one.
            if same_file(&file, &lock_path) {
                return Ok(PathLock {
                    file,
                    path: lock_path,
                });
            }
        }
    }
}

impl Drop for PathLock {
    fn drop(&mut self) {
        // Removed while still held, so a waiter wakes on a removed file and retries; the
        // check keeps a file that someone else put there from being removed.
        if same_file(&self.file, &self.path) {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// Whether `path` still names the open `file`.
fn same_file(file: &File, path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (file.metadata(), std::fs::symlink_metadata(path)) {
        (Ok(open), Ok(named)) => open.dev() == named.dev() && open.ino() == named.ino(),
        _ => false,
    }
}

/// 64-bit FNV-1a: a stable hash, identical in every tinytool version and process.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &b| {
        (hash ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_folder_is_created_with_a_gitignore() {
        let tmp = tempfile::tempdir().unwrap();
        let folder = ensure_tinytool_dir(tmp.path()).unwrap();
        assert_eq!(
            std::fs::read_to_string(folder.join(".gitignore")).unwrap(),
            "*\n"
        );
    }

    #[test]
    fn a_lock_excludes_a_second_holder_until_dropped() {
        let tmp = tempfile::tempdir().unwrap();
        let target = tmp.path().join("file.txt");
        let lock = PathLock::acquire(tmp.path(), &target).unwrap();
        let locks = tmp.path().join(".tinytool/locks");
        let entry = std::fs::read_dir(&locks).unwrap().next().unwrap().unwrap();
        let other = File::options().write(true).open(entry.path()).unwrap();
        assert!(other.try_lock().is_err());
        drop(lock);
        // Released and removed: the folder keeps no lock nobody holds.
        assert!(other.try_lock().is_ok());
        assert_eq!(std::fs::read_dir(&locks).unwrap().count(), 0);
        assert_ne!(fnv1a(b"a"), fnv1a(b"b"));
    }

    #[test]
    fn a_waiter_on_a_removed_lock_file_locks_the_new_one() {
        let tmp = tempfile::tempdir().unwrap();
        let target = tmp.path().join("file.txt");
        let first = PathLock::acquire(tmp.path(), &target).unwrap();
        let dir = tmp.path().to_path_buf();
        let (tx, rx) = std::sync::mpsc::channel();
        let waiter = std::thread::spawn(move || {
            let second = PathLock::acquire(&dir, &target).unwrap();
            tx.send(()).unwrap();
            // The second holder's file is the one now in the folder, and it is locked.
            let named = File::options().write(true).open(&second.path).unwrap();
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
        let held = PathLock::acquire(tmp.path(), &target).unwrap();
        let entry = held.path.clone();
        drop(held);
        let name = std::ffi::CString::new(entry.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a valid NUL-terminated path that outlives the call.
        assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o644) }, 0);
        assert!(PathLock::acquire(tmp.path(), &target).is_err());
        std::fs::remove_file(&entry).unwrap();
        std::os::unix::fs::symlink(tmp.path().join("elsewhere"), &entry).unwrap();
        assert!(PathLock::acquire(tmp.path(), &target).is_err());
        assert!(!tmp.path().join("elsewhere").exists());
    }
}
