//! The one request and reply over a worker's pipes, what to tell the agent when the worker died
//! instead of answering, and the watch on its temporary directory while it runs.

use std::path::PathBuf;
use std::time::Duration;

use nix::sys::signal::Signal;
use tokio::io::{AsyncRead, AsyncWriteExt};

use super::worker_process::ReadyWorker;
use crate::protocol::{Failure, Request, Response};
use crate::sandbox::frame;
use crate::sandbox::temp_dir;
use duckgate_validate::error::ErrorKind;

/// How often a running worker's temporary directory is measured.
const SPILL_POLL: Duration = Duration::from_millis(50);

/// Resolves (with the cap) once the worker's temporary directory holds more than its cap; never
/// without one. DuckDB's own `max_temp_directory_size` is not a hard bound (measured: 47 MB
/// spilled under an 8 MB setting), so the parent measures and the pool kills the worker past it.
/// Between two measurements a worker writes at most a disk's speed for 50 ms more.
pub(super) async fn spill_overflow(spill: Option<(PathBuf, u64)>) -> u64 {
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

pub(super) async fn exchange(
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

pub(super) async fn read_frame_async(
    out: &mut (impl AsyncRead + Unpin),
    cap: usize,
) -> Result<Response, frame::FrameError> {
    frame::read_frame_async(out, cap).await
}

pub(super) fn describe_death(read_error: frame::FrameError, signal: Option<i32>) -> Failure {
    match (&read_error, signal) {
        (_, Some(sig)) if sig == Signal::SIGXCPU as i32 => Failure::new(
            ErrorKind::ResourceLimit,
            "The query used up its CPU-time allowance and was stopped. Add filters or aggregate less data.",
        ),
        (_, Some(sig)) => Failure::new(
            ErrorKind::InternalError,
            format!(
                "The query's worker process died (signal {sig}) before answering. The server is fine; retry the call, and if it keeps happening simplify the query."
            ),
        ),
        (frame::FrameError::TooLarge { announced, cap }, None) => Failure::new(
            ErrorKind::ResourceLimit,
            format!(
                "The worker's reply ({announced} bytes) is above the cap of {cap} bytes. Select fewer columns or rows."
            ),
        ),
        _ => Failure::new(
            ErrorKind::InternalError,
            format!(
                "The query's worker process failed before answering ({read_error}). The server is fine; retry the call."
            ),
        ),
    }
}
