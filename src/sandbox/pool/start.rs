//! Starting a worker: spawning our binary, or having the template fork one, then waiting for its
//! ready report; and the start-up preflight, which is a spawned worker that only confines itself.

use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use tokio::process::Command;

use super::exchange::{describe_death, read_frame_async};
use super::worker_process::{ReadyWorker, WorkerProcess, file_identity, kill_and_reap};
use super::{UsableTemplate, WorkerSpec, internal};
use crate::protocol::worker_args::{WorkerArgs, WorkerStart};
use crate::protocol::{Failure, Posture, Response};
use crate::sandbox::temp_dir::WorkerTempDir;

/// The start-up preflight ([`crate::sandbox::preflight`]): run our binary as a worker that
/// confines itself exactly as every worker does, reports the posture it got and exits without
/// opening DuckDB or the database.
pub async fn confinement_preflight(spec: &WorkerSpec) -> Result<Posture, Failure> {
    let (mut worker, posture) = launch(spec, WorkerStart::ConfineOnly).await?;
    worker.process.ended_by_signal().await;
    worker.finish().await;
    Ok(posture)
}

/// The private temporary directory for a new worker, and what it may hold: never more than
/// the disk has free now (a tenth kept back for everyone else).
fn worker_temp(spec: &WorkerSpec) -> Result<(Option<WorkerTempDir>, u64), Failure> {
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
pub(super) async fn launch(
    spec: &WorkerSpec,
    start: WorkerStart,
) -> Result<(ReadyWorker, Posture), Failure> {
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
    if let Some((name, value)) = spec.bypass.worker_env() {
        cmd.env(name, value);
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
        crate::sandbox::child_stderr::forward_stderr(stderr, child.id().unwrap_or(0));
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

/// Have the template fork a worker, and wait for its ready report. The worker is labelled with
/// the identity the template was started for (see [`UsableTemplate`]).
pub(super) async fn fork_worker(
    spec: &WorkerSpec,
    template: &UsableTemplate,
) -> Result<ReadyWorker, Failure> {
    let (temp, max_temp_bytes) = worker_temp(spec)?;
    let child = template
        .zygote
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
            zygote: Arc::clone(&template.zygote),
            exited: child.exited,
            ended: None,
        },
        input: Box::new(input),
        output: Box::new(output),
        db_identity: template.db_identity.clone(),
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
) -> Result<(ReadyWorker, Posture), Failure> {
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
