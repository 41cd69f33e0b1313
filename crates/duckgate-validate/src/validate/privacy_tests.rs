//! Hidden tables and columns, as the parent sees them: not at all. The gateway hands
//! the validator a catalog with hidden tables and hidden columns removed, and the worker runs
//! the query against a shadow catalog in which they do not exist either. So the parent treats a
//! hidden name like any other name: a hidden table is refused exactly like a made-up one, a
//! hidden column's name is answered like any other name, and expansions (`*`, `t.*`, whole
//! rows, …) over a relation with hidden columns are accepted (they expand to the visible columns
//! in the worker). Only catalog listings stay refused under privacy rules, whatever they name.

use super::{Accepted, Catalog, CatalogRelation, Limits, Refusal, validate_sql};
use crate::error::ErrorKind;

/// The hidden columns of the database behind [`private_catalog`] (`devices.serial_number`,
/// `readings.note`).
const HIDDEN_COLUMNS: [&str; 2] = ["serial_number", "note"];

/// The hidden table of the database behind [`private_catalog`].
const HIDDEN_TABLE: &str = "raw_payloads";

/// What the gateway hands the validator for the tables `devices(device_id, model,
/// serial_number)`, `readings(ts, glucose, device_id, note)`, `events(id, kind)` and
/// `raw_payloads(...)`, with `serial_number`, `note` and `raw_payloads` hidden: the hidden names
/// are simply absent.
fn private_catalog() -> Catalog {
    let relation = |name: &str, columns: &[&str]| CatalogRelation {
        database: String::new(),
        schema: "main".into(),
        name: name.into(),
        columns: columns.iter().map(|c| c.to_string()).collect(),
    };
    Catalog {
        relations: vec![
            relation("devices", &["device_id", "model"]),
            relation("readings", &["ts", "glucose", "device_id"]),
            relation("events", &["id", "kind"]),
        ],
        restricted: true,
        database: "health".into(),
        other_databases: Vec::new(),
        table_macros: None,
        folders: Vec::new(),
    }
}

fn run(sql: &str) -> Result<Accepted, Refusal> {
    validate_sql(sql, &private_catalog(), &Limits::default())
}

/// `outcome` with every `from` in its text replaced by `to`.
fn substituted(
    outcome: Result<Accepted, Refusal>,
    from: &str,
    to: &str,
) -> Result<Accepted, Refusal> {
    let swap = |text: &str| text.replace(from, to);
    match outcome {
        Ok(accepted) => Ok(Accepted {
            relations: accepted.relations.iter().map(|r| swap(r)).collect(),
            functions: accepted.functions.iter().map(|f| swap(f)).collect(),
            ..accepted
        }),
        Err(refusal) => Err(Refusal {
            kind: refusal.kind,
            message: swap(&refusal.message),
            construct: swap(&refusal.construct),
            suggestion: swap(&refusal.suggestion),
            missing: None,
        }),
    }
}

/// For each template (`{}` marks the name), the outcome with `hidden` in it equals the outcome
/// with `made_up` (a name of the same length that exists nowhere) once the names are swapped:
/// same acceptance, same kind, same message, construct and suggestion.
fn assert_indistinguishable(templates: &[&str], hidden: &str, made_up: &str) {
    assert_eq!(hidden.len(), made_up.len());
    for template in templates {
        let with_hidden = template.replace("{}", hidden);
        let with_made_up = template.replace("{}", made_up);
        assert_eq!(
            substituted(run(&with_hidden), hidden, made_up),
            run(&with_made_up),
            "{with_hidden} vs {with_made_up}"
        );
    }
}

#[test]
fn a_hidden_table_name_is_refused_exactly_like_a_made_up_name_of_the_same_length() {
    let made_up = "xyz_payloads";
    assert_eq!(HIDDEN_TABLE.len(), made_up.len());
    // The comparison below is not vacuous: the plain read is refused as an unknown name.
    let refusal = run(&format!("SELECT * FROM {HIDDEN_TABLE}")).unwrap_err();
    assert_eq!(refusal.kind, ErrorKind::UnknownName);
    assert!(
        refusal.message.contains(HIDDEN_TABLE),
        "{}",
        refusal.message
    );
    let templates = [
        "SELECT * FROM {}",
        "SELECT id FROM {}",
        "SELECT 1 FROM main.{}",
        "SELECT 1 FROM health.main.{}",
        "SELECT 1 FROM health.{}",
        "SELECT e.id FROM events e JOIN {} p ON p.id = e.id",
        "SELECT id FROM events WHERE id IN (SELECT id FROM {})",
        "WITH x AS (SELECT * FROM {}) SELECT 1 FROM x",
        "TABLE {}",
        "FROM {}",
        "DESCRIBE {}",
        "SUMMARIZE {}",
        "SHOW {}",
        "SELECT count(*) FROM {}",
        // Unparsed by sqlparser: both go on to the worker, where neither exists.
        "SELECT * FROM {} USING SAMPLE 1",
        // A name the statement defines itself is answered the same way too.
        "WITH {} AS (SELECT 1 AS id) SELECT id FROM {}",
        "SELECT {}.id FROM events AS {}",
    ];
    assert_indistinguishable(&templates, HIDDEN_TABLE, made_up);
    assert_indistinguishable(&templates, "RAW_PAYLOADS", "XYZ_PAYLOADS");
}

#[test]
fn a_hidden_column_name_is_answered_exactly_like_a_made_up_name_of_the_same_length() {
    let templates = [
        // A sub-query alias named like a hidden column.
        "SELECT {} FROM (SELECT 1 AS {}) t",
        "SELECT t.{} FROM (SELECT 1 AS {}) t",
        "SELECT 1 AS {}",
        "SELECT model AS {} FROM devices",
        "WITH x({}) AS (SELECT 1) SELECT {} FROM x",
        "SELECT list_transform([1], {} -> {} + 1)",
        "SELECT {} FROM devices AS d({})",
        // A reference to the hidden column itself: the worker's DuckDB does not find it, in
        // the shadow catalog, any more than a made-up one.
        "SELECT {} FROM devices",
        "SELECT d.{} FROM devices d",
        "SELECT model FROM devices WHERE {} LIKE 'A%'",
        "SELECT model FROM devices ORDER BY {}",
        "SELECT max({}) FROM readings",
        "SELECT a.model FROM devices a JOIN devices b USING ({})",
        "SELECT (SELECT {} FROM readings LIMIT 1)",
        "SELECT count(*) FILTER ({} > 'a') FROM devices",
    ];
    let [serial_number, note] = HIDDEN_COLUMNS;
    assert_indistinguishable(&templates, serial_number, "serial_numbez");
    assert_indistinguishable(&templates, note, "nope");
    assert_indistinguishable(&templates, "SERIAL_NUMBER", "SERIAL_NUMBEZ");
    // And the parent accepts them all: which names exist is the worker's to say.
    for template in templates {
        let sql = template.replace("{}", serial_number);
        assert!(run(&sql).is_ok(), "{sql}: {:?}", run(&sql));
    }
}

#[test]
fn expansions_and_whole_rows_over_a_relation_with_hidden_columns_are_accepted() {
    // The worker's shadow catalog makes `devices` a view of its visible columns: every
    // expansion yields those and nothing else.
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
        "SELECT c FROM devices AS d(a, c)",
        "SELECT model FROM devices NATURAL JOIN readings",
        "SELECT d.model, r.glucose FROM devices d JOIN readings r USING (device_id)",
        "SELECT count(*) FROM devices",
        "SELECT #2 FROM devices",
        "SUMMARIZE devices",
        "SUMMARIZE SELECT * FROM devices",
        "DESCRIBE devices",
        "DESCRIBE SELECT * FROM devices",
        "SHOW devices",
        "FROM devices",
        "FROM health.main.devices",
        "PIVOT devices ON model IN ('a') USING count(*)",
        "UNPIVOT readings ON glucose INTO NAME k VALUE v",
    ] {
        assert!(run(sql).is_ok(), "{sql}: {:?}", run(sql));
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
        assert!(
            validate_sql(sql, &open, &Limits::default()).is_ok(),
            "{sql}"
        );
    }
}
