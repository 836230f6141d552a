//! `apply_patch`: Codex's own scenarios run in place, the fixture corpus
//! (`tests/fixtures/apply_patch/NNN_name/`), all-or-nothing, events and output shapes.
//!
//! A fixture folder holds `input/` (the tree before; may be missing = empty), `patch.txt`,
//! and either `expected/` (the exact tree after) or `error` (a substring the refusal must
//! contain; the tree must then be unchanged). An optional `output` file holds a substring the
//! successful output must contain. A new case is a new folder.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::edit::{cases, tree};
use crate::util::{Room, read_events};

/// Copies the tree at `from` (when it exists) into `to`.
fn copy_tree(from: &Path, to: &Path) {
    let Ok(entries) = std::fs::read_dir(from) else {
        return;
    };
    for entry in entries {
        let path = entry.unwrap().path();
        let dest = to.join(path.file_name().unwrap());
        if path.is_dir() {
            std::fs::create_dir_all(&dest).unwrap();
            copy_tree(&path, &dest);
        } else {
            std::fs::copy(&path, &dest).unwrap();
            // The shared scenario files may be read-only on disk; a checkout's are 0644,
            // and tinytool refuses to change a file without a write bit.
            std::fs::set_permissions(&dest, std::fs::Permissions::from_mode(0o644)).unwrap();
        }
    }
}

fn show(tree: &[(String, Option<Vec<u8>>)]) -> String {
    tree.iter()
        .map(|(p, c)| match c {
            None => format!("{p}/"),
            Some(bytes) => format!("{p}: {:?}", String::from_utf8_lossy(bytes)),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Runs one scenario folder; `expected` is the folder holding the tree to compare with.
fn run_tree_case(case: &Path, expected: &Path) -> Result<Value, String> {
    let room = Room::new();
    copy_tree(&case.join("input"), &room.dir);
    let patch = std::fs::read_to_string(case.join("patch.txt")).unwrap();
    let run = room.call("apply_patch", json!({ "patch": patch }));
    let got = tree(&room.dir);
    let want = tree(expected);
    if got != want {
        return Err(format!(
            "tree differs\n--- got\n{}\n--- expected\n{}\n--- output\n{}",
            show(&got),
            show(&want),
            run.stdout
        ));
    }
    Ok(run.json())
}

fn codex_scenarios() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/peer-tests/codex-apply-patch/scenarios");
    dir.is_dir().then_some(dir)
}

#[test]
fn codex_scenarios_pass_in_place() {
    let Some(dir) = codex_scenarios() else {
        crate::util::skip(
            "the Codex apply-patch scenarios are not at \
             ../shared/peer-tests/codex-apply-patch/scenarios",
        );
        return;
    };
    let mut scenarios: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    scenarios.sort();
    assert!(scenarios.len() >= 22, "{} scenarios", scenarios.len());
    let mut failures = Vec::new();
    for scenario in &scenarios {
        let name = scenario.file_name().unwrap().to_string_lossy().into_owned();
        // tinytool is all-or-nothing: where Codex keeps a partial result, the tree stays
        // as it was.
        let expected = if name.starts_with("015_") {
            scenario.join("input")
        } else {
            scenario.join("expected")
        };
        if let Err(e) = run_tree_case(scenario, &expected) {
            failures.push(format!("{name}: {e}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn fixture_corpus() {
    let cases = cases("apply_patch");
    assert!(cases.len() >= 30, "the corpus shrank: {}", cases.len());
    let mut failures = Vec::new();
    for case in &cases {
        let name = case.file_name().unwrap().to_string_lossy().into_owned();
        let outcome = if case.join("expected").is_dir() {
            run_tree_case(case, &case.join("expected")).and_then(|result| {
                if result["is_error"] != false {
                    return Err(format!("refused: {}", result["output"]));
                }
                match std::fs::read_to_string(case.join("output")) {
                    Ok(wanted)
                        if !result["output"]
                            .as_str()
                            .unwrap_or_default()
                            .contains(wanted.trim_end()) =>
                    {
                        Err(format!("output lacks {wanted:?}: {}", result["output"]))
                    }
                    _ => Ok(()),
                }
            })
        } else {
            let wanted = std::fs::read_to_string(case.join("error"))
                .unwrap_or_else(|_| panic!("{name}: neither expected/ nor error"));
            run_tree_case(case, &case.join("input")).and_then(|result| {
                let output = result["output"].as_str().unwrap_or_default();
                if result["is_error"] != true {
                    Err(format!("applied, expected an error: {output}"))
                } else if !output.contains(wanted.trim_end()) {
                    Err(format!("error lacks {:?}:\n{output}", wanted.trim_end()))
                } else {
                    Ok(())
                }
            })
        };
        if let Err(e) = outcome {
            failures.push(format!("{name}: {e}"));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} apply_patch fixtures failed:\n\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n\n")
    );
}

#[test]
fn a_second_hunk_that_fails_leaves_both_files_untouched() {
    let room = Room::new();
    room.write("a.txt", "alpha\nbeta\n");
    room.write("b.txt", "one\ntwo\nthree\n");
    let patch = "*** Begin Patch\n*** Update File: a.txt\n@@\n-alpha\n+ALPHA\n\
                 *** Update File: b.txt\n@@\n one\n-two\n+TWO\n@@\n-four\n+FOUR\n*** End Patch\n";
    let run = room.call("apply_patch", json!({ "patch": patch }));
    assert_eq!(run.code, 1, "{run:?}");
    assert_eq!(room.read("a.txt"), "alpha\nbeta\n");
    assert_eq!(room.read("b.txt"), "one\ntwo\nthree\n");
    crate::snapshot_text!("apply_patch_hunk_fails", run.output());
}

#[test]
fn output_shape_and_events() {
    let room = Room::new();
    room.write("keep.txt", "a\nb\n");
    room.write("old/name.txt", "from\n");
    room.write("gone.txt", "bye\n");
    let events = room.path("events.jsonl");
    let patch = "*** Begin Patch\n*** Add File: docs/new.md\n+# New\n*** Update File: keep.txt\n@@\n a\n-b\n+B\n\
                 *** Delete File: gone.txt\n*** Update File: old/name.txt\n*** Move to: new/name.txt\n@@\n-from\n+to\n\
                 *** End Patch\n";
    let run = room.run(
        &["--events", events.to_str().unwrap(), "apply_patch"],
        Some(&json!({ "patch": patch }).to_string()),
    );
    assert_eq!(run.code, 0, "{run:?}");
    crate::snapshot!("apply_patch_success", run.json());
    let ops: Vec<(String, String)> = read_events(&events)
        .into_iter()
        .filter(|e| e["type"] == "file.modified")
        .map(|e| {
            let path = e["properties"]["path"].as_str().unwrap().to_string();
            let rel = path
                .strip_prefix(&format!("{}/", room.dir.display()))
                .unwrap_or(&path)
                .to_string();
            (
                rel,
                e["properties"]["operation"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let pair = |p: &str, o: &str| (p.to_string(), o.to_string());
    assert_eq!(
        ops,
        vec![
            pair("docs/new.md", "create"),
            pair("keep.txt", "edit"),
            pair("gone.txt", "delete"),
            pair("old/name.txt", "delete"),
            pair("new/name.txt", "create"),
        ]
    );
    // The same patch again is already applied.
    let again = room.call("apply_patch", json!({ "patch": patch }));
    assert_eq!(again.code, 0, "{again:?}");
    assert!(
        again.output().contains("already applied"),
        "{}",
        again.output()
    );
}

#[test]
fn a_formatter_runs_on_each_written_file() {
    let room = Room::new();
    room.write_user(
        "config.json",
        json!({"formatters": {"*.txt": ["sh", "-c", "printf formatted > \"$0\"", "{file}"]}})
            .to_string(),
    );
    let patch = "*** Begin Patch\n*** Add File: a.txt\n+x\n*** Add File: b.md\n+y\n*** End Patch\n";
    let run = room.call("apply_patch", json!({ "patch": patch }));
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        run.output(),
        "Created a.txt\nFormatted with sh\nCreated b.md"
    );
    assert_eq!(room.read("a.txt"), "formatted");
    assert_eq!(room.read("b.md"), "y\n");
}

#[test]
fn parse_errors_change_nothing() {
    let room = Room::new();
    room.write("f.txt", "x\n");
    let run = room.call(
        "apply_patch",
        json!({"patch": "*** Begin Patch\n*** Update File: f.txt\n@@\n-x\n*** Bogus\n+y\n"}),
    );
    assert_eq!(run.code, 1);
    crate::snapshot_text!("apply_patch_parse_error", run.output());
    assert_eq!(room.read("f.txt"), "x\n");
}
