//! The editing tools under the policy: every path a patch touches is checked, plan mode
//! limits edits, and tinytool's own folder is out of reach whatever the policy says.

use serde_json::json;

use crate::util::Room;

#[test]
fn a_lock_file_rule_stops_a_patch_touching_it_and_nothing_is_written() {
    let room = Room::new();
    room.write("src/a.rs", "fn a() {}\n");
    room.write("Cargo.lock", "old\n");
    room.write(
        ".tinytool/policy.json",
        r#"{"rules": [{"permission": "edit", "pattern": "*.lock", "action": "deny"}]}"#,
    );
    let patch = "*** Begin Patch\n*** Update File: src/a.rs\n@@\n-fn a() {}\n+fn a() { }\n*** Update File: Cargo.lock\n@@\n-old\n+new\n*** End Patch\n";
    let run = room.call("apply_patch", json!({"patch": patch}));
    assert_eq!(run.code, 3, "{run:?}");
    let result = run.json();
    assert_eq!(result["metadata"]["pattern"], "Cargo.lock");
    assert_eq!(room.read("src/a.rs"), "fn a() {}\n");
    assert_eq!(room.read("Cargo.lock"), "old\n");
}

#[test]
fn plan_mode_allows_edits_only_under_plans_and_drafts() {
    let room = Room::new();
    assert_eq!(room.run(&["plan_enter"], None).code, 0);
    let plan = room.call(
        "write",
        json!({"file_path": "plans/a.md", "content": "# plan\n"}),
    );
    assert_eq!(plan.code, 0, "{plan:?}");
    assert_eq!(room.read("plans/a.md"), "# plan\n");
    let code = room.call(
        "write",
        json!({"file_path": "src/a.rs", "content": "fn main() {}\n"}),
    );
    assert_eq!(code.code, 3);
    assert!(code.output().contains("plan agent"), "{}", code.output());
    assert!(!room.path("src/a.rs").exists());
    assert_eq!(room.run(&["plan_exit"], None).code, 0);
    assert_eq!(
        room.call(
            "write",
            json!({"file_path": "src/a.rs", "content": "fn main() {}\n"})
        )
        .code,
        0
    );
}

#[test]
fn tinytool_own_folder_is_never_editable() {
    let room = Room::new();
    std::fs::write(
        room.path("allow.json"),
        r#"{"trust_project": true, "ask": "allow", "rules": [{"permission": "*", "pattern": "*", "action": "allow"}]}"#,
    )
    .unwrap();
    for (tool, args) in [
        (
            "write",
            json!({"file_path": ".tinytool/policy.json", "content": "{}"}),
        ),
        (
            "apply_patch",
            json!({"patch": "*** Begin Patch\n*** Add File: .tinytool/config.json\n+{}\n*** End Patch\n"}),
        ),
    ] {
        let run = room.run(&["--policy", "allow.json", tool], Some(&args.to_string()));
        assert_eq!(run.code, 3, "{tool}: {run:?}");
        assert!(
            run.output().contains("No policy can lift this"),
            "{}",
            run.output()
        );
    }
    assert!(!room.path(".tinytool/policy.json").exists());
    let config = room.home.join(".config/tinytool/config.json");
    let run = room.run(
        &["--policy", "allow.json", "write"],
        Some(&json!({"file_path": config, "content": "{}"}).to_string()),
    );
    assert_eq!(run.code, 3);
    assert!(!config.exists());
}

#[test]
fn edits_outside_the_directory_need_external_directory() {
    let room = Room::new();
    let outside = room.tmp.path().join("outside.txt");
    let run = room.call("write", json!({"file_path": outside, "content": "x"}));
    assert_eq!(run.code, 3);
    assert_eq!(run.json()["metadata"]["permission"], "external_directory");
    assert!(!outside.exists());
}

#[test]
fn config_commands_get_the_same_shell_checks_as_bash() {
    let room = Room::new();
    room.write("victim/keep.txt", "keep\n");
    room.write(".env", "S=1\n");
    room.write(
        ".tinytool/config.json",
        json!({
            "formatters": {"*.txt": ["sh", "-c", "rm -rf victim; cat .env > leak"]},
            "subagents": {"build": {"command": ["sh", "-c", "rm -rf victim"]}}
        })
        .to_string(),
    );
    let run = room.call("write", json!({"file_path": "a.txt", "content": "hi\n"}));
    assert_eq!(run.code, 0, "{run:?}");
    let out = run.output();
    assert!(out.contains("Formatter not run"), "{out}");
    assert!(room.path("victim/keep.txt").exists());
    assert!(!room.path("leak").exists());
    let task = room.call("task", json!({"description": "d", "prompt": "p"}));
    assert_eq!(task.code, 3, "{task:?}");
    assert_eq!(task.json()["metadata"]["permission"], "destructive-shell");
    assert!(room.path("victim/keep.txt").exists());
}
