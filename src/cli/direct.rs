//! Direct calls: `tinytool <TOOL> [--<param> VALUE ...]`.
//!
//! Each top-level schema property becomes a flag (`file_path` → `--file-path`): strings and
//! numbers as values, booleans as `--flag` or `--flag=false`, arrays and objects as JSON
//! text. The same parameters may come as a JSON object on stdin, which is read only when it
//! is not a terminal **and** no parameter flag was given (or with `--stdin`), so that flags
//! plus an idle pipe never hang. Flags override stdin keys.

use std::ffi::OsString;
use std::io::{IsTerminal, Read};

use clap::parser::ValueSource;
use clap::{Arg, ArgAction, ArgMatches, Command};
use serde_json::{Map, Value};

use super::Output;
use crate::exit::ExitStatus;
use crate::registry::{Arguments, Registry, ToolCall};
use crate::repair;
use crate::session::Session;
use crate::tool::ToolDef;

/// The clap id of a parameter's flag (namespaced so no parameter can clash with a global
/// option).
fn param_id(name: &str) -> String {
    format!("{PARAM_PREFIX}{name}")
}

/// What the clap id of every parameter flag starts with.
pub const PARAM_PREFIX: &str = "param:";

/// The flag a parameter gets: `file_path` → `file-path`.
pub fn flag_name(name: &str) -> String {
    name.replace('_', "-")
}

/// For a command line that names a tool subcommand, the line naming that tool's flags
/// (said after an unknown flag, as an unknown JSON key names the valid ones).
pub fn valid_flags_of(args: &[OsString]) -> Option<String> {
    let matches = super::command()
        .ignore_errors(true)
        .try_get_matches_from(args)
        .ok()?;
    let name = matches.subcommand_name()?;
    let documented = crate::tools::documented();
    let def = documented.get(name)?;
    let schema = (def.schema)();
    let flags: Vec<String> = schema
        .get("properties")
        .and_then(Value::as_object)?
        .keys()
        .map(|key| format!("--{}", flag_name(key)))
        .collect();
    Some(if flags.is_empty() {
        format!("`tinytool {name}` takes no parameters.")
    } else {
        format!(
            "The flags of `tinytool {name}` are: {} (and --stdin).",
            flags.join(", ")
        )
    })
}

/// The subcommand of one tool, with a flag per parameter.
pub fn tool_command(def: &ToolDef) -> Command {
    // The flags are built only for the subcommand being run (or by help and generators):
    // building every tool's flags on every start-up would cost more than the call itself.
    Command::new(def.name)
        .about(def.summary)
        .long_about(def.description)
        .before_help(def.description)
        .help_template(TOOL_HELP)
        .after_help(tool_help_footer(def))
        .disable_help_flag(true)
        .arg(
            Arg::new("help")
                .short('h')
                .long("help")
                .action(ArgAction::HelpShort)
                .display_order(usize::MAX)
                .help("Print help"),
        )
        .hide(def.name == crate::registry::INVALID)
        .defer(add_parameters)
}

/// A tool's help: its description, its own flags, the global options in a short block, one
/// example and the man page; `--help` is the short form so the page fits a screen at 80
/// columns.
const TOOL_HELP: &str = "{before-help}{usage-heading} {usage}\n\n{all-args}{after-help}";

/// The footer of a tool's help: the global options in one line, one example, the man page.
fn tool_help_footer(def: &ToolDef) -> String {
    let mut footer = String::new();
    // The shortest example: help text is wrapped at the terminal's width, and a wrapped
    // command could not be copied.
    if let Some((what, command)) = def.doc.examples.iter().min_by_key(|(_, c)| c.len()) {
        footer.push_str(&format!(
            "Example ({}):\n  {command}\n",
            what.to_lowercase()
        ));
    }
    footer.push_str(&format!("\nSee man tinytool-{}", def.name));
    footer
}

/// Adds a tool subcommand's parameter flags and `--stdin`.
fn add_parameters(mut cmd: Command) -> Command {
    let documented = crate::tools::documented();
    let Some(def) = documented.get(cmd.get_name()) else {
        return cmd;
    };
    let schema = (def.schema)();
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    if let Some(props) = schema.get("properties").and_then(Value::as_object) {
        for (name, prop) in props {
            cmd = cmd.arg(param_arg(name, prop, required.contains(&name.as_str())));
        }
        // A tool that takes several paths takes them as the command line's words too
        // (`tinytool diagnostics src tests`), as shell tools do.
        if takes_paths(props) {
            cmd = cmd.arg(
                Arg::new(POSITIONAL_PATHS)
                    .value_name("PATH")
                    .num_args(0..)
                    .index(1)
                    .help("Paths, as --paths takes them"),
            );
        }
    }
    cmd.arg(
        Arg::new("stdin")
            .long("stdin")
            .action(ArgAction::SetTrue)
            .help("Also read a JSON object of parameters from standard input when flags are given"),
    )
}

fn param_arg(name: &str, prop: &Value, required: bool) -> Arg {
    let description = prop
        .get("description")
        .and_then(Value::as_str)
        .unwrap_or("");
    let help = if required {
        format!("{description} [required]")
    } else {
        description.to_string()
    };
    // A value may start with `-`: a Markdown list item, a unified diff, a negative number.
    let arg = Arg::new(param_id(name))
        .long(flag_name(name))
        .help(help)
        .allow_hyphen_values(true);
    match prop.get("type").and_then(Value::as_str).unwrap_or("string") {
        "integer" => arg.value_name("N").value_parser(clap::value_parser!(i64)),
        "number" => arg
            .value_name("NUMBER")
            .value_parser(clap::value_parser!(f64)),
        "boolean" => arg
            .value_name("BOOL")
            .num_args(0..=1)
            .require_equals(true)
            .default_missing_value("true")
            .value_parser(clap::builder::BoolishValueParser::new()),
        "array" | "object" => arg.value_name("JSON"),
        _ => match prop.get("enum").and_then(Value::as_array) {
            Some(values) => {
                let names: Vec<String> = values
                    .iter()
                    .filter_map(|v| v.as_str().map(str::to_string))
                    .collect();
                arg.value_name("VALUE").value_parser(names)
            }
            None => arg.value_name("TEXT"),
        },
    }
}

/// Runs a direct call of `tool` from its parsed subcommand.
pub fn run(
    registry: &Registry,
    session: &Session,
    tool: &str,
    sub: &ArgMatches,
    out: &mut Output,
) -> ExitStatus {
    let Some(def) = crate::tools::documented().get(tool).copied() else {
        return super::usage(&format!("unknown subcommand {tool}"));
    };
    let flags = match flag_values(&def, sub) {
        Ok(flags) => flags,
        Err(message) => return super::usage(&message),
    };
    let stdin = std::io::stdin();
    let read_stdin = sub.get_flag("stdin") || (flags.is_empty() && !stdin.is_terminal());
    let arguments = if read_stdin {
        let mut text = String::new();
        if let Err(err) = stdin.lock().read_to_string(&mut text) {
            return super::usage(&format!(
                "cannot read the parameters from standard input: {err}"
            ));
        }
        merge(text, flags)
    } else {
        Arguments::Value(Value::Object(flags))
    };
    let call = ToolCall {
        id: None,
        name: tool.to_string(),
        arguments,
    };
    let result = registry.execute(session, call);
    out.result(&result)
}

/// Stdin text with flags laid over it. When the text cannot be parsed, it is passed on as
/// text so the registry repairs it or routes the call to `invalid`.
fn merge(text: String, flags: Map<String, Value>) -> Arguments {
    if flags.is_empty() {
        return Arguments::Text(text);
    }
    match repair::parse_arguments(&text) {
        Ok(parsed) => match parsed.value {
            Value::Object(mut map) => {
                map.extend(flags);
                Arguments::Value(Value::Object(map))
            }
            _ => Arguments::Text(text),
        },
        Err(_) => Arguments::Text(text),
    }
}

/// The parameters given as flags on a tool's parsed subcommand, typed by the schema; an
/// array or object flag that is not JSON of that kind is a usage error.
pub fn flag_values(def: &ToolDef, sub: &ArgMatches) -> Result<Map<String, Value>, String> {
    let schema = (def.schema)();
    let mut values = Map::new();
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        return Ok(values);
    };
    if takes_paths(props)
        && let Some(words) = sub.get_many::<String>(POSITIONAL_PATHS)
    {
        values.insert(
            "paths".into(),
            Value::Array(words.map(|w| Value::String(w.clone())).collect()),
        );
    }
    for (name, prop) in props {
        let id = param_id(name);
        if sub.value_source(&id) != Some(ValueSource::CommandLine) {
            continue;
        }
        let value = match prop.get("type").and_then(Value::as_str).unwrap_or("string") {
            "integer" => sub.get_one::<i64>(&id).map(|n| Value::from(*n)),
            "number" => sub.get_one::<f64>(&id).map(|n| Value::from(*n)),
            "boolean" => sub.get_one::<bool>(&id).map(|b| Value::Bool(*b)),
            kind @ ("array" | "object") => match sub.get_one::<String>(&id) {
                Some(text) => Some(json_flag(name, kind, text)?),
                None => None,
            },
            _ => sub.get_one::<String>(&id).map(|s| Value::String(s.clone())),
        };
        if let Some(value) = value {
            values.insert(name.clone(), value);
        }
    }
    Ok(values)
}

/// The id of the positional paths of a tool that takes several (`takes_paths`).
const POSITIONAL_PATHS: &str = "positional_paths";

/// Whether a tool's parameters hold `paths`, an array of strings.
fn takes_paths(props: &Map<String, Value>) -> bool {
    props
        .get("paths")
        .is_some_and(|p| p.get("type").and_then(Value::as_str) == Some("array"))
}

fn json_flag(name: &str, kind: &str, text: &str) -> Result<Value, String> {
    let flag = flag_name(name);
    let parsed = repair::parse_arguments(text)
        .map_err(|err| format!("--{flag} takes JSON text ({kind}): {err}"))?
        .value;
    let fits = match kind {
        "array" => parsed.is_array(),
        _ => parsed.is_object(),
    };
    if fits {
        Ok(parsed)
    } else {
        Err(format!(
            "--{flag} takes a JSON {kind}, got {}",
            crate::schema::kind(&parsed)
        ))
    }
}
