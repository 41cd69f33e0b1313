//! What the parent and a worker say to each other, and the data the tools return.
//!
//! Frames on the worker's stdin/stdout are a 4-byte big-endian length followed by that many bytes
//! of JSON. Both directions are size-capped by the reader.
//!
//! This module is the one both sides of a worker import, and it imports neither: the parent
//! (`mcp`, `gateway`, `sandbox::pool`) never reaches into the worker's `engine`, and the worker
//! never into the parent's rooms. Beside the messages here:
//! - [`catalog`]: the catalog a worker reads and the tools show;
//! - [`posture`]: what confinement a worker reports it has;
//! - [`worker_args`]: the worker's command line, which the parent writes and the worker reads;
//! - [`databases`]: the databases served, each a name and a file, as the parent decides them
//!   once and the worker attaches them (and a file's WAL);
//! - [`encoding`]: how values travel as JSON, and what JSON weighs.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::privacy::PrivacyPolicy;
/// The error a worker replies with is the crate's one error type.
pub use duckgate_validate::error::{
    Failure, MessageOrigin, MissingKind, MissingName, WorkerRefusal,
};

pub mod catalog;
pub mod databases;
pub mod encoding;
pub mod posture;
#[cfg(feature = "engine")]
pub mod worker_args;

pub use catalog::{
    CatalogSnapshot, ColumnInfo, ColumnReference, ForeignKey, IndexInfo, RelationKind, TableInfo,
};
pub use posture::{
    LandlockAbsence, LandlockStatus, Posture, PropertyPosture, SeccompAbsence, UnenforcedLayer,
    UnknownLayerGap,
};

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
}
