//! Integration tests: the real binary in a clean room (see `util`).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod util;

mod apply_patch;
mod cli;
mod edit;
mod exec;
mod read;
mod write;
