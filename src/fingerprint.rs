//! What one `lstat` says about a path, compared to tell whether it changed.

use std::os::unix::fs::MetadataExt;

/// What a stat call says about one path; equal fingerprints mean "not changed".
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
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
