//! One permission a call needs, as the policy judges it: a category and a pattern (a
//! path, a command, a URL), with what the shell and file rules add.

use std::path::PathBuf;

/// One permission a call needs; the policy decides each in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Access {
    /// Permission category: `read`, `edit`, `shell`, `secret-shell`, ...
    pub permission: String,
    /// What rule patterns are matched against: a path relative to the directory (absolute
    /// outside it), a command, a URL, or the tool name.
    pub pattern: String,
    /// Why the permission is needed, when it is not obvious ("destructive: git push --force").
    pub reason: Option<String>,
    /// The resolved path, for file accesses: the policy adds `external_directory` for paths
    /// outside the directory and applies the built-in protections.
    pub path: Option<PathBuf>,
    /// For one command of a shell line: the command with wrappers and git's global
    /// options dropped, also matched by deny and ask rules.
    pub normalized: Option<String>,
    /// A shell line that could not be split into commands: judged whole, and only a
    /// rule whose pattern is `*` can allow it.
    pub whole: bool,
}

impl Access {
    /// An access with a plain pattern.
    pub fn new(permission: impl Into<String>, pattern: impl Into<String>) -> Self {
        Access {
            permission: permission.into(),
            pattern: pattern.into(),
            reason: None,
            path: None,
            normalized: None,
            whole: false,
        }
    }

    /// Adds the reason.
    pub fn because(mut self, reason: impl Into<String>) -> Self {
        self.reason = Some(reason.into());
        self
    }
}
