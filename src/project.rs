//! tinytool's own folder in a project, `<dir>/.tinytool/`: where the state database, the
//! project policy and config live.
//!
//! The folder is created on first need with a `.gitignore` containing `*`, so the project's
//! `git status` stays clean. File locks are not here but in one per-user
//! directory that every `--dir` reaches ([`crate::locks`]).
//!
//! The folder is never followed: a repository can ship `.tinytool` as a symlink
//! (or `.tinytool/.gitignore` as a dangling one) to make tinytool create its state and files
//! somewhere else, e.g. a `.gitignore` written into `~/.config/git/ignore`. So the folder and
//! everything tinytool creates in it are created and opened without following symlinks
//! ([`crate::beneath`]), and [`check_own_folder`] (run before every call) refuses a project
//! whose folder is a symlink, is not a directory, belongs to another user, or holds a
//! symlink (or other non-regular entry) where tinytool keeps its own files.

use std::io;
use std::path::{Path, PathBuf};

/// `<dir>/.tinytool`.
pub fn tinytool_dir(dir: &Path) -> PathBuf {
    dir.join(".tinytool")
}

/// The entries tinytool itself creates in its folder: each must be what tinytool made it
/// (a directory, or a regular file), never a symlink.
const OWN_ENTRIES: &[(&str, bool)] = &[
    (".gitignore", false),
    ("state.db", false),
    ("state.db-wal", false),
    ("state.db-shm", false),
    ("state.db-journal", false),
    ("journal", true),
    ("outputs", true),
    ("sealed", true),
    ("sandbox", true),
    ("lsp", true),
];

/// Why the project in `dir` must not be used: its `.tinytool` is a symlink, not a
/// directory, not owned by the user running tinytool, or holds a symlink (or another
/// unexpected kind of file) where tinytool keeps its own files. The message says how to
/// fix it. `Ok` when the folder is missing (it is created on first need) or sound.
pub fn check_own_folder(dir: &Path) -> Result<(), String> {
    let folder = tinytool_dir(dir);
    if sound::still(&folder, None) {
        return Ok(());
    }
    let shown = folder.display();
    let meta = match crate::beneath::metadata(&folder, false) {
        Ok(meta) => meta,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(err) => return Err(format!("Cannot use {shown}: {err}")),
    };
    let fix = "Nothing was done. Remove it (`rm -r .tinytool` in the project, after saving \
               anything you need from it) and run again: tinytool recreates the folder.";
    if meta.is_symlink() {
        let to = std::fs::read_link(&folder)
            .map(|t| format!(" (to {})", t.display()))
            .unwrap_or_default();
        return Err(format!(
            "Refused: {shown} is a symbolic link{to}. tinytool keeps its state, journal and \
             files in this folder and never follows a link there (a repository could point \
             it anywhere). Nothing was done. Remove the link (`rm .tinytool` in the \
             project) and run again: tinytool creates a folder of its own there."
        ));
    }
    if !meta.is_dir() {
        return Err(format!(
            "Refused: {shown} is not a directory; tinytool keeps its state there. {fix}"
        ));
    }
    use std::os::unix::fs::MetadataExt;
    // SAFETY: geteuid has no preconditions and cannot fail.
    let me = unsafe { libc::geteuid() };
    if meta.uid() != me {
        return Err(format!(
            "Refused: {shown} belongs to another user (uid {}, tinytool runs as uid {me}), \
             who could change tinytool's state and files under your name. {fix} Or, if the \
             folder is yours, take it back: `chown -R $(id -u) .tinytool`.",
            meta.uid()
        ));
    }
    for (name, is_dir) in OWN_ENTRIES {
        let entry = folder.join(name);
        let meta = match crate::beneath::metadata(&entry, false) {
            Ok(meta) => meta,
            Err(err) if err.kind() == io::ErrorKind::NotFound => continue,
            Err(err) => return Err(format!("Cannot use {}: {err}", entry.display())),
        };
        let sound = if *is_dir {
            meta.is_dir()
        } else {
            meta.is_file()
        };
        if !sound {
            let what = if meta.is_symlink() {
                "a symbolic link"
            } else if *is_dir {
                "not a directory"
            } else {
                "not a regular file"
            };
            return Err(format!(
                "Refused: {} is {what}. tinytool creates this entry itself and never follows \
                 a link there (a repository could point it anywhere). Nothing was done. \
                 Remove it (`rm .tinytool/{name}`) and run again: tinytool recreates it.",
                entry.display()
            ));
        }
    }
    Ok(())
}

fn refused(message: String) -> io::Error {
    io::Error::new(io::ErrorKind::PermissionDenied, message)
}

/// Creates `<dir>/.tinytool/` (with its `.gitignore`) when missing, and returns it. Neither
/// is followed when it is a symlink: such a folder is refused ([`check_own_folder`]).
pub fn ensure_tinytool_dir(dir: &Path) -> io::Result<PathBuf> {
    let folder = tinytool_dir(dir);
    if sound::still(&folder, None) {
        return Ok(folder);
    }
    check_own_folder(dir).map_err(refused)?;
    match crate::beneath::mkdir(&folder, 0o755) {
        Ok(()) => {}
        Err(err) if err.kind() == io::ErrorKind::AlreadyExists => {}
        Err(err) => return Err(err),
    }
    let before = sound::stamp(&folder);
    // Checked again: what exists now is what is used (another process may have made it).
    check_own_folder(dir).map_err(refused)?;
    let handle = crate::beneath::open_dir(&folder)?;
    let flags = libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW;
    match crate::beneath::open_at(&handle, ".gitignore".as_ref(), flags, 0o644) {
        Ok(mut file) => {
            use std::io::Write;
            file.write_all(b"*\n")?;
        }
        // Made by another process, or already there (checked above: a regular file).
        Err(err) if err.kind() == io::ErrorKind::AlreadyExists => {}
        Err(err) => return Err(err),
    }
    // Checked, and its `.gitignore` there: trusted while its stamp holds.
    if let Some(before) = before {
        sound::record(&folder, before, None);
    }
    Ok(folder)
}

/// Creates the folder `<dir>/.tinytool/<name>` (one of tinytool's own, e.g. `outputs`) when
/// missing, without following any symlink, and returns it; one that is a symlink or not a
/// directory is refused.
pub fn ensure_own_subdir(dir: &Path, name: &str) -> io::Result<PathBuf> {
    let folder = tinytool_dir(dir);
    if sound::still(&folder, Some(name)) {
        return Ok(folder.join(name));
    }
    let folder = ensure_tinytool_dir(dir)?;
    let before = sound::stamp(&folder);
    let sub = folder.join(name);
    match crate::beneath::mkdir(&sub, 0o755) {
        Ok(()) => {}
        Err(err) if err.kind() == io::ErrorKind::AlreadyExists => {}
        Err(err) => return Err(err),
    }
    // Opening it as a directory handle refuses a symlink there.
    crate::beneath::open_dir(&sub).map_err(|_| {
        refused(format!(
            "Refused: {} is not a directory tinytool made (a symbolic link?). Remove it \
             (`rm .tinytool/{name}`) and run again: tinytool recreates it.",
            sub.display()
        ))
    })?;
    if let Some(before) = before {
        sound::record(&folder, before, Some(name));
    }
    Ok(sub)
}

/// The `.tinytool` folders this process found sound, so that the checks (a dozen
/// lookups, several times a call) are not repeated while nothing in the folder changed.
///
/// A folder is trusted again while its `lstat` (device, inode, modification and status
/// change times) is what it was before it was checked: adding, removing, renaming or
/// replacing an entry changes the modification time, a `chown` or `chmod` the status
/// change time, a swapped folder the inode. A stamp younger than
/// [`crate::clock::RACY_NS`] is not trusted (a change within the same
/// clock tick leaves the times as they were).
mod sound {
    use std::os::unix::fs::MetadataExt;
    use std::path::{Path, PathBuf};
    use std::sync::Mutex;

    /// What the folder's `lstat` says.
    #[derive(Clone, Copy, PartialEq, Eq, Debug)]
    pub struct Stamp {
        dev: u64,
        ino: u64,
        mtime_ns: i64,
        ctime_ns: i64,
    }

    /// A folder found sound, with the subfolders found to be tinytool's own directories.
    struct Sound {
        folder: PathBuf,
        stamp: Stamp,
        subdirs: Vec<String>,
    }

    static SOUND: Mutex<Vec<Sound>> = Mutex::new(Vec::new());

    /// The folder's stamp (`None` when it cannot be had or is not a directory).
    pub fn stamp(folder: &Path) -> Option<Stamp> {
        let meta = std::fs::symlink_metadata(folder).ok()?;
        meta.is_dir().then(|| Stamp {
            dev: meta.dev(),
            ino: meta.ino(),
            mtime_ns: meta.mtime() * 1_000_000_000 + meta.mtime_nsec(),
            ctime_ns: meta.ctime() * 1_000_000_000 + meta.ctime_nsec(),
        })
    }

    /// Whether `folder` (and its subfolder `subdir`) was found sound and nothing changed
    /// since.
    pub fn still(folder: &Path, subdir: Option<&str>) -> bool {
        let Ok(sound) = SOUND.lock() else {
            return false;
        };
        let Some(known) = sound.iter().find(|s| s.folder == folder) else {
            return false;
        };
        let wanted = subdir.is_none_or(|name| known.subdirs.iter().any(|s| s == name));
        wanted && stamp(folder) == Some(known.stamp)
    }

    /// Records `folder` (and `subdir`) as found sound while stamped `before` (taken before
    /// the checks, so a change during them shows as a different stamp); nothing is recorded
    /// when the stamp changed meanwhile or is too young to be trusted.
    pub fn record(folder: &Path, before: Stamp, subdir: Option<&str>) {
        record_at(folder, before, subdir, crate::clock::now_ns());
    }

    /// [`record`] as seen at `now_ns` (nanoseconds since the epoch).
    pub(super) fn record_at(folder: &Path, before: Stamp, subdir: Option<&str>, now_ns: i64) {
        use crate::clock::RACY_NS;
        let settled = before.mtime_ns.max(before.ctime_ns).saturating_add(RACY_NS) <= now_ns;
        if !settled || stamp(folder) != Some(before) {
            return;
        }
        let Ok(mut sound) = SOUND.lock() else { return };
        let index = match sound.iter().position(|s| s.folder == folder) {
            Some(i) if sound[i].stamp == before => i,
            Some(i) => {
                sound[i] = Sound {
                    folder: folder.to_path_buf(),
                    stamp: before,
                    subdirs: Vec::new(),
                };
                i
            }
            None => {
                sound.push(Sound {
                    folder: folder.to_path_buf(),
                    stamp: before,
                    subdirs: Vec::new(),
                });
                sound.len() - 1
            }
        };
        if let Some(name) = subdir
            && !sound[index].subdirs.iter().any(|s| s == name)
        {
            sound[index].subdirs.push(name.to_string());
        }
    }
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

    /// A project folder `p` and a folder beside it, in a fresh temporary directory.
    fn project_and_outside() -> (tempfile::TempDir, PathBuf, PathBuf) {
        let tmp = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(tmp.path()).unwrap();
        let (dir, outside) = (root.join("p"), root.join("outside"));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        (tmp, dir, outside)
    }

    #[test]
    fn a_planted_folder_or_entry_is_refused_and_never_followed() {
        let (_tmp, dir, outside) = project_and_outside();
        std::os::unix::fs::symlink(&outside, dir.join(".tinytool")).unwrap();
        let err = check_own_folder(&dir).unwrap_err();
        assert!(
            err.contains("is a symbolic link") && err.contains("rm .tinytool"),
            "{err}"
        );
        assert!(ensure_tinytool_dir(&dir).is_err());
        assert!(ensure_own_subdir(&dir, "outputs").is_err());
        assert!(ensure_own_subdir(&dir, "journal").is_err());
        assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 0);

        // A real folder whose entries are links: the dangling .gitignore, the journal folder.
        std::fs::remove_file(dir.join(".tinytool")).unwrap();
        std::fs::create_dir(dir.join(".tinytool")).unwrap();
        std::os::unix::fs::symlink(outside.join("ignore"), dir.join(".tinytool/.gitignore"))
            .unwrap();
        let err = check_own_folder(&dir).unwrap_err();
        assert!(err.contains(".gitignore is a symbolic link"), "{err}");
        assert!(ensure_tinytool_dir(&dir).is_err());
        std::fs::remove_file(dir.join(".tinytool/.gitignore")).unwrap();
        std::os::unix::fs::symlink(&outside, dir.join(".tinytool/journal")).unwrap();
        let err = check_own_folder(&dir).unwrap_err();
        assert!(err.contains("journal is a symbolic link"), "{err}");
        assert!(ensure_own_subdir(&dir, "journal").is_err());
        assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 0);
        std::fs::remove_file(dir.join(".tinytool/journal")).unwrap();
        // Sound again: the folder and its entries are made as tinytool's own.
        ensure_own_subdir(&dir, "journal").unwrap();
        assert!(dir.join(".tinytool/journal").is_dir());
        assert!(check_own_folder(&dir).is_ok());
    }

    #[test]
    fn a_sound_folder_is_trusted_only_while_its_settled_stamp_holds() {
        let (_tmp, dir, outside) = project_and_outside();
        ensure_own_subdir(&dir, "journal").unwrap();
        let folder = tinytool_dir(&dir);
        let stamp = sound::stamp(&folder).unwrap();
        // Just made: too young to be trusted, so every call checks again.
        sound::record(&folder, stamp, Some("journal"));
        assert!(!sound::still(&folder, None));
        // Seen once it settled: trusted, for the folder and the subfolder it was checked with.
        let later = crate::clock::now_ns() + 10_000_000_000;
        sound::record_at(&folder, stamp, Some("journal"), later);
        assert!(sound::still(&folder, None));
        assert!(sound::still(&folder, Some("journal")));
        assert!(!sound::still(&folder, Some("outputs")));
        // A planted link changes the folder's times: checked again, and refused.
        std::fs::remove_dir(folder.join("journal")).unwrap();
        std::os::unix::fs::symlink(&outside, folder.join("journal")).unwrap();
        assert!(!sound::still(&folder, Some("journal")));
        assert!(ensure_own_subdir(&dir, "journal").is_err());
        assert!(check_own_folder(&dir).is_err());
        // A stamp taken before the folder was swapped is not recorded.
        std::fs::remove_file(folder.join("journal")).unwrap();
        let old = sound::stamp(&folder).unwrap();
        std::fs::rename(&folder, dir.join("moved")).unwrap();
        std::fs::create_dir(&folder).unwrap();
        sound::record_at(&folder, old, None, later + 10_000_000_000);
        assert!(!sound::still(&folder, None));
    }
}
