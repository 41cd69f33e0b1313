//! The command line's flags and subcommands, as clap parses them, and the value parsers of its
//! own flag types (paths with `~`, ranges).

use std::path::PathBuf;

use clap::builder::TypedValueParser as _;
use clap::{Args, Parser, Subcommand};
use duckgate::gateway::DEFAULT_MISSING_DB_HINT;
use duckgate::protocol::databases::Declaration;
use duckgate::protocol::worker_args::WorkerArgs;
use duckgate::size::size_arg;

/// A sandboxed, read-only DuckDB query gateway for AI agents over MCP (stdio).
#[derive(Debug, Parser)]
#[command(name = "duckgate", version, args_conflicts_with_subcommands = true)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) command: Option<Command>,
    #[command(flatten)]
    pub(crate) serve: ServeArgs,
}

// What to do. (A doc comment here would become clap's help text.)
#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Serve MCP over stdio (the default).
    Serve(ServeArgs),
    /// Validate and run one query through a confined worker; print a text table.
    // One query starts one worker: the pool's flags mean nothing here, so they are not shown.
    // `--db` is required, but checked after parsing so that its absence is explained (what the
    // file is for); the usage line shows it as required.
    #[command(
        mut_arg("warm_workers", |arg| arg.hide(true)),
        mut_arg("max_concurrent", |arg| arg.hide(true)),
        override_usage = "duckgate query --db <DB> [OPTIONS] <SQL>"
    )]
    Query {
        #[command(flatten)]
        db: DbArgs,
        /// Rows to print at most (1–10000, as the query tool's limit).
        #[arg(long, default_value_t = duckgate::mcp::tools::query::DEFAULT_LIMIT, value_parser = clap::value_parser!(i64).range(1..=duckgate::mcp::tools::query::MAX_LIMIT))]
        limit: i64,
        /// The SQL, or `-` to read it from stdin.
        sql: String,
    },
    /// Run one query through a confined worker and draw two of its columns as a PNG file (the
    /// same chart the `plot` tool returns).
    #[command(
        mut_arg("warm_workers", |arg| arg.hide(true)),
        mut_arg("max_concurrent", |arg| arg.hide(true)),
        override_usage = "duckgate plot --db <DB> --kind <KIND> --out <OUT> [OPTIONS] <SQL>"
    )]
    Plot {
        #[command(flatten)]
        db: DbArgs,
        /// The chart: line, scatter, bar, histogram, agp (the consensus AGP report) or tir (time
        /// in ranges).
        #[arg(long, value_enum)]
        kind: duckgate::plot::ChartKind,
        /// The PNG file to write.
        #[arg(long, value_parser = user_path)]
        out: PathBuf,
        /// The result column for x (default: the first).
        #[arg(long)]
        x: Option<String>,
        /// The result column for y (default: the second; a histogram's and tir's: the first).
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
        /// Resolve table names against this database's catalog (read through a confined
        /// worker); repeatable as for serve (`NAME=PATH`), the first the default.
        #[arg(long, value_name = "[NAME=]PATH", value_parser = database_arg)]
        db: Vec<Declaration>,
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
    /// Import your CGM, pump and health exports (files, or folders of them) into a DuckDB file to
    /// serve. Dexcom Clarity, LibreView (in every language it exports), Tandem t:connect and
    /// Medtronic CareLink CSVs, Nightscout entries and treatments JSON and Apple Health's
    /// export.xml become tables by kind (cgm_readings, insulin_boluses, ...) in mg/dL and local
    /// time, without names, dates of birth or serial numbers, with views of the consensus CGM
    /// metrics; any other CSV becomes a table named after its columns (or --table), without
    /// its identifier-like columns. A file that looks like a health export but is none of these
    /// is refused. Runs on your own files in this process; nothing of it is reachable over MCP.
    Import {
        /// The database file to write (its missing folders are created).
        #[arg(long, value_parser = user_path)]
        out: PathBuf,
        /// Rebuild the database from these files when it exists already.
        #[arg(long, conflicts_with = "append")]
        replace: bool,
        /// Add these files' records to the existing database: only those it does not hold
        /// already (same device and time), so an overlapping newer export adds its new days.
        #[arg(long)]
        append: bool,
        /// Your zone (an IANA name such as Europe/Berlin): Nightscout's times are placed in it
        /// with its daylight-saving rules (never by the uploader's utcOffset), and its 23- and
        /// 25-hour days count as such in the sensor wear. Default: this machine's zone.
        #[arg(long)]
        time_zone: Option<String>,
        /// The table name for the one CSV file given (letters, digits and _); it also imports
        /// a file that looks like a health export `import` does not know, as a plain table.
        #[arg(long)]
        table: Option<String>,
        /// Keep the columns of a plain CSV that look like identifiers (names, serial numbers,
        /// IDs), which are otherwise left out.
        #[arg(long)]
        keep_identifiers: bool,
        /// Export files, or folders of them.
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

/// The databases and the limits every command that runs SQL shares.
#[derive(Debug, Clone, Args)]
pub(crate) struct DbArgs {
    /// A DuckDB database file (required; opened read-only, only inside confined workers). A
    /// leading `~/` is this user's home directory. Repeatable as NAME=PATH for more databases:
    /// SQL names their tables NAME.main.table (or NAME.table); the first --db is the default,
    /// whose tables need no prefix, and a plain PATH is named after its file. Also
    /// `[databases]` in --config.
    #[arg(long, value_name = "[NAME=]PATH", value_parser = database_arg)]
    pub(crate) db: Vec<Declaration>,
    /// Seconds a call may run before its worker is killed.
    #[arg(long, default_value_t = duckgate::gateway::DEFAULT_TIMEOUT_SECS, value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub(crate) timeout: u64,
    /// Seconds a call waits for a free worker (all --max-concurrent busy) before it is answered
    /// `busy`; the wait does not count against --timeout.
    #[arg(long, default_value_t = duckgate::gateway::DEFAULT_QUEUE_TIMEOUT_SECS, value_parser = clap::value_parser!(u64).range(0..=3600))]
    pub(crate) queue_timeout: u64,
    /// The memory all query workers together may use (e.g. 8GB); each worker's hard cap is an
    /// equal share of it (running workers and warm spares alike). Default: half of this
    /// machine's memory.
    #[arg(long, value_parser = size_arg)]
    pub(crate) memory_budget: Option<u64>,
    /// DuckDB's memory_limit in each worker: past it, a query spills to disk. Default: the most
    /// each worker's share of --memory-budget allows.
    #[arg(long, value_parser = size_arg)]
    pub(crate) memory_limit: Option<u64>,
    /// Where each worker's private temporary directory is made. Default: $XDG_RUNTIME_DIR/duckgate,
    /// else <system temp>/duckgate-<uid>, the first that is on disk (else ~/.cache/duckgate/spill).
    #[arg(long, value_parser = user_path)]
    pub(crate) temp_dir: Option<PathBuf>,
    /// What one query may spill to disk (never more than the disk has free); 0 turns spilling
    /// off.
    #[arg(long, default_value_t = duckgate::gateway::DEFAULT_MAX_TEMP_BYTES, value_parser = size_arg)]
    pub(crate) max_temp_size: u64,
    /// DuckDB threads of each worker.
    #[arg(long, default_value_t = duckgate::gateway::DEFAULT_THREADS, value_parser = clap::value_parser!(u32).range(1..=64))]
    pub(crate) threads: u32,
    /// The time zone "today", "yesterday" and local times mean (an IANA name such as
    /// Europe/Berlin). Default: this machine's zone (TZ, else /etc/localtime).
    #[arg(long)]
    pub(crate) time_zone: Option<String>,
    /// One byte budget per reply, text and structured content together: rows past it are cut,
    /// and the reply says how many and what to do instead.
    #[arg(long, alias = "max-result-bytes", default_value_t = duckgate::gateway::DEFAULT_MAX_REPLY_BYTES, value_parser = clap::value_parser!(u64).range(1024..=64 * 1024 * 1024).map(|v| v as usize))]
    pub(crate) max_reply_bytes: usize,
    /// Workers kept confined and warm ahead of need (default: enough for a burst of four
    /// parallel calls).
    #[arg(long, default_value_t = duckgate::gateway::DEFAULT_WARM_WORKERS as u64, value_parser = clap::value_parser!(u64).range(0..=16))]
    pub(crate) warm_workers: u64,
    /// Workers running at once at most; further calls wait their turn.
    #[arg(long, default_value_t = duckgate::gateway::DEFAULT_MAX_CONCURRENT as u64, value_parser = clap::value_parser!(u64).range(1..=64))]
    pub(crate) max_concurrent: u64,
    /// Spawn each worker process from scratch instead of forking it from a warm, confined
    /// template (slower back to back; the template is the default).
    #[arg(long)]
    pub(crate) spawn_workers: bool,
    /// What to tell the user when the database file is missing.
    #[arg(long, default_value = DEFAULT_MISSING_DB_HINT)]
    pub(crate) missing_db_hint: String,
    /// A folder of data files (Parquet, CSV, JSON) the agent may read, as NAME=DIR: it writes
    /// `NAME/readings.csv` or `read_parquet('NAME/2026/*.parquet')`. Read-only; repeatable; also
    /// `[files]` in --config. The folder may not hold any database file (`--db`).
    #[arg(long = "files", value_name = "NAME=DIR", value_parser = folder_arg)]
    pub(crate) files: Vec<String>,
    /// The most files one query may read in the declared folders.
    #[arg(long, default_value_t = duckgate::folders::DEFAULT_MAX_FILES, value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) files_max_count: u64,
    /// The most bytes the files one query reads may hold together (e.g. 64GB).
    #[arg(long, default_value_t = duckgate::folders::DEFAULT_MAX_FILE_BYTES, value_parser = size_arg)]
    pub(crate) files_max_bytes: u64,
    /// Start even where the kernel lacks landlock or seccomp, running workers without them (NOT
    /// recommended: announced on stderr at start-up and reported by server_info). Without it,
    /// duckgate refuses to start on such a kernel.
    #[arg(long)]
    pub(crate) allow_unconfined: bool,
}

// The flags of `serve`, also duckgate's flags without a subcommand. (A doc comment here would
// become clap's help text.)
#[derive(Debug, Clone, Args)]
pub(crate) struct ServeArgs {
    #[command(flatten)]
    pub(crate) db: DbArgs,
    /// A TOML file of table descriptions (`table = "text"`) that supply or override DuckDB comments.
    #[arg(long, value_parser = user_path)]
    pub(crate) descriptions: Option<PathBuf>,
    /// A TOML file with `[databases]` (NAME = "PATH"), `[privacy]` (hide_tables, hide_columns) and
    /// `[audit]` (log, redact_sql, required).
    #[arg(long, value_parser = user_path)]
    pub(crate) config: Option<PathBuf>,
    /// Append one JSON line per tool call to this file (created with mode 0600).
    #[arg(long, value_parser = user_path)]
    pub(crate) audit_log: Option<PathBuf>,
    /// Record the SHA-256 of each query instead of its SQL.
    #[arg(long)]
    pub(crate) audit_redact_sql: bool,
    /// Fail a call when its audit line cannot be written.
    #[arg(long)]
    pub(crate) audit_required: bool,
    /// Rotate the audit log to PATH.1 (PATH.1 to PATH.2, …) before it grows past this many bytes
    /// (default 100 MiB).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) audit_max_bytes: Option<u64>,
    /// Keep this many audit log files (PATH, PATH.1, …; default 10); past it the oldest go,
    /// except those holding records of a running server's session, which are never removed.
    #[arg(long, value_parser = clap::value_parser!(u32).range(2..))]
    pub(crate) audit_generations: Option<u32>,
    /// Hide a table from agents (`name`, `schema.name`, `database.name`, globs); repeatable. Without
    /// a database's name it is hidden in every database.
    #[arg(long)]
    pub(crate) hide_table: Vec<String>,
    /// Hide a column from agents (`table.column`, `database.table.column`, globs such as
    /// `*.serial_number`); repeatable.
    #[arg(long)]
    pub(crate) hide_column: Vec<String>,
    /// Let queries spill to disk even while tables or columns are hidden. The trade-off:
    /// spilling keeps DuckDB's file system enabled, so SQL that got past all of duckgate's SQL
    /// checks could read the database file's raw bytes, hidden data included. Off by default:
    /// under privacy rules a query that needs more memory than its share fails instead.
    #[arg(long)]
    pub(crate) spill_with_privacy_rules: bool,
}

/// `--files NAME=DIR`, its DIR as a person writes it (a leading `~/` expanded), kept as text.
fn folder_arg(text: &str) -> Result<String, String> {
    let (name, dir) = duckgate::folders::parse_declaration(text)?;
    let dir = user_path(&dir.to_string_lossy())?;
    Ok(format!("{name}={}", dir.display()))
}

// The value parsers below return `String` on purpose: clap shows the text as the flag's error,
// and nothing else reads it.

/// `--db [NAME=]PATH`, its PATH as a person writes it (a leading `~/` expanded).
fn database_arg(text: &str) -> Result<Declaration, String> {
    let declaration = Declaration::parse(text)?;
    let path = user_path(&declaration.path.to_string_lossy())?;
    Ok(Declaration {
        path,
        ..declaration
    })
}

/// A path flag as a person writes it: a leading `~` or `~/` is `$HOME`, as a shell would expand
/// it. MCP clients start duckgate without a shell, so `~/health/cgm.duckdb` in a client's config
/// would otherwise name a directory called `~`.
pub(crate) fn user_path(text: &str) -> Result<PathBuf, String> {
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
