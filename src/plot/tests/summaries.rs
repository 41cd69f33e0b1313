//! What the summaries say.

use serde_json::json;

use super::*;

#[test]
fn line_summary_names_count_range_and_median() {
    let points: Vec<(i64, f64)> = (0..5)
        .map(|i| (MONDAY + i * HOUR, 10.0 * (i + 1) as f64))
        .collect();
    let mut data = times(&points, "glucose");
    data.x.push(XValue::Time(MONDAY));
    data.y.push(None);
    let rendered = render(&data, &options(ChartKind::Line)).expect("render");
    let summary = rendered.summary;
    assert_eq!(
        summary.text,
        "Line chart of glucose by time: 5 points, time from 2024-03-04 00:00:00 to \
         2024-03-04 04:00:00; glucose min 10, median 30, max 50. 1 row with a NULL or \
         non-finite value was skipped."
    );
    assert_eq!(summary.columns, ["x", "y"]);
    assert_eq!(summary.rows[1], [json!("2024-03-04 01:00:00"), json!(20.0)]);
}

#[test]
fn long_series_summary_is_bucketed_by_x() {
    let y: Vec<f64> = (0..1000).map(|i| i as f64).collect();
    let rendered = render(&numbers(&y), &options(ChartKind::Scatter)).expect("render");
    let summary = rendered.summary;
    assert_eq!(
        summary.columns,
        ["x_from", "x_to", "n", "y_min", "y_median", "y_max"]
    );
    assert_eq!(summary.rows.len(), 20);
    let total: u64 = summary.rows.iter().map(|r| r[2].as_u64().expect("n")).sum();
    assert_eq!(total, 1000);
    assert_eq!(summary.rows[0][..3], [json!(0.0), json!(49.0), json!(50)]);
}

#[test]
fn bar_summary_lists_bars_in_query_order() {
    let rendered = render(
        &categories(&[("pears", 2.0), ("apples", 5.0), ("plums", 1.0)]),
        &options(ChartKind::Bar),
    )
    .expect("render");
    let summary = rendered.summary;
    assert_eq!(summary.columns, ["fruit", "count"]);
    assert_eq!(summary.rows[1], [json!("apples"), json!(5.0)]);
    assert!(
        summary
            .text
            .contains("highest apples (5), lowest plums (1); median bar 2."),
        "{}",
        summary.text
    );
}

#[test]
fn bars_over_dates_are_labelled_with_the_date() {
    let data = PlotData {
        x_label: "day".into(),
        y_label: "steps".into(),
        x: vec![XValue::Time(MONDAY), XValue::Time(MONDAY + DAY)],
        y: vec![Some(5000.0), Some(7000.0)],
    };
    let rendered = render(&data, &options(ChartKind::Bar)).expect("render");
    assert_eq!(rendered.summary.rows[1][0], json!("2024-03-05"));
}
