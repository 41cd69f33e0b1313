//! The parent's one entry point for everything a tool needs: validate, then ask a confined worker.
//!
//! The MCP layer and the CLI talk only to [`Gateway`]; nothing in the parent opens the database.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio::sync::Mutex;
use tokio_util::sync::CancellationToken;

use crate::audit::AuditLog;
use crate::error::{ErrorKind, messages};
use crate::privacy::{self, PrivacyPolicy};
use crate::protocol::{
    CatalogSnapshot, ChartReply, ChartRequest, ExplainResult, MissingName, Posture, QueryResult,
    Request, Response, WorkerError, WorkerRefusal,
};
use crate::sandbox::budget::{self, BudgetRequest, WorkerMemory};
use crate::sandbox::bypass::{Bypass, Layer};
use crate::sandbox::pool::{Pool, RunError, WorkerSpec};
use crate::sandbox::preflight;
use crate::sandbox::temp_dir::{self, Backing, TempRoot};
use crate::sandbox::worker::{WorkerArgs, WorkerStart, wal_path};
use crate::validate;

/// What the operator configured on the command line.
#[derive(Debug, Clone)]
pub struct GatewayConfig {
    /// The DuckDB database file.
    pub db_path: PathBuf,
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
    /// Cap on the JSON bytes of rows a query returns.
    pub max_result_bytes: usize,
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
    /// The binary re-executed as a worker: our own (`current_exe`), or in benches the built
    /// `duckgate` binary.
    pub worker_exe: Option<PathBuf>,
    /// Tables and columns hidden from agents.
    pub privacy: PrivacyPolicy,
    /// The audit log every tool call is recorded in, if the operator asked for one.
    pub audit: Option<Arc<AuditLog>>,
}

/// Warm spares by default: enough to absorb a burst of four parallel calls (agents send
/// parallel tool calls) without any of them waiting for a worker to start. Forked spares are
/// cheap: ~2.4 MB of their own each (see `crate::sandbox::budget::IDLE_PROCESS_BYTES`).
pub const DEFAULT_WARM_WORKERS: usize = 4;

impl GatewayConfig {
    /// Defaults for everything but the database path.
    pub fn new(db_path: PathBuf) -> GatewayConfig {
        GatewayConfig {
            db_path,
            timeout: Duration::from_secs(30),
            queue_timeout: Duration::from_secs(10),
            memory_budget: None,
            memory_limit: None,
            temp_dir: None,
            max_temp_bytes: DEFAULT_MAX_TEMP_BYTES,
            threads: 2,
            time_zone: crate::time_zone::local(),
            max_result_bytes: 1024 * 1024,
            warm_workers: DEFAULT_WARM_WORKERS,
            max_concurrent: 4,
            fork_workers: true,
            missing_db_hint: DEFAULT_MISSING_DB_HINT.into(),
            allow_unconfined: false,
            worker_exe: None,
            privacy: PrivacyPolicy::default(),
            audit: None,
        }
    }
}

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
pub const DEFAULT_MISSING_DB_HINT: &str = "Create the database first (for a demo: `duckgate demo --out PATH`), or pass the right path with --db.";

/// A failure with a registry kind, ready for the envelope.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GatewayError {
    /// Registry kind.
    pub kind: ErrorKind,
    /// What happened, for the agent.
    pub message: String,
    /// The offending construct, when the validator refused.
    pub construct: Option<String>,
    /// What to do next.
    pub suggestion: Option<String>,
    /// For `unknown_name` from DuckDB: what it could not find (typed by the engine).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub missing: Option<MissingName>,
    /// For a worker refusal the parent acts on: which one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refusal: Option<WorkerRefusal>,
}

impl GatewayError {
    fn new(kind: ErrorKind, message: impl Into<String>) -> GatewayError {
        GatewayError {
            kind,
            message: message.into(),
            construct: None,
            suggestion: None,
            missing: None,
            refusal: None,
        }
    }
}

impl From<WorkerError> for GatewayError {
    fn from(e: WorkerError) -> Self {
        GatewayError {
            kind: e.kind,
            message: e.message,
            construct: e.construct,
            suggestion: e.suggestion,
            missing: e.missing,
            refusal: e.refusal,
        }
    }
}

impl From<validate::Refusal> for GatewayError {
    fn from(r: validate::Refusal) -> Self {
        GatewayError {
            kind: r.kind,
            message: r.message,
            construct: (!r.construct.is_empty()).then_some(r.construct),
            suggestion: (!r.suggestion.is_empty()).then_some(r.suggestion),
            missing: None,
            refusal: None,
        }
    }
}

/// The database file's identity: the cached catalog is good while it is unchanged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct DbStamp {
    ino: u64,
    size: u64,
    mtime_ns: i128,
    wal: Option<(u64, u64, i128)>,
}

fn stamp(path: &std::path::Path) -> Option<DbStamp> {
    let m = std::fs::metadata(path).ok()?;
    let mtime = |m: &std::fs::Metadata| m.mtime() as i128 * 1_000_000_000 + m.mtime_nsec() as i128;
    let wal = std::fs::metadata(wal_path(path))
        .ok()
        .map(|w| (w.ino(), w.size(), mtime(&w)));
    Some(DbStamp {
        ino: m.ino(),
        size: m.size(),
        mtime_ns: mtime(&m),
        wal,
    })
}

#[derive(Debug)]
struct CachedCatalog {
    stamp: DbStamp,
    snapshot: Arc<CatalogSnapshot>,
    for_validator: Arc<validate::Catalog>,
}

#[derive(Debug)]
struct Inner {
    config: GatewayConfig,
    pool: Arc<Pool>,
    bypass: Bypass,
    limits: validate::Limits,
    catalog: Mutex<Option<CachedCatalog>>,
    /// The start-up preflight's posture, or the refusal every call is answered with.
    confinement: Result<Posture, GatewayError>,
}

/// Validates and runs requests through single-use confined workers.
#[derive(Debug, Clone)]
pub struct Gateway {
    inner: Arc<Inner>,
}

/// Largest catalog reply accepted from a worker.
const MAX_CATALOG_REPLY_BYTES: usize = 32 * 1024 * 1024;

impl Gateway {
    /// Start the gateway and begin warming its worker pool.
    ///
    /// First runs the confinement preflight ([`crate::sandbox::preflight`]): when this kernel
    /// cannot confine workers and `allow_unconfined` is off, or confinement fails outright, this
    /// returns the refusal: a `sandbox_unavailable` error whose message is one paragraph for
    /// stderr and whose suggestion is the operator's fix ([`Gateway::refusing`] serves it).
    pub async fn start(config: GatewayConfig) -> Result<Gateway, GatewayError> {
        let (spec, bypass) = worker_spec(&config)?;
        if let Some(root) = &spec.temp_root
            && root.backing() == Backing::Memory
        {
            tracing::warn!(
                path = %root.root().display(),
                "the workers' temporary directory is on a file system kept in RAM (tmpfs): spilled data stays in memory, outside --memory-budget; pass --temp-dir on a disk"
            );
        }
        if !bypass.is_empty() {
            tracing::error!(
                layers = %bypass.to_env_value(),
                "TEST-ONLY LAYER BYPASS IS ON: security layers are switched off. Never run like this outside the test suite."
            );
        }
        let pool = Pool::new(spec, config.warm_workers, config.max_concurrent);
        let confinement = preflight::check(pool.spec())
            .await
            .map_err(sandbox_unavailable)?;
        pool.refill();
        Ok(Gateway::with(config, pool, bypass, Ok(confinement)))
    }

    /// A gateway that answers every call with `refusal` (from [`Gateway::start`]) and never
    /// starts a worker: how a server on a kernel that cannot confine workers still explains
    /// itself to an MCP client, which shows tool errors but not stderr.
    pub fn refusing(config: GatewayConfig, refusal: GatewayError) -> Result<Gateway, GatewayError> {
        let (mut spec, bypass) = worker_spec(&config)?;
        spec.temp_root = None;
        spec.fork_workers = false;
        // Never refilled and never asked: every path to a worker checks the refusal first.
        let pool = Pool::new(spec, 0, 1);
        Ok(Gateway::with(config, pool, bypass, Err(refusal)))
    }

    fn with(
        config: GatewayConfig,
        pool: Arc<Pool>,
        bypass: Bypass,
        confinement: Result<Posture, GatewayError>,
    ) -> Gateway {
        Gateway {
            inner: Arc::new(Inner {
                config,
                pool,
                bypass,
                limits: validate::Limits::default(),
                catalog: Mutex::new(None),
                confinement,
            }),
        }
    }

    /// The configuration in force.
    pub fn config(&self) -> &GatewayConfig {
        &self.inner.config
    }

    /// The posture the start-up preflight found workers will have, or why the server refuses
    /// to run queries at all.
    pub fn confinement(&self) -> Result<&Posture, &GatewayError> {
        self.inner.confinement.as_ref()
    }

    /// What the kernel cannot enforce, accepted by `--allow-unconfined` (empty when workers are
    /// fully confined, or when the server refuses); the caller announces it.
    pub fn unenforced(&self) -> Vec<preflight::Gap> {
        match &self.inner.confinement {
            Ok(posture) => preflight::gaps(posture),
            Err(_) => Vec::new(),
        }
    }

    /// How the memory budget is shared among workers.
    pub fn memory(&self) -> WorkerMemory {
        self.inner.pool.spec().memory
    }

    /// Where workers spill and how much each may (`None`: spilling is off).
    pub fn spill(&self) -> Option<SpillInfo> {
        let spec = self.inner.pool.spec();
        spec.temp_root.as_ref().map(|root| SpillInfo {
            root: root.root().to_path_buf(),
            backing: root.backing(),
            max_bytes_per_worker: spec.worker.max_temp_bytes,
        })
    }

    /// Where workers come from now: forked from the template, or spawned and why.
    pub async fn worker_origin(&self) -> crate::sandbox::pool::WorkerOrigin {
        self.inner.pool.worker_origin().await
    }

    /// Test-only layers switched off (empty in production).
    pub fn bypassed_layers(&self) -> Vec<String> {
        self.inner.bypass.names()
    }

    fn database_not_found(&self) -> GatewayError {
        let path = &self.inner.config.db_path;
        GatewayError {
            kind: ErrorKind::DatabaseNotFound,
            message: format!(
                "No database file at {}. {}",
                path.display(),
                self.inner.config.missing_db_hint
            ),
            construct: None,
            suggestion: Some(self.inner.config.missing_db_hint.clone()),
            missing: None,
            refusal: None,
        }
    }

    /// The catalog, cached until the database file changes (size, mtime or inode).
    pub async fn catalog(&self) -> Result<Arc<CatalogSnapshot>, GatewayError> {
        Ok(self.catalogs().await?.0)
    }

    async fn catalogs(
        &self,
    ) -> Result<(Arc<CatalogSnapshot>, Arc<validate::Catalog>), GatewayError> {
        let Some(now) = stamp(&self.inner.config.db_path) else {
            return Err(self.database_not_found());
        };
        let mut cache = self.inner.catalog.lock().await;
        if let Some(c) = cache.as_ref().filter(|c| c.stamp == now) {
            return Ok((Arc::clone(&c.snapshot), Arc::clone(&c.for_validator)));
        }
        let response = self
            .run(
                &Request::Catalog,
                &CancellationToken::new(),
                MAX_CATALOG_REPLY_BYTES,
            )
            .await?;
        let Response::Catalog(snapshot) = response else {
            return Err(unexpected(&response));
        };
        let (snapshot, _) = without_hidden(snapshot, &self.inner.config.privacy);
        let mut for_validator = validator_catalog(&snapshot);
        for_validator.restricted = !self.inner.config.privacy.is_empty();
        // The name workers attach the database under: `alias.schema.table` resolves to it.
        for_validator.database = crate::engine::database_alias(&self.inner.config.db_path);
        let for_validator = Arc::new(for_validator);
        let snapshot = Arc::new(snapshot);
        *cache = Some(CachedCatalog {
            stamp: now,
            snapshot: Arc::clone(&snapshot),
            for_validator: Arc::clone(&for_validator),
        });
        Ok((snapshot, for_validator))
    }

    /// Validate `sql` against the current catalog (skipped only under the test bypass).
    pub async fn validate(&self, sql: &str) -> Result<(), GatewayError> {
        if self.inner.bypass.is_off(Layer::Validator) {
            return Ok(());
        }
        let (_, catalog) = self.catalogs().await?;
        let accepted = validate::check(sql, &catalog, &self.inner.limits)?;
        // `Unparsed`: sqlparser could not parse it and its tokens hold no evidence against it.
        // It goes on to the worker like any accepted statement: the worker checks every query
        // with DuckDB's own syntax tree and plan, and that check decides.
        if accepted.kind == validate::StatementKind::Unparsed {
            tracing::debug!("the parent could not parse the SQL; the worker's check decides");
        }
        Ok(())
    }

    /// Validate and run one query; `cancel` kills its worker at once.
    pub async fn query(
        &self,
        sql: &str,
        limit: usize,
        cancel: CancellationToken,
    ) -> Result<QueryResult, GatewayError> {
        self.validate(sql).await?;
        let request = Request::Query {
            sql: sql.to_string(),
            limit,
            max_bytes: self.inner.config.max_result_bytes,
            privacy: self.inner.config.privacy.clone(),
        };
        match self
            .run(&request, &cancel, self.inner.pool.spec().max_reply_bytes)
            .await
            .map_err(|e| self.private_error(e))?
        {
            // No check of result column names here: a withheld `SELECT 1 AS <hidden name>`
            // would confirm the name. The worker's shadow catalog keeps hidden columns out of
            // every result (`src/engine/shadow.rs`).
            Response::Rows(rows) => Ok(rows),
            other => Err(unexpected(&other)),
        }
    }

    /// Validate `sql` as [`Gateway::query`] does, run it in a confined worker and have that
    /// worker draw `chart` from two of its result columns.
    pub async fn plot(
        &self,
        sql: &str,
        chart: ChartRequest,
        cancel: CancellationToken,
    ) -> Result<ChartReply, GatewayError> {
        self.validate(sql).await?;
        let request = Request::Plot {
            sql: sql.to_string(),
            chart,
            privacy: self.inner.config.privacy.clone(),
        };
        // A PNG of up to plot::MAX_PNG_BYTES, base64, plus its summary table.
        let max_reply = self
            .inner
            .pool
            .spec()
            .max_reply_bytes
            .max(crate::plot::MAX_PNG_BYTES / 3 * 4 + 1024 * 1024);
        match self
            .run(&request, &cancel, max_reply)
            .await
            .map_err(|e| self.private_error(e))?
        {
            Response::Chart(chart) => Ok(chart),
            other => Err(unexpected(&other)),
        }
    }

    /// Validate `sql` and return DuckDB's plan for it.
    pub async fn explain(
        &self,
        sql: &str,
        cancel: CancellationToken,
    ) -> Result<ExplainResult, GatewayError> {
        self.validate(sql).await?;
        let request = Request::Explain {
            sql: sql.to_string(),
            privacy: self.inner.config.privacy.clone(),
        };
        match self
            .run(&request, &cancel, self.inner.pool.spec().max_reply_bytes)
            .await
            .map_err(|e| self.private_error(e))?
        {
            Response::Plan(plan) => Ok(plan),
            other => Err(unexpected(&other)),
        }
    }

    /// Under privacy rules, DuckDB's own "not found" errors are reworded so they depend only on
    /// the name the query wrote ([`privacy::unknown_name_refusal`]; the worker has done so too,
    /// this holds if it did not). The worker's own privacy refusal (from its plan check) gets
    /// its recovery hint here. Both are recognised by type, never by their words.
    fn private_error(&self, mut error: GatewayError) -> GatewayError {
        if self.inner.config.privacy.is_empty() {
            return error;
        }
        match (error.kind, error.refusal) {
            (ErrorKind::PolicyBlocked, Some(WorkerRefusal::PrivacyPlan)) => {
                error.suggestion = Some(privacy::PLAN_REFUSAL_HINT.into());
                error
            }
            (ErrorKind::UnknownName, _) => {
                privacy::unknown_name_refusal(error.missing.as_ref()).into()
            }
            (
                ErrorKind::PolicyBlocked
                | ErrorKind::MultipleStatements
                | ErrorKind::SyntaxError
                | ErrorKind::InvalidArgument
                | ErrorKind::Timeout
                | ErrorKind::ResourceLimit
                | ErrorKind::Cancelled
                | ErrorKind::Busy
                | ErrorKind::DatabaseNotFound
                | ErrorKind::DatabaseLocked
                | ErrorKind::DatabaseError
                | ErrorKind::InternalError
                | ErrorKind::SandboxUnavailable,
                _,
            ) => error,
        }
    }

    /// The sandbox posture a worker actually has.
    pub async fn posture(&self) -> Result<Posture, GatewayError> {
        self.refusal()?;
        Ok(self
            .inner
            .pool
            .probe_posture(self.inner.config.timeout)
            .await?)
    }

    /// The start-up refusal, if the server refuses to run queries.
    pub fn refusal(&self) -> Result<(), GatewayError> {
        match &self.inner.confinement {
            Ok(_) => Ok(()),
            Err(refusal) => Err(refusal.clone()),
        }
    }

    /// Kill warm spares (call before exiting).
    pub async fn shutdown(&self) {
        self.inner.pool.drain().await;
    }

    async fn run(
        &self,
        request: &Request,
        cancel: &CancellationToken,
        max_reply_bytes: usize,
    ) -> Result<Response, GatewayError> {
        self.refusal()?;
        if !self.inner.config.db_path.exists() {
            return Err(self.database_not_found());
        }
        let deadline = self.inner.config.timeout;
        let queue_timeout = self.inner.config.queue_timeout;
        match self
            .inner
            .pool
            .run(request, deadline, queue_timeout, cancel, max_reply_bytes)
            .await
        {
            Ok(Response::Error(e)) => {
                if e.kind == ErrorKind::DatabaseNotFound {
                    return Err(self.database_not_found());
                }
                Err(e.into())
            }
            Ok(response) => Ok(response),
            Err(RunError::Timeout) => Err(GatewayError::new(
                ErrorKind::Timeout,
                messages::timeout(deadline.as_secs().max(1)),
            )),
            Err(RunError::Cancelled) => Err(GatewayError::new(
                ErrorKind::Cancelled,
                "The call was cancelled by the client and its worker was stopped.",
            )),
            // Other calls held every worker: this one never ran, so it is not a timeout.
            Err(RunError::Busy(busy)) => Err(GatewayError::new(ErrorKind::Busy, busy.message())),
            Err(RunError::Worker(e)) => Err(e.into()),
        }
    }
}

/// Each worker's memory share from the operator's flags ([`crate::sandbox::budget`]): the one
/// place the budget is sized, for the workers and for `server_info`.
pub fn worker_memory(config: &GatewayConfig, exe: &Path) -> Result<WorkerMemory, GatewayError> {
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
    .map_err(|e| GatewayError::new(ErrorKind::InvalidArgument, e.to_string()))
}

/// The main thread's stack (RLIMIT_STACK's usual 8 MiB), which RLIMIT_DATA does not charge.
const MAIN_STACK_BYTES: u64 = 8 << 20;

/// Address space a worker may reserve beyond its memory cap: the binary's mappings, thread-stack
/// guard pages and the allocator's reserved-but-unused ranges, none of which is resident
/// writable memory.
const ADDRESS_SPACE_SLACK_BYTES: u64 = 4 << 30;

/// The workers' command line and limits from the operator's configuration, and the test bypass.
/// Opens the workers' temporary root (sweeping what dead servers left) unless spilling is off.
pub fn worker_spec(config: &GatewayConfig) -> Result<(WorkerSpec, Bypass), GatewayError> {
    let bypass = Bypass::from_env()
        .map_err(|e| GatewayError::new(ErrorKind::InternalError, e.to_string()))?;
    let exe = match &config.worker_exe {
        Some(exe) => exe.clone(),
        None => std::env::current_exe().map_err(|e| {
            GatewayError::new(
                ErrorKind::InternalError,
                format!("cannot find our own binary to start workers: {e}"),
            )
        })?,
    };
    let memory = worker_memory(config, &exe)?;
    let temp_root = if config.max_temp_bytes == 0 {
        None
    } else {
        let root = config
            .temp_dir
            .clone()
            .unwrap_or_else(temp_dir::default_root);
        Some(Arc::new(TempRoot::open(&root).map_err(|e| {
            GatewayError::new(ErrorKind::InvalidArgument, e.to_string())
        })?))
    };
    let timeout_secs = config.timeout.as_secs().max(1);
    let spec = WorkerSpec {
        exe,
        worker: WorkerArgs {
            db: config.db_path.clone(),
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
            max_temp_bytes: config.max_temp_bytes,
            parent_pid: std::process::id() as i32,
            allow_unconfined: config.allow_unconfined,
            start: WorkerStart::OnDemand,
        },
        bypass: bypass.clone(),
        max_reply_bytes: config
            .max_result_bytes
            .saturating_mul(2)
            .saturating_add(256 * 1024),
        startup_timeout: Duration::from_secs(20),
        temp_root,
        memory,
        fork_workers: config.fork_workers,
    };
    Ok((spec, bypass))
}

/// The start-up refusal as the error every call is answered with.
fn sandbox_unavailable(refusal: preflight::StartRefusal) -> GatewayError {
    GatewayError {
        kind: ErrorKind::SandboxUnavailable,
        message: refusal.to_string(),
        construct: None,
        suggestion: Some(preflight::FIX.to_string()),
        missing: None,
        refusal: None,
    }
}

fn unexpected(response: &Response) -> GatewayError {
    let what = match response {
        Response::Rows(_) => "rows",
        Response::Plan(_) => "a plan",
        Response::Catalog(_) => "a catalog",
        Response::Posture(_) => "a posture report",
        Response::Probe(_) => "a probe report",
        Response::Chart(_) => "a chart",
        Response::Error(_) => "an error",
    };
    GatewayError::new(
        ErrorKind::InternalError,
        format!("the worker answered with {what}, which does not fit the request"),
    )
}

/// The validator's view of the catalog: names only. The snapshot does not say what the database
/// is attached as: the caller sets `database` (see `Gateway::catalogs`).
pub fn validator_catalog(snapshot: &CatalogSnapshot) -> validate::Catalog {
    validate::Catalog {
        relations: snapshot
            .tables
            .iter()
            .map(|t| validate::CatalogRelation {
                schema: t.schema.clone(),
                name: t.name.clone(),
                columns: t.columns.iter().map(|c| c.name.clone()).collect(),
            })
            .collect(),
        restricted: false,
        database: String::new(),
    }
}

/// Hidden columns of the tables that stay visible, by `(schema, table)`.
type HiddenColumns = std::collections::HashMap<(String, String), Vec<String>>;

/// `snapshot` as the agent may see it: hidden tables gone, hidden columns gone, and every
/// foreign key, column reference and index that names something hidden gone with them. Also
/// returns the hidden columns of each visible table, for the validator to refuse expansions.
pub fn without_hidden(
    mut snapshot: CatalogSnapshot,
    policy: &PrivacyPolicy,
) -> (CatalogSnapshot, HiddenColumns) {
    let mut hidden = HiddenColumns::new();
    if policy.is_empty() {
        return (snapshot, hidden);
    }
    let hidden_tables: Vec<String> = snapshot
        .tables
        .iter()
        .filter(|t| policy.hides_table(&t.schema, &t.name))
        .map(|t| t.name.to_lowercase())
        .collect();
    snapshot
        .tables
        .retain(|t| !policy.hides_table(&t.schema, &t.name));
    // Foreign keys and `references` name tables without their schema; a name that is hidden in
    // any schema is treated as hidden (conservative).
    let table_hidden = |name: &str| hidden_tables.contains(&name.to_lowercase());
    let column_hidden = |table: &str, column: &str| {
        table_hidden(table)
            || snapshot.tables.iter().any(|t| {
                t.name.eq_ignore_ascii_case(table)
                    && policy.hides_column(&t.schema, &t.name, column)
            })
    };
    let foreign_keys: Vec<_> = snapshot
        .foreign_keys
        .iter()
        .filter(|fk| {
            !fk.columns.iter().any(|c| column_hidden(&fk.table, c))
                && !fk
                    .referenced_columns
                    .iter()
                    .any(|c| column_hidden(&fk.referenced_table, c))
        })
        .cloned()
        .collect();
    let mut dangling_references = Vec::new();
    for table in &snapshot.tables {
        for column in &table.columns {
            if let Some(target) = &column.references
                && column_hidden(&target.table, &target.column)
            {
                dangling_references.push((
                    table.schema.clone(),
                    table.name.clone(),
                    column.name.clone(),
                ));
            }
        }
    }
    for table in &mut snapshot.tables {
        let (schema, name) = (table.schema.clone(), table.name.clone());
        let hidden_here: Vec<String> = table
            .columns
            .iter()
            .filter(|c| policy.hides_column(&schema, &name, &c.name))
            .map(|c| c.name.clone())
            .collect();
        if hidden_here.is_empty() {
            continue;
        }
        table.columns.retain(|c| !hidden_here.contains(&c.name));
        // An index definition names its columns; drop any that names a hidden one.
        table.indexes.retain(|index| {
            let sql = index.sql.as_deref().unwrap_or("").to_lowercase();
            !hidden_here.iter().any(|c| sql.contains(&c.to_lowercase()))
        });
        hidden.insert((schema, name), hidden_here);
    }
    for table in &mut snapshot.tables {
        for column in &mut table.columns {
            if dangling_references
                .iter()
                .any(|(s, t, c)| *s == table.schema && *t == table.name && *c == column.name)
            {
                column.references = None;
            }
        }
    }
    snapshot.foreign_keys = foreign_keys;
    (snapshot, hidden)
}
