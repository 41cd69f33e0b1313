//! The only code that touches DuckDB: hardened open, attach, statement check, run, catalog.
//!
//! A worker creates one [`Engine`] before any request: an in-memory DuckDB instance with
//! extensions locked down, external access off except for the database file and its WAL, no
//! temp spilling, and a warm-up query. When the request arrives it [`Engine::attach`]es the
//! database read-only, switches DuckDB's local file system off (the attached file keeps being
//! read through its open handle) and locks the configuration, so an idle worker holds no lock
//! on the file and the query cannot open any file at all.

mod catalog;
mod checker;
mod convert;
pub mod demo_data;
mod errors;
pub mod import;
mod plan_check;
mod plot_data;
mod shadow;
mod statement;

use std::io::Write;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::time::Instant;

use duckdb::{Config, Connection};
use serde_json::Value as Json;

use crate::error::ErrorKind;
use crate::privacy::PrivacyPolicy;
use crate::protocol::{CatalogSnapshot, ColumnMeta, ExplainResult, QueryResult, WorkerError};
// The engine's names for the one quoting rule (`crate::sql_text`), used by its submodules too.
use crate::sql_text::{quote_identifier as sql_identifier, quote_literal as sql_string};
use crate::validate::tree::{TreeFacts, TreeRules};
use convert::ColumnType;
use errors::{attach_error, not_found, query_error, worker_error};

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

/// The settings read back for the posture report, in report order.
const REPORTED_SETTINGS: [&str; 12] = [
    "enable_external_access",
    "allowed_paths",
    "allowed_directories",
    "autoload_known_extensions",
    "autoinstall_known_extensions",
    "allow_community_extensions",
    "allow_unsigned_extensions",
    "lock_configuration",
    "memory_limit",
    "threads",
    "temp_directory",
    "max_temp_directory_size",
];

/// A worker's DuckDB instance.
pub struct Engine {
    conn: Connection,
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
    /// The catalog name of the attached database, once attached.
    alias: Option<String>,
    /// The attached database file, for [`Engine::release_file_lock`].
    attached_file: Option<PathBuf>,
    /// The file lock was released without a detach: DuckDB must not read the file again.
    lock_released: bool,
    /// Time spent attaching, counted into the next query's duration.
    pending_attach_ms: f64,
    /// The operator's privacy rules for this request, when there are any (see
    /// [`Engine::enforce_privacy`]).
    privacy: Option<PrivacyPolicy>,
    /// The catalog name the database is attached as ([`database_alias`]).
    database: String,
    /// Under privacy rules, the private name the file is attached as and the shadow catalog
    /// under the public one (`shadow`).
    shadow: Option<shadow::Shadow>,
    /// The SQL the checker thread last passed, with what its walk of DuckDB's syntax tree found,
    /// so the plan check need not parse it again.
    checked: Option<(String, TreeFacts)>,
    /// A spare forked from the template that has not warmed up in its own process yet
    /// ([`Engine::warm_up_while_idle`]).
    cold_copy: bool,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("harden", &self.harden)
            .field("spills", &self.spills)
            .field("alias", &self.alias)
            .field("privacy", &self.privacy.is_some())
            .finish_non_exhaustive()
    }
}

/// The path as text DuckDB and our `allowed_paths` agree on: absolute (without resolving
/// symlinks, which is a pure string operation) and UTF-8.
fn path_text(path: &Path) -> Result<String, WorkerError> {
    let absolute: PathBuf = std::path::absolute(path).map_err(|e| {
        worker_error(
            ErrorKind::InvalidArgument,
            format!("Bad database path {}: {e}", path.display()),
        )
    })?;
    absolute.to_str().map(str::to_owned).ok_or_else(|| {
        worker_error(
            ErrorKind::InvalidArgument,
            format!(
                "The database path {} is not valid UTF-8.",
                absolute.display()
            ),
        )
    })
}

/// The catalog name the database is attached as: its file stem when that is a plain
/// identifier (as the DuckDB CLI names it), else `db`.
pub fn database_alias(db_path: &Path) -> String {
    let stem = db_path.file_stem().and_then(|s| s.to_str()).unwrap_or("");
    let plain = stem
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && stem.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    // Names DuckDB itself uses for built-in catalogs would clash.
    let reserved = ["memory", "system", "temp", "main"]
        .iter()
        .any(|r| stem.eq_ignore_ascii_case(r));
    if plain && !reserved {
        stem.to_string()
    } else {
        "db".to_string()
    }
}

/// A warm DuckDB instance that runs no thread but its caller's: what the zygote's template
/// holds and forks (see [`Engine::template`]). Its one way on is [`Template::into_worker`].
pub struct Template {
    engine: Engine,
    full_warm_up: bool,
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
    /// external access off but for the database and its WAL, then the checker thread. Each
    /// setting is in force before the worker reports ready.
    pub fn into_worker(
        self,
        spill: Option<&Spill>,
        db_path: &Path,
        wal_path: &Path,
    ) -> Result<Engine, WorkerError> {
        let Template {
            mut engine,
            full_warm_up,
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
            settings.push_str(&format!(
                " SET allowed_paths = [{}, {}]; SET enable_external_access = false;",
                sql_string(&path_text(db_path)?),
                sql_string(&path_text(wal_path)?)
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
        engine.database = database_alias(db_path);
        let checker = checker::Checker::start(&engine.conn)?;
        if full_warm_up {
            // The checker thread's path for the settings after an attach; this value is the
            // default, so nothing changes.
            let pending = checker.submit_configure("SET disabled_optimizers = '';".into())?;
            checker.collect_configured(pending)?;
        }
        checker.ready()?;
        engine.checker = Some(checker);
        engine.cold_copy = full_warm_up && warmed_in != std::process::id();
        Ok(engine)
    }
}

impl Engine {
    /// Create the hardened in-memory instance and warm it up: [`Engine::template`], then
    /// [`Template::into_worker`] at once (a spawned worker; the zygote's children do the second
    /// step after the fork).
    pub fn open(
        cfg: &EngineConfig,
        db_path: &Path,
        wal_path: &Path,
    ) -> Result<Engine, WorkerError> {
        Engine::template(cfg)?.into_worker(cfg.spill.as_ref(), db_path, wal_path)
    }

    /// Create the in-memory instance, warm, and single-threaded: DuckDB runs no thread of its
    /// own (`threads = 1`: no scheduler threads beside the caller's; `async_threads = 0`: none
    /// of DuckDB 2.0's asynchronous-I/O pool, which otherwise starts eight) and no checker
    /// thread exists yet, so the process may `fork()` (`crate::sandbox::zygote`). Settings that
    /// differ per worker, or that would lock the template out of them, wait for
    /// [`Template::into_worker`]: the temporary directory, the thread count, the allowed paths
    /// and external access.
    pub fn template(cfg: &EngineConfig) -> Result<Template, WorkerError> {
        let internal = |e: duckdb::Error| {
            worker_error(
                ErrorKind::InternalError,
                format!("Could not configure DuckDB: {e}"),
            )
        };
        let mut config = Config::default()
            .with("memory_limit", format!("{}B", cfg.memory_limit_bytes))
            .map_err(internal)?
            .with("threads", "1")
            .map_err(internal)?
            .with("async_threads", "0")
            .map_err(internal)?
            // No spilling until the worker's own directory is set (`into_worker`).
            .with("temp_directory", "")
            .map_err(internal)?
            .with("max_temp_directory_size", "0B")
            .map_err(internal)?
            // Persistent secrets would make DuckDB look in the home directory.
            .with("allow_persistent_secrets", "false")
            .map_err(internal)?;
        if cfg.harden {
            // Extension policy is fixed at startup: some of these cannot be changed later.
            for (key, value) in [
                ("autoinstall_known_extensions", "false"),
                ("autoload_known_extensions", "false"),
                ("allow_community_extensions", "false"),
                ("allow_unsigned_extensions", "false"),
            ] {
                config = config.with(key, value).map_err(internal)?;
            }
        }
        let conn = Connection::open_in_memory_with_flags(config).map_err(|e| {
            worker_error(
                ErrorKind::InternalError,
                format!("Could not start DuckDB: {e}"),
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
            checker: None,
            threads: cfg.threads,
            harden: cfg.harden,
            spills: false,
            memory: errors::MemoryFacts {
                limit_bytes: cfg.memory_limit_bytes,
                cap_bytes: cfg.memory_cap_bytes,
                max_temp_bytes: None,
            },
            alias: None,
            attached_file: None,
            lock_released: false,
            pending_attach_ms: 0.0,
            privacy: None,
            database: String::new(),
            shadow: None,
            checked: None,
            cold_copy: false,
        };
        engine.warm_up()?;
        if cfg.full_warm_up {
            engine.warm_up_request_paths()?;
        }
        Ok(Template {
            engine,
            full_warm_up: cfg.full_warm_up,
            warmed_in: std::process::id(),
        })
    }

    /// For a spare forked from the template: if no request comes within `grace`, run the
    /// request paths once in this process (`idle` tells whether one came). Its first writes to
    /// the template's pages are copy-on-write faults; paid here instead of inside the request,
    /// a forked spare answers as fast as a spawned one after a pause (measured: `SELECT 1` 0.8
    /// ms slower without). Back to back the request is already waiting and nothing is spent.
    pub fn warm_up_while_idle(&mut self, idle: impl FnOnce() -> bool) -> Result<(), WorkerError> {
        if std::mem::take(&mut self.cold_copy) && idle() {
            self.warm_up_request_paths()?;
        }
        Ok(())
    }

    /// The checker thread, which only a [`Template`] lacks: fail closed without it.
    fn checker(&self) -> Result<&checker::Checker, WorkerError> {
        self.checker.as_ref().ok_or_else(|| {
            worker_error(
                ErrorKind::InternalError,
                "DuckDB's statement check is not running in this process.",
            )
        })
    }

    /// Exercise the paths every request takes (parser, binder, a small scan) so their one-time
    /// costs are paid now; the checker thread warms the JSON serializer meanwhile.
    fn warm_up(&self) -> Result<(), WorkerError> {
        let warm = |e: duckdb::Error| {
            worker_error(
                ErrorKind::InternalError,
                format!("DuckDB warm-up failed: {e}"),
            )
        };
        let n: i64 = self
            .conn
            .query_row(
                "SELECT count(*) FROM range(1000) t(i) WHERE i % 7 = 0",
                [],
                |r| r.get(0),
            )
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
    fn warm_up_request_paths(&mut self) -> Result<(), WorkerError> {
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
        self.run_query("SELECT * FROM readings LIMIT 1000", 1000, usize::MAX)?;
        self.run_query(
            "SELECT device, avg(glucose) AS mean, count(*) AS n FROM readings \
             GROUP BY device ORDER BY device",
            100,
            usize::MAX,
        )?;
        self.conn
            .execute_batch(&format!("USE memory; DETACH {WARM_UP_DATABASE};"))
            .map_err(warm)
    }

    /// Attach the database read-only, make it the default, and lock the configuration.
    pub fn attach(&mut self, db_path: &Path) -> Result<(), WorkerError> {
        self.attach_checking(db_path, None)
    }

    /// [`Engine::attach`], while DuckDB's parser checks `sql` (see [`Engine::check_statement`])
    /// on the checker thread. An attach error is reported first (it is the operator's to fix
    /// whatever the query), then the check's.
    pub fn attach_checking(
        &mut self,
        db_path: &Path,
        sql: Option<&str>,
    ) -> Result<(), WorkerError> {
        let rules = self.tree_rules();
        let pending_check = match sql {
            Some(sql) => Some(self.checker()?.submit(sql, &rules)?),
            None => None,
        };
        let attached = self.attach_now(db_path);
        let checked = match pending_check {
            Some(pending) => self.checker()?.collect(pending).map(Some),
            None => Ok(None),
        };
        attached?;
        if let (Some(sql), Some(facts)) = (sql, checked?) {
            self.checked = Some((sql.to_owned(), facts));
        }
        Ok(())
    }

    fn attach_now(&mut self, db_path: &Path) -> Result<(), WorkerError> {
        self.ensure_lock_held()?;
        let started = Instant::now();
        let text = path_text(db_path)?;
        match std::fs::metadata(&text) {
            Ok(meta) if meta.is_dir() => {
                return Err(worker_error(
                    ErrorKind::DatabaseError,
                    format!("The database path {text} is a directory, not a DuckDB file."),
                ));
            }
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(not_found(Path::new(&text)));
            }
            // Anything else (e.g. denied) is DuckDB's to report below.
            Err(_) => {}
        }
        let alias = database_alias(db_path);
        // Under privacy rules the file goes under a private name and the binder sees only the
        // shadow catalog under the public one (`shadow`).
        let shadow = self.privacy.as_ref().map(|_| shadow::Shadow {
            private: shadow::private_alias(),
            public: alias.clone(),
        });
        let attached_as = shadow.as_ref().map_or(&alias, |s| &s.private).clone();
        let attach = format!(
            "ATTACH {} AS {} (READ_ONLY)",
            sql_string(&text),
            sql_identifier(&attached_as)
        );
        self.conn
            .execute_batch(&attach)
            .map_err(|e| attach_error(&e, Path::new(&text)))?;
        if self.privacy.is_some() {
            // The plan check reads DuckDB's unoptimized logical plan too, where a scan the
            // optimizer drops (`LIMIT 0`) still shows; a setting of this connection, set before
            // the checker thread locks the configuration below.
            self.conn
                .execute_batch("SET explain_output = 'all';")
                .map_err(|e| {
                    worker_error(
                        ErrorKind::InternalError,
                        format!("Could not configure DuckDB for the query: {e}"),
                    )
                })?;
        }
        // The settings that must hold before any query: global, so the checker's connection
        // sets them while this one selects the database; the query runs only once both are
        // done (`collect_configured` below), and a failure of either fails the request.
        let mut hardening = String::new();
        if self.privacy.is_some() {
            // The plan the privacy check reads must not depend on the data (see
            // `plan_check`); set before the lock, and for the query as well as the check.
            hardening.push_str(&format!(
                "SET disabled_optimizers = {};",
                sql_string(plan_check::DATA_DEPENDENT_OPTIMIZERS)
            ));
        }
        if self.harden {
            // `allowed_paths` lets SQL *write* the database and its WAL too (measured:
            // `COPY … TO '<db>' (USE_TMP_FILE false)` overwrote the file), and ATTACH adds
            // them to it anyway. Once attached, DuckDB reads through handles it already holds,
            // so without spilling the local file system can go entirely (DuckDB refuses to
            // re-enable it). Spilling needs it: DuckDB's temporary files go through the same
            // file system (measured: with it disabled, a spilling DISTINCT fails with
            // "File system LocalFileSystem has been disabled by configuration"). Then writes to
            // the database are denied by landlock (read-only grant) and by both SQL checks.
            if !self.spills {
                hardening.push_str(" SET disabled_filesystems = 'LocalFileSystem';");
            }
            // The lock comes last: after it no setting can change (`USE` still can: DuckDB
            // always allows `schema` and `search_path`).
            hardening.push_str(" SET lock_configuration = true;");
        }
        let pending = if hardening.is_empty() {
            None
        } else {
            Some(self.checker()?.submit_configure(hardening)?)
        };
        let selected = match (&shadow, &self.privacy) {
            (Some(shadow), Some(policy)) => shadow.build(&self.conn, policy),
            _ => self
                .conn
                .execute_batch(&format!("USE {};", sql_identifier(&alias)))
                .map_err(|e| {
                    worker_error(
                        ErrorKind::InternalError,
                        format!("Could not select the database: {e}"),
                    )
                }),
        };
        if let Some(pending) = pending {
            self.checker()?.collect_configured(pending)?;
        }
        selected?;
        self.alias = Some(attached_as);
        self.shadow = shadow;
        self.attached_file = Some(PathBuf::from(text));
        self.pending_attach_ms = started.elapsed().as_secs_f64() * 1e3;
        Ok(())
    }

    /// What the walk of DuckDB's syntax tree needs to know about this request.
    fn tree_rules(&self) -> TreeRules<'_> {
        TreeRules {
            database: &self.database,
            restricted: self.privacy.is_some(),
        }
    }

    /// Enforce `policy` on this request's query: call before [`Engine::attach`], then
    /// [`Engine::check_plan`] before running anything. An empty policy changes nothing.
    pub fn enforce_privacy(&mut self, policy: &PrivacyPolicy) {
        self.privacy = (!policy.is_empty()).then(|| policy.clone());
    }

    /// Refuse `sql` unless DuckDB's own plan for it reads only the attached database, through
    /// allowed table functions and known operators, and, under privacy rules, no hidden table,
    /// no hidden column and no catalog listing (kind `policy_blocked`); see `plan_check`.
    /// Call after the attach.
    pub fn check_plan(&mut self, sql: &str) -> Result<(), WorkerError> {
        self.ensure_lock_held()?;
        let alias = self.alias.as_deref().ok_or_else(|| {
            worker_error(
                ErrorKind::InternalError,
                "check_plan() called before attach()",
            )
        })?;
        let started = Instant::now();
        // What the checker thread's walk found of this very SQL, when it checked it (not under
        // the test bypass): parsing it again would cost as much as the attach it ran beside.
        let facts = match self.checked.take() {
            Some((checked, facts)) if checked == sql => Some(facts),
            _ => None,
        };
        let rules = plan_check::PlanRules {
            alias,
            privacy: self.privacy.as_ref(),
        };
        let verdict = plan_check::check(&self.conn, &rules, sql, facts);
        self.pending_attach_ms += started.elapsed().as_secs_f64() * 1e3;
        verdict
    }

    /// The catalog name the database is attached as, once attached.
    pub fn alias(&self) -> Option<&str> {
        self.alias.as_deref()
    }

    /// Release the database's file lock before the reply leaves the worker, so that once the
    /// parent has a reply the user's pipeline may open the file for writing, without paying for
    /// a detach on the way out.
    ///
    /// DuckDB holds a POSIX (`fcntl`) read lock on an attached file, and POSIX ends all of a
    /// process's locks on a file when the process closes *any* descriptor of it: opening the
    /// file and closing it again releases the lock in microseconds, where `DETACH` takes
    /// 0.5–1 ms on the critical path (it frees the attached catalog and cached blocks; `cargo
    /// bench --bench worker_latency`). Without its lock the attached database must not be read
    /// again, so every later query, catalog read or attach on this engine is refused: the worker
    /// answers and exits. If the file cannot be opened (removed meanwhile), this detaches.
    pub fn release_file_lock(&mut self) -> Result<(), WorkerError> {
        let Some(file) = self.attached_file.take() else {
            return Ok(());
        };
        self.lock_released = true;
        match std::fs::File::open(&file) {
            // Dropping the descriptor closes it, which is what releases the lock.
            Ok(descriptor) => {
                drop(descriptor);
                Ok(())
            }
            Err(_) => self.detach(),
        }
    }

    /// Refuse to touch the database once [`Engine::release_file_lock`] gave up its lock.
    fn ensure_lock_held(&self) -> Result<(), WorkerError> {
        if self.lock_released {
            return Err(worker_error(
                ErrorKind::InternalError,
                "This worker released its lock on the database and cannot read it again.",
            ));
        }
        Ok(())
    }

    /// Detach the database, which also releases its file lock.
    pub fn detach(&mut self) -> Result<(), WorkerError> {
        self.attached_file = None;
        let Some(alias) = self.alias.take() else {
            return Ok(());
        };
        let mut detach = format!("USE memory; DETACH {};", sql_identifier(&alias));
        if let Some(shadow) = self.shadow.take() {
            detach.push_str(&format!(" DETACH {};", sql_identifier(&shadow.public)));
        }
        self.conn.execute_batch(&detach).map_err(|e| {
            worker_error(
                ErrorKind::InternalError,
                format!("Could not detach the database: {e}"),
            )
        })
    }

    /// DuckDB's own parser must see exactly one statement of a read-only type, and the worker's
    /// walk of its syntax tree (`validate::tree`) must pass it.
    pub fn check_statement(&self, sql: &str) -> Result<(), WorkerError> {
        let checker = self.checker()?;
        let pending = checker.submit(sql, &self.tree_rules())?;
        checker.collect(pending).map(drop)
    }

    /// Run one statement, streaming at most `limit + 1` rows and `max_bytes` of JSON row data.
    ///
    /// Callers must have passed `sql` through [`Engine::check_statement`] (unless a test bypass
    /// says otherwise): the `duckdb` crate's `prepare` *executes* every statement but the last
    /// of a multi-statement text.
    pub fn run_query(
        &mut self,
        sql: &str,
        limit: usize,
        max_bytes: usize,
    ) -> Result<QueryResult, WorkerError> {
        self.ensure_lock_held()?;
        let memory = self.memory;
        let query_error = |e: &duckdb::Error| memory.explain(query_error(e));
        let started = Instant::now();
        let mut stmt = self.conn.prepare(sql).map_err(|e| query_error(&e))?;
        // Refuse types the conversion cannot return faithfully before anything runs.
        for i in 0..stmt.column_count() {
            let ty = ColumnType::from_duckdb(&stmt.column_logical_type(i), None);
            if let Some(reason) = ty.unsupported_reason() {
                return Err(worker_error(
                    ErrorKind::DatabaseError,
                    format!(
                        "Result column {} has type {}, which duckgate cannot return: {reason}. \
                         Cast that column to text in the query, e.g. column_name::VARCHAR.",
                        i + 1,
                        ty.type_name()
                    ),
                ));
            }
        }
        // Streaming execution: DuckDB produces chunks as we fetch them, so stopping early stops
        // the work (a plain `query` would materialise the whole result first).
        drop(stmt.stream_arrow([]).map_err(|e| query_error(&e))?);

        let column_count = stmt.column_count();
        let mut types = Vec::with_capacity(column_count);
        let mut columns = Vec::with_capacity(column_count);
        for i in 0..column_count {
            let arrow = stmt.column_type(i);
            let ty = ColumnType::from_duckdb(&stmt.column_logical_type(i), Some(&arrow));
            let name = stmt.column_name(i).cloned().unwrap_or_default();
            columns.push(ColumnMeta {
                name,
                data_type: ty.type_name(),
            });
            types.push(ty);
        }

        let mut rows: Vec<Vec<Json>> = Vec::new();
        let mut bytes = 0usize;
        let mut truncated = false;
        // The crate panics on a few Arrow shapes it does not know; a panic here must become an
        // error for this call, not a dead worker with no reply.
        let fetched = catch_unwind(AssertUnwindSafe(|| -> Result<(), WorkerError> {
            let mut cursor = stmt.raw_query();
            while let Some(row) = cursor.next().map_err(|e| query_error(&e))? {
                if rows.len() >= limit {
                    truncated = true;
                    break;
                }
                let mut values = Vec::with_capacity(column_count);
                for (i, ty) in types.iter().enumerate() {
                    // A bare `NULL` column has Arrow type Null, which the crate cannot read.
                    if ty.is_null_type() {
                        values.push(Json::Null);
                        continue;
                    }
                    let value = row.get_ref(i).map_err(|e| query_error(&e))?.to_owned();
                    values.push(convert::to_json(&value, Some(ty)));
                }
                // Rows are joined by commas in a JSON array.
                let size = json_size(&values) + usize::from(!rows.is_empty());
                if bytes + size > max_bytes {
                    truncated = true;
                    break;
                }
                bytes += size;
                rows.push(values);
            }
            Ok(())
        }));
        match fetched {
            Ok(result) => result?,
            Err(_) => {
                return Err(worker_error(
                    ErrorKind::DatabaseError,
                    "A result value could not be converted. Cast unusual columns to VARCHAR.",
                ));
            }
        }
        let duration_ms = self.pending_attach_ms + started.elapsed().as_secs_f64() * 1e3;
        self.pending_attach_ms = 0.0;
        Ok(QueryResult {
            columns,
            row_count: rows.len(),
            rows,
            truncated,
            duration_ms,
        })
    }

    /// DuckDB's plan for `sql` as JSON (`EXPLAIN (FORMAT JSON)`); the same caveat as
    /// [`Engine::run_query`] applies to multi-statement text.
    pub fn explain(&mut self, sql: &str) -> Result<ExplainResult, WorkerError> {
        let explain = format!("EXPLAIN (FORMAT JSON) {sql}");
        let result = self.run_query(&explain, 16, 16 * 1024 * 1024)?;
        let mut plans = serde_json::Map::new();
        for row in &result.rows {
            let (Some(Json::String(key)), Some(Json::String(value))) = (row.first(), row.get(1))
            else {
                continue;
            };
            // Under privacy rules DuckDB prints its logical plans too, for the plan check
            // (`explain_output`); the agent asked for the plan that runs.
            if self.shadow.is_some() && (key == "logical_plan" || key == "logical_opt") {
                continue;
            }
            let parsed =
                serde_json::from_str(value).unwrap_or_else(|_| Json::String(value.clone()));
            plans.insert(key.clone(), parsed);
        }
        let plan = match plans.len() {
            0 => {
                return Err(worker_error(
                    ErrorKind::DatabaseError,
                    "DuckDB returned no plan.",
                ));
            }
            1 => plans
                .into_iter()
                .next()
                .map(|(_, v)| v)
                .unwrap_or(Json::Null),
            _ => Json::Object(plans),
        };
        let mut plan = plan;
        if let Some(shadow) = &self.shadow {
            shadow.scrub_json(&mut plan);
        }
        Ok(ExplainResult { plan })
    }

    /// Under privacy rules, an error as the agent may see it: the private name of the database
    /// replaced by its public one, and a "not found" error in words that depend only on the
    /// name the query wrote (`privacy::unknown_name_refusal`), so a hidden name and a made-up
    /// one fail alike. Without rules, the error as is.
    pub fn private_error(&self, error: WorkerError) -> WorkerError {
        let Some(shadow) = &self.shadow else {
            return error;
        };
        if error.kind == ErrorKind::UnknownName {
            return crate::privacy::unknown_name_refusal(error.missing.as_ref());
        }
        WorkerError {
            message: shadow.scrub(&error.message),
            construct: error.construct.map(|c| shadow.scrub(&c)),
            suggestion: error.suggestion.map(|s| shadow.scrub(&s)),
            ..error
        }
    }

    /// Under privacy rules, a result as the agent may see it: no column name, type or value
    /// carries the database's private name (none should: catalog listings are refused).
    pub fn private_result(&self, mut result: QueryResult) -> QueryResult {
        let Some(shadow) = &self.shadow else {
            return result;
        };
        for column in &mut result.columns {
            column.name = shadow.scrub(&column.name);
            column.data_type = shadow.scrub(&column.data_type);
        }
        for row in &mut result.rows {
            for cell in row.iter_mut() {
                shadow.scrub_json(cell);
            }
        }
        result
    }

    /// Tables, views, columns, constraints and indexes of the attached database.
    pub fn catalog(&mut self) -> Result<CatalogSnapshot, WorkerError> {
        self.ensure_lock_held()?;
        let alias = self.alias.clone().ok_or_else(|| {
            worker_error(ErrorKind::InternalError, "catalog() called before attach()")
        })?;
        catalog::snapshot(&self.conn, &alias)
    }

    /// The security-relevant settings as DuckDB reports them now, and whether DuckDB's local
    /// file system is switched off (`local_file_system`), found by trying to use it, because
    /// DuckDB reads `disabled_filesystems` back as empty even when it is set.
    pub fn settings_readback(&self) -> Vec<(String, String)> {
        // One scan of duckdb_settings() for all names: it is in every worker's start-up path.
        let list = REPORTED_SETTINGS
            .iter()
            .map(|n| format!("'{n}'"))
            .collect::<Vec<_>>()
            .join(", ");
        let sql = format!(
            "SELECT name, coalesce(value, 'NULL') FROM duckdb_settings() WHERE name IN ({list})"
        );
        let mut found: std::collections::HashMap<String, String> = std::collections::HashMap::new();
        let read = self.conn.prepare(&sql).and_then(|mut stmt| {
            let rows =
                stmt.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))?;
            rows.collect::<Result<Vec<_>, _>>()
        });
        let error = match read {
            Ok(rows) => {
                found.extend(rows);
                None
            }
            Err(e) => Some(e.to_string()),
        };
        let mut settings: Vec<(String, String)> = REPORTED_SETTINGS
            .iter()
            .map(|name| {
                let value = match (found.get(*name), &error) {
                    (Some(v), _) => v.clone(),
                    (None, Some(e)) => format!("<unreadable: {e}>"),
                    (None, None) => "<not reported by DuckDB>".to_string(),
                };
                (name.to_string(), value)
            })
            .collect();
        settings.push(("local_file_system".into(), self.local_file_system_state()));
        settings
    }

    fn local_file_system_state(&self) -> String {
        let probe = self.conn.query_row(
            "SELECT count(*) FROM read_blob('/nonexistent/duckgate-posture-probe')",
            [],
            |r| r.get::<_, i64>(0),
        );
        match probe {
            Ok(_) => "enabled".into(),
            Err(e) => {
                let message = errors::duckdb_message(&e);
                if message.contains("File system LocalFileSystem has been disabled") {
                    "disabled".into()
                } else if message.contains("disabled by configuration") {
                    "enabled (file access denied by enable_external_access=false)".into()
                } else {
                    format!("enabled (probe: {})", message.lines().next().unwrap_or(""))
                }
            }
        }
    }
}

/// Bytes `value` takes as compact JSON, without building the string.
fn json_size(value: &impl serde::Serialize) -> usize {
    struct Counter(usize);
    impl Write for Counter {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut counter = Counter(0);
    // Writing to a counter cannot fail and the values are plain JSON.
    let _ = serde_json::to_writer(&mut counter, value);
    counter.0
}

#[cfg(test)]
mod tests;
