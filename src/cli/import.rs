//! `duckgate import`: the operator's exports into a database to serve, and a summary of what
//! each file became, what each table holds, and how to point Claude at it.
//!
//! Every text of the summary that came from a file or a file's name (names, values that did not
//! parse, a generic CSV's columns, DuckDB's words about a file) is shown with its control
//! characters escaped (`import::text::shown`), and every line is escaped again on its way out,
//! so no file can move the cursor, recolour or rewrite the operator's terminal.

use std::path::PathBuf;
use std::process::ExitCode;

use duckgate::import::text::shown;
use duckgate::import::{
    FileOutcome, FileStatus, ImportReport, Mode, Options, Source, TableSummary, Unparsed,
};

use super::out;

/// `duckgate import`: exit 0 when every file was imported or skipped as not an export, 1 when
/// any failed (the others are in the database) or none could be, 2 for a usage error.
pub(super) fn import(out_path: PathBuf, options: Options, inputs: Vec<PathBuf>) -> ExitCode {
    let usage = |e: &duckgate::import::ImportError| {
        tracing::error!("{}; {}", shown(e.message()), e.next_step());
        ExitCode::from(2)
    };
    let files = match duckgate::import::input_files(&inputs) {
        Ok(files) => files,
        Err(e) => return usage(&e),
    };
    let out_path = std::path::absolute(&out_path).unwrap_or(out_path);
    match duckgate::import::import(&out_path, &files, &options) {
        Ok(report) if !report.written => {
            let mut text = String::from("Nothing was imported:\n");
            for file in &report.files {
                text.push_str(&file_lines(file));
            }
            print(text.trim_end());
            tracing::error!("no file could be imported; the database was not written");
            ExitCode::from(1)
        }
        Ok(report) => {
            print(&summary(&report, options.mode));
            if report.any_failed() {
                tracing::error!(
                    "some files could not be imported (see above); the others are in {}",
                    shown(&report.db.display().to_string())
                );
                ExitCode::from(1)
            } else {
                ExitCode::SUCCESS
            }
        }
        Err(e) if e.kind().is_usage() => usage(&e),
        Err(e) => {
            tracing::error!("import failed: {}; {}", shown(e.message()), e.next_step());
            ExitCode::from(1)
        }
    }
}

/// Print `text`, each line with any control character left in it escaped.
fn print(text: &str) {
    let lines: Vec<String> = text.lines().map(|l| shown(l).into_owned()).collect();
    out::text(&lines.join("\n"));
}

/// The whole summary: the files, the tables, the next step.
fn summary(report: &ImportReport, mode: Mode) -> String {
    let verb = match mode {
        Mode::New => "Wrote",
        Mode::Replace => "Rebuilt",
        Mode::Append => "Added to",
    };
    let mut text = format!(
        "{verb} {}\n\nFiles:\n",
        shown(&report.db.display().to_string())
    );
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
    let host = duckgate::mcp::next_steps::detect_host(&report.db);
    text.push_str(&duckgate::mcp::next_steps::next_steps(
        &exe, &report.db, &host,
    ));
    text.trim_end().to_string()
}

/// A file's lines: its format and what each table got, what did not parse, what was left out.
fn file_lines(file: &FileOutcome) -> String {
    let name = file.shown_name();
    match &file.status {
        FileStatus::Skipped(why) => format!("  {name}: skipped ({})\n", shown(why)),
        FileStatus::Failed(e) => {
            format!(
                "  {name}: FAILED: {}\n    next: {}\n",
                shown(e.message()),
                e.next_step()
            )
        }
        FileStatus::Imported(done) => {
            let unit = done
                .unit
                .map(|u| format!(", glucose in {}", u.label()))
                .unwrap_or_default();
            let mut text = format!("  {name}: {}{unit}\n", done.source.label());
            let loads: Vec<String> = done
                .loads
                .iter()
                .map(|l| {
                    let table = shown(&l.table);
                    if l.already_there > 0 {
                        format!("{table} +{} ({} already there)", l.added, l.already_there)
                    } else {
                        format!("{table} +{}", l.added)
                    }
                })
                .collect();
            text.push_str(&format!("    {}\n", loads.join(", ")));
            if done.source == Source::Generic {
                text.push_str(
                    "    not a vendor export: its columns as DuckDB's CSV reader typed them (a \
                     column with any non-number in it is text)\n",
                );
            } else {
                text.push_str(&format!("    {}\n", unparsed_line(&done.unparsed)));
            }
            for note in &done.notes {
                text.push_str(&format!("    {}\n", shown(note)));
            }
            for left_out in &done.left_out {
                text.push_str(&format!("    left out: {}\n", shown(left_out)));
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
        let examples: Vec<String> = unparsed
            .examples
            .iter()
            .map(|e| shown(e).into_owned())
            .collect();
        format!(
            "could not parse {} (left out), e.g. {}",
            count(unparsed.count, "row"),
            examples.join("; ")
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
        .map(|(name, kind)| format!("{} {kind}", shown(name)))
        .collect();
    let mut text = format!(
        "  {} ({}{range})\n    {}\n",
        shown(&table.name),
        count(table.rows, "row"),
        columns.join(", ")
    );
    let mut loaded = false;
    let mut unparsed = Unparsed::default();
    for file in &report.files {
        let FileStatus::Imported(done) = &file.status else {
            continue;
        };
        if done.source == Source::Generic {
            continue;
        }
        for load in done.loads.iter().filter(|l| l.table == table.name) {
            loaded = true;
            unparsed.merge(&load.unparsed);
        }
    }
    if loaded {
        text.push_str(&format!("    {}\n", unparsed_line(&unparsed)));
    }
    text
}
