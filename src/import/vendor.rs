//! One importer per vendor, behind one small trait.
//!
//! A [`Vendor`] recognises its export by structure ([`Vendor::detect`] on the file's [`Head`]:
//! its preamble, its header row's shape, what its first records hold, never English words
//! alone and never the file's name) and turns the whole file into typed rows
//! ([`Vendor::read`]). Each lives in a file of its own under `src/import/`; `detect::VENDORS` is
//! the registry. A new vendor is one file and one line there.
//!
//! Pure code: bytes in, rows out. DuckDB only ever sees the typed rows, never a vendor's file.

use std::collections::BTreeMap;
use std::io::Read;

use super::csv::{self, Record, Records};
use super::error::ImportError;
use super::rows::{Rows, Table};
use super::values::Unit;

/// How much of a file recognising it reads: the longest preamble seen (CareLink's) is a few
/// hundred bytes, and an Apple Health export names `<HealthData` within its first kilobytes.
pub const HEAD_BYTES: usize = 64 * 1024;

/// How many records of a CSV's head the vendors look at.
const HEAD_RECORDS: usize = 60;

/// The start of a file, as the vendors' `detect` sees it.
#[derive(Debug, Clone)]
pub struct Head<'a> {
    /// The decoded text of its first [`HEAD_BYTES`] (without a byte-order mark).
    pub text: &'a str,
    /// Its first records as CSV, split at the delimiter its header line suggests (empty when
    /// the text is not CSV at all).
    pub records: Vec<Record<'a>>,
    /// Its name's extension, lower case (never its name: vendors put the patient's there).
    pub extension: String,
}

impl<'a> Head<'a> {
    /// The head of a file whose first bytes decode to `text`.
    pub fn new(text: &'a str, extension: &str) -> Head<'a> {
        let delimiter = csv::sniff_delimiter(text);
        let mut records = Vec::new();
        for record in Records::new(text, delimiter).take(HEAD_RECORDS) {
            match record {
                Ok(record) => records.push(record),
                // The head may end inside a quoted field: what came before still counts.
                Err(_) => break,
            }
        }
        Head {
            text,
            records,
            extension: extension.to_ascii_lowercase(),
        }
    }

    /// The text without leading blanks.
    pub fn start(&self) -> &str {
        self.text.trim_start()
    }
}

/// Values of a file that could not be read: how many rows, and a few as the file wrote them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Unparsed {
    /// Rows left out because a time or value did not parse.
    pub count: u64,
    /// Up to three of them (what and the value).
    pub examples: Vec<String>,
}

impl Unparsed {
    /// Count one, keeping it as an example while there are fewer than three.
    pub fn add(&mut self, example: String) {
        self.count += 1;
        if self.examples.len() < 3 && !self.examples.contains(&example) {
            self.examples.push(example);
        }
    }

    /// Add another's counts and examples.
    pub fn merge(&mut self, other: &Unparsed) {
        self.count += other.count;
        for example in &other.examples {
            if self.examples.len() < 3 && !self.examples.contains(example) {
                self.examples.push(example.clone());
            }
        }
    }
}

/// What a vendor read from one file.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Parsed {
    /// The typed rows.
    pub rows: Rows,
    /// Per table, the rows left out because a value did not parse.
    pub unparsed: BTreeMap<Table, Unparsed>,
    /// The glucose unit of the export, when it has glucose.
    pub unit: Option<Unit>,
    /// What the export holds that is not imported, and why: the summary says so.
    pub left_out: Vec<String>,
    /// Anything else the summary should say about the file.
    pub notes: Vec<String>,
}

impl Parsed {
    /// The file's rows, or the error of an export of `label` that holds no record.
    pub fn or_no_records(self, label: &str) -> Result<Parsed, ImportError> {
        if self.rows.is_empty() && self.unparsed.is_empty() {
            Err(ImportError::no_records(label))
        } else {
            Ok(self)
        }
    }

    /// Count a row of `table` left out, as `what "value"`.
    pub fn unparsed(&mut self, table: Table, what: &str, value: &str) {
        let value = if value.trim().is_empty() {
            "(empty)".to_string()
        } else {
            format!("\"{}\"", value.trim())
        };
        self.unparsed
            .entry(table)
            .or_default()
            .add(format!("{what} {value}"));
    }
}

/// An export `duckgate import` knows.
pub trait Vendor: Sync {
    /// The export's name, as the summary and the tables' `source` column say it.
    fn label(&self) -> &'static str;

    /// Whether `head` is this vendor's export, judged by its structure.
    fn detect(&self, head: &Head<'_>) -> bool;

    /// The whole file's rows.
    fn read(&self, input: &mut dyn Read) -> Result<Parsed, ImportError>;
}

/// The whole of `input`, decoded as text (see `text::decode`).
pub fn read_text(input: &mut dyn Read) -> Result<String, ImportError> {
    let mut bytes = Vec::new();
    input
        .read_to_end(&mut bytes)
        .map_err(ImportError::unreadable)?;
    Ok(super::text::decode(&bytes).into_owned())
}

/// Call `each` with every record of `text`, split at `delimiter`, in order; a quote that never
/// closes is the file's error. Records are read one at a time: a file of a year of pump events
/// is never held as records all at once.
pub fn each_record<'a>(
    text: &'a str,
    delimiter: u8,
    mut each: impl FnMut(&Record<'a>),
) -> Result<(), ImportError> {
    for record in Records::new(text, delimiter) {
        each(&record.map_err(ImportError::broken_csv)?);
    }
    Ok(())
}
