//! `describe_table`: one table's columns, keys and indexes.

use serde_json::{Value, json};

use super::arguments::tool_arguments;
use super::catalog_lookup::{outgoing_keys, table_detail};
use super::context::{Relation, ToolContext, with_progress};
use super::list_relationships::foreign_key_schema;
use super::name::ToolName;
use super::tool::{
    Answer, DATABASE, Request, SCHEMA, TABLE_NAME, check_not_blank, relation_schema, tool,
};
use crate::mcp::envelope::{ErrorBody, Reply, Status, nullable};
use crate::mcp::render;

fn description(_time_zone: &str) -> String {
    "Use this when you are about to write SQL and need exact column names and types: \
     shows one table's columns (name, type, nullable, default, keys, foreign-key \
     references, comments) and indexes, or a data file's columns (its path from list_files). \
     Use sample_rows instead when you want to see actual values. \
     Common compositions: list_tables → describe_table → query; \
     describe_table → sample_rows."
        .to_owned()
}

/// The table as [`table_detail`] builds it; the table resource serves the same.
fn data_schema() -> Value {
    relation_schema(
        json!({
            "columns": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "name": { "type": "string" },
                        "type": { "type": "string" },
                        "nullable": { "type": "boolean" },
                        "default": nullable("string"),
                        "primary_key": { "type": "boolean" },
                        "unique": { "type": "boolean" },
                        "references": {
                            "anyOf": [
                                {
                                    "type": "object",
                                    "properties": {
                                        "table": { "type": "string" },
                                        "column": { "type": "string" }
                                    },
                                    "required": ["table", "column"]
                                },
                                { "type": "null" }
                            ]
                        },
                        "comment": nullable("string")
                    },
                    "required": ["name", "type", "nullable", "default", "primary_key", "unique", "references", "comment"]
                }
            },
            "indexes": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "name": { "type": "string" },
                        "unique": { "type": "boolean" },
                        "sql": nullable("string")
                    },
                    "required": ["name", "unique", "sql"]
                }
            },
            "foreign_keys": { "type": "array", "items": foreign_key_schema() },
            "referenced_by": { "type": "array", "items": foreign_key_schema() }
        }),
        &["columns", "indexes", "foreign_keys", "referenced_by"],
    )
}

tool! {
    /// The `describe_table` tool.
    DescribeTable(DescribeTableArgs), "Describe a table"
}

/// Most columns of a file described.
const MAX_FILE_COLUMNS: usize = 10_000;

/// The table or the file the agent named ([`ToolContext::relation`]).
async fn run(server: &ToolContext<'_>, args: DescribeTableArgs, context: &Request) -> Answer {
    check_not_blank::<DescribeTable>("table_name", &args.table_name)?;
    let (schema, database) = (args.schema.as_deref(), args.database.as_deref());
    match server.relation(&args.table_name, schema, database).await? {
        Relation::File(path) => describe_file(server, path, context).await,
        Relation::Table(catalog, table) => Ok(Reply::ok(
            Status::Success,
            table_detail(&catalog, &table),
            &["sample_rows", "query"],
            render::table_text(
                &table,
                &outgoing_keys(&catalog, &table),
                catalog.default_database(),
            ),
        )),
    }
}

/// A file's columns, as DuckDB binds them (`DESCRIBE SELECT * FROM 'path'`, a query checked
/// like any other): hidden columns of a file do not exist there either.
async fn describe_file(server: &ToolContext<'_>, path: &str, context: &Request) -> Answer {
    let (data, text) =
        with_progress(file_detail(server, path, context.ct.clone()), context).await?;
    Ok(Reply::ok(
        Status::Success,
        data,
        &["sample_rows", "query"],
        text,
    ))
}

/// What `describe_table` and the `schema://file/{path}` resource show of a file: its columns,
/// in the shape of a table's, and its text.
pub(crate) async fn file_detail(
    server: &ToolContext<'_>,
    path: &str,
    cancel: tokio_util::sync::CancellationToken,
) -> Result<(Value, String), ErrorBody> {
    let sql = format!(
        "DESCRIBE SELECT * FROM {}",
        crate::sql_text::quote_literal(path)
    );
    let result = server
        .gateway()
        .query(&sql, MAX_FILE_COLUMNS, cancel)
        .await
        .map_err(|e| {
            server.gateway_error(
                e,
                Some((ToolName::DescribeTable, json!({ "table_name": path }))),
            )
        })?;
    let text_at = |row: &[Value], i: usize| {
        row.get(i)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    let columns: Vec<Value> = result
        .rows
        .iter()
        .map(|row| {
            json!({
                "name": text_at(row, 0),
                "type": text_at(row, 1),
                "nullable": text_at(row, 2) != "NO",
                "default": null,
                "primary_key": false,
                "unique": false,
                "references": null,
                "comment": null,
            })
        })
        .collect();
    let folder = path.split_once('/').map_or(path, |(folder, _)| folder);
    let format = crate::folders::format_of(path);
    let mut text = format!(
        "{} (a {format} file of the folder {folder}): {} columns\n",
        render::inline(path),
        columns.len()
    );
    for row in &result.rows {
        text.push_str(&format!(
            "  {} {}\n",
            render::inline(&text_at(row, 0)),
            render::inline(&text_at(row, 1))
        ));
    }
    if result.truncated {
        text.push_str(&format!(
            "Only the first {MAX_FILE_COLUMNS} columns are shown.\n"
        ));
    }
    let data = json!({
        "database": null,
        "schema": folder,
        "name": path,
        "kind": "file",
        "description": format!("A {format} file of the declared folder {folder}; query it as FROM '{path}'."),
        "estimated_rows": null,
        "columns": columns,
        "indexes": [],
        "foreign_keys": [],
        "referenced_by": [],
    });
    Ok((data, text))
}

tool_arguments! {
    /// `describe_table` arguments.
    pub struct DescribeTableArgs {
        /// The table.
        pub table_name: String = TABLE_NAME,
        /// Its schema.
        pub schema: Option<String> = SCHEMA,
        /// Its database.
        pub database: Option<String> = DATABASE,
    }
}
