//! Other agents' tool names and parameter names, translated to tinytool's.
//!
//! Models trained on Claude Code, opencode, Codex, Gemini CLI or Anthropic's text editor
//! tool call those agents' tools by their names, with their parameters. [`recognise`] finds
//! the tool a name means and [`translate`] rewrites the arguments, before schema validation;
//! every translation is one repair line (they land in `metadata.repairs`). What has no
//! faithful translation is refused with a message that says what to send instead, never
//! guessed. The tables ([`PEER_TOOLS`], [`PARAMS`]) are the whole of it: the man page's
//! table is generated from them (`docs`), so it cannot drift.
//!
//! A name is recognised, in this order: a registered tool spelled exactly; another agent's
//! name spelled exactly ([`PEER_TOOLS`]); a registered tool, then another agent's name,
//! with case, `_` and `-` ignored (`READ`, `Apply_Patch`, `ApplyPatch`). `Read` is Claude
//! Code's `Read` (whose `offset` counts lines from 1), `READ` is tinytool's `read`.
//!
//! A parameter rule (`on`, `param`, action) applies when the call was made by a name in
//! `on`: another agent's tool (`Read`), one command of the text editor
//! (`str_replace_based_edit_tool create`), or a tinytool tool however it was called
//! (`bash`). The rules of the agent's name run first, then those of the tool, each in table
//! order. A rename happens when the parameter is present: when the canonical name is
//! there too, the same value drops the alias, a different one refuses the call naming both
//! (choosing would be a guess). Only one-to-one renames are listed; conversions say what
//! they did, units included.
//!
//! Sources (each agent's own tool schemas): Claude Code's tools (`Read` `offset` counts from
//! 1; `Bash` `timeout` is in milliseconds, as tinytool's; `Grep` `glob`, `-i`, `-n`, `-A`/
//! `-B`/`-C`, `output_mode`, `head_limit`, `type`, `multiline`; `MultiEdit` `edits`;
//! `TodoWrite` items with `activeForm` and, earlier, `id`; `WebFetch` `url`, `prompt`;
//! `WebSearch` `allowed_domains`, `blocked_domains`); opencode's (`filePath`, `oldString`,
//! `newString`, `replaceAll`, `multiedit`, `patch`/`apply_patch` with `patchText`, bash
//! `workdir`, todo status `completed` and priority `medium`); Codex's (`shell` with
//! `command` as an argv array, `shell_command`, `exec_command` with `cmd`, `workdir`,
//! `timeout_ms` in milliseconds, `apply_patch` with `input`, `update_plan` with
//! `plan: [{step, status}]`, `view_image`, `read_file` whose `offset` counts from 1);
//! Gemini CLI's (`read_file` with `absolute_path` or `file_path` and an `offset` counting
//! from 0, `write_file`, `replace` with `expected_replacements`, `run_shell_command` with
//! `directory` or `dir_path` and `is_background`, `glob`, `search_file_content` and
//! `grep_search` with `dir_path` and `total_max_matches`, `list_directory`, `web_fetch`
//! whose `prompt` holds the URL, `google_web_search`, `write_todos` with
//! `todos: [{description, status}]`); Anthropic's text editor tool
//! (`str_replace_based_edit_tool`, earlier `str_replace_editor`: `command` `view` with
//! `view_range` `[start, end]` from 1 and `-1` for the end, `create` which never
//! overwrites, `str_replace` whose `new_str` was optional, `insert` after `insert_line` with
//! `new_str` or earlier `insert_text`, `undo_edit`).

use serde_json::{Map, Value};

/// Claude Code, Anthropic's coding agent.
pub const CLAUDE_CODE: &str = "Claude Code";
/// opencode.
pub const OPENCODE: &str = "opencode";
/// OpenAI's Codex CLI.
pub const CODEX: &str = "Codex";
/// Google's Gemini CLI.
pub const GEMINI: &str = "Gemini CLI";
/// Anthropic's text editor tool (Messages API).
pub const TEXT_EDITOR: &str = "Anthropic text editor";
/// A spelling any model may send.
pub const ANY: &str = "any model";

/// Another agent's tool, and what it becomes here.
#[derive(Debug, Clone, Copy)]
pub struct PeerTool {
    /// The name as that agent spells it.
    pub name: &'static str,
    /// For a tool that dispatches on its `command` argument (the text editor), the command
    /// this row is about.
    pub command: Option<&'static str>,
    /// Whose name it is.
    pub source: &'static str,
    /// What it becomes.
    pub becomes: Becomes,
    /// String parameters set when absent: `(parameter, value, why)`.
    pub defaults: &'static [(&'static str, &'static str, &'static str)],
    /// What differs, in words (for the man page; empty when nothing does).
    pub note: &'static str,
}

/// What another agent's tool becomes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Becomes {
    /// This tinytool tool.
    Tool(&'static str),
    /// Nothing: the call is refused with this way out.
    Refused(&'static str),
}

const fn peer(name: &'static str, source: &'static str, tool: &'static str) -> PeerTool {
    PeerTool {
        name,
        command: None,
        source,
        becomes: Becomes::Tool(tool),
        defaults: &[],
        note: "",
    }
}

const fn noted(
    name: &'static str,
    source: &'static str,
    tool: &'static str,
    note: &'static str,
) -> PeerTool {
    PeerTool {
        note,
        ..peer(name, source, tool)
    }
}

const fn refused(name: &'static str, source: &'static str, way_out: &'static str) -> PeerTool {
    PeerTool {
        becomes: Becomes::Refused(way_out),
        ..peer(name, source, "")
    }
}

const fn command(
    name: &'static str,
    command: &'static str,
    becomes: Becomes,
    defaults: &'static [(&'static str, &'static str, &'static str)],
    note: &'static str,
) -> PeerTool {
    PeerTool {
        name,
        command: Some(command),
        source: TEXT_EDITOR,
        becomes,
        defaults,
        note,
    }
}

/// The way out of listing a folder, for the agents' listing tools.
const LIST_WITH_GLOB: &str = "list a folder with glob: pattern `*` and path set to the folder \
     (`**/*` for its whole tree)";
/// The way out of Claude Code's `NotebookEdit`, whose `new_source` replaces a whole cell.
const NOTEBOOK_WITH_EDIT: &str = "change a cell's source with edit: file_path (the notebook), \
     cell_id (or cell, the index read shows as `[cell N: ...]`), old_string (copied from the \
     cell as read shows it) and new_string; adding or removing cells is not supported";
/// The way out of the text editor's `undo_edit`.
const UNDO_WITH_CHECKPOINT: &str = "checkpoints take back a whole call, not the last edit of \
     one file: list them with the checkpoint tool (action `list`), then call it with action \
     `undo` and the id of the call that changed the file";
const CREATE_NEVER_OVERWRITES: &[(&str, &str, &str)] = &[(
    "old_string",
    "",
    "create makes a new file and never overwrites one, as edit with an empty old_string",
)];
const STR_REPLACE_DELETES: &[(&str, &str, &str)] = &[(
    "new_string",
    "",
    "str_replace without new_str deletes old_str",
)];

/// Every other agent's tool name tinytool recognises, grouped by agent.
pub const PEER_TOOLS: &[PeerTool] = &[
    noted(
        "Read",
        CLAUDE_CODE,
        "read",
        "its `offset` counts lines from 1 and is converted",
    ),
    peer("Write", CLAUDE_CODE, "write"),
    peer("Edit", CLAUDE_CODE, "edit"),
    noted(
        "MultiEdit",
        CLAUDE_CODE,
        "edit",
        "its `edits` apply in order, all or nothing",
    ),
    peer("Bash", CLAUDE_CODE, "bash"),
    peer("Grep", CLAUDE_CODE, "grep"),
    peer("Glob", CLAUDE_CODE, "glob"),
    peer("TodoWrite", CLAUDE_CODE, "todowrite"),
    noted(
        "WebFetch",
        CLAUDE_CODE,
        "webfetch",
        "the page is returned, its `prompt` is not run on it",
    ),
    peer("WebSearch", CLAUDE_CODE, "websearch"),
    peer("Task", CLAUDE_CODE, "task"),
    peer("Agent", CLAUDE_CODE, "task"),
    refused("LS", CLAUDE_CODE, LIST_WITH_GLOB),
    refused("NotebookEdit", CLAUDE_CODE, NOTEBOOK_WITH_EDIT),
    noted(
        "multiedit",
        OPENCODE,
        "edit",
        "its `edits` apply in order, all or nothing",
    ),
    peer("patch", OPENCODE, "apply_patch"),
    refused("list", OPENCODE, LIST_WITH_GLOB),
    noted(
        "shell",
        CODEX,
        "bash",
        "its `command` is an argv array, its `workdir` becomes a `cd`",
    ),
    noted(
        "shell_command",
        CODEX,
        "bash",
        "its `workdir` becomes a `cd`",
    ),
    noted(
        "exec_command",
        CODEX,
        "bash",
        "bash waits for the command to end where exec_command would yield",
    ),
    noted(
        "update_plan",
        CODEX,
        "todowrite",
        "its plan steps become todos",
    ),
    peer("view_image", CODEX, "read"),
    noted(
        "read_file",
        "Gemini CLI, Codex",
        "read",
        "`offset` counts from 0 in Gemini CLI and from 1 in Codex, so an offset of 1 or more \
         is refused unless the call shows whose it is",
    ),
    peer("write_file", GEMINI, "write"),
    peer("replace", GEMINI, "edit"),
    noted(
        "run_shell_command",
        GEMINI,
        "bash",
        "its `dir_path` (earlier `directory`) becomes a `cd`",
    ),
    peer("search_file_content", GEMINI, "grep"),
    peer("grep_search", GEMINI, "grep"),
    noted(
        "list_directory",
        GEMINI,
        "glob",
        "pattern `*` in the folder lists its files and folders",
    ),
    noted(
        "web_fetch",
        GEMINI,
        "webfetch",
        "the one URL in its `prompt` is fetched",
    ),
    peer("google_web_search", GEMINI, "websearch"),
    peer("write_todos", GEMINI, "todowrite"),
    refused(
        "read_many_files",
        GEMINI,
        "read one file per call with read (glob finds them first)",
    ),
    command(
        "str_replace_based_edit_tool",
        "view",
        Becomes::Tool("read"),
        &[],
        "`view_range` `[start, end]` counts from 1, end -1 meaning to the end; a folder is \
         refused (glob lists it)",
    ),
    command(
        "str_replace_based_edit_tool",
        "create",
        Becomes::Tool("edit"),
        CREATE_NEVER_OVERWRITES,
        "",
    ),
    command(
        "str_replace_based_edit_tool",
        "str_replace",
        Becomes::Tool("edit"),
        STR_REPLACE_DELETES,
        "",
    ),
    command(
        "str_replace_based_edit_tool",
        "insert",
        Becomes::Tool("edit"),
        &[],
        "as `insert_line`: `new_str` goes after that line (0: at the top)",
    ),
    command(
        "str_replace_based_edit_tool",
        "undo_edit",
        Becomes::Refused(UNDO_WITH_CHECKPOINT),
        &[],
        "",
    ),
    command(
        "str_replace_editor",
        "view",
        Becomes::Tool("read"),
        &[],
        "as str_replace_based_edit_tool",
    ),
    command(
        "str_replace_editor",
        "create",
        Becomes::Tool("edit"),
        CREATE_NEVER_OVERWRITES,
        "",
    ),
    command(
        "str_replace_editor",
        "str_replace",
        Becomes::Tool("edit"),
        STR_REPLACE_DELETES,
        "",
    ),
    command(
        "str_replace_editor",
        "insert",
        Becomes::Tool("edit"),
        &[],
        "as str_replace_based_edit_tool",
    ),
    command(
        "str_replace_editor",
        "undo_edit",
        Becomes::Refused(UNDO_WITH_CHECKPOINT),
        &[],
        "",
    ),
];

/// A parameter another agent sends, and what happens to it.
#[derive(Debug, Clone, Copy)]
pub struct ParamRule {
    /// The calls it applies to: another agent's tool name, `NAME COMMAND` for one command
    /// of the text editor, or a tinytool tool (however it was called).
    pub on: &'static [&'static str],
    /// The parameter as sent.
    pub param: &'static str,
    /// Whose spelling it is.
    pub source: &'static str,
    /// What happens to it.
    pub action: Action,
}

/// What happens to a parameter.
#[derive(Debug, Clone, Copy)]
pub enum Action {
    /// Renamed to this parameter, value unchanged.
    Rename(&'static str),
    /// Converted; `doc` says into what (for the man page).
    Convert {
        /// What it becomes, in words.
        doc: &'static str,
        /// Takes the removed value and may change the other arguments: the repair lines
        /// (none when nothing needed saying), or why the call cannot be translated.
        apply: ConvertFn,
    },
    /// Left out; why (it changes nothing about what the call does here).
    Drop(&'static str),
    /// The call is refused; what to do instead.
    Refuse(&'static str),
}

/// A conversion: the arguments (the parameter already removed) and the parameter's value.
pub type ConvertFn = fn(&mut Map<String, Value>, Value) -> Result<Vec<String>, String>;

const fn rename(
    on: &'static [&'static str],
    param: &'static str,
    to: &'static str,
    source: &'static str,
) -> ParamRule {
    ParamRule {
        on,
        param,
        source,
        action: Action::Rename(to),
    }
}

const fn convert(
    on: &'static [&'static str],
    param: &'static str,
    source: &'static str,
    doc: &'static str,
    apply: ConvertFn,
) -> ParamRule {
    ParamRule {
        on,
        param,
        source,
        action: Action::Convert { doc, apply },
    }
}

const fn dropped(
    on: &'static [&'static str],
    param: &'static str,
    source: &'static str,
    why: &'static str,
) -> ParamRule {
    ParamRule {
        on,
        param,
        source,
        action: Action::Drop(why),
    }
}

const fn refuse(
    on: &'static [&'static str],
    param: &'static str,
    source: &'static str,
    way_out: &'static str,
) -> ParamRule {
    ParamRule {
        on,
        param,
        source,
        action: Action::Refuse(way_out),
    }
}

const EDITOR: &[&str] = &["str_replace_based_edit_tool", "str_replace_editor"];
const EDITOR_VIEW: &[&str] = &[
    "str_replace_based_edit_tool view",
    "str_replace_editor view",
];
const EDITOR_CREATE: &[&str] = &[
    "str_replace_based_edit_tool create",
    "str_replace_editor create",
];
const EDITOR_INSERT: &[&str] = &[
    "str_replace_based_edit_tool insert",
    "str_replace_editor insert",
];
const CODEX_SHELLS: &[&str] = &["shell", "shell_command", "exec_command"];
const BACKGROUND: &str = "bash runs a command to its end; start a long-running one with \
     monitor (action start), which runs it in the background";

/// Every parameter rule, in the order they apply.
pub const PARAMS: &[ParamRule] = &[
    // Rules of another agent's tool name (they run before the tool's own).
    convert(
        &["Read"],
        "offset",
        CLAUDE_CODE,
        "converted to offset - 1 (Read counts lines from 1, read from 0)",
        one_based_offset,
    ),
    refuse(
        &["Read"],
        "pages",
        CLAUDE_CODE,
        "read does not render PDF pages; convert the PDF to text with bash (pdftotext) and read that",
    ),
    convert(
        &["read_file"],
        "offset",
        "Gemini CLI, Codex",
        "0 kept; kept when the call is Gemini CLI's (`absolute_path` given), converted to \
         offset - 1 when it is Codex's (`mode` or `indentation` given); otherwise 1 or more is \
         refused with both readings named",
        read_file_offset,
    ),
    convert(
        &["read_file"],
        "mode",
        CODEX,
        "`slice` left out (what read does), `indentation` refused",
        codex_read_mode,
    ),
    refuse(
        &["read_file"],
        "indentation",
        CODEX,
        "read has no indentation mode; read the lines around the block with offset and limit",
    ),
    rename(&["view_image"], "path", "file_path", CODEX),
    dropped(
        &["WebFetch"],
        "prompt",
        CLAUDE_CODE,
        "webfetch returns the page itself, with no model run on it: find the answer in it",
    ),
    convert(
        &["web_fetch"],
        "prompt",
        GEMINI,
        "its one http(s) URL becomes `url` (several are refused: one call each)",
        url_in_prompt,
    ),
    convert(
        &["update_plan"],
        "plan",
        CODEX,
        "becomes `todos`, each step's text the todo's content",
        plan_to_todos,
    ),
    dropped(
        &["update_plan"],
        "explanation",
        CODEX,
        "todowrite keeps only the list",
    ),
    dropped(
        CODEX_SHELLS,
        "justification",
        CODEX,
        "the policy decides what runs; no call asks for more",
    ),
    dropped(
        CODEX_SHELLS,
        "prefix_rule",
        CODEX,
        "approvals are rules of the policy file (see tinytool-policy(5))",
    ),
    convert(
        CODEX_SHELLS,
        "sandbox_permissions",
        CODEX,
        "`use_default` left out, `require_escalated` refused (the policy sets the sandbox)",
        codex_sandbox_permissions,
    ),
    convert(
        CODEX_SHELLS,
        "with_escalated_permissions",
        CODEX,
        "false left out, true refused (the policy sets the sandbox)",
        no_escalation,
    ),
    dropped(
        &["shell_command", "exec_command"],
        "login",
        CODEX,
        "the command runs in sh -c, which reads no login profile",
    ),
    dropped(
        &["exec_command"],
        "yield_time_ms",
        CODEX,
        "bash waits for the command to end (or its timeout, 120000 ms by default)",
    ),
    dropped(
        &["exec_command"],
        "max_output_tokens",
        CODEX,
        "long outputs are previewed with their whole text in a spill file",
    ),
    convert(
        &["Bash"],
        "run_in_background",
        CLAUDE_CODE,
        "false left out, true refused (monitor runs commands in the background)",
        not_in_background,
    ),
    convert(
        &["Bash"],
        "dangerouslyDisableSandbox",
        CLAUDE_CODE,
        "false left out, true refused (the policy sets the sandbox)",
        no_escalation,
    ),
    convert(
        &["run_shell_command"],
        "is_background",
        GEMINI,
        "false left out, true refused (monitor runs commands in the background)",
        not_in_background,
    ),
    convert(
        &["Grep"],
        "-i",
        CLAUDE_CODE,
        "true puts `(?i)` before `pattern` (case-insensitive), false is left out",
        case_insensitive,
    ),
    dropped(
        &["Grep"],
        "-n",
        CLAUDE_CODE,
        "grep always shows line numbers",
    ),
    convert(
        &["Grep"],
        "output_mode",
        CLAUDE_CODE,
        "left out: grep shows the matching lines, each after its file and line number",
        output_mode,
    ),
    dropped(
        &["Grep"],
        "-A",
        CLAUDE_CODE,
        "grep shows matching lines without context; read the file around a match",
    ),
    dropped(
        &["Grep"],
        "-B",
        CLAUDE_CODE,
        "grep shows matching lines without context; read the file around a match",
    ),
    dropped(
        &["Grep"],
        "-C",
        CLAUDE_CODE,
        "grep shows matching lines without context; read the file around a match",
    ),
    rename(&["Grep"], "head_limit", "max_count", CLAUDE_CODE),
    refuse(
        &["Grep"],
        "type",
        CLAUDE_CODE,
        "grep has no file types; give include a glob such as `*.py` or `*.{ts,tsx}`",
    ),
    convert(
        &["Grep"],
        "multiline",
        CLAUDE_CODE,
        "false left out, true refused (grep matches within one line)",
        single_line,
    ),
    rename(
        &["search_file_content", "grep_search"],
        "total_max_matches",
        "max_count",
        GEMINI,
    ),
    dropped(
        &["search_file_content", "grep_search"],
        "max_matches_per_file",
        GEMINI,
        "grep limits the matching lines of the whole search (max_count)",
    ),
    rename(&["list_directory"], "dir_path", "path", GEMINI),
    convert(
        &["list_directory"],
        "path",
        GEMINI,
        "becomes glob's `path`, with `pattern` `*`",
        list_directory,
    ),
    refuse(
        &["list_directory"],
        "ignore",
        GEMINI,
        "glob has no ignore list; filter what it lists yourself, or list with a narrower pattern",
    ),
    convert(
        &["WebSearch"],
        "allowed_domains",
        CLAUDE_CODE,
        "an empty list left out, domains refused (websearch has no domain filter: name the \
         site in the query)",
        no_domains,
    ),
    convert(
        &["WebSearch"],
        "blocked_domains",
        CLAUDE_CODE,
        "an empty list left out, domains refused (websearch has no domain filter)",
        no_domains,
    ),
    convert(
        &["replace"],
        "expected_replacements",
        GEMINI,
        "1 left out (edit replaces exactly one occurrence), more refused (send `replace_all` true)",
        expected_replacements,
    ),
    dropped(
        &["replace"],
        "instruction",
        GEMINI,
        "only Gemini CLI's own correction of a failed edit reads it",
    ),
    convert(
        EDITOR_VIEW,
        "view_range",
        TEXT_EDITOR,
        "becomes `offset` start - 1 and `limit` end - start + 1 (no limit for end -1)",
        view_range,
    ),
    rename(EDITOR_CREATE, "file_text", "new_string", TEXT_EDITOR),
    rename(EDITOR_INSERT, "insert_text", "new_string", TEXT_EDITOR),
    rename(EDITOR, "path", "file_path", TEXT_EDITOR),
    rename(EDITOR, "old_str", "old_string", TEXT_EDITOR),
    rename(EDITOR, "new_str", "new_string", TEXT_EDITOR),
    // Rules of a tinytool tool, whatever name it was called by.
    rename(&["read"], "filePath", "file_path", OPENCODE),
    rename(&["read"], "absolute_path", "file_path", GEMINI),
    rename(&["read"], "path", "file_path", TEXT_EDITOR),
    rename(&["write"], "filePath", "file_path", OPENCODE),
    rename(&["write"], "path", "file_path", TEXT_EDITOR),
    rename(&["write"], "file_text", "content", TEXT_EDITOR),
    rename(&["write"], "text", "content", ANY),
    rename(&["edit"], "filePath", "file_path", OPENCODE),
    rename(&["edit"], "oldString", "old_string", OPENCODE),
    rename(&["edit"], "newString", "new_string", OPENCODE),
    rename(&["edit"], "replaceAll", "replace_all", OPENCODE),
    rename(&["edit"], "path", "file_path", TEXT_EDITOR),
    rename(&["edit"], "old_str", "old_string", TEXT_EDITOR),
    rename(&["edit"], "new_str", "new_string", TEXT_EDITOR),
    convert(
        &["edit"],
        "edits",
        "Claude Code, opencode",
        "each edit's oldString/newString/replaceAll (or old_str/new_str) renamed; a filePath \
         naming the call's file left out, another file refused",
        edit_items,
    ),
    rename(&["bash"], "cmd", "command", CODEX),
    convert(
        &["bash"],
        "command",
        CODEX,
        "an argv array becomes a command line: `[sh|bash, -c|-lc, SCRIPT]` its SCRIPT, \
         anything else its words quoted for the shell",
        argv_command,
    ),
    rename(&["bash"], "timeout_ms", "timeout", CODEX),
    convert(
        &["bash"],
        "workdir",
        "Codex, opencode",
        "the folder to run in: `cd DIR && { COMMAND }`, DIR quoted for the shell",
        workdir,
    ),
    convert(
        &["bash"],
        "dir_path",
        GEMINI,
        "the folder to run in: `cd DIR && { COMMAND }`, DIR quoted for the shell",
        workdir,
    ),
    convert(
        &["bash"],
        "directory",
        GEMINI,
        "the folder to run in: `cd DIR && { COMMAND }`, DIR quoted for the shell",
        workdir,
    ),
    rename(&["grep"], "glob", "include", CLAUDE_CODE),
    rename(&["grep"], "dir_path", "path", GEMINI),
    rename(&["glob"], "dir_path", "path", GEMINI),
    convert(
        &["glob"],
        "case_sensitive",
        GEMINI,
        "true left out (glob matches case-sensitively), false refused",
        case_sensitive,
    ),
    convert(
        &["glob"],
        "respect_git_ignore",
        GEMINI,
        "true left out, false becomes `include_ignored` true",
        respect_git_ignore,
    ),
    dropped(
        &["glob"],
        "respect_gemini_ignore",
        GEMINI,
        "tinytool reads no .geminiignore",
    ),
    rename(&["apply_patch"], "input", "patch", CODEX),
    rename(&["apply_patch"], "patchText", "patch", OPENCODE),
    convert(
        &["todowrite"],
        "todos",
        "Claude Code, opencode, Gemini CLI",
        "each todo's status `completed` read as `done`, priority `medium` as `normal` (none: \
         `normal`), `description` as `content`, `activeForm` and `id` left out",
        todo_items,
    ),
];

/// How a called name was recognised.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Called {
    /// A registered tool; `respelled` is the name as sent when it was not exact.
    Tool {
        /// The tool.
        tool: &'static str,
        /// The name as sent, when it differed (`READ`).
        respelled: Option<String>,
    },
    /// Another agent's tool name ([`PeerTool::name`]), as sent.
    Peer {
        /// The name as in [`PEER_TOOLS`].
        name: &'static str,
        /// The name as sent.
        sent: String,
    },
}

impl Called {
    /// The tinytool tool the call goes to, when the name alone decides it (not for the text
    /// editor, whose `command` does).
    pub fn fixed_target(&self) -> Option<Becomes> {
        match self {
            Called::Tool { tool, .. } => Some(Becomes::Tool(tool)),
            Called::Peer { name, .. } => {
                let first = PEER_TOOLS.iter().find(|row| row.name == *name)?;
                first.command.is_none().then_some(first.becomes)
            }
        }
    }
}

/// A name with case, `_`, `-` and spaces ignored.
fn loose(name: &str) -> String {
    name.chars()
        .filter(|c| !matches!(c, '_' | '-' | ' '))
        .flat_map(char::to_lowercase)
        .collect()
}

/// Which tool `name` means, given the registered `tools` (see the module doc for the
/// order); `None` when it means none.
pub fn recognise(name: &str, tools: &[&'static str]) -> Option<Called> {
    if let Some(tool) = tools.iter().find(|t| **t == name) {
        return Some(Called::Tool {
            tool,
            respelled: None,
        });
    }
    if let Some(row) = PEER_TOOLS.iter().find(|row| row.name == name) {
        return Some(Called::Peer {
            name: row.name,
            sent: name.to_string(),
        });
    }
    let key = loose(name);
    if key.is_empty() {
        return None;
    }
    if let Some(tool) = tools.iter().find(|t| loose(t) == key) {
        return Some(Called::Tool {
            tool,
            respelled: Some(name.to_string()),
        });
    }
    PEER_TOOLS
        .iter()
        .find(|row| loose(row.name) == key)
        .map(|row| Called::Peer {
            name: row.name,
            sent: name.to_string(),
        })
}

/// A call's arguments translated for a tinytool tool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Translation {
    /// The tool that runs the call.
    pub tool: &'static str,
    /// The translations made, one line each, in order.
    pub repairs: Vec<String>,
}

/// Why a call cannot be translated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Untranslatable {
    /// The tool has no equivalent here (a usage error, as an unknown tool is).
    Tool(String),
    /// An argument has no faithful translation (a tool error, as invalid arguments are).
    Argument(String),
}

/// Translates a call to `called` with `args` (see the module doc): the tool to run, with
/// the arguments rewritten in place and the repairs made.
pub fn translate(called: &Called, args: &mut Value) -> Result<Translation, Untranslatable> {
    let mut repairs = Vec::new();
    let mut defaults: &[(&str, &str, &str)] = &[];
    let (tool, mut keys) = match called {
        Called::Tool { tool, respelled } => {
            let tool = *tool;
            if let Some(sent) = respelled {
                repairs.push(format!("tool {sent} read as {tool}"));
            }
            (tool, Vec::new())
        }
        Called::Peer { name, sent } => {
            let row = peer_row(name, args)?;
            let tool = match row.becomes {
                Becomes::Tool(tool) => tool,
                Becomes::Refused(way_out) => {
                    return Err(Untranslatable::Tool(refusal_of(row, sent, way_out)));
                }
            };
            defaults = row.defaults;
            let mut keys = vec![row.name.to_string()];
            match row.command {
                Some(command) => {
                    if let Value::Object(map) = args {
                        map.remove("command");
                    }
                    repairs.push(format!("{sent} command {command} read as {tool}"));
                    keys.push(format!("{} {command}", row.name));
                }
                None => repairs.push(format!("tool {sent} read as {tool}")),
            }
            (tool, keys)
        }
    };
    keys.push(tool.to_string());
    if let Value::Object(map) = args {
        for key in &keys {
            for rule in PARAMS.iter().filter(|rule| rule.on.contains(&key.as_str())) {
                apply_rule(rule, key, tool, map, &mut repairs)?;
            }
        }
        // After the renames: a default stands for a parameter sent under no name at all.
        for &(param, value, why) in defaults {
            if !map.contains_key(param) {
                map.insert(param.to_string(), Value::String(value.to_string()));
                repairs.push(format!("{param} set to {value:?}: {why}"));
            }
        }
    }
    Ok(Translation { tool, repairs })
}

/// The row of a called peer name: the only one, or for the text editor the one of its
/// `command`.
fn peer_row(name: &str, args: &Value) -> Result<&'static PeerTool, Untranslatable> {
    let rows: Vec<&'static PeerTool> = PEER_TOOLS.iter().filter(|r| r.name == name).collect();
    match rows.as_slice() {
        [] => Err(Untranslatable::Tool(format!("Unknown tool: {name}"))),
        [row] if row.command.is_none() => Ok(row),
        _ => {
            let commands: Vec<&str> = rows.iter().filter_map(|r| r.command).collect();
            let sent = args.get("command");
            match sent.and_then(Value::as_str) {
                Some(command) => rows
                    .iter()
                    .find(|r| r.command == Some(command))
                    .copied()
                    .ok_or_else(|| {
                        Untranslatable::Argument(format!(
                            "{name}: unknown command \"{command}\" (commands are {})",
                            commands.join(", ")
                        ))
                    }),
                None => Err(Untranslatable::Argument(format!(
                    "{name} needs `command`: one of {}",
                    commands.join(", ")
                ))),
            }
        }
    }
}

fn refusal_of(row: &PeerTool, sent: &str, way_out: &str) -> String {
    match row.command {
        Some(command) => format!(
            "{sent} command {command} ({}) has no equivalent in tinytool: {way_out}.",
            row.source
        ),
        None => format!(
            "{sent} ({}) has no equivalent in tinytool: {way_out}.",
            row.source
        ),
    }
}

/// Applies one rule to the arguments of a call made as `key`, for `tool`.
fn apply_rule(
    rule: &ParamRule,
    key: &str,
    tool: &str,
    map: &mut Map<String, Value>,
    repairs: &mut Vec<String>,
) -> Result<(), Untranslatable> {
    let param = rule.param;
    if !map.contains_key(param) {
        return Ok(());
    }
    match rule.action {
        Action::Rename(to) => {
            let Some(value) = map.remove(param) else {
                return Ok(());
            };
            match map.get(to) {
                Some(existing) if *existing == value => {
                    repairs.push(format!(
                        "{param} and {to} both given, equal: {param} dropped"
                    ));
                }
                Some(existing) => {
                    return Err(Untranslatable::Argument(format!(
                        "both {param} ({}) and {to} ({}) given: they are one parameter of \
                         {tool} here, and which one you meant cannot be told; send {to} alone",
                        shown(&value),
                        shown(existing)
                    )));
                }
                None => {
                    map.insert(to.to_string(), value);
                    repairs.push(format!("renamed parameter {param} to {to}"));
                }
            }
        }
        Action::Convert { apply, .. } => {
            let Some(value) = map.remove(param) else {
                return Ok(());
            };
            match apply(map, value) {
                Ok(lines) => repairs.extend(lines),
                Err(why) => {
                    return Err(Untranslatable::Argument(format!("{key}: {why}")));
                }
            }
        }
        Action::Drop(why) => {
            map.remove(param);
            repairs.push(format!("{param} left out: {why}"));
        }
        Action::Refuse(way_out) => {
            return Err(Untranslatable::Argument(format!(
                "{key}'s {param} has no equivalent in tinytool's {tool}: {way_out}."
            )));
        }
    }
    Ok(())
}

/// A value as a message shows it: short, one line.
fn shown(value: &Value) -> String {
    let text = value.to_string();
    match text.char_indices().nth(80) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text,
    }
}

/// An integer sent as a number or as its text.
fn integer(value: &Value) -> Option<i64> {
    match value {
        Value::Number(n) => n
            .as_i64()
            .or_else(|| n.as_f64().filter(|f| f.fract() == 0.0).map(|f| f as i64)),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

/// A boolean sent as one or as its text.
fn boolean(value: &Value) -> Option<bool> {
    match value {
        Value::Bool(b) => Some(*b),
        Value::String(s) if s == "true" => Some(true),
        Value::String(s) if s == "false" => Some(false),
        _ => None,
    }
}

/// Claude Code's `Read` counts lines from 1 (0 also means the first line).
fn one_based_offset(map: &mut Map<String, Value>, value: Value) -> Result<Vec<String>, String> {
    match integer(&value) {
        Some(n) if n >= 1 => {
            map.insert("offset".into(), Value::from(n - 1));
            Ok(vec![format!(
                "offset {n} read as {} (Read counts lines from 1, read from 0)",
                n - 1
            )])
        }
        _ => {
            // 0 is the first line in both; anything else is the schema's to refuse.
            map.insert("offset".into(), value);
            Ok(Vec::new())
        }
    }
}

/// `read_file` is Gemini CLI's (offset from 0) and Codex's (offset from 1, never 0).
fn read_file_offset(map: &mut Map<String, Value>, value: Value) -> Result<Vec<String>, String> {
    let n = match integer(&value) {
        Some(n) if n >= 1 => n,
        _ => {
            map.insert("offset".into(), value);
            return Ok(Vec::new());
        }
    };
    if map.contains_key("absolute_path") {
        map.insert("offset".into(), value);
        return Ok(Vec::new());
    }
    if map.contains_key("mode") || map.contains_key("indentation") {
        map.insert("offset".into(), Value::from(n - 1));
        return Ok(vec![format!(
            "offset {n} read as {} (Codex's read_file counts lines from 1, read from 0)",
            n - 1
        )]);
    }
    Err(format!(
        "offset {n} has two readings: line {} in Gemini CLI's read_file (which counts from 0) \
         and line {n} in Codex's (which counts from 1). Call read with file_path and offset \
         counted from 0 (offset {} starts at line {n})",
        n + 1,
        n - 1
    ))
}

fn codex_read_mode(_: &mut Map<String, Value>, value: Value) -> Result<Vec<String>, String> {
    match value.as_str() {
        Some("slice") => Ok(vec!["mode \"slice\" left out: read reads lines".into()]),
        _ => Err(format!(
            "mode {} has no equivalent in read, which reads a slice of lines; leave mode out",
            shown(&value)
        )),
    }
}

/// The http(s) URLs in a text, in order, each once.
fn urls_in(text: &str) -> Vec<String> {
    let mut found: Vec<String> = Vec::new();
    for word in text.split(|c: char| c.is_whitespace() || matches!(c, '<' | '>' | '"' | '`')) {
        let Some(start) = word.find("http://").or_else(|| word.find("https://")) else {
            continue;
        };
        let url = word[start..].trim_end_matches(|c: char| {
            matches!(
                c,
                '.' | ',' | ';' | ':' | '!' | '?' | ')' | ']' | '}' | '\''
            )
        });
        if url.len() > "https://".len() && !found.iter().any(|u| u == url) {
            found.push(url.to_string());
        }
    }
    found
}

fn url_in_prompt(map: &mut Map<String, Value>, value: Value) -> Result<Vec<String>, String> {
    let text = value.as_str().unwrap_or_default();
    let urls = urls_in(text);
    match urls.as_slice() {
        [url] if !map.contains_key("url") => {
            map.insert("url".into(), Value::String(url.clone()));
            Ok(vec![format!(
                "url {url} taken from prompt: webfetch returns the page, the prompt's \
                 instructions are yours to follow"
            )])
        }
        [_] => Err("both prompt and url given; send url alone".into()),
        [] => Err("prompt names no http(s) URL; call webfetch with url".into()),
        many => Err(format!(
            "prompt names {} URLs and webfetch fetches one per call; call it once with each \
             url: {}",
            many.len(),
            many.join(", ")
        )),
    }
}

/// A JSON array, or the text of one (which the schema would parse too, saying so: the
/// same line is added to `repairs`).
fn array_of(param: &str, value: Value, repairs: &mut Vec<String>) -> Option<Vec<Value>> {
    match value {
        Value::Array(items) => Some(items),
        Value::String(text) => match serde_json::from_str(&text) {
            Ok(Value::Array(items)) => {
                repairs.push(format!("parsed `{param}` from JSON text into an array"));
                Some(items)
            }
            _ => None,
        },
        _ => None,
    }
}

fn plan_to_todos(map: &mut Map<String, Value>, value: Value) -> Result<Vec<String>, String> {
    if map.contains_key("todos") {
        return Err("both plan and todos given; send todos alone".into());
    }
    let mut repairs = Vec::new();
    let Some(items) = array_of("plan", value, &mut repairs) else {
        return Err("plan must be an array of {step, status}".into());
    };
    let count = items.len();
    let todos = items
        .into_iter()
        .map(|item| match item {
            Value::Object(mut fields) => {
                if let Some(step) = fields.remove("step") {
                    fields.entry("content").or_insert(step);
                }
                Value::Object(fields)
            }
            other => other,
        })
        .collect();
    map.insert("todos".into(), Value::Array(todos));
    repairs.push(format!(
        "plan read as todos ({count} steps, each step's text as content)"
    ));
    Ok(repairs)
}

fn codex_sandbox_permissions(
    _: &mut Map<String, Value>,
    value: Value,
) -> Result<Vec<String>, String> {
    match value.as_str() {
        Some("use_default") => Ok(vec!["sandbox_permissions \"use_default\" left out".into()]),
        _ => Err(format!(
            "sandbox_permissions {} cannot be granted by a call: the policy sets the sandbox \
             (tinytool sandbox shows it); leave the parameter out",
            shown(&value)
        )),
    }
}

fn no_escalation(_: &mut Map<String, Value>, value: Value) -> Result<Vec<String>, String> {
    match boolean(&value) {
        Some(false) => Ok(Vec::new()),
        _ => Err(
            "the sandbox cannot be lifted by a call: the policy sets it (tinytool sandbox shows \
             it); leave the parameter out"
                .into(),
        ),
    }
}

fn not_in_background(_: &mut Map<String, Value>, value: Value) -> Result<Vec<String>, String> {
    match boolean(&value) {
        Some(false) => Ok(Vec::new()),
        _ => Err(BACKGROUND.into()),
    }
}

fn single_line(_: &mut Map<String, Value>, value: Value) -> Result<Vec<String>, String> {
    match boolean(&value) {
        Some(false) => Ok(Vec::new()),
        _ => Err(
            "grep matches within one line; search for one line of the text, then read around it"
                .into(),
        ),
    }
}

fn case_insensitive(map: &mut Map<String, Value>, value: Value) -> Result<Vec<String>, String> {
    match boolean(&value) {
        Some(true) => match map.get("pattern").and_then(Value::as_str) {
            Some(pattern) => {
                let pattern = format!("(?i){pattern}");
                map.insert("pattern".into(), Value::String(pattern));
                Ok(vec!["-i read as (?i) before pattern".into()])
            }
            None => Err("-i needs a pattern to apply to".into()),
        },
        Some(false) => Ok(Vec::new()),
        None => Err(format!("-i must be true or false, got {}", shown(&value))),
    }
}

fn output_mode(_: &mut Map<String, Value>, value: Value) -> Result<Vec<String>, String> {
    match value.as_str() {
        Some("content") => Ok(Vec::new()),
        _ => Ok(vec![format!(
            "output_mode {} left out: grep shows the matching lines, each after its file and \
             line number",
            shown(&value)
        )]),
    }
}

fn list_directory(map: &mut Map<String, Value>, value: Value) -> Result<Vec<String>, String> {
    if map.contains_key("pattern") {
        return Err("list_directory takes no pattern; call glob for a pattern".into());
    }
    map.insert("pattern".into(), Value::String("*".into()));
    map.insert("path".into(), value);
    Ok(vec![
        "folder listed as glob pattern \"*\" in it (its files and folders)".into(),
    ])
}

fn no_domains(_: &mut Map<String, Value>, value: Value) -> Result<Vec<String>, String> {
    match &value {
        Value::Array(items) if items.is_empty() => Ok(Vec::new()),
        _ => Err(
            "websearch has no domain filter; name the site in the query (e.g. `rust docs.rs`) \
             and leave the domain lists out"
                .into(),
        ),
    }
}

fn expected_replacements(_: &mut Map<String, Value>, value: Value) -> Result<Vec<String>, String> {
    match integer(&value) {
        Some(1) => Ok(vec![
            "expected_replacements 1 left out: edit replaces exactly one occurrence".into(),
        ]),
        _ => Err(format!(
            "expected_replacements {} has no equivalent: edit replaces exactly one occurrence \
             (refusing when old_string is found more often), or every occurrence with \
             replace_all true (metadata.replacements says how many); send replace_all true \
             instead",
            shown(&value)
        )),
    }
}

fn view_range(map: &mut Map<String, Value>, value: Value) -> Result<Vec<String>, String> {
    let bad = || {
        format!(
            "view_range {} must be [start, end]: lines count from 1, end is -1 (to the end of \
             the file) or at least start",
            shown(&value)
        )
    };
    let pair: Vec<Option<i64>> = match &value {
        Value::Array(items) => items.iter().map(integer).collect(),
        _ => return Err(bad()),
    };
    let (start, end) = match pair.as_slice() {
        [Some(start), Some(end)] if *start >= 1 && (*end == -1 || end >= start) => (*start, *end),
        _ => return Err(bad()),
    };
    map.insert("offset".into(), Value::from(start - 1));
    if end == -1 {
        Ok(vec![format!(
            "view_range [{start}, -1] read as offset {} (read pages the rest)",
            start - 1
        )])
    } else {
        let limit = end - start + 1;
        map.insert("limit".into(), Value::from(limit));
        Ok(vec![format!(
            "view_range [{start}, {end}] read as offset {} limit {limit}",
            start - 1
        )])
    }
}

fn case_sensitive(_: &mut Map<String, Value>, value: Value) -> Result<Vec<String>, String> {
    match boolean(&value) {
        Some(true) => Ok(vec![
            "case_sensitive true left out: glob matches case-sensitively".into(),
        ]),
        _ => Err(
            "glob matches case-sensitively; write the pattern with classes such as \
             `[Rr]eadme*` and leave case_sensitive out"
                .into(),
        ),
    }
}

fn respect_git_ignore(map: &mut Map<String, Value>, value: Value) -> Result<Vec<String>, String> {
    match boolean(&value) {
        Some(true) => Ok(vec![
            "respect_git_ignore true left out: glob skips ignored paths".into(),
        ]),
        Some(false) if !map.contains_key("include_ignored") => {
            map.insert("include_ignored".into(), Value::Bool(true));
            Ok(vec![
                "respect_git_ignore false read as include_ignored true".into(),
            ])
        }
        _ => Err(format!(
            "respect_git_ignore {} cannot be read with include_ignored beside it; send \
             include_ignored alone",
            shown(&value)
        )),
    }
}

/// Words a shell takes as they are.
fn is_plain_word(word: &str) -> bool {
    !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c))
}

/// A word quoted for a POSIX shell when it needs to be.
pub fn shell_quote(word: &str) -> String {
    if is_plain_word(word) {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

fn argv_command(map: &mut Map<String, Value>, value: Value) -> Result<Vec<String>, String> {
    let items = match value {
        Value::Array(items) => items,
        other => {
            // A command line already; the schema checks its type.
            map.insert("command".into(), other);
            return Ok(Vec::new());
        }
    };
    let words: Option<Vec<String>> = items
        .iter()
        .map(|item| item.as_str().map(str::to_string))
        .collect();
    let Some(words) = words else {
        return Err("command as an array must hold strings only (argv)".into());
    };
    let shell = |w: &str| {
        matches!(
            w,
            "sh" | "bash" | "/bin/sh" | "/bin/bash" | "/usr/bin/sh" | "/usr/bin/bash"
        )
    };
    let (command, repair) = match words.as_slice() {
        [] => return Err("command is an empty array; give the command to run".into()),
        [sh, flag, script] if shell(sh) && matches!(flag.as_str(), "-c" | "-lc") => (
            script.clone(),
            format!(
                "command [\"{sh}\", \"{flag}\", SCRIPT] read as SCRIPT (run by sh -c{})",
                if flag == "-lc" {
                    ", not a login shell"
                } else {
                    ""
                }
            ),
        ),
        _ => {
            let line: Vec<String> = words.iter().map(|w| shell_quote(w)).collect();
            let line = line.join(" ");
            let repair = format!("command array read as the command line {line}");
            (line, repair)
        }
    };
    map.insert("command".into(), Value::String(command));
    Ok(vec![repair])
}

fn workdir(map: &mut Map<String, Value>, value: Value) -> Result<Vec<String>, String> {
    let Some(dir) = value.as_str() else {
        return Err(format!(
            "the folder must be a string, got {}",
            shown(&value)
        ));
    };
    if dir.is_empty() {
        return Ok(Vec::new());
    }
    let Some(command) = map.get("command").and_then(Value::as_str) else {
        return Err("a folder to run in needs a command".into());
    };
    // A folder named like an option would be read as one.
    let dir = if dir.starts_with('-') {
        format!("./{dir}")
    } else {
        dir.to_string()
    };
    // The braces keep the whole command behind the `cd`: with a bare `cd DIR && A; B`,
    // B would run in the wrong folder when the cd failed.
    let line = format!("cd {} && {{\n{command}\n}}", shell_quote(&dir));
    map.insert("command".into(), Value::String(line));
    Ok(vec![format!(
        "folder {} read as `cd {} && {{ … }}` before the command",
        shown(&Value::String(dir.clone())),
        shell_quote(&dir)
    )])
}

fn edit_items(map: &mut Map<String, Value>, value: Value) -> Result<Vec<String>, String> {
    let mut repairs = Vec::new();
    let Some(mut items) = array_of("edits", value.clone(), &mut repairs) else {
        // Not a list: the edit tool says what it wants.
        map.insert("edits".into(), value);
        return Ok(Vec::new());
    };
    let file = map
        .get("file_path")
        .and_then(Value::as_str)
        .map(str::to_string);
    let mut renamed = Vec::new();
    for (i, item) in items.iter_mut().enumerate() {
        let Value::Object(fields) = item else {
            continue;
        };
        for (alias, canonical) in [
            ("oldString", "old_string"),
            ("newString", "new_string"),
            ("replaceAll", "replace_all"),
            ("old_str", "old_string"),
            ("new_str", "new_string"),
        ] {
            if fields.contains_key(canonical) {
                continue;
            }
            if let Some(v) = fields.remove(alias) {
                fields.insert(canonical.into(), v);
                renamed.push(format!("edits[{i}].{alias}"));
            }
        }
        for key in ["filePath", "file_path"] {
            let Some(path) = fields.remove(key) else {
                continue;
            };
            if path.as_str() != file.as_deref() {
                return Err(format!(
                    "edits[{i}] names the file {} and the call {}: one edit call changes one \
                     file; send the edits of each file in a call of their own",
                    shown(&path),
                    file.as_deref()
                        .map_or("none".to_string(), |f| format!("{f:?}"))
                ));
            }
            renamed.push(format!("edits[{i}].{key} (the call's file)"));
        }
    }
    map.insert("edits".into(), Value::Array(items));
    if !renamed.is_empty() {
        repairs.push(format!(
            "edits translated: {} (oldString, newString, replaceAll, old_str and new_str \
             renamed; a file_path equal to the call's left out)",
            renamed.join(", ")
        ));
    }
    Ok(repairs)
}

fn todo_items(map: &mut Map<String, Value>, value: Value) -> Result<Vec<String>, String> {
    let mut repairs = Vec::new();
    let Some(mut items) = array_of("todos", value.clone(), &mut repairs) else {
        map.insert("todos".into(), value);
        return Ok(Vec::new());
    };
    for (i, item) in items.iter_mut().enumerate() {
        if let Value::Object(fields) = item {
            todo_item(i, fields, &mut repairs);
        }
    }
    map.insert("todos".into(), Value::Array(items));
    Ok(repairs)
}

/// Translates one todo item's words: `completed` → `done`, `medium` → `normal`, a missing
/// priority → `normal`, `description` → `content`, `activeForm` and `id` dropped.
/// `cancelled` is a status of its own.
fn todo_item(i: usize, fields: &mut Map<String, Value>, repairs: &mut Vec<String>) {
    if !fields.contains_key("content")
        && let Some(description) = fields.remove("description")
    {
        fields.insert("content".into(), description);
        repairs.push(format!("todo[{i}]: description read as content"));
    }
    let mut word = |key: &str, from: &str, to: &str| {
        if fields.get(key).and_then(Value::as_str) == Some(from) {
            fields.insert(key.into(), Value::String(to.into()));
            repairs.push(format!("todo[{i}]: {key} \"{from}\" read as \"{to}\""));
        }
    };
    word("status", "completed", "done");
    word("priority", "medium", "normal");
    if !fields.contains_key("priority") {
        fields.insert("priority".into(), Value::String("normal".into()));
        repairs.push(format!("todo[{i}]: no priority, \"normal\" assumed"));
    }
    for key in ["activeForm", "id"] {
        if fields.remove(key).is_some() {
            repairs.push(format!("todo[{i}]: {key} ignored"));
        }
    }
}

/// The edit distance between two names: insertions, deletions, substitutions and swaps
/// of two neighbours (`grpe` is one from `grep`), counted in characters.
pub fn distance(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    // d[i][j]: the distance between the first i characters of a and the first j of b.
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1)
                .min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = best;
        }
    }
    d[a.len()][b.len()]
}

/// The name among `names` closest to `name`, when one is near: a few characters apart
/// (a third of the shorter name, at least one), or starting with it (three characters or
/// more).
pub fn closest<'a>(name: &str, names: &[&'a str]) -> Option<&'a str> {
    let key = loose(name);
    if key.is_empty() {
        return None;
    }
    names
        .iter()
        .filter_map(|candidate| {
            let other = loose(candidate);
            let d = distance(&key, &other);
            let shorter = key.chars().count().min(other.chars().count());
            let near = d <= (shorter / 3).max(1);
            let prefix = key.chars().count() >= 3 && other.starts_with(&key);
            (near || prefix).then_some((d, *candidate))
        })
        .min_by_key(|(d, _)| *d)
        .map(|(_, candidate)| candidate)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::ALL_NAMES;
    use serde_json::json;

    /// Translates a call by name: the tool, the arguments and the repairs.
    fn call(name: &str, mut args: Value) -> Result<(String, Value, Vec<String>), Untranslatable> {
        let called = recognise(name, ALL_NAMES)
            .ok_or_else(|| Untranslatable::Tool(format!("not recognised: {name}")))?;
        let t = translate(&called, &mut args)?;
        Ok((t.tool.to_string(), args, t.repairs))
    }

    fn argument_error(result: Result<(String, Value, Vec<String>), Untranslatable>) -> String {
        match result {
            Err(Untranslatable::Argument(message)) => message,
            other => panic!("expected an argument refusal, got {other:?}"),
        }
    }

    #[test]
    fn every_rule_names_a_known_call_and_every_peer_a_known_tool() {
        let peer_keys: Vec<String> = PEER_TOOLS
            .iter()
            .flat_map(|row| {
                let mut keys = vec![row.name.to_string()];
                keys.extend(row.command.map(|c| format!("{} {c}", row.name)));
                keys
            })
            .collect();
        for rule in PARAMS {
            for on in rule.on {
                assert!(
                    ALL_NAMES.contains(on) || peer_keys.iter().any(|k| k == on),
                    "rule for {} names {on}, which is no tool",
                    rule.param
                );
            }
        }
        for row in PEER_TOOLS {
            if let Becomes::Tool(tool) = row.becomes {
                assert!(ALL_NAMES.contains(&tool), "{} → {tool}", row.name);
            }
            assert!(
                !ALL_NAMES.contains(&row.name),
                "{} is a tinytool name: it would never be reached",
                row.name
            );
        }
    }

    #[test]
    fn names_are_recognised_exactly_then_loosely() {
        let tool = |t: &'static str, respelled: Option<&str>| Called::Tool {
            tool: t,
            respelled: respelled.map(String::from),
        };
        assert_eq!(recognise("read", ALL_NAMES), Some(tool("read", None)));
        assert_eq!(
            recognise("READ", ALL_NAMES),
            Some(tool("read", Some("READ")))
        );
        assert_eq!(
            recognise("Apply_Patch", ALL_NAMES),
            Some(tool("apply_patch", Some("Apply_Patch")))
        );
        assert_eq!(
            recognise("ApplyPatch", ALL_NAMES),
            Some(tool("apply_patch", Some("ApplyPatch")))
        );
        assert_eq!(
            recognise("Read", ALL_NAMES),
            Some(Called::Peer {
                name: "Read",
                sent: "Read".into()
            })
        );
        assert_eq!(
            recognise("MULTIEDIT", ALL_NAMES),
            Some(Called::Peer {
                name: "MultiEdit",
                sent: "MULTIEDIT".into()
            })
        );
        assert_eq!(recognise("nosuchtool", ALL_NAMES), None);
        assert_eq!(recognise("", ALL_NAMES), None);
        assert_eq!(recognise("__", ALL_NAMES), None);
    }

    #[test]
    fn respelled_tools_say_so() {
        let (tool, _, repairs) = call("READ", json!({"file_path": "a"})).unwrap();
        assert_eq!(
            (tool.as_str(), repairs),
            ("read", vec!["tool READ read as read".into()])
        );
    }

    #[test]
    fn claude_code_read_counts_from_one() {
        let (tool, args, repairs) =
            call("Read", json!({"file_path": "a", "offset": 10, "limit": 5})).unwrap();
        assert_eq!(tool, "read");
        assert_eq!(args, json!({"file_path": "a", "offset": 9, "limit": 5}));
        assert_eq!(
            repairs,
            [
                "tool Read read as read",
                "offset 10 read as 9 (Read counts lines from 1, read from 0)"
            ]
        );
        let (_, args, _) = call("Read", json!({"file_path": "a", "offset": 0})).unwrap();
        assert_eq!(args["offset"], 0);
        // tinytool's own read, however spelled, counts from 0.
        let (_, args, _) = call("READ", json!({"file_path": "a", "offset": 10})).unwrap();
        assert_eq!(args["offset"], 10);
    }

    #[test]
    fn read_file_offset_is_refused_when_it_could_be_either_agents() {
        let message = argument_error(call("read_file", json!({"file_path": "a", "offset": 10})));
        assert!(
            message.contains("Gemini CLI") && message.contains("Codex"),
            "{message}"
        );
        assert!(
            message.contains("line 11") && message.contains("offset 9"),
            "{message}"
        );
        let (_, args, _) = call("read_file", json!({"absolute_path": "/a", "offset": 10})).unwrap();
        assert_eq!(args, json!({"file_path": "/a", "offset": 10}));
        let (_, args, repairs) = call(
            "read_file",
            json!({"file_path": "/a", "offset": 10, "mode": "slice"}),
        )
        .unwrap();
        assert_eq!(args, json!({"file_path": "/a", "offset": 9}));
        assert_eq!(repairs.len(), 3, "{repairs:?}");
        let (_, args, _) = call("read_file", json!({"file_path": "/a", "offset": 0})).unwrap();
        assert_eq!(args["offset"], 0);
        let message = argument_error(call(
            "read_file",
            json!({"file_path": "/a", "mode": "indentation"}),
        ));
        assert!(message.contains("indentation"), "{message}");
    }

    #[test]
    fn both_spellings_equal_drop_the_alias_different_refuse() {
        let (_, args, repairs) = call("read", json!({"filePath": "a", "file_path": "a"})).unwrap();
        assert_eq!(args, json!({"file_path": "a"}));
        assert_eq!(
            repairs,
            ["filePath and file_path both given, equal: filePath dropped"]
        );
        let message = argument_error(call("read", json!({"filePath": "a", "file_path": "b"})));
        assert!(
            message.contains("filePath (\"a\")") && message.contains("file_path (\"b\")"),
            "{message}"
        );
    }

    #[test]
    fn opencode_and_generic_edit_aliases_are_renamed_and_listed() {
        let (_, args, repairs) = call(
            "edit",
            json!({"filePath": "a", "oldString": "x", "newString": "y", "replaceAll": true}),
        )
        .unwrap();
        assert_eq!(
            args,
            json!({"file_path": "a", "old_string": "x", "new_string": "y", "replace_all": true})
        );
        assert_eq!(repairs.len(), 4);
        let (_, args, _) =
            call("edit", json!({"path": "a", "old_str": "x", "new_str": "y"})).unwrap();
        assert_eq!(
            args,
            json!({"file_path": "a", "old_string": "x", "new_string": "y"})
        );
    }

    #[test]
    fn aliases_belong_to_their_tool() {
        let (_, args, repairs) = call("glob", json!({"glob": "*.rs"})).unwrap();
        assert!(repairs.is_empty());
        assert_eq!(args, json!({"glob": "*.rs"}));
        let (_, args, repairs) = call("grep", json!({"pattern": "x", "glob": "*.rs"})).unwrap();
        assert_eq!(repairs.len(), 1);
        assert_eq!(args, json!({"pattern": "x", "include": "*.rs"}));
    }

    #[test]
    fn write_takes_text_and_file_text_as_content() {
        let (_, args, _) = call("write", json!({"path": "a", "text": "x"})).unwrap();
        assert_eq!(args, json!({"file_path": "a", "content": "x"}));
        let (tool, args, _) =
            call("write_file", json!({"file_path": "a", "content": "x"})).unwrap();
        assert_eq!(
            (tool.as_str(), args),
            ("write", json!({"file_path": "a", "content": "x"}))
        );
    }

    #[test]
    fn multiedit_items_are_translated_and_checked_for_their_file() {
        let (tool, args, repairs) = call(
            "multiedit",
            json!({"filePath": "a", "edits": [
                {"filePath": "a", "oldString": "x", "newString": "y"},
                {"oldString": "p", "newString": "q", "replaceAll": true}
            ]}),
        )
        .unwrap();
        assert_eq!(tool, "edit");
        assert_eq!(
            args,
            json!({"file_path": "a", "edits": [
                {"old_string": "x", "new_string": "y"},
                {"old_string": "p", "new_string": "q", "replace_all": true}
            ]})
        );
        assert_eq!(repairs[0], "tool multiedit read as edit");
        let message = argument_error(call(
            "MultiEdit",
            json!({"file_path": "a", "edits": [{"file_path": "b", "old_string": "x", "new_string": "y"}]}),
        ));
        assert!(
            message.contains("edits[0] names the file \"b\""),
            "{message}"
        );
    }

    #[test]
    fn codex_argv_becomes_a_command_line() {
        let (tool, args, repairs) = call(
            "shell",
            json!({"command": ["bash", "-lc", "ls | wc -l"], "timeout_ms": 5000}),
        )
        .unwrap();
        assert_eq!(tool, "bash");
        assert_eq!(args, json!({"command": "ls | wc -l", "timeout": 5000}));
        assert_eq!(
            repairs[1],
            "command [\"bash\", \"-lc\", SCRIPT] read as SCRIPT (run by sh -c, not a login shell)"
        );
        let (_, args, _) = call(
            "shell",
            json!({"command": ["printf", "%s\n", "it's a b", "$HOME"]}),
        )
        .unwrap();
        assert_eq!(
            args["command"],
            r"printf '%s
' 'it'\''s a b' '$HOME'"
        );
        assert!(argument_error(call("shell", json!({"command": []}))).contains("empty"));
        assert!(argument_error(call("shell", json!({"command": ["ls", 3]}))).contains("strings"));
    }

    #[test]
    fn a_workdir_becomes_a_cd_that_guards_the_whole_command() {
        let (_, args, repairs) = call(
            "shell_command",
            json!({"command": "make; make test", "workdir": "my dir", "login": true}),
        )
        .unwrap();
        assert_eq!(
            args,
            json!({"command": "cd 'my dir' && {\nmake; make test\n}"})
        );
        assert_eq!(repairs.len(), 3, "{repairs:?}");
        let (_, args, _) = call(
            "run_shell_command",
            json!({"command": "ls", "dir_path": "-x"}),
        )
        .unwrap();
        assert_eq!(args["command"], "cd ./-x && {\nls\n}");
        let (_, args, _) = call(
            "exec_command",
            json!({"cmd": "ls", "workdir": "src", "yield_time_ms": 10}),
        )
        .unwrap();
        assert_eq!(args, json!({"command": "cd src && {\nls\n}"}));
    }

    #[test]
    fn background_and_sandbox_escapes_are_refused() {
        for (name, args) in [
            ("Bash", json!({"command": "x", "run_in_background": true})),
            (
                "run_shell_command",
                json!({"command": "x", "is_background": true}),
            ),
        ] {
            assert!(argument_error(call(name, args)).contains("monitor"));
        }
        assert!(
            argument_error(call(
                "Bash",
                json!({"command": "x", "dangerouslyDisableSandbox": true})
            ))
            .contains("policy")
        );
        assert!(
            argument_error(call(
                "shell",
                json!({"command": ["ls"], "sandbox_permissions": "require_escalated"})
            ))
            .contains("policy")
        );
        let (_, args, _) = call(
            "Bash",
            json!({"command": "x", "run_in_background": false, "timeout": 9}),
        )
        .unwrap();
        assert_eq!(args, json!({"command": "x", "timeout": 9}));
    }

    #[test]
    fn claude_grep_options_translate_or_refuse() {
        let (_, args, repairs) = call(
            "Grep",
            json!({"pattern": "fn", "-i": true, "-n": true, "output_mode": "content",
                   "head_limit": 5, "glob": "*.rs"}),
        )
        .unwrap();
        assert_eq!(
            args,
            json!({"pattern": "(?i)fn", "max_count": 5, "include": "*.rs"})
        );
        assert_eq!(repairs.len(), 5, "{repairs:?}");
        assert!(
            argument_error(call("Grep", json!({"pattern": "x", "type": "py"}))).contains("include")
        );
        assert!(
            argument_error(call("Grep", json!({"pattern": "x", "multiline": true})))
                .contains("one line")
        );
        let (_, args, repairs) = call(
            "grep_search",
            json!({"pattern": "x", "dir_path": "src", "total_max_matches": 7}),
        )
        .unwrap();
        assert_eq!(args, json!({"pattern": "x", "path": "src", "max_count": 7}));
        assert_eq!(repairs.len(), 3);
    }

    #[test]
    fn gemini_glob_options() {
        let (_, args, _) = call(
            "glob",
            json!({"pattern": "*.md", "dir_path": "docs", "respect_git_ignore": false,
                   "case_sensitive": true}),
        )
        .unwrap();
        assert_eq!(
            args,
            json!({"pattern": "*.md", "path": "docs", "include_ignored": true})
        );
        assert!(
            argument_error(call(
                "glob",
                json!({"pattern": "*", "case_sensitive": false})
            ))
            .contains("[Rr]eadme")
        );
        let (tool, args, _) = call("list_directory", json!({"dir_path": "src"})).unwrap();
        assert_eq!(
            (tool.as_str(), args),
            ("glob", json!({"pattern": "*", "path": "src"}))
        );
    }

    #[test]
    fn todos_from_every_agent() {
        let (_, args, repairs) = call(
            "TodoWrite",
            json!({"todos": [
                {"content": "a", "status": "completed", "priority": "medium", "id": "1"},
                {"content": "b", "status": "cancelled", "activeForm": "Doing b"},
            ]}),
        )
        .unwrap();
        assert_eq!(
            args,
            json!({"todos": [
                {"content": "a", "status": "done", "priority": "normal"},
                {"content": "b", "status": "cancelled", "priority": "normal"},
            ]})
        );
        assert_eq!(
            repairs,
            [
                "tool TodoWrite read as todowrite",
                "todo[0]: status \"completed\" read as \"done\"",
                "todo[0]: priority \"medium\" read as \"normal\"",
                "todo[0]: id ignored",
                "todo[1]: no priority, \"normal\" assumed",
                "todo[1]: activeForm ignored",
            ]
        );
        let (_, args, _) = call(
            "write_todos",
            json!({"todos": [{"description": "a", "status": "in_progress"}]}),
        )
        .unwrap();
        assert_eq!(
            args,
            json!({"todos": [{"content": "a", "status": "in_progress", "priority": "normal"}]})
        );
        let (tool, args, _) = call(
            "update_plan",
            json!({"explanation": "why", "plan": [{"step": "a", "status": "completed"}]}),
        )
        .unwrap();
        assert_eq!(tool, "todowrite");
        assert_eq!(
            args,
            json!({"todos": [{"content": "a", "status": "done", "priority": "normal"}]})
        );
        // Sent as JSON text, the list is still translated, and its parsing listed.
        let (_, args, repairs) = call(
            "todowrite",
            json!({"todos": "[{\"content\": \"a\", \"status\": \"completed\"}]"}),
        )
        .unwrap();
        assert_eq!(args["todos"][0]["status"], "done");
        assert_eq!(repairs[0], "parsed `todos` from JSON text into an array");
    }

    #[test]
    fn the_text_editor_dispatches_on_its_command() {
        let (tool, args, repairs) = call(
            "str_replace_based_edit_tool",
            json!({"command": "view", "path": "a", "view_range": [3, 5]}),
        )
        .unwrap();
        assert_eq!(tool, "read");
        assert_eq!(args, json!({"file_path": "a", "offset": 2, "limit": 3}));
        assert_eq!(
            repairs,
            [
                "str_replace_based_edit_tool command view read as read",
                "renamed parameter path to file_path",
                "view_range [3, 5] read as offset 2 limit 3",
            ]
        );
        let (_, args, _) = call(
            "str_replace_editor",
            json!({"command": "view", "path": "a", "view_range": [3, -1]}),
        )
        .unwrap();
        assert_eq!(args, json!({"file_path": "a", "offset": 2}));
        for bad in [json!([0, 3]), json!([5, 3]), json!([1]), json!("1-3")] {
            let message = argument_error(call(
                "str_replace_based_edit_tool",
                json!({"command": "view", "path": "a", "view_range": bad}),
            ));
            assert!(message.contains("count from 1"), "{message}");
        }
        let (tool, args, _) = call(
            "str_replace_based_edit_tool",
            json!({"command": "create", "path": "a", "file_text": "x"}),
        )
        .unwrap();
        assert_eq!(
            (tool.as_str(), args),
            (
                "edit",
                json!({"file_path": "a", "new_string": "x", "old_string": ""})
            )
        );
        let (_, args, _) = call(
            "str_replace_based_edit_tool",
            json!({"command": "str_replace", "path": "a", "old_str": "x"}),
        )
        .unwrap();
        assert_eq!(
            args,
            json!({"file_path": "a", "old_string": "x", "new_string": ""})
        );
        let (_, args, _) = call(
            "str_replace_editor",
            json!({"command": "insert", "path": "a", "insert_line": 2, "insert_text": "x"}),
        )
        .unwrap();
        assert_eq!(
            args,
            json!({"file_path": "a", "insert_line": 2, "new_string": "x"})
        );
        match call(
            "str_replace_based_edit_tool",
            json!({"command": "undo_edit", "path": "a"}),
        ) {
            Err(Untranslatable::Tool(message)) => {
                assert!(message.contains("checkpoint"), "{message}");
            }
            other => panic!("{other:?}"),
        }
        let message = argument_error(call("str_replace_based_edit_tool", json!({"path": "a"})));
        assert!(message.contains("needs `command`"), "{message}");
        let message = argument_error(call(
            "str_replace_based_edit_tool",
            json!({"command": "delete", "path": "a"}),
        ));
        assert!(message.contains("unknown command \"delete\""), "{message}");
    }

    #[test]
    fn web_tools() {
        let (tool, args, repairs) = call(
            "WebFetch",
            json!({"url": "https://example.com", "prompt": "summarise"}),
        )
        .unwrap();
        assert_eq!(
            (tool.as_str(), args),
            ("webfetch", json!({"url": "https://example.com"}))
        );
        assert_eq!(repairs.len(), 2);
        let (_, args, _) = call(
            "web_fetch",
            json!({"prompt": "Summarise https://example.com/a.html, please."}),
        )
        .unwrap();
        assert_eq!(args, json!({"url": "https://example.com/a.html"}));
        let message = argument_error(call(
            "web_fetch",
            json!({"prompt": "compare https://a.example and https://b.example"}),
        ));
        assert!(
            message.contains("https://a.example, https://b.example"),
            "{message}"
        );
        assert!(
            argument_error(call("web_fetch", json!({"prompt": "no link"}))).contains("no http")
        );
        let (tool, args, _) =
            call("WebSearch", json!({"query": "q", "allowed_domains": []})).unwrap();
        assert_eq!((tool.as_str(), args), ("websearch", json!({"query": "q"})));
        assert!(
            argument_error(call(
                "WebSearch",
                json!({"query": "q", "blocked_domains": ["x.com"]})
            ))
            .contains("domain")
        );
    }

    #[test]
    fn gemini_replace_counts() {
        let (tool, args, _) = call(
            "replace",
            json!({"file_path": "a", "old_string": "x", "new_string": "y",
                   "expected_replacements": 1, "instruction": "fix"}),
        )
        .unwrap();
        assert_eq!(
            (tool.as_str(), args),
            (
                "edit",
                json!({"file_path": "a", "old_string": "x", "new_string": "y"})
            )
        );
        let message = argument_error(call(
            "replace",
            json!({"file_path": "a", "old_string": "x", "new_string": "y", "expected_replacements": 3}),
        ));
        assert!(message.contains("replace_all true"), "{message}");
    }

    #[test]
    fn patches_from_codex_and_opencode() {
        let (tool, args, _) = call("patch", json!({"patchText": "P"})).unwrap();
        assert_eq!(
            (tool.as_str(), args),
            ("apply_patch", json!({"patch": "P"}))
        );
        let (_, args, _) = call("apply_patch", json!({"input": "P"})).unwrap();
        assert_eq!(args, json!({"patch": "P"}));
    }

    #[test]
    fn listing_tools_are_refused_with_the_way_out() {
        for name in ["LS", "list", "read_many_files"] {
            match call(name, json!({})) {
                Err(Untranslatable::Tool(message)) => {
                    assert!(message.contains("has no equivalent"), "{message}");
                }
                other => panic!("{name}: {other:?}"),
            }
        }
    }

    #[test]
    fn closest_names() {
        let names = [
            "read",
            "write",
            "edit",
            "grep",
            "glob",
            "todowrite",
            "webfetch",
        ];
        assert_eq!(closest("grpe", &names), Some("grep"));
        assert_eq!(closest("reed", &names), Some("read"));
        assert_eq!(closest("webfech", &names), Some("webfetch"));
        assert_eq!(closest("todo", &names), Some("todowrite"));
        assert_eq!(closest("nosuchtool", &names), None);
        assert_eq!(closest("", &names), None);
        assert_eq!(distance("kitten", "sitting"), 3);
        assert_eq!(distance("grpe", "grep"), 1);
        assert_eq!(distance("", "ab"), 2);
    }

    #[test]
    fn quoting_keeps_words_whole() {
        assert_eq!(shell_quote("a-b/c.d"), "a-b/c.d");
        assert_eq!(shell_quote(""), "''");
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
    }
}
