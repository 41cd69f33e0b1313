//! The clinical numbers duckgate uses, each defined once: the mmol/L conversion, the consensus
//! glucose ranges and goals (International Consensus on Time in Range, Battelino et al.,
//! Diabetes Care 2019), the glucose management indicator (Bergenstal et al., Diabetes Care
//! 2018), and the ranges the sensors and meters report before they say only "Low" or "High".
//!
//! `duckgate import` converts and classifies with these, the metric views it creates compute
//! with them, the `agp` and `tir` charts draw them, and the starter prompts quote them: one
//! value each, so a chart, a view and a prompt can never disagree about where "in range" ends.

/// mg/dL per mmol/L of glucose: its molar mass, 180.16 g/mol, over 10.
///
/// Always used through [`mg_dl_from_mmol_l`], which rounds: every mmol/L value written with one
/// decimal then lands on the same side of 3.0, 3.9, 10.0 and 13.9 mmol/L as of 54, 70, 180 and
/// 250 mg/dL (unrounded, 10.0 mmol/L would be 180.16 mg/dL, above range).
pub const MG_DL_PER_MMOL_L: f64 = 18.016;

/// A glucose value in mmol/L as a whole mg/dL.
pub fn mg_dl_from_mmol_l(mmol_l: f64) -> f64 {
    (mmol_l * MG_DL_PER_MMOL_L).round()
}

/// Below this many mg/dL: level 2 hypoglycaemia ("very low").
pub const VERY_LOW_BELOW: i32 = 54;
/// Below this many mg/dL: below range (level 1 from [`VERY_LOW_BELOW`] up).
pub const LOW_BELOW: i32 = 70;
/// Above this many mg/dL: above range (level 1 up to [`VERY_HIGH_ABOVE`]).
pub const HIGH_ABOVE: i32 = 180;
/// Above this many mg/dL: level 2 hyperglycaemia ("very high").
pub const VERY_HIGH_ABOVE: i32 = 250;

/// The consensus goals for most adults with type 1 or type 2 diabetes, in percent of readings.
pub mod goals {
    /// Time in range (70–180 mg/dL): more than this.
    pub const IN_RANGE_OVER: f64 = 70.0;
    /// Time below 70 mg/dL: less than this.
    pub const BELOW_LOW_UNDER: f64 = 4.0;
    /// Time below 54 mg/dL: less than this.
    pub const BELOW_VERY_LOW_UNDER: f64 = 1.0;
    /// Time above 180 mg/dL: less than this.
    pub const ABOVE_HIGH_UNDER: f64 = 25.0;
    /// Time above 250 mg/dL: less than this.
    pub const ABOVE_VERY_HIGH_UNDER: f64 = 5.0;
    /// Coefficient of variation: stable at this or less.
    pub const CV_AT_MOST: f64 = 36.0;
    /// Days of CGM data a report should cover.
    pub const REPORT_DAYS: u32 = 14;
    /// Percent of the time the CGM should have been active over those days.
    pub const ACTIVE_AT_LEAST: f64 = 70.0;
}

/// GMI (glucose management indicator, an estimate of HbA1c in percent) = this + [`GMI_SLOPE`] ×
/// mean mg/dL.
pub const GMI_INTERCEPT: f64 = 3.31;
/// See [`GMI_INTERCEPT`].
pub const GMI_SLOPE: f64 = 0.02392;

/// The glucose management indicator of a mean glucose in mg/dL, in percent.
pub fn gmi(mean_mg_dl: f64) -> f64 {
    GMI_INTERCEPT + GMI_SLOPE * mean_mg_dl
}

/// The range a device measures, in mg/dL: below `lowest` it reports only "Low", above
/// `highest` only "High". Such a reading is stored as one beyond the limit (`lowest - 1`,
/// `highest + 1`), so every threshold counts it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SensorRange {
    /// The lowest value it reports as a number.
    pub lowest: i32,
    /// The highest value it reports as a number.
    pub highest: i32,
}

impl SensorRange {
    /// The range from `lowest` to `highest` mg/dL.
    pub const fn new(lowest: i32, highest: i32) -> SensorRange {
        SensorRange { lowest, highest }
    }

    /// What a "Low" reading is stored as.
    pub fn below(self) -> i32 {
        self.lowest - 1
    }

    /// What a "High" reading is stored as.
    pub fn above(self) -> i32 {
        self.highest + 1
    }
}

/// Dexcom sensors (G4 to G7, ONE, ONE+, Stelo): 40–400 mg/dL.
pub const DEXCOM: SensorRange = SensorRange::new(40, 400);
/// FreeStyle Libre sensors: 40–500 mg/dL ("LO", "HI").
pub const LIBRE: SensorRange = SensorRange::new(40, 500);
/// Medtronic Guardian sensors: 40–400 mg/dL.
pub const MEDTRONIC: SensorRange = SensorRange::new(40, 400);
/// Blood glucose meters (finger sticks): 20–600 mg/dL.
pub const METER: SensorRange = SensorRange::new(20, 600);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_one_decimal_mmol_value_keeps_its_side_of_the_consensus_cut_offs() {
        for tenths in 10..400 {
            let mmol = f64::from(tenths) / 10.0;
            let mg = mg_dl_from_mmol_l(mmol);
            for (cut_mmol, cut_mg) in [
                (3.0, VERY_LOW_BELOW),
                (3.9, LOW_BELOW),
                (10.0, HIGH_ABOVE),
                (13.9, VERY_HIGH_ABOVE),
            ] {
                let cut_mg = f64::from(cut_mg);
                assert_eq!(mmol < cut_mmol, mg < cut_mg, "{mmol} mmol/L = {mg} mg/dL");
                assert_eq!(mmol > cut_mmol, mg > cut_mg, "{mmol} mmol/L = {mg} mg/dL");
            }
        }
    }

    #[test]
    fn out_of_range_readings_sit_one_beyond_the_limit() {
        assert_eq!((DEXCOM.below(), DEXCOM.above()), (39, 401));
        assert_eq!((LIBRE.below(), LIBRE.above()), (39, 501));
        assert!((gmi(150.0) - 6.898).abs() < 1e-9);
    }
}
