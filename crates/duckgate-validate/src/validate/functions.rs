//! Which functions may be called, and where: the policy over every function of the bundled
//! DuckDB (`function_policy`), and DuckDB's system views.
//!
//! The policy is an allowlist that is complete against DuckDB itself: every function
//! `duckdb_functions()` lists has a row and a [`Class`], and a test fails on any it does not
//! list. The three SQL checks read it alike:
//! - a function classified as refused is refused wherever it is written or bound, with its
//!   reason;
//! - a function classified as allowed passes (a catalog listing only without privacy rules);
//! - in DuckDB's bound plan, a function that has no row is refused (`engine::plan_check`): a
//!   DuckDB upgrade, an extension or anything else that binds an unclassified function fails
//!   closed there. The two walks of the SQL text defer such a name to that check instead of
//!   refusing it, because in the text it may also be one of the database's own macros, which
//!   DuckDB expands before the plan is checked, or no function at all, which DuckDB answers
//!   with its own error.

pub use super::function_class::{Class, Denial, FunctionKind, READS_SETTINGS, RowSource};
use super::function_class::{EXTERNAL_DATABASE, READS_ENVIRONMENT, READS_FILES};
use super::function_policy::{FUNCTION_POLICY, PolicyEntry};

/// Functions other builds of DuckDB register but this one does not (the command-line shell's
/// `getenv`, the readers of extensions this build does not link): refused by name by the two walks, should a later build link them. They cannot be
/// in the policy table, which must match this build exactly; the plan check would refuse them
/// anyway, as functions with no row.
const OTHER_BUILDS: &[(&str, Denial)] = &[
    ("getenv", READS_ENVIRONMENT),
    ("iceberg_scan", READS_FILES),
    ("iceberg_metadata", READS_FILES),
    ("iceberg_snapshots", READS_FILES),
    ("delta_scan", READS_FILES),
    ("read_xlsx", READS_FILES),
    ("sqlite_scan", EXTERNAL_DATABASE),
    ("sqlite_attach", EXTERNAL_DATABASE),
    ("postgres_scan", EXTERNAL_DATABASE),
    ("postgres_attach", EXTERNAL_DATABASE),
    ("postgres_query", EXTERNAL_DATABASE),
    ("mysql_scan", EXTERNAL_DATABASE),
    ("mysql_query", EXTERNAL_DATABASE),
];

/// What the policy says of a function called where an expression stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExpressionUse {
    /// Allowed everywhere.
    Allowed,
    /// Lists the catalog: allowed unless privacy rules hide names.
    CatalogListing,
    /// Counts the process's statements ([`Class::CountsStatements`]): allowed unless privacy
    /// rules hide names.
    CountsStatements,
    /// Refused, with the reason.
    Refused(Denial),
    /// Not one of DuckDB's built-in functions: the database's own macro, or nothing (DuckDB's
    /// binder decides; the plan check refuses whatever unclassified function it binds).
    NotBuiltIn,
}

fn entries(name: &str) -> impl Iterator<Item = &'static PolicyEntry> + '_ {
    FUNCTION_POLICY
        .iter()
        .filter(move |entry| entry.name.eq_ignore_ascii_case(name))
}

/// What the policy says of `name` (any case) called where an expression stands. A name refused
/// in any of its expression kinds is refused; one DuckDB knows only as a refused table function
/// is refused too, so the refusal names the real reason wherever it is written.
pub fn expression_use(name: &str) -> ExpressionUse {
    let mut found = None;
    for entry in entries(name).filter(|e| e.kind.in_expressions()) {
        let this = match entry.class.denial() {
            Some(denial) => return ExpressionUse::Refused(denial),
            None if entry.class == Class::ListsCatalog => ExpressionUse::CatalogListing,
            None if entry.class == Class::CountsStatements => ExpressionUse::CountsStatements,
            None => ExpressionUse::Allowed,
        };
        if found != Some(ExpressionUse::CatalogListing) {
            found = Some(this);
        }
    }
    if let Some(found) = found {
        return found;
    }
    if let Some((_, denial)) = OTHER_BUILDS
        .iter()
        .find(|(other, _)| other.eq_ignore_ascii_case(name))
    {
        return ExpressionUse::Refused(*denial);
    }
    match entries(name).find_map(|e| e.class.denial()) {
        Some(denial) => ExpressionUse::Refused(denial),
        None => ExpressionUse::NotBuiltIn,
    }
}

/// Why `name` (any case) is refused where an expression stands, if the policy refuses it.
pub fn denial(name: &str) -> Option<Denial> {
    match expression_use(name) {
        ExpressionUse::Refused(denial) => Some(denial),
        ExpressionUse::Allowed
        | ExpressionUse::CatalogListing
        | ExpressionUse::CountsStatements
        | ExpressionUse::NotBuiltIn => None,
    }
}

/// What the policy says of a table function (`FROM name(…)`, any case).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TableUse {
    /// Allowed, with where its rows come from.
    Allowed(RowSource),
    /// Refused, with the reason.
    Refused(Denial),
    /// A built-in that only DuckDB's plans use (`seq_scan`, `pragma_show`): SQL may not call it.
    PlanOnly,
    /// Not one of DuckDB's built-in table functions: a table macro stored in the database (whose
    /// body the plan check sees expanded), `values(…)`, or nothing (DuckDB's binder answers).
    NotBuiltIn,
}

/// What the policy says of `name` (any case) called in `FROM`.
pub fn table_use(name: &str) -> TableUse {
    let mut allowed = None;
    let mut plan_only = false;
    for entry in entries(name) {
        let in_from = match entry.kind {
            FunctionKind::Table | FunctionKind::TableMacro => true,
            FunctionKind::Scalar
            | FunctionKind::Aggregate
            | FunctionKind::Window
            | FunctionKind::Macro
            | FunctionKind::Pragma => false,
        };
        if !in_from {
            continue;
        }
        if let Some(denial) = entry.class.denial() {
            return TableUse::Refused(denial);
        }
        plan_only |= entry.class == Class::PlanOnly;
        allowed = allowed.or(entry.class.row_source());
    }
    match (allowed, plan_only) {
        (Some(source), _) => TableUse::Allowed(source),
        (None, true) => TableUse::PlanOnly,
        // Not a table function: a refused scalar of that name still says why.
        (None, false) => match denial(name) {
            Some(denial) => TableUse::Refused(denial),
            None => TableUse::NotBuiltIn,
        },
    }
}

/// The function DuckDB bound in a plan, by its exact spelling (operators and casts are bound
/// as `<`, `__cast`, `~~`) and position: the policy's spelling and its class, or `None` when the
/// policy has no row for it, which the plan check refuses. A name with a refused kind among
/// allowed ones counts as refused.
pub fn bound_function(name: &str, expressions: bool) -> Option<(&'static str, Class)> {
    let mut rows = FUNCTION_POLICY
        .iter()
        .filter(|e| e.name == name && e.kind.in_expressions() == expressions);
    let first = rows.next()?;
    let class = rows.fold(first.class, |worst, entry| match entry.class.denial() {
        Some(_) => entry.class,
        None => worst,
    });
    Some((first.name, class))
}

/// How a relation in DuckDB's `system` catalog (a view over table functions) may be used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SystemView {
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
pub fn system_view(schema: Option<&str>, name: &str) -> Option<SystemView> {
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

/// Where the rows of table function `name` (any case) come from, if SQL may call it in `FROM`.
pub fn allowed_table_function(name: &str) -> Option<RowSource> {
    match table_use(name) {
        TableUse::Allowed(source) => Some(source),
        TableUse::Refused(_) | TableUse::PlanOnly | TableUse::NotBuiltIn => None,
    }
}

/// The allowed table functions as a readable list for refusal messages.
pub fn allowed_table_function_list() -> String {
    let mut names: Vec<&str> = FUNCTION_POLICY
        .iter()
        .filter(|e| matches!(e.kind, FunctionKind::Table | FunctionKind::TableMacro))
        .filter(|e| match e.class.row_source() {
            Some(RowSource::Arguments | RowSource::Catalog | RowSource::Constant) => true,
            Some(RowSource::DeclaredFolders) | None => false,
        })
        .map(|e| e.name)
        .collect();
    names.dedup();
    names
        .iter()
        .map(|n| format!("{n}()"))
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
    fn table_functions_are_allowed_by_their_class_and_plan_only_ones_cannot_be_called() {
        assert_eq!(table_use("RANGE"), TableUse::Allowed(RowSource::Arguments));
        assert_eq!(table_use("repeat"), TableUse::Allowed(RowSource::Arguments));
        assert_eq!(
            table_use("test_all_types"),
            TableUse::Allowed(RowSource::Constant)
        );
        assert_eq!(
            table_use("duckdb_columns"),
            TableUse::Allowed(RowSource::Catalog)
        );
        assert_eq!(
            table_use("pragma_table_info"),
            TableUse::Allowed(RowSource::Catalog)
        );
        // The file readers are allowed by their class, and only where folders are declared:
        // the walks and the plan check ask for the folders.
        assert_eq!(
            table_use("read_csv"),
            TableUse::Allowed(RowSource::DeclaredFolders)
        );
        for refused in [
            "duckdb_settings",
            "DUCKDB_DATABASES",
            "read_blob",
            "query_table",
            "histogram",
        ] {
            assert!(
                matches!(table_use(refused), TableUse::Refused(_)),
                "{refused}"
            );
        }
        // SQL cannot call the plan-only functions; a name DuckDB does not have is the
        // database's own table macro or nothing, which the plan check decides.
        assert_eq!(table_use("pragma_show"), TableUse::PlanOnly);
        assert_eq!(table_use("seq_scan"), TableUse::PlanOnly);
        assert_eq!(table_use("my_table_macro"), TableUse::NotBuiltIn);
    }

    #[test]
    fn functions_that_run_sql_text_read_settings_or_build_types_from_text_are_refused_anywhere() {
        for name in [
            "json_serialize_plan",
            "JSON_SERIALIZE_SQL",
            "json_deserialize_sql",
            "json_execute_serialized_sql",
            "query",
            "query_table",
            "current_setting",
            "getvariable",
            "make_type",
            "cast_to_type",
            "get_type",
            "index_key",
            "setval",
            "nextval",
            "setseed",
            "write_log",
            "sleep_ms",
            "read_text",
            "read_blob",
        ] {
            assert!(
                denial(name).is_some(),
                "{name} should be refused as an expression"
            );
            assert!(allowed_table_function(name).is_none(), "{name} in FROM");
        }
    }

    #[test]
    fn an_aggregate_is_not_refused_for_a_table_macro_of_the_same_name() {
        // `histogram` the aggregate computes; `histogram` the table macro runs query_table.
        assert_eq!(expression_use("histogram"), ExpressionUse::Allowed);
        assert!(matches!(table_use("histogram"), TableUse::Refused(_)));
    }

    #[test]
    fn catalog_functions_are_catalog_listings_and_unknown_names_are_left_to_the_binder() {
        assert_eq!(
            expression_use("in_search_path"),
            ExpressionUse::CatalogListing
        );
        assert_eq!(
            expression_use("pg_get_viewdef"),
            ExpressionUse::CatalogListing
        );
        assert_eq!(expression_use("my_stored_macro"), ExpressionUse::NotBuiltIn);
    }

    #[test]
    fn bound_functions_are_found_by_their_exact_spelling_and_kind() {
        let bound_class =
            |name: &str, expressions| bound_function(name, expressions).map(|(_, class)| class);
        assert_eq!(bound_class("__cast", true), Some(Class::Computes));
        assert_eq!(bound_class("<", true), Some(Class::Computes));
        assert_eq!(
            bound_class("json_serialize_plan", true),
            Some(Class::RunsSqlText)
        );
        assert_eq!(bound_class("seq_scan", false), Some(Class::PlanOnly));
        assert_eq!(
            bound_class("read_csv", false),
            Some(Class::ReadsDeclaredFolders)
        );
        assert_eq!(bound_class("read_text", false), Some(Class::ReadsFiles));
        assert_eq!(bound_class("not_a_function", true), None);
        // The table function `range` and the scalar `range` are separate rows.
        assert_eq!(bound_class("range", false), Some(Class::RowsFromArguments));
        assert_eq!(bound_class("range", true), Some(Class::Computes));
    }

    #[test]
    fn every_refused_class_has_a_denial_and_every_row_a_reason() {
        for entry in FUNCTION_POLICY {
            assert!(!entry.class.reason().is_empty(), "{entry:?}");
            assert!(entry.overloads > 0, "{entry:?}");
        }
        // Sorted and unique, so a lookup finds every row of a name.
        for pair in FUNCTION_POLICY.windows(2) {
            assert!(
                (pair[0].name, pair[0].kind.duckdb_name())
                    != (pair[1].name, pair[1].kind.duckdb_name()),
                "{pair:?}"
            );
        }
    }

    #[test]
    fn data_file_readers_read_declared_folders_and_other_file_readers_are_denied() {
        for name in [
            "read_csv",
            "READ_CSV_AUTO",
            "read_parquet",
            "parquet_scan",
            "read_json",
            "read_json_objects",
            "read_ndjson_auto",
            "parquet_metadata",
            "parquet_schema",
            "glob",
        ] {
            assert_eq!(
                table_use(name),
                TableUse::Allowed(RowSource::DeclaredFolders),
                "{name} reads the declared folders"
            );
        }
        for name in [
            "read_text",
            "read_blob",
            "sniff_csv",
            "read_duckdb",
            "parquet_bloom_probe",
            "parquet_full_metadata",
            "read_single_csv_file",
        ] {
            assert!(
                matches!(table_use(name), TableUse::Refused(_)),
                "{name} should not be a table function"
            );
        }
        assert!(!allowed_table_function_list().contains("read_csv"));
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
            "unnest",
        ] {
            assert!(denial(name).is_none(), "{name} should not be denied");
        }
    }
}
