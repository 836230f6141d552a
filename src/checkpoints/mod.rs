//! Checkpoints (issue 20), the storage core: what a checkpoint is built from.
//!
//! - [`walk`]: a stat-only walk of the project tree that respects `.gitignore`/`.ignore`
//!   and the skip directories, and tells which paths changed since the previous walk
//!   (size, mtime, inode, ctime and mode compared; contents read only for those);
//! - [`store`]: content-addressed, deduplicated blobs under
//!   `<dir>/.tinytool/checkpoints/blobs/`, each written atomically so two processes
//!   storing at once never leave a partial blob.
//!
//! Recording checkpoints around tool calls, the SQLite tables, `tinytool undo` and
//! `tinytool checkpoints` are not built yet; this module is the part they will stand on.

pub mod record;
pub mod report;
pub mod store;
pub mod undo;
pub mod walk;
