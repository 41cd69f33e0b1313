//! What confinement a worker actually has: the posture it reports once confined, and the words
//! for a layer this kernel cannot provide, which this module owns on the wire.

use std::fmt;

use serde::{Deserialize, Serialize};

/// Whether a worker's landlock ruleset is in force. Confinement never runs with a partly
/// enforced ruleset: every right is a hard requirement, or there is no landlock at all.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LandlockStatus {
    /// Every right the ABI defines is handled and enforced.
    FullyEnforced,
    /// No landlock (the kernel lacks it and the operator allowed running without it), or the
    /// process did not confine itself.
    #[default]
    NotEnforced,
}

impl LandlockStatus {
    /// Its name on the wire and in text.
    pub fn as_str(self) -> &'static str {
        match self {
            LandlockStatus::FullyEnforced => "fully_enforced",
            LandlockStatus::NotEnforced => "not_enforced",
        }
    }
}

/// What confinement was actually in force in a worker.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Posture {
    /// Whether landlock is in force.
    pub landlock: LandlockStatus,
    /// The landlock ABI the kernel offered.
    pub landlock_abi: Option<i32>,
    /// Whether the seccomp filter was installed.
    pub seccomp: bool,
    /// `NoNewPrivs` was set.
    pub no_new_privs: bool,
    /// rlimits as (name, soft value) pairs.
    pub rlimits: Vec<(String, String)>,
    /// DuckDB settings read back after hardening, as (name, value).
    pub duckdb_settings: Vec<(String, String)>,
    /// Test-only bypasses in force (empty in production).
    pub bypassed_layers: Vec<String>,
    /// What the kernel cannot enforce and the operator accepted with `--allow-unconfined`, each
    /// layer once (on the wire, one sentence each naming the feature first: `landlock: …`,
    /// `seccomp: …`); empty when every layer is in force.
    #[serde(default)]
    pub unenforced: Vec<UnenforcedLayer>,
    /// Each promise of confinement and the mechanisms that keep it on this kernel
    /// (`src/sandbox/confine/properties.rs`).
    #[serde(default)]
    pub properties: Vec<PropertyPosture>,
}

/// One property of confinement as a worker has it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PropertyPosture {
    /// Its name, e.g. `signals`.
    pub property: String,
    /// What it promises, e.g. `no signals or ptrace beyond itself`.
    pub promise: String,
    /// The mechanisms that enforce it here, e.g. `seccomp: … (landlock ABI 3 has no signal
    /// scoping)`, or why it is not enforced.
    pub mechanism: String,
    /// Whether it holds.
    pub enforced: bool,
}

/// A layer of confinement this kernel cannot provide, run without because the operator passed
/// `--allow-unconfined` ([`Posture::unenforced`]).
///
/// On the wire (the preflight's reply and `server_info`) it is the one sentence
/// [`fmt::Display`] writes, the feature first (`landlock: …`, `seccomp: …`); reading a posture
/// back accepts exactly those sentences ([`TryFrom<String>`]), so this type owns their words.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
pub enum UnenforcedLayer {
    /// No landlock: the worker's file system access is not restricted.
    Landlock(LandlockAbsence),
    /// No seccomp filter: the worker's system calls are not filtered.
    Seccomp(SeccompAbsence),
}

/// Why the kernel has no usable landlock, in the kernel's own terms: the status the `landlock`
/// crate reads from `landlock_create_ruleset(…, LANDLOCK_CREATE_RULESET_VERSION)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LandlockAbsence {
    /// `ENOSYS`: the kernel is older than Linux 5.13 or built without landlock.
    NotImplemented,
    /// `EOPNOTSUPP`: built in, but not in the `lsm=` list.
    NotEnabled,
    /// `landlock_create_ruleset` fails (as `ENOSYS` or another error but `EOPNOTSUPP`, which
    /// the `landlock` crate does not tell apart) on a kernel new enough for landlock, in a
    /// process that runs under seccomp filters it inherited: most likely a container runtime's
    /// seccomp profile, or a service manager's system-call filter, refusing landlock's system
    /// calls (a filter answering `ENOSYS` looks exactly like a kernel without landlock, so the
    /// words say both).
    FailsUnderInheritedFilter {
        /// Filters in force before duckgate installed any (`Seccomp_filters:`, or 1 for
        /// `Seccomp: 2` where the kernel does not count them).
        inherited_filters: u32,
    },
    /// The kernel reports an ABI but refuses even the ABI 1 ruleset.
    RejectsRuleset {
        /// The ABI it reports, as the `landlock` crate writes it.
        effective_abi: String,
    },
    /// Any other answer: the `landlock` crate's error.
    Unusable {
        /// That error, in the crate's words.
        error: String,
    },
}

/// How the kernel showed it has no seccomp filters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SeccompAbsence {
    /// `/proc/self/status` has no `Seccomp:` line: the kernel is built without `CONFIG_SECCOMP`.
    NotBuiltIn,
    /// `seccomp(SECCOMP_SET_MODE_FILTER)` returned `ENOSYS`: no `seccomp` system call.
    NoSystemCall,
    /// `seccomp(SECCOMP_SET_MODE_FILTER)` returned `EINVAL`: `CONFIG_SECCOMP_FILTER` is off.
    NoFilterSupport,
}

impl SeccompAbsence {
    /// Every way, for reading the wire's sentences back.
    const ALL: [SeccompAbsence; 3] = [
        SeccompAbsence::NotBuiltIn,
        SeccompAbsence::NoSystemCall,
        SeccompAbsence::NoFilterSupport,
    ];
}

// The words around each part of an `UnenforcedLayer`'s sentence, shared by its `Display` and
// its reading back.
const LANDLOCK_FEATURE: &str = "landlock: ";
const LANDLOCK_CONSEQUENCE: &str = "; the worker's file system access is not restricted";
const SECCOMP_FEATURE: &str = "seccomp: ";
const SECCOMP_CONSEQUENCE: &str =
    "; the worker's system calls (exec, sockets, ptrace, mounts, …) are not filtered";
const REJECTS_BEFORE: &str = "the kernel reports landlock ABI ";
const REJECTS_AFTER: &str = " but rejects duckgate's ruleset";
const UNUSABLE_BEFORE: &str = "the kernel has no usable landlock (";
const UNUSABLE_AFTER: &str = ")";
const BLOCKED_BEFORE: &str = "landlock_create_ruleset fails (ENOSYS, or EPERM as some seccomp \
    profiles answer) in a process that runs under ";
const BLOCKED_AFTER: &str = " seccomp filter(s) it inherited, on a kernel new enough for \
    landlock: most likely that filter (a container runtime's seccomp profile, or a service \
    manager's system-call filter) refuses landlock's system calls, unless the kernel was built \
    without landlock";

impl fmt::Display for UnenforcedLayer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UnenforcedLayer::Landlock(absence) => {
                write!(f, "{LANDLOCK_FEATURE}{absence}{LANDLOCK_CONSEQUENCE}")
            }
            UnenforcedLayer::Seccomp(absence) => {
                write!(f, "{SECCOMP_FEATURE}{absence}{SECCOMP_CONSEQUENCE}")
            }
        }
    }
}

impl fmt::Display for LandlockAbsence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LandlockAbsence::NotImplemented => f.write_str(
                "the kernel does not implement landlock (landlock_create_ruleset returns ENOSYS: \
                 it needs Linux 5.13 or newer built with CONFIG_SECURITY_LANDLOCK)",
            ),
            LandlockAbsence::NotEnabled => f.write_str(
                "landlock is built into the kernel but not enabled (landlock_create_ruleset \
                 returns EOPNOTSUPP: add `landlock` to the `lsm=` boot parameter)",
            ),
            LandlockAbsence::FailsUnderInheritedFilter { inherited_filters } => {
                write!(f, "{BLOCKED_BEFORE}{inherited_filters}{BLOCKED_AFTER}")
            }
            LandlockAbsence::RejectsRuleset { effective_abi } => {
                write!(f, "{REJECTS_BEFORE}{effective_abi}{REJECTS_AFTER}")
            }
            LandlockAbsence::Unusable { error } => {
                write!(f, "{UNUSABLE_BEFORE}{error}{UNUSABLE_AFTER}")
            }
        }
    }
}

impl fmt::Display for SeccompAbsence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            SeccompAbsence::NotBuiltIn => {
                "the kernel is built without seccomp (no Seccomp: line in /proc/self/status)"
            }
            SeccompAbsence::NoSystemCall => {
                "the kernel has no seccomp system call (seccomp(SECCOMP_SET_MODE_FILTER) \
                 returned ENOSYS)"
            }
            SeccompAbsence::NoFilterSupport => {
                "the kernel has no seccomp filter support (seccomp(SECCOMP_SET_MODE_FILTER) \
                 returned EINVAL: CONFIG_SECCOMP_FILTER is off)"
            }
        })
    }
}

impl LandlockAbsence {
    /// The absence whose [`fmt::Display`] is `words`.
    fn from_words(words: &str) -> Option<LandlockAbsence> {
        let between = |before: &str, after: &str| {
            words
                .strip_prefix(before)
                .and_then(|rest| rest.strip_suffix(after))
                .map(str::to_owned)
        };
        [LandlockAbsence::NotImplemented, LandlockAbsence::NotEnabled]
            .into_iter()
            .find(|absence| absence.to_string() == words)
            .or_else(|| {
                between(REJECTS_BEFORE, REJECTS_AFTER)
                    .map(|effective_abi| LandlockAbsence::RejectsRuleset { effective_abi })
            })
            .or_else(|| {
                between(BLOCKED_BEFORE, BLOCKED_AFTER)
                    .and_then(|count| count.parse().ok())
                    .map(
                        |inherited_filters| LandlockAbsence::FailsUnderInheritedFilter {
                            inherited_filters,
                        },
                    )
            })
            .or_else(|| {
                between(UNUSABLE_BEFORE, UNUSABLE_AFTER)
                    .map(|error| LandlockAbsence::Unusable { error })
            })
    }
}

impl From<UnenforcedLayer> for String {
    fn from(layer: UnenforcedLayer) -> String {
        layer.to_string()
    }
}

/// A sentence that is not one an [`UnenforcedLayer`] writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownLayerGap(pub String);

impl fmt::Display for UnknownLayerGap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "not a confinement gap duckgate reports: {:?}", self.0)
    }
}

impl std::error::Error for UnknownLayerGap {}

impl TryFrom<String> for UnenforcedLayer {
    type Error = UnknownLayerGap;

    fn try_from(sentence: String) -> Result<UnenforcedLayer, UnknownLayerGap> {
        let cause = |feature: &str, consequence: &str| {
            sentence
                .strip_prefix(feature)
                .and_then(|rest| rest.strip_suffix(consequence))
        };
        let layer = if let Some(words) = cause(LANDLOCK_FEATURE, LANDLOCK_CONSEQUENCE) {
            LandlockAbsence::from_words(words).map(UnenforcedLayer::Landlock)
        } else if let Some(words) = cause(SECCOMP_FEATURE, SECCOMP_CONSEQUENCE) {
            SeccompAbsence::ALL
                .into_iter()
                .find(|absence| absence.to_string() == words)
                .map(UnenforcedLayer::Seccomp)
        } else {
            None
        };
        layer.ok_or(UnknownLayerGap(sentence))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_unenforced_layer_travels_as_its_sentence_and_reads_back_as_itself() {
        let layers = [
            UnenforcedLayer::Landlock(LandlockAbsence::NotImplemented),
            UnenforcedLayer::Landlock(LandlockAbsence::NotEnabled),
            UnenforcedLayer::Landlock(LandlockAbsence::RejectsRuleset {
                effective_abi: "3".into(),
            }),
            UnenforcedLayer::Landlock(LandlockAbsence::Unusable {
                error: "some (nested) error".into(),
            }),
            UnenforcedLayer::Landlock(LandlockAbsence::FailsUnderInheritedFilter {
                inherited_filters: 2,
            }),
            UnenforcedLayer::Seccomp(SeccompAbsence::NotBuiltIn),
            UnenforcedLayer::Seccomp(SeccompAbsence::NoSystemCall),
            UnenforcedLayer::Seccomp(SeccompAbsence::NoFilterSupport),
        ];
        for layer in layers {
            let wire = serde_json::to_value(&layer).unwrap();
            assert_eq!(wire, serde_json::Value::String(layer.to_string()));
            assert_eq!(
                serde_json::from_value::<UnenforcedLayer>(wire).unwrap(),
                layer
            );
        }
        assert_eq!(
            UnenforcedLayer::Landlock(LandlockAbsence::NotImplemented).to_string(),
            "landlock: the kernel does not implement landlock (landlock_create_ruleset returns \
             ENOSYS: it needs Linux 5.13 or newer built with CONFIG_SECURITY_LANDLOCK); the \
             worker's file system access is not restricted"
        );
        assert_eq!(
            UnenforcedLayer::Seccomp(SeccompAbsence::NoSystemCall).to_string(),
            "seccomp: the kernel has no seccomp system call (seccomp(SECCOMP_SET_MODE_FILTER) \
             returned ENOSYS); the worker's system calls (exec, sockets, ptrace, mounts, …) are \
             not filtered"
        );
        assert!(serde_json::from_str::<UnenforcedLayer>("\"landlock: absent\"").is_err());
    }
}
