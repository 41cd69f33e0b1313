//! The system calls the filter names: each one the allowlist lets through (on some condition)
//! or kills the process for. Every other call is denied with `EPERM` and needs no name here.
//! Each architecture's table (`x86_64.rs`, `aarch64.rs`) gives its number there, or none.

/// Defines [`Syscall`] with its kernel name (as `__NR_<name>` in the kernel's headers).
macro_rules! syscalls {
    ($($variant:ident $name:literal,)*) => {
        /// A system call the filter names, on any architecture.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        #[expect(
            clippy::enum_variant_names,
            reason = "each variant is the kernel's name, and one of them is restart_syscall"
        )]
        pub(in crate::sandbox::confine) enum Syscall {
            $(
                #[doc = concat!("`", $name, "`")]
                $variant,
            )*
        }

        impl Syscall {
            /// Every call the filter names.
            pub(in crate::sandbox::confine) const ALL: &[Syscall] = &[$(Syscall::$variant),*];

            /// Its kernel name.
            pub(in crate::sandbox::confine) fn name(self) -> &'static str {
                match self {
                    $(Syscall::$variant => $name,)*
                }
            }
        }
    };
}

syscalls! {
    Acct "acct",
    AddKey "add_key",
    Adjtimex "adjtimex",
    Bpf "bpf",
    Brk "brk",
    Chroot "chroot",
    ClockAdjtime "clock_adjtime",
    ClockNanosleep "clock_nanosleep",
    ClockSettime "clock_settime",
    Clone "clone",
    Clone3 "clone3",
    Close "close",
    DeleteModule "delete_module",
    Dup2 "dup2",
    Dup3 "dup3",
    Execve "execve",
    Execveat "execveat",
    Exit "exit",
    ExitGroup "exit_group",
    Fcntl "fcntl",
    FinitModule "finit_module",
    Fork "fork",
    Fsconfig "fsconfig",
    Fsmount "fsmount",
    Fsopen "fsopen",
    Fspick "fspick",
    Ftruncate "ftruncate",
    Futex "futex",
    Getdents64 "getdents64",
    Getpid "getpid",
    Getppid "getppid",
    Getrandom "getrandom",
    Gettid "gettid",
    InitModule "init_module",
    IoUringEnter "io_uring_enter",
    IoUringRegister "io_uring_register",
    IoUringSetup "io_uring_setup",
    Ioperm "ioperm",
    Iopl "iopl",
    KexecFileLoad "kexec_file_load",
    KexecLoad "kexec_load",
    Keyctl "keyctl",
    Kill "kill",
    LandlockAddRule "landlock_add_rule",
    LandlockCreateRuleset "landlock_create_ruleset",
    LandlockRestrictSelf "landlock_restrict_self",
    Lseek "lseek",
    Madvise "madvise",
    Mmap "mmap",
    ModifyLdt "modify_ldt",
    Mount "mount",
    MountSetattr "mount_setattr",
    MoveMount "move_mount",
    Mprotect "mprotect",
    Munmap "munmap",
    NameToHandleAt "name_to_handle_at",
    Newfstatat "newfstatat",
    OpenByHandleAt "open_by_handle_at",
    OpenTree "open_tree",
    Openat "openat",
    PerfEventOpen "perf_event_open",
    PidfdGetfd "pidfd_getfd",
    PivotRoot "pivot_root",
    Poll "poll",
    Ppoll "ppoll",
    Prctl "prctl",
    Pread64 "pread64",
    Prlimit64 "prlimit64",
    ProcessMadvise "process_madvise",
    ProcessVmReadv "process_vm_readv",
    ProcessVmWritev "process_vm_writev",
    Ptrace "ptrace",
    Pwrite64 "pwrite64",
    Quotactl "quotactl",
    QuotactlFd "quotactl_fd",
    Read "read",
    Readlink "readlink",
    Readlinkat "readlinkat",
    Reboot "reboot",
    Recvmsg "recvmsg",
    RequestKey "request_key",
    RestartSyscall "restart_syscall",
    Rseq "rseq",
    RtSigaction "rt_sigaction",
    RtSigprocmask "rt_sigprocmask",
    RtSigreturn "rt_sigreturn",
    SchedGetaffinity "sched_getaffinity",
    Seccomp "seccomp",
    Sendto "sendto",
    SetRobustList "set_robust_list",
    Setdomainname "setdomainname",
    Sethostname "sethostname",
    Setns "setns",
    Settimeofday "settimeofday",
    Sigaltstack "sigaltstack",
    Signalfd4 "signalfd4",
    Statx "statx",
    Swapoff "swapoff",
    Swapon "swapon",
    Sysinfo "sysinfo",
    Syslog "syslog",
    Umount2 "umount2",
    Unlink "unlink",
    Unlinkat "unlinkat",
    Unshare "unshare",
    Uselib "uselib",
    Userfaultfd "userfaultfd",
    Vfork "vfork",
    Vhangup "vhangup",
    Wait4 "wait4",
    Write "write",
}
