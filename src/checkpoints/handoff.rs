//! Handing a call's open checkpoint to the supervisor of the monitor or background job the
//! call starts, so what the command does after the call returned is recorded in the
//! checkpoint of the call that started it.
//!
//! The steps, all on the thread running the call:
//! 1. the registry opens the call's checkpoint and [`offer`]s it;
//! 2. `background::spawn_supervisor` [`take_offer`]s it and passes its id to the
//!    supervisor (`__supervise KIND ID --checkpoint CHECKPOINT`); the supervisor, once
//!    the command runs, [`adopt`]s it (the checkpoint's pid becomes the supervisor's, so
//!    other calls meanwhile see it alive and record the overlap) before it answers `ok`;
//!    on that answer, once it sees the supervisor's pid in the checkpoint
//!    ([`adopted_by`]), the call marks it [`handed`];
//! 3. the registry [`withdraw`]s: a handed checkpoint is left open (its
//!    `metadata.checkpoint` is `{"id": ID, "open": true}`), any other one is closed as
//!    usual;
//! 4. when the command ends (exited, stopped, timed out) the supervisor [`close`]s it as
//!    the registry closes a call's: a walk records every change since the call began.
//!
//! A supervisor that dies first leaves the checkpoint open with a dead pid: the next
//! checkpoint walk completes it (`record::settle_locked`).

use std::cell::Cell;
use std::path::Path;

use anyhow::Result;
use serde_json::Value;

use super::record::{self, Open};
use crate::session::Session;
use crate::state::{State, Store};

thread_local! {
    /// The open checkpoint of the call running on this thread, not yet taken.
    static OFFERED: Cell<Option<i64>> = const { Cell::new(None) };
    /// The checkpoint a supervisor started by this thread's call has adopted.
    static HANDED: Cell<Option<i64>> = const { Cell::new(None) };
}

/// Offers the running call's open checkpoint `id` to a supervisor the call may start.
pub fn offer(id: i64) {
    OFFERED.with(|o| o.set(Some(id)));
    HANDED.with(|h| h.set(None));
}

/// Takes the offered checkpoint (once: a second supervisor of the same call gets none).
pub fn take_offer() -> Option<i64> {
    OFFERED.with(Cell::take)
}

/// Records that a supervisor adopted checkpoint `id` and answered that its command runs.
pub fn handed(id: i64) {
    HANDED.with(|h| h.set(Some(id)));
}

/// Ends the offer after the call; the checkpoint id when a supervisor adopted it (the
/// call must then leave it open).
pub fn withdraw() -> Option<i64> {
    OFFERED.with(|o| o.set(None));
    HANDED.with(Cell::take)
}

/// In the supervisor: makes it the owner of checkpoint `id`; whether it was still open.
pub fn adopt(store: &mut Store, id: i64, pid: i32) -> Result<bool> {
    store.adopt_checkpoint(id, i64::from(pid))
}

/// In the call, after the supervisor's `ok`: whether process `pid` (the supervisor)
/// adopted checkpoint `id` — its pid is in the row, or the row is gone (a quick command's
/// supervisor already closed it, finding no change). Only then does the call leave it to
/// the supervisor; otherwise (the adoption failed) the call closes it as usual.
pub fn adopted_by(session: &Session, id: i64, pid: u32) -> bool {
    match session.state.read(|store| store.checkpoint(id)) {
        Ok(Some(Some(row))) => row.pid == i64::from(pid),
        Ok(Some(None)) => true,
        _ => false,
    }
}

/// In the supervisor, once its command ended: closes checkpoint `id` (the value
/// `metadata.checkpoint` would carry, or `None` when the command changed nothing). `dir` is
/// the project, `state` its database; the checkpoint settings come from the config as the
/// call loaded it. A checkpoint no longer open (completed meanwhile by a walk that took the
/// supervisor for dead) is left alone.
pub fn close(dir: &Path, state: &Path, id: i64) -> Option<Value> {
    let mut session = Session::new("supervisor", dir);
    session.state = State::new(state.to_path_buf(), session.dir.clone());
    session.config = crate::config::Config::load(&session.dir).unwrap_or_default();
    let open = session
        .state
        .read(|store| store.checkpoint(id))
        .ok()
        .flatten()
        .flatten()
        .is_some_and(|row| row.status == "open");
    if !open {
        return None;
    }
    record::finish(&session, Open::new(id))
}
