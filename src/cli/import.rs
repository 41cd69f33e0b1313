//! `duckgate import`: the operator's CSV files into a new database to serve.

use std::path::PathBuf;
use std::process::ExitCode;

use super::out;
use super::start::usage_error;

/// `duckgate import`: the operator's CSV files into a new database, then the command to serve it.
pub(super) fn import(out: PathBuf, inputs: Vec<PathBuf>) -> ExitCode {
    let files = match duckgate::engine::import::csv_files(&inputs) {
        Ok(files) => files,
        Err(e) => return usage_error(&e),
    };
    match duckgate::engine::import::import_csv(&out, &files) {
        Ok(tables) => {
            let mut text = format!("Wrote {}:", out.display());
            for table in &tables {
                text.push_str(&format!(
                    "\n  {} ({} rows) from {}",
                    table.name,
                    table.rows,
                    table.source.display()
                ));
            }
            let db = std::path::absolute(&out).unwrap_or(out);
            text.push_str(&format!(
                "\nServe it with: duckgate serve --db {}",
                db.display()
            ));
            out::text(&text);
            ExitCode::SUCCESS
        }
        Err(e) => {
            tracing::error!("import failed: {e}");
            ExitCode::from(1)
        }
    }
}
