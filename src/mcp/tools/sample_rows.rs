//! `sample_rows`: the first rows of a table, optionally only some columns.

use serde_json::{Value, json};

use super::arguments::{Argument, tool_arguments};
use super::catalog_lookup::MAX_FUZZY_MATCHES;
use super::context::{Relation, ToolContext, with_progress};
use super::name::ToolName;
use super::query::{rows_reply, rows_schema};
use super::tool::{
    Answer, DATABASE, Request, SCHEMA, TABLE_NAME, check_limit, check_not_blank, tool,
};
use crate::mcp::envelope::ErrorBody;
use crate::mcp::fuzzy;
use crate::sql_text::quote_identifier;
use duckgate_validate::error::ErrorKind;

/// Rows `sample_rows` returns when no limit is given.
pub const DEFAULT_LIMIT: i64 = 10;
/// Most rows `sample_rows` returns.
pub const MAX_LIMIT: i64 = 100;

fn description(_time_zone: &str) -> String {
    format!(
        "Use this when you want to see what values look like before writing a query: \
         returns the first rows of a table or a data file (limit 1–{MAX_LIMIT}, default {DEFAULT_LIMIT}), \
         optionally only the named columns. \
         Use query instead when you need filters, ordering or aggregates. \
         Common compositions: describe_table → sample_rows → query."
    )
}

/// `query`'s rows, and the SQL this tool built.
fn data_schema() -> Value {
    rows_schema(true)
}

tool! {
    /// The `sample_rows` tool.
    SampleRows(SampleRowsArgs), "Sample rows of a table"
}

/// `SELECT` the named columns of the named table, both resolved in the catalog, `LIMIT` rows.
async fn run(server: &ToolContext<'_>, args: SampleRowsArgs, context: &Request) -> Answer {
    check_not_blank::<SampleRows>("table_name", &args.table_name)?;
    let table_name = args.table_name.clone();
    let limit = check_limit(
        ToolName::SampleRows,
        args.limit,
        DEFAULT_LIMIT,
        MAX_LIMIT,
        |limit| json!({ "table_name": table_name, "limit": limit }),
    )?;
    let (schema, database) = (args.schema.as_deref(), args.database.as_deref());
    let (catalog, table) = match server.relation(&args.table_name, schema, database).await? {
        Relation::File(path) => {
            return sample_file(server, path, args.columns.as_deref(), limit, context).await;
        }
        Relation::Table(catalog, table) => (catalog, table),
    };
    // The arguments that name this table again in a next step: its database only when it is
    // not the default.
    let in_default = catalog.in_default_database(&table);
    let naming = |mut args: Value| {
        if let (false, Some(object)) = (in_default, args.as_object_mut()) {
            object.insert("database".into(), json!(table.database));
        }
        args
    };
    let columns: Vec<&str> = match &args.columns {
        None => table.columns.iter().map(|c| c.name.as_str()).collect(),
        Some(wanted) if wanted.is_empty() => {
            return Err(ErrorBody::new(
                ErrorKind::InvalidArgument,
                format!(
                    "columns must name at least one column of {}; leave it out for all columns.",
                    table.name
                ),
            )
            .construct("columns"));
        }
        Some(wanted) => {
            let mut resolved = Vec::with_capacity(wanted.len());
            for name in wanted {
                match table
                    .columns
                    .iter()
                    .find(|c| c.name.eq_ignore_ascii_case(name))
                {
                    Some(column) => resolved.push(column.name.as_str()),
                    None => {
                        let allowed: Vec<&str> =
                            table.columns.iter().map(|c| c.name.as_str()).collect();
                        let mut error = ErrorBody::new(
                            ErrorKind::InvalidArgument,
                            format!(
                                "Column '{name}' is not in {}.{}. Allowed columns: {}.",
                                table.schema,
                                table.name,
                                allowed.join(", ")
                            ),
                        )
                        .construct(name.clone())
                        .suggest(
                            ToolName::DescribeTable.as_str(),
                            Some(naming(
                                json!({ "table_name": table.name, "schema": table.schema }),
                            )),
                        );
                        error.recovery.fuzzy_matches = fuzzy::closest_off_thread(
                            name,
                            allowed.iter().copied(),
                            MAX_FUZZY_MATCHES,
                        )
                        .await;
                        return Err(error);
                    }
                }
            }
            resolved
        }
    };
    // Identifiers come from the catalog, never from the agent's text, and are quoted; another
    // database's table is named with its database, the default's as before.
    let select_list: Vec<String> = columns.iter().map(|c| quote_identifier(c)).collect();
    let database = if in_default {
        String::new()
    } else {
        format!("{}.", quote_identifier(&table.database))
    };
    let sql = format!(
        "SELECT {} FROM {database}{}.{} LIMIT {limit}",
        select_list.join(", "),
        quote_identifier(&table.schema),
        quote_identifier(&table.name)
    );
    let run = server.gateway().query(&sql, limit, context.ct.clone());
    let result = with_progress(run, context).await.map_err(|e| {
        server.gateway_error(
            e,
            Some((
                ToolName::SampleRows,
                naming(json!({ "table_name": table.name, "schema": table.schema, "limit": limit })),
            )),
        )
    })?;
    let budget = server.gateway().config().max_reply_bytes;
    Ok(rows_reply(result, Some(sql), limit, budget))
}

/// The first rows of a file (`SELECT … FROM 'path' LIMIT n`, a query checked like any other);
/// the columns asked for are quoted, and a missing one is DuckDB's own error.
async fn sample_file(
    server: &ToolContext<'_>,
    path: &str,
    columns: Option<&[String]>,
    limit: usize,
    context: &Request,
) -> Answer {
    let select_list = match columns {
        None => "*".to_owned(),
        Some([]) => {
            return Err(ErrorBody::new(
                ErrorKind::InvalidArgument,
                format!(
                    "columns must name at least one column of {path}; leave it out for all columns."
                ),
            )
            .construct("columns"));
        }
        Some(columns) => columns
            .iter()
            .map(|c| quote_identifier(c))
            .collect::<Vec<_>>()
            .join(", "),
    };
    let sql = format!(
        "SELECT {select_list} FROM {} LIMIT {limit}",
        crate::sql_text::quote_literal(path)
    );
    let run = server.gateway().query(&sql, limit, context.ct.clone());
    let result = with_progress(run, context).await.map_err(|e| {
        server.gateway_error(
            e,
            Some((
                ToolName::SampleRows,
                json!({ "table_name": path, "limit": limit }),
            )),
        )
    })?;
    let budget = server.gateway().config().max_reply_bytes;
    Ok(rows_reply(result, Some(sql), limit, budget))
}

tool_arguments! {
    /// `sample_rows` arguments.
    pub struct SampleRowsArgs {
        /// The table.
        pub table_name: String = TABLE_NAME,
        /// Its schema.
        pub schema: Option<String> = SCHEMA,
        /// Its database.
        pub database: Option<String> = DATABASE,
        /// Rows (1 to [`MAX_LIMIT`]).
        pub limit: Option<i64> =
            Argument::described("Rows to return.").limit(MAX_LIMIT, DEFAULT_LIMIT),
        /// Only these columns.
        pub columns: Option<Vec<String>> =
            Argument::described("Only these columns (default: all)."),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers_are_quoted_with_inner_quotes_doubled() {
        assert_eq!(quote_identifier("cgm_readings"), "\"cgm_readings\"");
        assert_eq!(quote_identifier("we\"ird; DROP"), "\"we\"\"ird; DROP\"");
    }
}
