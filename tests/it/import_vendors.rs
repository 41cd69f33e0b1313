//! `duckgate import` on the exports people have, through the real binary: fixtures written by
//! these tests in each vendor's layout (preambles with a patient's name and date of birth,
//! Low/High readings, mmol/L, sections, DST days), imported, then asked over MCP (or `duckgate
//! query`) and checked against numbers computed here, from the fixture, independently of DuckDB.

use std::path::{Path, PathBuf};

use crate::support::{TempDir, duckgate_cli, outcome, run_cli, serve_whole, status};
use duckgate::mcp_client::{McpClient, envelope_of};
use serde_json::{Value, json};

/// Strings of the made-up patient that must never reach the agent.
pub(crate) const PERSONAL: &[&str] = &[
    "zebulon",
    "quattlebaum",
    "1984-03-07",
    "03/07/1984",
    "8xq7tz",
    "ng4417725h",
    "gt9931044k",
    "90771234",
    // CareLink's patient ID.
    "px-1",
];

/// A reading as the export writes it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum G {
    Mg(i32),
    Low,
    High,
}

impl G {
    /// The stored mg/dL under the import's convention for Dexcom's limits (40, 400).
    pub(crate) fn stored(self) -> i32 {
        match self {
            G::Mg(v) => v,
            G::Low => 39,
            G::High => 401,
        }
    }
}

/// A deterministic glucose trace over 46–393 mg/dL, with a Low or High now and then.
pub(crate) fn glucose_at(i: usize) -> G {
    let x = (i * 37 + (i * i) % 91) % 360;
    match x {
        0..=5 => G::Low,
        354.. => G::High,
        v => G::Mg(40 + v as i32),
    }
}

/// A local wall-clock time: `YYYY-MM-DD`, minutes into the day.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Local {
    pub(crate) day: String,
    pub(crate) minute: u32,
}

impl Local {
    pub(crate) fn hh_mm_ss(&self) -> String {
        format!("{:02}:{:02}:00", self.minute / 60, self.minute % 60)
    }
}

/// Every `step` minutes of the local days `days`, as a device's clock shows them: on
/// 2026-10-25 (Europe's fall back) 02:00–02:59 comes twice, on 2026-03-29 (spring forward) it
/// never comes.
pub(crate) fn local_times(days: &[&str], step: u32) -> Vec<Local> {
    let mut times = Vec::new();
    for day in days {
        for minute in (0..1440).step_by(step as usize) {
            if *day == "2026-03-29" && (120..180).contains(&minute) {
                continue;
            }
            times.push(Local {
                day: day.to_string(),
                minute,
            });
            if *day == "2026-10-25" && minute + step >= 180 && minute < 180 {
                for again in (120..180).step_by(step as usize) {
                    times.push(Local {
                        day: day.to_string(),
                        minute: again,
                    });
                }
            }
        }
    }
    times
}

/// Counts computed from the fixture: readings, below 54, above 250, sum of stored mg/dL.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub(crate) struct Expected {
    pub(crate) readings: i64,
    pub(crate) below_54: i64,
    pub(crate) above_250: i64,
    pub(crate) sum: i64,
}

impl Expected {
    pub(crate) fn of(values: impl Iterator<Item = i32>) -> Expected {
        let mut e = Expected::default();
        for v in values {
            e.readings += 1;
            e.below_54 += i64::from(v < 54);
            e.above_250 += i64::from(v > 250);
            e.sum += i64::from(v);
        }
        e
    }

    pub(crate) fn mean(&self) -> f64 {
        self.sum as f64 / self.readings as f64
    }
}

/// Time in range (70–180) of one local day, in percent to one decimal as the view rounds it.
pub(crate) fn tir(values: &[i32]) -> f64 {
    let n = values.iter().filter(|v| (70..=180).contains(*v)).count();
    (1000.0 * n as f64 / values.len() as f64).round() / 10.0
}

// --- the fixtures, in the vendors' layouts ------------------------------------------------------

/// A Dexcom Clarity export: patient rows first (name, date of birth), device and alert rows,
/// then EGV readings every 5 minutes (Low/High as words), insulin, carbs, one bad value.
pub(crate) fn clarity_csv(days: &[&str], offset: usize) -> (String, Vec<(Local, G)>) {
    let mut text = String::from(
        "Index,Timestamp (YYYY-MM-DDThh:mm:ss),Event Type,Event Subtype,Patient Info,Device Info,\
         Source Device ID,Glucose Value (mg/dL),Insulin Value (u),Carb Value (grams),\
         Duration (hh:mm:ss),Glucose Rate of Change (mg/dL/min),Transmitter Time (Long Integer),\
         Transmitter ID\n\
         1,,FirstName,,Zebulon,,,,,,,,,\n\
         2,,LastName,,Quattlebaum,,,,,,,,,\n\
         3,,DateOfBirth,,1984-03-07,,,,,,,,,\n\
         4,,Device,,,Dexcom G6 Mobile App,Android G6,,,,,,,\n\
         5,,Alert,High,,,Android G6,250,,,00:00:00,,,\n\
         6,,Alert,Low,,,Android G6,70,,,00:00:00,,,\n",
    );
    let mut readings = Vec::new();
    let mut index = 7;
    for (i, t) in local_times(days, 5).into_iter().enumerate() {
        let g = glucose_at(i + offset);
        let shown = match g {
            G::Mg(v) => v.to_string(),
            G::Low => "Low".into(),
            G::High => "High".into(),
        };
        text.push_str(&format!(
            "{index},{}T{},EGV,,,,Android G6,{shown},,,,-0.5,{},8XQ7TZ\n",
            t.day,
            t.hh_mm_ss(),
            900_000 + i
        ));
        index += 1;
        readings.push((t, g));
    }
    let day = days[0];
    text.push_str(&format!(
        "{index},{day}T07:31:00,Insulin,Fast-Acting,,,Android G6,,4.5,,,,,\n\
         {},{day}T07:32:00,Carbs,,,,Android G6,,,45,,,,\n\
         {},{day}T22:00:00,Insulin,Long-Acting,,,Android G6,,18,,,,,\n\
         {},{day}T18:00:00,Exercise,Medium,,,Android G6,,,,00:30:00,,,\n\
         {},{day}T23:59:00,EGV,,,,Android G6,???,,,,,,8XQ7TZ\n",
        index + 1,
        index + 2,
        index + 3,
        index + 4
    ));
    (text, readings)
}

/// A LibreView export in mmol/L or mg/dL: its "Generated by" line with the patient's name, then the
/// 15-minute history (record type 0, some LO/HI), scans (1), insulin (4), food (5). Times in the
/// US order, `MM-DD-YYYY HH:MM`.
pub(crate) fn libreview_csv(days: &[&str], mmol: bool) -> (String, Vec<i32>, Vec<(Local, i32)>) {
    let unit = if mmol { "mmol/L" } else { "mg/dL" };
    let mut text = format!(
        "Patient report,Generated on,10-28-2026 09:15 UTC,Generated by,Zebulon Quattlebaum\n\
         Device,Serial Number,Device Timestamp,Record Type,Historic Glucose {unit},\
         Scan Glucose {unit},Non-numeric Rapid-Acting Insulin,Rapid-Acting Insulin (units),\
         Non-numeric Food,Carbohydrates (grams),Carbohydrates (servings),\
         Non-numeric Long-Acting Insulin,Long-Acting Insulin Value (units),Notes,\
         Strip Glucose {unit},Ketone mmol/L,Meal Insulin (units),Correction Insulin (units),\
         User Change Insulin (units)\n",
    );
    let us = |t: &Local| {
        let (y, m, d) = (&t.day[0..4], &t.day[5..7], &t.day[8..10]);
        format!("{m}-{d}-{y} {:02}:{:02}", t.minute / 60, t.minute % 60)
    };
    let mut stored = Vec::new();
    let mut by_time = Vec::new();
    for (i, t) in local_times(days, 15).into_iter().enumerate() {
        let (shown, mg) = match glucose_at(i * 7) {
            G::Low => ("LO".to_string(), 39),
            G::High => ("HI".to_string(), 501),
            G::Mg(v) if !mmol => (v.to_string(), v),
            G::Mg(v) => {
                let tenths = (f64::from(v) / 18.016 * 10.0).round() / 10.0;
                let text = format!("{tenths:.1}");
                let back = text.parse::<f64>().unwrap() * 18.016;
                (text, back.round() as i32)
            }
        };
        text.push_str(&format!(
            "FreeStyle Libre 2,90771234-ABCD,{},0,{shown},,,,,,,,,,,,,,\n",
            us(&t)
        ));
        stored.push(mg);
        by_time.push((t, mg));
    }
    let day = days[0];
    let at = |hh: u32| {
        us(&Local {
            day: day.into(),
            minute: hh * 60 + 7,
        })
    };
    let scan = if mmol { "6.1" } else { "110" };
    text.push_str(&format!(
        "FreeStyle Libre 2,90771234-ABCD,{},1,,{scan},,,,,,,,,,,,,\n\
         FreeStyle Libre 2,90771234-ABCD,{},4,,,,3.5,,,,,,,,,,,\n\
         FreeStyle Libre 2,90771234-ABCD,{},5,,,,,,60,,,,,,,,,\n\
         FreeStyle Libre 2,90771234-ABCD,{},4,,,,,,,,,14,,,,,,\n",
        at(8),
        at(12),
        at(12),
        at(21)
    ));
    (text, stored, by_time)
}

/// The sections of a t:connect export: readings (every row ends with a comma), insulin on
/// board, basal, boluses; and its patient lines.
pub(crate) struct TConnect {
    pub(crate) header: String,
    pub(crate) readings: String,
    pub(crate) iob: String,
    pub(crate) basal: String,
    pub(crate) bolus: String,
    cgm: Vec<i32>,
}

pub(crate) fn tconnect_sections(days: &[&str]) -> TConnect {
    let header = "Tandem Diabetes Care Inc.\nt:connect Therapy Timeline Data Export\n\
                  Patient Name, Zebulon Quattlebaum\nPatient DOB, 03/07/1984\n\
                  Report Generated On, 10/28/2026 7:50:04 PM\n"
        .to_string();
    let mut readings =
        String::from("DeviceType,SerialNumber,Description,EventDateTime,Readings (CGM / BGM)\n");
    let mut cgm = Vec::new();
    for (i, t) in local_times(days, 5).into_iter().enumerate() {
        let v = glucose_at(i + 11).stored().clamp(40, 400);
        readings.push_str(&format!(
            "\"t:slim X2 Insulin Pump\",\"90771234\",\"EGV\",\"{}T{}\",\"{v}\",\n",
            t.day,
            t.hh_mm_ss()
        ));
        cgm.push(v);
    }
    readings.push_str(&format!(
        "\"t:slim X2 Insulin Pump\",\"90771234\",\"BG\",\"{}T07:00:00\",\"131\",\n",
        days[0]
    ));
    let iob = format!(
        "Type,EventID,EventDateTime,IOB\n\"IOB\",\"81\",\"{}T00:00:19\",\"1.24\"\n",
        days[0]
    );
    let basal = format!(
        "Type,EventDateTime,BasalRate\n\"Basal\",\"{d}T00:00:00\",\"0.8\",\n\"Basal\",\"{d}T06:00:00\",\"1.1\",\n\"Basal\",\"{d}T22:00:00\",\"0.7\",\n",
        d = days[0]
    );
    let mut bolus = String::from(
        "Type,Description,BG,IOB,BolusRequestID,BolusCompletionID,CompletionDateTime,\
         InsulinDelivered,FoodDelivered,CorrectionDelivered,CompletionStatusID,CompletionStatusDesc,\
         BolusIsComplete,BolexCompletionID,BolexSize,BolexStartDateTime,BolexCompletionDateTime,\
         BolexInsulinDelivered,BolexIOB,BolexCompletionStatusID,BolexCompletionStatusDesc,\
         ExtendedBolusIsComplete,EventDateTime,RequestDateTime,BolusType,BolusRequestOptions,\
         StandardPercent,Duration,CarbSize,UserOverride,TargetBG,CorrectionFactor,FoodBolusSize,\
         CorrectionBolusSize,ActualTotalBolusRequested,IsQuickBolus,EventHistoryReportEventDesc,\
         EventHistoryReportDetails,NoteID,IndexID,Note\n",
    );
    for (hh, units, carbs) in [(7, "6.25", "60"), (12, "4.10", "40"), (19, "3.00", "0")] {
        let d = days[0];
        bolus.push_str(&format!(
            "\"Bolus\",\"Standard/Correction\",\"141\",,\"7001.000\",\"7001.000\",\"{d}T{hh:02}:04:26\",\
             \"{units}\",\"{units}\",\"0.00\",\"3\",\"Completed\",\"1\",,,,,,,,,,\"{d}T{hh:02}:00:36\",\
             \"{d}T{hh:02}:00:36\",\"Carb\",\"Standard/Correction\",\"100.00\",\"0\",\"{carbs}\",\"0\",\
             \"110\",\"30.00\",\"{units}\",\"0.00\",\"{units}\",\"0\",\"0\",\"Food Bolus\",\"CF 1:30\",\"0\",\"1181649\",\"\",\n"
        ));
    }
    TConnect {
        header,
        readings,
        iob,
        basal,
        bolus,
        cgm,
    }
}

/// A CareLink export, semicolon-separated with decimal commas: its preamble (name, patient ID,
/// date of birth, serial numbers), then the pump's section and the sensor's.
pub(crate) fn carelink_csv(days: &[&str]) -> (String, Vec<i32>) {
    let columns = "Index;Date;Time;New Device Time;BG Source;BG Reading (mg/dL);Linked BG Meter ID;\
        Basal Rate (U/h);Temp Basal Amount;Temp Basal Type;Temp Basal Duration (h:mm:ss);Bolus Type;\
        Bolus Volume Selected (U);Bolus Volume Delivered (U);Bolus Duration (h:mm:ss);Prime Type;\
        Prime Volume Delivered (U);Alarm;Suspend;Rewind;BWZ Estimate (U);\
        BWZ Target High BG (mg/dL);BWZ Target Low BG (mg/dL);BWZ Carb Ratio (g/U);\
        BWZ Insulin Sensitivity (mg/dL/U);BWZ Carb Input (grams);BWZ BG Input (mg/dL);\
        BWZ Correction Estimate (U);BWZ Food Estimate (U);BWZ Active Insulin (U);BWZ Status;\
        Sensor Calibration BG (mg/dL);Sensor Glucose (mg/dL);ISIG Value;Event Marker;Bolus Number;\
        Bolus Cancellation Reason;BWZ Unabsorbed Insulin Total (U);Final Bolus Estimate;\
        Scroll Step Size;Insulin Action Curve Time;Sensor Calibration Rejected Reason;Preset Bolus;\
        Bolus Source;BLE Network Device;Device Update Event;Network Device Associated Reason;\
        Network Device Disassociated Reason;Network Device Disconnected Reason;Sensor Exception;\
        Preset Temp Basal Name";
    let width = columns.split(';').count();
    let row = |cells: &[(usize, String)]| {
        let mut fields = vec![String::new(); width];
        for (at, value) in cells {
            fields[*at] = value.clone();
        }
        fields.join(";") + "\n"
    };
    let slash = |day: &str| day.replace('-', "/");
    let mut text = format!(
        "Last Name;First Name;Patient ID;Start Date;End Date;Device;MiniMed 780G MMT-1886\n\
         Quattlebaum;Zebulon;PX-1;{};{};Serial Number;NG4417725H\n\
         Patient DOB;03/07/1984;;;;;CGM;Guardian 4 Sensor\n\n\
         -------;MiniMed 780G MMT-1886;Pump;NG4417725H;-------\n{columns}\n",
        slash(days[0]),
        slash(days[days.len() - 1])
    );
    let d = slash(days[0]);
    text.push_str(&row(&[
        (0, "1".into()),
        (1, d.clone()),
        (2, "00:00:00".into()),
        (7, "0,85".into()),
    ]));
    text.push_str(&row(&[
        (0, "2".into()),
        (1, d.clone()),
        (2, "07:30:00".into()),
        (11, "Normal".into()),
        (12, "5,5".into()),
        (13, "5,5".into()),
        (14, "0:00:00".into()),
        (25, "55".into()),
        (43, "BOLUS_WIZARD".into()),
    ]));
    text.push_str(&row(&[
        (0, "3".into()),
        (1, d.clone()),
        (2, "13:10:00".into()),
        (11, "Square".into()),
        (12, "2,2".into()),
        (13, "2,2".into()),
        (14, "1:30:00".into()),
    ]));
    text.push_str(&row(&[
        (0, "4".into()),
        (1, d.clone()),
        (2, "15:00:00".into()),
        (17, "Low Reservoir".into()),
    ]));
    text.push_str(&row(&[
        (0, "5".into()),
        (1, d.clone()),
        (2, "16:20:00".into()),
        (5, "112".into()),
    ]));
    text.push_str(&format!(
        "\n-------;MiniMed 780G MMT-1886;Sensor;GT9931044K;-------\n{columns}\n"
    ));
    let mut cgm = Vec::new();
    for (i, t) in local_times(days, 5).into_iter().enumerate() {
        let v = glucose_at(i + 5).stored().clamp(40, 400);
        text.push_str(&row(&[
            (0, (100 + i).to_string()),
            (1, slash(&t.day)),
            (2, t.hh_mm_ss()),
            (32, v.to_string()),
            (33, "21,3".into()),
        ]));
        cgm.push(v);
    }
    (text, cgm)
}

/// Days since 1970-01-01 of a `YYYY-MM-DD` (the civil-from-days inverse).
pub(crate) fn days_from_civil(day: &str) -> i64 {
    let y: i64 = day[0..4].parse().unwrap();
    let m: i64 = day[5..7].parse().unwrap();
    let d: i64 = day[8..10].parse().unwrap();
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Nightscout `entries` every 5 minutes in UTC over `utc_days`, with no utcOffset (the import's
/// --time-zone places them), as its API returns them: newest first, `date` in epoch ms.
/// Returns the JSON and each reading's local day in Europe/Berlin with its mg/dL.
pub(crate) fn nightscout_entries(utc_days: &[&str]) -> (String, Vec<(String, i32)>) {
    let mut records = Vec::new();
    let mut local = Vec::new();
    // Europe/Berlin: CEST (+2) until 2026-10-25T01:00Z, CET (+1) after.
    let switch = days_from_civil("2026-10-25") * 86_400 + 3_600;
    for (i, minute) in utc_days
        .iter()
        .flat_map(|d| (0..1440).step_by(5).map(move |m| (d, m)))
        .enumerate()
    {
        let (day, m) = minute;
        let seconds = days_from_civil(day) * 86_400 + i64::from(m) * 60;
        let value = match glucose_at(i + 3) {
            G::Low => 39,
            G::High => 401,
            G::Mg(v) => v,
        };
        records.push(json!({
            "_id": format!("65{i:022}"),
            "device": "xDrip-DexcomG6 (Zebulon's phone)",
            "date": seconds * 1000,
            "dateString": format!("{day}T{:02}:{:02}:00.000Z", m / 60, m % 60),
            "sgv": value,
            "delta": 1.5,
            "direction": "Flat",
            "type": "sgv",
            "filtered": 120000,
            "unfiltered": 118000,
            "rssi": 100,
            "noise": 1,
            "sysTime": format!("{day}T{:02}:{:02}:00.000Z", m / 60, m % 60),
        }));
        let offset = if seconds < switch { 7_200 } else { 3_600 };
        let local_day = (seconds + offset).div_euclid(86_400);
        local.push((local_day.to_string(), value));
    }
    // One sensor error code (not glucose) and one finger stick.
    records.push(json!({"device": "xDrip-DexcomG6", "date": days_from_civil(utc_days[0]) * 86_400_000 + 60_000, "dateString": "x", "sgv": 5, "type": "sgv"}));
    records.push(json!({"device": "xDrip-DexcomG6", "date": days_from_civil(utc_days[0]) * 86_400_000 + 120_000, "mbg": 140, "type": "mbg"}));
    records.reverse();
    (serde_json::to_string_pretty(&records).unwrap(), local)
}

/// Nightscout `treatments` as its API returns them (`created_at` in UTC, `enteredBy`).
pub(crate) fn nightscout_treatments() -> String {
    serde_json::to_string(&json!([
        {"_id": "a1", "eventType": "Meal Bolus", "created_at": "2026-10-24T06:30:00.000Z", "insulin": 5.5, "carbs": 50, "enteredBy": "Zebulon Quattlebaum", "utcOffset": 120},
        {"_id": "a2", "eventType": "Correction Bolus", "created_at": "2026-10-24T14:00:00.000Z", "insulin": 1.25, "enteredBy": "loop://Zebulon's iPhone"},
        {"_id": "a3", "eventType": "Temp Basal", "created_at": "2026-10-24T15:00:00.000Z", "absolute": 0.4, "rate": 0.4, "duration": 30, "enteredBy": "loop://Zebulon's iPhone"},
        {"_id": "a4", "eventType": "Carb Correction", "created_at": "2026-10-24T16:00:00.000Z", "carbs": 15},
        {"_id": "a5", "eventType": "Site Change", "created_at": "2026-10-24T18:00:00.000Z", "notes": "left arm"},
        {"_id": "a6", "eventType": "BG Check", "created_at": "2026-10-24T19:00:00.000Z", "glucose": 5.5, "units": "mmol", "glucoseType": "Finger"}
    ]))
    .unwrap()
}

/// An Apple Health export.xml: its DOCTYPE, `<Me>` (date of birth), other records, Dexcom G7
/// glucose (mg/dL), a meter's glucose in Apple's mmol/L unit, insulin (bolus and basal) and carbs.
/// The CGM readings span Europe's fall-back day: each record carries the offset the phone had
/// (+0200, then +0100 from the repeated hour's second pass on).
pub(crate) fn apple_health_xml() -> (String, Vec<(Local, i32)>) {
    let mut text = String::from(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!DOCTYPE HealthData [\n\
         <!-- HealthKit Export Version: 13 -->\n<!ELEMENT HealthData (ExportDate,Me,(Record|Workout)*)>\n\
         <!ATTLIST HealthData locale CDATA #REQUIRED>\n]>\n<HealthData locale=\"en_US\">\n\
          <ExportDate value=\"2026-10-28 09:00:00 +0100\"/>\n\
          <Me HKCharacteristicTypeIdentifierDateOfBirth=\"1984-03-07\" HKCharacteristicTypeIdentifierBiologicalSex=\"HKBiologicalSexMale\"/>\n\
          <Record type=\"HKQuantityTypeIdentifierStepCount\" sourceName=\"Zebulon&apos;s iPhone\" unit=\"count\" creationDate=\"2026-10-24 08:00:00 +0200\" startDate=\"2026-10-24 08:00:00 +0200\" endDate=\"2026-10-24 08:10:00 +0200\" value=\"512\"/>\n",
    );
    let mut cgm: Vec<(Local, i32)> = Vec::new();
    for (i, t) in local_times(&["2026-10-24", "2026-10-25"], 5)
        .into_iter()
        .enumerate()
    {
        let v = glucose_at(i + 17).stored().clamp(40, 400);
        let summer =
            t.day == "2026-10-24" || (t.minute < 180 && !cgm.iter().any(|(seen, _)| *seen == t));
        let offset = if summer { "+0200" } else { "+0100" };
        text.push_str(&format!(
            " <Record type=\"HKQuantityTypeIdentifierBloodGlucose\" sourceName=\"Dexcom G7\" sourceVersion=\"2.1\" device=\"&lt;&lt;HKDevice: 0x283a&gt;, name:Zebulon&apos;s CGM, manufacturer:Dexcom, model:G7, localIdentifier:8XQ7TZ&gt;\" unit=\"mg/dL\" creationDate=\"{d} {hms} {offset}\" startDate=\"{d} {hms} {offset}\" endDate=\"{d} {hms} {offset}\" value=\"{v}\">\n  <MetadataEntry key=\"HKMetadataKeySyncIdentifier\" value=\"{i}\"/>\n </Record>\n",
            d = t.day,
            hms = t.hh_mm_ss()
        ));
        cgm.push((t, v));
    }
    text.push_str(
        " <Record type=\"HKQuantityTypeIdentifierBloodGlucose\" sourceName=\"Contour\" unit=\"mmol&lt;180.1558800000541&gt;/L\" startDate=\"2026-10-24 07:00:00 +0200\" endDate=\"2026-10-24 07:00:00 +0200\" value=\"6.1\"/>\n\
          <Record type=\"HKQuantityTypeIdentifierInsulinDelivery\" sourceName=\"Zebulon&apos;s iPhone\" unit=\"IU\" startDate=\"2026-10-24 07:05:00 +0200\" endDate=\"2026-10-24 07:05:00 +0200\" value=\"4.5\">\n  <MetadataEntry key=\"HKInsulinDeliveryReason\" value=\"2\"/>\n </Record>\n\
          <Record type=\"HKQuantityTypeIdentifierInsulinDelivery\" sourceName=\"Zebulon&apos;s iPhone\" unit=\"IU\" startDate=\"2026-10-24 08:00:00 +0200\" endDate=\"2026-10-24 09:00:00 +0200\" value=\"0.9\">\n  <MetadataEntry key=\"HKInsulinDeliveryReason\" value=\"1\"/>\n </Record>\n\
          <Record type=\"HKQuantityTypeIdentifierDietaryCarbohydrates\" sourceName=\"Zebulon&apos;s iPhone\" unit=\"g\" startDate=\"2026-10-24 07:05:00 +0200\" endDate=\"2026-10-24 07:05:00 +0200\" value=\"48\"/>\n\
         </HealthData>\n",
    );
    (text, cgm)
}

// --- running it -------------------------------------------------------------------------------

/// `duckgate import --out OUT extra… inputs…`: (exit code, stdout, stderr).
pub(crate) fn import(out: &Path, extra: &[&str], inputs: &[&Path]) -> (i32, String, String) {
    let mut command = duckgate_cli(["import", "--out"]);
    command.arg(out).args(extra).args(inputs);
    outcome(&run_cli(command, None))
}

pub(crate) fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// One query over MCP; its rows.
pub(crate) async fn rows(client: &McpClient, sql: &str) -> Vec<Value> {
    let result = client
        .call("query", json!({ "sql": sql, "limit": 10000 }))
        .await
        .unwrap();
    assert_eq!(
        status(&result),
        "success",
        "{sql}: {}",
        envelope_of(&result)
    );
    envelope_of(&result)["data"]["rows"]
        .as_array()
        .unwrap()
        .clone()
}

/// Readings, below 54, above 250 and mean of `cgm_readings` (of one source when given).
pub(crate) async fn cgm_stats(client: &McpClient, source: Option<&str>) -> (i64, i64, i64, f64) {
    let filter = source
        .map(|s| format!(" WHERE source = '{s}'"))
        .unwrap_or_default();
    let row = &rows(
        client,
        &format!(
            "SELECT count(*), count(*) FILTER (WHERE glucose_mg_dl < 54), \
             count(*) FILTER (WHERE glucose_mg_dl > 250), avg(glucose_mg_dl)::DOUBLE \
             FROM cgm_readings{filter}"
        ),
    )
    .await[0];
    (
        row[0].as_i64().unwrap(),
        row[1].as_i64().unwrap(),
        row[2].as_i64().unwrap(),
        row[3].as_f64().unwrap(),
    )
}

pub(crate) fn assert_stats(got: (i64, i64, i64, f64), want: Expected) {
    assert_eq!(
        (got.0, got.1, got.2),
        (want.readings, want.below_54, want.above_250),
        "readings, below 54, above 250"
    );
    assert!(
        (got.3 - want.mean()).abs() < 1e-9,
        "mean {} != {}",
        got.3,
        want.mean()
    );
}

/// Every reply the agent can get about the database: no personal string of the fixtures, and
/// no file path or name, in any of them. `dir` is the fixture's folder: its path (the user's
/// home path, in real life) must not show either.
pub(crate) async fn assert_no_personal_details(
    client: &McpClient,
    dir: &Path,
    forbidden_extra: &[&str],
) {
    let folder = dir.to_string_lossy().into_owned();
    let check = |what: &str, reply: String| {
        let lower = reply.to_lowercase();
        for word in PERSONAL
            .iter()
            .chain(forbidden_extra)
            .chain([&folder.as_str()])
        {
            assert!(
                !lower.contains(&word.to_lowercase()),
                "{what} shows {word:?}: {reply}"
            );
        }
    };
    let tables = client.call("list_tables", json!({})).await.unwrap();
    check("list_tables", serde_json::to_string(&tables).unwrap());
    let names: Vec<String> = rows(
        client,
        "SELECT table_name FROM duckdb_tables() WHERE schema_name = 'main' \
         UNION ALL SELECT view_name FROM duckdb_views() WHERE schema_name = 'main' AND NOT internal",
    )
    .await
    .iter()
    .map(|r| r[0].as_str().unwrap().to_string())
    .collect();
    assert!(names.contains(&"cgm_readings".to_string()), "{names:?}");
    for name in &names {
        for tool in ["describe_table", "sample_rows"] {
            let reply = client
                .call(tool, json!({ "table_name": name }))
                .await
                .unwrap();
            assert_eq!(status(&reply), "success", "{tool} {name}");
            check(
                &format!("{tool} {name}"),
                serde_json::to_string(&reply).unwrap(),
            );
        }
        let all = client
            .call(
                "query",
                json!({ "sql": format!("SELECT * FROM {name}"), "limit": 10000 }),
            )
            .await
            .unwrap();
        assert_eq!(status(&all), "success", "SELECT * FROM {name}");
        check(
            &format!("SELECT * FROM {name}"),
            serde_json::to_string(&all).unwrap(),
        );
    }
    let snapshot = client.read_resource("schema://snapshot").await.unwrap();
    check(
        "schema://snapshot",
        serde_json::to_string(&snapshot).unwrap(),
    );
}

// --- the tests --------------------------------------------------------------------------------

/// A Clarity export with its patient rows, Low/High readings and a DST day: glucose is an
/// INTEGER in mg/dL, lows below 54 and highs above 250 count the Low/High readings, the mean is
/// over the stored values, the fall-back day holds its 300 readings and its time in range, the
/// metric views answer, and no name, date of birth, serial or file name reaches the agent.
#[tokio::test(flavor = "multi_thread")]
async fn clarity_export_keeps_lows_and_highs_countable_and_its_patient_out_of_sight() {
    let dir = TempDir::new("import-clarity");
    let days = ["2026-10-24", "2026-10-25", "2026-10-26"];
    let (text, readings) = clarity_csv(&days, 0);
    let file = write(
        dir.path(),
        "Clarity_Export_Quattlebaum_Zebulon_2026-10-27_123456.csv",
        &text,
    );
    let out = dir.path().join("health").join("cgm.duckdb");
    let (code, said, err) = import(&out, &[], &[&file]);
    assert_eq!(code, 0, "{said}{err}");
    eprintln!("{said}");

    let expected = Expected::of(readings.iter().map(|(_, g)| g.stored()));
    assert!(expected.below_54 > expected.readings / 200, "{expected:?}");
    let lows = readings.iter().filter(|(_, g)| *g == G::Low).count();
    assert!(lows > 0);
    // The summary: each file's format, rows, what did not parse and what was left out; each
    // table's rows, range and typed columns; the client lines.
    for needle in [
        "Dexcom Clarity CSV, glucose in mg/dL",
        &format!("cgm_readings +{}", expected.readings),
        "could not parse 1 row (left out), e.g. Glucose Value (mg/dL) \"???\"",
        "left out: the patient's name and date of birth",
        &format!(
            "cgm_readings ({} rows, 2026-10-24 00:00 to 2026-10-26 23:55)",
            expected.readings
        ),
        "ts TIMESTAMP, glucose_mg_dl INTEGER, out_of_range VARCHAR",
        "insulin_boluses (1 row,",
        "long_acting_insulin (1 row,",
        "carbs (1 row,",
        "Views: cgm_14_day_metrics, cgm_daily_metrics",
        "Claude Desktop",
        "claude mcp add -s user duckgate --",
    ] {
        assert!(said.contains(needle), "{needle:?} missing from:\n{said}");
    }
    assert!(!said.to_lowercase().contains("zebulon 1984"), "{said}");

    let client = serve_whole(&out, &[]).await;
    assert_stats(cgm_stats(&client, None).await, expected);
    let flagged = rows(
        &client,
        "SELECT out_of_range, min(glucose_mg_dl), max(glucose_mg_dl), count(*) FROM cgm_readings \
         WHERE out_of_range IS NOT NULL GROUP BY 1 ORDER BY 1",
    )
    .await;
    let highs = readings.iter().filter(|(_, g)| *g == G::High).count();
    assert_eq!(
        flagged,
        vec![
            json!(["high", 401, 401, highs]),
            json!(["low", 39, 39, lows])
        ]
    );
    let dst_day: Vec<i32> = readings
        .iter()
        .filter(|(t, _)| t.day == "2026-10-25")
        .map(|(_, g)| g.stored())
        .collect();
    assert_eq!(dst_day.len(), 300, "25 hours of 5-minute readings");
    let day = rows(
        &client,
        "SELECT readings, pct_70_180, readings_below_54 FROM cgm_daily_metrics \
         WHERE day = DATE '2026-10-25'",
    )
    .await;
    assert_eq!(
        day,
        vec![json!([
            300,
            tir(&dst_day),
            dst_day.iter().filter(|v| **v < 54).count()
        ])]
    );
    let period = rows(
        &client,
        "SELECT readings, readings_below_54, period_start::VARCHAR, period_end::VARCHAR, gmi_pct \
         FROM cgm_14_day_metrics",
    )
    .await;
    let gmi = ((3.31 + 0.02392 * expected.mean()) * 100.0).round() / 100.0;
    assert_eq!(
        period,
        vec![json!([
            expected.readings,
            expected.below_54,
            "2026-10-13",
            "2026-10-26",
            gmi
        ])]
    );
    let other = rows(
        &client,
        "SELECT (SELECT sum(units) FROM insulin_boluses), (SELECT sum(units) FROM long_acting_insulin), \
         (SELECT sum(grams) FROM carbs), (SELECT string_agg(event, ',') FROM device_events), \
         (SELECT any_value(device) FROM cgm_readings)",
    )
    .await;
    assert_eq!(
        other,
        vec![json!([4.5, 18.0, 45.0, "Exercise: Medium", "Dexcom G6"])]
    );
    let comments = rows(
        &client,
        "SELECT comment FROM duckdb_tables() WHERE table_name = 'cgm_readings'",
    )
    .await;
    let comment = comments[0][0].as_str().unwrap();
    assert!(
        comment.contains("From Dexcom Clarity CSV (Dexcom G6), 2026-10-24 to 2026-10-26"),
        "{comment}"
    );
    assert!(comment.contains("local wall-clock time"), "{comment}");
    assert!(
        comment.contains("Low/High readings are kept as 39/401"),
        "{comment}"
    );
    // The agent finds the metric views in list_tables, each with a comment saying what it is.
    let listed = client.call("list_tables", json!({})).await.unwrap();
    let listed = envelope_of(&listed)["data"]["tables"].clone();
    for (view, says) in [
        ("cgm_daily_metrics", "per local day"),
        ("cgm_14_day_metrics", "per 14-day period"),
    ] {
        let entry = listed
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == view)
            .unwrap_or_else(|| panic!("{view} not in list_tables: {listed}"));
        assert_eq!(entry["kind"], "view", "{entry}");
        let description = entry["description"].as_str().unwrap_or_default();
        for needle in [
            says,
            "<54, 54-69, 70-180, 181-250, >250",
            "GMI",
            "sensor wear",
        ] {
            assert!(
                description.contains(needle),
                "{view}: {needle:?} not in {description:?}"
            );
        }
    }
    assert_no_personal_details(&client, dir.path(), &["clarity_export"]).await;
    client.close().await.unwrap();
}

/// A LibreView export in mg/dL (the US default): the same history, LO as 39 and HI as 501
/// (a Libre reads up to 500), counted by every threshold; the fall-back day's time in range.
#[tokio::test(flavor = "multi_thread")]
async fn libreview_mg_dl_export_keeps_lo_and_hi_countable() {
    let dir = TempDir::new("import-libre-mg");
    let days = ["2026-10-24", "2026-10-25"];
    let (text, stored, by_time) = libreview_csv(&days, false);
    assert!(
        stored.contains(&39) && stored.contains(&501),
        "the fixture has LO and HI"
    );
    let file = write(dir.path(), "Zebulon Quattlebaum_glucose.csv", &text);
    let out = dir.path().join("libre.duckdb");
    let (code, said, err) = import(&out, &[], &[&file]);
    assert_eq!(code, 0, "{said}{err}");
    assert!(said.contains("LibreView CSV, glucose in mg/dL"), "{said}");
    assert!(said.contains("every value parsed"), "{said}");
    let client = serve_whole(&out, &[]).await;
    assert_stats(
        cgm_stats(&client, None).await,
        Expected::of(stored.iter().copied()),
    );
    let dst_day: Vec<i32> = by_time
        .iter()
        .filter(|(t, _)| t.day == "2026-10-25")
        .map(|(_, v)| *v)
        .collect();
    let checks = rows(
        &client,
        "SELECT (SELECT readings FROM cgm_daily_metrics WHERE day = DATE '2026-10-25'), \
         (SELECT pct_70_180 FROM cgm_daily_metrics WHERE day = DATE '2026-10-25'), \
         (SELECT count(*) FILTER (WHERE out_of_range = 'high') FROM cgm_readings), \
         (SELECT list(glucose_mg_dl || ' ' || method) FROM glucose_checks), \
         (SELECT DISTINCT source_unit FROM cgm_readings)",
    )
    .await;
    assert_eq!(
        checks,
        vec![json!([
            100,
            tir(&dst_day),
            stored.iter().filter(|v| **v == 501).count(),
            ["110 sensor scan"],
            "mg/dL"
        ])]
    );
    assert_no_personal_details(&client, dir.path(), &[]).await;
    client.close().await.unwrap();
}

/// A LibreView export in mmol/L (LO/HI, US dates, its "Generated by" line): readings become
/// whole mg/dL (× 18.016, rounded) typed as INTEGER, times become TIMESTAMPs read in the right
/// day/month order, LO/HI keep thresholds, and the 15-minute history is counted apart from
/// scans.
#[tokio::test(flavor = "multi_thread")]
async fn libreview_mmol_export_becomes_mg_dl_with_typed_local_times() {
    let dir = TempDir::new("import-libre");
    let days = ["2026-10-24", "2026-10-25"];
    let (text, stored, by_time) = libreview_csv(&days, true);
    let file = write(
        dir.path(),
        "Zebulon Quattlebaum_glucose_10-28-2026.csv",
        &text,
    );
    let out = dir.path().join("libre.duckdb");
    let (code, said, err) = import(&out, &[], &[&file]);
    assert_eq!(code, 0, "{said}{err}");
    assert!(said.contains("LibreView CSV, glucose in mmol/L"), "{said}");
    assert!(said.contains("every value parsed"), "{said}");

    let expected = Expected::of(stored.iter().copied());
    let client = serve_whole(&out, &[]).await;
    assert_stats(cgm_stats(&client, None).await, expected);
    // 3.0 mmol/L is 54 (not below 54), 3.9 is 70, 10.0 is 180: the consensus cut-offs agree.
    let edges = rows(
        &client,
        "SELECT source_value, glucose_mg_dl FROM cgm_readings \
         WHERE source_value IN (2.9, 3.0, 3.8, 3.9, 10.0, 10.1, 13.9, 14.0) \
         GROUP BY ALL ORDER BY 1",
    )
    .await;
    for edge in &edges {
        let mmol = edge[0].as_f64().unwrap();
        let mg = edge[1].as_i64().unwrap();
        assert_eq!(mg, (mmol * 18.016).round() as i64, "{edge}");
        for (cut_mmol, cut_mg) in [(3.0, 54), (3.9, 70), (10.0, 180), (13.9, 250)] {
            assert_eq!(mmol < cut_mmol, mg < cut_mg, "{edge} at {cut_mmol}");
            assert_eq!(mmol > cut_mmol, mg > cut_mg, "{edge} at {cut_mmol}");
        }
    }
    assert!(!edges.is_empty());
    let dst_day: Vec<i32> = by_time
        .iter()
        .filter(|(t, _)| t.day == "2026-10-25")
        .map(|(_, v)| *v)
        .collect();
    assert_eq!(dst_day.len(), 100, "25 hours of 15-minute history");
    let day = rows(
        &client,
        "SELECT readings, pct_70_180, readings_below_54, readings_above_250 \
         FROM cgm_daily_metrics WHERE day = DATE '2026-10-25'",
    )
    .await;
    assert_eq!(
        day,
        vec![json!([
            100,
            tir(&dst_day),
            dst_day.iter().filter(|v| **v < 54).count(),
            dst_day.iter().filter(|v| **v > 250).count()
        ])]
    );
    let (first, last) = (&by_time[0].0, &by_time[by_time.len() - 1].0);
    let span = rows(
        &client,
        "SELECT typeof(min(ts)), min(ts)::VARCHAR, max(ts)::VARCHAR, \
         (SELECT count(*) FROM glucose_checks WHERE method = 'sensor scan'), \
         (SELECT sum(units) FROM insulin_boluses), (SELECT sum(units) FROM long_acting_insulin), \
         (SELECT sum(grams) FROM carbs) FROM cgm_readings",
    )
    .await;
    assert_eq!(
        span,
        vec![json!([
            "TIMESTAMP",
            format!("{} {}", first.day, first.hh_mm_ss()),
            format!("{} {}", last.day, last.hh_mm_ss()),
            1,
            3.5,
            14.0,
            60.0
        ])]
    );
    assert_no_personal_details(&client, dir.path(), &[]).await;
    client.close().await.unwrap();
}

/// t:connect as one file of sections and as one file per section give the same tables with
/// the same numbers; insulin on board is left out, the trailing comma of every row is no column.
#[tokio::test(flavor = "multi_thread")]
async fn tconnect_one_file_and_separate_files_import_alike() {
    let dir = TempDir::new("import-tconnect");
    let days = ["2026-03-28", "2026-03-29"];
    let t = tconnect_sections(&days);
    let whole = write(
        dir.path(),
        "tconnect_Quattlebaum.csv",
        &format!(
            "{}\n{}\n{}\n{}\n{}",
            t.header, t.readings, t.iob, t.basal, t.bolus
        ),
    );
    let parts = dir.path().join("parts");
    std::fs::create_dir(&parts).unwrap();
    write(&parts, "cgm.csv", &t.readings);
    write(&parts, "basal.csv", &t.basal);
    write(&parts, "bolus.csv", &t.bolus);
    let one = dir.path().join("one.duckdb");
    let many = dir.path().join("many.duckdb");
    let (code, said, err) = import(&one, &[], &[&whole]);
    assert_eq!(code, 0, "{said}{err}");
    assert!(said.contains("left out: insulin on board"), "{said}");
    let (code, said_many, err) = import(&many, &[], &[&parts]);
    assert_eq!(code, 0, "{said_many}{err}");

    let expected = Expected::of(t.cgm.iter().copied());
    let spring_day = t.cgm.len() - 288;
    assert_eq!(spring_day, 276, "the spring-forward day has 23 hours");
    let sql = "SELECT (SELECT count(*) FROM cgm_readings), \
               (SELECT count(*) FROM cgm_readings WHERE glucose_mg_dl < 54), \
               (SELECT count(*) FROM glucose_checks), (SELECT round(sum(units), 2) FROM insulin_boluses), \
               (SELECT sum(grams) FROM carbs), (SELECT count(*) FROM basal), \
               (SELECT readings FROM cgm_daily_metrics WHERE day = DATE '2026-03-29'), \
               (SELECT pct_70_180 FROM cgm_daily_metrics WHERE day = DATE '2026-03-29'), \
               (SELECT count(*) FROM duckdb_columns() WHERE column_name ILIKE '%trailing%')";
    let want = json!([
        expected.readings,
        expected.below_54,
        1,
        13.35,
        100.0,
        3,
        spring_day,
        tir(&t.cgm[288..]),
        0
    ]);
    for db in [&one, &many] {
        let client = serve_whole(db, &[]).await;
        assert_eq!(
            rows(&client, sql).await,
            vec![want.clone()],
            "{}",
            db.display()
        );
        assert_stats(cgm_stats(&client, None).await, expected);
        assert_no_personal_details(&client, dir.path(), &[]).await;
        client.close().await.unwrap();
    }
}

/// A CareLink export (semicolons, decimal commas, a preamble naming the patient, a pump and a
/// sensor section): sensor glucose, boluses (a square one with its duration), the basal rate,
/// the bolus wizard's carbs, a finger stick and an alarm, each in its table.
#[tokio::test(flavor = "multi_thread")]
async fn carelink_export_sections_become_typed_tables() {
    let dir = TempDir::new("import-carelink");
    let days = ["2026-10-24", "2026-10-25"];
    let (text, cgm) = carelink_csv(&days);
    let file = write(dir.path(), "Quattlebaum Zebulon 28.10.2026.csv", &text);
    let out = dir.path().join("carelink.duckdb");
    let (code, said, err) = import(&out, &[], &[&file]);
    assert_eq!(code, 0, "{said}{err}");
    assert!(said.contains("Medtronic CareLink CSV"), "{said}");
    let expected = Expected::of(cgm.iter().copied());
    let client = serve_whole(&out, &[]).await;
    assert_stats(cgm_stats(&client, None).await, expected);
    let other = rows(
        &client,
        "SELECT (SELECT list(units ORDER BY ts) FROM insulin_boluses), \
         (SELECT max(duration_minutes) FROM insulin_boluses), \
         (SELECT sum(rate_u_per_h) FROM basal), (SELECT sum(grams) FROM carbs), \
         (SELECT list(glucose_mg_dl) FROM glucose_checks), \
         (SELECT list(event || ': ' || detail) FROM device_events), \
         (SELECT any_value(device) FROM cgm_readings), \
         (SELECT readings FROM cgm_daily_metrics WHERE day = DATE '2026-10-25'), \
         (SELECT pct_70_180 FROM cgm_daily_metrics WHERE day = DATE '2026-10-25')",
    )
    .await;
    assert_eq!(
        other,
        vec![json!([
            [5.5, 2.2],
            90.0,
            0.85,
            55.0,
            [112],
            ["Alarm: Low Reservoir"],
            "MiniMed 780G MMT-1886",
            300,
            tir(&cgm[288..])
        ])]
    );
    assert_no_personal_details(&client, dir.path(), &[]).await;
    client.close().await.unwrap();
}

/// Nightscout entries in UTC become the local times of --time-zone (the fall-back day in
/// Berlin holds 25 hours of readings), `sgv` 39 is Dexcom's Low, an error code is reported and
/// left out; treatments become boluses, carbs, a temp basal, a converted BG check and events,
/// and `enteredBy` and the phone's name never arrive.
#[tokio::test(flavor = "multi_thread")]
async fn nightscout_json_becomes_local_time_records_without_uploader_names() {
    let dir = TempDir::new("import-nightscout");
    let utc_days = ["2026-10-24", "2026-10-25", "2026-10-26"];
    let (entries, local) = nightscout_entries(&utc_days);
    let folder = dir.path().join("ns");
    std::fs::create_dir(&folder).unwrap();
    write(&folder, "entries.json", &entries);
    write(&folder, "treatments.json", &nightscout_treatments());
    let out = dir.path().join("ns.duckdb");
    let (code, said, err) = import(&out, &["--time-zone", "Europe/Berlin"], &[&folder]);
    assert_eq!(code, 0, "{said}{err}");
    assert!(said.contains("could not parse 1 row (left out)"), "{said}");
    assert!(
        said.contains("sgv (below 39: a sensor error code) \"5\""),
        "{said}"
    );

    let fall_back = (days_from_civil("2026-10-25")).to_string();
    let dst: Vec<i32> = local
        .iter()
        .filter(|(d, _)| *d == fall_back)
        .map(|(_, v)| *v)
        .collect();
    assert_eq!(dst.len(), 300);
    let expected = Expected::of(local.iter().map(|(_, v)| *v));
    let client = serve_whole(&out, &[]).await;
    assert_stats(cgm_stats(&client, None).await, expected);
    let day = rows(
        &client,
        "SELECT readings, pct_70_180 FROM cgm_daily_metrics WHERE day = DATE '2026-10-25'",
    )
    .await;
    assert_eq!(day, vec![json!([300, tir(&dst)])]);
    let first = rows(
        &client,
        "SELECT min(ts)::VARCHAR, count(*) FILTER (WHERE out_of_range = 'low'), \
         count(*) FILTER (WHERE glucose_mg_dl = 39) FROM cgm_readings",
    )
    .await;
    assert_eq!(
        first[0][0],
        json!("2026-10-24 02:00:00"),
        "UTC midnight is 02:00 CEST"
    );
    assert_eq!(first[0][1], first[0][2]);
    let treatments = rows(
        &client,
        "SELECT (SELECT list(ts::VARCHAR || ' ' || units ORDER BY ts) FROM insulin_boluses), \
         (SELECT sum(grams) FROM carbs), (SELECT list(rate_u_per_h || '/' || duration_minutes) FROM basal), \
         (SELECT list(glucose_mg_dl ORDER BY ts) FROM glucose_checks), \
         (SELECT list(event || ':' || coalesce(detail, '') ORDER BY event) FROM device_events)",
    )
    .await;
    assert_eq!(
        treatments,
        vec![json!([
            ["2026-10-24 08:30:00 5.5", "2026-10-24 16:00:00 1.25"],
            65.0,
            ["0.4/30.0"],
            [140, 99],
            ["Site Change:left arm"]
        ])]
    );
    assert_no_personal_details(&client, dir.path(), &["xdrip"]).await;
    client.close().await.unwrap();
}

/// Apple Health's export.xml: CGM glucose from Dexcom's app, a meter's glucose in Apple's
/// mmol/L unit, bolus and basal insulin and carbs; the fall-back day's 300 readings and its
/// time in range; the owner's date of birth, phone name and the device's name never arrive.
#[tokio::test(flavor = "multi_thread")]
async fn apple_health_export_keeps_glucose_and_insulin_without_the_owner() {
    let dir = TempDir::new("import-apple");
    let (xml, cgm) = apple_health_xml();
    let file = write(dir.path(), "export.xml", &xml);
    let out = dir.path().join("apple.duckdb");
    let (code, said, err) = import(&out, &[], &[&file]);
    assert_eq!(code, 0, "{said}{err}");
    let expected = Expected::of(cgm.iter().map(|(_, v)| *v));
    let client = serve_whole(&out, &[]).await;
    assert_stats(cgm_stats(&client, None).await, expected);
    let dst_day: Vec<i32> = cgm
        .iter()
        .filter(|(t, _)| t.day == "2026-10-25")
        .map(|(_, v)| *v)
        .collect();
    assert_eq!(dst_day.len(), 300, "25 hours of 5-minute readings");
    let day = rows(
        &client,
        "SELECT readings, pct_70_180 FROM cgm_daily_metrics WHERE day = DATE '2026-10-25'",
    )
    .await;
    assert_eq!(day, vec![json!([300, tir(&dst_day)])]);
    let other = rows(
        &client,
        "SELECT (SELECT any_value(device) FROM cgm_readings), \
         (SELECT list(glucose_mg_dl || ' ' || source_unit) FROM glucose_checks), \
         (SELECT sum(units) FROM insulin_boluses), (SELECT list(rate_u_per_h) FROM basal), \
         (SELECT sum(grams) FROM carbs), (SELECT min(ts)::VARCHAR FROM cgm_readings)",
    )
    .await;
    assert_eq!(
        other,
        vec![json!([
            "Dexcom G7",
            [format!("{} mmol/L", (6.1f64 * 18.016).round())],
            4.5,
            [0.9],
            48.0,
            "2026-10-24 00:00:00"
        ])]
    );
    assert_no_personal_details(&client, dir.path(), &[]).await;
    client.close().await.unwrap();
}

/// A newer export that overlaps the last: `--append` adds only its new readings (by device,
/// time and occurrence, so the DST day's repeated hour is neither lost nor doubled), and says
/// how many were there already; a plain re-import is refused with the flags to use; `--replace`
/// rebuilds from the new file alone.
#[tokio::test(flavor = "multi_thread")]
async fn append_adds_only_new_readings_and_replace_rebuilds() {
    let dir = TempDir::new("import-refresh");
    let (first, first_readings) = clarity_csv(&["2026-10-24", "2026-10-25"], 0);
    // The next download covers the 25th again (the same readings) and the 26th and 27th.
    let (second, _) = clarity_csv(&["2026-10-25", "2026-10-26", "2026-10-27"], 288);
    let a = write(dir.path(), "clarity_1.csv", &first);
    let b = write(dir.path(), "clarity_2.csv", &second);
    let (_, all) = clarity_csv(&["2026-10-24", "2026-10-25", "2026-10-26", "2026-10-27"], 0);
    let out = dir.path().join("cgm.duckdb");
    let (code, said, err) = import(&out, &[], &[&a]);
    assert_eq!(code, 0, "{said}{err}");

    let (code, said, err) = import(&out, &[], &[&b]);
    assert_eq!(code, 2, "{said}{err}");
    assert!(err.contains("already exists"), "{err}");
    assert!(
        err.contains("--append") && err.contains("--replace"),
        "{err}"
    );

    let (code, said, err) = import(&out, &["--append"], &[&b]);
    assert_eq!(code, 0, "{said}{err}");
    assert!(said.starts_with("Added to"), "{said}");
    assert!(
        said.contains(&format!("cgm_readings +{} (300 already there)", 288 * 2)),
        "{said}"
    );
    // Both downloads hold the fall-back day: after the append it holds its 300 readings, the
    // repeated hour's twelve times twice each, neither lost nor doubled.
    let expected = Expected::of(all.iter().map(|(_, g)| g.stored()));
    let dst_day: Vec<i32> = all
        .iter()
        .filter(|(t, _)| t.day == "2026-10-25")
        .map(|(_, g)| g.stored())
        .collect();
    let client = serve_whole(&out, &[]).await;
    assert_stats(cgm_stats(&client, None).await, expected);
    let times = rows(
        &client,
        "SELECT count(DISTINCT ts), (SELECT readings FROM cgm_daily_metrics \
         WHERE day = DATE '2026-10-25'), (SELECT pct_70_180 FROM cgm_daily_metrics \
         WHERE day = DATE '2026-10-25'), (SELECT count(*) FROM insulin_boluses) FROM cgm_readings",
    )
    .await;
    // Each download's one bolus is at 07:31 of its own first day: two different boluses.
    assert_eq!(
        times,
        vec![json!([expected.readings - 12, 300, tir(&dst_day), 2])]
    );
    assert_no_personal_details(&client, dir.path(), &["clarity_"]).await;
    client.close().await.unwrap();

    // The same newer file again adds nothing.
    let (code, said, err) = import(&out, &["--append"], &[&b]);
    assert_eq!(code, 0, "{said}{err}");
    assert!(
        said.contains(&format!(
            "cgm_readings +0 ({} already there)",
            288 * 2 + 300
        )),
        "{said}"
    );

    let (code, said, err) = import(&out, &["--replace"], &[&a]);
    assert_eq!(code, 0, "{said}{err}");
    assert!(said.starts_with("Rebuilt"), "{said}");
    let client = serve_whole(&out, &[]).await;
    let first = Expected::of(first_readings.iter().map(|(_, g)| g.stored()));
    assert_stats(cgm_stats(&client, None).await, first);
    client.close().await.unwrap();
}

/// A folder with a good export, a broken one and a text file: the good one is imported, the
/// broken one is reported with a next step, the text file is skipped, the exit code is 1; and
/// the output's missing folders are created, private (0700).
#[tokio::test(flavor = "multi_thread")]
async fn a_folder_with_one_bad_file_imports_the_rest_into_a_new_private_folder() {
    use std::os::unix::fs::PermissionsExt;
    let dir = TempDir::new("import-folder");
    let folder = dir.path().join("downloads");
    std::fs::create_dir(&folder).unwrap();
    let (good, readings) = clarity_csv(&["2026-10-24"], 0);
    write(&folder, "a_clarity.csv", &good);
    // A LibreView export whose note opens a quote that never closes.
    let (libre, _, _) = libreview_csv(&["2026-10-24"], false);
    let mut broken: Vec<&str> = libre.lines().collect();
    broken.insert(
        5,
        "FreeStyle Libre 2,90771234-ABCD,10-24-2026 01:07,6,,,,,,,,,,\"coffee,,,,,,",
    );
    write(&folder, "b_libre.csv", &(broken.join("\n") + "\n"));
    write(&folder, "c_notes.txt", "remember to order sensors");
    let out = dir.path().join("new").join("deeper").join("cgm.duckdb");
    let (code, said, err) = import(&out, &[], &[&folder]);
    assert_eq!(code, 1, "{said}{err}");
    assert!(said.contains("a_clarity.csv: Dexcom Clarity CSV"), "{said}");
    // The failure says what is wrong in the user's words, not DuckDB's options (which
    // `import` does not have) or the scratch file's path.
    assert!(
        said.contains(
            "b_libre.csv: FAILED: it is not valid CSV: a quoted field opened on line 6 is never \
             closed"
        ),
        "{said}"
    );
    for noise in [
        "strict_mode",
        "ignore_errors",
        ".import-",
        "section-",
        "spreadsheet",
    ] {
        assert!(!said.contains(noise), "{noise}: {said}");
    }
    assert!(
        said.contains("next: the file was cut short or changed after the download"),
        "{said}"
    );
    assert!(
        said.contains("c_notes.txt: skipped (not a CSV, JSON or XML export)"),
        "{said}"
    );
    assert!(err.contains("some files could not be imported"), "{err}");
    for folder in [
        out.parent().unwrap(),
        out.parent().unwrap().parent().unwrap(),
    ] {
        let mode = std::fs::metadata(folder).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700, "{}", folder.display());
    }
    let client = serve_whole(&out, &[]).await;
    assert_stats(
        cgm_stats(&client, None).await,
        Expected::of(readings.iter().map(|(_, g)| g.stored())),
    );
    let tables = rows(
        &client,
        "SELECT list(table_name ORDER BY table_name) FROM duckdb_tables() WHERE schema_name = 'main'",
    )
    .await;
    assert!(
        !tables[0][0].to_string().contains("libre"),
        "nothing of the failed file is left: {tables:?}"
    );
    client.close().await.unwrap();
    let left = std::fs::read_dir(out.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect::<Vec<_>>();
    assert_eq!(
        left,
        vec!["cgm.duckdb".to_string()],
        "no scratch or partial file is left"
    );
}

/// The fuzz targets' seeds (fuzz/corpus/import_*): the fixtures of these tests, each cut to a
/// few kilobytes at a line's end. Synthetic, like every fixture: a made-up patient. Run with
/// `cargo test --release --test it import_vendors::write_import_fuzz_seeds -- --ignored`.
#[test]
#[ignore = "writes the fuzz seed corpus into the source tree"]
fn write_import_fuzz_seeds() {
    use crate::import_corpus::{GERMAN_HEADER, guardian_connect, libreview_european};
    let cut =
        |text: &str, lines: usize| -> String { text.split_inclusive('\n').take(lines).collect() };
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz")
        .join("corpus");
    let seed = |target: &str, name: &str, text: &str| {
        let dir = corpus.join(target);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(name), text).unwrap();
    };
    let days = ["2026-10-24", "2026-10-25"];
    let (clarity, _) = clarity_csv(&days, 0);
    seed(
        "import_csv",
        "clarity",
        &(cut(&clarity, 30) + &clarity.lines().rev().take(6).collect::<Vec<_>>().join("\n")),
    );
    let (libre, _, _) = libreview_csv(&days, true);
    seed("import_csv", "libreview-mmol", &cut(&libre, 30));
    let german = libreview_european(
        "Glukose-Werte,Erstellt am,28-10-2026 09:15 UTC,Erstellt von,Zebulon Quattlebaum",
        GERMAN_HEADER,
        &days,
        true,
        true,
        true,
    );
    seed(
        "import_csv",
        "libreview-german-crlf",
        &(cut(&german.text, 20)
            + &german
                .text
                .lines()
                .rev()
                .take(5)
                .collect::<Vec<_>>()
                .join("\r\n")),
    );
    let t = tconnect_sections(&days);
    seed(
        "import_csv",
        "tconnect",
        &format!(
            "{}\n{}\n{}\n{}",
            t.header,
            cut(&t.readings, 12),
            t.basal,
            cut(&t.bolus, 3)
        ),
    );
    let (carelink, _) = carelink_csv(&days);
    seed("import_csv", "carelink-780g", &cut(&carelink, 16));
    let guardian = guardian_connect(&days);
    seed("import_csv", "carelink-guardian", &cut(&guardian.text, 24));
    seed(
        "import_csv",
        "generic",
        "date,steps,Device Serial Number\n2026-06-01,5000,X1\n2026-06-02,\"6,1\",X2\n",
    );
    seed(
        "import_csv",
        "unknown-health",
        "Zeit;Blutzucker (mmol/L);Bolus (IE)\n01.06.2026 08:00;5,8;\n",
    );
    let (entries, _) = nightscout_entries(&["2026-10-24"]);
    let entries: Vec<serde_json::Value> = serde_json::from_str(&entries).unwrap();
    seed(
        "import_nightscout",
        "entries",
        &serde_json::to_string_pretty(&entries[..12]).unwrap(),
    );
    seed("import_nightscout", "treatments", &nightscout_treatments());
    seed(
        "import_nightscout",
        "entries-lines",
        &entries[..6]
            .iter()
            .map(|e| e.to_string())
            .collect::<Vec<_>>()
            .join("\n"),
    );
    let (apple, _) = apple_health_xml();
    let mut apple = cut(&apple, 24);
    apple.push_str("</HealthData>\n");
    seed("import_apple_health", "export", &apple);
}
