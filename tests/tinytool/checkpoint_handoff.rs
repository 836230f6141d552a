//! A monitor's or background job's checkpoint is kept open by its supervisor and closed
//! when the command ends: what the command did after the starting call returned
//! is in that checkpoint, and undo takes it back.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::util::Room;

/// Waits (at most 30 s) until checkpoint `id` is listed as done; returns its entry.
fn wait_done(room: &Room, id: i64) -> Value {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let list = room.run(&["checkpoints", "--json"], None).json();
        if let Some(entry) = list
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["id"] == id && c["status"] == "done")
        {
            return entry.clone();
        }
        assert!(
            Instant::now() < deadline,
            "checkpoint {id} never closed: {list}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn paths(entry: &Value) -> Vec<String> {
    entry["paths"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["path"].as_str().unwrap().to_string())
        .collect()
}

/// Starts a monitor; returns the id of its (still open) checkpoint.
fn start_monitor(room: &Room, command: &str) -> i64 {
    let run = room.call("monitor", json!({"command": command}));
    assert_eq!(run.code, 0, "{run:?}");
    let result = run.json();
    let checkpoint = &result["metadata"]["checkpoint"];
    assert_eq!(checkpoint["open"], true, "{result}");
    checkpoint["id"].as_i64().unwrap()
}

#[test]
fn what_a_monitor_writes_after_its_start_is_in_its_checkpoint_and_undo_removes_it() {
    let room = Room::new();
    room.write("kept.txt", "kept\n");
    let id = start_monitor(
        &room,
        "sleep 1; echo late > late.txt; echo more >> kept.txt",
    );
    let entry = wait_done(&room, id);
    assert_eq!(entry["tool"], "monitor", "{entry}");
    assert_eq!(paths(&entry), ["kept.txt", "late.txt"], "{entry}");
    assert_eq!(room.read("late.txt"), "late\n");
    let undo = room.run(&["undo", &id.to_string()], None);
    assert_eq!(undo.code, 0, "{}{}", undo.stdout, undo.stderr);
    assert!(!room.path("late.txt").exists());
    assert_eq!(room.read("kept.txt"), "kept\n");
}

#[test]
fn a_stopped_monitor_closes_its_checkpoint_and_a_call_meanwhile_records_the_overlap() {
    let room = Room::new();
    let id = start_monitor(&room, "echo a > a.txt; sleep 30");
    let deadline = Instant::now() + Duration::from_secs(20);
    while !room.path("a.txt").exists() {
        assert!(Instant::now() < deadline, "the monitor never wrote");
        std::thread::sleep(Duration::from_millis(20));
    }
    // A call while the monitor runs sees its checkpoint open and alive.
    let bash = room.call("bash", json!({"command": "echo b > b.txt"}));
    assert_eq!(bash.code, 0, "{bash:?}");
    let bash_id = bash.json()["metadata"]["checkpoint"]["id"]
        .as_i64()
        .unwrap();
    let list = room.run(&["checkpoints", "--json"], None).json();
    let open = list.as_array().unwrap().iter().find(|c| c["id"] == id);
    assert_eq!(open.unwrap()["status"], "open", "{list}");
    let bash_entry = list.as_array().unwrap().iter().find(|c| c["id"] == bash_id);
    assert_eq!(bash_entry.unwrap()["overlaps"], json!([id]), "{list}");

    let stop = room.call("monitor", json!({"action": "stop", "monitor_id": "mon_1"}));
    assert_eq!(stop.code, 0, "{stop:?}");
    let entry = wait_done(&room, id);
    assert!(paths(&entry).contains(&"a.txt".to_string()), "{entry}");
    let undo = room.run(&["undo", &id.to_string(), "--force"], None);
    assert_eq!(undo.code, 0, "{}{}", undo.stdout, undo.stderr);
    assert!(!room.path("a.txt").exists());
}

#[test]
fn a_killed_supervisor_leaves_its_checkpoint_to_the_next_walk() {
    let room = Room::new();
    let id = start_monitor(&room, "echo a > a.txt; sleep 30");
    let deadline = Instant::now() + Duration::from_secs(20);
    while !room.path("a.txt").exists() {
        assert!(Instant::now() < deadline, "the monitor never wrote");
        std::thread::sleep(Duration::from_millis(20));
    }
    let db = rusqlite::Connection::open_with_flags(
        room.path(".tinytool/state.db"),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
    )
    .unwrap();
    let pid: i64 = db
        .query_row(
            "SELECT supervisor_pid FROM monitors WHERE id = 1",
            [],
            |r| r.get(0),
        )
        .unwrap();
    drop(db);
    // SAFETY: SIGKILL to the supervisor this test started.
    unsafe {
        libc::kill(pid as libc::pid_t, libc::SIGKILL);
    }
    let deadline = Instant::now() + Duration::from_secs(20);
    while unsafe { libc::kill(pid as libc::pid_t, 0) } == 0 {
        assert!(Instant::now() < deadline, "the supervisor survived SIGKILL");
        std::thread::sleep(Duration::from_millis(20));
    }
    // The next call's walk completes it.
    let bash = room.call("bash", json!({"command": "echo b > b.txt"}));
    assert_eq!(bash.code, 0, "{bash:?}");
    let entry = wait_done(&room, id);
    assert!(paths(&entry).contains(&"a.txt".to_string()), "{entry}");
}

#[test]
fn what_a_background_task_writes_is_in_its_checkpoint() {
    let room = Room::new();
    room.write_user(
        "config.json",
        json!({"subagents": {"writer": {"command": ["sh", "-c",
            "while [ ! -f go ]; do sleep 0.02; done; echo done > result.txt"]}}})
        .to_string(),
    );
    let run = room.call(
        "task",
        json!({"description": "w", "prompt": "p", "subagent_type": "writer", "background": true}),
    );
    assert_eq!(run.code, 0, "{run:?}");
    let result = run.json();
    assert_eq!(result["metadata"]["checkpoint"]["open"], true, "{result}");
    let id = result["metadata"]["checkpoint"]["id"].as_i64().unwrap();
    // The call returned; the job writes afterwards (`go` is a person's file, written
    // between calls: it counts as the job's, as any change while it runs).
    room.write("go", "");
    let entry = wait_done(&room, id);
    assert_eq!(entry["tool"], "task", "{entry}");
    assert!(paths(&entry).contains(&"result.txt".to_string()), "{entry}");
    let undo = room.run(&["undo", &id.to_string()], None);
    assert_eq!(undo.code, 0, "{}{}", undo.stdout, undo.stderr);
    assert!(!room.path("result.txt").exists());
}

/// The status of checkpoint `id` in the state database, without any tinytool settling.
fn stored_status(room: &Room, id: i64) -> Option<String> {
    let db = rusqlite::Connection::open_with_flags(
        room.path(".tinytool/state.db"),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
    )
    .unwrap();
    db.query_row("SELECT status FROM checkpoints WHERE id = ?1", [id], |r| {
        r.get(0)
    })
    .ok()
}

#[test]
fn journal_recovery_completes_a_killed_calls_checkpoint_at_once() {
    let room = Room::new();
    room.write("a.txt", "a\n");
    room.write("b.txt", "b\n");
    // A first call makes the baseline, so the killed call's checkpoint is number 2.
    let base = room.call("write", json!({"file_path": "c.txt", "content": "c\n"}));
    assert_eq!(base.code, 0, "{base:?}");
    let patch = "*** Begin Patch\n*** Update File: a.txt\n@@\n-a\n+A\n*** Update File: b.txt\n@@\n-b\n+B\n*** End Patch";
    let mut cmd = room.command(&["apply_patch"]);
    // Killed after both installs: journal recovery rolls the commit forward.
    cmd.env("TINYTOOL_TEST_KILL_AT_CHANGE", "2");
    let killed =
        crate::util::run_command(cmd, Some(json!({"patch": patch}).to_string().as_bytes()));
    assert_ne!(killed.code, 0, "{killed:?}");
    assert_eq!(stored_status(&room, 2).as_deref(), Some("open"));
    // A read takes no checkpoint, but its journal recovery completes the killed call's.
    let read = room.call("read", json!({"file_path": "a.txt"}));
    assert_eq!(read.code, 0, "{read:?}");
    assert_eq!(stored_status(&room, 2).as_deref(), Some("done"));
    assert_eq!(room.read("a.txt"), "A\n");
    let undo = room.run(&["undo"], None);
    assert_eq!(undo.code, 0, "{}{}", undo.stdout, undo.stderr);
    assert_eq!(
        (room.read("a.txt"), room.read("b.txt")),
        ("a\n".into(), "b\n".into())
    );
}

#[test]
fn listing_completes_a_killed_calls_checkpoint_first() {
    let room = Room::new();
    room.write("a.txt", "before\n");
    let mut cmd = room.command(&["bash"]);
    cmd.stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    let mut child = cmd.spawn().unwrap();
    let call = json!({"command": "echo during > a.txt; sleep 30"}).to_string();
    std::io::Write::write_all(child.stdin.as_mut().unwrap(), call.as_bytes()).unwrap();
    drop(child.stdin.take());
    let deadline = Instant::now() + Duration::from_secs(20);
    while room.read("a.txt") != "during\n" {
        assert!(Instant::now() < deadline, "the call never ran");
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(stored_status(&room, 1).as_deref(), Some("open"));
    let list = room.run(&["checkpoints", "--json"], None).json();
    assert_eq!(list[0]["status"], "done", "{list}");
    assert_eq!(list[0]["paths"][0]["path"], "a.txt", "{list}");
}

#[test]
fn a_cancelled_background_task_closes_its_checkpoint() {
    let room = Room::new();
    room.write_user(
        "config.json",
        json!({"subagents": {"slow": {"command": ["sh", "-c",
            "echo started > started.txt; sleep 30"]}}})
        .to_string(),
    );
    let run = room.call(
        "task",
        json!({"description": "s", "prompt": "p", "subagent_type": "slow", "background": true}),
    );
    assert_eq!(run.code, 0, "{run:?}");
    let id = run.json()["metadata"]["checkpoint"]["id"].as_i64().unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while !room.path("started.txt").exists() {
        assert!(Instant::now() < deadline, "the job never wrote");
        std::thread::sleep(Duration::from_millis(20));
    }
    let cancel = room.call("task", json!({"task_id": "job_1", "cancel": true}));
    assert_eq!(cancel.code, 0, "{cancel:?}");
    let entry = wait_done(&room, id);
    assert_eq!(paths(&entry), ["started.txt"], "{entry}");
}

#[test]
fn in_one_exec_stream_the_monitor_keeps_its_checkpoint_and_later_calls_overlap_it() {
    let room = Room::new();
    let calls = [
        json!({"name": "monitor", "arguments": {"command": "while [ ! -f go ]; do sleep 0.02; done; echo m > m.txt"}}),
        json!({"name": "bash", "arguments": {"command": "echo b > b.txt"}}),
    ];
    let input: String = calls.iter().map(|c| format!("{c}\n")).collect();
    let run = room.run(&["exec", "--jsonl"], Some(&input));
    assert_eq!(run.code, 0, "{run:?}");
    let results = run.lines();
    let id = results[0]["metadata"]["checkpoint"]["id"].as_i64().unwrap();
    assert_eq!(
        results[0]["metadata"]["checkpoint"]["open"], true,
        "{results:?}"
    );
    // The bash call ran in the same process while the monitor's supervisor owned its
    // checkpoint: it records the overlap.
    let bash_id = results[1]["metadata"]["checkpoint"]["id"].as_i64().unwrap();
    let list = room.run(&["checkpoints", "--json"], None).json();
    let bash_entry = list.as_array().unwrap().iter().find(|c| c["id"] == bash_id);
    assert_eq!(bash_entry.unwrap()["overlaps"], json!([id]), "{list}");
    // The stream has ended; the monitor writes afterwards, into its own checkpoint.
    room.write("go", "");
    let entry = wait_done(&room, id);
    assert!(paths(&entry).contains(&"m.txt".to_string()), "{entry}");
    assert!(!paths(&entry).contains(&"b.txt".to_string()), "{entry}");
}
