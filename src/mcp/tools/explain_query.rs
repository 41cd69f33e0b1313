//! `explain_query`: DuckDB's plan for a read-only query, without running it, and a summary.

use serde_json::{Value, json};

use super::arguments::tool_arguments;
use super::context::{ToolContext, with_progress};
use super::name::ToolName;
use super::tool::{Answer, Request, SQL, check_not_blank, tool};
use crate::mcp::envelope::{Reply, Status};

fn description(_time_zone: &str) -> String {
    "Use this when a query timed out or you want to check a join first: shows \
     DuckDB's plan for a read-only query without running it, with a short summary \
     of operators and scanned tables; the SQL is checked like query's. \
     Use query instead when you want the results. \
     Common compositions: query (timeout) → explain_query → query with filters."
        .to_owned()
}

fn data_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "plan": {
                "description": "DuckDB's plan as JSON: the list of physical operators \
                                (name, children, extra_info), or an object of plans by \
                                kind for EXPLAIN ANALYZE",
                "anyOf": [{ "type": "array" }, { "type": "object" }]
            },
            "summary": { "type": "string" }
        },
        "required": ["plan", "summary"]
    })
}

tool! {
    /// The `explain_query` tool.
    ExplainQuery(ExplainArgs), "Explain a query plan"
}

/// The plan of `args.sql`, which a worker checks as it would check the query and then plans.
async fn run(server: &ToolContext<'_>, args: ExplainArgs, context: &Request) -> Answer {
    check_not_blank::<ExplainQuery>("sql", &args.sql)?;
    let run = server.gateway().explain(&args.sql, context.ct.clone());
    let result = with_progress(run, context).await.map_err(|e| {
        server.gateway_error(
            e,
            Some((ToolName::ExplainQuery, json!({ "sql": args.sql }))),
        )
    })?;
    let summary = plan_summary(&result.plan);
    Ok(Reply::ok(
        Status::Success,
        json!({ "plan": result.plan, "summary": summary }),
        &["query"],
        format!("Query plan (not executed):\n{summary}"),
    ))
}

tool_arguments! {
    /// `explain_query` arguments.
    pub struct ExplainArgs {
        /// The SQL.
        pub sql: String = SQL,
    }
}

/// An indented tree of operator names with the tables they scan, from DuckDB's JSON plan.
///
/// A second walk over DuckDB's plan JSON beside the worker's plan check
/// (`engine::plan_check`), kept apart on purpose: the two share neither input, order nor
/// failure mode.
/// - The check reads, in the confined worker, the plans it asked DuckDB for, and refuses every
///   shape it does not know (a node without `name`, `children` and `extra_info` is a refusal).
///   This walk reads, in the parent, whatever plan JSON the worker handed back for the agent
///   (one plan, or an object of plans by kind, as the data schema says), whose nodes may name
///   their operator in `name` or `operator_name` and may sit under objects without a name; it
///   describes what it recognises and never fails.
/// - The check visits nodes in any order from an explicit stack and keeps no depth; the summary
///   needs each operator before its children, children in order, and the depth for the indent.
///
/// One shared walk would make the security check lenient or this one strict, so each keeps its
/// own; nothing here decides what may run.
pub fn plan_summary(plan: &Value) -> String {
    fn walk(node: &Value, depth: usize, lines: &mut Vec<String>, tables: &mut Vec<String>) {
        match node {
            Value::Array(nodes) => {
                for child in nodes {
                    walk(child, depth, lines, tables);
                }
            }
            Value::Object(map) => {
                let name = map
                    .get("name")
                    .or_else(|| map.get("operator_name"))
                    .and_then(Value::as_str);
                let mut next_depth = depth;
                if let Some(name) = name {
                    // A table's name is the database's text: one line, whatever it holds.
                    let mut line = format!(
                        "{}{}",
                        "  ".repeat(depth),
                        crate::mcp::render::inline(name.trim())
                    );
                    if let Some(Value::Object(extra)) = map.get("extra_info") {
                        if let Some(table) = extra.get("Table").and_then(Value::as_str) {
                            line.push_str(&format!(" {}", crate::mcp::render::inline(table)));
                            if !tables.iter().any(|t| t == table) {
                                tables.push(table.to_string());
                            }
                        }
                        if let Some(rows) =
                            extra.get("Estimated Cardinality").and_then(Value::as_str)
                        {
                            let rows = crate::mcp::render::inline(rows.trim());
                            line.push_str(&format!(" (~{rows} rows)"));
                        }
                    }
                    lines.push(line);
                    next_depth = depth + 1;
                }
                if let Some(children) = map.get("children") {
                    walk(children, next_depth, lines, tables);
                }
            }
            Value::Null | Value::Bool(_) | Value::Number(_) | Value::String(_) => {}
        }
    }
    let mut lines = Vec::new();
    let mut tables = Vec::new();
    walk(plan, 0, &mut lines, &mut tables);
    if lines.is_empty() {
        return "DuckDB returned a plan with no recognisable operators; see data.plan.".to_string();
    }
    let scans = if tables.is_empty() {
        "no tables".to_string()
    } else {
        let tables: Vec<_> = tables
            .iter()
            .map(|table| crate::mcp::render::inline(table))
            .collect();
        tables.join(", ")
    };
    format!("{}\nScans: {scans}.", lines.join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plan_summary_shows_the_operator_tree_and_the_scanned_tables() {
        let plan = json!([{
            "name": "PROJECTION", "children": [{
                "name": "HASH_GROUP_BY", "children": [{
                    "name": "SEQ_SCAN ", "children": [],
                    "extra_info": { "Table": "cgm_readings", "Estimated Cardinality": "105120" }
                }]
            }]
        }]);
        assert_eq!(
            plan_summary(&plan),
            "PROJECTION\n  HASH_GROUP_BY\n    SEQ_SCAN cgm_readings (~105120 rows)\nScans: cgm_readings."
        );
        assert!(plan_summary(&json!({})).contains("no recognisable operators"));
    }
}
