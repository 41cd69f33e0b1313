//! What the parent and a worker say to each other, and the data the tools return.
//!
//! Frames on the worker's stdin/stdout are a 4-byte big-endian length followed by that many bytes
//! of JSON. Both directions are size-capped by the reader.
//!
//! This module is the one both sides of a worker import, and it imports neither: the parent
//! (`mcp`, `gateway`, `sandbox::pool`) never reaches into the worker's `engine`, and the worker
//! never into the parent's rooms. Beside the messages here:
//! - [`worker_args`]: the worker's command line, which the parent writes and the worker reads;
//! - [`database_names`]: the names both derive from the database's path (its WAL, its alias);
//! - [`encoding`]: how values travel as JSON, and what JSON weighs.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::privacy::PrivacyPolicy;
/// The error a worker replies with is the crate's one error type.
pub use duckgate_validate::error::{Failure, MissingKind, MissingName, WorkerRefusal};

pub mod database_names;
pub mod encoding;
#[cfg(feature = "engine")]
pub mod worker_args;

/// One request to a single-use worker.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Request {
    /// Run one SQL statement.
    Query {
        /// The SQL, already accepted by the validator (unless a test bypass is on).
        sql: String,
        /// Rows to return at most; the worker reads one more to know about truncation.
        limit: usize,
        /// Bytes of JSON row data to return at most.
        max_bytes: usize,
        /// The operator's privacy rules, enforced a second time by the worker on DuckDB's own
        /// plan (`src/engine/plan_check/`). Empty (and left out of the frame): no extra work.
        #[serde(default, skip_serializing_if = "PrivacyPolicy::is_empty")]
        privacy: PrivacyPolicy,
    },
    /// `EXPLAIN (FORMAT JSON)` of one SQL statement.
    Explain {
        /// The SQL to explain.
        sql: String,
        /// As for [`Request::Query`]: the plan is refused if the query reads anything hidden.
        #[serde(default, skip_serializing_if = "PrivacyPolicy::is_empty")]
        privacy: PrivacyPolicy,
    },
    /// Run one SQL statement and draw two of its columns as a PNG, inside the worker.
    Plot {
        /// The SQL, as for [`Request::Query`].
        sql: String,
        /// What to draw, and how.
        chart: ChartRequest,
        /// As for [`Request::Query`].
        #[serde(default, skip_serializing_if = "PrivacyPolicy::is_empty")]
        privacy: PrivacyPolicy,
    },
    /// Read the catalog: tables, views, columns, constraints, indexes.
    Catalog {
        /// The operator's privacy rules: under them the worker traces what each view column
        /// reads (`ColumnInfo::view_reads`) with the data-dependent optimizers off; the parent
        /// filters.
        #[serde(default, skip_serializing_if = "PrivacyPolicy::is_empty")]
        privacy: PrivacyPolicy,
    },
    /// Report the sandbox posture actually in force.
    Posture,
    /// Test-only: try forbidden things from inside the confined worker and report what happened.
    /// Honoured only when the operator's test bypass is on (see `sandbox::bypass`); absent from
    /// a build without the `test-bypass` feature.
    #[cfg(feature = "test-bypass")]
    Probe(ProbeRequest),
}

/// What a probe should try (test-only).
#[cfg(feature = "test-bypass")]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct ProbeRequest {
    /// Files to open for reading.
    pub read_files: Vec<String>,
    /// Directories to list.
    pub list_dirs: Vec<String>,
    /// Files to create and write.
    pub write_files: Vec<String>,
    /// Files to truncate to 0 bytes, by name (`truncate(2)`) and by a read-only `O_TRUNC` open.
    #[serde(default)]
    pub truncate_files: Vec<String>,
    /// Addresses to connect to: `host:port` (TCP), `unix:/path` (a pathname unix socket) or
    /// `unix:@name` (an abstract unix socket).
    pub connect: Vec<String>,
    /// Programs to run in a new process (`std::process::Command`).
    #[serde(default)]
    pub spawn: Vec<String>,
    /// Programs to `execve` in place of the worker.
    #[serde(default)]
    pub exec: Vec<String>,
    /// Pid to send signal 0 (existence check) and SIGTERM to.
    pub signal_pid: Option<i32>,
    /// Pid to ptrace-attach to.
    pub ptrace_pid: Option<i32>,
}

/// The outcome of each probe attempt: `Ok` means the forbidden thing *succeeded*.
#[cfg(feature = "test-bypass")]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct ProbeReport {
    /// (what was tried, Ok(()) if it succeeded, Err(errno text) if denied). The error stays
    /// text: it is for a person reading a breach report, and tests look only at `Ok`/`Err`.
    pub attempts: Vec<(String, Result<(), String>)>,
    /// The pid of the process that ran the probe.
    #[serde(default)]
    pub pid: i32,
    /// Its parent's pid (`getppid` at confinement's step 2, checked there against the pid the
    /// worker was given): the server for a spawned worker, the zygote's template for a forked
    /// one, so a test can tell which kind answered.
    #[serde(default)]
    pub parent_pid: i32,
}

/// A worker's one reply.
///
/// Externally tagged (`{"rows": {...}}`), not internally: serde decodes an internally tagged
/// enum by first buffering the whole reply into an untyped tree to find the tag, which doubled
/// the parent's decode of a 1,000-row reply (409 -> 275 us median, hot, 50 KB of JSON).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Response {
    /// Rows of a query.
    Rows(QueryResult),
    /// An `EXPLAIN` plan.
    Plan(ExplainResult),
    /// The catalog.
    Catalog(CatalogSnapshot),
    /// The posture report.
    Posture(Posture),
    /// Probe outcomes (test-only).
    #[cfg(feature = "test-bypass")]
    Probe(ProbeReport),
    /// A chart drawn by the worker.
    Chart(ChartReply),
    /// The request failed.
    Error(Failure),
}

/// What a [`Request::Plot`] draws: which kind, from which result columns, how big.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChartRequest {
    /// The kind of chart.
    pub kind: ChartKind,
    /// The result column for x (`None`: the first column; a histogram ignores x).
    pub x: Option<String>,
    /// The result column for y (`None`: the second column, or the first for a histogram).
    pub y: Option<String>,
    /// A title above the chart.
    pub title: Option<String>,
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// Histogram bins.
    pub bins: Option<u32>,
    /// A y range to shade (and, for an AGP, to count time in range for).
    pub target_range: Option<(f64, f64)>,
}

/// A chart the worker drew.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChartReply {
    /// The PNG, base64 (a JSON array of byte numbers would be four times larger).
    pub png_base64: String,
    /// Its width in pixels.
    pub width: u32,
    /// Its height in pixels.
    pub height: u32,
    /// The result columns drawn as x and y.
    pub x: String,
    /// See `x`.
    pub y: String,
    /// Rows the query returned.
    pub rows_read: usize,
    /// What the chart shows, as a small table (column names, rows) ...
    pub summary_columns: Vec<String>,
    /// ... its rows ...
    pub summary_rows: Vec<Vec<serde_json::Value>>,
    /// ... and a sentence, for a reader who cannot see the picture.
    pub summary_text: String,
}

/// Which picture a [`Request::Plot`] draws (`crate::plot` draws it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChartKind {
    /// y over a time or number x, points joined in x order.
    Line,
    /// y against a time or number x, one marker per row.
    Scatter,
    /// One bar per row: x names the bar, y is its height.
    Bar,
    /// How the y values are distributed, in equal-width bins (x is not used).
    Histogram,
    /// Ambulatory glucose profile: y (glucose) by time of day over all days, as percentile bands.
    Agp,
    /// Time in ranges: the share of y (glucose) readings in each consensus range, stacked.
    Tir,
}

impl ChartKind {
    /// Every kind, in the order the tool and the command line list them.
    pub const ALL: [ChartKind; 6] = [
        ChartKind::Line,
        ChartKind::Scatter,
        ChartKind::Bar,
        ChartKind::Histogram,
        ChartKind::Agp,
        ChartKind::Tir,
    ];

    /// Whether the kind draws the y values alone (how they are distributed), never against an
    /// x: it needs one result column, and its y is the first unless named. The other kinds draw
    /// y against x and need two, x first.
    pub fn draws_y_alone(self) -> bool {
        match self {
            ChartKind::Histogram | ChartKind::Tir => true,
            ChartKind::Line | ChartKind::Scatter | ChartKind::Bar | ChartKind::Agp => false,
        }
    }

    /// The kind's name as a tool argument and the command line's `--kind` spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            ChartKind::Line => "line",
            ChartKind::Scatter => "scatter",
            ChartKind::Bar => "bar",
            ChartKind::Histogram => "histogram",
            ChartKind::Agp => "agp",
            ChartKind::Tir => "tir",
        }
    }
}

/// `duckgate plot --kind`: the same kinds, spelled as the tool's `kind` argument spells them.
#[cfg(feature = "engine")]
impl clap::ValueEnum for ChartKind {
    fn value_variants<'a>() -> &'a [Self] {
        &ChartKind::ALL
    }

    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        Some(clap::builder::PossibleValue::new(self.as_str()))
    }
}

impl fmt::Display for ChartKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One result column.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ColumnMeta {
    /// Column name.
    pub name: String,
    /// DuckDB type, e.g. `BIGINT`, `DECIMAL(10,2)`, `STRUCT(a INTEGER)`.
    #[serde(rename = "type")]
    pub data_type: String,
}

/// Rows of a query, already converted to JSON values.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QueryResult {
    /// The result's columns.
    pub columns: Vec<ColumnMeta>,
    /// Rows, each as many values as there are columns.
    pub rows: Vec<Vec<serde_json::Value>>,
    /// `rows.len()`.
    pub row_count: usize,
    /// More rows existed than `limit`, or the byte cap was reached.
    pub truncated: bool,
    /// Time spent in the worker on attach + run + fetch, in milliseconds.
    pub duration_ms: f64,
}

/// A plan.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExplainResult {
    /// DuckDB's JSON plan.
    pub plan: serde_json::Value,
}

/// The whole schema, as the tools and resources publish it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CatalogSnapshot {
    /// Tables and views.
    pub tables: Vec<TableInfo>,
    /// Foreign keys across the database.
    pub foreign_keys: Vec<ForeignKey>,
    /// The table macros stored in the database, by name (the validator refuses any other table
    /// function that is not built in). Under privacy rules none: the worker's shadow catalog
    /// has no copy of them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub table_macros: Vec<String>,
}

/// Whether a relation is a table or a view.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RelationKind {
    /// A base table.
    Table,
    /// A view.
    View,
}

impl RelationKind {
    /// Its name on the wire: `table` or `view`.
    pub fn as_str(self) -> &'static str {
        match self {
            RelationKind::Table => "table",
            RelationKind::View => "view",
        }
    }
}

/// One table or view.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TableInfo {
    /// Schema name.
    pub schema: String,
    /// Table name.
    pub name: String,
    /// A table or a view.
    pub kind: RelationKind,
    /// `COMMENT ON` text, or the operator's description.
    pub description: Option<String>,
    /// DuckDB's estimated row count (tables only).
    pub estimated_rows: Option<i64>,
    /// Columns in order.
    pub columns: Vec<ColumnInfo>,
    /// Indexes on the table.
    pub indexes: Vec<IndexInfo>,
}

/// One column.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ColumnInfo {
    /// Column name.
    pub name: String,
    /// DuckDB type.
    #[serde(rename = "type")]
    pub data_type: String,
    /// Whether NULL is allowed.
    pub nullable: bool,
    /// Default expression, if any.
    pub default: Option<String>,
    /// Part of the primary key.
    pub primary_key: bool,
    /// Has a UNIQUE constraint of its own.
    pub unique: bool,
    /// Foreign-key target.
    pub references: Option<ColumnReference>,
    /// `COMMENT ON COLUMN` text.
    pub comment: Option<String>,
    /// The columns of its own table its default or generated expression reads, as DuckDB's own
    /// parser reads the expression (empty without one); `None` when DuckDB could not parse it,
    /// so it may read any. It crosses the worker's catalog reply for the parent's privacy
    /// filter (a column computed from a hidden one is hidden too), which then empties it: no
    /// tool shows it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_reads: Option<Vec<String>>,
    /// A view's column, read by a worker under privacy rules: what DuckDB's plan of it reads
    /// (`engine::lineage`), for the parent's privacy filter (a view column computed from
    /// hidden data is hidden), which then empties it: no tool shows it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub view_reads: Option<crate::privacy::ViewColumnReads>,
}

/// The column a foreign key points at.
///
/// It travels as the object `{"table": …, "column": …}`, on the worker's catalog reply and in the
/// MCP tools alike: a name may itself hold a dot, so one `table.column` string could not be split
/// back into the true pair, and the parent's privacy check needs the true pair. Only the text a
/// person reads joins them ([`fmt::Display`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ColumnReference {
    /// The referenced table, without its schema (as DuckDB's constraint names it).
    pub table: String,
    /// The referenced column.
    pub column: String,
}

impl fmt::Display for ColumnReference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.table, self.column)
    }
}

/// One index.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IndexInfo {
    /// Index name.
    pub name: String,
    /// Whether it is unique.
    pub unique: bool,
    /// Its SQL definition.
    pub sql: Option<String>,
}

/// One foreign key.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ForeignKey {
    /// Referencing table.
    pub table: String,
    /// Referencing columns.
    pub columns: Vec<String>,
    /// Referenced table.
    pub referenced_table: String,
    /// Referenced columns.
    pub referenced_columns: Vec<String>,
}

/// Whether a worker's landlock ruleset is in force. Confinement never runs with a partly
/// enforced ruleset: every right is a hard requirement, or there is no landlock at all.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LandlockStatus {
    /// Every right the ABI defines is handled and enforced.
    FullyEnforced,
    /// No landlock (the kernel lacks it and the operator allowed running without it), or the
    /// process did not confine itself.
    #[default]
    NotEnforced,
}

impl LandlockStatus {
    /// Its name on the wire and in text.
    pub fn as_str(self) -> &'static str {
        match self {
            LandlockStatus::FullyEnforced => "fully_enforced",
            LandlockStatus::NotEnforced => "not_enforced",
        }
    }
}

/// What confinement was actually in force in a worker.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Posture {
    /// Whether landlock is in force.
    pub landlock: LandlockStatus,
    /// The landlock ABI the kernel offered.
    pub landlock_abi: Option<i32>,
    /// Whether the seccomp filter was installed.
    pub seccomp: bool,
    /// `NoNewPrivs` was set.
    pub no_new_privs: bool,
    /// rlimits as (name, soft value) pairs.
    pub rlimits: Vec<(String, String)>,
    /// DuckDB settings read back after hardening, as (name, value).
    pub duckdb_settings: Vec<(String, String)>,
    /// Test-only bypasses in force (empty in production).
    pub bypassed_layers: Vec<String>,
    /// What the kernel cannot enforce and the operator accepted with `--allow-unconfined`, each
    /// layer once (on the wire, one sentence each naming the feature first: `landlock: …`,
    /// `seccomp: …`); empty when every layer is in force.
    #[serde(default)]
    pub unenforced: Vec<UnenforcedLayer>,
    /// Each promise of confinement and the mechanisms that keep it on this kernel
    /// (`src/sandbox/confine/properties.rs`).
    #[serde(default)]
    pub properties: Vec<PropertyPosture>,
}

/// One property of confinement as a worker has it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PropertyPosture {
    /// Its name, e.g. `signals`.
    pub property: String,
    /// What it promises, e.g. `no signals or ptrace beyond itself`.
    pub promise: String,
    /// The mechanisms that enforce it here, e.g. `seccomp: … (landlock ABI 3 has no signal
    /// scoping)`, or why it is not enforced.
    pub mechanism: String,
    /// Whether it holds.
    pub enforced: bool,
}

/// A layer of confinement this kernel cannot provide, run without because the operator passed
/// `--allow-unconfined` ([`Posture::unenforced`]).
///
/// On the wire (the preflight's reply and `server_info`) it is the one sentence
/// [`fmt::Display`] writes, the feature first (`landlock: …`, `seccomp: …`); reading a posture
/// back accepts exactly those sentences ([`TryFrom<String>`]), so this type owns their words.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
pub enum UnenforcedLayer {
    /// No landlock: the worker's file system access is not restricted.
    Landlock(LandlockAbsence),
    /// No seccomp filter: the worker's system calls are not filtered.
    Seccomp(SeccompAbsence),
}

/// Why the kernel has no usable landlock, in the kernel's own terms: the status the `landlock`
/// crate reads from `landlock_create_ruleset(…, LANDLOCK_CREATE_RULESET_VERSION)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LandlockAbsence {
    /// `ENOSYS`: the kernel is older than Linux 5.13 or built without landlock.
    NotImplemented,
    /// `EOPNOTSUPP`: built in, but not in the `lsm=` list.
    NotEnabled,
    /// `landlock_create_ruleset` fails (as `ENOSYS` or another error but `EOPNOTSUPP`, which
    /// the `landlock` crate does not tell apart) on a kernel new enough for landlock, in a
    /// process that runs under seccomp filters it inherited: most likely a container runtime's
    /// seccomp profile, or a service manager's system-call filter, refusing landlock's system
    /// calls (a filter answering `ENOSYS` looks exactly like a kernel without landlock, so the
    /// words say both).
    FailsUnderInheritedFilter {
        /// Filters in force before duckgate installed any (`Seccomp_filters:`, or 1 for
        /// `Seccomp: 2` where the kernel does not count them).
        inherited_filters: u32,
    },
    /// The kernel reports an ABI but refuses even the ABI 1 ruleset.
    RejectsRuleset {
        /// The ABI it reports, as the `landlock` crate writes it.
        effective_abi: String,
    },
    /// Any other answer: the `landlock` crate's error.
    Unusable {
        /// That error, in the crate's words.
        error: String,
    },
}

/// How the kernel showed it has no seccomp filters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SeccompAbsence {
    /// `/proc/self/status` has no `Seccomp:` line: the kernel is built without `CONFIG_SECCOMP`.
    NotBuiltIn,
    /// `seccomp(SECCOMP_SET_MODE_FILTER)` returned `ENOSYS`: no `seccomp` system call.
    NoSystemCall,
    /// `seccomp(SECCOMP_SET_MODE_FILTER)` returned `EINVAL`: `CONFIG_SECCOMP_FILTER` is off.
    NoFilterSupport,
}

impl SeccompAbsence {
    /// Every way, for reading the wire's sentences back.
    const ALL: [SeccompAbsence; 3] = [
        SeccompAbsence::NotBuiltIn,
        SeccompAbsence::NoSystemCall,
        SeccompAbsence::NoFilterSupport,
    ];
}

// The words around each part of an `UnenforcedLayer`'s sentence, shared by its `Display` and
// its reading back.
const LANDLOCK_FEATURE: &str = "landlock: ";
const LANDLOCK_CONSEQUENCE: &str = "; the worker's file system access is not restricted";
const SECCOMP_FEATURE: &str = "seccomp: ";
const SECCOMP_CONSEQUENCE: &str =
    "; the worker's system calls (exec, sockets, ptrace, mounts, …) are not filtered";
const REJECTS_BEFORE: &str = "the kernel reports landlock ABI ";
const REJECTS_AFTER: &str = " but rejects duckgate's ruleset";
const UNUSABLE_BEFORE: &str = "the kernel has no usable landlock (";
const UNUSABLE_AFTER: &str = ")";
const BLOCKED_BEFORE: &str = "landlock_create_ruleset fails (ENOSYS, or EPERM as some seccomp \
    profiles answer) in a process that runs under ";
const BLOCKED_AFTER: &str = " seccomp filter(s) it inherited, on a kernel new enough for \
    landlock: most likely that filter (a container runtime's seccomp profile, or a service \
    manager's system-call filter) refuses landlock's system calls, unless the kernel was built \
    without landlock";

impl fmt::Display for UnenforcedLayer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UnenforcedLayer::Landlock(absence) => {
                write!(f, "{LANDLOCK_FEATURE}{absence}{LANDLOCK_CONSEQUENCE}")
            }
            UnenforcedLayer::Seccomp(absence) => {
                write!(f, "{SECCOMP_FEATURE}{absence}{SECCOMP_CONSEQUENCE}")
            }
        }
    }
}

impl fmt::Display for LandlockAbsence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LandlockAbsence::NotImplemented => f.write_str(
                "the kernel does not implement landlock (landlock_create_ruleset returns ENOSYS: \
                 it needs Linux 5.13 or newer built with CONFIG_SECURITY_LANDLOCK)",
            ),
            LandlockAbsence::NotEnabled => f.write_str(
                "landlock is built into the kernel but not enabled (landlock_create_ruleset \
                 returns EOPNOTSUPP: add `landlock` to the `lsm=` boot parameter)",
            ),
            LandlockAbsence::FailsUnderInheritedFilter { inherited_filters } => {
                write!(f, "{BLOCKED_BEFORE}{inherited_filters}{BLOCKED_AFTER}")
            }
            LandlockAbsence::RejectsRuleset { effective_abi } => {
                write!(f, "{REJECTS_BEFORE}{effective_abi}{REJECTS_AFTER}")
            }
            LandlockAbsence::Unusable { error } => {
                write!(f, "{UNUSABLE_BEFORE}{error}{UNUSABLE_AFTER}")
            }
        }
    }
}

impl fmt::Display for SeccompAbsence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            SeccompAbsence::NotBuiltIn => {
                "the kernel is built without seccomp (no Seccomp: line in /proc/self/status)"
            }
            SeccompAbsence::NoSystemCall => {
                "the kernel has no seccomp system call (seccomp(SECCOMP_SET_MODE_FILTER) \
                 returned ENOSYS)"
            }
            SeccompAbsence::NoFilterSupport => {
                "the kernel has no seccomp filter support (seccomp(SECCOMP_SET_MODE_FILTER) \
                 returned EINVAL: CONFIG_SECCOMP_FILTER is off)"
            }
        })
    }
}

impl LandlockAbsence {
    /// The absence whose [`fmt::Display`] is `words`.
    fn from_words(words: &str) -> Option<LandlockAbsence> {
        let between = |before: &str, after: &str| {
            words
                .strip_prefix(before)
                .and_then(|rest| rest.strip_suffix(after))
                .map(str::to_owned)
        };
        [LandlockAbsence::NotImplemented, LandlockAbsence::NotEnabled]
            .into_iter()
            .find(|absence| absence.to_string() == words)
            .or_else(|| {
                between(REJECTS_BEFORE, REJECTS_AFTER)
                    .map(|effective_abi| LandlockAbsence::RejectsRuleset { effective_abi })
            })
            .or_else(|| {
                between(BLOCKED_BEFORE, BLOCKED_AFTER)
                    .and_then(|count| count.parse().ok())
                    .map(
                        |inherited_filters| LandlockAbsence::FailsUnderInheritedFilter {
                            inherited_filters,
                        },
                    )
            })
            .or_else(|| {
                between(UNUSABLE_BEFORE, UNUSABLE_AFTER)
                    .map(|error| LandlockAbsence::Unusable { error })
            })
    }
}

impl From<UnenforcedLayer> for String {
    fn from(layer: UnenforcedLayer) -> String {
        layer.to_string()
    }
}

/// A sentence that is not one an [`UnenforcedLayer`] writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownLayerGap(pub String);

impl fmt::Display for UnknownLayerGap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "not a confinement gap duckgate reports: {:?}", self.0)
    }
}

impl std::error::Error for UnknownLayerGap {}

impl TryFrom<String> for UnenforcedLayer {
    type Error = UnknownLayerGap;

    fn try_from(sentence: String) -> Result<UnenforcedLayer, UnknownLayerGap> {
        let cause = |feature: &str, consequence: &str| {
            sentence
                .strip_prefix(feature)
                .and_then(|rest| rest.strip_suffix(consequence))
        };
        let layer = if let Some(words) = cause(LANDLOCK_FEATURE, LANDLOCK_CONSEQUENCE) {
            LandlockAbsence::from_words(words).map(UnenforcedLayer::Landlock)
        } else if let Some(words) = cause(SECCOMP_FEATURE, SECCOMP_CONSEQUENCE) {
            SeccompAbsence::ALL
                .into_iter()
                .find(|absence| absence.to_string() == words)
                .map(UnenforcedLayer::Seccomp)
        } else {
            None
        };
        layer.ok_or(UnknownLayerGap(sentence))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_chart_kind_is_listed_once_and_reads_back_by_its_name() {
        // Exhaustive: a new kind does not compile here until it has its place in `ALL`.
        let position = |kind: ChartKind| match kind {
            ChartKind::Line => 0,
            ChartKind::Scatter => 1,
            ChartKind::Bar => 2,
            ChartKind::Histogram => 3,
            ChartKind::Agp => 4,
            ChartKind::Tir => 5,
        };
        for (i, kind) in ChartKind::ALL.into_iter().enumerate() {
            assert_eq!(
                position(kind),
                i,
                "{kind} is out of place in ChartKind::ALL"
            );
            let parsed: ChartKind = serde_json::from_value(serde_json::json!(kind.as_str()))
                .expect("the wire name reads back");
            assert_eq!(parsed, kind);
        }
    }

    #[test]
    fn every_unenforced_layer_travels_as_its_sentence_and_reads_back_as_itself() {
        let layers = [
            UnenforcedLayer::Landlock(LandlockAbsence::NotImplemented),
            UnenforcedLayer::Landlock(LandlockAbsence::NotEnabled),
            UnenforcedLayer::Landlock(LandlockAbsence::RejectsRuleset {
                effective_abi: "3".into(),
            }),
            UnenforcedLayer::Landlock(LandlockAbsence::Unusable {
                error: "some (nested) error".into(),
            }),
            UnenforcedLayer::Landlock(LandlockAbsence::FailsUnderInheritedFilter {
                inherited_filters: 2,
            }),
            UnenforcedLayer::Seccomp(SeccompAbsence::NotBuiltIn),
            UnenforcedLayer::Seccomp(SeccompAbsence::NoSystemCall),
            UnenforcedLayer::Seccomp(SeccompAbsence::NoFilterSupport),
        ];
        for layer in layers {
            let wire = serde_json::to_value(&layer).unwrap();
            assert_eq!(wire, serde_json::Value::String(layer.to_string()));
            assert_eq!(
                serde_json::from_value::<UnenforcedLayer>(wire).unwrap(),
                layer
            );
        }
        assert_eq!(
            UnenforcedLayer::Landlock(LandlockAbsence::NotImplemented).to_string(),
            "landlock: the kernel does not implement landlock (landlock_create_ruleset returns \
             ENOSYS: it needs Linux 5.13 or newer built with CONFIG_SECURITY_LANDLOCK); the \
             worker's file system access is not restricted"
        );
        assert_eq!(
            UnenforcedLayer::Seccomp(SeccompAbsence::NoSystemCall).to_string(),
            "seccomp: the kernel has no seccomp system call (seccomp(SECCOMP_SET_MODE_FILTER) \
             returned ENOSYS); the worker's system calls (exec, sockets, ptrace, mounts, …) are \
             not filtered"
        );
        assert!(serde_json::from_str::<UnenforcedLayer>("\"landlock: absent\"").is_err());
    }

    #[test]
    fn a_column_reference_travels_as_its_table_and_column_even_with_dots_in_them() {
        let reference = ColumnReference {
            table: "devices.serial".into(),
            column: "no.1".into(),
        };
        let wire = serde_json::to_value(&reference).unwrap();
        assert_eq!(
            wire,
            serde_json::json!({ "table": "devices.serial", "column": "no.1" })
        );
        assert_eq!(
            serde_json::from_value::<ColumnReference>(wire).unwrap(),
            reference
        );
        assert!(serde_json::from_str::<ColumnReference>("\"devices.serial.no\"").is_err());
        assert_eq!(reference.to_string(), "devices.serial.no.1");
    }
}
