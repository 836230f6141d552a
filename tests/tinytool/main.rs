//! Integration tests: the real binary in a clean room (see `util`).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod httpd;
mod util;

mod cli;
mod exec;
mod policy;
mod policy_tooling;
mod read;
mod session_tools;
mod webfetch;
mod websearch;
