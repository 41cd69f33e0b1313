//! What the operator configured, and the workers' command line and memory share made from it.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;

use super::Failure;
use crate::audit::AuditLog;
use crate::privacy::PrivacyPolicy;
use crate::protocol::databases::Databases;
use crate::protocol::worker_args::{WorkerArgs, WorkerStart};
use crate::sandbox::budget::{self, BudgetRequest, WorkerMemory};
use crate::sandbox::bypass::Bypass;
use crate::sandbox::pool::WorkerSpec;
use crate::sandbox::temp_dir::{self, Backing, TempRoot};
use duckgate_validate::error::ErrorKind;

/// What the operator configured on the command line.
#[derive(Debug, Clone)]
pub struct GatewayConfig {
    /// The DuckDB database files, each under its name, the default first (`crate::protocol::databases`).
    pub databases: Databases,
    /// Per-call deadline, counted from when the request is handed to a worker.
    pub timeout: Duration,
    /// How long a call waits for a worker slot before it is answered `busy` (the wait does not
    /// count against `timeout`).
    pub queue_timeout: Duration,
    /// The total all workers together may use (`--memory-budget`); `None`: half of this
    /// machine's memory ([`crate::sandbox::budget`]).
    pub memory_budget: Option<u64>,
    /// DuckDB's `memory_limit` in each worker (`--memory-limit`); `None`: the most each
    /// worker's share of the budget allows.
    pub memory_limit: Option<u64>,
    /// Where workers' private temporary directories are made (`--temp-dir`); `None`:
    /// [`crate::sandbox::temp_dir::default_root`].
    pub temp_dir: Option<PathBuf>,
    /// What one worker may spill (`--max-temp-size`); 0: no spilling.
    pub max_temp_bytes: u64,
    /// DuckDB threads in the worker.
    pub threads: u32,
    /// The workers' DuckDB `TimeZone`: the zone "today" and "yesterday" are meant in.
    pub time_zone: String,
    /// One byte budget per tool reply: its text and its structured content together
    /// (`--max-reply-bytes`). A query's rows are cut to fit, and the reply says how many.
    pub max_reply_bytes: usize,
    /// Warm workers kept ready.
    pub warm_workers: usize,
    /// Workers running at once at most; further calls queue.
    pub max_concurrent: usize,
    /// Fork workers from a warm template process (`crate::sandbox::zygote`); `false`
    /// (`--spawn-workers`): spawn each one.
    pub fork_workers: bool,
    /// Shown when the database file is missing.
    pub missing_db_hint: String,
    /// Run workers without landlock/seccomp where the kernel lacks them (loud).
    pub allow_unconfined: bool,
    /// Test-only (`test-bypass` feature): the binary re-executed as a worker, for benches and
    /// tests whose own executable is not `duckgate`. Without it, and always in a shipped build,
    /// workers are our own binary (`current_exe`).
    #[cfg(feature = "test-bypass")]
    pub worker_exe: Option<PathBuf>,
    /// Tables and columns hidden from agents.
    pub privacy: PrivacyPolicy,
    /// Let workers spill to disk under privacy rules too (`--spill-with-privacy-rules`). Off by
    /// default: spilling needs DuckDB's local file system enabled, one layer fewer between SQL
    /// and a host path (see [`spills`]).
    pub spill_with_privacy_rules: bool,
    /// The audit log every tool call is recorded in, if the operator asked for one.
    pub audit: Option<Arc<AuditLog>>,
    /// The operator's declared folders as written (`--files NAME=DIR`, `[files]`), checked and
    /// resolved when the workers' command line is made ([`worker_spec`]).
    pub files: Vec<(String, PathBuf)>,
    /// The most files one query may bind (`--files-max-count`).
    pub files_max_count: u64,
    /// The most bytes the files one query binds may hold together (`--files-max-bytes`).
    pub files_max_bytes: u64,
}

/// Warm spares by default: enough to absorb a burst of four parallel calls (agents send
/// parallel tool calls) without any of them waiting for a worker to start. Forked spares are
/// cheap: ~2.4 MB of their own each (see `crate::sandbox::budget::IDLE_PROCESS_BYTES`).
pub const DEFAULT_WARM_WORKERS: usize = 4;

/// The default per-call deadline in seconds (`--timeout`), owned here so that the CLI's default
/// and [`GatewayConfig::new`]'s cannot drift apart (README.md and SECURITY.md quote it).
pub const DEFAULT_TIMEOUT_SECS: u64 = 30;

/// The default wait for a free worker in seconds (`--queue-timeout`).
pub const DEFAULT_QUEUE_TIMEOUT_SECS: u64 = 10;

/// DuckDB threads of each worker by default (`--threads`).
pub const DEFAULT_THREADS: u32 = 2;

/// Workers running at once at most by default (`--max-concurrent`).
pub const DEFAULT_MAX_CONCURRENT: usize = 4;

impl GatewayConfig {
    /// Defaults for everything but the database: one file, named by its file name.
    pub fn new(db_path: PathBuf) -> GatewayConfig {
        GatewayConfig::serving(Databases::single(&db_path))
    }

    /// Defaults for everything but the databases.
    pub fn serving(databases: Databases) -> GatewayConfig {
        GatewayConfig {
            databases,
            timeout: Duration::from_secs(DEFAULT_TIMEOUT_SECS),
            queue_timeout: Duration::from_secs(DEFAULT_QUEUE_TIMEOUT_SECS),
            memory_budget: None,
            memory_limit: None,
            temp_dir: None,
            max_temp_bytes: DEFAULT_MAX_TEMP_BYTES,
            threads: DEFAULT_THREADS,
            time_zone: crate::time_zone::local(),
            max_reply_bytes: DEFAULT_MAX_REPLY_BYTES,
            warm_workers: DEFAULT_WARM_WORKERS,
            max_concurrent: DEFAULT_MAX_CONCURRENT,
            fork_workers: true,
            missing_db_hint: DEFAULT_MISSING_DB_HINT.into(),
            allow_unconfined: false,
            #[cfg(feature = "test-bypass")]
            worker_exe: None,
            privacy: PrivacyPolicy::default(),
            spill_with_privacy_rules: false,
            audit: None,
            files: Vec::new(),
            files_max_count: crate::folders::DEFAULT_MAX_FILES,
            files_max_bytes: crate::folders::DEFAULT_MAX_FILE_BYTES,
        }
    }
}

/// Whether workers may spill to disk. Not under privacy rules unless the operator opted in:
/// a worker that spills keeps DuckDB's local file system enabled, where one that does not
/// switches it off after the attach (`engine::attach`) and then reads the databases only
/// through the handles it already holds. With it enabled the databases' raw bytes, hidden
/// tables and columns included, are still out of SQL's reach (the kernel grants no path of
/// them, `allowed_paths` holds only their reserved names, external access is off), but the one
/// DuckDB setting that refuses every host path is gone, so the operator decides.
pub(crate) fn spills(config: &GatewayConfig) -> bool {
    config.max_temp_bytes != 0 && (config.privacy.is_empty() || config.spill_with_privacy_rules)
}

/// The default `--max-reply-bytes`: 64 KiB, a few percent of an agent's context window, where
/// 1,000 rows of CGM readings as a text table and as JSON rows took about 80 KB together.
pub const DEFAULT_MAX_REPLY_BYTES: usize = 64 * 1024;

/// Where workers spill, for `server_info`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SpillInfo {
    /// The root each worker's private directory is made under.
    pub root: PathBuf,
    /// Whether that is a disk or RAM.
    pub backing: Backing,
    /// `--max-temp-size`: what one worker may spill at most (less when the disk has less free).
    pub max_bytes_per_worker: u64,
}

/// The default `--max-temp-size`: 10 GB.
pub const DEFAULT_MAX_TEMP_BYTES: u64 = 10_000_000_000;

/// The default `--missing-db-hint`.
pub const DEFAULT_MISSING_DB_HINT: &str = "Create it from your CGM export first (`duckgate import --out PATH EXPORT.csv`; for a demo: `duckgate demo --out PATH`), or pass the right path with --db.";

/// Each worker's memory share from the operator's flags ([`crate::sandbox::budget`]): the one
/// place the budget is sized, for the workers and for `server_info`.
pub fn worker_memory(config: &GatewayConfig, exe: &Path) -> Result<WorkerMemory, Failure> {
    let exe_bytes = std::fs::metadata(exe).map(|m| m.len()).unwrap_or(0);
    budget::plan(
        &BudgetRequest {
            budget: config.memory_budget,
            duckdb_limit: config.memory_limit,
            max_concurrent: config.max_concurrent.max(1),
            warm_workers: config.warm_workers,
            resident_overhead: exe_bytes + MAIN_STACK_BYTES,
        },
        budget::usable_memory,
    )
    .map_err(|e| Failure::new(ErrorKind::InvalidArgument, e.to_string()))
}

/// The main thread's stack (RLIMIT_STACK's usual 8 MiB), which RLIMIT_DATA does not charge.
const MAIN_STACK_BYTES: u64 = 8 << 20;

/// Address space a worker may reserve beyond its memory cap: the binary's mappings, thread-stack
/// guard pages and the allocator's reserved-but-unused ranges, none of which is resident
/// writable memory.
const ADDRESS_SPACE_SLACK_BYTES: u64 = 4 << 30;

/// The workers' command line and limits from the operator's configuration, and the test bypass.
/// Opens the workers' temporary root (sweeping what dead servers left) unless spilling is off.
pub fn worker_spec(config: &GatewayConfig) -> Result<(WorkerSpec, Bypass), Failure> {
    let bypass =
        Bypass::from_env().map_err(|e| Failure::new(ErrorKind::InternalError, e.to_string()))?;
    #[cfg(feature = "test-bypass")]
    let chosen = config.worker_exe.clone();
    #[cfg(not(feature = "test-bypass"))]
    let chosen: Option<PathBuf> = None;
    let exe = match chosen {
        Some(exe) => exe,
        None => std::env::current_exe().map_err(|e| {
            Failure::new(
                ErrorKind::InternalError,
                format!("cannot find our own binary to start workers: {e}"),
            )
        })?,
    };
    let memory = worker_memory(config, &exe)?;
    let temp_root = if !spills(config) {
        None
    } else {
        let root = config
            .temp_dir
            .clone()
            .unwrap_or_else(temp_dir::default_root);
        Some(Arc::new(TempRoot::open(&root).map_err(|e| {
            Failure::new(ErrorKind::InvalidArgument, e.to_string())
        })?))
    };
    let wals: Vec<PathBuf> = config.databases.iter().map(|d| d.wal()).collect();
    let database_files: Vec<crate::folders::DatabaseFiles<'_>> = config
        .databases
        .iter()
        .zip(&wals)
        .map(|(database, wal)| crate::folders::DatabaseFiles {
            name: &database.name,
            file: &database.path,
            wal,
        })
        .collect();
    let folders = crate::folders::validate(
        &config.files,
        &database_files,
        temp_root.as_ref().map(|root| root.root()),
    )
    .map_err(|e| Failure::new(ErrorKind::InvalidArgument, e))?;
    let timeout_secs = config.timeout.as_secs().max(1);
    let spec = WorkerSpec {
        exe,
        worker: WorkerArgs {
            db: config.databases.iter().cloned().collect(),
            memory_limit_bytes: memory.duckdb_limit_bytes,
            memory_cap_bytes: memory.cap_bytes,
            threads: config.threads.max(1),
            time_zone: config.time_zone.clone(),
            // CPU time counts every thread; the wall-clock deadline is the real bound, this is
            // the backstop.
            cpu_seconds: timeout_secs * u64::from(config.threads.max(1)) + 10,
            address_space_bytes: memory.cap_bytes.saturating_add(ADDRESS_SPACE_SLACK_BYTES),
            // Set per worker by the pool, which makes the directory.
            temp_dir: None,
            max_temp_bytes: if spills(config) {
                config.max_temp_bytes
            } else {
                0
            },
            parent_pid: std::process::id() as i32,
            allow_unconfined: config.allow_unconfined,
            start: WorkerStart::OnDemand,
            files: folders
                .iter()
                .map(|f| format!("{}={}", f.name, f.dir.display()))
                .collect(),
            files_max_count: config.files_max_count,
            files_max_bytes: config.files_max_bytes,
        },
        bypass: bypass.clone(),
        max_reply_bytes: config
            .max_reply_bytes
            .saturating_mul(2)
            .saturating_add(256 * 1024),
        startup_timeout: Duration::from_secs(20),
        temp_root,
        memory,
        fork_workers: config.fork_workers,
    };
    Ok((spec, bypass))
}
