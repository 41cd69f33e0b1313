//! Hidden tables and columns (issue 6): every route to a hidden name is refused, and a hidden
//! column is refused exactly like one that does not exist.

use super::{Catalog, CatalogRelation, Policy, check, unknown_column};
use crate::error::ErrorKind;

/// What the gateway hands the validator for: `devices(device_id, model, [serial_number])`,
/// `readings(ts, glucose, device_id, [note])`, `events(id, kind)`; table `raw_payloads` hidden
/// (absent).
fn private_catalog() -> Catalog {
    let relation = |name: &str, columns: &[&str], hidden: &[&str]| CatalogRelation {
        schema: "main".into(),
        name: name.into(),
        columns: columns.iter().map(|c| c.to_string()).collect(),
        hidden_columns: hidden.iter().map(|c| c.to_string()).collect(),
    };
    Catalog {
        relations: vec![
            relation("devices", &["device_id", "model"], &["serial_number"]),
            relation("readings", &["ts", "glucose", "device_id"], &["note"]),
            relation("events", &["id", "kind"], &[]),
        ],
        restricted: true,
        database: "health".into(),
    }
}

fn run(sql: &str) -> Result<super::Accepted, super::Refusal> {
    check(sql, &private_catalog(), &Policy::default())
}

#[test]
fn visible_columns_and_count_star_are_accepted() {
    for sql in [
        "SELECT device_id, model FROM devices",
        "SELECT d.model, r.glucose FROM devices d JOIN readings r USING (device_id)",
        "SELECT count(*) FROM devices",
        "SELECT * FROM events",
        "SELECT e.* FROM events e",
        "SELECT glucose FROM readings ORDER BY 1",
        "SUMMARIZE events",
        "DESCRIBE events",
    ] {
        assert!(run(sql).is_ok(), "{sql}: {:?}", run(sql));
    }
}

#[test]
fn a_hidden_column_is_refused_exactly_like_an_unknown_one() {
    for (sql, name) in [
        ("SELECT serial_number FROM devices", "serial_number"),
        ("SELECT d.serial_number FROM devices d", "serial_number"),
        (
            "SELECT main.devices.SERIAL_NUMBER FROM devices",
            "SERIAL_NUMBER",
        ),
        (
            "SELECT model FROM devices WHERE serial_number LIKE 'A%'",
            "serial_number",
        ),
        (
            "SELECT model FROM devices ORDER BY serial_number",
            "serial_number",
        ),
        ("SELECT max(note) FROM readings", "note"),
        (
            "SELECT a.model FROM devices a JOIN devices b USING (serial_number)",
            "serial_number",
        ),
        ("SELECT (SELECT note FROM readings LIMIT 1)", "note"),
        (
            "SELECT list_transform([1], x -> note) FROM readings",
            "note",
        ),
    ] {
        let refusal = run(sql).unwrap_err();
        assert_eq!(refusal, unknown_column(name), "{sql}");
        assert_eq!(refusal.kind, ErrorKind::UnknownName);
    }
}

#[test]
fn a_hidden_table_is_an_unknown_table() {
    let hidden = run("SELECT * FROM raw_payloads").unwrap_err();
    let unknown = run("SELECT * FROM raw_payloadz").unwrap_err();
    assert_eq!(hidden.kind, ErrorKind::UnknownName);
    assert_eq!(
        hidden.message.replace("raw_payloads", "X"),
        unknown.message.replace("raw_payloadz", "X")
    );
}

#[test]
fn expansions_over_a_relation_with_hidden_columns_are_refused_with_the_visible_columns() {
    for sql in [
        "SELECT * FROM devices",
        "SELECT d.* FROM devices d",
        "SELECT devices.* FROM devices",
        "SELECT * EXCLUDE (model) FROM devices",
        "SELECT * REPLACE (1 AS model) FROM devices",
        "SELECT COLUMNS(*) FROM devices",
        "SELECT COLUMNS('serial.*') FROM devices",
        "SELECT max(COLUMNS(*)) FROM devices",
        "SELECT to_json(d) FROM devices d",
        "SELECT to_json(devices) FROM devices",
        "SELECT d FROM devices d",
        "SELECT struct_pack(d.*) FROM devices d",
        "SELECT row_to_json(r) FROM readings r",
        "SELECT * FROM events, devices",
        "SELECT * FROM (SELECT * FROM devices)",
        "WITH x AS (SELECT * FROM readings) SELECT glucose FROM x",
        "SELECT c FROM devices AS d(a, c, b)",
        "SELECT model FROM devices NATURAL JOIN readings",
        "SUMMARIZE devices",
        "SUMMARIZE SELECT * FROM devices",
        "DESCRIBE devices",
        "DESCRIBE SELECT * FROM devices",
        "FROM devices",
    ] {
        let refusal = run(sql).expect_err(sql);
        assert_eq!(refusal.kind, ErrorKind::PolicyBlocked, "{sql}: {refusal:?}");
        assert!(
            refusal.message.contains("device_id, model")
                || refusal.message.contains("ts, glucose, device_id"),
            "{sql}: the recovery lists the visible columns: {}",
            refusal.message
        );
        assert!(
            !refusal.message.contains("serial") && !refusal.message.contains("note"),
            "{sql}: {}",
            refusal.message
        );
    }
}

#[test]
fn catalog_listings_are_refused_while_privacy_rules_are_set() {
    for sql in [
        "SELECT * FROM information_schema.tables",
        "SELECT column_name FROM information_schema.columns",
        "SELECT table_name FROM duckdb_tables()",
        "SELECT column_name FROM duckdb_columns()",
        "SELECT * FROM duckdb_constraints()",
        "SELECT * FROM duckdb_indexes()",
        "SELECT * FROM duckdb_views()",
        "SHOW TABLES",
        "SHOW ALL TABLES",
    ] {
        let refusal = run(sql).unwrap_err();
        assert!(
            matches!(
                refusal.kind,
                ErrorKind::PolicyBlocked | ErrorKind::UnknownName
            ),
            "{sql}: {refusal:?}"
        );
    }
    // Positive control: the same listings pass without privacy rules.
    let open = Catalog {
        restricted: false,
        ..private_catalog()
    };
    for sql in ["SELECT table_name FROM duckdb_tables()", "SHOW TABLES"] {
        assert!(check(sql, &open, &Policy::default()).is_ok(), "{sql}");
    }
}

#[test]
fn positional_column_references_over_a_relation_with_hidden_columns_are_refused() {
    // DuckDB's `#n` picks the n-th column of the FROM clause, hidden ones included.
    for sql in ["SELECT #2 FROM devices", "SELECT #1 FROM readings"] {
        assert!(run(sql).is_err(), "{sql}: {:?}", run(sql));
    }
}
