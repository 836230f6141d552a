//! The harness every integration test uses: a clean room (temporary directory, scrubbed
//! environment, private HOME and config directory) and a runner for the real binary that
//! feeds stdin and parses the JSON result.

#![allow(dead_code)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// A temporary working directory plus a private home, and the environment to run in.
pub struct Room {
    pub tmp: tempfile::TempDir,
    pub dir: PathBuf,
    pub home: PathBuf,
    pub env: Vec<(String, String)>,
}

/// What one run of the binary produced.
#[derive(Debug)]
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    /// stdout parsed as one JSON value.
    pub fn json(&self) -> Value {
        serde_json::from_str(self.stdout.trim()).unwrap_or_else(|e| {
            panic!(
                "stdout is not one JSON value ({e}):\n{}\nstderr:\n{}",
                self.stdout, self.stderr
            )
        })
    }

    /// stdout parsed as JSON lines.
    pub fn lines(&self) -> Vec<Value> {
        self.stdout
            .lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("bad JSON line ({e}): {l}")))
            .collect()
    }

    /// The `output` text of a JSON result.
    pub fn output(&self) -> String {
        self.json()["output"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    }
}

impl Room {
    pub fn new() -> Room {
        let tmp = tempfile::tempdir().expect("tempdir");
        let root = std::fs::canonicalize(tmp.path()).expect("canonical tempdir");
        let dir = root.join("work");
        let home = root.join("home");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::create_dir_all(home.join(".config")).unwrap();
        let env = vec![
            ("HOME".to_string(), home.to_string_lossy().into_owned()),
            (
                "XDG_CONFIG_HOME".to_string(),
                home.join(".config").to_string_lossy().into_owned(),
            ),
            (
                "XDG_STATE_HOME".to_string(),
                home.join(".local/state").to_string_lossy().into_owned(),
            ),
            (
                "PATH".to_string(),
                std::env::var("PATH").unwrap_or_default(),
            ),
            ("LANG".to_string(), "C.UTF-8".to_string()),
        ];
        Room {
            tmp,
            dir,
            home,
            env,
        }
    }

    /// Writes a file under the working directory (parents created).
    pub fn write(&self, rel: &str, content: impl AsRef<[u8]>) -> PathBuf {
        let path = self.dir.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).unwrap();
        }
        std::fs::write(&path, content).unwrap();
        path
    }

    /// Writes a file of the user's tinytool config folder (`$XDG_CONFIG_HOME/tinytool`:
    /// `config.json`, `policy.json`, `skills/…`), parents created.
    pub fn write_user(&self, rel: &str, content: impl AsRef<[u8]>) -> PathBuf {
        let path = self.home.join(".config/tinytool").join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).unwrap();
        }
        std::fs::write(&path, content).unwrap();
        path
    }

    pub fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.dir.join(rel)).unwrap()
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.dir.join(rel)
    }

    /// Sets an environment variable for later runs.
    pub fn set_env(&mut self, key: &str, value: impl AsRef<str>) {
        self.env.retain(|(k, _)| k != key);
        self.env.push((key.to_string(), value.as_ref().to_string()));
    }

    /// The command for the binary in this room (nothing run yet).
    pub fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(bin());
        cmd.args(args);
        self.enter(&mut cmd);
        cmd
    }

    /// Gives any command the room's working directory and clean environment.
    pub fn enter(&self, cmd: &mut Command) {
        cmd.current_dir(&self.dir).env_clear();
        for (k, v) in &self.env {
            cmd.env(k, v);
        }
    }

    /// Runs the binary with `args` and `stdin` (None: stdin is /dev/null).
    pub fn run(&self, args: &[&str], stdin: Option<&str>) -> Run {
        run_command(self.command(args), stdin.map(str::as_bytes))
    }

    /// Runs a direct tool call with a JSON object on stdin.
    pub fn call(&self, tool: &str, args: Value) -> Run {
        self.run(&[tool], Some(&args.to_string()))
    }

    /// Runs one `exec` call.
    pub fn exec(&self, call: Value) -> Run {
        self.run(&["exec"], Some(&call.to_string()))
    }
}

/// Spawns a prepared command with its output piped, feeding `stdin` from a thread (so a
/// child that does not read it cannot block the test), or with stdin at `/dev/null`.
fn spawn_fed(mut cmd: Command, stdin: Option<&[u8]>) -> std::process::Child {
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    cmd.stdin(if stdin.is_some() {
        Stdio::piped()
    } else {
        Stdio::null()
    });
    let mut child = cmd.spawn().expect("spawn tinytool");
    if let Some(input) = stdin {
        let mut pipe = child.stdin.take().unwrap();
        let input = input.to_vec();
        std::thread::spawn(move || {
            let _ = pipe.write_all(&input);
        });
    }
    child
}

/// Runs a prepared command, feeding `stdin`.
pub fn run_command(cmd: Command, stdin: Option<&[u8]>) -> Run {
    let child = spawn_fed(cmd, stdin);
    let out = child.wait_with_output().expect("wait");
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// Runs a prepared command like [`run_command`], but kills it and returns `None` when it has
/// not finished within `limit`: for calls that must not hang (a hang is the defect under
/// test, so the limit is generous and never measured).
pub fn run_command_within(cmd: Command, stdin: Option<&[u8]>, limit: Duration) -> Option<Run> {
    use std::io::Read;
    let mut child = spawn_fed(cmd, stdin);
    let collect = |mut pipe: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            let _ = pipe.read_to_end(&mut bytes);
            String::from_utf8_lossy(&bytes).into_owned()
        })
    };
    let stdout = collect(Box::new(child.stdout.take().unwrap()));
    let stderr = collect(Box::new(child.stderr.take().unwrap()));
    let until = Instant::now() + limit;
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if Instant::now() >= until {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Some(Run {
        code: status.code().unwrap_or(-1),
        stdout: stdout.join().unwrap(),
        stderr: stderr.join().unwrap(),
    })
}

/// The binary under test.
pub fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_tinytool")
}

/// The events an `--events` file holds, one JSON value per line.
pub fn read_events(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("bad event ({e}): {l}")))
        .collect()
}

/// A result with what changes from run to run (the duration) replaced, for snapshots.
pub fn stable(mut result: Value) -> Value {
    if let Some(meta) = result["metadata"].as_object_mut()
        && meta.contains_key("duration_ms")
    {
        meta.insert("duration_ms".into(), json!("[duration]"));
    }
    // The sandbox's layers depend on the machine and the user (a user namespace only
    // when not root); tests/tinytool/sandbox.rs checks them.
    if let Some(sandbox) = result
        .get_mut("metadata")
        .and_then(|m| m.get_mut("sandbox"))
        .and_then(Value::as_object_mut)
    {
        sandbox.insert("layers".into(), json!("[layers]"));
    }
    result
}

/// Replaces a path prefix in a string (for snapshots).
pub fn redact(text: &str, path: &Path, with: &str) -> String {
    text.replace(&path.to_string_lossy().into_owned(), with)
}

/// insta settings that store snapshots in the repository's `snapshots/` folder.
pub fn snapshot_settings() -> insta::Settings {
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path(concat!(env!("CARGO_MANIFEST_DIR"), "/snapshots"));
    settings.set_prepend_module_to_snapshot(false);
    settings
}

/// Asserts a JSON snapshot stored in `snapshots/<name>.snap`.
#[macro_export]
macro_rules! snapshot {
    ($name:expr, $value:expr) => {
        $crate::util::snapshot_settings().bind(|| {
            insta::assert_json_snapshot!($name, $value);
        })
    };
}

/// Asserts a text snapshot stored in `snapshots/<name>.snap`.
#[macro_export]
macro_rules! snapshot_text {
    ($name:expr, $value:expr) => {
        $crate::util::snapshot_settings().bind(|| {
            insta::assert_snapshot!($name, $value);
        })
    };
}

/// A uniquely named `sleep` in the room (≤ 15 characters, the length of a `comm`).
pub fn marked_sleep(room: &Room) -> String {
    static COUNTER: AtomicU32 = AtomicU32::new(0);
    let n = COUNTER.fetch_add(1, Ordering::SeqCst);
    let name = format!("zz{:06}{:02}", std::process::id() % 1_000_000, n % 100);
    let sleep = ["/bin/sleep", "/usr/bin/sleep"]
        .into_iter()
        .find(|p| std::path::Path::new(p).exists())
        .expect("sleep");
    std::os::unix::fs::symlink(sleep, room.path(&name)).unwrap();
    name
}

/// A shell command starting `./SLEEP SECS` out of the command's process group with
/// `setsid` and waiting until it leads a session of its own (field 6 of its
/// `/proc/PID/stat`), so that it has escaped the group before the shell goes on.
pub fn escaped_sleep(sleep: &str, secs: u32) -> String {
    format!(
        "setsid ./{sleep} {secs} >/dev/null 2>&1 & p=$!; \
         until [ \"$(cut -d' ' -f6 /proc/$p/stat)\" = \"$p\" ]; do :; done"
    )
}

/// A shell command starting `./SLEEP SECS` as a daemon that ignores SIGTERM: a subshell
/// forks a `setsid` shell and exits; that shell starts the sleep in the background and
/// exits too, after writing its pid to `daemon.pid`, which the command waits for.
pub fn daemon_sleep(sleep: &str, secs: u32) -> String {
    format!(
        "(setsid sh -c 'trap \"\" TERM; ./{sleep} {secs} >/dev/null 2>&1 & echo $! >daemon.pid' &); \
         until [ -s daemon.pid ]; do :; done"
    )
}

/// Processes (zombies included) whose `comm` is `name`.
pub fn processes_named(name: &str) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        let comm = stat
            .split_once('(')
            .and_then(|(_, rest)| rest.rsplit_once(')'))
            .map(|(comm, _)| comm);
        if comm == Some(name) {
            found.push(stat);
        }
    }
    found
}

/// Waits (boundedly) until no process has that name; returns what is left.
pub fn wait_gone(name: &str, within: Duration) -> Vec<String> {
    let until = Instant::now() + within;
    loop {
        let left = processes_named(name);
        if left.is_empty() || Instant::now() >= until {
            return left;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Living processes (zombies left out) whose `comm` is `name`.
pub fn living_named(name: &str) -> Vec<String> {
    processes_named(name)
        .into_iter()
        .filter(|stat| {
            let state = stat
                .rsplit_once(')')
                .and_then(|(_, rest)| rest.split_whitespace().next());
            !matches!(state, Some("Z" | "X"))
        })
        .collect()
}

/// Starts `cmd` (tinytool) with no input or output, waits (boundedly) until `count`
/// processes named `name` run, kills tinytool with SIGKILL, reaps it and returns what is
/// still alive of them after a bounded wait for them to die. Zombies are not counted:
/// the orphans of a killed tinytool are reaped by init, not by the test.
pub fn survivors_of_sigkill(mut cmd: Command, name: &str, count: usize) -> Vec<String> {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let mut child = cmd.spawn().expect("spawn tinytool");
    let until = Instant::now() + Duration::from_secs(20);
    while living_named(name).len() < count && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(20));
    }
    let started = living_named(name).len();
    child.kill().unwrap();
    let _ = child.wait();
    assert_eq!(
        started, count,
        "the processes named {name} never all started"
    );
    let until = Instant::now() + Duration::from_secs(10);
    loop {
        let left = living_named(name);
        if left.is_empty() || Instant::now() >= until {
            return left;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A TCP listener on the host's loopback (keep it alive while probing) and a shell command
/// that connects to it and prints `reached` when it got through: the probe of the sandbox's
/// network-off tests.
pub fn host_loopback_probe() -> (std::net::TcpListener, String) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let probe = format!(
        "python3 -c \"import socket; socket.create_connection(('127.0.0.1', {port}), 2); \
         print('reached')\""
    );
    (listener, probe)
}

/// Says why a test cannot make its check on this machine (what is missing, and how to get
/// it); the caller then returns. Under `CI` that fails the test instead: a check that did
/// not run proves nothing there. Elsewhere the reason goes to stderr and, when the suite
/// runs through `make test`, to the list of skipped tests it counts at the end (the file
/// named by `TINYTOOL_SKIPPED`).
pub fn skip(why: impl std::fmt::Display) {
    let test = std::thread::current()
        .name()
        .unwrap_or("a test")
        .to_string();
    let why = why.to_string().replace('\n', " ");
    let ci = std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false" && v != "0");
    assert!(
        !ci,
        "{test} cannot make its check here, and CI runs every check: {why}"
    );
    eprintln!("skipped: {why}");
    if let Some(path) = std::env::var_os("TINYTOOL_SKIPPED") {
        use std::io::Write;
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path);
        if let Ok(mut file) = file {
            // One write per line: concurrent tests append whole lines.
            let _ = file.write_all(format!("{test}: {why}\n").as_bytes());
        }
    }
}

/// Where uid 65534 runs a copy of the binary through `setpriv`, for the tests that check
/// the sandbox as an unprivileged user when the tests run as root: a folder it can reach,
/// the copy, a home with `policy` as its user policy, and an empty project (`work`), the
/// last two owned by it.
pub struct Nobody {
    _tmp: tempfile::TempDir,
    pub bin: PathBuf,
    pub home: PathBuf,
    pub work: PathBuf,
}

impl Nobody {
    /// `None`, after saying why, where the tests do not run as root (they ran
    /// unprivileged already) or `setpriv` is missing.
    pub fn new(policy: &str) -> Option<Nobody> {
        // SAFETY: getuid has no preconditions.
        if unsafe { libc::getuid() } != 0 {
            skip("not root, so the tests ran unprivileged already");
            return None;
        }
        if Command::new("setpriv").arg("--version").output().is_err() {
            skip("setpriv is not installed");
            return None;
        }
        use std::os::unix::fs::PermissionsExt;
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        std::fs::set_permissions(&root, std::fs::Permissions::from_mode(0o755)).unwrap();
        let bin = root.join("tinytool");
        std::fs::copy(self::bin(), &bin).unwrap();
        let home = root.join("home");
        std::fs::create_dir_all(home.join(".config/tinytool")).unwrap();
        std::fs::write(home.join(".config/tinytool/policy.json"), policy).unwrap();
        let work = root.join("w");
        std::fs::create_dir_all(&work).unwrap();
        let nobody = Nobody {
            _tmp: tmp,
            bin,
            home,
            work,
        };
        nobody.hand_over();
        Some(nobody)
    }

    /// Gives the home and the project (whatever root made in them since) to uid 65534.
    pub fn hand_over(&self) {
        let chown = Command::new("chown")
            .args(["-R", "65534:65534"])
            .arg(&self.home)
            .arg(&self.work)
            .status()
            .unwrap();
        assert!(chown.success());
    }

    /// `bash --command command` in `dir` as uid 65534, with `env` added to a clean
    /// environment (HOME and PATH).
    pub fn bash(&self, dir: &Path, command: &str, env: &[(&str, &str)]) -> Run {
        let mut cmd = Command::new("setpriv");
        cmd.args(["--reuid=65534", "--regid=65534", "--clear-groups"])
            .arg(&self.bin)
            .arg("--dir")
            .arg(dir)
            .args(["bash", "--command", command])
            .current_dir(dir)
            .env_clear()
            .env("HOME", &self.home)
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .envs(env.iter().copied());
        run_command(cmd, None)
    }

    /// A call of `tool` with `args` (JSON on stdin) in `dir` as uid 65534, with a clean
    /// environment (HOME and PATH).
    pub fn call(&self, dir: &Path, tool: &str, args: &Value) -> Run {
        let mut cmd = Command::new("setpriv");
        cmd.args(["--reuid=65534", "--regid=65534", "--clear-groups"])
            .arg(&self.bin)
            .arg("--dir")
            .arg(dir)
            .arg(tool)
            .current_dir(dir)
            .env_clear()
            .env("HOME", &self.home)
            .env("PATH", std::env::var("PATH").unwrap_or_default());
        run_command(cmd, Some(args.to_string().as_bytes()))
    }

    /// Whether `run` had a user namespace (else why not, said): without one the
    /// unprivileged checks have nothing to check.
    pub fn sandboxed(run: &Run) -> bool {
        let sandbox = run.json()["metadata"]["sandbox"].clone();
        let userns = sandbox["layers"]
            .as_array()
            .is_some_and(|l| l.iter().any(|x| x == "userns"));
        if !userns {
            skip(format!("no user namespace for uid 65534 here: {sandbox}"));
        }
        userns
    }
}

/// Whether bash calls under `room`'s policy get the sandbox's mount layer here (else why
/// not): the sandbox tests skip, saying why, where the machine cannot set it up.
pub fn mount_layer(room: &Room) -> Result<(), String> {
    let run = room.call("bash", serde_json::json!({"command": "true"}));
    if has_mount_layer(&run.json()) {
        Ok(())
    } else {
        Err(format!(
            "no mount layer here: {}",
            run.json()["metadata"]["sandbox"]
        ))
    }
}

/// A room whose user policy is `policy`, where bash calls get the sandbox's mount layer;
/// `None`, after saying why, on a machine that cannot set it up.
pub fn sandboxed_room(policy: &str) -> Option<Room> {
    let room = Room::new();
    room.write_user("policy.json", policy);
    match mount_layer(&room) {
        Ok(()) => Some(room),
        Err(why) => {
            skip(&why);
            None
        }
    }
}

/// Whether a bash result ran with the sandbox's mount layer.
pub fn has_mount_layer(result: &Value) -> bool {
    result["metadata"]["sandbox"]["layers"]
        .as_array()
        .is_some_and(|l| l.iter().any(|x| x == "mount"))
}

/// Starts a monitor, and returns its id.
pub fn start_monitor(room: &Room, command: &str) -> String {
    let started = room.call(
        "monitor",
        serde_json::json!({"action": "start", "command": command}),
    );
    assert_eq!(started.code, 0, "{started:?}");
    started.json()["metadata"]["monitor_id"]
        .as_str()
        .unwrap()
        .to_string()
}

/// A monitor's output until it ends (at most ten seconds).
pub fn until_it_ends(room: &Room, id: &str) -> (String, serde_json::Value) {
    let mut output = String::new();
    for _ in 0..100 {
        let read = room.call(
            "monitor",
            serde_json::json!({"action": "read", "monitor_id": id}),
        );
        output.push_str(&read.output());
        if read.json()["metadata"]["running"] != true {
            return (output, read.json());
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    room.call(
        "monitor",
        serde_json::json!({"action": "stop", "monitor_id": id}),
    );
    panic!("the monitor did not end: {output}");
}

/// Waits until the thread `handle` runs has finished, ten seconds at most (a test then
/// goes on and fails on what the thread returns, never hangs).
pub fn until_finished<T>(handle: &std::thread::JoinHandle<T>) {
    until_done(|| handle.is_finished());
}

/// [`until_finished`] for a scoped thread.
pub fn until_scoped_finished<T>(handle: &std::thread::ScopedJoinHandle<'_, T>) {
    until_done(|| handle.is_finished());
}

fn until_done(finished: impl Fn() -> bool) {
    for _ in 0..500 {
        if finished() {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A PNG of `width` x `height` RGB pixels of noise: incompressible, about three bytes a
/// pixel (1,300 x 1,300 is a 5 MB file).
pub fn noise_png(width: u32, height: u32) -> Vec<u8> {
    let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
    let pixels: Vec<u8> = (0..width as usize * height as usize * 3)
        .map(|_| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed >> 24) as u8
        })
        .collect();
    encode_png(image::RgbImage::from_raw(width, height, pixels).unwrap())
}

/// A PNG of `width` x `height` pixels of one colour (a few hundred bytes).
pub fn plain_png(width: u32, height: u32) -> Vec<u8> {
    encode_png(image::RgbImage::from_pixel(
        width,
        height,
        image::Rgb([40, 90, 200]),
    ))
}

fn encode_png(image: image::RgbImage) -> Vec<u8> {
    let mut bytes = Vec::new();
    let encoder = image::codecs::png::PngEncoder::new_with_quality(
        &mut bytes,
        image::codecs::png::CompressionType::Fast,
        image::codecs::png::FilterType::NoFilter,
    );
    image.write_with_encoder(encoder).unwrap();
    bytes
}

/// A valid PNG header that claims `width` x `height` pixels over a few bytes of data: a
/// decompression bomb's shape (the IHDR's CRC is right, so only the size is wrong).
pub fn bomb_png(width: u32, height: u32) -> Vec<u8> {
    let mut png = plain_png(4, 4);
    png[16..20].copy_from_slice(&width.to_be_bytes());
    png[20..24].copy_from_slice(&height.to_be_bytes());
    let crc = crc32fast::hash(&png[12..29]);
    png[29..33].copy_from_slice(&crc.to_be_bytes());
    png
}

/// The width and height of an image given as base64.
pub fn image_size(base64_data: &str) -> (u32, u32) {
    use base64::Engine;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(base64_data)
        .unwrap();
    let image = image::load_from_memory(&bytes).unwrap();
    (image.width(), image.height())
}

/// Held while a test installs packages into `target/`: the tests run at once, and a second
/// `pip` or `npm` into the same folder would pull the files from under the first one.
pub static INSTALLING: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Cargo's target folder, where tests keep what they install.
pub fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/target")))
}

/// `npm install`s `packages` into `target/<folder>` (with `package_json` as its
/// package.json) unless a marker says they are there; the caller holds [`INSTALLING`].
/// The error says what failed.
pub fn npm_install(folder: &str, packages: &[&str], package_json: &str) -> Result<PathBuf, String> {
    let dir = target_dir().join(folder);
    let marker = dir.join(format!(
        "installed-{}",
        packages.join("+").replace('/', "_")
    ));
    if marker.exists() {
        return Ok(dir);
    }
    std::fs::create_dir_all(&dir).map_err(|err| format!("cannot make {}: {err}", dir.display()))?;
    let _ = std::fs::write(dir.join("package.json"), package_json);
    let out = Command::new("npm")
        .args(["install", "--no-audit", "--no-fund", "--silent"])
        .args(packages)
        .current_dir(&dir)
        .output()
        .map_err(|err| format!("npm could not run: {err}"))?;
    if !out.status.success() {
        return Err(format!(
            "npm install {} failed: {}",
            packages.join(" "),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let _ = std::fs::write(&marker, "");
    Ok(dir)
}
