//! The temporary files tinytool's writes make, recorded before they exist, so that the
//! next call of any tool removes the ones a killed writer left wherever they are — by
//! their recorded path, never by a name pattern that a user's file could match.
//!
//! A record is a small file in the user's state directory (`pending/` of
//! [`crate::approvals::user_state_dir`]) holding one absolute path. The writer makes it
//! under a temporary name, takes an exclusive `flock` on it, writes the path and renames
//! it to its final name; it holds the lock until the temporary file is renamed over its
//! target or removed, then removes the record ([`Record`]'s drop). [`recover`] (first
//! thing in every call) takes each record it can lock — its writer is gone — removes the
//! regular file at the recorded path when that file is not locked either (a live
//! writer's temporary file is), and removes the record. kill -9 loses nothing written, so
//! the records are not flushed to disk.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// The folder of the records, made when missing (`None`: no state directory).
fn folder() -> Option<PathBuf> {
    use std::os::unix::fs::DirBuilderExt;
    let folder = crate::approvals::user_state_dir()?.join("pending");
    if !folder.is_dir() {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&folder)
            .ok()?;
    }
    Some(folder)
}

/// A temporary file's record, held (locked) while its writer works; removed when dropped.
#[derive(Debug)]
pub struct Record {
    path: PathBuf,
    _held: std::fs::File,
}

impl Drop for Record {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Records `temp` (absolute) before it is created; `None` where no record can be kept
/// (no state directory, a full disk): the write goes on, as it did before records.
pub fn record(temp: &Path) -> Option<Record> {
    record_in(&folder()?, temp)
}

fn record_in(folder: &Path, temp: &Path) -> Option<Record> {
    use std::os::unix::ffi::OsStrExt;
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let stem = format!(
        "{}-{nanos:x}-{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    );
    let making = folder.join(format!("{stem}.new"));
    let path = folder.join(&stem);
    let mut file = std::fs::File::options()
        .write(true)
        .create_new(true)
        .open(&making)
        .ok()?;
    let written = file.lock().is_ok()
        && file.write_all(temp.as_os_str().as_bytes()).is_ok()
        && std::fs::rename(&making, &path).is_ok();
    if !written {
        let _ = std::fs::remove_file(&making);
        return None;
    }
    Some(Record { path, _held: file })
}

/// Removes what killed writers left: each record no live writer holds, and the regular
/// file at its path when no live writer holds that either. Best effort, quietly.
pub fn recover() {
    if let Some(state) = crate::approvals::user_state_dir() {
        recover_in(&state.join("pending"));
    }
}

fn recover_in(folder: &Path) {
    use std::os::unix::ffi::OsStrExt;
    let Ok(listing) = std::fs::read_dir(folder) else {
        return;
    };
    for entry in listing.flatten() {
        let record = entry.path();
        let name = entry.file_name();
        let making = name.as_encoded_bytes().ends_with(b".new");
        let Ok(mut file) = std::fs::File::open(&record) else {
            continue;
        };
        if file.try_lock().is_err() {
            continue;
        }
        // A record still being made by a writer that died before renaming it: no
        // temporary file of its exists yet.
        if !making {
            let mut text = Vec::new();
            if file.read_to_end(&mut text).is_ok() {
                remove_unheld(Path::new(std::ffi::OsStr::from_bytes(&text)));
            }
        }
        let _ = std::fs::remove_file(&record);
    }
}

/// Removes the regular file at `path` (absolute) unless a live writer holds its lock;
/// nothing on the way is followed.
fn remove_unheld(path: &Path) {
    if !path.is_absolute() {
        return;
    }
    let Ok(meta) = crate::beneath::metadata(path, false) else {
        return;
    };
    if !meta.is_file() {
        return;
    }
    let flags = libc::O_RDONLY | libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY;
    let Ok((dir, name)) = crate::beneath::parent(path) else {
        return;
    };
    let Ok(file) = crate::beneath::open_at(&dir, name, flags, 0) else {
        return;
    };
    if file.try_lock().is_ok() {
        let _ = crate::beneath::unlink_at(&dir, name, false);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_killed_writers_file_is_removed_a_live_ones_and_a_users_are_not() {
        let state = tempfile::tempdir().unwrap();
        let folder = state.path().join("pending");
        std::fs::create_dir(&folder).unwrap();
        let work = tempfile::tempdir().unwrap();
        let live = work.path().join(".a.tinytool.tmp");
        let dead = work.path().join(".b.tinytool.tmp");
        let users = work.path().join(".c.tinytool.tmp");
        // A live writer: its record and its file held.
        let held = record_in(&folder, &live).unwrap();
        std::fs::write(&live, "x").unwrap();
        let live_file = std::fs::File::open(&live).unwrap();
        live_file.lock().unwrap();
        // A killed writer: a record nobody holds, its file left behind.
        std::fs::write(folder.join("1-2-3"), dead.as_os_str().as_encoded_bytes()).unwrap();
        std::fs::write(&dead, "half").unwrap();
        // One killed while making its record.
        std::fs::write(folder.join("4-5-6.new"), b"").unwrap();
        // A user's file of the same shape, never recorded.
        std::fs::write(&users, "mine").unwrap();
        recover_in(&folder);
        assert!(!dead.exists());
        assert!(live.exists());
        assert!(users.exists(), "no record, no removal");
        drop(held);
        assert_eq!(std::fs::read_dir(&folder).unwrap().count(), 0);
    }
}
