//! HTTP/1.1 on plain threads, for the MCP endpoint: the listener, the connection limits,
//! reading a request within a deadline, writing a response or an event stream, and telling
//! whether the client is still there.
//!
//! ```text
//! accept ─┬─ more than MAX_CONNECTIONS open            -> 503, closed (Retry-After: 1)
//!         ├─ client address (not loopback, which every local client shares) at
//!         │  MAX_CONNECTIONS_PER_CLIENT served
//!         │    ├─ fewer than MAX_WAITING_PER_CLIENT waiting -> waits, unread, for one of
//!         │    │                                              its client's to end
//!         │    └─ else                                  -> 429, closed (Retry-After: 1)
//!         └─ else: a thread of its own reads requests one after the other (keep-alive)
//! request: the head (at most MAX_HEAD bytes, MAX_HEADERS fields) and the body must arrive
//!          within REQUEST_TIME of the request's first byte, plus a second per BODY_RATE
//!          bytes of declared body (of a chunked body: of the bytes that came), else 408
//!          and the connection is closed; a new connection silent for REQUEST_TIME, or one
//!          idle for IDLE_TIME between requests, is closed
//! body:    Content-Length or chunked (both at once, or another coding: 400);
//!          `Expect: 100-continue` is answered when the body is first read
//! answer:  Content-Length, or a chunked event stream; a write that cannot go out within
//!          WRITE_TIME ends the connection
//! ```
//!
//! Every connection has its own thread, so a client that stalls holds up nobody else;
//! the accept loop never reads. `httparse` parses request heads (the parser of `hyper`,
//! already in the build through `ureq`); this module owns the sockets, which is what
//! `tiny_http` could not give: no per-connection deadline, no limit per client, no way to
//! see that the client of a running call went away.

use std::collections::{HashMap, VecDeque};
use std::io::{self, Read, Write};
use std::net::{IpAddr, SocketAddr, TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Connections open at once (served and waiting); one more is refused with 503.
pub const MAX_CONNECTIONS: usize = 1024;
/// Connections of one client address served at once; more wait their turn unread.
pub const MAX_CONNECTIONS_PER_CLIENT: usize = 256;
/// Connections of one client address waiting for a turn; one more is refused with 429.
pub const MAX_WAITING_PER_CLIENT: usize = 256;
/// The time a request's head and body have to arrive in, from its first byte.
pub const REQUEST_TIME: Duration = Duration::from_secs(10);
/// Declared body bytes that earn a request one more second on top of [`REQUEST_TIME`].
pub const BODY_RATE: usize = 64 * 1024;
/// How long a kept-alive connection may sit between requests.
pub const IDLE_TIME: Duration = Duration::from_secs(60);
/// How long one write to a client may block.
pub const WRITE_TIME: Duration = Duration::from_secs(30);
/// The largest request head (request line and header fields).
pub const MAX_HEAD: usize = 64 * 1024;
/// The most header fields a request may have.
pub const MAX_HEADERS: usize = 100;
/// The longest line of chunked framing (a chunk size and its extensions, a trailer).
const MAX_CHUNK_LINE: usize = 4096;
/// Connections the kernel may hold for the accept loop (capped by `net.core.somaxconn`).
const ACCEPT_QUEUE: libc::c_int = 1024;
/// How long, and how many bytes, a connection closed after an early answer is drained.
const LINGER_TIME: Duration = Duration::from_secs(1);
const LINGER_BYTES: usize = 256 * 1024;

/// A request's head.
#[derive(Debug)]
pub struct Head {
    /// `POST`, `DELETE`, ...
    pub method: String,
    /// The request target as sent (path and query).
    pub target: String,
    /// HTTP/1.`minor`.
    pub minor: u8,
    /// Header fields in order, values as text (bytes that are not UTF-8 replaced).
    pub headers: Vec<(String, String)>,
}

impl Head {
    /// The first value of header `name` (any case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(field, _)| field.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.as_str())
    }

    /// How many `name` fields the request has.
    pub fn count(&self, name: &str) -> usize {
        self.headers
            .iter()
            .filter(|(field, _)| field.eq_ignore_ascii_case(name))
            .count()
    }

    /// The target's path, without its query.
    pub fn path(&self) -> &str {
        self.target.split('?').next().unwrap_or("")
    }

    /// Whether the client asked to close the connection after this request.
    fn wants_close(&self) -> bool {
        let tokens = self.header("Connection").unwrap_or("").to_ascii_lowercase();
        let has = |token: &str| tokens.split(',').any(|t| t.trim() == token);
        if self.minor == 0 {
            !has("keep-alive")
        } else {
            has("close")
        }
    }
}

/// A whole response.
pub struct Reply {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Reply {
    /// A response with `status`, a `Content-Type` and `body`.
    pub fn new(status: u16, content_type: &str, body: Vec<u8>) -> Reply {
        Reply {
            status,
            headers: vec![("Content-Type".into(), content_type.into())],
            body,
        }
    }

    /// A response with `status` and no body.
    pub fn empty(status: u16) -> Reply {
        Reply {
            status,
            headers: Vec::new(),
            body: Vec::new(),
        }
    }

    /// The response with one more header (names and values here are the server's own).
    pub fn with_header(mut self, name: &str, value: &str) -> Reply {
        self.headers.push((name.into(), value.into()));
        self
    }
}

/// Why a body could not be read.
#[derive(Debug)]
pub enum BodyError {
    /// Over the limit the handler gave (declared, or counted while reading chunks).
    TooLarge,
    /// It did not arrive within the request's time.
    TimedOut,
    /// The client closed the connection first.
    Gone,
    /// Malformed framing.
    Malformed(String),
}

/// How the body of a request is delimited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Framing {
    Length(usize),
    Chunked,
}

/// One client connection: its socket and the bytes read past the current request.
struct Connection {
    stream: TcpStream,
    buf: Vec<u8>,
    /// The connection ends after the current exchange.
    close: bool,
    /// The user at the other end, once asked (it cannot change while the socket lives).
    peer_uid: std::cell::OnceCell<Option<u32>>,
}

/// Reads more bytes into `conn.buf`, waiting until `deadline` at most: `Ok(0)` at end of
/// input.
fn fill(conn: &mut Connection, deadline: Instant) -> io::Result<usize> {
    let left = deadline.saturating_duration_since(Instant::now());
    if left.is_zero() {
        return Err(io::ErrorKind::TimedOut.into());
    }
    conn.stream.set_read_timeout(Some(left))?;
    let mut chunk = [0u8; 16 * 1024];
    loop {
        match conn.stream.read(&mut chunk) {
            Ok(n) => {
                conn.buf.extend_from_slice(&chunk[..n]);
                return Ok(n);
            }
            Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
            Err(err) if err.kind() == io::ErrorKind::WouldBlock => {
                return Err(io::ErrorKind::TimedOut.into());
            }
            Err(err) => return Err(err),
        }
    }
}

/// Whether the other end of `stream` has closed its side (or the connection broke): the
/// kernel says so at once, whether or not unread bytes are still buffered.
fn peer_closed(stream: &TcpStream) -> bool {
    let mut poll = libc::pollfd {
        fd: stream.as_raw_fd(),
        events: libc::POLLIN | libc::POLLRDHUP,
        revents: 0,
    };
    // SAFETY: one valid pollfd, a zero timeout.
    let ready = unsafe { libc::poll(&mut poll, 1, 0) };
    ready > 0
        && poll.revents & (libc::POLLRDHUP | libc::POLLHUP | libc::POLLERR | libc::POLLNVAL) != 0
}

fn reason(status: u16) -> &'static str {
    match status {
        100 => "Continue",
        200 => "OK",
        202 => "Accepted",
        204 => "No Content",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        406 => "Not Acceptable",
        408 => "Request Timeout",
        411 => "Length Required",
        413 => "Content Too Large",
        415 => "Unsupported Media Type",
        429 => "Too Many Requests",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        _ => "Status",
    }
}

/// The bytes of a whole response.
fn encode(reply: &Reply, close: bool) -> Vec<u8> {
    let mut head = format!("HTTP/1.1 {} {}\r\n", reply.status, reason(reply.status));
    for (name, value) in &reply.headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    // 1xx, 204 and 304 have no body and no length.
    if !matches!(reply.status, 100..=199 | 204 | 304) {
        head.push_str(&format!("Content-Length: {}\r\n", reply.body.len()));
    }
    if close {
        head.push_str("Connection: close\r\n");
    }
    head.push_str("\r\n");
    let mut bytes = head.into_bytes();
    bytes.extend_from_slice(&reply.body);
    bytes
}

/// A plain-text reply, for the failures of the transport itself.
fn text(status: u16, message: &str) -> Reply {
    Reply::new(
        status,
        "text/plain; charset=utf-8",
        format!("{message}\n").into_bytes(),
    )
}

/// One request on a connection, handed to the handler: its head, its body on demand, and
/// the way to answer it.
pub struct Exchange<'c> {
    conn: &'c mut Connection,
    /// The request's head.
    pub head: Head,
    /// The client's address.
    pub peer: SocketAddr,
    /// The server's own address of this connection.
    pub local: SocketAddr,
    framing: Framing,
    /// The request's first byte arrived then.
    started: Instant,
    body_read: bool,
    answered: bool,
}

impl Exchange<'_> {
    /// The time the whole request has to arrive by.
    fn deadline(&self, body: usize) -> Instant {
        let extra = Duration::from_secs((body / BODY_RATE) as u64);
        self.started + REQUEST_TIME + extra
    }

    /// The uid of the user at the other end, found by `lookup` on the connection's first
    /// request only (reading the kernel's socket tables costs about a millisecond).
    pub fn peer_uid(&self, lookup: impl FnOnce() -> Option<u32>) -> Option<u32> {
        *self.conn.peer_uid.get_or_init(lookup)
    }

    /// Reads the body, at most `max` bytes; on an error the connection closes after the
    /// answer.
    pub fn read_body(&mut self, max: usize) -> Result<Vec<u8>, BodyError> {
        let result = self.read_body_inner(max);
        match &result {
            Ok(_) => self.body_read = true,
            Err(_) => self.conn.close = true,
        }
        result
    }

    fn read_body_inner(&mut self, max: usize) -> Result<Vec<u8>, BodyError> {
        // A chunked body earns its extra time by the bytes that came, not by the most it
        // may have (see `read_chunks`).
        let deadline = self.deadline(match self.framing {
            Framing::Length(n) => n,
            Framing::Chunked => 0,
        });
        if let Framing::Length(n) = self.framing
            && n > max
        {
            return Err(BodyError::TooLarge);
        }
        let continues = self
            .head
            .header("Expect")
            .is_some_and(|v| v.eq_ignore_ascii_case("100-continue"));
        if continues && self.conn.buf.is_empty() && self.head.minor == 1 {
            let _ = self
                .conn
                .stream
                .write_all(b"HTTP/1.1 100 Continue\r\n\r\n")
                .and_then(|()| self.conn.stream.flush());
        }
        match self.framing {
            Framing::Length(n) => {
                while self.conn.buf.len() < n {
                    self.more(deadline)?;
                }
                let rest = self.conn.buf.split_off(n);
                Ok(std::mem::replace(&mut self.conn.buf, rest))
            }
            Framing::Chunked => self.read_chunks(max, deadline),
        }
    }

    /// Reads more bytes or says why none came.
    fn more(&mut self, deadline: Instant) -> Result<(), BodyError> {
        match fill(self.conn, deadline) {
            Ok(0) => Err(BodyError::Gone),
            Ok(_) => Ok(()),
            Err(err) if err.kind() == io::ErrorKind::TimedOut => Err(BodyError::TimedOut),
            Err(_) => Err(BodyError::Gone),
        }
    }

    /// One CRLF-terminated line of chunked framing, without its CRLF.
    fn line(&mut self, deadline: Instant) -> Result<String, BodyError> {
        loop {
            if let Some(at) = self.conn.buf.windows(2).position(|w| w == b"\r\n") {
                let line = String::from_utf8_lossy(&self.conn.buf[..at]).into_owned();
                self.conn.buf.drain(..at + 2);
                return Ok(line);
            }
            if self.conn.buf.len() > MAX_CHUNK_LINE {
                return Err(BodyError::Malformed(
                    "a line of the chunked body is too long".into(),
                ));
            }
            self.more(deadline)?;
        }
    }

    fn read_chunks(&mut self, max: usize, deadline: Instant) -> Result<Vec<u8>, BodyError> {
        let mut body = Vec::new();
        loop {
            let deadline = deadline.max(self.deadline(body.len()));
            let line = self.line(deadline)?;
            let size = line.split(';').next().unwrap_or("").trim();
            let size = usize::from_str_radix(size, 16).map_err(|_| {
                BodyError::Malformed(format!("bad chunk size {size:?} in the chunked body"))
            })?;
            if size == 0 {
                // Trailer fields, ignored, up to the empty line.
                while !self.line(deadline)?.is_empty() {}
                return Ok(body);
            }
            if body.len().saturating_add(size) > max {
                return Err(BodyError::TooLarge);
            }
            while self.conn.buf.len() < size + 2 {
                let came = body.len() + self.conn.buf.len().min(size);
                self.more(deadline.max(self.deadline(came)))?;
            }
            body.extend_from_slice(&self.conn.buf[..size]);
            if &self.conn.buf[size..size + 2] != b"\r\n" {
                return Err(BodyError::Malformed(
                    "a chunk of the chunked body does not end with CRLF".into(),
                ));
            }
            self.conn.buf.drain(..size + 2);
        }
    }

    /// Sends the whole answer. The connection closes after it when the client asked,
    /// when the body was not read (its bytes would be taken for the next request), or
    /// when the write fails.
    pub fn respond(&mut self, reply: Reply) {
        if self.answered {
            return;
        }
        self.answered = true;
        let close = self.conn.close || !self.body_read || self.head.wants_close();
        let bytes = encode(&reply, close);
        if self
            .conn
            .stream
            .write_all(&bytes)
            .and_then(|()| self.conn.stream.flush())
            .is_err()
        {
            self.conn.close = true;
        }
        self.conn.close |= close;
    }

    /// Starts a `200` event stream with `headers` after the usual ones; `None` when the
    /// client is gone already.
    pub fn stream(&mut self, headers: &[(&str, &str)]) -> Option<EventStream<'_>> {
        if self.answered {
            return None;
        }
        self.answered = true;
        // HTTP/1.0 has no chunks: the stream ends with the connection.
        let chunked = self.head.minor >= 1;
        let close = self.conn.close || !self.body_read || self.head.wants_close() || !chunked;
        let mut head = String::from(
            "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n\
             X-Accel-Buffering: no\r\n",
        );
        if chunked {
            head.push_str("Transfer-Encoding: chunked\r\n");
        }
        if close {
            head.push_str("Connection: close\r\n");
        }
        for (name, value) in headers {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        head.push_str("\r\n");
        self.conn.close |= close;
        let conn = &mut *self.conn;
        if conn
            .stream
            .write_all(head.as_bytes())
            .and_then(|()| conn.stream.flush())
            .is_err()
        {
            conn.close = true;
            return None;
        }
        Some(EventStream { conn, chunked })
    }

    /// Whether the client has closed the connection (it can read no answer any more).
    pub fn client_gone(&self) -> bool {
        peer_closed(&self.conn.stream)
    }

    /// Leaves the request unanswered and closes the connection (its client is gone).
    pub fn abandon(&mut self) {
        self.answered = true;
        self.conn.close = true;
    }
}

/// An open event stream.
pub struct EventStream<'c> {
    conn: &'c mut Connection,
    chunked: bool,
}

impl EventStream<'_> {
    /// Sends `event` (whole SSE lines); `false` when the client is gone.
    pub fn send(&mut self, event: &str) -> bool {
        let stream = &mut self.conn.stream;
        let written = if self.chunked {
            write!(stream, "{:x}\r\n{event}\r\n", event.len())
        } else {
            stream.write_all(event.as_bytes())
        };
        let ok = written.and_then(|()| stream.flush()).is_ok();
        if !ok {
            self.conn.close = true;
        }
        ok
    }

    /// Ends the stream (the connection may carry the next request).
    pub fn finish(self) {
        if self.chunked {
            let stream = &mut self.conn.stream;
            if stream
                .write_all(b"0\r\n\r\n")
                .and_then(|()| stream.flush())
                .is_err()
            {
                self.conn.close = true;
            }
        }
    }

    /// Whether the client has closed the connection.
    pub fn client_gone(&self) -> bool {
        peer_closed(&self.conn.stream)
    }
}

/// What went wrong before a head could be handed over: answered, then the connection
/// closes.
fn read_head(
    conn: &mut Connection,
    first: bool,
) -> Result<Option<(Head, Framing, Instant)>, Reply> {
    // A new connection must start its request as soon as any request must arrive whole:
    // one that sends nothing holds a slot no longer than one that stalls half-way.
    let idle_until = Instant::now() + if first { REQUEST_TIME } else { IDLE_TIME };
    let mut started = None;
    loop {
        // Blank lines before a request are ignored (RFC 9112, 2.2).
        while conn.buf.starts_with(b"\r\n") {
            conn.buf.drain(..2);
        }
        if !conn.buf.is_empty() {
            let started = *started.get_or_insert_with(Instant::now);
            let mut fields = [httparse::EMPTY_HEADER; MAX_HEADERS];
            let mut request = httparse::Request::new(&mut fields);
            match request.parse(&conn.buf) {
                Ok(httparse::Status::Complete(len)) if len > MAX_HEAD => {
                    return Err(text(
                        431,
                        &format!("the request head is larger than {MAX_HEAD} bytes"),
                    ));
                }
                Ok(httparse::Status::Complete(len)) => {
                    let head = Head {
                        method: request.method.unwrap_or("").to_string(),
                        target: request.path.unwrap_or("").to_string(),
                        minor: request.version.unwrap_or(1),
                        headers: request
                            .headers
                            .iter()
                            .map(|h| {
                                (
                                    h.name.to_string(),
                                    String::from_utf8_lossy(h.value).trim().to_string(),
                                )
                            })
                            .collect(),
                    };
                    conn.buf.drain(..len);
                    let framing = framing(&head)?;
                    return Ok(Some((head, framing, started)));
                }
                Ok(httparse::Status::Partial) if conn.buf.len() > MAX_HEAD => {
                    return Err(text(
                        431,
                        &format!("the request head is larger than {MAX_HEAD} bytes"),
                    ));
                }
                Ok(httparse::Status::Partial) => {}
                Err(httparse::Error::TooManyHeaders) => {
                    return Err(text(
                        431,
                        &format!("the request has more than {MAX_HEADERS} header fields"),
                    ));
                }
                Err(err) => {
                    return Err(text(400, &format!("malformed request head: {err}")));
                }
            }
        }
        let until = started.map_or(idle_until, |at| at + REQUEST_TIME);
        match fill(conn, until) {
            Ok(0) => return Ok(None),
            Ok(_) => {}
            Err(err) if err.kind() == io::ErrorKind::TimedOut && started.is_some() => {
                return Err(text(
                    408,
                    &format!(
                        "the request head did not arrive within {} s",
                        REQUEST_TIME.as_secs()
                    ),
                ));
            }
            Err(_) => return Ok(None),
        }
    }
}

/// How the body of a request with `head` is delimited.
fn framing(head: &Head) -> Result<Framing, Reply> {
    let lengths: Vec<&str> = head
        .headers
        .iter()
        .filter(|(name, _)| name.eq_ignore_ascii_case("Content-Length"))
        .flat_map(|(_, value)| value.split(','))
        .map(str::trim)
        .collect();
    let coding = head.header("Transfer-Encoding");
    if head.count("Transfer-Encoding") > 0 {
        if !lengths.is_empty() {
            return Err(text(
                400,
                "the request has both Transfer-Encoding and Content-Length; send one",
            ));
        }
        let chunked = coding
            .and_then(|c| c.split(',').next_back())
            .is_some_and(|last| last.trim().eq_ignore_ascii_case("chunked"));
        if !chunked || head.count("Transfer-Encoding") > 1 {
            return Err(text(
                400,
                "only `Transfer-Encoding: chunked` is understood for a request body",
            ));
        }
        return Ok(Framing::Chunked);
    }
    let Some(first) = lengths.first() else {
        return Ok(Framing::Length(0));
    };
    let parsed: Option<usize> = first
        .bytes()
        .all(|b| b.is_ascii_digit())
        .then(|| first.parse().ok())
        .flatten();
    match parsed {
        Some(n) if lengths.iter().all(|l| l == first) => Ok(Framing::Length(n)),
        _ => Err(text(
            400,
            &format!("bad Content-Length {:?}", lengths.join(", ")),
        )),
    }
}

/// Before closing a connection whose client may still be sending (an error answered
/// before its request was read whole): our side is shut for writing and what still comes
/// is read and thrown away for a moment, so the close does not become a reset that
/// destroys the answer before the client reads it.
fn linger(stream: &mut TcpStream) {
    let _ = stream.shutdown(std::net::Shutdown::Write);
    let until = Instant::now() + LINGER_TIME;
    let mut sink = [0u8; 16 * 1024];
    let mut drained = 0;
    while drained < LINGER_BYTES {
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() || stream.set_read_timeout(Some(left)).is_err() {
            return;
        }
        match stream.read(&mut sink) {
            Ok(0) | Err(_) => return,
            Ok(n) => drained += n,
        }
    }
}

/// Serves the requests of one connection, one after the other, until it closes.
fn serve_connection(stream: TcpStream, peer: SocketAddr, handler: &(dyn Fn(&mut Exchange) + Sync)) {
    let local = match stream.local_addr() {
        Ok(local) => local,
        Err(_) => return,
    };
    let _ = stream.set_nodelay(true);
    let _ = stream.set_write_timeout(Some(WRITE_TIME));
    let mut conn = Connection {
        stream,
        buf: Vec::new(),
        close: false,
        peer_uid: std::cell::OnceCell::new(),
    };
    let mut first = true;
    loop {
        let (head, framing, started) = match read_head(&mut conn, std::mem::take(&mut first)) {
            Ok(Some(request)) => request,
            Ok(None) => return,
            Err(reply) => {
                let _ = conn.stream.write_all(&encode(&reply, true));
                linger(&mut conn.stream);
                return;
            }
        };
        let mut exchange = Exchange {
            conn: &mut conn,
            head,
            peer,
            local,
            framing,
            started,
            body_read: framing == Framing::Length(0),
            answered: false,
        };
        handler(&mut exchange);
        if !exchange.answered {
            exchange.respond(text(500, "the request got no answer"));
        }
        let unread = !exchange.body_read;
        if conn.close {
            if unread {
                linger(&mut conn.stream);
            }
            return;
        }
        // What was read beyond this request is the next one's: keep it, but a long
        // pipeline of requests is not buffered here.
        conn.buf.shrink_to(16 * 1024);
    }
}

/// The connections of one client address (`S`: a socket; something simpler in tests).
struct Client<S> {
    served: usize,
    waiting: VecDeque<(S, SocketAddr)>,
}

/// The connections open, for the limits.
struct Slots<S> {
    /// Served and waiting, all clients.
    open: usize,
    clients: HashMap<IpAddr, Client<S>>,
}

impl<S> Default for Slots<S> {
    fn default() -> Self {
        Slots {
            open: 0,
            clients: HashMap::new(),
        }
    }
}

enum Admission<S> {
    Serve(S, SocketAddr),
    Waits,
    Refuse(S, Reply),
}

/// A refusal at accept: a JSON-RPC error without an id, and a hint when to retry.
fn busy(status: u16, message: &str) -> Reply {
    let body = serde_json::json!({"jsonrpc": "2.0", "id": null,
        "error": {"code": -32000, "message": message}});
    Reply::new(status, "application/json", body.to_string().into_bytes())
        .with_header("Retry-After", "1")
}

impl<S> Slots<S> {
    fn admit(&mut self, stream: S, peer: SocketAddr) -> Admission<S> {
        if self.open >= MAX_CONNECTIONS {
            return Admission::Refuse(
                stream,
                busy(
                    503,
                    &format!(
                        "Server busy: {MAX_CONNECTIONS} connections are open; retry in a \
                         second"
                    ),
                ),
            );
        }
        let client = self.clients.entry(peer.ip()).or_insert_with(|| Client {
            served: 0,
            waiting: VecDeque::new(),
        });
        // Every local client connects from the loopback address: a share per address would
        // let one local process crowd out the others, so there only the total bounds.
        let share = if peer.ip().to_canonical().is_loopback() {
            MAX_CONNECTIONS
        } else {
            MAX_CONNECTIONS_PER_CLIENT
        };
        if client.served < share {
            client.served += 1;
            self.open += 1;
            return Admission::Serve(stream, peer);
        }
        if client.waiting.len() < MAX_WAITING_PER_CLIENT {
            client.waiting.push_back((stream, peer));
            self.open += 1;
            return Admission::Waits;
        }
        Admission::Refuse(
            stream,
            busy(
                429,
                &format!(
                    "Too many connections from {}: {MAX_CONNECTIONS_PER_CLIENT} served and \
                     {MAX_WAITING_PER_CLIENT} waiting; reuse connections (keep-alive) or \
                     retry in a second",
                    peer.ip()
                ),
            ),
        )
    }

    /// One served connection of `ip` ended: its next waiting connection, if any, takes
    /// its place (and its thread).
    fn release(&mut self, ip: IpAddr) -> Option<(S, SocketAddr)> {
        self.open = self.open.saturating_sub(1);
        let client = self.clients.get_mut(&ip)?;
        if let Some(next) = client.waiting.pop_front() {
            return Some(next);
        }
        client.served = client.served.saturating_sub(1);
        if client.served == 0 {
            self.clients.remove(&ip);
        }
        None
    }
}

/// The listening socket with its connection limits.
pub struct Listener {
    socket: TcpListener,
    slots: Mutex<Slots<TcpStream>>,
}

impl Listener {
    /// Binds `addr`.
    pub fn bind(addr: SocketAddr) -> io::Result<Listener> {
        let socket = TcpListener::bind(addr)?;
        // A longer accept queue than the standard library's 128, so a burst of clients
        // (two hundred parallel calls) is taken in order rather than some handshakes
        // dropped and retried a second later. Calling listen again only resizes it.
        // SAFETY: a valid listening socket.
        unsafe { libc::listen(socket.as_raw_fd(), ACCEPT_QUEUE) };
        Ok(Listener {
            socket,
            slots: Mutex::default(),
        })
    }

    /// The address it listens on (the port chosen for port 0).
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.socket.local_addr()
    }

    fn slots(&self) -> MutexGuard<'_, Slots<TcpStream>> {
        // Every update is a few statements that cannot panic half-way.
        self.slots
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Accepts connections for ever, each served on a thread of `scope` by `handler`.
    pub fn run<'s>(
        &'s self,
        scope: &'s std::thread::Scope<'s, '_>,
        handler: &'s (dyn Fn(&mut Exchange) + Sync),
    ) {
        loop {
            let (stream, peer) = match self.socket.accept() {
                Ok(accepted) => accepted,
                Err(err) => {
                    // Out of file descriptors or memory, or an aborted handshake: let
                    // the moment pass rather than spin.
                    if err.kind() != io::ErrorKind::ConnectionAborted {
                        std::thread::sleep(Duration::from_millis(50));
                    }
                    continue;
                }
            };
            let admission = self.slots().admit(stream, peer);
            match admission {
                Admission::Serve(stream, peer) => {
                    let spawned = std::thread::Builder::new()
                        .name("tinytool-http".into())
                        .spawn_scoped(scope, move || {
                            let (mut stream, mut peer) = (stream, peer);
                            loop {
                                serve_connection(stream, peer, handler);
                                match self.slots().release(peer.ip()) {
                                    Some(next) => (stream, peer) = next,
                                    None => return,
                                }
                            }
                        });
                    if spawned.is_err() {
                        // No thread to be had: the connection is dropped (closed).
                        while self.slots().release(peer.ip()).is_some() {}
                    }
                }
                Admission::Waits => {}
                Admission::Refuse(stream, reply) => refuse(stream, &reply),
            }
        }
    }
}

/// Answers a refused connection without ever blocking the accept loop.
fn refuse(stream: TcpStream, reply: &Reply) {
    let mut stream = stream;
    if stream.set_nonblocking(true).is_ok() {
        let _ = stream.write_all(&encode(reply, true));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn head(lines: &[(&str, &str)], minor: u8) -> Head {
        Head {
            method: "POST".into(),
            target: "/mcp?x=1".into(),
            minor,
            headers: lines
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        }
    }

    #[test]
    fn framing_is_one_length_or_chunked() {
        assert_eq!(framing(&head(&[], 1)).ok(), Some(Framing::Length(0)));
        assert_eq!(
            framing(&head(&[("content-length", "12")], 1)).ok(),
            Some(Framing::Length(12))
        );
        assert_eq!(
            framing(&head(
                &[("Content-Length", "5"), ("Content-Length", "5")],
                1
            ))
            .ok(),
            Some(Framing::Length(5))
        );
        assert_eq!(
            framing(&head(&[("Transfer-Encoding", "gzip, chunked")], 1)).ok(),
            Some(Framing::Chunked)
        );
        for bad in [
            vec![("Content-Length", "5"), ("Content-Length", "6")],
            vec![("Content-Length", "-1")],
            vec![("Content-Length", "+5")],
            vec![("Content-Length", "99999999999999999999999")],
            vec![("Transfer-Encoding", "gzip")],
            vec![("Transfer-Encoding", "chunked"), ("Content-Length", "5")],
        ] {
            let reply = framing(&head(&bad, 1)).err();
            assert_eq!(reply.map(|r| r.status), Some(400), "{bad:?}");
        }
    }

    #[test]
    fn connection_close_follows_the_version() {
        assert!(!head(&[], 1).wants_close());
        assert!(head(&[("Connection", "close")], 1).wants_close());
        assert!(head(&[], 0).wants_close());
        assert!(!head(&[("Connection", "Keep-Alive")], 0).wants_close());
        assert_eq!(head(&[], 1).path(), "/mcp");
    }

    #[test]
    fn a_client_beyond_its_share_waits_and_takes_a_freed_place() {
        let mut slots: Slots<u32> = Slots::default();
        let one: SocketAddr = "192.0.2.1:1".parse().unwrap();
        for n in 0..MAX_CONNECTIONS_PER_CLIENT as u32 {
            assert!(matches!(slots.admit(n, one), Admission::Serve(..)));
        }
        assert!(matches!(slots.admit(900, one), Admission::Waits));
        assert!(matches!(slots.admit(901, one), Admission::Waits));
        assert_eq!(slots.open, MAX_CONNECTIONS_PER_CLIENT + 2);
        // A served connection ends: the oldest waiting one is handed over.
        assert_eq!(slots.release(one.ip()).map(|(n, _)| n), Some(900));
        assert_eq!(slots.open, MAX_CONNECTIONS_PER_CLIENT + 1);
        // Another address has its own share.
        let two: SocketAddr = "192.0.2.2:1".parse().unwrap();
        assert!(matches!(slots.admit(7, two), Admission::Serve(..)));
        assert!(slots.release(two.ip()).is_none());
        assert!(!slots.clients.contains_key(&two.ip()));
    }

    #[test]
    fn loopback_clients_share_only_the_total() {
        let mut slots: Slots<u32> = Slots::default();
        for peer in ["127.0.0.1:1", "[::1]:1", "[::ffff:127.0.0.1]:1"] {
            let peer: SocketAddr = peer.parse().unwrap();
            for n in 0..MAX_CONNECTIONS_PER_CLIENT as u32 + 1 {
                assert!(
                    matches!(slots.admit(n, peer), Admission::Serve(..)),
                    "{peer}"
                );
            }
        }
    }

    #[test]
    fn past_the_waiting_room_and_the_total_connections_are_refused() {
        let mut slots: Slots<u32> = Slots::default();
        let one: SocketAddr = "192.0.2.1:1".parse().unwrap();
        for n in 0..(MAX_CONNECTIONS_PER_CLIENT + MAX_WAITING_PER_CLIENT) as u32 {
            assert!(!matches!(slots.admit(n, one), Admission::Refuse(..)));
        }
        match slots.admit(0, one) {
            Admission::Refuse(_, reply) => assert_eq!(reply.status, 429),
            _ => panic!("a client past its waiting room was let in"),
        }
        let mut address = 2u32;
        while slots.open < MAX_CONNECTIONS {
            let peer = SocketAddr::new(IpAddr::V4(address.into()), 1);
            assert!(matches!(slots.admit(0, peer), Admission::Serve(..)));
            address += 1;
        }
        let fresh: SocketAddr = "10.0.0.1:1".parse().unwrap();
        match slots.admit(0, fresh) {
            Admission::Refuse(_, reply) => {
                assert_eq!(reply.status, 503);
                let body = String::from_utf8(reply.body).unwrap();
                assert!(body.contains("-32000") && body.contains("retry"), "{body}");
            }
            _ => panic!("a connection past the total was let in"),
        }
    }
}
