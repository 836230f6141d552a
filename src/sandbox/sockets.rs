//! The host's service sockets a sandboxed command must not reach.
//!
//! A Unix socket connects through a read-only mount, and some daemons behind one run
//! whatever they are asked, outside every namespace of the sandbox: the Docker or Podman
//! API (`docker run -v /:/host …`), systemd's manager (`systemd-run`, `systemctl`), D-Bus
//! (which starts systemd units too), libvirt, snapd, LXD, an X server (which types into
//! the user's terminals). Their well-known sockets, where
//! they exist, are covered with the sandbox's empty read-only file, so a connection is
//! refused (`ECONNREFUSED`): the same cover as a masked secret. Other sockets (an SSH
//! agent, a database in the project, X11) stay reachable. A socket the user policy lists
//! in `sandbox.writable` (or below a path it lists) is left open.

use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};

/// Sockets at fixed places.
const SYSTEM: [&str; 16] = [
    "/run/docker.sock",
    "/var/run/docker.sock",
    "/run/podman/podman.sock",
    "/run/containerd/containerd.sock",
    "/run/k3s/containerd/containerd.sock",
    "/run/crio/crio.sock",
    "/run/systemd/private",
    "/run/dbus/system_bus_socket",
    "/var/run/dbus/system_bus_socket",
    "/run/libvirt/libvirt-sock",
    "/run/snapd.socket",
    "/run/snapd-snap.socket",
    "/var/snap/lxd/common/lxd/unix.socket",
    "/var/lib/lxd/unix.socket",
    "/var/lib/incus/unix.socket",
    "/run/incus/unix.socket",
];

/// Sockets in a user's runtime directory (`$XDG_RUNTIME_DIR`, `/run/user/<uid>`).
const RUNTIME: [&str; 5] = [
    "bus",
    "systemd/private",
    "docker.sock",
    "podman/podman.sock",
    "libvirt/libvirt-sock",
];

/// Sockets in the home directory (Docker Desktop, rootless setups).
const HOME: [&str; 2] = [".docker/run/docker.sock", ".docker/desktop/docker.sock"];

/// The service sockets of this machine to cover (module doc), canonical; `opened` are the
/// user policy's `sandbox.writable` paths, which leave a socket open.
pub fn covered(opened: &[PathBuf]) -> Vec<PathBuf> {
    let var = |name: &str| {
        std::env::var_os(name)
            .filter(|d| !d.is_empty())
            .map(PathBuf::from)
    };
    // The caller's runtime directory, and every user's where this one can list them
    // (root reaches any user's session bus and user manager): a caller whose environment
    // lost XDG_RUNTIME_DIR still has one.
    let mut runtimes: Vec<PathBuf> = var("XDG_RUNTIME_DIR").into_iter().collect();
    if let Ok(users) = std::fs::read_dir("/run/user") {
        runtimes.extend(users.flatten().map(|e| e.path()));
    }
    covered_in(opened, &runtimes, var("HOME"))
}

/// [`covered`] with the runtime and home directories given.
fn covered_in(opened: &[PathBuf], runtimes: &[PathBuf], home: Option<PathBuf>) -> Vec<PathBuf> {
    let mut candidates: Vec<PathBuf> = SYSTEM.iter().map(PathBuf::from).collect();
    for runtime in runtimes {
        candidates.extend(RUNTIME.iter().map(|rel| runtime.join(rel)));
    }
    if let Some(home) = home {
        candidates.extend(HOME.iter().map(|rel| home.join(rel)));
    }
    // X servers (`/tmp` is writable, so theirs would be reachable): an X connection can
    // type into the user's terminals.
    if let Ok(displays) = std::fs::read_dir("/tmp/.X11-unix") {
        candidates.extend(displays.flatten().map(|e| e.path()));
    }
    let opened: Vec<PathBuf> = opened
        .iter()
        .filter_map(|p| crate::paths::canonicalize(p).ok())
        .collect();
    let mut out: Vec<PathBuf> = Vec::new();
    for candidate in candidates {
        if let Some(real) = socket_at(&candidate)
            && !opened.iter().any(|o| real.starts_with(o))
            && !out.contains(&real)
        {
            out.push(real);
        }
    }
    out
}

/// The canonical path of the socket at `path`, if there is one.
fn socket_at(path: &Path) -> Option<PathBuf> {
    let meta = std::fs::metadata(path).ok()?;
    if !meta.file_type().is_socket() {
        return None;
    }
    crate::paths::canonicalize(path).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_a_runtime_socket_unless_the_policy_opens_it() {
        let dir = tempfile::tempdir().unwrap();
        let runtime = dir.path().canonicalize().unwrap();
        let _bus = std::os::unix::net::UnixListener::bind(runtime.join("bus")).unwrap();
        std::fs::write(runtime.join("docker.sock"), "not a socket").unwrap();
        let found = covered_in(&[], std::slice::from_ref(&runtime), None);
        assert!(found.contains(&runtime.join("bus")), "{found:?}");
        assert!(!found.contains(&runtime.join("docker.sock")), "{found:?}");
        let found = covered_in(
            std::slice::from_ref(&runtime),
            std::slice::from_ref(&runtime),
            None,
        );
        assert!(!found.contains(&runtime.join("bus")), "{found:?}");
    }
}
