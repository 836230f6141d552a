//! Issue 43: other agents' tool names and parameters, each from that agent's own schema,
//! run through the real binary: translated (and listed in `metadata.repairs`) or refused
//! with the way out. Also unknown names, respellings and arguments encoded twice.

use serde_json::{Value, json};

use crate::httpd::{Reply, Server};
use crate::util::{Room, Run};

/// One `exec` call by name.
fn call(room: &Room, name: &str, arguments: Value) -> Run {
    room.exec(json!({"id": "c", "name": name, "arguments": arguments}))
}

fn repairs(run: &Run) -> Vec<String> {
    run.json()["metadata"]["repairs"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|r| r.as_str().unwrap_or_default().to_string())
                .collect()
        })
        .unwrap_or_default()
}

fn ok(run: &Run) -> Value {
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    run.json()
}

fn numbered(lines: usize) -> String {
    (1..=lines).map(|i| format!("line {i}\n")).collect()
}

// ---- names ----

#[test]
fn respelled_names_are_the_tools_and_say_so() {
    let room = Room::new();
    room.write("a.txt", "hello\n");
    let run = call(&room, "READ", json!({"file_path": "a.txt", "offset": 0}));
    let result = ok(&run);
    assert_eq!(
        (result["tool"].as_str(), result["output"].as_str()),
        (Some("read"), Some("1\thello\n"))
    );
    assert_eq!(repairs(&run), ["tool READ read as read"]);
    let patch = "*** Begin Patch\n*** Add File: b.txt\n+made\n*** End Patch\n";
    let run = call(&room, "Apply_Patch", json!({"patch": patch}));
    ok(&run);
    assert_eq!(room.read("b.txt"), "made\n");
    assert_eq!(repairs(&run), ["tool Apply_Patch read as apply_patch"]);
}

#[test]
fn an_unknown_name_lists_the_tools_and_the_closest_one() {
    let room = Room::new();
    let run = call(&room, "Foo", json!({}));
    assert_eq!(run.code, 2, "{}", run.stdout);
    assert_eq!(
        run.output(),
        "Unknown tool: Foo. Available tools: read, write, edit, apply_patch, bash, grep, glob, \
         webfetch, todowrite, report_findings, monitor, notepad, plan_enter, plan_exit, exit, \
         checkpoint, diagnostics."
    );
    let run = call(&room, "grpe", json!({"pattern": "x"}));
    assert_eq!(run.code, 2);
    assert!(
        run.output()
            .starts_with("Unknown tool: grpe. Did you mean grep? Available tools: read,"),
        "{}",
        run.output()
    );
}

#[test]
fn the_tool_list_is_the_sessions() {
    let room = Room::new();
    room.write_user("policy.json", r#"{"disabled": ["notepad", "skill"]}"#);
    let run = call(&room, "nosuchtool", json!({}));
    assert_eq!(run.code, 2);
    let output = run.output();
    assert!(output.contains("Available tools: read,"), "{output}");
    assert!(
        !output.contains("notepad") && !output.contains("skill"),
        "{output}"
    );
}

#[test]
fn a_disabled_tool_stays_disabled_under_any_name() {
    let room = Room::new();
    room.write_user("policy.json", r#"{"disabled": ["edit"]}"#);
    room.write("a.txt", "x\n");
    for (name, args) in [
        (
            "EDIT",
            json!({"file_path": "a.txt", "old_string": "x", "new_string": "y"}),
        ),
        (
            "MultiEdit",
            json!({"file_path": "a.txt", "edits": [{"old_string": "x", "new_string": "y"}]}),
        ),
        (
            "replace",
            json!({"file_path": "a.txt", "old_string": "x", "new_string": "y"}),
        ),
        (
            "str_replace_based_edit_tool",
            json!({"command": "str_replace", "path": "a.txt", "old_str": "x", "new_str": "y"}),
        ),
    ] {
        let run = call(&room, name, args);
        assert_eq!(run.code, 3, "{name}: {}", run.stdout);
        assert_eq!(run.output(), "Tool edit is disabled", "{name}");
    }
    assert_eq!(room.read("a.txt"), "x\n");
}

#[test]
fn arguments_encoded_twice_are_decoded_on_every_way_in() {
    let room = Room::new();
    room.write("a.txt", "hello\n");
    let inner = json!({"file_path": "a.txt"}).to_string();
    // OpenAI's shape: the arguments text is itself a JSON string.
    let text = serde_json::to_string(&inner).unwrap();
    let run = room.exec(json!({"id": "c", "name": "read", "arguments": text}));
    assert_eq!(ok(&run)["output"], "1\thello\n");
    assert_eq!(
        repairs(&run),
        ["arguments were JSON-encoded twice; decoded"]
    );
    // Anthropic's shape with `input` as text is read as arguments text (once encoded);
    // encoded twice, it is decoded too. (MCP's string arguments: tests/tinytool/mcp.rs.)
    let run = room.exec(json!({"type": "tool_use", "id": "t", "name": "read", "input": inner}));
    assert_eq!(ok(&run)["output"], "1\thello\n");
    assert_eq!(repairs(&run), Vec::<String>::new());
    let run = room.exec(json!({"type": "tool_use", "id": "t", "name": "read", "input": text}));
    assert_eq!(ok(&run)["output"], "1\thello\n");
    assert_eq!(
        repairs(&run),
        ["arguments were JSON-encoded twice; decoded"]
    );
    // A string that holds no object is still an error that says so.
    let run = room.exec(json!({"id": "c", "name": "read", "arguments": "\"a.txt\""}));
    assert_eq!(run.code, 1);
    assert!(
        run.output().contains("must be a JSON object, got a string"),
        "{}",
        run.output()
    );
}

// ---- Claude Code ----

#[test]
fn claude_read_counts_lines_from_one() {
    let room = Room::new();
    room.write("a.txt", numbered(10));
    let run = call(
        &room,
        "Read",
        json!({"file_path": "a.txt", "offset": 3, "limit": 2}),
    );
    assert_eq!(
        ok(&run)["output"],
        "3\tline 3\n4\tline 4\n[lines 3-4 of 10 shown, 6 more lines; continue with offset=4]\n"
    );
    assert_eq!(
        repairs(&run),
        [
            "tool Read read as read",
            "offset 3 read as 2 (Read counts lines from 1, read from 0)"
        ]
    );
    let run = call(&room, "Read", json!({"file_path": "a.txt", "pages": "1-2"}));
    assert_eq!(run.code, 1);
    assert!(run.output().contains("pdftotext"), "{}", run.output());
}

#[test]
fn claude_write_edit_and_glob_are_tinytools() {
    let room = Room::new();
    let run = call(
        &room,
        "Write",
        json!({"file_path": "n.txt", "content": "one two\n"}),
    );
    ok(&run);
    assert_eq!(repairs(&run), ["tool Write read as write"]);
    let run = call(
        &room,
        "Edit",
        json!({"file_path": "n.txt", "old_string": "two", "new_string": "2", "replace_all": false}),
    );
    ok(&run);
    assert_eq!(room.read("n.txt"), "one 2\n");
    let run = call(&room, "Glob", json!({"pattern": "*.txt", "path": "."}));
    assert_eq!(ok(&run)["output"], "n.txt\n");
}

#[test]
fn multiedit_applies_every_edit_or_none_in_one_checkpoint() {
    let room = Room::new();
    room.write("m.rs", "fn a() {}\nfn main() { a(); a(); }\n");
    let run = call(
        &room,
        "MultiEdit",
        json!({"file_path": "m.rs", "edits": [
            {"old_string": "fn a()", "new_string": "fn b()"},
            {"old_string": "a();", "new_string": "b();", "replace_all": true},
        ]}),
    );
    let result = ok(&run);
    assert_eq!(room.read("m.rs"), "fn b() {}\nfn main() { b(); b(); }\n");
    assert_eq!(result["metadata"]["edits_applied"], 2);
    assert_eq!(result["metadata"]["replacements"], 3);
    assert_eq!(
        result["output"],
        "Applied 2 edits to m.rs:\nedits[0]: Replaced in m.rs at line 1.\nedits[1]: Replaced 2 occurrences in m.rs (lines 2, 2)."
    );
    assert_eq!(repairs(&run), ["tool MultiEdit read as edit"]);
    let checkpoint = result["metadata"]["checkpoint"]["id"].clone();
    assert!(checkpoint.is_i64(), "{result}");
    let list = room.run(&["checkpoints", "--json"], None).json();
    assert_eq!(list.as_array().map(Vec::len), Some(1), "{list}");

    // The second edit fails: nothing is written, and the message says which failed.
    let run = call(
        &room,
        "MultiEdit",
        json!({"file_path": "m.rs", "edits": [
            {"old_string": "fn b()", "new_string": "fn c()"},
            {"old_string": "not there", "new_string": "x"},
        ]}),
    );
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert!(
        run.output()
            .starts_with("edits[1] (the 2nd of 2) failed, so nothing was written"),
        "{}",
        run.output()
    );
    assert_eq!(run.json()["metadata"]["failed_edit"], 1);
    assert_eq!(room.read("m.rs"), "fn b() {}\nfn main() { b(); b(); }\n");

    // The undo of the first call takes back both of its edits.
    let id = checkpoint.to_string();
    assert_eq!(room.run(&["undo", &id], None).code, 0);
    assert_eq!(room.read("m.rs"), "fn a() {}\nfn main() { a(); a(); }\n");
}

#[test]
fn multiedit_can_create_a_file_and_edit_it_before_writing() {
    let room = Room::new();
    let run = call(
        &room,
        "MultiEdit",
        json!({"file_path": "new/f.txt", "edits": [
            {"old_string": "", "new_string": "alpha\nbeta\n"},
            {"old_string": "beta", "new_string": "gamma"},
        ]}),
    );
    let result = ok(&run);
    assert_eq!(room.read("new/f.txt"), "alpha\ngamma\n");
    assert_eq!(result["metadata"]["edits_applied"], 2);
    // A later edit that fails creates nothing.
    let run = call(
        &room,
        "MultiEdit",
        json!({"file_path": "other.txt", "edits": [
            {"old_string": "", "new_string": "alpha\n"},
            {"old_string": "beta", "new_string": "gamma"},
        ]}),
    );
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert!(!room.path("other.txt").exists());
}

#[test]
fn claude_bash_timeout_is_in_milliseconds_as_ours() {
    let room = Room::new();
    let started = std::time::Instant::now();
    let run = call(
        &room,
        "Bash",
        json!({"command": "sleep 5; echo late", "timeout": 300, "description": "wait"}),
    );
    assert!(
        started.elapsed() < std::time::Duration::from_secs(4),
        "{:?}",
        started.elapsed()
    );
    let result = run.json();
    assert_eq!(result["metadata"]["timed_out"], true, "{result}");
    assert!(!run.output().contains("late"));
    assert_eq!(repairs(&run), ["tool Bash read as bash"]);
    let run = call(
        &room,
        "Bash",
        json!({"command": "sleep 100", "run_in_background": true}),
    );
    assert_eq!(run.code, 1);
    assert!(run.output().contains("monitor"), "{}", run.output());
    let run = call(
        &room,
        "Bash",
        json!({"command": "ls", "dangerouslyDisableSandbox": true}),
    );
    assert_eq!(run.code, 1);
    assert!(
        run.output().contains("sandbox cannot be lifted"),
        "{}",
        run.output()
    );
}

#[test]
fn claude_grep_options() {
    let room = Room::new();
    room.write("a.rs", "Hello\nhello\nbye\n");
    room.write("b.md", "hello\n");
    let run = call(
        &room,
        "Grep",
        json!({"pattern": "HELLO", "-i": true, "glob": "*.rs", "-n": true,
               "output_mode": "content", "head_limit": 1}),
    );
    let result = ok(&run);
    let output = result["output"].as_str().unwrap_or_default();
    assert!(
        output.contains("a.rs") && !output.contains("b.md"),
        "{output}"
    );
    assert_eq!(
        result["metadata"]["repairs"],
        json!([
            "tool Grep read as grep",
            "-i read as (?i) before pattern",
            "-n left out: grep always shows line numbers",
            "renamed parameter head_limit to max_count",
            "renamed parameter glob to include",
        ])
    );
    let run = call(&room, "Grep", json!({"pattern": "x", "type": "rust"}));
    assert_eq!(run.code, 1);
    assert_eq!(
        run.output(),
        "Invalid arguments: Grep's type has no equivalent in tinytool's grep: grep has no file \
         types; give include a glob such as `*.py` or `*.{ts,tsx}`."
    );
}

#[test]
fn claude_todos_task_and_websearch() {
    let mut room = Room::new();
    let run = call(
        &room,
        "TodoWrite",
        json!({"todos": [{"content": "a", "status": "completed", "activeForm": "Doing a"}]}),
    );
    ok(&run);
    assert_eq!(
        room.run(&["state", "todos"], None).json(),
        json!([{"content": "a", "status": "done", "priority": "normal"}])
    );
    // Task and Agent are task: a job id that does not exist is task's own answer.
    for name in ["Task", "Agent"] {
        let run = call(&room, name, json!({"task_id": "job_99"}));
        assert_eq!(run.json()["tool"], "task", "{}", run.stdout);
        assert_eq!(repairs(&run), [format!("tool {name} read as task")]);
    }
    room.set_env("EXA_API_KEY", "");
    for name in ["WebSearch", "google_web_search"] {
        let run = call(&room, name, json!({"query": "rust"}));
        assert_eq!(run.code, 2, "{}", run.stdout);
        assert_eq!(run.output(), "websearch is not configured: set EXA_API_KEY");
    }
}

#[test]
fn claude_ls_is_refused_with_the_way_out() {
    let room = Room::new();
    let run = call(&room, "LS", json!({"path": "/tmp"}));
    assert_eq!(run.code, 2, "{}", run.stdout);
    assert_eq!(
        run.output(),
        "LS (Claude Code) has no equivalent in tinytool: list a folder with glob: pattern `*` \
         and path set to the folder (`**/*` for its whole tree)."
    );
}

/// A loopback page, opened to webfetch by the room's config and policy.
fn web_room() -> (Server, Room) {
    let server = Server::start(|r| match r.path.as_str() {
        "/page" => Reply::ok("text/plain", "the answer is 42\n"),
        _ => Reply::new(404, "text/plain", "no"),
    });
    let room = Room::new();
    room.write_user(
        "config.json",
        json!({"webfetch": {"allow_hosts": [format!("127.0.0.1:{}", server.port)]}}).to_string(),
    );
    room.write_user(
        "policy.json",
        r#"{"rules":[{"permission":"webfetch","pattern":"*","action":"allow"}]}"#,
    );
    (server, room)
}

#[test]
fn claude_webfetch_returns_the_page_and_gemini_finds_its_url() {
    let (server, room) = web_room();
    let url = server.url("/page");
    let run = call(
        &room,
        "WebFetch",
        json!({"url": url, "prompt": "What is the answer?"}),
    );
    assert!(
        ok(&run)["output"]
            .as_str()
            .unwrap_or_default()
            .contains("the answer is 42")
    );
    assert_eq!(
        repairs(&run)[1],
        "prompt left out: webfetch returns the page itself, with no model run on it: find the answer in it"
    );
    let run = call(
        &room,
        "web_fetch",
        json!({"prompt": format!("Summarise {url}, please.")}),
    );
    assert!(
        ok(&run)["output"]
            .as_str()
            .unwrap_or_default()
            .contains("the answer is 42")
    );
    assert!(
        repairs(&run)[1].starts_with(&format!("url {url} taken from prompt")),
        "{:?}",
        repairs(&run)
    );
    let run = call(
        &room,
        "web_fetch",
        json!({"prompt": format!("Compare {url} and {}", server.url("/other"))}),
    );
    assert_eq!(run.code, 1);
    assert!(
        run.output().contains("once with each url"),
        "{}",
        run.output()
    );
    assert_eq!(server.paths(), ["/page", "/page"]);
}

// ---- opencode ----

#[test]
fn opencode_multiedit_patch_and_bash_workdir() {
    let room = Room::new();
    room.write("o.txt", "red green\n");
    let run = call(
        &room,
        "multiedit",
        json!({"filePath": "o.txt", "edits": [
            {"filePath": "o.txt", "oldString": "red", "newString": "blue"},
            {"filePath": "o.txt", "oldString": "green", "newString": "yellow", "replaceAll": true},
        ]}),
    );
    ok(&run);
    assert_eq!(room.read("o.txt"), "blue yellow\n");
    let run = call(
        &room,
        "multiedit",
        json!({"filePath": "o.txt", "edits": [{"filePath": "p.txt", "oldString": "a", "newString": "b"}]}),
    );
    assert_eq!(run.code, 1);
    assert!(
        run.output().contains("one edit call changes one file"),
        "{}",
        run.output()
    );

    let patch = "*** Begin Patch\n*** Update File: o.txt\n@@\n-blue yellow\n+done\n*** End Patch\n";
    let run = call(&room, "patch", json!({"patchText": patch}));
    ok(&run);
    assert_eq!(room.read("o.txt"), "done\n");
    assert_eq!(
        repairs(&run),
        [
            "tool patch read as apply_patch",
            "renamed parameter patchText to patch"
        ]
    );

    room.write("sub dir/x.txt", "x\n");
    let run = call(
        &room,
        "bash",
        json!({"command": "ls; pwd", "workdir": "sub dir", "timeout": 5000}),
    );
    let output = ok(&run)["output"].as_str().unwrap_or_default().to_string();
    assert!(
        output.starts_with("x.txt\n") && output.contains("/sub dir"),
        "{output}"
    );
    assert_eq!(
        repairs(&run),
        ["folder \"sub dir\" read as `cd 'sub dir' && { … }` before the command"]
    );
    // When the folder is not there, nothing of the command runs elsewhere.
    let run = call(
        &room,
        "bash",
        json!({"command": "touch stray; echo ran", "workdir": "nowhere"}),
    );
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert!(!room.path("stray").exists());
}

// ---- Codex ----

#[test]
fn codex_shell_argv_workdir_and_timeout() {
    let room = Room::new();
    room.write("sub/x.txt", "x\n");
    let run = call(
        &room,
        "shell",
        json!({"command": ["bash", "-lc", "ls && echo \"$0\" >/dev/null"], "workdir": "sub", "timeout_ms": 5000}),
    );
    assert_eq!(ok(&run)["output"], "x.txt\n");
    assert_eq!(
        repairs(&run),
        [
            "tool shell read as bash",
            "command [\"bash\", \"-lc\", SCRIPT] read as SCRIPT (run by sh -c, not a login shell)",
            "renamed parameter timeout_ms to timeout",
            "folder \"sub\" read as `cd sub && { … }` before the command",
        ]
    );
    assert_eq!(run.json()["metadata"]["timeout_ms"], 5000);
    let run = call(
        &room,
        "shell",
        json!({"command": ["printf", "%s|", "a b", "it's", "$HOME"]}),
    );
    assert_eq!(ok(&run)["output"], "a b|it's|$HOME|");
    let run = call(
        &room,
        "shell_command",
        json!({"command": "echo hi", "login": true, "justification": "x"}),
    );
    assert_eq!(ok(&run)["output"], "hi\n");
    let run = call(
        &room,
        "exec_command",
        json!({"cmd": "echo there", "yield_time_ms": 1000}),
    );
    assert_eq!(ok(&run)["output"], "there\n");
    let run = call(
        &room,
        "shell",
        json!({"command": ["ls"], "sandbox_permissions": "require_escalated"}),
    );
    assert_eq!(run.code, 1);
    assert!(
        run.output().contains("policy sets the sandbox"),
        "{}",
        run.output()
    );
}

#[test]
fn codex_apply_patch_update_plan_and_view_image() {
    let room = Room::new();
    let patch = "*** Begin Patch\n*** Add File: c.txt\n+codex\n*** End Patch\n";
    let run = call(&room, "apply_patch", json!({"input": patch}));
    ok(&run);
    assert_eq!(room.read("c.txt"), "codex\n");
    assert_eq!(repairs(&run), ["renamed parameter input to patch"]);

    let run = call(
        &room,
        "update_plan",
        json!({"explanation": "first things first", "plan": [
            {"step": "read the code", "status": "completed"},
            {"step": "fix it", "status": "in_progress"},
        ]}),
    );
    ok(&run);
    assert_eq!(
        room.run(&["state", "todos"], None).json(),
        json!([
            {"content": "read the code", "status": "done", "priority": "normal"},
            {"content": "fix it", "status": "in_progress", "priority": "normal"},
        ])
    );

    room.write("pic.png", crate::util::plain_png(2, 2));
    let run = call(&room, "view_image", json!({"path": "pic.png"}));
    assert!(
        ok(&run)["output"]
            .as_str()
            .unwrap_or_default()
            .starts_with("[image 1: pic.png, image/png, 2x2, ")
    );
    // Asked in OpenAI's shape, the image comes back as an OpenAI image part.
    assert_eq!(run.json()["content"][0]["type"], "image_url");
}

#[test]
fn read_file_offset_is_refused_when_it_has_two_readings() {
    let room = Room::new();
    room.write("a.txt", numbered(5));
    let run = call(
        &room,
        "read_file",
        json!({"file_path": "a.txt", "offset": 2, "limit": 1}),
    );
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert_eq!(
        run.output(),
        "Invalid arguments: read_file: offset 2 has two readings: line 3 in Gemini CLI's \
         read_file (which counts from 0) and line 2 in Codex's (which counts from 1). Call read \
         with file_path and offset counted from 0 (offset 1 starts at line 2)"
    );
    // Gemini's spelling of the path says whose it is.
    let run = call(
        &room,
        "read_file",
        json!({"absolute_path": room.path("a.txt"), "offset": 2, "limit": 1}),
    );
    assert!(
        ok(&run)["output"]
            .as_str()
            .unwrap_or_default()
            .starts_with("3\tline 3\n")
    );
    // So does Codex's mode.
    let run = call(
        &room,
        "read_file",
        json!({"file_path": "a.txt", "offset": 2, "limit": 1, "mode": "slice"}),
    );
    assert!(
        ok(&run)["output"]
            .as_str()
            .unwrap_or_default()
            .starts_with("2\tline 2\n")
    );
    // And offset 0 means the first line in both.
    let run = call(
        &room,
        "read_file",
        json!({"file_path": "a.txt", "offset": 0, "limit": 1}),
    );
    assert!(
        ok(&run)["output"]
            .as_str()
            .unwrap_or_default()
            .starts_with("1\tline 1\n")
    );
}

// ---- Gemini CLI ----

#[test]
fn gemini_file_tools() {
    let room = Room::new();
    let run = call(
        &room,
        "write_file",
        json!({"file_path": "g.txt", "content": "a b a\n"}),
    );
    ok(&run);
    let run = call(
        &room,
        "replace",
        json!({"file_path": "g.txt", "old_string": "b", "new_string": "c", "expected_replacements": 1}),
    );
    ok(&run);
    assert_eq!(room.read("g.txt"), "a c a\n");
    let run = call(
        &room,
        "replace",
        json!({"file_path": "g.txt", "old_string": "a", "new_string": "z", "expected_replacements": 2}),
    );
    assert_eq!(run.code, 1);
    assert!(
        run.output().contains("send replace_all true instead"),
        "{}",
        run.output()
    );
    assert_eq!(room.read("g.txt"), "a c a\n");
}

#[test]
fn gemini_shell_search_and_listing() {
    let room = Room::new();
    room.write("src/lib.rs", "fn main() {}\n");
    room.write("src/notes.md", "fn in prose\n");
    room.write(".ignore", "ignored.rs\n");
    room.write("ignored.rs", "fn hidden() {}\n");
    let run = call(
        &room,
        "run_shell_command",
        json!({"command": "ls", "dir_path": "src", "description": "list"}),
    );
    assert_eq!(ok(&run)["output"], "lib.rs\nnotes.md\n");
    let run = call(
        &room,
        "run_shell_command",
        json!({"command": "ls", "directory": "src"}),
    );
    assert_eq!(ok(&run)["output"], "lib.rs\nnotes.md\n");
    let run = call(
        &room,
        "run_shell_command",
        json!({"command": "sleep 9", "is_background": true}),
    );
    assert_eq!(run.code, 1);
    assert!(run.output().contains("monitor"), "{}", run.output());

    for name in ["search_file_content", "grep_search"] {
        let run = call(
            &room,
            name,
            json!({"pattern": "fn", "dir_path": "src", "include": "*.rs"}),
        );
        let output = ok(&run)["output"].as_str().unwrap_or_default().to_string();
        assert!(
            output.contains("lib.rs") && !output.contains("notes.md"),
            "{name}: {output}"
        );
    }
    let run = call(&room, "glob", json!({"pattern": "*.rs", "dir_path": "."}));
    let output = ok(&run)["output"].as_str().unwrap_or_default().to_string();
    assert!(
        output.starts_with("No files matched the pattern."),
        "{output}"
    );
    let run = call(
        &room,
        "glob",
        json!({"pattern": "**/*.rs", "respect_git_ignore": false}),
    );
    let output = ok(&run)["output"].as_str().unwrap_or_default().to_string();
    assert!(
        output.contains("ignored.rs") && output.contains("src/lib.rs"),
        "{output}"
    );
    let run = call(
        &room,
        "glob",
        json!({"pattern": "*.RS", "case_sensitive": false}),
    );
    assert_eq!(run.code, 1);

    let run = call(&room, "list_directory", json!({"dir_path": "src"}));
    let output = ok(&run)["output"].as_str().unwrap_or_default().to_string();
    let mut listed: Vec<&str> = output.lines().collect();
    listed.sort_unstable();
    assert_eq!(listed, ["src/lib.rs", "src/notes.md"]);
}

#[test]
fn gemini_todos() {
    let room = Room::new();
    let run = call(
        &room,
        "write_todos",
        json!({"todos": [{"description": "plan", "status": "completed"}, {"description": "act", "status": "pending"}]}),
    );
    ok(&run);
    assert_eq!(
        room.run(&["state", "todos"], None).json(),
        json!([
            {"content": "plan", "status": "done", "priority": "normal"},
            {"content": "act", "status": "pending", "priority": "normal"},
        ])
    );
}

// ---- Anthropic's text editor tool ----

const EDITOR: &str = "str_replace_based_edit_tool";

#[test]
fn text_editor_view() {
    let room = Room::new();
    room.write("v.txt", numbered(6));
    let run = call(
        &room,
        EDITOR,
        json!({"command": "view", "path": "v.txt", "view_range": [2, 3]}),
    );
    assert!(
        ok(&run)["output"]
            .as_str()
            .unwrap_or_default()
            .starts_with("2\tline 2\n3\tline 3\n")
    );
    assert_eq!(
        repairs(&run),
        [
            "str_replace_based_edit_tool command view read as read",
            "renamed parameter path to file_path",
            "view_range [2, 3] read as offset 1 limit 2",
        ]
    );
    let run = call(
        &room,
        EDITOR,
        json!({"command": "view", "path": "v.txt", "view_range": [5, -1]}),
    );
    assert_eq!(ok(&run)["output"], "5\tline 5\n6\tline 6\n");
    let run = call(
        &room,
        EDITOR,
        json!({"command": "view", "path": "v.txt", "view_range": [0, 2]}),
    );
    assert_eq!(run.code, 1);
    assert!(
        run.output().contains("lines count from 1"),
        "{}",
        run.output()
    );
    room.write("d/x.txt", "x\n");
    let run = call(&room, EDITOR, json!({"command": "view", "path": "d"}));
    assert_eq!(run.code, 1);
    assert_eq!(
        run.output(),
        "d is a directory, not a file (use glob to list its files)"
    );
}

#[test]
fn text_editor_create_never_overwrites() {
    let room = Room::new();
    let run = call(
        &room,
        EDITOR,
        json!({"command": "create", "path": "dir/c.txt", "file_text": "new\n"}),
    );
    ok(&run);
    assert_eq!(room.read("dir/c.txt"), "new\n");
    let run = call(
        &room,
        EDITOR,
        json!({"command": "create", "path": "dir/c.txt", "file_text": "other\n"}),
    );
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert!(
        run.output().contains("it never overwrites one"),
        "{}",
        run.output()
    );
    assert_eq!(room.read("dir/c.txt"), "new\n");
}

#[test]
fn text_editor_str_replace_and_its_optional_new_str() {
    let room = Room::new();
    room.write("s.txt", "keep drop keep\n");
    let run = call(
        &room,
        "str_replace_editor",
        json!({"command": "str_replace", "path": "s.txt", "old_str": "drop ", "new_str": "DROP "}),
    );
    ok(&run);
    assert_eq!(room.read("s.txt"), "keep DROP keep\n");
    let run = call(
        &room,
        EDITOR,
        json!({"command": "str_replace", "path": "s.txt", "old_str": "DROP "}),
    );
    ok(&run);
    assert_eq!(room.read("s.txt"), "keep keep\n");
    assert!(repairs(&run).contains(
        &"new_string set to \"\": str_replace without new_str deletes old_str".to_string()
    ));
}

#[test]
fn text_editor_insert_goes_after_the_line_atomically() {
    let room = Room::new();
    room.write("i.txt", "a\r\nb\r\n");
    let run = call(
        &room,
        EDITOR,
        json!({"command": "insert", "path": "i.txt", "insert_line": 1, "new_str": "x\ny"}),
    );
    let result = ok(&run);
    // The file's CRLF endings are the inserted lines' too.
    assert_eq!(room.read("i.txt"), "a\r\nx\r\ny\r\nb\r\n");
    assert_eq!(
        result["output"],
        "Inserted 2 lines in i.txt after line 1 (now lines 2-3)."
    );
    assert_eq!(result["metadata"]["strategy"], "insert");
    assert!(result["metadata"]["checkpoint"]["id"].is_i64(), "{result}");
    let run = call(
        &room,
        EDITOR,
        json!({"command": "insert", "path": "i.txt", "insert_line": 0, "new_str": "top\n"}),
    );
    ok(&run);
    let run = call(
        &room,
        "str_replace_editor",
        json!({"command": "insert", "path": "i.txt", "insert_line": 5, "insert_text": "end"}),
    );
    ok(&run);
    assert_eq!(room.read("i.txt"), "top\r\na\r\nx\r\ny\r\nb\r\nend\r\n");
    let run = call(
        &room,
        EDITOR,
        json!({"command": "insert", "path": "i.txt", "insert_line": 9, "new_str": "z"}),
    );
    assert_eq!(run.code, 1);
    assert_eq!(
        run.output(),
        "insert_line 9 is past the end of i.txt (6 lines): give 0 (at the top) to 6 (at the end)"
    );
    assert_eq!(room.read("i.txt"), "top\r\na\r\nx\r\ny\r\nb\r\nend\r\n");
}

#[test]
fn text_editor_undo_edit_and_unknown_commands_say_what_to_do() {
    let room = Room::new();
    room.write("u.txt", "u\n");
    let run = call(
        &room,
        EDITOR,
        json!({"command": "undo_edit", "path": "u.txt"}),
    );
    assert_eq!(run.code, 2, "{}", run.stdout);
    assert!(
        run.output().contains("checkpoint tool (action `list`)")
            && run.output().contains("action `undo`"),
        "{}",
        run.output()
    );
    let run = call(&room, EDITOR, json!({"command": "rename", "path": "u.txt"}));
    assert_eq!(run.code, 1);
    assert_eq!(
        run.output(),
        "Invalid arguments: str_replace_based_edit_tool: unknown command \"rename\" (commands \
         are view, create, str_replace, insert, undo_edit)"
    );
}

// ---- tinytool's own names with other spellings ----

#[test]
fn generic_aliases_for_our_tools() {
    let room = Room::new();
    let run = call(&room, "write", json!({"path": "t.txt", "text": "hi\n"}));
    ok(&run);
    assert_eq!(room.read("t.txt"), "hi\n");
    assert_eq!(
        repairs(&run),
        [
            "renamed parameter path to file_path",
            "renamed parameter text to content"
        ]
    );
    let run = call(&room, "bash", json!({"cmd": "echo cmd"}));
    assert_eq!(ok(&run)["output"], "cmd\n");
    // A parameter whose two spellings disagree is refused, naming both.
    let run = call(
        &room,
        "write",
        json!({"path": "t.txt", "file_path": "u.txt", "content": "x"}),
    );
    assert_eq!(run.code, 1);
    assert!(
        run.output()
            .contains("both path (\"t.txt\") and file_path (\"u.txt\")"),
        "{}",
        run.output()
    );
    assert!(!room.path("u.txt").exists());
}

#[test]
fn edit_inserts_and_edits_by_its_own_name() {
    let room = Room::new();
    room.write("e.txt", "one\ntwo\n");
    let run = room.call(
        "edit",
        json!({"file_path": "e.txt", "insert_line": 2, "new_string": "three"}),
    );
    ok(&run);
    assert_eq!(room.read("e.txt"), "one\ntwo\nthree\n");
    let run = room.run(
        &[
            "edit",
            "--file-path",
            "e.txt",
            "--edits",
            r#"[{"old_string":"one","new_string":"1"},{"old_string":"two","new_string":"2"}]"#,
        ],
        None,
    );
    ok(&run);
    assert_eq!(room.read("e.txt"), "1\n2\nthree\n");
    // A call of two forms is refused before anything is asked or read.
    let run = room.call(
        "edit",
        json!({"file_path": "e.txt", "old_string": "1", "new_string": "x", "edits": []}),
    );
    assert_eq!(run.code, 1);
    assert!(
        run.output()
            .starts_with("Invalid arguments: edits is given with old_string, new_string"),
        "{}",
        run.output()
    );
    let run = room.call("edit", json!({"file_path": "e.txt"}));
    assert_eq!(run.code, 1);
    assert_eq!(
        run.output(),
        "Invalid arguments: missing required parameter `old_string`; missing required parameter \
         `new_string` (or edits, a list of replacements)"
    );
}

#[test]
fn policy_explain_reads_a_call_as_the_flow_does() {
    let room = Room::new();
    let run = room.run(
        &[
            "policy",
            "explain",
            "Bash",
            r#"{"command": "ls", "timeout": 5000}"#,
        ],
        None,
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.starts_with("bash {"), "{}", run.stdout);
    let run = room.run(&["policy", "explain", "LS", "{}"], None);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("list a folder with glob"),
        "{}",
        run.stderr
    );
}
