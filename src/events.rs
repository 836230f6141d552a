//! The event bus of a command-line program: with `--events FILE`, every bus event is
//! appended to FILE as one JSON line:
//!
//! ```text
//! {"id":"evt_…","type":"tool.execute.before","time":1764669031000,"properties":{…}}
//! ```
//!
//! Each line is written with a single `write` on a descriptor opened with `O_APPEND`, so
//! lines from concurrent processes never interleave. `-` means standard error. Without
//! `--events`, events go nowhere. A failure to write an event never fails the call.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};

/// Where events go.
#[derive(Debug, Default)]
pub struct EventSink {
    target: Option<Target>,
}

#[derive(Debug)]
enum Target {
    Stderr,
    File(Mutex<File>, PathBuf),
}

impl EventSink {
    /// A sink that drops every event.
    pub fn none() -> Self {
        EventSink { target: None }
    }

    /// A sink for `--events SPEC`: `-` is standard error, anything else a file opened for
    /// appending (created if missing).
    pub fn open(spec: &str) -> std::io::Result<Self> {
        let target = if spec == "-" {
            Target::Stderr
        } else {
            let path = Path::new(spec);
            let file = OpenOptions::new().create(true).append(true).open(path)?;
            let path = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
            Target::File(Mutex::new(file), path)
        };
        Ok(EventSink {
            target: Some(target),
        })
    }

    /// The file events are appended to (absolute), when they go to a file: what a detached
    /// supervisor is given to publish its own events.
    pub fn file_path(&self) -> Option<&Path> {
        match &self.target {
            Some(Target::File(_, path)) => Some(path),
            _ => None,
        }
    }

    /// Whether events are recorded at all (lets callers skip building large payloads).
    pub fn is_enabled(&self) -> bool {
        self.target.is_some()
    }

    /// Publishes one event of type `kind` with the given properties.
    pub fn publish(&self, kind: &str, properties: Value) {
        let Some(target) = &self.target else {
            return;
        };
        let event = json!({
            "id": new_id("evt"),
            "type": kind,
            "time": unix_millis(),
            "properties": properties,
        });
        let mut line = event.to_string().into_bytes();
        line.push(b'\n');
        // Events are best effort: a full disk must not turn a successful edit into a failure.
        let _ = match target {
            Target::Stderr => std::io::stderr().lock().write_all(&line),
            Target::File(file, _) => match file.lock() {
                Ok(mut file) => write_once(&mut file, &line),
                Err(_) => Ok(()),
            },
        };
    }
}

/// Writes `bytes` with one `write` call when the kernel takes it whole (it does for regular
/// files), finishing any remainder otherwise.
fn write_once(file: &mut File, bytes: &[u8]) -> std::io::Result<()> {
    let written = file.write(bytes)?;
    if written < bytes.len() {
        file.write_all(&bytes[written..])?;
    }
    Ok(())
}

/// Milliseconds since the Unix epoch.
pub fn unix_millis() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// A new identifier `<prefix>_<16 hex><10 base62>`: the hex part is the time in milliseconds
/// times 4096 plus a counter (so identifiers sort by creation), the rest is random.
pub fn new_id(prefix: &str) -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let count = COUNTER.fetch_add(1, Ordering::Relaxed) % 4096;
    let stamp = unix_millis().wrapping_mul(4096).wrapping_add(count);
    const BASE62: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    let mut random = random_u64();
    let mut tail = String::with_capacity(10);
    for _ in 0..10 {
        tail.push(BASE62[(random % 62) as usize] as char);
        random /= 62;
    }
    format!("{prefix}_{stamp:016x}{tail}")
}

/// 64 random bits from the standard library's per-process hash keys (no extra crate needed
/// for identifiers that only have to be unique, not secret).
fn random_u64() -> u64 {
    use std::collections::hash_map::RandomState;
    use std::hash::{BuildHasher, Hasher};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut hasher = RandomState::new().build_hasher();
    hasher.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
    hasher.write_u32(std::process::id());
    hasher.write_u128(
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0),
    );
    hasher.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_have_the_reference_shape_and_are_unique() {
        let a = new_id("evt");
        let b = new_id("evt");
        assert_eq!(a.len(), 4 + 16 + 10);
        assert!(a.starts_with("evt_"));
        assert_ne!(a, b);
        assert!(a[4..20].chars().all(|c| c.is_ascii_hexdigit()));
    }

    #[test]
    fn events_are_appended_as_json_lines() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("events.jsonl");
        let sink = EventSink::open(path.to_str().unwrap()).unwrap();
        sink.publish("tool.execute.before", json!({"tool": "read"}));
        sink.publish("tool.execute.after", json!({"tool": "read"}));
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0]["type"], "tool.execute.before");
        assert_eq!(lines[1]["properties"]["tool"], "read");
        assert!(lines[0]["time"].as_u64().unwrap() > 0);
    }
}
