//! `search_schema`: tables and columns whose name, description or comment contains a text.

use std::sync::Arc;

use serde_json::{Value, json};

use super::arguments::{Argument, tool_arguments};
use super::caps::MAX_SEARCH_BYTES;
use super::catalog_lookup::{MAX_FUZZY_MATCHES, SchemaMatch, search};
use super::context::ToolContext;
use super::name::ToolName;
use super::tool::{Answer, Request, check_limit, check_not_blank, tool};
use crate::mcp::envelope::{Reply, Status, nullable};
use crate::mcp::fuzzy;

/// Matches `search_schema` returns when no limit is given.
pub const DEFAULT_LIMIT: i64 = 20;
/// Most matches `search_schema` returns.
pub const MAX_LIMIT: i64 = 50;

/// The `query` text's cap, [`MAX_SEARCH_BYTES`].
fn search_text_cap() -> usize {
    MAX_SEARCH_BYTES
}

fn description(_time_zone: &str) -> String {
    format!(
        "Use this when you know the topic (e.g. glucose, bolus) but not the table or \
         column name: finds tables and columns whose name, description or comment \
         contains a text (case-insensitive; limit 1–{MAX_LIMIT}, default {DEFAULT_LIMIT}). \
         Use list_tables instead when you want every table. \
         Common compositions: search_schema → describe_table → query."
    )
}

fn data_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "query": { "type": "string" },
            "matches": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "kind": { "type": "string", "enum": ["table", "column"] },
                        "schema": { "type": "string" },
                        "table": { "type": "string" },
                        "column": nullable("string"),
                        "type": nullable("string"),
                        "matched_in": { "type": "string", "enum": ["name", "description", "comment"] },
                        "text": nullable("string")
                    },
                    "required": ["kind", "schema", "table", "column", "type", "matched_in", "text"]
                }
            },
            "truncated": { "type": "boolean" },
            "did_you_mean": { "type": "array", "items": { "type": "string" } }
        },
        "required": ["query", "matches", "truncated", "did_you_mean"]
    })
}

tool! {
    /// The `search_schema` tool.
    SearchSchema(SearchArgs), "Search the schema"
}

/// The catalog's matches for `args.query` ([`search`]); "did you mean" when there are none.
async fn run(server: &ToolContext<'_>, args: SearchArgs, _context: &Request) -> Answer {
    check_not_blank::<SearchSchema>("query", &args.query)?;
    let needle = args.query.trim().to_string();
    let query_for_retry = needle.clone();
    let limit = check_limit(
        ToolName::SearchSchema,
        args.limit,
        DEFAULT_LIMIT,
        MAX_LIMIT,
        |limit| json!({ "query": query_for_retry, "limit": limit }),
    )?;
    let catalog = server.catalog().await?;
    let mut matches = search(&catalog, &needle);
    let truncated = matches.len() > limit;
    matches.truncate(limit);
    let did_you_mean = if matches.is_empty() {
        fuzzy::catalog_matches_off_thread(
            &needle,
            Arc::clone(&catalog),
            fuzzy::Looking::ForTable,
            MAX_FUZZY_MATCHES,
        )
        .await
        .iter()
        .map(fuzzy::CatalogMatch::written)
        .collect()
    } else {
        Vec::new()
    };
    let mut text = if matches.is_empty() {
        format!(
            "No table or column mentions '{}'.",
            crate::mcp::render::inline(&needle)
        )
    } else {
        format!(
            "{} matches for '{}':",
            matches.len(),
            crate::mcp::render::inline(&needle)
        )
    };
    for found in &matches {
        text.push_str(&format!("\n- {}", found.line()));
    }
    if truncated {
        text.push_str(&format!(
            "\n(more matches exist; raise limit up to {MAX_LIMIT})"
        ));
    }
    if !did_you_mean.is_empty() {
        let names: Vec<_> = did_you_mean
            .iter()
            .map(|name| crate::mcp::render::inline(name))
            .collect();
        text.push_str(&format!("\nDid you mean: {}?", names.join(", ")));
    }
    let status = match (matches.is_empty(), truncated) {
        (true, _) => Status::Empty,
        (false, true) => Status::Partial,
        (false, false) => Status::Success,
    };
    let hints: &[&str] = if matches.is_empty() {
        &["list_tables"]
    } else {
        &["describe_table"]
    };
    let data = json!({
        "query": needle,
        "matches": matches.iter().map(SchemaMatch::to_json).collect::<Vec<_>>(),
        "truncated": truncated,
        "did_you_mean": did_you_mean,
    });
    Ok(Reply::ok(status, data, hints, text))
}

tool_arguments! {
    /// `search_schema` arguments.
    pub struct SearchArgs {
        /// The text.
        pub query: String =
            Argument::described("Text to look for in table/column names, descriptions and comments.")
                .long_text(search_text_cap),
        /// Matches (1 to [`MAX_LIMIT`]).
        pub limit: Option<i64> =
            Argument::described("Most matches to return.").limit(MAX_LIMIT, DEFAULT_LIMIT),
    }
}
