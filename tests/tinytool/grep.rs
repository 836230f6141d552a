//! `grep`: output format, newest-first order, skip directories, the 1 MB and binary skips,
//! `include` with braces, the cap and the trailing summary line, on the shared fixture tree.

use serde_json::json;

use crate::search_tree::{project, put};
use crate::util::Room;

const SUMMARY: &str = "[skipped: 1 file over 1 MB, 1 binary, 0 secret-looking, \
    6 skip directories pruned (node_modules/: installed packages, vendor/: vendored dependencies, src/node_modules/: installed packages, and 3 more); not cut]";

#[test]
fn matches_newest_first_with_honest_summary() {
    let room = project();
    let run = room.call("grep", json!({"pattern": "needle"}));
    assert_eq!(run.code, 0, "{run:?}");
    crate::snapshot!("grep_project", run.json());
    let out = run.output();
    assert_eq!(
        out,
        format!(
            ".hidden.txt:1:TOKEN=needle\n\
             src/main.rs:2:    let needle = 1;\n\
             docs/guide.md:1:find the needle in the docs\n\
             src/lib.rs:1:pub fn needle() {{}}\n\
             src/lib.rs:2:// a needle again\n\
             Cargo.toml:1:name = \"needle\"\n\
             src/deep/er/mod.rs:1:needle, deep down\n\
             {SUMMARY}\n"
        )
    );
}

#[test]
fn include_filters_by_base_name_or_relative_path_with_braces() {
    let room = project();
    let run = room.call(
        "grep",
        json!({"pattern": "needle", "include": "*.{rs,toml}"}),
    );
    let out = run.output();
    let files: Vec<&str> = out
        .lines()
        .filter(|l| !l.starts_with('['))
        .map(|l| l.split(':').next().unwrap())
        .collect();
    assert_eq!(
        files,
        [
            "src/main.rs",
            "src/lib.rs",
            "src/lib.rs",
            "Cargo.toml",
            "src/deep/er/mod.rs"
        ]
    );
    // The skipped files did not pass the filter, so only the pruned directories remain.
    assert!(out.ends_with(
        "[skipped: 0 files over 1 MB, 0 binary, 0 secret-looking, 6 skip directories pruned (node_modules/: installed packages, vendor/: vendored dependencies, src/node_modules/: installed packages, and 3 more); not cut]\n"
    ), "{out}");
    let run = room.call(
        "grep",
        json!({"pattern": "needle", "include": "src/**/*.rs"}),
    );
    let out = run.output();
    assert!(out.starts_with("src/main.rs:2:"), "{out}");
    assert!(out.contains("src/deep/er/mod.rs:1:"));
    assert!(!out.contains("Cargo.toml"));
    let run = room.call("grep", json!({"pattern": "needle", "include": "*.{rs"}));
    assert_eq!(run.code, 1);
    assert!(
        run.output().starts_with("Invalid include pattern: "),
        "{}",
        run.output()
    );
}

#[test]
fn the_cap_cuts_newest_first_and_says_so() {
    let room = project();
    let run = room.call("grep", json!({"pattern": "needle", "max_count": 3}));
    let result = run.json();
    assert_eq!(
        result["output"],
        ".hidden.txt:1:TOKEN=needle\n\
         src/main.rs:2:    let needle = 1;\n\
         docs/guide.md:1:find the needle in the docs\n\
         [skipped: 1 file over 1 MB, 1 binary, 0 secret-looking, 6 skip directories pruned (node_modules/: installed packages, vendor/: vendored dependencies, src/node_modules/: installed packages, and 3 more); \
         cut at 3 matches, more exist (raise max_count or narrow the search)]\n"
    );
    assert_eq!(result["metadata"]["cut"], true);
    assert_eq!(result["metadata"]["matches"], 3);
    // Exactly as many matches as the cap: nothing is cut.
    let run = room.call("grep", json!({"pattern": "needle", "max_count": 7}));
    assert_eq!(run.json()["metadata"]["cut"], false);
    assert!(run.output().ends_with(&format!("{SUMMARY}\n")));
    // 0 means the default (500), as in the reference.
    let run = room.call("grep", json!({"pattern": "needle", "max_count": 0}));
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(run.json()["metadata"]["cut"], false);
}

#[test]
fn nothing_found_says_so_with_the_counts() {
    let room = project();
    let run = room.call("grep", json!({"pattern": "haystack"}));
    assert_eq!(run.code, 0);
    assert_eq!(
        run.output(),
        "No matches found.\n[skipped: 1 file over 1 MB, 1 binary, 0 secret-looking, \
         6 skip directories pruned (node_modules/: installed packages, vendor/: vendored dependencies, src/node_modules/: installed packages, and 3 more); not cut]\n"
    );
    let clean = Room::new();
    clean.write("a.txt", "abc\n");
    let run = clean.call("grep", json!({"pattern": "xyz"}));
    assert_eq!(
        run.output(),
        "No matches found.\n[skipped: 0 files over 1 MB, 0 binary, 0 secret-looking, \
         0 skip directories pruned; not cut]\n"
    );
    let run = clean.call("grep", json!({"pattern": "abc"}));
    assert_eq!(
        run.output(),
        "a.txt:1:abc\n",
        "nothing skipped: no summary line"
    );
}

#[test]
fn a_file_path_is_searched_alone_and_shown_relative_to_dir() {
    let room = project();
    let run = room.call("grep", json!({"pattern": "needle", "path": "src/lib.rs"}));
    assert_eq!(
        run.output(),
        "src/lib.rs:1:pub fn needle() {}\nsrc/lib.rs:2:// a needle again\n"
    );
    let run = room.call("grep", json!({"pattern": "needle", "path": "src"}));
    let out = run.output();
    assert!(out.starts_with("src/main.rs:2:"), "{out}");
    assert!(
        out.ends_with(
            "1 skip directory pruned (src/node_modules/: installed packages); not cut]\n"
        ),
        "{out}"
    );
    // An explicit path inside a skip directory is searched.
    let run = room.call("grep", json!({"pattern": "needle", "path": "node_modules"}));
    assert_eq!(run.output(), "node_modules/inner/needle.rs:1:needle\n");
    let run = room.call(
        "grep",
        json!({"pattern": "needle", "path": room.path("src/main.rs").to_str().unwrap()}),
    );
    assert_eq!(run.output(), "src/main.rs:2:    let needle = 1;\n");
}

#[test]
fn errors_are_clear() {
    let room = project();
    let run = room.call("grep", json!({"pattern": "needle(("}));
    assert_eq!(run.code, 1);
    let out = run.output();
    assert!(out.starts_with("Invalid regex pattern: "), "{out}");
    assert!(
        out.contains("needle((") && out.contains("unclosed group"),
        "{out}"
    );
    let run = room.call("grep", json!({"pattern": "x", "path": "missing"}));
    assert_eq!(
        (run.code, run.output()),
        (1, "Path not found: missing".to_string())
    );
}

#[test]
fn lines_are_cut_and_bytes_decoded_lossily() {
    let room = Room::new();
    put(
        &room,
        "wide.txt",
        format!("{}needle\n", "é".repeat(2_500)),
        20,
    );
    put(&room, "latin1.txt", b"caf\xe9 needle\n", 10);
    let run = room.call("grep", json!({"pattern": "needle"}));
    let result = run.json();
    let out = result["output"].as_str().unwrap();
    let mut lines = out.lines();
    // The match lies past the first 2,000 characters: a window around it, with its column.
    assert_eq!(
        lines.next().unwrap(),
        format!("wide.txt:1:[col 5001] …{}needle", "é".repeat(100))
    );
    assert_eq!(lines.next().unwrap(), "latin1.txt:1:caf\u{fffd} needle");
    assert_eq!(result["metadata"]["lossy"], true);
}

#[test]
fn symlinks_are_not_followed() {
    let room = Room::new();
    put(&room, "real/a.txt", "needle\n", 10);
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.txt"), "needle\n").unwrap();
    std::os::unix::fs::symlink(outside.path(), room.path("linked-dir")).unwrap();
    std::os::unix::fs::symlink(room.path("real/a.txt"), room.path("linked-file.txt")).unwrap();
    let run = room.call("grep", json!({"pattern": "needle"}));
    assert_eq!(run.output(), "real/a.txt:1:needle\n");
}

#[test]
fn many_files_keep_a_stable_order_and_the_summary_survives_the_preview() {
    let room = Room::new();
    for i in 0..300u64 {
        // Equal times for pairs: ties are broken by path.
        put(
            &room,
            &format!("d{}/f{i:03}.txt", i % 7),
            "one needle\ntwo needle\n",
            i / 2,
        );
    }
    put(&room, ".git/x", "needle\n", 1);
    let run = room.call("grep", json!({"pattern": "needle", "max_count": 100}));
    let result = run.json();
    // 100 matches are within the preview's maxima: all of them are shown.
    assert_eq!(result["truncated"], false);
    assert_eq!(result["output"].as_str().unwrap().lines().count(), 101);
    let out = result["output"].as_str().unwrap();
    assert!(
        out.starts_with("d4/f298.txt:1:one needle\nd4/f298.txt:2:two needle\nd5/f299.txt:1:"),
        "{out}"
    );
    assert!(
        out.ends_with(
            "[skipped: 0 files over 1 MB, 0 binary, 0 secret-looking, 1 skip directory pruned; \
         cut at 100 matches, more exist (raise max_count or narrow the search)]\n"
        ),
        "{out}"
    );
    let again = room.call("grep", json!({"pattern": "needle", "max_count": 100}));
    assert_eq!(again.stdout, run.stdout);
}

#[test]
fn env_files_are_skipped_unless_the_policy_allows_reading_them() {
    let room = Room::new();
    put(&room, ".env", "TOKEN=needle\n", 30);
    put(&room, "config/.env.local", "needle\n", 20);
    put(&room, "app.txt", "needle\n", 10);
    let run = room.call("grep", json!({"pattern": "needle"}));
    let result = run.json();
    assert_eq!(
        result["output"],
        "app.txt:1:needle\n[skipped: 0 files over 1 MB, 0 binary, 2 secret-looking, \
         0 skip directories pruned; not cut]\n"
    );
    assert_eq!(result["metadata"]["skipped_secret"], 2);
    // A rule that allows reading them lets grep search them.
    std::fs::write(
        room.path("allow.json"),
        r#"{"rules": [{"permission": "read", "pattern": ".env*", "action": "allow"},
                      {"permission": "read", "pattern": "*/.env*", "action": "allow"}]}"#,
    )
    .unwrap();
    let run = room.run(
        &["--policy", "allow.json", "grep", "--pattern", "needle"],
        None,
    );
    assert_eq!(
        run.output(),
        ".env:1:TOKEN=needle\nconfig/.env.local:1:needle\napp.txt:1:needle\n"
    );
}

#[test]
fn work_files_of_a_write_in_progress_are_not_searched() {
    let room = Room::new();
    room.write("k.txt", "SECRET\n");
    room.write(".k.pem.4242-0.tinytool.old", "SECRET\n");
    room.write(".k.pem.Ab12Cd.tinytool.tmp", "SECRET\n");
    let run = room.call("grep", json!({"pattern": "SECRET"}));
    assert_eq!(run.output(), "k.txt:1:SECRET\n", "{run:?}");
    let listed = room.call("glob", json!({"pattern": "*"}));
    assert_eq!(listed.output(), "k.txt\n", "{listed:?}");
}

#[test]
fn a_word_deep_in_a_long_minified_line_is_shown_with_its_column() {
    let room = Room::new();
    let mut line = "var a=1;".repeat(170_616 / 8);
    line.truncate(170_615);
    line.push_str("DeclareFunction(x)");
    while line.len() < 520_000 {
        line.push_str("function q(){return 1};");
    }
    room.write("app.min.js", &line);
    let run = room.call("grep", json!({"pattern": "DeclareFunction"}));
    let out = run.output();
    assert!(
        out.contains("app.min.js:1:[col 170616] …"),
        "{}",
        &out[..200.min(out.len())]
    );
    assert!(
        out.contains("DeclareFunction(x)"),
        "{}",
        &out[..200.min(out.len())]
    );
}
