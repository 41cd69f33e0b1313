//! `list_relationships`: the foreign keys across the database.

use rmcp::service::{RequestContext, RoleServer};
use serde_json::{Value, json};

use super::context::ToolContext;
use super::{NoArgs, Tool, ToolSpec};
use crate::mcp::envelope::{ErrorBody, Reply, Status};
use crate::mcp::render;

fn description(_time_zone: &str) -> String {
    "Use this when you join tables and need the right join columns: lists the \
     foreign keys across the database as table(columns) → referenced \
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
            "table": { "type": "string" },
            "columns": { "type": "array", "items": { "type": "string" } },
            "referenced_table": { "type": "string" },
            "referenced_columns": { "type": "array", "items": { "type": "string" } }
        },
        "required": ["table", "columns", "referenced_table", "referenced_columns"]
    })
}

/// The `list_relationships` tool.
pub(crate) struct ListRelationships;

impl Tool for ListRelationships {
    type Arguments = NoArgs;
    const SPEC: ToolSpec = ToolSpec {
        name: "list_relationships",
        title: "List foreign keys",
        description,
        data_schema,
    };

    /// Every declared foreign key, one line each.
    async fn run(
        server: &ToolContext<'_>,
        _args: NoArgs,
        _context: &RequestContext<RoleServer>,
    ) -> Result<Reply, ErrorBody> {
        let catalog = server.catalog().await?;
        let keys = &catalog.foreign_keys;
        let text = if keys.is_empty() {
            "No foreign keys are declared in this database.".to_string()
        } else {
            let lines: Vec<String> = keys
                .iter()
                .map(|k| format!("- {}", render::foreign_key_text(k)))
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
}
