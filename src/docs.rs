//! Generated documentation: the manual pages committed under `man/` and the completion
//! scripts committed under `completions/`, built from the same definitions the command line
//! uses ([`cli::command`] and the registry), so they cannot drift from the binary.
//!
//! Pages:
//! - `tinytool(1)`: modes, global options with their environment twins (rendered by
//!   clap_mangen from the clap command), the tools, the exit-status table, environment,
//!   files and examples;
//! - `tinytool-<tool>(1)` for every documented tool whose subcommand is not hidden: the
//!   parameters from its JSON Schema, then output, errors and examples from its `ToolDef.doc`.
//!   A newly registered tool gets its page with nothing else to do;
//! - the pages of [`EXTRA_PAGES`]: a page that is not about a tool (an `mcp` mode, a file
//!   format in section 5) is one function returning a [`ManPage`] plus one line there.
//!
//! `make man completions` (`cargo run --example gen-docs`) writes the files; a test
//! regenerates them in-process and fails on any difference. Every page is plain ASCII roff
//! (other characters become `\[uXXXX]` escapes) using only the `man` macros, so
//! `groff -ww -man` renders it without warnings.

use std::io;
use std::path::{Path, PathBuf};

use clap::{Arg, ArgAction, Command};
use serde_json::Value;

use crate::cli;
use crate::exit::ExitStatus;
use crate::tool::ToolDef;
use crate::tools;

/// A generated file: its name inside its folder, and its bytes.
pub type Generated = (String, Vec<u8>);

/// Folder of the manual pages, relative to the repository root.
pub const MAN_DIR: &str = "man";
/// Folder of the completion scripts, relative to the repository root.
pub const COMPLETIONS_DIR: &str = "completions";

/// The footer's "manual" field of every page.
const MANUAL: &str = "tinytool manual";

/// Pages beyond `tinytool(1)` and the tool pages, one function each, in the order they are
/// listed under SEE ALSO. A page is built with [`ManPage`]:
///
/// ```
/// use tinytool::docs::ManPage;
///
/// fn mcp_page() -> ManPage {
///     let mut page = ManPage::new("tinytool-mcp", 1, "the Model Context Protocol server");
///     page.heading("description")
///         .paragraph("`tinytool mcp` serves every tool over JSON-RPC on stdio.");
///     page
/// }
/// assert_eq!(mcp_page().file_name(), "tinytool-mcp.1");
/// assert_eq!(mcp_page().reference(), "tinytool-mcp(1)");
/// ```
const EXTRA_PAGES: &[fn() -> ManPage] = &[mcp_page, policy_page, checkpoints_page, undo_page];

/// `tinytool-mcp(1)`: the MCP server, written by hand as roff beside it.
fn mcp_page() -> ManPage {
    ManPage::from_roff("tinytool-mcp", 1, include_str!("mcp/mcp.roff"))
}

/// `tinytool-checkpoints(1)`: checkpoints, their storage and configuration.
fn checkpoints_page() -> ManPage {
    ManPage::from_roff(
        "tinytool-checkpoints",
        1,
        include_str!("checkpoints/checkpoints.roff"),
    )
}

/// `tinytool-undo(1)`: reverting a checkpoint.
fn undo_page() -> ManPage {
    ManPage::from_roff("tinytool-undo", 1, include_str!("checkpoints/undo.roff"))
}

/// `tinytool-policy(5)`: the policy file format, written by hand as roff beside the policy
/// engine.
fn policy_page() -> ManPage {
    ManPage::from_roff("tinytool-policy", 5, include_str!("policy/manual.roff"))
}

/// Variables tinytool reads that are not the twin of a global option (those are listed from
/// the command line itself): `(name, meaning)`.
const ENVIRONMENT: &[(&str, &str)] = &[
    (
        "TINYTOOL_SUBAGENT_DEPTH",
        "How deep in a chain of subagents this process runs (0 when unset). The `task` tool \
         sets it to one more for the subagents it starts, and refuses to go deeper than 5.",
    ),
    (
        "TINYTOOL_SUPERVISED",
        "Set by tinytool in the environment of every process of a monitor or background \
         task (a random token, also stored in the state). A later call that finds the \
         supervisor of such work gone kills the work's process group only when one of its \
         processes carries the token, so a reused process id never gets a stranger killed.",
    ),
    (
        "TINYTOOL_RUN",
        "Set by tinytool in the environment of every command it runs (`bash`, a task, a \
         formatter or hook, a monitor): the command's token, after any a nested tinytool \
         inherited. When the command ends, a process that left its group (with `setsid`, a \
         daemon's double fork) but still carries the token is killed; a process started \
         with a fresh environment (`env -i`) cannot be told apart and is left alone.",
    ),
    (
        "EXA_API_KEY",
        "The Exa API key: the `websearch` tool exists only when it is set (and not empty), \
         and sends it with each search. Not passed on to commands `bash` runs.",
    ),
    (
        "XDG_CONFIG_HOME",
        "Where the user's configuration lives: `$XDG_CONFIG_HOME/tinytool/`. Ignored unless \
         it is an absolute path.",
    ),
    (
        "HOME",
        "The user configuration falls back to `$HOME/.config/tinytool/`; a leading `~` in a \
         path argument means this directory.",
    ),
];

/// Files tinytool reads or creates: `(path, meaning)`.
const FILES: &[(&str, &str)] = &[
    (
        "$XDG_CONFIG_HOME/tinytool/config.json",
        "The user configuration (else `~/.config/tinytool/config.json`): formatters, \
         subagents, skill paths, output limits, webfetch hosts, the websearch endpoint, \
         the after-hook, what read sends of an image (`images.max_bytes`, 3932160 by \
         default: a larger image is downscaled until it fits; `images.max_side`, 8000: a \
         longer side is downscaled to it; `images.max_pixels`, 32000000: a larger one is \
         refused before decoding) and the largest MCP message (`mcp.max_message_bytes`, \
         8388608: over MCP an image is also downscaled to fit one message). Bad JSON or an unknown key is a usage error naming the file, line \
         and column.",
    ),
    (
        "$XDG_CONFIG_HOME/tinytool/policy.json",
        "The user policy (else `~/.config/tinytool/policy.json`), replaced by `--policy`; \
         see tinytool-policy(5).",
    ),
    (
        "$XDG_CONFIG_HOME/tinytool/skills/*/SKILL.md",
        "The user's skills, for the `skill` tool.",
    ),
    (
        "DIR/.tinytool/",
        "tinytool's folder in the project (DIR is the `--dir` directory), created on first \
         need with a `.gitignore` containing `*`, so `git status` stays clean.",
    ),
    (
        "DIR/.tinytool/config.json",
        "The project configuration; it overrides the user file key by key, except \
         `webfetch.allow_hosts`, `websearch.endpoint` and `after_hook`, which are taken from \
         the user file only, and the output, image and message caps, which it may only \
         lower.",
    ),
    (
        "DIR/.tinytool/policy.json",
        "The project policy: its rules can only restrict, unless the user policy sets \
         `trust_project`.",
    ),
    (
        "DIR/.tinytool/state.db",
        "The session state (SQLite, unless `--state` names another file): todos, notes, \
         findings, agent modes, approvals, answers used, background jobs, monitors and their \
         unread output, and the checkpoints' records. Read-only work never creates it. \
         Finished jobs and monitors are pruned 7 days after they end.",
    ),
    (
        "DIR/.tinytool/checkpoints/",
        "The contents kept by checkpoints (`blobs/`, one file per distinct content) and their \
         lock; see tinytool-checkpoints(1). Commands in the sandbox see it empty.",
    ),
    ("DIR/.tinytool/skills/*/SKILL.md", "The project's skills."),
    (
        "DIR/.tinytool/outputs/",
        "Spill files: the whole output of each previewed result, written while it is \
         produced, as `out-MILLIS-PID-N.txt`. One file keeps at most 64 MB (its last line \
         says where it was cut); the folder is pruned oldest first to `output.keep_bytes` \
         (default 268435456) and after 7 days. The one part of DIR/.tinytool/ a read-only \
         shell line may name without `secret-shell`.",
    ),
    (
        "DIR/.tinytool/journal/",
        "The record of a multi-file change (apply_patch) in progress, removed when it ends. \
         A record left by a killed process is finished (when every new file is in place) \
         or undone by the next tinytool call in the project, which also removes the hidden \
         helper files it names.",
    ),
    (
        "$XDG_RUNTIME_DIR/tinytool/locks/",
        "Lock files, one per file being changed, shared by every tinytool process of the \
         user whatever its --dir, named by the identity of the file's directory and a hash \
         of its name; removed by their holder when the change is done, waited for two \
         minutes at most. Without XDG_RUNTIME_DIR: /run/user/UID/tinytool/locks/, else \
         locks/ in the user's state directory ($XDG_STATE_HOME/tinytool, or \
         ~/.local/state/tinytool), else /tmp/tinytool-UID/locks/ (mode 0700; a lock \
         directory owned by another user or open to others is refused). Commands do not \
         see it.",
    ),
];

/// Examples of `tinytool(1)`: `(explanation, command)`.
const EXAMPLES: &[(&str, &str)] = &[
    (
        "Read the first 40 lines of a file; flags come from the tool's schema",
        "tinytool read --file-path src/main.rs --limit 40",
    ),
    (
        "The same call with its parameters as a JSON object on standard input",
        "echo '{\"file_path\":\"src/main.rs\",\"limit\":40}' | tinytool read",
    ),
    (
        "Only the output text; the exit status says whether the call failed",
        "tinytool --text read --file-path src/main.rs",
    ),
    (
        "One call in the OpenAI shape, its id echoed in the result",
        "echo '{\"id\":\"c1\",\"name\":\"read\",\"arguments\":\"{\\\"file_path\\\":\\\"a.rs\\\"}\"}' | tinytool exec",
    ),
    (
        "A persistent process for an agent framework: one call per line in, one result per line out",
        "tinytool --dir ~/project --events events.jsonl exec --jsonl < calls.jsonl",
    ),
    (
        "The tool definitions for a provider",
        "tinytool tools --format anthropic",
    ),
    (
        "Install bash completion for the current user",
        "tinytool completions bash > ~/.local/share/bash-completion/completions/tinytool",
    ),
];

/// Every manual page: `tinytool.1`, one `tinytool-<tool>.1` per documented, visible tool
/// (registry order), then [`EXTRA_PAGES`].
pub fn man_pages() -> Vec<Generated> {
    let mut cmd = cli::public_command();
    cmd.build();
    let registry = tools::documented();
    let tools: Vec<&ToolDef> = registry
        .all()
        .iter()
        .filter(|def| is_visible(&cmd, def.name))
        .collect();
    let extras: Vec<ManPage> = EXTRA_PAGES.iter().map(|page| page()).collect();
    let mut see_also: Vec<String> = tools.iter().map(|def| tool_page_ref(def)).collect();
    see_also.extend(extras.iter().map(ManPage::reference));
    let mut pages = vec![main_page(&cmd, &tools, &see_also).finish()];
    for def in &tools {
        if let Some(sub) = cmd.find_subcommand(def.name) {
            pages.push(tool_page(&cmd, sub, def).finish());
        }
    }
    pages.extend(extras.into_iter().map(ManPage::finish));
    pages
}

/// The completion scripts for every shell of [`cli::SHELLS`], under the names the Makefile
/// installs: `tinytool.bash`, `_tinytool`, `tinytool.fish`.
pub fn completions() -> Vec<Generated> {
    cli::SHELLS
        .iter()
        .filter_map(|shell| {
            let script = completion_script(shell)?;
            Some((completion_file_name(shell)?.to_string(), script))
        })
        .collect()
}

/// The file a shell's completion script is committed as (`None` for a shell not in
/// [`cli::SHELLS`]).
pub fn completion_file_name(shell: &str) -> Option<&'static str> {
    match shell {
        "bash" => Some("tinytool.bash"),
        "zsh" => Some("_tinytool"),
        "fish" => Some("tinytool.fish"),
        _ => None,
    }
}

pub use cli::completion_script;

/// Writes every page into `root/man/` and every script into `root/completions/`, and
/// removes files there that are no longer generated (a renamed tool's old page). Returns
/// the paths written.
pub fn write_all(root: &Path) -> io::Result<Vec<PathBuf>> {
    let mut written = write_folder(&root.join(MAN_DIR), man_pages())?;
    written.extend(write_folder(&root.join(COMPLETIONS_DIR), completions())?);
    Ok(written)
}

fn write_folder(folder: &Path, files: Vec<Generated>) -> io::Result<Vec<PathBuf>> {
    std::fs::create_dir_all(folder)?;
    for entry in std::fs::read_dir(folder)? {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if entry.file_type()?.is_file() && !files.iter().any(|(n, _)| *n == name) {
            std::fs::remove_file(entry.path())?;
        }
    }
    let mut written = Vec::new();
    for (name, bytes) in files {
        let path = folder.join(name);
        if std::fs::read(&path).ok().as_deref() != Some(bytes.as_slice()) {
            std::fs::write(&path, &bytes)?;
        }
        written.push(path);
    }
    Ok(written)
}

/// Whether the documented command line has a subcommand and shows it (hidden ones get no
/// page and no mention).
fn is_visible(cmd: &Command, name: &str) -> bool {
    cmd.find_subcommand(name)
        .is_some_and(|sub| !sub.is_hide_set())
}

fn tool_page_ref(def: &ToolDef) -> String {
    format!("tinytool-{}(1)", def.name)
}

// ---------------------------------------------------------------------------------------
// tinytool(1)

fn main_page(cmd: &Command, tools: &[&ToolDef], see_also: &[String]) -> ManPage {
    let mut page = ManPage::new(
        "tinytool",
        1,
        &cmd.get_about().map(|a| a.to_string()).unwrap_or_default(),
    );
    page.heading("SYNOPSIS");
    page.synopsis_line(&format!(
        "{} [{}] {} [{}{} {} ...]",
        bold("tinytool"),
        italic("OPTIONS"),
        italic("TOOL"),
        bold("--"),
        italic("PARAMETER"),
        italic("VALUE")
    ));
    for mode in modes(cmd) {
        page.synopsis_line(&format!(
            "{} [{}] {}",
            bold("tinytool"),
            italic("OPTIONS"),
            usage(&mode, Style::Roff)
        ));
    }
    page.mangen(cmd, Section::Description);
    page.mangen(cmd, Section::Options);

    page.heading("MODES");
    page.paragraph(
        "Besides one subcommand per tool, tinytool has these modes. The global options above \
         apply to each.",
    );
    for mode in modes(cmd) {
        page.subheading(&format!("tinytool {}", usage(&mode, Style::Plain)));
        let about = mode
            .cmd
            .get_long_about()
            .or_else(|| mode.cmd.get_about())
            .map(|a| a.to_string())
            .unwrap_or_default();
        page.paragraph(&about);
        for arg in own_args(mode.cmd) {
            page.item(&arg_spec(arg, Style::Roff), &arg_help(arg));
        }
    }

    page.heading("TOOLS");
    page.paragraph(
        "Each tool is a subcommand whose flags come from the tool's JSON Schema \
         (`file_path` becomes `--file-path`); array and object parameters take JSON text. \
         The same parameters can come as a JSON object on standard input, which is read only \
         when it is not a terminal and no parameter flag was given (or with `--stdin`), so \
         flags with an idle pipe never hang; flags override keys from standard input. \
         `null` for an optional parameter means it is absent, and an unknown parameter is an \
         error naming the valid ones. Each call prints one JSON result.",
    );
    for def in tools {
        page.item(
            &bold(def.name),
            &format!("{} See {}.", sentence(def.summary), tool_page_ref(def)),
        );
    }

    other_agents(&mut page);

    page.heading("OUTPUT");
    page.paragraph(
        "Each call writes one JSON object on one line: `{\"id\", \"tool\", \"output\", \
         \"is_error\", \"truncated\", \"metadata\"}`. `id` echoes the call's id (left out when \
         it had none), `output` is what a model sees, `metadata` holds structured facts of the \
         tool. Only an output of more than 2000 lines or more than 51200 bytes (config \
         `output.max_lines` / `output.max_bytes`) is previewed, with `truncated` set: its \
         first lines (about 60% of both budgets), a header `[preview: S of N lines, B bytes \
         total; full output: PATH]`, a line saying how to see the rest (`[to see the rest: \
         read PATH with offset=H limit=2000, or grep it]`) and its last lines, so the real \
         last line stays last; a line longer than its share is cut and ends in `…`. N and B \
         are the whole output's, in plain integers. PATH, also in `metadata.full_output`, is \
         the spill file holding the whole output (see FILES); read and grep open it under \
         the default policy, and so does a bash line that only reads it (`tail`, `sed -n`, \
         `grep`). `read` is never previewed: it pages itself and its last line says which \
         offset continues. A result that holds images (an image or notebook read) also has \
         `content`: its text and images in order, each image once, in the shape of the \
         call's provider under `exec` (Anthropic image blocks for a `tool_use`, \
         `input_image` items for a Responses `function_call`, `image_url` parts for Chat \
         Completions, `inlineData` or `inline_data` parts for Gemini) and MCP's image blocks \
         otherwise; `output` says `[image N: LABEL]` where each image stands and never \
         holds its data. With `--text` only the output text is printed. A closed \
         output pipe counts as success.",
    );

    page.heading("EXIT STATUS");
    exit_status_items(&mut page);

    page.heading("ENVIRONMENT");
    for arg in cmd.get_arguments().filter(|arg| !arg.is_hide_set()) {
        if let (Some(env), Some(long)) = (arg.get_env(), arg.get_long()) {
            let help = arg.get_help().map(|h| h.to_string()).unwrap_or_default();
            page.item(
                &bold(&env.to_string_lossy()),
                &format!(
                    "Sets `--{long}` when the option is not given. {}",
                    sentence(&help)
                ),
            );
        }
    }
    for (name, meaning) in ENVIRONMENT {
        page.item(&bold(name), meaning);
    }

    page.heading("FILES");
    for (path, meaning) in FILES {
        page.item(&italic(path), meaning);
    }

    page.heading("EXAMPLES");
    for (explanation, command) in EXAMPLES {
        page.example(explanation, command);
    }

    page.heading("SEE ALSO");
    page.paragraph(&see_also.join(", "));
    page
}

/// The OTHER AGENTS' NAMES section of `tinytool(1)`: the repairs of every call, then the
/// tables of `aliases` (other agents' tool names and parameters), row by row.
fn other_agents(page: &mut ManPage) {
    use crate::aliases::{Action, Becomes, PARAMS, PEER_TOOLS};
    page.heading("OTHER AGENTS' NAMES");
    page.paragraph(
        "Models trained on other agents call their tools by those agents' names and \
         parameters. Each call's arguments are repaired first: a markdown fence and trailing \
         commas around argument text are removed, arguments encoded twice (a JSON string \
         holding the object) are decoded, and where the schema wants a number, a boolean, an \
         array or an object, its text is parsed. Then the tool is found: by its name, by the \
         same name in another case or with `_` and `-` left out (`READ`, `Apply_Patch`), or by \
         another agent's name for it (below; `Read` is Claude Code's, whose offset counts from \
         1, `READ` is tinytool's read). A name that is none of these is a usage error (exit \
         status 2) that lists the tools the session may use and the closest name. \
         Another agent's parameters are translated as listed below, the rules of the agent's \
         tool name first, then those of the tinytool tool however it was called. A renamed \
         parameter given beside its canonical name is dropped when both hold the same value \
         and refused when they differ; what has no faithful translation is refused with what \
         to send instead, never guessed. Every repair and translation is one line of \
         `metadata.repairs`.",
    );
    page.subheading("Tool names");
    for row in PEER_TOOLS {
        let term = match row.command {
            Some(command) => format!(
                "{} {}",
                bold(row.name),
                inline(&format!("`command: {command}`"))
            ),
            None => bold(row.name),
        };
        let becomes = match row.becomes {
            Becomes::Tool(tool) => format!("becomes `{tool}`"),
            Becomes::Refused(way_out) => format!("is refused: {way_out}"),
        };
        let mut text = format!("{}: {becomes}", row.source);
        if !row.note.is_empty() {
            text.push_str(&format!("; {}", row.note));
        }
        for (param, value, why) in row.defaults {
            text.push_str(&format!("; `{param}` is {value:?} when absent ({why})"));
        }
        text.push('.');
        page.item(&term, &text);
    }
    page.subheading("Parameters");
    page.paragraph(
        "Each parameter is followed by the calls it applies to: another agent's tool name, \
         the text editor's name and command, or a tinytool tool however it was called.",
    );
    for rule in PARAMS {
        let on: Vec<String> = rule.on.iter().map(|on| italic(on)).collect();
        let term = format!("{} ({})", bold(rule.param), on.join(", "));
        let what = match rule.action {
            Action::Rename(to) => format!("renamed to `{to}`"),
            Action::Convert { doc, .. } => doc.to_string(),
            Action::Drop(why) => format!("left out: {why}"),
            Action::Refuse(way_out) => format!("refused: {way_out}"),
        };
        page.item(&term, &format!("{}: {what}.", rule.source));
    }
}

/// A mode of the command line: a subcommand that is not a tool, or one subcommand of such
/// a group (`policy check`).
struct Mode<'a> {
    /// The group it belongs to (`policy`), when it is nested.
    group: Option<&'a str>,
    cmd: &'a Command,
}

/// The visible subcommands that are not tools, in command-line order; a group of
/// subcommands (`policy check|explain`) is listed as its members.
fn modes(cmd: &Command) -> Vec<Mode<'_>> {
    let registry = tools::documented();
    let mut modes = Vec::new();
    for sub in visible_subcommands(cmd).filter(|sub| registry.get(sub.get_name()).is_none()) {
        let members: Vec<&Command> = visible_subcommands(sub).collect();
        if members.is_empty() {
            modes.push(Mode {
                group: None,
                cmd: sub,
            });
        }
        for member in members {
            modes.push(Mode {
                group: Some(sub.get_name()),
                cmd: member,
            });
        }
    }
    modes
}

fn visible_subcommands(cmd: &Command) -> impl Iterator<Item = &Command> {
    cmd.get_subcommands()
        .filter(|sub| !sub.is_hide_set() && sub.get_name() != "help")
}

/// The arguments a subcommand defines itself (not the propagated globals, not help).
fn own_args(cmd: &Command) -> impl Iterator<Item = &Arg> {
    cmd.get_arguments().filter(|arg| {
        !arg.is_global_set()
            && !arg.is_hide_set()
            && !matches!(
                arg.get_action(),
                ArgAction::Help | ArgAction::HelpShort | ArgAction::HelpLong | ArgAction::Version
            )
    })
}

/// A mode's usage: **policy** **check** \[**--json**\] \[_FILE_\] in roff, or plain.
fn usage(mode: &Mode, style: Style) -> String {
    let name = |text: &str| match style {
        Style::Roff => bold(text),
        Style::Plain => text.to_string(),
    };
    let mut parts: Vec<String> = mode.group.map(name).into_iter().collect();
    parts.push(name(mode.cmd.get_name()));
    parts.extend(own_args(mode.cmd).map(|arg| arg_usage(arg, style)));
    parts.join(" ")
}

/// How usage text is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Style {
    Roff,
    Plain,
}

/// One argument in a usage line, bracketed when optional: `[--format FORMAT]`, `SHELL`.
fn arg_usage(arg: &Arg, style: Style) -> String {
    let spec = arg_spec(arg, style);
    if arg.is_required_set() {
        spec
    } else {
        format!("[{spec}]")
    }
}

/// One argument without brackets: `--format FORMAT`, `--flag[=BOOL]`, `SHELL`.
fn arg_spec(arg: &Arg, style: Style) -> String {
    let b = |text: &str| match style {
        Style::Roff => bold(text),
        Style::Plain => text.to_string(),
    };
    let i = |text: &str| match style {
        Style::Roff => italic(text),
        Style::Plain => text.to_string(),
    };
    let value = value_name(arg);
    match (arg.get_long(), value) {
        (Some(long), Some(value)) if arg.is_require_equals_set() => {
            format!("{}[={}]", b(&format!("--{long}")), i(&value))
        }
        (Some(long), Some(value)) => format!("{} {}", b(&format!("--{long}")), i(&value)),
        (Some(long), None) => b(&format!("--{long}")),
        (None, Some(value)) => i(&value),
        (None, None) => i(&arg.get_id().as_str().to_uppercase()),
    }
}

fn value_name(arg: &Arg) -> Option<String> {
    if !arg.get_action().takes_values() {
        return None;
    }
    Some(match arg.get_value_names() {
        Some(names) => names
            .iter()
            .map(|n| n.as_str())
            .collect::<Vec<_>>()
            .join(" "),
        None => arg.get_id().as_str().to_uppercase(),
    })
}

/// An option's help with its possible values and default.
fn arg_help(arg: &Arg) -> String {
    let mut help = arg
        .get_long_help()
        .or_else(|| arg.get_help())
        .map(|h| h.to_string())
        .unwrap_or_default();
    let values: Vec<String> = arg
        .get_possible_values()
        .iter()
        .filter(|v| !v.is_hide_set())
        .map(|v| format!("`{}`", v.get_name()))
        .collect();
    if !values.is_empty() && arg.get_action().takes_values() {
        help = format!("{} One of {}.", sentence(&help), values.join(", "));
    }
    let defaults: Vec<String> = arg
        .get_default_values()
        .iter()
        .map(|v| v.to_string_lossy().into_owned())
        .collect();
    if !defaults.is_empty() && arg.get_action().takes_values() {
        help = format!("{} Default: `{}`.", sentence(&help), defaults.join(","));
    }
    help
}

fn exit_status_items(page: &mut ManPage) {
    for status in ExitStatus::ALL {
        page.item(
            &bold(&status.code().to_string()),
            &upper_first(status.meaning()),
        );
    }
}

// ---------------------------------------------------------------------------------------
// tinytool-<tool>(1)

fn tool_page(cmd: &Command, sub: &Command, def: &ToolDef) -> ManPage {
    let name = format!("tinytool-{}", def.name);
    let mut page = ManPage::new(&name, 1, def.summary);
    let schema = (def.schema)();
    let params = parameters(&schema);

    page.heading("SYNOPSIS");
    let tinytool = format!("{} [{}]", bold("tinytool"), italic("OPTIONS"));
    let mut flags = vec![format!("{tinytool} {}", bold(def.name))];
    for param in &params {
        if let Some(arg) = flag_of(sub, &param.name) {
            let spec = arg_spec(arg, Style::Roff);
            flags.push(if param.required {
                spec
            } else {
                format!("[{spec}]")
            });
        }
    }
    page.synopsis_line(&flags.join(" "));
    page.synopsis_line(&format!(
        "{} {} | {tinytool} {}",
        bold("echo"),
        italic("JSON"),
        bold(def.name)
    ));
    page.synopsis_line(&format!(
        "{} {}{}{} | {tinytool} {}",
        bold("echo"),
        escape(&format!("'{{\"name\": \"{}\", \"arguments\": ", def.name)),
        italic("JSON"),
        escape("}'"),
        bold("exec")
    ));

    page.heading("DESCRIPTION");
    page.paragraph(def.description);
    page.paragraph(&match def.permission {
        "" => "This tool needs no permission: the policy is never asked about it.".to_string(),
        category => format!(
            "The policy decides each call as permission `{category}` (see tinytool-policy(5))."
        ),
    });

    if let Some(needs) = def.needs {
        page.heading("AVAILABILITY");
        page.paragraph(needs.doc);
        page.paragraph(
            "Without it, the tool is left out of the tool list a model is given (`tinytool \
             tools` names it on standard error with what is missing; the MCP server's \
             tools/list leaves it out too): the model cannot change the configuration, so a \
             tool it is offered must be one it can use, and a description telling it how to \
             enable the tool would only invite a call that fails. Called by name anyway, the \
             tool runs and says what is missing.",
        );
    }

    page.heading("PARAMETERS");
    if params.is_empty() {
        page.paragraph("None: the arguments are `{}`.");
    } else {
        page.paragraph(
            "Each parameter is a flag, or a key of the JSON object on standard input or in an \
             `exec` call. Flags override keys from standard input.",
        );
    }
    for param in &params {
        let term = match flag_of(sub, &param.name) {
            Some(arg) => arg_spec(arg, Style::Roff),
            None => bold(&param.name),
        };
        let mut text = sentence(&param.description);
        text.push_str(&format!(
            "\nJSON key `{}`: {}, {}{}.",
            param.name,
            param.kind,
            if param.required {
                "required"
            } else {
                "optional"
            },
            param.constraints
        ));
        page.item(&term, &text);
    }

    page.heading("OPTIONS");
    for arg in own_args(sub).filter(|arg| !arg.get_id().as_str().starts_with(cli::PARAM_PREFIX)) {
        page.item(&arg_spec(arg, Style::Roff), &sentence(&arg_help(arg)));
    }
    let globals: Vec<String> = cmd
        .get_arguments()
        .filter(|arg| arg.is_global_set() && !arg.is_hide_set())
        .filter_map(|arg| arg.get_long().map(|long| format!("`--{long}`")))
        .collect();
    page.paragraph(&format!(
        "The global options of tinytool(1) apply as well: {}.",
        globals.join(", ")
    ));

    page.heading("OUTPUT");
    page.paragraph(
        "One JSON result per call: `{\"id\", \"tool\", \"output\", \"is_error\", \"truncated\", \
         \"metadata\"}` (with `--text`, only the output text).",
    );
    page.paragraph(def.doc.output);

    page.heading("ERRORS");
    page.paragraph(
        "Arguments that do not fit the schema (a missing required parameter, an unknown \
         parameter, a value of the wrong type) give `Invalid arguments: ...` naming each \
         problem, with `is_error` set and exit status 1.",
    );
    if !def.doc.errors.is_empty() {
        page.paragraph(def.doc.errors);
    }

    page.heading("EXIT STATUS");
    exit_status_items(&mut page);

    if !def.doc.examples.is_empty() {
        page.heading("EXAMPLES");
        for (explanation, command) in def.doc.examples {
            page.example(explanation, command);
        }
    }

    page.heading("SEE ALSO");
    page.paragraph("tinytool(1)");
    page
}

/// One parameter of a tool's schema, described for its page.
struct Param {
    name: String,
    required: bool,
    description: String,
    /// `integer`, `string`, `array of objects`, ...
    kind: String,
    /// `, one of a, b`, `, at least 0`, `, default 5` (leading comma included).
    constraints: String,
}

fn parameters(schema: &Value) -> Vec<Param> {
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        return Vec::new();
    };
    crate::schema::parameters(schema)
        .into_iter()
        .map(|(name, required)| {
            let prop = props.get(&name).cloned().unwrap_or(Value::Null);
            let description = prop
                .get("description")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string();
            Param {
                kind: kind_of(&prop),
                constraints: constraints_of(&prop),
                name,
                required,
                description,
            }
        })
        .collect()
}

/// A property's type in words.
fn kind_of(prop: &Value) -> String {
    let kind = prop
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or("any value");
    match kind {
        "array" => match prop
            .get("items")
            .and_then(|i| i.get("type"))
            .and_then(Value::as_str)
        {
            Some(item) => format!("array of {item}s (JSON text as a flag)"),
            None => "array (JSON text as a flag)".to_string(),
        },
        "object" => match prop
            .get("additionalProperties")
            .and_then(|a| a.get("type"))
            .and_then(Value::as_str)
        {
            Some(value) => format!("object of {value} values (JSON text as a flag)"),
            None => "object (JSON text as a flag)".to_string(),
        },
        "boolean" => "boolean (`--flag` means true)".to_string(),
        other => other.to_string(),
    }
}

/// Enum values, bounds and a schema default, as a suffix of the type line.
fn constraints_of(prop: &Value) -> String {
    let mut out = String::new();
    if let Some(values) = prop.get("enum").and_then(Value::as_array) {
        let names: Vec<String> = values
            .iter()
            .map(|v| {
                format!(
                    "`{}`",
                    v.as_str().map_or_else(|| v.to_string(), str::to_string)
                )
            })
            .collect();
        out.push_str(&format!(", one of {}", names.join(", ")));
    }
    if let Some(min) = prop.get("minimum") {
        out.push_str(&format!(", at least {min}"));
    }
    if let Some(max) = prop.get("maximum") {
        out.push_str(&format!(", at most {max}"));
    }
    if let Some(default) = prop.get("default") {
        out.push_str(&format!(", default `{default}`"));
    }
    out
}

/// The flag of a parameter in a tool's subcommand.
fn flag_of<'a>(sub: &'a Command, param: &str) -> Option<&'a Arg> {
    let id = format!("{}{param}", cli::PARAM_PREFIX);
    sub.get_arguments().find(|arg| arg.get_id().as_str() == id)
}

// ---------------------------------------------------------------------------------------
// Text helpers

/// `text` ending with a full stop (for joining sentences).
fn sentence(text: &str) -> String {
    let text = text.trim_end();
    if text.is_empty() || text.ends_with(['.', '!', '?']) {
        text.to_string()
    } else {
        format!("{text}.")
    }
}

fn upper_first(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

// ---------------------------------------------------------------------------------------
// Roff

/// The string register every page defines first, so an apostrophe renders as one in every
/// roff implementation (groff would otherwise typeset a right quote).
const APOSTROPHE_PREAMBLE: &str = ".ie \\n(.g .ds Aq \\(aq\n.el .ds Aq '\n";

/// Which clap_mangen section to take over.
#[derive(Debug, Clone, Copy)]
enum Section {
    Description,
    Options,
}

/// A manual page being written. Text passed to its methods is plain text in which
/// `` `code` `` spans are set in bold; everything else is escaped, so any text can be given.
/// Terms and synopsis lines are roff, built with [`bold`], [`italic`] and [`inline`].
#[derive(Debug, Clone)]
pub struct ManPage {
    name: String,
    section: u8,
    roff: String,
}

impl ManPage {
    /// A page `name(section)` whose NAME line reads `name - summary`.
    pub fn new(name: &str, section: u8, summary: &str) -> Self {
        let mut roff = String::from(APOSTROPHE_PREAMBLE);
        roff.push_str(&format!(
            ".TH {} {section} \"\" \"tinytool {}\" \"{MANUAL}\"\n",
            name.to_uppercase(),
            env!("CARGO_PKG_VERSION"),
        ));
        // No hyphenation and no justification: option names, JSON keys and lists of page
        // names must stay whole and readable.
        roff.push_str(".nh\n.ad l\n");
        let mut page = ManPage {
            name: name.to_string(),
            section,
            roff,
        };
        page.heading("NAME");
        page.text_line(&format!("{} \\- {}", escape(name), escape(summary)));
        page
    }

    /// A page written by hand as roff (`.TH` line included); `@VERSION@` is replaced by
    /// the crate's version.
    fn from_roff(name: &str, section: u8, roff: &str) -> Self {
        ManPage {
            name: name.to_string(),
            section,
            roff: roff.replace("@VERSION@", env!("CARGO_PKG_VERSION")),
        }
    }

    /// The file name: `name.section`.
    pub fn file_name(&self) -> String {
        format!("{}.{}", self.name, self.section)
    }

    /// How other pages refer to this one: `name(section)`.
    pub fn reference(&self) -> String {
        format!("{}({})", self.name, self.section)
    }

    /// Starts a section (`.SH`); the title is set in capitals.
    pub fn heading(&mut self, title: &str) -> &mut Self {
        self.control("SH", &title.to_uppercase());
        self
    }

    /// Starts a subsection (`.SS`).
    fn subheading(&mut self, title: &str) -> &mut Self {
        self.control("SS", title);
        self
    }

    /// One or more paragraphs (separated by blank lines); lines inside are filled.
    pub fn paragraph(&mut self, text: &str) -> &mut Self {
        for para in text.split("\n\n").filter(|p| !p.trim().is_empty()) {
            self.raw_line(".PP");
            self.filled(para);
        }
        self
    }

    /// A tagged item (`.TP`): `term` is roff (see [`bold`], [`italic`], [`inline`]), the
    /// text is plain; a newline in it starts a new line.
    pub fn item(&mut self, term: &str, text: &str) -> &mut Self {
        self.raw_line(".TP");
        self.text_line(term);
        let mut first = true;
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            if !first {
                self.raw_line(".br");
            }
            first = false;
            self.filled(line);
        }
        self
    }

    /// One synopsis form (roff) on a line of its own.
    fn synopsis_line(&mut self, roff: &str) -> &mut Self {
        if !self.roff.ends_with(".SH \"SYNOPSIS\"\n") {
            self.raw_line(".br");
        }
        self.text_line(roff);
        self
    }

    /// An example: the explanation, then the command indented and unfilled.
    pub fn example(&mut self, explanation: &str, command: &str) -> &mut Self {
        self.paragraph(&sentence(explanation));
        self.raw_line(".RS 4");
        self.raw_line(".nf");
        for line in command.lines() {
            self.text_line(&escape(line));
        }
        self.raw_line(".fi");
        self.raw_line(".RE");
        self
    }

    /// The finished page: its file name and bytes.
    pub fn finish(self) -> Generated {
        (self.file_name(), self.roff.into_bytes())
    }

    /// Appends a section rendered by clap_mangen, without its apostrophe preamble (this
    /// page has its own).
    fn mangen(&mut self, cmd: &Command, section: Section) {
        let man = clap_mangen::Man::new(cmd.clone());
        let mut buf = Vec::new();
        let rendered = match section {
            Section::Description => man.render_description_section(&mut buf),
            Section::Options => man.render_options_section(&mut buf),
        };
        if rendered.is_err() {
            // Rendering into a Vec cannot fail; a page without the section is still valid.
            return;
        }
        let text = String::from_utf8_lossy(&buf);
        let text = text.strip_prefix(APOSTROPHE_PREAMBLE).unwrap_or(&text);
        for line in text.lines() {
            // clap_mangen writes help text as is; keep the page ASCII like the rest.
            self.raw_line(&ascii_roff(line));
        }
    }

    /// Fills `text` (plain, with inline marks) as text lines.
    fn filled(&mut self, text: &str) {
        let joined: Vec<&str> = text.split_whitespace().collect();
        self.text_line(&inline(&joined.join(" ")));
    }

    fn control(&mut self, name: &str, arg: &str) {
        let arg = escape(arg).replace('"', "\\(dq");
        self.raw_line(&format!(".{name} \"{arg}\""));
    }

    /// A text line (already roff); one starting with a control character is protected.
    fn text_line(&mut self, roff: &str) {
        if roff.starts_with(['.', '\'']) {
            self.roff.push_str("\\&");
        }
        self.raw_line(roff);
    }

    fn raw_line(&mut self, roff: &str) {
        self.roff.push_str(roff);
        self.roff.push('\n');
    }
}

/// Bold roff text.
pub fn bold(text: &str) -> String {
    format!("\\fB{}\\fR", escape(text))
}

/// Italic roff text.
pub fn italic(text: &str) -> String {
    format!("\\fI{}\\fR", escape(text))
}

/// Plain text with `` `code` `` spans set in bold, escaped for roff. An unpaired backtick
/// is kept as a character.
pub fn inline(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(start) = rest.find('`') {
        match rest[start + 1..].find('`') {
            Some(len) if len > 0 => {
                out.push_str(&escape(&rest[..start]));
                out.push_str(&bold(&rest[start + 1..start + 1 + len]));
                rest = &rest[start + 2 + len..];
            }
            _ => {
                out.push_str(&escape(&rest[..=start]));
                rest = &rest[start + 1..];
            }
        }
    }
    out.push_str(&escape(rest));
    out
}

/// Escapes plain text for a roff text line: backslash, minus, apostrophe, and every
/// character outside printable ASCII (as `\[uXXXX]`, tabs as spaces).
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\e"),
            '-' => out.push_str("\\-"),
            '\'' => out.push_str("\\*(Aq"),
            '\t' => out.push(' '),
            ' '..='~' => out.push(c),
            c if c.is_control() => {}
            c => out.push_str(&format!("\\[u{:04X}]", u32::from(c))),
        }
    }
    out
}

/// Replaces non-ASCII characters of a roff line with `\[uXXXX]` escapes.
fn ascii_roff(line: &str) -> String {
    line.chars()
        .map(|c| match c {
            ' '..='~' => c.to_string(),
            '\t' => " ".to_string(),
            c if c.is_control() => String::new(),
            c => format!("\\[u{:04X}]", u32::from(c)),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_roff_specials_and_non_ascii() {
        assert_eq!(escape("a-b \\ it's"), "a\\-b \\e it\\*(Aqs");
        assert_eq!(escape("…é"), "\\[u2026]\\[u00E9]");
        assert_eq!(escape("a\tb\u{7}"), "a b");
    }

    #[test]
    fn inline_marks_become_fonts_and_stray_marks_stay() {
        assert_eq!(inline("use `--x` now"), "use \\fB\\-\\-x\\fR now");
        assert_eq!(inline("_file_path_ stays"), "_file_path_ stays");
        assert_eq!(inline("one ` only"), "one ` only");
        assert_eq!(inline("``"), "``");
    }

    #[test]
    fn a_line_starting_with_a_dot_is_protected() {
        let mut page = ManPage::new("t", 1, "s");
        page.paragraph(".hidden file");
        assert!(page.roff.contains("\n\\&.hidden file\n"));
    }

    #[test]
    fn every_visible_tool_has_a_page_and_hidden_ones_none() {
        let pages = man_pages();
        let names: Vec<&str> = pages.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names[0], "tinytool.1");
        for def in tools::documented().all() {
            let page = format!("tinytool-{}.1", def.name);
            assert_eq!(
                names.contains(&page.as_str()),
                def.name != crate::registry::INVALID,
                "{page}"
            );
        }
    }

    #[test]
    fn extra_pages_are_listed_under_see_also() {
        let pages = man_pages();
        let main = String::from_utf8_lossy(&pages[0].1).into_owned();
        for page in EXTRA_PAGES {
            let page = page();
            let (file, bytes) = page.clone().finish();
            assert!(
                pages.iter().any(|(n, b)| *n == file && *b == bytes),
                "{file}"
            );
            assert!(main.contains(&escape(&page.reference())), "{file}");
            assert!(!String::from_utf8_lossy(&bytes).contains("@VERSION@"));
        }
    }

    #[test]
    fn pages_are_ascii() {
        for (name, bytes) in man_pages() {
            assert!(bytes.is_ascii(), "{name} has non-ASCII bytes");
        }
    }
}
