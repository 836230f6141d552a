//! What a checkpoint holds: exactly its own call's changes.
//!
//! Calls running at the same time in one project keep their checkpoints apart: each
//! session edits, writes and undoes its own file in a random order (a seeded sequence per
//! session) while the others do the same, and its own model of that file says what the
//! file must hold after every step. An edit's checkpoint holds its file and nothing else;
//! an undo by the id an edit returned restores exactly that file; no other session's file
//! is ever touched. Changes no call made are recorded as such; a call that changed only
//! folders checkpoints do not keep says so, and an undo passing over it names it.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::mcp_http::{Server, events};
use crate::util::Room;

/// A small deterministic generator (xorshift), one per session.
struct Dice(u64);

impl Dice {
    fn roll(&mut self, sides: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % sides
    }
}

/// Allows undo without asking (the default asks).
fn allow_undo(room: &Room) {
    room.write_user(
        "policy.json",
        json!({"rules": [{"permission": "undo", "pattern": "*", "action": "allow"}]}).to_string(),
    );
}

/// One session of a Streamable HTTP server.
struct Client<'s> {
    server: &'s Server,
    session: String,
    next: i64,
}

impl Client<'_> {
    /// The whole result of a tool call (`structuredContent`).
    fn call(&mut self, tool: &str, arguments: Value) -> Value {
        self.next += 1;
        let (status, _, body) = self.server.post(
            &[("Mcp-Session-Id", &self.session)],
            &json!({"jsonrpc": "2.0", "id": self.next, "method": "tools/call",
                    "params": {"name": tool, "arguments": arguments}}),
        );
        assert_eq!(status, 200, "{body}");
        let answer: Value = if body.trim_start().starts_with('{') {
            serde_json::from_str(&body).unwrap()
        } else {
            events(&body)
                .into_iter()
                .rfind(|m| m.get("result").is_some() || m.get("error").is_some())
                .unwrap_or_else(|| panic!("no result in {body}"))
        };
        answer["result"]["structuredContent"].clone()
    }
}

/// What one session did to its own file, step by step; returns what the file must hold.
fn play(client: &mut Client, room: &Room, me: usize, seed: u64) -> String {
    let file = format!("s{me}.txt");
    let mut dice = Dice(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let mut holds = room.read(&file);
    // The checkpoints of this session's changes not undone yet, with what the file held
    // before each.
    let mut undoable: Vec<(i64, String)> = Vec::new();
    for step in 0..8 {
        let roll = dice.roll(3);
        if roll == 2 && !undoable.is_empty() {
            let (id, before) = undoable.pop().unwrap();
            let undo = client.call("checkpoint", json!({"action": "undo", "id": id}));
            assert_eq!(undo["is_error"], false, "session {me} undo {id}: {undo}");
            assert!(
                undo["output"]
                    .as_str()
                    .unwrap()
                    .starts_with(&format!("reverted checkpoint {id} ")),
                "{undo}"
            );
            let paths: Vec<&str> = undo["metadata"]["undo"]["paths"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| p["path"].as_str().unwrap())
                .collect();
            assert_eq!(paths, [file.as_str()], "session {me}: {undo}");
            holds = before;
        } else {
            let line = format!("session {me} step {step}\n");
            let result = if roll == 0 {
                client.call(
                    "edit",
                    json!({"file_path": file, "old_string": holds.trim_end(), "new_string": line.trim_end()}),
                )
            } else {
                client.call("write", json!({"file_path": file, "content": line}))
            };
            assert_eq!(result["is_error"], false, "session {me}: {result}");
            let checkpoint = &result["metadata"]["checkpoint"];
            assert_eq!(checkpoint["files"], 1, "session {me}: {result}");
            let id = checkpoint["id"].as_i64().unwrap();
            let shown = client.call("checkpoint", json!({"action": "show", "id": id}));
            let text = shown["output"].as_str().unwrap();
            assert!(
                text.contains(&file),
                "checkpoint {id} of session {me}: {text}"
            );
            assert_eq!(
                text.matches(".txt").count(),
                text.matches(&file).count(),
                "checkpoint {id} of session {me} holds another file: {text}"
            );
            undoable.push((id, holds));
            holds = line;
        }
        assert_eq!(room.read(&file), holds, "session {me} after step {step}");
    }
    holds
}

#[test]
fn twenty_sessions_on_one_server_each_undo_only_their_own_changes() {
    let room = Room::new();
    allow_undo(&room);
    const SESSIONS: usize = 20;
    for me in 0..SESSIONS {
        room.write(&format!("s{me}.txt"), format!("session {me} start\n"));
    }
    let server = Server::start(&room, &[]);
    let expected: BTreeMap<usize, String> = std::thread::scope(|scope| {
        let players: Vec<_> = (0..SESSIONS)
            .map(|me| {
                let (room, server) = (&room, &server);
                scope.spawn(move || {
                    let mut client = Client {
                        server,
                        session: server.initialize(),
                        next: 1,
                    };
                    (me, play(&mut client, room, me, me as u64 + 1))
                })
            })
            .collect();
        players.into_iter().map(|p| p.join().unwrap()).collect()
    });
    for (me, holds) in expected {
        assert_eq!(room.read(&format!("s{me}.txt")), holds, "session {me}");
    }
}

#[test]
fn processes_at_once_keep_their_checkpoints_apart_and_a_command_beside_them_records_only_its_own() {
    let room = Room::new();
    allow_undo(&room);
    const WRITERS: usize = 6;
    for me in 0..WRITERS {
        room.write(&format!("s{me}.txt"), format!("session {me} start\n"));
    }
    room.write("log.txt", "");
    let expected: BTreeMap<usize, String> = std::thread::scope(|scope| {
        let room = &room;
        // A command appending to its own file, again and again, beside the file tools.
        let command = scope.spawn(move || {
            let mut ids = Vec::new();
            for round in 0..6 {
                let run = room.call(
                    "bash",
                    json!({"command": format!("echo round {round} >> log.txt")}),
                );
                assert_eq!(run.code, 0, "{run:?}");
                let result = run.json();
                ids.push(result["metadata"]["checkpoint"]["id"].as_i64().unwrap());
            }
            ids
        });
        let writers: Vec<_> = (0..WRITERS)
            .map(|me| {
                scope.spawn(move || {
                    let file = format!("s{me}.txt");
                    let mut dice = Dice(me as u64 * 31 + 7);
                    let mut holds = room.read(&file);
                    let mut undoable: Vec<(i64, String)> = Vec::new();
                    for step in 0..6 {
                        if dice.roll(3) == 2 && !undoable.is_empty() {
                            let (id, before) = undoable.pop().unwrap();
                            let run = room.run(&["undo", &id.to_string()], None);
                            assert_eq!(run.code, 0, "writer {me} undo {id}: {run:?}");
                            holds = before;
                        } else {
                            let line = format!("session {me} step {step}\n");
                            let run =
                                room.call("write", json!({"file_path": file, "content": line}));
                            assert_eq!(run.code, 0, "{run:?}");
                            let result = run.json();
                            assert_eq!(result["metadata"]["checkpoint"]["files"], 1, "{result}");
                            let id = result["metadata"]["checkpoint"]["id"].as_i64().unwrap();
                            undoable.push((id, holds));
                            holds = line;
                        }
                        assert_eq!(room.read(&file), holds, "writer {me} after step {step}");
                    }
                    (me, holds)
                })
            })
            .collect();
        let expected = writers.into_iter().map(|w| w.join().unwrap()).collect();
        // Every checkpoint of the command holds log.txt and nothing else.
        for id in command.join().unwrap() {
            let list = room.run(&["checkpoints", "show", &id.to_string()], None);
            let text = list.stdout;
            assert!(text.contains("log.txt"), "{text}");
            // Nor anybody's staged file (`.s0.txt.PID-N.tinytool.tmp`).
            assert!(!text.contains("tinytool.tmp"), "{text}");
            for me in 0..WRITERS {
                assert!(
                    !text.contains(&format!("s{me}.txt")),
                    "checkpoint {id}: {text}"
                );
            }
        }
        expected
    });
    for (me, holds) in expected {
        assert_eq!(room.read(&format!("s{me}.txt")), holds, "writer {me}");
    }
    assert_eq!(room.read("log.txt").lines().count(), 6);
}

#[test]
fn an_undo_of_a_file_another_call_changed_since_is_refused_naming_that_call() {
    let room = Room::new();
    room.write("a.txt", "one\n");
    let first = room.call("write", json!({"file_path": "a.txt", "content": "two\n"}));
    let first = first.json()["metadata"]["checkpoint"]["id"]
        .as_i64()
        .unwrap();
    let second = room.call("write", json!({"file_path": "a.txt", "content": "three\n"}));
    let second = second.json()["metadata"]["checkpoint"]["id"]
        .as_i64()
        .unwrap();
    let refused = room.run(&["undo", &first.to_string()], None);
    assert_ne!(refused.code, 0, "{refused:?}");
    let text = format!("{}{}", refused.stdout, refused.stderr);
    assert!(
        text.contains(&format!(
            "a.txt: changed since by checkpoint {second} (write: a.txt); undo {second} first"
        )),
        "{text}"
    );
    assert_eq!(room.read("a.txt"), "three\n");
    // Once the later call is undone, the earlier one undoes cleanly.
    let undo = room.run(&["undo", &second.to_string()], None);
    assert_eq!(undo.code, 0, "{undo:?}");
    let undo = room.run(&["undo", &first.to_string()], None);
    assert_eq!(undo.code, 0, "{undo:?}");
    assert_eq!(room.read("a.txt"), "one\n");
}

#[test]
fn a_file_tool_call_records_its_own_file_even_where_walks_do_not_look() {
    let room = Room::new();
    room.write(".gitignore", "generated/\n");
    room.write("generated/out.txt", "old\n");
    let run = room.call(
        "write",
        json!({"file_path": "generated/out.txt", "content": "new\n"}),
    );
    let result = run.json();
    assert_eq!(result["metadata"]["checkpoint"]["files"], 1, "{result}");
    let undo = room.run(&["undo"], None);
    assert_eq!(undo.code, 0, "{undo:?}");
    assert_eq!(room.read("generated/out.txt"), "old\n");
    // A later command's walk does not record it again (it is not in the stored tree).
    let run = room.call("bash", json!({"command": "echo x > other.txt"}));
    let result = run.json();
    assert_eq!(result["metadata"]["checkpoint"]["files"], 1, "{result}");
}

#[test]
fn a_change_no_call_made_is_recorded_as_such_and_an_undo_that_meets_it_names_it() {
    let room = Room::new();
    room.write("a.txt", "one\n");
    let run = room.call("bash", json!({"command": "echo two > a.txt"}));
    let first = run.json()["metadata"]["checkpoint"]["id"].as_i64().unwrap();
    // A person's editor, between calls.
    room.write("a.txt", "mine\n");
    let run = room.call("bash", json!({"command": "echo x > b.txt"}));
    assert_eq!(run.json()["metadata"]["checkpoint"]["files"], 1, "{run:?}");
    let list = room.run(&["checkpoints"], None).stdout;
    let outside = list
        .lines()
        .find(|l| l.contains(" outside "))
        .unwrap_or_else(|| panic!("{list}"));
    let id: i64 = outside.split(' ').next().unwrap().parse().unwrap();
    assert!(list.contains("M a.txt"), "{list}");
    let refused = room.run(&["undo", &first.to_string()], None);
    assert_ne!(refused.code, 0, "{refused:?}");
    assert!(
        refused.stdout.contains(&format!(
            "a.txt: changed since by checkpoint {id} (outside: "
        )),
        "{refused:?}"
    );
    assert_eq!(room.read("a.txt"), "mine\n");
}

#[test]
fn a_call_that_changes_only_folders_checkpoints_do_not_keep_says_so_and_undo_names_it() {
    let room = Room::new();
    room.write("src/a.txt", "one\n");
    room.write("node_modules/old/index.js", "x\n");
    room.write("venv/pyvenv.cfg", "home = /usr/bin\n");
    room.write("venv/lib/python3.11/site-packages/old/__init__.py", "");
    let run = room.call("bash", json!({"command": "echo two > src/a.txt"}));
    let first = run.json()["metadata"]["checkpoint"]["id"].as_i64().unwrap();
    let run = room.call(
        "bash",
        json!({"command": "mkdir node_modules/new && echo y > node_modules/new/index.js"}),
    );
    let result = run.json();
    let checkpoint = &result["metadata"]["checkpoint"];
    assert_eq!(checkpoint["files"], 0, "{result}");
    assert_eq!(
        checkpoint["left_out"],
        json!(["node_modules/ (installed packages)"]),
        "{result}"
    );
    assert!(
        checkpoint["note"].as_str().unwrap().starts_with(
            "changed only node_modules/ (installed packages), which checkpoints do not keep"
        ),
        "{result}"
    );
    let second = checkpoint["id"].as_i64().unwrap();
    // pip installing into a virtualenv no ignore file names.
    let run = room.call(
        "bash",
        json!({"command": "mkdir venv/lib/python3.11/site-packages/new"}),
    );
    let result = run.json();
    assert_eq!(
        result["metadata"]["checkpoint"]["left_out"],
        json!(["venv/ (a Python virtual environment)"]),
        "{result}"
    );
    let third = result["metadata"]["checkpoint"]["id"].as_i64().unwrap();
    // The undo reverts the older call and names the ones it passes over.
    let undo = room.run(&["undo"], None);
    assert_eq!(undo.code, 0, "{undo:?}");
    assert!(
        undo.stdout
            .starts_with(&format!("reverted checkpoint {first} ")),
        "{undo:?}"
    );
    for id in [second, third] {
        assert!(
            undo.stdout
                .contains(&format!("skipped checkpoint {id} (bash: ")),
            "{undo:?}"
        );
    }
    assert_eq!(room.read("src/a.txt"), "one\n");
    assert!(room.path("node_modules/new/index.js").exists());
    // Undoing such a call by its id says there is nothing to restore.
    let undo = room.run(&["undo", &second.to_string()], None);
    assert_ne!(undo.code, 0, "{undo:?}");
    assert!(
        undo.stderr
            .contains("changed only node_modules/ (installed packages)"),
        "{undo:?}"
    );
    let list = room.run(&["checkpoints"], None).stdout;
    assert!(
        list.contains("(also changed, not kept: node_modules/"),
        "{list}"
    );
}

#[test]
fn an_unchanged_left_out_folder_leaves_no_checkpoint() {
    let room = Room::new();
    room.write("node_modules/old/index.js", "x\n");
    let run = room.call("bash", json!({"command": "sh -c true"}));
    let result = run.json();
    assert!(result["metadata"].get("checkpoint").is_none(), "{result}");
}

#[test]
fn calls_editing_one_file_at_once_each_record_only_their_own_change() {
    let room = Room::new();
    allow_undo(&room);
    const CALLS: usize = 8;
    let original: String = (0..CALLS).map(|i| format!("slot{i}\n")).collect();
    room.write("shared.txt", &original);
    let ids: Vec<(usize, i64)> = std::thread::scope(|scope| {
        let room = &room;
        let calls: Vec<_> = (0..CALLS)
            .map(|i| {
                scope.spawn(move || {
                    let run = room.call(
                        "edit",
                        json!({"file_path": "shared.txt", "old_string": format!("slot{i}"),
                               "new_string": format!("done{i}")}),
                    );
                    assert_eq!(run.code, 0, "{run:?}");
                    (
                        i,
                        run.json()["metadata"]["checkpoint"]["id"].as_i64().unwrap(),
                    )
                })
            })
            .collect();
        calls.into_iter().map(|c| c.join().unwrap()).collect()
    });
    for (i, id) in &ids {
        let shown = room
            .run(&["checkpoints", "show", &id.to_string()], None)
            .stdout;
        assert!(
            shown.contains(&format!("-slot{i}\n")) && shown.contains(&format!("+done{i}\n")),
            "checkpoint {id} of edit {i}: {shown}"
        );
        assert_eq!(
            shown.matches("\n+done").count(),
            1,
            "checkpoint {id}: {shown}"
        );
    }
    for _ in 0..CALLS {
        let undo = room.run(&["undo"], None);
        assert_eq!(undo.code, 0, "{undo:?}");
    }
    assert_eq!(room.read("shared.txt"), original);
}
