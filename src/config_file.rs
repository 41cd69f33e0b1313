//! The operator's configuration file (`--config duckgate.toml`): `[databases]`, `[privacy]` and
//! `[audit]`.
//!
//! ```toml
//! [databases]                          # in this order; the first is the default
//! cgm = "~/health/cgm.duckdb"          # unless a plain --db PATH is given
//! pump = "~/health/pump.duckdb"        # its tables: pump.main.boluses, pump.boluses
//!
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
//! Flags add to what the file says: `--db NAME=PATH` databases come after the file's (a plain
//! `--db PATH` stays the default), `--hide-*` patterns are appended, `--audit-*` switches on.

use std::fmt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::audit::AuditSettings;
use crate::privacy::PrivacyPolicy;

/// The whole file; every section may be left out.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConfigFile {
    /// Databases by name, in the order written (`NAME = "PATH"`, as `--db NAME=PATH`).
    #[serde(default, with = "ordered_table")]
    pub databases: Vec<(String, PathBuf)>,
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

/// A TOML table of `NAME = "PATH"` kept in the order it is written: which database comes first
/// decides the default.
mod ordered_table {
    use std::fmt;
    use std::path::PathBuf;

    use serde::de::{MapAccess, Visitor};
    use serde::ser::SerializeMap;
    use serde::{Deserializer, Serializer};

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Vec<(String, PathBuf)>, D::Error> {
        struct InOrder;
        impl<'de> Visitor<'de> for InOrder {
            type Value = Vec<(String, PathBuf)>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a table of NAME = \"PATH\"")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut entries = Vec::new();
                while let Some(entry) = map.next_entry::<String, PathBuf>()? {
                    entries.push(entry);
                }
                Ok(entries)
            }
        }
        deserializer.deserialize_map(InOrder)
    }

    pub(super) fn serialize<S: Serializer>(
        entries: &[(String, PathBuf)],
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(entries.len()))?;
        for (name, path) in entries {
            map.serialize_entry(name, path)?;
        }
        map.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn databases_keep_the_order_they_are_written_in() {
        let file: ConfigFile = toml::from_str(
            "[databases]\nzeta = \"/d/z.duckdb\"\nalpha = \"/d/a.duckdb\"\nmid = \"~/m.duckdb\"\n",
        )
        .unwrap();
        let names: Vec<&str> = file.databases.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["zeta", "alpha", "mid"]);
        assert_eq!(file.databases[2].1, PathBuf::from("~/m.duckdb"));
        assert!(toml::from_str::<ConfigFile>("[databases]\nx = 5\n").is_err());
        assert!(toml::from_str::<ConfigFile>("[database]\nx = \"/a\"\n").is_err());
    }

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
