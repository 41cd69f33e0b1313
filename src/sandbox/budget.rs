//! The machine-wide memory budget, and each worker's share of it: the one place worker memory is
//! sized (`docs/ARCHITECTURE.md`, "Spilling and the memory budget").
//!
//! DuckDB's `memory_limit` bounds only the memory DuckDB tracks: its buffer pool, hash tables and
//! sort runs. Values a query builds row by row (`repeat()`, `list_reduce(range(…))`) and the
//! allocator's own overhead are not tracked, and were measured at 6.1 GB resident in one worker
//! whose limit was 2 GB. So the bound is the kernel's, not DuckDB's: every worker gets
//! `RLIMIT_DATA`, which the kernel charges for every private writable mapping (heap, anonymous
//! `mmap`, thread stacks), and an allocation past it fails (DuckDB answers
//! `Out of Memory Error … (bad allocation)`; the worker survives to say so).
//!
//! How the shares add up to the budget:
//! - At most `max_concurrent` workers run queries (`slots`): a worker runs one only while it
//!   holds a slot, and a slot is free again only once its worker has exited (`super::pool`).
//!   Each of them gets a full share.
//! - Besides them, at most `warm_workers` spares wait for a request, and the zygote's template
//!   waits for fork orders. None of those runs SQL of the agent's, so none grows past what its
//!   start-up left it with: each is charged [`IDLE_PROCESS_BYTES`], not a share (a spare becomes
//!   a running worker only by taking a slot).
//! - A worker's resident memory is its private writable memory (at most the cap) plus pages of
//!   the duckgate binary itself and its main stack, which `RLIMIT_DATA` does not charge. Each
//!   share reserves room for those ([`BudgetRequest::resident_overhead`]).
//! - So `slots × (cap + overhead) + idle_processes × IDLE_PROCESS_BYTES ≤ budget`, and the sum
//!   of the workers' resident memory stays under the budget whatever a query does.
//! - DuckDB's `memory_limit` sits below the cap with room to spare ([`headroom`]), so tracked
//!   memory spills to the temporary directory long before the cap is reached.
//!
//! A cgroup v2 `memory.max` would account page cache too, but needs a delegated cgroup, which a
//! user's MCP client rarely provides; `RLIMIT_DATA` works for every user on every kernel.

use std::fmt;

use crate::size::format_size;

/// One mebibyte.
const MIB: u64 = 1024 * 1024;

/// What an idle process is charged: a warm spare or the template. Measured resident sizes on
/// this project's test machine: a spawned spare 49 MB (41 MB proportional), the template 52 MB,
/// a spare forked from it 42 MB, of which 6.6–7.1 MB its own (`Private_Dirty` of
/// `/proc/<pid>/smaps_rollup`, four spares of the demo database, 2026-11-27; the rest is shared
/// with the template).
pub const IDLE_PROCESS_BYTES: u64 = 96 * MIB;

/// The smallest `memory_limit` a worker is given: below it DuckDB cannot run a simple query.
pub const MINIMUM_DUCKDB_LIMIT: u64 = 128 * MIB;

/// What the operator asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BudgetRequest {
    /// `--memory-budget`; `None`: half of the memory this process may use.
    pub budget: Option<u64>,
    /// `--memory-limit`, DuckDB's per-worker limit; `None`: the most the share allows.
    pub duckdb_limit: Option<u64>,
    /// `--max-concurrent`.
    pub max_concurrent: usize,
    /// `--warm-workers`.
    pub warm_workers: usize,
    /// Resident memory of a worker that `RLIMIT_DATA` does not charge: the duckgate binary's
    /// size (its pages are mapped from the file) plus an 8 MiB main stack.
    pub resident_overhead: u64,
}

/// Where the budget came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BudgetSource {
    /// `--memory-budget`.
    Flag,
    /// Half of the memory this process may use ([`usable_memory`]).
    HalfOfMemory,
}

/// Each worker's memory, derived from the budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct WorkerMemory {
    /// The total all workers together stay under.
    pub budget_bytes: u64,
    /// Where the budget came from.
    pub budget_source: BudgetSource,
    /// Workers that may run queries at once (`--max-concurrent`), each with a full share.
    pub slots: usize,
    /// Processes that wait and run no query: warm spares and the template, each charged
    /// [`IDLE_PROCESS_BYTES`] of the budget.
    pub idle_processes: usize,
    /// Each worker's `RLIMIT_DATA`: the hard cap on its private writable memory.
    pub cap_bytes: u64,
    /// Each worker's DuckDB `memory_limit`, under the cap: past it DuckDB spills.
    pub duckdb_limit_bytes: u64,
    /// Room reserved per worker for what the cap does not charge (binary pages, main stack).
    pub overhead_bytes: u64,
}

/// Why the flags cannot fit in the budget. Each message names the flags to change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BudgetError {
    /// The machine's memory could not be read, and no `--memory-budget` was given.
    UnknownMemory(MemoryUnreadable),
    /// The budget leaves a worker less than DuckDB needs.
    ShareTooSmall {
        /// The budget.
        budget: u64,
        /// Workers sharing it.
        slots: usize,
        /// What one worker would get as its cap.
        cap: u64,
    },
    /// `--memory-limit` does not fit under the cap with the headroom DuckDB needs.
    LimitAboveCap {
        /// The requested `--memory-limit`.
        limit: u64,
        /// The cap it must fit under.
        cap: u64,
        /// The largest limit that fits.
        largest: u64,
        /// The budget.
        budget: u64,
        /// Workers sharing it.
        slots: usize,
    },
}

impl fmt::Display for BudgetError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BudgetError::UnknownMemory(why) => write!(
                f,
                "cannot tell how much memory this machine has ({why}); pass --memory-budget SIZE, \
                 the total all query workers together may use (for example 4GB)"
            ),
            BudgetError::ShareTooSmall { budget, slots, cap } => write!(
                f,
                "--memory-budget {} shared by {slots} running workers (--max-concurrent, after \
                 room for the idle spares of --warm-workers) leaves each a cap of {}, less than \
                 DuckDB needs; raise --memory-budget or lower --max-concurrent or --warm-workers",
                format_size(*budget),
                format_size(*cap)
            ),
            BudgetError::LimitAboveCap {
                limit,
                cap,
                largest,
                budget,
                slots,
            } => write!(
                f,
                "--memory-limit {} does not fit in each worker's cap of {} (--memory-budget {} \
                 shared by {slots} workers, with room for memory DuckDB does not track); use \
                 --memory-limit {} or less, or leave it out, or raise --memory-budget, or lower \
                 --max-concurrent or --warm-workers",
                format_size(*limit),
                format_size(*cap),
                format_size(*budget),
                format_size(*largest)
            ),
        }
    }
}

/// The room a worker keeps above DuckDB's `memory_limit` for memory DuckDB does not track
/// (thread stacks, allocator fragmentation, results being serialized): a quarter of the limit,
/// at least 128 MiB. Measured on spilling DISTINCT, sort and window queries over 40–60 M rows
/// with a 1 GB limit: the peak resident size was the limit plus 9–52 MB.
pub fn headroom(duckdb_limit: u64) -> u64 {
    (duckdb_limit / 4).max(128 * MIB)
}

/// The largest `memory_limit` whose headroom fits under `cap`.
fn largest_limit(cap: u64) -> u64 {
    // limit + max(limit/4, 128 MiB) ≤ cap.
    (cap / 5 * 4).min(cap.saturating_sub(128 * MIB))
}

/// Size every worker's share.
pub fn plan(
    request: &BudgetRequest,
    usable: impl FnOnce() -> Result<u64, MemoryUnreadable>,
) -> Result<WorkerMemory, BudgetError> {
    let (budget, budget_source) = match request.budget {
        Some(budget) => (budget, BudgetSource::Flag),
        None => (
            usable().map_err(BudgetError::UnknownMemory)? / 2,
            BudgetSource::HalfOfMemory,
        ),
    };
    let slots = request.max_concurrent.max(1);
    // The spares and the template (one even when workers are spawned: the budget does not
    // change with the fallback).
    let idle_processes = request.warm_workers + 1;
    let shared = budget.saturating_sub(idle_processes as u64 * IDLE_PROCESS_BYTES);
    let cap = (shared / slots as u64).saturating_sub(request.resident_overhead);
    let largest = largest_limit(cap);
    if largest < MINIMUM_DUCKDB_LIMIT {
        return Err(BudgetError::ShareTooSmall { budget, slots, cap });
    }
    let duckdb_limit = match request.duckdb_limit {
        None => largest,
        Some(limit) if limit <= largest => limit,
        Some(limit) => {
            return Err(BudgetError::LimitAboveCap {
                limit,
                cap,
                largest,
                budget,
                slots,
            });
        }
    };
    Ok(WorkerMemory {
        budget_bytes: budget,
        budget_source,
        slots,
        idle_processes,
        cap_bytes: cap,
        duckdb_limit_bytes: duckdb_limit,
        overhead_bytes: request.resident_overhead,
    })
}

/// The memory this process may use: the machine's (`MemTotal`), or less where a cgroup limits
/// it (v2 `memory.max`, v1 `memory.limit_in_bytes`).
pub fn usable_memory() -> Result<u64, MemoryUnreadable> {
    let meminfo = std::fs::read_to_string("/proc/meminfo")
        .map_err(|e| MemoryUnreadable::Meminfo(e.to_string()))?;
    let total = meminfo_total(&meminfo).ok_or(MemoryUnreadable::NoMemTotal)?;
    let cgroups = std::fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
    let limit = cgroup_limit_files(&cgroups)
        .into_iter()
        .filter_map(|path| std::fs::read_to_string(path).ok())
        .filter_map(|text| text.trim().parse::<u64>().ok())
        .min();
    Ok(limit.map_or(total, |limit| limit.min(total)))
}

/// Why [`usable_memory`] cannot tell how much memory there is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MemoryUnreadable {
    /// `/proc/meminfo` cannot be read (the operating system's words).
    Meminfo(String),
    /// It has no `MemTotal` line.
    NoMemTotal,
}

impl fmt::Display for MemoryUnreadable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MemoryUnreadable::Meminfo(error) => write!(f, "/proc/meminfo: {error}"),
            MemoryUnreadable::NoMemTotal => f.write_str("/proc/meminfo has no MemTotal line"),
        }
    }
}

/// `MemTotal` from `/proc/meminfo`, in bytes.
fn meminfo_total(meminfo: &str) -> Option<u64> {
    let line = meminfo.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: u64 = line
        .trim_start_matches("MemTotal:")
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    Some(kib * 1024)
}

/// The files that may hold this process's cgroup memory limit, from `/proc/self/cgroup`: its
/// own cgroup's and every ancestor's up to the root of the mounted hierarchy, since a limit on
/// any of them applies. A file that holds `max` (no limit) or does not exist is skipped by the
/// caller, and the smallest limit wins.
///
/// The ancestors matter in a container on a cgroup v1 host: without a cgroup namespace of its
/// own (`--cgroupns private`), `/proc/self/cgroup` names the container's cgroup as the host
/// sees it (`/libpod_parent/libpod-…`, `/docker/…`), while the runtime mounts that very cgroup
/// at `/sys/fs/cgroup/memory` itself: the limit (`--memory`) is then in the root's file, and the
/// path the host sees does not exist.
fn cgroup_limit_files(cgroups: &str) -> Vec<String> {
    let mut files = Vec::new();
    for line in cgroups.lines() {
        let mut parts = line.splitn(3, ':');
        let (Some(id), Some(controllers), Some(path)) = (parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        let (mount, file) = if id == "0" && controllers.is_empty() {
            ("/sys/fs/cgroup", "memory.max")
        } else if controllers.split(',').any(|c| c == "memory") {
            ("/sys/fs/cgroup/memory", "memory.limit_in_bytes")
        } else {
            continue;
        };
        let mut cgroup = path.trim_end_matches('/');
        loop {
            files.push(format!("{mount}{cgroup}/{file}"));
            match cgroup.rfind('/') {
                Some(parent) => cgroup = &cgroup[..parent],
                None => break,
            }
        }
    }
    files
}

#[cfg(test)]
mod tests {
    use super::*;

    const GIB: u64 = 1024 * MIB;

    fn request(
        budget: Option<u64>,
        limit: Option<u64>,
        running: usize,
        warm: usize,
    ) -> BudgetRequest {
        BudgetRequest {
            budget,
            duckdb_limit: limit,
            max_concurrent: running,
            warm_workers: warm,
            resident_overhead: 100 * MIB,
        }
    }

    #[test]
    fn the_shares_and_their_overheads_add_up_to_at_most_the_budget() {
        for (budget, running, warm) in [
            (12 * GIB, 4, 1),
            (3 * GIB, 2, 0),
            (64 * GIB, 16, 16),
            (GIB, 1, 1),
        ] {
            let plan = plan(
                &request(Some(budget), None, running, warm),
                || unreachable!(),
            )
            .unwrap();
            assert_eq!((plan.slots, plan.idle_processes), (running, warm + 1));
            let total = (plan.cap_bytes + plan.overhead_bytes) * plan.slots as u64
                + IDLE_PROCESS_BYTES * plan.idle_processes as u64;
            assert!(total <= budget, "{plan:?}");
            assert!(
                plan.duckdb_limit_bytes + headroom(plan.duckdb_limit_bytes) <= plan.cap_bytes,
                "{plan:?}"
            );
        }
    }

    #[test]
    fn the_default_budget_is_half_of_the_usable_memory() {
        let plan = plan(&request(None, None, 4, 1), || Ok(24 * GIB)).unwrap();
        assert_eq!(plan.budget_bytes, 12 * GIB);
        assert_eq!(plan.budget_source, BudgetSource::HalfOfMemory);
    }

    #[test]
    fn a_memory_limit_that_does_not_fit_under_the_cap_is_refused_naming_the_largest_that_does() {
        let error = plan(
            &request(Some(4 * GIB), Some(2 * GIB), 4, 1),
            || unreachable!(),
        )
        .unwrap_err();
        let BudgetError::LimitAboveCap { largest, .. } = error.clone() else {
            panic!("{error:?}");
        };
        let text = error.to_string();
        assert!(text.contains(&format_size(largest)), "{text}");
        assert!(
            text.contains("--memory-budget") && text.contains("--max-concurrent"),
            "{text}"
        );
        // And the largest it names is accepted.
        plan(
            &request(Some(4 * GIB), Some(largest), 4, 1),
            || unreachable!(),
        )
        .unwrap();
    }

    #[test]
    fn a_budget_too_small_for_duckdb_is_refused() {
        let error = plan(&request(Some(GIB), None, 8, 8), || unreachable!()).unwrap_err();
        assert!(
            matches!(error, BudgetError::ShareTooSmall { slots: 8, .. }),
            "{error:?}"
        );
    }

    #[test]
    fn unknown_memory_without_a_flag_is_refused_with_the_flag_to_pass() {
        let error = plan(&request(None, None, 1, 0), || {
            Err(MemoryUnreadable::Meminfo("no /proc".into()))
        })
        .unwrap_err();
        assert!(error.to_string().contains("--memory-budget"), "{error}");
    }

    #[test]
    fn meminfo_and_cgroup_files_are_read_as_the_kernel_writes_them() {
        assert_eq!(
            meminfo_total("MemFree: 1 kB\nMemTotal:       24684096 kB\n"),
            Some(24684096 * 1024)
        );
        assert_eq!(meminfo_total("nothing"), None);
        let files = cgroup_limit_files("12:cpu:/\n4:memory:/process_api/abc\n0::/user.slice/app\n");
        assert_eq!(
            files,
            [
                "/sys/fs/cgroup/memory/process_api/abc/memory.limit_in_bytes",
                "/sys/fs/cgroup/memory/process_api/memory.limit_in_bytes",
                "/sys/fs/cgroup/memory/memory.limit_in_bytes",
                "/sys/fs/cgroup/user.slice/app/memory.max",
                "/sys/fs/cgroup/user.slice/memory.max",
                "/sys/fs/cgroup/memory.max",
            ]
        );
        // The root cgroup: its own file only.
        assert_eq!(cgroup_limit_files("0::/\n"), ["/sys/fs/cgroup/memory.max"]);
    }

    #[test]
    fn the_usable_memory_of_this_machine_is_positive_and_at_most_memtotal() {
        let usable = usable_memory().unwrap();
        let total = meminfo_total(&std::fs::read_to_string("/proc/meminfo").unwrap()).unwrap();
        assert!(usable > 0 && usable <= total);
    }
}
