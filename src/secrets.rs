//! Secret files stay secret in every output.
//!
//! A file whose `read` the policy refuses (the built-in `read <secret file> ask` with nobody to ask,
//! or a `read secret/* deny` rule) may still be changed by edit, write and apply_patch, which
//! need only `edit`. Those tools show file content in several places — edit's "closest
//! region" when old_string is not found or matches several places, the diffs in
//! `metadata.diff`, apply_patch's "the file has X where the hunk has Y" — and each of them
//! would hand the secret to a caller that may not read it. So a tool asks [`is_secret`]
//! before it shows any content of a file, and shows [`HIDDEN`] in its place when the
//! answer is yes. The question is the one the `read` tool's gate asks, without asking
//! anybody: an `ask` is a refusal unless the ask mode allows it, and a stored approval
//! lifts it (`PermissionGate::permits`).

use std::path::Path;

use crate::access::Access;
use crate::session::CallContext;

/// What replaces the content of a file the caller may not read.
pub const HIDDEN: &str = "[content of a secret file not shown]";

/// Whether the caller may not read `path` (resolved), so no output may show its content.
pub fn is_secret(ctx: &CallContext, path: &Path) -> bool {
    let access = Access::resolved(ctx, "read", path.to_path_buf());
    !ctx.session.gate.permits(ctx, &access)
}

/// The refusal of a change that would make the secret file `path` readable for a caller
/// that may not read it (`None`: it may go ahead). A file that is a secret by its content
/// (`credentials.json` holding a `client_secret`) would stop being one if an edit renamed
/// the field, and another name of a secret (a hard link) is a file of its own once it is
/// rewritten: either change would hand the secret to `read` and to commands. `new` is the
/// content the change would leave; `shown` the path as results show it.
pub fn declassifying(ctx: &CallContext, path: &Path, new: &[u8], shown: &str) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    if !is_secret(ctx, path) {
        return None;
    }
    let name = path.file_name()?.to_str()?;
    if crate::secret_file::content_makes_secret(name, new) {
        return None;
    }
    let classified = crate::secret_file::is_secret(path);
    let other_names = std::fs::symlink_metadata(path).is_ok_and(|m| m.is_file() && m.nlink() > 1);
    if !classified && !other_names {
        // Secret by a policy rule on its path: it stays one whatever it holds.
        return None;
    }
    Some(format!(
        "Refused: this change would make {shown} readable: it is a secret file{}, and after the change it would no longer be one ({}), which would show what it holds to `read` and to commands, and the policy does not let you read it. Nothing was changed. Keep what makes it a secret, or ask the user to allow reading it (a `read` rule for this path in the user policy).",
        if other_names && !classified {
            " (another name of one)"
        } else {
            ""
        },
        if other_names && !classified {
            "a rewritten file no longer shares the secret's identity"
        } else {
            "its new content names no secret field or key"
        },
    ))
}

/// The diff of one secret file: its header lines (names only) and [`HIDDEN`].
pub fn hidden_diff(old_name: &str, new_name: &str) -> String {
    format!("--- {old_name}\n+++ {new_name}\n{HIDDEN}\n")
}
