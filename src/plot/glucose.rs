//! Glucose on a chart: the consensus thresholds as drawn (the numbers themselves are
//! `clinical`'s), readings taken in mg/dL or converted from mmol/L, and the glucose axis the AGP
//! and the TIR bar share.

use super::axes::Axis;
use crate::clinical::{
    HIGH_ABOVE, LOW_BELOW, MG_DL_PER_MMOL_L, VERY_HIGH_ABOVE, VERY_LOW_BELOW, mg_dl_from_mmol_l,
};

/// The consensus target range, in mg/dL, shaded when the caller names none.
pub(crate) const TARGET: (f64, f64) = (LOW_BELOW as f64, HIGH_ABOVE as f64);
/// The consensus reference lines, in mg/dL: level 2 hypoglycaemia and level 2 hyperglycaemia.
pub(crate) const VERY_LOW: f64 = VERY_LOW_BELOW as f64;
/// See [`VERY_LOW`].
pub(crate) const VERY_HIGH: f64 = VERY_HIGH_ABOVE as f64;
/// Readings that all stay below this are taken to be mmol/L (no CGM reads above 35 mmol/L, and
/// no mg/dL series stays below 35 mg/dL).
const MMOL_L_ABOVE_NONE: f64 = 35.0;

/// What a chart's text says when its readings were taken as mmol/L and `shown` (drawn,
/// counted) in mg/dL.
pub(crate) fn mmol_l_note(shown: &str) -> String {
    format!(
        " The readings were all below {MMOL_L_ABOVE_NONE}, so they were taken as mmol/L and \
         {shown} in mg/dL (×{MG_DL_PER_MMOL_L}, rounded)."
    )
}

/// Readings in mg/dL: `values` as they are, or converted from mmol/L when every one of them is
/// below what a mg/dL series ever reads. The flag says whether they were converted.
pub(crate) fn in_mg_dl(values: Vec<f64>) -> (Vec<f64>, bool) {
    let mmol = !values.is_empty() && values.iter().all(|v| *v < MMOL_L_ABOVE_NONE);
    if mmol {
        (values.into_iter().map(mg_dl_from_mmol_l).collect(), true)
    } else {
        (values, false)
    }
}

/// The glucose axis of the AGP and TIR: mg/dL from 0 to 350 (400 when the data reaches past
/// 350), with ticks at the consensus thresholds.
pub(crate) fn glucose_axis(highest: f64) -> Axis {
    // Past 1,000 mg/dL nothing is glucose; such values are drawn at the top edge.
    let top = if highest > 350.0 {
        (highest.min(1000.0) / 50.0).ceil() * 50.0
    } else {
        350.0
    };
    let mut ticks: Vec<(f64, String)> = [0.0, VERY_LOW, TARGET.0, TARGET.1, VERY_HIGH, 350.0]
        .into_iter()
        .filter(|t| *t <= top)
        .map(|t| (t, format!("{t:.0}")))
        .collect();
    if top > 350.0 {
        ticks.push((top, format!("{top:.0}")));
    }
    Axis {
        range: (0.0, top),
        ticks,
        title: "glucose (mg/dL)".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn readings_in_mmol_per_litre_are_drawn_in_mg_per_decilitre() {
        let (values, converted) = in_mg_dl(vec![5.5, 10.0]);
        assert!(converted);
        assert_eq!(values, vec![99.0, 180.0]);
        let (values, converted) = in_mg_dl(vec![40.0, 100.0]);
        assert!(!converted);
        assert_eq!(values, vec![40.0, 100.0]);
    }

    #[test]
    fn the_glucose_axis_marks_the_consensus_thresholds() {
        let axis = glucose_axis(300.0);
        assert_eq!(axis.range, (0.0, 350.0));
        assert_eq!(axis.positions(), vec![0.0, 54.0, 70.0, 180.0, 250.0, 350.0]);
        assert_eq!(axis.title, "glucose (mg/dL)");
        assert_eq!(glucose_axis(390.0).range, (0.0, 400.0));
    }
}
