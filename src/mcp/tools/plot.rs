//! `plot`: run one read-only query and draw two of its columns as a PNG.

use rmcp::service::{RequestContext, RoleServer};
use serde::Deserialize;
use serde_json::{Value, json};

use super::context::{ToolContext, with_progress};
use super::query::row_arrays_schema;
use super::{SQL_TEXT, ToolName, ToolSpec, arguments_schema, check_not_blank, sql_argument};
use crate::error::ErrorKind;
use crate::mcp::envelope::{Envelope, ErrorBody, Reply, Status};
use crate::plot::{
    ChartKind, DEFAULT_BINS, DEFAULT_HEIGHT, DEFAULT_WIDTH, MAX_BINS, MAX_HEIGHT, MAX_WIDTH,
    MIN_SIDE,
};
use crate::protocol::ChartRequest;

/// The chart kinds as the `kind` argument spells them ([`ChartKind`]'s wire names).
const KINDS: [&str; 6] = ["line", "scatter", "bar", "histogram", "agp", "tir"];

/// `plot` in `tools/list`.
pub static SPEC: ToolSpec = ToolSpec {
    name: "plot",
    title: "Draw a chart of a query's result",
    description,
    input_schema,
    data_schema,
    signature,
    long_text: Some(SQL_TEXT),
};

fn description(_time_zone: &str) -> String {
    "Use this when the user wants to see data as a picture: a glucose trace over \
     time, bars per day, a distribution, the consensus AGP report (kind agp) or time \
     in ranges (kind tir). Runs one read-only SQL statement as query does and draws \
     result columns (x, y) as a PNG, with the numbers drawn; times in local time. \
     Use query instead when the user wants exact values. \
     Common compositions: describe_table → plot; query (aggregate) → plot."
        .to_owned()
}

fn input_schema() -> Value {
    arguments_schema(
        json!({
            "sql": sql_argument(),
            "kind": {
                "type": "string", "enum": KINDS,
                "description": "line: y over time or a number; scatter: points; bar: one bar per row (x names it); histogram: how y is distributed; agp: the consensus ambulatory glucose profile of glucose in mg/dL (y) by time of day (x, a timestamp): median, 25–75% and 5–95% bands, 70–180 shaded, lines at 54 and 250, with period, % CGM active, mean, GMI and CV; tir: the stacked time in ranges (<54, 54–69, 70–180, 181–250, >250) of glucose (y, x not used)."
            },
            "x": {
                "type": "string", "minLength": 1,
                "description": "The result column for x (default: the first)."
            },
            "y": {
                "type": "string", "minLength": 1,
                "description": "The result column for y (default: the second; a histogram's and tir's: the first)."
            },
            "title": { "type": "string", "minLength": 1, "description": "A title above the chart." },
            "width": {
                "type": "integer", "minimum": MIN_SIDE, "maximum": MAX_WIDTH,
                "default": DEFAULT_WIDTH, "description": "Pixels."
            },
            "height": {
                "type": "integer", "minimum": MIN_SIDE, "maximum": MAX_HEIGHT,
                "default": DEFAULT_HEIGHT, "description": "Pixels."
            },
            "bins": {
                "type": "integer", "minimum": 1, "maximum": MAX_BINS,
                "default": DEFAULT_BINS, "description": "Histogram bins."
            },
            "target_low": { "type": "number", "description": "Lower end of a range to shade (e.g. 70 mg/dL; an agp shades 70–180 unless told); with target_high." },
            "target_high": { "type": "number", "description": "Upper end of that range (e.g. 180 mg/dL)." }
        }),
        json!(["sql", "kind"]),
    )
}

fn data_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "kind": { "type": "string", "enum": KINDS },
            "x": { "type": "string", "description": "The result column drawn as x." },
            "y": { "type": "string", "description": "The result column drawn as y." },
            "width": { "type": "integer" },
            "height": { "type": "integer" },
            "rows_read": { "type": "integer", "description": "Rows the query returned." },
            "summary": {
                "type": "object",
                "description": "What the picture shows, as data: a small table and a sentence.",
                "properties": {
                    "columns": { "type": "array", "items": { "type": "string" } },
                    "rows": row_arrays_schema(),
                    "text": { "type": "string" }
                },
                "required": ["columns", "rows", "text"]
            }
        },
        "required": ["kind", "x", "y", "width", "height", "rows_read", "summary"]
    })
}

fn signature() -> String {
    format!(
        "plot(sql: string, kind: {}, x?: string, y?: string, title?: string, width?: integer, height?: integer, bins?: integer, target_low?: number, target_high?: number)",
        KINDS.join("|")
    )
}

/// `plot` arguments.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlotArgs {
    /// The SQL.
    pub sql: String,
    /// Which chart.
    pub kind: ChartKind,
    /// The x column.
    pub x: Option<String>,
    /// The y column.
    pub y: Option<String>,
    /// A title.
    pub title: Option<String>,
    /// Pixels (checked by the renderer, which names the range).
    pub width: Option<u32>,
    /// Pixels.
    pub height: Option<u32>,
    /// Histogram bins.
    pub bins: Option<u32>,
    /// Lower end of the shaded y range.
    pub target_low: Option<f64>,
    /// Upper end.
    pub target_high: Option<f64>,
}

/// Run `args.sql` in a worker, which draws the chart there; the picture comes first, then a
/// sentence and the numbers drawn.
pub(crate) async fn run(
    server: &ToolContext<'_>,
    args: PlotArgs,
    context: &RequestContext<RoleServer>,
) -> Result<Reply, ErrorBody> {
    check_not_blank(ToolName::Plot, "sql", &args.sql)?;
    let target_range = match (args.target_low, args.target_high) {
        (Some(low), Some(high)) => Some((low, high)),
        (None, None) => None,
        (Some(_), None) | (None, Some(_)) => {
            return Err(ErrorBody::new(
                ErrorKind::InvalidArgument,
                "target_low and target_high come together: give both (e.g. 70 and 180) or neither.",
            )
            .construct("target_low"));
        }
    };
    let chart = ChartRequest {
        kind: args.kind,
        x: args.x.clone(),
        y: args.y.clone(),
        title: args.title.clone(),
        width: args.width.unwrap_or(DEFAULT_WIDTH),
        height: args.height.unwrap_or(DEFAULT_HEIGHT),
        bins: args.bins,
        target_range,
    };
    let run = server.gateway().plot(&args.sql, chart, context.ct.clone());
    let reply = with_progress(run, context).await.map_err(|e| {
        server.gateway_error(
            e,
            Some((
                ToolName::Plot,
                json!({ "sql": args.sql, "kind": args.kind }),
            )),
        )
    })?;
    let text = format!(
        "{} chart of {} against {} ({} rows), {}×{} px. {}",
        args.kind, reply.y, reply.x, reply.rows_read, reply.width, reply.height, reply.summary_text
    );
    Ok(Reply {
        envelope: Envelope::ok(
            Status::Success,
            json!({
                "kind": args.kind,
                "x": reply.x,
                "y": reply.y,
                "width": reply.width,
                "height": reply.height,
                "rows_read": reply.rows_read,
                "summary": {
                    "columns": reply.summary_columns,
                    "rows": reply.summary_rows,
                    "text": reply.summary_text,
                }
            }),
            &["query"],
        ),
        text,
        image: Some(reply.png_base64),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_published_chart_kind_is_one_the_renderer_draws() {
        for kind in KINDS {
            let parsed: ChartKind = serde_json::from_value(json!(kind)).unwrap();
            assert_eq!(parsed.as_str(), kind);
        }
    }
}
