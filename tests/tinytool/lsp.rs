//! Diagnostics after every change, from real language servers (pyright and
//! typescript-language-server, installed from npm into `target/lsp-servers` when missing)
//! and, for faults only, from `tests/fixtures/lsp/fake_server.py`.

use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::util::Room;

/// The servers' pins: typescript-language-server 5 runs on node 20, typescript 6 ships
/// the tsserver it drives.
const SERVERS: &[&str] = &[
    "pyright@1.1.414",
    "typescript-language-server@5.3.0",
    "typescript@6",
];

/// The folder of the installed servers' programs, installing them on first use.
fn servers() -> Option<PathBuf> {
    let _installing = crate::util::INSTALLING
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    match crate::util::npm_install("lsp-servers", SERVERS, "{\"private\": true}\n") {
        Ok(dir) => Some(dir.join("node_modules").join(".bin")),
        Err(why) => {
            crate::util::skip(format!("the language servers: {why}"));
            None
        }
    }
}

/// A room whose PATH finds the real servers first, with short idle times.
fn room_with_servers() -> Option<Room> {
    let bin = servers()?;
    let mut room = Room::new();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    room.set_env("PATH", path);
    room.write_user(
        "config.json",
        json!({"lsp": {"idle_ms": 60000}}).to_string(),
    );
    Some(room)
}

/// A room whose Python server is the fake one in `mode`.
fn room_with_fake(mode: &str, lsp: Value) -> Room {
    let room = Room::new();
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/lsp/fake_server.py"
    );
    let mut section = json!({"servers": {"python": {"command": ["python3", script, mode]}}});
    for (key, value) in lsp.as_object().unwrap() {
        section[key] = value.clone();
    }
    room.write_user("config.json", json!({"lsp": section}).to_string());
    room
}

fn output(run: &crate::util::Run) -> (String, Value) {
    let value = run.json();
    (
        value["output"].as_str().unwrap_or_default().to_string(),
        value["metadata"]["diagnostics"].clone(),
    )
}

fn stop(room: &Room) {
    let _ = room.run(&["lsp", "stop"], None);
}

fn status(room: &Room, language: &str) -> Value {
    let run = room.run(&["lsp", "status", "--json"], None);
    let all = run.json();
    all["languages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["language"] == language)
        .cloned()
        .unwrap()
}

fn alive(pid: i64) -> bool {
    std::path::Path::new(&format!("/proc/{pid}")).exists()
        && !std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .is_ok_and(|s| s.split_whitespace().nth(2) == Some("Z"))
}

fn gone_within(pid: i64, within: Duration) -> bool {
    let until = Instant::now() + within;
    while Instant::now() < until {
        if !alive(pid) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    !alive(pid)
}

#[test]
fn pyright_reports_an_undefined_name_and_its_fix_in_separate_processes() {
    let Some(room) = room_with_servers() else {
        return;
    };
    room.write("pyrightconfig.json", "{}\n");
    let (text, diagnostics) = output(&room.call(
        "write",
        json!({"file_path": "a.py", "content": "import os\nprint(undefined_name)\n"}),
    ));
    assert!(
        text.contains(
            "a.py:2:7: error: \"undefined_name\" is not defined [reportUndefinedVariable]"
        ),
        "{text}"
    );
    assert!(text.contains("1 introduced by this change"), "{text}");
    assert_eq!(diagnostics["introduced"], 1, "{diagnostics}");
    assert_eq!(diagnostics["files"][0]["items"][0]["line"], 2);
    let first_pid = diagnostics["servers"][0]["pid"].clone();
    // A second process finds the warm server.
    let (text, diagnostics) = output(&room.call(
        "edit",
        json!({"file_path": "a.py", "old_string": "undefined_name", "new_string": "os.name"}),
    ));
    assert!(text.contains("1 error fixed, 0 remaining"), "{text}");
    assert_eq!(diagnostics["servers"][0]["state"], "fresh");
    assert_eq!(diagnostics["servers"][0]["pid"], first_pid);
    let python = status(&room, "python");
    assert_eq!(python["running"].as_array().unwrap().len(), 1, "{python}");
    assert_eq!(python["running"][0]["pid"], first_pid);
    // The diagnostics tool sees the same.
    room.write("b.py", "x: int = 'no'\n");
    let run = room.run(&["--text", "diagnostics"], None);
    assert!(run.stdout.contains("b.py:1:10: error:"), "{}", run.stdout);
    assert!(!run.stdout.contains("a.py:"), "{}", run.stdout);
    let pid = first_pid.as_i64().unwrap();
    stop(&room);
    assert!(
        gone_within(pid, Duration::from_secs(3)),
        "the server outlived lsp stop"
    );
}

#[test]
fn typescript_errors_arrive_and_a_fix_leaves_none() {
    let Some(room) = room_with_servers() else {
        return;
    };
    room.write(
        "tsconfig.json",
        "{\"compilerOptions\": {\"strict\": true}}\n",
    );
    let (text, diagnostics) = output(&room.call(
        "write",
        json!({"file_path": "a.ts", "content": "export const x: number = \"s\";\n"}),
    ));
    assert!(
        text.contains("a.ts:1:14: error: Type 'string' is not assignable to type 'number'. [2322]"),
        "{text}"
    );
    assert_eq!(diagnostics["introduced"], 1);
    let (text, _) = output(&room.call(
        "edit",
        json!({"file_path": "a.ts", "old_string": "\"s\"", "new_string": "1"}),
    ));
    assert!(text.contains("1 error fixed, 0 remaining"), "{text}");
    // An apply_patch that breaks another file is told so where the server reports it.
    room.call(
        "write",
        json!({"file_path": "b.ts", "content": "import { x } from \"./a\";\nexport const y: number = x;\n"}),
    );
    let patch = "*** Begin Patch\n*** Update File: a.ts\n@@\n-export const x: number = 1;\n+export const x: string = \"1\";\n*** End Patch\n";
    let (text, diagnostics) = output(&room.call("apply_patch", json!({"patch": patch})));
    assert!(
        text.contains("In other open files, after this change: 1 new error\nb.ts:2:14: error:"),
        "{text}"
    );
    assert_eq!(diagnostics["others"][0]["path"], "b.ts");
    assert_eq!(diagnostics["others_introduced"], 1);
    // Taking it back fixes it there, and says so.
    let undo = "*** Begin Patch\n*** Update File: a.ts\n@@\n-export const x: string = \"1\";\n+export const x: number = 1;\n*** End Patch\n";
    let (text, diagnostics) = output(&room.call("apply_patch", json!({"patch": undo})));
    assert!(
        text.contains("In other open files, after this change: 1 error fixed"),
        "{text}"
    );
    assert_eq!(diagnostics["others_fixed"], 1);
    stop(&room);
}

#[test]
fn each_edit_gets_the_problems_of_its_own_text_never_the_replaced_ones() {
    let Some(room) = room_with_servers() else {
        return;
    };
    room.write("pyrightconfig.json", "{}\n");
    room.call(
        "write",
        json!({"file_path": "m.py", "content": "value = 1\n"}),
    );
    // Each round a new undefined name, every other round none: each answer must name its
    // own text's problem and no earlier one.
    for round in 0..8 {
        let content = if round % 2 == 0 {
            format!("value = 1\nprint(missing_{round})\n")
        } else {
            "value = 1\nprint(value)\n".to_string()
        };
        let (text, diagnostics) =
            output(&room.call("write", json!({"file_path": "m.py", "content": content})));
        if round % 2 == 0 {
            assert!(
                text.contains(&format!(
                    "m.py:2:7: error: \"missing_{round}\" is not defined"
                )),
                "{text}"
            );
            assert_eq!(diagnostics["remaining"], 1, "{diagnostics}");
            assert_eq!(diagnostics["introduced"], 1, "{diagnostics}");
        } else {
            assert!(text.contains("1 error fixed, 0 remaining"), "{text}");
        }
        for earlier in (0..round).filter(|k| k % 2 == 0) {
            assert!(
                !text.contains(&format!("missing_{earlier}\"")),
                "round {round}: {text}"
            );
        }
    }
    stop(&room);
}

#[test]
fn a_call_under_other_sandbox_settings_never_uses_the_same_server() {
    let room = room_with_fake("push", json!({}));
    room.write(
        "closed.json",
        r#"{"rules": [{"permission": "*", "pattern": "*", "action": "allow"}], "sandbox": {"network": false}}"#,
    );
    let (_, open) = output(&room.call("write", json!({"file_path": "k.py", "content": "BAD\n"})));
    let closed_run = room.run(
        &["--policy", "closed.json", "write"],
        Some(&json!({"file_path": "k.py", "content": "BAD 2\n"}).to_string()),
    );
    let (text, closed) = output(&closed_run);
    assert!(text.contains("bad here: BAD 2"), "{text}");
    assert_ne!(open["servers"][0]["pid"], closed["servers"][0]["pid"]);
    let sockets = std::fs::read_dir(room.dir.join(".tinytool/lsp"))
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .is_ok_and(|e| e.path().extension().is_some_and(|x| x == "sock"))
        })
        .count();
    assert_eq!(sockets, 2);
    stop(&room);
}

#[test]
fn a_stale_publish_of_the_replaced_text_is_never_reported() {
    let room = room_with_fake("stale", json!({}));
    room.call(
        "write",
        json!({"file_path": "s.py", "content": "ok = 1\nBAD old line\n"}),
    );
    let (text, diagnostics) = output(&room.call(
        "edit",
        json!({"file_path": "s.py", "old_string": "BAD old line", "new_string": "BAD new line"}),
    ));
    assert!(text.contains("bad here: BAD new line"), "{text}");
    assert!(!text.contains("old line"), "{text}");
    assert_eq!(diagnostics["remaining"], 1);
    stop(&room);
}

#[test]
fn a_server_killed_mid_call_costs_one_result_and_the_next_call_restarts_it() {
    let room = room_with_fake("hang", json!({"wait_ms": 8000}));
    room.call(
        "write",
        json!({"file_path": "h.py", "content": "BAD one\n"}),
    );
    let pid = status(&room, "python")["running"][0]["pid"]
        .as_i64()
        .unwrap();
    let mut call = room.command(&["edit"]);
    call.stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped());
    let mut child = call.spawn().unwrap();
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().unwrap();
        stdin
            .write_all(
                json!({"file_path": "h.py", "old_string": "one", "new_string": "two"})
                    .to_string()
                    .as_bytes(),
            )
            .unwrap();
    }
    std::thread::sleep(Duration::from_millis(800));
    // SAFETY: kill of a process this test found.
    unsafe {
        libc::kill(pid as i32, libc::SIGKILL);
    }
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let value: Value = serde_json::from_slice(&out.stdout).unwrap();
    let text = value["output"].as_str().unwrap();
    assert!(text.starts_with("Replaced in h.py"), "{text}");
    assert!(text.contains("exited (signal 9)"), "{text}");
    assert_eq!(
        value["metadata"]["diagnostics"]["servers"][0]["state"],
        "down"
    );
    // The next call starts it again (a hanging server once more, so its first answer is
    // the open's publish).
    let (text, diagnostics) = output(&room.call(
        "write",
        json!({"file_path": "h2.py", "content": "BAD three\n"}),
    ));
    assert!(text.contains("bad here: BAD three"), "{text}");
    assert_ne!(diagnostics["servers"][0]["pid"].as_i64(), Some(pid));
    stop(&room);
}

#[test]
fn a_server_still_busy_at_the_bound_is_said_so_and_the_call_returns() {
    let room = room_with_fake("hang", json!({"wait_ms": 300}));
    room.call("write", json!({"file_path": "h.py", "content": "x = 1\n"}));
    let (text, diagnostics) = output(&room.call(
        "edit",
        json!({"file_path": "h.py", "old_string": "x = 1", "new_string": "x = 2"}),
    ));
    assert!(text.contains("is still checking after"), "{text}");
    assert!(text.contains("`tinytool diagnostics`"), "{text}");
    assert_eq!(diagnostics["servers"][0]["state"], "busy");
    stop(&room);
}

#[test]
fn no_server_outlives_its_idle_time() {
    let room = room_with_fake("push", json!({"idle_ms": 1000}));
    let (text, diagnostics) =
        output(&room.call("write", json!({"file_path": "i.py", "content": "BAD\n"})));
    assert!(text.contains("bad here: BAD"), "{text}");
    let pid = diagnostics["servers"][0]["pid"].as_i64().unwrap();
    let broker = status(&room, "python")["running"][0]["broker_pid"]
        .as_i64()
        .unwrap();
    assert!(
        gone_within(pid, Duration::from_secs(8)),
        "the server outlived its idle time"
    );
    assert!(
        gone_within(broker, Duration::from_secs(3)),
        "the broker outlived its server"
    );
}

#[test]
fn a_server_named_by_the_project_runs_only_when_the_user_policy_allows_it() {
    let room = Room::new();
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/lsp/fake_server.py"
    );
    room.write(
        ".tinytool/config.json",
        json!({"lsp": {"servers": {"python": {"command": ["python3", script, "push"]}}}})
            .to_string(),
    );
    let (text, diagnostics) =
        output(&room.call("write", json!({"file_path": "p.py", "content": "BAD\n"})));
    assert!(text.contains("Diagnostics not run (python3)"), "{text}");
    assert!(!text.contains("bad here"), "{text}");
    assert_eq!(diagnostics["servers"][0]["state"], "refused");
    let python = status(&room, "python");
    assert!(
        python["unavailable"]
            .as_str()
            .unwrap()
            .starts_with("refused by policy"),
        "{python}"
    );
    // A project cannot turn diagnostics on where the user turned them off, either.
    let off = Room::new();
    off.write_user(
        "config.json",
        json!({"lsp": {"enabled": false}}).to_string(),
    );
    off.write(
        ".tinytool/config.json",
        json!({"lsp": {"enabled": true}}).to_string(),
    );
    let run = off.call("write", json!({"file_path": "q.py", "content": "x = 1\n"}));
    assert!(
        run.json()["metadata"].get("diagnostics").is_none(),
        "{}",
        run.stdout
    );
}

#[test]
fn a_server_that_breaks_the_protocol_is_stopped_and_said_so() {
    let room = room_with_fake("huge", json!({"cold_wait_ms": 5000}));
    let (text, diagnostics) =
        output(&room.call("write", json!({"file_path": "f.py", "content": "BAD\n"})));
    assert!(text.contains("not the protocol"), "{text}");
    assert!(text.contains("4000000000"), "{text}");
    assert_eq!(diagnostics["servers"][0]["state"], "down");
    stop(&room);
}

#[test]
fn fifty_thousand_problems_are_cut_to_what_a_model_can_use() {
    let room = room_with_fake("many", json!({"max_lines": 5}));
    let run = room.call("write", json!({"file_path": "m.py", "content": "x = 1\n"}));
    let (text, diagnostics) = output(&run);
    assert_eq!(
        text.lines().filter(|l| l.contains("problem ")).count(),
        5,
        "{text}"
    );
    assert!(text.contains("… 495 more"), "{text}");
    assert_eq!(
        diagnostics["files"][0]["items"].as_array().unwrap().len(),
        100
    );
    assert_eq!(diagnostics["files"][0]["items_not_listed"], 400);
    assert!(run.stdout.len() < 64 * 1024, "{} bytes", run.stdout.len());
    stop(&room);
}

#[test]
fn a_flood_of_log_messages_does_not_hide_the_diagnostics() {
    let room = room_with_fake("flood", json!({}));
    let (text, _) = output(&room.call("write", json!({"file_path": "l.py", "content": "BAD\n"})));
    assert!(text.contains("bad here: BAD"), "{text}");
    stop(&room);
}

#[test]
fn files_of_other_languages_or_without_a_server_cost_nothing() {
    let mut room = Room::new();
    room.set_env("PATH", "/usr/bin:/bin");
    let run = room.call(
        "write",
        json!({"file_path": "notes.txt", "content": "hi\n"}),
    );
    assert!(run.json()["metadata"].get("diagnostics").is_none());
    // No server for the language: the edit's result is as it always was.
    let run = room.call(
        "write",
        json!({"file_path": "a.go", "content": "package a\n"}),
    );
    assert!(!run.stdout.contains("Diagnostics"), "{}", run.stdout);
    assert!(run.json()["metadata"].get("diagnostics").is_none());
    // The diagnostics tool and `lsp status` say why and what to install.
    let run = room.run(&["--text", "diagnostics"], None);
    assert!(run.stdout.contains("No go server:"), "{}", run.stdout);
    assert!(
        run.stdout.contains("lsp.servers.go.command"),
        "{}",
        run.stdout
    );
    assert!(
        status(&room, "go")["unavailable"]
            .as_str()
            .unwrap()
            .contains("gopls")
    );
}

#[test]
fn a_bash_call_that_changed_files_gets_their_diagnostics_when_asked_for() {
    let room = room_with_fake("push", json!({}));
    let run = room.call(
        "bash",
        json!({"command": "printf 'ok = 1\\nBAD\\n' > made.py"}),
    );
    assert!(
        run.json()["metadata"].get("diagnostics").is_none(),
        "{}",
        run.stdout
    );
    let room = room_with_fake("push", json!({"after_bash": true}));
    room.write("old.py", "BAD kept\n");
    room.call("bash", json!({"command": "true"}));
    let (text, diagnostics) = output(&room.call(
        "bash",
        json!({"command": "printf 'BAD new\\n' > made.py; printf 'BAD kept\\nBAD more\\n' > old.py"}),
    ));
    assert!(
        text.contains("made.py:1:1: error: bad here: BAD new [bad]"),
        "{text}"
    );
    assert!(
        text.contains("old.py:2:1: error: bad here: BAD more [bad]"),
        "{text}"
    );
    assert!(
        text.contains("old.py:1:1: error: bad here: BAD kept [bad] (already there)"),
        "{text}"
    );
    assert_eq!(diagnostics["introduced"], 2, "{diagnostics}");
    // A command that changes nothing adds nothing.
    let run = room.call("bash", json!({"command": "echo hi"}));
    assert!(
        run.json()["metadata"].get("diagnostics").is_none(),
        "{}",
        run.stdout
    );
    stop(&room);
}

/// rust-analyzer's own diagnostics, where rustup provides it (`.ci/run` asks rustup for
/// it; a machine whose rustup cannot get it has no rust-analyzer to check, and says so).
#[test]
fn rust_analyzer_reports_a_type_mismatch_once_it_loaded_the_workspace() {
    let home = std::env::var("HOME").unwrap_or_default();
    let rustup_home = std::env::var("RUSTUP_HOME").unwrap_or_else(|_| format!("{home}/.rustup"));
    let cargo_home = std::env::var("CARGO_HOME").unwrap_or_else(|_| format!("{home}/.cargo"));
    let works = Command::new("rust-analyzer")
        .arg("--version")
        .env("RUSTUP_HOME", &rustup_home)
        .env("CARGO_HOME", &cargo_home)
        .output()
        .is_ok_and(|out| out.status.success());
    if !works {
        eprintln!(
            "skipped: rustup provides no rust-analyzer here (rustup component add rust-analyzer)"
        );
        return;
    }
    let mut room = Room::new();
    room.set_env("RUSTUP_HOME", &rustup_home);
    room.set_env("CARGO_HOME", &cargo_home);
    room.write(
        "Cargo.toml",
        "[package]\nname = \"probe\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    );
    room.write("src/lib.rs", "pub fn f() -> u8 { 1 }\n");
    let (text, diagnostics) = output(&room.call(
        "edit",
        json!({"file_path": "src/lib.rs", "old_string": "{ 1 }", "new_string": "{ \"s\" }"}),
    ));
    // Answered only once the workspace is loaded: never an empty answer given while loading.
    assert!(text.contains("src/lib.rs:1:20: error:"), "{text}");
    assert!(text.contains("[E0308]"), "{text}");
    assert_eq!(diagnostics["servers"][0]["server"], "rust-analyzer");
    let (text, _) = output(&room.call(
        "edit",
        json!({"file_path": "src/lib.rs", "old_string": "{ \"s\" }", "new_string": "{ 2 }"}),
    ));
    assert!(text.contains("1 error fixed, 0 remaining"), "{text}");
    stop(&room);
}

#[test]
fn a_server_the_user_policy_does_not_allow_never_starts_and_is_never_asked_for() {
    let room = room_with_fake("push", json!({}));
    room.write_user(
        "policy.json",
        json!({"rules": [{"permission": "shell", "pattern": "python3 *", "action": "deny"}]})
            .to_string(),
    );
    let (text, diagnostics) =
        output(&room.call("write", json!({"file_path": "d.py", "content": "BAD\n"})));
    assert!(
        text.contains("Diagnostics not run (python3): the policy does not allow"),
        "{text}"
    );
    assert!(text.contains("\"action\": \"allow\""), "{text}");
    assert_eq!(diagnostics["servers"][0]["state"], "refused");
    assert!(
        !room.dir.join(".tinytool/lsp").exists()
            || std::fs::read_dir(room.dir.join(".tinytool/lsp"))
                .unwrap()
                .next()
                .is_none()
    );
    let python = status(&room, "python");
    assert!(
        python["unavailable"]
            .as_str()
            .unwrap()
            .starts_with("refused by policy"),
        "{python}"
    );
    assert!(python["running"].as_array().unwrap().is_empty());
}

/// clangd's diagnostics, pushed with the document's version, where it is installed
/// (`.ci/run` installs Debian's clangd).
#[test]
fn clangd_reports_an_undeclared_identifier_and_its_fix() {
    if !Command::new("clangd")
        .arg("--version")
        .output()
        .is_ok_and(|out| out.status.success())
    {
        eprintln!("skipped: clangd is not installed here (apt-get install clangd)");
        return;
    }
    let room = Room::new();
    let (text, diagnostics) = output(&room.call(
        "write",
        json!({"file_path": "a.c", "content": "int main(void) {\n  int x = undefined_name;\n  return x;\n}\n"}),
    ));
    assert!(
        text.contains("a.c:2:11: error: Use of undeclared identifier 'undefined_name'"),
        "{text}"
    );
    assert_eq!(diagnostics["servers"][0]["server"], "clangd");
    let (text, _) = output(&room.call(
        "edit",
        json!({"file_path": "a.c", "old_string": "undefined_name", "new_string": "1"}),
    ));
    assert!(text.contains("1 error fixed, 0 remaining"), "{text}");
    stop(&room);
}
