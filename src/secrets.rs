//! Secret files stay secret in every output (issue 18 item 6).
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

use crate::session::CallContext;
use crate::tool::Access;

/// What replaces the content of a file the caller may not read.
pub const HIDDEN: &str = "[content of a secret file not shown]";

/// Whether the caller may not read `path` (resolved), so no output may show its content.
pub fn is_secret(ctx: &CallContext, path: &Path) -> bool {
    let access = Access::resolved(ctx, "read", path.to_path_buf());
    !ctx.session.gate.permits(ctx, &access)
}

/// The diff of one secret file: its header lines (names only) and [`HIDDEN`].
pub fn hidden_diff(old_name: &str, new_name: &str) -> String {
    format!("--- {old_name}\n+++ {new_name}\n{HIDDEN}\n")
}
