//! `describe_table`: one table's columns, keys and indexes.

use serde::Deserialize;
use serde_json::{Value, json};

use super::context::ToolContext;
use super::list_relationships::foreign_key_schema;
use super::{
    ToolName, ToolSpec, arguments_schema, check_not_blank, relation_schema, schema_argument,
    table_name_argument,
};
use crate::mcp::catalog_lookup::{find_table, outgoing_keys, table_detail};
use crate::mcp::envelope::{ErrorBody, Reply, Status, nullable};
use crate::mcp::render;

/// `describe_table` in `tools/list`.
pub static SPEC: ToolSpec = ToolSpec {
    name: "describe_table",
    title: "Describe a table",
    description,
    input_schema,
    data_schema,
    signature,
    long_text: None,
};

fn description(_time_zone: &str) -> String {
    "Use this when you are about to write SQL and need exact column names and types: \
     shows one table's columns (name, type, nullable, default, keys, foreign-key \
     references, comments) and indexes. \
     Use sample_rows instead when you want to see actual values. \
     Common compositions: list_tables → describe_table → query; \
     describe_table → sample_rows."
        .to_owned()
}

fn input_schema() -> Value {
    arguments_schema(
        json!({ "table_name": table_name_argument(), "schema": schema_argument() }),
        json!(["table_name"]),
    )
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

fn signature() -> String {
    "describe_table(table_name: string, schema?: string)".to_owned()
}

/// `describe_table` arguments.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DescribeTableArgs {
    /// The table.
    pub table_name: String,
    /// Its schema.
    pub schema: Option<String>,
}

/// The table the agent named, found as [`find_table`] finds it.
pub(crate) async fn run(
    server: &ToolContext<'_>,
    args: DescribeTableArgs,
) -> Result<Reply, ErrorBody> {
    check_not_blank(ToolName::DescribeTable, "table_name", &args.table_name)?;
    let catalog = server.catalog().await?;
    let table = find_table(&catalog, &args.table_name, args.schema.as_deref()).await?;
    Ok(Reply::ok(
        Status::Success,
        table_detail(&catalog, table),
        &["sample_rows", "query"],
        render::table_text(table, &outgoing_keys(&catalog, table)),
    ))
}
