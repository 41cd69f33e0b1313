//! The parent side: spawn single-use workers, keep warm spares, bound concurrency, enforce the
//! deadline and cancellation by killing the worker's whole process group.
//!
//! A worker is never reused: after one request it exits (or is killed), so whatever a query did
//! to its process cannot reach the next one.
//!
//! The pool and its public API are here; the concurrency bound in `slots.rs`, a ready worker's
//! process in `worker_process.rs`, starting one (spawned or forked) in `start.rs`, and the one
//! request and reply over its pipes in `exchange.rs`.

mod exchange;
mod slots;
mod start;
mod worker_process;

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use tokio::sync::{Mutex, OwnedSemaphorePermit};
use tokio_util::sync::CancellationToken;

use crate::protocol::worker_args::{WorkerArgs, WorkerStart};
use crate::protocol::{Failure, Posture, Request, Response};
use crate::sandbox::bypass::Bypass;
use crate::sandbox::temp_dir::{self, TempRoot};
use crate::sandbox::zygote::handle::Zygote;
use duckgate_validate::error::ErrorKind;

use exchange::{describe_death, exchange, spill_overflow};
use slots::Slots;
pub use slots::{Busy, RunError};
pub use start::confinement_preflight;
use start::{fork_worker, launch};
use worker_process::{FileIdentity, ReadyWorker, file_identity};

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

/// Single-use workers with warm spares and a concurrency bound.
#[derive(Debug)]
pub struct Pool {
    spec: WorkerSpec,
    /// Newest first: a call takes the spare that became ready last. A forked spare warms its
    /// request paths in its own process once it has waited a moment (`worker::WARM_UP_GRACE`),
    /// which costs ~11 ms of CPU. Back to back, the newest has waited about one call, too
    /// short to have started, so calls never compete with warm-ups (the older spares warm once
    /// and wait for a burst); after a pause, every spare has warmed.
    spares: Mutex<Vec<ReadyWorker>>,
    /// Spares being started right now. Counted with the ready ones, under the `spares` lock, so
    /// that two refills racing (one per reply, back to back) do not start more than the target.
    starting: AtomicUsize,
    /// Set by [`Pool::drain`]: no spare is started or kept from then on (a refill racing the
    /// shutdown would otherwise fork from a dying template, then spawn).
    closing: AtomicBool,
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
    Running(UsableTemplate),
    /// Workers are spawned, and why.
    Unavailable { reason: String },
}

/// A running template to fork from, and the database identity it was started for.
#[derive(Debug, Clone)]
struct UsableTemplate {
    zygote: Arc<Zygote>,
    /// What its workers are labelled with, whatever the file is when each is forked: the
    /// template's landlock rules name the file as it was then, and the pool retires the
    /// template (killing its workers) once the file differs from this. A worker labelled with
    /// the file as seen at its fork could be handed a call its template is then retired under.
    db_identity: Option<FileIdentity>,
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
            spares: Mutex::new(Vec::new()),
            closing: AtomicBool::new(false),
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
            TemplateState::Running(UsableTemplate { zygote, .. }) => match zygote.death() {
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
    async fn usable_template(self: &Arc<Self>, for_spare: bool) -> Option<UsableTemplate> {
        let current = file_identity(&self.spec.worker.db);
        let mut state = self.template.lock().await;
        if let TemplateState::Running(template) = &*state {
            let zygote = &template.zygote;
            match zygote.death() {
                None if template.db_identity == current => return Some(template.clone()),
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
            TemplateState::Running(template) => return Some(template.clone()),
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
            TemplateState::Running(template) => Some(template.clone()),
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
            Ok(zygote) => TemplateState::Running(UsableTemplate {
                zygote,
                db_identity,
            }),
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
    async fn start_worker(self: &Arc<Self>, start: WorkerStart) -> Result<ReadyWorker, Failure> {
        if let Some(template) = self.usable_template(start == WorkerStart::Spare).await {
            match fork_worker(&self.spec, &template).await {
                Ok(worker) => return Ok(worker),
                // Shutting down: the template is being stopped, and nothing needs a worker.
                Err(e) if self.closing.load(Ordering::SeqCst) => return Err(e),
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
                    if pool.closing.load(Ordering::SeqCst)
                        || spares.len() + pool.starting.load(Ordering::SeqCst) >= pool.warm_target
                    {
                        return;
                    }
                    pool.starting.fetch_add(1, Ordering::SeqCst);
                }
                let started = pool.start_worker(WorkerStart::Spare).await;
                let mut spares = pool.spares.lock().await;
                pool.starting.fetch_sub(1, Ordering::SeqCst);
                match started {
                    Ok(worker) if pool.closing.load(Ordering::SeqCst) => {
                        drop(spares);
                        worker.finish().await;
                        return;
                    }
                    Ok(worker) => spares.push(worker),
                    Err(_) if pool.closing.load(Ordering::SeqCst) => return,
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
    pub async fn probe_posture(self: &Arc<Self>, deadline: Duration) -> Result<Posture, Failure> {
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
            Err(RunError::Busy(busy)) => Err(Failure::new(ErrorKind::Busy, busy.message())),
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
                    Err(RunError::Worker(Failure::new(
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

    async fn take_worker(self: &Arc<Self>) -> Result<ReadyWorker, Failure> {
        let current = file_identity(&self.spec.worker.db);
        let mut stale = Vec::new();
        let taken = {
            let mut spares = self.spares.lock().await;
            let mut found = None;
            while let Some(mut w) = spares.pop() {
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

    /// How many spares are ready to be handed out.
    pub async fn spares_ready(&self) -> usize {
        self.spares.lock().await.len()
    }

    /// Kill every spare, then the template (shutdown).
    pub async fn drain(&self) {
        self.closing.store(true, Ordering::SeqCst);
        let spares: Vec<ReadyWorker> = std::mem::take(&mut *self.spares.lock().await);
        for w in spares {
            w.finish().await;
        }
        if let TemplateState::Running(template) = &*self.template.lock().await {
            template.zygote.stop().await;
        }
    }
}

fn internal(message: String) -> Failure {
    Failure::new(ErrorKind::InternalError, message)
}
