//! What the filter does with each call it names, for a worker and for the template, each with
//! its reason. A call this match does not name is denied with `EPERM` (the allowlist's default),
//! so a system call added to a later kernel is denied until someone measures a need for it.
//!
//! Measured: `tests/it/seccomp_trace.rs` runs the real server under `strace -f` through every
//! path a worker takes (queries of every kind, explain, catalog, every chart kind, spilling,
//! privacy rules, spawned and forked workers, landlock at the kernel's ABI and below ABI 3) and
//! fails on any call a confined process makes that is not allowed here, and on any call allowed
//! here that no traced process made.

use nix::libc;
use seccompiler::{BackendError, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompRule};

use super::syscalls::Syscall;
use super::{Arch, FilterScope};
use crate::sandbox::confine::Role;

/// What the filter does with one call.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Decision {
    /// When the call passes the allowlist: `None` never (`EPERM`); `Some(rules)` when any of
    /// the rules matches its arguments (none: always).
    pub(super) allow: Option<Vec<SeccompRule>>,
    /// When the call kills the process: `None` never; `Some(rules)` when any rule matches
    /// (none: always).
    pub(super) kill: Option<Vec<SeccompRule>>,
    /// Answered `ENOSYS` (it passes the allowlist, and a filter of its own answers it).
    pub(super) enosys: bool,
    /// Why.
    pub(super) why: &'static str,
}

impl Decision {
    fn allow(why: &'static str) -> Decision {
        Decision {
            allow: Some(Vec::new()),
            kill: None,
            enosys: false,
            why,
        }
    }

    fn allow_if(rules: Vec<SeccompRule>, why: &'static str) -> Decision {
        Decision {
            allow: Some(rules),
            ..Decision::allow(why)
        }
    }

    fn deny(why: &'static str) -> Decision {
        Decision {
            allow: None,
            ..Decision::allow(why)
        }
    }

    fn kill(why: &'static str) -> Decision {
        Decision {
            allow: None,
            kill: Some(Vec::new()),
            ..Decision::allow(why)
        }
    }
}

/// The template's and its children's steps 1 to 6 (before a child's own filter): the template
/// needs these, a worker does not.
fn template_only(role: Role, why: &'static str) -> Decision {
    match role {
        Role::Template => Decision::allow(why),
        Role::Worker => Decision::deny(why),
    }
}

/// A call measured on x86_64 in its old form (`legacy`), allowed in its `*at` or `p*` form only
/// on an architecture that lacks the old one (aarch64: glibc makes the same request with the
/// newer call there).
fn newer_form_of(legacy: Syscall, arch: Arch, role_allows: Decision) -> Decision {
    match arch.number(legacy) {
        Some(_) => Decision::deny(role_allows.why),
        None => role_allows,
    }
}

/// What the filter for `scope` on `arch` does with `call`. Each allowed call is one a traced
/// process made under that filter (`tests/it/seccomp_trace.rs`), or says why it is needed
/// although no trace reaches it. What is not here is denied without a name: `socket` of every
/// family among them, AF_UNIX too (landlock before ABI 9 does not control connecting to a
/// pathname unix socket, so this filter alone keeps a worker from reaching one).
pub(super) fn decide(
    call: Syscall,
    scope: &FilterScope,
    arch: Arch,
) -> Result<Decision, BackendError> {
    let role = scope.role;
    Ok(match call {
        // I/O on what landlock let it open: the request and reply pipes, the database, DuckDB's
        // spill files.
        Syscall::Read | Syscall::Write | Syscall::Pread64 | Syscall::Pwrite64 | Syscall::Close => {
            Decision::allow("I/O on descriptors landlock let it open")
        }
        Syscall::Ftruncate => Decision::allow("DuckDB's spill files (landlock: its own directory)"),
        // DuckDB's local file system seeked a WAL to replay it; the databases and their WALs
        // are read through held descriptors now, with `pread` (`duckgate/database_files.cpp`),
        // and no traced process seeks (`tests/it/seccomp_trace.rs`).
        Syscall::Lseek => Decision::deny("no file position is ever set: reads are positional"),
        Syscall::Openat => Decision::allow_if(
            opens_without_read_only_truncation(2, scope)?,
            "open files landlock grants (below landlock ABI 3 never a read-only O_TRUNC open)",
        ),
        Syscall::Newfstatat | Syscall::Statx | Syscall::Getdents64 | Syscall::Readlink => {
            Decision::allow("file metadata and listings (landlock decides where)")
        }
        Syscall::Readlinkat => newer_form_of(
            Syscall::Readlink,
            arch,
            Decision::allow("file metadata and listings (landlock decides where)"),
        ),
        Syscall::Unlink => {
            Decision::allow("DuckDB removes its spill files (landlock: its own directory)")
        }
        Syscall::Unlinkat => newer_form_of(
            Syscall::Unlink,
            arch,
            Decision::allow("DuckDB removes its spill files (landlock: its own directory)"),
        ),
        Syscall::Fcntl => Decision::allow("descriptor flags and the database's POSIX locks"),
        // Memory.
        Syscall::Mmap | Syscall::Munmap | Syscall::Mprotect | Syscall::Madvise | Syscall::Brk => {
            Decision::allow("memory (bounded by RLIMIT_DATA and RLIMIT_AS)")
        }
        // Threads and their synchronisation.
        Syscall::Futex
        | Syscall::SetRobustList
        | Syscall::Rseq
        | Syscall::Gettid
        | Syscall::SchedGetaffinity => Decision::allow("DuckDB's threads and their locks"),
        Syscall::ClockNanosleep => Decision::allow(
            "DuckDB's threads sleep while they wait for one another (std::this_thread::sleep_for: \
             a window's segment tree built by several threads)",
        ),
        Syscall::Clone => match role {
            Role::Worker => Decision {
                allow: Some(vec![SeccompRule::new(vec![
                    SeccompCondition::new(
                        0,
                        SeccompCmpArgLen::Qword,
                        SeccompCmpOp::MaskedEq(libc::CLONE_THREAD as u64),
                        libc::CLONE_THREAD as u64,
                    )?,
                    SeccompCondition::new(
                        0,
                        SeccompCmpArgLen::Qword,
                        SeccompCmpOp::MaskedEq(NAMESPACE_FLAGS_MASK),
                        0,
                    )?,
                ])?]),
                kill: Some(
                    std::iter::once(flag_clear(0, libc::CLONE_THREAD as u64))
                        .chain(NAMESPACE_FLAGS.iter().map(|&flag| flag_set(0, flag)))
                        .collect::<Result<_, _>>()?,
                ),
                enosys: false,
                why: "threads only (CLONE_THREAD, no namespace); a new process or namespace \
                      kills the worker",
            },
            Role::Template => Decision {
                allow: Some(vec![flags_clear(0, NAMESPACE_FLAGS_MASK)?]),
                kill: Some(
                    NAMESPACE_FLAGS
                        .iter()
                        .map(|&flag| flag_set(0, flag))
                        .collect::<Result<_, _>>()?,
                ),
                enosys: false,
                why: "the template forks workers (glibc's fork is clone); a namespace flag \
                      kills it",
            },
        },
        Syscall::Clone3 => Decision {
            allow: Some(Vec::new()),
            kill: None,
            enosys: true,
            why: "answered ENOSYS: glibc then falls back to clone, whose flags sit in a register \
                  the filter can read (clone3's sit in memory)",
        },
        // Ending: no trace reaches a thread's own end (workers end whole, with exit_group),
        // but glibc ends a thread with exit and retries it forever if it fails.
        Syscall::Exit => Decision::allow("a thread's end (glibc loops on it)"),
        Syscall::ExitGroup => Decision::allow("the process's end"),
        // The process itself.
        Syscall::Getpid => Decision::allow("its own pid (DuckDB's temporary files, raise)"),
        // Signal handling of its own; no trace delivers a signal to a handler, but returning
        // from one needs rt_sigreturn, and the kernel restarts an interrupted call with
        // restart_syscall.
        Syscall::RtSigaction | Syscall::RtSigprocmask | Syscall::Sigaltstack => {
            Decision::allow("its own signal handling (Rust's stack-overflow guard)")
        }
        Syscall::RtSigreturn => Decision::allow("returning from a signal handler"),
        Syscall::RestartSyscall => Decision::allow("the kernel's restart of an interrupted call"),
        Syscall::Getrandom => Decision::allow("per-request secrets from the kernel"),
        Syscall::Sysinfo => Decision::allow("the memory figures DuckDB sizes itself by"),
        Syscall::Prlimit64 => match role {
            // glibc's getrlimit is prlimit64(0, resource, NULL, old).
            Role::Worker => Decision::allow_if(
                vec![SeccompRule::new(vec![
                    SeccompCondition::new(0, SeccompCmpArgLen::Dword, SeccompCmpOp::Eq, 0)?,
                    SeccompCondition::new(2, SeccompCmpArgLen::Qword, SeccompCmpOp::Eq, 0)?,
                ])?],
                "read its own limits; never set one, nor touch another process's",
            ),
            Role::Template => Decision::allow_if(
                vec![arg_rule(0, SeccompCmpOp::Eq, 0)?],
                "its own limits only: its children lower theirs before their own filter",
            ),
        },
        Syscall::Prctl => Decision::allow_if(
            prctl_options(role)
                .iter()
                .map(|&option| arg_eq(0, option))
                .collect::<Result<_, _>>()?,
            "thread names and reading no_new_privs back; the template's children set their \
             parent-death signal, dumpable flag and no_new_privs before their own filter",
        ),
        Syscall::Poll => Decision::allow("waiting for its request (and the template for orders)"),
        Syscall::Ppoll => newer_form_of(
            Syscall::Poll,
            arch,
            Decision::allow("waiting for its request (and the template for orders)"),
        ),
        // Signals: to itself only. DuckDB checks whether the owner of a temporary file is alive
        // with kill(pid, 0); the template also SIGKILLs its children. tkill, tgkill, sigqueue
        // and pidfds are not on the list: nothing traced uses them.
        Syscall::Kill => match role {
            Role::Worker => Decision::allow_if(
                vec![arg_eq(0, own(scope))?],
                "signal itself only (DuckDB's liveness check of its own temporary files)",
            ),
            Role::Template => Decision::allow_if(
                vec![SeccompRule::new(vec![
                    SeccompCondition::new(0, SeccompCmpArgLen::Dword, SeccompCmpOp::Gt, 0)?,
                    SeccompCondition::new(
                        0,
                        SeccompCmpArgLen::Dword,
                        SeccompCmpOp::Le,
                        PID_MAX_LIMIT,
                    )?,
                    SeccompCondition::new(
                        1,
                        SeccompCmpArgLen::Dword,
                        SeccompCmpOp::Eq,
                        libc::SIGKILL as u64,
                    )?,
                ])?],
                "SIGKILL a positive pid (a child it has not reaped), never a group or every \
                 process",
            ),
        },
        // The template's own work: its children, its control socket, their confinement.
        Syscall::Wait4 => template_only(role, "reap its children"),
        Syscall::Signalfd4 => template_only(role, "learn of its children's end (SIGCHLD)"),
        Syscall::Recvmsg => template_only(role, "orders and worker sockets (SCM_RIGHTS) in"),
        Syscall::Sendto => template_only(role, "events out on its control socket"),
        Syscall::Getppid => template_only(role, "a child checks its parent (step 2)"),
        Syscall::Dup2 => template_only(role, "a child makes its socket its stdin and stdout"),
        Syscall::Dup3 => newer_form_of(
            Syscall::Dup2,
            arch,
            template_only(role, "a child makes its socket its stdin and stdout"),
        ),
        Syscall::LandlockCreateRuleset
        | Syscall::LandlockAddRule
        | Syscall::LandlockRestrictSelf => {
            template_only(role, "its children confine themselves (step 5)")
        }
        Syscall::Seccomp => match role {
            Role::Template => Decision::allow_if(
                vec![arg_eq(0, SECCOMP_SET_MODE_FILTER)?],
                "its children install their own filter on top (step 6): filters only narrow",
            ),
            Role::Worker => Decision::deny("its filters are installed"),
        },
        // Killed: running programs, creating processes, reaching into other processes, the
        // kernel's large and exploit-prone surfaces, and what a server run as root could change
        // machine-wide.
        Syscall::Execve | Syscall::Execveat => Decision::kill("run another program"),
        Syscall::Fork | Syscall::Vfork => {
            Decision::kill("create a process (the template forks with clone, as glibc does)")
        }
        Syscall::Ptrace => Decision::kill("inspect or control another process"),
        Syscall::ProcessVmReadv | Syscall::ProcessVmWritev | Syscall::ProcessMadvise => {
            Decision::kill("reach into another process's memory")
        }
        Syscall::PidfdGetfd => Decision::kill("copy a descriptor out of another process"),
        Syscall::Unshare | Syscall::Setns => Decision::kill(
            "namespaces: a user namespace hands out capabilities, opening much of the kernel",
        ),
        Syscall::IoUringSetup | Syscall::IoUringEnter | Syscall::IoUringRegister => {
            Decision::kill("io_uring runs operations in the kernel beyond this filter")
        }
        Syscall::Bpf => Decision::kill("load BPF programs"),
        Syscall::AddKey | Syscall::RequestKey | Syscall::Keyctl => {
            Decision::kill("the user's kernel keyrings may hold secrets")
        }
        Syscall::InitModule | Syscall::FinitModule | Syscall::DeleteModule => {
            Decision::kill("load or unload kernel modules")
        }
        Syscall::KexecLoad | Syscall::KexecFileLoad => Decision::kill("load a new kernel"),
        Syscall::Mount
        | Syscall::Umount2
        | Syscall::PivotRoot
        | Syscall::Chroot
        | Syscall::MoveMount
        | Syscall::OpenTree
        | Syscall::Fsopen
        | Syscall::Fsmount
        | Syscall::Fsconfig
        | Syscall::Fspick
        | Syscall::MountSetattr => Decision::kill("mounts and the root directory"),
        Syscall::PerfEventOpen => Decision::kill("performance counters (side channels)"),
        Syscall::Userfaultfd => Decision::kill("userfaultfd, a classic exploit primitive"),
        Syscall::Reboot | Syscall::Swapon | Syscall::Swapoff => Decision::kill("the machine"),
        Syscall::Iopl | Syscall::Ioperm => Decision::kill("raw I/O ports"),
        Syscall::ModifyLdt => Decision::kill("the LDT (kernel surface)"),
        Syscall::Uselib => Decision::kill("load a library the pre-ELF way"),
        Syscall::Acct | Syscall::Quotactl | Syscall::QuotactlFd => {
            Decision::kill("process accounting and disk quotas")
        }
        Syscall::OpenByHandleAt | Syscall::NameToHandleAt => {
            Decision::kill("file handles, which bypass path checks")
        }
        Syscall::Syslog => Decision::kill("the kernel log (addresses, other users' activity)"),
        Syscall::Settimeofday
        | Syscall::ClockSettime
        | Syscall::ClockAdjtime
        | Syscall::Adjtimex
        | Syscall::Sethostname
        | Syscall::Setdomainname
        | Syscall::Vhangup => {
            Decision::kill("machine-wide settings a server run as root could change")
        }
    })
}

/// The `prctl` options a process under this filter uses.
fn prctl_options(role: Role) -> &'static [u64] {
    match role {
        Role::Worker => &[PR_SET_NAME, libc::PR_GET_NO_NEW_PRIVS as u64],
        Role::Template => &[
            PR_SET_NAME,
            libc::PR_SET_NO_NEW_PRIVS as u64,
            libc::PR_GET_NO_NEW_PRIVS as u64,
            libc::PR_SET_PDEATHSIG as u64,
            libc::PR_SET_DUMPABLE as u64,
        ],
    }
}

const PR_SET_NAME: u64 = libc::PR_SET_NAME as u64;
const SECCOMP_SET_MODE_FILTER: u64 = 1;

/// The kernel's largest pid (`PID_MAX_LIMIT` on 64-bit, 2^22): a `kill` target above it, as a
/// 32-bit unsigned value, is a negative pid.
pub(super) const PID_MAX_LIMIT: u64 = 1 << 22;

/// `clone` flags that create namespaces (`CLONE_NEWNS` … `CLONE_NEWNET`, and `CLONE_NEWTIME`,
/// 0x80, too new for the libc crate's constants).
pub(super) const NAMESPACE_FLAGS: [u64; 8] = [
    libc::CLONE_NEWNS as u64,
    libc::CLONE_NEWCGROUP as u64,
    libc::CLONE_NEWUTS as u64,
    libc::CLONE_NEWIPC as u64,
    libc::CLONE_NEWUSER as u64,
    libc::CLONE_NEWPID as u64,
    libc::CLONE_NEWNET as u64,
    0x80,
];

#[allow(
    clippy::indexing_slicing,
    reason = "evaluated at compile time, where an index out of range fails the build"
)]
const NAMESPACE_FLAGS_MASK: u64 = {
    let mut mask = 0;
    let mut i = 0;
    while i < NAMESPACE_FLAGS.len() {
        mask |= NAMESPACE_FLAGS[i];
        i += 1;
    }
    mask
};

/// The process's own pid, as the filter compares it (a 32-bit value).
fn own(scope: &FilterScope) -> u64 {
    u64::from(scope.own_pid as u32)
}

/// `open`/`openat` rules: any open where landlock handles truncation (ABI 3); below it, any
/// open but `O_RDONLY | O_TRUNC`, which truncates a file the kernel lets the user write but
/// landlock only lets the worker read: the flags (argument `flags_index`) have `O_TRUNC` clear,
/// or the access mode is `O_WRONLY` or `O_RDWR` (which need landlock's write right).
fn opens_without_read_only_truncation(
    flags_index: u8,
    scope: &FilterScope,
) -> Result<Vec<SeccompRule>, BackendError> {
    if scope.landlock_handles_truncate() {
        return Ok(Vec::new());
    }
    let access = |mode: libc::c_int| {
        SeccompRule::new(vec![SeccompCondition::new(
            flags_index,
            SeccompCmpArgLen::Dword,
            SeccompCmpOp::MaskedEq(libc::O_ACCMODE as u64),
            mode as u64,
        )?])
    };
    Ok(vec![
        flag_clear(flags_index, libc::O_TRUNC as u64)?,
        access(libc::O_WRONLY)?,
        access(libc::O_RDWR)?,
    ])
}

fn arg_rule(index: u8, op: SeccompCmpOp, value: u64) -> Result<SeccompRule, BackendError> {
    SeccompRule::new(vec![SeccompCondition::new(
        index,
        SeccompCmpArgLen::Dword,
        op,
        value,
    )?])
}

fn arg_eq(index: u8, value: u64) -> Result<SeccompRule, BackendError> {
    arg_rule(index, SeccompCmpOp::Eq, value)
}

/// A rule matching when `flag` is set in argument `index`.
fn flag_set(index: u8, flag: u64) -> Result<SeccompRule, BackendError> {
    SeccompRule::new(vec![SeccompCondition::new(
        index,
        SeccompCmpArgLen::Qword,
        SeccompCmpOp::MaskedEq(flag),
        flag,
    )?])
}

/// A rule matching when `flag` is clear in argument `index`.
fn flag_clear(index: u8, flag: u64) -> Result<SeccompRule, BackendError> {
    flags_clear(index, flag)
}

/// A rule matching when every flag of `mask` is clear in argument `index`.
fn flags_clear(index: u8, mask: u64) -> Result<SeccompRule, BackendError> {
    SeccompRule::new(vec![SeccompCondition::new(
        index,
        SeccompCmpArgLen::Qword,
        SeccompCmpOp::MaskedEq(mask),
        0,
    )?])
}
