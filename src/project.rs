//! tinytool's own folder in a project, `<dir>/.tinytool/`: where the state database, the
//! project policy and config live.
//!
//! The folder is created on first need with a `.gitignore` containing `*`, so the project's
//! `git status` stays clean. File locks (DESIGN §5) are not here but in one per-user
//! directory that every `--dir` reaches ([`crate::locks`]).

use std::io;
use std::path::{Path, PathBuf};

/// `<dir>/.tinytool`.
pub fn tinytool_dir(dir: &Path) -> PathBuf {
    dir.join(".tinytool")
}

/// Creates `<dir>/.tinytool/` (with its `.gitignore`) when missing, and returns it.
pub fn ensure_tinytool_dir(dir: &Path) -> io::Result<PathBuf> {
    let folder = tinytool_dir(dir);
    if !folder.is_dir() {
        std::fs::create_dir_all(&folder)?;
    }
    let ignore = folder.join(".gitignore");
    if !ignore.exists() {
        // Another process may create it at the same moment; both write the same bytes.
        std::fs::write(&ignore, "*\n")?;
    }
    Ok(folder)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_folder_is_created_with_a_gitignore() {
        let tmp = tempfile::tempdir().unwrap();
        let folder = ensure_tinytool_dir(tmp.path()).unwrap();
        assert_eq!(
            std::fs::read_to_string(folder.join(".gitignore")).unwrap(),
            "*\n"
        );
    }
}
