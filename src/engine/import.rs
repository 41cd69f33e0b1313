//! `duckgate import`: CSV files (a CGM vendor's export, most often) into a new DuckDB file.
//!
//! The operator's own tool, on the operator's own files: trusted input, run in the operator's
//! process with DuckDB's CSV reader, never reachable over MCP. Each CSV becomes one table named
//! after its file, with the column types DuckDB's sniffer detects (dates, timestamps, numbers,
//! text), and a table comment saying where it came from, which `list_tables` then shows the
//! agent. The file is built beside the target and renamed into place, so a failure never leaves
//! a half-written database where a reader would take it for the real one.

use std::path::{Path, PathBuf};

use duckdb::{Config, Connection};

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
pub fn csv_files(inputs: &[PathBuf]) -> Result<Vec<PathBuf>, String> {
    let mut files = Vec::new();
    for input in inputs {
        let meta = std::fs::metadata(input)
            .map_err(|e| format!("cannot read {}: {e}", input.display()))?;
        if meta.is_dir() {
            let mut found: Vec<PathBuf> = std::fs::read_dir(input)
                .map_err(|e| format!("cannot list {}: {e}", input.display()))?
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
                return Err(format!("{} holds no .csv file", input.display()));
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
pub fn import_csv(out: &Path, files: &[PathBuf]) -> Result<Vec<ImportedTable>, String> {
    if out.exists() {
        return Err(format!(
            "{} already exists; import writes a new database (choose another --out)",
            out.display()
        ));
    }
    if files.is_empty() {
        return Err("no CSV file to import".into());
    }
    let mut names: Vec<(String, &PathBuf)> = Vec::new();
    for file in files {
        let name = table_name(file);
        if let Some((_, other)) = names.iter().find(|(n, _)| *n == name) {
            return Err(format!(
                "{} and {} would both become table {name}; rename one",
                other.display(),
                file.display()
            ));
        }
        names.push((name, file));
    }
    let mut partial = out.as_os_str().to_owned();
    partial.push(".partial");
    let partial = PathBuf::from(partial);
    let _ = std::fs::remove_file(&partial);
    let written = write(&partial, &names);
    let result = written.and_then(|tables| {
        std::fs::rename(&partial, out)
            .map_err(|e| format!("could not move the database into place: {e}"))?;
        Ok(tables)
    });
    if result.is_err() {
        let _ = std::fs::remove_file(&partial);
        let mut wal = partial.into_os_string();
        wal.push(".wal");
        let _ = std::fs::remove_file(wal);
    }
    result
}

fn write(path: &Path, names: &[(String, &PathBuf)]) -> Result<Vec<ImportedTable>, String> {
    let config = Config::default()
        .with("autoinstall_known_extensions", "false")
        .and_then(|c| c.with("autoload_known_extensions", "false"))
        .map_err(|e| format!("could not configure DuckDB: {e}"))?;
    let conn = Connection::open_with_flags(path, config)
        .map_err(|e| format!("could not create {}: {e}", path.display()))?;
    let mut tables = Vec::new();
    for (name, file) in names {
        let source = std::path::absolute(file)
            .map_err(|e| format!("cannot resolve {}: {e}", file.display()))?;
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
        .map_err(|e| format!("importing {}: {e}", file.display()))?;
        let rows: i64 = conn
            .query_row(&format!("SELECT count(*) FROM {table}"), [], |r| r.get(0))
            .map_err(|e| format!("counting {name}: {e}"))?;
        tables.push(ImportedTable {
            name: name.clone(),
            source,
            rows: rows.max(0) as u64,
        });
    }
    conn.execute_batch("CHECKPOINT")
        .map_err(|e| format!("checkpoint: {e}"))?;
    conn.close()
        .map_err(|(_, e)| format!("closing the database: {e}"))?;
    Ok(tables)
}

/// Today's date in the machine's time zone, as DuckDB reads it.
fn today(conn: &Connection) -> Result<String, String> {
    conn.query_row("SELECT current_date::VARCHAR", [], |r| r.get(0))
        .map_err(|e| format!("reading today's date: {e}"))
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
            error.contains("would both become table readings"),
            "{error}"
        );
        assert!(!out.exists());
    }
}
