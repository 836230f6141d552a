//! Content-addressed, deduplicated blobs of checkpointed file contents.
//!
//! Layout: `<dir>/.tinytool/checkpoints/blobs/<ID>`, where ID is
//! `<len hex>-<32 hex digits>`: the content's length and two independently keyed 64-bit
//! SipHash values of it. The hash is not cryptographic, so a blob is never trusted on its
//! name alone: storing content whose ID already exists compares the bytes, and on a
//! mismatch (a collision) the content goes under `<ID>.<n>` instead. Equal contents are
//! stored once however many checkpoints refer to them.
//!
//! Writes are atomic: the content goes to a temporary file in the blob directory, is
//! synced (each one, or all at once with [`BlobStore::sync`] before anything refers to
//! them), and is linked into place with a rename that never replaces an existing blob.
//! Two processes storing the same content at once both end with one complete blob; a
//! process killed mid-write leaves at most a temporary file, never a partial blob.

use std::hash::{Hash, Hasher};
use std::io::{ErrorKind, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

/// The blob store of one project.
#[derive(Debug, Clone)]
pub struct BlobStore {
    dir: PathBuf,
    /// Whether each blob is flushed on its own; when not, [`BlobStore::sync`] must run
    /// before anything refers to the new blobs.
    sync_each: bool,
    /// Bytes of the blobs this handle (and its clones) wrote (contents stored before are
    /// not counted again).
    stored: std::sync::Arc<std::sync::atomic::AtomicU64>,
}

/// The content ID of `bytes` (see the module doc for its grammar).
fn content_id(bytes: &[u8]) -> String {
    let half = |key: u8| {
        // SipHash with fixed keys: stable across builds and processes (unlike
        // RandomState), and a collision is caught by the byte comparison anyway.
        #[allow(deprecated)]
        let mut hasher = std::hash::SipHasher::new_with_keys(u64::from(key), !u64::from(key));
        bytes.hash(&mut hasher);
        hasher.finish()
    };
    format!("{:x}-{:016x}{:016x}", bytes.len(), half(1), half(2))
}

/// True when `id` has the grammar of a blob ID (so it can be joined to a path safely).
fn is_blob_id(id: &str) -> bool {
    !id.is_empty()
        && !id.starts_with('.')
        && id
            .bytes()
            .all(|b| b.is_ascii_hexdigit() || b == b'-' || b == b'.')
}

impl BlobStore {
    /// The store of the project whose state directory is `tinytool_dir` (`<dir>/.tinytool`).
    pub fn new(tinytool_dir: &Path) -> Self {
        BlobStore {
            dir: tinytool_dir.join("checkpoints").join("blobs"),
            sync_each: true,
            stored: Default::default(),
        }
    }

    /// The same store with flushing deferred to one [`BlobStore::sync`] (a baseline of
    /// thousands of files costs one `syncfs` instead of one `fsync` each).
    pub fn deferred(mut self) -> Self {
        self.sync_each = false;
        self
    }

    /// Flushes the file system holding the store (`syncfs`), so every blob written so far
    /// is durable before the state database refers to it.
    pub fn sync(&self) -> Result<()> {
        use std::os::fd::AsRawFd;
        let dir = match std::fs::File::open(&self.dir) {
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(()),
            other => other?,
        };
        // SAFETY: syncfs on a valid open descriptor.
        if unsafe { libc::syncfs(dir.as_raw_fd()) } != 0 {
            return Err(std::io::Error::last_os_error()).context("syncfs of the checkpoint store");
        }
        Ok(())
    }

    /// Stores `bytes` (once) and returns its blob ID.
    pub fn put(&self, bytes: &[u8]) -> Result<String> {
        std::fs::create_dir_all(&self.dir)
            .with_context(|| format!("cannot create {}", self.dir.display()))?;
        let base = content_id(bytes);
        for n in 0u32.. {
            let id = if n == 0 {
                base.clone()
            } else {
                format!("{base}.{n}")
            };
            let path = self.dir.join(&id);
            match std::fs::read(&path) {
                Ok(existing) if existing == bytes => return Ok(id),
                Ok(_) => continue,
                Err(e) if e.kind() == ErrorKind::NotFound => {}
                Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
            }
            let mut tmp = tempfile::Builder::new()
                .prefix(".tmp-")
                .tempfile_in(&self.dir)
                .with_context(|| format!("cannot write in {}", self.dir.display()))?;
            tmp.write_all(bytes)?;
            if self.sync_each {
                tmp.as_file().sync_all()?;
            }
            match tmp.persist_noclobber(&path) {
                Ok(_) => {
                    self.stored
                        .fetch_add(bytes.len() as u64, std::sync::atomic::Ordering::Relaxed);
                    return Ok(id);
                }
                // Another process linked the same ID first: compare with its blob.
                Err(e) if e.error.kind() == ErrorKind::AlreadyExists => {
                    if std::fs::read(&path)? == bytes {
                        return Ok(id);
                    }
                }
                Err(e) => {
                    return Err(e.error)
                        .with_context(|| format!("cannot store {}", path.display()));
                }
            }
        }
        unreachable!("u32 range of collision suffixes exhausted")
    }

    /// Bytes of the new blobs this handle wrote so far.
    pub fn stored_bytes(&self) -> u64 {
        self.stored.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// The content of blob `id`.
    pub fn get(&self, id: &str) -> Result<Vec<u8>> {
        anyhow::ensure!(is_blob_id(id), "not a blob id: {id:?}");
        let path = self.dir.join(id);
        std::fs::read(&path).with_context(|| format!("cannot read blob {}", path.display()))
    }

    /// Removes blob `id` (pruning); a blob already gone is not an error.
    pub fn remove(&self, id: &str) -> Result<()> {
        anyhow::ensure!(is_blob_id(id), "not a blob id: {id:?}");
        match std::fs::remove_file(self.dir.join(id)) {
            Err(e) if e.kind() != ErrorKind::NotFound => Err(e.into()),
            _ => Ok(()),
        }
    }

    /// The IDs of the stored blobs (temporary files left out).
    pub fn ids(&self) -> Result<Vec<String>> {
        let entries = match std::fs::read_dir(&self.dir) {
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(Vec::new()),
            other => other?,
        };
        let mut ids = Vec::new();
        for entry in entries {
            if let Some(name) = entry?.file_name().to_str()
                && is_blob_id(name)
            {
                ids.push(name.to_owned());
            }
        }
        Ok(ids)
    }

    /// Total bytes of the stored blobs (what `max_bytes` caps).
    pub fn total_bytes(&self) -> Result<u64> {
        let entries = match std::fs::read_dir(&self.dir) {
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(0),
            other => other?,
        };
        let mut total = 0;
        for entry in entries {
            let entry = entry?;
            total += entry.metadata().map(|m| m.len()).unwrap_or(0);
        }
        Ok(total)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_content_is_stored_once_and_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let store = BlobStore::new(dir.path());
        let a = store.put(b"hello\n").unwrap();
        assert_eq!(store.put(b"hello\n").unwrap(), a);
        let b = store.put(b"").unwrap();
        assert_ne!(a, b);
        assert_eq!(store.get(&a).unwrap(), b"hello\n");
        assert_eq!(store.get(&b).unwrap(), b"");
        assert_eq!(store.total_bytes().unwrap(), 6);
        store.remove(&a).unwrap();
        assert!(store.get(&a).is_err());
        assert!(store.get("../state.db").is_err());
    }

    #[test]
    fn a_colliding_id_never_returns_other_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let store = BlobStore::new(dir.path());
        let id = content_id(b"mine");
        std::fs::create_dir_all(dir.path().join("checkpoints/blobs")).unwrap();
        std::fs::write(dir.path().join("checkpoints/blobs").join(&id), b"evil").unwrap();
        let got = store.put(b"mine").unwrap();
        assert_eq!(got, format!("{id}.1"));
        assert_eq!(store.get(&got).unwrap(), b"mine");
    }

    #[test]
    fn concurrent_puts_leave_one_complete_blob() {
        let dir = tempfile::tempdir().unwrap();
        let store = BlobStore::new(dir.path());
        let content = vec![7u8; 1 << 20];
        let ids: Vec<String> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..4)
                .map(|_| s.spawn(|| store.put(&content).unwrap()))
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert!(ids.iter().all(|id| id == &ids[0]));
        assert_eq!(store.get(&ids[0]).unwrap(), content);
        assert_eq!(
            std::fs::read_dir(dir.path().join("checkpoints/blobs"))
                .unwrap()
                .count(),
            1
        );
    }
}
