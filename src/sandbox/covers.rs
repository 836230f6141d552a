//! The empty read-only stand-ins the sandbox puts over what commands must not see: a file
//! over each masked secret, a folder over the checkpoint store, and tinytool's own view of
//! `.tinytool/`, all made once under `.tinytool/sandbox/`.

use std::path::{Path, PathBuf};

/// The empty read-only file secrets are covered with (`.tinytool/sandbox/empty`, made
/// once); `None` when it cannot be made.
pub fn empty_file(tinytool: &Path) -> Option<PathBuf> {
    let path = tinytool.join("sandbox").join("empty");
    match std::fs::symlink_metadata(&path) {
        Ok(meta) if meta.is_file() && meta.len() == 0 => return Some(path),
        Ok(_) => {
            let _ = std::fs::remove_file(&path);
        }
        Err(_) => {}
    }
    crate::project::ensure_own_subdir(tinytool.parent()?, "sandbox").ok()?;
    // create_new: never through a link put there since it was looked at.
    std::fs::File::options()
        .write(true)
        .create_new(true)
        .open(&path)
        .ok()?;
    Some(path)
}

/// The empty read-only directory (`.tinytool/sandbox/empty.d`) that covers the checkpoint
/// store in the sandbox: the store holds copies of secret files, and the command never
/// needs it (tinytool itself writes checkpoints, outside the sandbox).
pub fn empty_dir(tinytool: &Path) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let path = tinytool.join("sandbox").join("empty.d");
    match std::fs::symlink_metadata(&path) {
        Ok(meta) if meta.is_dir() && std::fs::read_dir(&path).ok()?.next().is_none() => {
            return Some(path);
        }
        Ok(_) => return None,
        Err(_) => {}
    }
    std::fs::create_dir_all(&path).ok()?;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o555)).ok()?;
    Some(path)
}

/// The read-only view of `.tinytool/` commands get (`.tinytool/sandbox/own.d`, made once):
/// a mount point `outputs`, where the spill files are bound, and the `.gitignore` that
/// keeps git from listing the folder (as the real one does). The state database (a
/// monitor's lines), the journal and the sealed spill files of calls that saw secrets are
/// not for commands; `None` when it cannot be made.
pub fn own_view(tinytool: &Path) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let path = tinytool.join("sandbox").join("own.d");
    let sound = |p: &Path| std::fs::symlink_metadata(p).is_ok_and(|m| m.is_dir());
    let ignore_sound = || {
        std::fs::symlink_metadata(path.join(".gitignore")).is_ok_and(|m| m.is_file())
            && std::fs::read(path.join(".gitignore")).is_ok_and(|b| b == b"*\n")
    };
    let listed: Option<Vec<std::ffi::OsString>> = std::fs::read_dir(&path)
        .ok()
        .map(|entries| entries.flatten().map(|e| e.file_name()).collect());
    if let Some(mut names) = listed {
        names.sort();
        let expected = names.len() == 2 && names[0] == ".gitignore" && names[1] == "outputs";
        if expected && sound(&path) && sound(&path.join("outputs")) && ignore_sound() {
            return Some(path);
        }
        // An older or damaged view: made again.
        let _ = std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755));
        let _ = std::fs::remove_file(path.join(".gitignore"));
        let _ =
            std::fs::set_permissions(path.join("outputs"), std::fs::Permissions::from_mode(0o755));
        let _ = std::fs::remove_dir(path.join("outputs"));
        std::fs::remove_dir(&path).ok()?;
    }
    crate::project::ensure_own_subdir(tinytool.parent()?, "sandbox").ok()?;
    std::fs::create_dir(&path).ok()?;
    std::fs::create_dir(path.join("outputs")).ok()?;
    // create_new: never through a link put there since it was looked at.
    let mut ignore = std::fs::File::options()
        .write(true)
        .create_new(true)
        .open(path.join(".gitignore"))
        .ok()?;
    std::io::Write::write_all(&mut ignore, b"*\n").ok()?;
    std::fs::set_permissions(
        path.join(".gitignore"),
        std::fs::Permissions::from_mode(0o444),
    )
    .ok()?;
    for dir in [path.join("outputs"), path.clone()] {
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o555)).ok()?;
    }
    Some(path)
}
