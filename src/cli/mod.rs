//! The command line: one `clap::Command` derived from the registry (tool subcommands with
//! flags generated from each schema, plus the modes), and the dispatch of a parsed command
//! line to the registry. Help, man pages and completions come from [`command`].
//!
//! Nothing here exits the process: [`run`] returns the [`ExitStatus`] for `main`.

mod checkpoints;
mod direct;
mod exec;
mod lsp;
mod output;
mod policy;
mod sandbox;
mod state;

use std::ffi::OsString;
use std::io::Write;

use clap::{Arg, ArgAction, ArgMatches, Command};

use crate::dialects;
use crate::events::EventSink;
use crate::exit::ExitStatus;
use crate::gate::PolicyGate;
use crate::policy::Policy;
use crate::registry::Registry;
use crate::session::Session;
use crate::tools;

pub use direct::{PARAM_PREFIX, flag_name, flag_values};
pub use exec::call_line;
pub use output::Output;

const ABOUT: &str = "The tool layer of an AI coding agent in one binary";

const LONG_ABOUT: &str = "The tool layer of an AI coding agent in one binary.\n\n\
Each tool (read, write, edit, apply_patch, bash, grep, glob, ...) is a subcommand whose flags \
come from the tool's JSON Schema; the same call can be sent as a JSON object on standard input. \
`exec` takes tool calls in the OpenAI or Anthropic shape, one call or a stream of JSON lines. \
Every way in goes through one registry, so the policy, events and output limits always apply. \
Relative paths in tool calls resolve against --dir; the files the options name (--policy, --state, \
--events, --answers), as any program's arguments, against the directory tinytool is started in. \
Each call prints one JSON result: {\"id\", \"tool\", \"output\", \"is_error\", \"truncated\", \"metadata\"}.";

/// The exit-status table shown after the help, from the one table in `exit`.
fn exit_status_help() -> String {
    let mut text = String::from("Exit status:");
    for status in ExitStatus::ALL {
        text.push_str(&format!("\n  {}  {}", status.code(), status.meaning()));
    }
    text
}

/// Shells `tinytool completions` can write a script for.
pub const SHELLS: &[&str] = &["bash", "zsh", "fish"];

/// The whole command line, derived from the registry of every documented tool.
pub fn command() -> Command {
    command_for(&tools::documented(), true)
}

/// The command line as documented: [`command`] without its hidden subcommands (the internal
/// `invalid` tool and the detached supervisors of monitor and task), for completions and
/// man pages.
pub fn public_command() -> Command {
    command_for(&tools::documented(), false)
}

/// The command line over `registry`; hidden subcommands are added only when `hidden` is set
/// (clap_complete would otherwise offer them).
fn command_for(registry: &Registry, hidden: bool) -> Command {
    let mut cmd = Command::new("tinytool")
        .version(env!("CARGO_PKG_VERSION"))
        .about(ABOUT)
        .long_about(LONG_ABOUT)
        .after_help(exit_status_help())
        .subcommand_required(true)
        .arg_required_else_help(true)
        .max_term_width(100)
        .args(global_args());
    for def in registry.all().iter() {
        let sub = direct::tool_command(def);
        if hidden || !sub.is_hide_set() {
            cmd = cmd.subcommand(sub);
        }
    }
    if hidden {
        cmd = cmd.subcommand(crate::background::supervisor::command());
        cmd = cmd.subcommand(
            Command::new(crate::lsp::SUBCOMMAND)
                .hide(true)
                .about("Internal: keep a language server warm for a project (started by calls)"),
        );
    }
    cmd.subcommand(exec::command())
        .subcommand(policy::command())
        .subcommand(state::command())
        .subcommand(sandbox::command())
        .subcommand(lsp::command())
        .subcommand(checkpoints::checkpoints_command())
        .subcommand(checkpoints::undo_command())
        .subcommand(
            Command::new("tools")
                .about("Print the tool definitions as one JSON array")
                .long_about(
                    "Print the definitions of the tools this session may use as one JSON array, \
                     in a provider's shape. Tools the policy disables or denies outright, and the \
                     internal `invalid` tool, are left out. So are tools that cannot work in this \
                     configuration (task without a configured subagent, skill without a skill, \
                     question with nobody to answer), each named on standard error with what it \
                     lacks: a model cannot change the configuration, so a tool it is offered must \
                     be one it can use, and a description saying how to enable it would only \
                     invite a call that fails. Called by name anyway, such a tool runs and says \
                     what is missing. The MCP server's tools/list leaves out the same tools.",
                )
                .arg(
                    Arg::new("format")
                        .long("format")
                        .value_name("FORMAT")
                        .value_parser(dialects::FORMATS.to_vec())
                        .default_value("json")
                        .help("Shape of each definition"),
                )
                .arg(
                    Arg::new("strict")
                        .long("strict")
                        .action(ArgAction::SetTrue)
                        .help("With --format openai or openai-responses: strict function schemas (every property required, optionals nullable, objects closed); with --format anthropic: Anthropic's strict tool use (objects closed, numeric bounds in the description)"),
                ),
        )
        .subcommand(
            Command::new("mcp")
                .about("Serve every tool over the Model Context Protocol (stdio, or HTTP with --listen)")
                .long_about(
                    "Serve every tool over the Model Context Protocol, through the same registry, \
                     policy, events and output limits as every other way in: on stdio (JSON-RPC \
                     2.0, one message per line; ends at end of input), or with --listen over \
                     Streamable HTTP at http://ADDR:PORT/mcp (until stopped by a signal). No tool \
                     ends the server.",
                )
                .arg(
                    Arg::new("listen")
                        .long("listen")
                        .value_name("ADDR:PORT")
                        .value_parser(clap::value_parser!(std::net::SocketAddr))
                        .help("Serve Streamable HTTP at http://ADDR:PORT/mcp instead of stdio (port 0: any free port, printed on stderr); an address other than loopback needs --token-file"),
                )
                .arg(
                    Arg::new("token_file")
                        .long("token-file")
                        .value_name("FILE")
                        .requires("listen")
                        .help("With --listen: every request must carry `Authorization: Bearer TOKEN`, TOKEN being the first line of FILE"),
                ),
        )
        .subcommand(
            Command::new("completions")
                .about("Print a shell completion script")
                .arg(
                    Arg::new("shell")
                        .value_name("SHELL")
                        .required(true)
                        .value_parser(SHELLS.to_vec())
                        .help("The shell to complete for"),
                ),
        )
}

fn global_args() -> Vec<Arg> {
    vec![
        Arg::new("dir")
            .long("dir")
            .value_name("DIR")
            .env("TINYTOOL_DIR")
            .global(true)
            .help_heading("Global options")
            .help("Working directory: paths in tool calls resolve here [default: current directory]"),
        Arg::new("session")
            .long("session")
            .value_name("ID")
            .env("TINYTOOL_SESSION")
            .global(true)
            .help_heading("Global options")
            .help("Session id: todos, agent mode, jobs and approvals are per session [default: default]"),
        Arg::new("policy")
            .long("policy")
            .value_name("FILE")
            .env("TINYTOOL_POLICY")
            .global(true)
            .help_heading("Global options")
            .help("The permission policy, in place of the user policy"),
        Arg::new("state")
            .long("state")
            .value_name("FILE")
            .env("TINYTOOL_STATE")
            .global(true)
            .help_heading("Global options")
            .help("The state database [default: DIR/.tinytool/state.db]"),
        Arg::new("events")
            .long("events")
            .value_name("FILE")
            .env("TINYTOOL_EVENTS")
            .global(true)
            .help_heading("Global options")
            .help("Append bus events to FILE as JSON lines (`-` = standard error)"),
        Arg::new("answers")
            .long("answers")
            .value_name("FILE")
            .env("TINYTOOL_ANSWERS")
            .global(true)
            .help_heading("Global options")
            .help("Answers for the question tool: a JSON list, used in order per session"),
        Arg::new("text")
            .long("text")
            .action(ArgAction::SetTrue)
            .global(true)
            .help_heading("Global options")
            .help("Print only the output text; the exit status carries the outcome"),
    ]
}

/// Parses `args` (including the program name), runs the command and returns its status.
pub fn run(args: Vec<OsString>) -> ExitStatus {
    crate::process::keep_inherited_descriptors_from_children();
    // What a killed write of an earlier call left, wherever it is.
    crate::pending::recover();
    let registry = tools::builtin();
    // websearch needs a key: `tinytool --help` lists it only where it can run (generated
    // man pages and completions, built from `command()`, always document it).
    let websearch_ready = crate::tools::websearch::enabled();
    let parser = command().mut_subcommand("websearch", |c| c.hide(!websearch_ready));
    let matches = match parser.try_get_matches_from(&args) {
        Ok(matches) => matches,
        Err(err) => {
            use clap::error::ErrorKind;
            // Help and version go to stdout and succeed; a closed pipe is no failure either.
            let _ = err.print();
            if err.kind() == ErrorKind::UnknownArgument
                && let Some(valid) = direct::valid_flags_of(&args)
            {
                eprintln!("{valid}");
            }
            return match err.kind() {
                ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => ExitStatus::Success,
                _ => ExitStatus::Usage,
            };
        }
    };
    let mut out = Output::stdout(matches.get_flag("text"));
    let Some((name, sub)) = matches.subcommand() else {
        return ExitStatus::Usage;
    };
    if name == "completions" {
        return completions(sub, &mut out);
    }
    if name == crate::background::supervisor::SUBCOMMAND {
        return supervise(&matches, sub);
    }
    if name == crate::lsp::SUBCOMMAND {
        // Everything it needs comes from the call that starts it (`lsp::broker::Spec`).
        return crate::lsp::broker_main();
    }
    let (session, policy) = match session_from(&matches) {
        Ok(found) => found,
        Err(message) => return usage(&message),
    };
    match name {
        "tools" => {
            let format = sub
                .get_one::<String>("format")
                .map_or("json", String::as_str);
            let strict = sub.get_flag("strict");
            if strict && !["openai", "openai-responses", "anthropic"].contains(&format) {
                return usage(
                    "--strict applies to --format openai, openai-responses and anthropic only",
                );
            }
            for (name, why) in registry.unavailable(&session) {
                let _ = writeln!(std::io::stderr(), "tinytool: {name} is not listed: {why}");
            }
            let mut visible = registry.visible(&session);
            if format == "mcp" {
                // Exactly what `tinytool mcp` lists.
                visible.retain(|def| !crate::mcp::NOT_SERVED.contains(&def.name));
            }
            let describe = |def: &crate::tool::ToolDef| crate::registry::description(def, &session);
            out.json(&dialects::render(&visible, format, strict, &describe))
        }
        "mcp" => mcp(&registry, session, sub),
        "exec" => exec::run(&registry, &session, sub, &mut out),
        "policy" => policy::run(&registry, &session, &policy, sub, &mut out),
        "state" => state::run(&session, sub, &mut out),
        "sandbox" => sandbox::run(&session, sub, &mut out),
        "lsp" => lsp::run(&session, sub, &mut out),
        "checkpoints" => {
            let filter = matches.get_one::<String>("session").map(String::as_str);
            checkpoints::run_checkpoints(&session, filter, sub, &mut out)
        }
        "undo" => checkpoints::run_undo(&session, sub, &mut out),
        tool => direct::run(&registry, &session, tool, sub, &mut out),
    }
}

/// `tinytool mcp`: on stdio, or over HTTP with `--listen`.
fn mcp(registry: &Registry, session: Session, sub: &ArgMatches) -> ExitStatus {
    let Some(addr) = sub.get_one::<std::net::SocketAddr>("listen") else {
        return crate::mcp::serve(registry, session);
    };
    let token = match sub.get_one::<String>("token_file") {
        Some(path) => match crate::mcp::http::read_token(std::path::Path::new(path)) {
            Ok(token) => Some(token),
            Err(message) => return usage(&message),
        },
        None => None,
    };
    let options = crate::mcp::http::Options { addr: *addr, token };
    if let Err(message) = options.check() {
        return usage(&message);
    }
    crate::mcp::http::serve(registry, session, &options)
}

/// Builds the session (and the policy it decides with) from the global options.
fn session_from(matches: &ArgMatches) -> Result<(Session, Policy), String> {
    let dir = match matches.get_one::<String>("dir") {
        Some(dir) => std::path::PathBuf::from(dir),
        None => std::env::current_dir()
            .map_err(|e| format!("cannot read the current directory: {e}"))?,
    };
    if !dir.is_dir() {
        return Err(format!(
            "--dir {}: not a directory (give an existing directory, or unset TINYTOOL_DIR)",
            dir.display()
        ));
    }
    let dir = std::path::absolute(&dir).unwrap_or(dir);
    let id = matches
        .get_one::<String>("session")
        .cloned()
        .unwrap_or_else(|| "default".to_string());
    if id.is_empty() {
        return Err("--session: the session id must not be empty".to_string());
    }
    let mut session = Session::new(id, &dir);
    session.config = crate::config::Config::load(&session.dir)?;
    session.limits = session.config.limits_in(&session.dir);
    if let Some(spec) = matches.get_one::<String>("events") {
        session.events = EventSink::open(spec)
            .map_err(|e| format!("--events {spec}: cannot open for appending: {e}"))?;
    }
    session.depth = std::env::var("TINYTOOL_SUBAGENT_DEPTH")
        .ok()
        .and_then(|d| d.trim().parse().ok())
        .unwrap_or(0);
    if let Some(state) = matches.get_one::<String>("state") {
        let path = option_path("--state", state)?;
        session.state = crate::state::State::new(path, session.dir.clone());
    }
    session.answers = matches
        .get_one::<String>("answers")
        .map(|a| option_path("--answers", a))
        .transpose()?;
    let explicit = matches
        .get_one::<String>("policy")
        .map(|p| option_path("--policy", p))
        .transpose()?;
    let policy = Policy::load(&session.dir, explicit.as_deref())?;
    session.policy_file = explicit;
    session.sandbox = policy.sandbox_settings();
    session.sandbox.own_files = std::iter::once(session.state.path().to_path_buf())
        .chain(session.answers.clone())
        .collect();
    session.sandbox.state_file = Some(session.state.path().to_path_buf());
    session.gate = Box::new(PolicyGate::new(policy.clone()));
    if let Some(command) = session.config.after_hook.clone() {
        session.after_hook = Some(Box::new(crate::hook::CommandHook::new(command)));
    }
    Ok((session, policy))
}

/// The file a path option names (`--policy`, `--state`, `--answers`, `policy check FILE`),
/// resolved as every command-line program resolves its arguments: a relative path against
/// the directory tinytool was started in, not against `--dir`. `--dir` says where the
/// project is, like a tool's `file_path`, which it alone resolves; the files of the options
/// are the caller's, named from where the caller stands. `~` is expanded too, for a value
/// from an environment variable the shell did not expand.
pub(crate) fn option_path(option: &str, value: &str) -> Result<std::path::PathBuf, String> {
    let expanded = crate::paths::expand_home(value);
    if expanded.is_absolute() {
        return Ok(crate::paths::resolve(std::path::Path::new("/"), value));
    }
    let cwd = std::env::current_dir().map_err(|e| {
        format!(
            "{option} {value}: a relative path needs the current directory, which cannot be              read ({e}); give an absolute path"
        )
    })?;
    Ok(crate::paths::resolve(&cwd, value))
}

/// The hidden supervisor of a monitor or background job: started by those tools with
/// `--dir` and `--state` set explicitly, it loads no config or policy.
fn supervise(matches: &ArgMatches, sub: &ArgMatches) -> ExitStatus {
    let (Some(dir), Some(state)) = (
        matches.get_one::<String>("dir"),
        matches.get_one::<String>("state"),
    ) else {
        return usage("__supervise needs --dir and --state");
    };
    let events = matches.get_one::<String>("events").map(String::as_str);
    crate::background::supervisor::main(
        std::path::Path::new(dir),
        std::path::Path::new(state),
        events,
        sub,
    )
}

fn completions(sub: &ArgMatches, out: &mut Output) -> ExitStatus {
    let shell = sub
        .get_one::<String>("shell")
        .map_or("bash", String::as_str);
    match completion_script(shell) {
        Some(script) => out.raw(&script),
        None => usage(&format!("no completion script for the shell {shell}")),
    }
}

/// The completion script for `shell` (one of [`SHELLS`]): what `tinytool completions
/// SHELL` prints and `completions/` holds. `None` for another shell.
pub fn completion_script(shell: &str) -> Option<Vec<u8>> {
    use clap_complete::Shell;
    let shell = match shell {
        "bash" => Shell::Bash,
        "zsh" => Shell::Zsh,
        "fish" => Shell::Fish,
        _ => return None,
    };
    let mut buf = Vec::new();
    clap_complete::generate(shell, &mut public_command(), "tinytool", &mut buf);
    Some(buf)
}

/// Reports a usage error on standard error.
fn usage(message: &str) -> ExitStatus {
    let _ = writeln!(std::io::stderr(), "tinytool: {message}");
    ExitStatus::Usage
}
