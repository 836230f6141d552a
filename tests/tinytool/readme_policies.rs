//! The README's ready policies do what their prose promises: each is loaded as
//! the user policy, and the commands it says it allows and refuses are run for real in a
//! temporary directory, compound lines, wrappers and `git -C` included.

use serde_json::json;

use crate::util::Room;

/// The README's `json policy` blocks, in order: reviewer, build, CI.
fn readme_policies() -> Vec<String> {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    readme
        .split("```json policy")
        .skip(1)
        .map(|b| b.split("```").next().unwrap().to_string())
        .collect()
}

fn room_with(policy: usize) -> Room {
    let room = Room::new();
    room.write_user("policy.json", &readme_policies()[policy]);
    room
}

fn bash(room: &Room, command: &str) -> crate::util::Run {
    room.call("bash", json!({"command": command}))
}

#[test]
fn the_reviewer_runs_no_commands_and_changes_nothing() {
    let room = room_with(0);
    room.write("a.txt", "x\n");
    assert_eq!(room.call("read", json!({"file_path": "a.txt"})).code, 0);
    for command in ["git log --oneline", "git status && rm -rf src", "ls"] {
        assert_ne!(bash(&room, command).code, 0, "{command}");
    }
    let edit = room.call("write", json!({"file_path": "b.txt", "content": "y"}));
    assert_ne!(edit.code, 0);
    assert!(!room.path("b.txt").exists());
}

#[test]
fn the_build_policy_allows_target_cleanups_only() {
    let room = room_with(1);
    room.write("target/x/f", "1");
    room.write("target/y/f", "1");
    room.write("victim/f", "1");
    let run = bash(&room, "rm -rf target/x; rm -rf victim");
    assert_eq!(run.code, 3, "{run:?}");
    assert_eq!(run.json()["metadata"]["pattern"], "rm -rf victim");
    assert!(run.output().contains("rm -rf victim"), "{}", run.output());
    assert!(room.path("victim/f").exists());
    assert!(
        room.path("target/x/f").exists(),
        "nothing of a refused line runs"
    );
    let run = bash(&room, "rm -rf target/x && rm -rf target/y");
    assert_eq!(run.code, 0, "{run:?}");
    assert!(!room.path("target/x").exists() && !room.path("target/y").exists());
    // A glued `*` never reaches past the folder.
    room.write("src/f", "1");
    for command in [
        "rm -rf target/../src",
        "rm -rf target/x src",
        "sudo rm -rf src",
        "cd . && rm -rf src",
        "sh -c 'rm -rf src'",
    ] {
        let run = bash(&room, command);
        assert_eq!(run.code, 3, "{command}: {run:?}");
    }
    assert!(room.path("src/f").exists());
    for command in [
        "git push --force origin main",
        "true && git push --force",
        "timeout 9 git push --force",
        "git -C . push --force",
    ] {
        assert_eq!(bash(&room, command).code, 3, "{command}");
    }
    assert_eq!(bash(&room, "echo ok | wc -l").code, 0);
    let lock = room.call("write", json!({"file_path": "Cargo.lock", "content": "x"}));
    assert_eq!(lock.code, 3);
}

#[test]
fn the_ci_policy_allows_destruction_but_no_push_and_no_secrets() {
    let room = room_with(2);
    room.write("build/f", "1");
    room.write(".env", "K=1\n");
    assert_eq!(bash(&room, "rm -rf build").code, 0);
    assert!(!room.path("build").exists());
    for command in [
        "cd . && git push --force",
        "timeout 9 git push --force",
        "git -C . push --force",
        "sudo -u ci git --no-pager push -f",
        "cat .env",
        "ls; cat .env",
    ] {
        let run = bash(&room, command);
        assert_eq!(run.code, 3, "{command}: {run:?}");
    }
    assert_ne!(
        room.call("webfetch", json!({"url": "https://example.com/"}))
            .code,
        0
    );
}

#[test]
fn the_ci_policy_has_no_network_and_writes_only_the_checkout_and_its_own_tmp() {
    let room = room_with(2);
    if let Err(why) = crate::util::mount_layer(&room) {
        // `required` refuses every command where a layer is missing: nothing escapes.
        crate::util::skip(&why);
        assert_eq!(bash(&room, "touch x").code, 3);
        assert!(!room.path("x").exists());
        return;
    }
    let (_listener, probe) = crate::util::host_loopback_probe();
    let run = bash(&room, &probe);
    assert_ne!(run.code, 0, "{run:?}");
    assert!(!run.output().contains("reached"), "{run:?}");
    assert_eq!(run.json()["metadata"]["sandbox"]["mode"], "required");

    let outside = std::path::PathBuf::from(format!("/var/tmp/tinytool-ci-{}", std::process::id()));
    let probe = format!("/tmp/tinytool-ci-probe-{}", std::process::id());
    let run = bash(
        &room,
        &format!(
            "mkdir -p out && echo built > out/bin && echo t > {probe}; echo o > {}",
            outside.display()
        ),
    );
    let leaked = outside.exists();
    let _ = std::fs::remove_file(&outside);
    assert!(!leaked, "{run:?}");
    assert!(run.output().contains("[sandbox:"), "{run:?}");
    assert_eq!(room.read("out/bin"), "built\n");
    // /tmp is the project's own: written there, not on the host's, and there for the
    // next call.
    assert!(!std::path::Path::new(&probe).exists(), "{run:?}");
    let again = bash(&room, &format!("cat {probe}"));
    assert_eq!(again.output(), "t\n", "{again:?}");
    // Nor outside the checkout through a file tool.
    let write = room.call(
        "write",
        json!({"file_path": outside.display().to_string(), "content": "x"}),
    );
    assert_ne!(write.code, 0);
    assert!(!outside.exists());
}

#[test]
fn the_build_policy_serves_python_node_rust_and_go() {
    let room = room_with(1);
    // Each ecosystem's build folders can be cleaned, and only those.
    for folder in [
        "target",
        "node_modules",
        "dist",
        "build",
        ".venv",
        "__pycache__",
        ".pytest_cache",
    ] {
        room.write(&format!("{folder}/x/f"), "1");
        let run = bash(&room, &format!("rm -rf {folder}"));
        assert_eq!(run.code, 0, "{folder}: {run:?}");
        assert!(!room.path(folder).exists(), "{folder}");
    }
    room.write("node_modules/a/f", "1");
    let run = bash(&room, "rm -rf node_modules/a && rm -rf node_modules/../src");
    assert_eq!(run.code, 3, "{run:?}");
    assert!(room.path("node_modules/a/f").exists());
    // Every ecosystem's lock file is kept from edits.
    for lock in [
        "Cargo.lock",
        "package-lock.json",
        "web/package-lock.json",
        "yarn.lock",
        "pnpm-lock.yaml",
        "poetry.lock",
        "uv.lock",
        "go.sum",
    ] {
        let run = room.call("write", json!({"file_path": lock, "content": "x"}));
        assert_eq!(run.code, 3, "{lock}: {run:?}");
    }
    // The toolchains' caches are writable, made where they are missing; the programs
    // folders beside them are not opened.
    let policy: serde_json::Value = serde_json::from_str(&readme_policies()[1]).unwrap();
    let writable = policy["sandbox"]["writable"].as_array().unwrap();
    for cache in ["~/.npm", "~/.cache", "~/go/pkg/mod", "~/.cargo/registry"] {
        assert!(writable.contains(&json!(cache)), "{cache}");
    }
    for program_folder in [
        "~/.cargo",
        "~/go",
        "~/.cargo/bin",
        "~/go/bin",
        "~/.local/bin",
    ] {
        assert!(
            !writable.contains(&json!(program_folder)),
            "{program_folder}"
        );
    }
    if crate::util::mount_layer(&room).is_ok() {
        let run = bash(
            &room,
            "touch ~/.npm/a ~/.cache/go-build-a ~/go/pkg/mod/a ~/.cargo/registry/a && echo ok",
        );
        assert_eq!(run.output(), "ok\n", "{run:?}");
    }
}
