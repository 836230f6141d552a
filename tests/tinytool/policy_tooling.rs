//! Policy tooling: `policy check`, near-miss explanations, terminal approvals, and the
//! ready-made policies of the README.

use std::process::Command;

use crate::util::{Room, bin, read_events, run_command};

fn write_policy(room: &Room, name: &str, text: &str) -> String {
    std::fs::write(room.path(name), text).unwrap();
    name.to_string()
}

#[test]
fn check_reports_shadowed_rules_and_exits_1() {
    let room = Room::new();
    let file = write_policy(
        &room,
        "p.json",
        r#"{"rules": [
        {"permission": "shell", "pattern": "git *", "action": "allow"},
        {"permission": "shell", "pattern": "*", "action": "deny"}]}"#,
    );
    let run = room.run(&["policy", "check", &file], None);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.stdout.contains("shadowed"));
    assert!(run.stdout.contains("`shell git * allow`") && run.stdout.contains("`shell * deny`"));
    let json = room.run(&["policy", "check", "--json", &file], None);
    assert_eq!(json.code, 1);
    assert_eq!(json.json().as_array().unwrap().len(), 1);
}

#[test]
fn check_runs_rule_examples() {
    let room = Room::new();
    let failing = write_policy(
        &room,
        "f.json",
        r#"{"rules": [
        {"permission": "shell", "pattern": "git status*", "action": "allow",
         "examples": {"match": ["git push"]}}]}"#,
    );
    let run = room.run(&["policy", "check", &failing], None);
    assert_eq!(run.code, 1);
    assert!(
        run.stdout.contains("example \"git push\" should match"),
        "{}",
        run.stdout
    );
    let clean = write_policy(
        &room,
        "c.json",
        r#"{"rules": [
        {"permission": "shell", "pattern": "*", "action": "ask"},
        {"permission": "shell", "pattern": "git *", "action": "allow",
         "examples": {"match": ["git status", "git"], "not_match": ["gitk"]}}]}"#,
    );
    let run = room.run(&["policy", "check", &clean], None);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stdout.starts_with("ok: "));
}

#[test]
fn check_of_policies_in_effect_covers_the_project_and_trust() {
    let room = Room::new();
    assert_eq!(room.run(&["policy", "check"], None).code, 0);
    room.write(
        ".tinytool/policy.json",
        r#"{"rules": [{"permission": "read", "pattern": "*", "action": "allow"}]}"#,
    );
    let run = room.run(&["policy", "check"], None);
    assert_eq!(run.code, 1);
    assert!(run.stdout.contains("trust_project"), "{}", run.stdout);
    room.write(".tinytool/policy.json", "{not json");
    assert_eq!(room.run(&["policy", "check"], None).code, 2);
}

#[test]
fn check_of_one_file_reports_only_that_file() {
    let room = Room::new();
    room.write_user(
        "policy.json",
        r#"{"rules": [
        {"permission": "shell", "pattern": "git *", "action": "allow"},
        {"permission": "shell", "pattern": "*", "action": "deny"}]}"#,
    );
    room.write(
        ".tinytool/policy.json",
        r#"{"rules": [{"permission": "read", "pattern": "*", "action": "deny"}]}"#,
    );
    let run = room.run(&["policy", "check", ".tinytool/policy.json"], None);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stdout.starts_with("ok: "), "{}", run.stdout);
    assert!(!run.stdout.contains("shadowed"), "{}", run.stdout);
    // Both files in effect: the user policy's finding counts.
    assert_eq!(room.run(&["policy", "check"], None).code, 1);
}

#[test]
fn a_policy_must_be_a_json_object() {
    let room = Room::new();
    let file = write_policy(
        &room,
        "a.json",
        r#"[[{"permission": "*", "pattern": "*", "action": "allow"}]]"#,
    );
    let run = room.run(&["--policy", &file, "read", "--file-path", "a.json"], None);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(
        run.stderr.contains("a.json:1:1: expected a JSON object"),
        "{run:?}"
    );
    assert_eq!(room.run(&["policy", "check", &file], None).code, 2);
}

#[test]
fn refusals_name_the_closest_allow_rule_and_where_it_stopped() {
    let room = Room::new();
    room.write(".env", "K=1\n");
    let file = write_policy(
        &room,
        "p.json",
        r#"{"rules": [{"permission": "read", "pattern": ".envrc", "action": "allow"}]}"#,
    );
    let run = room.run(&["--policy", &file, "read", "--file-path", ".env"], None);
    assert_eq!(run.code, 3);
    let result = run.json();
    let out = result["output"].as_str().unwrap();
    assert!(
        out.contains("Closest allow rule: `read .envrc allow`"),
        "{out}"
    );
    assert!(out.contains("where the rule still expects `rc`"), "{out}");
    assert_eq!(
        result["metadata"]["closest_allow"]["rule"],
        "read .envrc allow"
    );
    let explained = room
        .run(
            &[
                "--policy",
                &file,
                "policy",
                "explain",
                "--json",
                "read",
                r#"{"file_path": ".env"}"#,
            ],
            None,
        )
        .json();
    assert_eq!(
        explained["permissions"][0]["closest_allow"]["rule"],
        "read .envrc allow"
    );
}

/// Runs tinytool under a pseudo-terminal (util-linux `script`), typing `keys` at its prompt.
fn in_terminal(room: &Room, args: &[&str], keys: &str) -> Option<String> {
    if Command::new("script").arg("--version").output().is_err() {
        crate::util::skip("`script` is not installed, terminal approvals not tested");
        return None;
    }
    let line = std::iter::once(bin().to_string())
        .chain(args.iter().map(|a| format!("'{a}'")))
        .collect::<Vec<_>>()
        .join(" ");
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg(format!("sleep 0.3; printf '{keys}\\n'"))
        .current_dir(&room.dir);
    let mut feeder = cmd.stdout(std::process::Stdio::piped()).spawn().unwrap();
    let mut outer = Command::new("script");
    outer.args(["-qec", &line, "/dev/null"]);
    room.enter(&mut outer);
    outer.stdin(feeder.stdout.take().unwrap());
    let out = outer.output().unwrap();
    feeder.wait().unwrap();
    Some(String::from_utf8_lossy(&out.stdout).into_owned())
}

#[test]
fn tty_mode_prompts_and_always_is_remembered_for_exactly_that_pattern() {
    let room = Room::new();
    room.write(".env", "K=1\n");
    room.write("sub/.env", "K=2\n");
    let file = write_policy(&room, "ask.json", r#"{"ask": "tty"}"#);
    let events = room.path("ev.jsonl");
    let args = [
        "--policy",
        &file,
        "--events",
        events.to_str().unwrap(),
        "--text",
        "read",
        "--file-path",
        ".env",
    ];
    let Some(rejected) = in_terminal(&room, &args, "r") else {
        return;
    };
    assert!(
        rejected.contains("Allow? [o]nce, [a]lways, [r]eject"),
        "{rejected}"
    );
    assert!(rejected.contains("rejected at the terminal"), "{rejected}");
    let once = in_terminal(&room, &args, "o").unwrap();
    assert!(once.contains("1\tK=1"), "{once}");
    let always = in_terminal(&room, &args, "a").unwrap();
    assert!(always.contains("1\tK=1"), "{always}");
    // Without a terminal: the stored approval allows .env, but not sub/.env.
    let mut no_tty = Command::new("setsid");
    no_tty
        .arg("-w")
        .arg(bin())
        .args(["--policy", &file, "--text", "read", "--file-path", ".env"]);
    room.enter(&mut no_tty);
    let run = run_command(no_tty, None);
    assert_eq!(run.code, 0, "{run:?}");
    let other = room.run(
        &["--policy", &file, "read", "--file-path", "sub/.env"],
        None,
    );
    assert_eq!(other.code, 3);
    let types: Vec<String> = read_events(&events)
        .iter()
        .map(|e| e["type"].as_str().unwrap().to_string())
        .collect();
    assert!(
        types.iter().filter(|t| *t == "permission.asked").count() == 3,
        "{types:?}"
    );
    assert!(
        types.iter().filter(|t| *t == "permission.replied").count() == 3,
        "{types:?}"
    );
}

#[test]
fn the_readme_policies_pass_check() {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let room = Room::new();
    let mut found = 0;
    for block in readme.split("```json policy").skip(1) {
        let text = block.split("```").next().unwrap();
        let file = write_policy(&room, &format!("readme{found}.json"), text);
        let run = room.run(&["policy", "check", &file], None);
        assert_eq!(
            run.code, 0,
            "README policy {found} does not pass check:\n{}{}",
            run.stdout, run.stderr
        );
        found += 1;
    }
    assert_eq!(found, 3, "the README should hold three ready policies");
}

#[test]
fn a_catch_all_rule_of_another_permission_is_no_closest_allow_rule() {
    let room = Room::new();
    room.write("a.txt", "a\n");
    let file = write_policy(
        &room,
        "p.json",
        r#"{"rules": [{"permission": "destructive-shell", "pattern": "*", "action": "allow"}]}"#,
    );
    let run = room.run(&["--policy", &file, "checkpoint", "--action", "undo"], None);
    assert_eq!(run.code, 3, "{}{}", run.stdout, run.stderr);
    let out = run.json()["output"].as_str().unwrap().to_string();
    assert!(out.contains("`undo` permission"), "{out}");
    assert!(!out.contains("Closest allow rule"), "{out}");
}
