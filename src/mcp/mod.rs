//! `tinytool mcp`: every tool over the Model Context Protocol, on stdio or over Streamable
//! HTTP (`--listen`, see `http`).
//!
//! Wire: JSON-RPC 2.0; on stdio one message per line on stdin and stdout. Methods:
//!
//! | method | answer |
//! |---|---|
//! | `initialize` | the client's protocol revision when it is one of [`PROTOCOL_VERSIONS`], else the newest of them; server name and version; the tools and resources capabilities |
//! | `server/discover` | every revision served, the capabilities, the instructions (see `modern`) |
//! | `tools/list` | the tools (hidden tools, `invalid` and `exit` left out), in the registry's fixed order, each with a title, annotations, `inputSchema` and `outputSchema` (see `results`) |
//! | `tools/call` | the registry's one execution flow, on the worker pool: `content` (the output text, or the text and images of an image or notebook read; a `resource_link` to a spill file), `isError`, `structuredContent` = the whole result, each image only referred to; cut to fit one message (`mcp.max_message_bytes`, see `results`) |
//! | `resources/read`, `resources/list`, `resources/templates/list` | spill files, `tinytool://output/NAME` only (see `resources`) |
//! | `ping` | `{}` (not in 2026-07-28, which removed it) |
//! | `notifications/cancelled` | a queued call is dropped unrun, a running one stopped (its process group killed); neither is answered |
//!
//! Two eras share every method. An `initialize`-era client negotiates once per connection
//! (stdio) or per `Mcp-Session-Id` (HTTP). A 2026-07-28 request instead carries
//! `_meta["io.modelcontextprotocol/protocolVersion"]` and the client's capabilities
//! itself, on every request, and its results carry `resultType` (see `modern`).
//!
//! A policy refusal or a tool error is a result with `isError: true`, never a protocol
//! error; an unknown tool is `-32602`, an unknown method `-32601`, a line that is not JSON
//! `-32700` (and the server keeps serving).
//!
//! Calls run concurrently on a bounded pool (`pool`), so answers come in completion order,
//! each with its id; calls beyond the running ones wait in a bounded queue served
//! round-robin between sessions; a call the full queue cannot take is answered at once
//! with [`SERVER_BUSY`] over HTTP, and on stdio waits for room (the server reads no
//! further, the pipe holds the client back). A call whose request carries `_meta.progressToken` gets
//! `notifications/progress` every few seconds from the moment it is queued (see
//! `progress`).
//!
//! A call whose answer can no longer be delivered is stopped (its process group killed):
//! on stdio when nobody reads the server's output any more (the client closed it or ended,
//! noticed within [`WATCH_EVERY`]) and [`END_GRACE`] after the end of input (the client's
//! way to end the session: both SDKs signal the server 2 s later); over HTTP when the
//! call's event stream closes or its session is deleted (see `http`). A client that gives
//! up on a call without cancelling it and keeps its connection (the Python SDK 1.x on its
//! read time-out) cannot be told from one that still waits: that call runs until its own
//! deadline (bash's `timeout`).
//!
//! No tool ends the server: `exit` is not served over MCP. On stdio the server ends at end
//! of input, once every request received before it is answered (calls that end within
//! [`END_GRACE`]; a question asked then gets no answer from the client); when nobody reads
//! its output any more, at any time, every queued call is dropped, every running one
//! stopped, and the server ends; on SIGINT, SIGTERM or SIGHUP every running command's
//! process group is killed (see `process`).
//!
//! A server runs for days: its memory stays flat under a steady load (see `memory`,
//! `bench/soak.py`).
//!
//! The transport owns the input: it hands every message to [`Core::handle`] with the
//! connection it belongs to ([`Conn`]) and where its answers go ([`Out`]). Quick requests
//! are answered at once, calls are queued, the client's answers to our own requests
//! (elicitation for `question`) are routed to the waiting call.

pub mod http;
mod memory;
mod modern;
mod peer;
mod pool;
mod progress;
mod resources;
pub mod results;
mod tasks;

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Sender};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};

use crate::exit::ExitStatus;
use crate::registry::{Arguments, CallResult, Registry, ToolCall};
use crate::session::{Asker, CallScope, CancelFlag, Session};

use pool::{Job, Pool};
use progress::Reporter;

/// Protocol revisions `initialize` negotiates, oldest first.
pub const PROTOCOL_VERSIONS: &[&str] = &["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];

/// Tools never served over MCP: `exit` would end the server under the client's feet.
pub const NOT_SERVED: &[&str] = &["exit", crate::registry::INVALID];

/// How often the server checks whether its client is gone.
const WATCH_EVERY: Duration = Duration::from_millis(100);
/// How long calls may still run after the end of stdio input, to be answered; then the
/// server stops them and ends.
const END_GRACE: Duration = Duration::from_secs(2);

const PARSE_ERROR: i64 = -32700;
const INVALID_REQUEST: i64 = -32600;
const METHOD_NOT_FOUND: i64 = -32601;
const INVALID_PARAMS: i64 = -32602;
/// The JSON-RPC "server error" of a call refused because the queue is full: the client
/// may send it again later (see `pool`).
const SERVER_BUSY: i64 = -32000;

/// Where the messages of one exchange go: stdout on stdio, the response of one HTTP
/// request over HTTP. Cloned into every thread that may answer; an HTTP response ends when
/// the last clone is dropped.
#[derive(Clone)]
pub struct Out {
    send: Arc<dyn Fn(&Value) + Send + Sync>,
    /// Whether a request of ours sent here reaches the client (stdio, an HTTP event
    /// stream), so a question may be asked through it.
    requests: bool,
}

impl Out {
    /// An `Out` that hands every message to `send`, our own requests included.
    pub fn new(send: impl Fn(&Value) + Send + Sync + 'static) -> Out {
        Out {
            send: Arc::new(send),
            requests: true,
        }
    }

    /// An `Out` where only answers and notifications go (a JSON reply, a batch, a task):
    /// a request of ours would never reach the client, so nothing is asked through it.
    pub fn replies_only(send: impl Fn(&Value) + Send + Sync + 'static) -> Out {
        Out {
            send: Arc::new(send),
            requests: false,
        }
    }

    fn send(&self, message: &Value) {
        (self.send)(message);
    }

    fn result(&self, id: &Value, result: Value) {
        self.send(&result_message(id, result));
    }

    fn error(&self, id: &Value, code: i64, message: &str) {
        self.send(&error_message(id, code, message));
    }
}

/// One client connection's protocol state: the whole stdio session, one HTTP session, or
/// one stateless (2026-07-28) request.
pub struct Conn {
    /// Waiters for the client's answers to our requests, by id.
    waiting: Mutex<HashMap<String, Sender<Map<String, Value>>>>,
    /// The client can answer nothing more (input ended, session deleted).
    input_ended: AtomicBool,
    /// The negotiated revision.
    version: Mutex<String>,
    /// Whether the client offered elicitation.
    elicit: AtomicBool,
    /// Prefix of this connection's keys in the shared pool (request ids are unique per
    /// connection only).
    prefix: String,
    /// The pool lane its calls wait in: waiting calls are served one lane at a time,
    /// round-robin (see `pool`).
    lane: String,
    /// A call that finds the queue full waits for room instead of being refused: the
    /// stdio transport then reads no further, and the pipe holds the client back.
    back_pressure: bool,
}

impl Conn {
    /// A connection whose calls are keyed in the pool under `prefix`, in a lane of its
    /// own.
    pub fn new(prefix: impl Into<String>) -> Conn {
        let prefix = prefix.into();
        Conn::in_lane(prefix.clone(), prefix)
    }

    /// A connection whose calls are keyed under `prefix` and wait in `lane` (one lane for
    /// all the stateless requests of one client).
    pub fn in_lane(prefix: impl Into<String>, lane: impl Into<String>) -> Conn {
        Conn {
            waiting: Mutex::new(HashMap::new()),
            input_ended: AtomicBool::new(false),
            version: Mutex::new(String::new()),
            elicit: AtomicBool::new(false),
            prefix: prefix.into(),
            lane: lane.into(),
            back_pressure: false,
        }
    }

    /// The same connection, its calls waiting for room in a full queue rather than being
    /// refused (for a transport whose reading holds its client back).
    pub fn with_back_pressure(mut self) -> Conn {
        self.back_pressure = true;
        self
    }

    fn version(&self) -> String {
        self.version.lock().map(|v| v.clone()).unwrap_or_default()
    }

    fn set_version(&self, version: &str) {
        if let Ok(mut negotiated) = self.version.lock() {
            *negotiated = version.to_string();
        }
    }

    /// The pool key of request `id` on this connection.
    pub fn key(&self, id: &Value) -> String {
        format!("{}{id}", self.prefix)
    }

    /// Whether the client can answer nothing more (its session was deleted or ended).
    pub fn input_ended(&self) -> bool {
        self.input_ended.load(Ordering::SeqCst)
    }

    /// No answer can come from the client any more: wake every waiter, and later asks
    /// fail at once.
    pub fn end_input(&self) {
        self.input_ended.store(true, Ordering::SeqCst);
        if let Ok(mut waiting) = self.waiting.lock() {
            waiting.clear();
        }
    }
}

/// A call waiting for a worker.
struct Queued {
    id: Value,
    name: String,
    arguments: Value,
    /// The client's progress token, when it gave one.
    token: Option<Value>,
    /// Set when a worker takes the call, under the lock that sends its queued progress
    /// notices (so none follows its answer).
    started: Arc<Mutex<bool>>,
    out: Out,
    conn: Arc<Conn>,
    /// The 2026-07-28 retry state of the call (its `inputResponses`), when it is modern.
    modern: Option<modern::Retry>,
    /// When the request arrived: its progress counts from here, waiting included.
    received: Instant,
}

/// The server without its transport: the registry, the session, the worker pool.
pub struct Core<'a> {
    registry: &'a Registry,
    session: &'a Session,
    pool: Pool<Queued>,
    tasks: Arc<tasks::Tasks>,
}

/// Runs the stdio server until end of input or until its client is gone.
pub fn serve(registry: &Registry, mut session: Session) -> ExitStatus {
    fit_images_to_messages(&mut session);
    let out = Out::new(|message: &Value| {
        let mut line = message.to_string();
        line.push('\n');
        let stdout = std::io::stdout();
        let mut lock = stdout.lock();
        // A client that went away is noticed by the watcher.
        let _ = lock.write_all(line.as_bytes()).and_then(|()| lock.flush());
    });
    session.asker = Some(Box::new(Elicitor));
    let core = Core::new(registry, &session);
    // On stdio a full queue stops the reading: the client's writes wait in the pipe,
    // nothing is refused.
    let conn = Arc::new(Conn::new("").with_back_pressure());
    let reading = AtomicBool::new(true);
    std::thread::scope(|scope| {
        core.start_workers(scope);
        scope.spawn(|| core.watch(&reading));
        read_stdin(&core, &conn, &out, scope);
        conn.end_input();
        reading.store(false, Ordering::SeqCst);
        core.pool.close();
    });
    ExitStatus::Success
}

/// Over MCP an image travels in one message, as base64 beside its text: whatever
/// `images.max_bytes` allows, an image is downscaled to what `mcp.max_message_bytes`
/// holds, rather than left out of a result that would not fit.
pub fn fit_images_to_messages(session: &mut Session) {
    /// The text, the JSON and the envelope around the image's base64.
    const AROUND: usize = 64 * 1024;
    let config = &mut session.config;
    let room = config.max_message_bytes.saturating_sub(AROUND) / 4 * 3;
    config.images.max_bytes = config.images.max_bytes.min(room as u64);
}

/// Reads stdin until end of input and hands every message to the core.
fn read_stdin<'s>(
    core: &'s Core<'_>,
    conn: &'s Arc<Conn>,
    out: &'s Out,
    scope: &'s std::thread::Scope<'s, '_>,
) {
    let stdin = std::io::stdin();
    let mut reader = stdin.lock();
    let mut line = Vec::new();
    let mut batches = std::collections::VecDeque::new();
    while let Ok(true) = crate::wire::read_message(&mut reader, &mut line) {
        match serde_json::from_slice::<Value>(&line) {
            Ok(Value::Array(items)) if !items.is_empty() => {
                // Batches (2025-03-26 only) are answered as one array once every entry
                // is done, off the reader so pings stay quick; as many at once as the
                // pool runs calls, then the reader waits for the oldest (back-pressure,
                // as for single calls).
                batches
                    .retain(|batch: &std::thread::ScopedJoinHandle<'_, ()>| !batch.is_finished());
                if batches.len() >= pool::WORKERS
                    && let Some(oldest) = batches.pop_front()
                {
                    let _ = oldest.join();
                }
                batches.push_back(scope.spawn(move || core.batch(conn, out, items)));
            }
            Ok(value) => core.handle(conn, out, value),
            Err(err) => out.error(&Value::Null, PARSE_ERROR, &format!("Parse error: {err}")),
        }
    }
}

impl<'a> Core<'a> {
    /// A core over `registry` and `session` (whose asker should be an [`Elicitor`]).
    pub fn new(registry: &'a Registry, session: &'a Session) -> Core<'a> {
        memory::tune();
        Core {
            registry,
            session,
            pool: Pool::default(),
            tasks: Arc::default(),
        }
    }

    /// Starts the pool's workers in `scope`, and the thread that tells waiting calls
    /// where they stand; both end once the pool is closed.
    pub fn start_workers<'s>(&'s self, scope: &'s std::thread::Scope<'s, '_>) {
        for _ in 0..pool::WORKERS {
            scope.spawn(|| {
                self.pool
                    .work(&|call, cancel| self.run_queued(call, cancel))
            });
        }
        scope.spawn(|| self.tell_waiting());
    }

    /// Every [`progress::EVERY`], a `notifications/progress` for each waiting call whose
    /// request carries a progress token: how many calls start before it. Its `progress`
    /// is the seconds since the request arrived, as the running call's is, so the values
    /// only grow.
    fn tell_waiting(&self) {
        while self.pool.pause(progress::EVERY) {
            let mut notices = Vec::new();
            self.pool.for_each_waiting(|call, ahead| {
                if let Some(token) = &call.token {
                    notices.push((
                        call.out.clone(),
                        token.clone(),
                        call.received,
                        ahead,
                        call.started.clone(),
                    ));
                }
            });
            // Sent outside the queue's lock, so that a slow client holds up no worker but
            // the one about to start its own call; a call that started meanwhile is not
            // told it waits.
            for (out, token, received, ahead, started) in notices {
                let started = started.lock().unwrap_or_else(PoisonError::into_inner);
                if !*started {
                    out.send(&progress::queued(&token, received, ahead, pool::WORKERS));
                }
            }
        }
    }

    /// Cancels the call of pool key `key` (queued: dropped; running: stopped).
    pub fn cancel(&self, key: &str) -> bool {
        self.pool.cancel(key)
    }

    /// Drops every queued call, stops every running one and closes the pool.
    pub fn shut_down(&self) {
        self.pool.cancel_all();
    }

    /// Handles one message from the client of `conn`; answers go to `out`.
    pub fn handle(&self, conn: &Arc<Conn>, out: &Out, value: Value) {
        let Value::Object(message) = value else {
            out.error(
                &Value::Null,
                INVALID_REQUEST,
                "Invalid Request: expected a JSON-RPC object",
            );
            return;
        };
        let method = message.get("method").and_then(Value::as_str);
        let id = message.get("id").cloned();
        match (method, id) {
            (None, Some(id)) if message.contains_key("result") || message.contains_key("error") => {
                let waiter = conn
                    .waiting
                    .lock()
                    .ok()
                    .and_then(|mut w| w.remove(&id.to_string()));
                if let Some(waiter) = waiter {
                    let _ = waiter.send(message);
                }
            }
            (Some("notifications/cancelled"), None) => {
                if let Some(target) = message.get("params").and_then(|p| p.get("requestId")) {
                    self.pool.cancel(&conn.key(target));
                }
            }
            // Other notifications need nothing from us.
            (_, None) => {}
            (Some(method), Some(id)) => {
                let params = message.get("params").cloned().unwrap_or(Value::Null);
                let modern = match modern::request_meta(&params) {
                    Some(Ok(meta)) => Some(meta),
                    Some(Err(error)) => {
                        out.send(&error.message(&id));
                        return;
                    }
                    None => None,
                };
                if method == "tools/call" {
                    match self.prepare(&params) {
                        Ok(call) => match self.task_form(conn, &call.0, &params, modern.as_ref()) {
                            Some(form) => {
                                self.submit_task(conn, out, &id, call, &params, modern, form)
                            }
                            None => self.submit(conn, out, id, call, &params, modern),
                        },
                        Err(text) => out.error(&id, INVALID_PARAMS, &text),
                    }
                } else if method == "tasks/result" && modern.is_none() {
                    // Waits for the task's end, off the reader.
                    let tasks = self.tasks.clone();
                    let out = out.clone();
                    let owner = conn.prefix.clone();
                    std::thread::spawn(move || match tasks.result(&params, Some(&owner)) {
                        Ok(result) => out.result(&id, result),
                        Err((code, text)) => out.error(&id, code, &text),
                    });
                } else {
                    out.send(&self.answer(conn, &id, method, &params, modern.as_ref()));
                }
            }
            (None, Some(id)) => out.error(&id, INVALID_REQUEST, "a request needs a `method`"),
        }
    }

    /// The answer to a request that is not a tool call.
    fn answer(
        &self,
        conn: &Conn,
        id: &Value,
        method: &str,
        params: &Value,
        modern: Option<&modern::Meta>,
    ) -> Value {
        if let Some(meta) = modern
            && method.starts_with("tasks/")
            && !meta.tasks
        {
            return json!({"jsonrpc": "2.0", "id": id, "error": {
                "code": modern::MISSING_CAPABILITY,
                "message": format!(
                    "{method} needs the {} extension in the request's client capabilities",
                    tasks::EXTENSION
                ),
                "data": {"requiredCapabilities": {"extensions": {tasks::EXTENSION: {}}}},
            }});
        }
        if method == "resources/read"
            && let Some(uri) = params.get("uri").and_then(Value::as_str)
            && let Err(text) = resources::read(&self.session.dir, uri, self.room(id, 1))
        {
            // Resource not found (and any unreadable one) names the URI in `data`.
            return json!({"jsonrpc": "2.0", "id": id, "error": {
                "code": INVALID_PARAMS, "message": text, "data": {"uri": uri},
            }});
        }
        let result = match method {
            "initialize" if modern.is_none() => Ok(self.initialize(conn, params)),
            "server/discover" => Ok(modern::discover()),
            "ping" if modern.is_none() => Ok(json!({})),
            "tools/list" => {
                let elicits = modern.map_or_else(
                    || conn.elicit.load(Ordering::SeqCst),
                    |meta| meta.elicitation,
                );
                Ok(self.list(&conn.version(), elicits))
            }
            "tasks/get" => self
                .tasks
                .get(params, modern.is_none().then_some(conn.prefix.as_str()))
                .map_err(|e| (INVALID_PARAMS, e)),
            "tasks/list" if modern.is_none() => Ok(self.tasks.list(&conn.prefix)),
            "tasks/update" if modern.is_some() => self
                .tasks
                .update_request(params)
                .map_err(|e| (INVALID_PARAMS, e)),
            "tasks/cancel" => match self
                .tasks
                .cancel(params, modern.is_none().then_some(conn.prefix.as_str()))
            {
                Ok((key, answer)) => {
                    self.pool.cancel(&key);
                    Ok(answer)
                }
                Err(e) => Err((INVALID_PARAMS, e)),
            },
            "resources/list" => Ok(json!({"resources": []})),
            "resources/templates/list" => Ok(resources::templates()),
            "resources/read" => match params.get("uri").and_then(Value::as_str) {
                Some(uri) => {
                    let room = self.room(id, 1);
                    resources::read(&self.session.dir, uri, room).map_err(|e| (INVALID_PARAMS, e))
                }
                None => Err((INVALID_PARAMS, "resources/read needs params.uri".into())),
            },
            other => Err((METHOD_NOT_FOUND, format!("Method not found: {other}"))),
        };
        match result {
            Ok(result) if modern.is_some() || method == "server/discover" => {
                result_message(id, modern::complete(method, result))
            }
            Ok(result) => result_message(id, result),
            Err((code, text)) => error_message(id, code, &text),
        }
    }

    fn initialize(&self, conn: &Conn, params: &Value) -> Value {
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
        conn.elicit.store(elicitation, Ordering::SeqCst);
        conn.set_version(version);
        json!({
            "protocolVersion": version,
            "capabilities": modern::capabilities(version),
            "serverInfo": modern::server_info(),
            "instructions": modern::INSTRUCTIONS,
        })
    }

    /// The tools, in the registry's fixed order; under 2025-11-25 each says it may run as
    /// a task. `elicits`: the client offered elicitation (then `question` can ask it).
    fn list(&self, version: &str, elicits: bool) -> Value {
        let tasks = version == "2025-11-25";
        LISTING.with(|listing| listing.set(Some(elicits)));
        let visible = self.registry.visible(self.session);
        LISTING.with(|listing| listing.set(None));
        let tools: Vec<Value> = visible
            .into_iter()
            .filter(|def| !NOT_SERVED.contains(&def.name))
            .map(|def| {
                let description = crate::registry::description(def, self.session);
                let mut entry = results::tool_entry(def, &description);
                if tasks {
                    entry["execution"] = json!({"taskSupport": "optional"});
                }
                entry
            })
            .collect();
        json!({"tools": tools})
    }

    /// Checks a `tools/call`'s params: the tool's name and arguments, or the message of
    /// a `-32602`.
    fn prepare(&self, params: &Value) -> Result<(String, Value), String> {
        let Some(name) = params.get("name").and_then(Value::as_str) else {
            return Err("tools/call needs params.name".into());
        };
        // Another spelling or another agent's name goes to the flow, which translates it
        // and says how; exit and invalid are not served by any name.
        let served = match self.registry.recognise(name) {
            None => false,
            Some(called) => !matches!(
                called.fixed_target(),
                Some(crate::aliases::Becomes::Tool(tool)) if NOT_SERVED.contains(&tool)
            ),
        };
        if !served {
            return Err(self.registry.unknown_tool(self.session, name, NOT_SERVED));
        }
        let arguments = match params.get("arguments") {
            None | Some(Value::Null) => Value::Object(Map::new()),
            Some(value) => value.clone(),
        };
        Ok((name.to_string(), arguments))
    }

    /// Queues a call on the pool; its answer is written when it ends (none when it was
    /// cancelled).
    fn submit(
        &self,
        conn: &Arc<Conn>,
        out: &Out,
        id: Value,
        (name, arguments): (String, Value),
        params: &Value,
        meta: Option<modern::Meta>,
    ) {
        let token = params
            .get("_meta")
            .and_then(|m| m.get("progressToken"))
            .filter(|t| t.is_string() || t.is_i64() || t.is_u64())
            .cloned();
        let (conn, modern) = match meta {
            Some(meta) => {
                // A modern request is its own connection: its revision and capabilities
                // are its own, and it is keyed in the pool like its transport's requests.
                let mut own = Conn::in_lane(conn.prefix.clone(), conn.lane.clone());
                own.back_pressure = conn.back_pressure;
                own.set_version(modern::VERSION);
                own.elicit.store(meta.elicitation, Ordering::SeqCst);
                (Arc::new(own), Some(modern::Retry::from_params(params)))
            }
            None => (conn.clone(), None),
        };
        let answer_to = id.clone();
        let back_pressure = conn.back_pressure;
        let job = Job {
            key: conn.key(&id),
            lane: conn.lane.clone(),
            payload: Queued {
                id,
                name,
                arguments,
                token,
                started: Arc::default(),
                out: out.clone(),
                conn,
                modern,
                received: Instant::now(),
            },
        };
        let submitted = if back_pressure {
            self.pool.submit_when_room(job)
        } else {
            self.pool.submit(job)
        };
        let (queued, limit, scope) = match submitted {
            Ok(()) => return,
            // Shutting down: nobody would read an answer.
            Err(pool::Refused::Closing) => return,
            Err(pool::Refused::LaneFull) => (
                pool::MAX_QUEUED_PER_LANE,
                pool::MAX_QUEUED_PER_LANE,
                "of this session",
            ),
            Err(pool::Refused::Full) => (pool::MAX_QUEUED, pool::MAX_QUEUED, "in all"),
        };
        out.send(&json!({"jsonrpc": "2.0", "id": answer_to, "error": {
            "code": SERVER_BUSY,
            "message": format!(
                "Server busy: {queued} calls {scope} are already waiting for one of the {} \
                 workers (at most {} wait per session, {} in all); the call was not run: \
                 send it again once an earlier call has answered",
                pool::WORKERS,
                pool::MAX_QUEUED_PER_LANE,
                pool::MAX_QUEUED
            ),
            "data": {"queued": queued, "limit": limit, "workers": pool::WORKERS},
        }}));
    }

    /// Whether a call becomes a task, and in which form: a 2025-11-25 call that asks for one
    /// (`params.task`), or a 2026-07-28 call of a long tool from a client that takes task
    /// handles.
    fn task_form(
        &self,
        conn: &Conn,
        name: &str,
        params: &Value,
        meta: Option<&modern::Meta>,
    ) -> Option<tasks::Form> {
        match meta {
            Some(meta) => {
                (meta.tasks && tasks::LONG_TOOLS.contains(&name)).then_some(tasks::Form::Extension)
            }
            None => (params.get("task").is_some_and(Value::is_object)
                && conn.version().as_str() >= "2025-11-25")
                .then_some(tasks::Form::Legacy),
        }
    }

    /// Queues a call as a task and answers at once with the task handle; the call's own
    /// answer goes into the task.
    #[allow(clippy::too_many_arguments)]
    fn submit_task(
        &self,
        conn: &Arc<Conn>,
        out: &Out,
        id: &Value,
        call: (String, Value),
        params: &Value,
        meta: Option<modern::Meta>,
        form: tasks::Form,
    ) {
        let ttl = params
            .get("task")
            .and_then(|t| t.get("ttl"))
            .and_then(Value::as_u64);
        let task = self.tasks.create(form, ttl, &conn.prefix, |task| {
            conn.key(&Value::String(format!("task:{task}")))
        });
        let task = match task {
            Ok(task) => task,
            Err(text) => return out.error(id, INVALID_PARAMS, &text),
        };
        let answer = self.tasks.created(&task);
        let answer = match form {
            tasks::Form::Legacy => answer,
            tasks::Form::Extension => {
                let mut answer = answer;
                if let Value::Object(fields) = &mut answer {
                    fields.insert(
                        "_meta".into(),
                        json!({"io.modelcontextprotocol/serverInfo": modern::server_info()}),
                    );
                }
                answer
            }
        };
        // Progress goes into the task's status message: ask for it whatever the client
        // sent.
        let mut params = params.clone();
        params["_meta"]["progressToken"] = json!(task);
        self.submit(
            conn,
            &self.tasks.sink(&task),
            Value::String(format!("task:{task}")),
            call,
            &params,
            meta,
        );
        out.result(id, answer);
    }

    /// A worker runs a queued call and answers it, unless it was cancelled meanwhile.
    fn run_queued(&self, call: Queued, cancel: CancelFlag) {
        let context = CallContext {
            out: call.out.clone(),
            conn: call.conn.clone(),
            modern: call.modern,
        };
        // The queued notices end here; the running ones start.
        *call.started.lock().unwrap_or_else(PoisonError::into_inner) = true;
        let reporter = call
            .token
            .map(|token| Reporter::start(call.out.clone(), token, call.received));
        let (result, context) = with_context(context, || {
            self.run_call(
                &call.name,
                call.arguments,
                cancel.clone(),
                reporter.as_ref(),
            )
        });
        // No notification may follow the answer.
        if let Some(reporter) = reporter {
            reporter.finish();
        }
        memory::call_ended();
        if cancel.is_set() {
            return;
        }
        let room = self.room(&call.id, 1);
        let answer = match &context.modern {
            Some(retry) => match retry.input_required() {
                Some(required) => required,
                None => modern::complete("tools/call", results::call_result(&result, true, room)),
            },
            None => {
                let links = call.conn.version().as_str() >= "2025-06-18";
                results::call_result(&result, links, room)
            }
        };
        call.out.result(&call.id, answer);
    }

    /// Runs one call in its own scope: its cancellation flag, and what its command reports
    /// to `reporter` (the client's progress notifications) when the client gave a token.
    fn run_call(
        &self,
        name: &str,
        arguments: Value,
        cancel: CancelFlag,
        reporter: Option<&Reporter>,
    ) -> CallResult {
        let call = ToolCall {
            id: None,
            name: name.to_string(),
            arguments: Arguments::Value(arguments),
        };
        let scope = CallScope {
            cancel,
            progress: reporter.map(Reporter::sink),
        };
        crate::session::in_scope(scope, || self.registry.execute(self.session, call))
    }

    /// Bytes of JSON a result for request `id` may take, when `shares` results go in one
    /// message: the message cap (`mcp.max_message_bytes`) less the envelope, shared.
    fn room(&self, id: &Value, shares: usize) -> usize {
        /// The envelope around a result: `jsonrpc`, the id, `resultType`, the server's
        /// `_meta`, an HTTP event's framing.
        const ENVELOPE: usize = 4096;
        let cap = self.session.config.max_message_bytes;
        let id_len = serde_json::to_vec(id).map_or(cap, |bytes| bytes.len());
        (cap / shares.max(1)).saturating_sub(ENVELOPE + id_len)
    }

    /// Answers a batch: one array with every request's answer.
    pub fn batch(&self, conn: &Arc<Conn>, out: &Out, items: Vec<Value>) {
        let shares = items.len();
        let (tx, rx) = mpsc::channel::<Value>();
        {
            let collect = Out::replies_only(move |message: &Value| {
                let _ = tx.send(message.clone());
            });
            for item in items {
                let Value::Object(message) = item else {
                    collect.error(
                        &Value::Null,
                        INVALID_REQUEST,
                        "a batch entry must be an object",
                    );
                    continue;
                };
                let method = message.get("method").and_then(Value::as_str);
                match (method, message.get("id").cloned()) {
                    (Some("tools/call"), Some(id)) => {
                        let params = message.get("params").cloned().unwrap_or(Value::Null);
                        match self.prepare(&params) {
                            Ok((name, arguments)) => {
                                let result =
                                    self.run_call(&name, arguments, CancelFlag::default(), None);
                                let links = conn.version().as_str() >= "2025-06-18";
                                let room = self.room(&id, shares);
                                collect.result(&id, results::call_result(&result, links, room));
                            }
                            Err(text) => collect.error(&id, INVALID_PARAMS, &text),
                        }
                    }
                    _ => self.handle(conn, &collect, Value::Object(message)),
                }
            }
        }
        let responses: Vec<Value> = rx.into_iter().filter(|m| m.get("id").is_some()).collect();
        if !responses.is_empty() {
            out.send(&Value::Array(responses));
        }
    }

    /// Watches for a stdio client that is gone (nobody reads our output): then every
    /// queued call is dropped, every running one stopped, and the server ends. Once input
    /// has ended, the calls still running [`END_GRACE`] later are stopped too. Returns when
    /// input has ended and every call is done.
    fn watch(&self, reading: &AtomicBool) {
        let mut ended: Option<Instant> = None;
        loop {
            std::thread::sleep(WATCH_EVERY);
            if output_closed() {
                self.pool.cancel_all();
                // Stopped calls end within the runner's cancellation tick; a call that
                // does not stop must not keep the process alive for a client that left.
                self.pool.wait_idle(Duration::from_secs(3));
                std::process::exit(0);
            }
            if reading.load(Ordering::SeqCst) {
                continue;
            }
            if self.pool.is_idle() {
                return;
            }
            let since = *ended.get_or_insert_with(Instant::now);
            if since.elapsed() >= END_GRACE {
                // The client ended the session: nobody waits for these answers.
                self.pool.cancel_all();
                self.pool.wait_idle(Duration::from_secs(3));
                if !self.pool.is_idle() {
                    std::process::exit(0);
                }
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

/// What the asker needs to know about the call running on its thread.
struct CallContext {
    out: Out,
    conn: Arc<Conn>,
    modern: Option<modern::Retry>,
}

thread_local! {
    static CONTEXT: RefCell<Option<CallContext>> = const { RefCell::new(None) };
    /// While a `tools/list` is answered on this thread: whether its client offered
    /// elicitation (what [`Elicitor::reachable`] says then).
    static LISTING: Cell<Option<bool>> = const { Cell::new(None) };
}

/// Runs `work` with `context` as this thread's call context; returns the context too (the
/// asker may have recorded an input request in it).
fn with_context<R>(context: CallContext, work: impl FnOnce() -> R) -> (R, CallContext) {
    CONTEXT.with(|slot| slot.replace(Some(context)));
    let result = work();
    let context = CONTEXT.with(|slot| slot.replace(None));
    match context {
        Some(context) => (result, context),
        // Unreachable: only `with_context` takes the slot.
        None => (
            result,
            CallContext {
                out: Out::replies_only(|_| {}),
                conn: Arc::new(Conn::new("")),
                modern: None,
            },
        ),
    }
}

/// Asks the client of the running call: through `elicitation/create` on an
/// `initialize`-era connection that offered elicitation, through an `input_required`
/// result on a 2026-07-28 request (see `modern`).
pub struct Elicitor;

impl Asker for Elicitor {
    fn reachable(&self) -> bool {
        if let Some(elicits) = LISTING.with(Cell::get) {
            return elicits;
        }
        CONTEXT.with(|slot| {
            slot.borrow()
                .as_ref()
                .is_none_or(|context| context.conn.elicit.load(Ordering::SeqCst))
        })
    }

    fn ask(&self, question: &str, options: &[String]) -> Result<Option<String>, String> {
        enum Route {
            /// No client to ask (not inside an MCP call, or the client cannot show it).
            Nobody,
            /// A 2026-07-28 call: answered from its retry, or recorded as input required.
            Answered(Result<Option<String>, String>),
            /// An `initialize`-era connection: ask with a request of our own.
            Request(Out, Arc<Conn>),
        }
        let route = CONTEXT.with(|slot| {
            let mut slot = slot.borrow_mut();
            let Some(context) = slot.as_mut() else {
                return Route::Nobody;
            };
            if !context.conn.elicit.load(Ordering::SeqCst) {
                return Route::Nobody;
            }
            match context.modern.as_mut() {
                Some(retry) => Route::Answered(retry.ask(question, options)),
                None if context.out.requests => {
                    Route::Request(context.out.clone(), context.conn.clone())
                }
                None => Route::Nobody,
            }
        });
        let (out, conn) = match route {
            Route::Nobody => return Ok(None),
            Route::Answered(answer) => return answer,
            Route::Request(out, conn) => (out, conn),
        };
        if conn.input_ended.load(Ordering::SeqCst) {
            return Err("the client can no longer answer: its input has ended".to_string());
        }
        let id = Value::String(crate::events::new_id("elicit"));
        let (tx, rx) = mpsc::channel();
        if let Ok(mut waiting) = conn.waiting.lock() {
            // Checked under the lock the reader clears at end of input, so a waiter is
            // either woken by that clear or never registered.
            if conn.input_ended.load(Ordering::SeqCst) {
                return Err("the client can no longer answer: its input has ended".to_string());
            }
            waiting.insert(id.to_string(), tx);
        }
        out.send(&json!({
            "jsonrpc": "2.0",
            "id": id,
            "method": "elicitation/create",
            "params": modern::elicit_params(question, options),
        }));
        let reply = rx
            .recv_timeout(Duration::from_secs(3600))
            .map_err(|_| "the client did not answer the question".to_string())?;
        if let Some(error) = reply.get("error") {
            return Err(format!("the client could not ask the question: {error}"));
        }
        modern::elicit_answer(&reply.get("result").cloned().unwrap_or(Value::Null))
    }
}
