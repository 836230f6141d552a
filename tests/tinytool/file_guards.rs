//! Guards of the file-changing tools: a file too large to edit in memory is
//! refused from its metadata before any of it is read, and a file without a write bit is
//! refused by write, edit and apply_patch with a message that names its mode.

use std::os::unix::fs::PermissionsExt;

use serde_json::json;

use crate::util::Room;

/// A sparse file far over the edit limit: refused without reading it (a read of 20 GB
/// would exhaust memory), and left untouched.
#[test]
fn edit_refuses_a_huge_sparse_file_before_reading() {
    let room = Room::new();
    let path = room.write("huge.log", "start\n");
    let file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
    file.set_len(20 * 1024 * 1024 * 1024).unwrap();
    drop(file);
    let run = room.call(
        "edit",
        json!({"file_path": "huge.log", "old_string": "start", "new_string": "end"}),
    );
    assert_eq!(run.code, 1, "{run:?}");
    let out = run.output();
    assert!(out.contains("over the limit"), "{out}");
    assert!(out.contains("21474836480 bytes"), "{out}");
    assert_eq!(
        std::fs::metadata(&path).unwrap().len(),
        20 * 1024 * 1024 * 1024
    );

    let patch = "*** Begin Patch\n*** Update File: huge.log\n@@\n-start\n+end\n*** End Patch\n";
    let run = room.call("apply_patch", json!({"patch": patch}));
    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.output().contains("over the limit"), "{}", run.output());
}

fn read_only(room: &Room, rel: &str, content: &str) -> std::path::PathBuf {
    let path = room.write(rel, content);
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o444)).unwrap();
    path
}

#[test]
fn read_only_files_are_refused_by_every_writer() {
    let room = Room::new();
    let path = read_only(&room, "locked.txt", "keep\n");

    let run = room.call(
        "write",
        json!({"file_path": "locked.txt", "content": "new\n"}),
    );
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.output().contains("read-only (mode 0444"),
        "{}",
        run.output()
    );

    let run = room.call(
        "edit",
        json!({"file_path": "locked.txt", "old_string": "keep", "new_string": "gone"}),
    );
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.output().contains("read-only (mode 0444"),
        "{}",
        run.output()
    );

    for patch in [
        "*** Begin Patch\n*** Delete File: locked.txt\n*** End Patch\n",
        "*** Begin Patch\n*** Update File: locked.txt\n@@\n-keep\n+gone\n*** End Patch\n",
        "*** Begin Patch\n*** Update File: locked.txt\n*** Move to: moved.txt\n@@\n-keep\n+gone\n*** End Patch\n",
    ] {
        let run = room.call("apply_patch", json!({"patch": patch}));
        assert_eq!(run.code, 1, "{patch}: {run:?}");
        assert!(
            run.output().contains("read-only (mode 0444"),
            "{}",
            run.output()
        );
    }
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "keep\n");
    assert!(!room.path("moved.txt").exists());

    // A writable file next to it still changes.
    room.write("open.txt", "a\n");
    let run = room.call("write", json!({"file_path": "open.txt", "content": "b\n"}));
    assert_eq!(run.code, 0, "{run:?}");
}
