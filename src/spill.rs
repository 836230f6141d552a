//! Spill files: the whole output of a previewed result, kept under
//! `<dir>/.tinytool/outputs/` so that nothing a preview leaves out is lost.
//!
//! A file is written while the output is produced (the output capture of `truncate` streams
//! into it once the output is over the preview thresholds), so memory never depends on the
//! size of the output. Names match `^[A-Za-z0-9][A-Za-z0-9._-]*$`:
//!
//! ```text
//! out-<unix milliseconds>-<pid>-<counter>.txt
//! ```
//!
//! One file keeps at most [`FILE_CAP`] bytes (and never more than the folder's cap); when
//! the output went on, the file ends with a line
//! `[tinytool: full output cut at <kept> of <total> bytes]`. After each file is written,
//! the folder is pruned: files older than [`KEEP_AGE`] go, then the oldest files until the
//! folder holds at most `output.keep_bytes` bytes (default [`KEEP_BYTES`]). Failures to
//! write a spill file never fail the call: the preview then says the full output was not
//! kept.

use std::fs::{self, File};
use std::io::{self, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

/// Most bytes one spill file keeps.
const FILE_CAP: u64 = 64 * 1024 * 1024;
/// Default cap of the whole folder (config `output.keep_bytes`).
pub const KEEP_BYTES: u64 = 256 * 1024 * 1024;
/// Age after which a spill file is pruned.
const KEEP_AGE: Duration = Duration::from_secs(7 * 24 * 60 * 60);
/// The folder, relative to the working directory.
pub const OUTPUTS_DIR: &str = ".tinytool/outputs";
/// The folder of the spill files of calls that saw secrets (a command allowed to read
/// them): the sandbox shows commands `outputs/` only, so these stay out of their reach.
pub const SEALED_DIR: &str = ".tinytool/sealed";

/// Where spill files go and how much is kept.
#[derive(Debug, PartialEq, Eq)]
pub struct Outputs {
    dir: PathBuf,
    /// `dir` relative to the working directory, as results name it.
    rel: &'static str,
    keep_bytes: u64,
}

impl Outputs {
    /// The outputs folder of the project in `root` (the `--dir`), capped at `keep_bytes`.
    pub fn new(root: &Path, keep_bytes: u64) -> Arc<Outputs> {
        Arc::new(Outputs {
            dir: root.join(OUTPUTS_DIR),
            rel: OUTPUTS_DIR,
            keep_bytes: keep_bytes.max(1),
        })
    }

    /// The folder holding the spill files.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The same project's folder for the spill files of a call that saw secrets
    /// ([`SEALED_DIR`]), with the same cap.
    pub fn sealed(&self) -> Arc<Outputs> {
        let root = self
            .dir
            .parent()
            .and_then(Path::parent)
            .unwrap_or(&self.dir);
        Arc::new(Outputs {
            dir: root.join(SEALED_DIR),
            rel: SEALED_DIR,
            keep_bytes: self.keep_bytes,
        })
    }

    /// Creates a new, empty spill file.
    pub fn create(self: &Arc<Self>) -> io::Result<SpillFile> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        // Created without following a symlink planted there (`project`).
        let name = self.dir.file_name().and_then(|n| n.to_str());
        match (self.dir.parent().and_then(Path::parent), name) {
            (Some(root), Some(name)) => {
                crate::project::ensure_own_subdir(root, name)?;
            }
            _ => fs::create_dir_all(&self.dir)?,
        }
        let millis = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis());
        let pid = std::process::id();
        loop {
            let n = COUNTER.fetch_add(1, Ordering::Relaxed);
            let name = format!("out-{millis}-{pid}-{n}.txt");
            let path = self.dir.join(&name);
            match File::options().write(true).create_new(true).open(&path) {
                Ok(file) => {
                    return Ok(SpillFile {
                        file: Some(BufWriter::with_capacity(64 * 1024, file)),
                        path,
                        name,
                        written: 0,
                        cap: FILE_CAP.min(self.keep_bytes),
                        failed: false,
                        kept: false,
                        outputs: Arc::clone(self),
                    });
                }
                Err(err) if err.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(err) => return Err(err),
            }
        }
    }

    /// Removes files older than [`KEEP_AGE`], then the oldest files until the folder
    /// holds at most the cap; `keep` (the file just written) is never removed.
    fn prune(&self, keep: &Path) {
        let Ok(entries) = fs::read_dir(&self.dir) else {
            return;
        };
        let now = SystemTime::now();
        let mut files: Vec<(SystemTime, u64, PathBuf)> = Vec::new();
        for entry in entries.flatten() {
            let path = entry.path();
            let Ok(meta) = entry.metadata() else { continue };
            if !meta.is_file() || path == keep {
                if path == keep {
                    files.push((SystemTime::now(), meta.len(), path));
                }
                continue;
            }
            let modified = meta.modified().unwrap_or(SystemTime::UNIX_EPOCH);
            if now.duration_since(modified).unwrap_or_default() > KEEP_AGE {
                let _ = fs::remove_file(&path);
                continue;
            }
            files.push((modified, meta.len(), path));
        }
        let mut total: u64 = files.iter().map(|f| f.1).sum();
        files.sort_by(|a, b| a.0.cmp(&b.0).then_with(|| a.2.cmp(&b.2)));
        for (_, len, path) in files {
            if total <= self.keep_bytes {
                break;
            }
            if path == keep {
                continue;
            }
            if fs::remove_file(&path).is_ok() {
                total -= len;
            }
        }
    }
}

/// A spill file being written. Dropped without [`SpillFile::keep`], it is removed.
#[derive(Debug)]
pub struct SpillFile {
    file: Option<BufWriter<File>>,
    path: PathBuf,
    name: String,
    written: u64,
    cap: u64,
    failed: bool,
    kept: bool,
    outputs: Arc<Outputs>,
}

impl SpillFile {
    /// Appends bytes of the output (what goes past the cap is only counted by the caller).
    pub fn write(&mut self, bytes: &[u8]) {
        let room = self.cap.saturating_sub(self.written);
        let take = (bytes.len() as u64).min(room) as usize;
        if take == 0 || self.failed {
            return;
        }
        if let Some(file) = &mut self.file
            && file.write_all(&bytes[..take]).is_err()
        {
            self.failed = true;
        }
        self.written += take as u64;
    }

    /// The file's path relative to the working directory (it exists from its creation:
    /// a file written for a long time, a monitor's, can be read while it grows).
    pub fn rel_path(&self) -> String {
        format!("{}/{}", self.outputs.rel, self.name)
    }

    /// Hands what was written so far to the file, for readers of a file still growing.
    pub fn flush(&mut self) {
        if let Some(file) = &mut self.file
            && file.flush().is_err()
        {
            self.failed = true;
        }
    }

    /// Appends the whole content of another spill file (which is then removed).
    pub fn append_file(&mut self, mut other: SpillFile) {
        let Some(mut from) = other.file.take() else {
            return;
        };
        if from.flush().is_err() {
            self.failed = true;
            return;
        }
        drop(from);
        let room = self.cap.saturating_sub(self.written);
        let (Ok(source), Some(file)) = (File::open(&other.path), &mut self.file) else {
            self.failed = true;
            return;
        };
        if file.flush().is_err() {
            self.failed = true;
            return;
        }
        // File to file: the kernel copies (copy_file_range), nothing passes through here.
        match io::copy(&mut source.take(room), file.get_mut()) {
            Ok(n) => self.written += n,
            Err(_) => self.failed = true,
        }
    }

    /// Closes the file, noting where it was cut when the output (`total` bytes) went on,
    /// prunes the folder and returns the path relative to the working directory; `None`
    /// when the file could not be written.
    pub fn keep(mut self, total: u64) -> Option<String> {
        let mut file = self.file.take()?;
        if total > self.written {
            let note = format!(
                "\n[tinytool: full output cut at {} of {total} bytes]\n",
                self.written
            );
            self.failed |= file.write_all(note.as_bytes()).is_err();
        }
        self.failed |= file.flush().is_err();
        drop(file);
        if self.failed {
            let _ = fs::remove_file(&self.path);
            return None;
        }
        self.kept = true;
        self.outputs.prune(&self.path);
        Some(format!("{}/{}", self.outputs.rel, self.name))
    }
}

impl Drop for SpillFile {
    fn drop(&mut self) {
        if !self.kept {
            let _ = fs::remove_file(&self.path);
        }
    }
}

/// Reads a spill file name back from a path relative to the working directory; `None`
/// unless it is `.tinytool/outputs/<NAME>` with a valid NAME.
#[cfg(test)]
fn name_of(rel: &str) -> Option<&str> {
    let name = rel.strip_prefix(OUTPUTS_DIR)?.strip_prefix('/')?;
    valid_name(name).then_some(name)
}

/// Whether `name` is a valid spill file name (`^[A-Za-z0-9][A-Za-z0-9._-]*$`).
#[cfg(test)]
pub fn valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphanumeric())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kept_file_holds_what_was_written_and_is_named_by_the_contract() {
        let dir = tempfile::tempdir().unwrap();
        let outputs = Outputs::new(dir.path(), KEEP_BYTES);
        let mut file = outputs.create().unwrap();
        file.write(b"hello\n");
        let rel = file.keep(6).unwrap();
        assert!(name_of(&rel).is_some(), "{rel}");
        assert_eq!(fs::read(dir.path().join(&rel)).unwrap(), b"hello\n");
    }

    #[test]
    fn a_dropped_file_is_removed() {
        let dir = tempfile::tempdir().unwrap();
        let outputs = Outputs::new(dir.path(), KEEP_BYTES);
        let mut file = outputs.create().unwrap();
        file.write(b"x");
        drop(file);
        assert_eq!(fs::read_dir(outputs.dir()).unwrap().count(), 0);
    }

    #[test]
    fn a_file_over_the_cap_says_where_it_was_cut_and_the_folder_stays_under_its_cap() {
        let dir = tempfile::tempdir().unwrap();
        let outputs = Outputs::new(dir.path(), 1000);
        for _ in 0..5 {
            let mut file = outputs.create().unwrap();
            file.write(&[b'a'; 700]);
            file.write(&[b'b'; 700]);
            let rel = file.keep(1400).unwrap();
            let text = fs::read_to_string(dir.path().join(rel)).unwrap();
            assert!(text.ends_with("[tinytool: full output cut at 1000 of 1400 bytes]\n"));
        }
        let files: Vec<_> = fs::read_dir(outputs.dir()).unwrap().flatten().collect();
        assert_eq!(files.len(), 1, "only the newest file fits the cap");
    }

    #[test]
    fn appending_a_file_copies_its_content() {
        let dir = tempfile::tempdir().unwrap();
        let outputs = Outputs::new(dir.path(), KEEP_BYTES);
        let mut first = outputs.create().unwrap();
        first.write(b"one\n");
        let mut second = outputs.create().unwrap();
        second.write(b"two\n");
        first.append_file(second);
        first.write(b"three\n");
        let rel = first.keep(14).unwrap();
        assert_eq!(
            fs::read_to_string(dir.path().join(rel)).unwrap(),
            "one\ntwo\nthree\n"
        );
        assert_eq!(fs::read_dir(outputs.dir()).unwrap().count(), 1);
    }

    #[test]
    fn names_follow_the_contract() {
        assert!(valid_name("out-1-2-3.txt"));
        assert!(!valid_name(".hidden"));
        assert!(!valid_name("a/b"));
        assert!(!valid_name(""));
        assert_eq!(name_of(".tinytool/outputs/x.txt"), Some("x.txt"));
        assert_eq!(name_of(".tinytool/outputs/../policy.json"), None);
    }
}
