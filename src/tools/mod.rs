//! The built-in tools, one file each, and the registration list.
//!
//! Adding a tool is one file here plus one line in [`builtin`]: its subcommand, flags,
//! `exec` dispatch, `tools` listing, man page and completions follow from the definition.

pub mod exit;
pub mod invalid;
pub mod notepad;
pub mod plan;
pub mod question;
pub mod read;
pub mod report_findings;
pub mod skill;
pub mod todowrite;
pub mod webfetch;
pub mod websearch;

use crate::registry::Registry;

/// Every tool name of the spec and DESIGN §2, registered here or not (websearch only
/// exists with `EXA_API_KEY`): what a policy's `disabled` list may name.
pub const ALL_NAMES: &[&str] = &[
    "read",
    "write",
    "edit",
    "apply_patch",
    "bash",
    "grep",
    "glob",
    "question",
    "webfetch",
    "invalid",
    "task",
    "todowrite",
    "report_findings",
    "monitor",
    "notepad",
    "plan_enter",
    "plan_exit",
    "exit",
    "skill",
    "websearch",
];

/// The registry of every built-in tool, in the reference's order (spec 8.1 `RegisterBuiltins`,
/// then `RegisterConditional`). `websearch` is registered only when `EXA_API_KEY` is set.
pub fn builtin() -> Registry {
    let mut registry = always();
    if websearch::enabled() {
        registry.register(websearch::definition());
    }
    registry
}

/// The tools registered whatever the environment, in order.
fn always() -> Registry {
    let mut registry = Registry::new();
    registry.register(read::definition());
    registry.register(question::definition());
    registry.register(webfetch::definition());
    registry.register(invalid::definition());
    registry.register(todowrite::definition());
    registry.register(report_findings::definition());
    registry.register(notepad::definition());
    registry.register(plan::enter());
    registry.register(plan::exit());
    registry.register(exit::definition());
    registry.register(skill::definition());
    registry
}

/// Every tool that can exist, whatever the environment: what the command line, man pages
/// and completions describe.
pub fn documented() -> Registry {
    let mut registry = always();
    registry.register(websearch::definition());
    registry
}
