//! What every command that talks to a gateway does first: its configuration from the flags,
//! the SQL argument, the start with its confinement preflight, and how each failure is reported
//! (usage errors exit 2, a refused start or a failed call exits 1).

use std::io::Read;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use duckgate::audit::AuditError;
use duckgate::config_file::ConfigFileError;
use duckgate::gateway::{Gateway, GatewayConfig};
use duckgate::protocol::databases::{Databases, Declaration};
use duckgate::sandbox::preflight;
use duckgate_validate::error::ErrorKind;

use super::args::DbArgs;
use super::out;

/// A command line that cannot run: said on stderr, exit code 2 ([`usage_error`]).
#[derive(Debug)]
pub(super) enum UsageError {
    /// No `--db`; `purpose` completes "the DuckDB database file to …".
    MissingDb {
        /// `serve`, `query`, `check against`, …
        purpose: &'static str,
    },
    /// The databases declared cannot be served together (a name DuckDB keeps, a name or a
    /// file twice, a path that cannot be resolved).
    Databases(String),
    /// The SQL was to come from stdin, which could not be read.
    ReadSql(std::io::Error),
    /// `--config` could not be used.
    Config(ConfigFileError),
    /// The audit log could not be opened.
    Audit(AuditError),
    /// `[audit] max_bytes = 0`.
    AuditMaxBytesZero,
    /// `[audit] generations` below the minimum.
    AuditTooFewGenerations,
    /// `--audit-required` (or `[audit] required`) without a log to write.
    AuditRequiredWithoutLog,
    /// A `--files` declaration that is not `NAME=DIR`, or a `[files]` path that cannot be read.
    Files(String),
}

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            UsageError::MissingDb { purpose } => write!(
                f,
                "--db PATH is required: the DuckDB database file to {purpose}"
            ),
            UsageError::Databases(message) => f.write_str(message),
            UsageError::ReadSql(error) => write!(f, "cannot read SQL from stdin: {error}"),
            UsageError::Config(error) => error.fmt(f),
            UsageError::Audit(error) => error.fmt(f),
            UsageError::AuditMaxBytesZero => f.write_str("[audit] max_bytes must be at least 1"),
            UsageError::AuditTooFewGenerations => write!(
                f,
                "[audit] generations must be at least {}: the current file and one rotated",
                duckgate::audit::MIN_GENERATIONS
            ),
            UsageError::AuditRequiredWithoutLog => {
                f.write_str("--audit-required needs --audit-log PATH (or [audit] log in --config)")
            }
            UsageError::Files(message) => f.write_str(message),
        }
    }
}

/// Report a usage error on stderr: exit code 2.
pub(super) fn usage_error(message: &dyn std::fmt::Display) -> ExitCode {
    tracing::error!("{message}");
    ExitCode::from(2)
}

/// The databases of the command line and the config file's `[databases]`, the default first:
/// a plain `--db PATH` if there is one, else the file's first, else the first `--db`.
pub(super) fn declared_databases(
    flags: &[Declaration],
    file: &[(String, PathBuf)],
) -> Result<Databases, UsageError> {
    let (plain, named): (Vec<&Declaration>, Vec<&Declaration>) =
        flags.iter().partition(|d| d.name.is_none());
    let mut declarations: Vec<Declaration> = plain.into_iter().cloned().collect();
    for (name, path) in file {
        let path =
            super::args::user_path(&path.to_string_lossy()).map_err(UsageError::Databases)?;
        declarations.push(Declaration {
            name: Some(name.clone()),
            path,
        });
    }
    declarations.extend(named.into_iter().cloned());
    Databases::new(&declarations).map_err(UsageError::Databases)
}

/// The gateway's configuration from the shared flags and the config file's databases;
/// `purpose` completes "--db PATH is required: the DuckDB database file to …" (`serve`,
/// `query`).
pub(super) fn gateway_config(
    args: &DbArgs,
    file_databases: &[(String, PathBuf)],
    purpose: &'static str,
) -> Result<GatewayConfig, UsageError> {
    if args.db.is_empty() && file_databases.is_empty() {
        return Err(UsageError::MissingDb { purpose });
    }
    let databases = declared_databases(&args.db, file_databases)?;
    other_databases_present(&databases).map_err(UsageError::Databases)?;
    Ok(GatewayConfig {
        databases,
        timeout: Duration::from_secs(args.timeout),
        queue_timeout: Duration::from_secs(args.queue_timeout),
        memory_budget: args.memory_budget,
        memory_limit: args.memory_limit,
        temp_dir: args.temp_dir.clone(),
        max_temp_bytes: args.max_temp_size,
        threads: args.threads,
        time_zone: args
            .time_zone
            .clone()
            .unwrap_or_else(duckgate::time_zone::local),
        max_reply_bytes: args.max_reply_bytes,
        warm_workers: args.warm_workers as usize,
        max_concurrent: args.max_concurrent as usize,
        fork_workers: !args.spawn_workers,
        missing_db_hint: args.missing_db_hint.clone(),
        allow_unconfined: args.allow_unconfined,
        #[cfg(feature = "test-bypass")]
        worker_exe: None,
        privacy: Default::default(),
        spill_with_privacy_rules: false,
        audit: None,
        files: args
            .files
            .iter()
            .map(|text| duckgate::folders::parse_declaration(text))
            .collect::<Result<_, _>>()
            .map_err(UsageError::Files)?,
        files_max_count: args.files_max_count,
        files_max_bytes: args.files_max_bytes,
    })
}

/// The SQL argument: as given, or stdin's text for `-`.
pub(super) fn read_sql(arg: String) -> Result<String, UsageError> {
    if arg != "-" {
        return Ok(arg);
    }
    let mut sql = String::new();
    std::io::stdin()
        .read_to_string(&mut sql)
        .map_err(UsageError::ReadSql)?;
    Ok(sql)
}

/// How starting the gateway can fail.
pub(super) enum StartFailure {
    /// The kernel cannot confine workers (or their sandbox cannot be set up): already printed
    /// on stderr; `serve` still answers MCP calls with it.
    Refused(duckgate_validate::error::Failure),
    /// Anything else: the exit code.
    Exit(ExitCode),
}

/// Start the gateway: the confinement preflight runs first (see `duckgate::sandbox::preflight`).
/// A refusal is printed as is (one paragraph); another failure exits 1; a bad setting exits 2.
/// The start-up line says which mechanism keeps each promise of confinement; what
/// `--allow-unconfined` let through is announced loudly on stderr.
///
/// The confinement line is INFO for a server, which prints it once at its start, and debug for
/// the commands that run one query, where it would repeat on every call.
pub(super) async fn start_gateway(
    config: GatewayConfig,
    serving: bool,
) -> Result<Gateway, StartFailure> {
    let allow_unconfined = config.allow_unconfined;
    match Gateway::start(config).await {
        Ok(gateway) => {
            if let Err(message) = other_databases_attach(&gateway).await {
                eprintln!("duckgate: {message}");
                gateway.shutdown().await;
                return Err(StartFailure::Exit(ExitCode::from(1)));
            }
            if let Ok(posture) = gateway.confinement() {
                let summary = duckgate::sandbox::confine::properties::summary(&posture.properties);
                if serving {
                    tracing::info!("query workers confined: {summary}");
                } else {
                    tracing::debug!("query workers confined: {summary}");
                }
            }
            let unenforced = gateway.unenforced();
            if !unenforced.is_empty() {
                eprintln!("{}", preflight::unconfined_warning(&unenforced));
            } else if allow_unconfined {
                tracing::info!(
                    "--allow-unconfined has no effect here: this kernel keeps every promise of \
                     confinement, and workers are fully confined"
                );
            }
            Ok(gateway)
        }
        Err(e) if e.kind == ErrorKind::InvalidArgument => {
            Err(StartFailure::Exit(usage_error(&e.message)))
        }
        Err(e) if e.kind == ErrorKind::SandboxUnavailable => {
            eprintln!("{}", e.message);
            Err(StartFailure::Refused(e))
        }
        Err(e) => {
            eprintln!("{}", e.message);
            Err(StartFailure::Exit(ExitCode::from(1)))
        }
    }
}

/// The start-up lines about the default database: one for a server whose database does not
/// exist yet (it starts anyway, and its calls answer `database_not_found` with the operator's
/// hint until the file is there), or cannot be read by this process (the folder or file that
/// stops it); and, for every database, one when it is mounted as a single file (its
/// write-ahead log is not visible).
pub(super) fn database_lines(databases: &Databases) -> Vec<String> {
    use duckgate::gateway::database_file::{self, DatabaseFile};
    let mut lines = Vec::new();
    let db = &databases.default_database().path;
    match database_file::examine(db) {
        DatabaseFile::Readable => {}
        DatabaseFile::Missing => lines.push(format!(
            "duckgate: serving; the database does not exist yet: {} — calls answer \
             database_not_found until it is created",
            db.display()
        )),
        DatabaseFile::Unreadable(why) => lines.push(format!(
            "duckgate: serving, but {why} Calls fail until it can be read. {}",
            why.next_step()
        )),
    }
    for database in databases {
        if database_file::is_single_file_mount(&database.path) {
            lines.push(format!(
                "duckgate: warning: {}",
                database_file::single_file_mount_warning(&database.path)
            ));
        }
    }
    lines
}

/// Every database beyond the default must be there and readable when the server starts: a
/// second database is declared to be served with the first, and a typo in its path must not
/// wait for the agent's first query to surface. (The default may come later, as before: its
/// calls answer `database_not_found` with the operator's hint until it exists.) Files that
/// exist are then attached once by a confined worker ([`attach_check`]).
pub(super) fn other_databases_present(databases: &Databases) -> Result<(), String> {
    use duckgate::gateway::database_file::{self, DatabaseFile};
    for database in databases.iter().skip(1) {
        match database_file::examine(&database.path) {
            DatabaseFile::Readable => {}
            DatabaseFile::Missing => {
                return Err(format!(
                    "the database {:?} (--db {}={}) does not exist: check the path, or create it \
                     first (duckgate import --out {} EXPORT.csv)",
                    database.name,
                    database.name,
                    database.path.display(),
                    database.path.display()
                ));
            }
            DatabaseFile::Unreadable(why) => {
                return Err(format!(
                    "the database {:?}: {why} {}",
                    database.name,
                    why.next_step()
                ));
            }
        }
    }
    Ok(())
}

/// With more than one database, attach them all once through a confined worker before
/// serving, as every query will: a database beyond the default that is locked by a writer, or
/// is not a DuckDB file, ends the start with its reason rather than failing every call. The
/// default's own trouble is answered per call, as with one database (it may be created or
/// released later). The catalog read is kept for the first call.
async fn other_databases_attach(gateway: &Gateway) -> Result<(), String> {
    let databases = &gateway.config().databases;
    if databases.len() < 2 || gateway.refusal().is_err() {
        return Ok(());
    }
    let Err(failure) = gateway.attach_check().await else {
        return Ok(());
    };
    let Some(database) = failure
        .construct
        .as_deref()
        .and_then(|name| databases.iter().skip(1).find(|d| d.name == name))
    else {
        return Ok(());
    };
    Err(format!(
        "the database {:?} (--db {}={}) cannot be attached ({}): {} Every query attaches all \
         databases, so none could run; fix it, or leave it out of --db.",
        database.name,
        database.name,
        database.path.display(),
        failure.kind,
        failure.message
    ))
}

/// `start_gateway` for the commands that run once: a refusal exits 1.
pub(super) async fn start_once(config: GatewayConfig) -> Result<Gateway, ExitCode> {
    match start_gateway(config, false).await {
        Ok(gateway) => Ok(gateway),
        Err(StartFailure::Refused(_)) => Err(ExitCode::from(1)),
        Err(StartFailure::Exit(code)) => Err(code),
    }
}

/// What `query` and `plot` do before their one call: the configuration, the SQL (or stdin), a
/// started gateway; on failure, the exit code (already reported).
pub(super) async fn one_call(
    args: &DbArgs,
    purpose: &'static str,
    sql: String,
) -> Result<(Gateway, String), ExitCode> {
    let config = gateway_config(args, &[], purpose).map_err(|e| usage_error(&e))?;
    let sql = read_sql(sql).map_err(|e| usage_error(&e))?;
    if let Some(code) = unreadable_database(&config.databases) {
        return Err(code);
    }
    let gateway = start_once(config).await?;
    Ok((gateway, sql))
}

/// A database this process cannot read, said on the operator's own terminal by its path (the
/// folder or file that stops it), as `serve`'s start-up lines say it; exit 1. An agent's reply
/// names the database only (`Gateway::database_unavailable`): no reply carries a host path.
fn unreadable_database(databases: &Databases) -> Option<ExitCode> {
    use duckgate::gateway::database_file::{self, DatabaseFile};
    databases
        .iter()
        .find_map(|database| match database_file::examine(&database.path) {
            DatabaseFile::Unreadable(why) => {
                out::text(&format!(
                    "{}: {why}\nnext step: {}",
                    ErrorKind::DatabaseError,
                    why.next_step()
                ));
                Some(ExitCode::from(1))
            }
            DatabaseFile::Readable | DatabaseFile::Missing => None,
        })
}

/// A failed call on stdout (`kind: message`, then the next step), exit 1.
pub(super) fn call_failed(e: &duckgate_validate::error::Failure) -> ExitCode {
    let mut text = format!("{}: {}", e.kind, e.message);
    if let Some(s) = &e.suggestion {
        text.push_str(&format!("\nnext step: {s}"));
    }
    out::text(&text);
    ExitCode::from(1)
}
