//! The stat walk behind checkpoints: one pass of `lstat` calls over the project tree.
//!
//! Which files are walked: everything below the root except what `.gitignore`, `.ignore`
//! and git's exclude files leave out (also outside a git repository), the skip
//! directories of [`crate::search::SKIP_DIRS`] and `target` (build output). Symlinks are
//! recorded as themselves (their fingerprint), never followed. Paths are relative to the
//! root, `/`-separated, and only valid UTF-8 paths are walked (others are counted).
//!
//! A [`Fingerprint`] is (size, mtime, inode, ctime, mode, kind). Two walks are compared
//! with [`diff`]: a path whose fingerprint is equal in both is unchanged without reading
//! it; only added, removed and re-stamped paths need their contents read and hashed.
//!
//! The walk is tinytool's own (not `ignore::Walk`) so that it can reuse the previous
//! walk's directory listings ([`listing`]): an unchanged directory costs one `lstat`,
//! not a listing plus a probe for each ignore file name. Ignore files are applied with
//! the `ignore` crate's matchers and precedence (`.ignore`, then `.gitignore` up to the
//! repository root, then `.git/info/exclude`, then git's global excludes file).

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::sync::Arc;

use anyhow::{Context, Result};

/// Directories a checkpoint never enters, besides [`crate::search::SKIP_DIRS`].
const EXTRA_SKIP_DIRS: [&str; 1] = ["target"];

/// What a stat call says about one path; equal fingerprints mean "not changed".
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Fingerprint {
    /// Size in bytes.
    pub size: u64,
    /// Modification time, nanoseconds since the epoch.
    pub mtime_ns: i64,
    /// Inode number (a replacing rename changes it even when size and mtime agree).
    pub ino: u64,
    /// Status change time, nanoseconds since the epoch (a `touch -d` cannot set it back).
    pub ctime_ns: i64,
    /// Permission bits and file type, as `st_mode`.
    pub mode: u32,
}

/// One walk's result: fingerprints by relative path, and what was left out.
#[derive(Debug, Default)]
pub struct Walk {
    /// Regular files and symlinks by `/`-separated path relative to the root.
    pub files: BTreeMap<String, Fingerprint>,
    /// Paths that could not be walked or are not UTF-8 (counted, not recorded).
    pub unreadable: usize,
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

/// True for a directory name no checkpoint walk enters.
fn is_skipped(name: &OsStr) -> bool {
    crate::search::is_skip_dir(name) || EXTRA_SKIP_DIRS.iter().any(|d| name == OsStr::new(d))
}

/// Fingerprint of one `lstat` result.
pub fn fingerprint(meta: &std::fs::Metadata) -> Fingerprint {
    Fingerprint {
        size: meta.size(),
        mtime_ns: meta
            .mtime()
            .saturating_mul(1_000_000_000)
            .saturating_add(meta.mtime_nsec()),
        ino: meta.ino(),
        ctime_ns: meta
            .ctime()
            .saturating_mul(1_000_000_000)
            .saturating_add(meta.ctime_nsec()),
        mode: meta.mode(),
    }
}

/// Walks `root` with stat calls only (see the module doc for what is left out), reusing
/// the directory listings cached by the previous walk where they are still valid (see
/// [`listing`]) and saving the new ones.
pub fn walk(root: &Path) -> Result<Walk> {
    walk_cached(root).map(|(walk, _)| walk)
}

/// [`walk`], also returning the directory listings it used (for [`publish`]).
pub fn walk_cached(root: &Path) -> Result<(Walk, Arc<listing::Cache>)> {
    let meta = std::fs::symlink_metadata(root)
        .with_context(|| format!("cannot walk {}", root.display()))?;
    anyhow::ensure!(meta.is_dir(), "{} is not a directory", root.display());
    let cache_file = crate::project::tinytool_dir(root)
        .join("checkpoints")
        .join(listing::FILE);
    // The running call's before-walk (in this process) is as good as the file and needs
    // no parsing: every listing is checked against the directory's stamp either way.
    let old = match published_any_age(&crate::paths::resolve_symlinks(root)) {
        Some(cache) => cache,
        None => Arc::new(listing::load(&cache_file)),
    };
    let mut new = listing::Cache::default();
    let out = walk_with(root, &meta, &old, &mut new);
    // Every directory reused (the same count, no listing taken): nothing to save.
    let relisted = new.dirs.len() != old.dirs.len()
        || new.dirs.iter().any(|(rel, l)| {
            old.dirs
                .get(rel)
                .is_none_or(|o| !Arc::ptr_eq(&o.entries, &l.entries))
        });
    if relisted {
        listing::save(root, &new);
    }
    Ok((out, Arc::new(new)))
}

/// The directory stamps of the walk that opened the running call's checkpoint, for the
/// sandbox's secret scan ("one walk serves both"): (resolved root, when, listings).
#[allow(clippy::type_complexity)]
static PUBLISHED: std::sync::Mutex<
    Option<(std::path::PathBuf, std::time::Instant, Arc<listing::Cache>)>,
> = std::sync::Mutex::new(None);

/// How long published stamps stand in for `stat` calls: the secret scan of the call
/// follows its checkpoint walk within milliseconds; anything later stats for itself.
const PUBLISHED_FOR: std::time::Duration = std::time::Duration::from_millis(500);

/// Publishes the stamps a checkpoint's before-walk of `root` took, valid until
/// [`forget`] (the end of the call) and at most half a second.
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
    if let Ok(mut slot) = PUBLISHED.lock() {
        *slot = None;
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

/// The ignore files of one directory, as the `ignore` crate applies them.
struct Level {
    parent: Option<Arc<Level>>,
    /// `.ignore`.
    ignore: Option<ignore::gitignore::Gitignore>,
    /// `.gitignore`.
    git: Option<ignore::gitignore::Gitignore>,
    /// `.git/info/exclude` of a repository rooted here.
    exclude: Option<ignore::gitignore::Gitignore>,
    /// Whether the directory holds `.git` (a repository root: the `.gitignore` files
    /// above it do not apply inside it).
    has_git: bool,
}

/// Whether `path` is ignored by the chain ending at `level` or the global excludes, with
/// the `ignore` crate's precedence: `.ignore` files (deepest first), then `.gitignore`
/// files up to the repository root, then `.git/info/exclude`, then the global file; the
/// first that matches (ignore or whitelist) decides.
fn ignored(
    level: &Level,
    global: &ignore::gitignore::Gitignore,
    path: &Path,
    is_dir: bool,
) -> bool {
    use ignore::Match;
    let pick = |m: &Option<ignore::gitignore::Gitignore>| match m {
        Some(g) => match g.matched(path, is_dir) {
            Match::None => None,
            Match::Ignore(_) => Some(true),
            Match::Whitelist(_) => Some(false),
        },
        None => None,
    };
    let (mut m_ignore, mut m_git, mut m_exclude) = (None, None, None);
    let mut saw_git = false;
    let mut cur = Some(level);
    while let Some(l) = cur {
        if m_ignore.is_none() {
            m_ignore = pick(&l.ignore);
        }
        if !saw_git && m_git.is_none() {
            m_git = pick(&l.git);
        }
        if !saw_git && m_exclude.is_none() {
            m_exclude = pick(&l.exclude);
        }
        saw_git = saw_git || l.has_git;
        cur = l.parent.as_deref();
    }
    m_ignore
        .or(m_git)
        .or(m_exclude)
        .or_else(|| match global.matched(path, is_dir) {
            Match::None => None,
            Match::Ignore(_) => Some(true),
            Match::Whitelist(_) => Some(false),
        })
        .unwrap_or(false)
}

/// A matcher for the ignore file at `path`, `None` when it is absent or empty.
fn matcher(dir: &Path, path: &Path) -> Option<ignore::gitignore::Gitignore> {
    let mut builder = ignore::gitignore::GitignoreBuilder::new(dir);
    // An unreadable or partly invalid file: the `ignore` crate keeps the valid globs too.
    let _ = builder.add(path);
    builder.build().ok().filter(|g| !g.is_empty())
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

/// A directory opened for `fstatat` of its entries (one path lookup per entry instead of
/// one per path component); closed when dropped.
struct DirFd(libc::c_int);

impl DirFd {
    fn open(dir: &Path) -> Option<DirFd> {
        use std::os::unix::ffi::OsStrExt;
        let c = std::ffi::CString::new(dir.as_os_str().as_bytes()).ok()?;
        // SAFETY: `c` is a valid NUL-terminated path; the fd is owned by the result.
        let fd = unsafe {
            libc::open(
                c.as_ptr(),
                libc::O_PATH | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC,
            )
        };
        (fd >= 0).then_some(DirFd(fd))
    }

    /// `lstat` of the entry `name`.
    fn lstat(&self, name: &OsStr) -> Option<libc::stat> {
        use std::os::unix::ffi::OsStrExt;
        let c = std::ffi::CString::new(name.as_bytes()).ok()?;
        let mut st = std::mem::MaybeUninit::<libc::stat>::uninit();
        // SAFETY: valid fd and NUL-terminated name; `st` is written on success only.
        let rc = unsafe {
            libc::fstatat(
                self.0,
                c.as_ptr(),
                st.as_mut_ptr(),
                libc::AT_SYMLINK_NOFOLLOW,
            )
        };
        // SAFETY: fstatat returned 0, so it filled `st`.
        (rc == 0).then(|| unsafe { st.assume_init() })
    }
}

impl Drop for DirFd {
    fn drop(&mut self) {
        // SAFETY: the fd is ours and closed once.
        unsafe { libc::close(self.0) };
    }
}

/// A directory waiting to be walked: its path relative to the root, its stamp, and the
/// ignore files of its parent.
type Task = (String, listing::Stamp, Option<Arc<Level>>);

/// What one walking thread found.
#[derive(Default)]
struct Part {
    walk: Walk,
    dirs: Vec<(String, listing::Listing)>,
    /// Whether the thread counts as working in the queue's count.
    holds_work: bool,
}

/// The walk proper: directories handed out to a few threads from a shared queue, each
/// directory listed once (or taken from `old`), every kept entry `lstat`ed relative to
/// its directory.
fn walk_with(
    root: &Path,
    root_meta: &std::fs::Metadata,
    old: &listing::Cache,
    new: &mut listing::Cache,
) -> Walk {
    use std::sync::{Condvar, Mutex};
    let (global, _) = ignore::gitignore::Gitignore::global();
    let now = listing::now_ns();
    // (tasks, how many threads are working on one)
    let queue: Mutex<(Vec<Task>, usize)> = Mutex::new((
        vec![(String::new(), listing::Stamp::of(root_meta), None)],
        0,
    ));
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
            local.extend(walk_dir(root, task, old, now, &global, &mut part));
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
                        let mut part = Part::default();
                        part.walk.unreadable = 1;
                        part
                    })
                })
                .collect()
        })
    };
    let mut out = Walk::default();
    for part in parts {
        out.files.extend(part.walk.files);
        out.unreadable += part.walk.unreadable;
        new.dirs.extend(part.dirs);
    }
    out
}

/// Walks one directory: its kept files go into `part`, its kept subdirectories are
/// returned.
fn walk_dir(
    root: &Path,
    (rel, stamp, parent): Task,
    old: &listing::Cache,
    now: i64,
    global: &ignore::gitignore::Gitignore,
    part: &mut Part,
) -> Vec<Task> {
    let mut children = Vec::new();
    let dir = if rel.is_empty() {
        root.to_path_buf()
    } else {
        root.join(&rel)
    };
    let entries = match old.dirs.get(&rel) {
        Some(cached)
            if cached.stamp == stamp && listing::settled(&cached.stamp, cached.listed_ns) =>
        {
            cached.clone()
        }
        _ => match listing::list(&dir, stamp, now) {
            Ok(listed) => listed,
            Err(_) => {
                part.walk.unreadable += 1;
                return children;
            }
        },
    };
    let Some(fd) = DirFd::open(&dir) else {
        part.walk.unreadable += 1;
        return children;
    };
    let has = |name: &str| entries.entries.iter().any(|(n, _)| n == name);
    let has_git = has(".git");
    let level = Arc::new(Level {
        parent,
        ignore: if has(".ignore") {
            matcher(&dir, &dir.join(".ignore"))
        } else {
            None
        },
        git: if has(".gitignore") {
            matcher(&dir, &dir.join(".gitignore"))
        } else {
            None
        },
        exclude: if has_git {
            let path = dir.join(".git/info/exclude");
            path.is_file().then(|| matcher(&dir, &path)).flatten()
        } else {
            None
        },
        has_git,
    });
    for (name, kind) in entries.entries.iter() {
        let Some(name_str) = name.to_str() else {
            part.walk.unreadable += 1;
            continue;
        };
        let is_dir = *kind == listing::Kind::Dir;
        if is_dir && is_skipped(name) {
            continue;
        }
        if ignored(&level, global, &dir.join(name), is_dir) {
            continue;
        }
        let child = if rel.is_empty() {
            name_str.to_owned()
        } else {
            format!("{rel}/{name_str}")
        };
        let Some(st) = fd.lstat(name) else {
            part.walk.unreadable += 1;
            continue;
        };
        let fp = fingerprint_of(&st);
        if fp.mode & libc::S_IFMT == libc::S_IFDIR {
            let stamp = listing::Stamp {
                ino: fp.ino,
                mtime_ns: fp.mtime_ns,
                ctime_ns: fp.ctime_ns,
            };
            children.push((child, stamp, Some(level.clone())));
        } else {
            part.walk.files.insert(child, fp);
        }
    }
    part.dirs.push((rel, entries));
    children
}

/// The paths whose fingerprints differ between `before` and `after`, in path order.
pub fn diff(
    before: &BTreeMap<String, Fingerprint>,
    after: &BTreeMap<String, Fingerprint>,
) -> Vec<(String, Change)> {
    diff_by(before, after, |fp| fp)
}

/// [`diff`] against any map whose values carry a fingerprint: one merge of the two sorted
/// maps (no lookups, no copy of `before`).
pub fn diff_by<T>(
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

/// The directory listings one walk leaves for the next, so that a directory whose
/// listing cannot have changed is not read again (nor probed for ignore files: its
/// listing says which it holds).
///
/// A listing is reused while the directory's inode, modification time and status change
/// time are the ones recorded (creating, removing or renaming an entry changes both
/// times) and the listing was taken at least [`listing::RACY_NS`] after that modification time (a
/// change within the same clock tick as the listing would otherwise go unseen, as git's
/// "racily clean" entries). The files themselves are `lstat`ed on every walk.
///
/// Stored in `<dir>/.tinytool/checkpoints/dirs.bin`; integers little-endian, paths
/// relative to the project directory (empty for itself):
///
/// ```text
/// cache = "TTDIRS1\n" ndirs:u32 dir{ndirs}
/// dir   = path ino:u64 mtime_ns:i64 ctime_ns:i64 listed_ns:i64 nentries:u32 entry{nentries}
/// entry = kind:u8 (0 file, 1 directory, 2 other) path
/// path  = len:u32 bytes{len}
/// ```
///
/// A cache that does not parse is treated as empty (every directory is listed).
pub mod listing {
    use std::collections::HashMap;
    use std::ffi::{OsStr, OsString};
    use std::os::unix::ffi::OsStrExt;
    use std::path::Path;

    /// The cache file's name under `.tinytool/checkpoints/`.
    pub const FILE: &str = "dirs.bin";

    /// How long after a directory's last change its listing must have been taken to be
    /// trusted (well above any file system's timestamp granularity).
    pub const RACY_NS: i64 = 2_000_000_000;

    const MAGIC: &[u8] = b"TTDIRS1\n";

    /// What a directory's `lstat` says about its entries.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub struct Stamp {
        /// Inode number.
        pub ino: u64,
        /// Modification time, nanoseconds since the epoch.
        pub mtime_ns: i64,
        /// Status change time, nanoseconds since the epoch.
        pub ctime_ns: i64,
    }

    impl Stamp {
        /// The stamp of a directory's metadata.
        pub fn of(meta: &std::fs::Metadata) -> Stamp {
            let fp = super::fingerprint(meta);
            Stamp {
                ino: fp.ino,
                mtime_ns: fp.mtime_ns,
                ctime_ns: fp.ctime_ns,
            }
        }
    }

    /// Kinds of directory entries.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum Kind {
        /// A regular file.
        File,
        /// A directory (not a symlink to one).
        Dir,
        /// Anything else (symlinks, special files, unknown).
        Other,
    }

    /// One directory's listing.
    #[derive(Clone, Debug, PartialEq, Eq)]
    pub struct Listing {
        /// The directory's stamp when listed.
        pub stamp: Stamp,
        /// When it was listed, nanoseconds since the epoch.
        pub listed_ns: i64,
        /// Its entries (names and kinds), in directory order (shared: a reused listing
        /// is not copied).
        pub entries: std::sync::Arc<Vec<(OsString, Kind)>>,
    }

    /// Listings by directory path relative to the root.
    #[derive(Clone, Debug, Default, PartialEq, Eq)]
    pub struct Cache {
        /// The listings.
        pub dirs: HashMap<String, Listing>,
    }

    /// Now, nanoseconds since the epoch.
    pub fn now_ns() -> i64 {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX))
    }

    /// Whether a listing taken at `listed_ns` of a directory stamped `stamp` is trusted.
    pub fn settled(stamp: &Stamp, listed_ns: i64) -> bool {
        stamp.mtime_ns.max(stamp.ctime_ns).saturating_add(RACY_NS) <= listed_ns
    }

    /// Lists `dir` (no `stat` per entry: the kind comes from the listing itself).
    pub fn list(dir: &Path, stamp: Stamp, now: i64) -> std::io::Result<Listing> {
        let mut entries = Vec::new();
        for item in std::fs::read_dir(dir)? {
            let item = item?;
            let kind = match item.file_type() {
                Ok(t) if t.is_dir() => Kind::Dir,
                Ok(t) if t.is_file() => Kind::File,
                _ => Kind::Other,
            };
            entries.push((item.file_name(), kind));
        }
        Ok(Listing {
            stamp,
            listed_ns: now,
            entries: entries.into(),
        })
    }

    fn put(out: &mut Vec<u8>, bytes: &[u8]) {
        out.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
        out.extend_from_slice(bytes);
    }

    /// The cache file's bytes (grammar in the module doc).
    pub fn encode(cache: &Cache) -> Vec<u8> {
        let mut out = Vec::with_capacity(1 << 16);
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&(cache.dirs.len() as u32).to_le_bytes());
        for (rel, l) in &cache.dirs {
            put(&mut out, rel.as_bytes());
            out.extend_from_slice(&l.stamp.ino.to_le_bytes());
            out.extend_from_slice(&l.stamp.mtime_ns.to_le_bytes());
            out.extend_from_slice(&l.stamp.ctime_ns.to_le_bytes());
            out.extend_from_slice(&l.listed_ns.to_le_bytes());
            out.extend_from_slice(&(l.entries.len() as u32).to_le_bytes());
            for (name, kind) in l.entries.iter() {
                out.push(match kind {
                    Kind::File => 0,
                    Kind::Dir => 1,
                    Kind::Other => 2,
                });
                put(&mut out, name.as_bytes());
            }
        }
        out
    }

    /// Reads bytes written by [`encode`]; `None` for anything malformed.
    pub fn decode(bytes: &[u8]) -> Option<Cache> {
        fn take<'a>(rest: &mut &'a [u8], n: usize) -> Option<&'a [u8]> {
            if rest.len() < n {
                return None;
            }
            let (head, tail) = rest.split_at(n);
            *rest = tail;
            Some(head)
        }
        fn u32_(rest: &mut &[u8]) -> Option<usize> {
            Some(u32::from_le_bytes(take(rest, 4)?.try_into().ok()?) as usize)
        }
        fn u64_(rest: &mut &[u8]) -> Option<u64> {
            Some(u64::from_le_bytes(take(rest, 8)?.try_into().ok()?))
        }
        fn bytes_<'a>(rest: &mut &'a [u8]) -> Option<&'a [u8]> {
            let n = u32_(rest)?;
            take(rest, n)
        }
        let mut rest = bytes.strip_prefix(MAGIC)?;
        let ndirs = u32_(&mut rest)?;
        if ndirs > rest.len() / 40 {
            return None;
        }
        let mut dirs = HashMap::with_capacity(ndirs);
        for _ in 0..ndirs {
            let rel = std::str::from_utf8(bytes_(&mut rest)?).ok()?.to_owned();
            let stamp = Stamp {
                ino: u64_(&mut rest)?,
                mtime_ns: u64_(&mut rest)? as i64,
                ctime_ns: u64_(&mut rest)? as i64,
            };
            let listed_ns = u64_(&mut rest)? as i64;
            let n = u32_(&mut rest)?;
            if n > rest.len() / 5 {
                return None;
            }
            let mut entries = Vec::with_capacity(n);
            for _ in 0..n {
                let kind = match take(&mut rest, 1)?[0] {
                    0 => Kind::File,
                    1 => Kind::Dir,
                    2 => Kind::Other,
                    _ => return None,
                };
                let name = bytes_(&mut rest)?;
                entries.push((OsStr::from_bytes(name).to_owned(), kind));
            }
            dirs.insert(
                rel,
                Listing {
                    stamp,
                    listed_ns,
                    entries: entries.into(),
                },
            );
        }
        rest.is_empty().then_some(Cache { dirs })
    }

    /// The cache in `path`, empty when absent or malformed.
    pub fn load(path: &Path) -> Cache {
        std::fs::read(path)
            .ok()
            .and_then(|b| decode(&b))
            .unwrap_or_default()
    }

    /// Saves `cache` as [`FILE`] in the checkpoints folder of the project `root`
    /// atomically (the folder made without following a symlink); a failure only costs
    /// the next walk listings.
    pub fn save(root: &Path, cache: &Cache) {
        let Ok(parent) = crate::project::ensure_own_subdir(root, "checkpoints") else {
            return;
        };
        let path = parent.join(FILE);
        if let Ok(mut file) = tempfile::NamedTempFile::new_in(&parent)
            && std::io::Write::write_all(&mut file, &encode(cache)).is_ok()
        {
            let _ = file.persist(&path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        ] {
            std::fs::create_dir_all(root.join(dir)).unwrap();
        }
        for file in [
            "src/a.rs",
            "build/o",
            "node_modules/x/i.js",
            "target/big",
            ".git/HEAD",
        ] {
            std::fs::write(root.join(file), "x").unwrap();
        }
        std::fs::write(root.join("run.log"), "log").unwrap();
        std::fs::write(root.join(".tinytool/state.db"), "db").unwrap();
        std::fs::write(root.join("b.txt"), "b").unwrap();
        let first = walk(root).unwrap();
        let paths: Vec<&str> = first.files.keys().map(String::as_str).collect();
        assert_eq!(paths, [".gitignore", "b.txt", "src/a.rs"]);
        assert!(diff(&first.files, &walk(root).unwrap().files).is_empty());

        std::fs::remove_file(root.join("b.txt")).unwrap();
        std::fs::write(root.join("c.txt"), "c").unwrap();
        std::fs::write(root.join("src/a.rs"), "longer").unwrap();
        let second = walk(root).unwrap();
        assert_eq!(
            diff(&first.files, &second.files),
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
        let meta = root.symlink_metadata().unwrap();
        let stamp = listing::Stamp::of(&meta);
        // A cached listing naming a file that is not there: reused, so the phantom's
        // lstat fails and "a" is not seen.
        let mut old = listing::Cache::default();
        old.dirs.insert(
            String::new(),
            listing::Listing {
                stamp,
                listed_ns: stamp.mtime_ns.max(stamp.ctime_ns) + listing::RACY_NS,
                entries: vec![("phantom".into(), listing::Kind::File)].into(),
            },
        );
        let mut new = listing::Cache::default();
        let out = walk_with(root, &meta, &old, &mut new);
        assert!(out.files.is_empty());
        assert_eq!(out.unreadable, 1);
        // The same listing taken too soon after the change, or for another stamp: listed
        // again.
        for (listed_ns, ino) in [(stamp.mtime_ns, stamp.ino), (i64::MAX, stamp.ino + 1)] {
            let mut racy = old.clone();
            let l = racy.dirs.get_mut("").unwrap();
            l.listed_ns = listed_ns;
            l.stamp.ino = ino;
            let out = walk_with(root, &meta, &racy, &mut listing::Cache::default());
            assert_eq!(out.files.keys().collect::<Vec<_>>(), ["a"]);
        }
        // The cache file round-trips.
        let bytes = listing::encode(&new);
        assert_eq!(listing::decode(&bytes).unwrap(), new);
        assert!(listing::decode(&bytes[..bytes.len() - 1]).is_none());
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
        let first = walk(root).unwrap();
        assert_eq!(first.files.len(), 600);
        assert_eq!(first.unreadable, 0);
        assert!(first.files.contains_key("a19/b9/c/f2"));
        assert!(diff(&first.files, &walk(root).unwrap().files).is_empty());
    }
}
