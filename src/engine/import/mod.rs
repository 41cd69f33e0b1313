//! `duckgate import`: a person's CGM, pump and health exports into one DuckDB file to serve.
//!
//! The operator's own tool, on the operator's own files: trusted input, run in the operator's
//! process with DuckDB, never reachable over MCP. Each file is recognised by its content
//! ([`detect`]), and the exports people have (Dexcom Clarity, LibreView, Tandem t:connect,
//! Medtronic CareLink, Nightscout, Apple Health) become one shape ([`shape`]): a table per kind
//! of record (`cgm_readings`, `insulin_boluses`, …), glucose as whole mg/dL with Low/High kept
//! so that thresholds count them, the device's local time as TIMESTAMP, comments that say so,
//! and views of the consensus CGM metrics. Names, dates of birth and serial numbers never
//! reach a table, a table name or a comment: file names are never used for the vendor formats
//! (vendors put the patient's name in them). Any other CSV is imported as DuckDB reads it, one
//! table per file.
//!
//! The database is built beside its path and renamed into place, so a failure never leaves a
//! half-written file where a reader would take it for the real one; `--append` builds on a
//! copy. One file that fails is reported and the others are still imported. docs/ARCHITECTURE.md
//! ("Import") has the conventions and why.

pub mod apple;
pub mod detect;
pub mod sections;
pub mod shape;
pub mod vendors;

use std::fmt;
use std::path::{Path, PathBuf};

use duckdb::{Config, Connection};

use super::partial_file::write_beside_then_move;
use super::{sql_identifier, sql_string};
use detect::{Detected, Format};
use shape::Kind;
use vendors::{Ctx, Unit};

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
    /// The zone of times that carry no offset of their own (Nightscout's UTC instants).
    pub time_zone: String,
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

/// Values of a file that could not be read: how many, and a few as the file wrote them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Unparsed {
    /// Rows left out because a time or value did not parse.
    pub count: u64,
    /// Up to three of them (column and value).
    pub examples: Vec<String>,
}

/// What one file became.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileImport {
    /// Its format.
    pub format: Format,
    /// Its glucose unit, when it has glucose.
    pub unit: Option<Unit>,
    /// Rows per table.
    pub loads: Vec<Load>,
    /// Values that did not parse.
    pub unparsed: Unparsed,
    /// What it holds that was left out on purpose.
    pub left_out: Vec<String>,
}

/// Why one file was not imported, and what to do about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileError {
    /// What went wrong.
    pub message: String,
    /// What to do.
    pub next_step: String,
}

/// One input file's outcome.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileStatus {
    /// Imported.
    Imported(FileImport),
    /// Not an export `import` reads.
    Skipped(&'static str),
    /// It failed; the other files were still imported.
    Failed(FileError),
}

/// One input file and its outcome.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileOutcome {
    /// The file.
    pub file: PathBuf,
    /// What happened.
    pub status: FileStatus,
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
    /// The database written.
    pub db: PathBuf,
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

/// The files `inputs` name: each file as is, and each directory's files (not recursively, not
/// hidden ones), sorted by name. Which of them are exports is decided by their content.
pub fn input_files(inputs: &[PathBuf]) -> Result<Vec<PathBuf>, ImportError> {
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
                        && !path
                            .file_name()
                            .is_some_and(|n| n.to_string_lossy().starts_with('.'))
                })
                .collect();
            found.sort();
            if found.is_empty() {
                return Err(ImportError::EmptyFolder(input.clone()));
            }
            files.extend(found);
        } else {
            files.push(input.clone());
        }
    }
    if files.is_empty() {
        return Err(ImportError::NothingToImport);
    }
    Ok(files)
}

/// The table name of a generic CSV file: its stem in lower case, every run of characters other
/// than ASCII letters, digits and `_` made one `_`, with a leading `t_` if it would start with
/// a digit (`CGM Export 2025.csv` → `cgm_export_2025`), and `csv_` before a name the vendor
/// tables use.
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
    let name = match name.chars().next() {
        None => "imported".into(),
        Some(first) if first.is_ascii_digit() => format!("t_{name}"),
        Some(_) => name,
    };
    let reserved = Kind::ALL.iter().any(|k| k.table() == name)
        || shape::METRIC_VIEW_COMMENTS.iter().any(|(v, _)| *v == name);
    if reserved {
        format!("csv_{name}")
    } else {
        name
    }
}

/// Import `files` into the database at `out`, as `options.mode` says. The output's missing
/// parent folders are created (0700: the data is health data). Each file's outcome is in the
/// report; the database is written when at least one file was imported.
pub fn import(
    out: &Path,
    files: &[PathBuf],
    options: &Options,
) -> Result<ImportReport, ImportError> {
    let exists = out.exists();
    match options.mode {
        Mode::New if exists => return Err(ImportError::Exists(out.to_path_buf())),
        Mode::Append if !exists => return Err(ImportError::NothingToAppendTo(out.to_path_buf())),
        _ => {}
    }
    if files.is_empty() {
        return Err(ImportError::NothingToImport);
    }
    if let Some(parent) = out.parent().filter(|p| !p.as_os_str().is_empty())
        && !parent.exists()
    {
        use std::os::unix::fs::DirBuilderExt;
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(parent)
            .map_err(|error| ImportError::CreateFolder {
                dir: parent.to_path_buf(),
                error,
            })?;
    }
    let scratch = sections::Scratch::new(out).map_err(|error| ImportError::CreateFolder {
        dir: out.parent().unwrap_or(Path::new(".")).to_path_buf(),
        error,
    })?;
    write_beside_then_move(
        out,
        |partial| {
            if options.mode == Mode::Append {
                copy_database(out, partial)?;
            }
            let (files, tables) = build(partial, files, options, &scratch)?;
            // The old database's WAL, if it left one, belongs to the file being replaced (an
            // append took it in with the copy): DuckDB would replay it onto the new one.
            let wal = crate::engine::wal_path(out);
            if wal.exists() {
                std::fs::remove_file(&wal).map_err(ImportError::MoveIntoPlace)?;
            }
            Ok(ImportReport {
                db: out.to_path_buf(),
                files,
                tables,
            })
        },
        ImportError::MoveIntoPlace,
    )
}

/// `--append` works on a copy, so the database in place stays whole until the new one is.
fn copy_database(from: &Path, to: &Path) -> Result<(), ImportError> {
    let copy = |a: &Path, b: &Path| {
        std::fs::copy(a, b).map_err(|error| ImportError::Read {
            path: a.to_path_buf(),
            error,
        })
    };
    copy(from, to)?;
    let wal = crate::engine::wal_path(from);
    if wal.exists() {
        copy(&wal, &crate::engine::wal_path(to))?;
    }
    Ok(())
}

fn build(
    path: &Path,
    files: &[PathBuf],
    options: &Options,
    scratch: &sections::Scratch,
) -> Result<(Vec<FileOutcome>, Vec<TableSummary>), ImportError> {
    let config = Config::default()
        .with("autoinstall_known_extensions", "false")
        .and_then(|c| c.with("autoload_known_extensions", "false"))
        .map_err(ImportError::Configure)?;
    let conn = Connection::open_with_flags(path, config).map_err(|error| ImportError::Create {
        path: path.to_path_buf(),
        error,
    })?;
    let setup = || -> duckdb::Result<()> {
        // Text times with an offset convert to the same instant whatever this machine's zone.
        conn.execute_batch("SET TimeZone = 'UTC';")?;
        conn.execute_batch(vendors::MACROS)?;
        for kind in Kind::ALL {
            conn.execute_batch(&shape::create_table(kind))?;
        }
        Ok(())
    };
    setup().map_err(ImportError::Prepare)?;
    let ctx = Ctx {
        conn: &conn,
        scratch,
        time_zone: &options.time_zone,
        made: std::cell::Cell::new(0),
    };
    let mut outcomes = Vec::new();
    for file in files {
        let status = match detect::detect(file) {
            Err(e) => FileStatus::Failed(FileError {
                message: format!("cannot read it: {e}"),
                next_step: "check the path and that the file is readable".into(),
            }),
            Ok(Detected::Skip(why)) => FileStatus::Skipped(why),
            Ok(Detected::Format(format)) => in_transaction(&conn, || match format {
                Format::GenericCsv => generic_csv(&conn, file),
                _ => vendor_file(&ctx, format, file),
            }),
        };
        outcomes.push(FileOutcome {
            file: file.clone(),
            status,
        });
    }
    if !outcomes
        .iter()
        .any(|o| matches!(o.status, FileStatus::Imported(_)))
    {
        return Err(ImportError::NothingImported(outcomes));
    }
    finish(&conn).map_err(ImportError::Finish)?;
    let tables = summarise(&conn).map_err(ImportError::Finish)?;
    conn.execute_batch("CHECKPOINT")
        .map_err(ImportError::Finish)?;
    conn.close().map_err(|(_, e)| ImportError::Close(e))?;
    Ok((outcomes, tables))
}

/// One file's import as one transaction: a file that fails leaves nothing behind.
fn in_transaction(
    conn: &Connection,
    work: impl FnOnce() -> Result<FileImport, String>,
) -> FileStatus {
    if let Err(e) = conn.execute_batch("BEGIN TRANSACTION") {
        return FileStatus::Failed(file_error(format!("starting its transaction: {e}")));
    }
    match work() {
        Ok(done) => match conn.execute_batch("COMMIT") {
            Ok(()) => FileStatus::Imported(done),
            Err(e) => {
                let _ = conn.execute_batch("ROLLBACK");
                FileStatus::Failed(file_error(format!("committing it: {e}")))
            }
        },
        Err(message) => {
            let _ = conn.execute_batch("ROLLBACK");
            FileStatus::Failed(file_error(message))
        }
    }
}

fn file_error(message: String) -> FileError {
    FileError {
        message,
        next_step: "check that it is the export as the vendor's site wrote it (not opened and \
                    saved again by a spreadsheet); the other files were imported"
            .into(),
    }
}

/// A vendor export: its plan's stages, grouped by table, then added without the rows the table
/// holds already.
fn vendor_file(ctx: &Ctx<'_>, format: Format, file: &Path) -> Result<FileImport, String> {
    let plan = vendors::plan(ctx, format, file)?;
    let conn = ctx.conn;
    let mut loads = Vec::new();
    let mut unparsed = Unparsed::default();
    for kind in Kind::ALL {
        let selects: Vec<&str> = plan
            .stages
            .iter()
            .filter(|s| s.kind == kind)
            .map(|s| s.select.as_str())
            .collect();
        if selects.is_empty() {
            continue;
        }
        let table = kind.table();
        conn.execute_batch(&format!(
            "CREATE OR REPLACE TEMP TABLE dg_staged AS {}",
            selects.join(" UNION ALL BY NAME ")
        ))
        .map_err(|e| format!("reading its {table}: {e}"))?;
        let bad: i64 = conn
            .query_row(
                "SELECT count(*) FROM dg_staged WHERE problem IS NOT NULL",
                [],
                |row| row.get(0),
            )
            .map_err(|e| format!("counting what did not parse: {e}"))?;
        let examples: Vec<String> = conn
            .prepare(
                "SELECT DISTINCT problem FROM dg_staged WHERE problem IS NOT NULL \
                 ORDER BY problem LIMIT 3",
            )
            .and_then(|mut statement| {
                statement
                    .query_map([], |row| row.get(0))?
                    .collect::<Result<Vec<String>, _>>()
            })
            .map_err(|e| format!("reading what did not parse: {e}"))?;
        unparsed.count += bad as u64;
        for example in &examples {
            if unparsed.examples.len() < 3 {
                unparsed.examples.push(example.clone());
            }
        }
        let staged: i64 = conn
            .query_row(
                "SELECT count(*) FROM dg_staged WHERE problem IS NULL",
                [],
                |r| r.get(0),
            )
            .map_err(|e| format!("counting its rows: {e}"))?;
        // A repeated (device, time) is kept as often as the file has it (the hour a DST change
        // repeats holds two readings at each local time), and an append adds only the
        // occurrences the table lacks.
        let added = conn
            .execute(
                &format!(
                    "INSERT INTO {table} BY NAME \
                     SELECT n.* EXCLUDE (problem, occurrence) FROM \
                       (SELECT *, row_number() OVER (PARTITION BY source, device, ts) AS occurrence \
                        FROM dg_staged WHERE problem IS NULL) n \
                     ANTI JOIN \
                       (SELECT source, device, ts, \
                               row_number() OVER (PARTITION BY source, device, ts) AS occurrence \
                        FROM {table}) o \
                     ON n.source = o.source AND n.device = o.device AND n.ts = o.ts \
                        AND n.occurrence = o.occurrence"
                ),
                [],
            )
            .map_err(|e| format!("adding its rows to {table}: {e}"))?;
        if staged > 0 || bad > 0 {
            loads.push(Load {
                table: table.to_string(),
                added: added as u64,
                already_there: (staged as u64).saturating_sub(added as u64),
                unparsed: Unparsed {
                    count: bad as u64,
                    examples,
                },
            });
        }
    }
    let mut drops: Vec<String> = plan
        .raw_tables
        .iter()
        .map(|t| format!("DROP TABLE IF EXISTS {t};"))
        .collect();
    drops.push("DROP TABLE IF EXISTS dg_staged;".into());
    conn.execute_batch(&drops.concat())
        .map_err(|e| format!("cleaning up: {e}"))?;
    if loads.is_empty() {
        return Err(format!("it is a {}, but holds no records", format.label()));
    }
    Ok(FileImport {
        format,
        unit: plan.unit,
        loads,
        unparsed,
        left_out: plan.left_out,
    })
}

/// Any other CSV: one table named after its file, with the types DuckDB's sniffer detects. A
/// table of that name is replaced (a newer export of the same file).
fn generic_csv(conn: &Connection, file: &Path) -> Result<FileImport, String> {
    let name = table_name(file);
    let source = std::path::absolute(file).map_err(|e| format!("cannot resolve it: {e}"))?;
    let table = sql_identifier(&name);
    let existed: bool = conn
        .query_row(
            "SELECT count(*) > 0 FROM duckdb_tables() WHERE database_name = current_database() \
             AND schema_name = 'main' AND table_name = ?",
            [&name],
            |r| r.get(0),
        )
        .map_err(|e| format!("looking for table {name}: {e}"))?;
    conn.execute_batch(&format!(
        "CREATE OR REPLACE TABLE {table} AS SELECT * FROM read_csv({}, auto_detect = true);
         COMMENT ON TABLE {table} IS {};",
        sql_string(&source.to_string_lossy()),
        sql_string(
            "Imported by duckgate import from a CSV file it does not know as a vendor export: \
             its columns as DuckDB's CSV reader typed them."
        )
    ))
    .map_err(|e| vendors::csv_error(&e.to_string(), None))?;
    let rows: i64 = conn
        .query_row(&format!("SELECT count(*) FROM {table}"), [], |r| r.get(0))
        .map_err(|e| format!("counting {name}: {e}"))?;
    let mut left_out = Vec::new();
    if existed {
        left_out.push(format!("the earlier contents of table {name} (replaced)"));
    }
    Ok(FileImport {
        format: Format::GenericCsv,
        unit: None,
        loads: vec![Load {
            table: name,
            added: rows.max(0) as u64,
            already_there: 0,
            unparsed: Unparsed::default(),
        }],
        unparsed: Unparsed::default(),
        left_out,
    })
}

/// After the files: drop the kind tables nothing went into, write the comments from what the
/// tables hold, and (re)create the metric views.
fn finish(conn: &Connection) -> duckdb::Result<()> {
    for kind in Kind::ALL {
        let table = kind.table();
        let rows: i64 =
            conn.query_row(&format!("SELECT count(*) FROM {table}"), [], |r| r.get(0))?;
        if rows == 0 {
            conn.execute_batch(&format!("DROP TABLE {table}"))?;
            continue;
        }
        let sources: String = conn.query_row(
            &format!(
                "SELECT string_agg(s, '; ' ORDER BY s) FROM ( \
                   SELECT source || ' (' || string_agg(DISTINCT device, ', ' ORDER BY device) || '), ' \
                          || strftime(min(ts), '%Y-%m-%d') || ' to ' || strftime(max(ts), '%Y-%m-%d') AS s \
                   FROM {table} GROUP BY source)"
            ),
            [],
            |r| r.get(0),
        )?;
        let mut sql = format!(
            "COMMENT ON TABLE {table} IS {};\n",
            sql_string(&format!(
                "{} From {sources}. Times are the device's local wall-clock time (TIMESTAMP, no \
                 zone). Imported by duckgate import.",
                kind.description()
            ))
        );
        let mut columns: Vec<(&str, &str)> = vec![("ts", shape::TS_COMMENT)];
        columns.extend(kind.columns().iter().map(|(n, _, c)| (*n, *c)));
        columns.push(("device", shape::DEVICE_COMMENT));
        columns.push(("source", shape::SOURCE_COMMENT));
        for (column, comment) in columns {
            sql.push_str(&format!(
                "COMMENT ON COLUMN {table}.{column} IS {};\n",
                sql_string(comment)
            ));
        }
        conn.execute_batch(&sql)?;
    }
    let has_cgm: bool = conn.query_row(
        "SELECT count(*) > 0 FROM duckdb_tables() WHERE database_name = current_database() \
         AND schema_name = 'main' AND table_name = 'cgm_readings'",
        [],
        |r| r.get(0),
    )?;
    if has_cgm {
        conn.execute_batch(shape::METRIC_VIEWS)?;
        let mut sql = String::new();
        for (view, comment) in shape::METRIC_VIEW_COMMENTS {
            sql.push_str(&format!(
                "COMMENT ON VIEW {view} IS {};\n",
                sql_string(comment)
            ));
            for (column, comment) in shape::METRIC_COLUMNS {
                sql.push_str(&format!(
                    "COMMENT ON COLUMN {view}.{column} IS {};\n",
                    sql_string(comment)
                ));
            }
        }
        conn.execute_batch(&sql)?;
    }
    Ok(())
}

/// The database's tables and views: rows, first and last time, columns and types.
fn summarise(conn: &Connection) -> duckdb::Result<Vec<TableSummary>> {
    let mut statement = conn.prepare(
        "SELECT table_name, false FROM duckdb_tables() \
         WHERE database_name = current_database() AND schema_name = 'main' AND NOT internal \
         UNION ALL \
         SELECT view_name, true FROM duckdb_views() \
         WHERE database_name = current_database() AND schema_name = 'main' AND NOT internal \
         ORDER BY 2, 1",
    )?;
    let names: Vec<(String, bool)> = statement
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<Result<_, _>>()?;
    let mut tables = Vec::new();
    for (name, view) in names {
        let mut statement = conn.prepare(
            "SELECT column_name, data_type FROM duckdb_columns() \
             WHERE database_name = current_database() AND schema_name = 'main' \
             AND table_name = ? ORDER BY column_index",
        )?;
        let columns: Vec<(String, String)> = statement
            .query_map([&name], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<Result<_, _>>()?;
        let quoted = sql_identifier(&name);
        let (rows, range) = if view {
            (0, None)
        } else if columns.iter().any(|(c, t)| c == "ts" && t == "TIMESTAMP") {
            conn.query_row(
                &format!(
                    "SELECT count(*), strftime(min(ts), '%Y-%m-%d %H:%M'), \
                     strftime(max(ts), '%Y-%m-%d %H:%M') FROM {quoted}"
                ),
                [],
                |r| {
                    let first: Option<String> = r.get(1)?;
                    let last: Option<String> = r.get(2)?;
                    Ok((r.get::<_, i64>(0)? as u64, first.zip(last)))
                },
            )?
        } else {
            let rows: i64 =
                conn.query_row(&format!("SELECT count(*) FROM {quoted}"), [], |r| r.get(0))?;
            (rows as u64, None)
        };
        tables.push(TableSummary {
            name,
            view,
            rows,
            range,
            columns,
        });
    }
    Ok(tables)
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
    /// An input directory holds no file.
    EmptyFolder(PathBuf),
    /// The output exists already, and neither `--replace` nor `--append` was given.
    Exists(PathBuf),
    /// `--append` to a database that does not exist.
    NothingToAppendTo(PathBuf),
    /// No file was given.
    NothingToImport,
    /// The output's folder could not be created.
    CreateFolder {
        /// The folder.
        dir: PathBuf,
        /// Why.
        error: std::io::Error,
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
    /// Creating the tables and macros failed.
    Prepare(duckdb::Error),
    /// No file could be imported: each one's outcome.
    NothingImported(Vec<FileOutcome>),
    /// Writing the comments, views or summary failed.
    Finish(duckdb::Error),
    /// Closing the database failed.
    Close(duckdb::Error),
    /// Renaming the built file into place failed.
    MoveIntoPlace(std::io::Error),
}

impl ImportError {
    /// What the operator can do about it.
    pub fn next_step(&self) -> &'static str {
        match self {
            ImportError::Read { .. } | ImportError::List { .. } => {
                "check the path, and that the file or folder is readable"
            }
            ImportError::EmptyFolder(_) => {
                "put the exports downloaded from the vendors' sites in that folder, or name the files"
            }
            ImportError::Exists(_) => {
                "add --append to add a newer export's records to it, --replace to rebuild it from \
                 these files, or choose another --out"
            }
            ImportError::NothingToAppendTo(_) => {
                "leave out --append to create it, or give the path of the existing database"
            }
            ImportError::NothingToImport => "name export files, or a folder of them",
            ImportError::CreateFolder { .. } => {
                "create the folder yourself, or choose an --out in a folder you can write"
            }
            ImportError::NothingImported(_) => {
                "see each file's reason above; the database was not written"
            }
            ImportError::Configure(_)
            | ImportError::Create { .. }
            | ImportError::Prepare(_)
            | ImportError::Finish(_)
            | ImportError::Close(_)
            | ImportError::MoveIntoPlace(_) => {
                "check that the output folder is writable and has free space, then run the import again"
            }
        }
    }
}

impl fmt::Display for ImportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ImportError::Read { path, error } => {
                write!(f, "cannot read {}: {error}", path.display())
            }
            ImportError::List { dir, error } => write!(f, "cannot list {}: {error}", dir.display()),
            ImportError::EmptyFolder(dir) => write!(f, "{} holds no file", dir.display()),
            ImportError::Exists(out) => write!(f, "{} already exists", out.display()),
            ImportError::NothingToAppendTo(out) => {
                write!(f, "--append: {} does not exist", out.display())
            }
            ImportError::NothingToImport => f.write_str("no file to import"),
            ImportError::CreateFolder { dir, error } => {
                write!(f, "could not create the folder {}: {error}", dir.display())
            }
            ImportError::Configure(e) => write!(f, "could not configure DuckDB: {e}"),
            ImportError::Create { path, error } => {
                write!(f, "could not create {}: {error}", path.display())
            }
            ImportError::Prepare(e) => write!(f, "could not create the tables: {e}"),
            ImportError::NothingImported(files) => {
                write!(f, "none of the {} files could be imported", files.len())
            }
            ImportError::Finish(e) => write!(f, "writing the comments and views: {e}"),
            ImportError::Close(e) => write!(f, "closing the database: {e}"),
            ImportError::MoveIntoPlace(e) => {
                write!(f, "could not move the database into place: {e}")
            }
        }
    }
}

impl std::error::Error for ImportError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generic_table_names_come_from_file_names_as_plain_identifiers() {
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
        assert_eq!(
            table_name(Path::new("cgm_readings.csv")),
            "csv_cgm_readings"
        );
    }
}
