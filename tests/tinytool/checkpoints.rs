//! Checkpoints and undo, black-box: the real binary in a temporary project.

use std::os::unix::fs::PermissionsExt;

use serde_json::{Value, json};

use crate::util::Room;

/// A room whose user policy allows destructive and secret shell commands (as a CI policy
/// allowing `destructive-shell` does), so calls can do damage that undo must repair.
fn room() -> Room {
    let room = Room::new();
    room.write_user(
        "policy.json",
        json!({"rules": [
            {"permission": "destructive-shell", "pattern": "*", "action": "allow"},
            {"permission": "secret-shell", "pattern": "*", "action": "allow"}
        ]})
        .to_string(),
    );
    room
}

fn bash(room: &Room, command: &str) -> Value {
    let run = room.call("bash", json!({"command": command}));
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    run.json()
}

fn mode(room: &Room, rel: &str) -> u32 {
    std::fs::metadata(room.path(rel))
        .unwrap()
        .permissions()
        .mode()
        & 0o7777
}

#[test]
fn undo_restores_what_bash_removed_with_its_mode() {
    let room = room();
    room.write("src/a.c", "int a;\n");
    room.write("src/b.c", "int b;\n");
    room.write("run.sh", "#!/bin/sh\necho hi\n");
    std::fs::set_permissions(room.path("run.sh"), std::fs::Permissions::from_mode(0o750)).unwrap();
    let result = bash(&room, "rm -rf src run.sh && echo new > made.txt");
    let checkpoint = &result["metadata"]["checkpoint"];
    assert_eq!(checkpoint["files"], 4, "{result}");
    assert!(!room.path("src").exists());

    let undo = room.run(&["undo"], None);
    assert_eq!(undo.code, 0, "{}{}", undo.stdout, undo.stderr);
    assert_eq!(room.read("src/a.c"), "int a;\n");
    assert_eq!(room.read("src/b.c"), "int b;\n");
    assert_eq!(room.read("run.sh"), "#!/bin/sh\necho hi\n");
    assert_eq!(mode(&room, "run.sh"), 0o750);
    assert!(!room.path("made.txt").exists(), "a created file goes");
}

#[test]
fn a_read_only_command_takes_no_checkpoint() {
    let room = room();
    room.write("a.txt", "a\n");
    let result = bash(&room, "cat a.txt | wc -l");
    assert!(result["metadata"].get("checkpoint").is_none(), "{result}");
    let result = bash(&room, "true > a.txt");
    assert_eq!(result["metadata"]["checkpoint"]["files"], 1, "{result}");
}

#[test]
fn undo_twice_walks_back_and_an_undo_of_an_undo_redoes() {
    let room = room();
    room.write("f.txt", "one\n");
    let edit = room.call(
        "edit",
        json!({"file_path": "f.txt", "old_string": "one", "new_string": "two"}),
    );
    assert_eq!(edit.code, 0, "{}", edit.stdout);
    let write = room.call("write", json!({"file_path": "g.txt", "content": "gee\n"}));
    assert_eq!(write.code, 0, "{}", write.stdout);
    assert_eq!(room.read("f.txt"), "two\n");

    let first = room.run(&["undo"], None);
    assert_eq!(first.code, 0, "{}{}", first.stdout, first.stderr);
    assert!(!room.path("g.txt").exists());
    assert_eq!(room.read("f.txt"), "two\n");
    let second = room.run(&["undo"], None);
    assert_eq!(second.code, 0, "{}{}", second.stdout, second.stderr);
    assert_eq!(room.read("f.txt"), "one\n");

    // The newest checkpoint is the second undo; undoing it brings the edit back.
    let list = room.run(&["checkpoints", "--json"], None).json();
    let newest = &list[0];
    assert_eq!(newest["kind"], "undo", "{list}");
    let id = newest["id"].to_string();
    let redo = room.run(&["undo", &id], None);
    assert_eq!(redo.code, 0, "{}{}", redo.stdout, redo.stderr);
    assert_eq!(room.read("f.txt"), "two\n");
    assert!(!room.path("g.txt").exists());
    // And a plain undo now reverts the edit again (it counts as not undone).
    let again = room.run(&["undo"], None);
    assert_eq!(again.code, 0, "{}{}", again.stdout, again.stderr);
    assert_eq!(room.read("f.txt"), "one\n");
}

#[test]
fn a_persons_edit_is_a_conflict_unless_forced() {
    let room = room();
    room.write("a.txt", "base\n");
    bash(&room, "echo agent > a.txt");
    room.write("a.txt", "person\n");
    let dry = room.run(&["undo", "--dry-run"], None);
    assert_eq!(dry.code, 1, "{}{}", dry.stdout, dry.stderr);
    assert!(dry.stdout.contains("conflict: a.txt"), "{}", dry.stdout);
    let refused = room.run(&["undo"], None);
    assert_eq!(refused.code, 1, "{}{}", refused.stdout, refused.stderr);
    assert!(
        refused.stdout.contains("conflict: a.txt"),
        "{}",
        refused.stdout
    );
    assert!(refused.stdout.contains("refused"), "{}", refused.stdout);
    assert_eq!(room.read("a.txt"), "person\n", "left alone");
    let forced = room.run(&["undo", "--force"], None);
    assert_eq!(forced.code, 0, "{}{}", forced.stdout, forced.stderr);
    assert_eq!(room.read("a.txt"), "base\n");
}

#[test]
fn listing_and_show_describe_changes_and_hide_secrets() {
    let room = room();
    room.write(".env", "TOKEN=old-secret\n");
    room.write("keep.txt", "1\n2\n3\n");
    // The sandbox covers .env in bash, so the secret changes through the write tool.
    let write = room.call(
        "write",
        json!({"file_path": ".env", "content": "TOKEN=new-secret\n"}),
    );
    assert_eq!(write.code, 0, "{}", write.stdout);
    bash(&room, "printf '1\\nX\\n3\\n4\\n' > keep.txt");
    let list = room.run(&["checkpoints"], None);
    assert_eq!(list.code, 0, "{}", list.stderr);
    assert!(list.stdout.contains("M keep.txt +2 -1"), "{}", list.stdout);
    assert!(list.stdout.contains("M .env"), "{}", list.stdout);
    let json = room.run(&["checkpoints", "--json"], None).json();
    let entry = &json[1];
    for key in ["id", "kind", "tool", "time", "paths"] {
        assert!(entry.get(key).is_some(), "{key} missing: {entry}");
    }
    assert_eq!(entry["tool"], "write");
    assert_eq!(json[0]["tool"], "bash");
    let id = entry["id"].to_string();
    let show = room.run(&["checkpoints", "show", &id], None);
    assert_eq!(show.code, 0, "{}", show.stderr);
    assert!(
        show.stdout.contains("[content of a secret file not shown]"),
        "{}",
        show.stdout
    );
    assert!(!show.stdout.contains("secret\n"), "{}", show.stdout);
    let bash_id = json[0]["id"].to_string();
    let show = room.run(&["checkpoints", "show", &bash_id], None);
    assert!(show.stdout.contains("+X"), "{}", show.stdout);
    // The sandboxed command cannot read the copies in the checkpoint store either.
    let grep = bash(
        &room,
        "grep -r secret .tinytool/checkpoints; ls -A .tinytool/checkpoints; true",
    );
    assert!(
        !grep["output"].as_str().unwrap().contains("secret"),
        "{grep}"
    );
    assert_eq!(room.run(&["undo"], None).code, 0);
    // A dry run lists the paths and sizes, never contents; `show ID PATH` gives the diff
    // of one path, a secret's still hidden.
    let dry = room.run(&["undo", "--dry-run"], None);
    assert!(dry.stdout.contains("M .env "), "{}", dry.stdout);
    assert!(!dry.stdout.contains("old-secret"), "{}", dry.stdout);
    let show = room.run(&["checkpoints", "show", &id, ".env"], None);
    assert_eq!(show.code, 0, "{}", show.stderr);
    assert!(
        show.stdout.contains("[content of a secret file not shown]"),
        "{}",
        show.stdout
    );
    assert!(!show.stdout.contains("old-secret"), "{}", show.stdout);
    assert!(
        !show.stdout.contains("+++ b/keep.txt"),
        "only .env: {}",
        show.stdout
    );
    // Undo still restores the secret file.
    assert_eq!(room.run(&["undo"], None).code, 0);
    assert_eq!(room.read(".env"), "TOKEN=old-secret\n");
    assert_eq!(room.read("keep.txt"), "1\n2\n3\n");
}

#[test]
fn a_baseline_over_max_bytes_turns_checkpoints_off_with_a_notice() {
    let room = room();
    room.write_user("config.json", r#"{"checkpoints": {"max_bytes": 100}}"#);
    room.write("big.txt", "x".repeat(500));
    let result = bash(&room, "echo y > big.txt");
    let notice = result["metadata"]["checkpoint"]
        .as_str()
        .unwrap_or_default();
    assert!(notice.contains("checkpoints off"), "{result}");
    // Off for good: the next call says so again, and there is nothing to undo.
    let again = bash(&room, "echo z > big.txt");
    assert!(again["metadata"]["checkpoint"].is_string(), "{again}");
    let undo = room.run(&["undo"], None);
    assert_eq!(undo.code, 1);
    assert!(!room.path(".tinytool/checkpoints/blobs").exists());
}

#[test]
fn large_and_ignored_files_are_not_copied() {
    let room = room();
    room.write_user(
        "config.json",
        r#"{"checkpoints": {"max_file_bytes": 1000}}"#,
    );
    room.write(".gitignore", "build/\n");
    room.write("build/out.bin", vec![1u8; 5000]);
    room.write("target/debug/x", vec![2u8; 5000]);
    room.write("big.dat", vec![3u8; 5000]);
    let result = bash(&room, "echo more >> big.dat && echo more >> build/out.bin");
    assert_eq!(result["metadata"]["checkpoint"]["files"], 1, "{result}");
    let list = room.run(&["checkpoints"], None).stdout;
    assert!(list.contains("M big.dat"), "{list}");
    assert!(list.contains("over checkpoints.max_file_bytes"), "{list}");
    let stored: u64 = std::fs::read_dir(room.path(".tinytool/checkpoints/blobs"))
        .unwrap()
        .map(|e| e.unwrap().metadata().unwrap().len())
        .sum();
    assert!(stored < 1000, "stored {stored} bytes");
}

#[test]
fn the_store_stays_under_max_bytes_and_the_newest_still_undo() {
    let room = room();
    room.write_user("config.json", r#"{"checkpoints": {"max_bytes": 50000}}"#);
    for i in 0..30 {
        let content = format!("{i}\n").repeat(2000 / (format!("{i}").len() + 1) * 5);
        let run = room.call("write", json!({"file_path": "f.txt", "content": content}));
        assert_eq!(run.code, 0, "{}", run.stdout);
    }
    let stored: u64 = std::fs::read_dir(room.path(".tinytool/checkpoints/blobs"))
        .unwrap()
        .map(|e| e.unwrap().metadata().unwrap().len())
        .sum();
    assert!(stored <= 50000, "stored {stored} bytes");
    let before = room.read("f.txt");
    assert!(before.starts_with("29\n"));
    assert_eq!(room.run(&["undo"], None).code, 0);
    assert!(room.read("f.txt").starts_with("28\n"));
}

#[test]
fn concurrent_processes_keep_the_store_whole() {
    let room = room();
    for i in 0..4 {
        room.write(&format!("f{i}.txt"), "start\n");
    }
    let children: Vec<_> = (0..4)
        .map(|i| {
            let mut cmd = room.command(&["bash"]);
            cmd.stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::piped());
            let mut child = cmd.spawn().unwrap();
            let call = json!({"command": format!("echo changed{i} > f{i}.txt")}).to_string();
            std::io::Write::write_all(child.stdin.as_mut().unwrap(), call.as_bytes()).unwrap();
            drop(child.stdin.take());
            child
        })
        .collect();
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stdout)
        );
    }
    let list = room.run(&["checkpoints", "--json"], None).json();
    // Each checkpoint records what changed in its window, so a change made by another
    // call meanwhile may be recorded by both: every change is recorded, some twice.
    let changed: std::collections::BTreeSet<String> = list
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|c| c["paths"].as_array().unwrap().clone())
        .map(|p| p["path"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        changed,
        (0..4).map(|i| format!("f{i}.txt")).collect(),
        "every change recorded: {list}"
    );
    // However the changes were split between the overlapping checkpoints, undoing them
    // all brings every file back.
    for _ in 0..list.as_array().unwrap().len() {
        let undo = room.run(&["undo", "--force"], None);
        assert_eq!(undo.code, 0, "{}{}", undo.stdout, undo.stderr);
    }
    for i in 0..4 {
        assert_eq!(room.read(&format!("f{i}.txt")), "start\n");
    }
}

#[test]
fn state_disk_lists_each_store_against_its_cap() {
    let room = room();
    room.write_user(
        "config.json",
        r#"{"checkpoints": {"max_bytes": 123456789}}"#,
    );
    room.write("a.txt", "a\n");
    bash(&room, "echo b > a.txt");
    let disk = room.run(&["state", "disk"], None).json();
    let stores: Vec<&str> = disk
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["store"].as_str().unwrap())
        .collect();
    assert_eq!(stores, ["state", "outputs", "checkpoints", "journal"]);
    assert_eq!(disk[2]["cap"], 123456789, "{disk}");
    assert!(disk[2]["bytes"].as_u64().unwrap() >= 4, "{disk}");
    assert!(disk[0]["bytes"].as_u64().unwrap() > 0, "{disk}");
}

#[test]
fn a_call_killed_midway_leaves_a_checkpoint_undo_can_use() {
    let room = room();
    room.write("a.txt", "before\n");
    let mut cmd = room.command(&["bash"]);
    cmd.stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    let mut child = cmd.spawn().unwrap();
    let call = json!({"command": "echo during > a.txt; rm -f b.txt; sleep 30"}).to_string();
    std::io::Write::write_all(child.stdin.as_mut().unwrap(), call.as_bytes()).unwrap();
    drop(child.stdin.take());
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while room.read("a.txt") != "during\n" {
        assert!(std::time::Instant::now() < deadline, "the call never ran");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let undo = room.run(&["undo"], None);
    assert_eq!(undo.code, 0, "{}{}", undo.stdout, undo.stderr);
    assert_eq!(room.read("a.txt"), "before\n");
}

#[test]
fn undo_refuses_a_state_database_that_names_paths_outside_the_project() {
    let outside = tempfile::tempdir().unwrap();
    let victim = outside.path().join("victim.txt");
    for forged in ["../victim.txt".to_string(), victim.display().to_string()] {
        let room = room();
        room.write("keep.txt", "kept\n");
        // A call that creates a file: undoing it deletes that file.
        bash(&room, "echo new > made.txt");
        std::fs::write(&victim, "the user's\n").unwrap();
        std::fs::write(
            room.dir.parent().unwrap().join("victim.txt"),
            "the user's\n",
        )
        .unwrap();
        let db = rusqlite::Connection::open(room.path(".tinytool/state.db")).unwrap();
        let changed = db
            .execute(
                "UPDATE checkpoint_changes SET path = ?1 WHERE path = 'made.txt'",
                [&forged],
            )
            .unwrap();
        assert_eq!(changed, 1);
        drop(db);
        for args in [&["undo"][..], &["undo", "--force"], &["undo", "--dry-run"]] {
            let undo = room.run(args, None);
            assert_ne!(undo.code, 0, "{forged} {args:?}: {undo:?}");
            assert!(
                (undo.stdout.clone() + &undo.stderr)
                    .contains("not a relative path inside the project"),
                "{undo:?}"
            );
        }
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "the user's\n");
        assert_eq!(
            std::fs::read_to_string(room.dir.parent().unwrap().join("victim.txt")).unwrap(),
            "the user's\n"
        );
        assert_eq!(room.read("made.txt"), "new\n");
    }
}

#[test]
fn an_undo_into_a_nested_folder_after_a_pause_is_recorded_and_can_be_redone() {
    let room = room();
    bash(&room, "mkdir -p a/b && echo 1 > a/b/f");
    bash(&room, "rm a/b/f");
    // The pause lets the folders' listings settle (their stamps are then trusted).
    std::thread::sleep(std::time::Duration::from_millis(2_500));
    let undo = room.run(&["undo"], None);
    assert_eq!(undo.code, 0, "{}{}", undo.stdout, undo.stderr);
    assert_eq!(room.read("a/b/f"), "1\n");
    assert!(
        undo.stdout
            .contains(": restored 1 file, removed 0 (checkpoint 3;"),
        "the undo is recorded and says what it did: {}",
        undo.stdout
    );
    let again = room.run(&["undo", "2"], None);
    assert_ne!(again.code, 0, "{}{}", again.stdout, again.stderr);
    assert!(
        again.stderr.contains(
            "checkpoint 2 is already undone by checkpoint 3; `tinytool undo 3` redoes it"
        ),
        "{}{}",
        again.stdout,
        again.stderr
    );
    std::thread::sleep(std::time::Duration::from_millis(2_500));
    let redo = room.run(&["undo", "3"], None);
    assert_eq!(redo.code, 0, "{}{}", redo.stdout, redo.stderr);
    assert!(!room.path("a/b/f").exists(), "the redo removed it again");
    assert!(
        redo.stdout
            .contains("restored 0 files, removed 1 (checkpoint 4;"),
        "{}",
        redo.stdout
    );
}

#[test]
fn an_empty_list_of_checkpoints_says_so() {
    let room = room();
    let list = room.run(&["checkpoints"], None);
    assert_eq!(list.code, 0, "{}{}", list.stdout, list.stderr);
    assert_eq!(list.stdout, "No checkpoints.\n");
}

#[test]
fn a_dry_run_of_a_deleted_folder_is_a_summary() {
    let room = room();
    for i in 0..30 {
        room.write(&format!("src/pkg/m{i:02}.py"), "x = 1\n".repeat(200));
    }
    bash(&room, "rm -rf src/pkg");
    let dry = room.run(&["undo", "--dry-run"], None);
    assert_eq!(dry.code, 0, "{}{}", dry.stdout, dry.stderr);
    assert!(
        dry.stdout.contains("restore 30 files, remove 0"),
        "{}",
        dry.stdout
    );
    assert!(
        dry.stdout.contains("A src/pkg/m07.py 1.2 KB\n"),
        "{}",
        dry.stdout
    );
    assert!(dry.stdout.len() < 8 * 1024, "{} bytes", dry.stdout.len());
    assert!(!dry.stdout.contains("x = 1"), "no contents: {}", dry.stdout);
    assert!(
        room.path("src").exists() && !room.path("src/pkg").exists(),
        "nothing changed"
    );
    let show = room.run(&["checkpoints", "show", "1", "src/pkg/m07.py"], None);
    assert_eq!(show.code, 0, "{}", show.stderr);
    assert!(show.stdout.contains("-x = 1"), "{}", show.stdout);
    let missing = room.run(&["checkpoints", "show", "1", "elsewhere.txt"], None);
    assert_ne!(missing.code, 0);
    assert!(
        missing
            .stderr
            .contains("checkpoint 1 did not change elsewhere.txt (it changed src/pkg/"),
        "{}",
        missing.stderr
    );
}

#[test]
fn a_call_around_which_much_was_stored_says_so_with_the_settings() {
    let room = room();
    bash(&room, "echo first > a.txt");
    // A person adds 60 MB of data between calls: the next call's checkpoint stores it.
    let block = "0123456789abcdef".repeat(64 * 1024);
    for i in 0..6 {
        room.write(
            &format!("data/part{i}.bin"),
            format!("{i}\n{}", block.repeat(10)),
        );
    }
    let result = bash(&room, "echo second > b.txt");
    let checkpoint = &result["metadata"]["checkpoint"];
    assert_eq!(checkpoint["files"], 1, "{checkpoint}");
    assert!(
        checkpoint["stored_bytes"].as_u64().unwrap() >= 60 * 1024 * 1024,
        "{checkpoint}"
    );
    let note = checkpoint["note"].as_str().unwrap();
    assert!(
        note.starts_with("60.0 MB of file contents were stored"),
        "{note}"
    );
    assert!(
        note.contains("checkpoints.max_file_bytes (16.0 MB)"),
        "{note}"
    );
    assert!(note.contains("checkpoints.max_bytes (1.0 GB)"), "{note}");
    // A small call says nothing of it.
    let quiet = bash(&room, "echo third > c.txt");
    assert!(
        quiet["metadata"]["checkpoint"].get("note").is_none(),
        "{quiet}"
    );
}
