//! The operator's configuration file (`--config duckgate.toml`): `[privacy]` and `[audit]`.
//!
//! ```toml
//! [privacy]
//! hide_tables = ["raw_payloads"]
//! hide_columns = ["*.serial_number", "readings.note"]
//!
//! [files]
//! exports = "~/health/exports"   # the agent reads exports/readings.csv, exports/2026/*.parquet
//!
//! [audit]
//! log = "/var/log/duckgate/audit.jsonl"
//! redact_sql = true
//! required = true
//! max_bytes = 104857600  # rotate to audit.jsonl.1 before the file passes 100 MiB
//! generations = 10        # audit.jsonl … audit.jsonl.9; older ones go unless a running server holds them
//! ```
//!
//! Flags add to what the file says: `--hide-*` patterns are appended, `--audit-*` switches on.

use std::fmt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::audit::AuditSettings;
use crate::privacy::PrivacyPolicy;

/// The whole file; every section may be left out.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConfigFile {
    /// Hidden tables and columns.
    #[serde(default)]
    pub privacy: PrivacyPolicy,
    /// The audit log.
    #[serde(default)]
    pub audit: AuditSettings,
    /// Declared folders of data files, `NAME = "DIR"` (as `--files NAME=DIR`).
    #[serde(default)]
    pub files: std::collections::BTreeMap<String, PathBuf>,
}

impl ConfigFile {
    /// Read and parse `path`; unknown keys are an error (a typo must not silently unhide data).
    pub fn load(path: &Path) -> Result<ConfigFile, ConfigFileError> {
        let text = std::fs::read_to_string(path).map_err(|error| ConfigFileError::Read {
            path: path.to_path_buf(),
            error,
        })?;
        toml::from_str(&text).map_err(|error| ConfigFileError::Parse {
            path: path.to_path_buf(),
            error,
        })
    }
}

/// Why `--config` could not be used.
#[derive(Debug)]
pub enum ConfigFileError {
    /// The file could not be read.
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        error: std::io::Error,
    },
    /// It is not TOML of this shape (a typo in a key is one).
    Parse {
        /// The file.
        path: PathBuf,
        /// What `toml` found.
        error: toml::de::Error,
    },
}

impl fmt::Display for ConfigFileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigFileError::Read { path, error } => {
                write!(f, "cannot read --config {}: {error}", path.display())
            }
            ConfigFileError::Parse { path, error } => {
                write!(f, "--config {}: {error}", path.display())
            }
        }
    }
}

impl std::error::Error for ConfigFileError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_typo_in_the_privacy_section_is_an_error_not_an_empty_rule() {
        let ok: ConfigFile = toml::from_str(
            "[privacy]\nhide_tables = [\"raw\"]\nhide_columns = [\"*.serial_number\"]\n[audit]\nlog = \"a.jsonl\"\nredact_sql = true\n",
        )
        .unwrap();
        assert_eq!(ok.privacy.hide_tables, ["raw"]);
        assert!(ok.audit.redact_sql && !ok.audit.required);
        assert!(toml::from_str::<ConfigFile>("[privacy]\nhide_table = [\"raw\"]\n").is_err());
    }

    #[test]
    fn the_audit_size_cap_is_read_from_the_file_and_a_typo_is_an_error() {
        let ok: ConfigFile =
            toml::from_str("[audit]\nlog = \"a.jsonl\"\nmax_bytes = 1048576\n").unwrap();
        assert_eq!(ok.audit.max_bytes, Some(1_048_576));
        let default: ConfigFile = toml::from_str("[audit]\nlog = \"a.jsonl\"\n").unwrap();
        assert_eq!(default.audit.max_bytes, None);
        assert!(toml::from_str::<ConfigFile>("[audit]\nmax_byte = 5\n").is_err());
        assert!(toml::from_str::<ConfigFile>("[audit]\nmax_bytes = -5\n").is_err());
    }
}
