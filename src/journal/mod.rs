//! The journal of multi-file commits: all or nothing even when the process is killed.
//!
//! `atomic::commit` changes several files in steps (stage, set aside, install,
//! clean up). While the process lives, a failed step is undone; a `kill -9` between two
//! renames would leave the tree half-changed and hidden helper files behind. So before the
//! first visible change the commit records its plan here, flushed to disk, and removes the
//! record when it is done. The next tinytool call in the project (any tool: the registry
//! calls [`recover`] first) finds a record whose writer is gone and finishes the commit's
//! story: **forward** when every new file is already in place (and every deleted file
//! gone), else **back** to the state before the commit. Either way every helper file the
//! record names is removed.
//!
//! ## Where and how
//! `<dir>/.tinytool/journal/<pid>-<n>-<nanos>.json`, written as `.tmp`, locked (`flock`),
//! flushed, then renamed to `.json` and the folder flushed. The writer holds the lock until
//! it removes the file; a killed writer's lock is released by the kernel, so a record that
//! can be locked has no living writer (a live one is never touched). A recoverer holds the
//! record's lock and the locks of every file it names ([`crate::locks`]) while it works.
//! The folder is made and checked like the rest of `.tinytool` (never a symlink:
//! [`crate::project::ensure_own_subdir`]), recovery runs only in a sound `.tinytool`, and
//! its renames and removals go through [`crate::beneath`] (no symlink on the way followed).
//!
//! ## Trust
//! Recovery acts only on a record that is sealed by this user ([`seal`]: a keyed hash
//! whose key lives in the user's state directory, where a repository cannot put one) and
//! whose every path lies inside the project. Anything else — a record a repository
//! committed, one a command wrote, one naming a path outside — is left in place with a
//! note, and nothing is renamed or removed for it.
//!
//! ## Format
//! ```text
//! file   = body "\n" [ "seal " SEAL "\n" ]      (SEAL: see [`seal`])
//! body   = one line of JSON:
//! { "version": 1,
//!   "entries": [ { "target": P, "temp": P | null, "temp_id": [dev, ino] | null,
//!                  "aside": P | null } ... ],
//!   "created_dirs": [ P ... ] }
//! ```
//! Every `P` is a path's bytes in base64 (standard alphabet, padded), so any file name
//! round-trips. An entry with a `temp` is a write: `temp` is the staged new content,
//! `temp_id` its device and inode (the target has them once installed, whatever happened
//! to the name `temp`); without one it is a deletion. `aside` is the hidden second name the
//! target's previous version gets (null when there was nothing to keep). `created_dirs`
//! are the directories the commit created, outermost first.
//!
//! ## Test-only hook
//! `TINYTOOL_TEST_KILL_AT_CHANGE=N` makes a commit send itself `SIGKILL` right after its
//! N-th visible change (a deletion's set-aside rename or an install rename), so the tests
//! can kill it at an exact point. It exists only for the tests; nothing else sets it.

use std::fs::File;
use std::io::{self, Write};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

pub mod seal;

use base64::Engine;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One file of a journaled commit (module doc: format).
#[derive(Debug, Clone)]
pub struct Entry {
    /// The file changed.
    pub target: PathBuf,
    /// A write's staged content and its (device, inode); `None` for a deletion.
    pub temp: Option<(PathBuf, (u64, u64))>,
    /// Where the previous version is kept during the commit.
    pub aside: Option<PathBuf>,
}

/// A commit in progress, recorded on disk; [`Journal::finish`] removes the record.
#[derive(Debug)]
pub struct Journal {
    file: File,
    path: PathBuf,
}

/// The journal folder of the project in `dir`.
fn folder(dir: &Path) -> PathBuf {
    crate::project::tinytool_dir(dir).join("journal")
}

impl Journal {
    /// Records the plan (flushed, renamed into place, folder flushed) and returns the
    /// record, locked by this process until [`Journal::finish`] or the process ends.
    pub fn begin(dir: &Path, entries: &[Entry], created_dirs: &[PathBuf]) -> io::Result<Journal> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        // Made (or reused) without following a link planted at `.tinytool/journal`.
        let folder = crate::project::ensure_own_subdir(dir, "journal")?;
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let stem = format!(
            "{}-{}-{nanos}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        );
        let temp = folder.join(format!("{stem}.tmp"));
        let path = folder.join(format!("{stem}.json"));
        // Another thread's recovery must not take the record for a dead writer's before
        // it is locked.
        if let Ok(mut records) = UNLOCKED_YET.lock() {
            records.push(temp.clone());
        }
        let created = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&temp)
            .and_then(|file| file.lock().map(|()| file));
        if let Ok(mut records) = UNLOCKED_YET.lock() {
            records.retain(|r| *r != temp);
        }
        let mut file = created?;
        let body = encode(entries, created_dirs);
        let text = match seal::seal(&body) {
            Some(seal) => format!("{body}\nseal {seal}\n"),
            None => format!("{body}\n"),
        };
        let written = file
            .write_all(text.as_bytes())
            .and_then(|()| file.sync_all())
            .and_then(|()| std::fs::rename(&temp, &path));
        if let Err(err) = written {
            let _ = std::fs::remove_file(&temp);
            return Err(err);
        }
        crate::beneath::sync_dirs([path.as_path()]);
        Ok(Journal { file, path })
    }

    /// The commit is over (done, or undone while the process lived): removes the record.
    pub fn finish(self) {
        let _ = std::fs::remove_file(&self.path);
        crate::beneath::sync_dirs([self.path.as_path()]);
        drop(self.file);
    }
}

/// Sends this process `SIGKILL` after the `n`-th visible change of a commit when
/// `TINYTOOL_TEST_KILL_AT_CHANGE` is `n` (module doc: test-only hook).
pub fn test_kill_point(changes_made: usize) {
    if let Some(at) = std::env::var_os("TINYTOOL_TEST_KILL_AT_CHANGE")
        && at.to_str().and_then(|s| s.parse::<usize>().ok()) == Some(changes_made)
    {
        // SAFETY: signalling this process; SIGKILL ends it at once.
        unsafe { libc::kill(libc::getpid(), libc::SIGKILL) };
    }
}

/// Sends this process `SIGKILL` after its `n`-th temporary file is staged (complete,
/// not yet renamed) when `TINYTOOL_TEST_KILL_AT_STAGE` is `n` (test-only hook:
/// what a kill leaves then is for the next call to remove).
pub fn test_kill_after_stage(staged: usize) {
    if let Some(at) = std::env::var_os("TINYTOOL_TEST_KILL_AT_STAGE")
        && at.to_str().and_then(|s| s.parse::<usize>().ok()) == Some(staged)
    {
        // SAFETY: signalling this process; SIGKILL ends it at once.
        unsafe { libc::kill(libc::getpid(), libc::SIGKILL) };
    }
}

#[derive(Serialize, Deserialize)]
struct Record {
    version: u32,
    entries: Vec<RecordEntry>,
    created_dirs: Vec<String>,
}

#[derive(Serialize, Deserialize)]
struct RecordEntry {
    target: String,
    temp: Option<String>,
    temp_id: Option<(u64, u64)>,
    aside: Option<String>,
}

fn b64(path: &Path) -> String {
    base64::engine::general_purpose::STANDARD.encode(path.as_os_str().as_encoded_bytes())
}

fn unb64(text: &str) -> Option<PathBuf> {
    use std::os::unix::ffi::OsStringExt;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(text)
        .ok()?;
    Some(PathBuf::from(std::ffi::OsString::from_vec(bytes)))
}

fn encode(entries: &[Entry], created_dirs: &[PathBuf]) -> String {
    let record = Record {
        version: 1,
        entries: entries
            .iter()
            .map(|e| RecordEntry {
                target: b64(&e.target),
                temp: e.temp.as_ref().map(|(p, _)| b64(p)),
                temp_id: e.temp.as_ref().map(|(_, id)| *id),
                aside: e.aside.as_deref().map(b64),
            })
            .collect(),
        created_dirs: created_dirs.iter().map(|d| b64(d)).collect(),
    };
    serde_json::to_string(&record).unwrap_or_default()
}

fn decode(text: &str) -> Option<(Vec<Entry>, Vec<PathBuf>)> {
    let value: Value = serde_json::from_str(text).ok()?;
    let record: Record = serde_json::from_value(value).ok()?;
    if record.version != 1 {
        return None;
    }
    let mut entries = Vec::new();
    for e in record.entries {
        let temp = match (e.temp, e.temp_id) {
            (Some(p), Some(id)) => Some((unb64(&p)?, id)),
            (None, None) => None,
            _ => return None,
        };
        entries.push(Entry {
            target: unb64(&e.target)?,
            temp,
            aside: match e.aside {
                Some(a) => Some(unb64(&a)?),
                None => None,
            },
        });
    }
    let dirs = record
        .created_dirs
        .iter()
        .map(|d| unb64(d))
        .collect::<Option<Vec<_>>>()?;
    Some((entries, dirs))
}

/// Finishes every commit of the project in `dir` whose process is gone (module doc) and
/// returns a line per record handled or that could not be handled. Costs one failed
/// `stat` when the project has no journal folder; never creates anything.
pub fn recover(dir: &Path) -> Vec<String> {
    let folder = folder(dir);
    let Ok(listing) = std::fs::read_dir(&folder) else {
        return Vec::new();
    };
    let mut notes = Vec::new();
    for entry in listing.flatten() {
        let path = entry.path();
        let complete = match path.extension().and_then(|e| e.to_str()) {
            Some("json") => true,
            Some("tmp") => false,
            _ => continue,
        };
        if let Some(note) = recover_one(dir, &path, complete) {
            notes.push(note);
        }
    }
    notes
}

/// Records this process has created and not locked yet.
static UNLOCKED_YET: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());

/// Whether the record at `path` may still be in its writer's hands although unlocked:
/// its name starts with the writer's pid (`<pid>-<n>-<nanos>`), and the writer is a thread
/// of this process between creating and locking it, or another live process and the
/// record is less than a minute old.
fn writer_may_be_writing(path: &Path, file: &std::fs::File) -> bool {
    let Some(pid) = path
        .file_name()
        .and_then(|n| n.to_str())
        .and_then(|n| n.split('-').next())
        .and_then(|p| p.parse::<u32>().ok())
    else {
        return false;
    };
    if pid == std::process::id() {
        return UNLOCKED_YET
            .lock()
            .is_ok_and(|records| records.iter().any(|r| r == path));
    }
    let young = file
        .metadata()
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.elapsed().ok())
        .is_some_and(|age| age < std::time::Duration::from_secs(60));
    // SAFETY: signal 0 only checks that the process exists.
    let alive = libc::pid_t::try_from(pid).is_ok_and(|pid| unsafe { libc::kill(pid, 0) } == 0);
    young && alive
}

/// Recovers one record unless its writer still holds it.
fn recover_one(dir: &Path, path: &Path, complete: bool) -> Option<String> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .ok()?;
    if !file.metadata().ok()?.is_file() || file.try_lock().is_err() {
        return None;
    }
    // A writer creates its record and then locks it: in between, the record is unlocked
    // but its writer is alive (a thread of this process, or another process a moment ago).
    if writer_may_be_writing(path, &file) {
        return None;
    }
    // Another recoverer may have finished and removed it while this one waited.
    let (open, named) = (file.metadata().ok()?, std::fs::symlink_metadata(path).ok()?);
    if open.dev() != named.dev() || open.ino() != named.ino() {
        return None;
    }
    let text = std::fs::read_to_string(path).ok()?;
    let (body, seal) = match text.split_once('\n') {
        Some((body, rest)) => (body, rest.trim_end().strip_prefix("seal ")),
        None => (text.as_str(), None),
    };
    let Some((entries, created)) = decode(body) else {
        if !complete {
            // Killed while writing the record: nothing was changed yet.
            let _ = std::fs::remove_file(path);
            return None;
        }
        return Some(format!(
            "journal {} is unreadable; left in place",
            path.display()
        ));
    };
    if !seal.is_some_and(|seal| seal::verify(body, seal)) {
        return Some(format!(
            "journal {} is not sealed by this user's tinytool (a repository or a command \
             may have put it there): left in place, nothing recovered; remove it if you did \
             not expect it",
            path.display()
        ));
    }
    if let Some(outside) = named_paths(&entries, &created).find(|p| !inside(dir, p)) {
        return Some(format!(
            "journal {} names {}, outside the project: left in place, nothing recovered",
            path.display(),
            outside.display()
        ));
    }
    let mut targets: Vec<&Path> = entries.iter().map(|e| e.target.as_path()).collect();
    targets.sort();
    targets.dedup();
    let mut locks = Vec::new();
    for target in targets {
        match crate::locks::PathLock::acquire(target) {
            Ok(lock) => locks.push(lock),
            Err(err) => {
                return Some(format!(
                    "journal {}: cannot lock {}: {err}",
                    path.display(),
                    target.display()
                ));
            }
        }
    }
    let forward = complete && entries.iter().all(done);
    let failures = if forward {
        roll_forward(&entries)
    } else {
        roll_back(&entries, &created)
    };
    let touched = entries
        .iter()
        .flat_map(|e| [Some(&e.target), e.aside.as_ref()])
        .flatten()
        .map(PathBuf::as_path)
        .chain(created.iter().map(PathBuf::as_path));
    crate::beneath::sync_dirs(touched);
    if !failures.is_empty() {
        return Some(format!(
            "journal {}: recovery incomplete: {}",
            path.display(),
            failures.join("; ")
        ));
    }
    let _ = std::fs::remove_file(path);
    crate::beneath::sync_dirs([path]);
    drop(locks);
    Some(format!(
        "recovered an interrupted commit of {} files ({})",
        entries.len(),
        if forward { "completed" } else { "undone" }
    ))
}

/// Every path a record names.
fn named_paths<'a>(entries: &'a [Entry], created: &'a [PathBuf]) -> impl Iterator<Item = &'a Path> {
    entries
        .iter()
        .flat_map(|e| {
            [
                Some(&e.target),
                e.temp.as_ref().map(|(p, _)| p),
                e.aside.as_ref(),
            ]
        })
        .flatten()
        .chain(created.iter())
        .map(PathBuf::as_path)
}

/// Whether `path` is absolute, has no `..`, and lies under the project `dir` (as given or
/// with its symlinks resolved, the form the file tools record).
fn inside(dir: &Path, path: &Path) -> bool {
    use std::path::Component;
    let below = |root: &Path| {
        path.strip_prefix(root).is_ok_and(|rest| {
            // tinytool never journals a write into a git directory or its own folder, and
            // a renamed file there could run for the user's git (a hook).
            !rest
                .components()
                .any(|c| c.as_os_str() == ".git" || c.as_os_str() == ".tinytool")
        })
    };
    path.is_absolute()
        && !path.components().any(|c| c == Component::ParentDir)
        && (below(dir) || below(&crate::paths::resolve_symlinks(dir)))
}

/// (device, inode) of what `path` itself names.
fn id_of(path: &Path) -> Option<(u64, u64)> {
    crate::beneath::metadata(path, false)
        .ok()
        .map(|m| (m.dev(), m.ino()))
}

/// Whether the entry's new state is in place: a write's staged file is the target, a
/// deleted target is gone.
fn done(entry: &Entry) -> bool {
    match &entry.temp {
        Some((_, id)) => id_of(&entry.target) == Some(*id),
        None => id_of(&entry.target).is_none(),
    }
}

/// Removes `path` when it exists; the error when it exists and stays.
fn remove_if_there(path: &Path) -> Result<(), String> {
    match crate::beneath::remove_file(path) {
        Err(err) if err.kind() != io::ErrorKind::NotFound => {
            Err(format!("cannot remove {}: {err}", path.display()))
        }
        _ => Ok(()),
    }
}

/// Every new file is in place: only the previous versions are left to remove.
fn roll_forward(entries: &[Entry]) -> Vec<String> {
    entries
        .iter()
        .filter_map(|e| e.aside.as_deref())
        .filter_map(|aside| remove_if_there(aside).err())
        .collect()
}

/// Puts every target back as it was, removes staged files and created directories.
fn roll_back(entries: &[Entry], created: &[PathBuf]) -> Vec<String> {
    let mut failures = Vec::new();
    for entry in entries.iter().rev() {
        let installed = entry
            .temp
            .as_ref()
            .is_some_and(|(_, id)| id_of(&entry.target) == Some(*id));
        if let Some((temp, id)) = &entry.temp
            && !installed
            && id_of(temp) == Some(*id)
            && let Err(err) = remove_if_there(temp)
        {
            failures.push(err);
        }
        let aside_there = entry
            .aside
            .as_deref()
            .and_then(id_of)
            .map(|id| (entry.aside.as_deref(), id));
        match aside_there {
            Some((Some(aside), aside_id)) => {
                if id_of(&entry.target) == Some(aside_id) {
                    // A second name of the untouched target: drop it.
                    if let Err(err) = remove_if_there(aside) {
                        failures.push(err);
                    }
                } else if let Err(err) = crate::beneath::rename(aside, &entry.target) {
                    failures.push(format!(
                        "cannot restore {} from {}: {err}",
                        entry.target.display(),
                        aside.display()
                    ));
                }
            }
            _ if installed && entry.aside.is_none() => {
                // A file the commit created.
                if let Err(err) = remove_if_there(&entry.target) {
                    failures.push(err);
                }
            }
            _ => {}
        }
    }
    for dir in created.iter().rev() {
        let _ = crate::beneath::remove_dir(dir);
    }
    failures
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_projects_own_files_may_be_named() {
        let dir = Path::new("/p/proj");
        assert!(inside(dir, Path::new("/p/proj/src/a.rs")));
        assert!(inside(dir, Path::new("/p/proj/.gitignore")));
        for refused in [
            "/p/other/a.rs",
            "/p/proj/../other/a.rs",
            "proj/a.rs",
            "/p/proj/.git/hooks/pre-commit",
            "/p/proj/sub/.git/config",
            "/p/proj/.tinytool/state.db",
            "/p/proj/nested/.tinytool/journal/1.json",
        ] {
            assert!(!inside(dir, Path::new(refused)), "{refused}");
        }
    }

    #[test]
    fn records_round_trip_any_path() {
        use std::os::unix::ffi::OsStrExt;
        let odd = PathBuf::from(std::ffi::OsStr::from_bytes(b"/x/\xff name"));
        let entries = vec![
            Entry {
                target: odd.clone(),
                temp: Some((PathBuf::from("/x/.t"), (1, 2))),
                aside: None,
            },
            Entry {
                target: PathBuf::from("/x/gone"),
                temp: None,
                aside: Some(PathBuf::from("/x/.gone.old")),
            },
        ];
        let text = encode(&entries, &[PathBuf::from("/x/new")]);
        let (back, dirs) = decode(&text).unwrap();
        assert_eq!(back[0].target, odd);
        assert_eq!(back[0].temp, Some((PathBuf::from("/x/.t"), (1, 2))));
        assert_eq!(back[1].aside, Some(PathBuf::from("/x/.gone.old")));
        assert_eq!(dirs, vec![PathBuf::from("/x/new")]);
        assert!(decode("{}").is_none());
    }

    #[test]
    fn a_record_another_thread_has_created_but_not_locked_yet_is_left_alone() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let folder = crate::project::ensure_own_subdir(dir, "journal").unwrap();
        let record = folder.join(format!("{}-999-1.tmp", std::process::id()));
        std::fs::write(&record, "").unwrap();
        UNLOCKED_YET.lock().unwrap().push(record.clone());
        assert!(recover(dir).is_empty());
        assert!(
            record.exists(),
            "a record being written was taken for a dead one"
        );
        UNLOCKED_YET.lock().unwrap().retain(|r| *r != record);
        // Its writer went away without writing it: nothing was changed, it goes.
        recover(dir);
        assert!(!record.exists());
    }

    #[test]
    fn a_live_record_is_left_alone_and_a_dead_one_is_undone() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        std::fs::write(dir.join("a"), "old").unwrap();
        std::fs::hard_link(dir.join("a"), dir.join(".a.old")).unwrap();
        std::fs::write(dir.join(".a.tmp"), "new").unwrap();
        let temp_id = id_of(&dir.join(".a.tmp")).unwrap();
        let entries = [Entry {
            target: dir.join("a"),
            temp: Some((dir.join(".a.tmp"), temp_id)),
            aside: Some(dir.join(".a.old")),
        }];
        let journal = Journal::begin(dir, &entries, &[]).unwrap();
        // Its writer holds it: untouched.
        assert!(recover(dir).is_empty());
        assert!(dir.join(".a.tmp").exists());
        // The writer is gone (its lock released, the record left): rolled back.
        drop(journal.file);
        let notes =
            crate::locks::once_forks_let_go(|| Some(recover(dir)).filter(|n| !n.is_empty()))
                .unwrap_or_default();
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(notes[0].contains("undone"), "{notes:?}");
        assert_eq!(std::fs::read(dir.join("a")).unwrap(), b"old");
        assert!(!dir.join(".a.tmp").exists() && !dir.join(".a.old").exists());
        assert_eq!(std::fs::read_dir(folder(dir)).unwrap().count(), 0);
    }
}
