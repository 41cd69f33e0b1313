//! Catalog introspection of the attached database from DuckDB's `duckdb_*()` table functions.

use std::collections::HashMap;

use duckdb::Connection;
use serde_json::Value as Json;

use super::Engine;
use super::errors::{query_error, worker_error};
use super::own_sql::{Cache, OwnSql};
use super::statement::{Sql, prepare_sql};
use crate::privacy::ViewColumnReads;
use crate::protocol::{
    CatalogSnapshot, ColumnInfo, ColumnReference, Failure, ForeignKey, IndexInfo, RelationKind,
    TableInfo,
};
use duckgate_validate::error::ErrorKind;

impl Engine {
    /// Tables, views, columns, constraints and indexes of every attached database, the
    /// default's first, each named by its database's declared name.
    pub fn catalog(&mut self) -> Result<CatalogSnapshot, Failure> {
        self.ensure_lock_held()?;
        if self.attached.is_empty() {
            return Err(worker_error(
                ErrorKind::InternalError,
                "catalog() called before attach()",
            ));
        }
        let mut snapshot = CatalogSnapshot {
            databases: self.attached.iter().map(|a| a.name.clone()).collect(),
            ..CatalogSnapshot::default()
        };
        for attached in &self.attached {
            let one = self::snapshot(&self.conn, &attached.catalog, &attached.name)?;
            snapshot.tables.extend(one.tables);
            snapshot.foreign_keys.extend(one.foreign_keys);
            for name in one.table_macros {
                if !snapshot.table_macros.contains(&name) {
                    snapshot.table_macros.push(name);
                }
            }
        }
        // Under privacy rules, what each view column reads, as the shadow traced it; a view
        // the shadow did not trace (a nested schema's) may read anything.
        if let Some(shadow) = &self.shadow {
            for table in &mut snapshot.tables {
                if table.kind != RelationKind::View {
                    continue;
                }
                for column in &mut table.columns {
                    let key = (
                        table.database.clone(),
                        table.schema.clone(),
                        table.name.clone(),
                        column.name.clone(),
                    );
                    column.view_reads = Some(match shadow.view_reads.get(&key) {
                        Some(Some(reads)) => ViewColumnReads::Reads(reads.clone()),
                        Some(None) | None => ViewColumnReads::Unknown,
                    });
                }
            }
        }
        Ok(snapshot)
    }
}

/// One constraint row of `duckdb_constraints()`.
struct Constraint {
    schema: String,
    table: String,
    kind: String,
    columns: Vec<String>,
    referenced_table: Option<String>,
    referenced_columns: Vec<String>,
}

/// Run one catalog query with the database alias as its only parameter, mapping every row.
fn rows_for<T>(
    conn: &Connection,
    alias: &str,
    sql: &'static str,
    map: impl FnMut(&duckdb::Row<'_>) -> duckdb::Result<T>,
) -> Result<Vec<T>, Failure> {
    let err = |e: duckdb::Error| query_error(&e);
    let sql = OwnSql::fixed(sql);
    let mut stmt = prepare_sql(conn, Sql::Own(&sql), Cache::Fresh).map_err(err)?;
    let rows = stmt.query_map([alias], map).map_err(err)?;
    rows.collect::<duckdb::Result<Vec<T>>>().map_err(err)
}

/// Read tables, views, columns, constraints and indexes of the database attached as `alias`,
/// whose declared name is `database`.
pub(crate) fn snapshot(
    conn: &Connection,
    alias: &str,
    database: &str,
) -> Result<CatalogSnapshot, Failure> {
    let relation = |kind: RelationKind, row: &duckdb::Row<'_>, estimated_rows| {
        Ok(TableInfo {
            database: database.to_owned(),
            schema: row.get(0)?,
            name: row.get(1)?,
            kind,
            description: row.get(2)?,
            estimated_rows,
            columns: Vec::new(),
            indexes: Vec::new(),
        })
    };
    let mut tables = rows_for(
        conn,
        alias,
        "SELECT schema_name, table_name, comment, estimated_size FROM duckdb_tables() \
         WHERE database_name = ? AND NOT internal AND NOT temporary \
         ORDER BY schema_name, table_name",
        |row| relation(RelationKind::Table, row, row.get(3)?),
    )?;
    tables.extend(rows_for(
        conn,
        alias,
        "SELECT schema_name, view_name, comment FROM duckdb_views() \
         WHERE database_name = ? AND NOT internal AND NOT temporary \
         ORDER BY schema_name, view_name",
        |row| relation(RelationKind::View, row, None),
    )?);

    let constraints = read_constraints(conn, alias)?;

    // (schema, table) -> position in `tables`
    let position: HashMap<(String, String), usize> = tables
        .iter()
        .enumerate()
        .map(|(i, t)| ((t.schema.clone(), t.name.clone()), i))
        .collect();

    let columns = rows_for(
        conn,
        alias,
        "SELECT schema_name, table_name, column_name, data_type, is_nullable, \
                column_default, comment \
         FROM duckdb_columns() WHERE database_name = ? AND NOT internal \
         ORDER BY schema_name, table_name, column_index",
        |row| {
            let column = ColumnInfo {
                name: row.get(2)?,
                data_type: row.get(3)?,
                nullable: row.get(4)?,
                default: row.get(5)?,
                primary_key: false,
                unique: false,
                references: None,
                comment: row.get(6)?,
                default_reads: Some(Vec::new()),
                view_reads: None,
            };
            Ok((row.get::<_, String>(0)?, row.get::<_, String>(1)?, column))
        },
    )?;
    for (schema, table, mut column) in columns {
        let Some(&i) = position.get(&(schema.clone(), table.clone())) else {
            continue;
        };
        if let Some(expression) = &column.default {
            column.default_reads = columns_read(conn, expression);
        }
        annotate(&mut column, &schema, &table, &constraints);
        if let Some(table) = tables.get_mut(i) {
            table.columns.push(column);
        }
    }

    let indexes = rows_for(
        conn,
        alias,
        "SELECT schema_name, table_name, index_name, is_unique, sql FROM duckdb_indexes() \
         WHERE database_name = ? ORDER BY schema_name, table_name, index_name",
        |row| {
            let index = IndexInfo {
                name: row.get(2)?,
                unique: row.get(3)?,
                sql: row.get(4)?,
            };
            Ok((row.get::<_, String>(0)?, row.get::<_, String>(1)?, index))
        },
    )?;
    for (schema, table, index) in indexes {
        if let Some(table) = position
            .get(&(schema, table))
            .and_then(|&i| tables.get_mut(i))
        {
            table.indexes.push(index);
        }
    }

    let foreign_keys = constraints
        .iter()
        .filter(|c| c.kind == "FOREIGN KEY")
        .filter_map(|c| {
            Some(ForeignKey {
                database: database.to_owned(),
                table: c.table.clone(),
                columns: c.columns.clone(),
                referenced_table: c.referenced_table.clone()?,
                referenced_columns: c.referenced_columns.clone(),
            })
        })
        .collect();

    let table_macros = rows_for(
        conn,
        alias,
        "SELECT DISTINCT function_name FROM duckdb_functions() \
         WHERE database_name = ? AND function_type = 'table_macro' ORDER BY function_name",
        |row| row.get(0),
    )?;

    Ok(CatalogSnapshot {
        databases: vec![database.to_owned()],
        tables,
        foreign_keys,
        table_macros,
    })
}

fn read_constraints(conn: &Connection, alias: &str) -> Result<Vec<Constraint>, Failure> {
    rows_for(
        conn,
        alias,
        "SELECT schema_name, table_name, constraint_type, \
                constraint_column_names::VARCHAR[], referenced_table, \
                referenced_column_names::VARCHAR[] \
         FROM duckdb_constraints() WHERE database_name = ? \
           AND constraint_type IN ('PRIMARY KEY', 'UNIQUE', 'FOREIGN KEY') \
         ORDER BY schema_name, table_name, constraint_index",
        |row| {
            Ok(Constraint {
                schema: row.get(0)?,
                table: row.get(1)?,
                kind: row.get(2)?,
                columns: string_list(row.get_ref(3)?.to_owned()),
                referenced_table: row.get(4)?,
                referenced_columns: string_list(row.get_ref(5)?.to_owned()),
            })
        },
    )
}

fn string_list(value: duckdb::types::Value) -> Vec<String> {
    match value {
        duckdb::types::Value::List(items) => items
            .into_iter()
            .filter_map(|v| match v {
                duckdb::types::Value::Text(s) => Some(s),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// Mark a column's primary-key, single-column unique and foreign-key facts.
fn annotate(column: &mut ColumnInfo, schema: &str, table: &str, constraints: &[Constraint]) {
    for c in constraints
        .iter()
        .filter(|c| c.schema == schema && c.table == table)
    {
        let Some(pos) = c.columns.iter().position(|n| n == &column.name) else {
            continue;
        };
        match c.kind.as_str() {
            "PRIMARY KEY" => {
                column.primary_key = true;
                // A one-column primary key is unique on its own.
                column.unique |= c.columns.len() == 1;
            }
            "UNIQUE" => column.unique |= c.columns.len() == 1,
            "FOREIGN KEY" => {
                if let (Some(target), Some(target_column)) =
                    (&c.referenced_table, c.referenced_columns.get(pos))
                {
                    column.references = Some(ColumnReference {
                        table: target.clone(),
                        column: target_column.clone(),
                    });
                }
            }
            _ => {}
        }
    }
}

/// The column names a default or generated expression reads, as DuckDB's own parser reads it
/// (`json_serialize_sql` of `SELECT <expression>`, called by the worker, not by SQL); `None` when
/// DuckDB cannot parse it, so it may read any. A generated column can read only columns of its
/// own table, so the last part of each column reference is enough.
pub(crate) fn columns_read(conn: &Connection, expression: &str) -> Option<Vec<String>> {
    let serialize = OwnSql::fixed("SELECT json_serialize_sql('SELECT ' || ?)");
    let text: String = prepare_sql(conn, Sql::Own(&serialize), Cache::Keep)
        .and_then(|mut stmt| stmt.query_row([expression], |row| row.get(0)))
        .ok()?;
    let tree: Json = serde_json::from_str(&text).ok()?;
    if tree.get("error") != Some(&Json::Bool(false)) {
        return None;
    }
    let mut read = Vec::new();
    let mut stack = vec![&tree];
    while let Some(value) = stack.pop() {
        match value {
            Json::Object(map) => {
                if map.get("class").and_then(Json::as_str) == Some("COLUMN_REF") {
                    let last = map
                        .get("column_names")
                        .and_then(Json::as_array)
                        .and_then(|names| names.last())
                        .and_then(Json::as_str)?;
                    read.push(last.to_owned());
                }
                stack.extend(map.values());
            }
            Json::Array(items) => stack.extend(items.iter()),
            Json::Null | Json::Bool(_) | Json::Number(_) | Json::String(_) => {}
        }
    }
    Some(read)
}
