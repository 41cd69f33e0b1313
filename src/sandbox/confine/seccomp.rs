//! Step 6: the system-call filter, an allowlist.
//!
//! Default deny: a call the filter does not name fails with `EPERM`, so a system call added to a
//! later kernel, or one DuckDB never needed, is denied until someone measures a need for it.
//! What it names (`policy.rs`, each call with its reason) is what a worker is measured to make
//! (`tests/it/seccomp_trace.rs` traces the real server and diffs against it), some of it only with
//! given arguments (threads but no process, signals to itself, its own limits read, no read-only
//! `O_TRUNC` open below landlock ABI 3), and the dangerous families kill the process outright:
//! running programs, creating processes, `ptrace` and other processes' memory, namespaces,
//! io_uring, BPF, keyrings, module and kernel loading, mounts, and the machine-wide settings a
//! server run as root could change. A denied call fails closed either way; `EPERM` keeps DuckDB's
//! own error path for what it may try and do without, and killing leaves a compromised worker
//! nothing to try next.
//!
//! It is three programs, installed in this order: `ENOSYS` for `clone3` (glibc then falls back to
//! `clone`, whose flags, unlike `clone3`'s in memory, the filter can read), the kill filter
//! (default allow), and last the allowlist (default `EPERM`), so that the allowlist need not let
//! the worker install filters. The kernel runs every filter and keeps the strictest answer, so
//! the allowlist lets `clone3` through to the `ENOSYS` one.
//!
//! Per architecture: the calls are named once (`syscalls.rs`) and numbered in a table per
//! architecture (`x86_64.rs`, `aarch64.rs`), both compiled on every target and each checked
//! against that architecture's own kernel headers; the running target chooses its table here
//! and nowhere else ([`Arch::native`]). Each program first checks the architecture the call was
//! made in and kills on any other, so i386's `int 0x80` never reaches the table. On x86_64 a
//! call with the x32 bit is not on the allowlist (`EPERM`), and the kill filter kills the x32
//! numbers of every killed call and the x32-only ones (`execve`, `ptrace`, …).
//!
//! This file is the filter's construction: its scope, the three rule maps and what a child
//! forked from the template stacks on its template's filter; installing them, and what a kernel
//! without seccomp means, is in `seccomp/installation.rs`.

mod aarch64;
mod installation;
mod policy;
mod syscalls;
mod x86_64;

pub(super) use installation::install;
use syscalls::Syscall;

use std::collections::BTreeMap;

use nix::libc;
use seccompiler::{
    BackendError, BpfProgram, SeccompAction, SeccompFilter, SeccompRule, TargetArch,
};

use super::Role;

/// What the filter is built for: the worker's own pid, and what landlock already enforces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct FilterScope {
    /// `getpid()` of the worker, read just before the filter is built: the only process it may
    /// signal.
    pub(super) own_pid: i32,
    /// The landlock ABI step 5 enforced (`None`: none). Below ABI 3 the filter also takes over
    /// truncation, which landlock then cannot see.
    pub(super) landlock_abi: Option<u8>,
    /// A worker, or the template whose filter lets it fork workers.
    pub(super) role: Role,
}

impl FilterScope {
    /// Whether landlock handles truncation (`LANDLOCK_ACCESS_FS_TRUNCATE`, ABI 3).
    fn landlock_handles_truncate(&self) -> bool {
        self.landlock_abi.is_some_and(|abi| abi >= 3)
    }
}

/// An architecture the filter has a table for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::sandbox::confine) enum Arch {
    /// x86_64 (and its x32 numbers, which the filter refuses).
    X86_64,
    /// aarch64. (Built only by [`Arch::native`] on an aarch64 target, and by the tests.)
    #[cfg_attr(not(any(target_arch = "aarch64", test)), allow(dead_code))]
    Aarch64,
}

impl Arch {
    /// Every architecture with a table.
    #[cfg(test)]
    const ALL: [Arch; 2] = [Arch::X86_64, Arch::Aarch64];

    /// The architecture this binary runs on, if the filter has a table for it: the one place
    /// the target chooses.
    pub(in crate::sandbox::confine) fn native() -> Option<Arch> {
        #[cfg(target_arch = "x86_64")]
        return Some(Arch::X86_64);
        #[cfg(target_arch = "aarch64")]
        return Some(Arch::Aarch64);
        #[allow(unreachable_code)]
        None
    }

    /// The kernel's name for it (`uname -m`).
    #[cfg(test)]
    fn name(self) -> &'static str {
        match self {
            Arch::X86_64 => "x86_64",
            Arch::Aarch64 => "aarch64",
        }
    }

    /// The number of `call` on this architecture, if it exists there.
    pub(in crate::sandbox::confine) fn number(self, call: Syscall) -> Option<i64> {
        match self {
            Arch::X86_64 => x86_64::number(call),
            Arch::Aarch64 => aarch64::number(call),
        }
    }

    fn target(self) -> TargetArch {
        match self {
            Arch::X86_64 => TargetArch::x86_64,
            Arch::Aarch64 => TargetArch::aarch64,
        }
    }
}

/// The three rule maps of a filter: syscall number → rules (none: whatever the arguments).
#[derive(Debug, Clone, Default, PartialEq)]
struct RuleMaps {
    /// Let through when a rule matches; everything else gets `EPERM`.
    allow: BTreeMap<i64, Vec<SeccompRule>>,
    /// Kill the process when a rule matches.
    kill: BTreeMap<i64, Vec<SeccompRule>>,
    /// Answer `ENOSYS`.
    enosys: BTreeMap<i64, Vec<SeccompRule>>,
}

/// The rule maps of the filter for `scope` on `arch`.
fn rule_maps(scope: &FilterScope, arch: Arch) -> Result<RuleMaps, BackendError> {
    let mut maps = RuleMaps::default();
    for &call in Syscall::ALL {
        let Some(nr) = arch.number(call) else {
            continue;
        };
        let decision = policy::decide(call, scope, arch)?;
        if let Some(rules) = decision.allow {
            maps.allow.insert(nr, rules);
        }
        if let Some(rules) = decision.kill {
            if arch == Arch::X86_64 {
                maps.kill
                    .insert(nr | x86_64::X32_SYSCALL_BIT, rules.clone());
            }
            maps.kill.insert(nr, rules);
        }
        if decision.enosys {
            maps.enosys.insert(nr, Vec::new());
        }
    }
    if arch == Arch::X86_64 {
        for (x32_only, native) in x86_64::X32_ONLY {
            if let Some(rules) = policy::decide(native, scope, arch)?.kill {
                maps.kill.insert(x32_only | x86_64::X32_SYSCALL_BIT, rules);
            }
        }
    }
    Ok(maps)
}

/// The rule maps a process installs over a filter built for `in_force`, which it keeps (a
/// process cannot shed a filter), so that the two together allow, kill and answer exactly what
/// `in_force` together with a whole filter for `scope` would: the allowlist lets through
/// whatever `in_force` already restricts the same way (its rules decide) and keeps the rules of
/// the calls whose rules differ; the kill and `ENOSYS` maps keep only what `in_force` does not
/// already do. The worker's whole allowlist of conditions installed in every forked child took
/// ~1.5 ms of CPU to build; most of its calls become a single comparison here.
fn stacked(wanted: RuleMaps, in_force: &RuleMaps) -> RuleMaps {
    let allow = wanted
        .allow
        .into_iter()
        .map(|(nr, rules)| {
            if in_force.allow.get(&nr) == Some(&rules) {
                (nr, Vec::new())
            } else {
                (nr, rules)
            }
        })
        .collect();
    let beyond = |wanted: BTreeMap<i64, Vec<SeccompRule>>, in_force: &BTreeMap<_, _>| {
        wanted
            .into_iter()
            .filter(|(nr, rules)| in_force.get(nr) != Some(rules))
            .collect()
    };
    RuleMaps {
        allow,
        kill: beyond(wanted.kill, &in_force.kill),
        enosys: beyond(wanted.enosys, &in_force.enosys),
    }
}

/// Compile the filters for `scope` on `arch` in the order they are installed: `ENOSYS` and kill
/// (each only when it has rules), then the allowlist. `stacked_on`: the filter already in force,
/// which a child forked from the template keeps ([`stacked`]).
fn compile_for(
    arch: Arch,
    scope: &FilterScope,
    stacked_on: Option<&FilterScope>,
) -> Result<Vec<BpfProgram>, BackendError> {
    let maps = match stacked_on {
        None => rule_maps(scope, arch)?,
        Some(below) => stacked(rule_maps(scope, arch)?, &rule_maps(below, arch)?),
    };
    let program = |rules: BTreeMap<i64, Vec<SeccompRule>>,
                   mismatch: SeccompAction,
                   matched: SeccompAction|
     -> Result<BpfProgram, BackendError> {
        SeccompFilter::new(rules, mismatch, matched, arch.target())?.try_into()
    };
    let mut programs = Vec::new();
    if !maps.enosys.is_empty() {
        programs.push(program(
            maps.enosys,
            SeccompAction::Allow,
            SeccompAction::Errno(libc::ENOSYS as u32),
        )?);
    }
    if !maps.kill.is_empty() {
        programs.push(program(
            maps.kill,
            SeccompAction::Allow,
            SeccompAction::KillProcess,
        )?);
    }
    programs.push(program(
        maps.allow,
        SeccompAction::Errno(libc::EPERM as u32),
        SeccompAction::Allow,
    )?);
    Ok(programs)
}

/// The calls the filter names for `role` on `arch`: those it lets through (on some condition),
/// those that kill the process, those it answers `ENOSYS`; by kernel name.
pub(in crate::sandbox::confine) fn named_calls(
    role: Role,
    arch: Arch,
) -> Result<NamedCalls, BackendError> {
    let scope = FilterScope {
        own_pid: 1,
        landlock_abi: None,
        role,
    };
    let mut named = NamedCalls::default();
    for &call in Syscall::ALL {
        if arch.number(call).is_none() {
            continue;
        }
        let decision = policy::decide(call, &scope, arch)?;
        if decision.allow.is_some() {
            named.allowed.push(call.name());
        }
        if decision.kill.is_some() {
            named.killed.push(call.name());
        }
        if decision.enosys {
            named.enosys.push(call.name());
        }
    }
    Ok(named)
}

/// The calls a filter names, by kernel name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NamedCalls {
    /// Let through (some only with given arguments); every other call fails.
    pub allowed: Vec<&'static str>,
    /// Kill the process (some only with given arguments).
    pub killed: Vec<&'static str>,
    /// Answered `ENOSYS` (they pass the allowlist to be answered so).
    pub enosys: Vec<&'static str>,
}

#[cfg(test)]
mod tests;
