//! Judging the many reads of one search (grep, glob) without asking anybody.
//!
//! A search needs `read` of its root, which the gate checks before the call runs; every
//! file it then opens or lists below that root must pass the same `read` decision the
//! `read` tool would get for it, or a deny rule on `secret/*` would be bypassed by a grep
//! from `.`. Asking the gate once per file would rebuild the rule chain and re-read the
//! session state a hundred thousand times, so a [`ReadJudge`] is built once per call:
//!
//! - it keeps only the rules that cover `read` and could match some path below the root
//!   (a rule's literal head must agree with the root's shown or absolute prefix), and drops
//!   those shadowed by the last rule that matches every path below it;
//! - when none of what is left could refuse, it allows everything and costs nothing per
//!   path;
//! - otherwise it decides each path like the policy does — last matching rule wins, no
//!   match means ask, a stored approval lifts an ask — and an ask is a refusal unless the
//!   ask mode is `allow` (there is nobody to ask about each file), as with
//!   the permission gate's `permits`;
//! - [`ReadJudge::refuses_all_below`] tells a walker that a whole directory can be pruned,
//!   which it says only when it is certain (a rule such as `secret/*` deny, with nothing
//!   later that could allow a path inside).
//!
//! A path outside the project also needs `external_directory`, as for the `read` tool:
//! the root's own check passed before the call ran, but rules on paths below it (an allow
//! of `/x/*` then a deny of `/x/private/*`) decide each path, judged the same way.

use std::borrow::Cow;
use std::cell::OnceCell;
use std::path::Path;

use super::{Action, AskMode, Policy, Rule, permission_matches};
use crate::wildcard;

/// Decides `read` for the paths below one search root (resolved paths, symlinks not
/// followed below the root): `read` of the path, and `external_directory` too when the
/// path is outside the project. Cheap to query; built by the permission gate.
#[derive(Debug, Clone)]
pub struct ReadJudge {
    /// The `read` decision of every path.
    read: Inner,
    /// The `external_directory` decision of paths outside the project.
    outside: Inner,
    /// The project directory (resolved, as text).
    dir: String,
}

#[derive(Debug, Clone)]
enum Inner {
    /// Nothing below the root can be refused.
    AllowAll,
    /// The policy cannot be applied (the session state is unreadable): refuse everything.
    RefuseAll,
    /// Decide each path.
    Rules(Box<Rules>),
}

#[derive(Debug, Clone)]
struct Rules {
    /// The project directory (resolved, as text): paths inside it are shown relative to it.
    dir: String,
    /// The rules of the permission that can decide a path below the root, in chain order.
    rules: Vec<Compiled>,
    /// Stored approvals covering the permission that could match below the root.
    approvals: Vec<Compiled>,
    /// Whether an ask is let through (ask mode `allow`).
    ask_allows: bool,
    /// Whether some refusing rule could match a whole directory (a literal head followed
    /// only by `*`s): without one no directory is ever left out whole.
    can_prune: bool,
}

/// What part of a path a rule pattern is compared with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Form {
    /// The access pattern: relative to the directory inside it, absolute outside it.
    Shown,
    /// The absolute path (patterns starting with `/` or `~`).
    Absolute,
    /// Not a pattern: the secret files ([`crate::secret_file`], the built-in
    /// `read <secret file>` rule).
    SecretFile,
}

/// A rule (or approval) ready to be matched many times.
#[derive(Debug, Clone)]
struct Compiled {
    /// The pattern, with a leading `~` expanded.
    pattern: String,
    form: Form,
    action: Action,
    /// Known to match every path below the root (the catch-all the rules start with), so
    /// matching it needs no look at the path.
    everything: bool,
}

impl Compiled {
    fn new(pattern: &str, secret_files: bool, action: Action) -> Compiled {
        let (pattern, form) = if secret_files {
            (pattern.to_string(), Form::SecretFile)
        } else if pattern.starts_with('~') {
            let expanded = crate::paths::expand_home(pattern);
            (expanded.to_string_lossy().into_owned(), Form::Absolute)
        } else if pattern.starts_with('/') {
            (pattern.to_string(), Form::Absolute)
        } else {
            (pattern.to_string(), Form::Shown)
        };
        Compiled {
            pattern,
            form,
            action,
            everything: false,
        }
    }

    fn of(rule: &Rule) -> Compiled {
        Compiled::new(&rule.pattern, rule.secret_files.is_some(), rule.action)
    }

    fn matches(&self, subject: &Subject) -> bool {
        if self.form == Form::SecretFile {
            return crate::secret_file::is_secret(subject.path)
                || crate::secret_scan::is_alias_of_secret(Path::new(subject.dir), subject.path);
        }
        self.everything || wildcard::matches(&self.pattern, subject.get(self.form))
    }

    /// The prefix every path below the directory of `below` has in this rule's form, when
    /// there is one.
    fn prefix<'b>(&self, below: &'b Below) -> Option<&'b str> {
        match self.form {
            Form::Shown => below.shown.as_deref(),
            Form::Absolute => Some(&below.absolute),
            Form::SecretFile => None,
        }
    }

    /// Whether the rule could match some path strictly below the directory of `below`:
    /// false only when its literal head disagrees with the prefix they all share (a
    /// pattern ending in ` *` is also tried without it, as the matcher does).
    fn could_match_below(&self, below: &Below) -> bool {
        let Some(prefix) = self.prefix(below) else {
            return true;
        };
        let agrees = |pattern: &str| {
            let head = literal_head(pattern);
            head.starts_with(prefix) || prefix.starts_with(head)
        };
        agrees(&self.pattern) || self.pattern.strip_suffix(" *").is_some_and(agrees)
    }

    /// Whether the rule matches every path strictly below the directory of `below`: its
    /// pattern is a literal head followed only by `*`s, and that head starts the prefix.
    fn covers_below(&self, below: &Below) -> bool {
        let Some(prefix) = self.prefix(below) else {
            return false;
        };
        let head = literal_head(&self.pattern);
        let tail = &self.pattern[head.len()..];
        !tail.is_empty() && tail.bytes().all(|b| b == b'*') && prefix.starts_with(head)
    }
}

/// The part of a wildcard pattern before its first `*` or `?`.
fn literal_head(pattern: &str) -> &str {
    pattern
        .find(['*', '?'])
        .map_or(pattern, |end| &pattern[..end])
}

/// The prefixes shared by every path strictly below one directory.
#[derive(Debug)]
struct Below {
    /// In the shown form (`src/`, empty for the directory itself, absolute outside it);
    /// `None` when the project directory lies strictly below it, so that some paths are
    /// shown relative and others absolute.
    shown: Option<String>,
    /// In the absolute form, ending in `/`.
    absolute: String,
}

impl Below {
    /// The prefixes below `root` for the project directory `dir` (both resolved and
    /// clean, so comparing their text at a `/` is comparing their components: a walker
    /// asks this for every directory it meets).
    fn of(dir: &str, root: &Path) -> Below {
        let root = text(root);
        let absolute = format!("{}/", root.trim_end_matches('/'));
        let shown = if root == dir {
            Some(String::new())
        } else if let Some(rest) = below(&root, dir) {
            Some(format!("{rest}/"))
        } else if below(dir, &root).is_some() {
            None
        } else {
            Some(absolute.clone())
        };
        Below { shown, absolute }
    }
}

/// The text of a path (lossy only when it is not UTF-8).
fn text(path: &Path) -> Cow<'_, str> {
    match path.to_str() {
        Some(text) => Cow::Borrowed(text),
        None => path.to_string_lossy(),
    }
}

/// `path` relative to `dir` when it lies strictly below it (both absolute and clean).
fn below<'p>(path: &'p str, dir: &str) -> Option<&'p str> {
    let rest = path.strip_prefix(dir)?;
    if dir.ends_with('/') {
        return (!rest.is_empty()).then_some(rest);
    }
    rest.strip_prefix('/').filter(|rest| !rest.is_empty())
}

/// How a path is shown in an access pattern: relative to `dir` inside it (`.` for `dir`
/// itself), else absolute.
fn shown_in<'p>(path: &'p str, dir: &str) -> &'p str {
    if path == dir {
        "."
    } else {
        below(path, dir).unwrap_or(path)
    }
}

/// One path's forms, each worked out only when a rule asks for it.
struct Subject<'a> {
    dir: &'a str,
    path: &'a Path,
    shown: OnceCell<Cow<'a, str>>,
    absolute: OnceCell<Cow<'a, str>>,
}

impl<'a> Subject<'a> {
    fn new(dir: &'a str, path: &'a Path) -> Subject<'a> {
        Subject {
            dir,
            path,
            shown: OnceCell::new(),
            absolute: OnceCell::new(),
        }
    }

    fn get(&self, form: Form) -> &str {
        match form {
            Form::Shown => self.shown.get_or_init(|| match text(self.path) {
                Cow::Borrowed(path) => Cow::Borrowed(shown_in(path, self.dir)),
                Cow::Owned(path) => Cow::Owned(shown_in(&path, self.dir).to_string()),
            }),
            Form::Absolute => self.absolute.get_or_init(|| text(self.path)),
            Form::SecretFile => "",
        }
    }
}

impl ReadJudge {
    /// A judge that lets every read through (no policy, or none that could refuse).
    pub fn allow_all() -> ReadJudge {
        ReadJudge {
            read: Inner::AllowAll,
            outside: Inner::AllowAll,
            dir: String::new(),
        }
    }

    /// A judge that refuses every read (the policy cannot be applied).
    pub fn refuse_all() -> ReadJudge {
        ReadJudge {
            read: Inner::RefuseAll,
            outside: Inner::RefuseAll,
            dir: String::new(),
        }
    }

    /// The judge for paths below `root` (resolved) under `policy`, with the session's rule
    /// `chain` and stored `approvals` (permission, pattern).
    pub fn new(
        policy: &Policy,
        chain: &[Rule],
        approvals: &[(String, String)],
        root: &Path,
    ) -> ReadJudge {
        let dir = text(&policy.dir).into_owned();
        let below = Below::of(&dir, root);
        let ask_allows = policy.ask_mode() == AskMode::Allow;
        let read = Inner::new("read", &dir, &below, chain, approvals, ask_allows);
        // Inside the project (the root is the project or below it) no path is outside.
        let inside = below
            .shown
            .as_deref()
            .is_some_and(|shown| !shown.starts_with('/'));
        let outside = if inside {
            Inner::AllowAll
        } else {
            Inner::new(
                "external_directory",
                &dir,
                &below,
                chain,
                approvals,
                ask_allows,
            )
        };
        ReadJudge { read, outside, dir }
    }

    /// Whether some path below the root may be refused: when not, [`ReadJudge::permits`]
    /// is always true and need not be asked.
    pub fn may_refuse(&self) -> bool {
        !matches!(self.read, Inner::AllowAll) || !matches!(self.outside, Inner::AllowAll)
    }

    /// Whether reading `path` (resolved, strictly below the root) is allowed without
    /// asking. The root itself is the call's own access, which the gate decides: rules
    /// that cannot match below the root were dropped, so it is not judged here.
    pub fn permits(&self, path: &Path) -> bool {
        self.read.permits(path)
            && (matches!(self.outside, Inner::AllowAll)
                || self.is_inside(path)
                || self.outside.permits(path))
    }

    /// Whether every path strictly below the directory `dir` (resolved, below the root) is
    /// certainly refused, so that a walk can leave it out whole. False whenever that is not
    /// certain.
    pub fn refuses_all_below(&self, dir: &Path) -> bool {
        // Outside rules speak for a directory only when nothing below it is inside.
        let wholly_outside = || {
            let path = text(dir);
            !self.is_inside(dir) && below(&self.dir, &path).is_none()
        };
        self.read.refuses_all_below(dir)
            || (!matches!(self.outside, Inner::AllowAll)
                && wholly_outside()
                && self.outside.refuses_all_below(dir))
    }

    /// Whether `path` is the project directory or inside it.
    fn is_inside(&self, path: &Path) -> bool {
        let path = text(path);
        path == self.dir || below(&path, &self.dir).is_some()
    }
}

impl Inner {
    /// The decision of `permission` for the paths below `below`.
    fn new(
        permission: &str,
        dir: &str,
        below: &Below,
        chain: &[Rule],
        approvals: &[(String, String)],
        ask_allows: bool,
    ) -> Inner {
        let mut rules: Vec<Compiled> = chain
            .iter()
            .filter(|rule| rule.covers_permission(permission))
            .map(Compiled::of)
            .filter(|rule| rule.could_match_below(below))
            .collect();
        let catch_all = rules.iter().rposition(|rule| rule.covers_below(below));
        if let Some(last) = catch_all {
            rules.drain(..last);
            rules[0].everything = true;
        }
        let approvals: Vec<Compiled> = approvals
            .iter()
            .filter(|(approved, _)| permission_matches(approved, permission))
            .map(|(_, pattern)| Compiled::new(pattern, false, Action::Allow))
            .filter(|approval| approval.could_match_below(below))
            .collect();
        let refusing = |rule: &Compiled| match rule.action {
            Action::Allow => false,
            Action::Ask => !ask_allows,
            Action::Deny => true,
        };
        // Without a rule matching everything, some path may match none, which asks.
        let unmatched_refuses = catch_all.is_none() && !ask_allows;
        if !unmatched_refuses && !rules.iter().any(refusing) {
            return Inner::AllowAll;
        }
        let can_prune = rules.iter().any(|rule| {
            let tail = &rule.pattern[literal_head(&rule.pattern).len()..];
            refusing(rule)
                && rule.form != Form::SecretFile
                && !tail.is_empty()
                && tail.bytes().all(|b| b == b'*')
        });
        Inner::Rules(Box::new(Rules {
            dir: dir.to_string(),
            rules,
            approvals,
            ask_allows,
            can_prune,
        }))
    }

    fn permits(&self, path: &Path) -> bool {
        let rules = match self {
            Inner::AllowAll => return true,
            Inner::RefuseAll => return false,
            Inner::Rules(rules) => rules,
        };
        let subject = Subject::new(&rules.dir, path);
        let action = rules
            .rules
            .iter()
            .rev()
            .find(|rule| rule.matches(&subject))
            .map_or(Action::Ask, |rule| rule.action);
        match action {
            Action::Allow => true,
            Action::Deny => false,
            Action::Ask => {
                rules.ask_allows
                    || rules
                        .approvals
                        .iter()
                        .any(|approval| approval.matches(&subject))
            }
        }
    }

    fn refuses_all_below(&self, dir: &Path) -> bool {
        let rules = match self {
            Inner::AllowAll => return false,
            Inner::RefuseAll => return true,
            Inner::Rules(rules) if rules.can_prune => rules,
            Inner::Rules(_) => return false,
        };
        let below = Below::of(&rules.dir, dir);
        let Some(start) = rules.rules.iter().rposition(|r| r.covers_below(&below)) else {
            return false;
        };
        let approvable = rules
            .approvals
            .iter()
            .any(|approval| approval.could_match_below(&below));
        rules.rules[start..]
            .iter()
            .filter(|rule| rule.could_match_below(&below))
            .all(|rule| match rule.action {
                Action::Allow => false,
                Action::Ask => !rules.ask_allows && !approvable,
                Action::Deny => true,
            })
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Loaded, PolicyFile};
    use super::*;
    use std::path::PathBuf;

    fn policy(user: &str) -> Policy {
        Policy {
            user: (!user.is_empty()).then(|| Loaded {
                path: PathBuf::from("/p.json"),
                file: serde_json::from_str::<PolicyFile>(user).unwrap(),
            }),
            explicit: false,
            project: None,
            dir: PathBuf::from("/work"),
        }
    }

    fn judge(user: &str, approvals: &[(&str, &str)], root: &str) -> ReadJudge {
        let p = policy(user);
        let approvals: Vec<(String, String)> = approvals
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect();
        ReadJudge::new(&p, &p.chain("build"), &approvals, Path::new(root))
    }

    fn deny(pattern: &str) -> String {
        format!(
            r#"{{"rules": [{{"permission": "read", "pattern": "{pattern}", "action": "deny"}}]}}"#
        )
    }

    #[test]
    fn judgements_agree_with_the_policy_on_every_path() {
        let policies = [
            String::new(),
            deny("secret/*"),
            deny("*.pem"),
            deny("/work/secret/*"),
            deny("/elsewhere/*"),
            deny("src/a?.rs"),
            r#"{"ask": "allow"}"#.to_string(),
            r#"{"rules": [{"permission": "read", "pattern": "secret/*", "action": "deny"},
                {"permission": "read", "pattern": "secret/open/*", "action": "allow"}]}"#
                .to_string(),
            r#"{"rules": [{"permission": "*", "pattern": "secret*", "action": "ask"}]}"#
                .to_string(),
            r#"{"rules": [{"permission": "read", "pattern": "*", "action": "deny"},
                {"permission": "read", "pattern": "src/*", "action": "allow"}]}"#
                .to_string(),
            r#"{"rules": [{"permission": "external_directory", "pattern": "/elsewhere*", "action": "allow"},
                {"permission": "external_directory", "pattern": "/elsewhere/private/*", "action": "deny"}]}"#
                .to_string(),
            r#"{"rules": [{"permission": "external_directory", "pattern": "/elsewhere", "action": "allow"}]}"#
                .to_string(),
            r#"{"rules": [{"permission": "external_directory", "pattern": "*", "action": "allow"}]}"#
                .to_string(),
        ];
        let paths = [
            "/work/a.rs",
            "/work/.env",
            "/work/src/.env.local",
            "/work/src/a1.rs",
            "/work/src/b.rs",
            "/work/secret/k.pem",
            "/work/secret/open/x",
            "/work/secretive",
            "/elsewhere/x",
            "/elsewhere/.env",
            "/elsewhere/private/f",
        ];
        for text in &policies {
            let p = policy(text);
            let chain = p.chain("build");
            let approved = |permission: &str, pattern: &str| {
                vec![(permission.to_string(), pattern.to_string())]
            };
            for approvals in [
                vec![],
                approved("read", "secret/*"),
                approved("external_directory", "/elsewhere/*"),
            ] {
                for root in ["/work", "/work/src", "/work/secret", "/elsewhere", "/"] {
                    let j = ReadJudge::new(&p, &chain, &approvals, Path::new(root));
                    for path in paths.iter().filter(|p| Path::new(p).starts_with(root)) {
                        let access = crate::access::Access {
                            permission: "read".into(),
                            pattern: crate::paths::display(&p.dir, Path::new(path)),
                            reason: None,
                            path: Some(PathBuf::from(path)),
                            normalized: None,
                            whole: false,
                        };
                        // `read`, and `external_directory` for a path outside.
                        let want = p
                            .decide(&chain, &approvals, &[access])
                            .iter()
                            .all(|d| match d.action {
                                Action::Allow => true,
                                Action::Ask => p.ask_mode() == AskMode::Allow,
                                Action::Deny => false,
                            });
                        assert_eq!(
                            j.permits(Path::new(path)),
                            want,
                            "{path} under {root} with {text} and {approvals:?}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn only_the_env_rule_or_nothing_can_refuse_below_an_unrelated_root() {
        assert!(!judge(r#"{"ask": "allow"}"#, &[], "/work").may_refuse());
        assert!(judge("", &[], "/work").may_refuse(), "secret files ask");
        let all = r#"{"rules": [{"permission": "read", "pattern": "*", "action": "allow"}]}"#;
        assert!(!judge(all, &[], "/work").may_refuse());
        let pem_elsewhere = deny("/elsewhere/*");
        let j = judge(&pem_elsewhere, &[], "/work/src");
        assert!(j.may_refuse(), "the secret-file rule still asks");
        assert!(j.permits(Path::new("/work/src/a.rs")));
        let open = r#"{"ask": "allow", "rules": [{"permission": "read", "pattern": "secret/*", "action": "deny"}]}"#;
        assert!(!judge(open, &[], "/work/src").may_refuse());
        assert!(judge(open, &[], "/work").may_refuse());
        assert!(judge(open, &[], "/work/secret").may_refuse());
    }

    #[test]
    fn below_compares_whole_components() {
        assert_eq!(below("/work/src/a", "/work"), Some("src/a"));
        assert_eq!(below("/workshop/a", "/work"), None);
        assert_eq!(below("/work", "/work"), None);
        assert_eq!(below("/etc/x", "/"), Some("etc/x"));
        assert_eq!(below("/", "/"), None);
        let shown = |root: &str| Below::of("/work", Path::new(root)).shown;
        assert_eq!(shown("/work").as_deref(), Some(""));
        assert_eq!(shown("/work/src").as_deref(), Some("src/"));
        assert_eq!(shown("/workshop").as_deref(), Some("/workshop/"));
        assert_eq!(shown("/"), None);
    }

    #[test]
    fn whole_directories_are_refused_only_when_certain() {
        let j = judge(&deny("secret/*"), &[], "/work");
        assert!(j.refuses_all_below(Path::new("/work/secret")));
        assert!(j.refuses_all_below(Path::new("/work/secret/deeper")));
        assert!(!j.refuses_all_below(Path::new("/work/secretive")));
        assert!(!j.refuses_all_below(Path::new("/work/src")));
        let j = judge(&deny("secret/*.pem"), &[], "/work");
        assert!(!j.refuses_all_below(Path::new("/work/secret")));
        let later_allow = r#"{"rules": [{"permission": "read", "pattern": "secret/*", "action": "deny"},
            {"permission": "read", "pattern": "*/open/*", "action": "allow"}]}"#;
        assert!(!judge(later_allow, &[], "/work").refuses_all_below(Path::new("/work/secret")));
        let ask = r#"{"rules": [{"permission": "read", "pattern": "secret/*", "action": "ask"}]}"#;
        assert!(judge(ask, &[], "/work").refuses_all_below(Path::new("/work/secret")));
        assert!(
            !judge(ask, &[("read", "secret/ok")], "/work")
                .refuses_all_below(Path::new("/work/secret"))
        );
        let j = judge(&deny("/work/secret/*"), &[], "/work");
        assert!(j.refuses_all_below(Path::new("/work/secret")));
        let outside = r#"{"rules": [{"permission": "external_directory", "pattern": "/elsewhere*", "action": "allow"},
            {"permission": "external_directory", "pattern": "/elsewhere/private/*", "action": "deny"}]}"#;
        let j = judge(outside, &[], "/elsewhere");
        assert!(j.refuses_all_below(Path::new("/elsewhere/private")));
        assert!(!j.refuses_all_below(Path::new("/elsewhere/public")));
        // From `/`, the project below is not outside: only wholly outside folders go.
        let j = judge(r#"{"ask": "deny"}"#, &[], "/");
        assert!(!j.refuses_all_below(Path::new("/work")));
        assert!(j.permits(Path::new("/work/a.rs")));
        assert!(!j.permits(Path::new("/etc/passwd")));
        assert!(!judge("", &[], "/work").refuses_all_below(Path::new("/work/a")));
    }
}
