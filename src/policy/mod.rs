//! The permission policy: where rules come from, and how a call's accesses are
//! decided.
//!
//! Sources: the user policy (`$XDG_CONFIG_HOME/tinytool/policy.json`, else
//! `~/.config/tinytool/policy.json`) or an explicit one (`--policy FILE`), which replaces
//! it; and the project policy (`<dir>/.tinytool/policy.json`).
//!
//! Evaluation, last matching rule wins, over this chain:
//! 1. built-in defaults: `* * allow`, `read <secret file> ask` (the one definition of
//!    [`crate::secret_file`], anywhere),
//!    `webfetch * ask`, `external_directory * ask`, `destructive-shell * ask`,
//!    `secret-shell * ask`, `plan_exit * ask`, `undo * ask`;
//! 2. the user (or explicit) policy's rules;
//! 3. the project policy's rules, which can only restrict: a project `allow` counts only
//!    when the user policy says `"trust_project": true`;
//! 4. the session's agent: `build` adds its `agents.build.rules`; `plan` adds the built-in
//!    `edit * deny`, `edit plans/* allow`, `edit drafts/* allow`, `shell * ask`,
//!    `plan_enter * ask`, `plan_exit * allow`, `undo * deny`, then the policies'
//!    `agents.plan.rules`;
//! 5. stored "always" approvals, which turn an `ask` into `allow` but never lift a `deny`.
//!
//! No matching rule means ask. A file access outside the directory also needs
//! `external_directory` for its absolute path. Edits under `<dir>/.tinytool/` and the user
//! config directory are refused whatever the rules say.

mod analysis;
pub mod check;
mod file;
mod reads;

pub use analysis::closest_allow;
pub use file::{Action, AgentRules, AskMode, Examples, PolicyFile, RuleSpec};
pub use reads::ReadJudge;

use std::fmt;
use std::path::{Path, PathBuf};

use crate::access::Access;
use crate::config::{read_json_file, user_config_dir};
use crate::sandbox_settings::Settings;
use crate::wildcard;

/// The permission categories, plus `external_directory` and `undo` (the `checkpoint`
/// tool reverting files).
pub const PERMISSIONS: &[&str] = &[
    "read",
    "edit",
    "shell",
    "webfetch",
    "plan_enter",
    "plan_exit",
    "destructive-shell",
    "secret-shell",
    "external_directory",
    "undo",
];

/// Where a rule comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// The built-in defaults.
    Default,
    /// The user policy (or the explicit `--policy` file).
    User(PathBuf),
    /// The project policy.
    Project(PathBuf),
    /// The plan agent's built-in rules.
    PlanBuiltin,
    /// `agents.<agent>.rules` of a policy file.
    Agent(String, PathBuf),
    /// A stored "always" approval.
    Approval,
    /// The built-in protection of tinytool's own folders.
    Protection,
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::Default => write!(f, "built-in default"),
            Source::User(path) => write!(f, "user policy {}", path.display()),
            Source::Project(path) => write!(f, "project policy {}", path.display()),
            Source::PlanBuiltin => write!(f, "built-in rule of the plan agent"),
            Source::Agent(agent, path) => write!(f, "agents.{agent}.rules of {}", path.display()),
            Source::Approval => write!(f, "stored \"always\" approval"),
            Source::Protection => write!(f, "built-in protection"),
        }
    }
}

/// A rule in the evaluation chain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    /// Permission category, alias (`bash`) or glob.
    pub permission: String,
    /// Pattern over the checked value.
    pub pattern: String,
    /// What the rule does.
    pub action: Action,
    /// Where it comes from.
    pub source: Source,
    /// 1-based position in its source's rule list (0 for built-ins).
    pub index: usize,
    /// Self-tests, when the file gave some.
    pub examples: Option<Examples>,
    /// The project directory when the rule matches exactly the secret files
    /// ([`crate::secret_file`], and another name of one: a hard link) instead of a
    /// pattern (the built-in `read <secret file> ask`).
    secret_files: Option<PathBuf>,
    /// Whether the rule matches exactly the shell commands the read-only classifier
    /// accepts ([`crate::detect::read_only`]) instead of a pattern (plan mode's built-in
    /// allow).
    read_only_commands: bool,
}

impl Rule {
    fn builtin(permission: &str, pattern: &str, action: Action, source: Source) -> Rule {
        Rule {
            permission: permission.to_string(),
            pattern: pattern.to_string(),
            action,
            source,
            index: 0,
            examples: None,
            secret_files: None,
            read_only_commands: false,
        }
    }

    fn from_spec(spec: &RuleSpec, source: Source, index: usize) -> Rule {
        Rule {
            permission: spec.permission.clone(),
            pattern: spec.pattern.clone(),
            action: spec.action,
            source,
            index,
            examples: spec.examples.clone(),
            secret_files: None,
            read_only_commands: false,
        }
    }

    /// Where the rule is: `built-in default`, or `user policy FILE, rule N`.
    pub fn location(&self) -> String {
        if self.index == 0 {
            self.source.to_string()
        } else {
            format!("{}, rule {}", self.source, self.index)
        }
    }

    /// Whether the rule's permission covers `permission` (with the `bash` = `shell` alias).
    pub fn covers_permission(&self, permission: &str) -> bool {
        permission_matches(&self.permission, permission)
    }

    /// Whether the rule's pattern matches an access's pattern (or, for patterns starting
    /// with `/` or `~`, its absolute path).
    pub fn matches_pattern(&self, access: &Access) -> bool {
        let subject = self.subject(access);
        if self.pattern.starts_with('~') {
            let expanded = crate::paths::expand_home(&self.pattern);
            return wildcard::matches(&expanded.to_string_lossy(), &subject);
        }
        wildcard::matches(&self.pattern, &subject)
    }

    /// The text this rule's pattern is compared with for an access.
    pub fn subject(&self, access: &Access) -> String {
        if (self.pattern.starts_with('/') || self.pattern.starts_with('~'))
            && let Some(path) = &access.path
        {
            return path.to_string_lossy().into_owned();
        }
        access.pattern.clone()
    }

    /// Whether the rule decides an access. A shell line judged whole (it could not be
    /// split into commands) is allowed only by a rule whose pattern is `*`; in a shell
    /// allow rule a `*` glued to a word matches no space and no `..` segment
    /// ([`shell_allow_matches`]).
    pub fn matches(&self, access: &Access) -> bool {
        if !self.covers_permission(&access.permission) {
            return false;
        }
        if let Some(dir) = &self.secret_files {
            return access.path.as_deref().is_some_and(|path| {
                crate::secret_file::is_secret(path)
                    || crate::secret_scan::is_alias_of_secret(dir, path)
            });
        }
        if self.read_only_commands {
            return access.permission == "shell"
                && !access.whole
                && crate::detect::read_only::line_is_read_only(&access.pattern);
        }
        if self.action == Action::Allow && is_shell_permission(&access.permission) {
            if access.whole {
                return self.pattern == "*";
            }
            return shell_allow_matches(&self.pattern, &access.pattern);
        }
        self.matches_pattern(access)
    }

    /// Whether a deny or ask rule decides a shell command by its normalised form
    /// (wrappers and git's global options dropped).
    fn matches_normalized(&self, access: &Access) -> bool {
        let Some(normalized) = &access.normalized else {
            return false;
        };
        self.action != Action::Allow
            && self.covers_permission(&access.permission)
            && wildcard::matches(&self.pattern, normalized)
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {} {}",
            self.permission,
            self.pattern,
            self.action.as_str()
        )
    }
}

/// The permissions whose pattern is a shell command, judged per simple command.
pub fn is_shell_permission(permission: &str) -> bool {
    matches!(permission, "shell" | "destructive-shell" | "secret-shell")
}

/// Whether a shell **allow** pattern matches a command: as the wildcard does, except that
/// a `*` glued to a word (`target*`) matches neither a space nor a `..` path segment, so
/// `rm -rf target*` allows `rm -rf target/x` but not `rm -rf target .` nor
/// `rm -rf target/../src`. A `*` standing alone (`git *`, `*`) matches anything.
pub fn shell_allow_matches(pattern: &str, command: &str) -> bool {
    let glued = pattern
        .char_indices()
        .any(|(i, c)| c == '*' && i > 0 && !pattern[..i].ends_with(' '));
    if !glued {
        return wildcard::matches(pattern, command);
    }
    // As in the wildcard, a trailing ` *` is optional.
    if let Some(stem) = pattern.strip_suffix(" *")
        && glued_match(stem.as_bytes(), command.as_bytes())
    {
        return true;
    }
    glued_match(pattern.as_bytes(), command.as_bytes())
}

/// Backtracking match of a pattern whose glued `*` cannot cross a space or `..`, while a
/// free `*` (after a space or at the start) matches anything.
fn glued_match(p: &[u8], s: &[u8]) -> bool {
    fn go(p: &[u8], pi: usize, s: &[u8], si: usize, budget: &mut usize) -> bool {
        if *budget == 0 {
            return false;
        }
        *budget -= 1;
        if pi == p.len() {
            return si == s.len();
        }
        match p[pi] {
            b'*' => {
                let free = pi == 0 || p[pi - 1] == b' ';
                let mut end = si;
                loop {
                    if go(p, pi + 1, s, end, budget) {
                        return true;
                    }
                    if end == s.len() {
                        return false;
                    }
                    if !free && (s[end] == b' ' || s[end..].starts_with(b"..")) {
                        return false;
                    }
                    end += 1;
                }
            }
            b'?' => si < s.len() && go(p, pi + 1, s, si + 1, budget),
            c => si < s.len() && s[si] == c && go(p, pi + 1, s, si + 1, budget),
        }
    }
    let mut budget = 200_000;
    go(p, 0, s, 0, &mut budget)
}

/// Whether a rule's permission (category, `bash` alias, or glob) covers an asked category.
pub fn permission_matches(rule: &str, asked: &str) -> bool {
    let rule = if rule == "bash" { "shell" } else { rule };
    wildcard::matches(rule, asked) || (asked == "shell" && wildcard::matches(rule, "bash"))
}

/// A loaded policy file.
#[derive(Debug, Clone)]
pub struct Loaded {
    /// Where it was read from.
    pub path: PathBuf,
    /// What it says.
    pub file: PolicyFile,
}

/// Everything the policy files say, loaded once per process.
#[derive(Debug, Clone, Default)]
pub struct Policy {
    /// The user policy, or the explicit one.
    pub user: Option<Loaded>,
    /// Whether `user` came from `--policy`.
    pub explicit: bool,
    /// The project policy.
    pub project: Option<Loaded>,
    /// The project directory (resolved).
    pub dir: PathBuf,
}

/// The decision on one access.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    /// The access decided.
    pub access: Access,
    /// The outcome of the rules (before the ask mode).
    pub action: Action,
    /// The deciding rule; `None` when no rule matched (which asks).
    pub rule: Option<Rule>,
}

impl Policy {
    /// The settings the policies give: the user (or explicit) policy's, tightened by the
    /// project policy's mode and network.
    pub fn sandbox_settings(&self) -> Settings {
        let mut settings = Settings::default();
        if let Some(spec) = self.user.as_ref().and_then(|u| u.file.sandbox.as_ref()) {
            settings.mode = spec.mode.unwrap_or_default();
            settings.network = spec.network.unwrap_or(true);
            settings.writable = spec
                .writable
                .iter()
                .map(|w| crate::sandbox_settings::expand(w))
                .collect();
            settings.unmask = spec.unmask.clone();
            settings.sockets = spec
                .sockets
                .iter()
                .map(|w| crate::sandbox_settings::expand(w))
                .collect();
            settings.scan_limit = spec.scan_limit.unwrap_or(crate::secret_scan::CAP);
        }
        if let Some(spec) = self.project.as_ref().and_then(|p| p.file.sandbox.as_ref()) {
            if let Some(mode) = spec.mode
                && mode > settings.mode
            {
                settings.mode = mode;
            }
            if spec.network == Some(false) {
                settings.network = false;
            }
        }
        settings.policy_file = self.explicit_file().map(Path::to_path_buf);
        settings
    }

    /// Loads the policy files for the project in `dir` (resolved); `explicit` replaces the
    /// user policy. Errors name file, line and column.
    pub fn load(dir: &Path, explicit: Option<&Path>) -> Result<Policy, String> {
        let (user_path, explicit) = match explicit {
            Some(path) => (Some(path.to_path_buf()), true),
            None => (user_config_dir().map(|d| d.join("policy.json")), false),
        };
        let user = match user_path {
            Some(path) => match read_json_file::<PolicyFile>(&path)? {
                Some(file) => Some(Loaded { path, file }),
                None if explicit => {
                    return Err(format!(
                        "{}: the policy file does not exist",
                        path.display()
                    ));
                }
                None => None,
            },
            None => None,
        };
        let project_path = crate::project::tinytool_dir(dir).join("policy.json");
        let project = read_json_file::<PolicyFile>(&project_path)?.map(|file| Loaded {
            path: project_path,
            file,
        });
        Ok(Policy {
            user,
            explicit,
            project,
            dir: dir.to_path_buf(),
        })
    }

    /// Whether the user policy lets the project policy allow.
    pub fn trusts_project(&self) -> bool {
        self.user
            .as_ref()
            .and_then(|u| u.file.trust_project)
            .unwrap_or(false)
    }

    /// What an "ask" becomes: the user policy's mode; the project's only when it is
    /// stricter or trusted.
    pub fn ask_mode(&self) -> AskMode {
        let user = self
            .user
            .as_ref()
            .and_then(|u| u.file.ask)
            .unwrap_or_default();
        match self.project.as_ref().and_then(|p| p.file.ask) {
            Some(AskMode::Deny) => AskMode::Deny,
            Some(mode) if self.trusts_project() => mode,
            _ => user,
        }
    }

    /// Tools switched off by either policy.
    pub fn disabled(&self) -> impl Iterator<Item = &str> {
        self.user
            .iter()
            .chain(self.project.iter())
            .flat_map(|l| l.file.disabled.iter().map(String::as_str))
    }

    /// The file an allow rule should be added to (the explicit or user policy).
    pub fn user_policy_path(&self) -> Option<PathBuf> {
        self.user
            .as_ref()
            .map(|u| u.path.clone())
            .or_else(|| user_config_dir().map(|d| d.join("policy.json")))
    }

    /// The rule chain (layers 1–4) for a session in `agent`.
    pub fn chain(&self, agent: &str) -> Vec<Rule> {
        let mut chain = defaults(&self.dir);
        let trusted = self.trusts_project();
        if let Some(user) = &self.user {
            let source = Source::User(user.path.clone());
            chain.extend(
                user.file
                    .rules
                    .iter()
                    .enumerate()
                    .map(|(i, r)| Rule::from_spec(r, source.clone(), i + 1)),
            );
        }
        if let Some(project) = &self.project {
            let source = Source::Project(project.path.clone());
            chain.extend(
                project
                    .file
                    .rules
                    .iter()
                    .enumerate()
                    .filter(|(_, r)| trusted || r.action != Action::Allow)
                    .map(|(i, r)| Rule::from_spec(r, source.clone(), i + 1)),
            );
        }
        if agent == "plan" {
            chain.extend(plan_builtins());
        }
        for (loaded, is_project) in self
            .user
            .iter()
            .map(|u| (u, false))
            .chain(self.project.iter().map(|p| (p, true)))
        {
            let source = Source::Agent(agent.to_string(), loaded.path.clone());
            chain.extend(
                AgentRules::of(&loaded.file, agent)
                    .iter()
                    .enumerate()
                    .filter(|(_, r)| !is_project || trusted || r.action != Action::Allow)
                    .map(|(i, r)| Rule::from_spec(r, source.clone(), i + 1)),
            );
        }
        chain
    }

    /// Decides every access of a call (an access outside the directory brings an
    /// `external_directory` access after it), in order, without stopping at a refusal.
    pub fn decide(
        &self,
        chain: &[Rule],
        approvals: &[(String, String)],
        accesses: &[Access],
    ) -> Vec<Decision> {
        let mut decisions = Vec::new();
        for access in accesses {
            decisions.push(self.decide_one(chain, approvals, access));
            if let Some(path) = &access.path
                && crate::paths::relative_inside(&self.dir, path).is_none()
            {
                let outside = Access {
                    permission: "external_directory".to_string(),
                    pattern: path.to_string_lossy().into_owned(),
                    reason: Some(format!(
                        "{} is outside the working directory",
                        path.display()
                    )),
                    path: Some(path.clone()),
                    normalized: None,
                    whole: false,
                };
                decisions.push(self.decide_one(chain, approvals, &outside));
            }
        }
        decisions
    }

    fn decide_one(
        &self,
        chain: &[Rule],
        approvals: &[(String, String)],
        access: &Access,
    ) -> Decision {
        if let Some(rule) = self.protection(access) {
            return Decision {
                access: access.clone(),
                action: Action::Deny,
                rule: Some(rule),
            };
        }
        let mut rule = chain.iter().rev().find(|r| r.matches(access)).cloned();
        // A command's normalised form: deny and ask rules are matched against it too
        // (allow rules only as written), and the more restrictive result wins.
        if access.normalized.is_some() {
            let normal = chain
                .iter()
                .rev()
                .find(|r| r.matches_normalized(access) || r.matches(access))
                .cloned();
            let rank = |r: &Option<Rule>| match r.as_ref().map_or(Action::Ask, |r| r.action) {
                Action::Deny => 2,
                Action::Ask => 1,
                Action::Allow => 0,
            };
            if rank(&normal) > rank(&rule) {
                rule = normal;
            }
        }
        let action = rule.as_ref().map_or(Action::Ask, |r| r.action);
        if action == Action::Ask {
            let approved = approvals
                .iter()
                .enumerate()
                .find(|(_, (permission, pattern))| {
                    let rule = Rule::builtin(permission, pattern, Action::Allow, Source::Approval);
                    rule.matches(access)
                });
            if let Some((i, (permission, pattern))) = approved {
                let mut rule = Rule::builtin(permission, pattern, Action::Allow, Source::Approval);
                rule.index = i + 1;
                return Decision {
                    access: access.clone(),
                    action: Action::Allow,
                    rule: Some(rule),
                };
            }
        }
        Decision {
            access: access.clone(),
            action,
            rule,
        }
    }

    /// The built-in protection: edits under `<dir>/.tinytool/` or the user config directory,
    /// and of the explicit policy file in effect (a policy kept in the checkout must not be
    /// loosened by the calls it governs).
    fn protection(&self, access: &Access) -> Option<Rule> {
        if access.permission != "edit" {
            return None;
        }
        let path = access.path.as_ref()?;
        let pattern = match protected_dirs(&self.dir)
            .iter()
            .find(|dir| path.starts_with(dir))
        {
            Some(dir) => format!("{}/*", dir.display()),
            None => {
                let file = self.explicit_file()?;
                (path == file).then(|| file.display().to_string())?
            }
        };
        let mut rule = Rule::builtin("edit", &pattern, Action::Deny, Source::Protection);
        rule.index = 0;
        Some(rule)
    }

    /// The explicit policy file (`--policy`, resolved where it is read from the command
    /// line); `None` when the user policy is used.
    fn explicit_file(&self) -> Option<&Path> {
        Some(&self.user.as_ref().filter(|_| self.explicit)?.path)
    }

    /// Whether a tool of `permission` is denied outright (the last rule covering the
    /// permission is `<permission> * deny`): such tools are hidden from listings.
    pub fn denies_outright(chain: &[Rule], permission: &str) -> bool {
        chain
            .iter()
            .rev()
            .find(|r| r.covers_permission(permission))
            .is_some_and(|r| r.pattern == "*" && r.action == Action::Deny)
    }
}

/// Folders no policy can open for edits: tinytool's own folder in the project and the user
/// config directory (both resolved).
fn protected_dirs(dir: &Path) -> Vec<PathBuf> {
    let mut dirs = vec![crate::paths::resolve_symlinks(
        &crate::project::tinytool_dir(dir),
    )];
    if let Some(config) = user_config_dir() {
        dirs.push(crate::paths::resolve_symlinks(&crate::paths::clean(
            &config,
        )));
    }
    dirs
}

fn defaults(dir: &Path) -> Vec<Rule> {
    let secrets = Rule {
        secret_files: Some(dir.to_path_buf()),
        ..Rule::builtin("read", SECRET_FILES_PATTERN, Action::Ask, Source::Default)
    };
    let mut rules = vec![
        Rule::builtin("*", "*", Action::Allow, Source::Default),
        secrets,
    ];
    rules.extend([
        Rule::builtin("webfetch", "*", Action::Ask, Source::Default),
        Rule::builtin("external_directory", "*", Action::Ask, Source::Default),
        Rule::builtin("destructive-shell", "*", Action::Ask, Source::Default),
        Rule::builtin("secret-shell", "*", Action::Ask, Source::Default),
        Rule::builtin("plan_exit", "*", Action::Ask, Source::Default),
        Rule::builtin("undo", "*", Action::Ask, Source::Default),
    ]);
    rules
}

fn plan_builtins() -> Vec<Rule> {
    [
        ("edit", "*", Action::Deny),
        ("edit", "plans/*", Action::Allow),
        ("edit", "drafts/*", Action::Allow),
        ("shell", "*", Action::Ask),
        ("plan_enter", "*", Action::Ask),
        ("plan_exit", "*", Action::Allow),
        // Undo rewrites files as edits do.
        ("undo", "*", Action::Deny),
    ]
    .into_iter()
    .map(|(p, pat, a)| Rule::builtin(p, pat, a, Source::PlanBuiltin))
    .chain([Rule {
        read_only_commands: true,
        ..Rule::builtin(
            "shell",
            READ_ONLY_PATTERN,
            Action::Allow,
            Source::PlanBuiltin,
        )
    }])
    .collect()
}

/// How the built-in read rule for secret files shows its pattern (it matches by
/// [`crate::secret_file::is_secret`]).
const SECRET_FILES_PATTERN: &str = "<secret file>";

/// How the plan agent's read-only allow shows its pattern (it matches by classifier).
const READ_ONLY_PATTERN: &str = "<read-only command>";

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(user: &str, project: &str) -> Policy {
        let parse = |text: &str| -> Option<Loaded> {
            (!text.is_empty()).then(|| Loaded {
                path: PathBuf::from("/p.json"),
                file: serde_json::from_str(text).unwrap(),
            })
        };
        Policy {
            user: parse(user),
            explicit: false,
            project: parse(project),
            dir: PathBuf::from("/work"),
        }
    }

    fn decide(policy: &Policy, agent: &str, access: Access) -> Action {
        let decisions = policy.decide(&policy.chain(agent), &[], &[access]);
        decisions
            .iter()
            .map(|d| d.action)
            .max_by_key(|a| match a {
                Action::Allow => 0,
                Action::Ask => 1,
                Action::Deny => 2,
            })
            .unwrap()
    }

    fn file(permission: &str, rel: &str) -> Access {
        Access {
            permission: permission.into(),
            pattern: rel.into(),
            reason: None,
            path: Some(Path::new("/work").join(rel)),
            normalized: None,
            whole: false,
        }
    }

    #[test]
    fn defaults_ask_for_env_files_anywhere_and_allow_the_rest() {
        let p = policy("", "");
        assert_eq!(decide(&p, "build", file("read", ".env")), Action::Ask);
        assert_eq!(
            decide(&p, "build", file("read", "sub/.env.local")),
            Action::Ask
        );
        assert_eq!(
            decide(&p, "build", file("read", "src/env.rs")),
            Action::Allow
        );
        // One definition of a secret file: code is never one by name, templates neither.
        for public in ["google/auth/credentials.py", "jest.env.js", ".env.example"] {
            assert_eq!(decide(&p, "build", file("read", public)), Action::Allow);
        }
        for secret in ["id_rsa", "certs/server.pem", ".git-credentials"] {
            assert_eq!(decide(&p, "build", file("read", secret)), Action::Ask);
        }
        assert_eq!(
            decide(&p, "build", Access::new("webfetch", "https://x")),
            Action::Ask
        );
        assert_eq!(
            decide(&p, "build", Access::new("shell", "ls")),
            Action::Allow
        );
        assert_eq!(
            decide(&p, "build", Access::new("plan_exit", "plan_exit")),
            Action::Ask
        );
    }

    #[test]
    fn glued_stars_in_shell_allow_rules_stay_in_one_word() {
        assert!(shell_allow_matches("rm -rf target/*", "rm -rf target/x"));
        assert!(shell_allow_matches("rm -rf target*", "rm -rf target-old"));
        assert!(!shell_allow_matches("rm -rf target*", "rm -rf target ."));
        assert!(!shell_allow_matches(
            "rm -rf target/*",
            "rm -rf target/../src"
        ));
        assert!(!shell_allow_matches("rm -rf target/*", "rm -rf target/x /"));
        assert!(shell_allow_matches("git *", "git push --force"));
        assert!(shell_allow_matches("git *", "git"));
        assert!(shell_allow_matches("cargo test*", "cargo test"));
    }

    #[test]
    fn deny_rules_also_match_the_normalised_command() {
        let p = policy(
            r#"{"rules": [{"permission": "shell", "pattern": "git push*", "action": "deny"},
                          {"permission": "shell", "pattern": "sudo apt *", "action": "allow"}]}"#,
            "",
        );
        let command = |text: &str, normalized: &str| Access {
            normalized: Some(normalized.to_string()),
            ..Access::new("shell", text)
        };
        let chain = p.chain("build");
        let decide = |a: Access| p.decide(&chain, &[], &[a])[0].action;
        assert_eq!(
            decide(command("timeout 9 git push -f", "git push -f")),
            Action::Deny
        );
        assert_eq!(decide(command("git -C . push", "git push")), Action::Deny);
        // Allow rules match as written only, and never loosen.
        assert_eq!(
            decide(command("sudo apt install x", "apt install x")),
            Action::Allow
        );
        let whole = Access {
            whole: true,
            ..Access::new("shell", "sudo apt $((")
        };
        assert_eq!(
            decide(whole),
            Action::Allow,
            "the default `* * allow` is `*`"
        );
    }

    #[test]
    fn last_matching_rule_wins_and_aliases_match() {
        let p = policy(
            r#"{"rules": [{"permission": "bash", "pattern": "*", "action": "deny"},
                                     {"permission": "shell", "pattern": "git *", "action": "allow"}]}"#,
            "",
        );
        assert_eq!(
            decide(&p, "build", Access::new("shell", "git status")),
            Action::Allow
        );
        assert_eq!(
            decide(&p, "build", Access::new("shell", "git")),
            Action::Allow
        );
        assert_eq!(
            decide(&p, "build", Access::new("shell", "rm x")),
            Action::Deny
        );
    }

    #[test]
    fn project_rules_only_restrict_unless_trusted() {
        let project = r#"{"rules": [{"permission": "*", "pattern": "*", "action": "allow"},
                                    {"permission": "edit", "pattern": "*.lock", "action": "deny"}]}"#;
        let p = policy("", project);
        assert_eq!(decide(&p, "build", file("read", ".env")), Action::Ask);
        assert_eq!(
            decide(&p, "build", file("edit", "Cargo.lock")),
            Action::Deny
        );
        let trusted = policy(r#"{"trust_project": true}"#, project);
        assert_eq!(
            decide(&trusted, "build", file("read", ".env")),
            Action::Allow
        );
    }

    #[test]
    fn paths_outside_need_external_directory() {
        let p = policy("", "");
        let outside = Access {
            permission: "read".into(),
            pattern: "/etc/hosts".into(),
            reason: None,
            path: Some(PathBuf::from("/etc/hosts")),
            normalized: None,
            whole: false,
        };
        let decisions = p.decide(&p.chain("build"), &[], &[outside]);
        assert_eq!(decisions.len(), 2);
        assert_eq!(decisions[1].access.permission, "external_directory");
        assert_eq!(decisions[1].action, Action::Ask);
    }

    #[test]
    fn absolute_rule_patterns_compare_with_the_absolute_path() {
        let p = policy(
            r#"{"rules": [{"permission": "read", "pattern": "/work/secret/*", "action": "deny"}]}"#,
            "",
        );
        assert_eq!(decide(&p, "build", file("read", "secret/a")), Action::Deny);
        assert_eq!(decide(&p, "build", file("read", "public/a")), Action::Allow);
    }

    #[test]
    fn plan_agent_restricts_edits_to_plans_and_drafts() {
        let p = policy("", "");
        assert_eq!(
            decide(&p, "plan", file("edit", "plans/a.md")),
            Action::Allow
        );
        assert_eq!(decide(&p, "plan", file("edit", "src/a.rs")), Action::Deny);
        assert_eq!(
            decide(&p, "plan", Access::new("edit", "todowrite")),
            Action::Deny
        );
        assert_eq!(
            decide(&p, "plan", Access::new("shell", "ls")),
            Action::Allow
        );
        assert_eq!(
            decide(&p, "plan", Access::new("shell", "rm x")),
            Action::Ask
        );
        assert_eq!(
            decide(&p, "plan", Access::new("shell", "ls > x")),
            Action::Ask
        );
        assert_eq!(
            decide(&p, "plan", Access::new("plan_exit", "plan_exit")),
            Action::Allow
        );
    }

    #[test]
    fn approvals_lift_asks_but_never_denies() {
        let p = policy(
            r#"{"rules": [{"permission": "read", "pattern": "secret*", "action": "deny"}]}"#,
            "",
        );
        let chain = p.chain("build");
        let approvals = vec![
            ("read".to_string(), ".env".to_string()),
            ("read".to_string(), "secret".to_string()),
        ];
        let env = p.decide(&chain, &approvals, &[file("read", ".env")]);
        assert_eq!(env[0].action, Action::Allow);
        assert_eq!(env[0].rule.as_ref().unwrap().source, Source::Approval);
        let secret = p.decide(&chain, &approvals, &[file("read", "secret")]);
        assert_eq!(secret[0].action, Action::Deny);
    }

    #[test]
    fn tinytool_folder_is_protected_from_edits_whatever_the_rules() {
        let p = policy(
            r#"{"rules": [{"permission": "*", "pattern": "*", "action": "allow"}]}"#,
            "",
        );
        assert_eq!(
            decide(&p, "build", file("edit", ".tinytool/policy.json")),
            Action::Deny
        );
        assert_eq!(
            decide(&p, "build", file("read", ".tinytool/policy.json")),
            Action::Allow
        );
    }

    #[test]
    fn spill_files_are_readable_under_the_default_policy() {
        // Issue 17: read and grep open `.tinytool/outputs/*`; only edits are protected.
        let p = policy("", "");
        let spill = ".tinytool/outputs/out-1-2-3.txt";
        assert_eq!(decide(&p, "build", file("read", spill)), Action::Allow);
        assert_eq!(decide(&p, "plan", file("read", spill)), Action::Allow);
        assert_eq!(decide(&p, "build", file("edit", spill)), Action::Deny);
    }

    #[test]
    fn outright_denials_hide_tools() {
        let p = policy(
            r#"{"rules": [{"permission": "edit", "pattern": "*", "action": "deny"}]}"#,
            "",
        );
        assert!(Policy::denies_outright(&p.chain("build"), "edit"));
        assert!(!Policy::denies_outright(&p.chain("build"), "read"));
        assert!(!Policy::denies_outright(
            &policy("", "").chain("plan"),
            "edit"
        ));
    }

    #[test]
    fn project_ask_mode_can_only_be_stricter() {
        assert_eq!(
            policy(r#"{"ask": "allow"}"#, r#"{"ask": "deny"}"#).ask_mode(),
            AskMode::Deny
        );
        assert_eq!(
            policy(r#"{"ask": "deny"}"#, r#"{"ask": "allow"}"#).ask_mode(),
            AskMode::Deny
        );
        assert_eq!(policy("", "").ask_mode(), AskMode::Deny);
    }
}
