//! What the images show: colours at the rows and columns where values must land.

use plotters::style::RGBColor;
use serde_json::{Value, json};

use super::*;
use crate::plot::draw::{
    BAND_INNER, BAND_OUTER, MEDIAN, SERIES, TARGET_FILL, TARGET_LINE, TIR_COLOURS, VERY_HIGH_LINE,
    VERY_LOW_LINE,
};
use crate::plot::figure::Figure;

#[test]
fn constant_line_is_one_horizontal_band_at_its_value() {
    let mut opts = options(ChartKind::Line);
    opts.target_range = Some((70.0, 180.0));
    let (_, prepared, layout, image) = render_full(&constant_day(100.0), &opts);
    let expected = row_of(&prepared, &layout, 100.0);
    let mut columns_with_line = 0;
    for x in layout.x.clone() {
        let rows = image.rows_of(SERIES, x, 0..image.height as i32);
        for &row in &rows {
            assert!(
                (f64::from(row) - expected).abs() <= 2.0,
                "series colour at row {row}, line expected at {expected:.1}"
            );
        }
        columns_with_line += usize::from(!rows.is_empty());
    }
    let plot_width = layout.x.len();
    assert!(
        columns_with_line * 10 >= plot_width * 9,
        "the line spans {columns_with_line} of {plot_width} columns"
    );
    // The same height measured against the two target lines, independent of the axis range:
    // 100 lies 80/110 of the way down from 180 to 70.
    let middle = (layout.x.start + layout.x.end) / 2;
    let rows = image.rows_of(TARGET_LINE, middle - 40, layout.y.clone());
    let (row_180, row_70) = (
        f64::from(*rows.first().expect("180 line")),
        f64::from(*rows.last().expect("70 line")),
    );
    let share = (expected - row_180) / (row_70 - row_180);
    assert!((share - 80.0 / 110.0).abs() < 0.03, "share {share}");
}

#[test]
fn twice_as_high_bar_reaches_twice_as_far_from_the_baseline() {
    let (_, prepared, layout, image) = render_full(
        &categories(&[("apples", 1.0), ("pears", 2.0)]),
        &options(ChartKind::Bar),
    );
    assert_eq!(prepared.y.range.0, 0.0, "bars start at zero");
    let baseline = row_of(&prepared, &layout, 0.0);
    let top = |bar: f64| -> f64 {
        let x = column_of(&prepared, &layout, bar);
        let rows = image.rows_of(SERIES, x, layout.y.clone());
        f64::from(*rows.first().expect("bar pixels"))
    };
    let (first, second) = (baseline - top(0.0), baseline - top(1.0));
    assert!(
        second > first,
        "second bar top {second} not above first {first}"
    );
    assert!(
        (second - 2.0 * first).abs() <= 3.0,
        "heights {first} and {second} are not 1:2"
    );
    // Between the bars there is no bar colour.
    let gap = column_of(&prepared, &layout, 0.5);
    assert!(image.rows_of(SERIES, gap, layout.y.clone()).is_empty());
}

#[test]
fn histogram_summary_counts_are_the_known_counts() {
    let data = numbers(&[1.0, 2.0, 2.0, 3.0, 3.0, 3.0, 4.0, 4.0, 4.0, 4.0]);
    let mut opts = options(ChartKind::Histogram);
    opts.bins = Some(4);
    let (rendered, prepared, layout, image) = render_full(&data, &opts);
    let summary = &rendered.summary;
    assert_eq!(summary.columns, ["bin_from", "bin_to", "count"]);
    let counts: Vec<&Value> = summary.rows.iter().map(|row| &row[2]).collect();
    assert_eq!(counts, [&json!(1), &json!(2), &json!(3), &json!(4)]);
    assert_eq!(summary.rows[0][0], json!(1.0));
    assert_eq!(summary.rows[3][1], json!(4.0));
    // The drawn bars rise like the counts: sample each bin's middle column.
    let tops: Vec<i32> = [1.375, 2.125, 2.875, 3.625]
        .iter()
        .map(|&v| {
            let x = column_of(&prepared, &layout, v);
            image.rows_of(SERIES, x, layout.y.clone())[0]
        })
        .collect();
    assert!(tops.windows(2).all(|w| w[1] < w[0]), "bar tops {tops:?}");
}

#[test]
fn agp_median_follows_the_profile_and_bands_are_drawn() {
    let mut opts = options(ChartKind::Agp);
    opts.target_range = Some((70.0, 180.0));
    let (rendered, prepared, layout, image) = render_full(&agp_profile(), &opts);
    let rows = &rendered.summary.rows;
    assert_eq!(rows.len(), 24);
    assert_eq!(rows[12][0], json!("12:00"));
    assert_eq!(rows[12][1], json!(144), "12 days × 12 readings");
    assert_eq!(rows[12][4], json!(160.0), "median of hour 12 is 100 + 5·12");
    let p = |i: usize| rows[12][i].as_f64().expect("percentile");
    let (p5, p25, p50, p75, p95) = (p(2), p(3), p(4), p(5), p(6));
    assert!(p5 < p25 && p25 < p50 && p50 < p75 && p75 < p95);

    // In the middle of hour 12: median line at p50, inner band between p25 and p75, outer
    // band between p5 and p25 and between p75 and p95.
    let x = column_of(&prepared, &layout, 12.5);
    let median_rows = image.rows_of(MEDIAN, x, layout.y.clone());
    assert!(!median_rows.is_empty(), "no median line at 12:30");
    let expected = row_of(&prepared, &layout, p50);
    for row in median_rows {
        assert!(
            (f64::from(row) - expected).abs() <= 3.0,
            "median at {row}, expected {expected:.1}"
        );
    }
    let at = |value: f64| image.pixel(x, row_of(&prepared, &layout, value).round() as i32);
    assert_eq!(at((p25 + p50) / 2.0), BAND_INNER);
    assert_eq!(at((p50 + p75) / 2.0), BAND_INNER);
    assert_eq!(at((p5 + p25) / 2.0), BAND_OUTER);
    assert_eq!(at((p75 + p95) / 2.0), BAND_OUTER);
    // The median rises through the day (100 + 5·hour): later hours are drawn higher.
    let median_row_at = |hour: f64| {
        let x = column_of(&prepared, &layout, hour);
        image.rows_of(MEDIAN, x, layout.y.clone())[0]
    };
    assert!(median_row_at(20.5) < median_row_at(4.5));
    // The target lines are drawn over the bands.
    assert!(image.count(TARGET_LINE) > layout.x.len());
}

#[test]
fn agp_summary_gives_time_in_range() {
    // Four readings an hour: 60, 100, 150, 200 → one below, two within, one above 70–180.
    let mut points = Vec::new();
    for hour in 0..24 {
        for (i, v) in [60.0, 100.0, 150.0, 200.0].iter().enumerate() {
            points.push((MONDAY + hour * HOUR + i as i64 * 15 * MINUTE, *v));
        }
    }
    let mut opts = options(ChartKind::Agp);
    opts.target_range = Some((70.0, 180.0));
    let rendered = render(&times(&points, "glucose"), &opts).expect("render");
    let text = &rendered.summary.text;
    assert!(
        text.contains("50.0% of readings are within the target range 70–180"),
        "{text}"
    );
    assert!(text.contains("25.0% below, 25.0% above"), "{text}");
    assert!(
        text.contains("96 glucose readings (mg/dL) over 1 day ("),
        "{text}"
    );
}

#[test]
fn every_kind_has_a_white_background_and_the_requested_size() {
    let line = constant_day(100.0);
    let bars = categories(&[("a", 3.0), ("b", 5.0)]);
    let agp = agp_profile();
    for (kind, data) in [
        (ChartKind::Line, &line),
        (ChartKind::Scatter, &line),
        (ChartKind::Bar, &bars),
        (ChartKind::Histogram, &line),
        (ChartKind::Agp, &agp),
    ] {
        let mut opts = options(kind);
        (opts.width, opts.height) = (640, 360);
        let rendered = render(data, &opts).expect("render");
        let image = Image::decode(&rendered.png);
        assert_eq!((image.width, image.height), (640, 360), "{kind}");
        assert_eq!((rendered.width, rendered.height), (640, 360), "{kind}");
        for (x, y) in [(0, 0), (639, 0), (0, 359), (639, 359), (320, 2)] {
            assert_eq!(
                image.pixel(x, y),
                RGBColor(255, 255, 255),
                "{kind} at {x},{y}"
            );
        }
        let white = image.count(RGBColor(255, 255, 255));
        assert!(white * 2 > 640 * 360, "{kind}: only {white} white pixels");
    }
}

#[test]
fn title_and_labels_are_drawn_in_dark_text() {
    let mut opts = options(ChartKind::Line);
    opts.title = Some("Glucose on Monday".into());
    let (_, _, layout, image) = render_full(&constant_day(100.0), &opts);
    let dark = |rows: std::ops::Range<i32>, columns: std::ops::Range<i32>| {
        rows.flat_map(|y| columns.clone().map(move |x| (x, y)))
            .filter(|&(x, y)| {
                let p = image.pixel(x, y);
                p.0 < 100 && p.1 < 100 && p.2 < 100
            })
            .count()
    };
    let width = image.width as i32;
    assert!(dark(0..layout.y.start - 5, 0..width) > 100, "no title text");
    let below = layout.y.end + 3..image.height as i32;
    assert!(dark(below, layout.x.clone()) > 100, "no x axis labels");
    assert!(
        dark(layout.y.clone(), 0..layout.x.start - 3) > 100,
        "no y axis labels"
    );
}

#[test]
fn line_is_drawn_in_x_order_whatever_the_row_order() {
    let points: Vec<(i64, f64)> = (0..50)
        .map(|i| (MONDAY + i * HOUR, (i % 7) as f64))
        .collect();
    let mut shuffled = points.clone();
    shuffled.reverse();
    shuffled.swap(3, 30);
    let opts = options(ChartKind::Line);
    let sorted = render(&times(&points, "v"), &opts).expect("render");
    let unsorted = render(&times(&shuffled, "v"), &opts).expect("render");
    assert_eq!(sorted.png, unsorted.png);
}

#[test]
fn a_few_days_of_line_are_thinned_to_points_that_keep_a_lone_spike() {
    // 3 days of minutes: still a line, thinned to what the pixel columns show.
    let mut points: Vec<(i64, f64)> = (0..3 * 1440)
        .map(|i| (MONDAY + i * MINUTE, 100.0))
        .collect();
    points[2_000].1 = 300.0;
    let (rendered, prepared, layout, image) =
        render_full(&times(&points, "v"), &options(ChartKind::Line));
    assert!(matches!(prepared.figure, Figure::Line(_)));
    assert!(
        rendered.summary.text.contains("Down-sampled with min/max"),
        "{}",
        rendered.summary.text
    );
    let spike = row_of(&prepared, &layout, 300.0);
    assert!(layout.x.clone().any(|x| {
        image
            .rows_of(SERIES, x, layout.y.clone())
            .iter()
            .any(|&r| (f64::from(r) - spike).abs() <= 2.0)
    }));
}

#[test]
fn long_line_is_thinned_but_keeps_a_lone_spike() {
    let mut points: Vec<(i64, f64)> = (0..200_000).map(|i| (MONDAY + i * MINUTE, 100.0)).collect();
    points[123_457].1 = 300.0;
    let (rendered, prepared, layout, image) =
        render_full(&times(&points, "v"), &options(ChartKind::Line));
    // 139 days: drawn as a min–max band with the median through it, and said so.
    assert!(matches!(prepared.figure, Figure::Envelope(_)));
    assert!(
        rendered.summary.text.contains("down-sampled with min/max")
            && rendered
                .summary
                .text
                .contains("band from its lowest to its highest")
            && rendered.summary.text.contains("plot kind agp"),
        "{}",
        rendered.summary.text
    );
    let spike = row_of(&prepared, &layout, 300.0);
    let near_spike = layout.x.clone().any(|x| {
        image
            .rows_of(BAND_INNER, x, layout.y.clone())
            .iter()
            .any(|&r| (f64::from(r) - spike).abs() <= 2.0)
    });
    // The median stays at 100 everywhere.
    let flat = row_of(&prepared, &layout, 100.0);
    let middle = (layout.x.start + layout.x.end) / 2;
    assert!(
        image
            .rows_of(SERIES, middle, layout.y.clone())
            .iter()
            .all(|&r| (f64::from(r) - flat).abs() <= 2.0),
        "the median line left 100"
    );
    assert!(near_spike, "the spike to 300 was lost");
    assert!(rendered.summary.text.contains("max 300"));
}

#[test]
fn huge_scatter_stays_under_the_png_limit_and_renders_the_same_twice() {
    let mut state = 0x2545_f491_4f6c_dd1d_u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 11) as f64 / (1u64 << 53) as f64
    };
    let y: Vec<f64> = (0..300_000).map(|_| next() * 1000.0).collect();
    let mut data = numbers(&y);
    data.x = (0..y.len()).map(|_| XValue::Number(next())).collect();
    let mut opts = options(ChartKind::Scatter);
    (opts.width, opts.height) = (MAX_WIDTH, MAX_HEIGHT);
    let first = render(&data, &opts).expect("render");
    assert!(
        first.png.len() <= MAX_PNG_BYTES,
        "{} bytes",
        first.png.len()
    );
    assert!(
        first
            .summary
            .text
            .contains("markers, one per 2×2-pixel cell")
    );
    let second = render(&data, &opts).expect("render");
    assert_eq!(first.png, second.png);
}

#[test]
fn png_over_the_limit_is_refused() {
    assert_eq!(
        check_png_size(MAX_PNG_BYTES + 1, MAX_PNG_BYTES),
        Err(PlotError::PngTooLarge {
            bytes: MAX_PNG_BYTES + 1,
            max: MAX_PNG_BYTES
        })
    );
    assert_eq!(check_png_size(MAX_PNG_BYTES, MAX_PNG_BYTES), Ok(()));
}

#[test]
fn extreme_values_render_without_panic_or_runaway() {
    let ys = [
        Some(f64::MAX),
        Some(-f64::MAX),
        Some(1e-320),
        Some(0.0),
        Some(f64::INFINITY),
    ];
    let time_x = [i64::MIN, i64::MAX, 0, -1, 1];
    let number_x = [f64::MAX, -f64::MAX, 0.0, 1e-320, f64::NAN];
    for kind in ChartKind::ALL {
        for times in [true, false] {
            let data = PlotData {
                x_label: "x".into(),
                y_label: "y".into(),
                x: (0..5)
                    .map(|i| match times {
                        true => XValue::Time(time_x[i]),
                        false => XValue::Number(number_x[i]),
                    })
                    .collect(),
                y: ys.to_vec(),
            };
            match render(&data, &options(kind)) {
                Ok(rendered) => assert!(rendered.png.len() <= MAX_PNG_BYTES),
                Err(err) => assert_eq!(
                    err,
                    PlotError::WrongXType {
                        kind,
                        found: "number",
                        expected: "timestamps"
                    }
                ),
            }
        }
        // One single value, and two equal times.
        let one = times(&[(MONDAY, 5.0), (MONDAY, 5.0)], "y");
        render(&one, &options(kind)).expect("flat data renders");
    }
}

/// Every kind draws a whole picture at the size asked for, with its data on it: the plot area
/// holds colours besides the background, axes and text (more than a blank chart has). With
/// $PLOT_SAMPLES_DIR set it also writes one PNG per kind there, for a person to look at.
#[test]
fn every_kind_draws_its_data_on_a_full_size_picture() {
    let dir = std::env::var_os("PLOT_SAMPLES_DIR");
    let mut line = options(ChartKind::Line);
    line.title = Some("Glucose, Monday 4 March".into());
    line.target_range = Some((70.0, 180.0));
    let wave: Vec<(i64, f64)> = (0..288)
        .map(|i| {
            (
                MONDAY + i * 5 * MINUTE,
                120.0 + 50.0 * (i as f64 / 30.0).sin(),
            )
        })
        .collect();
    let mut scatter = options(ChartKind::Scatter);
    scatter.title = Some("Steps against sleep".into());
    let cloud = PlotData {
        x_label: "sleep (h)".into(),
        y_label: "steps".into(),
        x: (0..200)
            .map(|i| XValue::Number(5.0 + (i % 40) as f64 / 10.0))
            .collect(),
        y: (0..200)
            .map(|i| Some(4000.0 + ((i * 7919) % 5000) as f64))
            .collect(),
    };
    let mut bar = options(ChartKind::Bar);
    bar.title = Some("Readings per weekday".into());
    let days = categories(&[
        ("Mon", 288.0),
        ("Tue", 280.0),
        ("Wed", 150.0),
        ("Thu", 288.0),
        ("Fri", 201.0),
        ("Sat", 90.0),
        ("Sun", 240.0),
    ]);
    let days = PlotData {
        x_label: "weekday".into(),
        y_label: "readings".into(),
        ..days
    };
    let mut hist = options(ChartKind::Histogram);
    hist.title = Some("Glucose distribution".into());
    let mut agp = options(ChartKind::Agp);
    agp.title = Some("Ambulatory glucose profile, 14 days".into());
    agp.target_range = Some((70.0, 180.0));
    let profile = cgm_weeks();
    for (name, data, opts) in [
        ("line", times(&wave, "glucose (mg/dL)"), line),
        ("scatter", cloud, scatter),
        ("bar", days, bar),
        ("histogram", profile.clone(), hist),
        ("agp", profile, agp),
    ] {
        let (rendered, _, layout, image) = render_full(&data, &opts);
        assert_eq!(
            (image.width, image.height),
            (opts.width, opts.height),
            "{name}"
        );
        assert!(!rendered.summary.text.is_empty(), "{name}: no summary");
        // Other values draw another picture inside the plot area: the data are on it. The
        // first half of the rows takes the first row's value, which changes every kind's
        // picture (a scaled copy would not: a histogram's bins follow the values' range).
        let half = data.y.len() / 2;
        let other = PlotData {
            y: data
                .y
                .iter()
                .enumerate()
                .map(|(i, y)| if i < half { data.y[0] } else { *y })
                .collect(),
            ..data.clone()
        };
        let (_, _, _, other_image) = render_full(&other, &opts);
        let differs = layout.y.clone().any(|y| {
            layout
                .x
                .clone()
                .any(|x| image.pixel(x, y) != other_image.pixel(x, y))
        });
        assert!(differs, "{name}: other values drew the same plot area");
        if let Some(dir) = &dir {
            std::fs::create_dir_all(dir).expect("samples dir");
            let path = std::path::Path::new(dir).join(format!("{name}.png"));
            std::fs::write(path, &rendered.png).expect("write sample");
            std::fs::write(
                std::path::Path::new(dir).join(format!("{name}.txt")),
                format!(
                    "{}\n{:?}\n",
                    rendered.summary.text, rendered.summary.columns
                ),
            )
            .expect("write summary");
        }
    }
}

#[test]
fn agp_shades_70_to_180_and_draws_lines_at_54_and_250_without_being_asked() {
    let (_, prepared, layout, image) = render_full(&agp_profile(), &options(ChartKind::Agp));
    assert_eq!(prepared.target, Some((70.0, 180.0)));
    assert_eq!(prepared.y.title, "glucose (mg/dL)");
    // At 01:30 the 95th percentile is about 150, so 170 lies in the bare target band.
    let x = column_of(&prepared, &layout, 1.5);
    let at = |value: f64| image.pixel(x, row_of(&prepared, &layout, value).round() as i32);
    assert_eq!(at(170.0), TARGET_FILL);
    assert_eq!(at(200.0), RGBColor(255, 255, 255));
    // Each colour only on its own levels (the target's two lines share one), and on each.
    for (colour, levels) in [
        (VERY_LOW_LINE, &[54.0][..]),
        (VERY_HIGH_LINE, &[250.0][..]),
        (TARGET_LINE, &[70.0, 180.0][..]),
    ] {
        let rows = image.rows_of(colour, x, layout.y.clone());
        let expected: Vec<f64> = levels
            .iter()
            .map(|&level| row_of(&prepared, &layout, level))
            .collect();
        for (level, at) in levels.iter().zip(&expected) {
            assert!(
                rows.iter().any(|&row| (f64::from(row) - at).abs() <= 1.5),
                "no line at {level} (row {at:.1}): {rows:?}"
            );
        }
        for row in rows {
            assert!(
                expected.iter().any(|at| (f64::from(row) - at).abs() <= 1.5),
                "{levels:?} drawn at {row}, not at {expected:?}"
            );
        }
    }
}

#[test]
fn agp_header_carries_a_legend_of_every_element_and_the_curves_are_labelled_at_the_right() {
    let mut opts = options(ChartKind::Agp);
    opts.title = Some("AGP".into());
    let (rendered, _, layout, image) = render_full(&agp_profile(), &opts);
    let header = 0..layout.y.start;
    let in_header = |colour: RGBColor| {
        (0..image.width as i32).any(|x| !image.rows_of(colour, x, header.clone()).is_empty())
    };
    for colour in [
        BAND_OUTER,
        BAND_INNER,
        MEDIAN,
        TARGET_FILL,
        VERY_LOW_LINE,
        VERY_HIGH_LINE,
    ] {
        assert!(in_header(colour), "legend lacks {colour:?}");
    }
    // The header's words: dark text across the top.
    let dark = |columns: std::ops::Range<i32>, rows: std::ops::Range<i32>| {
        columns
            .flat_map(|x| rows.clone().map(move |y| (x, y)))
            .filter(|&(x, y)| {
                let p = image.pixel(x, y);
                p.0 < 100 && p.1 < 100 && p.2 < 100
            })
            .count()
    };
    assert!(
        dark(0..image.width as i32, header.clone()) > 400,
        "no header text"
    );
    // The percentile labels sit right of the plot, beside the curves.
    assert!(
        dark(layout.x.end + 2..image.width as i32, layout.y.clone()) > 60,
        "no curve labels"
    );
    let text = &rendered.summary.text;
    for words in ["GMI", "CV", "CGM active", "12 days", "mean"] {
        assert!(text.contains(words), "{words}: {text}");
    }
}

/// 200 readings: 10% below 54, 10% 54–69, 50% 70–180, 20% 181–250, 10% above 250.
fn tir_readings() -> PlotData {
    let mut values = Vec::new();
    for (value, count) in [
        (45.0, 20),
        (60.0, 20),
        (120.0, 100),
        (200.0, 40),
        (300.0, 20),
    ] {
        values.extend(std::iter::repeat_n(value, count));
    }
    let points: Vec<(i64, f64)> = values
        .iter()
        .enumerate()
        .map(|(i, v)| (MONDAY + i as i64 * 5 * MINUTE, *v))
        .collect();
    times(&points, "glucose")
}

#[test]
fn tir_segments_are_as_tall_as_their_share_and_stacked_very_low_at_the_bottom() {
    let (rendered, _, layout, image) = render_full(&tir_readings(), &options(ChartKind::Tir));
    let x = (layout.x.start + layout.x.end) / 2;
    let height = f64::from(layout.y.end - layout.y.start);
    let mut lowest_rows = Vec::new();
    for (colour, share) in TIR_COLOURS.iter().zip([0.1, 0.1, 0.5, 0.2, 0.1]) {
        let rows = image.rows_of(*colour, x, layout.y.clone());
        let drawn = rows.len() as f64;
        assert!(
            (drawn - share * height).abs() <= 2.0,
            "{colour:?}: {drawn} rows, expected {:.1}",
            share * height
        );
        lowest_rows.push(*rows.iter().max().unwrap());
    }
    assert!(
        lowest_rows.windows(2).all(|w| w[1] < w[0]),
        "not stacked upwards: {lowest_rows:?}"
    );
    let summary = &rendered.summary;
    assert_eq!(summary.rows[0][0], json!("very high"));
    assert_eq!(summary.rows[0][3], json!(10.0));
    assert_eq!(summary.rows[2][3], json!(50.0));
    assert!(
        summary.text.contains("in range 70–180 mg/dL 50.0%"),
        "{}",
        summary.text
    );
    assert!(
        summary.text.contains("Consensus goals not met"),
        "{}",
        summary.text
    );
}

#[test]
fn a_histogram_shades_the_target_range_it_is_given_and_says_so_when_none_is() {
    let mut opts = options(ChartKind::Histogram);
    opts.target_range = Some((70.0, 180.0));
    let data = tir_readings();
    let (rendered, prepared, layout, image) = render_full(&data, &opts);
    assert!(
        rendered
            .summary
            .text
            .contains("The target range 70–180 is shaded: 50.0%"),
        "{}",
        rendered.summary.text
    );
    // Above the bars, inside the target, the band shows; outside it, white.
    let top = layout.y.start + 3;
    assert_eq!(
        image.pixel(column_of(&prepared, &layout, 150.0), top),
        TARGET_FILL
    );
    assert_eq!(
        image.pixel(column_of(&prepared, &layout, 230.0), top),
        RGBColor(255, 255, 255)
    );
    let plain = render(&data, &options(ChartKind::Histogram)).unwrap();
    assert!(
        plain.summary.text.contains("No target range is drawn"),
        "{}",
        plain.summary.text
    );
}

#[test]
fn a_bar_summary_never_adds_the_bars_up() {
    let rendered = render(
        &categories(&[("Mon", 60.0), ("Tue", 70.0), ("Wed", 80.0)]),
        &options(ChartKind::Bar),
    )
    .unwrap();
    assert!(
        !rendered.summary.text.contains("total"),
        "{}",
        rendered.summary.text
    );
    assert!(
        rendered.summary.text.contains("median bar 70"),
        "{}",
        rendered.summary.text
    );
}
