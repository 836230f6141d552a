//! The parity harness (`conformance/sandbox-parity`) on a synthetic project, with
//! no network: a Node test suite and a git repository that track files whose names look
//! secret (`config.env.test.js`, `credentials.py`, a dotenv fixture, a public certificate,
//! a tracked `.env`) beside an untracked, ignored `.env.local`. Under the README's build
//! policy, the suite's counts and the git round trip are the same with and without the
//! sandbox, and the harness says so.

use std::process::Command;

use crate::util::Room;

/// The README's `json policy` block of the everyday build agent.
fn build_policy() -> String {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    readme
        .split("```json policy")
        .nth(2)
        .and_then(|b| b.split("```").next())
        .unwrap()
        .to_string()
}

const SUITE: &str = r#"const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const read = (f) => fs.readFileSync(f, 'utf8');
test('dotenv fixture', () => assert.match(read('fixtures/basic.env'), /A=1/));
test('code named like a secret', () => assert.match(read('credentials.py'), /TOKEN_URI/));
test('public certificate', () => assert.match(read('certs/ca.pem'), /BEGIN CERTIFICATE/));
test('tracked dotenv', () => assert.match(read('.env'), /TRACKED/));
test('own source', () => assert.match(read('test/config.env.test.js'), /node:test/));
test.skip('skipped', () => {});
"#;

fn git(room: &Room, args: &[&str]) {
    let mut cmd = Command::new("git");
    cmd.args(["-c", "user.name=t", "-c", "user.email=t@t"])
        .args(args);
    room.enter(&mut cmd);
    assert!(cmd.status().unwrap().success(), "git {args:?}");
}

#[test]
fn the_harness_finds_a_synthetic_project_the_same_inside_and_outside() {
    if Command::new("node").arg("--version").output().is_err() {
        crate::util::skip("node is not installed");
        return;
    }
    let room = Room::new();
    if let Err(why) = crate::util::mount_layer(&room) {
        crate::util::skip(&why);
        return;
    }
    room.write("README.md", "synthetic\n");
    room.write(
        "package.json",
        r#"{"name": "synthetic", "version": "1.0.0", "scripts": {"test": "node --test"}}"#,
    );
    room.write("test/config.env.test.js", SUITE);
    room.write("fixtures/basic.env", "A=1\n");
    room.write("credentials.py", "TOKEN_URI = 'x'\n");
    room.write(
        "certs/ca.pem",
        "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n",
    );
    room.write(".env", "TRACKED=1\n");
    room.write(".gitignore", ".env.local\n");
    git(&room, &["init", "-q"]);
    git(&room, &["add", "-A"]);
    git(&room, &["commit", "-qm", "one"]);
    room.write(".env.local", "API_KEY=hunter2\n");
    let policy = room.write_user("build-policy.json", build_policy());

    let harness = concat!(env!("CARGO_MANIFEST_DIR"), "/conformance/sandbox-parity");
    let mut cmd = Command::new("bash");
    cmd.arg(harness)
        .args(["--bin", crate::util::bin()])
        .arg("--policy")
        .arg(&policy)
        .arg(format!("{}=node --test", room.dir.display()));
    room.enter(&mut cmd);
    let out = cmd.output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "the harness found a difference:\n{stdout}\n{stderr}"
    );
    let name = room.dir.file_name().unwrap().to_string_lossy().into_owned();
    let row = stdout
        .lines()
        .find(|l| l.starts_with(&format!("| {name} ")))
        .unwrap_or_else(|| panic!("no row for the project:\n{stdout}\n{stderr}"));
    let cells: Vec<&str> = row.split('|').map(str::trim).collect();
    assert_eq!(
        cells[2..7],
        ["5/0/1 (exit 0)", "5/0/1 (exit 0)", "yes", "yes", "same"],
        "{row}"
    );
    // The harness works on copies: the project is as it was.
    assert_eq!(room.read(".env.local"), "API_KEY=hunter2\n");
}
