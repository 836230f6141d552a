//! The environment a shell command runs with: the parent's, minus credential-looking
//! variables, plus defaults that keep programs from waiting for a person.
//!
//! Removed (names compared upper-cased): exactly `AUTHORIZATION`, `AUTH_HEADER`, `SECRET`,
//! `TOKEN`, `PASSWORD`; ending in `_API_KEY`, `_APIKEY`, `_SECRET`, `_TOKEN`, `_PASSWORD`,
//! `_PASSWD`, `_CREDENTIAL`, `_CREDENTIALS`, `_PRIVATE_KEY`, `_ACCESS_KEY`; containing
//! `API_KEY`, `SECRET_KEY`, `ACCESS_KEY`, `SESSION_TOKEN`, `AUTH_TOKEN`.
//!
//! Set, whatever the parent had (see [`NON_INTERACTIVE`] for why each):
//! `GIT_TERMINAL_PROMPT=0`, `GCM_INTERACTIVE=never`, `GIT_EDITOR=true`,
//! `GIT_SEQUENCE_EDITOR=true`, `EDITOR=true`, `VISUAL=true`, `PAGER=cat`, `GIT_PAGER=cat`,
//! `MANPAGER=cat`, `DEBIAN_FRONTEND=noninteractive`, `PIP_NO_INPUT=1`. When the command
//! starts, `run` adds its token to `TINYTOOL_RUN` (see `adopted`).
//!
//! A subagent ([`subagent_env`]) is not a command a model wrote but a program the user
//! configured and the policy allowed, and an agent needs its model's API key: it keeps the
//! parent's variables (credentials included, as formatters and the after-hook do), gets
//! the same non-interactive defaults, and `TINYTOOL_SUBAGENT_DEPTH` set to its depth.

use std::ffi::{OsStr, OsString};

/// Variables set for every command, each with the prompt or wait it prevents.
const NON_INTERACTIVE: &[(&str, &str, &str)] = &[
    (
        "GIT_TERMINAL_PROMPT",
        "0",
        "git fails instead of asking for a user name or password",
    ),
    (
        "GCM_INTERACTIVE",
        "never",
        "Git Credential Manager never opens a prompt",
    ),
    (
        "GIT_EDITOR",
        "true",
        "commit, merge and tag messages are taken as given instead of opening an editor",
    ),
    (
        "GIT_SEQUENCE_EDITOR",
        "true",
        "`git rebase -i` runs its todo list unchanged instead of opening an editor",
    ),
    (
        "EDITOR",
        "true",
        "other programs that open an editor (crontab -e, kubectl edit) return at once",
    ),
    (
        "VISUAL",
        "true",
        "the same, for programs that prefer VISUAL",
    ),
    (
        "PAGER",
        "cat",
        "output is never held in a pager (systemctl, aws, psql, …)",
    ),
    ("GIT_PAGER", "cat", "git never starts a pager"),
    ("MANPAGER", "cat", "man prints instead of paging"),
    (
        "DEBIAN_FRONTEND",
        "noninteractive",
        "apt and dpkg take default answers to configuration questions",
    ),
    (
        "PIP_NO_INPUT",
        "1",
        "pip fails instead of asking (uninstall confirmations, credentials)",
    ),
];

const EXACT: &[&str] = &[
    "AUTHORIZATION",
    "AUTH_HEADER",
    "SECRET",
    "TOKEN",
    "PASSWORD",
];
const SUFFIXES: &[&str] = &[
    "_API_KEY",
    "_APIKEY",
    "_SECRET",
    "_TOKEN",
    "_PASSWORD",
    "_PASSWD",
    "_CREDENTIAL",
    "_CREDENTIALS",
    "_PRIVATE_KEY",
    "_ACCESS_KEY",
];
const CONTAINS: &[&str] = &[
    "API_KEY",
    "SECRET_KEY",
    "ACCESS_KEY",
    "SESSION_TOKEN",
    "AUTH_TOKEN",
];

/// Whether a variable's name looks like it holds a credential.
fn is_credential(name: &OsStr) -> bool {
    let upper = name.to_string_lossy().to_ascii_uppercase();
    EXACT.contains(&upper.as_str())
        || SUFFIXES.iter().any(|s| upper.ends_with(s))
        || CONTAINS.iter().any(|s| upper.contains(s))
}

/// `parent` without the variables `drop` names and with the non-interactive defaults laid
/// over it: the base of every child's environment.
fn non_interactive(
    parent: impl IntoIterator<Item = (OsString, OsString)>,
    drop: impl Fn(&OsStr) -> bool,
) -> Vec<(OsString, OsString)> {
    let mut env: Vec<(OsString, OsString)> = parent
        .into_iter()
        .filter(|(name, _)| !drop(name))
        .filter(|(name, _)| {
            !NON_INTERACTIVE
                .iter()
                .any(|(fixed, _, _)| OsStr::new(fixed) == name)
        })
        .collect();
    env.extend(
        NON_INTERACTIVE
            .iter()
            .map(|(name, value, _)| (OsString::from(name), OsString::from(value))),
    );
    env
}

/// The child environment of a command a model wrote (bash, monitor), built from `parent`
/// (normally `std::env::vars_os()`): credential-looking variables removed.
pub fn child_env(
    parent: impl IntoIterator<Item = (OsString, OsString)>,
) -> Vec<(OsString, OsString)> {
    non_interactive(parent, is_credential)
}

/// The environment of a command from the user's config (formatter, after-hook): it is the
/// user's own program, so it keeps the credentials it may need.
pub fn config_command_env(
    parent: impl IntoIterator<Item = (OsString, OsString)>,
) -> Vec<(OsString, OsString)> {
    non_interactive(parent, |_| false)
}

/// The variable that carries a subagent's depth.
const DEPTH_VAR: &str = "TINYTOOL_SUBAGENT_DEPTH";

/// The variable that names an explicit policy file (`--policy`'s twin).
pub const POLICY_VAR: &str = "TINYTOOL_POLICY";

/// The environment of a subagent at `depth` (parent + 1), built from `parent`: like a
/// config command's. A `policy` given to the parent with `--policy` is handed on as
/// `TINYTOOL_POLICY`, so a subagent that calls tinytool is held to the same rules.
pub fn subagent_env(
    parent: impl IntoIterator<Item = (OsString, OsString)>,
    depth: u32,
    policy: Option<&std::path::Path>,
) -> Vec<(OsString, OsString)> {
    let mut env = non_interactive(parent, |name| {
        name == DEPTH_VAR || (policy.is_some() && name == POLICY_VAR)
    });
    env.push((OsString::from(DEPTH_VAR), OsString::from(depth.to_string())));
    if let Some(policy) = policy {
        env.push((
            OsString::from(POLICY_VAR),
            policy.as_os_str().to_os_string(),
        ));
    }
    env
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_are_recognised_by_name() {
        for name in [
            "OPENROUTER_API_KEY",
            "openai_api_key",
            "STRIPE_APIKEY",
            "GITHUB_TOKEN",
            "AWS_SECRET_ACCESS_KEY",
            "AWS_SESSION_TOKEN",
            "DB_PASSWORD",
            "SMTP_PASSWD",
            "GCP_CREDENTIALS",
            "SSH_PRIVATE_KEY",
            "TOKEN",
            "Authorization",
            "MY_API_KEY_FILE",
            "X_AUTH_TOKEN_2",
        ] {
            assert!(is_credential(OsStr::new(name)), "{name}");
        }
        for name in [
            "PATH",
            "HOME",
            "LANG",
            "TOKENIZERS_PARALLELISM",
            "KEYBOARD",
            "SSH_AUTH_SOCK",
            "PASSWORD_STORE_DIR",
        ] {
            assert!(!is_credential(OsStr::new(name)), "{name}");
        }
    }

    /// Every value `env` gives `name` (more than one would be a bug).
    fn values(env: &[(OsString, OsString)], name: &str) -> Vec<OsString> {
        env.iter()
            .filter(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
            .collect()
    }

    #[test]
    fn defaults_replace_the_parents_values() {
        let parent = vec![
            (OsString::from("PATH"), OsString::from("/bin")),
            (OsString::from("PAGER"), OsString::from("less")),
            (OsString::from("GITHUB_TOKEN"), OsString::from("ghp_x")),
        ];
        let env = child_env(parent);
        let get = |k: &str| values(&env, k);
        assert_eq!(get("PATH"), [OsString::from("/bin")]);
        assert_eq!(get("PAGER"), [OsString::from("cat")]);
        assert!(get("GITHUB_TOKEN").is_empty());
        assert_eq!(get("GIT_TERMINAL_PROMPT"), [OsString::from("0")]);
    }

    #[test]
    fn a_subagent_keeps_credentials_and_gets_its_depth() {
        let parent = vec![
            (OsString::from("OPENAI_API_KEY"), OsString::from("sk-x")),
            (OsString::from(DEPTH_VAR), OsString::from("2")),
            (OsString::from("PAGER"), OsString::from("less")),
        ];
        let env = subagent_env(parent, 3, Some(std::path::Path::new("/p/policy.json")));
        let get = |k: &str| values(&env, k);
        assert_eq!(get("OPENAI_API_KEY"), [OsString::from("sk-x")]);
        assert_eq!(get(POLICY_VAR), [OsString::from("/p/policy.json")]);
        assert_eq!(get(DEPTH_VAR), [OsString::from("3")]);
        assert_eq!(get("PAGER"), [OsString::from("cat")]);
    }
}
