//! Test-only: from inside a confined worker, try each forbidden thing for real.
//!
//! The worker calls [`run`] only when the operator's test bypass allows probes (see
//! [`super::bypass`]). Each attempt is recorded as `Ok(())` when the forbidden thing
//! *succeeded* (a breach) or `Err(text)` with the operating system's error when it was denied.
//!
//! Some attempts cannot report their outcome in the usual way: a successful in-place `execve`
//! replaces the worker, so the reply never comes (the caller sees the pipe close, which a test
//! must treat as a breach unless the worker died of SIGSYS); the calls seccomp's kill filter
//! takes (a new process, `execve`, `ptrace`) end the worker with SIGSYS before they happen, so a
//! test sends each of them alone; a successful SIGTERM to the given pid reaches that process,
//! which a test sees when the process is its own.

use std::ffi::CString;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::os::unix::net::UnixStream;
use std::time::Duration;

use nix::sys::ptrace;
use nix::sys::signal::{Signal, kill};
use nix::unistd::{Pid, execv};

use crate::protocol::{ProbeReport, ProbeRequest};

/// How long a TCP connect may take before it counts as denied (a listener the test opened on
/// loopback answers at once).
const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);

/// Try everything `req` asks for, in order, and report each outcome. `parent_pid`: the parent
/// confinement's step 2 found (`getppid()`, checked against the pid the worker was given): the
/// worker's own filter does not let it ask again.
///
/// An entry of `req.connect` is `host:port` (a numeric socket address: no name resolution, which
/// would itself need the network), `unix:/path` for a pathname unix socket or `unix:@name` for
/// an abstract one.
pub fn run(req: &ProbeRequest, parent_pid: i32) -> ProbeReport {
    let mut attempts = Vec::new();
    for path in &req.read_files {
        attempts.push((format!("read file {path}"), read_file(path)));
    }
    for dir in &req.list_dirs {
        attempts.push((format!("list directory {dir}"), list_dir(dir)));
    }
    for path in &req.write_files {
        attempts.push((format!("create and write file {path}"), write_file(path)));
    }
    for path in &req.truncate_files {
        attempts.push((format!("truncate(2) file {path}"), truncate_by_name(path)));
        attempts.push((
            format!("open file {path} read-only with O_TRUNC"),
            truncate_by_open(path),
        ));
    }
    for target in &req.connect {
        attempts.push((format!("connect to {target}"), connect(target)));
    }
    for program in &req.spawn {
        attempts.push((format!("spawn {program}"), spawn(program)));
    }
    for program in &req.exec {
        attempts.push((format!("execve {program} in place"), exec_in_place(program)));
    }
    if let Some(pid) = req.signal_pid {
        attempts.push((format!("signal 0 to pid {pid}"), signal(pid, None)));
        attempts.push((
            format!("SIGTERM to pid {pid}"),
            signal(pid, Some(Signal::SIGTERM)),
        ));
    }
    if let Some(pid) = req.ptrace_pid {
        attempts.push((format!("ptrace attach to pid {pid}"), ptrace_attach(pid)));
    }
    ProbeReport {
        attempts,
        pid: std::process::id() as i32,
        parent_pid,
    }
}

// Each attempt's error stays a `String` on purpose: it is the operating system's own words,
// carried in `ProbeReport` for a person reading a breach report; tests look only at whether an
// attempt succeeded.

fn read_file(path: &str) -> Result<(), String> {
    let mut file = std::fs::File::open(path).map_err(|e| e.to_string())?;
    let mut first = [0u8; 1];
    file.read(&mut first).map(|_| ()).map_err(|e| e.to_string())
}

fn list_dir(dir: &str) -> Result<(), String> {
    let mut entries = std::fs::read_dir(dir).map_err(|e| e.to_string())?;
    match entries.next() {
        Some(Err(e)) => Err(e.to_string()),
        Some(Ok(_)) | None => Ok(()),
    }
}

fn write_file(path: &str) -> Result<(), String> {
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .open(path)
        .map_err(|e| e.to_string())?;
    file.write_all(b"written from inside the sandbox\n")
        .map_err(|e| e.to_string())
}

/// `truncate(path, 0)`: an attempt that succeeds destroys the file's content.
fn truncate_by_name(path: &str) -> Result<(), String> {
    nix::unistd::truncate(path, 0).map_err(|e| e.to_string())
}

/// `open(path, O_RDONLY | O_TRUNC)`: the kernel truncates on a read-only open when the user may
/// write the file, which landlock below ABI 3 does not see.
fn truncate_by_open(path: &str) -> Result<(), String> {
    nix::fcntl::open(
        path,
        nix::fcntl::OFlag::O_RDONLY | nix::fcntl::OFlag::O_TRUNC,
        nix::sys::stat::Mode::empty(),
    )
    .map(drop)
    .map_err(|e| e.to_string())
}

fn connect(target: &str) -> Result<(), String> {
    if let Some(name) = target.strip_prefix("unix:@") {
        use std::os::linux::net::SocketAddrExt;
        let address =
            std::os::unix::net::SocketAddr::from_abstract_name(name).map_err(|e| e.to_string())?;
        return UnixStream::connect_addr(&address)
            .map(drop)
            .map_err(|e| e.to_string());
    }
    if let Some(path) = target.strip_prefix("unix:") {
        return UnixStream::connect(path)
            .map(drop)
            .map_err(|e| e.to_string());
    }
    let addr: SocketAddr = target
        .parse()
        .map_err(|e| format!("not a numeric host:port ({e})"))?;
    TcpStream::connect_timeout(&addr, CONNECT_TIMEOUT)
        .map(drop)
        .map_err(|e| e.to_string())
}

fn spawn(program: &str) -> Result<(), String> {
    std::process::Command::new(program)
        .arg("-c")
        .arg("exit 0")
        .status()
        .map(drop)
        .map_err(|e| e.to_string())
}

/// `execve` straight from the worker, without creating a process first, so the attempt reaches
/// the exec rules even if process creation is refused earlier.
fn exec_in_place(program: &str) -> Result<(), String> {
    let path = CString::new(program).map_err(|e| e.to_string())?;
    let argv = [path.clone(), c"-c".into(), c"exit 0".into()];
    match execv(&path, &argv) {
        Err(errno) => Err(errno.to_string()),
        // `execv` only returns on failure; its Ok type is uninhabited.
        Ok(never) => match never {},
    }
}

fn signal(pid: i32, signal: Option<Signal>) -> Result<(), String> {
    kill(Pid::from_raw(pid), signal).map_err(|e| e.to_string())
}

fn ptrace_attach(pid: i32) -> Result<(), String> {
    let pid = Pid::from_raw(pid);
    ptrace::attach(pid).map_err(|e| e.to_string())?;
    // A breach: let go at once so the traced process carries on.
    let _ = ptrace::detach(pid, None);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Unconfined, the probe must see the forbidden things succeed: otherwise a denial test
    /// built on it could pass without any sandbox.
    #[test]
    fn unconfined_probe_reports_success_for_reads_writes_listing_and_connects() {
        let dir = std::env::temp_dir().join(format!("duckgate-probe-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let secret = dir.join("secret.txt");
        std::fs::write(&secret, "secret").unwrap();
        let doomed = dir.join("doomed.txt");
        std::fs::write(&doomed, "content").unwrap();
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let abstract_name = format!("duckgate-probe-{}", std::process::id());
        let abstract_listener = {
            use std::os::linux::net::SocketAddrExt;
            let address =
                std::os::unix::net::SocketAddr::from_abstract_name(&abstract_name).unwrap();
            std::os::unix::net::UnixListener::bind_addr(&address).unwrap()
        };
        let request = ProbeRequest {
            read_files: vec![secret.display().to_string()],
            list_dirs: vec![dir.display().to_string()],
            write_files: vec![dir.join("new.txt").display().to_string()],
            truncate_files: vec![doomed.display().to_string()],
            connect: vec![
                listener.local_addr().unwrap().to_string(),
                format!("unix:@{abstract_name}"),
            ],
            ..ProbeRequest::default()
        };
        let report = run(&request, nix::unistd::getppid().as_raw());
        let doomed_len = std::fs::metadata(&doomed).unwrap().len();
        drop(abstract_listener);
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(doomed_len, 0, "the truncations really truncate");
        assert_eq!(report.attempts.len(), 7);
        for (what, outcome) in &report.attempts {
            assert_eq!(outcome, &Ok(()), "{what}");
        }
    }

    #[test]
    fn missing_file_and_bad_address_are_reported_as_errors() {
        let request = ProbeRequest {
            read_files: vec!["/nonexistent/duckgate/secret".into()],
            connect: vec!["not-an-address".into()],
            ..ProbeRequest::default()
        };
        let report = run(&request, nix::unistd::getppid().as_raw());
        assert!(report.attempts.iter().all(|(_, outcome)| outcome.is_err()));
    }
}
