//! The sandbox's settings as plain data: the `sandbox` key of a policy file
//! ([`SandboxSpec`]) and the effective settings of a session ([`Settings`]), with the line
//! that hands them to a supervisor. The policy fills them, the session carries them and
//! the sandbox applies them; none of those needs the others for it.

use std::path::PathBuf;

use serde::Deserialize;
use serde_json::json;

/// The `sandbox` key of a policy file.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SandboxSpec {
    /// `auto` (default), `required` or `off`.
    #[serde(default)]
    pub mode: Option<Mode>,
    /// Whether commands have the network (default true).
    #[serde(default)]
    pub network: Option<bool>,
    /// Paths writable besides `--dir` and `/tmp` (`~/` is the home directory).
    #[serde(default)]
    pub writable: Vec<String>,
    /// Secret files commands see as they are (paths or wildcard patterns, relative to the
    /// project or absolute; a pattern without `/` is matched against file names).
    #[serde(default)]
    pub unmask: Vec<String>,
    /// Unix sockets outside the project commands may connect to (a socket, or a folder
    /// of them; `~/` is the home directory).
    #[serde(default)]
    pub sockets: Vec<String>,
    /// The most directory entries the secret scan looks at (default [`crate::secret_scan::CAP`]); a
    /// project with more is refused commands until this is raised.
    #[serde(default)]
    pub scan_limit: Option<usize>,
}

/// How strictly the sandbox is applied, weakest first.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// No sandbox.
    Off,
    /// Every layer this machine allows (the default).
    #[default]
    Auto,
    /// Refuse to run a command when a layer cannot be set up.
    Required,
}

impl Mode {
    /// The word used in policies and metadata.
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Off => "off",
            Mode::Auto => "auto",
            Mode::Required => "required",
        }
    }
}

/// The effective sandbox settings of a session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    /// The mode.
    pub mode: Mode,
    /// Whether commands have the network.
    pub network: bool,
    /// Extra writable paths (absolute).
    pub writable: Vec<PathBuf>,
    /// The `unmask` patterns of the user policy.
    pub unmask: Vec<String>,
    /// The sockets (or folders of them) the user policy opens (absolute).
    pub sockets: Vec<PathBuf>,
    /// The most directory entries the secret scan looks at.
    pub scan_limit: usize,
    /// tinytool's own files of this session wherever the options put them (the state
    /// database given by `--state`, the `--answers` file): read-only for commands.
    pub own_files: Vec<PathBuf>,
    /// The session's state database: unreadable for commands, wherever it is (it keeps
    /// monitors' lines); inside `.tinytool/` the view of that folder hides it already.
    pub state_file: Option<PathBuf>,
    /// For one background command handed to its supervisor: a `secret-shell` allow rule
    /// covers it (the sandbox's `Purpose::unmask_all`). Never set by a policy.
    pub unmask_all: bool,
    /// The explicit policy file (`--policy`), protected read-only.
    pub policy_file: Option<PathBuf>,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            mode: Mode::Auto,
            network: true,
            writable: Vec::new(),
            unmask: Vec::new(),
            sockets: Vec::new(),
            scan_limit: crate::secret_scan::CAP,
            own_files: Vec::new(),
            state_file: None,
            unmask_all: false,
            policy_file: None,
        }
    }
}

/// The environment variable that hands settings to a supervisor, which loads no policy.
pub const SETTINGS_VAR: &str = "TINYTOOL_SANDBOX";

impl Settings {
    /// The settings as one line for [`SETTINGS_VAR`].
    pub fn encode(&self) -> String {
        json!({
            "mode": self.mode.as_str(),
            "network": self.network,
            "writable": self.writable,
            "unmask": self.unmask,
            "sockets": self.sockets,
            "scan_limit": self.scan_limit,
            "own_files": self.own_files,
            "state_file": self.state_file,
            "unmask_all": self.unmask_all,
            "policy_file": self.policy_file,
        })
        .to_string()
    }

    /// Settings from [`SETTINGS_VAR`]'s value; the defaults when it does not parse.
    pub fn decode(text: &str) -> Settings {
        #[derive(Deserialize)]
        struct Wire {
            mode: Mode,
            network: bool,
            writable: Vec<PathBuf>,
            #[serde(default)]
            unmask: Vec<String>,
            #[serde(default)]
            unmask_all: bool,
            #[serde(default)]
            sockets: Vec<PathBuf>,
            #[serde(default)]
            scan_limit: Option<usize>,
            #[serde(default)]
            own_files: Vec<PathBuf>,
            #[serde(default)]
            state_file: Option<PathBuf>,
            policy_file: Option<PathBuf>,
        }
        match serde_json::from_str::<Wire>(text) {
            Ok(w) => Settings {
                mode: w.mode,
                network: w.network,
                writable: w.writable,
                unmask: w.unmask,
                unmask_all: w.unmask_all,
                sockets: w.sockets,
                scan_limit: w.scan_limit.unwrap_or(crate::secret_scan::CAP),
                own_files: w.own_files,
                state_file: w.state_file,
                policy_file: w.policy_file,
            },
            Err(_) => Settings {
                mode: Mode::Required,
                ..Settings::default()
            },
        }
    }
}

/// `~/x` is `$HOME/x`; other paths are taken as written.
pub fn expand(path: &str) -> PathBuf {
    match (path.strip_prefix("~/"), std::env::var_os("HOME")) {
        (Some(rest), Some(home)) => PathBuf::from(home).join(rest),
        _ => PathBuf::from(path),
    }
}
