//! The command line as a whole: version, usage errors, tool listings, stdin rules, text
//! mode, events and broken pipes.

use std::io::Read;
use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};

use crate::util::{Room, bin, read_events};

#[test]
fn version_and_unknown_subcommands() {
    let room = Room::new();
    let run = room.run(&["--version"], None);
    assert_eq!(run.code, 0);
    assert_eq!(
        run.stdout,
        format!("tinytool {}\n", env!("CARGO_PKG_VERSION"))
    );
    let run = room.run(&["nosuchtool"], None);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("nosuchtool"));
    let run = room.run(&["read", "--limit", "many"], None);
    assert_eq!(run.code, 2);
}

#[test]
fn an_unknown_flag_names_the_tools_flags() {
    let room = Room::new();
    let run = room.run(&["--dir", ".", "read", "--path", "a.txt"], None);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("unexpected argument '--path'"),
        "{run:?}"
    );
    assert!(
        run.stderr.contains(
            "The flags of `tinytool read` are: --file-path, --offset, --limit, --char-offset \
             (and --stdin)."
        ),
        "{run:?}"
    );
    let run = room.run(&["plan_enter", "--now"], None);
    assert!(
        run.stderr
            .contains("`tinytool plan_enter` takes no parameters."),
        "{run:?}"
    );
}

fn listed_names(list: &Value, key: impl Fn(&Value) -> &Value) -> Vec<String> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|t| key(t).as_str().unwrap().to_string())
        .collect()
}

#[test]
fn tools_are_listed_in_registry_order_without_invalid_in_every_format() {
    let room = Room::new();
    let openai = room.run(&["tools", "--format", "openai"], None).json();
    let anthropic = room.run(&["tools", "--format", "anthropic"], None).json();
    let mcp = room.run(&["tools", "--format", "mcp"], None).json();
    let gemini = room.run(&["tools", "--format", "gemini"], None).json();
    let own = room.run(&["tools"], None).json();
    let names = listed_names(&openai, |t| &t["function"]["name"]);
    assert!(!names.contains(&"invalid".to_string()));
    assert_eq!(names[0], "read");
    assert_eq!(names, listed_names(&anthropic, |t| &t["name"]));
    // MCP serves every tool but `exit` (no tool ends the server).
    let served: Vec<String> = names.iter().filter(|n| *n != "exit").cloned().collect();
    assert_eq!(served, listed_names(&mcp, |t| &t["name"]));
    assert_eq!(names, listed_names(&gemini, |t| &t["name"]));
    assert_eq!(names, listed_names(&own, |t| &t["name"]));
    assert_eq!(openai[0]["type"], "function");
    let read_params: Vec<&String> = openai[0]["function"]["parameters"]["properties"]
        .as_object()
        .unwrap()
        .keys()
        .collect();
    assert_eq!(read_params, ["file_path", "offset", "limit", "char_offset"]);
    assert_eq!(
        anthropic[0]["input_schema"]["required"],
        json!(["file_path"])
    );
    assert!(gemini.to_string().find("additionalProperties").is_none());
}

#[test]
fn flags_with_an_idle_stdin_pipe_return_at_once() {
    let room = Room::new();
    room.write("a.txt", "x\n");
    let mut child = room
        .command(&["read", "--file-path", "a.txt"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Keep the pipe open and idle: if tinytool read it, it would wait forever.
    let _idle = child.stdin.take();
    let mut waited = Duration::ZERO;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            assert!(status.success());
            break;
        }
        assert!(
            waited < Duration::from_secs(20),
            "tinytool waited on an idle stdin pipe"
        );
        std::thread::sleep(Duration::from_millis(20));
        waited += Duration::from_millis(20);
    }
    let mut stdout = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut stdout)
        .unwrap();
    assert!(stdout.contains("1\\tx"));
}

#[test]
fn stdin_flag_merges_with_flags_winning() {
    let room = Room::new();
    room.write("a.txt", "1\n2\n3\n");
    let run = room.run(
        &["read", "--limit", "1", "--stdin"],
        Some(r#"{"file_path": "a.txt", "limit": 3}"#),
    );
    assert!(
        run.output()
            .starts_with("1\t1\n[lines 1-1 of 3 shown, 2 more lines"),
        "{run:?}"
    );
}

#[test]
fn text_mode_prints_only_the_output_and_the_status_says_the_rest() {
    let room = Room::new();
    room.write("a.txt", "x\n");
    let run = room.run(&["--text", "read", "--file-path", "a.txt"], None);
    assert_eq!((run.code, run.stdout.as_str()), (0, "1\tx\n"));
    let run = room.run(&["read", "--text", "--file-path", "missing"], None);
    assert_eq!(
        (run.code, run.stdout.as_str()),
        (1, "File not found: missing\n")
    );
}

#[test]
fn dir_option_and_env_twin_set_the_working_directory() {
    let mut room = Room::new();
    room.write("sub/a.txt", "in sub\n");
    let run = room.run(&["--dir", "sub", "read", "--file-path", "a.txt"], None);
    assert_eq!(run.output(), "1\tin sub\n");
    room.set_env("TINYTOOL_DIR", room.path("sub").to_string_lossy());
    let run = room.run(&["read", "--file-path", "a.txt"], None);
    assert_eq!(run.output(), "1\tin sub\n");
    let run = room.run(&["--dir", "nowhere", "read", "--file-path", "a.txt"], None);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("not a directory"));
}

#[test]
fn events_are_appended_as_json_lines() {
    let room = Room::new();
    room.write("a.txt", "x\n");
    let events = room.path("events.jsonl");
    let run = room.run(
        &[
            "--events",
            events.to_str().unwrap(),
            "--session",
            "s1",
            "read",
            "--file-path",
            "a.txt",
        ],
        None,
    );
    assert_eq!(run.code, 0);
    let lines = read_events(&events);
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0]["type"], "tool.execute.before");
    assert_eq!(lines[0]["properties"]["sessionID"], "s1");
    assert_eq!(lines[0]["properties"]["tool"], "read");
    assert_eq!(lines[1]["type"], "tool.execute.after");
    assert_eq!(lines[1]["properties"]["isError"], false);
    assert_eq!(lines[1]["properties"]["output"], "1\tx\n");
    assert!(lines[0]["id"].as_str().unwrap().starts_with("evt_"));
}

#[test]
fn a_closed_pipe_is_success() {
    let room = Room::new();
    room.write("a.txt", "x\n".repeat(100));
    let call = json!({"name": "read", "arguments": {"file_path": "a.txt"}}).to_string();
    let input: String = (0..3000).map(|_| format!("{call}\n")).collect();
    std::fs::write(room.path("calls.jsonl"), input).unwrap();
    let script = format!(
        "{} exec --jsonl < calls.jsonl | head -c 10 > /dev/null; echo \"${{PIPESTATUS[0]}}\"",
        bin()
    );
    let out = std::process::Command::new("bash")
        .arg("-c")
        .arg(script)
        .current_dir(&room.dir)
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "0");
    assert!(
        String::from_utf8_lossy(&out.stderr).is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn flag_values_may_start_with_a_hyphen() {
    let room = Room::new();
    room.write("list.md", "- item one\n");
    let run = room.run(
        &[
            "edit",
            "--file-path",
            "list.md",
            "--old-string",
            "- item one",
            "--new-string",
            "- item 1",
        ],
        None,
    );
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(room.read("list.md"), "- item 1\n");
    let negative = room.run(&["read", "--file-path", "list.md", "--offset", "-1"], None);
    assert_eq!(
        negative.output(),
        "Invalid arguments: `offset` must be at least 0 (got -1)"
    );
}

#[test]
fn relative_option_paths_resolve_against_the_callers_directory_not_dir() {
    let room = Room::new();
    room.write("a.txt", "project file\n");
    // The caller stands in `caller/` and names its own files; the project is `--dir`.
    let caller = room.dir.parent().unwrap().join("caller");
    let write = |rel: &str, text: &str| {
        let path = caller.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write(
        "rel/pol.json",
        r#"{"rules": [{"permission": "read", "pattern": "a.txt", "action": "deny"}]}"#,
    );
    write("rel/answers.json", r#"["from the caller's file"]"#);
    let dir = room.dir.to_str().unwrap();
    let run_from_caller = |args: &[&str], stdin: Option<&str>| {
        let mut cmd = room.command(args);
        cmd.current_dir(&caller);
        crate::util::run_command(cmd, stdin.map(str::as_bytes))
    };
    // --policy: the caller's policy is the one in effect (the project has no rel/pol.json).
    let run = run_from_caller(
        &["--dir", dir, "--policy", "rel/pol.json", "read"],
        Some(r#"{"file_path": "a.txt"}"#),
    );
    assert_eq!(run.code, 3, "{run:?}");
    let policy_file = caller.join("rel/pol.json");
    assert!(
        run.json()["output"]
            .as_str()
            .unwrap()
            .contains("is denied by rule `read a.txt deny`"),
        "{run:?}"
    );
    assert!(
        run.json()["metadata"]["source"]
            .as_str()
            .unwrap()
            .contains(policy_file.to_str().unwrap()),
        "{run:?}"
    );
    // --answers and --state: read and created where the caller stands.
    let run = run_from_caller(
        &[
            "--dir",
            dir,
            "--answers",
            "rel/answers.json",
            "--state",
            "rel/state.db",
            "question",
        ],
        Some(r#"{"question": "Go?"}"#),
    );
    assert_eq!(run.output(), "from the caller's file", "{run:?}");
    assert!(caller.join("rel/state.db").is_file());
    assert!(!room.path("rel").exists());
    // `policy check FILE` too.
    let run = run_from_caller(&["--dir", dir, "policy", "check", "rel/pol.json"], None);
    assert_eq!(run.code, 0, "{run:?}");
    let run = run_from_caller(&["--dir", dir, "policy", "check", "rel/none.json"], None);
    assert_ne!(run.code, 0, "{run:?}");
    assert!(
        run.stdout
            .contains(caller.join("rel/none.json").to_str().unwrap())
            || run
                .stderr
                .contains(caller.join("rel/none.json").to_str().unwrap()),
        "{run:?}"
    );
}
