//! The secret files of a project that the sandbox covers with an empty read-only file.
//!
//! A file is secret when the secret detector says its name is
//! ([`crate::detect::secret::name_is_secret`]; `.env.example` and friends are not). The
//! scan visits the directories that ignore files do not prune (a `node_modules` or
//! `target` never hold the project's own secrets, and a 20,000-file tree must not cost
//! every call a walk), but lists every file in them, ignored or not: `.env` is usually in
//! `.gitignore`. It stops after [`CAP`] directory entries (said in `metadata.sandbox`).
//!
//! The result is cached in `<dir>/.tinytool/sandbox/secrets.bin`, a compact binary file
//! (a JSON cache of a 3,000-directory tree took longer to parse than to check). Grammar,
//! integers little-endian, paths relative to the project directory (empty for itself):
//!
//! ```text
//! cache  = "TTSECRETS2\n" capped:u8 ndirs:u32 dir{ndirs} nfiles:u32 path{nfiles}
//! dir    = base:u32 anchor:u8 path mtime_ns:i128
//! path   = len:u32 bytes{len}
//! ```
//!
//! Valid while every listed directory still has the modification time recorded (a file
//! created, removed or renamed in a directory changes its time); otherwise the scan runs
//! again, and the files the cache listed stay in the new list while they exist (an
//! ignore file or a flood of files written by a command must not unmask them). Checking costs one `stat` per directory, not a listing.
//! A cache that does not parse is treated as absent (the scan runs again).
//!
//! Most of a `stat` is the path lookup, one step per component: directories with many
//! listed directories below them are *anchors* (`anchor` 1), opened once per check, and
//! every directory is looked up from its nearest anchor above it (`base`: the index of an
//! earlier anchor entry, or `u32::MAX` for the project itself), two components deep
//! rather than five on a generated 20,000-file tree.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// The most directory entries a scan looks at.
pub const CAP: usize = 50_000;

/// The secret files found.
#[derive(Debug, Clone, Default)]
pub struct Scan {
    /// Every directory listed, with its modification time in nanoseconds.
    dirs: Vec<(PathBuf, i128)>,
    /// The secret files (absolute).
    pub files: Vec<PathBuf>,
    /// Whether the scan stopped at [`CAP`].
    pub capped: bool,
}

fn mtime(path: &Path) -> Option<i128> {
    let meta = std::fs::symlink_metadata(path).ok()?;
    Some(meta.mtime() as i128 * 1_000_000_000 + meta.mtime_nsec() as i128)
}

fn cache_path(dir: &Path) -> PathBuf {
    crate::project::tinytool_dir(dir)
        .join("sandbox")
        .join("secrets.bin")
}

const MAGIC: &[u8] = b"TTSECRETS2\n";

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
        .map(|(path, _)| rel_bytes(dir, path))
        .collect::<Option<_>>()?;
    for ((rel, (_, time)), (base, anchor)) in rels.iter().zip(&scan.dirs).zip(anchors(&rels)) {
        out.extend_from_slice(&base.to_le_bytes());
        out.push(u8::from(anchor));
        put_path(&mut out, rel);
        out.extend_from_slice(&time.to_le_bytes());
    }
    out.extend_from_slice(&u32::try_from(scan.files.len()).ok()?.to_le_bytes());
    for path in &scan.files {
        put_path(&mut out, rel_bytes(dir, path)?);
    }
    Some(out)
}

/// One directory of a cache file: its path relative to the project, where its lookup
/// starts ([`NO_BASE`] or an earlier anchor's index) and the part of the path below that,
/// whether it is an anchor, and its recorded time.
struct CachedDir<'a> {
    rel: &'a [u8],
    base: u32,
    tail: &'a [u8],
    anchor: bool,
    time: i128,
}

/// A cache file as read, borrowing its bytes: directories and files relative to the
/// project (empty for itself).
struct Cached<'a> {
    capped: bool,
    dirs: Vec<CachedDir<'a>>,
    files: Vec<&'a [u8]>,
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
    // Each entry takes at least 25 bytes: a count that cannot fit is corrupt.
    if ndirs > rest.len() / 25 {
        return None;
    }
    let mut dirs: Vec<CachedDir> = Vec::with_capacity(ndirs);
    for _ in 0..ndirs {
        let base = count(&mut rest)? as u32;
        let anchor = match take(&mut rest, 1)?[0] {
            0 => false,
            1 => true,
            _ => return None,
        };
        let rel = path(&mut rest)?;
        let time = i128::from_le_bytes(take(&mut rest, 16)?.try_into().ok()?);
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
        });
    }
    let nfiles = count(&mut rest)?;
    if nfiles > rest.len() / 4 {
        return None;
    }
    let mut files = Vec::with_capacity(nfiles);
    for _ in 0..nfiles {
        files.push(path(&mut rest)?);
    }
    rest.is_empty().then_some(Cached {
        capped,
        dirs,
        files,
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

/// The scan a cache file holds (with its directories, which only a new cache needs).
#[cfg(test)]
fn decode(dir: &Path, bytes: &[u8]) -> Option<Scan> {
    let cached = parse(bytes)?;
    Some(Scan {
        dirs: cached
            .dirs
            .iter()
            .map(|d| (under(dir, d.rel), d.time))
            .collect(),
        files: cached.files.iter().map(|rel| under(dir, rel)).collect(),
        capped: cached.capped,
    })
}

/// The secret files of the project in `dir`, from the cache when it is still valid.
pub fn scan(dir: &Path) -> Scan {
    let cache = cache_path(dir);
    let text = std::fs::read(&cache).unwrap_or_default();
    let cached = parse(&text);
    if let Some(cached) = &cached
        && !cached.dirs.is_empty()
        && unchanged(dir, &cached.dirs)
    {
        return Scan {
            dirs: Vec::new(),
            files: cached.files.iter().map(|rel| under(dir, rel)).collect(),
            capped: cached.capped,
        };
    }
    let mut fresh = walk(dir);
    // A secret found before stays masked while it exists, wherever the walk no longer
    // goes: a command could otherwise unmask one over two calls, by adding its directory
    // to an ignore file or by flooding the tree past the cap.
    for rel in cached.iter().flat_map(|c| c.files.iter()) {
        let path = under(dir, rel);
        let still_secret = path
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|name| crate::detect::secret::name_is_secret(name) && !is_template(name));
        if still_secret
            && !fresh.files.contains(&path)
            && std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_file())
        {
            fresh.files.push(path);
        }
    }
    if let Some(parent) = cache.parent()
        && crate::project::ensure_own_subdir(dir, "sandbox").is_ok()
        && let Some(text) = encode(dir, &fresh)
        && let Ok(mut file) = tempfile::NamedTempFile::new_in(parent)
        && std::io::Write::write_all(&mut file, &text).is_ok()
    {
        let _ = file.persist(&cache);
        // The JSON cache of earlier versions, now unused.
        let _ = std::fs::remove_file(parent.join("secrets.json"));
    }
    fresh
}

/// Whether every directory (relative to `dir`) still has its recorded time: taken from
/// the running call's checkpoint walk where it saw the directory (one walk serves both),
/// else one `stat` each, looked up from the nearest anchor (module doc), never through a
/// link in its last component, and spread over a few threads (on a 20,000-file tree this
/// check is most of the sandbox's cost per call).
fn unchanged(dir: &Path, dirs: &[CachedDir]) -> bool {
    use crate::checkpoints::walk::DirFd;
    use std::os::unix::ffi::OsStrExt;
    #[allow(clippy::unnecessary_cast)]
    let time_of = |st: libc::stat| st.st_mtime as i128 * 1_000_000_000 + st.st_mtime_nsec as i128;
    let mut seen = vec![false; dirs.len()];
    if let Some(walked) = crate::checkpoints::walk::published(dir) {
        for (i, d) in dirs.iter().enumerate() {
            let listing = std::str::from_utf8(d.rel)
                .ok()
                .and_then(|rel| walked.dirs.get(rel));
            if let Some(listing) = listing {
                if i128::from(listing.stamp.mtime_ns) != d.time {
                    return false;
                }
                seen[i] = true;
            }
        }
    }
    let Some(root) = DirFd::open(dir) else {
        return false;
    };
    // The anchors first, in order: each one's base is an earlier anchor.
    let mut handles: Vec<Option<DirFd>> = Vec::new();
    handles.resize_with(dirs.len(), || None);
    for (i, d) in dirs.iter().enumerate().filter(|(_, d)| d.anchor) {
        let base = match d.base {
            NO_BASE => Some(&root),
            at => handles[at as usize].as_ref(),
        };
        let Some(handle) = base.and_then(|b| b.open_below(std::ffi::OsStr::from_bytes(d.tail)))
        else {
            return false;
        };
        if !seen[i] && handle.stat_self().map(time_of) != Some(d.time) {
            return false;
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
    let check = move |d: &CachedDir| -> bool {
        let base = match d.base {
            NO_BASE => Some(root),
            at => handles[at as usize].as_ref(),
        };
        let tail: &[u8] = if d.tail.is_empty() { b"." } else { d.tail };
        base.and_then(|b| b.lstat_in(&[std::ffi::OsStr::from_bytes(tail)]))
            .map(time_of)
            == Some(d.time)
    };
    let check = &check;
    const PER_THREAD: usize = 512;
    if rest.len() <= PER_THREAD {
        return rest.iter().all(|d| check(d));
    }
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

fn walk(dir: &Path) -> Scan {
    let mut scan = Scan::default();
    let mut seen = 0usize;
    let walker = ignore::WalkBuilder::new(dir)
        .hidden(false)
        .require_git(false)
        .follow_links(false)
        .filter_entry(|e| {
            let name = e.file_name();
            !(e.depth() > 0 && (name == ".git" || name == ".tinytool"))
        })
        .build();
    for entry in walker.flatten() {
        if !entry.file_type().is_some_and(|t| t.is_dir()) {
            continue;
        }
        let path = entry.path();
        let Some(time) = mtime(path) else { continue };
        scan.dirs.push((path.to_path_buf(), time));
        let Ok(list) = std::fs::read_dir(path) else {
            continue;
        };
        for item in list.flatten() {
            seen += 1;
            if seen > CAP {
                scan.capped = true;
                return scan;
            }
            let is_file = item.file_type().is_ok_and(|t| t.is_file());
            if is_file
                && let Some(name) = item.file_name().to_str()
                && crate::detect::secret::name_is_secret(name)
                && !is_template(name)
            {
                scan.files.push(item.path());
            }
        }
    }
    scan
}

/// Example files committed with a project (`.env.example`, `.env.sample`, `.env.template`,
/// `.env.dist`): not secret, and builds read them.
fn is_template(name: &str) -> bool {
    [".example", ".sample", ".template", ".dist"]
        .iter()
        .any(|suffix| name.ends_with(suffix))
}

/// The empty read-only file secrets are covered with (`.tinytool/sandbox/empty`, made
/// once); `None` when it cannot be made.
pub fn empty_file(tinytool: &Path) -> Option<PathBuf> {
    let path = tinytool.join("sandbox").join("empty");
    match std::fs::symlink_metadata(&path) {
        Ok(meta) if meta.is_file() && meta.len() == 0 => return Some(path),
        Ok(_) => {
            let _ = std::fs::remove_file(&path);
        }
        Err(_) => {}
    }
    crate::project::ensure_own_subdir(tinytool.parent()?, "sandbox").ok()?;
    // create_new: never through a link put there since it was looked at.
    std::fs::File::options()
        .write(true)
        .create_new(true)
        .open(&path)
        .ok()?;
    Some(path)
}

/// The empty read-only directory (`.tinytool/sandbox/empty.d`) that covers the checkpoint
/// store in the sandbox: the store holds copies of secret files, and the command never
/// needs it (tinytool itself writes checkpoints, outside the sandbox).
pub fn empty_dir(tinytool: &Path) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let path = tinytool.join("sandbox").join("empty.d");
    match std::fs::symlink_metadata(&path) {
        Ok(meta) if meta.is_dir() && std::fs::read_dir(&path).ok()?.next().is_none() => {
            return Some(path);
        }
        Ok(_) => return None,
        Err(_) => {}
    }
    std::fs::create_dir_all(&path).ok()?;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o555)).ok()?;
    Some(path)
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
        let first = scan(&root);
        assert_eq!(first.files, vec![root.join(".env")]);
        std::fs::create_dir(root.join("sub")).unwrap();
        std::fs::write(root.join("sub/id_rsa"), "k").unwrap();
        let second = scan(&root);
        assert!(second.files.contains(&root.join("sub/id_rsa")));
    }

    #[test]
    fn a_secret_found_once_stays_masked_when_ignored_or_past_the_cap() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir(root.join("backend")).unwrap();
        std::fs::write(root.join("backend/.env"), "K=v").unwrap();
        assert_eq!(scan(&root).files, vec![root.join("backend/.env")]);
        // A command adds the folder to an ignore file: the walk skips it now.
        std::fs::write(root.join(".ignore"), "backend/\n").unwrap();
        assert_eq!(scan(&root).files, vec![root.join("backend/.env")]);
        assert_eq!(scan(&root).files, vec![root.join("backend/.env")]);
        // Gone: no longer listed.
        std::fs::remove_file(root.join("backend/.env")).unwrap();
        std::fs::write(root.join("other"), "").unwrap();
        assert!(scan(&root).files.is_empty());
    }

    #[test]
    fn the_binary_cache_round_trips_and_rejects_garbage() {
        let dir = Path::new("/p");
        let scan = Scan {
            dirs: vec![(dir.to_path_buf(), 1), (dir.join("src"), -7)],
            files: vec![dir.join("src/.env")],
            capped: true,
        };
        let bytes = encode(dir, &scan).unwrap();
        let back = decode(dir, &bytes).unwrap();
        assert_eq!(back.dirs, scan.dirs);
        assert_eq!(back.files, scan.files);
        assert!(back.capped);
        assert!(decode(dir, &bytes[..bytes.len() - 1]).is_none());
        assert!(decode(dir, b"{}").is_none());
    }

    #[test]
    fn the_running_calls_walk_stands_in_for_stat_calls() {
        use crate::checkpoints::walk::{self, listing};
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::write(root.join(".env"), "K=v").unwrap();
        assert_eq!(scan(&root).files, vec![root.join(".env")]);
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
        let time = cached.dirs[0].1;
        let spec = libc::timespec {
            tv_sec: (time / 1_000_000_000) as libc::time_t,
            tv_nsec: (time % 1_000_000_000) as libc::c_long,
        };
        let times = [spec, spec];
        let c = std::ffi::CString::new(root.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: valid path and two timespecs.
        assert_eq!(
            unsafe { libc::utimensat(libc::AT_FDCWD, c.as_ptr(), times.as_ptr(), 0) },
            0
        );
        assert_eq!(scan(&root).files, vec![root.join(".env")]);
        walk::publish(&root, std::sync::Arc::new(walked));
        let files = scan(&root).files;
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
        assert!(scan(&root).files.is_empty());
        assert!(scan(&root).files.is_empty());
        std::fs::write(root.join("d0699/.env"), "K=v").unwrap();
        assert_eq!(scan(&root).files, vec![root.join("d0699/.env")]);
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
        assert!(scan(&root).files.is_empty());
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
        assert!(scan(&root).files.is_empty());
        // A secret below an anchor, and one in an anchor itself.
        std::fs::write(root.join("a/b/c3/d2/.env"), "K=v").unwrap();
        assert_eq!(scan(&root).files, vec![root.join("a/b/c3/d2/.env")]);
        std::fs::write(root.join("a/b/id_rsa"), "k").unwrap();
        assert!(scan(&root).files.contains(&root.join("a/b/id_rsa")));
    }

    #[test]
    fn an_anchor_swapped_for_a_link_is_a_change() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        anchored_tree(&root);
        std::fs::create_dir_all(root.join("elsewhere")).unwrap();
        assert!(scan(&root).files.is_empty());
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
        let files = scan(&root).files;
        assert!(
            files.contains(&root.join("elsewhere/b/c0/.env")),
            "{files:?}"
        );
    }

    #[test]
    fn a_cache_whose_base_is_no_earlier_anchor_is_rejected() {
        let dir = Path::new("/p");
        let dirs: Vec<(PathBuf, i128)> = (0..20)
            .map(|i| (dir.join(format!("x/y{i}")), i))
            .chain([(dir.join("x"), 0)])
            .collect();
        let mut scan = Scan {
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
        let at = MAGIC.len() + 1 + 4 + (4 + 1 + 4 + 1 + 16);
        bytes[at..at + 4].copy_from_slice(&1u32.to_le_bytes());
        assert!(parse(&bytes).is_none());
    }
}
