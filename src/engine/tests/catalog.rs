//! The catalog a worker reads: comments, keys, indexes, views, and nothing of DuckDB's own
//! catalogs.

use super::*;

#[test]
fn catalog_reports_comments_keys_indexes_and_views() {
    let dir = TempDir::new("catalog");
    let db = make_db(
        &dir,
        "clinic.duckdb",
        "CREATE TABLE patients (id INTEGER PRIMARY KEY, email VARCHAR UNIQUE, \
                                name VARCHAR NOT NULL, ward VARCHAR DEFAULT 'general');
         CREATE TABLE visits (visit_id INTEGER, patient_id INTEGER REFERENCES patients (id), \
                              visited_at TIMESTAMP, PRIMARY KEY (visit_id));
         CREATE INDEX visits_at ON visits (visited_at);
         CREATE VIEW recent AS SELECT * FROM visits WHERE visited_at > TIMESTAMP '2024-01-01';
         COMMENT ON TABLE patients IS 'People we treat';
         COMMENT ON COLUMN patients.email IS 'Contact address';
         COMMENT ON VIEW recent IS 'Visits this year';
         INSERT INTO patients VALUES (1, 'a@x', 'A', DEFAULT), (2, 'b@x', 'B', 'icu');
         INSERT INTO visits VALUES (10, 1, TIMESTAMP '2024-02-01'), (11, 2, TIMESTAMP '2023-02-01');",
    );
    let mut engine = attached(&db, "256MB");
    assert_eq!(engine.alias(), Some("clinic"));
    let cat = engine.catalog().unwrap();
    let names: Vec<(&str, &str)> = cat
        .tables
        .iter()
        .map(|t| (t.name.as_str(), t.kind.as_str()))
        .collect();
    assert_eq!(
        names,
        vec![
            ("patients", "table"),
            ("visits", "table"),
            ("recent", "view")
        ]
    );

    let patients = &cat.tables[0];
    assert_eq!(patients.schema, "main");
    assert_eq!(patients.description.as_deref(), Some("People we treat"));
    assert_eq!(patients.estimated_rows, Some(2));
    let cols: Vec<&str> = patients.columns.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(cols, vec!["id", "email", "name", "ward"]);
    let id = &patients.columns[0];
    assert!(id.primary_key && id.unique && !id.nullable, "{id:?}");
    assert_eq!(id.data_type, "INTEGER");
    let email = &patients.columns[1];
    assert!(
        email.unique && !email.primary_key && email.nullable,
        "{email:?}"
    );
    assert_eq!(email.comment.as_deref(), Some("Contact address"));
    assert!(!patients.columns[2].nullable);
    assert_eq!(patients.columns[3].default.as_deref(), Some("'general'"));

    let visits = &cat.tables[1];
    let patient_id = visits
        .columns
        .iter()
        .find(|c| c.name == "patient_id")
        .unwrap();
    assert_eq!(
        patient_id.references,
        Some(crate::protocol::ColumnReference {
            table: "patients".into(),
            column: "id".into()
        })
    );
    assert!(visits.columns[0].primary_key);
    assert_eq!(visits.indexes.len(), 1);
    assert_eq!(visits.indexes[0].name, "visits_at");
    assert!(!visits.indexes[0].unique);
    assert!(
        visits.indexes[0]
            .sql
            .as_deref()
            .unwrap_or("")
            .contains("CREATE INDEX")
    );

    let recent = &cat.tables[2];
    assert_eq!(recent.description.as_deref(), Some("Visits this year"));
    assert_eq!(recent.estimated_rows, None);
    assert_eq!(recent.columns.len(), 3);

    assert_eq!(cat.foreign_keys.len(), 1);
    let fk = &cat.foreign_keys[0];
    assert_eq!(
        (
            fk.table.as_str(),
            fk.columns.clone(),
            fk.referenced_table.as_str(),
            fk.referenced_columns.clone()
        ),
        (
            "visits",
            vec!["patient_id".to_string()],
            "patients",
            vec!["id".to_string()]
        )
    );
}

#[test]
fn catalog_leaves_out_the_in_memory_and_system_catalogs() {
    let dir = TempDir::new("catalog-scope");
    let db = small_db(&dir);
    let mut engine = attached(&db, "256MB");
    let cat = engine.catalog().unwrap();
    assert_eq!(cat.tables.len(), 1);
    assert_eq!(cat.tables[0].name, "t");
}
