//! What a tool is: its definition record ([`ToolDef`], spec 8.1's `Def`) and what running it
//! yields ([`ToolOutput`]).
//!
//! Every tool lives in one file under `src/tools/` that exports `definition()`; the
//! registry (`src/tools/mod.rs`) lists them. Subcommands, flags, `exec` dispatch,
//! `tinytool tools`, man pages and completions are all derived from these records.

use std::path::PathBuf;

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::session::CallContext;
use crate::truncate::Capture;

/// A tool's handler: runs the call with arguments that already passed the schema checks.
/// An `Err` is an internal failure (spec 8.1 step 6); problems the caller can fix are an
/// `Ok` output with `is_error` set.
pub type ExecuteFn = fn(&CallContext, Map<String, Value>) -> anyhow::Result<ToolOutput>;

/// What a call needs permission for, computed from its checked arguments without running
/// it (file tools: each path; bash: the command and what the detectors find; webfetch: the
/// URL). `None` in a definition means one access: the tool's category with its name as
/// the pattern (none at all for tools without a category).
pub type AccessFn = fn(&CallContext, &Map<String, Value>) -> Vec<Access>;

/// One permission a call needs; the policy decides each in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Access {
    /// Permission category (spec 8.4): `read`, `edit`, `shell`, `secret-shell`, ...
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
    /// options dropped, also matched by deny and ask rules (DESIGN §4).
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

    /// A file access: `input` is resolved against the directory, and the pattern is the
    /// path relative to it (forward slashes, symlinks resolved), or absolute outside it.
    pub fn path(ctx: &CallContext, permission: impl Into<String>, input: &str) -> Self {
        Access::resolved(ctx, permission, ctx.resolve(input))
    }

    /// A file access for a path already resolved (see `paths`): the pattern is the path
    /// relative to the directory, or absolute outside it.
    pub fn resolved(ctx: &CallContext, permission: impl Into<String>, path: PathBuf) -> Self {
        Access {
            permission: permission.into(),
            pattern: ctx.display(&path),
            reason: None,
            path: Some(path),
            normalized: None,
            whole: false,
        }
    }

    /// The file access of a call whose path is its `file_path` argument.
    pub fn file_path(
        ctx: &CallContext,
        permission: &str,
        args: &Map<String, Value>,
    ) -> Vec<Access> {
        let path = args
            .get("file_path")
            .and_then(Value::as_str)
            .unwrap_or_default();
        vec![Access::path(ctx, permission, path)]
    }

    /// Adds the reason.
    pub fn because(mut self, reason: impl Into<String>) -> Self {
        self.reason = Some(reason.into());
        self
    }
}

/// A tool's definition record.
#[derive(Clone, Copy)]
pub struct ToolDef {
    /// Wire name = subcommand = module name (snake_case).
    pub name: &'static str,
    /// One line for `--help` listings and man page titles.
    pub summary: &'static str,
    /// The description a model sees.
    pub description: &'static str,
    /// Permission category of spec 8.4 (`""` for tools that never ask).
    pub permission: &'static str,
    /// JSON Schema of the parameters (see `schema`).
    pub schema: fn() -> Value,
    /// The handler.
    pub execute: ExecuteFn,
    /// What a call needs permission for (see [`AccessFn`]).
    pub access: Option<AccessFn>,
    /// Extra documentation for the tool's man page.
    pub doc: ToolDoc,
}

impl ToolDef {
    /// The accesses a call with these (checked) arguments needs, in order.
    pub fn accesses(&self, ctx: &CallContext, args: &Map<String, Value>) -> Vec<Access> {
        match self.access {
            Some(access) => access(ctx, args),
            None if self.permission.is_empty() => Vec::new(),
            None => vec![Access::new(self.permission, self.name)],
        }
    }
}

/// Documentation a man page needs beyond the schema.
#[derive(Debug, Clone, Copy, Default)]
pub struct ToolDoc {
    /// The shape of a successful output.
    pub output: &'static str,
    /// The errors a caller can get and what to do about them.
    pub errors: &'static str,
    /// Example command lines, each with a one-line explanation: `(explanation, command)`.
    pub examples: &'static [(&'static str, &'static str)],
}

impl std::fmt::Debug for ToolDef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolDef")
            .field("name", &self.name)
            .field("permission", &self.permission)
            .finish_non_exhaustive()
    }
}

/// The text a tool produced.
#[derive(Debug)]
pub enum Body {
    /// Text held in memory; the registry previews it when it is over the limits.
    Text(String),
    /// Text streamed into a bounded capture (read, bash): rendered by the registry.
    Captured(Box<Capture>),
    /// An image as a data URI: never previewed.
    Image(String),
    /// Text the tool already fit to the output limits itself (read's pages): never
    /// previewed.
    Paged(String),
}

/// What running a tool yields.
#[derive(Debug)]
pub struct ToolOutput {
    /// The output text.
    pub body: Body,
    /// Whether the tool reported an error the caller can act on.
    pub is_error: bool,
    /// Structured facts about the call (`metadata` of the result).
    pub metadata: Map<String, Value>,
}

impl ToolOutput {
    /// A successful text output.
    pub fn text(text: impl Into<String>) -> Self {
        ToolOutput {
            body: Body::Text(text.into()),
            is_error: false,
            metadata: Map::new(),
        }
    }

    /// An error the caller can fix; the text says what was wrong and what to do.
    pub fn error(text: impl Into<String>) -> Self {
        ToolOutput {
            body: Body::Text(text.into()),
            is_error: true,
            metadata: Map::new(),
        }
    }

    /// A successful output streamed into a capture.
    pub fn captured(capture: Capture) -> Self {
        ToolOutput {
            body: Body::Captured(Box::new(capture)),
            is_error: false,
            metadata: Map::new(),
        }
    }

    /// Adds a metadata entry.
    pub fn with(mut self, key: &str, value: impl Into<Value>) -> Self {
        self.metadata.insert(key.to_string(), value.into());
        self
    }
}

/// Deserializes checked arguments into a tool's argument type; a mismatch the schema did
/// not catch becomes the reference's `Invalid arguments: …` error.
pub fn parse_args<T: DeserializeOwned>(args: Map<String, Value>) -> Result<T, ToolOutput> {
    serde_json::from_value(Value::Object(args))
        .map_err(|err| ToolOutput::error(format!("Invalid arguments: {err}")))
}
