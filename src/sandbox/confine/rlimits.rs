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

use super::{ConfineError, ConfinePlan, Role};

/// The limits, in the order they are set: (resource, name in the posture, requested value).
fn limits(plan: &ConfinePlan) -> [(Resource, &'static str, u64); 6] {
    [
        // No core file: a crash must not write the worker's memory (query results) to disk.
        (Resource::RLIMIT_CORE, "RLIMIT_CORE", 0),
        // No file may grow past what the temporary directory may hold (0 without one: then the
        // worker writes nothing but its pipes, which this does not apply to). Backs up
        // landlock's "nothing writable but the temporary directory" and DuckDB's own
        // max_temp_directory_size.
        (Resource::RLIMIT_FSIZE, "RLIMIT_FSIZE", plan.file_size_bytes),
        // The worker's share of the memory budget: every private writable mapping counts, so
        // memory DuckDB's memory_limit does not track is bounded too
        // (`crate::sandbox::budget`).
        (Resource::RLIMIT_DATA, "RLIMIT_DATA", plan.data_bytes),
        // A backstop on address space (not a memory bound: reservations count, resident pages
        // are what RLIMIT_DATA bounds).
        (Resource::RLIMIT_AS, "RLIMIT_AS", plan.address_space_bytes),
        // Bounds CPU time even if the server's deadline were lost (SIGKILL at the limit). The
        // template lives as long as the server and is not limited; each child it forks starts
        // with a CPU time of zero and sets the worker's limit.
        (
            Resource::RLIMIT_CPU,
            "RLIMIT_CPU",
            match plan.role {
                Role::Worker => plan.cpu_seconds,
                Role::Template => u64::MAX,
            },
        ),
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
/// A write that extends a regular file past the file-size limit raises SIGXFSZ, whose default
/// action kills the process. With SIGXFSZ blocked (the mask is inherited by every thread started
/// later), the kernel still refuses the write, with `EFBIG`, which DuckDB reports as an error.
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
