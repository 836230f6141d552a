//! The kernel sandbox of every command tinytool runs: what the policy lets
//! run is then limited by the kernel, not by a parser.
//!
//! - [`crate::sandbox_settings`]: the `sandbox` key of a policy file,
//!   `{"mode": "auto"|"required"|"off", "network": true|false, "writable": ["~/.cargo"],
//!   "unmask": ["tests/*.env"]}`; `Policy::sandbox_settings` merges the user and project
//!   policies (the project can only tighten: `required` over `auto`, `network: false`; its
//!   `writable` and `unmask` are ignored).
//! - [`Plan`]: everything the forked child needs, prepared in tinytool before the fork
//!   (paths as C strings, the masked secret files, the uid map), plus a page shared with
//!   the child in which it records which layers it set up ([`Report`]).
//! - `namespaces`: what the forked child does between `fork` and `exec`
//!   (async-signal-safe system calls only): a user namespace when not root, a mount
//!   namespace (the whole tree read-only, the writable set bound writable, protected
//!   paths (git config and hooks, `.tinytool/`, the policy file, the user config and
//!   state directories) bound read-only on themselves so they are mount points that cannot be renamed,
//!   secret files covered by an empty read-only file), a network namespace with only its
//!   own loopback when `network` is false, and a PID namespace whose first process is
//!   the command: when it ends, or tinytool dies, the kernel kills everything in it.
//! - [`masking`]: which of the files [`crate::secret_scan`] found are covered (secrets git
//!   does not track and the user did not unmask), each by an empty file of its own watched
//!   for opens; [`covers`]: the empty stand-ins themselves.
//! - `explain`: the last line of a failed command's output naming the rule that stopped it.
//!
//! - `landlock`: the fallback where `unshare` is refused: writes limited to the writable
//!   set by a Landlock ruleset built before the fork.
//!
//! Layer names (in `metadata.sandbox.layers` and `missing[].layer`): `userns`, `mount`,
//! `pid`, `net`, `landlock` (only where the namespaces could not be set up), `mask`.

mod covers;
mod devices;
mod explain;
mod gitdirs;
mod guard;
mod landlock;
pub mod masking;
mod namespaces;
mod private_tmp;
mod sockets;

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{DirBuilderExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicI32, AtomicU32, Ordering};

use serde_json::{Value, json};

use crate::sandbox_settings::{Mode, Settings};
pub use namespaces::{Exec, enter};

/// What the sandbox does to a command under `settings`, in two sentences for the
/// descriptions of the tools that run commands (a model that knows it does not mistake a
/// read-only home or an emptied `.env` for a broken project).
pub fn describe(settings: &Settings) -> String {
    if settings.mode == Mode::Off {
        return "Commands run without a sandbox.".to_string();
    }
    let mut opened: Vec<String> = settings
        .writable
        .iter()
        .map(|p| {
            let home = std::env::var_os("HOME").map(PathBuf::from);
            match home.as_deref().and_then(|h| p.strip_prefix(h).ok()) {
                Some(rest) => format!("~/{}", rest.display()),
                None => p.display().to_string(),
            }
        })
        .collect();
    opened.dedup();
    let writable = if opened.is_empty() {
        "the project and /tmp (the project's own, kept across calls) are writable".to_string()
    } else {
        format!(
            "the project, /tmp (the project's own, kept across calls) and {} are writable",
            opened.join(", ")
        )
    };
    format!(
        "Commands run in a sandbox: {writable}, everything else (the home directory included) is read-only, and secret files git does not track (.env, private keys) read as empty. The network is {}; a `[sandbox: …]` line at the end of a result says when the sandbox stopped something and which setting opens it.",
        if settings.network { "on" } else { "off" }
    )
}

/// The layers, in the order of their bits in [`Report`].
pub const LAYERS: [&str; 6] = ["userns", "mount", "pid", "net", "landlock", "mask"];

/// Bit of a layer in [`Report::active`].
pub(crate) const USERNS: usize = 0;
pub(crate) const MOUNT: usize = 1;
pub(crate) const PID: usize = 2;
pub(crate) const NET: usize = 3;
/// The fallback where the namespaces cannot be set up (`landlock`).
pub(crate) const LANDLOCK: usize = 4;
pub(crate) const MASK: usize = 5;
/// Not a layer: where a fresh `/proc` could not be mounted (the PID namespace stays).
pub(crate) const PROC: usize = 6;

/// What the forked child records for tinytool: the layers it set up and, per layer, the
/// `errno` of the step that failed.
#[derive(Debug)]
pub struct Report {
    active: AtomicU32,
    errors: [AtomicI32; 7],
    /// Which step failed, per layer (an index into `namespaces::STEPS`).
    steps: [AtomicI32; 7],
}

/// A page shared with the forked child holding a [`Report`]. Unmapped when dropped.
pub struct Shared {
    page: NonNull<Report>,
}

// SAFETY: the page holds only atomics and lives as long as `Shared`.
unsafe impl Send for Shared {}
// SAFETY: as above.
unsafe impl Sync for Shared {}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.report().fmt(f)
    }
}

impl Shared {
    fn new() -> std::io::Result<Shared> {
        // SAFETY: an anonymous shared mapping with no address hint; checked before use.
        let page = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                size_of::<Report>(),
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if page == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error());
        }
        let page = NonNull::new(page.cast::<Report>())
            .ok_or_else(|| std::io::Error::other("mmap returned a null page"))?;
        Ok(Shared { page })
    }

    /// The report (zero-initialised: nothing active, no error).
    pub fn report(&self) -> &Report {
        // SAFETY: the page is mapped, zeroed and aligned while `self` lives; all-zero is
        // a valid `Report` (atomics).
        unsafe { self.page.as_ref() }
    }
}

impl Drop for Shared {
    fn drop(&mut self) {
        // SAFETY: unmaps exactly the mapping made in `new`.
        unsafe {
            libc::munmap(self.page.as_ptr().cast(), size_of::<Report>());
        }
    }
}

impl Report {
    pub(crate) fn set_active(&self, layer: usize) {
        self.active.fetch_or(1 << layer, Ordering::SeqCst);
    }

    pub(crate) fn clear_active(&self, layer: usize) {
        self.active.fetch_and(!(1 << layer), Ordering::SeqCst);
    }

    pub(crate) fn fail(&self, layer: usize, step: i32, errno: i32) {
        self.clear_active(layer);
        if self.errors[layer].load(Ordering::SeqCst) == 0 {
            self.errors[layer].store(errno.max(1), Ordering::SeqCst);
            self.steps[layer].store(step, Ordering::SeqCst);
        }
    }

    fn is_active(&self, layer: usize) -> bool {
        self.active.load(Ordering::SeqCst) & (1 << layer) != 0
    }

    fn why(&self, layer: usize) -> Option<String> {
        let errno = self.errors[layer].load(Ordering::SeqCst);
        (errno != 0).then(|| {
            let step = namespaces::step_name(self.steps[layer].load(Ordering::SeqCst));
            format!("{step}: {}", std::io::Error::from_raw_os_error(errno))
        })
    }
}

/// Everything the forked child needs to build the sandbox (module doc).
#[derive(Debug)]
pub struct Plan {
    /// The mode (never `off`: no plan is made then).
    pub mode: Mode,
    pub(crate) network: bool,
    /// Whether a user namespace is needed (not root).
    pub(crate) userns: bool,
    pub(crate) uid_map: CString,
    pub(crate) gid_map: CString,
    /// Writable mount points, parents first.
    pub(crate) writable: Vec<CString>,
    /// Device nodes (and `/dev` directories) a command may open: bound on themselves
    /// without the tree's `nodev` (the `devices` module).
    pub(crate) devices: Vec<CString>,
    /// The host's service sockets covered by the empty file (the `sockets` module).
    pub(crate) sockets: Vec<CString>,
    /// tinytool's own secrets covered by the empty file (the user's journal key).
    pub(crate) unreadable: Vec<CString>,
    /// Directories made mount points of their own (writable), so they cannot be renamed.
    pub(crate) anchors: Vec<CString>,
    /// The project's private `/tmp` (`private_tmp`), where there is one.
    pub(crate) private_tmp: Option<private_tmp::PrivateTmp>,
    /// The ancestors of the project and of the protected paths that lie inside a
    /// writable path, parents first: mount points too, or renaming one (`mv /tmp/a
    /// /tmp/b && mkdir /tmp/a …`) would put a planted tree at the project's path.
    pub(crate) pinned: Vec<CString>,
    /// Paths bound read-only on themselves.
    pub(crate) protected: Vec<CString>,
    /// Secret files covered by an empty file.
    pub(crate) masked: Vec<CString>,
    /// The empty read-only file covering each of `masked` (the same index), or none
    /// where they could not be made: then `empty` covers them all.
    pub(crate) mask_sources: Vec<CString>,
    /// The empty read-only file secrets are covered with.
    pub(crate) empty: Option<CString>,
    /// What is masked and what is not, and why.
    pub masking: masking::Masking,
    /// The opens of the files covering the secrets.
    mask_opens: Option<masking::Opens>,
    /// What the masking was decided with, to decide it again ([`Plan::outgrown`]): the
    /// scan's limit, the `unmask` patterns, whether a `secret-shell` rule lifted it.
    scan_limit: usize,
    unmask: Vec<String>,
    unmask_all: bool,
    /// The project directory (resolved).
    dir: PathBuf,
    /// Directories covered by the empty directory (the checkpoint store, which holds
    /// copies of secret files).
    pub(crate) hidden: Vec<CString>,
    /// The empty read-only directory they are covered with.
    pub(crate) empty_dir: Option<CString>,
    /// What covers `.tinytool/` for a command that is no tinytool user ([`OwnView`]).
    pub(crate) own_view: Option<OwnView>,
    /// Where the secret scan stopped at its limit: the limit (the command is refused).
    pub mask_capped: Option<usize>,
    /// Protected paths that do not exist and cannot be bound: removed if the command
    /// creates them (`gitdirs`).
    pub(crate) absent: Vec<PathBuf>,
    /// Where there was no repository: the `.git` a command could create (`gitdirs`).
    pub(crate) fresh_repo: Option<PathBuf>,
    /// The git `modules` and `worktrees` folders and what they held (`gitdirs`).
    pub(crate) git_watched: Vec<gitdirs::Watched>,
    /// The project and the folders above it that were no git directory before the call.
    pub(crate) bare_watch: Vec<PathBuf>,
    /// The ones [`Plan::sweep`] removed.
    removed: std::sync::Mutex<Vec<PathBuf>>,
    /// The repositories nested in the project when the plan was made (the scan's).
    repos: Vec<PathBuf>,
    /// When the plan was made (a checkpoint watch begun before saw all its command did).
    created: std::time::Instant,
    /// Whether the shell's rules judge the command read-only ([`Purpose::read_only`]).
    read_only: bool,
    /// Whether the repositories the command made were looked for ([`Plan::sweep`]).
    repos_swept: std::sync::atomic::AtomicBool,
    /// Each masked secret's identity (device, inode) when the plan was made: a new file
    /// under its name is one the mask no longer covers ([`Plan::replaced_now`]).
    masked_ids: Vec<(PathBuf, (u64, u64))>,
    /// Why the guard stopped the command ([`guard`]), once it did.
    stopped: std::sync::Mutex<Option<String>>,
    /// The Landlock ruleset enforced where the namespaces cannot be set up, or why there
    /// is none.
    pub(crate) landlock: Result<landlock::Prepared, String>,
    /// With the namespaces and the network on: the Landlock scope that keeps the host's
    /// abstract Unix sockets out of reach, where the kernel has it.
    pub(crate) scope: Option<landlock::Prepared>,
    /// Test builds only: behave as if `unshare` were refused (see [`NO_NAMESPACES_VAR`]).
    pub(crate) simulate_no_namespaces: bool,
    /// Where the child reports.
    pub shared: Shared,
}

/// In debug builds only (the test binary), a non-empty value makes the child behave as if
/// this machine refused the namespaces (`EPERM`), so the Landlock fallback can be tested on
/// a machine that has them. Release builds ignore it.
const NO_NAMESPACES_VAR: &str = "TINYTOOL_TEST_NO_NAMESPACES";

/// `.tinytool/` as a command sees it: a read-only folder holding only the spill files
/// (`outputs/`), so that the state database (which keeps monitors' lines), the journal and
/// the spill files of calls that saw secrets (`sealed/`) are out of its reach.
#[derive(Debug)]
pub(crate) struct OwnView {
    /// The project's `.tinytool`.
    pub folder: CString,
    /// Its `outputs`, bound back in.
    pub outputs: CString,
    /// The folder put over it (`covers::own_view`).
    pub skeleton: CString,
    /// The skeleton's `outputs`, where the spill files are bound.
    pub mount_point: CString,
}

impl OwnView {
    fn new(tinytool: &Path) -> Option<OwnView> {
        let skeleton = covers::own_view(tinytool)?;
        let outputs = tinytool.join("outputs");
        crate::project::ensure_own_subdir(tinytool.parent()?, "outputs").ok()?;
        Some(OwnView {
            folder: c_path(&crate::paths::canonicalize(tinytool).ok()?),
            outputs: c_path(&crate::paths::canonicalize(outputs).ok()?),
            mount_point: c_path(&skeleton.join("outputs")),
            skeleton: c_path(&skeleton),
        })
    }
}

/// What a plan is made for.
#[derive(Debug, Clone, Copy, Default)]
pub struct Purpose<'a> {
    /// `.tinytool/` stays writable (a task subagent is a tinytool user itself).
    pub tinytool_writable: bool,
    /// The shell's rules judge the command read-only (`detect::read_only`): what it
    /// changed is not looked for again after it, as the checkpoints do not.
    pub read_only: bool,
    /// More writable paths (a subagent's `subagents.<name>.writable`).
    pub extra_writable: &'a [PathBuf],
    /// A `secret-shell` allow rule covers the command: no secret is masked.
    pub unmask_all: bool,
}

impl Plan {
    /// The plan for a command run in `dir` under `settings`; `None` when the mode is off.
    pub fn new(settings: &Settings, dir: &Path, purpose: Purpose) -> Option<Plan> {
        if settings.mode == Mode::Off {
            return None;
        }
        let shared = Shared::new().ok()?;
        // SAFETY: getuid/getgid have no preconditions.
        let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
        let dir = crate::paths::resolve_symlinks(dir);
        let mut writable: Vec<PathBuf> = vec![PathBuf::from("/tmp")];
        writable.push(std::env::temp_dir());
        writable.push(dir.clone());
        // A cache the user opened that a toolchain has not made yet (`~/.npm` on a fresh
        // machine) is made now: inside, its parent is read-only and the tool could not.
        for path in &settings.writable {
            if std::fs::symlink_metadata(path).is_err()
                && let Some(home) = std::env::var_os("HOME").map(PathBuf::from)
                && path.starts_with(&home)
                && home.is_dir()
            {
                let _ = std::fs::DirBuilder::new().recursive(true).create(path);
            }
        }
        writable.extend(settings.writable.iter().cloned());
        writable.extend(purpose.extra_writable.iter().cloned());
        let mut writable: Vec<PathBuf> = writable
            .into_iter()
            .filter_map(|p| crate::paths::canonicalize(p).ok())
            .collect();
        writable.sort_by_key(|p| p.components().count());
        writable.dedup();
        let tinytool = crate::project::tinytool_dir(&dir);
        let mut anchors = Vec::new();
        let mut protected = Vec::new();
        let git = gitdirs::layout(&dir);
        let fresh_repo = git.fresh;
        let mut git_watched = git.watched;
        anchors.extend(git.anchors);
        protected.extend(git.protected);
        let mut git_absent = git.absent;
        // The secret scan also finds the repositories nested in the project (their own
        // `.git`, submodules' work trees): their hooks and config are the user's git's
        // next target as much as the top one's.
        let scan = crate::secret_scan::scan(&dir, settings.scan_limit);
        for repo in &scan.repos {
            let nested = gitdirs::layout(repo);
            anchors.extend(nested.anchors);
            protected.extend(nested.protected);
            git_absent.extend(nested.absent);
            git_watched.extend(nested.watched);
        }
        let absent: Vec<PathBuf> = git_absent
            .into_iter()
            .filter_map(|p| {
                let parent = crate::paths::canonicalize(p.parent()?).ok()?;
                Some(parent.join(p.file_name()?))
            })
            .collect();
        // A command allowed to read secrets sees the rest of `.tinytool` as well; for the
        // others the view covers it whole (read-only, the spill files alone in it).
        let own_view = if purpose.tinytool_writable || purpose.unmask_all {
            None
        } else {
            let _ = crate::project::ensure_tinytool_dir(&dir);
            OwnView::new(&tinytool)
        };
        if !purpose.tinytool_writable {
            let _ = crate::project::ensure_tinytool_dir(&dir);
            if own_view.is_none() {
                protected.push(tinytool.clone());
            }
        } else {
            let _ = crate::project::ensure_tinytool_dir(&dir);
            anchors.push(tinytool.clone());
        }
        if let Some(file) = &settings.policy_file {
            protected.push(file.clone());
        }
        // tinytool's own files where a command could reach them: its executable (a
        // replaced one would run outside any sandbox on the next call), the state
        // database and the answers file the options put in a writable place, with
        // SQLite's files beside the database. Bound read-only on themselves, so the
        // folders above them are pinned too. An executable inside the project is the
        // project's own build output (tinytool building itself), which its build must
        // be able to replace.
        let exe = std::env::current_exe()
            .ok()
            .and_then(|e| crate::paths::canonicalize(e).ok())
            .filter(|e| !e.starts_with(&dir));
        for file in exe.into_iter().chain(own_files(settings)) {
            // Inside `.tinytool/` they are covered already (or a subagent's to write).
            if writable.iter().any(|w| file.starts_with(w))
                && !file.starts_with(&tinytool)
                && file.exists()
            {
                protected.push(file);
            }
        }
        // The user's config (policy, SSRF exceptions) and state (stored approvals): a
        // command must not rewrite what decides about the next one. Where they would be
        // writable and do not exist yet, they are created first, so that they can be bound
        // read-only and cannot be created inside.
        // tinytool's state (approvals, the journal key, locks, pending writes) is no
        // command's business: hidden whole, but from a subagent, which is tinytool too.
        let state_dir = crate::approvals::user_state_dir();
        let mut hidden_state = None;
        for user_dir in [crate::config::user_config_dir(), state_dir.clone()]
            .into_iter()
            .flatten()
        {
            if !user_dir.exists() && writable.iter().any(|w| user_dir.starts_with(w)) {
                let _ = std::fs::DirBuilder::new()
                    .recursive(true)
                    .mode(0o700)
                    .create(&user_dir);
            }
            if Some(&user_dir) == state_dir.as_ref()
                && !purpose.tinytool_writable
                && covers::empty_dir(&tinytool).is_some()
            {
                hidden_state = crate::paths::canonicalize(&user_dir).ok();
                if hidden_state.is_some() {
                    continue;
                }
            }
            protected.push(user_dir);
        }
        let canonical = |paths: Vec<PathBuf>| -> Vec<PathBuf> {
            let mut out: Vec<PathBuf> = Vec::new();
            for p in paths
                .into_iter()
                .filter_map(|p| crate::paths::canonicalize(p).ok())
            {
                if !out.contains(&p) {
                    out.push(p);
                }
            }
            out
        };
        let protected = canonical(protected);
        let anchors = canonical(anchors);
        let masking = masking::decide(
            &dir,
            &scan.files,
            &scan.aliases,
            &settings.unmask,
            purpose.unmask_all,
        );
        // The secrets' folders too: moved (to an ignored folder, under a folder named
        // `.git`), a secret would leave the path the scan remembers.
        let pinned = pinned_ancestors(
            &writable,
            std::iter::once(&dir)
                .chain(&anchors)
                .chain(&protected)
                .chain(&masking.masked),
        );
        // A repository made in one of those folders would be the project's for the user's
        // next `git` (found above `--dir`), and so would one of them laid out as a bare
        // repository: the folders above the project that a command can write (a writable
        // path such as /tmp itself included).
        let above: Vec<&PathBuf> = pinned
            .iter()
            .chain(&writable)
            .filter(|f| dir.starts_with(f) && dir != **f)
            .collect();
        let bare_watch: Vec<PathBuf> = std::iter::once(&dir)
            .chain(above.iter().copied())
            .filter(|f| !gitdirs::looks_like_git_dir(f))
            .cloned()
            .collect();
        let mut absent = absent;
        for folder in above {
            let git = folder.join(".git");
            if std::fs::symlink_metadata(&git).is_err() && !absent.contains(&git) {
                absent.push(git);
            }
        }
        let empty = covers::empty_file(&tinytool);
        let sources = masking::placeholders(&tinytool, masking.masked.len()).unwrap_or_default();
        let mask_opens = if sources.is_empty() {
            None
        } else {
            masking::Opens::watch(&sources)
        };
        let devices_cache = crate::project::ensure_own_subdir(&dir, "sandbox")
            .ok()
            .map(|d| d.join("devices"));
        let devices = devices::openable(&writable, devices_cache.as_deref());
        let mut opened = settings.writable.clone();
        opened.extend(settings.sockets.iter().cloned());
        opened.extend(purpose.extra_writable.iter().cloned());
        // /tmp is the project's own: what the plan mounts under the host's /tmp keeps its
        // host view (the project, the home directory, writable and protected paths, the
        // sockets the policy opens), TMPDIR excepted (it lies in the private one).
        let temp_dir = crate::paths::canonicalize(std::env::temp_dir()).ok();
        let mounted: Vec<PathBuf> = writable
            .iter()
            .chain(&protected)
            .chain(&anchors)
            .chain(&hidden_paths(&tinytool, purpose))
            .chain(&hidden_state)
            .filter(|p| Some(*p) != temp_dir.as_ref())
            .cloned()
            .chain(
                settings
                    .sockets
                    .iter()
                    .filter_map(|p| crate::paths::canonicalize(p).ok()),
            )
            .collect();
        let private_tmp = private_tmp::prepare(&dir, &mounted);
        let sockets: Vec<PathBuf> = sockets::covered(&opened, &dir)
            .into_iter()
            .filter(|s| private_tmp::visible(private_tmp.as_ref(), s))
            .collect();
        // Landlock has no `nodev`: the devices are its only writable paths below /dev,
        // with the host's /dev/shm (there is no private one without a mount namespace).
        let mut landlock_writable = writable.clone();
        landlock_writable.extend(devices.iter().cloned());
        landlock_writable.extend(crate::paths::canonicalize("/dev/shm").ok());
        let landlock = landlock::prepare(&landlock_writable, settings.network);
        // Own network namespace: the host's abstract sockets are out of reach already.
        let scope = if settings.network {
            landlock::prepare_scope()
        } else {
            None
        };
        // The state database and SQLite's files beside it, where the view of `.tinytool`
        // does not cover them. (A supervisor keeps its connection open while its command
        // runs, so the write-ahead log is not removed and made again under the mount.)
        let state_files: Vec<PathBuf> = settings
            .state_file
            .iter()
            .filter(|_| !purpose.tinytool_writable)
            .filter_map(|f| crate::paths::canonicalize(f).ok())
            .filter(|f| own_view.is_none() || !f.starts_with(&tinytool))
            .flat_map(|f| {
                ["", "-wal", "-shm", "-journal"].map(|suffix| {
                    let mut name = f.clone().into_os_string();
                    name.push(suffix);
                    PathBuf::from(name)
                })
            })
            .collect();
        let simulate_no_namespaces = cfg!(debug_assertions)
            && std::env::var_os(NO_NAMESPACES_VAR).is_some_and(|v| !v.is_empty());
        // The checkpoint store is hidden unless the command is a tinytool user itself.
        let mut hidden = Vec::new();
        let empty_dir = if purpose.tinytool_writable {
            None
        } else {
            // The checkpoint store (copies of secret files), where the view of
            // `.tinytool` does not cover it already.
            if own_view.is_none() {
                let store = tinytool.join("checkpoints");
                let _ = std::fs::create_dir_all(&store);
                hidden.extend(crate::paths::canonicalize(&store).ok());
            }
            hidden.extend(hidden_state.clone());
            // The user's lock folder: a command holding a lock file there (a read-only
            // open is enough for `flock`) would make tinytool's next write wait. Under
            // a /tmp of the project's own it is out of sight unless kept.
            hidden.extend(
                crate::locks::lock_dir()
                    .ok()
                    .and_then(|(_, path)| crate::paths::canonicalize(path).ok())
                    .filter(|path| private_tmp.as_ref().is_none_or(|tmp| tmp.shows(path)))
                    .filter(|path| !hidden.iter().any(|h| path.starts_with(h))),
            );
            covers::empty_dir(&tinytool)
        };
        let masked_ids = masked_ids(&masking.masked);
        Some(Plan {
            mode: settings.mode,
            network: settings.network,
            userns: uid != 0,
            uid_map: c_string(format!("{uid} {uid} 1\n").as_bytes()),
            gid_map: c_string(format!("{gid} {gid} 1\n").as_bytes()),
            writable: writable.iter().map(|p| c_path(p)).collect(),
            devices: devices.iter().map(|p| c_path(p)).collect(),
            sockets: if empty.is_some() {
                sockets.iter().map(|p| c_path(p)).collect()
            } else {
                Vec::new()
            },
            private_tmp,
            unreadable: crate::journal::seal::ensure_key()
                .filter(|key| {
                    let key = crate::paths::canonicalize(key).unwrap_or_else(|_| key.clone());
                    !(empty_dir.is_some()
                        && hidden_state.as_ref().is_some_and(|h| key.starts_with(h)))
                })
                .into_iter()
                .chain(state_files)
                .filter(|file| empty.is_some() && file.is_file())
                .map(|file| c_path(&file))
                .collect(),
            anchors: anchors.iter().map(|p| c_path(p)).collect(),
            // An anchor is bound on itself anyway (a mount point already).
            pinned: pinned
                .iter()
                .filter(|p| !anchors.contains(p))
                .map(|p| c_path(p))
                .collect(),
            protected: protected.iter().map(|p| c_path(p)).collect(),
            masked: if empty.is_some() {
                masking.masked.iter().map(|p| c_path(p)).collect()
            } else {
                Vec::new()
            },
            mask_sources: sources.iter().map(|p| c_path(p)).collect(),
            empty: empty.map(|p| c_path(&p)),
            masking,
            mask_opens,
            scan_limit: settings.scan_limit,
            unmask: settings.unmask.clone(),
            unmask_all: purpose.unmask_all,
            dir: dir.clone(),
            hidden: if empty_dir.is_some() {
                hidden.iter().map(|p| c_path(p)).collect()
            } else {
                Vec::new()
            },
            empty_dir: empty_dir.map(|p| c_path(&p)),
            own_view,
            mask_capped: scan.capped.then_some(settings.scan_limit),
            absent,
            fresh_repo,
            git_watched,
            bare_watch,
            removed: std::sync::Mutex::new(Vec::new()),
            repos: scan.repos.clone(),
            created: std::time::Instant::now(),
            read_only: purpose.read_only,
            repos_swept: std::sync::atomic::AtomicBool::new(false),
            masked_ids,
            stopped: std::sync::Mutex::new(None),
            landlock,
            scope,
            simulate_no_namespaces,
            shared,
        })
    }

    /// Whether `layer` (an index into [`LAYERS`]) was asked for by this plan (Landlock
    /// only where the namespaces' mounts could not be set up).
    fn wanted(&self, layer: usize) -> bool {
        match layer {
            USERNS => self.userns,
            NET => !self.network,
            MASK => !self.masked.is_empty() || !self.hidden.is_empty(),
            LANDLOCK => !self.shared.report().is_active(MOUNT),
            _ => true,
        }
    }

    /// The layers wanted but not set up, with why (and, under Landlock, what it cannot do
    /// in their place).
    pub fn missing(&self) -> Vec<(&'static str, String)> {
        let report = self.shared.report();
        let landlock = match &self.landlock {
            Ok(prepared) if report.is_active(LANDLOCK) => Some(prepared),
            _ => None,
        };
        (0..LAYERS.len())
            .filter(|&l| self.wanted(l) && !report.is_active(l))
            .map(|l| {
                let mut why = report.why(l).unwrap_or_else(|| match (l, &self.landlock) {
                    (LANDLOCK, Err(why)) => why.clone(),
                    _ => "not set up (the command did not start)".into(),
                });
                if let Some(prepared) = landlock
                    && l != USERNS
                {
                    why = format!("{why}; {}", landlock::cannot(LAYERS[l], prepared));
                }
                (LAYERS[l], why)
            })
            .collect()
    }

    /// Removes the protected paths that did not exist and that the command created (a
    /// `commondir` redirecting git to a planted directory, a hook in a repository the
    /// command created); returns every path removed so far. Safe to call more than once; also called when the plan is dropped.
    pub fn sweep(&self) -> Vec<PathBuf> {
        let mut removed = self.removed.lock().unwrap_or_else(|e| e.into_inner());
        removed.extend(gitdirs::sweep(&self.absent));
        removed.extend(gitdirs::sweep_new(&self.git_watched));
        for folder in &self.bare_watch {
            removed.extend(gitdirs::sweep_bare(folder));
        }
        if let Some(fresh) = &self.fresh_repo {
            removed.extend(gitdirs::sweep_fresh(fresh));
        }
        // Repositories the command created below the project: what it planted in them
        // would run for the user's git there. The call's checkpoint watch says which
        // folders changed; without one, the whole project is scanned again.
        // Looked for once: `sweep` runs for the result's lines, its metadata and the
        // plan's end.
        if self.shared.report().is_active(MOUNT) && !self.repos_swept.swap(true, Ordering::SeqCst) {
            for repo in self.repositories_made() {
                removed.extend(gitdirs::sweep_fresh(&repo.join(".git")));
            }
        }
        removed.clone()
    }

    /// The repositories below the project that were not there when the plan was made.
    fn repositories_made(&self) -> Vec<PathBuf> {
        let watched = crate::tree::watch::changed_since(&self.dir, self.created);
        let made = match watched {
            // Folders the secret scan knows and the watch does not (ignored ones, where
            // a watch could not be added) give no event: only a scan tells about them.
            Some((changed, watched))
                if crate::secret_scan::scanned_directories(&self.dir)
                    .iter()
                    .all(|d| {
                        d.strip_prefix(&self.dir)
                            .ok()
                            .and_then(Path::to_str)
                            .is_some_and(|rel| watched.contains(rel))
                    }) =>
            {
                self.repositories_made_in(&changed, &watched)
            }
            // A command the shell's rules judge read-only (every line a known reader,
            // no redirection) makes no repository; for it, as for the checkpoints,
            // nothing is walked again.
            _ if self.read_only => Vec::new(),
            _ => crate::secret_scan::scan_after_command(&self.dir, self.scan_limit).repos,
        };
        made.into_iter()
            .filter(|r| !self.repos.contains(r))
            .collect()
    }

    /// The folders holding a `.git` in the folders `changed` (absolute) and in those
    /// made since the watch began (not in `watched`, relative to the project), below the
    /// project and outside dependency folders, as the secret scan finds repositories.
    fn repositories_made_in(
        &self,
        changed: &[PathBuf],
        watched: &std::collections::HashSet<String>,
    ) -> Vec<PathBuf> {
        const BUDGET: usize = 100_000;
        let mut found = Vec::new();
        let mut queue: Vec<PathBuf> = changed.to_vec();
        let mut looked = 0usize;
        while let Some(folder) = queue.pop() {
            let Ok(entries) = std::fs::read_dir(&folder) else {
                continue;
            };
            for entry in entries.flatten() {
                looked += 1;
                if looked > BUDGET {
                    // Too much new to look through: the scan decides.
                    return crate::secret_scan::scan_after_command(&self.dir, self.scan_limit)
                        .repos;
                }
                let name = entry.file_name();
                if name == ".git" {
                    if folder != self.dir {
                        found.push(folder.clone());
                    }
                    continue;
                }
                let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
                let path = entry.path();
                // A name that is no UTF-8 was not watched by name either.
                let unwatched = path
                    .strip_prefix(&self.dir)
                    .ok()
                    .and_then(|r| r.to_str())
                    .is_none_or(|rel| !watched.contains(rel));
                if is_dir && unwatched && !crate::secret_scan::left_out(&path) {
                    queue.push(path);
                }
            }
        }
        found
    }

    /// The explanatory line when the command created protected paths that the sandbox
    /// then removed ([`Plan::sweep`]), naming them.
    pub fn undone_line(&self) -> Option<String> {
        let removed = self.sweep();
        (!removed.is_empty()).then(|| {
            let list: Vec<String> = removed.iter().map(|p| p.display().to_string()).collect();
            format!(
                "[sandbox: removed {}: git hooks and redirections (commondir, .git files) cannot be planted from inside the sandbox; no policy setting allows it]",
                list.join(", ")
            )
        })
    }

    /// `metadata.sandbox`: the mode, the layers active, the ones missing and why (and the
    /// protected paths the command created, removed: `removed`).
    pub fn metadata(&self) -> Value {
        let report = self.shared.report();
        let layers: Vec<&str> = (0..LAYERS.len())
            .filter(|&l| report.is_active(l))
            .map(|l| LAYERS[l])
            .collect();
        let mut missing: Vec<Value> = self
            .missing()
            .into_iter()
            .map(|(layer, why)| json!({"layer": layer, "why": why}))
            .collect();
        if let Some(why) = report.why(PROC) {
            missing.push(json!({"layer": "proc", "why": why}));
        }
        let mut meta = json!({"mode": self.mode.as_str(), "layers": layers, "missing": missing});
        let removed = self.sweep();
        if !removed.is_empty() {
            meta["removed"] = json!(removed);
        }
        if let Some(limit) = self.mask_capped {
            meta["mask_capped"] = json!(limit);
        }
        let shown = |paths: &[PathBuf]| -> Value {
            paths
                .iter()
                .map(|p| json!(masking::shown(&self.dir, p)))
                .collect()
        };
        if report.is_active(MASK) && !self.masking.masked.is_empty() {
            meta["masked"] = shown(&self.masking.masked);
        }
        if !self.masking.tracked.is_empty() {
            meta["tracked_secrets"] = shown(&self.masking.tracked);
        }
        if !self.masking.unmasked.is_empty() {
            meta["unmasked"] = shown(&self.masking.unmasked);
        }
        if self.masking.index_unread {
            meta["index_unread"] = json!(true);
        }
        // Said when the project could not have a /tmp of its own (its `.tinytool` could
        // not be made, or the project is /tmp itself): the host's is shared.
        if report.is_active(MOUNT) && self.private_tmp.is_none() {
            meta["tmp"] = json!("host");
        }
        meta
    }

    /// The refusal of `required` mode when a layer is missing, naming each.
    pub fn refusal(&self) -> Option<String> {
        if let Some(limit) = self.mask_capped {
            return Some(format!(
                "the sandbox's scan for secret files stopped at its limit of {limit} directory entries, so a secret further in could not be masked; the command did not run. Raise the limit with \"sandbox\": {{\"scan_limit\": N}} in the user policy (each call checks every scanned folder), or run tinytool on a smaller folder (--dir)"
            ));
        }
        if self.mode != Mode::Required {
            return None;
        }
        let missing = self.missing();
        (!missing.is_empty()).then(|| {
            let list: Vec<String> = missing
                .iter()
                .map(|(layer, why)| format!("{layer} ({why})"))
                .collect();
            format!(
                "sandbox.mode is \"required\" and this machine cannot set up: {}; the command did not run (`tinytool sandbox` shows what is supported)",
                list.join(", ")
            )
        })
    }
}

fn c_string(bytes: &[u8]) -> CString {
    CString::new(
        bytes
            .iter()
            .copied()
            .filter(|&b| b != 0)
            .collect::<Vec<u8>>(),
    )
    .unwrap_or_default()
}

fn c_path(path: &Path) -> CString {
    c_string(path.as_os_str().as_bytes())
}

impl Drop for Plan {
    fn drop(&mut self) {
        // The last holder of the plan: the command and everything it started are gone.
        self.sweep();
    }
}

/// Whether this machine can set up one layer, for `tinytool sandbox`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LayerSupport {
    /// The layer's name (one of [`LAYERS`], or `proc`, or `scope`: Landlock's scopes
    /// beside the namespaces).
    pub layer: &'static str,
    /// `yes`, `no` or `not needed`.
    pub status: &'static str,
    /// Why a layer is missing or not needed; empty when it is available.
    pub why: String,
}

/// What this machine supports, one entry per layer, for `tinytool sandbox`: `run_true`
/// runs `true` under a plan asking for every layer (network off, masking) in `dir`.
pub fn support(dir: &Path, run_true: impl FnOnce(&std::sync::Arc<Plan>)) -> Vec<LayerSupport> {
    let settings = Settings {
        mode: Mode::Auto,
        network: false,
        ..Settings::default()
    };
    let Some(plan) = Plan::new(&settings, dir, Purpose::default()) else {
        return LAYERS
            .iter()
            .map(|&layer| LayerSupport {
                layer,
                status: "no",
                why: "cannot map the page the sandbox reports in".into(),
            })
            .collect();
    };
    let plan = std::sync::Arc::new(plan);
    run_true(&plan);
    let report = plan.shared.report();
    let mut out = Vec::new();
    for (l, &layer) in LAYERS.iter().enumerate() {
        let (status, why) = if report.is_active(l) {
            ("yes", String::new())
        } else if l == LANDLOCK {
            // The fallback is not used where the namespaces work: say whether it would be.
            match &plan.landlock {
                Ok(prepared) => (
                    "yes",
                    format!(
                        "ABI {}, used only where the namespaces cannot be set up",
                        prepared.abi
                    ),
                ),
                Err(why) => ("no", why.clone()),
            }
        } else if l == USERNS && !plan.userns {
            ("not needed", "running as root".to_string())
        } else if l == MASK && plan.masked.is_empty() {
            // Masking is a bind of the empty file: it works wherever the mounts do.
            if report.is_active(MOUNT) {
                ("yes", String::new())
            } else {
                ("no", "it needs the mount layer".to_string())
            }
        } else {
            // As in results: what the fallback does in place of the missing layer.
            let why = plan
                .missing()
                .into_iter()
                .find(|(name, _)| *name == layer)
                .map(|(_, why)| why)
                .or_else(|| report.why(l))
                .unwrap_or_else(|| "not set up".to_string());
            ("no", why)
        };
        out.push(LayerSupport { layer, status, why });
    }
    if let Some(why) = report.why(PROC) {
        out.push(LayerSupport {
            layer: "proc",
            status: "no",
            why: format!("no fresh /proc ({why}); the PID namespace stays"),
        });
    }
    // Not a layer of its own: what keeps the host's abstract sockets out of reach when
    // the network is on (with it off, the network namespace does).
    out.push(match landlock::prepare_scope() {
        Some(scope) => LayerSupport {
            layer: "scope",
            status: "yes",
            why: format!(
                "Landlock ABI {}: with the network on, the host's abstract Unix sockets (X servers, session buses) are out of reach",
                scope.abi
            ),
        },
        None => LayerSupport {
            layer: "scope",
            status: "no",
            why: "this kernel's Landlock has no scopes (ABI < 6, Linux 6.12): with the network on, the host's abstract Unix sockets (X servers, session buses) stay reachable".into(),
        },
    });
    out
}

/// `metadata.sandbox` of a result whose command ran under `plan` (`None`: the mode is off,
/// said as such rather than left out).
pub fn metadata_of(plan: Option<&Plan>) -> Value {
    match plan {
        Some(plan) => plan.metadata(),
        None => json!({"mode": Mode::Off.as_str(), "layers": [], "missing": []}),
    }
}

/// The `subagents.<kind>.writable` paths of the config, absolute.
pub fn subagent_writable(config: &crate::config::Config, kind: &str) -> Vec<PathBuf> {
    config
        .subagents
        .get(kind)
        .map(|s| {
            s.writable
                .iter()
                .map(|w| crate::sandbox_settings::expand(w))
                .collect()
        })
        .unwrap_or_default()
}

/// The strict ancestors of `paths` that lie strictly inside one of `writable` and are not
/// themselves writable paths (those are mount points already), parents first, each once.
fn pinned_ancestors<'a>(
    writable: &[PathBuf],
    paths: impl Iterator<Item = &'a PathBuf>,
) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    for path in paths {
        for ancestor in path.ancestors().skip(1) {
            let inside = writable
                .iter()
                .any(|w| ancestor.starts_with(w) && ancestor != w.as_path())
                && !writable.iter().any(|w| ancestor == w.as_path());
            if inside && !out.iter().any(|p| p == ancestor) {
                out.push(ancestor.to_path_buf());
            }
        }
    }
    out.sort_by_key(|p| p.components().count());
    out
}

/// The identity (device, inode) of each of `paths` that exists.
fn masked_ids(paths: &[PathBuf]) -> Vec<(PathBuf, (u64, u64))> {
    paths
        .iter()
        .filter_map(|p| {
            let meta = std::fs::symlink_metadata(p).ok()?;
            Some((p.clone(), (meta.dev(), meta.ino())))
        })
        .collect()
}

/// The line of a command the sandbox stopped because `what` happened while it ran.
fn stopped_line(what: &str) -> String {
    format!(
        "[sandbox: stopped: {what} after the command started, and its sandbox, fixed at the start, does not cover it; start it again to run it under the rules of now]"
    )
}

/// The checkpoint store the plan covers (see `hidden` in [`Plan::new`]).
fn hidden_paths(tinytool: &Path, purpose: Purpose) -> Vec<PathBuf> {
    if purpose.tinytool_writable {
        return Vec::new();
    }
    crate::paths::canonicalize(tinytool.join("checkpoints"))
        .into_iter()
        .collect()
}

/// The text a command printed, as kept by its captures (stdout, then stderr).
fn kept_text(captures: &[&crate::truncate::Capture]) -> String {
    captures
        .iter()
        .map(|c| c.kept_text())
        .collect::<Vec<_>>()
        .join("\n")
}

/// Whether `path` is one of `list`'s paths or below one.
fn under_any(path: &Path, list: &[CString]) -> bool {
    list.iter()
        .any(|c| path.starts_with(Path::new(std::ffi::OsStr::from_bytes(c.as_bytes()))))
}

/// The session's own files a command must not change (`Settings::own_files`), with the
/// files SQLite keeps beside a database (`-wal`, `-shm`, `-journal`), resolved.
fn own_files(settings: &Settings) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = Vec::new();
    for file in &settings.own_files {
        files.push(file.clone());
        for suffix in ["-wal", "-shm", "-journal"] {
            let mut beside = file.clone().into_os_string();
            beside.push(suffix);
            files.push(PathBuf::from(beside));
        }
    }
    files
        .into_iter()
        .filter_map(|f| crate::paths::canonicalize(f).ok())
        .collect()
}

/// What the masking of a command in `dir` would be under `settings` (no `secret-shell`
/// rule lifting it): for `tinytool sandbox`.
pub fn secrets(settings: &Settings, dir: &Path) -> masking::Masking {
    let dir = crate::paths::resolve_symlinks(dir);
    let scan = crate::secret_scan::scan(&dir, settings.scan_limit);
    masking::decide(&dir, &scan.files, &scan.aliases, &settings.unmask, false)
}

/// The plan for a command of `session`; `None` when its sandbox is off.
pub fn plan_for(
    session: &crate::session::Session,
    purpose: Purpose,
) -> Option<std::sync::Arc<Plan>> {
    Plan::new(&session.sandbox, &session.dir, purpose).map(std::sync::Arc::new)
}

/// Whether a result's metadata says the sandbox refused the command (exit status 3).
pub fn refused(metadata: &serde_json::Map<String, Value>) -> bool {
    metadata
        .get("sandbox")
        .and_then(|s| s.get("refused"))
        .and_then(Value::as_bool)
        .unwrap_or(false)
}

impl Plan {
    /// The explanatory last line for a failed command whose output is in `captures`.
    pub fn explain(&self, captures: &[&crate::truncate::Capture]) -> Option<String> {
        self.explain_text(&kept_text(captures))
    }

    /// Whether the network was off for the command (its own network namespace, or
    /// Landlock refusing TCP where the namespaces could not be set up).
    fn network_was_off(&self) -> bool {
        let report = self.shared.report();
        let tcp_denied =
            report.is_active(LANDLOCK) && self.landlock.as_ref().is_ok_and(|p| p.tcp_denied);
        !self.network && (report.is_active(NET) || tcp_denied)
    }

    /// For a command that exited 0 though a part of it failed (`cargo build | tail`): the
    /// read-only line, only when the output names a path this sandbox made read-only.
    pub fn explain_hidden_failure(&self, captures: &[&crate::truncate::Capture]) -> Option<String> {
        let report = self.shared.report();
        let landlock = report.is_active(LANDLOCK);
        if !report.is_active(MOUNT) && !landlock {
            return None;
        }
        let text = kept_text(captures);
        let lower = text.to_lowercase();
        let signs = lower.contains("read-only file system")
            || lower.contains("erofs")
            || (landlock && lower.contains("permission denied"));
        if !signs {
            return None;
        }
        let path = explain::read_only_path(&text)?;
        if under_any(&path, &self.protected) {
            return Some(explain::PROTECTED.to_string());
        }
        (!under_any(&path, &self.writable)).then(|| explain::read_only_line(&path))
    }

    /// For a command that timed out with the network off: the line saying so (a client
    /// waiting for an answer that cannot come, as `npm view` does, prints nothing).
    pub fn explain_timeout(&self) -> Option<String> {
        self.network_was_off().then(|| {
            "[sandbox: the command timed out while the network was off for commands (\"sandbox\": {\"network\": false}); a command waiting for a server cannot reach it, set \"network\": true in the user policy if it needs one]".to_string()
        })
    }

    /// For a process that outlives a call (a monitor): whether the project has since
    /// gained what this plan, fixed when it started, does not cover — a secret it would
    /// mask now, or a repository (at `--dir` or nested) whose hooks and config it would
    /// protect —
    /// and so the process must be stopped, with the line that says why.
    pub fn outgrown(&self) -> Option<String> {
        if let Some(fresh) = &self.fresh_repo
            && std::fs::symlink_metadata(fresh).is_ok()
        {
            return Some(self.repository_line(fresh));
        }
        // Without the mount layer nothing is masked (the fallback says so already).
        if self.unmask_all || !self.shared.report().is_active(MOUNT) {
            return None;
        }
        let scan = crate::secret_scan::scan_after_command(&self.dir, self.scan_limit);
        if scan.capped {
            return Some(stopped_line(
                "the project grew past the secret scan's limit",
            ));
        }
        if let Some(repo) = scan.repos.iter().find(|r| !self.repos.contains(r)) {
            return Some(self.repository_line(&repo.join(".git")));
        }
        let now = masking::decide(&self.dir, &scan.files, &scan.aliases, &self.unmask, false);
        let new: Vec<String> = now
            .masked
            .iter()
            .filter(|p| !self.masking.masked.contains(p))
            .map(|p| masking::shown(&self.dir, p))
            .collect();
        (!new.is_empty()).then(|| stopped_line(&format!("the secret {} appeared", new.join(", "))))
    }

    /// The line of a command stopped because a repository appeared at `git` (its `.git`).
    fn repository_line(&self, git: &Path) -> String {
        let repo = git.parent().unwrap_or(git);
        stopped_line(&format!(
            "a repository ({}) was created",
            masking::shown(&self.dir, &repo.join(".git"))
        ))
    }

    /// The line of a command stopped because the masked secret `path` was replaced (a
    /// new file renamed over it, which the kernel does not keep covered).
    fn replaced_line(&self, path: &Path) -> String {
        stopped_line(&format!(
            "the secret {} was replaced",
            masking::shown(&self.dir, path)
        ))
    }

    /// The line of a command stopped because a masked secret is another file now than
    /// when the plan was made (renamed over, or removed and made again); `None` while
    /// every one is the file it was (or gone).
    fn replaced_now(&self) -> Option<String> {
        self.masked_ids.iter().find_map(|(path, id)| {
            let now = std::fs::symlink_metadata(path).ok()?;
            ((now.dev(), now.ino()) != *id).then(|| self.replaced_line(path))
        })
    }

    /// The line of a command stopped because `path` is tinytool's own temporary file of a
    /// masked secret (`.NAME.<id>.tinytool.tmp`, about to be renamed over it, or the
    /// `.tinytool.old` name its previous content is set aside under): the secret is being
    /// rewritten, and both names hold a content the mask does not cover.
    fn rewritten_line(&self, path: &Path) -> Option<String> {
        let name = path.file_name()?.to_str()?;
        let target = name
            .strip_suffix(".tinytool.tmp")
            .or_else(|| name.strip_suffix(".tinytool.old"))?
            .rsplit_once('.')?
            .0
            .strip_prefix('.')?;
        let target = path.with_file_name(target);
        self.masking
            .masked
            .contains(&target)
            .then(|| self.replaced_line(&target))
    }

    /// The line of a command stopped because `path`, which appeared or was written while
    /// it ran, is a secret its sandbox does not cover; `None` when it is not one.
    fn appeared_line(&self, path: &Path) -> Option<String> {
        let name = path.file_name()?.to_str()?;
        if self.unmask_all
            || !self.shared.report().is_active(MOUNT)
            || !crate::secret_file::worth_judging(name)
            || self.masking.masked.iter().any(|m| m == path)
        {
            return None;
        }
        if let Some(line) = self.rewritten_line(path) {
            return Some(line);
        }
        let judged = masking::decide(&self.dir, &[path.to_path_buf()], &[], &self.unmask, false);
        (!judged.masked.is_empty()).then(|| {
            stopped_line(&format!(
                "the secret {} appeared",
                masking::shown(&self.dir, path)
            ))
        })
    }

    /// Starts the guard of a command started as group `pgid` with this plan (see
    /// [`guard`]); `long_lived`: a supervised command (a monitor, a background job).
    pub fn guard(
        self: &std::sync::Arc<Self>,
        pgid: libc::pid_t,
        long_lived: bool,
    ) -> Option<guard::Guard> {
        guard::start(self, pgid, long_lived)
    }

    /// Records why the guard stopped the command (the first reason wins).
    fn stop_with(&self, line: String) {
        let mut stopped = self.stopped.lock().unwrap_or_else(|e| e.into_inner());
        stopped.get_or_insert(line);
    }

    /// Why the guard stopped the command, when it did: the line for its result.
    pub fn stopped_line(&self) -> Option<String> {
        self.stopped
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// The lines a result adds about the masking: the secrets git tracks, which are not
    /// masked (once per file), and the masked secrets the command opened (read as empty).
    pub fn masking_lines(&self) -> Vec<String> {
        let mut lines: Vec<String> = self.masking.tracked_notice(&self.dir).into_iter().collect();
        let report = self.shared.report();
        if let Some(opens) = &self.mask_opens
            && report.is_active(MASK)
        {
            let read: Vec<String> = opens
                .opened()
                .into_iter()
                .filter_map(|i| self.masking.masked.get(i))
                .map(|p| masking::shown(&self.dir, p))
                .collect();
            if !read.is_empty() {
                let patterns: Vec<Value> = read.iter().map(|p| json!(p)).collect();
                lines.push(format!(
                    "[sandbox: the command read {} as empty: secret files git does not track are masked for commands; to show them, allow the command with a secret-shell rule ({{\"permission\": \"secret-shell\", \"pattern\": \"<the command>\", \"action\": \"allow\"}}) or add \"sandbox\": {{\"unmask\": {}}} to the user policy]",
                    read.join(", "),
                    Value::Array(patterns)
                ));
            }
        }
        lines
    }

    /// The explanatory line for a failed command that did not find a path under `/tmp`
    /// that exists on the host: inside the sandbox `/tmp` is the project's own.
    pub fn explain_private_tmp(
        &self,
        captures: &[&crate::truncate::Capture],
        command: &str,
    ) -> Option<String> {
        let private = self.private_tmp.as_ref()?;
        let text = kept_text(captures);
        if !text.to_lowercase().contains("no such file or directory") {
            return None;
        }
        let hidden = text
            .split(|c: char| c.is_whitespace() || "'\"`‘’:,()".contains(c))
            .chain(command.split(|c: char| c.is_whitespace() || "'\"`;|&()<>".contains(c)))
            .filter(|word| word.starts_with("/tmp/"))
            .map(Path::new)
            .find(|path| !private_tmp::visible(Some(private), path) && path.exists())?;
        Some(format!(
            "[sandbox: /tmp inside the sandbox is the project's own (.tinytool/tmp, kept across calls), so the host's {} is not there; add it to \"sandbox\": {{\"writable\": [...]}} (or a socket to \"sockets\") in the user policy to see it]",
            hidden.display()
        ))
    }

    /// The explanatory line for a failed command whose connection was refused (a client
    /// that does not print the path) when its command line names a socket the sandbox
    /// covered.
    pub fn explain_refused_socket(
        &self,
        captures: &[&crate::truncate::Capture],
        command: &str,
    ) -> Option<String> {
        let lower = kept_text(captures).to_lowercase();
        if !(lower.contains("connection refused") || lower.contains("econnrefused")) {
            return None;
        }
        self.sockets
            .iter()
            .map(|c| String::from_utf8_lossy(c.as_bytes()).into_owned())
            .find(|socket| command.contains(socket.as_str()))
            .map(|socket| explain::socket_line(&socket))
    }

    /// The explanatory line for a failed command that said nothing recognisable (`curl -s`)
    /// when the network is off and the command line itself reaches for it (a URL,
    /// `/dev/tcp`, a network client).
    pub fn explain_quiet_network(&self, command: &str) -> Option<String> {
        (self.network_was_off() && explain::reaches_for_network(command))
            .then(|| explain::NETWORK_OFF.to_string())
    }

    /// The explanatory last line for a failed command whose output (or its end) is `text`.
    pub fn explain_text(&self, text: &str) -> Option<String> {
        let report = self.shared.report();
        let landlock = report.is_active(LANDLOCK);
        if !report.is_active(MOUNT) && !report.is_active(NET) && !landlock {
            return None;
        }
        let names = |list: &[CString]| -> Vec<String> {
            list.iter()
                .filter_map(|c| {
                    let path = Path::new(std::ffi::OsStr::from_bytes(c.as_bytes()));
                    path.file_name().map(|n| n.to_string_lossy().into_owned())
                })
                .collect()
        };
        // A protected path is recognised as commands print it: in full, as its last two
        // components (`.git/hooks`, `.config/tinytool`), or by a dot-name of its own
        // (`.git`, `.tinytool`), never by a bare `config` or `hooks`, which any path has.
        let mut protected = Vec::new();
        for c in self.protected.iter().chain(&self.anchors) {
            let path = Path::new(std::ffi::OsStr::from_bytes(c.as_bytes()));
            protected.push(path.display().to_string());
            let tail: Vec<_> = path.components().rev().take(2).collect();
            if let [last, before] = tail.as_slice() {
                let two = Path::new(before.as_os_str()).join(last.as_os_str());
                protected.push(two.display().to_string());
            }
            if let Some(name) = path.file_name().map(|n| n.to_string_lossy())
                && name.starts_with('.')
            {
                protected.push(name.into_owned());
            }
        }
        let read_only_parent = || {
            // A path the command failed to make that does not exist and lies outside the
            // writable set: its parent is read-only here, whatever the error said.
            let path = explain::made_path(text)?;
            (report.is_active(MOUNT)
                && !under_any(&path, &self.writable)
                && std::fs::symlink_metadata(&path).is_err())
            .then(|| explain::read_only_line(&path))
        };
        explain::explain(
            text,
            self.network_was_off(),
            landlock,
            &names(&self.masked),
            &protected,
            &self
                .sockets
                .iter()
                .map(|c| String::from_utf8_lossy(c.as_bytes()).into_owned())
                .collect::<Vec<_>>(),
        )
        .or_else(read_only_parent)
    }
}
