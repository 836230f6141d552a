//! The destructive-command rules, applied to one command's argument vector after the
//! wrappers around it are gone (`sudo`, `env`, … see `runs`).
//!
//! Families, each read with the command's own option
//! syntax — clusters, `--long=value`, abbreviations, global options before the verb — so
//! that another spelling of the same hazard counts and a read-only subcommand does not:
//!
//! - deleting trees: `rm` with `-r`/`-R`/`--recursive` or `-f`/`--force`, `find -delete`,
//!   `rsync --delete…`, `shred`, `rimraf`;
//! - git history and work: `push --force`/`-f`/`--force-with-lease`/`+refspec`/`--delete`/
//!   `--mirror`, `reset --hard`, `clean -f`, `branch -D` or `-d -f`, `checkout -f`/`.`/`-- paths`,
//!   `restore` of the work tree, `switch --discard-changes`, `stash drop|clear`,
//!   `reflog expire`, `gc --prune=now`, `filter-branch`, `update-ref -d`, `rm -f`, `worktree remove -f`;
//! - SQL: `DROP`, `TRUNCATE` (also without `TABLE`), unqualified `DELETE`/`UPDATE`, and
//!   `dropdb`, `mysqladmin drop`, `redis-cli FLUSHALL`;
//! - processes: signal 9 however spelled (`kill -9`, `-KILL`, `-s KILL`, `-SIGKILL`,
//!   `--signal=9`; `pkill`, `killall`);
//! - disks: `mkfs*`, `mkswap`, `wipefs -a`, partitioners, `dd of=<device>`, `tee`/`cp` onto
//!   a raw disk (redirections are judged by the walker), `cryptsetup luksFormat`, `zfs destroy`;
//! - power: `reboot`, `shutdown`, `poweroff`, `halt`, `init 0`, `systemctl reboot`;
//! - services: `systemctl` verbs other than the read-only ones, `service NAME VERB`,
//!   `/etc/init.d/NAME VERB`, `rc-service`, `launchctl`, …;
//! - accounts, host settings and SELinux: `useradd`, `passwd`, `visudo`, …, `hostnamectl
//!   set-*`, `timedatectl set-*`, `hostname NAME`, `date -s`, `sysctl -w`, `setenforce`, …;
//! - firewall and network: `firewall-cmd` changes (not listings), `iptables` commands
//!   (case-sensitive letters), `iptables-restore`, `nft` changes, `ufw` changes,
//!   `nmcli`/`ip` changes with their abbreviations, `ifconfig IF …`, `route add`;
//! - clusters and infrastructure: kubectl/oc mutating verbs (not `rollout status`,
//!   `auth can-i`, `config view`, …), helm install/upgrade/uninstall/rollback, docker
//!   removals and prunes, `terraform destroy|apply`, cloud CLIs' `delete` verbs.

use super::args::{self, Opt, Spec, command_name};
use super::runs::{COMPOSE_GLOBAL, DOCKER_GLOBAL, GIT_GLOBAL, KUBE};
use super::sql;

/// The description of the hazard when `argv` is destructive.
pub fn check(argv: &[String]) -> Option<String> {
    let (first, args) = argv.split_first()?;
    let name = command_name(first);
    let upper = name.to_ascii_uppercase();
    if matches!(
        upper.as_str(),
        "DROP" | "DELETE" | "UPDATE" | "ALTER" | "FLUSHALL" | "FLUSHDB"
    ) && name != "update"
        && name != "delete"
    {
        return sql::check(&argv.join(" "));
    }
    if upper == "TRUNCATE" && !args.iter().any(|a| a.starts_with('-')) {
        return sql::check(&argv.join(" "));
    }
    if upper == "UPDATE" || upper == "DELETE" {
        // Lower-case `update`/`delete` are programs only if they exist; read them as SQL
        // when they look like it.
        if args
            .iter()
            .any(|a| a.eq_ignore_ascii_case("set") || a.eq_ignore_ascii_case("from"))
        {
            return sql::check(&argv.join(" "));
        }
    }
    let init_script = ["/etc/init.d/", "/etc/rc.d/", "/etc/rc.d/init.d/"]
        .iter()
        .any(|dir| first.starts_with(dir));
    let hit = match name {
        _ if init_script => args
            .first()
            .is_some_and(|verb| !matches!(verb.as_str(), "status" | "help" | "configtest")),
        "rm" => rm(args),
        "shred" | "srm" | "wipe" | "rimraf" | "blkdiscard" | "dropdb" | "dropuser" | "mkswap"
        | "mke2fs" | "mkdosfs" | "mkntfs" | "mkexfatfs" | "newfs" | "load_policy"
        | "setenforce" | "setsebool" | "ifup" | "ifdown" | "lvremove" | "vgremove" | "pvremove"
        | "iptables-restore" | "ip6tables-restore" | "ebtables-restore" | "reboot" | "shutdown"
        | "poweroff" | "halt" | "kexec" | "wg-quick" | "visudo" | "useradd" | "userdel"
        | "usermod" | "groupadd" | "groupdel" | "groupmod" | "chpasswd" | "adduser" | "deluser"
        | "addgroup" | "delgroup" | "gpasswd" | "chsh" | "chfn" | "vipw" | "vigr" | "newusers" => {
            !only_help(args) && !visudo_check(name, args)
        }
        _ if name.starts_with("mkfs") => true,
        "passwd" => !args.iter().any(|a| a == "-S" || a == "--status"),
        "chage" => !args.iter().any(|a| a == "-l" || a == "--list"),
        "find" => {
            args.iter().any(|a| a == "-delete")
                || args.windows(2).any(|w| {
                    matches!(w[0].as_str(), "-exec" | "-execdir" | "-ok" | "-okdir")
                        && deletes_files(&w[1])
                })
        }
        // Mass deletion through a file list: `… | xargs rm` deletes whatever it is fed.
        "xargs" => args
            .iter()
            .find(|a| !a.starts_with('-'))
            .is_some_and(|a| deletes_files(a)),
        "tar" | "bsdtar" | "gtar" => args.iter().any(|a| a == "--remove-files"),
        "zip" => args.iter().any(|a| {
            a == "--move" || (a.starts_with('-') && !a.starts_with("--") && a.contains('m'))
        }),
        "rsync" => args
            .iter()
            .any(|a| a.starts_with("--delete") || a == "--remove-source-files"),
        "git" => git(args) || git_hooks_path(args),
        "kill" => kill(args),
        "pkill" | "killall" | "killall5" | "skill" => pkill(args),
        "wipefs" => {
            let opts = args::parse(args, Spec::new("ot", &["offset", "types"]));
            args::has_short(&opts, 'a')
                || args::has_long(&opts, "all", 3)
                || args::has_short(&opts, 'o')
                || args::has_long(&opts, "offset", 3)
        }
        "fdisk" | "gdisk" | "cfdisk" => !args.iter().any(|a| a == "-l" || a == "--list"),
        "sfdisk" => !args.iter().any(|a| {
            matches!(
                a.as_str(),
                "-l" | "--list"
                    | "-d"
                    | "--dump"
                    | "-J"
                    | "--json"
                    | "-s"
                    | "--show-size"
                    | "-g"
                    | "--show-geometry"
                    | "-V"
                    | "--verify"
            )
        }),
        "sgdisk" => !args.iter().all(|a| {
            !a.starts_with('-')
                || matches!(
                    a.as_str(),
                    "-p" | "--print" | "-i" | "--info" | "-v" | "--verify"
                )
        }),
        "parted" => args.iter().any(|a| {
            matches!(
                a.as_str(),
                "mklabel" | "mktable" | "mkpart" | "rm" | "resizepart" | "mkfs" | "rescue"
            )
        }),
        "cryptsetup" => args.iter().any(|a| {
            matches!(
                a.as_str(),
                "luksFormat"
                    | "erase"
                    | "luksErase"
                    | "luksKillSlot"
                    | "luksRemoveKey"
                    | "reencrypt"
            )
        }),
        "zfs" | "zpool" => first_operand_in(args, &["destroy", "rollback", "labelclear"]),
        "mdadm" => args.iter().any(|a| a == "--zero-superblock"),
        "badblocks" => args
            .iter()
            .any(|a| a.starts_with('-') && !a.starts_with("--") && a.contains('w')),
        "dd" => args
            .iter()
            .any(|a| a.strip_prefix("of=").is_some_and(is_device_write_target)),
        "tee" => args
            .iter()
            .filter(|a| !a.starts_with('-'))
            .any(|a| is_raw_disk(a) || system_write(a).is_some()),
        "cp" | "mv" | "install" | "pv" | "ln" => {
            args.iter().rfind(|a| !a.starts_with('-')).is_some_and(|a| {
                is_raw_disk(a) || system_write(a).is_some() || (name == "mv" && a == "/dev/null")
            })
        }
        "chmod" | "chown" | "chgrp" => {
            let recursive = args.iter().any(|a| {
                a == "--recursive"
                    || (a.starts_with('-') && !a.starts_with("--") && a.contains('R'))
            });
            recursive && args.iter().any(|a| is_system_root(a))
        }
        "init" | "telinit" => args.iter().any(|a| !a.starts_with('-')),
        "systemctl" => systemctl(args),
        "loginctl" => first_operand_in(
            args,
            &[
                "reboot",
                "poweroff",
                "halt",
                "suspend",
                "hibernate",
                "terminate-session",
                "terminate-user",
                "terminate-seat",
                "kill-session",
                "kill-user",
                "lock-sessions",
            ],
        ),
        "service" => service(args),
        "rc-service" => args
            .iter()
            .filter(|a| !a.starts_with('-'))
            .nth(1)
            .is_some_and(|v| v != "status"),
        "update-rc.d" | "rc-update" => operands_of(args).len() >= 2,
        "chkconfig" => args
            .iter()
            .any(|a| matches!(a.as_str(), "on" | "off" | "reset" | "--add" | "--del")),
        "launchctl" => first_operand_in(
            args,
            &[
                "load",
                "unload",
                "stop",
                "start",
                "kickstart",
                "bootout",
                "bootstrap",
                "enable",
                "disable",
                "remove",
                "kill",
                "reboot",
            ],
        ),
        "initctl" | "supervisorctl" => first_operand_in(
            args,
            &[
                "start", "stop", "restart", "reload", "shutdown", "remove", "emit",
            ],
        ),
        "hostnamectl" => {
            let ops = operands_of(args);
            ops.first().is_some_and(|v| v.starts_with("set-"))
                || (ops.first() == Some(&"hostname") && ops.len() > 1)
        }
        "timedatectl" | "localectl" => operands_of(args)
            .first()
            .is_some_and(|v| v.starts_with("set-")),
        "hostname" => hostname(args),
        "date" => date(args),
        "hwclock" => args.iter().any(|a| {
            matches!(
                a.as_str(),
                "-w" | "--systohc" | "--set" | "-s" | "--hctosys" | "--adjust" | "--systz"
            )
        }),
        "sysctl" => args.iter().any(|a| {
            matches!(a.as_str(), "-w" | "--write" | "-p" | "--load" | "--system")
                || a.starts_with("--load=")
                || (!a.starts_with('-') && a.contains('='))
        }),
        "semanage" => args.iter().any(|a| {
            matches!(
                a.as_str(),
                "-a" | "-d"
                    | "-m"
                    | "-D"
                    | "-C"
                    | "--add"
                    | "--delete"
                    | "--modify"
                    | "--deleteall"
            ) || a == "import"
        }),
        "semodule" => args.iter().any(|a| {
            let short = a.starts_with('-') && !a.starts_with("--");
            (short && a.chars().skip(1).any(|c| "irdeBRX".contains(c)))
                || matches!(
                    a.as_str(),
                    "--install" | "--remove" | "--disable" | "--enable" | "--build" | "--reload"
                )
        }),
        "firewall-cmd" | "firewall-offline-cmd" => firewall(args),
        "iptables" | "ip6tables" | "iptables-legacy" | "ip6tables-legacy" | "iptables-nft"
        | "ip6tables-nft" | "ebtables" | "arptables" => iptables(args),
        "nft" => nft(args),
        "ufw" => first_operand_in(
            args,
            &[
                "enable", "disable", "reload", "reset", "default", "logging", "allow", "deny",
                "reject", "limit", "delete", "insert", "prepend", "route",
            ],
        ),
        "pfctl" => args.iter().any(|a| {
            a.starts_with('-')
                && !a.starts_with("--")
                && a.chars().skip(1).any(|c| "FfdekK".contains(c))
        }),
        "nmcli" => nmcli(args),
        "ip" => ip(args),
        "ifconfig" => operands_of(args).len() >= 2,
        "route" => first_operand_in(
            args,
            &[
                "add", "del", "delete", "flush", "change", "replace", "append",
            ],
        ),
        "netplan" => first_operand_in(args, &["apply", "try"]),
        "brctl" => operands_of(args)
            .first()
            .is_some_and(|v| !matches!(*v, "show" | "showmacs" | "showstp")),
        "tc" => operands_of(args).get(1).is_some_and(|v| {
            matches!(*v, "add" | "del" | "delete" | "change" | "replace" | "link")
        }),
        "wg" => first_operand_in(args, &["set", "setconf", "addconf", "syncconf"]),
        "kubectl" | "oc" => kube(args),
        "helm" => helm(args),
        "minikube" | "kind" | "eksctl" | "k3d" => {
            operands_of(args).iter().take(2).any(|v| *v == "delete")
        }
        "docker" | "podman" | "nerdctl" => docker(args),
        "docker-compose" | "podman-compose" => compose(args),
        "terraform" | "tofu" | "terragrunt" => terraform(args),
        "pulumi" => {
            let ops = operands_of(args);
            matches!(ops.first(), Some(&("destroy" | "up" | "update")))
                || (ops.first() == Some(&"stack") && ops.get(1) == Some(&"rm"))
        }
        "aws" => aws(args),
        "gcloud" | "az" | "doctl" | "gh" | "hcloud" | "linode-cli" | "vultr-cli" | "glab" => {
            cloud_delete(args)
        }
        "heroku" => first_operand_in(
            args,
            &["apps:destroy", "destroy", "pg:reset", "apps:delete"],
        ),
        "mysqladmin" => args.iter().any(|a| a.eq_ignore_ascii_case("drop")),
        "redis-cli" | "valkey-cli" | "keydb-cli" => args
            .iter()
            .any(|a| a.eq_ignore_ascii_case("flushall") || a.eq_ignore_ascii_case("flushdb")),
        "crontab" => args.iter().any(|a| a == "-r" || a == "--remove"),
        // PowerShell's `-Recurse` (any abbreviation) and cmd.exe's `/s`.
        "Remove-Item" | "ri" | "rmdir" | "del" | "erase" | "rd" => args.iter().any(|a| {
            (a.len() >= 3 && "-recurse".starts_with(&a.to_ascii_lowercase()))
                || a.eq_ignore_ascii_case("/s")
        }),
        _ => false,
    };
    hit.then(|| shown(argv))
}

/// The command as shown in a reason: words joined, cut to 100 characters.
pub fn shown(argv: &[String]) -> String {
    let joined = argv
        .iter()
        .map(|w| {
            if w.is_empty() || w.contains(char::is_whitespace) {
                format!("'{w}'")
            } else {
                w.clone()
            }
        })
        .collect::<Vec<_>>()
        .join(" ");
    sql::shorten(&joined)
}

fn only_help(args: &[String]) -> bool {
    !args.is_empty()
        && args
            .iter()
            .all(|a| matches!(a.as_str(), "--help" | "-h" | "--version" | "-V"))
}

/// `visudo -c` only checks the file.
fn visudo_check(name: &str, args: &[String]) -> bool {
    name == "visudo" && args.iter().any(|a| a == "-c" || a == "--check")
}

fn operands_of(args: &[String]) -> Vec<&str> {
    args.iter()
        .map(String::as_str)
        .filter(|a| !a.starts_with('-'))
        .collect()
}

fn first_operand_in(args: &[String], verbs: &[&str]) -> bool {
    operands_of(args).first().is_some_and(|v| verbs.contains(v))
}

/// Raw disks: whole devices and partitions a write would destroy.
pub fn is_raw_disk(path: &str) -> bool {
    const PREFIXES: &[&str] = &[
        "/dev/sd",
        "/dev/nvme",
        "/dev/vd",
        "/dev/hd",
        "/dev/mmcblk",
        "/dev/xvd",
        "/dev/disk",
        "/dev/rdisk",
        "/dev/mapper/",
        "/dev/md",
        "/dev/dm-",
        "/dev/loop",
        "/dev/nbd",
        "/dev/zd",
        "/dev/sg",
        "/dev/root",
    ];
    PREFIXES.iter().any(|p| path.starts_with(p))
}

/// A file whose change alters accounts, privileges or the kernel: what a write there
/// amounts to.
pub fn system_write(path: &str) -> Option<&'static str> {
    const ACCOUNTS: &[&str] = &[
        "/etc/sudoers",
        "/etc/passwd",
        "/etc/shadow",
        "/etc/group",
        "/etc/gshadow",
    ];
    if ACCOUNTS.contains(&path) || path.starts_with("/etc/sudoers.d/") {
        Some("account change")
    } else if path.starts_with("/proc/sys/") || path == "/proc/sysrq-trigger" {
        Some("kernel setting")
    } else {
        None
    }
}

/// `/` and the top-level system directories (a recursive permission change there breaks
/// the system).
fn is_system_root(path: &str) -> bool {
    const ROOTS: &[&str] = &[
        "/", "/*", "/etc", "/usr", "/var", "/bin", "/sbin", "/lib", "/lib64", "/boot", "/root",
        "/sys", "/proc", "/dev", "/home", "/opt", "/srv",
    ];
    let trimmed = if path.len() > 1 {
        path.trim_end_matches('/')
    } else {
        path
    };
    ROOTS.contains(&trimmed)
}

/// `dd of=`: any device but the harmless character devices.
fn is_device_write_target(path: &str) -> bool {
    const HARMLESS: &[&str] = &[
        "/dev/null",
        "/dev/zero",
        "/dev/stdout",
        "/dev/stderr",
        "/dev/tty",
        "/dev/full",
        "/dev/random",
        "/dev/urandom",
    ];
    path.starts_with("/dev/")
        && !HARMLESS.contains(&path)
        && !path.starts_with("/dev/fd/")
        && !path.starts_with("/dev/pts/")
        && !path.starts_with("/dev/shm/")
}

/// Whether a command word deletes the files it is given.
fn deletes_files(word: &str) -> bool {
    matches!(
        command_name(word),
        "rm" | "unlink" | "shred" | "srm" | "rmdir"
    )
}

fn rm(args: &[String]) -> bool {
    let opts = args::parse(args, Spec::default());
    args::has_short(&opts, 'r')
        || args::has_short(&opts, 'R')
        || args::has_short(&opts, 'f')
        || args::has_long(&opts, "recursive", 3)
        || args::has_long(&opts, "force", 3)
        || args::has_long(&opts, "no-preserve-root", 4)
}

/// `git config core.hooksPath DIR` / `git -c core.hooksPath=DIR`: every later git
/// command runs the hooks found there, code nobody has judged.
fn git_hooks_path(args: &[String]) -> bool {
    let lower: Vec<String> = args.iter().map(|a| a.to_ascii_lowercase()).collect();
    let config = lower
        .iter()
        .position(|a| a == "config")
        .is_some_and(|k| lower[k + 1..].iter().any(|a| a == "core.hookspath"));
    config || lower.iter().any(|a| a.starts_with("core.hookspath="))
}

fn git(args: &[String]) -> bool {
    let Some(verb_at) = args::first_operand(args, GIT_GLOBAL) else {
        return false;
    };
    let rest = &args[verb_at + 1..];
    let short = |opts: &[Opt], c| args::has_short(opts, c);
    let long = |opts: &[Opt], name| args::has_long(opts, name, 3);
    match args[verb_at].as_str() {
        "push" => {
            let opts = args::parse(
                rest,
                Spec::new("o", &["repo", "receive-pack", "exec", "push-option"]),
            );
            short(&opts, 'f')
                || short(&opts, 'd')
                || long(&opts, "force")
                || opts.iter().any(|o| {
                    matches!(o, Opt::Long(name, _) if name.starts_with("force-with-lease")
                        || name.starts_with("force-if-includes"))
                })
                || long(&opts, "delete")
                || long(&opts, "mirror")
                || long(&opts, "prune")
                || args::operands(&opts)
                    .iter()
                    .skip(1)
                    .any(|r| r.starts_with('+') || (r.starts_with(':') && r.len() > 1))
        }
        "reset" => {
            let opts = args::parse(rest, Spec::default());
            long(&opts, "hard") || opts.iter().any(|o| matches!(o, Opt::Long("ha", _)))
        }
        "clean" => {
            let opts = args::parse(rest, Spec::new("e", &["exclude"]));
            short(&opts, 'f') || long(&opts, "force")
        }
        "branch" => {
            let opts = args::parse(
                rest,
                Spec::new(
                    "tu",
                    &[
                        "set-upstream-to",
                        "contains",
                        "merged",
                        "no-merged",
                        "points-at",
                        "sort",
                        "format",
                    ],
                ),
            );
            let delete = short(&opts, 'd') || long(&opts, "delete");
            let force = short(&opts, 'f') || long(&opts, "force");
            short(&opts, 'D') || (delete && force)
        }
        "checkout" => {
            let opts = args::parse(rest, Spec::new("bB", &["orphan", "conflict"]));
            let dashed = rest.iter().any(|a| a == "--");
            short(&opts, 'f')
                || long(&opts, "force")
                || (dashed && rest.iter().skip_while(|a| *a != "--").nth(1).is_some())
                || args::operands(&opts)
                    .iter()
                    .any(|p| matches!(*p, "." | "*" | ":/"))
        }
        "restore" => {
            let opts = args::parse(rest, Spec::new("s", &["source"]));
            let staged_only = (short(&opts, 'S') || long(&opts, "staged"))
                && !(short(&opts, 'W') || long(&opts, "worktree"));
            !staged_only && !args::operands(&opts).is_empty()
        }
        "switch" => {
            let opts = args::parse(rest, Spec::new("cC", &["create", "force-create", "orphan"]));
            short(&opts, 'f') || long(&opts, "force") || long(&opts, "discard-changes")
        }
        "stash" => matches!(rest.first().map(String::as_str), Some("drop" | "clear")),
        "reflog" => matches!(rest.first().map(String::as_str), Some("expire" | "delete")),
        "gc" => rest
            .iter()
            .any(|a| a == "--prune=now" || a == "--prune=all"),
        "filter-branch" | "filter-repo" => true,
        "update-ref" => rest.iter().any(|a| a == "-d" || a == "--delete"),
        "rm" => {
            let opts = args::parse(rest, Spec::default());
            (short(&opts, 'f') || long(&opts, "force")) && !long(&opts, "cached")
        }
        "worktree" => {
            rest.first().map(String::as_str) == Some("remove")
                && rest.iter().any(|a| a == "-f" || a == "--force")
        }
        _ => false,
    }
}

fn is_kill_signal(signal: &str) -> bool {
    let upper = signal.to_ascii_uppercase();
    matches!(upper.as_str(), "9" | "KILL" | "SIGKILL")
}

/// `kill -9`, `-KILL`, `-SIGKILL`, `-s KILL`, `-s 9`, `-n 9`, `--signal KILL`.
fn kill(args: &[String]) -> bool {
    let mut i = 0;
    while i < args.len() {
        let arg = args[i].as_str();
        if arg == "--" {
            return false;
        }
        if matches!(arg, "-s" | "-n" | "--signal") {
            if args.get(i + 1).is_some_and(|s| is_kill_signal(s)) {
                return true;
            }
            i += 2;
            continue;
        }
        if let Some(value) = arg.strip_prefix("--signal=") {
            return is_kill_signal(value);
        }
        if let Some(signal) = arg.strip_prefix('-')
            && is_kill_signal(signal)
        {
            return true;
        }
        if !arg.starts_with('-') {
            return false;
        }
        i += 1;
    }
    false
}

/// `pkill -9`, `pkill -KILL`, `pkill --signal 9`, `killall -s KILL`.
fn pkill(args: &[String]) -> bool {
    for (i, arg) in args.iter().enumerate() {
        if let Some(value) = arg.strip_prefix("--signal=") {
            return is_kill_signal(value);
        }
        if arg == "--signal" || arg == "-s" {
            // pkill's `-s` is a session id; killall's is a signal.
            if args.get(i + 1).is_some_and(|s| is_kill_signal(s)) {
                return true;
            }
            continue;
        }
        if let Some(signal) = arg.strip_prefix('-')
            && is_kill_signal(signal)
        {
            return true;
        }
    }
    false
}

/// systemctl: anything but the read-only verbs (and no verb at all, which lists units).
fn systemctl(args: &[String]) -> bool {
    const WITH_VALUE: Spec = Spec::new(
        "tpPsHMnoT",
        &[
            "type",
            "property",
            "signal",
            "host",
            "machine",
            "lines",
            "output",
            "state",
            "job-mode",
            "root",
            "kill-whom",
            "kill-value",
            "what",
            "reboot-argument",
            "message",
            "timestamp",
            "when",
            "image",
            "image-policy",
            "drop-in",
            "preset-mode",
            "check-inhibitors",
            "boot-loader-entry",
            "boot-loader-menu",
        ],
    );
    const READ_ONLY: &[&str] = &[
        "status",
        "show",
        "cat",
        "help",
        "list-units",
        "list-unit-files",
        "list-sockets",
        "list-timers",
        "list-jobs",
        "list-dependencies",
        "list-machines",
        "list-automounts",
        "list-paths",
        "is-active",
        "is-enabled",
        "is-failed",
        "is-system-running",
        "get-default",
        "show-environment",
        "whoami",
    ];
    let opts = args::parse(args, WITH_VALUE);
    match args::operands(&opts).first() {
        Some(verb) => !READ_ONLY.contains(verb),
        None => false,
    }
}

/// `service NAME VERB` (not `status`), `service --status-all` is read-only.
fn service(args: &[String]) -> bool {
    let ops = operands_of(args);
    match ops.get(1) {
        Some(verb) => !matches!(*verb, "status" | "--status-all" | "help" | "configtest"),
        None => false,
    }
}

/// `hostname NAME` and `hostname -F FILE` set the host name.
fn hostname(args: &[String]) -> bool {
    args.iter()
        .any(|a| !a.starts_with('-') || matches!(a.as_str(), "-F" | "--file" | "-b" | "--boot"))
}

/// `date -s …`, `date --set=…`, and `date MMDDhhmm…` set the clock.
fn date(args: &[String]) -> bool {
    let opts = args::parse(
        args,
        Spec::new("dfrs", &["date", "file", "reference", "set"]),
    );
    args::has_short(&opts, 's')
        || args::has_long(&opts, "set", 3)
        || args::operands(&opts).iter().any(|o| !o.starts_with('+'))
}

fn firewall(args: &[String]) -> bool {
    const CHANGES: &[&str] = &[
        "--add-",
        "--remove-",
        "--change-",
        "--set-",
        "--new-",
        "--delete-",
        "--reload",
        "--complete-reload",
        "--panic-on",
        "--panic-off",
        "--runtime-to-permanent",
        "--lockdown-on",
        "--lockdown-off",
        "--reset-to-defaults",
        "--load-",
    ];
    args.iter()
        .any(|a| CHANGES.iter().any(|c| a.starts_with(c)))
}

/// iptables commands are capital letters (`-A`, `-D`, `-I`, `-R`, `-F`, `-X`, `-P`, `-Z`,
/// `-N`, `-E`) or their long names; listing (`-L`, `-S`, `-C`) is read-only.
fn iptables(args: &[String]) -> bool {
    const LONG: &[&str] = &[
        "--append",
        "--delete",
        "--insert",
        "--replace",
        "--flush",
        "--delete-chain",
        "--policy",
        "--zero",
        "--new-chain",
        "--new",
        "--rename-chain",
    ];
    let mut i = 0;
    while i < args.len() {
        let arg = args[i].as_str();
        if LONG.contains(&arg) {
            return true;
        }
        if arg.starts_with('-') && !arg.starts_with("--") {
            for c in arg.chars().skip(1) {
                if "ADIRFXPZNE".contains(c) {
                    return true;
                }
                // Options with a value: the rest of the word, or the next one, is data.
                if "tjspdiomgf".contains(c) {
                    break;
                }
            }
        }
        i += 1;
    }
    false
}

fn nft(args: &[String]) -> bool {
    let opts = args::parse_posix(args, Spec::new("fIDT", &["file", "includepath", "define"]));
    if args::has_short(&opts, 'f') || args::has_long(&opts, "file", 4) {
        return true;
    }
    first_operand_in_opts(
        &opts,
        &[
            "add", "delete", "destroy", "flush", "insert", "replace", "create", "reset", "rename",
        ],
    )
}

fn first_operand_in_opts(opts: &[Opt], verbs: &[&str]) -> bool {
    args::operands(opts)
        .first()
        .is_some_and(|v| verbs.contains(v))
}

/// Resolves an abbreviation the way iproute2 and nmcli do: the first entry of `table`
/// (in the tool's own order) that starts with `word`.
fn resolve<'a>(word: &str, table: &[&'a str]) -> Option<&'a str> {
    if word.is_empty() {
        return None;
    }
    table.iter().find(|entry| entry.starts_with(word)).copied()
}

fn nmcli(args: &[String]) -> bool {
    const OBJECTS: &[&str] = &[
        "general",
        "networking",
        "radio",
        "connection",
        "device",
        "agent",
        "monitor",
    ];
    let opts = args::parse_posix(
        args,
        Spec::new(
            "mfgecw",
            &["mode", "fields", "get-values", "escape", "colors", "wait"],
        ),
    );
    let ops = args::operands(&opts);
    let Some(object) = ops.first().and_then(|o| resolve(o, OBJECTS)) else {
        return false;
    };
    let action = ops.get(1).copied().unwrap_or("");
    match object {
        "connection" => {
            const ACTIONS: &[&str] = &[
                "show", "up", "down", "add", "modify", "clone", "edit", "delete", "monitor",
                "reload", "load", "import", "export", "migrate",
            ];
            !matches!(
                resolve(action, ACTIONS),
                None | Some("show" | "monitor" | "export")
            )
        }
        "device" => {
            const ACTIONS: &[&str] = &[
                "status",
                "show",
                "set",
                "up",
                "connect",
                "reapply",
                "modify",
                "down",
                "disconnect",
                "delete",
                "monitor",
                "wifi",
                "lldp",
            ];
            match resolve(action, ACTIONS) {
                None | Some("status" | "show" | "monitor" | "lldp") => false,
                Some("wifi") => {
                    let sub = ops.get(2).copied().unwrap_or("");
                    matches!(
                        resolve(
                            sub,
                            &["list", "connect", "rescan", "hotspot", "show-password"]
                        ),
                        Some("connect" | "hotspot")
                    )
                }
                Some(_) => true,
            }
        }
        "radio" => ops.len() >= 3,
        "networking" => matches!(action, "on" | "off"),
        "general" => {
            matches!(
                resolve(
                    action,
                    &["status", "hostname", "permissions", "logging", "reload"]
                ),
                Some("hostname" | "logging" | "reload")
            ) && (ops.len() >= 3 || action.starts_with('r'))
        }
        _ => false,
    }
}

/// `ip [options] OBJECT ACTION …` with iproute2's abbreviations.
fn ip(args: &[String]) -> bool {
    const OBJECTS: &[&str] = &[
        "address",
        "addrlabel",
        "maddress",
        "route",
        "rule",
        "neighbor",
        "neighbour",
        "ntable",
        "ntbl",
        "link",
        "l2tp",
        "fou",
        "ila",
        "macsec",
        "tunnel",
        "tuntap",
        "tap",
        "token",
        "tcpmetrics",
        "tcp_metrics",
        "monitor",
        "xfrm",
        "mroute",
        "mrule",
        "netns",
        "netconf",
        "vrf",
        "sr",
        "nexthop",
        "mptcp",
        "ioam",
        "stats",
    ];
    const ACTIONS: &[&str] = &[
        "add", "change", "chg", "replace", "delete", "del", "list", "lst", "show", "flush", "get",
        "save", "restore", "showdump", "set", "append", "prepend", "test", "exec", "identify",
        "pids", "monitor", "attach", "help",
    ];
    const READ_ONLY: &[&str] = &[
        "list", "lst", "show", "get", "save", "showdump", "test", "exec", "identify", "pids",
        "monitor", "help",
    ];
    let mut i = 0;
    while i < args.len() {
        let arg = args[i].as_str();
        if !arg.starts_with('-') {
            break;
        }
        let bare = arg.trim_start_matches('-');
        if matches!(bare, "b" | "batch") {
            return true;
        }
        i += if matches!(
            bare,
            "n" | "netns" | "f" | "family" | "rc" | "rcvbuf" | "l" | "loops"
        ) {
            2
        } else {
            1
        };
    }
    let Some(object) = args.get(i).and_then(|o| resolve(o, OBJECTS)) else {
        return false;
    };
    if matches!(object, "monitor" | "stats") {
        return false;
    }
    let Some(action) = args.get(i + 1) else {
        return false;
    };
    // iproute2 tries `set` before `show` for links: `ip l s eth0 up` sets.
    const LINK_ACTIONS: &[&str] = &[
        "add", "set", "change", "replace", "delete", "show", "lst", "list", "xstats", "afstats",
        "property", "help",
    ];
    if object == "link" && action == "property" {
        return true;
    }
    let table = if object == "link" {
        LINK_ACTIONS
    } else {
        ACTIONS
    };
    match resolve(action, table) {
        Some(action) => !READ_ONLY.contains(&action),
        // `ip link eth0`-style shorthands read.
        None => false,
    }
}

fn kube(args: &[String]) -> bool {
    const ALWAYS: &[&str] = &[
        "create",
        "delete",
        "replace",
        "patch",
        "scale",
        "annotate",
        "label",
        "expose",
        "set",
        "exec",
        "rsh",
        "rsync",
        "debug",
        "cp",
        "edit",
        "drain",
        "cordon",
        "uncordon",
        "taint",
        "autoscale",
        "run",
        "new-app",
        "new-project",
        "new-build",
        "start-build",
        "cancel-build",
        "rollback",
        "tag",
        "import-image",
        "policy",
    ];
    let opts = args::parse(args, KUBE);
    let ops = args::operands(&opts);
    let Some(verb) = ops.first().copied() else {
        return false;
    };
    let sub = ops.get(1).copied().unwrap_or("");
    match verb {
        "apply" => sub != "view-last-applied",
        "rollout" => !matches!(sub, "status" | "history"),
        "config" => matches!(
            sub,
            "set"
                | "set-context"
                | "set-cluster"
                | "set-credentials"
                | "use-context"
                | "use"
                | "delete-context"
                | "delete-cluster"
                | "delete-user"
                | "rename-context"
                | "unset"
        ),
        "adm" => {
            let read_only = matches!(
                sub,
                "top" | "inspect" | "must-gather" | "node-logs" | "" | "verify-image-signature"
            ) || (sub == "release" && ops.get(2) == Some(&"info"));
            !read_only
        }
        "auth" => sub == "reconcile",
        "certificate" => matches!(sub, "approve" | "deny"),
        "project" => ops.len() > 1,
        _ => ALWAYS.contains(&verb),
    }
}

fn helm(args: &[String]) -> bool {
    let spec = Spec::new(
        "n",
        &[
            "namespace",
            "kube-context",
            "kubeconfig",
            "registry-config",
            "repository-cache",
            "repository-config",
            "burst-limit",
            "qps",
            "kube-apiserver",
            "kube-as-user",
            "kube-as-group",
            "kube-ca-file",
            "kube-tls-server-name",
            "kube-token",
            "set",
            "set-string",
            "values",
            "version",
            "timeout",
        ],
    );
    let opts = args::parse(args, spec);
    matches!(
        args::operands(&opts).first(),
        Some(&("install" | "upgrade" | "uninstall" | "un" | "del" | "delete" | "rollback"))
    )
}

fn docker(args: &[String]) -> bool {
    let Some(verb_at) = args::first_operand(args, DOCKER_GLOBAL) else {
        return false;
    };
    let rest = &args[verb_at + 1..];
    let sub = operands_of(rest).first().copied().unwrap_or("");
    match args[verb_at].as_str() {
        "rm" | "rmi" => true,
        "system" | "builder" | "buildx" => sub == "prune",
        "container" | "image" | "volume" | "network" => matches!(sub, "rm" | "prune"),
        "compose" => compose(rest),
        _ => false,
    }
}

fn compose(args: &[String]) -> bool {
    let Some(verb_at) = args::first_operand(args, COMPOSE_GLOBAL) else {
        return false;
    };
    let rest = &args[verb_at + 1..];
    match args[verb_at].as_str() {
        "down" => rest
            .iter()
            .any(|a| a == "-v" || a == "--volumes" || a.starts_with("--rmi")),
        "rm" => true,
        _ => false,
    }
}

fn terraform(args: &[String]) -> bool {
    let ops = operands_of(args);
    match ops.first().copied() {
        Some("destroy" | "apply") => true,
        Some("state") => ops.get(1) == Some(&"rm"),
        Some("workspace") => ops.get(1) == Some(&"delete"),
        _ => false,
    }
}

fn aws(args: &[String]) -> bool {
    let spec = Spec::new(
        "",
        &[
            "profile",
            "region",
            "output",
            "endpoint-url",
            "query",
            "color",
            "ca-bundle",
            "cli-read-timeout",
            "cli-connect-timeout",
        ],
    );
    let opts = args::parse(args, spec);
    let ops = args::operands(&opts);
    let (Some(service), Some(op)) = (ops.first(), ops.get(1)) else {
        return false;
    };
    match (*service, *op) {
        ("s3", "rb") => true,
        ("s3", "rm") => args::has_long(&opts, "recursive", 4),
        ("s3", "sync") => args::has_long(&opts, "delete", 4),
        (_, op) => op.starts_with("delete-") || op.starts_with("terminate-"),
    }
}

/// Cloud CLIs: a `delete`/`destroy` word among the first command words.
fn cloud_delete(args: &[String]) -> bool {
    let mut previous_is_option = false;
    let mut seen = 0;
    for arg in args {
        if arg.starts_with('-') {
            previous_is_option = !arg.contains('=');
            continue;
        }
        if !previous_is_option {
            if matches!(arg.as_str(), "delete" | "destroy") {
                return true;
            }
            seen += 1;
            if seen >= 4 {
                return false;
            }
        }
        previous_is_option = false;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hit(line: &str) -> bool {
        let argv: Vec<String> = line.split_whitespace().map(str::to_string).collect();
        check(&argv).is_some()
    }

    #[test]
    fn option_syntax_is_read() {
        assert!(hit("rm -fr x"));
        assert!(hit("rm -i -r x"));
        assert!(hit("rm --rec x"));
        assert!(!hit("rm x"));
        assert!(hit("git -C repo push -fu origin main"));
        assert!(hit("git push origin +main"));
        assert!(!hit("git push -u origin main"));
        assert!(hit("git reset --har"));
        assert!(hit("git branch -d -f x"));
        assert!(!hit("git branch -d x"));
        assert!(hit("kill -s KILL 1"));
        assert!(hit("kill -SIGKILL 1"));
        assert!(!hit("kill -15 1"));
        assert!(hit("pkill -9 node"));
        assert!(!hit("pkill -f node"));
        assert!(hit("killall -s KILL node"));
    }

    #[test]
    fn read_only_subcommands() {
        assert!(!hit("kubectl rollout status deploy/x"));
        assert!(hit("kubectl -n prod --context c delete pod x"));
        assert!(!hit("kubectl auth can-i delete pods"));
        assert!(!hit("helm diff upgrade x ./c"));
        assert!(hit("helm -n x upgrade --install x ./c"));
        assert!(!hit("firewall-cmd --permanent --list-all"));
        assert!(!hit("ip route get 1.1.1.1"));
        assert!(hit("ip r add 10.0.0.0/8 via 10.1.1.1"));
        assert!(hit("ip a flush dev eth0"));
        assert!(hit("ip -6 route add ::/0 via fe80::1"));
        assert!(!hit("ip -br a"));
        assert!(hit("systemctl -q -H host --user restart x"));
        assert!(!hit("systemctl --failed"));
        assert!(!hit("iptables -L -n -x"));
        assert!(!hit("iptables -S -p tcp"));
        assert!(hit("iptables -t nat -A POSTROUTING -j MASQUERADE"));
        assert!(hit("nmcli c down eth0"));
        assert!(!hit("nmcli d s"));
    }
}
