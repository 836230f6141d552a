//! `tinytool mcp`: every tool over the Model Context Protocol, on stdio.
//!
//! Wire: JSON-RPC 2.0, one message per line on stdin and stdout. Methods:
//!
//! | method | answer |
//! |---|---|
//! | `initialize` | the client's protocol revision when it is one of [`PROTOCOL_VERSIONS`], else the newest; server name and version; the tools and resources capabilities |
//! | `tools/list` | the tools (hidden tools, `invalid` and `exit` left out), each with a title, annotations, `inputSchema` and `outputSchema` (see `results`) |
//! | `tools/call` | the registry's one execution flow, on the worker pool: `content` (the output text, or an image from `read`; a `resource_link` to a spill file), `isError`, `structuredContent` = the whole result |
//! | `resources/read`, `resources/list`, `resources/templates/list` | spill files, `tinytool://output/NAME` only (see `resources`) |
//! | `ping` | `{}` |
//! | `notifications/cancelled` | a queued call is dropped unrun, a running one stopped (its process group killed); neither is answered |
//!
//! A policy refusal or a tool error is a result with `isError: true`, never a protocol
//! error; an unknown tool is `-32602`, an unknown method `-32601`, a line that is not JSON
//! `-32700` (and the server keeps serving).
//!
//! Calls run concurrently on a bounded pool (`pool`), so answers come in completion order,
//! each with its id. A call whose request carries `_meta.progressToken` gets
//! `notifications/progress` every [`PROGRESS_EVERY`] while it runs (the elapsed seconds as
//! `progress`; for commands, the lines of output so far in `message`).
//!
//! No tool ends the server: `exit` is not served over MCP. The server ends at end of input,
//! after answering every request received before it (a question asked then gets no answer
//! from the client); when nobody reads its output any more (the client closed it, at any
//! time), within [`WATCH_EVERY`] every queued call is dropped, every running one stopped,
//! and the server ends; on SIGINT, SIGTERM or SIGHUP every running command's process
//! group is killed (see `process`).
//!
//! The reader thread owns stdin: it answers everything but `tools/call` at once, routes the
//! client's answers to our own requests (elicitation for `question`), and queues calls.

mod pool;
pub mod resources;
pub mod results;

use std::collections::HashMap;
use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, Sender};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};

use crate::exit::ExitStatus;
use crate::registry::{Arguments, CallResult, Registry, ToolCall};
use crate::session::{Asker, CallScope, CancelFlag, Progress, Session};

use pool::{Job, Pool};

/// Protocol revisions this server speaks, oldest first.
pub const PROTOCOL_VERSIONS: &[&str] = &["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];

/// Tools never served over MCP: `exit` would end the server under the client's feet.
pub const NOT_SERVED: &[&str] = &["exit", crate::registry::INVALID];

/// How often a call with a progress token reports progress.
pub const PROGRESS_EVERY: Duration = Duration::from_secs(5);
/// How often the server checks whether its client is gone.
pub const WATCH_EVERY: Duration = Duration::from_millis(100);

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
            // A client that went away is noticed by the watcher.
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

/// State shared by the reader, the workers and the watcher.
#[derive(Default)]
struct Shared {
    /// Waiters for the client's answers to our requests, by id.
    waiting: Mutex<HashMap<String, Sender<Map<String, Value>>>>,
    /// Input has ended: the client can answer nothing more.
    input_ended: AtomicBool,
    /// The revision `initialize` negotiated.
    version: Mutex<String>,
    /// Whether the client offered elicitation.
    elicit: AtomicBool,
}

impl Shared {
    fn version(&self) -> String {
        self.version.lock().map(|v| v.clone()).unwrap_or_default()
    }
}

/// Runs the server until end of input or until its client is gone.
pub fn serve(registry: &Registry, mut session: Session) -> ExitStatus {
    let writer = Writer(Arc::new(Mutex::new(std::io::stdout())));
    let shared = Arc::new(Shared::default());
    session.asker = Some(Box::new(Elicitor {
        writer: writer.clone(),
        shared: shared.clone(),
    }));
    let server = Server {
        registry,
        session: &session,
        writer: &writer,
        shared: &shared,
        pool: Pool::default(),
        reading: AtomicBool::new(true),
    };
    std::thread::scope(|scope| {
        for _ in 0..pool::WORKERS {
            scope.spawn(|| {
                server
                    .pool
                    .work(&|call, cancel| server.run_queued(call, cancel))
            });
        }
        scope.spawn(|| server.watch());
        server.read_loop(scope);
        server.reading.store(false, Ordering::SeqCst);
        server.pool.close();
    });
    ExitStatus::Success
}

/// A call waiting for a worker.
struct Queued {
    id: Value,
    name: String,
    arguments: Value,
    token: Option<Value>,
}

struct Server<'a> {
    registry: &'a Registry,
    session: &'a Session,
    writer: &'a Writer,
    shared: &'a Shared,
    pool: Pool<Queued>,
    /// The reader has not met end of input yet.
    reading: AtomicBool,
}

impl Server<'_> {
    /// Reads stdin until end of input: answers at once what is quick, queues calls, acts
    /// on cancellation and routes responses to waiting requests.
    fn read_loop<'s>(&'s self, scope: &'s std::thread::Scope<'s, '_>) {
        let stdin = std::io::stdin();
        let mut reader = stdin.lock();
        let mut line = Vec::new();
        while let Ok(true) = crate::wire::read_message(&mut reader, &mut line) {
            let value: Value = match serde_json::from_slice(&line) {
                Ok(value) => value,
                Err(err) => {
                    self.writer
                        .error(&Value::Null, PARSE_ERROR, &format!("Parse error: {err}"));
                    continue;
                }
            };
            match value {
                Value::Object(message) => self.inbound(message),
                Value::Array(items) if !items.is_empty() => {
                    // Batches (2025-03-26 only) are answered as one array once every
                    // entry is done, off the reader so pings stay quick.
                    scope.spawn(move || self.batch(items));
                }
                _ => self.writer.error(
                    &Value::Null,
                    INVALID_REQUEST,
                    "Invalid Request: expected a JSON-RPC object",
                ),
            }
        }
        // No answer to a question can come any more: wake every waiter, and later asks
        // fail at once.
        self.shared.input_ended.store(true, Ordering::SeqCst);
        if let Ok(mut waiting) = self.shared.waiting.lock() {
            waiting.clear();
        }
    }

    /// Handles one message from the client.
    fn inbound(&self, message: Map<String, Value>) {
        let method = message.get("method").and_then(Value::as_str);
        let id = message.get("id").cloned();
        match (method, id) {
            (None, Some(id)) if message.contains_key("result") || message.contains_key("error") => {
                let key = id.to_string();
                let waiter = self
                    .shared
                    .waiting
                    .lock()
                    .ok()
                    .and_then(|mut w| w.remove(&key));
                if let Some(waiter) = waiter {
                    let _ = waiter.send(message);
                }
            }
            (Some("notifications/cancelled"), None) => {
                if let Some(target) = message.get("params").and_then(|p| p.get("requestId")) {
                    self.pool.cancel(&target.to_string());
                }
            }
            // Other notifications need nothing from us.
            (_, None) => {}
            (Some("tools/call"), Some(id)) => {
                let params = message.get("params").cloned().unwrap_or(Value::Null);
                match self.prepare(&params) {
                    Ok(call) => self.submit(id, call, &params),
                    Err(text) => self.writer.error(&id, INVALID_PARAMS, &text),
                }
            }
            (_, Some(id)) => {
                if let Some(answer) = self.answer(&id, method.unwrap_or(""), &message) {
                    self.writer.send(&answer);
                }
            }
        }
    }

    /// The answer to a request that is not a tool call.
    fn answer(&self, id: &Value, method: &str, message: &Map<String, Value>) -> Option<Value> {
        let params = message.get("params").cloned().unwrap_or(Value::Null);
        let result = match method {
            "initialize" => Ok(self.initialize(&params)),
            "ping" => Ok(json!({})),
            "tools/list" => Ok(self.list()),
            "resources/list" => Ok(json!({"resources": []})),
            "resources/templates/list" => Ok(resources::templates()),
            "resources/read" => match params.get("uri").and_then(Value::as_str) {
                Some(uri) => {
                    resources::read(&self.session.dir, uri).map_err(|e| (INVALID_PARAMS, e))
                }
                None => Err((INVALID_PARAMS, "resources/read needs params.uri".into())),
            },
            "" => Err((INVALID_REQUEST, "a request needs a `method`".into())),
            other => Err((METHOD_NOT_FOUND, format!("Method not found: {other}"))),
        };
        Some(match result {
            Ok(result) => result_message(id, result),
            Err((code, text)) => error_message(id, code, &text),
        })
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
        self.shared.elicit.store(elicitation, Ordering::SeqCst);
        if let Ok(mut negotiated) = self.shared.version.lock() {
            *negotiated = version.to_string();
        }
        json!({
            "protocolVersion": version,
            "capabilities": {"tools": {"listChanged": false}, "resources": {}},
            "serverInfo": {"name": "tinytool", "title": "tinytool", "version": env!("CARGO_PKG_VERSION")},
            "instructions": "The tool layer of a coding agent: read, write, edit, apply_patch, bash, grep, glob and more. Paths are relative to the server's working directory; a permission policy decides every call.",
        })
    }

    fn list(&self) -> Value {
        let tools: Vec<Value> = self
            .registry
            .visible(self.session)
            .into_iter()
            .filter(|def| !NOT_SERVED.contains(&def.name))
            .map(results::tool_entry)
            .collect();
        json!({"tools": tools})
    }

    /// Checks a `tools/call`'s params: the tool's name and arguments, or the message of
    /// a `-32602`.
    fn prepare(&self, params: &Value) -> Result<(String, Value), String> {
        let Some(name) = params.get("name").and_then(Value::as_str) else {
            return Err("tools/call needs params.name".into());
        };
        if self.registry.get(name).is_none() || NOT_SERVED.contains(&name) {
            return Err(format!("Unknown tool: {name}"));
        }
        let arguments = match params.get("arguments") {
            None | Some(Value::Null) => Value::Object(Map::new()),
            Some(value) => value.clone(),
        };
        Ok((name.to_string(), arguments))
    }

    /// Queues a call on the pool; its answer is written when it ends (none when it was
    /// cancelled).
    fn submit(&self, id: Value, (name, arguments): (String, Value), params: &Value) {
        let token = params
            .get("_meta")
            .and_then(|m| m.get("progressToken"))
            .filter(|t| t.is_string() || t.is_i64() || t.is_u64())
            .cloned();
        // Refused only once the client is gone, when nobody would read an answer.
        self.pool.submit(Job {
            key: id.to_string(),
            payload: Queued {
                id,
                name,
                arguments,
                token,
            },
        });
    }

    /// A worker runs a queued call and answers it, unless it was cancelled meanwhile.
    fn run_queued(&self, call: Queued, cancel: CancelFlag) {
        let result = self.run_call(&call.name, call.arguments, cancel.clone(), call.token);
        if !cancel.is_set() {
            let links = self.shared.version().as_str() >= "2025-06-18";
            self.writer
                .result(&call.id, results::call_result(&result, links));
        }
    }

    /// Runs one call in its own scope: its cancellation flag, and progress notifications
    /// while it runs when the client gave a token.
    fn run_call(
        &self,
        name: &str,
        arguments: Value,
        cancel: CancelFlag,
        token: Option<Value>,
    ) -> CallResult {
        let call = ToolCall {
            id: None,
            name: name.to_string(),
            arguments: Arguments::Value(arguments),
        };
        let Some(token) = token else {
            let scope = CallScope {
                cancel,
                progress: None,
            };
            return crate::session::in_scope(scope, || self.registry.execute(self.session, call));
        };
        let lines = Arc::new(AtomicU64::new(0));
        let counted = Arc::new(AtomicBool::new(false));
        let scope = CallScope {
            cancel,
            progress: Some({
                let lines = lines.clone();
                let counted = counted.clone();
                Arc::new(move |progress: &Progress| {
                    lines.store(progress.lines, Ordering::Relaxed);
                    counted.store(true, Ordering::Relaxed);
                })
            }),
        };
        let (done_tx, done_rx) = mpsc::channel::<()>();
        let start = Instant::now();
        let writer = self.writer;
        std::thread::scope(|threads| {
            threads.spawn(move || {
                // Wakes every PROGRESS_EVERY until the call ends (the sender is dropped).
                let mut step = 0u64;
                while let Err(mpsc::RecvTimeoutError::Timeout) =
                    done_rx.recv_timeout(PROGRESS_EVERY)
                {
                    step += 1;
                    let elapsed = start.elapsed().as_secs();
                    let message = if counted.load(Ordering::Relaxed) {
                        format!(
                            "running for {elapsed} s; {} lines of output so far",
                            lines.load(Ordering::Relaxed)
                        )
                    } else {
                        format!("running for {elapsed} s")
                    };
                    writer.send(&json!({
                        "jsonrpc": "2.0",
                        "method": "notifications/progress",
                        "params": {"progressToken": token, "progress": step * PROGRESS_EVERY.as_secs(), "message": message},
                    }));
                }
            });
            let result =
                crate::session::in_scope(scope, || self.registry.execute(self.session, call));
            drop(done_tx);
            result
        })
    }

    /// Answers a batch: one array with every request's answer.
    fn batch(&self, items: Vec<Value>) {
        let mut responses = Vec::new();
        for item in items {
            let Value::Object(message) = item else {
                responses.push(error_message(
                    &Value::Null,
                    INVALID_REQUEST,
                    "a batch entry must be an object",
                ));
                continue;
            };
            let method = message.get("method").and_then(Value::as_str);
            match (method, message.get("id").cloned()) {
                (Some("tools/call"), Some(id)) => {
                    let params = message.get("params").cloned().unwrap_or(Value::Null);
                    responses.push(match self.prepare(&params) {
                        Ok((name, arguments)) => {
                            let result =
                                self.run_call(&name, arguments, CancelFlag::default(), None);
                            let links = self.shared.version().as_str() >= "2025-06-18";
                            result_message(&id, results::call_result(&result, links))
                        }
                        Err(text) => error_message(&id, INVALID_PARAMS, &text),
                    });
                }
                (_, None) => self.inbound(message),
                (_, Some(id)) => {
                    responses.extend(self.answer(&id, method.unwrap_or(""), &message));
                }
            }
        }
        if !responses.is_empty() {
            self.writer.send(&Value::Array(responses));
        }
    }

    /// Watches for a client that is gone (nobody reads our output): then every queued
    /// call is dropped, every running one stopped, and the server ends. Returns when input
    /// has ended and every call is done.
    fn watch(&self) {
        loop {
            std::thread::sleep(WATCH_EVERY);
            if output_closed() {
                self.pool.cancel_all();
                // Stopped calls end within the runner's cancellation tick; a call that
                // does not stop must not keep the process alive for a client that left.
                self.pool.wait_idle(Duration::from_secs(3));
                std::process::exit(0);
            }
            if !self.reading.load(Ordering::SeqCst) && self.pool.is_idle() {
                return;
            }
        }
    }
}

fn result_message(id: &Value, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

fn error_message(id: &Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
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
}

impl Asker for Elicitor {
    fn ask(&self, question: &str, options: &[String]) -> Result<Option<String>, String> {
        if !self.shared.elicit.load(Ordering::SeqCst) {
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
