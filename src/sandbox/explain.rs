//! The last line of a failed sandboxed command's output: which sandbox rule stopped it and
//! which policy setting would allow it, recognised from the command's own error messages.
//!
//! Messages are recognised in any case and in the wordings of the common runtimes (C's
//! `strerror`, Node's and Go's lower case, `EROFS`/`EACCES`/`EPERM` codes):
//!
//! - under Landlock alone, `Permission denied`: the writable set;
//! - `Read-only file system` (`EROFS`), or `Device or resource busy` / `Permission
//!   denied` / `Invalid cross-device link` (a hard link to a bound file) on a protected
//!   path: the filesystem rule, naming the path the message names ([`read_only_path`])
//!   and the exact `sandbox.writable` entry that opens it (protected paths cannot be
//!   opened);
//! - `Permission denied` naming a path below `/dev/`: the device rule (`sandbox.writable`
//!   opens one);
//! - `Operation not permitted` and the like from `mount`, `umount`, `mknod` or `unshare`:
//!   the capabilities no command keeps;
//! - a host service's socket (Docker, systemd, D-Bus, …) named in the output, or its
//!   client's message, when the plan covered one: `sandbox.writable`;
//! - a masked secret named in the output: the masking rule (`secret-shell` allow);
//! - `Connection refused`, `Network is unreachable`, `Could not resolve host`, … with the
//!   network off: `sandbox.network`; also a failed command that printed nothing of the
//!   kind (`curl -s`) when its command line reaches for the network
//!   ([`reaches_for_network`]).

/// The line for a write to a protected path.
pub const PROTECTED: &str = "[sandbox: a protected path (git config and hooks, .tinytool/, tinytool's executable, state database and answers file, the policy file, the user config and state directories) is read-only inside the sandbox; no policy setting opens it]";

/// The line for a write refused because `path` is read-only inside the sandbox.
pub fn read_only_line(path: &std::path::Path) -> String {
    format!(
        "[sandbox: {} is read-only inside the sandbox (only --dir, /tmp and sandbox.writable are writable); {}]",
        path.display(),
        how_to_open(path)
    )
}

/// The setting that opens `path`: a home directory's entry as `~/NAME` (a cache such as
/// `~/.npm` or `~/.cache`, so the whole cache opens), any other path as it is.
fn how_to_open(path: &std::path::Path) -> String {
    let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
    let entry = match home.as_deref().and_then(|h| path.strip_prefix(h).ok()) {
        Some(rest) => match rest.components().next() {
            Some(first) => format!("~/{}", first.as_os_str().to_string_lossy()),
            None => path.display().to_string(),
        },
        None => path.display().to_string(),
    };
    format!(
        "add {} to \"sandbox\": {{\"writable\": [...]}} in the user policy to allow it",
        serde_json::Value::String(entry)
    )
}

/// The path a read-only or permission error names: on the line of the error, or on one
/// of the three lines before it (cargo prints the path, then `Caused by:` and the error),
/// quoted (`'…'`, `"…"`, `` `…` ``, `‘…’`) or as a word starting with `/` or `~/`.
pub fn read_only_path(text: &str) -> Option<std::path::PathBuf> {
    const SIGNS: [&str; 6] = [
        "read-only file system",
        "erofs",
        "permission denied",
        "eacces",
        "eperm",
        "operation not permitted",
    ];
    path_near(text, |lower| SIGNS.iter().any(|s| lower.contains(s)))
}

/// The path a failed attempt to make something names, where the error does not say
/// read-only (npm reports the `mkdir` of a read-only home as `ENOENT`): a line naming
/// `mkdir`, `open`, `create` or `write` with an error (`ENOENT`, `No such file`, …), and
/// a path on it or on one of the three lines before.
pub fn made_path(text: &str) -> Option<std::path::PathBuf> {
    const VERBS: [&str; 4] = ["mkdir", "open", "create", "write"];
    const ERRORS: [&str; 6] = [
        "enoent",
        "no such file",
        "erofs",
        "read-only",
        "eacces",
        "permission denied",
    ];
    path_near(text, |lower| {
        VERBS.iter().any(|v| lower.contains(v)) && ERRORS.iter().any(|e| lower.contains(e))
    })
}

/// The first path named on a line `is_error` accepts (given lower-cased) or on one of the
/// three lines before it, trying such lines in order.
fn path_near(text: &str, is_error: impl Fn(&str) -> bool) -> Option<std::path::PathBuf> {
    let lines: Vec<&str> = text.lines().collect();
    (0..lines.len())
        .filter(|&at| is_error(&lines[at].to_lowercase()))
        .find_map(|at| {
            lines[at.saturating_sub(3)..=at]
                .iter()
                .rev()
                .find_map(|line| path_in(line))
        })
}

/// The first absolute (or `~/`) path in a line.
fn path_in(line: &str) -> Option<std::path::PathBuf> {
    let quotes = ['\'', '"', '`', '‘', '’', '“', '”'];
    let tokens = line.split(|c: char| c.is_whitespace() || quotes.contains(&c) || c == ',');
    for token in tokens {
        let token = token.trim_end_matches([':', ';', ')', '.', ']']);
        let token = token.trim_start_matches(['(', '[']);
        let expanded = if let Some(rest) = token.strip_prefix("~/") {
            std::env::var_os("HOME").map(|h| std::path::PathBuf::from(h).join(rest))
        } else if token.starts_with('/') && token.len() > 1 && !token.starts_with("//") {
            Some(std::path::PathBuf::from(token))
        } else {
            None
        };
        if expanded.is_some() {
            return expanded;
        }
    }
    None
}

/// The line for a command refused a mount, an unmount or a device node.
const MOUNTS_KEPT: &str = "[sandbox: commands cannot mount, unmount or make device nodes inside the sandbox (that would undo its read-only paths and masks); no policy setting allows it]";

/// The line for a command refused a device node.
const DEVICE_CLOSED: &str = "[sandbox: device nodes are closed to commands but for /dev/null-style ones and those the user could open without root (disks never); add the device to \"sandbox\": {\"writable\": [...]} in the user policy to open it]";

/// The line for a command refused a host service's socket.
const SERVICE_SOCKETS: &str = "[sandbox: the host's Unix sockets outside the project (Docker, Podman, systemd, D-Bus, libvirt, snapd, LXD, tmux, SSH agents) are closed to commands, which could run anything outside the sandbox through them; add the socket to \"sandbox\": {\"sockets\": [...]} in the user policy to open it]";

/// The line for a command refused the socket at `path`.
pub fn socket_line(path: &str) -> String {
    format!(
        "[sandbox: the socket {path} is closed to commands (a server behind a socket outside the project could run anything outside the sandbox); add {} to \"sandbox\": {{\"sockets\": [...]}} in the user policy to open it]",
        serde_json::Value::String(path.to_string())
    )
}

/// The line for a command the missing network stopped.
pub const NETWORK_OFF: &str = "[sandbox: the network is off for commands (\"sandbox\": {\"network\": false}); only the command's own loopback exists]";

/// Whether a command line reaches for the network by itself: a URL, bash's `/dev/tcp` or
/// `/dev/udp`, or a network client as a word (`curl`, `wget`, `nc`, `ssh`, …).
pub fn reaches_for_network(command: &str) -> bool {
    const MARKS: [&str; 6] = [
        "http://",
        "https://",
        "ftp://",
        "/dev/tcp/",
        "/dev/udp/",
        "--unix-socket",
    ];
    const CLIENTS: [&str; 10] = [
        "curl", "wget", "nc", "ncat", "socat", "ssh", "scp", "telnet", "ping", "dig",
    ];
    MARKS.iter().any(|m| command.contains(m))
        || command
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
            .any(|word| CLIENTS.contains(&word))
}

/// The explanation for a failed command whose output is `text`, or `None` when nothing in
/// it points at the sandbox.
pub fn explain(
    text: &str,
    network_off: bool,
    landlock: bool,
    masked: &[String],
    protected: &[String],
    sockets: &[String],
) -> Option<String> {
    let lower = text.to_lowercase();
    let names_protected = protected
        .iter()
        .any(|p| !p.is_empty() && text.contains(p.as_str()));
    let denied = [
        "permission denied",
        "eacces",
        "eperm",
        "operation not permitted",
    ]
    .iter()
    .any(|d| lower.contains(d));
    // Under Landlock alone a write outside the writable set fails with EACCES.
    if landlock && denied {
        return Some(match read_only_path(text) {
            Some(path) => format!(
                "[sandbox: Landlock allows writes only in --dir, /tmp and sandbox.writable, so {} was refused; {}]",
                path.display(),
                how_to_open(&path)
            ),
            None => "[sandbox: Landlock allows writes only in --dir, /tmp and sandbox.writable; add the path to \"sandbox\": {\"writable\": [...]} in the user policy to allow it]".to_string(),
        });
    }
    let read_only = lower.contains("read-only file system") || lower.contains("erofs");
    if names_protected
        && (read_only
            || denied
            || lower.contains("device or resource busy")
            || lower.contains("invalid cross-device link"))
    {
        return Some(PROTECTED.to_string());
    }
    if read_only {
        return Some(match read_only_path(text) {
            Some(path) => read_only_line(&path),
            None => "[sandbox: the file system outside --dir and /tmp is read-only; add the path to \"sandbox\": {\"writable\": [...]} in the user policy to allow it]".to_string(),
        });
    }
    // A device node outside the open set (`devices`): the tree is `nodev`.
    if lower.contains("permission denied") && text.contains("/dev/") {
        return Some(DEVICE_CLOSED.to_string());
    }
    // Mounting, unmounting and device nodes need capabilities no command keeps.
    let refused = [
        "Operation not permitted",
        "must be superuser",
        "ermission denied",
    ];
    if refused.iter().any(|r| text.contains(r))
        && ["mount: ", "umount: ", "mknod: ", "unshare: "]
            .iter()
            .any(|c| text.contains(c))
    {
        return Some(MOUNTS_KEPT.to_string());
    }
    // A covered socket the output names (`error connecting to /tmp/tmux-0/default`).
    if let Some(socket) = sockets
        .iter()
        .find(|s| !s.is_empty() && text.contains(s.as_str()))
    {
        return Some(socket_line(socket));
    }
    if network_off {
        const SIGNS: [&str; 12] = [
            "Connection refused",
            "Network is unreachable",
            "Could not resolve host",
            "Temporary failure in name resolution",
            "Name or service not known",
            "Couldn't connect to server",
            "No route to host",
            "Failed to connect",
            "Connection timed out",
            "ECONNREFUSED",
            "ENETUNREACH",
            "EAI_AGAIN",
        ];
        if SIGNS.iter().any(|s| lower.contains(&s.to_lowercase())) {
            return Some(NETWORK_OFF.to_string());
        }
    }
    const SERVICES: [&str; 13] = [
        "docker.sock",
        "authentication agent",
        "Error connecting to agent",
        "no server running on",
        "podman.sock",
        "containerd.sock",
        "Docker daemon",
        "Failed to connect to bus",
        "system_bus_socket",
        "systemd/private",
        "libvirt-sock",
        "snapd.socket",
        "lxd/unix.socket",
    ];
    if !sockets.is_empty() && SERVICES.iter().any(|s| text.contains(s)) {
        return Some(SERVICE_SOCKETS.to_string());
    }
    if let Some(name) = masked
        .iter()
        .find(|m| !m.is_empty() && text.contains(m.as_str()))
    {
        return Some(format!(
            "[sandbox: untracked secret files such as {name} read as empty inside the sandbox; a secret-shell allow rule for the command, or \"sandbox\": {{\"unmask\": [{}]}} in the user policy, lifts the masking]",
            serde_json::Value::String(name.clone())
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_the_rule_from_the_error() {
        assert!(
            explain(
                "touch: cannot touch '/etc/x': Read-only file system",
                false,
                false,
                &[],
                &[],
                &[]
            )
            .unwrap()
            .contains("writable")
        );
        assert!(
            explain(
                "mv: cannot move '.git' to '.g': Device or resource busy",
                false,
                false,
                &[],
                &[".git".into()],
                &[]
            )
            .unwrap()
            .contains("protected")
        );
        assert_eq!(
            explain(
                "dd: failed to open '/dev/sda': Permission denied",
                false,
                false,
                &[],
                &[],
                &[]
            )
            .as_deref(),
            Some(DEVICE_CLOSED)
        );
        assert!(
            explain("curl: (7) Connection refused", true, false, &[], &[], &[])
                .unwrap()
                .contains("network")
        );
        assert_eq!(
            explain("curl: (7) Connection refused", false, false, &[], &[], &[]),
            None
        );
        assert_eq!(explain("all good", true, false, &[], &[], &[]), None);
        let docker = "Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?";
        // The covered socket the message names, with the entry that opens it.
        assert_eq!(
            explain(docker, false, false, &[], &[], &["/run/docker.sock".into()]),
            Some(socket_line("/run/docker.sock"))
        );
        assert!(
            socket_line("/run/docker.sock")
                .contains(r#"add "/run/docker.sock" to "sandbox": {"sockets""#)
        );
        // A client's message naming no covered path: the general line.
        assert_eq!(
            explain(docker, false, false, &[], &[], &["/run/podman.sock".into()]).as_deref(),
            Some(SERVICE_SOCKETS)
        );
        assert_eq!(explain(docker, false, false, &[], &[], &[]), None);
        // ssh-add and git over ssh do not print the agent's socket.
        let agent = "Could not open a connection to your authentication agent.";
        assert_eq!(
            explain(
                agent,
                false,
                false,
                &[],
                &[],
                &["/tmp/ssh-x/agent.1".into()]
            )
            .as_deref(),
            Some(SERVICE_SOCKETS)
        );
    }

    #[test]
    fn read_only_errors_in_every_wording_name_the_path() {
        let cases = [
            (
                "npm error code EROFS\nnpm error EROFS: read-only file system, mkdir '/opt/npm/_cacache'",
                "/opt/npm/_cacache",
            ),
            (
                "go: creating work dir: mkdir /opt/gocache/go-build1: read-only file system",
                "/opt/gocache/go-build1",
            ),
            (
                "error: failed to create directory `/opt/cargo/registry/cache`\n\nCaused by:\n  Read-only file system (os error 30)",
                "/opt/cargo/registry/cache",
            ),
            (
                "OSError: [Errno 30] Read-only file system: '/opt/venv/lib'",
                "/opt/venv/lib",
            ),
            (
                "touch: cannot touch \u{2018}/opt/x\u{2019}: Read-only file system",
                "/opt/x",
            ),
        ];
        for (text, path) in cases {
            assert_eq!(
                read_only_path(text).as_deref(),
                Some(std::path::Path::new(path)),
                "{text}"
            );
            let line = explain(text, false, false, &[], &[], &[]).unwrap();
            assert!(line.contains(&format!("{path} is read-only")), "{line}");
            assert!(line.contains(&format!("add \"{path}\" to")), "{line}");
        }
        // npm says ENOENT for the mkdir of a read-only home.
        let npm = "npm error enoent Invalid response body: ENOENT: no such file or directory, mkdir '/home/u/.npm'";
        assert_eq!(
            made_path(npm).as_deref(),
            Some(std::path::Path::new("/home/u/.npm"))
        );
        assert_eq!(made_path("all fine, wrote /tmp/x"), None);
    }

    #[test]
    fn a_refused_mount_or_device_node_names_the_rule() {
        for text in [
            "mknod: blk: Operation not permitted",
            "umount: /work/.env: must be superuser to unmount.",
            "mount: /: permission denied.",
        ] {
            assert_eq!(
                explain(text, false, false, &[], &[], &[]).as_deref(),
                Some(MOUNTS_KEPT),
                "{text}"
            );
        }
    }

    #[test]
    fn a_quiet_command_reaching_for_the_network_is_recognised_by_its_line() {
        for yes in [
            "curl -s http://127.0.0.1:8080/",
            "wget -q -O- example.org",
            "exec 3<>/dev/tcp/127.0.0.1/80",
            "x=$(nc -z localhost 22)",
        ] {
            assert!(reaches_for_network(yes), "{yes}");
        }
        for no in ["cargo build", "ls curlew", "grep -r ssh_config ."] {
            assert!(!reaches_for_network(no), "{no}");
        }
    }
}
