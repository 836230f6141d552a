//! tinytool: the whole tool layer of an AI coding agent — read, write, edit, apply_patch,
//! bash, grep, glob and the rest — as one synchronous binary with busybox-style
//! subcommands.
//!
//! The architecture, bottom up:
//! - [`tool`]: what a tool is (definition record, output); [`tools`]: the tools, one file
//!   each, and the registration list;
//! - [`registry`]: the one execution flow every call goes through (lookup, repair, schema
//!   checks, permission, events, after-hook, preview);
//! - [`schema`], [`repair`], [`truncate`], [`events`], [`paths`]: the pieces of that flow;
//! - [`search`]: what grep and glob share (skip directories, walker, summary line);
//! - [`textdoc`], [`atomic`], [`aftercare`]: how the file tools change files (conventions
//!   kept, atomic writes, formatter and `file.modified` afterwards);
//! - [`session`]: what a call runs with; [`state`]: the SQLite store behind it;
//! - [`process`]: child processes that cannot hang or outlive a call (bash, monitor, task);
//!   [`background`]: monitors and background jobs under detached supervisors;
//! - [`detect`]: the shell-command detectors behind `destructive-shell` and `secret-shell`;
//! - [`wire`] and [`dialects`]: call envelopes in and tool definitions out, per provider;
//! - [`cli`]: the command line derived from the registry; [`docs`]: the man pages and
//!   completion scripts generated from it.

pub mod access;
pub mod aftercare;
pub mod aliases;
pub mod approvals;
pub mod atomic;
pub mod background;
pub mod beneath;
pub mod binary;
pub mod checkpoints;
pub mod cli;
pub mod clock;
pub mod config;
pub mod detect;
pub mod dialects;
pub mod docs;
pub mod events;
pub mod exit;
pub mod fingerprint;
pub mod gate;
pub mod git_index;
pub mod hook;
pub mod ignores;
pub mod journal;
pub mod locks;
pub mod mcp;
pub mod paths;
pub mod pending;
pub mod policy;
pub mod process;
pub mod project;
pub mod registry;
pub mod repair;
pub mod sandbox;
pub mod sandbox_settings;
pub mod schema;
pub mod search;
pub mod secret_file;
pub mod secret_scan;
pub mod secrets;
pub mod session;
pub mod skip_dirs;
pub mod spill;
pub mod state;
pub mod textdoc;
pub mod tool;
pub mod tools;
pub mod tree;
pub mod truncate;
pub mod wildcard;
pub mod wire;
