//! `grep`: regular-expression search of file contents,
//! built on ripgrep's libraries (`grep-regex`, `grep-searcher`, `ignore`, `globset`).
//!
//! Output is `relPath:lineNum:lineContent`, one matching line each: files newest first by
//! modification time (ties by path), lines in file order, paths relative to `--dir`
//! (absolute outside it). Lines are cut at 2,000 characters on a character boundary
//! (marked `...`); bytes that are not UTF-8 are replaced (`metadata.lossy`). Files over
//! 1 MB met by walking (a file named as `path` is searched whatever its size, streamed in
//! bounded memory), binary files (a NUL byte anywhere in them, or a start
//! [`crate::binary`] calls binary), files the policy does not
//! let the caller `read` (counted as secret-looking when a secret's name, else as refused by
//! the policy, with any directory the policy refuses whole), the skip directories, and,
//! unless `include_ignored` is set, what ignore files rule out ([`crate::ignores`]) are
//! left out, and the output says so: it ends with the summary line of [`crate::search`]
//! whenever anything was skipped or the list was cut, and always when nothing matched.
//! The policy is asked once per call for a [`ReadJudge`]; it judges each file in the
//! walker threads before the file is opened, and costs nothing when no rule could refuse
//! a read below the root.
//!
//! Newest-first order and a match cap do not mix with "stop at the first N matches found"
//! — parallel workers find matches in no particular order. The search therefore runs in
//! two phases:
//! 1. A parallel walk lists every candidate file with its modification time and, while
//!    fewer than `max_count + 1` matches have been found in total, also searches each file
//!    it meets, so a search with few matches reads every file exactly once, in parallel,
//!    like ripgrep.
//! 2. The candidates are sorted newest first. A consumer takes their results in that
//!    order; files phase 1 did not search are searched by a bounded pool of workers that
//!    run a little ahead of the consumer. As soon as the results taken so far hold
//!    `max_count + 1` matches, the output and the fact that it was cut are certain: the
//!    workers stop and no further file is read.
//!
//! Whatever the timing of the threads, the output is the same: it is the newest-first
//! prefix of the files' results, and which thread searched a file, or when, never shows.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};
use std::time::SystemTime;

use globset::GlobSet;
use grep_matcher::LineTerminator;
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder, Sink, SinkMatch};
use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::policy::ReadJudge;
use crate::schema;
use crate::search::{self, Shown};
use crate::session::CallContext;
use crate::tool::{Access, ToolDef, ToolDoc, ToolOutput, parse_args};
use crate::truncate::Capture;

/// Matches shown when no `max_count` is given (`maxGrepMatches`).
const DEFAULT_MAX_COUNT: u64 = 500;
/// Files larger than this many bytes are skipped.
const MAX_FILE_BYTES: u64 = 1024 * 1024;
/// Characters of a matching line shown before it is cut with `...`.
pub const MAX_LINE_CHARS: usize = 2_000;
/// Bytes a regex pattern may have: long alternations of names fit, a runaway argument not.
const MAX_PATTERN_BYTES: usize = 64 * 1024;
/// Bytes the compiled regex may take (its NFA), and the lazy DFA's cache per thread: a
/// pattern such as `a{1000}{1000}` is an error instead of gigabytes of memory.
const REGEX_SIZE_LIMIT: usize = 10 * 1024 * 1024;

/// The `grep` tool's definition.
pub fn definition() -> ToolDef {
    ToolDef {
        name: "grep",
        summary: "Search file contents with a regular expression",
        description: "Search the contents of files for a regular expression (Rust regex \
            syntax, e.g. `fn\\s+main`, `TODO|FIXME`). Returns matching lines as \
            `path:lineNumber:line`, files newest first, paths relative to the working \
            directory. `path` is a directory to search (default: the working directory) or \
            a single file; `include` filters files by a glob on the base name or relative \
            path (`*.rs`, `*.{ts,tsx}`, `src/**/*.go`); at most `max_count` lines are \
            returned (default 500). Folders that are not the project's own work are not \
            searched (.git, .tinytool, node_modules, vendor, __pycache__, .tox and other \
            caches, Python virtual environments by their pyvenv.cfg, folders holding \
            CACHEDIR.TAG, target beside Cargo.toml; name one as `path` to search it), nor paths that .gitignore, .ignore, \
            .git/info/exclude or git's global excludes ignore (set `include_ignored: true` \
            to search those), files over 1 MB found while walking (a file named as `path` \
            is searched whatever its size), binary files, or files the policy does not let \
            you read (secret files such as .env); when anything was skipped or the list was cut, the \
            last line, starting with `[`, says so.",
        permission: "read",
        schema: parameters,
        execute,
        access: Some(access),
        precheck: None,
        checkpoint: None,
        needs: None,
        after_changes: None,
        doc: ToolDoc {
            output: "One line per matching line: `path:lineNumber:line`, files newest first by \
                modification time (ties by path), lines in file order; paths relative to the \
                working directory (absolute outside it). A line longer than 2000 characters is \
                cut there, with `...` appended; when its first match lies further in, the line \
                shows a window around the match instead: `[col C] …` (C: the match's 1-based \
                byte column), about 200 bytes before it and what follows, up to 2000 \
                characters. When nothing matches, the first line says `No \
                matches found.` The output \
                ends with a summary line such as `[skipped: 1 file over 1 MB, 0 binary, 0 \
                secret-looking, 2 skip directories pruned, 2 ignored (target/, dist/; \
                include_ignored: true searches them); not cut]` whenever a file was \
                skipped, a skip directory was pruned, an ignore file left something out or \
                the list was cut (`cut at N matches, more exist`), and always when nothing \
                matched. `N ignored` counts the directories and files ignore files ruled \
                out (a directory once, its contents not visited; a file only when \
                `include` would let it in) and names up to three, shallowest first. Ignore \
                files are read as ripgrep reads them: `.ignore` everywhere, `.gitignore`, \
                `.git/info/exclude` and git's global excludes inside a git repository, in \
                the directories of the search and above it. `files over 1 MB` counts files \
                met by walking; a file given as `path` is searched whatever its size. A file is binary when it \
                holds a NUL byte, starts with a known binary signature (gzip, zip, ELF, \
                PDF, ...) or more than 30% of its first 8192 bytes are not text; the count \
                covers the files read (after a cut, later files \
                are not read). A file the policy does not let you `read` (the decision the \
                read tool would get, without asking) is not searched: `secret-looking` counts \
                such files named as secrets are (.env, id_rsa, a key), and `N refused by the policy` (shown when N > 0) \
                counts the others plus each directory left out whole because the policy \
                refuses every path in it. metadata: matches, files, cut, \
                skipped_over_1mb, skipped_binary, skipped_secret, skipped_policy, \
                pruned_dirs, skipped_ignored, unreadable, and lossy when bytes were not \
                UTF-8.",
            errors: "`Invalid regex pattern: ...` quoting the regex error (a pattern that \
                could match a line break is refused too, and so are a pattern over 65536 \
                bytes and a regex that compiles to more than 10 MB); `Invalid include \
                pattern: ...` (also for a glob over 16384 bytes); \
                `Path not found: PATH` (with `Did you mean: PATH?` naming the path probably meant, as read does); `PATH is not a file or directory`.",
            examples: &[
                (
                    "Find a function's definition in Rust files",
                    "tinytool grep --pattern 'fn\\s+resolve' --include '*.rs'",
                ),
                (
                    "Search one directory for two words, at most 50 lines",
                    "tinytool grep --pattern 'TODO|FIXME' --path src --max-count 50",
                ),
                (
                    "Search TypeScript sources with a brace glob",
                    "tinytool grep --pattern useState --include '*.{ts,tsx}'",
                ),
                (
                    "Search build output that .gitignore leaves out, too",
                    "tinytool grep --pattern 'panicked at' --include-ignored",
                ),
            ],
        },
    }
}

fn parameters() -> Value {
    schema::object(
        json!({
            "pattern": {
                "type": "string",
                "description": "Regular expression to search for (Rust regex syntax)."
            },
            "path": {
                "type": "string",
                "description": "Directory to search, or a single file (default: the working directory)."
            },
            "include": {
                "type": "string",
                "description": "Only search files whose base name or relative path matches this glob, e.g. `*.rs` or `*.{ts,tsx}`."
            },
            "max_count": {
                "type": "integer",
                "description": "Maximum number of matching lines to return (default 500; 0 or less also means 500)."
            },
            "include_ignored": {
                "type": "boolean",
                "description": "Also search files and directories that .gitignore, .ignore, .git/info/exclude or git's global excludes ignore (default false)."
            }
        }),
        &["pattern"],
    )
}

/// A search needs `read` of its root (`.` when no path is given).
fn access(ctx: &CallContext, args: &Map<String, Value>) -> Vec<Access> {
    vec![Access::path(ctx, "read", search::root_arg(args))]
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct GrepArgs {
    pattern: String,
    path: Option<String>,
    include: Option<String>,
    max_count: Option<i64>,
    include_ignored: Option<bool>,
}

fn execute(ctx: &CallContext, args: Map<String, Value>) -> anyhow::Result<ToolOutput> {
    let args: GrepArgs = match parse_args(args) {
        Ok(args) => args,
        Err(output) => return Ok(output),
    };
    let matcher = match build_matcher(&args.pattern) {
        Ok(matcher) => matcher,
        Err(err) => return Ok(ToolOutput::error(format!("Invalid regex pattern: {err}"))),
    };
    let include = match args.include.as_deref().map(Include::new).transpose() {
        Ok(include) => include,
        Err(err) => return Ok(ToolOutput::error(format!("Invalid include pattern: {err}"))),
    };
    let root = ctx.resolve(search::root_or_dot(args.path.as_deref()));
    let root_shown = ctx.display(&root);
    let meta = match search::root_metadata(ctx, &root, &root_shown) {
        Ok(meta) => meta,
        Err(output) => return Ok(output),
    };
    // As in the reference, only a positive count counts: some clients send 0 for "unset".
    let max_count = args
        .max_count
        .and_then(|n| u64::try_from(n).ok())
        .filter(|&n| n > 0)
        .unwrap_or(DEFAULT_MAX_COUNT);
    let search = Search {
        matcher,
        include,
        shown: Shown::new(&root, &root_shown),
        judge: ctx.session.gate.read_judge(ctx, &root),
        root,
        cap: max_count.saturating_add(1),
    };
    let walked = if meta.is_dir() {
        let not_project = ctx.session.config.not_project_for_search();
        walk(&search, args.include_ignored.unwrap_or(false), not_project)
    } else if meta.is_file() {
        single_file(&search, meta.modified().unwrap_or(SystemTime::UNIX_EPOCH))
    } else {
        return Ok(ToolOutput::error(format!(
            "{root_shown} is not a file or directory (a device, socket or pipe cannot be searched)"
        )));
    };
    let Walked {
        mut candidates,
        over_size,
        secret,
        refused,
        unreadable,
        pruned,
        pruned_names,
        ignored,
        ignored_names,
    } = walked;
    candidates
        .sort_unstable_by(|a, b| search::newest_first((a.mtime, &a.path), (b.mtime, &b.path)));
    // Secrets the policy let the caller read: what they print is kept out of commands'
    // reach (a spill file of this call would otherwise hold them).
    let limits = if candidates.iter().any(|c| is_secret(&c.path)) {
        ctx.session.limits.sealed()
    } else {
        ctx.session.limits.clone()
    };
    let report = collect(&search, candidates, max_count, Capture::new(limits));
    let skipped = Skipped {
        over_size,
        binary: report.binary,
        secret,
        refused,
        pruned,
        pruned_names,
        ignored,
        ignored_names,
        unreadable: unreadable + report.unreadable,
    };
    Ok(finish(report, skipped, max_count))
}

/// Builds the matcher: `$` also matches before `\r\n`, a match never spans lines (a
/// pattern that would have to match a line break is refused), and a NUL byte in the
/// pattern is refused because files containing one are skipped as binary.
fn build_matcher(pattern: &str) -> Result<RegexMatcher, String> {
    if pattern.len() > MAX_PATTERN_BYTES {
        return Err(format!(
            "the pattern is {} bytes long; at most {MAX_PATTERN_BYTES} are allowed",
            pattern.len()
        ));
    }
    // The matcher library reports syntax errors against the pattern as it rewrote it;
    // parsing first quotes the caller's own pattern.
    regex_syntax::Parser::new()
        .parse(pattern)
        .map_err(|err| err.to_string())?;
    RegexMatcherBuilder::new()
        // `^` and `$` match at every line's start and end, not only the file's.
        .multi_line(true)
        .crlf(true)
        .ban_byte(Some(b'\0'))
        .size_limit(REGEX_SIZE_LIMIT)
        .dfa_size_limit(REGEX_SIZE_LIMIT)
        .build(pattern)
        .map_err(|err| err.to_string())
}

/// The `include` filter: a glob matched against a file's base name, its path relative to
/// the search root, and its path as shown (relative to the directory); any match counts.
#[derive(Debug, Clone)]
struct Include {
    glob: GlobSet,
}

impl Include {
    fn new(pattern: &str) -> Result<Include, String> {
        search::compile_glob(pattern).map(|glob| Include { glob })
    }

    fn matches(&self, search: &Search, path: &Path) -> bool {
        self.matches_below(&search.root, &search.shown, path)
    }

    /// Whether `path`, below the search root `root` shown as `shown`, passes the filter.
    fn matches_below(&self, root: &Path, shown: &Shown, path: &Path) -> bool {
        if path
            .file_name()
            .is_some_and(|name| self.glob.is_match(name))
        {
            return true;
        }
        let rel = path.strip_prefix(root).unwrap_or(path);
        if !rel.as_os_str().is_empty() && self.glob.is_match(rel) {
            return true;
        }
        !shown.is_relative_to_root() && self.glob.is_match(shown.path(path))
    }
}

/// What every thread of one search shares.
struct Search {
    matcher: RegexMatcher,
    include: Option<Include>,
    root: PathBuf,
    shown: Shown,
    /// Whether the policy lets the caller read a file.
    judge: ReadJudge,
    /// `max_count + 1`: the matches needed to know both the output and whether it is cut.
    cap: u64,
}

/// A file that may be searched.
struct Candidate {
    path: PathBuf,
    mtime: SystemTime,
    /// The result, when the walk already searched the file.
    outcome: Option<Outcome>,
}

/// The result of searching one file.
#[derive(Debug)]
enum Outcome {
    /// Its matching lines (up to the cap it was searched with).
    Matches { lines: Vec<Found>, lossy: bool },
    /// A NUL byte was found: none of its lines are shown.
    Binary,
    /// It could not be opened or read.
    Unreadable,
}

/// One matching line, ready to show.
#[derive(Debug)]
struct Found {
    number: u64,
    text: String,
}

/// What the walk found.
#[derive(Default)]
struct Walked {
    candidates: Vec<Candidate>,
    over_size: u64,
    /// Files named as secrets are that the policy does not let the caller read.
    secret: u64,
    /// Other files, and whole directories, the policy does not let the caller read.
    refused: u64,
    unreadable: u64,
    /// Skip directories pruned, and the first few of them as shown (with why).
    pruned: u64,
    pruned_names: Vec<String>,
    /// Entries ignore files ruled out, and the first few of them as shown.
    ignored: u64,
    ignored_names: Vec<String>,
}

/// Counts of what was left out, for the summary line and metadata.
struct Skipped {
    over_size: u64,
    binary: u64,
    secret: u64,
    refused: u64,
    pruned: u64,
    pruned_names: Vec<String>,
    ignored: u64,
    ignored_names: Vec<String>,
    unreadable: u64,
}

/// Phase 1 for a directory: the parallel walk (see the module doc). Ignore files apply
/// unless `include_ignored`; an ignored file is counted only when `include` lets it in.
fn walk(
    search: &Search,
    include_ignored: bool,
    not_project: crate::skip_dirs::NotProject,
) -> Walked {
    let counts_file = search.include.clone().map(|include| {
        let (root, shown) = (search.root.clone(), search.shown.clone());
        Box::new(move |path: &Path| include.matches_below(&root, &shown, path))
            as search::CountsFile
    });
    let ignoring = search::Ignoring {
        not_project,
        ..search::Ignoring::new(&search.root, include_ignored, counts_file)
    };
    let (walker, counts) = search::walker(&search.root, None, None, &search.judge, ignoring);
    let shared = WalkShared {
        search,
        found: AtomicU64::new(0),
    };
    let out = Mutex::new(Walked::default());
    search::walk_with_locals(
        walker,
        || WalkThread {
            files: FileSearcher::new(search),
            local: Walked::default(),
        },
        |thread, entry| match entry {
            Ok(entry) if entry.file_type().is_some_and(|t| t.is_file()) => {
                thread.consider(&shared, entry.into_path());
            }
            // Directories are walked, symlinks are not followed, and devices, sockets
            // and pipes are never opened (a pipe would block).
            Ok(_) => {}
            Err(_) => thread.local.unreadable += 1,
        },
        |thread| {
            let mut out = lock(&out);
            out.over_size += thread.local.over_size;
            out.secret += thread.local.secret;
            out.refused += thread.local.refused;
            out.unreadable += thread.local.unreadable;
            out.candidates.extend(thread.local.candidates);
        },
    );
    let mut walked = out.into_inner().unwrap_or_else(PoisonError::into_inner);
    walked.pruned = counts.pruned.load(Ordering::Relaxed);
    walked.pruned_names = counts.pruned_names(&search.shown);
    walked.refused += counts.refused.load(Ordering::Relaxed);
    walked.ignored = counts.ignored.load(Ordering::Relaxed);
    walked.ignored_names = counts.ignored_names(&search.shown);
    walked
}

/// Phase 1 for a file given as `path`: one candidate, searched in phase 2. Its `read` is
/// the call's own access, which the gate has already allowed.
fn single_file(search: &Search, mtime: SystemTime) -> Walked {
    let mut walked = Walked::default();
    let path = search.root.clone();
    if search
        .include
        .as_ref()
        .is_some_and(|inc| !inc.matches(search, &path))
    {
        return walked;
    }
    walked.candidates.push(Candidate {
        path,
        mtime,
        outcome: None,
    });
    walked
}

impl Walked {
    /// Counts a file the policy does not let the caller read.
    fn count_refused(&mut self, path: &Path) {
        if is_secret(path) {
            self.secret += 1;
        } else {
            self.refused += 1;
        }
    }
}

/// Whether a refused file is a secret by name ([`crate::secret_file`]: `.env`,
/// `id_rsa`, `server.key`, …), counted as secret-looking rather than refused.
fn is_secret(path: &Path) -> bool {
    path.file_name()
        .and_then(|name| name.to_str())
        .is_some_and(crate::secret_file::name_may_be_secret)
}

/// What the walker threads share.
struct WalkShared<'s> {
    search: &'s Search,
    /// Matches found by the walk so far; once it reaches the cap the walk only lists.
    found: AtomicU64,
}

/// One walker thread: lists candidates and searches them while that is still useful.
struct WalkThread {
    files: FileSearcher,
    local: Walked,
}

impl WalkThread {
    fn consider(&mut self, shared: &WalkShared, path: PathBuf) {
        let search = shared.search;
        if let Some(include) = &search.include
            && !include.matches(search, &path)
        {
            return;
        }
        if !search.judge.permits(&path) {
            self.local.count_refused(&path);
            return;
        }
        if shared.found.load(Ordering::Relaxed) < search.cap {
            // Search now: opening the file also gives its size and time.
            let Some((file, size, mtime)) = open(&path) else {
                // Counted only if it sorts before a cut, as when phase 2 fails to open it:
                // the counts must not depend on which phase met the file.
                self.list(path, Some(Outcome::Unreadable));
                return;
            };
            if size > MAX_FILE_BYTES {
                self.local.over_size += 1;
                return;
            }
            let outcome = self
                .files
                .search(file, size, search.cap, &AtomicBool::new(false));
            if let Outcome::Matches { lines, .. } = &outcome {
                if lines.is_empty() {
                    // A file without matches adds nothing wherever it sorts: forget it.
                    return;
                }
                shared
                    .found
                    .fetch_add(lines.len() as u64, Ordering::Relaxed);
            }
            self.local.candidates.push(Candidate {
                path,
                mtime,
                outcome: Some(outcome),
            });
            return;
        }
        self.list(path, None);
    }

    /// Lists a candidate by its `lstat`, with the outcome already known, if any.
    fn list(&mut self, path: PathBuf, outcome: Option<Outcome>) {
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            self.local.unreadable += 1;
            return;
        };
        if meta.len() > MAX_FILE_BYTES {
            self.local.over_size += 1;
            return;
        }
        self.local.candidates.push(Candidate {
            path,
            mtime: meta.modified().unwrap_or(SystemTime::UNIX_EPOCH),
            outcome,
        });
    }
}

/// Opens a file for searching: the file, its size and modification time.
fn open(path: &Path) -> Option<(File, u64, SystemTime)> {
    let file = File::open(path).ok()?;
    let meta = file.metadata().ok()?;
    let mtime = meta.modified().unwrap_or(SystemTime::UNIX_EPOCH);
    Some((file, meta.len(), mtime))
}

/// What one thread needs to search files: its own searcher, matcher and read buffer.
struct FileSearcher {
    searcher: Searcher,
    matcher: RegexMatcher,
    /// Holds the file being searched; it only grows, up to [`MAX_FILE_BYTES`].
    buf: Vec<u8>,
}

impl FileSearcher {
    fn new(search: &Search) -> Self {
        FileSearcher {
            searcher: SearcherBuilder::new()
                .line_terminator(LineTerminator::crlf())
                .line_number(true)
                .binary_detection(BinaryDetection::quit(b'\0'))
                .build(),
            matcher: search.matcher.clone(),
            buf: Vec::new(),
        }
    }

    /// Searches an open file of `size` bytes (at most [`MAX_FILE_BYTES`]), keeping at most
    /// `cap` matching lines; `cancel` stops it early (its result is then thrown away).
    ///
    /// The file is read whole with one read call, as far as its size at `stat` time: the
    /// searcher's own reader would sniff for a byte-order mark and probe for the end with
    /// reads of its own, half again as many system calls for the small files most trees
    /// are made of. A file with a NUL byte anywhere is binary, and so is one whose start
    /// [`crate::binary`] calls binary (a known signature, or too many non-text bytes); a
    /// UTF-16 file, recognised by its byte-order mark, is transcoded by the searcher and
    /// judged after that.
    fn search(&mut self, mut file: File, size: u64, cap: u64, cancel: &AtomicBool) -> Outcome {
        if size > MAX_FILE_BYTES {
            return self.search_stream(file, cap, cancel);
        }
        let want = usize::try_from(size.min(MAX_FILE_BYTES)).unwrap_or(0);
        if self.buf.len() < want {
            self.buf.resize(want, 0);
        }
        let Ok(filled) = fill(&mut file, &mut self.buf[..want]) else {
            return Outcome::Unreadable;
        };
        let data = &self.buf[..filled];
        if starts_binary(data) {
            return Outcome::Binary;
        }
        let mut sink = Collect {
            lines: Vec::new(),
            lossy: false,
            binary: false,
            cap,
            cancel,
            matcher: &self.matcher,
        };
        match self.searcher.search_slice(&self.matcher, data, &mut sink) {
            Err(_) => Outcome::Unreadable,
            Ok(()) if sink.binary => Outcome::Binary,
            Ok(()) => Outcome::Matches {
                lines: sink.lines,
                lossy: sink.lossy,
            },
        }
    }
}

/// Reads from `file` until `buf` is full or the file ends; the bytes read.
fn fill(file: &mut File, buf: &mut [u8]) -> std::io::Result<usize> {
    use std::io::Read;
    let mut filled = 0;
    while filled < buf.len() {
        match file.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(err) if err.kind() == std::io::ErrorKind::Interrupted => {}
            Err(err) => return Err(err),
        }
    }
    Ok(filled)
}

/// Whether a file whose first bytes are `start` is binary: not UTF-16 (a byte-order mark;
/// the searcher transcodes it), and a NUL or a start [`crate::binary`] calls binary.
fn starts_binary(start: &[u8]) -> bool {
    !utf16_mark(start) && (memchr::memchr(0, start).is_some() || crate::binary::is_binary(start))
}

/// Whether `start` begins with a UTF-16 byte-order mark.
fn utf16_mark(start: &[u8]) -> bool {
    start.starts_with(&[0xFF, 0xFE]) || start.starts_with(&[0xFE, 0xFF])
}

impl FileSearcher {
    /// Searches a file over [`MAX_FILE_BYTES`] (only a file named as grep's `path` gets
    /// here) in bounded memory: the searcher reads it through a line buffer that may grow
    /// to [`STREAM_HEAP_LIMIT`] for a long line (a longer line makes the file unreadable),
    /// and at most `cap` matching lines are kept. As for small files, a NUL byte anywhere
    /// makes the file binary: the searcher checks what it reads, and when it stopped at
    /// the cap the rest of the file is scanned for a NUL without being searched.
    fn search_stream(&mut self, mut file: File, cap: u64, cancel: &AtomicBool) -> Outcome {
        use std::io::{Read, Seek};
        // The start decides as for small files: a byte-order mark, or a binary start.
        let mut head = vec![0u8; crate::binary::CHECK_SIZE];
        let Ok(got) = fill(&mut file, &mut head) else {
            return Outcome::Unreadable;
        };
        let utf16 = utf16_mark(&head[..got]);
        if starts_binary(&head[..got]) {
            return Outcome::Binary;
        }
        if file.rewind().is_err() {
            return Outcome::Unreadable;
        }
        let mut searcher = SearcherBuilder::new()
            .line_terminator(LineTerminator::crlf())
            .line_number(true)
            .binary_detection(BinaryDetection::quit(b'\0'))
            .heap_limit(Some(STREAM_HEAP_LIMIT))
            .build();
        let mut sink = Collect {
            lines: Vec::new(),
            lossy: false,
            binary: false,
            cap,
            cancel,
            matcher: &self.matcher,
        };
        if searcher
            .search_reader(&self.matcher, &mut file, &mut sink)
            .is_err()
        {
            return Outcome::Unreadable;
        }
        if sink.binary {
            return Outcome::Binary;
        }
        if !utf16 && sink.lines.len() as u64 >= cap {
            // Stopped at the cap: the part not read yet may still hold a NUL.
            let mut chunk = vec![0u8; 64 * 1024];
            loop {
                if cancel.load(Ordering::Relaxed) {
                    break;
                }
                match file.read(&mut chunk) {
                    Ok(0) => break,
                    Ok(n) if memchr::memchr(0, &chunk[..n]).is_some() => return Outcome::Binary,
                    Ok(_) => {}
                    Err(err) if err.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(_) => return Outcome::Unreadable,
                }
            }
        }
        Outcome::Matches {
            lines: sink.lines,
            lossy: sink.lossy,
        }
    }
}

/// The most memory the line buffer of a streamed search (a file over 1 MB named as
/// `path`) may take: the longest line it can search.
const STREAM_HEAP_LIMIT: usize = 16 * 1024 * 1024;

/// The sink of one file's search. The bytes of each matching line are decoded here rather
/// than by the searcher's `Lossy` sink, so that only the shown prefix of a long line is
/// decoded and the result can say whether any byte had to be replaced.
struct Collect<'a> {
    lines: Vec<Found>,
    lossy: bool,
    binary: bool,
    cap: u64,
    cancel: &'a AtomicBool,
    /// Finds the match in a line too long to show whole.
    matcher: &'a RegexMatcher,
}

impl Sink for Collect<'_> {
    type Error = std::io::Error;

    fn matched(&mut self, _: &Searcher, found: &SinkMatch<'_>) -> Result<bool, Self::Error> {
        let first = found.line_number().unwrap_or(0);
        for (i, line) in found.lines().enumerate() {
            let (text, lossy) = match self.match_beyond_prefix(line) {
                Some(start) => show_window(line, start),
                None => show_line(line),
            };
            self.lossy |= lossy;
            self.lines.push(Found {
                number: first + i as u64,
                text,
            });
            if self.lines.len() as u64 >= self.cap {
                return Ok(false);
            }
        }
        Ok(!self.cancel.load(Ordering::Relaxed))
    }

    fn binary_data(&mut self, _: &Searcher, _offset: u64) -> Result<bool, Self::Error> {
        self.binary = true;
        Ok(false)
    }
}

impl Collect<'_> {
    /// Where the first match of a line starts when the line is too long to show whole
    /// and the match lies past what [`show_line`] shows of it.
    fn match_beyond_prefix(&self, line: &[u8]) -> Option<usize> {
        use grep_matcher::Matcher;
        if line.len() <= MAX_LINE_CHARS {
            return None;
        }
        let found = self.matcher.find(line).ok().flatten()?;
        // show_line shows at least MAX_LINE_CHARS bytes' worth of characters; a match
        // starting within the first half of that is visible.
        (found.start() > MAX_LINE_CHARS / 2).then_some(found.start())
    }
}

/// How many bytes before a match a window shows.
const WINDOW_BEFORE: usize = 200;

/// A window of a long line around a match starting at byte `start`: `[col C] …` (the
/// 1-based byte column of the match, as ripgrep's `--column`), then about
/// [`WINDOW_BEFORE`] bytes before the match and the rest of [`MAX_LINE_CHARS`] characters
/// from there, with `...` when the line goes on.
fn show_window(line: &[u8], start: usize) -> (String, bool) {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let mut from = start.saturating_sub(WINDOW_BEFORE);
    // Start on a character boundary: skip UTF-8 continuation bytes.
    while from < start && (line[from] & 0b1100_0000) == 0b1000_0000 {
        from += 1;
    }
    let (text, lossy) = show_line(&line[from..]);
    (format!("[col {}] …{text}", start + 1), lossy)
}

/// A matching line as shown: without its line ending, cut after [`MAX_LINE_CHARS`]
/// characters (then ending in `...`), invalid UTF-8 replaced by U+FFFD. Returns whether a
/// replacement happened in the shown part.
fn show_line(line: &[u8]) -> (String, bool) {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    if line.len() <= MAX_LINE_CHARS
        && let Ok(text) = std::str::from_utf8(line)
    {
        return (text.to_string(), false);
    }
    // Each shown character takes at most 4 bytes and each replaced byte 1, so this prefix
    // holds more than MAX_LINE_CHARS characters whenever the line is longer than it.
    let prefix = &line[..line.len().min(4 * MAX_LINE_CHARS + 4)];
    let mut text = String::with_capacity(prefix.len().min(4 * MAX_LINE_CHARS));
    let mut chars = 0;
    let mut lossy = false;
    for chunk in prefix.utf8_chunks() {
        let valid = chunk.valid();
        let room = MAX_LINE_CHARS - chars;
        if let Some((cut, _)) = valid.char_indices().nth(room) {
            text.push_str(&valid[..cut]);
            text.push_str("...");
            return (text, lossy);
        }
        text.push_str(valid);
        chars += valid.chars().count();
        if !chunk.invalid().is_empty() {
            if chars == MAX_LINE_CHARS {
                text.push_str("...");
                return (text, lossy);
            }
            text.push('\u{fffd}');
            chars += 1;
            lossy = true;
        }
    }
    if prefix.len() < line.len() {
        text.push_str("...");
    }
    (text, lossy)
}

/// What phase 2 produced.
struct Report {
    capture: Capture,
    matches: u64,
    files: u64,
    cut: bool,
    lossy: bool,
    binary: u64,
    unreadable: u64,
    /// Files phase 2 opened (the walk's searches not included).
    searched: u64,
}

/// Phase 2: takes results newest first, searching what the walk did not, until the cap
/// is certain (see the module doc), and writes the output lines into `capture`.
fn collect(
    search: &Search,
    candidates: Vec<Candidate>,
    max_count: u64,
    capture: Capture,
) -> Report {
    let (paths, done): (Vec<PathBuf>, Vec<Option<Outcome>>) =
        candidates.into_iter().map(|c| (c.path, c.outcome)).unzip();
    let unsearched = done.iter().filter(|outcome| outcome.is_none()).count();
    let threads = search::threads();
    let pipeline = Pipeline {
        search,
        paths: &paths,
        window: 8 * threads,
        state: Mutex::new(PipeState {
            next: 0,
            consumed: 0,
            certain: 0,
            stop: false,
            workers_waiting: 0,
            consumer_waiting: false,
            done,
        }),
        ready: Condvar::new(),
        room: Condvar::new(),
        cancel: AtomicBool::new(false),
        searched: AtomicU64::new(0),
    };
    let mut report = Report {
        capture,
        matches: 0,
        files: 0,
        cut: false,
        lossy: false,
        binary: 0,
        unreadable: 0,
        searched: 0,
    };
    std::thread::scope(|scope| {
        for _ in 0..threads.min(unsearched) {
            scope.spawn(|| pipeline.work());
        }
        for (k, path) in paths.iter().enumerate() {
            let outcome = pipeline.take(k);
            match outcome {
                Outcome::Binary => report.binary += 1,
                Outcome::Unreadable => report.unreadable += 1,
                Outcome::Matches { lines, lossy } => {
                    let shown = search.shown.path(path);
                    let mut any = false;
                    for line in &lines {
                        if report.matches == max_count {
                            report.cut = true;
                            break;
                        }
                        report
                            .capture
                            .push_str(&format!("{shown}:{}:{}\n", line.number, line.text));
                        report.matches += 1;
                        any = true;
                    }
                    report.lossy |= lossy && any;
                    report.files += u64::from(any);
                }
            }
            if report.cut {
                break;
            }
        }
        pipeline.finish();
    });
    report.searched = pipeline.searched.load(Ordering::Relaxed);
    report
}

/// The bounded search pool of phase 2.
struct Pipeline<'a> {
    search: &'a Search,
    /// Candidates, newest first.
    paths: &'a [PathBuf],
    /// How far past the consumer the workers may run.
    window: usize,
    state: Mutex<PipeState>,
    /// Signalled when a result arrives (the consumer waits on it).
    ready: Condvar,
    /// Signalled when the consumer moves on or stops (workers wait on it).
    room: Condvar,
    /// Set when the output is certain: searches in flight give up.
    cancel: AtomicBool,
    /// Files opened by the workers.
    searched: AtomicU64,
}

struct PipeState {
    /// The next candidate a worker may take (the ones before it are taken or done).
    next: usize,
    /// How many results the consumer has taken.
    consumed: usize,
    /// Matches in the results taken so far.
    certain: u64,
    stop: bool,
    /// Workers waiting for room (only then is there anybody to wake: a wake-up is a system
    /// call, too dear to make for every one of a hundred thousand files).
    workers_waiting: usize,
    /// Whether the consumer waits for a result.
    consumer_waiting: bool,
    /// Results by candidate index; the walk's results are there from the start.
    done: Vec<Option<Outcome>>,
}

impl Pipeline<'_> {
    /// A worker: takes the next unsearched candidate within the window and searches it.
    fn work(&self) {
        let mut files = FileSearcher::new(self.search);
        loop {
            let (index, cap) = {
                let mut state = lock(&self.state);
                loop {
                    if state.stop {
                        return;
                    }
                    while state.next < state.done.len() && state.done[state.next].is_some() {
                        state.next += 1;
                    }
                    if state.next >= state.done.len() {
                        return;
                    }
                    if state.next < state.consumed + self.window {
                        break;
                    }
                    state.workers_waiting += 1;
                    state = self
                        .room
                        .wait(state)
                        .unwrap_or_else(PoisonError::into_inner);
                    state.workers_waiting -= 1;
                }
                let index = state.next;
                state.next += 1;
                // The results taken so far are certain; this file can only add what is
                // still missing.
                (index, self.search.cap.saturating_sub(state.certain).max(1))
            };
            self.searched.fetch_add(1, Ordering::Relaxed);
            let outcome = match open(&self.paths[index]) {
                Some((file, size, _)) => files.search(file, size, cap, &self.cancel),
                None => Outcome::Unreadable,
            };
            let mut state = lock(&self.state);
            state.done[index] = Some(outcome);
            if state.consumer_waiting {
                self.ready.notify_one();
            }
        }
    }

    /// The consumer: waits for the result of candidate `k` and takes it.
    fn take(&self, k: usize) -> Outcome {
        let mut state = lock(&self.state);
        loop {
            if let Some(outcome) = state.done[k].take() {
                state.next = state.next.max(k + 1);
                state.consumed = k + 1;
                if let Outcome::Matches { lines, .. } = &outcome {
                    state.certain += lines.len() as u64;
                }
                if state.certain >= self.search.cap {
                    state.stop = true;
                    self.cancel.store(true, Ordering::Relaxed);
                }
                if state.workers_waiting > 0 {
                    self.room.notify_all();
                }
                return outcome;
            }
            state.consumer_waiting = true;
            state = self
                .ready
                .wait(state)
                .unwrap_or_else(PoisonError::into_inner);
            state.consumer_waiting = false;
        }
    }

    /// Stops the workers (the consumer is done).
    fn finish(&self) {
        let mut state = lock(&self.state);
        state.stop = true;
        self.cancel.store(true, Ordering::Relaxed);
        self.room.notify_all();
    }
}

/// Locks a mutex; a worker that panicked cannot leave the counts inconsistent in a way
/// that matters more than losing the search, so a poisoned lock is used as it is.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The output text and metadata of a finished search.
fn finish(report: Report, skipped: Skipped, max_count: u64) -> ToolOutput {
    let Report {
        mut capture,
        matches,
        files,
        cut,
        lossy,
        ..
    } = report;
    if matches == 0 {
        capture.push_str("No matches found.\n");
    }
    let anything_skipped = skipped.over_size
        + skipped.binary
        + skipped.secret
        + skipped.refused
        + skipped.pruned
        + skipped.ignored
        + skipped.unreadable
        > 0;
    if matches == 0 || cut || anything_skipped {
        let mut parts = vec![
            search::count(skipped.over_size, "file over 1 MB", "files over 1 MB"),
            format!("{} binary", skipped.binary),
            format!("{} secret-looking", skipped.secret),
        ];
        parts.extend(search::walk_parts(
            (skipped.pruned, &skipped.pruned_names),
            (skipped.ignored, &skipped.ignored_names),
            skipped.refused,
            skipped.unreadable,
        ));
        let cut_text = if cut {
            format!(
                "cut at {}, more exist (raise max_count or narrow the search)",
                search::count(max_count, "match", "matches")
            )
        } else {
            "not cut".to_string()
        };
        capture.push_str(&search::summary_line(&parts, &cut_text));
        capture.push_str("\n");
    }
    let mut output = ToolOutput::captured(capture)
        .with("matches", matches)
        .with("files", files)
        .with("cut", cut)
        .with("skipped_over_1mb", skipped.over_size)
        .with("skipped_binary", skipped.binary)
        .with("skipped_secret", skipped.secret)
        .with("skipped_policy", skipped.refused)
        .with("pruned_dirs", skipped.pruned)
        .with("skipped_ignored", skipped.ignored)
        .with("unreadable", skipped.unreadable);
    if lossy {
        output = output.with("lossy", true);
    }
    output
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::{PermissionGate, Refusal, Session};
    use crate::tool::Body;
    use std::time::Duration;

    /// A gate that decides reads by the policy's built-in defaults (`read <secret file>` asks,
    /// and asks are refused) and lets every call through.
    struct NoSecrets;

    impl PermissionGate for NoSecrets {
        fn check(&self, _: &CallContext, _: &[Access]) -> Result<(), Refusal> {
            Ok(())
        }
        fn read_judge(&self, ctx: &CallContext, root: &Path) -> ReadJudge {
            let policy = crate::policy::Policy {
                dir: ctx.session.dir.clone(),
                ..Default::default()
            };
            ReadJudge::new(&policy, &policy.chain("build"), &[], root)
        }
    }

    fn write(dir: &Path, rel: &str, content: &[u8], secs: u64) {
        let path = dir.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, content).unwrap();
        let file = File::options().write(true).open(&path).unwrap();
        file.set_modified(SystemTime::UNIX_EPOCH + Duration::from_secs(secs))
            .unwrap();
    }

    fn run(session: &Session, args: Value) -> (String, Map<String, Value>, bool) {
        let ctx = CallContext::new(session, "grep");
        let output = execute(&ctx, args.as_object().unwrap().clone()).unwrap();
        let text = match output.body {
            Body::Text(text) | Body::Paged(text) => text,
            Body::Captured(capture) => capture.finish().text,
            Body::Parts(_) => unreachable!(),
        };
        (text, output.metadata, output.is_error)
    }

    #[test]
    fn a_match_deep_in_a_long_line_is_shown_in_a_window_with_its_column() {
        let mut line = "a".repeat(170_615);
        line.push_str("DeclareFunction");
        line.push_str(&"b".repeat(350_000));
        let start = line.find("DeclareFunction").unwrap();
        let (text, lossy) = show_window(line.as_bytes(), start);
        assert!(!lossy);
        assert!(text.starts_with("[col 170616] …aaa"), "{}", &text[..40]);
        assert!(text.contains("DeclareFunction"));
        assert!(text.ends_with("..."));
        assert!(text.chars().count() < MAX_LINE_CHARS + 40);
        // A window never starts inside a character.
        let wide = format!("{}x", "é".repeat(150));
        let (text, _) = show_window(wide.as_bytes(), wide.len() - 1);
        assert!(
            text.starts_with(&format!("[col {}] …é", wide.len())),
            "{text}"
        );
    }

    #[test]
    fn lines_lose_their_ending_and_are_cut_on_a_character_boundary() {
        assert_eq!(show_line(b"plain\n"), ("plain".to_string(), false));
        assert_eq!(show_line(b"dos\r\n"), ("dos".to_string(), false));
        assert_eq!(show_line(b"no newline"), ("no newline".to_string(), false));
        let exact = "é".repeat(MAX_LINE_CHARS);
        assert_eq!(show_line(exact.as_bytes()), (exact.clone(), false));
        let long = format!("{exact}ü and more");
        let (text, lossy) = show_line(long.as_bytes());
        assert_eq!(text, format!("{exact}..."));
        assert!(!lossy);
        let huge = "€".repeat(50_000);
        let (text, _) = show_line(huge.as_bytes());
        assert_eq!(text.chars().count(), MAX_LINE_CHARS + 3);
        assert!(text.ends_with("€..."));
    }

    #[test]
    fn invalid_bytes_are_replaced_and_reported_only_when_shown() {
        assert_eq!(
            show_line(b"caf\xe9 ok\n"),
            ("caf\u{fffd} ok".to_string(), true)
        );
        let mut late = vec![b'a'; 3_000];
        late.push(0xff);
        let (text, lossy) = show_line(&late);
        assert_eq!(text, format!("{}...", "a".repeat(MAX_LINE_CHARS)));
        assert!(!lossy, "the bad byte is past the cut");
        let bad = vec![0xffu8; 3_000];
        let (text, lossy) = show_line(&bad);
        assert_eq!(text.chars().count(), MAX_LINE_CHARS + 3);
        assert!(lossy);
    }

    #[test]
    fn include_matches_base_name_relative_path_or_shown_path_with_braces() {
        let search = Search {
            matcher: build_matcher("x").unwrap(),
            include: None,
            root: PathBuf::from("/w/pkg"),
            shown: Shown::new(Path::new("/w/pkg"), "pkg"),
            judge: ReadJudge::allow_all(),
            cap: 1,
        };
        let cases = [
            ("*.rs", "/w/pkg/src/a.rs", true),
            ("*.rs", "/w/pkg/src/a.rsx", false),
            ("*.{rs,toml}", "/w/pkg/Cargo.toml", true),
            ("*.{rs,toml}", "/w/pkg/deep/er/x.rs", true),
            ("*.{rs,toml}", "/w/pkg/x.md", false),
            ("src/*.rs", "/w/pkg/src/a.rs", true),
            ("src/*.rs", "/w/pkg/src/sub/a.rs", false),
            ("src/**/*.rs", "/w/pkg/src/sub/a.rs", true),
            ("pkg/src/*.rs", "/w/pkg/src/a.rs", true),
            ("pkg/*.rs", "/w/pkg/src/a.rs", false),
            ("a?.[ch]", "/w/pkg/ab.h", true),
            ("a?.[ch]", "/w/pkg/ab.o", false),
            ("{Makefile,*.mk}", "/w/pkg/build/rules.mk", true),
            (".env*", "/w/pkg/.env.local", true),
        ];
        for (pattern, path, want) in cases {
            let include = Include::new(pattern).unwrap();
            assert_eq!(
                include.matches(&search, Path::new(path)),
                want,
                "{pattern} vs {path}"
            );
        }
        assert!(Include::new("*.{rs").unwrap_err().contains("*.{rs"));
    }

    #[test]
    fn regex_errors_quote_the_callers_pattern() {
        let err = build_matcher("foo(bar").unwrap_err();
        assert!(err.contains("foo(bar"), "{err}");
        assert!(err.contains("unclosed group"), "{err}");
        assert!(build_matcher(r"a\nb").is_err());
        assert!(build_matcher(r"fn\s+main$").is_ok());
    }

    #[test]
    fn huge_patterns_and_regexes_are_errors() {
        let err = build_matcher(&"a".repeat(MAX_PATTERN_BYTES + 1)).unwrap_err();
        assert!(err.contains("at most 65536"), "{err}");
        let err = build_matcher("a{1000}{1000}").unwrap_err();
        assert!(err.contains("size limit"), "{err}");
        let names: Vec<String> = (0..5_000).map(|i| format!("name_{i}")).collect();
        assert!(build_matcher(&names.join("|")).is_ok());
    }

    #[test]
    fn newest_first_with_the_cap_certain_and_the_rest_never_read() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        // 100 files, each with three matches, the newest being f099.
        for i in 0..100u64 {
            write(
                dir,
                &format!("f{i:03}.txt"),
                b"hit 1\nmiss\nhit 2\nhit 3\n",
                1_000 + i,
            );
        }
        let session = Session::new("t", dir);
        let (text, meta, _) = run(&session, json!({"pattern": "hit", "max_count": 4}));
        assert_eq!(
            text,
            "f099.txt:1:hit 1\nf099.txt:3:hit 2\nf099.txt:4:hit 3\nf098.txt:1:hit 1\n\
             [skipped: 0 files over 1 MB, 0 binary, 0 secret-looking, 0 skip directories \
             pruned; cut at 4 matches, more exist (raise max_count or narrow the search)]\n"
        );
        assert_eq!(meta["matches"], 4);
        assert_eq!(meta["files"], 2);
        assert_eq!(meta["cut"], true);

        // Phase 2 alone: the consumer stops after two files, and the workers, which may
        // run at most a window ahead of it, never open most of the rest.
        let search = Search {
            matcher: build_matcher("hit").unwrap(),
            include: None,
            root: dir.to_path_buf(),
            shown: Shown::new(dir, "."),
            judge: ReadJudge::allow_all(),
            cap: 5,
        };
        let mut candidates: Vec<Candidate> = (0..100u64)
            .map(|i| Candidate {
                path: dir.join(format!("f{i:03}.txt")),
                mtime: SystemTime::UNIX_EPOCH + Duration::from_secs(1_000 + i),
                outcome: None,
            })
            .collect();
        candidates.sort_by(|a, b| search::newest_first((a.mtime, &a.path), (b.mtime, &b.path)));
        let report = collect(&search, candidates, 4, Capture::new(Default::default()));
        assert!(report.cut);
        let window = 8 * search::threads() as u64;
        assert!(
            report.searched <= 2 + window,
            "{} files read",
            report.searched
        );
        assert_eq!(report.capture.finish().text.lines().count(), 4);
    }

    #[test]
    fn exactly_max_count_matches_is_not_cut() {
        let tmp = tempfile::tempdir().unwrap();
        write(tmp.path(), "a.txt", b"hit\nhit\n", 10);
        write(tmp.path(), "b.txt", b"hit\n", 20);
        let session = Session::new("t", tmp.path());
        let (text, meta, _) = run(&session, json!({"pattern": "hit", "max_count": 3}));
        assert_eq!(text, "b.txt:1:hit\na.txt:1:hit\na.txt:2:hit\n");
        assert_eq!(meta["cut"], false);
    }

    #[test]
    fn a_max_count_of_zero_or_less_means_the_default() {
        let tmp = tempfile::tempdir().unwrap();
        write(tmp.path(), "a.txt", b"hit\nhit\n", 10);
        let session = Session::new("t", tmp.path());
        for n in [0, -3] {
            let (text, meta, _) = run(&session, json!({"pattern": "hit", "max_count": n}));
            assert_eq!(text, "a.txt:1:hit\na.txt:2:hit\n", "{n}");
            assert_eq!(meta["cut"], false);
        }
    }

    #[test]
    fn binary_files_are_skipped_whole_and_counted() {
        let tmp = tempfile::tempdir().unwrap();
        let mut data = b"hit before the nul\n".to_vec();
        data.extend(std::iter::repeat_n(b'x', 200_000));
        data.extend(b"\0\nhit after\n");
        write(tmp.path(), "late-nul.bin", &data, 30);
        write(tmp.path(), "early.bin", b"\0hit\n", 20);
        write(tmp.path(), "text.txt", b"hit\n", 10);
        let session = Session::new("t", tmp.path());
        let (text, meta, _) = run(&session, json!({"pattern": "hit"}));
        assert_eq!(
            text,
            "text.txt:1:hit\n[skipped: 0 files over 1 MB, 2 binary, 0 secret-looking, \
             0 skip directories pruned; not cut]\n"
        );
        assert_eq!(meta["skipped_binary"], 2);
        // The whole file is judged, even when its first line already fills the cap.
        let (text, _, _) = run(&session, json!({"pattern": "hit", "max_count": 1}));
        assert!(text.starts_with("text.txt:1:hit\n[skipped: 0 files over 1 MB, 2 binary"));
    }

    #[test]
    fn utf16_files_with_a_byte_order_mark_are_text() {
        let tmp = tempfile::tempdir().unwrap();
        let mut data = vec![0xFF, 0xFE];
        data.extend(
            "first\r\nhit here\r\n"
                .encode_utf16()
                .flat_map(u16::to_le_bytes),
        );
        write(tmp.path(), "wide.txt", &data, 10);
        let session = Session::new("t", tmp.path());
        let (text, meta, _) = run(&session, json!({"pattern": "hit"}));
        assert_eq!(text, "wide.txt:2:hit here\n");
        assert_eq!(meta["skipped_binary"], 0);
    }

    #[test]
    fn secret_files_are_searched_only_when_the_policy_permits() {
        let tmp = tempfile::tempdir().unwrap();
        write(tmp.path(), ".env", b"TOKEN=hit\n", 30);
        write(tmp.path(), "sub/.env.local", b"hit\n", 20);
        write(tmp.path(), "jest.env.js", b"hit\n", 10);
        let mut session = Session::new("t", tmp.path());
        let (text, meta, _) = run(&session, json!({"pattern": "hit"}));
        assert_eq!(
            text,
            ".env:1:TOKEN=hit\nsub/.env.local:1:hit\njest.env.js:1:hit\n"
        );
        assert_eq!(meta["skipped_secret"], 0);
        session.gate = Box::new(NoSecrets);
        let (text, meta, _) = run(&session, json!({"pattern": "hit"}));
        assert_eq!(
            text,
            "jest.env.js:1:hit\n[skipped: 0 files over 1 MB, 0 binary, 2 secret-looking, \
             0 skip directories pruned; not cut]\n"
        );
        assert_eq!(meta["skipped_secret"], 2);
        // A file given as the root is the call's own access, decided by the gate before
        // the tool runs (the integration tests see it refused); the tool does not ask again.
        let (text, _, _) = run(&session, json!({"pattern": "hit", "path": ".env"}));
        assert_eq!(text, ".env:1:TOKEN=hit\n");
    }

    #[test]
    fn access_is_read_of_the_root() {
        let tmp = tempfile::tempdir().unwrap();
        let session = Session::new("t", tmp.path());
        let ctx = CallContext::new(&session, "grep");
        let def = definition();
        let args = |v: Value| v.as_object().unwrap().clone();
        let one = def.accesses(&ctx, &args(json!({"pattern": "x"})));
        assert_eq!(one.len(), 1);
        assert_eq!(
            (one[0].permission.as_str(), one[0].pattern.as_str()),
            ("read", ".")
        );
        let empty = def.accesses(&ctx, &args(json!({"pattern": "x", "path": ""})));
        assert_eq!(empty[0].pattern, ".");
        let sub = def.accesses(&ctx, &args(json!({"pattern": "x", "path": "src/./lib"})));
        assert_eq!(sub[0].pattern, "src/lib");
        assert_eq!(
            sub[0].path.as_deref(),
            Some(session.dir.join("src/lib").as_path())
        );
        let env = def.accesses(&ctx, &args(json!({"pattern": "x", "path": ".env"})));
        assert_eq!(env[0].pattern, ".env");
        let outside = def.accesses(&ctx, &args(json!({"pattern": "x", "path": "/etc"})));
        assert_eq!(outside[0].pattern, "/etc");
    }
}
