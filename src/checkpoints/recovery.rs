//! Completing the checkpoints of calls whose process died mid-call without waiting for the
//! next checkpointed call's walk: right after journal recovery finished a killed call's
//! multi-file commit (forward or back), and before the checkpoints are listed or shown.
//!
//! The work is [`record::settle_locked`]'s (the changes since the stored tree go to the
//! newest dead checkpoint); this module only decides cheaply whether it is needed: one
//! read of the open checkpoints, and the lock and walk only when one of them belongs to a
//! process that is gone.

use anyhow::Result;

use super::record;
use crate::session::Session;
use crate::tree as walk;

/// Completes the open checkpoints of dead processes, if any; whether it walked.
pub fn complete_dead(session: &Session) -> Result<bool> {
    if !session.config.checkpoints.enabled {
        return Ok(false);
    }
    let dead = session
        .state
        .read(|store| {
            Ok(store
                .open_checkpoints()?
                .into_iter()
                .any(|c| !record::pid_alive(c.pid)))
        })?
        .unwrap_or(false);
    if !dead {
        return Ok(false);
    }
    let _lock = record::lock(&session.dir)?;
    let settled = record::settle_locked(session);
    // No call follows that would use the walk's published listings.
    walk::forget();
    // An inner `Err` says checkpoints are off for the project: nothing to complete.
    let _ = settled?;
    Ok(true)
}
