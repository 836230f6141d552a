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
//! `progress` is the whole seconds since the request arrived, waiting included; the
//! notifications are at least [`EVERY`] apart, so the value grows with each one, as the
//! protocol asks. While the call waits, one thread of the server tells every waiting call
//! how many calls start before it ([`queued`]); once it runs, a [`Reporter`] of its own
//! says for how long, and for commands the lines of output so far. The last notification
//! is sent before the answer, never after it.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::Out;
use crate::session::Progress;

/// How often a call with a progress token reports progress.
pub const EVERY: Duration = Duration::from_secs(2);

/// The notification of a call still waiting for one of `workers`: `ahead` calls start
/// before it.
pub fn queued(token: &Value, received: Instant, ahead: usize, workers: usize) -> Value {
    let waited = received.elapsed().as_secs();
    let before = match ahead {
        1 => "1 call starts".to_string(),
        n => format!("{n} calls start"),
    };
    notification(
        token,
        waited,
        format!("queued for {waited} s: {before} before this one ({workers} run at once)"),
    )
}

fn notification(token: &Value, progress: u64, message: String) -> Value {
    json!({
        "jsonrpc": "2.0",
        "method": "notifications/progress",
        "params": {"progressToken": token, "progress": progress, "message": message},
    })
}

/// What the reporting thread knows of its running call.
#[derive(Default)]
struct Seen {
    /// Lines of output so far, when the call runs a command that counts them.
    lines: AtomicU64,
    counted: AtomicBool,
}

/// The progress notifications of one running call, sent by a thread of its own until
/// [`Reporter::finish`].
pub struct Reporter {
    seen: Arc<Seen>,
    /// Dropped to stop the thread.
    alive: Option<mpsc::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Reporter {
    /// Starts reporting on `out` under `token` for a call received at `received` that
    /// starts running now.
    pub fn start(out: Out, token: Value, received: Instant) -> Reporter {
        let seen = Arc::new(Seen::default());
        let started = Instant::now();
        let (alive, stop) = mpsc::channel::<()>();
        let shared = seen.clone();
        let thread = std::thread::Builder::new()
            .name("progress".into())
            .spawn(move || {
                while let Err(mpsc::RecvTimeoutError::Timeout) = stop.recv_timeout(EVERY) {
                    let message = shared.message(started.elapsed());
                    out.send(&notification(&token, received.elapsed().as_secs(), message));
                }
            })
            // Without a thread the call runs all the same, unreported.
            .ok();
        Reporter {
            seen,
            alive: Some(alive),
            thread,
        }
    }

    /// The receiver of what the call's command reports (the lines of output so far).
    pub fn sink(&self) -> Arc<dyn Fn(&Progress) + Send + Sync> {
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
    /// The notification's message, the call having run for `running`.
    fn message(&self, running: Duration) -> String {
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
    fn a_waiting_call_hears_its_place() {
        let notice = queued(&json!("tok"), Instant::now(), 1, 16);
        assert_eq!(notice["params"]["progressToken"], "tok");
        assert_eq!(
            notice["params"]["message"],
            "queued for 0 s: 1 call starts before this one (16 run at once)"
        );
    }

    #[test]
    fn a_reporter_counts_lines_and_stops_before_the_answer() {
        let sent = Arc::new(Mutex::new(Vec::<Value>::new()));
        let out = {
            let sent = sent.clone();
            Out::replies_only(move |message: &Value| sent.lock().unwrap().push(message.clone()))
        };
        let reporter = Reporter::start(out, json!("tok"), Instant::now());
        let seen = reporter.seen.clone();
        assert_eq!(seen.message(Duration::ZERO), "running for 0 s");
        let sink = reporter.sink();
        sink(&Progress {
            elapsed: Duration::from_secs(1),
            lines: 3,
        });
        assert_eq!(
            seen.message(Duration::from_secs(4)),
            "running for 4 s; 3 lines of output so far"
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
