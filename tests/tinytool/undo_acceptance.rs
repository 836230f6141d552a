//! Issue 20's acceptance, black-box: a git project with uncommitted work under the README's
//! CI policy (destructive shell commands allowed, the sandbox required); after each
//! damaging command `tinytool undo` brings back every file byte-for-byte with its mode and
//! every directory, compared as a full snapshot of the tree (`.git` and `.tinytool` aside).

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

use crate::util::Room;

/// One entry of a tree snapshot: a directory, or a file's permission bits and bytes.
#[derive(Debug, PartialEq, Eq)]
enum Entry {
    Dir,
    File(u32, Vec<u8>),
    Link(std::path::PathBuf),
    Other(String),
}

/// Every path under `root` but `.git` and `.tinytool`, with what it is.
fn snapshot(root: &Path) -> BTreeMap<String, Entry> {
    fn visit(root: &Path, dir: &Path, out: &mut BTreeMap<String, Entry>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let entry = entry.unwrap();
            let path = entry.path();
            let rel = path
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            if rel == ".git" || rel == ".tinytool" {
                continue;
            }
            let meta = std::fs::symlink_metadata(&path).unwrap();
            if meta.is_dir() {
                out.insert(rel, Entry::Dir);
                visit(root, &path, out);
            } else if meta.is_file() {
                let mode = meta.permissions().mode() & 0o7777;
                out.insert(rel, Entry::File(mode, std::fs::read(&path).unwrap()));
            } else if meta.file_type().is_symlink() {
                out.insert(rel, Entry::Link(std::fs::read_link(&path).unwrap()));
            } else {
                out.insert(rel, Entry::Other(format!("{:?}", meta.file_type())));
            }
        }
    }
    let mut out = BTreeMap::new();
    visit(root, root, &mut out);
    out
}

/// Asserts two snapshots are equal, naming only the paths that differ.
fn assert_same(now: &BTreeMap<String, Entry>, want: &BTreeMap<String, Entry>, what: &str) {
    let keys: std::collections::BTreeSet<&String> = now.keys().chain(want.keys()).collect();
    let differ: Vec<String> = keys
        .into_iter()
        .filter(|k| now.get(*k) != want.get(*k))
        .map(|k| {
            let show = |e: Option<&Entry>| match e {
                None => "absent".to_string(),
                Some(Entry::Dir) => "dir".to_string(),
                Some(Entry::File(mode, bytes)) => format!(
                    "file {mode:o} {:?}",
                    String::from_utf8_lossy(&bytes[..bytes.len().min(60)])
                ),
                Some(Entry::Link(to)) => format!("symlink to {}", to.display()),
                Some(Entry::Other(kind)) => kind.clone(),
            };
            format!("{k}: now {}, want {}", show(now.get(k)), show(want.get(k)))
        })
        .collect();
    assert!(differ.is_empty(), "{what}:\n{}", differ.join("\n"));
}

/// The README's CI policy block, verbatim.
fn ci_policy() -> String {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let policy = readme
        .split("```json policy")
        .nth(3)
        .expect("the README has a third policy block (CI)")
        .split("```")
        .next()
        .unwrap()
        .to_string();
    assert!(
        policy.contains(r#""permission": "destructive-shell", "pattern": "*", "action": "allow""#),
        "the CI policy allows destructive-shell: {policy}"
    );
    policy
}

fn git(room: &Room, args: &[&str]) {
    let mut cmd = Command::new("git");
    room.enter(&mut cmd);
    cmd.args(["-c", "user.name=t", "-c", "user.email=t@example.org"])
        .args(args);
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn chmod(room: &Room, rel: &str, mode: u32) {
    std::fs::set_permissions(room.path(rel), std::fs::Permissions::from_mode(mode)).unwrap();
}

/// A git project with committed, modified and untracked files in nested directories,
/// some executable (0755) and some private (0600), and symlinks, under the CI policy.
fn project() -> Room {
    let room = Room::new();
    room.write_user("policy.json", ci_policy());
    // `required` refuses every command where a sandbox layer is missing; there the
    // policy's rules are kept and the sandbox left to its default (said on stderr).
    let probe = room.call("bash", json!({"command": "true"}));
    if probe.code == 3 {
        eprintln!("sandbox unavailable here, CI policy without `required`: {probe:?}");
        let mut policy: Value = serde_json::from_str(&ci_policy()).unwrap();
        policy.as_object_mut().unwrap().remove("sandbox");
        room.write_user("policy.json", policy.to_string());
    }
    room.write("a.c", "int main(void) { return 0; }\n");
    room.write("src/main.c", "#include \"lib/util.h\"\nint x = 1;\n");
    room.write("src/lib/util.c", "int util(void) { return 1; }\n");
    room.write("src/lib/util.h", "int util(void);\n");
    room.write("src/tools/run.sh", "#!/bin/sh\necho run\n");
    chmod(&room, "src/tools/run.sh", 0o755);
    room.write("build.sh", "#!/bin/sh\nmake\n");
    chmod(&room, "build.sh", 0o755);
    room.write(".gitignore", "*.o\n");
    git(&room, &["init", "-q"]);
    git(&room, &["add", "-A"]);
    git(&room, &["commit", "-qm", "base"]);
    // Uncommitted work: modified tracked files and untracked ones.
    room.write("a.c", "int main(void) { return 42; } /* uncommitted */\n");
    room.write("src/lib/util.c", "int util(void) { return 2; } /* wip */\n");
    room.write("src/lib/extra/new.h", "#define NEW 1\n");
    room.write("src/tools/deploy.sh", "#!/bin/sh\necho deploy\n");
    chmod(&room, "src/tools/deploy.sh", 0o755);
    room.write("conf/local.cfg", "password_hint=none\n");
    chmod(&room, "conf/local.cfg", 0o600);
    room.write("docs/notes/todo.md", "- finish\n- test\n");
    // Symlinks: to a file, to a directory, dangling; undo makes them again.
    std::os::unix::fs::symlink("util.h", room.path("src/lib/util-link.h")).unwrap();
    std::os::unix::fs::symlink("../docs", room.path("src/docs-link")).unwrap();
    std::os::unix::fs::symlink("nowhere", room.path("src/dangling")).unwrap();
    room.write(
        "data.bin",
        (0u8..=255).cycle().take(5000).collect::<Vec<u8>>(),
    );
    room
}

fn bash(room: &Room, command: &str) -> Value {
    let run = room.call("bash", json!({"command": command}));
    assert_eq!(run.code, 0, "{command}: {}\n{}", run.stdout, run.stderr);
    run.json()
}

/// Runs `command`, checks it changed the tree and took a checkpoint, then undoes it and
/// compares the whole tree with its state before.
fn damage_then_undo(room: &Room, command: &str) {
    let before = snapshot(&room.dir);
    let result = bash(room, command);
    assert!(
        result["metadata"]["checkpoint"]["id"].is_i64(),
        "{command}: {result}"
    );
    assert_ne!(snapshot(&room.dir), before, "{command} changed nothing");
    let undo = room.run(&["undo"], None);
    assert_eq!(undo.code, 0, "{command}: {}{}", undo.stdout, undo.stderr);
    assert_same(
        &snapshot(&room.dir),
        &before,
        &format!("after undoing {command}"),
    );
}

#[test]
fn undo_repairs_rm_rf_of_a_directory() {
    let room = project();
    damage_then_undo(&room, "rm -rf src");
}

#[test]
fn undo_repairs_make_clean_from_a_makefile_the_agent_wrote() {
    // CI runs `make lint` first, so make is there; elsewhere it may not be.
    if Command::new("make").arg("--version").output().is_err() {
        crate::util::skip("no make on this machine");
        return;
    }
    let room = project();
    let write = room.call(
        "write",
        json!({"file_path": "Makefile", "content": "clean:\n\trm -rf src docs *.o conf\n"}),
    );
    assert_eq!(write.code, 0, "{}", write.stdout);
    damage_then_undo(&room, "make clean");
}

#[test]
fn undo_repairs_sed_i_d_on_three_files() {
    let room = project();
    damage_then_undo(
        &room,
        "sed -i d a.c src/tools/run.sh conf/local.cfg && test ! -s a.c",
    );
}

#[test]
fn undo_repairs_git_checkout_discarding_an_uncommitted_change() {
    let room = project();
    damage_then_undo(&room, "git checkout HEAD -- a.c");
}

#[test]
fn undo_repairs_a_python_truncation() {
    if Command::new("python3").arg("-c").arg("0").output().is_err() {
        crate::util::skip("no python3 on this machine");
        return;
    }
    let room = project();
    damage_then_undo(
        &room,
        "python3 -c \"open('src/lib/util.c', 'w').close(); open('data.bin', 'r+b').truncate(10)\"",
    );
}

#[test]
fn edit_write_undo_undo_and_undo_of_an_undo_under_the_ci_policy() {
    let room = project();
    let start = snapshot(&room.dir);
    let edit = room.call(
        "edit",
        json!({"file_path": "src/main.c", "old_string": "x = 1", "new_string": "x = 2"}),
    );
    assert_eq!(edit.code, 0, "{}", edit.stdout);
    let after_edit = snapshot(&room.dir);
    let write = room.call(
        "write",
        json!({"file_path": "src/lib/extra/more/added.c", "content": "int added;\n"}),
    );
    assert_eq!(write.code, 0, "{}", write.stdout);
    let after_write = snapshot(&room.dir);

    assert_eq!(room.run(&["undo"], None).code, 0);
    assert_same(
        &snapshot(&room.dir),
        &after_edit,
        "the write is reverted, its new directories too",
    );
    assert_eq!(room.run(&["undo"], None).code, 0);
    assert_same(&snapshot(&room.dir), &start, "the edit is reverted");

    // The newest checkpoint is the second undo (of the edit): undoing it redoes the edit.
    let list = room.run(&["checkpoints", "--json"], None).json();
    assert_eq!(list[0]["kind"], "undo", "{list}");
    let redo = room.run(&["undo", &list[0]["id"].to_string()], None);
    assert_eq!(redo.code, 0, "{}{}", redo.stdout, redo.stderr);
    assert_same(&snapshot(&room.dir), &after_edit, "the edit redone");
    // The first undo's id brings the write back.
    assert_eq!(list[1]["kind"], "undo", "{list}");
    let redo = room.run(&["undo", &list[1]["id"].to_string()], None);
    assert_eq!(redo.code, 0, "{}{}", redo.stdout, redo.stderr);
    assert_same(&snapshot(&room.dir), &after_write, "the write redone");
}

#[test]
fn a_hand_edit_after_the_call_is_a_conflict_left_alone_without_force() {
    let room = project();
    bash(&room, "sed -i 's/wip/done/' src/lib/util.c && rm -rf docs");
    room.write("src/lib/util.c", "edited by a person\n");
    let hand = snapshot(&room.dir);
    let refused = room.run(&["undo"], None);
    assert_eq!(refused.code, 1, "{}{}", refused.stdout, refused.stderr);
    assert!(
        refused.stdout.contains("conflict: src/lib/util.c"),
        "{}",
        refused.stdout
    );
    assert_same(
        &snapshot(&room.dir),
        &hand,
        "a refused undo changes nothing",
    );
    let forced = room.run(&["undo", "--force"], None);
    assert_eq!(forced.code, 0, "{}{}", forced.stdout, forced.stderr);
    assert_eq!(
        room.read("src/lib/util.c"),
        "int util(void) { return 2; } /* wip */\n"
    );
    assert_eq!(room.read("docs/notes/todo.md"), "- finish\n- test\n");
}

#[test]
fn undo_removes_the_directories_a_call_created_and_keeps_older_ones() {
    let room = project();
    room.write("empty-before/.keep-me-not", "");
    std::fs::remove_file(room.path("empty-before/.keep-me-not")).unwrap();
    // Older than the call by more than the clock slack undo allows.
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let before = snapshot(&room.dir);
    bash(
        &room,
        "mkdir -p made/deep/er && echo x > made/deep/er/f && echo y > made/g \
         && echo z > empty-before/h && echo w > src/lib/extra/w",
    );
    let undo = room.run(&["undo"], None);
    assert_eq!(undo.code, 0, "{}{}", undo.stdout, undo.stderr);
    assert!(undo.stdout.contains("D made/"), "{}", undo.stdout);
    assert_same(&snapshot(&room.dir), &before, "created directories go");
    assert!(
        room.path("empty-before").is_dir(),
        "an older empty directory stays"
    );
}

#[test]
fn a_removed_directory_comes_back_through_its_files_but_an_empty_one_does_not() {
    let room = project();
    std::fs::create_dir_all(room.path("src/empty")).unwrap();
    bash(&room, "rm -rf src");
    let undo = room.run(&["undo"], None);
    assert_eq!(undo.code, 0, "{}{}", undo.stdout, undo.stderr);
    assert_eq!(room.read("src/lib/extra/new.h"), "#define NEW 1\n");
    assert_eq!(mode(&room, "src/tools/run.sh"), 0o755);
    // Checkpoints keep files only (documented): an empty directory is not recorded.
    assert!(!room.path("src/empty").exists());
}

fn mode(room: &Room, rel: &str) -> u32 {
    std::fs::metadata(room.path(rel))
        .unwrap()
        .permissions()
        .mode()
        & 0o7777
}

#[test]
fn undo_restores_a_directory_a_file_replaced_and_a_file_a_directory_replaced() {
    let room = project();
    let before = snapshot(&room.dir);
    bash(&room, "rm -rf src && echo now-a-file > src");
    let undo = room.run(&["undo"], None);
    assert_eq!(undo.code, 0, "{}{}", undo.stdout, undo.stderr);
    assert_same(&snapshot(&room.dir), &before, "the directory is back");
    // Undoing that undo puts the file back where the directory is.
    let list = room.run(&["checkpoints", "--json"], None).json();
    let redo = room.run(&["undo", &list[0]["id"].to_string()], None);
    assert_eq!(redo.code, 0, "{}{}", redo.stdout, redo.stderr);
    assert_eq!(room.read("src"), "now-a-file\n");

    let room = project();
    let before = snapshot(&room.dir);
    bash(&room, "rm a.c && mkdir -p a.c/x && echo y > a.c/x/y");
    let undo = room.run(&["undo"], None);
    assert_eq!(undo.code, 0, "{}{}", undo.stdout, undo.stderr);
    assert_same(&snapshot(&room.dir), &before, "the file is back");
    // A directory holding something the checkpoints never saw is a conflict.
    bash(&room, "rm a.c && mkdir a.c && echo y > a.c/y");
    room.write("a.c/person.txt", "mine\n");
    let refused = room.run(&["undo"], None);
    assert_eq!(refused.code, 1, "{}{}", refused.stdout, refused.stderr);
    assert!(
        refused.stdout.contains("a.c/person.txt"),
        "{}",
        refused.stdout
    );
    assert_eq!(room.read("a.c/person.txt"), "mine\n");
}
