//! Spill files are the model's to read: `read` and `grep` open them under
//! the default policy, a shell line that only reads them needs no `secret-shell`, the rest
//! of `.tinytool/` stays protected, and the folder keeps to its cap.

use serde_json::{Value, json};

use crate::util::Room;

/// Makes one spill file, the whole output of `seq 1 N`; returns its path.
fn spilled_seq(room: &Room, n: u32) -> String {
    let run = room.call("bash", json!({"command": format!("seq 1 {n}")}));
    assert_eq!(run.code, 0, "{run:?}");
    let path = run.json()["metadata"]["full_output"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(path.starts_with(".tinytool/outputs/"), "{path}");
    path
}

/// Makes one spill file: the whole output of `seq 1 200000` (1.29 MB).
fn spilled(room: &Room) -> String {
    spilled_seq(room, 200_000)
}

#[test]
fn read_and_grep_open_spill_files_under_the_default_policy() {
    let room = Room::new();
    let path = spilled(&room);
    let read = room.call(
        "read",
        json!({"file_path": path, "offset": 100000, "limit": 1}),
    );
    assert_eq!(read.code, 0, "{read:?}");
    assert!(read.output().starts_with("100001\t100001\n"), "{read:?}");
    // Under 1 MB: grep's size skip is not what is tested here.
    let small = spilled_seq(&room, 20_000);
    let grep = room.call("grep", json!({"pattern": "^12345$", "path": small}));
    assert_eq!(grep.code, 0, "{grep:?}");
    assert_eq!(
        grep.output().lines().next(),
        Some(format!("{small}:12345:12345").as_str())
    );
    let grep = room.call(
        "grep",
        json!({"pattern": "^12345$", "path": ".tinytool/outputs"}),
    );
    assert_eq!(grep.code, 0, "{grep:?}");
    assert!(
        grep.output().contains(&format!("{small}:12345:12345\n")),
        "{grep:?}"
    );
}

#[test]
fn a_shell_line_that_only_reads_spill_files_runs_without_secret_shell() {
    let room = Room::new();
    let path = spilled(&room);
    for (command, want) in [
        (format!("sed -n 100001p {path}"), "100001\n"),
        (format!("tail -n 1 {path}"), "200000\n"),
        (format!("head -n 2 {path} | wc -l"), "2\n"),
        (format!("grep -c '^1999' {path}"), "111\n"),
        ("cat .tinytool/outputs/* | wc -l".to_string(), "200000\n"),
    ] {
        let run = room.call("bash", json!({"command": command}));
        assert_eq!(run.code, 0, "{command}: {run:?}");
        assert_eq!(run.output(), want, "{command}");
    }
}

#[test]
fn the_rest_of_tinytool_still_needs_secret_shell() {
    let room = Room::new();
    let path = spilled(&room);
    room.write(".tinytool/policy.json", "{\"rules\": []}\n");
    for command in [
        "cat .tinytool/policy.json".to_string(),
        "cat .tinytool/outputs/../policy.json".to_string(),
        format!("cat {path} .tinytool/policy.json"),
        format!("cp {path} .tinytool/policy.json"),
        format!("rm {path}"),
        format!("cat {path} > copy.txt"),
        format!("sed -n 1w.tinytool/x {path}"),
    ] {
        let run = room.call("bash", json!({"command": command}));
        assert_eq!(run.code, 3, "{command}: {run:?}");
        assert_eq!(
            run.json()["metadata"]["permission"],
            "secret-shell",
            "{command}"
        );
    }
    assert!(room.path(&path).exists());
    assert!(!room.path("copy.txt").exists());
}

#[test]
fn a_hundred_big_outputs_keep_the_folder_under_its_cap() {
    let room = Room::new();
    let cap: u64 = 12 * 1024 * 1024;
    room.write(
        ".tinytool/config.json",
        json!({"output": {"keep_bytes": cap}}).to_string(),
    );
    let mut input = String::new();
    for i in 0..100 {
        let call = json!({"id": format!("c{i}"), "name": "bash",
            "arguments": {"command": "yes 0123456789abcdefghijklmnopqrstuvwxyz | head -c 5000000"}});
        input.push_str(&call.to_string());
        input.push('\n');
    }
    let run = room.run(&["exec", "--jsonl"], Some(&input));
    assert_eq!(run.code, 0, "{}", run.stderr);
    let lines = run.lines();
    assert_eq!(lines.len(), 100);
    let last: &Value = &lines[99];
    let path = last["metadata"]["full_output"].as_str().unwrap();
    assert_eq!(
        std::fs::metadata(room.path(path)).unwrap().len(),
        5_000_000,
        "the newest spill file is whole"
    );
    let mut total = 0;
    let mut files = 0;
    for entry in std::fs::read_dir(room.path(".tinytool/outputs")).unwrap() {
        total += entry.unwrap().metadata().unwrap().len();
        files += 1;
    }
    assert!(total <= cap, "{total} bytes in {files} files");
    assert!(files >= 2, "{files}");
}

/// A result with its spill file's name (`out-MILLIS-PID-N.txt`) replaced by
/// `out-[id].txt`, in the output and in `metadata.full_output`.
fn normalised(mut result: Value) -> Value {
    let name = result["metadata"]["full_output"]
        .as_str()
        .and_then(|p| p.strip_prefix(".tinytool/outputs/"))
        .map(str::to_string);
    if let Some(name) = name {
        let output = result["output"]
            .as_str()
            .unwrap()
            .replace(&name, "out-[id].txt");
        result["output"] = json!(output);
        result["metadata"]["full_output"] = json!(".tinytool/outputs/out-[id].txt");
    }
    crate::util::stable(result)
}

#[test]
fn previewed_outputs_have_the_documented_shape() {
    let room = Room::new();
    // A project config may lower the limits: 10 lines keep the golden files short.
    room.write(
        ".tinytool/config.json",
        json!({"output": {"max_lines": 10}}).to_string(),
    );
    let run = room.call("bash", json!({"command": "seq 1 30"}));
    assert_eq!(run.code, 0, "{run:?}");
    crate::snapshot!("bash_previewed", normalised(run.json()));
    let run = room.call(
        "bash",
        json!({"command": "seq 1 25; echo 'panicked: boom' >&2; exit 101"}),
    );
    assert_eq!(run.code, 1, "{run:?}");
    let result = run.json();
    let path = result["metadata"]["full_output"]
        .as_str()
        .unwrap()
        .to_string();
    crate::snapshot!("bash_previewed_error", normalised(result));
    let whole = std::fs::read_to_string(room.path(&path)).unwrap();
    assert!(
        whole.contains("\n13\n") && whole.contains("panicked: boom"),
        "{whole}"
    );
}

#[test]
fn commands_see_only_the_spill_files_of_tinytool_and_none_of_a_call_that_saw_secrets() {
    let room = Room::new();
    room.write_user(
        "policy.json",
        r#"{"ask": "deny", "rules": [
            {"permission": "secret-shell", "pattern": "*", "action": "allow"}]}"#,
    );
    if let Err(why) = crate::util::mount_layer(&room) {
        crate::util::skip(&why);
        return;
    }
    room.write(".env", "API_KEY=hunter2\n");
    // Allowed to read the secret: its whole output is sealed, and the model reads it.
    let run = room.call(
        "bash",
        json!({"command": "yes \"$(cat .env)\" | head -n 10000"}),
    );
    assert_eq!(run.code, 0, "{run:?}");
    let sealed = run.json()["metadata"]["full_output"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(sealed.starts_with(".tinytool/sealed/"), "{run:?}");
    let read = room.call("read", json!({"file_path": sealed, "limit": 1}));
    assert!(read.output().contains("API_KEY=hunter2"), "{read:?}");
    // Commands no longer allowed to: an ordinary spill file stays readable for them.
    room.write_user("policy.json", r#"{"ask": "deny"}"#);
    let plain = spilled_seq(&room, 20_000);
    // A later command (its paths hidden from the shell's detectors, as a script's are):
    // `.tinytool` holds the spill files and nothing else.
    room.write("own", ".tinytool\n");
    let run = room.call(
        "bash",
        json!({"command": "ls -A $(cat own); cat $(cat own)/sealed/* $(cat own)/state.db 2>/dev/null | grep -c hunter2; wc -l < $(cat own)/outputs/$(ls $(cat own)/outputs | head -1)"}),
    );
    assert_eq!(
        run.output(),
        ".gitignore\noutputs\n0\n20000\n",
        "{run:?} {plain}"
    );
}
