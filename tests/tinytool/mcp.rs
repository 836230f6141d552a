//! `tinytool mcp` over raw JSON-RPC, and the schema dialects of `tools`.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, ChildStdout, Stdio};

use serde_json::{Value, json};

use crate::util::Room;

/// A running `tinytool mcp` we talk to line by line.
struct Client {
    child: Child,
    input: ChildStdin,
    output: BufReader<ChildStdout>,
}

impl Client {
    fn start(room: &Room, extra: &[&str]) -> Client {
        let mut args: Vec<&str> = extra.to_vec();
        args.push("mcp");
        Client::spawn(&mut room.command(&args))
    }

    /// Starts a prepared `tinytool mcp` command line.
    fn spawn(command: &mut std::process::Command) -> Client {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let input = child.stdin.take().unwrap();
        let output = BufReader::new(child.stdout.take().unwrap());
        Client {
            child,
            input,
            output,
        }
    }

    fn send(&mut self, message: &str) {
        writeln!(self.input, "{message}").unwrap();
        self.input.flush().unwrap();
    }

    fn recv(&mut self) -> Value {
        let mut line = String::new();
        assert!(
            self.output.read_line(&mut line).unwrap() > 0,
            "the server closed its output"
        );
        serde_json::from_str(&line).unwrap()
    }

    fn request(&mut self, id: i64, method: &str, params: Value) -> Value {
        self.send(
            &json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string(),
        );
        self.recv()
    }

    fn finish(mut self) -> i32 {
        drop(self.input);
        self.child.wait().unwrap().code().unwrap_or(-1)
    }
}

fn init(client: &mut Client, version: &str, capabilities: Value) -> Value {
    let response = client.request(
        1,
        "initialize",
        json!({
        "protocolVersion": version, "capabilities": capabilities,
        "clientInfo": {"name": "test", "version": "1"}}),
    );
    client.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    response
}

#[test]
fn handshake_echoes_known_revisions_and_answers_errors_without_stopping() {
    let room = Room::new();
    let mut client = Client::start(&room, &[]);
    let response = init(&mut client, "2025-03-26", json!({}));
    assert_eq!(response["result"]["protocolVersion"], "2025-03-26");
    assert_eq!(response["result"]["serverInfo"]["name"], "tinytool");
    assert!(response["result"]["capabilities"]["tools"].is_object());
    client.send("this is not json");
    let parse = client.recv();
    assert_eq!(parse["error"]["code"], -32700);
    assert_eq!(parse["id"], Value::Null);
    let unknown = client.request(2, "prompts/list", json!({}));
    assert_eq!(unknown["error"]["code"], -32601);
    assert_eq!(client.request(3, "ping", json!({}))["result"], json!({}));
    assert_eq!(client.finish(), 0);

    let mut client = Client::start(&room, &[]);
    let response = init(&mut client, "1999-01-01", json!({}));
    assert_eq!(response["result"]["protocolVersion"], "2025-11-25");
    for version in ["2024-11-05", "2025-06-18", "2025-11-25"] {
        assert_eq!(
            client.request(9, "initialize", json!({"protocolVersion": version}))["result"]["protocolVersion"],
            version
        );
    }
    client.finish();
}

#[test]
fn tools_are_listed_with_annotations_and_without_invalid() {
    let room = Room::new();
    let mut client = Client::start(&room, &[]);
    init(&mut client, "2025-06-18", json!({}));
    let list = client.request(2, "tools/list", json!({}));
    let tools = list["result"]["tools"].as_array().unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert!(!names.contains(&"invalid"));
    let read = tools.iter().find(|t| t["name"] == "read").unwrap();
    assert_eq!(read["annotations"]["readOnlyHint"], true);
    assert_eq!(read["inputSchema"]["required"], json!(["file_path"]));
    let listed = room.run(&["tools", "--format", "mcp"], None).json();
    assert_eq!(&Value::Array(tools.clone()), &listed);
    client.finish();
}

#[test]
fn calls_go_through_the_registry_and_refusals_are_results() {
    let room = Room::new();
    room.write("a.txt", "hello\n");
    room.write(".env", "K=1\n");
    room.write("pic.png", crate::util::plain_png(3, 2));
    let mut client = Client::start(&room, &[]);
    init(&mut client, "2025-11-25", json!({}));
    let read = client.request(
        2,
        "tools/call",
        json!({"name": "read", "arguments": {"file_path": "a.txt"}}),
    );
    assert_eq!(
        read["result"]["content"],
        json!([{"type": "text", "text": "1\thello\n"}])
    );
    assert_eq!(read["result"]["isError"], false);
    // Both halves carry the output: clients that read only structuredContent see it too.
    assert_eq!(
        read["result"]["structuredContent"],
        json!({"tool": "read", "output": "1\thello\n", "is_error": false, "truncated": false,
            "metadata": read["result"]["structuredContent"]["metadata"].clone()})
    );
    assert_eq!(
        read["result"]["structuredContent"]["metadata"]["path"],
        "a.txt"
    );
    let refused = client.request(
        3,
        "tools/call",
        json!({"name": "read", "arguments": {"file_path": ".env"}}),
    );
    assert_eq!(refused["result"]["isError"], true);
    assert_eq!(refused["result"]["structuredContent"]["is_error"], true);
    assert_eq!(
        refused["result"]["structuredContent"]["output"],
        refused["result"]["content"][0]["text"]
    );
    assert!(
        refused["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("Refused by the policy")
    );
    let bad_args = client.request(
        4,
        "tools/call",
        json!({"name": "read", "arguments": {"nope": 1}}),
    );
    assert_eq!(bad_args["result"]["isError"], true);
    let unknown = client.request(5, "tools/call", json!({"name": "nosuch", "arguments": {}}));
    assert_eq!(unknown["error"]["code"], -32602);
    let image = client.request(
        6,
        "tools/call",
        json!({"name": "read", "arguments": {"file_path": "pic.png"}}),
    );
    assert_eq!(image["result"]["content"][0]["type"], "image");
    assert_eq!(image["result"]["content"][0]["mimeType"], "image/png");
    // The image is sent once: structuredContent refers to it, and so does the text after it.
    let data = image["result"]["content"][0]["data"].as_str().unwrap();
    let output = image["result"]["structuredContent"]["output"]
        .as_str()
        .unwrap();
    assert!(output.starts_with("[image 1: pic.png, image/png, 3x2, ") && !output.contains(data));
    assert_eq!(image["result"]["content"][1]["text"], output);
    // No tool ends the server: `exit` is not served over MCP.
    let exit = client.request(7, "tools/call", json!({"name": "exit", "arguments": {}}));
    assert_eq!(exit["error"]["code"], -32602);
    assert_eq!(client.request(8, "ping", json!({}))["id"], 8);
    assert_eq!(client.finish(), 0);
}

#[test]
fn question_is_offered_to_a_client_that_can_be_asked() {
    let room = Room::new();
    // No terminal and no answers file: only a client offering elicitation can answer.
    let mut cmd = std::process::Command::new("setsid");
    cmd.arg("-w").arg(crate::util::bin()).arg("mcp");
    room.enter(&mut cmd);
    let names = |client: &mut Client, id: i64, params: Value| -> Vec<String> {
        client.request(id, "tools/list", params)["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_string())
            .collect()
    };
    let mut asked = Client::spawn(&mut cmd);
    init(&mut asked, "2025-06-18", json!({"elicitation": {}}));
    assert!(names(&mut asked, 2, json!({})).contains(&"question".to_string()));
    asked.finish();
    let mut plain = Client::spawn(&mut cmd);
    init(&mut plain, "2025-06-18", json!({}));
    assert!(!names(&mut plain, 2, json!({})).contains(&"question".to_string()));
    // A 2026-07-28 request says it in its own capabilities.
    let meta = |caps: Value| {
        json!({"_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": caps,
        }})
    };
    assert!(
        names(&mut plain, 3, meta(json!({"elicitation": {}}))).contains(&"question".to_string())
    );
    assert!(!names(&mut plain, 4, meta(json!({}))).contains(&"question".to_string()));
    plain.finish();
}

#[test]
fn question_uses_elicitation_when_the_client_offers_it() {
    let room = Room::new();
    let mut client = Client::start(&room, &[]);
    init(&mut client, "2025-06-18", json!({"elicitation": {}}));
    client.send(&json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "question", "arguments": {"question": "Colour?", "options": ["red", "blue"]}}}).to_string());
    let asked = client.recv();
    assert_eq!(asked["method"], "elicitation/create");
    assert_eq!(asked["params"]["message"], "Colour?");
    assert_eq!(
        asked["params"]["requestedSchema"]["properties"]["answer"]["enum"],
        json!(["red", "blue"])
    );
    // A ping is answered while the call waits.
    client.send(r#"{"jsonrpc":"2.0","id":77,"method":"ping"}"#);
    assert_eq!(client.recv()["id"], 77);
    client.send(&json!({"jsonrpc": "2.0", "id": asked["id"], "result": {"action": "accept", "content": {"answer": "blue"}}}).to_string());
    let answered = client.recv();
    assert_eq!(answered["id"], 2);
    assert_eq!(answered["result"]["content"][0]["text"], "blue");
    client.finish();
}

#[test]
fn batches_get_one_array_of_responses() {
    let room = Room::new();
    let mut client = Client::start(&room, &[]);
    client.send(r#"[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"},{"jsonrpc":"2.0","id":2,"method":"tools/list"}]"#);
    let responses = client.recv();
    let ids: Vec<i64> = responses
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_i64().unwrap())
        .collect();
    assert_eq!(ids, [1, 2]);
    client.finish();
}

#[test]
fn many_batches_at_once_are_all_answered_with_a_bounded_number_of_threads() {
    let room = Room::new();
    room.write(
        "p.json",
        r#"{"rules": [{"permission": "shell", "pattern": "*", "action": "allow"}]}"#,
    );
    let mut client = Client::start(&room, &["--policy", "p.json"]);
    init(&mut client, "2025-03-26", json!({}));
    let batches = 48;
    for n in 0..batches {
        client.send(
            &json!([{"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": {
                "name": "bash", "arguments": {"command": format!("sleep 0.5; echo {n}")}}}])
            .to_string(),
        );
    }
    // A thread per batch without a bound would be 48 here, beside the pool's 16 workers.
    let pid = client.child.id();
    let threads = || {
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
        status
            .lines()
            .find_map(|l| l.strip_prefix("Threads:"))
            .unwrap()
            .trim()
            .parse::<usize>()
            .unwrap()
    };
    let mut most = 0;
    let mut seen = Vec::new();
    while seen.len() < batches {
        most = most.max(threads());
        let answer = client.recv();
        let answer = &answer.as_array().unwrap()[0];
        assert_eq!(answer["result"]["isError"], false, "{answer}");
        seen.push(answer["id"].as_u64().unwrap());
    }
    seen.sort_unstable();
    assert_eq!(seen, (0..batches as u64).collect::<Vec<_>>());
    assert!(most <= 48, "{most} threads");
    client.finish();
}

/// Checks OpenAI's strict rules on a schema node, at every depth.
fn assert_strict(node: &Value, path: &str) {
    let kinds: Vec<&str> = match &node["type"] {
        Value::String(kind) => vec![kind.as_str()],
        Value::Array(kinds) => kinds.iter().map(|k| k.as_str().unwrap()).collect(),
        other => panic!("{path}: type missing or odd: {other}"),
    };
    for unsupported in ["default", "minimum", "maximum", "$schema"] {
        assert!(
            node.get(unsupported).is_none(),
            "{path}: `{unsupported}` is not allowed in strict mode"
        );
    }
    if kinds.contains(&"object") {
        assert_eq!(
            node["additionalProperties"], false,
            "{path}: objects must be closed"
        );
        let props = node["properties"]
            .as_object()
            .unwrap_or_else(|| panic!("{path}: free-form object"));
        let mut required: Vec<&str> = node["required"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        let mut names: Vec<&str> = props.keys().map(String::as_str).collect();
        required.sort();
        names.sort();
        assert_eq!(required, names, "{path}: every property must be required");
        for (name, prop) in props {
            assert_strict(prop, &format!("{path}.{name}"));
        }
    }
    if kinds.contains(&"array") {
        assert_strict(&node["items"], &format!("{path}[]"));
    }
    if let Some(values) = node.get("enum").and_then(Value::as_array)
        && kinds.contains(&"null")
    {
        assert!(
            values.contains(&Value::Null),
            "{path}: a nullable enum must list null"
        );
    }
}

/// Checks Gemini's OpenAPI subset: every object has properties, no empty `required`.
fn assert_gemini(node: &Value, path: &str) {
    if node["type"] == "object" {
        let props = node["properties"]
            .as_object()
            .unwrap_or_else(|| panic!("{path}: object without properties"));
        assert!(
            !props.is_empty(),
            "{path}: Gemini rejects an object with no properties"
        );
        for (name, prop) in props {
            assert_gemini(prop, &format!("{path}.{name}"));
        }
    }
    if let Some(required) = node.get("required") {
        assert!(
            !required.as_array().unwrap().is_empty(),
            "{path}: empty required"
        );
    }
    if let Some(items) = node.get("items") {
        assert_gemini(items, &format!("{path}[]"));
    }
}

#[test]
fn every_dialect_keeps_its_rules_on_every_tool() {
    let mut room = Room::new();
    room.set_env("EXA_API_KEY", "test-key");
    let strict = room
        .run(&["tools", "--format", "openai", "--strict"], None)
        .json();
    for tool in strict.as_array().unwrap() {
        let name = tool["function"]["name"].as_str().unwrap();
        assert_eq!(tool["function"]["strict"], true);
        assert_strict(&tool["function"]["parameters"], name);
    }
    let gemini = room.run(&["tools", "--format", "gemini"], None).json();
    let text = gemini.to_string();
    assert!(!text.contains("additionalProperties") && !text.contains("$schema"));
    for tool in gemini.as_array().unwrap() {
        if let Some(parameters) = tool.get("parameters") {
            assert_gemini(parameters, tool["name"].as_str().unwrap());
        }
    }
    for tool in room
        .run(&["tools", "--format", "anthropic"], None)
        .json()
        .as_array()
        .unwrap()
    {
        assert_eq!(tool["input_schema"]["type"], "object");
    }
    assert_eq!(
        room.run(&["tools", "--format", "json", "--strict"], None)
            .code,
        2
    );
}

#[test]
fn strict_nulls_are_accepted_back() {
    let room = Room::new();
    room.write("a.txt", "a\n");
    let run = room.exec(
        json!({"name": "read", "arguments": {"file_path": "a.txt", "offset": null, "limit": null}}),
    );
    assert_eq!(run.code, 0);
}

/// Whether a process whose command line contains `marker` is alive.
fn running(marker: &str) -> bool {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok())
        .any(|entry| {
            std::fs::read(entry.path().join("cmdline"))
                .map(|raw| {
                    String::from_utf8_lossy(&raw)
                        .replace('\0', " ")
                        .contains(marker)
                })
                .unwrap_or(false)
        })
}

/// Waits (bounded) until no process with `marker` in its command line is left.
fn wait_gone(marker: &str) {
    let mut waited = 0;
    while running(marker) {
        assert!(
            waited < 200,
            "{marker}: the cancelled command's process group survived"
        );
        std::thread::sleep(std::time::Duration::from_millis(25));
        waited += 1;
    }
}

/// Sends request `id`, a bash call sleeping `marker` seconds, and waits (bounded) until
/// the sleep runs.
fn start_sleep(client: &mut Client, id: i64, marker: &str) {
    client.send(
        &json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": "bash", "arguments": {"command": format!("sleep {marker}")}}})
        .to_string(),
    );
    let mut waited = 0;
    while !running(&format!("sleep {marker}")) {
        assert!(waited < 200, "the command never started");
        std::thread::sleep(std::time::Duration::from_millis(25));
        waited += 1;
    }
}

#[test]
fn cancellation_stops_a_running_call_and_the_server_keeps_serving() {
    let room = Room::new();
    let mut client = Client::start(&room, &[]);
    init(&mut client, "2025-06-18", json!({}));
    let marker = "37.123";
    // The command really runs (bounded wait), then it is cancelled.
    start_sleep(&mut client, 2, marker);
    assert_eq!(
        client.request(3, "ping", json!({}))["id"],
        3,
        "ping is answered during a long call"
    );
    client.send(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2,"reason":"test"}}"#);
    // The cancelled call gets no response: the next message is the answer to request 4.
    let next = client.request(4, "tools/list", json!({}));
    assert_eq!(next["id"], 4);
    // Calls run concurrently, so the list may be answered before the kill lands: wait
    // (bounded) for the group to go.
    wait_gone(&format!("sleep {marker}"));
    let after = client.request(5, "ping", json!({}));
    assert_eq!(after["id"], 5, "the cancelled call was answered: {after}");
    client.finish();
}

#[test]
fn a_client_that_is_gone_stops_the_running_call_and_the_server() {
    let room = Room::new();
    let mut client = Client::start(&room, &[]);
    init(&mut client, "2025-06-18", json!({}));
    let marker = "41.321";
    start_sleep(&mut client, 2, marker);
    // Both ends closed: the server must end without waiting for the 41 s command, and
    // kill it.
    let Client {
        mut child,
        input,
        output,
    } = client;
    drop(output);
    drop(input);
    assert_eq!(child.wait().unwrap().code(), Some(0));
    assert!(!running(&format!("sleep {marker}")));
}

#[test]
fn a_client_that_closes_only_our_output_stops_the_running_call_and_the_server() {
    let room = Room::new();
    let mut client = Client::start(&room, &[]);
    init(&mut client, "2025-06-18", json!({}));
    let marker = "43.321";
    start_sleep(&mut client, 2, marker);
    // Input stays open: the server notices nobody reads its output.
    let Client {
        mut child,
        input,
        output,
    } = client;
    drop(output);
    assert_eq!(child.wait().unwrap().code(), Some(0));
    assert!(!running(&format!("sleep {marker}")));
    drop(input);
}

#[test]
fn end_of_input_still_answers_every_request_received() {
    let room = Room::new();
    room.write(
        "p.json",
        r#"{"rules": [{"permission": "shell", "pattern": "*", "action": "allow"}]}"#,
    );
    let mut client = Client::start(&room, &["--policy", "p.json"]);
    init(&mut client, "2025-06-18", json!({}));
    client.send(
        &json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "bash", "arguments": {"command": "sleep 0.3; echo a > a1"}}})
        .to_string(),
    );
    client.send(
        &json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
        "params": {"name": "bash", "arguments": {"command": "echo b > b1"}}})
        .to_string(),
    );
    client.send(r#"{"jsonrpc":"2.0","id":4,"method":"ping"}"#);
    let Client {
        mut child,
        input,
        mut output,
    } = client;
    drop(input);
    let mut text = String::new();
    output.read_to_string(&mut text).unwrap();
    assert_eq!(child.wait().unwrap().code(), Some(0));
    let ids: Vec<Value> = text
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap()["id"].clone())
        .collect();
    // Every request is answered once, in completion order.
    let mut sorted: Vec<i64> = ids.iter().map(|id| id.as_i64().unwrap()).collect();
    sorted.sort_unstable();
    assert_eq!(sorted, [2, 3, 4], "{text}");
    assert_eq!(room.read("a1"), "a\n");
    assert_eq!(room.read("b1"), "b\n");
}

/// Checks `value` against the subset of JSON Schema the output schemas use: `type`,
/// `properties`, `required`, `additionalProperties: false`.
fn conforms(value: &Value, schema: &Value) -> Result<(), String> {
    let kind = schema["type"].as_str().unwrap_or("");
    let ok = match kind {
        "object" => value.is_object(),
        "string" => value.is_string(),
        "boolean" => value.is_boolean(),
        "" => true,
        other => return Err(format!("unexpected schema type {other}")),
    };
    if !ok {
        return Err(format!("{value} is not a {kind}"));
    }
    if let (Some(object), Some(properties)) = (value.as_object(), schema["properties"].as_object())
    {
        for name in schema["required"].as_array().into_iter().flatten() {
            let name = name.as_str().unwrap();
            if !object.contains_key(name) {
                return Err(format!("missing {name}"));
            }
        }
        for (key, item) in object {
            match properties.get(key) {
                Some(sub) => conforms(item, sub)?,
                None if schema["additionalProperties"] == false => {
                    return Err(format!("unexpected property {key}"));
                }
                None => {}
            }
        }
    }
    Ok(())
}

#[test]
fn every_result_validates_against_its_tools_output_schema() {
    let room = Room::new();
    room.write("a.txt", "hello\n");
    let mut client = Client::start(&room, &[]);
    init(&mut client, "2025-11-25", json!({}));
    let list = client.request(2, "tools/list", json!({}));
    let tools = list["result"]["tools"].as_array().unwrap().clone();
    for tool in &tools {
        assert!(tool["outputSchema"]["type"] == "object", "{}", tool["name"]);
        assert!(tool["title"].is_string(), "{}", tool["name"]);
        for hint in [
            "readOnlyHint",
            "destructiveHint",
            "idempotentHint",
            "openWorldHint",
        ] {
            assert!(
                tool["annotations"][hint].is_boolean(),
                "{} {hint}",
                tool["name"]
            );
        }
    }
    let schema_of =
        |name: &str| tools.iter().find(|t| t["name"] == name).unwrap()["outputSchema"].clone();
    let calls = [
        ("read", json!({"file_path": "a.txt"})),
        ("read", json!({"file_path": "missing.txt"})),
        ("grep", json!({"pattern": "hello"})),
        ("glob", json!({"pattern": "*.txt"})),
        ("notepad", json!({"action": "read", "key": "nope"})),
        ("todowrite", json!({"todos": []})),
        ("read", json!({"wrong": 1})),
    ];
    for (n, (name, arguments)) in calls.iter().enumerate() {
        let answer = client.request(
            10 + n as i64,
            "tools/call",
            json!({"name": name, "arguments": arguments}),
        );
        let result = &answer["result"];
        conforms(&result["structuredContent"], &schema_of(name))
            .unwrap_or_else(|e| panic!("{name} {arguments}: {e}: {result}"));
        assert_eq!(result["structuredContent"]["is_error"], result["isError"]);
        assert_eq!(
            result["structuredContent"]["output"], result["content"][0]["text"],
            "{name}"
        );
    }
    client.finish();
}

#[test]
fn answers_come_in_completion_order_and_a_cancelled_queued_write_never_runs() {
    let room = Room::new();
    room.write(
        "p.json",
        r#"{"rules": [{"permission": "shell", "pattern": "*", "action": "allow"}]}"#,
    );
    let mut client = Client::start(&room, &["--policy", "p.json"]);
    init(&mut client, "2025-11-25", json!({}));
    // Every worker of the pool busy with a long sleep.
    for n in 0..16 {
        start_sleep(&mut client, 100 + n, &format!("53.{n:03}"));
    }
    // Queued behind them: a write, cancelled before any worker is free.
    client.send(
        &json!({"jsonrpc": "2.0", "id": 200, "method": "tools/call",
        "params": {"name": "write", "arguments": {"file_path": "late.txt", "content": "x"}}})
        .to_string(),
    );
    client
        .send(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":200}}"#);
    // Freeing the workers: every running sleep cancelled.
    for n in 0..16 {
        client.send(
            &json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId": 100 + n}})
                .to_string(),
        );
    }
    // A later call is answered; the cancelled ones never are.
    let next = client.request(
        300,
        "tools/call",
        json!({"name": "bash", "arguments": {"command": "echo done"}}),
    );
    assert_eq!(next["id"], 300, "{next}");
    for n in 0..16 {
        wait_gone(&format!("sleep 53.{n:03}"));
    }
    assert!(!room.path("late.txt").exists());

    // A quick call started after a long one is answered first.
    start_sleep(&mut client, 400, "59.5");
    let quick = client.request(
        401,
        "tools/call",
        json!({"name": "bash", "arguments": {"command": "echo quick"}}),
    );
    assert_eq!(quick["id"], 401);
    client
        .send(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":400}}"#);
    client.finish();
}

#[test]
fn a_call_with_a_progress_token_reports_progress() {
    let room = Room::new();
    room.write(
        "p.json",
        r#"{"rules": [{"permission": "shell", "pattern": "*", "action": "allow"}]}"#,
    );
    let mut client = Client::start(&room, &["--policy", "p.json"]);
    init(&mut client, "2025-11-25", json!({}));
    client.send(
        &json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "bash", "_meta": {"progressToken": "tok"},
            "arguments": {"command": "echo one; echo two; sleep 5.5"}}})
        .to_string(),
    );
    let progress = client.recv();
    assert_eq!(progress["method"], "notifications/progress", "{progress}");
    assert_eq!(progress["params"]["progressToken"], "tok");
    assert!(progress["params"]["progress"].as_f64().unwrap() > 0.0);
    assert!(
        progress["params"]["message"]
            .as_str()
            .unwrap()
            .contains("2 lines of output"),
        "{progress}"
    );
    // More follow every few seconds, each further on, until the answer.
    let mut last = progress["params"]["progress"].as_f64().unwrap();
    loop {
        let next = client.recv();
        if next["id"] == 2 {
            break;
        }
        assert_eq!(next["method"], "notifications/progress", "{next}");
        let value = next["params"]["progress"].as_f64().unwrap();
        assert!(value > last, "{next}");
        last = value;
    }
    client.finish();
}

#[test]
fn spill_files_are_linked_and_served_and_nothing_else_is() {
    let room = Room::new();
    room.write(".tinytool/outputs/bash-1a2b.txt", "the whole output\n");
    room.write("secret.txt", "no\n");
    let mut client = Client::start(&room, &[]);
    let init = init(&mut client, "2025-11-25", json!({}));
    assert!(init["result"]["capabilities"]["resources"].is_object());
    let read = client.request(
        2,
        "resources/read",
        json!({"uri": "tinytool://output/bash-1a2b.txt"}),
    );
    assert_eq!(read["result"]["contents"][0]["text"], "the whole output\n");
    for uri in [
        "tinytool://output/../secret.txt",
        "tinytool://output/nope",
        "file:///etc/passwd",
    ] {
        let refused = client.request(3, "resources/read", json!({"uri": uri}));
        assert_eq!(refused["error"]["code"], -32602, "{uri}");
    }
    client.finish();
}

#[test]
fn responses_and_anthropic_strict_formats_keep_their_rules() {
    let room = Room::new();
    let responses = room
        .run(&["tools", "--format", "openai-responses", "--strict"], None)
        .json();
    for tool in responses.as_array().unwrap() {
        assert_eq!(tool["type"], "function");
        assert_eq!(tool["strict"], true);
        assert_strict(&tool["parameters"], tool["name"].as_str().unwrap());
    }
    let anthropic = room
        .run(&["tools", "--format", "anthropic", "--strict"], None)
        .json();
    let webfetch = anthropic
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "webfetch")
        .unwrap();
    assert_eq!(webfetch["strict"], true);
    let schema = &webfetch["input_schema"];
    assert_eq!(schema["additionalProperties"], false);
    assert_eq!(schema["properties"]["headers"]["type"], "string");
    // Optional properties stay optional under Anthropic's rules.
    assert_eq!(schema["required"], json!(["url"]));
    // Headers sent as JSON text are accepted back.
    let run = room.run(
        &["exec"],
        Some(
            &json!({"type": "tool_use", "id": "t", "name": "webfetch",
            "input": {"url": "http://127.0.0.1:9/", "headers": "{\"X-A\": \"1\"}"}})
            .to_string(),
        ),
    );
    assert!(
        !run.json()["output"]
            .as_str()
            .unwrap()
            .contains("Invalid arguments"),
        "{}",
        run.json()
    );
}

#[test]
fn a_2025_11_25_task_is_polled_listed_waited_for_and_cancelled() {
    let room = Room::new();
    let mut client = Client::start(&room, &[]);
    let init = init(&mut client, "2025-11-25", json!({}));
    assert!(init["result"]["capabilities"]["tasks"]["requests"]["tools"]["call"].is_object());
    let listed = client.request(2, "tools/list", json!({}));
    assert_eq!(
        listed["result"]["tools"][0]["execution"]["taskSupport"],
        "optional"
    );
    let created = client.request(
        3,
        "tools/call",
        json!({"name": "bash", "arguments": {"command": "sleep 1; echo done"}, "task": {"ttl": 60000}}),
    );
    let task = &created["result"]["task"];
    assert_eq!(task["status"], "working");
    assert_eq!(task["ttl"], 60000);
    let id = task["taskId"].as_str().unwrap().to_string();
    let got = client.request(4, "tasks/get", json!({"taskId": id}));
    assert!(
        ["working", "completed"].contains(&got["result"]["status"].as_str().unwrap()),
        "{got}"
    );
    let result = client.request(5, "tasks/result", json!({"taskId": id}));
    assert_eq!(result["result"]["structuredContent"]["output"], "done\n");
    assert_eq!(
        result["result"]["_meta"]["io.modelcontextprotocol/related-task"]["taskId"],
        json!(id)
    );
    let got = client.request(6, "tasks/get", json!({"taskId": id}));
    assert_eq!(got["result"]["status"], "completed");
    let list = client.request(7, "tasks/list", json!({}));
    assert_eq!(list["result"]["tasks"][0]["taskId"], json!(id));
    // A cancelled task's command is stopped.
    let created = client.request(
        8,
        "tools/call",
        json!({"name": "bash", "arguments": {"command": "sleep 2; touch late.txt"}, "task": {}}),
    );
    let id = created["result"]["task"]["taskId"]
        .as_str()
        .unwrap()
        .to_string();
    let cancelled = client.request(9, "tasks/cancel", json!({"taskId": id}));
    assert_eq!(cancelled["result"]["status"], "cancelled");
    std::thread::sleep(std::time::Duration::from_secs(3));
    assert!(!room.path("late.txt").exists());
    let got = client.request(10, "tasks/get", json!({"taskId": id}));
    assert_eq!(got["result"]["status"], "cancelled");
    assert_eq!(client.finish(), 0);
}

#[test]
fn stateless_2026_07_28_requests_on_stdio_discover_list_and_ask_by_input_required() {
    let room = Room::new();
    let mut client = Client::start(&room, &[]);
    let meta = |caps: Value| {
        json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": caps,
        })
    };
    let discover = client.request(1, "server/discover", json!({"_meta": meta(json!({}))}));
    assert!(
        discover["result"]["supportedVersions"]
            .as_array()
            .unwrap()
            .contains(&json!("2026-07-28"))
    );
    assert!(
        discover["result"]["capabilities"]["extensions"]["io.modelcontextprotocol/tasks"]
            .is_object()
    );
    let list = client.request(2, "tools/list", json!({"_meta": meta(json!({}))}));
    assert_eq!(list["result"]["resultType"], "complete");
    assert!(list["result"]["ttlMs"].is_u64());
    assert_eq!(list["result"]["cacheScope"], "private");
    // ping is gone in this revision; an initialize-era ping still works.
    let ping = client.request(3, "ping", json!({"_meta": meta(json!({}))}));
    assert_eq!(ping["error"]["code"], -32601);
    // question: input_required, then the retry carries the answer.
    let ask = json!({"name": "question", "arguments": {"question": "Colour?", "options": ["red", "blue"]},
        "_meta": meta(json!({"elicitation": {}}))});
    let first = client.request(4, "tools/call", ask.clone());
    assert_eq!(first["result"]["resultType"], "input_required", "{first}");
    let request = &first["result"]["inputRequests"]["question-1"];
    assert_eq!(request["method"], "elicitation/create");
    assert_eq!(request["params"]["message"], "Colour?");
    let mut retry = ask.clone();
    retry["inputResponses"] =
        json!({"question-1": {"action": "accept", "content": {"answer": "blue"}}});
    let second = client.request(5, "tools/call", retry);
    assert_eq!(second["result"]["resultType"], "complete");
    assert_eq!(second["result"]["structuredContent"]["output"], "blue");
    // Without elicitation in the request's capabilities nobody is asked.
    let mut plain = ask.clone();
    plain["_meta"] = meta(json!({}));
    let third = client.request(6, "tools/call", plain);
    assert_eq!(third["result"]["isError"], true);
    // A long tool becomes a task for a client that takes them; it is polled to the end.
    let created = client.request(
        7,
        "tools/call",
        json!({"name": "bash", "arguments": {"command": "echo tasked"},
            "_meta": meta(json!({"extensions": {"io.modelcontextprotocol/tasks": {}}}))}),
    );
    assert_eq!(created["result"]["resultType"], "task", "{created}");
    let id = created["result"]["taskId"].clone();
    // tasks/* from a client that does not declare the extension: -32021.
    let refused = client.request(
        99,
        "tasks/get",
        json!({"taskId": id, "_meta": meta(json!({}))}),
    );
    assert_eq!(refused["error"]["code"], -32021);
    let mut done = Value::Null;
    for n in 0..100 {
        let got = client.request(
            100 + n,
            "tasks/get",
            json!({"taskId": id, "_meta": meta(json!({"extensions": {"io.modelcontextprotocol/tasks": {}}}))}),
        );
        if got["result"]["status"] == "completed" {
            done = got;
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert_eq!(
        done["result"]["result"]["structuredContent"]["output"],
        "tasked\n"
    );
    assert_eq!(done["result"]["resultType"], "complete");
    // An unsupported revision names the supported ones.
    let bad = client.request(
        8,
        "tools/list",
        json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "2030-01-01"}}),
    );
    assert_eq!(bad["error"]["code"], -32022);
    assert_eq!(client.finish(), 0);
}

#[test]
fn a_policy_ask_is_answered_by_the_client_under_2026_07_28() {
    let room = Room::new();
    std::fs::write(
        room.path("policy.json"),
        r#"{"rules": [{"permission": "edit", "pattern": "guarded/*", "action": "ask"}]}"#,
    )
    .unwrap();
    let policy = room.path("policy.json");
    let mut client = Client::start(&room, &["--policy", policy.to_str().unwrap()]);
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
    });
    let call = json!({"name": "write", "arguments": {"file_path": "guarded/a.txt", "content": "x\n"}, "_meta": meta});
    let first = client.request(1, "tools/call", call.clone());
    assert_eq!(first["result"]["resultType"], "input_required", "{first}");
    let asked = &first["result"]["inputRequests"]["question-1"]["params"];
    assert!(
        asked["message"].as_str().unwrap().contains("guarded/a.txt"),
        "{asked}"
    );
    assert!(!room.path("guarded/a.txt").exists());
    // Rejected: refused, nothing written.
    let mut rejected = call.clone();
    rejected["inputResponses"] =
        json!({"question-1": {"action": "accept", "content": {"answer": "reject"}}});
    let refused = client.request(2, "tools/call", rejected);
    assert_eq!(refused["result"]["isError"], true, "{refused}");
    assert!(!room.path("guarded/a.txt").exists());
    // Allowed once: written.
    let mut allowed = call.clone();
    allowed["inputResponses"] =
        json!({"question-1": {"action": "accept", "content": {"answer": "once"}}});
    let done = client.request(3, "tools/call", allowed);
    assert_eq!(done["result"]["resultType"], "complete");
    assert_eq!(done["result"]["isError"], false, "{done}");
    assert_eq!(room.read("guarded/a.txt"), "x\n");
    // A client that cannot be asked gets the policy's refusal, as before.
    let mut plain =
        json!({"name": "write", "arguments": {"file_path": "guarded/b.txt", "content": "y\n"}});
    plain["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    let refused = client.request(4, "tools/call", plain);
    assert_eq!(refused["result"]["isError"], true);
    assert!(!room.path("guarded/b.txt").exists());
    assert_eq!(client.finish(), 0);
}

#[test]
fn a_huge_grep_include_is_an_error_result_and_the_server_goes_on() {
    let room = Room::new();
    room.write("a.txt", "needle\n");
    let mut client = Client::start(&room, &[]);
    init(&mut client, "2025-06-18", json!({}));
    let huge = client.request(
        2,
        "tools/call",
        json!({"name": "grep", "arguments": {"pattern": "needle", "include": "*".repeat(330_000)}}),
    );
    assert_eq!(huge["result"]["isError"], true, "{huge}");
    let text = huge["result"]["content"][0]["text"].as_str().unwrap();
    assert!(
        text.starts_with("Invalid include pattern: the glob is 330000 bytes"),
        "{text}"
    );
    let next = client.request(
        3,
        "tools/call",
        json!({"name": "grep", "arguments": {"pattern": "needle"}}),
    );
    assert_eq!(next["result"]["isError"], false, "{next}");
    assert_eq!(client.finish(), 0);
}

#[test]
fn other_agents_names_and_arguments_encoded_twice_are_served() {
    let room = Room::new();
    room.write("a.txt", "one\ntwo\n");
    let mut client = Client::start(&room, &[]);
    init(&mut client, "2025-06-18", json!({}));
    // Claude Code's Read, whose offset counts from 1.
    let read = client.request(
        2,
        "tools/call",
        json!({"name": "Read", "arguments": {"file_path": "a.txt", "offset": 2}}),
    );
    assert_eq!(
        read["result"]["content"],
        json!([{"type": "text", "text": "2\ttwo\n"}])
    );
    assert_eq!(
        read["result"]["structuredContent"]["metadata"]["repairs"][0],
        "tool Read read as read"
    );
    let encoded = client.request(
        3,
        "tools/call",
        json!({"name": "read", "arguments": json!({"file_path": "a.txt"}).to_string()}),
    );
    assert_eq!(encoded["result"]["isError"], false, "{encoded}");
    assert_eq!(
        encoded["result"]["structuredContent"]["metadata"]["repairs"],
        json!(["arguments were JSON-encoded twice; decoded"])
    );
    let unknown = client.request(4, "tools/call", json!({"name": "grpe", "arguments": {}}));
    assert_eq!(unknown["error"]["code"], -32602);
    let message = unknown["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.starts_with("Unknown tool: grpe. Did you mean grep? Available tools: read,"),
        "{message}"
    );
    assert!(
        message.ends_with("plan_exit, checkpoint, diagnostics."),
        "{message}"
    );
    // The tools MCP does not serve are not served by another spelling either.
    let exit = client.request(5, "tools/call", json!({"name": "EXIT", "arguments": {}}));
    assert_eq!(exit["error"]["code"], -32602, "{exit}");
    client.finish();
}
