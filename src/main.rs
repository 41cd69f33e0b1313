//! The duckgate command line: `serve` (default), `query`, `check`, `demo`, and the hidden worker mode.

use std::io::{IsTerminal, Read};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};
use duckgate::error::ErrorKind;
use duckgate::gateway::{DEFAULT_MISSING_DB_HINT, Gateway, GatewayConfig};
use duckgate::sandbox::budget::size_arg;
use duckgate::sandbox::preflight;
use duckgate::sandbox::worker::{self, WorkerArgs, WorkerStart};
use tokio_util::sync::CancellationToken;

/// A sandboxed, read-only DuckDB query gateway for AI agents over MCP (stdio).
#[derive(Debug, Parser)]
#[command(name = "duckgate", version, args_conflicts_with_subcommands = true)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    serve: ServeArgs,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Serve MCP over stdio (the default).
    Serve(ServeArgs),
    /// Validate and run one query through a confined worker; print a text table.
    // One query starts one worker: the pool's flags mean nothing here, so they are not shown.
    #[command(
        mut_arg("warm_workers", |arg| arg.hide(true)),
        mut_arg("max_concurrent", |arg| arg.hide(true))
    )]
    Query {
        #[command(flatten)]
        db: DbArgs,
        /// Rows to print at most (1–10000).
        #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u32).range(1..=10000))]
        limit: u32,
        /// The SQL, or `-` to read it from stdin.
        sql: String,
    },
    /// Run one query through a confined worker and draw two of its columns as a PNG file (the
    /// same chart the `plot` tool returns).
    #[command(
        mut_arg("warm_workers", |arg| arg.hide(true)),
        mut_arg("max_concurrent", |arg| arg.hide(true))
    )]
    Plot {
        #[command(flatten)]
        db: DbArgs,
        /// The chart: line, scatter, bar, histogram or agp.
        #[arg(long, value_enum)]
        kind: PlotKind,
        /// The PNG file to write.
        #[arg(long, value_parser = user_path)]
        out: PathBuf,
        /// The result column for x (default: the first).
        #[arg(long)]
        x: Option<String>,
        /// The result column for y (default: the second; a histogram's: the first).
        #[arg(long)]
        y: Option<String>,
        /// A title above the chart.
        #[arg(long)]
        title: Option<String>,
        /// Width in pixels.
        #[arg(long, default_value_t = duckgate::plot::DEFAULT_WIDTH)]
        width: u32,
        /// Height in pixels.
        #[arg(long, default_value_t = duckgate::plot::DEFAULT_HEIGHT)]
        height: u32,
        /// Histogram bins.
        #[arg(long)]
        bins: Option<u32>,
        /// A y range to shade, e.g. 70:180 (mg/dL).
        #[arg(long, value_parser = target_range)]
        target: Option<(f64, f64)>,
        /// The SQL, or `-` to read it from stdin.
        sql: String,
    },
    /// Say whether SQL would be accepted, without running it.
    Check {
        /// Resolve table names against this database's catalog (read through a confined worker).
        #[arg(long, value_parser = user_path)]
        db: Option<PathBuf>,
        /// The SQL, or `-` to read it from stdin.
        sql: String,
    },
    /// Say how this kernel confines query workers, property by property; exit 0 when every
    /// property holds, 1 when duckgate would refuse to start here.
    CheckSandbox {
        /// Grant this database file as a worker would (optional: the kernel's answer is the same).
        #[arg(long, value_parser = user_path)]
        db: Option<PathBuf>,
    },
    /// Import CSV files (or every .csv in a folder) into a new DuckDB file to serve: one table
    /// per file, column types detected, a comment saying where each came from. Runs on your own
    /// files in this process; nothing of it is reachable over MCP.
    Import {
        /// The new database file to write (must not exist).
        #[arg(long, value_parser = user_path)]
        out: PathBuf,
        /// CSV files, or folders whose .csv files to import.
        #[arg(required = true, value_parser = user_path)]
        inputs: Vec<PathBuf>,
    },
    /// Write a synthetic CGM database and drive a real MCP session against it.
    Demo {
        /// Where to write the demo database.
        #[arg(long, default_value = "duckgate-demo.duckdb", value_parser = user_path)]
        out: PathBuf,
    },
    /// Internal: a single-use confined worker (started by duckgate itself).
    #[command(name = "__worker", hide = true)]
    Worker(WorkerArgs),
}

/// The database and the limits every command that runs SQL shares.
#[derive(Debug, Clone, Args)]
struct DbArgs {
    /// The DuckDB database file (opened read-only, only inside confined workers). A leading `~/`
    /// is this user's home directory.
    #[arg(long, value_parser = user_path)]
    db: Option<PathBuf>,
    /// Seconds a call may run before its worker is killed.
    #[arg(long, default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..=3600))]
    timeout: u64,
    /// Seconds a call waits for a free worker (all --max-concurrent busy) before it is answered
    /// `busy`; the wait does not count against --timeout.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u64).range(0..=3600))]
    queue_timeout: u64,
    /// The memory all query workers together may use (e.g. 8GB); each worker's hard cap is an
    /// equal share of it (running workers and warm spares alike). Default: half of this
    /// machine's memory.
    #[arg(long, value_parser = size_arg)]
    memory_budget: Option<u64>,
    /// DuckDB's memory_limit in each worker: past it, a query spills to disk. Default: the most
    /// each worker's share of --memory-budget allows.
    #[arg(long, value_parser = size_arg)]
    memory_limit: Option<u64>,
    /// Where each worker's private temporary directory is made. Default: $XDG_RUNTIME_DIR/duckgate,
    /// else <system temp>/duckgate-<uid>, the first that is on disk (else ~/.cache/duckgate/spill).
    #[arg(long, value_parser = user_path)]
    temp_dir: Option<PathBuf>,
    /// What one query may spill to disk (never more than the disk has free); 0 turns spilling
    /// off.
    #[arg(long, default_value = "10GB", value_parser = size_arg)]
    max_temp_size: u64,
    /// DuckDB threads of each worker.
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u32).range(1..=64))]
    threads: u32,
    /// The time zone "today", "yesterday" and local times mean (an IANA name such as
    /// Europe/Berlin). Default: this machine's zone (TZ, else /etc/localtime).
    #[arg(long)]
    time_zone: Option<String>,
    /// Bytes of result rows (as JSON) a query returns at most.
    #[arg(long, default_value_t = 1024 * 1024)]
    max_result_bytes: usize,
    /// Workers kept confined and warm ahead of need (default: enough for a burst of four
    /// parallel calls).
    #[arg(long, default_value_t = duckgate::gateway::DEFAULT_WARM_WORKERS as u64, value_parser = clap::value_parser!(u64).range(0..=16))]
    warm_workers: u64,
    /// Workers running at once at most; further calls wait their turn.
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u64).range(1..=64))]
    max_concurrent: u64,
    /// Spawn each worker process from scratch instead of forking it from a warm, confined
    /// template (slower back to back; the template is the default).
    #[arg(long)]
    spawn_workers: bool,
    /// What to tell the user when the database file is missing.
    #[arg(long, default_value = DEFAULT_MISSING_DB_HINT)]
    missing_db_hint: String,
    /// Start even where the kernel lacks landlock or seccomp, running workers without them (NOT
    /// recommended: announced on stderr at start-up and reported by server_info). Without it,
    /// duckgate refuses to start on such a kernel.
    #[arg(long)]
    allow_unconfined: bool,
}

#[derive(Debug, Clone, Args)]
struct ServeArgs {
    #[command(flatten)]
    db: DbArgs,
    /// A TOML file of table descriptions (`table = "text"`) that supply or override DuckDB comments.
    #[arg(long, value_parser = user_path)]
    descriptions: Option<PathBuf>,
    /// A TOML file with `[privacy]` (hide_tables, hide_columns) and `[audit]` (log, redact_sql, required).
    #[arg(long, value_parser = user_path)]
    config: Option<PathBuf>,
    /// Append one JSON line per tool call to this file (created with mode 0600).
    #[arg(long, value_parser = user_path)]
    audit_log: Option<PathBuf>,
    /// Record the SHA-256 of each query instead of its SQL.
    #[arg(long)]
    audit_redact_sql: bool,
    /// Fail a call when its audit line cannot be written.
    #[arg(long)]
    audit_required: bool,
    /// Rotate the audit log to PATH.1 before it grows past this many bytes (default 100 MiB).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    audit_max_bytes: Option<u64>,
    /// Hide a table from agents (`name`, `schema.name`, globs); repeatable.
    #[arg(long)]
    hide_table: Vec<String>,
    /// Hide a column from agents (`table.column`, globs such as `*.serial_number`); repeatable.
    #[arg(long)]
    hide_column: Vec<String>,
}

/// A path flag as a person writes it: a leading `~` or `~/` is `$HOME`, as a shell would expand
/// it. MCP clients start duckgate without a shell, so `~/health/cgm.duckdb` in a client's config
/// would otherwise name a directory called `~`.
fn user_path(text: &str) -> Result<PathBuf, String> {
    let rest = match text.strip_prefix('~') {
        None => return Ok(PathBuf::from(text)),
        Some(rest) if rest.is_empty() || rest.starts_with('/') => rest.trim_start_matches('/'),
        // `~user/…`: another user's home, which duckgate does not look up.
        Some(_) => {
            return Err(format!(
                "{text}: only a leading ~/ (your home directory) is expanded; write the full path"
            ));
        }
    };
    match std::env::var_os("HOME").filter(|home| !home.is_empty()) {
        Some(home) => Ok(PathBuf::from(home).join(rest)),
        None => Err(format!(
            "{text}: HOME is not set, so ~ cannot be expanded; write the full path"
        )),
    }
}

/// Human output of the CLI commands: the one place that writes to stdout outside MCP.
mod out {
    use std::io::Write;

    /// Print one block of text and a newline; a closed stdout is not worth a panic.
    pub(crate) fn text(s: &str) {
        let mut stdout = std::io::stdout().lock();
        let _ = writeln!(stdout, "{s}");
        let _ = stdout.flush();
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let command = cli.command.unwrap_or(Command::Serve(cli.serve));
    if let Command::Worker(args) = command {
        // No tokio and no logging set-up here: the worker must stay single-threaded until it has
        // confined itself.
        if let Err(e) = worker::close_inherited_descriptors() {
            eprintln!("duckgate worker: cannot close inherited descriptors: {e}");
            return ExitCode::from(3);
        }
        let code = match args.start {
            WorkerStart::ConfineOnly => preflight::confine_only(&args),
            WorkerStart::Spare | WorkerStart::OnDemand => worker::run(args),
            WorkerStart::Template => duckgate::sandbox::zygote::template::run(&args),
        };
        return ExitCode::from(code as u8);
    }
    init_logging();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            tracing::error!("cannot start the async runtime: {e}");
            return ExitCode::from(2);
        }
    };
    runtime.block_on(run(command))
}

fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_env("DUCKGATE_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn,duckgate=info"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .init();
}

/// The gateway's configuration from the shared flags; `purpose` completes "--db PATH is
/// required: the DuckDB database file to …" (`serve`, `query`).
fn gateway_config(args: &DbArgs, purpose: &str) -> Result<GatewayConfig, String> {
    let Some(db) = args.db.clone() else {
        return Err(format!(
            "--db PATH is required: the DuckDB database file to {purpose}"
        ));
    };
    let db = std::path::absolute(&db)
        .map_err(|e| format!("cannot resolve --db {}: {e}", db.display()))?;
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
        max_result_bytes: args.max_result_bytes,
        warm_workers: args.warm_workers as usize,
        max_concurrent: args.max_concurrent as usize,
        fork_workers: !args.spawn_workers,
        missing_db_hint: args.missing_db_hint.clone(),
        allow_unconfined: args.allow_unconfined,
        worker_exe: None,
        privacy: Default::default(),
        audit: None,
    })
}

/// The chart kinds, as the command line spells them.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum PlotKind {
    Line,
    Scatter,
    Bar,
    Histogram,
    Agp,
}

impl From<PlotKind> for duckgate::plot::ChartKind {
    fn from(kind: PlotKind) -> Self {
        match kind {
            PlotKind::Line => duckgate::plot::ChartKind::Line,
            PlotKind::Scatter => duckgate::plot::ChartKind::Scatter,
            PlotKind::Bar => duckgate::plot::ChartKind::Bar,
            PlotKind::Histogram => duckgate::plot::ChartKind::Histogram,
            PlotKind::Agp => duckgate::plot::ChartKind::Agp,
        }
    }
}

/// `LOW:HIGH`, e.g. `70:180`.
fn target_range(text: &str) -> Result<(f64, f64), String> {
    let (low, high) = text
        .split_once(':')
        .ok_or_else(|| format!("{text:?} is not LOW:HIGH, e.g. 70:180"))?;
    let number = |v: &str| {
        v.trim()
            .parse::<f64>()
            .map_err(|_| format!("{v:?} in {text:?} is not a number"))
    };
    Ok((number(low)?, number(high)?))
}

async fn plot(
    args: DbArgs,
    chart: duckgate::protocol::ChartRequest,
    out_path: PathBuf,
    sql: String,
) -> ExitCode {
    use base64::Engine as _;
    let (gateway, sql) = match one_call(&args, "plot", sql).await {
        Ok(started) => started,
        Err(code) => return code,
    };
    let outcome = gateway.plot(&sql, chart, CancellationToken::new()).await;
    gateway.shutdown().await;
    match outcome {
        Ok(reply) => {
            let png = match base64::engine::general_purpose::STANDARD.decode(&reply.png_base64) {
                Ok(png) => png,
                Err(e) => {
                    out::text(&format!(
                        "internal_error: the worker's PNG did not decode: {e}"
                    ));
                    return ExitCode::from(1);
                }
            };
            if let Err(e) = std::fs::write(&out_path, &png) {
                return usage_error(&format!("cannot write {}: {e}", out_path.display()));
            }
            out::text(&format!(
                "Wrote {} ({}×{} px, {} bytes).\n{}",
                out_path.display(),
                reply.width,
                reply.height,
                png.len(),
                reply.summary_text
            ));
            ExitCode::SUCCESS
        }
        Err(e) => call_failed(&e),
    }
}

fn read_sql(arg: String) -> Result<String, String> {
    if arg != "-" {
        return Ok(arg);
    }
    let mut sql = String::new();
    std::io::stdin()
        .read_to_string(&mut sql)
        .map_err(|e| format!("cannot read SQL from stdin: {e}"))?;
    Ok(sql)
}

async fn run(command: Command) -> ExitCode {
    match command {
        Command::Serve(args) => serve(args).await,
        Command::Query { mut db, limit, sql } => {
            // One call: a warm spare (or a template to fork from) would only be killed unused,
            // and the one worker may have the whole memory budget.
            db.warm_workers = 0;
            db.max_concurrent = 1;
            db.spawn_workers = true;
            query(db, limit as usize, sql).await
        }
        Command::Plot {
            mut db,
            kind,
            out,
            x,
            y,
            title,
            width,
            height,
            bins,
            target,
            sql,
        } => {
            db.warm_workers = 0;
            db.max_concurrent = 1;
            db.spawn_workers = true;
            let chart = duckgate::protocol::ChartRequest {
                kind: kind.into(),
                x,
                y,
                title,
                width,
                height,
                bins,
                target_range: target,
            };
            plot(db, chart, out, sql).await
        }
        Command::Check { db, sql } => check(db, sql).await,
        Command::CheckSandbox { db } => check_sandbox(db).await,
        Command::Import { out, inputs } => import(out, inputs),
        Command::Demo { out } => demo(out).await,
        Command::Worker { .. } => ExitCode::from(2),
    }
}

fn usage_error(message: &str) -> ExitCode {
    tracing::error!("{message}");
    ExitCode::from(2)
}

/// How starting the gateway can fail.
enum StartFailure {
    /// The kernel cannot confine workers (or their sandbox cannot be set up): already printed
    /// on stderr; `serve` still answers MCP calls with it.
    Refused(duckgate::gateway::GatewayError),
    /// Anything else: the exit code.
    Exit(ExitCode),
}

/// Start the gateway: the confinement preflight runs first (see `duckgate::sandbox::preflight`).
/// A refusal is printed as is (one paragraph); another failure exits 1; a bad setting exits 2.
/// The start-up line says which mechanism keeps each promise of confinement; what
/// `--allow-unconfined` let through is announced loudly on stderr.
async fn start_gateway(config: GatewayConfig) -> Result<Gateway, StartFailure> {
    let allow_unconfined = config.allow_unconfined;
    match Gateway::start(config).await {
        Ok(gateway) => {
            if let Ok(posture) = gateway.confinement() {
                tracing::info!(
                    "query workers confined: {}",
                    duckgate::sandbox::confine::properties::summary(&posture.properties)
                );
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

/// The start-up line of a server whose database does not exist yet (it starts anyway, and its
/// calls answer `database_not_found` with the operator's hint until the file is there).
fn missing_database_line(db: &std::path::Path) -> Option<String> {
    (!db.exists()).then(|| {
        format!(
            "duckgate: serving; the database does not exist yet: {} — calls answer \
             database_not_found until it is created",
            db.display()
        )
    })
}

/// `start_gateway` for the commands that run once: a refusal exits 1.
async fn start_once(config: GatewayConfig) -> Result<Gateway, ExitCode> {
    match start_gateway(config).await {
        Ok(gateway) => Ok(gateway),
        Err(StartFailure::Refused(_)) => Err(ExitCode::from(1)),
        Err(StartFailure::Exit(code)) => Err(code),
    }
}

async fn serve(args: ServeArgs) -> ExitCode {
    let mut config = match gateway_config(&args.db, "serve") {
        Ok(c) => c,
        Err(e) => return usage_error(&e),
    };
    if let Err(e) = privacy_and_audit(&args, &mut config) {
        return usage_error(&e);
    }
    let descriptions = match &args.descriptions {
        Some(path) => match duckgate::mcp::load_descriptions(path) {
            Ok(d) => d,
            Err(e) => return usage_error(&e),
        },
        None => Default::default(),
    };
    let options = duckgate::mcp::ServeOptions { descriptions };
    let (gateway, refused) = match start_gateway(config.clone()).await {
        Ok(g) => {
            if let Some(line) = missing_database_line(&g.config().db_path) {
                eprintln!("{line}");
            }
            (g, false)
        }
        // An MCP client shows tool errors, not stderr: serve the refusal as the answer to every
        // call (no worker ever starts), then exit 1 as a refused start does.
        Err(StartFailure::Refused(refusal)) => match Gateway::refusing(config, refusal) {
            Ok(g) => (g, true),
            Err(e) => return usage_error(&e.message),
        },
        Err(StartFailure::Exit(code)) => return code,
    };
    let result = duckgate::mcp::serve_stdio(gateway.clone(), options).await;
    gateway.shutdown().await;
    match result {
        Ok(()) if refused => ExitCode::from(1),
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            tracing::error!("server stopped: {e}");
            ExitCode::from(1)
        }
    }
}

/// `--config` and the `--hide-*`/`--audit-*` flags into the gateway's configuration.
fn privacy_and_audit(args: &ServeArgs, config: &mut GatewayConfig) -> Result<(), String> {
    let mut file = match &args.config {
        Some(path) => duckgate::config_file::ConfigFile::load(path).map_err(|e| e.to_string())?,
        None => Default::default(),
    };
    file.privacy
        .hide_tables
        .extend(args.hide_table.iter().cloned());
    file.privacy
        .hide_columns
        .extend(args.hide_column.iter().cloned());
    let audit = file.audit;
    if let Some(path) = args.audit_log.as_ref().or(audit.log.as_ref()) {
        let redact = args.audit_redact_sql || audit.redact_sql;
        let required = args.audit_required || audit.required;
        let max_bytes = args
            .audit_max_bytes
            .or(audit.max_bytes)
            .unwrap_or(duckgate::audit::DEFAULT_MAX_BYTES);
        if max_bytes == 0 {
            return Err("[audit] max_bytes must be at least 1".into());
        }
        let log = duckgate::audit::AuditLog::open(path, redact, required)
            .map_err(|e| e.to_string())?
            .with_max_bytes(max_bytes);
        config.audit = Some(std::sync::Arc::new(log));
    } else if args.audit_required || audit.required {
        return Err("--audit-required needs --audit-log PATH (or [audit] log in --config)".into());
    }
    config.privacy = file.privacy;
    Ok(())
}

/// What `query` and `plot` do before their one call: the configuration, the SQL (or stdin), a
/// started gateway; on failure, the exit code (already reported).
async fn one_call(
    args: &DbArgs,
    purpose: &str,
    sql: String,
) -> Result<(Gateway, String), ExitCode> {
    let config = gateway_config(args, purpose).map_err(|e| usage_error(&e))?;
    let sql = read_sql(sql).map_err(|e| usage_error(&e))?;
    let gateway = start_once(config).await?;
    Ok((gateway, sql))
}

/// A failed call on stdout (`kind: message`, then the next step), exit 1.
fn call_failed(e: &duckgate::gateway::GatewayError) -> ExitCode {
    let mut text = format!("{}: {}", e.kind, e.message);
    if let Some(s) = &e.suggestion {
        text.push_str(&format!("\nnext step: {s}"));
    }
    out::text(&text);
    ExitCode::from(1)
}

async fn query(args: DbArgs, limit: usize, sql: String) -> ExitCode {
    let (gateway, sql) = match one_call(&args, "query", sql).await {
        Ok(started) => started,
        Err(code) => return code,
    };
    let outcome = gateway.query(&sql, limit, CancellationToken::new()).await;
    gateway.shutdown().await;
    match outcome {
        Ok(result) => {
            out::text(&duckgate::mcp::render::query_text(&result));
            ExitCode::SUCCESS
        }
        Err(e) => call_failed(&e),
    }
}

async fn check(db: Option<PathBuf>, sql: String) -> ExitCode {
    let sql = match read_sql(sql) {
        Ok(s) => s,
        Err(e) => return usage_error(&e),
    };
    let limits = duckgate::validate::Limits::default();
    let verdict = match db {
        Some(db) => {
            let config_db = db.clone();
            let args = DbArgs {
                db: Some(db),
                timeout: 30,
                queue_timeout: 10,
                memory_budget: None,
                memory_limit: Some(512 << 20),
                temp_dir: None,
                // Reading the catalog never spills.
                max_temp_size: 0,
                threads: 1,
                time_zone: None,
                max_result_bytes: 1024 * 1024,
                warm_workers: 0,
                max_concurrent: 1,
                spawn_workers: true,
                missing_db_hint: DEFAULT_MISSING_DB_HINT.into(),
                allow_unconfined: false,
            };
            let config = match gateway_config(&args, "check against") {
                Ok(c) => c,
                Err(e) => return usage_error(&e),
            };
            let gateway = match start_once(config).await {
                Ok(g) => g,
                Err(code) => return code,
            };
            let snapshot = gateway.catalog().await;
            gateway.shutdown().await;
            let catalog = match snapshot {
                Ok(s) => {
                    let mut catalog = duckgate::gateway::validator_catalog(&s);
                    // What workers attach the database as: `alias.schema.table` resolves.
                    catalog.database = duckgate::engine::database_alias(&config_db);
                    catalog
                }
                Err(e) => return usage_error(&format!("{}: {}", e.kind, e.message)),
            };
            duckgate::validate::check(&sql, &catalog, &limits).map(|a| (a, Vec::new()))
        }
        // Without the database there is no catalog, and a table missing from none is no
        // evidence: its names are taken on trust and said to be unchecked.
        None => duckgate::validate::check_unresolved(&sql, &limits),
    };
    match verdict {
        Ok((accepted, _)) if accepted.kind == duckgate::validate::StatementKind::Unparsed => {
            out::text(
                "passed on: the validator cannot parse this DuckDB syntax and found nothing to \
                 refuse in it; DuckDB's own parse tree and plan decide in the worker when it runs \
                 (try `duckgate query`)",
            );
            ExitCode::SUCCESS
        }
        Ok((accepted, unchecked)) => {
            let relations = if accepted.relations.is_empty() {
                "none".to_string()
            } else {
                accepted.relations.join(", ")
            };
            let mut text = format!("accepted ({:?}); reads: {relations}", accepted.kind);
            if !unchecked.is_empty() {
                text.push_str(&format!(
                    "\nnote: table names were not checked ({}): pass --db to resolve them \
                     against the database's catalog",
                    unchecked.join(", ")
                ));
            }
            out::text(&text);
            ExitCode::SUCCESS
        }
        Err(refusal) => {
            let mut text = format!("refused ({}): {}", refusal.kind, refusal.message);
            if !refusal.suggestion.is_empty() {
                text.push_str(&format!("\nnext step: {}", refusal.suggestion));
            }
            out::text(&text);
            ExitCode::from(1)
        }
    }
}

/// `duckgate import`: the operator's CSV files into a new database, then the command to serve it.
fn import(out: PathBuf, inputs: Vec<PathBuf>) -> ExitCode {
    let files = match duckgate::engine::import::csv_files(&inputs) {
        Ok(files) => files,
        Err(e) => return usage_error(&e.to_string()),
    };
    match duckgate::engine::import::import_csv(&out, &files) {
        Ok(tables) => {
            let mut text = format!("Wrote {}:", out.display());
            for table in &tables {
                text.push_str(&format!(
                    "\n  {} ({} rows) from {}",
                    table.name,
                    table.rows,
                    table.source.display()
                ));
            }
            let db = std::path::absolute(&out).unwrap_or(out);
            text.push_str(&format!(
                "\nServe it with: duckgate serve --db {}",
                db.display()
            ));
            out::text(&text);
            ExitCode::SUCCESS
        }
        Err(e) => {
            tracing::error!("import failed: {e}");
            ExitCode::from(1)
        }
    }
}

/// `duckgate check-sandbox`: run the start-up preflight (our own binary, confined exactly as a
/// worker would be, opening no database) and print each property with the mechanism that keeps
/// it here; exit 0 when duckgate would start without `--allow-unconfined`, 1 otherwise.
async fn check_sandbox(db: Option<PathBuf>) -> ExitCode {
    // Without --db the preflight grants no database: it grants one only if the file exists,
    // and this one is never created.
    let db = db.unwrap_or_else(|| {
        std::env::temp_dir().join(format!(
            "duckgate-check-sandbox-{}-no-database",
            std::process::id()
        ))
    });
    let mut config = GatewayConfig::new(db);
    config.warm_workers = 0;
    config.fork_workers = false;
    config.allow_unconfined = true;
    let (spec, _) = match duckgate::gateway::worker_spec(&config) {
        Ok(spec) => spec,
        Err(e) => return usage_error(&e.message),
    };
    let posture = match preflight::posture(&spec).await {
        Ok(posture) => posture,
        Err(failure) => {
            out::text(&failure.to_string());
            return ExitCode::from(1);
        }
    };
    let confined = preflight::fully_confined(&posture);
    out::text(&duckgate::mcp::render::sandbox_report(&posture, confined));
    if confined {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

async fn demo(out_path: PathBuf) -> ExitCode {
    let out_path = match std::path::absolute(&out_path) {
        Ok(p) => p,
        Err(e) => return usage_error(&format!("cannot resolve --out {}: {e}", out_path.display())),
    };
    if out_path.exists() {
        // Someone else's file is never opened for writing or served as the demo's.
        if let Err(reason) = duckgate::engine::demo_data::check_demo_database(&out_path) {
            eprintln!(
                "duckgate demo: {} exists and is not a demo database ({reason}). It was left \
                 untouched. Choose another --out path, or move that file away to build the demo \
                 there.",
                out_path.display()
            );
            return ExitCode::from(2);
        }
        tracing::info!("using the existing demo database at {}", out_path.display());
    } else {
        // A bar redrawn with `\r` only on a terminal; a log gets a start and a done line.
        let terminal = std::io::stderr().is_terminal();
        if !terminal {
            eprintln!("building the demo database at {} …", out_path.display());
        }
        let mut progress = |done: u64, total: u64| {
            if terminal {
                draw_progress(done, total);
            }
        };
        match duckgate::engine::demo_data::write_demo_database(&out_path, &mut progress) {
            Ok(summary) => {
                if terminal {
                    eprintln!();
                } else {
                    eprintln!("built the demo database");
                }
                let tables: Vec<String> = summary
                    .tables
                    .iter()
                    .map(|(t, n)| format!("{t} ({n} rows)"))
                    .collect();
                out::text(&format!(
                    "Wrote {}: {}",
                    summary.path.display(),
                    tables.join(", ")
                ));
            }
            Err(e) => {
                if terminal {
                    eprintln!();
                }
                tracing::error!("could not write the demo database: {e}");
                return ExitCode::from(1);
            }
        }
    }
    let exe = match std::env::current_exe() {
        Ok(exe) => exe,
        Err(e) => return usage_error(&format!("cannot find our own binary: {e}")),
    };
    let mut stdout = std::io::stdout();
    match duckgate::mcp::demo::run_demo_session(&exe, &out_path, &mut stdout).await {
        Ok(()) => {
            out::text(duckgate::mcp::demo::next_steps(&exe, &out_path).trim_end());
            ExitCode::SUCCESS
        }
        Err(e) => {
            tracing::error!("demo session failed: {e}");
            ExitCode::from(1)
        }
    }
}

/// A one-line progress bar on stderr (stdout stays clean for the session transcript), redrawn
/// in place with `\r`: for a terminal only (`demo` checks).
fn draw_progress(done: u64, total: u64) {
    let width = 30u64;
    let filled = (done * width)
        .checked_div(total)
        .map_or(width, |f| f.min(width));
    eprint!(
        "\rbuilding demo database [{}{}] {done}/{total}",
        "#".repeat(filled as usize),
        " ".repeat((width - filled) as usize)
    );
}
