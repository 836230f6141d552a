//! The memory of a server that runs for days.
//!
//! glibc's malloc gives a thread that finds the arenas in use an arena of its own, up to
//! eight per core, and memory freed stays in the arena it came from. A server runs a pool of
//! workers, a thread per HTTP request and one per reporting call: each ends up with an arena
//! holding fragments of the calls it served (about 1.5 MiB each, measured with
//! `bench/soak.py`), and there can be 8 × cores of them; on a many-core machine a 20-minute
//! soak of 20 sessions reached 870 MB that way and kept it once idle, while the heap in use
//! stayed under 5 MB. So a server caps the arenas at [`ARENAS`] (its threads mostly wait on
//! commands, files and clients, not on each other's allocations) and, once calls have
//! ended, gives every arena's free pages back to the system ([`trim`], at most every
//! [`TRIM_EVERY`]).
//!
//! Other C libraries keep no per-thread arenas: nothing is done there.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// The most malloc arenas a server uses.
pub const ARENAS: i32 = 2;
/// How often, at most, free memory is given back while calls end.
pub const TRIM_EVERY: Duration = Duration::from_secs(2);

/// Calls ended since the server started.
static ENDED: AtomicU64 = AtomicU64::new(0);

/// Sets the allocator up for a long-running server and starts the thread that gives free
/// memory back; once per process, before the server's threads start.
pub fn tune() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        cap_arenas();
        // Without the thread only the trimming is lost.
        let _ = std::thread::Builder::new()
            .name("trim".into())
            .spawn(trim_loop);
    });
}

/// A call ended: its memory is free now and will be given back at the next trim.
pub fn call_ended() {
    ENDED.fetch_add(1, Ordering::Relaxed);
}

/// Trims every [`TRIM_EVERY`] in which a call ended; runs as long as the process.
fn trim_loop() {
    let mut seen = 0;
    loop {
        std::thread::sleep(TRIM_EVERY);
        let ended = ENDED.load(Ordering::Relaxed);
        if ended != seen {
            seen = ended;
            trim();
        }
    }
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn cap_arenas() {
    // SAFETY: mallopt takes two integers; an unknown or refused setting returns 0 and
    // changes nothing.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, ARENAS);
    }
}

/// Gives the free pages of every arena back to the system.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub fn trim() {
    // SAFETY: malloc_trim takes a size and locks each arena itself.
    unsafe {
        libc::malloc_trim(0);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn cap_arenas() {}

/// Nothing to give back by hand with this C library.
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub fn trim() {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tuning_twice_and_trimming_are_harmless() {
        tune();
        tune();
        call_ended();
        trim();
        let freed: Vec<Vec<u8>> = (0..64).map(|n| vec![n as u8; 64 * 1024]).collect();
        drop(freed);
        trim();
    }
}
