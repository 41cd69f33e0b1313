//! `plot`: run one read-only query and draw two of its columns as a PNG.

use serde_json::{Value, json};

use super::arguments::{Argument, ArgumentType, JsonType, tool_arguments};
use super::context::{ToolContext, with_progress};
use super::name::ToolName;
use super::query::row_arrays_schema;
use super::tool::{Answer, Request, SQL, check_not_blank, tool};
use crate::mcp::envelope::{Envelope, ErrorBody, Reply, Status};
use crate::plot::{
    ChartKind, DEFAULT_BINS, DEFAULT_HEIGHT, DEFAULT_WIDTH, MAX_BINS, MAX_HEIGHT, MAX_WIDTH,
    MIN_SIDE,
};
use crate::protocol::ChartRequest;
use duckgate_validate::error::ErrorKind;

/// The chart kinds as the `kind` argument spells them ([`ChartKind`]'s wire names).
const KINDS: [&str; 6] = ["line", "scatter", "bar", "histogram", "agp", "tir"];

/// What each chart kind draws, for the `kind` argument.
const KIND_DESCRIPTION: &str = "line: y over time or a number; scatter: points; bar: one bar per row (x names it); histogram: how y is distributed; agp: the consensus ambulatory glucose profile of glucose in mg/dL (y) by time of day (x, a timestamp): median, 25–75% and 5–95% bands, 70–180 shaded, lines at 54 and 250, with period, % CGM active, mean, GMI and CV; tir: the stacked time in ranges (<54, 54–69, 70–180, 181–250, >250) of glucose (y, x not used).";

/// One of [`KINDS`].
impl ArgumentType for ChartKind {
    const JSON_TYPE: JsonType = JsonType::Choice(&KINDS);
}

fn description(_time_zone: &str) -> String {
    "Use this when the user wants to see data as a picture: a glucose trace over \
     time, bars per day, a distribution, the consensus AGP report (kind agp) or time \
     in ranges (kind tir). Runs one read-only SQL statement as query does and draws \
     result columns (x, y) as a PNG, with the numbers drawn; times in local time. \
     Use query instead when the user wants exact values. \
     Common compositions: describe_table → plot; query (aggregate) → plot."
        .to_owned()
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

tool! {
    /// The `plot` tool.
    Plot(PlotArgs), "Draw a chart of a query's result"
}

/// Run `args.sql` in a worker, which draws the chart there; the picture comes first, then a
/// sentence and the numbers drawn.
async fn run(server: &ToolContext<'_>, args: PlotArgs, context: &Request) -> Answer {
    check_not_blank::<Plot>("sql", &args.sql)?;
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
        args.kind,
        crate::mcp::render::inline(&reply.y),
        crate::mcp::render::inline(&reply.x),
        reply.rows_read,
        reply.width,
        reply.height,
        crate::mcp::render::inline(&reply.summary_text)
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
        fitted: false,
    })
}

tool_arguments! {
    /// `plot` arguments.
    pub struct PlotArgs {
        /// The SQL.
        pub sql: String = SQL,
        /// Which chart.
        pub kind: ChartKind = Argument::described(KIND_DESCRIPTION),
        /// The x column.
        pub x: Option<String> =
            Argument::described("The result column for x (default: the first)."),
        /// The y column.
        pub y: Option<String> = Argument::described(
            "The result column for y (default: the second; a histogram's and tir's: the first).",
        ),
        /// A title.
        pub title: Option<String> = Argument::described("A title above the chart."),
        /// Pixels (checked by the renderer, which names the range).
        pub width: Option<u32> = Argument::described("Pixels.").range(
            MIN_SIDE as i64,
            MAX_WIDTH as i64,
            DEFAULT_WIDTH as i64,
        ),
        /// Pixels.
        pub height: Option<u32> = Argument::described("Pixels.").range(
            MIN_SIDE as i64,
            MAX_HEIGHT as i64,
            DEFAULT_HEIGHT as i64,
        ),
        /// Histogram bins.
        pub bins: Option<u32> =
            Argument::described("Histogram bins.").range(1, MAX_BINS as i64, DEFAULT_BINS as i64),
        /// Lower end of the shaded y range.
        pub target_low: Option<f64> = Argument::described(
            "Lower end of a range to shade (e.g. 70 mg/dL; an agp shades 70–180 unless told); with target_high.",
        ),
        /// Upper end.
        pub target_high: Option<f64> =
            Argument::described("Upper end of that range (e.g. 180 mg/dL)."),
    }
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
