//! `tinytool policy explain [--json] <TOOL> [ARGS]`: the policy's decision on a call, for
//! every permission it needs, without running anything.

use clap::{Arg, ArgAction, ArgMatches, Command};
use serde_json::{Map, Value, json};

use super::Output;
use crate::aliases::{self, Untranslatable};
use crate::exit::ExitStatus;
use crate::gate::{self, PolicyGate};
use crate::policy::{Action, AskMode, Policy};
use crate::registry::Registry;
use crate::session::{CallContext, Session};
use crate::{repair, schema};

/// The `policy` subcommand.
pub fn command() -> Command {
    Command::new("policy")
        .about("Explain the policy's decisions")
        .subcommand_required(true)
        .subcommand(
            Command::new("check")
                .about("Check policy files for rules that would not do what they say")
                .long_about(
                    "Check the policies in effect (the user or --policy file, and the project \
                     policy), or FILE alone, for unknown permission names, rules shadowed by a \
                     later rule, failing rule examples, project rules that try to allow without \
                     trust, and unknown tools in \"disabled\". Exit status: 0 nothing found, \
                     1 findings, 2 a file that does not load.",
                )
                .arg(
                    Arg::new("json")
                        .long("json")
                        .action(ArgAction::SetTrue)
                        .help("Print the findings as a JSON array"),
                )
                .arg(Arg::new("file").value_name("FILE").help(
                    "Check only this policy file (a relative path is from the current directory)",
                )),
        )
        .subcommand(
            Command::new("explain")
                .about("Show the decision on a tool call without running it")
                .long_about(
                    "Show the policy's decision on a tool call without running it: every \
                     permission the call needs, in order, with the rule that decides it. \
                     Nothing is stopped at the first refusal, and nothing is created.",
                )
                .arg(
                    Arg::new("json")
                        .long("json")
                        .action(ArgAction::SetTrue)
                        .help("Print the decision as JSON"),
                )
                .arg(
                    Arg::new("tool")
                        .value_name("TOOL")
                        .required(true)
                        .help("The tool"),
                )
                .arg(
                    Arg::new("args")
                        .value_name("JSON")
                        .default_value("{}")
                        .help("The call's arguments as a JSON object"),
                ),
        )
}

/// Runs `policy ...`.
pub fn run(
    registry: &Registry,
    session: &Session,
    policy: &Policy,
    sub: &ArgMatches,
    out: &mut Output,
) -> ExitStatus {
    match sub.subcommand() {
        Some(("explain", m)) => explain(registry, session, policy, m, out),
        Some(("check", m)) => check(session, policy, m, out),
        _ => ExitStatus::Usage,
    }
}

fn check(session: &Session, policy: &Policy, m: &ArgMatches, out: &mut Output) -> ExitStatus {
    // A named file is checked alone: a project policy is still judged with the user policy
    // in effect (whether it is trusted depends on it), but only its own findings count.
    let named = match m
        .get_one::<String>("file")
        .map(|f| super::option_path("FILE", f))
    {
        Some(Ok(path)) => Some(path),
        Some(Err(message)) => return super::usage(&message),
        None => None,
    };
    let only = named.as_ref().map(|path| path.display().to_string());
    let checked = match named {
        Some(path) => match crate::config::read_json_file::<crate::policy::PolicyFile>(&path) {
            Ok(Some(file)) => {
                let loaded = crate::policy::Loaded {
                    path: path.clone(),
                    file,
                };
                let is_project =
                    path == crate::project::tinytool_dir(&session.dir).join("policy.json");
                Policy {
                    user: if is_project {
                        policy.user.clone()
                    } else {
                        Some(loaded.clone())
                    },
                    explicit: !is_project,
                    project: is_project.then_some(loaded),
                    dir: session.dir.clone(),
                }
            }
            Ok(None) => {
                return super::usage(&format!("{}: no such policy file", path.display()));
            }
            Err(err) => return super::usage(&err),
        },
        None => policy.clone(),
    };
    let mut findings = crate::policy::check::check(&checked, crate::tools::ALL_NAMES);
    findings.retain(|finding| only.as_ref().is_none_or(|file| finding.file == *file));
    let status = if m.get_flag("json") {
        let list: Vec<Value> = findings
            .iter()
            .map(|f| json!({"file": f.file, "place": f.place, "message": f.message}))
            .collect();
        out.json(&Value::Array(list))
    } else {
        let mut text = String::new();
        for finding in &findings {
            text.push_str(&format!("{finding}\n"));
        }
        let files: Vec<String> = checked
            .user
            .iter()
            .chain(checked.project.iter())
            .map(|l| l.path.display().to_string())
            .filter(|path| only.as_ref().is_none_or(|file| path == file))
            .collect();
        if files.is_empty() {
            text.push_str("no policy file is in effect (the built-in defaults apply)\n");
        } else if findings.is_empty() {
            text.push_str(&format!("ok: {} (no findings)\n", files.join(", ")));
        } else {
            text.push_str(&format!(
                "{} finding(s) in {}\n",
                findings.len(),
                files.join(", ")
            ));
        }
        out.raw(text.as_bytes())
    };
    if status != ExitStatus::Success {
        return status;
    }
    if findings.is_empty() {
        ExitStatus::Success
    } else {
        ExitStatus::ToolError
    }
}

fn explain(
    registry: &Registry,
    session: &Session,
    policy: &Policy,
    m: &ArgMatches,
    out: &mut Output,
) -> ExitStatus {
    let tool = m.get_one::<String>("tool").map_or("", String::as_str);
    let text = m.get_one::<String>("args").map_or("{}", String::as_str);
    // The call is read as a call would be: another spelling or agent's name is translated.
    let Some(called) = registry.recognise(tool) else {
        return super::usage(&registry.unknown_tool(session, tool, &[]));
    };
    let parsed = match repair::parse_arguments(text) {
        Ok(parsed) => parsed.value,
        Err(err) => return super::usage(&format!("the arguments are not JSON: {err}")),
    };
    let (mut parsed, _) = repair::decode_twice(parsed);
    let translated = match aliases::translate(&called, &mut parsed) {
        Ok(translation) => translation.tool,
        Err(Untranslatable::Tool(message) | Untranslatable::Argument(message)) => {
            return super::usage(&message);
        }
    };
    let Some(def) = registry.get(translated) else {
        return super::usage(&format!("Unknown tool: {translated}"));
    };
    let args = match schema::normalize(def.name, &(def.schema)(), parsed) {
        Ok(normalized) => normalized.args,
        Err(problems) => return super::usage(&format!("Invalid arguments: {problems}")),
    };
    if let Some(problem) = def.check_arguments(&args) {
        return super::usage(&problem);
    }
    let gate = PolicyGate::new(policy.clone());
    let ctx = CallContext::new(session, def.name);
    let accesses = def.accesses(&ctx, &args);
    let (decisions, chain) = match gate.decide(session, &accesses) {
        Ok(decided) => decided,
        Err(refusal) => return super::usage(&refusal.message),
    };
    let disabled = gate.policy().disabled().any(|d| d == def.name);
    let agent = gate::session_facts(session)
        .map(|(agent, _)| agent)
        .unwrap_or_else(|_| crate::state::DEFAULT_AGENT.to_string());
    let decision = if disabled || decisions.iter().any(|d| d.action == Action::Deny) {
        Action::Deny
    } else if decisions.iter().any(|d| d.action == Action::Ask) {
        Action::Ask
    } else {
        Action::Allow
    };
    let ask_mode = policy.ask_mode();
    let outcome = match (decision, ask_mode) {
        (Action::Allow, _) | (Action::Ask, AskMode::Allow) => "allowed",
        (Action::Ask, AskMode::Tty) => "asks on the terminal",
        _ => "refused",
    };
    let permissions: Vec<Value> = decisions
        .iter()
        .map(|d| {
            let mut entry = Map::new();
            entry.insert("permission".into(), json!(d.access.permission));
            entry.insert("pattern".into(), json!(d.access.pattern));
            // Shell rules judge each simple command: the command this entry decided.
            let shell = crate::policy::is_shell_permission(&d.access.permission);
            entry.insert(
                "command".into(),
                if shell { json!(d.access.pattern) } else { Value::Null },
            );
            if d.access.whole {
                entry.insert("whole_line".into(), json!(true));
            }
            entry.insert("action".into(), json!(d.action.as_str()));
            entry.insert(
                "rule".into(),
                d.rule
                    .as_ref()
                    .map_or(Value::Null, |r| json!(r.to_string())),
            );
            entry.insert(
                "source".into(),
                d.rule.as_ref().map_or(Value::Null, |r| json!(r.location())),
            );
            entry.insert(
                "reason".into(),
                json!(d.access.reason.clone().unwrap_or_else(|| default_reason(d))),
            );
            if d.action != Action::Allow {
                entry.insert("how_to_allow".into(), json!(gate::how_to_allow(policy, d)));
            }
            if let Some((rule, sentence)) = gate::near_miss(&chain, d) {
                entry.insert(
                    "closest_allow".into(),
                    json!({"rule": rule.to_string(), "source": rule.location(), "mismatch": sentence}),
                );
            }
            Value::Object(entry)
        })
        .collect();
    if m.get_flag("json") {
        let report = json!({
            "tool": def.name,
            "decision": decision.as_str(),
            "outcome": outcome,
            "ask_mode": ask_mode.as_str(),
            "agent": agent,
            "disabled": disabled,
            "permissions": permissions,
        });
        return out.json(&report);
    }
    let mut text = format!(
        "{} {}: {} ({outcome}; agent {agent}, ask mode \"{}\")\n",
        def.name,
        text.trim(),
        decision.as_str(),
        ask_mode.as_str()
    );
    if disabled {
        text.push_str(
            "  the tool is disabled by the policy's \"disabled\" list
",
        );
    }
    for d in &decisions {
        text.push_str(&format!(
            "  {} `{}`: {} by {}\n",
            d.access.permission,
            d.access.pattern,
            d.action.as_str(),
            gate::deciding_rule_text(d.rule.as_ref())
        ));
        if d.access.whole {
            text.push_str(
                "    judged whole: the line cannot be split into commands (only a `*` rule allows it)\n",
            );
        }
        if let Some(reason) = &d.access.reason {
            text.push_str(&format!("    reason: {reason}\n"));
        }
        if let Some((rule, sentence)) = gate::near_miss(&chain, d) {
            text.push_str(&format!(
                "    closest allow rule: `{rule}` ({}) did not match: {sentence}\n",
                rule.location()
            ));
        }
        if d.action != Action::Allow {
            for line in gate::how_to_allow(policy, d).lines() {
                text.push_str(&format!("    {line}\n"));
            }
        }
    }
    if decisions.is_empty() {
        text.push_str("  the call needs no permission\n");
    }
    out.raw(text.as_bytes())
}

fn default_reason(decision: &crate::policy::Decision) -> String {
    match &decision.rule {
        Some(rule) => format!("{} by {}", decision.action.as_str(), rule.location()),
        None => "no rule matched, which means ask".to_string(),
    }
}
