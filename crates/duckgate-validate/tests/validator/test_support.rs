//! Helpers the validator's test files share: catalogs to check against, and assertions on a
//! verdict.

use duckgate_test_kit::corpus;
use duckgate_validate::error::ErrorKind;
use duckgate_validate::validate::{
    Accepted, Catalog, CatalogRelation, Limits, Refusal, StatementKind, validate_sql,
};

pub(crate) fn run(sql: &str) -> Result<Accepted, Refusal> {
    validate_sql(sql, &corpus::catalog(), &Limits::default())
}

pub(crate) fn relation(name: &str, columns: &[&str]) -> CatalogRelation {
    CatalogRelation {
        database: String::new(),
        schema: "main".into(),
        name: name.into(),
        columns: columns.iter().map(|c| c.to_string()).collect(),
    }
}

/// A catalog of plain tables `names` (columns `a`, `b`), attached as `database`.
pub(crate) fn catalog_of(names: &[&str], database: &str) -> Catalog {
    Catalog {
        relations: names.iter().map(|n| relation(n, &["a", "b"])).collect(),
        restricted: false,
        database: database.into(),
        other_databases: Vec::new(),
        table_macros: None,
        folders: Vec::new(),
    }
}

/// What the gateway hands the validator under privacy rules for `devices(device_id, model,
/// serial_number)` with `serial_number` hidden, and `events(id, kind)`: the hidden column is
/// simply absent.
pub(crate) fn private_catalog() -> Catalog {
    Catalog {
        relations: vec![
            relation("devices", &["device_id", "model"]),
            relation("events", &["id", "kind"]),
        ],
        restricted: true,
        database: "health".into(),
        other_databases: Vec::new(),
        table_macros: None,
        folders: Vec::new(),
    }
}

pub(crate) fn kind_of(sql: &str, catalog: &Catalog) -> StatementKind {
    match validate_sql(sql, catalog, &Limits::default()) {
        Ok(accepted) => accepted.kind,
        Err(refusal) => panic!("refused {sql:?}: {refusal:?}"),
    }
}

pub(crate) fn refusal_of(sql: &str, catalog: &Catalog) -> Refusal {
    match validate_sql(sql, catalog, &Limits::default()) {
        Ok(accepted) => panic!("accepted {sql:?}: {accepted:?}"),
        Err(refusal) => refusal,
    }
}

/// Each `(sql, kind, construct)` is refused with that kind, naming that construct.
pub(crate) fn assert_refused(catalog: &Catalog, cases: &[(&str, ErrorKind, &str)]) {
    for (sql, kind, construct) in cases {
        let refusal = refusal_of(sql, catalog);
        assert_eq!(
            (refusal.kind, refusal.construct.as_str()),
            (*kind, *construct),
            "{sql}: {refusal:?}"
        );
    }
}

/// Each `sql` is accepted as [`StatementKind::Unparsed`].
pub(crate) fn assert_unparsed(catalog: &Catalog, cases: &[&str]) {
    for sql in cases {
        assert_eq!(kind_of(sql, catalog), StatementKind::Unparsed, "{sql}");
    }
}
