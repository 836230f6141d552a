//! What `tinytool checkpoints` and `checkpoints show` print: a checkpoint's per-file
//! summary and its unified diff.
//!
//! Summary lines: `M path +ADDED -REMOVED` (modified; the counts are lines, left out for
//! binary contents), `A path` (added), `D path` (deleted), `T path` (only the mode
//! changed), each followed by `(NOTE)` when a content was not kept. A secret file (one
//! whose `read` the policy would not allow without asking) has its content replaced by
//! [`SECRET`] in every diff.

use serde_json::{Value, json};

use super::store::BlobStore;
use crate::session::{CallContext, Session};
use crate::state::{CheckpointRow, FileChange};

/// What a diff shows in place of a secret file's content.
pub const SECRET: &str = "[content of a secret file not shown]";

/// Contents larger than this are not diffed line by line (the summary has no counts).
const MAX_DIFFED: usize = 4 * 1024 * 1024;

/// Decides which paths are secret: the policy's read judgement, asked once per path.
pub struct Secrets<'a> {
    session: &'a Session,
    judge: crate::policy::ReadJudge,
}

impl<'a> Secrets<'a> {
    /// The judge of the session's project.
    pub fn new(session: &'a Session) -> Self {
        let ctx = CallContext::new(session, "read");
        let judge = session.gate.read_judge(&ctx, &session.dir);
        Secrets { session, judge }
    }

    /// Whether `path` (relative to the project) may not be shown.
    pub fn is_secret(&self, path: &str) -> bool {
        self.judge.may_refuse() && !self.judge.permits(&self.session.dir.join(path))
    }

    /// Whether the contents of `path` in a diff may not be shown: it is a secret now, or
    /// one of `contents` (its versions) made it one then (a secret judged by content that
    /// a later edit turned public must not show what it was).
    pub fn hides(&self, path: &str, contents: &[Option<&[u8]>]) -> bool {
        if self.is_secret(path) {
            return true;
        }
        let name = path.rsplit('/').next().unwrap_or(path);
        self.judge.may_refuse()
            && contents
                .iter()
                .flatten()
                .any(|bytes| crate::secret_file::content_makes_secret(name, bytes))
    }
}

/// One letter for what a change did.
pub fn letter(change: &FileChange) -> char {
    match (change.before_mode, change.after_mode) {
        (None, Some(_)) => 'A',
        (Some(_), None) => 'D',
        (Some(b), Some(a)) if b != a && change.before_blob == change.after_blob => 'T',
        _ => 'M',
    }
}

fn content(blobs: &BlobStore, blob: Option<&String>) -> Option<Vec<u8>> {
    blob.and_then(|id| blobs.get(id).ok())
}

/// `(added, removed)` lines of a modification, when both contents are kept text.
fn counts(blobs: &BlobStore, change: &FileChange) -> Option<(usize, usize)> {
    let before = content(blobs, change.before_blob.as_ref())?;
    let after = content(blobs, change.after_blob.as_ref())?;
    if before.len() > MAX_DIFFED || after.len() > MAX_DIFFED {
        return None;
    }
    let (before, after) = (
        std::str::from_utf8(&before).ok()?,
        std::str::from_utf8(&after).ok()?,
    );
    let diff = similar::TextDiff::from_lines(before, after);
    let (mut added, mut removed) = (0, 0);
    for op in diff.iter_all_changes() {
        match op.tag() {
            similar::ChangeTag::Insert => added += 1,
            similar::ChangeTag::Delete => removed += 1,
            similar::ChangeTag::Equal => {}
        }
    }
    Some((added, removed))
}

/// The summary line of one change (module doc).
pub fn summary_line(blobs: &BlobStore, change: &FileChange) -> String {
    let mut line = format!("{} {}", letter(change), change.path);
    if letter(change) == 'M'
        && let Some((added, removed)) = counts(blobs, change)
    {
        line.push_str(&format!(" +{added} -{removed}"));
    }
    if let Some(note) = &change.note {
        line.push_str(&format!(" ({note})"));
    }
    line
}

/// The time as `YYYY-MM-DD HH:MM:SS` UTC.
fn time_text(millis: i64) -> String {
    // `2026-12-02T09:30:05Z` without its `T` and `Z`.
    crate::clock::rfc3339(millis)
        .trim_end_matches('Z')
        .replacen('T', " ", 1)
}

/// The listing entry of one checkpoint as JSON (`--json`).
pub fn entry_json(row: &CheckpointRow, changes: &[FileChange]) -> Value {
    json!({
        "id": row.id,
        "kind": row.kind,
        "tool": row.tool,
        "time": row.time_created,
        "session": row.session_id,
        "command": row.command,
        "status": row.status,
        "reverts": row.reverts,
        "undone_by": row.undone_by,
        "left_out": row.left_out,
        "overlaps": row
            .overlaps
            .split(',')
            .filter_map(|id| id.parse::<i64>().ok())
            .collect::<Vec<_>>(),
        "paths": changes.iter().map(|c| json!({
            "path": c.path,
            "change": letter(c).to_string(),
            "note": c.note,
        })).collect::<Vec<_>>(),
    })
}

/// How many checkpoints a listing shows unless asked for more.
pub const PAGE: usize = 20;

/// One page of the history, newest first.
#[derive(Debug, Default)]
pub struct Page {
    /// The checkpoints with their changes.
    pub entries: Vec<(CheckpointRow, Vec<FileChange>)>,
    /// Whether older checkpoints exist (the next page starts before the last entry).
    pub more: bool,
}

/// At most `limit` checkpoints older than `before` (the newest when `None`), only
/// `session`'s when given: a listing costs the same however long the history is.
pub fn page(
    store: &crate::state::Store,
    session: Option<&str>,
    before: Option<i64>,
    limit: usize,
) -> anyhow::Result<Page> {
    let limit = limit.max(1);
    let mut rows = store.checkpoints_page(session, before, limit + 1)?;
    let more = rows.len() > limit;
    rows.truncate(limit);
    let mut entries = Vec::with_capacity(rows.len());
    for row in rows {
        let changes = store.checkpoint_changes(row.id)?;
        entries.push((row, changes));
    }
    Ok(Page { entries, more })
}

/// The listing of `tinytool checkpoints`: each entry's [`entry_text`], newest first, and,
/// when older ones exist, a last line saying how to list them (`next(ID)`: the way to ask
/// for the checkpoints before ID).
pub fn listing_text(blobs: &BlobStore, page: &Page, next: impl Fn(i64) -> String) -> String {
    if page.entries.is_empty() {
        return "No checkpoints.\n".to_string();
    }
    let mut text = String::new();
    for (row, changes) in &page.entries {
        text.push_str(&entry_text(blobs, row, changes));
        text.push('\n');
    }
    if let (true, Some((last, _))) = (page.more, page.entries.last()) {
        text.push_str(&format!("(older checkpoints: {})\n", next(last.id)));
    }
    text
}

/// What `checkpoints show ID [PATH]` prints: the entry and the unified diff of its
/// changes, or of those at `path` (a file, or every file below a folder) when given;
/// `Err` says the checkpoint did not change `path` and names a few paths it did change.
pub fn show_text(
    blobs: &BlobStore,
    secrets: &Secrets,
    row: &CheckpointRow,
    changes: &[FileChange],
    path: Option<&str>,
) -> Result<String, String> {
    let shown: Vec<FileChange> = match path.map(|p| p.trim_end_matches('/')) {
        None => changes.to_vec(),
        Some(path) => {
            let folder = format!("{path}/");
            changes
                .iter()
                .filter(|c| c.path == path || c.path.starts_with(&folder))
                .cloned()
                .collect()
        }
    };
    if let Some(path) = path
        && shown.is_empty()
    {
        let some: Vec<&str> = changes.iter().take(5).map(|c| c.path.as_str()).collect();
        let more = changes.len().saturating_sub(some.len());
        let more = if more > 0 {
            format!(" and {more} more")
        } else {
            String::new()
        };
        return Err(format!(
            "checkpoint {} did not change {path} (it changed {}{more})",
            row.id,
            some.join(", ")
        ));
    }
    let mut text = entry_text(blobs, row, changes);
    text.push('\n');
    text.push_str(&checkpoint_diff(blobs, secrets, &shown));
    Ok(text)
}

/// A size as people read it: `812 B`, `2.1 KB`, `3.4 MB`, `1.2 GB` (powers of 1024).
pub fn size_text(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["B", "KB", "MB", "GB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit < UNITS.len() - 1 {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} B")
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

/// The listing entry of one checkpoint as text: a header line and the summary lines.
pub fn entry_text(blobs: &BlobStore, row: &CheckpointRow, changes: &[FileChange]) -> String {
    let mut head = format!(
        "{} {} {} {}",
        row.id,
        row.kind,
        time_text(row.time_created),
        row.tool
    );
    if !row.command.is_empty() {
        head.push_str(&format!(": {}", row.command));
    }
    if let Some(reverts) = row.reverts {
        head.push_str(&format!(" (reverts {reverts})"));
    }
    if let Some(by) = row.undone_by {
        head.push_str(&format!(" [undone by {by}]"));
    }
    if row.status == "open" {
        head.push_str(" [running]");
    }
    if !row.overlaps.is_empty() {
        head.push_str(&format!(" [overlapped {}]", row.overlaps));
    }
    let mut text = head;
    if !row.left_out.is_empty() {
        text.push_str(&format!("\n  (also changed, not kept: {})", row.left_out));
    }
    for change in changes {
        text.push_str("\n  ");
        text.push_str(&summary_line(blobs, change));
    }
    text
}

/// The unified diff from `old` to `new` content of `path` (`None` = absent), with the
/// secret and binary cases in words.
pub fn diff_text(
    path: &str,
    old: Option<&[u8]>,
    new: Option<&[u8]>,
    secret: bool,
    note: Option<&str>,
) -> String {
    let (a, b) = (
        if old.is_some() {
            format!("a/{path}")
        } else {
            "/dev/null".into()
        },
        if new.is_some() {
            format!("b/{path}")
        } else {
            "/dev/null".into()
        },
    );
    if secret {
        return format!("--- {a}\n+++ {b}\n{SECRET}\n");
    }
    fn text(bytes: Option<&[u8]>) -> Option<&str> {
        match bytes {
            None => Some(""),
            Some(bytes) => std::str::from_utf8(bytes).ok(),
        }
    }
    match (text(old), text(new)) {
        (Some(x), Some(y)) => {
            let diff = crate::textdoc::unified_diff(x, y, &a, &b);
            if diff.is_empty() {
                format!("--- {a}\n+++ {b}\n(contents equal)\n")
            } else if diff.ends_with('\n') {
                diff
            } else {
                format!("{diff}\n")
            }
        }
        _ => match note {
            Some(note) => format!("--- {a}\n+++ {b}\n({note})\n"),
            None => format!("Binary files {a} and {b} differ\n"),
        },
    }
}

/// The unified diff of everything checkpoint `changes` did.
pub fn checkpoint_diff(blobs: &BlobStore, secrets: &Secrets, changes: &[FileChange]) -> String {
    let mut out = String::new();
    for change in changes {
        let old = content(blobs, change.before_blob.as_ref());
        let new = content(blobs, change.after_blob.as_ref());
        let missing_note = |mode: Option<u32>, bytes: &Option<Vec<u8>>| {
            (mode.is_some() && bytes.is_none()).then(|| change.note.clone().unwrap_or_default())
        };
        let note = missing_note(change.before_mode, &old).or(missing_note(change.after_mode, &new));
        if let Some(note) = note {
            let shown = if note.is_empty() {
                "content not kept".into()
            } else {
                note
            };
            out.push_str(&format!("--- a/{0}\n+++ b/{0}\n({shown})\n", change.path));
            continue;
        }
        out.push_str(&diff_text(
            &change.path,
            change
                .before_mode
                .map(|_| old.as_deref().unwrap_or_default()),
            change
                .after_mode
                .map(|_| new.as_deref().unwrap_or_default()),
            secrets.hides(&change.path, &[old.as_deref(), new.as_deref()]),
            None,
        ));
    }
    out
}
