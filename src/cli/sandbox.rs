//! `tinytool sandbox [--json]`: which sandbox layers this machine can set up,
//! tried for real by running `true` under every layer, and why a missing one is missing,
//! with the session's effective `sandbox` settings.
//!
//! Text: one line of settings, then one line per layer, `LAYER: yes`, `LAYER: yes (NOTE)`,
//! `LAYER: no: WHY` or `LAYER: not needed (WHY)`, then the project's secrets: masked,
//! unmasked by `sandbox.unmask`, and tracked by git (not masked, with how to untrack
//! them). JSON: `{"mode", "network", "writable": [..], "unmask": [..], "layers":
//! [{"layer", "available": bool, "status", "why"}], "complete": bool, "masked",
//! "tracked_secrets", "unmasked", "tracked_notice"}`, `complete` being
//! true when no layer is missing, and `verdict` (also the last text line) when one is: what
//! the mode does about it (`required` refuses every command). The exit status is 0 either
//! way: it is a report.

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
    // `true` run under the plan: what was set up is what the report says.
    let support = crate::sandbox::support(&session.dir, |plan| {
        let request = crate::process::run::Request {
            program: crate::process::run::Program::Shell("true"),
            dir: &session.dir,
            env: vec![],
            stdin: crate::process::run::Input::Null,
            timeout: std::time::Duration::from_secs(10),
            limits: crate::truncate::Limits::default(),
            cancel: None,
            isolation: crate::process::run::Isolation::Session,
            sandbox: Some(plan.clone()),
        };
        let _ = crate::process::run::run(request);
    });
    let complete = support.iter().all(|s| s.status != "no");
    let secrets = crate::sandbox::secrets(settings, &session.dir);
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
        let shown = |paths: &[std::path::PathBuf]| -> Vec<String> {
            paths
                .iter()
                .map(|p| crate::sandbox::masking::shown(&session.dir, p))
                .collect()
        };
        let mut report = json!({
            "mode": settings.mode.as_str(),
            "network": settings.network,
            "writable": settings.writable,
            "unmask": settings.unmask,
            "layers": layers,
            "complete": complete,
            "masked": shown(&secrets.masked),
            "tracked_secrets": shown(&secrets.tracked),
            "unmasked": shown(&secrets.unmasked),
        });
        if !secrets.tracked.is_empty() {
            report["tracked_notice"] = json!(crate::sandbox::masking::tracked_line(&shown(
                &secrets.tracked
            )));
        }
        if let Some(line) = verdict(settings, &support) {
            report["verdict"] = json!(line);
        }
        return out.json(&report);
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
    if let Some(line) = verdict(settings, &support) {
        text.push_str(&line);
        text.push('\n');
    }
    let shown = |paths: &[std::path::PathBuf]| -> Vec<String> {
        paths
            .iter()
            .map(|p| crate::sandbox::masking::shown(&session.dir, p))
            .collect()
    };
    for (label, paths) in [
        ("secrets masked (read as empty)", &secrets.masked),
        ("secrets unmasked by sandbox.unmask", &secrets.unmasked),
        ("secrets git tracks (not masked)", &secrets.tracked),
    ] {
        if !paths.is_empty() {
            text.push_str(&format!("{label}: {}\n", shown(paths).join(", ")));
        }
    }
    if !secrets.tracked.is_empty() {
        text.push_str(&crate::sandbox::masking::tracked_line(&shown(
            &secrets.tracked,
        )));
        text.push('\n');
    }
    out.raw(text.as_bytes())
}

/// What the settings' mode does with the missing layers (of those it asks for), when some are missing: `auto`
/// runs commands without them, `required` refuses every command (exit status 3).
fn verdict(
    settings: &crate::sandbox_settings::Settings,
    support: &[crate::sandbox::LayerSupport],
) -> Option<String> {
    let mode = settings.mode;
    let missing: Vec<&str> = support
        .iter()
        // `net` is only asked for with the network off; `proc` and `scope` are no layers
        // a mode asks for.
        .filter(|s| {
            s.status == "no"
                && !["proc", "scope"].contains(&s.layer)
                && (s.layer != "net" || !settings.network)
        })
        .map(|s| s.layer)
        .collect();
    if missing.is_empty() {
        return None;
    }
    let list = missing.join(", ");
    Some(match mode {
        crate::sandbox_settings::Mode::Required => format!(
            "sandbox.mode \"required\": every command is refused here (exit status 3), because {list} cannot be set up"
        ),
        crate::sandbox_settings::Mode::Auto => {
            format!("sandbox.mode \"auto\": commands run here without {list}")
        }
        crate::sandbox_settings::Mode::Off => {
            "sandbox.mode \"off\": commands run without any layer".to_string()
        }
    })
}
