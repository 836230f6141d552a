//! Finding a project's secret files: the candidates the sandbox covers with an empty
//! read-only file, and the other names (hard links) the policy refuses reads of.
//!
//! The scan finds the files whose name may make them secret
//! ([`crate::secret_file::worth_judging`]); the sandbox's masking then judges each by the one
//! definition (content too, where the name cannot tell) and leaves unmasked the ones git
//! tracks (their content is in the repository's history already, and a masked tracked
//! file would be committed, stashed and diffed as emptied) and the ones the user unmasked.
//! The scan visits every directory, ignored by git or not (`.env` is usually in
//! `.gitignore`, and so may be a whole folder of local settings), but the ones that hold
//! other people's files or build output, never the project's own secrets: the folders
//! that are not the project's ([`crate::skip_dirs`]: `.git`, `.tinytool`, `node_modules`,
//! `vendor`, caches, Python virtual environments, `target` beside a `Cargo.toml`, …). It
//! stops after a limit of directory
//! entries ([`CAP`] unless the user policy's `sandbox.scan_limit` says otherwise); the
//! sandbox then refuses the command rather than run it with a secret it did not see.
//!
//! The result is cached in `<dir>/.tinytool/sandbox/secrets.bin`, a compact binary file
//! (a JSON cache of a 3,000-directory tree took longer to parse than to check). Grammar,
//! integers little-endian, paths relative to the project directory (empty for itself):
//!
//! ```text
//! cache  = "TTSECRETS4\n" capped:u8 ndirs:u32 dir{ndirs} nfiles:u32 path{nfiles}
//!          nrepos:u32 path{nrepos} naliases:u32 path{naliases}
//! dir    = base:u32 flags:u8 path mtime_ns:i64 [nnames:u32 path{nnames}]
//! flags  = 1 (an anchor) | 2 (racy: its entries' names follow, sorted)
//! path   = len:u32 bytes{len}
//! ```
//!
//! Valid while every listed directory still has the modification time recorded (a file
//! created, removed or renamed in a directory changes its time); otherwise the scan runs
//! again, and the files the cache listed stay in the new list while they exist (an
//! ignore file or a flood of files written by a command must not unmask them). Checking
//! costs one `stat` per directory, not a listing.
//!
//! A time is only proof for a listing taken at least [`RACY_NS`] after it: an entry
//! created within the same clock tick as the listing leaves the time as it was (git's
//! "racily clean" entries). A directory listed sooner after its last change is *racy*:
//! the cache keeps its entries' names, and each check lists it again and compares them.
//! The first check after it settled writes the cache again without them.
//! A cache that does not parse is treated as absent (the scan runs again).
//!
//! Most of a `stat` is the path lookup, one step per component: directories with many
//! listed directories below them are *anchors* (`anchor` 1), opened once per check, and
//! every directory is looked up from its nearest anchor above it (`base`: the index of an
//! earlier anchor entry, or `u32::MAX` for the project itself), two components deep
//! rather than five on a generated 20,000-file tree.

use std::ffi::OsString;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use crate::clock::{RACY_NS, now_ns};

/// The most directory entries a scan looks at, unless `sandbox.scan_limit` says otherwise.
pub const CAP: usize = 50_000;

/// The secret files found.
#[derive(Debug, Clone, Default)]
pub struct Scan {
    /// Every directory listed.
    dirs: Vec<ScannedDir>,
    /// The files whose name may make them secret (absolute): the sandbox's masking
    /// judges them.
    pub files: Vec<PathBuf>,
    /// Whether the scan stopped at its limit.
    pub capped: bool,
    /// The folders below the project that hold a `.git` of their own (nested
    /// repositories, submodules' work trees), absolute: the sandbox protects their git
    /// paths as it does the project's.
    pub repos: Vec<PathBuf>,
    /// Other names of the files in `files` (hard links: the same inode under a name no
    /// rule would call secret, `ln .env notes.txt`), absolute: a secret by identity is
    /// masked with the file it is.
    pub aliases: Vec<PathBuf>,
}

/// One directory a scan listed.
#[derive(Debug, Clone, PartialEq, Eq)]
struct ScannedDir {
    path: PathBuf,
    /// Its modification time, nanoseconds since the epoch.
    time: i64,
    /// Its entries' names, sorted, when it was listed less than [`RACY_NS`] after its
    /// time (racy: the time alone cannot prove the listing current).
    names: Option<Vec<OsString>>,
}

fn mtime(path: &Path) -> Option<i64> {
    let meta = std::fs::symlink_metadata(path).ok()?;
    Some(
        meta.mtime()
            .saturating_mul(1_000_000_000)
            .saturating_add(meta.mtime_nsec()),
    )
}

fn cache_path(dir: &Path) -> PathBuf {
    crate::project::tinytool_dir(dir)
        .join("sandbox")
        .join("secrets.bin")
}

const MAGIC: &[u8] = b"TTSECRETS4\n";

/// A directory with at least this many listed directories below it is an anchor.
const ANCHOR_BELOW: usize = 16;

/// `base` of a directory looked up from the project itself.
const NO_BASE: u32 = u32::MAX;

/// `path` relative to `dir` as bytes (the cache's `path`); `None` outside `dir`.
fn rel_bytes<'a>(dir: &Path, path: &'a Path) -> Option<&'a [u8]> {
    use std::os::unix::ffi::OsStrExt;
    Some(path.strip_prefix(dir).ok()?.as_os_str().as_bytes())
}

fn put_path(out: &mut Vec<u8>, bytes: &[u8]) {
    out.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
    out.extend_from_slice(bytes);
}

/// For each directory of `rels` (relative paths, parents before children): the index of
/// its nearest anchor above it ([`NO_BASE`]: none) and whether it is an anchor itself.
fn anchors(rels: &[&[u8]]) -> Vec<(u32, bool)> {
    use std::collections::HashMap;
    let index: HashMap<&[u8], usize> = rels.iter().enumerate().map(|(i, r)| (*r, i)).collect();
    fn parent(rel: &[u8]) -> Option<&[u8]> {
        if rel.is_empty() {
            return None;
        }
        Some(
            rel.iter()
                .rposition(|&b| b == b'/')
                .map_or(&rel[..0], |at| &rel[..at]),
        )
    }
    let mut below = vec![0usize; rels.len()];
    for rel in rels {
        let mut up = parent(rel);
        while let Some(p) = up {
            if let Some(&i) = index.get(p) {
                below[i] += 1;
            }
            up = parent(p);
        }
    }
    let is_anchor = |i: usize| !rels[i].is_empty() && below[i] >= ANCHOR_BELOW;
    rels.iter()
        .enumerate()
        .map(|(i, rel)| {
            let mut up = parent(rel);
            let mut base = NO_BASE;
            while let Some(p) = up {
                if let Some(&at) = index.get(p)
                    && at < i
                    && is_anchor(at)
                {
                    base = at as u32;
                    break;
                }
                up = parent(p);
            }
            (base, is_anchor(i))
        })
        .collect()
}

/// The cache file's bytes for `scan` (grammar in the module doc).
fn encode(dir: &Path, scan: &Scan) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(64 + scan.dirs.len() * 56);
    out.extend_from_slice(MAGIC);
    out.push(u8::from(scan.capped));
    out.extend_from_slice(&u32::try_from(scan.dirs.len()).ok()?.to_le_bytes());
    let rels: Vec<&[u8]> = scan
        .dirs
        .iter()
        .map(|d| rel_bytes(dir, &d.path))
        .collect::<Option<_>>()?;
    for ((rel, d), (base, anchor)) in rels.iter().zip(&scan.dirs).zip(anchors(&rels)) {
        use std::os::unix::ffi::OsStrExt;
        out.extend_from_slice(&base.to_le_bytes());
        out.push(u8::from(anchor) | if d.names.is_some() { 2 } else { 0 });
        put_path(&mut out, rel);
        out.extend_from_slice(&d.time.to_le_bytes());
        if let Some(names) = &d.names {
            out.extend_from_slice(&u32::try_from(names.len()).ok()?.to_le_bytes());
            for name in names {
                put_path(&mut out, name.as_bytes());
            }
        }
    }
    for list in [&scan.files, &scan.repos, &scan.aliases] {
        out.extend_from_slice(&u32::try_from(list.len()).ok()?.to_le_bytes());
        for path in list {
            put_path(&mut out, rel_bytes(dir, path)?);
        }
    }
    Some(out)
}

/// One directory of a cache file: its path relative to the project, where its lookup
/// starts ([`NO_BASE`] or an earlier anchor's index) and the part of the path below that,
/// whether it is an anchor, its recorded time, and its entries' names when it was racy.
struct CachedDir<'a> {
    rel: &'a [u8],
    base: u32,
    tail: &'a [u8],
    anchor: bool,
    time: i64,
    names: Option<Vec<&'a [u8]>>,
}

/// A cache file as read, borrowing its bytes: directories and files relative to the
/// project (empty for itself).
struct Cached<'a> {
    capped: bool,
    dirs: Vec<CachedDir<'a>>,
    files: Vec<&'a [u8]>,
    repos: Vec<&'a [u8]>,
    aliases: Vec<&'a [u8]>,
}

/// Reads a cache written by [`encode`]; `None` for anything malformed.
fn parse(bytes: &[u8]) -> Option<Cached<'_>> {
    fn take<'a>(rest: &mut &'a [u8], n: usize) -> Option<&'a [u8]> {
        if rest.len() < n {
            return None;
        }
        let (head, tail) = rest.split_at(n);
        *rest = tail;
        Some(head)
    }
    fn count(rest: &mut &[u8]) -> Option<usize> {
        Some(u32::from_le_bytes(take(rest, 4)?.try_into().ok()?) as usize)
    }
    fn path<'a>(rest: &mut &'a [u8]) -> Option<&'a [u8]> {
        let len = count(rest)?;
        take(rest, len)
    }
    let mut rest = bytes.strip_prefix(MAGIC)?;
    let capped = match take(&mut rest, 1)?[0] {
        0 => false,
        1 => true,
        _ => return None,
    };
    let ndirs = count(&mut rest)?;
    // Each entry takes at least 17 bytes: a count that cannot fit is corrupt.
    if ndirs > rest.len() / 17 {
        return None;
    }
    let mut dirs: Vec<CachedDir> = Vec::with_capacity(ndirs);
    for _ in 0..ndirs {
        let base = count(&mut rest)? as u32;
        let flags = take(&mut rest, 1)?[0];
        if flags > 3 {
            return None;
        }
        let anchor = flags & 1 != 0;
        let rel = path(&mut rest)?;
        let time = i64::from_le_bytes(take(&mut rest, 8)?.try_into().ok()?);
        let names = if flags & 2 != 0 {
            let n = count(&mut rest)?;
            if n > rest.len() / 4 {
                return None;
            }
            Some(
                (0..n)
                    .map(|_| path(&mut rest))
                    .collect::<Option<Vec<_>>>()?,
            )
        } else {
            None
        };
        // The base is an earlier anchor whose path leads to this one.
        let tail = if base == NO_BASE {
            rel
        } else {
            let up = dirs.get(base as usize).filter(|d| d.anchor)?;
            rel.strip_prefix(up.rel)?.strip_prefix(b"/")?
        };
        if tail.is_empty() && !rel.is_empty() {
            return None;
        }
        dirs.push(CachedDir {
            rel,
            base,
            tail,
            anchor,
            time,
            names,
        });
    }
    let mut paths = || -> Option<Vec<&[u8]>> {
        let n = count(&mut rest)?;
        if n > rest.len() / 4 {
            return None;
        }
        (0..n).map(|_| path(&mut rest)).collect()
    };
    let files = paths()?;
    let repos = paths()?;
    let aliases = paths()?;
    rest.is_empty().then_some(Cached {
        capped,
        dirs,
        files,
        repos,
        aliases,
    })
}

/// `rel` below `dir` (`dir` itself when empty).
fn under(dir: &Path, rel: &[u8]) -> PathBuf {
    use std::os::unix::ffi::OsStrExt;
    if rel.is_empty() {
        dir.to_path_buf()
    } else {
        dir.join(std::ffi::OsStr::from_bytes(rel))
    }
}

impl Cached<'_> {
    /// The scan this cache holds, to be written again: a racy directory whose time was
    /// already settled when a check listed it again at `checked_ns` is racy no longer.
    fn to_scan(&self, dir: &Path, checked_ns: Option<i64>) -> Scan {
        use std::os::unix::ffi::OsStrExt;
        let settled = |d: &CachedDir| checked_ns.is_some_and(|at| settled(d.time, at));
        Scan {
            dirs: self
                .dirs
                .iter()
                .map(|d| ScannedDir {
                    path: under(dir, d.rel),
                    time: d.time,
                    names: d.names.as_ref().filter(|_| !settled(d)).map(|names| {
                        let names = names.iter().map(|n| std::ffi::OsStr::from_bytes(n));
                        names.map(OsString::from).collect()
                    }),
                })
                .collect(),
            files: self.files.iter().map(|rel| under(dir, rel)).collect(),
            capped: self.capped,
            repos: self.repos.iter().map(|rel| under(dir, rel)).collect(),
            aliases: self.aliases.iter().map(|rel| under(dir, rel)).collect(),
        }
    }
}

/// Whether a listing taken at `listed_ns` of a directory last changed at `time` is proof
/// of its entries.
fn settled(time: i64, listed_ns: i64) -> bool {
    time.saturating_add(RACY_NS) <= listed_ns
}

/// The scan a cache file holds (with its directories, which only a new cache needs).
#[cfg(test)]
fn decode(dir: &Path, bytes: &[u8]) -> Option<Scan> {
    Some(parse(bytes)?.to_scan(dir, None))
}

/// The secret files of the project in `dir`, from the cache when it is still valid;
/// `limit`: the most directory entries a new scan looks at.
pub fn scan(dir: &Path, limit: usize) -> Scan {
    scan_with(dir, limit, true)
}

/// [`scan`] once a command ran: the running call's checkpoint walk, taken before it,
/// is no proof of the tree any more.
pub fn scan_after_command(dir: &Path, limit: usize) -> Scan {
    scan_with(dir, limit, false)
}

fn scan_with(dir: &Path, limit: usize, trust_walk: bool) -> Scan {
    let cache = cache_path(dir);
    let text = std::fs::read(&cache).unwrap_or_default();
    let cached = parse(&text);
    // A capped scan is no proof of anything (and the limit may have been raised).
    if let Some(cached) = &cached
        && !cached.dirs.is_empty()
        && !cached.capped
    {
        match unchanged(dir, &cached.dirs, trust_walk) {
            Some(Settled::Yes) => {
                return Scan {
                    dirs: Vec::new(),
                    files: cached.files.iter().map(|rel| under(dir, rel)).collect(),
                    capped: cached.capped,
                    repos: cached.repos.iter().map(|rel| under(dir, rel)).collect(),
                    aliases: cached.aliases.iter().map(|rel| under(dir, rel)).collect(),
                };
            }
            Some(Settled::Since(checked_ns)) => {
                let scan = cached.to_scan(dir, Some(checked_ns));
                store(dir, &cache, &scan);
                return scan;
            }
            None => {}
        }
    }
    let mut fresh = walk(dir, limit);
    // A secret found before stays masked while it exists, wherever the walk no longer
    // goes: a command could otherwise unmask one over two calls, by adding its directory
    // to an ignore file or by flooding the tree past the cap.
    for rel in cached.iter().flat_map(|c| c.files.iter()) {
        let path = under(dir, rel);
        let still_secret = path
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(crate::secret_file::worth_judging);
        if still_secret
            && !fresh.files.contains(&path)
            && std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_file())
        {
            fresh.files.push(path);
        }
    }
    store(dir, &cache, &fresh);
    fresh
}

/// The directories the last scan of the project in `dir` listed (absolute, the project
/// first): where a secret could appear. Empty when there is no readable cache.
pub fn scanned_directories(dir: &Path) -> Vec<PathBuf> {
    let text = std::fs::read(cache_path(dir)).unwrap_or_default();
    parse(&text)
        .map(|cached| cached.dirs.iter().map(|d| under(dir, d.rel)).collect())
        .unwrap_or_default()
}

/// Writes `scan` as the cache file `cache` (atomically; a cache that cannot be written
/// only means the next call scans again).
fn store(dir: &Path, cache: &Path, scan: &Scan) {
    if let Some(parent) = cache.parent()
        && crate::project::ensure_own_subdir(dir, "sandbox").is_ok()
        && let Some(text) = encode(dir, scan)
        && let Ok(mut file) = tempfile::NamedTempFile::new_in(parent)
        && std::io::Write::write_all(&mut file, &text).is_ok()
    {
        let _ = file.persist(cache);
        // The caches of earlier versions, now unused.
        let _ = std::fs::remove_file(parent.join("secrets.json"));
    }
}

/// What a check that found every directory unchanged says of the racy ones.
#[derive(Debug, PartialEq, Eq)]
enum Settled {
    /// The cache holds no racy directory that settled: it stands as written.
    Yes,
    /// A racy directory listed the same and had settled by the time (nanoseconds since
    /// the epoch) the check began: the cache is written again without its names.
    Since(i64),
}

/// Whether the names a racy directory was cached with are its entries now.
fn same_names<'a>(cached: &[&[u8]], now: impl Iterator<Item = &'a std::ffi::OsStr>) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let mut now: Vec<&[u8]> = now.map(|n| n.as_bytes()).collect();
    now.sort_unstable();
    now == cached
}

/// Whether every directory (relative to `dir`) still has its recorded time, and every
/// racy one the same entries (`None`: something changed): taken from the running call's
/// checkpoint walk where it saw the directory (one walk serves both), else one `stat`
/// each, looked up from the nearest anchor (module doc), never through a link in its last
/// component, and spread over a few threads (on a 20,000-file tree this check is most of
/// the sandbox's cost per call).
fn unchanged(dir: &Path, dirs: &[CachedDir], trust_walk: bool) -> Option<Settled> {
    use crate::tree::DirFd;
    use std::os::unix::ffi::OsStrExt;
    #[allow(clippy::unnecessary_cast)]
    let time_of = |st: libc::stat| {
        (st.st_mtime as i64)
            .saturating_mul(1_000_000_000)
            .saturating_add(st.st_mtime_nsec as i64)
    };
    // Before any listing below: a racy directory settled by then is settled for good.
    let checked_ns = now_ns();
    let listed_again = |handle: &DirFd, names: &[&[u8]]| {
        handle
            .list()
            .is_ok_and(|now| same_names(names, now.iter().map(|(n, _)| n.as_os_str())))
    };
    let mut seen = vec![false; dirs.len()];
    if let Some(walked) = crate::tree::published(dir).filter(|_| trust_walk) {
        for (i, d) in dirs.iter().enumerate() {
            let listing = std::str::from_utf8(d.rel)
                .ok()
                .and_then(|rel| walked.dirs.get(rel));
            if let Some(listing) = listing {
                // The walk's listing is current (it lists again what it cannot trust).
                let names = || listing.names.iter().map(|(n, _)| n.as_os_str());
                if listing.stamp.mtime_ns != d.time
                    || d.names
                        .as_ref()
                        .is_some_and(|old| !same_names(old, names()))
                {
                    return None;
                }
                seen[i] = true;
            }
        }
    }
    let root = DirFd::open(dir)?;
    // The anchors first, in order: each one's base is an earlier anchor.
    let mut handles: Vec<Option<DirFd>> = Vec::new();
    handles.resize_with(dirs.len(), || None);
    for (i, d) in dirs.iter().enumerate().filter(|(_, d)| d.anchor) {
        let base = match d.base {
            NO_BASE => Some(&root),
            at => handles[at as usize].as_ref(),
        };
        let handle = base.and_then(|b| b.open_below(std::ffi::OsStr::from_bytes(d.tail)))?;
        if !seen[i]
            && (handle.stat_self().map(time_of) != Some(d.time)
                || d.names
                    .as_ref()
                    .is_some_and(|old| !listed_again(&handle, old)))
        {
            return None;
        }
        handles[i] = Some(handle);
    }
    let rest: Vec<&CachedDir> = dirs
        .iter()
        .zip(&seen)
        .filter(|(d, seen)| !d.anchor && !**seen)
        .map(|(d, _)| d)
        .collect();
    let handles = &handles;
    let root = &root;
    let listed_again = &listed_again;
    let check = move |d: &CachedDir| -> bool {
        let base = match d.base {
            NO_BASE => Some(root),
            at => handles[at as usize].as_ref(),
        };
        let tail = std::ffi::OsStr::from_bytes(if d.tail.is_empty() { b"." } else { d.tail });
        let same_time = base.and_then(|b| b.lstat_in(&[tail])).map(time_of) == Some(d.time);
        same_time
            && d.names.as_ref().is_none_or(|old| {
                base.and_then(|b| b.open_below(tail))
                    .is_some_and(|handle| listed_again(&handle, old))
            })
    };
    let check = &check;
    const PER_THREAD: usize = 512;
    let same = if rest.len() <= PER_THREAD {
        rest.iter().all(|d| check(d))
    } else {
        let threads = processors()
            .clamp(1, 4)
            .min(rest.len().div_ceil(PER_THREAD));
        let chunk = rest.len().div_ceil(threads);
        std::thread::scope(|scope| {
            let checks: Vec<_> = rest
                .chunks(chunk)
                .map(|part| scope.spawn(move || part.iter().all(|d| check(d))))
                .collect();
            // A thread that panicked proves nothing: scan again.
            checks
                .into_iter()
                .all(|check| check.join().unwrap_or(false))
        })
    };
    let settled_since = dirs
        .iter()
        .any(|d| d.names.is_some() && settled(d.time, checked_ns));
    same.then_some(if settled_since {
        Settled::Since(checked_ns)
    } else {
        Settled::Yes
    })
}

/// The processors this process may run on (its affinity mask: one system call, where
/// `std::thread::available_parallelism` also reads the cgroup's quota files).
fn processors() -> usize {
    // SAFETY: a zeroed cpu_set_t is a valid empty set; sched_getaffinity fills it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return 1;
        }
        libc::CPU_COUNT(&set).max(1) as usize
    }
}

/// Whether the scan leaves the folder `path` out: it is not the project's own work
/// ([`crate::skip_dirs`]: dependencies, virtual environments, caches, build outputs,
/// tinytool's and git's own folders).
pub fn left_out(path: &Path) -> bool {
    // The built-in list: a project's config cannot narrow what the scan looks at.
    crate::skip_dirs::NotProject::default()
        .judge(path)
        .is_some()
}

fn walk(dir: &Path, limit: usize) -> Scan {
    use std::os::unix::fs::DirEntryExt;
    let mut scan = Scan::default();
    let mut seen = 0usize;
    // Every other file by inode number (from the listing, no `stat`), to find the other
    // names of the secrets once the walk is done.
    let mut others: std::collections::HashMap<u64, Vec<PathBuf>> = Default::default();
    let mut secret_inodes: Vec<u64> = Vec::new();
    // The dependency folders the walk leaves out, where a hard link to a secret could
    // still be made (`.git` and `.tinytool` are mount points of their own in the
    // sandbox: no link crosses into them).
    let passed: std::sync::Arc<std::sync::Mutex<Vec<PathBuf>>> = Default::default();
    let passing = std::sync::Arc::clone(&passed);
    let walker = ignore::WalkBuilder::new(dir)
        .standard_filters(false)
        .follow_links(false)
        .filter_entry(move |e| {
            let name = e.file_name();
            let skipped =
                e.depth() > 0 && e.file_type().is_some_and(|t| t.is_dir()) && left_out(e.path());
            if skipped
                && name != ".git"
                && name != ".tinytool"
                && e.file_type().is_some_and(|t| t.is_dir())
                && let Ok(mut passed) = passing.lock()
            {
                passed.push(e.path().to_path_buf());
            }
            !skipped
        })
        .build();
    for entry in walker.flatten() {
        if !entry.file_type().is_some_and(|t| t.is_dir()) {
            continue;
        }
        let path = entry.path();
        let Some(time) = mtime(path) else { continue };
        let Ok(list) = std::fs::read_dir(path) else {
            scan.dirs.push(ScannedDir {
                path: path.to_path_buf(),
                time,
                names: None,
            });
            continue;
        };
        let mut names = Vec::new();
        for item in list.flatten() {
            seen += 1;
            if seen > limit {
                scan.capped = true;
                break;
            }
            names.push(item.file_name());
            if item.file_name() == ".git" && path != dir {
                scan.repos.push(path.to_path_buf());
            }
            let is_file = item.file_type().is_ok_and(|t| t.is_file());
            if is_file
                && let Some(name) = item.file_name().to_str()
                && crate::secret_file::worth_judging(name)
            {
                scan.files.push(item.path());
                secret_inodes.push(item.ino());
            } else if is_file {
                others.entry(item.ino()).or_default().push(item.path());
            }
        }
        // Listed too soon after its last change for the time alone to prove it later.
        let racy = !settled(time, now_ns());
        names.sort_unstable();
        scan.dirs.push(ScannedDir {
            path: path.to_path_buf(),
            time,
            names: racy.then_some(names),
        });
        if scan.capped {
            break;
        }
    }
    // Inode numbers are per file system: an alias is kept only when its device and inode
    // are a secret's (one `stat` each, for the few names that share a secret's number).
    let identity = |path: &Path| {
        std::fs::symlink_metadata(path)
            .ok()
            .filter(|m| m.is_file() && m.nlink() > 1)
            .map(|m| (m.dev(), m.ino()))
    };
    let secrets: Vec<(u64, u64)> = scan
        .files
        .iter()
        .zip(&secret_inodes)
        .filter(|(_, ino)| others.contains_key(ino))
        .filter_map(|(path, _)| identity(path))
        .collect();
    for (_, ino) in &secrets {
        for path in others.remove(ino).unwrap_or_default() {
            if identity(&path).is_some_and(|id| secrets.contains(&id)) {
                scan.aliases.push(path);
            }
        }
    }
    // A candidate with more names than the walk saw: its other names are looked for in
    // the folders it left out (a link made there before the file became a secret).
    // Each identity once: (device, inode) → names seen and names it has.
    let mut names: Vec<((u64, u64), u64, u64)> = Vec::new();
    for path in scan.files.iter().chain(&scan.aliases) {
        let Ok(meta) = std::fs::symlink_metadata(path) else {
            continue;
        };
        if !meta.is_file() || meta.nlink() < 2 {
            continue;
        }
        let id = (meta.dev(), meta.ino());
        match names.iter_mut().find(|(known, _, _)| *known == id) {
            Some((_, seen, _)) => *seen += 1,
            None => names.push((id, 1, meta.nlink())),
        }
    }
    let unseen: Vec<((u64, u64), u64)> = names
        .into_iter()
        .filter(|(_, seen, has)| has > seen)
        .map(|(id, seen, has)| (id, has - seen))
        .collect();
    if !unseen.is_empty() {
        let passed = passed.lock().map(|p| p.clone()).unwrap_or_default();
        let (found, complete) = names_in(&passed, &unseen, limit.saturating_sub(seen));
        scan.aliases.extend(found);
        // Names left to find in folders not looked through to the end: no proof that
        // none is there (the limit's refusal says how to raise it).
        scan.capped |= !complete;
    }
    scan
}

/// The files under `folders` whose identity is one of `wanted` (each with how many
/// names of it are missing), looking at `budget` entries at most; and whether the search
/// is complete (every missing name found, or every folder looked through).
fn names_in(
    folders: &[PathBuf],
    wanted: &[((u64, u64), u64)],
    budget: usize,
) -> (Vec<PathBuf>, bool) {
    let mut missing: Vec<((u64, u64), u64)> = wanted.to_vec();
    let mut found = Vec::new();
    let mut looked = 0usize;
    for folder in folders {
        let walker = ignore::WalkBuilder::new(folder)
            .standard_filters(false)
            .follow_links(false)
            .build();
        for entry in walker.flatten() {
            looked += 1;
            if looked > budget {
                return (found, false);
            }
            let Some(ino) = entry.ino() else { continue };
            if !entry.file_type().is_some_and(|t| t.is_file())
                || !missing.iter().any(|((_, i), _)| *i == ino)
            {
                continue;
            }
            let Ok(meta) = std::fs::symlink_metadata(entry.path()) else {
                continue;
            };
            let id = (meta.dev(), meta.ino());
            if let Some((_, left)) = missing
                .iter_mut()
                .find(|(known, left)| *known == id && *left > 0)
            {
                *left -= 1;
                found.push(entry.path().to_path_buf());
                if missing.iter().all(|(_, left)| *left == 0) {
                    return (found, true);
                }
            }
        }
    }
    (found, true)
}

/// Whether `path` is another name of a secret candidate of the project in `dir` (a hard
/// link: same device and inode), judged from the scan (cached while the project's
/// folders are unchanged); false at once for a file with a single name.
pub fn is_alias_of_secret(dir: &Path, path: &Path) -> bool {
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return false;
    };
    if !meta.is_file() || meta.nlink() < 2 {
        return false;
    }
    let id = (meta.dev(), meta.ino());
    scan(dir, CAP).files.iter().any(|secret| {
        secret != path
            && std::fs::symlink_metadata(secret).is_ok_and(|m| (m.dev(), m.ino()) == id)
            && crate::secret_file::is_secret(secret)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_ignored_env_files_and_caches_until_a_directory_changes() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::write(root.join(".gitignore"), ".env\nbuild/\n").unwrap();
        std::fs::write(root.join(".env"), "K=v").unwrap();
        std::fs::write(root.join(".env.example"), "K=").unwrap();
        std::fs::create_dir(root.join("build")).unwrap();
        std::fs::write(root.join("build/.env"), "K=v").unwrap();
        let first = scan(&root, CAP);
        // Ignored or not: a folder git ignores may hold local settings.
        let mut files = first.files.clone();
        files.sort();
        assert_eq!(files, vec![root.join(".env"), root.join("build/.env")]);
        std::fs::create_dir(root.join("sub")).unwrap();
        std::fs::write(root.join("sub/id_rsa"), "k").unwrap();
        let second = scan(&root, CAP);
        assert!(second.files.contains(&root.join("sub/id_rsa")));
    }

    #[test]
    fn nested_repositories_are_found_and_cached() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join(".git")).unwrap();
        std::fs::create_dir_all(root.join("libs/a/.git")).unwrap();
        std::fs::create_dir_all(root.join("mods/b")).unwrap();
        std::fs::write(root.join("mods/b/.git"), "gitdir: ../../.git/modules/b\n").unwrap();
        std::fs::create_dir_all(root.join("node_modules/c/.git")).unwrap();
        for _ in 0..2 {
            let mut repos = scan(&root, CAP).repos;
            repos.sort();
            assert_eq!(repos, [root.join("libs/a"), root.join("mods/b")]);
        }
    }

    #[test]
    fn other_names_of_a_secret_are_found() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir(root.join("docs")).unwrap();
        std::fs::write(root.join(".env"), "K=v").unwrap();
        std::fs::hard_link(root.join(".env"), root.join("docs/notes.txt")).unwrap();
        std::fs::write(root.join("plain.txt"), "x").unwrap();
        for _ in 0..2 {
            let found = scan(&root, CAP);
            assert_eq!(found.aliases, [root.join("docs/notes.txt")]);
        }
        assert!(is_alias_of_secret(&root, &root.join("docs/notes.txt")));
        assert!(!is_alias_of_secret(&root, &root.join("plain.txt")));
        assert!(!is_alias_of_secret(&root, &root.join(".env")));
        // In a folder the walk leaves out (a link made there before the file became a
        // secret): found by the identity the walk could not account for.
        std::fs::create_dir_all(root.join("node_modules/p")).unwrap();
        std::fs::create_dir_all(root.join("target/debug")).unwrap();
        std::fs::hard_link(root.join(".env"), root.join("node_modules/p/readme.md")).unwrap();
        std::fs::hard_link(root.join(".env"), root.join("target/debug/out.txt")).unwrap();
        let mut aliases = scan(&root, CAP).aliases;
        aliases.sort();
        assert_eq!(
            aliases,
            [
                root.join("docs/notes.txt"),
                root.join("node_modules/p/readme.md"),
                root.join("target/debug/out.txt")
            ]
        );
    }

    #[test]
    fn a_search_for_other_names_says_whether_it_is_complete() {
        use std::os::unix::fs::MetadataExt;
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("node_modules/a")).unwrap();
        for i in 0..20 {
            std::fs::write(root.join(format!("node_modules/a/{i}.js")), "x").unwrap();
        }
        std::fs::write(root.join(".env"), "K=v").unwrap();
        std::fs::hard_link(root.join(".env"), root.join("node_modules/a/x.md")).unwrap();
        let meta = std::fs::metadata(root.join(".env")).unwrap();
        let wanted = [((meta.dev(), meta.ino()), 1)];
        let folders = [root.join("node_modules")];
        assert_eq!(
            names_in(&folders, &wanted, 1000),
            (vec![root.join("node_modules/a/x.md")], true)
        );
        // Out of budget before the end: not complete, so the scan counts as capped.
        assert!(!names_in(&folders, &wanted, 0).1);
    }

    #[test]
    fn dependencies_and_build_output_are_not_scanned() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        for rel in [
            "node_modules/pkg/.env",
            "target/debug/.env",
            "venv/lib/.env",
            "src/__pycache__/.env",
            "conf/.env",
        ] {
            let path = root.join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, "K=v").unwrap();
        }
        // A virtual environment whatever its name; Cargo's output beside its Cargo.toml.
        std::fs::write(root.join("venv/pyvenv.cfg"), "home = /usr\n").unwrap();
        std::fs::write(root.join("Cargo.toml"), "").unwrap();
        assert_eq!(scan(&root, CAP).files, vec![root.join("conf/.env")]);
    }

    #[test]
    fn a_secret_found_once_stays_masked_when_ignored_or_past_the_cap() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir(root.join("backend")).unwrap();
        std::fs::write(root.join("backend/.env"), "K=v").unwrap();
        assert_eq!(scan(&root, CAP).files, vec![root.join("backend/.env")]);
        // A command adds the folder to an ignore file: the walk skips it now.
        std::fs::write(root.join(".ignore"), "backend/\n").unwrap();
        assert_eq!(scan(&root, CAP).files, vec![root.join("backend/.env")]);
        assert_eq!(scan(&root, CAP).files, vec![root.join("backend/.env")]);
        // Gone: no longer listed.
        std::fs::remove_file(root.join("backend/.env")).unwrap();
        std::fs::write(root.join("other"), "").unwrap();
        assert!(scan(&root, CAP).files.is_empty());
    }

    fn scanned(path: PathBuf, time: i64, names: Option<&[&str]>) -> ScannedDir {
        ScannedDir {
            path,
            time,
            names: names.map(|names| names.iter().map(OsString::from).collect()),
        }
    }

    /// Sets the modification time of `path` (a directory) to `ns` since the epoch.
    fn set_mtime(path: &Path, ns: i64) {
        let spec = libc::timespec {
            tv_sec: ns.div_euclid(1_000_000_000) as libc::time_t,
            tv_nsec: ns.rem_euclid(1_000_000_000) as libc::c_long,
        };
        let times = [spec, spec];
        let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a valid path and two timespecs.
        assert_eq!(
            unsafe { libc::utimensat(libc::AT_FDCWD, c.as_ptr(), times.as_ptr(), 0) },
            0
        );
    }

    fn cached_names(root: &Path, rel: &[u8]) -> Option<Vec<Vec<u8>>> {
        let bytes = std::fs::read(cache_path(root)).unwrap();
        let cached = parse(&bytes).unwrap();
        let d = cached.dirs.iter().find(|d| d.rel == rel).unwrap();
        d.names
            .as_ref()
            .map(|n| n.iter().map(|n| n.to_vec()).collect())
    }

    #[test]
    fn a_secret_made_in_the_clock_tick_of_the_scan_is_found() {
        // A directory changed just before the scan: a file created in the same clock tick
        // leaves its time as it was, so only listing it again can tell.
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir(root.join("sub")).unwrap();
        std::fs::write(root.join("sub/a.rs"), "").unwrap();
        assert!(scan(&root, CAP).files.is_empty());
        let names = cached_names(&root, b"sub").expect("a fresh directory is racy");
        assert_eq!(names, vec![b"a.rs".to_vec()]);
        let time = mtime(&root.join("sub")).unwrap();
        std::fs::write(root.join("sub/.env"), "K=v").unwrap();
        set_mtime(&root.join("sub"), time);
        assert_eq!(scan(&root, CAP).files, vec![root.join("sub/.env")]);
        // The same for a directory checked from an anchor, and for an anchor.
        anchored_tree(&root);
        assert_eq!(scan(&root, CAP).files, vec![root.join("sub/.env")]);
        for rel in ["a/b/c2/d1", "a/b"] {
            let path = root.join(rel);
            let time = mtime(&path).unwrap();
            std::fs::write(path.join("id_rsa"), "k").unwrap();
            set_mtime(&path, time);
            assert!(
                scan(&root, CAP).files.contains(&path.join("id_rsa")),
                "{rel}"
            );
        }
    }

    #[test]
    fn a_racy_directory_is_written_without_its_names_once_it_settled() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir(root.join("sub")).unwrap();
        std::fs::write(root.join("sub/.env"), "K=v").unwrap();
        crate::project::ensure_own_subdir(&root, "sandbox").unwrap();
        // Changed a second ago: racy now, settled a second later.
        let time = now_ns() - 1_000_000_000;
        set_mtime(&root.join("sub"), time);
        set_mtime(&root, time);
        assert_eq!(scan(&root, CAP).files, vec![root.join("sub/.env")]);
        assert!(cached_names(&root, b"sub").is_some());
        std::thread::sleep(std::time::Duration::from_millis(1100));
        assert_eq!(scan(&root, CAP).files, vec![root.join("sub/.env")]);
        assert_eq!(cached_names(&root, b"sub"), None);
        assert_eq!(cached_names(&root, b""), None);
        // And the settled cache still sees a change.
        std::fs::write(root.join("sub/id_rsa"), "k").unwrap();
        assert!(scan(&root, CAP).files.contains(&root.join("sub/id_rsa")));
    }

    #[test]
    fn the_binary_cache_round_trips_and_rejects_garbage() {
        let dir = Path::new("/p");
        let scan = Scan {
            repos: vec![dir.join("nested/repo")],
            aliases: vec![dir.join("docs/notes.txt")],
            dirs: vec![
                scanned(dir.to_path_buf(), 1, None),
                scanned(dir.join("src"), -7, Some(&["a.rs", "b"])),
            ],
            files: vec![dir.join("src/.env")],
            capped: true,
        };
        let bytes = encode(dir, &scan).unwrap();
        let back = decode(dir, &bytes).unwrap();
        assert_eq!(back.dirs, scan.dirs);
        assert_eq!(back.files, scan.files);
        assert_eq!(back.repos, scan.repos);
        assert_eq!(back.aliases, scan.aliases);
        assert!(back.capped);
        assert!(decode(dir, &bytes[..bytes.len() - 1]).is_none());
        assert!(decode(dir, b"{}").is_none());
        // Unknown flags: the first directory's flags byte.
        let mut bad = bytes.clone();
        bad[MAGIC.len() + 1 + 4 + 4] = 4;
        assert!(decode(dir, &bad).is_none());
    }

    #[test]
    fn the_running_calls_walk_stands_in_for_stat_calls() {
        use crate::tree::{self as walk, listing};
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::write(root.join(".env"), "K=v").unwrap();
        crate::project::ensure_own_subdir(&root, "sandbox").unwrap();
        // Settled: the cache trusts the root's time alone.
        set_mtime(&root, now_ns() - 10_000_000_000);
        assert_eq!(scan(&root, CAP).files, vec![root.join(".env")]);
        // A walk that saw the root with another time: the cache is not trusted, the scan
        // runs again and finds the file created since.
        let mut walked = listing::Cache::default();
        let stamp = listing::Stamp {
            ino: 0,
            mtime_ns: 1,
            ctime_ns: 1,
        };
        walked.dirs.insert(
            String::new(),
            listing::Listing::of_names(stamp, 0, Vec::new()),
        );
        std::fs::write(root.join("id_rsa"), "k").unwrap();
        // Restore the root's time so only the published stamp tells the change.
        let cached = decode(&root, &std::fs::read(cache_path(&root)).unwrap()).unwrap();
        set_mtime(&root, cached.dirs[0].time);
        assert_eq!(scan(&root, CAP).files, vec![root.join(".env")]);
        walk::publish(&root, std::sync::Arc::new(walked));
        let files = scan(&root, CAP).files;
        walk::forget();
        assert!(files.contains(&root.join("id_rsa")));
    }

    #[test]
    fn a_change_in_any_of_many_directories_is_seen() {
        // Enough directories for the check to be split over threads.
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        for i in 0..700 {
            std::fs::create_dir(root.join(format!("d{i:04}"))).unwrap();
        }
        assert!(scan(&root, CAP).files.is_empty());
        assert!(scan(&root, CAP).files.is_empty());
        std::fs::write(root.join("d0699/.env"), "K=v").unwrap();
        assert_eq!(scan(&root, CAP).files, vec![root.join("d0699/.env")]);
    }

    /// A tree deep enough for anchors: `a/b/c{i}/d{j}` (the changes below are made where
    /// only the lookup from an anchor reaches).
    fn anchored_tree(root: &Path) {
        for i in 0..6 {
            for j in 0..4 {
                std::fs::create_dir_all(root.join(format!("a/b/c{i}/d{j}"))).unwrap();
            }
        }
    }

    #[test]
    fn directories_below_anchors_are_checked_from_them() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        anchored_tree(&root);
        assert!(scan(&root, CAP).files.is_empty());
        let bytes = std::fs::read(cache_path(&root)).unwrap();
        let cached = parse(&bytes).unwrap();
        let anchors: Vec<&[u8]> = cached
            .dirs
            .iter()
            .filter(|d| d.anchor)
            .map(|d| d.rel)
            .collect();
        assert_eq!(anchors, vec![&b"a"[..], &b"a/b"[..]]);
        let deep = cached.dirs.iter().find(|d| d.rel == b"a/b/c3/d2").unwrap();
        assert_eq!(deep.tail, b"c3/d2");
        assert!(scan(&root, CAP).files.is_empty());
        // A secret below an anchor, and one in an anchor itself.
        std::fs::write(root.join("a/b/c3/d2/.env"), "K=v").unwrap();
        assert_eq!(scan(&root, CAP).files, vec![root.join("a/b/c3/d2/.env")]);
        std::fs::write(root.join("a/b/id_rsa"), "k").unwrap();
        assert!(scan(&root, CAP).files.contains(&root.join("a/b/id_rsa")));
    }

    #[test]
    fn an_anchor_swapped_for_a_link_is_a_change() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        anchored_tree(&root);
        std::fs::create_dir_all(root.join("elsewhere")).unwrap();
        assert!(scan(&root, CAP).files.is_empty());
        // The anchor `a/b` moved away and a link put in its place, with the old times
        // kept on the root and `a`: only opening the anchor can tell.
        let time = |p: &Path| std::fs::symlink_metadata(p).unwrap().modified().unwrap();
        let (root_time, a_time) = (time(&root), time(&root.join("a")));
        std::fs::rename(root.join("a/b"), root.join("elsewhere/b")).unwrap();
        std::fs::write(root.join("elsewhere/b/c0/.env"), "K=v").unwrap();
        std::os::unix::fs::symlink("../elsewhere/b", root.join("a/b")).unwrap();
        for (path, t) in [(root.join("a"), a_time), (root.clone(), root_time)] {
            std::fs::File::open(&path).unwrap().set_modified(t).unwrap();
        }
        let files = scan(&root, CAP).files;
        assert!(
            files.contains(&root.join("elsewhere/b/c0/.env")),
            "{files:?}"
        );
    }

    #[test]
    fn a_cache_whose_base_is_no_earlier_anchor_is_rejected() {
        let dir = Path::new("/p");
        let dirs: Vec<ScannedDir> = (0..20)
            .map(|i| scanned(dir.join(format!("x/y{i}")), i, None))
            .chain([scanned(dir.join("x"), 0, None)])
            .collect();
        let mut scan = Scan {
            repos: Vec::new(),
            aliases: Vec::new(),
            dirs,
            files: vec![],
            capped: false,
        };
        // Parents after their children: no anchor can serve as a base.
        let bytes = encode(dir, &scan).unwrap();
        assert!(
            parse(&bytes)
                .unwrap()
                .dirs
                .iter()
                .all(|d| d.base == NO_BASE)
        );
        scan.dirs.rotate_right(1);
        let mut bytes = encode(dir, &scan).unwrap();
        let parsed = parse(&bytes).unwrap();
        assert!(parsed.dirs[0].anchor);
        assert_eq!(parsed.dirs[1].base, 0);
        // Point the second directory's base at itself.
        let at = MAGIC.len() + 1 + 4 + (4 + 1 + 4 + 1 + 8);
        bytes[at..at + 4].copy_from_slice(&1u32.to_le_bytes());
        assert!(parse(&bytes).is_none());
    }
}
