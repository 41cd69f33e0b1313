//! `duckgate demo`: a synthetic CGM database, then a real MCP session against it.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use super::out;
use super::start::usage_error;

/// `duckgate demo`: build the database unless a demo one is at `out_path` already (someone
/// else's file there is refused and left alone), then run the session on stdout.
pub(super) async fn demo(out_path: PathBuf) -> ExitCode {
    let out_path = match std::path::absolute(&out_path) {
        Ok(p) => p,
        Err(e) => return usage_error(&format!("cannot resolve --out {}: {e}", out_path.display())),
    };
    if out_path.exists() {
        // Someone else's file is never opened for writing or served as the demo's.
        if let Err(reason) = duckgate::demo::database::check_demo_database(&out_path) {
            eprintln!(
                "duckgate demo: {} exists and is not a demo database ({reason}). It was left \
                 untouched. Choose another --out path, or move that file away to build the demo \
                 there.",
                out_path.display()
            );
            return ExitCode::from(2);
        }
        tracing::info!("using the existing demo database at {}", out_path.display());
    } else {
        // A bar redrawn with `\r` only on a terminal; a log gets a start and a done line.
        let terminal = std::io::stderr().is_terminal();
        if !terminal {
            eprintln!("building the demo database at {} …", out_path.display());
        }
        let mut progress = |done: u64, total: u64| {
            if terminal {
                draw_progress(done, total);
            }
        };
        match duckgate::demo::database::write_demo_database(&out_path, &mut progress) {
            Ok(summary) => {
                if terminal {
                    eprintln!();
                } else {
                    eprintln!("built the demo database");
                }
                let tables: Vec<String> = summary
                    .tables
                    .iter()
                    .map(|(t, n)| format!("{t} ({n} rows)"))
                    .collect();
                out::text(&format!(
                    "Wrote {}: {}",
                    summary.path.display(),
                    tables.join(", ")
                ));
            }
            Err(e) => {
                if terminal {
                    eprintln!();
                }
                tracing::error!("could not write the demo database: {e}");
                return ExitCode::from(1);
            }
        }
    }
    let exe = match std::env::current_exe() {
        Ok(exe) => exe,
        Err(e) => return usage_error(&format!("cannot find our own binary: {e}")),
    };
    let mut stdout = std::io::stdout();
    match duckgate::demo::session::run_demo_session(&exe, &out_path, &mut stdout).await {
        Ok(()) => {
            let host = duckgate::mcp::next_steps::detect_host(&out_path);
            out::text(duckgate::mcp::next_steps::next_steps(&exe, &out_path, &host).trim_end());
            ExitCode::SUCCESS
        }
        Err(e) => {
            tracing::error!("demo session failed: {e}");
            ExitCode::from(1)
        }
    }
}

/// A one-line progress bar on stderr (stdout stays clean for the session transcript), redrawn
/// in place with `\r`: for a terminal only (`demo` checks).
fn draw_progress(done: u64, total: u64) {
    let width = 30u64;
    let filled = (done * width)
        .checked_div(total)
        .map_or(width, |f| f.min(width));
    eprint!(
        "\rbuilding demo database [{}{}] {done}/{total}",
        "#".repeat(filled as usize),
        " ".repeat((width - filled) as usize)
    );
}
