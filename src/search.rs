//! What `grep` and `glob` share: the root argument and its errors,
//! the skip directories, the parallel walker that prunes them without following symlinks
//! (with results kept per thread and merged once), glob compilation, the newest-first
//! order, how found paths are shown, and the honest trailing summary line.
//!
//! The walker never descends into a folder that is not the project's own work
//! ([`crate::skip_dirs`]: `.git`, `.tinytool`, installed packages, virtual environments,
//! caches, build outputs known by a marker) below the search root; the root itself is
//! walked whatever it is (an explicit `path` inside a skipped folder is searched). Each
//! pruned folder is counted once — the files inside are never visited, so they are never
//! counted — and the first few are named with why.
//! Unless the call sets `include_ignored`, entries that ignore files rule out
//! (`.gitignore`, `.ignore`, `.git/info/exclude`, git's global excludes, as ripgrep reads
//! them: [`crate::ignores`]) are left out too, counted, and the first few named. There is
//! no hidden-file rule. The
//! policy's `read` decision is the one exception: a path the `read` tool would be refused
//! is neither searched nor listed (see [`crate::policy::ReadJudge`]), and a directory
//! whose every path is certainly refused is not entered.
//!
//! Whenever anything was skipped, pruned, refused or cut, a result ends with one line that
//! starts with `[`, e.g. `[skipped: 1 file over 1 MB, 0 binary, 0 secret-looking, 2 skip
//! directories pruned, 2 ignored (target/, dist/; include_ignored: true searches them),
//! 3 refused by the policy; not cut]`, so a reader can tell an
//! incomplete answer from a complete one; a search that finds nothing always ends with
//! that line.

use std::cmp::Ordering;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering as AtomicOrdering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::SystemTime;

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};
use ignore::{
    DirEntry, ParallelVisitor, ParallelVisitorBuilder, WalkBuilder, WalkParallel, WalkState,
};

use crate::ignores::IgnoreRules;
use crate::policy::ReadJudge;

/// A search's `path` argument: `.` when absent or empty.
pub fn root_or_dot(path: Option<&str>) -> &str {
    match path {
        Some(path) if !path.is_empty() => path,
        _ => ".",
    }
}

/// The `path` argument of a search's checked arguments: `.` when absent or empty.
pub fn root_arg(args: &serde_json::Map<String, serde_json::Value>) -> &str {
    root_or_dot(args.get("path").and_then(serde_json::Value::as_str))
}

/// The metadata of a search's root (shown as `shown`), or the tool error when it cannot
/// be searched: `Path not found: PATH` (with the `Did you mean:` of the path probably
/// meant), `Cannot search PATH: ERROR`.
pub fn root_metadata(
    ctx: &crate::session::CallContext,
    root: &Path,
    shown: &str,
) -> Result<std::fs::Metadata, crate::tool::ToolOutput> {
    std::fs::metadata(root).map_err(|err| {
        crate::tool::ToolOutput::error(if err.kind() == std::io::ErrorKind::NotFound {
            let mut message = format!("Path not found: {shown}");
            if let Some(suggestion) = ctx.did_you_mean(root, crate::suggest::Want::Existing) {
                message.push('\n');
                message.push_str(&suggestion);
            }
            message
        } else {
            format!("Cannot search {shown}: {err}")
        })
    })
}

/// Worker threads for walking and searching: one per available core.
pub fn threads() -> usize {
    std::thread::available_parallelism().map_or(1, usize::from)
}

/// Which directories a walk wants, given a directory's path and depth (the root is depth
/// 0): below the depth limit, whether to enter it; at the limit, whether it would itself
/// be a result (glob's simple mode lists directories). A directory it does not want is
/// left out, and a skip directory is counted as pruned only when it was wanted, so the
/// count never includes directories the walk would not have gone into anyway.
pub type Wants = Box<dyn Fn(&Path, usize) -> bool + Send + Sync>;

/// What a walk counts while it filters directories.
#[derive(Debug, Default)]
pub struct WalkCounts {
    /// Skip directories pruned (folders that are not the project's, [`crate::skip_dirs`]).
    pub pruned: AtomicU64,
    /// The first [`IGNORED_NAMED`] pruned folders in (depth, path) order, with why each
    /// is not the project's (git's and tinytool's own are counted, not named).
    pruned_first: Mutex<Vec<(usize, PathBuf, &'static str)>>,
    /// Directories left out whole because the policy refuses reading everything in them.
    pub refused: AtomicU64,
    /// Directories and files left out because ignore files rule them out.
    pub ignored: AtomicU64,
    /// The first [`IGNORED_NAMED`] ignored entries in (depth, directories first, path)
    /// order, whichever thread met them: (depth, is a file, path).
    ignored_first: Mutex<Vec<(usize, bool, PathBuf)>>,
}

/// How many ignored entries the summary line names.
const IGNORED_NAMED: usize = 3;

/// Keeps in `first` the [`IGNORED_NAMED`] smallest keys met so far, in order, whichever
/// thread meets them.
fn keep_first<K: Ord>(first: &Mutex<Vec<K>>, key: K) {
    let mut first = first.lock().unwrap_or_else(PoisonError::into_inner);
    if first.len() < IGNORED_NAMED || first.last().is_some_and(|last| key < *last) {
        let at = first.partition_point(|k| *k < key);
        first.insert(at, key);
        first.truncate(IGNORED_NAMED);
    }
}

impl WalkCounts {
    fn count_pruned(&self, path: &Path, depth: usize, why: &'static str) {
        self.pruned.fetch_add(1, AtomicOrdering::Relaxed);
        if path.file_name().is_some_and(crate::skip_dirs::is_own) {
            return;
        }
        keep_first(&self.pruned_first, (depth, path.to_path_buf(), why));
    }

    /// The pruned folders to name, shallowest first, each with why it is not the
    /// project's: `node_modules/: installed packages`.
    pub fn pruned_names(&self, shown: &Shown) -> Vec<String> {
        let first = self
            .pruned_first
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        first
            .iter()
            .map(|(_, path, why)| format!("{}/: {why}", shown.path(path)))
            .collect()
    }

    fn count_ignored(&self, path: &Path, depth: usize, is_dir: bool) {
        self.ignored.fetch_add(1, AtomicOrdering::Relaxed);
        keep_first(&self.ignored_first, (depth, !is_dir, path.to_path_buf()));
    }

    /// The ignored entries to name: shallowest first, directories before files, then by
    /// path; directories shown with a trailing `/`.
    pub fn ignored_names(&self, shown: &Shown) -> Vec<String> {
        let first = self
            .ignored_first
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        first
            .iter()
            .map(|(_, is_file, path)| {
                let name = shown.path(path);
                if *is_file { name } else { format!("{name}/") }
            })
            .collect()
    }
}

/// Whether an ignored file is counted: the caller's own filter (grep's `include`, glob's
/// pattern), so the count holds only files the search would otherwise have looked at.
pub type CountsFile = Box<dyn Fn(&Path) -> bool + Send + Sync>;

/// How a walk treats ignore files: the rules (none when the call sets `include_ignored`)
/// and which ignored files it counts.
pub struct Ignoring {
    /// The rules, or `None` to apply no ignore files.
    pub rules: Option<IgnoreRules>,
    /// Which ignored files are counted (all when `None`); ignored directories are counted
    /// when the walk wanted them.
    pub counts_file: Option<CountsFile>,
    /// The folders that are not the project's.
    pub not_project: crate::skip_dirs::NotProject,
}

impl Ignoring {
    /// The rules for a walk below `root`, unless `include_ignored` turns them off.
    pub fn new(root: &Path, include_ignored: bool, counts_file: Option<CountsFile>) -> Self {
        Ignoring {
            rules: (!include_ignored).then(|| IgnoreRules::new(root)),
            counts_file,
            not_project: crate::skip_dirs::NotProject::default(),
        }
    }
}

/// A parallel walk of `root` that does not follow symlinks, leaves out the hidden work
/// files of a write in progress ([`crate::atomic::is_work_file`]: copies of user files
/// under other names), prunes the skip directories below the root, and leaves out what
/// `ignoring`'s rules ignore, counting the pruned directories and ignored entries in the
/// returned counts. `max_depth` limits how deep it goes; `wants` narrows the directories
/// it enters (see [`Wants`]). Without `wants` every directory is entered and a skip
/// directory at the depth limit is not counted. A directory the walk would enter is left
/// out, and counted as refused, when `judge` is certain the policy refuses reading every
/// path in it; the paths of the directories it enters are judged by the caller.
pub fn walker(
    root: &Path,
    max_depth: Option<usize>,
    wants: Option<Wants>,
    judge: &ReadJudge,
    ignoring: Ignoring,
) -> (WalkParallel, Arc<WalkCounts>) {
    let counts = Arc::new(WalkCounts::default());
    let counter = Arc::clone(&counts);
    let judge = judge.may_refuse().then(|| judge.clone());
    let Ignoring {
        rules,
        counts_file,
        not_project,
    } = ignoring;
    let walk = WalkBuilder::new(root)
        .standard_filters(false)
        .follow_links(false)
        .max_depth(max_depth)
        .threads(threads())
        .filter_entry(move |entry| {
            let depth = entry.depth();
            if depth == 0 {
                return true;
            }
            if !entry.file_type().is_some_and(|t| t.is_dir()) {
                if crate::atomic::is_work_file(entry.file_name()) {
                    return false;
                }
                if rules
                    .as_ref()
                    .is_some_and(|rules| rules.is_ignored(entry.path(), false))
                {
                    if counts_file
                        .as_ref()
                        .is_none_or(|counts| counts(entry.path()))
                    {
                        counter.count_ignored(entry.path(), depth, false);
                    }
                    return false;
                }
                return true;
            }
            let descends = max_depth.is_none_or(|max| depth < max);
            let wanted = match &wants {
                Some(wants) => wants(entry.path(), depth),
                None => descends,
            };
            if let Some(why) = not_project.judge(entry.path()) {
                if wanted {
                    counter.count_pruned(entry.path(), depth, why);
                }
                return false;
            }
            if rules
                .as_ref()
                .is_some_and(|rules| rules.is_ignored(entry.path(), true))
            {
                if wanted {
                    counter.count_ignored(entry.path(), depth, true);
                }
                return false;
            }
            if wanted
                && descends
                && judge
                    .as_ref()
                    .is_some_and(|judge| judge.refuses_all_below(entry.path()))
            {
                counter.refused.fetch_add(1, AtomicOrdering::Relaxed);
                return false;
            }
            wanted || wants.is_none()
        })
        .build_parallel();
    (walk, counts)
}

/// Runs a parallel walk with state per thread: each walker thread gets its own `L` from
/// `init`, hands it every entry with `visit`, and gives it to `merge` when it ends, so the
/// threads share nothing while they walk and merge once each.
pub fn walk_with_locals<L: Send>(
    walk: WalkParallel,
    init: impl Fn() -> L + Sync,
    visit: impl Fn(&mut L, Result<DirEntry, ignore::Error>) + Sync,
    merge: impl Fn(L) + Sync,
) {
    walk.visit(&mut Locals {
        init: &init,
        visit: &visit,
        merge: &merge,
    });
}

struct Locals<'s, I, V, M> {
    init: &'s I,
    visit: &'s V,
    merge: &'s M,
}

impl<'s, L, I, V, M> ParallelVisitorBuilder<'s> for Locals<'s, I, V, M>
where
    L: Send + 's,
    I: Fn() -> L,
    V: Fn(&mut L, Result<DirEntry, ignore::Error>) + Sync,
    M: Fn(L) + Sync,
{
    fn build(&mut self) -> Box<dyn ParallelVisitor + 's> {
        Box::new(Local {
            local: Some((self.init)()),
            visit: self.visit,
            merge: self.merge,
        })
    }
}

/// One walker thread's state; merged when the thread drops it.
struct Local<'s, L, V, M: Fn(L)> {
    local: Option<L>,
    visit: &'s V,
    merge: &'s M,
}

impl<L, V, M> ParallelVisitor for Local<'_, L, V, M>
where
    L: Send,
    V: Fn(&mut L, Result<DirEntry, ignore::Error>) + Sync,
    M: Fn(L) + Sync,
{
    fn visit(&mut self, entry: Result<DirEntry, ignore::Error>) -> WalkState {
        if let Some(local) = &mut self.local {
            (self.visit)(local, entry);
        }
        WalkState::Continue
    }
}

impl<L, V, M: Fn(L)> Drop for Local<'_, L, V, M> {
    fn drop(&mut self) {
        if let Some(local) = self.local.take() {
            (self.merge)(local);
        }
    }
}

/// The parts of a summary line every walk has: the skip directories pruned, then the
/// entries ignore files ruled out (with the first few named, see [`ignored_part`]), the
/// paths the policy does not let the caller read (files, and directories left out whole)
/// and the entries that could not be read, each only when there were any.
pub fn walk_parts(
    pruned: (u64, &[String]),
    ignored: (u64, &[String]),
    refused: u64,
    unreadable: u64,
) -> Vec<String> {
    let mut parts = vec![pruned_part(pruned.0, pruned.1)];
    if ignored.0 > 0 {
        parts.push(ignored_part(ignored.0, ignored.1));
    }
    if refused > 0 {
        parts.push(format!("{refused} refused by the policy"));
    }
    if unreadable > 0 {
        parts.push(format!("{unreadable} unreadable"));
    }
    parts
}

/// Bytes a glob (grep's `include`, glob's `pattern`) may have. Real globs are far shorter;
/// the limit keeps a runaway argument from costing seconds of compilation.
const MAX_GLOB_BYTES: usize = 16 * 1024;

/// `N skip directories pruned (node_modules/: installed packages, .venv/: a Python virtual
/// environment, and 3 more)`: how many folders that are not the project's were left out,
/// the first few by name with why (a search whose `path` names one searches it).
fn pruned_part(pruned: u64, names: &[String]) -> String {
    let counted = count(pruned, "skip directory pruned", "skip directories pruned");
    if names.is_empty() {
        return counted;
    }
    let named = names.len() as u64;
    let more = if pruned > named {
        format!(", and {} more", pruned - named)
    } else {
        String::new()
    };
    format!("{counted} ({}{more})", names.join(", "))
}

/// `N ignored (target/, dist/, and 3 more; include_ignored: true searches them)`: how
/// many entries ignore files left out, the first few by name, and how to get them.
fn ignored_part(ignored: u64, names: &[String]) -> String {
    let named = names.len() as u64;
    let more = if ignored > named {
        format!(", and {} more", ignored - named)
    } else {
        String::new()
    };
    format!(
        "{ignored} ignored ({}{more}; include_ignored: true searches them)",
        names.join(", ")
    )
}

/// Compiles a glob: `*` and `?` never match `/`, `**` as a whole path component matches
/// any number of directories, `[...]`/`[!...]` are classes, `{a,b}` alternatives, and a
/// backslash escapes the next character. The error is the glob library's own message, or
/// says the glob is longer than [`MAX_GLOB_BYTES`] or compiles to too large a matcher.
///
/// The glob is compiled as a set of one: the library's single-glob matcher panics when its
/// regex exceeds the size limit, while a set reports it as an error.
pub fn compile_glob(pattern: &str) -> Result<GlobSet, String> {
    if pattern.len() > MAX_GLOB_BYTES {
        return Err(format!(
            "the glob is {} bytes long; at most {MAX_GLOB_BYTES} are allowed",
            pattern.len()
        ));
    }
    let glob = GlobBuilder::new(pattern)
        .literal_separator(true)
        .backslash_escape(true)
        .empty_alternates(true)
        .build()
        .map_err(|err| err.to_string())?;
    GlobSetBuilder::new().add(glob).build().map_err(|err| {
        // The library's message quotes the whole generated regex: say what it means.
        if err.to_string().contains("size limit") {
            "the glob compiles to a matcher over the size limit; use a shorter glob".to_string()
        } else {
            err.to_string()
        }
    })
}

/// The newest-first order of search results: modification time descending, then path
/// ascending (byte order), so equal times still give one stable order.
pub fn newest_first(a: (SystemTime, &Path), b: (SystemTime, &Path)) -> Ordering {
    b.0.cmp(&a.0).then_with(|| {
        a.1.as_os_str()
            .as_encoded_bytes()
            .cmp(b.1.as_os_str().as_encoded_bytes())
    })
}

/// How paths under one walk root are shown: the root as `ctx.display` shows it (relative to
/// the directory, absolute outside it) joined with the path relative to the root.
#[derive(Debug, Clone)]
pub struct Shown {
    root: std::path::PathBuf,
    prefix: String,
}

impl Shown {
    /// Paths under `root`, which `ctx.display` shows as `root_display`.
    pub fn new(root: &Path, root_display: &str) -> Self {
        let prefix = match root_display {
            "." | "" => String::new(),
            "/" => "/".to_string(),
            other => format!("{}/", other.trim_end_matches('/')),
        };
        Shown {
            root: root.to_path_buf(),
            prefix,
        }
    }

    /// Whether paths are shown exactly as they are relative to the root (the root is the
    /// directory itself).
    pub fn is_relative_to_root(&self) -> bool {
        self.prefix.is_empty()
    }

    /// The shown form of `path`, which must be the root or below it.
    pub fn path(&self, path: &Path) -> String {
        let rel = path.strip_prefix(&self.root).unwrap_or(path);
        let rel = rel.to_string_lossy();
        if rel.is_empty() {
            return match self.prefix.as_str() {
                "" => ".".to_string(),
                "/" => "/".to_string(),
                prefix => prefix.trim_end_matches('/').to_string(),
            };
        }
        format!("{}{rel}", self.prefix)
    }
}

/// `1 file` / `2 files`.
pub fn count(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// The trailing summary line: `[skipped: PART, PART; CUT]`.
pub fn summary_line(parts: &[String], cut: &str) -> String {
    format!("[skipped: {}; {cut}]", parts.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;
    use std::time::Duration;

    #[test]
    fn newest_first_then_path() {
        let t = |s| SystemTime::UNIX_EPOCH + Duration::from_secs(s);
        let mut items = [
            (t(100), PathBuf::from("r/b")),
            (t(300), PathBuf::from("r/z")),
            (t(200), PathBuf::from("r/c")),
            (t(300), PathBuf::from("r/a")),
            (t(100), PathBuf::from("r/a-b")),
            (t(100), PathBuf::from("r/a/b")),
        ];
        items.sort_by(|a, b| newest_first((a.0, &a.1), (b.0, &b.1)));
        let order: Vec<&str> = items.iter().map(|i| i.1.to_str().unwrap()).collect();
        assert_eq!(order, ["r/a", "r/z", "r/c", "r/a-b", "r/a/b", "r/b"]);
    }

    #[test]
    fn shown_paths_are_relative_to_the_directory_or_absolute() {
        let inside = Shown::new(Path::new("/w/src"), "src");
        assert_eq!(inside.path(Path::new("/w/src/a/b.rs")), "src/a/b.rs");
        assert_eq!(inside.path(Path::new("/w/src")), "src");
        let at_dir = Shown::new(Path::new("/w"), ".");
        assert_eq!(at_dir.path(Path::new("/w/a.rs")), "a.rs");
        assert_eq!(at_dir.path(Path::new("/w")), ".");
        let outside = Shown::new(Path::new("/other"), "/other");
        assert_eq!(outside.path(Path::new("/other/x")), "/other/x");
        let slash = Shown::new(Path::new("/"), "/");
        assert_eq!(slash.path(Path::new("/etc/x")), "/etc/x");
    }

    #[test]
    fn summary_line_shape() {
        let parts = [
            count(1, "file over 1 MB", "files over 1 MB"),
            count(2, "x", "xs"),
        ];
        assert_eq!(
            summary_line(&parts, "not cut"),
            "[skipped: 1 file over 1 MB, 2 xs; not cut]"
        );
    }

    #[test]
    fn globs_keep_separators_and_expand_braces() {
        let g = compile_glob("*.{rs,toml}").unwrap();
        assert!(g.is_match("a.rs") && g.is_match("Cargo.toml"));
        assert!(!g.is_match("src/a.rs") && !g.is_match("a.md"));
        let g = compile_glob("**/*.rs").unwrap();
        assert!(g.is_match("a.rs") && g.is_match("x/y/a.rs"));
        let g = compile_glob("src/[ab]?.rs").unwrap();
        assert!(g.is_match("src/a1.rs") && !g.is_match("src/c1.rs"));
        assert!(compile_glob("{a,b").unwrap_err().contains("{a,b"));
    }

    #[test]
    fn huge_globs_are_errors_not_panics() {
        let long = "*".repeat(330_000);
        assert!(compile_glob(&long).unwrap_err().contains("at most 16384"));
        // Just under the length limit, yet a regex over the library's size limit.
        let heavy = "[!a]".repeat(MAX_GLOB_BYTES / 4);
        match compile_glob(&heavy) {
            Ok(glob) => assert!(!glob.is_match("a")),
            Err(err) => assert!(err.contains("size limit"), "{err}"),
        }
        let stars = "*".repeat(MAX_GLOB_BYTES);
        match compile_glob(&stars) {
            Ok(glob) => assert!(glob.is_match("abc")),
            Err(err) => assert!(err.contains("size limit"), "{err}"),
        }
    }
}
