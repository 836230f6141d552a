//! tinytool's own folder in a project, `<dir>/.tinytool/`: where the state database, the
//! project policy and config live.
//!
//! The folder is created on first need with a `.gitignore` containing `*`, so the project's
//! `git status` stays clean. File locks (DESIGN §5) are not here but in one per-user
//! directory that every `--dir` reaches ([`crate::locks`]).
//!
//! The folder is never followed (issue 18): a repository can ship `.tinytool` as a symlink
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
    ("sandbox", true),
];

/// Why the project in `dir` must not be used: its `.tinytool` is a symlink, not a
/// directory, not owned by the user running tinytool, or holds a symlink (or another
/// unexpected kind of file) where tinytool keeps its own files. The message says how to
/// fix it. `Ok` when the folder is missing (it is created on first need) or sound.
pub fn check_own_folder(dir: &Path) -> Result<(), String> {
    let folder = tinytool_dir(dir);
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
    check_own_folder(dir).map_err(refused)?;
    match crate::beneath::mkdir(&folder, 0o755) {
        Ok(()) => {}
        Err(err) if err.kind() == io::ErrorKind::AlreadyExists => {}
        Err(err) => return Err(err),
    }
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
    Ok(folder)
}

/// Creates the folder `<dir>/.tinytool/<name>` (one of tinytool's own, e.g. `outputs`) when
/// missing, without following any symlink, and returns it; one that is a symlink or not a
/// directory is refused.
pub fn ensure_own_subdir(dir: &Path, name: &str) -> io::Result<PathBuf> {
    let folder = ensure_tinytool_dir(dir)?;
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
    Ok(sub)
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
    fn a_planted_folder_or_entry_is_refused_and_never_followed() {
        let tmp = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(tmp.path()).unwrap();
        let (dir, outside) = (root.join("p"), root.join("outside"));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
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
}
