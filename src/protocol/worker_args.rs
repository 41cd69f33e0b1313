//! The worker's command line (`duckgate __worker …`): the parent writes it
//! ([`WorkerArgs::to_argv`]), the worker reads it (clap, in `main.rs`). How the worker turns it
//! into its confinement and its DuckDB configuration is the worker's own
//! (`sandbox::worker`: `WorkerArgs::confine_plan`, `WorkerArgs::engine_config`).

use std::path::PathBuf;

use super::databases::{Database, Databases};

/// Why a worker process is started, which decides how much it does before its request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum WorkerStart {
    /// A warm spare, ahead of need: it also warms the paths a request takes.
    Spare,
    /// A request that found no spare is waiting for it: the shortest start-up.
    OnDemand,
    /// The start-up preflight: confine, report the posture, exit (no DuckDB, no request).
    ConfineOnly,
    /// The zygote's template: confine as `Role::Template` (`sandbox::confine`), hold a warm
    /// single-threaded DuckDB, and fork workers on the server's orders
    /// (`sandbox::zygote::template`). Its `--temp-dir` is the server's directory the
    /// workers' own directories are made in.
    Template,
}

/// The worker's command line: the one definition the parent writes ([`WorkerArgs::to_argv`])
/// and the worker reads (clap, in `main.rs`).
#[derive(Debug, Clone, PartialEq, Eq, clap::Args)]
pub struct WorkerArgs {
    /// Each database as the server decided it at start-up (`protocol::databases`),
    /// `NAME=PATH`, the default first; repeatable.
    #[arg(long = "db", required = true, value_parser = Database::parse_named)]
    pub db: Vec<Database>,
    /// DuckDB `memory_limit`, in bytes: past it DuckDB spills to `temp_dir`.
    #[arg(long)]
    pub memory_limit_bytes: u64,
    /// RLIMIT_DATA: the hard cap on the worker's private writable memory, its share of the
    /// server's memory budget ([`crate::sandbox::budget`]).
    #[arg(long)]
    pub memory_cap_bytes: u64,
    /// DuckDB threads.
    #[arg(long)]
    pub threads: u32,
    /// DuckDB's `TimeZone` (an IANA name such as `Europe/Berlin`): the zone `now()`,
    /// `current_date` and TIMESTAMPTZ arithmetic use.
    #[arg(long)]
    pub time_zone: String,
    /// RLIMIT_CPU.
    #[arg(long)]
    pub cpu_seconds: u64,
    /// RLIMIT_AS: a backstop on address space, above the memory cap by room for mappings
    /// that are not writable memory (the binary, reserved but unused ranges).
    #[arg(long)]
    pub address_space_bytes: u64,
    /// The worker's private temporary directory (made by the parent, mode 0700): read-write
    /// for the worker alone, DuckDB's `temp_directory`. Absent: no spilling.
    #[arg(long)]
    pub temp_dir: Option<PathBuf>,
    /// DuckDB's `max_temp_directory_size` and the worker's RLIMIT_FSIZE, in bytes.
    #[arg(long, default_value_t = 0)]
    pub max_temp_bytes: u64,
    /// The pid the worker expects as its parent.
    #[arg(long)]
    pub parent_pid: i32,
    /// Carry on where the kernel lacks landlock or seccomp.
    #[arg(long)]
    pub allow_unconfined: bool,
    /// Why it is started.
    #[arg(long, value_enum)]
    pub start: WorkerStart,
    /// A declared folder, `NAME=DIR` with DIR as the server resolved it at start-up
    /// ([`crate::folders::validate`]); repeatable. Readable beneath DIR, nothing else new.
    #[arg(long = "files")]
    pub files: Vec<String>,
    /// The most files one query may bind in the declared folders.
    #[arg(long, default_value_t = crate::folders::DEFAULT_MAX_FILES)]
    pub files_max_count: u64,
    /// The most bytes the files one query binds may hold together.
    #[arg(long, default_value_t = crate::folders::DEFAULT_MAX_FILE_BYTES)]
    pub files_max_bytes: u64,
}

impl WorkerArgs {
    /// The declared folders and their caps, from `--files` (which the server wrote), and every
    /// database's file and WAL, which no folder serves: what both sides judge files by.
    pub fn folder_rules(&self) -> crate::folders::FolderRules {
        crate::folders::FolderRules {
            folders: self
                .files
                .iter()
                .filter_map(|text| crate::folders::parse_declaration(text).ok())
                .map(|(name, dir)| crate::folders::DeclaredFolder { name, dir })
                .collect(),
            max_files: self.files_max_count,
            max_bytes: self.files_max_bytes,
            // Every declared database, not only the default: each is attached in every worker,
            // and each one's raw bytes would carry its hidden tables and columns.
            database_files: self
                .db
                .iter()
                .flat_map(|database| [database.path.clone(), database.wal()])
                .collect(),
        }
    }

    /// The arguments after the binary's path, `__worker` first.
    pub fn to_argv(&self) -> Vec<std::ffi::OsString> {
        let start = match self.start {
            WorkerStart::Spare => "spare",
            WorkerStart::OnDemand => "on-demand",
            WorkerStart::ConfineOnly => "confine-only",
            WorkerStart::Template => "template",
        };
        let mut argv: Vec<std::ffi::OsString> = vec!["__worker".into()];
        for database in &self.db {
            argv.push("--db".into());
            argv.push(database.to_arg());
        }
        for (flag, value) in [
            ("--memory-limit-bytes", self.memory_limit_bytes.to_string()),
            ("--memory-cap-bytes", self.memory_cap_bytes.to_string()),
            ("--threads", self.threads.to_string()),
            ("--time-zone", self.time_zone.clone()),
            ("--cpu-seconds", self.cpu_seconds.to_string()),
            (
                "--address-space-bytes",
                self.address_space_bytes.to_string(),
            ),
            ("--max-temp-bytes", self.max_temp_bytes.to_string()),
            ("--parent-pid", self.parent_pid.to_string()),
            ("--start", start.to_owned()),
        ] {
            argv.push(flag.into());
            argv.push(value.into());
        }
        if let Some(temp_dir) = &self.temp_dir {
            argv.push("--temp-dir".into());
            argv.push(temp_dir.clone().into_os_string());
        }
        if self.allow_unconfined {
            argv.push("--allow-unconfined".into());
        }
        for folder in &self.files {
            argv.push("--files".into());
            argv.push(folder.into());
        }
        for (flag, value) in [
            ("--files-max-count", self.files_max_count),
            ("--files-max-bytes", self.files_max_bytes),
        ] {
            argv.push(flag.into());
            argv.push(value.to_string().into());
        }
        argv
    }

    /// The databases, as the server decided them (its command line holds at least one).
    pub fn databases(&self) -> Result<Databases, String> {
        Databases::from_worker_args(self.db.clone())
    }
}
