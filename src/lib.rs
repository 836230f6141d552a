//! tinytool: the whole tool layer of an AI coding agent — read, write, edit, apply_patch,
//! bash, grep, glob and the rest — as one synchronous binary with busybox-style
//! subcommands.
//!
//! `ARCHITECTURE.md` at the root of the repository names the layers of these modules, bottom
//! up, what each owns and may use, the path of one call, and the invariants; `layers.toml`
//! is the same list as data, checked by `tests/layers.rs`.

mod access;
mod aftercare;
mod aliases;
mod approvals;
mod atomic;
mod background;
mod beneath;
mod binary;
mod checkpoints;
pub mod cli;
mod clock;
mod config;
mod detect;
mod dialects;
pub mod docs;
mod events;
mod exit;
mod failures;
mod fingerprint;
mod gate;
mod git_index;
mod hook;
mod ignores;
mod interleave;
mod journal;
mod locks;
mod lsp;
mod mcp;
pub mod media;
mod notebook;
mod paths;
mod pending;
mod policy;
mod process;
mod project;
pub mod registry;
pub mod repair;
mod sandbox;
mod sandbox_settings;
pub mod schema;
mod search;
mod secret_file;
mod secret_scan;
mod secrets;
pub mod session;
mod skip_dirs;
mod spill;
mod state;
mod suggest;
mod textdoc;
pub mod tool;
pub mod tools;
mod tree;
mod truncate;
mod wildcard;
mod wire;
