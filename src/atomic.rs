//! Atomic file writes (DESIGN §6): the new content goes into a temporary file in the target's
//! own directory, is flushed to disk (fsync), gets its final permissions, and is renamed
//! over the target, so a reader sees the old file or the new one and never a mix, and a
//! crash leaves no half-written file. The temporary file is removed on every failure path.
//!
//! An existing file keeps its permission bits; a new one gets 0644 whatever the umask.
//! Missing parent directories are created with 0755.
//!
//! apply_patch changes several files at once: it [`stage`]s every new content first (each
//! a complete temporary file beside its target) and only then [`Staged::commit`]s them, so
//! a failure while writing (disk full, permissions) leaves every target untouched.

use std::fs::DirBuilder;
use std::io::{self, Write};
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// Permission bits of a new file.
pub const NEW_FILE_MODE: u32 = 0o644;
/// Permission bits of a created directory.
pub const NEW_DIR_MODE: u32 = 0o755;

/// The permission bits a write to `path` should leave: the existing file's, else 0644.
pub fn mode_for(path: &Path) -> u32 {
    std::fs::metadata(path)
        .map(|m| m.permissions().mode() & 0o7777)
        .unwrap_or(NEW_FILE_MODE)
}

/// Creates the missing ancestors of `path` (mode 0755) and returns the ones it created,
/// outermost first, so that a failed multi-file write can remove them again.
pub fn create_parents(path: &Path) -> io::Result<Vec<PathBuf>> {
    let mut missing = Vec::new();
    let mut current = path.parent();
    while let Some(dir) = current {
        if dir.as_os_str().is_empty() || dir.exists() {
            break;
        }
        missing.push(dir.to_path_buf());
        current = dir.parent();
    }
    missing.reverse();
    for dir in &missing {
        match DirBuilder::new().mode(NEW_DIR_MODE).create(dir) {
            Ok(()) => {}
            // Another process created it in between: fine, but it is not ours to remove.
            Err(err) if err.kind() == io::ErrorKind::AlreadyExists && dir.is_dir() => {}
            Err(err) => return Err(err),
        }
    }
    Ok(missing)
}

/// A complete temporary file waiting to be renamed over its target.
#[derive(Debug)]
pub struct Staged {
    temp: tempfile::TempPath,
    target: PathBuf,
}

/// Writes `bytes` to a temporary file beside `target` (whose directory must exist), flushes
/// it and gives it `mode`. Nothing is visible at `target` until [`Staged::commit`]; dropping
/// the value removes the temporary file.
pub fn stage(target: &Path, bytes: &[u8], mode: u32) -> io::Result<Staged> {
    let dir = match target.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut temp = tempfile::Builder::new()
        .prefix(&format!(".{name}."))
        .suffix(".tinytool.tmp")
        .tempfile_in(dir)?;
    temp.write_all(bytes)?;
    temp.as_file().sync_all()?;
    std::fs::set_permissions(temp.path(), std::fs::Permissions::from_mode(mode))?;
    Ok(Staged {
        temp: temp.into_temp_path(),
        target: target.to_path_buf(),
    })
}

impl Staged {
    /// The file this will replace.
    pub fn target(&self) -> &Path {
        &self.target
    }

    /// Renames the temporary file over the target. The rename is durable once the
    /// target's directory is flushed ([`sync_dirs`]).
    pub fn commit(self) -> io::Result<()> {
        let Staged { temp, target } = self;
        temp.persist(&target).map_err(|err| err.error)?;
        Ok(())
    }
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

/// Writes `bytes` to `target` atomically with `mode`, creating missing parent directories.
pub fn write(target: &Path, bytes: &[u8], mode: u32) -> io::Result<()> {
    create_parents(target)?;
    stage(target, bytes, mode)?.commit()?;
    sync_dirs([target]);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_create_parents_and_leave_no_temporary_file() {
        let tmp = tempfile::tempdir().unwrap();
        let target = tmp.path().join("a/b/c.txt");
        write(&target, b"hello", NEW_FILE_MODE).unwrap();
        assert_eq!(std::fs::read(&target).unwrap(), b"hello");
        let mode = std::fs::metadata(&target).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o644);
        let names: Vec<_> = std::fs::read_dir(tmp.path().join("a/b"))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("c.txt")]);
        let dir_mode = std::fs::metadata(tmp.path().join("a"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(dir_mode & 0o777, 0o755);
    }

    #[test]
    fn an_existing_files_mode_is_kept() {
        let tmp = tempfile::tempdir().unwrap();
        let target = tmp.path().join("run.sh");
        std::fs::write(&target, "old").unwrap();
        std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o750)).unwrap();
        write(&target, b"new", mode_for(&target)).unwrap();
        let mode = std::fs::metadata(&target).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o750);
        assert_eq!(std::fs::read(&target).unwrap(), b"new");
    }

    #[test]
    fn a_dropped_stage_leaves_nothing_and_created_parents_are_reported() {
        let tmp = tempfile::tempdir().unwrap();
        let target = tmp.path().join("x/y/z.txt");
        let created = create_parents(&target).unwrap();
        assert_eq!(created, vec![tmp.path().join("x"), tmp.path().join("x/y")]);
        let staged = stage(&target, b"data", NEW_FILE_MODE).unwrap();
        assert_eq!(staged.target(), target);
        drop(staged);
        assert_eq!(
            std::fs::read_dir(tmp.path().join("x/y")).unwrap().count(),
            0
        );
        assert!(create_parents(&target).unwrap().is_empty());
    }
}
