//! Shell reads of spill files: a path inside `.tinytool/` calls for
//! `secret-shell`, except a spill file under `<dir>/.tinytool/outputs/` named by a line
//! whose every command only reads ([`super::read_only::line_is_read_only`]). So
//! `tail -n 50 .tinytool/outputs/out-1-2-3.txt` or `grep -n panicked .tinytool/outputs/*`
//! runs under the default policy, while `cat .tinytool/policy.json`,
//! `cat .tinytool/outputs/../policy.json` or `rm .tinytool/outputs/x` still need it.
//!
//! A word is a spill-file path ([`names_only_outputs`]) when, resolved against the
//! directory (after a `cd`, the directory it moved to) and cleaned of `.` and `..`, it is
//! the outputs folder or one entry directly in it (spill files are flat), and:
//! - it is one path: no `=`, `:` or leading `@`/`-` that could make it name another one
//!   (`--file=…`, `HEAD:…`);
//! - the outputs folder and `.tinytool` are real directories, not symbolic links;
//! - an existing entry it names, or every entry a glob in its last component matches, is
//!   not a symbolic link leading out of the folder.
//!
//! Anything else, or any doubt (an unreadable folder), keeps the `secret-shell` finding:
//! the exemption fails closed.

use std::fs;
use std::path::{Component, Path};

use super::Places;
use super::secret;

/// The outputs folder's components below the working directory.
const OUTPUTS: [&str; 2] = [".tinytool", "outputs"];

/// Whether `text` (one word as the shell expands it; `glob` when it is a shell glob),
/// resolved against `places`, names only the outputs folder of `root` (the session's
/// `--dir`) or entries directly inside it; see the module documentation.
pub fn names_only_outputs(text: &str, glob: bool, places: &Places, root: &Path) -> bool {
    if text.is_empty() || text.contains(['=', ':']) || text.starts_with(['@', '-']) {
        return false;
    }
    let Some(path) = secret::resolve(text, places) else {
        return false;
    };
    let Ok(rest) = path.strip_prefix(root) else {
        return false;
    };
    let parts: Vec<&str> = match rest
        .components()
        .map(|c| match c {
            Component::Normal(s) => s.to_str(),
            _ => None,
        })
        .collect::<Option<Vec<&str>>>()
    {
        Some(parts) => parts,
        None => return false,
    };
    if parts.len() < 2 || parts.len() > 3 || parts[..2] != OUTPUTS {
        return false;
    }
    let tinytool = root.join(OUTPUTS[0]);
    let folder = tinytool.join(OUTPUTS[1]);
    if !is_real_dir(&tinytool) || !is_real_dir(&folder) {
        return false;
    }
    // The glob characters may only be in the entry's name: `.tinytool/out*/x` is refused.
    let Some(name) = parts.get(2) else {
        return true;
    };
    let Ok(folder_real) = fs::canonicalize(&folder) else {
        return false;
    };
    let stays_inside = |entry: &Path| match fs::symlink_metadata(entry) {
        Ok(meta) if meta.file_type().is_symlink() => {
            fs::canonicalize(entry).is_ok_and(|real| real.parent() == Some(&folder_real))
        }
        Ok(_) => true,
        Err(err) => err.kind() == std::io::ErrorKind::NotFound,
    };
    if glob && name.contains(['*', '?', '[']) {
        let Ok(entries) = fs::read_dir(&folder) else {
            return false;
        };
        for entry in entries {
            let Ok(entry) = entry else { return false };
            let entry_name = entry.file_name();
            let Some(entry_name) = entry_name.to_str() else {
                return false;
            };
            if secret::glob_match(name, entry_name) && !stays_inside(&entry.path()) {
                return false;
            }
        }
        true
    } else {
        stays_inside(&folder.join(name))
    }
}

/// A directory that is not a symbolic link.
fn is_real_dir(path: &Path) -> bool {
    fs::symlink_metadata(path).is_ok_and(|m| m.is_dir())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn room() -> (tempfile::TempDir, Places) {
        let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
        let root = fs::canonicalize(tmp.path()).unwrap_or_else(|e| panic!("{e}"));
        fs::create_dir_all(root.join(".tinytool/outputs")).unwrap_or_else(|e| panic!("{e}"));
        fs::write(root.join(".tinytool/outputs/out-1.txt"), "x").unwrap_or_else(|e| panic!("{e}"));
        fs::write(root.join(".tinytool/policy.json"), "{}").unwrap_or_else(|e| panic!("{e}"));
        let places = Places {
            dir: root,
            home: None,
            config_dir: None,
            policy_file: None,
        };
        (tmp, places)
    }

    #[test]
    fn spill_files_and_the_folder_are_outputs() {
        let (_tmp, places) = room();
        let root = places.dir.clone();
        for word in [
            ".tinytool/outputs/out-1.txt",
            "./.tinytool/outputs/out-1.txt",
            ".tinytool/outputs/missing.txt",
            ".tinytool/outputs",
            ".tinytool/outputs/",
            "src/../.tinytool/outputs/out-1.txt",
        ] {
            assert!(names_only_outputs(word, false, &places, &root), "{word}");
        }
        let absolute = format!("{}/.tinytool/outputs/out-1.txt", root.display());
        assert!(names_only_outputs(&absolute, false, &places, &root));
        assert!(names_only_outputs(
            ".tinytool/outputs/*",
            true,
            &places,
            &root
        ));
    }

    #[test]
    fn other_tinytool_paths_are_not() {
        let (_tmp, places) = room();
        let root = places.dir.clone();
        for (word, glob) in [
            (".tinytool/policy.json", false),
            (".tinytool/outputs/../policy.json", false),
            (".tinytool", false),
            (".tinytool/state.db", false),
            (".tinytool/outputs/a/b", false),
            (".tinytool/out*/out-1.txt", true),
            (".tinytool/*", true),
            ("--file=.tinytool/outputs/x", false),
            ("HEAD:.tinytool/outputs/x", false),
            ("$X/.tinytool/outputs/x", false),
            ("/elsewhere/.tinytool/outputs/x", false),
        ] {
            assert!(!names_only_outputs(word, glob, &places, &root), "{word}");
        }
    }

    #[cfg(unix)]
    #[test]
    fn a_link_out_of_the_folder_is_not() {
        let (_tmp, places) = room();
        let root = places.dir.clone();
        std::os::unix::fs::symlink(
            root.join(".tinytool/policy.json"),
            root.join(".tinytool/outputs/link.txt"),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert!(!names_only_outputs(
            ".tinytool/outputs/link.txt",
            false,
            &places,
            &root
        ));
        assert!(!names_only_outputs(
            ".tinytool/outputs/*",
            true,
            &places,
            &root
        ));
        assert!(names_only_outputs(
            ".tinytool/outputs/out-*",
            true,
            &places,
            &root
        ));
    }

    #[test]
    fn judge_drops_the_finding_only_for_lines_that_only_read() {
        let (_tmp, places) = room();
        let secret = |line: &str| {
            super::super::reason(
                &super::super::judge(line, &places),
                super::super::Kind::Secret,
            )
        };
        for line in [
            "cat .tinytool/outputs/out-1.txt",
            "tail -n 20 .tinytool/outputs/out-1.txt | grep -n panicked",
            "grep -n FAILED .tinytool/outputs/*",
            "sed -n 100,120p .tinytool/outputs/out-1.txt",
            "wc -l .tinytool/outputs/out-1.txt && head .tinytool/outputs/out-1.txt",
            "ls .tinytool/outputs",
        ] {
            assert_eq!(secret(line), None, "{line}");
        }
        for line in [
            "cat .tinytool/policy.json",
            "cat .tinytool/outputs/out-1.txt .tinytool/policy.json",
            "cat .tinytool/outputs/../policy.json",
            "rm .tinytool/outputs/out-1.txt",
            "cat .tinytool/outputs/out-1.txt > copy.txt",
            "sh -c 'cat .tinytool/outputs/out-1.txt'",
            "cp .tinytool/outputs/out-1.txt .",
            "cat .tinytool/outputs/out-1.txt .env",
        ] {
            assert!(secret(line).is_some(), "{line}");
        }
    }
}
