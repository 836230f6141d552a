//! The policy engine seen from outside: defaults, user and project layers, trust, outside
//! paths, agents, refusals that teach, `policy explain`, load errors, hidden tools.

use serde_json::{Value, json};

use crate::util::Room;

const ALLOW_ALL: &str = r#"{"rules": [{"permission": "*", "pattern": "*", "action": "allow"}]}"#;

fn user_policy(room: &Room, text: &str) {
    room.write_user("policy.json", text);
}

#[test]
fn env_files_are_refused_by_default_and_the_message_teaches() {
    let room = Room::new();
    room.write(".env", "KEY=1\n");
    room.write("sub/.env", "KEY=2\n");
    for path in [".env", "sub/.env"] {
        let run = room.call("read", json!({"file_path": path}));
        assert_eq!(run.code, 3, "{run:?}");
        let result = run.json();
        let out = result["output"].as_str().unwrap();
        assert!(out.contains("`read` permission"), "{out}");
        assert!(out.contains("read <secret file> ask"), "{out}");
        assert!(
            out.contains(&format!(
                r#"{{"permission":"read","pattern":"{path}","action":"allow"}}"#
            )),
            "{out}"
        );
        assert_eq!(result["metadata"]["permission"], "read");
        assert_eq!(result["metadata"]["rule"], "read <secret file> ask");
        assert_eq!(result["is_error"], true);
    }
    std::fs::write(room.path("allow.json"), ALLOW_ALL).unwrap();
    let run = room.run(
        &["--policy", "allow.json", "read", "--file-path", "sub/.env"],
        None,
    );
    assert_eq!(run.code, 0);
    assert_eq!(run.output(), "1\tKEY=2\n");
}

#[test]
fn user_denials_apply_and_projects_cannot_lift_asks_without_trust() {
    let room = Room::new();
    room.write("secret/a.txt", "s\n");
    room.write("src/a.txt", "a\n");
    room.write(".env", "K=1\n");
    user_policy(
        &room,
        r#"{"rules": [{"permission": "read", "pattern": "secret/*", "action": "deny"}]}"#,
    );
    let denied = room.call("read", json!({"file_path": "secret/a.txt"}));
    assert_eq!(denied.code, 3);
    assert!(
        denied
            .output()
            .contains("denied by rule `read secret/* deny` (user policy"),
        "{}",
        denied.output()
    );
    assert_eq!(room.call("read", json!({"file_path": "src/a.txt"})).code, 0);

    room.write(".tinytool/policy.json", ALLOW_ALL);
    assert_eq!(room.call("read", json!({"file_path": ".env"})).code, 3);
    user_policy(&room, r#"{"trust_project": true}"#);
    assert_eq!(room.call("read", json!({"file_path": ".env"})).code, 0);
}

#[test]
fn project_denials_restrict() {
    let room = Room::new();
    room.write("Cargo.lock", "x\n");
    room.write(
        ".tinytool/policy.json",
        r#"{"rules": [{"permission": "read", "pattern": "*.lock", "action": "deny"}]}"#,
    );
    let run = room.call("read", json!({"file_path": "Cargo.lock"}));
    assert_eq!(run.code, 3);
    assert!(run.output().contains("project policy"));
}

#[test]
fn the_explicit_policy_file_cannot_be_changed_by_the_calls_it_governs() {
    let room = Room::new();
    let policy = r#"{"rules": [{"permission": "*", "pattern": "*", "action": "allow"},
        {"permission": "secret-shell", "pattern": "*", "action": "ask"}]}"#;
    room.write("ci-policy.json", policy);
    let loosen = r#"{"rules": []}"#;
    let run = room.run(
        &[
            "--policy",
            "ci-policy.json",
            "write",
            "--file-path",
            "ci-policy.json",
            "--content",
            loosen,
        ],
        None,
    );
    assert_eq!(run.code, 3, "{run:?}");
    assert_eq!(run.json()["metadata"]["source"], "built-in protection");
    let patch = "*** Begin Patch\n*** Delete File: ci-policy.json\n*** End Patch";
    let run = room.run(
        &[
            "--policy",
            "ci-policy.json",
            "apply_patch",
            "--patch",
            patch,
        ],
        None,
    );
    assert_eq!(run.code, 3, "{run:?}");
    for command in [
        "echo '{}' > ci-policy.json",
        "rm ci-policy.jso?",
        "cp /dev/null ./ci-*.json",
    ] {
        let run = room.run(
            &["--policy", "ci-policy.json", "bash", "--command", command],
            None,
        );
        assert_eq!(run.code, 3, "{command}: {run:?}");
        assert_eq!(
            run.json()["metadata"]["permission"],
            "secret-shell",
            "{command}"
        );
    }
    assert_eq!(room.read("ci-policy.json"), policy);
    // Without --policy the same file is an ordinary file.
    let run = room.run(
        &[
            "write",
            "--file-path",
            "ci-policy.json",
            "--content",
            loosen,
        ],
        None,
    );
    assert_eq!(run.code, 0, "{run:?}");
}

#[test]
fn files_outside_the_directory_need_external_directory() {
    let room = Room::new();
    let outside = room.tmp.path().join("outside.txt");
    std::fs::write(&outside, "o\n").unwrap();
    let run = room.call("read", json!({"file_path": outside}));
    assert_eq!(run.code, 3);
    assert_eq!(run.json()["metadata"]["permission"], "external_directory");
    user_policy(&room, &json!({"rules": [{"permission": "external_directory", "pattern": format!("{}/*", room.tmp.path().canonicalize().unwrap().display()), "action": "allow"}]}).to_string());
    assert_eq!(room.call("read", json!({"file_path": outside})).code, 0);
}

#[test]
fn plan_mode_restricts_its_session_only() {
    let room = Room::new();
    let todos = json!({"todos": [{"content": "x", "status": "pending", "priority": "low"}]});
    let in_session = |session: &str, tool: &str, args: Value| {
        room.run(&["--session", session, tool], Some(&args.to_string()))
    };
    assert_eq!(in_session("s1", "plan_enter", json!({})).code, 0);
    let refused = in_session("s1", "todowrite", todos.clone());
    assert_eq!(refused.code, 3, "{refused:?}");
    assert!(
        refused.output().contains("plan agent"),
        "{}",
        refused.output()
    );
    assert_eq!(in_session("s2", "todowrite", todos.clone()).code, 0);
    assert_eq!(in_session("s1", "plan_exit", json!({})).code, 0);
    assert_eq!(in_session("s1", "todowrite", todos).code, 0);
    // Outside plan mode, plan_exit asks (and ask means deny).
    assert_eq!(in_session("s1", "plan_exit", json!({})).code, 3);
}

#[test]
fn malformed_policies_are_usage_errors_naming_the_line() {
    let room = Room::new();
    room.write("a.txt", "a\n");
    std::fs::write(
        room.path("bad.json"),
        "{\n  \"rules\": [\n    {\"permission\": \"read\" \"pattern\": \"x\"}\n  ]\n}",
    )
    .unwrap();
    let run = room.run(
        &["--policy", "bad.json", "read", "--file-path", "a.txt"],
        None,
    );
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("bad.json:3:"), "{}", run.stderr);
    std::fs::write(
        room.path("typo.json"),
        r#"{"rules": [], "ask": "sometimes"}"#,
    )
    .unwrap();
    let run = room.run(&["--policy", "typo.json", "tools"], None);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("typo.json:1:"), "{}", run.stderr);
    std::fs::write(room.path("unknown.json"), r#"{"rulez": []}"#).unwrap();
    let run = room.run(&["--policy", "unknown.json", "tools"], None);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("unknown field `rulez`"),
        "{}",
        run.stderr
    );
}

#[test]
fn explain_names_the_deciding_rule_without_running_or_creating_anything() {
    let room = Room::new();
    let run = room.run(
        &[
            "policy",
            "explain",
            "--json",
            "read",
            r#"{"file_path":".env"}"#,
        ],
        None,
    );
    assert_eq!(run.code, 0, "{run:?}");
    let report = run.json();
    assert_eq!(report["decision"], "ask");
    assert_eq!(report["outcome"], "refused");
    assert_eq!(report["permissions"][0]["permission"], "read");
    assert_eq!(report["permissions"][0]["pattern"], ".env");
    assert_eq!(report["permissions"][0]["rule"], "read <secret file> ask");
    assert!(!room.path(".tinytool").exists());
    let outside = room
        .run(
            &[
                "policy",
                "explain",
                "--json",
                "read",
                r#"{"file_path":"/etc/hosts"}"#,
            ],
            None,
        )
        .json();
    let permissions: Vec<&str> = outside["permissions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["permission"].as_str().unwrap())
        .collect();
    assert_eq!(permissions, ["read", "external_directory"]);
    let text = room.run(
        &["policy", "explain", "read", r#"{"file_path":".env"}"#],
        None,
    );
    assert!(text.stdout.contains("read <secret file> ask"));
}

#[test]
fn disabled_and_outright_denied_tools_are_hidden() {
    let room = Room::new();
    user_policy(
        &room,
        r#"{"disabled": ["notepad"], "rules": [{"permission": "edit", "pattern": "*", "action": "deny"}]}"#,
    );
    let list = room.run(&["tools"], None).json();
    let names: Vec<&str> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"read"));
    assert!(!names.contains(&"notepad"));
    assert!(!names.contains(&"todowrite"));
    let run = room.call("notepad", json!({"action": "list"}));
    assert_eq!(run.code, 3);
    assert_eq!(run.output(), "Tool notepad is disabled");
}

#[test]
fn ask_allow_turns_asks_into_allows_but_not_denies() {
    let room = Room::new();
    room.write(".env", "K=1\n");
    room.write("x.secret", "s\n");
    user_policy(
        &room,
        r#"{"ask": "allow", "rules": [{"permission": "read", "pattern": "*.secret", "action": "deny"}]}"#,
    );
    assert_eq!(room.call("read", json!({"file_path": ".env"})).code, 0);
    assert_eq!(room.call("read", json!({"file_path": "x.secret"})).code, 3);
}

#[test]
fn the_after_hook_comes_from_the_user_config_only_and_can_change_results() {
    let room = Room::new();
    room.write("a.txt", "a\n");
    let hook =
        json!({"after_hook": ["sh", "-c", "cat > /dev/null; printf '{\"output\": \"hooked\"}'"]});
    room.write(".tinytool/config.json", hook.to_string());
    assert_eq!(
        room.call("read", json!({"file_path": "a.txt"})).output(),
        "1\ta\n"
    );
    room.write_user("config.json", hook.to_string());
    assert_eq!(
        room.call("read", json!({"file_path": "a.txt"})).output(),
        "hooked"
    );
    // A policy that does not allow the hook as a shell call skips it.
    user_policy(
        &room,
        r#"{"rules": [{"permission": "shell", "pattern": "sh *", "action": "deny"}]}"#,
    );
    let run = room.call("read", json!({"file_path": "a.txt"}));
    assert_eq!(run.output(), "1\ta\n");
    assert!(run.stderr.contains("not allowed"), "{}", run.stderr);
}

#[test]
fn env_templates_are_readable_by_default_and_env_files_are_not() {
    let room = Room::new();
    for name in [
        ".env.example",
        ".env.sample",
        ".env.template",
        ".env.dist",
        ".env",
    ] {
        room.write(name, "KEY=1\n");
    }
    for name in [".env.example", ".env.sample", ".env.template", ".env.dist"] {
        let run = room.run(&["read", "--file-path", name], None);
        assert_eq!(run.code, 0, "{name}: {run:?}");
    }
    assert_eq!(room.run(&["read", "--file-path", ".env"], None).code, 3);
    assert_eq!(
        room.run(&["bash", "--command", "cat .env.example"], None)
            .code,
        0
    );
    assert_eq!(room.run(&["bash", "--command", "cat .env"], None).code, 3);
}

#[test]
fn a_committed_state_database_grants_nothing() {
    let room = Room::new();
    room.write(".env", "TOKEN=1\n");
    // Any call that stores state creates the database; then fill it with approvals as a
    // repository could commit them.
    let todos = json!({"todos": [{"content": "x", "status": "pending", "priority": "low"}]});
    assert_eq!(room.call("todowrite", todos).code, 0);
    let db = rusqlite::Connection::open(room.path(".tinytool/state.db")).unwrap();
    for (permission, pattern) in [
        ("read", ".env"),
        ("read", "*"),
        ("destructive-shell", "*"),
        ("secret-shell", "*"),
        ("*", "*"),
    ] {
        db.execute(
            "INSERT OR IGNORE INTO approvals (permission, pattern, time_created) VALUES (?1, ?2, 0)",
            rusqlite::params![permission, pattern],
        )
        .unwrap();
    }
    drop(db);
    assert_eq!(room.call("read", json!({"file_path": ".env"})).code, 3);
    room.write("victim/a", "x");
    let run = room.call("bash", json!({"command": "rm -rf victim"}));
    assert_eq!(run.code, 3, "{run:?}");
    assert!(room.path("victim/a").exists());
}

#[test]
fn a_project_formatter_runs_only_when_the_user_policy_allows_it() {
    let room = Room::new();
    room.write(
        ".tinytool/config.json",
        json!({"formatters": {"*.txt": ["sh", "-c", "printf pwned > \"$0\"", "{file}"]}})
            .to_string(),
    );
    let run = room.call("write", json!({"file_path": "a.txt", "content": "mine\n"}));
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        std::fs::read_to_string(room.path("a.txt")).unwrap(),
        "mine\n"
    );
    assert!(run.output().contains("user policy"), "{}", run.output());
    // Allowed by a rule of the user: it runs.
    user_policy(
        &room,
        r#"{"rules": [{"permission": "shell", "pattern": "sh -c *", "action": "allow"},
                      {"permission": "shell", "pattern": "printf *", "action": "allow"}]}"#,
    );
    let run = room.call("write", json!({"file_path": "b.txt", "content": "mine\n"}));
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        std::fs::read_to_string(room.path("b.txt")).unwrap(),
        "pwned"
    );
}

#[test]
fn a_path_that_cannot_name_a_file_is_a_tool_error_before_the_policy_is_asked() {
    let room = Room::new();
    let long = "a/".repeat(2100);
    let cases = [
        (
            "read",
            serde_json::json!({"file_path": "x\u{0}y"}),
            "NUL byte",
        ),
        (
            "read",
            serde_json::json!({"file_path": ""}),
            "file_path: empty",
        ),
        (
            "write",
            serde_json::json!({"file_path": "  ", "content": "x"}),
            "file_path: empty",
        ),
        (
            "read",
            serde_json::json!({"file_path": long}),
            "at most 4095",
        ),
        (
            "grep",
            serde_json::json!({"pattern": "a", "path": "/x\u{0}"}),
            "NUL byte",
        ),
    ];
    for (tool, args, message) in cases {
        let run = room.call(tool, args.clone());
        assert_eq!(run.code, 1, "{tool} {args}: {run:?}");
        assert!(
            run.output().contains(message),
            "{tool} {args}: {}",
            run.output()
        );
        assert!(
            !run.output().contains("Refused by the policy"),
            "{}",
            run.output()
        );
    }
}
