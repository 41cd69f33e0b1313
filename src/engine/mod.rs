//! The only code that touches DuckDB: hardened open, attach, statement check, run, catalog.
//!
//! A worker creates one [`Engine`] before any request: an in-memory DuckDB instance with
//! extensions locked down, external access off except for each database file and its WAL (and,
//! when the parent gives it one, its own spill directory, capped by `max_temp_directory_size`),
//! and a warm-up query. When the request arrives it [`Engine::attach`]es every database
//! read-only under its name (`crate::protocol::databases`) and locks the configuration, so an idle worker
//! holds no lock on any file. Without spilling it also switches DuckDB's local file system off
//! (the attached files keep being read through their open handles), so the query cannot open
//! any file; with spilling DuckDB needs that file system for its temporary files, and what SQL
//! could name is held by the two SQL checks and by landlock, which grants each database
//! read-only and writes only in the spill directory.
//!
//! This file holds the hardened open; the request's attach is in `attach.rs`, running its
//! statement in `run.rs`, the catalog in `catalog.rs` and the settings read back for the posture
//! in `settings.rs`.

mod attach;
mod catalog;
mod checker;
mod convert;
mod errors;
mod held;
mod lineage;
mod local_time;
mod own_sql;
mod pivot;
mod plan_check;
pub(crate) use pivot::PivotValues;
mod plot_data;
mod run;
mod settings;
mod shadow;
mod statement;

pub use held::HeldDatabases;
pub use statement::{CheckedQuery, Checks};

use std::path::{Path, PathBuf};

use std::sync::Arc;

use duckdb::Connection;
use duckgate_plan_reader::ArmedConnection;

use crate::privacy::PrivacyPolicy;
use crate::protocol::Failure;
use crate::protocol::databases::{Databases, held_name};
use duckgate_validate::error::ErrorKind;
// The engine's names for the one quoting rule (`crate::sql_text`), used by its submodules too.
use crate::sql_text::{quote_identifier as sql_identifier, quote_literal as sql_string};
use errors::worker_error;

/// How the worker's DuckDB instance is configured.
#[derive(Debug, Clone)]
pub struct EngineConfig {
    /// DuckDB `memory_limit` in bytes: past it DuckDB spills (with `spill`) or fails.
    pub memory_limit_bytes: u64,
    /// The worker's hard memory cap (RLIMIT_DATA), named when a query reaches it; `None` where
    /// no cap was set (tests, benches).
    pub memory_cap_bytes: Option<u64>,
    /// Where DuckDB spills, and how much; `None`: no spilling.
    pub spill: Option<Spill>,
    /// DuckDB worker threads.
    pub threads: u32,
    /// DuckDB's `TimeZone` (an IANA name), set before the configuration is locked.
    pub time_zone: String,
    /// Apply DuckDB's hardening (external access, extensions, lock_configuration).
    /// `false` only under the operator's test bypass.
    pub harden: bool,
    /// Also warm the paths a request takes ([`Engine::warm_up_request_paths`]): for a spare,
    /// which has time before its request; an on-demand worker skips it.
    pub full_warm_up: bool,
    /// The operator's declared folders, mounted as `NAME/…` on DuckDB's file system, and the
    /// caps on the files one query binds.
    pub folders: crate::folders::FolderRules,
}

/// DuckDB's temporary directory: the worker's private one (`crate::sandbox::temp_dir`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Spill {
    /// The directory, private to this worker; landlock lets it write nowhere else.
    pub dir: std::path::PathBuf,
    /// DuckDB's `max_temp_directory_size`, in bytes.
    pub max_bytes: u64,
}

/// The throw-away in-memory database of [`Engine::warm_up_request_paths`].
const WARM_UP_DATABASE: &str = "duckgate_warm_up";

/// A worker's DuckDB instance.
pub struct Engine {
    conn: Connection,
    /// The judge of every plan DuckDB prepares on `conn` (`plan_check`): it allows the
    /// engine's own statements until a request's rules are given to it, then judges every plan.
    judge: Arc<plan_check::PlanJudge>,
    /// `conn` armed with `judge`, and how many plans it judged.
    armed: ArmedConnection,
    /// The database `conn` belongs to, for DuckDB's parser of a `PIVOT` (`pivot.rs`).
    token: duckgate_plan_reader::DatabaseToken,
    /// The plan counts when the last [`Engine::prepare_checked`] began (see
    /// [`Engine::ensure_plan_judged`]).
    prepared_since: std::cell::Cell<(u64, u64)>,
    /// DuckDB's parser on a second connection and thread, so the statement check runs while
    /// the database is being attached (each takes about a millisecond). `None` only inside a
    /// [`Template`], which must stay single-threaded; every request path asks for it through
    /// [`Engine::checker`], which fails closed.
    checker: Option<checker::Checker>,
    /// DuckDB worker threads once the engine serves ([`Template::into_worker`]).
    threads: u32,
    harden: bool,
    /// DuckDB spills to the worker's temporary directory, so the local file system must stay
    /// enabled (see the hardening in `attach_now`).
    spills: bool,
    /// The memory and spill limits, for the message of a query that reaches them.
    memory: errors::MemoryFacts,
    /// The databases as this request attached them, the default first (empty until then).
    attached: Vec<crate::plan_policy::Attached>,
    /// The file lock was released without a detach: DuckDB must not read the file again.
    lock_released: bool,
    /// Time spent attaching, counted into the next query's duration.
    pending_attach_ms: f64,
    /// The operator's privacy rules for this request, when there are any (see
    /// [`Engine::enforce_privacy`]).
    privacy: Option<PrivacyPolicy>,
    /// The databases this worker serves, the default first, set when it becomes a worker
    /// ([`Template::into_worker`]): each is attached under its name (under privacy rules, under
    /// a private one, its name then the shadow catalog's).
    databases: Option<Databases>,
    /// Under privacy rules, the private names the files are attached as and the shadow
    /// catalogs under the public ones (`shadow`).
    shadow: Option<shadow::Shadow>,
    /// A spare forked from the template that has not warmed up in its own process yet
    /// ([`Engine::warm_up_while_idle`]).
    cold_copy: bool,
    /// Warm the request paths too, not only the parser (a spare's and the template's engine).
    full_warm_up: bool,
    /// DuckDB's `TimeZone`: TIMESTAMPTZ values are shown in it (`local_time.rs`).
    time_zone: String,
    /// The declared folders and their caps (`crate::folders`).
    folders: Arc<crate::folders::FolderRules>,
    /// Their names, as the walks of the SQL take them.
    folder_names: Vec<String>,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("harden", &self.harden)
            .field("spills", &self.spills)
            .field("attached", &self.attached)
            .field("privacy", &self.privacy.is_some())
            .finish_non_exhaustive()
    }
}

/// `N` bytes from the kernel's random source (`getrandom(2)`), drawn by the calling process:
/// the per-request secrets of a worker, which must differ between workers forked from one
/// template (everything in a template's memory is copied into each of them).
fn kernel_random<const N: usize>() -> Result<[u8; N], Failure> {
    let mut bytes = [0u8; N];
    getrandom::fill(&mut bytes).map_err(|e| {
        worker_error(
            ErrorKind::InternalError,
            format!("Could not draw random bytes from the kernel: {e}"),
        )
    })?;
    Ok(bytes)
}

/// The path as text DuckDB and our `allowed_paths` agree on: absolute (without resolving
/// symlinks, which is a pure string operation) and UTF-8. The server refuses a database path
/// that is not UTF-8 at start-up (`databases::Databases::new`); the error names no path, since
/// it reaches the agent.
fn path_text(path: &Path) -> Result<String, Failure> {
    let unusable = |why: &str| {
        worker_error(
            ErrorKind::InvalidArgument,
            format!("A database or temporary path given to this worker {why}."),
        )
    };
    let absolute: PathBuf =
        std::path::absolute(path).map_err(|_| unusable("cannot be made absolute"))?;
    absolute
        .to_str()
        .map(str::to_owned)
        .ok_or_else(|| unusable("is not valid UTF-8"))
}

/// A warm DuckDB instance that runs no thread but its caller's: what the zygote's template
/// holds and forks (see [`Engine::template`]). Its one way on is [`Template::into_worker`].
pub struct Template {
    engine: Engine,
    /// The process that warmed the instance up. A forked copy of it warms up again: its first
    /// writes to the template's pages are copy-on-write faults, which belong before the request.
    warmed_in: u32,
}

impl std::fmt::Debug for Template {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Template").finish_non_exhaustive()
    }
}

impl Template {
    /// Make this instance a worker's, in the process that will answer the request (a forked
    /// child, after it has confined itself): its own temporary directory, its DuckDB threads,
    /// external access off but for each database and its WAL, then the checker thread. Each
    /// setting is in force before the worker reports ready.
    pub fn into_worker(
        self,
        spill: Option<&Spill>,
        databases: &Databases,
    ) -> Result<Engine, Failure> {
        let Template {
            mut engine,
            warmed_in,
        } = self;
        let mut settings = String::new();
        // With external access off (below), DuckDB adds its temp_directory to the directories
        // SQL may name: the worker's checks and the plan check refuse COPY and file-reading
        // functions, and landlock keeps every write inside this one private directory. It must
        // be set first: DuckDB refuses to change it once external access is off.
        if let Some(spill) = spill {
            settings.push_str(&format!(
                "SET temp_directory = {}; SET max_temp_directory_size = {};",
                sql_string(&path_text(&spill.dir)?),
                sql_string(&format!("{}B", spill.max_bytes))
            ));
        }
        // Starts the scheduler's threads, in this process.
        settings.push_str(&format!(" SET threads = {};", engine.threads.max(1)));
        if engine.harden {
            // allowed_paths must come first: once external access is off it cannot be widened.
            // The declared folders are allowed by the names DuckDB knows them by (`NAME/`): the
            // only file system that handles those names maps them to the folders.
            let folders: Vec<String> = engine
                .folder_names
                .iter()
                .map(|name| sql_string(&format!("{name}/")))
                .collect();
            if !folders.is_empty() {
                settings.push_str(&format!(
                    " SET allowed_directories = [{}];",
                    folders.join(", ")
                ));
            }
            // Every database and its WAL, each by the name the attach opens it by (`held`):
            // never a path of the host. Only the held descriptors' file system serves these
            // names, and only while duckgate's own ATTACH runs.
            let mut allowed = Vec::with_capacity(databases.len() * 2);
            for index in 0..databases.len() {
                let name = held_name(index);
                allowed.push(sql_string(&format!("{name}.wal")));
                allowed.push(sql_string(&name));
            }
            settings.push_str(&format!(
                " SET allowed_paths = [{}]; SET enable_external_access = false;",
                allowed.join(", ")
            ));
        }
        engine.conn.execute_batch(&settings).map_err(|e| {
            worker_error(
                ErrorKind::InternalError,
                format!("Could not harden DuckDB: {e}"),
            )
        })?;
        engine.spills = spill.is_some();
        engine.memory.max_temp_bytes = spill.map(|s| s.max_bytes);
        engine.databases = Some(databases.clone());
        engine.checker = Some(checker::Checker::start(&engine.conn, engine.token)?);
        // A forked copy warms up only while it waits (`Engine::warm_up_while_idle`): every
        // step of the warm-up is a copy-on-write fault or a first use that the request would
        // pay anyway, and back to back the request is already waiting.
        engine.cold_copy = engine.full_warm_up && warmed_in != std::process::id();
        if !engine.cold_copy {
            engine.warm_up_checker()?;
        }
        Ok(engine)
    }
}

impl Engine {
    /// Create the hardened in-memory instance and warm it up: [`Engine::template`], then
    /// [`Template::into_worker`] at once (a spawned worker; the zygote's children do the second
    /// step after the fork).
    /// The databases' files are opened here, in this process: for a confined worker, use
    /// [`Engine::open_holding`] with files opened before it confined itself.
    pub fn open(cfg: &EngineConfig, databases: &Databases) -> Result<Engine, Failure> {
        Engine::open_holding(cfg, databases, HeldDatabases::open(databases))
    }

    /// [`Engine::open`], reading the databases through `held` (opened by this process before it
    /// confined itself, [`HeldDatabases::open`]).
    pub fn open_holding(
        cfg: &EngineConfig,
        databases: &Databases,
        held: HeldDatabases,
    ) -> Result<Engine, Failure> {
        Engine::template(cfg, held)?.into_worker(cfg.spill.as_ref(), databases)
    }

    /// Create the in-memory instance, warm, and single-threaded: DuckDB runs no thread of its
    /// own (`threads = 1`: no scheduler threads beside the caller's; `async_threads = 0`: none
    /// of DuckDB 2.0's asynchronous-I/O pool, which otherwise starts eight) and no checker
    /// thread exists yet, so the process may `fork()` (`crate::sandbox::zygote`). Settings that
    /// differ per worker, or that would lock the template out of them, wait for
    /// [`Template::into_worker`]: the temporary directory, the thread count, the allowed paths
    /// and external access.
    /// The databases are read through `held` only (`held`): the files this process opened
    /// before it confined itself, which its forked workers inherit with the instance.
    pub fn template(cfg: &EngineConfig, held: HeldDatabases) -> Result<Template, Failure> {
        let memory_limit = format!("{}B", cfg.memory_limit_bytes);
        let mut settings: Vec<(&str, &str)> = vec![
            ("memory_limit", &memory_limit),
            ("threads", "1"),
            ("async_threads", "0"),
            // No spilling until the worker's own directory is set (`into_worker`).
            ("temp_directory", ""),
            ("max_temp_directory_size", "0B"),
            // Persistent secrets would make DuckDB look in the home directory.
            ("allow_persistent_secrets", "false"),
        ];
        if cfg.harden {
            // Extension policy is fixed at startup: some of these cannot be changed later.
            settings.extend([
                ("autoinstall_known_extensions", "false"),
                ("autoload_known_extensions", "false"),
                ("allow_community_extensions", "false"),
                ("allow_unsigned_extensions", "false"),
            ]);
        }
        // The plan reader is installed as the database opens, before any statement, and the
        // declared folders are mounted: `NAME/…` is read from the folder, and nothing else of
        // the host is reachable through this file system. Unhardened (the test bypass), it
        // leaves `..` and links out to the kernel, which must deny them alone.
        let mounts: Vec<(String, String)> = cfg
            .folders
            .folders
            .iter()
            .map(|f| (f.name.clone(), f.dir.to_string_lossy().into_owned()))
            .collect();
        let database_files: Vec<String> = cfg
            .folders
            .database_files
            .iter()
            .map(|f| f.to_string_lossy().into_owned())
            .collect();
        let folders = duckgate_plan_reader::FolderMounts {
            folders: &mounts,
            check: cfg.harden,
            database_files: &database_files,
            max_files: cfg.folders.max_files,
            max_bytes: cfg.folders.max_bytes,
        };
        let (conn, token) =
            duckgate_plan_reader::open_in_memory(&settings, &folders).map_err(|e| {
                worker_error(
                    ErrorKind::InternalError,
                    format!("Could not start DuckDB: {e}"),
                )
            })?;
        duckgate_plan_reader::hold_database_files(token, held.files).map_err(|e| {
            worker_error(
                ErrorKind::InternalError,
                format!("Could not mount the databases' files: {e}"),
            )
        })?;
        let judge = Arc::new(plan_check::PlanJudge::default());
        let armed = duckgate_plan_reader::arm(&conn, token, judge.clone()).map_err(|e| {
            worker_error(
                ErrorKind::InternalError,
                format!("Could not arm DuckDB's plan check: {e}"),
            )
        })?;
        // Global, so the checker's connection (opened later) has them too, and set before any
        // lock. The arrow form `x -> x * 2` is what agents write; DuckDB 2.0 refuses it unless
        // told otherwise (`lambda x: …` works either way).
        conn.execute_batch(&format!(
            "SET GLOBAL TimeZone = {};",
            sql_string(&cfg.time_zone)
        ))
        .map_err(|e| {
            worker_error(
                ErrorKind::InvalidArgument,
                format!(
                    "--time-zone {:?} is not a time zone DuckDB knows: {}",
                    cfg.time_zone,
                    errors::duckdb_message(&e)
                ),
            )
        })?;
        conn.execute_batch("SET GLOBAL lambda_syntax = 'ENABLE_SINGLE_ARROW';")
            .map_err(|e| {
                worker_error(
                    ErrorKind::InternalError,
                    format!("Could not enable the arrow lambda syntax: {e}"),
                )
            })?;
        let mut engine = Engine {
            conn,
            judge,
            armed,
            token,
            prepared_since: std::cell::Cell::new((0, 0)),
            checker: None,
            threads: cfg.threads,
            harden: cfg.harden,
            spills: false,
            memory: errors::MemoryFacts {
                limit_bytes: cfg.memory_limit_bytes,
                cap_bytes: cfg.memory_cap_bytes,
                max_temp_bytes: None,
            },
            attached: Vec::new(),
            lock_released: false,
            pending_attach_ms: 0.0,
            privacy: None,
            databases: None,
            shadow: None,
            cold_copy: false,
            full_warm_up: cfg.full_warm_up,
            time_zone: cfg.time_zone.clone(),
            folder_names: cfg.folders.names(),
            folders: Arc::new(cfg.folders.clone()),
        };
        engine.warm_up()?;
        if cfg.full_warm_up {
            engine.warm_up_request_paths()?;
        }
        Ok(Template {
            engine,
            warmed_in: std::process::id(),
        })
    }

    /// For a spare forked from the template: if no request comes within `grace`, run the
    /// request paths once in this process (`idle` tells whether one came). Its first writes to
    /// the template's pages are copy-on-write faults; paid here instead of inside the request,
    /// a forked spare answers as fast as a spawned one after a pause (measured: `SELECT 1` 0.8
    /// ms slower without). Back to back the request is already waiting and nothing is spent.
    pub fn warm_up_while_idle(&mut self, idle: impl FnOnce() -> bool) -> Result<(), Failure> {
        if std::mem::take(&mut self.cold_copy) && idle() {
            self.warm_up_checker()?;
            self.warm_up_request_paths()?;
        }
        Ok(())
    }

    /// The checker thread's warm-up ([`checker::Checker::warm_up`]); with the full warm-up,
    /// also its path for the settings after an attach (this value is the default, so nothing
    /// changes).
    fn warm_up_checker(&self) -> Result<(), Failure> {
        let settings = self
            .full_warm_up
            .then(|| "SET disabled_optimizers = '';".to_owned());
        self.checker()?.warm_up(settings)
    }

    /// The checker thread, which only a [`Template`] lacks: fail closed without it.
    fn checker(&self) -> Result<&checker::Checker, Failure> {
        self.checker.as_ref().ok_or_else(|| {
            worker_error(
                ErrorKind::InternalError,
                "DuckDB's statement check is not running in this process.",
            )
        })
    }

    /// Exercise the paths every request takes (parser, binder, a small scan) so their one-time
    /// costs are paid now; the checker thread warms the JSON serializer meanwhile.
    fn warm_up(&self) -> Result<(), Failure> {
        let warm = |e: duckdb::Error| {
            worker_error(
                ErrorKind::InternalError,
                format!("DuckDB warm-up failed: {e}"),
            )
        };
        let count = own_sql::OwnSql::fixed("SELECT count(*) FROM range(1000) t(i) WHERE i % 7 = 0");
        let n: i64 = statement::prepare_sql(
            &self.conn,
            statement::Sql::Own(&count),
            own_sql::Cache::Fresh,
        )
        .and_then(|mut stmt| stmt.query_row([], |r| r.get(0)))
        .map_err(warm)?;
        if n != 143 {
            return Err(worker_error(
                ErrorKind::InternalError,
                "DuckDB warm-up gave a wrong answer",
            ));
        }
        Ok(())
    }

    /// Run, on a throw-away in-memory database, the work a request does: an attach, a scan of a
    /// table of common types through the row conversion, a grouped and sorted aggregate, and a
    /// detach. A fresh process pays for the first use of each path (code pages faulted in,
    /// allocator arenas grown); a spare pays it here, before its request instead of inside it
    /// (`cargo bench --bench worker_latency`: a 1,000-row scan and a 100k-row aggregate each
    /// came back ~1.5 ms sooner). The database is detached before the worker reports ready, so
    /// no request can see it; if anything here fails, the worker fails closed.
    fn warm_up_request_paths(&mut self) -> Result<(), Failure> {
        let warm = |e: duckdb::Error| {
            worker_error(
                ErrorKind::InternalError,
                format!("DuckDB warm-up failed: {e}"),
            )
        };
        self.conn
            .execute_batch(&format!(
                "ATTACH ':memory:' AS {WARM_UP_DATABASE}; USE {WARM_UP_DATABASE};
                 CREATE TABLE readings AS
                   SELECT i AS id,
                          TIMESTAMP '2025-01-01' + INTERVAL (i * 5) MINUTE AS ts,
                          DATE '2025-01-01' + (i // 288)::INTEGER AS day,
                          'device ' || (i % 4) AS device,
                          (90 + i * 37 % 120)::INTEGER AS glucose,
                          (i * 0.01)::DECIMAL(10, 2) AS units,
                          i / 7 AS ratio,
                          i % 7 = 0 AS flagged
                   FROM range(5000) t(i);"
            ))
            .map_err(warm)?;
        let own = statement::CheckedQuery::own;
        self.run_query(&own("SELECT * FROM readings LIMIT 1000"), 1000, usize::MAX)?;
        self.run_query(
            &own(
                "SELECT device, avg(glucose) AS mean, count(*) AS n FROM readings \
                  GROUP BY device ORDER BY device",
            ),
            100,
            usize::MAX,
        )?;
        self.conn
            .execute_batch(&format!("USE memory; DETACH {WARM_UP_DATABASE};"))
            .map_err(warm)
    }
}

#[cfg(test)]
pub(crate) mod tests;
