//! The Landlock fallback: where the namespaces cannot be set up (user namespaces disabled
//! by AppArmor or a sysctl, Docker's default seccomp profile), writes are still limited to
//! the writable set of the plan, in the kernel, with the best Landlock ABI this kernel has
//! (the `landlock` crate, best effort).
//!
//! The ruleset is built in tinytool before the fork ([`prepare`]: reading is allowed
//! everywhere, every filesystem access beneath the writable paths; with the network off
//! and ABI 4 or later, TCP `connect` and `bind` are handled with no port allowed), and only
//! enforced in the forked child ([`restrict`]: `PR_SET_NO_NEW_PRIVS`, then
//! `landlock_restrict_self` on the ruleset's descriptor — two system calls, no
//! allocation).
//!
//! With the namespaces, a domain of scopes alone is added where the kernel has them
//! ([`prepare_scope`]): the host's abstract Unix sockets out of reach with the network on.
//!
//! What Landlock cannot do, said in `metadata.sandbox.missing` ([`cannot`]): make paths
//! inside a writable one read-only (git config and hooks, `.tinytool/`, and the user's
//! config and state directories where they lie under `/tmp` or `--dir`: rules only add),
//! mask secret files, end daemons after the call or a SIGKILL of tinytool (the sentinel and
//! the process group still do what they can), and keep UDP off the network (Unix sockets
//! are kept off by the same seccomp filter as with the namespaces).

use std::os::fd::{AsRawFd, OwnedFd};
use std::path::PathBuf;

use landlock::{
    ABI, Access, AccessFs, AccessNet, Ruleset, RulesetAttr, RulesetCreatedAttr, Scope,
    path_beneath_rules,
};

/// A ruleset ready to be enforced in a forked child.
#[derive(Debug)]
pub struct Prepared {
    fd: OwnedFd,
    /// The kernel's Landlock ABI version.
    pub abi: i32,
    /// Whether TCP `connect` and `bind` are denied (the network is off and the ABI has it).
    pub tcp_denied: bool,
}

/// The Landlock ABI of the running kernel; `Err` says why there is none.
fn kernel_abi() -> Result<i32, String> {
    const VERSION: libc::c_uint = 1;
    // SAFETY: landlock_create_ruleset(NULL, 0, VERSION) only returns a number.
    let abi = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0usize,
            VERSION,
        )
    };
    if abi < 1 {
        return Err(format!(
            "Landlock is not available: {}",
            std::io::Error::last_os_error()
        ));
    }
    Ok(abi as i32)
}

/// Builds the ruleset: read everywhere, everything beneath `writable`, and with `network`
/// false TCP denied where the ABI can.
pub fn prepare(writable: &[PathBuf], network: bool) -> Result<Prepared, String> {
    let abi = kernel_abi()?;
    let best = ABI::V10;
    let tcp_denied = !network && abi >= 4;
    let build = || -> Result<Option<OwnedFd>, landlock::RulesetError> {
        // Scopes (ABI 6, best effort): no connecting to the host's abstract Unix sockets
        // (an X server's, a session bus's) nor signalling processes outside the sandbox,
        // which has no PID namespace of its own here.
        let mut ruleset = Ruleset::default()
            .handle_access(AccessFs::from_all(best))?
            .scope(Scope::AbstractUnixSocket | Scope::Signal)?;
        if tcp_denied {
            ruleset = ruleset.handle_access(AccessNet::BindTcp | AccessNet::ConnectTcp)?;
        }
        let created = ruleset
            .create()?
            .add_rules(path_beneath_rules(["/"], AccessFs::from_read(best)))?
            .add_rules(path_beneath_rules(writable, AccessFs::from_all(best)))?;
        Ok(created.into())
    };
    match build() {
        Ok(Some(fd)) => Ok(Prepared {
            fd,
            abi,
            tcp_denied,
        }),
        Ok(None) => Err("Landlock is not enforced by this kernel".into()),
        Err(err) => Err(format!("cannot build the Landlock ruleset: {err}")),
    }
}

/// The Landlock domain added to the namespaces where the kernel has scopes (ABI 6,
/// Linux 6.12): no connecting to abstract Unix sockets made outside the sandbox. With the
/// network on the command shares the host's network namespace, where an X server and
/// some session buses listen on abstract names (an X connection can type into the user's
/// terminals). `None` where the kernel cannot.
pub fn prepare_scope() -> Option<Prepared> {
    let abi = kernel_abi().ok()?;
    if abi < 6 {
        return None;
    }
    let created = Ruleset::default()
        .scope(Scope::AbstractUnixSocket)
        .ok()?
        .create()
        .ok()?;
    let fd: Option<OwnedFd> = created.into();
    Some(Prepared {
        fd: fd?,
        abi,
        tcp_denied: false,
    })
}

/// Enforces a domain of [`prepare_scope`] without `PR_SET_NO_NEW_PRIVS` (which would keep
/// setuid programs from working): the caller holds `CAP_SYS_ADMIN` in its user namespace
/// (the sandbox's own, or root's). `Err` is the errno.
///
/// # Safety
/// In a forked child before `exec` (one system call).
pub unsafe fn restrict_scope(prepared: &Prepared) -> Result<(), i32> {
    // SAFETY: landlock_restrict_self on a descriptor the plan owns.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_landlock_restrict_self,
            prepared.fd.as_raw_fd(),
            0 as libc::c_uint,
        )
    };
    if rc != 0 {
        return Err(std::io::Error::last_os_error()
            .raw_os_error()
            .unwrap_or(libc::EIO));
    }
    Ok(())
}

/// Enforces `prepared` on the calling process and what it will `exec`; `Err` is the errno.
///
/// # Safety
/// In a forked child before `exec` (async-signal-safe: two system calls).
pub unsafe fn restrict(prepared: &Prepared) -> Result<(), i32> {
    let errno = || {
        std::io::Error::last_os_error()
            .raw_os_error()
            .unwrap_or(libc::EIO)
    };
    // SAFETY: prctl with integer arguments; landlock_restrict_self on a descriptor the
    // plan owns, which stays open until the plan is dropped in the parent.
    unsafe {
        if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
            return Err(errno());
        }
        if libc::syscall(
            libc::SYS_landlock_restrict_self,
            prepared.fd.as_raw_fd(),
            0 as libc::c_uint,
        ) != 0
        {
            return Err(errno());
        }
    }
    Ok(())
}

/// What Landlock cannot do in place of `layer` (a name of [`super::LAYERS`]), to follow
/// why the layer is missing.
pub fn cannot(layer: &str, prepared: &Prepared) -> &'static str {
    match layer {
        "mount" => {
            "Landlock limits writes to --dir, /tmp and sandbox.writable, but cannot keep git config and hooks, .tinytool/, the policy file or the user config and state directories read-only where they lie inside them, nor give the project a /tmp of its own (the host's is shared)"
        }
        "mask" => "Landlock cannot mask secret files: they read as they are",
        "pid" => {
            "Landlock cannot end daemons with the call nor after a SIGKILL of tinytool (the process group and sentinel still end what they reach)"
        }
        "net" if prepared.tcp_denied => {
            "no network namespace: Landlock denies TCP connect and bind, and a seccomp filter refuses every socket (UDP, raw and Unix sockets included); pipes and stream socket pairs work"
        }
        "net" => {
            "no network namespace: a seccomp filter refuses every socket (this kernel's Landlock, ABI < 4, cannot limit TCP by itself); pipes and stream socket pairs work"
        }
        _ => "not needed with Landlock alone",
    }
}
