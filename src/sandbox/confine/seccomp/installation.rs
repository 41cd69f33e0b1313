//! Step 6 itself: install the filters, or, on a kernel without seccomp, say how it showed that
//! (which `allow_unconfined` accepts as a gap in the posture).

use nix::libc;

use super::{Arch, FilterScope, compile_for};
use crate::protocol::SeccompAbsence;
use crate::sandbox::confine::ConfineError;

/// What step 6 put in force.
pub(in crate::sandbox::confine) struct SeccompOutcome {
    /// Whether the filters are installed: `false` only when the kernel has no seccomp and the
    /// operator allowed running without it.
    pub(in crate::sandbox::confine) enforced: bool,
    /// How the kernel showed it has no seccomp, in that case (for the posture).
    pub(in crate::sandbox::confine) gap: Option<SeccompAbsence>,
}

/// Step 6: install the filters on every thread (there is only one; TSYNC makes sure), in the
/// order `compile_for` gives them: the allowlist last.
///
/// The kernel has no seccomp when `/proc/self/status` has no `Seccomp:` line (read by step 0:
/// the kernel prints it only when built with `CONFIG_SECCOMP`), or when installing the first
/// filter fails with `ENOSYS` (no `seccomp` system call) or `EINVAL` (a kernel without
/// `CONFIG_SECCOMP_FILTER` answers `SECCOMP_SET_MODE_FILTER` so; our filters are well-formed and
/// within the kernel's 4096-instruction limit, which
/// `filters_compile_for_every_architecture_within_the_kernels_limit` checks). That is
/// [`ConfineError::SeccompUnavailable`], which `allow_unconfined` turns into a posture without
/// a filter; every other failure is [`ConfineError::SeccompInstall`] whatever the operator
/// allowed.
pub(in crate::sandbox::confine) fn install(
    kernel_has_seccomp: bool,
    allow_unconfined: bool,
    scope: &FilterScope,
    stacked_on: Option<&FilterScope>,
) -> Result<SeccompOutcome, ConfineError> {
    let unavailable = |evidence: SeccompAbsence| {
        if allow_unconfined {
            Ok(SeccompOutcome {
                enforced: false,
                gap: Some(evidence),
            })
        } else {
            Err(ConfineError::SeccompUnavailable { evidence })
        }
    };
    if !kernel_has_seccomp {
        return unavailable(SeccompAbsence::NotBuiltIn);
    }
    let arch = Arch::native().ok_or(ConfineError::SeccompArchitecture {
        arch: std::env::consts::ARCH,
    })?;
    let programs = compile_for(arch, scope, stacked_on).map_err(ConfineError::SeccompBuild)?;
    for (index, program) in programs.iter().enumerate() {
        match seccompiler::apply_filter_all_threads(program) {
            Ok(()) => {}
            // Only before anything is installed: once a filter is in (the template's, under a
            // stacked one), the kernel has seccomp.
            Err(error) if index == 0 && stacked_on.is_none() => {
                match kernel_lacks_filters(&error) {
                    Some(evidence) => return unavailable(evidence),
                    None => return Err(ConfineError::SeccompInstall(error)),
                }
            }
            Err(error) => return Err(ConfineError::SeccompInstall(error)),
        }
    }
    Ok(SeccompOutcome {
        enforced: true,
        gap: None,
    })
}

/// Whether an install error means "this kernel has no seccomp filters", and how it said so.
fn kernel_lacks_filters(error: &seccompiler::Error) -> Option<SeccompAbsence> {
    let seccompiler::Error::Seccomp(io) = error else {
        return None;
    };
    match io.raw_os_error() {
        Some(libc::ENOSYS) => Some(SeccompAbsence::NoSystemCall),
        Some(libc::EINVAL) => Some(SeccompAbsence::NoFilterSupport),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn enosys_and_einval_mean_no_seccomp_other_errors_do_not() {
        let install_error =
            |errno: i32| seccompiler::Error::Seccomp(std::io::Error::from_raw_os_error(errno));
        assert_eq!(
            kernel_lacks_filters(&install_error(libc::ENOSYS)),
            Some(SeccompAbsence::NoSystemCall)
        );
        assert_eq!(
            kernel_lacks_filters(&install_error(libc::EINVAL)),
            Some(SeccompAbsence::NoFilterSupport)
        );
        assert_eq!(kernel_lacks_filters(&install_error(libc::EPERM)), None);
        assert_eq!(kernel_lacks_filters(&install_error(libc::EFAULT)), None);
        assert_eq!(
            kernel_lacks_filters(&seccompiler::Error::Prctl(
                std::io::Error::from_raw_os_error(libc::ENOSYS)
            )),
            None
        );
    }
}
