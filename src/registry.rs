//! The tool registry and the one execution flow every entry point goes through:
//!
//! 1. look the tool up: by its name, another spelling of it or another agent's name for it
//!    (`aliases`); `Unknown tool: <name>` with the tools there are, `Tool <name> is
//!    disabled`;
//! 2. parse the arguments, repairing fences, trailing commas and a second JSON encoding or
//!    routing the call to `invalid`, translate another agent's parameters (`aliases`), then
//!    check them against the schema;
//! 3. make a fresh per-call context;
//! 4. ask the permission gate (a refusal ends the call with exit status 3);
//! 5. publish `tool.execute.before`, run the tool (inside a checkpoint when it may change
//!    the project: `checkpoints::record`);
//! 6. internal failure: publish `tool.execute.after` with `success: false`; otherwise apply
//!    the after-hook and publish `tool.execute.after` with the output;
//! 7. render the head+tail preview.
//!
//! Direct subcommands, `exec`, `exec --jsonl` and MCP all call [`Registry::execute`], so
//! policy, events and truncation cannot be bypassed by choosing another way in.

use serde::Serialize;
use serde_json::{Map, Value, json};

use crate::aliases::{self, Becomes, Called, Untranslatable};
use crate::exit::ExitStatus;
use crate::repair;
use crate::schema;
use crate::session::{CallContext, Session};
use crate::tool::{Body, ToolDef, ToolOutput};
use crate::truncate::{self, Capture};

/// The name of the fallback tool malformed calls are routed to.
pub const INVALID: &str = "invalid";

/// A tool call as it arrives from any entry point.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall {
    /// The caller's call id, echoed in the result.
    pub id: Option<Value>,
    /// The tool's name.
    pub name: String,
    /// The arguments, as text (repaired if needed) or as a value.
    pub arguments: Arguments,
}

/// Tool-call arguments as the caller sent them.
#[derive(Debug, Clone, PartialEq)]
pub enum Arguments {
    /// JSON text, possibly malformed (OpenAI sends arguments as a string).
    Text(String),
    /// An already parsed value (Anthropic `input`, flags of a direct call).
    Value(Value),
}

/// The result of one call: one JSON object on stdout.
#[derive(Debug, Clone, Serialize)]
pub struct CallResult {
    /// The call's id, when it had one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<Value>,
    /// The tool that ran (`invalid` when malformed arguments were routed there).
    pub tool: String,
    /// What the model sees.
    pub output: String,
    /// Whether the call failed.
    pub is_error: bool,
    /// Whether `output` is a preview of a longer output.
    pub truncated: bool,
    /// Structured facts about the call.
    pub metadata: Map<String, Value>,
    /// The text and images of a result that holds images, in order (`output` is their
    /// text, with a placeholder for each image); empty for a text result. Each way out
    /// renders them in its receiver's shape (`media::render`).
    #[serde(skip)]
    pub parts: Vec<crate::media::Part>,
    /// How the call ended, for the exit status.
    #[serde(skip)]
    pub status: ExitStatus,
}

/// The tools whose commands run in the sandbox: their descriptions say what it does.
const SANDBOXED_TOOLS: &[&str] = &["bash", "monitor", "task"];

/// A tool's description as a model of this session sees it: the definition's, and for
/// the tools that run commands, what the sandbox does to them in this session's settings.
pub fn description(def: &ToolDef, session: &Session) -> String {
    if SANDBOXED_TOOLS.contains(&def.name) {
        format!(
            "{} {}",
            def.description,
            crate::sandbox::describe(&session.sandbox)
        )
    } else {
        def.description.to_string()
    }
}

/// What `session` lacks of what `def` needs to work; `None` when nothing.
fn missing(def: &ToolDef, session: &Session) -> Option<String> {
    def.needs.and_then(|needs| (needs.missing)(session))
}

impl CallResult {
    /// A failed call that never reached a tool.
    pub fn failure(id: Option<Value>, tool: &str, output: String, status: ExitStatus) -> Self {
        CallResult {
            id,
            tool: tool.to_string(),
            output,
            is_error: true,
            truncated: false,
            metadata: Map::new(),
            parts: Vec::new(),
            status,
        }
    }

    /// Whether this is the `exit` tool's success, which ends `exec --jsonl` and `mcp`.
    pub fn ends_loop(&self) -> bool {
        self.tool == "exit" && !self.is_error
    }

    /// The result as one line of JSON (no trailing newline); a result with images gets
    /// `content`, its parts in MCP's neutral shape.
    pub fn to_json_line(&self) -> String {
        self.to_json_line_in(crate::media::Shape::Mcp)
    }

    /// The result as one line of JSON (no trailing newline); a result with images gets
    /// `content`, its parts in `shape` (`media::render`).
    pub fn to_json_line_in(&self, shape: crate::media::Shape) -> String {
        let encoded = if self.parts.is_empty() {
            serde_json::to_string(self)
        } else {
            serde_json::to_value(self).and_then(|mut value| {
                if let Value::Object(fields) = &mut value {
                    let content = crate::media::render(&self.parts, &self.output, shape);
                    fields.insert("content".into(), Value::Array(content));
                }
                serde_json::to_string(&value)
            })
        };
        encoded.unwrap_or_else(|err| {
            format!(r#"{{"tool":"","output":"cannot encode result: {err}","is_error":true}}"#)
        })
    }
}

/// The tools, in insertion order. Which are disabled or hidden is the policy's business
/// (the session's permission gate), so one registry serves every session.
#[derive(Debug, Default, Clone)]
pub struct Registry {
    tools: Vec<ToolDef>,
}

/// Characters of an unknown tool's name echoed back.
const MAX_NAME_SHOWN: usize = 200;
/// Bytes of an unknown tool's name compared with the tools' names for a suggestion.
const MAX_NAME_COMPARED: usize = 64;

/// A name as messages echo it: a long one only in part.
fn shown_name(name: &str) -> String {
    match name.char_indices().nth(MAX_NAME_SHOWN) {
        Some((end, _)) => format!("{}…", &name[..end]),
        None => name.to_string(),
    }
}

/// Why a tool a name was translated to is not there.
fn not_registered(tool: &str) -> String {
    // websearch exists but is registered only with its key: say what to configure.
    if tool == "websearch" {
        "websearch is not configured: set EXA_API_KEY".to_string()
    } else {
        format!("Unknown tool: {tool}")
    }
}

/// Refuses a call before its arguments are read: in a project whose `.tinytool` is
/// planted (a symlink, another user's folder would carry tinytool's state and files
/// elsewhere), or to a tool the policy disabled.
fn admit(session: &Session, id: Option<Value>, def: &ToolDef) -> Option<CallResult> {
    if let Err(message) = crate::project::check_own_folder(&session.dir) {
        let result = CallResult::failure(id, def.name, message, ExitStatus::Refused);
        return Some(with_repairs(result, Vec::new()));
    }
    if session.gate.is_disabled(def.name) {
        let output = format!("Tool {} is disabled", def.name);
        let result = CallResult::failure(id, def.name, output, ExitStatus::Refused);
        return Some(finish(session, result, Vec::new()));
    }
    None
}

impl Registry {
    /// An empty registry.
    pub fn new() -> Self {
        Registry::default()
    }

    /// Adds a tool at the end, or replaces a tool of the same name in its place.
    pub fn register(&mut self, def: ToolDef) {
        match self.tools.iter_mut().find(|t| t.name == def.name) {
            Some(slot) => *slot = def,
            None => self.tools.push(def),
        }
    }

    /// The tool of that name.
    pub fn get(&self, name: &str) -> Option<&ToolDef> {
        self.tools.iter().find(|t| t.name == name)
    }

    /// Every registered tool, in insertion order (disabled and `invalid` included).
    pub fn all(&self) -> &[ToolDef] {
        &self.tools
    }

    /// The tools a model may see in this session: enabled, not hidden by the policy, with
    /// what they need to work ([`ToolDef::needs`]), and never `invalid`.
    pub fn visible(&self, session: &Session) -> Vec<&ToolDef> {
        self.tools
            .iter()
            .filter(|t| t.name != INVALID)
            .filter(|t| !session.gate.is_disabled(t.name))
            .filter(|t| !session.gate.hides(session, t.name, t.permission))
            .filter(|t| missing(t, session).is_none())
            .collect()
    }

    /// The tools left out of [`Registry::visible`] only because the session lacks what they
    /// need, each with what is missing, in registry order.
    pub fn unavailable(&self, session: &Session) -> Vec<(&'static str, String)> {
        self.tools
            .iter()
            .filter(|t| !session.gate.is_disabled(t.name))
            .filter(|t| !session.gate.hides(session, t.name, t.permission))
            .filter_map(|t| missing(t, session).map(|why| (t.name, why)))
            .collect()
    }

    /// Which tool a call's name means: a registered tool spelled exactly (`invalid`
    /// included), else what `aliases::recognise` makes of it (other spellings and other
    /// agents' names; never `invalid`).
    pub fn recognise(&self, name: &str) -> Option<Called> {
        if let Some(def) = self.get(name) {
            return Some(Called::Tool {
                tool: def.name,
                respelled: None,
            });
        }
        let names: Vec<&'static str> = self
            .tools
            .iter()
            .map(|t| t.name)
            .filter(|n| *n != INVALID)
            .collect();
        aliases::recognise(name, &names)
    }

    /// The answer to a name no tool has: it, the closest visible tool's name when one is
    /// near, and the tools the session may use (without those of `hidden`), or what to
    /// configure for a tool that exists but is not registered.
    pub fn unknown_tool(&self, session: &Session, name: &str, hidden: &[&str]) -> String {
        if matches!(
            aliases::recognise(name, &["websearch"]),
            Some(Called::Tool { .. })
        ) {
            return not_registered("websearch");
        }
        let visible: Vec<&str> = self
            .visible(session)
            .into_iter()
            .map(|def| def.name)
            .filter(|n| !hidden.contains(n))
            .collect();
        let mut message = format!("Unknown tool: {}.", shown_name(name));
        // A name that long is no slip of a tool's name, and comparing it costs its length.
        if name.len() <= MAX_NAME_COMPARED
            && let Some(near) = aliases::closest(name, &visible)
        {
            message.push_str(&format!(" Did you mean {near}?"));
        }
        message.push_str(&format!(" Available tools: {}.", visible.join(", ")));
        message
    }

    /// Runs one call through the execution flow (module doc).
    pub fn execute(&self, session: &Session, call: ToolCall) -> CallResult {
        let ToolCall {
            id,
            name,
            arguments,
        } = call;
        // A multi-file commit killed midway is finished or undone before anything else
        // looks at the project (one failed stat when there is nothing to do).
        // Never in a project whose `.tinytool` is planted (refused below): its records
        // could name any file.
        if crate::project::check_own_folder(&session.dir).is_ok()
            && !crate::journal::recover(&session.dir).is_empty()
        {
            // The recovered commit was a killed call's: its checkpoint is completed now,
            // not only by the next checkpointed call (a failure leaves it to that one).
            let _ = crate::checkpoints::recovery::complete_dead(session);
        }
        let Some(called) = self.recognise(&name) else {
            let message = self.unknown_tool(session, &name, &[]);
            let result = CallResult::failure(id, &shown_name(&name), message, ExitStatus::Usage);
            return finish(session, result, Vec::new());
        };
        // When the name alone decides the tool, the call is admitted (or refused) before its
        // arguments are read, as a call by the tool's own name is.
        let early = match called.fixed_target() {
            Some(Becomes::Tool(tool)) => match self.get(tool) {
                Some(def) => {
                    if let Some(refusal) = admit(session, id.clone(), def) {
                        return refusal;
                    }
                    Some(def)
                }
                None => {
                    let result = CallResult::failure(
                        id,
                        &shown_name(&name),
                        not_registered(tool),
                        ExitStatus::Usage,
                    );
                    return finish(session, result, Vec::new());
                }
            },
            Some(Becomes::Refused(_)) => {
                let output = match aliases::translate(&called, &mut Value::Null) {
                    Err(Untranslatable::Tool(message) | Untranslatable::Argument(message)) => {
                        message
                    }
                    Ok(_) => format!("Unknown tool: {}", shown_name(&name)),
                };
                let result = CallResult::failure(id, &shown_name(&name), output, ExitStatus::Usage);
                return finish(session, result, Vec::new());
            }
            None => None,
        };
        let (raw, parsed) = match arguments {
            Arguments::Text(text) => {
                let parsed = repair::parse_arguments(&text);
                (text, parsed)
            }
            Arguments::Value(value) => (
                value.to_string(),
                Ok(repair::Parsed {
                    value,
                    repairs: Vec::new(),
                }),
            ),
        };
        let parsed = match parsed {
            Ok(parsed) => parsed,
            Err(_) if early.is_some_and(|def| def.name == INVALID) => {
                let output = "Tool call had invalid JSON arguments. Please retry with valid JSON.";
                return CallResult::failure(id, INVALID, output.into(), ExitStatus::ToolError);
            }
            Err(error) => {
                let args = json!({
                    "error": format!("invalid JSON in tool call arguments: {error}"),
                    "original_name": name,
                    "original_args": raw,
                });
                let rerouted = ToolCall {
                    id,
                    name: INVALID.to_string(),
                    arguments: Arguments::Value(args),
                };
                return self.execute(session, rerouted);
            }
        };
        let mut repairs = parsed.repairs;
        let (mut value, decoded) = repair::decode_twice(parsed.value);
        repairs.extend(decoded);
        let translation = match aliases::translate(&called, &mut value) {
            Ok(translation) => translation,
            Err(untranslatable) => {
                let (output, status) = match untranslatable {
                    Untranslatable::Tool(message) => (message, ExitStatus::Usage),
                    Untranslatable::Argument(message) => (
                        format!("Invalid arguments: {message}"),
                        ExitStatus::ToolError,
                    ),
                };
                let tool = early.map_or_else(|| shown_name(&name), |def| def.name.to_string());
                let result = CallResult::failure(id, &tool, output, status);
                return finish(session, result, repairs);
            }
        };
        repairs.extend(translation.repairs);
        let def = match early {
            Some(def) if def.name == translation.tool => def,
            _ => match self.get(translation.tool) {
                Some(def) => {
                    if let Some(refusal) = admit(session, id.clone(), def) {
                        return with_repairs(refusal, repairs);
                    }
                    def
                }
                None => {
                    let output = not_registered(translation.tool);
                    let result =
                        CallResult::failure(id, &shown_name(&name), output, ExitStatus::Usage);
                    return finish(session, result, repairs);
                }
            },
        };
        let args = match schema::normalize(def.name, &(def.schema)(), value) {
            Ok(normalized) => {
                repairs.extend(normalized.repairs);
                normalized.args
            }
            Err(problems) => {
                let output = format!("Invalid arguments: {problems}");
                let result = CallResult::failure(id, def.name, output, ExitStatus::ToolError);
                return finish(session, result, repairs);
            }
        };
        if let Some(problem) = def.check_arguments(&args) {
            let result = CallResult::failure(id, def.name, problem, ExitStatus::ToolError);
            return finish(session, result, repairs);
        }
        let ctx = CallContext::new(session, def.name);
        let accesses = def.accesses(&ctx, &args);
        if let Err(refusal) = session.gate.check(&ctx, &accesses) {
            let mut result =
                CallResult::failure(id, def.name, refusal.message, ExitStatus::Refused);
            result.metadata = refusal.metadata;
            return finish(session, result, repairs);
        }
        ctx.publish(
            "tool.execute.before",
            props(json!({"tool": def.name, "args": raw})),
        );
        let checkpoint = def
            .checkpoint
            .and_then(|rule| rule(session, &args))
            .map(|rule| {
                let call_id = id.as_ref().map(|v| match v {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                });
                let command = crate::checkpoints::record::shown_command(&rule.shown);
                let scope = checkpoint_scope(session, rule.covers, &accesses);
                crate::checkpoints::record::begin(
                    session,
                    def.name,
                    call_id.as_deref(),
                    &command,
                    &scope,
                )
            });
        if let Some(crate::checkpoints::record::Began::Open(open)) = &checkpoint {
            ctx.offer_checkpoint(open.id);
        }
        let outcome = (def.execute)(&ctx, args);
        ctx.run_deferred();
        let handed = ctx.withdraw_checkpoint_offer();
        let wants_changes = def
            .after_changes
            .is_some_and(|after| (after.wanted)(session));
        let (checkpoint, changed) = match checkpoint {
            Some(began) => checkpoint_metadata(session, began, handed, wants_changes),
            None => (None, Vec::new()),
        };
        let output = match outcome {
            Ok(output) => match def.after_changes {
                Some(after) if !changed.is_empty() => (after.apply)(&ctx, output, &changed),
                _ => output,
            },
            Err(err) => {
                ctx.publish(
                    "tool.execute.after",
                    props(json!({"tool": def.name, "success": false})),
                );
                let mut result =
                    CallResult::failure(id, def.name, format!("{err:#}"), ExitStatus::ToolError);
                if let Some(checkpoint) = checkpoint {
                    result.metadata.insert("checkpoint".into(), checkpoint);
                }
                return finish(session, result, repairs);
            }
        };
        let ToolOutput {
            body,
            mut is_error,
            mut metadata,
        } = output;
        let mut parts = Vec::new();
        let (mut text, mut truncated, exempt) = match body {
            Body::Text(text) => (text, false, false),
            Body::Parts(given) => {
                parts = given;
                (crate::media::text_of(&parts), false, true)
            }
            Body::Paged(text) => (text, false, true),
            Body::Captured(capture) => render(*capture, &mut metadata),
        };
        if let Some(hook) = &session.after_hook
            && let Some((new_text, new_is_error)) = hook.apply(&ctx, &text, is_error)
        {
            text = new_text;
            is_error = new_is_error;
            truncated = false;
            // The hook's text replaces the output, images and all.
            parts.clear();
        }
        if session.events.is_enabled() {
            ctx.publish(
                "tool.execute.after",
                props(json!({"tool": def.name, "output": text, "isError": is_error})),
            );
        }
        if !exempt
            && !truncated
            && let Some(preview) = truncate::preview(&text, session.limits.clone())
        {
            text = preview.text;
            truncated = true;
            if let Some(path) = preview.full_output {
                metadata.insert("full_output".into(), Value::String(path));
            }
        }
        if let Some(checkpoint) = checkpoint {
            metadata.insert("checkpoint".into(), checkpoint);
        }
        let refused = is_error && crate::sandbox::refused(&metadata);
        let result = CallResult {
            id,
            tool: def.name.to_string(),
            output: text,
            is_error,
            truncated,
            metadata,
            parts,
            status: if refused {
                ExitStatus::Refused
            } else if is_error {
                ExitStatus::ToolError
            } else {
                ExitStatus::Success
            },
        };
        with_repairs(result, repairs)
    }
}

/// What a call's checkpoint covers: the project, or the files of its `edit` accesses that
/// lie inside the project (relative paths; tinytool's own folder is never a call's).
fn checkpoint_scope(
    session: &Session,
    covers: crate::tool::Covers,
    accesses: &[crate::tool::Access],
) -> crate::checkpoints::record::Scope {
    use crate::checkpoints::record::Scope;
    if covers == crate::tool::Covers::Project {
        return Scope::Project;
    }
    let roots = [
        crate::paths::resolve_symlinks(&session.dir),
        session.dir.clone(),
    ];
    let mut files: Vec<String> = Vec::new();
    for access in accesses.iter().filter(|a| a.permission == "edit") {
        let Some(path) = &access.path else { continue };
        let Some(rel) = roots
            .iter()
            .find_map(|root| path.strip_prefix(root).ok())
            .and_then(|rel| rel.to_str())
        else {
            continue;
        };
        if crate::paths::is_clean_relative(rel)
            && !rel.starts_with(".tinytool/")
            && !files.iter().any(|f| f == rel)
        {
            files.push(rel.to_string());
        }
    }
    Scope::Files(files)
}

/// Closes a call's checkpoint: `metadata.checkpoint` is `{"id", "files"}` when the call
/// changed files, a one-line notice when checkpoints are off or failed, absent otherwise;
/// `{"id", "open": true}` when the supervisor of the monitor or job the call started
/// adopted it (`handed`) and closes it when its command ends.
fn checkpoint_metadata(
    session: &Session,
    began: crate::checkpoints::record::Began,
    handed: Option<i64>,
    wants_changes: bool,
) -> (Option<Value>, Vec<crate::tool::ChangedFile>) {
    use crate::checkpoints::record::{Began, finish_with_changes};
    match began {
        Began::Skipped => (None, Vec::new()),
        Began::Notice(notice) => (Some(Value::String(notice)), Vec::new()),
        Began::Open(open) if handed == Some(open.id) => {
            // No finish follows in this process: withdraw the before-walk's stamps.
            crate::tree::forget();
            (Some(json!({"id": open.id, "open": true})), Vec::new())
        }
        Began::Open(open) => {
            let (value, changes) = finish_with_changes(session, open);
            if !wants_changes {
                return (value, Vec::new());
            }
            let blobs = crate::checkpoints::record::blobs(session);
            let changed = changes
                .into_iter()
                .map(|change| crate::tool::ChangedFile {
                    path: session.dir.join(&change.path),
                    before: change.before_blob.and_then(|id| blobs.get(&id).ok()),
                    existed: change.before_mode.is_some(),
                    deleted: change.after_mode.is_none(),
                })
                .collect();
            (value, changed)
        }
    }
}

/// Renders a captured body, noting lossy decoding in the metadata.
fn render(capture: Capture, metadata: &mut Map<String, Value>) -> (String, bool, bool) {
    let rendered = capture.finish();
    if rendered.lossy {
        metadata.insert("lossy".into(), Value::Bool(true));
    }
    if let Some(path) = rendered.full_output {
        metadata.insert("full_output".into(), Value::String(path));
    }
    (rendered.text, rendered.truncated, false)
}

/// Previews a result that did not come from a tool's output (unknown or disabled tools,
/// invalid arguments, refusals, failures): their messages quote the caller's input, which
/// may be of any size.
fn finish(session: &Session, mut result: CallResult, repairs: Vec<String>) -> CallResult {
    if let Some(preview) = truncate::preview(&result.output, session.limits.clone()) {
        result.output = preview.text;
        result.truncated = true;
        if let Some(path) = preview.full_output {
            result
                .metadata
                .insert("full_output".into(), Value::String(path));
        }
    }
    with_repairs(result, repairs)
}

/// Records the argument repairs of a call in its metadata.
fn with_repairs(mut result: CallResult, repairs: Vec<String>) -> CallResult {
    if !repairs.is_empty() {
        // A tool's own repairs (a patch's shape) come after the call's.
        let mut repairs = repairs;
        if let Some(Value::Array(own)) = result.metadata.get("repairs") {
            repairs.extend(own.iter().filter_map(|r| r.as_str().map(str::to_string)));
        }
        result.metadata.insert("repairs".into(), json!(repairs));
    }
    result
}

fn props(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tool::ToolDoc;

    fn tool(name: &'static str, summary: &'static str) -> ToolDef {
        fn schema() -> Value {
            crate::schema::object(json!({}), &[])
        }
        fn execute(_: &CallContext, _: Map<String, Value>) -> anyhow::Result<ToolOutput> {
            Ok(ToolOutput::text("ran"))
        }
        ToolDef {
            name,
            summary,
            description: summary,
            permission: "read",
            schema,
            execute,
            access: None,
            precheck: None,
            checkpoint: None,
            needs: None,
            after_changes: None,
            doc: ToolDoc::default(),
        }
    }

    #[test]
    fn registration_keeps_order_and_replaces_in_place() {
        let mut registry = Registry::new();
        registry.register(tool("a", "first a"));
        registry.register(tool("b", "b"));
        registry.register(tool("a", "second a"));
        let names: Vec<&str> = registry.all().iter().map(|t| t.name).collect();
        assert_eq!(names, ["a", "b"]);
        assert_eq!(registry.get("a").map(|t| t.summary), Some("second a"));
    }

    #[test]
    fn a_tool_whose_needs_are_not_met_is_not_visible_but_still_runs() {
        fn never(_: &Session) -> Option<String> {
            Some("nothing to work with".to_string())
        }
        fn always(_: &Session) -> Option<String> {
            None
        }
        let mut registry = Registry::new();
        registry.register(tool("plain", "plain"));
        registry.register(ToolDef {
            needs: Some(crate::tool::Needs {
                doc: "lacking needs a thing",
                missing: never,
            }),
            ..tool("lacking", "lacking")
        });
        registry.register(ToolDef {
            needs: Some(crate::tool::Needs {
                doc: "served needs a thing",
                missing: always,
            }),
            ..tool("served", "served")
        });
        let dir = tempfile::tempdir().unwrap();
        let session = Session::new("s", dir.path());
        let names: Vec<&str> = registry.visible(&session).iter().map(|t| t.name).collect();
        assert_eq!(names, ["plain", "served"]);
        assert_eq!(
            registry.unavailable(&session),
            [("lacking", "nothing to work with".to_string())]
        );
        let ran = registry.execute(
            &session,
            ToolCall {
                id: None,
                name: "lacking".to_string(),
                arguments: Arguments::Text(String::new()),
            },
        );
        assert_eq!(ran.output, "ran");
    }

    #[test]
    fn unknown_tools_are_usage_errors_and_known_ones_run() {
        let mut registry = Registry::new();
        registry.register(tool("a", "a"));
        let dir = tempfile::tempdir().unwrap();
        let session = Session::new("s", dir.path());
        let call = |name: &str| ToolCall {
            id: Some(json!(7)),
            name: name.to_string(),
            arguments: Arguments::Text(String::new()),
        };
        let missing = registry.execute(&session, call("zzz"));
        assert_eq!(
            (missing.output.as_str(), missing.status),
            ("Unknown tool: zzz. Available tools: a.", ExitStatus::Usage)
        );
        let respelled = registry.execute(&session, call("A"));
        assert_eq!(
            (respelled.output.as_str(), &respelled.metadata["repairs"]),
            ("ran", &json!(["tool A read as a"]))
        );
        let ran = registry.execute(&session, call("a"));
        assert_eq!(
            (ran.output.as_str(), ran.is_error, ran.id),
            ("ran", false, Some(json!(7)))
        );
    }
}
