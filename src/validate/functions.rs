//! The function tables: which table functions may appear in `FROM`, and which functions are
//! refused wherever they appear. Every entry carries its reason, which becomes the refusal message.
//!
//! Table functions are an allowlist: a name not listed in [`ALLOWED_TABLE_FUNCTIONS`] is refused in
//! `FROM`. Scalar, aggregate and window functions are too many to list (and new ones are pure
//! computations), so they are a denylist: [`DENIED_FUNCTIONS`] by exact name, then
//! [`DENIED_PREFIXES`] / [`DENIED_SUFFIXES`] for families such as `read_*` and `*_scan`. The
//! denylist applies in every position, `FROM` included, so a refusal there names the real reason.

/// Why a function is refused, and what to do instead.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Denial {
    /// Completes "`name` …", e.g. "reads files outside the database".
    pub(crate) reason: &'static str,
    /// The next step for the agent.
    pub(crate) instead: &'static str,
}

const READS_FILES: Denial = Denial {
    reason: "reads files outside the database",
    instead: "query the database's tables instead (see list_tables)",
};
const RUNS_SQL_TEXT: Denial = Denial {
    reason: "runs SQL built from a string, which bypasses validation",
    instead: "write the query itself instead",
};
const WRITES: Denial = Denial {
    reason: "changes the database or the session, and duckgate is read-only",
    instead: "remove it; only read-only queries are allowed",
};
const READS_SETTINGS: Denial = Denial {
    reason: "reads DuckDB's configuration or secrets, not the database's data",
    instead: "use server_info for the server's settings, or query the database's tables",
};
const READS_ENVIRONMENT: Denial = Denial {
    reason: "reads the server's environment, not the database",
    instead: "query the database's tables instead (see list_tables)",
};
const PRAGMA: Denial = Denial {
    reason: "is a PRAGMA function, which can read settings or files",
    instead: "use list_tables / describe_table, or the duckdb_tables() / duckdb_columns() functions",
};
const EXTERNAL_DATABASE: Denial = Denial {
    reason: "reads another database or a remote service",
    instead: "query this database's tables instead (see list_tables)",
};

/// Table functions allowed in `FROM`, each with the reason it is safe.
pub(crate) const ALLOWED_TABLE_FUNCTIONS: &[(&str, &str)] = &[
    ("range", "generates numbers or timestamps; reads nothing"),
    (
        "generate_series",
        "generates numbers or timestamps; reads nothing",
    ),
    (
        "unnest",
        "expands a list or struct value given as its argument",
    ),
    ("json_each", "expands a JSON value given as its argument"),
    ("json_tree", "expands a JSON value given as its argument"),
    (
        "duckdb_tables",
        "lists the database's tables (catalog metadata)",
    ),
    (
        "duckdb_columns",
        "lists the database's columns (catalog metadata)",
    ),
    (
        "duckdb_views",
        "lists the database's views (catalog metadata)",
    ),
    (
        "duckdb_schemas",
        "lists the database's schemas (catalog metadata)",
    ),
    ("duckdb_constraints", "lists constraints (catalog metadata)"),
    ("duckdb_indexes", "lists indexes (catalog metadata)"),
    ("duckdb_types", "lists data types (catalog metadata)"),
    ("duckdb_functions", "lists functions (catalog metadata)"),
    ("duckdb_keywords", "lists SQL keywords (static)"),
];

/// Functions refused by exact (lower-case) name, wherever they appear.
pub(crate) const DENIED_FUNCTIONS: &[(&str, Denial)] = &[
    ("glob", READS_FILES),
    ("sniff_csv", READS_FILES),
    ("query", RUNS_SQL_TEXT),
    ("query_table", RUNS_SQL_TEXT),
    ("json_execute_serialized_sql", RUNS_SQL_TEXT),
    ("checkpoint", WRITES),
    ("force_checkpoint", WRITES),
    ("nextval", WRITES),
    ("currval", WRITES),
    ("setseed", WRITES),
    ("set_variable", WRITES),
    ("getenv", READS_ENVIRONMENT),
    ("current_setting", READS_SETTINGS),
    ("getvariable", READS_SETTINGS),
    ("duckdb_secrets", READS_SETTINGS),
    ("which_secret", READS_SETTINGS),
    ("duckdb_settings", READS_SETTINGS),
    ("duckdb_extensions", READS_SETTINGS),
    ("duckdb_databases", READS_SETTINGS),
    ("duckdb_temporary_files", READS_SETTINGS),
    ("duckdb_memory", READS_SETTINGS),
    ("duckdb_log", READS_SETTINGS),
    ("duckdb_logs", READS_SETTINGS),
    ("duckdb_variables", READS_SETTINGS),
    ("duckdb_external_file_cache", READS_SETTINGS),
    ("enable_logging", WRITES),
    ("disable_logging", WRITES),
    ("truncate_duckdb_logs", WRITES),
    ("load_extension", WRITES),
    ("install_extension", WRITES),
];

/// Families refused by name prefix.
pub(crate) const DENIED_PREFIXES: &[(&str, Denial)] = &[
    ("read_", READS_FILES),
    ("parquet_", READS_FILES),
    ("iceberg_", READS_FILES),
    ("delta_", READS_FILES),
    ("pragma_", PRAGMA),
    ("sqlite_", EXTERNAL_DATABASE),
    ("postgres_", EXTERNAL_DATABASE),
    ("mysql_", EXTERNAL_DATABASE),
    ("http", EXTERNAL_DATABASE),
];

/// Families refused by name suffix.
pub(crate) const DENIED_SUFFIXES: &[(&str, Denial)] = &[
    ("_scan", READS_FILES),
    ("_metadata", READS_FILES),
    ("_secrets", READS_SETTINGS),
];

/// Why `name` (any case) is refused wherever it appears, if it is.
pub(crate) fn denial(name: &str) -> Option<Denial> {
    let name = name.to_ascii_lowercase();
    let exact = DENIED_FUNCTIONS.iter().find(|(n, _)| *n == name);
    let prefix = || DENIED_PREFIXES.iter().find(|(p, _)| name.starts_with(p));
    let suffix = || DENIED_SUFFIXES.iter().find(|(s, _)| name.ends_with(s));
    exact.or_else(prefix).or_else(suffix).map(|(_, d)| *d)
}

/// Whether `name` (any case) may be called as a table function in `FROM`.
pub(crate) fn table_function_allowed(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    denial(&name).is_none() && ALLOWED_TABLE_FUNCTIONS.iter().any(|(n, _)| *n == name)
}

/// The allowlist as a readable list for refusal messages.
pub(crate) fn allowed_table_function_list() -> String {
    ALLOWED_TABLE_FUNCTIONS
        .iter()
        .map(|(n, _)| format!("{n}()"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// DuckDB's catalog views that may be named without parentheses (`FROM duckdb_tables`).
pub(crate) fn is_catalog_view(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    name.starts_with("duckdb_") && table_function_allowed(&name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_allowed_table_function_is_also_denied() {
        for (name, _) in ALLOWED_TABLE_FUNCTIONS {
            assert!(denial(name).is_none(), "{name} is both allowed and denied");
            assert!(table_function_allowed(name));
            assert!(table_function_allowed(&name.to_ascii_uppercase()));
        }
    }

    #[test]
    fn file_readers_are_denied_by_family() {
        for name in [
            "read_csv",
            "READ_CSV_AUTO",
            "read_parquet",
            "parquet_scan",
            "read_json_objects",
            "read_text",
            "read_blob",
            "parquet_metadata",
            "parquet_schema",
            "iceberg_scan",
            "delta_scan",
            "sqlite_scan",
            "postgres_scan",
            "glob",
            "sniff_csv",
            "pragma_table_info",
        ] {
            assert!(denial(name).is_some(), "{name} should be denied");
            assert!(
                !table_function_allowed(name),
                "{name} should not be a table function"
            );
        }
    }

    #[test]
    fn everyday_functions_are_not_denied() {
        for name in [
            "sum",
            "avg",
            "date_trunc",
            "strftime",
            "list_transform",
            "json_extract",
            "regexp_matches",
            "now",
            "random",
            "uuid",
            "coalesce",
            "columns",
            "unnest",
        ] {
            assert!(denial(name).is_none(), "{name} should not be denied");
        }
    }
}
