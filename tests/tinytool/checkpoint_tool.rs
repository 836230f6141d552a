//! The `checkpoint` tool: checkpoints and undo through `exec --jsonl` and MCP,
//! gated by the `undo` permission (default ask); listing, showing and dry runs need none.

use serde_json::{Value, json};

use crate::util::Room;

fn call(name: &str, arguments: Value) -> String {
    json!({"name": name, "arguments": arguments}).to_string()
}

/// Runs the calls through one `exec --jsonl`; their results in order.
fn exec(room: &Room, calls: &[String]) -> Vec<Value> {
    let run = room.run(&["exec", "--jsonl"], Some(&(calls.join("\n") + "\n")));
    assert_eq!(run.code, 0, "{run:?}");
    run.lines()
}

#[test]
fn list_show_and_dry_run_need_no_permission_and_undo_asks() {
    let room = Room::new();
    room.write("a.txt", "one\n");
    let results = exec(
        &room,
        &[
            call(
                "edit",
                json!({"file_path": "a.txt", "old_string": "one", "new_string": "two"}),
            ),
            call(
                "write",
                json!({"file_path": "new/b.txt", "content": "bee\n"}),
            ),
            call("checkpoint", json!({})),
            call("checkpoint", json!({"action": "show", "id": 1})),
            call("checkpoint", json!({"action": "undo", "dry_run": true})),
            call("checkpoint", json!({"action": "undo"})),
        ],
    );
    let list = &results[2];
    assert_eq!(list["is_error"], false, "{list}");
    let entries = list["metadata"]["checkpoints"].as_array().unwrap();
    assert_eq!(entries.len(), 2, "{list}");
    assert_eq!(entries[0]["tool"], "write");
    assert_eq!(entries[1]["paths"][0]["path"], "a.txt");
    assert!(
        list["output"].as_str().unwrap().contains("A new/b.txt"),
        "{list}"
    );
    let show = &results[3];
    assert!(show["output"].as_str().unwrap().contains("+two"), "{show}");
    assert_eq!(show["metadata"]["entry"]["id"], 1, "{show}");
    let dry = &results[4];
    assert_eq!(dry["is_error"], false, "{dry}");
    assert_eq!(dry["metadata"]["undo"]["target"], 2, "{dry}");
    assert_eq!(dry["metadata"]["undo"]["dry_run"], true, "{dry}");
    // Undo asks by default; with nobody to ask it is refused and nothing changes.
    let refused = &results[5];
    assert_eq!(refused["is_error"], true, "{refused}");
    assert_eq!(refused["metadata"]["permission"], "undo", "{refused}");
    assert_eq!(refused["metadata"]["pattern"], "latest", "{refused}");
    assert_eq!(room.read("new/b.txt"), "bee\n");
}

#[test]
fn an_allowed_undo_reverts_reports_and_can_itself_be_undone_but_force_can_be_denied() {
    let room = Room::new();
    room.write_user(
        "policy.json",
        json!({"rules": [
            {"permission": "undo", "pattern": "*", "action": "allow"},
            {"permission": "undo", "pattern": "* --force", "action": "deny"}
        ]})
        .to_string(),
    );
    room.write("a.txt", "one\n");
    let results = exec(
        &room,
        &[
            call(
                "write",
                json!({"file_path": "new/deep/b.txt", "content": "bee\n"}),
            ),
            call("bash", json!({"command": "echo changed > a.txt"})),
            call("checkpoint", json!({"action": "undo"})),
        ],
    );
    let undo = &results[2];
    assert_eq!(undo["is_error"], false, "{undo}");
    assert_eq!(undo["metadata"]["undo"]["target"], 2, "{undo}");
    assert_eq!(
        undo["metadata"]["undo"]["paths"],
        json!([{"path": "a.txt", "change": "M"}]),
        "{undo}"
    );
    let undo_id = undo["metadata"]["checkpoint"]["id"].as_i64().unwrap();
    assert_eq!(room.read("a.txt"), "one\n");

    // A person edits b.txt: undoing the write is a conflict, and forcing is denied.
    room.write("new/deep/b.txt", "person\n");
    let results = exec(
        &room,
        &[
            call("checkpoint", json!({"action": "undo"})),
            call("checkpoint", json!({"action": "undo", "force": true})),
            call("checkpoint", json!({"action": "undo", "id": undo_id})),
        ],
    );
    let conflict = &results[0];
    assert_eq!(conflict["is_error"], true, "{conflict}");
    assert_eq!(
        conflict["metadata"]["undo"]["conflicts"][0]
            .as_str()
            .unwrap()
            .split(':')
            .next(),
        Some("new/deep/b.txt"),
        "{conflict}"
    );
    assert_eq!(room.read("new/deep/b.txt"), "person\n", "left alone");
    let forced = &results[1];
    assert_eq!(forced["metadata"]["refused"], true, "{forced}");
    assert_eq!(forced["metadata"]["pattern"], "latest --force", "{forced}");
    assert_eq!(room.read("new/deep/b.txt"), "person\n", "left alone");
    // Undoing the undo brings the bash change back.
    let redo = &results[2];
    assert_eq!(redo["is_error"], false, "{redo}");
    assert_eq!(room.read("a.txt"), "changed\n");
}

#[test]
fn over_mcp_the_tool_is_listed_and_an_allowed_undo_runs() {
    let room = Room::new();
    room.write_user(
        "policy.json",
        json!({"rules": [{"permission": "undo", "pattern": "*", "action": "allow"}]}).to_string(),
    );
    let write = room.call("write", json!({"file_path": "made.txt", "content": "x\n"}));
    assert_eq!(write.code, 0, "{write:?}");
    let messages = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "test", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}),
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
            "params": {"name": "checkpoint", "arguments": {"action": "undo"}}}),
    ];
    let input: String = messages.iter().map(|m| format!("{m}\n")).collect();
    let run = room.run(&["mcp"], Some(&input));
    let answers = run.lines();
    let by_id = |id: i64| answers.iter().find(|a| a["id"] == id).unwrap().clone();
    let tools = by_id(2)["result"]["tools"].as_array().unwrap().clone();
    let tool = tools.iter().find(|t| t["name"] == "checkpoint").unwrap();
    assert_eq!(tool["annotations"]["destructiveHint"], true);
    let undo = by_id(3)["result"].clone();
    assert_eq!(undo["isError"], false, "{undo}");
    let meta = &undo["structuredContent"]["metadata"];
    assert_eq!(meta["undo"]["paths"][0]["path"], "made.txt", "{undo}");
    assert!(meta["checkpoint"]["id"].is_i64(), "{undo}");
    assert!(!room.path("made.txt").exists());
}
