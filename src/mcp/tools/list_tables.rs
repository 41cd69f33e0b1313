//! `list_tables`: the tables and views, with descriptions and estimated row counts.

use serde_json::{Value, json};

use super::arguments::{Argument, tool_arguments};
use super::catalog_lookup::{MAX_FUZZY_MATCHES, check_database, schema_names};
use super::context::ToolContext;
use super::name::ToolName;
use super::tool::{Answer, Request, relation_schema, tool};
use crate::mcp::envelope::{ErrorBody, Reply, Status};
use crate::mcp::fuzzy;
use crate::mcp::render;
use crate::protocol::TableInfo;
use duckgate_validate::error::ErrorKind;

fn description(_time_zone: &str) -> String {
    "Use this when you start exploring or need exact table names: lists the tables \
     and views of every database with their descriptions and estimated row counts \
     (the default database's are named schema.name in SQL, another's \
     database.schema.name). \
     Use search_schema instead when you look for a column or topic by keyword. \
     Common compositions: list_tables → describe_table → query; \
     list_tables → list_relationships to plan joins."
        .to_owned()
}

fn data_schema() -> Value {
    json!({
        "type": "object",
        "properties": { "tables": { "type": "array", "items": table_summary_schema() } },
        "required": ["tables"]
    })
}

fn table_summary_schema() -> Value {
    relation_schema(
        json!({ "column_count": { "type": "integer", "minimum": 0 } }),
        &["column_count"],
    )
}

tool! {
    /// The `list_tables` tool.
    ListTables(ListTablesArgs), "List tables"
}

/// The tables and views, of one database and one schema if `args` name ones that exist.
async fn run(server: &ToolContext<'_>, args: ListTablesArgs, _context: &Request) -> Answer {
    let catalog = server.catalog().await?;
    if let Some(database) = &args.database {
        check_database(&catalog, database, Some(json!({}))).await?;
    }
    if let Some(schema) = &args.schema {
        let schemas = schema_names(&catalog);
        if !schemas.iter().any(|s| s.eq_ignore_ascii_case(schema)) {
            let mut error = ErrorBody::new(
                ErrorKind::UnknownName,
                format!(
                    "Schema '{schema}' does not exist. Schemas: {}.",
                    schemas.join(", ")
                ),
            )
            .construct(schema.clone())
            .suggest(ToolName::ListTables.as_str(), Some(json!({})));
            error.recovery.fuzzy_matches = fuzzy::closest_off_thread(
                schema,
                schemas.iter().map(String::as_str),
                MAX_FUZZY_MATCHES,
            )
            .await;
            return Err(error);
        }
    }
    let tables: Vec<TableInfo> = catalog
        .tables
        .iter()
        .filter(|t| {
            args.schema
                .as_ref()
                .is_none_or(|s| t.schema.eq_ignore_ascii_case(s))
                && args
                    .database
                    .as_ref()
                    .is_none_or(|d| t.database.eq_ignore_ascii_case(d))
        })
        .cloned()
        .collect();
    let summaries: Vec<Value> = tables
        .iter()
        .map(|t| {
            json!({
                "database": t.database, "schema": t.schema, "name": t.name, "kind": t.kind,
                "description": t.description, "estimated_rows": t.estimated_rows,
                "column_count": t.columns.len()
            })
        })
        .collect();
    let status = if tables.is_empty() {
        Status::Empty
    } else {
        Status::Success
    };
    let hints: &[&str] = if tables.is_empty() {
        &[]
    } else {
        &["describe_table", "search_schema"]
    };
    Ok(Reply::ok(
        status,
        json!({ "tables": summaries }),
        hints,
        render::tables_text(&tables, &catalog.databases),
    ))
}

tool_arguments! {
    /// `list_tables` arguments.
    pub struct ListTablesArgs {
        /// Only this schema.
        pub schema: Option<String> = Argument::described("Only tables of this schema."),
        /// Only this database.
        pub database: Option<String> = Argument::described("Only tables of this database."),
    }
}
