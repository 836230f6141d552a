//! `write`: new files and directories, conventions of existing files, permissions,
//! formatter, events and the output shape.

use std::os::unix::fs::PermissionsExt;

use serde_json::{Value, json};

use crate::util::{Room, read_events};

#[test]
fn creates_parents_with_the_content_as_given() {
    let room = Room::new();
    let run = room.call(
        "write",
        json!({"file_path": "a/b/new.txt", "content": "hello world"}),
    );
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(room.read("a/b/new.txt"), "hello world");
    let mode = std::fs::metadata(room.path("a/b/new.txt"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o644);
    crate::snapshot!("write_created", run.json());
}

#[test]
fn an_existing_files_conventions_and_mode_are_kept() {
    let room = Room::new();
    let file = room.write("win.bat", b"\xef\xbb\xbf@echo off\r\nexit\r\n".as_slice());
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o700)).unwrap();
    let run = room.call(
        "write",
        json!({"file_path": "win.bat", "content": "@echo on\necho hi\nexit"}),
    );
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        std::fs::read(&file).unwrap(),
        b"\xef\xbb\xbf@echo on\r\necho hi\r\nexit\r\n"
    );
    assert_eq!(
        std::fs::metadata(&file).unwrap().permissions().mode() & 0o777,
        0o700
    );
    let meta = &run.json()["metadata"];
    assert_eq!(meta["line_endings"], "crlf");
    assert_eq!(meta["bom"], true);
    assert_eq!(meta["created"], false);
    // A file without a final newline keeps that too.
    room.write("plain.txt", "a\nb");
    room.call(
        "write",
        json!({"file_path": "plain.txt", "content": "c\nd\n"}),
    );
    assert_eq!(room.read("plain.txt"), "c\nd");
}

#[test]
fn formatter_and_event() {
    let room = Room::new();
    room.write_user(
        "config.json",
        json!({"formatters": {"*.bad": ["sh", "-c", "echo syntax error >&2; exit 1"]}}).to_string(),
    );
    let events = room.path("ev.jsonl");
    let run = room.run(
        &["--events", events.to_str().unwrap(), "write"],
        Some(&json!({"file_path": "x.bad", "content": "package main\n"}).to_string()),
    );
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        run.output(),
        "Successfully wrote 13 bytes to x.bad\nFormatter failed: sh: exit status 1: syntax error"
    );
    assert_eq!(room.read("x.bad"), "package main\n");
    let event: Value = read_events(&events)
        .into_iter()
        .find(|e| e["type"] == "file.modified")
        .unwrap();
    assert_eq!(event["properties"]["operation"], "write");
    assert_eq!(
        event["properties"]["path"],
        room.path("x.bad").to_string_lossy().as_ref()
    );
}

#[test]
fn directories_are_refused_and_nothing_is_left_behind() {
    let room = Room::new();
    std::fs::create_dir(room.path("d")).unwrap();
    let run = room.call("write", json!({"file_path": "d", "content": "x"}));
    assert_eq!(run.code, 1);
    assert!(run.output().contains("is a directory"), "{run:?}");
    room.call("write", json!({"file_path": "f.txt", "content": "1"}));
    room.call("write", json!({"file_path": "f.txt", "content": "2"}));
    let files: Vec<String> = crate::edit::tree(&room.dir)
        .into_iter()
        .map(|(p, _)| p)
        .collect();
    assert_eq!(files, vec!["d".to_string(), "f.txt".to_string()]);
}
