//! Checkpoints and undo (issue 20): every change a call made can be taken back.
//!
//! - [`walk`]: a stat-only walk of the project tree that respects `.gitignore`/`.ignore`
//!   and the skip directories, and tells which paths changed since the previous walk
//!   (size, mtime, inode, ctime and mode compared; contents read only for those);
//! - [`store`]: content-addressed, deduplicated blobs under
//!   `<dir>/.tinytool/checkpoints/blobs/`, each written atomically so two processes
//!   storing at once never leave a partial blob;
//! - [`record`]: the checkpoint around a call (the registry calls [`record::begin`] and
//!   [`record::finish`]), the baseline, and pruning;
//! - [`undo`]: reverting a checkpoint, with conflict detection, through
//!   [`crate::atomic::commit`];
//! - [`report`]: what `tinytool checkpoints` and `checkpoints show` print.
//!
//! The records live in the state database (`crate::state`, migration 2). Only tinytool
//! itself writes here, never a sandboxed command (the sandbox hides the folder).

pub mod record;
pub mod report;
pub mod store;
pub mod undo;
pub mod walk;
pub mod watch;
