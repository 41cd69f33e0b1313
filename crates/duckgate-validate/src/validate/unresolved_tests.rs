//! [`validate_sql_without_catalog`](super::validate_sql_without_catalog): the validator without the database's catalog
//! takes table names on trust and applies every other rule.

use super::{Catalog, Limits, StatementKind, validate_sql, validate_sql_without_catalog};
use crate::error::{ErrorKind, messages};

fn unresolved(sql: &str) -> Result<(super::Accepted, Vec<String>), super::Refusal> {
    validate_sql_without_catalog(sql, &Limits::default())
}

#[test]
fn table_names_are_taken_on_trust_and_listed_as_unchecked() {
    let (accepted, assumed) =
        unresolved("SELECT r.glucose, e.kind FROM readings r JOIN events e ON e.reading_id = r.id")
            .unwrap();
    assert_eq!(accepted.kind, StatementKind::Query);
    assert_eq!(assumed, vec!["readings".to_string(), "events".to_string()]);
    assert_eq!(accepted.relations, vec!["main.readings", "main.events"]);
    // The same SQL against an empty catalog is what `check` refuses: the trust is this
    // function's alone.
    let refused = validate_sql(
        "SELECT * FROM readings",
        &Catalog::default(),
        &Limits::default(),
    )
    .unwrap_err();
    assert_eq!(refused.kind, ErrorKind::UnknownName);
}

#[test]
fn schema_and_database_qualified_names_are_taken_on_trust() {
    let (_, assumed) = unresolved("SELECT * FROM analytics.hourly").unwrap();
    assert_eq!(assumed, vec!["analytics.hourly".to_string()]);
    let (accepted, assumed) =
        unresolved("SELECT * FROM health.main.readings JOIN health.main.events USING (id)")
            .unwrap();
    assert_eq!(assumed.len(), 2, "{assumed:?}");
    assert_eq!(accepted.relations, vec!["main.readings", "main.events"]);
    let (_, assumed) = unresolved(r#"SELECT * FROM "odd ""name""#).unwrap();
    assert_eq!(assumed.len(), 1, "{assumed:?}");
}

#[test]
fn ctes_and_queries_without_tables_take_nothing_on_trust() {
    for sql in [
        "SELECT 1",
        "WITH x AS (SELECT 1 AS a) SELECT a FROM x",
        "SELECT * FROM range(3)",
    ] {
        let (_, assumed) = unresolved(sql).unwrap();
        assert!(assumed.is_empty(), "{sql}: {assumed:?}");
    }
}

#[test]
fn every_other_rule_still_refuses_beside_names_taken_on_trust() {
    // The unknown table comes first, so the refusal after it is found only once it is trusted.
    let r = unresolved("SELECT * FROM readings, read_text('/etc/passwd')").unwrap_err();
    assert_eq!(r.kind, ErrorKind::PolicyBlocked, "{r:?}");
    assert!(r.message.contains("read_text"), "{r:?}");
    let r = unresolved("DELETE FROM readings").unwrap_err();
    assert_eq!(r.message, messages::WRITE_REFUSED);
    let r = unresolved("SELECT * FROM 'data.csv'").unwrap_err();
    assert_eq!(r.kind, ErrorKind::PolicyBlocked, "{r:?}");
    let r = unresolved("SELECT * FROM readings; SELECT 2").unwrap_err();
    assert_eq!(r.kind, ErrorKind::MultipleStatements);
    let r = unresolved("SELECT * FROM duckdb_settings()").unwrap_err();
    assert_eq!(r.kind, ErrorKind::PolicyBlocked, "{r:?}");
}

#[test]
fn duckdbs_own_catalogs_and_a_second_database_are_not_taken_on_trust() {
    for sql in [
        "SELECT * FROM system.main.anything",
        "SELECT * FROM temp.main.t",
        "SELECT * FROM memory.main.t",
        "SELECT * FROM a.main.t, b.main.u",
        "SELECT * FROM a.b.c.d",
    ] {
        let r = unresolved(sql).unwrap_err();
        assert_eq!(r.kind, ErrorKind::UnknownName, "{sql}: {r:?}");
    }
}
