//! Issue 18 item 6: edit, write and apply_patch never show the content of a file the
//! caller may not read (`.env` under the default policy), in any part of the result.

use serde_json::json;

use crate::util::Room;

const SECRET: &str = "hunter2-d41d8cd98f";

/// A room with `.env` holding the secret, whose read the default policy refuses.
fn room() -> Room {
    let room = Room::new();
    room.write(".env", format!("API_KEY={SECRET}\nDEBUG=1\n"));
    let read = room.call("read", json!({"file_path": ".env"}));
    assert_ne!(read.code, 0, "read of .env must be refused: {read:?}");
    assert!(!read.stdout.contains(SECRET));
    room
}

/// Nothing of the run carries the secret: neither its JSON result nor its stderr.
fn assert_hidden(run: &crate::util::Run) {
    assert!(!run.stdout.contains(SECRET), "{}", run.stdout);
    assert!(!run.stdout.contains("hunter2"), "{}", run.stdout);
    assert!(!run.stderr.contains(SECRET), "{}", run.stderr);
}

#[test]
fn an_edit_with_a_wrong_old_string_shows_no_line_of_the_file() {
    let room = room();
    let run = room.call(
        "edit",
        json!({"file_path": ".env", "old_string": "API_KEY=hunter2-d41d8cd98e\n", "new_string": "X=1\n"}),
    );
    assert_ne!(run.code, 0, "{run:?}");
    assert_hidden(&run);
    assert!(
        run.output()
            .contains("[content of a secret file not shown]"),
        "{}",
        run.output()
    );
    assert_eq!(run.json()["metadata"]["reason"], "not_found");
}

#[test]
fn an_ambiguous_edit_gives_lines_not_content() {
    let room = room();
    room.write(".env", format!("A={SECRET}\nA={SECRET}\n"));
    let run = room.call(
        "edit",
        json!({"file_path": ".env", "old_string": "A=", "new_string": "B="}),
    );
    assert_ne!(run.code, 0, "{run:?}");
    assert_hidden(&run);
    assert!(run.output().contains("appears 2 times"), "{}", run.output());
}

#[test]
fn a_successful_edit_hides_its_diff() {
    let room = room();
    let run = room.call(
        "edit",
        json!({"file_path": ".env", "old_string": "DEBUG=1", "new_string": "DEBUG=0"}),
    );
    assert_eq!(run.code, 0, "{run:?}");
    assert_hidden(&run);
    assert!(
        run.json()["metadata"]["diff"]
            .as_str()
            .unwrap()
            .contains("[content of a secret file not shown]")
    );
    assert_eq!(room.read(".env"), format!("API_KEY={SECRET}\nDEBUG=0\n"));
}

#[test]
fn apply_patch_moves_deletes_and_mismatches_show_no_secret_and_move_none() {
    let room = room();
    let patch = |body: &str| json!({"patch": format!("*** Begin Patch\n{body}*** End Patch\n")});
    // A hunk that does not match: the refusal would quote the file's line.
    let run = room.call(
        "apply_patch",
        patch("*** Update File: .env\n@@\n API_KEY=wrong\n-DEBUG=1\n+DEBUG=0\n"),
    );
    assert_ne!(run.code, 0, "{run:?}");
    assert_hidden(&run);
    // A move carries the content to a name no read rule guards: it needs the
    // secret's `read`, which the default policy refuses.
    let run = room.call(
        "apply_patch",
        patch("*** Update File: .env\n*** Move to: config/moved.txt\n"),
    );
    assert_eq!(run.code, 3, "{run:?}");
    assert_hidden(&run);
    assert!(
        run.output().contains("`read` permission for `.env`"),
        "{run:?}"
    );
    assert!(!room.path("config/moved.txt").exists());
    assert!(room.read(".env").contains(SECRET));
    // Nor onto a secret: that would replace it with what the caller chose.
    room.write("notes.txt", "plain\n");
    let run = room.call(
        "apply_patch",
        patch("*** Update File: notes.txt\n*** Move to: .env\n"),
    );
    assert_eq!(run.code, 3, "{run:?}");
    assert!(room.read(".env").contains(SECRET));
    assert_eq!(room.read("notes.txt"), "plain\n");
    // Deleting a secret: its removed lines are not shown either.
    room.write(".env.local", format!("TOKEN={SECRET}\n"));
    let run = room.call("apply_patch", patch("*** Delete File: .env.local\n"));
    assert_eq!(run.code, 0, "{run:?}");
    assert_hidden(&run);
}

#[test]
fn a_readable_file_still_shows_its_content() {
    let room = room();
    room.write("app.txt", "fn a() {\n    let alpha = 1;\n    x\n}\n");
    let run = room.call(
        "edit",
        json!({"file_path": "app.txt", "old_string": "fn a() {\n    let alpha = 2;\n    x\n}", "new_string": "y"}),
    );
    assert!(run.output().contains("let alpha = 1;"), "{}", run.output());
}

#[test]
fn a_failing_formatter_does_not_quote_a_secret_file() {
    let room = room();
    room.write_user(
        "config.json",
        json!({"formatters": {".env": ["sh", "-c", "cat \"$0\" >&2; exit 2", "{file}"]}})
            .to_string(),
    );
    // The user lets the formatter run on secret files (reading .env stays refused).
    room.write_user(
        "policy.json",
        json!({"rules": [{"permission": "secret-shell", "pattern": "*", "action": "allow"}]})
            .to_string(),
    );
    let run = room.call(
        "edit",
        json!({"file_path": ".env", "old_string": "DEBUG=1", "new_string": "DEBUG=0"}),
    );
    assert_eq!(run.code, 0, "{run:?}");
    assert_hidden(&run);
    assert_eq!(run.json()["metadata"]["formatter"]["status"], "failed");
}

#[test]
fn no_change_turns_a_secret_into_a_readable_file() {
    let room = room();
    let creds = format!("{{\"client_secret\": \"{SECRET}\"}}\n");
    room.write("credentials.json", &creds);
    // A secret by its content: renaming the field would make it public.
    let edit = room.call(
        "edit",
        json!({"file_path": "credentials.json", "old_string": "client_secret", "new_string": "client_sekret"}),
    );
    assert_eq!(edit.code, 1, "{edit:?}");
    assert_eq!(edit.json()["metadata"]["reason"], "secret", "{edit:?}");
    assert_hidden(&edit);
    let patch = room.call(
        "apply_patch",
        json!({"patch": format!("*** Begin Patch\n*** Update File: credentials.json\n@@\n-{{\"client_secret\": \"{SECRET}\"}}\n+{{\"client_sekret\": \"{SECRET}\"}}\n*** End Patch\n")}),
    );
    assert_ne!(patch.code, 0, "{patch:?}");
    assert!(
        patch
            .output()
            .contains("would make credentials.json readable"),
        "{patch:?}"
    );
    assert_eq!(room.read("credentials.json"), creds);
    // Another name of `.env`: rewriting it would give it an identity of its own.
    std::fs::hard_link(room.path(".env"), room.path("notes.txt")).unwrap();
    let edit = room.call(
        "edit",
        json!({"file_path": "notes.txt", "old_string": "DEBUG=1", "new_string": "DEBUG=0"}),
    );
    assert_eq!(edit.code, 1, "{edit:?}");
    assert!(edit.output().contains("another name of one"), "{edit:?}");
    // What keeps it a secret may change: `.env` is one by name, whatever it holds.
    let edit = room.call(
        "edit",
        json!({"file_path": ".env", "old_string": "DEBUG=1", "new_string": "DEBUG=0"}),
    );
    assert_eq!(edit.code, 0, "{edit:?}");
    // Replaced whole by `write` (nothing of it kept): the checkpoint's diff still hides
    // what it was.
    let write = room.call(
        "write",
        json!({"file_path": "credentials.json", "content": "{}\n"}),
    );
    assert_eq!(write.code, 0, "{write:?}");
    let id = write.json()["metadata"]["checkpoint"]["id"].clone();
    let show = room.call("checkpoint", json!({"action": "show", "id": id}));
    assert_eq!(show.code, 0, "{show:?}");
    assert!(
        show.output()
            .contains("[content of a secret file not shown]"),
        "{show:?}"
    );
    assert_hidden(&show);
}
