//! The seccomp filters, built for real and run against each architecture's table.

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

fn maps(scope: &FilterScope) -> RuleMaps {
    rule_maps(scope, Arch::X86_64).unwrap()
}

fn nr(call: Syscall) -> i64 {
    Arch::X86_64.number(call).unwrap()
}

#[test]
fn a_call_the_filter_does_not_name_is_denied_and_the_dangerous_families_kill() {
    for arch in Arch::ALL {
        for role_scope in [scope(Some(6)), template_scope()] {
            let maps = rule_maps(&role_scope, arch).unwrap();
            for call in [
                Syscall::Execve,
                Syscall::Execveat,
                Syscall::Ptrace,
                Syscall::ProcessVmReadv,
                Syscall::Unshare,
                Syscall::Setns,
                Syscall::IoUringSetup,
                Syscall::Bpf,
                Syscall::Keyctl,
                Syscall::AddKey,
                Syscall::FinitModule,
                Syscall::KexecLoad,
                Syscall::Mount,
            ] {
                let nr = arch.number(call).unwrap();
                assert_eq!(maps.kill.get(&nr), Some(&Vec::new()), "{arch:?}: {call:?}");
                assert!(!maps.allow.contains_key(&nr), "{arch:?}: {call:?}");
            }
        }
    }
}

#[test]
fn sockets_ipc_file_metadata_and_truncation_by_name_are_not_on_the_allowlist() {
    // Not named at all, so EPERM: every socket family, SysV and POSIX IPC, the calls that
    // change a file's mode, owner, times or extended attributes (which landlock does not
    // see), truncation by name, pidfds, new limits, inotify.
    let native = Arch::native().unwrap();
    for role_scope in [scope(None), scope(Some(6)), template_scope()] {
        let maps = rule_maps(&role_scope, native).unwrap();
        for nr in [
            libc::SYS_socket,
            libc::SYS_socketpair,
            libc::SYS_connect,
            libc::SYS_shmget,
            libc::SYS_shmat,
            libc::SYS_msgget,
            libc::SYS_semget,
            libc::SYS_mq_open,
            libc::SYS_fchmod,
            libc::SYS_fchmodat,
            libc::SYS_fchown,
            libc::SYS_fchownat,
            libc::SYS_utimensat,
            libc::SYS_setxattr,
            libc::SYS_fsetxattr,
            libc::SYS_removexattr,
            libc::SYS_truncate,
            libc::SYS_openat2,
            libc::SYS_pidfd_open,
            libc::SYS_pidfd_send_signal,
            libc::SYS_setrlimit,
            libc::SYS_inotify_init1,
            libc::SYS_memfd_create,
            libc::SYS_personality,
            libc::SYS_ioctl,
        ] {
            assert!(!maps.allow.contains_key(&nr), "{role_scope:?}: call {nr}");
        }
    }
}

#[test]
fn the_worker_may_start_threads_only_and_a_process_kills_it() {
    let worker = maps(&scope(Some(6)));
    let clone = nr(Syscall::Clone);
    assert_eq!(worker.allow[&clone].len(), 1);
    // No CLONE_THREAD, or any namespace flag.
    assert_eq!(worker.kill[&clone].len(), 1 + policy::NAMESPACE_FLAGS.len());
    for call in [Syscall::Fork, Syscall::Vfork] {
        assert_eq!(worker.kill.get(&nr(call)), Some(&Vec::new()), "{call:?}");
    }
    // clone3 passes the allowlist to be answered ENOSYS.
    let clone3 = nr(Syscall::Clone3);
    assert_eq!(worker.allow.get(&clone3), Some(&Vec::new()));
    assert_eq!(worker.enosys.get(&clone3), Some(&Vec::new()));
    // aarch64 has no fork: clone is the one way, and it is guarded the same way.
    let aarch64 = rule_maps(&scope(Some(6)), Arch::Aarch64).unwrap();
    let clone = Arch::Aarch64.number(Syscall::Clone).unwrap();
    assert_eq!(aarch64.kill[&clone], worker.kill[&nr(Syscall::Clone)]);
    assert_eq!(Arch::Aarch64.number(Syscall::Fork), None);
}

#[test]
fn the_template_may_fork_and_kill_children_but_never_exec_or_enter_namespaces() {
    let template = maps(&template_scope());
    let worker = maps(&scope(Some(6)));
    // It forks with clone (as glibc does): any flags but the namespace ones, each of which
    // kills; fork and vfork themselves kill, as for a worker.
    assert_eq!(template.allow[&nr(Syscall::Clone)].len(), 1);
    assert_eq!(
        template.kill[&nr(Syscall::Clone)].len(),
        policy::NAMESPACE_FLAGS.len()
    );
    for call in [
        Syscall::Fork,
        Syscall::Vfork,
        Syscall::Execve,
        Syscall::Ptrace,
    ] {
        assert_eq!(template.kill.get(&nr(call)), Some(&Vec::new()), "{call:?}");
    }
    for call in [
        Syscall::Wait4,
        Syscall::Signalfd4,
        Syscall::Recvmsg,
        Syscall::Sendto,
    ] {
        assert_eq!(template.allow.get(&nr(call)), Some(&Vec::new()), "{call:?}");
        assert!(!worker.allow.contains_key(&nr(call)), "{call:?}");
    }
    assert_eq!(template.allow[&nr(Syscall::Seccomp)].len(), 1);
    assert!(!worker.allow.contains_key(&nr(Syscall::Seccomp)));
    // kill(child, SIGKILL) for a positive pid only.
    assert_eq!(template.allow[&nr(Syscall::Kill)].len(), 1);
    assert!(u64::from(-1i32 as u32) > policy::PID_MAX_LIMIT);
}

#[test]
fn everything_the_worker_may_do_the_template_may_and_everything_the_template_kills_kills_the_worker()
 {
    // So a forked child, which keeps the template's filter under its own, has exactly a
    // worker's rights.
    for arch in Arch::ALL {
        let template = rule_maps(&template_scope(), arch).unwrap();
        let worker = rule_maps(&scope(Some(6)), arch).unwrap();
        // Three calls whose rules differ: the worker narrows clone (CLONE_THREAD too) and
        // prlimit64 (no new limit too); kill is the template's SIGKILL of a child, so a
        // forked child signals itself only with SIGKILL (DuckDB's kill(own pid, 0) check
        // of its temporary files then reads EPERM: alive, which it is).
        let narrowed =
            [Syscall::Clone, Syscall::Prlimit64, Syscall::Kill].map(|call| arch.number(call));
        for (nr, rules) in &worker.allow {
            let Some(theirs) = template.allow.get(nr) else {
                panic!("{arch:?}: the worker may make call {nr}, the template may not");
            };
            assert!(
                theirs.is_empty()
                    || rules.iter().all(|rule| theirs.contains(rule))
                    || narrowed.contains(&Some(*nr)),
                "{arch:?}: the worker may make call {nr} where the template may not"
            );
        }
        for nr in template.kill.keys() {
            assert!(
                worker.kill.contains_key(nr),
                "{arch:?}: {nr} kills the template only"
            );
        }
    }
}

#[test]
fn filters_compile_for_every_architecture_within_the_kernels_limit() {
    for arch in Arch::ALL {
        for abi in [None, Some(1), Some(2), Some(3), Some(6), Some(9)] {
            for role in [Role::Worker, Role::Template] {
                let scope = FilterScope { role, ..scope(abi) };
                let programs = compile_for(arch, &scope, None).expect("filters compile");
                assert_eq!(programs.len(), 3, "{arch:?} {abi:?} {role:?}");
                // BPF_MAXINSNS: a longer program gets EINVAL, which `install` would read
                // as a kernel without seccomp filters.
                for program in &programs {
                    assert!(program.len() <= 4096, "{arch:?} {abi:?}: {}", program.len());
                }
            }
        }
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
fn a_stacked_child_filter_allows_and_kills_with_the_template_exactly_what_a_whole_worker_filter_would()
 {
    for arch in Arch::ALL {
        for abi in [None, Some(1), Some(2), Some(3), Some(6), Some(9)] {
            let template = FilterScope {
                role: Role::Template,
                ..scope(abi)
            };
            let child = child_of(&template, 5151);
            let in_force = rule_maps(&template, arch).unwrap();
            let whole = rule_maps(&child, arch).unwrap();
            let stacked = stacked(whole.clone(), &in_force);
            // Allowed by both filters exactly when by the template's and a whole worker's:
            // each call the child lets through unconditionally, the template restricts as
            // the worker would; every other keeps the worker's rules.
            assert_eq!(
                stacked.allow.keys().collect::<Vec<_>>(),
                whole.allow.keys().collect::<Vec<_>>(),
                "{arch:?} {abi:?}"
            );
            for (nr, rules) in &stacked.allow {
                assert!(
                    rules == &whole.allow[nr]
                        || (rules.is_empty() && in_force.allow.get(nr) == Some(&whole.allow[nr])),
                    "{arch:?} {abi:?}: call {nr}"
                );
            }
            // Killed by either exactly when by the template's or a whole worker's.
            for (nr, rules) in &whole.kill {
                assert!(
                    stacked.kill.get(nr) == Some(rules) || in_force.kill.get(nr) == Some(rules),
                    "{arch:?} {abi:?}: call {nr} loses its kill rules"
                );
            }
            for (nr, rules) in &stacked.kill {
                assert_eq!(whole.kill.get(nr), Some(rules), "{arch:?} {abi:?}: {nr}");
            }
            // What the template may and the worker may not: processes, signals, limits, its
            // parent-death signal, the template's own calls.
            let clone = arch.number(Syscall::Clone).unwrap();
            assert_eq!(stacked.kill.get(&clone), whole.kill.get(&clone));
            for call in [Syscall::Wait4, Syscall::Seccomp, Syscall::Recvmsg] {
                let n = arch.number(call).unwrap();
                assert!(!stacked.allow.contains_key(&n), "{arch:?}: {call:?}");
            }
            for call in [
                Syscall::Clone,
                Syscall::Kill,
                Syscall::Prlimit64,
                Syscall::Prctl,
            ] {
                let n = arch.number(call).unwrap();
                assert_eq!(stacked.allow[&n], whole.allow[&n], "{arch:?}: {call:?}");
            }
            assert!(
                stacked.enosys.is_empty(),
                "clone3's ENOSYS is the template's"
            );
            assert!(
                !stacked
                    .kill
                    .contains_key(&arch.number(Syscall::Execve).unwrap())
            );
        }
    }
}

#[test]
fn a_stacked_child_filter_is_two_small_programs() {
    let template = template_scope();
    let child = child_of(&template, 5151);
    let stacked = compile_for(Arch::X86_64, &child, Some(&template)).expect("compiles");
    let whole = compile_for(Arch::X86_64, &child, None).expect("compiles");
    assert_eq!(
        stacked.len(),
        2,
        "kill and allow; the ENOSYS one is the template's"
    );
    let size = |programs: &[BpfProgram]| programs.iter().map(Vec::len).sum::<usize>();
    assert!(
        size(&stacked) < size(&whole),
        "{} instructions against {}",
        size(&stacked),
        size(&whole)
    );
}

#[test]
fn x32_numbers_of_killed_calls_kill_and_none_is_allowed() {
    let worker = maps(&scope(Some(6)));
    for call in [Syscall::Execve, Syscall::Ptrace, Syscall::Bpf] {
        assert_eq!(
            worker.kill.get(&(nr(call) | x86_64::X32_SYSCALL_BIT)),
            worker.kill.get(&nr(call)),
            "{call:?}"
        );
    }
    for (x32_only, _) in x86_64::X32_ONLY {
        assert!(
            worker
                .kill
                .contains_key(&(x32_only | x86_64::X32_SYSCALL_BIT))
        );
    }
    assert!(
        worker
            .allow
            .keys()
            .all(|nr| nr & x86_64::X32_SYSCALL_BIT == 0),
        "an x32 number is on the allowlist"
    );
}

#[test]
fn signals_are_limited_to_the_worker_itself_at_every_abi() {
    let native = Arch::native().unwrap();
    for abi in [None, Some(1), Some(5), Some(6), Some(9)] {
        let rules = rule_maps(&scope(abi), native).unwrap();
        let kill = native.number(Syscall::Kill).unwrap();
        assert_eq!(
            rules.allow[&kill].len(),
            1,
            "{abi:?}: kill to its own pid only"
        );
        // The other ways to signal are not named: EPERM.
        for nr in [
            libc::SYS_tkill,
            libc::SYS_tgkill,
            libc::SYS_rt_sigqueueinfo,
            libc::SYS_rt_tgsigqueueinfo,
            libc::SYS_pidfd_open,
            libc::SYS_pidfd_send_signal,
        ] {
            assert!(!rules.allow.contains_key(&nr), "{abi:?}: {nr}");
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
        let rules = maps(&scope(abi));
        assert_eq!(
            !rules.allow[&nr(Syscall::Openat)].is_empty(),
            takes_over,
            "{abi:?}: openat"
        );
        // truncate(2) by name (76) and openat2 (437) are not named: EPERM on every kernel.
        assert!(!rules.allow.contains_key(&76) && !rules.allow.contains_key(&437));
    }
}

/// aarch64's allowlist is x86_64's measured one carried over: the same calls, but for the
/// three that aarch64 lacks, whose newer form glibc makes there instead; and the same calls
/// kill but for those that do not exist on aarch64.
#[test]
fn aarch64_allows_what_x86_64_was_measured_to_need_in_the_forms_aarch64_has() {
    use std::collections::BTreeSet;
    for role in [Role::Worker, Role::Template] {
        let x86_64 = named_calls(role, Arch::X86_64).unwrap();
        let aarch64 = named_calls(role, Arch::Aarch64).unwrap();
        eprintln!(
            "{role:?}: {} calls allowed on x86_64, {} on aarch64; {} kill on x86_64, {} on \
                 aarch64; {} answered ENOSYS",
            x86_64.allowed.len(),
            aarch64.allowed.len(),
            x86_64.killed.len(),
            aarch64.killed.len(),
            x86_64.enosys.len(),
        );
        let set = |names: &[&'static str]| names.iter().copied().collect::<BTreeSet<_>>();
        let (x86_allowed, arm_allowed) = (set(&x86_64.allowed), set(&aarch64.allowed));
        let only_x86_64: Vec<_> = x86_allowed.difference(&arm_allowed).copied().collect();
        let only_aarch64: Vec<_> = arm_allowed.difference(&x86_allowed).copied().collect();
        let (old, newer): (&[&str], &[&str]) = match role {
            Role::Worker => (
                &["poll", "readlink", "unlink"],
                &["ppoll", "readlinkat", "unlinkat"],
            ),
            Role::Template => (
                &["dup2", "poll", "readlink", "unlink"],
                &["dup3", "ppoll", "readlinkat", "unlinkat"],
            ),
        };
        assert_eq!(only_x86_64, old, "{role:?}");
        assert_eq!(only_aarch64, newer, "{role:?}");
        for name in old {
            let call = Syscall::ALL.iter().find(|c| c.name() == *name).unwrap();
            assert_eq!(
                Arch::Aarch64.number(*call),
                None,
                "{name} exists on aarch64"
            );
        }
        for name in set(&x86_64.killed).difference(&set(&aarch64.killed)) {
            let call = Syscall::ALL.iter().find(|c| c.name() == *name).unwrap();
            assert_eq!(
                Arch::Aarch64.number(*call),
                None,
                "{name} exists on aarch64"
            );
        }
        assert!(set(&aarch64.killed).is_subset(&set(&x86_64.killed)));
        assert_eq!(x86_64.enosys, aarch64.enosys);
    }
}

/// Where `arch`'s own kernel headers are on this machine: Debian's cross package for it
/// (`linux-libc-dev-<arch>-cross`), or the host's own `linux-libc-dev` when the host is
/// `arch`; and the header that has its numbers.
fn kernel_headers(arch: Arch) -> Option<(Vec<&'static str>, &'static str)> {
    let (cross, native, header) = match arch {
        Arch::X86_64 => (
            "/usr/x86_64-linux-gnu/include",
            "/usr/include/x86_64-linux-gnu",
            "asm/unistd_64.h",
        ),
        Arch::Aarch64 => (
            "/usr/aarch64-linux-gnu/include",
            "/usr/include/aarch64-linux-gnu",
            "asm/unistd.h",
        ),
    };
    if std::path::Path::new(cross).join(header).exists() {
        return Some((vec![cross], header));
    }
    if std::path::Path::new(native).join(header).exists() {
        return Some((vec!["/usr/include", native], header));
    }
    None
}

/// `__NR_<name>` of every call the filter names, as `arch`'s headers define it (`None`: not
/// defined there), read with the C preprocessor.
fn header_numbers(arch: Arch) -> BTreeMap<&'static str, Option<i64>> {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let (includes, header) = kernel_headers(arch).unwrap_or_else(|| {
        panic!(
            "no {} kernel headers on this machine: install Debian's linux-libc-dev-{}-cross \
                 (.ci/run's tools stage does)",
            arch.name(),
            match arch {
                Arch::X86_64 => "amd64",
                Arch::Aarch64 => "arm64",
            }
        )
    });
    let mut source = format!("#include <{header}>\n");
    for call in Syscall::ALL {
        source.push_str(&format!("duckgate_{0} __NR_{0}\n", call.name()));
    }
    let mut cpp = Command::new("cpp");
    cpp.args(["-P", "-nostdinc"]);
    for include in includes {
        cpp.args(["-I", include]);
    }
    let mut child = cpp
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("run cpp (gcc's C preprocessor)");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(source.as_bytes())
        .unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success(), "cpp failed on {header}");
    let text = String::from_utf8(output.stdout).unwrap();
    let mut numbers = BTreeMap::new();
    for line in text.lines() {
        let Some((name, value)) = line
            .trim()
            .strip_prefix("duckgate_")
            .and_then(|rest| rest.split_once(' '))
        else {
            continue;
        };
        let call = Syscall::ALL
            .iter()
            .find(|call| call.name() == name)
            .unwrap_or_else(|| panic!("cpp gave back a name never sent: {name}"));
        let value = value.trim();
        let number = match value.strip_prefix("__NR_") {
            Some(_) => None,
            None => Some(value.parse::<i64>().unwrap_or_else(|_| {
                panic!("{}: __NR_{name} is {value:?}, not a number", arch.name())
            })),
        };
        numbers.insert(call.name(), number);
    }
    assert_eq!(numbers.len(), Syscall::ALL.len(), "cpp lost names");
    numbers
}

/// Each architecture's table against that architecture's own kernel headers, whatever the
/// machine the test runs on: every number the filter uses is the one the kernel uses there,
/// and a call the table says is missing there is missing from the headers too.
#[test]
fn tables_match_each_architectures_own_headers() {
    for arch in Arch::ALL {
        let headers = header_numbers(arch);
        for &call in Syscall::ALL {
            assert_eq!(
                arch.number(call),
                headers[call.name()],
                "{}: {}",
                arch.name(),
                call.name()
            );
        }
    }
    // The table the running binary uses is its own target's, and agrees with the libc
    // crate's constants for it.
    let native = Arch::native().expect("a table for this target");
    assert_eq!(native.name(), std::env::consts::ARCH);
    assert_eq!(native.number(Syscall::Openat), Some(libc::SYS_openat));
    assert_eq!(native.number(Syscall::Execve), Some(libc::SYS_execve));
    assert_eq!(native.number(Syscall::Clone3), Some(libc::SYS_clone3));
}
