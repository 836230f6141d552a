//! What a caller hands tinytool stays with tinytool: a directory, a Unix
//! socket, a TCP socket and a pipe left open as descriptors 3 to 6 by the process that
//! starts tinytool are open in no command it runs — bash with the sandbox on or off, a
//! monitor — so none can write outside through `/proc/self/fd/3/…` or talk to a listener
//! the network setting keeps out. As the user running the tests and, when that is root,
//! as uid 65534.

use std::io::Read;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::process::Command;

use serde_json::json;

use crate::util::{Room, Run, run_command};

/// The descriptors handed in, and what keeps their far ends alive.
struct HandedIn {
    fds: Vec<OwnedFd>,
    outside: tempfile::TempDir,
    _unix_listener: std::os::unix::net::UnixListener,
    _tcp_listener: std::net::TcpListener,
    _pipe_read: std::io::PipeReader,
}

fn handed_in() -> HandedIn {
    let outside = tempfile::tempdir().unwrap();
    let dir = std::fs::File::open(outside.path()).unwrap();
    let socket_path = outside.path().join("s");
    let unix_listener = std::os::unix::net::UnixListener::bind(&socket_path).unwrap();
    let unix = std::os::unix::net::UnixStream::connect(&socket_path).unwrap();
    let tcp_listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let tcp = std::net::TcpStream::connect(tcp_listener.local_addr().unwrap()).unwrap();
    let (pipe_read, pipe_write) = std::io::pipe().unwrap();
    HandedIn {
        fds: vec![dir.into(), unix.into(), tcp.into(), pipe_write.into()],
        outside,
        _unix_listener: unix_listener,
        _tcp_listener: tcp_listener,
        _pipe_read: pipe_read,
    }
}

/// Starts `cmd` with the handed-in descriptors as 3, 4, 5 and 6 (not close-on-exec, as a
/// shell's `3</dir` leaves them).
fn with_descriptors(cmd: &mut Command, handed: &HandedIn) {
    let raw: Vec<i32> = handed.fds.iter().map(|f| f.as_raw_fd()).collect();
    // SAFETY: dup2 is async-signal-safe; the descriptors are open in the child.
    unsafe {
        cmd.pre_exec(move || {
            // Above the targets first, so that no source is overwritten before it is used.
            for (k, fd) in (0..).zip(&raw) {
                if libc::dup2(*fd, 100 + k) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
            }
            for k in 0..raw.len() as i32 {
                if libc::dup2(100 + k, 3 + k) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
            }
            Ok(())
        });
    }
}

/// Lists the descriptors 3 to 9 the shell has, and tries to write through descriptor 3.
const PROBE: &str = "for n in 3 4 5 6 7 8 9; do [ -e /proc/self/fd/$n ] && echo open $n; done; \
    echo x > /proc/self/fd/3/planted 2>/dev/null; echo end";

fn assert_nothing_came_in(run: &Run, handed: &HandedIn) {
    let output = run.json()["output"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    // No descriptor was open (the shell's complaint about the write comes on stderr).
    assert!(
        !output.lines().any(|line| line.starts_with("open ")),
        "{run:?}"
    );
    assert!(output.lines().any(|line| line == "end"), "{run:?}");
    assert!(!handed.outside.path().join("planted").exists(), "{run:?}");
}

#[test]
fn descriptors_handed_in_reach_no_command() {
    for policy in [
        r#"{"rules": [{"permission": "*", "pattern": "*", "action": "allow"}], "sandbox": {"network": false}}"#,
        r#"{"rules": [{"permission": "*", "pattern": "*", "action": "allow"}], "sandbox": {"mode": "off"}}"#,
    ] {
        let room = Room::new();
        room.write_user("policy.json", policy);
        let handed = handed_in();
        let mut cmd = room.command(&["bash", "--command", PROBE]);
        with_descriptors(&mut cmd, &handed);
        let run = run_command(cmd, None);
        assert_eq!(run.code, 0, "{policy}: {run:?}");
        assert_nothing_came_in(&run, &handed);
    }
}

#[test]
fn descriptors_handed_in_reach_no_monitor() {
    let room = Room::new();
    room.write_user(
        "policy.json",
        r#"{"rules": [{"permission": "*", "pattern": "*", "action": "allow"}]}"#,
    );
    let handed = handed_in();
    let mut cmd = room.command(&[
        "monitor",
        "--action",
        "start",
        "--command",
        &format!("{PROBE}; sleep 30"),
    ]);
    with_descriptors(&mut cmd, &handed);
    let started = run_command(cmd, None);
    assert_eq!(started.code, 0, "{started:?}");
    let id = started.json()["metadata"]["monitor_id"]
        .as_str()
        .unwrap()
        .to_string();
    let mut output = String::new();
    for _ in 0..100 {
        let read = room.call("monitor", json!({"action": "read", "monitor_id": id}));
        output = read.output();
        if output.contains("end") {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    room.call("monitor", json!({"action": "stop", "monitor_id": id}));
    assert!(output.contains("end"), "{output}");
    assert!(!output.contains("open "), "{output}");
    assert!(!handed.outside.path().join("planted").exists());
}

#[test]
fn unprivileged_too_descriptors_handed_in_reach_no_command() {
    let Some(nobody) = crate::util::Nobody::new(
        r#"{"rules": [{"permission": "*", "pattern": "*", "action": "allow"}]}"#,
    ) else {
        return;
    };
    let handed = handed_in();
    // The folder outside is the unprivileged user's to write, so only the descriptor
    // rule keeps the command out of it.
    Command::new("chmod")
        .args(["0777"])
        .arg(handed.outside.path())
        .status()
        .unwrap();
    let mut cmd = Command::new("setpriv");
    cmd.args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(&nobody.bin)
        .arg("--dir")
        .arg(&nobody.work)
        .args(["bash", "--command", PROBE])
        .current_dir(&nobody.work)
        .env_clear()
        .env("HOME", &nobody.home)
        .env("PATH", std::env::var("PATH").unwrap_or_default());
    with_descriptors(&mut cmd, &handed);
    let run = run_command(cmd, None);
    assert_eq!(run.code, 0, "{run:?}");
    assert_nothing_came_in(&run, &handed);
    // The pipe's far end saw nothing written either.
    let mut handed = handed;
    let mut rest = Vec::new();
    handed.fds.clear();
    let _ = handed._pipe_read.read_to_end(&mut rest);
    assert!(rest.is_empty());
}

/// Connects to the Unix socket at `path` from inside and says whether it got through.
fn connect_probe(path: &std::path::Path) -> String {
    format!(
        "python3 -c \"import socket; s = socket.socket(socket.AF_UNIX); s.connect('{}'); print('reached')\"",
        path.display()
    )
}

#[test]
fn a_socket_outside_the_project_is_closed_whatever_its_name_unless_the_policy_opens_it() {
    // Any name, in a folder outside /tmp (the host's /tmp is not visible inside at all):
    // found by type.
    let outside = tempfile::Builder::new()
        .prefix("tinytool-sockets-")
        .tempdir_in("/var/tmp")
        .unwrap();
    let path = outside.path().canonicalize().unwrap().join("any-name");
    let _server = std::os::unix::net::UnixListener::bind(&path).unwrap();
    let room = Room::new();
    room.write_user(
        "policy.json",
        r#"{"rules": [{"permission": "*", "pattern": "*", "action": "allow"}]}"#,
    );
    if let Err(why) = crate::util::mount_layer(&room) {
        crate::util::skip(&why);
        return;
    }
    let run = room.call("bash", json!({"command": connect_probe(&path)}));
    assert!(!run.output().contains("reached"), "{run:?}");
    assert!(
        run.output().contains(&format!(
            "[sandbox: the socket {} is closed",
            path.display()
        )),
        "{run:?}"
    );
    assert!(run.output().contains(r#""sandbox": {"sockets""#), "{run:?}");
    // A socket inside the project is the project's own.
    let inner = room.dir.join("db.sock");
    let _inner_server = std::os::unix::net::UnixListener::bind(&inner).unwrap();
    let run = room.call("bash", json!({"command": connect_probe(&inner)}));
    assert_eq!(run.output(), "reached\n", "{run:?}");
    // The user policy opens one by path.
    room.write_user(
        "policy.json",
        format!(
            r#"{{"rules": [{{"permission": "*", "pattern": "*", "action": "allow"}}],
                "sandbox": {{"sockets": ["{}"]}}}}"#,
            path.display()
        ),
    );
    let run = room.call("bash", json!({"command": connect_probe(&path)}));
    assert_eq!(run.output(), "reached\n", "{run:?}");
}

#[test]
fn tmp_is_the_projects_own_shared_by_its_calls_and_hides_the_hosts() {
    let room = Room::new();
    room.write_user(
        "policy.json",
        r#"{"rules": [{"permission": "*", "pattern": "*", "action": "allow"}]}"#,
    );
    if let Err(why) = crate::util::mount_layer(&room) {
        crate::util::skip(&why);
        return;
    }
    // A file of the host's /tmp beside the project (Room lives in /tmp).
    let sibling = room.dir.parent().unwrap().join("sibling.txt");
    std::fs::write(&sibling, "host\n").unwrap();
    let probe = format!("/tmp/tinytool-private-{}", std::process::id());
    let run = room.call(
        "bash",
        json!({"command": format!("echo mine > {probe} && echo more > {}", sibling.display())}),
    );
    assert!(!std::path::Path::new(&probe).exists(), "{run:?}");
    assert_eq!(std::fs::read_to_string(&sibling).unwrap(), "host\n");
    // The next call of the project, and a monitor, see the same /tmp.
    let run = room.call("bash", json!({"command": format!("cat {probe}")}));
    assert_eq!(run.output(), "mine\n", "{run:?}");
    // Another host file is not there at all, and the result says why.
    let unseen = room.dir.parent().unwrap().join("unseen.txt");
    std::fs::write(&unseen, "host\n").unwrap();
    let run = room.call(
        "bash",
        json!({"command": format!("cat {}", unseen.display())}),
    );
    assert_ne!(run.code, 0, "{run:?}");
    assert!(
        run.output()
            .contains("/tmp inside the sandbox is the project's own"),
        "{run:?}"
    );
    // Another project has its own.
    let other = Room::new();
    other.write_user(
        "policy.json",
        r#"{"rules": [{"permission": "*", "pattern": "*", "action": "allow"}]}"#,
    );
    let run = other.call("bash", json!({"command": format!("cat {probe}")}));
    assert_ne!(run.code, 0, "{run:?}");
}

#[test]
fn unprivileged_too_tmp_is_the_projects_own() {
    let Some(nobody) = crate::util::Nobody::new(
        r#"{"rules": [{"permission": "*", "pattern": "*", "action": "allow"}]}"#,
    ) else {
        return;
    };
    let probe = format!("/tmp/tinytool-private-nobody-{}", std::process::id());
    let run = nobody.bash(
        &nobody.work,
        &format!("echo mine > {probe}; cat {probe}"),
        &[],
    );
    if !crate::util::has_mount_layer(&run.json()) {
        crate::util::skip(format!("no mount layer for uid 65534: {run:?}"));
        return;
    }
    assert_eq!(run.json()["output"], "mine\n", "{run:?}");
    assert!(!std::path::Path::new(&probe).exists(), "{run:?}");
    let run = nobody.bash(&nobody.work, &format!("cat {probe}"), &[]);
    assert_eq!(run.json()["output"], "mine\n", "{run:?}");
}

#[test]
fn a_link_planted_in_the_private_tmp_carries_no_mount_point_onto_the_host() {
    let room = Room::new();
    room.write_user(
        "policy.json",
        r#"{"rules": [{"permission": "*", "pattern": "*", "action": "allow"}]}"#,
    );
    if let Err(why) = crate::util::mount_layer(&room) {
        crate::util::skip(&why);
        return;
    }
    // Where the project's ancestor is remade in the private /tmp, a link to a host
    // folder, as an earlier call could have left it.
    let victim = tempfile::Builder::new()
        .prefix("tinytool-victim-")
        .tempdir_in("/var/tmp")
        .unwrap();
    let ancestor = room.dir.parent().unwrap().file_name().unwrap();
    let private = room.dir.join(".tinytool/tmp");
    std::fs::remove_dir_all(private.join(ancestor)).unwrap();
    std::os::unix::fs::symlink(victim.path(), private.join(ancestor)).unwrap();
    let run = room.call("bash", json!({"command": "pwd && touch here"}));
    assert_eq!(run.code, 0, "{run:?}");
    assert!(room.path("here").exists(), "{run:?}");
    assert_eq!(
        std::fs::read_dir(victim.path()).unwrap().count(),
        0,
        "{run:?}"
    );
    assert!(private.join(ancestor).is_dir() && !private.join(ancestor).is_symlink());
}
