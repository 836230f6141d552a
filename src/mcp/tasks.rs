//! Task-augmented tool calls: the client polls a long call instead of holding a request
//! open.
//!
//! Two forms, one store:
//!
//! - **2025-11-25 tasks** (on an `initialize`-era connection that negotiated 2025-11-25):
//!   a `tools/call` whose params carry `task: {ttl?}` is answered at once with
//!   `{task: TASK}`; then `tasks/get` (the task), `tasks/result` (waits for the end;
//!   the call's result, or its error), `tasks/list` (this connection's tasks),
//!   `tasks/cancel` (stops it; the task). `TASK = {taskId, status, statusMessage?,
//!   createdAt, lastUpdatedAt, ttl, pollInterval}`; a result with `isError` ends `failed`.
//! - **The 2026-07-28 tasks extension** (`io.modelcontextprotocol/tasks` in the request's
//!   client capabilities `extensions`): the server decides, and makes a task of every call
//!   of a tool that can run long ([`LONG_TOOLS`]); the answer is `resultType: "task"` with
//!   `{taskId, status, createdAt, lastUpdatedAt, ttlMs, pollIntervalMs}`; `tasks/get`
//!   returns the task with `result` once `completed` (a result with `isError` included) or
//!   `error` once `failed`; `tasks/update` and `tasks/cancel` answer an empty result.
//!
//! While a task works, its `statusMessage` is its latest progress ("running for 15 s; 3
//! lines of output so far"). A finished task is kept for its TTL (default
//! [`DEFAULT_TTL_MS`], at most [`MAX_TTL_MS`]), then forgotten; at most [`MAX_TASKS`] are
//! kept, the oldest finished ones dropped first.

use std::collections::HashMap;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Duration;

use serde_json::{Map, Value, json};

use super::Out;

/// Tools whose calls become tasks under the 2026-07-28 extension: they wait on commands,
/// subagents or the network.
pub const LONG_TOOLS: &[&str] = &["bash", "monitor", "task", "webfetch", "websearch"];
/// How long a task is kept when the client names no TTL.
const DEFAULT_TTL_MS: u64 = 3_600_000;
/// The longest TTL granted.
const MAX_TTL_MS: u64 = 86_400_000;
/// Tasks kept at once.
const MAX_TASKS: usize = 1000;
/// The polling interval suggested to clients.
const POLL_MS: u64 = 1000;
/// The capability key of the 2026-07-28 extension.
pub const EXTENSION: &str = "io.modelcontextprotocol/tasks";

/// Which form a task was created in (its shapes differ).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    /// 2025-11-25.
    Legacy,
    /// The 2026-07-28 extension.
    Extension,
}

#[derive(Debug, Clone)]
struct Entry {
    form: Form,
    status: &'static str,
    message: Option<String>,
    created: u64,
    updated: u64,
    ttl_ms: u64,
    /// The final result (`completed`, or `failed` with `isError` in 2025-11-25).
    result: Option<Value>,
    /// The JSON-RPC error (`failed`).
    error: Option<Value>,
    /// The connection's pool key prefix (tasks/list lists a connection's own).
    owner: String,
    /// The pool key of the call.
    key: String,
}

impl Entry {
    fn terminal(&self) -> bool {
        matches!(self.status, "completed" | "failed" | "cancelled")
    }
}

/// Every task of the server.
#[derive(Default)]
pub struct Tasks {
    map: Mutex<HashMap<String, Entry>>,
    /// Signalled when a task ends.
    ended: Condvar,
}

/// A `tasks/*` request that cannot be served: the message of a `-32602`.
pub type Refusal = String;

impl Tasks {
    fn lock(&self) -> MutexGuard<'_, HashMap<String, Entry>> {
        self.map
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Creates a working task for a call keyed `key` in the pool, on the connection whose
    /// prefix is `owner`; returns its id.
    pub fn create(
        &self,
        form: Form,
        ttl_ms: Option<u64>,
        owner: &str,
        key: impl FnOnce(&str) -> String,
    ) -> Result<String, Refusal> {
        let now = crate::events::unix_millis();
        let mut map = self.lock();
        map.retain(|_, e| !(e.terminal() && now > e.created.saturating_add(e.ttl_ms)));
        if map.len() >= MAX_TASKS {
            let oldest = map
                .iter()
                .filter(|(_, e)| e.terminal())
                .min_by_key(|(_, e)| e.updated)
                .map(|(id, _)| id.clone());
            match oldest {
                Some(id) => {
                    map.remove(&id);
                }
                None => return Err(format!("too many tasks at once (at most {MAX_TASKS})")),
            }
        }
        let id = crate::events::new_id("task");
        let entry = Entry {
            form,
            status: "working",
            message: None,
            created: now,
            updated: now,
            ttl_ms: ttl_ms.unwrap_or(DEFAULT_TTL_MS).min(MAX_TTL_MS),
            result: None,
            error: None,
            owner: owner.to_string(),
            key: key(&id),
        };
        map.insert(id.clone(), entry);
        Ok(id)
    }

    /// Where the call of task `id` answers: its response ends the task, its progress
    /// becomes the status message.
    pub fn sink(self: &Arc<Self>, id: &str) -> Out {
        let tasks = self.clone();
        let id = id.to_string();
        Out::replies_only(move |message: &Value| {
            if message.get("method").and_then(Value::as_str) == Some("notifications/progress") {
                if let Some(text) = message.pointer("/params/message").and_then(Value::as_str) {
                    tasks.update(&id, |e| e.message = Some(text.to_string()));
                }
                return;
            }
            if let Some(error) = message.get("error") {
                tasks.update(&id, |e| {
                    e.status = "failed";
                    e.message = error
                        .get("message")
                        .and_then(Value::as_str)
                        .map(String::from);
                    e.error = Some(error.clone());
                });
            } else if let Some(result) = message.get("result") {
                let is_error = result.get("isError") == Some(&Value::Bool(true));
                tasks.update(&id, |e| {
                    e.status = if is_error && e.form == Form::Legacy {
                        "failed"
                    } else {
                        "completed"
                    };
                    e.message = None;
                    e.result = Some(result.clone());
                });
            }
            tasks.ended.notify_all();
        })
    }

    fn update(&self, id: &str, change: impl FnOnce(&mut Entry)) {
        if let Some(entry) = self.lock().get_mut(id)
            && !entry.terminal()
        {
            change(entry);
            entry.updated = crate::events::unix_millis();
        }
    }

    /// The task as a 2025-11-25 `Task` or a 2026-07-28 `DetailedTask` (with its result or
    /// error once ended).
    fn shape(id: &str, entry: &Entry, detailed: bool) -> Map<String, Value> {
        let mut task = Map::new();
        task.insert("taskId".into(), json!(id));
        task.insert("status".into(), json!(entry.status));
        if let Some(message) = &entry.message {
            task.insert("statusMessage".into(), json!(message));
        }
        let stamp = |millis: u64| crate::clock::rfc3339(i64::try_from(millis).unwrap_or(0));
        task.insert("createdAt".into(), json!(stamp(entry.created)));
        task.insert("lastUpdatedAt".into(), json!(stamp(entry.updated)));
        match entry.form {
            Form::Legacy => {
                task.insert("ttl".into(), json!(entry.ttl_ms));
                task.insert("pollInterval".into(), json!(POLL_MS));
            }
            Form::Extension => {
                task.insert("ttlMs".into(), json!(entry.ttl_ms));
                task.insert("pollIntervalMs".into(), json!(POLL_MS));
                if detailed {
                    match entry.status {
                        "completed" => {
                            if let Some(result) = &entry.result {
                                task.insert("result".into(), result.clone());
                            }
                        }
                        "failed" => {
                            if let Some(error) = &entry.error {
                                task.insert("error".into(), error.clone());
                            }
                        }
                        _ => {}
                    }
                }
            }
        }
        task
    }

    /// The answer to a task-augmented call: `{task}` (2025-11-25) or the task with
    /// `resultType: "task"` (2026-07-28).
    pub fn created(&self, id: &str) -> Value {
        let map = self.lock();
        let Some(entry) = map.get(id) else {
            return json!({});
        };
        let task = Self::shape(id, entry, false);
        match entry.form {
            Form::Legacy => json!({ "task": task }),
            Form::Extension => {
                let mut fields = task;
                fields.insert("resultType".into(), json!("task"));
                Value::Object(fields)
            }
        }
    }

    fn id_of(params: &Value) -> Result<&str, Refusal> {
        params
            .get("taskId")
            .and_then(Value::as_str)
            .ok_or_else(|| "tasks/* needs params.taskId".to_string())
    }

    /// `tasks/get`; `owner`: the asking connection's prefix, where tasks belong to
    /// connections (2025-11-25 sessions; another session's task is unknown to it).
    pub fn get(&self, params: &Value, owner: Option<&str>) -> Result<Value, Refusal> {
        let id = Self::id_of(params)?;
        let map = self.lock();
        let entry = map
            .get(id)
            .filter(|e| owns(e, owner))
            .ok_or_else(|| format!("Unknown task: {id}"))?;
        Ok(Value::Object(Self::shape(id, entry, true)))
    }

    /// `tasks/list` (2025-11-25): the tasks of the connection `owner`.
    pub fn list(&self, owner: &str) -> Value {
        let map = self.lock();
        let mut tasks: Vec<(&String, &Entry)> =
            map.iter().filter(|(_, e)| e.owner == owner).collect();
        tasks.sort_by_key(|(id, e)| (e.created, id.to_string()));
        let tasks: Vec<Value> = tasks
            .into_iter()
            .map(|(id, e)| Value::Object(Self::shape(id, e, false)))
            .collect();
        json!({ "tasks": tasks })
    }

    /// `tasks/cancel`: marks the task cancelled; returns the pool key to stop and the
    /// answer (the task in 2025-11-25, an empty result in 2026-07-28).
    pub fn cancel(&self, params: &Value, owner: Option<&str>) -> Result<(String, Value), Refusal> {
        let id = Self::id_of(params)?;
        let mut map = self.lock();
        let entry = map
            .get_mut(id)
            .filter(|e| owns(e, owner))
            .ok_or_else(|| format!("Unknown task: {id}"))?;
        if entry.terminal() {
            if entry.form == Form::Legacy {
                return Err(format!("Task {id} has already ended ({})", entry.status));
            }
        } else {
            entry.status = "cancelled";
            entry.message = Some("cancelled by the client".into());
            entry.updated = crate::events::unix_millis();
        }
        let answer = match entry.form {
            Form::Legacy => Value::Object(Self::shape(id, entry, false)),
            Form::Extension => json!({}),
        };
        let key = entry.key.clone();
        drop(map);
        self.ended.notify_all();
        Ok((key, answer))
    }

    /// `tasks/update` (2026-07-28): tinytool's tasks never wait for input, so responses
    /// are acknowledged and ignored, as the extension asks for unknown keys.
    pub fn update_request(&self, params: &Value) -> Result<Value, Refusal> {
        let id = Self::id_of(params)?;
        if !self.lock().contains_key(id) {
            return Err(format!("Unknown task: {id}"));
        }
        Ok(json!({}))
    }

    /// `tasks/result` (2025-11-25): waits for the task to end, then its call's result (with
    /// the related-task `_meta`), or its error as `Err((code, message))`.
    pub fn result(&self, params: &Value, owner: Option<&str>) -> Result<Value, (i64, String)> {
        let id = Self::id_of(params).map_err(|m| (super::INVALID_PARAMS, m))?;
        let mut map = self.lock();
        loop {
            let Some(entry) = map.get(id).filter(|e| owns(e, owner)) else {
                return Err((super::INVALID_PARAMS, format!("Unknown task: {id}")));
            };
            if entry.terminal() {
                if let Some(error) = &entry.error {
                    let code = error.get("code").and_then(Value::as_i64).unwrap_or(-32603);
                    let text = error.get("message").and_then(Value::as_str).unwrap_or("");
                    return Err((code, text.to_string()));
                }
                let Some(Value::Object(result)) = &entry.result else {
                    return Err((-32603, format!("Task {id} was {}", entry.status)));
                };
                let mut result = result.clone();
                let meta = result
                    .entry("_meta")
                    .or_insert_with(|| Value::Object(Map::new()));
                if let Value::Object(meta) = meta {
                    meta.insert(
                        "io.modelcontextprotocol/related-task".into(),
                        json!({"taskId": id}),
                    );
                }
                return Ok(Value::Object(result));
            }
            map = match self.ended.wait_timeout(map, Duration::from_secs(1)) {
                Ok((guard, _)) => guard,
                Err(poisoned) => poisoned.into_inner().0,
            };
        }
    }
}

/// Whether the connection `owner` may see `entry` (`None`: any may, a stateless
/// request's task id being its only key).
fn owns(entry: &Entry, owner: Option<&str>) -> bool {
    owner.is_none_or(|owner| entry.owner == owner)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_task_works_then_completes_with_its_result() {
        let tasks = Arc::new(Tasks::default());
        let id = tasks
            .create(Form::Extension, None, "", |id| format!("task:{id}"))
            .unwrap();
        let created = tasks.created(&id);
        assert_eq!(created["resultType"], "task");
        assert_eq!(created["status"], "working");
        let sink = tasks.sink(&id);
        sink.send(&json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": 1, "progress": 5, "message": "running for 5 s"}}));
        let got = tasks.get(&json!({"taskId": id}), None).unwrap();
        assert_eq!(got["statusMessage"], "running for 5 s");
        sink.send(&json!({"jsonrpc": "2.0", "id": 1, "result": {"content": [], "isError": true}}));
        let got = tasks.get(&json!({"taskId": id}), None).unwrap();
        assert_eq!(got["status"], "completed");
        assert_eq!(got["result"]["isError"], true);
        // A finished task stays finished.
        let (_, answer) = tasks.cancel(&json!({"taskId": id}), None).unwrap();
        assert_eq!(answer, json!({}));
        assert_eq!(
            tasks.get(&json!({"taskId": id}), None).unwrap()["status"],
            "completed"
        );
    }

    #[test]
    fn a_legacy_task_fails_on_an_error_result_and_result_waits() {
        let tasks = Arc::new(Tasks::default());
        let id = tasks
            .create(Form::Legacy, Some(5000), "s:", |id| format!("s:{id}"))
            .unwrap();
        assert_eq!(tasks.created(&id)["task"]["ttl"], 5000);
        let sink = tasks.sink(&id);
        std::thread::scope(|scope| {
            let waiter = scope.spawn(|| tasks.result(&json!({"taskId": id}), Some("s:")));
            sink.send(
                &json!({"jsonrpc": "2.0", "id": 1, "result": {"content": [], "isError": true}}),
            );
            let result = waiter.join().unwrap().unwrap();
            assert_eq!(
                result["_meta"]["io.modelcontextprotocol/related-task"]["taskId"],
                json!(id)
            );
        });
        assert_eq!(
            tasks.get(&json!({"taskId": id}), None).unwrap()["status"],
            "failed"
        );
        assert_eq!(tasks.list("s:")["tasks"].as_array().unwrap().len(), 1);
        assert_eq!(tasks.list("other:")["tasks"].as_array().unwrap().len(), 0);
        assert!(tasks.get(&json!({"taskId": "nope"}), None).is_err());
        // Another session's task is unknown to it.
        assert!(tasks.get(&json!({"taskId": id}), Some("other:")).is_err());
        assert!(
            tasks
                .cancel(&json!({"taskId": id}), Some("other:"))
                .is_err()
        );
        assert!(
            tasks
                .result(&json!({"taskId": id}), Some("other:"))
                .is_err()
        );
        assert!(tasks.get(&json!({"taskId": id}), Some("s:")).is_ok());
    }
}
