//! `tinytool mcp`: every tool over the Model Context Protocol, on stdio.
//!
//! Wire: JSON-RPC 2.0, one message per line on stdin and stdout. Methods:
//!
//! | method | answer |
//! |---|---|
//! | `initialize` | the client's protocol revision when it is one of [`PROTOCOL_VERSIONS`], else the newest; server name and version; the tools capability |
//! | `tools/list` | the tools as `tinytool tools --format mcp` lists them (hidden tools left out), with annotations |
//! | `tools/call` | the registry's one execution flow: `content` (text, or an image from `read`), `isError`, `structuredContent` = metadata |
//! | `ping` | `{}` |
//! | notifications | accepted; `notifications/cancelled` stops the running call |
//!
//! A policy refusal or a tool error is a result with `isError: true`, never a protocol
//! error; an unknown tool is `-32602`, an unknown method `-32601`, a line that is not JSON
//! `-32700` (and the server keeps serving). The `exit` tool ends the server, and so does end
//! of input: every request received before it is still answered, in order, unless the
//! client's end of stdout is closed too (the client is gone), in which case the running
//! call is stopped and the requests still queued are dropped. A question asked after the
//! end of input gets no answer from the client.
//!
//! A reader thread owns stdin: it answers `ping` and handles cancellation at once, routes
//! the client's answers to our own requests (elicitation for `question`), and queues
//! everything else for the executor, which runs one call at a time on the main thread.

use std::collections::HashMap;
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Map, Value, json};

use crate::dialects;
use crate::exit::ExitStatus;
use crate::registry::{Arguments, CallResult, Registry, ToolCall};
use crate::session::{Asker, CancelFlag, Session};

/// Protocol revisions this server speaks, oldest first.
pub const PROTOCOL_VERSIONS: &[&str] = &["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];

const PARSE_ERROR: i64 = -32700;
const INVALID_REQUEST: i64 = -32600;
const METHOD_NOT_FOUND: i64 = -32601;
const INVALID_PARAMS: i64 = -32602;

/// Writes one JSON message per line, from any thread.
#[derive(Clone)]
struct Writer(Arc<Mutex<std::io::Stdout>>);

impl Writer {
    fn send(&self, message: &Value) {
        let mut line = message.to_string();
        line.push('\n');
        if let Ok(out) = self.0.lock() {
            let mut out = out.lock();
            // A client that went away ends the server through end of input.
            let _ = out.write_all(line.as_bytes()).and_then(|()| out.flush());
        }
    }

    fn result(&self, id: &Value, result: Value) {
        self.send(&result_message(id, result));
    }

    fn error(&self, id: &Value, code: i64, message: &str) {
        self.send(&error_message(id, code, message));
    }
}

/// What the reader hands to the executor.
enum Inbound {
    Message(Map<String, Value>),
    Batch(Vec<Value>),
    Eof,
}

/// State shared by the reader and the executor.
#[derive(Default)]
struct Shared {
    /// The id of the call being run, for cancellation.
    running: Mutex<Option<Value>>,
    /// Whether the running call was cancelled.
    cancelled: Mutex<bool>,
    /// Waiters for the client's answers to our requests, by id.
    waiting: Mutex<HashMap<String, Sender<Map<String, Value>>>>,
    /// Input has ended: the client can answer nothing more.
    input_ended: AtomicBool,
    /// The client is gone (input ended and nobody reads our output): queued requests are
    /// dropped.
    client_gone: AtomicBool,
}

/// Runs the server until end of input or the `exit` tool.
pub fn serve(registry: &Registry, mut session: Session) -> ExitStatus {
    let writer = Writer(Arc::new(Mutex::new(std::io::stdout())));
    let shared = Arc::new(Shared::default());
    let (tx, rx) = mpsc::channel();
    {
        let writer = writer.clone();
        let shared = shared.clone();
        let cancel = session.cancel.clone();
        std::thread::spawn(move || read_loop(&writer, &shared, &cancel, &tx));
    }
    let elicit = Arc::new(Mutex::new(false));
    session.asker = Some(Box::new(Elicitor {
        writer: writer.clone(),
        shared: shared.clone(),
        enabled: elicit.clone(),
    }));
    let mut server = Server {
        registry,
        session: &session,
        writer: &writer,
        shared: &shared,
        elicit: &elicit,
    };
    server.run(&rx);
    ExitStatus::Success
}

struct Server<'a> {
    registry: &'a Registry,
    session: &'a Session,
    writer: &'a Writer,
    shared: &'a Shared,
    elicit: &'a Mutex<bool>,
}

impl Server<'_> {
    fn run(&mut self, rx: &Receiver<Inbound>) {
        while let Ok(inbound) = rx.recv() {
            match inbound {
                Inbound::Eof => return,
                _ if self.shared.client_gone.load(Ordering::SeqCst) => return,
                Inbound::Message(message) => {
                    if let Some(response) = self.handle(message) {
                        let stop = response.1;
                        self.writer.send(&response.0);
                        if stop {
                            return;
                        }
                    }
                }
                Inbound::Batch(items) => {
                    let mut responses = Vec::new();
                    let mut stop = false;
                    for item in items {
                        match item {
                            Value::Object(message) => {
                                if let Some((response, ends)) = self.handle(message) {
                                    responses.push(response);
                                    stop |= ends;
                                }
                            }
                            _ => responses.push(error_message(
                                &Value::Null,
                                INVALID_REQUEST,
                                "a batch entry must be an object",
                            )),
                        }
                    }
                    if !responses.is_empty() {
                        self.writer.send(&Value::Array(responses));
                    }
                    if stop {
                        return;
                    }
                }
            }
        }
    }

    /// Handles one request or notification; returns the response (if any) and whether the
    /// server should stop after sending it.
    fn handle(&mut self, message: Map<String, Value>) -> Option<(Value, bool)> {
        let id = message.get("id").cloned();
        let method = message
            .get("method")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let params = message.get("params").cloned().unwrap_or(Value::Null);
        let Some(id) = id else {
            // Notifications need no answer; the reader already acted on cancellation.
            return None;
        };
        let answer = |result: Result<Value, (i64, String)>| match result {
            Ok(result) => result_message(&id, result),
            Err((code, text)) => error_message(&id, code, &text),
        };
        match method.as_str() {
            "initialize" => Some((answer(Ok(self.initialize(&params))), false)),
            "ping" => Some((answer(Ok(json!({}))), false)),
            "tools/list" => Some((answer(Ok(self.list())), false)),
            "tools/call" => {
                let outcome = self.call(&id, &params);
                match outcome {
                    Call::Cancelled => None,
                    Call::Error(code, text) => Some((answer(Err((code, text))), false)),
                    Call::Done(result, ends) => Some((answer(Ok(result)), ends)),
                }
            }
            "" => Some((
                answer(Err((INVALID_REQUEST, "a request needs a `method`".into()))),
                false,
            )),
            other => Some((
                answer(Err((
                    METHOD_NOT_FOUND,
                    format!("Method not found: {other}"),
                ))),
                false,
            )),
        }
    }

    fn initialize(&self, params: &Value) -> Value {
        let requested = params
            .get("protocolVersion")
            .and_then(Value::as_str)
            .unwrap_or("");
        let version = if PROTOCOL_VERSIONS.contains(&requested) {
            requested
        } else {
            PROTOCOL_VERSIONS[PROTOCOL_VERSIONS.len() - 1]
        };
        let elicitation = params
            .get("capabilities")
            .and_then(|c| c.get("elicitation"))
            .is_some_and(|e| !e.is_null());
        if let Ok(mut enabled) = self.elicit.lock() {
            *enabled = elicitation;
        }
        json!({
            "protocolVersion": version,
            "capabilities": {"tools": {"listChanged": false}},
            "serverInfo": {"name": "tinytool", "title": "tinytool", "version": env!("CARGO_PKG_VERSION")},
            "instructions": "The tool layer of a coding agent: read, write, edit, apply_patch, bash, grep, glob and more. Paths are relative to the server's working directory; a permission policy decides every call.",
        })
    }

    fn list(&self) -> Value {
        let visible = self.registry.visible(self.session);
        json!({"tools": dialects::render(&visible, "mcp", false)})
    }

    fn call(&mut self, id: &Value, params: &Value) -> Call {
        let Some(name) = params.get("name").and_then(Value::as_str) else {
            return Call::Error(INVALID_PARAMS, "tools/call needs params.name".into());
        };
        if self.registry.get(name).is_none() || name == crate::registry::INVALID {
            return Call::Error(INVALID_PARAMS, format!("Unknown tool: {name}"));
        }
        let arguments = match params.get("arguments") {
            None | Some(Value::Null) => Value::Object(Map::new()),
            Some(value) => value.clone(),
        };
        self.session.cancel.clear();
        set(&self.shared.running, Some(id.clone()));
        set(&self.shared.cancelled, false);
        let result = self.registry.execute(
            self.session,
            ToolCall {
                id: None,
                name: name.to_string(),
                arguments: Arguments::Value(arguments),
            },
        );
        set(&self.shared.running, None);
        if self.shared.cancelled.lock().map(|c| *c).unwrap_or(false) {
            return Call::Cancelled;
        }
        let ends = result.ends_loop();
        Call::Done(call_result(&result), ends)
    }
}

enum Call {
    Done(Value, bool),
    Error(i64, String),
    Cancelled,
}

fn set<T>(slot: &Mutex<T>, value: T) {
    if let Ok(mut guard) = slot.lock() {
        *guard = value;
    }
}

fn result_message(id: &Value, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

fn error_message(id: &Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

/// A call result in MCP's shape.
fn call_result(result: &CallResult) -> Value {
    let image = result
        .metadata
        .get("mime")
        .and_then(Value::as_str)
        .filter(|m| m.starts_with("image/"))
        .and_then(|mime| {
            let data = result
                .output
                .strip_prefix(&format!("data:{mime};base64,"))?;
            Some(json!({"type": "image", "data": data, "mimeType": mime}))
        });
    let content = image.unwrap_or_else(|| json!({"type": "text", "text": result.output}));
    json!({
        "content": [content],
        "isError": result.is_error,
        "structuredContent": Value::Object(result.metadata.clone()),
    })
}

/// Reads stdin until end of input: answers pings, acts on cancellation, routes responses
/// to waiting requests, and queues the rest.
fn read_loop(writer: &Writer, shared: &Shared, cancel: &CancelFlag, tx: &Sender<Inbound>) {
    let stdin = std::io::stdin();
    let mut reader = stdin.lock();
    let mut line = Vec::new();
    while let Ok(true) = crate::wire::read_message(&mut reader, &mut line) {
        let value: Value = match serde_json::from_slice(&line) {
            Ok(value) => value,
            Err(err) => {
                writer.error(&Value::Null, PARSE_ERROR, &format!("Parse error: {err}"));
                continue;
            }
        };
        let message = match value {
            Value::Object(message) => message,
            Value::Array(items) if !items.is_empty() => {
                let _ = tx.send(Inbound::Batch(items));
                continue;
            }
            _ => {
                writer.error(
                    &Value::Null,
                    INVALID_REQUEST,
                    "Invalid Request: expected a JSON-RPC object",
                );
                continue;
            }
        };
        let method = message.get("method").and_then(Value::as_str);
        match method {
            Some("ping") if message.contains_key("id") => {
                writer.result(&message["id"], json!({}));
            }
            Some("notifications/cancelled") => {
                let target = message
                    .get("params")
                    .and_then(|p| p.get("requestId"))
                    .cloned();
                let running = shared.running.lock().ok().and_then(|r| r.clone());
                if target.is_some() && target == running {
                    set(&shared.cancelled, true);
                    cancel.set();
                }
            }
            None if message.contains_key("result") || message.contains_key("error") => {
                let key = message.get("id").map(Value::to_string).unwrap_or_default();
                let waiter = shared.waiting.lock().ok().and_then(|mut w| w.remove(&key));
                if let Some(waiter) = waiter {
                    let _ = waiter.send(message);
                }
            }
            _ => {
                let _ = tx.send(Inbound::Message(message));
            }
        }
    }
    // No answer to a question can come any more: wake every waiter, and later asks fail
    // at once.
    shared.input_ended.store(true, Ordering::SeqCst);
    if let Ok(mut waiting) = shared.waiting.lock() {
        waiting.clear();
    }
    // A client that only ended its requests still reads the answers to those it sent; one
    // that closed our output too is gone, and nobody would read a result: stop the running
    // call (its process group is killed) and drop what is queued.
    if output_closed() {
        shared.client_gone.store(true, Ordering::SeqCst);
        if shared.running.lock().is_ok_and(|r| r.is_some()) {
            set(&shared.cancelled, true);
            cancel.set();
        }
    }
    let _ = tx.send(Inbound::Eof);
}

/// Whether nobody reads stdout any more (the reading end of its pipe or socket is closed).
fn output_closed() -> bool {
    let mut poll = libc::pollfd {
        fd: libc::STDOUT_FILENO,
        events: libc::POLLOUT,
        revents: 0,
    };
    // SAFETY: one valid pollfd, a zero timeout.
    let ready = unsafe { libc::poll(&mut poll, 1, 0) };
    ready > 0 && poll.revents & (libc::POLLERR | libc::POLLHUP | libc::POLLNVAL) != 0
}

/// Asks through MCP elicitation (`elicitation/create`) when the client offered it.
struct Elicitor {
    writer: Writer,
    shared: Arc<Shared>,
    enabled: Arc<Mutex<bool>>,
}

impl Asker for Elicitor {
    fn ask(&self, question: &str, options: &[String]) -> Result<Option<String>, String> {
        if !self.enabled.lock().map(|e| *e).unwrap_or(false) {
            return Ok(None);
        }
        if self.shared.input_ended.load(Ordering::SeqCst) {
            return Err("the client can no longer answer: its input has ended".to_string());
        }
        let id = Value::String(crate::events::new_id("elicit"));
        let mut answer = json!({"type": "string", "title": "Answer"});
        if !options.is_empty() {
            answer["enum"] = json!(options);
        }
        let (tx, rx) = mpsc::channel();
        if let Ok(mut waiting) = self.shared.waiting.lock() {
            // Checked under the lock the reader clears at end of input, so a waiter is
            // either woken by that clear or never registered.
            if self.shared.input_ended.load(Ordering::SeqCst) {
                return Err("the client can no longer answer: its input has ended".to_string());
            }
            waiting.insert(id.to_string(), tx);
        }
        self.writer.send(&json!({
            "jsonrpc": "2.0",
            "id": id,
            "method": "elicitation/create",
            "params": {
                "message": question,
                "requestedSchema": {"type": "object", "properties": {"answer": answer}, "required": ["answer"]},
            },
        }));
        let reply = rx
            .recv_timeout(Duration::from_secs(3600))
            .map_err(|_| "the client did not answer the question".to_string())?;
        if let Some(error) = reply.get("error") {
            return Err(format!("the client could not ask the question: {error}"));
        }
        let result = reply.get("result").cloned().unwrap_or(Value::Null);
        match result.get("action").and_then(Value::as_str) {
            Some("accept") => {
                let content = result.get("content").and_then(|c| c.get("answer"));
                Ok(Some(match content {
                    Some(Value::String(s)) => s.clone(),
                    Some(other) => other.to_string(),
                    None => String::new(),
                }))
            }
            Some("decline") => Err("The user declined to answer the question.".to_string()),
            _ => Err("The user cancelled the question.".to_string()),
        }
    }
}
