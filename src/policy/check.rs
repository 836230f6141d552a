//! `policy check`: findings about policy files that load but would not do what they say.
//!
//! - a permission name that is no category, alias or glob of one (with the category meant,
//!   when it is a tool's name);
//! - a rule **shadowed** by a later rule that always wins over it (its permission and
//!   pattern cover the earlier rule's), so the earlier one never decides anything;
//! - a rule's self-tests (`examples.match` / `examples.not_match`) that do not hold;
//! - project rules that allow without the user policy's `trust_project` (they are ignored);
//! - `disabled` entries that name no tool.

use std::fmt;

use super::analysis::{covers, permission_covers};
use super::{Action, AgentRules, Loaded, PERMISSIONS, Policy, RuleSpec};
use crate::wildcard;

/// One thing `policy check` found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// The file it is about.
    pub file: String,
    /// Where in the file (`rules[2]`, `agents.plan.rules[0]`, `disabled`).
    pub place: String,
    /// What is wrong and what to do.
    pub message: String,
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}: {}", self.file, self.place, self.message)
    }
}

/// A rule with where it was written.
struct Placed<'a> {
    spec: &'a RuleSpec,
    file: String,
    place: String,
}

fn rule_text(spec: &RuleSpec) -> String {
    format!(
        "{} {} {}",
        spec.permission,
        spec.pattern,
        spec.action.as_str()
    )
}

/// Checks the policies of `policy` (user or explicit, then project). `tool_names` are the
/// tools a `disabled` entry may name.
pub fn check(policy: &Policy, tool_names: &[&str]) -> Vec<Finding> {
    let mut findings = Vec::new();
    let files: Vec<(&Loaded, bool)> = policy
        .user
        .iter()
        .map(|l| (l, false))
        .chain(policy.project.iter().map(|l| (l, true)))
        .collect();
    for (loaded, is_project) in &files {
        let file = loaded.path.display().to_string();
        for name in &loaded.file.disabled {
            if !tool_names.contains(&name.as_str()) {
                findings.push(Finding {
                    file: file.clone(),
                    place: "disabled".into(),
                    message: format!(
                        "\"{name}\" is not a tool (tools: {})",
                        tool_names.join(", ")
                    ),
                });
            }
        }
        for (place, spec) in placed_specs(&loaded.file) {
            let placed = Placed {
                spec,
                file: file.clone(),
                place,
            };
            check_permission(&placed, &mut findings);
            check_pattern(&placed, &mut findings);
            check_examples(&placed, &mut findings);
            if *is_project && spec.action == Action::Allow && !policy.trusts_project() {
                findings.push(Finding {
                    file: file.clone(),
                    place: placed.place.clone(),
                    message: format!(
                        "`{}` tries to allow, but a project policy can only restrict: the rule is \
                         ignored unless the user policy sets \"trust_project\": true",
                        rule_text(spec)
                    ),
                });
            }
        }
    }
    // The base rules form one chain; each agent's rules another (they only apply in that
    // agent, so they are not said to shadow base rules). Ignored project allows shadow nothing.
    let trusted = policy.trusts_project();
    for list in 0..LISTS {
        let mut chain = Vec::new();
        for (loaded, is_project) in &files {
            let (prefix, specs) = rule_lists(&loaded.file)[list];
            let file = loaded.path.display().to_string();
            chain.extend(
                specs
                    .iter()
                    .enumerate()
                    .filter(|(_, s)| !is_project || trusted || s.action != Action::Allow)
                    .map(|(i, spec)| Placed {
                        spec,
                        file: file.clone(),
                        place: format!("{prefix}[{i}]"),
                    }),
            );
        }
        check_shadowing(&chain, &mut findings);
    }
    findings.dedup();
    findings
}

/// How many rule lists a policy file has (see [`rule_lists`]).
const LISTS: usize = 3;

/// A file's rule lists with the name each has in the file: the base rules, then each
/// agent's.
fn rule_lists(file: &super::PolicyFile) -> [(&'static str, &[RuleSpec]); LISTS] {
    [
        ("rules", file.rules.as_slice()),
        ("agents.build.rules", AgentRules::of(file, "build")),
        ("agents.plan.rules", AgentRules::of(file, "plan")),
    ]
}

fn placed_specs(file: &super::PolicyFile) -> Vec<(String, &RuleSpec)> {
    rule_lists(file)
        .into_iter()
        .flat_map(|(prefix, specs)| {
            specs
                .iter()
                .enumerate()
                .map(move |(i, r)| (format!("{prefix}[{i}]"), r))
        })
        .collect()
}

/// The category a tool's name stands for, to suggest in place of an unknown permission.
fn category_of_tool(name: &str) -> Option<&'static str> {
    Some(match name {
        "read" | "grep" | "glob" | "list" | "question" | "websearch" | "skill" | "invalid" => {
            "read"
        }
        "write" | "edit" | "apply_patch" | "todowrite" => "edit",
        "bash" | "task" | "monitor" => "shell",
        "webfetch" => "webfetch",
        "checkpoint" => "undo",
        _ => return None,
    })
}

fn check_permission(placed: &Placed, findings: &mut Vec<Finding>) {
    let permission = placed.spec.permission.as_str();
    let known =
        permission == "bash" || PERMISSIONS.iter().any(|p| wildcard::matches(permission, p));
    if known {
        return;
    }
    let hint = match category_of_tool(permission) {
        Some(category) => format!("; the {permission} tool asks for `{category}`"),
        None => String::new(),
    };
    findings.push(Finding {
        file: placed.file.clone(),
        place: placed.place.clone(),
        message: format!(
            "unknown permission \"{permission}\" in `{}`: the rule never matches (permissions: {}, or the alias bash){hint}",
            rule_text(placed.spec),
            PERMISSIONS.join(", ")
        ),
    });
}

/// Patterns that can never match what they seem to name, each with its fix: file
/// patterns with `./`, `//`, `..` or a trailing `/`; webfetch patterns without a scheme;
/// shell patterns with leading or doubled spaces; a shell allow whose `*` is glued to a
/// word (`rm -rf target*`).
fn check_pattern(placed: &Placed, findings: &mut Vec<Finding>) {
    let spec = placed.spec;
    let pattern = spec.pattern.as_str();
    let permission = spec.permission.as_str();
    let mut say = |message: String| {
        findings.push(Finding {
            file: placed.file.clone(),
            place: placed.place.clone(),
            message,
        });
    };
    let rule = rule_text(spec);
    if matches!(permission, "read" | "edit" | "external_directory") {
        if let Some(rest) = pattern.strip_prefix("./") {
            say(format!(
                "`{rule}` never matches: paths are compared without a leading `./`; write `{rest}`"
            ));
        }
        if pattern.contains("//") {
            let mut fixed = pattern.to_string();
            while fixed.contains("//") {
                fixed = fixed.replace("//", "/");
            }
            say(format!(
                "`{rule}` never matches: paths are compared with single slashes; write `{fixed}`"
            ));
        }
        if pattern.split('/').any(|c| c == "..") {
            say(format!(
                "`{rule}` never matches: paths are compared resolved, without `..`; write the \
                 path it names"
            ));
        }
        if pattern.len() > 1 && pattern.ends_with('/') {
            say(format!(
                "`{rule}` never matches: no path ends with `/`; write `{pattern}*` for what is \
                 inside the folder"
            ));
        }
    }
    if permission == "webfetch"
        && !(pattern.starts_with("http://")
            || pattern.starts_with("https://")
            || pattern.starts_with('*'))
    {
        say(format!(
            "`{rule}` never matches: URLs are compared with their scheme; write `https://{pattern}`"
        ));
    }
    if matches!(
        permission,
        "shell" | "bash" | "destructive-shell" | "secret-shell"
    ) {
        if pattern.starts_with(' ') || pattern.contains("  ") {
            let fixed = pattern.split_whitespace().collect::<Vec<_>>().join(" ");
            say(format!(
                "`{rule}` never matches: commands are compared with their words joined by \
                 single spaces; write `{fixed}`"
            ));
        }
        if spec.action == Action::Allow
            && let Some(stem) = pattern.strip_suffix('*')
            && stem
                .chars()
                .last()
                .is_some_and(|c| !matches!(c, ' ' | '/' | '*'))
        {
            say(format!(
                "`{rule}`: the `*` glued to a word reads as allowing `{stem} .` or \
                 `{stem}/../x` too (it matches no space and no `..`, so it allows only names \
                 starting with `{}`); write `{stem}` plus `{stem}/*`",
                stem.rsplit(' ').next().unwrap_or(stem)
            ));
        }
    }
}

/// Whether a rule decides a value: for shell permissions the value is a command line
/// judged as the policy judges it (each command; `match` means the rule decides every
/// command, `not_match` none).
fn decides(spec: &RuleSpec, value: &str, every: bool) -> bool {
    let shell = matches!(
        spec.permission.as_str(),
        "shell" | "bash" | "destructive-shell" | "secret-shell"
    );
    if !shell {
        return wildcard::matches(&spec.pattern, value);
    }
    let one = |text: &str, normalized: &str| {
        if spec.action == Action::Allow {
            super::shell_allow_matches(&spec.pattern, text)
        } else {
            wildcard::matches(&spec.pattern, text) || wildcard::matches(&spec.pattern, normalized)
        }
    };
    match crate::detect::commands::split(value) {
        Some(commands) if every => commands.iter().all(|c| one(&c.text, &c.normalized)),
        Some(commands) => commands.iter().any(|c| one(&c.text, &c.normalized)),
        None => spec.pattern == "*",
    }
}

fn check_examples(placed: &Placed, findings: &mut Vec<Finding>) {
    let Some(examples) = &placed.spec.examples else {
        return;
    };
    let pattern = &placed.spec.pattern;
    for value in &examples.matches {
        if !decides(placed.spec, value, true) {
            let detail = super::analysis::miss(pattern, value)
                .map(|m| {
                    if m.value_rest.is_empty() {
                        format!(
                            ": the example ends where the pattern still expects `{}`",
                            m.pattern_rest
                        )
                    } else {
                        format!(
                            ": the example continues with `{}` where the pattern expects `{}`",
                            m.value_rest, m.pattern_rest
                        )
                    }
                })
                .unwrap_or_default();
            findings.push(Finding {
                file: placed.file.clone(),
                place: placed.place.clone(),
                message: format!(
                    "example \"{value}\" should match `{}` but does not{detail}",
                    rule_text(placed.spec)
                ),
            });
        }
    }
    for value in &examples.not_match {
        if decides(placed.spec, value, false) {
            findings.push(Finding {
                file: placed.file.clone(),
                place: placed.place.clone(),
                message: format!(
                    "example \"{value}\" should not match `{}` but does",
                    rule_text(placed.spec)
                ),
            });
        }
    }
}

fn check_shadowing(chain: &[Placed], findings: &mut Vec<Finding>) {
    for (i, early) in chain.iter().enumerate() {
        let later = chain[i + 1..].iter().find(|late| {
            permission_covers(&late.spec.permission, &early.spec.permission)
                && covers(&late.spec.pattern, &early.spec.pattern)
        });
        if let Some(late) = later {
            let same_file = late.file == early.file;
            let location = if same_file {
                late.place.clone()
            } else {
                format!("{} of {}", late.place, late.file)
            };
            findings.push(Finding {
                file: early.file.clone(),
                place: early.place.clone(),
                message: format!(
                    "`{}` is shadowed by `{}` ({location}): the later rule matches everything it \
                     matches and the last matching rule wins, so it never decides anything; \
                     move it after that rule or narrow the later one",
                    rule_text(early.spec),
                    rule_text(late.spec)
                ),
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn policy(text: &str) -> Policy {
        Policy {
            user: Some(Loaded {
                path: PathBuf::from("p.json"),
                file: serde_json::from_str(text).unwrap(),
            }),
            explicit: true,
            project: None,
            dir: PathBuf::from("/w"),
        }
    }

    #[test]
    fn a_broad_later_rule_shadows_an_earlier_one() {
        let found = check(
            &policy(
                r#"{"rules": [{"permission": "shell", "pattern": "git *", "action": "allow"},
                                   {"permission": "shell", "pattern": "*", "action": "deny"}]}"#,
            ),
            &[],
        );
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(
            found[0]
                .message
                .contains("`shell git * allow` is shadowed by `shell * deny`")
        );
        assert_eq!(found[0].place, "rules[0]");
    }

    #[test]
    fn the_right_order_is_clean() {
        let found = check(
            &policy(
                r#"{"rules": [{"permission": "shell", "pattern": "*", "action": "deny"},
                                   {"permission": "bash", "pattern": "git *", "action": "allow",
                                    "examples": {"match": ["git status", "git"], "not_match": ["gitk"]}}]}"#,
            ),
            &[],
        );
        assert!(found.is_empty(), "{found:?}");
    }

    #[test]
    fn patterns_that_can_never_match_are_found_with_their_fix() {
        let found = check(
            &policy(
                r#"{"rules": [{"permission": "read", "pattern": "./secret/*", "action": "deny"},
                              {"permission": "edit", "pattern": "src//a", "action": "deny"},
                              {"permission": "edit", "pattern": "docs/", "action": "deny"},
                              {"permission": "read", "pattern": "../x/*", "action": "deny"},
                              {"permission": "webfetch", "pattern": "docs.rs/*", "action": "allow"},
                              {"permission": "shell", "pattern": "git  log", "action": "deny"},
                              {"permission": "destructive-shell", "pattern": "rm -rf target*", "action": "allow"},
                              {"permission": "destructive-shell", "pattern": "rm -rf target/*", "action": "allow",
                               "examples": {"match": ["rm -rf target/a && rm -rf target/b"],
                                            "not_match": ["rm -rf target/../src", "rm -rf target/a src"]}},
                              {"permission": "webfetch", "pattern": "https://docs.rs/*", "action": "allow"}]}"#,
            ),
            &["read"],
        );
        let text: Vec<String> = found.iter().map(|f| f.to_string()).collect();
        for (place, fix) in [
            ("rules[0]", "write `secret/*`"),
            ("rules[1]", "write `src/a`"),
            ("rules[2]", "write `docs/*`"),
            ("rules[3]", "without `..`"),
            ("rules[4]", "write `https://docs.rs/*`"),
            ("rules[5]", "write `git log`"),
            ("rules[6]", "write `rm -rf target` plus `rm -rf target/*`"),
        ] {
            assert!(
                text.iter().any(|t| t.contains(place) && t.contains(fix)),
                "{place}: {text:?}"
            );
        }
        assert_eq!(text.len(), 7, "{text:?}");
    }

    #[test]
    fn failing_examples_and_unknown_permissions_are_found() {
        let found = check(
            &policy(
                r#"{"rules": [{"permission": "grep", "pattern": "*", "action": "deny"},
                                   {"permission": "shell", "pattern": "git status *", "action": "allow",
                                    "examples": {"match": ["git push"], "not_match": ["git status -s"]}}],
                        "disabled": ["nosuch"]}"#,
            ),
            &["read"],
        );
        let text: Vec<String> = found.iter().map(|f| f.to_string()).collect();
        assert!(
            text.iter()
                .any(|t| t.contains("unknown permission \"grep\"") && t.contains("`read`")),
            "{text:?}"
        );
        assert!(
            text.iter()
                .any(|t| t.contains("example \"git push\" should match")),
            "{text:?}"
        );
        assert!(
            text.iter()
                .any(|t| t.contains("\"git status -s\" should not match")),
            "{text:?}"
        );
        assert!(
            text.iter().any(|t| t.contains("\"nosuch\" is not a tool")),
            "{text:?}"
        );
    }
}
