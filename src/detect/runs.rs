//! What a command hands on to be run: the "code, not data" half of the detectors.
//!
//! A wrapper runs another command with its own arguments (`sudo`, `env`, `nice`,
//! `timeout`, `xargs`, `find -exec`, `docker exec`, `ip netns exec`, …): that command is
//! judged as if typed. An interpreter given code as an argument (`sh -c`, `eval`,
//! `python -c`, `node -e`, `awk` programs, `psql -c`, `sqlite3 db "…"`, the remote
//! command of `ssh`, `watch`, `tmux send-keys`, …) has that code judged in its language.
//! An interpreter with no program reads code from standard input (`… | sh`,
//! `psql <<EOF`), which the walker supplies when it knows it.

use super::args::{self, Opt, Spec, command_name};

/// A language code is judged in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lang {
    /// POSIX shell (and shells close enough to read the same way: bash, zsh, PowerShell
    /// command lines).
    Shell,
    /// SQL, or a database client's command language.
    Sql,
    /// A scripting language (Python, JavaScript, Ruby, Perl, awk, …): its string literals
    /// and well-known destructive calls are judged.
    Script,
}

/// Something a command runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Inner {
    /// Another command, with its arguments.
    Argv(Vec<String>),
    /// Code in a language.
    Code(Lang, String),
    /// Code read from standard input.
    Stdin(Lang),
    /// Code read from a file (`sh script.sh`, `source x`, `python x.py`): judged when the
    /// same command line wrote that file.
    File(Lang, String),
}

/// What running `argv` runs in turn.
pub fn inners(argv: &[String]) -> Vec<Inner> {
    let Some((first, args)) = argv.split_first() else {
        return Vec::new();
    };
    let name = command_name(first);
    match name {
        "sudo" => sudo(args),
        "doas" => wrapped(args, Spec::new("uC", &[]), 0),
        "pkexec" => wrapped(args, Spec::new("", &["user"]), 0),
        "env" => env(args),
        "command" => {
            let opts = args::parse_posix(args, Spec::default());
            if args::has_short(&opts, 'v') || args::has_short(&opts, 'V') {
                Vec::new()
            } else {
                wrapped(args, Spec::default(), 0)
            }
        }
        "builtin" | "nohup" | "busybox" | "toybox" | "unbuffer" | "catchsegv" | "torsocks"
        | "proxychains" | "proxychains4" | "fakeroot" | "setsid" | "valgrind" | "firejail"
        | "dbus-run-session" | "coproc" | "then" | "do" | "else" | "eatmydata" | "prlimit" => {
            wrapped(args, Spec::default(), 0)
        }
        "exec" => wrapped(args, Spec::new("a", &[]), 0),
        "cgexec" => wrapped(args, Spec::new("g", &[]), 0),
        "numactl" => wrapped(args, Spec::new("NmCpiP", &[]), 0),
        "time" => wrapped(args, Spec::new("fo", &["format", "output"]), 0),
        "nice" => wrapped(args, Spec::new("n", &["adjustment"]), 0),
        "ionice" => wrapped(
            args,
            Spec::new("cnpPu", &["class", "classdata", "pid", "pgid", "uid"]),
            0,
        ),
        "stdbuf" => wrapped(args, Spec::new("ioe", &["input", "output", "error"]), 0),
        "caffeinate" => wrapped(args, Spec::new("tw", &[]), 0),
        "taskset" => {
            let opts = args::parse_posix(args, Spec::default());
            if args::has_short(&opts, 'p') {
                Vec::new()
            } else {
                wrapped(args, Spec::default(), 1)
            }
        }
        "chrt" => wrapped(args, Spec::new("T", &["sched-runtime"]), 1),
        "chroot" => wrapped(args, Spec::new("", &["userspec", "groups"]), 1),
        "nsenter" => wrapped(args, Spec::new("tSGw", &["target", "setuid", "setgid"]), 0),
        "unshare" => wrapped(args, Spec::new("", &["map-user", "map-group"]), 0),
        "strace" | "ltrace" => wrapped(args, Spec::new("abeEIoOpPsSuUX", &[]), 0),
        "xvfb-run" => wrapped(
            args,
            Spec::new(
                "nsfewp",
                &[
                    "server-num",
                    "server-args",
                    "auth-file",
                    "error-file",
                    "wait",
                ],
            ),
            0,
        ),
        "sshpass" => wrapped(args, Spec::new("pfdP", &[]), 0),
        "gosu" | "su-exec" | "faketime" => wrapped(args, Spec::default(), 1),
        "timeout" => wrapped(args, Spec::new("sk", &["signal", "kill-after"]), 1),
        "systemd-run" => wrapped(
            args,
            Spec::new(
                "upEMH",
                &[
                    "unit",
                    "property",
                    "setenv",
                    "description",
                    "slice",
                    "machine",
                    "host",
                    "uid",
                    "gid",
                    "nice",
                    "working-directory",
                    "on-active",
                    "on-calendar",
                    "service-type",
                ],
            ),
            0,
        ),
        "flock" => flock(args),
        "watch" => watch(args),
        "xargs" => xargs(args),
        "parallel" => parallel(args),
        "find" => find(args),
        "eval" => vec![Inner::Code(Lang::Shell, args.join(" "))],
        "source" | "." => args
            .first()
            .map(|file| vec![Inner::File(Lang::Shell, file.clone())])
            .unwrap_or_default(),
        // An alias's value is code the shell will run under that name.
        "alias" => args
            .iter()
            .filter_map(|a| a.split_once('=').map(|(_, code)| code))
            .map(|code| Inner::Code(Lang::Shell, code.to_string()))
            .collect(),
        "trap" => trap(args),
        "su" | "runuser" => su(args),
        "sg" => sg(args),
        "script" => {
            let opts = args::parse(args, Spec::new("cEtT", &["command", "timing", "echo"]));
            args::value(&opts, Some('c'), "command")
                .map(|code| vec![Inner::Code(Lang::Shell, code.to_string())])
                .unwrap_or_default()
        }
        "nix-shell" => {
            let opts = args::parse(args, Spec::new("pIA", &["run", "command", "packages"]));
            args::value(&opts, None, "run")
                .or_else(|| args::value(&opts, None, "command"))
                .map(|code| vec![Inner::Code(Lang::Shell, code.to_string())])
                .unwrap_or_default()
        }
        "nix" => after_flag(args, &["-c", "--command"]),
        "sh" | "bash" | "zsh" | "dash" | "ksh" | "mksh" | "ash" | "fish" | "yash" | "posh"
        | "rbash" | "tcsh" | "csh" | "pwsh" | "powershell" => shell(args),
        "ssh" | "autossh" => ssh(args),
        "mosh" => after_flag(args, &["--"]),
        "docker" | "podman" | "nerdctl" => container(args),
        "docker-compose" | "podman-compose" => compose(args),
        "kubectl" | "oc" => kube(args),
        "lxc" | "incus" => {
            let opts = args::parse_posix(args, Spec::default());
            let ops = args::operands(&opts);
            if ops.first() == Some(&"exec") {
                match args.iter().position(|a| a == "--") {
                    Some(dash) => argv_of(&args[dash + 1..]),
                    None => argv_of(&args.iter().skip(2).cloned().collect::<Vec<_>>()),
                }
            } else {
                Vec::new()
            }
        }
        "vagrant" => {
            let opts = args::parse(args, Spec::new("c", &["command"]));
            if args::operands(&opts).first() == Some(&"ssh") {
                args::value(&opts, Some('c'), "command")
                    .map(|code| vec![Inner::Code(Lang::Shell, code.to_string())])
                    .unwrap_or_default()
            } else {
                Vec::new()
            }
        }
        "gcloud" => {
            let opts = args::parse(args, Spec::new("", &["command"]));
            args::value(&opts, None, "command")
                .map(|code| vec![Inner::Code(Lang::Shell, code.to_string())])
                .unwrap_or_default()
        }
        "tmux" => tmux(args),
        "screen" => wrapped(args, Spec::new("SpcTtXhe", &[]), 0),
        "ip" => ip(args),
        "git" => git(args),
        "npx" | "bunx" | "pnpx" => {
            let opts = args::parse_posix(args, Spec::new("pc", &["package", "call"]));
            match args::value(&opts, Some('c'), "call") {
                Some(code) => vec![Inner::Code(Lang::Shell, code.to_string())],
                None => wrapped(args, Spec::new("pc", &["package", "call"]), 0),
            }
        }
        "npm" | "pnpm" | "yarn" | "bun" => package_runner(args),
        "uv" => match args.first().map(String::as_str) {
            Some("run") => wrapped(&args[1..], UV_RUN, 0),
            Some("tool") if args.get(1).map(String::as_str) == Some("run") => {
                wrapped(&args[2..], UV_RUN, 0)
            }
            _ => Vec::new(),
        },
        "uvx" => wrapped(args, UV_RUN, 0),
        "poetry" | "pipenv" | "pdm" | "hatch" | "rye" => match args.first().map(String::as_str) {
            Some("run") => wrapped(&args[1..], Spec::default(), 0),
            _ => Vec::new(),
        },
        "bundle" | "bundler" => match args.first().map(String::as_str) {
            Some("exec") => wrapped(&args[1..], Spec::default(), 0),
            _ => Vec::new(),
        },
        "conda" | "mamba" | "micromamba" => match args.first().map(String::as_str) {
            Some("run") => wrapped(&args[1..], Spec::new("np", &["name", "prefix", "cwd"]), 0),
            _ => Vec::new(),
        },
        "dotenv" => wrapped(args, Spec::new("ecv", &[]), 0),
        "dotenvx" => match args.first().map(String::as_str) {
            Some("run") => after_flag(args, &["--"]),
            _ => Vec::new(),
        },
        "direnv" => match args.first().map(String::as_str) {
            Some("exec") => argv_of(&args.iter().skip(2).cloned().collect::<Vec<_>>()),
            _ => Vec::new(),
        },
        _ if is_python(name) => python(args),
        "node" | "nodejs" => node(args),
        "deno" => match args.first().map(String::as_str) {
            Some("eval") => args
                .iter()
                .skip(1)
                .find(|a| !a.starts_with('-'))
                .map(|code| vec![Inner::Code(Lang::Script, code.clone())])
                .unwrap_or_default(),
            _ => Vec::new(),
        },
        "ruby" | "jruby" => script_flags(args, "e", ("rICETWxKF", "rICE")),
        "perl" => script_flags(args, "eE", ("IMmixFCdD", "I")),
        "php" => script_flags(args, "r", ("cdfz", "cdfz")),
        "lua" | "luajit" | "Rscript" | "julia" | "groovy" | "osascript" | "tclsh" => {
            script_flags(args, "e", ("l", "l"))
        }
        "awk" | "gawk" | "mawk" | "nawk" => awk(args),
        "psql" => {
            let opts = args::parse(
                args,
                Spec::new(
                    "cdfhlpUvPFRTo",
                    &[
                        "command", "dbname", "file", "host", "port", "username", "set", "variable",
                        "output",
                    ],
                ),
            );
            let commands: Vec<&str> = opts
                .iter()
                .filter_map(|o| match o {
                    Opt::Short('c', Some(v)) | Opt::Long("command", Some(v)) => Some(*v),
                    _ => None,
                })
                .collect();
            if !commands.is_empty() {
                commands
                    .into_iter()
                    .map(|c| Inner::Code(Lang::Sql, c.to_string()))
                    .collect()
            } else if args::has_short(&opts, 'f') || args::has_long(&opts, "file", 4) {
                Vec::new()
            } else {
                vec![Inner::Stdin(Lang::Sql)]
            }
        }
        "mysql" | "mariadb" => {
            // `-p` and `--password` take a value only when attached (`-pX`,
            // `--password=X`): alone they prompt, and the next word is its own option.
            let args: Vec<String> = args
                .iter()
                .take_while(|a| *a != "--")
                .filter(|a| !(a.starts_with("-p") || a.starts_with("--pass")))
                .chain(args.iter().skip_while(|a| *a != "--"))
                .cloned()
                .collect();
            sql_client(&args, 'e', "execute", "hPuSDo")
        }
        "clickhouse-client" => sql_client(args, 'q', "query", "hudp"),
        "clickhouse" if args.first().map(String::as_str) == Some("client") => {
            sql_client(&args[1..], 'q', "query", "hudp")
        }
        "cqlsh" => sql_client(args, 'e', "execute", "ukf"),
        "sqlcmd" => sql_client(args, 'Q', "query", "SUPdi"),
        "usql" => sql_client(args, 'c', "command", "f"),
        "cockroach" if args.first().map(String::as_str) == Some("sql") => {
            sql_client(&args[1..], 'e', "execute", "d")
        }
        "sqlite3" | "sqlite" | "duckdb" => sqlite(args),
        "redis-cli" | "valkey-cli" | "keydb-cli" => {
            let spec = Spec::new("hpsaurindD", &["user", "pass", "pattern", "count", "eval"]);
            let opts = args::parse(args, spec);
            let modes = [
                "scan", "bigkeys", "memkeys", "hotkeys", "stat", "latency", "eval",
            ];
            if args::operands(&opts).is_empty()
                && !modes.iter().any(|m| args::has_long(&opts, m, 4))
            {
                vec![Inner::Stdin(Lang::Sql)]
            } else {
                Vec::new()
            }
        }
        "mongosh" | "mongo" => {
            let opts = args::parse(
                args,
                Spec::new(
                    "uph",
                    &["eval", "host", "port", "username", "password", "file"],
                ),
            );
            match args::value(&opts, None, "eval") {
                Some(code) => vec![Inner::Code(Lang::Script, code.to_string())],
                None if args::has_long(&opts, "file", 4) || args::has_short(&opts, 'f') => {
                    Vec::new()
                }
                None => vec![Inner::Stdin(Lang::Script)],
            }
        }
        "at" | "batch" => {
            let opts = args::parse(args, Spec::new("fqt", &[]));
            if ['f', 'l', 'r', 'd', 'c']
                .iter()
                .any(|l| args::has_short(&opts, *l))
            {
                Vec::new()
            } else {
                vec![Inner::Stdin(Lang::Shell)]
            }
        }
        _ => Vec::new(),
    }
}

const UV_RUN: Spec = Spec::new(
    "pw",
    &[
        "with",
        "python",
        "directory",
        "project",
        "env-file",
        "package",
        "extra",
        "group",
        "index",
        "from",
        "with-requirements",
    ],
);

fn is_python(name: &str) -> bool {
    let rest = name
        .strip_prefix("python")
        .or_else(|| name.strip_prefix("pypy"));
    match rest {
        Some(rest) => rest.chars().all(|c| c.is_ascii_digit() || c == '.'),
        None => name == "ipython" || name == "ipython3",
    }
}

/// The command after a wrapper's options, `skip` operands and any `NAME=value` words.
fn wrapped(args: &[String], spec: Spec, skip: usize) -> Vec<Inner> {
    let Some(start) = args::first_operand(args, spec) else {
        return Vec::new();
    };
    let mut rest: Vec<String> = args[start..].iter().skip(skip).cloned().collect();
    while rest.first().is_some_and(|w| is_assignment(w)) {
        rest.remove(0);
    }
    argv_of(&rest)
}

fn argv_of(rest: &[String]) -> Vec<Inner> {
    if rest.is_empty() {
        Vec::new()
    } else {
        vec![Inner::Argv(rest.to_vec())]
    }
}

/// The command after the first of `flags` (`nix develop -c CMD`, `mosh host -- CMD`).
fn after_flag(args: &[String], flags: &[&str]) -> Vec<Inner> {
    match args.iter().position(|a| flags.contains(&a.as_str())) {
        Some(k) => argv_of(&args[k + 1..]),
        None => Vec::new(),
    }
}

/// `NAME=value`.
pub fn is_assignment(word: &str) -> bool {
    match word.split_once('=') {
        Some((name, _)) => {
            let mut chars = name.chars();
            chars
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        }
        None => false,
    }
}

fn sudo(args: &[String]) -> Vec<Inner> {
    let spec = Spec::new(
        "ugCDhprtTUR",
        &[
            "user",
            "group",
            "close-from",
            "chdir",
            "host",
            "prompt",
            "role",
            "type",
            "command-timeout",
            "other-user",
            "chroot",
        ],
    );
    let opts = args::parse_posix(args, spec);
    // `sudo -e` edits files; `-l`, `-v`, `-k` alone run nothing.
    if args::has_short(&opts, 'e') || args::has_long(&opts, "edit", 4) {
        return Vec::new();
    }
    wrapped(args, spec, 0)
}

fn env(args: &[String]) -> Vec<Inner> {
    let mut i = 0;
    while i < args.len() {
        let arg = args[i].as_str();
        match arg {
            "--" => {
                i += 1;
                break;
            }
            "-u" | "--unset" | "-C" | "--chdir" => i += 2,
            "-S" | "--split-string" => {
                let mut code = args.get(i + 1).cloned().unwrap_or_default();
                for rest in &args[(i + 2).min(args.len())..] {
                    code.push(' ');
                    code.push_str(rest);
                }
                return vec![Inner::Code(Lang::Shell, code)];
            }
            _ if arg.starts_with("--split-string=") || arg.starts_with("-S") && arg.len() > 2 => {
                let value = arg
                    .strip_prefix("--split-string=")
                    .or_else(|| arg.strip_prefix("-S"))
                    .unwrap_or_default();
                let mut code = value.to_string();
                for rest in &args[i + 1..] {
                    code.push(' ');
                    code.push_str(rest);
                }
                return vec![Inner::Code(Lang::Shell, code)];
            }
            _ if arg.starts_with('-') && arg.len() > 1 => i += 1,
            _ if is_assignment(arg) => i += 1,
            _ => break,
        }
    }
    argv_of(&args[i.min(args.len())..])
}

fn flock(args: &[String]) -> Vec<Inner> {
    let spec = Spec::new("wEc", &["timeout", "conflict-exit-code", "command"]);
    let opts = args::parse_posix(args, spec);
    if let Some(code) = args::value(&opts, Some('c'), "command") {
        return vec![Inner::Code(Lang::Shell, code.to_string())];
    }
    // The first operand is the lock file; the command follows it.
    wrapped(args, spec, 1)
}

fn watch(args: &[String]) -> Vec<Inner> {
    let spec = Spec::new("nq", &["interval", "equexit"]);
    let Some(start) = args::first_operand(args, spec) else {
        return Vec::new();
    };
    let opts = args::parse_posix(&args[..start], spec);
    let rest = &args[start..];
    if args::has_short(&opts, 'x') || args::has_long(&opts, "exec", 3) {
        argv_of(rest)
    } else {
        vec![Inner::Code(Lang::Shell, rest.join(" "))]
    }
}

fn xargs(args: &[String]) -> Vec<Inner> {
    // `-i`, `-e` and `-l` take only attached values; `-I`, `-L`, `-n`, … the next word.
    let mut i = 0;
    while i < args.len() {
        let arg = args[i].as_str();
        if arg == "--" {
            i += 1;
            break;
        }
        if !arg.starts_with('-') || arg == "-" {
            break;
        }
        if let Some(long) = arg.strip_prefix("--") {
            let takes = [
                "arg-file",
                "delimiter",
                "max-args",
                "max-procs",
                "max-lines",
                "max-chars",
                "process-slot-var",
            ];
            i += if !long.contains('=') && takes.contains(&long) {
                2
            } else {
                1
            };
            continue;
        }
        let cluster = &arg[1..];
        let mut skip_next = false;
        for (k, c) in cluster.char_indices() {
            if "aEdILnPs".contains(c) {
                skip_next = cluster[k + 1..].is_empty();
                break;
            }
            if "iel".contains(c) {
                break;
            }
        }
        i += if skip_next { 2 } else { 1 };
    }
    argv_of(&args[i.min(args.len())..])
}

fn parallel(args: &[String]) -> Vec<Inner> {
    let spec = Spec::new(
        "jSaIdnNPLsE",
        &["jobs", "sshlogin", "arg-file", "delimiter", "joblog"],
    );
    let Some(start) = args::first_operand(args, spec) else {
        return Vec::new();
    };
    let command: Vec<&str> = args[start..]
        .iter()
        .map(String::as_str)
        .take_while(|a| !a.starts_with(":::"))
        .collect();
    if command.is_empty() {
        Vec::new()
    } else {
        vec![Inner::Code(Lang::Shell, command.join(" "))]
    }
}

fn find(args: &[String]) -> Vec<Inner> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < args.len() {
        if matches!(args[i].as_str(), "-exec" | "-execdir" | "-ok" | "-okdir") {
            let start = i + 1;
            let mut end = start;
            while end < args.len() && args[end] != ";" && args[end] != "+" {
                end += 1;
            }
            if end > start {
                out.push(Inner::Argv(args[start..end].to_vec()));
            }
            i = end + 1;
        } else {
            i += 1;
        }
    }
    out
}

fn trap(args: &[String]) -> Vec<Inner> {
    let action = args
        .iter()
        .find(|a| !matches!(a.as_str(), "-p" | "-l" | "-P" | "--"));
    match action {
        Some(code) if code != "-" && !code.is_empty() => {
            vec![Inner::Code(Lang::Shell, code.clone())]
        }
        _ => Vec::new(),
    }
}

fn su(args: &[String]) -> Vec<Inner> {
    let spec = Spec::new(
        "cugGsw",
        &[
            "command",
            "session-command",
            "user",
            "group",
            "supp-group",
            "shell",
            "whitelist-environment",
        ],
    );
    let opts = args::parse(args, spec);
    if let Some(code) = args::value(&opts, Some('c'), "command")
        .or_else(|| args::value(&opts, None, "session-command"))
    {
        return vec![Inner::Code(Lang::Shell, code.to_string())];
    }
    // `runuser -u USER [--] COMMAND…`
    if args::has_short(&opts, 'u') || args::has_long(&opts, "user", 4) {
        return wrapped(args, spec, 0);
    }
    Vec::new()
}

fn sg(args: &[String]) -> Vec<Inner> {
    let opts = args::parse(args, Spec::new("c", &[]));
    if let Some(code) = args::value(&opts, Some('c'), "command") {
        return vec![Inner::Code(Lang::Shell, code.to_string())];
    }
    let ops = args::operands(&opts);
    if ops.len() > 1 {
        vec![Inner::Code(Lang::Shell, ops[1..].join(" "))]
    } else {
        Vec::new()
    }
}

/// `sh -c CODE`, `bash -lc CODE`, `sh -s` / `bash` alone (stdin), `sh script` (unknown).
fn shell(args: &[String]) -> Vec<Inner> {
    let mut command_flag = false;
    let mut stdin_flag = false;
    let mut i = 0;
    while i < args.len() {
        let arg = args[i].as_str();
        if arg == "--" {
            i += 1;
            break;
        }
        if arg == "-" {
            return vec![Inner::Stdin(Lang::Shell)];
        }
        let lower = arg.to_ascii_lowercase();
        // PowerShell: -Command / -c / -EncodedCommand.
        if lower == "-command" || lower == "--command" {
            command_flag = true;
            i += 1;
            break;
        }
        if let Some(long) = arg.strip_prefix("--") {
            i += if matches!(long, "rcfile" | "init-file") {
                2
            } else {
                1
            };
            continue;
        }
        if (arg.starts_with('-') || arg.starts_with('+')) && arg.len() > 1 {
            let cluster = &arg[1..];
            if cluster.contains('c') && cluster.chars().all(|c| c.is_ascii_alphabetic()) {
                command_flag = true;
            }
            if cluster.contains('s') {
                stdin_flag = true;
            }
            // `-o OPTION`, `-O OPTION` take the next word.
            i += if cluster.ends_with('o') || cluster.ends_with('O') {
                2
            } else {
                1
            };
            continue;
        }
        break;
    }
    let rest = &args[i.min(args.len())..];
    if command_flag {
        return match rest.first() {
            Some(code) => vec![Inner::Code(Lang::Shell, code.clone())],
            None => Vec::new(),
        };
    }
    if stdin_flag || rest.is_empty() {
        return vec![Inner::Stdin(Lang::Shell)];
    }
    vec![Inner::File(Lang::Shell, rest[0].clone())]
}

/// `ssh [options] HOST [options] [COMMAND…]`: the remote command is shell code; without
/// one, the remote shell reads standard input.
fn ssh(args: &[String]) -> Vec<Inner> {
    const WITH_VALUE: &str = "BbcDEeFIiJLlmOoPpQRSWw";
    let mut host_seen = false;
    let mut i = 0;
    let mut no_command = false;
    while i < args.len() {
        let arg = args[i].as_str();
        if arg == "--" {
            i += 1;
            if !host_seen {
                host_seen = true;
                i += 1;
            }
            break;
        }
        if arg.starts_with('-') && arg.len() > 1 {
            let cluster = &arg[1..];
            let mut skip_next = false;
            for (k, c) in cluster.char_indices() {
                if c == 'N' {
                    no_command = true;
                }
                if WITH_VALUE.contains(c) {
                    skip_next = cluster[k + 1..].is_empty();
                    break;
                }
            }
            i += if skip_next { 2 } else { 1 };
            continue;
        }
        if host_seen {
            break;
        }
        host_seen = true;
        i += 1;
    }
    if !host_seen || no_command {
        return Vec::new();
    }
    let rest = &args[i.min(args.len())..];
    if rest.is_empty() {
        vec![Inner::Stdin(Lang::Shell)]
    } else {
        vec![Inner::Code(Lang::Shell, rest.join(" "))]
    }
}

/// Options of docker, podman and nerdctl that come before the subcommand and take a value.
pub const DOCKER_GLOBAL: Spec = Spec::new(
    "Hcl",
    &[
        "host",
        "context",
        "config",
        "log-level",
        "tlscacert",
        "tlscert",
        "tlskey",
        "url",
        "connection",
        "root",
        "runroot",
        "namespace",
    ],
);

const DOCKER_EXEC: Spec = Spec::new(
    "euw",
    &["env", "env-file", "user", "workdir", "detach-keys", "index"],
);

const DOCKER_RUN: Spec = Spec::new(
    "aceEhlmpuvwi",
    &[
        "name",
        "network",
        "net",
        "env",
        "env-file",
        "volume",
        "mount",
        "publish",
        "entrypoint",
        "user",
        "workdir",
        "label",
        "memory",
        "cpus",
        "platform",
        "restart",
        "hostname",
        "add-host",
        "device",
        "dns",
        "log-driver",
        "log-opt",
        "cap-add",
        "cap-drop",
        "security-opt",
        "tmpfs",
        "ulimit",
        "pull",
        "gpus",
        "shm-size",
        "stop-signal",
        "health-cmd",
        "ipc",
        "pid",
        "cidfile",
        "expose",
        "link",
        "volumes-from",
        "runtime",
        "attach",
        "cpu-shares",
        "cpuset-cpus",
        "memory-swap",
        "sysctl",
        "userns",
        "uts",
        "group-add",
        "label-file",
        "network-alias",
        "stop-timeout",
        "detach-keys",
    ],
);

fn container(args: &[String]) -> Vec<Inner> {
    let Some(verb_at) = args::first_operand(args, DOCKER_GLOBAL) else {
        return Vec::new();
    };
    let rest = &args[verb_at + 1..];
    match args[verb_at].as_str() {
        "exec" => wrapped(rest, DOCKER_EXEC, 1),
        "run" => wrapped(rest, DOCKER_RUN, 1),
        "container" => match rest.first().map(String::as_str) {
            Some("exec") => wrapped(&rest[1..], DOCKER_EXEC, 1),
            Some("run") => wrapped(&rest[1..], DOCKER_RUN, 1),
            _ => Vec::new(),
        },
        "compose" => compose(rest),
        _ => Vec::new(),
    }
}

/// Options of docker compose that come before the subcommand and take a value.
pub const COMPOSE_GLOBAL: Spec = Spec::new(
    "fp",
    &[
        "file",
        "project-name",
        "project-directory",
        "env-file",
        "profile",
        "ansi",
        "parallel",
    ],
);

fn compose(args: &[String]) -> Vec<Inner> {
    let Some(verb_at) = args::first_operand(args, COMPOSE_GLOBAL) else {
        return Vec::new();
    };
    let rest = &args[verb_at + 1..];
    match args[verb_at].as_str() {
        "exec" => wrapped(rest, DOCKER_EXEC, 1),
        "run" => wrapped(rest, DOCKER_RUN, 1),
        _ => Vec::new(),
    }
}

/// Options of kubectl and oc that take a value (global and the common per-command ones).
pub const KUBE: Spec = Spec::new(
    "nscflopLv",
    &[
        "namespace",
        "context",
        "kubeconfig",
        "cluster",
        "user",
        "server",
        "token",
        "as",
        "as-group",
        "as-uid",
        "cache-dir",
        "certificate-authority",
        "client-certificate",
        "client-key",
        "request-timeout",
        "tls-server-name",
        "username",
        "password",
        "profile",
        "profile-output",
        "log-dir",
        "log-file",
        "vmodule",
        "v",
        "filename",
        "selector",
        "output",
        "container",
        "field-selector",
        "patch",
        "type",
        "image",
        "replicas",
        "pod-running-timeout",
        "template",
        "timeout",
        "since",
        "tail",
    ],
);

fn kube(args: &[String]) -> Vec<Inner> {
    let opts = args::parse(args, KUBE);
    let ops = args::operands(&opts);
    match ops.first().copied() {
        Some("exec" | "rsh" | "debug" | "run" | "attach") => {
            if let Some(dash) = args.iter().position(|a| a == "--") {
                return argv_of(&args[dash + 1..]);
            }
            if matches!(ops[0], "exec" | "rsh") && ops.len() > 2 {
                return argv_of(&ops[2..].iter().map(|s| s.to_string()).collect::<Vec<_>>());
            }
            Vec::new()
        }
        _ => Vec::new(),
    }
}

fn tmux(args: &[String]) -> Vec<Inner> {
    let global = Spec::new("LSfcT", &[]);
    let opts = args::parse_posix(args, global);
    if let Some(code) = args::value(&opts, Some('c'), "") {
        return vec![Inner::Code(Lang::Shell, code.to_string())];
    }
    let Some(verb_at) = args::first_operand(args, global) else {
        return Vec::new();
    };
    let rest = &args[verb_at + 1..];
    let spec = Spec::new("cefFnstxylN", &[]);
    let opts = args::parse(rest, spec);
    let ops = args::operands(&opts);
    match args[verb_at].as_str() {
        "send-keys" | "send" => {
            const KEYS: &[&str] = &[
                "Enter", "C-m", "KPEnter", "C-j", "Escape", "Tab", "C-c", "C-d",
            ];
            let text: Vec<&str> = ops.into_iter().filter(|k| !KEYS.contains(k)).collect();
            if text.is_empty() {
                Vec::new()
            } else {
                vec![Inner::Code(Lang::Shell, text.join(" "))]
            }
        }
        "new-session" | "new" | "new-window" | "neww" | "split-window" | "splitw"
        | "respawn-pane" | "respawnp" | "respawn-window" | "respawnw" | "run-shell" | "run"
        | "display-popup" | "popup" => {
            if ops.is_empty() {
                Vec::new()
            } else {
                vec![Inner::Code(Lang::Shell, ops.join(" "))]
            }
        }
        _ => Vec::new(),
    }
}

/// `ip netns exec NAME COMMAND…` and `ip vrf exec NAME COMMAND…`.
fn ip(args: &[String]) -> Vec<Inner> {
    let Some(object_at) = args.iter().position(|a| !a.starts_with('-')) else {
        return Vec::new();
    };
    let object = args[object_at].as_str();
    let is_netns = object.len() >= 3 && "netns".starts_with(object);
    let is_vrf = object == "vrf";
    if !(is_netns || is_vrf) {
        return Vec::new();
    }
    match args.get(object_at + 1).map(String::as_str) {
        Some(action) if !action.is_empty() && "exec".starts_with(action) => {
            argv_of(&args.iter().skip(object_at + 3).cloned().collect::<Vec<_>>())
        }
        _ => Vec::new(),
    }
}

/// Options of git that come before the subcommand and take a value.
pub const GIT_GLOBAL: Spec = Spec::new(
    "Cc",
    &[
        "git-dir",
        "work-tree",
        "namespace",
        "super-prefix",
        "config-env",
        "list-cmds",
    ],
);

/// Git settings whose value is shell code git runs (`alias.X` when it starts with `!`).
fn git_setting_code(key: &str, value: &str) -> Option<String> {
    let key = key.to_ascii_lowercase();
    if key.starts_with("alias.") {
        return value.strip_prefix('!').map(str::to_string);
    }
    matches!(
        key.as_str(),
        "core.fsmonitor"
            | "core.sshcommand"
            | "core.pager"
            | "core.editor"
            | "core.askpass"
            | "sequence.editor"
            | "diff.external"
            | "credential.helper"
    )
    .then(|| value.strip_prefix('!').unwrap_or(value).to_string())
}

fn git(args: &[String]) -> Vec<Inner> {
    // `git -c key=value …`: code hidden in configuration runs as the command runs.
    let mut found = Vec::new();
    let mut k = 0;
    while k < args.len() {
        let a = args[k].as_str();
        let setting = if a == "-c" {
            k += 1;
            args.get(k).map(String::as_str)
        } else {
            a.strip_prefix("-c").filter(|v| v.contains('='))
        };
        if let Some((key, value)) = setting.and_then(|s| s.split_once('='))
            && let Some(code) = git_setting_code(key, value)
        {
            found.push(Inner::Code(Lang::Shell, code));
        }
        if !a.starts_with('-') {
            break;
        }
        k += 1;
    }
    let Some(verb_at) = args::first_operand(args, GIT_GLOBAL) else {
        return found;
    };
    let rest = &args[verb_at + 1..];
    // `git config [--global] KEY VALUE` storing code git will run later.
    if args[verb_at] == "config" {
        let operands: Vec<&String> = rest.iter().filter(|a| !a.starts_with('-')).collect();
        if let [key, value, ..] = operands.as_slice()
            && let Some(code) = git_setting_code(key, value)
        {
            found.push(Inner::Code(Lang::Shell, code));
        }
        return found;
    }
    if !found.is_empty() {
        return found;
    }
    match args[verb_at].as_str() {
        "rebase" => {
            let opts = args::parse(
                rest,
                Spec::new("xsX", &["exec", "strategy", "onto", "strategy-option"]),
            );
            opts.iter()
                .filter_map(|o| match o {
                    Opt::Short('x', Some(code)) | Opt::Long("exec", Some(code)) => {
                        Some(Inner::Code(Lang::Shell, code.to_string()))
                    }
                    _ => None,
                })
                .collect()
        }
        "submodule" => {
            let Some(k) = rest.iter().position(|a| a == "foreach") else {
                return Vec::new();
            };
            let code: Vec<&str> = rest[k + 1..]
                .iter()
                .map(String::as_str)
                .skip_while(|a| a.starts_with("--"))
                .collect();
            if code.is_empty() {
                Vec::new()
            } else {
                vec![Inner::Code(Lang::Shell, code.join(" "))]
            }
        }
        "bisect" if rest.first().map(String::as_str) == Some("run") => argv_of(&rest[1..]),
        // `git config alias.x '!cmd'`: a shell alias.
        "config" => rest
            .iter()
            .filter_map(|a| a.strip_prefix('!'))
            .map(|code| Inner::Code(Lang::Shell, code.to_string()))
            .collect(),
        _ => Vec::new(),
    }
}

fn package_runner(args: &[String]) -> Vec<Inner> {
    let Some(first) = args.first() else {
        return Vec::new();
    };
    match first.as_str() {
        "exec" | "x" | "dlx" => {
            if let Some(code) = args
                .iter()
                .position(|a| a == "-c" || a == "--call")
                .and_then(|k| args.get(k + 1))
            {
                return vec![Inner::Code(Lang::Shell, code.clone())];
            }
            match args.iter().position(|a| a == "--") {
                Some(dash) => argv_of(&args[dash + 1..]),
                None => wrapped(&args[1..], Spec::new("p", &["package"]), 0),
            }
        }
        "-e" | "--eval" => args
            .get(1)
            .map(|code| vec![Inner::Code(Lang::Script, code.clone())])
            .unwrap_or_default(),
        _ => Vec::new(),
    }
}

fn python(args: &[String]) -> Vec<Inner> {
    let mut i = 0;
    while i < args.len() {
        let arg = args[i].as_str();
        if arg == "-" {
            return vec![Inner::Stdin(Lang::Script)];
        }
        if arg == "--" {
            return args
                .get(i + 1)
                .map(|script| vec![Inner::File(Lang::Script, script.clone())])
                .unwrap_or_default();
        }
        if !arg.starts_with('-') {
            return vec![Inner::File(Lang::Script, arg.to_string())];
        }
        if arg.starts_with("--") {
            i += 1;
            continue;
        }
        let cluster = &arg[1..];
        for (k, c) in cluster.char_indices() {
            match c {
                'c' => {
                    let rest = &cluster[k + 1..];
                    let code = if rest.is_empty() {
                        args.get(i + 1).cloned().unwrap_or_default()
                    } else {
                        rest.to_string()
                    };
                    return vec![Inner::Code(Lang::Script, code)];
                }
                'm' => return Vec::new(),
                'W' | 'X' => {
                    if cluster[k + 1..].is_empty() {
                        i += 1;
                    }
                    break;
                }
                _ => {}
            }
        }
        i += 1;
    }
    vec![Inner::Stdin(Lang::Script)]
}

fn node(args: &[String]) -> Vec<Inner> {
    let mut i = 0;
    while i < args.len() {
        let arg = args[i].as_str();
        match arg {
            "-e" | "--eval" | "-p" | "--print" | "-pe" | "-ep" => {
                return args
                    .get(i + 1)
                    .map(|code| vec![Inner::Code(Lang::Script, code.clone())])
                    .unwrap_or_default();
            }
            "-r" | "--require" | "--import" | "--loader" | "--experimental-loader" => i += 2,
            "-" => return vec![Inner::Stdin(Lang::Script)],
            _ if arg.starts_with("--eval=") || arg.starts_with("--print=") => {
                let code = arg.split_once('=').map(|(_, c)| c).unwrap_or_default();
                return vec![Inner::Code(Lang::Script, code.to_string())];
            }
            _ if arg.starts_with('-') => i += 1,
            _ => return vec![Inner::File(Lang::Script, arg.to_string())],
        }
    }
    vec![Inner::Stdin(Lang::Script)]
}

/// Interpreters taking code after one of `code_letters` (`perl -lne CODE`, `ruby -e CODE`);
/// `value_letters` take a value that is not code (`ruby -rjson`), attached or, for the
/// second set of letters, also as the next word (`php -d x=1`). Without such code they
/// run the script file named first, or standard input (`curl URL | perl`).
fn script_flags(
    args: &[String],
    code_letters: &str,
    (value_letters, spaced_letters): (&str, &str),
) -> Vec<Inner> {
    let mut code = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let arg = args[i].as_str();
        if arg == "--" {
            i += 1;
            break;
        }
        if !arg.starts_with('-') || arg == "-" {
            break;
        }
        if arg.starts_with("--") {
            i += 1;
            continue;
        }
        let cluster = &arg[1..];
        let mut skip_next = false;
        for (k, c) in cluster.char_indices() {
            if code_letters.contains(c) {
                let rest = &cluster[k + 1..];
                if rest.is_empty() {
                    if let Some(next) = args.get(i + 1) {
                        code.push(next.clone());
                    }
                    skip_next = true;
                } else {
                    code.push(rest.to_string());
                }
                break;
            }
            if value_letters.contains(c) {
                // `-d x=1`: a value of its own word.
                skip_next = spaced_letters.contains(c) && cluster[k + c.len_utf8()..].is_empty();
                break;
            }
        }
        i += if skip_next { 2 } else { 1 };
    }
    if !code.is_empty() {
        return vec![Inner::Code(Lang::Script, code.join("\n"))];
    }
    match args.get(i).map(String::as_str) {
        None | Some("-") => vec![Inner::Stdin(Lang::Script)],
        Some(script) => vec![Inner::File(Lang::Script, script.to_string())],
    }
}

fn awk(args: &[String]) -> Vec<Inner> {
    let spec = Spec::new(
        "FvfeWi",
        &[
            "field-separator",
            "assign",
            "file",
            "source",
            "include",
            "load",
        ],
    );
    let opts = args::parse(args, spec);
    let sources: Vec<&str> = opts
        .iter()
        .filter_map(|o| match o {
            Opt::Short('e', Some(v)) | Opt::Long("source", Some(v)) => Some(*v),
            _ => None,
        })
        .collect();
    if !sources.is_empty() {
        return vec![Inner::Code(Lang::Script, sources.join("\n"))];
    }
    if args::has_short(&opts, 'f') || args::has_long(&opts, "file", 4) {
        return Vec::new();
    }
    match args::operands(&opts).first() {
        Some(program) => vec![Inner::Code(Lang::Script, program.to_string())],
        None => Vec::new(),
    }
}

fn sql_client(args: &[String], letter: char, long: &str, value_letters: &str) -> Vec<Inner> {
    let mut short = value_letters.to_string();
    short.push(letter);
    let longs = [long, "host", "user", "port", "database", "password", "file"];
    let opts = args::parse(args, Spec::new(&short, &longs));
    let code: Vec<Inner> = opts
        .iter()
        .filter_map(|o| match o {
            Opt::Short(c, Some(v)) if *c == letter => Some(*v),
            Opt::Long(name, Some(v)) if *name == long => Some(*v),
            _ => None,
        })
        .map(|v| Inner::Code(Lang::Sql, v.to_string()))
        .collect();
    if code.is_empty() {
        vec![Inner::Stdin(Lang::Sql)]
    } else {
        code
    }
}

/// `sqlite3 [OPTIONS] DB [SQL…]`: options are single-dash words, some with a value.
fn sqlite(args: &[String]) -> Vec<Inner> {
    const WITH_VALUE: &[&str] = &[
        "-cmd",
        "-separator",
        "-newline",
        "-nullvalue",
        "-init",
        "-vfs",
        "-mmap",
        "-pagecache",
        "-lookaside",
        "-maxsize",
        "-heap",
        "-c",
        "-s",
    ];
    let mut out = Vec::new();
    let mut operands = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let arg = args[i].as_str();
        let normalized = arg
            .strip_prefix('-')
            .filter(|a| a.starts_with('-'))
            .unwrap_or(arg);
        if WITH_VALUE.contains(&normalized) {
            if matches!(normalized, "-cmd" | "-c" | "-s")
                && let Some(code) = args.get(i + 1)
            {
                out.push(Inner::Code(Lang::Sql, code.clone()));
            }
            i += 2;
            continue;
        }
        if arg.starts_with('-') && arg.len() > 1 {
            i += 1;
            continue;
        }
        operands.push(arg);
        i += 1;
    }
    for sql in operands.iter().skip(1) {
        out.push(Inner::Code(Lang::Sql, sql.to_string()));
    }
    if out.is_empty() {
        out.push(Inner::Stdin(Lang::Sql));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inner(line: &str) -> Vec<Inner> {
        let argv: Vec<String> = line.split_whitespace().map(str::to_string).collect();
        inners(&argv)
    }

    fn argv(line: &str) -> Inner {
        Inner::Argv(line.split_whitespace().map(str::to_string).collect())
    }

    #[test]
    fn wrappers_hand_on_their_command() {
        assert_eq!(inner("sudo -u root -E rm -rf x"), [argv("rm -rf x")]);
        assert_eq!(inner("env -i A=1 B=2 rm -rf x"), [argv("rm -rf x")]);
        assert_eq!(inner("timeout -s KILL 5 rm -rf x"), [argv("rm -rf x")]);
        assert_eq!(inner("nice -n 10 rm x"), [argv("rm x")]);
        assert_eq!(inner("xargs -0 -I {} rm -rf {}"), [argv("rm -rf {}")]);
        assert_eq!(inner("xargs -n1 rm"), [argv("rm")]);
        assert_eq!(
            inner("find . -name x -exec rm -rf {} ; -execdir ls +"),
            [argv("rm -rf {}"), argv("ls")]
        );
        assert_eq!(
            inner("ip netns exec blue ip -6 route add x"),
            [argv("ip -6 route add x")]
        );
        assert_eq!(
            inner("docker exec -it -u root web rm -rf /x"),
            [argv("rm -rf /x")]
        );
        assert_eq!(
            inner("kubectl -n prod exec api -- rm -rf /x"),
            [argv("rm -rf /x")]
        );
        assert!(inner("command -v rm").is_empty());
    }

    #[test]
    fn interpreters_hand_on_code() {
        assert_eq!(
            inner("bash -lc ls"),
            [Inner::Code(Lang::Shell, "ls".into())]
        );
        assert_eq!(inner("sh"), [Inner::Stdin(Lang::Shell)]);
        assert_eq!(
            inner("bash script.sh"),
            [Inner::File(Lang::Shell, "script.sh".into())]
        );
        assert_eq!(
            inner("ssh -p 22 host -t reboot now"),
            [Inner::Code(Lang::Shell, "reboot now".into())]
        );
        assert_eq!(inner("ssh host"), [Inner::Stdin(Lang::Shell)]);
        assert_eq!(
            inner("python3 -c code"),
            [Inner::Code(Lang::Script, "code".into())]
        );
        assert_eq!(
            inner("perl -i.bak -lne code f"),
            [Inner::Code(Lang::Script, "code".into())]
        );
        // Without code on the command line: the script named first, else standard input.
        assert_eq!(inner("perl"), [Inner::Stdin(Lang::Script)]);
        assert_eq!(inner("perl - App::cpanminus"), [Inner::Stdin(Lang::Script)]);
        assert_eq!(inner("ruby -w"), [Inner::Stdin(Lang::Script)]);
        assert_eq!(
            inner("perl -i -pe code f"),
            [Inner::Code(Lang::Script, "code".into())]
        );
        assert_eq!(inner("ruby -r json"), [Inner::Stdin(Lang::Script)]);
        assert_eq!(
            inner("php -d x=1 -- run.php"),
            [Inner::File(Lang::Script, "run.php".into())]
        );
        assert_eq!(
            inner("perl -w script.pl arg"),
            [Inner::File(Lang::Script, "script.pl".into())]
        );
        assert_eq!(
            inner("psql -U x -c SQL"),
            [Inner::Code(Lang::Sql, "SQL".into())]
        );
        assert_eq!(
            inner("sqlite3 -bail app.db SQL"),
            [Inner::Code(Lang::Sql, "SQL".into())]
        );
        assert_eq!(inner("mysql -u root"), [Inner::Stdin(Lang::Sql)]);
        assert_eq!(
            inner("awk -F : prog file"),
            [Inner::Code(Lang::Script, "prog".into())]
        );
        assert_eq!(
            inner("watch -n 5 kubectl get pods"),
            [Inner::Code(Lang::Shell, "kubectl get pods".into())]
        );
    }
}
