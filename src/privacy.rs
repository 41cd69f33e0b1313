//! Privacy rules: tables and columns the operator hides from agents.
//!
//! Patterns are case-insensitive globs (`*` any run, slashes and dots included; `?` one
//! character). A table pattern matches `name`, `schema.name`, `database.name` or
//! `database.schema.name`; a column pattern matches `table.column`, `schema.table.column`,
//! `database.table.column` or `database.schema.table.column`. A pattern without a database's
//! name applies to every database the server serves (`crate::protocol::databases`): a rule never
//! hides less because a second database was added, and `pump.raw` hides the table `raw` of the
//! database `pump` as well as of a schema `pump` (a pattern that could mean either hides both).
//! A hidden object does not exist for the agent: the gateway removes it from the catalog every
//! tool and the validator see, so naming it is an unknown name like any other.
//!
//! A pattern holding a `/` names files of the declared folders, as the agent names them
//! (`exports/2026/readings.parquet`), and nothing else; one without names tables and nothing
//! else. In `hide_tables` it hides whole files: a hidden file is a missing one. In
//! `hide_columns` it is the files' pattern, a dot, and the column's pattern
//! (`exports/**/*.parquet.patient_name`): that column of those files does not exist. Parquet
//! files hide such a column from DuckDB's binder; a CSV or JSON file a column rule names is
//! refused as a whole, since its reader can bind columns by position or read its header as a row
//! (`vendor/libduckdb-sys/duckgate/folders.cpp`, `engine::plan_check`).

use serde::{Deserialize, Serialize};

use duckgate_validate::error::{Failure, MissingKind, MissingName};

/// What a worker answers when DuckDB's plan for a query reads a hidden table, a hidden column
/// or a catalog listing (`src/engine/plan_check/`). It names nothing, so it confirms
/// nothing, and it says what to do instead.
pub const PLAN_REFUSAL: &str = "The query reads data that is not available on this server. \
Name the columns you need explicitly, choosing from those describe_table lists for tables that \
list_tables shows.";

/// The recovery hint that goes with [`PLAN_REFUSAL`].
pub const PLAN_REFUSAL_HINT: &str =
    "Name the columns you need (see describe_table), and query only tables that list_tables shows.";

/// Under privacy rules, a "not found" error in words that depend only on the name the query
/// wrote: DuckDB's own text lists candidates and "did you mean" suggestions, drawn from every
/// attached catalog, so it could name what is hidden. A missing column keeps its name (the
/// query wrote it); anything else becomes one fixed sentence. Built from the typed
/// [`MissingName`] the engine read from DuckDB's message, never from the message. The worker
/// rewords (the layer that holds alone) and the parent rewords again, with this one function;
/// the result keeps only a missing column, so the parent's rewording gives the same words.
pub fn unknown_name_failure(missing: Option<&MissingName>) -> Failure {
    let column = missing.filter(|m| m.kind == MissingKind::Column);
    let refusal = match column {
        Some(missing) => duckgate_validate::validate::unknown_column(&missing.name),
        None => duckgate_validate::validate::Refusal {
            kind: duckgate_validate::error::ErrorKind::UnknownName,
            message: crate::privacy::UNKNOWN_NAME.into(),
            construct: String::new(),
            suggestion: "Check the names with list_tables and describe_table.".into(),
            missing: None,
        },
    };
    Failure {
        missing: column.cloned(),
        ..refusal.into()
    }
}

/// Under privacy rules, DuckDB's error whose type says its words are about DuckDB itself rather
/// than the query (`MessageOrigin::DuckdbAboutItself`): reworded whole, naming nothing.
pub fn unnamed_failure() -> Failure {
    duckgate_validate::validate::Refusal {
        kind: duckgate_validate::error::ErrorKind::DatabaseError,
        message: crate::privacy::UNNAMED_ERROR.into(),
        construct: String::new(),
        suggestion: "Check the names with list_tables and describe_table, and simplify the query."
            .into(),
        missing: None,
    }
    .into()
}

/// The sentence of [`unnamed_failure`].
pub const UNNAMED_ERROR: &str = "DuckDB could not run the query as written; its message is about DuckDB's own state (a file, its catalog, a setting) rather than the query, and under this server's privacy rules it is not shown.";

/// The one sentence for a name that does not exist (or is hidden) under privacy rules.
pub const UNKNOWN_NAME: &str = "A name in the query does not exist in this database.";

/// The `[privacy]` section of the configuration, plus the `--hide-*` flags.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PrivacyPolicy {
    /// Table patterns (`name`, `schema.name`, `database.name`, `database.schema.name`, globs).
    #[serde(default)]
    pub hide_tables: Vec<String>,
    /// Column patterns (`table.column`, `schema.table.column`, `database.table.column`,
    /// `database.schema.table.column`, globs such as `*.serial_number`).
    #[serde(default)]
    pub hide_columns: Vec<String>,
}

impl PrivacyPolicy {
    /// No rule at all: nothing is filtered and nothing extra is refused.
    pub fn is_empty(&self) -> bool {
        self.hide_tables.is_empty() && self.hide_columns.is_empty()
    }

    /// Whether the table `database.schema.name` is hidden.
    pub fn hides_table(&self, database: &str, schema: &str, name: &str) -> bool {
        let forms = [
            name.to_owned(),
            format!("{schema}.{name}"),
            format!("{database}.{name}"),
            format!("{database}.{schema}.{name}"),
        ];
        self.hide_tables
            .iter()
            .filter(|p| !names_files(p))
            .any(|p| forms.iter().any(|form| glob_matches(p, form)))
    }

    /// Whether any rule names files of the declared folders.
    pub fn names_files(&self) -> bool {
        self.hide_tables
            .iter()
            .chain(&self.hide_columns)
            .any(|p| names_files(p))
    }

    /// Whether the file `NAME/…` of a declared folder is hidden: a missing file for queries.
    pub fn hides_file(&self, file: &str) -> bool {
        self.hide_tables
            .iter()
            .filter(|p| names_files(p))
            .any(|p| file_glob_matches(p, file))
    }

    /// Whether a column rule names the file `NAME/…` (whatever the file holds).
    pub fn has_file_column_rules(&self, file: &str) -> bool {
        self.file_column_rules()
            .any(|(files, _)| file_glob_matches(files, file))
    }

    /// Whether the column of the file `NAME/…` is hidden (every column of a hidden file is).
    pub fn hides_file_column(&self, file: &str, column: &str) -> bool {
        self.hides_file(file)
            || self.file_column_rules().any(|(files, columns)| {
                file_glob_matches(files, file) && glob_matches(columns, column)
            })
    }

    /// The column rules that name files: each one's files' pattern and column's pattern.
    fn file_column_rules(&self) -> impl Iterator<Item = (&str, &str)> {
        self.hide_columns
            .iter()
            .filter(|p| names_files(p))
            .filter_map(|p| p.rsplit_once('.'))
    }

    /// The columns of one table that are hidden, given each column's name and the columns its
    /// default or generated expression reads (`None`: unknown, so any). A column the rules name
    /// is hidden; so is one whose expression reads a hidden column, since its values are
    /// computed from hidden data (`length(serial_number)`), to a fixed point.
    pub fn hidden_columns(
        &self,
        (database, schema, table): (&str, &str, &str),
        columns: &[(&str, Option<&[String]>)],
    ) -> Vec<String> {
        let mut hidden: Vec<String> = columns
            .iter()
            .filter(|(name, _)| self.hides_column((database, schema, table), name))
            .map(|(name, _)| (*name).to_owned())
            .collect();
        loop {
            let before = hidden.len();
            for (name, reads) in columns {
                if hidden.iter().any(|h| h == name) || hidden.is_empty() {
                    continue;
                }
                let reads_hidden = match reads {
                    None => true,
                    Some(reads) => reads
                        .iter()
                        .any(|read| hidden.iter().any(|h| h.eq_ignore_ascii_case(read))),
                };
                if reads_hidden {
                    hidden.push((*name).to_owned());
                }
            }
            if hidden.len() == before {
                return hidden;
            }
        }
    }

    /// Whether the column `database.schema.table.column` is hidden (a column of a hidden table
    /// is too).
    pub fn hides_column(
        &self,
        (database, schema, table): (&str, &str, &str),
        column: &str,
    ) -> bool {
        if self.hides_table(database, schema, table) {
            return true;
        }
        let forms = [
            format!("{table}.{column}"),
            format!("{schema}.{table}.{column}"),
            format!("{database}.{table}.{column}"),
            format!("{database}.{schema}.{table}.{column}"),
        ];
        self.hide_columns
            .iter()
            .filter(|p| !names_files(p))
            .any(|p| forms.iter().any(|form| glob_matches(p, form)))
    }
}

/// Whether a pattern names files of the declared folders (it holds a `/`) rather than tables.
fn names_files(pattern: &str) -> bool {
    pattern.contains('/')
}

/// [`glob_matches`] for a pattern of files: `*` already crosses folders, and `**/` also matches
/// no folder at all (`exports/**/*.parquet` names `exports/a.parquet` too), as in DuckDB's globs.
fn file_glob_matches(pattern: &str, file: &str) -> bool {
    glob_matches(&pattern.replace("**/", "*"), file)
}

/// What DuckDB's plan of a view's column reads from one stored table (see
/// `engine::lineage`): a column, or the table's rows alone (`count(*)` reads only row ids).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ReadColumn {
    /// The table's database, by its declared name (a view may read another database's table).
    pub database: String,
    /// The table's schema (a nested schema's path joined by dots).
    pub schema: String,
    /// The table.
    pub table: String,
    /// The column; `None` when the plan reads only the table's rows.
    pub column: Option<String>,
}

/// What a view's column reads, as a worker under privacy rules traced it for the parent's
/// catalog (`engine::lineage`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum ViewColumnReads {
    /// DuckDB's plan of it could not be read: it may read anything.
    Unknown,
    /// What its plan reads.
    Reads(Vec<ReadColumn>),
}

impl ViewColumnReads {
    /// As [`PrivacyPolicy::view_column_hidden`] takes it.
    pub fn reads(&self) -> Option<&[ReadColumn]> {
        match self {
            ViewColumnReads::Unknown => None,
            ViewColumnReads::Reads(reads) => Some(reads),
        }
    }
}

impl PrivacyPolicy {
    /// Whether a view's column is hidden, given what DuckDB's plan of it reads (`None`: it
    /// could not be read, so it may read anything) and `hidden_of(database, schema, table)`,
    /// the hidden columns of each stored table ([`PrivacyPolicy::hidden_columns`], generated
    /// ones included). A view column computed from hidden data, or filtered by it, is hidden
    /// data.
    pub fn view_column_hidden<'h>(
        &self,
        reads: Option<&[ReadColumn]>,
        hidden_of: impl Fn(&str, &str, &str) -> Option<&'h [String]>,
    ) -> bool {
        if self.is_empty() {
            return false;
        }
        let Some(reads) = reads else {
            return true;
        };
        reads.iter().any(|read| {
            let table = (
                read.database.as_str(),
                read.schema.as_str(),
                read.table.as_str(),
            );
            if self.hides_table(table.0, table.1, table.2) {
                return true;
            }
            let Some(column) = &read.column else {
                return false;
            };
            self.hides_column(table, column)
                || hidden_of(table.0, table.1, table.2)
                    .is_some_and(|hidden| hidden.iter().any(|h| h.eq_ignore_ascii_case(column)))
        })
    }
}

/// Case-insensitive glob match of the whole `text`: `*` is any run (dots included), `?` one
/// character. Iterative with one backtrack point, so no pattern can make it exponential.
pub fn glob_matches(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.to_lowercase().chars().collect();
    let t: Vec<char> = text.to_lowercase().chars().collect();
    let (mut pi, mut ti) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while let Some(&at_text) = t.get(ti) {
        let at_pattern = p.get(pi).copied();
        if at_pattern.is_some_and(|c| c == '?' || c == at_text) {
            pi += 1;
            ti += 1;
        } else if at_pattern == Some('*') {
            star = Some((pi, ti));
            pi += 1;
        } else if let Some((star_pi, star_ti)) = star {
            pi = star_pi + 1;
            ti = star_ti + 1;
            star = Some((star_pi, star_ti + 1));
        } else {
            return false;
        }
    }
    p.get(pi..).unwrap_or_default().iter().all(|&c| c == '*')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_match_whole_names_case_insensitively() {
        assert!(glob_matches("*.serial_number", "devices.Serial_Number"));
        assert!(glob_matches("raw_*", "raw_payloads"));
        assert!(glob_matches("n?tes", "notes"));
        assert!(!glob_matches("notes", "notes_2"));
        assert!(!glob_matches("*.serial", "devices.serial_number"));
        assert!(glob_matches("*", ""));
        assert!(!glob_matches("a*b*c", "aXbXd"));
    }

    #[test]
    fn tables_match_bare_or_qualified_and_hide_their_columns() {
        let policy = PrivacyPolicy {
            hide_tables: vec!["raw_payloads".into(), "audit.*".into()],
            hide_columns: vec!["*.serial_number".into(), "readings.note".into()],
        };
        assert!(policy.hides_table("cgm", "main", "RAW_PAYLOADS"));
        assert!(policy.hides_table("cgm", "audit", "anything"));
        assert!(!policy.hides_table("cgm", "main", "readings"));
        assert!(policy.hides_column(("cgm", "main", "devices"), "serial_number"));
        assert!(policy.hides_column(("cgm", "main", "readings"), "note"));
        assert!(policy.hides_column(("cgm", "main", "raw_payloads"), "id"));
        assert!(!policy.hides_column(("cgm", "main", "readings"), "glucose"));
        assert!(PrivacyPolicy::default().is_empty());
    }

    #[test]
    fn patterns_with_a_slash_name_files_and_only_files() {
        let policy = PrivacyPolicy {
            hide_tables: vec!["exports/private/*".into(), "*secret*".into()],
            hide_columns: vec![
                "exports/**/*.parquet.patient_name".into(),
                "*.serial_number".into(),
            ],
        };
        assert!(policy.names_files());
        assert!(policy.hides_file("exports/private/a.parquet"));
        assert!(policy.hides_file("EXPORTS/private/deep/b.csv"));
        // A table pattern names no file, and a file pattern no table.
        assert!(!policy.hides_file("exports/secret.parquet"));
        assert!(policy.hides_table("cgm", "main", "secret_notes"));
        assert!(!policy.hides_table("cgm", "exports", "private/a.parquet"));
        assert!(policy.has_file_column_rules("exports/2026/a.parquet"));
        assert!(!policy.has_file_column_rules("exports/a.csv"));
        assert!(policy.hides_file_column("exports/2026/a.parquet", "Patient_Name"));
        assert!(policy.hides_file_column("exports/a.parquet", "patient_name"));
        assert!(!policy.hides_file_column("exports/2026/a.parquet", "glucose"));
        assert!(!policy.hides_file_column("exports/a.parquet.x", "serial_number"));
        assert!(policy.hides_file_column("exports/private/a.parquet", "glucose"));
        assert!(!policy.hides_column(("cgm", "main", "exports/2026/a"), "patient_name"));
        assert!(!PrivacyPolicy::default().names_files());
    }

    #[test]
    fn a_database_prefix_narrows_a_rule_to_that_database_and_no_prefix_means_every_database() {
        let policy = PrivacyPolicy {
            hide_tables: vec!["pump.raw_events".into(), "pump.main.uploads".into()],
            hide_columns: vec![
                "pump.boluses.note".into(),
                "pump.main.devices.serial".into(),
                "readings.note".into(),
            ],
        };
        // With the database's name: that database only, in its name's every form.
        assert!(policy.hides_table("pump", "main", "raw_events"));
        assert!(policy.hides_table("PUMP", "other", "raw_events"));
        assert!(!policy.hides_table("cgm", "main", "raw_events"));
        assert!(policy.hides_table("pump", "main", "uploads"));
        assert!(!policy.hides_table("cgm", "main", "uploads"));
        assert!(!policy.hides_table("pump", "other", "uploads"));
        assert!(policy.hides_column(("pump", "main", "boluses"), "note"));
        assert!(!policy.hides_column(("cgm", "main", "boluses"), "note"));
        assert!(policy.hides_column(("pump", "main", "devices"), "serial"));
        assert!(!policy.hides_column(("cgm", "main", "devices"), "serial"));
        // A two-part table pattern that could be a schema hides that schema's table too.
        assert!(policy.hides_table("cgm", "pump", "raw_events"));
        // Without one: every database.
        assert!(policy.hides_column(("cgm", "main", "readings"), "note"));
        assert!(policy.hides_column(("pump", "main", "readings"), "note"));
    }
}
