//! File tools under a racing symlink swap: while another thread keeps swapping a
//! directory inside the project for a symlink to a directory outside and back, write, edit
//! and apply_patch never create, change or remove anything outside. A call either works on
//! the real directory, is refused by the policy (it resolved to the outside path: an
//! `external_directory` access, asked and so refused here), or fails because the tree
//! changed under it.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use serde_json::json;

use crate::util::Room;

/// Calls of each tool.
const CALLS: usize = 70;

/// Every file under `dir` with its content, sorted.
fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out: Vec<(PathBuf, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let path = e.unwrap().path();
            let bytes = std::fs::read(&path).unwrap_or_default();
            (path, bytes)
        })
        .collect();
    out.sort();
    out
}

#[test]
fn a_directory_swapped_for_a_symlink_never_carries_a_change_outside() {
    let room = Room::new();
    let outside = room.dir.parent().unwrap().join("outside");
    std::fs::create_dir(&outside).unwrap();
    for dir in [room.path("d"), outside.clone()] {
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("f.txt"), "inside\n").unwrap();
        for i in 0..CALLS {
            std::fs::write(dir.join(format!("del{i}.txt")), "bait\n").unwrap();
        }
    }
    let before = snapshot(&outside);

    let stop = Arc::new(AtomicBool::new(false));
    let swaps = Arc::new(AtomicUsize::new(0));
    let swapper = {
        let (stop, swaps) = (stop.clone(), swaps.clone());
        let (d, aside, outside) = (room.path("d"), room.path("d.real"), outside.clone());
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                if std::fs::rename(&d, &aside).is_ok() {
                    let _ = std::os::unix::fs::symlink(&outside, &d);
                    std::thread::yield_now();
                    let _ = std::fs::remove_file(&d);
                    // A call may have created `d` meanwhile: then keep the real one aside.
                    let _ = std::fs::rename(&aside, &d);
                    swaps.fetch_add(1, Ordering::Relaxed);
                }
                // The real directory stays in place a moment between swaps: on two busy
                // cores a swapper that never pauses can win every call's race, and the
                // test must also see calls that work.
                std::thread::sleep(std::time::Duration::from_micros(300));
            }
        })
    };

    let mut input = String::new();
    for i in 0..CALLS {
        let calls = [
            json!({"name": "write", "arguments": {"file_path": format!("d/w{i}.txt"), "content": "new\n"}}),
            json!({"name": "edit", "arguments": {"file_path": "d/f.txt", "old_string": "inside", "new_string": "inside+"}}),
            json!({"name": "apply_patch", "arguments": {"patch": format!(
                "*** Begin Patch\n*** Add File: d/p{i}.txt\n+x\n*** Delete File: d/del{i}.txt\n*** End Patch\n"
            )}}),
        ];
        for call in calls {
            input.push_str(&call.to_string());
            input.push('\n');
        }
    }
    let run = room.run(&["exec", "--jsonl"], Some(&input));
    stop.store(true, Ordering::Relaxed);
    swapper.join().unwrap();
    let _ = std::fs::remove_file(room.path("d"));
    let _ = std::fs::rename(room.path("d.real"), room.path("d"));

    let lines = run.lines();
    assert_eq!(lines.len(), 3 * CALLS, "{run:?}");
    assert!(swaps.load(Ordering::Relaxed) > 0);
    // Nothing outside was created, changed or removed.
    assert_eq!(snapshot(&outside), before);
    // The calls did run: some of them worked on the real directory.
    let worked = lines.iter().filter(|l| l["is_error"] == false).count();
    assert!(worked > 0, "{run:?}");
}

/// apply_patch `Delete File` of files that a racing thread turns into directories: a
/// directory is never moved aside or removed, a call that meets one says so,
/// and no hidden helper is left behind.
#[test]
fn a_delete_never_moves_a_directory_swapped_in() {
    let room = Room::new();
    for i in 0..CALLS {
        room.write(&format!("x{i}"), "bye\n");
    }
    let stop = Arc::new(AtomicBool::new(false));
    let swapper = {
        let (stop, dir) = (stop.clone(), room.dir.clone());
        std::thread::spawn(move || {
            let mut i = 0;
            while !stop.load(Ordering::Relaxed) {
                let path = dir.join(format!("x{}", i % CALLS));
                if std::fs::remove_file(&path).is_ok() && std::fs::create_dir(&path).is_ok() {
                    let _ = std::fs::write(path.join("inner"), "keep\n");
                }
                i += 1;
                std::thread::yield_now();
            }
        })
    };
    let mut input = String::new();
    for i in 0..CALLS {
        let patch = format!("*** Begin Patch\n*** Delete File: x{i}\n*** End Patch\n");
        input.push_str(&json!({"name": "apply_patch", "arguments": {"patch": patch}}).to_string());
        input.push('\n');
    }
    let run = room.run(&["exec", "--jsonl"], Some(&input));
    stop.store(true, Ordering::Relaxed);
    swapper.join().unwrap();
    let lines = run.lines();
    assert_eq!(lines.len(), CALLS, "{run:?}");
    for line in &lines {
        let out = line["output"].as_str().unwrap();
        if line["is_error"] == true {
            assert!(out.contains("directory"), "{out}");
        }
    }
    for i in 0..CALLS {
        let path = room.path(&format!("x{i}"));
        if path.is_dir() {
            // Maybe made after the call; never emptied, moved or removed.
            let inner = std::fs::read_to_string(path.join("inner")).unwrap_or_default();
            assert!(inner.is_empty() || inner == "keep\n", "x{i}: {inner:?}");
        }
    }
    let hidden: Vec<_> = std::fs::read_dir(&room.dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".x"))
        .collect();
    assert_eq!(hidden, Vec::<String>::new());
}
