//! The config files: the user's `$XDG_CONFIG_HOME/tinytool/config.json` (else
//! `~/.config/tinytool/config.json`), then the project's `<dir>/.tinytool/config.json`.
//!
//! ```json
//! {
//!   "formatters": {"*.rs": ["rustfmt", "{file}"]},
//!   "subagents": {"build": {"command": ["my-agent", "--print"], "writable": ["~/.cargo"]}},
//!   "task": {"deadline_ms": 1800000},
//!   "skills": {"paths": ["/opt/skills"]},
//!   "output": {"max_lines": 2000, "max_bytes": 51200, "keep_bytes": 268435456},
//!   "webfetch": {"allow_hosts": ["127.0.0.1:8080"]},
//!   "websearch": {"endpoint": "https://api.exa.ai/search"},
//!   "after_hook": ["my-hook", "--json"],
//!   "checkpoints": {"enabled": true, "max_file_bytes": 16777216, "max_bytes": 1073741824,
//!                   "keep_days": 7},
//!   "not_project": {"add": ["dist"], "keep": ["vendor"]},
//!   "images": {"max_bytes": 3932160, "max_pixels": 32000000, "max_side": 8000},
//!   "mcp": {"max_message_bytes": 8388608},
//!   "lsp": {"enabled": true, "warnings": false, "after_bash": false, "wait_ms": 2000,
//!           "cold_wait_ms": 30000,
//!           "idle_ms": 600000, "max_memory_mb": 2048, "max_lines": 20,
//!           "servers": {"python": {"command": ["basedpyright-langserver", "--stdio"]},
//!                       "typescript": {"max_memory_mb": 4096}, "go": {"enabled": false}}}
//! }
//! ```
//!
//! `not_project` changes the list of folders that are not the project's own work
//! ([`crate::skip_dirs`]): `add` names folders searches and checkpoints leave out too,
//! `keep` names built-in ones they walk after all (never `.git` or `.tinytool`). A
//! project's `add` applies to grep and glob only: a repository cannot take folders out of
//! the checkpoints that let the user undo. The sandbox's secret scan always uses the
//! built-in list.
//!
//! `images` caps what `read` sends of an image (`media`): one over `max_bytes`, or with a
//! side longer than `max_side`, is downscaled until it fits, one of more than `max_pixels`
//! pixels is refused before it is decoded. `mcp.max_message_bytes` caps every message the MCP server writes: a result that
//! would be larger is cut with a note (`mcp::results`).
//!
//! `lsp` sets the language servers whose diagnostics follow every change (`lsp`): a
//! project may lower its times and caps and turn it (or one language) off, never on, and
//! a server command the project names runs only when the user policy allows it.
//!
//! Validation is strict: bad JSON and unknown keys are usage errors that name the file,
//! line and column. The project file overrides the user file key by key (`output.*`,
//! `images.*` and `mcp.*` may only be lowered by it; `skills.paths`
//! adds to it, and a skill found there is read under the policy like any file the project
//! points at), except for `webfetch.allow_hosts`, `websearch.endpoint` and `after_hook`,
//! which are taken from the user file only (and `subagents.*.writable`, dropped from the
//! project file): a cloned repository cannot open the SSRF guard, redirect an API key, hook
//! every call, or open paths of the sandbox. A project's `checkpoints` may lower the caps
//! but cannot turn checkpoints off (`enabled` is the user's). Commands from config (formatters, subagents,
//! the after-hook) run only when the policy allows them as a `shell` call.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

/// The merged configuration in effect.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// Formatter command per file glob (`{file}` is replaced by the path), in file order.
    pub formatters: Vec<(String, Vec<String>)>,
    /// The globs of `formatters` and the kinds of `subagents` the project config set:
    /// their commands run only when the user policy allows them.
    pub from_project: std::collections::BTreeSet<String>,
    /// Subagent command per type.
    pub subagents: BTreeMap<String, Subagent>,
    /// Deadline of a background task job, in milliseconds.
    pub task_deadline_ms: Option<u64>,
    /// Extra skill directories, user's first, each with the file that named it.
    pub skill_paths: Vec<SkillPath>,
    /// `output.max_lines`.
    pub max_lines: Option<usize>,
    /// `output.max_bytes`.
    pub max_bytes: Option<usize>,
    /// `output.keep_bytes`: the cap of the spill folder `.tinytool/outputs/`.
    pub keep_bytes: Option<u64>,
    /// Hosts webfetch may reach even when they resolve to blocked addresses (user only).
    pub allow_hosts: Vec<String>,
    /// The websearch endpoint (user only).
    pub websearch_endpoint: Option<String>,
    /// The after-hook command (user only).
    pub after_hook: Option<Vec<String>>,
    /// `checkpoints.*`.
    pub checkpoints: Checkpoints,
    /// `not_project.add` of the user config: folder names searches and checkpoints leave
    /// out.
    pub not_project_added: Vec<String>,
    /// `not_project.add` of the project config: left out of searches only.
    pub not_project_added_by_project: Vec<String>,
    /// `not_project.keep` of either config: built-in names walked after all.
    pub not_project_kept: Vec<String>,
    /// `images.*`: what read sends of an image.
    pub images: crate::media::Caps,
    /// `mcp.max_message_bytes`: the largest message the MCP server writes.
    pub max_message_bytes: usize,
    /// `lsp.*`: the language servers behind every change.
    pub lsp: Lsp,
}

/// The `lsp` section in effect.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lsp {
    /// Whether diagnostics follow changes where a server is found.
    pub enabled: bool,
    /// Whether warnings are shown besides errors.
    pub warnings: bool,
    /// Whether a bash call that changed files gets their diagnostics too.
    pub after_bash: bool,
    /// How long a call waits for a warm server's diagnostics.
    pub wait_ms: u64,
    /// How long the call that starts a server waits for it.
    pub cold_wait_ms: u64,
    /// A server nobody asked for this long is stopped.
    pub idle_ms: u64,
    /// A server whose processes use more memory than this is stopped.
    pub max_memory_mb: u64,
    /// Problem lines shown in a result.
    pub max_lines: usize,
    /// Per language (`python`, `typescript`, `rust`, `go`, `c`): the server to run.
    pub servers: BTreeMap<String, LspServer>,
}

/// The languages `lsp.servers` may name (the language-server layer knows a server for each).
pub const LSP_LANGUAGES: &[&str] = &["python", "typescript", "rust", "go", "c"];

/// `lsp.servers.<language>`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LspServer {
    /// The command that runs the server (on stdio), instead of the standard one.
    pub command: Option<Vec<String>>,
    /// `false`: no server for the language.
    pub enabled: Option<bool>,
    /// The memory cap of this language's server, instead of `lsp.max_memory_mb`.
    pub max_memory_mb: Option<u64>,
    /// The project config named `command`: it runs only when the user policy allows it.
    pub from_project: bool,
}

impl Default for Lsp {
    fn default() -> Self {
        Lsp {
            enabled: true,
            warnings: false,
            after_bash: false,
            wait_ms: 2000,
            cold_wait_ms: 30_000,
            idle_ms: 600_000,
            max_memory_mb: 2048,
            max_lines: 20,
            servers: BTreeMap::new(),
        }
    }
}

/// The largest MCP message by default: 8 MiB, under the 10 MiB a TypeScript SDK client
/// reads on stdio.
pub const MAX_MESSAGE_BYTES: usize = 8 * 1024 * 1024;
/// The smallest `mcp.max_message_bytes` taken: room for an error and a note.
const MIN_MESSAGE_BYTES: usize = 64 * 1024;

/// The `checkpoints` section in effect.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Checkpoints {
    /// Whether calls are checkpointed (user config only).
    pub enabled: bool,
    /// Files larger than this are not kept (the checkpoint says so).
    pub max_file_bytes: u64,
    /// Cap of the blob store; oldest checkpoints are pruned beyond it, and a baseline
    /// larger than it turns checkpoints off for the project.
    pub max_bytes: u64,
    /// Checkpoints older than this many days are pruned.
    pub keep_days: u64,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            formatters: Vec::new(),
            from_project: Default::default(),
            subagents: BTreeMap::new(),
            task_deadline_ms: None,
            skill_paths: Vec::new(),
            max_lines: None,
            max_bytes: None,
            keep_bytes: None,
            allow_hosts: Vec::new(),
            websearch_endpoint: None,
            after_hook: None,
            checkpoints: Checkpoints::default(),
            not_project_added: Vec::new(),
            not_project_added_by_project: Vec::new(),
            not_project_kept: Vec::new(),
            images: crate::media::Caps::default(),
            max_message_bytes: MAX_MESSAGE_BYTES,
            lsp: Lsp::default(),
        }
    }
}

impl Default for Checkpoints {
    fn default() -> Self {
        Checkpoints {
            enabled: true,
            max_file_bytes: 16 * 1024 * 1024,
            max_bytes: 1024 * 1024 * 1024,
            keep_days: 7,
        }
    }
}

/// A `skills.paths` entry and whose choice it was: a folder the project config names is
/// read under the same policy as any file the project points at (`external_directory`
/// outside the project), one the user config names is the user's own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillPath {
    /// The path as written (relative paths are relative to the project directory).
    pub path: PathBuf,
    /// Whether the project config named it.
    pub from_project: bool,
}

/// A subagent type: the command that runs it.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Subagent {
    /// Program and arguments; the prompt arrives on stdin.
    pub command: Vec<String>,
    /// Paths writable for it inside the sandbox besides `--dir`, `/tmp` and `.tinytool/`
    /// (`~/` is the home directory); user config only: a project's are dropped.
    #[serde(default)]
    pub writable: Vec<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    formatters: serde_json::Map<String, serde_json::Value>,
    #[serde(default)]
    subagents: BTreeMap<String, Subagent>,
    #[serde(default)]
    task: Option<TaskSection>,
    #[serde(default)]
    skills: Option<SkillsSection>,
    #[serde(default)]
    output: Option<OutputSection>,
    #[serde(default)]
    webfetch: Option<WebfetchSection>,
    #[serde(default)]
    websearch: Option<WebsearchSection>,
    #[serde(default)]
    after_hook: Option<Vec<String>>,
    #[serde(default)]
    checkpoints: Option<CheckpointsSection>,
    #[serde(default)]
    not_project: Option<NotProjectSection>,
    #[serde(default)]
    images: Option<ImagesSection>,
    #[serde(default)]
    mcp: Option<McpSection>,
    #[serde(default)]
    lsp: Option<LspSection>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct LspSection {
    enabled: Option<bool>,
    warnings: Option<bool>,
    after_bash: Option<bool>,
    wait_ms: Option<u64>,
    cold_wait_ms: Option<u64>,
    idle_ms: Option<u64>,
    max_memory_mb: Option<u64>,
    max_lines: Option<usize>,
    #[serde(default)]
    servers: BTreeMap<String, LspServerSection>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct LspServerSection {
    command: Option<Vec<String>>,
    enabled: Option<bool>,
    max_memory_mb: Option<u64>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ImagesSection {
    max_bytes: Option<u64>,
    max_pixels: Option<u64>,
    max_side: Option<u32>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct McpSection {
    max_message_bytes: Option<usize>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct NotProjectSection {
    #[serde(default)]
    add: Vec<String>,
    #[serde(default)]
    keep: Vec<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct CheckpointsSection {
    enabled: Option<bool>,
    max_file_bytes: Option<u64>,
    max_bytes: Option<u64>,
    keep_days: Option<u64>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct TaskSection {
    deadline_ms: Option<u64>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct SkillsSection {
    #[serde(default)]
    paths: Vec<PathBuf>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct OutputSection {
    max_lines: Option<usize>,
    max_bytes: Option<usize>,
    keep_bytes: Option<u64>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct WebfetchSection {
    #[serde(default)]
    allow_hosts: Vec<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct WebsearchSection {
    endpoint: Option<String>,
}

/// tinytool's directory in the user's config home (`$XDG_CONFIG_HOME/tinytool`, else
/// `~/.config/tinytool`).
pub fn user_config_dir() -> Option<PathBuf> {
    if let Some(xdg) = std::env::var_os("XDG_CONFIG_HOME").filter(|v| !v.is_empty()) {
        let xdg = PathBuf::from(xdg);
        if xdg.is_absolute() {
            return Some(xdg.join("tinytool"));
        }
    }
    let home = std::env::var_os("HOME").filter(|v| !v.is_empty())?;
    Some(PathBuf::from(home).join(".config").join("tinytool"))
}

/// Reads a JSON file strictly into `T`: `Ok(None)` when it does not exist, an error naming
/// `file:line:column` when it is not one JSON object, does not parse or has unknown keys.
/// A leading byte-order mark is skipped.
pub fn read_json_file<T: serde::de::DeserializeOwned>(path: &Path) -> Result<Option<T>, String> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(err) => return Err(format!("{}: cannot read: {err}", path.display())),
    };
    // A byte-order mark is no part of JSON, but editors on some systems add one.
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    // A derived struct would also take an array, field by field: a policy or config is
    // an object, and anything else is refused where it starts.
    if let Some((offset, first)) = text.char_indices().find(|(_, c)| !c.is_whitespace())
        && first != '{'
    {
        let before = &text[..offset];
        let line = before.matches('\n').count() + 1;
        let column = before.len() - before.rfind('\n').map_or(0, |n| n + 1) + 1;
        return Err(format!(
            "{}:{line}:{column}: expected a JSON object `{{...}}`, found `{first}`",
            path.display()
        ));
    }
    serde_json::from_str(text).map(Some).map_err(|err| {
        let message = err.to_string();
        // serde_json appends " at line L column C"; the prefix form reads better.
        let message = message
            .rsplit_once(" at line ")
            .map_or(message.as_str(), |(m, _)| m);
        format!(
            "{}:{}:{}: {message}",
            path.display(),
            err.line(),
            err.column()
        )
    })
}

/// Whether `name` is one folder's name (not empty, no `/`, not `.` or `..`).
fn is_folder_name(name: &str) -> bool {
    !name.is_empty() && !name.contains('/') && name != "." && name != ".." && !name.contains('\0')
}

impl Config {
    /// Loads and merges the user and project config files for the project in `dir`.
    pub fn load(dir: &Path) -> Result<Config, String> {
        let user_path = user_config_dir().map(|d| d.join("config.json"));
        let user = match &user_path {
            Some(path) => read_json_file::<File>(path)?,
            None => None,
        };
        let project_path = dir.join(".tinytool").join("config.json");
        let project = read_json_file::<File>(&project_path)?;
        let mut config = Config::default();
        if let (Some(user), Some(path)) = (user, &user_path) {
            config
                .apply(user, true)
                .map_err(|err| format!("{}: {err}", path.display()))?;
        }
        if let Some(project) = project {
            config
                .apply(project, false)
                .map_err(|err| format!("{}: {err}", project_path.display()))?;
        }
        Ok(config)
    }

    /// The folders grep and glob leave out: the built-in list, every config's additions,
    /// and the names kept.
    pub fn not_project_for_search(&self) -> crate::skip_dirs::NotProject {
        let added = self
            .not_project_added
            .iter()
            .chain(&self.not_project_added_by_project)
            .cloned()
            .collect();
        crate::skip_dirs::NotProject::new(added, self.not_project_kept.clone())
    }

    /// The folders checkpoints leave out: as for searches, without a project's additions.
    pub fn not_project_for_checkpoints(&self) -> crate::skip_dirs::NotProject {
        crate::skip_dirs::NotProject::new(
            self.not_project_added.clone(),
            self.not_project_kept.clone(),
        )
    }

    fn apply(&mut self, file: File, trusted: bool) -> Result<(), String> {
        for (glob, command) in file.formatters {
            let command: Vec<String> = serde_json::from_value(command).map_err(|_| {
                format!("formatters.{glob}: expected a command as an array of strings")
            })?;
            if command.is_empty() {
                return Err(format!("formatters.{glob}: the command is empty"));
            }
            self.formatters.retain(|(g, _)| *g != glob);
            let key = format!("formatters.{glob}");
            if trusted {
                self.from_project.remove(&key);
            } else {
                self.from_project.insert(key);
            }
            self.formatters.push((glob, command));
        }
        for (kind, mut subagent) in file.subagents {
            if !trusted {
                // A cloned repository cannot open paths for the sandbox.
                subagent.writable.clear();
            }
            if subagent.command.is_empty() {
                return Err(format!("subagents.{kind}.command: the command is empty"));
            }
            let key = format!("subagents.{kind}");
            if trusted {
                self.from_project.remove(&key);
            } else {
                self.from_project.insert(key);
            }
            self.subagents.insert(kind, subagent);
        }
        if let Some(task) = file.task {
            self.task_deadline_ms = task.deadline_ms.or(self.task_deadline_ms);
        }
        if let Some(skills) = file.skills {
            self.skill_paths
                .extend(skills.paths.into_iter().map(|path| SkillPath {
                    path,
                    from_project: !trusted,
                }));
        }
        if let Some(output) = file.output {
            // A project may lower the limits (and the spill folder's cap), never raise them:
            // a cloned repository must not flood the model.
            let lower = |current: Option<usize>, new: Option<usize>, default: usize| {
                let new = new.filter(|n| *n > 0)?;
                Some(if trusted {
                    new
                } else {
                    new.min(current.unwrap_or(default))
                })
            };
            let defaults = crate::truncate::Limits::default();
            self.max_lines =
                lower(self.max_lines, output.max_lines, defaults.max_lines).or(self.max_lines);
            self.max_bytes =
                lower(self.max_bytes, output.max_bytes, defaults.max_bytes).or(self.max_bytes);
            if let Some(keep) = output.keep_bytes.filter(|n| *n > 0) {
                let current = self.keep_bytes.unwrap_or(crate::spill::KEEP_BYTES);
                self.keep_bytes = Some(if trusted { keep } else { keep.min(current) });
            }
        }
        if let Some(cp) = file.checkpoints {
            // A project may lower the caps, never raise them or turn checkpoints off: a
            // cloned repository must not disable the undo the user relies on.
            let pick = |current: u64, new: Option<u64>| match new {
                Some(n) if trusted => n,
                Some(n) => n.min(current),
                None => current,
            };
            let c = &mut self.checkpoints;
            c.max_file_bytes = pick(c.max_file_bytes, cp.max_file_bytes);
            c.max_bytes = pick(c.max_bytes, cp.max_bytes);
            c.keep_days = pick(c.keep_days, cp.keep_days);
            if trusted && let Some(enabled) = cp.enabled {
                c.enabled = enabled;
            }
        }
        if let Some(images) = file.images {
            // A project may lower the caps, never raise them: a cloned repository must not
            // send the client more than the user allows.
            let pick = |current: u64, new: Option<u64>| match new.filter(|n| *n > 0) {
                Some(n) if trusted => n,
                Some(n) => n.min(current),
                None => current,
            };
            self.images.max_bytes = pick(self.images.max_bytes, images.max_bytes);
            self.images.max_pixels = pick(self.images.max_pixels, images.max_pixels);
            let side = pick(
                u64::from(self.images.max_side),
                images.max_side.map(u64::from),
            );
            self.images.max_side = u32::try_from(side).unwrap_or(u32::MAX);
        }
        if let Some(mcp) = file.mcp
            && let Some(max) = mcp.max_message_bytes
        {
            if max < MIN_MESSAGE_BYTES {
                return Err(format!(
                    "mcp.max_message_bytes: {max} is too small (at least {MIN_MESSAGE_BYTES})"
                ));
            }
            self.max_message_bytes = if trusted {
                max
            } else {
                max.min(self.max_message_bytes)
            };
        }
        if let Some(lsp) = file.lsp {
            self.apply_lsp(lsp, trusted)?;
        }
        if let Some(section) = file.not_project {
            for (key, names) in [("add", &section.add), ("keep", &section.keep)] {
                if let Some(bad) = names.iter().find(|n| !is_folder_name(n)) {
                    return Err(format!(
                        "not_project.{key}: {bad:?} is not a folder name (give names such as \
                         \"dist\", without `/`)"
                    ));
                }
            }
            if trusted {
                self.not_project_added.extend(section.add);
            } else {
                self.not_project_added_by_project.extend(section.add);
            }
            self.not_project_kept.extend(section.keep);
        }
        if trusted {
            if let Some(webfetch) = file.webfetch {
                self.allow_hosts = webfetch.allow_hosts;
            }
            if let Some(websearch) = file.websearch {
                self.websearch_endpoint = websearch.endpoint;
            }
            if let Some(hook) = file.after_hook.filter(|h| !h.is_empty()) {
                self.after_hook = Some(hook);
            }
        }
        Ok(())
    }

    /// The `lsp` section: a project lowers times and caps and turns things off, never on.
    fn apply_lsp(&mut self, section: LspSection, trusted: bool) -> Result<(), String> {
        let lsp = &mut self.lsp;
        let pick = |current: u64, new: Option<u64>| match new.filter(|n| *n > 0) {
            Some(n) if trusted => n,
            Some(n) => n.min(current),
            None => current,
        };
        lsp.wait_ms = pick(lsp.wait_ms, section.wait_ms);
        lsp.cold_wait_ms = pick(lsp.cold_wait_ms, section.cold_wait_ms);
        lsp.idle_ms = pick(lsp.idle_ms, section.idle_ms);
        lsp.max_memory_mb = pick(lsp.max_memory_mb, section.max_memory_mb);
        lsp.max_lines = pick(lsp.max_lines as u64, section.max_lines.map(|n| n as u64)) as usize;
        if let Some(warnings) = section.warnings {
            lsp.warnings = warnings;
        }
        if let Some(enabled) = section.enabled
            && (trusted || !enabled)
        {
            lsp.enabled = enabled;
        }
        if let Some(after_bash) = section.after_bash
            && (trusted || !after_bash)
        {
            lsp.after_bash = after_bash;
        }
        for (language, server) in section.servers {
            if LSP_LANGUAGES.iter().all(|n| *n != language) {
                return Err(format!(
                    "lsp.servers.{language}: not a language tinytool runs servers for (one of \
                     {})",
                    LSP_LANGUAGES.join(", ")
                ));
            }
            let entry = lsp.servers.entry(language.clone()).or_default();
            if let Some(command) = server.command {
                if command.is_empty() || command[0].is_empty() {
                    return Err(format!(
                        "lsp.servers.{language}.command: the command is empty"
                    ));
                }
                entry.command = Some(command);
                entry.from_project = !trusted;
            }
            if let Some(enabled) = server.enabled
                && (trusted || !enabled)
            {
                entry.enabled = Some(enabled);
            }
            if let Some(cap) = server.max_memory_mb.filter(|n| *n > 0) {
                let current = entry.max_memory_mb.unwrap_or(lsp.max_memory_mb);
                entry.max_memory_mb = Some(if trusted { cap } else { cap.min(current) });
            }
        }
        Ok(())
    }

    /// The output limits: `output.max_lines` and `output.max_bytes` over the defaults,
    /// keeping no spill files (see [`Config::limits_in`]).
    pub fn limits(&self) -> crate::truncate::Limits {
        let defaults = crate::truncate::Limits::default();
        crate::truncate::Limits {
            max_lines: self.max_lines.unwrap_or(defaults.max_lines),
            max_bytes: self.max_bytes.unwrap_or(defaults.max_bytes),
            spill: None,
        }
    }

    /// The output limits of a project in `dir`: previewed outputs are kept whole under
    /// `<dir>/.tinytool/outputs/`, capped by `output.keep_bytes`.
    pub fn limits_in(&self, dir: &Path) -> crate::truncate::Limits {
        crate::truncate::Limits {
            spill: Some(crate::spill::Outputs::new(
                dir,
                self.keep_bytes.unwrap_or(crate::spill::KEEP_BYTES),
            )),
            ..self.limits()
        }
    }

    /// Whether the formatter for a path is the project config's.
    pub fn formatter_from_project(&self, rel_path: &str) -> bool {
        let base = rel_path.rsplit('/').next().unwrap_or(rel_path);
        self.formatters.iter().any(|(glob, _)| {
            let subject = if glob.contains('/') { rel_path } else { base };
            crate::wildcard::matches(glob, subject)
                && self.from_project.contains(&format!("formatters.{glob}"))
        })
    }

    /// The formatter command for a path (relative to the project, forward slashes), with
    /// `{file}` replaced by `file_arg`. A glob without `/` matches the base name.
    pub fn formatter_for(&self, rel_path: &str, file_arg: &str) -> Option<Vec<String>> {
        let base = rel_path.rsplit('/').next().unwrap_or(rel_path);
        self.formatters.iter().find_map(|(glob, command)| {
            let subject = if glob.contains('/') { rel_path } else { base };
            crate::wildcard::matches(glob, subject).then(|| {
                command
                    .iter()
                    .map(|part| part.replace("{file}", file_arg))
                    .collect()
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Option<File>, String> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.json");
        std::fs::write(&path, text).unwrap();
        read_json_file::<File>(&path).map_err(|e| e.replace(&path.display().to_string(), "F"))
    }

    #[test]
    fn errors_name_file_line_and_column() {
        let err = parse("{\n  \"formatters\": {},\n  \"bogus\": 1\n}").unwrap_err();
        assert!(err.starts_with("F:3:"), "{err}");
        assert!(err.contains("unknown field `bogus`"), "{err}");
        let err = parse("{\n  \"output\": {\"max_lines\": 5,}\n}").unwrap_err();
        assert!(err.starts_with("F:2:"), "{err}");
    }

    #[test]
    fn only_an_object_is_a_config_and_a_byte_order_mark_is_ignored() {
        let err = parse("[[{\"permission\": \"*\"}]]").unwrap_err();
        assert_eq!(err, "F:1:1: expected a JSON object `{...}`, found `[`");
        let err = parse("\n  []").unwrap_err();
        assert!(err.starts_with("F:2:3: expected a JSON object"), "{err}");
        assert!(parse("\u{feff}{\"formatters\": {}}").unwrap().is_some());
        assert!(parse("\u{feff}  \n{}").unwrap().is_some());
    }

    #[test]
    fn a_bad_value_names_the_file_it_is_in() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join(".tinytool")).unwrap();
        std::fs::write(
            dir.path().join(".tinytool/config.json"),
            r#"{"formatters": {"*.txt": []}}"#,
        )
        .unwrap();
        let err = Config::load(dir.path()).unwrap_err();
        assert!(
            err.ends_with(".tinytool/config.json: formatters.*.txt: the command is empty"),
            "{err}"
        );
    }

    #[test]
    fn project_cannot_set_trusted_keys() {
        let mut config = Config::default();
        let file: File = serde_json::from_str(
            r#"{"webfetch": {"allow_hosts": ["evil"]}, "after_hook": ["x"], "output": {"max_bytes": 100}}"#,
        )
        .unwrap();
        config.apply(file, false).unwrap();
        assert!(config.allow_hosts.is_empty());
        assert!(config.after_hook.is_none());
        assert_eq!(config.max_bytes, Some(100));
    }

    #[test]
    fn image_and_message_caps_are_the_users_to_raise() {
        let file = |text: &str| serde_json::from_str::<File>(text).unwrap();
        let mut config = Config::default();
        assert_eq!(config.max_message_bytes, MAX_MESSAGE_BYTES);
        config
            .apply(
                file(
                    r#"{"images": {"max_bytes": 9000000}, "mcp": {"max_message_bytes": 20000000}}"#,
                ),
                true,
            )
            .unwrap();
        config
            .apply(
                file(r#"{"images": {"max_bytes": 99000000, "max_pixels": 1000, "max_side": 100}, "mcp": {"max_message_bytes": 99000000}}"#),
                false,
            )
            .unwrap();
        assert_eq!(
            (
                config.images.max_bytes,
                config.images.max_pixels,
                config.images.max_side,
                config.max_message_bytes
            ),
            (9_000_000, 1000, 100, 20_000_000)
        );
        let err = config
            .apply(file(r#"{"mcp": {"max_message_bytes": 10}}"#), true)
            .unwrap_err();
        assert!(
            err.contains("mcp.max_message_bytes: 10 is too small"),
            "{err}"
        );
        assert!(serde_json::from_str::<File>(r#"{"images": {"max_width": 1}}"#).is_err());
    }

    #[test]
    fn skill_paths_remember_which_file_named_them() {
        let mut config = Config::default();
        let file = |text: &str| serde_json::from_str::<File>(text).unwrap();
        config
            .apply(file(r#"{"skills": {"paths": ["/mine"]}}"#), true)
            .unwrap();
        config
            .apply(file(r#"{"skills": {"paths": ["../theirs"]}}"#), false)
            .unwrap();
        let seen: Vec<(&str, bool)> = config
            .skill_paths
            .iter()
            .map(|p| (p.path.to_str().unwrap(), p.from_project))
            .collect();
        assert_eq!(seen, [("/mine", false), ("../theirs", true)]);
    }

    #[test]
    fn formatters_match_base_names_and_substitute_the_file() {
        let mut config = Config::default();
        let file: File = serde_json::from_str(r#"{"formatters": {"*.rs": ["rustfmt", "{file}"], "web/*.js": ["prettier", "-w", "{file}"]}}"#).unwrap();
        config.apply(file, true).unwrap();
        assert_eq!(
            config.formatter_for("src/a.rs", "/p/src/a.rs"),
            Some(vec!["rustfmt".to_string(), "/p/src/a.rs".to_string()])
        );
        assert!(config.formatter_for("web/a.js", "x").is_some());
        assert!(config.formatter_for("a.js", "x").is_none());
        assert!(config.formatter_for("a.py", "x").is_none());
    }

    #[test]
    fn a_project_lowers_the_language_servers_and_turns_them_off_never_on() {
        let file = |text: &str| serde_json::from_str::<File>(text).unwrap();
        let mut config = Config::default();
        config
            .apply(
                file(
                    r#"{"lsp": {"enabled": false, "wait_ms": 5000, "after_bash": true,
                     "servers": {"python": {"command": ["basedpyright-langserver", "--stdio"],
                                            "max_memory_mb": 1000}}}}"#,
                ),
                true,
            )
            .unwrap();
        config
            .apply(
                file(
                    r#"{"lsp": {"enabled": true, "wait_ms": 9000, "cold_wait_ms": 100,
                     "max_lines": 1000, "after_bash": false,
                     "servers": {"python": {"max_memory_mb": 99999},
                                 "go": {"command": ["./my-gopls"], "enabled": true}}}}"#,
                ),
                false,
            )
            .unwrap();
        let lsp = &config.lsp;
        assert!(!lsp.enabled, "a project cannot turn diagnostics on");
        assert_eq!(lsp.wait_ms, 5000, "nor raise a time");
        assert_eq!(lsp.cold_wait_ms, 100, "but may lower one");
        assert_eq!(lsp.max_lines, 20);
        assert!(!lsp.after_bash, "and may turn a setting off");
        assert_eq!(lsp.servers["python"].max_memory_mb, Some(1000));
        assert!(!lsp.servers["python"].from_project);
        assert!(
            lsp.servers["go"].from_project,
            "its command runs as the project's"
        );
        assert_eq!(lsp.servers["go"].enabled, None);
        let err = Config::default()
            .apply(
                file(r#"{"lsp": {"servers": {"cobol": {"enabled": false}}}}"#),
                true,
            )
            .unwrap_err();
        assert!(err.contains("lsp.servers.cobol"), "{err}");
        let err = Config::default()
            .apply(
                file(r#"{"lsp": {"servers": {"go": {"command": []}}}}"#),
                true,
            )
            .unwrap_err();
        assert!(err.contains("the command is empty"), "{err}");
    }
}
