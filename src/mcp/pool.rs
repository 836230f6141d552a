//! The bounded pool that runs `tools/call` requests concurrently.
//!
//! [`WORKERS`] threads, whatever the CPU count: calls mostly wait (on processes, the
//! network, the user), so the count bounds concurrency, not CPU use. Calls on one file
//! still serialise through the file locks of the tools.
//!
//! Each job has a key (its request id as JSON text) and a cancellation flag of its own:
//! cancelling a queued job removes it unrun; cancelling a running one sets its flag, and
//! the process runner kills the command's process group. Answers are written by the job
//! itself, so they come in completion order, each with its id.

use std::collections::{HashMap, VecDeque};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::Duration;

use crate::session::CancelFlag;

/// Worker threads of the pool.
pub const WORKERS: usize = 16;

/// One queued call: its key and what the worker's handler needs to run it.
pub struct Job<T> {
    /// The request id as JSON text.
    pub key: String,
    /// The call.
    pub payload: T,
}

struct Queue<T> {
    queued: VecDeque<(Job<T>, CancelFlag)>,
    running: HashMap<String, CancelFlag>,
    closing: bool,
}

/// The queue the workers take jobs from.
pub struct Pool<T> {
    queue: Mutex<Queue<T>>,
    /// Signalled when a job is queued or the pool closes.
    ready: Condvar,
    /// Signalled when a job ends.
    idle: Condvar,
}

impl<T> Default for Pool<T> {
    fn default() -> Self {
        Pool {
            queue: Mutex::new(Queue {
                queued: VecDeque::new(),
                running: HashMap::new(),
                closing: false,
            }),
            ready: Condvar::new(),
            idle: Condvar::new(),
        }
    }
}

impl<T> Pool<T> {
    fn lock(&self) -> MutexGuard<'_, Queue<T>> {
        // A panicking job cannot leave the queue half-updated (every update is one
        // statement), so a poisoned lock is still usable.
        self.queue
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Queues a job; `false` when the pool is closing (the job is dropped).
    pub fn submit(&self, job: Job<T>) -> bool {
        let mut queue = self.lock();
        if queue.closing {
            return false;
        }
        queue.queued.push_back((job, CancelFlag::default()));
        self.ready.notify_one();
        true
    }

    /// Cancels the job of `key`: a queued one is dropped unrun, a running one has its
    /// flag set. Returns whether there was such a job.
    pub fn cancel(&self, key: &str) -> bool {
        let mut queue = self.lock();
        if let Some(at) = queue.queued.iter().position(|(job, _)| job.key == key) {
            queue.queued.remove(at);
            return true;
        }
        match queue.running.get(key) {
            Some(flag) => {
                flag.set();
                true
            }
            None => false,
        }
    }

    /// Cancels every job whose key starts with `prefix` (a closed HTTP session's calls).
    pub fn cancel_prefix(&self, prefix: &str) {
        let mut queue = self.lock();
        queue.queued.retain(|(job, _)| !job.key.starts_with(prefix));
        for (key, flag) in &queue.running {
            if key.starts_with(prefix) {
                flag.set();
            }
        }
    }

    /// Whether a job of `key` is queued or running.
    #[cfg(test)]
    pub fn has(&self, key: &str) -> bool {
        let queue = self.lock();
        queue.running.contains_key(key) || queue.queued.iter().any(|(job, _)| job.key == key)
    }

    /// No more jobs are accepted; the workers end once the queue is empty.
    pub fn close(&self) {
        self.lock().closing = true;
        self.ready.notify_all();
    }

    /// Drops every queued job and cancels every running one, then closes the pool.
    pub fn cancel_all(&self) {
        let mut queue = self.lock();
        queue.queued.clear();
        for flag in queue.running.values() {
            flag.set();
        }
        queue.closing = true;
        self.ready.notify_all();
    }

    /// Whether no job is queued or running.
    pub fn is_idle(&self) -> bool {
        let queue = self.lock();
        queue.queued.is_empty() && queue.running.is_empty()
    }

    /// Waits up to `limit` for every job to end.
    pub fn wait_idle(&self, limit: Duration) {
        let deadline = std::time::Instant::now() + limit;
        let mut queue = self.lock();
        while !(queue.queued.is_empty() && queue.running.is_empty()) {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            if left.is_zero() {
                return;
            }
            queue = match self.idle.wait_timeout(queue, left) {
                Ok((guard, _)) => guard,
                Err(poisoned) => poisoned.into_inner().0,
            };
        }
    }

    /// One worker: runs jobs with `handler` until the pool is closed and empty.
    pub fn work(&self, handler: &dyn Fn(T, CancelFlag)) {
        loop {
            let (job, flag) = {
                let mut queue = self.lock();
                loop {
                    if let Some((job, flag)) = queue.queued.pop_front() {
                        queue.running.insert(job.key.clone(), flag.clone());
                        break (job, flag);
                    }
                    if queue.closing {
                        return;
                    }
                    queue = match self.ready.wait(queue) {
                        Ok(guard) => guard,
                        Err(poisoned) => poisoned.into_inner(),
                    };
                }
            };
            let key = job.key;
            // A panicking call must not take the worker (and the request's answer) down
            // silently: the job's own code answers; the worker survives.
            let payload = job.payload;
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                handler(payload, flag);
            }));
            self.lock().running.remove(&key);
            self.idle.notify_all();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn a_cancelled_queued_job_never_runs_and_the_rest_do() {
        let pool = Pool::default();
        let ran = AtomicUsize::new(0);
        for key in ["1", "2", "3"] {
            pool.submit(Job {
                key: key.into(),
                payload: if key == "2" { 100 } else { 1 },
            });
        }
        assert!(pool.cancel("2"));
        assert!(!pool.has("2"));
        pool.close();
        std::thread::scope(|scope| {
            for _ in 0..2 {
                scope.spawn(|| {
                    pool.work(&|add: usize, _| {
                        ran.fetch_add(add, Ordering::SeqCst);
                    })
                });
            }
        });
        assert_eq!(ran.load(Ordering::SeqCst), 2);
        assert!(pool.is_idle());
    }

    #[test]
    fn a_running_job_sees_its_cancellation() {
        let pool = Pool::default();
        let (tx, rx) = std::sync::mpsc::channel();
        pool.submit(Job {
            key: "7".into(),
            payload: (),
        });
        std::thread::scope(|scope| {
            scope.spawn(|| {
                pool.work(&|(), flag: CancelFlag| {
                    while !flag.is_set() {
                        std::thread::sleep(Duration::from_millis(5));
                    }
                    tx.send(()).unwrap();
                })
            });
            while !pool.lock().running.contains_key("7") {
                std::thread::sleep(Duration::from_millis(5));
            }
            assert!(pool.cancel("7"));
            rx.recv().unwrap();
            pool.close();
        });
    }
}
