//! The project tree as tinytool sees it: one pass of `lstat` calls over it (the walk
//! behind checkpoints and the sandbox's secret scan), what one walk leaves for the next
//! ([`listing`]), and the inotify [`watch`] that tells which directories changed since.
//!
//! Which files are walked: everything below the root except what `.gitignore`, `.ignore`
//! and git's exclude files leave out (also outside a git repository), and the folders that
//! are not the project's ([`crate::skip_dirs`]: dependencies, virtual environments,
//! caches, build outputs). Symlinks are
//! recorded as themselves (their fingerprint), never followed. Paths are relative to the
//! root, `/`-separated, and only valid UTF-8 paths are walked (others are counted).
//!
//! A [`Fingerprint`] is (size, mtime, inode, ctime, mode). A path whose fingerprint is
//! unchanged is unchanged without reading it; only added, removed and re-stamped paths
//! need their contents read and hashed.
//!
//! The walk is tinytool's own (not `ignore::Walk`) because it keeps what it saw for the
//! next walk ([`listing`]): each directory's entries, which of them the ignore rules keep,
//! and each kept file's fingerprint. So an unchanged directory costs one `lstat` of itself
//! and one of each kept entry, relative to the directory's handle: no listing, no probe
//! for ignore files, no pattern matching. The fingerprints also stand for the stored tree
//! (the checkpoint store's record of the project) when the cache was saved for the
//! stored tree's current generation: the walk then reports only the paths that differ
//! from it ([`Walk::complete`]), and nobody has to load or compare the whole stored tree.
//! Ignore files are applied with the `ignore` crate's matchers and precedence
//! (`.ignore`, then `.gitignore` up to the repository root, then `.git/info/exclude`,
//! then git's global excludes file).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::ffi::{OsStr, OsString};
use std::hash::{Hash, Hasher};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use anyhow::{Context, Result};

use listing::Kind;

pub use crate::fingerprint::{Fingerprint, fingerprint};

/// One walk's result.
#[derive(Debug, Default)]
pub struct Walk {
    /// When [`Walk::complete`]: the paths whose fingerprint differs from the stored tree
    /// (the new fingerprint, `None` for a path that is gone). Otherwise every regular file
    /// and symlink seen, by `/`-separated path relative to the root.
    pub seen: BTreeMap<String, Option<Fingerprint>>,
    /// Whether [`Walk::seen`] holds only the differences from the stored tree (the cache
    /// was saved for the generation the walk was asked to trust).
    pub complete: bool,
    /// Paths that could not be walked or are not UTF-8 (counted, not recorded).
    pub unreadable: usize,
    /// Whether the listings differ from the ones the walk started from (the cache file is
    /// out of date).
    pub dirty: bool,
    /// The stored-tree generation of the cache the walk started from.
    pub based_on: u64,
    /// How many directories were taken as quiet (without a `stat`).
    pub quiet_dirs: usize,
}

impl Walk {
    /// Every file seen with its fingerprint (meaningful for a walk that is not complete).
    pub fn files(&self) -> BTreeMap<String, Fingerprint> {
        self.seen
            .iter()
            .filter_map(|(path, fp)| fp.map(|fp| (path.clone(), fp)))
            .collect()
    }
}

/// How a path differs between two walks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Change {
    /// Present now, absent before.
    Added,
    /// Present before, absent now.
    Removed,
    /// Present in both with different fingerprints (contents may still be equal).
    Restamped,
}

/// Every file under `root` with its fingerprint, trusting no cache (tests and tools that
/// need the whole tree).
#[cfg(test)]
pub fn files(root: &Path) -> Result<BTreeMap<String, Fingerprint>> {
    walk(root, Options::default()).map(|(walk, _)| walk.files())
}

/// How a walk may use what earlier walks saw.
#[derive(Debug, Default, Clone, Copy)]
pub struct Options<'a> {
    /// The current generation of the stored tree: when the cache was saved for it, the
    /// walk is complete (it reports only differences).
    pub tree: Option<u64>,
    /// The listings to start from (default: the running call's published ones, else
    /// the cache file).
    pub old: Option<&'a listing::Cache>,
    /// Directories of `old` known unchanged since it was taken (see
    /// [`watch`]): taken as they are, without a `stat`.
    pub quiet: Option<&'a HashSet<String>>,
    /// Watches every directory walked (for the walk after the call).
    pub watch: Option<&'a watch::Watch>,
    /// The folders that are not the project's (default: the built-in list).
    pub not_project: Option<&'a crate::skip_dirs::NotProject>,
}

/// Walks `root` (see the module doc for what is left out), reusing the listings of the
/// previous walk where they are still valid. Returns the walk and the listings it took,
/// which the caller saves with [`listing::save`] once the stored tree matches them
/// (setting their generation).
pub fn walk(root: &Path, options: Options) -> Result<(Walk, listing::Cache)> {
    let meta = std::fs::symlink_metadata(root)
        .with_context(|| format!("cannot walk {}", root.display()))?;
    anyhow::ensure!(meta.is_dir(), "{} is not a directory", root.display());
    let cache_file = crate::project::tinytool_dir(root)
        .join("checkpoints")
        .join(listing::FILE);
    // The running call's before-walk (in this process) is as good as the file and needs
    // no parsing: every listing is checked against the directory's stamp either way.
    let loaded: Option<Arc<listing::Cache>> = options.old.is_none().then(|| {
        published_any_age(&crate::paths::resolve_symlinks(root))
            .unwrap_or_else(|| Arc::new(listing::load(&cache_file)))
    });
    let nothing = listing::Cache::default();
    let old: &listing::Cache = options.old.or(loaded.as_deref()).unwrap_or(&nothing);
    let trusted = options.tree.is_some_and(|t| t != 0 && t == old.tree);
    let mut new = listing::Cache {
        tree: 0,
        dirs: HashMap::with_capacity(old.dirs.len()),
    };
    // Quiet directories are taken as they are: only with the listings they were
    // watched from.
    let quiet = options.quiet.filter(|_| options.old.is_some());
    let mut out = walk_with(
        root,
        &meta,
        Walker {
            root,
            old,
            trusted,
            now: listing::now_ns(),
            global: OnceLock::new(),
            quiet,
            watch: options.watch,
            root_fd: None,
            not_project: options.not_project.cloned().unwrap_or_default(),
        },
        &mut new,
    );
    // A directory walked last time and not now (gone, or now ignored): its files are gone.
    for (rel, listing) in &old.dirs {
        if new.dirs.contains_key(rel) {
            continue;
        }
        out.dirty = true;
        if trusted {
            for (name, fp) in listing.files() {
                if fp.is_some()
                    && let Some(name) = name.to_str()
                {
                    out.seen.insert(join(rel, name), None);
                }
            }
        }
    }
    out.complete = trusted;
    out.based_on = old.tree;
    new.tree = if trusted { old.tree } else { 0 };
    drop_later(loaded);
    Ok((out, new))
}

/// `rel/name`, or `name` at the root.
fn join(rel: &str, name: &str) -> String {
    if rel.is_empty() {
        name.to_owned()
    } else {
        format!("{rel}/{name}")
    }
}

/// The directory listings of the walk that opened the running call's checkpoint, for the
/// sandbox's secret scan ("one walk serves both"): (resolved root, when, listings).
#[allow(clippy::type_complexity)]
static PUBLISHED: std::sync::Mutex<Option<(PathBuf, std::time::Instant, Arc<listing::Cache>)>> =
    std::sync::Mutex::new(None);

/// How long published stamps stand in for `stat` calls: the secret scan of the call
/// follows its checkpoint walk within milliseconds; anything later stats for itself.
const PUBLISHED_FOR: std::time::Duration = std::time::Duration::from_millis(500);

/// Publishes the listings a checkpoint's walk of `root` took (after the stored tree was
/// brought up to date with them), valid until [`forget`] (the end of the call); the
/// secret scan uses them for at most half a second.
pub fn publish(root: &Path, cache: Arc<listing::Cache>) {
    if let Ok(mut slot) = PUBLISHED.lock() {
        *slot = Some((
            crate::paths::resolve_symlinks(root),
            std::time::Instant::now(),
            cache,
        ));
    }
}

/// Withdraws what [`publish`] published (the call ended: its stamps are no longer fresh).
pub fn forget() {
    let published = PUBLISHED.lock().ok().and_then(|mut slot| slot.take());
    drop_later(published);
}

/// Drops `value` on a thread of its own: freeing the listings of a large tree (tens of
/// thousands of allocations) is not worth making the call wait for, and a process that
/// ends first lets the kernel reclaim the memory at once.
fn drop_later<T: Send + 'static>(value: T) {
    if let Err(unspawned) = std::thread::Builder::new()
        .name("drop-listings".into())
        .spawn(move || drop(value))
    {
        drop(unspawned);
    }
}

/// [`published`] however old (for a walk, which checks every listing's stamp itself).
fn published_any_age(root: &Path) -> Option<Arc<listing::Cache>> {
    let slot = PUBLISHED.lock().ok()?;
    let (published_root, _, cache) = slot.as_ref()?;
    (published_root == root).then(|| cache.clone())
}

/// The directory listings (with the stamps) the running call's before-walk took under
/// `root` (a resolved path), by path relative to it; `None` when no walk of `root` is
/// published or it is no longer fresh.
pub fn published(root: &Path) -> Option<Arc<listing::Cache>> {
    let slot = PUBLISHED.lock().ok()?;
    let (published_root, when, cache) = slot.as_ref()?;
    (published_root == root && when.elapsed() < PUBLISHED_FOR).then(|| cache.clone())
}

/// The ignore files of one directory that has any (or a `.git`), as the `ignore` crate
/// applies them; the files are parsed only when an entry below has to be matched.
struct Level {
    parent: Option<Arc<Level>>,
    /// The directory (absolute).
    dir: PathBuf,
    /// Whether it holds `.ignore`, `.gitignore`, and (with `.git`) `.git/info/exclude`.
    has_ignore: bool,
    has_gitignore: bool,
    has_exclude: bool,
    /// Whether the directory holds `.git` (a repository root: the `.gitignore` files
    /// above it do not apply inside it).
    has_git: bool,
    /// `.ignore`, `.gitignore` and `.git/info/exclude`, parsed on first use.
    matchers: OnceLock<[Option<ignore::gitignore::Gitignore>; 3]>,
}

impl Level {
    fn matchers(&self) -> &[Option<ignore::gitignore::Gitignore>; 3] {
        self.matchers.get_or_init(|| {
            let load =
                |present: bool, path: PathBuf| present.then(|| matcher(&self.dir, &path)).flatten();
            [
                load(self.has_ignore, self.dir.join(".ignore")),
                load(self.has_gitignore, self.dir.join(".gitignore")),
                load(self.has_exclude, self.dir.join(".git/info/exclude")),
            ]
        })
    }
}

/// Whether `path` is ignored by the chain ending at `level` or the global excludes, with
/// the `ignore` crate's precedence: `.ignore` files (deepest first), then `.gitignore`
/// files up to the repository root, then `.git/info/exclude`, then the global file; the
/// first that matches (ignore or whitelist) decides.
fn ignored(
    level: Option<&Level>,
    global: &ignore::gitignore::Gitignore,
    path: &Path,
    is_dir: bool,
) -> bool {
    use ignore::Match;
    let decide = |g: &ignore::gitignore::Gitignore| match g.matched(path, is_dir) {
        Match::None => None,
        Match::Ignore(_) => Some(true),
        Match::Whitelist(_) => Some(false),
    };
    let pick = |m: &Option<ignore::gitignore::Gitignore>| m.as_ref().and_then(decide);
    let (mut m_ignore, mut m_git, mut m_exclude) = (None, None, None);
    let mut saw_git = false;
    let mut cur = level;
    while let Some(l) = cur {
        let [ignore, git, exclude] = l.matchers();
        if m_ignore.is_none() {
            m_ignore = pick(ignore);
        }
        if !saw_git && m_git.is_none() {
            m_git = pick(git);
        }
        if !saw_git && m_exclude.is_none() {
            m_exclude = pick(exclude);
        }
        saw_git = saw_git || l.has_git;
        cur = l.parent.as_deref();
    }
    m_ignore
        .or(m_git)
        .or(m_exclude)
        .or_else(|| decide(global))
        .unwrap_or(false)
}

/// A matcher for the ignore file at `path`, `None` when it is absent or empty.
fn matcher(dir: &Path, path: &Path) -> Option<ignore::gitignore::Gitignore> {
    let mut builder = ignore::gitignore::GitignoreBuilder::new(dir);
    // An unreadable or partly invalid file: the `ignore` crate keeps the valid globs too.
    let _ = builder.add(path);
    builder.build().ok().filter(|g| !g.is_empty())
}

/// Why the walk leaves out the file `rel` (relative to `root`, `/`-separated), or `None`
/// when it keeps it: the same rules as the walk's, applied to one path (a file tool's
/// checkpoint keeps the stored tree to what walks see). Nothing on the way is followed;
/// a missing directory keeps nothing out.
pub fn left_out(
    root: &Path,
    rel: &str,
    not_project: &crate::skip_dirs::NotProject,
) -> Option<&'static str> {
    left_out_as(root, rel, false, not_project)
}

/// Why the walk leaves out the folder `rel` (see [`left_out`]).
pub fn left_out_folder(
    root: &Path,
    rel: &str,
    not_project: &crate::skip_dirs::NotProject,
) -> Option<&'static str> {
    left_out_as(root, rel, true, not_project)
}

fn left_out_as(
    root: &Path,
    rel: &str,
    is_folder: bool,
    not_project: &crate::skip_dirs::NotProject,
) -> Option<&'static str> {
    let parts: Vec<&str> = rel.split('/').collect();
    let global = std::cell::OnceCell::new();
    let mut level: Option<Arc<Level>> = None;
    let mut dir = root.to_path_buf();
    for (i, name) in parts.iter().enumerate() {
        let holds = |file: &str| std::fs::symlink_metadata(dir.join(file)).is_ok();
        if i > 0
            && let Some(why) = not_project.by_content(holds)
        {
            return Some(why);
        }
        let (has_git, has_ignore, has_gitignore) =
            (holds(".git"), holds(".ignore"), holds(".gitignore"));
        if has_git || has_ignore || has_gitignore {
            level = Some(Arc::new(Level {
                parent: level,
                dir: dir.clone(),
                has_ignore,
                has_gitignore,
                has_exclude: has_git && holds(".git/info/exclude"),
                has_git,
                matchers: OnceLock::new(),
            }));
        }
        let last = i + 1 == parts.len();
        let is_dir = !last || is_folder;
        if is_dir && let Some(why) = not_project.by_name(OsStr::new(name), holds) {
            return Some(why);
        }
        if !is_dir && crate::atomic::is_work_file(OsStr::new(name)) {
            return Some("tinytool's own work file");
        }
        let path = dir.join(name);
        let global = global.get_or_init(|| ignore::gitignore::Gitignore::global().0);
        if ignored(level.as_deref(), global, &path, is_dir) {
            return Some("left out by the project's ignore files");
        }
        dir = path;
    }
    if is_folder
        && !rel.is_empty()
        && let Some(why) =
            not_project.by_content(|file| std::fs::symlink_metadata(dir.join(file)).is_ok())
    {
        return Some(why);
    }
    None
}

/// Fingerprint of one `fstatat` result (the casts are no-ops on 64-bit Linux only).
#[allow(clippy::unnecessary_cast)]
fn fingerprint_of(st: &libc::stat) -> Fingerprint {
    Fingerprint {
        size: u64::try_from(st.st_size).unwrap_or(0),
        mtime_ns: (st.st_mtime as i64)
            .saturating_mul(1_000_000_000)
            .saturating_add(st.st_mtime_nsec as i64),
        ino: st.st_ino as u64,
        ctime_ns: (st.st_ctime as i64)
            .saturating_mul(1_000_000_000)
            .saturating_add(st.st_ctime_nsec as i64),
        mode: st.st_mode as u32,
    }
}

/// A directory opened as a handle (`O_PATH`): its entries are `lstat`ed and its
/// subdirectories opened relative to it, one path lookup each and never through a
/// symlink; closed when dropped.
pub(crate) struct DirFd(std::os::fd::OwnedFd);

impl DirFd {
    fn open_at(dirfd: libc::c_int, name: &OsStr) -> Option<DirFd> {
        use std::os::fd::FromRawFd;
        let c = std::ffi::CString::new(name.as_bytes()).ok()?;
        // SAFETY: `c` is a valid NUL-terminated path; the fd is owned by the result.
        let fd = unsafe {
            libc::openat(
                dirfd,
                c.as_ptr(),
                libc::O_PATH | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC,
            )
        };
        // SAFETY: a descriptor openat just returned, owned by nobody else.
        (fd >= 0).then(|| DirFd(unsafe { std::os::fd::OwnedFd::from_raw_fd(fd) }))
    }

    /// The root directory (not through a symlink in its last component).
    pub(crate) fn open(dir: &Path) -> Option<DirFd> {
        DirFd::open_at(libc::AT_FDCWD, dir.as_os_str())
    }

    /// The directory at the relative path `rel` below this one (its last component not
    /// through a symlink).
    pub(crate) fn open_below(&self, rel: &OsStr) -> Option<DirFd> {
        use std::os::fd::AsRawFd;
        DirFd::open_at(self.0.as_raw_fd(), rel)
    }

    /// `stat` of the directory itself (no path lookup).
    pub(crate) fn stat_self(&self) -> Option<libc::stat> {
        use std::os::fd::AsRawFd;
        let mut st = std::mem::MaybeUninit::<libc::stat>::uninit();
        // SAFETY: a valid descriptor and the empty path with AT_EMPTY_PATH; `st` is
        // written on success only.
        let rc = unsafe {
            libc::fstatat(
                self.0.as_raw_fd(),
                c"".as_ptr(),
                st.as_mut_ptr(),
                libc::AT_EMPTY_PATH,
            )
        };
        // SAFETY: fstatat returned 0, so it filled `st`.
        (rc == 0).then(|| unsafe { st.assume_init() })
    }

    /// The subdirectory `name`.
    fn child(&self, name: &OsStr) -> Option<DirFd> {
        use std::os::fd::AsRawFd;
        DirFd::open_at(self.0.as_raw_fd(), name)
    }

    /// `lstat` of the entry `name` (a relative path below the directory).
    fn lstat(&self, name: &OsStr) -> Option<libc::stat> {
        self.lstat_in(&[name])
    }

    /// `lstat` of the relative path made of `parts` joined with `/` (built on the stack:
    /// this runs once per file of the project on every walk).
    pub(crate) fn lstat_in(&self, parts: &[&OsStr]) -> Option<libc::stat> {
        use std::os::fd::AsRawFd;
        let mut buf = [0u8; 512];
        let mut heap = Vec::new();
        let len: usize = parts.iter().map(|p| p.len() + 1).sum();
        let out: &mut [u8] = if len <= buf.len() {
            &mut buf[..len]
        } else {
            heap.resize(len, 0);
            &mut heap
        };
        let mut at = 0;
        for (i, part) in parts.iter().enumerate() {
            let bytes = part.as_bytes();
            if bytes.contains(&0) {
                return None;
            }
            if i > 0 {
                out[at] = b'/';
                at += 1;
            }
            out[at..at + bytes.len()].copy_from_slice(bytes);
            at += bytes.len();
        }
        out[at] = 0;
        let mut st = std::mem::MaybeUninit::<libc::stat>::uninit();
        // SAFETY: valid fd and a NUL-terminated path in `out`; `st` is written on
        // success only.
        let rc = unsafe {
            libc::fstatat(
                self.0.as_raw_fd(),
                out.as_ptr().cast(),
                st.as_mut_ptr(),
                libc::AT_SYMLINK_NOFOLLOW,
            )
        };
        // SAFETY: fstatat returned 0, so it filled `st`.
        (rc == 0).then(|| unsafe { st.assume_init() })
    }

    /// The directory's entries and their kinds (from the listing itself; an entry of
    /// unknown kind is `lstat`ed).
    pub(crate) fn list(&self) -> std::io::Result<Vec<(OsString, Kind)>> {
        use std::os::fd::AsRawFd;
        // SAFETY: "." below a valid directory handle; the new fd goes to fdopendir,
        // which owns it from then on (closedir closes it).
        let fd = unsafe {
            libc::openat(
                self.0.as_raw_fd(),
                c".".as_ptr(),
                libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC,
            )
        };
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: `fd` is an open directory descriptor.
        let stream = unsafe { libc::fdopendir(fd) };
        if stream.is_null() {
            let err = std::io::Error::last_os_error();
            // SAFETY: fdopendir failed, so `fd` is still ours to close.
            unsafe { libc::close(fd) };
            return Err(err);
        }
        let mut entries = Vec::new();
        let result = loop {
            // SAFETY: errno is thread-local; cleared to tell the end from an error.
            unsafe { *libc::__errno_location() = 0 };
            // SAFETY: `stream` is a valid directory stream until closedir below.
            let entry = unsafe { libc::readdir64(stream) };
            if entry.is_null() {
                let err = std::io::Error::last_os_error();
                break match err.raw_os_error() {
                    Some(0) | None => Ok(()),
                    Some(_) => Err(err),
                };
            }
            // SAFETY: readdir returned an entry whose name is NUL-terminated.
            let (name, d_type) = unsafe {
                (
                    std::ffi::CStr::from_ptr((*entry).d_name.as_ptr()),
                    (*entry).d_type,
                )
            };
            let name = OsStr::from_bytes(name.to_bytes());
            if name == "." || name == ".." {
                continue;
            }
            let kind = match d_type {
                libc::DT_DIR => Kind::Dir,
                libc::DT_REG => Kind::File,
                libc::DT_UNKNOWN => match self.lstat(name).map(|st| st.st_mode & libc::S_IFMT) {
                    Some(libc::S_IFDIR) => Kind::Dir,
                    Some(libc::S_IFREG) => Kind::File,
                    _ => Kind::Other,
                },
                _ => Kind::Other,
            };
            entries.push((name.to_owned(), kind));
        };
        // SAFETY: closes the stream (and its descriptor) once.
        unsafe { libc::closedir(stream) };
        result.map(|()| entries)
    }
}

/// Where a directory's entries are `lstat`ed from: its own handle, or, for a directory
/// whose reused listing holds no subdirectory (nothing will be opened relative to it),
/// its parent's handle and its name, which saves an open and a close per leaf directory.
/// (A path below the parent follows a symlink swapped in for the directory meanwhile;
/// that can only misreport a fingerprint: contents are read through
/// [`crate::beneath`], which never follows one.)
enum Base {
    Own(Arc<DirFd>),
    Parent(Arc<DirFd>, OsString),
}

impl Base {
    fn lstat(&self, name: &OsStr) -> Option<libc::stat> {
        match self {
            Base::Own(fd) => fd.lstat(name),
            Base::Parent(fd, dir) => fd.lstat_in(&[dir, name]),
        }
    }
}

/// A directory waiting to be walked.
struct Task {
    /// Its path relative to the root.
    rel: String,
    /// Its parent's handle and its name there (`None` for the root).
    at: Option<(Arc<DirFd>, OsString)>,
    /// Its stamp, from the parent's `lstat`.
    stamp: listing::Stamp,
    /// The nearest level with ignore files above it.
    level: Option<Arc<Level>>,
    /// The signature of the ignore rules that apply above it.
    rules: u64,
}

/// What every walking thread shares.
struct Walker<'a> {
    root: &'a Path,
    old: &'a listing::Cache,
    /// Whether the old fingerprints stand for the stored tree.
    trusted: bool,
    now: i64,
    /// Git's global excludes, read only when some entry has to be matched.
    global: OnceLock<ignore::gitignore::Gitignore>,
    /// Directories taken from `old` without a `stat` ([`Options::quiet`]).
    quiet: Option<&'a HashSet<String>>,
    /// Watches every directory walked.
    watch: Option<&'a watch::Watch>,
    /// The root's handle, for directories below a quiet one (which has no handle).
    root_fd: Option<Arc<DirFd>>,
    /// The folders that are not the project's.
    not_project: crate::skip_dirs::NotProject,
}

impl Walker<'_> {
    fn global(&self) -> &ignore::gitignore::Gitignore {
        self.global
            .get_or_init(|| ignore::gitignore::Gitignore::global().0)
    }
}

/// What one walking thread found.
#[derive(Default)]
struct Part {
    seen: Vec<(String, Option<Fingerprint>)>,
    quiet_dirs: usize,
    unreadable: usize,
    dirty: bool,
    dirs: Vec<(String, listing::Listing)>,
    /// Whether the thread counts as working in the queue's count.
    holds_work: bool,
}

/// The signature of the global excludes: the files git reads them from (a change to
/// them re-matches every directory).
fn global_rules() -> u64 {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let config = std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| home.as_ref().map(|h| h.join(".config")));
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    let candidates = [
        config.as_ref().map(|c| c.join("git/ignore")),
        config.as_ref().map(|c| c.join("git/config")),
        home.as_ref().map(|h| h.join(".gitconfig")),
    ];
    for path in candidates.into_iter().flatten() {
        path.hash(&mut hasher);
        std::fs::symlink_metadata(&path)
            .ok()
            .map(|m| fingerprint(&m))
            .hash(&mut hasher);
    }
    hasher.finish()
}

/// The walk proper: directories handed out to a few threads from a shared queue, each
/// directory listed once (or taken from `old`), every kept entry `lstat`ed relative to
/// its directory.
fn walk_with(
    root: &Path,
    root_meta: &std::fs::Metadata,
    mut walker: Walker,
    new: &mut listing::Cache,
) -> Walk {
    use std::sync::{Condvar, Mutex};
    if walker.quiet.is_some() {
        walker.root_fd = DirFd::open(root).map(Arc::new);
    }
    let walker = walker;
    let first = Task {
        rel: String::new(),
        at: None,
        stamp: listing::Stamp::of(root_meta),
        level: None,
        // A config's list of what is not the project changes what every directory keeps.
        rules: {
            let mut hasher = std::collections::hash_map::DefaultHasher::new();
            (global_rules(), &walker.not_project).hash(&mut hasher);
            hasher.finish()
        },
    };
    // (tasks, how many threads are working on one)
    let queue: Mutex<(Vec<Task>, usize)> = Mutex::new((vec![first], 0));
    let wake = Condvar::new();
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, 4);
    // Each thread walks depth first from its own stack and hands half of it to the shared
    // queue only while another thread waits for work (few lock and wake-up calls).
    let waiting = std::sync::atomic::AtomicUsize::new(0);
    let work = || {
        use std::sync::atomic::Ordering::Relaxed;
        let mut part = Part::default();
        let mut local: Vec<Task> = Vec::new();
        loop {
            let task = match local.pop() {
                Some(task) => task,
                None => {
                    let Ok(mut q) = queue.lock() else { break };
                    // This thread's own stack is done.
                    if q.1 > 0 && part.holds_work {
                        q.1 -= 1;
                    }
                    part.holds_work = false;
                    let task = loop {
                        if let Some(task) = q.0.pop() {
                            q.1 += 1;
                            part.holds_work = true;
                            break Some(task);
                        }
                        if q.1 == 0 {
                            break None;
                        }
                        waiting.fetch_add(1, Relaxed);
                        let woken = wake.wait(q);
                        waiting.fetch_sub(1, Relaxed);
                        q = match woken {
                            Ok(q) => q,
                            Err(_) => return part,
                        };
                    };
                    drop(q);
                    let Some(task) = task else {
                        wake.notify_all();
                        break;
                    };
                    task
                }
            };
            local.extend(walker.walk_dir(task, &mut part));
            if local.len() > 1
                && waiting.load(Relaxed) > 0
                && let Ok(mut q) = queue.lock()
            {
                let half = local.len() / 2;
                q.0.extend(local.drain(..half));
                drop(q);
                wake.notify_all();
            }
        }
        part
    };
    let parts: Vec<Part> = if threads <= 1 {
        vec![work()]
    } else {
        std::thread::scope(|scope| {
            let handles: Vec<_> = (0..threads).map(|_| scope.spawn(work)).collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join().unwrap_or_else(|_| {
                        // A thread that panicked leaves its directories unwalked: say so.
                        Part {
                            unreadable: 1,
                            dirty: true,
                            ..Part::default()
                        }
                    })
                })
                .collect()
        })
    };
    let mut out = Walk::default();
    for part in parts {
        out.seen.extend(part.seen);
        out.quiet_dirs += part.quiet_dirs;
        out.unreadable += part.unreadable;
        out.dirty |= part.dirty;
        new.dirs.extend(part.dirs);
    }
    out
}

impl Walker<'_> {
    /// Walks one directory: its kept files' fingerprints go into `part` (all of them, or
    /// with a trusted cache only those that differ), its kept subdirectories are returned.
    fn walk_dir(&self, task: Task, part: &mut Part) -> Vec<Task> {
        let Task {
            rel,
            at,
            stamp,
            level: parent_level,
            rules: parent_rules,
        } = task;
        let mut children = Vec::new();
        let old = self.old.dirs.get(&rel);
        if let Some(o) = old
            && self.quiet.is_some_and(|q| q.contains(&rel))
            && o.stamp == stamp
            && o.parent_rules == parent_rules
            && o.listed_ns != 0
            && let Some(children) = self.walk_quiet(&rel, o, parent_level.clone(), part)
        {
            return children;
        }
        if let Some(watch) = self.watch {
            watch.add(self.root, &rel);
        }
        let reused = old.filter(|o| o.stamp == stamp && listing::settled(&o.stamp, o.listed_ns));
        let leaf = reused.is_some_and(|o| o.names.iter().all(|(_, kind)| *kind != Kind::Dir));
        let base = match at {
            Some((parent, name)) if leaf => Some(Base::Parent(parent, name)),
            Some((parent, name)) => parent.child(&name).map(|fd| Base::Own(Arc::new(fd))),
            None => DirFd::open(self.root).map(|fd| Base::Own(Arc::new(fd))),
        };
        let Some(fd) = base else {
            // Not walked: the old listing's files count as gone (the caller sees the
            // directory missing from the new listings).
            part.unreadable += 1;
            return children;
        };
        let (names, listed_ns) = match (reused, &fd) {
            (Some(o), _) => (o.names.clone(), o.listed_ns),
            (None, Base::Own(own)) => match own.list() {
                Ok(names) => {
                    part.dirty = true;
                    (Arc::new(names), self.now)
                }
                Err(_) => {
                    part.unreadable += 1;
                    return children;
                }
            },
            // Only a reused listing walks from its parent's handle.
            (None, Base::Parent(..)) => {
                part.unreadable += 1;
                return children;
            }
        };
        let has = |name: &str| names.iter().any(|(n, _)| n == name);
        let (has_git, has_ignore, has_gitignore) = (has(".git"), has(".ignore"), has(".gitignore"));
        // The rules here: the parent's, and this directory's ignore files as they are now.
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        parent_rules.hash(&mut hasher);
        has_git.hash(&mut hasher);
        let stamp_of = |name: &str| fd.lstat(OsStr::new(name)).map(|st| fingerprint_of(&st));
        let ignore_fp = has_ignore.then(|| stamp_of(".ignore")).flatten();
        let gitignore_fp = has_gitignore.then(|| stamp_of(".gitignore")).flatten();
        let exclude_fp = has_git
            .then(|| stamp_of(".git/info/exclude"))
            .flatten()
            .filter(|fp| fp.mode & libc::S_IFMT == libc::S_IFREG);
        (ignore_fp, gitignore_fp, exclude_fp).hash(&mut hasher);
        // A folder that is not the project's (a virtual environment, a cache: it holds a
        // marker) keeps none of its entries; the root is always the project's.
        let not_project = !rel.is_empty() && self.not_project.by_content(has).is_some();
        not_project.hash(&mut hasher);
        let rules = hasher.finish();
        let dir = if rel.is_empty() {
            self.root.to_path_buf()
        } else {
            self.root.join(&rel)
        };
        let level = if has_git || ignore_fp.is_some() || gitignore_fp.is_some() {
            Some(Arc::new(Level {
                parent: parent_level,
                dir,
                has_ignore: ignore_fp.is_some(),
                has_gitignore: gitignore_fp.is_some(),
                has_exclude: exclude_fp.is_some(),
                has_git,
                matchers: OnceLock::new(),
            }))
        } else {
            parent_level
        };
        let kept = match reused.filter(|o| o.rules == rules) {
            Some(o) => o.kept.clone(),
            None => {
                part.dirty = true;
                let base = if rel.is_empty() {
                    self.root.to_path_buf()
                } else {
                    self.root.join(&rel)
                };
                Arc::new(
                    names
                        .iter()
                        .map(|(name, kind)| {
                            let is_dir = *kind == Kind::Dir;
                            // tinytool's own staged and set-aside files are never a
                            // change of anybody's (a write beside is under way).
                            let left_out = not_project
                                || (is_dir && self.not_project.by_name(name, has).is_some())
                                || (!is_dir && crate::atomic::is_work_file(name));
                            name.to_str().is_some()
                                && !left_out
                                && !ignored(
                                    level.as_deref(),
                                    self.global(),
                                    &base.join(name),
                                    is_dir,
                                )
                        })
                        .collect::<Vec<bool>>(),
                )
            }
        };
        // The old fingerprints by entry: aligned when the listing was reused, else by name.
        let old_by_name: Option<HashMap<&OsStr, Fingerprint>> = match (old, reused) {
            (Some(o), None) => Some(
                o.files()
                    .filter_map(|(name, fp)| fp.map(|fp| (name.as_os_str(), fp)))
                    .collect(),
            ),
            _ => None,
        };
        let old_fp = |i: usize, name: &OsStr| match (reused, &old_by_name) {
            (Some(o), _) => o.fps.get(i).copied().flatten(),
            (None, Some(map)) => map.get(name).copied(),
            (None, None) => None,
        };
        let mut fps = vec![None; names.len()];
        let mut stale = false;
        for (i, (name, kind)) in names.iter().enumerate() {
            let Some(name_str) = name.to_str() else {
                part.unreadable += 1;
                continue;
            };
            if !kept.get(i).copied().unwrap_or(false) {
                continue;
            }
            let child = || join(&rel, name_str);
            let before = old_fp(i, name);
            let Some(st) = fd.lstat(name) else {
                part.unreadable += 1;
                if before.is_some() {
                    part.dirty = true;
                    if self.trusted {
                        part.seen.push((child(), None));
                    }
                }
                continue;
            };
            let fp = fingerprint_of(&st);
            if fp.mode & libc::S_IFMT == libc::S_IFDIR {
                if *kind != Kind::Dir {
                    // Listed as something else: the listing is stale; trust the stat now
                    // and list again next time.
                    part.dirty = true;
                    stale = true;
                    if self.trusted && before.is_some() {
                        part.seen.push((child(), None));
                    }
                }
                let stamp = listing::Stamp {
                    ino: fp.ino,
                    mtime_ns: fp.mtime_ns,
                    ctime_ns: fp.ctime_ns,
                };
                let at = match &fd {
                    Base::Own(own) => (own.clone(), name.clone()),
                    // A stale leaf listing: the new directory is reached through its
                    // parent's handle.
                    Base::Parent(parent, dir) => {
                        let mut path = dir.clone();
                        path.push("/");
                        path.push(name);
                        (parent.clone(), path)
                    }
                };
                children.push(Task {
                    rel: child(),
                    at: Some(at),
                    stamp,
                    level: level.clone(),
                    rules,
                });
                continue;
            }
            if *kind == Kind::Dir {
                stale = true;
                part.dirty = true;
            }
            fps[i] = Some(fp);
            if before != Some(fp) {
                part.dirty = true;
            }
            if !self.trusted || before != Some(fp) {
                part.seen.push((child(), Some(fp)));
            }
        }
        // Files of the old listing that are no longer kept files here are gone (a reused
        // listing with the same rules keeps the same entries: only stat failures, above).
        if self.trusted
            && let Some(o) = old
            && !(reused.is_some() && Arc::ptr_eq(&o.kept, &kept))
        {
            let kept_files: HashSet<&OsStr> = names
                .iter()
                .zip(fps.iter())
                .filter(|(_, fp)| fp.is_some())
                .map(|((name, _), _)| name.as_os_str())
                .collect();
            for (name, fp) in o.files() {
                if fp.is_some()
                    && !kept_files.contains(name.as_os_str())
                    && let Some(name) = name.to_str()
                {
                    part.dirty = true;
                    part.seen.push((join(&rel, name), None));
                }
            }
        }
        part.dirs.push((
            rel,
            listing::Listing {
                stamp,
                // A listing found stale is listed again next time.
                listed_ns: if stale { 0 } else { listed_ns },
                parent_rules,
                rules,
                names,
                kept,
                fps: Arc::new(fps),
            },
        ));
        children
    }

    /// A quiet directory: its old listing, kept flags and fingerprints stand as they are
    /// (nothing happened in it). `None` when a subdirectory's old listing is missing
    /// (the directory is then walked for real).
    fn walk_quiet(
        &self,
        rel: &str,
        old: &listing::Listing,
        parent_level: Option<Arc<Level>>,
        part: &mut Part,
    ) -> Option<Vec<Task>> {
        let root_fd = self.root_fd.as_ref()?;
        let has = |name: &str| old.names.iter().any(|(n, _)| n == name);
        let (has_git, has_ignore, has_gitignore) = (has(".git"), has(".ignore"), has(".gitignore"));
        let level = if has_git || has_ignore || has_gitignore {
            Some(Arc::new(Level {
                parent: parent_level,
                dir: self.root.join(rel),
                has_ignore,
                has_gitignore,
                has_exclude: has_git,
                has_git,
                matchers: OnceLock::new(),
            }))
        } else {
            parent_level
        };
        let mut children = Vec::new();
        for (i, (name, kind)) in old.names.iter().enumerate() {
            if *kind != Kind::Dir || !old.kept.get(i).copied().unwrap_or(false) {
                continue;
            }
            let child = join(rel, name.to_str()?);
            let old_stamp = self.old.dirs.get(&child)?.stamp;
            // A quiet directory says nothing of what happened inside its subdirectories: a
            // subdirectory that is not quiet itself (not watched, or changed) gets its
            // stamp from a fresh `lstat`, so that its old listing is reused only while it
            // still stands (a file restored into `a/b` below a quiet `a` changes `a/b`).
            let stamp = if self.quiet.is_some_and(|q| q.contains(&child)) {
                old_stamp
            } else {
                let fp = fingerprint_of(&root_fd.lstat(OsStr::new(&child))?);
                if fp.mode & libc::S_IFMT != libc::S_IFDIR {
                    return None;
                }
                listing::Stamp {
                    ino: fp.ino,
                    mtime_ns: fp.mtime_ns,
                    ctime_ns: fp.ctime_ns,
                }
            };
            children.push(Task {
                at: Some((root_fd.clone(), OsString::from(&child))),
                rel: child,
                stamp,
                level: level.clone(),
                rules: old.rules,
            });
        }
        if !self.trusted {
            for (name, fp) in old.files() {
                if let Some(name) = name.to_str() {
                    part.seen.push((join(rel, name), fp));
                }
            }
        }
        part.dirs.push((rel.to_owned(), old.clone()));
        part.quiet_dirs += 1;
        Some(children)
    }
}

/// The paths whose fingerprints differ between `before` and `after`, in path order.
#[cfg(test)]
pub fn diff(
    before: &BTreeMap<String, Fingerprint>,
    after: &BTreeMap<String, Fingerprint>,
) -> Vec<(String, Change)> {
    diff_by(before, after, |fp| fp)
}

/// The paths whose fingerprints differ between `before` and `now`, each with its
/// fingerprint now (`None`: gone), in path order (see [`diff_by`]).
pub fn differing<T>(
    before: &BTreeMap<String, T>,
    now: &BTreeMap<String, Fingerprint>,
    fingerprint: impl Fn(&T) -> &Fingerprint,
) -> Vec<(String, Option<Fingerprint>)> {
    diff_by(before, now, fingerprint)
        .into_iter()
        .map(|(path, _)| {
            let fp = now.get(&path).copied();
            (path, fp)
        })
        .collect()
}

/// The paths whose fingerprints differ between `before` and `after` (any map whose values
/// carry a fingerprint), in path order: one merge of the two sorted maps (no lookups, no
/// copy of `before`).
fn diff_by<T>(
    before: &BTreeMap<String, T>,
    after: &BTreeMap<String, Fingerprint>,
    fingerprint: impl Fn(&T) -> &Fingerprint,
) -> Vec<(String, Change)> {
    let mut changes = Vec::new();
    let mut old = before.iter().peekable();
    let mut new = after.iter().peekable();
    loop {
        match (old.peek(), new.peek()) {
            (None, None) => break,
            (Some((path, _)), None) => {
                changes.push(((*path).clone(), Change::Removed));
                old.next();
            }
            (None, Some((path, _))) => {
                changes.push(((*path).clone(), Change::Added));
                new.next();
            }
            (Some((a, fa)), Some((b, fb))) => match a.cmp(b) {
                std::cmp::Ordering::Less => {
                    changes.push(((*a).clone(), Change::Removed));
                    old.next();
                }
                std::cmp::Ordering::Greater => {
                    changes.push(((*b).clone(), Change::Added));
                    new.next();
                }
                std::cmp::Ordering::Equal => {
                    if fingerprint(fa) != *fb {
                        changes.push(((*a).clone(), Change::Restamped));
                    }
                    old.next();
                    new.next();
                }
            },
        }
    }
    changes
}

pub mod listing;
pub mod unkept;
pub mod watch;

#[cfg(test)]
mod tests {
    use super::*;

    /// Marks every listing of the saved cache as taken long after its directory's last
    /// change, so the next walk reuses it (a test cannot wait out [`listing::RACY_NS`]),
    /// and stands the fingerprints for stored tree `tree`.
    fn settle(root: &Path, mut cache: listing::Cache, tree: u64) {
        for l in cache.dirs.values_mut() {
            l.listed_ns = listing::now_ns() + 10 * listing::RACY_NS;
        }
        cache.tree = tree;
        listing::save(root, &cache);
    }

    #[test]
    fn walk_skips_ignored_and_skip_dirs_and_diff_sees_changes() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::write(root.join(".gitignore"), "build/\n*.log\n").unwrap();
        for dir in [
            "src",
            "build",
            "node_modules/x",
            "target",
            ".git",
            ".tinytool",
            "env/lib",
            "tools/target",
        ] {
            std::fs::create_dir_all(root.join(dir)).unwrap();
        }
        for file in [
            "src/a.rs",
            "build/o",
            "node_modules/x/i.js",
            "target/big",
            ".git/HEAD",
            "Cargo.toml",
            "env/pyvenv.cfg",
            "env/lib/site.py",
            // Not beside a Cargo.toml: `target` is a name like any other there.
            "tools/target/kept.txt",
            // A write of another call under way: its staged file is nobody's change.
            "src/.a.rs.4242-0.tinytool.tmp",
        ] {
            std::fs::write(root.join(file), "x").unwrap();
        }
        std::fs::write(root.join("run.log"), "log").unwrap();
        std::fs::write(root.join(".tinytool/state.db"), "db").unwrap();
        std::fs::write(root.join("b.txt"), "b").unwrap();
        let first = files(root).unwrap();
        let paths: Vec<&str> = first.keys().map(String::as_str).collect();
        assert_eq!(
            paths,
            [
                ".gitignore",
                "Cargo.toml",
                "b.txt",
                "src/a.rs",
                "tools/target/kept.txt"
            ]
        );
        assert!(diff(&first, &files(root).unwrap()).is_empty());

        std::fs::remove_file(root.join("b.txt")).unwrap();
        std::fs::write(root.join("c.txt"), "c").unwrap();
        std::fs::write(root.join("src/a.rs"), "longer").unwrap();
        let second = files(root).unwrap();
        assert_eq!(
            diff(&first, &second),
            [
                ("b.txt".to_owned(), Change::Removed),
                ("c.txt".to_owned(), Change::Added),
                ("src/a.rs".to_owned(), Change::Restamped),
            ]
        );
    }

    #[test]
    fn a_settled_listing_is_reused_and_a_restamped_directory_is_listed_again() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::write(root.join("a"), "x").unwrap();
        // The cache's folder first: making it restamps the root.
        listing::save(root, &listing::Cache::default());
        let (_, cache) = walk(root, Options::default()).unwrap();
        // The cached listing names a file that is not there: reused, so the phantom's
        // lstat fails and "a" is not seen.
        let mut phantom = cache.clone();
        let l = phantom.dirs.get_mut("").unwrap();
        let mut names = (*l.names).clone();
        let a = names.iter().position(|(n, _)| n == "a").unwrap();
        names[a].0 = "phantom".into();
        l.names = Arc::new(names);
        settle(root, phantom.clone(), 0);
        let (out, _) = walk(root, Options::default()).unwrap();
        assert!(out.seen.is_empty());
        assert_eq!(out.unreadable, 1);
        // The same listing taken too soon after the change, or for another stamp: listed
        // again.
        for (listed_ns, ino) in [(0, None), (i64::MAX, Some(1))] {
            let mut racy = phantom.clone();
            let l = racy.dirs.get_mut("").unwrap();
            l.listed_ns = listed_ns;
            if let Some(ino) = ino {
                l.stamp.ino += ino;
            }
            listing::save(root, &racy);
            let (out, _) = walk(root, Options::default()).unwrap();
            assert_eq!(out.seen.keys().collect::<Vec<_>>(), ["a"]);
        }
        // The cache file round-trips, and a cut one is refused.
        let bytes = listing::encode(&cache);
        assert_eq!(listing::decode(&bytes).unwrap(), cache);
        assert!(listing::decode(&bytes[..bytes.len() - 1]).is_none());
    }

    #[test]
    fn a_trusted_walk_reports_exactly_what_a_full_comparison_finds() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let write = |rel: &str, text: &str| {
            let path = root.join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        };
        for rel in [
            "a",
            "b",
            "keep/x",
            "keep/y",
            "gone/p",
            "gone/deep/q",
            "sub/z.log",
        ] {
            write(rel, rel);
        }
        #[allow(clippy::type_complexity)]
        let rounds: Vec<Box<dyn Fn()>> = vec![
            // Nothing changed.
            Box::new(|| {}),
            // A file rewritten in place (its directory's listing is reused).
            Box::new(|| write("keep/x", "rewritten, longer")),
            // Added, removed, a whole directory removed, another added.
            Box::new(|| {
                std::fs::remove_file(root.join("b")).unwrap();
                write("c", "c");
                std::fs::remove_dir_all(root.join("gone")).unwrap();
                write("new/deep/r", "r");
            }),
            // An ignore file appears: files and a directory become ignored.
            Box::new(|| write(".gitignore", "*.log\nnew/\n")),
            // ...and changes again: the directory comes back.
            Box::new(|| write(".gitignore", "*.log\n")),
            // A file replaced by a directory of the same name.
            Box::new(|| {
                std::fs::remove_file(root.join("a")).unwrap();
                write("a/inner", "i");
            }),
        ];
        let mut stored = files(root).unwrap();
        let (_, cache) = walk(root, Options::default()).unwrap();
        settle(root, cache, 1);
        for (round, change) in rounds.iter().enumerate() {
            change();
            let now = files(root).unwrap();
            let expected = differing(&stored, &now, |fp| fp);
            let tree = round as u64 + 1;
            let (out, cache) = walk(
                root,
                Options {
                    tree: Some(tree),
                    ..Options::default()
                },
            )
            .unwrap();
            assert!(out.complete, "round {round}");
            let got: Vec<(String, Option<Fingerprint>)> = out.seen.into_iter().collect();
            assert_eq!(got, expected, "round {round}");
            // Another generation than the cache's: not complete, every file listed.
            let (other, _) = walk(
                root,
                Options {
                    tree: Some(tree + 100),
                    ..Options::default()
                },
            )
            .unwrap();
            assert!(!other.complete);
            assert_eq!(other.files(), now);
            stored = now;
            settle(root, cache, tree + 1);
        }
    }

    #[test]
    fn an_after_walk_with_quiet_directories_finds_what_a_full_walk_finds() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let write = |rel: &str, text: &str| {
            let path = root.join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        };
        for a in 0..4 {
            for b in 0..3 {
                write(&format!("d{a}/e{b}/f"), "x");
                write(&format!("d{a}/g"), "x");
            }
        }
        #[allow(clippy::type_complexity)]
        let calls: Vec<Box<dyn Fn()>> = vec![
            Box::new(|| {}),
            Box::new(|| write("d1/e2/f", "rewritten")),
            Box::new(|| {
                std::fs::remove_dir_all(root.join("d2")).unwrap();
                write("d3/e0/new/deeper/h", "h");
            }),
            Box::new(|| {
                std::fs::rename(root.join("d0/e1"), root.join("d1/moved")).unwrap();
                let mut perms = std::fs::metadata(root.join("d3/g")).unwrap().permissions();
                std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o600);
                std::fs::set_permissions(root.join("d3/g"), perms).unwrap();
            }),
            Box::new(|| write(".gitignore", "g\n")),
        ];
        listing::save(root, &listing::Cache::default());
        for (round, call) in calls.iter().enumerate() {
            let watch = watch::Watch::new().unwrap();
            let (_, mut before) = walk(
                root,
                Options {
                    watch: Some(&watch),
                    ..Options::default()
                },
            )
            .unwrap();
            before.tree = 9;
            let stored = files(root).unwrap();
            call();
            let quiet = watch.quiet().unwrap();
            let after = after_walk(root, &before, &quiet);
            let now = files(root).unwrap();
            let expected = differing(&stored, &now, |fp| fp);
            assert!(after.complete, "round {round}");
            // Most directories were left alone: those were not looked at again (but a
            // new ignore file at the root changes the rules of every directory).
            let last = round == calls.len() - 1;
            assert_eq!(after.quiet_dirs >= 8, !last, "round {round}");
            let got: Vec<_> = after.seen.into_iter().collect();
            assert_eq!(got, expected, "round {round}");
        }
    }

    /// The walk after a call: from the listings `before` (taken for stored-tree generation
    /// 9), taking the `quiet` directories as they were.
    fn after_walk(root: &Path, before: &listing::Cache, quiet: &HashSet<String>) -> Walk {
        let options = Options {
            tree: Some(9),
            old: Some(before),
            quiet: Some(quiet),
            ..Options::default()
        };
        walk(root, options).unwrap().0
    }

    /// The directories of `cache` whose own entries a watch would have seen no event for
    /// since: the stamp unchanged and every file directly in it unchanged.
    fn truly_quiet(
        root: &Path,
        cache: &listing::Cache,
        stored: &BTreeMap<String, Fingerprint>,
        now: &BTreeMap<String, Fingerprint>,
    ) -> HashSet<String> {
        let parent = |path: &str| path.rsplit_once('/').map_or("", |(p, _)| p).to_string();
        let touched: HashSet<String> = differing(stored, now, |fp| fp)
            .into_iter()
            .map(|(path, _)| parent(&path))
            .collect();
        cache
            .dirs
            .iter()
            .filter(|(rel, old)| {
                let path = if rel.is_empty() {
                    root.to_path_buf()
                } else {
                    root.join(rel)
                };
                let same = std::fs::symlink_metadata(&path).is_ok_and(|m| {
                    use std::os::unix::fs::MetadataExt;
                    let ns = |s: i64, n: i64| s * 1_000_000_000 + n;
                    m.is_dir()
                        && m.ino() == old.stamp.ino
                        && ns(m.mtime(), m.mtime_nsec()) == old.stamp.mtime_ns
                        && ns(m.ctime(), m.ctime_nsec()) == old.stamp.ctime_ns
                });
                same && !touched.contains(*rel)
            })
            .map(|(rel, _)| rel.clone())
            .collect()
    }

    #[test]
    fn a_quiet_directory_does_not_vouch_for_its_subdirectories() {
        // Settled listings (as after a pause) of nested directories, and an after-walk
        // that takes the unchanged parents as quiet: what changed below them is found in
        // every shape (created, deleted, recreated, deeper, moved within).
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let write = |rel: &str| {
            let path = root.join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, rel).unwrap();
        };
        #[allow(clippy::type_complexity)]
        let calls: Vec<(&str, Box<dyn Fn()>)> = vec![
            (
                "a file restored below a quiet parent",
                Box::new(|| write("a/b/g")),
            ),
            (
                "a file deleted below a quiet parent",
                Box::new(|| {
                    std::fs::remove_file(root.join("a/b/f")).unwrap();
                }),
            ),
            ("two levels down", Box::new(|| write("a/b/c/deep"))),
            (
                "a directory emptied and recreated",
                Box::new(|| {
                    std::fs::remove_dir_all(root.join("a/b/c")).unwrap();
                    write("a/b/c/again");
                }),
            ),
            (
                "a rename inside a subdirectory",
                Box::new(|| {
                    std::fs::rename(root.join("x/y/f"), root.join("x/y/renamed")).unwrap();
                }),
            ),
        ];
        for (what, call) in &calls {
            let _ = std::fs::remove_dir_all(root.join("a"));
            let _ = std::fs::remove_dir_all(root.join("x"));
            for rel in ["a/b/f", "a/b/c/h", "a/top", "x/y/f", "x/y/z/k"] {
                write(rel);
            }
            listing::save(root, &listing::Cache::default());
            let (_, mut before) = walk(root, Options::default()).unwrap();
            before.tree = 9;
            // As if listed long after their last change: every listing is settled.
            for old in before.dirs.values_mut() {
                old.listed_ns = old.stamp.mtime_ns.max(old.stamp.ctime_ns) + 10 * listing::RACY_NS;
            }
            let stored = files(root).unwrap();
            call();
            let now = files(root).unwrap();
            let quiet = truly_quiet(root, &before, &stored, &now);
            assert!(quiet.contains(""), "{what}: the root is quiet");
            let after = after_walk(root, &before, &quiet);
            let expected = differing(&stored, &now, |fp| fp);
            assert!(!expected.is_empty(), "{what}");
            let got: Vec<_> = after.seen.into_iter().collect();
            assert_eq!(got, expected, "{what}");
        }
    }

    #[test]
    fn a_wide_deep_tree_is_walked_whole_by_the_threads() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for a in 0..20 {
            for b in 0..10 {
                let sub = root.join(format!("a{a}/b{b}/c"));
                std::fs::create_dir_all(&sub).unwrap();
                for f in 0..3 {
                    std::fs::write(sub.join(format!("f{f}")), "x").unwrap();
                }
            }
        }
        listing::save(root, &listing::Cache::default());
        let (first, cache) = walk(root, Options::default()).unwrap();
        assert_eq!(first.seen.len(), 600);
        assert_eq!(first.unreadable, 0);
        assert!(first.seen.contains_key("a19/b9/c/f2"));
        settle(root, cache, 5);
        let (again, _) = walk(
            root,
            Options {
                tree: Some(5),
                ..Options::default()
            },
        )
        .unwrap();
        assert!(again.complete && again.seen.is_empty() && !again.dirty);
    }
}
