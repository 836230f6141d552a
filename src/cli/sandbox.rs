//! `tinytool sandbox [--json]`: which sandbox layers this machine can set up (DESIGN §10),
//! tried for real by running `true` under every layer, and why a missing one is missing,
//! with the session's effective `sandbox` settings.
//!
//! Text: one line of settings, then one line per layer, `LAYER: yes`, `LAYER: yes (NOTE)`,
//! `LAYER: no: WHY` or `LAYER: not needed (WHY)`. JSON: `{"mode", "network", "writable": [..], "layers":
//! [{"layer", "available": bool, "status", "why"}], "complete": bool}`, `complete` being
//! true when no layer is missing. The exit status is 0 either way: it is a report.

use clap::{Arg, ArgAction, ArgMatches, Command};
use serde_json::{Value, json};

use super::Output;
use crate::exit::ExitStatus;
use crate::session::Session;

/// The `sandbox` subcommand.
pub fn command() -> Command {
    Command::new("sandbox")
        .about("Print which sandbox layers this machine supports, and why one is missing")
        .long_about(
            "Run `true` under every sandbox layer (user, mount, PID and network namespaces, \
             masking of secret files; Landlock, the fallback where namespaces are refused) in --dir and print, per layer, whether this machine set \
             it up and, when not, why (the step and the system's error), with the effective \
             `sandbox` settings of the policies. A layer that is missing is one `auto` mode \
             runs without and `required` mode refuses over.",
        )
        .arg(
            Arg::new("json")
                .long("json")
                .action(ArgAction::SetTrue)
                .help("Print one JSON object instead of lines"),
        )
}

/// Runs `sandbox`.
pub fn run(session: &Session, sub: &ArgMatches, out: &mut Output) -> ExitStatus {
    let settings = &session.sandbox;
    let support = crate::sandbox::support(&session.dir);
    let complete = support.iter().all(|s| s.status != "no");
    if sub.get_flag("json") {
        let layers: Vec<Value> = support
            .iter()
            .map(|s| {
                json!({
                    "layer": s.layer,
                    "available": s.status != "no",
                    "status": s.status,
                    "why": s.why,
                })
            })
            .collect();
        return out.json(&json!({
            "mode": settings.mode.as_str(),
            "network": settings.network,
            "writable": settings.writable,
            "layers": layers,
            "complete": complete,
        }));
    }
    let mut text = format!(
        "sandbox.mode: {}, sandbox.network: {}, sandbox.writable: [{}]\n",
        settings.mode.as_str(),
        settings.network,
        settings
            .writable
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    );
    for s in &support {
        text.push_str(&match s.status {
            "yes" if s.why.is_empty() => format!("{}: yes\n", s.layer),
            "yes" => format!("{}: yes ({})\n", s.layer, s.why),
            "not needed" => format!("{}: not needed ({})\n", s.layer, s.why),
            _ => format!("{}: no: {}\n", s.layer, s.why),
        });
    }
    out.raw(text.as_bytes())
}
