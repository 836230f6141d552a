//! What the forked child does between `fork` and `exec` to enter the sandbox of a
//! [`Plan`]: async-signal-safe system calls only (the parent may have other
//! threads holding locks), no allocation.
//!
//! 1. `unshare` a mount, a PID and an IPC namespace, a network namespace when the network is off,
//!    and (not root) a user namespace first, mapping the caller's own uid and gid.
//! 2. Mounts: everything private; every writable path bound on itself; the whole tree
//!    made read-only recursively (`mount_setattr`); the writable binds made writable
//!    again; the git directories (and, for a subagent, `.tinytool/`) bound on themselves
//!    so they are mount points (`rename` and `rmdir` of a mount point fail with `EBUSY`);
//!    every protected path bound on itself read-only; every secret file covered by the
//!    empty read-only file, and the checkpoint store (copies of secret files) by the empty
//!    read-only directory, and the host's service sockets (the `sockets` module) by the
//!    empty file too. `/dev/shm` is a private tmpfs (the host's is outside the
//!    writable set). The tree is `nodev` too, but for the device nodes of the `devices`
//!    module, each bound on itself without it.
//! 3. With the network off, the namespace's own loopback is brought up.
//! 4. Init, the first process (pid 1) of the PID namespace, started sharing the leader's
//!    memory (no fork of tinytool's page tables), mounts a fresh `/proc` (skipped where
//!    refused; its `sys/` and `sysrq-trigger` bound read-only) and then only reaps orphans.
//!    The leader (the process that built the namespaces, which stays outside) then starts
//!    the command (pid 2), sharing its memory until it calls `exec`. When the command exits, the leader
//!    kills init and the kernel kills every process left in the namespace (double-forked
//!    daemons included); the leader closes its other descriptors and exits as the command
//!    did (same status, same signal). It dies with tinytool (`PR_SET_PDEATHSIG`), and
//!    init dies with it.
//! 5. The command drops the capabilities that could undo the mounts or reach around them
//!    (all but [`KEPT`]; root has no user namespace to take them away), from the bounding set
//!    too, and with the network off installs a seccomp filter that keeps it from opening
//!    Unix sockets (the host's are outside as its loopback is: [`deny_unix_sockets`]),
//!    before `exec`.
//!
//! Where `unshare` is refused, the plan's Landlock ruleset is enforced instead (the
//! `landlock` module) and the command runs without namespaces.
//!
//! A failed step is recorded in the plan's shared report (layer, step, errno); in
//! `required` mode the spawn fails, otherwise the command runs with what was set up.

use std::io;

use super::{LANDLOCK, MASK, MOUNT, NET, PID, PROC, Plan, USERNS};

/// The program a sandboxed command runs, its arguments and its whole environment,
/// prepared before the fork: the command is started sharing the leader's memory and calls
/// `execvp` itself, as the standard library would have (which has set up its
/// descriptors and directory in the leader by then, but sets the environment only after
/// `pre_exec`).
pub struct Exec {
    program: std::ffi::CString,
    _strings: Vec<std::ffi::CString>,
    /// The arguments' pointers, null-terminated.
    argv: Vec<*const libc::c_char>,
    /// The `KEY=value` pointers, null-terminated.
    envp: Vec<*const libc::c_char>,
}

// SAFETY: the pointers point into `_strings`, owned alongside and never changed.
unsafe impl Send for Exec {}
// SAFETY: as above; the struct is only read.
unsafe impl Sync for Exec {}

unsafe extern "C" {
    /// The C library's environment, which `execvp` searches `PATH` in.
    static mut environ: *const *const libc::c_char;
}

impl Exec {
    /// The program and arguments of `command` (its program is its first argument) and
    /// the environment `env` (the command's whole environment); `None` when one holds a
    /// NUL byte (the spawn then fails as it would anyway).
    pub fn of(
        command: &std::process::Command,
        env: &[(std::ffi::OsString, std::ffi::OsString)],
    ) -> Option<Exec> {
        use std::os::unix::ffi::OsStrExt;
        let c = |s: &[u8]| std::ffi::CString::new(s).ok();
        let program = c(command.get_program().as_bytes())?;
        let args: Vec<std::ffi::CString> = std::iter::once(Some(program.clone()))
            .chain(command.get_args().map(|a| c(a.as_bytes())))
            .collect::<Option<_>>()?;
        let vars: Vec<std::ffi::CString> = env
            .iter()
            .map(|(k, v)| c(&[k.as_bytes(), b"=", v.as_bytes()].concat()))
            .collect::<Option<_>>()?;
        let pointers = |list: &[std::ffi::CString]| -> Vec<*const libc::c_char> {
            list.iter()
                .map(|a| a.as_ptr())
                .chain(std::iter::once(std::ptr::null()))
                .collect()
        };
        let argv = pointers(&args);
        let envp = pointers(&vars);
        let mut strings = args;
        strings.extend(vars);
        Some(Exec {
            program,
            _strings: strings,
            argv,
            envp,
        })
    }
}

impl std::fmt::Debug for Exec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Exec({:?})", self.program)
    }
}

const AT_RECURSIVE: libc::c_uint = 0x8000;
const MOUNT_ATTR_RDONLY: u64 = 0x1;
const MOUNT_ATTR_NODEV: u64 = 0x4;

/// Names of the steps recorded in the report.
const STEPS: [&str; 21] = [
    "unshare",
    "uid map",
    "private mounts",
    "bind a writable path",
    "make the tree read-only",
    "make a writable path writable",
    "bind a protected path",
    "cover a secret file",
    "bring up loopback",
    "fork the first process",
    "mount /proc",
    "anchor a git directory",
    "landlock_restrict_self",
    "drop capabilities",
    "make /proc/sys read-only",
    "filter Unix sockets (seccomp)",
    "cover a service socket",
    "filter the keyrings (seccomp)",
    "drop every capability and set no_new_privs",
    "scan for secret files (limit reached)",
    "mount the private /tmp",
];

/// The name of step `index`.
pub(crate) fn step_name(index: i32) -> &'static str {
    STEPS.get(index as usize).copied().unwrap_or("setup")
}

#[repr(C)]
struct MountAttr {
    attr_set: u64,
    attr_clr: u64,
    propagation: u64,
    userns_fd: u64,
}

fn errno() -> i32 {
    io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EIO)
}

/// Sets (`set`) or clears the read-only flag of the mount at `path`, recursively or not.
///
/// # Safety
/// `path` must be a valid NUL-terminated string.
unsafe fn set_read_only(path: *const libc::c_char, set: bool, recursive: bool) -> bool {
    let (on, off) = if set {
        (MOUNT_ATTR_RDONLY, 0)
    } else {
        (0, MOUNT_ATTR_RDONLY)
    };
    // SAFETY: as documented for this function.
    unsafe { set_mount_attributes(path, on, off, recursive) }
}

/// Sets the mount attributes `on` and clears `off` on the mount at `path` (and every mount
/// below it when `recursive`).
///
/// # Safety
/// Valid NUL-terminated path.
unsafe fn set_mount_attributes(
    path: *const libc::c_char,
    on: u64,
    off: u64,
    recursive: bool,
) -> bool {
    let attr = MountAttr {
        attr_set: on,
        attr_clr: off,
        propagation: 0,
        userns_fd: 0,
    };
    // SAFETY: mount_setattr reads `attr` (size given) and `path`.
    unsafe {
        libc::syscall(
            libc::SYS_mount_setattr,
            libc::AT_FDCWD,
            path,
            if recursive { AT_RECURSIVE } else { 0 },
            &attr as *const MountAttr,
            size_of::<MountAttr>(),
        ) == 0
    }
}

/// # Safety
/// Valid NUL-terminated strings.
unsafe fn bind(source: *const libc::c_char, target: *const libc::c_char) -> bool {
    // SAFETY: mount with valid strings.
    unsafe {
        libc::mount(
            source,
            target,
            std::ptr::null(),
            libc::MS_BIND | libc::MS_REC,
            std::ptr::null(),
        ) == 0
    }
}

/// Writes `data` to the file at `path`.
///
/// # Safety
/// Valid NUL-terminated path.
unsafe fn write_file(path: &std::ffi::CStr, data: &[u8]) -> bool {
    // SAFETY: open/write/close with valid buffers.
    unsafe {
        let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return false;
        }
        let written = libc::write(fd, data.as_ptr().cast(), data.len());
        libc::close(fd);
        written == data.len() as isize
    }
}

/// Builds the sandbox of `plan` in the forked child (module doc). Returns in the child
/// that goes on to `exec` the command; the process that called it becomes its waiting
/// leader and never returns.
///
/// # Safety
/// Only in a child forked by `std::process::Command` before `exec`, after it leads its
/// group and started its sentinel.
pub unsafe fn enter(plan: &Plan, exec: &Exec) -> io::Result<()> {
    let report = plan.shared.report();
    // A secret past the scan's limit could not be masked: the command does not run.
    if plan.mask_capped.is_some() {
        report.fail(MASK, 19, libc::E2BIG);
        return Err(io::Error::from_raw_os_error(libc::E2BIG));
    }
    let required = plan.mode == crate::sandbox_settings::Mode::Required;
    let fail = |layer: usize, step: i32| {
        let e = errno();
        report.fail(layer, step, e);
        e
    };
    // Its own System V IPC and POSIX message queues too: the host's shared memory
    // segments and queues are not the command's to remove.
    let mut flags = libc::CLONE_NEWNS | libc::CLONE_NEWPID | libc::CLONE_NEWIPC;
    if !plan.network {
        flags |= libc::CLONE_NEWNET;
    }
    if plan.userns {
        flags |= libc::CLONE_NEWUSER;
    }
    // SAFETY: unshare with integer flags in a single-threaded forked child.
    let refused = if plan.simulate_no_namespaces {
        Some(libc::EPERM)
    } else if unsafe { libc::unshare(flags) } != 0 {
        Some(errno())
    } else {
        None
    };
    if let Some(e) = refused {
        for layer in [USERNS, MOUNT, PID, NET, MASK] {
            report.fail(layer, 0, e);
        }
        // The fallback: writes limited to the writable set by Landlock.
        if let Ok(prepared) = &plan.landlock {
            // SAFETY: two system calls in the forked child.
            match unsafe { super::landlock::restrict(prepared) } {
                Ok(()) => report.set_active(LANDLOCK),
                Err(e) => report.fail(LANDLOCK, 12, e),
            }
        }
        // Without a mount namespace nothing stands between a capability and the host:
        // every one goes (a root command could make a device node and write a disk, load a
        // module, or remount), and `no_new_privs` keeps setuid programs from bringing them
        // back. A user's command holds none and cannot drop the bounding set: the flag
        // alone does it there.
        // SAFETY: prctl and capability calls on locals in the forked child.
        let dropped = unsafe {
            libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0
                && (libc::geteuid() != 0 || drop_capabilities_but(&[]))
        };
        if !dropped {
            report.fail(LANDLOCK, 18, errno());
            if required {
                return Err(io::Error::last_os_error());
            }
        }
        // With the network off, no network namespace of its own: no socket of any
        // family (Landlock rules TCP only; UDP would reach the host's listeners).
        // SAFETY: system calls on a local program in the forked child.
        if !plan.network && !unsafe { deny_sockets(true) } && required {
            return Err(io::Error::last_os_error());
        }
        return if required {
            Err(io::Error::from_raw_os_error(e))
        } else {
            Ok(())
        };
    }
    if plan.userns {
        report.set_active(USERNS);
        // SAFETY: writes to this process's own files under /proc.
        let mapped = unsafe {
            write_file(c"/proc/self/setgroups", b"deny")
                && write_file(c"/proc/self/uid_map", plan.uid_map.as_bytes())
                && write_file(c"/proc/self/gid_map", plan.gid_map.as_bytes())
        };
        if !mapped {
            // Without a map nothing below can work, and the namespaces cannot be left.
            let e = fail(USERNS, 1);
            return Err(io::Error::from_raw_os_error(e));
        }
    }
    report.set_active(PID);
    if !plan.network {
        report.set_active(NET);
        // SAFETY: socket/ioctl on a local ifreq.
        if !unsafe { loopback_up() } {
            fail(NET, 8);
        }
    }
    // The working directory was entered before the new mounts covered it: enter it again,
    // or the command would work in the old, read-only, unmasked view.
    let mut cwd = [0 as libc::c_char; 4096];
    // SAFETY: getcwd writes at most `cwd.len()` bytes into the local buffer.
    let have_cwd = unsafe { !libc::getcwd(cwd.as_mut_ptr(), cwd.len()).is_null() };
    // SAFETY: mount calls with valid strings.
    let mounted = unsafe { build_mounts(plan) };
    // SAFETY: chdir to the NUL-terminated path getcwd wrote.
    if have_cwd && unsafe { libc::chdir(cwd.as_ptr()) } != 0 && required {
        return Err(io::Error::last_os_error());
    }
    if !mounted && required {
        return Err(io::Error::other("the sandbox's mounts could not be set up"));
    }
    // SAFETY: clones in a single-threaded child; see `first_process`.
    unsafe { first_process(plan, exec) }
}

/// The mounts of step 2; false when the read-only tree could not be built.
///
/// # Safety
/// In the child, after `unshare(CLONE_NEWNS)`.
unsafe fn build_mounts(plan: &Plan) -> bool {
    let report = plan.shared.report();
    let fail = |layer: usize, step: i32| {
        report.fail(layer, step, errno());
    };
    // SAFETY: mount calls with valid NUL-terminated strings owned by `plan`.
    unsafe {
        if libc::mount(
            std::ptr::null(),
            c"/".as_ptr(),
            std::ptr::null(),
            libc::MS_REC | libc::MS_PRIVATE,
            std::ptr::null(),
        ) != 0
        {
            fail(MOUNT, 2);
            fail(MASK, 2);
            return false;
        }
        if let Some(tmp) = &plan.private_tmp
            && !private_tmp(tmp)
        {
            fail(MOUNT, 20);
            fail(MASK, 20);
            return false;
        }
        for path in &plan.writable {
            if !bind(path.as_ptr(), path.as_ptr()) {
                fail(MOUNT, 3);
                fail(MASK, 3);
                return false;
            }
        }
        // `nodev` too: a device node opens for writing on a read-only mount (the
        // `devices` module); the ones a command may use are opened again below.
        if !set_mount_attributes(c"/".as_ptr(), MOUNT_ATTR_RDONLY | MOUNT_ATTR_NODEV, 0, true) {
            fail(MOUNT, 4);
            fail(MASK, 4);
            return false;
        }
        // Recursively: what is mounted below a writable path (a volume inside the project)
        // is writable as it was; only the path itself where a submount's read-only flag is
        // locked (the kernel then changes none).
        for path in &plan.writable {
            if !set_read_only(path.as_ptr(), false, true)
                && !set_read_only(path.as_ptr(), false, false)
            {
                fail(MOUNT, 5);
                fail(MASK, 5);
                return false;
            }
        }
        // Mount points cannot be renamed: the project's and the protected paths' ancestors
        // inside a writable path stay where they are. One that fails is the mount
        // layer's failure (the project could be swapped).
        for path in &plan.pinned {
            if !bind(path.as_ptr(), path.as_ptr()) {
                fail(MOUNT, 11);
                return false;
            }
        }
        // POSIX shared memory and semaphores (`multiprocessing`) need a writable /dev/shm,
        // but the host's is outside the project and /tmp: a private one, or none writable.
        if libc::mount(
            c"tmpfs".as_ptr(),
            c"/dev/shm".as_ptr(),
            c"tmpfs".as_ptr(),
            libc::MS_NOSUID | libc::MS_NODEV,
            c"mode=1777".as_ptr().cast(),
        ) != 0
        {
            set_read_only(c"/dev/shm".as_ptr(), true, true);
        }
        // Each bound on itself, which copies the `nodev` just set, then cleared of it.
        // One that fails stays closed (less access, never more: no layer is missing).
        for path in &plan.devices {
            if bind(path.as_ptr(), path.as_ptr()) {
                set_mount_attributes(path.as_ptr(), 0, MOUNT_ATTR_NODEV, true);
            }
        }
        pseudo_terminals();
        report.set_active(MOUNT);
        for path in &plan.anchors {
            if !bind(path.as_ptr(), path.as_ptr()) {
                fail(MOUNT, 11);
            }
        }
        for path in &plan.protected {
            if !(bind(path.as_ptr(), path.as_ptr()) && set_read_only(path.as_ptr(), true, true)) {
                fail(MOUNT, 6);
            }
        }
        if let Some(empty) = &plan.empty
            && !plan.masked.is_empty()
        {
            report.set_active(MASK);
            for (i, path) in plan.masked.iter().enumerate() {
                let source = plan.mask_sources.get(i).unwrap_or(empty);
                let bound = libc::mount(
                    source.as_ptr(),
                    path.as_ptr(),
                    std::ptr::null(),
                    libc::MS_BIND,
                    std::ptr::null(),
                ) == 0;
                // A secret removed since the scan leaves nothing to mask.
                if !bound && errno() == libc::ENOENT {
                    continue;
                }
                if !(bound && set_read_only(path.as_ptr(), true, false)) {
                    fail(MASK, 7);
                }
            }
        }
        if let Some(empty) = &plan.empty {
            for path in plan.sockets.iter().chain(&plan.unreadable) {
                if !(libc::mount(
                    empty.as_ptr(),
                    path.as_ptr(),
                    std::ptr::null(),
                    libc::MS_BIND,
                    std::ptr::null(),
                ) == 0
                    && set_read_only(path.as_ptr(), true, false))
                {
                    fail(MOUNT, 16);
                }
            }
        }
        if let Some(empty_dir) = &plan.empty_dir {
            report.set_active(MASK);
            for path in &plan.hidden {
                if !(bind(empty_dir.as_ptr(), path.as_ptr())
                    && set_read_only(path.as_ptr(), true, false))
                {
                    fail(MASK, 8);
                }
            }
        }
        // Last: the placeholders and empty folders above lie in `.tinytool/sandbox`. The
        // spill files onto the view's mount point, then the view over `.tinytool`.
        if let Some(own) = &plan.own_view {
            report.set_active(MASK);
            if !(bind(own.outputs.as_ptr(), own.mount_point.as_ptr())
                && bind(own.skeleton.as_ptr(), own.folder.as_ptr())
                && set_read_only(own.folder.as_ptr(), true, true))
            {
                fail(MASK, 9);
            }
        }
    }
    report.is_active(MOUNT)
}

/// The project's own directory on `/tmp`, then every kept host path under `/tmp` bound
/// back from its handle onto a mount point made for it, and the directories to make
/// (`private_tmp`). False when a step failed.
///
/// # Safety
/// In the child, after `unshare(CLONE_NEWNS)` and the tree made private.
unsafe fn private_tmp(tmp: &super::private_tmp::PrivateTmp) -> bool {
    use super::private_tmp::MAX_KEPT;
    if tmp.keep.len() > MAX_KEPT {
        return false;
    }
    // SAFETY: open, mount, mkdir and close on NUL-terminated strings owned by the plan
    // and on stack buffers.
    unsafe {
        // Handles first, in this mount namespace, while /tmp still shows the host's.
        let mut fds = [-1 as libc::c_int; MAX_KEPT];
        for (fd, kept) in fds.iter_mut().zip(&tmp.keep) {
            *fd = libc::open(
                kept.target.as_ptr(),
                libc::O_PATH | libc::O_CLOEXEC | libc::O_NOFOLLOW,
            );
            if *fd < 0 {
                return false;
            }
        }
        if libc::mount(
            tmp.source.as_ptr(),
            c"/tmp".as_ptr(),
            std::ptr::null(),
            libc::MS_BIND | libc::MS_REC,
            std::ptr::null(),
        ) != 0
        {
            return false;
        }
        for dir in &tmp.make {
            let made = in_private_tmp(dir, true);
            if made < 0 {
                return false;
            }
            libc::close(made);
        }
        for (kept, &fd) in tmp.keep.iter().zip(&fds) {
            // The mount point, reached through handles from /tmp without following
            // anything: what an earlier command planted in the private /tmp (a link
            // where a folder goes) must not carry a `mkdir` or a mount onto the host.
            let target = in_private_tmp(&kept.target, kept.dir);
            if target < 0 {
                return false;
            }
            let mut source = [0u8; 32];
            let mut onto = [0u8; 32];
            let mounted = libc::mount(
                fd_path(fd, &mut source).cast(),
                fd_path(target, &mut onto).cast(),
                std::ptr::null(),
                libc::MS_BIND | libc::MS_REC,
                std::ptr::null(),
            ) == 0;
            libc::close(target);
            libc::close(fd);
            if !mounted {
                return false;
            }
        }
    }
    true
}

/// `/proc/self/fd/N` in `buffer`, NUL-terminated, without allocating.
fn fd_path(fd: libc::c_int, buffer: &mut [u8; 32]) -> *const u8 {
    const PREFIX: &[u8] = b"/proc/self/fd/";
    buffer[..PREFIX.len()].copy_from_slice(PREFIX);
    let mut digits = [0u8; 10];
    let mut n = fd.max(0) as u32;
    let mut count = 0;
    loop {
        digits[count] = b'0' + (n % 10) as u8;
        count += 1;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    for i in 0..count {
        buffer[PREFIX.len() + i] = digits[count - 1 - i];
    }
    buffer[PREFIX.len() + count] = 0;
    buffer.as_ptr()
}

/// A handle on `path` (absolute, below `/tmp`, which is the private one by now) made
/// there when missing: a directory when `dir`, else an empty file, and the directories on
/// the way. Every step is relative to the handle of the one before and follows no link;
/// a link or a file where a directory goes (planted by an earlier command in the
/// project's own `/tmp`) is removed and replaced. `-1` when a step failed.
///
/// # Safety
/// In the forked child (system calls on the plan's strings and locals).
unsafe fn in_private_tmp(path: &std::ffi::CStr, dir: bool) -> libc::c_int {
    let bytes = path.to_bytes();
    let Some(rest) = bytes.strip_prefix(b"/tmp/") else {
        return -1;
    };
    let mut name = [0u8; 256];
    // SAFETY: system calls on NUL-terminated names in a local buffer and on handles this
    // function owns.
    unsafe {
        let mut at = libc::open(
            c"/tmp".as_ptr(),
            libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC,
        );
        if at < 0 {
            return -1;
        }
        let parts = rest.split(|&b| b == b'/').filter(|p| !p.is_empty());
        let count = rest.split(|&b| b == b'/').filter(|p| !p.is_empty()).count();
        for (i, part) in parts.enumerate() {
            if part.len() >= name.len() || part == b"." || part == b".." {
                libc::close(at);
                return -1;
            }
            name[..part.len()].copy_from_slice(part);
            name[part.len()] = 0;
            let c = name.as_ptr().cast::<libc::c_char>();
            let last = i + 1 == count;
            let next = if last && !dir {
                let flags = libc::O_WRONLY | libc::O_CREAT | libc::O_NOFOLLOW | libc::O_CLOEXEC;
                let mut fd = libc::openat(at, c, flags, 0o600);
                if fd < 0 && matches!(errno(), libc::ELOOP | libc::EISDIR) {
                    libc::unlinkat(at, c, 0);
                    libc::unlinkat(at, c, libc::AT_REMOVEDIR);
                    fd = libc::openat(at, c, flags, 0o600);
                }
                fd
            } else {
                let flags = libc::O_PATH | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC;
                libc::mkdirat(at, c, 0o755);
                let mut fd = libc::openat(at, c, flags);
                if fd < 0 && matches!(errno(), libc::ELOOP | libc::ENOTDIR) {
                    libc::unlinkat(at, c, 0);
                    libc::mkdirat(at, c, 0o755);
                    fd = libc::openat(at, c, flags);
                }
                fd
            };
            libc::close(at);
            if next < 0 {
                return -1;
            }
            at = next;
        }
        at
    }
}

/// Pseudo-terminals (`openpty`, `script`, test harnesses that want a terminal): a devpts
/// of the sandbox's own on `/dev/pts`, whose `ptmx` is bound on `/dev/ptmx`. The host's
/// `/dev/ptmx` cannot simply be bound on itself: the kernel finds the terminals of a
/// `ptmx` opened from `/dev` through its parent directory, which a bound single file does
/// not have. Where the mount is refused, the host's `/dev/pts` is bound on itself (its
/// terminals open; new ones only where `/dev/pts/ptmx` allows).
///
/// # Safety
/// In the child, after the tree was made `nodev`.
unsafe fn pseudo_terminals() {
    // SAFETY: mount calls with literal strings.
    unsafe {
        let own = libc::mount(
            c"devpts".as_ptr(),
            c"/dev/pts".as_ptr(),
            c"devpts".as_ptr(),
            libc::MS_NOSUID | libc::MS_NOEXEC,
            c"newinstance,ptmxmode=0666,mode=0620".as_ptr().cast(),
        ) == 0;
        if !own && bind(c"/dev/pts".as_ptr(), c"/dev/pts".as_ptr()) {
            set_mount_attributes(c"/dev/pts".as_ptr(), 0, MOUNT_ATTR_NODEV, true);
        }
        // A `/dev/ptmx` that is a link to `pts/ptmx` (containers) needs nothing more.
        let mut st: libc::stat = std::mem::zeroed();
        if libc::lstat(c"/dev/ptmx".as_ptr(), &mut st) == 0
            && st.st_mode & libc::S_IFMT == libc::S_IFCHR
            && libc::mount(
                c"/dev/pts/ptmx".as_ptr(),
                c"/dev/ptmx".as_ptr(),
                std::ptr::null(),
                libc::MS_BIND,
                std::ptr::null(),
            ) == 0
        {
            set_mount_attributes(c"/dev/ptmx".as_ptr(), 0, MOUNT_ATTR_NODEV, false);
        }
    }
}

/// The capabilities a command keeps (the set container runtimes give root, without
/// `CAP_MKNOD`): owning and reading files, signals, switching users, binding low ports,
/// raw sockets, `chroot`. Every other one is dropped, even for root: with them it could
/// unmount or remount what the sandbox mounted (`CAP_SYS_ADMIN`), reach a masked file's
/// inode by handle (`CAP_DAC_READ_SEARCH`), another mount namespace through
/// `/proc/<pid>/root` (`CAP_SYS_PTRACE`), the disk or kernel directly (`CAP_SYS_RAWIO`,
/// `CAP_MKNOD`, `CAP_SYS_MODULE`, `CAP_BPF`), reconfigure the host's network with the
/// network on (`CAP_NET_ADMIN`), set the host's clock (`CAP_SYS_TIME`), or reboot it.
const KEPT: [u32; 13] = [0, 1, 3, 4, 5, 6, 7, 8, 10, 13, 18, 29, 31];

/// Capability numbers to try dropping (the kernel knows about 41; EINVAL past its last).
const CAPABILITIES: u32 = 64;

/// Removes every capability but [`KEPT`] from the bounding set (so no `exec` of a setuid
/// or file-capability program gets them back) and from the effective, permitted,
/// inheritable and ambient sets. Without a user namespace (root) this is what keeps the
/// mounts in place; in one it costs nothing. False when a step failed.
///
/// # Safety
/// In the forked child before `exec` (system calls on locals only).
unsafe fn drop_capabilities() -> bool {
    // SAFETY: as the caller's.
    unsafe { drop_capabilities_but(&KEPT) }
}

/// Removes every capability but `kept` from the bounding, effective, permitted,
/// inheritable and ambient sets (see [`drop_capabilities`]). False when a step failed.
///
/// # Safety
/// In the forked child before `exec` (system calls on locals only).
unsafe fn drop_capabilities_but(kept: &[u32]) -> bool {
    #[repr(C)]
    struct Header {
        version: u32,
        pid: i32,
    }
    #[repr(C)]
    #[derive(Clone, Copy)]
    struct Data {
        effective: u32,
        permitted: u32,
        inheritable: u32,
    }
    const VERSION_3: u32 = 0x2008_0522;
    // SAFETY: prctl with integers; capget/capset on local, correctly sized structures.
    unsafe {
        let mut ok = true;
        for cap in (0..CAPABILITIES).filter(|c| !kept.contains(c)) {
            if libc::prctl(libc::PR_CAPBSET_DROP, cap as libc::c_ulong, 0, 0, 0) != 0 {
                // EINVAL: past the last capability this kernel knows (they are numbered
                // without gaps), so none further can be held.
                if errno() == libc::EINVAL {
                    break;
                }
                ok = false;
            }
        }
        libc::prctl(
            libc::PR_CAP_AMBIENT,
            libc::PR_CAP_AMBIENT_CLEAR_ALL as libc::c_ulong,
            0,
            0,
            0,
        );
        let mut header = Header {
            version: VERSION_3,
            pid: 0,
        };
        let mut data = [Data {
            effective: 0,
            permitted: 0,
            inheritable: 0,
        }; 2];
        if libc::syscall(
            libc::SYS_capget,
            &mut header as *mut Header,
            data.as_mut_ptr(),
        ) != 0
        {
            return false;
        }
        let mut keep = [0u32; 2];
        for &cap in kept {
            keep[(cap / 32) as usize] |= 1u32 << (cap % 32);
        }
        for (word, kept) in data.iter_mut().zip(keep) {
            word.effective &= kept;
            word.permitted &= kept;
            word.inheritable &= kept;
        }
        header.version = VERSION_3;
        header.pid = 0;
        if libc::syscall(libc::SYS_capset, &mut header as *mut Header, data.as_ptr()) != 0 {
            return false;
        }
        ok
    }
}

// Classic BPF for the seccomp filters: their instructions and return values.
const LD_W_ABS: u16 = (libc::BPF_LD | libc::BPF_W | libc::BPF_ABS) as u16;
const JEQ: u16 = (libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K) as u16;
const JGT: u16 = (libc::BPF_JMP | libc::BPF_JGT | libc::BPF_K) as u16;
const AND: u16 = (libc::BPF_ALU | libc::BPF_AND | libc::BPF_K) as u16;
const RET: u16 = (libc::BPF_RET | libc::BPF_K) as u16;
const ALLOW: u32 = 0x7fff_0000;
const ERRNO: u32 = 0x0005_0000;

/// One BPF instruction.
fn op(code: u16, jt: u8, jf: u8, k: u32) -> libc::sock_filter {
    libc::sock_filter { code, jt, jf, k }
}

/// Installs `program` as a seccomp filter of the calling thread; false when refused.
///
/// # Safety
/// In the forked child before `exec`, with `no_new_privs` set or `CAP_SYS_ADMIN` held.
unsafe fn install_filter(program: &[libc::sock_filter]) -> bool {
    let prog = libc::sock_fprog {
        len: program.len() as u16,
        filter: program.as_ptr() as *mut libc::sock_filter,
    };
    // SAFETY: prctl with a pointer to the program, which the kernel copies.
    unsafe {
        libc::prctl(
            libc::PR_SET_SECCOMP,
            libc::SECCOMP_MODE_FILTER as libc::c_ulong,
            &prog as *const libc::sock_fprog as libc::c_ulong,
            0,
            0,
        ) == 0
    }
}

/// Where the seccomp filter of [`deny_unix_sockets`] can be built: the audit architecture,
/// `socket`, `socketpair` and `io_uring_setup` natively, and the 32-bit compat ABI's
/// architecture, `socketcall`, `socket`, `socketpair` (u32::MAX where there is none).
#[cfg(target_arch = "x86_64")]
const SECCOMP_ABI: Option<[u32; 8]> = Some([0xC000_003E, 41, 53, 425, 0x4000_0003, 102, 359, 360]);
#[cfg(target_arch = "aarch64")]
const SECCOMP_ABI: Option<[u32; 8]> =
    Some([0xC000_00B7, 198, 199, 425, 0x4000_0028, u32::MAX, 281, 288]);
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
const SECCOMP_ABI: Option<[u32; 8]> = None;

/// With the network off, the host's Unix sockets (`/run/docker.sock`, a server's socket
/// in `/tmp`) are outside too, and so are the families no network namespace confines (a
/// virtual machine's host over vsock, Bluetooth): a seccomp filter makes
/// `socket(AF_UNIX | AF_VSOCK | AF_BLUETOOTH, …)` and a `socketpair(AF_UNIX, …)` other
/// than a stream or seqpacket one fail with `EPERM` (a datagram or raw pair can be
/// re-connected or `sendto` any socket path; stream pairs, pipes and inherited sockets
/// still work), denies the 32-bit `socketcall`, and makes `io_uring_setup` fail with
/// `ENOSYS` (an io_uring could create a socket past the filter; programs fall back to
/// plain calls). Sets `no_new_privs`, which a filter needs without `CAP_SYS_ADMIN`. False
/// when it could not be installed.
///
/// # Safety
/// In the forked child before `exec` (system calls on a local program only).
unsafe fn deny_unix_sockets() -> bool {
    // SAFETY: as the caller's.
    unsafe { deny_sockets(false) }
}

/// [`deny_unix_sockets`], or with `every_family` every `socket()` whatever its family
/// (IP included: where there is no network namespace of the command's own, that is what
/// keeps the network off for UDP, raw and every family Landlock does not rule). Stream and
/// seqpacket Unix pairs still work.
///
/// # Safety
/// In the forked child before `exec` (system calls on a local program only).
unsafe fn deny_sockets(every_family: bool) -> bool {
    let Some(
        [
            native,
            socket,
            socketpair,
            uring,
            compat,
            socketcall,
            compat_socket,
            compat_socketpair,
        ],
    ) = SECCOMP_ABI
    else {
        // SAFETY: sets errno for the report.
        unsafe { *libc::__errno_location() = libc::ENOSYS };
        return false;
    };
    // seccomp_data: nr at 0, arch at 4, args[0] at 16 and args[1] at 24 (their low
    // halves, little-endian). Jumps skip that many instructions.
    let program = [
        op(LD_W_ABS, 0, 0, 4),             // 0: arch
        op(JEQ, 6, 0, compat),             // 1: compat -> 8
        op(JEQ, 0, 21, native),            // 2: other -> allow (24)
        op(LD_W_ABS, 0, 0, 0),             // 3: nr
        op(AND, 0, 0, !0x4000_0000),       // 4: the x32 bit off
        op(JEQ, 20, 0, uring),             // 5: -> ENOSYS (26)
        op(JEQ, 6, 0, socket),             // 6: -> socket check (13)
        op(JEQ, 9, 16, socketpair),        // 7: -> pair check (17), else allow
        op(LD_W_ABS, 0, 0, 0),             // 8: compat nr
        op(JEQ, 15, 0, socketcall),        // 9: -> EPERM (25)
        op(JEQ, 15, 0, uring),             // 10: -> ENOSYS (26)
        op(JEQ, 1, 0, compat_socket),      // 11: -> socket check (13)
        op(JEQ, 4, 11, compat_socketpair), // 12: -> pair check (17), else allow
        op(LD_W_ABS, 0, 0, 16),            // 13: socket: the domain
        if every_family {
            op(JEQ, 10, 10, libc::AF_UNIX as u32) // 14: any -> EPERM (25)
        } else {
            op(JEQ, 10, 0, libc::AF_UNIX as u32) // 14: -> EPERM (25)
        },
        op(JEQ, 9, 0, libc::AF_VSOCK as u32), // 15: -> EPERM (25)
        op(JEQ, 8, 7, libc::AF_BLUETOOTH as u32), // 16: -> EPERM (25), else allow
        op(LD_W_ABS, 0, 0, 16),               // 17: socketpair: the domain
        op(JEQ, 0, 5, libc::AF_UNIX as u32),  // 18: else allow (24)
        op(LD_W_ABS, 0, 0, 24),               // 19: the type
        op(AND, 0, 0, 0xf),                   // 20: without SOCK_CLOEXEC/NONBLOCK
        op(JEQ, 2, 0, libc::SOCK_STREAM as u32), // 21: -> allow (24)
        op(JEQ, 1, 0, libc::SOCK_SEQPACKET as u32), // 22: -> allow (24)
        op(RET, 0, 0, ERRNO | libc::EPERM as u32), // 23: a datagram or raw pair
        op(RET, 0, 0, ALLOW),                 // 24
        op(RET, 0, 0, ERRNO | libc::EPERM as u32), // 25
        op(RET, 0, 0, ERRNO | libc::ENOSYS as u32), // 26
    ];
    // SAFETY: prctl with integers, then the filter (see `install_filter`).
    unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 && install_filter(&program) }
}

/// Where the keyring filter of [`isolate_keyrings`] can be built: the audit
/// architecture, `add_key`, `request_key` and `keyctl` natively, then the same for the
/// 32-bit compat ABI.
#[cfg(target_arch = "x86_64")]
const KEYRING_ABI: Option<[u32; 8]> =
    Some([0xC000_003E, 248, 249, 250, 0x4000_0003, 286, 287, 288]);
#[cfg(target_arch = "aarch64")]
const KEYRING_ABI: Option<[u32; 8]> =
    Some([0xC000_00B7, 217, 218, 219, 0x4000_0028, 309, 310, 311]);
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
const KEYRING_ABI: Option<[u32; 8]> = None;

/// Root runs without a user namespace, so it shares the host's keyrings (root's user
/// keyring holds credentials, and what a command adds there outlives it): a seccomp
/// filter refuses `add_key`, `request_key` and every `keyctl` but reading a keyring's id
/// and joining a new session keyring, with `EPERM`. Installed while the process still has
/// `CAP_SYS_ADMIN`, so without `no_new_privs`. False when it could not be installed.
///
/// # Safety
/// In the forked child before `exec` (system calls on a local program only).
unsafe fn isolate_keyrings() -> bool {
    let Some(
        [
            native,
            add_key,
            request_key,
            keyctl,
            compat,
            c_add_key,
            c_request_key,
            c_keyctl,
        ],
    ) = KEYRING_ABI
    else {
        return false;
    };
    let program = [
        op(LD_W_ABS, 0, 0, 4),                     // 0: arch
        op(JEQ, 8, 0, compat),                     // 1: compat -> 10
        op(JEQ, 0, 12, native),                    // 2: other -> allow (15)
        op(LD_W_ABS, 0, 0, 0),                     // 3: nr
        op(AND, 0, 0, !0x4000_0000),               // 4: the x32 bit off
        op(JEQ, 8, 0, add_key),                    // 5: -> EPERM (14)
        op(JEQ, 7, 0, request_key),                // 6: -> EPERM (14)
        op(JEQ, 0, 7, keyctl),                     // 7: else allow (15)
        op(LD_W_ABS, 0, 0, 16),                    // 8: the operation
        op(JGT, 4, 5, 1),                          // 9: past JOIN_SESSION_KEYRING -> EPERM
        op(LD_W_ABS, 0, 0, 0),                     // 10: compat nr
        op(JEQ, 2, 0, c_add_key),                  // 11: -> EPERM (14)
        op(JEQ, 1, 0, c_request_key),              // 12: -> EPERM (14)
        op(JEQ, 0, 1, c_keyctl),                   // 13: else allow (15)
        op(RET, 0, 0, ERRNO | libc::EPERM as u32), // 14
        op(RET, 0, 0, ALLOW),                      // 15
    ];
    // SAFETY: see `install_filter`.
    unsafe { install_filter(&program) }
}

/// Brings up `lo` in the new network namespace.
///
/// # Safety
/// In the child, after `unshare(CLONE_NEWNET)`.
unsafe fn loopback_up() -> bool {
    // SAFETY: a datagram socket and two ioctls on a zeroed ifreq naming "lo".
    unsafe {
        let sock = libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0);
        if sock < 0 {
            return false;
        }
        let mut req: libc::ifreq = std::mem::zeroed();
        req.ifr_name[0] = b'l' as libc::c_char;
        req.ifr_name[1] = b'o' as libc::c_char;
        let mut ok = libc::ioctl(sock, libc::SIOCGIFFLAGS, &mut req) == 0;
        if ok {
            req.ifr_ifru.ifru_flags |= libc::IFF_UP as libc::c_short;
            ok = libc::ioctl(sock, libc::SIOCSIFFLAGS, &req) == 0;
        }
        libc::close(sock);
        ok
    }
}

/// Closes every descriptor from 3 up: the leader and init must not hold the exec-error
/// pipe (the spawn would wait for them) nor anything else of tinytool's.
///
/// # Safety
/// Only in a forked child that will never exec.
unsafe fn close_inherited() {
    // SAFETY: plain system calls on this process's own descriptors.
    unsafe {
        if libc::syscall(
            libc::SYS_close_range,
            3 as libc::c_uint,
            libc::c_uint::MAX,
            0,
        ) != 0
        {
            for fd in 3..4096 {
                libc::close(fd);
            }
        }
    }
}

/// Waits for `pid`, reaping any other child on the way (orphans re-parented to init).
///
/// # Safety
/// In a child that owns `pid`.
unsafe fn wait_for(pid: libc::pid_t) -> libc::c_int {
    let mut status = 0;
    loop {
        // SAFETY: waitpid writes into a local.
        let r = unsafe { libc::waitpid(-1, &mut status, 0) };
        if r == pid {
            return status;
        }
        if r < 0 && errno() != libc::EINTR {
            return 127 << 8;
        }
    }
}

/// What init needs from the leader (on the leader's stack, which stays put: the leader
/// never returns from [`first_process`]).
struct InitArgs<'a> {
    plan: &'a Plan,
    /// The write end of the pipe init says it is ready on.
    ready: libc::c_int,
    /// The read end, the leader's: closed in init.
    ready_read: libc::c_int,
}

/// The stack init runs on (it shares the leader's memory, so not the leader's stack).
const INIT_STACK: usize = 64 * 1024;

/// Init, pid 1 of the namespace: mounts a fresh `/proc`, says it is ready, then only reaps
/// the orphans re-parented to it until the leader kills it after the command.
///
/// It shares the leader's memory (`CLONE_VM`: no copy of tinytool's page tables, the
/// most expensive part of a fork) but not its descriptors. It makes raw system calls
/// only, and reads `errno` only before it says it is ready, while the leader waits on the
/// pipe and makes none (the two share the thread-local `errno`).
extern "C" fn init_main(arg: *mut libc::c_void) -> libc::c_int {
    // SAFETY: `arg` is the leader's `InitArgs`, alive while init runs (module doc); the
    // calls below are system calls on locals, constant strings and that struct.
    unsafe {
        let args = &*(arg as *const InitArgs);
        let report = args.plan.shared.report();
        libc::syscall(libc::SYS_close, args.ready_read);
        libc::syscall(
            libc::SYS_prctl,
            libc::PR_SET_PDEATHSIG,
            libc::SIGKILL as libc::c_ulong,
            0,
            0,
            0,
        );
        libc::syscall(
            libc::SYS_prctl,
            libc::PR_SET_NAME,
            c"tinytool-init".as_ptr() as libc::c_ulong,
            0,
            0,
            0,
        );
        if libc::syscall(
            libc::SYS_mount,
            c"proc".as_ptr(),
            c"/proc".as_ptr(),
            c"proc".as_ptr(),
            (libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC) as libc::c_ulong,
            std::ptr::null::<libc::c_void>(),
        ) != 0
        {
            report.fail(PROC, 10, errno());
        } else {
            // A fresh /proc is writable: its kernel settings (`core_pattern` runs a
            // program as root on the host) and the SysRq trigger must not be.
            for path in [c"/proc/sys", c"/proc/sysrq-trigger"] {
                // ENOENT: a kernel without it (no SysRq), nothing to protect.
                if !(bind(path.as_ptr(), path.as_ptr()) && set_read_only(path.as_ptr(), true, true))
                    && errno() != libc::ENOENT
                {
                    report.fail(PROC, 14, errno());
                }
            }
        }
        libc::syscall(libc::SYS_write, args.ready, c"1".as_ptr(), 1usize);
        // From here on `args` may be gone: the leader has gone on.
        close_inherited();
        let mut child_ended: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut child_ended);
        libc::sigaddset(&mut child_ended, libc::SIGCHLD);
        loop {
            // Every signal is blocked: wait for SIGCHLD, then reap what ended.
            libc::syscall(
                libc::SYS_rt_sigtimedwait,
                &child_ended as *const libc::sigset_t,
                std::ptr::null_mut::<libc::siginfo_t>(),
                std::ptr::null::<libc::timespec>(),
                8usize,
            );
            while libc::syscall(
                libc::SYS_wait4,
                -1 as libc::pid_t,
                std::ptr::null_mut::<libc::c_int>(),
                libc::WNOHANG | libc::__WALL,
                std::ptr::null_mut::<libc::rusage>(),
            ) > 0
            {}
        }
    }
}

/// What the command needs from the leader (on the leader's stack: the leader waits
/// until the command has called `exec`).
struct CommandArgs<'a> {
    plan: &'a Plan,
    exec: &'a Exec,
    /// The signal mask to run the program with.
    mask: &'a libc::sigset_t,
    /// Where the command says why `execvp` failed.
    exec_error: *mut libc::c_int,
}

/// The stack the command runs on until `exec` (the leader's memory, not its stack).
const COMMAND_STACK: usize = 256 * 1024;

/// The command, pid 2: out of the host's abstract sockets (while it still has
/// CAP_SYS_ADMIN, which stands in for no_new_privs), without the capabilities that could
/// undo the mounts, then on to `execvp`. A scope that fails leaves what the kernel had.
///
/// It shares the leader's memory (`CLONE_VM | CLONE_VFORK`: no copy of tinytool's page
/// tables) while the leader waits, so it may use `errno` and the leader's stack data.
extern "C" fn command_main(arg: *mut libc::c_void) -> libc::c_int {
    // SAFETY: `arg` is the leader's `CommandArgs`, alive while the leader waits; system
    // calls on it and on locals only, then exec.
    unsafe {
        let args = &*(arg as *const CommandArgs);
        let plan = args.plan;
        let report = plan.shared.report();
        if let Some(scope) = &plan.scope {
            let _ = super::landlock::restrict_scope(scope);
        }
        if !plan.userns && !isolate_keyrings() {
            report.fail(MOUNT, 17, errno());
            if plan.mode == crate::sandbox_settings::Mode::Required {
                libc::_exit(126);
            }
        }
        if !drop_capabilities() {
            report.fail(MOUNT, 13, errno());
            if plan.mode == crate::sandbox_settings::Mode::Required {
                libc::_exit(126);
            }
        }
        if !plan.network && !deny_unix_sockets() {
            report.fail(NET, 15, errno());
            if plan.mode == crate::sandbox_settings::Mode::Required {
                libc::_exit(126);
            }
        }
        libc::sigprocmask(libc::SIG_SETMASK, args.mask, std::ptr::null_mut());
        // As the standard library does: `execvp` searches the new environment's PATH.
        // (The leader's own `environ` changes too; it never reads it again.)
        environ = args.exec.envp.as_ptr();
        libc::execvp(args.exec.program.as_ptr(), args.exec.argv.as_ptr());
        *args.exec_error = errno().max(1);
        libc::_exit(127)
    }
}

/// Step 4 of the module doc: the leader starts init (pid 1 of the namespace) sharing its
/// memory, waits until init has mounted `/proc`, then starts the command (pid 2) sharing
/// its memory too, which calls `exec` ([`command_main`]); neither copies tinytool's page
/// tables. A program that cannot be run fails the spawn, as without the sandbox. The leader and init block every signal: what the command sends its
/// own group (`kill -USR1 0`) must not end them, and tinytool's deadline reaches the
/// command, which is in the same group. Init reaps orphans; when the command ends, the
/// leader kills init, so the kernel kills the rest of the namespace, and ends as the
/// command did (same status, the same signal raised again).
///
/// # Safety
/// In the child, after `unshare(CLONE_NEWPID)`.
unsafe fn first_process(plan: &Plan, exec: &Exec) -> io::Result<()> {
    let report = plan.shared.report();
    // SAFETY: signal-mask calls on locals, a pipe, an anonymous mapping and the clone of
    // init as documented on `init_main`; fork as documented above.
    unsafe {
        let mut all: libc::sigset_t = std::mem::zeroed();
        let mut old: libc::sigset_t = std::mem::zeroed();
        libc::sigfillset(&mut all);
        libc::sigprocmask(libc::SIG_BLOCK, &all, &mut old);
        let failed = |old: &libc::sigset_t| {
            report.fail(PID, 9, errno());
            libc::sigprocmask(libc::SIG_SETMASK, old, std::ptr::null_mut());
            Err(io::Error::last_os_error())
        };
        let mut ready = [-1 as libc::c_int; 2];
        if libc::pipe2(ready.as_mut_ptr(), libc::O_CLOEXEC) != 0 {
            return failed(&old);
        }
        let stack = libc::mmap(
            std::ptr::null_mut(),
            INIT_STACK,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_STACK,
            -1,
            0,
        );
        if stack == libc::MAP_FAILED {
            return failed(&old);
        }
        let args = InitArgs {
            plan,
            ready: ready[1],
            ready_read: ready[0],
        };
        let init = libc::clone(
            init_main,
            stack.cast::<u8>().add(INIT_STACK).cast(),
            libc::CLONE_VM | libc::SIGCHLD,
            &args as *const InitArgs as *mut libc::c_void,
        );
        if init < 0 {
            return failed(&old);
        }
        libc::close(ready[1]);
        let mut byte = 0u8;
        let said = libc::read(ready[0], (&mut byte as *mut u8).cast(), 1);
        libc::close(ready[0]);
        if said != 1 {
            // Init died before it was ready: the namespace is gone with it.
            libc::kill(init, libc::SIGKILL);
            report.fail(PID, 9, libc::ECHILD);
            libc::sigprocmask(libc::SIG_SETMASK, &old, std::ptr::null_mut());
            return Err(io::Error::from_raw_os_error(libc::ECHILD));
        }
        let stack = libc::mmap(
            std::ptr::null_mut(),
            COMMAND_STACK,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_STACK,
            -1,
            0,
        );
        if stack == libc::MAP_FAILED {
            libc::kill(init, libc::SIGKILL);
            return failed(&old);
        }
        let mut exec_error: libc::c_int = 0;
        let args = CommandArgs {
            plan,
            exec,
            mask: &old,
            exec_error: &mut exec_error,
        };
        // The leader waits (CLONE_VFORK) until the command has called `exec`, or exited.
        let command = libc::clone(
            command_main,
            stack.cast::<u8>().add(COMMAND_STACK).cast(),
            libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD,
            &args as *const CommandArgs as *mut libc::c_void,
        );
        if command < 0 {
            libc::kill(init, libc::SIGKILL);
            return failed(&old);
        }
        let exec_error = std::ptr::read_volatile(&exec_error);
        if exec_error != 0 {
            // No program to run: the spawn fails as it would have without the sandbox.
            libc::kill(init, libc::SIGKILL);
            wait_for(command);
            wait_for(init);
            return Err(io::Error::from_raw_os_error(exec_error));
        }
        // The leader.
        close_inherited();
        let status = wait_for(command);
        libc::kill(init, libc::SIGKILL);
        wait_for(init);
        if !libc::WIFSIGNALED(status) {
            libc::_exit(libc::WEXITSTATUS(status));
        }
        let signal = libc::WTERMSIG(status);
        let mut default: libc::sigaction = std::mem::zeroed();
        default.sa_sigaction = libc::SIG_DFL;
        libc::sigaction(signal, &default, std::ptr::null_mut());
        libc::kill(libc::getpid(), signal);
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, signal);
        libc::sigprocmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
        libc::_exit(128 + signal);
    }
}
