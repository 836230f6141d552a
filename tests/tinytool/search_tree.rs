//! The fixture tree the grep and glob tests share: every file has an explicit
//! modification time, so newest-first order is fixed without sleeping.

use std::time::{Duration, SystemTime};

use crate::util::Room;

/// Writes `rel` with `content` and sets its modification time to `secs` after the epoch.
pub fn put(room: &Room, rel: &str, content: impl AsRef<[u8]>, secs: u64) {
    let path = room.write(rel, content);
    std::fs::File::options()
        .write(true)
        .open(&path)
        .unwrap()
        .set_modified(SystemTime::UNIX_EPOCH + Duration::from_secs(secs))
        .unwrap();
}

/// A small project: sources at several depths, a file over 1 MB, a binary file, and one of
/// each skip directory, each holding a match. (`.env` files are left to the unit tests,
/// which decide the policy's answer themselves.)
pub fn project() -> Room {
    let room = Room::new();
    put(
        &room,
        "src/main.rs",
        "fn main() {\n    let needle = 1;\n}\n",
        300,
    );
    put(
        &room,
        "src/lib.rs",
        "pub fn needle() {}\n// a needle again\n",
        200,
    );
    put(&room, "src/deep/er/mod.rs", "needle, deep down\n", 100);
    put(
        &room,
        "docs/guide.md",
        "find the needle in the docs\r\n",
        250,
    );
    put(&room, "Cargo.toml", "name = \"needle\"\n", 150);
    put(&room, "notes.txt", "nothing to see\n", 350);
    let mut big = "x".repeat(1024 * 1024);
    big.push_str("\nneedle\n");
    put(&room, "big.log", big, 500);
    put(&room, "blob.bin", b"needle\0\x01\x02", 400);
    put(&room, ".hidden.txt", "TOKEN=needle\n", 450);
    for skip in [".git", "node_modules", "vendor", ".tinycode", ".tinytool"] {
        put(&room, &format!("{skip}/inner/needle.rs"), "needle\n", 900);
    }
    put(&room, "src/node_modules/pkg/index.js", "needle\n", 900);
    room
}
