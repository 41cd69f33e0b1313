//! The statement check on its own connection and thread.
//!
//! DuckDB's parser check (`json_serialize_sql`, see `statement.rs`) needs no database, and
//! attaching the database needs no parser check, so a request does both at once: the check
//! on a second connection to the same in-memory instance, on a thread started (and warmed)
//! before the request arrives. The query itself runs only after both have finished.

use std::sync::mpsc::{self, Receiver, Sender};

use duckdb::Connection;
use serde_json::Value as Json;

use super::errors::worker_error;
use super::statement;
use crate::error::ErrorKind;
use crate::protocol::WorkerError;

/// The checker thread's end of the conversation: SQL in, verdict out.
pub(super) struct Checker {
    requests: Sender<String>,
    verdicts: Receiver<Result<Json, WorkerError>>,
}

/// A check submitted and not yet collected (with [`Checker::collect`]).
#[must_use = "a submitted check must be collected before the query runs"]
pub(super) struct PendingCheck {
    _private: (),
}

impl Checker {
    /// Open a second connection on `conn`'s instance and start the thread that owns it.
    /// The thread checks `SELECT 1` first, so its one-time costs are paid before any request
    /// (see [`Checker::ready`]).
    pub(super) fn start(conn: &Connection) -> Result<Checker, WorkerError> {
        let own = conn.try_clone().map_err(|e| {
            worker_error(
                ErrorKind::InternalError,
                format!("Could not open the checker connection: {e}"),
            )
        })?;
        let (requests, incoming) = mpsc::channel::<String>();
        let (outgoing, verdicts) = mpsc::channel();
        std::thread::Builder::new()
            .name("duckgate-check".into())
            .spawn(move || {
                let warm = statement::check(&own, "SELECT 1");
                if outgoing.send(warm).is_err() {
                    return;
                }
                while let Ok(sql) = incoming.recv() {
                    if outgoing.send(statement::check(&own, &sql)).is_err() {
                        return;
                    }
                }
            })
            .map_err(|e| {
                worker_error(
                    ErrorKind::InternalError,
                    format!("Could not start the checker thread: {e}"),
                )
            })?;
        Ok(Checker { requests, verdicts })
    }

    /// Wait for the thread's warm-up check: a checker that cannot check `SELECT 1` must not
    /// serve. Called once, after [`Checker::start`], while the caller warms up meanwhile.
    pub(super) fn ready(&self) -> Result<(), WorkerError> {
        self.collect(PendingCheck { _private: () }).map(drop)
    }

    /// Hand `sql` to the checker thread; collect the verdict with [`Checker::collect`].
    pub(super) fn submit(&self, sql: &str) -> Result<PendingCheck, WorkerError> {
        self.requests
            .send(sql.to_owned())
            .map_err(|_| checker_gone())?;
        Ok(PendingCheck { _private: () })
    }

    /// The verdict on a submitted check, with DuckDB's syntax tree of the query when it passed.
    /// A checker that died gives an error, never a pass (fail closed).
    pub(super) fn collect(&self, _pending: PendingCheck) -> Result<Json, WorkerError> {
        self.verdicts.recv().map_err(|_| checker_gone())?
    }
}

fn checker_gone() -> WorkerError {
    worker_error(
        ErrorKind::InternalError,
        "DuckDB's statement check is not available (its thread has stopped).",
    )
}
