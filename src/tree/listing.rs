//! What one walk leaves for the next: each directory's listing, which entries the ignore
//! rules keep, and each kept file's fingerprint, so that a directory whose listing cannot
//! have changed is not read again (nor probed for ignore files, nor matched against them).
//!
//! A listing is reused while the directory's inode, modification time and status change
//! time are the ones recorded (creating, removing or renaming an entry changes both
//! times) and the listing was taken at least [`RACY_NS`] after that modification time (a
//! change within the same clock tick as the listing would otherwise go unseen, as git's
//! "racily clean" entries). Its kept flags are reused while the ignore rules above and in
//! the directory are the same (`rules`: a hash of the parent's rules and this
//! directory's ignore files' fingerprints). The files themselves are `lstat`ed on every
//! walk.
//!
//! `tree` is the generation of the stored tree the fingerprints stand for (0: none); the
//! checkpoint code saves the cache after bringing the stored tree up to date.
//!
//! Stored in `<dir>/.tinytool/checkpoints/dirs.bin`; integers little-endian, paths
//! relative to the project directory (empty for itself):
//!
//! ```text
//! cache = "TTDIRS2\n" tree:u64 ndirs:u32 dir{ndirs}
//! dir   = path ino:u64 mtime_ns:i64 ctime_ns:i64 listed_ns:i64 parent_rules:u64 rules:u64
//!         nentries:u32 entry{nentries}
//! entry = kind:u8 (0 file, 1 directory, 2 other) flags:u8 (1 kept, 2 fingerprint follows)
//!         path [fingerprint]
//! fingerprint = size:u64 mtime_ns:i64 ino:u64 ctime_ns:i64 mode:u32
//! path  = len:u32 bytes{len}
//! ```
//!
//! A cache that does not parse is treated as empty (every directory is listed).

use std::collections::HashMap;
use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::Arc;

use super::Fingerprint;

/// The cache file's name under `.tinytool/checkpoints/`.
pub const FILE: &str = "dirs.bin";

pub use crate::clock::{RACY_NS, now_ns};

const MAGIC: &[u8] = b"TTDIRS2\n";

/// What a directory's `lstat` says about its entries.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
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
    /// The signature of the ignore rules above the directory.
    pub parent_rules: u64,
    /// The signature of the ignore rules the kept flags were computed with (those
    /// above and the directory's own ignore files).
    pub rules: u64,
    /// Its entries (names and kinds), in directory order (shared: a reused listing
    /// is not copied).
    pub names: Arc<Vec<(OsString, Kind)>>,
    /// Per entry, whether the walk keeps it (not ignored, not a skip directory).
    pub kept: Arc<Vec<bool>>,
    /// Per entry, the fingerprint of a kept file (not of a directory).
    pub fps: Arc<Vec<Option<Fingerprint>>>,
}

impl Listing {
    /// A listing of `names` with nothing kept yet (tests).
    #[cfg(test)]
    pub fn of_names(stamp: Stamp, listed_ns: i64, names: Vec<(OsString, Kind)>) -> Self {
        let n = names.len();
        Listing {
            stamp,
            listed_ns,
            parent_rules: 0,
            rules: 0,
            names: Arc::new(names),
            kept: Arc::new(vec![false; n]),
            fps: Arc::new(vec![None; n]),
        }
    }

    /// The kept files with their fingerprints.
    pub fn files(&self) -> impl Iterator<Item = (&OsString, Option<Fingerprint>)> {
        self.names
            .iter()
            .zip(self.fps.iter())
            .filter(|(_, fp)| fp.is_some())
            .map(|((name, _), fp)| (name, *fp))
    }
}

/// Listings by directory path relative to the root.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Cache {
    /// The stored-tree generation the fingerprints stand for (0: none).
    pub tree: u64,
    /// The listings.
    pub dirs: HashMap<String, Listing>,
}

/// Whether a listing taken at `listed_ns` of a directory stamped `stamp` is trusted.
pub fn settled(stamp: &Stamp, listed_ns: i64) -> bool {
    stamp.mtime_ns.max(stamp.ctime_ns).saturating_add(RACY_NS) <= listed_ns
}

fn put(out: &mut Vec<u8>, bytes: &[u8]) {
    out.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
    out.extend_from_slice(bytes);
}

/// The cache file's bytes (grammar in the module doc).
pub fn encode(cache: &Cache) -> Vec<u8> {
    let mut out = Vec::with_capacity(1 << 16);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&cache.tree.to_le_bytes());
    out.extend_from_slice(&(cache.dirs.len() as u32).to_le_bytes());
    for (rel, l) in &cache.dirs {
        put(&mut out, rel.as_bytes());
        out.extend_from_slice(&l.stamp.ino.to_le_bytes());
        out.extend_from_slice(&l.stamp.mtime_ns.to_le_bytes());
        out.extend_from_slice(&l.stamp.ctime_ns.to_le_bytes());
        out.extend_from_slice(&l.listed_ns.to_le_bytes());
        out.extend_from_slice(&l.parent_rules.to_le_bytes());
        out.extend_from_slice(&l.rules.to_le_bytes());
        out.extend_from_slice(&(l.names.len() as u32).to_le_bytes());
        for (i, (name, kind)) in l.names.iter().enumerate() {
            out.push(match kind {
                Kind::File => 0,
                Kind::Dir => 1,
                Kind::Other => 2,
            });
            let fp = l.fps.get(i).copied().flatten();
            let kept = l.kept.get(i).copied().unwrap_or(false);
            out.push(u8::from(kept) | if fp.is_some() { 2 } else { 0 });
            put(&mut out, name.as_bytes());
            if let Some(fp) = fp {
                out.extend_from_slice(&fp.size.to_le_bytes());
                out.extend_from_slice(&fp.mtime_ns.to_le_bytes());
                out.extend_from_slice(&fp.ino.to_le_bytes());
                out.extend_from_slice(&fp.ctime_ns.to_le_bytes());
                out.extend_from_slice(&fp.mode.to_le_bytes());
            }
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
    fn u32_(rest: &mut &[u8]) -> Option<u32> {
        Some(u32::from_le_bytes(take(rest, 4)?.try_into().ok()?))
    }
    fn u64_(rest: &mut &[u8]) -> Option<u64> {
        Some(u64::from_le_bytes(take(rest, 8)?.try_into().ok()?))
    }
    fn bytes_<'a>(rest: &mut &'a [u8]) -> Option<&'a [u8]> {
        let n = u32_(rest)? as usize;
        take(rest, n)
    }
    let mut rest = bytes.strip_prefix(MAGIC)?;
    let tree = u64_(&mut rest)?;
    let ndirs = u32_(&mut rest)? as usize;
    // Each directory takes at least 56 bytes: a count that cannot fit is corrupt.
    if ndirs > rest.len() / 56 {
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
        let parent_rules = u64_(&mut rest)?;
        let rules = u64_(&mut rest)?;
        let n = u32_(&mut rest)? as usize;
        if n > rest.len() / 6 {
            return None;
        }
        let mut names = Vec::with_capacity(n);
        let mut kept = Vec::with_capacity(n);
        let mut fps = Vec::with_capacity(n);
        for _ in 0..n {
            let head = take(&mut rest, 2)?;
            let kind = match head[0] {
                0 => Kind::File,
                1 => Kind::Dir,
                2 => Kind::Other,
                _ => return None,
            };
            if head[1] > 3 {
                return None;
            }
            let name = bytes_(&mut rest)?;
            names.push((OsStr::from_bytes(name).to_owned(), kind));
            kept.push(head[1] & 1 == 1);
            fps.push(if head[1] & 2 == 2 {
                Some(Fingerprint {
                    size: u64_(&mut rest)?,
                    mtime_ns: u64_(&mut rest)? as i64,
                    ino: u64_(&mut rest)?,
                    ctime_ns: u64_(&mut rest)? as i64,
                    mode: u32_(&mut rest)?,
                })
            } else {
                None
            });
        }
        dirs.insert(
            rel,
            Listing {
                stamp,
                listed_ns,
                parent_rules,
                rules,
                names: Arc::new(names),
                kept: Arc::new(kept),
                fps: Arc::new(fps),
            },
        );
    }
    rest.is_empty().then_some(Cache { tree, dirs })
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
/// the next walk listings and a comparison with the whole stored tree.
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
