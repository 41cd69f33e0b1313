//! Finding what an agent named in the catalog: a table by name (exact, then case-insensitive,
//! `schema.table` accepted, with "did you mean" on a miss), the schemas, a table's keys and
//! details as `describe_table` and the table resource show them, and the text search of
//! `search_schema`.

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

/// The table an agent named: exact name first, then case-insensitive; `schema.table` is accepted.
pub(crate) async fn find_table<'a>(
    catalog: &'a CatalogSnapshot,
    name: &str,
    schema: Option<&str>,
) -> Result<&'a TableInfo, ErrorBody> {
    let name = name.trim();
    let in_schema = |t: &TableInfo, wanted: Option<&str>| {
        wanted.is_none_or(|s| t.schema.eq_ignore_ascii_case(s))
    };
    let lookup = |name: &str, schema: Option<&str>| -> Vec<&'a TableInfo> {
        let exact: Vec<&TableInfo> = catalog
            .tables
            .iter()
            .filter(|t| t.name == name && in_schema(t, schema))
            .collect();
        if !exact.is_empty() {
            return exact;
        }
        catalog
            .tables
            .iter()
            .filter(|t| t.name.eq_ignore_ascii_case(name) && in_schema(t, schema))
            .collect()
    };
    let mut found = lookup(name, schema);
    if found.is_empty()
        && schema.is_none()
        && let Some((schema_part, table_part)) = name.split_once('.')
    {
        found = lookup(table_part, Some(schema_part));
    }
    match found.as_slice() {
        [table] => Ok(table),
        [] => {
            let where_ = schema
                .map(|s| format!(" in schema '{s}'"))
                .unwrap_or_default();
            let mut error = ErrorBody::new(
                ErrorKind::UnknownName,
                format!("Table or view '{name}'{where_} does not exist."),
            )
            .construct(name.to_string())
            .suggest(ToolName::ListTables.as_str(), None);
            error.recovery.fuzzy_matches = fuzzy::closest_off_thread(
                name,
                catalog.tables.iter().map(|t| t.name.as_str()),
                MAX_FUZZY_MATCHES,
            )
            .await;
            Err(error)
        }
        several => {
            if let Some(main) = several.iter().find(|t| t.schema == "main") {
                return Ok(main);
            }
            let schemas: Vec<&str> = several.iter().map(|t| t.schema.as_str()).collect();
            Err(ErrorBody::new(
                ErrorKind::InvalidArgument,
                format!(
                    "'{name}' exists in several schemas ({}); pass schema.",
                    schemas.join(", ")
                ),
            )
            .construct("schema"))
        }
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
        .filter(|k| k.table == table.name)
        .collect()
}

/// `table` as `describe_table` and the table resource give it: columns, indexes, and the keys
/// going out of it and pointing at it.
pub(crate) fn table_detail(catalog: &CatalogSnapshot, table: &TableInfo) -> Value {
    let referenced_by: Vec<&ForeignKey> = catalog
        .foreign_keys
        .iter()
        .filter(|k| k.referenced_table == table.name)
        .collect();
    json!({
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
        let mut line = match self.column {
            Some(column) => format!(
                "column {}.{} {}",
                render::inline(&self.table.name),
                render::inline(&column.name),
                render::inline(&column.data_type)
            ),
            None => format!(
                "table {}.{} ({})",
                render::inline(&self.table.schema),
                render::inline(&self.table.name),
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
                table,
                column: None,
                matched_in: "name",
                text: description,
            });
        } else if description.is_some_and(contains) {
            by_text.push(SchemaMatch {
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
                    table,
                    column: Some(column),
                    matched_in: "name",
                    text: comment,
                });
            } else if comment.is_some_and(contains) {
                by_text.push(SchemaMatch {
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
