//! Interoperability with a real MCP client: the official Python SDK (pinned), in a virtual
//! environment the test creates under `target/`. Skipped (`util::skip`) when that is
//! impossible (no python3, no package registry), which fails under `CI`.

use std::path::PathBuf;
use std::process::Command;

use serde_json::{Value, json};

use crate::util::{Room, bin};

/// The pinned SDK release.
const SDK: &str = "mcp==2.3.0";

use crate::util::INSTALLING;

/// The virtual environment's python, creating and filling it on first use.
fn sdk_python() -> Option<PathBuf> {
    let _installing = INSTALLING
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let venv = crate::util::target_dir().join("mcp-sdk-venv");
    let python = venv.join("bin/python");
    let marker = venv.join(format!("installed-{SDK}"));
    if marker.exists() {
        return Some(python);
    }
    let fail = |why: String| -> Option<PathBuf> {
        crate::util::skip(format!("MCP SDK interop test: {why}"));
        None
    };
    let made = Command::new("python3")
        .args(["-m", "venv"])
        .arg(&venv)
        .output();
    match made {
        Ok(out) if out.status.success() => {}
        Ok(out) => {
            return fail(format!(
                "python3 -m venv failed: {}",
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        Err(err) => return fail(format!("python3 is not available: {err}")),
    }
    let installed = Command::new(&python)
        .args([
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            SDK,
        ])
        .output();
    match installed {
        Ok(out) if out.status.success() => {
            std::fs::write(&marker, "").ok()?;
            Some(python)
        }
        Ok(out) => fail(format!(
            "pip install {SDK} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        )),
        Err(err) => fail(format!("pip could not run: {err}")),
    }
}

/// Runs the SDK client `tests/mcp/SCRIPT` with `python`, which starts `tinytool mcp` on
/// stdio in `room` under `policy`, with `args` after those; returns its JSON report.
fn stdio_client(
    python: &std::path::Path,
    script: &str,
    room: &Room,
    policy: &std::path::Path,
    args: &[&str],
) -> Value {
    let mut cmd = Command::new(python);
    cmd.arg(format!("{}/tests/mcp/{script}", env!("CARGO_MANIFEST_DIR")))
        .arg(bin())
        .arg(&room.dir)
        .arg(policy)
        .args(args);
    cmd.env_clear().current_dir(&room.dir);
    for (k, v) in &room.env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "client failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Runs an SDK client `script` with `python` against a server on 127.0.0.1, reached
/// directly whatever proxy the environment names.
fn http_client(python: &std::path::Path, script: &str, args: &[&str]) -> std::process::Output {
    Command::new(python)
        .arg(script)
        .args(args)
        .env_remove("HTTP_PROXY")
        .env_remove("http_proxy")
        .env_remove("ALL_PROXY")
        .env_remove("all_proxy")
        .env("NO_PROXY", "127.0.0.1,localhost")
        .output()
        .unwrap()
}

#[test]
fn the_official_python_client_lists_reads_greps_and_sees_refusals() {
    let Some(python) = sdk_python() else {
        return;
    };
    let room = Room::new();
    room.write("notes/a.txt", "alpha\nneedle here\n");
    let policy = room.path("policy.json");
    std::fs::write(
        &policy,
        r#"{"rules": [{"permission": "edit", "pattern": "secret/*", "action": "deny"}]}"#,
    )
    .unwrap();
    let calls = json!([
        ["read", {"file_path": "notes/a.txt"}],
        ["grep", {"pattern": "needle"}],
        ["write", {"file_path": "secret/x.txt", "content": "nope"}],
    ]);
    let report = stdio_client(&python, "client.py", &room, &policy, &[&calls.to_string()]);
    assert_eq!(report["server"], "tinytool");
    let tools: Vec<&str> = report["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    assert!(tools.contains(&"read") && tools.contains(&"grep") && tools.contains(&"write"));
    assert!(!tools.contains(&"invalid"));
    let calls = report["calls"].as_array().unwrap();
    assert_eq!(calls[0]["isError"], false);
    assert_eq!(calls[0]["text"], "1\talpha\n2\tneedle here\n");
    assert_eq!(calls[1]["isError"], false);
    assert!(
        calls[1]["text"]
            .as_str()
            .unwrap()
            .contains("notes/a.txt:2:needle here"),
        "{}",
        calls[1]["text"]
    );
    assert_eq!(calls[2]["isError"], true);
    assert!(
        calls[2]["text"]
            .as_str()
            .unwrap()
            .contains("Refused by the policy"),
        "{}",
        calls[2]["text"]
    );
    assert!(!room.path("secret/x.txt").exists());
}

#[test]
fn the_official_python_client_works_over_http_in_both_eras() {
    let Some(python) = sdk_python() else {
        return;
    };
    let room = Room::new();
    room.write("notes/a.txt", "alpha\nneedle here\n");
    let server = crate::mcp_http::Server::start(&room, &[]);
    let url = format!("http://127.0.0.1:{}/mcp", server.port);
    let calls = json!([
        ["read", {"file_path": "notes/a.txt"}],
        ["bash", {"command": "echo out"}],
        ["question", {"question": "Which colour?"}],
    ]);
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/mcp/client_http.py");
    for (mode, protocol) in [("legacy", "2025-11-25"), ("auto", "2026-07-28")] {
        let out = http_client(&python, script, &[&url, mode, &calls.to_string()]);
        assert!(
            out.status.success(),
            "{mode} client failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let report: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(report["protocol"], protocol, "{mode}");
        assert_eq!(report["server"], "tinytool");
        let calls = report["calls"].as_array().unwrap();
        // A client that reads only structuredContent sees the output too.
        assert_eq!(
            calls[0]["structured"]["output"],
            "1\talpha\n2\tneedle here\n"
        );
        assert_eq!(calls[1]["text"], "out\n");
        assert_eq!(calls[1]["structured"]["output"], "out\n");
        // The question reached the client (elicitation, or input_required then a retry).
        assert_eq!(calls[2]["isError"], false, "{mode}: {}", calls[2]);
        assert_eq!(calls[2]["text"], "blue", "{mode}");
    }
}

#[test]
fn the_official_python_client_gets_every_answer_of_two_hundred_parallel_calls() {
    let Some(python) = sdk_python() else {
        return;
    };
    let room = Room::new();
    let server = crate::mcp_http::Server::start(&room, &[]);
    let url = format!("http://127.0.0.1:{}/mcp", server.port);
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/mcp/client_load.py");
    let out = http_client(&python, script, &[&url, "200"]);
    assert!(
        out.status.success(),
        "the client failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The SDK used to lose the session to a 503 once 64 requests were in flight.
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["answered"], 200, "{report}");
}

#[test]
fn a_call_the_python_client_times_out_on_is_stopped_while_it_stays_connected() {
    let Some(python) = sdk_python() else {
        return;
    };
    let room = Room::new();
    let sleep = crate::util::marked_sleep(&room);
    let policy = room.path("policy.json");
    std::fs::write(
        &policy,
        r#"{"rules": [{"permission": "shell", "pattern": "*", "action": "allow"}]}"#,
    )
    .unwrap();
    let command = format!("./{sleep} 60");
    let report = stdio_client(&python, "timeout.py", &room, &policy, &[&command, &sleep]);
    assert_eq!(report["timedOut"], true, "{report}");
    // The SDK (2.x) sends notifications/cancelled on its time-out: the command's group is
    // killed while the session goes on.
    assert_eq!(report["goneWhileConnected"], true, "{report}");
    assert!(crate::util::wait_gone(&sleep, std::time::Duration::from_secs(10)).is_empty());
}

/// The pinned TypeScript SDK release.
const TS_SDK: &str = "@modelcontextprotocol/sdk@1.32.2";

/// A folder with the TypeScript SDK installed and the client script beside it, installing
/// it on first use.
fn ts_sdk() -> Option<PathBuf> {
    let _installing = INSTALLING
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/mcp/client.mjs");
    let fail = |why: String| -> Option<PathBuf> {
        crate::util::skip(format!("MCP TypeScript SDK interop test: {why}"));
        None
    };
    let dir = match crate::util::npm_install("mcp-ts-sdk", &[TS_SDK], "{\"type\": \"module\"}\n") {
        Ok(dir) => dir,
        Err(why) => return fail(why),
    };
    // Node resolves the SDK from the script's folder: the script is copied beside it,
    // by a rename, so that a client another test runs never reads half of it.
    let staged = dir.join(format!("client.mjs.{}", std::process::id()));
    if let Err(err) = std::fs::copy(script, &staged)
        .and_then(|_| std::fs::rename(&staged, dir.join("client.mjs")))
    {
        return fail(format!("cannot copy the client script: {err}"));
    }
    Some(dir)
}

/// Runs the TypeScript client with `args` and returns its report.
fn ts_client(dir: &std::path::Path, args: &[&str], room: &Room) -> Value {
    let mut cmd = Command::new("node");
    cmd.arg(dir.join("client.mjs")).args(args);
    cmd.env_clear();
    for (k, v) in &room.env {
        cmd.env(k, v);
    }
    cmd.env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("NO_PROXY", "127.0.0.1,localhost");
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "client failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// What a large image read must look like to a client: an image it can show (downscaled if
/// need be) or a refusal naming the cap; never a failure of the connection.
fn assert_large_image_answered(call: &Value) {
    assert!(call.get("failed").is_none(), "the SDK failed: {call}");
    let images = call["images"].as_array().cloned().unwrap_or_default();
    if call["isError"] == true {
        assert!(
            call["text"].as_str().unwrap_or_default().contains("MiB")
                || call["text"].as_str().unwrap_or_default().contains("bytes"),
            "a refused image names the cap: {call}"
        );
    } else {
        assert_eq!(images.len(), 1, "{call}");
        assert!(images[0]["bytes"].as_u64().unwrap_or(0) > 0, "{call}");
    }
}

#[test]
fn the_official_typescript_client_reads_a_large_image_over_stdio() {
    let Some(sdk) = ts_sdk() else {
        return;
    };
    let room = Room::new();
    let png = crate::util::noise_png(1300, 1300);
    assert!(png.len() > 5_000_000, "{}", png.len());
    room.write("big.png", png);
    room.write("notes.txt", "after the image\n");
    let calls = json!([
        ["read", {"file_path": "big.png"}],
        ["read", {"file_path": "notes.txt"}],
    ]);
    let report = ts_client(
        &sdk,
        &[
            "stdio",
            bin(),
            room.dir.to_str().unwrap(),
            &calls.to_string(),
        ],
        &room,
    );
    assert_eq!(report["server"], "tinytool");
    let calls = report["calls"].as_array().unwrap();
    assert_large_image_answered(&calls[0]);
    // The session outlived the image.
    assert_eq!(calls[1]["text"], "1\tafter the image\n", "{}", calls[1]);
}

#[test]
fn the_official_typescript_client_reads_a_large_image_over_http() {
    let Some(sdk) = ts_sdk() else {
        return;
    };
    let room = Room::new();
    room.write("big.png", crate::util::noise_png(1300, 1300));
    room.write("notes.txt", "after the image\n");
    let server = crate::mcp_http::Server::start(&room, &[]);
    let url = format!("http://127.0.0.1:{}/mcp", server.port);
    let calls = json!([
        ["read", {"file_path": "big.png"}],
        ["read", {"file_path": "notes.txt"}],
    ]);
    let report = ts_client(&sdk, &["http", &url, &calls.to_string()], &room);
    let calls = report["calls"].as_array().unwrap();
    assert_large_image_answered(&calls[0]);
    assert_eq!(calls[1]["text"], "1\tafter the image\n", "{}", calls[1]);
}
