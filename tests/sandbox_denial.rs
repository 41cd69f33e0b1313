//! The sandbox on its own: landlock + seccomp + rlimits in a real worker process.
//!
//! Each test spawns the real binary in its worker mode with the validator and DuckDB's
//! hardening switched off (`DUCKGATE_UNSAFE_TEST_BYPASS`), so nothing above the sandbox stands
//! in the way, then asks the confined worker to try forbidden things for real
//! (`Request::Probe`) and checks that every one was denied. Positive controls run the same
//! attempts from the unconfined test process and see them succeed, so a denial cannot come
//! from the environment (a missing file, a closed port, a kernel without ptrace) instead of the
//! sandbox.
#![cfg(feature = "engine")]

mod mcp_support;
use mcp_support::TempDir;

use std::io::Read;
use std::net::TcpListener;
use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use duckgate::protocol::{Posture, ProbeReport, ProbeRequest, Request, Response};
use duckgate::sandbox::frame::{read_frame, write_frame};
use duckgate::sandbox::worker::{WorkerArgs, WorkerStart};

/// Largest reply a test accepts.
const MAX_REPLY: usize = 16 << 20;

/// The served database, and things elsewhere in the temp dir the worker must not reach.
struct Scene {
    _served: TempDir,
    _elsewhere: TempDir,
    db: PathBuf,
    db_bytes: Vec<u8>,
    /// A secret file in another directory of the temp dir.
    secret: PathBuf,
    /// A directory with an entry in it.
    listed_dir: PathBuf,
    /// Files that do not exist yet: beside the database, elsewhere, and in the temp dir root.
    new_files: Vec<PathBuf>,
    /// A loopback TCP listener (the kernel completes connects on its backlog; no accept
    /// needed).
    tcp: TcpListener,
    /// A pathname unix socket, like a container runtime's or D-Bus's.
    unix_path: PathBuf,
    _unix: UnixListener,
}

fn scene(tag: &str) -> Scene {
    let served = TempDir::in_system_temp(&format!("{tag}-served"));
    let elsewhere = TempDir::in_system_temp(&format!("{tag}-elsewhere"));
    let db = served.path().join("served.duckdb");
    {
        let conn = duckdb::Connection::open(&db).unwrap();
        conn.execute_batch(
            "CREATE TABLE readings AS SELECT i AS id, 100 + i AS glucose FROM range(5) r(i);",
        )
        .unwrap();
        conn.close().map_err(|(_, e)| e).unwrap();
    }
    let db_bytes = std::fs::read(&db).unwrap();
    let secret = elsewhere.path().join("secret.txt");
    std::fs::write(&secret, "api_key=s3cr3t\n").unwrap();
    let new_files = vec![
        served.path().join("dropped-beside-db.txt"),
        elsewhere.path().join("dropped-elsewhere.txt"),
        std::env::temp_dir().join(format!(
            "duckgate-sandbox-{tag}-{}-dropped",
            std::process::id()
        )),
    ];
    let tcp = TcpListener::bind("127.0.0.1:0").unwrap();
    let unix_path = elsewhere.path().join("daemon.sock");
    let unix = UnixListener::bind(&unix_path).unwrap();
    Scene {
        listed_dir: elsewhere.path().to_path_buf(),
        _served: served,
        _elsewhere: elsewhere,
        db,
        db_bytes,
        secret,
        new_files,
        tcp,
        unix_path,
        _unix: unix,
    }
}

fn text(path: &Path) -> String {
    path.to_str().unwrap().to_string()
}

/// A worker spawned in its hidden mode, killed on drop.
struct Worker {
    child: Child,
    stdin: ChildStdin,
    stdout: ChildStdout,
    /// Everything the worker wrote on stderr, once it has exited.
    stderr: mpsc::Receiver<String>,
    /// Dropping this stops the watchdog.
    _watchdog: mpsc::Sender<()>,
}

impl Worker {
    /// Spawn a worker on `db` with `bypass` as the test switch, as the server would (cleared
    /// environment, the test process as its parent).
    fn spawn(db: &Path, bypass: &str) -> Worker {
        // The worker's command line as the pool writes it (its one owner: `WorkerArgs`).
        let args = WorkerArgs {
            db: db.to_path_buf(),
            memory_limit: "512MB".into(),
            threads: 2,
            time_zone: "UTC".into(),
            cpu_seconds: 30,
            address_space_bytes: 8 << 30,
            parent_pid: std::process::id() as i32,
            allow_unconfined: false,
            start: WorkerStart::OnDemand,
        };
        let mut child = Command::new(env!("CARGO_BIN_EXE_duckgate"))
            .args(args.to_argv())
            .env_clear()
            .env("DUCKGATE_UNSAFE_TEST_BYPASS", bypass)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            // A pipe, not the harness's stderr: the worker may not grow files (RLIMIT_FSIZE 0).
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn the duckgate worker");
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let mut err_pipe = child.stderr.take().unwrap();
        let (err_tx, stderr) = mpsc::channel();
        std::thread::spawn(move || {
            let mut all = String::new();
            let _ = err_pipe.read_to_string(&mut all);
            let _ = err_tx.send(all);
        });
        // A hung worker must fail the test, not hang it.
        let (watchdog, stop) = mpsc::channel::<()>();
        let pid = child.id() as i32;
        std::thread::spawn(move || {
            if let Err(mpsc::RecvTimeoutError::Timeout) = stop.recv_timeout(Duration::from_secs(60))
            {
                let _ = nix::sys::signal::kill(
                    nix::unistd::Pid::from_raw(pid),
                    nix::sys::signal::Signal::SIGKILL,
                );
            }
        });
        Worker {
            child,
            stdin,
            stdout,
            stderr,
            _watchdog: watchdog,
        }
    }

    fn pid(&self) -> i32 {
        self.child.id() as i32
    }

    /// The "ready" frame: the posture the worker confined itself to.
    fn ready(&mut self) -> Posture {
        match read_frame::<Response, _>(&mut self.stdout, MAX_REPLY) {
            Ok(Response::Posture(posture)) => posture,
            other => panic!(
                "worker did not report ready: {other:?}; stderr: {}",
                self.stderr_text()
            ),
        }
    }

    fn ask(&mut self, request: &Request) -> Response {
        write_frame(&mut self.stdin, request).expect("send the request");
        match read_frame::<Response, _>(&mut self.stdout, MAX_REPLY) {
            Ok(response) => response,
            // A successful in-place execve replaces the worker: no reply ever comes.
            Err(e) => panic!(
                "no reply from the worker ({e}); stderr: {}",
                self.stderr_text()
            ),
        }
    }

    fn stderr_text(&mut self) -> String {
        let _ = self.child.kill();
        let _ = self.child.wait();
        self.stderr
            .recv_timeout(Duration::from_secs(5))
            .unwrap_or_default()
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A `Name:\tvalue` line of `/proc/<pid>/status`.
fn status_field(pid: i32, name: &str) -> String {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|line| {
            line.strip_prefix(name)?
                .strip_prefix(':')
                .map(|v| v.trim().to_string())
        })
        .unwrap_or_else(|| panic!("no {name} in /proc/{pid}/status"))
}

/// Every forbidden thing the worker will be asked to try; `parent` is the test process.
fn attack(scene: &Scene, parent: i32) -> ProbeRequest {
    ProbeRequest {
        read_files: vec![
            text(&scene.secret),
            "/etc/passwd".into(),
            format!("/proc/{parent}/environ"),
        ],
        list_dirs: vec![text(&scene.listed_dir), "/tmp".into(), "/".into()],
        write_files: scene
            .new_files
            .iter()
            .map(|p| text(p))
            // Overwriting the database it may read must fail too.
            .chain([text(&scene.db)])
            .collect(),
        connect: vec![
            scene.tcp.local_addr().unwrap().to_string(),
            format!("unix:{}", text(&scene.unix_path)),
        ],
        exec: vec!["/bin/sh".into()],
        signal_pid: Some(parent),
        ptrace_pid: Some(parent),
    }
}

fn describe(report: &ProbeReport) -> String {
    report
        .attempts
        .iter()
        .map(|(what, outcome)| format!("\n  {what}: {outcome:?}"))
        .collect()
}

#[test]
fn confined_worker_is_denied_every_forbidden_attempt() {
    let scene = scene("deny");
    let parent = std::process::id() as i32;
    let mut worker = Worker::spawn(&scene.db, "validator,duckdb_hardening,probe");
    let posture = worker.ready();

    // While it waits for its request, the kernel's view of the worker.
    assert_eq!(status_field(worker.pid(), "NoNewPrivs"), "1");
    assert_eq!(
        status_field(worker.pid(), "Seccomp"),
        "2",
        "2 = filter mode"
    );
    assert_eq!(posture.landlock, "fully_enforced", "{posture:?}");
    assert!(posture.landlock_abi.unwrap_or(0) >= 6, "{posture:?}");
    assert!(posture.seccomp && posture.no_new_privs, "{posture:?}");
    assert!(
        posture
            .rlimits
            .contains(&("RLIMIT_FSIZE".into(), "0".into())),
        "{posture:?}"
    );
    assert!(
        posture
            .rlimits
            .contains(&("RLIMIT_CORE".into(), "0".into())),
        "{posture:?}"
    );
    let limits = std::fs::read_to_string(format!("/proc/{}/limits", worker.pid())).unwrap();
    assert!(
        limits
            .lines()
            .any(|l| l.starts_with("Max file size") && l.contains(" 0 ")),
        "{limits}"
    );

    let mut request = attack(&scene, parent);
    // The one thing it may do, as a control inside the sandbox: read the database.
    request.read_files.push(text(&scene.db));
    let expected_attempts = request.read_files.len()
        + request.list_dirs.len()
        + request.write_files.len()
        + request.connect.len()
        + 2 * request.exec.len()
        + 2
        + 1;
    let report = match worker.ask(&Request::Probe(request)) {
        Response::Probe(report) => report,
        other => panic!("expected a probe report, got {other:?}"),
    };
    eprintln!("probe report:{}", describe(&report));
    assert_eq!(
        report.attempts.len(),
        expected_attempts,
        "{}",
        describe(&report)
    );

    let db_read = format!("read file {}", text(&scene.db));
    for (what, outcome) in &report.attempts {
        if *what == db_read {
            assert_eq!(outcome, &Ok(()), "the database must stay readable");
        } else {
            assert!(
                outcome.is_err(),
                "BREACH: {what} succeeded inside the sandbox"
            );
        }
    }
    // And nothing changed on disk.
    for file in &scene.new_files {
        assert!(!file.exists(), "{} was created", file.display());
    }
    assert_eq!(
        std::fs::read(&scene.db).unwrap(),
        scene.db_bytes,
        "the database was modified"
    );
    let status = worker.child.wait().unwrap();
    assert!(status.success(), "worker exit: {status:?}");
}

/// The same attempts from the unconfined test process succeed: the denials above are the
/// sandbox's doing, not the environment's.
#[test]
fn unconfined_control_the_same_attempts_succeed_outside_the_sandbox() {
    let scene = scene("control");
    let parent = std::process::id() as i32;
    let mut request = attack(&scene, parent);
    // The probe in this process: reads, listings, writes, connects. (Exec, signals and ptrace
    // are checked below without the probe: an in-place execve would replace the test binary.)
    request.write_files.retain(|f| *f != text(&scene.db));
    request.exec.clear();
    request.signal_pid = None;
    request.ptrace_pid = None;
    let report = duckgate::sandbox::probe::run(&request);
    assert_eq!(
        report.attempts.len(),
        3 + 3 + 3 + 2,
        "{}",
        describe(&report)
    );
    for (what, outcome) in &report.attempts {
        assert_eq!(outcome, &Ok(()), "control failed: {what}");
    }
    for file in &scene.new_files {
        assert!(file.exists(), "{} was not created", file.display());
        std::fs::remove_file(file).unwrap();
    }

    // Exec works here.
    let status = Command::new("/bin/sh")
        .args(["-c", "exit 0"])
        .status()
        .unwrap();
    assert!(status.success());
    // Signal 0 reaches the process the worker tried to signal.
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(parent), None).unwrap();
    // ptrace works here: attach to an unconfined process of the same user.
    let mut sleeper = Command::new("/bin/sleep").arg("30").spawn().unwrap();
    let sleeper_pid = nix::unistd::Pid::from_raw(sleeper.id() as i32);
    nix::sys::ptrace::attach(sleeper_pid).expect("control: ptrace attach");
    let _ = nix::sys::wait::waitpid(sleeper_pid, None);
    nix::sys::ptrace::detach(sleeper_pid, None).unwrap();
    sleeper.kill().unwrap();
    sleeper.wait().unwrap();
}

/// The confinement is not so tight that DuckDB stops working: a confined, hardened worker
/// answers a query on the real database (DuckDB reads its cgroup files at start-up; see
/// `src/sandbox/confine/landlock.rs`).
#[test]
fn confined_worker_still_answers_a_query() {
    let scene = scene("query");
    let mut worker = Worker::spawn(&scene.db, "");
    let posture = worker.ready();
    assert_eq!(posture.landlock, "fully_enforced", "{posture:?}");
    assert_eq!(status_field(worker.pid(), "Seccomp"), "2");
    let request = Request::Query {
        sql: "SELECT count(*) AS n, max(glucose) AS top FROM readings".into(),
        limit: 10,
        max_bytes: 1 << 20,
        privacy: Default::default(),
    };
    match worker.ask(&request) {
        Response::Rows(rows) => {
            assert_eq!(rows.row_count, 1);
            assert_eq!(serde_json::to_string(&rows.rows).unwrap(), "[[5,104]]");
        }
        other => panic!(
            "expected rows, got {other:?}; stderr: {}",
            worker.stderr_text()
        ),
    }
}

/// Probes are refused unless the test switch allows them, so this attack surface does not
/// exist in production.
#[test]
fn probe_is_refused_without_the_test_switch() {
    let scene = scene("no-probe");
    let mut worker = Worker::spawn(&scene.db, "");
    worker.ready();
    let request = Request::Probe(ProbeRequest {
        read_files: vec![text(&scene.secret)],
        ..ProbeRequest::default()
    });
    match worker.ask(&request) {
        Response::Error(e) => assert!(e.message.contains("test-only"), "{e:?}"),
        other => panic!("expected a refusal, got {other:?}"),
    }
}
