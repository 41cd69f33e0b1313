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

use super::FilterScope;
use super::syscalls::Syscall;
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

/// What the filter for `scope` does with `call`.
pub(super) fn decide(call: Syscall, scope: &FilterScope) -> Result<Decision, BackendError> {
    let role = scope.role;
    Ok(match call {
        // Reading and writing what is already open (pipes, the database, spill files).
        Syscall::Read
        | Syscall::Write
        | Syscall::Readv
        | Syscall::Writev
        | Syscall::Pread64
        | Syscall::Pwrite64
        | Syscall::Lseek
        | Syscall::Close
        | Syscall::Fsync
        | Syscall::Fdatasync
        | Syscall::Ftruncate
        | Syscall::Fallocate => Decision::allow("I/O on descriptors landlock let it open"),
        // Opening and naming files: landlock decides which.
        Syscall::Openat => Decision::allow_if(
            opens_without_read_only_truncation(2, scope)?,
            "open files landlock grants (below landlock ABI 3 never a read-only O_TRUNC open)",
        ),
        Syscall::Open => Decision::allow_if(
            opens_without_read_only_truncation(1, scope)?,
            "open files landlock grants (below landlock ABI 3 never a read-only O_TRUNC open)",
        ),
        Syscall::Newfstatat
        | Syscall::Fstat
        | Syscall::Stat
        | Syscall::Lstat
        | Syscall::Statx
        | Syscall::Statfs
        | Syscall::Fstatfs
        | Syscall::Access
        | Syscall::Faccessat
        | Syscall::Faccessat2
        | Syscall::Readlink
        | Syscall::Readlinkat
        | Syscall::Getdents64
        | Syscall::Getcwd => Decision::allow("file metadata and listings (landlock decides where)"),
        Syscall::Mkdirat
        | Syscall::Mkdir
        | Syscall::Unlinkat
        | Syscall::Unlink
        | Syscall::Rmdir
        | Syscall::Rename
        | Syscall::Renameat
        | Syscall::Renameat2
        | Syscall::Fadvise64 => {
            Decision::allow("DuckDB's spill files, in its own temporary directory (landlock)")
        }
        Syscall::Flock
        | Syscall::Fcntl
        | Syscall::Dup
        | Syscall::Dup2
        | Syscall::Dup3
        | Syscall::CloseRange
        | Syscall::Pipe2 => Decision::allow("descriptor flags and the database's POSIX locks"),
        // Memory.
        Syscall::Mmap
        | Syscall::Munmap
        | Syscall::Mprotect
        | Syscall::Mremap
        | Syscall::Madvise
        | Syscall::Brk => Decision::allow("memory (bounded by RLIMIT_DATA and RLIMIT_AS)"),
        // Threads and their synchronisation.
        Syscall::Futex
        | Syscall::SetRobustList
        | Syscall::Rseq
        | Syscall::SetTidAddress
        | Syscall::SchedYield
        | Syscall::SchedGetaffinity
        | Syscall::SchedGetparam
        | Syscall::SchedGetscheduler
        | Syscall::Membarrier
        | Syscall::ArchPrctl
        | Syscall::RestartSyscall => Decision::allow("DuckDB's threads and their locks"),
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
                why: "the template forks workers; a namespace flag kills it",
            },
        },
        Syscall::Clone3 => Decision {
            allow: Some(Vec::new()),
            kill: None,
            enosys: true,
            why: "answered ENOSYS: glibc then falls back to clone, whose flags sit in a register \
                  the filter can read (clone3's sit in memory)",
        },
        Syscall::Exit | Syscall::ExitGroup => Decision::allow("ending a thread or the process"),
        // The process itself.
        Syscall::Getpid
        | Syscall::Gettid
        | Syscall::Getppid
        | Syscall::Getuid
        | Syscall::Geteuid
        | Syscall::Getgid
        | Syscall::Getegid
        | Syscall::Uname => Decision::allow("its own ids (the parent check of step 2, raise)"),
        Syscall::ClockNanosleep
        | Syscall::Nanosleep
        | Syscall::ClockGettime
        | Syscall::ClockGetres
        | Syscall::Gettimeofday => Decision::allow("clocks and sleeping"),
        Syscall::RtSigaction
        | Syscall::RtSigprocmask
        | Syscall::RtSigreturn
        | Syscall::RtSigtimedwait
        | Syscall::Sigaltstack => Decision::allow("its own signal handling"),
        Syscall::Getrandom => Decision::allow("per-request secrets from the kernel"),
        Syscall::Sysinfo | Syscall::Getrusage => {
            Decision::allow("memory and CPU figures DuckDB sizes itself by")
        }
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
            "thread names; the template's children set their parent-death signal, dumpable flag \
             and no_new_privs before their own filter",
        ),
        Syscall::Ioctl => Decision::deny("no ioctl is needed: terminals, inode flags"),
        Syscall::Poll | Syscall::Ppoll => {
            Decision::allow("waiting for its request (and the template for its orders)")
        }
        // Signals: to itself only (raise, abort); the template also SIGKILLs its children.
        Syscall::Kill => match role {
            Role::Worker => {
                Decision::allow_if(vec![arg_eq(0, own(scope))?], "signal itself only (raise)")
            }
            Role::Template => Decision::allow_if(
                vec![
                    arg_eq(0, own(scope))?,
                    SeccompRule::new(vec![
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
                    ])?,
                ],
                "signal itself, and SIGKILL a positive pid (a child it has not reaped), never a \
                 group or every process",
            ),
        },
        Syscall::Tkill | Syscall::Tgkill | Syscall::RtSigqueueinfo | Syscall::RtTgsigqueueinfo => {
            Decision::allow_if(
                vec![arg_eq(0, own(scope))?],
                "signal its own threads only (raise, abort)",
            )
        }
        // The template's own work: its children, its control socket, their confinement.
        Syscall::Wait4 | Syscall::Waitid => template_only(role, "reap its children"),
        Syscall::Sendmsg | Syscall::Recvmsg => template_only(
            role,
            "its control socket: orders in, events and worker sockets (SCM_RIGHTS) out",
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
        // Killed: running programs, reaching into other processes, the kernel's large and
        // exploit-prone surfaces, and what a server run as root could change machine-wide.
        Syscall::Execve | Syscall::Execveat => Decision::kill("run another program"),
        Syscall::Fork | Syscall::Vfork => match role {
            Role::Worker => Decision::kill("create a process"),
            Role::Template => Decision::allow("the template forks workers"),
        },
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
        Role::Worker => &[PR_SET_NAME],
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
