//! The device nodes a sandboxed command can open.
//!
//! A device node opens for writing on a read-only mount (only `nodev` stops it), so the
//! read-only tree alone would leave a command run as root free to write a disk
//! (`dd of=/dev/sda`), a loop or SCSI-generic device or the kernel log. The sandbox
//! therefore mounts the whole tree `nodev` and opens again, each bound on itself:
//!
//! - the `/dev/null`-style devices every program expects (`null`, `zero`, `full`,
//!   `random`, `urandom`, `tty`; pseudo-terminals get a devpts of the sandbox's own, see
//!   `namespaces`);
//! - every other character device below `/dev` the caller could open without root's
//!   privileges: for a user, what the kernel's own permission check grants
//!   (`faccessat`, ACLs included: GPUs, serial ports, `/dev/kvm` through the user's
//!   groups); for root, what the mode lets everyone write (`/dev/nvidia0` at `0666`);
//! - the `sandbox.writable` paths below `/dev` (the user policy's way to open more,
//!   `"/dev"` itself for all of it).
//!
//! Block devices are never opened by the rules above: a disk is outside the project
//! whoever the caller is.
//!
//! Looking at every device costs a system call each (a hundred or more on most
//! machines), so what the walk found is cached in `<dir>/.tinytool/sandbox/devices`, a
//! text file:
//!
//! ```text
//! cache = "TTDEVICES1\n" "caller " uid " " gid (" " group)* "\n" line*
//! line  = "dir " mtime_ns " " path "\n"     a directory the walk listed
//!       | "dev " path "\n"                  a device it found
//! ```
//!
//! It serves while the caller (user, group and groups) is the same and every listed
//! directory has its recorded time (a device added, removed or renamed changes it).
//! Every device it names is checked again on every call (still a character device the
//! caller may open), so a stale or forged cache can only leave a device closed, never open
//! one: a device whose permissions were widened since stays closed until `/dev` changes.

use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

/// The devices every program may use.
const NULL_STYLE: [&str; 6] = ["null", "zero", "full", "random", "urandom", "tty"];

/// Mounts of their own below `/dev` that the sandbox replaces (`shm`: a private tmpfs;
/// `pts`: a devpts of its own) or that hold no device a command needs.
const SKIPPED: [&str; 4] = ["shm", "mqueue", "hugepages", "pts"];

/// How deep below `/dev` character devices are looked for (`/dev/dri/renderD128`,
/// `/dev/bus/usb/001/002`).
const DEPTH: usize = 3;

/// The device paths to open again inside the sandbox (module doc), each existing and
/// canonical; `writable` is the plan's writable set (its paths below `/dev` are included);
/// `cache`: where the walk's findings are kept between calls.
pub fn openable(writable: &[PathBuf], cache: Option<&Path>) -> Vec<PathBuf> {
    let dev = Path::new("/dev");
    let mut out: Vec<PathBuf> = Vec::new();
    // The walk below lists real directories and never follows a link, so what it finds
    // is canonical already: only the null-style names (which a system could make links)
    // and the policy's paths need resolving.
    let push_resolved = |path: &Path, out: &mut Vec<PathBuf>| {
        if let Ok(real) = crate::paths::canonicalize(path)
            && real.starts_with(dev)
            && !out.contains(&real)
        {
            out.push(real);
        }
    };
    for name in NULL_STYLE {
        let path = dev.join(name);
        match std::fs::symlink_metadata(&path) {
            Ok(m) if m.file_type().is_char_device() => out.push(path),
            Ok(m) if m.file_type().is_symlink() => push_resolved(&path, &mut out),
            _ => {}
        }
    }
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    if crate::paths::canonicalize(dev).is_ok_and(|real| real == dev) {
        let caller = caller();
        let found = match cache.and_then(|c| cached(c, &caller)) {
            Some(found) => found
                .into_iter()
                .filter(|path| still_openable(path, root))
                .collect(),
            None => {
                let mut walk = Walk::default();
                collect(dev, 1, root, &mut walk);
                if let Some(cache) = cache {
                    save(cache, &caller, &walk);
                }
                walk.devices
            }
        };
        for path in found {
            if !out.contains(&path) {
                out.push(path);
            }
        }
    }
    for path in writable.iter().filter(|p| p.starts_with(dev)) {
        push_resolved(path, &mut out);
    }
    out
}

/// What a walk of `/dev` saw: the directories it listed (with their times) and the
/// devices it found.
#[derive(Debug, Default)]
struct Walk {
    dirs: Vec<(PathBuf, i128)>,
    devices: Vec<PathBuf>,
}

const MAGIC: &str = "TTDEVICES1\n";

/// The cache's `caller` line: the effective user and group and the supplementary groups,
/// sorted.
fn caller() -> String {
    // SAFETY: getgroups with a null list only counts; then fills at most `n` entries.
    let mut groups = unsafe {
        let n = libc::getgroups(0, std::ptr::null_mut()).max(0);
        let mut groups = vec![0 as libc::gid_t; n as usize];
        let got = libc::getgroups(n, groups.as_mut_ptr()).max(0);
        groups.truncate(got as usize);
        groups
    };
    groups.sort_unstable();
    // SAFETY: geteuid/getegid have no preconditions.
    let (uid, gid) = unsafe { (libc::geteuid(), libc::getegid()) };
    let mut line = format!("caller {uid} {gid}");
    for g in groups {
        line.push_str(&format!(" {g}"));
    }
    line
}

fn mtime_ns(path: &Path) -> Option<i128> {
    let meta = std::fs::symlink_metadata(path).ok()?;
    Some(i128::from(meta.mtime()) * 1_000_000_000 + i128::from(meta.mtime_nsec()))
}

/// The devices a cache file lists, when it was made for `caller` and no directory it
/// lists has changed.
fn cached(cache: &Path, caller: &str) -> Option<Vec<PathBuf>> {
    let text = std::fs::read_to_string(cache).ok()?;
    let mut lines = text.strip_prefix(MAGIC)?.lines();
    if lines.next()? != caller {
        return None;
    }
    let mut devices = Vec::new();
    let mut dirs = 0;
    for line in lines {
        if let Some(rest) = line.strip_prefix("dir ") {
            let (time, path) = rest.split_once(' ')?;
            if mtime_ns(Path::new(path))? != time.parse::<i128>().ok()? {
                return None;
            }
            dirs += 1;
        } else {
            devices.push(PathBuf::from(line.strip_prefix("dev ")?));
        }
    }
    (dirs > 0).then_some(devices)
}

/// Writes the cache for `walk` (atomically: a new file renamed over the old one).
fn save(cache: &Path, caller: &str, walk: &Walk) {
    let mut text = format!("{MAGIC}{caller}\n");
    fn line_safe(p: &Path) -> Option<&str> {
        p.to_str().filter(|s| !s.contains('\n'))
    }
    for (dir, time) in &walk.dirs {
        let Some(dir) = line_safe(dir) else { return };
        text.push_str(&format!("dir {time} {dir}\n"));
    }
    for device in &walk.devices {
        if let Some(device) = line_safe(device) {
            text.push_str(&format!("dev {device}\n"));
        }
    }
    if let Some(parent) = cache.parent()
        && let Ok(mut file) = tempfile::NamedTempFile::new_in(parent)
        && std::io::Write::write_all(&mut file, text.as_bytes()).is_ok()
    {
        let _ = file.persist(cache);
    }
}

/// Whether a device a cache names may still be opened: below `/dev`, not through a link,
/// a character device other than `ptmx`, and the caller may open it.
fn still_openable(path: &Path, root: bool) -> bool {
    let below = path.starts_with("/dev")
        && path.components().all(|c| {
            matches!(
                c,
                std::path::Component::RootDir | std::path::Component::Normal(_)
            )
        });
    below
        && path.file_name().is_some_and(|n| n != "ptmx")
        && crate::paths::canonicalize(path).is_ok_and(|real| real == path)
        && std::fs::symlink_metadata(path)
            .is_ok_and(|m| m.file_type().is_char_device() && (!root || m.mode() & 0o002 != 0))
        && (root || user_may_open(path))
}

/// The character devices below `dir` (down to [`DEPTH`]) the caller may open, and the
/// directories listed on the way.
fn collect(dir: &Path, depth: usize, root: bool, walk: &mut Walk) {
    let Some(time) = mtime_ns(dir) else {
        return;
    };
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    walk.dirs.push((dir.to_path_buf(), time));
    for entry in entries.flatten() {
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() {
            let skipped = depth == 1 && SKIPPED.iter().any(|s| entry.file_name() == *s);
            if depth < DEPTH && !skipped {
                collect(&entry.path(), depth + 1, root, walk);
            }
        } else if kind.is_char_device() && entry.file_name() != "ptmx" && may_open(&entry, root) {
            walk.devices.push(entry.path());
        }
    }
}

/// Whether the caller could open the device `entry` without root's privileges.
fn may_open(entry: &std::fs::DirEntry, root: bool) -> bool {
    if root {
        // Root passes every permission check: only what everyone may write counts (a
        // device everyone may only read, such as the kernel log, root could write).
        // (The entry's metadata is a `stat` relative to the listed directory.)
        return entry.metadata().is_ok_and(|m| m.mode() & 0o002 != 0);
    }
    user_may_open(&entry.path())
}

/// Whether the kernel's permission check lets the caller read or write `path`.
fn user_may_open(path: &Path) -> bool {
    let Ok(c) = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()) else {
        return false;
    };
    [libc::R_OK, libc::W_OK].iter().any(|&how| {
        // SAFETY: a valid NUL-terminated path; faccessat only reads it.
        unsafe { libc::faccessat(libc::AT_FDCWD, c.as_ptr(), how, libc::AT_EACCESS) == 0 }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_null_style_devices_are_open_and_block_devices_never() {
        let open = openable(&[], None);
        if Path::new("/dev/null").exists() {
            assert!(open.contains(&PathBuf::from("/dev/null")), "{open:?}");
        }
        for path in &open {
            let meta = std::fs::metadata(path).unwrap();
            assert!(!meta.file_type().is_block_device(), "{path:?} in {open:?}");
            assert!(path.starts_with("/dev"), "{path:?}");
        }
    }

    #[test]
    fn writable_paths_below_dev_are_open_and_others_are_not() {
        let open = openable(&[PathBuf::from("/dev"), PathBuf::from("/tmp")], None);
        assert!(open.contains(&PathBuf::from("/dev")), "{open:?}");
        assert!(!open.contains(&PathBuf::from("/tmp")), "{open:?}");
    }

    #[test]
    fn the_walk_is_cached_and_a_forged_cache_opens_nothing_more() {
        let tmp = tempfile::tempdir().unwrap();
        let cache = tmp.path().join("devices");
        let first = openable(&[], Some(&cache));
        let text = std::fs::read_to_string(&cache).unwrap();
        assert!(text.starts_with(MAGIC), "{text}");
        assert!(text.contains("\ndir "), "{text}");
        assert_eq!(openable(&[], Some(&cache)), first);
        assert_eq!(openable(&[], None), first);
        // Another caller's cache is not used.
        assert!(cached(&cache, "caller 4242 4242").is_none());
        assert!(cached(&cache, &caller()).is_some());
        // Whatever a forged cache names, only openable character devices are opened.
        let block = std::fs::read_dir("/dev")
            .unwrap()
            .flatten()
            .find(|e| e.file_type().is_ok_and(|t| t.is_block_device()))
            .map(|e| e.path());
        let mut forged = text.clone();
        for bad in [
            "/etc/passwd",
            "/dev/../etc/passwd",
            "/dev/ptmx",
            "/dev/missing",
        ] {
            forged.push_str(&format!("dev {bad}\n"));
        }
        if let Some(block) = &block {
            forged.push_str(&format!("dev {}\n", block.display()));
        }
        std::fs::write(&cache, &forged).unwrap();
        let opened = openable(&[], Some(&cache));
        assert_eq!(opened, first);
        if let Some(block) = block {
            assert!(!opened.contains(&block));
        }
        // A listed directory with another time: the walk runs again.
        let stale = text.replacen("\ndir ", "\ndir 1", 1);
        std::fs::write(&cache, stale).unwrap();
        assert!(cached(&cache, &caller()).is_none());
        assert_eq!(openable(&[], Some(&cache)), first);
        assert_eq!(std::fs::read_to_string(&cache).unwrap(), text);
    }
}
