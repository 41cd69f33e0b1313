//! One import, file by file: each in a transaction of its own, into a database built beside its
//! path (a copy, for `--append`) and moved into place at the end.

use std::io::Read;
use std::path::Path;

use duckdb::{Config, Connection};

use super::detect::{Detected, detect};
use super::error::{ErrorKind, ImportError};
use super::files::{Input, special_error};
use super::vendor::HEAD_BYTES;
use super::{
    FileImport, FileOutcome, FileStatus, ImportReport, Mode, Options, Source, generic, store,
};
use crate::partial_file::write_beside_then_move;
use crate::protocol::databases::wal_path;

/// Import `files` into the database at `out`, as `options.mode` says. The output's missing
/// parent folders are created (0700: the data is health data). Each file's outcome is in the
/// report; the database is written when at least one file was imported.
pub fn import(out: &Path, files: &[Input], options: &Options) -> Result<ImportReport, ImportError> {
    let exists = out.exists();
    let shown = || super::text::shown(&out.display().to_string()).into_owned();
    match options.mode {
        Mode::New if exists => {
            return Err(ImportError::new(
                ErrorKind::OutputExists,
                format!("{} already exists", shown()),
            ));
        }
        Mode::Append if !exists => {
            return Err(ImportError::new(
                ErrorKind::NothingToAppendTo,
                format!("--append: {} does not exist", shown()),
            ));
        }
        Mode::New | Mode::Append | Mode::Replace => {}
    }
    if files.is_empty() {
        return Err(ImportError::new(ErrorKind::NoInput, "no file to import"));
    }
    if let Some(table) = &options.table {
        if !generic::is_plain_name(table) || generic::reserved(table) {
            return Err(ImportError::new(
                ErrorKind::TableName,
                format!(
                    "--table {}: not a plain table name",
                    super::text::shown(table)
                ),
            ));
        }
        if files.len() != 1 {
            return Err(ImportError::new(
                ErrorKind::TableName,
                "--table names the table of one CSV file, and several files were given",
            ));
        }
    }
    if let Some(parent) = out.parent().filter(|p| !p.as_os_str().is_empty())
        && !parent.exists()
    {
        use std::os::unix::fs::DirBuilderExt;
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(parent)
            .map_err(|error| {
                ImportError::new(
                    ErrorKind::OutputFolder,
                    format!(
                        "could not create the folder {}: {error}",
                        super::text::shown(&parent.display().to_string())
                    ),
                )
            })?;
    }
    let mut report = ImportReport {
        db: out.to_path_buf(),
        written: false,
        files: Vec::new(),
        tables: Vec::new(),
    };
    let mut nothing_imported = false;
    let moved = write_beside_then_move(
        out,
        |partial| {
            if options.mode == Mode::Append {
                copy_database(out, partial)?;
            }
            let (outcomes, tables) = build(partial, files, options)?;
            report.files = outcomes;
            let Some(tables) = tables else {
                nothing_imported = true;
                return Err(ImportError::new(
                    ErrorKind::NoRecords,
                    "nothing was imported",
                ));
            };
            report.tables = tables;
            // The old database's WAL, if it left one, belongs to the file being replaced (an
            // append took it in with the copy): DuckDB would replay it onto the new one.
            let wal = wal_path(out);
            if wal.exists() {
                std::fs::remove_file(&wal).map_err(move_failed)?;
            }
            Ok(())
        },
        move_failed,
    );
    match moved {
        Ok(()) => {
            report.written = true;
            Ok(report)
        }
        // Nothing could be imported: the report says why for each file, and nothing changed.
        Err(_) if nothing_imported => Ok(report),
        Err(e) => Err(e),
    }
}

fn move_failed(error: std::io::Error) -> ImportError {
    ImportError::new(
        ErrorKind::MoveIntoPlace,
        format!("could not move the database into place: {error}"),
    )
}

/// `--append` works on a copy, so the database in place stays whole until the new one is.
fn copy_database(from: &Path, to: &Path) -> Result<(), ImportError> {
    let copy = |a: &Path, b: &Path| {
        std::fs::copy(a, b).map_err(|error| {
            ImportError::new(
                ErrorKind::Database,
                format!(
                    "could not copy {}: {error}",
                    super::text::shown(&a.display().to_string())
                ),
            )
        })
    };
    copy(from, to)?;
    let wal = wal_path(from);
    if wal.exists() {
        copy(&wal, &wal_path(to))?;
    }
    Ok(())
}

type Built = (Vec<FileOutcome>, Option<Vec<super::TableSummary>>);

/// Each file into the database at `path`; the tables afterwards, or `None` when no file could
/// be imported (then the caller leaves everything as it was).
fn build(path: &Path, files: &[Input], options: &Options) -> Result<Built, ImportError> {
    let database = |e: duckdb::Error| ImportError::new(ErrorKind::Database, e.to_string());
    let config = Config::default()
        .with("autoinstall_known_extensions", "false")
        .and_then(|c| c.with("autoload_known_extensions", "false"))
        .map_err(database)?;
    let conn = Connection::open_with_flags(path, config).map_err(database)?;
    // Instants convert to the same local time whatever this machine's zone.
    conn.execute_batch("SET TimeZone = 'UTC';")
        .map_err(database)?;
    store::check_zone(&conn, &options.time_zone)?;
    store::create_tables(&conn)?;
    let mut outcomes = Vec::new();
    let mut generic_tables: Vec<String> = Vec::new();
    for input in files {
        let status = match input.refused {
            Some(refused) if input.found_in_folder() => FileStatus::Skipped(refused.reason()),
            Some(super::files::Refused::Special(what)) => FileStatus::Failed(special_error(what)),
            Some(refused) => FileStatus::Skipped(refused.reason()),
            None => one_file(&conn, input, options, &mut generic_tables),
        };
        outcomes.push(FileOutcome {
            file: input.path.clone(),
            status,
        });
    }
    if !outcomes
        .iter()
        .any(|o| matches!(o.status, FileStatus::Imported(_)))
    {
        return Ok((outcomes, None));
    }
    store::finish(&conn, &options.time_zone)?;
    let tables = store::summarise(&conn)?;
    conn.execute_batch("CHECKPOINT").map_err(database)?;
    conn.close().map_err(|(_, e)| database(e))?;
    Ok((outcomes, Some(tables)))
}

/// One file: recognised, read, and written in a transaction of its own.
fn one_file(
    conn: &Connection,
    input: &Input,
    options: &Options,
    generic_tables: &mut Vec<String>,
) -> FileStatus {
    let mut file = match input.open() {
        Ok(file) => file,
        Err(e) => return FileStatus::Failed(e),
    };
    let mut head = Vec::with_capacity(HEAD_BYTES);
    if let Err(e) = (&mut file).take(HEAD_BYTES as u64).read_to_end(&mut head) {
        return FileStatus::Failed(ImportError::unreadable(e));
    }
    let extension = input
        .path
        .extension()
        .map(|e| e.to_string_lossy().into_owned())
        .unwrap_or_default();
    let (detected, words) = detect(&head, &extension);
    // With `--table`, the one file given is imported as a plain table, however it looks.
    let detected = match (detected, &options.table) {
        (Detected::HealthLike, Some(_)) => Detected::Generic,
        (detected, _) => detected,
    };
    match detected {
        Detected::Skip(why) => FileStatus::Skipped(why.to_string()),
        Detected::HealthLike => FileStatus::Failed(ImportError::new(
            ErrorKind::UnrecognisedHealthExport,
            format!(
                "it looks like a CGM, pump or health export (it names {}), but not one duckgate \
                 import knows; nothing of it was imported",
                words
                    .iter()
                    .map(|w| format!("\"{w}\""))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        )),
        Detected::Vendor(vendor) => in_transaction(conn, || {
            let mut whole = head.as_slice().chain(&mut file);
            let parsed = vendor.read(&mut whole)?;
            let (loads, mut notes) =
                store::load(conn, &parsed, vendor.label(), &options.time_zone)?;
            notes.extend(parsed.notes.iter().cloned());
            Ok(FileImport {
                source: Source::Vendor(vendor.label()),
                unit: parsed.unit,
                unparsed: store::total_unparsed(&parsed),
                loads,
                left_out: parsed.left_out.clone(),
                notes,
            })
        }),
        Detected::Generic => in_transaction(conn, || {
            let done = generic::import(
                conn,
                &file,
                options.table.as_deref(),
                generic_tables,
                options.keep_identifiers,
            )?;
            generic_tables.extend(done.loads.iter().map(|l| l.table.clone()));
            Ok(done)
        }),
    }
}

/// One file's import as one transaction: a file that fails leaves nothing behind.
fn in_transaction(
    conn: &Connection,
    work: impl FnOnce() -> Result<FileImport, ImportError>,
) -> FileStatus {
    let failed = |what: &str, e: duckdb::Error| {
        FileStatus::Failed(ImportError::new(
            ErrorKind::Database,
            format!("{what}: {e}"),
        ))
    };
    if let Err(e) = conn.execute_batch("BEGIN TRANSACTION") {
        return failed("starting its transaction", e);
    }
    match work() {
        Ok(done) => match conn.execute_batch("COMMIT") {
            Ok(()) => FileStatus::Imported(done),
            Err(e) => {
                let _ = conn.execute_batch("ROLLBACK");
                failed("committing it", e)
            }
        },
        Err(error) => {
            let _ = conn.execute_batch("ROLLBACK");
            FileStatus::Failed(error)
        }
    }
}
