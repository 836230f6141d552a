//! The Unix sockets outside the project a sandboxed command must not reach.
//!
//! A Unix socket connects through a read-only mount, and some servers behind one run
//! whatever they are asked, outside every namespace of the sandbox: the Docker or Podman
//! API (`docker run -v /:/host …`), systemd's manager, D-Bus (which starts systemd units
//! too), libvirt, snapd, LXD, a tmux server (`tmux new-window CMD`), an X server (which
//! types into the user's terminals), an SSH agent (which signs for the user). So every
//! socket is found by type, not by name — each path socket bound in this network namespace
//! (`/proc/net/unix`), each one the environment names (`DOCKER_HOST`, `SSH_AUTH_SOCK`,
//! `TMUX`, `DBUS_SESSION_BUS_ADDRESS`, `WAYLAND_DISPLAY`, …), and the well-known places of
//! the services above, which a server in another network namespace may own — and covered
//! with the sandbox's empty read-only file, so a connection is refused (`ECONNREFUSED`).
//! Sockets inside the project stay open (a database the project runs is its own), and so
//! does a socket the user policy lists in `sandbox.sockets` (or `sandbox.writable`), or
//! one below a path it lists.

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

/// The sockets of this machine to cover (module doc), canonical; `opened` are the user
/// policy's paths that leave a socket open, `dir` the project (resolved).
pub fn covered(opened: &[PathBuf], dir: &Path) -> Vec<PathBuf> {
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
    let mut found = bound_sockets(&std::fs::read("/proc/net/unix").unwrap_or_default());
    found.extend(named_in_environment(&var, runtimes.first()));
    let mut covered = covered_in(opened, &runtimes, var("HOME"), found);
    covered.retain(|socket| !socket.starts_with(dir));
    covered
}

/// The paths of the sockets bound in this network namespace: the last column of
/// `/proc/net/unix` where it is a path (abstract names start with `@`; a path with a
/// newline is cut there, and such a socket is then not found, as before).
fn bound_sockets(table: &[u8]) -> Vec<PathBuf> {
    use std::os::unix::ffi::OsStrExt;
    table
        .split(|&b| b == b'\n')
        .skip(1)
        .filter_map(|line| {
            let at = line.windows(2).position(|w| w == b" /")?;
            Some(PathBuf::from(std::ffi::OsStr::from_bytes(&line[at + 1..])))
        })
        .collect()
}

/// The sockets the environment names: `DOCKER_HOST` and `CONTAINER_HOST` (`unix://…`),
/// `SSH_AUTH_SOCK`, `PULSE_SERVER`, `TMUX` (its first field), `DBUS_SESSION_BUS_ADDRESS`
/// and `DBUS_SYSTEM_BUS_ADDRESS` (`unix:path=…`), `WAYLAND_DISPLAY` (in the runtime
/// directory when relative). Their servers may live in another network namespace, where
/// `/proc/net/unix` does not list them.
fn named_in_environment(
    var: &dyn Fn(&str) -> Option<PathBuf>,
    runtime: Option<&PathBuf>,
) -> Vec<PathBuf> {
    let text = |name: &str| var(name).map(|v| v.to_string_lossy().into_owned());
    let mut out = Vec::new();
    for name in ["DOCKER_HOST", "CONTAINER_HOST"] {
        if let Some(v) = text(name)
            && let Some(path) = v.strip_prefix("unix://")
        {
            out.push(PathBuf::from(path));
        }
    }
    for name in ["SSH_AUTH_SOCK", "PULSE_SERVER"] {
        if let Some(v) = text(name) {
            out.push(PathBuf::from(v.strip_prefix("unix:").unwrap_or(&v)));
        }
    }
    if let Some(v) = text("TMUX") {
        out.extend(v.split(',').next().map(PathBuf::from));
    }
    for name in ["DBUS_SESSION_BUS_ADDRESS", "DBUS_SYSTEM_BUS_ADDRESS"] {
        if let Some(v) = text(name) {
            for address in v.split(';') {
                let fields = address.strip_prefix("unix:").unwrap_or_default();
                for field in fields.split(',') {
                    if let Some(path) = field.strip_prefix("path=") {
                        out.push(PathBuf::from(path));
                    }
                }
            }
        }
    }
    if let Some(v) = text("WAYLAND_DISPLAY") {
        let path = PathBuf::from(&v);
        match runtime {
            Some(runtime) if path.is_relative() => out.push(runtime.join(path)),
            _ => out.push(path),
        }
    }
    out.retain(|p| p.is_absolute());
    out
}

/// [`covered`] with the runtime and home directories and the sockets found otherwise
/// given.
fn covered_in(
    opened: &[PathBuf],
    runtimes: &[PathBuf],
    home: Option<PathBuf>,
    found: Vec<PathBuf>,
) -> Vec<PathBuf> {
    let mut candidates: Vec<PathBuf> = SYSTEM.iter().map(PathBuf::from).collect();
    candidates.extend(found);
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
    fn bound_sockets_are_read_from_the_kernels_table() {
        let table = b"Num       RefCount Protocol Flags    Type St Inode Path\n\
            0000000000000000: 00000002 00000000 00010000 0001 01 22 /run/docker.sock\n\
            0000000000000000: 00000002 00000000 00010000 0001 01 23 @/tmp/.X11-unix/X0\n\
            0000000000000000: 00000003 00000000 00000000 0001 03 24\n\
            0000000000000000: 00000002 00000000 00010000 0001 01 25 /tmp/a b/s.sock\n";
        assert_eq!(
            bound_sockets(table),
            [
                PathBuf::from("/run/docker.sock"),
                PathBuf::from("/tmp/a b/s.sock")
            ]
        );
    }

    #[test]
    fn sockets_named_by_the_environment() {
        let env = |name: &str| {
            let value = match name {
                "DOCKER_HOST" => "unix:///home/u/.colima/default/docker.sock",
                "SSH_AUTH_SOCK" => "/tmp/ssh-x/agent.1",
                "TMUX" => "/tmp/tmux-1000/default,123,0",
                "DBUS_SESSION_BUS_ADDRESS" => "unix:path=/run/user/1000/bus,guid=1;tcp:host=x",
                "WAYLAND_DISPLAY" => "wayland-0",
                "CONTAINER_HOST" => "tcp://example:2375",
                _ => return None,
            };
            Some(PathBuf::from(value))
        };
        let runtime = PathBuf::from("/run/user/1000");
        let found = named_in_environment(&env, Some(&runtime));
        for path in [
            "/home/u/.colima/default/docker.sock",
            "/tmp/ssh-x/agent.1",
            "/tmp/tmux-1000/default",
            "/run/user/1000/bus",
            "/run/user/1000/wayland-0",
        ] {
            assert!(found.contains(&PathBuf::from(path)), "{path}: {found:?}");
        }
        assert_eq!(found.len(), 5, "{found:?}");
    }

    #[test]
    fn finds_a_runtime_socket_unless_the_policy_opens_it() {
        let dir = tempfile::tempdir().unwrap();
        let runtime = dir.path().canonicalize().unwrap();
        let _bus = std::os::unix::net::UnixListener::bind(runtime.join("bus")).unwrap();
        std::fs::write(runtime.join("docker.sock"), "not a socket").unwrap();
        let found = covered_in(&[], std::slice::from_ref(&runtime), None, Vec::new());
        assert!(found.contains(&runtime.join("bus")), "{found:?}");
        assert!(!found.contains(&runtime.join("docker.sock")), "{found:?}");
        let found = covered_in(
            std::slice::from_ref(&runtime),
            std::slice::from_ref(&runtime),
            None,
            Vec::new(),
        );
        assert!(!found.contains(&runtime.join("bus")), "{found:?}");
    }
}
