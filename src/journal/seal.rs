//! Seals that bind a journal record to the user who wrote it.
//!
//! Recovery renames and removes the files a record names, so a record must come from a
//! tinytool of this user, never from a repository (which can commit files into
//! `.tinytool/journal/`) or from a command that wrote one. A record therefore carries a
//! keyed SipHash-2-4 of its body, with a 128-bit key kept where neither can supply it: the
//! user's state directory ([`crate::approvals::user_state_dir`]), file `journal.key`
//! (16 random bytes, mode 0600, created on first use, refused when it is a link, not the
//! user's, or open to others).
//!
//! Grammar: `seal = 16 lowercase hex digits`. Without a state directory (no `HOME`) there
//! is no key: records are written without a seal and are never recovered (left in place,
//! with a note).

use std::hash::Hasher;
use std::io::{Read, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::PathBuf;

/// Bytes of the key.
const KEY_BYTES: usize = 16;

/// Where the user's journal key is (commands must not read it: with it they could seal
/// journal records).
fn key_path() -> Option<PathBuf> {
    Some(crate::approvals::user_state_dir()?.join("journal.key"))
}

/// The user's key file, created when missing (so that a sandbox made now can cover it
/// before any command could read a key made later); `None` when there is none.
pub fn ensure_key() -> Option<PathBuf> {
    key()?;
    key_path()
}

/// The user's key, created when missing; `None` when there is no state directory or the
/// key file cannot be trusted.
fn key() -> Option<[u8; KEY_BYTES]> {
    let path = key_path()?;
    if let Some(parent) = path.parent() {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(parent)
            .ok()?;
    }
    let created = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(&path);
    if let Ok(mut file) = created {
        let mut key = [0u8; KEY_BYTES];
        // SAFETY: `key` is a writable buffer of KEY_BYTES bytes.
        let got = unsafe { libc::getrandom(key.as_mut_ptr().cast(), KEY_BYTES, 0) };
        if got != KEY_BYTES as isize || file.write_all(&key).and(file.sync_all()).is_err() {
            let _ = std::fs::remove_file(&path);
            return None;
        }
        return Some(key);
    }
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(&path)
        .ok()?;
    let meta = file.metadata().ok()?;
    // SAFETY: geteuid cannot fail.
    let me = unsafe { libc::geteuid() };
    if !meta.is_file() || meta.uid() != me || meta.mode() & 0o077 != 0 {
        return None;
    }
    let mut key = [0u8; KEY_BYTES];
    file.read_exact(&mut key).ok()?;
    Some(key)
}

fn mac(key: &[u8; KEY_BYTES], body: &str) -> String {
    let (k0, k1) = key.split_at(8);
    let word = |b: &[u8]| u64::from_le_bytes(b.try_into().unwrap_or_default());
    // SipHash-2-4 under a secret key is a MAC for short messages, which is its purpose.
    #[allow(deprecated)]
    let mut hasher = std::hash::SipHasher::new_with_keys(word(k0), word(k1));
    hasher.write(body.as_bytes());
    format!("{:016x}", hasher.finish())
}

/// The seal of `body` for this user, `None` without a usable key.
pub fn seal(body: &str) -> Option<String> {
    key().map(|k| mac(&k, body))
}

/// Whether `seal` is this user's seal of `body`.
pub fn verify(body: &str, seal: &str) -> bool {
    match key() {
        Some(k) => {
            let expected = mac(&k, body);
            // Not secret-dependent timing worth guarding: a wrong seal only ever leaves a
            // record in place.
            expected == seal
        }
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_seal_depends_on_the_key_and_the_body() {
        let a = mac(&[1; KEY_BYTES], "body");
        assert_eq!(a.len(), 16);
        assert_eq!(a, mac(&[1; KEY_BYTES], "body"));
        assert_ne!(a, mac(&[2; KEY_BYTES], "body"));
        assert_ne!(a, mac(&[1; KEY_BYTES], "bodY"));
    }
}
