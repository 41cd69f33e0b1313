//! What the parent and a worker say to each other, and the data the tools return.
//!
//! Frames on the worker's stdin/stdout are a 4-byte big-endian length followed by that many bytes
//! of JSON. Both directions are size-capped by the reader.

use serde::{Deserialize, Serialize};

use crate::error::ErrorKind;
use crate::privacy::PrivacyPolicy;

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
        /// plan (`src/engine/plan_check.rs`). Empty (and left out of the frame): no extra work.
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
    Catalog,
    /// Report the sandbox posture actually in force.
    Posture,
    /// Test-only: try forbidden things from inside the confined worker and report what happened.
    /// Honoured only when the operator's test bypass is on (see `sandbox::bypass`).
    Probe(ProbeRequest),
}

/// What a probe should try (test-only).
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
    /// Programs to execute.
    pub exec: Vec<String>,
    /// Pid to send signal 0 (existence check) and SIGTERM to.
    pub signal_pid: Option<i32>,
    /// Pid to ptrace-attach to.
    pub ptrace_pid: Option<i32>,
}

/// The outcome of each probe attempt: `Ok` means the forbidden thing *succeeded*.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct ProbeReport {
    /// (what was tried, Ok(()) if it succeeded, Err(errno text) if denied)
    pub attempts: Vec<(String, Result<(), String>)>,
    /// The pid of the process that ran the probe.
    #[serde(default)]
    pub pid: i32,
    /// Its parent's pid (`getppid`): the server for a spawned worker, the zygote's template for
    /// a forked one, so a test can tell which kind answered.
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
    Probe(ProbeReport),
    /// A chart drawn by the worker.
    Chart(ChartReply),
    /// The request failed.
    Error(WorkerError),
}

/// What a [`Request::Plot`] draws: which kind, from which result columns, how big.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChartRequest {
    /// The kind of chart.
    pub kind: crate::plot::ChartKind,
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

/// A failure with a registry kind.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkerError {
    /// Registry kind.
    pub kind: ErrorKind,
    /// Message for the agent (DuckDB's own words for syntax and binder errors).
    pub message: String,
    /// For a refusal by the worker's checks: the offending construct.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub construct: Option<String>,
    /// For a refusal by the worker's checks: what to do instead.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suggestion: Option<String>,
    /// For `unknown_name`: what DuckDB could not find, read from its message once, in
    /// `engine/errors.rs` (the one place that knows DuckDB's words).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub missing: Option<MissingName>,
    /// For a refusal the other layers act on: which one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refusal: Option<WorkerRefusal>,
}

impl WorkerError {
    /// A failure without a construct or next step of its own.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> WorkerError {
        WorkerError {
            kind,
            message: message.into(),
            construct: None,
            suggestion: None,
            missing: None,
            refusal: None,
        }
    }
}

/// A name DuckDB could not find.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MissingName {
    /// The name as the query wrote it.
    pub name: String,
    /// What DuckDB looked for.
    pub kind: MissingKind,
}

/// What kind of name DuckDB could not find.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MissingKind {
    /// A column.
    Column,
    /// A table, view, function, schema or anything else DuckDB names.
    Other,
}

/// The worker refusals other layers recognise by type, never by their words.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WorkerRefusal {
    /// The plan reads something hidden by the privacy rules, or lists the catalog under them
    /// (`crate::privacy::PLAN_REFUSAL`).
    PrivacyPlan,
}

impl From<crate::validate::Refusal> for WorkerError {
    fn from(refusal: crate::validate::Refusal) -> Self {
        WorkerError {
            kind: refusal.kind,
            message: refusal.message,
            construct: (!refusal.construct.is_empty()).then_some(refusal.construct),
            suggestion: (!refusal.suggestion.is_empty()).then_some(refusal.suggestion),
            missing: None,
            refusal: None,
        }
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
    /// Foreign-key target, as `table.column`.
    pub references: Option<String>,
    /// `COMMENT ON COLUMN` text.
    pub comment: Option<String>,
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
    /// What the kernel cannot enforce and the operator accepted with `--allow-unconfined`, one
    /// line each, naming the feature first (`landlock: …`, `seccomp: …`); empty when every
    /// layer is in force.
    #[serde(default)]
    pub unenforced: Vec<String>,
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
