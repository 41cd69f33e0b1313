//! A ready worker and its process: spawned by the server or forked by the template, and how
//! each is ended and reaped; and the database file's identity a worker was confined to.

use std::os::unix::fs::MetadataExt;
use std::process::ExitStatus;
use std::sync::Arc;
use std::time::Duration;

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::process::Child;
use tokio::sync::oneshot;

use super::slots::REAP_WAIT;
use crate::protocol::databases::Database;
use crate::sandbox::temp_dir::WorkerTempDir;
use crate::sandbox::zygote::handle::{Exit, Zygote};

/// A confined, DuckDB-warm worker waiting for its one request.
pub(super) struct ReadyWorker {
    pub(super) process: WorkerProcess,
    /// Its standard input: a pipe (spawned) or its socket (forked).
    pub(super) input: Box<dyn AsyncWrite + Unpin + Send>,
    /// Its standard output, likewise.
    pub(super) output: Box<dyn AsyncRead + Unpin + Send>,
    /// The database's identity and WAL presence when the worker confined itself: its landlock
    /// rules name those inodes, so a replaced file or a new WAL needs a fresh worker.
    pub(super) db_identity: Option<FileIdentity>,
    /// Its private temporary directory, removed only once the process has been reaped
    /// ([`ReadyWorker::finish`]).
    pub(super) temp: Option<WorkerTempDir>,
    /// What that directory may hold.
    pub(super) max_temp_bytes: u64,
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
pub(super) enum WorkerProcess {
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
    pub(super) fn is_alive(&mut self) -> bool {
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
    pub(super) async fn kill_and_reap(&mut self) {
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
    pub(super) async fn ended_by_signal(&mut self) -> Option<i32> {
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
    pub(super) async fn finish(mut self) {
        self.process.kill_and_reap().await;
        drop(self.temp.take());
    }
}

/// The identity of every database's files, in the order declared: each file's device and
/// inode and its `.wal`'s, `None` for a file that is not there. A worker's landlock rules name
/// exactly these inodes, so a worker is usable while they are unchanged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct FileIdentity(Vec<Option<OneFile>>);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct OneFile {
    dev: u64,
    ino: u64,
    wal: Option<(u64, u64)>,
}

/// [`FileIdentity`] as the files are now; `None` when no database file is there at all.
pub(super) fn file_identity(databases: &[Database]) -> Option<FileIdentity> {
    let files: Vec<Option<OneFile>> = databases
        .iter()
        .map(|database| {
            let meta = std::fs::metadata(&database.path).ok()?;
            let wal = std::fs::metadata(database.wal())
                .ok()
                .map(|m| (m.dev(), m.ino()));
            Some(OneFile {
                dev: meta.dev(),
                ino: meta.ino(),
                wal,
            })
        })
        .collect();
    files
        .iter()
        .any(Option::is_some)
        .then_some(FileIdentity(files))
}

/// SIGKILL the worker's whole process group (it leads its own group), then reap it.
pub(super) async fn kill_and_reap(child: &mut Child) {
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
