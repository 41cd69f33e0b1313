//! The child side of a worker: `duckgate __worker …`.
//!
//! Ordered steps (each failure is reported as one `Response::Error` frame, then exit non-zero):
//! 1. Read the test bypass (operator's environment only; the parent clears everything else).
//! 2. Open each database and its WAL read-only ([`crate::engine::HeldDatabases`]): landlock
//!    grants no path of them, so these descriptors are the worker's only way to them. Then
//!    confine: no_new_privs, parent-death signal, not dumpable, rlimits, landlock, seccomp
//!    ([`super::confine::confine`]) — before DuckDB exists, so every DuckDB thread inherits it.
//! 3. Open the hardened in-memory DuckDB and run a warm-up query ([`crate::engine::Engine::open`]).
//! 4. Write one `Response::Posture` frame: "ready".
//! 5. Read exactly one `Request` frame (size-capped).
//! 6. Attach the database read-only while, on a second thread, DuckDB's parser checks the SQL
//!    and the worker walks DuckDB's syntax tree with the validator's policy
//!    ([`duckgate_validate::validate::tree`]); then give DuckDB's plan check this request's rules
//!    ([`crate::engine::Engine::start_plan_check`]: from then on every plan DuckDB prepares is
//!    judged before it can run: only the attached database's tables, allowed table functions,
//!    known operators; under the operator's privacy rules nothing hidden); run the
//!    request; give up the database's file lock
//!    ([`crate::engine::Engine::release_file_lock`]); write exactly
//!    one `Response` frame, exit 0.

use std::io::{self, Write};

use crate::engine::{CheckedQuery, Engine, EngineConfig, HeldDatabases, PivotValues, Spill};
use crate::protocol::worker_args::{WorkerArgs, WorkerStart};
use crate::protocol::{ChartReply, ChartRequest, Failure, Posture, Request, Response};
use crate::sandbox::bypass::{Bypass, Layer};
use crate::sandbox::confine::{ConfinePlan, Role, confine};
use crate::sandbox::frame::{self, MAX_REQUEST_BYTES};
#[cfg(feature = "test-bypass")]
use crate::sandbox::probe;
use duckgate_validate::error::ErrorKind;

/// How long a forked spare waits for its request before it warms up in its own process
/// (`Engine::warm_up_while_idle`). The warm-up takes ~11 ms of CPU, copy-on-write faults and
/// DuckDB's first uses, and saves a request ~0.4 ms (`SELECT 1`) to ~0.9 ms (1,000 rows) after
/// a pause (measured over stdio, 150 ms between calls). Spent while calls come back to back it
/// competes with them for the cores, so the grace is longer than one back-to-back call (5–15
/// ms; the pool hands out the newest spare) and far shorter than a pause between calls or
/// bursts.
const WARM_UP_GRACE: std::time::Duration = std::time::Duration::from_millis(30);

/// Whether the request starts arriving on standard input within `grace`.
fn request_within(grace: std::time::Duration) -> bool {
    use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
    use std::os::fd::AsFd;
    let stdin = io::stdin();
    let mut fds = [PollFd::new(stdin.as_fd(), PollFlags::POLLIN)];
    let timeout = PollTimeout::try_from(grace).unwrap_or(PollTimeout::ZERO);
    matches!(poll(&mut fds, timeout), Ok(n) if n > 0)
}

/// How far RLIMIT_FSIZE sits above `max_temp_bytes`: DuckDB writes spill files in blocks of at
/// most a few MiB.
pub const FILE_SIZE_SLACK_BYTES: u64 = 64 << 20;

/// RLIMIT_NOFILE of a worker: DuckDB, its threads and the pipes need a few dozen.
const MAX_OPEN_FILES: u64 = 256;

impl WorkerArgs {
    /// How this worker confines itself: no path of any database (it opened their files before,
    /// [`HeldDatabases`]), read-write on its own temporary directory, read beneath each declared
    /// folder, the resource limits, and the test bypass's landlock ABI cap. The start-up
    /// preflight ([`super::preflight::confine_only`]) confines with this same plan.
    pub fn confine_plan(&self, bypass: &Bypass) -> ConfinePlan {
        ConfinePlan {
            temp_dir: self.temp_dir.clone(),
            folders: self
                .folder_rules()
                .folders
                .into_iter()
                .map(|f| f.dir)
                .collect(),
            parent_pid: self.parent_pid,
            data_bytes: self.memory_cap_bytes,
            address_space_bytes: self.address_space_bytes,
            // Without a temporary directory the worker writes no file at all. With one, a
            // backstop a little above DuckDB's own cap on the directory's total, so that DuckDB
            // meets its cap first and says so.
            file_size_bytes: if self.temp_dir.is_some() {
                self.max_temp_bytes.saturating_add(FILE_SIZE_SLACK_BYTES)
            } else {
                0
            },
            cpu_seconds: self.cpu_seconds,
            max_open_files: MAX_OPEN_FILES,
            allow_unconfined: self.allow_unconfined,
            landlock_abi_cap: bypass.landlock_abi_cap(),
            role: match self.start {
                WorkerStart::Spare | WorkerStart::OnDemand | WorkerStart::ConfineOnly => {
                    Role::Worker
                }
                WorkerStart::Template => Role::Template,
            },
        }
    }

    /// DuckDB's configuration for this worker (or template).
    pub fn engine_config(&self, bypass: &Bypass) -> EngineConfig {
        EngineConfig {
            memory_limit_bytes: self.memory_limit_bytes,
            memory_cap_bytes: Some(self.memory_cap_bytes),
            spill: self.temp_dir.clone().map(|dir| Spill {
                dir,
                max_bytes: self.max_temp_bytes,
            }),
            threads: self.threads,
            time_zone: self.time_zone.clone(),
            harden: !bypass.is_off(Layer::DuckdbHardening),
            folders: self.folder_rules(),
            full_warm_up: matches!(self.start, WorkerStart::Spare | WorkerStart::Template),
        }
    }
}

/// Close every descriptor above standard error that this process inherited. The server's own
/// descriptors are close-on-exec, but whatever started the server (an MCP client, a shell, a
/// lock held by `flock(1)`) may have leaked some to it, and every worker would inherit them:
/// landlock does not cover a file that is already open. Called first thing in a worker or
/// template process, single-threaded, before the process has opened anything of its own, so no
/// descriptor closed here belongs to anything in it. Returns how many were closed.
pub fn close_inherited_descriptors() -> io::Result<usize> {
    let listed: Vec<i32> = std::fs::read_dir("/proc/self/fd")?
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse().ok())
        .filter(|fd| *fd > 2)
        .collect();
    // The listing's own descriptor is among them and already closed: EBADF, not counted.
    Ok(listed
        .into_iter()
        .filter(|fd| nix::unistd::close(*fd).is_ok())
        .count())
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

fn serve_one(args: &WorkerArgs, out: &mut impl Write) -> Result<(), Failure> {
    let bypass = Bypass::from_env().map_err(|e| internal(format!("worker: {e}")))?;
    let databases = args.databases().map_err(internal)?;
    // Before confinement: landlock grants no path of the databases, so these descriptors are
    // the worker's only way to them (`engine::HeldDatabases`).
    let held = HeldDatabases::open(&databases);
    let posture: Posture = confine(&args.confine_plan(&bypass))
        .map_err(|e| internal(format!("sandbox setup failed: {e}")))?;
    let engine = Engine::open_holding(&args.engine_config(&bypass), &databases, held)?;
    serve_ready(engine, posture, args, &bypass, out)
}

/// Steps 4 to 6, for a spawned worker and a forked one alike: report ready, read one request,
/// answer it.
pub(crate) fn serve_ready(
    mut engine: Engine,
    mut posture: Posture,
    args: &WorkerArgs,
    bypass: &Bypass,
    out: &mut impl Write,
) -> Result<(), Failure> {
    // The ready report leaves DuckDB's settings out: reading them back costs ~7 ms of every
    // worker's start-up, and `server_info` reads them after the attach instead (Request::Posture).
    posture.bypassed_layers = bypass.names();

    frame::write_frame(out, &Response::Posture(posture.clone()))
        .map_err(|e| internal(format!("worker could not report ready: {e}")))?;
    engine.warm_up_while_idle(|| !request_within(WARM_UP_GRACE))?;

    let request: Request = frame::read_frame(&mut io::stdin().lock(), MAX_REQUEST_BYTES)
        .map_err(|e| internal(format!("worker could not read its request: {e}")))?;

    // An error is answered like any reply: after the lock is released.
    let response = answer(&mut engine, request, args.parent_pid, bypass, posture)
        .unwrap_or_else(Response::Error);
    // Release the database's file lock before answering, so "the call has returned" means
    // "the server holds no lock" (a failure here is logged; exiting releases it anyway).
    // DuckDB's teardown (the detach's work) happens after the reply, off the caller's clock.
    if let Err(e) = engine.release_file_lock() {
        let _ = writeln!(io::stderr(), "duckgate worker: {}", e.message);
    }
    let written = frame::write_frame(out, &response)
        .map_err(|e| internal(format!("worker could not write its reply: {e}")));
    // The process exits next, and the kernel takes back all it holds at once. Dropping the
    // engine would first run DuckDB's teardown (every block, catalog entry and thread freed one
    // by one, on heap pages the fork shares with the template) for nobody: the file lock is
    // already released above, and the pool removes the temporary directory.
    std::mem::forget(engine);
    written
}

/// Step 6 for one request: everything between reading it and answering it.
fn answer(
    engine: &mut Engine,
    request: Request,
    // The pid a probe reports as its parent's (test builds only).
    #[cfg_attr(not(feature = "test-bypass"), allow(unused_variables))] parent_pid: i32,
    bypass: &Bypass,
    mut posture: Posture,
) -> Result<Response, Failure> {
    Ok(match request {
        Request::Query {
            sql,
            limit,
            max_bytes,
            privacy,
        } => {
            let rows = checked_attach(engine, &sql, &privacy, bypass)
                .and_then(|query| engine.run_query(&query, limit, max_bytes))
                .map_err(|e| engine.private_error(e))?;
            Response::Rows(engine.private_result(rows))
        }
        Request::Plot {
            sql,
            chart,
            privacy,
        } => {
            let data = checked_attach(engine, &sql, &privacy, bypass)
                .and_then(|query| {
                    engine.plot_data(&query, chart.kind, chart.x.as_deref(), chart.y.as_deref())
                })
                .map_err(|e| engine.private_error(e))?;
            let data = engine.private_plot_data(data);
            Response::Chart(draw(&data, &chart).map_err(|e| engine.private_error(e))?)
        }
        Request::Explain { sql, privacy } => {
            let plan = checked_attach(engine, &sql, &privacy, bypass)
                .and_then(|query| engine.explain(&query))
                .map_err(|e| engine.private_error(e))?;
            Response::Plan(plan)
        }
        Request::Catalog { privacy } => {
            engine.enforce_privacy(&privacy);
            engine.attach()?;
            Response::Catalog(engine.catalog()?)
        }
        Request::Posture => {
            // Report the settings as a query would meet them: after the read-only attach and
            // the configuration lock, not as they were while the worker waited. A database
            // that does not exist yet leaves them out: the sandbox posture stands without it.
            match engine.attach() {
                Ok(()) => posture.duckdb_settings = engine.settings_readback(),
                Err(e) if e.kind == ErrorKind::DatabaseNotFound => {}
                Err(e) => return Err(e),
            }
            Response::Posture(posture)
        }
        #[cfg(feature = "test-bypass")]
        Request::Probe(probe_request) => {
            if !bypass.is_off(Layer::ProbeRefusal) {
                return Err(Failure::new(
                    ErrorKind::PolicyBlocked,
                    "probes are a test-only request",
                ));
            }
            // Step 2 of confinement checked this is the kernel's getppid().
            Response::Probe(probe::run(&probe_request, parent_pid))
        }
    })
}

/// Draw the chart here, in the confined worker: the renderer reads no file (its font is
/// compiled in) and a bug in it stays in this process.
fn draw(data: &crate::plot::PlotData, chart: &ChartRequest) -> Result<ChartReply, Failure> {
    use base64::Engine as _;
    let options = crate::plot::ChartOptions {
        kind: chart.kind,
        title: chart.title.clone(),
        width: chart.width,
        height: chart.height,
        bins: chart.bins,
        target_range: chart.target_range,
    };
    let rendered =
        crate::plot::render(data, &options).map_err(|e| Failure::new(e.kind(), e.to_string()))?;
    Ok(ChartReply {
        png_base64: base64::engine::general_purpose::STANDARD.encode(&rendered.png),
        width: rendered.width,
        height: rendered.height,
        x: data.x_label.clone(),
        y: data.y_label.clone(),
        rows_read: data.y.len(),
        summary_columns: rendered.summary.columns,
        summary_rows: rendered.summary.rows,
        summary_text: rendered.summary.text,
    })
}

/// Attach the database while DuckDB's parser checks `sql` and the worker walks DuckDB's syntax
/// tree, then check DuckDB's plan for it: nothing runs before both checks passed. The test
/// bypass can switch either off (not the privacy rules' own switch, which only drops the rules).
/// Returns the statement to run: `sql`, or for a `PIVOT` whose values come from the data, the
/// pivot with the values its value queries found (see [`pivot_with_values`]).
fn checked_attach(
    engine: &mut Engine,
    sql: &str,
    privacy: &crate::privacy::PrivacyPolicy,
    bypass: &Bypass,
) -> Result<CheckedQuery, Failure> {
    if !bypass.is_off(Layer::WorkerPrivacy) {
        engine.enforce_privacy(privacy);
    }
    if let Some(statement) = pivot_with_values(engine, sql, bypass)? {
        return Ok(statement);
    }
    let walk = (!bypass.is_off(Layer::WorkerWalk)).then_some(sql);
    let walked = engine.attach_checking(walk)?;
    let plan_check = !bypass.is_off(Layer::PlanCheck);
    let query = checked_as_the_bypass_allows(engine, walked, sql, plan_check)?;
    if plan_check {
        engine.start_plan_check(&query)?;
    }
    Ok(query)
}

/// The checked statement for `sql`: the walk's, when it ran; else the plan check's own reading
/// of DuckDB's syntax tree; else (every check of the SQL switched off in a test) none.
fn checked_as_the_bypass_allows(
    engine: &Engine,
    walked: Option<CheckedQuery>,
    sql: &str,
    plan_check: bool,
) -> Result<CheckedQuery, Failure> {
    match walked {
        Some(query) => Ok(query),
        None if plan_check => engine.parse_for_plan_check(sql),
        None => checks_off(sql),
    }
}

/// `sql` with both checks of the SQL switched off, which only a test build can do.
#[cfg(feature = "test-bypass")]
fn checks_off(sql: &str) -> Result<CheckedQuery, Failure> {
    Ok(CheckedQuery::with_checks_off(sql))
}

/// A shipped build has no switch to turn a check off, so this is never reached; were it
/// reached, nothing would run.
#[cfg(not(feature = "test-bypass"))]
fn checks_off(_sql: &str) -> Result<CheckedQuery, Failure> {
    Err(internal(
        "the checks of the SQL cannot be switched off in this build".to_owned(),
    ))
}

/// For a `PIVOT` whose values DuckDB takes from the data (`PIVOT t ON col USING sum(x)`), the
/// checked statement to run instead of `sql`; `None` for any other SQL. DuckDB's parser makes
/// such a pivot a `CREATE TEMPORARY TYPE … AS ENUM (<value query>)` per column and the pivot over
/// those types (`engine::pivot`). The `CREATE` never runs: each value query is checked, its plan
/// judged and run as a query of its own (the same checks, privacy rules and limits as the
/// agent's), and the pivot, with the values found written into its parse tree as `IN` lists, is
/// checked and judged in turn. Each check is switched off by the same bypass as for `sql`.
fn pivot_with_values(
    engine: &mut Engine,
    sql: &str,
    bypass: &Bypass,
) -> Result<Option<CheckedQuery>, Failure> {
    let Some(pivot) = engine.pivot_from_data(sql) else {
        return Ok(None);
    };
    let walk = !bypass.is_off(Layer::WorkerWalk);
    let plan = !bypass.is_off(Layer::PlanCheck);
    let check = |engine: &mut Engine, statement: &str| -> Result<CheckedQuery, Failure> {
        let walked = if walk {
            Some(engine.check_statement(statement)?)
        } else {
            None
        };
        let query = checked_as_the_bypass_allows(engine, walked, statement, plan)?;
        if plan {
            engine.start_plan_check(&query)?;
        }
        Ok(query)
    };
    engine.attach()?;
    let mut values = Vec::new();
    for index in 0..pivot.value_query_count() {
        let query = engine.pivot_value_query(&pivot, index, &values)?;
        let checked = check(engine, &query)?;
        let found = match engine.pivot_values(&checked)? {
            PivotValues::Found(found) => found,
            // DuckDB casts a value query's one column to VARCHAR first; so does this statement,
            // built around the checked query and checked again.
            PivotValues::NotText => {
                let as_text = engine.pivot_values_as_text(&checked)?;
                let as_text = check(engine, &as_text)?;
                match engine.pivot_values(&as_text)? {
                    PivotValues::Found(found) => found,
                    PivotValues::NotText => {
                        return Err(internal("a PIVOT's values cast to VARCHAR are not VARCHAR"));
                    }
                }
            }
        };
        values.push(found);
    }
    let statement = engine.pivot_statement(&pivot, &values)?;
    check(engine, &statement).map(Some)
}

fn internal(message: impl Into<String>) -> Failure {
    Failure::new(ErrorKind::InternalError, message)
}
