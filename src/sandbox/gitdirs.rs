//! Which git paths of a project the sandbox protects, and the ones it must keep from
//! appearing: everything git reads that could make a later `git` run by the user (outside
//! the sandbox) execute code or read another repository's configuration.
//!
//! The repository is the one git itself would find from `--dir`: `<dir>/.git`, or else the
//! nearest ancestor's `.git` (a project that is a subdirectory of a checkout, whose git
//! directory may lie in a writable `/tmp`). Its `.git` is either
//! - a directory: anchored (a mount point of its own, so it cannot be renamed or removed);
//! - a file (`gitdir: <path>`, a linked worktree or a submodule): bound read-only, so it
//!   cannot be pointed at a planted git directory; the directory it names is protected.
//!
//! In a full git directory (the main one, the common one of a linked worktree, every
//! `modules/*` below it, nested modules included): `config` and `hooks/` (created empty
//! when missing) are read-only; `commondir` (which would redirect config and hooks
//! elsewhere) is read-only when present and otherwise must stay absent; the `.git` file of
//! the work tree its `core.worktree` names (a submodule's) is read-only. In a linked
//! worktree's own directory (`worktrees/*`, or the one a `.git` file names): `commondir`
//! and `config.worktree` are read-only when present; `config.worktree` must stay absent
//! only where the common config enables `extensions.worktreeConfig`.
//!
//! A path that must stay absent cannot be bound (mounts need an existing target):
//! [`Layout::absent`] lists them and the plan removes any the command created as soon as
//! it ends (`Plan::sweep`). Likewise where `--dir` has no `.git` of its own: one the
//! command creates there ([`Layout::fresh`]) is protected from the next call on, and
//! what it planted in it during this one (hooks that are not samples, a `commondir`,
//! config settings other than the few `git init`, `clone` and `remote add` write, read
//! as git reads them) is removed ([`sweep_fresh`]), links removed rather than followed.
//! A git directory the command adds under `modules/` or `worktrees/` is swept the same
//! way when the call ends ([`sweep_new`]).

use std::path::{Path, PathBuf};

/// What the plan does with a project's git paths.
#[derive(Debug, Default)]
pub(crate) struct Layout {
    /// Directories made mount points of their own.
    pub anchors: Vec<PathBuf>,
    /// Files and directories bound read-only.
    pub protected: Vec<PathBuf>,
    /// Paths that do not exist and must not be created.
    pub absent: Vec<PathBuf>,
    /// Where `--dir` has no `.git`: the one a command could create there.
    pub fresh: Option<PathBuf>,
    /// The `modules` and `worktrees` folders of the git directories, with what they held:
    /// a git directory the command adds there is not protected during the call, so what
    /// it planted in it is removed when it ends ([`sweep_new`]).
    pub watched: Vec<Watched>,
}

/// A `modules` or `worktrees` folder and the entries it had before the call.
#[derive(Debug)]
pub(crate) struct Watched {
    folder: PathBuf,
    known: Vec<std::ffi::OsString>,
    worktrees: bool,
}

impl Watched {
    fn new(folder: PathBuf, worktrees: bool) -> Watched {
        let known = std::fs::read_dir(&folder)
            .map(|entries| entries.flatten().map(|e| e.file_name()).collect())
            .unwrap_or_default();
        Watched {
            folder,
            known,
            worktrees,
        }
    }
}

/// After a call: in each watched folder, the git directories that were not there before
/// are swept as a new repository's ([`sweep_fresh`]), the linked worktrees' as a new
/// worktree's (their `commondir` leads back). Returns what was removed or rewritten.
pub(crate) fn sweep_new(watched: &[Watched]) -> Vec<PathBuf> {
    let mut removed = Vec::new();
    for w in watched {
        if let Err(gone) = real_dir(&w.folder) {
            removed.extend(gone);
            continue;
        }
        let Ok(entries) = std::fs::read_dir(&w.folder) else {
            continue;
        };
        for entry in entries.flatten() {
            if w.known.contains(&entry.file_name()) {
                continue;
            }
            removed.extend(if w.worktrees {
                sweep_new_worktree(&entry.path())
            } else {
                sweep_git_dir(&entry.path(), MODULE_DEPTH)
            });
        }
    }
    removed
}

/// How deep `modules/*/modules/*` nesting is followed.
const MODULE_DEPTH: usize = 4;

/// The `.git` entry git would use for `dir`: its own, else the nearest ancestor's.
fn dot_git(dir: &Path) -> Option<PathBuf> {
    dir.ancestors()
        .map(|a| a.join(".git"))
        .find(|p| std::fs::symlink_metadata(p).is_ok())
}

/// The directory a `.git` file or a `commondir` file names, relative to `base`.
fn named_by(file: &Path, prefix: &str, base: &Path) -> Option<PathBuf> {
    let text = std::fs::read_to_string(file).ok()?;
    let target = text.trim();
    let target = if prefix.is_empty() {
        target
    } else {
        target.strip_prefix(prefix)?.trim()
    };
    (!target.is_empty()).then(|| base.join(target))
}

/// The layout for the project in `dir` (module doc).
pub(crate) fn layout(dir: &Path) -> Layout {
    let mut out = Layout::default();
    let own = dir.join(".git");
    if std::fs::symlink_metadata(&own).is_err() {
        // A repository the command creates (nested in a checkout or not).
        out.fresh = Some(own);
    }
    let Some(entry) = dot_git(dir) else {
        return out;
    };
    let Ok(meta) = std::fs::symlink_metadata(&entry) else {
        return out;
    };
    let mut full = Vec::new();
    if meta.is_dir() {
        full.push(entry);
    } else {
        out.protected.push(entry.clone());
        let base = entry.parent().unwrap_or(dir).to_path_buf();
        if let Some(real) = named_by(&entry, "gitdir:", &base) {
            match named_by(&real.join("commondir"), "", &real) {
                Some(common) => {
                    full.push(common);
                    out.worktree(&real, full.first());
                }
                // A submodule's `.git` file names a full git directory.
                None => full.push(real),
            }
        }
    }
    let mut depth = 0;
    while !full.is_empty() && depth <= MODULE_DEPTH {
        let mut next = Vec::new();
        for git in &full {
            out.full(git);
            out.watched.push(Watched::new(git.join("modules"), false));
            out.watched.push(Watched::new(git.join("worktrees"), true));
            if let Ok(entries) = std::fs::read_dir(git.join("worktrees")) {
                for e in entries.flatten() {
                    if e.path().is_dir() {
                        out.worktree(&e.path(), Some(git));
                    }
                }
            }
            if let Ok(entries) = std::fs::read_dir(git.join("modules")) {
                next.extend(
                    entries
                        .flatten()
                        .map(|e| e.path())
                        .filter(|p| p.is_dir() && p.join("config").exists()),
                );
            }
        }
        full = next;
        depth += 1;
    }
    out
}

impl Layout {
    /// A full git directory: config, hooks, commondir.
    fn full(&mut self, git: &Path) {
        let hooks = git.join("hooks");
        if !hooks.exists() {
            // A missing hooks folder could be created and planted: it is created (empty,
            // as `git init` would) so that it can be bound read-only.
            let _ = std::fs::create_dir(&hooks);
        }
        self.anchors.push(git.to_path_buf());
        self.protected.push(git.join("config"));
        self.protected.push(hooks);
        self.present_or_absent(git.join("commondir"));
        // A submodule's work tree has a `.git` file naming this directory: rewritten, it
        // would send git (`git status` recurses into submodules) to a planted one.
        if let Some(tree) = core_worktree(git) {
            let file = tree.join(".git");
            if std::fs::symlink_metadata(&file).is_ok_and(|m| m.is_file()) {
                self.protected.push(file);
            }
        }
        if worktree_config(git) {
            self.present_or_absent(git.join("config.worktree"));
        }
    }

    /// A linked worktree's own directory, whose common directory is `common`.
    fn worktree(&mut self, own: &Path, common: Option<&PathBuf>) {
        self.anchors.push(own.to_path_buf());
        let commondir = own.join("commondir");
        if commondir.exists() {
            self.protected.push(commondir);
        }
        let config = own.join("config.worktree");
        if config.exists() {
            self.protected.push(config);
        } else if common.is_some_and(|c| worktree_config(c)) {
            self.absent.push(config);
        }
    }

    fn present_or_absent(&mut self, path: PathBuf) {
        if std::fs::symlink_metadata(&path).is_ok() {
            self.protected.push(path);
        } else {
            self.absent.push(path);
        }
    }
}

/// The `core.worktree` of the config of `git` (relative to `git`), as a submodule's git
/// directory records its work tree.
fn core_worktree(git: &Path) -> Option<PathBuf> {
    let text = std::fs::read_to_string(git.join("config")).ok()?;
    text.lines().find_map(|line| {
        let (key, value) = line.split_once('=')?;
        key.trim()
            .eq_ignore_ascii_case("worktree")
            .then(|| git.join(value.trim()))
    })
}

/// Whether the config of `git` enables `extensions.worktreeConfig`.
fn worktree_config(git: &Path) -> bool {
    std::fs::read_to_string(git.join("config"))
        .map(|t| t.to_ascii_lowercase().contains("worktreeconfig"))
        .unwrap_or(false)
}

/// In a repository created during the call at `fresh`: removes what `git init` never
/// writes and a later `git` run by the user would execute or follow — a hook that is not
/// a `*.sample`, a `commondir`, a `config.worktree`, config settings outside
/// [`SAFE_SETTINGS`], or `fresh` itself when it is a `.git` file or link — and returns
/// what it removed or rewrote. Links are removed, never followed: the command could have
/// pointed `hooks` or `config` anywhere, and this runs outside the sandbox.
pub(crate) fn sweep_fresh(fresh: &Path) -> Vec<PathBuf> {
    sweep_git_dir(fresh, MODULE_DEPTH)
}

/// [`sweep_fresh`] for the git directory at `git`, and for the modules below it down to
/// `depth` more levels (all as new as it is).
fn sweep_git_dir(git: &Path, depth: usize) -> Vec<PathBuf> {
    // A `.git` file or link would send git to a directory planted elsewhere.
    if let Err(gone) = real_dir(git) {
        return gone;
    }
    let hooks = git.join("hooks");
    let mut planted = match std::fs::symlink_metadata(&hooks) {
        Ok(meta) if meta.is_dir() => std::fs::read_dir(&hooks)
            .map(|entries| {
                entries
                    .flatten()
                    .map(|e| e.path())
                    .filter(|p| p.extension().is_none_or(|x| x != "sample"))
                    .collect()
            })
            .unwrap_or_default(),
        Ok(_) => vec![hooks],
        Err(_) => Vec::new(),
    };
    planted.push(git.join("commondir"));
    planted.push(git.join("config.worktree"));
    let mut removed = sweep(&planted);
    let config = git.join("config");
    match std::fs::symlink_metadata(&config) {
        Ok(meta) if meta.is_file() => {
            if let Some(kept) = safe_config(&config)
                && replace(&config, kept.as_bytes()).is_ok()
            {
                removed.push(config);
            }
        }
        Ok(_) => removed.extend(sweep(&[config])),
        Err(_) => {}
    }
    if depth > 0
        && std::fs::symlink_metadata(git.join("modules")).is_ok_and(|m| m.is_dir())
        && let Ok(entries) = std::fs::read_dir(git.join("modules"))
    {
        for entry in entries.flatten() {
            removed.extend(sweep_git_dir(&entry.path(), depth - 1));
        }
    }
    removed
}

/// In a linked worktree's directory created during the call: its `commondir` must lead
/// back to the common directory (`git worktree add` writes `../..`), and it has no
/// `config.worktree` yet. Returns what was removed or rewritten.
fn sweep_new_worktree(own: &Path) -> Vec<PathBuf> {
    if let Err(gone) = real_dir(own) {
        return gone;
    }
    let mut removed = sweep(&[own.join("config.worktree")]);
    let commondir = own.join("commondir");
    let regular = std::fs::symlink_metadata(&commondir).is_ok_and(|m| m.is_file());
    let leads_back =
        regular && std::fs::read_to_string(&commondir).is_ok_and(|text| text.trim() == "../..");
    if !leads_back {
        sweep(std::slice::from_ref(&commondir));
        if replace(&commondir, b"../..\n").is_ok() {
            removed.push(commondir);
        }
    }
    removed
}

/// `Ok` when `path` is a directory (not a link to one); else `Err` with what was removed:
/// `path` itself when it is anything else, nothing when it does not exist.
fn real_dir(path: &Path) -> Result<(), Vec<PathBuf>> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.is_dir() => Ok(()),
        Ok(_) => Err(sweep(&[path.to_path_buf()])),
        Err(_) => Err(Vec::new()),
    }
}

/// Writes `bytes` to `path` through a new file renamed over it: a link at `path` is
/// replaced, never followed.
fn replace(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let parent = path.parent().unwrap_or(Path::new("."));
    let mut file = tempfile::NamedTempFile::new_in(parent)?;
    std::io::Write::write_all(&mut file, bytes)?;
    file.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// The settings a repository created during a call keeps (`section.key`, or
/// `section.*.key` for any subsection): what `git init`, `git clone`, `git remote add`
/// and `git checkout -b` write. Anything else (an `fsmonitor`, a filter, an alias, an
/// include, a `sshCommand`, …) goes: a list of what is safe cannot miss a new way to run
/// a program, as a list of what is dangerous can.
const SAFE_SETTINGS: [&str; 19] = [
    "core.repositoryformatversion",
    "core.filemode",
    "core.bare",
    "core.logallrefupdates",
    "core.ignorecase",
    "core.precomposeunicode",
    "core.symlinks",
    "core.autocrlf",
    "core.eol",
    "extensions.objectformat",
    "extensions.refstorage",
    "remote.*.url",
    "remote.*.fetch",
    "remote.*.pushurl",
    "branch.*.remote",
    "branch.*.merge",
    "submodule.*.url",
    "submodule.*.active",
    "user.*",
];

/// Whether the setting `name` (as `git config --list` prints it: section and key in
/// lowercase, the subsection as written) is in [`SAFE_SETTINGS`].
fn is_safe(name: &str) -> bool {
    let (section, rest) = name.split_once('.').unwrap_or((name, ""));
    let (sub, key) = match rest.rsplit_once('.') {
        Some((sub, key)) => (Some(sub), key),
        None => (None, rest),
    };
    SAFE_SETTINGS.iter().any(|safe| {
        let mut parts = safe.split('.');
        let (s, middle, last) = (parts.next(), parts.next(), parts.next());
        match (s, middle, last, sub) {
            (Some(s), Some("*"), Some(k), Some(_)) => s == section && k == key,
            (Some(s), Some("*"), None, None) => s == section && section == "user",
            (Some(s), Some(k), None, None) => s == section && k == key,
            _ => false,
        }
    })
}

/// The config file at `path` with only its [`SAFE_SETTINGS`], as git itself reads it
/// (`git config --list`, includes not followed); `None` when it keeps everything or git
/// cannot read it (then no `git` would run it either).
fn safe_config(path: &Path) -> Option<String> {
    let out = std::process::Command::new("git")
        .args(["config", "--no-includes", "--null", "--list", "--file"])
        .arg(path)
        // Outside any repository: only the file is read.
        .current_dir("/")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    if !out.status.success() {
        // Unreadable to git (or no git): a config git cannot parse runs nothing, but it
        // is not left for a later version to read differently.
        return Some(String::new());
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let settings: Vec<(&str, &str)> = text
        .split('\0')
        .filter(|entry| !entry.is_empty())
        .map(|entry| entry.split_once('\n').unwrap_or((entry, "")))
        .collect();
    if settings.iter().all(|(name, _)| is_safe(name)) {
        return None;
    }
    Some(render_config(
        settings.into_iter().filter(|(name, _)| is_safe(name)),
    ))
}

/// A config file holding `settings` (`section[.sub].key`, value), values quoted.
fn render_config<'a>(settings: impl Iterator<Item = (&'a str, &'a str)>) -> String {
    fn quoted(text: &str) -> String {
        let mut out = String::from("\"");
        for c in text.chars() {
            match c {
                '\\' => out.push_str("\\\\"),
                '"' => out.push_str("\\\""),
                '\n' => out.push_str("\\n"),
                '\t' => out.push_str("\\t"),
                c => out.push(c),
            }
        }
        out.push('"');
        out
    }
    let mut out = String::new();
    let mut current = String::new();
    for (name, value) in settings {
        let (section, rest) = name.split_once('.').unwrap_or((name, ""));
        let (header, key) = match rest.rsplit_once('.') {
            Some((sub, key)) => (format!("[{section} {}]", quoted(sub)), key),
            None => (format!("[{section}]"), rest),
        };
        if header != current {
            out.push_str(&header);
            out.push('\n');
            current = header;
        }
        out.push_str(&format!("\t{key} = {}\n", quoted(value)));
    }
    out
}

/// Removes each of `absent` that exists now (whatever it is: file, link or directory);
/// returns the ones removed.
pub(crate) fn sweep(absent: &[PathBuf]) -> Vec<PathBuf> {
    let mut removed = Vec::new();
    for path in absent {
        let Ok(meta) = std::fs::symlink_metadata(path) else {
            continue;
        };
        let gone = if meta.is_dir() {
            std::fs::remove_dir_all(path)
        } else {
            std::fs::remove_file(path)
        };
        if gone.is_ok() {
            removed.push(path.clone());
        }
    }
    removed
}

#[cfg(test)]
mod tests {
    use super::*;

    fn git_available() -> bool {
        std::process::Command::new("git")
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    }

    #[test]
    fn only_the_safe_settings_are_kept_as_git_reads_them() {
        if !git_available() {
            eprintln!("skipped: no git");
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("config");
        // Ways around a line filter: a key on its header's line, a comment whose `\`
        // does not continue it, a quoted `!` alias, a filter, an include.
        std::fs::write(
            &config,
            "[core] fsmonitor = \"echo one\"\n\trepositoryformatversion = 0\n\tbare = false ; \\\n\
             \tsshCommand = \"echo two\"\n[alias]\n\tp = \"!echo three\"\n[filter \"x\"]\n\tclean = four\n\
             [include]\n\tpath = /tmp/five\n[remote \"origin\"]\n\turl = ../o \"q\"\n\tuploadpack = six\n\
             [user]\n\tname = A \\\\ B\n",
        )
        .unwrap();
        let kept = safe_config(&config).unwrap();
        for gone in ["one", "two", "three", "four", "five", "six"] {
            assert!(!kept.contains(gone), "{gone}: {kept}");
        }
        std::fs::write(&config, &kept).unwrap();
        let out = std::process::Command::new("git")
            .args(["config", "--null", "--list", "--file"])
            .arg(&config)
            .output()
            .unwrap();
        let listed = String::from_utf8_lossy(&out.stdout).replace('\n', "=");
        let mut listed: Vec<&str> = listed.split('\0').filter(|e| !e.is_empty()).collect();
        listed.sort();
        assert_eq!(
            listed,
            vec![
                "core.bare=false",
                "core.repositoryformatversion=0",
                "remote.origin.url=../o q",
                "user.name=A \\ B",
            ],
            "{kept}"
        );
        // Nothing to drop: left as it is.
        assert_eq!(safe_config(&config), None);
    }

    #[test]
    fn links_planted_in_a_new_repository_are_removed_not_followed() {
        use std::os::unix::fs::symlink;
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        std::fs::create_dir(&victim).unwrap();
        std::fs::write(victim.join("a"), "keep").unwrap();
        std::fs::write(victim.join("cfg"), "[core]\n\tfsmonitor = x\n").unwrap();
        let git = dir.path().join("p/.git");
        std::fs::create_dir_all(&git).unwrap();
        symlink(&victim, git.join("hooks")).unwrap();
        symlink(victim.join("cfg"), git.join("config")).unwrap();
        let removed = sweep_fresh(&git);
        assert!(removed.contains(&git.join("hooks")), "{removed:?}");
        assert!(removed.contains(&git.join("config")), "{removed:?}");
        assert_eq!(std::fs::read_to_string(victim.join("a")).unwrap(), "keep");
        assert_eq!(
            std::fs::read_to_string(victim.join("cfg")).unwrap(),
            "[core]\n\tfsmonitor = x\n"
        );
        assert!(std::fs::symlink_metadata(git.join("hooks")).is_err());
    }

    #[test]
    fn git_directories_added_under_modules_and_worktrees_are_swept_and_old_ones_kept() {
        let dir = tempfile::tempdir().unwrap();
        let git = dir.path().join(".git");
        std::fs::create_dir_all(git.join("modules/old/hooks")).unwrap();
        std::fs::write(git.join("modules/old/hooks/pre-commit"), "mine").unwrap();
        let watched = vec![
            Watched::new(git.join("modules"), false),
            Watched::new(git.join("worktrees"), true),
        ];
        // During the call: a new module with a hook, a new worktree sent elsewhere.
        std::fs::create_dir_all(git.join("modules/sm/hooks")).unwrap();
        std::fs::write(git.join("modules/sm/hooks/pre-commit"), "planted").unwrap();
        std::fs::create_dir_all(git.join("worktrees/wt")).unwrap();
        std::fs::write(git.join("worktrees/wt/commondir"), "/tmp/evil").unwrap();
        let removed = sweep_new(&watched);
        assert!(
            removed.contains(&git.join("modules/sm/hooks/pre-commit")),
            "{removed:?}"
        );
        assert!(!git.join("modules/sm/hooks/pre-commit").exists());
        assert_eq!(
            std::fs::read_to_string(git.join("modules/old/hooks/pre-commit")).unwrap(),
            "mine"
        );
        assert_eq!(
            std::fs::read_to_string(git.join("worktrees/wt/commondir")).unwrap(),
            "../..\n"
        );
    }

    #[test]
    fn a_new_worktree_leads_back_to_its_common_directory() {
        let dir = tempfile::tempdir().unwrap();
        let own = dir.path().join("worktrees/wt");
        std::fs::create_dir_all(&own).unwrap();
        std::fs::write(own.join("commondir"), "/tmp/evil\n").unwrap();
        std::fs::write(own.join("config.worktree"), "[core]\n\tfsmonitor = x\n").unwrap();
        sweep_new_worktree(&own);
        assert_eq!(
            std::fs::read_to_string(own.join("commondir")).unwrap(),
            "../..\n"
        );
        assert!(!own.join("config.worktree").exists());
    }
}
