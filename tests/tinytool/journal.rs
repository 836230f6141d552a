//! Issue 18 item 4: a 40-file apply_patch killed (`kill -9`) midway is all or nothing once
//! the next call has run: the journal rolls it back, or forward when every new file was
//! already in place, and no helper file (`.tinytool.tmp`, `.tinytool.old`) is left. The
//! kill comes from the test-only hook `TINYTOOL_TEST_KILL_AT_CHANGE` (src/journal.rs).

use std::os::unix::process::ExitStatusExt;
use std::path::Path;

use serde_json::json;

use crate::util::Room;

const FILES: usize = 40;

/// Every file under `dir` (tinytool's folder left out) with its content, sorted.
fn tree(dir: &Path) -> Vec<(String, String)> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<(String, String)>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let rel = path.strip_prefix(root).unwrap().display().to_string();
            if rel == ".tinytool" {
                continue;
            }
            if path.is_dir() {
                walk(root, &path, out);
            } else {
                out.push((rel, std::fs::read_to_string(&path).unwrap()));
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort();
    out
}

/// The tree before the patch: 38 files to update and 2 to delete (in two directories).
fn furnish(room: &Room) {
    for n in 0..FILES - 2 {
        room.write(&format!("d{}/f{n:02}.txt", n % 2), format!("old {n}\n"));
    }
    room.write("gone/a.txt", "old a\n");
    room.write("gone/b.txt", "old b\n");
}

/// The patch: 36 updates, 2 new files in a new directory, 2 deletions (40 files).
fn patch() -> String {
    let mut p = String::from("*** Begin Patch\n");
    for n in 0..FILES - 4 {
        p.push_str(&format!(
            "*** Update File: d{}/f{n:02}.txt\n@@\n-old {n}\n+new {n}\n",
            n % 2
        ));
    }
    p.push_str("*** Add File: fresh/x.txt\n+new x\n*** Add File: fresh/y.txt\n+new y\n");
    p.push_str("*** Delete File: gone/a.txt\n*** Delete File: gone/b.txt\n*** End Patch\n");
    p
}

/// Runs `cmd` with `input` on stdin and returns how it ended.
fn status_of(mut cmd: std::process::Command, input: &str) -> std::process::ExitStatus {
    use std::io::Write;
    use std::process::Stdio;
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let mut child = cmd.spawn().unwrap();
    let mut pipe = child.stdin.take().unwrap();
    let input = input.to_string();
    let feeder = std::thread::spawn(move || {
        let _ = pipe.write_all(input.as_bytes());
    });
    let status = child.wait().unwrap();
    feeder.join().unwrap();
    status
}

#[test]
fn a_killed_multi_file_patch_is_all_or_nothing_after_the_next_call() {
    let room = Room::new();
    furnish(&room);
    let before = tree(&room.dir);
    let patch = patch();
    // The expected result, from a run that is not killed.
    let run = room.call("apply_patch", json!({ "patch": patch }));
    assert_eq!(run.code, 0, "{run:?}");
    let after = tree(&room.dir);
    assert_ne!(before, after);
    // 40 visible changes: 2 deletions set aside, then 38 installs. Killed at the first,
    // in the middle, and at the last (every new file in place: rolled forward).
    for round in 0..20 {
        let at = [1, 1, 2, 3, 20, 39, 40][round % 7];
        std::fs::remove_dir_all(&room.dir).unwrap();
        std::fs::create_dir_all(&room.dir).unwrap();
        furnish(&room);
        let mut cmd = room.command(&["apply_patch"]);
        cmd.env("TINYTOOL_TEST_KILL_AT_CHANGE", at.to_string());
        let status = status_of(cmd, &json!({ "patch": patch }).to_string());
        assert_eq!(
            status.signal(),
            Some(9),
            "round {round}: not killed at {at}"
        );
        // Half-applied now; the next call (any tool) recovers first.
        let read = room.call("read", json!({"file_path": "d0/f00.txt"}));
        assert_eq!(read.code, 0, "{read:?}");
        let now = tree(&room.dir);
        let names: Vec<&str> = now.iter().map(|(p, _)| p.as_str()).collect();
        assert!(
            !names.iter().any(|n| n.contains(".tinytool.")),
            "round {round}, killed at {at}: helper files left: {names:?}"
        );
        if at == 40 {
            assert_eq!(now, after, "round {round}: not rolled forward");
        } else {
            assert_eq!(
                now, before,
                "round {round}, killed at {at}: not rolled back"
            );
        }
        let journal = room.dir.join(".tinytool/journal");
        assert_eq!(std::fs::read_dir(journal).unwrap().count(), 0);
    }
}

#[test]
fn what_a_killed_write_left_goes_with_the_next_call_and_a_users_file_stays() {
    let room = Room::new();
    // A write killed after making its temporary file (outside the project too): its
    // record in the user's state directory names the file (`crate::pending`).
    let outside = tempfile::tempdir().unwrap();
    let left = [room.write("src/.main.rs.123-ab-0.tinytool.tmp", "half"), {
        let path = outside.path().join(".notes.txt.123-ab-1.tinytool.tmp");
        std::fs::write(&path, "half").unwrap();
        path
    }];
    let pending = room.home.join(".local/state/tinytool/pending");
    std::fs::create_dir_all(&pending).unwrap();
    for (i, path) in left.iter().enumerate() {
        std::fs::write(
            pending.join(format!("123-ab-{i}")),
            path.as_os_str().as_encoded_bytes(),
        )
        .unwrap();
    }
    // A user's file of the same shape, which no write of tinytool's made.
    let users = room.write("src/.lib.rs.999-ff-0.tinytool.tmp", "mine");
    // The next call of any tool, writing nothing.
    let run = room.call("glob", json!({"pattern": "*.md"}));
    assert_eq!(run.code, 0, "{run:?}");
    for path in &left {
        assert!(!path.exists(), "{}", path.display());
    }
    assert_eq!(room.read("src/.lib.rs.999-ff-0.tinytool.tmp"), "mine");
    assert!(users.exists());
    assert_eq!(std::fs::read_dir(&pending).unwrap().count(), 0);
    // A write leaves no record behind.
    let run = room.call(
        "write",
        json!({"file_path": "src/lib.rs", "content": "x\n"}),
    );
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(std::fs::read_dir(&pending).unwrap().count(), 0);
}

#[test]
fn forty_writes_killed_with_their_temporary_files_staged_leave_nothing_after_one_call() {
    use std::os::unix::process::ExitStatusExt;
    let room = Room::new();
    for round in 0..40 {
        let dir = ["", "src/", "deep/er/"][round % 3];
        let mut cmd = room.command(&[
            "write",
            "--file-path",
            &format!("{dir}f{round}.txt"),
            "--content",
            "new",
        ]);
        cmd.env("TINYTOOL_TEST_KILL_AT_STAGE", "1");
        let status = status_of(cmd, "");
        assert_eq!(status.signal(), Some(libc::SIGKILL), "round {round}");
    }
    let leftovers = |root: &Path| -> Vec<String> {
        fn walk(dir: &Path, out: &mut Vec<String>) {
            for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
                let path = entry.path();
                if path.is_dir() {
                    walk(&path, out);
                } else if path.to_string_lossy().ends_with(".tinytool.tmp") {
                    out.push(path.display().to_string());
                }
            }
        }
        let mut out = Vec::new();
        walk(root, &mut out);
        out
    };
    assert!(
        !leftovers(&room.dir).is_empty(),
        "the kills left temporary files"
    );
    let run = room.call("glob", json!({"pattern": "*.md"}));
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(leftovers(&room.dir), Vec::<String>::new());
}
