//! Steps 1–3: process attributes set with `prctl(2)`.

use nix::sys::prctl;
use nix::sys::signal::Signal;
use nix::unistd::getppid;

use super::ConfineError;

/// Step 1: `PR_SET_NO_NEW_PRIVS`, then read it back: exec can no longer grant privileges, and
/// the kernel lets an unprivileged process install landlock and seccomp only with it set.
pub(super) fn set_no_new_privs() -> Result<(), ConfineError> {
    prctl::set_no_new_privs().map_err(ConfineError::NoNewPrivs)?;
    match prctl::get_no_new_privs() {
        Ok(true) => Ok(()),
        Ok(false) => Err(ConfineError::NoNewPrivs(nix::errno::Errno::EINVAL)),
        Err(e) => Err(ConfineError::NoNewPrivs(e)),
    }
}

/// Whether `PR_SET_NO_NEW_PRIVS` is in force (for the posture report).
pub(super) fn no_new_privs_is_set() -> bool {
    prctl::get_no_new_privs().unwrap_or(false)
}

/// Step 2: SIGKILL when the parent dies, then check the parent is still the one we expect.
///
/// If the server died between spawning us and this call, we were already re-parented (to init
/// or a subreaper) and the signal will never come: `getppid()` tells. Note the kernel sends the
/// signal when the parent *thread* that spawned us exits, so the server must spawn workers from
/// threads that live as long as it does (tokio's runtime worker threads, not its blocking pool).
pub(super) fn die_with_parent(expected_parent: i32) -> Result<(), ConfineError> {
    prctl::set_pdeathsig(Signal::SIGKILL).map_err(ConfineError::ParentDeathSignal)?;
    let actual = getppid().as_raw();
    if actual != expected_parent {
        return Err(ConfineError::ParentGone {
            expected: expected_parent,
            actual,
        });
    }
    Ok(())
}

/// Step 3: `PR_SET_DUMPABLE 0`: no core file, and `/proc/<pid>/mem`, `environ`, … and ptrace
/// of the worker become root-only, so another compromised worker of the same user cannot reach
/// into this one.
pub(super) fn set_not_dumpable() -> Result<(), ConfineError> {
    prctl::set_dumpable(false).map_err(ConfineError::NotDumpable)
}
