//! A small HTTP/1.1 server on 127.0.0.1 that the web tool tests start: it records every
//! request and answers from a route function, one connection per request. Nothing here
//! reaches beyond loopback.

#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};

/// A request as the server saw it.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub method: String,
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Recorded {
    /// The value of a header (name case ignored).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// How the body of a reply is sent.
#[derive(Debug, Clone)]
pub enum Payload {
    /// These bytes, with a Content-Length.
    Bytes(Vec<u8>),
    /// `len` copies of `byte`, streamed; `sized` says whether a Content-Length is sent
    /// (else the body ends when the connection closes).
    Repeat { byte: u8, len: usize, sized: bool },
}

/// An answer.
#[derive(Debug, Clone)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub payload: Payload,
}

impl Reply {
    /// A response with a status, a content type and a body.
    pub fn new(status: u16, content_type: &str, body: impl Into<Vec<u8>>) -> Reply {
        Reply {
            status,
            headers: vec![("Content-Type".into(), content_type.into())],
            payload: Payload::Bytes(body.into()),
        }
    }

    /// 200 with a content type and a body.
    pub fn ok(content_type: &str, body: impl Into<Vec<u8>>) -> Reply {
        Reply::new(200, content_type, body)
    }

    /// A redirect to `location`.
    pub fn redirect(status: u16, location: &str) -> Reply {
        Reply {
            status,
            headers: vec![("Location".into(), location.into())],
            payload: Payload::Bytes(Vec::new()),
        }
    }

    /// Adds a header.
    pub fn header(mut self, name: &str, value: &str) -> Reply {
        self.headers.push((name.into(), value.into()));
        self
    }
}

/// A running server; it lives as long as the test process.
pub struct Server {
    pub port: u16,
    requests: Arc<Mutex<Vec<Recorded>>>,
}

impl Server {
    /// Starts a server answering with `route`.
    pub fn start(route: impl Fn(&Recorded) -> Reply + Send + Sync + 'static) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind loopback");
        let port = listener.local_addr().unwrap().port();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let route = Arc::new(route);
        let log = Arc::clone(&requests);
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                let route = Arc::clone(&route);
                let log = Arc::clone(&log);
                std::thread::spawn(move || handle(stream, &*route, &log));
            }
        });
        Server { port, requests }
    }

    /// The URL of a path on this server.
    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    /// The requests received so far.
    pub fn requests(&self) -> Vec<Recorded> {
        self.requests.lock().unwrap().clone()
    }

    /// The paths requested so far.
    pub fn paths(&self) -> Vec<String> {
        self.requests().into_iter().map(|r| r.path).collect()
    }
}

fn handle(stream: TcpStream, route: &dyn Fn(&Recorded) -> Reply, log: &Mutex<Vec<Recorded>>) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut line = String::new();
    if reader.read_line(&mut line).unwrap_or(0) == 0 {
        return;
    }
    let mut parts = line.split_whitespace();
    let method = parts.next().unwrap_or_default().to_string();
    let path = parts.next().unwrap_or_default().to_string();
    let mut headers = Vec::new();
    loop {
        line.clear();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            break;
        }
        let trimmed = line.trim_end();
        if trimmed.is_empty() {
            break;
        }
        if let Some((k, v)) = trimmed.split_once(':') {
            headers.push((k.trim().to_string(), v.trim().to_string()));
        }
    }
    let length: usize = headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let mut body = vec![0; length];
    let _ = reader.read_exact(&mut body);
    let request = Recorded {
        method,
        path,
        headers,
        body,
    };
    log.lock().unwrap().push(request.clone());
    let reply = route(&request);
    let _ = send(stream, reply);
}

fn send(mut stream: TcpStream, reply: Reply) -> std::io::Result<()> {
    let mut head = format!("HTTP/1.1 {} {}\r\n", reply.status, reason(reply.status));
    for (k, v) in &reply.headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    match &reply.payload {
        Payload::Bytes(bytes) => head.push_str(&format!("Content-Length: {}\r\n", bytes.len())),
        Payload::Repeat {
            len, sized: true, ..
        } => head.push_str(&format!("Content-Length: {len}\r\n")),
        Payload::Repeat { .. } => {}
    }
    head.push_str("Connection: close\r\n\r\n");
    stream.write_all(head.as_bytes())?;
    match reply.payload {
        Payload::Bytes(bytes) => stream.write_all(&bytes)?,
        Payload::Repeat { byte, len, .. } => {
            let chunk = vec![byte; 64 * 1024];
            let mut left = len;
            while left > 0 {
                let n = left.min(chunk.len());
                stream.write_all(&chunk[..n])?;
                left -= n;
            }
        }
    }
    stream.flush()
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        204 => "No Content",
        301 => "Moved Permanently",
        302 => "Found",
        303 => "See Other",
        307 => "Temporary Redirect",
        308 => "Permanent Redirect",
        404 => "Not Found",
        500 => "Internal Server Error",
        _ => "Whatever",
    }
}
