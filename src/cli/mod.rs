//! The `duckgate` binary's command line (the library knows nothing of it): the flags
//! ([`args`]), what every command that talks to a gateway does first ([`start`]), and each
//! subcommand's body in a file of its own.

pub(crate) mod args;
mod check;
mod check_sandbox;
mod demo;
mod import;
mod query;
mod serve;
mod start;
mod stop;

use std::process::ExitCode;

use args::Command;

/// Human output of the CLI commands: the one place that writes to stdout outside MCP.
mod out {
    use std::io::Write;

    /// Print one block of text and a newline; a closed stdout is not worth a panic.
    pub(crate) fn text(s: &str) {
        let mut stdout = std::io::stdout().lock();
        let _ = writeln!(stdout, "{s}");
        let _ = stdout.flush();
    }
}

/// Run one command in the async runtime (the worker mode never gets here: `main` runs it
/// before any runtime exists).
pub(crate) async fn run(command: Command) -> ExitCode {
    // `serve` stops on a signal by itself; the rest exit as its default action would.
    if !matches!(command, Command::Serve(_)) {
        stop::exit_on_stop_signal();
    }
    match command {
        Command::Serve(args) => serve::serve(args).await,
        Command::Query { mut db, limit, sql } => {
            // One call: a warm spare (or a template to fork from) would only be killed unused,
            // and the one worker may have the whole memory budget.
            db.warm_workers = 0;
            db.max_concurrent = 1;
            db.spawn_workers = true;
            query::query(db, limit as usize, sql).await
        }
        Command::Plot {
            mut db,
            kind,
            out,
            x,
            y,
            title,
            width,
            height,
            bins,
            target,
            sql,
        } => {
            db.warm_workers = 0;
            db.max_concurrent = 1;
            db.spawn_workers = true;
            let chart = duckgate::protocol::ChartRequest {
                kind,
                x,
                y,
                title,
                width,
                height,
                bins,
                target_range: target,
            };
            query::plot(db, chart, out, sql).await
        }
        Command::Check { db, sql } => check::check(db, sql).await,
        Command::CheckSandbox { db } => check_sandbox::check_sandbox(db).await,
        Command::Import {
            out,
            replace,
            append,
            time_zone,
            table,
            keep_identifiers,
            inputs,
        } => {
            let mode = match (replace, append) {
                (_, true) => duckgate::import::Mode::Append,
                (true, false) => duckgate::import::Mode::Replace,
                (false, false) => duckgate::import::Mode::New,
            };
            let options = duckgate::import::Options {
                mode,
                time_zone: time_zone.unwrap_or_else(duckgate::time_zone::local),
                table,
                keep_identifiers,
            };
            import::import(out, options, inputs)
        }
        Command::Demo { out } => demo::demo(out).await,
        Command::Worker { .. } => ExitCode::from(2),
    }
}
