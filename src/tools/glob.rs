//! `glob`: file names matching a glob pattern.
//!
//! Pattern syntax: `*` and `?` within one path component, `[...]` / `[!...]` classes,
//! `{a,b}` alternatives, `**` as a whole component for any number of directories, and a
//! backslash to escape. The pattern is relative to `path` (default: the working
//! directory). Its leading literal components are resolved like a path (so
//! `node_modules/react/*.json`, `../lib/*.rs` or an absolute pattern start the walk
//! there; the access requested is `read` of that starting directory); the rest is matched
//! against paths below it.
//!
//! Two modes, as in the spec: without `**` the pattern matches at exactly as many levels
//! as it has components (the walk goes no deeper) and directories match too; with `**`
//! the whole tree below is walked and only non-directories match. Both prune the skip
//! directories, leave out what ignore files rule out unless `include_ignored` is set
//! ([`crate::ignores`]; an ignored directory is counted when the walk wanted it, an
//! ignored file when it matches), and follow no symlinks. A path the policy does not let the caller `read`
//! (the decision the read tool would get, without asking) is not listed, and a directory
//! whose every path it refuses is not entered; both are counted. Results are shown relative to `--dir` (absolute
//! outside it), newest first by modification time (ties by path), at most 1,000; the
//! summary line of [`crate::search`] says how many more matched, how many skip
//! directories were pruned and how many paths the policy refused.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::Ordering;
use std::time::SystemTime;

use globset::GlobSet;
use ignore::DirEntry;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::policy::ReadJudge;
use crate::schema;
use crate::search::{self, Shown};
use crate::session::CallContext;
use crate::tool::{Access, ToolDef, ToolDoc, ToolOutput, parse_args};

/// Results shown at most (`maxGlobResults`).
const MAX_RESULTS: usize = 1_000;

/// The `glob` tool's definition.
pub fn definition() -> ToolDef {
    ToolDef {
        name: "glob",
        summary: "Find files by name with a glob pattern",
        description: "Find files whose path matches a glob pattern, e.g. `**/*.rs`, \
            `src/**/*.{ts,tsx}` or `*.md`. `*` and `?` match within one path component, \
            `**` matches any number of directories, `[abc]` a class, `{a,b}` alternatives. \
            Without `**` the pattern matches at one directory level per component and \
            directories match too. Returns paths relative to the working directory, newest \
            first, at most 1000. `path` is the directory to search in (default: the working \
            directory). Folders that are not the project's own work are not searched (.git, \
            .tinytool, node_modules, vendor, __pycache__, .tox and other caches, Python \
            virtual environments by their pyvenv.cfg, folders holding CACHEDIR.TAG, target \
            beside Cargo.toml; name one as `path` to search it), paths that .gitignore, .ignore, .git/info/exclude or git's global \
            excludes ignore are not listed (set `include_ignored: true` to list them), and \
            paths the policy does not let you read are not listed; when any was skipped or \
            the list was cut, the last line, starting with `[`, says so.",
        permission: "read",
        schema: parameters,
        execute,
        access: Some(access),
        precheck: None,
        checkpoint: None,
        needs: None,
        after_changes: None,
        doc: ToolDoc {
            output: "One path per line, relative to the working directory (absolute outside it), \
                newest first by modification time (ties by path), at most 1000. When nothing \
                matches, the first line says `No files matched the pattern.` The output ends with a summary line \
                such as `[skipped: 2 skip directories pruned; not cut]` or `[skipped: 0 skip \
                directories pruned; cut at 1000 files, 234 more matched]` whenever a skip \
                directory was pruned, an ignore file left something out, a path was refused \
                or the list was cut, and always when nothing matched. `N ignored (target/, \
                dist/; include_ignored: true searches them)` counts the directories the walk \
                would have entered and the matching files that ignore files ruled out \
                (read as ripgrep and fd read them: `.ignore` everywhere, `.gitignore`, \
                `.git/info/exclude` and git's global excludes inside a git repository) and \
                names up to three, shallowest first. A matching path the policy does not let you `read` (the \
                decision the read tool would get, without asking) is not listed; `N refused by \
                the policy` counts those paths plus each directory left out whole because the \
                policy refuses every path in it. metadata: count (paths shown), total (paths \
                matched and listed), cut, pruned_dirs, skipped_ignored, skipped_policy, \
                unreadable.",
            errors: "`Invalid glob pattern: ...` quoting the problem (also for a pattern \
                over 16384 bytes); `The glob pattern is \
                empty`; `Path not found: PATH` (with `Did you mean: PATH?` naming the path probably meant, as read does); `PATH is not a directory`.",
            examples: &[
                (
                    "All Rust files below the working directory",
                    "tinytool glob --pattern '**/*.rs'",
                ),
                (
                    "TypeScript sources under src, newest first",
                    "tinytool glob --pattern 'src/**/*.{ts,tsx}'",
                ),
                (
                    "Markdown files at the top level of docs",
                    "tinytool glob --pattern '*.md' --path docs",
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
                "description": "Glob pattern, e.g. `**/*.rs` or `src/*.{ts,tsx}` (supports `**`)."
            },
            "path": {
                "type": "string",
                "description": "Directory to search in (default: the working directory)."
            },
            "include_ignored": {
                "type": "boolean",
                "description": "Also list files and directories that .gitignore, .ignore, .git/info/exclude or git's global excludes ignore (default false)."
            }
        }),
        &["pattern"],
    )
}

/// A glob needs `read` of the directory its walk starts in: `path` (or `.`) joined with
/// the pattern's literal leading components.
fn access(ctx: &CallContext, args: &Map<String, Value>) -> Vec<Access> {
    let pattern = args
        .get("pattern")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let root = search::root_arg(args);
    let (prefix, _) = split_literal(pattern);
    vec![Access::path(ctx, "read", &start_of(root, &prefix))]
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct GlobArgs {
    pattern: String,
    path: Option<String>,
    include_ignored: Option<bool>,
}

fn execute(ctx: &CallContext, args: Map<String, Value>) -> anyhow::Result<ToolOutput> {
    let args: GlobArgs = match parse_args(args) {
        Ok(args) => args,
        Err(output) => return Ok(output),
    };
    if args.pattern.is_empty() {
        return Ok(ToolOutput::error(
            "The glob pattern is empty: give one such as `**/*.rs` or `*.md`",
        ));
    }
    let root_arg = search::root_or_dot(args.path.as_deref());
    let root = ctx.resolve(root_arg);
    let root_shown = ctx.display(&root);
    match search::root_metadata(ctx, &root, &root_shown) {
        Ok(meta) if meta.is_dir() => {}
        Ok(_) => {
            return Ok(ToolOutput::error(format!(
                "{root_shown} is not a directory: glob's path is the directory to search in"
            )));
        }
        Err(output) => return Ok(output),
    }
    let (prefix, rest) = split_literal(&args.pattern);
    let rest = rest.trim_end_matches('/');
    let glob = match search::compile_glob(rest) {
        Ok(glob) => glob,
        Err(err) => return Ok(ToolOutput::error(format!("Invalid glob pattern: {err}"))),
    };
    let start = ctx.resolve(&start_of(root_arg, &prefix));
    let shown = Shown::new(&start, &ctx.display(&start));
    let found = if rest.is_empty() {
        // A pattern without wildcards names one path: it matches when it exists. The
        // call's own `read` access was of that very path, so the gate has decided it.
        let mut found = Found::default();
        if let Ok(meta) = std::fs::symlink_metadata(&start) {
            found.matches.push((
                start.clone(),
                meta.modified().unwrap_or(SystemTime::UNIX_EPOCH),
            ));
        }
        found
    } else if std::fs::metadata(&start).is_ok_and(|m| m.is_dir()) {
        let double = rest.contains("**");
        // Without `**` each component matches one level; a `/` inside braces can add a
        // level, so every `/` counts.
        let depth = (!double).then(|| rest.matches('/').count() + 1);
        let judge = ctx.session.gate.read_judge(ctx, &start);
        let include_ignored = args.include_ignored.unwrap_or(false);
        let not_project = ctx.session.config.not_project_for_search();
        let walk_in = WalkIn {
            start: &start,
            shown: &shown,
            judge: &judge,
            include_ignored,
            not_project: &not_project,
        };
        walk(&walk_in, &glob, rest, depth, double)
    } else {
        Found::default()
    };
    Ok(finish(found, &shown))
}

/// Splits a pattern into its leading literal components (a path, possibly absolute or
/// starting with `~`) and the rest, which holds the first wildcard.
fn split_literal(pattern: &str) -> (String, &str) {
    const META: &[char] = &['*', '?', '[', ']', '{', '}', '\\'];
    let mut end = 0;
    for (i, component) in pattern.split_inclusive('/').enumerate() {
        if component.contains(META) {
            break;
        }
        if i == 0 && component == "/" {
            end = 1;
            continue;
        }
        end += component.len();
    }
    let (prefix, rest) = pattern.split_at(end);
    let prefix = match prefix.trim_end_matches('/') {
        "" if prefix.starts_with('/') => "/",
        trimmed => trimmed,
    };
    (prefix.to_string(), rest)
}

/// The path argument of the walk's start: `root` joined with the literal prefix, unless
/// the prefix is absolute (or home-relative) on its own.
fn start_of(root: &str, prefix: &str) -> String {
    if prefix.is_empty() {
        root.to_string()
    } else if prefix.starts_with('/') || prefix == "~" || prefix.starts_with("~/") {
        prefix.to_string()
    } else {
        format!("{}/{prefix}", root.trim_end_matches('/'))
    }
}

/// One matcher per `/`-separated component of a simple-mode pattern, or `None` when a `/`
/// sits inside braces or a class (then a component is not one level, and every directory
/// is entered).
fn component_globs(rest: &str) -> Option<Vec<GlobSet>> {
    let mut braces = 0usize;
    let mut class = false;
    let mut chars = rest.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                chars.next();
            }
            '[' if !class => {
                class = true;
                // A `]` right after `[` or `[!` is a member, not the end.
                chars.next_if_eq(&'!');
                chars.next_if_eq(&']');
            }
            ']' if class => class = false,
            '{' if !class => braces += 1,
            '}' if !class => braces = braces.saturating_sub(1),
            '/' if class || braces > 0 => return None,
            _ => {}
        }
    }
    if class || braces > 0 {
        return None;
    }
    rest.split('/')
        .map(|component| search::compile_glob(component).ok())
        .collect()
}

/// Where and how a walk goes.
struct WalkIn<'a> {
    start: &'a Path,
    shown: &'a Shown,
    judge: &'a ReadJudge,
    /// Whether ignore files are left unapplied.
    include_ignored: bool,
    /// The folders that are not the project's (the config's list).
    not_project: &'a crate::skip_dirs::NotProject,
}

/// What the walk found.
#[derive(Default)]
struct Found {
    matches: Vec<(PathBuf, SystemTime)>,
    /// Skip directories pruned, and the first few of them as shown (with why).
    pruned: u64,
    pruned_names: Vec<String>,
    /// Entries ignore files ruled out, and the first few of them as shown.
    ignored: u64,
    ignored_names: Vec<String>,
    /// Matching paths, and whole directories, the policy does not let the caller read.
    refused: u64,
    unreadable: u64,
}

/// Walks `start` and keeps the entries whose path below it matches `glob`. In simple mode
/// (`max_depth` set) a directory above the last level is entered only when its name
/// matches the pattern's component for that level, so neither the walk nor the pruned
/// count reaches directories the pattern rules out. A matching entry is kept only when
/// `judge` lets the caller read it. Ignore files apply unless the call includes ignored
/// paths; an ignored file is counted only when it matches the pattern.
fn walk(
    walk_in: &WalkIn,
    glob: &GlobSet,
    rest: &str,
    max_depth: Option<usize>,
    files_only: bool,
) -> Found {
    let WalkIn {
        start,
        shown,
        judge,
        include_ignored,
        not_project,
    } = *walk_in;
    let wants: Option<search::Wants> = max_depth.map(|max| {
        let (glob, start) = (glob.clone(), start.to_path_buf());
        let components = component_globs(rest);
        Box::new(move |path: &Path, depth: usize| {
            if depth >= max {
                return glob.is_match(path.strip_prefix(&start).unwrap_or(path));
            }
            let (Some(components), Some(name)) = (&components, path.file_name()) else {
                return true;
            };
            components
                .get(depth - 1)
                .is_none_or(|component| component.is_match(name))
        }) as search::Wants
    });
    let counts_file = {
        let (glob, start) = (glob.clone(), start.to_path_buf());
        Box::new(move |path: &Path| glob.is_match(path.strip_prefix(&start).unwrap_or(path)))
            as search::CountsFile
    };
    let ignoring = search::Ignoring {
        not_project: not_project.clone(),
        ..search::Ignoring::new(start, include_ignored, Some(counts_file))
    };
    let (walker, counts) = search::walker(start, max_depth, wants, judge, ignoring);
    let out = Mutex::new(Found::default());
    search::walk_with_locals(
        walker,
        Found::default,
        |local, entry| visit(local, entry, start, glob, files_only, judge),
        |local| {
            let mut out = out.lock().unwrap_or_else(|e| e.into_inner());
            out.refused += local.refused;
            out.unreadable += local.unreadable;
            out.matches.extend(local.matches);
        },
    );
    let mut found = out.into_inner().unwrap_or_else(|e| e.into_inner());
    found.pruned = counts.pruned.load(Ordering::Relaxed);
    found.pruned_names = counts.pruned_names(shown);
    found.refused += counts.refused.load(Ordering::Relaxed);
    found.ignored = counts.ignored.load(Ordering::Relaxed);
    found.ignored_names = counts.ignored_names(shown);
    found
}

/// Keeps an entry of one walker thread when its path below `start` matches `glob`.
fn visit(
    local: &mut Found,
    entry: Result<DirEntry, ignore::Error>,
    start: &Path,
    glob: &GlobSet,
    files_only: bool,
    judge: &ReadJudge,
) {
    let Ok(entry) = entry else {
        local.unreadable += 1;
        return;
    };
    if entry.depth() == 0 {
        return;
    }
    let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
    if is_dir && files_only {
        return;
    }
    let rel = entry.path().strip_prefix(start).unwrap_or(entry.path());
    if !glob.is_match(rel) {
        return;
    }
    if !judge.permits(entry.path()) {
        local.refused += 1;
        return;
    }
    match entry.metadata() {
        Ok(meta) => {
            let mtime = meta.modified().unwrap_or(SystemTime::UNIX_EPOCH);
            local.matches.push((entry.into_path(), mtime));
        }
        Err(_) => local.unreadable += 1,
    }
}

/// The output: newest first, at most [`MAX_RESULTS`], and the summary line.
fn finish(mut found: Found, shown: &Shown) -> ToolOutput {
    let total = found.matches.len();
    let keep = total.min(MAX_RESULTS);
    if total > keep {
        found.matches.select_nth_unstable_by(keep - 1, |a, b| {
            search::newest_first((a.1, &a.0), (b.1, &b.0))
        });
        found.matches.truncate(keep);
    }
    found
        .matches
        .sort_unstable_by(|a, b| search::newest_first((a.1, &a.0), (b.1, &b.0)));
    let mut text = String::new();
    for (path, _) in &found.matches {
        text.push_str(&shown.path(path));
        text.push('\n');
    }
    if total == 0 {
        text.push_str("No files matched the pattern.\n");
    }
    let cut = total > keep;
    if total == 0
        || cut
        || found.pruned > 0
        || found.ignored > 0
        || found.refused > 0
        || found.unreadable > 0
    {
        let parts = search::walk_parts(
            (found.pruned, &found.pruned_names),
            (found.ignored, &found.ignored_names),
            found.refused,
            found.unreadable,
        );
        let cut_text = if cut {
            format!("cut at {keep} files, {} more matched", total - keep)
        } else {
            "not cut".to_string()
        };
        text.push_str(&search::summary_line(&parts, &cut_text));
        text.push('\n');
    }
    ToolOutput::text(text)
        .with("count", keep)
        .with("total", total)
        .with("cut", cut)
        .with("pruned_dirs", found.pruned)
        .with("skipped_ignored", found.ignored)
        .with("skipped_policy", found.refused)
        .with("unreadable", found.unreadable)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::Session;

    #[test]
    fn literal_prefix_is_split_from_the_first_wildcard_component() {
        let cases = [
            ("**/*.rs", "", "**/*.rs"),
            ("*.md", "", "*.md"),
            ("src/*.rs", "src", "*.rs"),
            ("src/lib/**/x.{rs,go}", "src/lib", "**/x.{rs,go}"),
            ("node_modules/react/*.json", "node_modules/react", "*.json"),
            ("src/main.rs", "src/main.rs", ""),
            ("/etc/*.conf", "/etc", "*.conf"),
            ("/", "/", ""),
            ("../lib/*.rs", "../lib", "*.rs"),
            ("./*.rs", ".", "*.rs"),
            ("src/{a,b/c}/*.rs", "src", "{a,b/c}/*.rs"),
            ("a\\*b/*.rs", "", "a\\*b/*.rs"),
            ("docs/", "docs", ""),
        ];
        for (pattern, prefix, rest) in cases {
            let (p, r) = split_literal(pattern);
            assert_eq!((p.as_str(), r), (prefix, rest), "{pattern}");
        }
    }

    #[test]
    fn components_split_only_where_a_slash_separates_levels() {
        let names = |rest: &str| component_globs(rest).map(|globs| globs.len());
        assert_eq!(names("s?c/[ab].*"), Some(2));
        assert_eq!(names("*/*/*.rs"), Some(3));
        assert_eq!(names("*.{rs,toml}"), Some(1));
        assert_eq!(names("{a,b/c}/*.rs"), None);
        assert_eq!(names("[/]x/*"), None);
        assert_eq!(names("[]/]x/*"), None);
        assert_eq!(names("a\\{/*"), Some(2));
        let globs = component_globs("s?c/[ab].*").unwrap();
        assert!(globs[0].is_match("src") && !globs[0].is_match("node_modules"));
        assert!(globs[1].is_match("a.rs") && !globs[1].is_match("c.rs"));
    }

    #[test]
    fn the_walk_starts_at_path_joined_with_the_prefix() {
        assert_eq!(start_of(".", ""), ".");
        assert_eq!(start_of(".", "src"), "./src");
        assert_eq!(start_of("pkg/", "src"), "pkg/src");
        assert_eq!(start_of("pkg", "/etc"), "/etc");
        assert_eq!(start_of("pkg", "~/notes"), "~/notes");
    }

    #[test]
    fn access_is_read_of_where_the_walk_starts() {
        let tmp = tempfile::tempdir().unwrap();
        let session = Session::new("t", tmp.path());
        let ctx = CallContext::new(&session, "glob");
        let def = definition();
        let pattern = |args: serde_json::Value| {
            let accesses = def.accesses(&ctx, args.as_object().unwrap());
            assert_eq!(accesses.len(), 1);
            assert_eq!(accesses[0].permission, "read");
            accesses[0].pattern.clone()
        };
        assert_eq!(pattern(json!({"pattern": "**/*.rs"})), ".");
        assert_eq!(pattern(json!({"pattern": "*.rs", "path": ""})), ".");
        assert_eq!(pattern(json!({"pattern": "*.rs", "path": "src"})), "src");
        assert_eq!(
            pattern(json!({"pattern": "lib/**/*.rs", "path": "src"})),
            "src/lib"
        );
        assert_eq!(pattern(json!({"pattern": "/etc/*.conf"})), "/etc");
        let parent = tmp.path().parent().unwrap().join("x");
        assert_eq!(
            pattern(json!({"pattern": "../x/*.rs"})),
            crate::paths::resolve_symlinks(&parent).to_string_lossy()
        );
    }
}
