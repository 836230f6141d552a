//! The built-in tools, one file each, and the registration list.
//!
//! Adding a tool is one file here plus one line in [`builtin`]: its subcommand, flags,
//! `exec` dispatch, `tools` listing, man page and completions follow from the definition.

pub mod apply_patch;
pub mod edit;
pub mod exit;
pub mod invalid;
pub mod read;
pub mod write;

use crate::registry::Registry;

/// The registry of every built-in tool, in the reference's order (spec 8.1 `RegisterBuiltins`,
/// then `RegisterConditional`). `websearch` is registered only when `EXA_API_KEY` is set.
pub fn builtin() -> Registry {
    let mut registry = Registry::new();
    registry.register(read::definition());
    registry.register(write::definition());
    registry.register(edit::definition());
    registry.register(apply_patch::definition());
    registry.register(invalid::definition());
    registry.register(exit::definition());
    registry
}

/// Every tool that can exist, whatever the environment: what the command line, man pages
/// and completions describe.
pub fn documented() -> Registry {
    builtin()
}
