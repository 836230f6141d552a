//! A failing run's preview shows what went wrong: the output of real test runners and
//! compilers (fixtures under `tests/fixtures/failing-runs/`, each over the preview
//! thresholds, its failures in the middle a head-and-tail preview leaves out), printed by a
//! command that then exits 1. Every failure line named below must be in the preview, with
//! its line number in the spill file; the preview's shape is a golden file per runner.

use serde_json::json;

use crate::util::Room;

/// Per fixture, lines the preview must show.
const RUNS: &[(&str, &[&str])] = &[
    (
        "pytest",
        &[
            "FAILED tests/test_api.py::test_case_0900 - assert 900 == -1",
            "E       assert 900 == -1",
            "2 failed, 2498 passed in 3.21s",
        ],
    ),
    (
        "mocha",
        &["2518 passing (2s)", "42 failing", "    1) does thing 7"],
    ),
    (
        "node-test-tap",
        &[
            "not ok 301 - case 300",
            "not ok 701 - case 700",
            "not ok 1101 - case 1100",
            "# fail 3",
        ],
    ),
    (
        "go-test",
        &[
            "--- FAIL: TestMany/case_400 (0.00s)",
            "--- FAIL: TestMany/case_1200 (0.00s)",
            "x_test.go:7: case 400: got 400, want -1",
        ],
    ),
    (
        "unittest",
        &[
            "test_0500 (__main__.T.test_0500) ... FAIL",
            "FAIL: test_1300 (__main__.T.test_1300)",
            "AssertionError: 500 != -1",
            "FAILED (failures=2)",
        ],
    ),
    (
        "cargo-test",
        &[
            "test tests::case_0300 ... FAILED",
            "test tests::case_1900 ... FAILED",
            "test result: FAILED. 2598 passed; 2 failed",
        ],
    ),
];

#[test]
fn a_failing_runs_preview_shows_its_failures_with_their_line_numbers() {
    let fixtures =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/failing-runs");
    for (name, expected) in RUNS {
        let room = Room::new();
        let text = std::fs::read_to_string(fixtures.join(format!("{name}.txt"))).unwrap();
        room.write("run.txt", &text);
        let run = room.call("bash", json!({"command": "cat run.txt; exit 1"}));
        let result = run.json();
        let preview = result["output"].as_str().unwrap();
        assert!(
            preview.len() <= 51_200 + 2_000,
            "{name}: {} bytes",
            preview.len()
        );
        assert!(preview.contains("[the run failed: "), "{name}: {preview}");
        for line in *expected {
            assert!(
                preview.contains(line),
                "{name}: {line:?} not in the preview:\n{preview}"
            );
        }
        // Every `[line N]` names the line that follows it in the whole output.
        let whole =
            std::fs::read_to_string(room.path(result["metadata"]["full_output"].as_str().unwrap()))
                .unwrap();
        let whole: Vec<&str> = whole.lines().collect();
        let shown: Vec<&str> = preview.lines().collect();
        let mut checked = 0;
        for pair in shown.windows(2) {
            if let Some(n) = pair[0]
                .strip_prefix("[line ")
                .and_then(|r| r.strip_suffix(']'))
            {
                let n: usize = n.parse().unwrap();
                assert_eq!(whole[n - 1], pair[1], "{name}: line {n}");
                checked += 1;
            }
        }
        assert!(checked > 0, "{name}: no line number in the preview");
        // The golden part: what the preview found between its head and its tail.
        let found = preview.split_once("[the run failed: ").unwrap().1;
        let found = found.split_once("\n").unwrap().1;
        let found = found.split_once("[the last lines:]").unwrap().0;
        crate::snapshot_text!(format!("failing_run_{name}").as_str(), found);
    }
}

#[test]
fn without_a_failure_the_preview_stays_head_and_tail() {
    let room = Room::new();
    // A passing run that mentions errors: not a failure.
    let run = room.call(
        "bash",
        json!({"command": "seq 1 3000; echo 'error: handled'; seq 1 3000"}),
    );
    let out = run.output();
    assert!(!out.contains("[the run failed"), "{out:.300}");
    assert!(!out.contains("error: handled"));
}

#[test]
fn a_tap_run_with_five_scattered_failures_shows_all_of_them() {
    let room = Room::new();
    let script = "for i in $(seq 1 5000); do case $i in 700|1900|2500|3100|4400) echo \"not ok $i - case $i\";; *) echo \"ok $i - case $i\";; esac; done; echo '# fail 5'";
    let run = room.call("bash", json!({"command": script}));
    let out = run.output();
    for i in [700, 1900, 2500, 3100, 4400] {
        assert!(
            out.contains(&format!("not ok {i} - case {i}")),
            "{i}: {out:.400}"
        );
    }
}

#[test]
fn a_failing_run_of_5000_lines_shows_the_error_in_its_middle() {
    let room = Room::new();
    let run = room.call(
        "bash",
        json!({"command": "seq 1 2500; echo 'Error: connection refused (db:5432)'; seq 2502 5000; exit 1"}),
    );
    let out = run.output();
    assert!(
        out.contains("[line 2502]\nError: connection refused (db:5432)\n"),
        "{out:.600}"
    );
}
