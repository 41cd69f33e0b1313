//! The name resolution DuckDB does its own way, which the validator follows: recursive CTE
//! scopes, ASCII-only case folding, catalog-qualified names, `SHOW t`.

use duckgate_test_kit::corpus;
use duckgate_validate::error::ErrorKind;
use duckgate_validate::validate::{Catalog, Limits, StatementKind, validate_sql};

use crate::test_support::*;

// ----- recursive CTEs, as DuckDB scopes them ----------------------------------------------------

#[test]
fn a_recursive_cte_without_a_union_body_reads_its_name_from_outside() {
    let with_x = catalog_of(&["x"], "db");
    let accepted = validate_sql(
        "WITH RECURSIVE x AS (SELECT * FROM x) SELECT * FROM x",
        &with_x,
        &Limits::default(),
    )
    .unwrap();
    assert_eq!(accepted.relations, ["main.x"]);
    assert_refused(
        &catalog_of(&[], "db"),
        &[
            (
                "WITH RECURSIVE x AS (SELECT * FROM x) SELECT * FROM x",
                ErrorKind::UnknownName,
                "x",
            ),
            (
                "WITH RECURSIVE \"a.csv\" AS (SELECT * FROM \"a.csv\") SELECT * FROM \"a.csv\"",
                ErrorKind::PolicyBlocked,
                "a.csv",
            ),
            (
                "WITH RECURSIVE pg_settings AS (SELECT * FROM pg_settings) SELECT * FROM pg_settings",
                ErrorKind::PolicyBlocked,
                "pg_settings",
            ),
            (
                "WITH RECURSIVE duckdb_databases AS (SELECT * FROM duckdb_databases) SELECT 1",
                ErrorKind::PolicyBlocked,
                "duckdb_databases",
            ),
            (
                "WITH RECURSIVE duckdb_settings AS (SELECT * FROM duckdb_settings) SELECT 1",
                ErrorKind::UnknownName,
                "duckdb_settings",
            ),
            // Nor does a recursive CTE see itself in a nested WITH of a body without UNION.
            (
                "WITH RECURSIVE x AS (WITH y AS (SELECT * FROM x) SELECT * FROM y) SELECT * FROM x",
                ErrorKind::UnknownName,
                "x",
            ),
        ],
    );
}

#[test]
fn only_the_recursive_term_of_a_union_sees_the_cte_itself() {
    let none = catalog_of(&[], "db");
    for sql in [
        "WITH RECURSIVE x(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM x WHERE n < 3) SELECT * FROM x",
        "WITH RECURSIVE x(n) AS (SELECT 1 UNION SELECT n + 1 FROM x WHERE n < 3) SELECT * FROM x",
        "WITH RECURSIVE x(n) AS ((SELECT 1 UNION ALL SELECT n + 1 FROM x WHERE n < 3)) SELECT * FROM x",
        "WITH RECURSIVE x(n) AS (SELECT 1 UNION ALL (SELECT n + 1 FROM x)) SELECT * FROM x",
        "WITH RECURSIVE x(n) AS (SELECT 1 UNION ALL SELECT n FROM (SELECT * FROM x) WHERE n IN (SELECT n FROM x)) SELECT 1",
        "WITH RECURSIVE x(n) AS (SELECT 1 UNION ALL (WITH y AS (SELECT * FROM x) SELECT n + 1 FROM y)) SELECT * FROM x",
        "WITH RECURSIVE x(n) AS (WITH z AS (SELECT 1) SELECT * FROM z UNION ALL SELECT n + 1 FROM x) SELECT 1",
        "WITH RECURSIVE x(n) AS (SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT n + 1 FROM x) SELECT 1",
    ] {
        assert_eq!(kind_of(sql, &none), StatementKind::Query, "{sql}");
    }
    // The anchor, the left of a longer union, EXCEPT, INTERSECT and BY NAME bodies, and a plain
    // WITH: `x` there is what it means outside (here: nothing).
    assert_refused(
        &none,
        &[
            (
                "WITH RECURSIVE x(n) AS (SELECT * FROM x UNION ALL SELECT 1) SELECT * FROM x",
                ErrorKind::UnknownName,
                "x",
            ),
            (
                "WITH RECURSIVE x(n) AS (SELECT 1 UNION ALL SELECT n FROM x UNION ALL SELECT 7) SELECT 1",
                ErrorKind::UnknownName,
                "x",
            ),
            (
                "WITH RECURSIVE x(n) AS (SELECT 1 EXCEPT SELECT n FROM x) SELECT 1",
                ErrorKind::UnknownName,
                "x",
            ),
            (
                "WITH RECURSIVE x(n) AS (SELECT 1 INTERSECT SELECT n FROM x) SELECT 1",
                ErrorKind::UnknownName,
                "x",
            ),
            (
                "WITH RECURSIVE x(n) AS (SELECT 1 AS n UNION BY NAME SELECT n FROM x) SELECT 1",
                ErrorKind::UnknownName,
                "x",
            ),
            (
                "WITH RECURSIVE x(n) AS (SELECT 1 AS n UNION ALL BY NAME SELECT n FROM x) SELECT 1",
                ErrorKind::UnknownName,
                "x",
            ),
            (
                "WITH x AS (SELECT 1 AS n UNION ALL SELECT n FROM x) SELECT * FROM x",
                ErrorKind::UnknownName,
                "x",
            ),
            (
                "WITH RECURSIVE \"x.csv\"(n) AS (SELECT * FROM \"x.csv\" UNION ALL SELECT n FROM \"x.csv\") SELECT 1",
                ErrorKind::PolicyBlocked,
                "x.csv",
            ),
        ],
    );
    // With a catalog relation `x`, the anchor reads it.
    let accepted = validate_sql(
        "WITH RECURSIVE x(n) AS (SELECT a FROM x UNION ALL SELECT n + 1 FROM x WHERE n < 3) SELECT * FROM x",
        &catalog_of(&["x"], "db"),
        &Limits::default(),
    )
    .unwrap();
    assert_eq!(accepted.relations, ["main.x"]);
}

#[test]
fn a_cte_is_visible_to_later_ctes_and_the_body_but_not_to_earlier_ones() {
    let none = catalog_of(&[], "db");
    assert_eq!(
        kind_of(
            "WITH RECURSIVE a AS (SELECT 1 AS n), b AS (SELECT * FROM a) SELECT * FROM b",
            &none
        ),
        StatementKind::Query
    );
    assert_refused(
        &none,
        &[(
            "WITH RECURSIVE a AS (SELECT * FROM b), b AS (SELECT 1) SELECT * FROM a",
            ErrorKind::UnknownName,
            "b",
        )],
    );
    // Inside a nested `WITH x AS (SELECT * FROM x)`, `x` is the outer CTE.
    assert_eq!(
        kind_of(
            "WITH x AS (SELECT 1 AS n), y AS (WITH x AS (SELECT * FROM x) SELECT * FROM x) SELECT * FROM y",
            &none
        ),
        StatementKind::Query
    );
}

// ----- ASCII-only case folding ----------------------------------------------------------------

#[test]
fn a_cte_named_with_the_kelvin_sign_does_not_shadow_k() {
    let with_k = catalog_of(&["k"], "db");
    let accepted = validate_sql(
        "WITH \u{212A} AS (SELECT 1 AS x) SELECT * FROM k",
        &with_k,
        &Limits::default(),
    )
    .unwrap();
    assert_eq!(
        accepted.relations,
        ["main.k"],
        "k is the table, not the CTE"
    );
    // An ASCII `K` does shadow it.
    let shadowed = validate_sql(
        "WITH K AS (SELECT 1 AS x) SELECT * FROM k",
        &with_k,
        &Limits::default(),
    )
    .unwrap();
    assert!(shadowed.relations.is_empty());
    assert_refused(
        &catalog_of(&[], "db"),
        &[
            (
                "WITH \u{212A} AS (SELECT 1 AS x) SELECT * FROM k",
                ErrorKind::UnknownName,
                "k",
            ),
            (
                "WITH \"\u{212A}.csv\" AS (SELECT 1 AS x) SELECT * FROM \"k.csv\"",
                ErrorKind::PolicyBlocked,
                "k.csv",
            ),
            (
                "WITH RECURSIVE \"\u{212A}.csv\"(n) AS (SELECT 1 UNION ALL SELECT n FROM \"k.csv\") SELECT 1",
                ErrorKind::PolicyBlocked,
                "k.csv",
            ),
        ],
    );
    // Nor does the Kelvin sign find the relation `k`.
    assert_refused(
        &with_k,
        &[("SELECT * FROM \u{212A}", ErrorKind::UnknownName, "\u{212A}")],
    );
}

#[test]
fn function_names_fold_ascii_only() {
    // `chec\u{212A}point` is not DuckDB's `checkpoint` (which is denied); `CHECKPOINT` is.
    let accepted = run("SELECT chec\u{212A}point()").unwrap();
    assert_eq!(accepted.functions, ["chec\u{212A}point"]);
    assert_refused(
        &corpus::catalog(),
        &[
            (
                "SELECT CheckPoint()",
                ErrorKind::PolicyBlocked,
                "checkpoint",
            ),
            ("SELECT GETENV('HOME')", ErrorKind::PolicyBlocked, "getenv"),
        ],
    );
}

// ----- catalog-qualified names ----------------------------------------------------------------

#[test]
fn catalog_qualified_names_resolve_for_the_attached_database_only() {
    for (sql, relations) in [
        ("SELECT * FROM health.main.readings", vec!["main.readings"]),
        ("SELECT * FROM HEALTH.MAIN.READINGS", vec!["main.readings"]),
        (
            "SELECT * FROM health.analytics.hourly",
            vec!["analytics.hourly"],
        ),
        ("SELECT * FROM health.readings", vec!["main.readings"]),
        ("DESCRIBE health.main.readings", vec!["main.readings"]),
        ("SUMMARIZE health.main.readings", vec!["main.readings"]),
        (
            "SUMMARIZE SELECT * FROM health.main.devices",
            vec!["main.devices"],
        ),
    ] {
        assert_eq!(run(sql).unwrap().relations, relations, "{sql}");
    }
    assert_refused(
        &corpus::catalog(),
        &[
            (
                "SELECT * FROM memory.main.readings",
                ErrorKind::UnknownName,
                "memory.main.readings",
            ),
            (
                "SELECT * FROM system.main.readings",
                ErrorKind::UnknownName,
                "system.main.readings",
            ),
            (
                "SELECT * FROM temp.main.readings",
                ErrorKind::UnknownName,
                "temp.main.readings",
            ),
            (
                "SELECT * FROM other.main.readings",
                ErrorKind::UnknownName,
                "other.main.readings",
            ),
            (
                "SELECT * FROM health.analytics.readings",
                ErrorKind::UnknownName,
                "health.analytics.readings",
            ),
            (
                "SELECT * FROM health.main.\"x.csv\"",
                ErrorKind::PolicyBlocked,
                "health.main.\"x.csv\"",
            ),
        ],
    );
    // Without an attach name, no catalog-qualified name resolves.
    assert_refused(
        &catalog_of(&["t"], ""),
        &[(
            "SELECT * FROM db.main.t",
            ErrorKind::UnknownName,
            "db.main.t",
        )],
    );
    // The attach name folds ASCII-only too.
    let kcal = catalog_of(&["t"], "kcal");
    assert_eq!(
        kind_of("SELECT * FROM KCAL.main.t", &kcal),
        StatementKind::Query
    );
    assert_refused(
        &kcal,
        &[(
            "SELECT * FROM \u{212A}cal.main.t",
            ErrorKind::UnknownName,
            "\u{212A}cal.main.t",
        )],
    );
}

/// `cgm` (the default, `readings`, `devices`) and `pump` (`boluses`, `devices`).
fn two_databases() -> Catalog {
    let mut catalog = catalog_of(&["readings", "devices"], "cgm");
    catalog.other_databases = vec!["pump".into()];
    for name in ["boluses", "devices"] {
        let mut relation = relation(name, &["a", "b"]);
        relation.database = "pump".into();
        catalog.relations.push(relation);
    }
    catalog
}

#[test]
fn another_databases_relations_resolve_by_its_name_and_the_defaults_without_one() {
    let catalog = two_databases();
    for (sql, relations) in [
        ("SELECT * FROM readings", vec!["main.readings"]),
        ("SELECT * FROM cgm.main.readings", vec!["main.readings"]),
        ("SELECT * FROM devices", vec!["main.devices"]),
        ("SELECT * FROM pump.main.boluses", vec!["pump.main.boluses"]),
        ("SELECT * FROM PUMP.boluses", vec!["pump.main.boluses"]),
        ("SELECT * FROM pump.devices", vec!["pump.main.devices"]),
        (
            "SELECT * FROM readings r JOIN pump.boluses b USING (a)",
            vec!["main.readings", "pump.main.boluses"],
        ),
    ] {
        let accepted = validate_sql(sql, &catalog, &Limits::default()).unwrap();
        assert_eq!(accepted.relations, relations, "{sql}");
    }
    // The second database's tables are not the default's, and no other catalog resolves.
    let refused = refusal_of("SELECT * FROM boluses", &catalog);
    assert_eq!(refused.kind, ErrorKind::UnknownName);
    assert!(
        refused.suggestion.contains("pump.main.boluses"),
        "{refused:?}"
    );
    assert_refused(
        &catalog,
        &[
            (
                "SELECT * FROM pump.main.readings",
                ErrorKind::UnknownName,
                "pump.main.readings",
            ),
            (
                "SELECT * FROM other.main.boluses",
                ErrorKind::UnknownName,
                "other.main.boluses",
            ),
            (
                "SELECT * FROM memory.main.boluses",
                ErrorKind::UnknownName,
                "memory.main.boluses",
            ),
        ],
    );
}

#[test]
fn a_catalog_without_an_attach_name_still_deserializes() {
    let catalog: Catalog = serde_json::from_str(r#"{"relations": []}"#).unwrap();
    assert_eq!(catalog.database, "");
}

// ----- SHOW -----------------------------------------------------------------------------------

#[test]
fn show_of_a_relation_describes_it_and_of_anything_else_is_refused() {
    for (sql, relations) in [
        ("SHOW readings", vec!["main.readings"]),
        ("SHOW analytics.hourly", vec!["analytics.hourly"]),
        ("SHOW health.main.readings", vec!["main.readings"]),
    ] {
        let accepted = run(sql).unwrap();
        assert_eq!(accepted.kind, StatementKind::Show, "{sql}");
        assert_eq!(accepted.relations, relations, "{sql}");
    }
    assert_refused(
        &corpus::catalog(),
        &[
            ("SHOW threads", ErrorKind::PolicyBlocked, "SHOW threads"),
            (
                "SHOW memory_limit",
                ErrorKind::PolicyBlocked,
                "SHOW memory_limit",
            ),
            ("SHOW \"x.csv\"", ErrorKind::PolicyBlocked, "x.csv"),
            ("SHOW 'x.csv'", ErrorKind::PolicyBlocked, "x.csv"),
            ("SHOW databases", ErrorKind::PolicyBlocked, "SHOW DATABASES"),
        ],
    );
    // sqlparser reads `SHOW SELECT 1` as `SHOW SELECT`: left to the worker, not misjudged.
    assert_unparsed(
        &corpus::catalog(),
        &["SHOW SELECT glucose FROM readings", "SHOW FROM readings"],
    );
    // Under privacy rules, `SHOW t` of a relation with hidden columns describes it like any
    // other: the worker's shadow catalog shows only its visible columns.
    let accepted = validate_sql("SHOW devices", &private_catalog(), &Limits::default()).unwrap();
    assert_eq!(
        (accepted.kind, accepted.relations),
        (StatementKind::Show, vec!["main.devices".to_string()])
    );
}
