//! The sandbox on its own: landlock + seccomp + rlimits in a real worker process.
//!
//! Each test spawns the real binary in its worker mode with the validator and DuckDB's
//! hardening switched off (`DUCKGATE_UNSAFE_TEST_BYPASS`), so nothing above the sandbox stands
//! in the way, then asks the confined worker to try forbidden things for real
//! (`Request::Probe`) and checks that every one was denied. Positive controls run the same
//! attempts from the unconfined test process and see them succeed, so a denial cannot come
//! from the environment (a missing file, a closed port, a kernel without ptrace) instead of the
//! sandbox.
//!
//! The same suite runs on this machine's kernel and as each older kernel would confine: the
//! test bypass's `landlock_abi_N` makes the worker handle only landlock ABI `N`'s rights (what
//! Linux 5.13, 5.19, 6.2, 6.7 and 6.10 offer), so seccomp must take over the rest; and under
//! `tests/programs/without_kernel_feature.rs`, whose landlock system calls answer `ENOSYS` as a
//! kernel without landlock does.
use crate::support::TempDir;

use std::io::Read;
use std::net::TcpListener;
use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use duckgate::protocol::worker_args::{WorkerArgs, WorkerStart};
use duckgate::protocol::{LandlockStatus, Posture, ProbeReport, ProbeRequest, Request, Response};
use duckgate::sandbox::frame::{read_frame, write_frame};

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
    /// An abstract unix socket (no file: landlock's filesystem rules never see it), like the
    /// X server's or a desktop session bus's.
    abstract_name: String,
    _abstract: UnixListener,
    /// Workers' temporary directories, as the server lays them out: the worker's own, and a
    /// sibling worker's with a file in it.
    _spill: TempDir,
    own_temp: PathBuf,
    sibling_temp: PathBuf,
    sibling_file: PathBuf,
}

/// DuckDB's max_temp_directory_size of a worker with a temporary directory.
const MAX_TEMP_BYTES: u64 = 64 << 20;

/// Its RLIMIT_FSIZE: a backstop just above that.
const FILE_SIZE_LIMIT: u64 = MAX_TEMP_BYTES + duckgate::sandbox::worker::FILE_SIZE_SLACK_BYTES;

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
    let abstract_name = format!("duckgate-sandbox-{tag}-{}", std::process::id());
    let abstract_listener = {
        use std::os::linux::net::SocketAddrExt;
        let address = std::os::unix::net::SocketAddr::from_abstract_name(&abstract_name).unwrap();
        UnixListener::bind_addr(&address).unwrap()
    };
    let spill = TempDir::in_system_temp(&format!("{tag}-spill"));
    let own_temp = spill.path().join("w-0");
    let sibling_temp = spill.path().join("w-1");
    for dir in [&own_temp, &sibling_temp] {
        std::fs::create_dir(dir).unwrap();
        std::fs::set_permissions(dir, std::os::unix::fs::PermissionsExt::from_mode(0o700)).unwrap();
    }
    let sibling_file = sibling_temp.join("duckdb_temp_block.tmp");
    std::fs::write(&sibling_file, "another query's spilled rows\n").unwrap();
    Scene {
        _spill: spill,
        own_temp,
        sibling_temp,
        sibling_file,
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
        abstract_name,
        _abstract: abstract_listener,
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
        Worker::spawn_on(Kernel::Native, db, bypass, None)
    }

    /// [`Worker::spawn`] with `temp_dir` as its private temporary directory, as the server
    /// spawns every worker unless spilling is off.
    fn spawn_with_temp(db: &Path, bypass: &str, temp_dir: &Path) -> Worker {
        Worker::spawn_on(Kernel::Native, db, bypass, Some(temp_dir))
    }

    /// [`Worker::spawn`] on `kernel`.
    fn spawn_on(kernel: Kernel, db: &Path, bypass: &str, temp_dir: Option<&Path>) -> Worker {
        // The worker's command line as the pool writes it (its one owner: `WorkerArgs`).
        let args = WorkerArgs {
            db: duckgate::protocol::databases::Databases::single(db)
                .iter()
                .cloned()
                .collect(),
            memory_limit_bytes: 512 << 20,
            memory_cap_bytes: 2 << 30,
            threads: 2,
            time_zone: "UTC".into(),
            cpu_seconds: 30,
            address_space_bytes: 8 << 30,
            temp_dir: temp_dir.map(Path::to_path_buf),
            max_temp_bytes: MAX_TEMP_BYTES,
            parent_pid: std::process::id() as i32,
            allow_unconfined: kernel == Kernel::WithoutLandlockAllowed,
            start: WorkerStart::OnDemand,
            files: Vec::new(),
            files_max_count: duckgate::folders::DEFAULT_MAX_FILES,
            files_max_bytes: duckgate::folders::DEFAULT_MAX_FILE_BYTES,
        };
        let mut command = match kernel {
            Kernel::Native => Command::new(env!("CARGO_BIN_EXE_duckgate")),
            // The wrapper execs the binary in place: the test process stays the parent.
            Kernel::WithoutLandlock | Kernel::WithoutLandlockAllowed => {
                let mut command = Command::new(crate::support::example("without_kernel_feature"));
                command.args(["landlock", "--", env!("CARGO_BIN_EXE_duckgate")]);
                command
            }
        };
        let mut child = command
            .args(args.to_argv())
            .env_clear()
            .env(duckgate::sandbox::bypass::ENV_VAR, bypass)
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

    /// Send `request`, which must end the worker by seccomp's kill filter: no reply, and death
    /// by SIGSYS (a reply, or any other end, fails the test).
    fn ask_expecting_sigsys(&mut self, request: &Request, what: &str) {
        use std::os::unix::process::ExitStatusExt;
        write_frame(&mut self.stdin, request).expect("send the request");
        if let Ok(reply) = read_frame::<Response, _>(&mut self.stdout, MAX_REPLY) {
            panic!("BREACH: {what} was answered instead of killing the worker: {reply:?}");
        }
        let status = self.child.wait().unwrap();
        assert_eq!(
            status.signal(),
            Some(nix::libc::SIGSYS),
            "{what}: the worker ended with {status:?}, not by seccomp's kill (SIGSYS)"
        );
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

/// The kernel a worker runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kernel {
    /// This machine's.
    Native,
    /// Landlock's system calls answer `ENOSYS`; the worker must fail closed.
    WithoutLandlock,
    /// The same, with `--allow-unconfined`.
    WithoutLandlockAllowed,
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
            // Another worker's spilled data.
            text(&scene.sibling_file),
        ],
        list_dirs: vec![
            text(&scene.listed_dir),
            "/tmp".into(),
            "/".into(),
            text(&scene.sibling_temp),
            // The directory holding every worker's: listing it would show other workers.
            text(scene.own_temp.parent().unwrap()),
        ],
        write_files: scene
            .new_files
            .iter()
            .map(|p| text(p))
            // Overwriting the database it may read must fail too.
            .chain([text(&scene.db)])
            // And writing into another worker's temporary directory, or beside its own.
            .chain([
                text(&scene.sibling_temp.join("planted.tmp")),
                text(&scene.own_temp.parent().unwrap().join("planted.tmp")),
            ])
            .collect(),
        // The database is readable, so only landlock's truncate right (ABI 3) or seccomp stops a
        // read-only O_TRUNC open of it; the secret is not even readable.
        truncate_files: vec![
            text(&scene.db),
            text(&scene.secret),
            text(&scene.sibling_file),
        ],
        connect: vec![
            scene.tcp.local_addr().unwrap().to_string(),
            format!("unix:{}", text(&scene.unix_path)),
            format!("unix:@{}", scene.abstract_name),
        ],
        spawn: Vec::new(),
        exec: Vec::new(),
        signal_pid: Some(parent),
        ptrace_pid: None,
    }
}

/// The attempts seccomp's kill filter takes, each alone (the first ends the worker): start a
/// program in a new process, `execve` one in place, `ptrace` the parent.
fn killing_attempts(parent: i32) -> Vec<(&'static str, ProbeRequest)> {
    vec![
        (
            "spawn /bin/sh",
            ProbeRequest {
                spawn: vec!["/bin/sh".into()],
                ..ProbeRequest::default()
            },
        ),
        (
            "execve /bin/sh in place",
            ProbeRequest {
                exec: vec!["/bin/sh".into()],
                ..ProbeRequest::default()
            },
        ),
        (
            "ptrace attach to the parent",
            ProbeRequest {
                ptrace_pid: Some(parent),
                ..ProbeRequest::default()
            },
        ),
    ]
}

fn describe(report: &ProbeReport) -> String {
    report
        .attempts
        .iter()
        .map(|(what, outcome)| format!("\n  {what}: {outcome:?}"))
        .collect()
}

/// The number of attempts `request` makes.
fn attempts_in(request: &ProbeRequest) -> usize {
    request.read_files.len()
        + request.list_dirs.len()
        + request.write_files.len()
        + 2 * request.truncate_files.len()
        + request.connect.len()
        + request.spawn.len()
        + request.exec.len()
        + 2 * usize::from(request.signal_pid.is_some())
        + usize::from(request.ptrace_pid.is_some())
}

/// The property named `name` of a posture.
fn property<'a>(posture: &'a Posture, name: &str) -> &'a duckgate::protocol::PropertyPosture {
    posture
        .properties
        .iter()
        .find(|p| p.property == name)
        .unwrap_or_else(|| panic!("no property {name}: {posture:?}"))
}

/// The whole denial suite in a worker confined with landlock ABI `cap` at most (`None`: all this
/// kernel offers): every forbidden attempt is denied, the database stays readable and
/// unchanged, and the posture names the mechanism that keeps each promise.
fn denial_suite(cap: Option<u8>) {
    let tag = cap.map_or("deny-native".to_string(), |abi| format!("deny-abi{abi}"));
    let scene = scene(&tag);
    let secret_before = std::fs::read(&scene.secret).unwrap();
    let parent = std::process::id() as i32;
    let mut bypass = "validator,duckdb_hardening,probe".to_string();
    if let Some(abi) = cap {
        bypass.push_str(&format!(",landlock_abi_{abi}"));
    }
    // As the server spawns it: with its own temporary directory, the one place it may write.
    let mut worker = Worker::spawn_with_temp(&scene.db, &bypass, &scene.own_temp);
    let posture = worker.ready();

    // While it waits for its request, the kernel's view of the worker.
    assert_eq!(status_field(worker.pid(), "NoNewPrivs"), "1");
    assert_eq!(
        status_field(worker.pid(), "Seccomp"),
        "2",
        "2 = filter mode"
    );
    assert_eq!(
        posture.landlock,
        LandlockStatus::FullyEnforced,
        "{posture:?}"
    );
    match cap {
        Some(abi) => assert_eq!(posture.landlock_abi, Some(i32::from(abi)), "{posture:?}"),
        None => assert!(posture.landlock_abi.unwrap_or(0) >= 1, "{posture:?}"),
    }
    assert!(posture.seccomp && posture.no_new_privs, "{posture:?}");
    assert!(posture.unenforced.is_empty(), "{posture:?}");
    assert_eq!(posture.properties.len(), 6, "{posture:?}");
    for p in &posture.properties {
        assert!(p.enforced, "{p:?}");
    }
    // Which mechanism keeps which promise at this ABI.
    let abi = posture.landlock_abi.unwrap();
    let signals = &property(&posture, "signals").mechanism;
    assert!(
        signals.contains("seccomp: kill only to the worker itself"),
        "{signals}"
    );
    assert_eq!(
        signals.contains(&format!("landlock ABI {abi} has no signal scoping")),
        abi < 6,
        "{signals}"
    );
    let network = &property(&posture, "network").mechanism;
    assert!(network.contains("seccomp: no socket"), "{network}");
    assert_eq!(
        network.contains("TCP bind and connect"),
        abi >= 4,
        "{network}"
    );
    let writes = &property(&posture, "file_writes").mechanism;
    assert!(writes.contains("landlock ABI"), "{writes}");
    assert_eq!(
        writes.contains("read-only O_TRUNC opens"),
        abi < 3,
        "{writes}"
    );
    assert!(
        property(&posture, "file_reads")
            .mechanism
            .starts_with(&format!("landlock ABI {abi}")),
        "{posture:?}"
    );
    assert!(
        posture
            .rlimits
            .contains(&("RLIMIT_FSIZE".into(), FILE_SIZE_LIMIT.to_string())),
        "{posture:?}"
    );
    assert!(
        posture
            .rlimits
            .contains(&("RLIMIT_DATA".into(), (2u64 << 30).to_string())),
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
            .any(|l| l.starts_with("Max file size") && l.contains(&format!(" {FILE_SIZE_LIMIT} "))),
        "{limits}"
    );

    let mut request = attack(&scene, parent);
    // The one thing it may do, as a control inside the sandbox: write in its own temporary
    // directory. Reading the database by its path is denied like any other file: the worker
    // opened it before it confined itself and reads it through that descriptor only.
    request.read_files.push(text(&scene.db));
    let own_write = scene.own_temp.join("spill-control.tmp");
    request.write_files.push(text(&own_write));
    let expected_attempts = attempts_in(&request);
    let report = match worker.ask(&Request::Probe(request)) {
        Response::Probe(report) => report,
        other => panic!("expected a probe report, got {other:?}"),
    };
    eprintln!("probe report at {tag}:{}", describe(&report));
    assert_eq!(
        report.attempts.len(),
        expected_attempts,
        "{}",
        describe(&report)
    );

    let db_read = format!("read file {}", text(&scene.db));
    let own_write_attempt = format!("create and write file {}", text(&own_write));
    for (what, outcome) in &report.attempts {
        if *what == db_read {
            assert!(
                outcome
                    .as_ref()
                    .is_err_and(|e| e.contains("Permission denied")
                        || e.contains("EACCES")
                        || e.contains("os error 13")),
                "BREACH at {tag}: the database is readable by its path: {outcome:?}"
            );
        } else if *what == own_write_attempt {
            assert_eq!(outcome, &Ok(()), "the worker must be able to spill");
        } else {
            assert!(
                outcome.is_err(),
                "BREACH at {tag}: {what} succeeded inside the sandbox"
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
    assert_eq!(std::fs::read(&scene.secret).unwrap(), secret_before);
    assert!(own_write.exists(), "the control write did not happen");
    assert_eq!(
        std::fs::read_dir(&scene.sibling_temp).unwrap().count(),
        1,
        "something was planted in another worker's directory"
    );
    assert!(
        !scene
            .own_temp
            .parent()
            .unwrap()
            .join("planted.tmp")
            .exists()
    );
    let status = worker.child.wait().unwrap();
    assert!(status.success(), "worker exit: {status:?}");

    // Each call of the kill filter's families, alone in a worker of its own: the worker dies
    // of SIGSYS before the call does anything (no program ran: /bin/sh would have outlived the
    // worker's reply; the parent, this test, is not traced).
    for (what, request) in killing_attempts(parent) {
        let mut worker = Worker::spawn_with_temp(&scene.db, &bypass, &scene.own_temp);
        worker.ready();
        worker.ask_expecting_sigsys(&Request::Probe(request), what);
    }
    assert_eq!(
        status_field(parent, "TracerPid"),
        "0",
        "the test process is traced"
    );
}

#[test]
fn confined_worker_is_denied_every_forbidden_attempt() {
    denial_suite(None);
}

/// Linux 5.13–5.18: the floor. Only the filesystem rules are landlock's; seccomp keeps
/// truncation, sockets and signals.
#[test]
fn at_landlock_abi_1_every_forbidden_attempt_is_still_denied() {
    denial_suite(Some(1));
}

/// Linux 5.19–6.1 (Debian 12).
#[test]
fn at_landlock_abi_2_every_forbidden_attempt_is_still_denied() {
    denial_suite(Some(2));
}

/// Linux 6.2–6.6: landlock handles truncation.
#[test]
fn at_landlock_abi_3_every_forbidden_attempt_is_still_denied() {
    denial_suite(Some(3));
}

/// Linux 6.7–6.9: landlock handles TCP.
#[test]
fn at_landlock_abi_4_every_forbidden_attempt_is_still_denied() {
    denial_suite(Some(4));
}

/// Linux 6.10–6.11: landlock handles device ioctls; still no signal scoping.
#[test]
fn at_landlock_abi_5_every_forbidden_attempt_is_still_denied() {
    denial_suite(Some(5));
}

/// Without landlock (its system calls answer `ENOSYS`) the worker fails closed: it never reports
/// ready and never opens DuckDB.
#[test]
fn without_landlock_the_worker_fails_closed() {
    let scene = scene("no-landlock");
    let mut worker = Worker::spawn_on(Kernel::WithoutLandlock, &scene.db, "probe", None);
    match read_frame::<Response, _>(&mut worker.stdout, MAX_REPLY) {
        Ok(Response::Error(e)) => {
            assert!(e.message.contains("confine step 5 (landlock)"), "{e:?}");
            assert!(e.message.contains("ENOSYS"), "{e:?}");
            assert!(e.message.contains("Linux 5.13"), "{e:?}");
        }
        other => panic!("expected the worker to refuse, got {other:?}"),
    }
    let status = worker.child.wait().unwrap();
    assert!(!status.success(), "{status:?}");
}

/// Without landlock and with `--allow-unconfined`, the posture says the file promises are not
/// kept, and says the truth: a file outside the grants is readable. Every promise seccomp keeps
/// still holds: no network, no unix sockets, no signal to the parent, no truncation, and a new
/// process, an exec or a ptrace kills the worker.
#[test]
fn without_landlock_and_allowed_only_the_file_promises_are_lost() {
    let scene = scene("no-landlock-allowed");
    let secret_before = std::fs::read(&scene.secret).unwrap();
    let parent = std::process::id() as i32;
    let mut worker = Worker::spawn_on(
        Kernel::WithoutLandlockAllowed,
        &scene.db,
        "validator,duckdb_hardening,probe",
        None,
    );
    let posture = worker.ready();
    assert_eq!(posture.landlock, LandlockStatus::NotEnforced, "{posture:?}");
    assert_eq!(posture.landlock_abi, None, "{posture:?}");
    assert!(posture.seccomp, "{posture:?}");
    for p in &posture.properties {
        let file_promise = p.property == "file_reads" || p.property == "file_writes";
        assert_eq!(p.enforced, !file_promise, "{p:?}");
    }
    let mut request = attack(&scene, parent);
    request.list_dirs.clear();
    request.write_files.clear();
    let report = match worker.ask(&Request::Probe(request.clone())) {
        Response::Probe(report) => report,
        other => panic!("expected a probe report, got {other:?}"),
    };
    eprintln!("probe report without landlock:{}", describe(&report));
    assert_eq!(report.attempts.len(), attempts_in(&request));
    let secret_read = format!("read file {}", text(&scene.secret));
    for (what, outcome) in &report.attempts {
        if what.starts_with("read file ") {
            // Not kept, as the posture says: the reads succeed (the secret among them).
            if *what == secret_read {
                assert_eq!(outcome, &Ok(()), "the posture says file reads are open");
            }
        } else {
            assert!(
                outcome.is_err(),
                "BREACH without landlock: {what} succeeded"
            );
        }
    }
    assert_eq!(std::fs::read(&scene.db).unwrap(), scene.db_bytes);
    assert_eq!(std::fs::read(&scene.secret).unwrap(), secret_before);
    for (what, request) in killing_attempts(parent) {
        let mut worker = Worker::spawn_on(
            Kernel::WithoutLandlockAllowed,
            &scene.db,
            "validator,duckdb_hardening,probe",
            None,
        );
        worker.ready();
        worker.ask_expecting_sigsys(&Request::Probe(request), what);
    }
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
    // Truncating works here too (on the secret: the database stays for the other attempts).
    request.truncate_files = vec![text(&scene.secret)];
    request.signal_pid = None;
    let report = duckgate::sandbox::probe::run(&request, nix::unistd::getppid().as_raw());
    // Reads 4, listings 5, writes 3 + 2 (beside and inside another worker's directory),
    // truncations 2, connects 3.
    assert_eq!(
        report.attempts.len(),
        4 + 5 + 5 + 2 + 3,
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
    assert_eq!(std::fs::metadata(&scene.secret).unwrap().len(), 0);

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
    assert_eq!(
        posture.landlock,
        LandlockStatus::FullyEnforced,
        "{posture:?}"
    );
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

fn query(sql: String) -> Request {
    Request::Query {
        sql,
        limit: 10,
        max_bytes: 1 << 20,
        privacy: Default::default(),
    }
}

/// With every SQL check and DuckDB's hardening off, SQL can write files only inside the worker's
/// own temporary directory: not beside it, not in another worker's, not anywhere else. (Writing
/// there is not denied by this layer, nor by DuckDB, which always lets SQL reach its own
/// temp_directory: that directory is private to this one query's worker and removed with it.)
#[test]
fn with_every_check_and_the_hardening_off_sql_writes_only_into_its_own_temporary_directory() {
    let scene = scene("spill-writes");
    let bypass = "worker_walk,plan_check,duckdb_hardening";
    let own = scene.own_temp.join("copied.csv");
    let denied = [
        scene.sibling_temp.join("copied.csv"),
        scene.own_temp.parent().unwrap().join("copied.csv"),
        scene.new_files[1].clone(),
    ];
    for target in denied.iter().chain([&own]) {
        let mut worker = Worker::spawn_with_temp(&scene.db, bypass, &scene.own_temp);
        worker.ready();
        let sql = format!("COPY (SELECT 42 AS answer) TO '{}'", text(target));
        let reply = worker.ask(&query(sql.clone()));
        if *target == own {
            assert!(matches!(reply, Response::Rows(_)), "{sql}: {reply:?}");
            assert_eq!(std::fs::read_to_string(&own).unwrap(), "answer\n42\n");
        } else {
            assert!(
                matches!(reply, Response::Error(_)),
                "BREACH: {sql}: {reply:?}"
            );
            assert!(!target.exists(), "BREACH: {} was written", target.display());
        }
    }
    assert_eq!(std::fs::read_dir(&scene.sibling_temp).unwrap().count(), 1);
}

/// SQL that names the worker's temporary directory (COPY … TO, read_* functions, a replacement
/// scan, glob) is refused by each SQL check alone, with the other switched off and DuckDB's
/// hardening on: DuckDB itself would allow it, since it always lets SQL reach its own
/// temp_directory.
#[test]
fn sql_naming_the_temporary_directory_is_refused_by_each_sql_check_alone() {
    let scene = scene("spill-sql");
    // Something for the reading statements to find if they were let through.
    let planted = scene.own_temp.join("planted.csv");
    std::fs::write(&planted, "token\nSPILL-7c1e\n").unwrap();
    let written = scene.own_temp.join("written.csv");
    let statements = [
        format!("COPY (SELECT 42) TO '{}'", text(&written)),
        format!("SELECT * FROM read_csv('{}')", text(&planted)),
        format!("SELECT * FROM read_text('{}')", text(&planted)),
        format!("SELECT * FROM '{}'", text(&planted)),
        format!("SELECT * FROM glob('{}/*')", text(&scene.own_temp)),
    ];
    for (alone, bypass) in [("plan check", "worker_walk"), ("worker walk", "plan_check")] {
        for sql in &statements {
            let mut worker = Worker::spawn_with_temp(&scene.db, bypass, &scene.own_temp);
            worker.ready();
            match worker.ask(&query(sql.clone())) {
                Response::Error(e) => assert_eq!(
                    e.kind,
                    duckgate_validate::error::ErrorKind::PolicyBlocked,
                    "{alone} alone: {sql}: {e:?}"
                ),
                other => panic!("BREACH: the {alone} alone let through {sql}: {other:?}"),
            }
            assert!(!written.exists(), "{alone} alone: {sql} wrote a file");
        }
    }
}
