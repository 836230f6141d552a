//! `edit`: the fixture corpus (`tests/fixtures/edit/NNN_name/`), output shapes, events,
//! the formatter, and concurrent edits by many processes.
//!
//! A fixture folder holds `input` (the file before), `args.json` (`old_string`,
//! `new_string`, optionally `replace_all` and `file_path`, default `input`), and either
//! `expected` (the exact bytes after) or `refused` (a substring the refusal must contain;
//! the file must then be unchanged). Without `input` the file does not exist before the
//! call (creation by edit). An optional `strategy` file holds the `metadata.strategy` a
//! success must report. A new case is a new folder.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::util::{Room, read_events, redact};

fn fixtures_dir(tool: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(tool)
}

/// The case folders of a fixture directory, sorted.
pub fn cases(tool: &str) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(fixtures_dir(tool))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    dirs
}

/// Every file under `dir` (relative path → bytes), skipping tinytool's own folder.
pub fn tree(dir: &Path) -> Vec<(String, Option<Vec<u8>>)> {
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort();
    out
}

fn walk(root: &Path, dir: &Path, out: &mut Vec<(String, Option<Vec<u8>>)>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries {
        let path = entry.unwrap().path();
        let rel = path
            .strip_prefix(root)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        if rel == ".tinytool" {
            continue;
        }
        if path.is_dir() {
            out.push((rel, None));
            walk(root, &path, out);
        } else {
            out.push((rel, Some(std::fs::read(&path).unwrap())));
        }
    }
}

fn run_case(case: &Path) -> Result<(), String> {
    let room = Room::new();
    let mut args: Value = serde_json::from_slice(&std::fs::read(case.join("args.json")).unwrap())
        .map_err(|e| format!("args.json: {e}"))?;
    let name = args
        .get("file_path")
        .and_then(Value::as_str)
        .unwrap_or("input")
        .to_string();
    let input = std::fs::read(case.join("input")).ok();
    if let Some(input) = &input {
        room.write(&name, input);
    }
    args["file_path"] = json!(name);
    let run = room.call("edit", args);
    let result = run.json();
    let output = result["output"].as_str().unwrap_or_default().to_string();
    let after = std::fs::read(room.path(&name)).ok();
    let files: Vec<String> = tree(&room.dir)
        .into_iter()
        .filter(|(_, bytes)| bytes.is_some())
        .map(|(p, _)| p)
        .collect();
    let wanted_files = if after.is_some() || input.is_some() {
        vec![name.clone()]
    } else {
        Vec::new()
    };
    if files != wanted_files {
        return Err(format!("files left in the directory: {files:?}"));
    }
    let after = after.unwrap_or_default();
    let input = input.unwrap_or_default();
    if let Ok(expected) = std::fs::read(case.join("expected")) {
        if result["is_error"] != false {
            return Err(format!("refused, expected an edit:\n{output}"));
        }
        if let Ok(strategy) = std::fs::read_to_string(case.join("strategy"))
            && result["metadata"]["strategy"] != strategy.trim()
        {
            return Err(format!(
                "strategy {} , expected {}",
                result["metadata"]["strategy"],
                strategy.trim()
            ));
        }
        if after != expected {
            return Err(format!(
                "wrong result ({}):\n--- got\n{}\n--- expected\n{}",
                result["metadata"]["strategy"],
                String::from_utf8_lossy(&after).escape_debug(),
                String::from_utf8_lossy(&expected).escape_debug()
            ));
        }
        return Ok(());
    }
    let wanted = std::fs::read_to_string(case.join("refused"))
        .map_err(|_| "neither expected nor refused".to_string())?;
    let wanted = wanted.trim_end_matches('\n');
    if result["is_error"] != true {
        return Err(format!(
            "edited ({}), expected a refusal containing {wanted:?}:\n{}",
            result["metadata"]["strategy"],
            String::from_utf8_lossy(&after).escape_debug()
        ));
    }
    if after != input {
        return Err("refused but the file changed".into());
    }
    if !output.contains(wanted) {
        return Err(format!("refusal lacks {wanted:?}:\n{output}"));
    }
    Ok(())
}

#[test]
fn fixture_corpus() {
    let cases = cases("edit");
    assert!(cases.len() >= 100, "the corpus shrank: {}", cases.len());
    let failures: Vec<String> = cases
        .iter()
        .filter_map(|case| {
            run_case(case)
                .err()
                .map(|e| format!("{}: {e}", case.file_name().unwrap().to_string_lossy()))
        })
        .collect();
    assert!(
        failures.is_empty(),
        "{} of {} edit fixtures failed:\n\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n\n")
    );
}

#[test]
fn success_output_and_metadata() {
    let room = Room::new();
    room.write(
        "src/app.py",
        "class App:\n\tdef run(self):\n\t\tself.start()\n\t\treturn 0\n",
    );
    let run = room.call(
        "edit",
        json!({
            "file_path": "src/app.py",
            "old_string": "    def run(self):\n        self.start()\n        return 0",
            "new_string": "    def run(self):\n        self.start()\n        self.wait()\n        return 0"
        }),
    );
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        room.read("src/app.py"),
        "class App:\n\tdef run(self):\n\t\tself.start()\n\t\tself.wait()\n\t\treturn 0\n"
    );
    crate::snapshot!("edit_success_reindented", run.json());
}

#[test]
fn metadata_says_when_lines_were_reindented_or_kept_from_the_file() {
    let room = Room::new();
    room.write("f.py", "def f():\n    a  =  1\n    b = 2\n");
    let run = room.call(
        "edit",
        json!({"file_path": "f.py", "old_string": "a = 1\nb = 2", "new_string": "a = 1\nb = 3\nc = 4"}),
    );
    let result = run.json();
    assert_eq!(result["is_error"], false, "{result}");
    assert_eq!(
        room.read("f.py"),
        "def f():\n    a  =  1\n    b = 3\n    c = 4\n"
    );
    assert_eq!(result["metadata"]["reindented_lines"], 2, "{result}");
    assert_eq!(result["metadata"]["file_lines_kept"], 1, "{result}");
    // An exact edit writes new_string as given and says nothing of the kind.
    let run = room.call(
        "edit",
        json!({"file_path": "f.py", "old_string": "c = 4", "new_string": "c = 5"}),
    );
    let result = run.json();
    assert_eq!(result["metadata"]["strategy"], "exact");
    assert!(
        result["metadata"].get("reindented_lines").is_none(),
        "{result}"
    );
    assert!(
        result["metadata"].get("file_lines_kept").is_none(),
        "{result}"
    );
}

#[test]
fn an_empty_old_string_creates_a_missing_file_with_its_parents() {
    let room = Room::new();
    let run = room.call(
        "edit",
        json!({"file_path": "a/b/new.txt", "old_string": "", "new_string": "hello\n"}),
    );
    let result = run.json();
    assert_eq!(result["is_error"], false, "{result}");
    assert_eq!(result["metadata"]["strategy"], "created");
    assert_eq!(room.read("a/b/new.txt"), "hello\n");
    // The file now exists and is not empty: an empty old_string is refused.
    let run = room.call(
        "edit",
        json!({"file_path": "a/b/new.txt", "old_string": "", "new_string": "x"}),
    );
    assert_eq!(run.json()["metadata"]["reason"], "empty_old_string");
    assert_eq!(room.read("a/b/new.txt"), "hello\n");
}

#[test]
fn refusal_shows_the_closest_region() {
    let room = Room::new();
    room.write(
        "lib.rs",
        "fn total(items: &[u32]) -> u32 {\n\tlet mut sum = 0;  \n\tfor i in items {\n\t\tsum += i;\n\t}\n\tsum\n}\n",
    );
    let run = room.call(
        "edit",
        json!({
            "file_path": "lib.rs",
            "old_string": "fn total(items: &[u32]) -> u32 {\n    let mut sum = 1;\n    for i in items {\n        sum -= i;\n    }\n    sum\n}",
            "new_string": "fn total(items: &[u32]) -> u32 {\n    items.iter().sum()\n}"
        }),
    );
    assert_eq!(run.code, 1);
    crate::snapshot_text!("edit_not_found", run.output());
    assert_eq!(run.json()["metadata"]["reason"], "not_found");
}

#[test]
fn ambiguity_is_refused_with_every_region() {
    let room = Room::new();
    room.write("a.txt", "x = 1\ny = 2\nx = 1\n");
    let run = room.call(
        "edit",
        json!({"file_path": "a.txt", "old_string": "x = 1", "new_string": "x = 3"}),
    );
    assert_eq!(run.code, 1);
    crate::snapshot_text!("edit_ambiguous", run.output());
    let run = room.call(
        "edit",
        json!({"file_path": "a.txt", "old_string": "x = 1", "new_string": "x = 3", "replace_all": true}),
    );
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(room.read("a.txt"), "x = 3\ny = 2\nx = 3\n");
    assert_eq!(run.json()["metadata"]["replacements"], 2);
}

#[test]
fn simple_errors() {
    let room = Room::new();
    room.write("a.txt", "hello world\n");
    let same = room.call(
        "edit",
        json!({"file_path": "a.txt", "old_string": "x", "new_string": "x"}),
    );
    assert!(
        same.output()
            .contains("old_string and new_string are identical")
    );
    let missing = room.call(
        "edit",
        json!({"file_path": "nope.txt", "old_string": "x", "new_string": "y"}),
    );
    assert!(
        missing.output().starts_with("File not found: nope.txt"),
        "{missing:?}"
    );
    let empty = room.call(
        "edit",
        json!({"file_path": "a.txt", "old_string": "", "new_string": "y"}),
    );
    assert_eq!(empty.code, 1);
    room.write("empty.txt", "");
    let fill = room.call(
        "edit",
        json!({"file_path": "empty.txt", "old_string": "", "new_string": "first\n"}),
    );
    assert_eq!(fill.code, 0, "{fill:?}");
    assert_eq!(room.read("empty.txt"), "first\n");
    room.write("bin.dat", b"\xff\xfe\x00abc".as_slice());
    let binary = room.call(
        "edit",
        json!({"file_path": "bin.dat", "old_string": "abc", "new_string": "x"}),
    );
    assert!(binary.output().contains("not UTF-8"), "{binary:?}");
    let dir = room.call(
        "edit",
        json!({"file_path": ".", "old_string": "a", "new_string": "b"}),
    );
    assert!(dir.output().contains("is a directory"), "{dir:?}");
}

#[test]
fn mode_is_kept_and_an_event_names_the_resolved_path() {
    use std::os::unix::fs::PermissionsExt;
    let room = Room::new();
    let file = room.write("run.sh", "#!/bin/sh\necho hi\n");
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o755)).unwrap();
    let events = room.path("events.jsonl");
    let run = room.run(
        &["--events", events.to_str().unwrap(), "edit"],
        Some(&json!({"file_path": "run.sh", "old_string": "hi", "new_string": "bye"}).to_string()),
    );
    assert_eq!(run.code, 0, "{run:?}");
    let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o755);
    let modified: Vec<Value> = read_events(&events)
        .into_iter()
        .filter(|e| e["type"] == "file.modified")
        .collect();
    assert_eq!(modified.len(), 1);
    assert_eq!(modified[0]["properties"]["operation"], "edit");
    assert_eq!(
        modified[0]["properties"]["path"],
        file.to_string_lossy().as_ref()
    );
    assert_eq!(modified[0]["properties"]["sessionID"], "default");
}

#[test]
fn the_formatter_runs_after_an_edit_and_its_failure_is_only_reported() {
    let room = Room::new();
    room.write_user(
        "config.json",
        json!({"formatters": {
            "*.up": ["sh", "-c", "tr a-z A-Z < \"$0\" > \"$0.t\" && mv \"$0.t\" \"$0\"", "{file}"],
            "*.bad": ["sh", "-c", "echo cannot parse >&2; exit 2"]
        }})
        .to_string(),
    );
    room.write("a.up", "one two\n");
    let run = room.call(
        "edit",
        json!({"file_path": "a.up", "old_string": "two", "new_string": "three"}),
    );
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.output().ends_with("\nFormatted with sh"),
        "{}",
        run.output()
    );
    assert_eq!(room.read("a.up"), "ONE THREE\n");
    room.write("b.bad", "x\n");
    let run = room.call(
        "edit",
        json!({"file_path": "b.bad", "old_string": "x", "new_string": "y"}),
    );
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.output()
            .ends_with("\nFormatter failed: sh: exit status 2: cannot parse"),
        "{}",
        run.output()
    );
    assert_eq!(room.read("b.bad"), "y\n");
    assert_eq!(run.json()["metadata"]["formatter"]["status"], "failed");
}

#[test]
fn concurrent_processes_lose_no_update_and_leave_nothing_beside_the_file() {
    const WORKERS: usize = 8;
    const EDITS: usize = 25;
    let mut room = Room::new();
    let runtime = private_runtime_dir(&mut room);
    let initial: String = (0..WORKERS).map(|w| format!("worker {w}: 0\n")).collect();
    room.write("counters.txt", &initial);
    std::thread::scope(|scope| {
        for w in 0..WORKERS {
            let room = &room;
            scope.spawn(move || {
                for k in 0..EDITS {
                    let run = room.call(
                        "edit",
                        json!({
                            "file_path": "counters.txt",
                            "old_string": format!("worker {w}: {k}\n"),
                            "new_string": format!("worker {w}: {}\n", k + 1),
                        }),
                    );
                    assert_eq!(run.code, 0, "worker {w}, edit {k}: {run:?}");
                }
            });
        }
    });
    let expected: String = (0..WORKERS)
        .map(|w| format!("worker {w}: {EDITS}\n"))
        .collect();
    assert_eq!(room.read("counters.txt"), expected);
    let files: Vec<String> = tree(&room.dir).into_iter().map(|(p, _)| p).collect();
    assert_eq!(files, vec!["counters.txt".to_string()]);
    // Every holder removed its lock file when it let go.
    let locks = std::fs::read_dir(runtime.join("tinytool/locks")).unwrap();
    assert_eq!(locks.count(), 0);
}

/// Gives the room's runs a private `XDG_RUNTIME_DIR` (mode 0700), where the lock files go.
fn private_runtime_dir(room: &mut Room) -> std::path::PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let runtime = room.home.join("run");
    std::fs::create_dir_all(&runtime).unwrap();
    std::fs::set_permissions(&runtime, std::fs::Permissions::from_mode(0o700)).unwrap();
    room.set_env("XDG_RUNTIME_DIR", runtime.to_string_lossy());
    runtime
}

#[test]
fn processes_with_overlapping_dirs_share_one_lock_per_file() {
    // Issue 18: half the workers run with --dir P, half with --dir P/sub, all appending
    // distinct lines to P/sub/log.txt; a lock keyed per project lost updates.
    const WORKERS: usize = 8;
    const EDITS: usize = 50;
    let mut room = Room::new();
    let runtime = private_runtime_dir(&mut room);
    room.write("sub/log.txt", "END\n");
    let (outer, inner) = (room.dir.clone(), room.dir.join("sub"));
    std::thread::scope(|scope| {
        for w in 0..WORKERS {
            let room = &room;
            let (dir, file) = if w % 2 == 0 {
                (&outer, "sub/log.txt")
            } else {
                (&inner, "log.txt")
            };
            scope.spawn(move || {
                for k in 0..EDITS {
                    let args = json!({
                        "file_path": file,
                        "old_string": "END\n",
                        "new_string": format!("worker {w} edit {k}\nEND\n"),
                    });
                    let dir = dir.to_string_lossy();
                    let run = room.run(&["--dir", &dir, "edit"], Some(&args.to_string()));
                    assert_eq!(run.code, 0, "worker {w}, edit {k}: {run:?}");
                }
            });
        }
    });
    let text = room.read("sub/log.txt");
    let mut lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.pop(), Some("END"));
    assert_eq!(lines.len(), WORKERS * EDITS, "lost updates");
    for w in 0..WORKERS {
        for k in 0..EDITS {
            assert!(
                lines.contains(&format!("worker {w} edit {k}").as_str()),
                "{w} {k}"
            );
        }
    }
    let locks = std::fs::read_dir(runtime.join("tinytool/locks")).unwrap();
    assert_eq!(locks.count(), 0);
}

#[test]
fn crlf_and_bom_survive_with_paths_redacted_in_outputs() {
    let room = Room::new();
    room.write("w.txt", b"\xef\xbb\xbfa\r\nb\r\nc".as_slice());
    let run = room.call(
        "edit",
        json!({"file_path": room.path("w.txt"), "old_string": "b\n", "new_string": "B1\nB2\n"}),
    );
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        std::fs::read(room.path("w.txt")).unwrap(),
        b"\xef\xbb\xbfa\r\nB1\r\nB2\r\nc"
    );
    let text = redact(&run.output(), &room.dir, "<dir>");
    assert_eq!(text, "Replaced in w.txt at line 2.");
}
