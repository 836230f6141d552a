//! The policy as the registry's permission gate: decides each call's accesses with the
//! session's agent and stored approvals, turns "ask" into allow, refusal or a terminal
//! prompt according to the ask mode, and writes refusals that teach: the permission, the
//! pattern, the deciding rule (or that none matched), and the rule to add — except for a
//! path outside the project that does not exist, where the refusal says so and names the
//! path meant instead of a rule for a path that is not there.

use std::io::{BufRead, BufReader, Write};

use serde_json::{Map, Value, json};

use crate::access::Access;
use crate::policy::{Action, AskMode, Decision, Policy, ReadJudge, Rule, Source};
use crate::session::{CallContext, PermissionGate, Refusal, Session};

/// The policy gate of a process.
#[derive(Debug)]
pub struct PolicyGate {
    policy: Policy,
}

impl PolicyGate {
    /// A gate deciding by `policy`.
    pub fn new(policy: Policy) -> Self {
        PolicyGate { policy }
    }

    /// The policy.
    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    /// Decides accesses for the session without asking anybody: every decision, in order,
    /// and the rule chain they were decided with.
    pub fn decide(
        &self,
        session: &Session,
        accesses: &[Access],
    ) -> Result<(Vec<Decision>, Vec<Rule>), Refusal> {
        let (agent, approvals) = session_facts(session)?;
        let chain = self.policy.chain(&agent);
        Ok((self.policy.decide(&chain, &approvals, accesses), chain))
    }
}

/// The session's agent and the project's approvals, read without creating state. The
/// approvals come from the user's state directory ([`crate::approvals`]): a
/// `.tinytool/state.db` in the checkout grants nothing.
pub fn session_facts(session: &Session) -> Result<(String, Vec<(String, String)>), Refusal> {
    let read = session
        .state
        .read(|store| store.agent(&session.id))
        .and_then(|agent| Ok((agent, crate::approvals::load(&session.dir)?)));
    match read {
        Ok((Some(agent), approvals)) => Ok((agent, approvals)),
        Ok((None, approvals)) => Ok((crate::state::DEFAULT_AGENT.to_string(), approvals)),
        Err(err) => Err(Refusal {
            message: format!(
                "Refused: the session state {} cannot be read, so the policy cannot be applied \
                 (its approvals and agent mode are unknown): {err:#}. Repair it, or move it away \
                 to start with a fresh state.",
                session.state.path().display()
            ),
            metadata: Map::new(),
        }),
    }
}

impl PermissionGate for PolicyGate {
    fn check(&self, ctx: &CallContext, accesses: &[Access]) -> Result<(), Refusal> {
        if accesses.is_empty() {
            return Ok(());
        }
        let (decisions, chain) = self.decide(ctx.session, accesses)?;
        if let Some(denied) = decisions.iter().find(|d| d.action == Action::Deny) {
            return Err(refusal(&self.policy, &chain, denied, None));
        }
        for asked in decisions.iter().filter(|d| d.action == Action::Ask) {
            if self.policy.ask_mode() != AskMode::Allow
                && ask_client(ctx, &self.policy, &chain, asked)?
            {
                continue;
            }
            let unanswered = |note: Option<&str>| {
                missing_outside(ctx, accesses, asked)
                    .unwrap_or_else(|| refusal(&self.policy, &chain, asked, note))
            };
            match self.policy.ask_mode() {
                AskMode::Allow => {}
                AskMode::Deny => return Err(unanswered(None)),
                AskMode::Tty => prompt(ctx, &self.policy, &chain, asked, &unanswered)?,
            }
        }
        Ok(())
    }

    fn check_project_command(&self, ctx: &CallContext, accesses: &[Access]) -> Result<(), Refusal> {
        if !self.policy.trusts_project() {
            let (decisions, _) = self.decide(ctx.session, accesses)?;
            if let Some(d) = decisions.iter().find(|d| {
                d.action == Action::Allow
                    && d.rule
                        .as_ref()
                        .is_none_or(|r| matches!(r.source, Source::Default | Source::Project(_)))
            }) {
                let mut metadata = Map::new();
                metadata.insert("refused".into(), json!(true));
                metadata.insert("permission".into(), json!(d.access.permission));
                metadata.insert("pattern".into(), json!(d.access.pattern));
                return Err(Refusal {
                    message: format!(
                        "Refused: `{}` is named by the project config, and a command the \
                         project ships runs only when the user policy allows it (or \
                         \"trust_project\" is set); it is allowed only by {}. To run it, add to \
                         the user policy: {}",
                        d.access.pattern,
                        deciding_rule_text(d.rule.as_ref()),
                        suggested_rule(&d.access)
                    ),
                    metadata,
                });
            }
        }
        self.check(ctx, accesses)
    }

    fn permits(&self, ctx: &CallContext, access: &Access) -> bool {
        let Ok((decisions, _)) = self.decide(ctx.session, std::slice::from_ref(access)) else {
            return false;
        };
        decisions.iter().all(|d| match d.action {
            Action::Allow => true,
            Action::Ask => self.policy.ask_mode() == AskMode::Allow,
            Action::Deny => false,
        })
    }

    fn allows_explicitly(&self, ctx: &CallContext, accesses: &[Access]) -> bool {
        let Ok((decisions, _)) = self.decide(ctx.session, accesses) else {
            return false;
        };
        !decisions.is_empty()
            && decisions.iter().all(|d| {
                d.action == Action::Allow
                    && d.rule
                        .as_ref()
                        .is_some_and(|r| r.permission != "*" && r.source != Source::Default)
            })
    }

    fn read_judge(&self, ctx: &CallContext, root: &std::path::Path) -> ReadJudge {
        match session_facts(ctx.session) {
            Ok((agent, approvals)) => {
                ReadJudge::new(&self.policy, &self.policy.chain(&agent), &approvals, root)
            }
            Err(_) => ReadJudge::refuse_all(),
        }
    }

    fn hides(&self, session: &Session, name: &str, permission: &str) -> bool {
        if self.is_disabled(name) {
            return true;
        }
        if permission.is_empty() {
            return false;
        }
        let Ok((agent, _)) = session_facts(session) else {
            return false;
        };
        Policy::denies_outright(&self.policy.chain(&agent), permission)
    }

    fn is_disabled(&self, name: &str) -> bool {
        self.policy.disabled().any(|d| d == name)
    }
}

/// The allow rule that would let an access through, as a JSON object.
pub fn suggested_rule(access: &Access) -> Value {
    json!({"permission": access.permission, "pattern": access.pattern, "action": "allow"})
}

/// Where and how to allow an access that `decision` refused.
pub fn how_to_allow(policy: &Policy, decision: &Decision) -> String {
    let rule = suggested_rule(&decision.access);
    let user_file = policy.user_policy_path().map_or_else(
        || "the user policy".to_string(),
        |p| p.display().to_string(),
    );
    match decision.rule.as_ref().map(|r| &r.source) {
        Some(Source::Protection) => {
            "No policy can lift this: tinytool's own folder, the user config directory and \
             the policy file in effect are protected from tool edits. Change those files \
             yourself."
                .to_string()
        }
        Some(Source::Project(path)) => format!(
            "A project policy can only be lifted in the project policy itself: remove or narrow \
             rule {} of {} (an allow rule there also needs \"trust_project\": true in the user \
             policy {user_file}).",
            decision.rule.as_ref().map_or(0, |r| r.index),
            path.display()
        ),
        Some(Source::PlanBuiltin) | Some(Source::Agent(..)) => {
            let agent = match decision.rule.as_ref().map(|r| &r.source) {
                Some(Source::Agent(agent, _)) => agent.as_str(),
                _ => "plan",
            };
            format!(
                "The session is in the {agent} agent. To allow it there, add this rule to \
                 \"agents\": {{\"{agent}\": {{\"rules\": [...]}}}} in {user_file}:\n  {rule}\n\
                 or leave the {agent} agent first (plan_exit)."
            )
        }
        _ => {
            format!("To allow it, add this rule at the end of \"rules\" in {user_file}:\n  {rule}")
        }
    }
}

/// Describes the deciding rule of a decision.
pub fn deciding_rule_text(rule: Option<&Rule>) -> String {
    match rule {
        Some(rule) => format!("rule `{rule}` ({})", rule.location()),
        None => "no rule matched (which means ask)".to_string(),
    }
}

/// The near-miss sentence for a decision that was not an allow: the closest allow rule and
/// where it stopped matching.
pub fn near_miss(chain: &[Rule], decision: &Decision) -> Option<(Rule, String)> {
    if decision.action == Action::Allow {
        return None;
    }
    if matches!(
        decision.rule.as_ref().map(|r| &r.source),
        Some(Source::Protection)
    ) {
        return None;
    }
    crate::policy::closest_allow(chain, &decision.access)
}

/// The refusal of one decision; `note` adds a line (for example a terminal rejection).
pub fn refusal(
    policy: &Policy,
    chain: &[Rule],
    decision: &Decision,
    note: Option<&str>,
) -> Refusal {
    let access = &decision.access;
    let what = format!(
        "`{}` permission for `{}`",
        access.permission, access.pattern
    );
    let by = deciding_rule_text(decision.rule.as_ref());
    let mut message = match (decision.action, note) {
        (_, Some(note)) => {
            format!("Refused by the policy: {what} needs approval ({by} asks): {note}.")
        }
        (Action::Deny, None) => format!("Refused by the policy: {what} is denied by {by}."),
        _ => format!(
            "Refused by the policy: {what} needs approval: {by} asks, and with nobody to ask \
             (ask mode \"{}\") that is a refusal.",
            policy.ask_mode().as_str()
        ),
    };
    if let Some(reason) = &access.reason {
        // A reason that ends a sentence (a command ending in `.`) gets no second period.
        let stop = if reason.ends_with('.') { "" } else { "." };
        message.push_str(&format!("\nReason: {reason}{stop}"));
    }
    let closest = near_miss(chain, decision);
    if let Some((rule, sentence)) = &closest {
        message.push_str(&format!(
            "\nClosest allow rule: `{rule}` ({}) did not match: {sentence}.",
            rule.location()
        ));
    }
    message.push('\n');
    message.push_str(&how_to_allow(policy, decision));
    let mut metadata = Map::new();
    metadata.insert("refused".into(), Value::Bool(true));
    metadata.insert(
        "permission".into(),
        Value::String(access.permission.clone()),
    );
    metadata.insert("pattern".into(), Value::String(access.pattern.clone()));
    metadata.insert(
        "action".into(),
        Value::String(decision.action.as_str().into()),
    );
    metadata.insert(
        "rule".into(),
        decision
            .rule
            .as_ref()
            .map_or(Value::Null, |r| Value::String(r.to_string())),
    );
    metadata.insert(
        "source".into(),
        decision
            .rule
            .as_ref()
            .map_or(Value::Null, |r| Value::String(r.location())),
    );
    if let Some(reason) = &access.reason {
        metadata.insert("reason".into(), Value::String(reason.clone()));
    }
    if !matches!(
        decision.rule.as_ref().map(|r| &r.source),
        Some(Source::Protection)
    ) {
        metadata.insert("suggested_rule".into(), suggested_rule(access));
    }
    if let Some((rule, sentence)) = closest {
        metadata.insert(
            "closest_allow".into(),
            json!({"rule": rule.to_string(), "source": rule.location(), "mismatch": sentence}),
        );
    }
    Refusal { message, metadata }
}

/// The refusal of an asked `external_directory` access to a path that is not there: a
/// read of it, or a file to create (an `edit` access of the same path) whose folder is not
/// there either. It says so, and names the path in the project that was probably meant,
/// instead of a rule that would allow a path that does not exist. The call is refused all
/// the same; only the words change. `None` when the path exists (or cannot be looked at),
/// or a file to create has its folder: the usual refusal, with its rule, stands.
///
/// Only for an ask that nobody could answer: a deny rule keeps its plain refusal, so a
/// folder the user walled off does not tell what is in it.
fn missing_outside(ctx: &CallContext, accesses: &[Access], decision: &Decision) -> Option<Refusal> {
    let access = &decision.access;
    if access.permission != "external_directory" || decision.action != Action::Ask {
        return None;
    }
    let path = access.path.as_deref()?;
    let absent = |p: &std::path::Path| {
        std::fs::symlink_metadata(p)
            .is_err_and(|e| matches!(e.raw_os_error(), Some(libc::ENOENT | libc::ENOTDIR)))
    };
    if !absent(path) {
        return None;
    }
    let creating = accesses
        .iter()
        .any(|a| a.permission == "edit" && a.path.as_deref() == Some(path));
    let folder = path.parent().filter(|_| creating);
    if folder.is_some_and(|f| f.is_dir()) {
        return None;
    }
    let want = if creating {
        crate::suggest::Want::Creatable
    } else {
        crate::suggest::Want::Existing
    };
    let shown = path.display();
    let dir = ctx.session.dir.display();
    let mut message = match folder {
        Some(folder) => format!(
            "Refused: {shown} cannot be created: its folder {} does not exist, and it is \
             outside the working directory ({dir}).",
            folder.display()
        ),
        None => format!(
            "Refused: {shown} does not exist, and it is outside the working directory ({dir})."
        ),
    };
    match ctx.did_you_mean(path, want) {
        Some(suggestion) => {
            message.push('\n');
            message.push_str(&suggestion);
        }
        None if folder.is_some() => message.push_str(
            " Check the path (a relative path is taken from the working directory); if the \
             file is meant to go there, only the user can allow writing outside the working \
             directory.",
        ),
        None => message
            .push_str(" Check the path: a relative path is taken from the working directory."),
    }
    let mut metadata = Map::new();
    metadata.insert("refused".into(), Value::Bool(true));
    metadata.insert("permission".into(), json!(access.permission));
    metadata.insert("pattern".into(), json!(access.pattern));
    metadata.insert("action".into(), json!(decision.action.as_str()));
    metadata.insert("missing".into(), Value::Bool(true));
    Some(Refusal { message, metadata })
}

/// Asks on the controlling terminal: once / always / reject. Without a terminal the ask is
/// a refusal, as with `ask: "deny"`.
/// Asks the protocol client (MCP elicitation, or a 2026-07-28 `input_required`) when it can
/// answer: `Ok(true)` allowed (once, or always: stored like a terminal approval), `Ok(false)`
/// nobody there to ask (the ask mode decides), a refusal when the user rejects or the
/// client cannot answer.
fn ask_client(
    ctx: &CallContext,
    policy: &Policy,
    chain: &[Rule],
    decision: &Decision,
) -> Result<bool, Refusal> {
    let Some(asker) = &ctx.session.asker else {
        return Ok(false);
    };
    let access = &decision.access;
    let question = format!(
        "`{}` needs `{}` permission for: {} (decided by {}). Allow it?",
        ctx.tool,
        access.permission,
        access.pattern,
        deciding_rule_text(decision.rule.as_ref()),
    );
    let options = [
        "once".to_string(),
        "always".to_string(),
        "reject".to_string(),
    ];
    match asker.ask(&question, &options) {
        Ok(None) => Ok(false),
        Ok(Some(answer)) if answer == "once" => Ok(true),
        Ok(Some(answer)) if answer == "always" => {
            // In the user's state directory, never the checkout.
            crate::approvals::add(&ctx.session.dir, &access.permission, &access.pattern).map_err(
                |err| Refusal {
                    message: format!("Refused: the approval could not be stored: {err:#}"),
                    metadata: Map::new(),
                },
            )?;
            Ok(true)
        }
        Ok(Some(_)) => Err(refusal(
            policy,
            chain,
            decision,
            Some("rejected by the user"),
        )),
        Err(why) => Err(refusal(policy, chain, decision, Some(&why))),
    }
}

/// Asks at the terminal; `unanswered` is the refusal when there is none.
fn prompt(
    ctx: &CallContext,
    policy: &Policy,
    chain: &[Rule],
    decision: &Decision,
    unanswered: &dyn Fn(Option<&str>) -> Refusal,
) -> Result<(), Refusal> {
    let access = &decision.access;
    let Ok(tty) = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/tty")
    else {
        return Err(unanswered(Some("there is no terminal to ask")));
    };
    let request = crate::events::new_id("per");
    let mut asked = Map::new();
    asked.insert("id".into(), Value::String(request.clone()));
    asked.insert(
        "permission".into(),
        Value::String(access.permission.clone()),
    );
    asked.insert("patterns".into(), json!([access.pattern]));
    asked.insert("metadata".into(), json!({"tool": ctx.tool}));
    ctx.publish("permission.asked", asked);
    let mut writer = &tty;
    let reason = access
        .reason
        .as_deref()
        .map(|r| format!(" ({r})"))
        .unwrap_or_default();
    let _ = write!(
        writer,
        "tinytool: `{}` needs `{}` permission for: {}{reason}\n  decided by {}\nAllow? [o]nce, [a]lways, [r]eject: ",
        ctx.tool,
        access.permission,
        access.pattern,
        deciding_rule_text(decision.rule.as_ref()),
    );
    let _ = writer.flush();
    let mut answer = String::new();
    let _ = BufReader::new(&tty).read_line(&mut answer);
    let reply = match answer.trim().to_ascii_lowercase().as_str() {
        "o" | "once" | "y" | "yes" => "once",
        "a" | "always" => "always",
        _ => "reject",
    };
    let mut replied = Map::new();
    replied.insert("requestID".into(), Value::String(request));
    replied.insert("reply".into(), Value::String(reply.into()));
    ctx.publish("permission.replied", replied);
    match reply {
        "once" => Ok(()),
        "always" => {
            // In the user's state directory, never the checkout.
            let stored =
                crate::approvals::add(&ctx.session.dir, &access.permission, &access.pattern);
            if let Err(err) = stored {
                let _ = writeln!(
                    writer,
                    "tinytool: the approval could not be stored: {err:#}"
                );
            }
            Ok(())
        }
        _ => Err(refusal(
            policy,
            chain,
            decision,
            Some("rejected at the terminal"),
        )),
    }
}
