//! tinytool's own folder is never followed: a project that ships `.tinytool` as a
//! symlink, a dangling `.tinytool/.gitignore` link, a symlinked entry tinytool creates, or a
//! `.tinytool` owned by another user gets every call refused with a message saying how to
//! fix it, and nothing is created outside the project.

use std::path::{Path, PathBuf};

use serde_json::json;

use crate::util::Room;

/// A directory beside the project that a planted link points to.
fn outside(room: &Room) -> PathBuf {
    let dir = room.dir.parent().unwrap().join("outside");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn entries(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    out.sort();
    out
}

/// Runs one call of every kind that touches state, the journal, spill files or the sandbox and
/// checks each is refused with `expected` (and a fix) in its message.
fn every_call_is_refused(room: &Room, expected: &str, fix: &str) {
    let patch = "*** Begin Patch\n*** Add File: p.txt\n+x\n*** End Patch\n";
    let calls = [
        ("write", json!({"file_path": "w.txt", "content": "x"})),
        (
            "edit",
            json!({"file_path": "a.txt", "old_string": "a", "new_string": "b"}),
        ),
        ("apply_patch", json!({"patch": patch})),
        ("read", json!({"file_path": "a.txt"})),
        ("bash", json!({"command": "seq 1 100000"})),
        ("todowrite", json!({"todos": []})),
    ];
    for (tool, args) in calls {
        let run = room.call(tool, args);
        assert_eq!(run.code, 3, "{tool}: {run:?}");
        let out = run.output();
        assert!(out.contains(expected) && out.contains(fix), "{tool}: {out}");
    }
    assert_eq!(room.read("a.txt"), "a\n");
    assert!(!room.path("w.txt").exists() && !room.path("p.txt").exists());
}

#[test]
fn a_symlinked_tinytool_folder_refuses_every_call_and_creates_nothing_outside() {
    let room = Room::new();
    room.write("a.txt", "a\n");
    let outside = outside(&room);
    std::os::unix::fs::symlink(&outside, room.path(".tinytool")).unwrap();
    every_call_is_refused(&room, ".tinytool is a symbolic link", "rm .tinytool");
    assert_eq!(entries(&outside), Vec::<PathBuf>::new());
}

#[test]
fn a_dangling_gitignore_link_is_refused_and_never_created_through() {
    let room = Room::new();
    room.write("a.txt", "a\n");
    let outside = outside(&room);
    std::fs::create_dir(room.path(".tinytool")).unwrap();
    std::os::unix::fs::symlink(outside.join("ignore"), room.path(".tinytool/.gitignore")).unwrap();
    every_call_is_refused(
        &room,
        ".tinytool/.gitignore is a symbolic link",
        "rm .tinytool/.gitignore",
    );
    assert_eq!(entries(&outside), Vec::<PathBuf>::new());

    // Fixed as the message says, the project works again and the folder is tinytool's own.
    std::fs::remove_file(room.path(".tinytool/.gitignore")).unwrap();
    // (apply_patch records its commit in `.tinytool/journal`, so it makes the folder; locks
    // live in the per-user lock directory, not here.)
    let patch = "*** Begin Patch\n*** Add File: p.txt\n+x\n*** End Patch\n";
    let run = room.call("apply_patch", json!({"patch": patch}));
    assert_eq!(run.code, 0, "{run:?}");
    assert!(room.path(".tinytool/journal").is_dir());
    assert_eq!(room.read(".tinytool/.gitignore"), "*\n");
}

#[test]
fn symlinked_entries_tinytool_creates_are_refused() {
    for entry in ["journal", "outputs", "state.db", "sandbox"] {
        let room = Room::new();
        room.write("a.txt", "a\n");
        let outside = outside(&room);
        std::fs::create_dir(room.path(".tinytool")).unwrap();
        std::os::unix::fs::symlink(&outside, room.path(".tinytool").join(entry)).unwrap();
        every_call_is_refused(
            &room,
            &format!(".tinytool/{entry} is a symbolic link"),
            &format!("rm .tinytool/{entry}"),
        );
        assert_eq!(entries(&outside), Vec::<PathBuf>::new(), "{entry}");
    }
}

#[test]
fn a_tinytool_folder_of_another_user_is_refused() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        // Only root can give a folder to another user; the unit test of `check_own_folder`
        // covers the rest.
        crate::util::skip("not root, so no folder can be given to another user");
        return;
    }
    let room = Room::new();
    room.write("a.txt", "a\n");
    std::fs::create_dir(room.path(".tinytool")).unwrap();
    std::os::unix::fs::chown(room.path(".tinytool"), Some(54321), Some(54321)).unwrap();
    every_call_is_refused(&room, "belongs to another user (uid 54321", "chown");
    assert_eq!(entries(&room.path(".tinytool")), Vec::<PathBuf>::new());
}

#[test]
fn a_journal_record_behind_a_planted_folder_is_never_recovered() {
    use base64::Engine;
    // A record that, if recovered, would put `evil` in place of a.txt (a deletion whose
    // "previous version" is the planted file).
    let room = Room::new();
    room.write("a.txt", "a\n");
    let outside = outside(&room);
    std::fs::create_dir(outside.join("journal")).unwrap();
    std::fs::write(outside.join("evil"), "evil\n").unwrap();
    let b64 = |p: &Path| {
        base64::engine::general_purpose::STANDARD.encode(p.as_os_str().as_encoded_bytes())
    };
    let record = json!({
        "version": 1,
        "entries": [{"target": b64(&room.path("a.txt")), "temp": null, "temp_id": null,
                     "aside": b64(&outside.join("evil"))}],
        "created_dirs": [],
    });
    std::fs::write(outside.join("journal/1-0-0.json"), record.to_string()).unwrap();
    std::os::unix::fs::symlink(&outside, room.path(".tinytool")).unwrap();
    let run = room.call("read", json!({"file_path": "a.txt"}));
    assert_eq!(run.code, 3, "{run:?}");
    assert_eq!(room.read("a.txt"), "a\n");
    assert_eq!(
        std::fs::read_to_string(outside.join("evil")).unwrap(),
        "evil\n"
    );
}

#[test]
fn a_journal_record_a_repository_committed_is_never_recovered() {
    use base64::Engine;
    let b64 = |p: &Path| {
        base64::engine::general_purpose::STANDARD.encode(p.as_os_str().as_encoded_bytes())
    };
    let room = Room::new();
    room.write("a.txt", "a\n");
    room.write("mine.txt", "my work\n");
    room.write(".tinytool/shipped", "evil\n");
    // If recovered: rolled back, "created" mine.txt would go and a.txt would become the
    // shipped file; both records are unsealed (the second also names a path outside).
    let inside = json!({
        "version": 1,
        "entries": [
            {"target": b64(&room.path("mine.txt")), "temp": b64(&room.path("mine.txt")),
             "temp_id": [1, 1], "aside": null},
            {"target": b64(&room.path("a.txt")), "temp": null, "temp_id": null,
             "aside": b64(&room.path(".tinytool/shipped"))},
        ],
        "created_dirs": [],
    });
    room.write(
        ".tinytool/journal/1-0-0.json",
        format!("{inside}\nseal 0123456789abcdef\n"),
    );
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("victim"), "v\n").unwrap();
    let escaping = json!({
        "version": 1,
        "entries": [{"target": b64(&outside.path().join("victim")), "temp": null,
                     "temp_id": null, "aside": null}],
        "created_dirs": [],
    });
    room.write(".tinytool/journal/2-0-0.json", format!("{escaping}\n"));
    let run = room.call("read", json!({"file_path": "a.txt"}));
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(room.read("a.txt"), "a\n");
    assert_eq!(room.read("mine.txt"), "my work\n");
    assert_eq!(room.read(".tinytool/shipped"), "evil\n");
    assert!(outside.path().join("victim").exists());
    assert!(room.path(".tinytool/journal/1-0-0.json").exists());
}
