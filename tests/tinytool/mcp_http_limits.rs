//! `tinytool mcp --listen` under load and at its edges: parallel calls wait in the fair
//! queue and are all answered, a full queue answers with a JSON-RPC error, a client that
//! disconnects stops its call, stalled and hostile connections hold up nobody, the
//! connection limits per client address, bearer tokens in any case, and malformed HTTP.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Ipv4Addr, TcpStream};
use std::os::fd::FromRawFd;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::mcp_http::{Server, events, header};
use crate::util::Room;

/// A `tools/call` of bash running `command`.
fn bash(id: usize, command: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
        "name": "bash", "arguments": {"command": command}}})
}

/// Sends `calls` calls at once, spread over `sessions`, each from a thread of its own,
/// and checks that every one is answered with its own output.
fn parallel_calls(server: &Server, sessions: &[String], calls: usize) {
    std::thread::scope(|scope| {
        let waiting: Vec<_> = (0..calls)
            .map(|n| {
                let session = &sessions[n % sessions.len()];
                scope.spawn(move || {
                    let call = bash(n + 10, &format!("sleep 0.1; echo call-{n}"));
                    (n, server.post(&[("Mcp-Session-Id", session)], &call))
                })
            })
            .collect();
        for handle in waiting {
            let (n, (status, _, body)) = handle.join().unwrap();
            assert_eq!(status, 200, "call {n}: {body}");
            let last = events(&body).pop().unwrap_or(Value::Null);
            assert_eq!(last["id"], n + 10, "call {n}: {body}");
            assert_eq!(
                last["result"]["structuredContent"]["output"],
                format!("call-{n}\n"),
                "call {n}: {body}"
            );
        }
    });
}

#[test]
fn two_hundred_parallel_calls_on_one_session_are_all_answered() {
    let room = Room::new();
    let server = Server::start(&room, &[]);
    let session = server.initialize();
    parallel_calls(&server, &[session], 200);
}

#[test]
fn two_hundred_parallel_calls_over_twenty_sessions_are_all_answered() {
    let room = Room::new();
    let server = Server::start(&room, &[]);
    let sessions: Vec<String> = (0..20).map(|_| server.initialize()).collect();
    parallel_calls(&server, &sessions, 200);
}

/// Queues a call as a 2025-11-25 task; returns the task's id.
fn task(server: &Server, session: &str, id: usize, command: &str) -> String {
    let mut call = bash(id, command);
    call["params"]["task"] = json!({});
    let (status, _, body) = server.send(
        "POST",
        &[
            ("Content-Type", "application/json"),
            ("Accept", "application/json"),
            ("Mcp-Session-Id", session),
        ],
        &call.to_string(),
    );
    assert_eq!(status, 200, "{body}");
    let answer: Value = serde_json::from_str(&body).unwrap();
    answer["result"]["task"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("no task in {answer}"))
        .to_string()
}

fn task_status(server: &Server, session: &str, task: &str) -> Value {
    let (_, _, body) = server.send(
        "POST",
        &[
            ("Content-Type", "application/json"),
            ("Accept", "application/json"),
            ("Mcp-Session-Id", session),
        ],
        &json!({"jsonrpc": "2.0", "id": 1, "method": "tasks/get", "params": {"taskId": task}})
            .to_string(),
    );
    serde_json::from_str::<Value>(&body).unwrap()["result"].clone()
}

#[test]
fn a_full_queue_answers_with_a_json_rpc_error_and_other_sessions_still_get_in() {
    let room = Room::new();
    let server = Server::start(&room, &[]);
    let greedy = server.initialize();
    // 16 calls run and 256 wait: the session's lane of the queue is full.
    let tasks: Vec<String> = (0..16 + 256)
        .map(|n| task(&server, &greedy, n + 100, "sleep 60"))
        .collect();
    for id in &tasks[..3] {
        assert_eq!(task_status(&server, &greedy, id)["status"], "working");
    }
    // One more call of that session: not an HTTP error, a JSON-RPC one naming the limit.
    let (status, _, body) = server.send(
        "POST",
        &[
            ("Content-Type", "application/json"),
            ("Accept", "application/json"),
            ("Mcp-Session-Id", &greedy),
        ],
        &bash(7, "echo never").to_string(),
    );
    assert_eq!(status, 200, "{body}");
    let answer: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(answer["id"], 7);
    assert_eq!(answer["error"]["code"], -32000, "{answer}");
    let message = answer["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("256") && message.contains("again"),
        "{message}"
    );
    // The same over an event stream.
    let (status, _, body) = server.post(&[("Mcp-Session-Id", &greedy)], &bash(8, "echo never"));
    assert_eq!(status, 200);
    assert_eq!(events(&body).pop().unwrap()["error"]["code"], -32000);
    // A task past the limit fails at once, saying why.
    let refused = task(&server, &greedy, 9, "echo never");
    let got = task_status(&server, &greedy, &refused);
    assert_eq!(got["status"], "failed", "{got}");
    assert!(
        got["statusMessage"]
            .as_str()
            .is_some_and(|m| m.contains("busy")),
        "{got}"
    );
    // Another session has a lane of its own.
    let other = server.initialize();
    let waiting = task(&server, &other, 1, "echo fine");
    assert_eq!(task_status(&server, &other, &waiting)["status"], "working");
    // The session ends: its calls are dropped or stopped, and the other one runs.
    let (status, _, _) = server.send("DELETE", &[("Mcp-Session-Id", &greedy)], "");
    assert_eq!(status, 204);
    let deadline = Instant::now() + Duration::from_secs(60);
    while task_status(&server, &other, &waiting)["status"] == "working" {
        assert!(
            Instant::now() < deadline,
            "the other session's call never ran"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(
        task_status(&server, &other, &waiting)["status"],
        "completed"
    );
}

#[test]
fn a_waiting_call_hears_how_many_calls_start_before_it_and_a_busy_session_does_not_starve_it() {
    let room = Room::new();
    let server = Server::start(&room, &[]);
    let busy = server.initialize();
    // Every worker busy for a while, and 40 more calls of that session waiting.
    let tasks: Vec<String> = (0..16 + 40)
        .map(|n| task(&server, &busy, n + 100, "sleep 8"))
        .collect();
    let other = server.initialize();
    let mut call = bash(5, "echo mine");
    call["params"]["_meta"] = json!({"progressToken": "t-5"});
    let (status, _, body) = server.post(&[("Mcp-Session-Id", &other)], &call);
    assert_eq!(status, 200);
    let messages = events(&body);
    let queued: Vec<&Value> = messages
        .iter()
        .filter(|m| m["method"] == "notifications/progress")
        .filter(|m| {
            m["params"]["message"]
                .as_str()
                .is_some_and(|t| t.starts_with("queued"))
        })
        .collect();
    assert!(!queued.is_empty(), "{body}");
    assert_eq!(queued[0]["params"]["progressToken"], "t-5");
    // Round-robin: one call of the busy session before it, not its forty.
    let said = queued[0]["params"]["message"].as_str().unwrap();
    assert!(said.contains(": 1 call starts before this one"), "{said}");
    // Progress values only grow, waiting and running alike.
    let values: Vec<f64> = messages
        .iter()
        .filter(|m| m["method"] == "notifications/progress")
        .map(|m| m["params"]["progress"].as_f64().unwrap())
        .collect();
    assert!(values.windows(2).all(|w| w[0] < w[1]), "{values:?}");
    let last = messages.last().unwrap();
    assert_eq!(last["result"]["structuredContent"]["output"], "mine\n");
    let (status, _, _) = server.send("DELETE", &[("Mcp-Session-Id", &busy)], "");
    assert_eq!(status, 204);
    drop(tasks);
}

/// The pids of the processes whose command line contains `token`.
fn processes_with(token: &str) -> Vec<u32> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return found;
    };
    for entry in entries.flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse().ok()) else {
            continue;
        };
        if let Ok(line) = std::fs::read(entry.path().join("cmdline"))
            && String::from_utf8_lossy(&line)
                .replace('\0', " ")
                .contains(token)
        {
            found.push(pid);
        }
    }
    found
}

#[test]
fn a_json_only_call_whose_client_disconnects_is_stopped_and_its_process_is_gone() {
    let room = Room::new();
    let server = Server::start(&room, &[]);
    let session = server.initialize();
    // A duration no other process on the machine sleeps for.
    let seconds = format!("60.{}", std::process::id());
    let body = bash(3, &format!("sleep {seconds}; touch late.txt")).to_string();
    let mut stream = TcpStream::connect(("127.0.0.1", server.port)).unwrap();
    write!(
        stream,
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
         Accept: application/json\r\nMcp-Session-Id: {session}\r\n\
         Content-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let token = format!("sleep {seconds}");
    let deadline = Instant::now() + Duration::from_secs(20);
    while processes_with(&token).is_empty() {
        assert!(Instant::now() < deadline, "the command never started");
        std::thread::sleep(Duration::from_millis(50));
    }
    // The client goes away without a word.
    drop(stream);
    let deadline = Instant::now() + Duration::from_secs(10);
    while !processes_with(&token).is_empty() {
        assert!(
            Instant::now() < deadline,
            "the command still runs 10 s after its client disconnected: {:?}",
            processes_with(&token)
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    // The server goes on serving.
    let (status, _, _) = server.post(
        &[("Mcp-Session-Id", &session)],
        &json!({"jsonrpc": "2.0", "id": 4, "method": "tools/list"}),
    );
    assert_eq!(status, 200);
    assert!(!room.path("late.txt").exists());
}

/// A connection from `source` (an address of the loopback range) to the server.
fn connect_from(source: Ipv4Addr, port: u16) -> TcpStream {
    fn inet(ip: Ipv4Addr, port: u16) -> libc::sockaddr_in {
        libc::sockaddr_in {
            sin_family: libc::AF_INET as libc::sa_family_t,
            sin_port: port.to_be(),
            sin_addr: libc::in_addr {
                s_addr: u32::from(ip).to_be(),
            },
            sin_zero: [0; 8],
        }
    }
    let len = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
    // SAFETY: a fresh socket, bound and connected with valid addresses of their length;
    // its descriptor is handed to the TcpStream, which closes it.
    unsafe {
        let fd = libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0);
        assert!(fd >= 0);
        let stream = TcpStream::from_raw_fd(fd);
        let local = inet(source, 0);
        assert_eq!(
            libc::bind(fd, (&raw const local).cast(), len),
            0,
            "bind {source}"
        );
        let remote = inet(Ipv4Addr::LOCALHOST, port);
        assert_eq!(libc::connect(fd, (&raw const remote).cast(), len), 0);
        stream
    }
}

/// Half a request: the head stops in the middle of a field, or the body in the middle.
fn stall(stream: &mut TcpStream, n: usize) {
    if n.is_multiple_of(2) {
        stream
            .write_all(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Ty")
            .unwrap();
    } else {
        stream
            .write_all(
                b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
                  Accept: application/json\r\nContent-Length: 1000\r\n\r\n{\"jsonrpc\"",
            )
            .unwrap();
    }
}

#[test]
fn a_hundred_stalled_connections_hold_up_no_call_and_are_dropped_in_time() {
    let room = Room::new();
    let server = Server::start(&room, &[]);
    let session = server.initialize();
    let mut stalled: Vec<TcpStream> = (0..100)
        .map(|n| {
            let mut stream = TcpStream::connect(("127.0.0.1", server.port)).unwrap();
            stall(&mut stream, n);
            stream
        })
        .collect();
    // Twenty calls complete while they stall.
    parallel_calls(&server, std::slice::from_ref(&session), 20);
    // Each stalled request is dropped once its time is up: a 408, then the end.
    for (n, stream) in stalled.iter_mut().enumerate() {
        stream
            .set_read_timeout(Some(Duration::from_secs(60)))
            .unwrap();
        let mut answer = String::new();
        let _ = stream.read_to_string(&mut answer);
        assert!(
            answer.starts_with("HTTP/1.1 408 "),
            "stalled connection {n}: {answer:?}"
        );
    }
}

#[test]
fn another_local_process_holding_hundreds_of_connections_delays_no_local_client() {
    let room = Room::new();
    let server = Server::start(&room, &[]);
    // Every local client comes from a loopback address: 300 connections that send nothing
    // and 300 that stop half-way through a request hold no turn another one waits for.
    let greedy = Ipv4Addr::new(127, 0, 0, 1);
    let silent: Vec<TcpStream> = (0..300)
        .map(|_| connect_from(greedy, server.port))
        .collect();
    let stalled: Vec<TcpStream> = (0..300)
        .map(|_| {
            let mut stream = connect_from(greedy, server.port);
            stream
                .write_all(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nCont")
                .unwrap();
            stream
        })
        .collect();
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"}}})
    .to_string();
    let mut other = connect_from(greedy, server.port);
    write!(
        other,
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
         Accept: application/json\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{init}",
        init.len()
    )
    .unwrap();
    // Well within the 10 s the stalled requests have: served beside them, not after.
    other
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    let mut status = String::new();
    BufReader::new(other).read_line(&mut status).unwrap();
    assert!(status.starts_with("HTTP/1.1 200 "), "{status:?}");
    // A connection that never starts a request is closed like a stalled one.
    for mut stream in silent
        .into_iter()
        .take(3)
        .chain(stalled.into_iter().take(3))
    {
        stream
            .set_read_timeout(Some(Duration::from_secs(30)))
            .unwrap();
        let mut answer = String::new();
        let _ = stream.read_to_string(&mut answer);
        assert!(
            answer.is_empty() || answer.starts_with("HTTP/1.1 408 "),
            "{answer:?}"
        );
    }
}

#[test]
fn bearer_is_any_case_and_a_refusal_sends_nobody_into_oauth_discovery() {
    let room = Room::new();
    let token = room.write("token", "s3cret\n");
    let server = Server::start(&room, &["--token-file", token.to_str().unwrap()]);
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"}}});
    for given in [
        "Bearer s3cret",
        "bearer s3cret",
        "BEARER s3cret",
        "bEaReR   s3cret",
    ] {
        let (status, _, body) = server.post(&[("Authorization", given)], &init);
        assert_eq!(status, 200, "{given}: {body}");
    }
    // No token: a challenge without an error code and without resource_metadata.
    let (status, headers, body) = server.post(&[], &init);
    assert_eq!(status, 401);
    let challenge = header(&headers, "www-authenticate").unwrap();
    assert_eq!(challenge, r#"Bearer realm="tinytool""#);
    assert!(body.contains("--token-file"), "{body}");
    // A wrong one: invalid_token, still no metadata to discover.
    for given in ["Bearer wrong", "Basic czNjcmV0", "s3cret"] {
        let (status, headers, body) = server.post(&[("Authorization", given)], &init);
        assert_eq!(status, 401, "{given}");
        let challenge = header(&headers, "www-authenticate").unwrap();
        assert!(
            challenge.starts_with(r#"Bearer realm="tinytool", error="invalid_token""#),
            "{challenge}"
        );
        assert!(!challenge.contains("resource_metadata"), "{challenge}");
        assert!(body.contains("Bearer TOKEN"), "{body}");
    }
    // Where an OAuth client looks next, it hears at once that there is nothing, and why.
    for path in [
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-protected-resource",
        "/.well-known/oauth-authorization-server",
        "/.well-known/openid-configuration",
        "/register",
    ] {
        let mut stream = TcpStream::connect(("127.0.0.1", server.port)).unwrap();
        write!(
            stream,
            "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
        )
        .unwrap();
        let mut answer = String::new();
        stream.read_to_string(&mut answer).unwrap();
        assert!(answer.starts_with("HTTP/1.1 404 "), "{path}: {answer}");
        assert!(
            answer.contains("serves no OAuth metadata"),
            "{path}: {answer}"
        );
    }
}

/// Sends raw bytes on a fresh connection and reads until the server closes it.
fn raw(port: u16, bytes: &[u8]) -> String {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    stream.write_all(bytes).unwrap();
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);
    String::from_utf8_lossy(&answer).into_owned()
}

#[test]
fn malformed_http_is_answered_and_the_server_keeps_serving() {
    let room = Room::new();
    let server = Server::start(&room, &[]);
    let port = server.port;
    let cases: &[(&[u8], &str)] = &[
        (b"GARBAGE\r\n\r\n", "400"),
        (b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nBad Header\r\n\r\n", "400"),
        (
            b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 5\r\nContent-Length: 7\r\n\r\n",
            "400",
        ),
        (
            b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n",
            "400",
        ),
        (
            b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
            "400",
        ),
        (b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: x\r\n\r\n", "400"),
    ];
    for (bytes, status) in cases {
        let answer = raw(port, bytes);
        assert!(
            answer.starts_with(&format!("HTTP/1.1 {status} ")),
            "{:?} -> {answer:?}",
            String::from_utf8_lossy(bytes)
        );
    }
    // A head larger than the limit, and one with too many fields.
    let mut huge = b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ".to_vec();
    huge.extend(std::iter::repeat_n(b'a', 70 * 1024));
    huge.extend_from_slice(b"\r\n\r\n");
    assert!(raw(port, &huge).starts_with("HTTP/1.1 431 "));
    let mut many = b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n".to_vec();
    for n in 0..200 {
        many.extend_from_slice(format!("X-{n}: y\r\n").as_bytes());
    }
    many.extend_from_slice(b"\r\n");
    assert!(raw(port, &many).starts_with("HTTP/1.1 431 "));
    // Still serving.
    server.initialize();
}

#[test]
fn chunked_bodies_continue_and_kept_alive_connections_work() {
    let room = Room::new();
    let server = Server::start(&room, &[]);
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"}}})
    .to_string();
    let (a, b) = init.split_at(20);
    // A chunked body, in two chunks with an extension and a trailer.
    let chunked = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
         Accept: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n\
         {:x};ext=1\r\n{a}\r\n{:x}\r\n{b}\r\n0\r\nX-Trailer: 1\r\n\r\n",
        a.len(),
        b.len()
    );
    let answer = raw(server.port, chunked.as_bytes());
    assert!(answer.starts_with("HTTP/1.1 200 "), "{answer}");
    assert!(answer.contains("mcp-session-id") || answer.contains("Mcp-Session-Id"));
    // Expect: 100-continue is answered before the body is sent.
    let mut stream = TcpStream::connect(("127.0.0.1", server.port)).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    write!(
        stream,
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
         Accept: application/json\r\nExpect: 100-continue\r\nContent-Length: {}\r\n\r\n",
        init.len()
    )
    .unwrap();
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut line = String::new();
    reader.read_line(&mut line).unwrap();
    assert!(line.starts_with("HTTP/1.1 100 "), "{line:?}");
    reader.read_line(&mut line).unwrap();
    stream.write_all(init.as_bytes()).unwrap();
    // Then the answer, and the same connection carries a second request.
    let read_answer = |reader: &mut BufReader<TcpStream>| {
        let mut status = String::new();
        reader.read_line(&mut status).unwrap();
        let mut length = 0;
        loop {
            let mut field = String::new();
            reader.read_line(&mut field).unwrap();
            if field.trim().is_empty() {
                break;
            }
            if let Some(value) = field.to_ascii_lowercase().strip_prefix("content-length:") {
                length = value.trim().parse().unwrap();
            }
        }
        let mut body = vec![0; length];
        reader.read_exact(&mut body).unwrap();
        (status, String::from_utf8(body).unwrap())
    };
    let (status, body) = read_answer(&mut reader);
    assert!(status.starts_with("HTTP/1.1 200 "), "{status} {body}");
    write!(
        stream,
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
         Accept: application/json\r\nContent-Length: {}\r\n\r\n{init}",
        init.len()
    )
    .unwrap();
    let (status, body) = read_answer(&mut reader);
    assert!(status.starts_with("HTTP/1.1 200 "), "{status} {body}");
    assert!(body.contains("protocolVersion"), "{body}");
}

#[test]
fn a_chunked_body_that_trickles_gets_no_more_time_than_the_bytes_that_came_earn() {
    let room = Room::new();
    let server = Server::start(&room, &[]);
    let mut stream = TcpStream::connect(("127.0.0.1", server.port)).unwrap();
    stream
        .write_all(
            b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
              Accept: application/json\r\nTransfer-Encoding: chunked\r\n\r\n",
        )
        .unwrap();
    // One byte every half second: a few dozen bytes earn nothing beyond the 10 s every
    // request has (the most a chunked body may be, 4 MiB, would earn a minute more).
    let writer = stream.try_clone().unwrap();
    let trickle = std::thread::spawn(move || {
        let mut writer = writer;
        for _ in 0..200 {
            if writer.write_all(b"1\r\n{\r\n").is_err() {
                return;
            }
            std::thread::sleep(Duration::from_millis(500));
        }
    });
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let mut status = String::new();
    BufReader::new(&stream).read_line(&mut status).unwrap();
    assert!(status.starts_with("HTTP/1.1 408 "), "{status:?}");
    drop(stream);
    trickle.join().unwrap();
}
