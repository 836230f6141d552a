//! The model's usual slips with paths, answered with the path it meant: a file that is not
//! found (read, edit, apply_patch) and a refusal for a path outside the project that does
//! not exist either. The room's project folder is `work/`, laid out like a Python package.

use serde_json::json;

use crate::util::Room;

/// A project shaped like `click`: `src/click/globals.py` and a few more.
fn package() -> Room {
    let room = Room::new();
    room.write("src/click/globals.py", "x = 1\n");
    room.write("src/click/core.py", "y = 2\n");
    room.write("tests/test_core.py", "\n");
    room
}

#[test]
fn a_file_not_found_names_the_file_meant() {
    let room = package();
    let outside_form = format!(
        "{}/src/click/globals.py",
        room.dir.parent().unwrap().join("elsewhere").display()
    );
    for slip in [
        "src\\click\\globals.py",
        // The project's own folder name in front.
        "work/src/click/globals.py",
        // A bare base name.
        "globals.py",
        // Another case.
        "Globals.py",
        // Windows' form of an absolute path of the same project elsewhere.
        "C:\\Users\\me\\work\\src\\click\\globals.py",
    ] {
        let run = room.call("read", json!({"file_path": slip}));
        assert_eq!(run.code, 1, "{slip}: {run:?}");
        assert_eq!(
            run.output(),
            format!("File not found: {slip}\nDid you mean: src/click/globals.py?"),
            "{slip}"
        );
    }
    // An absolute path whose tail is in the project (outside it, but allowed there).
    room.write_user(
        "policy.json",
        r#"{"rules": [{"permission": "external_directory", "pattern": "*", "action": "allow"}]}"#,
    );
    let run = room.call("read", json!({"file_path": outside_form}));
    assert_eq!(
        run.output(),
        format!("File not found: {outside_form}\nDid you mean: src/click/globals.py?")
    );
}

#[test]
fn a_base_name_shared_by_many_files_names_five_and_counts_the_rest() {
    let room = package();
    for i in 0..7 {
        room.write(&format!("pkg{i}/__init__.py"), "");
    }
    room.write("node_modules/x/__init__.py", "");
    let run = room.call("read", json!({"file_path": "__init__.py"}));
    assert_eq!(
        run.output(),
        "File not found: __init__.py\nDid you mean one of: pkg0/__init__.py, pkg1/__init__.py, \
         pkg2/__init__.py, pkg3/__init__.py, pkg4/__init__.py? (2 more files are named \
         __init__.py: glob `**/__init__.py` lists them)"
    );
    // The folders of the path asked for come first.
    let run = room.call("read", json!({"file_path": "lib/pkg5/__init__.py"}));
    assert_eq!(
        run.output(),
        "File not found: lib/pkg5/__init__.py\nDid you mean: pkg5/__init__.py?"
    );
}

#[test]
fn a_file_the_policy_hides_is_never_suggested() {
    let room = package();
    // `.env` shares three characters with `.enx`, but the policy asks before reading it.
    room.write(".env", "TOKEN=1\n");
    let run = room.call("read", json!({"file_path": ".enx"}));
    assert_eq!(run.output(), "File not found: .enx", "{run:?}");
    room.write(".enc", "");
    let run = room.call("read", json!({"file_path": ".enx"}));
    assert_eq!(
        run.output(),
        "File not found: .enx\nDid you mean: .enc?",
        "{run:?}"
    );
    room.write_user(
        "policy.json",
        r#"{"rules": [{"permission": "read", "pattern": "src/*", "action": "deny"}]}"#,
    );
    let run = room.call("read", json!({"file_path": "globals.py"}));
    assert_eq!(run.output(), "File not found: globals.py", "{run:?}");
}

#[test]
fn edit_and_apply_patch_name_the_file_meant_too() {
    let room = package();
    let run = room.call(
        "edit",
        json!({"file_path": "work/src/click/core.py", "old_string": "y", "new_string": "z"}),
    );
    assert_eq!(
        run.output(),
        "File not found: work/src/click/core.py\nDid you mean: src/click/core.py?\n(To create a \
         file, use write, or edit with an empty old_string.)"
    );
    let patch =
        "*** Begin Patch\n*** Update File: click\\core.py\n@@\n-y = 2\n+y = 3\n*** End Patch";
    let run = room.call("apply_patch", json!({ "patch": patch }));
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.output().ends_with(
            "File to update not found: click\\core.py\nDid you mean: src/click/core.py?"
        ),
        "{run:?}"
    );
    let patch = "*** Begin Patch\n*** Delete File: core.py\n*** End Patch";
    let run = room.call("apply_patch", json!({ "patch": patch }));
    assert!(
        run.output()
            .ends_with("File to delete not found: core.py\nDid you mean: src/click/core.py?"),
        "{run:?}"
    );
    assert_eq!(room.read("src/click/core.py"), "y = 2\n");
}

#[test]
fn a_project_path_written_absolute_is_not_answered_with_a_rule() {
    let room = package();
    // A path that exists nowhere: `/src/...` at the root of the file system.
    let run = room.call("read", json!({"file_path": "/src/click/globals.py"}));
    assert_eq!(run.code, 3, "{run:?}");
    let result = run.json();
    assert_eq!(
        result["output"],
        format!(
            "Refused: /src/click/globals.py does not exist, and it is outside the working \
             directory ({}).\nDid you mean: src/click/globals.py?",
            room.dir.display()
        )
    );
    assert_eq!(result["metadata"]["missing"], true);
    assert_eq!(result["metadata"]["permission"], "external_directory");
    assert!(
        result["metadata"].get("suggested_rule").is_none(),
        "{result}"
    );
    assert!(!run.stdout.contains("\"action\":\"allow\""), "{result}");
    // Nothing in the project of that name: no suggestion, still no rule.
    let run = room.call("read", json!({"file_path": "/nowhere/at/all.txt"}));
    assert_eq!(run.code, 3);
    assert!(
        run.output()
            .starts_with("Refused: /nowhere/at/all.txt does not exist"),
        "{run:?}"
    );
    assert!(!run.output().contains("rule"), "{run:?}");
}

#[test]
fn a_file_to_create_outside_gets_a_rule_only_where_its_folder_exists() {
    let room = package();
    let outside = room.dir.parent().unwrap().to_path_buf();
    // The folder exists: creating a file there is a real intent, and the rule is named.
    let there = outside.join("notes.txt");
    let run = room.call("write", json!({"file_path": there, "content": "n\n"}));
    assert_eq!(run.code, 3, "{run:?}");
    assert_eq!(
        run.json()["metadata"]["suggested_rule"],
        json!({"permission": "external_directory", "pattern": there, "action": "allow"})
    );
    assert!(!there.exists());
    // Its folder does not exist: no rule, and the project's folder of that shape is named.
    let run = room.call(
        "write",
        json!({"file_path": "/src/click/new.py", "content": "n\n"}),
    );
    assert_eq!(run.code, 3, "{run:?}");
    assert_eq!(
        run.output(),
        format!(
            "Refused: /src/click/new.py cannot be created: its folder /src/click does not \
             exist, and it is outside the working directory ({}).\nDid you mean: \
             src/click/new.py?",
            room.dir.display()
        )
    );
    assert!(run.json()["metadata"].get("suggested_rule").is_none());
    let far = outside.join("no/such/folder/x.txt");
    let run = room.call("write", json!({"file_path": far, "content": "n\n"}));
    assert_eq!(run.code, 3);
    assert!(run.output().contains("its folder"), "{run:?}");
    assert!(run.json()["metadata"].get("suggested_rule").is_none());
    assert!(!outside.join("no").exists());
}

#[test]
fn refusals_of_paths_that_exist_or_that_a_rule_denies_are_unchanged() {
    let room = package();
    let outside = room.dir.parent().unwrap().join("outside.txt");
    std::fs::write(&outside, "o\n").unwrap();
    let run = room.call("read", json!({"file_path": outside}));
    assert_eq!(run.code, 3);
    assert!(
        run.output().contains("To allow it, add this rule"),
        "{run:?}"
    );
    // A folder the user walled off does not say what is (not) in it.
    room.write_user(
        "policy.json",
        json!({"rules": [{"permission": "external_directory", "pattern": "/private/*", "action": "deny"}]})
            .to_string(),
    );
    let run = room.call("read", json!({"file_path": "/private/nothing.txt"}));
    assert_eq!(run.code, 3);
    assert!(
        run.output().starts_with("Refused by the policy:"),
        "{run:?}"
    );
    assert!(run.json()["metadata"].get("missing").is_none());
}

#[test]
fn grep_and_glob_name_the_folder_meant() {
    let room = package();
    let run = room.call("glob", json!({"pattern": "*.py", "path": "work/src/click"}));
    assert_eq!(
        run.output(),
        "Path not found: work/src/click\nDid you mean: src/click?"
    );
    let run = room.call("grep", json!({"pattern": "x", "path": "work\\tests"}));
    assert_eq!(
        run.output(),
        "Path not found: work\\tests\nDid you mean: tests?"
    );
}
