//! What a tool is: its definition record ([`ToolDef`]) and what running it
//! yields ([`ToolOutput`]).
//!
//! Every tool lives in one file under `src/tools/` that exports `definition()`; the
//! registry (`src/tools/mod.rs`) lists them. Subcommands, flags, `exec` dispatch,
//! `tinytool tools`, man pages and completions are all derived from these records.

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::session::{CallContext, Session};
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

/// A check of a call's arguments before the policy is asked (see [`ToolDef::precheck`]):
/// the message of a call that cannot be right.
type PrecheckFn = fn(&Map<String, Value>) -> Option<String>;

/// Whether a call may change the project, and so runs inside a checkpoint: what the
/// checkpoint shows and covers (`None`: no checkpoint). See [`ToolDef::checkpoint`].
type CheckpointFn = fn(&Session, &Map<String, Value>) -> Option<Checkpoint>;

/// A call's checkpoint, as its tool's rule sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checkpoint {
    /// The command or the paths, in words.
    pub shown: String,
    /// What it covers.
    pub covers: Covers,
}

/// What a call's checkpoint covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Covers {
    /// Whatever changes in the project while the call runs (a command: it may change any
    /// file, and only a walk tells which).
    Project,
    /// Exactly the files of the call's `edit` accesses (a file tool changes those and
    /// nothing else), so calls running beside it never share its checkpoint.
    EditedFiles,
}

/// The longest path the kernel accepts (`PATH_MAX`, terminating NUL included).
const MAX_PATH_BYTES: usize = 4095;

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
    /// Checks, before the policy is asked, the arguments a call's permission pattern is
    /// made of, where they decide what would be asked: syntax only (a URL that is no URL).
    /// `None`: the file paths' syntax ([`ToolDef::check_arguments`]).
    pub precheck: Option<PrecheckFn>,
    /// Whether a call may change the project (the file tools, a command that is not
    /// read-only), and what its checkpoint shows; `None`: the tool changes no file.
    pub checkpoint: Option<CheckpointFn>,
    /// What the tool needs to work that a configuration may lack (a configured subagent,
    /// a skill, someone to answer); `None`: it works everywhere.
    pub needs: Option<Needs>,
    /// What follows a call whose checkpoint saw it change files (bash's diagnostics);
    /// `None`: nothing.
    pub after_changes: Option<AfterChanges>,
    /// Extra documentation for the tool's man page.
    pub doc: ToolDoc,
}

/// Work on the files a call changed, known once its checkpoint is closed
/// ([`ToolDef::after_changes`]).
#[derive(Clone, Copy)]
pub struct AfterChanges {
    /// Whether the session wants it (a config setting): the changed files' earlier
    /// contents are read from the checkpoint only then.
    pub wanted: fn(&Session) -> bool,
    /// Adds to the call's output what it has to say about `changed`.
    pub apply: fn(&CallContext, ToolOutput, &[ChangedFile]) -> ToolOutput,
}

/// A file a call changed, as its checkpoint saw it.
#[derive(Debug, Clone)]
pub struct ChangedFile {
    /// The file (absolute).
    pub path: std::path::PathBuf,
    /// Its content before the call; `None` when it did not exist (or was not kept).
    pub before: Option<Vec<u8>>,
    /// Whether it existed before the call.
    pub existed: bool,
    /// The call deleted it.
    pub deleted: bool,
}

/// What a tool needs to work that a configuration may lack ([`ToolDef::needs`]). A tool
/// whose needs a session does not meet is left out of the tool list a model is given
/// (`Registry::visible`): the model cannot change the configuration, so offering it would
/// only invite a call that fails. Called by name anyway, the tool runs and says what is
/// missing.
#[derive(Debug, Clone, Copy)]
pub struct Needs {
    /// What the tool needs and how to provide it, for its man page (sentences, starting
    /// with the tool's name).
    pub doc: &'static str,
    /// What `session` lacks of it, with how to provide it; `None` when nothing is missing.
    pub missing: fn(&Session) -> Option<String>,
}

impl ToolDef {
    /// Checks, before the policy is asked, what a call's permission pattern is made of:
    /// the tool's own [`ToolDef::precheck`], else the syntax of its `file_path` or `path`
    /// (no file has a NUL byte in its path or a path longer than the kernel takes, and an
    /// empty `file_path` names none); never whether a path exists.
    pub fn check_arguments(&self, args: &Map<String, Value>) -> Option<String> {
        match self.precheck {
            Some(check) => check(args),
            None => check_paths(args),
        }
    }

    /// The accesses a call with these (checked) arguments needs, in order.
    pub fn accesses(&self, ctx: &CallContext, args: &Map<String, Value>) -> Vec<Access> {
        match self.access {
            Some(access) => access(ctx, args),
            None if self.permission.is_empty() => Vec::new(),
            None => vec![Access::new(self.permission, self.name)],
        }
    }
}

/// The syntax of a call's `file_path` or `path` (no file has a NUL byte in its path or a
/// path longer than the kernel takes, and an empty `file_path` names none); never whether
/// a path exists. What [`ToolDef::check_arguments`] checks for a tool without a precheck,
/// and what a tool's own precheck may check too.
pub fn check_paths(args: &Map<String, Value>) -> Option<String> {
    ["file_path", "path"].iter().find_map(|key| {
        let value = args.get(*key)?.as_str()?;
        // A path with a NUL byte, or longer than the kernel takes, names no file on any
        // system; an empty file path would silently mean the working directory.
        if value.contains('\0') {
            Some(format!("{key}: a path cannot contain a NUL byte"))
        } else if value.len() > MAX_PATH_BYTES {
            Some(format!(
                "{key}: the path is {} bytes long; the system takes at most {MAX_PATH_BYTES}",
                value.len()
            ))
        } else if *key == "file_path" && value.trim().is_empty() {
            Some(format!(
                "{key}: empty; give the path of a file, absolute or relative to the \
                 working directory"
            ))
        } else {
            None
        }
    })
}

/// The checkpoint rule ([`ToolDef::checkpoint`]) of a tool that changes the one file its
/// `file_path` names: every call may change it, and its checkpoint shows and covers it.
pub fn checkpoint_of_file_path(_: &Session, args: &Map<String, Value>) -> Option<Checkpoint> {
    Some(Checkpoint {
        shown: args
            .get("file_path")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string(),
        covers: Covers::EditedFiles,
    })
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
    /// Text and images (an image read, a notebook's cells): the result's text is
    /// `media::text_of` them, where each image stands as a placeholder. Never previewed: the
    /// tool fit them to the limits itself.
    Parts(Vec<crate::media::Part>),
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
