//! Wall-clock time as file systems stamp it, and how far a stamp can be trusted.

/// How long after a directory's last change its listing must have been taken to be
/// trusted (well above any file system's timestamp granularity): a change within the
/// same tick leaves the stamp as it was.
pub const RACY_NS: i64 = 2_000_000_000;

/// Now, nanoseconds since the epoch.
pub fn now_ns() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX))
}
