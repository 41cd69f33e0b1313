//! Run a command as if the kernel lacked landlock or seccomp.
//!
//! ```text
//! without_kernel_feature landlock -- duckgate serve --db data.duckdb
//! without_kernel_feature seccomp  -- duckgate serve --db data.duckdb
//! ```
//!
//! It installs a seccomp filter on itself that makes the named feature's system calls fail with
//! `ENOSYS` — what a kernel built without the feature answers — and then `exec`s the command,
//! which inherits the filter (with no_new_privs) for good, along with every process it starts:
//! - `landlock`: `landlock_create_ruleset`, `landlock_add_rule` and `landlock_restrict_self`;
//! - `seccomp`: the `seccomp` system call (so no further filter can be installed).
//!
//! Every other system call is allowed. The test suite (`tests/it/kernel_requirements.rs`) runs the
//! real `duckgate serve` through it to show that duckgate refuses to start on such a kernel, and
//! what it reports when the operator passes `--allow-unconfined`. No unsafe code: `seccompiler`
//! compiles and installs the filter, `std` execs.

use std::collections::BTreeMap;
use std::os::unix::process::CommandExt;
use std::process::{Command, ExitCode};

use nix::libc;
use seccompiler::{SeccompAction, SeccompFilter, SeccompRule, TargetArch};

const USAGE: &str = "usage: without_kernel_feature (landlock|seccomp) -- COMMAND [ARG…]";

/// The system calls that make up each feature.
fn syscalls(feature: &str) -> Option<Vec<i64>> {
    match feature {
        "landlock" => Some(vec![
            libc::SYS_landlock_create_ruleset,
            libc::SYS_landlock_add_rule,
            libc::SYS_landlock_restrict_self,
        ]),
        "seccomp" => Some(vec![libc::SYS_seccomp]),
        _ => None,
    }
}

/// Make `calls` fail with `ENOSYS` for this process and everything it runs from now on.
fn remove(calls: &[i64]) -> Result<(), String> {
    let rules: BTreeMap<i64, Vec<SeccompRule>> = calls.iter().map(|nr| (*nr, Vec::new())).collect();
    let arch = TargetArch::try_from(std::env::consts::ARCH).map_err(|e| e.to_string())?;
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::ENOSYS as u32),
        arch,
    )
    .map_err(|e| e.to_string())?;
    let program: seccompiler::BpfProgram = filter.try_into().map_err(|e| format!("{e}"))?;
    // Sets no_new_privs first, as an unprivileged filter requires.
    seccompiler::apply_filter(&program).map_err(|e| e.to_string())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (feature, command) = match args.as_slice() {
        [feature, separator, command @ ..] if separator == "--" && !command.is_empty() => {
            (feature.as_str(), command)
        }
        _ => {
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    let Some(calls) = syscalls(feature) else {
        eprintln!("unknown feature {feature:?}; {USAGE}");
        return ExitCode::from(2);
    };
    if let Err(e) = remove(&calls) {
        eprintln!("without_kernel_feature: cannot install the seccomp filter: {e}");
        return ExitCode::from(1);
    }
    // `exec` returns only on failure.
    let error = Command::new(&command[0]).args(&command[1..]).exec();
    eprintln!("without_kernel_feature: cannot run {}: {error}", command[0]);
    ExitCode::from(127)
}
