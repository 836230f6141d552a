//! Is a file binary? One answer for `read` and `grep`.
//!
//! Both tools look at the first [`CHECK_SIZE`] bytes of a file (the window):
//!
//! 1. A window that starts with a known binary signature is binary whatever its bytes score:
//!    compressed data and archives (gzip, zip and what is built on it — jar, docx, xlsx,
//!    apk —, xz, zstd, bzip2, 7z, tar, ar), executables and bytecode (ELF, Mach-O, PE, wasm,
//!    Java class), SQLite databases, PDF (read does not render PDF) and the image formats
//!    read only shows by extension (PNG, JPEG, GIF). A gzip file can score as text for its
//!    first few kilobytes, which is why the score alone is not enough.
//! 2. Otherwise a score decides: a NUL byte counts 10, the control bytes 0x01–0x07
//!    and 0x0E–0x1F except ESC count 1, and — beyond the usual score — every byte of an invalid
//!    UTF-8 sequence counts 1. The window is binary when the score is more than
//!    [`THRESHOLD`] of its length. A UTF-8 sequence cut by the window's end is not invalid
//!    (the next byte, outside the window, may complete it).
//!
//! So random bytes (about half of them in invalid sequences) are binary, while a Latin-1
//! file with a few accented letters (one invalid byte each) stays text; read then shows it
//! with the invalid bytes replaced and says so with `metadata.lossy`.

/// Bytes of a file's start that decide whether it is binary.
pub const CHECK_SIZE: usize = 8_192;

/// Share of non-text bytes in the window above which a file is binary.
const THRESHOLD: f64 = 0.30;

/// The kind of binary content a window holds, or `None` for text.
///
/// The kind is a signature's format name (`"gzip"`, `"zip"`, …) or `"data"` when the score
/// decided. Only the first [`CHECK_SIZE`] bytes of `bytes` are looked at.
pub fn detect(bytes: &[u8]) -> Option<&'static str> {
    let window = &bytes[..bytes.len().min(CHECK_SIZE)];
    if let Some(kind) = signature(window) {
        return Some(kind);
    }
    if window.is_empty() {
        return None;
    }
    (score(window) as f64 / window.len() as f64 > THRESHOLD).then_some("data")
}

/// Whether `bytes` (a file's start) is binary; see the module documentation.
pub fn is_binary(bytes: &[u8]) -> bool {
    detect(bytes).is_some()
}

/// The format whose magic number `window` starts with, if it is a binary one.
pub fn signature(window: &[u8]) -> Option<&'static str> {
    // (magic, format) — each magic is long or unusual enough that no text file starts so.
    const MAGIC: &[(&[u8], &str)] = &[
        (&[0x1F, 0x8B], "gzip"),
        (b"PK\x03\x04", "zip"),
        (b"PK\x05\x06", "zip"),
        (b"PK\x07\x08", "zip"),
        (&[0xFD, b'7', b'z', b'X', b'Z', 0x00], "xz"),
        (&[0x28, 0xB5, 0x2F, 0xFD], "zstd"),
        (&[b'7', b'z', 0xBC, 0xAF, 0x27, 0x1C], "7z"),
        (b"!<arch>\n", "ar archive"),
        (b"\x7FELF", "ELF"),
        (&[0xFE, 0xED, 0xFA, 0xCE], "Mach-O"),
        (&[0xFE, 0xED, 0xFA, 0xCF], "Mach-O"),
        (&[0xCE, 0xFA, 0xED, 0xFE], "Mach-O"),
        (&[0xCF, 0xFA, 0xED, 0xFE], "Mach-O"),
        // Java class files and universal Mach-O binaries share this magic.
        (&[0xCA, 0xFE, 0xBA, 0xBE], "Java class or Mach-O"),
        (b"\0asm", "wasm"),
        (b"SQLite format 3\0", "SQLite"),
        (b"%PDF-", "PDF"),
        (b"\x89PNG\r\n\x1A\n", "PNG"),
        (&[0xFF, 0xD8, 0xFF], "JPEG"),
        (b"GIF87a", "GIF"),
        (b"GIF89a", "GIF"),
    ];
    if let Some((_, kind)) = MAGIC.iter().find(|(magic, _)| window.starts_with(magic)) {
        return Some(kind);
    }
    // bzip2: "BZh", a block size digit, then the magic of a block or of the end of stream;
    // "BZh" alone could start a line of text.
    if let [b'B', b'Z', b'h', b'1'..=b'9', rest @ ..] = window
        && (rest.starts_with(&[0x31, 0x41, 0x59, 0x26, 0x53, 0x59])
            || rest.starts_with(&[0x17, 0x72, 0x45, 0x38, 0x50, 0x90]))
    {
        return Some("bzip2");
    }
    // PE and DOS executables start with "MZ" and a binary header of 64 bytes.
    if window.starts_with(b"MZ") && window.len() >= 64 && window[2..64].contains(&0) {
        return Some("PE");
    }
    // tar: "ustar" at offset 257 of the first header block.
    if window.get(257..262) == Some(b"ustar") {
        return Some("tar");
    }
    None
}

/// The window's non-text score: NUL 10, the control bytes 0x01–0x07 and 0x0E–0x1F but ESC
/// 1 (backspace, tab, line and page breaks are text), and 1 per byte of an invalid UTF-8
/// sequence.
fn score(window: &[u8]) -> usize {
    let control: usize = window
        .iter()
        .map(|&b| match b {
            0x00 => 10,
            0x01..=0x07 => 1,
            0x0E..=0x1F if b != 0x1B => 1,
            _ => 0,
        })
        .sum();
    control + invalid_utf8_bytes(window)
}

/// Bytes of `window` that belong to invalid UTF-8 sequences; an incomplete sequence at the
/// very end is not counted (the window may have cut it).
fn invalid_utf8_bytes(window: &[u8]) -> usize {
    let mut invalid = 0;
    let mut rest = window;
    while let Err(err) = std::str::from_utf8(rest) {
        match err.error_len() {
            Some(len) => {
                invalid += len;
                rest = &rest[err.valid_up_to() + len..];
            }
            None => break,
        }
    }
    invalid
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_spec_score_still_decides_for_plain_windows() {
        assert!(!is_binary(b""));
        assert!(!is_binary(b"hello world\nthis is text"));
        assert!(is_binary(&[0u8; 10]));
        let mostly_ctrl: Vec<u8> = (0..100).map(|i| if i < 40 { 0x01 } else { b'a' }).collect();
        assert!(is_binary(&mostly_ctrl));
        let few_ctrl: Vec<u8> = (0..100).map(|i| if i < 10 { 0x01 } else { b'a' }).collect();
        assert!(!is_binary(&few_ctrl));
        assert!(!is_binary("日本語テスト hello world".as_bytes()));
        assert!(!is_binary(b"\x1b[31mred\x1b[0m\n"));
    }

    #[test]
    fn signatures_are_binary_whatever_follows() {
        let cases: &[(&[u8], &str)] = &[
            (b"\x1f\x8b\x08\x00rest of a gzip stream", "gzip"),
            (b"PK\x03\x04mimetypeapplication/epub", "zip"),
            (b"\xfd7zXZ\x00\x00", "xz"),
            (b"\x28\xb5\x2f\xfdtext after", "zstd"),
            (b"BZh91AY&SYtext", "bzip2"),
            (b"7z\xbc\xaf\x27\x1c", "7z"),
            (b"\x7fELF\x02\x01\x01", "ELF"),
            (b"\xcf\xfa\xed\xfe", "Mach-O"),
            (b"\xca\xfe\xba\xbe\x00\x00\x00\x41", "Java class or Mach-O"),
            (b"\0asm\x01\0\0\0", "wasm"),
            (b"SQLite format 3\0", "SQLite"),
            (b"%PDF-1.7\n%text-looking header\n", "PDF"),
        ];
        for (bytes, kind) in cases {
            assert_eq!(detect(bytes), Some(*kind), "{bytes:?}");
        }
        let mut pe = b"MZ\x90\x00".to_vec();
        pe.resize(128, 0);
        assert_eq!(detect(&pe), Some("PE"));
    }

    #[test]
    fn text_that_looks_like_a_magic_prefix_is_text() {
        assert_eq!(detect(b"BZh is how bzip2 starts\n"), None);
        assert_eq!(detect(b"MZ is a prefix, but this is a README\n"), None);
        assert_eq!(detect(b"PK stands for primary key\n"), None);
        assert_eq!(detect(b"%PD is not a PDF\n"), None);
    }

    #[test]
    fn invalid_utf8_counts_as_non_text() {
        // Latin-1 with a few accents: a handful of invalid bytes, still text.
        let latin1: &[u8] = b"caf\xe9 cr\xe8me br\xfbl\xe9e, d\xe9j\xe0 vu\nplain ascii line\n";
        assert_eq!(invalid_utf8_bytes(latin1), 6);
        assert!(!is_binary(latin1));
        // Mostly invalid sequences: binary though no control byte occurs.
        let high: Vec<u8> = (0..1000).map(|i| 0x80 + (i % 0x40) as u8).collect();
        assert!(is_binary(&high));
    }

    #[test]
    fn a_sequence_cut_by_the_window_end_is_not_invalid() {
        // "é" is C3 A9; the window ends after C3.
        assert_eq!(invalid_utf8_bytes(b"abc\xc3"), 0);
        assert_eq!(invalid_utf8_bytes(b"abc\xe6\x97"), 0);
        // A cut sequence in the middle is invalid.
        assert_eq!(invalid_utf8_bytes(b"abc\xc3 def"), 1);
        // Only the first CHECK_SIZE bytes are looked at, so a window that ends mid-character
        // is judged on what it holds.
        let mut text = "é".repeat(CHECK_SIZE / 2).into_bytes();
        text.insert(0, b'a');
        assert!(!is_binary(&text));
    }

    #[test]
    fn pseudo_random_bytes_are_binary() {
        // A xorshift stream: no signature, few NULs, but about half its bytes are invalid UTF-8.
        let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
        let bytes: Vec<u8> = (0..CHECK_SIZE)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                (state >> 24) as u8
            })
            .collect();
        assert!(is_binary(&bytes));
    }
}
