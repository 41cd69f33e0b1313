//! Step 6: the system-call filter.
//!
//! Default allow: DuckDB's needs (memory, threads, futexes, file reads, clocks) are broad and
//! change between releases, while what the worker must never do is a short list. Landlock
//! already decides *which files*; this filter removes whole kernel facilities the worker has no
//! use for and which landlock does not cover (sockets of every family, SysV IPC, io_uring,
//! namespaces, keyrings, process creation, file *metadata*: landlock lets a sandboxed process
//! chmod, chown, re-time and set extended attributes on any file its user owns, which was
//! verified on this machine), and keeps the worker from undoing steps 2 to 4.
//!
//! A listed call returns `EPERM` rather than killing the process: a denied call fails closed
//! either way, an error keeps DuckDB's own error path (and the test probes) working, and the
//! worker is single-use, so there is no state worth protecting by killing it. `clone3` is the
//! exception: it returns `ENOSYS` so that glibc falls back to `clone`, whose flags (unlike
//! `clone3`'s, which sit in memory) the filter can inspect.
//!
//! On x86_64 every rule also covers the call's x32 number (`nr | 0x4000_0000`) and the x32-only
//! numbers of `execve`, `execveat`, `ptrace`, `ioctl`, `mq_notify`, `kexec_load` and
//! `process_vm_*`: x32 calls carry the same audit architecture as native ones, so a filter keyed
//! on native numbers alone would let them through on kernels built with x32 support (this
//! machine's is not, so that part is checked by unit tests only). Foreign architectures (i386
//! `int 0x80`) are killed by seccompiler's architecture check.
//!
//! This file is the filter: what it denies, each call with its reason, and the two programs
//! built from that; installing them, and what a kernel without seccomp means, is in
//! `seccomp/installation.rs`.

mod installation;

pub(super) use installation::install;

use std::collections::BTreeMap;

use nix::libc;
use seccompiler::{
    BackendError, BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition,
    SeccompFilter, SeccompRule, TargetArch,
};

use super::Role;

/// Calls denied whatever their arguments, each with the reason.
fn always_denied() -> Vec<(i64, &'static str)> {
    let mut calls = vec![
        // Running programs.
        (libc::SYS_execve, "run another program"),
        (libc::SYS_execveat, "run another program"),
        // Reaching into other processes (landlock also forbids these across its boundary).
        (libc::SYS_ptrace, "inspect or control another process"),
        (libc::SYS_process_vm_readv, "read another process's memory"),
        (
            libc::SYS_process_vm_writev,
            "write another process's memory",
        ),
        (libc::SYS_process_madvise, "act on another process's memory"),
        (
            libc::SYS_pidfd_getfd,
            "copy a file descriptor out of another process",
        ),
        (libc::SYS_kcmp, "probe other processes' open files"),
        // A pidfd names a process without a pid the filter could compare (see `signals_only_to`).
        (libc::SYS_pidfd_open, "take a handle on another process"),
        (
            libc::SYS_pidfd_send_signal,
            "signal a process through a handle the filter cannot check",
        ),
        // Networking and IPC: none is needed. AF_UNIX is denied too: landlock below ABI 9 does
        // not control connecting to pathname unix sockets (a container runtime's or D-Bus's).
        (libc::SYS_socket, "open a socket of any family"),
        (libc::SYS_socketpair, "open a socket pair"),
        // SysV and POSIX IPC objects are not files, so landlock does not see them; attaching
        // another process's shared memory segment would read or write its memory.
        (libc::SYS_shmget, "SysV shared memory"),
        (libc::SYS_shmat, "SysV shared memory"),
        (libc::SYS_shmctl, "SysV shared memory"),
        (libc::SYS_msgget, "SysV message queues"),
        (libc::SYS_msgsnd, "SysV message queues"),
        (libc::SYS_msgrcv, "SysV message queues"),
        (libc::SYS_msgctl, "SysV message queues"),
        (libc::SYS_semget, "SysV semaphores"),
        (libc::SYS_semop, "SysV semaphores"),
        (libc::SYS_semtimedop, "SysV semaphores"),
        (libc::SYS_semctl, "SysV semaphores"),
        (libc::SYS_mq_open, "POSIX message queues"),
        (libc::SYS_mq_unlink, "POSIX message queues"),
        (libc::SYS_mq_timedsend, "POSIX message queues"),
        (libc::SYS_mq_timedreceive, "POSIX message queues"),
        (libc::SYS_mq_notify, "POSIX message queues"),
        (libc::SYS_mq_getsetattr, "POSIX message queues"),
        (
            libc::SYS_inotify_init1,
            "watch file activity outside the sandbox",
        ),
        (
            libc::SYS_fanotify_init,
            "watch file activity outside the sandbox",
        ),
        // Namespaces: a user namespace hands out capabilities inside it, opening a large part
        // of the kernel to an unprivileged process.
        (libc::SYS_unshare, "enter new namespaces"),
        (libc::SYS_setns, "join other namespaces"),
        // Mounts (landlock already forbids changing the mount topology; this keeps the code
        // unreachable).
        (libc::SYS_mount, "mount"),
        (libc::SYS_umount2, "unmount"),
        (libc::SYS_pivot_root, "change the root mount"),
        (libc::SYS_chroot, "change the root directory"),
        (libc::SYS_move_mount, "mount"),
        (libc::SYS_open_tree, "clone a mount tree"),
        (libc::SYS_fsopen, "mount"),
        (libc::SYS_fsmount, "mount"),
        (libc::SYS_fsconfig, "mount"),
        (libc::SYS_fspick, "reconfigure a mount"),
        (libc::SYS_mount_setattr, "change mount attributes"),
        // Kernel attack surface the worker never needs.
        (libc::SYS_bpf, "load BPF programs"),
        (
            libc::SYS_perf_event_open,
            "performance counters (side channels, kernel surface)",
        ),
        (
            libc::SYS_userfaultfd,
            "userfaultfd (a classic exploit primitive)",
        ),
        (
            libc::SYS_io_uring_setup,
            "io_uring runs operations in the kernel beyond this filter",
        ),
        (libc::SYS_io_uring_enter, "io_uring"),
        (libc::SYS_io_uring_register, "io_uring"),
        (
            libc::SYS_keyctl,
            "the user's kernel keyrings may hold secrets",
        ),
        (libc::SYS_add_key, "the user's kernel keyrings"),
        (libc::SYS_request_key, "the user's kernel keyrings"),
        (libc::SYS_kexec_load, "load a new kernel"),
        (libc::SYS_kexec_file_load, "load a new kernel"),
        (libc::SYS_init_module, "load a kernel module"),
        (libc::SYS_finit_module, "load a kernel module"),
        (libc::SYS_delete_module, "unload a kernel module"),
        (libc::SYS_reboot, "reboot"),
        (libc::SYS_swapon, "swap"),
        (libc::SYS_swapoff, "swap"),
        (
            libc::SYS_syslog,
            "read the kernel log (addresses, other users' activity)",
        ),
        (libc::SYS_acct, "process accounting"),
        (libc::SYS_quotactl, "disk quotas"),
        (
            libc::SYS_open_by_handle_at,
            "open a file by handle, bypassing path checks",
        ),
        (libc::SYS_name_to_handle_at, "file handles"),
        (libc::SYS_vhangup, "hang up the terminal"),
        // Truncating a file by name: landlock checks it only from ABI 3, and the worker never
        // does it (DuckDB shortens its own files with `ftruncate`, which needs a descriptor
        // opened for writing, which landlock controls from ABI 1).
        (libc::SYS_truncate, "truncate a file by name"),
        // File metadata, which landlock does not control (see the module documentation).
        (libc::SYS_fchmod, "change a file's mode"),
        (libc::SYS_fchmodat, "change a file's mode"),
        (libc::SYS_fchmodat2, "change a file's mode"),
        (libc::SYS_fchown, "change a file's owner"),
        (libc::SYS_fchownat, "change a file's owner"),
        (
            libc::SYS_utimensat,
            "change a file's times (the server watches the database's mtime)",
        ),
        (libc::SYS_setxattr, "set extended attributes"),
        (libc::SYS_lsetxattr, "set extended attributes"),
        (libc::SYS_fsetxattr, "set extended attributes"),
        (SYS_SETXATTRAT, "set extended attributes"),
        (libc::SYS_removexattr, "remove extended attributes"),
        (libc::SYS_lremovexattr, "remove extended attributes"),
        (libc::SYS_fremovexattr, "remove extended attributes"),
        (SYS_REMOVEXATTRAT, "remove extended attributes"),
        (
            SYS_FILE_SETATTR,
            "set inode flags (immutable, append-only, project)",
        ),
        (SYS_OPEN_TREE_ATTR, "clone a mount tree"),
        // Resource limits may only be read from now on: a process with CAP_SYS_RESOURCE (a
        // server run as root) could otherwise raise them again.
        (libc::SYS_setrlimit, "change resource limits"),
        // Machine-wide settings a server run as root could otherwise change.
        (libc::SYS_settimeofday, "set the clock"),
        (libc::SYS_clock_settime, "set the clock"),
        (libc::SYS_clock_adjtime, "adjust the clock"),
        (libc::SYS_adjtimex, "adjust the clock"),
        (libc::SYS_sethostname, "set the host name"),
        (libc::SYS_setdomainname, "set the domain name"),
    ];
    #[cfg(target_arch = "x86_64")]
    calls.extend([
        // The worker never creates processes (threads use `clone` with CLONE_THREAD): no fork
        // bomb, and exec would be pointless anyway.
        (libc::SYS_fork, "create a process"),
        (libc::SYS_vfork, "create a process"),
        (
            libc::SYS_inotify_init,
            "watch file activity outside the sandbox",
        ),
        (libc::SYS_uselib, "load a library the pre-ELF way"),
        (libc::SYS_modify_ldt, "modify the LDT (kernel surface)"),
        (libc::SYS_iopl, "raw I/O port access"),
        (libc::SYS_ioperm, "raw I/O port access"),
        (libc::SYS_chmod, "change a file's mode"),
        (libc::SYS_chown, "change a file's owner"),
        (libc::SYS_lchown, "change a file's owner"),
        (libc::SYS_utime, "change a file's times"),
        (libc::SYS_utimes, "change a file's times"),
        (libc::SYS_futimesat, "change a file's times"),
    ]);
    calls
}

// Calls too new for the `libc` crate. Since Linux 5.1 new calls have one number on every
// architecture (arch/x86/entry/syscalls/syscall_64.tbl, include/uapi/asm-generic/unistd.h);
// 463 and 466 were checked on this machine's 6.18 kernel with a small C program.
const SYS_SETXATTRAT: i64 = 463;
const SYS_REMOVEXATTRAT: i64 = 466;
const SYS_OPEN_TREE_ATTR: i64 = 467;
const SYS_FILE_SETATTR: i64 = 469;

const PR_SET_PTRACER: u64 = 0x5961_6d61;
/// `_IOW('f', 2, long)` and its 32-bit twin `_IOW('f', 2, int)`: set inode flags (immutable,
/// append-only, …) on an open file, e.g. the database.
const FS_IOC_SETFLAGS: u64 = 0x4008_6602;
const FS_IOC32_SETFLAGS: u64 = 0x4004_6602;
/// `_IOW('X', 32, struct fsxattr)`: likewise, plus project ids.
const FS_IOC_FSSETXATTR: u64 = 0x401c_5820;

/// A call denied only with some arguments: (call, rules (any may match), reason).
type ConditionalDenial = (i64, Vec<SeccompRule>, &'static str);

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

/// Calls of [`always_denied`] the template needs: creating its children, and letting each
/// child lower its own limits before it installs the worker's filter (glibc's `setrlimit` is
/// `prlimit64(0, …)`, see [`denied_with_arguments`]).
fn template_needs(nr: i64) -> bool {
    #[cfg(target_arch = "x86_64")]
    if nr == libc::SYS_fork || nr == libc::SYS_vfork {
        return true;
    }
    nr == libc::SYS_setrlimit
}

impl FilterScope {
    /// Whether landlock handles truncation (`LANDLOCK_ACCESS_FS_TRUNCATE`, ABI 3).
    fn landlock_handles_truncate(&self) -> bool {
        self.landlock_abi.is_some_and(|abi| abi >= 3)
    }
}

/// Calls denied only with some arguments.
fn denied_with_arguments(scope: &FilterScope) -> Result<Vec<ConditionalDenial>, BackendError> {
    let clone_without_thread = SeccompRule::new(vec![SeccompCondition::new(
        0,
        SeccompCmpArgLen::Qword,
        SeccompCmpOp::MaskedEq(libc::CLONE_THREAD as u64),
        0,
    )?])?;
    // A thread is `clone` with CLONE_THREAD (glibc's pthread_create, after `clone3` got ENOSYS);
    // without it, `clone` creates a process. Namespace flags need a new process or
    // CLONE_NEWUSER, which the kernel refuses together with CLONE_THREAD. The template forks,
    // but a namespace flag is denied to it too.
    let (clone_rules, clone_why) = match scope.role {
        Role::Worker => (vec![clone_without_thread], "create a process or namespace"),
        Role::Template => (
            NAMESPACE_FLAGS
                .iter()
                .map(|&flag| flag_set(0, flag))
                .collect::<Result<Vec<_>, _>>()?,
            "create a namespace",
        ),
    };
    // A forked child sets its own parent-death signal (fork clears it) and its dumpable flag
    // before its worker filter takes both away.
    let prctl_rules = match scope.role {
        Role::Worker => vec![
            arg_eq(0, libc::PR_SET_DUMPABLE as u64)?,
            arg_eq(0, libc::PR_SET_PDEATHSIG as u64)?,
            arg_eq(0, PR_SET_PTRACER)?,
        ],
        Role::Template => vec![arg_eq(0, PR_SET_PTRACER)?],
    };
    // Another pid: same-user processes may change each other's limits, and the server's must
    // stay. A new limit of our own: see `setrlimit` above; the template's children lower theirs.
    let prlimit_rules = match scope.role {
        Role::Worker => vec![arg_ne(0, 0)?, ptr_not_null(2)?],
        Role::Template => vec![arg_ne(0, 0)?],
    };
    let mut denials = vec![
        (libc::SYS_clone, clone_rules, clone_why),
        (
            libc::SYS_prctl,
            prctl_rules,
            "undo confinement steps 2 and 3, or invite a tracer",
        ),
        (
            libc::SYS_ioctl,
            vec![
                arg_eq(1, libc::TIOCSTI)?,
                arg_eq(1, libc::TIOCLINUX)?,
                arg_eq(1, FS_IOC_SETFLAGS)?,
                arg_eq(1, FS_IOC32_SETFLAGS)?,
                arg_eq(1, FS_IOC_FSSETXATTR)?,
            ],
            // stderr is inherited and may be a terminal; landlock's ioctl right is only checked
            // when a device file is opened, so it covers neither inherited descriptors nor
            // regular files such as the database.
            "inject input into the operator's terminal, or set inode flags",
        ),
        (
            libc::SYS_prlimit64,
            // Reading our own limits (pid 0, no new limit) is what glibc's getrlimit does.
            prlimit_rules,
            "change resource limits",
        ),
        (
            libc::SYS_setpriority,
            vec![arg_ne(0, libc::PRIO_PROCESS as u64)?, arg_ne(1, 0)?],
            "lower the priority of other processes of the user",
        ),
        (
            libc::SYS_personality,
            // 0xffffffff only queries; any other value changes the execution domain, e.g.
            // READ_IMPLIES_EXEC would make later readable mappings executable.
            vec![arg_ne(0, 0xffff_ffff)?],
            "change the execution domain",
        ),
    ];
    denials.extend(signals_only_to(scope.own_pid, scope.role)?);
    if !scope.landlock_handles_truncate() {
        denials.extend(read_only_truncating_opens()?);
    }
    Ok(denials)
}

/// Signals may go to the worker itself only: glibc's `raise` and `abort` are
/// `tgkill(getpid(), gettid(), sig)`, and nothing in DuckDB signals anyone else. Landlock scopes
/// signals only from ABI 6; this rule holds on every kernel. The target is the first argument of
/// each call: a pid for `kill` (0, -1 and negative process groups are other processes too, so
/// only the exact pid passes), a thread-group id for `tgkill` and both sigqueue calls, and a
/// thread id for `tkill` (only our main thread's, which equals our pid, passes).
///
/// The template also kills its own children, and only with SIGKILL: `kill(pid, SIGKILL)` passes
/// for a positive pid up to the kernel's largest (`PID_MAX_LIMIT`), never for 0 or a negative
/// target (a process group, or every process of the user). Which pids are its children the
/// filter cannot know; the template kills only children it has not reaped
/// (`crate::sandbox::zygote`), and every child replaces this rule with the worker's.
fn signals_only_to(own_pid: i32, role: Role) -> Result<Vec<ConditionalDenial>, BackendError> {
    let pid = own_pid as u32 as u64;
    let mut denials = Vec::new();
    if role == Role::Template {
        denials.push((
            libc::SYS_kill,
            vec![
                SeccompRule::new(vec![
                    SeccompCondition::new(0, SeccompCmpArgLen::Dword, SeccompCmpOp::Ne, pid)?,
                    SeccompCondition::new(
                        1,
                        SeccompCmpArgLen::Dword,
                        SeccompCmpOp::Ne,
                        libc::SIGKILL as u64,
                    )?,
                ])?,
                arg_eq(0, 0)?,
                SeccompRule::new(vec![SeccompCondition::new(
                    0,
                    SeccompCmpArgLen::Dword,
                    SeccompCmpOp::Gt,
                    PID_MAX_LIMIT,
                )?])?,
            ],
            "signal a process other than the template itself, except to kill a child",
        ));
    }
    for nr in [
        libc::SYS_kill,
        libc::SYS_tkill,
        libc::SYS_tgkill,
        libc::SYS_rt_sigqueueinfo,
        libc::SYS_rt_tgsigqueueinfo,
    ] {
        if role == Role::Template && nr == libc::SYS_kill {
            continue;
        }
        denials.push((
            nr,
            vec![arg_ne(0, pid)?],
            "signal a process other than the worker itself",
        ));
    }
    Ok(denials)
}

/// `open(path, O_RDONLY | O_TRUNC)` truncates a file that may only be read: the kernel asks
/// for write permission (which the user has on their own database) but landlock below ABI 3
/// sees a read-only open of a file it grants. Denied on such kernels; an `O_TRUNC` open for
/// writing needs landlock's write right, which nothing has.
fn read_only_truncating_opens() -> Result<Vec<ConditionalDenial>, BackendError> {
    let read_only_truncate = |flags_index: u8| -> Result<SeccompRule, BackendError> {
        SeccompRule::new(vec![SeccompCondition::new(
            flags_index,
            SeccompCmpArgLen::Dword,
            SeccompCmpOp::MaskedEq((libc::O_ACCMODE | libc::O_TRUNC) as u64),
            libc::O_TRUNC as u64,
        )?])
    };
    let why = "truncate a read-only file (landlock below ABI 3 has no truncate right)";
    #[allow(unused_mut)]
    let mut denials = vec![(libc::SYS_openat, vec![read_only_truncate(2)?], why)];
    #[cfg(target_arch = "x86_64")]
    denials.push((libc::SYS_open, vec![read_only_truncate(1)?], why));
    Ok(denials)
}

fn arg_eq(index: u8, value: u64) -> Result<SeccompRule, BackendError> {
    SeccompRule::new(vec![SeccompCondition::new(
        index,
        SeccompCmpArgLen::Dword,
        SeccompCmpOp::Eq,
        value,
    )?])
}

fn arg_ne(index: u8, value: u64) -> Result<SeccompRule, BackendError> {
    SeccompRule::new(vec![SeccompCondition::new(
        index,
        SeccompCmpArgLen::Dword,
        SeccompCmpOp::Ne,
        value,
    )?])
}

fn ptr_not_null(index: u8) -> Result<SeccompRule, BackendError> {
    SeccompRule::new(vec![SeccompCondition::new(
        index,
        SeccompCmpArgLen::Qword,
        SeccompCmpOp::Ne,
        0,
    )?])
}

/// The x32 system-call bit (x86_64 only).
#[cfg(target_arch = "x86_64")]
const X32_SYSCALL_BIT: i64 = 0x4000_0000;

/// x32-only numbers of calls in [`always_denied`] (arch/x86/entry/syscalls/syscall_64.tbl,
/// 512–547): execve 520, ptrace 521, mq_notify 527, kexec_load 528, process_vm_readv 539,
/// process_vm_writev 540, execveat 545.
#[cfg(target_arch = "x86_64")]
const X32_ONLY_DENIED: [i64; 7] = [520, 521, 527, 528, 539, 540, 545];

/// x32-only numbers of calls with argument rules, and the native call whose rules they get:
/// ioctl 514, rt_sigqueueinfo 524, rt_tgsigqueueinfo 536.
#[cfg(target_arch = "x86_64")]
const X32_ONLY_WITH_RULES: [(i64, i64); 3] = [
    (514, libc::SYS_ioctl),
    (524, libc::SYS_rt_sigqueueinfo),
    (536, libc::SYS_rt_tgsigqueueinfo),
];

/// The kernel's largest pid (`PID_MAX_LIMIT` on 64-bit, 2^22): a `kill` target above it, as a
/// 32-bit unsigned value, is a negative pid.
const PID_MAX_LIMIT: u64 = 1 << 22;

/// `clone` flags that create namespaces (`CLONE_NEWNS` … `CLONE_NEWNET`, and `CLONE_NEWTIME`,
/// 0x80, too new for the libc crate's constants): denied to the template too.
const NAMESPACE_FLAGS: [u64; 8] = [
    libc::CLONE_NEWNS as u64,
    libc::CLONE_NEWCGROUP as u64,
    libc::CLONE_NEWUTS as u64,
    libc::CLONE_NEWIPC as u64,
    libc::CLONE_NEWUSER as u64,
    libc::CLONE_NEWPID as u64,
    libc::CLONE_NEWNET as u64,
    0x80,
];

/// A rule matching when `flag` is set in argument `index`.
fn flag_set(index: u8, flag: u64) -> Result<SeccompRule, BackendError> {
    SeccompRule::new(vec![SeccompCondition::new(
        index,
        SeccompCmpArgLen::Qword,
        SeccompCmpOp::MaskedEq(flag),
        flag,
    )?])
}

/// The rule map of the `EPERM` filter: syscall number → rules (empty: always).
fn eperm_rules(scope: &FilterScope) -> Result<BTreeMap<i64, Vec<SeccompRule>>, BackendError> {
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    for (nr, _why) in always_denied() {
        if scope.role == Role::Template && template_needs(nr) {
            continue;
        }
        rules.insert(nr, Vec::new());
    }
    for (nr, conditional, _why) in denied_with_arguments(scope)? {
        rules.insert(nr, conditional);
    }
    #[cfg(target_arch = "x86_64")]
    {
        let native: Vec<(i64, Vec<SeccompRule>)> =
            rules.iter().map(|(nr, r)| (*nr, r.clone())).collect();
        for (nr, r) in native {
            rules.insert(nr | X32_SYSCALL_BIT, r);
        }
        for nr in X32_ONLY_DENIED {
            rules.insert(nr | X32_SYSCALL_BIT, Vec::new());
        }
        for (x32_only, native) in X32_ONLY_WITH_RULES {
            if let Some(native_rules) = rules.get(&native).cloned() {
                rules.insert(x32_only | X32_SYSCALL_BIT, native_rules);
            }
        }
    }
    Ok(rules)
}

/// The rule map of the `ENOSYS` filter: `clone3` always (glibc then falls back to `clone`), and
/// `openat2` where landlock cannot see truncation (its flags sit in memory, out of the filter's
/// reach; glibc's `open` does not use it).
fn enosys_rules(scope: &FilterScope) -> BTreeMap<i64, Vec<SeccompRule>> {
    let mut calls = vec![libc::SYS_clone3];
    if !scope.landlock_handles_truncate() {
        calls.push(libc::SYS_openat2);
    }
    let mut rules = BTreeMap::new();
    for nr in calls {
        rules.insert(nr, Vec::new());
        #[cfg(target_arch = "x86_64")]
        rules.insert(nr | X32_SYSCALL_BIT, Vec::new());
    }
    rules
}

/// Compile the filters for the running architecture: the `EPERM` one, then the `ENOSYS` one.
///
/// `stacked_on`: the filter already in force, which a child forked from the template keeps (a
/// process cannot shed a filter). Each program then holds only the rules of the calls whose
/// rules differ from that filter's ([`beyond`]), and a program left with none is not built:
/// stacked, the two filters deny exactly what that filter and a whole one for `scope` together
/// would. The worker's whole `EPERM` program is some 1,400 instructions; building and
/// installing it in every forked child took ~1.5 ms of CPU, the stacked one a fraction of it.
fn compile(
    scope: &FilterScope,
    stacked_on: Option<&FilterScope>,
) -> Result<Vec<BpfProgram>, BackendError> {
    let arch = TargetArch::try_from(std::env::consts::ARCH)?;
    let compile_one = |rules, errno: i32| -> Result<BpfProgram, BackendError> {
        let filter = SeccompFilter::new(
            rules,
            SeccompAction::Allow,
            SeccompAction::Errno(errno as u32),
            arch,
        )?;
        filter.try_into()
    };
    let (eperm, enosys) = rule_maps(scope, stacked_on)?;
    [(eperm, libc::EPERM), (enosys, libc::ENOSYS)]
        .into_iter()
        .filter(|(rules, _)| !rules.is_empty())
        .map(|(rules, errno)| compile_one(rules, errno))
        .collect()
}

/// The rule maps of the `EPERM` and `ENOSYS` filters for `scope`, stacked on a filter built for
/// `stacked_on` if one is in force (see [`compile`]).
#[allow(clippy::type_complexity)]
fn rule_maps(
    scope: &FilterScope,
    stacked_on: Option<&FilterScope>,
) -> Result<
    (
        BTreeMap<i64, Vec<SeccompRule>>,
        BTreeMap<i64, Vec<SeccompRule>>,
    ),
    BackendError,
> {
    let eperm = eperm_rules(scope)?;
    let enosys = enosys_rules(scope);
    Ok(match stacked_on {
        None => (eperm, enosys),
        Some(below) => (
            beyond(eperm, &eperm_rules(below)?),
            beyond(enosys, &enosys_rules(below)),
        ),
    })
}

/// The rules of `wanted` for each call whose rules in `in_force` are not the same. Per call,
/// a filter denies when any of its rules matches and stacked filters deny when either does, so
/// `in_force` stacked with the result denies exactly what `in_force` stacked with all of
/// `wanted` would: where the rules are the same, `wanted` adds nothing.
fn beyond(
    wanted: BTreeMap<i64, Vec<SeccompRule>>,
    in_force: &BTreeMap<i64, Vec<SeccompRule>>,
) -> BTreeMap<i64, Vec<SeccompRule>> {
    wanted
        .into_iter()
        .filter(|(nr, rules)| in_force.get(nr) != Some(rules))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A filter for pid 4242 on a kernel with landlock ABI `abi`.
    fn scope(abi: Option<u8>) -> FilterScope {
        FilterScope {
            own_pid: 4242,
            landlock_abi: abi,
            role: Role::Worker,
        }
    }

    /// The template's filter for pid 4242 on a kernel with landlock ABI 6.
    fn template_scope() -> FilterScope {
        FilterScope {
            role: Role::Template,
            ..scope(Some(6))
        }
    }

    #[test]
    fn the_template_may_fork_but_never_exec_or_enter_namespaces() {
        let template = eperm_rules(&template_scope()).unwrap();
        let worker = eperm_rules(&scope(Some(6))).unwrap();
        for nr in [libc::SYS_fork, libc::SYS_vfork, libc::SYS_setrlimit] {
            assert!(worker.contains_key(&nr), "the worker is denied {nr}");
            assert!(!template.contains_key(&nr), "the template needs {nr}");
        }
        for nr in [
            libc::SYS_execve,
            libc::SYS_execveat,
            libc::SYS_ptrace,
            libc::SYS_socket,
            libc::SYS_unshare,
            libc::SYS_setns,
        ] {
            assert_eq!(template.get(&nr), Some(&Vec::new()), "{nr} stays denied");
        }
        // clone: no rule for "no CLONE_THREAD" any more, one per namespace flag instead.
        assert_eq!(template[&libc::SYS_clone].len(), NAMESPACE_FLAGS.len());
        assert_eq!(worker[&libc::SYS_clone].len(), 1);
    }

    #[test]
    fn every_call_the_template_is_denied_the_worker_is_denied_too() {
        // The child stacks the worker's filter on the template's: the result is the worker's
        // exactly only if the template's denies nothing the worker's allows outright.
        let template = eperm_rules(&template_scope()).unwrap();
        let worker = eperm_rules(&scope(Some(6))).unwrap();
        for nr in template.keys() {
            assert!(
                worker.contains_key(nr),
                "{nr} is denied to the template only"
            );
        }
    }

    #[test]
    fn the_template_may_kill_children_but_not_groups_or_everyone() {
        let template = eperm_rules(&template_scope()).unwrap();
        // kill(pid != own && sig != SIGKILL), kill(0, …), kill(pid > PID_MAX_LIMIT, …).
        assert_eq!(template[&libc::SYS_kill].len(), 3);
        // The other signal calls stay limited to the template itself.
        for nr in [libc::SYS_tkill, libc::SYS_tgkill, libc::SYS_rt_sigqueueinfo] {
            assert_eq!(template[&nr].len(), 1, "{nr}");
        }
        // -1 (every process of the user) as the 32-bit value the filter compares.
        assert!(u64::from(-1i32 as u32) > PID_MAX_LIMIT);
    }

    #[test]
    fn filters_compile_for_this_architecture() {
        for abi in [None, Some(1), Some(2), Some(3), Some(6), Some(9)] {
            let programs = compile(&scope(abi), None).expect("filters compile");
            let [eperm, enosys] = programs.as_slice() else {
                panic!("{abi:?}: {} programs, not 2", programs.len());
            };
            assert!(eperm.len() > always_denied().len());
            assert!(!enosys.is_empty());
            // BPF_MAXINSNS: a longer program gets EINVAL, which `install` would read as a
            // kernel without seccomp filters.
            assert!(
                eperm.len() <= 4096 && enosys.len() <= 4096,
                "{abi:?}: {}",
                eperm.len()
            );
        }
    }

    /// A forked child's scope: a worker's, with its own pid, over the template's filter.
    fn child_of(template: &FilterScope, child_pid: i32) -> FilterScope {
        FilterScope {
            own_pid: child_pid,
            role: Role::Worker,
            ..*template
        }
    }

    #[test]
    fn a_stacked_child_filter_denies_with_the_template_exactly_what_a_whole_worker_filter_would() {
        for abi in [None, Some(1), Some(2), Some(3), Some(6), Some(9)] {
            let template = FilterScope {
                role: Role::Template,
                ..scope(abi)
            };
            let child = child_of(&template, 5151);
            let (stacked_eperm, stacked_enosys) =
                rule_maps(&child, Some(&template)).expect("rules");
            let (whole_eperm, whole_enosys) = rule_maps(&child, None).expect("rules");
            let (template_eperm, template_enosys) = rule_maps(&template, None).expect("rules");
            for (stacked, whole, in_force) in [
                (&stacked_eperm, &whole_eperm, &template_eperm),
                (&stacked_enosys, &whole_enosys, &template_enosys),
            ] {
                // Per call: whatever the whole filter denies, the template's rules or the
                // stacked ones deny with the very same rules.
                for (nr, rules) in whole {
                    assert!(
                        stacked.get(nr) == Some(rules) || in_force.get(nr) == Some(rules),
                        "{abi:?}: call {nr} loses rules"
                    );
                }
                // And the stacked filter adds nothing of its own.
                for (nr, rules) in stacked {
                    assert_eq!(whole.get(nr), Some(rules), "{abi:?}: call {nr}");
                }
            }
            // What the template may and the worker may not: processes, signals to others,
            // limits, its parent-death signal.
            for nr in [
                libc::SYS_fork,
                libc::SYS_vfork,
                libc::SYS_clone,
                libc::SYS_kill,
                libc::SYS_tgkill,
                libc::SYS_setrlimit,
                libc::SYS_prlimit64,
                libc::SYS_prctl,
            ] {
                assert!(stacked_eperm.contains_key(&nr), "{abi:?}: call {nr}");
            }
            // The calls both deny the same way are left to the template's filter.
            assert!(!stacked_eperm.contains_key(&libc::SYS_execve));
            assert!(!stacked_eperm.contains_key(&libc::SYS_socket));
            assert!(
                stacked_enosys.is_empty(),
                "{abi:?}: clone3 is the template's"
            );
        }
    }

    #[test]
    fn a_stacked_child_filter_is_one_small_program() {
        let template = FilterScope {
            role: Role::Template,
            ..scope(Some(6))
        };
        let child = child_of(&template, 5151);
        let stacked = compile(&child, Some(&template)).expect("compiles");
        let whole = compile(&child, None).expect("compiles");
        assert_eq!(
            stacked.len(),
            1,
            "no ENOSYS program: the template's is the same"
        );
        assert!(
            stacked[0].len() * 5 < whole[0].len(),
            "{} instructions against {}",
            stacked[0].len(),
            whole[0].len()
        );
    }

    #[test]
    fn exec_socket_ptrace_and_mounts_are_denied_unconditionally() {
        let rules = eperm_rules(&scope(Some(6))).unwrap();
        for nr in [
            libc::SYS_execve,
            libc::SYS_execveat,
            libc::SYS_socket,
            libc::SYS_socketpair,
            libc::SYS_ptrace,
            libc::SYS_process_vm_readv,
            libc::SYS_mount,
            libc::SYS_bpf,
            libc::SYS_io_uring_setup,
            libc::SYS_unshare,
        ] {
            assert_eq!(rules.get(&nr).map(Vec::len), Some(0), "syscall {nr}");
        }
    }

    #[test]
    fn file_metadata_changes_are_denied() {
        let rules = eperm_rules(&scope(Some(6))).unwrap();
        for nr in [
            libc::SYS_fchmodat,
            libc::SYS_fchownat,
            libc::SYS_utimensat,
            libc::SYS_setxattr,
            SYS_SETXATTRAT,
            libc::SYS_setrlimit,
        ] {
            assert_eq!(rules.get(&nr).map(Vec::len), Some(0), "syscall {nr}");
        }
    }

    #[test]
    fn threads_are_not_denied_but_processes_are() {
        let rules = eperm_rules(&scope(Some(6))).unwrap();
        assert_eq!(rules.get(&libc::SYS_clone).map(Vec::len), Some(1));
        assert!(
            !rules.contains_key(&libc::SYS_clone3),
            "clone3 belongs to the ENOSYS filter"
        );
        assert!(enosys_rules(&scope(Some(6))).contains_key(&libc::SYS_clone3));
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn x32_numbers_are_denied_too() {
        let rules = eperm_rules(&scope(Some(6))).unwrap();
        for nr in [libc::SYS_execve, libc::SYS_socket, libc::SYS_clone] {
            assert_eq!(
                rules.get(&(nr | X32_SYSCALL_BIT)),
                rules.get(&nr),
                "syscall {nr}"
            );
        }
        for nr in X32_ONLY_DENIED {
            assert!(rules.contains_key(&(nr | X32_SYSCALL_BIT)));
        }
        for (x32_only, native) in X32_ONLY_WITH_RULES {
            assert_eq!(
                rules.get(&(x32_only | X32_SYSCALL_BIT)),
                rules.get(&native),
                "x32 {x32_only}"
            );
        }
        assert_eq!(rules.get(&libc::SYS_ioctl).map(Vec::len), Some(5));
    }

    #[test]
    fn signals_are_limited_to_the_worker_itself_at_every_abi() {
        for abi in [None, Some(1), Some(5), Some(6), Some(9)] {
            let rules = eperm_rules(&scope(abi)).unwrap();
            for nr in [
                libc::SYS_kill,
                libc::SYS_tkill,
                libc::SYS_tgkill,
                libc::SYS_rt_sigqueueinfo,
                libc::SYS_rt_tgsigqueueinfo,
            ] {
                assert_eq!(rules.get(&nr).map(Vec::len), Some(1), "{abi:?}: {nr}");
            }
            for nr in [libc::SYS_pidfd_open, libc::SYS_pidfd_send_signal] {
                assert_eq!(rules.get(&nr).map(Vec::len), Some(0), "{abi:?}: {nr}");
            }
        }
    }

    #[test]
    fn seccomp_takes_over_truncation_only_below_landlock_abi_3() {
        for (abi, takes_over) in [
            (None, true),
            (Some(1), true),
            (Some(2), true),
            (Some(3), false),
            (Some(6), false),
        ] {
            let rules = eperm_rules(&scope(abi)).unwrap();
            assert_eq!(
                rules.contains_key(&libc::SYS_openat),
                takes_over,
                "{abi:?}: openat"
            );
            assert_eq!(
                enosys_rules(&scope(abi)).contains_key(&libc::SYS_openat2),
                takes_over,
                "{abi:?}: openat2"
            );
            // By name: denied on every kernel.
            assert_eq!(rules.get(&libc::SYS_truncate).map(Vec::len), Some(0));
        }
    }
}
