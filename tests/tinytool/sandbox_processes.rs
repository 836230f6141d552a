//! Every process tinytool starts runs in the sandbox, not only bash: a
//! monitor's command (its supervisor stays outside and owns the namespaces), a task
//! subagent (with `.tinytool/` and its `subagents.<name>.writable` paths writable, a
//! tinytool user itself), in the foreground and in the background. Results carry
//! `metadata.sandbox`.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::util::{Room, daemon_sleep, living_named, marked_sleep, wait_gone};

const ALLOW_ALL: &str = r#"{"rules": [{"permission": "*", "pattern": "*", "action": "allow"}]}"#;

fn room() -> Room {
    let room = Room::new();
    room.write_user("policy.json", ALLOW_ALL);
    room
}

fn has_layer(result: &Value, layer: &str) -> bool {
    result["metadata"]["sandbox"]["layers"]
        .as_array()
        .is_some_and(|l| l.iter().any(|x| x == layer))
}

/// A path outside /tmp and the project that the tests' user could write without the
/// sandbox.
fn outside(tag: &str) -> std::path::PathBuf {
    std::path::PathBuf::from(format!("/var/tmp/tinytool-{tag}-{}", std::process::id()))
}

fn wait_for<T>(what: &str, mut f: impl FnMut() -> Option<T>) -> T {
    let until = Instant::now() + Duration::from_secs(15);
    loop {
        if let Some(value) = f() {
            return value;
        }
        assert!(Instant::now() < until, "gave up waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn monitor_ended(room: &Room, id: &str) -> bool {
    let all = room.run(&["state", "monitors"], None).json();
    all.as_array()
        .unwrap()
        .iter()
        .any(|m| m["id"] == id && m["status"] != "running")
}

#[test]
fn a_monitors_command_is_sandboxed_and_its_daemons_end_with_it() {
    let room = room();
    if let Err(why) = crate::util::mount_layer(&room) {
        crate::util::skip(&why);
        return;
    }
    let out = outside("monitor");
    let run = room.call(
        "monitor",
        json!({"command": format!("touch inside; echo x > {}; echo done", out.display())}),
    );
    assert_eq!(run.code, 0, "{run:?}");
    let result = run.json();
    assert!(has_layer(&result, "mount"), "{result}");
    assert!(has_layer(&result, "pid"), "{result}");
    let id = result["metadata"]["monitor_id"]
        .as_str()
        .unwrap()
        .to_string();
    wait_for("the monitor to end", || {
        monitor_ended(&room, &id).then_some(())
    });
    let leaked = out.exists();
    let _ = std::fs::remove_file(&out);
    assert!(!leaked);
    assert!(room.path("inside").exists());
    let read = room.call("monitor", json!({"action": "read", "monitor_id": id}));
    assert!(read.output().contains("Read-only file system"), "{read:?}");

    // A double-forked daemon with an empty environment lives as long as the monitor.
    let sleep = marked_sleep(&room);
    let run = room.call(
        "monitor",
        json!({"command": format!(
            "env -i sh -c \"{}\"; echo started; exec sleep 300",
            daemon_sleep(&sleep, 300).replace('"', "\\\"")
        )}),
    );
    assert_eq!(run.code, 0, "{run:?}");
    let id = run.json()["metadata"]["monitor_id"]
        .as_str()
        .unwrap()
        .to_string();
    wait_for("the daemon to start", || {
        (!living_named(&sleep).is_empty()).then_some(())
    });
    let stop = room.call("monitor", json!({"action": "stop", "monitor_id": id}));
    assert_eq!(stop.code, 0, "{stop:?}");
    assert_eq!(
        wait_gone(&sleep, Duration::from_secs(10)),
        Vec::<String>::new()
    );
}

#[test]
fn a_subagent_calls_tinytool_with_tinytool_state_writable_and_nothing_else_outside() {
    let room = room();
    if let Err(why) = crate::util::mount_layer(&room) {
        crate::util::skip(&why);
        return;
    }
    let open = outside("agent-open");
    let closed = outside("agent-closed");
    std::fs::create_dir_all(&open).unwrap();
    let bin = crate::util::bin();
    room.write_user(
        "config.json",
        json!({"subagents": {
            "todo": {"command": [bin, "todowrite"]},
            "escape": {
                "command": ["sh", "-c", format!(
                    "touch {o}/x; touch {c}; {bin} bash --command 'touch inner; touch {c}'",
                    o = open.display(), c = closed.display()
                )],
                "writable": [open.display().to_string()]
            }
        }})
        .to_string(),
    );
    let todos = json!({"todos": [{"content": "from the subagent", "status": "pending", "priority": "normal"}]});
    let run = room.call(
        "task",
        json!({"description": "todos", "prompt": todos.to_string(), "subagent_type": "todo"}),
    );
    assert_eq!(run.code, 0, "{run:?}");
    assert!(has_layer(&run.json(), "mount"), "{run:?}");
    let listed = room.run(&["state", "todos"], None).json();
    assert_eq!(listed[0]["content"], "from the subagent", "{listed}");

    let run = room.call(
        "task",
        json!({"description": "escape", "prompt": "p", "subagent_type": "escape"}),
    );
    let written = open.join("x").exists();
    let leaked = closed.exists();
    let _ = std::fs::remove_dir_all(&open);
    let _ = std::fs::remove_file(&closed);
    assert!(written, "subagents.escape.writable is writable: {run:?}");
    assert!(!leaked, "{run:?}");
    // The nested tinytool ran its bash call in a sandbox of its own.
    assert!(room.path("inner").exists(), "{run:?}");

    // In the background too, the start result says what was active.
    let run = room.call(
        "task",
        json!({"description": "todos", "prompt": todos.to_string(), "subagent_type": "todo", "background": true}),
    );
    assert_eq!(run.code, 0, "{run:?}");
    assert!(has_layer(&run.json(), "mount"), "{run:?}");
}

#[test]
fn a_project_config_cannot_open_paths_for_a_subagent() {
    let room = room();
    if let Err(why) = crate::util::mount_layer(&room) {
        crate::util::skip(&why);
        return;
    }
    let open = outside("agent-project");
    std::fs::create_dir_all(&open).unwrap();
    room.write(
        ".tinytool/config.json",
        json!({"subagents": {"escape": {
            "command": ["sh", "-c", format!("touch {}/x", open.display())],
            "writable": [open.display().to_string()]
        }}})
        .to_string(),
    );
    let run = room.call(
        "task",
        json!({"description": "escape", "prompt": "p", "subagent_type": "escape"}),
    );
    let written = open.join("x").exists();
    let _ = std::fs::remove_dir_all(&open);
    assert!(!written, "{run:?}");
    // It ran, and the sandbox stopped it.
    assert!(run.output().contains("Read-only file system"), "{run:?}");
}

/// The parent pid of `pid` (0 when gone).
fn parent_of(pid: i32) -> i32 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    stat.rsplit_once(')')
        .and_then(|(_, rest)| rest.split_whitespace().nth(1))
        .and_then(|p| p.parse().ok())
        .unwrap_or(0)
}

#[test]
fn a_monitors_command_dies_with_its_supervisor_even_of_sigkill() {
    let room = room();
    if let Err(why) = crate::util::mount_layer(&room) {
        crate::util::skip(&why);
        return;
    }
    let sleep = marked_sleep(&room);
    let run = room.call(
        "monitor",
        json!({"command": format!("setsid ./{sleep} 300 & exec ./{sleep} 301")}),
    );
    assert_eq!(run.code, 0, "{run:?}");
    let pids: Vec<i32> = wait_for("both sleeps", || {
        let pids: Vec<i32> = living_named(&sleep)
            .iter()
            .filter_map(|stat| stat.split_whitespace().next()?.parse().ok())
            .collect();
        (pids.len() == 2).then_some(pids)
    });
    // Up from a sleep to the supervisor (`tinytool __supervise`).
    let mut supervisor = pids[0];
    while supervisor > 1 {
        let cmdline =
            std::fs::read_to_string(format!("/proc/{supervisor}/cmdline")).unwrap_or_default();
        if cmdline.contains("__supervise") {
            break;
        }
        supervisor = parent_of(supervisor);
    }
    assert!(supervisor > 1, "no supervisor above {pids:?}");
    // SAFETY: the pid of this test's own supervisor.
    unsafe {
        libc::kill(supervisor, libc::SIGKILL);
    }
    assert_eq!(
        wait_gone(&sleep, Duration::from_secs(10)),
        Vec::<String>::new()
    );
}

#[test]
fn formatters_and_the_after_hook_are_sandboxed() {
    let room = room();
    if let Err(why) = crate::util::mount_layer(&room) {
        crate::util::skip(&why);
        return;
    }
    let by_formatter = outside("formatter");
    let by_hook = outside("hook");
    room.write_user(
        "config.json",
        json!({
            "formatters": {"*.txt": ["sh", "-c",
                format!("touch {}; printf 'formatted\\n' > \"$0\"", by_formatter.display()),
                "{file}"]},
            "after_hook": ["sh", "-c",
                format!("cat > /dev/null; touch hooked; touch {}", by_hook.display())]
        })
        .to_string(),
    );
    let run = room.call("write", json!({"file_path": "a.txt", "content": "x\n"}));
    let leaked = [by_formatter.exists(), by_hook.exists()];
    let _ = std::fs::remove_file(&by_formatter);
    let _ = std::fs::remove_file(&by_hook);
    assert_eq!(leaked, [false, false], "{run:?}");
    // Inside the project they did their work.
    assert_eq!(room.read("a.txt"), "formatted\n", "{run:?}");
    assert!(room.path("hooked").exists(), "{run:?}");
}

#[test]
fn later_monitor_and_job_results_repeat_the_sandbox_of_their_command() {
    let room = room();
    if let Err(why) = crate::util::mount_layer(&room) {
        crate::util::skip(&why);
        return;
    }
    let bin = crate::util::bin();
    room.write_user(
        "config.json",
        json!({"subagents": {"todo": {"command": [bin, "todowrite"]}}}).to_string(),
    );
    let todos = json!({"todos": [{"content": "t", "status": "pending", "priority": "normal"}]});
    let run = room.call(
        "task",
        json!({"description": "todos", "prompt": todos.to_string(), "subagent_type": "todo", "background": true}),
    );
    assert_eq!(run.code, 0, "{run:?}");
    let started = run.json()["metadata"]["sandbox"].clone();
    assert!(has_layer(&run.json(), "mount"), "{run:?}");
    let job = run.json()["metadata"]["job_id"]
        .as_str()
        .unwrap()
        .to_string();
    let done = wait_for("the job to end", || {
        let r = room.call("task", json!({"task_id": job}));
        (r.json()["metadata"]["status"] != "running").then_some(r)
    });
    assert_eq!(done.json()["metadata"]["sandbox"], started, "{done:?}");

    let run = room.call("monitor", json!({"command": "echo one; exec sleep 300"}));
    assert_eq!(run.code, 0, "{run:?}");
    let started = run.json()["metadata"]["sandbox"].clone();
    assert!(has_layer(&run.json(), "pid"), "{run:?}");
    let id = run.json()["metadata"]["monitor_id"]
        .as_str()
        .unwrap()
        .to_string();
    for args in [
        json!({"action": "read", "monitor_id": id}),
        json!({"action": "read"}),
        json!({"action": "list"}),
        json!({"action": "stop", "monitor_id": id}),
        json!({"action": "stop", "monitor_id": id}),
    ] {
        let r = room.call("monitor", args.clone());
        assert_eq!(r.json()["metadata"]["sandbox"], started, "{args}: {r:?}");
    }
}

#[test]
fn a_failed_monitor_or_subagent_ends_with_the_sandbox_explanation() {
    let room = room();
    if let Err(why) = crate::util::mount_layer(&room) {
        crate::util::skip(&why);
        return;
    }
    let out = outside("explain");
    let run = room.call(
        "monitor",
        json!({"command": format!("touch {}", out.display())}),
    );
    assert_eq!(run.code, 0, "{run:?}");
    let id = run.json()["metadata"]["monitor_id"]
        .as_str()
        .unwrap()
        .to_string();
    wait_for("the monitor to end", || {
        monitor_ended(&room, &id).then_some(())
    });
    let read = room.call("monitor", json!({"action": "read", "monitor_id": id}));
    assert!(!out.exists());
    let last = read
        .output()
        .trim_end()
        .lines()
        .last()
        .unwrap_or_default()
        .to_string();
    assert!(last.starts_with("[sandbox:"), "{read:?}");
    assert!(last.contains("writable"), "{read:?}");

    room.write_user(
        "config.json",
        json!({"subagents": {"writer": {"command": ["sh", "-c", format!("touch {}", out.display())]}}})
            .to_string(),
    );
    let run = room.call(
        "task",
        json!({"description": "w", "prompt": "p", "subagent_type": "writer"}),
    );
    assert!(!out.exists());
    let last = run
        .output()
        .trim_end()
        .lines()
        .last()
        .unwrap_or_default()
        .to_string();
    assert!(last.starts_with("[sandbox:"), "{run:?}");
}
