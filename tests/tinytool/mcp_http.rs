//! `tinytool mcp --listen`: Streamable HTTP on 127.0.0.1 with an ephemeral port, driven
//! with raw HTTP/1.1 requests.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Stdio};
use std::time::Duration;

use serde_json::{Value, json};

use crate::util::Room;

/// A running `tinytool mcp --listen 127.0.0.1:0`.
pub struct Server {
    child: Child,
    /// The port it listens on.
    pub port: u16,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Server {
    /// Starts the server in `room` with `extra` options after `mcp`.
    pub fn start(room: &Room, extra: &[&str]) -> Server {
        let mut args = vec!["mcp", "--listen", "127.0.0.1:0"];
        args.extend_from_slice(extra);
        let mut child = room
            .command(&args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut err = BufReader::new(child.stderr.take().unwrap());
        let mut line = String::new();
        err.read_line(&mut line).unwrap();
        let port = line
            .trim()
            .rsplit(':')
            .next()
            .and_then(|tail| tail.trim_end_matches("/mcp").parse().ok())
            .unwrap_or_else(|| panic!("no port in {line:?}"));
        // Keep draining stderr so the server never blocks on it.
        std::thread::spawn(move || {
            let mut sink = Vec::new();
            let _ = err.read_to_end(&mut sink);
        });
        Server { child, port }
    }

    /// Sends one request; returns the status, the headers (names lowercased) and the body
    /// (chunked bodies decoded).
    pub fn send(
        &self,
        method: &str,
        headers: &[(&str, &str)],
        body: &str,
    ) -> (u16, Vec<(String, String)>, String) {
        let mut stream = TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(60)))
            .unwrap();
        let mut head = format!(
            "{method} /mcp HTTP/1.1\r\nConnection: close\r\nContent-Length: {}\r\n",
            body.len()
        );
        if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
            head.push_str(&format!("Host: 127.0.0.1:{}\r\n", self.port));
        }
        for (k, v) in headers {
            head.push_str(&format!("{k}: {v}\r\n"));
        }
        head.push_str("\r\n");
        stream.write_all(head.as_bytes()).unwrap();
        stream.write_all(body.as_bytes()).unwrap();
        let mut reader = BufReader::new(stream);
        let mut status_line = String::new();
        reader.read_line(&mut status_line).unwrap();
        let status: u16 = status_line.split(' ').nth(1).unwrap().parse().unwrap();
        let mut headers = Vec::new();
        loop {
            let mut line = String::new();
            reader.read_line(&mut line).unwrap();
            let line = line.trim_end();
            if line.is_empty() {
                break;
            }
            let (k, v) = line.split_once(':').unwrap();
            headers.push((k.trim().to_ascii_lowercase(), v.trim().to_string()));
        }
        let chunked = headers
            .iter()
            .any(|(k, v)| k == "transfer-encoding" && v.contains("chunked"));
        let mut body = Vec::new();
        if chunked {
            loop {
                let mut size = String::new();
                reader.read_line(&mut size).unwrap();
                let size = usize::from_str_radix(size.trim(), 16).unwrap();
                if size == 0 {
                    break;
                }
                let mut chunk = vec![0; size + 2];
                reader.read_exact(&mut chunk).unwrap();
                body.extend_from_slice(&chunk[..size]);
            }
        } else {
            reader.read_to_end(&mut body).unwrap();
        }
        (status, headers, String::from_utf8(body).unwrap())
    }

    /// POSTs a JSON-RPC message with the usual headers plus `extra`.
    pub fn post(
        &self,
        extra: &[(&str, &str)],
        message: &Value,
    ) -> (u16, Vec<(String, String)>, String) {
        let mut headers = vec![
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
        ];
        headers.extend_from_slice(extra);
        self.send("POST", &headers, &message.to_string())
    }

    /// Opens an `initialize`-era session; returns its id.
    pub fn initialize(&self) -> String {
        let (status, headers, body) = self.post(
            &[],
            &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": {"name": "test", "version": "1"}}}),
        );
        assert_eq!(status, 200, "{body}");
        let answer: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(answer["result"]["protocolVersion"], "2025-11-25");
        header(&headers, "mcp-session-id").unwrap().to_string()
    }
}

/// A header's value.
pub fn header<'h>(headers: &'h [(String, String)], name: &str) -> Option<&'h str> {
    headers
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

/// The JSON messages of an event stream.
pub fn events(body: &str) -> Vec<Value> {
    body.lines()
        .filter_map(|line| line.strip_prefix("data: "))
        .map(|data| serde_json::from_str(data).unwrap())
        .collect()
}

/// A 2026-07-28 request and its matching headers.
fn modern(id: i64, method: &str, mut params: Value) -> Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "1"},
    });
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

#[test]
fn an_initialize_era_session_lists_calls_streams_and_ends_with_delete() {
    let room = Room::new();
    room.write("a.txt", "alpha\nbeta\n");
    let server = Server::start(&room, &[]);
    let session = server.initialize();
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    // Without its session a later request is refused.
    let (status, _, _) = server.post(&[], &list);
    assert_eq!(status, 400);
    let (status, _, _) = server.post(&[("Mcp-Session-Id", "nope")], &list);
    assert_eq!(status, 404);
    let (status, headers, body) = server.post(&[("Mcp-Session-Id", &session)], &list);
    assert_eq!(status, 200);
    assert!(
        header(&headers, "content-type")
            .unwrap()
            .starts_with("application/json")
    );
    let tools: Value = serde_json::from_str(&body).unwrap();
    let names: Vec<&str> = tools["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"read") && !names.contains(&"exit"));
    // A notification is accepted without a body.
    let (status, _, body) = server.post(
        &[("Mcp-Session-Id", &session)],
        &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    );
    assert_eq!((status, body.as_str()), (202, ""));
    // A call answers on an event stream: the result is the last event.
    let (status, headers, body) = server.post(
        &[("Mcp-Session-Id", &session)],
        &json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
            "name": "read", "arguments": {"file_path": "a.txt"}}}),
    );
    assert_eq!(status, 200);
    assert_eq!(header(&headers, "content-type"), Some("text/event-stream"));
    let messages = events(&body);
    let last = messages.last().unwrap();
    assert_eq!(last["id"], 3);
    assert_eq!(
        last["result"]["structuredContent"]["output"],
        "1\talpha\n2\tbeta\n"
    );
    // Without event-stream in Accept the call is answered as JSON.
    let (status, headers, body) = server.send(
        "POST",
        &[
            ("Content-Type", "application/json"),
            ("Accept", "application/json"),
            ("Mcp-Session-Id", &session),
        ],
        &json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {
            "name": "bash", "arguments": {"command": "echo hi"}}})
        .to_string(),
    );
    assert_eq!(status, 200);
    assert!(
        header(&headers, "content-type")
            .unwrap()
            .starts_with("application/json")
    );
    let answer: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(answer["result"]["content"][0]["text"], "hi\n");
    // DELETE ends the session.
    let (status, _, _) = server.send("DELETE", &[("Mcp-Session-Id", &session)], "");
    assert_eq!(status, 204);
    let (status, _, _) = server.post(&[("Mcp-Session-Id", &session)], &list);
    assert_eq!(status, 404);
    let (status, _, _) = server.send("GET", &[], "");
    assert_eq!(status, 405);
}

#[test]
fn stateless_requests_need_matching_headers_and_carry_result_types() {
    let room = Room::new();
    let server = Server::start(&room, &[]);
    let headers = [
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "server/discover"),
    ];
    let (status, response_headers, body) =
        server.post(&headers, &modern(1, "server/discover", json!({})));
    assert_eq!(status, 200, "{body}");
    assert!(header(&response_headers, "mcp-session-id").is_none());
    let discover: Value = serde_json::from_str(&body).unwrap();
    let result = &discover["result"];
    assert!(
        result["supportedVersions"]
            .as_array()
            .unwrap()
            .contains(&json!("2026-07-28"))
    );
    assert_eq!(result["resultType"], "complete");
    assert!(result["ttlMs"].is_u64() && result["cacheScope"].is_string());

    let list_headers = [
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "tools/list"),
    ];
    let (status, _, first) = server.post(&list_headers, &modern(2, "tools/list", json!({})));
    assert_eq!(status, 200);
    let (_, _, second) = server.post(&list_headers, &modern(3, "tools/list", json!({})));
    let first: Value = serde_json::from_str(&first).unwrap();
    let second: Value = serde_json::from_str(&second).unwrap();
    assert_eq!(first["result"]["resultType"], "complete");
    assert_eq!(first["result"]["cacheScope"], "private");
    // The same tools in the same order every time.
    assert_eq!(first["result"]["tools"], second["result"]["tools"]);

    // A call: the stream ends with a complete result.
    let (status, _, body) = server.post(
        &[
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "tools/call"),
            ("Mcp-Name", "bash"),
        ],
        &modern(
            4,
            "tools/call",
            json!({"name": "bash", "arguments": {"command": "echo ok"}}),
        ),
    );
    assert_eq!(status, 200);
    let last = events(&body).pop().unwrap();
    assert_eq!(last["result"]["resultType"], "complete");
    assert_eq!(last["result"]["structuredContent"]["output"], "ok\n");

    // Headers that disagree with the body are refused.
    let (status, _, body) = server.post(
        &[
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "tools/call"),
            ("Mcp-Name", "read"),
        ],
        &modern(
            5,
            "tools/call",
            json!({"name": "bash", "arguments": {"command": "echo no"}}),
        ),
    );
    assert_eq!(status, 400);
    assert!(body.contains("-32020"), "{body}");
    let (status, _, _) = server.post(&[], &modern(6, "tools/list", json!({})));
    assert_eq!(status, 400);
    // An unknown revision is refused with the supported ones.
    let mut message = modern(7, "tools/list", json!({}));
    message["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!("2099-01-01");
    let (status, _, body) = server.post(
        &[
            ("MCP-Protocol-Version", "2099-01-01"),
            ("Mcp-Method", "tools/list"),
        ],
        &message,
    );
    assert_eq!(status, 400);
    let error: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(error["error"]["code"], -32022);
    assert!(error["error"]["data"]["supported"].is_array());
    // An unknown method is 404 with -32601.
    let (status, _, body) = server.post(
        &[
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "ping"),
        ],
        &modern(8, "ping", json!({})),
    );
    assert_eq!(status, 404);
    assert!(body.contains("-32601"), "{body}");
}

#[test]
fn foreign_hosts_and_origins_are_refused_and_tokens_are_checked() {
    let room = Room::new();
    let server = Server::start(&room, &[]);
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    let (status, _, _) = server.post(&[("Origin", "http://evil.example.com")], &init);
    assert_eq!(status, 403);
    let (status, _, _) = server.post(&[("Host", "evil.example.com")], &init);
    assert_eq!(status, 403);
    // A second Host or Origin could differ from the one checked.
    let loopback = format!("127.0.0.1:{}", server.port);
    let (status, _, _) = server.post(&[("Host", &loopback), ("Host", "evil.example.com")], &init);
    assert_eq!(status, 400);
    let (status, _, _) = server.post(
        &[
            ("Origin", "http://127.0.0.1"),
            ("Origin", "http://evil.example.com"),
        ],
        &init,
    );
    assert_eq!(status, 400);
    let port = server.port.to_string();
    let origin = format!("http://localhost:{port}");
    let (status, _, _) = server.post(&[("Origin", &origin)], &init);
    assert_eq!(status, 200);
    // A body over the bound is refused from its declared length, before it is read.
    let mut stream = TcpStream::connect(("127.0.0.1", server.port)).unwrap();
    write!(
        stream,
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
         Accept: application/json\r\nContent-Length: {}\r\n\r\n{{",
        5 * 1024 * 1024
    )
    .unwrap();
    let mut first = [0u8; 12];
    stream.read_exact(&mut first).unwrap();
    assert_eq!(&first, b"HTTP/1.1 413");
    drop(server);

    std::fs::write(room.path("token"), "s3cret\n").unwrap();
    let token_file = room.path("token");
    let server = Server::start(&room, &["--token-file", token_file.to_str().unwrap()]);
    let (status, headers, _) = server.post(&[], &init);
    assert_eq!(status, 401);
    assert_eq!(
        header(&headers, "www-authenticate"),
        Some(r#"Bearer realm="tinytool""#)
    );
    let (status, _, _) = server.post(&[("Authorization", "Bearer wrong!")], &init);
    assert_eq!(status, 401);
    let (status, _, _) = server.post(&[("Authorization", "Bearer s3cret")], &init);
    assert_eq!(status, 200);
}

#[test]
fn a_non_loopback_address_without_a_token_refuses_to_start() {
    let room = Room::new();
    let out = room
        .command(&["mcp", "--listen", "0.0.0.0:0"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("--token-file"), "{stderr}");
    room.write("empty", "\n");
    let out = room
        .command(&["mcp", "--listen", "0.0.0.0:0", "--token-file", "empty"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn closing_a_call_stream_stops_the_call() {
    let room = Room::new();
    let server = Server::start(&room, &[]);
    let session = server.initialize();
    let body = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {
        "name": "bash", "arguments": {"command": "sleep 3; touch late.txt"}}})
    .to_string();
    let mut stream = TcpStream::connect(("127.0.0.1", server.port)).unwrap();
    write!(
        stream,
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMcp-Session-Id: {session}\r\n\
         Content-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut first = [0u8; 12];
    stream.read_exact(&mut first).unwrap();
    assert_eq!(&first, b"HTTP/1.1 200");
    drop(stream);
    std::thread::sleep(Duration::from_secs(5));
    assert!(!room.path("late.txt").exists(), "the call ran on");
}

#[test]
fn a_question_on_a_json_only_reply_is_not_asked_and_never_hangs() {
    let room = Room::new();
    let server = Server::start(&room, &[]);
    let (_, headers, _) = server.post(
        &[],
        &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {"elicitation": {}},
            "clientInfo": {"name": "test", "version": "1"}}}),
    );
    let session = header(&headers, "mcp-session-id").unwrap().to_string();
    // Without an event stream our elicitation request could not reach the client.
    let (status, _, body) = server.send(
        "POST",
        &[
            ("Content-Type", "application/json"),
            ("Accept", "application/json"),
            ("Mcp-Session-Id", &session),
        ],
        &json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "question", "arguments": {"question": "Colour?"}}})
        .to_string(),
    );
    assert_eq!(status, 200);
    let answer: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(answer["result"]["isError"], true, "{answer}");
}

#[test]
fn a_long_call_streams_progress_before_its_result() {
    let room = Room::new();
    let server = Server::start(&room, &[]);
    let session = server.initialize();
    let (status, _, body) = server.post(
        &[("Mcp-Session-Id", &session)],
        &json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {
            "name": "bash", "arguments": {"command": "sleep 6; echo late"},
            "_meta": {"progressToken": "p-5"}}}),
    );
    assert_eq!(status, 200);
    let messages = events(&body);
    let progress: Vec<&Value> = messages
        .iter()
        .filter(|m| m["method"] == "notifications/progress")
        .collect();
    assert!(!progress.is_empty(), "{body}");
    assert_eq!(progress[0]["params"]["progressToken"], "p-5");
    let last = messages.last().unwrap();
    assert_eq!(last["id"], 5);
    assert_eq!(last["result"]["content"][0]["text"], "late\n");
}

/// The status line of one `initialize` sent as uid 65534 (bash's `/dev/tcp`, no client
/// program needed), with `extra` header lines.
fn status_as_nobody(port: u16, extra: &str) -> String {
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    let script = format!(
        "exec 3<>/dev/tcp/127.0.0.1/{port}; printf 'POST /mcp HTTP/1.1\\r\\nHost: 127.0.0.1:{port}\\r\\nConnection: close\\r\\nContent-Type: application/json\\r\\nAccept: application/json\\r\\n{extra}Content-Length: {}\\r\\n\\r\\n%s' '{body}' >&3; head -n 1 <&3",
        body.len()
    );
    let out = std::process::Command::new("setpriv")
        .args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            "bash",
            "-c",
            &script,
        ])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

#[test]
fn on_loopback_without_a_token_only_the_servers_own_user_is_answered() {
    // SAFETY: getuid has no preconditions.
    if unsafe { libc::getuid() } != 0 {
        crate::util::skip("not root, so there is no other user to connect as");
        return;
    }
    let room = Room::new();
    let server = Server::start(&room, &[]);
    // The server's own user.
    server.initialize();
    // Another local user: refused before anything runs.
    let status = status_as_nobody(server.port, "");
    assert!(status.contains(" 403 "), "{status}");
    // With a token, whoever holds it is let in.
    let token = room.write("token", "s3cret\n");
    let server = Server::start(&room, &["--token-file", token.to_str().unwrap()]);
    let status = status_as_nobody(server.port, "Authorization: Bearer s3cret\\r\\n");
    assert!(status.contains(" 200 "), "{status}");
    let status = status_as_nobody(server.port, "");
    assert!(status.contains(" 401 "), "{status}");
}

#[test]
fn clients_stalled_in_the_middle_of_a_body_do_not_lock_the_others_out() {
    let room = Room::new();
    let server = Server::start(&room, &[]);
    // More stalled uploads than requests may be in flight at once.
    let stalled: Vec<TcpStream> = (0..70)
        .map(|_| {
            let mut stream = TcpStream::connect(("127.0.0.1", server.port)).unwrap();
            write!(
                stream,
                "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
                 Accept: application/json\r\nContent-Length: 1000000\r\n\r\n{{"
            )
            .unwrap();
            stream
        })
        .collect();
    // Every connection has a thread of its own: none waits behind the stalled ones.
    server.initialize();
    drop(stalled);
}
