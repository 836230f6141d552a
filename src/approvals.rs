//! Stored "always" approvals, kept where a repository cannot supply them: the user's own state directory, one file per project.
//!
//! A project's `.tinytool/state.db` is a file in the checkout: a repository can commit
//! one, and a shell command can write one. Approvals read from it would let a clone
//! switch the default policy off, so they are never read from there. They live in
//! `$XDG_STATE_HOME/tinytool/approvals/<KEY>.json` (else `~/.local/state/tinytool/…`),
//! where KEY is a hash of the project's resolved directory and the file names that
//! directory again (a file for another project is ignored).
//!
//! Grammar of the file:
//! `{"project": "/abs/dir", "approvals": [{"permission": P, "pattern": Q}, …]}`,
//! oldest first. With no state directory (no `HOME`), nothing is stored or read: an
//! "always" answer then lasts for the call only.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

#[derive(Debug, Default, Serialize, Deserialize)]
struct File {
    project: String,
    approvals: Vec<Approval>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
struct Approval {
    permission: String,
    pattern: String,
}

/// tinytool's directory in the user's state home (`$XDG_STATE_HOME/tinytool`, else
/// `~/.local/state/tinytool`).
pub fn user_state_dir() -> Option<PathBuf> {
    if let Some(xdg) = std::env::var_os("XDG_STATE_HOME").filter(|v| !v.is_empty()) {
        let xdg = PathBuf::from(xdg);
        if xdg.is_absolute() {
            return Some(xdg.join("tinytool"));
        }
    }
    let home = std::env::var_os("HOME").filter(|v| !v.is_empty())?;
    Some(PathBuf::from(home).join(".local/state/tinytool"))
}

/// The approvals file of the project in `dir`, if there is a state directory.
fn file_for(dir: &Path) -> Option<PathBuf> {
    let project = crate::paths::resolve_symlinks(dir);
    // FNV-1a: stable across versions and platforms, enough to spread file names (the
    // file repeats the directory, which is what is trusted).
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for b in project.as_os_str().as_encoded_bytes() {
        hash ^= u64::from(*b);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    Some(
        user_state_dir()?
            .join("approvals")
            .join(format!("{hash:016x}.json")),
    )
}

fn project_key(dir: &Path) -> String {
    crate::paths::resolve_symlinks(dir)
        .to_string_lossy()
        .into_owned()
}

/// The stored approvals of the project in `dir` as `(permission, pattern)`, oldest first.
/// A missing file is none; an unreadable one is an error (the policy then fails closed).
pub fn load(dir: &Path) -> Result<Vec<(String, String)>> {
    let Some(path) = file_for(dir) else {
        return Ok(Vec::new());
    };
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(err) => return Err(err).with_context(|| format!("reading {}", path.display())),
    };
    let file: File = serde_json::from_str(&text)
        .with_context(|| format!("{} is not an approvals file", path.display()))?;
    if file.project != project_key(dir) {
        return Ok(Vec::new());
    }
    Ok(file
        .approvals
        .into_iter()
        .map(|a| (a.permission, a.pattern))
        .collect())
}

/// Stores an "always" approval for exactly this pattern (once).
pub fn add(dir: &Path, permission: &str, pattern: &str) -> Result<()> {
    let path = file_for(dir).context("no user state directory (HOME is not set)")?;
    let mut approvals: Vec<Approval> = load(dir)?
        .into_iter()
        .map(|(permission, pattern)| Approval {
            permission,
            pattern,
        })
        .collect();
    let new = Approval {
        permission: permission.to_string(),
        pattern: pattern.to_string(),
    };
    if !approvals.contains(&new) {
        approvals.push(new);
    }
    let file = File {
        project: project_key(dir),
        approvals,
    };
    let parent = path.parent().context("approvals path has no parent")?;
    std::fs::create_dir_all(parent).with_context(|| format!("creating {}", parent.display()))?;
    let mut tmp = tempfile::NamedTempFile::new_in(parent)?;
    serde_json::to_writer_pretty(&mut tmp, &file)?;
    tmp.persist(&path)
        .with_context(|| format!("writing {}", path.display()))?;
    Ok(())
}
