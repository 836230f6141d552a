//! The Landlock fallback: where the namespaces cannot be set up, writes are
//! still limited to the writable set, and `metadata.sandbox.missing` says what Landlock
//! cannot do. The test binary is a debug build, which honours
//! `TINYTOOL_TEST_NO_NAMESPACES` (the child behaves as if `unshare` were refused).

use serde_json::{Value, json};

use crate::util::{Room, Run};

const ALLOW_ALL: &str = r#"{"rules": [{"permission": "*", "pattern": "*", "action": "allow"}]}"#;

fn landlock_room(policy: &str) -> Room {
    let mut room = Room::new();
    room.write_user("policy.json", policy);
    room.set_env("TINYTOOL_TEST_NO_NAMESPACES", "1");
    room
}

/// Whether this kernel has Landlock (else why not), as `tinytool sandbox` says.
fn supported(room: &Room) -> Result<(), String> {
    let report = room.run(&["sandbox", "--json"], None).json();
    let landlock = report["layers"]
        .as_array()
        .and_then(|l| l.iter().find(|x| x["layer"] == "landlock"))
        .cloned()
        .unwrap_or(Value::Null);
    if landlock["available"] == true {
        Ok(())
    } else {
        Err(format!("no Landlock here: {landlock}"))
    }
}

fn bash(room: &Room, command: &str) -> Run {
    room.call("bash", json!({"command": command}))
}

fn missing_why(run: &Run, layer: &str) -> String {
    run.json()["metadata"]["sandbox"]["missing"]
        .as_array()
        .and_then(|m| m.iter().find(|x| x["layer"] == layer))
        .map(|x| x["why"].as_str().unwrap_or_default().to_string())
        .unwrap_or_default()
}

#[test]
fn without_namespaces_landlock_limits_writes_and_says_what_it_cannot_do() {
    let room = landlock_room(ALLOW_ALL);
    if let Err(why) = supported(&room) {
        crate::util::skip(&why);
        return;
    }
    room.write(".env", "KEY=hunter2\n");
    let outside =
        std::path::PathBuf::from(format!("/var/tmp/tinytool-landlock-{}", std::process::id()));
    let tmp = tempfile::tempdir().unwrap();
    let run = bash(
        &room,
        &format!(
            "mkdir -p target && echo o > target/out && touch {}/t && echo x > {}",
            tmp.path().display(),
            outside.display()
        ),
    );
    let leaked = outside.exists();
    let _ = std::fs::remove_file(&outside);
    assert!(!leaked, "{run:?}");
    assert_ne!(run.code, 0, "{run:?}");
    assert!(run.output().contains("Permission denied"), "{run:?}");
    assert!(
        run.output().trim_end().ends_with(']') && run.output().contains("[sandbox: Landlock"),
        "{run:?}"
    );
    assert_eq!(room.read("target/out"), "o\n");
    assert!(tmp.path().join("t").exists());
    assert_eq!(
        run.json()["metadata"]["sandbox"]["layers"],
        json!(["landlock"]),
        "{run:?}"
    );
    // What the fallback cannot do is said, layer by layer.
    assert!(missing_why(&run, "mount").contains("Landlock"), "{run:?}");
    assert!(missing_why(&run, "mask").contains("mask"), "{run:?}");
    assert!(missing_why(&run, "pid").contains("daemons"), "{run:?}");
}

#[test]
fn without_namespaces_a_user_config_outside_the_writable_set_stays_unwritable() {
    let mut room = landlock_room(ALLOW_ALL);
    if let Err(why) = supported(&room) {
        crate::util::skip(&why);
        return;
    }
    // A config home as it usually is: outside /tmp and the project (the room's own is
    // under /tmp, which Landlock cannot protect: rules only add).
    let home = std::path::PathBuf::from(format!("/var/tmp/tinytool-ll-{}", std::process::id()));
    std::fs::create_dir_all(home.join("tinytool")).unwrap();
    std::fs::write(home.join("tinytool/policy.json"), ALLOW_ALL).unwrap();
    room.set_env("XDG_CONFIG_HOME", home.display().to_string());
    let run = bash(
        &room,
        "python3 -c \"import os; open(os.environ['XDG_CONFIG_HOME']+'/tiny'+'tool/config.json','w').write('{}')\"",
    );
    let written = home.join("tinytool/config.json").exists();
    let _ = std::fs::remove_dir_all(&home);
    assert!(!written, "{run:?}");
    assert_ne!(run.code, 0, "{run:?}");
}

#[test]
fn without_namespaces_the_network_off_still_blocks_tcp_to_loopback() {
    let room = landlock_room(
        r#"{"rules": [{"permission": "*", "pattern": "*", "action": "allow"}],
            "sandbox": {"network": false}}"#,
    );
    if let Err(why) = supported(&room) {
        crate::util::skip(&why);
        return;
    }
    let (_listener, probe) = crate::util::host_loopback_probe();
    let run = bash(&room, &probe);
    if missing_why(&run, "net").contains("ABI < 4") {
        crate::util::skip("this kernel's Landlock cannot limit TCP");
        return;
    }
    assert_ne!(run.code, 0, "{run:?}");
    assert!(!run.output().contains("reached"), "{run:?}");
    assert!(missing_why(&run, "net").contains("UDP"), "{run:?}");
}

#[test]
fn without_namespaces_required_mode_refuses_with_exit_3() {
    let room = landlock_room(r#"{"sandbox": {"mode": "required"}}"#);
    room.write("a", "");
    let run = bash(&room, "rm a");
    assert_eq!(run.code, 3, "{run:?}");
    assert!(run.output().contains("required"), "{run:?}");
    assert!(room.path("a").exists());
    let report = room.run(&["sandbox"], None);
    assert!(report.stdout.contains("mount: no: unshare"), "{report:?}");
}

#[test]
fn without_namespaces_the_report_and_every_result_say_what_is_missing_and_what_it_means() {
    let room = landlock_room(r#"{"sandbox": {"mode": "required", "network": false}}"#);
    if let Err(why) = supported(&room) {
        crate::util::skip(&why);
        return;
    }
    // The report: each missing layer with what Landlock does in its place, and the verdict.
    let report = room.run(&["sandbox", "--json"], None).json();
    for layer in ["mount", "pid", "net"] {
        let entry = report["layers"]
            .as_array()
            .unwrap()
            .iter()
            .find(|l| l["layer"] == layer)
            .unwrap()
            .clone();
        assert_eq!(entry["available"], false, "{report}");
        assert!(
            entry["why"].as_str().unwrap().contains("Landlock"),
            "{report}"
        );
    }
    let verdict = report["verdict"].as_str().unwrap_or_default();
    assert!(verdict.contains("refused"), "{report}");
    assert!(verdict.contains("mount"), "{report}");
    let text = room.run(&["sandbox"], None);
    assert!(
        text.stdout.trim_end().ends_with("cannot be set up"),
        "{text:?}"
    );

    // Every kind of command is refused with exit status 3, naming the missing layers.
    room.write_user(
        "config.json",
        json!({"subagents": {"noop": {"command": ["true"]}}}).to_string(),
    );
    for (tool, args) in [
        ("bash", json!({"command": "true"})),
        ("monitor", json!({"command": "true"})),
        (
            "task",
            json!({"description": "d", "prompt": "p", "subagent_type": "noop"}),
        ),
        (
            "task",
            json!({"description": "d", "prompt": "p", "subagent_type": "noop", "background": true}),
        ),
    ] {
        let run = room.call(tool, args);
        assert_eq!(run.code, 3, "{run:?}");
        assert!(run.output().contains("mount ("), "{run:?}");
        let sandbox = &run.json()["metadata"]["sandbox"];
        assert_eq!(sandbox["refused"], true, "{run:?}");
        assert_eq!(sandbox["layers"], json!(["landlock"]), "{run:?}");
    }

    // In auto mode the command runs, and the result says what is missing.
    let room = landlock_room(ALLOW_ALL);
    let run = bash(&room, "true");
    assert_eq!(run.code, 0, "{run:?}");
    assert!(missing_why(&run, "mask").contains("cannot mask"), "{run:?}");
    assert!(missing_why(&run, "pid").contains("daemons"), "{run:?}");
    let text = room.run(&["sandbox"], None);
    assert!(
        text.stdout.contains("commands run here without"),
        "{text:?}"
    );
}

#[test]
fn without_namespaces_the_network_off_still_keeps_host_unix_sockets_out() {
    let room = landlock_room(
        r#"{"rules": [{"permission": "*", "pattern": "*", "action": "allow"}],
            "sandbox": {"network": false}}"#,
    );
    if let Err(why) = supported(&room) {
        crate::util::skip(&why);
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("host.sock");
    let _listener = std::os::unix::net::UnixListener::bind(&path).unwrap();
    let run = bash(
        &room,
        &format!(
            "python3 -c \"import socket; s = socket.socket(socket.AF_UNIX); s.connect('{}'); print('reached')\"",
            path.display()
        ),
    );
    assert!(!run.output().contains("reached"), "{run:?}");
    assert!(missing_why(&run, "net").contains("Unix sockets"), "{run:?}");
}

#[test]
fn under_landlock_the_null_style_devices_stay_writable_and_dev_does_not() {
    let room = landlock_room(ALLOW_ALL);
    if let Err(why) = supported(&room) {
        crate::util::skip(&why);
        return;
    }
    let run = bash(
        &room,
        "echo hi > /dev/null && head -c 3 /dev/urandom | wc -c",
    );
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(run.output(), "3\n", "{run:?}");
    let probe = format!("/dev/tinytool-landlock-{}", std::process::id());
    let run = bash(&room, &format!("touch {probe}"));
    let leaked = std::path::Path::new(&probe).exists();
    let _ = std::fs::remove_file(&probe);
    assert!(!leaked, "{run:?}");
    assert_ne!(run.code, 0, "{run:?}");
}

#[test]
fn without_namespaces_a_root_command_holds_no_capability_and_makes_no_device() {
    let room = landlock_room(ALLOW_ALL);
    if let Err(why) = supported(&room) {
        crate::util::skip(&why);
        return;
    }
    let run = bash(
        &room,
        "grep -E '^(CapEff|CapPrm|CapBnd|CapAmb|NoNewPrivs)' /proc/self/status; \
         mknod ./blk b 7 0 2>/dev/null && echo made; mknod ./chr c 1 3 2>/dev/null && echo made",
    );
    let out = run.output();
    for line in [
        "CapEff:\t0000000000000000",
        "CapPrm:\t0000000000000000",
        "CapAmb:\t0000000000000000",
        "NoNewPrivs:\t1",
    ] {
        assert!(out.contains(line), "{line}: {run:?}");
    }
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        assert!(out.contains("CapBnd:\t0000000000000000"), "{run:?}");
    }
    assert!(!out.contains("made"), "{run:?}");
    assert!(!room.path("blk").exists() && !room.path("chr").exists());
}

#[test]
fn without_namespaces_the_network_off_keeps_udp_from_the_host() {
    let room = landlock_room(
        r#"{"rules": [{"permission": "*", "pattern": "*", "action": "allow"}],
            "sandbox": {"network": false}}"#,
    );
    if let Err(why) = supported(&room) {
        crate::util::skip(&why);
        return;
    }
    let listener = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let run = bash(
        &room,
        &format!(
            "python3 -c \"import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.sendto(b'reached', ('127.0.0.1', {port})); print('sent')\""
        ),
    );
    assert!(!run.output().contains("sent"), "{run:?}");
    listener.set_nonblocking(true).unwrap();
    let mut buffer = [0u8; 16];
    assert!(
        listener.recv(&mut buffer).is_err(),
        "a datagram arrived: {run:?}"
    );
    assert!(missing_why(&run, "net").contains("every socket"), "{run:?}");
    // Pipes and stream pairs still work.
    let run = bash(
        &room,
        "echo piped | cat; python3 -c \"import socket; a, b = socket.socketpair(); a.send(b'pair'); print(b.recv(4).decode())\"",
    );
    assert_eq!(run.output(), "piped\npair\n", "{run:?}");
}

#[test]
fn without_namespaces_an_unprivileged_command_gets_no_new_privileges_and_no_network() {
    let Some(nobody) = crate::util::Nobody::new(
        r#"{"rules": [{"permission": "*", "pattern": "*", "action": "allow"}],
            "sandbox": {"network": false}}"#,
    ) else {
        return;
    };
    let listener = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let run = nobody.bash(
        &nobody.work,
        &format!(
            "grep -E '^(CapEff|NoNewPrivs)' /proc/self/status; python3 -c \"import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.sendto(b'x', ('127.0.0.1', {port})); print('sent')\""
        ),
        &[("TINYTOOL_TEST_NO_NAMESPACES", "1")],
    );
    let layers = &run.json()["metadata"]["sandbox"]["layers"];
    if *layers != json!(["landlock"]) {
        crate::util::skip(format!("no Landlock for uid 65534: {run:?}"));
        return;
    }
    let out = run.output();
    assert!(out.contains("CapEff:\t0000000000000000"), "{run:?}");
    assert!(out.contains("NoNewPrivs:\t1"), "{run:?}");
    assert!(!out.contains("sent"), "{run:?}");
    listener.set_nonblocking(true).unwrap();
    assert!(listener.recv(&mut [0u8; 4]).is_err());
}
