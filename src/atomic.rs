//! Atomic file writes: the new content goes into a temporary file in the target's
//! own directory, is flushed to disk (fsync), gets its final permissions, and is renamed
//! over the target, so a reader sees the old file or the new one and never a mix, and a
//! crash leaves no half-written file. The temporary file is removed on every failure path.
//!
//! An existing file keeps its permission bits; a new one gets 0644 whatever the umask.
//! Missing parent directories are created with 0755.
//!
//! apply_patch changes several files at once through [`commit`], all or nothing: every
//! fallible step happens before anything becomes visible, or is undone when a later step
//! fails (the function's doc has the steps). Only if undoing fails too (practically never)
//! does the [`Failure`] list what is left where ([`Damage`]). A kill cannot break that
//! promise either: the commit's plan is in the project's journal ([`crate::journal`]) from
//! before the first visible change until the end, and the next call finishes or undoes it.
//!
//! A staged temporary file is recorded before it exists and `flock`ed by its writer until
//! it is renamed or removed, so the next call of any tool removes one a killed process
//! left, wherever it is ([`crate::pending`]), and never a user's file of the same shape.
//!
//! Only regular files are ever replaced or read here. What a path names is learned without
//! opening it ([`kind`], [`kind_of_link`]): opening a FIFO blocks until another process
//! opens its other end, and opening a device can act on the device. A FIFO, socket or
//! device is refused by the tools ([`not_regular`]); [`read_regular`] still opens
//! non-blocking and checks the opened handle, so one swapped in after the check cannot
//! hang the call either.
//!
//! Every operation on a target reaches it through [`crate::beneath`]: its directory is
//! opened as a handle without following any symlink on the way, and the temporary file,
//! the rename, the links and removals are `*at` calls on that handle. A path resolved and
//! checked before is therefore changed exactly there, or not at all, even when a directory
//! on it is swapped for a symlink in between.

use std::fs::FileType;
use std::io::{self, Read, Write};
use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Permission bits of a new file.
pub const NEW_FILE_MODE: u32 = 0o644;
/// Permission bits of a created directory.
const NEW_DIR_MODE: u32 = 0o755;

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
///
/// No directory on the way and not the file itself is followed when it is a symlink (the
/// path is a resolved one: a link there now was put there since it was resolved).
pub fn read_regular(path: &Path) -> io::Result<Vec<u8>> {
    read_opened(crate::beneath::open_read(path, false)?)
}

/// [`read_regular`] of what `path` points to when it is a symlink (no directory on the
/// way is followed still).
pub fn read_regular_through(path: &Path) -> io::Result<Vec<u8>> {
    read_opened(crate::beneath::open_read(path, true)?)
}

fn read_opened(mut file: std::fs::File) -> io::Result<Vec<u8>> {
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

/// Largest file edit and apply_patch read into memory (64 MiB): the edit keeps the old text,
/// the new text and the rendered bytes, so a bigger file would cost a multiple of its size.
pub const MAX_EDIT_BYTES: u64 = 64 * 1024 * 1024;

/// Why an existing file must not be edited or replaced, learned from its metadata alone
/// (nothing is read): over `limit` bytes (when given), or without any write bit. The write
/// bit is checked from the mode, not by `access(2)`, so a read-only mark holds even for
/// root, as it does in an editor. `None` when the file is missing or may be changed.
pub fn refuse_change(path: &Path, shown: &str, limit: Option<u64>) -> Option<String> {
    let meta = crate::beneath::metadata(path, true).ok()?;
    if !meta.is_file() {
        return None;
    }
    if let Some(limit) = limit
        && meta.len() > limit
    {
        return Some(format!(
            "Cannot edit {shown}: it has {} bytes, over the limit of {limit} bytes for \
             editing in place. Use write to replace it entirely, or bash for a streaming edit.",
            meta.len()
        ));
    }
    let mode = meta.permissions().mode() & 0o7777;
    if mode & 0o222 == 0 {
        return Some(format!(
            "Cannot change {shown}: it is read-only (mode {mode:04o}, no write bit). Make it \
             writable first (chmod u+w) if it is meant to change."
        ));
    }
    None
}

/// The permission bits a write to `path` should leave: the existing file's, else 0644.
pub fn mode_for(path: &Path) -> u32 {
    crate::beneath::metadata(path, true)
        .map(|m| m.permissions().mode() & 0o7777)
        .unwrap_or(NEW_FILE_MODE)
}

/// Creates the missing ancestors of `path` (mode 0755) and returns the ones it created,
/// outermost first, so that a failed multi-file write can remove them again. On failure
/// the ones it created are removed again.
pub fn create_parents(path: &Path) -> io::Result<Vec<PathBuf>> {
    let mut missing = Vec::new();
    let mut current = path.parent();
    while let Some(dir) = current {
        if dir.as_os_str().is_empty() || crate::beneath::metadata(dir, true).is_ok() {
            break;
        }
        missing.push(dir.to_path_buf());
        current = dir.parent();
    }
    missing.reverse();
    let mut created = Vec::with_capacity(missing.len());
    for dir in missing {
        match crate::beneath::mkdir(&dir, NEW_DIR_MODE) {
            Ok(()) => created.push(dir),
            // Another process created it in between: fine, but it is not ours to remove.
            Err(err)
                if err.kind() == io::ErrorKind::AlreadyExists
                    && crate::beneath::metadata(&dir, false).is_ok_and(|m| m.is_dir()) => {}
            Err(err) => {
                for dir in created.iter().rev() {
                    let _ = crate::beneath::remove_dir(dir);
                }
                return Err(err);
            }
        }
    }
    Ok(created)
}

/// A complete temporary file waiting to be renamed over its target. Its handle stays open
/// with an exclusive `flock` on it, which tells [`crate::pending::recover`] that its
/// writer is alive.
#[derive(Debug)]
pub struct Staged {
    temp: tempfile::TempPath,
    target: PathBuf,
    /// The directory both names are in, opened once without following anything.
    dir: std::os::fd::OwnedFd,
    /// The temporary file, open and `flock`ed while its writer lives.
    held: std::fs::File,
    /// Its record ([`crate::pending`]), removed after the temporary name is gone.
    _record: Option<crate::pending::Record>,
}

/// Writes `bytes` to a temporary file beside `target` (whose directory must exist), flushes
/// it and gives it `mode`. Nothing is visible at `target` until [`Staged::commit`]; dropping
/// the value removes the temporary file. The temporary file is recorded before it exists
/// ([`crate::pending`]), so that the next call removes it if this process is killed; it
/// is created through the checked directory handle (`O_EXCL | O_NOFOLLOW`), named
/// `.NAME.….tinytool.tmp`, and locked at once.
pub fn stage(target: &Path, bytes: &[u8], mode: u32) -> io::Result<Staged> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let (dir, _) = crate::beneath::parent(target)?;
    let (name, pid) = (short_name(target), std::process::id());
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let mut attempt = 0;
    let (mut held, temp_name, record) = loop {
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let temp_name = format!(".{name}.{pid}-{nanos:x}-{n}.tinytool.tmp");
        let record = crate::pending::record(&absolute(&directory_of(target).join(&temp_name)));
        let flags = libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW;
        match crate::beneath::open_at(&dir, temp_name.as_ref(), flags, 0o600) {
            Ok(file) => break (file, temp_name, record),
            Err(err) if err.kind() == io::ErrorKind::AlreadyExists && attempt < 100 => {
                attempt += 1;
            }
            Err(err) => return Err(err),
        }
    };
    // From here on the guard removes the temporary file on every failure.
    let temp = tempfile::TempPath::try_from_path(directory_of(target).join(&temp_name))?;
    held.lock()?;
    held.write_all(bytes)?;
    held.sync_all()?;
    held.set_permissions(std::fs::Permissions::from_mode(mode))?;
    static STAGED: AtomicU64 = AtomicU64::new(0);
    crate::journal::test_kill_after_stage(STAGED.fetch_add(1, Ordering::Relaxed) as usize + 1);
    Ok(Staged {
        temp,
        target: target.to_path_buf(),
        dir,
        held,
        _record: record,
    })
}

/// `path` made absolute against the working directory (records hold absolute paths).
fn absolute(path: &Path) -> PathBuf {
    if path.is_absolute() {
        return path.to_path_buf();
    }
    std::env::current_dir()
        .map(|cwd| cwd.join(path))
        .unwrap_or_else(|_| path.to_path_buf())
}

impl Staged {
    /// The file this will replace.
    #[cfg(test)]
    pub fn target(&self) -> &Path {
        &self.target
    }

    /// Renames the temporary file over the target. The rename is durable once the
    /// target's directory is flushed ([`sync_dirs`]).
    pub fn commit(self) -> io::Result<()> {
        let Staged {
            temp,
            target,
            dir,
            held,
            _record,
        } = self;
        let (Some(from), Some(to)) = (temp.file_name(), target.file_name()) else {
            return Err(io::Error::from_raw_os_error(libc::EINVAL));
        };
        crate::beneath::rename_at(&dir, from, &dir, to)?;
        // The temporary name is gone: nothing is left for the guard to remove, and the
        // record goes after it.
        let _ = temp.keep();
        drop(held);
        drop(_record);
        Ok(())
    }

    /// Device and inode of the staged file (the target's, once installed).
    fn id(&self) -> io::Result<(u64, u64)> {
        use std::os::unix::fs::MetadataExt;
        let meta = self.held.metadata()?;
        Ok((meta.dev(), meta.ino()))
    }
}

pub use crate::beneath::sync_dirs;

/// Writes `bytes` to `target` atomically with `mode`, creating missing parent directories.
pub fn write(target: &Path, bytes: &[u8], mode: u32) -> io::Result<()> {
    create_parents(target)?;
    stage(target, bytes, mode)?.commit()?;
    sync_dirs([target]);
    Ok(())
}

/// The directory `path` is in (`.` for a bare name).
fn directory_of(path: &Path) -> &Path {
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    }
}

/// The start of `path`'s file name (at most 64 bytes, on a character boundary), for the
/// names of hidden helper files beside it: a long name plus a prefix and suffix would
/// exceed the filesystem's limit on a name's length.
fn short_name(path: &Path) -> String {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut end = name.len().min(64);
    while !name.is_char_boundary(end) {
        end -= 1;
    }
    name[..end].to_string()
}

/// One change of a multi-file [`commit`].
#[derive(Debug, Clone, Copy)]
pub enum Change<'a> {
    /// `target` gets this content and these permission bits; a file (or symlink) there is
    /// replaced, missing parent directories are created.
    Write {
        /// The file written.
        target: &'a Path,
        /// Its new content.
        bytes: &'a [u8],
        /// Its permission bits.
        mode: u32,
    },
    /// `target` is removed: a file, or a symlink itself (never what it points to). A missing
    /// target is left missing; a directory is refused.
    Delete {
        /// The file or link removed.
        target: &'a Path,
    },
}

impl Change<'_> {
    /// The path the change acts on.
    pub fn target(&self) -> &Path {
        match self {
            Change::Write { target, .. } | Change::Delete { target } => target,
        }
    }
}

/// The step of a [`commit`] that failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Writing a new content (creating the directory, the temporary file, or renaming it
    /// into place).
    Write,
    /// Putting aside the file a write replaces.
    Replace,
    /// Removing a file (putting it aside: it fails exactly when deleting would).
    Delete,
}

/// Where a file was left by a failed [`commit`] that could not be fully undone.
#[derive(Debug, PartialEq, Eq)]
pub enum Damage {
    /// `target` holds its new content; its previous version is kept at `original`, or it
    /// did not exist before (`None`).
    Changed {
        /// The file.
        target: PathBuf,
        /// Where its previous version is.
        original: Option<PathBuf>,
    },
    /// `target` is missing; its previous version is kept at `original`.
    Missing {
        /// The file.
        target: PathBuf,
        /// Where its previous version is.
        original: PathBuf,
    },
    /// A helper file that could not be removed (every target is as it was or as intended).
    Leftover {
        /// The helper file.
        path: PathBuf,
    },
}

/// A [`commit`] that did not happen.
#[derive(Debug)]
pub struct Failure {
    /// What failed.
    pub action: Action,
    /// The target it failed on.
    pub target: PathBuf,
    /// Why.
    pub error: io::Error,
    /// What undoing the steps already taken could not restore; empty when every target is
    /// exactly as it was before the commit.
    pub damage: Vec<Damage>,
}

/// A [`commit`] that happened.
#[derive(Debug, Default)]
pub struct Committed {
    /// Hidden copies of replaced or deleted files that could not be removed afterwards
    /// (every target is as intended): each with the reason.
    pub leftovers: Vec<(PathBuf, io::Error)>,
}

/// The file-system operations [`commit`] can fail in, replaceable in tests so that every
/// failure path (undoing included) is exercised.
struct Ops<'a> {
    rename: &'a dyn Fn(&Path, &Path) -> io::Result<()>,
    hard_link: &'a dyn Fn(&Path, &Path) -> io::Result<()>,
    remove: &'a dyn Fn(&Path) -> io::Result<()>,
}

fn rename(from: &Path, to: &Path) -> io::Result<()> {
    crate::beneath::rename(from, to)
}

fn hard_link(from: &Path, to: &Path) -> io::Result<()> {
    crate::beneath::hard_link(from, to)
}

fn remove(path: &Path) -> io::Result<()> {
    crate::beneath::remove_file(path)
}

const REAL: Ops<'static> = Ops {
    rename: &rename,
    hard_link: &hard_link,
    remove: &remove,
};

/// A step taken, to be undone if a later one fails.
enum Done {
    /// The previous version of `target` is also at `aside`: hard-linked (`moved` false,
    /// the target still there) or renamed (`moved` true, the target gone).
    Aside {
        target: PathBuf,
        aside: PathBuf,
        moved: bool,
    },
    /// New content was renamed onto `target`.
    Installed { target: PathBuf },
}

/// Applies `changes` (each target once) all or nothing, in four steps:
///
/// 1. every new content is staged as a complete, flushed temporary file beside its target
///    (missing parent directories created);
/// 2. every file to be replaced or deleted gets a second name beside it: a replaced file a
///    hard link (so readers never find it missing; when the filesystem has no hard links
///    it is renamed instead), a deleted file a hard link and its own name removed (a
///    rename without hard links), which fails exactly when deleting would (permissions,
///    immutable file, a mount point); a directory is never moved (`set_aside`);
/// 3. the temporary files are renamed onto their targets;
/// 4. the set-aside names are removed and the directories flushed.
///
/// When step 1, 2 or 3 fails, the steps taken are undone in reverse order (set-aside
/// files renamed back, new files removed, temporary files and created directories removed)
/// and every target is as it was. Until step 4 each original still exists under some name,
/// so undoing needs no data to be written, only renames and removals in directories the
/// commit already changed.
///
/// Between steps 1 and 2 the plan is recorded in the journal of the project in `dir`
/// ([`crate::journal`]), and the record is removed at the end: a process killed in
/// between leaves a record from which the next call finishes or undoes the commit.
pub fn commit(dir: &Path, changes: &[Change<'_>]) -> Result<Committed, Failure> {
    commit_with(changes, &REAL, Some(dir))
}

fn commit_with(
    changes: &[Change<'_>],
    ops: &Ops<'_>,
    journal_dir: Option<&Path>,
) -> Result<Committed, Failure> {
    let fail = |action, target: &Path, error| Failure {
        action,
        target: target.to_path_buf(),
        error,
        damage: Vec::new(),
    };
    for (n, change) in changes.iter().enumerate() {
        if changes[..n].iter().any(|c| c.target() == change.target()) {
            return Err(fail(
                Action::Write,
                change.target(),
                io::Error::new(io::ErrorKind::InvalidInput, "changed twice in one commit"),
            ));
        }
    }
    // 1. Stage.
    let mut created_dirs: Vec<PathBuf> = Vec::new();
    let mut staged: Vec<Staged> = Vec::new();
    for change in changes {
        let Change::Write {
            target,
            bytes,
            mode,
        } = *change
        else {
            continue;
        };
        let step = create_parents(target).and_then(|dirs| {
            created_dirs.extend(dirs);
            stage(target, bytes, mode)
        });
        match step {
            Ok(stage) => staged.push(stage),
            Err(error) => {
                let mut failure = fail(Action::Write, target, error);
                failure.damage = undo(Vec::new(), staged, &created_dirs, ops);
                return Err(failure);
            }
        }
    }
    // The names the previous versions will get, and the record of the plan.
    let mut asides: Vec<Option<PathBuf>> = Vec::with_capacity(changes.len());
    let mut entries = Vec::with_capacity(changes.len());
    for change in changes {
        let target = change.target();
        let aside = match std::fs::symlink_metadata(target) {
            Ok(_) => match aside_name(target) {
                Ok(aside) => Some(aside),
                Err(error) => {
                    let mut failure = fail(Action::Write, target, error);
                    failure.damage = undo(Vec::new(), staged, &created_dirs, ops);
                    return Err(failure);
                }
            },
            Err(_) => None,
        };
        let temp = match change {
            Change::Write { .. } => staged
                .iter()
                .find(|s| s.target == target)
                .and_then(|s| s.id().ok().map(|id| (s.temp.to_path_buf(), id))),
            Change::Delete { .. } => None,
        };
        entries.push(crate::journal::Entry {
            target: target.to_path_buf(),
            temp,
            aside: aside.clone(),
        });
        asides.push(aside);
    }
    let record = match journal_dir {
        Some(dir) => match crate::journal::Journal::begin(dir, &entries, &created_dirs) {
            Ok(record) => Some(record),
            Err(error) => {
                let target = changes.first().map_or(Path::new(""), Change::target);
                let error = io::Error::new(
                    error.kind(),
                    format!("cannot record the change in .tinytool/journal: {error}"),
                );
                let mut failure = fail(Action::Write, target, error);
                failure.damage = undo(Vec::new(), staged, &created_dirs, ops);
                return Err(failure);
            }
        },
        None => None,
    };
    // Ends the record: removed when every target is as intended or as before; kept (for
    // the next call to retry) when undoing left damage.
    let close = |record: Option<crate::journal::Journal>, damage: &[Damage]| {
        if let Some(record) = record
            && damage.iter().all(|d| matches!(d, Damage::Leftover { .. }))
        {
            record.finish();
        }
    };
    // Visible changes so far, for the test-only kill hook.
    let mut changed = 0usize;
    // 2. Set aside.
    let mut journal: Vec<Done> = Vec::new();
    for (change, aside) in changes.iter().zip(asides) {
        let (target, action) = match change {
            Change::Write { target, .. } => (*target, Action::Replace),
            Change::Delete { target } => (*target, Action::Delete),
        };
        let Some(aside) = aside else { continue };
        match set_aside(target, aside, action == Action::Replace, ops) {
            Ok(Some(done)) => {
                if let Done::Aside { moved: true, .. } = done {
                    changed += 1;
                    crate::journal::test_kill_point(changed);
                }
                journal.push(done);
            }
            Ok(None) => {}
            Err(error) => {
                let mut failure = fail(action, target, error);
                failure.damage = undo(journal, staged, &created_dirs, ops);
                close(record, &failure.damage);
                return Err(failure);
            }
        }
    }
    // 3. Install.
    let mut pending = staged.into_iter();
    while let Some(stage) = pending.next() {
        let target = stage.target.clone();
        match (ops.rename)(&stage.temp, &target) {
            Ok(()) => {
                // The temporary name is gone: nothing is left for the guard to remove.
                let _ = stage.temp.keep();
                journal.push(Done::Installed { target });
                changed += 1;
                crate::journal::test_kill_point(changed);
            }
            Err(error) => {
                let mut rest = vec![stage];
                rest.extend(pending);
                let mut failure = fail(Action::Write, &target, error);
                failure.damage = undo(journal, rest, &created_dirs, ops);
                close(record, &failure.damage);
                return Err(failure);
            }
        }
    }
    // 4. Clean up.
    let mut committed = Committed::default();
    for done in &journal {
        if let Done::Aside { aside, .. } = done
            && let Err(error) = (ops.remove)(aside)
            && error.kind() != io::ErrorKind::NotFound
        {
            committed.leftovers.push((aside.clone(), error));
        }
    }
    sync_dirs(
        changes
            .iter()
            .map(Change::target)
            .chain(created_dirs.iter().map(PathBuf::as_path)),
    );
    close(record, &[]);
    Ok(committed)
}

/// The refusal to set aside something that is neither a regular file nor a symlink (a
/// directory, FIFO, socket or device put there since the patch was planned).
fn not_movable(meta: &std::fs::Metadata) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        format!(
            "it is {} now (it changed after the patch was read); only regular files and \
             symbolic links are replaced or deleted, so nothing was moved",
            describe(meta.file_type())
        ),
    )
}

/// Whether `meta` is something a commit may replace or delete.
fn movable(meta: &std::fs::Metadata) -> bool {
    meta.is_file() || meta.is_symlink()
}

/// Gives the file or link at `target` the second, hidden name `aside` beside it, and for a
/// deletion (`keep` false) removes the target name. Both go by a hard link where the
/// filesystem has them: a directory can neither be hard-linked nor unlinked, so one swapped
/// in since the check is never moved. Without hard links the file is renamed
/// aside, and anything but a file or link found moved is renamed back at once. `None` when
/// nothing is there. `aside` is the name the journal recorded, so a name taken since it was
/// found free (another process with the same id in another pid namespace) fails the commit
/// rather than picking another.
fn set_aside(target: &Path, aside: PathBuf, keep: bool, ops: &Ops<'_>) -> io::Result<Option<Done>> {
    match crate::beneath::metadata(target, false) {
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(error) => return Err(error),
        // Put there since the patch was planned: neither replaced nor removed.
        Ok(meta) if !movable(&meta) => return Err(not_movable(&meta)),
        Ok(_) => {}
    }
    move_aside(target, aside, keep, ops).map(Some)
}

/// [`set_aside`] past its first check: what is found there now is checked again at every
/// step, so a directory or special file swapped in meanwhile is never moved.
fn move_aside(target: &Path, aside: PathBuf, keep: bool, ops: &Ops<'_>) -> io::Result<Done> {
    // A link never replaces an existing name.
    let linked = (ops.hard_link)(target, &aside);
    let done = |moved| {
        Ok(Done::Aside {
            target: target.to_path_buf(),
            aside: aside.clone(),
            moved,
        })
    };
    if linked.is_ok()
        && let Ok(meta) = crate::beneath::metadata(&aside, false)
        && !movable(&meta)
    {
        // A FIFO, socket or device (those can be linked) swapped in: left alone.
        let _ = (ops.remove)(&aside);
        return Err(not_movable(&meta));
    }
    match linked {
        Ok(()) if keep => return done(false),
        Ok(()) => {
            // unlink(2) refuses a directory swapped in since the link was made.
            return match (ops.remove)(target) {
                Ok(()) => done(true),
                Err(error) => {
                    let _ = (ops.remove)(&aside);
                    Err(error)
                }
            };
        }
        Err(error) if error.kind() == io::ErrorKind::AlreadyExists => return Err(error),
        // No hard links here (or a directory now, which cannot have them).
        Err(_) => {}
    }
    if let Ok(meta) = crate::beneath::metadata(target, false)
        && !movable(&meta)
    {
        return Err(not_movable(&meta));
    }
    // A rename would replace the recorded name if it were taken since: refused instead.
    if crate::beneath::metadata(&aside, false).is_ok() {
        return Err(io::Error::from_raw_os_error(libc::EEXIST));
    }
    (ops.rename)(target, &aside)?;
    if let Ok(meta) = crate::beneath::metadata(&aside, false)
        && !movable(&meta)
    {
        // Swapped in between the check and the rename: put back where it was.
        let _ = (ops.rename)(&aside, target);
        return Err(not_movable(&meta));
    }
    done(true)
}

/// Whether a file name is one of the hidden files a write works with (a staged new
/// content or a set-aside old one): a copy of some user file, under a name no rule for
/// that file matches, so searches leave it out.
pub fn is_work_file(name: &std::ffi::OsStr) -> bool {
    let name = name.as_encoded_bytes();
    name.starts_with(b".") && (name.ends_with(b".tinytool.tmp") || name.ends_with(b".tinytool.old"))
}

/// A free hidden name beside `target`: `.NAME.PID-N.tinytool.old`, unique within this
/// process by the counter and across processes by the process id.
fn aside_name(target: &Path) -> io::Result<PathBuf> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let dir = directory_of(target);
    let name = short_name(target);
    let pid = std::process::id();
    // A name taken by an earlier process with the same id (a crash) is skipped.
    for _ in 0..1000 {
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let candidate = dir.join(format!(".{name}.{pid}-{n}.tinytool.old"));
        match crate::beneath::metadata(&candidate, false) {
            Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(candidate),
            Err(error) => return Err(error),
            Ok(_) => {}
        }
    }
    Err(io::Error::new(
        io::ErrorKind::AlreadyExists,
        "no free name to set the file aside",
    ))
}

/// Undoes `journal` in reverse order, removes the temporary files not installed and the
/// directories created; returns what could not be restored.
fn undo(
    journal: Vec<Done>,
    pending: Vec<Staged>,
    created_dirs: &[PathBuf],
    ops: &Ops<'_>,
) -> Vec<Damage> {
    let mut damage = Vec::new();
    let installed: Vec<PathBuf> = journal
        .iter()
        .filter_map(|d| match d {
            Done::Installed { target } => Some(target.clone()),
            Done::Aside { .. } => None,
        })
        .collect();
    let has_aside = |target: &Path| {
        journal
            .iter()
            .any(|d| matches!(d, Done::Aside { target: t, .. } if t == target))
    };
    let absent = |result: io::Result<()>| match result {
        Err(error) if error.kind() != io::ErrorKind::NotFound => Err(error),
        _ => Ok(()),
    };
    for done in journal.iter().rev() {
        match done {
            // A file that did not exist: remove it. One that did gets its previous
            // version back from the set-aside name below.
            Done::Installed { target } if !has_aside(target) => {
                if absent((ops.remove)(target)).is_err() {
                    damage.push(Damage::Changed {
                        target: target.clone(),
                        original: None,
                    });
                }
            }
            Done::Installed { .. } => {}
            Done::Aside {
                target,
                aside,
                moved,
            } => {
                let changed = installed.contains(target);
                if *moved || changed {
                    if (ops.rename)(aside, target).is_err() {
                        damage.push(if changed {
                            Damage::Changed {
                                target: target.clone(),
                                original: Some(aside.clone()),
                            }
                        } else {
                            Damage::Missing {
                                target: target.clone(),
                                original: aside.clone(),
                            }
                        });
                    }
                } else if absent((ops.remove)(aside)).is_err() {
                    // The target was never touched; only the extra name remains.
                    damage.push(Damage::Leftover {
                        path: aside.clone(),
                    });
                }
            }
        }
    }
    damage.reverse();
    for stage in pending {
        let temp = stage.temp.to_path_buf();
        if absent(stage.temp.close()).is_err() {
            damage.push(Damage::Leftover { path: temp });
        }
    }
    for dir in created_dirs.iter().rev() {
        // Not empty only if something above could not be removed (reported there).
        let _ = crate::beneath::remove_dir(dir);
    }
    damage
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

    /// Names, kinds, link counts and contents under `dir`, sorted.
    fn listing(dir: &Path) -> Vec<String> {
        use std::os::unix::fs::MetadataExt;
        let mut out = Vec::new();
        let mut stack = vec![dir.to_path_buf()];
        while let Some(current) = stack.pop() {
            for entry in std::fs::read_dir(&current).unwrap() {
                let path = entry.unwrap().path();
                let rel = path.strip_prefix(dir).unwrap().display().to_string();
                let meta = std::fs::symlink_metadata(&path).unwrap();
                let mode = meta.permissions().mode() & 0o777;
                if meta.is_symlink() {
                    out.push(format!(
                        "{rel} -> {}",
                        std::fs::read_link(&path).unwrap().display()
                    ));
                } else if meta.is_dir() {
                    out.push(format!("{rel}/"));
                    stack.push(path);
                } else if !meta.is_file() {
                    // A FIFO would block a read.
                    out.push(format!("{rel} special"));
                } else {
                    let bytes = std::fs::read(&path).unwrap();
                    out.push(format!(
                        "{rel} {mode:o} x{} {}",
                        meta.nlink(),
                        String::from_utf8_lossy(&bytes)
                    ));
                }
            }
        }
        out.sort();
        out
    }

    /// A tree to change: a file to replace (mode 0750), one to delete, a link to delete.
    fn furnished() -> tempfile::TempDir {
        let tmp = tempfile::tempdir().unwrap();
        let p = tmp.path();
        std::fs::write(p.join("a"), "old a").unwrap();
        std::fs::set_permissions(p.join("a"), std::fs::Permissions::from_mode(0o750)).unwrap();
        std::fs::write(p.join("gone"), "old gone").unwrap();
        std::os::unix::fs::symlink("a", p.join("link")).unwrap();
        tmp
    }

    /// Replace `a`, create `new/dir/n`, delete `gone` and the link `link`.
    fn run(root: &Path, ops: &Ops<'_>) -> Result<Committed, Failure> {
        let (a, n, gone, link) = (
            root.join("a"),
            root.join("new/dir/n"),
            root.join("gone"),
            root.join("link"),
        );
        let changes = [
            Change::Write {
                target: &a,
                bytes: b"new a",
                mode: 0o750,
            },
            Change::Write {
                target: &n,
                bytes: b"new n",
                mode: NEW_FILE_MODE,
            },
            Change::Delete { target: &gone },
            Change::Delete { target: &link },
        ];
        commit_with(&changes, ops, None)
    }

    type TwoPaths<'a> = Box<dyn Fn(&Path, &Path) -> io::Result<()> + 'a>;
    type OnePath<'a> = Box<dyn Fn(&Path) -> io::Result<()> + 'a>;

    /// The real rename, hard link and remove, except that the calls of `kind` numbered (from
    /// 1, counted in `calls`) in `fail_at` fail.
    fn failing<'a>(
        kind: &'static str,
        fail_at: &'a [usize],
        calls: &'a std::cell::Cell<usize>,
    ) -> (TwoPaths<'a>, TwoPaths<'a>, OnePath<'a>) {
        let hit = move |which: &str| {
            if which != kind {
                return false;
            }
            calls.set(calls.get() + 1);
            fail_at.contains(&calls.get())
        };
        let injected = || io::Error::from_raw_os_error(libc::EIO);
        let hit = std::rc::Rc::new(hit);
        let (h1, h2, h3) = (hit.clone(), hit.clone(), hit);
        (
            Box::new(move |from: &Path, to: &Path| {
                if h1("rename") {
                    return Err(injected());
                }
                std::fs::rename(from, to)
            }),
            Box::new(move |from: &Path, to: &Path| {
                if h2("link") {
                    return Err(injected());
                }
                std::fs::hard_link(from, to)
            }),
            Box::new(move |path: &Path| {
                if h3("remove") {
                    return Err(injected());
                }
                std::fs::remove_file(path)
            }),
        )
    }

    #[test]
    fn a_commit_changes_everything_and_leaves_no_helper_file() {
        let tmp = furnished();
        let committed = run(tmp.path(), &REAL).unwrap();
        assert!(committed.leftovers.is_empty());
        assert_eq!(
            listing(tmp.path()),
            vec![
                "a 750 x1 new a",
                "new/",
                "new/dir/",
                "new/dir/n 644 x1 new n"
            ]
        );
    }

    #[test]
    fn every_failing_step_is_undone_exactly() {
        // A commit of `run` links a, gone and link aside (links 1-3), removes the names
        // gone and link (removals 1-2), installs a and n (renames 1-2). Failing each of
        // those leaves the tree as it was; without a hard link (links 1, 2) the file is
        // renamed aside instead, and all succeeds.
        for (kind, at) in [
            ("rename", 1),
            ("rename", 2),
            ("remove", 1),
            ("remove", 2),
            ("link", 1),
            ("link", 2),
        ] {
            let tmp = furnished();
            let before = listing(tmp.path());
            let calls = std::cell::Cell::new(0);
            let fail_at = [at];
            let (rename, hard_link, remove) = failing(kind, &fail_at, &calls);
            let ops = Ops {
                rename: &rename,
                hard_link: &hard_link,
                remove: &remove,
            };
            let result = run(tmp.path(), &ops);
            if kind == "link" {
                assert!(result.is_ok(), "{result:?}");
                assert_eq!(listing(tmp.path()).len(), 4, "{:?}", listing(tmp.path()));
                assert_eq!(listing(tmp.path())[0], "a 750 x1 new a");
                continue;
            }
            let failure = result.unwrap_err();
            assert!(failure.damage.is_empty(), "{kind} {at}: {failure:?}");
            assert_eq!(listing(tmp.path()), before, "{kind} {at}: {failure:?}");
            let (action, target) = match (kind, at) {
                ("remove", 1) => (Action::Delete, "gone"),
                ("remove", _) => (Action::Delete, "link"),
                (_, 1) => (Action::Write, "a"),
                _ => (Action::Write, "new/dir/n"),
            };
            assert_eq!(failure.action, action, "{at}");
            assert_eq!(failure.target, tmp.path().join(target), "{at}");
        }
    }

    #[test]
    fn a_failed_undo_says_where_every_file_is() {
        // Install of n (rename 2) fails; undoing then fails on every rename back (3..).
        let tmp = furnished();
        let calls = std::cell::Cell::new(0);
        let fail_at = [2, 3, 4, 5];
        let (rename, hard_link, remove) = failing("rename", &fail_at, &calls);
        let ops = Ops {
            rename: &rename,
            hard_link: &hard_link,
            remove: &remove,
        };
        let failure = run(tmp.path(), &ops).unwrap_err();
        let p = tmp.path();
        let aside = |name: &str| {
            failure
                .damage
                .iter()
                .find_map(|d| match d {
                    Damage::Changed {
                        target,
                        original: Some(o),
                    }
                    | Damage::Missing {
                        target,
                        original: o,
                    } if target == &p.join(name) => Some(o.clone()),
                    _ => None,
                })
                .unwrap()
        };
        let (a, gone, link) = (aside("a"), aside("gone"), aside("link"));
        assert_eq!(
            failure.damage,
            vec![
                Damage::Changed {
                    target: p.join("a"),
                    original: Some(a.clone())
                },
                Damage::Missing {
                    target: p.join("gone"),
                    original: gone.clone()
                },
                Damage::Missing {
                    target: p.join("link"),
                    original: link.clone()
                },
            ]
        );
        // What the report says is true: the originals are where it says.
        assert_eq!(std::fs::read(p.join("a")).unwrap(), b"new a");
        assert_eq!(std::fs::read(&a).unwrap(), b"old a");
        assert_eq!(std::fs::read(&gone).unwrap(), b"old gone");
        assert_eq!(std::fs::read_link(&link).unwrap(), Path::new("a"));
        assert!(!p.join("gone").exists() && !p.join("new").exists());
    }

    #[test]
    fn an_extra_name_that_cannot_be_removed_is_a_leftover_only() {
        // Install of a (rename 1) fails: a was never touched, but removing its extra name
        // (the third removal, after the names of gone and link) fails too.
        let tmp = furnished();
        let before = listing(tmp.path());
        let (renames, removes) = (std::cell::Cell::new(0), std::cell::Cell::new(0));
        let (rename_at, remove_at) = ([1], [3]);
        let (rename, hard_link, _) = failing("rename", &rename_at, &renames);
        let (_, _, remove) = failing("remove", &remove_at, &removes);
        let ops = Ops {
            rename: &rename,
            hard_link: &hard_link,
            remove: &remove,
        };
        let failure = run(tmp.path(), &ops).unwrap_err();
        let [Damage::Leftover { path }] = failure.damage.as_slice() else {
            panic!("{failure:?}");
        };
        assert_eq!(std::fs::read(path).unwrap(), b"old a");
        std::fs::remove_file(path).unwrap();
        // The extra name held a second link to a: with it gone, a is exactly as before.
        assert_eq!(listing(tmp.path()), before);
    }

    #[test]
    fn directories_and_doubled_targets_are_refused_before_anything_changes() {
        let tmp = furnished();
        let project = tempfile::tempdir().unwrap();
        std::fs::create_dir(tmp.path().join("d")).unwrap();
        let before = listing(tmp.path());
        let (a, d) = (tmp.path().join("a"), tmp.path().join("d"));
        let write_a = Change::Write {
            target: &a,
            bytes: b"x",
            mode: NEW_FILE_MODE,
        };
        for changes in [
            vec![write_a, Change::Delete { target: &d }],
            vec![
                write_a,
                Change::Write {
                    target: &d,
                    bytes: b"x",
                    mode: NEW_FILE_MODE,
                },
            ],
            vec![write_a, Change::Delete { target: &a }],
        ] {
            let failure = commit(project.path(), &changes).unwrap_err();
            assert!(failure.damage.is_empty());
            assert_eq!(listing(tmp.path()), before, "{failure:?}");
        }
    }

    #[test]
    fn a_delete_never_moves_a_directory_or_special_file() {
        let tmp = furnished();
        let project = tempfile::tempdir().unwrap();
        let p = tmp.path();
        // Planned as a file, a directory (with content) or a FIFO by the time of the commit.
        std::fs::create_dir(p.join("d")).unwrap();
        std::fs::write(p.join("d/inner"), "keep").unwrap();
        let fifo = std::ffi::CString::new(p.join("f").as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a valid NUL-terminated path that outlives the call.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);
        let before = listing(p);
        for name in ["d", "f"] {
            let target = p.join(name);
            let failure =
                commit(project.path(), &[Change::Delete { target: &target }]).unwrap_err();
            assert_eq!(failure.action, Action::Delete);
            assert!(failure.damage.is_empty());
            let message = failure.error.to_string();
            assert!(message.contains("nothing was moved"), "{message}");
            assert_eq!(listing(p), before, "{name}");
            // Past the first check (a swap in between): refused all the same.
            let err = move_aside(&target, aside_name(&target).unwrap(), false, &REAL);
            assert!(err.is_err(), "{name}");
            assert_eq!(listing(p), before, "{name}");
        }
    }

    #[test]
    fn a_recorded_aside_name_taken_since_fails_and_changes_nothing() {
        // The journal recorded `aside`; another process took the name since. Neither the
        // link nor (without hard links) the rename may pick another name or replace it.
        let tmp = furnished();
        let p = tmp.path();
        let target = p.join("gone");
        let aside = aside_name(&target).unwrap();
        std::fs::write(&aside, "someone else's").unwrap();
        let before = listing(p);
        for keep in [true, false] {
            let err = set_aside(&target, aside.clone(), keep, &REAL)
                .err()
                .unwrap();
            assert_eq!(err.kind(), io::ErrorKind::AlreadyExists, "{keep}");
            assert_eq!(listing(p), before, "{keep}");
        }
        let no_link = |_: &Path, _: &Path| Err(io::Error::from_raw_os_error(libc::EXDEV));
        let ops = Ops {
            rename: &rename,
            hard_link: &no_link,
            remove: &remove,
        };
        let err = set_aside(&target, aside.clone(), false, &ops)
            .err()
            .unwrap();
        assert_eq!(err.kind(), io::ErrorKind::AlreadyExists);
        assert_eq!(listing(p), before);
    }

    #[test]
    fn staged_files_are_locked_by_their_writer() {
        let tmp = tempfile::tempdir().unwrap();
        let target = tmp.path().join("f.txt");
        let staged = stage(&target, b"new", NEW_FILE_MODE).unwrap();
        let name = staged
            .temp
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        assert!(
            name.starts_with(".f.txt.") && name.ends_with(".tinytool.tmp"),
            "{name}"
        );
        // Held by its live writer: another handle cannot lock it.
        let other = std::fs::File::open(&staged.temp).unwrap();
        assert!(other.try_lock().is_err());
        drop(other);
        let path = staged.temp.to_path_buf();
        drop(staged);
        assert!(!path.exists());
    }

    #[test]
    fn helper_names_stay_short_beside_a_long_file_name() {
        let tmp = tempfile::tempdir().unwrap();
        let project = tempfile::tempdir().unwrap();
        let target = tmp.path().join("é".repeat(127));
        std::fs::write(&target, "old").unwrap();
        let changes = [Change::Write {
            target: &target,
            bytes: b"new",
            mode: NEW_FILE_MODE,
        }];
        commit(project.path(), &changes).unwrap();
        assert_eq!(std::fs::read(&target).unwrap(), b"new");
        assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 1);
    }
}
