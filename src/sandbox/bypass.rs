//! The test-only switch that turns layers above the sandbox off, so tests can show that each
//! layer below still denies on its own.
//!
//! It exists only in builds with the non-default cargo feature `test-bypass`, which the test
//! suite turns on (the package's dev-dependency on itself) and `cargo build` / `cargo install`
//! do not. A shipped binary has [`Bypass`] with nothing to switch: [`Bypass::from_env`] reads no
//! environment, [`Bypass::is_off`] is always `false`, and neither the variable's name nor the
//! probe is in it (`tests/shipped_binary.rs` builds the binary as users get it and looks).
//!
//! In a test build it is read from the environment variable `ENV_VAR` of the *operator's*
//! process and nowhere else: no CLI flag and nothing on the MCP surface can reach it. When set,
//! the server says so loudly on stderr and `server_info` reports it.

/// A layer a test may switch off.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layer {
    /// The parent's sqlparser validator.
    Validator,
    /// The worker's DuckDB statement check and its walk of DuckDB's parse tree
    /// (`crates/duckgate-validate/src/validate/tree/`). Off, the worker runs whatever text it gets, multi-statement
    /// text included: only the layers below stand.
    WorkerWalk,
    /// The worker's check of DuckDB's bound plan: scans only of the attached database, table
    /// functions on the allowlist, no unknown operator (`src/engine/plan_check/`).
    PlanCheck,
    /// DuckDB's hardened configuration (external access, extensions, lock_configuration).
    DuckdbHardening,
    /// The worker's refusal of `Request::Probe`: switched off (wire name `probe`), the worker
    /// tries forbidden syscalls from inside its sandbox when asked, for the sandbox tests.
    #[cfg(feature = "test-bypass")]
    ProbeRefusal,
    /// The privacy rules of the worker's plan check (`src/engine/plan_check/`), so a test
    /// can show the parent's result-column check on its own.
    WorkerPrivacy,
}

#[cfg(not(feature = "test-bypass"))]
pub use shipped::{Bypass, BypassError};
#[cfg(feature = "test-bypass")]
pub use switch::{Bypass, BypassError, ENV_VAR};

/// The switch of a test build.
#[cfg(feature = "test-bypass")]
mod switch {
    use super::Layer;

    /// The environment variable; a comma-separated list of [`Layer`] names.
    pub const ENV_VAR: &str = "DUCKGATE_UNSAFE_TEST_BYPASS";

    impl Layer {
        /// Its name in [`ENV_VAR`].
        pub fn name(self) -> &'static str {
            match self {
                Layer::Validator => "validator",
                Layer::WorkerWalk => "worker_walk",
                Layer::PlanCheck => "plan_check",
                Layer::DuckdbHardening => "duckdb_hardening",
                Layer::ProbeRefusal => "probe",
                Layer::WorkerPrivacy => "worker_privacy",
            }
        }
    }

    /// The layers switched off.
    #[derive(Debug, Clone, Default, PartialEq, Eq)]
    pub struct Bypass {
        layers: Vec<Layer>,
        /// `landlock_abi_N`: confine as if the kernel offered landlock ABI `N` at most, so tests can
        /// show on a new kernel what an older one enforces (the rights of ABI `N` only, and the
        /// seccomp rules that take over for what it lacks).
        landlock_abi_cap: Option<u8>,
    }

    /// The prefix of the entry that caps the landlock ABI, e.g. `landlock_abi_3`.
    const LANDLOCK_ABI_CAP: &str = "landlock_abi_";

    impl Bypass {
        /// Parse a value of [`ENV_VAR`]; unknown names are an error so a typo cannot silently
        /// leave a test testing the wrong thing.
        pub fn parse(value: &str) -> Result<Bypass, BypassError> {
            let mut layers = Vec::new();
            let mut landlock_abi_cap = None;
            for name in value.split(',').map(str::trim).filter(|s| !s.is_empty()) {
                if let Some(number) = name.strip_prefix(LANDLOCK_ABI_CAP) {
                    match number.parse::<u8>() {
                        Ok(abi) if abi >= 1 => landlock_abi_cap = Some(abi),
                        _ => return Err(BypassError::BadAbi(name.to_owned())),
                    }
                    continue;
                }
                let layer = match name {
                    "validator" => Layer::Validator,
                    "worker_walk" => Layer::WorkerWalk,
                    "plan_check" => Layer::PlanCheck,
                    "duckdb_hardening" => Layer::DuckdbHardening,
                    "probe" => Layer::ProbeRefusal,
                    "worker_privacy" => Layer::WorkerPrivacy,
                    other => return Err(BypassError::UnknownLayer(other.to_owned())),
                };
                layers.push(layer);
            }
            Ok(Bypass {
                layers,
                landlock_abi_cap,
            })
        }

        /// Read [`ENV_VAR`] from this process's environment.
        pub fn from_env() -> Result<Bypass, BypassError> {
            match std::env::var(ENV_VAR) {
                Ok(v) => Bypass::parse(&v),
                Err(_) => Ok(Bypass::default()),
            }
        }

        /// Whether `layer` is switched off.
        pub fn is_off(&self, layer: Layer) -> bool {
            self.layers.contains(&layer)
        }

        /// The landlock ABI workers must confine themselves as if the kernel offered at most.
        pub fn landlock_abi_cap(&self) -> Option<u8> {
            self.landlock_abi_cap
        }

        /// Names of the layers switched off (and the ABI cap), for `server_info`.
        pub fn names(&self) -> Vec<String> {
            self.layers
                .iter()
                .map(|l| l.name().to_string())
                .chain(
                    self.landlock_abi_cap
                        .map(|abi| format!("{LANDLOCK_ABI_CAP}{abi}")),
                )
                .collect()
        }

        /// The value to pass on to a worker.
        pub fn to_env_value(&self) -> String {
            self.names().join(",")
        }

        /// The variable and value a worker needs to see the same layers off, if any are.
        pub fn worker_env(&self) -> Option<(&'static str, String)> {
            (!self.is_empty()).then(|| (ENV_VAR, self.to_env_value()))
        }

        /// No layer is switched off and the ABI is not capped.
        pub fn is_empty(&self) -> bool {
            self.layers.is_empty() && self.landlock_abi_cap.is_none()
        }
    }

    /// A value of [`ENV_VAR`] that names something other than a layer or an ABI cap.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub enum BypassError {
        /// `landlock_abi_N` without a number of 1 or more (the whole entry).
        BadAbi(String),
        /// A name that is no [`Layer`]'s.
        UnknownLayer(String),
    }

    impl std::fmt::Display for BypassError {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            match self {
                BypassError::BadAbi(name) => {
                    write!(f, "{name:?} in {ENV_VAR}: the ABI must be 1 or more")
                }
                BypassError::UnknownLayer(name) => write!(f, "unknown layer {name:?} in {ENV_VAR}"),
            }
        }
    }

    impl std::error::Error for BypassError {}

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn abi_cap_parses_round_trips_and_rejects_nonsense() {
            let bypass = Bypass::parse("probe, landlock_abi_3").unwrap();
            assert_eq!(bypass.landlock_abi_cap(), Some(3));
            assert!(bypass.is_off(Layer::ProbeRefusal));
            assert_eq!(bypass.to_env_value(), "probe,landlock_abi_3");
            assert_eq!(Bypass::parse(&bypass.to_env_value()).unwrap(), bypass);
            assert!(!Bypass::parse("landlock_abi_1").unwrap().is_empty());
            for bad in [
                "landlock_abi_0",
                "landlock_abi_",
                "landlock_abi_x",
                "landlock",
            ] {
                assert!(Bypass::parse(bad).is_err(), "{bad}");
            }
        }
    }
}

/// A shipped build's [`Bypass`]: nothing can be switched off, and nothing is read.
#[cfg(not(feature = "test-bypass"))]
mod shipped {
    use super::Layer;

    /// No layer is ever off in a shipped build.
    #[derive(Debug, Clone, Default, PartialEq, Eq)]
    pub struct Bypass;

    /// A shipped build reads no switch, so it meets no bad one.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub enum BypassError {}

    impl Bypass {
        /// The empty bypass: a shipped build reads no environment for it.
        pub fn from_env() -> Result<Bypass, BypassError> {
            Ok(Bypass)
        }

        /// Never: no layer can be switched off.
        pub fn is_off(&self, _layer: Layer) -> bool {
            false
        }

        /// No cap: workers confine with the kernel's own landlock ABI.
        pub fn landlock_abi_cap(&self) -> Option<u8> {
            None
        }

        /// No layer is switched off, so none is named.
        pub fn names(&self) -> Vec<String> {
            Vec::new()
        }

        /// Nothing to pass on to a worker.
        pub fn worker_env(&self) -> Option<(&'static str, String)> {
            None
        }

        /// Always: nothing is switched off.
        pub fn is_empty(&self) -> bool {
            true
        }
    }

    impl std::fmt::Display for BypassError {
        fn fmt(&self, _f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            match *self {}
        }
    }

    impl std::error::Error for BypassError {}
}
