//! The policy file format and its strict loading.
//!
//! ```json
//! {
//!   "rules": [
//!     {"permission": "shell", "pattern": "git *", "action": "allow",
//!      "examples": {"match": ["git status"], "not_match": ["gitk"]}},
//!     {"permission": "edit", "pattern": "*.lock", "action": "deny"}
//!   ],
//!   "agents": {"plan": {"rules": [{"permission": "shell", "pattern": "*", "action": "deny"}]}},
//!   "ask": "deny",
//!   "disabled": ["websearch"],
//!   "trust_project": false,
//!   "sandbox": {"mode": "auto", "network": true, "writable": ["~/.cargo"], "unmask": ["tests/*.env"]}
//! }
//! ```
//!
//! Every key is optional; `pattern` defaults to `*`. Bad JSON, unknown keys and bad
//! `action`/`ask` values are load errors naming the file, line and column. An unknown
//! permission name is not a load error (`policy check` reports it).

use serde::Deserialize;

/// What a rule does when it decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Action {
    /// Run the call.
    Allow,
    /// Refuse the call.
    Deny,
    /// Ask somebody (what that becomes is the `ask` mode).
    Ask,
}

impl Action {
    /// The word used in files and messages.
    pub fn as_str(self) -> &'static str {
        match self {
            Action::Allow => "allow",
            Action::Deny => "deny",
            Action::Ask => "ask",
        }
    }
}

/// What an "ask" becomes with nobody in the conversation to answer it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum AskMode {
    /// Refuse (the default).
    #[default]
    Deny,
    /// Allow.
    Allow,
    /// Prompt on the controlling terminal (once / always / reject); no terminal = deny.
    Tty,
}

impl AskMode {
    /// The word used in files and messages.
    pub fn as_str(self) -> &'static str {
        match self {
            AskMode::Deny => "deny",
            AskMode::Allow => "allow",
            AskMode::Tty => "tty",
        }
    }
}

/// One rule as written in a file.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuleSpec {
    /// Permission category, alias or glob.
    pub permission: String,
    /// Pattern over the checked value (path, command, URL, tool name).
    #[serde(default = "any_pattern")]
    pub pattern: String,
    /// What the rule does.
    pub action: Action,
    /// Self-tests checked by `policy check`.
    #[serde(default)]
    pub examples: Option<Examples>,
}

fn any_pattern() -> String {
    "*".to_string()
}

/// A rule's self-tests: values its pattern must and must not match.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Examples {
    /// Values the pattern must match.
    #[serde(default, rename = "match")]
    pub matches: Vec<String>,
    /// Values the pattern must not match.
    #[serde(default)]
    pub not_match: Vec<String>,
}

/// Per-agent rules.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentRules {
    /// Rules added when the session is in that agent.
    #[serde(default)]
    pub rules: Vec<RuleSpec>,
}

/// The agents a policy may give rules to.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Agents {
    /// The default agent.
    #[serde(default)]
    pub build: Option<AgentRules>,
    /// The planning agent (edits only under `plans/` and `drafts/`).
    #[serde(default)]
    pub plan: Option<AgentRules>,
}

/// A whole policy file.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PolicyFile {
    /// The rules, in order (last match wins).
    #[serde(default)]
    pub rules: Vec<RuleSpec>,
    /// Per-agent rules.
    #[serde(default)]
    pub agents: Agents,
    /// What "ask" becomes.
    #[serde(default)]
    pub ask: Option<AskMode>,
    /// Tools that are switched off.
    #[serde(default)]
    pub disabled: Vec<String>,
    /// Whether the project policy may allow (user policy only).
    #[serde(default)]
    pub trust_project: Option<bool>,
    /// The kernel sandbox of the commands tinytool runs.
    #[serde(default)]
    pub sandbox: Option<crate::sandbox_settings::SandboxSpec>,
}

impl AgentRules {
    /// The rules of `agent` in a file.
    pub fn of<'a>(file: &'a PolicyFile, agent: &str) -> &'a [RuleSpec] {
        let rules = match agent {
            "plan" => file.agents.plan.as_ref(),
            _ => file.agents.build.as_ref(),
        };
        rules.map_or(&[], |r| r.rules.as_slice())
    }
}
