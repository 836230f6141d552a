//! Issue 23: arguments as models trained on other agents send them, and messages a model
//! can act on.

use serde_json::json;

use crate::util::Room;

#[test]
fn todos_in_other_agents_words_are_accepted_and_listed_as_repairs() {
    let room = Room::new();
    let run = room.call(
        "todowrite",
        json!({"todos": [
            {"content": "a", "status": "completed", "priority": "medium"},
            {"content": "b", "status": "cancelled"},
            {"content": "c", "status": "in_progress", "activeForm": "Doing c"},
        ]}),
    );
    assert_eq!(run.code, 0, "{}", run.stdout);
    let repairs = run.json()["metadata"]["repairs"].clone();
    assert_eq!(
        repairs,
        json!([
            "todo[0]: status \"completed\" read as \"done\"",
            "todo[0]: priority \"medium\" read as \"normal\"",
            "todo[1]: no priority, \"normal\" assumed",
            "todo[2]: no priority, \"normal\" assumed",
            "todo[2]: activeForm ignored",
        ])
    );
    assert_eq!(
        room.run(&["state", "todos"], None).json(),
        json!([
            {"content": "a", "status": "done", "priority": "normal"},
            {"content": "b", "status": "cancelled", "priority": "normal"},
            {"content": "c", "status": "in_progress", "priority": "normal"},
        ])
    );
}

#[test]
fn edit_with_opencode_parameter_names_works_and_lists_the_aliases() {
    let room = Room::new();
    room.write("a.txt", "hello world\n");
    let run = room.call(
        "edit",
        json!({"filePath": "a.txt", "oldString": "world", "newString": "there"}),
    );
    assert_eq!(run.code, 0, "{}", run.stdout);
    assert_eq!(room.read("a.txt"), "hello there\n");
    assert_eq!(
        run.json()["metadata"]["repairs"],
        json!([
            "renamed parameter filePath to file_path",
            "renamed parameter oldString to old_string",
            "renamed parameter newString to new_string",
        ])
    );
}

#[test]
fn an_alias_next_to_its_canonical_name_is_not_guessed() {
    let room = Room::new();
    room.write("a.txt", "x\n");
    room.write("b.txt", "y\n");
    // The same value twice has one reading: the alias is dropped and says so.
    let run = room.call("read", json!({"filePath": "a.txt", "file_path": "a.txt"}));
    assert_eq!(run.code, 0, "{}", run.stdout);
    assert_eq!(
        run.json()["metadata"]["repairs"],
        json!(["filePath and file_path both given, equal: filePath dropped"])
    );
    // Two values have two: neither is chosen, both are named.
    let run = room.call("read", json!({"filePath": "a.txt", "file_path": "b.txt"}));
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert_eq!(
        run.output(),
        "Invalid arguments: both filePath (\"a.txt\") and file_path (\"b.txt\") given: they \
         are one parameter of read here, and which one you meant cannot be told; send \
         file_path alone"
    );
}

#[test]
fn websearch_without_its_key_names_the_key() {
    let mut room = Room::new();
    room.set_env("EXA_API_KEY", "");
    let run = room.exec(json!({"id": "c", "name": "websearch", "arguments": {"query": "rust"}}));
    let text = run.stdout.clone();
    assert!(
        text.contains("websearch is not configured: set EXA_API_KEY"),
        "{text}"
    );
    assert!(!text.contains("Unknown tool"), "{text}");
}

#[test]
fn plan_mode_runs_read_only_lines_and_asks_for_everything_else() {
    let room = Room::new();
    room.write("a.txt", "hello\n");
    assert_eq!(room.run(&["plan_enter"], None).code, 0);
    for line in [
        "ls",
        "git --no-pager status --short",
        "cat a.txt | grep hell",
        "wc -l a.txt 2>/dev/null",
    ] {
        let run = room.call("bash", json!({"command": line}));
        assert!(
            !run.stdout.contains("Refused by the policy"),
            "{line}: {}",
            run.stdout
        );
    }
    for line in [
        "rm a.txt",
        "ls; rm -rf a.txt",
        "ls > out.txt",
        "find . -delete",
        "sort -o a.txt a.txt",
    ] {
        let run = room.call("bash", json!({"command": line}));
        assert!(
            run.stdout.contains("Refused by the policy"),
            "{line}: {}",
            run.stdout
        );
    }
    assert_eq!(room.read("a.txt"), "hello\n");
    assert!(!room.path("out.txt").exists());
}

#[test]
fn a_tools_help_fits_one_screen_with_its_own_flags_first_an_example_and_its_man_page() {
    let mut room = Room::new();
    room.set_env("COLUMNS", "80");
    for tool in ["read", "edit", "bash", "grep", "todowrite"] {
        let help = room.run(&[tool, "--help"], None);
        assert_eq!(help.code, 0, "{tool}: {}", help.stderr);
        let text = help.stdout;
        assert!(
            // The example is a command to copy, so it is never wrapped.
            text.lines()
                .all(|l| l.chars().count() <= 80 || l.starts_with("  tinytool ")),
            "{tool}:\n{text}"
        );
        let own = text.find("Options:").expect("own flags");
        let global = text.find("Global options:").expect("global block");
        assert!(own < global, "{tool}: own flags come first:\n{text}");
        assert_eq!(text.matches("--session").count(), 1, "{tool}:\n{text}");
        assert!(
            text.contains(&format!("\n  tinytool {tool} ")),
            "{tool}: an example:\n{text}"
        );
        assert!(
            text.trim_end()
                .ends_with(&format!("See man tinytool-{tool}")),
            "{text}"
        );
    }
    let read = room.run(&["read", "--help"], None).stdout;
    assert!(read.lines().count() <= 40, "{read}");
}

#[test]
fn websearch_is_listed_in_the_help_only_when_it_can_run() {
    let mut room = Room::new();
    let listed = |room: &Room| {
        room.run(&["--help"], None)
            .stdout
            .lines()
            .any(|l| l.trim_start().starts_with("websearch "))
    };
    assert!(!listed(&room));
    room.set_env("EXA_API_KEY", "k");
    assert!(listed(&room));
}

/// The tool names `tinytool tools` lists, and its standard error, run without a
/// controlling terminal (as an agent harness runs it): `question` could ask on one.
fn listed_without_a_terminal(room: &Room, options: &[&str]) -> (Vec<String>, String) {
    let mut cmd = std::process::Command::new("setsid");
    cmd.arg("-w")
        .arg(crate::util::bin())
        .args(options)
        .arg("tools");
    room.enter(&mut cmd);
    let run = crate::util::run_command(cmd, None);
    assert_eq!(run.code, 0, "{run:?}");
    let names = run
        .json()
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect();
    (names, run.stderr)
}

#[test]
fn tools_that_cannot_work_here_are_not_offered_until_configured() {
    let mut room = Room::new();
    let (names, stderr) = listed_without_a_terminal(&room, &[]);
    for name in ["task", "skill", "question"] {
        assert!(!names.contains(&name.to_string()), "{name}: {names:?}");
        assert!(
            stderr.contains(&format!("tinytool: {name} is not listed: ")),
            "{name}: {stderr}"
        );
    }
    assert!(stderr.contains("no subagent is configured"), "{stderr}");
    assert!(names.contains(&"read".to_string()));
    // Called by name anyway, each runs and says what is missing.
    let run = room.call("task", json!({"description": "d", "prompt": "p"}));
    assert!(
        run.output().contains("No subagent is configured"),
        "{run:?}"
    );
    let run = room.call("skill", json!({"name": "review"}));
    assert!(run.output().contains("No skills are available"), "{run:?}");
    // Configured, each is offered.
    room.write_user(
        "config.json",
        r#"{"subagents": {"build": {"command": ["cat"]}}}"#,
    );
    room.write_user("skills/review/SKILL.md", "Review $1\n");
    room.write("answers.json", r#"["yes"]"#);
    let (names, stderr) = listed_without_a_terminal(&room, &["--answers", "answers.json"]);
    for name in ["task", "skill", "question"] {
        assert!(
            names.contains(&name.to_string()),
            "{name}: {names:?} {stderr}"
        );
    }
    assert!(stderr.is_empty(), "{stderr}");
    let tools = room.run(&["tools"], None).json();
    let task = tools
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "task")
        .unwrap();
    assert!(
        task["description"]
            .as_str()
            .unwrap()
            .contains("configured under `subagents`")
    );
    // A subagent at the maximum depth cannot start another.
    room.set_env("TINYTOOL_SUBAGENT_DEPTH", "5");
    let (names, stderr) = listed_without_a_terminal(&room, &[]);
    assert!(!names.contains(&"task".to_string()), "{names:?}");
    assert!(stderr.contains("at the maximum depth (5)"), "{stderr}");
}

#[test]
fn webfetch_says_what_must_be_configured() {
    let room = Room::new();
    let tools = room.run(&["tools"], None).json();
    let webfetch = tools
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "webfetch")
        .unwrap();
    assert!(
        webfetch["description"]
            .as_str()
            .unwrap()
            .contains("`webfetch * ask`")
    );
}
