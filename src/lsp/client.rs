//! The conversation with one running language server, as the broker holds it: the open
//! documents and their versions, the requests in flight, and the problems known for each
//! document version.
//!
//! Only problems of the version a document has now count. How a server says which version
//! a set belongs to decides how they are asked for:
//! - **pull** (`textDocument/diagnostic`, declared or registered dynamically, as pyright
//!   does): asked after the change on the same ordered stream, and taken only when the
//!   document is still at the version it was asked for;
//! - **tsserver** (typescript-language-server, which pushes without a version): its
//!   `typescript.tsserverRequest` command asks tsserver for the syntactic and semantic
//!   diagnostics of the file synchronously, answered in order after the change;
//! - **push**: `publishDiagnostics` with the document's version (a publish of another
//!   version is dropped); a server that sends no version is taken at its first publish
//!   after the change.

use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::mpsc::Sender;
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use lsp_server::{Message, Notification, Request, RequestId, Response};
use serde_json::{Value, json};

use super::problem::Problem;

/// Open documents kept at most; the least recently used is closed beyond it.
const MAX_OPEN: usize = 64;
/// Problems kept per document.
const MAX_PROBLEMS: usize = 500;
/// Bytes of the server's stderr kept.
const STDERR_KEEP: usize = 64 * 1024;

/// How the server gives diagnostics.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Mode {
    /// Not known yet (before `initialize` is answered).
    Unknown,
    /// `textDocument/diagnostic`, once per identifier (`None`: the server gave none).
    Pull(Vec<Option<String>>),
    /// typescript-language-server's `typescript.tsserverRequest`.
    Tsserver,
    /// `publishDiagnostics` only.
    Push,
}

/// Where the server is in its life.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Phase {
    /// None runs; the reason, when one stopped or could not start.
    Down(Option<String>),
    /// Started, `initialize` not answered yet.
    Starting(Instant),
    /// Answered `initialize`: checks are served.
    Ready,
}

/// What a request of ours was for.
#[derive(Debug, Clone)]
enum Pending {
    Initialize,
    Shutdown,
    /// A pull for one document version and identifier.
    Pull {
        path: PathBuf,
        version: i32,
        identifier: Option<String>,
    },
    /// One of tsserver's two diagnostic kinds for one document version.
    Tsserver {
        path: PathBuf,
        version: i32,
        semantic: bool,
    },
}

/// One open document.
#[derive(Debug)]
struct Doc {
    version: i32,
    text: String,
    /// The problems of `version`, once all parts arrived.
    problems: Option<Vec<Problem>>,
    /// Parts that arrived for `version` (pull identifiers, tsserver kinds).
    parts: HashMap<String, Vec<Problem>>,
    /// Whether the diagnostics of `version` were asked for.
    asked: bool,
    /// When it was last used, for closing the least recently used.
    used: Instant,
}

/// The state of one conversation.
pub struct State {
    /// Where the server is.
    pub phase: Phase,
    /// The server's process, while it runs.
    pub pid: Option<i32>,
    /// Times a server was started.
    pub starts: u64,
    /// A check wants a server and none runs.
    pub wanted: bool,
    /// Resident memory of the server's processes, in KiB, last measured.
    pub memory_kib: u64,
    /// When the last message came from the server.
    pub last_heard: Instant,
    outbox: Option<Sender<Message>>,
    next_id: i32,
    pending: HashMap<i32, (Pending, Instant)>,
    mode: Mode,
    docs: HashMap<PathBuf, Doc>,
    root: PathBuf,
    stderr: VecDeque<u8>,
    /// What the server last said of its own state (`experimental/serverStatus`, as
    /// rust-analyzer sends it): `Some(false)` while it loads the workspace, when its
    /// answers would be empty rather than true.
    quiescent: Option<bool>,
}

/// A conversation shared by the broker's threads.
pub struct Conversation {
    state: Mutex<State>,
    changed: Condvar,
}

/// The wait of one check ran out, or the server went away.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Interrupted {
    /// The time ran out.
    Late,
    /// The server is down, for this reason.
    Down(String),
}

fn uri_of(path: &Path) -> String {
    url::Url::from_file_path(path)
        .map(String::from)
        .unwrap_or_else(|()| format!("file://{}", path.display()))
}

fn path_of(uri: &str) -> Option<PathBuf> {
    url::Url::parse(uri).ok()?.to_file_path().ok()
}

impl Conversation {
    /// A conversation for a project rooted at `root`, with no server yet.
    pub fn new(root: &Path) -> Conversation {
        Conversation {
            state: Mutex::new(State {
                phase: Phase::Down(None),
                pid: None,
                starts: 0,
                wanted: false,
                memory_kib: 0,
                last_heard: Instant::now(),
                outbox: None,
                next_id: 0,
                pending: HashMap::new(),
                mode: Mode::Unknown,
                docs: HashMap::new(),
                root: root.to_path_buf(),
                stderr: VecDeque::new(),
                quiescent: None,
            }),
            changed: Condvar::new(),
        }
    }

    /// The state, locked.
    pub fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Wakes every waiter (the state changed).
    pub fn notify(&self) {
        self.changed.notify_all();
    }

    /// Waits until `done` holds, the server is down, or `deadline`.
    pub fn wait_until<'a>(
        &'a self,
        mut state: MutexGuard<'a, State>,
        deadline: Instant,
        mut done: impl FnMut(&mut State) -> bool,
    ) -> (MutexGuard<'a, State>, Result<(), Interrupted>) {
        loop {
            if done(&mut state) {
                return (state, Ok(()));
            }
            if let Phase::Down(reason) = &state.phase
                && !state.wanted
            {
                let reason = reason
                    .clone()
                    .unwrap_or_else(|| "the server is not running".to_string());
                return (state, Err(Interrupted::Down(reason)));
            }
            let now = Instant::now();
            if now >= deadline {
                return (state, Err(Interrupted::Late));
            }
            // Woken by every message; a short cap also catches a phase change missed.
            let wait = (deadline - now).min(Duration::from_millis(200));
            state = self
                .changed
                .wait_timeout(state, wait)
                .map(|(guard, _)| guard)
                .unwrap_or_else(|p| p.into_inner().0);
        }
    }

    /// Waits for a change of the state, at most `timeout`.
    pub fn park<'a>(
        &'a self,
        state: MutexGuard<'a, State>,
        timeout: Duration,
    ) -> MutexGuard<'a, State> {
        self.changed
            .wait_timeout(state, timeout)
            .map(|(guard, _)| guard)
            .unwrap_or_else(|p| p.into_inner().0)
    }

    /// A server started: messages go to `outbox`; `initialize` is sent.
    pub fn started(&self, pid: i32, outbox: Sender<Message>, initialize: Value) {
        let mut state = self.lock();
        state.pid = Some(pid);
        state.outbox = Some(outbox);
        state.phase = Phase::Starting(Instant::now());
        state.starts += 1;
        state.wanted = false;
        state.mode = Mode::Unknown;
        state.quiescent = None;
        state.docs.clear();
        state.pending.clear();
        state.last_heard = Instant::now();
        state.request(Pending::Initialize, "initialize", initialize);
        drop(state);
        self.notify();
    }

    /// The server ended, for `reason`.
    pub fn ended(&self, reason: String) {
        let mut state = self.lock();
        state.pid = None;
        state.outbox = None;
        state.phase = Phase::Down(Some(reason));
        state.wanted = false;
        state.pending.clear();
        state.docs.clear();
        state.memory_kib = 0;
        drop(state);
        self.notify();
    }

    /// Keeps the end of the server's stderr.
    pub fn stderr(&self, bytes: &[u8]) {
        let mut state = self.lock();
        state.stderr.extend(bytes);
        let over = state.stderr.len().saturating_sub(STDERR_KEEP);
        state.stderr.drain(..over);
    }

    /// A message from the server.
    pub fn receive(&self, message: Message) {
        let mut state = self.lock();
        state.last_heard = Instant::now();
        match message {
            Message::Response(response) => state.response(response),
            Message::Request(request) => state.server_request(request),
            Message::Notification(notification) => state.notification(notification),
        }
        drop(state);
        self.notify();
    }
}

impl State {
    /// The end of the server's stderr, as text.
    pub fn stderr_tail(&self) -> String {
        let bytes: Vec<u8> = self.stderr.iter().copied().collect();
        String::from_utf8_lossy(&bytes).into_owned()
    }

    /// Documents open in the server.
    pub fn open_files(&self) -> usize {
        self.docs.len()
    }

    /// Requests still unanswered.
    pub fn pending_count(&self) -> usize {
        self.pending.len()
    }

    /// The oldest request still unanswered, with when it was sent.
    pub fn oldest_pending(&self) -> Option<Instant> {
        self.pending.values().map(|(_, at)| *at).min()
    }

    fn send(&self, message: Message) {
        if let Some(outbox) = &self.outbox {
            let _ = outbox.send(message);
        }
    }

    fn request(&mut self, pending: Pending, method: &str, params: Value) {
        self.next_id += 1;
        let id = self.next_id;
        self.pending.insert(id, (pending, Instant::now()));
        self.send(Message::Request(Request {
            id: RequestId::from(id),
            method: method.to_string(),
            params,
        }));
    }

    fn notify_server(&self, method: &str, params: Value) {
        self.send(Message::Notification(Notification {
            method: method.to_string(),
            params,
        }));
    }

    /// Asks the server to shut down (it exits on `exit`, sent once it answered or the
    /// caller gave up waiting).
    pub fn shut_down(&mut self) {
        if self.outbox.is_some() {
            self.request(Pending::Shutdown, "shutdown", Value::Null);
        }
    }

    /// Sends `exit`.
    pub fn exit(&self) {
        self.notify_server("exit", Value::Null);
    }

    /// Whether `shutdown` was answered.
    pub fn shutdown_answered(&self) -> bool {
        !self
            .pending
            .values()
            .any(|(p, _)| matches!(p, Pending::Shutdown))
    }

    fn response(&mut self, response: Response) {
        let Ok(id) = response.id.to_string().trim_matches('"').parse::<i32>() else {
            return;
        };
        let Some((pending, _)) = self.pending.remove(&id) else {
            return;
        };
        match pending {
            Pending::Initialize => {
                let capabilities = response
                    .response_result
                    .as_ref()
                    .ok()
                    .and_then(|r| r.get("capabilities"))
                    .cloned()
                    .unwrap_or(Value::Null);
                self.mode = mode_of(&capabilities);
                let name = response
                    .response_result
                    .as_ref()
                    .ok()
                    .and_then(|r| r.pointer("/serverInfo/name"))
                    .and_then(Value::as_str);
                // rust-analyzer answers pulls with nothing until it loaded the workspace,
                // and says when it has (`experimental/serverStatus`).
                if name == Some("rust-analyzer") && self.quiescent.is_none() {
                    self.quiescent = Some(false);
                }
                self.notify_server("initialized", json!({}));
                self.phase = Phase::Ready;
            }
            Pending::Shutdown => {}
            Pending::Pull {
                path,
                version,
                identifier,
            } => {
                let key = identifier.unwrap_or_default();
                let Some(doc) = self.docs.get_mut(&path).filter(|d| d.version == version) else {
                    return;
                };
                match response.response_result.ok().filter(|r| !r.is_null()) {
                    Some(report) => {
                        let items = report
                            .get("items")
                            .and_then(Value::as_array)
                            .map(|items| problems(items, &doc.text, Problem::from_lsp))
                            .unwrap_or_default();
                        doc.parts.insert(key, items);
                    }
                    // Cancelled by the server (it changed its mind about the document):
                    // asked again by the waiter.
                    None => doc.asked = false,
                }
                let wanted = match &self.mode {
                    Mode::Pull(ids) => ids.len(),
                    _ => 1,
                };
                complete(doc, wanted);
            }
            Pending::Tsserver {
                path,
                version,
                semantic,
            } => {
                let Some(doc) = self.docs.get_mut(&path).filter(|d| d.version == version) else {
                    return;
                };
                let items = response
                    .response_result
                    .as_ref()
                    .ok()
                    .and_then(|r| r.get("body"))
                    .and_then(Value::as_array)
                    .map(|items| problems(items, &doc.text, Problem::from_tsserver));
                match items {
                    Some(items) => {
                        let key = if semantic { "semantic" } else { "syntactic" };
                        doc.parts.insert(key.to_string(), items);
                        complete(doc, 2);
                    }
                    None => doc.asked = false,
                }
            }
        }
    }

    fn server_request(&mut self, request: Request) {
        let result = match request.method.as_str() {
            "client/registerCapability" => {
                let registrations = request
                    .params
                    .get("registrations")
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default();
                for registration in registrations {
                    if registration.get("method").and_then(Value::as_str)
                        == Some("textDocument/diagnostic")
                    {
                        let identifier = registration
                            .pointer("/registerOptions/identifier")
                            .and_then(Value::as_str)
                            .map(str::to_string);
                        match &mut self.mode {
                            Mode::Pull(ids) if !ids.contains(&identifier) => ids.push(identifier),
                            Mode::Pull(_) => {}
                            _ => self.mode = Mode::Pull(vec![identifier]),
                        }
                        for doc in self.docs.values_mut() {
                            doc.asked = false;
                            doc.parts.clear();
                        }
                    }
                }
                Ok(Value::Null)
            }
            "workspace/configuration" => {
                let count = request
                    .params
                    .get("items")
                    .and_then(Value::as_array)
                    .map_or(0, Vec::len);
                Ok(Value::Array(vec![Value::Null; count]))
            }
            "workspace/workspaceFolders" => Ok(json!([{
                "uri": uri_of(&self.root),
                "name": self.root.file_name().map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default(),
            }])),
            "workspace/diagnostic/refresh" => {
                for doc in self.docs.values_mut() {
                    doc.asked = false;
                    doc.parts.clear();
                    doc.problems = None;
                }
                Ok(Value::Null)
            }
            "client/unregisterCapability"
            | "window/workDoneProgress/create"
            | "window/showMessageRequest"
            | "window/showDocument" => Ok(Value::Null),
            "workspace/applyEdit" => Ok(json!({"applied": false})),
            _ => Err(format!(
                "{} is not supported by this client",
                request.method
            )),
        };
        let response = match result {
            Ok(value) => Response::new_ok(request.id, value),
            Err(message) => Response::new_err(
                request.id,
                lsp_server::ErrorCode::MethodNotFound as i32,
                message,
            ),
        };
        self.send(Message::Response(response));
    }

    fn notification(&mut self, notification: Notification) {
        if notification.method == "experimental/serverStatus" {
            let quiescent = notification
                .params
                .get("quiescent")
                .and_then(Value::as_bool);
            if quiescent == Some(true) && self.quiescent != Some(true) {
                // What was answered while it loaded is not what it knows now.
                for doc in self.docs.values_mut() {
                    doc.asked = false;
                    doc.parts.clear();
                    doc.problems = None;
                }
            }
            self.quiescent = quiescent;
            return;
        }
        if notification.method != "textDocument/publishDiagnostics" || self.mode != Mode::Push {
            return;
        }
        let params = notification.params;
        let Some(path) = params.get("uri").and_then(Value::as_str).and_then(path_of) else {
            return;
        };
        let Some(doc) = self.docs.get_mut(&path) else {
            return;
        };
        let version = params.get("version").and_then(Value::as_i64);
        // A publish of another version describes text the file no longer holds; one
        // without a version is taken only once the current version was waited for.
        let current = match version {
            Some(v) => v == i64::from(doc.version),
            None => doc.asked,
        };
        if !current {
            return;
        }
        let items = params
            .get("diagnostics")
            .and_then(Value::as_array)
            .map(|items| problems(items, &doc.text, Problem::from_lsp))
            .unwrap_or_default();
        doc.parts.insert(String::new(), items);
        complete(doc, 1);
    }

    /// Whether the server is ready for checks.
    pub fn ready(&self) -> bool {
        self.phase == Phase::Ready && self.mode != Mode::Unknown && self.quiescent != Some(false)
    }

    /// Makes the server hold `text` for `path` (opening it, or changing it to a new
    /// version) and returns the version; sends nothing when it already holds that text.
    pub fn sync(&mut self, path: &Path, text: &str, language_id: &str) -> i32 {
        let now = Instant::now();
        if let Some(doc) = self.docs.get_mut(path) {
            doc.used = now;
            if doc.text == text {
                return doc.version;
            }
            doc.version += 1;
            doc.text = text.to_string();
            doc.problems = None;
            doc.parts.clear();
            doc.asked = false;
            let version = doc.version;
            self.notify_server(
                "textDocument/didChange",
                json!({"textDocument": {"uri": uri_of(path), "version": version},
                       "contentChanges": [{"text": text}]}),
            );
            return version;
        }
        if self.docs.len() >= MAX_OPEN
            && let Some(oldest) = self
                .docs
                .iter()
                .min_by_key(|(_, d)| d.used)
                .map(|(p, _)| p.clone())
        {
            self.close(&oldest);
        }
        self.docs.insert(
            path.to_path_buf(),
            Doc {
                version: 1,
                text: text.to_string(),
                problems: None,
                parts: HashMap::new(),
                asked: false,
                used: now,
            },
        );
        self.notify_server(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": uri_of(path), "languageId": language_id,
                                    "version": 1, "text": text}}),
        );
        1
    }

    /// Closes `path` in the server (a deleted file, or the least recently used).
    pub fn close(&mut self, path: &Path) {
        if self.docs.remove(path).is_some() {
            self.notify_server(
                "textDocument/didClose",
                json!({"textDocument": {"uri": uri_of(path)}}),
            );
        }
    }

    /// Tells the server files were created or deleted outside its documents.
    pub fn files_changed(&self, changes: &[(PathBuf, bool)]) {
        if changes.is_empty() {
            return;
        }
        let changes: Vec<Value> = changes
            .iter()
            .map(|(path, deleted)| json!({"uri": uri_of(path), "type": if *deleted { 3 } else { 1 }}))
            .collect();
        self.notify_server(
            "workspace/didChangeWatchedFiles",
            json!({"changes": changes}),
        );
    }

    /// Asks for the diagnostics of `path`'s current version unless they are known or asked.
    pub fn ask(&mut self, path: &Path) {
        let mode = self.mode.clone();
        let Some(doc) = self.docs.get_mut(path) else {
            return;
        };
        if doc.asked || doc.problems.is_some() {
            return;
        }
        doc.asked = true;
        let version = doc.version;
        let have: Vec<String> = doc.parts.keys().cloned().collect();
        match mode {
            Mode::Pull(ids) => {
                for identifier in ids {
                    if have
                        .iter()
                        .any(|k| k == identifier.as_deref().unwrap_or_default())
                    {
                        continue;
                    }
                    let mut params = json!({"textDocument": {"uri": uri_of(path)}});
                    if let Some(id) = &identifier {
                        params["identifier"] = json!(id);
                    }
                    self.request(
                        Pending::Pull {
                            path: path.to_path_buf(),
                            version,
                            identifier,
                        },
                        "textDocument/diagnostic",
                        params,
                    );
                }
            }
            Mode::Tsserver => {
                for (semantic, command) in [
                    (false, "syntacticDiagnosticsSync"),
                    (true, "semanticDiagnosticsSync"),
                ] {
                    self.request(
                        Pending::Tsserver {
                            path: path.to_path_buf(),
                            version,
                            semantic,
                        },
                        "workspace/executeCommand",
                        json!({"command": "typescript.tsserverRequest",
                               "arguments": [command,
                                             {"file": path.to_string_lossy(),
                                              "includeLinePosition": true},
                                             {"executionTarget": 0}]}),
                    );
                }
            }
            Mode::Push | Mode::Unknown => {}
        }
    }

    /// The problems of `path`'s current version, once known.
    pub fn problems_of(&self, path: &Path) -> Option<&Vec<Problem>> {
        self.docs.get(path)?.problems.as_ref()
    }

    /// The version `path` is open at.
    pub fn version_of(&self, path: &Path) -> Option<i32> {
        self.docs.get(path).map(|d| d.version)
    }

    /// The text `path` is open with.
    pub fn text_of(&self, path: &Path) -> Option<&str> {
        self.docs.get(path).map(|d| d.text.as_str())
    }

    /// The open documents other than `except`, most recently used first.
    pub fn others(&self, except: &[PathBuf]) -> Vec<PathBuf> {
        let mut docs: Vec<(&PathBuf, &Doc)> = self
            .docs
            .iter()
            .filter(|(p, _)| !except.contains(p))
            .collect();
        docs.sort_by_key(|(_, d)| std::cmp::Reverse(d.used));
        docs.into_iter().map(|(p, _)| p.clone()).collect()
    }

    /// Asks again for the diagnostics of an open document whose text did not change (a
    /// change elsewhere may have changed them). A push server republishes on its own.
    pub fn ask_again(&mut self, path: &Path) {
        if matches!(self.mode, Mode::Push) {
            return;
        }
        if let Some(doc) = self.docs.get_mut(path) {
            doc.asked = false;
            doc.parts.clear();
            doc.problems = None;
        }
        self.ask(path);
    }
}

/// The diagnostic mode a server's capabilities give.
fn mode_of(capabilities: &Value) -> Mode {
    if let Some(provider) = capabilities.get("diagnosticProvider")
        && !provider.is_null()
    {
        let identifier = provider
            .get("identifier")
            .and_then(Value::as_str)
            .map(str::to_string);
        return Mode::Pull(vec![identifier]);
    }
    let commands = capabilities
        .pointer("/executeCommandProvider/commands")
        .and_then(Value::as_array);
    if commands.is_some_and(|c| c.iter().any(|c| c == "typescript.tsserverRequest")) {
        return Mode::Tsserver;
    }
    Mode::Push
}

/// Decodes diagnostics one by one, keeping at most [`MAX_PROBLEMS`].
fn problems(
    items: &[Value],
    text: &str,
    decode: fn(&Value, &str) -> Option<Problem>,
) -> Vec<Problem> {
    items
        .iter()
        .filter_map(|item| decode(item, text))
        .take(MAX_PROBLEMS)
        .collect()
}

/// Makes the parts of a document its problems once `wanted` parts arrived.
fn complete(doc: &mut Doc, wanted: usize) {
    if doc.parts.len() >= wanted {
        let mut all: Vec<Problem> = doc.parts.values().flatten().cloned().collect();
        all.sort_by(|a, b| (a.line, a.column, &a.message).cmp(&(b.line, b.column, &b.message)));
        all.dedup();
        all.truncate(MAX_PROBLEMS);
        doc.problems = Some(all);
    }
}

/// The `initialize` parameters of a client rooted at `root`.
pub fn initialize_params(root: &Path) -> Value {
    let uri = uri_of(root);
    let name = root
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let capabilities = lsp_types::ClientCapabilities {
        text_document: Some(lsp_types::TextDocumentClientCapabilities {
            synchronization: Some(lsp_types::TextDocumentSyncClientCapabilities {
                did_save: Some(false),
                ..Default::default()
            }),
            publish_diagnostics: Some(lsp_types::PublishDiagnosticsClientCapabilities {
                version_support: Some(true),
                ..Default::default()
            }),
            diagnostic: Some(lsp_types::DiagnosticClientCapabilities {
                dynamic_registration: Some(true),
                related_document_support: Some(false),
            }),
            ..Default::default()
        }),
        // rust-analyzer says when it has loaded the workspace (before, its answers are
        // empty).
        experimental: Some(json!({"serverStatusNotification": true})),
        workspace: Some(lsp_types::WorkspaceClientCapabilities {
            configuration: Some(true),
            workspace_folders: Some(true),
            did_change_watched_files: Some(lsp_types::DidChangeWatchedFilesClientCapabilities {
                dynamic_registration: Some(true),
                relative_pattern_support: Some(false),
            }),
            ..Default::default()
        }),
        ..Default::default()
    };
    json!({
        // The server runs in a PID namespace of its own where this process does not exist;
        // its life is bound to the broker by the process layer instead.
        "processId": null,
        "clientInfo": {"name": "tinytool", "version": env!("CARGO_PKG_VERSION")},
        "rootUri": uri,
        "rootPath": root.to_string_lossy(),
        "workspaceFolders": [{"uri": uri, "name": name}],
        "capabilities": serde_json::to_value(capabilities).unwrap_or(Value::Null),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(value: Value) -> Message {
        serde_json::from_value(value).unwrap()
    }

    /// A conversation with a ready server of the given capabilities; returns what was sent.
    fn ready(capabilities: Value) -> (Conversation, std::sync::mpsc::Receiver<Message>) {
        let conversation = Conversation::new(Path::new("/p"));
        let (outbox, sent) = std::sync::mpsc::channel();
        conversation.started(7, outbox, json!({}));
        conversation.receive(message(
            json!({"jsonrpc": "2.0", "id": 1, "result": {"capabilities": capabilities}}),
        ));
        assert!(conversation.lock().ready());
        (conversation, sent)
    }

    fn publish(version: Option<i32>, message_text: &str) -> Message {
        let mut params = json!({"uri": "file:///p/a.py", "diagnostics": [{
            "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 1}},
            "message": message_text}]});
        if let Some(version) = version {
            params["version"] = json!(version);
        }
        message(
            json!({"jsonrpc": "2.0", "method": "textDocument/publishDiagnostics",
                       "params": params}),
        )
    }

    #[test]
    fn a_publish_of_another_version_is_dropped() {
        let (conversation, _sent) = ready(json!({}));
        let path = Path::new("/p/a.py");
        let mut state = conversation.lock();
        assert_eq!(state.sync(path, "old\n", "python"), 1);
        assert_eq!(state.sync(path, "new\n", "python"), 2);
        state.ask(path);
        drop(state);
        conversation.receive(publish(Some(1), "of the old text"));
        assert!(conversation.lock().problems_of(path).is_none());
        conversation.receive(publish(Some(2), "of the new text"));
        let state = conversation.lock();
        assert_eq!(
            state.problems_of(path).unwrap()[0].message,
            "of the new text"
        );
        // The same text again is no new version.
        drop(state);
        assert_eq!(conversation.lock().sync(path, "new\n", "python"), 2);
    }

    #[test]
    fn a_publish_of_the_current_version_counts_even_before_it_was_waited_for() {
        let (conversation, _sent) = ready(json!({}));
        let path = Path::new("/p/a.py");
        conversation.lock().sync(path, "text\n", "python");
        // Another file of the same change was being waited for meanwhile.
        conversation.receive(publish(Some(1), "current"));
        assert_eq!(
            conversation.lock().problems_of(path).unwrap()[0].message,
            "current"
        );
        // Without a version, only a publish after the wait began is taken.
        conversation.lock().sync(path, "other\n", "python");
        conversation.receive(publish(None, "unversioned, early"));
        assert!(conversation.lock().problems_of(path).is_none());
        conversation.lock().ask(path);
        conversation.receive(publish(None, "unversioned, after"));
        assert_eq!(
            conversation.lock().problems_of(path).unwrap()[0].message,
            "unversioned, after"
        );
    }

    #[test]
    fn a_pull_answered_after_a_later_change_is_not_taken_for_it() {
        let (conversation, sent) = ready(json!({"diagnosticProvider": {"identifier": "x"}}));
        let path = Path::new("/p/a.py");
        let mut state = conversation.lock();
        state.sync(path, "one\n", "python");
        state.ask(path);
        drop(state);
        // initialize, initialized, didOpen, then the pull.
        let pull = sent
            .try_iter()
            .find_map(|m| match m {
                Message::Request(r) if r.method == "textDocument/diagnostic" => Some(r),
                _ => None,
            })
            .unwrap();
        assert_eq!(pull.params["identifier"], "x");
        conversation.lock().sync(path, "two\n", "python");
        conversation.receive(message(json!({"jsonrpc": "2.0", "id": pull.id,
            "result": {"kind": "full", "items": [{"range": {"start": {"line": 0, "character": 0},
            "end": {"line": 0, "character": 1}}, "message": "of one"}]}})));
        assert!(conversation.lock().problems_of(path).is_none());
    }

    #[test]
    fn server_requests_are_answered_and_a_registered_pull_is_used() {
        let (conversation, sent) = ready(json!({}));
        let _ = sent.try_iter().count();
        conversation.receive(message(json!({"jsonrpc": "2.0", "id": "r1",
            "method": "client/registerCapability", "params": {"registrations": [
                {"id": "d", "method": "textDocument/diagnostic",
                 "registerOptions": {"identifier": "pyright"}}]}})));
        conversation.receive(message(json!({"jsonrpc": "2.0", "id": 5,
            "method": "workspace/configuration", "params": {"items": [{}, {}]}})));
        conversation.receive(message(json!({"jsonrpc": "2.0", "id": 6,
            "method": "some/unknownRequest", "params": {}})));
        let answers: Vec<Response> = sent
            .try_iter()
            .filter_map(|m| match m {
                Message::Response(r) => Some(r),
                _ => None,
            })
            .collect();
        assert_eq!(answers.len(), 3);
        assert_eq!(
            answers[1].response_result.as_ref().unwrap(),
            &json!([null, null])
        );
        assert!(answers[2].response_result.is_err());
        let path = Path::new("/p/a.py");
        let mut state = conversation.lock();
        state.sync(path, "x\n", "python");
        state.ask(path);
        drop(state);
        assert!(sent.try_iter().any(|m| matches!(m,
            Message::Request(r) if r.method == "textDocument/diagnostic"
                && r.params["identifier"] == "pyright")));
    }
}
