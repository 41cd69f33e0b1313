//! The child side of a worker: `duckgate __worker …`.
//!
//! Ordered steps (each failure is reported as one `Response::Error` frame, then exit non-zero):
//! 1. Read the test bypass (operator's environment only; the parent clears everything else).
//! 2. Confine: no_new_privs, parent-death signal, not dumpable, rlimits, landlock, seccomp
//!    ([`super::confine::confine`]) — before DuckDB exists, so every DuckDB thread inherits it.
//! 3. Open the hardened in-memory DuckDB and run a warm-up query ([`crate::engine::Engine::open`]).
//! 4. Write one `Response::Posture` frame: "ready".
//! 5. Read exactly one `Request` frame (size-capped).
//! 6. Attach the database read-only while DuckDB's parser checks the SQL on a second thread;
//!    under the operator's privacy rules, refuse unless DuckDB's plan for the query reads
//!    nothing hidden ([`crate::engine::Engine::check_privacy`]); run the request; give up
//!    the database's file lock ([`crate::engine::Engine::release_file_lock`]); write exactly
//!    one `Response` frame, exit 0.

use std::io::{self, Write};
use std::path::PathBuf;

use crate::engine::{Engine, EngineConfig};
use crate::error::ErrorKind;
use crate::protocol::{Posture, Request, Response, WorkerError};
use crate::sandbox::bypass::{Bypass, Layer};
use crate::sandbox::confine::{ConfinePlan, confine};
use crate::sandbox::frame::{self, MAX_REQUEST_BYTES};
use crate::sandbox::probe;

/// What the parent passes on a worker's command line.
#[derive(Debug, Clone)]
pub struct WorkerArgs {
    /// The database file.
    pub db: PathBuf,
    /// DuckDB `memory_limit`.
    pub memory_limit: String,
    /// DuckDB threads.
    pub threads: u32,
    /// RLIMIT_CPU.
    pub cpu_seconds: u64,
    /// RLIMIT_AS.
    pub address_space_bytes: u64,
    /// Carry on where the kernel lacks landlock or seccomp.
    pub allow_unconfined: bool,
    /// The pid the worker expects as its parent.
    pub parent_pid: i32,
    /// A spare started ahead of need: also warm the paths a request takes (see `EngineConfig`).
    pub full_warm_up: bool,
}

/// The `.wal` file DuckDB keeps beside a database.
pub fn wal_path(db: &std::path::Path) -> PathBuf {
    let mut os = db.as_os_str().to_owned();
    os.push(".wal");
    PathBuf::from(os)
}

/// Run the worker to completion; returns the process exit code.
pub fn run(args: WorkerArgs) -> i32 {
    let mut out = io::stdout().lock();
    match serve_one(&args, &mut out) {
        Ok(()) => 0,
        Err(e) => {
            // Best effort: if the pipe is gone the parent has given up on us anyway.
            let _ = frame::write_frame(&mut out, &Response::Error(e));
            let _ = out.flush();
            3
        }
    }
}

fn serve_one(args: &WorkerArgs, out: &mut impl Write) -> Result<(), WorkerError> {
    let bypass = Bypass::from_env().map_err(|e| internal(format!("worker: {e}")))?;
    let wal = wal_path(&args.db);
    let plan = ConfinePlan {
        db_path: Some(args.db.clone()),
        wal_path: wal.exists().then(|| wal.clone()),
        parent_pid: args.parent_pid,
        address_space_bytes: args.address_space_bytes,
        cpu_seconds: args.cpu_seconds,
        max_open_files: 256,
        allow_unconfined: args.allow_unconfined,
    };
    let mut posture: Posture =
        confine(&plan).map_err(|e| internal(format!("sandbox setup failed: {e}")))?;

    let config = EngineConfig {
        memory_limit: args.memory_limit.clone(),
        threads: args.threads,
        harden: !bypass.is_off(Layer::DuckdbHardening),
        full_warm_up: args.full_warm_up,
    };
    let mut engine = Engine::open(&config, &args.db, &wal)?;
    // The ready report leaves DuckDB's settings out: reading them back costs ~7 ms of every
    // worker's start-up, and `server_info` reads them after the attach instead (Request::Posture).
    posture.bypassed_layers = bypass.names();

    frame::write_frame(out, &Response::Posture(posture.clone()))
        .map_err(|e| internal(format!("worker could not report ready: {e}")))?;

    let request: Request = frame::read_frame(&mut io::stdin().lock(), MAX_REQUEST_BYTES)
        .map_err(|e| internal(format!("worker could not read its request: {e}")))?;

    // An error is answered like any reply: after the lock is released.
    let response =
        answer(&mut engine, request, args, &bypass, posture).unwrap_or_else(Response::Error);
    // Release the database's file lock before answering, so "the call has returned" means
    // "the server holds no lock" (a failure here is logged; exiting releases it anyway).
    // DuckDB's teardown (the detach's work) happens after the reply, off the caller's clock.
    if let Err(e) = engine.release_file_lock() {
        let _ = writeln!(io::stderr(), "duckgate worker: {}", e.message);
    }
    frame::write_frame(out, &response)
        .map_err(|e| internal(format!("worker could not write its reply: {e}")))
}

/// Step 6 for one request: everything between reading it and answering it.
fn answer(
    engine: &mut Engine,
    request: Request,
    args: &WorkerArgs,
    bypass: &Bypass,
    mut posture: Posture,
) -> Result<Response, WorkerError> {
    Ok(match request {
        Request::Query {
            sql,
            limit,
            max_bytes,
            privacy,
        } => {
            let check = (!bypass.is_off(Layer::Validator)).then_some(sql.as_str());
            if !bypass.is_off(Layer::WorkerPrivacy) {
                engine.enforce_privacy(&privacy);
            }
            engine.attach_checking(&args.db, check)?;
            engine.check_privacy(&sql)?;
            Response::Rows(engine.run_query(&sql, limit, max_bytes)?)
        }
        Request::Explain { sql, privacy } => {
            let check = (!bypass.is_off(Layer::Validator)).then_some(sql.as_str());
            if !bypass.is_off(Layer::WorkerPrivacy) {
                engine.enforce_privacy(&privacy);
            }
            engine.attach_checking(&args.db, check)?;
            engine.check_privacy(&sql)?;
            Response::Plan(engine.explain(&sql)?)
        }
        Request::Catalog => {
            engine.attach(&args.db)?;
            Response::Catalog(engine.catalog()?)
        }
        Request::Posture => {
            // Report the settings as a query would meet them: after the read-only attach and
            // the configuration lock, not as they were while the worker waited.
            engine.attach(&args.db)?;
            posture.duckdb_settings = engine.settings_readback();
            Response::Posture(posture)
        }
        Request::Probe(probe_request) => {
            if !bypass.is_off(Layer::Probe) {
                return Err(WorkerError {
                    kind: ErrorKind::PolicyBlocked,
                    message: "probes are a test-only request".into(),
                });
            }
            Response::Probe(probe::run(&probe_request))
        }
    })
}

fn internal(message: String) -> WorkerError {
    WorkerError {
        kind: ErrorKind::InternalError,
        message,
    }
}
