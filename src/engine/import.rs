//! `duckgate import`: CSV files (a CGM vendor's export, most often) into a new DuckDB file.
//!
//! The operator's own tool, on the operator's own files: trusted input, run in the operator's
//! process with DuckDB's CSV reader, never reachable over MCP. Each CSV becomes one table named
//! after its file, with the column types DuckDB's sniffer detects (dates, timestamps, numbers,
//! text), and a table comment saying where it came from, which `list_tables` then shows the
//! agent. The file is built beside the target and renamed into place, so a failure never leaves
//! a half-written database where a reader would take it for the real one.

use std::fmt;
use std::path::{Path, PathBuf};

use duckdb::{Config, Connection};

use super::partial_file::write_beside_then_move;
use super::{sql_identifier, sql_string};

/// One table written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportedTable {
    /// The table's name.
    pub name: String,
    /// The CSV it came from.
    pub source: PathBuf,
    /// Rows read.
    pub rows: u64,
}

/// The CSV files `inputs` name: each file as is, each directory's `*.csv` files (not
/// recursively), sorted by name.
pub fn csv_files(inputs: &[PathBuf]) -> Result<Vec<PathBuf>, ImportError> {
    let mut files = Vec::new();
    for input in inputs {
        let meta = std::fs::metadata(input).map_err(|error| ImportError::Read {
            path: input.clone(),
            error,
        })?;
        if meta.is_dir() {
            let mut found: Vec<PathBuf> = std::fs::read_dir(input)
                .map_err(|error| ImportError::List {
                    dir: input.clone(),
                    error,
                })?
                .filter_map(|entry| entry.ok().map(|e| e.path()))
                .filter(|path| {
                    path.is_file()
                        && path
                            .extension()
                            .is_some_and(|ext| ext.eq_ignore_ascii_case("csv"))
                })
                .collect();
            found.sort();
            if found.is_empty() {
                return Err(ImportError::NoCsvIn(input.clone()));
            }
            files.extend(found);
        } else {
            files.push(input.clone());
        }
    }
    Ok(files)
}

/// The table name for a CSV file: its stem in lower case, every run of characters other than
/// ASCII letters, digits and `_` made one `_`, with a leading `t_` if it would start with a
/// digit (`CGM Export 2025.csv` → `cgm_export_2025`).
pub fn table_name(file: &Path) -> String {
    let stem = file
        .file_stem()
        .map(|s| s.to_string_lossy().to_lowercase())
        .unwrap_or_default();
    let mut name = String::new();
    for c in stem.chars() {
        if c.is_ascii_alphanumeric() || c == '_' {
            name.push(c);
        } else if !name.ends_with('_') {
            name.push('_');
        }
    }
    let name = name.trim_matches('_').to_string();
    match name.chars().next() {
        None => "imported".into(),
        Some(first) if first.is_ascii_digit() => format!("t_{name}"),
        Some(_) => name,
    }
}

/// Import `files` into a new database at `out` (which must not exist). Two files that would
/// get the same table name are refused before anything is written.
pub fn import_csv(out: &Path, files: &[PathBuf]) -> Result<Vec<ImportedTable>, ImportError> {
    if out.exists() {
        return Err(ImportError::Exists(out.to_path_buf()));
    }
    if files.is_empty() {
        return Err(ImportError::NothingToImport);
    }
    let mut names: Vec<(String, &PathBuf)> = Vec::new();
    for file in files {
        let name = table_name(file);
        if let Some((_, other)) = names.iter().find(|(n, _)| *n == name) {
            return Err(ImportError::SameTableName {
                first: (*other).clone(),
                second: file.clone(),
                table: name,
            });
        }
        names.push((name, file));
    }
    write_beside_then_move(
        out,
        |partial| write(partial, &names),
        ImportError::MoveIntoPlace,
    )
}

/// Why `duckgate import` stopped: the step that failed.
#[derive(Debug)]
pub enum ImportError {
    /// An input could not be read.
    Read {
        /// The input.
        path: PathBuf,
        /// Why.
        error: std::io::Error,
    },
    /// An input directory could not be listed.
    List {
        /// The directory.
        dir: PathBuf,
        /// Why.
        error: std::io::Error,
    },
    /// An input directory holds no `.csv` file.
    NoCsvIn(PathBuf),
    /// The output exists already.
    Exists(PathBuf),
    /// No file was given.
    NothingToImport,
    /// Two files would become the same table.
    SameTableName {
        /// The file that took the name first.
        first: PathBuf,
        /// The other one.
        second: PathBuf,
        /// The table name both would get.
        table: String,
    },
    /// DuckDB's configuration was refused.
    Configure(duckdb::Error),
    /// The database file could not be created.
    Create {
        /// The file (the `.partial` one beside the target).
        path: PathBuf,
        /// DuckDB's error.
        error: duckdb::Error,
    },
    /// A file's absolute path could not be found.
    Resolve {
        /// The file.
        file: PathBuf,
        /// Why.
        error: std::io::Error,
    },
    /// Reading today's date, for the table comment, failed.
    Today(duckdb::Error),
    /// DuckDB could not read a CSV into its table.
    Load {
        /// The CSV.
        file: PathBuf,
        /// DuckDB's error.
        error: duckdb::Error,
    },
    /// Counting a table's rows failed.
    Count {
        /// The table.
        table: String,
        /// DuckDB's error.
        error: duckdb::Error,
    },
    /// The final checkpoint failed.
    Checkpoint(duckdb::Error),
    /// Closing the database failed.
    Close(duckdb::Error),
    /// Renaming the built file into place failed.
    MoveIntoPlace(std::io::Error),
}

impl fmt::Display for ImportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ImportError::Read { path, error } => {
                write!(f, "cannot read {}: {error}", path.display())
            }
            ImportError::List { dir, error } => write!(f, "cannot list {}: {error}", dir.display()),
            ImportError::NoCsvIn(dir) => write!(f, "{} holds no .csv file", dir.display()),
            ImportError::Exists(out) => write!(
                f,
                "{} already exists; import writes a new database (choose another --out)",
                out.display()
            ),
            ImportError::NothingToImport => f.write_str("no CSV file to import"),
            ImportError::SameTableName {
                first,
                second,
                table,
            } => write!(
                f,
                "{} and {} would both become table {table}; rename one",
                first.display(),
                second.display()
            ),
            ImportError::Configure(e) => write!(f, "could not configure DuckDB: {e}"),
            ImportError::Create { path, error } => {
                write!(f, "could not create {}: {error}", path.display())
            }
            ImportError::Resolve { file, error } => {
                write!(f, "cannot resolve {}: {error}", file.display())
            }
            ImportError::Today(e) => write!(f, "reading today's date: {e}"),
            ImportError::Load { file, error } => {
                write!(f, "importing {}: {error}", file.display())
            }
            ImportError::Count { table, error } => write!(f, "counting {table}: {error}"),
            ImportError::Checkpoint(e) => write!(f, "checkpoint: {e}"),
            ImportError::Close(e) => write!(f, "closing the database: {e}"),
            ImportError::MoveIntoPlace(e) => {
                write!(f, "could not move the database into place: {e}")
            }
        }
    }
}

impl std::error::Error for ImportError {}

fn write(path: &Path, names: &[(String, &PathBuf)]) -> Result<Vec<ImportedTable>, ImportError> {
    let config = Config::default()
        .with("autoinstall_known_extensions", "false")
        .and_then(|c| c.with("autoload_known_extensions", "false"))
        .map_err(ImportError::Configure)?;
    let conn = Connection::open_with_flags(path, config).map_err(|error| ImportError::Create {
        path: path.to_path_buf(),
        error,
    })?;
    let mut tables = Vec::new();
    for (name, file) in names {
        let source = std::path::absolute(file).map_err(|error| ImportError::Resolve {
            file: (*file).clone(),
            error,
        })?;
        let source_text = source.to_string_lossy().into_owned();
        let table = sql_identifier(name);
        conn.execute_batch(&format!(
            "CREATE TABLE {table} AS SELECT * FROM read_csv({}, auto_detect = true);
             COMMENT ON TABLE {table} IS {};",
            sql_string(&source_text),
            sql_string(&format!(
                "Imported by duckgate import from {source_text} on {}",
                today(&conn)?
            ))
        ))
        .map_err(|error| ImportError::Load {
            file: (*file).clone(),
            error,
        })?;
        let rows: i64 = conn
            .query_row(&format!("SELECT count(*) FROM {table}"), [], |r| r.get(0))
            .map_err(|error| ImportError::Count {
                table: name.clone(),
                error,
            })?;
        tables.push(ImportedTable {
            name: name.clone(),
            source,
            rows: rows.max(0) as u64,
        });
    }
    conn.execute_batch("CHECKPOINT")
        .map_err(ImportError::Checkpoint)?;
    conn.close().map_err(|(_, e)| ImportError::Close(e))?;
    Ok(tables)
}

/// Today's date in the machine's time zone, as DuckDB reads it.
fn today(conn: &Connection) -> Result<String, ImportError> {
    conn.query_row("SELECT current_date::VARCHAR", [], |r| r.get(0))
        .map_err(ImportError::Today)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_names_come_from_file_names_as_plain_identifiers() {
        assert_eq!(
            table_name(Path::new("/x/CGM Export 2025.csv")),
            "cgm_export_2025"
        );
        assert_eq!(
            table_name(Path::new("2025-readings.csv")),
            "t_2025_readings"
        );
        assert_eq!(table_name(Path::new("pump--events!!.CSV")), "pump_events");
        assert_eq!(table_name(Path::new("...csv")), "imported");
    }

    #[test]
    fn two_files_with_one_table_name_are_refused_before_anything_is_written() {
        let dir = crate::engine::tests::TempDir::new("import-clash");
        let (a, b) = (
            dir.path().join("Readings.csv"),
            dir.path().join("readings.csv"),
        );
        std::fs::write(&a, "x\n1\n").unwrap();
        std::fs::write(&b, "x\n2\n").unwrap();
        let out = dir.path().join("out.duckdb");
        let error = import_csv(&out, &[a, b]).unwrap_err();
        assert!(
            matches!(&error, ImportError::SameTableName { table, .. } if table == "readings"),
            "{error}"
        );
        assert!(
            error
                .to_string()
                .contains("would both become table readings"),
            "{error}"
        );
        assert!(!out.exists());
    }
}
