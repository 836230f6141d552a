//! The one exit-status table of tinytool (documented in `tinytool(1)`).
//!
//! Everything below `main` returns values; only `main` turns an [`ExitStatus`] into a
//! process exit code.

/// How a command ended, as seen by the shell.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum ExitStatus {
    /// 0: the call succeeded (or a stream was processed).
    Success,
    /// 1: the tool reported an error (`is_error: true`).
    ToolError,
    /// 2: usage error: bad flags, unknown tool, unreadable input, a policy that does not load.
    Usage,
    /// 3: the policy refused the call.
    Refused,
}

impl ExitStatus {
    /// Every status, in the order of their codes (the table of `--help` and `tinytool(1)`).
    pub const ALL: [ExitStatus; 4] = [
        ExitStatus::Success,
        ExitStatus::ToolError,
        ExitStatus::Usage,
        ExitStatus::Refused,
    ];

    /// What the status means, in one line, for the documentation.
    pub fn meaning(self) -> &'static str {
        match self {
            ExitStatus::Success => "success (exec --jsonl: the stream was processed)",
            ExitStatus::ToolError => "the tool reported an error (is_error)",
            ExitStatus::Usage => "usage error: bad flags, unknown tool, unreadable input",
            ExitStatus::Refused => "refused by the policy",
        }
    }

    /// The numeric process exit code.
    pub fn code(self) -> i32 {
        match self {
            ExitStatus::Success => 0,
            ExitStatus::ToolError => 1,
            ExitStatus::Usage => 2,
            ExitStatus::Refused => 3,
        }
    }
}
