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
pub(crate) const READS_SETTINGS: Denial = Denial {
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

/// Where a table function's rows come from, which decides where it may appear.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RowSource {
    /// Its arguments alone (`range`, `unnest`, `json_each`): allowed under every rule.
    Arguments,
    /// DuckDB's catalog: it lists table and column names, so it is refused whenever a privacy
    /// rule hides some of them.
    Catalog,
    /// Fixed data compiled into DuckDB (`duckdb_keywords`).
    Constant,
}

/// Table functions allowed in `FROM`: where their rows come from, and why they are safe.
/// The parent's walk, the worker's walk of DuckDB's parse tree and the worker's plan check all
/// read this one table (a table function shows in DuckDB's plan as an operator of its name).
pub(crate) const ALLOWED_TABLE_FUNCTIONS: &[(&str, RowSource, &str)] = &[
    (
        "range",
        RowSource::Arguments,
        "generates numbers or timestamps; reads nothing",
    ),
    (
        "generate_series",
        RowSource::Arguments,
        "generates numbers or timestamps; reads nothing",
    ),
    (
        "unnest",
        RowSource::Arguments,
        "expands a list or struct value given as its argument",
    ),
    (
        "json_each",
        RowSource::Arguments,
        "expands a JSON value given as its argument",
    ),
    (
        "json_tree",
        RowSource::Arguments,
        "expands a JSON value given as its argument",
    ),
    (
        "duckdb_tables",
        RowSource::Catalog,
        "lists the database's tables (catalog metadata)",
    ),
    (
        "duckdb_columns",
        RowSource::Catalog,
        "lists the database's columns (catalog metadata)",
    ),
    (
        "duckdb_views",
        RowSource::Catalog,
        "lists the database's views (catalog metadata)",
    ),
    (
        "duckdb_schemas",
        RowSource::Catalog,
        "lists the database's schemas (catalog metadata)",
    ),
    (
        "duckdb_constraints",
        RowSource::Catalog,
        "lists constraints (catalog metadata)",
    ),
    (
        "duckdb_indexes",
        RowSource::Catalog,
        "lists indexes (catalog metadata)",
    ),
    (
        "duckdb_sequences",
        RowSource::Catalog,
        "lists sequences (catalog metadata)",
    ),
    (
        "duckdb_dependencies",
        RowSource::Catalog,
        "lists dependencies between catalog entries (catalog metadata)",
    ),
    (
        "duckdb_types",
        RowSource::Catalog,
        "lists data types (catalog metadata)",
    ),
    (
        "duckdb_functions",
        RowSource::Catalog,
        "lists functions (catalog metadata)",
    ),
    (
        "duckdb_keywords",
        RowSource::Constant,
        "lists SQL keywords (static)",
    ),
];

/// Table functions DuckDB itself puts into a plan for a statement that is allowed, and that SQL
/// may not call by name (`pragma_*` is refused): `SHOW t` plans as `PRAGMA_SHOW`, the list of
/// `t`'s columns. Only the engine's plan check reads plans.
#[cfg(any(feature = "engine", test))]
const PLAN_ONLY_TABLE_FUNCTIONS: &[(&str, RowSource)] = &[("pragma_show", RowSource::Catalog)];

/// How a relation in DuckDB's `system` catalog (a view over table functions) may be used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SystemView {
    /// Lists catalog metadata: allowed unless a privacy rule hides names.
    Catalog,
    /// Fixed rows (`information_schema.character_sets`, `pg_am`, …).
    Constant,
    /// Refused, with the reason.
    Denied(Denial),
}

/// DuckDB 2.0's views in its `system` catalog (`SELECT schema_name, view_name FROM
/// duckdb_views() WHERE database_name = 'system'`), as `(schema, name, use)`. Unqualified
/// names resolve in `main`, then `pg_catalog`; `information_schema` must be named.
const SYSTEM_VIEWS: &[(&str, &str, SystemView)] = &[
    ("information_schema", "character_sets", SystemView::Constant),
    (
        "information_schema",
        "check_constraints",
        SystemView::Catalog,
    ),
    ("information_schema", "columns", SystemView::Catalog),
    (
        "information_schema",
        "constraint_column_usage",
        SystemView::Catalog,
    ),
    (
        "information_schema",
        "constraint_table_usage",
        SystemView::Catalog,
    ),
    (
        "information_schema",
        "key_column_usage",
        SystemView::Catalog,
    ),
    (
        "information_schema",
        "referential_constraints",
        SystemView::Catalog,
    ),
    ("information_schema", "schemata", SystemView::Catalog),
    (
        "information_schema",
        "table_constraints",
        SystemView::Catalog,
    ),
    ("information_schema", "tables", SystemView::Catalog),
    ("information_schema", "views", SystemView::Catalog),
    ("main", "duckdb_columns", SystemView::Catalog),
    ("main", "duckdb_constraints", SystemView::Catalog),
    (
        "main",
        "duckdb_databases",
        SystemView::Denied(READS_SETTINGS),
    ),
    ("main", "duckdb_indexes", SystemView::Catalog),
    ("main", "duckdb_logs", SystemView::Denied(READS_SETTINGS)),
    ("main", "duckdb_schemas", SystemView::Catalog),
    ("main", "duckdb_tables", SystemView::Catalog),
    ("main", "duckdb_types", SystemView::Catalog),
    ("main", "duckdb_views", SystemView::Catalog),
    (
        "main",
        "pragma_database_list",
        SystemView::Denied(READS_SETTINGS),
    ),
    ("main", "sqlite_master", SystemView::Catalog),
    ("main", "sqlite_schema", SystemView::Catalog),
    ("main", "sqlite_temp_master", SystemView::Catalog),
    ("main", "sqlite_temp_schema", SystemView::Catalog),
    ("pg_catalog", "pg_am", SystemView::Constant),
    ("pg_catalog", "pg_attrdef", SystemView::Catalog),
    ("pg_catalog", "pg_attribute", SystemView::Catalog),
    ("pg_catalog", "pg_class", SystemView::Catalog),
    ("pg_catalog", "pg_collation", SystemView::Constant),
    ("pg_catalog", "pg_constraint", SystemView::Catalog),
    (
        "pg_catalog",
        "pg_database",
        SystemView::Denied(READS_SETTINGS),
    ),
    ("pg_catalog", "pg_depend", SystemView::Catalog),
    ("pg_catalog", "pg_description", SystemView::Catalog),
    ("pg_catalog", "pg_enum", SystemView::Catalog),
    ("pg_catalog", "pg_index", SystemView::Catalog),
    ("pg_catalog", "pg_indexes", SystemView::Catalog),
    ("pg_catalog", "pg_namespace", SystemView::Catalog),
    (
        "pg_catalog",
        "pg_prepared_statements",
        SystemView::Denied(READS_SETTINGS),
    ),
    ("pg_catalog", "pg_proc", SystemView::Catalog),
    ("pg_catalog", "pg_sequence", SystemView::Catalog),
    ("pg_catalog", "pg_sequences", SystemView::Catalog),
    (
        "pg_catalog",
        "pg_settings",
        SystemView::Denied(READS_SETTINGS),
    ),
    ("pg_catalog", "pg_tables", SystemView::Catalog),
    ("pg_catalog", "pg_tablespace", SystemView::Constant),
    ("pg_catalog", "pg_type", SystemView::Catalog),
    ("pg_catalog", "pg_views", SystemView::Catalog),
];

/// The system view `schema.name` (ASCII case-insensitive) resolves to, as DuckDB resolves it:
/// without a schema, `main` first, then `pg_catalog`.
pub(crate) fn system_view(schema: Option<&str>, name: &str) -> Option<SystemView> {
    let find = |wanted: &str| {
        SYSTEM_VIEWS
            .iter()
            .find(|(s, n, _)| s.eq_ignore_ascii_case(wanted) && n.eq_ignore_ascii_case(name))
            .map(|(_, _, view)| *view)
    };
    match schema {
        Some(schema) => find(schema),
        None => find("main").or_else(|| find("pg_catalog")),
    }
}

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

/// Where the rows of table function `name` (any case) come from, if SQL may call it in `FROM`.
pub(crate) fn allowed_table_function(name: &str) -> Option<RowSource> {
    let name = name.to_ascii_lowercase();
    if denial(&name).is_some() {
        return None;
    }
    ALLOWED_TABLE_FUNCTIONS
        .iter()
        .find(|(n, _, _)| *n == name)
        .map(|(_, source, _)| *source)
}

/// Where the rows of a table-function operator in DuckDB's physical plan come from, if it is
/// allowed there: the operator is named after its function, in upper case.
#[cfg(any(feature = "engine", test))]
pub(crate) fn plan_table_function(operator: &str) -> Option<RowSource> {
    let name = operator.to_ascii_lowercase();
    allowed_table_function(&name).or_else(|| {
        PLAN_ONLY_TABLE_FUNCTIONS
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, source)| *source)
    })
}

/// The allowlist as a readable list for refusal messages.
pub(crate) fn allowed_table_function_list() -> String {
    ALLOWED_TABLE_FUNCTIONS
        .iter()
        .map(|(n, _, _)| format!("{n}()"))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn system_views_resolve_like_duckdb_and_settings_views_are_denied() {
        assert_eq!(
            system_view(None, "duckdb_tables"),
            Some(SystemView::Catalog)
        );
        assert_eq!(system_view(None, "PG_TABLES"), Some(SystemView::Catalog));
        assert!(matches!(
            system_view(None, "pg_settings"),
            Some(SystemView::Denied(_))
        ));
        assert!(matches!(
            system_view(Some("main"), "duckdb_databases"),
            Some(SystemView::Denied(_))
        ));
        // information_schema is never searched without its name.
        assert_eq!(system_view(None, "columns"), None);
        assert_eq!(
            system_view(Some("information_schema"), "columns"),
            Some(SystemView::Catalog)
        );
        // ASCII folding only, as DuckDB: KELVIN SIGN is not `k`.
        assert_eq!(
            system_view(Some("information_schema"), "CHECK_constraints"),
            Some(SystemView::Catalog)
        );
        assert_eq!(
            system_view(Some("information_schema"), "chec\u{212A}_constraints"),
            None
        );
    }

    #[test]
    fn plan_operators_map_to_the_allowlist_and_plan_only_functions() {
        assert_eq!(plan_table_function("RANGE"), Some(RowSource::Arguments));
        assert_eq!(
            plan_table_function("DUCKDB_COLUMNS"),
            Some(RowSource::Catalog)
        );
        assert_eq!(plan_table_function("PRAGMA_SHOW"), Some(RowSource::Catalog));
        for refused in [
            "DUCKDB_SETTINGS",
            "DUCKDB_DATABASES",
            "READ_CSV",
            "SEQ_SCAN",
            "QUERY_TABLE",
        ] {
            assert_eq!(plan_table_function(refused), None, "{refused}");
        }
        // SQL cannot call the plan-only functions.
        assert!(allowed_table_function("pragma_show").is_none());
    }

    #[test]
    fn no_allowed_table_function_is_also_denied() {
        for (name, _, _) in ALLOWED_TABLE_FUNCTIONS {
            assert!(denial(name).is_none(), "{name} is both allowed and denied");
            assert!(allowed_table_function(name).is_some());
            assert!(allowed_table_function(&name.to_ascii_uppercase()).is_some());
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
                allowed_table_function(name).is_none(),
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
