//! What confinement promises, property by property, and which mechanism keeps each promise on
//! the running kernel.
//!
//! A worker's confinement is a set of properties, not a landlock ABI number. For each one the
//! strongest mechanism the kernel offers is used, and seccomp takes over where landlock is too
//! old; [`assess`] says, from what steps 1 to 6 actually put in force, which mechanism enforces
//! each property and whether it holds. The floor at which every property holds is landlock ABI 1
//! (Linux 5.13) with seccomp filters: only landlock can limit which files are read and written,
//! and only seccomp can take away sockets, process creation and signals to others on kernels
//! older than landlock ABI 6.

use crate::protocol::PropertyPosture;

/// One promise a confined worker keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Property {
    /// Reads only the database files, their WALs, the folders the operator declared (`--files`),
    /// its own temporary directory and the few `/proc` and `/sys` files DuckDB needs.
    FileReads,
    /// Writes, creates, removes, truncates and re-labels nothing outside its own private
    /// temporary directory (where DuckDB spills; none when spilling is off).
    FileWrites,
    /// No network, and no unix sockets.
    Network,
    /// No signals or ptrace beyond itself.
    Signals,
    /// No exec, no new processes.
    Exec,
    /// No privilege gain (set-uid, file capabilities).
    PrivilegeGain,
}

impl Property {
    /// Every property, in the order `server_info` lists them.
    pub const ALL: [Property; 6] = [
        Property::FileReads,
        Property::FileWrites,
        Property::Network,
        Property::Signals,
        Property::Exec,
        Property::PrivilegeGain,
    ];

    /// Its name on the wire and in messages.
    pub fn name(self) -> &'static str {
        match self {
            Property::FileReads => "file_reads",
            Property::FileWrites => "file_writes",
            Property::Network => "network",
            Property::Signals => "signals",
            Property::Exec => "exec",
            Property::PrivilegeGain => "privilege_gain",
        }
    }

    /// What it promises, in a few words.
    pub fn promise(self) -> &'static str {
        match self {
            Property::FileReads => {
                "reads only the declared folders, its own temporary directory and the /proc \
                 and /sys files DuckDB needs by path, and the databases and their WALs through \
                 descriptors opened before it was confined"
            }
            Property::FileWrites => "writes nothing outside its own private temporary directory",
            Property::Network => "no network, no unix sockets",
            Property::Signals => "no signals or ptrace beyond itself",
            Property::Exec => "no exec, no new processes",
            Property::PrivilegeGain => "no privilege gain",
        }
    }
}

/// What steps 1 to 6 of `confine` put in force.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mechanisms {
    /// The landlock ABI whose rights the enforced ruleset handles (`None`: no landlock).
    pub landlock_abi: Option<u8>,
    /// The seccomp filters of step 6 are installed.
    pub seccomp: bool,
    /// `PR_SET_NO_NEW_PRIVS` is set.
    pub no_new_privs: bool,
}

/// For each property, the mechanisms that enforce it here and whether it holds.
pub fn assess(mechanisms: &Mechanisms) -> Vec<PropertyPosture> {
    Property::ALL
        .into_iter()
        .map(|property| {
            let (enforced, mechanism) = enforcement(property, mechanisms);
            PropertyPosture {
                property: property.name().to_string(),
                promise: property.promise().to_string(),
                mechanism,
                enforced,
            }
        })
        .collect()
}

/// Whether `property` holds under `m`, and by which mechanisms (or why not).
fn enforcement(property: Property, m: &Mechanisms) -> (bool, String) {
    let Mechanisms {
        landlock_abi,
        seccomp,
        no_new_privs,
    } = *m;
    match property {
        Property::FileReads => match landlock_abi {
            Some(abi) => (
                true,
                format!(
                    "landlock ABI {abi}: read-file grants on the cgroup files DuckDB reads, \
                     read and list beneath each declared folder, and its own temporary \
                     directory; no path of any database or WAL (each is read through a \
                     descriptor opened before confinement); nothing else is readable or \
                     listable"
                ),
            ),
            None => (
                false,
                "no landlock on this kernel, so a worker could read any file \
                 this user can"
                    .into(),
            ),
        },
        Property::FileWrites => match (landlock_abi, seccomp) {
            (Some(abi), true) if abi >= 3 => (
                true,
                format!(
                    "landlock ABI {abi}: no write, create, remove or truncate right anywhere but \
                     its own temporary directory; seccomp's allowlist: no file metadata call \
                     (mode, owner, times, extended attributes), no truncate(2)"
                ),
            ),
            (Some(abi), true) => (
                true,
                format!(
                    "landlock ABI {abi}: no write, create or remove right anywhere but its own \
                     temporary directory; seccomp's allowlist: no truncation (truncate(2), \
                     read-only O_TRUNC opens and openat2: landlock ABI {abi} has no truncate \
                     right) and no file metadata call (mode, owner, times, extended attributes)"
                ),
            ),
            (Some(abi), false) => (
                false,
                format!(
                    "only in part: landlock ABI {abi} denies writing files, but \
                     without seccomp a worker could change file metadata{}",
                    if abi >= 3 { "" } else { " and truncate files" }
                ),
            ),
            (None, _) => (
                false,
                "no landlock on this kernel, so a worker could write any file \
                 this user can"
                    .into(),
            ),
        },
        Property::Network => match (seccomp, landlock_abi) {
            (true, Some(abi)) if abi >= 4 => (
                true,
                format!(
                    "seccomp: no socket of any family (TCP, UDP, unix, netlink) on its \
                     allowlist; landlock ABI {abi}: TCP bind and connect"
                ),
            ),
            (true, landlock) => (
                true,
                format!(
                    "seccomp: no socket of any family (TCP, UDP, unix, netlink) on its \
                     allowlist ({} has no network rules)",
                    landlock_name(landlock)
                ),
            ),
            (false, Some(abi)) if abi >= 4 => (
                false,
                format!(
                    "only in part: landlock ABI {abi} denies TCP, but without seccomp a \
                     worker could use UDP and unix sockets"
                ),
            ),
            (false, landlock) => (
                false,
                format!(
                    "no seccomp, and {} has no network rules",
                    landlock_name(landlock)
                ),
            ),
        },
        Property::Signals => match (seccomp, landlock_abi) {
            (true, Some(abi)) if abi >= 6 => (
                true,
                format!(
                    "seccomp: kill only to the worker itself, no tkill, tgkill, sigqueue or \
                     pidfd, ptrace kills it; landlock ABI {abi}: signal scoping; not dumpable"
                ),
            ),
            (true, landlock) => (
                true,
                format!(
                    "seccomp: kill only to the worker itself, no tkill, tgkill, sigqueue or \
                     pidfd, ptrace kills it ({} has no signal scoping); not dumpable",
                    landlock_name(landlock)
                ),
            ),
            (false, Some(abi)) if abi >= 6 => (
                true,
                format!(
                    "landlock ABI {abi}: signal scoping and ptrace restriction (no seccomp); \
                     not dumpable"
                ),
            ),
            (false, landlock) => (
                false,
                format!(
                    "no seccomp, and {} has no signal scoping",
                    landlock_name(landlock)
                ),
            ),
        },
        Property::Exec => match (seccomp, landlock_abi) {
            (true, Some(abi)) => (
                true,
                format!(
                    "seccomp: execve, fork and a process-creating clone kill the worker; \
                     landlock ABI {abi}: no execute right anywhere"
                ),
            ),
            (true, None) => (
                true,
                "seccomp: execve, fork and a process-creating clone kill the worker (no \
                 landlock)"
                    .into(),
            ),
            (false, landlock) => (
                false,
                format!(
                    "without seccomp a worker could create processes ({})",
                    match landlock {
                        Some(abi) => format!("landlock ABI {abi} still denies executing files"),
                        None => "and, without landlock, run programs".into(),
                    }
                ),
            ),
        },
        Property::PrivilegeGain => match no_new_privs {
            true => (
                true,
                "no_new_privs: set-uid programs and file capabilities give nothing".into(),
            ),
            false => (false, "no_new_privs is not set".into()),
        },
    }
}

/// `landlock ABI n`, or `no landlock`.
fn landlock_name(abi: Option<u8>) -> String {
    match abi {
        Some(abi) => format!("landlock ABI {abi}"),
        None => "no landlock".into(),
    }
}

/// The one-line summary of the start-up line: `file_reads: landlock ABI 6: …; …`, each property
/// with the mechanisms that enforce it (or why it is not enforced).
pub fn summary(properties: &[PropertyPosture]) -> String {
    properties
        .iter()
        .map(|p| format!("{}: {}", p.property, p.mechanism))
        .collect::<Vec<String>>()
        .join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(landlock_abi: Option<u8>, seccomp: bool) -> Vec<PropertyPosture> {
        assess(&Mechanisms {
            landlock_abi,
            seccomp,
            no_new_privs: true,
        })
    }

    fn mechanism<'a>(properties: &'a [PropertyPosture], name: &str) -> &'a PropertyPosture {
        properties.iter().find(|p| p.property == name).unwrap()
    }

    #[test]
    fn the_floor_landlock_abi_1_with_seccomp_keeps_every_promise() {
        for abi in 1..=9 {
            let properties = at(Some(abi), true);
            assert_eq!(properties.len(), Property::ALL.len());
            for p in &properties {
                assert!(p.enforced, "ABI {abi}: {p:?}");
            }
        }
    }

    #[test]
    fn seccomp_is_named_where_landlock_is_too_old() {
        let abi3 = at(Some(3), true);
        let signals = &mechanism(&abi3, "signals").mechanism;
        assert!(
            signals.contains("seccomp") && signals.contains("landlock ABI 3 has no signal scoping"),
            "{signals}"
        );
        let network = &mechanism(&abi3, "network").mechanism;
        assert!(
            network.contains("landlock ABI 3 has no network rules"),
            "{network}"
        );
        let abi2 = at(Some(2), true);
        assert!(
            mechanism(&abi2, "file_writes")
                .mechanism
                .contains("truncate(2)")
        );
        let abi6 = at(Some(6), true);
        assert!(
            mechanism(&abi6, "signals")
                .mechanism
                .contains("signal scoping")
        );
        assert!(
            mechanism(&abi6, "network")
                .mechanism
                .contains("TCP bind and connect")
        );
    }

    /// `server_info` shows this text to the operator: it must say what landlock grants, and
    /// since the databases are read through descriptors held from before confinement it grants
    /// no path of any of them (`landlock::grants`).
    #[test]
    fn the_file_reads_mechanism_claims_no_grant_on_a_database() {
        for abi in 1..=9 {
            let properties = at(Some(abi), true);
            let reads = &mechanism(&properties, "file_reads").mechanism;
            assert!(
                reads.contains("no path of any database or WAL")
                    && !reads.contains("grants on each database"),
                "ABI {abi}: {reads}"
            );
        }
    }

    #[test]
    fn without_landlock_files_are_unenforced_and_the_rest_holds_by_seccomp() {
        let properties = at(None, true);
        for p in &properties {
            let files = p.property == "file_reads" || p.property == "file_writes";
            assert_eq!(p.enforced, !files, "{p:?}");
        }
    }

    #[test]
    fn without_seccomp_only_new_landlock_keeps_signals_and_nothing_keeps_exec() {
        let old = at(Some(5), false);
        let new = at(Some(6), false);
        assert!(!mechanism(&old, "signals").enforced);
        assert!(mechanism(&new, "signals").enforced);
        for properties in [&old, &new] {
            assert!(!mechanism(properties, "exec").enforced);
            assert!(!mechanism(properties, "network").enforced);
            assert!(!mechanism(properties, "file_writes").enforced);
            assert!(mechanism(properties, "file_reads").enforced);
        }
    }

    #[test]
    fn privilege_gain_needs_no_new_privs() {
        let properties = assess(&Mechanisms {
            landlock_abi: Some(6),
            seccomp: true,
            no_new_privs: false,
        });
        assert!(!mechanism(&properties, "privilege_gain").enforced);
    }
}
