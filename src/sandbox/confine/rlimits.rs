//! Step 4: resource limits.
//!
//! Each limit is set with soft = hard, so the worker cannot raise it again (raising a hard limit
//! needs `CAP_SYS_RESOURCE`). A requested value above the current hard limit is lowered to it:
//! we never try to raise anything.
//!
//! Not set, on purpose: `RLIMIT_NPROC`. It counts every process and thread of the *user*
//! machine-wide, not of the worker, so any value either breaks DuckDB's thread pool (when the
//! user already runs that many) or bounds nothing. Process creation is stopped by the seccomp
//! filter instead (no `fork`, `vfork`, or `clone` without `CLONE_THREAD`), and the server's
//! deadline kills the worker's whole process group.

use nix::sys::resource::{Resource, getrlimit, setrlimit};
use nix::sys::signal::{SigSet, SigmaskHow, Signal, sigprocmask};

use super::{ConfineError, ConfinePlan};

/// The limits, in the order they are set: (resource, name in the posture, requested value).
fn limits(plan: &ConfinePlan) -> [(Resource, &'static str, u64); 5] {
    [
        // No core file: a crash must not write the worker's memory (query results) to disk.
        (Resource::RLIMIT_CORE, "RLIMIT_CORE", 0),
        // No file may grow: the worker writes nothing but its stdout pipe, which this does
        // not apply to. Backs up landlock's "nothing writable".
        (Resource::RLIMIT_FSIZE, "RLIMIT_FSIZE", 0),
        // Bounds memory even if DuckDB's own memory_limit is bypassed or not accounted.
        (Resource::RLIMIT_AS, "RLIMIT_AS", plan.address_space_bytes),
        // Bounds CPU time even if the server's deadline were lost (SIGKILL at the limit).
        (Resource::RLIMIT_CPU, "RLIMIT_CPU", plan.cpu_seconds),
        // Bounds open files.
        (
            Resource::RLIMIT_NOFILE,
            "RLIMIT_NOFILE",
            plan.max_open_files,
        ),
    ]
}

/// Step 4: set every limit, and block SIGXFSZ.
///
/// With a 0-byte file-size limit, a write that extends a regular file raises SIGXFSZ, whose
/// default action kills the process. The worker's stderr is inherited from the server and may
/// be a log file, so a stray log line would kill the worker. With SIGXFSZ blocked (the mask is
/// inherited by every thread started later), the kernel still refuses the write, with `EFBIG`.
///
/// Returns (name, value) pairs for the posture report.
pub(super) fn apply(plan: &ConfinePlan) -> Result<Vec<(String, String)>, ConfineError> {
    let mut applied = Vec::new();
    for (resource, name, requested) in limits(plan) {
        let (_, hard) = getrlimit(resource).map_err(|error| ConfineError::Rlimit {
            resource: name,
            error,
        })?;
        let value = requested.min(hard);
        setrlimit(resource, value, value).map_err(|error| ConfineError::Rlimit {
            resource: name,
            error,
        })?;
        applied.push((name.to_string(), value.to_string()));
    }
    let mut xfsz = SigSet::empty();
    xfsz.add(Signal::SIGXFSZ);
    sigprocmask(SigmaskHow::SIG_BLOCK, Some(&xfsz), None)
        .map_err(ConfineError::BlockFileSizeSignal)?;
    Ok(applied)
}
