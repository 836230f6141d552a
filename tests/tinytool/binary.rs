//! Binary files: read refuses them with the word "binary", grep skips and
//! counts them, and a Latin-1 file stays readable lossily.
//!
//! The gzip and zip files hold 8 KB of *stored* (uncompressed) text, so their first 8,192
//! bytes score as text: only the signature can call them binary.

use serde_json::json;

use crate::util::Room;

/// About 8 KB of lines of text with a needle in them.
fn text() -> Vec<u8> {
    "a needle in a compressed haystack, line after line\n"
        .repeat(170)
        .into_bytes()
}

/// A valid gzip file holding `data` in one stored deflate block (at most 65,535 bytes).
fn gzip_stored(data: &[u8]) -> Vec<u8> {
    let len = u16::try_from(data.len()).unwrap();
    let mut out = vec![0x1F, 0x8B, 8, 0, 0, 0, 0, 0, 0, 3];
    out.push(1); // final block, stored
    out.extend_from_slice(&len.to_le_bytes());
    out.extend_from_slice(&(!len).to_le_bytes());
    out.extend_from_slice(data);
    out.extend_from_slice(&crc32fast::hash(data).to_le_bytes());
    out.extend_from_slice(&(data.len() as u32).to_le_bytes());
    out
}

/// A valid zip archive holding `data` stored (not compressed) as `a.txt`.
fn zip_stored(data: &[u8]) -> Vec<u8> {
    let name = b"a.txt";
    let crc = crc32fast::hash(data).to_le_bytes();
    let size = (data.len() as u32).to_le_bytes();
    let mut out = Vec::new();
    out.extend_from_slice(b"PK\x03\x04\x14\x00\x00\x00\x00\x00\x00\x00\x21\x00");
    out.extend_from_slice(&crc);
    out.extend_from_slice(&size);
    out.extend_from_slice(&size);
    out.extend_from_slice(&(name.len() as u16).to_le_bytes());
    out.extend_from_slice(&[0, 0]);
    out.extend_from_slice(name);
    out.extend_from_slice(data);
    let central = out.len() as u32;
    out.extend_from_slice(b"PK\x01\x02\x14\x03\x14\x00\x00\x00\x00\x00\x00\x00\x21\x00");
    out.extend_from_slice(&crc);
    out.extend_from_slice(&size);
    out.extend_from_slice(&size);
    out.extend_from_slice(&(name.len() as u16).to_le_bytes());
    out.extend_from_slice(&[0; 8]);
    out.extend_from_slice(&0x81A4_0000u32.to_le_bytes());
    out.extend_from_slice(&0u32.to_le_bytes());
    out.extend_from_slice(name);
    let central_len = out.len() as u32 - central;
    out.extend_from_slice(b"PK\x05\x06\x00\x00\x00\x00\x01\x00\x01\x00");
    out.extend_from_slice(&central_len.to_le_bytes());
    out.extend_from_slice(&central.to_le_bytes());
    out.extend_from_slice(&[0, 0]);
    out
}

/// 8 KB of xorshift bytes with every NUL replaced: only invalid UTF-8 makes them binary.
fn random_bytes() -> Vec<u8> {
    let mut state: u64 = 0x2545_F491_4F6C_DD1D;
    (0..8192)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            match (state >> 32) as u8 {
                0 => b'n',
                b => b,
            }
        })
        .collect()
}

fn binary_room() -> Room {
    let room = Room::new();
    room.write("logs.gz", gzip_stored(&text()));
    room.write("bundle.zip", zip_stored(&text()));
    room.write("noise.bin", random_bytes());
    room.write(
        "latin1.txt",
        b"caf\xe9 au lait, cr\xe8me br\xfbl\xe9e\nthe needle\n",
    );
    room
}

#[test]
fn read_refuses_gzip_zip_and_random_bytes_as_binary() {
    let room = binary_room();
    for (file, kind) in [
        ("logs.gz", "gzip, "),
        ("bundle.zip", "zip, "),
        ("noise.bin", ""),
    ] {
        let size = std::fs::metadata(room.path(file)).unwrap().len();
        let run = room.call("read", json!({"file_path": file}));
        assert_eq!(run.code, 1, "{file}: {run:?}");
        assert_eq!(
            run.output(),
            format!(
                "Binary file detected: {file} ({kind}{size} bytes). Cannot display binary \
                 content."
            )
        );
    }
}

#[test]
fn read_shows_latin1_lossily() {
    let room = binary_room();
    let run = room.call("read", json!({"file_path": "latin1.txt"}));
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        run.output(),
        "1\tcaf\u{FFFD} au lait, cr\u{FFFD}me br\u{FFFD}l\u{FFFD}e\n2\tthe needle\n"
    );
    assert_eq!(run.json()["metadata"]["lossy"], true);
}

#[test]
fn grep_skips_binary_files_and_counts_them() {
    let room = binary_room();
    let run = room.call("grep", json!({"pattern": "needle"}));
    assert_eq!(run.code, 0, "{run:?}");
    let out = run.output();
    assert!(out.starts_with("latin1.txt:2:the needle\n"), "{out}");
    assert!(
        !out.contains("logs.gz") && !out.contains("bundle.zip"),
        "{out}"
    );
    assert_eq!(run.json()["metadata"]["skipped_binary"], 3, "{out}");
    assert!(out.contains(", 3 binary,"), "{out}");
}

#[test]
fn a_big_file_named_in_path_is_judged_binary_by_its_start_too() {
    let room = Room::new();
    // Over the 1 MB walk limit, so grep streams it; no NUL anywhere, only the signature.
    let mut bytes = vec![0x28, 0xB5, 0x2F, 0xFD]; // zstd's magic: no NUL in it
    bytes.extend(b"a needle in a big haystack\n".repeat(50_000));
    room.write("big.zst", &bytes);
    let run = room.call("grep", json!({"pattern": "needle", "path": "big.zst"}));
    let result = run.json();
    assert_eq!(result["metadata"]["matches"], 0, "{result}");
    assert_eq!(result["metadata"]["skipped_binary"], 1, "{result}");
    room.write("big.txt", &bytes[4..]);
    let run = room.call("grep", json!({"pattern": "needle", "path": "big.txt"}));
    // The same text without the signature is searched (up to the default 500 matches).
    assert_eq!(run.json()["metadata"]["matches"], 500);
}
