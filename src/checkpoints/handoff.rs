//! Handing a call's open checkpoint to the supervisor of the monitor or background job the
//! call starts, so what the command does after the call returned is recorded in the
//! checkpoint of the call that started it.
//!
//! The steps, the first three with the call's context (`CallContext::offer_checkpoint` and
//! its siblings), so concurrent calls never see each other's checkpoint:
//! 1. the registry opens the call's checkpoint and offers it;
//! 2. `background::spawn_supervisor` takes the offer and passes its id to the
//!    supervisor (`__supervise KIND ID --checkpoint CHECKPOINT`); the supervisor, once
//!    the command runs, [`adopt`]s it (the checkpoint's pid becomes the supervisor's, so
//!    other calls meanwhile see it alive and record the overlap) before it answers `ok`;
//!    on that answer, once it sees the supervisor's pid in the checkpoint
//!    ([`adopted_by`]), the call marks it handed;
//! 3. the registry withdraws the offer: a handed checkpoint is left open (its
//!    `metadata.checkpoint` is `{"id": ID, "open": true}`), any other one is closed as
//!    usual;
//! 4. when the command ends (exited, stopped, timed out) the supervisor [`close`]s it as
//!    the registry closes a call's: a walk records every change since the call began.
//!
//! A supervisor that dies first leaves the checkpoint open with a dead pid: the next
//! checkpoint walk completes it (`record::settle_locked`).

use std::path::Path;

use anyhow::Result;
use serde_json::Value;

use super::record::{self, Open};
use crate::session::Session;
use crate::state::{State, Store};

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
