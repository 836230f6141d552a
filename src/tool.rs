//! What a tool is: its definition record ([`ToolDef`]) and what running it
//! yields ([`ToolOutput`]).
//!
//! Every tool lives in one file under `src/tools/` that exports `definition()`; the
//! registry (`src/tools/mod.rs`) lists them. Subcommands, flags, `exec` dispatch,
//! `tinytool tools`, man pages and completions are all derived from these records.

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::session::CallContext;
use crate::truncate::Capture;

/// A tool's handler: runs the call with arguments that already passed the schema checks.
/// An `Err` is an internal failure; problems the caller can fix are an
/// `Ok` output with `is_error` set.
type ExecuteFn = fn(&CallContext, Map<String, Value>) -> anyhow::Result<ToolOutput>;

/// What a call needs permission for, computed from its checked arguments without running
/// it (file tools: each path; bash: the command and what the detectors find; webfetch: the
/// URL). `None` in a definition means one access: the tool's category with its name as
/// the pattern (none at all for tools without a category).
type AccessFn = fn(&CallContext, &Map<String, Value>) -> Vec<Access>;

pub use crate::access::Access;

/// A tool's definition record.
#[derive(Clone, Copy)]
pub struct ToolDef {
    /// Wire name = subcommand = module name (snake_case).
    pub name: &'static str,
    /// One line for `--help` listings and man page titles.
    pub summary: &'static str,
    /// The description a model sees.
    pub description: &'static str,
    /// Permission category (`""` for tools that never ask).
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
