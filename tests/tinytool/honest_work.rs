//! The sandbox is invisible to honest commands: files that only look secret are
//! seen as they are, git records inside what it records outside, the documented ways to
//! lift the masking work, and a refusal or a masked read says which path and which
//! setting. Every case compares a command inside the sandbox with the same command
//! outside it (`"sandbox": {"mode": "off"}`), as the user running the tests and, when
//! that is root, as uid 65534.

use std::process::Command;

use serde_json::json;

use crate::util::{Nobody, Room, Run, start_monitor, until_it_ends};

const ALLOW: &str = r#"{"ask": "deny", "rules": [
    {"permission": "destructive-shell", "pattern": "*", "action": "allow"}]}"#;

const CERT: &str = "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIU\n-----END CERTIFICATE-----\n";

/// A repository with files that look secret and are not, a tracked dotenv fixture and
/// an untracked, ignored `.env.local`; `sandbox` is the policy's `sandbox` key.
fn project(sandbox: &str) -> Room {
    let room = Room::new();
    let policy = ALLOW.replacen("{", &format!("{{\"sandbox\": {sandbox}, "), 1);
    room.write_user("policy.json", policy);
    room.write("google/auth/credentials.py", "TOKEN_URI = 'x'\n");
    room.write("tests/jest.env.js", "process.env.TZ = 'UTC';\n");
    room.write("tests/fixtures/basic.env", "A=1\nB=2\n");
    room.write("config.env.js", "module.exports = {};\n");
    room.write("certs/ca.pem", CERT);
    room.write(".env", "TRACKED=1\n");
    room.write(".gitignore", ".env.local\n");
    git(&room, &["init", "-q"]);
    git(&room, &["add", "-A"]);
    git(&room, &["commit", "-qm", "one"]);
    room.write(".env.local", "API_KEY=hunter2\n");
    room
}

fn git(room: &Room, args: &[&str]) -> String {
    let mut cmd = Command::new("git");
    cmd.args(["-c", "user.name=t", "-c", "user.email=t@t"])
        .args(args);
    room.enter(&mut cmd);
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "git {args:?}: {out:?}");
    String::from_utf8(out.stdout).unwrap()
}

fn bash(room: &Room, command: &str) -> Run {
    room.call("bash", json!({"command": command}))
}

/// A script that prints each file it is given with its size, naming none of them on the
/// command line (as a test suite reads its fixtures).
const SIZES: &str = "for f in $(cat list); do printf '%s %s\\n' \"$f\" \"$(wc -c < \"$f\")\"; done";

#[test]
fn files_that_only_look_secret_read_as_they_are_and_only_untracked_secrets_are_masked() {
    let room = project("{}");
    room.write(
        "list",
        "google/auth/credentials.py\ntests/jest.env.js\ntests/fixtures/basic.env\nconfig.env.js\ncerts/ca.pem\n.env\n.env.local\n",
    );
    // The first call of the project (the tracked secrets are told of once).
    let run = bash(&room, SIZES);
    let layers = &run.json()["metadata"]["sandbox"]["layers"];
    if !layers
        .as_array()
        .is_some_and(|l| l.iter().any(|x| x == "mount"))
    {
        crate::util::skip(format!("no mount layer: {run:?}"));
        return;
    }
    assert_eq!(run.code, 0, "{run:?}");
    let out = run.output();
    for (file, size) in [
        ("google/auth/credentials.py", 16),
        ("tests/jest.env.js", 24),
        ("tests/fixtures/basic.env", 8),
        ("config.env.js", 21),
        ("certs/ca.pem", CERT.len()),
        (".env", 10),
        (".env.local", 0),
    ] {
        assert!(out.contains(&format!("{file} {size}\n")), "{file}: {out}");
    }
    let sandbox = &run.json()["metadata"]["sandbox"];
    assert_eq!(sandbox["masked"], json!([".env.local"]), "{run:?}");
    let tracked = sandbox["tracked_secrets"].as_array().unwrap();
    assert!(tracked.contains(&json!(".env")), "{run:?}");
    assert!(
        tracked.contains(&json!("tests/fixtures/basic.env")),
        "{run:?}"
    );
    // The masked file the command read is named, with the settings that open it.
    assert!(
        out.contains("[sandbox: the command read .env.local as empty"),
        "{out}"
    );
    assert!(out.contains(r#""unmask": [".env.local"]"#), "{out}");
    // The tracked secrets are told once, with how to untrack them.
    assert!(out.contains("tracked by git"), "{out}");
    assert!(out.contains("git rm --cached"), "{out}");
    assert!(!bash(&room, "true").output().contains("tracked by git"));
    // And the shell detector does not ask about code.
    let run = bash(
        &room,
        "cat google/auth/credentials.py && wc -c tests/jest.env.js",
    );
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.output().starts_with("TOKEN_URI"), "{run:?}");
}

/// What git records after changing every tracked file and committing, then a stash round
/// trip: the same inside and outside the sandbox.
const ROUND_TRIP: &str = "for f in $(git ls-files); do echo changed >> \"$f\"; done \
    && git -c user.name=t -c user.email=t@t commit -qam two && git ls-tree -r HEAD \
    && for f in $(git ls-files); do echo more >> \"$f\"; done && git stash -q && git status --porcelain \
    && git stash pop -q && git status --porcelain && git stash list | wc -l";

#[test]
fn git_commits_and_stashes_inside_what_it_would_outside() {
    let inside = project("{}");
    if let Err(why) = crate::util::mount_layer(&inside) {
        crate::util::skip(&why);
        return;
    }
    let outside = project(r#"{"mode": "off"}"#);
    // A spill file in each: tinytool's folder holds something git could list.
    for room in [&inside, &outside] {
        let spilled = bash(room, "seq 1 100000");
        assert!(
            spilled.json()["metadata"]["full_output"].is_string(),
            "{spilled:?}"
        );
    }
    let a = bash(&inside, ROUND_TRIP);
    let b = bash(&outside, ROUND_TRIP);
    assert_eq!(a.code, 0, "{a:?}");
    assert_eq!(b.code, 0, "{b:?}");
    let shown = |run: &Run| {
        run.output()
            .lines()
            .take_while(|l| !l.starts_with("[sandbox:"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(shown(&a), shown(&b));
    assert!(shown(&a).contains(" M .env\n"), "{a:?}");
    assert_eq!(inside.read(".env"), "TRACKED=1\nchanged\nmore\n");
    assert_eq!(inside.read(".env.local"), "API_KEY=hunter2\n");
}

#[test]
fn a_secret_shell_allow_rule_or_sandbox_unmask_lifts_the_masking() {
    let room = project(r#"{"unmask": ["tests/*.env"]}"#);
    if let Err(why) = crate::util::mount_layer(&room) {
        crate::util::skip(&why);
        return;
    }
    room.write("tests/local.env", "X=1\n");
    room.write("list", ".env.local\ntests/local.env\n");
    let run = bash(&room, SIZES);
    assert!(run.output().contains(".env.local 0\n"), "{run:?}");
    assert!(run.output().contains("tests/local.env 4\n"), "{run:?}");
    assert_eq!(
        run.json()["metadata"]["sandbox"]["unmasked"],
        json!(["tests/local.env"])
    );
    // A rule for the command, not naming any secret.
    room.write_user(
        "policy.json",
        r#"{"ask": "deny", "rules": [
            {"permission": "secret-shell", "pattern": "*", "action": "allow"}]}"#,
    );
    let run = bash(&room, SIZES);
    assert!(run.output().contains(".env.local 16\n"), "{run:?}");
    let run = bash(&room, "cat .env.local");
    assert_eq!(run.output(), "API_KEY=hunter2\n", "{run:?}");
    // A `*` rule allows everything, it does not unmask.
    room.write_user(
        "policy.json",
        r#"{"rules": [{"permission": "*", "pattern": "*", "action": "allow"}]}"#,
    );
    let run = bash(&room, "cat .env.local; echo end");
    assert_eq!(run.output().lines().next(), Some("end"), "{run:?}");
}

#[test]
fn refusals_in_any_wording_name_the_path_and_the_setting_even_in_a_pipeline() {
    let room = project("{}");
    if let Err(why) = crate::util::mount_layer(&room) {
        crate::util::skip(&why);
        return;
    }
    let outside = format!("/var/tmp/tinytool-parity-{}", std::process::id());
    // A pipeline hides mkdir's failure: the line still comes, naming the path.
    let run = bash(&room, &format!("mkdir -p {outside}/x 2>&1 | cat"));
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.output().contains(&format!(
            "[sandbox: {outside} is read-only inside the sandbox"
        )),
        "{run:?}"
    );
    assert!(
        run.output()
            .contains(&format!(r#"add "{outside}" to "sandbox""#))
    );
    // Node's and Go's lower-case wordings.
    for message in [
        format!("npm error EROFS: read-only file system, mkdir '{outside}/_cacache'"),
        format!("go: creating work dir: mkdir {outside}/go-build1: read-only file system"),
    ] {
        let run = bash(&room, &format!("echo \"{message}\" >&2; exit 1"));
        assert!(
            run.output().contains(&format!("[sandbox: {outside}/")),
            "{message}: {run:?}"
        );
    }
    // An honest success that prints the words names nothing.
    let run = bash(
        &room,
        "echo 'docs: a read-only file system is one you cannot write'",
    );
    assert!(!run.output().contains("[sandbox:"), "{run:?}");
    assert!(!std::path::Path::new(&outside).exists());
}

#[test]
fn a_command_timing_out_with_the_network_off_says_so() {
    let room = project(r#"{"network": false}"#);
    if let Err(why) = crate::util::mount_layer(&room) {
        crate::util::skip(&why);
        return;
    }
    let run = room.call("bash", json!({"command": "sleep 5", "timeout": 300}));
    assert!(run.output().contains("timed out"), "{run:?}");
    assert!(run.output().contains("network was off"), "{run:?}");
}

#[test]
fn the_caches_the_build_policy_opens_are_made_and_writable() {
    let room = project(r#"{"writable": ["~/.npm", "~/go/pkg/mod"]}"#);
    if let Err(why) = crate::util::mount_layer(&room) {
        crate::util::skip(&why);
        return;
    }
    let run = bash(&room, "touch ~/.npm/x ~/go/pkg/mod/y && echo ok");
    assert_eq!(run.output(), "ok\n", "{run:?}");
    assert!(room.home.join(".npm/x").exists());
}

#[test]
fn unprivileged_too_tracked_secrets_are_not_masked_and_untracked_ones_are() {
    let Some(nobody) = Nobody::new(ALLOW) else {
        return;
    };
    let work = &nobody.work;
    std::fs::write(work.join(".env"), "TRACKED=1\n").unwrap();
    std::fs::write(work.join("credentials.py"), "X = 1\n").unwrap();
    std::fs::write(work.join(".gitignore"), ".env.local\n").unwrap();
    let git = |args: &[&str]| {
        assert!(
            Command::new("git")
                .args(["-c", "user.name=t", "-c", "user.email=t@t"])
                .args(["-c", "safe.directory=*"])
                .args(args)
                .current_dir(work)
                .status()
                .unwrap()
                .success()
        );
    };
    git(&["init", "-q"]);
    git(&["add", "-A"]);
    git(&["commit", "-qm", "one"]);
    std::fs::write(work.join(".env.local"), "API_KEY=hunter2\n").unwrap();
    std::fs::write(work.join("list"), ".env\ncredentials.py\n.env.local\n").unwrap();
    nobody.hand_over();
    let run = nobody.bash(work, SIZES, &[]);
    let sandbox = &run.json()["metadata"]["sandbox"];
    if !sandbox["layers"]
        .as_array()
        .is_some_and(|l| l.iter().any(|x| x == "mount"))
    {
        crate::util::skip(format!("no mount layer for uid 65534: {sandbox}"));
        return;
    }
    let out = run.output();
    assert!(out.contains(".env 10\n"), "{run:?}");
    assert!(out.contains("credentials.py 6\n"), "{run:?}");
    assert!(out.contains(".env.local 0\n"), "{run:?}");
    assert_eq!(sandbox["masked"], json!([".env.local"]), "{run:?}");
}

#[test]
fn the_tools_that_run_commands_tell_the_model_about_the_sandbox() {
    let room = project(r#"{"network": false, "writable": ["~/.npm"]}"#);
    for format in ["json", "mcp", "anthropic"] {
        let run = room.run(&["tools", "--format", format], None);
        let tools: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
        let description = |name: &str| {
            tools
                .as_array()
                .unwrap()
                .iter()
                .find(|t| t["name"] == name)
                .map(|t| t["description"].as_str().unwrap().to_string())
                .unwrap()
        };
        for name in ["bash", "monitor"] {
            let text = description(name);
            assert!(
                text.contains("Commands run in a sandbox"),
                "{format} {name}: {text}"
            );
            assert!(text.contains("~/.npm are writable"), "{text}");
            assert!(text.contains("The network is off"), "{text}");
            assert!(text.contains("read as empty"), "{text}");
        }
        assert!(!description("read").contains("sandbox"));
    }
    room.write_user("policy.json", r#"{"sandbox": {"mode": "off"}}"#);
    let run = room.run(&["tools"], None);
    assert!(
        run.stdout.contains("Commands run without a sandbox."),
        "{run:?}"
    );
}

#[test]
fn tinytool_sandbox_lists_what_is_masked_and_what_git_tracks() {
    let room = project(r#"{"unmask": ["tests/fixtures/*"]}"#);
    room.write("tests/fixtures/local.env", "X=1\n");
    let report = room.run(&["sandbox", "--json"], None).json();
    assert_eq!(report["masked"], json!([".env.local"]), "{report}");
    assert_eq!(
        report["unmasked"],
        json!(["tests/fixtures/local.env"]),
        "{report}"
    );
    assert_eq!(
        report["tracked_secrets"],
        json!([".env", "tests/fixtures/basic.env"]),
        "{report}"
    );
    assert!(
        report["tracked_notice"]
            .as_str()
            .unwrap()
            .contains("git rm --cached .env"),
        "{report}"
    );
    let text = room.run(&["sandbox"], None).stdout;
    assert!(
        text.contains("secrets git tracks (not masked): .env, tests/fixtures/basic.env"),
        "{text}"
    );
}

#[test]
fn a_secret_in_an_ignored_folder_is_masked_and_a_scan_past_its_limit_refuses() {
    let room = project("{}");
    room.write("local/.env", "DEEP=hunter2\n");
    room.write(".gitignore", ".env.local\nlocal/\n");
    room.write("list", "local/.env\n");
    let run = bash(&room, SIZES);
    if !crate::util::has_mount_layer(&run.json()) {
        crate::util::skip(format!("no mount layer: {run:?}"));
        return;
    }
    assert!(run.output().contains("local/.env 0\n"), "{run:?}");
    // 60,000 entries at the root: past the scan's default limit of 50,000.
    for i in 0..60_000 {
        std::fs::write(room.path(&format!("f{i}")), "").unwrap();
    }
    let run = bash(&room, SIZES);
    assert_eq!(run.code, 3, "{run:?}");
    assert!(!run.output().contains("hunter2"), "{run:?}");
    assert!(run.output().contains("scan_limit"), "{run:?}");
    assert_eq!(run.json()["metadata"]["sandbox"]["mask_capped"], 50_000);
    // Raised by the user: the command runs, the secret masked.
    room.write_user(
        "policy.json",
        ALLOW.replacen("{", r#"{"sandbox": {"scan_limit": 100000}, "#, 1),
    );
    let run = bash(&room, SIZES);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.output().contains("local/.env 0\n"), "{run:?}");
}

#[test]
fn a_monitor_is_stopped_when_a_secret_or_a_repository_appears_after_it_started() {
    let Some(room) = crate::util::sandboxed_room(ALLOW) else {
        return;
    };
    // It would print the secret written after it started.
    room.write("name", ".env.local\n");
    let id = start_monitor(&room, "sleep 3; cat $(cat name); sleep 30");
    room.write(".env.local", "API_KEY=hunter2\n");
    let (output, result) = until_it_ends(&room, &id);
    assert!(!output.contains("hunter2"), "{output}");
    assert!(
        output.contains("[sandbox: stopped: the secret .env.local appeared"),
        "{output} {result}"
    );
    // A repository made at --dir while it runs: stopped, and what it planted is removed.
    let id = start_monitor(
        &room,
        "while [ ! -d .git/hooks ]; do sleep 0.1; done; printf '#!/bin/sh\\necho pwned\\n' > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit; sleep 30",
    );
    git(&room, &["init", "-q"]);
    let (output, _) = until_it_ends(&room, &id);
    assert!(
        output.contains("[sandbox: stopped: a repository (.git) was created"),
        "{output}"
    );
    assert!(!room.path(".git/hooks/pre-commit").exists(), "{output}");
}

#[test]
fn a_masked_secret_replaced_while_a_command_runs_stops_the_command() {
    let Some(room) = crate::util::sandboxed_room(ALLOW) else {
        return;
    };
    room.write(".env", "API_KEY=old\n");
    room.write("name", ".env\n");
    // A monitor that keeps reading it: the new content never shows.
    let id = start_monitor(
        &room,
        "while true; do cat $(cat name); echo; sleep 0.05; done",
    );
    std::thread::sleep(std::time::Duration::from_millis(300));
    let wrote = room.call(
        "write",
        json!({"file_path": ".env", "content": "API_KEY=hunter2\n"}),
    );
    assert_eq!(wrote.code, 0, "{wrote:?}");
    let (output, _) = until_it_ends(&room, &id);
    assert!(!output.contains("hunter2"), "{output}");
    assert!(
        output.contains("[sandbox: stopped: the secret .env was replaced"),
        "{output}"
    );
    // A bash call waiting for a signal to read it: stopped when it is replaced.
    let waiting = {
        let call = room.command(&["bash"]);
        let args = json!({"command": "touch started; while [ ! -e go ]; do sleep 0.02; done; cat $(cat name)"});
        std::thread::spawn(move || {
            crate::util::run_command(call, Some(args.to_string().as_bytes()))
        })
    };
    while !room.path("started").exists() {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let wrote = room.call(
        "write",
        json!({"file_path": ".env", "content": "API_KEY=swordfish\n"}),
    );
    assert_eq!(wrote.code, 0, "{wrote:?}");
    // Stopped by now, or soon: only a command still waiting is told to go on (and then
    // reads the new secret, which fails the test).
    crate::util::until_finished(&waiting);
    room.write("go", "");
    let run = waiting.join().unwrap();
    assert!(!run.output().contains("swordfish"), "{run:?}");
    assert!(
        run.output()
            .contains("[sandbox: stopped: the secret .env was replaced"),
        "{run:?}"
    );
}

#[test]
fn unprivileged_a_secret_replaced_while_a_command_runs_stops_it() {
    let Some(nobody) = Nobody::new(ALLOW) else {
        return;
    };
    let work = nobody.work.clone();
    std::fs::write(work.join(".env"), "API_KEY=old\n").unwrap();
    std::fs::write(work.join("name"), ".env\n").unwrap();
    nobody.hand_over();
    let run = std::thread::scope(|scope| {
        let waiting = scope.spawn(|| {
            nobody.call(
                &work,
                "bash",
                &json!({"command": "touch started; while [ ! -e go ]; do sleep 0.02; done; cat $(cat name)"}),
            )
        });
        while !work.join("started").exists() && !waiting.is_finished() {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let wrote = nobody.call(
            &work,
            "write",
            &json!({"file_path": ".env", "content": "API_KEY=swordfish\n"}),
        );
        assert_eq!(wrote.code, 0, "{wrote:?}");
        crate::util::until_scoped_finished(&waiting);
        std::fs::write(work.join("go"), "").unwrap();
        waiting.join().unwrap()
    });
    if !Nobody::sandboxed(&run) {
        return;
    }
    assert!(!run.output().contains("swordfish"), "{run:?}");
    assert!(
        run.output()
            .contains("[sandbox: stopped: the secret .env was replaced"),
        "{run:?}"
    );
}

/// After `run` (ending with `echo end`) planted a hook and an `fsmonitor` in the
/// repository `repo`: both are gone.
fn assert_swept(room: &Room, run: &Run, repo: &str) {
    assert!(run.output().lines().any(|line| line == "end"), "{run:?}");
    let hook = room.path(&format!("{repo}/.git/hooks/pre-commit"));
    assert!(!hook.exists(), "{run:?}");
    let config = room.read(&format!("{repo}/.git/config"));
    assert!(!config.contains("fsmonitor"), "{config}");
}

#[test]
fn a_repository_a_command_creates_below_the_project_is_swept_and_stops_a_monitor() {
    let room = project("{}");
    let run = bash(
        &room,
        "git init -q deep/inner && printf '#!/bin/sh\\necho pwned\\n' > deep/inner/.git/hooks/pre-commit \
         && git -C deep/inner config core.fsmonitor 'echo pwned' && git -C deep/inner config user.name me; echo end",
    );
    if !crate::util::has_mount_layer(&run.json()) {
        crate::util::skip(format!("no mount layer: {run:?}"));
        return;
    }
    assert_swept(&room, &run, "deep/inner");
    // Also in a folder git ignores, which the checkpoint's watch does not see.
    std::fs::create_dir_all(room.path("build")).unwrap();
    room.write(".gitignore", ".env.local\nbuild/\n");
    let run = bash(
        &room,
        "git init -q build/x && printf '#!/bin/sh\\necho pwned\\n' > build/x/.git/hooks/pre-commit; echo end",
    );
    assert!(run.output().lines().any(|line| line == "end"), "{run:?}");
    assert!(
        !room.path("build/x/.git/hooks/pre-commit").exists(),
        "{run:?}"
    );
    assert_eq!(
        git(
            &room,
            &["config", "-f", "deep/inner/.git/config", "user.name"]
        ),
        "me\n",
        "what git init and the user's name need stays"
    );
    // A monitor running while the user makes a repository below the project: stopped
    // before it could plant a hook there.
    let id = start_monitor(&room, "sleep 30");
    std::thread::sleep(std::time::Duration::from_millis(300));
    git(&room, &["init", "-q", "other/repo"]);
    let (output, _) = until_it_ends(&room, &id);
    assert!(
        output.contains("[sandbox: stopped: a repository (other/repo/.git) was created"),
        "{output}"
    );
}

#[test]
fn a_nested_repository_is_protected_as_the_top_one_is() {
    let room = project("{}");
    std::fs::create_dir_all(room.path("libs/inner")).unwrap();
    let mut init = Command::new("git");
    init.args(["init", "-q", "libs/inner"]);
    room.enter(&mut init);
    assert!(init.status().unwrap().success());
    let run = bash(
        &room,
        "printf '#!/bin/sh\\necho pwned\\n' > libs/inner/.git/hooks/pre-commit; \
         git -C libs/inner config core.fsmonitor 'echo pwned'; \
         git -C libs/inner config core.hooksPath /tmp; echo end",
    );
    if !crate::util::has_mount_layer(&run.json()) {
        crate::util::skip(format!("no mount layer: {run:?}"));
        return;
    }
    assert_swept(&room, &run, "libs/inner");
    let config = room.read("libs/inner/.git/config");
    assert!(!config.contains("hooksPath"), "{config}");
}

#[test]
fn a_secret_under_another_name_is_a_secret_for_read_grep_and_the_shell() {
    let room = project("{}");
    // Made before the session: a hard link gives the ignored .env.local a public name.
    std::fs::hard_link(room.path(".env.local"), room.path("notes.txt")).unwrap();
    let read = room.call("read", json!({"file_path": "notes.txt"}));
    assert_eq!(read.code, 3, "{read:?}");
    assert!(!read.stdout.contains("hunter2"), "{read:?}");
    let grep = room.call("grep", json!({"pattern": "hunter2"}));
    assert!(!grep.stdout.contains("hunter2"), "{grep:?}");
    room.write("list", "notes.txt\n");
    let run = bash(&room, SIZES);
    if !crate::util::has_mount_layer(&run.json()) {
        crate::util::skip(format!("no mount layer: {run:?}"));
        return;
    }
    assert!(run.output().contains("notes.txt 0\n"), "{run:?}");
    assert_eq!(
        run.json()["metadata"]["sandbox"]["masked"],
        json!([".env.local", "notes.txt"]),
        "{run:?}"
    );
    // Its owner's files are as they were.
    assert_eq!(room.read("notes.txt"), "API_KEY=hunter2\n");
}
