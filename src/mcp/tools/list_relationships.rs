//! `list_relationships`: the foreign keys across the database.

use serde_json::{Value, json};

use super::context::ToolContext;
use super::tool::{Answer, NoArgs, Request, tool};
use crate::mcp::envelope::{Reply, Status};
use crate::mcp::render;

fn description(_time_zone: &str) -> String {
    "Use this when you join tables and need the right join columns: lists the \
     foreign keys of every database as table(columns) → referenced \
     table(columns). \
     Use describe_table instead when you care about one table only. \
     Common compositions: list_tables → list_relationships → query with JOIN."
        .to_owned()
}

fn data_schema() -> Value {
    json!({
        "type": "object",
        "properties": { "foreign_keys": { "type": "array", "items": foreign_key_schema() } },
        "required": ["foreign_keys"]
    })
}

/// One foreign key as the catalog gives it (here, and in `describe_table`'s data).
pub(crate) fn foreign_key_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "database": { "type": "string" },
            "table": { "type": "string" },
            "columns": { "type": "array", "items": { "type": "string" } },
            "referenced_table": { "type": "string" },
            "referenced_columns": { "type": "array", "items": { "type": "string" } }
        },
        "required": ["database", "table", "columns", "referenced_table", "referenced_columns"]
    })
}

tool! {
    /// The `list_relationships` tool.
    ListRelationships(NoArgs), "List foreign keys"
}

/// Every declared foreign key, one line each.
async fn run(server: &ToolContext<'_>, _args: NoArgs, _context: &Request) -> Answer {
    let catalog = server.catalog().await?;
    let keys = &catalog.foreign_keys;
    let text = if keys.is_empty() {
        "No foreign keys are declared in this database.".to_string()
    } else {
        let lines: Vec<String> = keys
            .iter()
            .map(|k| {
                format!(
                    "- {}",
                    render::foreign_key_text(k, catalog.default_database())
                )
            })
            .collect();
        format!("{} foreign keys:\n{}", keys.len(), lines.join("\n"))
    };
    let status = if keys.is_empty() {
        Status::Empty
    } else {
        Status::Success
    };
    let hints: &[&str] = if keys.is_empty() {
        &["describe_table"]
    } else {
        &["query"]
    };
    Ok(Reply::ok(
        status,
        json!({ "foreign_keys": keys }),
        hints,
        text,
    ))
}
