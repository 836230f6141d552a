//! Streamable HTTP: `tinytool mcp --listen ADDR:PORT` serves the same core at `/mcp`.
//!
//! ```text
//! POST   /mcp   one JSON-RPC message (or a 2025-03-26 batch)
//!               request      -> 200 application/json, or text/event-stream for tools/call
//!                               (progress notifications, our elicitation requests, then
//!                               the response; the stream ends after it)
//!               notification, response -> 202, no body
//! DELETE /mcp   ends the Mcp-Session-Id session (its calls are stopped) -> 204
//! GET    /mcp   405 (the server sends nothing outside a request's stream)
//! ```
//!
//! Eras: `initialize` opens a session (`Mcp-Session-Id` on its answer; every later
//! request of that client names it: missing -> 400, unknown or deleted -> 404). A
//! 2026-07-28 request (its `_meta` names the revision) is stateless: no session, and
//! its `MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name` headers must match the body
//! (else 400 with `-32020` HeaderMismatch); an unsupported revision is 400 with `-32022`,
//! an unknown method 404 with `-32601`.
//!
//! A call whose client went away is stopped (its process group killed): closing its event
//! stream, or closing the connection of a JSON-only call, is seen within [`WATCH_EVERY`].
//!
//! Load: calls wait for a worker in the core's fair queue (one lane per session, one for
//! all the stateless requests of one client address), so a burst of requests is answered
//! late, never refused with a 5xx; only a full queue answers, with a JSON-RPC error. The
//! connection limits and request deadlines are the `server` module's.
//!
//! Security, checked before anything else, each failing closed:
//! - a second `Host`, `Origin` or `Authorization` header -> 400;
//! - `Host` must name a loopback host when the server listens on loopback (DNS-rebinding
//!   protection) -> 403;
//! - an `Origin` header must be a loopback origin (or, off loopback, the `Host` the
//!   request was sent to) -> 403;
//! - without a token, on loopback, a connection of another user than the server's (told
//!   by the kernel's socket table, `peer`) -> 403: any local user can connect to
//!   127.0.0.1, and the tools run with the server's rights;
//! - OAuth discovery paths (`/.well-known/oauth-*`, `/register`, ...) -> 404 saying that
//!   the server takes a fixed bearer token and serves no OAuth metadata;
//! - with a token (`--token-file`, required off loopback), `Authorization: Bearer TOKEN`
//!   (the scheme in any case, RFC 7235), compared in constant time -> 401 with
//!   `WWW-Authenticate: Bearer realm="tinytool"` (plus `error="invalid_token"` for a wrong
//!   one) and no `resource_metadata`, so an OAuth-capable client finds no authorization
//!   server to send its user to;
//! - bodies over [`MAX_BODY`] -> 413; at most [`MAX_SESSIONS`] sessions, the oldest ended
//!   first.
//!
//! Plain threads: one per connection (`server`), calls on the core's worker pool; no
//! async runtime.

mod server;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::{Conn, Core, Elicitor, Out, modern};
use crate::exit::ExitStatus;
use crate::registry::Registry;
use crate::session::Session;
use server::{BODY_RATE, BodyError, Exchange, REQUEST_TIME, Reply};

/// The path of the MCP endpoint.
const ENDPOINT: &str = "/mcp";
/// The largest request body accepted.
pub const MAX_BODY: usize = 4 * 1024 * 1024;
/// `initialize`-era sessions kept; a new one beyond this ends the oldest (its calls are
/// stopped; its client gets 404 and may initialize again).
const MAX_SESSIONS: usize = 256;
/// How often an open event stream gets a comment when it has nothing else to say, so
/// proxies and clients see it alive.
const KEEPALIVE: Duration = Duration::from_secs(1);
/// How often a request waiting for its call checks that its client is still connected.
const WATCH_EVERY: Duration = Duration::from_millis(200);
/// The realm of our `WWW-Authenticate` challenges.
const REALM: &str = "tinytool";
/// What a client looking for OAuth metadata is told.
const NO_OAUTH: &str = "tinytool serves no OAuth metadata: it takes a fixed bearer token. \
    Send `Authorization: Bearer TOKEN`, TOKEN being the first line of the server's \
    --token-file; for OAuth, put the server behind a proxy that does it (tinytool-mcp(1), \
    HTTP)";

/// HeaderMismatch (2026-07-28).
const HEADER_MISMATCH: i64 = -32020;

/// How the server listens.
#[derive(Debug, Clone)]
pub struct Options {
    /// Where it listens.
    pub addr: SocketAddr,
    /// The bearer token every request must carry; required off loopback.
    pub token: Option<String>,
}

impl Options {
    /// Checks the options before listening: off loopback a token is required.
    pub fn check(&self) -> Result<(), String> {
        if !self.addr.ip().is_loopback() && self.token.is_none() {
            return Err(format!(
                "mcp --listen {}: refusing to listen on a non-loopback address without a \
                 bearer token; pass --token-file FILE (or listen on 127.0.0.1)",
                self.addr
            ));
        }
        Ok(())
    }
}

/// Reads a token file: its first line, trimmed; an empty token is refused.
pub fn read_token(path: &std::path::Path) -> Result<String, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("--token-file {}: {e}", path.display()))?;
    let token = text.lines().next().unwrap_or("").trim().to_string();
    if token.is_empty() {
        return Err(format!(
            "--token-file {}: the token is empty",
            path.display()
        ));
    }
    Ok(token)
}

/// Serves until the process is stopped (SIGINT, SIGTERM: running commands are killed by
/// the process module's handler).
pub fn serve(registry: &Registry, mut session: Session, options: &Options) -> ExitStatus {
    if let Err(message) = options.check() {
        eprintln!("tinytool: {message}");
        return ExitStatus::Usage;
    }
    let listener = match server::Listener::bind(options.addr) {
        Ok(listener) => listener,
        Err(err) => {
            eprintln!("tinytool: mcp --listen {}: {err}", options.addr);
            return ExitStatus::Usage;
        }
    };
    let bound = listener.local_addr().unwrap_or(options.addr);
    eprintln!("tinytool mcp: listening on http://{bound}{ENDPOINT}");
    session.asker = Some(Box::new(Elicitor));
    super::fit_images_to_messages(&mut session);
    let core = Core::new(registry, &session);
    let state = State {
        core: &core,
        options,
        sessions: Mutex::new(HashMap::new()),
        counter: AtomicU64::new(0),
    };
    let handler = |exchange: &mut Exchange| state.respond(exchange);
    std::thread::scope(|scope| {
        core.start_workers(scope);
        listener.run(scope, &handler);
        core.shut_down();
    });
    ExitStatus::Success
}

struct State<'a, 'c> {
    core: &'a Core<'c>,
    options: &'a Options,
    /// `initialize`-era sessions by id, with their creation order.
    sessions: Mutex<HashMap<String, (u64, Arc<Conn>)>>,
    /// Numbers the stateless requests (their pool key prefix).
    counter: AtomicU64,
}

fn plain(status: u16, text: &str) -> Reply {
    Reply::new(
        status,
        "text/plain; charset=utf-8",
        format!("{text}\n").into_bytes(),
    )
}

fn json_reply(status: u16, body: &Value) -> Reply {
    Reply::new(status, "application/json", body.to_string().into_bytes())
}

/// A JSON-RPC error without an id, as the body of an HTTP error.
fn rpc_error(status: u16, code: i64, message: &str) -> Reply {
    rpc_error_for(status, &Value::Null, code, message)
}

/// A JSON-RPC error answering request `id`, as the body of an HTTP error.
fn rpc_error_for(status: u16, id: &Value, code: i64, message: &str) -> Reply {
    json_reply(
        status,
        &json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}),
    )
}

/// The answer of a call stopped because its session was deleted or ended while it ran.
fn session_ended_message(id: &Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32000, "message":
        "Session ended: the session was deleted (or ended to make room for a newer one) \
         while this call ran, so the call was stopped and its command killed; start a new \
         session (initialize) and send the call again"}})
}

/// [`session_ended_message`] as a whole answer: 404, as any request of an ended session.
fn session_ended(id: &Value) -> Reply {
    json_reply(404, &session_ended_message(id))
}

/// A header's value, owned.
fn get_header(exchange: &Exchange, name: &str) -> Option<String> {
    exchange.head.header(name).map(String::from)
}

/// The token of an `Authorization` value of the Bearer scheme, the scheme in any case
/// (RFC 7235, 2.1: case-insensitive), separated from the token by spaces or tabs.
fn bearer_token(value: &str) -> Option<&str> {
    let value = value.trim();
    let (scheme, token) = value.split_once([' ', '\t']).unwrap_or((value, ""));
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| token.trim_start_matches([' ', '\t']))
}

/// Whether `path` is where an OAuth client looks for metadata or endpoints (RFC 9728,
/// RFC 8414, OpenID discovery, the 2025-03-26 default endpoints).
fn oauth_discovery(path: &str) -> bool {
    path.starts_with("/.well-known/oauth-")
        || path.starts_with("/.well-known/openid-configuration")
        || path.ends_with("/.well-known/openid-configuration")
        || ["/register", "/authorize", "/token"].contains(&path)
}

/// The host part of a `Host` header value or URL authority (no port, no brackets).
fn host_of(authority: &str) -> &str {
    let authority = authority.trim();
    if let Some(rest) = authority.strip_prefix('[') {
        return rest.split(']').next().unwrap_or("");
    }
    authority.split(':').next().unwrap_or("")
}

fn is_loopback_host(host: &str) -> bool {
    let host = host.to_ascii_lowercase();
    host == "localhost"
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// Compares two byte strings in time that depends on their lengths only.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    let mut diff = a.len() ^ b.len();
    for (i, x) in a.iter().enumerate() {
        let y = b.get(i % b.len().max(1)).copied().unwrap_or(0);
        diff |= usize::from(x ^ y);
    }
    diff == 0
}

/// Decodes a header value that may use the `=?base64?...?=` sentinel.
fn decode_header_value(value: &str) -> Option<String> {
    use base64::Engine;
    match value
        .strip_prefix("=?base64?")
        .and_then(|v| v.strip_suffix("?="))
    {
        Some(encoded) => base64::engine::general_purpose::STANDARD
            .decode(encoded)
            .ok()
            .and_then(|bytes| String::from_utf8(bytes).ok()),
        None => Some(value.to_string()),
    }
}

impl State<'_, '_> {
    fn respond(&self, exchange: &mut Exchange) {
        if let Some(reply) = self.refusal(exchange) {
            exchange.respond(reply);
            return;
        }
        let session_id = get_header(exchange, "Mcp-Session-Id");
        match exchange.head.method.as_str() {
            "POST" => {}
            "DELETE" => {
                let reply = match session_id {
                    None => plain(400, "DELETE needs an Mcp-Session-Id header"),
                    Some(id) => match self.sessions.lock().ok().and_then(|mut s| s.remove(&id)) {
                        Some((_, conn)) => {
                            conn.end_input();
                            self.core.pool.cancel_prefix(&conn.prefix);
                            Reply::empty(204)
                        }
                        None => plain(404, "no such session"),
                    },
                };
                exchange.respond(reply);
                return;
            }
            _ => {
                exchange.respond(
                    plain(405, "only POST (and DELETE for a session) are served")
                        .with_header("Allow", "POST, DELETE"),
                );
                return;
            }
        }
        let accept = get_header(exchange, "Accept").unwrap_or_default();
        let wants =
            |kind: &str| accept.is_empty() || accept.contains(kind) || accept.contains("*/*");
        let (json_ok, sse_ok) = (wants("application/json"), wants("text/event-stream"));
        if !json_ok && !sse_ok {
            exchange.respond(plain(
                406,
                "Accept must list application/json or text/event-stream",
            ));
            return;
        }
        if let Some(kind) = exchange.head.header("Content-Type")
            && !kind.to_ascii_lowercase().contains("application/json")
        {
            exchange.respond(plain(415, "the body must be application/json"));
            return;
        }
        let body = match read_body(exchange) {
            Ok(body) => body,
            Err(reply) => {
                exchange.respond(reply);
                return;
            }
        };
        self.handle(exchange, body, session_id, sse_ok);
    }

    /// A request whose body was read; `sse_ok`: whether its client accepts an event
    /// stream.
    fn handle(
        &self,
        exchange: &mut Exchange,
        body: Vec<u8>,
        session_id: Option<String>,
        sse_ok: bool,
    ) {
        let value: Value = match serde_json::from_slice(&body) {
            Ok(value) => value,
            Err(err) => {
                exchange.respond(rpc_error(400, -32700, &format!("Parse error: {err}")));
                return;
            }
        };
        if let Value::Array(items) = value {
            self.batch(exchange, session_id.as_deref(), items);
            return;
        }
        let Value::Object(message) = &value else {
            exchange.respond(rpc_error(400, -32600, "expected a JSON-RPC object"));
            return;
        };
        let method = message.get("method").and_then(Value::as_str).unwrap_or("");
        let id = message.get("id").cloned();
        let params = message.get("params").cloned().unwrap_or(Value::Null);
        let is_request = id.is_some() && !method.is_empty();

        // Which connection the message belongs to.
        let mut new_session = None;
        let header_version = get_header(exchange, "MCP-Protocol-Version");
        let modern_request = is_request
            && (modern::request_meta(&params).is_some()
                || header_version.as_deref() == Some(modern::VERSION));
        let conn = if modern_request {
            let rpc_id = id.clone().unwrap_or(Value::Null);
            // In this order: a body without its _meta is invalid whatever its headers
            // say; headers that disagree with the body are a mismatch even when the body
            // names a revision we do not speak.
            let meta = modern::request_meta(&params);
            if meta.is_none() {
                exchange.respond(rpc_error_for(
                    400,
                    &rpc_id,
                    super::INVALID_PARAMS,
                    "Invalid params: a 2026-07-28 request needs _meta with \
                     io.modelcontextprotocol/protocolVersion and clientCapabilities",
                ));
                return;
            }
            if let Err((code, text)) = check_modern_headers(exchange, method, &params) {
                exchange.respond(rpc_error_for(400, &rpc_id, code, &text));
                return;
            }
            if let Some(Err(error)) = meta {
                exchange.respond(json_reply(400, &error.message(&rpc_id)));
                return;
            }
            let n = self.counter.fetch_add(1, Ordering::Relaxed);
            // The stateless requests of one client address share a lane of the queue,
            // as a session's requests do.
            Arc::new(Conn::in_lane(
                format!("http-{n}:"),
                format!("client {}", exchange.peer.ip()),
            ))
        } else if method == "initialize" && is_request {
            let id = crate::events::new_id("mcp");
            let conn = Arc::new(Conn::new(format!("{id}:")));
            if let Ok(mut sessions) = self.sessions.lock() {
                if sessions.len() >= MAX_SESSIONS {
                    let oldest = sessions
                        .iter()
                        .min_by_key(|(_, (order, _))| *order)
                        .map(|(id, _)| id.clone());
                    if let Some((_, old)) = oldest.and_then(|id| sessions.remove(&id)) {
                        old.end_input();
                        self.core.pool.cancel_prefix(&old.prefix);
                    }
                }
                let order = self.counter.fetch_add(1, Ordering::Relaxed);
                sessions.insert(id.clone(), (order, conn.clone()));
            }
            new_session = Some(id);
            conn
        } else {
            match self.session(session_id.as_deref()) {
                Ok(conn) => conn,
                Err(reply) => {
                    exchange.respond(reply);
                    return;
                }
            }
        };
        let Some(id) = id.filter(|_| is_request) else {
            // A notification or a response to one of our requests.
            self.core.handle(&conn, &Out::replies_only(|_| {}), value);
            exchange.respond(Reply::empty(202));
            return;
        };
        let (tx, rx) = mpsc::channel::<Value>();
        let stream = method == "tools/call" && sse_ok;
        let send = move |message: &Value| {
            let _ = tx.send(message.clone());
        };
        // Only an event stream carries our own requests (a question) to the client.
        let out = if stream {
            Out::new(send)
        } else {
            Out::replies_only(send)
        };
        let key = conn.key(&id);
        self.core.handle(&conn, &out, value);
        drop(out);
        if stream {
            self.stream(exchange, rx, new_session.as_deref(), (&key, &id, &conn));
            return;
        }
        // Everything but a call is answered at once; a call without a stream is waited
        // for, as long as its client is there to read the answer.
        let mut answer = None;
        loop {
            match rx.recv_timeout(WATCH_EVERY) {
                Ok(message) => {
                    if message.get("id") == Some(&id)
                        && (message.get("result").is_some() || message.get("error").is_some())
                    {
                        answer = Some(message);
                    }
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    if exchange.client_gone() {
                        // Nobody would read the answer: stop the call, kill its command.
                        self.core.cancel(&key);
                        exchange.abandon();
                        return;
                    }
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
            }
        }
        let reply = match answer {
            Some(answer) => {
                let status = match answer.pointer("/error/code").and_then(Value::as_i64) {
                    Some(modern::UNSUPPORTED_VERSION | modern::MISSING_CAPABILITY) => 400,
                    Some(-32601) if modern_request => 404,
                    _ => 200,
                };
                json_reply(status, &answer)
            }
            // Its session was deleted or ended while it ran: the call was stopped.
            None if conn.input_ended() => session_ended(&id),
            // Cancelled: no response is ever sent for it.
            None => Reply::empty(202),
        };
        let reply = match new_session {
            Some(id) => reply.with_header("Mcp-Session-Id", &id),
            None => reply,
        };
        exchange.respond(reply);
    }

    /// The security checks: `Some(reply)` refuses the request.
    fn refusal(&self, exchange: &Exchange) -> Option<Reply> {
        let head = &exchange.head;
        // One of each: a second Host or Origin could say something else than the one
        // checked.
        for name in ["Host", "Origin", "Authorization"] {
            let count = head.count(name);
            if count > 1 {
                return Some(rpc_error(
                    400,
                    -32600,
                    &format!("Bad Request: {count} {name} headers; send one"),
                ));
            }
        }
        let host = head.header("Host").unwrap_or_default();
        if self.options.addr.ip().is_loopback() && !is_loopback_host(host_of(host)) {
            return Some(rpc_error(
                403,
                -32600,
                "Forbidden: the Host header must name a loopback host",
            ));
        }
        if let Some(origin) = head.header("Origin") {
            let allowed = url::Url::parse(origin).ok().is_some_and(|url| {
                let origin_host = url.host_str().unwrap_or("");
                let origin_host = origin_host.trim_start_matches('[').trim_end_matches(']');
                is_loopback_host(origin_host)
                    || (!self.options.addr.ip().is_loopback()
                        && origin_host.eq_ignore_ascii_case(host_of(host)))
            });
            if !allowed {
                return Some(rpc_error(
                    403,
                    -32600,
                    &format!("Forbidden: Origin {origin} is not allowed"),
                ));
            }
        }
        if self.options.token.is_none()
            && let Some(refusal) = self.foreign_user(exchange)
        {
            return Some(refusal);
        }
        let path = head.path();
        if oauth_discovery(path) {
            return Some(json_reply(
                404,
                &json!({"error": "invalid_request", "error_description": NO_OAUTH}),
            ));
        }
        if let Some(token) = &self.options.token {
            let given = head.header("Authorization");
            let problem = match given.map(|value| (value, bearer_token(value))) {
                None => None,
                Some((_, Some(given))) if constant_time_eq(given.as_bytes(), token.as_bytes()) => {
                    return self.path_refusal(path);
                }
                Some((_, Some(""))) => Some("the Bearer scheme is there but its token is empty"),
                Some((_, Some(_))) => Some("the bearer token is not the server's"),
                Some((_, None)) => Some("the Authorization header must use the Bearer scheme"),
            };
            let challenge = match problem {
                None => format!("Bearer realm=\"{REALM}\""),
                Some(problem) => format!(
                    "Bearer realm=\"{REALM}\", error=\"invalid_token\", \
                     error_description=\"{problem}\""
                ),
            };
            let message = format!(
                "Unauthorized: {}; send `Authorization: Bearer TOKEN`, TOKEN being the first \
                 line of the server's --token-file (this server serves no OAuth metadata)",
                problem.unwrap_or("a bearer token is required")
            );
            return Some(
                rpc_error(401, -32600, &message).with_header("WWW-Authenticate", &challenge),
            );
        }
        self.path_refusal(path)
    }

    /// Every path but the endpoint is not found.
    fn path_refusal(&self, path: &str) -> Option<Reply> {
        (path != ENDPOINT).then(|| plain(404, "the MCP endpoint is /mcp"))
    }

    /// Without a token: the refusal of a connection whose other end is not this server's
    /// user (or cannot be told).
    fn foreign_user(&self, exchange: &Exchange) -> Option<Reply> {
        // SAFETY: geteuid cannot fail.
        let me = unsafe { libc::geteuid() };
        let uid = exchange.peer_uid(|| super::peer::uid_of(exchange.peer, exchange.local));
        if uid == Some(me) {
            return None;
        }
        let who = match uid {
            Some(uid) => format!("another user (uid {uid})"),
            None => "a user the kernel's socket table does not show".to_string(),
        };
        Some(rpc_error(
            403,
            -32600,
            &format!(
                "Forbidden: the connection comes from {who}, and without a token this server answers only its own user (uid {me}), whose rights its tools run with; start it with --token-file FILE to let others in with the token"
            ),
        ))
    }

    /// The session a legacy request names.
    fn session(&self, id: Option<&str>) -> Result<Arc<Conn>, Reply> {
        let Some(id) = id else {
            return Err(rpc_error(
                400,
                -32600,
                "Bad Request: an Mcp-Session-Id header is required (send initialize first, \
                 or name the 2026-07-28 revision in the request's _meta)",
            ));
        };
        self.sessions
            .lock()
            .ok()
            .and_then(|s| s.get(id).map(|(_, conn)| conn.clone()))
            .ok_or_else(|| rpc_error(404, -32600, "Session not found"))
    }

    /// Answers a batch (2025-03-26) on its session, as one JSON array.
    fn batch(&self, exchange: &mut Exchange, session_id: Option<&str>, items: Vec<Value>) {
        let conn = match self.session(session_id) {
            Ok(conn) => conn,
            Err(reply) => {
                exchange.respond(reply);
                return;
            }
        };
        let (tx, rx) = mpsc::channel::<Value>();
        let out = Out::replies_only(move |message: &Value| {
            let _ = tx.send(message.clone());
        });
        self.core.batch(&conn, &out, items);
        drop(out);
        let reply = match rx.into_iter().next() {
            Some(answer) => json_reply(200, &answer),
            None => Reply::empty(202),
        };
        exchange.respond(reply);
    }

    /// Streams a call's messages as server-sent events until its answer; a client that
    /// closes the stream cancels the call.
    fn stream(
        &self,
        exchange: &mut Exchange,
        rx: mpsc::Receiver<Value>,
        session: Option<&str>,
        (key, id, conn): (&str, &Value, &Conn),
    ) {
        let headers: Vec<(&str, &str)> = session
            .map(|id| vec![("Mcp-Session-Id", id)])
            .unwrap_or_default();
        if let Some(mut events) = exchange.stream(&headers) {
            let mut said = Instant::now();
            let mut answered = false;
            loop {
                let sent = match rx.recv_timeout(WATCH_EVERY) {
                    Ok(message) => {
                        answered |= message.get("id") == Some(id)
                            && (message.get("result").is_some() || message.get("error").is_some());
                        events.send(&format!("event: message\ndata: {message}\n\n"))
                    }
                    Err(mpsc::RecvTimeoutError::Timeout) if events.client_gone() => false,
                    Err(mpsc::RecvTimeoutError::Timeout) if said.elapsed() < KEEPALIVE => {
                        continue;
                    }
                    Err(mpsc::RecvTimeoutError::Timeout) => events.send(":\n\n"),
                    Err(mpsc::RecvTimeoutError::Disconnected) => {
                        if !answered && conn.input_ended() {
                            let ended = session_ended_message(id);
                            events.send(&format!("event: message\ndata: {ended}\n\n"));
                        }
                        events.finish();
                        return;
                    }
                };
                if !sent {
                    break;
                }
                said = Instant::now();
            }
        }
        // The client closed the stream: the call's answer would go nowhere.
        self.core.cancel(key);
    }
}

/// The body, bounded by [`MAX_BODY`], or the answer that refuses it.
fn read_body(exchange: &mut Exchange) -> Result<Vec<u8>, Reply> {
    match exchange.read_body(MAX_BODY) {
        Ok(body) => Ok(body),
        Err(BodyError::TooLarge) => Err(plain(
            413,
            &format!("the body is larger than {MAX_BODY} bytes"),
        )),
        Err(BodyError::TimedOut) => Err(plain(
            408,
            &format!(
                "the body did not arrive in time ({} s, plus 1 s per {} KiB); the request \
                 was dropped",
                REQUEST_TIME.as_secs(),
                BODY_RATE / 1024
            ),
        )),
        Err(BodyError::Gone) => Err(plain(400, "the connection ended inside the body")),
        Err(BodyError::Malformed(text)) => Err(plain(400, &text)),
    }
}

/// A 2026-07-28 request's headers must say what its body says.
fn check_modern_headers(
    exchange: &Exchange,
    method: &str,
    params: &Value,
) -> Result<(), (i64, String)> {
    let mismatch = |text: String| Err((HEADER_MISMATCH, format!("Header mismatch: {text}")));
    let body_version = params
        .pointer("/_meta/io.modelcontextprotocol~1protocolVersion")
        .and_then(Value::as_str)
        .unwrap_or("");
    match get_header(exchange, "MCP-Protocol-Version") {
        None => return mismatch("the MCP-Protocol-Version header is missing".into()),
        Some(v) if v != body_version => {
            return mismatch(format!(
                "MCP-Protocol-Version header {v:?} does not match the body's {body_version:?}"
            ));
        }
        Some(_) => {}
    }
    match get_header(exchange, "Mcp-Method") {
        None => return mismatch("the Mcp-Method header is missing".into()),
        Some(v) if v != method => {
            return mismatch(format!(
                "Mcp-Method header {v:?} does not match the body's {method:?}"
            ));
        }
        Some(_) => {}
    }
    let named = match method {
        "tools/call" | "prompts/get" => params.get("name").and_then(Value::as_str),
        "resources/read" => params.get("uri").and_then(Value::as_str),
        _ => return Ok(()),
    };
    if let Some(body_name) = named {
        match get_header(exchange, "Mcp-Name").map(|v| decode_header_value(&v)) {
            None => return mismatch("the Mcp-Name header is missing".into()),
            Some(None) => return mismatch("the Mcp-Name header is not valid base64".into()),
            Some(Some(v)) if v != body_name => {
                return mismatch(format!(
                    "Mcp-Name header {v:?} does not match the body's {body_name:?}"
                ));
            }
            Some(Some(_)) => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_and_tokens() {
        assert_eq!(host_of("127.0.0.1:8080"), "127.0.0.1");
        assert_eq!(host_of("[::1]:80"), "::1");
        assert_eq!(host_of("localhost"), "localhost");
        assert!(is_loopback_host("localhost") && is_loopback_host("::1"));
        assert!(!is_loopback_host("evil.example.com"));
        assert!(constant_time_eq(b"secret", b"secret"));
        assert!(!constant_time_eq(b"secret", b"secreT"));
        assert!(!constant_time_eq(b"secret", b"secret2"));
        assert!(!constant_time_eq(b"", b"x"));
        assert_eq!(
            decode_header_value("=?base64?SGVsbG8=?=").as_deref(),
            Some("Hello")
        );
    }

    #[test]
    fn the_bearer_scheme_is_read_in_any_case() {
        assert_eq!(bearer_token("Bearer abc"), Some("abc"));
        assert_eq!(bearer_token("bearer abc"), Some("abc"));
        assert_eq!(bearer_token("BEARER \t abc"), Some("abc"));
        assert_eq!(bearer_token("Basic abc"), None);
        // The scheme without a token: an empty token, refused as such.
        assert_eq!(bearer_token("Bearer"), Some(""));
        assert_eq!(bearer_token("Bearerabc"), None);
        assert!(oauth_discovery("/.well-known/oauth-protected-resource/mcp"));
        assert!(oauth_discovery("/.well-known/oauth-authorization-server"));
        assert!(oauth_discovery("/mcp/.well-known/openid-configuration"));
        assert!(oauth_discovery("/register"));
        assert!(!oauth_discovery("/mcp"));
    }

    #[test]
    fn the_man_page_states_the_limits_in_force() {
        use super::super::pool;
        use server::*;
        let page = include_str!("../mcp.roff").replace('\n', " ");
        let facts = [
            format!("pool of {} workers", pool::WORKERS),
            format!(
                "At most {} calls wait per session and {} in all",
                pool::MAX_QUEUED_PER_LANE,
                pool::MAX_QUEUED
            ),
            format!(
                "{} run at once; up to {} more per session ({} in all)",
                pool::WORKERS,
                pool::MAX_QUEUED_PER_LANE,
                pool::MAX_QUEUED
            ),
            format!(
                "within {} seconds of its first byte",
                REQUEST_TIME.as_secs()
            ),
            format!("plus 1 second per {} KiB", BODY_RATE / 1024),
            format!(
                "Heads over {} KiB or with more than {} fields",
                MAX_HEAD / 1024,
                MAX_HEADERS
            ),
            format!("bodies over {} MiB get 413", MAX_BODY >> 20),
            format!(
                "kept alive between requests for {} seconds",
                IDLE_TIME.as_secs()
            ),
            format!(
                "served at most {} connections at once; up to {} more wait",
                MAX_CONNECTIONS_PER_CLIENT, MAX_WAITING_PER_CLIENT
            ),
            format!("At most {} connections are open in all", MAX_CONNECTIONS),
            format!(
                "sends nothing for {} seconds is closed",
                REQUEST_TIME.as_secs()
            ),
            format!(
                "within {} seconds ends its connection",
                WRITE_TIME.as_secs()
            ),
            format!(".B Sessions At most {};", MAX_SESSIONS),
        ];
        for fact in facts {
            assert!(
                page.contains(&fact),
                "tinytool-mcp(1) does not say {fact:?}"
            );
        }
    }

    #[test]
    fn off_loopback_a_token_is_required() {
        let open = Options {
            addr: "0.0.0.0:0".parse().unwrap(),
            token: None,
        };
        assert!(open.check().is_err());
        let local = Options {
            addr: "127.0.0.1:0".parse().unwrap(),
            token: None,
        };
        assert!(local.check().is_ok());
    }
}
