//! `apply_patch`: apply a multi-file patch, all or nothing.
//!
//! The patch is either Codex's `*** Begin Patch` envelope or a unified diff (`diff -u`,
//! `git diff`), detected automatically; the grammar of both is at the top of [`parse`].
//! [`apply`] plans every change in memory, and only when every hunk of every file applies
//! are the files written (atomically, each keeping its permissions, BOM and line endings);
//! otherwise the refusal names the file, the hunk and the first line that differs, and
//! nothing changes. The writing itself is all or nothing too ([`atomic::commit`]): when the
//! file system refuses a step (a read-only or immutable directory, a full disk), the steps
//! already taken are undone and the call fails with `no file was changed` and the cause. A
//! patch already in place succeeds with `already applied`, each operation keeping its verb
//! (`Created g.txt (already applied)`).
//!
//! Every path the patch touches — each file, and the source and destination of a move — is
//! an `edit` access for the policy, so a rule like `edit *.lock deny` stops any patch that
//! touches `Cargo.lock`; the locks of all of them are held (taken in path order, so two
//! patches cannot deadlock) until the call ends. The access names the path really changed
//! ([`apply::targets`]): the file a symlink points to when the patch writes through it, the
//! link itself when Delete File or a move removes it. Removing a link inside the working
//! directory therefore needs no `external_directory`, even when it points outside (the
//! file outside is not touched); a moved link's content is read through it, which is a
//! `read` access of the file it points to (judged, and `external_directory` asked, there). After writing, the configured formatter
//! runs on each written file and `file.modified` is published per path (`create`, `edit`,
//! `delete`; a move is a delete and a create).
//!
//! No output shows the content of a file the caller may not read (`secrets`: `.env` under
//! the default policy): its diff, and the diff of a move's other end, are replaced by
//! `[content of a secret file not shown]`, and a hunk that does not match it is refused
//! without quoting its lines.
//!
//! Output: one line per operation, `Created PATH`, `Modified PATH`, `Deleted PATH` or
//! `Moved FROM -> TO`, each followed by its formatter note. metadata: format, files (path,
//! operation) and diff (unified, of every changed file, cut at 256 KB).

mod apply;
mod parse;

use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::aftercare;
use crate::atomic;
use crate::locks::PathLock;
use crate::schema;
use crate::session::{CallContext, Session};
use crate::tool::{Access, ToolDef, ToolDoc, ToolOutput, parse_args};
use apply::{Entry, Plan, Resolver, Target};

/// The `apply_patch` tool's definition.
pub fn definition() -> ToolDef {
    ToolDef {
        name: "apply_patch",
        summary: "Apply a multi-file patch, all or nothing",
        description: "Apply a patch to one or more files. Accepts the envelope format:\n\
            *** Begin Patch\n*** Add File: path/new.txt\n+line\n*** Delete File: path/old.txt\n\
            *** Update File: path/file.py\n*** Move to: path/renamed.py\n@@ def function():\n \
            context line\n-removed line\n+added line\n*** End Patch\n\
            (`@@ scope` lines locate a chunk; `*** End of File` anchors one at the end), and \
            unified diffs (`--- a/path`, `+++ b/path`, `@@ -1,3 +1,4 @@` hunks; /dev/null adds \
            or deletes). Context is matched exactly, then ignoring surrounding whitespace, \
            then with Unicode dashes, curly quotes, ellipses and spaces read as ASCII; when it \
            matched at another indentation, added lines are re-indented to follow it, in the \
            file's tabs or spaces. A chunk that fits several places is refused (add context or \
            an `@@` scope line); so is one whose removed line reads differently in the file. A \
            chunk with only added lines goes at the end of the file (its scope must exist); an \
            updated file ends with a newline. \
            Nothing is written unless every hunk of every file applies; a patch that is \
            already applied changes nothing. Paths are relative to the working directory.",
        permission: "edit",
        schema: parameters,
        execute,
        access: Some(access),
        precheck: None,
        checkpoint: Some(checkpoint),
        needs: None,
        after_changes: None,
        doc: ToolDoc {
            output: "One line per file operation: `Created PATH`, `Modified PATH`, `Deleted \
                PATH` or `Moved FROM -> TO` (with `(hunk N already applied)` when part of it was \
                in place, `(hunk N: context matched ignoring indentation; 2 added lines \
                re-indented by +4 columns)` when added lines were moved to the file's \
                indentation, and the formatter's note when one is configured), then `Read as \
                meant: …` for each slip in the patch's shape that was repaired: unprefixed \
                context lines, a bare `@@` in a unified diff, `*** Begin Patch ***`, a missing \
                `*** End Patch` (the patch is read to its end or to a closing Markdown fence). A \
                patch whose changes are all in place answers `Patch already applied: nothing \
                was changed.` metadata: format (envelope or unified), files (path, operation), \
                diff, repairs, reindented, formatters, diagnostics. When a language server \
                runs for a changed file's language, the lines end with its verdict on the \
                changed files (and other open files whose problems changed), as write's do.",
            errors: "`Invalid patch: line N: ...` (the grammar is in the module doc of \
                src/tools/apply_patch/parse.rs); `Patch not applied; no file was changed.` \
                followed by the reason: the file and hunk whose lines are not in the file with \
                the first differing line (`line 14 reads `timeout=30`, the patch expects \
                `timeout=10``: the one line that differs when all others are there), a hunk \
                that `fits N places (lines a-b, c-d)` (a unified header's line number decides \
                only when it names one of them exactly, a scope line only when its block holds \
                one), `Cannot create PATH: it already exists` (a unified diff's new file, or \
                rename, onto an existing file: git refuses it too, while the envelope's Add File \
                and Move to overwrite, as Codex's do), `File to update not found`, `File to \
                delete not found` (each with `Did \
                you mean: PATH?` naming the file probably meant, as read does), `Cannot delete \
                PATH: it is a directory`, `PATH is not a regular file: \
                it is a FIFO` (or a socket or device: never opened), or what the file system \
                refused (`Cannot delete PATH: Permission denied`, `Cannot write PATH: ...`, \
                `Cannot replace PATH: ...`; everything done before it is undone). Only if \
                undoing fails too: `Patch partly applied: ...` listing each file that is not \
                as before and where its previous version is kept. Symlinks: Add, Update and \
                a move's destination write through a link; Delete and a move's source remove \
                the link itself, never the file it points to.",
            examples: &[
                (
                    "Apply a patch from a file",
                    "tinytool apply_patch --patch \"$(cat change.patch)\"",
                ),
                (
                    "Apply a git diff",
                    "git diff | jq -Rs '{patch: .}' | tinytool apply_patch",
                ),
            ],
        },
    }
}

fn parameters() -> Value {
    schema::object(
        json!({
            "patch": {
                "type": "string",
                "description": "The patch: `*** Begin Patch` … `*** End Patch`, or a unified diff."
            }
        }),
        &["patch"],
    )
}

/// Where the operations of `patch` act, resolved against the session's directory.
fn targets(ctx: &CallContext, patch: &parse::Patch) -> Vec<Target> {
    let follow = |p: &str| ctx.resolve(p);
    let own = |p: &str| ctx.resolve_link(p);
    apply::targets(
        patch,
        &Resolver {
            follow: &follow,
            own: &own,
        },
    )
}

/// One `edit` access per path the patch changes (source and destination of a move) and a
/// `read` access of the file a moved symlink points to, in patch order (module doc); an
/// unparsable patch needs only the tool-level access (the call then reports the parse
/// error).
fn access(ctx: &CallContext, args: &Map<String, Value>) -> Vec<Access> {
    let text = args
        .get("patch")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let Ok(patch) = parse::parse(text) else {
        return vec![Access::new("edit", "apply_patch")];
    };
    let mut out: Vec<Access> = Vec::new();
    let mut push = |access: Access| {
        if !out
            .iter()
            .any(|a| a.permission == access.permission && a.path == access.path)
        {
            out.push(access);
        }
    };
    for target in targets(ctx, &patch) {
        let mut changed = Access::resolved(ctx, "edit", target.path.clone());
        if target.link {
            changed =
                changed.because("removes the symbolic link itself, not the file it points to");
        }
        push(changed);
        let moved_link = target.read.is_some();
        if let Some(read) = target.read {
            push(
                Access::resolved(ctx, "read", read).because("the content of a moved symbolic link"),
            );
        }
        if let Some(dest) = target.dest {
            // A move carries the file's content to a new name, which the read rules
            // judge by name: moving `.env` to `notes.txt` is reading `.env` (a moved
            // link's content is the file it points to, judged above).
            if !moved_link {
                push(
                    Access::resolved(ctx, "read", target.path.clone())
                        .because("a move carries the file's content to another name"),
                );
            }
            // Moving onto an existing file replaces what it held: where that is a secret,
            // only a caller who may read it may replace it.
            if std::fs::symlink_metadata(&dest).is_ok() {
                push(
                    Access::resolved(ctx, "read", dest.clone())
                        .because("a move replaces the file at its destination"),
                );
            }
            push(Access::resolved(ctx, "edit", dest));
        }
    }
    out
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PatchArgs {
    patch: String,
}

const NOTHING_CHANGED: &str = "Patch not applied; no file was changed.";

fn execute(ctx: &CallContext, args: Map<String, Value>) -> anyhow::Result<ToolOutput> {
    let args: PatchArgs = match parse_args(args) {
        Ok(args) => args,
        Err(output) => return Ok(output),
    };
    let patch = match parse::parse(&args.patch) {
        Ok(patch) => patch,
        Err(err) => {
            return Ok(ToolOutput::error(format!(
                "Invalid patch: {err}\n{NOTHING_CHANGED}"
            )));
        }
    };
    let targets = targets(ctx, &patch);
    let mut paths: Vec<PathBuf> = targets
        .iter()
        .flat_map(|t| [Some(&t.path), t.read.as_ref(), t.dest.as_ref()])
        .flatten()
        .cloned()
        .collect();
    paths.sort();
    paths.dedup();
    let mut locks = Vec::with_capacity(paths.len());
    for path in &paths {
        match PathLock::acquire(path) {
            Ok(lock) => locks.push(lock),
            Err(err) => {
                return Ok(ToolOutput::error(format!(
                    "{NOTHING_CHANGED}\nCannot take the lock of {}: {err}",
                    ctx.display(path)
                )));
            }
        }
    }
    let show = |p: &Path| ctx.display(p);
    let hidden = hidden_paths(ctx, &targets);
    let hint = |path: &Path| ctx.did_you_mean(path, crate::suggest::Want::Existing);
    let plan = match apply::plan(&patch, &targets, &show, &hint) {
        Ok(plan) => plan,
        Err(message) => {
            let message = hide_mismatch(message, &hidden, &show);
            return Ok(ToolOutput::error(format!("{NOTHING_CHANGED}\n{message}")));
        }
    };
    // No update may turn a secret into a file the caller could read.
    for (path, entry) in &plan.after {
        if let apply::Entry::File { bytes, .. } = entry
            && plan
                .before
                .iter()
                .any(|(p, before)| p == path && before != entry)
            && let Some(refusal) = crate::secrets::declassifying(ctx, path, bytes, &show(path))
        {
            return Ok(ToolOutput::error(format!(
                "{NOTHING_CHANGED}
{refusal}"
            )));
        }
    }
    let format_name = match patch.format {
        parse::Format::Envelope => "envelope",
        parse::Format::Unified => "unified",
    };
    if plan.is_noop() {
        let mut text = "Patch already applied: nothing was changed.".to_string();
        for outcome in &plan.outcomes {
            text.push_str(&format!(
                "\n{} {} (already applied)",
                outcome.verb, outcome.shown
            ));
        }
        return Ok(ToolOutput::text(text)
            .with("format", format_name)
            .with("already_applied", true)
            .with("files", json!([])));
    }
    let warnings = match commit(&plan, &ctx.session.dir, &show) {
        Ok(warnings) => warnings,
        Err(message) => return Ok(ToolOutput::error(message)),
    };
    let mut notes: Vec<(PathBuf, String, Option<Value>)> = Vec::new();
    for (path, before) in &plan.before {
        let after = plan.after.get(path);
        if after == Some(before) {
            continue;
        }
        let operation = match (before, after) {
            (_, Some(Entry::Absent)) => "delete",
            (Entry::File { .. }, _) => "edit",
            _ => "create",
        };
        if operation != "delete" {
            let formatted = aftercare::format(ctx, path);
            notes.push((path.clone(), formatted.note(), formatted.metadata()));
        }
        aftercare::file_modified(ctx, path, operation);
    }
    let mut lines = Vec::new();
    for outcome in &plan.outcomes {
        let mut line = if outcome.fully_applied_before {
            format!("{} {} (already applied)", outcome.verb, outcome.shown)
        } else {
            format!("{} {}", outcome.verb, outcome.shown)
        };
        if !outcome.already.is_empty() {
            let hunks: Vec<String> = outcome.already.iter().map(usize::to_string).collect();
            let plural = if hunks.len() > 1 { "s" } else { "" };
            line.push_str(&format!(
                " (hunk{plural} {} already applied)",
                hunks.join(", ")
            ));
        }
        for note in &outcome.notes {
            line.push_str(&format!(" ({note})"));
        }
        if let Some(written) = &outcome.written
            && let Some((_, note, _)) = notes.iter().find(|(p, _, _)| p == written)
        {
            line.push_str(note);
        }
        lines.push(line);
    }
    lines.extend(warnings);
    for repair in &patch.repairs {
        lines.push(format!("Read as meant: {repair}"));
    }
    let files: Vec<Value> = plan
        .before
        .iter()
        .filter(|(path, before)| plan.after.get(path) != Some(before))
        .map(|(path, before)| {
            let operation = match (before, plan.after.get(path)) {
                (_, Some(Entry::Absent)) => "deleted",
                (Entry::File { .. }, _) => "modified",
                _ => "created",
            };
            json!({"path": ctx.display(path), "operation": operation})
        })
        .collect();
    let mut output = ToolOutput::text(lines.join("\n"))
        .with("format", format_name)
        .with("files", files)
        .with(
            "diff",
            crate::tools::edit::bounded_diff(diff(ctx, &plan, &hidden)),
        );
    if !patch.repairs.is_empty() {
        output = output.with("repairs", json!(patch.repairs));
    }
    let reindented: Vec<String> = plan
        .outcomes
        .iter()
        .flat_map(|o| o.notes.iter().map(|n| format!("{}: {n}", o.shown)))
        .collect();
    if !reindented.is_empty() {
        output = output.with("reindented", json!(reindented));
    }
    let formatters: Vec<Value> = notes.into_iter().filter_map(|(_, _, meta)| meta).collect();
    if !formatters.is_empty() {
        output = output.with("formatters", formatters);
    }
    // The locks are held until here: formatters and events see the patched files only.
    drop(locks);
    let changes: Vec<crate::lsp::Change> = plan
        .before
        .iter()
        .filter(|(path, before)| plan.after.get(path) != Some(before))
        .map(|(path, before)| crate::lsp::Change {
            path,
            before: match before {
                Entry::File { bytes, .. } => Some(bytes.as_slice()),
                _ => None,
            },
            deleted: matches!(plan.after.get(path), Some(Entry::Absent)),
        })
        .collect();
    Ok(crate::lsp::append(ctx, output, &changes))
}

/// Writes the plan all or nothing ([`atomic::commit`]); directories left empty by a
/// deletion or a move are removed afterwards, up to `root` (the project directory, never
/// removed). The error is the message for the caller; `Ok` carries notes for the output
/// (hidden copies that could not be removed).
fn commit(plan: &Plan, root: &Path, show: &dyn Fn(&Path) -> String) -> Result<Vec<String>, String> {
    let mut changes = Vec::new();
    for (path, before) in &plan.before {
        let Some(after) = plan.after.get(path) else {
            continue;
        };
        if after == before {
            continue;
        }
        match after {
            Entry::File { bytes, mode } => changes.push(atomic::Change::Write {
                target: path,
                bytes,
                mode: *mode,
            }),
            Entry::Absent => changes.push(atomic::Change::Delete { target: path }),
            // The plan never turns anything into these.
            Entry::Other(_) | Entry::Link(_) => {}
        }
    }
    let committed = atomic::commit(root, &changes).map_err(|failure| failed(&failure, show))?;
    let mut emptied: Vec<PathBuf> = Vec::new();
    for change in &changes {
        if let atomic::Change::Delete { target } = change {
            emptied.extend(remove_empty_parents(target, root));
        }
    }
    atomic::sync_dirs(emptied.iter().map(PathBuf::as_path));
    Ok(committed
        .leftovers
        .iter()
        .map(|(path, err)| {
            format!(
                "Note: the patch is applied, but the hidden copy {} of the previous version \
                 could not be removed: {err}",
                show(path)
            )
        })
        .collect())
}

/// The message of a commit that failed: nothing changed, or (when undoing failed too)
/// exactly what is where.
fn failed(failure: &atomic::Failure, show: &dyn Fn(&Path) -> String) -> String {
    let verb = match failure.action {
        atomic::Action::Write => "write",
        atomic::Action::Replace => "replace",
        atomic::Action::Delete => "delete",
    };
    let cause = format!("Cannot {verb} {}: {}", show(&failure.target), failure.error);
    let damaged: Vec<String> = failure
        .damage
        .iter()
        .filter_map(|damage| match damage {
            atomic::Damage::Changed {
                target,
                original: Some(original),
            } => Some(format!(
                "- {} has the patched content; its previous version is in {} (rename it back \
                 to restore it)",
                show(target),
                show(original)
            )),
            atomic::Damage::Changed {
                target,
                original: None,
            } => Some(format!(
                "- {} was created by the patch (it did not exist before)",
                show(target)
            )),
            atomic::Damage::Missing { target, original } => Some(format!(
                "- {} is missing; its previous version is in {} (rename it back to restore \
                 it)",
                show(target),
                show(original)
            )),
            atomic::Damage::Leftover { .. } => None,
        })
        .collect();
    let leftovers: Vec<String> = failure
        .damage
        .iter()
        .filter_map(|damage| match damage {
            atomic::Damage::Leftover { path } => Some(format!(
                "- {} is a leftover helper file (safe to remove)",
                show(path)
            )),
            _ => None,
        })
        .collect();
    if damaged.is_empty() {
        let mut message = format!("{NOTHING_CHANGED}\n{cause}");
        if !leftovers.is_empty() {
            message.push_str("\nThese could not be removed:\n");
            message.push_str(&leftovers.join("\n"));
        }
        return message;
    }
    format!(
        "Patch partly applied: {cause}, and undoing the files already changed failed too. \
         Now:\n{}\nEvery other file of the patch is as it was before.",
        damaged
            .into_iter()
            .chain(leftovers)
            .collect::<Vec<_>>()
            .join("\n")
    )
}

/// Removes the parents of a deleted file while they are empty, stopping at `root` and never
/// leaving it: a move or a deletion does not leave an empty directory behind (as git does).
/// Returns the directories removed.
fn remove_empty_parents(path: &Path, root: &Path) -> Vec<PathBuf> {
    let mut removed = Vec::new();
    let mut current = path.parent();
    while let Some(dir) = current {
        if dir == root || !dir.starts_with(root) {
            break;
        }
        // Fails (and stops) when the directory is not empty.
        if std::fs::remove_dir(dir).is_err() {
            break;
        }
        removed.push(dir.to_path_buf());
        current = dir.parent();
    }
    removed
}

/// The paths whose content no output of this patch may show (`secrets`): every file the
/// caller may not read, and both ends of a move whose content comes from such a file.
fn hidden_paths(ctx: &CallContext, targets: &[Target]) -> Vec<PathBuf> {
    let secret = |p: &Path| crate::secrets::is_secret(ctx, p);
    let mut hidden = Vec::new();
    for target in targets {
        if secret(&target.path) || target.read.as_deref().is_some_and(secret) {
            hidden.push(target.path.clone());
            hidden.extend(target.read.iter().cloned());
            hidden.extend(target.dest.iter().cloned());
        } else if let Some(dest) = &target.dest
            && secret(dest)
        {
            hidden.push(dest.clone());
        }
    }
    hidden
}

/// A refusal that quotes a line of a hidden file (`PATH: hunk N of M (patch line L) does
/// not match the file: ... line K of the file is `...``) keeps only where it failed.
fn hide_mismatch(message: String, hidden: &[PathBuf], show: &dyn Fn(&Path) -> String) -> String {
    const MISMATCH: &str = " does not match the file";
    for path in hidden {
        if message.starts_with(&format!("{}: hunk ", show(path)))
            && let Some(at) = message.find(MISMATCH)
        {
            return format!(
                "{}. {}: the policy does not allow reading it.",
                &message[..at + MISMATCH.len()],
                crate::secrets::HIDDEN
            );
        }
    }
    message
}

/// The unified diff of every changed file (lossy for non-UTF-8 content); the content of a
/// `hidden` file is replaced by [`crate::secrets::HIDDEN`].
fn diff(ctx: &CallContext, plan: &Plan, hidden: &[PathBuf]) -> String {
    let mut out = String::new();
    for (path, before) in &plan.before {
        let after = plan.after.get(path);
        if after == Some(before) {
            continue;
        }
        let text = |entry: Option<&Entry>| match entry {
            Some(Entry::File { bytes, .. }) => String::from_utf8_lossy(bytes).replace("\r\n", "\n"),
            _ => String::new(),
        };
        let (old, new) = (text(Some(before)), text(after));
        let shown = ctx.display(path);
        let old_name = if matches!(before, Entry::File { .. }) {
            format!("a/{shown}")
        } else {
            "/dev/null".to_string()
        };
        let new_name = if matches!(after, Some(Entry::File { .. })) {
            format!("b/{shown}")
        } else {
            "/dev/null".to_string()
        };
        if hidden.contains(path) {
            out.push_str(&crate::secrets::hidden_diff(&old_name, &new_name));
            continue;
        }
        out.push_str(&crate::textdoc::unified_diff(
            &old, &new, &old_name, &new_name,
        ));
    }
    out
}

/// Every call may change files: its checkpoint names them (as the patch writes them; the
/// tool's name for a patch that does not parse) and covers them (the call's `edit`
/// accesses).
fn checkpoint(_: &Session, args: &Map<String, Value>) -> Option<crate::tool::Checkpoint> {
    let text = args
        .get("patch")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let names: Vec<String> = parse::parse(text)
        .map(|patch| {
            patch
                .ops
                .iter()
                .flat_map(|op| op.paths().into_iter().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    Some(crate::tool::Checkpoint {
        shown: if names.is_empty() {
            "apply_patch".to_string()
        } else {
            names.join(", ")
        },
        covers: crate::tool::Covers::EditedFiles,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::Session;

    fn accesses(session: &Session, patch: &str) -> Vec<(String, String)> {
        let ctx = CallContext::new(session, "apply_patch");
        let args = json!({ "patch": patch });
        access(&ctx, args.as_object().unwrap())
            .into_iter()
            .map(|a| (a.permission, a.pattern))
            .collect()
    }

    #[test]
    fn every_touched_path_is_an_edit_access() {
        let tmp = tempfile::tempdir().unwrap();
        let session = Session::new("s", tmp.path());
        let patch = "*** Begin Patch\n*** Add File: a.txt\n+x\n*** Delete File: b/c.txt\n\
                     *** Update File: src/old.rs\n*** Move to: src/new.rs\n@@\n-x\n+y\n\
                     *** Update File: ./a.txt\n@@\n-x\n+z\n*** End Patch\n";
        let got = accesses(&session, patch);
        let edit = |p: &str| ("edit".to_string(), p.to_string());
        let read = |p: &str| ("read".to_string(), p.to_string());
        assert_eq!(
            got,
            vec![
                edit("a.txt"),
                edit("b/c.txt"),
                edit("src/old.rs"),
                read("src/old.rs"),
                edit("src/new.rs")
            ]
        );
        let diff = "--- a/Cargo.lock\n+++ b/Cargo.lock\n@@ -1 +1 @@\n-a\n+b\n\
                    --- /dev/null\n+++ b/new.md\n@@ -0,0 +1 @@\n+hi\n";
        assert_eq!(
            accesses(&session, diff),
            vec![edit("Cargo.lock"), edit("new.md")]
        );
        let outside = accesses(
            &session,
            "--- /etc/hosts\n+++ /etc/hosts\n@@ -1 +1 @@\n-a\n+b\n",
        );
        assert_eq!(outside, vec![edit("/etc/hosts")]);
    }

    #[test]
    fn symlinks_are_judged_where_the_patch_acts() {
        let tmp = tempfile::tempdir().unwrap();
        let session = Session::new("s", tmp.path());
        let outside = tempfile::tempdir().unwrap();
        let secret = std::fs::canonicalize(outside.path())
            .unwrap()
            .join("secret");
        std::fs::write(&secret, "x\n").unwrap();
        std::os::unix::fs::symlink(&secret, session.dir.join("out-link")).unwrap();
        let ctx = CallContext::new(&session, "apply_patch");
        let get = |patch: &str| {
            let args = json!({ "patch": format!("*** Begin Patch\n{patch}*** End Patch\n") });
            access(&ctx, args.as_object().unwrap())
                .into_iter()
                .map(|a| (a.permission, a.pattern, a.reason.is_some()))
                .collect::<Vec<_>>()
        };
        let at = |permission: &str, pattern: &str, reason: bool| {
            (permission.to_string(), pattern.to_string(), reason)
        };
        let secret = secret.display().to_string();
        // Deleting the link changes only the directory it is in.
        assert_eq!(
            get("*** Delete File: out-link\n"),
            vec![at("edit", "out-link", true)]
        );
        // Writing through it changes the file it points to.
        assert_eq!(
            get("*** Update File: out-link\n@@\n-x\n+y\n"),
            vec![at("edit", &secret, false)]
        );
        assert_eq!(
            get("*** Add File: out-link\n+y\n"),
            vec![at("edit", &secret, false)]
        );
        // A move removes the link and reads what it points to.
        assert_eq!(
            get("*** Update File: out-link\n*** Move to: copy\n"),
            vec![
                at("edit", "out-link", true),
                at("read", &secret, true),
                at("edit", "copy", false)
            ]
        );
        // After the patch deleted the link, its name is a plain path.
        assert_eq!(
            get("*** Delete File: out-link\n*** Add File: out-link\n+y\n"),
            vec![at("edit", "out-link", true)]
        );
    }

    #[test]
    fn a_failed_commit_says_what_is_where() {
        let show = |p: &Path| p.display().to_string();
        let failure = |damage| atomic::Failure {
            action: atomic::Action::Delete,
            target: PathBuf::from("imm/d.txt"),
            error: std::io::Error::from_raw_os_error(libc::EPERM),
            damage,
        };
        assert_eq!(
            failed(&failure(Vec::new()), &show),
            "Patch not applied; no file was changed.\n\
             Cannot delete imm/d.txt: Operation not permitted (os error 1)"
        );
        let leftover = atomic::Damage::Leftover {
            path: PathBuf::from(".a.txt.1-0.tinytool.old"),
        };
        assert_eq!(
            failed(&failure(vec![leftover]), &show),
            "Patch not applied; no file was changed.\n\
             Cannot delete imm/d.txt: Operation not permitted (os error 1)\n\
             These could not be removed:\n\
             - .a.txt.1-0.tinytool.old is a leftover helper file (safe to remove)"
        );
        let damage = vec![
            atomic::Damage::Changed {
                target: PathBuf::from("a.txt"),
                original: Some(PathBuf::from(".a.txt.1-0.tinytool.old")),
            },
            atomic::Damage::Changed {
                target: PathBuf::from("n.txt"),
                original: None,
            },
            atomic::Damage::Missing {
                target: PathBuf::from("gone.txt"),
                original: PathBuf::from(".gone.txt.1-1.tinytool.old"),
            },
        ];
        assert_eq!(
            failed(&failure(damage), &show),
            "Patch partly applied: Cannot delete imm/d.txt: Operation not permitted (os error \
             1), and undoing the files already changed failed too. Now:\n\
             - a.txt has the patched content; its previous version is in \
             .a.txt.1-0.tinytool.old (rename it back to restore it)\n\
             - n.txt was created by the patch (it did not exist before)\n\
             - gone.txt is missing; its previous version is in .gone.txt.1-1.tinytool.old \
             (rename it back to restore it)\n\
             Every other file of the patch is as it was before."
        );
    }

    #[test]
    fn an_unparsable_patch_needs_only_the_tool_access() {
        let tmp = tempfile::tempdir().unwrap();
        let session = Session::new("s", tmp.path());
        assert_eq!(
            accesses(&session, "this is not a patch"),
            vec![("edit".to_string(), "apply_patch".to_string())]
        );
    }
}
