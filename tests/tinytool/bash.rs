//! `bash`: output shapes, failures, timeouts, process cleanup (no process left behind,
//! even as a zombie), stdin, environment filtering and bounded output.
//!
//! Leftover processes are found by name: each test runs `sleep` through a symlink with a
//! unique name, which becomes the process's `comm` in `/proc/PID/stat` (zombies
//! included, unlike `cmdline`).

use std::io::Write;
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::util::{
    Room, daemon_sleep, escaped_sleep, marked_sleep, processes_named, stable, survivors_of_sigkill,
    wait_gone,
};

#[test]
fn success_output_shape() {
    let room = Room::new();
    let run = room.call(
        "bash",
        json!({"command": "echo hello; printf 'no newline'"}),
    );
    assert_eq!(run.code, 0, "{run:?}");
    crate::snapshot!("bash_success", stable(run.json()));
}

#[test]
fn failure_keeps_the_output_with_the_exit_status_first() {
    let room = Room::new();
    let run = room.call(
        "bash",
        json!({"command": "echo out; echo err >&2; exit 3", "description": "fail on purpose"}),
    );
    assert_eq!(run.code, 1);
    crate::snapshot!("bash_failure", stable(run.json()));
}

#[test]
fn stderr_only_and_empty_outputs() {
    let room = Room::new();
    let run = room.call("bash", json!({"command": "echo oops >&2"}));
    assert_eq!(run.output(), "STDERR: oops\n");
    let run = room.call("bash", json!({"command": "true"}));
    assert_eq!(run.code, 0);
    assert_eq!(run.output(), "");
    let run = room.call("bash", json!({"command": "false"}));
    assert_eq!(run.code, 1);
    assert_eq!(run.output(), "Command exited with error: exit status 1\n");
}

#[test]
fn timeout_output_shape() {
    let room = Room::new();
    let sleep = marked_sleep(&room);
    let run = room.call(
        "bash",
        json!({"command": format!("echo started; ./{sleep} 30"), "timeout": 300}),
    );
    assert_eq!(run.code, 1);
    crate::snapshot!("bash_timeout", stable(run.json()));
    assert_eq!(processes_named(&sleep), Vec::<String>::new());
}

#[test]
fn a_signal_ends_the_command() {
    let room = Room::new();
    let run = room.call("bash", json!({"command": "echo before; kill -TERM $$"}));
    assert_eq!(run.code, 1);
    assert_eq!(
        run.output(),
        "Command exited with error: signal: terminated\nbefore\n"
    );
    assert_eq!(run.json()["metadata"]["signal"], "SIGTERM");
    assert_eq!(run.json()["metadata"]["exit_code"], Value::Null);
}

#[test]
fn a_command_starting_with_a_dash_is_run_not_taken_as_a_shell_option() {
    let room = Room::new();
    let run = room.call("bash", json!({"command": "-n 2>/dev/null; echo ran"}));
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(run.output(), "ran\n");
}

#[test]
fn empty_commands_are_refused() {
    let room = Room::new();
    let run = room.call("bash", json!({"command": "  "}));
    assert_eq!(run.code, 1);
    assert_eq!(run.output(), "Command cannot be empty");
}

#[test]
fn a_timeout_kills_every_background_process_and_leaves_nothing() {
    let room = Room::new();
    let sleep = marked_sleep(&room);
    let started = Instant::now();
    let run = room.call(
        "bash",
        json!({"command": format!("./{sleep} 30 & ./{sleep} 31"), "timeout": 1000}),
    );
    // Far less than the 30 s the sleeps would take: the call did not wait for them.
    assert!(started.elapsed() < Duration::from_secs(20));
    assert_eq!(run.code, 1);
    let result = run.json();
    assert_eq!(result["metadata"]["timed_out"], true);
    assert!(run.output().starts_with("Command timed out after 1s\n"));
    // Reaped before the call returned: not even a zombie.
    assert_eq!(processes_named(&sleep), Vec::<String>::new());
}

#[test]
fn a_term_ignoring_command_is_killed_after_the_grace() {
    let room = Room::new();
    let sleep = marked_sleep(&room);
    let run = room.call(
        "bash",
        json!({"command": format!("trap '' TERM; ./{sleep} 30; echo finished"), "timeout": 300}),
    );
    assert_eq!(run.json()["metadata"]["timed_out"], true);
    assert!(!run.output().contains("finished"));
    assert_eq!(processes_named(&sleep), Vec::<String>::new());
}

#[test]
fn leftovers_are_killed_when_the_shell_exits_and_the_call_does_not_wait() {
    let room = Room::new();
    let sleep = marked_sleep(&room);
    let started = Instant::now();
    let run = room.call(
        "bash",
        json!({"command": format!("(./{sleep} 30 &); echo done")}),
    );
    assert!(started.elapsed() < Duration::from_secs(20));
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(run.output(), "done\n");
    assert_eq!(processes_named(&sleep), Vec::<String>::new());
    // A background process holding the output pipe open does not hold the call either.
    let run = room.call(
        "bash",
        json!({"command": format!("./{sleep} 30 & echo spawned")}),
    );
    assert_eq!(run.output(), "spawned\n");
    assert_eq!(processes_named(&sleep), Vec::<String>::new());
}

/// The bound of the polls for processes to disappear.
const GONE_WITHIN: Duration = Duration::from_secs(15);

#[test]
fn processes_that_left_the_group_are_killed_when_the_shell_exits_or_times_out() {
    let room = Room::new();
    let sleep = marked_sleep(&room);
    let run = room.call(
        "bash",
        json!({"command": format!("{}; echo ok", escaped_sleep(&sleep, 30)), "timeout": 20000}),
    );
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(run.output(), "ok\n");
    assert_eq!(wait_gone(&sleep, GONE_WITHIN), Vec::<String>::new());
    // At the deadline, while the shell still runs.
    let run = room.call(
        "bash",
        json!({
            "command": format!("{}; echo escaped; ./{sleep} 31", escaped_sleep(&sleep, 30)),
            "timeout": 2000
        }),
    );
    assert_eq!(run.json()["metadata"]["timed_out"], true, "{run:?}");
    assert!(run.output().contains("escaped"), "{run:?}");
    assert_eq!(wait_gone(&sleep, GONE_WITHIN), Vec::<String>::new());
}

#[test]
fn a_double_forking_daemon_that_ignores_sigterm_is_killed() {
    let room = Room::new();
    let sleep = marked_sleep(&room);
    let run = room.call(
        "bash",
        json!({"command": format!("{}; echo started", daemon_sleep(&sleep, 30)), "timeout": 20000}),
    );
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(run.output(), "started\n");
    // It had left the command's session before the shell exited.
    let pid = room.read("daemon.pid");
    assert!(!pid.trim().is_empty());
    assert_eq!(wait_gone(&sleep, GONE_WITHIN), Vec::<String>::new());
}

#[test]
fn read_gets_end_of_file_even_when_tinytool_stdin_is_an_open_pipe() {
    let room = Room::new();
    let mut cmd = room.command(&["bash", "--command", "read x; echo \"got [$x]\""]);
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    // Keep our end of tinytool's stdin open (and silent) for the whole call.
    let mut stdin = child.stdin.take().unwrap();
    let out = child.wait_with_output().unwrap();
    let _ = stdin.write_all(b"");
    let result: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(result["output"], "got []\n");
    assert_eq!(result["is_error"], false);
}

#[test]
fn exec_jsonl_input_is_not_consumed_by_commands() {
    let room = Room::new();
    let calls = [
        json!({"name": "bash", "arguments": {"command": "cat; echo end"}}),
        json!({"name": "bash", "arguments": {"command": "echo second"}}),
    ];
    let input: String = calls.iter().map(|c| format!("{c}\n")).collect();
    let run = room.run(&["exec", "--jsonl"], Some(&input));
    let lines = run.lines();
    assert_eq!(lines.len(), 2, "{run:?}");
    assert_eq!(lines[0]["output"], "end\n");
    assert_eq!(lines[1]["output"], "second\n");
}

#[test]
fn credentials_are_not_passed_on_and_prompts_are_disabled() {
    let mut room = Room::new();
    room.set_env("OPENROUTER_API_KEY", "super-secret");
    room.set_env("GITHUB_TOKEN", "ghp_secret");
    room.set_env("PAGER", "less");
    room.set_env("KEEP_ME", "visible");
    let run = room.call(
        "bash",
        json!({"command": "printf '%s|%s|%s|%s|%s' \"$OPENROUTER_API_KEY\" \"$GITHUB_TOKEN\" \"$PAGER\" \"$GIT_TERMINAL_PROMPT\" \"$KEEP_ME\""}),
    );
    assert_eq!(run.output(), "||cat|0|visible");
}

#[test]
fn commands_run_in_the_directory() {
    let room = Room::new();
    room.write("sub/file.txt", "x");
    let run = room.run(
        &[
            "--dir",
            room.path("sub").to_str().unwrap(),
            "bash",
            "--command",
            "pwd; ls",
        ],
        None,
    );
    let out = run.output();
    assert!(out.ends_with("sub\nfile.txt\n"), "{out}");
}

#[test]
fn long_output_is_previewed_with_its_real_last_lines() {
    let room = Room::new();
    let run = room.call("bash", json!({"command": "seq 1 200000"}));
    let result = run.json();
    assert_eq!(result["truncated"], true);
    let out = result["output"].as_str().unwrap();
    assert!(out.starts_with("1\n2\n3\n"));
    assert!(
        out.contains("of 200000 lines, 1288895 bytes total; full output: .tinytool/outputs/"),
        "{out:.300}"
    );
    let header = out.lines().find(|l| l.starts_with("[preview:")).unwrap();
    assert!(
        out.len() <= 51_200 + 2 * header.len() + 100,
        "{}",
        out.len()
    );
    assert!(out.ends_with("\n199999\n200000\n"));
    assert_eq!(result["metadata"]["stdout_bytes"], 1_288_895);
    let path = result["metadata"]["full_output"].as_str().unwrap();
    assert!(path.starts_with(".tinytool/outputs/"), "{path}");
    let line = room.call(
        "read",
        json!({"file_path": path, "offset": 100000, "limit": 1}),
    );
    assert!(
        line.output().starts_with("100001\t100001\n"),
        "{}",
        line.output()
    );
}

#[test]
fn a_failure_message_in_the_middle_is_kept_in_the_spill_file() {
    let room = Room::new();
    let run = room.call(
        "bash",
        json!({"command": "seq 1 3000; echo 'panicked at src/lib.rs: boom'; seq 1 3000"}),
    );
    let result = run.json();
    assert!(!result["output"].as_str().unwrap().contains("boom"));
    let path = result["metadata"]["full_output"].as_str().unwrap();
    let whole = std::fs::read_to_string(room.path(path)).unwrap();
    assert!(whole.contains("panicked at src/lib.rs: boom\n"));
}

#[test]
fn the_preview_ends_with_the_last_lines_printed_whichever_stream() {
    let room = Room::new();
    let run = room.call(
        "bash",
        json!({"command": "seq 1 3000; seq 5001 5100 >&2; exit 2"}),
    );
    let out = run.output();
    assert!(out.starts_with("Command exited with error: exit status 2\n1\n2\n"));
    assert!(out.contains("of 3101 lines"), "{out}");
    assert!(out.ends_with("STDERR: 5099\nSTDERR: 5100\n"), "{out}");
}

#[test]
fn lines_of_both_streams_keep_the_order_they_arrived_in() {
    let room = Room::new();
    let run = room.call(
        "bash",
        json!({"command": "for i in 1 2 3; do echo out$i; sleep 0.2; echo err$i >&2; sleep 0.2; done; printf 'Compil'; sleep 0.2; echo warn >&2; sleep 0.2; echo ing"}),
    );
    assert_eq!(
        run.output(),
        "out1\nSTDERR: err1\nout2\nSTDERR: err2\nout3\nSTDERR: err3\nSTDERR: warn\nCompiling\n"
    );
    let result = run.json();
    assert_eq!(result["metadata"]["stdout_bytes"], 25, "{result}");
    assert_eq!(result["metadata"]["stderr_bytes"], 20, "{result}");
}

#[test]
fn bytes_that_are_not_utf8_are_replaced() {
    let room = Room::new();
    let run = room.call("bash", json!({"command": "printf 'a\\377b'"}));
    let result = run.json();
    assert_eq!(result["output"], "a\u{fffd}b");
    assert_eq!(result["metadata"]["lossy"], true);
}

#[test]
fn children_die_when_tinytool_is_terminated() {
    let room = Room::new();
    let sleep = marked_sleep(&room);
    let mut cmd = room.command(&[
        "bash",
        "--command",
        &format!("./{sleep} 300 & ./{sleep} 301; echo never"),
    ]);
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let mut child = cmd.spawn().unwrap();
    let until = Instant::now() + Duration::from_secs(20);
    while processes_named(&sleep).len() < 2 && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(processes_named(&sleep).len(), 2, "the sleeps never started");
    // SAFETY: sending a signal to our own child.
    unsafe {
        libc::kill(child.id() as libc::pid_t, libc::SIGTERM);
    }
    let status = child.wait().unwrap();
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(status.signal(), Some(libc::SIGTERM));
    assert_eq!(
        wait_gone(&sleep, Duration::from_secs(10)),
        Vec::<String>::new()
    );
}

#[test]
fn the_shell_dies_when_tinytool_is_killed() {
    let room = Room::new();
    let sleep = marked_sleep(&room);
    let mut cmd = room.command(&["bash", "--command", &format!("exec ./{sleep} 300")]);
    cmd.stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let mut child = cmd.spawn().unwrap();
    let until = Instant::now() + Duration::from_secs(20);
    while processes_named(&sleep).is_empty() && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(processes_named(&sleep).len(), 1, "the sleep never started");
    child.kill().unwrap();
    let _ = child.wait();
    assert_eq!(
        wait_gone(&sleep, Duration::from_secs(10)),
        Vec::<String>::new()
    );
}

#[test]
fn everything_the_command_started_dies_when_tinytool_is_killed() {
    // SIGKILL cannot be handled: the sentinel in the command's group kills it. Background
    // jobs of the shell, a double fork that left the shell's tree, and the foreground
    // child all go.
    let room = Room::new();
    let sleep = marked_sleep(&room);
    let cmd = room.command(&[
        "bash",
        "--command",
        &format!("./{sleep} 300 & (./{sleep} 301 &); ./{sleep} 302; echo never"),
    ]);
    assert_eq!(survivors_of_sigkill(cmd, &sleep, 3), Vec::<String>::new());
}

#[test]
fn a_signal_the_command_sends_its_own_group_does_not_disarm_the_sentinel() {
    let room = Room::new();
    let sleep = marked_sleep(&room);
    let cmd = room.command(&[
        "bash",
        "--command",
        &format!("trap '' USR1 ALRM; kill -USR1 0; kill -ALRM 0; ./{sleep} 300 & ./{sleep} 301"),
    ]);
    assert_eq!(survivors_of_sigkill(cmd, &sleep, 2), Vec::<String>::new());
}

#[test]
fn without_a_policy_destructive_and_secret_commands_are_refused() {
    let room = Room::new();
    room.write("build/out.o", "x");
    let run = room.call("bash", json!({"command": "rm -rf build"}));
    assert_eq!(run.code, 3, "{run:?}");
    let result = run.json();
    assert_eq!(result["metadata"]["permission"], "destructive-shell");
    assert_eq!(result["metadata"]["reason"], "destructive: rm -rf build");
    assert!(run.output().contains("destructive-shell"));
    assert!(room.path("build/out.o").exists());

    room.write(".env", "KEY=x\n");
    let run = room.call("bash", json!({"command": "cat .e''nv | head -1"}));
    assert_eq!(run.code, 3, "{run:?}");
    assert_eq!(run.json()["metadata"]["permission"], "secret-shell");
    assert_eq!(run.json()["metadata"]["reason"], "secret file: .env");

    // Harmless look-alikes run.
    let run = room.call(
        "bash",
        json!({"command": "echo rm -rf build; grep -c x build/out.o"}),
    );
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(run.output(), "rm -rf build\n1\n");
}

#[test]
fn a_policy_rule_can_allow_a_destructive_command() {
    let room = Room::new();
    room.write("build/out.o", "x");
    let policy = room.write(
        "policy.json",
        r#"{"rules":[{"permission":"destructive-shell","pattern":"rm -rf build","action":"allow"}]}"#,
    );
    let run = room.run(
        &[
            "--policy",
            policy.to_str().unwrap(),
            "bash",
            "--command",
            "rm -rf build",
        ],
        None,
    );
    assert_eq!(run.code, 0, "{run:?}");
    assert!(!room.path("build").exists());
}

#[test]
fn policy_explain_shows_each_detection_with_its_reason() {
    let room = Room::new();
    let run = room.run(
        &[
            "policy",
            "explain",
            "--json",
            "bash",
            r#"{"command":"sudo git -C repo push --force origin main; cat ~/.aws/credentials"}"#,
        ],
        None,
    );
    let result = run.json();
    let permissions: Vec<(String, String, String)> = result["permissions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["permission"].as_str().unwrap().to_string(),
                p["command"].as_str().unwrap().to_string(),
                p["reason"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect();
    // One `shell` entry per command, then each flagged command with its reason.
    let sudo = "sudo git -C repo push --force origin main";
    let cat = "cat ~/.aws/credentials";
    assert_eq!(permissions[0].0, "shell");
    assert_eq!(permissions[0].1, sudo);
    assert_eq!(permissions[1].1, cat);
    assert_eq!(
        permissions[2],
        (
            "secret-shell".to_string(),
            cat.to_string(),
            "secret file: ~/.aws/credentials".to_string()
        )
    );
    assert_eq!(
        permissions[3],
        (
            "destructive-shell".to_string(),
            sudo.to_string(),
            "destructive: git -C repo push --force origin main".to_string()
        )
    );
}
