//! `monitor` and `task`: background work under detached supervisors, with real processes.
//!
//! Every check that "nothing is left" looks two ways: for live processes carrying the
//! work's marker (`TINYTOOL_SUPERVISED=<token>`, read from the state database: the
//! supervisor, its sentinel and the whole command tree), and for processes — zombies
//! included — named after a uniquely named `sleep` the command runs. Waits are bounded
//! polls for a state, never sleeps that assert timing.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::util::{
    Room, Run, escaped_sleep, living_named, marked_sleep, processes_named, read_events, stable,
    start_monitor, survivors_of_sigkill,
};

/// The bound of every poll: generous for a loaded 2-core machine; passing tests end as soon
/// as the state is reached.
const WITHIN: Duration = Duration::from_secs(15);

/// Polls `f` until it yields a value or `WITHIN` passes.
fn wait_for<T>(what: &str, mut f: impl FnMut() -> Option<T>) -> T {
    let until = Instant::now() + WITHIN;
    loop {
        if let Some(value) = f() {
            return value;
        }
        assert!(Instant::now() < until, "gave up waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The stored token, supervisor pid and process group of a monitor or job.
fn supervision(room: &Room, table: &str, id: &str) -> (String, i64, i64) {
    let row: i64 = id.rsplit('_').next().unwrap().parse().unwrap();
    let db = rusqlite::Connection::open_with_flags(
        room.path(".tinytool/state.db"),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
    )
    .unwrap();
    db.query_row(
        &format!("SELECT token, supervisor_pid, pgid FROM {table} WHERE id = ?1"),
        [row],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
    )
    .unwrap()
}

/// Live processes whose environment carries the marker of `token`.
fn marked(token: &str) -> Vec<i32> {
    let marker = format!("TINYTOOL_SUPERVISED={token}");
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/environ"))
                .is_ok_and(|env| env.split(|b| *b == 0).any(|e| e == marker.as_bytes()))
        })
        .collect()
}

/// Asserts that nothing of the work is left, not even a zombie (bounded wait for the
/// supervisor's own exit): what its supervisor killed, it reaped.
fn assert_nothing_left(token: &str, sleep: &str) {
    assert_gone(token, sleep, true);
}

/// Asserts that nothing of the work still runs. After a supervisor was killed its
/// orphans are reaped by init, not by tinytool, so zombies are not counted.
fn assert_nothing_running(token: &str, sleep: &str) {
    assert_gone(token, sleep, false);
}

fn assert_gone(token: &str, sleep: &str, zombies: bool) {
    let named = || -> Vec<String> {
        processes_named(sleep)
            .into_iter()
            .filter(|stat| zombies || !stat.contains(") Z "))
            .collect()
    };
    let until = Instant::now() + WITHIN;
    while (!marked(token).is_empty() || !named().is_empty()) && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(marked(token), Vec::<i32>::new(), "marked processes left");
    assert_eq!(named(), Vec::<String>::new(), "sleeps left");
}

/// The stored monitor `id` as `tinytool state monitors` shows it (reading nothing away).
fn stored_monitor(room: &Room, id: &str) -> Value {
    let all = room.run(&["state", "monitors"], None).json();
    all.as_array()
        .unwrap()
        .iter()
        .find(|m| m["id"] == id)
        .cloned()
        .unwrap_or(Value::Null)
}

/// Waits until monitor `id` has at least `lines` unread lines.
fn wait_lines(room: &Room, id: &str, lines: u64) {
    wait_for(&format!("{lines} lines from {id}"), || {
        (stored_monitor(room, id)["buffered_lines"].as_u64() >= Some(lines)).then_some(())
    });
}

/// Waits until monitor `id` has ended.
fn wait_end(room: &Room, id: &str) {
    wait_for(&format!("the end of {id}"), || {
        (stored_monitor(room, id)["running"] == false).then_some(())
    });
}

fn monitor(room: &Room, args: Value) -> Run {
    room.call("monitor", args)
}

/// Starts a monitor and returns its id.
fn start(room: &Room, command: &str) -> String {
    let run = monitor(room, json!({"command": command}));
    assert_eq!(run.code, 0, "{run:?}");
    let out = run.output();
    let id = out
        .split("(ID: ")
        .nth(1)
        .and_then(|rest| rest.split(')').next())
        .unwrap_or_else(|| panic!("no id in {out}"))
        .to_string();
    assert_eq!(run.json()["metadata"]["monitor_id"], id.as_str());
    id
}

fn read(room: &Room, id: &str) -> String {
    let run = monitor(room, json!({"action": "read", "monitor_id": id}));
    assert_eq!(run.code, 0, "{run:?}");
    run.output()
}

/// Reads until the output contains `needle`; returns that output.
fn read_until(room: &Room, id: &str, needle: &str) -> String {
    wait_for(&format!("{needle:?} from {id}"), || {
        let out = read(room, id);
        out.contains(needle).then_some(out)
    })
}

#[test]
fn start_then_reads_show_only_new_lines_then_stop_leaves_nothing() {
    let room = Room::new();
    let sleep = marked_sleep(&room);
    let id = start(
        &room,
        &format!(
            "echo one; echo warn >&2; while [ ! -f go ]; do sleep 0.02; done; echo two; ./{sleep} 30 & ./{sleep} 31"
        ),
    );
    assert_eq!(id, "mon_1");
    let (token, _, _) = supervision(&room, "monitors", &id);
    wait_lines(&room, &id, 2);
    let first = read(&room, &id);
    assert!(
        first.contains("\none\n") || first.ends_with("\none"),
        "{first}"
    );
    assert!(first.contains("STDERR: warn"), "{first}");
    assert!(first.starts_with("[Monitor mon_1 ("), "{first}");
    assert!(first.contains("\u{2014} running]"), "{first}");
    // What was read is gone.
    let again = read(&room, &id);
    assert!(!again.lines().skip(1).any(|l| l == "one"), "{again}");
    assert!(again.ends_with("(no new output)"), "{again}");
    room.write("go", "");
    wait_lines(&room, &id, 1);
    let second = read(&room, &id);
    assert!(second.ends_with("\ntwo"), "{second}");
    assert!(!second.lines().skip(1).any(|l| l == "one"), "{second}");
    wait_for("both sleeps", || {
        (processes_named(&sleep).len() == 2).then_some(())
    });
    let list = monitor(&room, json!({"action": "list"}));
    let entries: Value = serde_json::from_str(&list.output()).unwrap();
    assert_eq!(entries[0]["id"], "mon_1");
    assert_eq!(entries[0]["running"], true);

    let stopped = monitor(&room, json!({"action": "stop", "monitor_id": id}));
    assert_eq!(stopped.code, 0, "{stopped:?}");
    assert_eq!(stopped.output(), "Monitor mon_1 stopped");
    assert_nothing_left(&token, &sleep);
    // A stopped monitor leaves the list; reading it by id reports how it ended.
    assert_eq!(monitor(&room, json!({"action": "list"})).output(), "[]");
    assert!(read(&room, &id).starts_with("[Monitor mon_1 ("));
    assert!(read(&room, &id).contains("\u{2014} stopped]"));
}

#[test]
fn output_shapes() {
    let room = Room::new();
    let run = monitor(
        &room,
        json!({"command": "echo hello; echo oops >&2", "description": "greeter", "timeout_ms": 60000}),
    );
    crate::snapshot!("monitor_start", crate::util::stable(run.json()));
    wait_end(&room, "mon_1");
    let out = read(&room, "mon_1");
    // An ended monitor has flushed every line: the end is recorded last.
    assert!(out.contains("STDERR: oops"), "{out}");
    crate::snapshot_text!("monitor_read_exited", out);
    // Once its end was read, it leaves the list.
    crate::snapshot_text!(
        "monitor_list_empty",
        monitor(&room, json!({"action": "list"})).output()
    );
    let listed = monitor(&room, json!({"command": "sleep 30", "timeout_ms": 60000}));
    assert_eq!(listed.code, 0);
    let mut list: Value =
        serde_json::from_str(&monitor(&room, json!({"action": "list"})).output()).unwrap();
    for entry in list.as_array_mut().unwrap() {
        let started = entry["started"].as_str().unwrap();
        assert!(started.ends_with('Z') && started.len() == 20, "{started}");
        entry["started"] = json!("[time]");
        entry["deadline"] = json!("[time]");
    }
    crate::snapshot!("monitor_list", list);
    let mut state = room.run(&["state", "monitors"], None).json();
    for entry in state.as_array_mut().unwrap() {
        for key in ["started", "deadline", "ended"] {
            if !entry[key].is_null() {
                entry[key] = json!("[time]");
            }
        }
    }
    crate::snapshot!("state_monitors", state);
    assert_eq!(
        monitor(&room, json!({"action": "stop", "monitor_id": "mon_2"})).output(),
        "Monitor mon_2 stopped"
    );
    let again = monitor(&room, json!({"monitor_id": "mon_2"}));
    assert_eq!(again.output(), "Monitor mon_2 had already ended: stopped");
}

#[test]
fn only_the_newest_hundred_unread_lines_are_kept() {
    let room = Room::new();
    let id = start(&room, "seq 1 250");
    wait_end(&room, &id);
    let out = read(&room, &id);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines[0],
        "[Monitor mon_1 (seq 1 250) \u{2014} exited with code 0]"
    );
    assert!(
        lines[1].starts_with(
            "[150 earlier lines not in this read (a read returns the newest 100 unread lines): \
             every line is in .tinytool/outputs/"
        ),
        "{}",
        lines[1]
    );
    // 102 lines are within the preview's maxima: all of them are shown.
    assert_eq!(lines[2], "151");
    assert_eq!(lines.len(), 102);
    assert_eq!(lines.last(), Some(&"250"));
    // Read lines are gone; the end was reported, so it left the list.
    assert!(read(&room, &id).ends_with("(no new output)"));
    assert_eq!(monitor(&room, json!({"action": "list"})).output(), "[]");
}

#[test]
fn a_sixth_running_monitor_is_refused() {
    let room = Room::new();
    let sleep = marked_sleep(&room);
    let ids: Vec<String> = (0..5)
        .map(|_| start(&room, &format!("./{sleep} 30")))
        .collect();
    assert_eq!(ids, ["mon_1", "mon_2", "mon_3", "mon_4", "mon_5"]);
    let sixth = monitor(&room, json!({"command": format!("./{sleep} 30")}));
    assert_eq!(sixth.code, 1, "{sixth:?}");
    crate::snapshot_text!("monitor_sixth_refused", sixth.output());
    let tokens: Vec<String> = ids
        .iter()
        .map(|id| supervision(&room, "monitors", id).0)
        .collect();
    for id in &ids {
        let run = monitor(&room, json!({"action": "stop", "monitor_id": id}));
        assert_eq!(run.code, 0, "{run:?}");
    }
    for token in &tokens {
        assert_nothing_left(token, &sleep);
    }
    // The slots are free again.
    let id = start(&room, "true");
    assert_eq!(id, "mon_6", "a refused start takes no id");
}

#[test]
fn the_deadline_stops_a_monitor_and_leaves_nothing() {
    let room = Room::new();
    let sleep = marked_sleep(&room);
    let run = monitor(
        &room,
        json!({"command": format!("trap '' TERM; ./{sleep} 30 & ./{sleep} 31"), "timeout_ms": 300}),
    );
    assert_eq!(run.code, 0, "{run:?}");
    let (token, _, _) = supervision(&room, "monitors", "mon_1");
    let out = read_until(&room, "mon_1", "deadline");
    assert!(
        out.contains("\u{2014} stopped at its deadline (timeout 300ms)]"),
        "{out}"
    );
    assert_nothing_left(&token, &sleep);
}

#[test]
fn processes_that_left_a_monitors_group_are_killed_when_it_ends_or_at_its_deadline() {
    let room = Room::new();
    let sleep = marked_sleep(&room);
    let id = start(&room, &format!("{}; echo bg", escaped_sleep(&sleep, 30)));
    let (token, _, _) = supervision(&room, "monitors", &id);
    wait_end(&room, &id);
    assert_nothing_left(&token, &sleep);
    // At the deadline, while the command still runs.
    let id = start(
        &room,
        &format!("{}; echo escaped; ./{sleep} 31", escaped_sleep(&sleep, 30)),
    );
    let (token, _, _) = supervision(&room, "monitors", &id);
    read_until(&room, &id, "escaped");
    let stopped = monitor(&room, json!({"action": "stop", "monitor_id": id}));
    assert_eq!(stopped.code, 0, "{stopped:?}");
    assert_nothing_left(&token, &sleep);
    let run = monitor(
        &room,
        json!({
            "command": format!("{}; echo escaped; ./{sleep} 31", escaped_sleep(&sleep, 30)),
            "timeout_ms": 3000
        }),
    );
    assert_eq!(run.code, 0, "{run:?}");
    let id = run.json()["metadata"]["monitor_id"]
        .as_str()
        .unwrap()
        .to_string();
    let (token, _, _) = supervision(&room, "monitors", &id);
    read_until(&room, &id, "escaped");
    read_until(&room, &id, "deadline");
    assert_nothing_left(&token, &sleep);
}

#[test]
fn a_monitor_started_by_a_bash_command_outlives_the_call() {
    // Unlike what escapes a command, a supervisor is meant to outlive the call that
    // started it: it is recorded, and it ends its work at its own deadline. Only without
    // the sandbox: inside it, `.tinytool/` is read-only and the PID namespace ends with
    // the call (tests/tinytool/sandbox.rs).
    let room = Room::new();
    room.write_user("policy.json", r#"{"sandbox": {"mode": "off"}}"#);
    let sleep = marked_sleep(&room);
    let run = room.call(
        "bash",
        json!({"command": format!(
            "'{}' monitor --action start --command './{sleep} 30' --timeout-ms 60000",
            crate::util::bin()
        )}),
    );
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.output().contains("(ID: mon_1)"), "{run:?}");
    let (token, _, _) = supervision(&room, "monitors", "mon_1");
    wait_for("the monitor's sleep", || {
        (living_named(&sleep).len() == 1).then_some(())
    });
    assert_eq!(stored_monitor(&room, "mon_1")["running"], true);
    let stopped = monitor(&room, json!({"action": "stop", "monitor_id": "mon_1"}));
    assert_eq!(stopped.code, 0, "{stopped:?}");
    assert_nothing_left(&token, &sleep);
}

#[test]
fn a_supervisor_killed_with_sigkill_leaves_nothing() {
    let room = Room::new();
    let sleep = marked_sleep(&room);
    let id = start(&room, &format!("./{sleep} 30 & ./{sleep} 31"));
    wait_for("both sleeps", || {
        (processes_named(&sleep).len() == 2).then_some(())
    });
    let (token, supervisor, _) = supervision(&room, "monitors", &id);
    // SAFETY: the pid was just recorded by a live supervisor of this test.
    assert_eq!(unsafe { libc::kill(supervisor as i32, libc::SIGKILL) }, 0);
    // No further call is needed: the sentinel kills the group.
    assert_nothing_running(&token, &sleep);
    let out = read(&room, &id);
    assert!(out.contains("failed: its supervisor"), "{out}");
    assert!(out.contains("died"), "{out}");
}

#[test]
fn a_stopped_supervisor_cannot_keep_its_command_past_the_deadline() {
    let room = Room::new();
    let sleep = marked_sleep(&room);
    let run = monitor(
        &room,
        json!({"command": format!("./{sleep} 30 & ./{sleep} 31"), "timeout_ms": 200}),
    );
    assert_eq!(run.code, 0, "{run:?}");
    let (token, supervisor, _) = supervision(&room, "monitors", "mon_1");
    // SAFETY: the pid was just recorded by a live supervisor of this test.
    assert_eq!(unsafe { libc::kill(supervisor as i32, libc::SIGSTOP) }, 0);
    // The sentinel's backstop, with no call and the supervisor frozen.
    let alive = |stat: &String| !stat.contains(") Z ");
    wait_for("the backstop", || {
        processes_named(&sleep)
            .iter()
            .all(|s| !alive(s))
            .then_some(())
    });
    // SAFETY: as above.
    unsafe {
        libc::kill(supervisor as i32, libc::SIGCONT);
    }
    wait_end(&room, "mon_1");
    assert_nothing_left(&token, &sleep);
}

#[test]
fn a_later_call_reaps_what_a_dead_supervisor_and_sentinel_left() {
    let room = Room::new();
    // With the sandbox's PID namespace the command dies with its supervisor (see
    // sandbox_processes.rs); without it (mode off, or a Landlock-only machine) a later
    // call must reap what is left.
    room.write_user("policy.json", r#"{"sandbox": {"mode": "off"}}"#);
    let sleep = marked_sleep(&room);
    let id = start(&room, &format!("./{sleep} 30 & ./{sleep} 31"));
    wait_for("both sleeps", || {
        (processes_named(&sleep).len() == 2).then_some(())
    });
    let (token, supervisor, pgid) = supervision(&room, "monitors", &id);
    // Kill the supervisor and its sentinel: the supervisor's child in the group that is
    // not the group's leader.
    let sentinel = marked(&token)
        .into_iter()
        .find(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            let fields: Vec<&str> = stat
                .rsplit_once(')')
                .map(|(_, rest)| rest.split_whitespace().collect())
                .unwrap_or_default();
            i64::from(*pid) != pgid
                && fields.get(1) == Some(&supervisor.to_string().as_str())
                && fields.get(2) == Some(&pgid.to_string().as_str())
        })
        .expect("a sentinel");
    // SAFETY: pids of this test's own supervisor and sentinel.
    unsafe {
        libc::kill(sentinel, libc::SIGKILL);
        libc::kill(supervisor as i32, libc::SIGKILL);
    }
    wait_for("the supervisor's death", || {
        let stat = std::fs::read_to_string(format!("/proc/{supervisor}/stat")).unwrap_or_default();
        (stat.is_empty() || stat.contains(") Z ")).then_some(())
    });
    let alive = |stat: &String| !stat.contains(") Z ");
    assert_eq!(
        processes_named(&sleep).iter().filter(|s| alive(s)).count(),
        2,
        "the sleeps outlived both"
    );
    // SAFETY: existence check only.
    assert_eq!(unsafe { libc::kill(-(pgid as i32), 0) }, 0);
    let list = monitor(&room, json!({"action": "list"}));
    let entries: Value = serde_json::from_str(&list.output()).unwrap();
    assert_eq!(entries[0]["running"], false, "{entries}");
    assert_nothing_running(&token, &sleep);
}

#[test]
fn monitor_errors() {
    let room = Room::new();
    for (args, expected) in [
        (
            json!({"command": ""}),
            "command is required to start a monitor",
        ),
        (
            json!({"action": "stop"}),
            "monitor_id is required for stop action",
        ),
        (
            json!({"action": "stop", "monitor_id": "mon_9"}),
            "Failed to stop monitor: monitor mon_9 not found",
        ),
        (
            json!({"action": "read", "monitor_id": "nope"}),
            "Failed to read monitor: monitor nope not found",
        ),
    ] {
        let run = monitor(&room, args.clone());
        assert_eq!(run.code, 1, "{args}: {run:?}");
        assert_eq!(run.output(), expected, "{args}");
    }
    let run = monitor(&room, json!({"action": "read"}));
    assert_eq!(run.output(), "No new monitor output (0 running).");
    let run = monitor(&room, json!({"action": "list"}));
    assert_eq!(run.output(), "[]");
    assert!(!room.path(".tinytool").exists(), "reading created state");
}

#[test]
fn the_policy_decides_a_monitor_as_it_decides_bash() {
    let room = Room::new();
    room.write(
        "policy.json",
        r#"{"rules": [{"permission": "shell", "pattern": "*", "action": "deny"},
                      {"permission": "shell", "pattern": "echo *", "action": "allow"}]}"#,
    );
    let run = |command: &str| {
        room.run(
            &["--policy", "policy.json", "monitor", "--command", command],
            None,
        )
    };
    assert_eq!(run("ls").code, 3);
    let destructive = run("echo x; rm -rf build");
    assert_eq!(destructive.code, 3, "{destructive:?}");
    // Each command is judged: `rm -rf build` is not an `echo`.
    assert_eq!(destructive.json()["metadata"]["permission"], "shell");
    assert_eq!(destructive.json()["metadata"]["pattern"], "rm -rf build");
    let secret = run("echo x < .env");
    assert_eq!(secret.json()["metadata"]["permission"], "secret-shell");
    assert_eq!(run("echo allowed").code, 0);
}

/// A room whose config has the test subagents.
fn task_room() -> Room {
    let room = Room::new();
    room.write_user(
        "config.json",
        json!({
            "subagents": {
                "build": {"command": ["sh", "-c", "echo depth=$TINYTOOL_SUBAGENT_DEPTH; cat"]},
                "gated": {"command": ["sh", "-c",
                    "cat > prompt.txt; while [ ! -f release ]; do sleep 0.02; done; echo depth=$TINYTOOL_SUBAGENT_DEPTH; cat prompt.txt"]},
                "failing": {"command": ["sh", "-c", "echo partial; echo 'it broke' >&2; exit 3"]}
            }
        })
        .to_string(),
    );
    room
}

fn task(room: &Room, args: Value) -> Run {
    room.call("task", args)
}

#[test]
fn a_foreground_task_returns_the_subagents_output_at_depth_one() {
    let room = task_room();
    let run = task(
        &room,
        json!({"description": "echo it", "prompt": "do the thing"}),
    );
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(run.output(), "depth=1\ndo the thing");
    crate::snapshot!("task_foreground", stable(run.json()));
    let failed = task(
        &room,
        json!({"description": "fail", "prompt": "p", "subagent_type": "failing"}),
    );
    assert_eq!(failed.code, 1);
    crate::snapshot!("task_foreground_failed", stable(failed.json()));
}

/// Makes the default subagent (`build`) the shell command line `agent`.
fn use_shell_subagent(room: &Room, agent: &str) {
    room.write_user(
        "config.json",
        json!({"subagents": {"build": {"command": ["sh", "-c", agent]}}}).to_string(),
    );
}

#[test]
fn a_foreground_tasks_processes_die_when_tinytool_is_killed() {
    // The subagent and what it started in the background: the sentinel kills them all.
    let room = Room::new();
    let sleep = marked_sleep(&room);
    let agent = format!("./{sleep} 30 & ./{sleep} 31");
    use_shell_subagent(&room, &agent);
    let cmd = room.command(&["task", "--description", "d", "--prompt", "p"]);
    assert_eq!(survivors_of_sigkill(cmd, &sleep, 2), Vec::<String>::new());
}

#[test]
fn a_nested_subagent_gets_the_next_depth_and_depth_five_is_refused() {
    let mut room = task_room();
    room.set_env("TINYTOOL_SUBAGENT_DEPTH", "4");
    let run = task(&room, json!({"description": "d", "prompt": "p"}));
    assert_eq!(run.output(), "depth=5\np");
    room.set_env("TINYTOOL_SUBAGENT_DEPTH", "5");
    let refused = task(&room, json!({"description": "d", "prompt": "p"}));
    assert_eq!(refused.code, 1, "{refused:?}");
    assert_eq!(
        refused.output(),
        "Maximum subagent depth (5) exceeded. Cannot create nested subagent."
    );
    let refused = task(
        &room,
        json!({"description": "d", "prompt": "p", "background": true}),
    );
    assert_eq!(refused.code, 1);
    // No job was recorded (the state exists: the depth-4 task took a checkpoint).
    let jobs = room.run(&["state", "jobs"], None);
    assert_eq!(jobs.stdout.trim(), "[]", "{jobs:?}");
}

#[test]
fn a_background_task_returns_at_once_then_completes_with_the_output() {
    let room = task_room();
    let events = room.path("events.jsonl");
    let run = room.run(
        &["--events", events.to_str().unwrap(), "task"],
        Some(
            &json!({"description": "gated job", "prompt": "the prompt", "subagent_type": "gated", "background": true})
                .to_string(),
        ),
    );
    assert_eq!(run.code, 0, "{run:?}");
    // The subagent waits for `release`, which does not exist yet: the call returned
    // while it runs.
    assert_eq!(
        run.output(),
        r#"{"job_id":"job_1","status":"running","message":"Background task started: gated job"}"#
    );
    let running = task(&room, json!({"task_id": "job_1"}));
    assert_eq!(
        running.output(),
        r#"{"id":"job_1","status":"running","result":"","error":""}"#
    );
    room.write("release", "");
    let done = wait_for("job_1 to complete", || {
        let out = task(&room, json!({"task_id": "job_1"})).output();
        (!out.contains(r#""status":"running""#)).then_some(out)
    });
    assert_eq!(
        done,
        r#"{"id":"job_1","status":"completed","result":"depth=1\nthe prompt","error":""}"#
    );
    let (token, _, _) = supervision(&room, "jobs", "job_1");
    assert_nothing_left(&token, "no-such-name");
    let completed: Vec<Value> = read_events(&events)
        .into_iter()
        .filter(|e| e["type"] == "job.completed")
        .collect();
    assert_eq!(completed.len(), 1, "{completed:?}");
    let props = &completed[0]["properties"];
    assert_eq!(props["jobID"], "job_1");
    assert_eq!(props["status"], "completed");
    assert_eq!(props["result"], "depth=1\nthe prompt");
    assert_eq!(props["sessionID"], "default");
    let mut jobs = room.run(&["state", "jobs"], None).json();
    for key in ["created", "deadline", "ended"] {
        jobs[0][key] = json!("[time]");
    }
    crate::snapshot!("state_jobs", jobs);
    // Jobs are per session.
    let other = room.run(&["--session", "other", "task", "--task-id", "job_1"], None);
    assert_eq!(other.code, 1);
    assert_eq!(
        room.run(&["--session", "other", "state", "jobs"], None)
            .json(),
        json!([])
    );
}

#[test]
fn a_failed_background_task_records_the_error() {
    let room = task_room();
    let run = task(
        &room,
        json!({"description": "f", "prompt": "p", "subagent_type": "failing", "background": true}),
    );
    assert_eq!(run.code, 0, "{run:?}");
    let done = wait_for("job_1 to fail", || {
        let out = task(&room, json!({"task_id": "job_1"}));
        (!out.output().contains(r#""status":"running""#)).then_some(out)
    });
    assert_eq!(done.code, 0, "a failed job is not a failed lookup");
    assert_eq!(
        done.output(),
        r#"{"id":"job_1","status":"failed","result":"partial\n","error":"the failing subagent exited with status 3\nit broke"}"#
    );
}

#[test]
fn cancel_and_deadline_end_a_job_and_leave_nothing() {
    let room = task_room();
    let sleep = marked_sleep(&room);
    room.write_user(
        "config.json",
        json!({
            "subagents": {"sleepy": {"command": [format!("./{sleep}"), "30"]},
                          "trapped": {"command": ["sh", "-c", format!("trap '' TERM; ./{sleep} 30 & ./{sleep} 31")]}},
            "task": {"deadline_ms": 400}
        })
        .to_string(),
    );
    let start = |kind: &str| {
        let run = task(
            &room,
            json!({"description": kind, "prompt": "p", "subagent_type": kind, "background": true}),
        );
        assert_eq!(run.code, 0, "{run:?}");
        serde_json::from_str::<Value>(&run.output()).unwrap()["job_id"]
            .as_str()
            .unwrap()
            .to_string()
    };
    // The deadline: a job ignoring SIGTERM is killed, recorded failed.
    let late = start("trapped");
    let (token, _, _) = supervision(&room, "jobs", &late);
    let done = wait_for("the deadline", || {
        let out = task(&room, json!({"task_id": late})).output();
        (!out.contains(r#""status":"running""#)).then_some(out)
    });
    let done: Value = serde_json::from_str(&done).unwrap();
    assert_eq!(done["status"], "failed");
    assert_eq!(done["error"], "the trapped subagent timed out after 400ms");
    assert_nothing_left(&token, &sleep);

    // Cancel: at once, whatever the deadline.
    room.write_user(
        "config.json",
        json!({"subagents": {"sleepy": {"command": [format!("./{sleep}"), "30"]}}}).to_string(),
    );
    let id = start("sleepy");
    let (token, _, _) = supervision(&room, "jobs", &id);
    wait_for("the sleep", || {
        (!processes_named(&sleep).is_empty()).then_some(())
    });
    let cancelled = task(&room, json!({"task_id": id, "cancel": true}));
    assert_eq!(cancelled.code, 0, "{cancelled:?}");
    let value: Value = serde_json::from_str(&cancelled.output()).unwrap();
    assert_eq!(value["status"], "cancelled");
    assert_nothing_left(&token, &sleep);
    let again = task(&room, json!({"task_id": id, "cancel": true}));
    assert_eq!(again.code, 1);
    assert_eq!(
        again.output(),
        format!("Job {id} is not running (status: cancelled)")
    );
}

#[test]
fn processes_that_left_a_jobs_group_are_killed_when_it_ends() {
    let room = Room::new();
    let sleep = marked_sleep(&room);
    let agent = format!("{}; echo done", escaped_sleep(&sleep, 30));
    use_shell_subagent(&room, &agent);
    let run = task(
        &room,
        json!({"description": "d", "prompt": "p", "background": true}),
    );
    assert_eq!(run.code, 0, "{run:?}");
    let id = serde_json::from_str::<Value>(&run.output()).unwrap()["job_id"]
        .as_str()
        .unwrap()
        .to_string();
    let (token, _, _) = supervision(&room, "jobs", &id);
    let done = wait_for("the job's end", || {
        let out = task(&room, json!({"task_id": id})).output();
        (!out.contains(r#""status":"running""#)).then_some(out)
    });
    let done: Value = serde_json::from_str(&done).unwrap();
    assert_eq!(done["status"], "completed", "{done}");
    assert_nothing_left(&token, &sleep);
}

#[test]
fn a_job_whose_supervisor_is_killed_leaves_nothing_and_is_recorded_failed() {
    let room = task_room();
    let sleep = marked_sleep(&room);
    let agent = format!("./{sleep} 30 & ./{sleep} 31");
    use_shell_subagent(&room, &agent);
    let run = task(
        &room,
        json!({"description": "d", "prompt": "p", "background": true}),
    );
    assert_eq!(run.code, 0, "{run:?}");
    wait_for("both sleeps", || {
        (processes_named(&sleep).len() == 2).then_some(())
    });
    let (token, supervisor, _) = supervision(&room, "jobs", "job_1");
    // SAFETY: the pid was just recorded by a live supervisor of this test.
    assert_eq!(unsafe { libc::kill(supervisor as i32, libc::SIGKILL) }, 0);
    assert_nothing_running(&token, &sleep);
    let status: Value =
        serde_json::from_str(&task(&room, json!({"task_id": "job_1"})).output()).unwrap();
    assert_eq!(status["status"], "failed", "{status}");
    assert!(
        status["error"].as_str().unwrap().contains("supervisor"),
        "{status}"
    );
}

#[test]
fn the_subagent_command_line_is_what_the_policy_decides() {
    let room = task_room();
    room.write(
        "policy.json",
        r#"{"rules": [{"permission": "shell", "pattern": "*", "action": "deny"}]}"#,
    );
    let args = json!({"description": "d", "prompt": "p"}).to_string();
    let refused = room.run(&["--policy", "policy.json", "task"], Some(&args));
    assert_eq!(refused.code, 3, "{refused:?}");
    let result = refused.json();
    assert_eq!(result["metadata"]["permission"], "shell");
    assert_eq!(
        result["metadata"]["pattern"],
        "sh -c 'echo depth=$TINYTOOL_SUBAGENT_DEPTH; cat'"
    );
    room.write(
        "policy.json",
        r#"{"rules": [{"permission": "shell", "pattern": "*", "action": "deny"},
                      {"permission": "shell", "pattern": "sh -c *", "action": "allow"},
                      {"permission": "shell", "pattern": "echo depth=*", "action": "allow"},
                      {"permission": "shell", "pattern": "cat", "action": "allow"}]}"#,
    );
    let allowed = room.run(&["--policy", "policy.json", "task"], Some(&args));
    assert_eq!(allowed.code, 0, "{allowed:?}");
    assert_eq!(allowed.output(), "depth=1\np");
}

#[test]
fn task_errors() {
    let room = task_room();
    for (args, expected) in [
        (json!({"description": "d"}), "prompt is required"),
        (json!({"prompt": "p"}), "description is required"),
        (json!({}), "prompt is required"),
        (
            json!({"task_id": "job_7"}),
            "Job job_7 not found (job ids look like job_1; `tinytool state jobs` lists this session's jobs)",
        ),
        (
            json!({"cancel": true}),
            "cancel needs task_id: the id of the background job to cancel (job_N)",
        ),
    ] {
        let run = task(&room, args.clone());
        assert_eq!(run.code, 1, "{args}: {run:?}");
        assert_eq!(run.output(), expected, "{args}");
    }
    let missing = task(
        &room,
        json!({"description": "d", "prompt": "p", "subagent_type": "reviewer"}),
    );
    assert_eq!(missing.code, 1);
    let text = crate::util::redact(&missing.output(), &room.home, "[HOME]");
    crate::snapshot_text!("task_missing_subagent", text);
    let unstartable = Room::new();
    unstartable.write_user(
        "config.json",
        r#"{"subagents": {"build": {"command": ["/nonexistent/agent"]}}}"#,
    );
    for background in [false, true] {
        let run = task(
            &unstartable,
            json!({"description": "d", "prompt": "p", "background": background}),
        );
        assert_eq!(run.code, 1, "{run:?}");
        assert!(
            run.output().starts_with(
                "Subagent error: cannot start the subagent command `/nonexistent/agent`"
            ),
            "{}",
            run.output()
        );
    }
}

#[test]
fn an_explicit_policy_is_handed_on_to_subagents() {
    let room = Room::new();
    room.write_user(
        "config.json",
        json!({"subagents": {"build": {"command": ["sh", "-c", "echo policy=$TINYTOOL_POLICY"]}}})
            .to_string(),
    );
    room.write("p.json", r#"{"rules": []}"#);
    let run = room.run(
        &["--policy", "p.json", "task"],
        Some(&json!({"description": "d", "prompt": "p"}).to_string()),
    );
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        run.output().trim(),
        format!("policy={}", room.path("p.json").display())
    );
}

#[test]
fn a_monitors_lines_a_read_leaves_out_are_all_in_its_named_file() {
    let room = Room::new();
    // A crash's first error scrolls away under 300 later lines before anyone reads.
    let id = start_monitor(
        &room,
        // The pause keeps the two streams' lines in the order written: lines of stdout and
        // stderr written in the same instant may be read in either order.
        "echo 'first error: port taken' >&2; sleep 0.2; seq 1 300; echo done",
    );
    // Nobody reads until it ended (a read before would take the first lines).
    wait_end(&room, &id);
    let run = monitor(&room, json!({"action": "read", "monitor_id": id}));
    let output = run.output();
    assert!(!output.contains("STDERR: first error"), "{output}");
    let log = run.json()["metadata"]["log"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(
        output.contains(&format!("every line is in {log} (read or grep it)")),
        "{output}"
    );
    let read = room.call("read", json!({"file_path": log}));
    let text = read.output();
    assert!(
        text.starts_with("1\tSTDERR: first error: port taken\n2\t1\n"),
        "{text}"
    );
    assert!(
        text.contains("\t300\n") && text.contains("\tdone\n"),
        "{text}"
    );
    let grep = room.call("grep", json!({"pattern": "first error", "path": log}));
    assert!(
        grep.output().contains("first error: port taken"),
        "{grep:?}"
    );
}
