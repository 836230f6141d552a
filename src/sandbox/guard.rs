//! While a sandboxed command runs, what changes in the project that its sandbox, fixed
//! when it started, does not cover.
//!
//! A secret is masked by a file mounted over its name; a file that takes that name later
//! (an editor's or tinytool's own atomic write renames a new file over it) is a new
//! dentry, and the kernel drops the mount in every namespace, so the command would read
//! the new content. Every sandboxed command therefore has a guard: a thread that watches
//! (inotify) the folders of the masked secrets and stops the command's whole group the
//! moment one of their names is created again, or tinytool's own temporary file of one
//! (its write or undo of the secret) appears, saying why ([`super::Plan::stopped_line`]).
//! The stop follows the event: a command watching the folder itself may read such a file
//! in the instant between (the README says so).
//!
//! A long-lived command (a monitor or a background job, run by a supervisor) also sees
//! what did not exist when it started: the guard watches every folder the last secret scan
//! listed (at most [`MAX_WATCHES`]; new folders are watched as they appear) and stops it
//! when a secret or a `.git` appears, and every [`CHECK_EVERY`] it scans the project again
//! ([`super::Plan::outgrown`]) for what the watches missed. A foreground command is not
//! stopped for a secret it may well have made itself (`cp .env.example .env && npm
//! test`); a repository it created is swept when it ends ([`super::Plan::sweep`]).

use std::collections::HashMap;
use std::ffi::{CString, OsStr};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::Plan;

/// How often a long-lived command's project is scanned again.
const CHECK_EVERY: Duration = Duration::from_secs(1);
/// The most folders one guard watches (each watch costs the kernel about 1 KB).
const MAX_WATCHES: usize = 8192;

/// A running guard; dropping it ends its watch. The thread is not waited for, and its
/// inotify instance is closed later (by the next guard): closing one right after its watches
/// went waits for the kernel's grace period (10–20 ms), which no call should pay; once
/// dropped, the guard signals nothing (the group id may be reused).
#[derive(Debug)]
pub struct Guard {
    wake: Option<OwnedFd>,
    ended: Arc<std::sync::Mutex<bool>>,
}

impl Drop for Guard {
    fn drop(&mut self) {
        *self.ended.lock().unwrap_or_else(|e| e.into_inner()) = true;
        // Closing the write end wakes the thread's poll (the read end reports a hang-up).
        drop(self.wake.take());
    }
}

/// Starts the guard of the command whose process group is `pgid`; `None` when there is
/// nothing to guard (nothing masked and not long-lived) or no thread could be made.
pub(crate) fn start(plan: &Arc<Plan>, pgid: libc::pid_t, long_lived: bool) -> Option<Guard> {
    if plan.masked.is_empty() && !long_lived {
        return None;
    }
    let mut fds = [0; 2];
    // SAFETY: pipe2 writes two descriptors into the array.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC | libc::O_NONBLOCK) } != 0 {
        return None;
    }
    // SAFETY: both were just opened and are owned here alone.
    let (read, write) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    let ended: Arc<std::sync::Mutex<bool>> = Arc::default();
    // The folders of the masked secrets are watched before this returns, and what
    // happened to the secrets since the plan was made is checked after: no gap.
    let mut watch = Watch::new(Arc::clone(plan), pgid, long_lived, read, Arc::clone(&ended));
    let masked_parents: Vec<PathBuf> = plan
        .masking
        .masked
        .iter()
        .filter_map(|p| p.parent().map(Path::to_path_buf))
        .collect();
    for folder in masked_parents {
        // Without a watch, the secrets are looked at every [`POLL_EVERY`] instead.
        watch.polling |= !watch.add(&folder);
    }
    if let Some(line) = plan.replaced_now() {
        watch.stop(line);
    }
    std::thread::Builder::new()
        .name("sandbox-guard".into())
        .spawn(move || watch.run())
        .ok()?;
    Some(Guard {
        wake: Some(write),
        ended,
    })
}

/// How often the masked secrets are looked at where they could not be watched.
const POLL_EVERY: Duration = Duration::from_millis(100);

/// The thread's state.
struct Watch {
    plan: Arc<Plan>,
    pgid: libc::pid_t,
    long_lived: bool,
    wake: OwnedFd,
    /// Set when the command's run is over: nothing may be signalled any more.
    ended: Arc<std::sync::Mutex<bool>>,
    inotify: Option<OwnedFd>,
    folders: HashMap<i32, PathBuf>,
    /// Whether some masked secret's folder is not watched (no inotify, a limit).
    polling: bool,
}

/// Instances of ended guards, their watches removed, waiting to be closed.
static RETIRED: std::sync::Mutex<Vec<OwnedFd>> = std::sync::Mutex::new(Vec::new());

/// What makes the guard look at a new name.
const EVENTS: u32 = libc::IN_CREATE | libc::IN_MOVED_TO | libc::IN_CLOSE_WRITE;

impl Watch {
    fn new(
        plan: Arc<Plan>,
        pgid: libc::pid_t,
        long_lived: bool,
        wake: OwnedFd,
        ended: Arc<std::sync::Mutex<bool>>,
    ) -> Watch {
        // SAFETY: inotify_init1 takes flags only.
        let fd = unsafe { libc::inotify_init1(libc::IN_CLOEXEC | libc::IN_NONBLOCK) };
        // SAFETY: a descriptor just opened, owned here alone.
        let inotify = (fd >= 0).then(|| unsafe { OwnedFd::from_raw_fd(fd) });
        Watch {
            plan,
            pgid,
            long_lived,
            wake,
            ended,
            polling: fd < 0,
            inotify,
            folders: HashMap::new(),
        }
    }

    fn run(&mut self) {
        // Those of earlier guards: long enough ago to close quickly.
        drop(std::mem::take(
            &mut *RETIRED.lock().unwrap_or_else(|e| e.into_inner()),
        ));
        if self.long_lived {
            let folders = crate::secret_scan::scanned_directories(&self.plan.dir);
            for (i, folder) in folders.iter().enumerate() {
                if i % 256 == 0 && self.woken() {
                    return;
                }
                self.add(folder);
            }
        }
        let mut next_check = Instant::now() + CHECK_EVERY;
        loop {
            let mut timeout = if self.long_lived {
                let left = next_check.saturating_duration_since(Instant::now());
                i32::try_from(left.as_millis()).unwrap_or(i32::MAX)
            } else {
                -1
            };
            if self.polling {
                let poll = i32::try_from(POLL_EVERY.as_millis()).unwrap_or(100);
                timeout = if timeout < 0 { poll } else { timeout.min(poll) };
            }
            let mut polls = [
                libc::pollfd {
                    fd: self.wake.as_raw_fd(),
                    events: libc::POLLIN,
                    revents: 0,
                },
                libc::pollfd {
                    fd: self.inotify.as_ref().map_or(-1, AsRawFd::as_raw_fd),
                    events: libc::POLLIN,
                    revents: 0,
                },
            ];
            // SAFETY: poll on an array of two valid pollfd structures.
            let ready = unsafe { libc::poll(polls.as_mut_ptr(), 2, timeout) };
            if ready < 0 {
                if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                    continue;
                }
                return;
            }
            if polls[0].revents != 0 {
                return self.unwatch();
            }
            if polls[1].revents != 0
                && let Some(line) = self.read_events()
            {
                return self.stop(line);
            }
            if self.polling
                && let Some(line) = self.plan.replaced_now()
            {
                return self.stop(line);
            }
            if self.long_lived && Instant::now() >= next_check {
                if let Some(line) = self.plan.outgrown() {
                    return self.stop(line);
                }
                next_check = Instant::now() + CHECK_EVERY;
            }
        }
    }

    /// Removes every watch: closing an instance that still has some waits for the
    /// kernel to free them (a grace period of 10-20 ms, which the call's process would pay
    /// again when it exits); removed first, the close is quick.
    fn unwatch(&mut self) {
        if let Some(inotify) = &self.inotify {
            for wd in self.folders.keys() {
                // SAFETY: a valid inotify descriptor and one of its watches.
                unsafe { libc::inotify_rm_watch(inotify.as_raw_fd(), *wd) };
            }
        }
        self.folders.clear();
        // Closed by the next guard, or when the process exits: either comes after the
        // grace period the removals began, and is quick then.
        if let Some(inotify) = self.inotify.take() {
            RETIRED
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(inotify);
        }
    }

    /// Whether the guard was told to end.
    fn woken(&self) -> bool {
        let mut polls = [libc::pollfd {
            fd: self.wake.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        }];
        // SAFETY: poll on one valid pollfd, without waiting.
        unsafe { libc::poll(polls.as_mut_ptr(), 1, 0) > 0 }
    }

    /// Watches `folder`; false when it could not be (or the limit is reached).
    fn add(&mut self, folder: &Path) -> bool {
        let Some(inotify) = &self.inotify else {
            return false;
        };
        if self.folders.len() >= MAX_WATCHES {
            return false;
        }
        let Ok(name) = CString::new(folder.as_os_str().as_bytes()) else {
            return false;
        };
        let flags = EVENTS | libc::IN_ONLYDIR | libc::IN_DONT_FOLLOW;
        // SAFETY: a valid inotify descriptor and a NUL-terminated path.
        let wd = unsafe { libc::inotify_add_watch(inotify.as_raw_fd(), name.as_ptr(), flags) };
        if wd < 0 {
            return false;
        }
        self.folders.insert(wd, folder.to_path_buf());
        true
    }

    /// Reads what is pending; the line to stop the command with, if anything calls for it.
    fn read_events(&mut self) -> Option<String> {
        let mut buffer = vec![0u8; 64 * 1024];
        loop {
            let fd = self.inotify.as_ref()?.as_raw_fd();
            // SAFETY: read into a buffer of its length.
            let n = unsafe { libc::read(fd, buffer.as_mut_ptr().cast(), buffer.len()) };
            if n <= 0 {
                return None;
            }
            let mut events = Vec::new();
            let mut at = 0usize;
            let header = std::mem::size_of::<libc::inotify_event>();
            while at + header <= n as usize {
                // SAFETY: the kernel wrote a whole event here; read unaligned.
                let event: libc::inotify_event =
                    unsafe { std::ptr::read_unaligned(buffer.as_ptr().add(at).cast()) };
                let name_len = event.len as usize;
                let raw = &buffer[at + header..(at + header + name_len).min(n as usize)];
                let name = raw.split(|&b| b == 0).next().unwrap_or_default();
                events.push((event.wd, event.mask, OsStr::from_bytes(name).to_os_string()));
                at += header + name_len;
            }
            for (wd, mask, name) in events {
                if mask & libc::IN_Q_OVERFLOW != 0 {
                    // Events were lost: what they would have said is looked at.
                    if let Some(line) = self.plan.replaced_now() {
                        return Some(line);
                    }
                    if self.long_lived {
                        return self.plan.outgrown();
                    }
                    continue;
                }
                let Some(folder) = self.folders.get(&wd).cloned() else {
                    continue;
                };
                if let Some(line) = self.judge(&folder.join(name), mask) {
                    return Some(line);
                }
            }
        }
    }

    /// What the name `path` appearing (or being written) means for the command.
    fn judge(&mut self, path: &Path, mask: u32) -> Option<String> {
        let created = mask & (libc::IN_CREATE | libc::IN_MOVED_TO) != 0;
        if created && self.plan.masking.masked.iter().any(|m| m == path) {
            return Some(self.plan.replaced_line(path));
        }
        if created && let Some(line) = self.plan.rewritten_line(path) {
            return Some(line);
        }
        if !self.long_lived || self.in_left_out(path) {
            return None;
        }
        let name = path.file_name()?;
        if created && name == ".git" {
            return Some(self.plan.repository_line(path));
        }
        if created && mask & libc::IN_ISDIR != 0 {
            if crate::secret_scan::left_out(path) {
                return None;
            }
            return self.enter(path.to_path_buf());
        }
        self.plan.appeared_line(path)
    }

    /// Watches a folder that appeared and everything already in it (a `mkdir -p` or a
    /// move brings a tree whose inner folders were made before the watch).
    fn enter(&mut self, folder: PathBuf) -> Option<String> {
        let mut queue = vec![folder];
        while let Some(folder) = queue.pop() {
            if !self.add(&folder) {
                continue;
            }
            let Ok(entries) = std::fs::read_dir(&folder) else {
                continue;
            };
            for entry in entries.flatten() {
                let path = entry.path();
                if entry.file_name() == ".git" {
                    return Some(self.plan.repository_line(&path));
                }
                match entry.file_type() {
                    Ok(kind) if kind.is_dir() && !crate::secret_scan::left_out(&path) => {
                        queue.push(path);
                    }
                    Ok(kind) if kind.is_file() => {
                        if let Some(line) = self.plan.appeared_line(&path) {
                            return Some(line);
                        }
                    }
                    _ => {}
                }
            }
        }
        None
    }

    /// Whether `path` lies in a folder the secret scan leaves out (dependencies, build
    /// output): what appears there is not the project's, and no scan would mask it.
    fn in_left_out(&self, path: &Path) -> bool {
        path.ancestors()
            .skip(1)
            .take_while(|a| a.starts_with(&self.plan.dir) && *a != self.plan.dir)
            .any(crate::secret_scan::left_out)
    }

    fn stop(&self, line: String) {
        // Under the lock the run's end is decided by: while it is not over, the group
        // is the command's.
        let ended = self.ended.lock().unwrap_or_else(|e| e.into_inner());
        if *ended {
            return;
        }
        self.plan.stop_with(line);
        // SAFETY: kill takes plain integers; the group is the command's.
        unsafe { libc::kill(-self.pgid, libc::SIGKILL) };
    }
}
