//! Progress notifications: a call whose request carries `_meta.progressToken` hears from
//! the server every [`EVERY`] from the moment it is queued until its answer, so a client
//! that resets its time-out on progress (the TypeScript SDK's `resetTimeoutOnProgress`)
//! never gives up on a call that is only long.
//!
//! ```text
//! {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":TOKEN,
//!  "progress":SECONDS,"message":TEXT}}
//! ```
//!
//! `progress` is the seconds since the call was received, in steps of [`EVERY`] (it grows
//! with every notification, as the protocol asks); `message` says whether the call waits
//! for a worker or runs, for how long, and for commands the lines of output so far. The
//! last notification is sent before the answer, never after it.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::Out;
use crate::session::Progress;

/// How often a call with a progress token reports progress.
pub const EVERY: Duration = Duration::from_secs(2);

/// What the reporting thread knows of its call.
#[derive(Default)]
struct Seen {
    /// Milliseconds from receipt to the start of the run, plus one (0: still queued).
    started: AtomicU64,
    /// Lines of output so far, when the call runs a command that counts them.
    lines: AtomicU64,
    counted: AtomicBool,
}

/// The progress notifications of one call, sent by a thread of its own until
/// [`Reporter::finish`] or until the reporter is dropped (a queued call cancelled).
pub struct Reporter {
    seen: Arc<Seen>,
    received: Instant,
    /// Dropped to stop the thread.
    alive: Option<mpsc::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Reporter {
    /// Starts reporting on `out` under `token`; the call was received now.
    pub fn start(out: Out, token: Value) -> Reporter {
        let seen = Arc::new(Seen::default());
        let received = Instant::now();
        let (alive, stop) = mpsc::channel::<()>();
        let shared = seen.clone();
        let thread = std::thread::Builder::new()
            .name("progress".into())
            .spawn(move || {
                let mut step = 0u64;
                while let Err(mpsc::RecvTimeoutError::Timeout) = stop.recv_timeout(EVERY) {
                    step += 1;
                    out.send(&json!({
                        "jsonrpc": "2.0",
                        "method": "notifications/progress",
                        "params": {
                            "progressToken": token,
                            "progress": step * EVERY.as_secs(),
                            "message": shared.message(received),
                        },
                    }));
                }
            })
            // Without a thread the call runs all the same, unreported.
            .ok();
        Reporter {
            seen,
            received,
            alive: Some(alive),
            thread,
        }
    }

    /// The call starts running: the receiver of what its command reports (the lines of
    /// output so far).
    pub fn running(&self) -> Arc<dyn Fn(&Progress) + Send + Sync> {
        let millis = u64::try_from(self.received.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.seen
            .started
            .store(millis.saturating_add(1), Ordering::Relaxed);
        let seen = self.seen.clone();
        Arc::new(move |progress: &Progress| {
            seen.lines.store(progress.lines, Ordering::Relaxed);
            seen.counted.store(true, Ordering::Relaxed);
        })
    }

    /// The call ended: stops the thread and waits for it, so that no notification follows
    /// the answer.
    pub fn finish(mut self) {
        self.alive = None;
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Seen {
    /// The notification's message.
    fn message(&self, received: Instant) -> String {
        let total = received.elapsed();
        let started = self.started.load(Ordering::Relaxed);
        if started == 0 {
            return format!(
                "queued for {} s, waiting for a free worker",
                total.as_secs()
            );
        }
        let running = total.saturating_sub(Duration::from_millis(started - 1));
        if self.counted.load(Ordering::Relaxed) {
            format!(
                "running for {} s; {} lines of output so far",
                running.as_secs(),
                self.lines.load(Ordering::Relaxed)
            )
        } else {
            format!("running for {} s", running.as_secs())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    #[test]
    fn a_reporter_says_queued_then_running_and_stops_before_the_answer() {
        let sent = Arc::new(Mutex::new(Vec::<Value>::new()));
        let out = {
            let sent = sent.clone();
            Out::replies_only(move |message: &Value| sent.lock().unwrap().push(message.clone()))
        };
        let reporter = Reporter::start(out, json!("tok"));
        let seen = reporter.seen.clone();
        assert!(
            seen.message(reporter.received)
                .starts_with("queued for 0 s")
        );
        let sink = reporter.running();
        sink(&Progress {
            elapsed: Duration::from_secs(1),
            lines: 3,
        });
        assert_eq!(
            seen.message(reporter.received),
            "running for 0 s; 3 lines of output so far"
        );
        reporter.finish();
        let count = sent.lock().unwrap().len();
        std::thread::sleep(Duration::from_millis(50));
        assert_eq!(
            sent.lock().unwrap().len(),
            count,
            "a notification after finish"
        );
    }
}
