//! Step 5: landlock.
//!
//! The ruleset handles every access right the running kernel knows (filesystem, TCP bind and
//! connect, signal and abstract-unix-socket scopes) as a hard requirement, and grants only
//! `ReadFile` (not even `ReadDir`) on the few kernel files DuckDB reads at start-up, each listed
//! in [`duckdb_runtime_files`] with the reason. No database file and no WAL: the process opened
//! those read-only before it confined itself (`crate::engine::HeldDatabases`) and reads them
//! through those descriptors only;
//!
//! `ReadFile` and `ReadDir` beneath each folder the operator declared (`--files`, see
//! `crate::folders`); and, beneath the worker's own temporary directory only (made by the
//! parent for this worker alone, see `crate::sandbox::temp_dir`), what spilling needs
//! ([`temp_dir_access`]).
//!
//! Everything else is denied: reading or listing any other path, executing anything, creating,
//! writing, truncating, renaming or deleting any other file, device ioctls, TCP bind and connect,
//! signals to processes outside the sandbox, connecting to abstract unix sockets created outside
//! it (and, on ABI ≥ 9 kernels, to any pathname unix socket). Landlock cannot restrict `stat` or
//! `readlink`: a worker can still learn whether a path exists, its size and times.

use std::path::{Path, PathBuf};

use landlock::{
    ABI, Access, AccessFs, AccessNet, CompatLevel, Compatible, LandlockStatus, PathBeneath, PathFd,
    Ruleset, RulesetAttr, RulesetCreatedAttr, RulesetError, RulesetStatus, Scope,
};

use super::{ConfineError, ConfinePlan, Role};
use crate::protocol::LandlockAbsence;

/// The template's thread list ([`Role::Template`]).
const PROC_SELF_TASK: &str = "/proc/self/task";

/// The oldest ABI accepted without `--allow-unconfined`. ABI 1 (Linux 5.13) already has what
/// only landlock can give: the filesystem allowlist (read-only grants, no write, no execute
/// anywhere else). What later ABIs add, the seccomp filter of step 6 takes over on older kernels
/// (see `super::properties`): truncation (ABI 3) by denying `truncate(2)` and read-only `O_TRUNC`
/// opens, TCP (ABI 4) and abstract unix sockets (ABI 6) by denying every socket, signal scoping
/// (ABI 6) by allowing signals only to the worker itself. ABI 2's cross-directory rename and link
/// right is not needed: ABI 1 denies those outright.
pub(super) const MINIMUM_ABI: ABI = ABI::V1;

/// ABIs this code knows, newest first, with their numbers. The newest the kernel accepts is
/// used, so a newer kernel enforces more (ABI 9: connecting to pathname unix sockets) without a
/// code change.
const KNOWN_ABIS: [(ABI, u8); 9] = [
    (ABI::V9, 9),
    (ABI::V8, 8),
    (ABI::V7, 7),
    (ABI::V6, 6),
    (ABI::V5, 5),
    (ABI::V4, 4),
    (ABI::V3, 3),
    (ABI::V2, 2),
    (ABI::V1, 1),
];

/// What step 5 put in force.
pub(super) struct LandlockOutcome {
    /// The ABI whose rights the enforced ruleset handles (`None`: no landlock, allowed by the
    /// operator). Below the kernel's own ABI only under the test-only ABI cap.
    pub(super) abi: Option<u8>,
    /// Why there is no landlock, when the operator allowed running without it (for the
    /// posture's `unenforced` list).
    pub(super) gap: Option<LandlockAbsence>,
}

/// What DuckDB does in its temporary directory: create spill files, write, read, list, shrink
/// and remove them. Not granted even there: executing, making directories, links, devices,
/// sockets or fifos, moving files in from elsewhere, device ioctls.
fn temp_dir_access(abi: ABI) -> landlock::BitFlags<AccessFs> {
    let spill = AccessFs::ReadFile
        | AccessFs::ReadDir
        | AccessFs::WriteFile
        | AccessFs::MakeReg
        | AccessFs::RemoveFile;
    if abi >= ABI::V3 {
        spill | AccessFs::Truncate
    } else {
        spill
    }
}

/// What a worker may do beneath a declared folder, each right with the words `server_info`
/// shows for it ([`super::folder_grants`]): read files and list directories. Not even there:
/// writing, creating, removing, renaming, truncating, executing, device ioctls.
pub(super) const FOLDER_RIGHTS: [(AccessFs, &str); 2] = [
    (AccessFs::ReadFile, "read files"),
    (AccessFs::ReadDir, "list directories"),
];

fn folder_access() -> landlock::BitFlags<AccessFs> {
    FOLDER_RIGHTS
        .iter()
        .fold(landlock::BitFlags::empty(), |rights, (right, _)| {
            rights | *right
        })
}

/// A file to grant `ReadFile` on, and why.
struct Grant {
    path: PathBuf,
    purpose: &'static str,
}

/// Step 5: build and enforce the ruleset of the newest ABI the kernel accepts (at most
/// `plan.landlock_abi_cap`, a test-only switch).
pub(super) fn restrict(
    plan: &ConfinePlan,
    inherited_seccomp_filters: u32,
) -> Result<LandlockOutcome, ConfineError> {
    let Some((abi, number)) = newest_supported_abi(plan.landlock_abi_cap) else {
        let offered = absent_landlock(inherited_seccomp_filters, kernel_release().as_deref());
        if plan.allow_unconfined {
            return Ok(LandlockOutcome {
                abi: None,
                gap: Some(offered),
            });
        }
        return Err(ConfineError::LandlockUnavailable { offered });
    };

    let mut ruleset = handled(abi)
        .and_then(Ruleset::create)
        .map_err(ConfineError::Landlock)?;
    for grant in grants() {
        let fd = PathFd::new(&grant.path).map_err(|error| ConfineError::LandlockPath {
            path: grant.path.clone(),
            purpose: grant.purpose,
            error,
        })?;
        ruleset = ruleset
            .add_rule(PathBeneath::new(fd, AccessFs::ReadFile))
            .map_err(ConfineError::Landlock)?;
    }
    for folder in &plan.folders {
        let fd = PathFd::new(folder).map_err(|error| ConfineError::LandlockPath {
            path: folder.clone(),
            purpose: "a folder the operator declared (--files): read-only",
            error,
        })?;
        ruleset = ruleset
            .add_rule(PathBeneath::new(fd, folder_access()))
            .map_err(ConfineError::Landlock)?;
    }
    if let Some(temp_dir) = &plan.temp_dir {
        let fd = PathFd::new(temp_dir).map_err(|error| ConfineError::LandlockPath {
            path: temp_dir.clone(),
            purpose: "the worker's private temporary directory, where DuckDB spills",
            error,
        })?;
        ruleset = ruleset
            .add_rule(PathBeneath::new(fd, temp_dir_access(abi)))
            .map_err(ConfineError::Landlock)?;
    }
    match plan.role {
        Role::Worker => {}
        Role::Template => {
            // The thread census before each fork (`zygote_fork::fork_single_threaded`). The
            // path resolves to the template's own `/proc/<pid>/task` now; its children's
            // `/proc/self` is another directory, which this rule does not reach.
            let fd = PathFd::new(PROC_SELF_TASK).map_err(|error| ConfineError::LandlockPath {
                path: PROC_SELF_TASK.into(),
                purpose: "the template counts its threads before each fork",
                error,
            })?;
            ruleset = ruleset
                .add_rule(PathBeneath::new(fd, AccessFs::ReadDir))
                .map_err(ConfineError::Landlock)?;
        }
    }
    let status = ruleset.restrict_self().map_err(ConfineError::Landlock)?;
    if status.ruleset != RulesetStatus::FullyEnforced || !status.no_new_privs {
        return Err(ConfineError::LandlockNotEnforced {
            status: format!("{status:?}"),
        });
    }
    Ok(LandlockOutcome {
        abi: Some(number),
        gap: None,
    })
}

/// Why the kernel has no usable landlock, in its own words: the status the `landlock` crate
/// reads from `landlock_create_ruleset(…, LANDLOCK_CREATE_RULESET_VERSION)`.
///
/// Called only when not even ABI 1 can be handled, so the best-effort ruleset below handles
/// nothing the kernel knows: `restrict_self` enforces nothing (it only sets no_new_privs, which
/// step 1 already did) and reports the status.
///
/// The crate reports every failure of that call but `EOPNOTSUPP` as "not implemented", which a
/// seccomp filter set up before duckgate started also produces (Podman's profiles answer
/// `ENOSYS` for a call they do not list, Docker's `EPERM`). So on a kernel new enough for
/// landlock (`kernel`, the release from `/proc/sys/kernel/osrelease`), in a process under
/// inherited filters, the filter is named as the cause instead of the kernel.
fn absent_landlock(inherited_seccomp_filters: u32, kernel: Option<&str>) -> LandlockAbsence {
    let status = Ruleset::default()
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(AccessFs::from_all(ABI::V1))
        .and_then(Ruleset::create)
        .and_then(|ruleset| ruleset.restrict_self())
        .map(|status| status.landlock)
        .map_err(|e| e.to_string());
    classify_absence(status, inherited_seccomp_filters, kernel)
}

/// [`absent_landlock`]'s decision, on what it read.
fn classify_absence(
    status: Result<LandlockStatus, String>,
    inherited_seccomp_filters: u32,
    kernel: Option<&str>,
) -> LandlockAbsence {
    let kernel_has_landlock_calls = kernel
        .and_then(release_number)
        .is_some_and(|release| release >= (5, 13));
    match status {
        Ok(LandlockStatus::NotImplemented)
            if inherited_seccomp_filters > 0 && kernel_has_landlock_calls =>
        {
            LandlockAbsence::FailsUnderInheritedFilter {
                inherited_filters: inherited_seccomp_filters,
            }
        }
        Ok(LandlockStatus::NotImplemented) => LandlockAbsence::NotImplemented,
        Ok(LandlockStatus::NotEnabled) => LandlockAbsence::NotEnabled,
        Ok(LandlockStatus::Available { effective_abi, .. }) => LandlockAbsence::RejectsRuleset {
            effective_abi: effective_abi.to_string(),
        },
        Err(error) => LandlockAbsence::Unusable { error },
    }
}

/// The running kernel's release (`6.12.3-arch1`), read before landlock hides `/proc`.
fn kernel_release() -> Option<String> {
    std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .ok()
        .map(|release| release.trim().to_owned())
}

/// A release's major and minor number: `6.12.3-arch1` → (6, 12).
fn release_number(release: &str) -> Option<(u32, u32)> {
    let mut parts = release.split(|c: char| !c.is_ascii_digit());
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next()?.parse().ok()?;
    Some((major, minor))
}

/// A ruleset handling everything `abi` defines, every part a hard requirement: if the running
/// kernel cannot enforce one of them, this fails instead of silently dropping it.
fn handled(abi: ABI) -> Result<Ruleset, RulesetError> {
    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(AccessFs::from_all(abi))?;
    // Below these ABIs the sets are empty, which landlock rejects as a misconfiguration.
    if abi >= ABI::V4 {
        // Handled with no `NetPort` rule: every TCP bind and connect is denied.
        ruleset = ruleset.handle_access(AccessNet::from_all(abi))?;
    }
    if abi >= ABI::V6 {
        ruleset = ruleset.scope(Scope::from_all(abi))?;
    }
    Ok(ruleset)
}

/// The newest ABI, at most `cap`, whose whole ruleset the running kernel accepts as a hard
/// requirement, or `None` without landlock. Only checks compatibility: nothing is enforced yet.
fn newest_supported_abi(cap: Option<u8>) -> Option<(ABI, u8)> {
    KNOWN_ABIS
        .into_iter()
        .filter(|(_, number)| cap.is_none_or(|cap| *number <= cap))
        .find(|(abi, _)| *abi >= MINIMUM_ABI && handled(*abi).is_ok())
}

/// Every file the worker may read.
///
/// No database and no WAL: the process opened those before it confined itself
/// (`crate::engine::HeldDatabases`), so no open of their paths is ever needed after this, and
/// none is allowed (not by a path, `..` out of a folder, or a symbolic link).
fn grants() -> Vec<Grant> {
    duckdb_runtime_files(&read_own_cgroups())
}

/// `/proc/self/cgroup`, read now, before landlock hides it; empty if unreadable.
fn read_own_cgroups() -> String {
    std::fs::read_to_string(PROC_SELF_CGROUP).unwrap_or_default()
}

const PROC_SELF_CGROUP: &str = "/proc/self/cgroup";

/// The kernel files DuckDB reads when an instance is created. Only files that exist are
/// returned.
///
/// Measured by running the confined worker under `strace -f` (DuckDB 2.0 bundled, glibc 2.36,
/// cgroup v1 + v2 hybrid): after confinement it opened only `/proc/self/cgroup`, the cgroup
/// files below and the database (plus an `ENOENT` open of the absent `.wal`). Also granted:
/// `/sys/kernel/mm/transparent_hugepage/hpage_pmd_size` (the huge page size, the same for every
/// process): without it DuckDB skips `MADV_HUGEPAGE` on its large allocations, and a self-join
/// of 100 M rows that spills took 1.21× in-process DuckDB's time. These opens are denied and
/// left denied, because each has a silent fallback:
/// - `/sys/devices/system/cpu/online`, then `/proc/stat` (glibc's `get_nprocs` for
///   `std::thread::hardware_concurrency`): glibc falls back to `sched_getaffinity`, which gives
///   the right count, and the worker sets DuckDB's `threads` explicitly anyway;
/// - `/proc/sys/vm/overcommit_memory` (glibc malloc's heap-trimming heuristic).
///
/// DuckDB sizes its default memory limit and thread count from the cgroup the process is in
/// (`duckdb/src/common/cgroups.cpp`): it reads `/proc/self/cgroup`, then, for each entry, the
/// controller file it names. It first checks that a file exists (`stat`, which landlock does
/// not restrict) and then opens it; a denied open is an uncaught I/O error that aborts instance
/// creation. So exactly the files it will open are granted, computed with its own rules from
/// the worker's `/proc/self/cgroup`; the rest of `/sys/fs/cgroup` (every other cgroup's names
/// and statistics) stays unreadable.
fn duckdb_runtime_files(own_cgroups: &str) -> Vec<Grant> {
    let mut files = vec![
        Grant {
            path: PROC_SELF_CGROUP.into(),
            purpose: "DuckDB reads the worker's cgroup to find its CPU and memory limits",
        },
        Grant {
            path: "/sys/kernel/mm/transparent_hugepage/hpage_pmd_size".into(),
            purpose: "DuckDB asks for huge pages on large allocations only if it can read their size",
        },
    ];
    for candidate in cgroup_limit_files(own_cgroups) {
        files.push(Grant {
            path: candidate,
            purpose: "a cgroup CPU or memory limit DuckDB reads to size itself",
        });
    }
    files.retain(|grant| Path::new(&grant.path).exists());
    files
}

/// The cgroup limit files `duckdb/src/common/cgroups.cpp` may open, given the content of
/// `/proc/self/cgroup` (lines `hierarchy-id:controller-list:path`): for the cgroup v2 entry
/// (`0::path`) `cpu.max` and `memory.max` under `/sys/fs/cgroup<path>` and under the root; for
/// cgroup v1 the `cpu` and `memory` controllers' quota files, likewise.
fn cgroup_limit_files(own_cgroups: &str) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = Vec::new();
    let mut add = |file: String| {
        let file = PathBuf::from(file);
        if !files.contains(&file) {
            files.push(file);
        }
    };
    for line in own_cgroups.lines() {
        let mut parts = line.splitn(3, ':');
        let (Some(id), Some(controllers), Some(path)) = (parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        // DuckDB treats "/" as the root, i.e. the empty suffix.
        let path = if path == "/" { "" } else { path };
        let controllers: Vec<&str> = controllers.split(',').collect();
        if id == "0" && controllers == [""] {
            for suffix in [path, ""] {
                add(format!("/sys/fs/cgroup{suffix}/cpu.max"));
                add(format!("/sys/fs/cgroup{suffix}/memory.max"));
            }
        }
        if controllers.contains(&"cpu") {
            for suffix in [path, ""] {
                add(format!("/sys/fs/cgroup/cpu{suffix}/cpu.cfs_quota_us"));
                add(format!("/sys/fs/cgroup/cpu{suffix}/cpu.cfs_period_us"));
            }
        }
        if controllers.contains(&"memory") {
            for suffix in [path, ""] {
                add(format!(
                    "/sys/fs/cgroup/memory{suffix}/memory.limit_in_bytes"
                ));
            }
        }
    }
    files
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn landlock_failing_under_an_inherited_filter_on_a_new_kernel_names_the_filter() {
        let not_implemented = || Ok(LandlockStatus::NotImplemented);
        assert_eq!(
            classify_absence(not_implemented(), 1, Some("6.8.0-45-generic")),
            LandlockAbsence::FailsUnderInheritedFilter {
                inherited_filters: 1
            }
        );
        // No inherited filter: the kernel's own answer.
        assert_eq!(
            classify_absence(not_implemented(), 0, Some("6.8.0")),
            LandlockAbsence::NotImplemented
        );
        // A kernel older than landlock lacks it, filter or not.
        assert_eq!(
            classify_absence(not_implemented(), 2, Some("5.10.0")),
            LandlockAbsence::NotImplemented
        );
        assert_eq!(
            classify_absence(not_implemented(), 2, None),
            LandlockAbsence::NotImplemented
        );
        // EOPNOTSUPP is the kernel's alone: disabled at boot.
        assert_eq!(
            classify_absence(Ok(LandlockStatus::NotEnabled), 1, Some("6.8.0")),
            LandlockAbsence::NotEnabled
        );
    }

    #[test]
    fn kernel_releases_read_as_major_and_minor() {
        assert_eq!(release_number("6.18.44-fc-v657"), Some((6, 18)));
        assert_eq!(release_number("5.4.0-150-generic"), Some((5, 4)));
        assert_eq!(release_number("5.13"), Some((5, 13)));
        assert_eq!(release_number("garbage"), None);
    }

    #[test]
    fn cgroup_v2_entry_grants_its_own_and_the_root_limit_files() {
        let files = cgroup_limit_files("0::/user.slice/app.scope\n");
        let expected: Vec<PathBuf> = [
            "/sys/fs/cgroup/user.slice/app.scope/cpu.max",
            "/sys/fs/cgroup/user.slice/app.scope/memory.max",
            "/sys/fs/cgroup/cpu.max",
            "/sys/fs/cgroup/memory.max",
        ]
        .into_iter()
        .map(PathBuf::from)
        .collect();
        assert_eq!(files, expected);
    }

    #[test]
    fn cgroup_root_path_is_not_doubled() {
        let files = cgroup_limit_files("0::/\n");
        assert_eq!(
            files,
            vec![
                PathBuf::from("/sys/fs/cgroup/cpu.max"),
                PathBuf::from("/sys/fs/cgroup/memory.max")
            ]
        );
    }

    #[test]
    fn cgroup_v1_entries_grant_only_cpu_and_memory_controller_files() {
        let files = cgroup_limit_files("12:cpu,cpuacct:/job\n7:memory:/job\n3:pids:/job\n");
        assert!(files.contains(&PathBuf::from("/sys/fs/cgroup/cpu/job/cpu.cfs_quota_us")));
        assert!(files.contains(&PathBuf::from("/sys/fs/cgroup/cpu/cpu.cfs_period_us")));
        assert!(files.contains(&PathBuf::from(
            "/sys/fs/cgroup/memory/job/memory.limit_in_bytes"
        )));
        assert!(files.iter().all(|f| !f.to_string_lossy().contains("pids")));
        assert_eq!(files.len(), 6);
    }

    #[test]
    fn the_minimum_abi_is_the_one_the_posture_names() {
        assert!(KNOWN_ABIS.contains(&(MINIMUM_ABI, super::super::MINIMUM_LANDLOCK_ABI)));
        for (position, (_, number)) in KNOWN_ABIS.iter().enumerate() {
            assert_eq!(usize::from(*number), KNOWN_ABIS.len() - position);
        }
    }

    #[test]
    fn malformed_cgroup_lines_grant_nothing() {
        assert!(cgroup_limit_files("garbage\n\n1:memory\n").is_empty());
    }
}
