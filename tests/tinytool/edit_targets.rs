//! What the editing tools (write, edit, apply_patch) do when the path is not a plain file:
//! FIFOs and sockets are refused without being opened (and without hanging), a symlink is
//! written through by write, edit and Update File while Delete File and the source of a
//! move remove the link itself — each judged by the policy on the path really changed.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileTypeExt, symlink};
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};

use crate::util::{Room, Run, run_command_within};

/// Generous: a refusal takes milliseconds, the defect was blocking forever.
const HANG_LIMIT: Duration = Duration::from_secs(60);

fn mkfifo(path: &Path) {
    let name = CString::new(path.as_os_str().as_bytes()).unwrap();
    // SAFETY: `name` is a valid NUL-terminated path that outlives the call.
    let rc = unsafe { libc::mkfifo(name.as_ptr(), 0o644) };
    assert_eq!(rc, 0, "mkfifo {}", path.display());
}

/// One tool call that must finish; a hang fails the test instead of blocking it.
fn call_within(room: &Room, tool: &str, args: Value) -> Run {
    let input = args.to_string();
    run_command_within(room.command(&[tool]), Some(input.as_bytes()), HANG_LIMIT)
        .unwrap_or_else(|| panic!("{tool} {args} hung (killed after {HANG_LIMIT:?})"))
}

fn patch(body: &str) -> Value {
    json!({ "patch": format!("*** Begin Patch\n{body}*** End Patch\n") })
}

fn is_link(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink())
}

/// The names in the room besides tinytool's own folder, sorted.
fn names(room: &Room) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(&room.dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n != ".tinytool")
        .collect();
    names.sort();
    names
}

/// A folder beside the room's working directory: outside `--dir`.
fn outside(room: &Room) -> PathBuf {
    let dir = room.dir.parent().unwrap().join("outside");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn a_fifo_is_refused_by_every_editing_tool_without_being_opened() {
    let room = Room::new();
    mkfifo(&room.path("p"));
    room.write("a.txt", "a\n");
    let calls = [
        ("write", json!({"file_path": "p", "content": "x"})),
        (
            "edit",
            json!({"file_path": "p", "old_string": "a", "new_string": "b"}),
        ),
        ("apply_patch", patch("*** Update File: p\n@@\n-a\n+b\n")),
        ("apply_patch", patch("*** Delete File: p\n")),
        ("apply_patch", patch("*** Add File: p\n+x\n")),
        (
            "apply_patch",
            patch("*** Update File: p\n*** Move to: q.txt\n@@\n-a\n+b\n"),
        ),
        (
            "apply_patch",
            patch("*** Update File: a.txt\n*** Move to: p\n@@\n-a\n+b\n"),
        ),
        (
            "apply_patch",
            json!({"patch": "--- a/p\n+++ b/p\n@@ -1 +1 @@\n-a\n+b\n"}),
        ),
    ];
    for (tool, args) in calls {
        let run = call_within(&room, tool, args.clone());
        assert_eq!(run.code, 1, "{tool} {args}: {run:?}");
        let output = run.output();
        assert!(
            output.contains("p is not a regular file: it is a FIFO"),
            "{tool} {args}: {output}"
        );
        assert!(
            std::fs::symlink_metadata(room.path("p"))
                .unwrap()
                .file_type()
                .is_fifo(),
            "{tool} {args} replaced the FIFO"
        );
        assert_eq!(names(&room), ["a.txt", "p"], "{tool} {args}");
        assert_eq!(room.read("a.txt"), "a\n");
    }
}

#[test]
fn a_socket_and_a_link_to_a_fifo_are_refused_too() {
    let room = Room::new();
    let _listener = std::os::unix::net::UnixListener::bind(room.path("sock")).unwrap();
    let run = call_within(&room, "write", json!({"file_path": "sock", "content": "x"}));
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.output()
            .starts_with("sock is not a regular file: it is a socket"),
        "{}",
        run.output()
    );
    mkfifo(&room.path("p"));
    symlink("p", room.path("to-fifo")).unwrap();
    for (tool, args) in [
        ("write", json!({"file_path": "to-fifo", "content": "x"})),
        (
            "edit",
            json!({"file_path": "to-fifo", "old_string": "a", "new_string": "b"}),
        ),
        (
            "apply_patch",
            patch("*** Update File: to-fifo\n@@\n-a\n+b\n"),
        ),
    ] {
        let run = call_within(&room, tool, args.clone());
        assert_eq!(run.code, 1, "{tool}: {run:?}");
        assert!(
            run.output()
                .contains("p is not a regular file: it is a FIFO"),
            "{tool}: {}",
            run.output()
        );
        assert!(is_link(&room.path("to-fifo")));
    }
}

/// `s.sh` and `s-link -> s.sh`.
fn linked_room() -> Room {
    let room = Room::new();
    room.write("s.sh", "echo hi\n");
    symlink("s.sh", room.path("s-link")).unwrap();
    room
}

#[test]
fn deleting_a_symlink_deletes_the_link_and_not_its_target() {
    let room = linked_room();
    let run = call_within(&room, "apply_patch", patch("*** Delete File: s-link\n"));
    assert_eq!(run.code, 0, "{run:?}");
    let result = run.json();
    assert_eq!(result["output"], "Deleted s-link");
    assert_eq!(
        result["metadata"]["files"],
        json!([{"path": "s-link", "operation": "deleted"}])
    );
    assert_eq!(names(&room), ["s.sh"]);
    assert_eq!(room.read("s.sh"), "echo hi\n");

    // A unified diff's deletion may list the link's text (as git does) or the target's lines.
    for listed in ["-s.sh\n\\ No newline at end of file\n", "-echo hi\n"] {
        let room = linked_room();
        let diff = format!("--- a/s-link\n+++ /dev/null\n@@ -1 +0,0 @@\n{listed}");
        let run = call_within(&room, "apply_patch", json!({ "patch": diff }));
        assert_eq!(run.code, 0, "{listed:?}: {run:?}");
        assert_eq!(names(&room), ["s.sh"], "{listed:?}");
    }
    let room = linked_room();
    let diff = "--- a/s-link\n+++ /dev/null\n@@ -1 +0,0 @@\n-something else\n";
    let run = call_within(&room, "apply_patch", json!({ "patch": diff }));
    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.output().contains("Cannot delete s-link"), "{run:?}");
    assert_eq!(names(&room), ["s-link", "s.sh"]);

    // A dangling link is deleted too.
    let room = Room::new();
    symlink("gone.txt", room.path("dangling")).unwrap();
    let run = call_within(&room, "apply_patch", patch("*** Delete File: dangling\n"));
    assert_eq!(run.code, 0, "{run:?}");
    assert!(names(&room).is_empty(), "{:?}", names(&room));
}

#[test]
fn a_link_in_a_linked_directory_is_deleted_where_it_really_is() {
    let room = linked_room();
    std::fs::create_dir(room.path("real")).unwrap();
    symlink("../s.sh", room.path("real/l")).unwrap();
    symlink("real", room.path("alias")).unwrap();
    let run = call_within(&room, "apply_patch", patch("*** Delete File: alias/l\n"));
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(run.output(), "Deleted real/l");
    assert!(!is_link(&room.path("real/l")));
    assert!(is_link(&room.path("alias")));
    assert_eq!(room.read("s.sh"), "echo hi\n");
}

#[test]
fn updating_through_a_symlink_changes_the_target_and_keeps_the_link() {
    let room = linked_room();
    let run = call_within(
        &room,
        "apply_patch",
        patch("*** Update File: s-link\n@@\n-echo hi\n+echo bye\n"),
    );
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(run.output(), "Modified s.sh");
    assert_eq!(room.read("s.sh"), "echo bye\n");
    assert!(is_link(&room.path("s-link")));
    assert_eq!(
        std::fs::read_link(room.path("s-link")).unwrap(),
        Path::new("s.sh")
    );
    assert_eq!(names(&room), ["s-link", "s.sh"]);
}

#[test]
fn moving_a_symlink_moves_the_link_name_and_leaves_its_target() {
    let room = linked_room();
    let run = call_within(
        &room,
        "apply_patch",
        patch("*** Update File: s-link\n*** Move to: t.sh\n@@\n-echo hi\n+echo moved\n"),
    );
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(run.output(), "Moved s-link -> t.sh");
    assert_eq!(names(&room), ["s.sh", "t.sh"]);
    assert!(!is_link(&room.path("t.sh")));
    assert_eq!(room.read("t.sh"), "echo moved\n");
    assert_eq!(room.read("s.sh"), "echo hi\n");

    // Moving a link onto its own target is an update of the target.
    let room = linked_room();
    let run = call_within(
        &room,
        "apply_patch",
        patch("*** Update File: s-link\n*** Move to: s.sh\n@@\n-echo hi\n+echo same\n"),
    );
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(room.read("s.sh"), "echo same\n");
    assert!(is_link(&room.path("s-link")));
}

#[test]
fn a_deleted_link_name_can_be_added_again_as_a_file() {
    let room = linked_room();
    let run = call_within(
        &room,
        "apply_patch",
        patch("*** Delete File: s-link\n*** Add File: s-link\n+plain\n"),
    );
    assert_eq!(run.code, 0, "{run:?}");
    assert!(!is_link(&room.path("s-link")));
    assert_eq!(room.read("s-link"), "plain\n");
    assert_eq!(room.read("s.sh"), "echo hi\n");
    // After the deletion the name no longer leads to the target.
    let room = linked_room();
    let run = call_within(
        &room,
        "apply_patch",
        patch("*** Delete File: s-link\n*** Update File: s-link\n@@\n-echo hi\n+x\n"),
    );
    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.output().contains("File to update not found: s-link"));
    assert_eq!(names(&room), ["s-link", "s.sh"]);
}

#[test]
fn write_and_edit_go_through_a_symlink_and_keep_it() {
    let room = linked_room();
    let run = call_within(
        &room,
        "write",
        json!({"file_path": "s-link", "content": "echo one\n"}),
    );
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(run.json()["metadata"]["path"], "s.sh");
    assert!(is_link(&room.path("s-link")));
    assert_eq!(room.read("s.sh"), "echo one\n");
    let run = call_within(
        &room,
        "edit",
        json!({"file_path": "s-link", "old_string": "one", "new_string": "two"}),
    );
    assert_eq!(run.code, 0, "{run:?}");
    assert!(is_link(&room.path("s-link")));
    assert_eq!(room.read("s.sh"), "echo two\n");
    assert_eq!(names(&room), ["s-link", "s.sh"]);

    // A dangling link: the file it names is created, the link stays.
    symlink("sub/new.txt", room.path("pending")).unwrap();
    let run = call_within(
        &room,
        "write",
        json!({"file_path": "pending", "content": "made\n"}),
    );
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(run.json()["metadata"]["path"], "sub/new.txt");
    assert!(is_link(&room.path("pending")));
    assert_eq!(room.read("sub/new.txt"), "made\n");
    assert_eq!(room.read("pending"), "made\n");
}

#[test]
fn the_policy_judges_the_path_really_changed() {
    let room = Room::new();
    let outside = outside(&room);
    std::fs::write(outside.join("secret.txt"), "keep\n").unwrap();
    symlink(outside.join("secret.txt"), room.path("out-link")).unwrap();
    symlink(outside.join("new.txt"), room.path("dangling-out")).unwrap();

    // Writing, editing or updating through the link changes a file outside --dir: asked
    // (external_directory), so refused without a terminal.
    for (tool, args) in [
        (
            "write",
            json!({"file_path": "out-link", "content": "changed\n"}),
        ),
        (
            "edit",
            json!({"file_path": "out-link", "old_string": "keep", "new_string": "x"}),
        ),
        (
            "apply_patch",
            patch("*** Update File: out-link\n@@\n-keep\n+x\n"),
        ),
        ("apply_patch", patch("*** Add File: out-link\n+x\n")),
        (
            "write",
            json!({"file_path": "dangling-out", "content": "x\n"}),
        ),
        // A move reads the file the link points to: that read is outside --dir as well.
        (
            "apply_patch",
            patch("*** Update File: out-link\n*** Move to: copy.txt\n"),
        ),
    ] {
        let run = call_within(&room, tool, args.clone());
        assert_eq!(run.code, 3, "{tool} {args}: {run:?}");
        assert!(
            run.output().contains("external_directory"),
            "{tool} {args}: {}",
            run.output()
        );
        assert_eq!(
            std::fs::read_to_string(outside.join("secret.txt")).unwrap(),
            "keep\n"
        );
        assert!(!outside.join("new.txt").exists());
        assert_eq!(names(&room), ["dangling-out", "out-link"]);
    }

    // Deleting the link only changes --dir: allowed, and the file outside stays.
    let run = call_within(&room, "apply_patch", patch("*** Delete File: out-link\n"));
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(names(&room), ["dangling-out"]);
    assert_eq!(
        std::fs::read_to_string(outside.join("secret.txt")).unwrap(),
        "keep\n"
    );

    // A link outside --dir is outside even when it points inside.
    room.write("inside.txt", "in\n");
    symlink(room.path("inside.txt"), outside.join("back")).unwrap();
    let run = call_within(
        &room,
        "apply_patch",
        patch(&format!(
            "*** Delete File: {}\n",
            outside.join("back").display()
        )),
    );
    assert_eq!(run.code, 3, "{run:?}");
    assert!(is_link(&outside.join("back")));
    assert_eq!(room.read("inside.txt"), "in\n");
}
