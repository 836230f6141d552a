//! Integration tests: the real binary in a clean room (see `util`).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod util;

mod cli;
mod exec;
mod glob;
mod grep;
mod read;
mod search_tree;
