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
/// canonical; `writable` is the plan's writable set (its paths below `/dev` are included).
pub fn openable(writable: &[PathBuf]) -> Vec<PathBuf> {
    let dev = Path::new("/dev");
    let mut out: Vec<PathBuf> = Vec::new();
    let mut push = |path: PathBuf| {
        if let Ok(real) = std::fs::canonicalize(&path)
            && real.starts_with(dev)
            && !out.contains(&real)
        {
            out.push(real);
        }
    };
    for name in NULL_STYLE {
        let path = dev.join(name);
        if std::fs::metadata(&path).is_ok_and(|m| m.file_type().is_char_device()) {
            push(path);
        }
    }
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    let mut found = Vec::new();
    collect(dev, 1, root, &mut found);
    for path in found {
        push(path);
    }
    for path in writable.iter().filter(|p| p.starts_with(dev)) {
        push(path.clone());
    }
    out
}

/// The character devices below `dir` (down to [`DEPTH`]) the caller may open.
fn collect(dir: &Path, depth: usize, root: bool, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        let path = entry.path();
        if kind.is_dir() {
            let skipped = depth == 1 && SKIPPED.iter().any(|s| entry.file_name() == *s);
            if depth < DEPTH && !skipped {
                collect(&path, depth + 1, root, out);
            }
        } else if kind.is_char_device() && entry.file_name() != "ptmx" && may_open(&path, root) {
            out.push(path);
        }
    }
}

/// Whether the caller could open the device at `path` without root's privileges.
fn may_open(path: &Path, root: bool) -> bool {
    if root {
        // Root passes every permission check: only what everyone may write counts (a
        // device everyone may only read, such as the kernel log, root could write).
        return std::fs::symlink_metadata(path).is_ok_and(|m| m.mode() & 0o002 != 0);
    }
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
        let open = openable(&[]);
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
        let open = openable(&[PathBuf::from("/dev"), PathBuf::from("/tmp")]);
        assert!(open.contains(&PathBuf::from("/dev")), "{open:?}");
        assert!(!open.contains(&PathBuf::from("/tmp")), "{open:?}");
    }
}
