//! `read`: numbering, paging, previews, images, binary files and errors.

use serde_json::json;

use crate::util::Room;

#[test]
fn numbers_lines_relative_to_dir() {
    let room = Room::new();
    room.write("src/a.txt", "alpha\nbeta\n");
    let run = room.call("read", json!({"file_path": "src/a.txt"}));
    assert_eq!(run.code, 0, "{run:?}");
    let result = run.json();
    crate::snapshot!("read_numbered", result);
}

#[test]
fn flags_and_stdin_are_the_same_call() {
    let room = Room::new();
    room.write("a.txt", "1\n2\n3\n4\n");
    let by_flags = room.run(&["read", "--file-path", "a.txt", "--limit", "2"], None);
    let by_stdin = room.run(&["read"], Some(r#"{"file_path":"a.txt","limit":2}"#));
    assert_eq!(by_flags.stdout, by_stdin.stdout);
    assert!(
        by_flags
            .output()
            .contains("[lines 1-2 of 4 shown, 2 more lines; continue with offset=2]")
    );
}

#[test]
fn offset_and_limit_page_through_the_file() {
    let room = Room::new();
    let text: String = (1..=100)
        .map(|i| format!("{}\n", "x".repeat(10) + &i.to_string()))
        .collect();
    room.write("f.txt", text);
    let run = room.call(
        "read",
        json!({"file_path": "f.txt", "offset": 10, "limit": 5}),
    );
    let out = run.output();
    assert!(out.starts_with("11\txxxxxxxxxx11\n"), "{out}");
    assert!(out.contains("15\t"));
    assert!(!out.contains("16\t"));
    assert!(
        out.ends_with("\n[lines 11-15 of 100 shown, 85 more lines; continue with offset=15]\n")
    );
    assert_eq!(run.json()["metadata"]["total_lines"], 100);
}

#[test]
fn a_long_page_pages_itself_with_whole_lines_and_the_offset_to_continue() {
    let room = Room::new();
    let text: String = (1..=3000)
        .map(|i| format!("ligne {i} — café ✓\n"))
        .collect();
    room.write("long.txt", text);
    let run = room.call("read", json!({"file_path": "long.txt", "limit": 3000}));
    let result = run.json();
    let out = result["output"].as_str().unwrap();
    assert_eq!(result["truncated"], false);
    assert!(!out.contains('\u{fffd}'));
    assert!(out.starts_with("1\tligne 1 — café ✓\n"));
    let last = out.lines().last().unwrap();
    let next: u64 = last
        .rsplit_once("offset=")
        .and_then(|(_, n)| n.trim_end_matches(']').parse().ok())
        .unwrap_or_else(|| panic!("{last}"));
    assert!(next >= 1_000, "{last}");
    assert!(last.contains("more lines"), "{last}");
    assert!(out.len() <= 51_200 + last.len() + 1, "{}", out.len());
    let again = room.call("read", json!({"file_path": "long.txt", "offset": next}));
    assert!(
        again
            .output()
            .starts_with(&format!("{}\tligne {}", next + 1, next + 1))
    );
}

#[test]
fn a_file_within_the_budget_comes_back_whole() {
    let room = Room::new();
    let text: String = (1..=300).map(|i| format!("line {i}\n")).collect();
    room.write("f.txt", text);
    let out = room.call("read", json!({"file_path": "f.txt"})).output();
    assert!(out.ends_with("300\tline 300\n"), "{out}");
}

#[test]
fn a_huge_page_stays_within_the_budget() {
    let room = Room::new();
    let line = "é".repeat(3000);
    let text: String = (0..500).map(|_| format!("{line}\n")).collect();
    room.write("wide.txt", text);
    let run = room.call("read", json!({"file_path": "wide.txt", "limit": 1000000}));
    let result = run.json();
    assert_eq!(result["truncated"], false);
    assert!(result["output"].as_str().unwrap().len() < 52_000);
}

#[test]
fn missing_file_suggests_a_sibling() {
    let room = Room::new();
    room.write("config.toml", "");
    let run = room.call("read", json!({"file_path": "conf.yaml"}));
    assert_eq!(run.code, 1);
    assert_eq!(
        run.output(),
        "File not found: conf.yaml\nDid you mean: config.toml?"
    );
    let run = room.call("read", json!({"file_path": "zzz"}));
    assert_eq!(run.output(), "File not found: zzz");
}

#[test]
fn directories_binaries_and_bad_offsets_are_clear_errors() {
    let room = Room::new();
    room.write("d/x", "");
    let mut bin = vec![0u8; 100];
    bin.extend_from_slice(b"abc");
    room.write("blob.bin", bin);
    room.write("two.txt", "a\nb\n");
    let dir = room.call("read", json!({"file_path": "d"}));
    assert_eq!(dir.code, 1);
    assert!(dir.output().starts_with("d is a directory, not a file"));
    let binary = room.call("read", json!({"file_path": "blob.bin"}));
    assert_eq!(
        binary.output(),
        "Binary file detected: blob.bin (103 bytes). Cannot display binary content."
    );
    let beyond = room.call("read", json!({"file_path": "two.txt", "offset": 5}));
    assert_eq!(
        beyond.output(),
        "Offset 5 is beyond end of file (2 lines; the last valid offset is 1)"
    );
    // The offset the message names reads the last line.
    let last = room.call("read", json!({"file_path": "two.txt", "offset": 1}));
    assert_eq!(last.output(), "2\tb\n");
    let at_end = room.call("read", json!({"file_path": "two.txt", "offset": 2}));
    assert_eq!(
        at_end.output(),
        "Offset 2 is beyond end of file (2 lines; the last valid offset is 1)"
    );
    room.write("empty.txt", "");
    let empty = room.call("read", json!({"file_path": "empty.txt", "offset": 1}));
    assert_eq!(
        empty.output(),
        "Offset 1 is beyond end of file (the file is empty; offset 0 reads it)"
    );
    let negative = room.call("read", json!({"file_path": "two.txt", "offset": -1}));
    assert_eq!(negative.code, 1);
    assert_eq!(
        negative.output(),
        "Invalid arguments: `offset` must be at least 0 (got -1)"
    );
    let zero = room.call("read", json!({"file_path": "two.txt", "limit": 0}));
    assert!(zero.output().contains("`limit` must be at least 1"));
}

#[test]
fn empty_files_and_lossy_bytes_are_reported() {
    let room = Room::new();
    room.write("empty.txt", "");
    room.write("latin1.txt", b"caf\xe9\n");
    assert_eq!(
        room.call("read", json!({"file_path": "empty.txt"}))
            .output(),
        "(empty file)"
    );
    let run = room.call("read", json!({"file_path": "latin1.txt"}));
    let result = run.json();
    assert_eq!(result["output"], "1\tcaf\u{fffd}\n");
    assert_eq!(result["metadata"]["lossy"], true);
}

#[test]
fn images_are_parts_never_previewed_nor_refused_for_their_size() {
    // The rest of images (shapes, caps, bad ones) is in `images`.
    let room = Room::new();
    let png = crate::util::noise_png(300, 300);
    room.write("pic.png", &png);
    room.write_user("config.json", r#"{"output": {"max_bytes": 1000}}"#);
    let result = room.call("read", json!({"file_path": "pic.png"})).json();
    assert_eq!(
        (result["is_error"].clone(), result["truncated"].clone()),
        (json!(false), json!(false))
    );
    assert_eq!(result["metadata"]["bytes"], png.len());
}

#[test]
fn a_file_without_newlines_reads_its_first_2000_characters() {
    let room = Room::new();
    room.write("one.txt", "z".repeat(3_000_000));
    let run = room.call("read", json!({"file_path": "one.txt"}));
    let out = run.output();
    assert_eq!(
        out,
        format!(
            "1\t{}... [2998000 more characters on this line; char_offset=2000 with offset=0 \
             goes on]\n",
            "z".repeat(2000)
        )
    );
}

#[test]
fn a_long_minified_line_can_be_read_through_with_char_offset() {
    let room = Room::new();
    let line: String = (0..60_000).map(|i| format!("{i},")).collect();
    room.write("data.min.js", format!("{line}\nnext\n"));
    let run = room.call("read", json!({"file_path": "data.min.js", "limit": 1}));
    let out = run.output();
    let left = line.chars().count() - 2_000;
    assert!(
        out.contains(&format!(
            "... [{left} more characters on this line; char_offset=2000 with offset=0 goes on]"
        )),
        "{}",
        &out[out.len().saturating_sub(300)..]
    );
    let run = room.call(
        "read",
        json!({"file_path": "data.min.js", "offset": 0, "char_offset": left + 1_990, "limit": 2}),
    );
    assert_eq!(
        run.output().lines().next().unwrap(),
        format!("1\t{}", &line[left + 1_990..])
    );
    let run = room.call(
        "read",
        json!({"file_path": "data.min.js", "char_offset": 10_000_000}),
    );
    assert!(run.output().contains("beyond the end of line 1"), "{run:?}");
}

#[test]
fn a_bom_shows_as_a_marker_once_and_edit_and_write_keep_it() {
    let room = Room::new();
    room.write("bom.py", "\u{feff}import os\nx = 1\n");
    let out = room.call("read", json!({"file_path": "bom.py"})).output();
    assert_eq!(out, "1\t[BOM]import os\n2\tx = 1\n");
    // Reading did not change the file.
    assert_eq!(room.read("bom.py"), "\u{feff}import os\nx = 1\n");
    // old_string copied from read's line 1, marker and all: the BOM stays, no marker lands.
    let run = room.call(
        "edit",
        json!({"file_path": "bom.py", "old_string": "[BOM]import os", "new_string": "[BOM]import sys"}),
    );
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(room.read("bom.py"), "\u{feff}import sys\nx = 1\n");
    // Without the marker, and a new_string at the file's start that has it.
    let run = room.call(
        "edit",
        json!({"file_path": "bom.py", "old_string": "import sys", "new_string": "[BOM]import re"}),
    );
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(room.read("bom.py"), "\u{feff}import re\nx = 1\n");
    let run = room.call(
        "write",
        json!({"file_path": "bom.py", "content": "[BOM]print(1)\n"}),
    );
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(room.read("bom.py"), "\u{feff}print(1)\n");
    // Taking the marker away changes nothing, and says why.
    let run = room.call(
        "edit",
        json!({"file_path": "bom.py", "old_string": "[BOM]print(1)", "new_string": "print(1)"}),
    );
    assert!(
        run.output()
            .contains("the file is unchanged. (`[BOM]` in read's output stands for"),
        "{run:?}"
    );
    assert_eq!(room.read("bom.py"), "\u{feff}print(1)\n");
    // A file without a BOM: `[BOM]` is the file's own text, written as given.
    room.write("plain.txt", "a\n");
    room.call(
        "write",
        json!({"file_path": "plain.txt", "content": "[BOM] is a marker\n"}),
    );
    assert_eq!(room.read("plain.txt"), "[BOM] is a marker\n");
}
