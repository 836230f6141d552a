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
//!
//! Only regular files are ever replaced or read here. What a path names is learned without
//! opening it ([`kind`], [`kind_of_link`]): opening a FIFO blocks until another process
//! opens its other end, and opening a device can act on the device. A FIFO, socket or
//! device is refused by the tools ([`not_regular`]); [`read_regular`] still opens
//! non-blocking and checks the opened handle, so one swapped in after the check cannot
//! hang the call either.

use std::fs::{DirBuilder, FileType, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::fs::{DirBuilderExt, FileTypeExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// Permission bits of a new file.
pub const NEW_FILE_MODE: u32 = 0o644;
/// Permission bits of a created directory.
pub const NEW_DIR_MODE: u32 = 0o755;

/// What a path names, as far as the file tools care.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Nothing (a dangling symlink too, when symlinks are followed).
    Missing,
    /// A regular file.
    File,
    /// A directory.
    Directory,
    /// A symbolic link (only when the final symlink is not followed).
    Symlink,
    /// Anything else, described: `a FIFO`, `a socket`, `a character device`, ...
    Special(&'static str),
}

impl Kind {
    fn of(file_type: FileType) -> Kind {
        if file_type.is_file() {
            Kind::File
        } else if file_type.is_dir() {
            Kind::Directory
        } else if file_type.is_symlink() {
            Kind::Symlink
        } else {
            Kind::Special(describe(file_type))
        }
    }
}

/// A non-regular, non-directory file type in words, for messages.
fn describe(file_type: FileType) -> &'static str {
    if file_type.is_fifo() {
        "a FIFO (named pipe)"
    } else if file_type.is_socket() {
        "a socket"
    } else if file_type.is_char_device() {
        "a character device"
    } else if file_type.is_block_device() {
        "a block device"
    } else if file_type.is_dir() {
        "a directory"
    } else {
        "not a regular file"
    }
}

/// What `path` names, symlinks followed, without opening it.
pub fn kind(path: &Path) -> io::Result<Kind> {
    kind_from(std::fs::metadata(path))
}

/// What `path` itself names (a final symlink is not followed), without opening it.
pub fn kind_of_link(path: &Path) -> io::Result<Kind> {
    kind_from(std::fs::symlink_metadata(path))
}

fn kind_from(meta: io::Result<std::fs::Metadata>) -> io::Result<Kind> {
    match meta {
        Ok(meta) => Ok(Kind::of(meta.file_type())),
        Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(Kind::Missing),
        Err(err) => Err(err),
    }
}

/// The refusal for a target that is neither a regular file nor a directory: `what` is
/// the description a [`Kind::Special`] carries.
pub fn not_regular(shown: &str, what: &str) -> String {
    format!(
        "{shown} is not a regular file: it is {what}. Only regular files can be written, \
         edited or patched."
    )
}

/// Reads a regular file whole. The file is opened non-blocking (a FIFO put there since it
/// was inspected cannot block the call) and refused with `InvalidInput` unless the opened
/// handle is a regular file.
pub fn read_regular(path: &Path) -> io::Result<Vec<u8>> {
    let mut file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("not a regular file: it is {}", describe(meta.file_type())),
        ));
    }
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    file.read_to_end(&mut bytes)?;
    Ok(bytes)
}

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
    fn kinds_are_told_apart_without_opening_anything() {
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("f");
        std::fs::write(&file, "x").unwrap();
        let fifo = tmp.path().join("p");
        let name = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a valid NUL-terminated path that outlives the call.
        assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o644) }, 0);
        let link = tmp.path().join("l");
        std::os::unix::fs::symlink(&fifo, &link).unwrap();
        assert_eq!(kind(&file).unwrap(), Kind::File);
        assert_eq!(kind(tmp.path()).unwrap(), Kind::Directory);
        assert_eq!(kind(&tmp.path().join("none")).unwrap(), Kind::Missing);
        assert_eq!(kind(&fifo).unwrap(), Kind::Special("a FIFO (named pipe)"));
        assert_eq!(kind(&link).unwrap(), Kind::Special("a FIFO (named pipe)"));
        assert_eq!(kind_of_link(&link).unwrap(), Kind::Symlink);
        assert_eq!(
            kind(Path::new("/dev/null")).unwrap(),
            Kind::Special("a character device")
        );
        assert_eq!(read_regular(&file).unwrap(), b"x");
        // Opened anyway (as after a swap), the FIFO neither blocks nor is read.
        let err = read_regular(&fifo).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
        assert!(err.to_string().contains("FIFO"), "{err}");
        assert_eq!(
            read_regular(tmp.path()).unwrap_err().kind(),
            io::ErrorKind::InvalidInput
        );
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
