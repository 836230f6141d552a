//! Ways around the kernel sandbox found by a black-box corpus, each closed:
//! a root command undoing the mounts (unmounting a mask, remounting the tree writable,
//! writing kernel settings through a fresh `/proc`), and git redirections planted in the
//! project (a `commondir`, a worktree's or submodule's `.git` file, the git directory of
//! an enclosing checkout when `--dir` is a subdirectory, hooks and command settings in a
//! repository the command creates). Real commands, as the user
//! running the tests and, when that is root, as uid 65534 through `setpriv`.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

use crate::util::{Room, Run, run_command};

const ALLOW_ALL: &str = r#"{"rules": [{"permission": "*", "pattern": "*", "action": "allow"}]}"#;

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .args([
            "-c",
            "user.email=t@t",
            "-c",
            "user.name=t",
            "-c",
            "safe.directory=*",
        ])
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {out:?}");
}

fn room() -> Room {
    let room = Room::new();
    room.write_user("policy.json", ALLOW_ALL);
    room
}

fn bash(room: &Room, command: &str) -> Run {
    room.call("bash", json!({"command": command}))
}

/// A room with the allow-all policy where bash calls get the mount layer; `None`, after
/// saying why, where they do not.
fn sandboxed_room() -> Option<Room> {
    let room = room();
    match crate::util::mount_layer(&room) {
        Ok(()) => Some(room),
        Err(why) => {
            crate::util::skip(&why);
            None
        }
    }
}

/// A folder outside /tmp and the project that anyone could write without the sandbox.
fn open_outside(tag: &str) -> PathBuf {
    let path = PathBuf::from(format!(
        "/var/tmp/tinytool-esc-{tag}-{}",
        std::process::id()
    ));
    std::fs::create_dir_all(&path).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o777)).unwrap();
    path
}

fn is_root() -> bool {
    // SAFETY: getuid has no preconditions.
    unsafe { libc::getuid() == 0 }
}

#[test]
fn a_command_cannot_undo_the_mounts_even_as_root() {
    let Some(room) = sandboxed_room() else {
        return;
    };
    room.write(".env", "KEY=hunter2\n");
    let out = open_outside("umount");
    let run = bash(
        &room,
        &format!(
            "umount .env; umount -l .env; cat .env; \
             mount -o remount,bind,rw / ; mount -o remount,rw {o}; umount -l /var/tmp; \
             unshare -Urm sh -c 'umount .env; cat .env; mount -o remount,rw /; touch {o}/ns'; \
             touch {o}/x; echo '|/bin/true' > /proc/sys/kernel/core_pattern",
            o = out.display()
        ),
    );
    let leaked = std::fs::read_dir(&out).unwrap().count();
    let _ = std::fs::remove_dir_all(&out);
    assert_eq!(leaked, 0, "{run:?}");
    assert!(!run.output().contains("hunter2"), "{run:?}");
    assert!(run.output().contains("Read-only file system"), "{run:?}");
    assert!(run.output().trim_end().ends_with(']'), "{run:?}");
    if is_root() {
        let pattern = std::fs::read_to_string("/proc/sys/kernel/core_pattern").unwrap();
        assert!(!pattern.contains("/bin/true"), "{pattern}");
        // What root keeps inside: no capability to mount.
        let caps = bash(&room, "grep CapEff /proc/self/status");
        let hex = caps.output().split_whitespace().last().unwrap().to_string();
        let eff = u64::from_str_radix(&hex, 16).unwrap();
        assert_eq!(eff & (1 << 21), 0, "CAP_SYS_ADMIN kept: {caps:?}");
    }
}

/// The checks of the git test, run by `call` (as the tests' user or as uid 65534).
fn check_git_redirections(root: &Path, call: &dyn Fn(&Path, &str) -> Value) {
    // A plain checkout: a `commondir` would send git to a planted config and hooks.
    let plain = root.join("plain");
    std::fs::create_dir_all(&plain).unwrap();
    git(&plain, &["init", "-q"]);
    let result = call(
        &plain,
        "mkdir -p /tmp/evil-git/hooks; echo /tmp/evil-git > .git/commondir; echo made",
    );
    let output = result["output"].as_str().unwrap();
    assert!(!plain.join(".git/commondir").exists(), "{result}");
    assert!(output.contains("[sandbox: removed"), "{result}");
    assert!(
        result["metadata"]["sandbox"]["removed"].is_array(),
        "{result}"
    );

    // No repository yet: one the command creates keeps no hook it planted.
    let fresh = root.join("fresh");
    std::fs::create_dir_all(&fresh).unwrap();
    let result = call(
        &fresh,
        "git init -q && printf '#!/bin/sh\\necho pwn\\n' > .git/hooks/pre-commit && echo made",
    );
    assert!(!fresh.join(".git/hooks/pre-commit").exists(), "{result}");
    assert!(fresh.join(".git/HEAD").exists(), "{result}");
    let output = result["output"].as_str().unwrap();
    assert!(output.contains("[sandbox: removed"), "{result}");
    let fresh = root.join("fresh2");
    std::fs::create_dir_all(&fresh).unwrap();
    let result = call(
        &fresh,
        "git init -q && git config core.fsmonitor 'echo pwn' && git config user.name kept",
    );
    let config = std::fs::read_to_string(fresh.join(".git/config")).unwrap();
    assert!(!config.contains("fsmonitor"), "{result}");
    assert!(config.contains("kept"), "{result}");
    let fresh = root.join("fresh3");
    std::fs::create_dir_all(&fresh).unwrap();
    let result = call(&fresh, "echo 'gitdir: /tmp/evil-git' > .git");
    assert!(!fresh.join(".git").exists(), "{result}");

    // A linked worktree: its `.git` file and the worktree's own `commondir`.
    let main = root.join("main");
    std::fs::create_dir_all(&main).unwrap();
    git(&main, &["init", "-q"]);
    std::fs::write(main.join("a"), "a").unwrap();
    git(&main, &["add", "a"]);
    git(&main, &["commit", "-qm", "a"]);
    let tree = root.join("tree");
    git(&main, &["worktree", "add", "-q", tree.to_str().unwrap()]);
    let before = std::fs::read_to_string(tree.join(".git")).unwrap();
    let result = call(
        &tree,
        "echo 'gitdir: /tmp/evil-git' > .git; d=$(git rev-parse --git-dir); echo /tmp/evil-git > $d/commondir; \
         echo x > $(git rev-parse --git-common-dir)/hooks/pre-commit; git config core.fsmonitor x",
    );
    assert_eq!(
        std::fs::read_to_string(tree.join(".git")).unwrap(),
        before,
        "{result}"
    );
    let own = main.join(".git/worktrees/tree/commondir");
    assert!(
        !std::fs::read_to_string(own).unwrap().contains("evil"),
        "{result}"
    );
    assert!(!main.join(".git/hooks/pre-commit").exists(), "{result}");
    let config = std::fs::read_to_string(main.join(".git/config")).unwrap();
    assert!(!config.contains("fsmonitor"), "{result}");
    // Work in the worktree goes on.
    let result = call(
        &tree,
        "echo b > b && git add b && git -c user.email=t@t -c user.name=t commit -qm b && echo ok",
    );
    assert!(
        result["output"].as_str().unwrap().contains("ok"),
        "{result}"
    );

    // A project that is a subdirectory of a checkout: the enclosing git directory.
    let sub = main.join("sub");
    std::fs::create_dir_all(&sub).unwrap();
    let result = call(
        &sub,
        "echo x > ../.git/hooks/pre-commit; git config core.fsmonitor x; mv ../.git ../.g",
    );
    assert!(!main.join(".git/hooks/pre-commit").exists(), "{result}");
    assert!(main.join(".git/config").exists(), "{result}");
    let config = std::fs::read_to_string(main.join(".git/config")).unwrap();
    assert!(!config.contains("fsmonitor"), "{result}");
    // A repository nested in it, created by the command, keeps no planted hook either.
    let nested = main.join("nested");
    std::fs::create_dir_all(&nested).unwrap();
    let result = call(&nested, "git init -q && echo x > .git/hooks/pre-commit");
    assert!(!nested.join(".git/hooks/pre-commit").exists(), "{result}");
}

#[test]
fn git_redirections_cannot_be_planted() {
    let Some(room) = sandboxed_room() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    let call = |dir: &Path, command: &str| -> Value {
        let mut cmd = room.command(&["bash", "--command", command]);
        cmd.arg("--dir").arg(dir).current_dir(dir);
        run_command(cmd, None).json()
    };
    check_git_redirections(&root, &call);
}

#[test]
fn git_redirections_cannot_be_planted_by_an_unprivileged_user() {
    let Some(nobody) = crate::util::Nobody::new(ALLOW_ALL) else {
        return;
    };
    let work = nobody.work.clone();
    let call = |dir: &Path, command: &str| -> Value {
        // The repositories are made by root: hand them over first.
        nobody.hand_over();
        let git_env = [
            ("GIT_CONFIG_COUNT", "1"),
            ("GIT_CONFIG_KEY_0", "safe.directory"),
            ("GIT_CONFIG_VALUE_0", "*"),
        ];
        nobody.bash(dir, command, &git_env).json()
    };
    let probe = nobody.bash(&work, "true", &[]);
    if !crate::util::Nobody::sandboxed(&probe) {
        return;
    }
    check_git_redirections(&work, &call);
}

#[test]
fn dev_shm_is_writable_and_private() {
    let Some(room) = sandboxed_room() else {
        return;
    };
    if !Path::new("/dev/shm").is_dir() {
        crate::util::skip("no /dev/shm here");
        return;
    }
    // POSIX semaphores (Python's multiprocessing, test runners) live in /dev/shm: a
    // private one, since the host's is outside the project and /tmp.
    let name = format!("/dev/shm/tinytool-sbx-{}", std::process::id());
    let run = bash(&room, &format!("touch {name} && echo ok"));
    let leaked = Path::new(&name).exists();
    let _ = std::fs::remove_file(&name);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(run.output(), "ok\n", "{run:?}");
    assert!(!leaked, "{run:?}");
}

#[test]
fn with_the_network_off_the_hosts_unix_sockets_are_out_of_reach_too() {
    let room = Room::new();
    room.write_user(
        "policy.json",
        r#"{"rules": [{"permission": "*", "pattern": "*", "action": "allow"}],
            "sandbox": {"network": false}}"#,
    );
    if let Err(why) = crate::util::mount_layer(&room) {
        crate::util::skip(&why);
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("host.sock");
    let _listener = std::os::unix::net::UnixListener::bind(&path).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o777)).unwrap();
    let run = bash(
        &room,
        &format!(
            "python3 -c \"import socket; a, b = socket.socketpair(); a.send(b'pair'); print(b.recv(4).decode())\"; \
             python3 -c \"import socket; s = socket.socket(socket.AF_UNIX); s.connect('{}'); print('reached')\"",
            path.display()
        ),
    );
    let output = run.output();
    assert!(output.contains("pair"), "socketpair still works: {run:?}");
    assert!(!output.contains("reached"), "{run:?}");
    // A datagram pair could send to any socket path: it is refused.
    let datagrams = tmp.path().join("host-dgram.sock");
    let receiver = std::os::unix::net::UnixDatagram::bind(&datagrams).unwrap();
    std::fs::set_permissions(&datagrams, std::fs::Permissions::from_mode(0o777)).unwrap();
    receiver.set_nonblocking(true).unwrap();
    let run = bash(
        &room,
        &format!(
            "for kind in SOCK_DGRAM SOCK_RAW; do python3 -c \"import socket; a, b = socket.socketpair(socket.AF_UNIX, socket.$kind); a.sendto(b'x', '{}'); print('sent')\"; done; \
             python3 -c \"import socket; a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET); a.send(b'q'); print(b.recv(1))\"",
            datagrams.display()
        ),
    );
    assert!(!run.output().contains("sent"), "{run:?}");
    assert!(
        run.output().contains("b'q'"),
        "seqpacket pairs work: {run:?}"
    );
    let mut got = [0u8; 8];
    assert!(receiver.recv(&mut got).is_err(), "{run:?}");
    // Nor a virtual machine's host, which vsock reaches past any network namespace.
    let run = bash(
        &room,
        "python3 -c \"import socket; socket.socket(socket.AF_VSOCK, socket.SOCK_STREAM); print('vsock')\"",
    );
    assert!(!run.output().contains("vsock\n"), "{run:?}");
    assert!(run.output().contains("Operation not permitted"), "{run:?}");
    // With the network on and the socket opened by the user policy, it is reached (the
    // filter is the network's).
    let room = self::room();
    open_a_socket_in_the_user_policy(&room, &path);
    let run = bash(
        &room,
        &format!(
            "python3 -c \"import socket; s = socket.socket(socket.AF_UNIX); s.connect('{}'); print('reached')\"",
            path.display()
        ),
    );
    assert!(run.output().contains("reached"), "{run:?}");
}

#[test]
fn a_quiet_network_failure_still_ends_with_the_explanation() {
    let room = Room::new();
    room.write_user(
        "policy.json",
        r#"{"rules": [{"permission": "*", "pattern": "*", "action": "allow"}],
            "sandbox": {"network": false}}"#,
    );
    if let Err(why) = crate::util::mount_layer(&room) {
        crate::util::skip(&why);
        return;
    }
    if Command::new("curl").arg("--version").output().is_err() {
        crate::util::skip("curl is not installed");
        return;
    }
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let run = bash(&room, &format!("curl -s -m 5 http://127.0.0.1:{port}/"));
    assert_ne!(run.code, 0, "{run:?}");
    let last = run
        .output()
        .trim_end()
        .lines()
        .last()
        .unwrap_or_default()
        .to_string();
    assert!(
        last.starts_with("[sandbox:") && last.contains("network"),
        "{run:?}"
    );
}

/// Writes an allow-all user policy whose sandbox opens `path` (`writable`).
/// Opens the socket (or folder of sockets) at `path` for commands, as `sandbox.sockets`.
fn open_a_socket_in_the_user_policy(room: &Room, path: &Path) {
    let policy = json!({
        "rules": [{"permission": "*", "pattern": "*", "action": "allow"}],
        "sandbox": {"sockets": [path]},
    });
    room.write_user("policy.json", policy.to_string());
}

fn open_in_the_user_policy(room: &Room, path: &Path) {
    let policy = json!({
        "rules": [{"permission": "*", "pattern": "*", "action": "allow"}],
        "sandbox": {"writable": [path]},
    });
    room.write_user("policy.json", policy.to_string());
}

/// A block device of this machine, if it has one.
fn a_block_device() -> Option<PathBuf> {
    use std::os::unix::fs::FileTypeExt;
    std::fs::read_dir("/dev")
        .ok()?
        .flatten()
        .find(|e| e.file_type().is_ok_and(|t| t.is_block_device()))
        .map(|e| e.path())
}

#[test]
fn device_nodes_are_closed_but_the_null_style_ones_and_terminals() {
    let Some(room) = sandboxed_room() else {
        return;
    };
    // What every program needs still works, pseudo-terminals included.
    let run = bash(
        &room,
        "echo hi > /dev/null && head -c 3 /dev/zero | wc -c && head -c 3 /dev/urandom | wc -c \
         && python3 -c 'import os; m, s = os.openpty(); os.write(m, b\"x\\n\"); print(os.read(s, 9))'",
    );
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(run.output(), "3\n3\nb'x\\n'\n", "{run:?}");
    // /dev itself is read-only: nothing is created on the host's.
    let probe = format!("/dev/tinytool-sbx-{}", std::process::id());
    let run = bash(&room, &format!("touch {probe}"));
    let leaked = Path::new(&probe).exists();
    let _ = std::fs::remove_file(&probe);
    assert!(!leaked, "{run:?}");
    assert_ne!(run.code, 0, "{run:?}");
    // A disk is closed even to root, whose permission checks pass: opened read-only here,
    // which would succeed outside the sandbox.
    if !is_root() {
        crate::util::skip("not root, the disk is closed to this user anyway");
        return;
    }
    let Some(disk) = a_block_device() else {
        crate::util::skip("no block device in /dev here");
        return;
    };
    assert!(
        std::fs::File::open(&disk).is_ok(),
        "root opens {disk:?} outside"
    );
    let run = bash(&room, &format!("head -c 1 {} > /dev/null", disk.display()));
    assert_ne!(run.code, 0, "{run:?}");
    assert!(run.output().contains("Permission denied"), "{run:?}");
    assert!(run.output().trim_end().ends_with("to open it]"), "{run:?}");
    // The user policy opens one by name.
    open_in_the_user_policy(&room, &disk);
    let run = bash(&room, &format!("head -c 1 {} | wc -c", disk.display()));
    assert_eq!(run.code, 0, "{run:?}");
}

#[test]
fn an_unprivileged_user_keeps_null_devices_and_terminals() {
    let Some(nobody) = crate::util::Nobody::new(ALLOW_ALL) else {
        return;
    };
    let run = nobody.bash(
        &nobody.work,
        "echo hi > /dev/null && head -c 3 /dev/urandom | wc -c \
         && python3 -c 'import os; m, s = os.openpty(); print(os.ttyname(s)[:9])'",
        &[],
    );
    if !crate::util::Nobody::sandboxed(&run) {
        return;
    }
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(run.output(), "3\n/dev/pts/\n", "{run:?}");
}

#[test]
fn the_hosts_sockets_are_closed_whatever_their_name_until_the_policy_opens_one() {
    let mut room = room();
    if let Err(why) = crate::util::mount_layer(&room) {
        crate::util::skip(&why);
        return;
    }
    // A session bus in the user's runtime directory (systemd-run --user goes through it),
    // and a socket of no known service: both found by type.
    // Outside /tmp: the host's /tmp is not visible inside at all.
    let tmp = tempfile::Builder::new()
        .prefix("tinytool-sockets-")
        .tempdir_in("/var/tmp")
        .unwrap();
    let runtime = tmp.path().canonicalize().unwrap().join("run");
    std::fs::create_dir(&runtime).unwrap();
    let _bus = std::os::unix::net::UnixListener::bind(runtime.join("bus")).unwrap();
    let other = tmp.path().canonicalize().unwrap().join("app.sock");
    let _app = std::os::unix::net::UnixListener::bind(&other).unwrap();
    room.set_env("XDG_RUNTIME_DIR", runtime.to_str().unwrap());
    let connect = |path: &Path| {
        format!(
            "python3 -c 'import socket; s = socket.socket(socket.AF_UNIX); s.connect(\"{}\"); print(\"connected\")'",
            path.display()
        )
    };
    let run = bash(&room, &connect(&runtime.join("bus")));
    assert_ne!(run.code, 0, "{run:?}");
    assert!(run.output().contains("Connection refused"), "{run:?}");
    let run = bash(&room, &connect(&other));
    assert_ne!(run.code, 0, "{run:?}");
    assert!(
        run.output().contains(&format!(
            "[sandbox: the socket {} is closed",
            other.display()
        )),
        "{run:?}"
    );
    // A client's own words name the rule.
    let run = bash(
        &room,
        "echo 'Cannot connect to the Docker daemon at unix:///var/run/docker.sock.' >&2; exit 1",
    );
    assert!(run.output().trim_end().ends_with("to open it]"), "{run:?}");
    // The user policy opens one by name (as a socket, or as a writable path).
    open_in_the_user_policy(&room, &runtime.join("bus"));
    let run = bash(&room, &connect(&runtime.join("bus")));
    assert_eq!(run.output(), "connected\n", "{run:?}");
    open_a_socket_in_the_user_policy(&room, &other);
    let run = bash(&room, &connect(&other));
    assert_eq!(run.output(), "connected\n", "{run:?}");
}

/// The kernel's Landlock ABI version (0 without Landlock).
fn landlock_abi() -> i64 {
    // SAFETY: landlock_create_ruleset(NULL, 0, VERSION) only returns a number.
    let abi = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0usize,
            1 as libc::c_uint,
        )
    };
    abi.max(0)
}

#[test]
fn the_hosts_abstract_sockets_are_out_of_reach_with_the_network_on() {
    use std::os::linux::net::SocketAddrExt;
    let Some(room) = sandboxed_room() else {
        return;
    };
    if landlock_abi() < 6 {
        crate::util::skip("this kernel's Landlock has no scopes (ABI < 6)");
        return;
    }
    // An X server or a session bus listening on an abstract name.
    let name = format!("tinytool-sbx-{}", std::process::id());
    let addr = std::os::unix::net::SocketAddr::from_abstract_name(name.as_bytes()).unwrap();
    let _listener = std::os::unix::net::UnixListener::bind_addr(&addr).unwrap();
    let connect = |name: &str| {
        format!(
            "python3 -c 'import socket; s = socket.socket(socket.AF_UNIX); s.connect(\"\\0{name}\"); print(\"connected\")'"
        )
    };
    let run = bash(&room, &connect(&name));
    assert_ne!(run.code, 0, "{run:?}");
    assert!(!run.output().contains("connected"), "{run:?}");
    // The sandbox's own abstract sockets work.
    let run = bash(
        &room,
        "python3 -c 'import socket; s = socket.socket(socket.AF_UNIX); s.bind(\"\\0own\"); s.listen(1); c = socket.socket(socket.AF_UNIX); c.connect(\"\\0own\"); print(\"connected\")'",
    );
    assert_eq!(run.output(), "connected\n", "{run:?}");
}

#[test]
fn the_sweep_of_a_new_repository_never_follows_its_links() {
    let Some(room) = sandboxed_room() else {
        return;
    };
    // Files the command cannot write (the user config directory), named by links in a
    // repository it creates: the sweep after the call removes the links, not the files.
    let victim = room.write_user("victim/a", "keep");
    let victim_dir = victim.parent().unwrap().to_path_buf();
    let config = room.write_user("victim/cfg", "[core]\n\tfsmonitor = x\n");
    let run = bash(
        &room,
        &format!(
            "mkdir .git && ln -s {} .git/hooks && ln -s {} .git/config",
            victim_dir.display(),
            config.display()
        ),
    );
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep");
    assert_eq!(
        std::fs::read_to_string(&config).unwrap(),
        "[core]\n\tfsmonitor = x\n"
    );
    assert!(std::fs::symlink_metadata(room.path(".git/hooks")).is_err());
}

#[test]
fn root_keeps_no_power_over_the_host_network_clock_or_ipc() {
    if !is_root() {
        crate::util::skip("not root (a user has no such powers to keep)");
        return;
    }
    let Some(room) = sandboxed_room() else {
        return;
    };
    // A shared memory segment of the host, which the command must neither see nor remove.
    // SAFETY: shmget/shmctl with integer arguments.
    let id = unsafe { libc::shmget(libc::IPC_PRIVATE, 4096, libc::IPC_CREAT | 0o600) };
    assert!(id >= 0);
    let run = bash(
        &room,
        &format!(
            "ip link add tinytool-t0 type dummy 2>&1 | head -1; date -s 2001-01-01 >/dev/null 2>&1 || echo clock-kept; \
             ipcrm -m {id} 2>/dev/null || echo ipc-kept; echo x > /dev/kmsg 2>/dev/null || echo kmsg-kept"
        ),
    );
    // SAFETY: removes the segment made above.
    let alive = unsafe {
        let mut ds: libc::shmid_ds = std::mem::zeroed();
        let alive = libc::shmctl(id, libc::IPC_STAT, &mut ds) == 0;
        libc::shmctl(id, libc::IPC_RMID, std::ptr::null_mut());
        alive
    };
    // Had it been made, it goes again.
    let _ = Command::new("ip")
        .args(["link", "del", "tinytool-t0"])
        .output();
    assert!(alive, "{run:?}");
    let out = run.output();
    for kept in ["clock-kept", "ipc-kept", "kmsg-kept"] {
        assert!(out.contains(kept), "{kept}: {run:?}");
    }
    if Command::new("ip").arg("-V").output().is_ok() {
        assert!(out.contains("Operation not permitted"), "{run:?}");
    }
}

#[test]
fn the_projects_ancestors_inside_tmp_cannot_be_renamed_to_swap_it() {
    let Some(room) = sandboxed_room() else {
        return;
    };
    git(&room.dir, &["init", "-q"]);
    // The room's folder holds the project (`work`) and the user's home (with the config
    // directory): renaming it and rebuilding a project with planted git settings at the
    // old path would hand the user's next `git status` to the command.
    let root = room.dir.parent().unwrap().to_path_buf();
    let moved = root.with_extension("moved");
    let run = bash(
        &room,
        &format!(
            "mv {root} {moved}; mkdir -p {root}/work/.git && echo planted > {root}/work/.git/config; \
             mv {work} {root}/w2; echo done",
            root = root.display(),
            moved = moved.display(),
            work = room.dir.display()
        ),
    );
    assert!(!moved.exists(), "{run:?}");
    assert!(run.output().contains("Device or resource busy"), "{run:?}");
    assert_ne!(room.read(".git/config"), "planted\n", "{run:?}");
    assert!(room.dir.join(".git/HEAD").exists(), "{run:?}");
}

#[test]
fn a_repository_planted_above_the_project_does_not_outlive_the_call() {
    let Some(room) = sandboxed_room() else {
        return;
    };
    // The project has no repository; one made in its (writable) parent folder would be
    // the one the user's next `git status` in the project finds.
    let above = room.dir.parent().unwrap().join(".git");
    let run = bash(
        &room,
        "cd .. && git init -q . && git config core.fsmonitor 'echo planted' && echo made",
    );
    assert!(run.output().contains("made"), "{run:?}");
    assert!(!above.exists(), "{run:?}");
}

#[test]
fn a_secrets_folder_cannot_be_moved_out_of_the_scans_way() {
    let Some(room) = sandboxed_room() else {
        return;
    };
    room.write("backend/.env", "DB=topsecret\n");
    let run = bash(&room, "mkdir -p sub && mv backend sub/.git; echo moved");
    assert!(run.output().contains("Device or resource busy"), "{run:?}");
    assert!(room.path("backend/.env").exists(), "{run:?}");
    let run = bash(
        &room,
        "cat backend/.e''nv sub/.git/.e''nv 2>/dev/null; echo end",
    );
    let output = run.output();
    let (shown, note) = output.split_once("\n\n").unwrap_or_default();
    assert_eq!(shown, "end", "{run:?}");
    assert!(note.contains("read backend/.env as empty"), "{run:?}");
}

#[test]
fn the_project_laid_out_as_a_bare_repository_keeps_no_command_setting() {
    let Some(room) = sandboxed_room() else {
        return;
    };
    // Git takes a folder with HEAD, objects/ and refs/ for a git directory: the project
    // itself, with a config naming itself as the work tree.
    let run = bash(
        &room,
        "git init -q --bare /tmp/tt-bare-$$ && cp -r /tmp/tt-bare-$$/HEAD /tmp/tt-bare-$$/objects /tmp/tt-bare-$$/refs . \
         && rm -rf /tmp/tt-bare-$$ && printf '[core]\\n\\tbare = false\\n\\tworktree = .\\n\\tfsmonitor = echo planted\\n' > config && echo made",
    );
    assert!(run.output().contains("made"), "{run:?}");
    let config = room.read("config");
    assert!(!config.contains("fsmonitor"), "{config}");
    assert!(!config.contains("worktree"), "{config}");
}

#[test]
fn root_cannot_add_to_the_hosts_keyrings() {
    if !is_root() {
        crate::util::skip("not root (a user's keyrings are its user namespace's)");
        return;
    }
    let Some(room) = sandboxed_room() else {
        return;
    };
    let name = format!("tinytool-probe-{}", std::process::id());
    let run = bash(
        &room,
        &format!(
            "python3 -c \"import ctypes, os; libc = ctypes.CDLL(None, use_errno=True); \
             print(libc.syscall({nr}, b'user', b'{name}', b'x', 1, -4), ctypes.get_errno())\"",
            nr = if cfg!(target_arch = "aarch64") {
                217
            } else {
                248
            }
        ),
    );
    let keys = std::fs::read_to_string("/proc/keys").unwrap_or_default();
    assert!(!keys.contains(&name), "{run:?}");
    assert_eq!(run.output(), format!("-1 {}\n", libc::EPERM), "{run:?}");
}

#[test]
fn a_repository_planted_in_a_writable_root_above_the_project_is_removed_too() {
    // The project's folder is itself a `writable` path's child: a `.git` in that
    // writable folder (as /tmp/.git would be) is above the project as well.
    let room = Room::new();
    let outer = room.dir.parent().unwrap().to_path_buf();
    room.write_user(
        "policy.json",
        json!({
            "rules": [{"permission": "*", "pattern": "*", "action": "allow"}],
            "sandbox": {"writable": [outer]},
        })
        .to_string(),
    );
    if let Err(why) = crate::util::mount_layer(&room) {
        crate::util::skip(&why);
        return;
    }
    let run = bash(
        &room,
        "cd .. && git init -q . && git config core.fsmonitor 'echo planted' && echo made",
    );
    assert!(run.output().contains("made"), "{run:?}");
    assert!(!outer.join(".git").exists(), "{run:?}");
}
