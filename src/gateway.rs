//! The parent's one entry point for everything a tool needs: validate, then ask a confined worker.
//!
//! The MCP layer and the CLI talk only to [`Gateway`]; nothing in the parent opens the database.
//! The operator's configuration and the workers' spec made from it are in `gateway/config.rs`;
//! the catalog the parent keeps, and what the privacy rules strip from it, in
//! `gateway/catalog.rs`.

mod catalog;
mod config;
pub mod database_file;

use std::sync::Arc;

use tokio::sync::Mutex;
use tokio_util::sync::CancellationToken;

use crate::privacy;
use crate::protocol::{
    ChartReply, ChartRequest, ExplainResult, Posture, QueryResult, Request, Response,
};
use crate::sandbox::budget::WorkerMemory;
use crate::sandbox::bypass::{Bypass, Layer};
use crate::sandbox::pool::{Pool, RunError};
use crate::sandbox::preflight;
use crate::sandbox::temp_dir::Backing;
use catalog::CachedCatalog;
pub use catalog::{validator_catalog, without_hidden};
pub use config::{
    DEFAULT_MAX_CONCURRENT, DEFAULT_MAX_REPLY_BYTES, DEFAULT_MAX_TEMP_BYTES,
    DEFAULT_MISSING_DB_HINT, DEFAULT_QUEUE_TIMEOUT_SECS, DEFAULT_THREADS, DEFAULT_TIMEOUT_SECS,
    DEFAULT_WARM_WORKERS, GatewayConfig, SpillInfo, worker_memory, worker_spec,
};
use duckgate_validate::error::{ErrorKind, Failure, MessageOrigin, WorkerRefusal, messages};
use duckgate_validate::validate;

#[derive(Debug)]
struct Inner {
    config: GatewayConfig,
    pool: Arc<Pool>,
    bypass: Bypass,
    limits: validate::Limits,
    catalog: Mutex<Option<CachedCatalog>>,
    /// The start-up preflight's posture, or the refusal every call is answered with.
    confinement: Result<Posture, Failure>,
}

/// Validates and runs requests through single-use confined workers.
#[derive(Debug, Clone)]
pub struct Gateway {
    inner: Arc<Inner>,
}

impl Gateway {
    /// Start the gateway and begin warming its worker pool.
    ///
    /// First runs the confinement preflight ([`crate::sandbox::preflight`]): when this kernel
    /// cannot confine workers and `allow_unconfined` is off, or confinement fails outright, this
    /// returns the refusal: a `sandbox_unavailable` error whose message is one paragraph for
    /// stderr and whose suggestion is the operator's fix ([`Gateway::refusing`] serves it).
    pub async fn start(config: GatewayConfig) -> Result<Gateway, Failure> {
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
                layers = %bypass.names().join(","),
                "TEST-ONLY LAYER BYPASS IS ON: security layers are switched off. Never run like this outside the test suite."
            );
        }
        let pool = Pool::new(spec, config.warm_workers, config.max_concurrent);
        let confinement = preflight::probe_and_decide(pool.spec())
            .await
            .map_err(sandbox_unavailable)?;
        pool.refill();
        Ok(Gateway::with(config, pool, bypass, Ok(confinement)))
    }

    /// A gateway that answers every call with `refusal` (from [`Gateway::start`]) and never
    /// starts a worker: how a server on a kernel that cannot confine workers still explains
    /// itself to an MCP client, which shows tool errors but not stderr.
    pub fn refusing(config: GatewayConfig, refusal: Failure) -> Result<Gateway, Failure> {
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
        confinement: Result<Posture, Failure>,
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

    /// The declared folders as the workers are given them (validated at start-up), the caps on
    /// what one query reads of them, and the database files no folder serves.
    pub fn folder_rules(&self) -> crate::folders::FolderRules {
        self.inner.pool.spec().worker.folder_rules()
    }

    /// The posture the start-up preflight found workers will have, or why the server refuses
    /// to run queries at all.
    pub fn confinement(&self) -> Result<&Posture, &Failure> {
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

    /// Why a database cannot be used now, as the kernel answers for its path: missing (the
    /// operator's hint), or not readable by this process (the folder or file that stops it);
    /// `None` when every one can be read. The reply names the database, never its path: no
    /// reply carries a host path (the operator's stderr has it, `database_lines`).
    fn database_unavailable(&self) -> Option<Failure> {
        self.inner.config.databases.iter().find_map(|database| {
            match database_file::examine(&database.path) {
                database_file::DatabaseFile::Readable => None,
                database_file::DatabaseFile::Missing => Some(self.database_not_found(database)),
                database_file::DatabaseFile::Unreadable(why) => Some(Failure {
                    kind: ErrorKind::DatabaseError,
                    message: why.for_agent(&database.name),
                    construct: None,
                    suggestion: Some(why.next_step()),
                    missing: None,
                    refusal: None,
                    origin: MessageOrigin::Duckgate,
                }),
            }
        })
    }

    fn database_not_found(&self, database: &crate::protocol::databases::Database) -> Failure {
        let which = if self.inner.config.databases.len() > 1 {
            format!("The database \"{}\" has no file yet", database.name)
        } else {
            "The database file does not exist yet".to_owned()
        };
        Failure {
            kind: ErrorKind::DatabaseNotFound,
            message: format!("{which}. {}", self.inner.config.missing_db_hint),
            construct: None,
            suggestion: Some(self.inner.config.missing_db_hint.clone()),
            missing: None,
            refusal: None,
            origin: MessageOrigin::Duckgate,
        }
    }

    /// Attach every database once through a confined worker, as a query would, and read their
    /// catalog (kept for the first call): what the start-up check runs. The failure of an
    /// attach carries the database's name in `construct`.
    pub async fn attach_check(&self) -> Result<(), Failure> {
        self.catalogs().await.map(drop)
    }

    /// Validate `sql` against the current catalog (skipped only under the test bypass).
    pub async fn validate(&self, sql: &str) -> Result<(), Failure> {
        if self.inner.bypass.is_off(Layer::Validator) {
            return Ok(());
        }
        let (_, catalog) = self.catalogs().await?;
        let accepted = validate::validate_sql(sql, &catalog, &self.inner.limits)?;
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
    ) -> Result<QueryResult, Failure> {
        let request = Request::Query {
            sql: sql.to_string(),
            limit,
            // The rows as JSON alone can never be more than the whole reply's budget; the MCP
            // layer then fits rows and their text together into it.
            max_bytes: self.inner.config.max_reply_bytes,
            privacy: self.inner.config.privacy.clone(),
        };
        let max_reply = self.inner.pool.spec().max_reply_bytes;
        match self.run_sql(sql, &request, max_reply, &cancel).await? {
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
    ) -> Result<ChartReply, Failure> {
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
        match self.run_sql(sql, &request, max_reply, &cancel).await? {
            Response::Chart(chart) => Ok(chart),
            other => Err(unexpected(&other)),
        }
    }

    /// Validate `sql` and return DuckDB's plan for it.
    pub async fn explain(
        &self,
        sql: &str,
        cancel: CancellationToken,
    ) -> Result<ExplainResult, Failure> {
        let request = Request::Explain {
            sql: sql.to_string(),
            privacy: self.inner.config.privacy.clone(),
        };
        let max_reply = self.inner.pool.spec().max_reply_bytes;
        match self.run_sql(sql, &request, max_reply, &cancel).await? {
            Response::Plan(plan) => Ok(plan),
            other => Err(unexpected(&other)),
        }
    }

    /// The one path of the agent's SQL, whichever tool sent it: validated here, then `request`
    /// (which carries `sql`) run in a confined worker with a reply of at most `max_reply_bytes`,
    /// and under privacy rules the worker's errors reworded ([`Gateway::private_error`]).
    async fn run_sql(
        &self,
        sql: &str,
        request: &Request,
        max_reply_bytes: usize,
        cancel: &CancellationToken,
    ) -> Result<Response, Failure> {
        self.validate(sql).await?;
        self.run(request, cancel, max_reply_bytes)
            .await
            .map_err(|e| self.private_error(e))
    }

    /// Under privacy rules, DuckDB's own "not found" errors are reworded so they depend only on
    /// the name the query wrote ([`privacy::unknown_name_failure`]; the worker has done so too,
    /// this holds if it did not). The worker's own privacy refusal (from its plan check) gets
    /// its recovery hint here. Both are recognised by type, never by their words.
    fn private_error(&self, mut error: Failure) -> Failure {
        if self.inner.config.privacy.is_empty() {
            return error;
        }
        match (error.kind, error.refusal) {
            (ErrorKind::PolicyBlocked, Some(WorkerRefusal::PrivacyPlan)) => {
                error.suggestion = Some(privacy::PLAN_REFUSAL_HINT.into());
                error
            }
            (ErrorKind::UnknownName, _) => privacy::unknown_name_failure(error.missing.as_ref()),
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
    pub async fn posture(&self) -> Result<Posture, Failure> {
        self.refusal()?;
        self.inner
            .pool
            .probe_posture(self.inner.config.timeout)
            .await
    }

    /// The start-up refusal, if the server refuses to run queries.
    pub fn refusal(&self) -> Result<(), Failure> {
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
    ) -> Result<Response, Failure> {
        self.refusal()?;
        if let Some(unavailable) = self.database_unavailable() {
            return Err(unavailable);
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
                // The file went between the check above and the worker's attach: the kernel's
                // answer now, with the operator's hint.
                if e.kind == ErrorKind::DatabaseNotFound {
                    return Err(self.database_unavailable().unwrap_or(e));
                }
                Err(e)
            }
            Ok(response) => Ok(response),
            Err(RunError::Timeout) => Err(Failure::new(
                ErrorKind::Timeout,
                messages::timeout(deadline.as_secs().max(1)),
            )),
            Err(RunError::Cancelled) => Err(Failure::new(
                ErrorKind::Cancelled,
                "The call was cancelled by the client and its worker was stopped.",
            )),
            // Other calls held every worker: this one never ran, so it is not a timeout.
            Err(RunError::Busy(busy)) => Err(Failure::new(ErrorKind::Busy, busy.message())),
            Err(RunError::Worker(e)) => Err(e),
        }
    }
}

/// The start-up refusal as the error every call is answered with.
fn sandbox_unavailable(refusal: preflight::StartRefusal) -> Failure {
    let fix = match &refusal {
        preflight::StartRefusal::Unconfinable(gaps) => preflight::fix_for(gaps),
        preflight::StartRefusal::SetupFailed(_) => preflight::FIX.to_string(),
    };
    Failure {
        kind: ErrorKind::SandboxUnavailable,
        message: refusal.to_string(),
        construct: None,
        suggestion: Some(fix),
        missing: None,
        refusal: None,
        origin: MessageOrigin::Duckgate,
    }
}

fn unexpected(response: &Response) -> Failure {
    let what = match response {
        Response::Rows(_) => "rows",
        Response::Plan(_) => "a plan",
        Response::Catalog(_) => "a catalog",
        Response::Posture(_) => "a posture report",
        #[cfg(feature = "test-bypass")]
        Response::Probe(_) => "a probe report",
        Response::Chart(_) => "a chart",
        Response::Error(_) => "an error",
    };
    Failure::new(
        ErrorKind::InternalError,
        format!("the worker answered with {what}, which does not fit the request"),
    )
}
