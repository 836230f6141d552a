//! The folders that are not the project's own work (`skip_dirs`): a virtual environment
//! whatever its name, caches that say so, and build output beside its project file are
//! left out of glob, grep and checkpoints alike, and the summary line says what and why;
//! naming one as a search's path still searches it.

use serde_json::json;

use crate::util::Room;

/// A project with an un-ignored virtual environment (`env/`, known by its `pyvenv.cfg`),
/// a Rust `target/` beside `Cargo.toml`, a tagged cache, and a `dist/` that is source.
fn project() -> Room {
    let room = Room::new();
    room.write("app/main.py", "import needle\n");
    room.write("env/pyvenv.cfg", "home = /usr/bin\n");
    room.write("env/lib/python3/site-packages/pkg/mod.py", "needle = 1\n");
    room.write("Cargo.toml", "[package]\nname = \"needle\"\n");
    room.write("target/debug/build.py", "needle\n");
    room.write(
        "cache/CACHEDIR.TAG",
        "Signature: 8a477f597d28d172789f06886806bc55\n",
    );
    room.write("cache/blob.py", "needle\n");
    room.write("dist/bundle.py", "needle\n");
    room
}

#[test]
fn glob_leaves_out_what_is_not_the_project_and_says_why() {
    let room = project();
    let run = room.call("glob", json!({"pattern": "**/*.py"}));
    assert_eq!(run.code, 0, "{run:?}");
    let out = run.output();
    let listed: Vec<&str> = out.lines().filter(|l| !l.starts_with('[')).collect();
    let mut sorted = listed.clone();
    sorted.sort_unstable();
    assert_eq!(sorted, ["app/main.py", "dist/bundle.py"], "{out}");
    let summary = out.lines().last().unwrap();
    for said in [
        "env/: a Python virtual environment",
        "target/: Cargo's build output",
        "cache/: a cache (it holds CACHEDIR.TAG)",
    ] {
        assert!(summary.contains(said), "{said}: {summary}");
    }
    assert!(summary.contains("3 skip directories pruned"), "{summary}");
}

#[test]
fn grep_leaves_them_out_and_searches_one_named_as_its_path() {
    let room = project();
    let out = room.call("grep", json!({"pattern": "needle"})).output();
    assert!(!out.contains("env/lib"), "{out}");
    assert!(!out.contains("target/debug"), "{out}");
    assert!(out.contains("dist/bundle.py:1:needle"), "{out}");
    assert!(out.contains("env/: a Python virtual environment"), "{out}");
    let inside = room
        .call(
            "grep",
            json!({"pattern": "needle", "path": "env/lib/python3/site-packages"}),
        )
        .output();
    assert!(
        inside.contains("env/lib/python3/site-packages/pkg/mod.py:1:needle = 1"),
        "{inside}"
    );
}

#[test]
fn checkpoints_keep_no_copy_of_a_virtual_environment() {
    let room = project();
    let run = room.call(
        "bash",
        json!({"command": "echo changed > env/lib/python3/site-packages/pkg/mod.py; echo x > app/new.py"}),
    );
    assert_eq!(run.code, 0, "{run:?}");
    let checkpoint = &run.json()["metadata"]["checkpoint"];
    assert_eq!(checkpoint["files"], 1, "only app/new.py: {checkpoint}");
    let list = room.run(&["checkpoints"], None);
    assert!(list.stdout.contains("A app/new.py"), "{}", list.stdout);
    assert!(
        !list
            .stdout
            .lines()
            .any(|l| l.trim_start().starts_with("M env/")),
        "{}",
        list.stdout
    );
}

#[test]
fn a_config_adds_and_keeps_folders_and_a_projects_additions_spare_the_checkpoints() {
    let room = project();
    room.write("vendor/lib.py", "needle\n");
    room.write(
        ".tinytool/config.json",
        r#"{"not_project": {"add": ["dist"]}}"#,
    );
    room.write_user("config.json", r#"{"not_project": {"keep": ["vendor"]}}"#);
    let out = room.call("glob", json!({"pattern": "**/*.py"})).output();
    assert!(!out.contains("dist/bundle.py"), "{out}");
    assert!(
        out.contains("dist/: listed in the config's not_project.add"),
        "{out}"
    );
    assert!(out.contains("vendor/lib.py"), "kept: {out}");
    // A repository's own additions do not take folders out of the checkpoints.
    let run = room.call("bash", json!({"command": "echo changed > dist/bundle.py"}));
    assert_eq!(run.json()["metadata"]["checkpoint"]["files"], 1, "{run:?}");
}

#[test]
fn a_config_entry_that_is_no_folder_name_is_refused() {
    let room = project();
    room.write_user("config.json", r#"{"not_project": {"add": ["a/b"]}}"#);
    let run = room.call("glob", json!({"pattern": "*"}));
    assert_ne!(run.code, 0, "{run:?}");
    assert!(
        run.stderr
            .contains("not_project.add: \"a/b\" is not a folder name")
            || run
                .stdout
                .contains("not_project.add: \"a/b\" is not a folder name"),
        "{run:?}"
    );
}
