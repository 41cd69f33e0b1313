//! The catalog a worker reads from the attached databases and the tools and resources show: its
//! tables and views, their columns, indexes and foreign keys.

use std::fmt;

use serde::{Deserialize, Serialize};

/// The whole schema of every database, as the tools and resources publish it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CatalogSnapshot {
    /// The databases' names, the default first (`crate::protocol::databases`): a relation of the
    /// default is named without its database in SQL, another's with it.
    #[serde(default)]
    pub databases: Vec<String>,
    /// Tables and views.
    pub tables: Vec<TableInfo>,
    /// Foreign keys, each within one database.
    pub foreign_keys: Vec<ForeignKey>,
    /// The table macros stored in the databases, by name (the validator refuses any other table
    /// function that is not built in). Under privacy rules none: the worker's shadow catalogs
    /// have no copy of them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub table_macros: Vec<String>,
}

impl CatalogSnapshot {
    /// The default database's name (empty when the snapshot does not say, as in a hand-built
    /// one: then every relation counts as the default's).
    pub fn default_database(&self) -> &str {
        self.databases.first().map_or("", String::as_str)
    }

    /// Whether `table` belongs to the default database, whose relations SQL names without the
    /// database's name.
    pub fn in_default_database(&self, table: &TableInfo) -> bool {
        let default = self.default_database();
        default.is_empty()
            || table.database.is_empty()
            || table.database.eq_ignore_ascii_case(default)
    }
}

/// Whether a relation is a table or a view.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RelationKind {
    /// A base table.
    Table,
    /// A view.
    View,
}

impl RelationKind {
    /// Its name on the wire: `table` or `view`.
    pub fn as_str(self) -> &'static str {
        match self {
            RelationKind::Table => "table",
            RelationKind::View => "view",
        }
    }
}

/// One table or view.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TableInfo {
    /// The database it belongs to, by its declared name (`crate::protocol::databases`): the
    /// default database's tables are named without it in SQL, another's with it
    /// (`pump.main.boluses`).
    pub database: String,
    /// Schema name.
    pub schema: String,
    /// Table name.
    pub name: String,
    /// A table or a view.
    pub kind: RelationKind,
    /// `COMMENT ON` text, or the operator's description.
    pub description: Option<String>,
    /// DuckDB's estimated row count (tables only).
    pub estimated_rows: Option<i64>,
    /// Columns in order.
    pub columns: Vec<ColumnInfo>,
    /// Indexes on the table.
    pub indexes: Vec<IndexInfo>,
}

/// One column.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ColumnInfo {
    /// Column name.
    pub name: String,
    /// DuckDB type.
    #[serde(rename = "type")]
    pub data_type: String,
    /// Whether NULL is allowed.
    pub nullable: bool,
    /// Default expression, if any.
    pub default: Option<String>,
    /// Part of the primary key.
    pub primary_key: bool,
    /// Has a UNIQUE constraint of its own.
    pub unique: bool,
    /// Foreign-key target.
    pub references: Option<ColumnReference>,
    /// `COMMENT ON COLUMN` text.
    pub comment: Option<String>,
    /// The columns of its own table its default or generated expression reads, as DuckDB's own
    /// parser reads the expression (empty without one); `None` when DuckDB could not parse it,
    /// so it may read any. It crosses the worker's catalog reply for the parent's privacy
    /// filter (a column computed from a hidden one is hidden too), which then empties it: no
    /// tool shows it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_reads: Option<Vec<String>>,
    /// A view's column, read by a worker under privacy rules: what DuckDB's plan of it reads
    /// (`engine::lineage`), for the parent's privacy filter (a view column computed from
    /// hidden data is hidden), which then empties it: no tool shows it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub view_reads: Option<crate::privacy::ViewColumnReads>,
}

/// The column a foreign key points at.
///
/// It travels as the object `{"table": …, "column": …}`, on the worker's catalog reply and in the
/// MCP tools alike: a name may itself hold a dot, so one `table.column` string could not be split
/// back into the true pair, and the parent's privacy check needs the true pair. Only the text a
/// person reads joins them ([`fmt::Display`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ColumnReference {
    /// The referenced table, without its schema (as DuckDB's constraint names it).
    pub table: String,
    /// The referenced column.
    pub column: String,
}

impl fmt::Display for ColumnReference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.table, self.column)
    }
}

/// One index.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IndexInfo {
    /// Index name.
    pub name: String,
    /// Whether it is unique.
    pub unique: bool,
    /// Its SQL definition.
    pub sql: Option<String>,
}

/// One foreign key.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ForeignKey {
    /// The database both tables belong to (DuckDB's keys never cross databases).
    pub database: String,
    /// Referencing table.
    pub table: String,
    /// Referencing columns.
    pub columns: Vec<String>,
    /// Referenced table.
    pub referenced_table: String,
    /// Referenced columns.
    pub referenced_columns: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_column_reference_travels_as_its_table_and_column_even_with_dots_in_them() {
        let reference = ColumnReference {
            table: "devices.serial".into(),
            column: "no.1".into(),
        };
        let wire = serde_json::to_value(&reference).unwrap();
        assert_eq!(
            wire,
            serde_json::json!({ "table": "devices.serial", "column": "no.1" })
        );
        assert_eq!(
            serde_json::from_value::<ColumnReference>(wire).unwrap(),
            reference
        );
        assert!(serde_json::from_str::<ColumnReference>("\"devices.serial.no\"").is_err());
        assert_eq!(reference.to_string(), "devices.serial.no.1");
    }
}
