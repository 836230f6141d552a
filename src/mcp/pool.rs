//! The bounded, fair pool that runs `tools/call` requests concurrently.
//!
//! [`WORKERS`] threads, whatever the CPU count: calls mostly wait (on processes, the
//! network, the user), so the count bounds concurrency, not CPU use. Calls on one file
//! still serialise through the file locks of the tools.
//!
//! Calls beyond the running ones wait in a queue with one lane per client session (the
//! stdio connection, an HTTP session, the stateless requests of one client address):
//! workers take the next call from each lane in turn, round-robin, so a session that
//! queued two hundred calls delays another session's call by at most one call per lane,
//! not by all of its own. The queue is bounded: at most [`MAX_QUEUED_PER_LANE`] calls
//! wait in one lane and [`MAX_QUEUED`] in all; a call beyond either is refused at once
//! ([`Refused`]), which the protocol layer answers with a JSON-RPC error the client can
//! retry (never by dropping the connection), or waits for room when its transport can
//! hold its client back ([`Pool::submit_when_room`]: stdio stops reading).
//!
//! Each job has a key (its connection's prefix and request id) and a cancellation flag
//! of its own: cancelling a queued job removes it unrun; cancelling a running one sets its
//! flag, and the process runner kills the command's process group. Answers are written by
//! the job itself, so they come in completion order, each with its id.

use std::collections::{HashMap, VecDeque};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::Duration;

use crate::session::CancelFlag;

/// Worker threads of the pool: the calls that run at once.
pub const WORKERS: usize = 16;
/// Calls that may wait in one lane (one session) beyond the running ones.
pub const MAX_QUEUED_PER_LANE: usize = 256;
/// Calls that may wait in all lanes together.
pub const MAX_QUEUED: usize = 1024;

/// One queued call: its key, its lane and what the worker's handler needs to run it.
pub struct Job<T> {
    /// The connection's prefix and the request id as JSON text.
    pub key: String,
    /// The client session it is queued for (round-robin unit).
    pub lane: String,
    /// The call.
    pub payload: T,
}

/// Why a job was not queued.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refused {
    /// The pool is shutting down: nobody would read an answer.
    Closing,
    /// Its lane already holds [`MAX_QUEUED_PER_LANE`] waiting calls.
    LaneFull,
    /// The queue already holds [`MAX_QUEUED`] waiting calls.
    Full,
}

struct Queue<T> {
    /// Waiting jobs by lane, each lane in arrival order.
    lanes: HashMap<String, VecDeque<(Job<T>, CancelFlag)>>,
    /// The lanes that have waiting jobs, in the order they are served next.
    turn: VecDeque<String>,
    /// Waiting jobs in all lanes.
    waiting: usize,
    running: HashMap<String, CancelFlag>,
    closing: bool,
}

impl<T> Queue<T> {
    /// Why a job of `lane` cannot be queued now, if it cannot.
    fn refusal(&self, lane: &str) -> Option<Refused> {
        if self.closing {
            return Some(Refused::Closing);
        }
        // A job that a free worker takes at once never really waits: only the jobs
        // beyond the running ones count against the bounds.
        if WORKERS > self.running.len() + self.waiting {
            return None;
        }
        if self.waiting >= MAX_QUEUED {
            return Some(Refused::Full);
        }
        if self.lanes.get(lane).map_or(0, VecDeque::len) >= MAX_QUEUED_PER_LANE {
            return Some(Refused::LaneFull);
        }
        None
    }

    /// The next job in round-robin order: the first lane's oldest, that lane then going
    /// to the back of the turn.
    fn pop(&mut self) -> Option<(Job<T>, CancelFlag)> {
        while let Some(lane) = self.turn.pop_front() {
            let Some(jobs) = self.lanes.get_mut(&lane) else {
                continue;
            };
            let next = jobs.pop_front();
            if jobs.is_empty() {
                self.lanes.remove(&lane);
            } else {
                self.turn.push_back(lane);
            }
            if let Some(next) = next {
                self.waiting -= 1;
                return Some(next);
            }
        }
        None
    }

    /// Removes the waiting jobs `drop` selects; returns how many.
    fn remove(&mut self, mut drop: impl FnMut(&Job<T>) -> bool) -> usize {
        let mut removed = 0;
        for jobs in self.lanes.values_mut() {
            let before = jobs.len();
            jobs.retain(|(job, _)| !drop(job));
            removed += before - jobs.len();
        }
        self.lanes.retain(|_, jobs| !jobs.is_empty());
        let lanes = &self.lanes;
        self.turn.retain(|lane| lanes.contains_key(lane));
        self.waiting -= removed;
        removed
    }

    /// Every waiting job with the number of jobs that will start before it.
    fn positions(&self) -> Vec<(&Job<T>, usize)> {
        let mut out = Vec::with_capacity(self.waiting);
        for (turn_at, lane) in self.turn.iter().enumerate() {
            let Some(jobs) = self.lanes.get(lane) else {
                continue;
            };
            for (depth, (job, _)) in jobs.iter().enumerate() {
                // Before the lane's job at `depth` starts, every lane ahead in the turn
                // gives up to depth + 1 jobs, every lane behind up to depth, and its own
                // lane the depth jobs in front of it.
                let others: usize = self
                    .turn
                    .iter()
                    .enumerate()
                    .filter(|(at, _)| *at != turn_at)
                    .filter_map(|(at, other)| {
                        let rounds = if at < turn_at { depth + 1 } else { depth };
                        self.lanes.get(other).map(|o| o.len().min(rounds))
                    })
                    .sum();
                out.push((job, others + depth));
            }
        }
        out
    }
}

/// The queue the workers take jobs from.
pub struct Pool<T> {
    queue: Mutex<Queue<T>>,
    /// Signalled when a job is queued or the pool closes.
    ready: Condvar,
    /// Signalled when a job ends or the pool closes.
    idle: Condvar,
    /// Signalled when a waiting job leaves the queue (taken, cancelled) or the pool
    /// closes: a submitter waiting for room tries again.
    room: Condvar,
}

impl<T> Default for Pool<T> {
    fn default() -> Self {
        Pool {
            queue: Mutex::new(Queue {
                lanes: HashMap::new(),
                turn: VecDeque::new(),
                waiting: 0,
                running: HashMap::new(),
                closing: false,
            }),
            ready: Condvar::new(),
            idle: Condvar::new(),
            room: Condvar::new(),
        }
    }
}

impl<T> Pool<T> {
    fn lock(&self) -> MutexGuard<'_, Queue<T>> {
        // A panicking job cannot leave the queue half-updated (the lock is never held
        // while a job runs), so a poisoned lock is still usable.
        self.queue
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Queues a job at the back of its lane, or says why not (the job is dropped).
    pub fn submit(&self, job: Job<T>) -> Result<(), Refused> {
        let queue = self.lock();
        if let Some(refused) = queue.refusal(&job.lane) {
            return Err(refused);
        }
        self.enqueue(queue, job);
        Ok(())
    }

    /// Queues a job at the back of its lane, first waiting as long as the queue is full
    /// (back-pressure for a transport that can stop reading its client); refused only
    /// once the pool is closing.
    pub fn submit_when_room(&self, job: Job<T>) -> Result<(), Refused> {
        let mut queue = self.lock();
        loop {
            match queue.refusal(&job.lane) {
                None => break,
                Some(Refused::Closing) => return Err(Refused::Closing),
                Some(_) => {
                    queue = match self.room.wait(queue) {
                        Ok(guard) => guard,
                        Err(poisoned) => poisoned.into_inner(),
                    };
                }
            }
        }
        self.enqueue(queue, job);
        Ok(())
    }

    fn enqueue(&self, mut queue: MutexGuard<'_, Queue<T>>, job: Job<T>) {
        let lane = job.lane.clone();
        let jobs = queue.lanes.entry(lane.clone()).or_default();
        let new_lane = jobs.is_empty();
        jobs.push_back((job, CancelFlag::default()));
        if new_lane {
            queue.turn.push_back(lane);
        }
        queue.waiting += 1;
        self.ready.notify_one();
    }

    /// Cancels the job of `key`: a queued one is dropped unrun, a running one has its
    /// flag set. Returns whether there was such a job.
    pub fn cancel(&self, key: &str) -> bool {
        let mut queue = self.lock();
        if queue.remove(|job| job.key == key) > 0 {
            self.idle.notify_all();
            self.room.notify_all();
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
        queue.remove(|job| job.key.starts_with(prefix));
        for (key, flag) in &queue.running {
            if key.starts_with(prefix) {
                flag.set();
            }
        }
        self.idle.notify_all();
        self.room.notify_all();
    }

    /// Whether a job of `key` is queued or running.
    #[cfg(test)]
    pub fn has(&self, key: &str) -> bool {
        let queue = self.lock();
        queue.running.contains_key(key)
            || queue
                .lanes
                .values()
                .any(|jobs| jobs.iter().any(|(job, _)| job.key == key))
    }

    /// Calls `each` with every waiting job and the number of jobs that will start before
    /// it (under the queue's lock: `each` must be quick and must not use the pool).
    pub fn for_each_waiting(&self, mut each: impl FnMut(&T, usize)) {
        let queue = self.lock();
        for (job, ahead) in queue.positions() {
            each(&job.payload, ahead);
        }
    }

    /// No more jobs are accepted; the workers end once the queue is empty.
    pub fn close(&self) {
        self.lock().closing = true;
        self.ready.notify_all();
        self.idle.notify_all();
        self.room.notify_all();
    }

    /// Drops every queued job and cancels every running one, then closes the pool.
    pub fn cancel_all(&self) {
        let mut queue = self.lock();
        queue.remove(|_| true);
        for flag in queue.running.values() {
            flag.set();
        }
        queue.closing = true;
        self.ready.notify_all();
        self.idle.notify_all();
        self.room.notify_all();
    }

    /// Whether no job is queued or running.
    pub fn is_idle(&self) -> bool {
        let queue = self.lock();
        queue.waiting == 0 && queue.running.is_empty()
    }

    /// Waits up to `limit` for every job to end.
    pub fn wait_idle(&self, limit: Duration) {
        let deadline = std::time::Instant::now() + limit;
        let mut queue = self.lock();
        while !(queue.waiting == 0 && queue.running.is_empty()) {
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

    /// Sleeps up to `limit`; returns early, `false`, once the pool is closed.
    pub fn pause(&self, limit: Duration) -> bool {
        let deadline = std::time::Instant::now() + limit;
        let mut queue = self.lock();
        while !queue.closing {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            if left.is_zero() {
                return true;
            }
            queue = match self.idle.wait_timeout(queue, left) {
                Ok((guard, _)) => guard,
                Err(poisoned) => poisoned.into_inner().0,
            };
        }
        false
    }

    /// One worker: runs jobs with `handler` until the pool is closed and empty.
    pub fn work(&self, handler: &dyn Fn(T, CancelFlag)) {
        loop {
            let (job, flag) = {
                let mut queue = self.lock();
                loop {
                    if let Some((job, flag)) = queue.pop() {
                        queue.running.insert(job.key.clone(), flag.clone());
                        self.room.notify_all();
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
            self.room.notify_all();
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
                lane: "a".into(),
                payload: if key == "2" { 100 } else { 1 },
            })
            .unwrap();
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
            lane: "a".into(),
            payload: (),
        })
        .unwrap();
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

    fn job(key: &str, lane: &str) -> Job<String> {
        Job {
            key: key.into(),
            lane: lane.into(),
            payload: key.into(),
        }
    }

    #[test]
    fn lanes_take_turns_so_a_busy_session_cannot_starve_another() {
        let pool = Pool::default();
        for n in 0..5 {
            pool.submit(job(&format!("a{n}"), "a")).unwrap();
        }
        pool.submit(job("b0", "b")).unwrap();
        pool.submit(job("b1", "b")).unwrap();
        pool.submit(job("c0", "c")).unwrap();
        let mut ahead = Vec::new();
        pool.for_each_waiting(|key, n| ahead.push((key.clone(), n)));
        ahead.sort_by_key(|(_, n)| *n);
        let order: Vec<&str> = ahead.iter().map(|(key, _)| key.as_str()).collect();
        assert_eq!(order, ["a0", "b0", "c0", "a1", "b1", "a2", "a3", "a4"]);
        assert_eq!(
            ahead.iter().map(|(_, n)| *n).collect::<Vec<_>>(),
            (0..8).collect::<Vec<_>>()
        );
        // One worker takes them in exactly that order.
        pool.close();
        let ran = Mutex::new(Vec::new());
        pool.work(&|key: String, _| ran.lock().unwrap().push(key));
        assert_eq!(*ran.lock().unwrap(), order);
    }

    #[test]
    fn a_full_lane_or_queue_is_refused_and_others_still_get_in() {
        let pool = Pool::default();
        // No worker runs here, so every job waits.
        for n in 0..MAX_QUEUED_PER_LANE {
            pool.submit(job(&format!("a{n}"), "a")).unwrap();
        }
        assert_eq!(pool.submit(job("a-more", "a")), Err(Refused::LaneFull));
        pool.submit(job("b0", "b")).unwrap();
        let mut lane = 0;
        loop {
            let key = format!("x{lane}");
            match pool.submit(job(&key, &format!("lane{}", lane / 100))) {
                Ok(()) => lane += 1,
                Err(refused) => {
                    assert_eq!(refused, Refused::Full);
                    break;
                }
            }
        }
        assert_eq!(MAX_QUEUED_PER_LANE + 1 + lane, MAX_QUEUED);
        // A cancelled job makes room.
        assert!(pool.cancel("b0"));
        pool.submit(job("c0", "c")).unwrap();
        pool.cancel_all();
        assert_eq!(pool.submit(job("late", "c")), Err(Refused::Closing));
        assert!(pool.is_idle());
    }
}
