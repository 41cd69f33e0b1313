//! The duckgate command line: `serve` (default), `query`, `check`, `demo`, and the hidden worker mode.
//!
//! The flags are in `cli/args.rs`; each subcommand's body is in a file of its own under `cli/`.

// No panics on the paths an agent's input reaches: `unwrap`, `expect` and indexing that may
// panic are refused outside tests (clippy.toml lets tests use them). An exception is marked
// where it stands, with its reason.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

mod cli;

use std::process::ExitCode;

use clap::Parser;
use duckgate::protocol::worker_args::WorkerStart;
use duckgate::sandbox::preflight;
use duckgate::sandbox::worker;

use cli::args::{Cli, Command};

fn main() -> ExitCode {
    let cli = Cli::parse();
    let command = cli.command.unwrap_or(Command::Serve(cli.serve));
    if let Command::Worker(args) = command {
        // No tokio and no logging set-up here: the worker must stay single-threaded until it has
        // confined itself.
        if let Err(e) = worker::close_inherited_descriptors() {
            eprintln!("duckgate worker: cannot close inherited descriptors: {e}");
            return ExitCode::from(3);
        }
        let code = match args.start {
            WorkerStart::ConfineOnly => preflight::confine_only(&args),
            WorkerStart::Spare | WorkerStart::OnDemand => worker::run(args),
            WorkerStart::Template => duckgate::sandbox::zygote::template::run(&args),
        };
        return ExitCode::from(code as u8);
    }
    init_logging();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            tracing::error!("cannot start the async runtime: {e}");
            return ExitCode::from(2);
        }
    };
    let code = runtime.block_on(cli::run(command));
    // Dropping the runtime would wait for every blocking task, and the one reading stdin never
    // returns while a client keeps stdin open (a server stopped by a signal): tasks are dropped
    // now, and blocking work gets this long to finish.
    runtime.shutdown_timeout(BLOCKING_GRACE);
    code
}

/// How long the exit waits for blocking tasks (file removals, the stdin reader) to end.
const BLOCKING_GRACE: std::time::Duration = std::time::Duration::from_millis(250);

fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_env("DUCKGATE_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn,duckgate=info"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .init();
}
