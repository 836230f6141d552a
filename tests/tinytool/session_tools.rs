//! The tools that live on session state: todowrite, question, plan, notepad,
//! report_findings, skill, and `tinytool state`.

use serde_json::{Value, json};

use crate::util::{Room, read_events, run_command};

fn todo(content: &str) -> Value {
    json!({"content": content, "status": "pending", "priority": "normal"})
}

#[test]
fn todos_persist_across_processes_and_sessions() {
    let room = Room::new();
    let run = room.call("todowrite", json!({"todos": [todo("a"), todo("b")]}));
    assert_eq!(
        run.output(),
        "Successfully updated 2 todos for session default"
    );
    let listed = room.run(&["state", "todos"], None).json();
    assert_eq!(listed, json!([todo("a"), todo("b")]));
    assert_eq!(
        room.run(&["--session", "other", "state", "todos"], None)
            .json(),
        json!([])
    );
    // Stringified todos are repaired and the repair is listed.
    let run = room.call(
        "todowrite",
        json!({"todos": json!([todo("c")]).to_string()}),
    );
    assert_eq!(run.code, 0);
    assert!(
        run.json()["metadata"]["repairs"][0]
            .as_str()
            .unwrap()
            .contains("`todos`")
    );
    assert_eq!(
        room.run(&["state", "todos"], None).json(),
        json!([todo("c")])
    );
    assert_eq!(
        std::fs::read_to_string(room.path(".tinytool/.gitignore")).unwrap(),
        "*\n"
    );
}

#[test]
fn todo_validation_uses_the_reference_messages() {
    let room = Room::new();
    let run = room.call(
        "todowrite",
        json!({"todos": [{"content": "", "status": "bad", "priority": "bad"}]}),
    );
    assert_eq!(run.code, 1);
    let out = run.output();
    assert!(out.starts_with("Validation errors:\n"));
    assert_eq!(out.matches("todo[0]").count(), 3);
    assert!(out.contains("invalid status \"bad\""));
    assert_eq!(
        room.call("todowrite", json!({"todos": []})).output(),
        "Successfully updated 0 todos for session default"
    );
}

#[test]
fn eight_processes_writing_todos_at_once_never_fail() {
    let room = Room::new();
    let children: Vec<_> = (0..8)
        .map(|p| {
            let lines: String = (0..50)
                .map(|i| {
                    json!({"name": "todowrite", "arguments": {"todos": [todo(&format!("p{p} i{i}"))]}}).to_string() + "\n"
                })
                .collect();
            let cmd = room.command(&["exec", "--jsonl"]);
            std::thread::spawn(move || run_command(cmd, Some(lines.as_bytes())))
        })
        .collect();
    for child in children {
        let run = child.join().unwrap();
        let lines = run.lines();
        assert_eq!(lines.len(), 50);
        for line in lines {
            assert_eq!(line["is_error"], false, "{line}");
        }
    }
    assert_eq!(
        room.run(&["state", "todos"], None)
            .json()
            .as_array()
            .unwrap()
            .len(),
        1
    );
}

#[test]
fn reading_never_creates_state() {
    let room = Room::new();
    room.write("a.txt", "a\n");
    room.call("read", json!({"file_path": "a.txt"}));
    room.run(&["state", "todos"], None);
    room.run(&["tools"], None);
    room.call("notepad", json!({"action": "list"}));
    assert!(!room.path(".tinytool").exists());
}

#[test]
fn plan_switches_publish_events_when_the_call_ends() {
    let room = Room::new();
    let events = room.path("ev.jsonl");
    let run = room.run(&["--events", events.to_str().unwrap(), "plan_enter"], None);
    assert_eq!(
        run.output(),
        "Switched to plan mode. Edits are now restricted to plans/* and drafts/*; \
         shell lines that only read run, others need approval."
    );
    let types: Vec<String> = read_events(&events)
        .iter()
        .map(|e| e["type"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        types,
        [
            "tool.execute.before",
            "session.agent.switched",
            "tool.execute.after"
        ]
    );
}

#[test]
fn questions_take_answers_in_order_per_session() {
    let mut room = Room::new();
    std::fs::write(room.path("answers.json"), r#"["blue", "42"]"#).unwrap();
    room.set_env(
        "TINYTOOL_ANSWERS",
        room.path("answers.json").to_string_lossy(),
    );
    let ask = |room: &Room, session: &str| {
        let mut cmd = room.command(&["--session", session, "question"]);
        // No controlling terminal, so only the answers file can answer.
        cmd.arg("--question").arg("Colour?");
        let mut setsid = std::process::Command::new("setsid");
        setsid.arg(cmd.get_program());
        setsid.args(cmd.get_args());
        setsid
            .env_clear()
            .envs(cmd.get_envs().filter_map(|(k, v)| v.map(|v| (k, v))))
            .current_dir(&room.dir);
        run_command(setsid, None)
    };
    assert_eq!(ask(&room, "s").output(), "blue");
    assert_eq!(ask(&room, "s").output(), "42");
    let exhausted = ask(&room, "s");
    assert_eq!(exhausted.code, 1);
    // The model is told no user is reachable; the flag hint is for the person (stderr).
    assert!(
        exhausted.output().contains("No user is reachable")
            && !exhausted.output().contains("--answers"),
        "{}",
        exhausted.output()
    );
    assert!(
        exhausted.stderr.contains("--answers"),
        "{}",
        exhausted.stderr
    );
    assert_eq!(ask(&room, "t").output(), "blue");
}

#[test]
fn notepad_follows_the_reference_messages() {
    let room = Room::new();
    let pad = |args: Value| room.call("notepad", args).output();
    assert_eq!(pad(json!({"action": "list"})), "No notes stored.");
    assert_eq!(
        pad(json!({"action": "write", "key": "plan", "content": "step one\nstep two"})),
        "Saved note \"plan\" (17 bytes)"
    );
    assert_eq!(
        pad(json!({"action": "read", "key": "plan"})),
        "step one\nstep two"
    );
    // A missing key is an error (exit 1), for read and delete alike.
    for action in ["read", "delete"] {
        let missing = room.call("notepad", json!({"action": action, "key": "nope"}));
        assert_eq!(missing.code, 1, "{action}");
        assert!(
            missing.json()["is_error"].as_bool().unwrap_or(false),
            "{action}"
        );
        assert!(
            missing.output().starts_with("key \"nope\" not found"),
            "{}",
            missing.output()
        );
    }
    let long = "x".repeat(100);
    pad(json!({"action": "write", "key": "a-long", "content": long}));
    assert_eq!(
        pad(json!({"action": "list"})),
        format!(
            "2 notes:\n  a-long: {}...\n  plan: step one",
            "x".repeat(77)
        )
    );
    assert_eq!(
        pad(json!({"action": "delete", "key": "plan"})),
        "Deleted note \"plan\""
    );
    let too_big = room.call(
        "notepad",
        json!({"action": "write", "key": "big", "content": "y".repeat(10 * 1024 + 1)}),
    );
    assert_eq!(too_big.code, 1);
    let bad = room.call("notepad", json!({"action": "erase"}));
    assert!(
        bad.output()
            .contains("`action` must be one of read, write, list, delete")
    );
    let notes = room.run(&["state", "notes"], None).json();
    assert_eq!(notes[0]["key"], "a-long");
}

#[test]
fn findings_are_validated_counted_and_stored() {
    let room = Room::new();
    let run = room.call(
        "report_findings",
        json!({"level": "deep", "findings": [
            {"file": "a.rs", "line": 3, "severity": "critical", "summary": "overflow"},
            {"file": "b.rs", "severity": "low", "summary": "naming"}
        ]}),
    );
    assert_eq!(
        run.output(),
        "Reported 2 findings (1 critical, 1 low) at deep effort level"
    );
    let bad = room.call(
        "report_findings",
        json!({"findings": [{"file": "", "summary": "x", "severity": "huge"}]}),
    );
    assert_eq!(bad.code, 1);
    assert!(bad.output().contains("finding[0]: file is required"));
    assert!(bad.output().contains("invalid severity \"huge\""));
    let many: Vec<Value> = (0..51)
        .map(|i| json!({"file": "f", "summary": i.to_string()}))
        .collect();
    assert_eq!(
        room.call("report_findings", json!({"findings": many}))
            .output(),
        "Too many findings: 51 exceeds maximum of 50 per call"
    );
    let stored = room.run(&["state", "findings"], None).json();
    assert_eq!(stored.as_array().unwrap().len(), 2);
    assert_eq!(stored[0]["level"], "deep");
}

#[test]
fn skills_are_discovered_substituted_and_listed() {
    let room = Room::new();
    room.write(
        ".tinytool/skills/greet/SKILL.md",
        "---\nname: greet\ndescription: Say hello\n---\nHello $1! $ARGUMENTS",
    );
    room.write(
        ".tinytool/skills/dir-name/SKILL.md",
        "---\nname: custom-name\n---\nLoaded OK $1",
    );
    room.write_user(
        "skills/greet/SKILL.md",
        "---\nname: greet\n---\nUser wins $1",
    );
    assert_eq!(
        room.call("skill", json!({"name": "greet", "arguments": "World"}))
            .output(),
        "User wins World"
    );
    assert_eq!(
        room.call("skill", json!({"name": "custom-name", "arguments": "x"}))
            .output(),
        "Loaded OK x"
    );
    let missing = room.call("skill", json!({"name": "nope"}));
    assert_eq!(missing.code, 1);
    assert_eq!(
        missing.output(),
        "Skill \"nope\" not found.\nAvailable skills:\n- greet\n- custom-name"
    );
}
