//! Every refusal, with its variant and a message that says what to do.

use super::*;
use duckgate_validate::error::ErrorKind;

#[test]
fn empty_data_is_refused() {
    let err = render(&PlotData::default(), &options(ChartKind::Line)).unwrap_err();
    assert_eq!(err, PlotError::EmptyData);
    assert!(err.to_string().contains("no rows"));
}

#[test]
fn rows_that_are_all_null_are_refused() {
    let data = PlotData {
        x: vec![XValue::Number(1.0), XValue::Number(2.0)],
        y: vec![None, Some(f64::NAN)],
        ..PlotData::default()
    };
    for kind in [ChartKind::Line, ChartKind::Bar, ChartKind::Histogram] {
        assert_eq!(
            render(&data, &options(kind)),
            Err(PlotError::NothingToDraw { rows: 2 })
        );
    }
}

#[test]
fn a_histogram_of_null_rows_with_a_target_range_has_nothing_to_draw() {
    // The target's ends make bins of their own: there are bins, but no value to count in them.
    let data = PlotData {
        x: vec![XValue::Number(1.0), XValue::Number(2.0)],
        y: vec![None, None],
        ..PlotData::default()
    };
    let options = ChartOptions {
        target_range: Some((70.0, 180.0)),
        ..options(ChartKind::Histogram)
    };
    assert_eq!(
        render(&data, &options),
        Err(PlotError::NothingToDraw { rows: 2 })
    );
}

#[test]
fn text_x_is_refused_for_line_scatter_and_agp() {
    let data = categories(&[("a", 1.0)]);
    for (kind, expected) in [
        (ChartKind::Line, "timestamps or numbers"),
        (ChartKind::Scatter, "timestamps or numbers"),
        (ChartKind::Agp, "timestamps"),
    ] {
        let err = render(&data, &options(kind)).unwrap_err();
        assert_eq!(
            err,
            PlotError::WrongXType {
                kind,
                found: "text",
                expected
            }
        );
        assert_eq!(err.kind(), ErrorKind::InvalidArgument);
    }
    let err = render(&numbers(&[1.0]), &options(ChartKind::Agp)).unwrap_err();
    assert!(
        err.to_string().contains("the agp chart needs timestamps"),
        "{err}"
    );
}

#[test]
fn mixed_time_and_number_x_is_refused() {
    let data = PlotData {
        x: vec![XValue::Time(0), XValue::Number(1.0)],
        y: vec![Some(1.0), Some(2.0)],
        ..PlotData::default()
    };
    assert_eq!(
        render(&data, &options(ChartKind::Line)),
        Err(PlotError::MixedXTypes {
            first: "timestamp",
            other: "number"
        })
    );
}

#[test]
fn sizes_outside_the_limits_are_refused() {
    let data = numbers(&[1.0, 2.0]);
    for (width, height) in [
        (MAX_WIDTH + 1, 500),
        (900, MAX_HEIGHT + 1),
        (MIN_SIDE - 1, 500),
        (0, 0),
    ] {
        let mut opts = options(ChartKind::Line);
        (opts.width, opts.height) = (width, height);
        let err = render(&data, &opts).unwrap_err();
        assert_eq!(err, PlotError::SizeOutOfRange { width, height });
        assert!(err.to_string().contains("2000×1200"));
    }
}

#[test]
fn too_many_bars_bad_bins_and_bad_targets_are_refused() {
    let names: Vec<String> = (0..=MAX_CATEGORIES).map(|i| format!("c{i}")).collect();
    let many: Vec<(&str, f64)> = names.iter().map(|n| (n.as_str(), 1.0)).collect();
    assert_eq!(
        render(&categories(&many), &options(ChartKind::Bar)),
        Err(PlotError::TooManyCategories {
            found: MAX_CATEGORIES + 1,
            max: MAX_CATEGORIES
        })
    );
    for bins in [0, MAX_BINS + 1] {
        let mut opts = options(ChartKind::Histogram);
        opts.bins = Some(bins);
        assert_eq!(
            render(&numbers(&[1.0]), &opts),
            Err(PlotError::BinsOutOfRange {
                bins,
                max: MAX_BINS
            })
        );
    }
    let mut opts = options(ChartKind::Line);
    opts.target_range = Some((180.0, 70.0));
    assert_eq!(
        render(&numbers(&[1.0]), &opts),
        Err(PlotError::InvalidTargetRange {
            low: 180.0,
            high: 70.0
        })
    );
}

#[test]
fn mismatched_columns_and_too_many_rows_are_refused() {
    let mut data = numbers(&[1.0, 2.0]);
    data.y.pop();
    assert_eq!(
        render(&data, &options(ChartKind::Line)),
        Err(PlotError::LengthMismatch { x: 2, y: 1 })
    );
    let data = PlotData {
        x: vec![XValue::Number(0.0); MAX_ROWS + 1],
        y: vec![Some(0.0); MAX_ROWS + 1],
        ..PlotData::default()
    };
    assert_eq!(
        render(&data, &options(ChartKind::Line)),
        Err(PlotError::TooManyRows {
            rows: MAX_ROWS + 1,
            max: MAX_ROWS
        })
    );
}
