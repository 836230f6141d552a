//! Reads that go around the `read` tool must get its decision too: grep and glob judge
//! every file and path below their root, and skill every SKILL.md it would serve.

use serde_json::json;

use crate::util::Room;

fn user_policy(room: &Room, rules: serde_json::Value) {
    room.write_user("policy.json", json!({ "rules": rules }).to_string());
}

fn deny(pattern: &str) -> serde_json::Value {
    json!({"permission": "read", "pattern": pattern, "action": "deny"})
}

fn allow(permission: &str, pattern: &str) -> serde_json::Value {
    json!({"permission": permission, "pattern": pattern, "action": "allow"})
}

/// A room with a secret folder, a public file and a policy denying `secret/*`.
fn secret_room() -> Room {
    let room = Room::new();
    room.write("secret/creds.txt", "password=hunter2\n");
    room.write("secret/deeper/more.txt", "password=swordfish\n");
    room.write("pub/notes.txt", "password policy: long\n");
    user_policy(&room, json!([deny("secret/*")]));
    room
}

#[test]
fn grep_does_not_search_files_the_read_tool_would_refuse() {
    let room = secret_room();
    let read = room.call("read", json!({"file_path": "secret/creds.txt"}));
    assert_eq!(read.code, 3, "{read:?}");
    for args in [
        json!({"pattern": "password"}),
        json!({"pattern": "password", "path": "secret"}),
        json!({"pattern": "password", "include": "secret/*"}),
    ] {
        let run = room.call("grep", args.clone());
        assert_eq!(run.code, 0, "{run:?}");
        let out = run.output();
        assert!(
            !out.contains("hunter2") && !out.contains("swordfish"),
            "{args}: {out}"
        );
        assert!(
            out.contains(" refused by the policy; not cut]"),
            "{args}: {out}"
        );
        assert!(run.json()["metadata"]["skipped_policy"].as_u64().unwrap() > 0);
    }
    // From the top the denied folder is left out whole (one refusal); inside it, each file.
    let top = room.call("grep", json!({"pattern": "password"}));
    assert_eq!(
        top.output(),
        "pub/notes.txt:1:password policy: long\n[skipped: 0 files over 1 MB, 0 binary, \
         0 secret-looking, 0 skip directories pruned, 1 refused by the policy; not cut]\n"
    );
    let inside = room.call("grep", json!({"pattern": "password", "path": "secret"}));
    assert_eq!(inside.json()["metadata"]["skipped_policy"], 2);
    // A root the rule covers is the call's own access: refused outright.
    for path in ["secret/creds.txt", "secret/deeper"] {
        let run = room.call("grep", json!({"pattern": "password", "path": path}));
        assert_eq!(run.code, 3, "{run:?}");
    }
}

#[test]
fn glob_does_not_list_paths_the_read_tool_would_refuse() {
    let room = secret_room();
    let all = room.call("glob", json!({"pattern": "**/*"}));
    assert_eq!(all.code, 0, "{all:?}");
    assert_eq!(
        all.output(),
        "pub/notes.txt\n[skipped: 0 skip directories pruned, 1 refused by the policy; not cut]\n"
    );
    let inside = room.call("glob", json!({"pattern": "secret/**/*"}));
    let out = inside.output();
    assert!(!out.contains("creds") && !out.contains("more.txt"), "{out}");
    assert!(out.contains("2 refused by the policy"), "{out}");
    // The folder's own name is not under `secret/*`: simple mode still lists it.
    let top = room.call("glob", json!({"pattern": "*"}));
    assert_eq!(top.output(), "pub\nsecret\n");
}

#[test]
fn file_patterns_and_later_allows_are_judged_per_file() {
    let room = Room::new();
    room.write("keys/server.pem", "BEGIN KEY\n");
    room.write("keys/readme.txt", "KEY notes\n");
    room.write("secret/open/ok.txt", "KEY shared\n");
    room.write("secret/closed.txt", "KEY private\n");
    user_policy(
        &room,
        json!([
            deny("*.pem"),
            deny("secret/*"),
            allow("read", "secret/open/*")
        ]),
    );
    let run = room.call("grep", json!({"pattern": "KEY"}));
    let out = run.output();
    assert!(out.contains("keys/readme.txt:1:KEY notes"), "{out}");
    assert!(out.contains("secret/open/ok.txt:1:KEY shared"), "{out}");
    assert!(!out.contains("BEGIN") && !out.contains("private"), "{out}");
    // A refused `.pem` is counted secret-looking: a secret's name (its content, no PEM
    // block at all, would make it one too).
    assert_eq!(run.json()["metadata"]["skipped_policy"], 1, "{out}");
    assert_eq!(run.json()["metadata"]["skipped_secret"], 1, "{out}");
    let listed = room.call("glob", json!({"pattern": "**/*.*"}));
    let out = listed.output();
    assert!(out.contains("secret/open/ok.txt") && out.contains("keys/readme.txt"));
    assert!(
        !out.contains("server.pem") && !out.contains("closed.txt"),
        "{out}"
    );
}

#[test]
fn searches_outside_the_directory_judge_absolute_paths() {
    let room = Room::new();
    let outside = room.tmp.path().canonicalize().unwrap().join("outside");
    std::fs::create_dir_all(outside.join("private")).unwrap();
    std::fs::write(outside.join("private/id"), "token=1\n").unwrap();
    std::fs::write(outside.join("open.txt"), "token=2\n").unwrap();
    let root = outside.to_string_lossy().into_owned();
    user_policy(
        &room,
        json!([
            allow("external_directory", &format!("{root}/*")),
            allow("external_directory", &root),
            deny(&format!("{root}/private/*")),
        ]),
    );
    let run = room.call("grep", json!({"pattern": "token", "path": root}));
    assert_eq!(run.code, 0, "{run:?}");
    let out = run.output();
    assert!(
        out.starts_with(&format!("{root}/open.txt:1:token=2\n")),
        "{out}"
    );
    assert!(!out.contains("token=1"), "{out}");
    let listed = room.call("glob", json!({"pattern": "**/*", "path": root}));
    assert!(
        !listed.output().contains("private/id"),
        "{}",
        listed.output()
    );
}

#[test]
fn files_outside_the_directory_get_their_own_external_directory_decision() {
    let room = Room::new();
    let outside = room.tmp.path().canonicalize().unwrap().join("ext");
    std::fs::create_dir_all(outside.join("private")).unwrap();
    std::fs::write(outside.join("private/f.txt"), "token=1\n").unwrap();
    std::fs::write(outside.join("a.txt"), "token=2\n").unwrap();
    let root = outside.to_string_lossy().into_owned();
    // The root alone is allowed: every file below it still asks, which is a refusal.
    user_policy(&room, json!([allow("external_directory", &root)]));
    let read = room.call("read", json!({"file_path": format!("{root}/a.txt")}));
    assert_eq!(read.code, 3, "{read:?}");
    let run = room.call("grep", json!({"pattern": "token", "path": root}));
    assert!(!run.output().contains("token="), "{run:?}");
    // An allow of everything below, then a deny of one folder.
    user_policy(
        &room,
        json!([
            allow("external_directory", &format!("{root}*")),
            {"permission": "external_directory", "pattern": format!("{root}/private/*"), "action": "deny"},
        ]),
    );
    let read = room.call(
        "read",
        json!({"file_path": format!("{root}/private/f.txt")}),
    );
    assert_eq!(read.code, 3, "{read:?}");
    let run = room.call("grep", json!({"pattern": "token", "path": root}));
    let out = run.output();
    assert!(out.contains("token=2") && !out.contains("token=1"), "{out}");
    let listed = room
        .call("glob", json!({"pattern": "**/*", "path": root}))
        .output();
    assert!(
        listed.contains("a.txt") && !listed.contains("f.txt"),
        "{listed}"
    );
}

#[test]
fn env_files_stay_secret_looking_and_approvals_follow_the_policy() {
    let room = Room::new();
    room.write(".env", "TOKEN=1\n");
    room.write("app.txt", "TOKEN=2\n");
    let run = room.call("grep", json!({"pattern": "TOKEN"}));
    assert_eq!(
        run.output(),
        "app.txt:1:TOKEN=2\n[skipped: 0 files over 1 MB, 0 binary, 1 secret-looking, \
         0 skip directories pruned; not cut]\n"
    );
    let root = room.call("grep", json!({"pattern": "TOKEN", "path": ".env"}));
    assert_eq!(root.code, 3, "{root:?}");
    room.write_user("policy.json", json!({"ask": "allow"}).to_string());
    let open = room.call("grep", json!({"pattern": "TOKEN"}));
    assert!(
        open.output().contains(".env:1:TOKEN=1"),
        "{}",
        open.output()
    );
}

#[test]
fn skills_linking_out_of_their_folder_are_not_served() {
    let room = Room::new();
    room.write(".env", "TOPSECRET=1\n");
    room.write(".tinytool/skills/ok/SKILL.md", "Fine $1");
    std::fs::create_dir_all(room.path(".tinytool/skills/leak")).unwrap();
    std::os::unix::fs::symlink("../../../.env", room.path(".tinytool/skills/leak/SKILL.md"))
        .unwrap();
    std::fs::create_dir_all(room.path(".tinytool/skills/shadow")).unwrap();
    std::os::unix::fs::symlink("/etc/passwd", room.path(".tinytool/skills/shadow/SKILL.md"))
        .unwrap();
    assert_eq!(room.call("read", json!({"file_path": ".env"})).code, 3);
    for name in ["leak", "shadow"] {
        let run = room.call("skill", json!({"name": name}));
        assert_eq!(run.code, 1, "{run:?}");
        let out = run.output();
        assert!(
            !out.contains("TOPSECRET") && !out.contains("root:"),
            "{out}"
        );
        assert!(
            out.starts_with(&format!(
                "Skill \"{name}\" is not served: its SKILL.md .tinytool/skills/{name}/SKILL.md \
                 resolves to "
            )),
            "{out}"
        );
        assert!(
            out.contains("outside its skills folder .tinytool/skills."),
            "{out}"
        );
    }
    assert_eq!(
        room.call("skill", json!({"name": "ok", "arguments": "x"}))
            .output(),
        "Fine x"
    );
    let missing = room.call("skill", json!({"name": "nope"}));
    assert_eq!(
        missing.output(),
        "Skill \"nope\" not found.\nAvailable skills:\n- ok\nLeft out: leak (its SKILL.md \
         resolves outside its skills folder), shadow (its SKILL.md resolves outside its \
         skills folder)."
    );
}

#[test]
fn skills_the_policy_does_not_let_you_read_are_refused_by_the_gate() {
    let room = Room::new();
    room.write(
        ".tinytool/skills/private/SKILL.md",
        "---\ndescription: hidden\n---\nSECRET",
    );
    room.write(".tinytool/skills/public/SKILL.md", "Public");
    user_policy(&room, json!([deny(".tinytool/skills/private/*")]));
    let run = room.call("skill", json!({"name": "private"}));
    assert_eq!(run.code, 3, "{run:?}");
    let out = run.output();
    assert!(!out.contains("SECRET"), "{out}");
    assert!(
        out.contains(
            "`read` permission for `.tinytool/skills/private/SKILL.md` is denied by rule \
             `read .tinytool/skills/private/* deny`"
        ),
        "{out}"
    );
    let missing = room.call("skill", json!({"name": "nope"}));
    assert_eq!(
        missing.output(),
        "Skill \"nope\" not found.\nAvailable skills:\n- public\nLeft out: private (the \
         policy does not let you read its SKILL.md)."
    );
    // A link inside the skills folder to a .env file there is a read of that .env file.
    room.write(".tinytool/skills/public/.env", "TOKEN=1");
    std::fs::create_dir_all(room.path(".tinytool/skills/env")).unwrap();
    std::os::unix::fs::symlink("../public/.env", room.path(".tinytool/skills/env/SKILL.md"))
        .unwrap();
    let env = room.call("skill", json!({"name": "env"}));
    assert_eq!(env.code, 3, "{env:?}");
    assert!(
        env.output().contains("read <secret file> ask"),
        "{}",
        env.output()
    );
}

#[test]
fn skill_paths_from_the_project_config_need_external_directory() {
    let room = Room::new();
    let shared = room
        .tmp
        .path()
        .canonicalize()
        .unwrap()
        .join("shared-skills");
    std::fs::create_dir_all(shared.join("outer")).unwrap();
    std::fs::write(shared.join("outer/SKILL.md"), "Outer skill").unwrap();
    room.write(
        ".tinytool/config.json",
        json!({"skills": {"paths": ["../shared-skills"]}}).to_string(),
    );
    let run = room.call("skill", json!({"name": "outer"}));
    assert_eq!(run.code, 3, "{run:?}");
    let file = shared.join("outer/SKILL.md");
    assert!(
        run.output().contains(&format!(
            "`external_directory` permission for `{}`",
            file.display()
        )),
        "{}",
        run.output()
    );
    // A project policy allowing it counts only when the user trusts the project.
    room.write(
        ".tinytool/policy.json",
        json!({"rules": [allow("external_directory", "*")]}).to_string(),
    );
    assert_eq!(room.call("skill", json!({"name": "outer"})).code, 3);
    // The same folder named by the user config is the user's own choice.
    std::fs::remove_file(room.path(".tinytool/config.json")).unwrap();
    room.write_user(
        "config.json",
        json!({"skills": {"paths": [shared.to_string_lossy()]}}).to_string(),
    );
    let mine = room.call("skill", json!({"name": "outer"}));
    assert_eq!(mine.code, 0, "{mine:?}");
    assert_eq!(mine.output(), "Outer skill");
}
