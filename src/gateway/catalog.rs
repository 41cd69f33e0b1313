//! The catalog as the parent keeps it: every database's, read through a worker, cached until a
//! database file changes, and stripped of everything the privacy rules hide before any tool,
//! resource or the validator sees it.

use std::os::unix::fs::MetadataExt;
use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use super::{Failure, Gateway, unexpected};
use crate::privacy::PrivacyPolicy;
use crate::privacy::ViewColumnReads;
use crate::protocol::databases::{Databases, wal_path};
use crate::protocol::{CatalogSnapshot, RelationKind, Request, Response};
use duckgate_validate::validate;

/// One database file's identity: the cached catalog is good while every one is unchanged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct DbStamp {
    ino: u64,
    size: u64,
    mtime_ns: i128,
    wal: Option<(u64, u64, i128)>,
}

fn stamp(path: &std::path::Path) -> Option<DbStamp> {
    let m = std::fs::metadata(path).ok()?;
    let mtime = |m: &std::fs::Metadata| m.mtime() as i128 * 1_000_000_000 + m.mtime_nsec() as i128;
    let wal = std::fs::metadata(wal_path(path))
        .ok()
        .map(|w| (w.ino(), w.size(), mtime(&w)));
    Some(DbStamp {
        ino: m.ino(),
        size: m.size(),
        mtime_ns: mtime(&m),
        wal,
    })
}

/// The catalog as of one [`DbStamp`] per database, in both forms.
#[derive(Debug)]
pub(super) struct CachedCatalog {
    stamp: Vec<DbStamp>,
    snapshot: Arc<CatalogSnapshot>,
    for_validator: Arc<validate::Catalog>,
}

/// Largest catalog reply accepted from a worker.
const MAX_CATALOG_REPLY_BYTES: usize = 32 * 1024 * 1024;

impl Gateway {
    /// The catalog of every database, cached until a database file changes (size, mtime or
    /// inode).
    pub async fn catalog(&self) -> Result<Arc<CatalogSnapshot>, Failure> {
        Ok(self.catalogs().await?.0)
    }

    pub(super) async fn catalogs(
        &self,
    ) -> Result<(Arc<CatalogSnapshot>, Arc<validate::Catalog>), Failure> {
        let databases = &self.inner.config.databases;
        let now: Option<Vec<DbStamp>> = databases.iter().map(|d| stamp(&d.path)).collect();
        let Some(now) = now else {
            let missing = databases
                .iter()
                .find(|d| stamp(&d.path).is_none())
                .unwrap_or(databases.default_database());
            return Err(self
                .database_unavailable()
                .unwrap_or_else(|| self.database_not_found(missing)));
        };
        let mut cache = self.inner.catalog.lock().await;
        if let Some(c) = cache.as_ref().filter(|c| c.stamp == now) {
            return Ok((Arc::clone(&c.snapshot), Arc::clone(&c.for_validator)));
        }
        let response = self
            .run(
                &Request::Catalog {
                    privacy: self.inner.config.privacy.clone(),
                },
                &CancellationToken::new(),
                MAX_CATALOG_REPLY_BYTES,
            )
            .await?;
        let Response::Catalog(snapshot) = response else {
            return Err(unexpected(&response));
        };
        let (snapshot, _) = without_hidden(snapshot, &self.inner.config.privacy);
        let mut for_validator = validator_catalog(&snapshot, databases);
        for_validator.restricted = !self.inner.config.privacy.is_empty();
        for_validator.folders = self
            .inner
            .config
            .files
            .iter()
            .map(|(name, _)| name.clone())
            .collect();
        let for_validator = Arc::new(for_validator);
        let snapshot = Arc::new(snapshot);
        *cache = Some(CachedCatalog {
            stamp: now,
            snapshot: Arc::clone(&snapshot),
            for_validator: Arc::clone(&for_validator),
        });
        Ok((snapshot, for_validator))
    }
}

/// The validator's view of the catalog: names only, each relation with its database's catalog
/// name (`databases`: what workers attach each database as, the default first).
pub fn validator_catalog(snapshot: &CatalogSnapshot, databases: &Databases) -> validate::Catalog {
    let default = databases.default_database().name.clone();
    validate::Catalog {
        relations: snapshot
            .tables
            .iter()
            .map(|t| validate::CatalogRelation {
                database: t.database.clone(),
                schema: t.schema.clone(),
                name: t.name.clone(),
                columns: t.columns.iter().map(|c| c.name.clone()).collect(),
            })
            .collect(),
        restricted: false,
        other_databases: databases.iter().skip(1).map(|d| d.name.clone()).collect(),
        database: default,
        table_macros: Some(snapshot.table_macros.clone()),
        folders: Vec::new(),
    }
}

/// Hidden columns of the tables that stay visible, by `(database, schema, table)`.
type HiddenColumns = std::collections::HashMap<(String, String, String), Vec<String>>;

/// A relation's key in [`HiddenColumns`]-like maps: lower case, as names are compared.
fn key(database: &str, schema: &str, table: &str) -> (String, String, String) {
    (
        database.to_lowercase(),
        schema.to_lowercase(),
        table.to_lowercase(),
    )
}

/// `snapshot` as the agent may see it: hidden tables gone, hidden columns gone, and every
/// foreign key, column reference and index that names something hidden gone with them. Also
/// returns the hidden columns of each visible table, for the validator to refuse expansions.
/// Every decision is taken per database: a rule with a database's name applies to that
/// database only, one without to every database (`crate::privacy`).
pub fn without_hidden(
    mut snapshot: CatalogSnapshot,
    policy: &PrivacyPolicy,
) -> (CatalogSnapshot, HiddenColumns) {
    let mut hidden = HiddenColumns::new();
    if !policy.is_empty() {
        // The worker's shadow catalog has no copy of them: under rules they do not exist.
        snapshot.table_macros.clear();
    }
    if policy.is_empty() {
        forget_default_reads(&mut snapshot);
        return (snapshot, hidden);
    }
    // Hidden tables by (database, name).
    let hidden_tables: Vec<(String, String)> = snapshot
        .tables
        .iter()
        .filter(|t| policy.hides_table(&t.database, &t.schema, &t.name))
        .map(|t| (t.database.to_lowercase(), t.name.to_lowercase()))
        .collect();
    snapshot
        .tables
        .retain(|t| !policy.hides_table(&t.database, &t.schema, &t.name));
    // Foreign keys and `references` name tables without their schema, within one database; a
    // name that is hidden in any schema of that database is treated as hidden (conservative).
    let table_hidden = |database: &str, name: &str| {
        hidden_tables.contains(&(database.to_lowercase(), name.to_lowercase()))
    };
    let column_hidden = |database: &str, table: &str, column: &str| {
        table_hidden(database, table)
            || snapshot.tables.iter().any(|t| {
                t.database.eq_ignore_ascii_case(database)
                    && t.name.eq_ignore_ascii_case(table)
                    && policy.hides_column((&t.database, &t.schema, &t.name), column)
            })
    };
    let foreign_keys: Vec<_> = snapshot
        .foreign_keys
        .iter()
        .filter(|fk| {
            !fk.columns
                .iter()
                .any(|c| column_hidden(&fk.database, &fk.table, c))
                && !fk
                    .referenced_columns
                    .iter()
                    .any(|c| column_hidden(&fk.database, &fk.referenced_table, c))
        })
        .cloned()
        .collect();
    let mut dangling_references = Vec::new();
    for table in &snapshot.tables {
        for column in &table.columns {
            if let Some(target) = &column.references
                && column_hidden(&table.database, &target.table, &target.column)
            {
                dangling_references.push((
                    key(&table.database, &table.schema, &table.name),
                    column.name.clone(),
                ));
            }
        }
    }
    // The hidden columns of each stored table first: a view's column is hidden when what
    // DuckDB's plan of it reads is (`ColumnInfo::view_reads`).
    let table_hidden_columns: HiddenColumns = snapshot
        .tables
        .iter()
        .filter(|t| t.kind == RelationKind::Table)
        .map(|t| {
            let columns: Vec<(&str, Option<&[String]>)> = t
                .columns
                .iter()
                .map(|c| (c.name.as_str(), c.default_reads.as_deref()))
                .collect();
            let hidden = policy.hidden_columns((&t.database, &t.schema, &t.name), &columns);
            (key(&t.database, &t.schema, &t.name), hidden)
        })
        .collect();
    let hidden_of = |database: &str, schema: &str, table: &str| {
        table_hidden_columns
            .get(&key(database, schema, table))
            .map(Vec::as_slice)
    };
    let mut emptied = Vec::new();
    for table in &mut snapshot.tables {
        let (database, schema, name) = (
            table.database.clone(),
            table.schema.clone(),
            table.name.clone(),
        );
        let columns: Vec<(&str, Option<&[String]>)> = table
            .columns
            .iter()
            .map(|c| (c.name.as_str(), c.default_reads.as_deref()))
            .collect();
        let mut hidden_here = policy.hidden_columns((&database, &schema, &name), &columns);
        if table.kind == RelationKind::View {
            for column in &table.columns {
                let reads = column.view_reads.as_ref().and_then(ViewColumnReads::reads);
                if !hidden_here.contains(&column.name)
                    && policy.view_column_hidden(reads, hidden_of)
                {
                    hidden_here.push(column.name.clone());
                }
            }
        }
        if hidden_here.is_empty() {
            continue;
        }
        table.columns.retain(|c| !hidden_here.contains(&c.name));
        // A relation whose every column is hidden does not exist, as in the worker's shadow.
        if table.columns.is_empty() {
            emptied.push(key(&database, &schema, &name));
        }
        // An index definition names its columns; drop any that names a hidden one.
        table.indexes.retain(|index| {
            let sql = index.sql.as_deref().unwrap_or("").to_lowercase();
            !hidden_here.iter().any(|c| sql.contains(&c.to_lowercase()))
        });
        hidden.insert((database, schema, name), hidden_here);
    }
    for table in &mut snapshot.tables {
        let here = key(&table.database, &table.schema, &table.name);
        for column in &mut table.columns {
            if dangling_references
                .iter()
                .any(|(relation, c)| *relation == here && *c == column.name)
            {
                column.references = None;
            }
        }
    }
    snapshot
        .tables
        .retain(|t| !emptied.contains(&key(&t.database, &t.schema, &t.name)));
    snapshot.foreign_keys = foreign_keys;
    forget_default_reads(&mut snapshot);
    (snapshot, hidden)
}

/// What each default reads is for [`without_hidden`] only; no tool shows it.
fn forget_default_reads(snapshot: &mut CatalogSnapshot) {
    for column in snapshot
        .tables
        .iter_mut()
        .flat_map(|t| t.columns.iter_mut())
    {
        column.default_reads = None;
        column.view_reads = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{ColumnInfo, ColumnReference, RelationKind, TableInfo};

    fn column(name: &str, references: Option<ColumnReference>) -> ColumnInfo {
        ColumnInfo {
            name: name.into(),
            data_type: "VARCHAR".into(),
            nullable: true,
            default: None,
            primary_key: false,
            unique: false,
            references,
            default_reads: Some(Vec::new()),
            view_reads: None,
            comment: None,
        }
    }

    fn table(name: &str, columns: Vec<ColumnInfo>) -> TableInfo {
        TableInfo {
            database: "health".into(),
            schema: "main".into(),
            name: name.into(),
            kind: RelationKind::Table,
            description: None,
            estimated_rows: None,
            columns,
            indexes: vec![],
        }
    }

    fn reference(table: &str, column: &str) -> Option<ColumnReference> {
        Some(ColumnReference {
            table: table.into(),
            column: column.into(),
        })
    }

    /// `devices ("serial.no", model)`, `"devices.serial" (no)` and `pumps (a → devices."serial.no",
    /// b → devices.model, c → "devices.serial".no)`, as the parent reads it from a worker's reply.
    fn catalog_through_the_wire() -> CatalogSnapshot {
        let sent = CatalogSnapshot {
            databases: vec!["health".into(), "pump".into()],
            tables: vec![
                table(
                    "devices",
                    vec![column("serial.no", None), column("model", None)],
                ),
                table("devices.serial", vec![column("no", None)]),
                table(
                    "pumps",
                    vec![
                        column("a", reference("devices", "serial.no")),
                        column("b", reference("devices", "model")),
                        column("c", reference("devices.serial", "no")),
                    ],
                ),
            ],
            foreign_keys: vec![],
            table_macros: vec![],
        };
        let wire = serde_json::to_string(&sent).unwrap();
        serde_json::from_str(&wire).unwrap()
    }

    /// Names with dots in them: a reference reaches the parent as the pair the worker sent, and
    /// is dropped when the column it names is hidden, not when another split of its joined text
    /// (`devices.serial.no`) would name a hidden one.
    #[test]
    fn a_reference_is_checked_as_the_table_and_column_it_names_even_with_dots_in_them() {
        let read = catalog_through_the_wire();
        let pumps = &read.tables[2];
        assert_eq!(
            pumps.columns[0].references,
            reference("devices", "serial.no")
        );
        assert_eq!(
            pumps.columns[2].references,
            reference("devices.serial", "no")
        );
        let policy = PrivacyPolicy {
            hide_tables: vec!["devices".into()],
            hide_columns: vec![],
        };
        let (visible, _) = without_hidden(read, &policy);
        let names: Vec<&str> = visible.tables.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["devices.serial", "pumps"]);
        let pumps = &visible.tables[1];
        assert_eq!(pumps.columns[0].references, None);
        assert_eq!(pumps.columns[1].references, None);
        assert_eq!(
            pumps.columns[2].references,
            reference("devices.serial", "no")
        );
    }

    /// A hidden column whose name holds a dot: the reference to it is dropped, the one to its
    /// visible neighbour stays.
    #[test]
    fn a_reference_to_a_hidden_column_with_a_dot_in_its_name_is_dropped() {
        let policy = PrivacyPolicy {
            hide_tables: vec![],
            hide_columns: vec!["devices.serial.no".into()],
        };
        let (visible, _) = without_hidden(catalog_through_the_wire(), &policy);
        let pumps = visible.tables.iter().find(|t| t.name == "pumps").unwrap();
        assert_eq!(pumps.columns[0].references, None);
        assert_eq!(pumps.columns[1].references, reference("devices", "model"));
        let devices = visible.tables.iter().find(|t| t.name == "devices").unwrap();
        let names: Vec<&str> = devices.columns.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["model"]);
    }

    /// A visible column generated from a hidden one (`length(serial_number)`) would show the
    /// hidden name in its expression and values computed from hidden data: it is hidden too,
    /// through the worker's wire form, and what a default reads is never passed on.
    #[test]
    fn a_column_generated_from_a_hidden_one_is_hidden_and_no_default_reads_are_shown() {
        let mut generated = column("serial_length", None);
        generated.default = Some("CAST(length(serial_number) AS INTEGER)".into());
        generated.default_reads = Some(vec!["serial_number".into()]);
        let mut constant = column("source", None);
        constant.default = Some("'pump'".into());
        let sent = CatalogSnapshot {
            databases: vec!["health".into(), "pump".into()],
            tables: vec![table(
                "devices",
                vec![
                    column("id", None),
                    column("serial_number", None),
                    generated,
                    constant,
                ],
            )],
            foreign_keys: vec![],
            table_macros: vec![],
        };
        let wire = serde_json::to_string(&sent).unwrap();
        let read: CatalogSnapshot = serde_json::from_str(&wire).unwrap();
        let policy = PrivacyPolicy {
            hide_tables: vec![],
            hide_columns: vec!["*.serial_number".into()],
        };
        let (visible, hidden) = without_hidden(read.clone(), &policy);
        let names: Vec<&str> = visible.tables[0]
            .columns
            .iter()
            .map(|c| c.name.as_str())
            .collect();
        assert_eq!(names, ["id", "source"]);
        assert_eq!(
            hidden.get(&(
                "health".to_string(),
                "main".to_string(),
                "devices".to_string()
            )),
            Some(&vec![
                "serial_number".to_string(),
                "serial_length".to_string()
            ])
        );
        let shown = serde_json::to_string(&visible).unwrap();
        assert!(!shown.contains("default_reads"), "{shown}");
        assert!(!shown.contains("serial"), "{shown}");
        // Without rules every column stays, and still nothing shows what a default reads.
        let (all, _) = without_hidden(read, &PrivacyPolicy::default());
        assert_eq!(all.tables[0].columns.len(), 4);
        assert!(
            !serde_json::to_string(&all)
                .unwrap()
                .contains("default_reads")
        );
    }
    /// A view's column is hidden when what DuckDB's plan of it reads is hidden (as the worker
    /// traced it), directly or through a generated column; the view's other columns stay; a
    /// view whose plan could not be read, or whose every column is hidden, is gone; and what a
    /// view column reads is never passed on.
    #[test]
    fn a_view_column_that_reads_hidden_data_is_hidden_and_its_neighbours_stay() {
        use crate::privacy::{ReadColumn, ViewColumnReads};
        let read = |table: &str, column: Option<&str>| ReadColumn {
            database: "health".into(),
            schema: "main".into(),
            table: table.into(),
            column: column.map(str::to_owned),
        };
        let view_column = |name: &str, reads: ViewColumnReads| ColumnInfo {
            view_reads: Some(reads),
            ..column(name, None)
        };
        let view = |name: &str, columns: Vec<ColumnInfo>| TableInfo {
            kind: RelationKind::View,
            ..table(name, columns)
        };
        let mut generated = column("serial_length", None);
        generated.default_reads = Some(vec!["serial_number".into()]);
        let sent = CatalogSnapshot {
            databases: vec!["health".into(), "pump".into()],
            tables: vec![
                table(
                    "devices",
                    vec![column("id", None), column("serial_number", None), generated],
                ),
                view(
                    "device_tiers",
                    vec![
                        view_column(
                            "id",
                            ViewColumnReads::Reads(vec![
                                read("devices", None),
                                read("devices", Some("id")),
                            ]),
                        ),
                        view_column(
                            "tier",
                            ViewColumnReads::Reads(vec![read("devices", Some("SERIAL_NUMBER"))]),
                        ),
                        view_column(
                            "length",
                            ViewColumnReads::Reads(vec![read("devices", Some("serial_length"))]),
                        ),
                        view_column(
                            "counted",
                            ViewColumnReads::Reads(vec![read("raw_payloads", None)]),
                        ),
                    ],
                ),
                view("broken", vec![view_column("x", ViewColumnReads::Unknown)]),
            ],
            foreign_keys: vec![],
            table_macros: vec![],
        };
        let wire: CatalogSnapshot =
            serde_json::from_str(&serde_json::to_string(&sent).unwrap()).unwrap();
        let policy = PrivacyPolicy {
            hide_tables: vec!["raw_payloads".into()],
            hide_columns: vec!["*.serial_number".into()],
        };
        let (visible, _) = without_hidden(wire.clone(), &policy);
        let names: Vec<&str> = visible.tables.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["devices", "device_tiers"]);
        let columns: Vec<&str> = visible.tables[1]
            .columns
            .iter()
            .map(|c| c.name.as_str())
            .collect();
        assert_eq!(columns, ["id"]);
        let shown = serde_json::to_string(&visible).unwrap();
        assert!(!shown.contains("view_reads"), "{shown}");
        // Without rules nothing is hidden, and still nothing shows what a view column reads.
        let (all, _) = without_hidden(wire, &PrivacyPolicy::default());
        assert_eq!(all.tables.len(), 3);
        assert!(!serde_json::to_string(&all).unwrap().contains("view_reads"));
    }

    /// Two databases with tables of one name: a rule with a database's name hides its table
    /// and columns there only, a rule without one in both; keys and references follow.
    #[test]
    fn a_rule_with_a_database_name_hides_in_that_database_only() {
        let in_pump = |mut t: TableInfo| {
            t.database = "pump".into();
            t
        };
        let sent = CatalogSnapshot {
            databases: vec!["health".into(), "pump".into()],
            tables: vec![
                table("devices", vec![column("id", None), column("serial", None)]),
                table("uploads", vec![column("id", None)]),
                in_pump(table(
                    "devices",
                    vec![column("id", None), column("serial", None)],
                )),
                in_pump(table("uploads", vec![column("id", None)])),
                in_pump(table(
                    "boluses",
                    vec![
                        column("units", None),
                        column("device", reference("devices", "serial")),
                    ],
                )),
            ],
            foreign_keys: vec![],
            table_macros: vec![],
        };
        let policy = PrivacyPolicy {
            hide_tables: vec!["pump.uploads".into()],
            hide_columns: vec!["pump.devices.serial".into()],
        };
        let (visible, _) = without_hidden(sent, &policy);
        let shown: Vec<(String, String, Vec<String>)> = visible
            .tables
            .iter()
            .map(|t| {
                let columns = t.columns.iter().map(|c| c.name.clone()).collect();
                (t.database.clone(), t.name.clone(), columns)
            })
            .collect();
        let relation = |database: &str, name: &str, columns: &[&str]| {
            (
                database.to_owned(),
                name.to_owned(),
                columns.iter().map(|c| (*c).to_owned()).collect::<Vec<_>>(),
            )
        };
        assert_eq!(
            shown,
            [
                relation("health", "devices", &["id", "serial"]),
                relation("health", "uploads", &["id"]),
                relation("pump", "devices", &["id"]),
                relation("pump", "boluses", &["units", "device"]),
            ]
        );
        // The pump's reference to its own hidden column goes with it.
        assert_eq!(visible.tables[3].columns[1].references, None);
    }
}
