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

use std::ffi::OsStr;
use std::os::fd::{AsRawFd, OwnedFd};
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
        let Ok((parent, name)) = crate::beneath::parent(&w.folder) else {
            continue;
        };
        let folder = match open_dir_at(&parent, name) {
            Ok(folder) => folder,
            Err(_) => {
                if remove_at(&parent, name) {
                    removed.push(w.folder.clone());
                }
                continue;
            }
        };
        for entry in entries(&folder) {
            if w.known.contains(&entry) {
                continue;
            }
            let shown = w.folder.join(&entry);
            removed.extend(if w.worktrees {
                sweep_new_worktree_at(&folder, &entry, shown)
            } else {
                sweep_git_at(&folder, &entry, shown, MODULE_DEPTH)
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
/// what it removed or rewrote. This runs outside the sandbox on paths a command shaped,
/// perhaps while another of its processes renames them: everything is done through
/// handles opened without following links ([`crate::beneath`]), a link is removed, never
/// followed, and a file is replaced by renaming a new one over it.
pub(crate) fn sweep_fresh(fresh: &Path) -> Vec<PathBuf> {
    match crate::beneath::parent(fresh) {
        Ok((parent, name)) => sweep_git_at(&parent, name, fresh.to_path_buf(), MODULE_DEPTH),
        Err(_) => Vec::new(),
    }
}

/// Whether git would take the folder `path` itself for a git directory (`HEAD`,
/// `objects/` and `refs/` in it: how git finds a bare repository).
pub(crate) fn looks_like_git_dir(path: &Path) -> bool {
    let is = |name: &str, dir: bool| {
        std::fs::symlink_metadata(path.join(name)).is_ok_and(|m| m.is_dir() == dir)
    };
    is("HEAD", false) && is("objects", true) && is("refs", true)
}

/// In a folder that became a git directory during the call (the project or a folder
/// above it, laid out as a bare repository): its `config` keeps only [`SAFE_SETTINGS`]
/// (a `core.worktree` and an `fsmonitor` there would run for the user's `git status` in
/// the project) and a `commondir` goes. Its other files are the project's and stay.
pub(crate) fn sweep_bare(folder: &Path) -> Vec<PathBuf> {
    if !looks_like_git_dir(folder) {
        return Vec::new();
    }
    let Ok(dir) = crate::beneath::open_dir(folder) else {
        return Vec::new();
    };
    let mut removed: Vec<PathBuf> = sanitize_config_at(&dir, folder).into_iter().collect();
    let commondir = OsStr::new("commondir");
    if exists_at(&dir, commondir) && remove_at(&dir, commondir) {
        removed.push(folder.join("commondir"));
    }
    removed
}

/// Errors that say a name is not a directory one can enter: a link or another file.
fn not_a_directory(err: &std::io::Error) -> bool {
    matches!(err.raw_os_error(), Some(libc::ELOOP | libc::ENOTDIR))
}

/// [`sweep_fresh`] for the git directory `name` in `parent` (shown as `shown`), and for the
/// modules below it down to `depth` more levels (all as new as it is).
fn sweep_git_at(parent: &OwnedFd, name: &OsStr, shown: PathBuf, depth: usize) -> Vec<PathBuf> {
    // A `.git` file or link would send git to a directory planted elsewhere.
    let git = match enter_or_remove(parent, name, &shown) {
        Ok(git) => git,
        Err(removed) => return removed,
    };
    let mut removed = Vec::new();
    let hooks = OsStr::new("hooks");
    match open_dir_at(&git, hooks) {
        Ok(folder) => {
            for entry in entries(&folder) {
                let sample = Path::new(&entry).extension().is_some_and(|x| x == "sample");
                if !sample && remove_at(&folder, &entry) {
                    removed.push(shown.join("hooks").join(&entry));
                }
            }
        }
        Err(err) if not_a_directory(&err) => {
            if remove_at(&git, hooks) {
                removed.push(shown.join("hooks"));
            }
        }
        Err(_) => {}
    }
    for planted in ["commondir", "config.worktree"] {
        if exists_at(&git, OsStr::new(planted)) && remove_at(&git, OsStr::new(planted)) {
            removed.push(shown.join(planted));
        }
    }
    if let Some(config) = sanitize_config_at(&git, &shown) {
        removed.push(config);
    }
    if depth > 0
        && let Ok(modules) = open_dir_at(&git, OsStr::new("modules"))
    {
        for entry in entries(&modules) {
            let shown = shown.join("modules").join(&entry);
            removed.extend(sweep_git_at(&modules, &entry, shown, depth - 1));
        }
    }
    removed
}

/// Keeps the `config` in the git directory `git` (shown as `shown`) to [`SAFE_SETTINGS`]:
/// rewritten when it held more (the whole of it kept beside it, as
/// `config.before-sandbox-sweep`, which git never reads), removed when it is not a plain
/// file. `Some` with its path
/// when it changed.
fn sanitize_config_at(git: &OwnedFd, shown: &Path) -> Option<PathBuf> {
    let name = OsStr::new("config");
    let file = match crate::beneath::open_at(git, name, libc::O_RDONLY | libc::O_NOFOLLOW, 0) {
        Ok(file) => file,
        Err(err) if not_a_directory(&err) => {
            return remove_at(git, name).then(|| shown.join("config"));
        }
        Err(_) => return None,
    };
    if !file.metadata().is_ok_and(|m| m.is_file()) {
        drop(file);
        return remove_at(git, name).then(|| shown.join("config"));
    }
    let mut text = Vec::new();
    std::io::Read::read_to_end(&mut std::io::Read::take(&file, 1 << 20), &mut text).ok()?;
    let kept = safe_config(&text)?;
    // What is dropped is not lost: the folder may be a repository the user made while a
    // long-lived command (a monitor) ran, with settings of their own.
    write_at(git, OsStr::new("config.before-sandbox-sweep"), &text).ok()?;
    write_at(git, name, kept.as_bytes()).ok()?;
    Some(shown.join("config"))
}

/// In a linked worktree's directory `name` in `parent`, created during the call: its
/// `commondir` must lead back to the common directory (`git worktree add` writes
/// `../..`), and it has no `config.worktree` yet. Returns what was removed or rewritten.
fn sweep_new_worktree_at(parent: &OwnedFd, name: &OsStr, shown: PathBuf) -> Vec<PathBuf> {
    let own = match enter_or_remove(parent, name, &shown) {
        Ok(own) => own,
        Err(removed) => return removed,
    };
    let mut removed = Vec::new();
    let config = OsStr::new("config.worktree");
    if exists_at(&own, config) && remove_at(&own, config) {
        removed.push(shown.join("config.worktree"));
    }
    let commondir = OsStr::new("commondir");
    let leads_back = crate::beneath::open_at(&own, commondir, libc::O_RDONLY | libc::O_NOFOLLOW, 0)
        .ok()
        .filter(|f| f.metadata().is_ok_and(|m| m.is_file()))
        .and_then(|f| std::io::read_to_string(std::io::Read::take(f, 4096)).ok())
        .is_some_and(|text| text.trim() == "../..");
    if !leads_back {
        remove_at(&own, commondir);
        if write_at(&own, commondir, b"../..\n").is_ok() {
            removed.push(shown.join("commondir"));
        }
    }
    removed
}

/// The directory `name` in `parent` opened for listing; where it is a link or another
/// file instead, it is removed and `Err` holds `shown` (nothing when it could not be
/// removed or does not exist).
fn enter_or_remove(parent: &OwnedFd, name: &OsStr, shown: &Path) -> Result<OwnedFd, Vec<PathBuf>> {
    match open_dir_at(parent, name) {
        Ok(dir) => Ok(dir),
        Err(err) if not_a_directory(&err) && remove_at(parent, name) => {
            Err(vec![shown.to_path_buf()])
        }
        Err(_) => Err(Vec::new()),
    }
}

/// Opens the directory `name` in `dir` for listing, not following a link.
fn open_dir_at(dir: &OwnedFd, name: &OsStr) -> std::io::Result<OwnedFd> {
    crate::beneath::open_at(
        dir,
        name,
        libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW,
        0,
    )
    .map(OwnedFd::from)
}

/// Whether `name` exists in `dir` (whatever it is, a link included).
fn exists_at(dir: &OwnedFd, name: &OsStr) -> bool {
    let Ok(c) = std::ffi::CString::new(name.as_encoded_bytes()) else {
        return false;
    };
    let mut st = std::mem::MaybeUninit::<libc::stat>::uninit();
    // SAFETY: a valid NUL-terminated name relative to an open directory handle.
    unsafe {
        libc::fstatat(
            dir.as_raw_fd(),
            c.as_ptr(),
            st.as_mut_ptr(),
            libc::AT_SYMLINK_NOFOLLOW,
        ) == 0
    }
}

/// The names in the directory open as `dir` (not `.` and `..`).
fn entries(dir: &OwnedFd) -> Vec<std::ffi::OsString> {
    use std::os::unix::ffi::OsStrExt;
    let mut names = Vec::new();
    // SAFETY: fdopendir takes a duplicate, which closedir closes; readdir's entries are
    // read before the next call.
    unsafe {
        let fd = libc::fcntl(dir.as_raw_fd(), libc::F_DUPFD_CLOEXEC, 0);
        if fd < 0 {
            return names;
        }
        // Listing starts at the beginning whatever the handle read before.
        libc::lseek(fd, 0, libc::SEEK_SET);
        let stream = libc::fdopendir(fd);
        if stream.is_null() {
            libc::close(fd);
            return names;
        }
        loop {
            let entry = libc::readdir(stream);
            if entry.is_null() {
                break;
            }
            let name = std::ffi::CStr::from_ptr((*entry).d_name.as_ptr()).to_bytes();
            if name != b"." && name != b".." {
                names.push(OsStr::from_bytes(name).to_os_string());
            }
        }
        libc::closedir(stream);
    }
    names
}

/// Removes `name` in `dir` whatever it is, through handles: a link or file is unlinked, a
/// directory emptied the same way and then removed. True when it is gone.
fn remove_at(dir: &OwnedFd, name: &OsStr) -> bool {
    match crate::beneath::unlink_at(dir, name, false) {
        Ok(()) => true,
        Err(err) if matches!(err.raw_os_error(), Some(libc::EISDIR | libc::EPERM)) => {
            let Ok(child) = open_dir_at(dir, name) else {
                return false;
            };
            for entry in entries(&child) {
                remove_at(&child, &entry);
            }
            crate::beneath::unlink_at(dir, name, true).is_ok()
        }
        Err(_) => false,
    }
}

/// Writes `bytes` as `name` in `dir` through a new file renamed over it: a link at `name`
/// is replaced, never followed.
fn write_at(dir: &OwnedFd, name: &OsStr, bytes: &[u8]) -> std::io::Result<()> {
    let temporary = format!(
        ".{}.tinytool-{}",
        name.to_string_lossy(),
        std::process::id()
    );
    let temporary = OsStr::new(&temporary);
    let _ = crate::beneath::unlink_at(dir, temporary, false);
    let mut file = crate::beneath::open_at(
        dir,
        temporary,
        libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW,
        0o644,
    )?;
    let written = std::io::Write::write_all(&mut file, bytes)
        .and_then(|()| crate::beneath::rename_at(dir, temporary, dir, name));
    if written.is_err() {
        let _ = crate::beneath::unlink_at(dir, temporary, false);
    }
    written
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

/// The config file `text` with only its [`SAFE_SETTINGS`], as git itself reads it (`git
/// config --list` on a private copy, includes not followed); `None` when it keeps
/// everything. A config git cannot read keeps nothing.
fn safe_config(text: &[u8]) -> Option<String> {
    let copy = tempfile::NamedTempFile::new().ok()?;
    std::fs::write(copy.path(), text).ok()?;
    let out = std::process::Command::new("git")
        .args(["config", "--no-includes", "--null", "--list", "--file"])
        .arg(copy.path())
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

/// Removes each of `absent` that exists now (whatever it is: file, link or directory,
/// through handles as [`sweep_fresh`] does); returns the ones removed.
pub(crate) fn sweep(absent: &[PathBuf]) -> Vec<PathBuf> {
    let mut removed = Vec::new();
    for path in absent {
        if let Ok((parent, name)) = crate::beneath::parent(path)
            && exists_at(&parent, name)
            && remove_at(&parent, name)
        {
            removed.push(path.clone());
        }
    }
    removed
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether git runs here; where it does not, says so, and fails under `CI` (a check
    /// that did not run proves nothing there), as the integration tests' `util::skip`.
    fn git_available() -> bool {
        let found = std::process::Command::new("git")
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success());
        if !found {
            let ci = std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false" && v != "0");
            assert!(!ci, "git is not installed, and CI runs every check");
            eprintln!("skipped: git is not installed");
            if let Some(path) = std::env::var_os("TINYTOOL_SKIPPED") {
                use std::io::Write;
                let file = std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(path);
                if let Ok(mut file) = file {
                    let _ = file.write_all(b"sandbox::gitdirs tests: git is not installed\n");
                }
            }
        }
        found
    }

    #[test]
    fn only_the_safe_settings_are_kept_as_git_reads_them() {
        if !git_available() {
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
        let kept = safe_config(&std::fs::read(&config).unwrap()).unwrap();
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
        assert_eq!(safe_config(&std::fs::read(&config).unwrap()), None);
    }

    #[test]
    fn a_swept_config_is_kept_whole_beside_it() {
        if !git_available() {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let git = dir.path().join(".git");
        std::fs::create_dir(&git).unwrap();
        let original = "[core]\n\tbare = false\n\tfsmonitor = x\n[alias]\n\tst = status\n";
        std::fs::write(git.join("config"), original).unwrap();
        let removed = sweep_fresh(&git);
        assert!(removed.contains(&git.join("config")), "{removed:?}");
        let kept = std::fs::read_to_string(git.join("config")).unwrap();
        assert!(!kept.contains("fsmonitor"), "{kept}");
        assert_eq!(
            std::fs::read_to_string(git.join("config.before-sandbox-sweep")).unwrap(),
            original
        );
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
        let worktrees = dir.path().join("worktrees");
        std::fs::create_dir_all(&worktrees).unwrap();
        let watched = vec![Watched::new(worktrees.clone(), true)];
        let own = worktrees.join("wt");
        std::fs::create_dir_all(&own).unwrap();
        std::fs::write(own.join("commondir"), "/tmp/evil\n").unwrap();
        std::fs::write(own.join("config.worktree"), "[core]\n\tfsmonitor = x\n").unwrap();
        sweep_new(&watched);
        assert_eq!(
            std::fs::read_to_string(own.join("commondir")).unwrap(),
            "../..\n"
        );
        assert!(!own.join("config.worktree").exists());
    }
}
