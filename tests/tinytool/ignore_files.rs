//! grep and glob honour ignore files as ripgrep does, and say what they left out;
//! a file named as grep's `path` is searched whatever its size.

use std::process::Command;

use serde_json::json;

use crate::util::Room;

/// A git project after a build: `target/` and `dist/` ignored by `.gitignore`, each
/// holding a match, next to the sources.
fn built_project() -> Room {
    let room = Room::new();
    let mut git = Command::new("git");
    git.args(["init", "-q", "."]);
    room.enter(&mut git);
    assert!(git.status().unwrap().success(), "git init");
    room.write(".gitignore", "target/\ndist/\n*.log\n");
    room.write("src/main.rs", "fn main() { needle(); }\n");
    room.write("target/debug/build/out.rs", "fn needle() {}\n");
    room.write("target/release/gen.rs", "needle\n");
    room.write("dist/bundle.js", "needle();\n");
    room.write("run.log", "needle in a log\n");
    room
}

fn hits(out: &str) -> Vec<&str> {
    out.lines().filter(|l| !l.starts_with('[')).collect()
}

#[test]
fn grep_leaves_ignored_paths_out_names_them_and_can_include_them() {
    let room = built_project();
    let run = room.call("grep", json!({"pattern": "needle"}));
    assert_eq!(run.code, 0, "{run:?}");
    let out = run.output();
    assert_eq!(hits(&out), ["src/main.rs:1:fn main() { needle(); }"]);
    assert!(!out.contains("target/debug"), "{out}");
    assert_eq!(
        out.lines().last().unwrap(),
        "[skipped: 0 files over 1 MB, 0 binary, 0 secret-looking, 1 skip directory pruned, \
         3 ignored (dist/, target/, run.log; include_ignored: true searches them); not cut]"
    );
    assert_eq!(run.json()["metadata"]["skipped_ignored"], 3);

    let run = room.call(
        "grep",
        json!({"pattern": "needle", "include_ignored": true}),
    );
    let out = run.output();
    let mut found = hits(&out);
    found.sort_unstable();
    assert_eq!(
        found,
        [
            "dist/bundle.js:1:needle();",
            "run.log:1:needle in a log",
            "src/main.rs:1:fn main() { needle(); }",
            "target/debug/build/out.rs:1:fn needle() {}",
            "target/release/gen.rs:1:needle",
        ]
    );
    assert!(!out.contains("ignored"), "{out}");
    assert_eq!(run.json()["metadata"]["skipped_ignored"], 0);

    // The CLI flag says the same.
    let run = room.run(&["grep", "--pattern", "needle", "--include-ignored"], None);
    assert!(
        run.output().contains("target/release/gen.rs:1:needle"),
        "{run:?}"
    );
}

#[test]
fn grep_counts_only_ignored_files_its_include_lets_in() {
    let room = built_project();
    let run = room.call("grep", json!({"pattern": "needle", "include": "*.rs"}));
    let out = run.output();
    assert_eq!(hits(&out), ["src/main.rs:1:fn main() { needle(); }"]);
    // run.log does not match *.rs; the directories count, as their contents are unseen.
    assert!(
        out.ends_with(
            "2 ignored (dist/, target/; include_ignored: true searches them); not cut]\n"
        ),
        "{out}"
    );
}

#[test]
fn an_explicit_path_inside_an_ignored_directory_is_searched() {
    let room = built_project();
    let run = room.call("grep", json!({"pattern": "needle", "path": "target"}));
    let out = run.output();
    let mut found = hits(&out);
    found.sort_unstable();
    assert_eq!(
        found,
        [
            "target/debug/build/out.rs:1:fn needle() {}",
            "target/release/gen.rs:1:needle"
        ]
    );
    let run = room.call("glob", json!({"pattern": "target/**/*.rs"}));
    assert_eq!(hits(&run.output()).len(), 2, "{run:?}");
}

#[test]
fn glob_leaves_ignored_paths_out_names_them_and_can_include_them() {
    let room = built_project();
    let run = room.call("glob", json!({"pattern": "**/*.rs"}));
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        run.output(),
        "src/main.rs\n[skipped: 1 skip directory pruned, 2 ignored (dist/, target/; \
         include_ignored: true searches them); not cut]\n"
    );
    let run = room.call(
        "glob",
        json!({"pattern": "**/*.rs", "include_ignored": true}),
    );
    let out = run.output();
    let mut found = hits(&out);
    found.sort_unstable();
    assert_eq!(
        found,
        [
            "src/main.rs",
            "target/debug/build/out.rs",
            "target/release/gen.rs"
        ]
    );
    // Simple mode: a top-level `*` would have listed the ignored directory and file.
    let run = room.call("glob", json!({"pattern": "*"}));
    let out = run.output();
    let mut found = hits(&out);
    found.sort_unstable();
    assert_eq!(found, [".gitignore", "src"], "{out}");
    assert!(
        out.contains("3 ignored (dist/, target/, run.log; include_ignored: true searches them)"),
        "{out}"
    );
}

#[test]
fn ignore_files_outside_git_and_the_git_only_ones() {
    let room = Room::new();
    // No repository: .gitignore does not count (as in ripgrep), .ignore does.
    room.write(".gitignore", "gen/\n");
    room.write(".ignore", "cache/\n");
    room.write("gen/a.txt", "needle\n");
    room.write("cache/b.txt", "needle\n");
    let run = room.call("grep", json!({"pattern": "needle"}));
    let out = run.output();
    assert_eq!(hits(&out), ["gen/a.txt:1:needle"], "{out}");
    assert!(out.contains("1 ignored (cache/;"), "{out}");
}

#[test]
fn info_exclude_and_the_global_excludes_count_in_a_repository() {
    let room = Room::new();
    room.write(".git/info/exclude", "local-notes.txt\n");
    // Git's global excludes: $XDG_CONFIG_HOME/git/ignore when core.excludesFile is unset.
    std::fs::create_dir_all(room.path("../home/.config/git")).unwrap();
    std::fs::write(room.path("../home/.config/git/ignore"), "*.swp\n").unwrap();
    room.write("local-notes.txt", "needle\n");
    room.write("a.txt.swp", "needle\n");
    room.write("kept/.gitignore", "!*.swp\n");
    room.write("kept/b.txt.swp", "needle\n");
    room.write("a.txt", "needle\n");
    let run = room.call("grep", json!({"pattern": "needle"}));
    let out = run.output();
    let mut found = hits(&out);
    found.sort_unstable();
    assert_eq!(
        found,
        ["a.txt:1:needle", "kept/b.txt.swp:1:needle"],
        "{out}"
    );
    assert!(
        out.contains("2 ignored (a.txt.swp, local-notes.txt;"),
        "{out}"
    );
}

#[test]
fn at_most_three_ignored_entries_are_named() {
    let room = Room::new();
    room.write(".ignore", "*.gen\n");
    for name in ["a", "b", "c", "d", "e"] {
        room.write(&format!("{name}.gen"), "needle\n");
    }
    room.write("keep.txt", "needle\n");
    let run = room.call("glob", json!({"pattern": "**/*"}));
    assert!(
        run.output().ends_with(
            "[skipped: 0 skip directories pruned, 5 ignored (a.gen, b.gen, c.gen, and 2 more; \
             include_ignored: true searches them); not cut]\n"
        ),
        "{run:?}"
    );
}

#[test]
fn a_big_file_named_as_path_is_searched_and_walks_still_skip_it() {
    let room = Room::new();
    let mut big = String::new();
    let mut n = 0;
    while big.len() < 3 * 1024 * 1024 {
        n += 1;
        big.push_str(&format!("line {n} padding padding padding padding\n"));
    }
    big.push_str("needle at the end\n");
    room.write("big.txt", &big);
    let run = room.call("grep", json!({"pattern": "needle", "path": "big.txt"}));
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        run.output(),
        format!("big.txt:{}:needle at the end\n", n + 1)
    );
    let run = room.call("grep", json!({"pattern": "needle"}));
    assert!(
        run.output().contains("[skipped: 1 file over 1 MB,"),
        "{}",
        run.output()
    );
    // A NUL past the cap still makes it binary, as for a small file.
    big.push_str("needle again\n\0\n");
    room.write("big.txt", &big);
    let run = room.call(
        "grep",
        json!({"pattern": "needle", "path": "big.txt", "max_count": 1}),
    );
    assert!(
        run.output()
            .starts_with("No matches found.\n[skipped: 0 files over 1 MB, 1 binary"),
        "{}",
        run.output()
    );
}

#[test]
fn five_hundred_short_matches_are_all_shown() {
    let room = Room::new();
    let text: String = (1..=500).map(|i| format!("hit {i}\n")).collect();
    room.write("many.txt", text);
    let run = room.call("grep", json!({"pattern": "hit"}));
    assert_eq!(run.json()["truncated"], false, "{run:?}");
    let out = run.output();
    assert_eq!(out.lines().count(), 500, "{out}");
    assert_eq!(out.lines().last().unwrap(), "many.txt:500:hit 500");
    assert_eq!(run.json()["metadata"]["matches"], 500);
}
