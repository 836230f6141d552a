//! The call's side of a broker: find it by its socket, start it when none answers, ask
//! one question and read one answer within a bound, giving up early when the call is
//! cancelled.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::broker::{SPEC_VAR, SUBCOMMAND, Spec};
use super::exchange::Ask;
use crate::session::CancelFlag;

/// How long a starting broker has to answer its handshake.
const HANDSHAKE_WAIT: Duration = Duration::from_secs(10);
/// The longest socket path bound or connected to directly (a socket address holds 108
/// bytes); a longer one goes through its folder's descriptor.
const DIRECT_PATH: usize = 100;
/// The largest answer read.
const MAX_ANSWER: u64 = 64 * 1024 * 1024;

/// Runs `f` on `path`, or, when the path is too long for a socket address, on the same
/// file named through a descriptor of its folder (`/proc/self/fd/N/NAME`).
pub fn through_folder<T>(path: &Path, f: impl FnOnce(&Path) -> io::Result<T>) -> io::Result<T> {
    if path.as_os_str().len() <= DIRECT_PATH {
        return f(path);
    }
    let (Some(folder), Some(name)) = (path.parent(), path.file_name()) else {
        return f(path);
    };
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::OpenOptionsExt;
    let handle = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECTORY | libc::O_PATH)
        .open(folder)?;
    let short = Path::new("/proc/self/fd")
        .join(handle.as_raw_fd().to_string())
        .join(name);
    f(&short)
}

/// Asks the broker of `spec` (starting it when none answers) and returns its answer, or
/// why there is none. Gives up at `deadline` or when `cancel` is set.
pub fn ask(
    spec: &Spec,
    sandbox: &crate::sandbox_settings::Settings,
    question: &Ask,
    deadline: Instant,
    cancel: Option<&CancelFlag>,
) -> Result<serde_json::Value, String> {
    let stream = match connect(&spec.socket) {
        Ok(stream) => stream,
        Err(_) => {
            start(spec, sandbox)?;
            connect(&spec.socket)
                .map_err(|err| format!("cannot reach the {} broker: {err}", spec.server))?
        }
    };
    exchange(stream, question, deadline, cancel)
}

/// Asks a broker that runs already (status, stop); `None` when none answers.
pub fn ask_running(socket: &Path, question: &Ask, wait: Duration) -> Option<serde_json::Value> {
    let stream = connect(socket).ok()?;
    exchange(stream, question, Instant::now() + wait, None).ok()
}

fn connect(socket: &Path) -> io::Result<UnixStream> {
    through_folder(socket, |p| UnixStream::connect(p))
}

fn exchange(
    stream: UnixStream,
    question: &Ask,
    deadline: Instant,
    cancel: Option<&CancelFlag>,
) -> Result<serde_json::Value, String> {
    let line = serde_json::to_string(question).map_err(|e| e.to_string())?;
    let mut writer = &stream;
    writer
        .write_all(format!("{line}\n").as_bytes())
        .map_err(|err| format!("the broker went away: {err}"))?;
    let mut reader = BufReader::new(Read::take(&stream, MAX_ANSWER));
    let mut answer = Vec::new();
    loop {
        let now = Instant::now();
        if now >= deadline {
            return Err("the broker did not answer in time".to_string());
        }
        if cancel.is_some_and(CancelFlag::is_set) {
            return Err("the call was cancelled".to_string());
        }
        let _ = stream.set_read_timeout(Some((deadline - now).min(Duration::from_millis(100))));
        match reader.read_until(b'\n', &mut answer) {
            Ok(0) => return Err("the broker closed the connection".to_string()),
            Ok(_) if answer.ends_with(b"\n") => break,
            Ok(_) => {}
            Err(err)
                if matches!(
                    err.kind(),
                    io::ErrorKind::WouldBlock
                        | io::ErrorKind::TimedOut
                        | io::ErrorKind::Interrupted
                ) => {}
            Err(err) => return Err(format!("the broker went away: {err}")),
        }
    }
    serde_json::from_slice(&answer).map_err(|err| format!("the broker's answer is broken: {err}"))
}

/// Starts a broker for `spec`, detached from this process's session and standard streams,
/// and waits for its handshake (`ok`, or `busy` when another won the race).
fn start(spec: &Spec, sandbox: &crate::sandbox_settings::Settings) -> Result<(), String> {
    let encoded = serde_json::to_string(spec).map_err(|e| e.to_string())?;
    let mut command = Command::new("/proc/self/exe");
    command
        .arg0("tinytool")
        .arg(SUBCOMMAND)
        .current_dir(&spec.dir)
        .env(SPEC_VAR, encoded)
        .env(crate::sandbox_settings::SETTINGS_VAR, sandbox.encode())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let (_, answer) = crate::background::start_detached(command, HANDSHAKE_WAIT)
        .map_err(|err| format!("cannot start the {} broker: {err}", spec.server))?;
    match answer.as_deref() {
        Some("ok") | Some("busy") => Ok(()),
        Some(other) => Err(format!(
            "the {} broker could not start: {}",
            spec.server,
            other.strip_prefix("error: ").unwrap_or(other)
        )),
        None => Err(format!("the {} broker did not start in time", spec.server)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_socket_deeper_than_an_address_holds_is_reached_through_its_folder() {
        let tmp = tempfile::tempdir().unwrap();
        let deep = tmp.path().join("d".repeat(60)).join("e".repeat(60));
        std::fs::create_dir_all(&deep).unwrap();
        let socket = deep.join("x.sock");
        assert!(socket.as_os_str().len() > 108);
        let listener =
            through_folder(&socket, |p| std::os::unix::net::UnixListener::bind(p)).unwrap();
        assert!(socket.exists());
        let _client = connect(&socket).unwrap();
        assert!(listener.accept().is_ok());
    }
}
