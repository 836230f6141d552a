//! What a call and a project's broker say to each other: one JSON line each way over the
//! broker's Unix socket.

use serde::{Deserialize, Serialize};

use super::problem::Problem;

/// A call's question.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "lowercase")]
pub enum Ask {
    /// The problems of these files as they are on disk now.
    Check {
        /// The files.
        files: Vec<FileAsk>,
        /// How long to wait for a warm server, in milliseconds.
        wait_ms: u64,
        /// How long to wait when the server is starting, in milliseconds.
        cold_wait_ms: u64,
    },
    /// What the broker runs.
    Status,
    /// Stop the server and the broker.
    Stop,
}

/// One file of a check.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FileAsk {
    /// Absolute path.
    pub path: String,
    /// The text before the change, when the call changed it: the problems of that text are
    /// the baseline the result is compared with.
    pub before: Option<String>,
    /// The change deleted the file.
    #[serde(default)]
    pub deleted: bool,
}

/// How far a check got.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Progress {
    /// Every file's problems are those of its text as it is now.
    Fresh,
    /// The time ran out first: the server is starting or still checking.
    Busy,
    /// The server exited or could not start.
    Down,
}

/// The broker's answer to a check.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Checked {
    /// How far it got.
    pub progress: Progress,
    /// What happened, when not fresh (`pyright is still starting`, `the server exited …`).
    pub message: Option<String>,
    /// The server process, when one runs.
    pub pid: Option<i32>,
    /// The time the check took.
    pub elapsed_ms: u64,
    /// One per asked file, in order.
    pub files: Vec<FileProblems>,
    /// Other open files whose problems changed meanwhile.
    pub others: Vec<FileProblems>,
}

/// The problems of one file.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FileProblems {
    /// Absolute path.
    pub path: String,
    /// Its problems now; `None` when they did not arrive in time.
    pub items: Option<Vec<Problem>>,
    /// The problems of its text before the change, when known.
    pub before: Option<Vec<Problem>>,
    /// The text the problems are of (for a file whose disk content the broker read).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
}

/// The broker's answer to `status`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Status {
    /// The language.
    pub language: String,
    /// The server's name.
    pub server: String,
    /// Its command.
    pub command: Vec<String>,
    /// `running`, `starting`, `stopped` (not started yet or idle), or `failed`.
    pub state: String,
    /// Why it is not running, when it is not.
    pub reason: Option<String>,
    /// The server's process.
    pub pid: Option<i32>,
    /// Resident memory of the server's processes, in KiB.
    pub memory_kib: u64,
    /// The broker's process.
    pub broker_pid: u32,
    /// Files open in the server.
    pub open_files: usize,
    /// Times the server was started.
    pub starts: u64,
    /// Milliseconds since the last call.
    pub idle_ms: u64,
    /// The end of the server's stderr.
    pub stderr_tail: String,
}
