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
    /// `--db` has no absolute form.
    ResolveDb {
        /// The path given.
        db: PathBuf,
        /// Why.
        error: std::io::Error,
    },
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
            UsageError::ResolveDb { db, error } => {
                write!(f, "cannot resolve --db {}: {error}", db.display())
            }
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

/// The gateway's configuration from the shared flags; `purpose` completes "--db PATH is
/// required: the DuckDB database file to …" (`serve`, `query`).
pub(super) fn gateway_config(
    args: &DbArgs,
    purpose: &'static str,
) -> Result<GatewayConfig, UsageError> {
    let Some(db) = args.db.clone() else {
        return Err(UsageError::MissingDb { purpose });
    };
    let db = std::path::absolute(&db).map_err(|error| UsageError::ResolveDb { db, error })?;
    Ok(GatewayConfig {
        db_path: db,
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

/// The start-up lines about the database: one for a server whose database does not exist yet
/// (it starts anyway, and its calls answer `database_not_found` with the operator's hint until
/// the file is there), or cannot be read by this process (the folder or file that stops it),
/// and one for a database mounted as a single file (its write-ahead log is not visible).
pub(super) fn database_lines(db: &std::path::Path) -> Vec<String> {
    use duckgate::gateway::database_file::{self, DatabaseFile};
    let mut lines = Vec::new();
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
    if database_file::is_single_file_mount(db) {
        lines.push(format!(
            "duckgate: warning: {}",
            database_file::single_file_mount_warning(db)
        ));
    }
    lines
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
    let config = gateway_config(args, purpose).map_err(|e| usage_error(&e))?;
    let sql = read_sql(sql).map_err(|e| usage_error(&e))?;
    let gateway = start_once(config).await?;
    Ok((gateway, sql))
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
