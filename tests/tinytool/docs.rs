//! Generated documentation cannot drift: the committed `man/` and `completions/` match what
//! the binary's own definitions generate, `tinytool completions SHELL` prints the committed
//! scripts, the pages render without groff warnings, the clap command passes its own
//! consistency checks, and `tinytool --help` matches its golden file.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use tinytool::docs;

use crate::util::Room;

const REGENERATE: &str = "run `make man completions` and commit the result";

fn repo(folder: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(folder)
}

/// Fails unless `folder` holds exactly the generated files, byte for byte.
fn assert_committed(folder: &str, generated: Vec<(String, Vec<u8>)>) {
    let dir = repo(folder);
    let mut problems = Vec::new();
    for (name, bytes) in &generated {
        match std::fs::read(dir.join(name)) {
            Ok(committed) if committed == *bytes => {}
            Ok(_) => problems.push(format!("{folder}/{name} differs from the generated file")),
            Err(err) => problems.push(format!("{folder}/{name} is missing ({err})")),
        }
    }
    let committed = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{folder}/ cannot be read ({e}); {REGENERATE}"));
    for entry in committed {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        if !generated.iter().any(|(n, _)| *n == name) {
            problems.push(format!("{folder}/{name} is not generated any more"));
        }
    }
    assert!(
        problems.is_empty(),
        "generated documentation drifted:\n  {}\n{REGENERATE}",
        problems.join("\n  ")
    );
}

#[test]
fn committed_man_pages_match_the_definitions() {
    assert_committed(docs::MAN_DIR, docs::man_pages());
}

#[test]
fn committed_completions_match_the_definitions() {
    assert_committed(docs::COMPLETIONS_DIR, docs::completions());
}

#[test]
fn the_completions_subcommand_prints_the_committed_scripts() {
    let room = Room::new();
    for shell in tinytool::cli::SHELLS {
        let run = room.run(&["completions", shell], None);
        assert_eq!(run.code, 0, "{run:?}");
        let committed = std::fs::read_to_string(
            repo(docs::COMPLETIONS_DIR).join(docs::completion_file_name(shell).unwrap()),
        )
        .unwrap();
        assert!(
            run.stdout == committed,
            "tinytool completions {shell} differs from the committed script; {REGENERATE}"
        );
    }
    let run = room.run(&["completions", "tcsh"], None);
    assert_eq!(run.code, 2);
}

/// How each shell's script names a subcommand it completes.
fn completes(script: &str, sub: &str) -> bool {
    [
        format!(" {sub} "),         // bash: the `opts` word list
        format!("tinytool,{sub})"), // bash: the subcommand case
        format!("'{sub}:"),         // zsh: `'name:description'`
        format!("-a \"{sub}\""),    // fish: `-a "name"`
    ]
    .iter()
    .any(|pattern| script.contains(pattern.as_str()))
}

#[test]
fn hidden_subcommands_are_left_out_of_pages_and_completions() {
    let mut cmd = tinytool::cli::command();
    cmd.build();
    let hidden: Vec<String> = cmd
        .get_subcommands()
        .filter(|sub| sub.is_hide_set())
        .map(|sub| sub.get_name().to_string())
        .collect();
    assert!(hidden.contains(&"invalid".to_string()));
    let pages = docs::man_pages();
    let scripts = docs::completions();
    for sub in &hidden {
        for (name, bytes) in &pages {
            let text = String::from_utf8_lossy(bytes);
            assert!(
                !name.contains(sub.as_str()),
                "{name}: a page for the hidden {sub}"
            );
            let mentioned = format!("tinytool\\-{}", sub.replace('-', "\\-"));
            assert!(
                !text.contains(&mentioned),
                "{name} mentions the hidden {sub}"
            );
        }
        for (name, bytes) in &scripts {
            let text = String::from_utf8_lossy(bytes);
            assert!(!completes(&text, sub), "{name} completes the hidden {sub}");
        }
    }
    for (name, bytes) in &scripts {
        assert!(
            completes(&String::from_utf8_lossy(bytes), "read"),
            "{name} does not complete read"
        );
    }
}

#[test]
fn man_pages_render_without_warnings() {
    let groff_present = Command::new("groff")
        .arg("--version")
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !groff_present {
        // CI installs groff (see .ci/run); elsewhere the check needs it installed by hand.
        assert!(
            std::env::var_os("CI").is_none(),
            "groff is missing: install groff-base"
        );
        crate::util::skip("the groff check: groff is not installed (apt-get install groff-base)");
        return;
    }
    for (name, bytes) in docs::man_pages() {
        let out = Command::new("groff")
            .args(["-ww", "-man", "-z"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .and_then(|mut child| {
                use std::io::Write;
                child.stdin.take().unwrap().write_all(&bytes)?;
                child.wait_with_output()
            })
            .unwrap();
        let warnings = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success() && warnings.is_empty(),
            "groff warns about {name}:\n{warnings}"
        );
    }
}

#[test]
fn the_command_passes_clap_debug_asserts() {
    tinytool::cli::command().debug_assert();
    tinytool::cli::public_command().debug_assert();
}

#[test]
fn help_matches_its_golden_file() {
    let room = Room::new();
    let run = room.run(&["--help"], None);
    assert_eq!(run.code, 0);
    crate::snapshot_text!("help", run.stdout);
}
