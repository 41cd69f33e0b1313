//! `describe_table`: one table's columns, keys and indexes.

use serde_json::{Value, json};

use super::arguments::tool_arguments;
use super::catalog_lookup::{find_table, outgoing_keys, table_detail};
use super::context::ToolContext;
use super::list_relationships::foreign_key_schema;
use super::tool::{Answer, Request, SCHEMA, TABLE_NAME, check_not_blank, relation_schema, tool};
use crate::mcp::envelope::{Reply, Status, nullable};
use crate::mcp::render;

fn description(_time_zone: &str) -> String {
    "Use this when you are about to write SQL and need exact column names and types: \
     shows one table's columns (name, type, nullable, default, keys, foreign-key \
     references, comments) and indexes. \
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

/// The table the agent named, found as [`find_table`] finds it.
async fn run(server: &ToolContext<'_>, args: DescribeTableArgs, _context: &Request) -> Answer {
    check_not_blank::<DescribeTable>("table_name", &args.table_name)?;
    let catalog = server.catalog().await?;
    let table = find_table(&catalog, &args.table_name, args.schema.as_deref()).await?;
    Ok(Reply::ok(
        Status::Success,
        table_detail(&catalog, table),
        &["sample_rows", "query"],
        render::table_text(table, &outgoing_keys(&catalog, table)),
    ))
}

tool_arguments! {
    /// `describe_table` arguments.
    pub struct DescribeTableArgs {
        /// The table.
        pub table_name: String = TABLE_NAME,
        /// Its schema.
        pub schema: Option<String> = SCHEMA,
    }
}
