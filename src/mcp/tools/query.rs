//! `query`: run one read-only SQL statement and return its rows.

use serde_json::{Value, json};

use super::arguments::{Argument, tool_arguments};
use super::context::{ToolContext, with_progress};
use super::name::ToolName;
use super::tool::{Answer, Request, SQL, check_limit, check_not_blank, tool};
use crate::mcp::envelope::{Reply, Status};
use crate::mcp::render;
use crate::protocol::QueryResult;
use crate::protocol::encoding::json_size;

/// Rows `query` returns when no limit is given.
pub const DEFAULT_LIMIT: i64 = 1000;
/// Most rows `query` returns.
pub const MAX_LIMIT: i64 = 10_000;

/// States the workers' `time_zone`: what now(), current_date and TIMESTAMPTZ dates mean.
fn description(time_zone: &str) -> String {
    format!(
        "Use this when you know the tables and columns: run one read-only SQL \
         statement (SELECT, WITH, VALUES, PIVOT, DESCRIBE, SUMMARIZE); limit caps rows \
         (1–{MAX_LIMIT}, default {DEFAULT_LIMIT}); a reply past its byte budget is cut. \
         Local time is {time_zone}: now(), current_date and TIMESTAMPTZ values (with \
         offset) use it. Use sample_rows instead when you want a peek at a table. \
         Common compositions: describe_table → query; query (aggregate) → query \
         (drill down); query timed out → explain_query."
    )
}

fn data_schema() -> Value {
    rows_schema(false)
}

/// Rows of a result: an array of rows, each an array of values in column order.
///
/// The row's shape is said in the description, not with `items`: a schema with `items` makes a
/// client's validator descend into every row, and the official Python SDK checks every result it
/// receives. Measured with its jsonschema validator on a 1,000-row result: 7.6 ms with
/// `items: {type: array}`, 0.1 ms without, more than the whole round trip in the Rust client. The
/// rows are built by `engine::convert` as arrays, so the check could never fail.
pub(crate) fn row_arrays_schema() -> Value {
    json!({
        "type": "array",
        "description": format!(
            "One array per row, its values in the order of `columns`. {}",
            crate::protocol::encoding::VALUE_ENCODING
        )
    })
}

/// The data of a result's rows (`query`'s), with the SQL that ran when `with_sql`
/// (`sample_rows`', which builds its own).
pub(crate) fn rows_schema(with_sql: bool) -> Value {
    let mut schema = json!({
        "type": "object",
        "properties": {
            "columns": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": { "name": { "type": "string" }, "type": { "type": "string" } },
                    "required": ["name", "type"]
                }
            },
            "rows": row_arrays_schema(),
            "row_count": { "type": "integer", "minimum": 0 },
            "truncated": { "type": "boolean" },
            "truncated_by": {
                "anyOf": [
                    { "type": "string", "enum": ["limit", "reply_budget"] },
                    { "type": "null" }
                ],
                "description": "Why rows are missing: the row limit, or the reply's byte budget (text and structured content together); null when none are."
            },
            "rows_left_out": {
                "type": "integer", "minimum": 0,
                "description": "Rows read but left out to fit the reply's byte budget (the query may have more beyond them when truncated_by is set)."
            },
            "next_step": {
                "anyOf": [{ "type": "string" }, { "type": "null" }],
                "description": "What to do instead when rows were cut."
            },
            "duration_ms": { "type": "number", "minimum": 0 }
        },
        "required": ROWS_REQUIRED
    });
    if with_sql && let Some(object) = schema.as_object_mut() {
        if let Some(properties) = object.get_mut("properties").and_then(Value::as_object_mut) {
            properties.insert("sql".into(), json!({ "type": "string" }));
        }
        let mut required = ROWS_REQUIRED.to_vec();
        required.push("sql");
        object.insert("required".into(), json!(required));
    }
    schema
}

/// The fields of [`rows_schema`] every reply carries.
const ROWS_REQUIRED: [&str; 8] = [
    "columns",
    "rows",
    "row_count",
    "truncated",
    "truncated_by",
    "rows_left_out",
    "next_step",
    "duration_ms",
];

tool! {
    /// The `query` tool.
    Query(QueryArgs), "Run a read-only SQL query"
}

/// Run `args.sql` with its row limit, with progress notifications while it runs.
async fn run(server: &ToolContext<'_>, args: QueryArgs, context: &Request) -> Answer {
    check_not_blank::<Query>("sql", &args.sql)?;
    let sql = args.sql.clone();
    let limit = check_limit(
        ToolName::Query,
        args.limit,
        DEFAULT_LIMIT,
        MAX_LIMIT,
        |limit| json!({ "sql": sql, "limit": limit }),
    )?;
    let run = server.gateway().query(&args.sql, limit, context.ct.clone());
    let result = with_progress(run, context).await.map_err(|e| {
        let retry_limit = args.limit.unwrap_or(DEFAULT_LIMIT);
        server.gateway_error(
            e,
            Some((
                ToolName::Query,
                json!({ "sql": args.sql, "limit": retry_limit }),
            )),
        )
    })?;
    let budget = server.gateway().config().max_reply_bytes;
    Ok(rows_reply(result, None, limit, budget))
}

tool_arguments! {
    /// `query` arguments.
    pub struct QueryArgs {
        /// The SQL.
        pub sql: String = SQL,
        /// Row limit (checked against 1 to [`MAX_LIMIT`] after parsing, so the error can name
        /// the range).
        pub limit: Option<i64> =
            Argument::described("Most rows to return; more rows mark the result partial.")
                .limit(MAX_LIMIT, DEFAULT_LIMIT),
    }
}

/// Bytes of a reply besides its rows, columns, SQL and text: the envelope's other fields (at
/// most about 400), the `tools/call` result's own and the JSON-RPC frame around it.
const FRAME_BYTES: usize = 768;

/// A result's rows as `query` and `sample_rows` answer: `empty`, `partial` when cut, or
/// `success`; `sql` is what `sample_rows` ran. The rows are cut so that the whole reply, its
/// text and its structured content together, stays within `budget` bytes, and then the reply
/// says how many were left out and what to do instead.
pub(crate) fn rows_reply(
    mut result: QueryResult,
    sql: Option<String>,
    limit: usize,
    budget: usize,
) -> Reply {
    let read = result.rows.len();
    // The worker stops at the limit, or at the budget's worth of JSON rows.
    let more_beyond = result.truncated;
    let by_limit = result.truncated && read >= limit;
    // The text's last line: how many rows, and why and which were left out.
    let closing = |shown: usize| {
        if shown < read || (more_beyond && !by_limit) {
            render::budget_cut(shown, read - shown, more_beyond, budget)
        } else {
            render::rows_returned(shown, result.truncated)
        }
    };
    let (shown, text) = fit_rows(&result, sql.as_deref(), budget, &closing);
    let left_out = read - shown;
    result.rows.truncate(shown);
    result.row_count = shown;
    result.truncated = result.truncated || left_out > 0;
    let truncated_by = if left_out > 0 {
        Some("reply_budget")
    } else if by_limit {
        Some("limit")
    } else if result.truncated {
        Some("reply_budget")
    } else {
        None
    };
    let status = if result.row_count == 0 && !result.truncated {
        Status::Empty
    } else if result.truncated {
        Status::Partial
    } else {
        Status::Success
    };
    let hints: &[&str] = match (status, truncated_by) {
        (Status::Empty, _) => &["sample_rows", "describe_table"],
        (Status::Partial, Some("reply_budget")) => &["query", "plot"],
        (Status::Partial, _) => &["query"],
        (Status::Success | Status::Error | Status::Refused, _) => &[],
    };
    let cut = Cut {
        truncated_by,
        rows_left_out: left_out,
        next_step: truncated_by.map(|by| match by {
            "limit" => render::LIMIT_NEXT_STEP,
            _ => render::BUDGET_NEXT_STEP,
        }),
    };
    // With a row shown, the rows were cut to the budget above, the frame counted; with none,
    // the columns' names alone may be past it (`Reply::within_budget` measures).
    Reply {
        fitted: shown > 0,
        ..Reply::ok(status, rows_data(result, sql, cut), hints, text)
    }
}

/// The most rows of `result` whose reply fits `budget`, with its text (`text_of(rows)`).
///
/// The whole result is tried first. Past the budget, the search starts from an upper bound of
/// each row's bytes (its JSON, and its text line at the widths of all rows read, escaped as
/// JSON), so the rows it picks surely fit; a few exact renderings then add the rows the bound
/// overestimated. A reply is rendered three or four times at most, not once per step of a
/// binary search over the rows (which cost ~8 ms of a 1,000-row call).
fn fit_rows(
    result: &QueryResult,
    sql: Option<&str>,
    budget: usize,
    closing: &dyn Fn(usize) -> String,
) -> (usize, String) {
    let rows = &result.rows;
    let read = rows.len();
    let fixed = FRAME_BYTES + json_size(&result.columns) + sql.map_or(0, |s| json_size(&s));
    // The first `shown` rows; every count asked for here is at most `read`.
    let first = |shown: usize| rows.get(..shown).unwrap_or(rows);
    let text_of = |shown: usize| {
        let mut text = render::rows_table_text(&result.columns, first(shown));
        text.push_str(&closing(shown));
        text
    };
    let exact = |shown: usize| {
        let text = text_of(shown);
        (fixed + json_size(&first(shown)) + json_size(&text), text)
    };
    // Most replies fit whole: one rendering, as without a budget.
    let all_rows = fixed + json_size(rows);
    if all_rows <= budget {
        let text = text_of(read);
        if all_rows + json_size(&text) <= budget {
            return (read, text);
        }
    }
    // Bytes of the rows' JSON array and of the text's lines, for the first k rows (k from 0 to
    // `read`).
    let (header_bound, lines) = render::rows_table_bounds(&result.columns, rows);
    let mut row_json = Vec::with_capacity(read + 1);
    let mut line_bound = Vec::with_capacity(read + 1);
    let (mut json_sum, mut line_sum) = (0usize, 0usize);
    row_json.push(json_sum);
    line_bound.push(line_sum);
    for (i, (row, line)) in rows.iter().zip(lines).enumerate() {
        json_sum += json_size(row) + usize::from(i > 0);
        line_sum += line;
        row_json.push(json_sum);
        line_bound.push(line_sum);
    }
    // The text is the table and the closing line: the table's bound plus that line, escaped.
    let upper = |k: usize| {
        let (rows_json, lines) = (row_json.get(k)?, line_bound.get(k)?);
        Some(fixed + 2 + rows_json + header_bound + lines + json_size(&closing(k)))
    };
    // The most rows whose bound fits.
    let (mut fits, mut too_many) = (0, read);
    while too_many - fits > 1 {
        let middle = fits + (too_many - fits) / 2;
        if upper(middle).is_some_and(|bound| bound <= budget) {
            fits = middle;
        } else {
            too_many = middle;
        }
    }
    let (mut size, mut text) = exact(fits);
    if size > budget {
        // The bound was wrong (it never is for the text duckgate renders): the exact search.
        let (mut fits, mut too_many) = (0, fits);
        while too_many - fits > 1 {
            let middle = fits + (too_many - fits) / 2;
            if exact(middle).0 <= budget {
                fits = middle;
            } else {
                too_many = middle;
            }
        }
        return (fits, text_of(fits));
    }
    // Grow by the room left over the rows' average size (which includes the fixed part, so
    // the guess stays short of the budget): each step closes most of the gap.
    for _ in 0..3 {
        if fits == read || fits == 0 {
            break;
        }
        let per_row = (size / fits).max(1);
        let step = (budget - size) / per_row;
        if step == 0 {
            break;
        }
        let guess = (fits + step).min(read);
        let (guess_size, guess_text) = exact(guess);
        if guess_size > budget {
            break;
        }
        (fits, size, text) = (guess, guess_size, guess_text);
    }
    (fits, text)
}

/// Why rows are missing from a reply, for its data.
struct Cut {
    truncated_by: Option<&'static str>,
    rows_left_out: usize,
    next_step: Option<&'static str>,
}

/// `serde_json::to_value(&result)`, with `sql` when given, moving the rows instead of copying
/// them: a copy of 1,000 rows is thousands of allocations on every call's way out.
fn rows_data(result: QueryResult, sql: Option<String>, cut: Cut) -> Value {
    let rows = Value::Array(result.rows.into_iter().map(Value::Array).collect());
    let rest = QueryResult {
        rows: Vec::new(),
        ..result
    };
    let mut data = serde_json::to_value(&rest).unwrap_or(Value::Null);
    if let Value::Object(map) = &mut data {
        map.insert("rows".into(), rows);
        map.insert("truncated_by".into(), json!(cut.truncated_by));
        map.insert("rows_left_out".into(), json!(cut.rows_left_out));
        map.insert("next_step".into(), json!(cut.next_step));
        if let Some(sql) = sql {
            map.insert("sql".into(), Value::String(sql));
        }
    }
    data
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::ColumnMeta;

    fn readings(n: usize, truncated: bool) -> QueryResult {
        QueryResult {
            columns: vec![
                ColumnMeta {
                    name: "read_at".into(),
                    data_type: "TIMESTAMP WITH TIME ZONE".into(),
                },
                ColumnMeta {
                    name: "glucose".into(),
                    data_type: "INTEGER".into(),
                },
            ],
            rows: (0..n)
                .map(|i| {
                    vec![
                        json!(format!("2026-11-26T22:{:02}:00-05:00", i % 60)),
                        json!(100 + i % 80),
                    ]
                })
                .collect(),
            row_count: n,
            truncated,
            duration_ms: 1.25,
        }
    }

    /// The bytes of the reply as a client receives it: the `tools/call` result as JSON.
    fn wire_bytes(reply: Reply) -> usize {
        serde_json::to_vec(&reply.into_result()).unwrap().len()
    }

    #[test]
    fn rows_data_is_the_serialized_result_with_its_sql_and_why_rows_are_missing() {
        let result = readings(2, true);
        let mut expected = serde_json::to_value(&result).unwrap();
        expected["truncated_by"] = json!("limit");
        expected["rows_left_out"] = json!(0);
        expected["next_step"] = json!(render::LIMIT_NEXT_STEP);
        let cut = || Cut {
            truncated_by: Some("limit"),
            rows_left_out: 0,
            next_step: Some(render::LIMIT_NEXT_STEP),
        };
        assert_eq!(rows_data(result.clone(), None, cut()), expected);
        expected["sql"] = json!("SELECT * FROM readings");
        assert_eq!(
            rows_data(result, Some("SELECT * FROM readings".into()), cut()),
            expected
        );
    }

    #[test]
    fn a_reply_over_the_budget_keeps_the_rows_that_fit_and_says_how_many_were_left_out() {
        let budget = 8 * 1024;
        let reply = rows_reply(readings(1000, false), None, 1000, budget);
        let data = reply.envelope.data.clone();
        let shown = data["row_count"].as_u64().unwrap() as usize;
        assert!(shown > 20 && shown < 1000, "{shown} rows kept");
        assert_eq!(data["rows"].as_array().unwrap().len(), shown);
        assert_eq!(data["rows_left_out"], json!(1000 - shown));
        assert_eq!(data["truncated"], json!(true));
        assert_eq!(data["truncated_by"], json!("reply_budget"));
        assert_eq!(reply.envelope.status, Status::Partial);
        assert!(
            reply
                .text
                .contains(&format!("{} more were left out", 1000 - shown)),
            "{}",
            reply.text
        );
        assert!(reply.text.contains("plot tool"), "{}", reply.text);
        let bytes = wire_bytes(reply);
        assert!(bytes <= budget, "{bytes} bytes");
        // Not far under it either: the cut keeps what fits.
        assert!(bytes > budget * 9 / 10, "{bytes} bytes");
    }

    #[test]
    fn quoted_and_wide_cells_fit_the_budget_too() {
        let mut result = readings(3000, true);
        result.columns[1].data_type = "VARCHAR".into();
        for (i, row) in result.rows.iter_mut().enumerate() {
            row[1] = json!(format!("\"{i}\" ünïcödé \\ {}", "✓".repeat(i % 17)));
        }
        for budget in [4 * 1024, 16 * 1024, 64 * 1024] {
            let reply = rows_reply(result.clone(), Some("SELECT 1".into()), 10_000, budget);
            let shown = reply.envelope.data["row_count"].as_u64().unwrap();
            let bytes = wire_bytes(reply);
            assert!(bytes <= budget, "{budget}: {bytes} bytes");
            assert!(
                bytes > budget * 8 / 10,
                "{budget}: only {bytes} bytes, {shown} rows"
            );
        }
    }

    /// The parent's cost of a 1,000-row reply, whole and cut to the default budget:
    /// `cargo test --release --lib -- --ignored --nocapture reply_cost`.
    #[test]
    #[ignore = "a timing, read by a person"]
    fn reply_cost() {
        for budget in [64 * 1024 * 1024, 64 * 1024] {
            let mut best = std::time::Duration::MAX;
            let mut shown = 0;
            for _ in 0..200 {
                let result = readings(1000, true);
                let started = std::time::Instant::now();
                let reply = rows_reply(result, None, 1000, budget);
                let bytes = serde_json::to_vec(&reply.into_result()).unwrap().len();
                best = best.min(started.elapsed());
                shown = bytes;
            }
            eprintln!("budget {budget}: {shown} bytes in {best:?} (best of 200, serialised)");
        }
    }

    #[test]
    fn a_reply_within_the_budget_is_whole_and_says_nothing_is_missing() {
        let reply = rows_reply(readings(10, false), None, 1000, 64 * 1024);
        assert_eq!(reply.envelope.status, Status::Success);
        assert_eq!(reply.envelope.data["truncated_by"], Value::Null);
        assert_eq!(reply.envelope.data["rows_left_out"], json!(0));
        assert!(reply.text.ends_with("10 rows returned."), "{}", reply.text);
    }

    #[test]
    fn rows_stopped_at_the_limit_keep_the_seed_notice() {
        let reply = rows_reply(readings(5, true), None, 5, 64 * 1024);
        assert_eq!(reply.envelope.data["truncated_by"], json!("limit"));
        assert!(
            reply
                .text
                .ends_with(&format!("5 rows returned {}.", render::TRUNCATED_SUFFIX))
        );
    }
}
