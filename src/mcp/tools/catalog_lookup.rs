//! Finding what an agent named in the catalog of every database: a table by name (exact, then
//! case-insensitive, `schema.table`, `database.table` and `database.schema.table` accepted,
//! with "did you mean" over every database on a miss), the schemas and databases, a table's
//! keys and details as `describe_table` and the table resource show them, and the text search
//! of `search_schema`.

use serde_json::{Value, json};

use super::name::ToolName;
use crate::mcp::envelope::ErrorBody;
use crate::mcp::fuzzy;
use crate::mcp::render;
use crate::protocol::{CatalogSnapshot, ColumnInfo, ForeignKey, TableInfo};
use duckgate_validate::error::ErrorKind;

/// Fuzzy matches offered for an unknown name.
pub(crate) const MAX_FUZZY_MATCHES: usize = 5;

/// Every schema that holds a table or view, sorted, once each.
pub(crate) fn schema_names(catalog: &CatalogSnapshot) -> Vec<String> {
    let mut schemas: Vec<String> = catalog.tables.iter().map(|t| t.schema.clone()).collect();
    schemas.sort();
    schemas.dedup();
    schemas
}

/// Every database's name, the default first.
fn database_names(catalog: &CatalogSnapshot) -> Vec<String> {
    let mut names = catalog.databases.clone();
    for table in &catalog.tables {
        if !names
            .iter()
            .any(|n| n.eq_ignore_ascii_case(&table.database))
        {
            names.push(table.database.clone());
        }
    }
    names
}

/// Nothing when the catalog has a database named `database` (ASCII case-insensitively, as
/// DuckDB compares catalogs); else the agent's error: the databases there are, the closest of
/// them, and `list_tables` (called with `list_args`) to look next.
pub(crate) async fn check_database(
    catalog: &CatalogSnapshot,
    database: &str,
    list_args: Option<serde_json::Value>,
) -> Result<(), ErrorBody> {
    let databases = database_names(catalog);
    if databases.iter().any(|d| d.eq_ignore_ascii_case(database)) {
        return Ok(());
    }
    let mut error = ErrorBody::new(
        ErrorKind::UnknownName,
        format!(
            "Database '{database}' does not exist. Databases: {}.",
            databases.join(", ")
        ),
    )
    .construct(database.to_string())
    .suggest(ToolName::ListTables.as_str(), list_args);
    error.recovery.fuzzy_matches = fuzzy::closest_off_thread(
        database,
        databases.iter().map(String::as_str),
        MAX_FUZZY_MATCHES,
    )
    .await;
    Err(error)
}

/// The table an agent named: exact name first, then case-insensitive; `schema.table`,
/// `database.table` and `database.schema.table` are accepted, as SQL names them. When a name
/// is found in several databases or schemas, the default database's `main` wins, as in SQL.
pub(crate) async fn find_table<'a>(
    catalog: &'a CatalogSnapshot,
    name: &str,
    schema: Option<&str>,
    database: Option<&str>,
) -> Result<&'a TableInfo, ErrorBody> {
    let name = name.trim();
    if let Some(database) = database {
        check_database(catalog, database, None).await?;
    }
    let matches = |t: &TableInfo, schema: Option<&str>, database: Option<&str>| {
        schema.is_none_or(|s| t.schema.eq_ignore_ascii_case(s))
            && database.is_none_or(|d| t.database.eq_ignore_ascii_case(d))
    };
    let lookup = |name: &str, schema: Option<&str>, database: Option<&str>| -> Vec<&'a TableInfo> {
        let exact: Vec<&TableInfo> = catalog
            .tables
            .iter()
            .filter(|t| t.name == name && matches(t, schema, database))
            .collect();
        if !exact.is_empty() {
            return exact;
        }
        catalog
            .tables
            .iter()
            .filter(|t| t.name.eq_ignore_ascii_case(name) && matches(t, schema, database))
            .collect()
    };
    let mut found = lookup(name, schema, database);
    // A dotted name as SQL writes it: `schema.table` (the default database's schema first, as
    // DuckDB tries it), then `database.table`, or `database.schema.table`.
    if found.is_empty() && schema.is_none() {
        let parts: Vec<&str> = name.splitn(3, '.').collect();
        match (parts.as_slice(), database) {
            ([first, table], _) => {
                let in_default = database
                    .or(Some(catalog.default_database()))
                    .filter(|d| !d.is_empty());
                found = lookup(table, Some(first), in_default);
                if found.is_empty() && database.is_none() {
                    found = lookup(table, None, Some(first));
                }
            }
            ([database, schema, table], None) => {
                found = lookup(table, Some(schema), Some(database))
            }
            _ => {}
        }
    }
    match found.as_slice() {
        [table] => Ok(table),
        [] => {
            let mut where_ = schema
                .map(|s| format!(" in schema '{s}'"))
                .unwrap_or_default();
            if let Some(database) = database {
                where_.push_str(&format!(" of database '{database}'"));
            }
            let mut error = ErrorBody::new(
                ErrorKind::UnknownName,
                format!("Table or view '{name}'{where_} does not exist."),
            )
            .construct(name.to_string())
            .suggest(ToolName::ListTables.as_str(), None);
            error.recovery.fuzzy_matches = table_suggestions(catalog, name).await;
            Err(error)
        }
        several => {
            let in_default: Vec<&&TableInfo> = several
                .iter()
                .filter(|t| catalog.in_default_database(t))
                .collect();
            if let Some(main) = in_default.iter().find(|t| t.schema == "main") {
                return Ok(main);
            }
            if let [only] = in_default.as_slice() {
                return Ok(only);
            }
            let places: Vec<String> = several
                .iter()
                .map(|t| render::relation_name(t, catalog.default_database()))
                .collect();
            Err(ErrorBody::new(
                ErrorKind::InvalidArgument,
                format!(
                    "'{name}' exists in several places ({}); pass schema (and database).",
                    places.join(", ")
                ),
            )
            .construct("schema"))
        }
    }
}

/// Tables whose names are close to `wanted` (its last dotted part compared too), of every
/// database: the default's by name, as before, another's as SQL must name it
/// (`pump.main.boluses`), so `bolusses` finds the second database's `boluses`.
async fn table_suggestions(catalog: &CatalogSnapshot, wanted: &str) -> Vec<String> {
    let last_part = wanted.rsplit('.').next().unwrap_or(wanted);
    let bare = || catalog.tables.iter().map(|t| t.name.as_str());
    let mut close = fuzzy::closest_off_thread(wanted, bare(), MAX_FUZZY_MATCHES).await;
    if last_part != wanted {
        for name in fuzzy::closest_off_thread(last_part, bare(), MAX_FUZZY_MATCHES).await {
            if !close.contains(&name) {
                close.push(name);
            }
        }
    }
    let mut suggestions = Vec::new();
    for name in close {
        for table in catalog.tables.iter().filter(|t| t.name == name) {
            let written = if catalog.in_default_database(table) {
                table.name.clone()
            } else {
                relation_written(catalog, table)
            };
            if !suggestions.contains(&written) {
                suggestions.push(written);
            }
        }
    }
    suggestions.truncate(MAX_FUZZY_MATCHES);
    suggestions
}

/// How SQL names a relation, short: `name` of the default database (its schema added when it
/// is not `main`), `database.schema.name` of another.
pub(crate) fn relation_written(catalog: &CatalogSnapshot, table: &TableInfo) -> String {
    match (catalog.in_default_database(table), table.schema.as_str()) {
        (true, "main") => table.name.clone(),
        (true, schema) => format!("{schema}.{}", table.name),
        (false, schema) => format!("{}.{schema}.{}", table.database, table.name),
    }
}

/// The foreign keys going out of `table`.
pub(crate) fn outgoing_keys<'a>(
    catalog: &'a CatalogSnapshot,
    table: &TableInfo,
) -> Vec<&'a ForeignKey> {
    catalog
        .foreign_keys
        .iter()
        .filter(|k| k.table == table.name && same_database(&k.database, &table.database))
        .collect()
}

/// Whether two database names are one (an empty one: a hand-built catalog's, any).
fn same_database(a: &str, b: &str) -> bool {
    a.is_empty() || b.is_empty() || a.eq_ignore_ascii_case(b)
}

/// `table` as `describe_table` and the table resource give it: columns, indexes, and the keys
/// going out of it and pointing at it.
pub(crate) fn table_detail(catalog: &CatalogSnapshot, table: &TableInfo) -> Value {
    let referenced_by: Vec<&ForeignKey> = catalog
        .foreign_keys
        .iter()
        .filter(|k| k.referenced_table == table.name && same_database(&k.database, &table.database))
        .collect();
    json!({
        "database": table.database,
        "schema": table.schema,
        "name": table.name,
        "kind": table.kind,
        "description": table.description,
        "estimated_rows": table.estimated_rows,
        "columns": table.columns,
        "indexes": table.indexes,
        "foreign_keys": outgoing_keys(catalog, table),
        "referenced_by": referenced_by,
    })
}

/// `%XX` decoding for the table name in a resource URI.
pub(crate) fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&byte) = bytes.get(i) {
        if byte == b'%'
            && let (Some(high), Some(low)) =
                (hex_value(bytes.get(i + 1)), hex_value(bytes.get(i + 2)))
        {
            out.push(high * 16 + low);
            i += 3;
            continue;
        }
        out.push(byte);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn hex_value(byte: Option<&u8>) -> Option<u8> {
    char::from(*byte?)
        .to_digit(16)
        .and_then(|d| u8::try_from(d).ok())
}

/// One `search_schema` hit.
pub(crate) struct SchemaMatch<'a> {
    catalog: &'a CatalogSnapshot,
    table: &'a TableInfo,
    column: Option<&'a ColumnInfo>,
    matched_in: &'static str,
    text: Option<&'a str>,
}

impl SchemaMatch<'_> {
    /// The match as `search_schema`'s `data.matches` lists it.
    pub(crate) fn to_json(&self) -> Value {
        json!({
            "kind": if self.column.is_some() { "column" } else { "table" },
            "database": self.table.database,
            "schema": self.table.schema,
            "table": self.table.name,
            "column": self.column.map(|c| c.name.as_str()),
            "type": self.column.map(|c| c.data_type.as_str()),
            "matched_in": self.matched_in,
            "text": self.text,
        })
    }

    /// The match as one line of `search_schema`'s text.
    pub(crate) fn line(&self) -> String {
        let in_default = self.catalog.in_default_database(self.table);
        let mut line = match (self.column, in_default) {
            (Some(column), true) => format!(
                "column {}.{} {}",
                render::inline(&self.table.name),
                render::inline(&column.name),
                render::inline(&column.data_type)
            ),
            (Some(column), false) => format!(
                "column {}.{}.{} {}",
                render::inline(&self.table.database),
                render::inline(&self.table.name),
                render::inline(&column.name),
                render::inline(&column.data_type)
            ),
            (None, _) => format!(
                "table {} ({})",
                render::relation_name(self.table, self.catalog.default_database()),
                self.table.kind.as_str()
            ),
        };
        if let Some(text) = self.text {
            line.push_str(&format!(" — {}", render::clip(text)));
        }
        line
    }
}

/// Name matches first (tables, then columns), then description and comment matches.
pub(crate) fn search<'a>(catalog: &'a CatalogSnapshot, needle: &str) -> Vec<SchemaMatch<'a>> {
    let needle = needle.to_lowercase();
    let contains = |text: &str| text.to_lowercase().contains(&needle);
    let mut by_name = Vec::new();
    let mut by_text = Vec::new();
    for table in &catalog.tables {
        let description = table.description.as_deref();
        if contains(&table.name) {
            by_name.push(SchemaMatch {
                catalog,
                table,
                column: None,
                matched_in: "name",
                text: description,
            });
        } else if description.is_some_and(contains) {
            by_text.push(SchemaMatch {
                catalog,
                table,
                column: None,
                matched_in: "description",
                text: description,
            });
        }
    }
    let table_hits = by_name.len();
    for table in &catalog.tables {
        for column in &table.columns {
            let comment = column.comment.as_deref();
            if contains(&column.name) {
                by_name.push(SchemaMatch {
                    catalog,
                    table,
                    column: Some(column),
                    matched_in: "name",
                    text: comment,
                });
            } else if comment.is_some_and(contains) {
                by_text.push(SchemaMatch {
                    catalog,
                    table,
                    column: Some(column),
                    matched_in: "comment",
                    text: comment,
                });
            }
        }
    }
    debug_assert!(table_hits <= by_name.len());
    by_name.extend(by_text);
    by_name
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percent_decoding_handles_escapes_and_leaves_the_rest() {
        assert_eq!(percent_decode("cgm_readings"), "cgm_readings");
        assert_eq!(percent_decode("my%20table"), "my table");
        assert_eq!(percent_decode("50%"), "50%");
        assert_eq!(percent_decode("%zz"), "%zz");
    }
}
