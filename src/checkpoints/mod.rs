//! Checkpoints and undo: every change a call made can be taken back.
//!
//! Which paths changed since the previous walk is [`crate::tree`]'s business (a stat-only
//! walk of the project tree, its listing cache, and the watch that lets quiet directories
//! go unstated); this module keeps what they held and takes it back:
//!
//! - [`store`]: content-addressed, deduplicated blobs under
//!   `<dir>/.tinytool/checkpoints/blobs/`, each written atomically so two processes
//!   storing at once never leave a partial blob;
//! - [`record`]: the checkpoint around a call (the registry calls [`record::begin`] and
//!   [`record::finish`]), the baseline, and pruning;
//! - [`files`]: the checkpoint of a call that names its files (a file tool, an undo):
//!   exactly those files, claimed while it runs so no walk beside it records them;
//! - [`undo`]: reverting a checkpoint, with conflict detection, through
//!   [`crate::atomic::commit`];
//! - [`handoff`]: a monitor's or background job's checkpoint kept open by its supervisor
//!   until the command ends;
//! - [`recovery`]: completing a killed call's checkpoint right after journal recovery and
//!   before listing;
//! - [`report`]: what `tinytool checkpoints` and `checkpoints show` print.
//!
//! The records live in the state database (`crate::state`, migration 2). Only tinytool
//! itself writes here, never a sandboxed command (the sandbox hides the folder).

pub mod files;
pub mod handoff;
pub mod record;
pub mod recovery;
pub mod report;
mod store;
pub mod undo;

#[cfg(test)]
mod model_tests;
