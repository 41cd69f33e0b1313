//! `duckgate import`: the operator's exports into a database to serve, and a summary of what
//! each file became, what each table holds, and how to point Claude at it.

use std::path::PathBuf;
use std::process::ExitCode;

use duckgate::engine::import::detect::Format;
use duckgate::engine::import::{
    FileOutcome, FileStatus, ImportError, ImportReport, Mode, Options, TableSummary, Unparsed,
};

use super::out;
use super::start::usage_error;

/// `duckgate import`: exit 0 when every file was imported or skipped as not an export, 1 when
/// any failed (the others are in the database) or none could be, 2 for a usage error.
pub(super) fn import(
    out_path: PathBuf,
    mode: Mode,
    time_zone: Option<String>,
    inputs: Vec<PathBuf>,
) -> ExitCode {
    let files = match duckgate::engine::import::input_files(&inputs) {
        Ok(files) => files,
        Err(e) => return usage_error(&format!("{e}; {}", e.next_step())),
    };
    let out_path = std::path::absolute(&out_path).unwrap_or(out_path);
    let options = Options {
        mode,
        time_zone: time_zone.unwrap_or_else(duckgate::time_zone::local),
    };
    match duckgate::engine::import::import(&out_path, &files, &options) {
        Ok(report) => {
            out::text(&summary(&report, mode));
            if report.any_failed() {
                tracing::error!(
                    "some files could not be imported (see above); the others are in {}",
                    report.db.display()
                );
                ExitCode::from(1)
            } else {
                ExitCode::SUCCESS
            }
        }
        Err(e @ ImportError::NothingImported(_)) => {
            if let ImportError::NothingImported(files) = &e {
                let mut text = String::from("Nothing was imported:\n");
                for file in files {
                    text.push_str(&file_lines(file));
                }
                out::text(text.trim_end());
            }
            tracing::error!("{e}; {}", e.next_step());
            ExitCode::from(1)
        }
        Err(e @ (ImportError::Exists(_) | ImportError::NothingToAppendTo(_))) => {
            usage_error(&format!("{e}; {}", e.next_step()))
        }
        Err(e) => {
            tracing::error!("import failed: {e}; {}", e.next_step());
            ExitCode::from(1)
        }
    }
}

/// The whole summary: the files, the tables, the next step.
fn summary(report: &ImportReport, mode: Mode) -> String {
    let verb = match mode {
        Mode::New => "Wrote",
        Mode::Replace => "Rebuilt",
        Mode::Append => "Added to",
    };
    let mut text = format!("{verb} {}\n\nFiles:\n", report.db.display());
    for file in &report.files {
        text.push_str(&file_lines(file));
    }
    text.push_str("\nTables:\n");
    for table in report.tables.iter().filter(|t| !t.view) {
        text.push_str(&table_lines(table, report));
    }
    let views: Vec<&str> = report
        .tables
        .iter()
        .filter(|t| t.view)
        .map(|t| t.name.as_str())
        .collect();
    if !views.is_empty() {
        text.push_str(&format!(
            "\nViews: {} (the consensus CGM metrics: time below, in and above range, mean, GMI, CV, \
             sensor wear)\n",
            views.join(", ")
        ));
    }
    let exe = std::env::current_exe().unwrap_or_else(|_| PathBuf::from("duckgate"));
    let wsl = duckgate::mcp::demo::wsl_distribution();
    text.push_str(&duckgate::mcp::demo::next_steps(
        &exe,
        &report.db,
        wsl.as_deref(),
    ));
    text.trim_end().to_string()
}

/// A file's lines: its format and what each table got, what did not parse, what was left out.
fn file_lines(file: &FileOutcome) -> String {
    let name = file
        .file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| file.file.display().to_string());
    match &file.status {
        FileStatus::Skipped(why) => format!("  {name}: skipped ({why})\n"),
        FileStatus::Failed(e) => {
            format!(
                "  {name}: FAILED: {}\n    next: {}\n",
                e.message, e.next_step
            )
        }
        FileStatus::Imported(done) => {
            let unit = done
                .unit
                .map(|u| format!(", glucose in {}", u.label()))
                .unwrap_or_default();
            let mut text = format!("  {name}: {}{unit}\n", done.format.label());
            let loads: Vec<String> = done
                .loads
                .iter()
                .map(|l| {
                    if l.already_there > 0 {
                        format!(
                            "{} +{} ({} already there)",
                            l.table, l.added, l.already_there
                        )
                    } else {
                        format!("{} +{}", l.table, l.added)
                    }
                })
                .collect();
            text.push_str(&format!("    {}\n", loads.join(", ")));
            if done.format == Format::GenericCsv {
                text.push_str(
                    "    not a vendor export: its columns as DuckDB's CSV reader typed them (a \
                     column with any non-number in it is text)\n",
                );
            } else {
                text.push_str(&format!("    {}\n", unparsed_line(&done.unparsed)));
            }
            for left_out in &done.left_out {
                text.push_str(&format!("    left out: {left_out}\n"));
            }
            text
        }
    }
}

/// "every value parsed", or how many rows were left out for a value that did not parse, with
/// a few of those values as the export wrote them.
fn unparsed_line(unparsed: &Unparsed) -> String {
    if unparsed.count == 0 {
        "every value parsed".into()
    } else {
        format!(
            "could not parse {} (left out), e.g. {}",
            count(unparsed.count, "row"),
            unparsed.examples.join("; ")
        )
    }
}

/// `n` and `noun`, plural when `n` is not 1.
fn count(n: u64, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// A table's lines: rows, time range, columns with types, and, for a table this import added
/// to, what of its files' rows did not parse.
fn table_lines(table: &TableSummary, report: &ImportReport) -> String {
    let range = table
        .range
        .as_ref()
        .map(|(first, last)| format!(", {first} to {last}"))
        .unwrap_or_default();
    let columns: Vec<String> = table
        .columns
        .iter()
        .map(|(name, kind)| format!("{name} {kind}"))
        .collect();
    let mut text = format!(
        "  {} ({}{range})\n    {}\n",
        table.name,
        count(table.rows, "row"),
        columns.join(", ")
    );
    let mut loaded = false;
    let mut unparsed = Unparsed::default();
    for file in &report.files {
        let FileStatus::Imported(done) = &file.status else {
            continue;
        };
        if done.format == Format::GenericCsv {
            continue;
        }
        for load in done.loads.iter().filter(|l| l.table == table.name) {
            loaded = true;
            unparsed.count += load.unparsed.count;
            for example in &load.unparsed.examples {
                if unparsed.examples.len() < 3 {
                    unparsed.examples.push(example.clone());
                }
            }
        }
    }
    if loaded {
        text.push_str(&format!("    {}\n", unparsed_line(&unparsed)));
    }
    text
}
