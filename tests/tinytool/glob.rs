//! `glob`: both modes, braces and classes, newest-first order, skip directories, the
//! 1,000 cap and the trailing summary line, on the shared fixture tree.

use serde_json::json;

use crate::search_tree::{project, put};
use crate::util::Room;

fn lines(room: &Room, args: serde_json::Value) -> Vec<String> {
    let run = room.call("glob", args);
    assert_eq!(run.code, 0, "{run:?}");
    run.output().lines().map(str::to_string).collect()
}

#[test]
fn double_star_lists_files_newest_first_and_counts_pruned_directories() {
    let room = project();
    let run = room.call("glob", json!({"pattern": "**/*.rs"}));
    crate::snapshot!("glob_project", run.json());
    assert_eq!(
        run.output(),
        "src/main.rs\nsrc/lib.rs\nsrc/deep/er/mod.rs\n\
         [skipped: 6 skip directories pruned (node_modules/: installed packages, vendor/: vendored dependencies, src/node_modules/: installed packages, and 3 more); not cut]\n"
    );
}

#[test]
fn simple_mode_matches_one_level_per_component_and_directories_too() {
    let room = project();
    assert_eq!(
        lines(&room, json!({"pattern": "*.rs"})),
        [
            "No files matched the pattern.",
            "[skipped: 0 skip directories pruned; not cut]"
        ]
    );
    // A skip directory that the pattern would list is left out, and counted.
    assert_eq!(
        lines(&room, json!({"pattern": ".*"})),
        [
            ".hidden.txt",
            "[skipped: 3 skip directories pruned; not cut]"
        ]
    );
    // Directories were modified when the fixture was written: newer than every file.
    assert_eq!(
        lines(&room, json!({"pattern": "src/*"})),
        [
            "src/deep",
            "src/main.rs",
            "src/lib.rs",
            "[skipped: 1 skip directory pruned (src/node_modules/: installed packages); not cut]"
        ]
    );
    assert_eq!(
        lines(&room, json!({"pattern": "*/*/*/*.rs"})),
        [
            "src/deep/er/mod.rs",
            "[skipped: 6 skip directories pruned (node_modules/: installed packages, vendor/: vendored dependencies, src/node_modules/: installed packages, and 3 more); not cut]"
        ]
    );
    // Only the skip directory the pattern could have entered is counted: the ones at the
    // top level never match `s?c`.
    assert_eq!(
        lines(&room, json!({"pattern": "s?c/*/*.js"})),
        [
            "No files matched the pattern.",
            "[skipped: 1 skip directory pruned (src/node_modules/: installed packages); not cut]"
        ]
    );
    assert_eq!(
        lines(&room, json!({"pattern": "d*/*.md"})),
        ["docs/guide.md"]
    );
    assert_eq!(
        lines(&room, json!({"pattern": "*.rs", "path": "src"})),
        ["src/main.rs", "src/lib.rs"]
    );
}

#[test]
fn braces_classes_and_question_marks() {
    let room = project();
    assert_eq!(
        lines(&room, json!({"pattern": "*.{toml,md,txt}"})),
        [".hidden.txt", "notes.txt", "Cargo.toml"]
    );
    assert_eq!(
        lines(&room, json!({"pattern": "**/*.{toml,md}"})),
        [
            "docs/guide.md",
            "Cargo.toml",
            "[skipped: 6 skip directories pruned (node_modules/: installed packages, vendor/: vendored dependencies, src/node_modules/: installed packages, and 3 more); not cut]"
        ]
    );
    assert_eq!(
        lines(&room, json!({"pattern": "src/[lm]*.r?"})),
        ["src/main.rs", "src/lib.rs"]
    );
    assert_eq!(
        lines(&room, json!({"pattern": "src/[!l]*.rs"})),
        ["src/main.rs"]
    );
    // A literal leading path is walked even inside a skip directory.
    assert_eq!(
        lines(&room, json!({"pattern": "node_modules/**/*.rs"})),
        ["node_modules/inner/needle.rs"]
    );
    assert_eq!(
        lines(&room, json!({"pattern": "Cargo.toml"})),
        ["Cargo.toml"]
    );
}

#[test]
fn at_most_a_thousand_results_and_how_many_more() {
    let room = Room::new();
    for i in 0..1_005u64 {
        put(&room, &format!("d{}/f{i:04}.txt", i % 10), "", 10_000 + i);
    }
    let run = room.call("glob", json!({"pattern": "**/*.txt"}));
    let result = run.json();
    assert_eq!(result["metadata"]["count"], 1_000);
    assert_eq!(result["metadata"]["total"], 1_005);
    assert_eq!(result["metadata"]["cut"], true);
    // 1,001 lines are within the preview's maxima: every path is shown.
    assert_eq!(result["truncated"], false);
    let out = result["output"].as_str().unwrap();
    assert!(out.starts_with("d4/f1004.txt\nd3/f1003.txt\n"), "{out}");
    assert!(
        out.ends_with("d5/f0005.txt\n[skipped: 0 skip directories pruned; cut at 1000 files, 5 more matched]\n"),
        "{out}"
    );
}

#[test]
fn errors_are_clear() {
    let room = project();
    let run = room.call("glob", json!({"pattern": "src/{a,b"}));
    assert_eq!(run.code, 1);
    assert!(
        run.output().starts_with("Invalid glob pattern: "),
        "{}",
        run.output()
    );
    assert!(run.output().contains("{a,b"));
    let run = room.call("glob", json!({"pattern": "*.rs", "path": "src/main.rs"}));
    assert_eq!(run.code, 1);
    assert!(
        run.output().starts_with("src/main.rs is not a directory"),
        "{}",
        run.output()
    );
    let run = room.call("glob", json!({"pattern": "*.rs", "path": "nope"}));
    assert_eq!(
        (run.code, run.output()),
        (1, "Path not found: nope".to_string())
    );
    let run = room.call("glob", json!({"pattern": ""}));
    assert_eq!(run.code, 1);
}

#[test]
fn symlinks_are_listed_but_not_followed() {
    let room = Room::new();
    put(&room, "real/a.rs", "", 10);
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("hidden.rs"), "").unwrap();
    std::os::unix::fs::symlink(outside.path(), room.path("linked")).unwrap();
    assert_eq!(lines(&room, json!({"pattern": "**/*.rs"})), ["real/a.rs"]);
}
