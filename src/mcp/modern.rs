//! The stateless 2026-07-28 revision, beside the `initialize` era.
//!
//! A 2026-07-28 request carries its revision and the client's capabilities in its own
//! `_meta`; nothing is negotiated before it, and no state is kept between requests:
//!
//! ```text
//! params._meta = { "io.modelcontextprotocol/protocolVersion": "2026-07-28",
//!                  "io.modelcontextprotocol/clientCapabilities": { ... },
//!                  "io.modelcontextprotocol/clientInfo"?: { ... }, "progressToken"?: ... }
//! ```
//!
//! Another revision in that field is `-32022` (UnsupportedProtocolVersion, with the
//! supported ones in `data`). Every result of such a request carries `resultType` and the
//! server's identity in `_meta`; list results and `server/discover` carry `ttlMs` and
//! `cacheScope` too. `ping` is gone in this revision.
//!
//! The server never sends a request of its own in this revision: when `question` needs an
//! answer, or the policy says "ask" (answers `once`, `always`, `reject`), the call's
//! result is `resultType: "input_required"` with an `elicitation/create` in
//! `inputRequests` under the key `question-N` (N counts the asks of the call, from 1), and
//! the client retries the call with the answer in `params.inputResponses` under the same
//! key. The call runs again from the start with its answers at hand: both ask before
//! anything is done, so nothing runs twice.

use serde_json::{Map, Value, json};

/// The stateless revision.
pub const VERSION: &str = "2026-07-28";
/// How long a client may cache a list result or the discovery result: the tools, the
/// policy and the resource templates stay fixed while a server runs.
const TTL_MS: u64 = 300_000;
/// UnsupportedProtocolVersion.
pub const UNSUPPORTED_VERSION: i64 = -32022;
/// MissingRequiredClientCapability: the request needs a capability its client did not
/// declare (a `tasks/*` request without the tasks extension).
pub const MISSING_CAPABILITY: i64 = -32021;

/// What the server tells a model about itself.
pub const INSTRUCTIONS: &str = "The tool layer of a coding agent: read, write, edit, apply_patch, bash, grep, glob and more. Paths are relative to the server's working directory; a permission policy decides every call.";

const META_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
const META_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
const META_SERVER: &str = "io.modelcontextprotocol/serverInfo";

/// Every revision served, oldest first.
pub fn versions() -> Vec<&'static str> {
    let mut all = super::PROTOCOL_VERSIONS.to_vec();
    all.push(VERSION);
    all
}

/// The server's identity.
pub fn server_info() -> Value {
    json!({"name": "tinytool", "title": "tinytool", "version": env!("CARGO_PKG_VERSION")})
}

/// The server's capabilities under `version`: 2025-11-25 adds its tasks, 2026-07-28 the
/// tasks extension.
pub fn capabilities(version: &str) -> Value {
    let mut capabilities = json!({"tools": {"listChanged": false}, "resources": {}});
    if version == VERSION {
        capabilities["extensions"] = json!({ super::tasks::EXTENSION: {} });
    } else if version >= "2025-11-25" {
        capabilities["tasks"] =
            json!({"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}});
    }
    capabilities
}

/// What a 2026-07-28 request says about its client.
#[derive(Debug, Clone)]
pub struct Meta {
    /// The client can show an elicitation to its user.
    pub elicitation: bool,
    /// The client takes task handles (the tasks extension).
    pub tasks: bool,
}

/// A 2026-07-28 request the server cannot serve.
#[derive(Debug, Clone)]
pub enum Unsupported {
    /// It names a revision the server does not speak.
    Version(Value),
    /// Its `_meta` lacks a required field (`-32602`).
    Invalid(String),
}

impl Unsupported {
    /// The JSON-RPC error response.
    pub fn message(&self, id: &Value) -> Value {
        match self {
            Unsupported::Version(requested) => json!({"jsonrpc": "2.0", "id": id, "error": {
                "code": UNSUPPORTED_VERSION,
                "message": format!("Unsupported protocol version: {requested}"),
                "data": {"supported": versions(), "requested": requested},
            }}),
            Unsupported::Invalid(text) => json!({"jsonrpc": "2.0", "id": id, "error": {
                "code": super::INVALID_PARAMS,
                "message": text,
            }}),
        }
    }
}

/// The request's revision from its `_meta`: `None` for an `initialize`-era request (no
/// revision there), the client's capabilities for a 2026-07-28 one.
pub fn request_meta(params: &Value) -> Option<Result<Meta, Unsupported>> {
    let meta = params.get("_meta")?;
    let requested = meta.get(META_VERSION)?;
    if requested.as_str() != Some(VERSION) {
        return Some(Err(Unsupported::Version(requested.clone())));
    }
    let capabilities = meta.get(META_CAPABILITIES);
    if !capabilities.is_some_and(Value::is_object) {
        return Some(Err(Unsupported::Invalid(format!(
            "Invalid params: _meta[\"{META_CAPABILITIES}\"] is required (an object) in a {VERSION} request"
        ))));
    }
    let elicitation = capabilities
        .and_then(|c| c.get("elicitation"))
        .is_some_and(|e| !e.is_null());
    let tasks = capabilities
        .and_then(|c| c.get("extensions"))
        .and_then(|e| e.get(super::tasks::EXTENSION))
        .is_some_and(|t| !t.is_null());
    Some(Ok(Meta { elicitation, tasks }))
}

/// The `server/discover` result.
pub fn discover() -> Value {
    json!({
        "supportedVersions": versions(),
        "capabilities": capabilities(VERSION),
        "serverInfo": server_info(),
        "instructions": INSTRUCTIONS,
    })
}

/// `result` as a complete 2026-07-28 result of `method`: `resultType`, the server's
/// identity, and the caching hints of list results.
pub fn complete(method: &str, mut result: Value) -> Value {
    if let Value::Object(fields) = &mut result {
        fields.insert("resultType".into(), json!("complete"));
        add_server_meta(fields);
        if method.ends_with("/list") || method == "server/discover" {
            fields.insert("ttlMs".into(), json!(TTL_MS));
            // The list depends on this server's policy: never shared across clients.
            fields.insert("cacheScope".into(), json!("private"));
        }
    }
    result
}

fn add_server_meta(fields: &mut Map<String, Value>) {
    let meta = fields
        .entry("_meta")
        .or_insert_with(|| Value::Object(Map::new()));
    if let Value::Object(meta) = meta {
        meta.insert(META_SERVER.into(), server_info());
    }
}

/// The `elicitation/create` params that ask `question` (a choice when `options` is not
/// empty).
pub fn elicit_params(question: &str, options: &[String]) -> Value {
    let mut answer = json!({"type": "string", "title": "Answer"});
    if !options.is_empty() {
        answer["enum"] = json!(options);
    }
    json!({
        "message": question,
        "requestedSchema": {"type": "object", "properties": {"answer": answer}, "required": ["answer"]},
    })
}

/// The answer in an `ElicitResult`: the accepted text, or why there is none.
pub fn elicit_answer(result: &Value) -> Result<Option<String>, String> {
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

/// The multi-round-trip state of one 2026-07-28 call: the answers it came with, and the
/// questions it still needs answered.
#[derive(Debug, Default)]
pub struct Retry {
    responses: Map<String, Value>,
    asked: usize,
    required: Map<String, Value>,
}

/// The message a tool sees while its call waits for input (never shown to the model: the
/// call's result is `input_required`).
const INPUT_REQUIRED: &str = "input required from the client";

impl Retry {
    /// The state of a call from its params (`inputResponses`).
    pub fn from_params(params: &Value) -> Retry {
        let responses = params
            .get("inputResponses")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        Retry {
            responses,
            ..Retry::default()
        }
    }

    /// The answer to the call's next question when the client sent it, else the question
    /// is recorded as an input request and the tool is told to stop.
    pub fn ask(&mut self, question: &str, options: &[String]) -> Result<Option<String>, String> {
        self.asked += 1;
        let key = format!("question-{}", self.asked);
        if let Some(response) = self.responses.get(&key) {
            return elicit_answer(response);
        }
        self.required.insert(
            key,
            json!({"method": "elicitation/create", "params": {
                "mode": "form",
                "message": question,
                "requestedSchema": elicit_params(question, options)["requestedSchema"],
            }}),
        );
        Err(INPUT_REQUIRED.to_string())
    }

    /// The `input_required` result, when the call asked something not yet answered.
    pub fn input_required(&self) -> Option<Value> {
        if self.required.is_empty() {
            return None;
        }
        let mut fields = Map::new();
        fields.insert("resultType".into(), json!("input_required"));
        fields.insert("inputRequests".into(), Value::Object(self.required.clone()));
        add_server_meta(&mut fields);
        Some(Value::Object(fields))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_stateless_revision_is_accepted_in_meta() {
        assert!(request_meta(&json!({})).is_none());
        assert!(request_meta(&json!({"_meta": {"progressToken": 1}})).is_none());
        let ok = request_meta(
            &json!({"_meta": {META_VERSION: VERSION, META_CAPABILITIES: {"elicitation": {}}}}),
        );
        assert!(ok.unwrap().unwrap().elicitation);
        let missing = request_meta(&json!({"_meta": {META_VERSION: VERSION}}))
            .unwrap()
            .unwrap_err();
        assert_eq!(missing.message(&json!(1))["error"]["code"], -32602);
        let bad = request_meta(&json!({"_meta": {META_VERSION: "2099-01-01"}}))
            .unwrap()
            .unwrap_err();
        let message = bad.message(&json!(3));
        assert_eq!(message["error"]["code"], UNSUPPORTED_VERSION);
        assert_eq!(message["error"]["data"]["requested"], "2099-01-01");
    }

    #[test]
    fn a_retry_answers_from_its_responses_and_records_the_rest() {
        let mut first = Retry::from_params(&json!({}));
        assert!(first.ask("Which?", &["a".into(), "b".into()]).is_err());
        let required = first.input_required().unwrap();
        assert_eq!(required["resultType"], "input_required");
        assert_eq!(
            required["inputRequests"]["question-1"]["method"],
            "elicitation/create"
        );
        let mut second = Retry::from_params(
            &json!({"inputResponses": {"question-1": {"action": "accept", "content": {"answer": "b"}}}}),
        );
        assert_eq!(second.ask("Which?", &[]), Ok(Some("b".into())));
        assert!(second.input_required().is_none());
    }
}
