//! Property tests of checkpoints and undo against a model of the tree: random sequences
//! of commands (files written, removed, folders removed, in nested shapes), undos, redos
//! and pauses (every saved listing made settled, as if the racy-stamp margin had passed),
//! and after every step the files on disk are the model's. Every undo must restore and be
//! recorded; every redo must work without a conflict.

use std::collections::BTreeMap;
use std::path::Path;

use proptest::prelude::*;

use super::record::{self, Began, Scope};
use super::undo::{self, Outcome};
use crate::session::Session;

/// The files a sequence may touch: nested, sharing folders, none a folder of another.
const FILES: &[&str] = &["f", "a/g", "a/b/f", "a/b/d/e", "x/y/z", "x/w"];
/// The folders they live in.
const DIRS: &[&str] = &["a", "a/b", "a/b/d", "x", "x/y"];

#[derive(Debug, Clone)]
enum Step {
    /// A command writes `FILES[file]` (creating its folders) with this content.
    Write(usize, u8),
    /// A command removes `FILES[file]`.
    Remove(usize),
    /// A command removes the folder `DIRS[dir]` and all in it.
    RemoveDir(usize),
    /// `undo` of the newest call not undone.
    Undo,
    /// `undo` of the newest undo (a redo).
    Redo,
    /// `undo` of the newest redo (the call is undone again).
    UndoRedo,
    /// Time passes: every saved listing is settled.
    Pause,
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        3 => (0..FILES.len(), 0u8..3).prop_map(|(f, c)| Step::Write(f, c)),
        1 => (0..FILES.len()).prop_map(Step::Remove),
        1 => (0..DIRS.len()).prop_map(Step::RemoveDir),
        2 => Just(Step::Undo),
        1 => Just(Step::Redo),
        1 => Just(Step::UndoRedo),
        1 => Just(Step::Pause),
    ]
}

type Files = BTreeMap<String, String>;

/// Every file under `root` but tinytool's own folder, with its content.
fn on_disk(root: &Path) -> Files {
    fn visit(root: &Path, rel: &str, out: &mut Files) {
        let Ok(entries) = std::fs::read_dir(root.join(rel)) else {
            return;
        };
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let child = if rel.is_empty() {
                name.clone()
            } else {
                format!("{rel}/{name}")
            };
            if child == ".tinytool" {
                continue;
            }
            if entry.file_type().unwrap().is_dir() {
                visit(root, &child, out);
            } else {
                out.insert(
                    child.clone(),
                    std::fs::read_to_string(root.join(&child)).unwrap(),
                );
            }
        }
    }
    let mut out = Files::new();
    visit(root, "", &mut out);
    out
}

/// Every listing of the saved walk cache as if taken long after its directory changed.
fn pause(root: &Path) {
    let file = crate::project::tinytool_dir(root)
        .join("checkpoints")
        .join(crate::tree::listing::FILE);
    let mut cache = crate::tree::listing::load(&file);
    for listing in cache.dirs.values_mut() {
        listing.listed_ns = crate::tree::listing::now_ns() + 10 * crate::tree::listing::RACY_NS;
    }
    crate::tree::listing::save(root, &cache);
}

/// Runs one command-like change inside a checkpoint of the project; its checkpoint id
/// when it changed something.
fn command(session: &Session, change: impl FnOnce(&Path)) -> Option<i64> {
    let Began::Open(open) = record::begin(session, "bash", None, "change", &Scope::Project) else {
        panic!("no checkpoint opened");
    };
    change(&session.dir);
    let value = record::finish(session, open)?;
    Some(value["id"].as_i64().unwrap_or_else(|| panic!("{value}")))
}

fn run(steps: Vec<Step>) -> Result<(), TestCaseError> {
    let dir = tempfile::tempdir().unwrap();
    let session = Session::new("s", dir.path());
    let root = session.dir.clone();
    // Calls not undone, newest last: (checkpoint, files before, files after).
    let mut applied: Vec<(i64, Files, Files)> = Vec::new();
    // Undos that can be redone, newest last: (undo checkpoint, the call).
    let mut undone: Vec<(i64, (i64, Files, Files))> = Vec::new();
    // Redos that can be undone, newest last: (redo checkpoint, the call).
    let mut redone: Vec<(i64, (i64, Files, Files))> = Vec::new();
    for (i, step) in steps.into_iter().enumerate() {
        let before = on_disk(&root);
        match step {
            Step::Write(f, c) => {
                let id = command(&session, |root| {
                    let path = root.join(FILES[f]);
                    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
                    std::fs::write(path, format!("content {c}\n")).unwrap();
                });
                record_call(&root, id, before, &mut applied, &mut undone, &mut redone)?;
            }
            Step::Remove(f) => {
                let id = command(&session, |root| {
                    let _ = std::fs::remove_file(root.join(FILES[f]));
                });
                record_call(&root, id, before, &mut applied, &mut undone, &mut redone)?;
            }
            Step::RemoveDir(d) => {
                let id = command(&session, |root| {
                    let _ = std::fs::remove_dir_all(root.join(DIRS[d]));
                });
                record_call(&root, id, before, &mut applied, &mut undone, &mut redone)?;
            }
            Step::Undo => {
                let Some(call) = applied.pop() else { continue };
                let outcome = undo::undo(&session, None, false).unwrap();
                let Outcome::Done(plan, Some(undo_id)) = outcome else {
                    return Err(TestCaseError::fail(format!(
                        "step {i}: undo of {} was not recorded: {outcome:?}",
                        call.0
                    )));
                };
                prop_assert_eq!(plan.target.id, call.0, "step {}", i);
                prop_assert_eq!(&on_disk(&root), &call.1, "step {}: after undo", i);
                undone.push((undo_id, call));
            }
            Step::Redo => {
                let Some((undo_id, call)) = undone.pop() else {
                    continue;
                };
                let outcome = undo::undo(&session, Some(undo_id), false).unwrap();
                let Outcome::Done(_, Some(redo_id)) = outcome else {
                    return Err(TestCaseError::fail(format!(
                        "step {i}: redo of {undo_id} was refused or not recorded: {outcome:?}"
                    )));
                };
                prop_assert_eq!(&on_disk(&root), &call.2, "step {}: after redo", i);
                redone.push((redo_id, call.clone()));
                applied.push(call);
            }
            Step::UndoRedo => {
                let Some((redo_id, call)) = redone.pop() else {
                    continue;
                };
                // Only the newest redo of the newest call can be undone without a conflict.
                if applied.last().map(|c| c.0) != Some(call.0) {
                    continue;
                }
                applied.pop();
                let outcome = undo::undo(&session, Some(redo_id), false).unwrap();
                let Outcome::Done(_, Some(again)) = outcome else {
                    return Err(TestCaseError::fail(format!(
                        "step {i}: undo of redo {redo_id} was refused or not recorded: {outcome:?}"
                    )));
                };
                prop_assert_eq!(
                    &on_disk(&root),
                    &call.1,
                    "step {}: after undoing the redo",
                    i
                );
                undone.push((again, call));
            }
            Step::Pause => pause(&root),
        }
    }
    Ok(())
}

/// Checks a command's checkpoint against the model: one exactly when files changed; a new
/// call ends the redo chain (as in an editor).
fn record_call(
    root: &Path,
    id: Option<i64>,
    before: Files,
    applied: &mut Vec<(i64, Files, Files)>,
    undone: &mut Vec<(i64, (i64, Files, Files))>,
    redone: &mut Vec<(i64, (i64, Files, Files))>,
) -> Result<(), TestCaseError> {
    let after = on_disk(root);
    match id {
        Some(id) => {
            prop_assert_ne!(
                &before,
                &after,
                "checkpoint {} of a call that changed nothing",
                id
            );
            applied.push((id, before, after));
            undone.clear();
            redone.clear();
        }
        None => prop_assert_eq!(
            &before,
            &after,
            "a call that changed files left no checkpoint"
        ),
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn undo_and_redo_follow_the_model_in_every_shape(steps in prop::collection::vec(step(), 1..14)) {
        run(steps)?;
    }
}

#[test]
fn an_undone_redo_leaves_its_call_undone_for_the_next_undo() {
    run(vec![
        Step::Write(0, 1),
        Step::Write(1, 1),
        Step::Undo,
        Step::Redo,
        Step::UndoRedo,
        Step::Undo,
        Step::Redo,
    ])
    .unwrap();
}
