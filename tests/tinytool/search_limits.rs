//! grep and glob never crash on their input: a pattern or glob of any
//! size is a clear error with exit 1 from the CLI, and an `exec --jsonl` stream goes on.

use serde_json::json;

use crate::util::Room;

fn room() -> Room {
    let room = Room::new();
    room.write("a.txt", "needle\n");
    room
}

#[test]
fn a_huge_include_is_a_clear_error() {
    let room = room();
    for size in [330_000, 1024 * 1024] {
        let run = room.call(
            "grep",
            json!({"pattern": "needle", "include": "*".repeat(size)}),
        );
        assert_eq!(run.code, 1, "{run:?}");
        assert_eq!(run.json()["is_error"], true);
        assert_eq!(
            run.output(),
            format!(
                "Invalid include pattern: the glob is {size} bytes long; at most 16384 are allowed"
            )
        );
    }
    // Short enough, yet heavy: still an answer, never a panic.
    let run = room.call(
        "grep",
        json!({"pattern": "needle", "include": "*".repeat(16 * 1024)}),
    );
    assert!(run.code == 0 || run.code == 1, "{run:?}");
    assert!(run.json()["output"].is_string());
}

#[test]
fn a_huge_pattern_or_regex_is_a_clear_error() {
    let room = room();
    let run = room.call("grep", json!({"pattern": "a".repeat(1024 * 1024)}));
    assert_eq!(run.code, 1, "{run:?}");
    assert_eq!(
        run.output(),
        "Invalid regex pattern: the pattern is 1048576 bytes long; at most 65536 are allowed"
    );
    let run = room.call("grep", json!({"pattern": "a{1000}{1000}"}));
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.output().starts_with("Invalid regex pattern: ") && run.output().contains("size limit"),
        "{}",
        run.output()
    );
}

#[test]
fn a_huge_glob_pattern_is_a_clear_error() {
    let room = room();
    let run = room.call("glob", json!({"pattern": "*".repeat(330_000)}));
    assert_eq!(run.code, 1, "{run:?}");
    assert_eq!(
        run.output(),
        "Invalid glob pattern: the glob is 330000 bytes long; at most 16384 are allowed"
    );
}

#[test]
fn an_exec_stream_goes_on_after_a_huge_include() {
    let room = room();
    let mut input = String::new();
    for (id, include) in [(1, "*".repeat(330_000)), (2, "*.txt".to_string())] {
        let call = json!({"id": id, "name": "grep",
            "arguments": {"pattern": "needle", "include": include}});
        input.push_str(&call.to_string());
        input.push('\n');
    }
    let run = room.run(&["exec", "--jsonl"], Some(&input));
    let lines = run.lines();
    assert_eq!(lines.len(), 2, "{run:?}");
    assert_eq!(lines[0]["is_error"], true);
    assert!(
        lines[0]["output"]
            .as_str()
            .unwrap()
            .starts_with("Invalid include pattern: the glob is 330000 bytes")
    );
    assert_eq!(lines[1]["output"], "a.txt:1:needle\n");
}
