//! tinytool's own files are out of a command's reach: its executable in
//! a writable folder cannot be replaced, a `--state` database and an `--answers` file put
//! under /tmp cannot be rewritten or removed, and the user's journal key reads as empty.

use std::process::Command;

use crate::util::run_command;

const ALLOW_ALL: &str = r#"{"rules": [{"permission": "*", "pattern": "*", "action": "allow"}]}"#;

#[test]
fn the_executable_state_answers_and_key_cannot_be_touched_from_inside() {
    let Some(room) = crate::util::sandboxed_room(ALLOW_ALL) else {
        return;
    };
    // A copy of the binary in a writable folder beside the project, a state database and
    // an answers file there too.
    let place = tempfile::tempdir().unwrap();
    let bin = place.path().join("bin/tinytool");
    std::fs::create_dir_all(bin.parent().unwrap()).unwrap();
    std::fs::copy(crate::util::bin(), &bin).unwrap();
    let state = place.path().join("state.db");
    let answers = place.path().join("answers.json");
    std::fs::write(&answers, "{}\n").unwrap();
    // A first call creates the state database.
    let mut first = Command::new(&bin);
    first
        .arg("--state")
        .arg(&state)
        .args(["write", "--file-path", "a.txt", "--content", "x\n"]);
    room.enter(&mut first);
    assert_eq!(run_command(first, None).code, 0);
    // The key the journal seals its records with (made by the first multi-file change).
    let key = room.home.join(".local/state/tinytool/journal.key");
    std::fs::create_dir_all(key.parent().unwrap()).unwrap();
    std::fs::write(&key, [7u8; 16]).unwrap();
    let original = std::fs::read(&bin).unwrap();
    let before_state = std::fs::read(&state).unwrap();
    let script = format!(
        "echo evil > {bin}; cp /bin/true {bin}; mv {dir} {dir}.gone; rm -f {bin}; \
         echo x >> {state}; rm -f {state}; echo '{{\"forged\": 1}}' > {answers}; \
         cat {state} 2>/dev/null | wc -c; cat {key} 2>/dev/null | wc -c; echo end",
        bin = bin.display(),
        dir = bin.parent().unwrap().display(),
        state = state.display(),
        answers = answers.display(),
        key = key.display(),
    );
    let mut cmd = Command::new(&bin);
    cmd.arg("--state")
        .arg(&state)
        .arg("--answers")
        .arg(&answers)
        .args(["bash", "--command", &script]);
    room.enter(&mut cmd);
    let run = run_command(cmd, None);
    // The refusals go to stderr, whose lines may be read before or after the last stdout
    // lines: only stdout's are compared.
    let output: String = run.json()["output"]
        .as_str()
        .unwrap_or_default()
        .lines()
        .filter(|line| !line.starts_with("STDERR: "))
        .map(|line| format!("{line}\n"))
        .collect();
    assert!(
        output.contains("0\n0\nend\n"),
        "the state database and the key read empty or not at all: {run:?}"
    );
    assert_eq!(std::fs::read(&bin).unwrap(), original, "{run:?}");
    assert!(bin.parent().unwrap().is_dir(), "{run:?}");
    assert_eq!(
        std::fs::read_to_string(&answers).unwrap(),
        "{}\n",
        "{run:?}"
    );
    assert!(state.exists(), "{run:?}");
    assert!(
        !std::fs::read(&state).unwrap().ends_with(b"x\n") || before_state.ends_with(b"x\n"),
        "{run:?}"
    );
    assert!(key.is_file() && std::fs::metadata(&key).unwrap().len() > 0);
    // The same binary still runs and reads its state.
    let mut after = Command::new(&bin);
    after
        .arg("--state")
        .arg(&state)
        .args(["read", "--file-path", "a.txt"]);
    room.enter(&mut after);
    let read = run_command(after, None);
    assert_eq!(read.code, 0, "{read:?}");
}

#[test]
fn a_monitor_started_before_the_journal_key_existed_cannot_read_it() {
    let Some(room) = crate::util::sandboxed_room(ALLOW_ALL) else {
        return;
    };
    let key = room.home.join(".local/state/tinytool/journal.key");
    std::fs::remove_file(&key).ok();
    let id = crate::util::start_monitor(
        &room,
        &format!(
            "for i in $(seq 1 40); do od -An -tx1 {} 2>/dev/null; sleep 0.05; done",
            key.display()
        ),
    );
    // A patch of two files seals a journal record with the key (made now, if not before).
    let patch = room.call(
        "apply_patch",
        serde_json::json!({"patch": "*** Begin Patch\n*** Add File: a.txt\n+a\n*** Add File: b.txt\n+b\n*** End Patch\n"}),
    );
    assert_eq!(patch.code, 0, "{patch:?}");
    let bytes = std::fs::read(&key).unwrap();
    assert_eq!(bytes.len(), 16);
    let (output, _) = crate::util::until_it_ends(&room, &id);
    let first = bytes[..4]
        .iter()
        .map(|b| format!(" {b:02x}"))
        .collect::<String>();
    assert!(!output.contains(&first), "the key leaked: {output}");
}

#[test]
fn the_lock_folder_is_out_of_a_commands_sight() {
    let Some(room) = crate::util::sandboxed_room(ALLOW_ALL) else {
        return;
    };
    // A write makes the user's lock folder; a lock file a killed holder left stays there.
    let write = room.call(
        "write",
        serde_json::json!({"file_path": "a.txt", "content": "a"}),
    );
    assert_eq!(write.code, 0, "{write:?}");
    let locks = room.home.join(".local/state/tinytool/locks");
    std::fs::write(locks.join("left.lock"), "").unwrap();
    // Holding it (a read-only open is enough for flock) would stall the next write.
    let run = room.call(
        "bash",
        serde_json::json!({"command": format!("ls -A {} | wc -l; flock -n {}/left.lock true 2>/dev/null; echo $?", locks.display(), locks.display())}),
    );
    // (ls's complaint, if any, comes on stderr, marked.)
    let lines: Vec<String> = run
        .output()
        .lines()
        .filter(|line| !line.starts_with("STDERR: "))
        .map(str::to_string)
        .collect();
    assert_eq!(lines[0], "0", "nothing of the folder shows: {run:?}");
    assert_ne!(lines[1], "0", "no lock file there can be held: {run:?}");
}
