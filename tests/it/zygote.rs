//! The zygote (`src/sandbox/zygote/`): workers forked from a confined, warm template instead of
//! spawned, proven on the real binary.
//!
//! - The template is single-threaded whenever it forks (its `/proc/<pid>/status` says
//!   `Threads: 1` throughout 40 calls, some in parallel), and every worker of a forking server
//!   is the template's child, none spawned (`fork_single_threaded`'s own refusal is proven in
//!   `crates/zygote-fork`).
//! - A forked child, asked through the test-only probe to try forbidden things for real, can
//!   start no program (spawned or `execve`d in place), can signal or trace neither the template
//!   nor the server, reads no file outside its grants and writes nowhere but its own temporary
//!   directory: not even in the directory the template's own landlock rules grant.
//! - A forked child's kernel view equals a spawned worker's: no-new-privileges, seccomp filter
//!   mode, the same capabilities, identical resource limits line by line, the same open
//!   descriptors (none left over from the template), and more filter layers than the template
//!   (its own on top); and the same attempts are denied to both with the same errors.
//! - Killing the template mid-call costs that one call, answered with an error, not a hang;
//!   the server goes on, restarts the template (three starts at most), then spawns workers and
//!   `server_info` says the template died.
//! - 1,000 calls leak no process, descriptor or thread in the server or the template.
//! - A template's workers carry the database identity the template was started for: a spare
//!   forked after the file changed is never handed a call its template is then retired under.
//!
//! The in-process tests drive the library's `Pool`, built by `gateway::worker_spec` as
//! `duckgate serve` builds it, because only a test can ask a worker for a probe; the others run
//! `duckgate serve` over MCP.
use crate::support::{
    TempDir, cgm_db, children_of, cmdline, cpu_ticks, descendants, fd_count, parent_of, serve,
    status_field, template_of, wait_until, workers_of,
};

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use duckgate::gateway::{GatewayConfig, worker_spec};
use duckgate::mcp_client::{McpClient, envelope_of, text_of};
use duckgate::protocol::{ProbeReport, ProbeRequest, Request, Response};
use duckgate::sandbox::bypass::Bypass;
use duckgate::sandbox::pool::{Pool, RunError, WorkerOrigin};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

/// Runs until it is killed: the worker is certainly busy while the test looks at it.
const ENDLESS: &str = "SELECT sum(i) FROM range(10000000000000::BIGINT) t(i)";

/// Only to keep a broken build from hanging the test; never a pass criterion.
const GENEROUS: Duration = Duration::from_secs(60);

/// The `query` tool's envelope, with the text beside it for failure messages.
async fn query(client: &McpClient, sql: &str) -> Value {
    let result = tokio::time::timeout(GENEROUS, client.call("query", json!({ "sql": sql })))
        .await
        .unwrap_or_else(|_| panic!("no answer to {sql} within {GENEROUS:?}"))
        .expect("tools/call answered");
    let mut envelope = envelope_of(&result).clone();
    envelope["_text"] = Value::String(text_of(&result).to_string());
    envelope
}

/// `SELECT <n>` answered with `n`.
async fn assert_answers(client: &McpClient, n: i64) {
    let envelope = query(client, &format!("SELECT {n} AS n")).await;
    assert_eq!(envelope["status"], "success", "{envelope}");
    assert_eq!(envelope["data"]["rows"], json!([[n]]), "{envelope}");
}

/// `server_info`'s `workers`: where workers come from now.
async fn workers_info(client: &McpClient) -> Value {
    let result = client
        .call("server_info", json!({}))
        .await
        .expect("server_info answered");
    envelope_of(&result)["data"]["workers"].clone()
}

/// `server_info`'s `workers`, once it reports what `accept` wants: the template starts in the
/// background (callers meanwhile get spawned workers), and the server learns of its death from
/// its control socket, each within moments.
async fn workers_info_when(client: &McpClient, accept: impl Fn(&Value) -> bool) -> Value {
    let mut last = Value::Null;
    for _ in 0..300 {
        last = workers_info(client).await;
        if accept(&last) {
            return last;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("server_info never reported the expected workers: {last}");
}

fn forking(workers: &Value) -> bool {
    workers["origin"] == "template"
}

/// The template's pid as `server_info` reports it; panics unless workers are forked.
fn reported_template(workers: &Value) -> u32 {
    assert!(forking(workers), "{workers}");
    workers["template_pid"].as_u64().expect("template_pid") as u32
}

/// The running template's pid, once the server reports one.
async fn running_template(client: &McpClient) -> u32 {
    reported_template(&workers_info_when(client, forking).await)
}

fn threads(pid: u32) -> Option<usize> {
    status_field(pid, "Threads").and_then(|t| t.parse().ok())
}

fn server_pid(client: &McpClient) -> u32 {
    client.server_pid().expect("server pid")
}

// ---------------------------------------------------------------------------------------------
// 1. Single-threaded at every fork; every worker forked.

/// What a sampler saw of the server's processes while calls ran.
#[derive(Debug, Default)]
struct Census {
    samples: usize,
    /// Each `Threads:` reading of the template that was not 1.
    template_threads_not_one: Vec<usize>,
    /// Workers seen: children of the template.
    forked: std::collections::BTreeSet<u32>,
    /// Descendants of the server that were neither the template nor its children.
    strangers: Vec<String>,
}

impl Census {
    fn look(&mut self, server: u32, template: u32) {
        self.samples += 1;
        if let Some(n) = threads(template).filter(|n| *n != 1) {
            self.template_threads_not_one.push(n);
        }
        self.forked.extend(children_of(template));
        self.strangers.extend(strangers(server, template));
    }
}

/// Descendants of the server that are neither the template nor its children.
fn strangers(server: u32, template: u32) -> Vec<String> {
    descendants(server)
        .into_iter()
        .filter(|pid| *pid != template)
        .filter_map(|pid| match parent_of(pid) {
            // Gone between the two reads, or forked.
            None => None,
            Some(parent) if parent == template => None,
            Some(parent) => Some(format!("{pid} (parent {parent}): {}", cmdline(pid))),
        })
        .collect()
}

/// Look at the server's processes every few milliseconds until told to stop.
fn start_census(server: u32, template: u32) -> (Arc<AtomicBool>, std::thread::JoinHandle<Census>) {
    let stop = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&stop);
    let handle = std::thread::spawn(move || {
        let mut census = Census::default();
        while !flag.load(Ordering::SeqCst) {
            census.look(server, template);
            std::thread::sleep(Duration::from_millis(2));
        }
        census
    });
    (stop, handle)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_template_is_single_threaded_at_every_fork_and_every_worker_is_its_child() {
    let (_dir, db) = cgm_db("zygote-threads");
    let client = serve(&db, &[]).await;
    let server = server_pid(&client);
    let template = running_template(&client).await;
    assert_eq!(
        template_of(server),
        Some(template),
        "a direct child of the server"
    );
    assert_eq!(threads(template), Some(1), "the template before any call");
    // Workers spawned while the template was starting (`server_info`'s posture check) have
    // replied and are reaped within moments; from now on every worker must be forked.
    let only_forked = wait_until(GENEROUS, || strangers(server, template).is_empty()).await;
    assert!(only_forked.is_some(), "{:?}", strangers(server, template));

    let (stop, census) = start_census(server, template);
    let sql = "SELECT count(*) AS n FROM cgm_readings";
    for round in 0..10 {
        // Three at once (each takes a warm spare, or has one forked on demand), then one alone.
        let (a, b, c) = tokio::join!(
            query(&client, sql),
            query(&client, sql),
            query(&client, sql)
        );
        for envelope in [a, b, c] {
            assert_eq!(envelope["data"]["rows"], json!([[4032]]), "{envelope}");
        }
        assert_eq!(threads(template), Some(1), "round {round}, between calls");
        assert_answers(&client, round).await;
        assert_eq!(threads(template), Some(1), "round {round}, between calls");
    }
    stop.store(true, Ordering::SeqCst);
    let census = census.join().unwrap();

    eprintln!(
        "{} samples, {} workers forked",
        census.samples,
        census.forked.len()
    );
    assert!(
        census.template_threads_not_one.is_empty(),
        "the template ran other threads: {:?}",
        census.template_threads_not_one
    );
    assert!(
        census.strangers.is_empty(),
        "workers not forked by the template: {:?}",
        census.strangers
    );
    // 40 calls and the warm spares; the sampler cannot see a worker that lived between two looks,
    // but it must have seen several.
    assert!(census.forked.len() >= 2, "{census:?}");
    let after = workers_info(&client).await;
    assert_eq!(reported_template(&after), template, "{after}");
    assert_eq!(after["template_starts"], 1, "{after}");
    client.close().await.expect("close");
}

// ---------------------------------------------------------------------------------------------
// 2 and 3b. Probes sent to forked children, through the library's pool.

/// The database, and the places a worker must not reach.
struct Scene {
    _served: TempDir,
    _elsewhere: TempDir,
    temp_root: TempDir,
    db: PathBuf,
    secret: PathBuf,
}

fn scene(tag: &str) -> Scene {
    let served = TempDir::in_system_temp(&format!("{tag}-served"));
    let elsewhere = TempDir::in_system_temp(&format!("{tag}-elsewhere"));
    let temp_root = TempDir::in_system_temp(&format!("{tag}-spill"));
    // The pool refuses a root others could enter.
    std::fs::set_permissions(
        temp_root.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o700),
    )
    .unwrap();
    let db = served.path().join("served.duckdb");
    crate::support::make_db(&db, "CREATE TABLE t AS SELECT 1 AS x;");
    let secret = elsewhere.path().join("secret.txt");
    std::fs::write(&secret, "api_key=s3cr3t\n").unwrap();
    Scene {
        _served: served,
        _elsewhere: elsewhere,
        temp_root,
        db,
        secret,
    }
}

/// A pool as `duckgate serve` makes it (`worker_spec`), probes allowed, no warm spare and one
/// worker at a time, forking or spawning; and the directory its workers' are made in.
fn probe_pool(scene: &Scene, fork: bool) -> (Arc<Pool>, PathBuf) {
    let mut config = GatewayConfig::new(scene.db.clone());
    config.worker_exe = Some(crate::support::exe());
    config.temp_dir = Some(scene.temp_root.path().to_path_buf());
    config.fork_workers = fork;
    let (mut spec, _) = worker_spec(&config).expect("worker spec");
    spec.bypass = Bypass::parse("probe").unwrap();
    let instance = spec
        .temp_root
        .as_ref()
        .expect("spilling is on")
        .instance()
        .to_path_buf();
    (Pool::new(spec, 0, 1), instance)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn once_the_pool_drains_no_spare_is_started_or_kept() {
    let scene = scene("drained");
    let (probing, _) = probe_pool(&scene, true);
    let pool = Pool::new(probing.spec().clone(), 2, 1);
    started_template(&pool).await;
    pool.refill();
    spares_come_up(&pool, 2).await;
    // A refill racing the shutdown, as one that follows the last reply does.
    pool.refill();
    pool.drain().await;
    pool.refill();
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(pool.spares_ready().await, 0, "a drained pool keeps a spare");
}

/// A template's workers carry the database identity the template was started for, not the
/// one seen when each is forked: that is what the template's landlock rules name, and the
/// identity the pool retires the template on. Here the `.wal` is there when the template is
/// asked for and gone (removed once the pool reports the template starting) before its spare
/// is forked. The spare must count as stale: were it handed the call, the next refill would
/// retire its template under it and kill the call (it would fail "before answering" long
/// before its deadline, instead of running to it).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_is_never_handed_to_a_spare_of_a_template_started_for_another_database_identity() {
    let scene = scene("identity");
    let wal = scene.db.with_file_name("served.duckdb.wal");
    std::fs::write(&wal, b"").unwrap();
    let (probing, _) = probe_pool(&scene, true);
    let pool = Pool::new(probing.spec().clone(), 1, 1);
    pool.refill();
    let starting = |origin: &WorkerOrigin| matches!(origin, WorkerOrigin::Spawned { reason } if reason.contains("is starting"));
    let mut origin = pool.worker_origin().await;
    for _ in 0..5000 {
        if starting(&origin) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
        origin = pool.worker_origin().await;
    }
    assert!(starting(&origin), "the template never started: {origin:?}");
    std::fs::remove_file(&wal).unwrap();
    spares_come_up(&pool, 1).await;

    let deadline = Duration::from_secs(3);
    let call = {
        let pool = Arc::clone(&pool);
        tokio::spawn(async move {
            let request = Request::Query {
                sql: ENDLESS.into(),
                limit: 10,
                max_bytes: 1 << 20,
                privacy: Default::default(),
            };
            let cancel = CancellationToken::new();
            pool.run(&request, deadline, GENEROUS, &cancel, 1 << 20)
                .await
        })
    };
    tokio::time::sleep(Duration::from_millis(500)).await;
    pool.refill();
    match call.await.unwrap() {
        Err(RunError::Timeout) => {}
        other => panic!("the call did not run to its deadline: {other:?}"),
    }
    pool.drain().await;
}

/// Wait until `pool` has `n` spares ready (a refill has been asked for).
async fn spares_come_up(pool: &Arc<Pool>, n: usize) {
    for _ in 0..300 {
        if pool.spares_ready().await == n {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(pool.spares_ready().await, n, "the spares never came up");
}

/// One probe sent to a fresh worker of `pool`, and what came back.
async fn send_probe(pool: &Arc<Pool>, request: ProbeRequest) -> Result<Response, RunError> {
    pool.run(
        &Request::Probe(request),
        GENEROUS,
        GENEROUS,
        &CancellationToken::new(),
        16 << 20,
    )
    .await
}

/// One probe, answered by a fresh worker of `pool`.
async fn probe(pool: &Arc<Pool>, request: ProbeRequest) -> ProbeReport {
    match send_probe(pool, request).await {
        Ok(Response::Probe(report)) => report,
        // A successful in-place execve replaces the worker: no reply comes. A breach.
        other => panic!("no probe report (a successful exec ends the worker): {other:?}"),
    }
}

/// The pool's template, once it runs. A pool starts its template in the background when it
/// first needs a worker, and spawns that first worker meanwhile: a harmless probe starts it
/// (that worker takes the pool's first directory, `w-0`).
async fn started_template(pool: &Arc<Pool>) -> u32 {
    probe(pool, ProbeRequest::default()).await;
    for _ in 0..300 {
        if let WorkerOrigin::Template { template_pid, .. } = pool.worker_origin().await {
            return template_pid;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("the template never ran: {:?}", pool.worker_origin().await);
}

/// The directory the pool's `k`-th worker is given: the pool numbers them `w-0`, `w-1`, … in
/// the order it starts workers (`TempRoot::worker_dir`), and these pools start one per call.
fn own_dir(instance: &Path, k: usize) -> PathBuf {
    instance.join(format!("w-{k}"))
}

fn text(path: &Path) -> String {
    path.display().to_string()
}

/// Everything forbidden (reading the database by its path included), and the one thing allowed
/// (write in `own`);
/// `target` is the process to signal and trace.
fn attack(scene: &Scene, instance: &Path, own: &Path, target: u32) -> ProbeRequest {
    ProbeRequest {
        read_files: vec![
            "/etc/passwd".into(),
            text(&scene.secret),
            format!("/proc/{target}/environ"),
            text(&scene.db),
        ],
        list_dirs: vec![text(instance), "/tmp".into()],
        write_files: vec![
            // The directory every worker's is made in: the template's own landlock grants it.
            text(&instance.join("planted.tmp")),
            text(&scene.temp_root.path().join("planted.tmp")),
            text(&scene.db.with_file_name("beside-the-db.txt")),
            text(&scene.secret.with_file_name("elsewhere.txt")),
            text(&scene.db),
            text(&own.join("control.tmp")),
        ],
        truncate_files: vec![text(&scene.db)],
        connect: Vec::new(),
        spawn: Vec::new(),
        exec: Vec::new(),
        signal_pid: Some(target as i32),
        ptrace_pid: None,
    }
}

/// The attempts seccomp's kill filter takes, each alone (the first ends the worker): start a
/// program, `execve` one in place, `ptrace` `target`.
fn killing_attempts(target: u32) -> Vec<ProbeRequest> {
    vec![
        ProbeRequest {
            spawn: vec!["/bin/true".into()],
            ..ProbeRequest::default()
        },
        ProbeRequest {
            exec: vec!["/bin/sh".into()],
            ..ProbeRequest::default()
        },
        ProbeRequest {
            ptrace_pid: Some(target as i32),
            ..ProbeRequest::default()
        },
    ]
}

/// A probe that must end its worker by seccomp's kill filter: the call fails, the worker having
/// died of SIGSYS before answering; the failure's message.
async fn probe_killed(pool: &Arc<Pool>, request: ProbeRequest) -> String {
    match send_probe(pool, request.clone()).await {
        Err(RunError::Worker(failure)) => {
            assert!(
                failure
                    .message
                    .contains(&format!("(signal {})", nix::libc::SIGSYS)),
                "{request:?}: the worker did not die of SIGSYS: {failure:?}"
            );
            failure.message
        }
        Err(other) => panic!("{request:?}: {other:?}"),
        Ok(reply) => panic!("BREACH: {request:?} was answered: {reply:?}"),
    }
}

/// Whether `what` is the one thing [`attack`] expects to succeed: the write in `own`. The
/// database is not opened by its path (the template opened it before it confined itself and its
/// children read it through that descriptor; landlock grants no path of it), so that read is
/// denied like any other file's.
fn allowed(own: &Path, what: &str) -> bool {
    what == format!("create and write file {}", text(&own.join("control.tmp")))
}

fn describe(report: &ProbeReport) -> String {
    report
        .attempts
        .iter()
        .map(|(what, outcome)| format!("\n  {what}: {outcome:?}"))
        .collect()
}

/// Every attempt of `report` was denied but the two controls, which succeeded.
fn assert_denied_but_the_controls(own: &Path, report: &ProbeReport, who: &str) {
    // Reads 4, listings 2, writes 6, truncations 1 × 2, signal 0 and SIGTERM.
    assert_eq!(
        report.attempts.len(),
        4 + 2 + 6 + 2 + 2,
        "{}",
        describe(report)
    );
    for (what, outcome) in &report.attempts {
        if allowed(own, what) {
            assert_eq!(
                outcome,
                &Ok(()),
                "{who}: the control inside the sandbox: {what}"
            );
        } else {
            assert!(outcome.is_err(), "BREACH: {who} could {what}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_forked_child_can_start_no_program_signal_no_elder_and_reach_no_outside_file() {
    let scene = scene("zygote-probe");
    let (pool, instance) = probe_pool(&scene, true);
    let db_before = std::fs::read(&scene.db).unwrap();
    let template = started_template(&pool).await;
    // Signal and trace the template, then the server: here this test process, the template's
    // parent, as `duckgate serve` is in production. The template's own rules, which the child
    // inherits, let a process signal the template's pid (its "own" pid, to the template's
    // filter) and create processes: only the child's own confinement can deny those.
    let server = std::process::id();
    for (k, target) in [(1, template), (2, server)] {
        let own = own_dir(&instance, k);
        let report = probe(&pool, attack(&scene, &instance, &own, target)).await;
        eprintln!(
            "forked child {} (parent {}):{}",
            report.pid,
            report.parent_pid,
            describe(&report)
        );
        assert_eq!(
            report.parent_pid as u32, template,
            "a child of the template"
        );
        assert_ne!(report.pid as u32, template);
        assert_denied_but_the_controls(&own, &report, "a forked child");
    }
    // Starting a program, an exec and a ptrace of the template or the server each kill the
    // child that tries (SIGSYS), and nothing else: the template stays.
    for target in [template, server] {
        for request in killing_attempts(target) {
            probe_killed(&pool, request).await;
        }
    }
    // The template was not signalled away (it would have been restarted), and no file appeared
    // or changed.
    assert!(
        matches!(
            pool.worker_origin().await,
            WorkerOrigin::Template { template_pid, template_starts: 1 } if template_pid == template
        ),
        "{:?}",
        pool.worker_origin().await
    );
    assert_eq!(std::fs::read(&scene.db).unwrap(), db_before);
    let planted = [
        instance.join("planted.tmp"),
        scene.temp_root.path().join("planted.tmp"),
        scene.db.with_file_name("beside-the-db.txt"),
        scene.secret.with_file_name("elsewhere.txt"),
    ];
    for file in &planted {
        assert!(!file.exists(), "BREACH: {} was written", file.display());
    }

    // Controls: from this unconfined process the same reads, listings and writes succeed, a
    // program runs and the template can be signalled, so each denial above is the sandbox's
    // doing.
    let mut control = attack(&scene, &instance, &own_dir(&instance, 1), template);
    control.read_files.retain(|f| !f.starts_with("/proc/"));
    control.write_files = planted.iter().map(|f| text(f)).collect();
    control.truncate_files.clear();
    control.signal_pid = None;
    let report = duckgate::sandbox::probe::run(&control, nix::unistd::getppid().as_raw());
    assert_eq!(report.attempts.len(), 3 + 2 + 4, "{}", describe(&report));
    for (what, outcome) in &report.attempts {
        assert_eq!(
            outcome,
            &Ok(()),
            "control failed outside the sandbox: {what}"
        );
    }
    assert!(
        std::process::Command::new("/bin/true")
            .status()
            .unwrap()
            .success()
    );
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(template as i32), None)
        .expect("control: signal 0 reaches the template from outside");
    pool.drain().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_forked_child_and_a_spawned_worker_are_denied_the_same_attempts_the_same_way() {
    let scene = scene("zygote-same");
    let server = std::process::id();
    let mut reports = Vec::new();
    for fork in [true, false] {
        let (pool, instance) = probe_pool(&scene, fork);
        let (who, parent, own) = if fork {
            let template = started_template(&pool).await;
            ("a forked child", template, own_dir(&instance, 1))
        } else {
            ("a spawned worker", server, own_dir(&instance, 0))
        };
        let report = probe(&pool, attack(&scene, &instance, &own, server)).await;
        assert_eq!(
            report.parent_pid as u32,
            parent,
            "{who}: {}",
            describe(&report)
        );
        assert_denied_but_the_controls(&own, &report, who);
        // The two pools' worker directories differ by name only.
        let attempts: Vec<(String, Result<(), String>)> = report
            .attempts
            .iter()
            .map(|(what, outcome)| {
                let what = what
                    .replace(&text(&own), "<its own directory>")
                    .replace(&text(&instance), "<workers' root>");
                (what, outcome.clone())
            })
            .collect();
        // The kill filter's families end either kind the same way.
        let killed: Vec<String> = {
            let mut killed = Vec::new();
            for request in killing_attempts(server) {
                killed.push(probe_killed(&pool, request).await);
            }
            killed
        };
        reports.push((attempts, killed));
        pool.drain().await;
    }
    let ((forked, forked_killed), (spawned, spawned_killed)) = (&reports[0], &reports[1]);
    for (f, s) in forked.iter().zip(spawned) {
        assert_eq!(f, s, "forked child and spawned worker differ");
    }
    assert_eq!(forked.len(), spawned.len());
    assert_eq!(forked_killed, spawned_killed);
}

// ---------------------------------------------------------------------------------------------
// 3a. The kernel's view of a forked child and of a spawned worker.

/// A worker of a running server, seen by the kernel while it runs a query.
#[derive(Debug)]
struct Observed {
    pid: u32,
    parent: u32,
    status: std::collections::BTreeMap<&'static str, String>,
    limits: String,
    descriptors: Vec<String>,
}

/// The `/proc/<pid>/status` lines compared.
const STATUS_LINES: [&str; 8] = [
    "NoNewPrivs",
    "Seccomp",
    "Seccomp_filters",
    "CapInh",
    "CapPrm",
    "CapEff",
    "CapBnd",
    "CapAmb",
];

/// Descriptors 2 and up of a process (0 and 1 are a spawned worker's pipes, a forked child's
/// socket), as what they point at, without the kernel's inode numbers: what it holds open.
fn held_descriptors(pid: u32) -> Vec<String> {
    let mut held: Vec<String> = std::fs::read_dir(format!("/proc/{pid}/fd"))
        .expect("fd list")
        .flatten()
        .filter(|e| e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) >= Some(2))
        .map(|e| {
            let target = std::fs::read_link(e.path()).unwrap_or_default();
            let target = target.display().to_string();
            match target.split_once(":[") {
                Some((kind, _)) if kind == "pipe" || kind == "socket" => kind.to_string(),
                _ => target,
            }
        })
        .collect();
    held.sort();
    held
}

/// Start an endless query on a server without warm spares, look at the one worker running it,
/// then cancel the call. `origin`: where the server must say workers come from first. The
/// worker is looked at once it runs the query: busy, with the database `db` attached (a spawned
/// worker burns CPU starting DuckDB before it attaches).
async fn observe_running_worker(client: &McpClient, origin: &str, db: &Path) -> Observed {
    let server = server_pid(client);
    // The catalog and the posture are fetched once, by workers of their own, and a template
    // starts in the background: all that first, so that the only worker below is the query's,
    // and it comes from `origin`.
    assert_answers(client, 1).await;
    workers_info_when(client, |w| w["origin"] == origin).await;
    let idle = wait_until(GENEROUS, || workers_of(server).is_empty()).await;
    assert!(idle.is_some(), "workers left: {:?}", workers_of(server));
    let call = client
        .start_call("query", json!({ "sql": ENDLESS }))
        .await
        .expect("start the query");
    let mut running = Vec::new();
    let found = wait_until(GENEROUS, || {
        running = workers_of(server);
        running.len() == 1
            && cpu_ticks(running[0]) >= 5
            && held_descriptors(running[0]).contains(&db.display().to_string())
    })
    .await;
    assert!(
        found.is_some(),
        "no single busy worker with {} attached: {running:?}",
        db.display()
    );
    let pid = running[0];
    let observed = Observed {
        pid,
        parent: parent_of(pid).expect("parent"),
        status: STATUS_LINES
            .iter()
            .map(|name| (*name, status_field(pid, name).unwrap_or_default()))
            .collect(),
        limits: std::fs::read_to_string(format!("/proc/{pid}/limits")).expect("limits"),
        descriptors: held_descriptors(pid),
    };
    call.cancel("seen").await.expect("cancel");
    observed
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_forked_child_runs_with_the_no_new_privs_seccomp_and_limits_of_a_spawned_worker() {
    let (dir, db) = cgm_db("zygote-kernel-view");
    // A descriptor the client leaks to the server (not close-on-exec), as a careless MCP client
    // or a `flock(1)` around it would: no worker may hold it.
    let leaked_path = dir.path().join("leaked-by-the-client");
    let leaked = std::fs::File::create(&leaked_path).expect("leaked file");
    nix::fcntl::fcntl(
        &leaked,
        nix::fcntl::FcntlArg::F_SETFD(nix::fcntl::FdFlag::empty()),
    )
    .expect("clear close-on-exec");
    let common = ["--warm-workers", "0", "--timeout", "120"];
    let forking = serve(&db, &common).await;
    let forked = observe_running_worker(&forking, "template", &db).await;
    let template = running_template(&forking).await;
    let template_filters: usize = status_field(template, "Seccomp_filters")
        .and_then(|n| n.parse().ok())
        .expect("the template's filters");
    forking.close().await.expect("close");

    let spawning = serve(&db, &[&common[..], &["--spawn-workers"]].concat()).await;
    let spawned = observe_running_worker(&spawning, "spawned", &db).await;
    let spawning_server = server_pid(&spawning);
    spawning.close().await.expect("close");

    eprintln!("forked: {forked:#?}\nspawned: {spawned:#?}");
    assert_eq!(forked.parent, template, "forked by the template");
    assert_eq!(spawned.parent, spawning_server, "spawned by the server");
    for observed in [&forked, &spawned] {
        assert_eq!(observed.status["NoNewPrivs"], "1", "{observed:?}");
        assert_eq!(
            observed.status["Seccomp"], "2",
            "2 = filter mode: {observed:?}"
        );
    }
    for name in STATUS_LINES {
        if name != "Seccomp_filters" {
            assert_eq!(forked.status[name], spawned.status[name], "{name}");
        }
    }
    // A spawned worker installs the worker's filters; a forked child has the template's and
    // stacks on them the worker's rules they lack (a process cannot shed a filter), so it has
    // at least as many, and more than the template: its own filter is really there. The two
    // tests above show it is denied what a spawned worker is, the same way.
    let filters = |o: &Observed| -> usize { o.status["Seccomp_filters"].parse().unwrap() };
    assert!(
        filters(&forked) >= filters(&spawned),
        "{forked:?} {spawned:?}"
    );
    assert!(
        filters(&forked) > template_filters,
        "{forked:?}: the template has {template_filters}"
    );
    // Resource limits: the same worker limits (CPU time, memory, file size, open files), line
    // by line.
    let forked_limits: Vec<&str> = forked.limits.lines().collect();
    let spawned_limits: Vec<&str> = spawned.limits.lines().collect();
    assert_eq!(forked_limits.len(), spawned_limits.len());
    for (f, s) in forked_limits.iter().zip(&spawned_limits) {
        assert_eq!(
            f, s,
            "forked child {} and spawned worker {} differ",
            forked.pid, spawned.pid
        );
    }
    // Nothing of the template's stays open in the child (its SIGCHLD descriptor, its control
    // socket): it holds what a spawned worker holds.
    assert_eq!(forked.descriptors, spawned.descriptors);
    // And nothing the client leaked.
    let leaked_name = leaked_path.display().to_string();
    for observed in [&forked, &spawned] {
        assert!(
            !observed.descriptors.contains(&leaked_name),
            "{observed:?} holds {leaked_name}"
        );
    }
    drop(leaked);
}

// ---------------------------------------------------------------------------------------------
// 4. The template killed mid-call.

fn kill(pid: u32) {
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid as i32),
        nix::sys::signal::Signal::SIGKILL,
    )
    .expect("SIGKILL");
}

/// The reason `server_info` gives once the template is dead names the template and how it
/// ended. (How the server noticed varies: the control socket closed, "the template process
/// exited", or was reset with an order unread, "the template's control socket failed:
/// Connection reset by peer"; the exit status follows either way.)
fn assert_names_the_death(workers: &Value) {
    assert_eq!(workers["origin"], "spawned", "{workers}");
    let reason = workers["reason"].as_str().unwrap_or_default();
    assert!(reason.contains("template"), "{workers}");
    assert!(reason.contains("signal: 9 (SIGKILL)"), "{workers}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killing_the_template_mid_call_costs_only_that_call_and_the_server_falls_back_to_spawning()
{
    let (_dir, db) = cgm_db("zygote-kill");
    let client = serve(&db, &["--timeout", "120"]).await;
    let server = server_pid(&client);
    // Catalog and posture fetched (so `server_info` starts no worker of its own below), and
    // the template running.
    assert_answers(&client, 1).await;
    let first = running_template(&client).await;

    // A call in flight on a forked child when its template is killed.
    let slow = client
        .start_call("query", json!({ "sql": ENDLESS }))
        .await
        .expect("start the query");
    let busy = wait_until(GENEROUS, || {
        children_of(first)
            .iter()
            .any(|child| cpu_ticks(*child) >= 5)
    })
    .await;
    assert!(
        busy.is_some(),
        "the query never ran on a child of the template"
    );
    kill(first);
    let result = tokio::time::timeout(GENEROUS, slow.result())
        .await
        .expect("the call is answered, not left hanging")
        .expect("answered");
    let envelope = envelope_of(&result);
    assert_eq!(envelope["status"], "error", "{envelope}");
    assert_eq!(envelope["error"]["kind"], "internal_error", "{envelope}");
    let message = envelope["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("worker process"), "{message}");
    assert!(message.contains("retry"), "{message}");

    // The next calls are answered (by spawned workers while a new template starts in the
    // background). The pool starts a template again, three times in all, before it gives up
    // forking: the second start shows here.
    for n in 0..3 {
        assert_answers(&client, n).await;
    }
    let replaced =
        |dead: Vec<u32>| move |w: &Value| forking(w) && !dead.contains(&reported_template(w));
    let second = workers_info_when(&client, replaced(vec![first])).await;
    assert_eq!(second["template_starts"], 2, "{second}");
    let second = reported_template(&second);

    // Killed between calls, it is no longer reported (`server_info` names its death until a
    // refill or a call starts the next; which comes first is a race), and the third starts.
    kill(second);
    workers_info_when(&client, |w| !forking(w)).await;
    assert_answers(&client, 10).await;
    let third = workers_info_when(&client, replaced(vec![first, second])).await;
    assert_eq!(third["template_starts"], 3, "{third}");
    let third = reported_template(&third);

    // The third death is the last: from now on workers are spawned, and `server_info` says why.
    kill(third);
    assert_names_the_death(&workers_info_when(&client, |w| !forking(w)).await);
    for n in 20..25 {
        assert_answers(&client, n).await;
    }
    assert_names_the_death(&workers_info(&client).await);
    assert_eq!(template_of(server), None, "no template runs any more");
    // The warm spares are spawned now: the server's own children.
    let spares = wait_until(GENEROUS, || !workers_of(server).is_empty()).await;
    assert!(spares.is_some(), "no warm spare");
    for worker in workers_of(server) {
        assert_eq!(parent_of(worker), Some(server), "{}", cmdline(worker));
    }
    client.close().await.expect("close");
}

// ---------------------------------------------------------------------------------------------
// 5. No leak in 1,000 calls.

/// What the server and its template hold.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Footprint {
    server_fds: usize,
    server_threads: usize,
    template_fds: usize,
    template_threads: usize,
    /// Every process below the server: the template and the warm spare(s) it forked.
    descendants: usize,
}

fn footprint(server: u32, template: u32) -> Footprint {
    Footprint {
        server_fds: fd_count(server).expect("server fds"),
        server_threads: threads(server).expect("server threads"),
        template_fds: fd_count(template).expect("template fds"),
        template_threads: threads(template).expect("template threads"),
        descendants: descendants(server).len(),
    }
}

/// The footprint once two reads 200 ms apart agree: replied workers are killed, reaped and
/// replaced right after each reply, so one read can catch that in flight.
async fn settled(server: u32, template: u32) -> Footprint {
    let mut last = footprint(server, template);
    for _ in 0..50 {
        tokio::time::sleep(Duration::from_millis(200)).await;
        let now = footprint(server, template);
        if now == last {
            return now;
        }
        last = now;
    }
    last
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_calls_leak_no_process_descriptor_or_thread() {
    let (_dir, db) = cgm_db("zygote-soak");
    let warm = 1;
    let client = serve(&db, &["--warm-workers", &warm.to_string()]).await;
    let server = server_pid(&client);
    let template = running_template(&client).await;
    for n in 0..10 {
        assert_answers(&client, n).await;
    }
    let before = settled(server, template).await;
    assert_eq!(
        before.descendants,
        1 + warm,
        "the template and its spare: {before:?}"
    );
    assert_eq!(before.template_threads, 1);

    for n in 0..1000 {
        assert_answers(&client, n).await;
    }
    let after = settled(server, template).await;
    eprintln!("before {before:?}\nafter  {after:?}");
    assert_eq!(
        reported_template(&workers_info(&client).await),
        template,
        "the same template throughout"
    );
    assert!(
        after.descendants <= before.descendants,
        "processes left: {:?}",
        descendants(server)
    );
    // The template acts only on orders, on its one thread: exactly what it held before.
    assert_eq!(
        after.template_fds, before.template_fds,
        "template descriptors"
    );
    assert_eq!(after.template_threads, 1);
    // The server's async runtime may keep a blocking-pool thread or a descriptor in flight a
    // little longer; a leak per call would show as hundreds.
    assert!(
        after.server_fds <= before.server_fds + 2,
        "server descriptors: {before:?} {after:?}"
    );
    assert!(
        after.server_threads <= before.server_threads + 2,
        "server threads: {before:?} {after:?}"
    );
    client.close().await.expect("close");
}
