//! Integration tests: the real binary in a clean room (see `util`).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod httpd;
mod util;

mod apply_patch;
mod apply_patch_atomic;
mod background;
mod bash;
mod binary;
mod checkpoints;
mod cli;
mod docs;
mod edit;
mod edit_targets;
mod exec;
mod file_guards;
mod first_hour;
mod glob;
mod grep;
mod ignore_files;
mod journal;
mod mcp;
mod mcp_http;
mod mcp_interop;
mod own_folder;
mod policy;
mod policy_editing;
mod policy_reads;
mod policy_tooling;
mod races;
mod read;
mod readme_policies;
mod robust;
mod sandbox;
mod sandbox_escapes;
mod sandbox_landlock;
mod sandbox_processes;
mod search_limits;
mod search_tree;
mod secrets;
mod session_tools;
mod spill_access;
mod webfetch;
mod websearch;
mod write;
