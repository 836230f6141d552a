//! The kernel sandbox of bash commands: real commands, as the user running
//! the tests and, when that is root, again as an unprivileged user (uid 65534 through
//! `setpriv`, on a copy of the binary it can execute). A case skips, saying why, only
//! where the machine cannot set the sandbox up.

use std::os::unix::fs::PermissionsExt;
use std::process::Command;

use serde_json::{Value, json};

use crate::util::{Room, Run, daemon_sleep, living_named, marked_sleep};

/// Every policy allows the commands: only the sandbox stops them.
const ALLOW_ALL: &str = r#"{"rules": [{"permission": "*", "pattern": "*", "action": "allow"}]}"#;

fn git_room(policy: &str) -> Room {
    let room = Room::new();
    room.write_user("policy.json", policy);
    let git = |args: &[&str]| {
        let mut cmd = Command::new("git");
        cmd.args(args);
        room.enter(&mut cmd);
        assert!(cmd.output().unwrap().status.success(), "git {args:?}");
    };
    git(&["init", "-q"]);
    room.write(".env", "KEY=hunter2\n");
    room.write("a.txt", "a\n");
    room
}

fn bash(room: &Room, command: &str) -> Run {
    room.call("bash", json!({"command": command}))
}

/// A result's output before its `[sandbox: …]` lines.
fn shown(run: &Run) -> String {
    let out = run.output();
    match out.find("\n\n[sandbox:") {
        Some(at) => out[..=at].to_string(),
        None => out,
    }
}

#[test]
fn writes_outside_and_to_protected_paths_fail_and_say_why() {
    let room = git_room(ALLOW_ALL);
    if let Err(why) = crate::util::mount_layer(&room) {
        crate::util::skip(&why);
        return;
    }
    // /tmp is writable (as the project is, under it): somewhere else outside.
    let outside =
        std::path::PathBuf::from(format!("/var/tmp/tinytool-sandbox-{}", std::process::id()));
    let run = bash(
        &room,
        &format!(
            "python3 -c \"open('{}','w').write('x')\"",
            outside.display()
        ),
    );
    assert_eq!(run.code, 1, "{run:?}");
    let leaked = outside.exists();
    let _ = std::fs::remove_file(&outside);
    assert!(!leaked);
    assert!(run.output().contains("Read-only file system"), "{run:?}");
    assert!(run.output().trim_end().ends_with(']'), "{run:?}");
    assert!(run.output().contains("[sandbox:"), "{run:?}");

    let run = bash(&room, "echo 'touch pwned' > .git/hooks/pre-commit");
    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.output().contains("[sandbox:"), "{run:?}");
    assert!(!room.path(".git/hooks/pre-commit").exists());
    let run = bash(&room, "git config core.fsmonitor 'touch pwned'");
    assert_ne!(run.code, 0, "{run:?}");
    assert!(run.output().contains("[sandbox:"), "{run:?}");
    assert!(
        !std::fs::read_to_string(room.path(".git/config"))
            .unwrap()
            .contains("fsmonitor")
    );
    let run = bash(
        &room,
        "mv .git .g && mkdir -p .git/hooks && echo 'touch pwned' > .git/hooks/pre-commit",
    );
    assert_ne!(run.code, 0, "{run:?}");
    assert!(run.output().contains("[sandbox:"), "{run:?}");
    assert!(room.path(".git/config").exists());
    assert!(!room.path(".g").exists());
    let run = bash(
        &room,
        "python3 -c \"open('.'+'tinytool/approvals','w').write('x')\"",
    );
    assert_ne!(run.code, 0, "{run:?}");
    assert!(!room.path(".tinytool/approvals").exists());
    // The stored approvals live in the user's state home (here under /tmp, which is
    // writable): a name built at run time cannot reach them either, nor create them.
    let run = bash(
        &room,
        "python3 -c \"import os; d=os.environ['XDG_STATE_HOME']+'/tiny'+'tool/approvals'; \
         os.makedirs(d, exist_ok=True); open(d+'/x.json','w').write('{}')\"",
    );
    assert_ne!(run.code, 0, "{run:?}");
    assert!(run.output().contains("[sandbox:"), "{run:?}");
    assert!(
        !room
            .home
            .join(".local/state/tinytool/approvals/x.json")
            .exists()
    );
    room.write_user("config.json", "{}\n");
    let run = bash(
        &room,
        "echo '{\"webfetch\": {\"allow_hosts\": [\"127.0.0.1\"]}}' > \"$HOME/.config/tinytool/config.json\"",
    );
    assert_ne!(run.code, 0, "{run:?}");
    assert!(run.output().contains("[sandbox:"), "{run:?}");
    assert_eq!(
        std::fs::read_to_string(room.home.join(".config/tinytool/config.json")).unwrap(),
        "{}\n"
    );

    // Inside the project, work goes on: builds write, git commits.
    let run = bash(
        &room,
        "mkdir -p target && echo o > target/out && git add a.txt && \
         git -c user.email=t@t -c user.name=t commit -qm one && git log --oneline | wc -l",
    );
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(run.output(), "1\n");
    assert!(room.path("target/out").exists());
}

#[test]
fn a_masked_secret_reads_empty_but_is_still_listed() {
    let room = git_room(ALLOW_ALL);
    if let Err(why) = crate::util::mount_layer(&room) {
        crate::util::skip(&why);
        return;
    }
    // `-I`: the state database (binary) holds this very command line in its checkpoint;
    // the text copies of .env in the checkpoint store are what must not match.
    let run = bash(
        &room,
        "tar c . | tar t | grep -x './.env'; grep -rI hunter2 . ; wc -c < .e''nv",
    );
    assert!(run.output().contains("./.env"), "{run:?}");
    assert!(!run.output().contains("hunter2"), "{run:?}");
    // The masked file read is named at the end.
    assert!(
        run.output()
            .ends_with("0\n\n[sandbox: the command read .env as empty: secret files git does not track are masked for commands; to show them, allow the command with a secret-shell rule ({\"permission\": \"secret-shell\", \"pattern\": \"<the command>\", \"action\": \"allow\"}) or add \"sandbox\": {\"unmask\": [\".env\"]} to the user policy]"),
        "{run:?}"
    );
    let layers = &run.json()["metadata"]["sandbox"]["layers"];
    assert!(
        layers.as_array().unwrap().iter().any(|l| l == "mask"),
        "{run:?}"
    );
    assert_eq!(room.read(".env"), "KEY=hunter2\n");
}

#[test]
fn a_secret_created_between_calls_is_masked_on_the_next() {
    let room = git_room(ALLOW_ALL);
    if let Err(why) = crate::util::mount_layer(&room) {
        crate::util::skip(&why);
        return;
    }
    // The first call leaves the secret cache; the next ones start from it and check it
    // while the sandbox is built.
    assert_eq!(bash(&room, "true").code, 0);
    std::fs::create_dir_all(room.path("deep/er")).unwrap();
    std::fs::write(room.path("deep/er/.env"), "KEY=late-one\n").unwrap();
    let run = bash(&room, "cat deep/er/.e''nv; wc -c < .e''nv");
    assert_eq!(run.code, 0, "{run:?}");
    assert!(!run.output().contains("late-one"), "{run:?}");
    assert_eq!(shown(&run), "0\n", "{run:?}");
    assert!(
        run.output().contains("read .env, deep/er/.env as empty"),
        "{run:?}"
    );
    // In a directory the cache already lists, and with the cache now holding.
    std::fs::write(room.path("id_rsa"), "late-two\n").unwrap();
    for _ in 0..2 {
        let run = bash(&room, "cat id_r''sa deep/er/.e''nv; echo end");
        assert_eq!(shown(&run), "end\n", "{run:?}");
    }
    assert_eq!(room.read("id_rsa"), "late-two\n");
}

#[test]
fn with_the_network_off_a_loopback_server_of_the_host_is_out_of_reach() {
    let room = git_room(
        r#"{"rules": [{"permission": "*", "pattern": "*", "action": "allow"}],
            "sandbox": {"network": false}}"#,
    );
    if let Err(why) = crate::util::mount_layer(&room) {
        crate::util::skip(&why);
        return;
    }
    let (_listener, probe) = crate::util::host_loopback_probe();
    let run = bash(&room, &probe);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(!run.output().contains("reached"), "{run:?}");
    assert!(run.output().contains("network"), "{run:?}");
    let layers = &run.json()["metadata"]["sandbox"]["layers"];
    assert!(
        layers.as_array().unwrap().iter().any(|l| l == "net"),
        "{run:?}"
    );
}

#[test]
fn a_double_forked_daemon_is_gone_when_the_call_returns() {
    let room = git_room(ALLOW_ALL);
    if let Err(why) = crate::util::mount_layer(&room) {
        crate::util::skip(&why);
        return;
    }
    let sleep = marked_sleep(&room);
    let run = bash(
        &room,
        &format!(
            "env -i sh -c \"{}\"",
            daemon_sleep(&sleep, 60).replace('"', "\\\"")
        ),
    );
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(living_named(&sleep), Vec::<String>::new());
}

#[test]
fn required_mode_refuses_with_exit_3_when_a_layer_is_missing() {
    // Where every layer can be set up, `required` runs the command and says so; where
    // one cannot, the command is refused with exit status 3.
    let room = git_room(r#"{"sandbox": {"mode": "required"}}"#);
    let run = bash(&room, "echo ok");
    match crate::util::mount_layer(&room) {
        Ok(()) => {
            assert_eq!(run.code, 0, "{run:?}");
            assert_eq!(run.json()["metadata"]["sandbox"]["mode"], "required");
        }
        Err(_) => {
            assert_eq!(run.code, 3, "{run:?}");
            assert!(run.output().contains("required"), "{run:?}");
        }
    }
}

#[test]
fn as_an_unprivileged_user_the_sandbox_holds_too() {
    let Some(nobody) = crate::util::Nobody::new(ALLOW_ALL) else {
        return;
    };
    let dir = nobody.work.clone();
    std::fs::write(dir.join(".env"), "KEY=hunter2\n").unwrap();
    nobody.hand_over();
    let call = |command: &str| -> Value { nobody.bash(&dir, command, &[]).json() };
    if !crate::util::Nobody::sandboxed(&nobody.bash(&dir, "true", &[])) {
        return;
    }
    // A folder outside /tmp that uid 65534 could write without the sandbox.
    let open = std::path::PathBuf::from(format!("/var/tmp/tinytool-sbx-{}", std::process::id()));
    std::fs::create_dir_all(&open).unwrap();
    std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
    let result = call(&format!(
        "touch ok; touch {}/x; cat .e''nv; echo $$",
        open.display()
    ));
    let leaked = open.join("x").exists();
    let _ = std::fs::remove_dir_all(&open);
    let output = result["output"].as_str().unwrap();
    assert!(dir.join("ok").exists(), "{result}");
    assert!(!leaked, "{result}");
    assert!(!output.contains("hunter2"), "{result}");
    assert!(output.contains("Read-only file system"), "{result}");
}

#[test]
fn a_sigkilled_tinytool_leaves_not_even_a_setsid_child() {
    let room = git_room(ALLOW_ALL);
    if let Err(why) = crate::util::mount_layer(&room) {
        crate::util::skip(&why);
        return;
    }
    let sleep = marked_sleep(&room);
    let cmd = room.command(&[
        "bash",
        "--command",
        &format!("{}; ./{sleep} 300", crate::util::escaped_sleep(&sleep, 301)),
    ]);
    assert_eq!(
        crate::util::survivors_of_sigkill(cmd, &sleep, 2),
        Vec::<String>::new()
    );
}

#[test]
fn the_sandbox_subcommand_names_every_layer_and_why_one_is_missing() {
    let room = git_room(ALLOW_ALL);
    let run = room.run(&["sandbox", "--json"], None);
    assert_eq!(run.code, 0, "{run:?}");
    let report = run.json();
    assert_eq!(report["mode"], "auto");
    assert_eq!(report["network"], true);
    let layers = report["layers"].as_array().unwrap();
    let names: Vec<&str> = layers.iter().filter_map(|l| l["layer"].as_str()).collect();
    for layer in ["userns", "mount", "pid", "net", "mask"] {
        assert!(names.contains(&layer), "{report}");
    }
    for layer in layers {
        // A missing layer always says why.
        if layer["available"] == false {
            assert!(!layer["why"].as_str().unwrap().is_empty(), "{report}");
        }
    }
    // What the subcommand reports is what a bash call gets.
    let mount = layers.iter().find(|l| l["layer"] == "mount").unwrap();
    assert_eq!(
        mount["available"],
        crate::util::mount_layer(&room).is_ok(),
        "{report}"
    );
    let text = room.run(&["sandbox"], None);
    assert_eq!(text.code, 0);
    assert!(text.stdout.contains("mount: "), "{text:?}");
    assert!(text.stdout.starts_with("sandbox.mode: auto"), "{text:?}");
}

#[test]
fn under_the_default_policy_undetected_damage_fails_with_the_explanation() {
    // No user policy: the built-in defaults decide, and these commands pass them.
    let room = Room::new();
    let git = Command::new("git")
        .args(["init", "-q"])
        .current_dir(room.path(""))
        .status()
        .unwrap();
    assert!(git.success());
    room.write_user("config.json", "{}\n");
    if let Err(why) = crate::util::mount_layer(&room) {
        crate::util::skip(&why);
        return;
    }
    let outside = format!("/var/tmp/tinytool-default-{}", std::process::id());
    for command in [
        format!("python3 -c \"open('{outside}','w').write('x')\""),
        "echo 'touch pwned' > .git/hooks/pre-commit".to_string(),
        "git config core.fsmonitor 'touch pwned'".to_string(),
        "mv .git .g && mkdir -p .git/hooks".to_string(),
        "python3 -c \"import os; open(os.path.expanduser('~/.con'+'fig/tiny'+'tool/con'+'fig.json'),'w').write('x')\"".to_string(),
    ] {
        let run = bash(&room, &command);
        assert_eq!(run.code, 1, "{command}: {run:?}");
        assert!(
            run.output().trim_end().ends_with(']') && run.output().contains("[sandbox:"),
            "{command}: {run:?}"
        );
    }
    let leaked = std::path::Path::new(&outside).exists();
    let _ = std::fs::remove_file(&outside);
    assert!(!leaked);
    assert!(!room.path(".git/hooks/pre-commit").exists());
    assert!(!room.path(".g").exists());
    assert_eq!(
        std::fs::read_to_string(room.home.join(".config/tinytool/config.json")).unwrap(),
        "{}\n"
    );
}

#[test]
fn a_secret_stays_masked_when_a_command_ignores_its_folder() {
    let room = git_room(ALLOW_ALL);
    if let Err(why) = crate::util::mount_layer(&room) {
        crate::util::skip(&why);
        return;
    }
    room.write("backend/.env", "DB=topsecret\n");
    // The first call finds it; the next adds its folder to an ignore file, the scan
    // walks past it from then on.
    let run = bash(&room, "echo backend/ >> .ignore");
    assert_eq!(run.code, 0, "{run:?}");
    for _ in 0..2 {
        let run = bash(&room, "cat backend/.e''nv; echo end");
        assert_eq!(shown(&run), "end\n", "{run:?}");
    }
    // Removed by the user: the calls go on, nothing left to mask.
    std::fs::remove_file(room.path("backend/.env")).unwrap();
    let run = bash(&room, "echo ok");
    assert_eq!(run.output(), "ok\n", "{run:?}");
    assert_eq!(
        run.json()["metadata"]["sandbox"]["missing"],
        json!([]),
        "{run:?}"
    );
}
