//! `duckgate import`: a person's CGM, pump and health exports into one DuckDB file to serve.
//!
//! The operator's own tool, on the operator's own files, run in the operator's process and
//! never reachable over MCP; it opens a writable DuckDB, which is why it lives here and not in
//! `engine` (the hardened, read-only side). What it writes is what every agent will read, so its
//! job is to make the data honest before any query. docs/ARCHITECTURE.md ("Import") has the
//! conventions and why; docs/import-corpus.md the real exports' quirks and the tests that
//! reproduce each.
//!
//! The path of one file:
//! - [`files`]: exactly the files given: literal paths (DuckDB never receives a path it could
//!   read as a glob), no symbolic link followed out of a given folder, never a FIFO or device.
//! - [`detect`]: which export it is, by its structure ([`detect::VENDORS`], each judging its
//!   own), never by its name (vendors put the patient's name there); a file that looks like a
//!   health export but is none `import` knows is refused, not imported as a plain table.
//! - a [`vendor::Vendor`] (one file each: [`clarity`], [`libreview`], [`tconnect`],
//!   [`carelink`], [`nightscout`], [`apple_health`]) reads the file into typed rows
//!   ([`rows`]): CSV read as CSV ([`csv`]), times in the locale's order ([`time`]), numbers
//!   with decimal commas and glucose with its unit and Low/High ([`values`]), the clinical
//!   numbers from [`crate::clinical`]. Pure code: DuckDB never sees a vendor's file.
//! - `store`: the rows into the tables, Nightscout's instants placed in the person's zone,
//!   refreshes without duplicates, the consensus metric views; `generic`: any other CSV as
//!   DuckDB reads it, without identifier-like columns unless asked.
//!
//! The database is built beside its path and renamed into place, so a failure never leaves a
//! half-written file where a reader would take it for the real one; `--append` builds on a
//! copy. One file that fails is reported and the others are still imported.

pub mod apple_health;
pub mod carelink;
pub mod clarity;
pub mod csv;
pub mod detect;
pub mod error;
pub mod fuzz;
pub mod libreview;
pub mod nightscout;
pub mod rows;
pub mod tconnect;
pub mod text;
pub mod time;
pub mod values;
pub mod vendor;

#[cfg(feature = "engine")]
mod build;
#[cfg(feature = "engine")]
pub mod files;
#[cfg(feature = "engine")]
mod generic;
#[cfg(feature = "engine")]
mod store;

use std::path::PathBuf;

#[cfg(feature = "engine")]
pub use build::import;
pub use error::{ErrorKind, ImportError};
#[cfg(feature = "engine")]
pub use files::{Input, input_files};
pub use values::Unit;
pub use vendor::Unparsed;

/// What to do with a database already at the output path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// The output must not exist.
    New,
    /// Build a new database and put it in place of the old one.
    Replace,
    /// Add the files' records to the database there (only those not in it already).
    Append,
}

/// How to import.
#[derive(Debug, Clone)]
pub struct Options {
    /// New, replace or append.
    pub mode: Mode,
    /// The person's zone: where Nightscout's instants are placed, and whose daylight-saving
    /// days are 23 or 25 hours long for the sensor wear of the metric views.
    pub time_zone: String,
    /// The table name of the one generic CSV given (`--table`).
    pub table: Option<String>,
    /// Keep a generic CSV's columns that look like identifiers (`--keep-identifiers`).
    pub keep_identifiers: bool,
}

/// Where a file's rows came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// A vendor's export, by its label (`Dexcom Clarity CSV`).
    Vendor(&'static str),
    /// Any other CSV, as DuckDB's reader typed it.
    Generic,
}

impl Source {
    /// The name the summary and the tables' `source` column use.
    pub fn label(self) -> &'static str {
        if let Source::Vendor(label) = self {
            label
        } else {
            "CSV (generic)"
        }
    }
}

/// Rows one file added to one table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Load {
    /// The table.
    pub table: String,
    /// Rows added.
    pub added: u64,
    /// Rows of the file the table held already (same device, time and occurrence).
    pub already_there: u64,
    /// The file's rows for this table that were left out because a value did not parse.
    pub unparsed: Unparsed,
}

/// What one file became.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileImport {
    /// Where its rows came from.
    pub source: Source,
    /// Its glucose unit, when it has glucose.
    pub unit: Option<Unit>,
    /// Rows per table.
    pub loads: Vec<Load>,
    /// Values that did not parse.
    pub unparsed: Unparsed,
    /// What it holds that was left out on purpose.
    pub left_out: Vec<String>,
    /// Anything else the summary says about it (the zone its times were placed in, …).
    pub notes: Vec<String>,
}

/// One input file's outcome.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileStatus {
    /// Imported.
    Imported(FileImport),
    /// Not read, and why (not an export, a link out of its folder, a FIFO in a folder).
    Skipped(String),
    /// It failed; nothing of it is in the database.
    Failed(ImportError),
}

/// One input file and its outcome.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileOutcome {
    /// The file, as given or as found in a given folder.
    pub file: PathBuf,
    /// What happened.
    pub status: FileStatus,
}

impl FileOutcome {
    /// The file's name as a report shows it: its last component, every control character
    /// escaped.
    pub fn shown_name(&self) -> String {
        let name = self
            .file
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| self.file.display().to_string());
        text::shown(&name).into_owned()
    }
}

/// A table or view of the written database.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableSummary {
    /// Its name.
    pub name: String,
    /// Whether it is a view.
    pub view: bool,
    /// Its rows (0 for a view).
    pub rows: u64,
    /// Its first and last `ts`, when it has them.
    pub range: Option<(String, String)>,
    /// Its columns and their types.
    pub columns: Vec<(String, String)>,
}

/// What an import did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportReport {
    /// The database.
    pub db: PathBuf,
    /// Whether it was written: false when no file could be imported (then nothing changed).
    pub written: bool,
    /// Each input file's outcome, in order.
    pub files: Vec<FileOutcome>,
    /// The database's tables and views afterwards.
    pub tables: Vec<TableSummary>,
}

impl ImportReport {
    /// Whether any file failed.
    pub fn any_failed(&self) -> bool {
        self.files
            .iter()
            .any(|f| matches!(f.status, FileStatus::Failed(_)))
    }
}
