//! `apply_patch` is all or nothing even when the file system refuses a step after others
//! succeeded: a deletion in a locked directory, a move or an add into one, a replaced file
//! that is immutable. The whole tree (names, kinds, modes, contents, link targets, hidden
//! files) must be byte-identical afterwards, and the call must fail saying nothing changed.
//!
//! A directory is locked with `chmod 555`; root ignores modes, so as root it is locked with
//! `chattr +i` instead, and where that does not work (a filesystem without the attribute,
//! no `chattr`, no CAP_LINUX_IMMUTABLE) the test returns early, saying so loudly.

use std::os::unix::fs::{MetadataExt, PermissionsExt, symlink};
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::json;

use crate::util::Room;

/// Every entry under `dir` except tinytool's own folder: path, kind, permission bits and
/// content (a link's target), sorted.
fn snapshot(dir: &Path) -> Vec<String> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let rel = path.strip_prefix(root).unwrap().display().to_string();
            if rel == ".tinytool" {
                continue;
            }
            let meta = std::fs::symlink_metadata(&path).unwrap();
            let mode = meta.permissions().mode() & 0o7777;
            if meta.file_type().is_symlink() {
                let to = std::fs::read_link(&path).unwrap();
                out.push(format!("{rel} link -> {}", to.display()));
            } else if meta.is_dir() {
                out.push(format!("{rel}/ dir {mode:o}"));
                walk(root, &path, out);
            } else {
                let bytes = std::fs::read(&path).unwrap();
                out.push(format!(
                    "{rel} file {mode:o} links={} {:?}",
                    meta.nlink(),
                    String::from_utf8_lossy(&bytes)
                ));
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort();
    out
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// Makes `path` refuse changes until dropped: `chmod 555` for a directory (a file keeps its
/// mode: a read-only file can still be renamed and deleted), or as root `chattr +i`.
struct Locked {
    path: PathBuf,
    immutable: bool,
}

impl Locked {
    /// `None` (after saying why) when this process cannot lock anything here.
    fn new(path: &Path) -> Option<Locked> {
        if !is_root() {
            if !path.is_dir() {
                crate::util::skip("locking a file needs chattr +i, which needs root");
                return None;
            }
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o555)).unwrap();
            return Some(Locked {
                path: path.to_path_buf(),
                immutable: false,
            });
        }
        let done = Command::new("chattr").arg("+i").arg(path).output();
        match done {
            Ok(out) if out.status.success() => Some(Locked {
                path: path.to_path_buf(),
                immutable: true,
            }),
            other => {
                crate::util::skip(format!(
                    "running as root (modes are ignored) and `chattr +i` \
                     does not work here: {other:?}"
                ));
                None
            }
        }
    }
}

impl Drop for Locked {
    fn drop(&mut self) {
        if self.immutable {
            let _ = Command::new("chattr").arg("-i").arg(&self.path).status();
        } else {
            let _ = std::fs::set_permissions(&self.path, std::fs::Permissions::from_mode(0o755));
        }
    }
}

/// Applies `patch` with `locked` (relative to the room) locked and checks that it failed,
/// said nothing changed and named `cause`, and left the tree exactly as it was.
fn refused_whole(room: &Room, locked: &str, patch: &str, cause: &str) {
    let Some(lock) = Locked::new(&room.path(locked)) else {
        return;
    };
    let before = snapshot(&room.dir);
    let run = room.call("apply_patch", json!({ "patch": patch }));
    let after = snapshot(&room.dir);
    drop(lock);
    assert_eq!(run.code, 1, "{run:?}");
    let output = run.output();
    assert!(
        output.starts_with("Patch not applied; no file was changed.\n"),
        "{output}"
    );
    assert!(output.contains(cause), "{cause:?} not in {output}");
    assert_eq!(before, after, "the tree changed; output: {output}");
    // Unlocked, the same patch applies: the failure was the lock, not the patch.
    let again = room.call("apply_patch", json!({ "patch": patch }));
    assert_eq!(again.code, 0, "{again:?}");
}

/// A tree with a bit of everything the rollback must restore: an executable, a CRLF file
/// with a BOM, a symlink, nested directories.
fn furnished() -> Room {
    let room = Room::new();
    room.write("a.txt", "one\ntwo\n");
    let run = room.write("bin/run.sh", "#!/bin/sh\necho hi\n");
    std::fs::set_permissions(&run, std::fs::Permissions::from_mode(0o750)).unwrap();
    room.write("crlf.txt", "\u{feff}x\r\ny\r\n");
    room.write("src/m.txt", "move me\n");
    room.write("gone/old.txt", "bye\n");
    room.write("target.txt", "pointed at\n");
    symlink("target.txt", room.path("link")).unwrap();
    room.write("locked/d.txt", "d\n");
    room.write("locked/keep.txt", "k\n");
    room
}

/// Changes everything it can before the step that fails: an update, a mode change, a
/// CRLF+BOM update, an add in new directories, a move, a deletion that empties a
/// directory, a deleted symlink.
const EARLIER: &str = "*** Update File: a.txt\n@@\n-one\n+ONE\n\
     *** Update File: bin/run.sh\n@@\n-echo hi\n+echo HI\n\
     *** Update File: crlf.txt\n@@\n-x\n+X\n\
     *** Add File: new/deep/n.txt\n+new\n\
     *** Update File: src/m.txt\n*** Move to: dst/m.txt\n@@\n-move me\n+moved\n\
     *** Delete File: gone/old.txt\n\
     *** Delete File: link\n";

fn patch(last: &str) -> String {
    format!("*** Begin Patch\n{EARLIER}{last}*** End Patch\n")
}

#[test]
fn a_deletion_that_fails_after_other_changes_changes_nothing() {
    let room = furnished();
    refused_whole(
        &room,
        "locked",
        &patch("*** Delete File: locked/d.txt\n"),
        "Cannot delete locked/d.txt: ",
    );
    assert!(!room.path("locked/d.txt").exists());
    assert_eq!(room.read("a.txt"), "ONE\ntwo\n");
}

#[test]
fn a_move_into_a_locked_directory_changes_nothing() {
    let room = furnished();
    refused_whole(
        &room,
        "locked",
        &patch("*** Update File: target.txt\n*** Move to: locked/t.txt\n@@\n-pointed at\n+p\n"),
        "Cannot write locked/t.txt: ",
    );
}

#[test]
fn a_move_out_of_a_locked_directory_changes_nothing() {
    let room = furnished();
    refused_whole(
        &room,
        "locked",
        &patch("*** Update File: locked/keep.txt\n*** Move to: kept.txt\n"),
        "Cannot delete locked/keep.txt: ",
    );
}

#[test]
fn an_add_into_a_locked_directory_after_an_update_changes_nothing() {
    let room = furnished();
    refused_whole(
        &room,
        "locked",
        &patch("*** Add File: locked/new.txt\n+x\n"),
        "Cannot write locked/new.txt: ",
    );
}

#[test]
fn an_update_in_a_locked_directory_changes_nothing() {
    let room = furnished();
    refused_whole(
        &room,
        "locked",
        &patch("*** Update File: locked/keep.txt\n@@\n-k\n+K\n"),
        "Cannot write locked/keep.txt: ",
    );
}

#[test]
fn an_immutable_file_to_replace_changes_nothing() {
    // Only root can make a file immutable (a mode does not stop a rename).
    let room = furnished();
    room.write("frozen.txt", "f\n");
    refused_whole(
        &room,
        "frozen.txt",
        &patch("*** Update File: frozen.txt\n@@\n-f\n+F\n"),
        "Cannot replace frozen.txt: ",
    );
}

#[test]
fn the_same_patch_unlocked_leaves_no_helper_file() {
    let room = furnished();
    let run = room.call(
        "apply_patch",
        json!({ "patch": patch("*** Delete File: locked/d.txt\n") }),
    );
    assert_eq!(run.code, 0, "{run:?}");
    let tree = snapshot(&room.dir);
    assert!(tree.iter().all(|e| !e.contains(".tinytool.")), "{tree:#?}");
    assert_eq!(
        tree,
        vec![
            "a.txt file 644 links=1 \"ONE\\ntwo\\n\"",
            "bin/ dir 755",
            "bin/run.sh file 750 links=1 \"#!/bin/sh\\necho HI\\n\"",
            "crlf.txt file 644 links=1 \"\\u{feff}X\\r\\ny\\r\\n\"",
            "dst/ dir 755",
            "dst/m.txt file 644 links=1 \"moved\\n\"",
            "locked/ dir 755",
            "locked/keep.txt file 644 links=1 \"k\\n\"",
            "new/ dir 755",
            "new/deep/ dir 755",
            "new/deep/n.txt file 644 links=1 \"new\\n\"",
            "target.txt file 644 links=1 \"pointed at\\n\"",
        ]
    );
}
