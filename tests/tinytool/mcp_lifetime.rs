//! What becomes of a long MCP call over its lifetime: progress from the moment it is queued,
//! and when its client goes away (stdio input ends, an HTTP session is deleted) the call is
//! stopped and nothing of it is left, not even a zombie.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::mcp_http::{Server, events};
use crate::util::{Room, marked_sleep, processes_named, wait_gone};

/// A policy that lets every command run.
const ALLOW_SHELL: &str =
    r#"{"rules": [{"permission": "shell", "pattern": "*", "action": "allow"}]}"#;

/// `tinytool mcp` on stdio, initialized, with its output read line by line.
fn stdio_server(
    room: &Room,
) -> (
    Child,
    std::process::ChildStdin,
    BufReader<std::process::ChildStdout>,
) {
    room.write("p.json", ALLOW_SHELL);
    let mut child = room
        .command(&["--policy", "p.json", "mcp"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    let mut output = BufReader::new(child.stdout.take().unwrap());
    writeln!(
        input,
        "{}",
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "test", "version": "1"}}})
    )
    .unwrap();
    let mut line = String::new();
    output.read_line(&mut line).unwrap();
    assert!(line.contains("\"id\":1"), "{line}");
    (child, input, output)
}

/// Sends a bash call of `command` as request `id` (with a progress token when `token`).
fn call_bash(input: &mut impl Write, id: i64, command: &str, token: Option<&str>) {
    let mut params = json!({"name": "bash", "arguments": {"command": command}});
    if let Some(token) = token {
        params["_meta"] = json!({"progressToken": token});
    }
    writeln!(
        input,
        "{}",
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params})
    )
    .unwrap();
    input.flush().unwrap();
}

/// Waits (bounded) until a process named `name` runs; returns its `/proc/PID/stat` line.
fn wait_running(name: &str) -> String {
    let until = Instant::now() + Duration::from_secs(20);
    loop {
        if let Some(stat) = processes_named(name).into_iter().next() {
            return stat;
        }
        assert!(Instant::now() < until, "{name} never started");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The parent (field 4) of a `/proc/PID/stat` line.
fn parent(stat: &str) -> u32 {
    let (_, rest) = stat.rsplit_once(')').unwrap();
    rest.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// The zombie children of `pid`, as their `/proc/PID/stat` lines.
fn zombie_children(pid: u32) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        let Some((_, rest)) = stat.rsplit_once(')') else {
            continue;
        };
        let mut fields = rest.split_whitespace();
        let state = fields.next();
        let ppid = fields.next().and_then(|p| p.parse::<u32>().ok());
        if state == Some("Z") && ppid == Some(pid) {
            found.push(stat);
        }
    }
    found
}

/// Waits (bounded) for `child` to end; its exit code.
fn wait_exit(child: &mut Child, within: Duration) -> Option<i32> {
    let until = Instant::now() + within;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status.code();
        }
        if Instant::now() >= until {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the server did not end within {within:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn the_end_of_stdio_input_stops_a_long_call_and_the_server_ends() {
    let room = Room::new();
    let sleep = marked_sleep(&room);
    let (mut child, mut input, mut output) = stdio_server(&room);
    call_bash(&mut input, 2, "echo quick", None);
    call_bash(&mut input, 3, &format!("./{sleep} 60"), None);
    wait_running(&sleep);
    // The client ends the session by closing our input, and still reads.
    drop(input);
    let reader = std::thread::spawn(move || {
        let mut lines = Vec::new();
        let mut line = String::new();
        while output.read_line(&mut line).unwrap_or(0) > 0 {
            lines.push(serde_json::from_str::<Value>(&line).unwrap());
            line.clear();
        }
        lines
    });
    assert_eq!(wait_exit(&mut child, Duration::from_secs(30)), Some(0));
    let left = wait_gone(&sleep, Duration::from_secs(10));
    assert!(
        left.is_empty(),
        "the long call's command survived: {left:?}"
    );
    let answered: Vec<Value> = reader
        .join()
        .unwrap()
        .iter()
        .map(|m| m["id"].clone())
        .collect();
    // The quick call was answered; the stopped one gets no answer.
    assert_eq!(answered, [json!(2)]);
}

#[test]
fn deleting_an_http_session_stops_its_long_call_answers_it_and_leaves_no_zombie() {
    let room = Room::new();
    room.write("p.json", ALLOW_SHELL);
    let server = Server::start(&room, &["--policy", "p.json"]);
    // Over an event stream, then as a JSON-only call.
    for accept in ["application/json, text/event-stream", "application/json"] {
        let sleep = marked_sleep(&room);
        let session = server.initialize();
        std::thread::scope(|scope| {
            let call = scope.spawn(|| {
                let body = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call",
                    "params": {"name": "bash",
                        "arguments": {"command": format!("./{sleep} 60")}}});
                server.send(
                    "POST",
                    &[
                        ("Content-Type", "application/json"),
                        ("Accept", accept),
                        ("Mcp-Session-Id", &session),
                    ],
                    &body.to_string(),
                )
            });
            // The command's leader is the server's child.
            let server_pid = parent(&wait_running(&sleep));
            let (status, _, _) = server.send("DELETE", &[("Mcp-Session-Id", &session)], "");
            assert_eq!(status, 204);
            let left = wait_gone(&sleep, Duration::from_secs(10));
            assert!(
                left.is_empty(),
                "the deleted session's command survived: {left:?}"
            );
            // Its group's sentinel and leader are reaped, not left as zombies.
            let until = Instant::now() + Duration::from_secs(10);
            while !zombie_children(server_pid).is_empty() {
                assert!(
                    Instant::now() < until,
                    "zombies: {:?}",
                    zombie_children(server_pid)
                );
                std::thread::sleep(Duration::from_millis(20));
            }
            // The stopped call is answered with an error that says why.
            let (status, _, body) = call.join().unwrap();
            let answer = if accept.contains("event-stream") {
                assert_eq!(status, 200);
                events(&body).pop().unwrap()
            } else {
                assert_eq!(status, 404, "{body}");
                serde_json::from_str(&body).unwrap()
            };
            assert_eq!(answer["id"], 9, "{body}");
            assert!(
                answer["error"]["message"]
                    .as_str()
                    .is_some_and(|m| m.starts_with("Session ended")),
                "{body}"
            );
        });
    }
    // The server goes on serving.
    let other = server.initialize();
    assert!(!other.is_empty());
}

#[test]
fn a_call_waiting_for_a_worker_reports_progress_while_queued() {
    let room = Room::new();
    let sleep = marked_sleep(&room);
    let (mut child, mut input, mut output) = stdio_server(&room);
    // Every worker of the pool busy with a long sleep.
    for n in 0..16 {
        call_bash(&mut input, 100 + n, &format!("./{sleep} 60"), None);
    }
    let until = Instant::now() + Duration::from_secs(30);
    while processes_named(&sleep).len() < 16 {
        assert!(Instant::now() < until, "the pool's sleeps never all ran");
        std::thread::sleep(Duration::from_millis(20));
    }
    call_bash(&mut input, 200, "echo done", Some("queued-tok"));
    let mut line = String::new();
    output.read_line(&mut line).unwrap();
    let progress: Value = serde_json::from_str(&line).unwrap();
    assert_eq!(progress["method"], "notifications/progress", "{progress}");
    assert_eq!(progress["params"]["progressToken"], "queued-tok");
    assert!(
        progress["params"]["message"]
            .as_str()
            .unwrap()
            .starts_with("queued for"),
        "{progress}"
    );
    for n in 0..16 {
        writeln!(
            input,
            "{}",
            json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                "params": {"requestId": 100 + n}})
        )
        .unwrap();
    }
    input.flush().unwrap();
    // Once a worker is free the call runs and is answered.
    loop {
        line.clear();
        assert!(output.read_line(&mut line).unwrap() > 0, "no answer");
        let message: Value = serde_json::from_str(&line).unwrap();
        if message["id"] == 200 {
            assert_eq!(message["result"]["content"][0]["text"], "done\n");
            break;
        }
    }
    drop(input);
    assert_eq!(wait_exit(&mut child, Duration::from_secs(30)), Some(0));
    assert!(wait_gone(&sleep, Duration::from_secs(10)).is_empty());
}

#[test]
fn a_stdio_client_that_sends_more_calls_than_the_queue_holds_is_held_back_not_refused() {
    let room = Room::new();
    room.write("small.txt", "one line\n");
    let (mut child, mut input, mut output) = stdio_server(&room);
    // Every worker busy for a second, then more quick calls than may wait (256): the
    // server stops reading until there is room, and the pipe holds the client back.
    let busy = 16;
    let quick = 400;
    for id in 0..busy {
        call_bash(&mut input, 100 + id, "sleep 1; echo slept", None);
    }
    let writer = std::thread::spawn(move || {
        for id in 0..quick {
            writeln!(
                input,
                "{}",
                json!({"jsonrpc": "2.0", "id": 1000 + id, "method": "tools/call",
                    "params": {"name": "read", "arguments": {"file_path": "small.txt"}}})
            )
            .unwrap();
        }
        input.flush().unwrap();
        input
    });
    let mut answered = 0;
    while answered < busy + quick {
        let mut line = String::new();
        assert!(
            output.read_line(&mut line).unwrap() > 0,
            "the server ended early"
        );
        let answer: Value = serde_json::from_str(&line).unwrap();
        assert!(answer.get("error").is_none(), "refused: {answer}");
        assert_eq!(answer["result"]["isError"], false, "{answer}");
        answered += 1;
    }
    drop(writer.join().unwrap());
    assert!(child.wait().unwrap().success());
}
