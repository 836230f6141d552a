//! Which directories a call left alone, so that the walk after the call `lstat`s only
//! the directories something happened in.
//!
//! The walk before the call adds an inotify watch on every directory it walks (they
//! report creating, removing, renaming, writing, truncating and changing the metadata of
//! their entries, and changes to themselves); after the call the queued events say which
//! directories changed. Every other watched directory is *quiet*: the after-walk takes its
//! listing and fingerprints as the before-walk left them. A watch that could not be added
//! (the per-user limit) leaves its directory walked as before; a queue that overflowed,
//! or events that cannot be read, make the whole after-walk a full one.
//!
//! What inotify does not see: a file changed through a hard link in a directory that is
//! not walked (the event goes to that directory), and writes through a shared memory
//! mapping until the mapping is closed (the close is seen: every process of a call has
//! ended when the after-walk runs). The first is picked up by the next call's walk (as a
//! change between calls). Changes before the watch was added (a person's edit during the
//! before-walk) are also the next walk's: the stamps recorded then tell it.

use std::collections::{HashMap, HashSet};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::Path;
use std::sync::Mutex;

/// What a watch reports: everything that changes a directory's entries or the directory.
const EVENTS: u32 = libc::IN_MODIFY
    | libc::IN_ATTRIB
    | libc::IN_CLOSE_WRITE
    | libc::IN_MOVED_FROM
    | libc::IN_MOVED_TO
    | libc::IN_CREATE
    | libc::IN_DELETE
    | libc::IN_DELETE_SELF
    | libc::IN_MOVE_SELF;

/// An inotify instance watching the directories of one walk.
pub struct Watch {
    fd: OwnedFd,
    watched: Mutex<Watched>,
}

/// The watched directories.
#[derive(Default)]
struct Watched {
    /// Watch descriptor → directory relative to the root.
    dirs: HashMap<i32, String>,
    /// Directories that share a descriptor with another path (a bind mount): an event
    /// cannot tell which changed, so neither is quiet.
    shared: HashSet<String>,
    /// Directories events were read for.
    changed: HashSet<String>,
    /// Whether events were lost (an overflow): nothing is quiet any more.
    broken: bool,
}

impl std::fmt::Debug for Watch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let watched = self.watched.lock().map_or(0, |w| w.dirs.len());
        write!(f, "Watch({watched} directories)")
    }
}

impl Watch {
    /// A new instance with nothing watched; `None` where inotify is unavailable (the
    /// after-walk is then a full one).
    pub fn new() -> Option<Watch> {
        // SAFETY: inotify_init1 has no preconditions.
        let fd = unsafe { libc::inotify_init1(libc::IN_NONBLOCK | libc::IN_CLOEXEC) };
        if fd < 0 {
            return None;
        }
        Some(Watch {
            // SAFETY: a descriptor inotify_init1 just returned, owned by nobody else.
            fd: unsafe { OwnedFd::from_raw_fd(fd) },
            watched: Mutex::new(Watched::default()),
        })
    }

    /// Watches the directory `rel` below `root` (absolute); a directory that cannot be
    /// watched is simply not quiet later.
    pub fn add(&self, root: &Path, rel: &str) {
        use std::os::unix::ffi::OsStrExt;
        // `root/rel` and a NUL, on the stack (this runs for every directory walked).
        let (root, rel_bytes) = (root.as_os_str().as_bytes(), rel.as_bytes());
        let len = root.len() + 1 + rel_bytes.len() + 1;
        let mut buf = [0u8; 1024];
        let mut heap = Vec::new();
        let path: &mut [u8] = if len <= buf.len() {
            &mut buf[..len]
        } else {
            heap.resize(len, 0);
            &mut heap
        };
        path[..root.len()].copy_from_slice(root);
        let mut end = root.len();
        if !rel_bytes.is_empty() {
            path[end] = b'/';
            path[end + 1..end + 1 + rel_bytes.len()].copy_from_slice(rel_bytes);
            end += 1 + rel_bytes.len();
        }
        path[end] = 0;
        if path[..end].contains(&0) {
            return;
        }
        // SAFETY: valid inotify fd and a NUL-terminated path.
        let wd = unsafe {
            libc::inotify_add_watch(
                self.fd.as_raw_fd(),
                path.as_ptr().cast(),
                EVENTS | libc::IN_DONT_FOLLOW | libc::IN_ONLYDIR,
            )
        };
        if wd >= 0
            && let Ok(mut watched) = self.watched.lock()
            && let Some(other) = watched.dirs.insert(wd, rel.to_owned())
            && other != rel
        {
            watched.shared.insert(other);
            watched.shared.insert(rel.to_owned());
        }
    }

    /// Reads every queued event into `watched.changed`; false when the events cannot be
    /// trusted to be complete (an overflow, a read error).
    fn drain(&self, watched: &mut Watched) -> bool {
        if watched.broken {
            return false;
        }
        let mut buf = vec![0u8; 64 * 1024];
        const HEADER: usize = std::mem::size_of::<libc::inotify_event>();
        loop {
            // SAFETY: reads into a buffer of the given length.
            let n = unsafe { libc::read(self.fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
            if n < 0 {
                match std::io::Error::last_os_error().raw_os_error() {
                    Some(libc::EAGAIN) => return true,
                    Some(libc::EINTR) => continue,
                    _ => break,
                }
            }
            let Ok(n) = usize::try_from(n) else { break };
            if n == 0 {
                return true;
            }
            let mut rest = &buf[..n];
            // inotify_event = wd:i32 mask:u32 cookie:u32 len:u32 name[len]
            while rest.len() >= HEADER {
                let word = |at: usize| {
                    u32::from_ne_bytes([rest[at], rest[at + 1], rest[at + 2], rest[at + 3]])
                };
                let (wd, mask, len) = (word(0) as i32, word(4), word(12) as usize);
                if mask & libc::IN_Q_OVERFLOW != 0 {
                    watched.broken = true;
                    return false;
                }
                if let Some(rel) = watched.dirs.get(&wd).cloned() {
                    watched.changed.insert(rel);
                }
                match rest.get(HEADER + len..) {
                    Some(tail) => rest = tail,
                    None => {
                        watched.broken = true;
                        return false;
                    }
                }
            }
        }
        watched.broken = true;
        false
    }

    /// The watched directories nothing happened in so far (reading every queued event);
    /// `None` when the events cannot be trusted to be complete.
    pub fn quiet(&self) -> Option<HashSet<String>> {
        let mut watched = self.watched.lock().ok()?;
        if !self.drain(&mut watched) {
            return None;
        }
        let Watched {
            dirs,
            shared,
            changed,
            ..
        } = &*watched;
        Some(
            dirs.values()
                .filter(|rel| !changed.contains(*rel) && !shared.contains(*rel))
                .cloned()
                .collect(),
        )
    }

    /// The watched directories something happened in so far, and whether `rel` was
    /// watched at all (a folder made since is not): `None` when the events cannot be
    /// trusted to be complete.
    pub fn changed(&self) -> Option<(Vec<String>, HashSet<String>)> {
        let mut watched = self.watched.lock().ok()?;
        if !self.drain(&mut watched) {
            return None;
        }
        let changed = watched
            .changed
            .iter()
            .chain(&watched.shared)
            .cloned()
            .collect();
        Some((changed, watched.dirs.values().cloned().collect()))
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        if let Ok(fd) = self.fd.try_clone() {
            // The last reference goes in a throwaway child (see `release`); this one
            // closes quickly then.
            release(fd);
        }
    }
}

/// The watches of the checkpoints open in this process, with their projects (resolved)
/// and when they were made: what a call's command changed can be asked of one made
/// before the command started ([`changed_since`]).
static OPEN: Mutex<
    Vec<(
        std::path::PathBuf,
        std::time::Instant,
        std::sync::Weak<Watch>,
    )>,
> = Mutex::new(Vec::new());

/// Makes `watch` (of the project `root`, made at `made`) answer [`changed_since`] until
/// it is dropped.
pub fn publish(root: &Path, made: std::time::Instant, watch: &std::sync::Arc<Watch>) {
    if let Ok(mut open) = OPEN.lock() {
        open.retain(|(_, _, w)| w.strong_count() > 0);
        open.push((
            crate::paths::resolve_symlinks(root),
            made,
            std::sync::Arc::downgrade(watch),
        ));
    }
}

/// The directories (absolute) below `root` (resolved) where something happened since a
/// watch of it made before `since` began, and the set of those it watches (relative):
/// `None` when no such watch is open or its events are incomplete.
pub fn changed_since(
    root: &Path,
    since: std::time::Instant,
) -> Option<(Vec<std::path::PathBuf>, HashSet<String>)> {
    let watch =
        OPEN.lock().ok()?.iter().rev().find_map(|(r, made, w)| {
            (r == root && *made <= since).then(|| w.upgrade()).flatten()
        })?;
    let (changed, watched) = watch.changed()?;
    let dirs = changed
        .iter()
        .map(|rel| {
            if rel.is_empty() {
                root.to_path_buf()
            } else {
                root.join(rel)
            }
        })
        .collect();
    Some((dirs, watched))
}

/// Closes the instance in a throwaway child process. Releasing thousands of watches waits
/// for a kernel grace period (measured: 18 ms on a 2-core machine under load), which the
/// call has no reason to wait for: the child holds the last reference and pays it when it
/// exits. The child shares this process's memory (`CLONE_VM`: nothing is copied, and no
/// page becomes copy-on-write) but has its own copy of the descriptor table; it runs on
/// a stack of its own and makes only raw system calls. Where `clone` is refused the
/// instance is closed here.
fn release(fd: OwnedFd) {
    const STACK: usize = 64 * 1024;
    let raw = fd.as_raw_fd();
    let mut stack = vec![0u8; STACK];
    // The top of the stack, 16-byte aligned (the stack grows down).
    let top = (stack.as_mut_ptr() as usize + STACK) & !15;
    // SAFETY: the child runs `release_child` on `stack`, which is kept alive until the
    // child has been waited for (or the process ends, which the child outlives safely: it
    // holds the memory it shares).
    let pid = unsafe {
        libc::clone(
            release_child,
            top as *mut libc::c_void,
            libc::CLONE_VM | libc::SIGCHLD,
            raw as usize as *mut libc::c_void,
        )
    };
    drop(fd);
    if pid > 0 {
        // Reaped off the call's path (a process that ends first leaves it to init).
        let _ = std::thread::Builder::new()
            .name("watch-release".into())
            .spawn(move || {
                let mut status = 0;
                // SAFETY: waits for the child cloned above, which nobody else waits for.
                unsafe { libc::waitpid(pid, &mut status, 0) };
                drop(stack);
            });
    }
}

/// The child of [`release`]: closes its copies of every descriptor but the watch's (so it
/// holds no pipe open for a reader waiting for its end), then exits, releasing the watch.
extern "C" fn release_child(arg: *mut libc::c_void) -> libc::c_int {
    let raw = arg as usize as u32;
    // SAFETY: raw system calls with integer arguments; nothing of the shared memory is
    // touched (the results are not even looked at).
    unsafe {
        if raw > 0 {
            libc::syscall(libc::SYS_close_range, 0u32, raw - 1, 0u32);
        }
        libc::syscall(libc::SYS_close_range, raw + 1, u32::MAX, 0u32);
        libc::syscall(libc::SYS_exit_group, 0);
    }
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_directories_without_events_are_quiet() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for sub in ["a", "b", "c", "d", "e"] {
            std::fs::create_dir(root.join(sub)).unwrap();
            std::fs::write(root.join(sub).join("f"), "x").unwrap();
        }
        let watch = Watch::new().unwrap();
        watch.add(root, "");
        for sub in ["a", "b", "c", "d", "e"] {
            watch.add(root, sub);
        }
        // Written in place, its mode changed, a file created, and one left alone.
        std::fs::write(root.join("a/f"), "y").unwrap();
        let mut perms = std::fs::metadata(root.join("b/f")).unwrap().permissions();
        std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o600);
        std::fs::set_permissions(root.join("b/f"), perms).unwrap();
        std::fs::write(root.join("c/new"), "n").unwrap();
        std::fs::rename(root.join("d"), root.join("d2")).unwrap();
        let quiet = watch.quiet().unwrap();
        // "d" moved (itself and its parent changed); "e" is the only quiet one.
        assert_eq!(quiet, HashSet::from(["e".to_owned()]));
    }
}
