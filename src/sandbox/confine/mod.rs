//! The worker confines itself, before DuckDB exists, so every thread DuckDB starts inherits it.
//!
//! [`confine`] runs these steps in this order; each is one function and one [`ConfineError`]
//! variant, and the first failure stops everything (fail closed: the worker reports the error and
//! exits without ever opening DuckDB):
//!
//! 0. [`inspect_process`]: the process must be single-threaded (landlock below ABI 8 restricts only the
//!    calling thread, and a thread started earlier would escape it); note whether the kernel has
//!    seccomp at all. This reads `/proc/self/status`, which landlock will hide afterwards.
//! 1. [`prctl::set_no_new_privs`]: `PR_SET_NO_NEW_PRIVS`, so no exec can gain privileges (set-uid,
//!    file capabilities); landlock and seccomp also require it for unprivileged use.
//! 2. [`prctl::die_with_parent`]: parent-death signal SIGKILL, then re-check that our parent is
//!    still `plan.parent_pid` (it may have died between our fork and the prctl, in which case
//!    the signal will never come).
//! 3. [`prctl::set_not_dumpable`]: `PR_SET_DUMPABLE 0`: no core dumps, and other processes of
//!    the same user can no longer ptrace us or read our `/proc/<pid>/mem`.
//! 4. [`rlimits::apply`]: core 0, file size (0, or the temporary directory's cap), data (the
//!    worker's share of the memory budget), address space, CPU seconds, open files (soft = hard,
//!    so they cannot be raised again).
//! 5. [`landlock::restrict`]: every filesystem right of the newest landlock ABI the kernel
//!    offers handled, only read-file granted on the few `/proc` and `/sys` files DuckDB reads
//!    (no database: the worker opened those before, `crate::engine::HeldDatabases`), and read-write on the worker's own temporary directory; from ABI 4 TCP bind and connect handled with no port allowed;
//!    from ABI 6 signals and abstract unix sockets scoped.
//! 6. [`seccomp::install`]: an allowlist: only the system calls a worker is measured to make
//!    pass, some only with given arguments (threads but no process, signals to itself only, its
//!    own limits read; below landlock ABI 3 no read-only `O_TRUNC` open); every other call
//!    fails with `EPERM`, and the dangerous families (exec, process creation, ptrace,
//!    namespaces, io_uring, BPF, keyrings, module and kernel loading, mounts) kill the process.
//!    It is built after step 5, from the worker's pid and the ABI step 5 enforced, and comes
//!    last so that it need not allow the prctl, setrlimit and landlock calls made above; it
//!    forbids undoing steps 2 to 4.
//!
//! Confinement is a set of properties, not an ABI number ([`properties`]): for each one the
//! strongest mechanism the kernel offers is used, seccomp taking over where landlock is too old,
//! and the posture says which mechanism keeps which promise. The floor is landlock ABI 1 (Linux
//! 5.13) with seccomp filters: below it, the file allowlist (landlock) or the system-call filter
//! (seccomp) is missing. Then `confine` fails unless `plan.allow_unconfined` is set; with it, it
//! carries on with whatever the kernel offers and the returned [`Posture`] says exactly what is
//! and is not in force (`unenforced` names each gap and its cause). The server runs this same
//! function once at start-up, in a process that opens no database
//! ([`crate::sandbox::preflight`]), and refuses to start when a gap is found and the operator did
//! not pass `--allow-unconfined`.

mod landlock;
mod prctl;
pub mod properties;
mod rlimits;
mod seccomp;

use std::fmt;
use std::path::PathBuf;

use crate::protocol::{LandlockAbsence, LandlockStatus, Posture, SeccompAbsence, UnenforcedLayer};

pub use seccomp::NamedCalls;

/// The system calls the seccomp filter of `role` names on the architecture this binary runs
/// on: those it lets through (every other call fails with `EPERM`), those that kill the process,
/// those it answers `ENOSYS`. `None` on an architecture without a table.
pub fn system_calls_named(role: Role) -> Option<NamedCalls> {
    let arch = seccomp::Arch::native()?;
    seccomp::named_calls(role, arch).ok()
}

/// What landlock grants a worker beneath each declared folder, in words (the rights themselves
/// are `landlock::FOLDER_RIGHTS`): what `server_info` says of each folder.
pub fn folder_grants() -> Vec<&'static str> {
    landlock::FOLDER_RIGHTS
        .iter()
        .map(|(_, words)| *words)
        .collect()
}

/// The oldest landlock ABI accepted without `--allow-unconfined` (see `landlock::MINIMUM_ABI`).
pub const MINIMUM_LANDLOCK_ABI: u8 = 1;

/// The oldest Linux release with [`MINIMUM_LANDLOCK_ABI`].
pub const MINIMUM_LINUX: &str = "5.13";

/// What [`confine`] needs to know about the worker it confines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfinePlan {
    /// The worker's private temporary directory: read-write, the only place it may write.
    pub temp_dir: Option<PathBuf>,
    /// The operator's declared folders: read and list beneath each, nothing more.
    pub folders: Vec<PathBuf>,
    /// The pid the worker expects as its parent; checked after the parent-death signal is set.
    pub parent_pid: i32,
    /// RLIMIT_DATA in bytes: the worker's share of the memory budget.
    pub data_bytes: u64,
    /// RLIMIT_AS in bytes: a backstop above `data_bytes`.
    pub address_space_bytes: u64,
    /// RLIMIT_FSIZE in bytes: 0 without a temporary directory, else its size cap.
    pub file_size_bytes: u64,
    /// RLIMIT_CPU in seconds.
    pub cpu_seconds: u64,
    /// RLIMIT_NOFILE.
    pub max_open_files: u64,
    /// When the kernel lacks landlock or seccomp, carry on (the posture says so) instead of
    /// failing.
    pub allow_unconfined: bool,
    /// Test-only (`landlock_abi_N` in the test bypass): confine as if the kernel offered this
    /// landlock ABI at most.
    pub landlock_abi_cap: Option<u8>,
    /// A worker, or the zygote's template that forks workers.
    pub role: Role,
}

/// Which process is confined: the difference is exactly what forking workers needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// A process that answers one request: everything below, nothing loosened.
    Worker,
    /// The zygote's template ([`crate::sandbox::zygote`]): it runs no request and no SQL of the
    /// agent's, only the server's fork and kill orders. The same steps as a worker, except that
    /// its filter lets it create processes, SIGKILL them, and lets its children set their own
    /// parent-death signal and lower their limits (each child then confines itself as a
    /// [`Role::Worker`] on top, [`confine_forked_child`]); landlock also lets it list
    /// `/proc/self/task`, to count its threads before each fork; and it has no CPU-time limit
    /// (it lives as long as the server; each child gets the worker's).
    Template,
}

/// Which confinement step failed, and why. Each `Display` names the step.
#[derive(Debug)]
pub enum ConfineError {
    /// Step 0: `/proc/self/status` could not be read.
    InspectProcess(std::io::Error),
    /// Step 0: the process already runs other threads, which landlock would not confine.
    NotSingleThreaded {
        /// Threads counted in `/proc/self/status`.
        threads: usize,
    },
    /// Step 1: `PR_SET_NO_NEW_PRIVS` failed or did not stick.
    NoNewPrivs(nix::errno::Errno),
    /// Step 2: `PR_SET_PDEATHSIG` failed.
    ParentDeathSignal(nix::errno::Errno),
    /// Step 2: the parent is not the expected one (it died, and we were re-parented).
    ParentGone {
        /// The pid the plan expected.
        expected: i32,
        /// `getppid()` after setting the signal.
        actual: i32,
    },
    /// Step 3: `PR_SET_DUMPABLE 0` failed.
    NotDumpable(nix::errno::Errno),
    /// Step 4: reading or setting one resource limit failed.
    Rlimit {
        /// The limit, e.g. `RLIMIT_AS`.
        resource: &'static str,
        /// The error.
        error: nix::errno::Errno,
    },
    /// Step 4: blocking SIGXFSZ (so a write past the 0-byte file-size limit fails with `EFBIG`
    /// rather than killing the worker) failed.
    BlockFileSizeSignal(nix::errno::Errno),
    /// Step 5: the kernel has no usable landlock, or one older than the minimum ABI, and
    /// `allow_unconfined` is off.
    LandlockUnavailable {
        /// What the kernel offers.
        offered: LandlockAbsence,
    },
    /// Step 5: a path to be granted could not be opened.
    LandlockPath {
        /// The path.
        path: PathBuf,
        /// Why it is granted.
        purpose: &'static str,
        /// The error.
        error: ::landlock::PathFdError,
    },
    /// Step 5: building or enforcing the ruleset failed.
    Landlock(::landlock::RulesetError),
    /// Step 5: the kernel accepted the ruleset but reports it as not fully enforced.
    LandlockNotEnforced {
        /// The status the kernel reported.
        status: String,
    },
    /// Step 6: the kernel has no seccomp filter support and `allow_unconfined` is off.
    SeccompUnavailable {
        /// How the kernel showed it: no `Seccomp:` status line, or `ENOSYS`/`EINVAL` from
        /// `seccomp(2)`.
        evidence: SeccompAbsence,
    },
    /// Step 6: this architecture has no system-call table (the filter has x86_64's and
    /// aarch64's).
    SeccompArchitecture {
        /// The architecture, as Rust names it.
        arch: &'static str,
    },
    /// Step 6: building the filter failed (a bug in our rule table).
    SeccompBuild(seccompiler::BackendError),
    /// Step 6: installing the filter failed.
    SeccompInstall(seccompiler::Error),
}

impl fmt::Display for ConfineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfineError::InspectProcess(e) => {
                write!(
                    f,
                    "confine step 0 (process check): cannot read /proc/self/status: {e}"
                )
            }
            ConfineError::NotSingleThreaded { threads } => write!(
                f,
                "confine step 0 (process check): the worker already runs {threads} threads; it must \
                 confine itself while single-threaded"
            ),
            ConfineError::NoNewPrivs(e) => {
                write!(f, "confine step 1 (PR_SET_NO_NEW_PRIVS) failed: {e}")
            }
            ConfineError::ParentDeathSignal(e) => {
                write!(f, "confine step 2 (PR_SET_PDEATHSIG SIGKILL) failed: {e}")
            }
            ConfineError::ParentGone { expected, actual } => write!(
                f,
                "confine step 2 (parent check): parent pid is {actual}, expected {expected}; \
                 the server is gone"
            ),
            ConfineError::NotDumpable(e) => {
                write!(f, "confine step 3 (PR_SET_DUMPABLE 0) failed: {e}")
            }
            ConfineError::Rlimit { resource, error } => {
                write!(
                    f,
                    "confine step 4 (rlimits): setting {resource} failed: {error}"
                )
            }
            ConfineError::BlockFileSizeSignal(e) => {
                write!(f, "confine step 4 (rlimits): blocking SIGXFSZ failed: {e}")
            }
            ConfineError::LandlockUnavailable { offered } => write!(
                f,
                "confine step 5 (landlock): {offered}, but landlock ABI \
                 {MINIMUM_LANDLOCK_ABI} (Linux {MINIMUM_LINUX}) or newer is required; upgrade \
                 the kernel or pass --allow-unconfined to run with weaker isolation"
            ),
            ConfineError::LandlockPath {
                path,
                purpose,
                error,
            } => write!(
                f,
                "confine step 5 (landlock): cannot open {} ({purpose}) to grant read access: \
                 {error}",
                path.display()
            ),
            ConfineError::Landlock(e) => write!(f, "confine step 5 (landlock) failed: {e}"),
            ConfineError::LandlockNotEnforced { status } => write!(
                f,
                "confine step 5 (landlock): the ruleset is not fully enforced ({status})"
            ),
            ConfineError::SeccompUnavailable { evidence } => write!(
                f,
                "confine step 6 (seccomp): {evidence}; pass --allow-unconfined to run without \
                 a system-call filter"
            ),
            ConfineError::SeccompArchitecture { arch } => write!(
                f,
                "confine step 6 (seccomp): duckgate has no system-call table for {arch} (it has \
                 x86_64's and aarch64's), so it cannot build the filter; run duckgate on one of \
                 those"
            ),
            ConfineError::SeccompBuild(e) => {
                write!(
                    f,
                    "confine step 6 (seccomp): building the filter failed: {e}"
                )
            }
            ConfineError::SeccompInstall(e) => {
                write!(
                    f,
                    "confine step 6 (seccomp): installing the filter failed: {e}"
                )
            }
        }
    }
}

impl std::error::Error for ConfineError {}

/// Confine the calling process for good (see the module documentation for the ordered steps).
///
/// Must be called while the process is single-threaded, before DuckDB is created. Returns what
/// is actually in force; `duckdb_settings` and `bypassed_layers` are left for the caller.
pub fn confine(plan: &ConfinePlan) -> Result<Posture, ConfineError> {
    let kernel = inspect_process()?;
    confine_steps(plan, kernel, None).map(|(posture, _)| posture)
}

/// [`confine`] for the zygote's template: the same steps, and what its system-call filter was
/// built for, which each child it forks needs ([`confine_forked_child`]).
pub fn confine_template(
    plan: &ConfinePlan,
    kernel: ProcessInspection,
) -> Result<(Posture, TemplateFilter), ConfineError> {
    let (posture, installed) = confine_steps(plan, kernel, None)?;
    Ok((posture, TemplateFilter { installed }))
}

/// [`confine`] for a child the template has just forked: the same steps 1 to 6 with the plan of
/// a worker, and step 0's findings taken from the template, which inspected itself before its
/// own landlock hid `/proc`. The child is single-threaded by construction: it was forked
/// (`zygote_fork::fork_single_threaded`) and has started nothing yet.
///
/// Its system-call filter is stacked on the template's, which stays in force (a process cannot
/// shed a filter): the child installs only the worker's rules for the calls whose rules differ
/// from the template's (`seccomp::install`), so the two filters together deny exactly what the
/// template's and a whole worker's filter together would.
pub fn confine_forked_child(
    plan: &ConfinePlan,
    template: ProcessInspection,
    template_filter: &TemplateFilter,
) -> Result<Posture, ConfineError> {
    confine_steps(plan, template, template_filter.installed.as_ref()).map(|(posture, _)| posture)
}

/// The template's system-call filter as built, which its children stack theirs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TemplateFilter {
    /// `None` when no filter is in force (a kernel without seccomp, under
    /// `--allow-unconfined`): a child then tries a whole worker's filter.
    installed: Option<seccomp::FilterScope>,
}

/// Steps 1 to 6; `stacked_on`: the filter already in force, which step 6 adds to. Returns the
/// posture and the filter step 6 put in force (`None`: none).
fn confine_steps(
    plan: &ConfinePlan,
    kernel: ProcessInspection,
    stacked_on: Option<&seccomp::FilterScope>,
) -> Result<(Posture, Option<seccomp::FilterScope>), ConfineError> {
    prctl::set_no_new_privs()?;
    prctl::die_with_parent(plan.parent_pid)?;
    prctl::set_not_dumpable()?;
    let rlimits = rlimits::apply(plan)?;
    let landlock = landlock::restrict(plan, kernel.inherited_seccomp_filters)?;
    let scope = seccomp::FilterScope {
        own_pid: std::process::id() as i32,
        landlock_abi: landlock.abi,
        role: plan.role,
    };
    let seccomp = seccomp::install(
        kernel.has_seccomp,
        plan.allow_unconfined,
        &scope,
        stacked_on,
    )?;
    let no_new_privs = prctl::no_new_privs_is_set();
    let posture = Posture {
        landlock: match landlock.abi {
            Some(_) => LandlockStatus::FullyEnforced,
            None => LandlockStatus::NotEnforced,
        },
        landlock_abi: landlock.abi.map(i32::from),
        seccomp: seccomp.enforced,
        no_new_privs,
        rlimits,
        duckdb_settings: Vec::new(),
        bypassed_layers: Vec::new(),
        unenforced: landlock
            .gap
            .map(UnenforcedLayer::Landlock)
            .into_iter()
            .chain(seccomp.gap.map(UnenforcedLayer::Seccomp))
            .collect(),
        properties: properties::assess(&properties::Mechanisms {
            landlock_abi: landlock.abi,
            seccomp: seccomp.enforced,
            no_new_privs,
        }),
    };
    Ok((posture, seccomp.enforced.then_some(scope)))
}

/// What step 0 learned about the process and the kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProcessInspection {
    /// `/proc/self/status` has a `Seccomp:` line, which the kernel prints only when built with
    /// seccomp support.
    has_seccomp: bool,
    /// Seccomp filters already in force before any of duckgate's: a container runtime's
    /// profile, a service manager's filter. A forked child gets its template's count, from
    /// before the template's own filter. Step 5 names them when landlock's calls fail.
    inherited_seccomp_filters: u32,
}

/// Step 0: single-threaded check, and whether the kernel has seccomp.
pub fn inspect_process() -> Result<ProcessInspection, ConfineError> {
    let status =
        std::fs::read_to_string("/proc/self/status").map_err(ConfineError::InspectProcess)?;
    let threads = status_field(&status, "Threads")
        .and_then(|v| v.parse::<usize>().ok())
        .ok_or_else(|| {
            ConfineError::InspectProcess(std::io::Error::other(
                "no Threads: line in /proc/self/status",
            ))
        })?;
    if threads != 1 {
        return Err(ConfineError::NotSingleThreaded { threads });
    }
    Ok(ProcessInspection {
        has_seccomp: status_field(&status, "Seccomp").is_some(),
        inherited_seccomp_filters: seccomp_filters(&status),
    })
}

/// Seccomp filters in force, from `/proc/self/status`: `Seccomp_filters:` (Linux 5.9 and
/// newer), else 1 for `Seccomp: 2` (filter mode), else 0.
fn seccomp_filters(status: &str) -> u32 {
    match status_field(status, "Seccomp_filters").and_then(|count| count.parse().ok()) {
        Some(count) => count,
        None => u32::from(status_field(status, "Seccomp") == Some("2")),
    }
}

/// The value of a `Name:\tvalue` line of a `/proc/<pid>/status` file.
fn status_field<'a>(status: &'a str, name: &str) -> Option<&'a str> {
    status.lines().find_map(|line| {
        let (key, value) = line.split_once(':')?;
        (key == name).then(|| value.trim())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_field_reads_exact_names_only() {
        let status = "Name:\tduckgate\nSeccomp:\t2\nSeccomp_filters:\t1\nThreads:\t1\n";
        assert_eq!(status_field(status, "Seccomp"), Some("2"));
        assert_eq!(status_field(status, "Threads"), Some("1"));
        assert_eq!(status_field(status, "NoNewPrivs"), None);
    }

    #[test]
    fn inherited_filters_are_counted_where_the_kernel_counts_them() {
        assert_eq!(seccomp_filters("Seccomp:\t2\nSeccomp_filters:\t3\n"), 3);
        assert_eq!(seccomp_filters("Seccomp:\t2\n"), 1);
        assert_eq!(seccomp_filters("Seccomp:\t0\nSeccomp_filters:\t0\n"), 0);
        assert_eq!(seccomp_filters("Seccomp:\t0\n"), 0);
        assert_eq!(seccomp_filters("Name:\tx\n"), 0);
    }

    #[test]
    fn every_error_names_its_step() {
        let errors = [
            ConfineError::NotSingleThreaded { threads: 3 },
            ConfineError::NoNewPrivs(nix::errno::Errno::EPERM),
            ConfineError::ParentGone {
                expected: 10,
                actual: 1,
            },
            ConfineError::NotDumpable(nix::errno::Errno::EINVAL),
            ConfineError::Rlimit {
                resource: "RLIMIT_AS",
                error: nix::errno::Errno::EPERM,
            },
            ConfineError::LandlockUnavailable {
                offered: LandlockAbsence::NotImplemented,
            },
            ConfineError::SeccompUnavailable {
                evidence: SeccompAbsence::NoSystemCall,
            },
        ];
        for (error, step) in errors.iter().zip([
            "step 0", "step 1", "step 2", "step 3", "step 4", "step 5", "step 6",
        ]) {
            assert!(
                error.to_string().contains(step),
                "{error} should name {step}"
            );
        }
    }
}
