//! The parent side: spawn single-use workers, keep warm spares, bound concurrency, enforce the
//! deadline and cancellation by killing the worker's whole process group.
//!
//! A worker is never reused: after one request it exits (or is killed), so whatever a query did
//! to its process cannot reach the next one.

use std::collections::{BTreeSet, VecDeque};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::process::{Child, Command};
use tokio::sync::{Mutex, OwnedSemaphorePermit, Semaphore, oneshot};
use tokio_util::sync::CancellationToken;

use crate::error::ErrorKind;
use crate::protocol::{Posture, Request, Response, WorkerError};
use crate::sandbox::bypass::{self, Bypass};
use crate::sandbox::frame;
use crate::sandbox::temp_dir::{self, TempRoot, WorkerTempDir};
use crate::sandbox::worker::{WorkerArgs, WorkerStart, wal_path};
use crate::sandbox::zygote::handle::{Exit, Zygote};

/// How to start a worker.
#[derive(Debug, Clone)]
pub struct WorkerSpec {
    /// Our own binary.
    pub exe: PathBuf,
    /// Its command line; `start` is set per launch.
    pub worker: WorkerArgs,
    /// Test-only layer switches passed on to workers.
    pub bypass: Bypass,
    /// Largest reply accepted from a worker.
    pub max_reply_bytes: usize,
    /// How long a worker may take to confine itself and warm DuckDB up.
    pub startup_timeout: Duration,
    /// Where each worker's private temporary directory is made; `None`: no spilling.
    pub temp_root: Option<Arc<TempRoot>>,
    /// How the memory budget is shared: `worker`'s memory flags come from it.
    pub memory: crate::sandbox::budget::WorkerMemory,
    /// Fork workers from a template ([`crate::sandbox::zygote`]) rather than spawn each one;
    /// spawning stays the fallback.
    pub fork_workers: bool,
}

/// Why a request to a worker did not produce a reply.
#[derive(Debug)]
pub enum RunError {
    /// The deadline passed; the worker was killed.
    Timeout,
    /// The caller cancelled; the worker was killed (or, while it waited for a slot, none ran).
    Cancelled,
    /// No worker slot came free within the queue bound; nothing ran.
    Busy(Busy),
    /// The worker failed before or while answering (crash, malformed or oversized reply).
    Worker(WorkerError),
}

/// What a call that gave up waiting for a worker slot saw: the answer to "how busy is it".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Busy {
    /// Requests holding a worker slot when the call gave up.
    pub running: usize,
    /// Calls that were waiting in line ahead of this one when it joined the line. (When it gives
    /// up they have all given up or got a slot too: every call waits the same bound, in order.)
    pub waiting_ahead: usize,
    /// How long the call waited.
    pub waited: Duration,
}

impl Busy {
    /// The message for the agent: how many calls were ahead and that a retry is the way on.
    pub fn message(&self) -> String {
        let running = match self.running {
            1 => "1 query is running".to_string(),
            n => format!("{n} queries are running"),
        };
        let waiting = match self.waiting_ahead {
            0 => "no other call was waiting ahead of this one".to_string(),
            1 => "1 was waiting ahead of this one".to_string(),
            n => format!("{n} were waiting ahead of this one"),
        };
        format!(
            "The server is busy: {running} and {waiting}; no worker came free within {} s, so this query did not run. Retry in a few seconds.",
            self.waited.as_secs_f64().round() as u64
        )
    }
}

/// The concurrency bound: `capacity` slots, and the calls waiting for one, in arrival order
/// (tokio's semaphore is fair, so that is also the order slots are handed out in).
///
/// A slot is free again only once its worker has exited and been reaped, not when its reply
/// is in: so at most `capacity` query workers exist at once, which the memory budget counts on
/// (`crate::sandbox::budget`).
#[derive(Debug)]
struct Slots {
    semaphore: Arc<Semaphore>,
    capacity: usize,
    line: std::sync::Mutex<WaitLine>,
    /// Slots whose worker has replied and is being killed and reaped: each comes free within
    /// milliseconds, so a call that finds one waits for it ([`REAP_WAIT`]) even when the
    /// operator allows no queueing; those are not "other calls" holding the worker.
    reaping: Arc<AtomicUsize>,
}

/// The longest a call waits for a slot whose worker has already replied.
const REAP_WAIT: Duration = Duration::from_secs(2);

/// Tickets of the calls waiting for a slot.
#[derive(Debug, Default)]
struct WaitLine {
    next: u64,
    waiting: BTreeSet<u64>,
}

impl WaitLine {
    /// Join the line: the ticket and how many are ahead.
    fn join(&mut self) -> (u64, usize) {
        let ticket = self.next;
        self.next += 1;
        let ahead = self.waiting.len();
        self.waiting.insert(ticket);
        (ticket, ahead)
    }

    fn leave(&mut self, ticket: u64) {
        self.waiting.remove(&ticket);
    }
}

/// A place in the line, left however the wait ends (slot, bound, cancel, or the caller dropped).
struct InLine<'a> {
    line: &'a std::sync::Mutex<WaitLine>,
    ticket: u64,
}

impl Drop for InLine<'_> {
    fn drop(&mut self) {
        if let Ok(mut line) = self.line.lock() {
            line.leave(self.ticket);
        }
    }
}

impl Slots {
    fn new(capacity: usize) -> Slots {
        let capacity = capacity.max(1);
        Slots {
            semaphore: Arc::new(Semaphore::new(capacity)),
            reaping: Arc::new(AtomicUsize::new(0)),
            capacity,
            line: std::sync::Mutex::new(WaitLine::default()),
        }
    }

    /// Wait for a slot at most `queue_timeout`. Only the run that follows counts against the
    /// call's deadline: a call that waited in line is not told it "timed out".
    async fn acquire(
        &self,
        queue_timeout: Duration,
        cancel: &CancellationToken,
    ) -> Result<OwnedSemaphorePermit, RunError> {
        // A free slot with nobody waiting for it is taken without joining the line.
        if let Ok(permit) = Arc::clone(&self.semaphore).try_acquire_owned() {
            return Ok(permit);
        }
        let bound = if self.reaping.load(Ordering::SeqCst) > 0 {
            queue_timeout.max(REAP_WAIT)
        } else {
            queue_timeout
        };
        let waiting_since = tokio::time::Instant::now();
        let (ticket, waiting_ahead) = self
            .line
            .lock()
            .map(|mut line| line.join())
            .unwrap_or((0, 0));
        let _in_line = InLine {
            line: &self.line,
            ticket,
        };
        tokio::select! {
            biased;
            _ = cancel.cancelled() => Err(RunError::Cancelled),
            permit = Arc::clone(&self.semaphore).acquire_owned() => permit.map_err(|_| RunError::Worker(internal("the worker pool is shut down".into()))),
            _ = tokio::time::sleep(bound) => Err(RunError::Busy(Busy {
                running: self.capacity.saturating_sub(self.semaphore.available_permits()),
                waiting_ahead,
                waited: waiting_since.elapsed(),
            })),
        }
    }
}

/// A confined, DuckDB-warm worker waiting for its one request.
struct ReadyWorker {
    process: WorkerProcess,
    /// Its standard input: a pipe (spawned) or its socket (forked).
    input: Box<dyn AsyncWrite + Unpin + Send>,
    /// Its standard output, likewise.
    output: Box<dyn AsyncRead + Unpin + Send>,
    /// The database's identity and WAL presence when the worker confined itself: its landlock
    /// rules name those inodes, so a replaced file or a new WAL needs a fresh worker.
    db_identity: Option<FileIdentity>,
    /// Its private temporary directory, removed only once the process has been reaped
    /// ([`ReadyWorker::finish`]).
    temp: Option<WorkerTempDir>,
    /// What that directory may hold.
    max_temp_bytes: u64,
}

impl std::fmt::Debug for ReadyWorker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReadyWorker")
            .field("process", &self.process)
            .finish_non_exhaustive()
    }
}

/// A worker's process, and how to end it.
#[derive(Debug)]
enum WorkerProcess {
    /// Our binary, spawned by the server, which reaps it.
    Spawned(Child),
    /// A child of the template, which kills it on the server's order and reaps it.
    Forked {
        pid: i32,
        zygote: Arc<Zygote>,
        /// Resolves once the template has reaped it.
        exited: oneshot::Receiver<Exit>,
        /// What `exited` said, once it has.
        ended: Option<Exit>,
    },
}

impl WorkerProcess {
    /// Whether the process still runs (a spare may have been killed from outside).
    fn is_alive(&mut self) -> bool {
        match self {
            WorkerProcess::Spawned(child) => matches!(child.try_wait(), Ok(None)),
            WorkerProcess::Forked { exited, ended, .. } => {
                if ended.is_some() {
                    return false;
                }
                match exited.try_recv() {
                    Err(oneshot::error::TryRecvError::Empty) => true,
                    Ok(exit) => {
                        *ended = Some(exit);
                        false
                    }
                    Err(oneshot::error::TryRecvError::Closed) => {
                        *ended = Some(Exit { signal: None });
                        false
                    }
                }
            }
        }
    }

    /// SIGKILL the process and wait until it has been reaped.
    async fn kill_and_reap(&mut self) {
        match self {
            WorkerProcess::Spawned(child) => kill_and_reap(child).await,
            WorkerProcess::Forked {
                pid,
                zygote,
                exited,
                ended,
            } => {
                if ended.is_some() {
                    return;
                }
                zygote.kill(*pid).await;
                // The template reaps it within milliseconds; if the template is gone, so is
                // the child (parent-death signal), and the sender is dropped.
                let exit = tokio::time::timeout(REAP_WAIT, &mut *exited).await;
                *ended = Some(match exit {
                    Ok(Ok(exit)) => exit,
                    _ => Exit { signal: None },
                });
            }
        }
    }

    /// Wait briefly for the process to end on its own; the signal that ended it, if any.
    async fn ended_by_signal(&mut self) -> Option<i32> {
        use std::os::unix::process::ExitStatusExt;
        match self {
            WorkerProcess::Spawned(child) => wait_briefly(child).await.and_then(|s| s.signal()),
            WorkerProcess::Forked { exited, ended, .. } => {
                if ended.is_none()
                    && let Ok(exit) =
                        tokio::time::timeout(Duration::from_millis(500), &mut *exited).await
                {
                    *ended = Some(exit.unwrap_or(Exit { signal: None }));
                }
                ended.and_then(|e| e.signal)
            }
        }
    }
}

impl ReadyWorker {
    /// Kill the worker, wait until it has been reaped, then remove its temporary directory.
    async fn finish(mut self) {
        self.process.kill_and_reap().await;
        drop(self.temp.take());
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct FileIdentity {
    dev: u64,
    ino: u64,
    wal: Option<(u64, u64)>,
}

fn file_identity(db: &Path) -> Option<FileIdentity> {
    let meta = std::fs::metadata(db).ok()?;
    let wal = std::fs::metadata(wal_path(db))
        .ok()
        .map(|m| (m.dev(), m.ino()));
    Some(FileIdentity {
        dev: meta.dev(),
        ino: meta.ino(),
        wal,
    })
}

/// Single-use workers with warm spares and a concurrency bound.
#[derive(Debug)]
pub struct Pool {
    spec: WorkerSpec,
    /// Oldest first: a call takes the spare that has waited longest. A forked spare warms its
    /// request paths in its own process once it has waited a moment (`worker::WARM_UP_GRACE`),
    /// so back to back the oldest is the one that has done so, and the newest is left the time
    /// to do it.
    spares: Mutex<VecDeque<ReadyWorker>>,
    /// Spares being started right now. Counted with the ready ones, under the `spares` lock, so
    /// that two refills racing (one per reply, back to back) do not start more than the target.
    starting: AtomicUsize,
    warm_target: usize,
    running: Slots,
    last_posture: Mutex<Option<Posture>>,
    /// The template workers are forked from ([`WorkerSpec::fork_workers`]).
    template: Mutex<TemplateState>,
    /// Templates started so far (at most [`MAX_TEMPLATE_STARTS`]).
    template_starts: AtomicUsize,
    /// Woken when a template start has ended, either way.
    template_started: tokio::sync::Notify,
}

/// How many times a template is started before the pool spawns workers for good. A template
/// that keeps dying (killed from outside, out of memory) costs a start-up each time; a
/// replaced database file does not count (its new inode needs a new template).
const MAX_TEMPLATE_STARTS: usize = 3;

/// Where the template stands.
#[derive(Debug)]
enum TemplateState {
    /// Forking is on and no template has been started yet (or the last was retired because
    /// the database file changed).
    NotStarted,
    /// A template is being started in the background ([`Pool::start_template`]).
    Starting,
    /// A template is running; its landlock rules name the database as it was then.
    Running {
        zygote: Arc<Zygote>,
        db_identity: Option<FileIdentity>,
    },
    /// Workers are spawned, and why.
    Unavailable { reason: String },
}

/// Where workers come from now: `server_info`'s `workers`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "origin", rename_all = "snake_case")]
pub enum WorkerOrigin {
    /// Forked from a warm, confined template process.
    Template {
        /// The template's pid.
        template_pid: u32,
        /// Templates started since the server started (more than one: an earlier one died or
        /// the database file was replaced).
        template_starts: usize,
    },
    /// Spawned one by one (the slower start), and why.
    Spawned {
        /// Why no template is in use.
        reason: String,
    },
}

impl Pool {
    /// A pool that keeps `warm_target` spares and runs at most `max_concurrent` workers.
    pub fn new(spec: WorkerSpec, warm_target: usize, max_concurrent: usize) -> Arc<Pool> {
        Arc::new(Pool {
            spares: Mutex::new(VecDeque::new()),
            starting: AtomicUsize::new(0),
            warm_target,
            running: Slots::new(max_concurrent),
            last_posture: Mutex::new(None),
            template: Mutex::new(if spec.fork_workers {
                TemplateState::NotStarted
            } else {
                TemplateState::Unavailable {
                    reason: "forking workers is switched off (--spawn-workers)".into(),
                }
            }),
            template_starts: AtomicUsize::new(0),
            template_started: tokio::sync::Notify::new(),
            spec,
        })
    }

    /// Where workers come from now (for `server_info`).
    pub async fn worker_origin(&self) -> WorkerOrigin {
        match &*self.template.lock().await {
            TemplateState::Running { zygote, .. } => match zygote.death() {
                None => WorkerOrigin::Template {
                    template_pid: zygote.pid(),
                    template_starts: self.template_starts.load(Ordering::SeqCst),
                },
                Some(reason) => WorkerOrigin::Spawned { reason },
            },
            TemplateState::NotStarted => WorkerOrigin::Spawned {
                reason: "the template has not been started yet".into(),
            },
            TemplateState::Starting => WorkerOrigin::Spawned {
                reason: "the template is starting".into(),
            },
            TemplateState::Unavailable { reason } => WorkerOrigin::Spawned {
                reason: reason.clone(),
            },
        }
    }

    /// The template to fork from; `None`: spawn instead. A template that is needed and not
    /// running (none yet, it died, or the database file was replaced) is started in the
    /// background, at most [`MAX_TEMPLATE_STARTS`] times; meanwhile a spare waits for it
    /// (`for_spare`, off every caller's clock) and a caller's worker is spawned.
    async fn usable_template(self: &Arc<Self>, for_spare: bool) -> Option<Arc<Zygote>> {
        let current = file_identity(&self.spec.worker.db);
        let mut state = self.template.lock().await;
        if let TemplateState::Running {
            zygote,
            db_identity,
        } = &*state
        {
            match zygote.death() {
                None if *db_identity == current => return Some(Arc::clone(zygote)),
                None => {
                    // Its landlock rules name the old file: retire it (its spares die with it
                    // and are skipped when taken). A replacement does not count as a restart.
                    zygote.stop().await;
                    self.template_starts.fetch_sub(1, Ordering::SeqCst);
                    *state = TemplateState::NotStarted;
                }
                Some(reason) => *state = TemplateState::Unavailable { reason },
            }
        }
        let may_start = self.spec.fork_workers
            && self.template_starts.load(Ordering::SeqCst) < MAX_TEMPLATE_STARTS;
        match &*state {
            TemplateState::Running { zygote, .. } => return Some(Arc::clone(zygote)),
            TemplateState::Starting => {}
            TemplateState::NotStarted | TemplateState::Unavailable { .. } if may_start => {
                *state = TemplateState::Starting;
                self.template_starts.fetch_add(1, Ordering::SeqCst);
                tokio::spawn(Arc::clone(self).start_template(current));
            }
            TemplateState::NotStarted | TemplateState::Unavailable { .. } => return None,
        }
        if !for_spare {
            return None;
        }
        let started = self.template_started.notified();
        tokio::pin!(started);
        started.as_mut().enable();
        drop(state);
        started.await;
        match &*self.template.lock().await {
            TemplateState::Running { zygote, .. } => Some(Arc::clone(zygote)),
            TemplateState::NotStarted
            | TemplateState::Starting
            | TemplateState::Unavailable { .. } => None,
        }
    }

    /// Start a template, record how that went, and wake the spares waiting for it.
    async fn start_template(self: Arc<Self>, db_identity: Option<FileIdentity>) {
        let mut args = self.spec.worker.clone();
        args.temp_dir = self
            .spec
            .temp_root
            .as_ref()
            .map(|root| root.instance().to_path_buf());
        let started = Zygote::start(
            &self.spec.exe,
            &args,
            &self.spec.bypass,
            self.spec.startup_timeout,
        )
        .await;
        *self.template.lock().await = match started {
            Ok(zygote) => TemplateState::Running {
                zygote,
                db_identity,
            },
            Err(e) => {
                tracing::warn!(error = %e.message, "could not start the template; spawning workers");
                TemplateState::Unavailable {
                    reason: format!("the template could not start: {}", e.message),
                }
            }
        };
        self.template_started.notify_waiters();
    }

    /// A new ready worker: forked from the template when there is one, else spawned.
    async fn start_worker(
        self: &Arc<Self>,
        start: WorkerStart,
    ) -> Result<ReadyWorker, WorkerError> {
        if let Some(zygote) = self.usable_template(start == WorkerStart::Spare).await {
            match fork_worker(&self.spec, &zygote).await {
                Ok(worker) => return Ok(worker),
                Err(e) => {
                    tracing::warn!(error = %e.message, "could not fork a worker; spawning one");
                }
            }
        }
        launch(&self.spec, start).await.map(|(w, _)| w)
    }

    /// The spec workers are started with.
    pub fn spec(&self) -> &WorkerSpec {
        &self.spec
    }

    /// Start filling the warm spares in the background.
    pub fn refill(self: &Arc<Self>) {
        let pool = Arc::clone(self);
        tokio::spawn(async move {
            loop {
                {
                    let spares = pool.spares.lock().await;
                    if spares.len() + pool.starting.load(Ordering::SeqCst) >= pool.warm_target {
                        return;
                    }
                    pool.starting.fetch_add(1, Ordering::SeqCst);
                }
                let started = pool.start_worker(WorkerStart::Spare).await;
                let mut spares = pool.spares.lock().await;
                pool.starting.fetch_sub(1, Ordering::SeqCst);
                match started {
                    Ok(worker) => spares.push_back(worker),
                    Err(e) => {
                        tracing::warn!(error = %e.message, "could not start a warm worker");
                        return;
                    }
                }
            }
        });
    }

    /// Ask a worker for the posture it has when a request is running: confinement, and DuckDB's
    /// settings after the read-only attach and the configuration lock (used by `server_info`).
    /// Cached: every worker is confined the same way. `deadline` also bounds the wait for a slot.
    pub async fn probe_posture(
        self: &Arc<Self>,
        deadline: Duration,
    ) -> Result<Posture, WorkerError> {
        if let Some(p) = self.last_posture.lock().await.clone() {
            return Ok(p);
        }
        let reply = self
            .run(
                &Request::Posture,
                deadline,
                deadline,
                &CancellationToken::new(),
                1024 * 1024,
            )
            .await;
        match reply {
            Ok(Response::Posture(posture)) => {
                // A worker on a database that does not exist yet reports no DuckDB settings (it
                // attached nothing): ask again once the file is there.
                if !posture.duckdb_settings.is_empty() {
                    *self.last_posture.lock().await = Some(posture.clone());
                }
                Ok(posture)
            }
            Ok(Response::Error(e)) => Err(e),
            Ok(_) => Err(internal(
                "the worker answered a posture request with something else".into(),
            )),
            Err(RunError::Timeout) => Err(internal(
                "the worker did not report its posture in time".into(),
            )),
            Err(RunError::Cancelled) => Err(internal("the posture request was cancelled".into())),
            Err(RunError::Busy(busy)) => Err(WorkerError::new(ErrorKind::Busy, busy.message())),
            Err(RunError::Worker(e)) => Err(e),
        }
    }

    /// Send one request to a fresh worker and wait for its reply until `deadline` or `cancel`.
    ///
    /// The call first waits for a worker slot, at most `queue_timeout` (then [`RunError::Busy`]);
    /// `deadline` counts from when the request is handed to the worker, so time spent in line
    /// or waiting for a worker to start never turns into a timeout.
    pub async fn run(
        self: &Arc<Self>,
        request: &Request,
        deadline: Duration,
        queue_timeout: Duration,
        cancel: &CancellationToken,
        max_reply_bytes: usize,
    ) -> Result<Response, RunError> {
        let permit = self.running.acquire(queue_timeout, cancel).await?;
        // Bounded by the worker start-up timeout when no spare is ready.
        let mut worker = tokio::select! {
            w = self.take_worker() => w.map_err(RunError::Worker)?,
            _ = cancel.cancelled() => return Err(RunError::Cancelled),
        };

        let started = tokio::time::Instant::now();
        let spill = worker
            .temp
            .as_ref()
            .map(|t| (t.path().to_path_buf(), worker.max_temp_bytes));
        let exchange = exchange(&mut worker, request, max_reply_bytes);
        let mut spilled_past = None;
        let outcome = tokio::select! {
            reply = exchange => Some(reply),
            _ = cancel.cancelled() => None,
            _ = tokio::time::sleep_until(started + deadline) => None,
            max = spill_overflow(spill) => {
                spilled_past = Some(max);
                None
            }
        };
        // The spare is replaced only once this worker is gone: starting one costs ~30 ms of
        // CPU, and on a small machine it would otherwise compete with the query it waits for,
        // with the worker's exit and with the reply on its way out (`cargo bench --bench
        // mcp_roundtrip`, SELECT 1 with a warm spare: p90 8.2 -> 5.6 ms, p50 5.1 -> 4.8 ms).
        match outcome {
            Some(Ok(response)) => {
                self.reap_then_refill(worker, permit);
                Ok(response)
            }
            Some(Err(read_error)) => {
                // The worker broke its side of the protocol or died: find out how, for the message.
                let signal = worker.process.ended_by_signal().await;
                worker.finish().await;
                drop(permit);
                self.refill();
                Err(RunError::Worker(describe_death(read_error, signal)))
            }
            None => {
                worker.finish().await;
                drop(permit);
                self.refill();
                if let Some(max) = spilled_past {
                    Err(RunError::Worker(WorkerError::new(
                        ErrorKind::ResourceLimit,
                        temp_dir::over_cap_message(max),
                    )))
                } else if cancel.is_cancelled() {
                    Err(RunError::Cancelled)
                } else {
                    Err(RunError::Timeout)
                }
            }
        }
    }

    /// A worker that replied has nothing left to do that matters (it released the database's
    /// lock before replying; DuckDB's teardown would only free memory): kill and reap it at
    /// once, which frees its memory faster than its own exit would, remove its temporary
    /// directory, free its slot, and only then start its replacement.
    fn reap_then_refill(self: &Arc<Self>, worker: ReadyWorker, permit: OwnedSemaphorePermit) {
        let pool = Arc::clone(self);
        let reaping = Arc::clone(&self.running.reaping);
        reaping.fetch_add(1, Ordering::SeqCst);
        tokio::spawn(async move {
            worker.finish().await;
            drop(permit);
            reaping.fetch_sub(1, Ordering::SeqCst);
            pool.refill();
        });
    }

    async fn take_worker(self: &Arc<Self>) -> Result<ReadyWorker, WorkerError> {
        let current = file_identity(&self.spec.worker.db);
        let mut stale = Vec::new();
        let taken = {
            let mut spares = self.spares.lock().await;
            let mut found = None;
            while let Some(mut w) = spares.pop_front() {
                // A spare that died while waiting (killed from outside, OOM) is not handed out.
                let alive = w.process.is_alive();
                if alive && w.db_identity == current {
                    found = Some(w);
                    break;
                }
                stale.push(w);
            }
            found
        };
        for w in stale {
            w.finish().await;
        }
        match taken {
            Some(w) => Ok(w),
            // Nobody waits for a spare's start-up, but this caller waits for this one's.
            None => self.start_worker(WorkerStart::OnDemand).await,
        }
    }

    /// Kill every spare, then the template (shutdown).
    pub async fn drain(&self) {
        let spares: VecDeque<ReadyWorker> = std::mem::take(&mut *self.spares.lock().await);
        for w in spares {
            w.finish().await;
        }
        if let TemplateState::Running { zygote, .. } = &*self.template.lock().await {
            zygote.stop().await;
        }
    }
}

/// The start-up preflight ([`crate::sandbox::preflight`]): run our binary as a worker that
/// confines itself exactly as every worker does, reports the posture it got and exits without
/// opening DuckDB or the database.
pub async fn confinement_preflight(spec: &WorkerSpec) -> Result<Posture, WorkerError> {
    let (mut worker, posture) = launch(spec, WorkerStart::ConfineOnly).await?;
    worker.process.ended_by_signal().await;
    worker.finish().await;
    Ok(posture)
}

/// The private temporary directory for a new worker, and what it may hold: never more than
/// the disk has free now (a tenth kept back for everyone else).
fn worker_temp(spec: &WorkerSpec) -> Result<(Option<WorkerTempDir>, u64), WorkerError> {
    match &spec.temp_root {
        Some(root) => {
            let dir = root.worker_dir().map_err(|e| {
                internal(format!(
                    "could not make a worker's temporary directory in {}: {e}",
                    root.instance().display()
                ))
            })?;
            Ok((
                Some(dir),
                spec.worker.max_temp_bytes.min(root.free_bytes() / 10 * 9),
            ))
        }
        None => Ok((None, 0)),
    }
}

/// Spawn a worker and wait for its ready report (for the preflight: its only report).
async fn launch(
    spec: &WorkerSpec,
    start: WorkerStart,
) -> Result<(ReadyWorker, Posture), WorkerError> {
    let db_identity = file_identity(&spec.worker.db);
    let (temp, max_temp_bytes) = worker_temp(spec)?;
    let args = WorkerArgs {
        start,
        temp_dir: temp.as_ref().map(|t| t.path().to_path_buf()),
        max_temp_bytes,
        ..spec.worker.clone()
    };
    let mut cmd = Command::new(&spec.exe);
    cmd.args(args.to_argv());
    // The worker sees nothing of the operator's environment but the test switch.
    cmd.env_clear();
    if !spec.bypass.is_empty() {
        cmd.env(bypass::ENV_VAR, spec.bypass.to_env_value());
    }
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        // A pipe, never the server's own stderr: the worker's RLIMIT_FSIZE is 0, so if that
        // stderr were a file every log line would fail. The parent forwards the lines.
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    let mut child = cmd.spawn().map_err(|e| {
        internal(format!(
            "could not start a worker process ({}): {e}",
            spec.exe.display()
        ))
    })?;
    if let Some(stderr) = child.stderr.take() {
        forward_stderr(stderr, child.id().unwrap_or(0));
    }
    let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
        kill_and_reap(&mut child).await;
        return Err(internal("worker pipes were not set up".into()));
    };
    let worker = ReadyWorker {
        process: WorkerProcess::Spawned(child),
        input: Box::new(stdin),
        output: Box::new(stdout),
        db_identity,
        temp,
        max_temp_bytes,
    };
    await_ready(worker, spec.startup_timeout).await
}

/// Have the template fork a worker, and wait for its ready report.
async fn fork_worker(spec: &WorkerSpec, zygote: &Arc<Zygote>) -> Result<ReadyWorker, WorkerError> {
    let db_identity = file_identity(&spec.worker.db);
    let (temp, max_temp_bytes) = worker_temp(spec)?;
    let child = zygote
        .fork(
            temp.as_ref().map(|t| t.path().to_path_buf()),
            max_temp_bytes,
            spec.startup_timeout,
        )
        .await
        .map_err(|e| internal(format!("the template could not fork a worker: {e}")))?;
    let (output, input) = child.stream.into_split();
    let worker = ReadyWorker {
        process: WorkerProcess::Forked {
            pid: child.pid,
            zygote: Arc::clone(zygote),
            exited: child.exited,
            ended: None,
        },
        input: Box::new(input),
        output: Box::new(output),
        db_identity,
        temp,
        max_temp_bytes,
    };
    await_ready(worker, spec.startup_timeout)
        .await
        .map(|(w, _)| w)
}

/// Wait for a new worker's ready report; on anything else, end it and say why.
async fn await_ready(
    mut worker: ReadyWorker,
    startup_timeout: Duration,
) -> Result<(ReadyWorker, Posture), WorkerError> {
    let ready = tokio::time::timeout(
        startup_timeout,
        read_frame_async(&mut worker.output, 1024 * 1024),
    )
    .await;
    // The ready frame carries the posture at spawn time; `server_info` asks for the posture at
    // request time instead (see `probe_posture`), so for a worker this one only says "ready".
    let failure = match ready {
        Ok(Ok(Response::Posture(posture))) => return Ok((worker, posture)),
        Ok(Ok(Response::Error(e))) => e,
        Ok(Ok(other)) => internal(format!("worker sent {other:?} instead of its ready report")),
        Ok(Err(e)) => {
            let signal = worker.process.ended_by_signal().await;
            describe_death(e, signal)
        }
        Err(_) => internal(format!(
            "worker did not become ready within {} s",
            startup_timeout.as_secs()
        )),
    };
    worker.finish().await;
    Err(failure)
}

/// How often a running worker's temporary directory is measured.
const SPILL_POLL: Duration = Duration::from_millis(50);

/// Resolves (with the cap) once the worker's temporary directory holds more than its cap; never
/// without one. DuckDB's own `max_temp_directory_size` is not a hard bound (measured: 47 MB
/// spilled under an 8 MB setting), so the parent measures and the pool kills the worker past it.
/// Between two measurements a worker writes at most a disk's speed for 50 ms more.
async fn spill_overflow(spill: Option<(PathBuf, u64)>) -> u64 {
    let Some((dir, max)) = spill else {
        return std::future::pending().await;
    };
    loop {
        tokio::time::sleep(SPILL_POLL).await;
        if temp_dir::bytes_used(&dir) > max {
            return max;
        }
    }
}

/// Drain a worker's (or the template's) stderr into the server's log until it exits. Reads in
/// bounded chunks: a compromised worker must not make the parent buffer without limit.
pub(crate) fn forward_stderr(mut stderr: tokio::process::ChildStderr, pid: u32) {
    tokio::spawn(async move {
        let mut buf = vec![0u8; 4096];
        while let Ok(n) = stderr.read(&mut buf).await {
            if n == 0 {
                break;
            }
            let text = String::from_utf8_lossy(&buf[..n]);
            for line in text.lines().filter(|l| !l.trim().is_empty()) {
                tracing::warn!(worker = pid, "{line}");
            }
        }
    });
}

async fn exchange(
    worker: &mut ReadyWorker,
    request: &Request,
    max_reply_bytes: usize,
) -> Result<Response, frame::FrameError> {
    worker
        .input
        .write_all(&frame::encode(request))
        .await
        .map_err(frame::FrameError::Io)?;
    worker.input.flush().await.map_err(frame::FrameError::Io)?;
    read_frame_async(&mut worker.output, max_reply_bytes).await
}

async fn read_frame_async(
    out: &mut (impl AsyncRead + Unpin),
    cap: usize,
) -> Result<Response, frame::FrameError> {
    let mut prefix = [0u8; 4];
    read_exact_async(out, &mut prefix).await?;
    let len = frame::announced_len(prefix, cap)?;
    let mut body = vec![0u8; len];
    read_exact_async(out, &mut body).await?;
    frame::decode(&body)
}

async fn read_exact_async(
    out: &mut (impl AsyncRead + Unpin),
    buf: &mut [u8],
) -> Result<(), frame::FrameError> {
    out.read_exact(buf)
        .await
        .map(|_| ())
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::UnexpectedEof => frame::FrameError::Closed,
            _ => frame::FrameError::Io(e),
        })
}

/// SIGKILL the worker's whole process group (it leads its own group), then reap it.
async fn kill_and_reap(child: &mut Child) {
    if let Some(pid) = child.id() {
        // ESRCH means it is already gone, which is what we want.
        let _ = killpg(Pid::from_raw(pid as i32), Signal::SIGKILL);
    }
    let _ = child.kill().await;
    let _ = child.wait().await;
}

async fn wait_briefly(child: &mut Child) -> Option<ExitStatus> {
    tokio::time::timeout(Duration::from_millis(500), child.wait())
        .await
        .ok()
        .and_then(Result::ok)
}

fn describe_death(read_error: frame::FrameError, signal: Option<i32>) -> WorkerError {
    match (&read_error, signal) {
        (_, Some(sig)) if sig == Signal::SIGXCPU as i32 => WorkerError::new(
            ErrorKind::ResourceLimit,
            "The query used up its CPU-time allowance and was stopped. Add filters or aggregate less data.",
        ),
        (_, Some(sig)) => WorkerError::new(
            ErrorKind::InternalError,
            format!(
                "The query's worker process died (signal {sig}) before answering. The server is fine; retry the call, and if it keeps happening simplify the query."
            ),
        ),
        (frame::FrameError::TooLarge { announced, cap }, None) => WorkerError::new(
            ErrorKind::ResourceLimit,
            format!(
                "The worker's reply ({announced} bytes) is above the cap of {cap} bytes. Select fewer columns or rows."
            ),
        ),
        _ => WorkerError::new(
            ErrorKind::InternalError,
            format!(
                "The query's worker process failed before answering ({read_error}). The server is fine; retry the call."
            ),
        ),
    }
}

fn internal(message: String) -> WorkerError {
    WorkerError::new(ErrorKind::InternalError, message)
}

#[cfg(test)]
mod tests {
    use super::*;

    const LONG: Duration = Duration::from_secs(30);

    #[test]
    fn the_line_counts_who_is_ahead_and_forgets_who_left() {
        let mut line = WaitLine::default();
        let (a, ahead_a) = line.join();
        let (b, ahead_b) = line.join();
        assert_eq!((ahead_a, ahead_b), (0, 1));
        line.leave(a);
        let (_, ahead_c) = line.join();
        assert_eq!(ahead_c, 1, "only b is still waiting");
        line.leave(b);
        line.leave(b);
        assert_eq!(line.waiting.len(), 1);
    }

    #[test]
    fn the_busy_message_names_the_calls_ahead_and_says_to_retry() {
        let busy = Busy {
            running: 4,
            waiting_ahead: 3,
            waited: Duration::from_millis(10_020),
        };
        assert_eq!(
            busy.message(),
            "The server is busy: 4 queries are running and 3 were waiting ahead of this one; no worker came free within 10 s, so this query did not run. Retry in a few seconds."
        );
        let one = Busy {
            running: 1,
            waiting_ahead: 1,
            waited: Duration::from_secs(2),
        }
        .message();
        assert!(
            one.contains("1 query is running and 1 was waiting ahead"),
            "{one}"
        );
        let none = Busy {
            running: 2,
            waiting_ahead: 0,
            waited: Duration::from_secs(2),
        }
        .message();
        assert!(
            none.contains("2 queries are running and no other call was waiting"),
            "{none}"
        );
        assert!(!none.to_lowercase().contains("timed out"), "{none}");
    }

    #[tokio::test]
    async fn a_free_slot_is_taken_at_once_even_with_no_queue_time() {
        let slots = Slots::new(2);
        let cancel = CancellationToken::new();
        let _a = slots
            .acquire(Duration::ZERO, &cancel)
            .await
            .expect("a free slot");
        let _b = slots
            .acquire(Duration::ZERO, &cancel)
            .await
            .expect("a free slot");
        match slots.acquire(Duration::ZERO, &cancel).await {
            Err(RunError::Busy(busy)) => assert_eq!(busy.running, 2),
            other => panic!("expected busy, got {other:?}"),
        }
    }

    #[tokio::test]
    async fn a_call_waiting_past_the_bound_is_busy_with_those_ahead_counted() {
        let slots = Slots::new(1);
        let cancel = CancellationToken::new();
        let _running = slots.acquire(LONG, &cancel).await.expect("a free slot");
        // `join!` polls in order: the first waiter joins the line first.
        let (first, second) = tokio::join!(
            slots.acquire(Duration::from_millis(400), &cancel),
            slots.acquire(Duration::from_millis(100), &cancel),
        );
        match second {
            Err(RunError::Busy(busy)) => {
                assert_eq!((busy.running, busy.waiting_ahead), (1, 1));
                assert!(busy.waited >= Duration::from_millis(100), "{busy:?}");
            }
            other => panic!("expected busy, got {other:?}"),
        }
        match first {
            Err(RunError::Busy(busy)) => assert_eq!((busy.running, busy.waiting_ahead), (1, 0)),
            other => panic!("expected busy, got {other:?}"),
        }
        assert!(slots.line.lock().unwrap().waiting.is_empty());
    }

    #[tokio::test]
    async fn a_slot_freed_in_time_goes_to_the_waiting_call() {
        let slots = Slots::new(1);
        let cancel = CancellationToken::new();
        let running = slots.acquire(LONG, &cancel).await.expect("a free slot");
        let (waiter, ()) = tokio::join!(slots.acquire(LONG, &cancel), async {
            tokio::time::sleep(Duration::from_millis(50)).await;
            drop(running);
        });
        assert!(waiter.is_ok());
        assert!(slots.line.lock().unwrap().waiting.is_empty());
    }

    #[tokio::test]
    async fn cancelling_a_waiting_call_answers_cancelled_at_once() {
        let slots = Slots::new(1);
        let cancel = CancellationToken::new();
        let _running = slots
            .acquire(LONG, &CancellationToken::new())
            .await
            .expect("a free slot");
        let started = std::time::Instant::now();
        let (waiter, ()) = tokio::join!(slots.acquire(LONG, &cancel), async {
            tokio::time::sleep(Duration::from_millis(50)).await;
            cancel.cancel();
        });
        assert!(matches!(waiter, Err(RunError::Cancelled)), "{waiter:?}");
        assert!(started.elapsed() < Duration::from_secs(5));
        assert!(slots.line.lock().unwrap().waiting.is_empty());
    }
}
