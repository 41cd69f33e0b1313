//! `duckgate import` on the quirks of real exports (docs/import-corpus.md lists where each was
//! seen): a LibreView note typed with Enter, LibreView in German and French, Loop's and
//! Tomato's `utcOffset: 0` on Nightscout, Guardian Connect's event markers with decimal commas,
//! Paradigm-era CareLink temp basals, a DST day's sensor wear, a Dexcom ONE+, an unrecognised
//! glucose export and a plain CSV named after a person. Every fixture is built here, with a
//! made-up patient; every truth is computed here from the fixture, independently of DuckDB, and
//! compared with what the agent gets over MCP from the real binary.

use std::path::Path;

use serde_json::json;

use crate::import_vendors::{
    Expected, G, Local, assert_no_personal_details, assert_stats, cgm_stats, clarity_csv,
    days_from_civil, glucose_at, import, local_times, rows, write,
};
use crate::support::{TempDir, serve_whole};

/// Local times as the views and `ts::VARCHAR` write them.
fn stamp(t: &Local) -> String {
    format!("{} {}", t.day, t.hh_mm_ss())
}

/// `DD-MM-YYYY HH:MM`, as LibreView writes times in Europe.
fn day_first(t: &Local) -> String {
    let (y, m, d) = (&t.day[0..4], &t.day[5..7], &t.day[8..10]);
    format!("{d}-{m}-{y} {:02}:{:02}", t.minute / 60, t.minute % 60)
}

/// `MM-DD-YYYY HH:MM`, as LibreView writes times in the US.
fn month_first_24_hour(t: &Local) -> String {
    let (y, m, d) = (&t.day[0..4], &t.day[5..7], &t.day[8..10]);
    format!("{m}-{d}-{y} {:02}:{:02}", t.minute / 60, t.minute % 60)
}

/// `MM-DD-YYYY HH:MM AM`, a 12-hour clock after the month (a Swedish export read by a public
/// script, a Brazilian Portuguese one by another).
fn month_first_12_hour(t: &Local) -> String {
    let (y, m, d) = (&t.day[0..4], &t.day[5..7], &t.day[8..10]);
    let hour = t.minute / 60;
    let twelve = (hour + 11) % 12 + 1;
    let half = if hour < 12 { "AM" } else { "PM" };
    format!("{m}-{d}-{y} {twelve:02}:{:02} {half}", t.minute % 60)
}

/// `DD.MM.YYYY HH:MM`, the date as the locale itself writes it.
fn day_first_dotted(t: &Local) -> String {
    day_first(t).replacen('-', ".", 2)
}

/// Rapid-acting insulin units and carbohydrate grams of a Clarity export, summed from its
/// `Insulin`/`Fast-Acting` and `Carbs` event rows as the file writes them.
fn clarity_bolus_and_carbs(text: &str) -> (f64, f64) {
    let (mut units, mut grams) = (0.0, 0.0);
    for line in text.lines() {
        let fields: Vec<&str> = line.split(',').collect();
        match (fields[2], fields[3]) {
            ("Insulin", "Fast-Acting") => units += fields[8].parse::<f64>().unwrap(),
            ("Carbs", _) => grams += fields[9].parse::<f64>().unwrap(),
            _ => {}
        }
    }
    (units, grams)
}

/// The fields of one comma-separated line, with CSV's quoting (a quoted field may hold commas
/// and doubled quotes).
fn csv_fields(line: &str) -> Vec<String> {
    let mut fields = vec![String::new()];
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' if quoted && chars.peek() == Some(&'"') => {
                chars.next();
                fields.last_mut().unwrap().push('"');
            }
            '"' => quoted = !quoted,
            ',' if !quoted => fields.push(String::new()),
            c => fields.last_mut().unwrap().push(c),
        }
    }
    fields
}

/// What a Paradigm-era CareLink export holds, read back from its text by column name.
struct ParadigmTruth {
    /// `basal` rows as the test's query writes them: `<ts> <rate or -> <minutes or -> <type>`.
    basal: Vec<String>,
    /// Delivered bolus units, in time order.
    boluses: Vec<f64>,
    carbs_grams: f64,
    cgm: Vec<i32>,
    first: String,
    last: String,
}

/// Reads a Paradigm-era CareLink export the way its columns say: `M/DD/YY` dates, the sensor's
/// glucose, delivered boluses, the wizard's carbs, temp basals (absolute in U/h or a percent,
/// with an `hh:mm:ss` duration) and the pump's `BasalProfileStart` records (`RATE=` in
/// `Raw-Values`).
fn paradigm_truth(text: &str) -> ParadigmTruth {
    let mut lines = text.lines().skip_while(|l| !l.starts_with("Index,"));
    let header = csv_fields(lines.next().unwrap());
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    let (date, time) = (col("Date"), col("Time"));
    let sensor = col("Sensor Glucose (mg/dL)");
    let delivered = col("Bolus Volume Delivered (U)");
    let carbs = col("BWZ Carb Input (grams)");
    let (temp, temp_type, temp_duration) = (
        col("Temp Basal Amount (U/h)"),
        col("Temp Basal Type"),
        col("Temp Basal Duration (hh:mm:ss)"),
    );
    let (raw_type, raw_values) = (col("Raw-Type"), col("Raw-Values"));
    let mut truth = ParadigmTruth {
        basal: Vec::new(),
        boluses: Vec::new(),
        carbs_grams: 0.0,
        cgm: Vec::new(),
        first: String::new(),
        last: String::new(),
    };
    let mut sensor_times = Vec::new();
    for line in lines {
        let f = csv_fields(line);
        let mdy: Vec<u32> = f[date].split('/').map(|p| p.parse().unwrap()).collect();
        let ts = format!("{}-{:02}-{:02} {}", 2000 + mdy[2], mdy[0], mdy[1], f[time]);
        if !f[sensor].is_empty() {
            truth.cgm.push(f[sensor].parse().unwrap());
            sensor_times.push(ts.clone());
        }
        if !f[delivered].is_empty() {
            truth.boluses.push(f[delivered].parse().unwrap());
        }
        if !f[carbs].is_empty() {
            truth.carbs_grams += f[carbs].parse::<f64>().unwrap();
        }
        if !f[temp].is_empty() {
            let hms: Vec<f64> = f[temp_duration]
                .split(':')
                .map(|p| p.parse().unwrap())
                .collect();
            let minutes = hms[0] * 60.0 + hms[1] + hms[2] / 60.0;
            let amount: f64 = f[temp].parse().unwrap();
            truth.basal.push(match f[temp_type].as_str() {
                "Absolute" => format!("{ts} {amount:?} {minutes:?} temp Absolute"),
                "Percent" => format!("{ts} - {minutes:?} temp Percent {amount}%"),
                other => panic!("temp basal type {other}"),
            });
        }
        if f[raw_type] == "BasalProfileStart" {
            let rate: f64 = f[raw_values]
                .split(", ")
                .find_map(|kv| kv.strip_prefix("RATE="))
                .unwrap()
                .parse()
                .unwrap();
            truth.basal.push(format!("{ts} {rate:?} - scheduled"));
        }
    }
    truth.basal.sort();
    sensor_times.sort();
    truth.first = sensor_times[0].clone();
    truth.last = sensor_times[sensor_times.len() - 1].clone();
    truth
}

/// A LibreView header in one of its languages (the columns' order is the same in all).
const ENGLISH_HEADER: &str = "Device,Serial Number,Device Timestamp,Record Type,Historic Glucose \
    {unit},Scan Glucose {unit},Non-numeric Rapid-Acting Insulin,Rapid-Acting Insulin (units),\
    Non-numeric Food,Carbohydrates (grams),Carbohydrates (servings),Non-numeric Long-Acting \
    Insulin,Long-Acting Insulin Value (units),Notes,Strip Glucose {unit},Ketone mmol/L,Meal \
    Insulin (units),Correction Insulin (units),User Change Insulin (units)";
pub(crate) const GERMAN_HEADER: &str = "Gerät,Seriennummer,Gerätezeitstempel,Aufzeichnungstyp,\
    Glukosewert-Verlauf {unit},Glukose-Scan {unit},Nicht numerisches schnellwirkendes Insulin,\
    Schnellwirkendes Insulin (Einheiten),Nicht numerische Nahrungsdaten,Kohlenhydrate (Gramm),\
    Kohlenhydrate (Portionen),Nicht numerisches Depotinsulin,Depotinsulin (Einheiten),Notizen,\
    Glukose-Teststreifen {unit},Keton mmol/L,Mahlzeiteninsulin (Einheiten),Korrekturinsulin \
    (Einheiten),Insulin-Änderung durch Anwender (Einheiten)";
pub(crate) const FRENCH_HEADER: &str = "Appareil,Numéro de série,Horodatage de l'appareil,Type \
    d'enregistrement,Historique de la glycémie {unit},Numérisation de la glycémie {unit},\
    Insuline à action rapide sans valeur numérique,Insuline à action rapide (unités),\
    Alimentation sans valeur numérique,Glucides (grammes),Glucides (portions),Insuline à action \
    longue sans valeur numérique,Insuline à action longue (unités),Remarques,Glycémie par \
    bandelette {unit},Cétone mmol/L,Insuline repas (unités),Correction insuline (unités),\
    Insuline modifiée par l'utilisateur (unités)";

/// LibreView in one language: its preamble and header (`{unit}` stands for the glucose unit),
/// the unit the account uses, how it writes times, and whether the names were seen in a real
/// export (`seen`), or are this test's own translation where none was found (docs/import-corpus.md
/// lists which).
struct Language {
    name: &'static str,
    preamble: &'static str,
    header: &'static str,
    mmol: bool,
    when: fn(&Local) -> String,
    seen: Seen,
}

/// How much of a language's header was seen in real exports or in code written against them.
#[derive(Debug, PartialEq)]
enum Seen {
    /// Every column name.
    Whole,
    /// Some of the names (the rest translated here).
    Partly,
    /// None: the whole header is translated here.
    Not,
}

/// The languages LibreView exports in (the issue's list), each in one real form.
const LANGUAGES: &[Language] = &[
    Language {
        name: "English",
        preamble: "Glucose Data,Generated on,10-28-2026 09:15 UTC,Generated by,Zebulon Quattlebaum",
        header: ENGLISH_HEADER,
        mmol: false,
        when: month_first_24_hour,
        seen: Seen::Whole,
    },
    Language {
        name: "German",
        preamble: "Glukose-Werte,Erstellt am,28-10-2026 09:15 UTC,Erstellt von,Zebulon Quattlebaum",
        header: GERMAN_HEADER,
        mmol: true,
        when: day_first,
        seen: Seen::Whole,
    },
    Language {
        name: "French",
        preamble: "Données de glycémie,Généré le,28-10-2026 09:15 UTC,Généré par,Zebulon \
            Quattlebaum",
        header: FRENCH_HEADER,
        mmol: false,
        when: day_first,
        seen: Seen::Whole,
    },
    Language {
        name: "Italian",
        preamble: "Dati del glucosio,Generato il,28-10-2026 09:15 UTC,Generato da,Zebulon \
            Quattlebaum",
        header: "Dispositivo,Numero di serie,Timestamp dispositivo,Tipo di registrazione,\
            Storico glucosio {unit},Scansione glucosio {unit},Insulina ad azione rapida non \
            numerica,Insulina ad azione rapida (unità),Cibo non numerico,Carboidrati (grammi),\
            Carboidrati (porzioni),Insulina ad azione lenta non numerica,Insulina ad azione lenta \
            (unità),Note,Glucosio striscia {unit},Chetoni mmol/L,Insulina pasto (unità),Insulina \
            di correzione (unità),Modifica insulina utente (unità)",
        mmol: false,
        when: day_first,
        seen: Seen::Not,
    },
    Language {
        name: "Spanish",
        // A second line under the first, holding the patient's code, as in a Spanish
        // hospital's exports.
        preamble: "Informe del paciente Zebulon Quattlebaum,Generado el,28-10-2026 09:15 \
            UTC,Generado por,Zebulon Quattlebaum\nZQ-4471,",
        header: "Dispositivo,Número de serial,Sello de tiempo del dispositivo,Tipo de registro,\
            Historial de glucosa {unit},Escaneo de glucosa {unit},Insulina de acción rápida no \
            numérica,Insulina de acción rápida (unidades),Alimento no numérico,Carbohidratos \
            (gramos),Carbohidratos (porciones),Insulina de acción larga no numérica,Insulina de \
            acción larga (unidades),Notas,Tira reactiva para glucosa {unit},Cuerpos cetónicos \
            mmol/L,Comida e insulina (unidades),Insulina de corrección (unidades),Insulina del \
            cambio de usuario (unidades)",
        mmol: false,
        when: day_first,
        seen: Seen::Whole,
    },
    Language {
        name: "Dutch",
        preamble: "Glucosegegevens,Gegenereerd op,28-10-2026 09:15 UTC,Gegenereerd door,Zebulon \
            Quattlebaum",
        // The unit in lower case, as the Dutch export writes it.
        header: "Apparaat,Serienummer,Tijdstempel apparaat,Gegevenstype,Historische glucose \
            mmol/l,Scan Glucose mmol/l,Niet-numerieke snelwerkende insuline,Snelwerkende insuline \
            (eenheden),Niet-numeriek voedsel,Koolhydraten (gram),Koolhydraten (porties),\
            Niet-numerieke langwerkende insuline,Langwerkende insuline (eenheden),Notities,Strip \
            Glucose mmol/l,Keton mmol/l,Maaltijdinsuline (eenheden),Correctie insuline \
            (eenheden),Wijzigen insuline gebruiker (eenheden)",
        mmol: true,
        when: day_first,
        seen: Seen::Whole,
    },
    Language {
        name: "Swedish",
        preamble: "Glukosuppgifter,Skapat den,10-28-2026 09:15 UTC,Skapat av,Zebulon Quattlebaum",
        header: "Enhet,Serienummer,Enhetens tidsstämpel,Registertyp,Historiskt glukosvärde \
            {unit},Skanna glukosvärde {unit},Icke-numeriskt snabbverkande insulin,Snabbverkande \
            insulin (enheter),Icke-numerisk mat,Kolhydrater (gram),Kolhydrater (portioner),\
            Icke-numeriskt långtidsverkande insulin,Långtidsverkande insulin (enheter),\
            Anteckningar,Glukossticka {unit},Keton mmol/L,Måltidsinsulin (enheter),\
            Korrigeringsinsulin (enheter),Användarändrat insulin (enheter)",
        mmol: true,
        when: month_first_12_hour,
        seen: Seen::Whole,
    },
    Language {
        name: "Danish",
        preamble: "Glukosedata,Genereret den,28-10-2026 09:15 UTC,Genereret af,Zebulon \
            Quattlebaum",
        header: "Enhed,Serienummer,Enhedens tidsstempel,Posttype,Historisk glukose {unit},\
            Scannet glukose {unit},Ikke-numerisk hurtigtvirkende insulin,Hurtigtvirkende insulin \
            (enheder),Ikke-numerisk mad,Kulhydrater (gram),Kulhydrater (portioner),Ikke-numerisk \
            langtidsvirkende insulin,Langtidsvirkende insulin (enheder),Noter,Strimmelglukose \
            {unit},Keton mmol/L,Måltidsinsulin (enheder),Korrektionsinsulin (enheder),\
            Brugerændret insulin (enheder)",
        mmol: true,
        when: day_first,
        seen: Seen::Not,
    },
    Language {
        name: "Norwegian",
        preamble: "Glukosedata,Generert,28.10.2026 09:15 UTC,Generert av,Zebulon Quattlebaum",
        header: "Enhet,Serienummer,Enhetens tidsstempel,Registreringstype,Historisk glukose \
            {unit},Skannet glukose {unit},Ikke-numerisk hurtigvirkende insulin,Hurtigvirkende \
            insulin (enheter),Ikke-numerisk mat,Karbohydrater (gram),Karbohydrater (porsjoner),\
            Ikke-numerisk langtidsvirkende insulin,Langtidsvirkende insulin (enheter),Notater,\
            Glukose fra teststrimmel {unit},Keton mmol/L,Måltidsinsulin (enheter),\
            Korreksjonsinsulin (enheter),Brukerendret insulin (enheter)",
        mmol: true,
        when: day_first_dotted,
        seen: Seen::Not,
    },
    Language {
        name: "Finnish",
        preamble: "Glukoositiedot,Luotu,28-10-2026 09:15 UTC,Luonut,Zebulon Quattlebaum",
        header: "Laite,Sarjanumero,Laitteen aikaleima,Tietueen tyyppi,Aikaisempi glukoosi \
            {unit},Skannattu glukoosi {unit},Ei-numeerinen pikavaikutteinen insuliini,\
            Pikavaikutteinen insuliini (yksikköä),Ei-numeerinen ruoka,Hiilihydraatit (grammaa),\
            Hiilihydraatit (annosta),Ei-numeerinen pitkävaikutteinen insuliini,Pitkävaikutteinen \
            insuliini (yksikköä),Muistiinpanot,Liuskaglukoosi {unit},Ketoni mmol/L,\
            Ateriainsuliini (yksikköä),Korjausinsuliini (yksikköä),Käyttäjän muuttama insuliini \
            (yksikköä)",
        mmol: true,
        when: day_first,
        seen: Seen::Partly,
    },
    Language {
        name: "Portuguese",
        preamble: "Dados de glicose,Gerado em,10-28-2026 09:15 UTC,Gerado por,Zebulon Quattlebaum",
        header: "Dispositivo,Número de série,Carimbo de data/hora do dispositivo,Tipo de \
            registro,Histórico de glicose {unit},Analisar glicose {unit},Insulina de ação rápida \
            não numérica,Insulina de ação rápida (unidades),Alimento não numérico,Carboidratos \
            (gramas),Carboidratos (porções),Insulina de ação prolongada não numérica,Insulina de \
            ação prolongada (unidades),Notas,Tira de glicose {unit},Cetona mmol/L,Insulina para \
            refeição (unidades),Insulina de correção (unidades),Alteração de insulina pelo \
            usuário (unidades)",
        mmol: false,
        when: month_first_12_hour,
        seen: Seen::Partly,
    },
    Language {
        name: "Polish",
        preamble: "Dane glukozy,Wygenerowano,28.10.2026 09:15 UTC,Wygenerowane przez,Zebulon \
            Quattlebaum",
        header: "Urządzenie,Numer seryjny,Znacznik czasu urządzenia,Typ zapisu,Historia \
            glukozy {unit},Skan glukozy {unit},Nienumeryczna insulina szybkodziałająca,Insulina \
            szybkodziałająca (jednostki),Nienumeryczne jedzenie,Węglowodany (gramy),Węglowodany \
            (porcje),Nienumeryczna insulina długodziałająca,Insulina długodziałająca (jednostki),\
            Notatki,Glukoza z paska {unit},Ketony mmol/L,Insulina posiłkowa (jednostki),Insulina \
            korekcyjna (jednostki),Zmiana insuliny przez użytkownika (jednostki)",
        mmol: false,
        when: day_first_dotted,
        seen: Seen::Not,
    },
];

/// What a LibreView fixture holds, computed as it is written.
pub(crate) struct Libre {
    pub(crate) text: String,
    history: Vec<(Local, i32)>,
    rapid_units: f64,
    carbs_grams: f64,
    notes: Vec<String>,
}

/// A LibreView export in a European language: its preamble naming the patient, optionally a
/// blank line, the header, the 15-minute history (LO/HI among it; mmol/L values with a
/// decimal comma, quoted), rapid-acting insulin with a decimal comma, food, and a note written
/// over two lines. Line ends CRLF when `crlf`.
pub(crate) fn libreview_european(
    preamble: &str,
    header: &str,
    days: &[&str],
    mmol: bool,
    blank_line: bool,
    crlf: bool,
) -> Libre {
    libreview_export(preamble, header, days, mmol, blank_line, crlf, day_first)
}

/// A LibreView export as [`libreview_european`] writes it, with each time written by `when`
/// (the account's locale decides the order of the date and a 12- or 24-hour clock). The
/// preamble may span lines.
fn libreview_export(
    preamble: &str,
    header: &str,
    days: &[&str],
    mmol: bool,
    blank_line: bool,
    crlf: bool,
    when: fn(&Local) -> String,
) -> Libre {
    let unit = if mmol { "mmol/L" } else { "mg/dL" };
    let mut lines: Vec<String> = preamble.lines().map(str::to_string).collect();
    if blank_line {
        lines.push(String::new());
    }
    lines.push(header.replace("{unit}", unit));
    let mut history = Vec::new();
    for (i, t) in local_times(days, 15).into_iter().enumerate() {
        let (shown, mg) = match glucose_at(i * 5 + 2) {
            G::Low => ("LO".to_string(), 39),
            G::High => ("HI".to_string(), 501),
            G::Mg(v) if !mmol => (v.to_string(), v),
            G::Mg(v) => {
                let tenths = (f64::from(v) / 18.016 * 10.0).round() / 10.0;
                let back = (tenths * 18.016).round() as i32;
                (
                    format!("\"{}\"", format!("{tenths:.1}").replace('.', ",")),
                    back,
                )
            }
        };
        lines.push(format!(
            "FreeStyle LibreLink,8XQ7TZ-90771234,{},0,{shown},,,,,,,,,,,,,,",
            when(&t)
        ));
        history.push((t, mg));
    }
    let at = |hh: u32, mm: u32| {
        when(&Local {
            day: days[0].into(),
            minute: hh * 60 + mm,
        })
    };
    let note = "Latte\r\nmit \"Hafer\", ohne Zucker";
    // Rapid-acting doses with a decimal comma, quoted as LibreView writes them.
    let mut rapid_units = 0.0;
    for (hh, mm, dose) in [(7, 3, "2,5"), (12, 9, "4,5")] {
        lines.push(format!(
            "FreeStyle LibreLink,8XQ7TZ-90771234,{},4,,,,\"{dose}\",,,,,,,,,,,",
            at(hh, mm)
        ));
        rapid_units += dose.replace(',', ".").parse::<f64>().unwrap();
    }
    let mut carbs_grams = 0.0;
    for (hh, mm, grams) in [(7, 4, 48), (19, 40, 35)] {
        lines.push(format!(
            "FreeStyle LibreLink,8XQ7TZ-90771234,{},5,,,,,,{grams},,,,,,,,,",
            at(hh, mm)
        ));
        carbs_grams += f64::from(grams);
    }
    lines.push(format!(
        "FreeStyle LibreLink,8XQ7TZ-90771234,{},6,,,,,,,,,,\"{}\",,,,,",
        at(7, 5),
        note.replace('"', "\"\"")
    ));
    let end = if crlf { "\r\n" } else { "\n" };
    Libre {
        text: lines.join(end) + end,
        history,
        rapid_units,
        carbs_grams,
        notes: vec![note.to_string()],
    }
}

/// The checks every LibreView fixture gets: readings, lows, highs and mean; the first and last
/// local time; the fall-back day's readings; insulin, carbs and the note as written.
async fn assert_libre(out: &Path, libre: &Libre, dir: &Path, forbidden: &[&str]) {
    let client = serve_whole(out, &[]).await;
    assert_stats(
        cgm_stats(&client, None).await,
        Expected::of(libre.history.iter().map(|(_, v)| *v)),
    );
    let fall_back = libre
        .history
        .iter()
        .filter(|(t, _)| t.day == "2026-10-25")
        .count();
    let got = rows(
        &client,
        "SELECT min(ts)::VARCHAR, max(ts)::VARCHAR, \
         (SELECT readings FROM cgm_daily_metrics WHERE day = DATE '2026-10-25'), \
         (SELECT sum(units) FROM insulin_boluses), (SELECT sum(grams) FROM carbs), \
         (SELECT list(detail ORDER BY ts) FROM device_events WHERE event = 'note'), \
         (SELECT DISTINCT device FROM cgm_readings) FROM cgm_readings",
    )
    .await;
    let (first, last) = (
        &libre.history[0].0,
        &libre.history[libre.history.len() - 1].0,
    );
    assert_eq!(
        got,
        vec![json!([
            stamp(first),
            stamp(last),
            fall_back,
            libre.rapid_units,
            libre.carbs_grams,
            libre.notes,
            "FreeStyle LibreLink"
        ])]
    );
    let forbidden: Vec<&str> = forbidden.iter().copied().chain(["90771234"]).collect();
    assert_no_personal_details(&client, dir, &forbidden).await;
    client.close().await.unwrap();
}

/// A LibreView note typed with Enter is quoted across lines: the whole export imports, the note
/// keeps its line break, and every reading after it is there (a line-by-line reader refused
/// the file at the note's line).
#[tokio::test(flavor = "multi_thread")]
async fn a_libreview_note_with_line_breaks_imports_the_whole_export() {
    let dir = TempDir::new("import-libre-note");
    let days = ["2026-10-24", "2026-10-25", "2026-10-26"];
    let preamble =
        "Glucose Data,Generated on,10-28-2026 09:15 UTC,Generated by,Zebulon Quattlebaum";
    let mut libre = libreview_european(preamble, ENGLISH_HEADER, &days, false, false, false);
    // The note in the middle of the export, as LibreView writes it there.
    let note = "Latte\nwith oat milk, \"no\" sugar";
    let middle = libre.text.find("25-10-2026 12:00").unwrap();
    let line_start = libre.text[..middle].rfind('\n').unwrap() + 1;
    libre.text.insert_str(
        line_start,
        &format!(
            "FreeStyle LibreLink,8XQ7TZ-90771234,25-10-2026 11:58,6,,,,,,,,,,\"{}\",,,,,\n",
            note.replace('"', "\"\"")
        ),
    );
    libre.notes.push(note.to_string());
    libre.notes.sort_by_key(|n| !n.starts_with("Latte\r"));
    let file = write(
        dir.path(),
        "Zebulon Quattlebaum_glucose_10-28-2026.csv",
        &libre.text,
    );
    let out = dir.path().join("libre.duckdb");
    let (code, said, err) = import(&out, &[], &[&file]);
    assert_eq!(code, 0, "{said}{err}");
    assert!(said.contains("LibreView CSV, glucose in mg/dL"), "{said}");
    assert!(said.contains("every value parsed"), "{said}");
    assert!(
        said.contains(&format!("cgm_readings +{}", libre.history.len())),
        "{said}"
    );
    assert_libre(&out, &libre, dir.path(), &[]).await;
}

/// LibreView in German (mmol/L with decimal commas, a blank line after the preamble, CRLF) and
/// in French (mg/dL, no blank line, LF): recognised by structure, read by position, times in
/// the day-first order, into the same typed tables as an English export; the table names, the
/// agent's replies and the summary never carry the patient's name from the preamble or file.
#[tokio::test(flavor = "multi_thread")]
async fn libreview_in_german_and_french_imports_like_english() {
    let dir = TempDir::new("import-libre-lang");
    let days = ["2026-10-24", "2026-10-25"];
    let german = "Glukose-Werte,Erstellt am,28-10-2026 09:15 UTC,Erstellt von,Zebulon Quattlebaum";
    let french =
        "Données de glycémie,Généré le,28-10-2026 09:15 UTC,Généré par,Zebulon Quattlebaum";
    // Each language in mmol/L and mg/dL, with a blank line after the preamble and CRLF and
    // without either.
    let variants = [
        (german, GERMAN_HEADER, true, true),
        (german, GERMAN_HEADER, false, false),
        (french, FRENCH_HEADER, false, false),
        (french, FRENCH_HEADER, true, true),
    ];
    for (n, (preamble, header, mmol, blank_line_and_crlf)) in variants.into_iter().enumerate() {
        let libre = &libreview_european(
            preamble,
            header,
            &days,
            mmol,
            blank_line_and_crlf,
            blank_line_and_crlf,
        );
        let unit = if mmol { "mmol/L" } else { "mg/dL" };
        assert!(libre.text.contains("Zebulon"));
        assert_eq!(libre.text.contains("\r\n\r\n"), blank_line_and_crlf);
        let name = if n % 2 == 0 {
            "Zebulon Quattlebaum_glucose_28-10-2026.csv"
        } else {
            "Quattlebaum Zebulon_glucose_28-10-2026.csv"
        };
        let file = write(dir.path(), name, &libre.text);
        let out = dir.path().join(format!("libre-{n}.duckdb"));
        let (code, said, err) = import(&out, &[], &[&file]);
        assert_eq!(code, 0, "{said}{err}");
        assert!(
            said.contains(&format!("LibreView CSV, glucose in {unit}")),
            "{said}"
        );
        assert!(said.contains("every value parsed"), "{said}");
        assert!(!said.contains("CSV (generic)"), "{said}");
        assert!(
            !said.to_lowercase().contains("zebulon_quattlebaum"),
            "{said}"
        );
        assert_libre(&out, libre, dir.path(), &[]).await;
    }
}

/// One LibreView export per language LibreView exports in (English, German, French, Italian,
/// Spanish, Dutch, Swedish, Danish, Norwegian, Finnish, Portuguese, Polish), each with its own
/// headers, preamble and way of writing times (day-first, month-first with a 12-hour clock,
/// dotted dates): every one is recognised as LibreView by its structure and gives the readings,
/// lows, highs, mean, first and last local time, insulin, carbs and note the file holds, with
/// no name or serial in any reply.
#[tokio::test(flavor = "multi_thread")]
async fn libreview_in_every_language_it_exports_imports_alike() {
    let dir = TempDir::new("import-libre-languages");
    let days = ["2026-10-24", "2026-10-25"];
    assert_eq!(LANGUAGES.len(), 12);
    for (n, language) in LANGUAGES.iter().enumerate() {
        let header_columns = language.header.split(',').count();
        assert_eq!(header_columns, 19, "{}", language.name);
        let libre = libreview_export(
            language.preamble,
            language.header,
            &days,
            language.mmol,
            n % 3 == 1,
            n % 2 == 1,
            language.when,
        );
        let file = write(
            dir.path(),
            &format!("Zebulon Quattlebaum_glucose_{n}.csv"),
            &libre.text,
        );
        let out = dir.path().join(format!("libre-{n}.duckdb"));
        let (code, said, err) = import(&out, &[], &[&file]);
        let what = format!("{} ({:?} seen): {said}{err}", language.name, language.seen);
        assert_eq!(code, 0, "{what}");
        let unit = if language.mmol { "mmol/L" } else { "mg/dL" };
        assert!(
            said.contains(&format!("LibreView CSV, glucose in {unit}")),
            "{what}"
        );
        assert!(said.contains("every value parsed"), "{what}");
        assert!(
            said.contains(&format!("cgm_readings +{}", libre.history.len())),
            "{what}"
        );
        assert!(!said.contains("CSV (generic)"), "{what}");
        // The summary names the file (the operator's own); no table is named after it.
        assert!(
            !said.to_lowercase().contains("zebulon_quattlebaum"),
            "{what}"
        );
        assert_libre(&out, &libre, dir.path(), &["zq-4471"]).await;
    }
}

/// Nightscout records of a Loop user in Brisbane: every one says `utcOffset: 0`. The import
/// places them in --time-zone Australia/Brisbane (UTC+10, no DST): a local day holds its 288
/// readings, the 08:28 breakfast bolus is at 08:28 on its own day, and the summary says which
/// zone was used and how many records' utcOffset disagreed.
#[tokio::test(flavor = "multi_thread")]
async fn loop_and_tomato_nightscout_times_are_placed_in_the_persons_zone() {
    let dir = TempDir::new("import-ns-brisbane");
    let utc_days = ["2026-06-01", "2026-06-02", "2026-06-03"];
    // Brisbane is UTC+10 all year (Queensland keeps no daylight-saving time): an instant's
    // local day and minute, found among the days the test spans.
    let brisbane = |seconds: i64| -> (String, u32) {
        let local = seconds + 10 * 3600;
        let day = ["2026-06-01", "2026-06-02", "2026-06-03", "2026-06-04"]
            .into_iter()
            .find(|d| days_from_civil(d) == local.div_euclid(86_400))
            .unwrap();
        (day.to_string(), (local.rem_euclid(86_400) / 60) as u32)
    };
    let at_utc = |day: &str, minute: u32| days_from_civil(day) * 86_400 + i64::from(minute) * 60;
    let iso = |day: &str, minute: u32| format!("{day}T{:02}:{:02}:00", minute / 60, minute % 60);
    let mut entries = Vec::new();
    // (local day, local minute, mg/dL).
    let mut local: Vec<(String, u32, i32)> = Vec::new();
    for (i, (day, minute)) in utc_days
        .iter()
        .flat_map(|d| (0..1440u32).step_by(5).map(move |m| (*d, m)))
        .enumerate()
    {
        let seconds = at_utc(day, minute);
        let value = glucose_at(i + 7).stored().clamp(40, 400);
        let device = if i % 2 == 0 {
            "loop://Zebulon's iPhone"
        } else {
            "Tomato"
        };
        entries.push(json!({
            "_id": format!("ns{i:020}"),
            "device": device,
            "date": seconds * 1000,
            "dateString": format!("{}.000Z", iso(day, minute)),
            "sgv": value,
            "type": "sgv",
            "utcOffset": 0,
        }));
        let (local_day, local_minute) = brisbane(seconds);
        local.push((local_day, local_minute, value));
    }
    entries.reverse();
    // Loop's treatments, each at a UTC day and minute: boluses (the 08:28 breakfast bolus of
    // the issue, and two either side of a local midnight), carbs, a temp basal.
    let boluses = [
        ("2026-06-01", 22 * 60 + 28, 3.35),
        ("2026-06-02", 13 * 60 + 50, 1.2),
        ("2026-06-02", 14 * 60 + 10, 0.85),
    ];
    let carbs = [
        ("2026-06-01", 22 * 60 + 20, 42.0),
        ("2026-06-02", 2 * 60 + 15, 18.5),
    ];
    let temp_basals = [("2026-06-02", 13 * 60, 0.65, 30)];
    let mut treatments = Vec::new();
    for (day, minute, insulin) in boluses {
        treatments.push(json!({"eventType": "Correction Bolus", "insulin": insulin,
            "created_at": format!("{}Z", iso(day, minute)), "utcOffset": 0,
            "enteredBy": "loop://Zebulon's iPhone"}));
    }
    for (day, minute, grams) in carbs {
        treatments.push(json!({"eventType": "Carb Correction", "carbs": grams,
            "created_at": format!("{}.000Z", iso(day, minute)), "utcOffset": 0,
            "enteredBy": "loop://Zebulon's iPhone"}));
    }
    for (day, minute, rate, duration) in temp_basals {
        treatments.push(
            json!({"eventType": "Temp Basal", "absolute": rate, "duration": duration,
            "created_at": format!("{}Z", iso(day, minute)), "utcOffset": 0}),
        );
    }
    let treatments = serde_json::Value::Array(treatments);
    // Each treatment as the test's query writes it: its Brisbane time, then its amount.
    let placed = |day: &str, minute: u32, amount: f64| {
        let (d, m) = brisbane(at_utc(day, minute));
        format!("{d} {:02}:{:02}:00 {amount:?}", m / 60, m % 60)
    };
    let want_boluses: Vec<String> = boluses.iter().map(|(d, m, u)| placed(d, *m, *u)).collect();
    let want_carbs: Vec<String> = carbs.iter().map(|(d, m, g)| placed(d, *m, *g)).collect();
    let want_basal: Vec<String> = temp_basals
        .iter()
        .map(|(d, m, r, _)| placed(d, *m, *r))
        .collect();
    // The issue's example: the bolus at 22:28 UTC is the 08:28 breakfast bolus of the next day.
    assert_eq!(want_boluses[0], "2026-06-02 08:28:00 3.35");
    let folder = dir.path().join("ns");
    std::fs::create_dir(&folder).unwrap();
    write(
        &folder,
        "entries.json",
        &serde_json::to_string(&entries).unwrap(),
    );
    write(&folder, "treatments.json", &treatments.to_string());
    let out = dir.path().join("ns.duckdb");
    let (code, said, err) = import(&out, &["--time-zone", "Australia/Brisbane"], &[&folder]);
    assert_eq!(code, 0, "{said}{err}");
    assert!(
        said.contains(&format!(
            "times placed in Australia/Brisbane with its daylight-saving rules; the utcOffset of \
             {0} of {0} records disagreed with it and was not used",
            entries.len()
        )),
        "{said}"
    );
    let expected = Expected::of(local.iter().map(|(_, _, v)| *v));
    let client = serve_whole(&out, &[]).await;
    assert_stats(cgm_stats(&client, None).await, expected);
    let per_day = |day: &str| local.iter().filter(|(d, _, _)| d == day).count();
    assert_eq!(per_day("2026-06-02"), 288);
    let first = &local[0];
    let last = &local[local.len() - 1];
    let got = rows(
        &client,
        "SELECT min(ts)::VARCHAR, max(ts)::VARCHAR, \
         (SELECT list(readings ORDER BY day) FROM cgm_daily_metrics), \
         (SELECT list(ts::VARCHAR || ' ' || units ORDER BY ts) FROM insulin_boluses), \
         (SELECT list(ts::VARCHAR || ' ' || grams ORDER BY ts) FROM carbs), \
         (SELECT list(ts::VARCHAR || ' ' || rate_u_per_h ORDER BY ts) FROM basal), \
         (SELECT list(DISTINCT device ORDER BY device) FROM cgm_readings) FROM cgm_readings",
    )
    .await;
    let hhmm = |m: u32| format!("{:02}:{:02}:00", m / 60, m % 60);
    assert_eq!(
        got,
        vec![json!([
            format!("{} {}", first.0, hhmm(first.1)),
            format!("{} {}", last.0, hhmm(last.1)),
            [
                per_day("2026-06-01"),
                per_day("2026-06-02"),
                per_day("2026-06-03"),
                per_day("2026-06-04")
            ],
            want_boluses,
            want_carbs,
            want_basal,
            ["CGM (via Loop)", "CGM (via Tomato)"]
        ])]
    );
    assert_no_personal_details(&client, dir.path(), &["iphone"]).await;
    client.close().await.unwrap();
}

/// A Guardian Connect export as CareLink writes it: its preamble, the notice line, a `Pump`
/// marker with a trailing blank, the wide header, rows newest first with the index written
/// with a decimal comma, and pen insulin and meals logged as event markers (`Insulin: 27,00`,
/// `Meal: 60,00grams`), some twice at the same second.
pub(crate) struct Guardian {
    pub(crate) text: String,
    first: String,
    last: String,
    cgm: Vec<i32>,
    doses: Vec<f64>,
    meals: Vec<f64>,
    finger_sticks: Vec<i32>,
    /// The pump's `CAL NOW` alarms.
    calibration_alarms: usize,
}

pub(crate) fn guardian_connect(days: &[&str]) -> Guardian {
    let header = "Index;Date;Time;New Device Time;BG Reading (mg/dL);Linked BG Meter ID;\
        Basal Rate (U/h);Temp Basal Amount;Temp Basal Type;Temp Basal Duration (h:mm:ss);Bolus \
        Type;Bolus Volume Selected (U);Bolus Volume Delivered (U);Bolus Duration (h:mm:ss);Prime \
        Type;Prime Volume Delivered (U);Alarm;Suspend;Rewind;BWZ Estimate (U);BWZ Target High BG \
        (mg/dL);BWZ Target Low BG (mg/dL);BWZ Carb Ratio (g/U);BWZ Insulin Sensitivity \
        (mg/dL/U);BWZ Carb Input (grams);BWZ BG Input (mg/dL);BWZ Correction Estimate (U);BWZ \
        Food Estimate (U);BWZ Active Insulin (U);BWZ Status;Sensor Calibration BG (mg/dL);Sensor \
        Glucose (mg/dL);ISIG Value;Event Marker;Bolus Number;Bolus Cancellation Reason;BWZ \
        Unabsorbed Insulin Total (U);Final Bolus Estimate;Scroll Step Size;Insulin Action Curve \
        Time;Sensor Calibration Rejected Reason;Preset Bolus;Bolus Source;Network Device \
        Associated Reason;Network Device Disassociated Reason;Network Device Disconnected \
        Reason;Sensor Exception;Preset Temp Basal Name";
    let width = header.split(';').count();
    let slash = |day: &str| day.replace('-', "/");
    let mut body: Vec<(String, Vec<(usize, String)>)> = Vec::new();
    let mut g = Guardian {
        text: String::new(),
        first: String::new(),
        last: String::new(),
        cgm: Vec::new(),
        doses: Vec::new(),
        meals: Vec::new(),
        finger_sticks: Vec::new(),
        calibration_alarms: 0,
    };
    for (i, t) in local_times(days, 5).into_iter().enumerate() {
        let v = glucose_at(i + 29).stored().clamp(40, 400);
        let time = format!("{}:{:02}", t.hh_mm_ss().get(..5).unwrap(), 38);
        body.push((
            format!("{}{time}", t.day),
            vec![(1, slash(&t.day)), (2, time.clone()), (31, v.to_string())],
        ));
        if g.first.is_empty() {
            g.first = format!("{} {time}", t.day);
        }
        g.last = format!("{} {time}", t.day);
        g.cgm.push(v);
    }
    for (d, day) in days.iter().enumerate() {
        let marks: [(&str, &str, bool); 5] = [
            ("07:16:22", "Meal: 45,00grams", false),
            ("07:45:20", "Insulin: 3,00", false),
            ("09:35:28", "Insulin: 27,00", true),
            ("12:16:00", "Meal: 50,00grams", true),
            ("13:20:08", "Insulin: 4,50", false),
        ];
        for (time, marker, twice) in marks {
            for _ in 0..if twice { 2 } else { 1 } {
                body.push((
                    format!("{day}{time}"),
                    vec![(1, slash(day)), (2, time.into()), (33, marker.into())],
                ));
                let amount: f64 = marker
                    .split(": ")
                    .nth(1)
                    .unwrap()
                    .trim_end_matches("grams")
                    .replace(',', ".")
                    .parse()
                    .unwrap();
                if marker.starts_with("Meal") {
                    g.meals.push(amount);
                } else {
                    g.doses.push(amount);
                }
            }
        }
        let stick = 97 + d as i32;
        body.push((
            format!("{day}07:12:49"),
            vec![
                (1, slash(day)),
                (2, "07:12:49".into()),
                (4, stick.to_string()),
            ],
        ));
        g.finger_sticks.push(stick);
        body.push((
            format!("{day}08:47:53"),
            vec![
                (1, slash(day)),
                (2, "08:47:53".into()),
                (16, "CAL NOW".into()),
            ],
        ));
        g.calibration_alarms += 1;
    }
    // Newest first, as CareLink writes them.
    body.sort_by(|a, b| b.0.cmp(&a.0));
    g.text = format!(
        "Last Name;First Name;Patient ID;System ID;Start Date;End Date;Device;Guardian Connect\n\
         \"Quattlebaum\";\"Zebulon\";\"\";\"\";\"24.10.2026 00:00:00\";\"25.10.2026 23:59:59\";\
         \"Serial Number\";GCZ7PA-8XQ7TZ\n\nDevice data shown may exceed selected date range.\n\n\
         -------;Guardian Connect;Pump;GCZ7PA-8XQ7TZ;------- \n{header}\n"
    );
    for (index, (_, cells)) in body.into_iter().enumerate() {
        let mut fields = vec![String::new(); width];
        fields[0] = format!("{index},00000");
        for (at, value) in cells {
            fields[at] = value;
        }
        g.text.push_str(&(fields.join(";") + "\n"));
    }
    g
}

/// Guardian Connect's event markers with decimal commas become pen doses in insulin_boluses
/// (delivery 'pen') and carbs, each with its amount; finger sticks, alarms and the sensor's
/// readings land in their tables; the device is named from the device.
#[tokio::test(flavor = "multi_thread")]
async fn guardian_connect_event_markers_become_pen_doses_and_carbs() {
    let dir = TempDir::new("import-guardian");
    let g = guardian_connect(&["2026-10-24", "2026-10-25"]);
    let file = write(dir.path(), "CareLink-Export-Quattlebaum.csv", &g.text);
    let out = dir.path().join("guardian.duckdb");
    let (code, said, err) = import(&out, &[], &[&file]);
    assert_eq!(code, 0, "{said}{err}");
    assert!(
        said.contains("Medtronic CareLink CSV, glucose in mg/dL"),
        "{said}"
    );
    assert!(said.contains("every value parsed"), "{said}");
    assert!(
        said.contains(&format!(
            "{} event markers the person logged",
            g.doses.len() + g.meals.len()
        )),
        "{said}"
    );
    let client = serve_whole(&out, &[]).await;
    assert_stats(
        cgm_stats(&client, None).await,
        Expected::of(g.cgm.iter().copied()),
    );
    let span = rows(
        &client,
        "SELECT min(ts)::VARCHAR, max(ts)::VARCHAR FROM cgm_readings",
    )
    .await;
    assert_eq!(span, vec![json!([g.first, g.last])]);
    let got = rows(
        &client,
        "SELECT (SELECT count(*) FROM insulin_boluses), (SELECT sum(units) FROM insulin_boluses), \
         (SELECT list(DISTINCT delivery) FROM insulin_boluses), \
         (SELECT count(*) FROM carbs), (SELECT sum(grams) FROM carbs), \
         (SELECT list(glucose_mg_dl ORDER BY ts) FROM glucose_checks), \
         (SELECT count(*) FROM device_events WHERE detail = 'CAL NOW'), \
         (SELECT count(*) FROM device_events WHERE event ILIKE '%marker%'), \
         (SELECT DISTINCT device FROM cgm_readings)",
    )
    .await;
    assert_eq!(
        got,
        vec![json!([
            g.doses.len(),
            g.doses.iter().sum::<f64>(),
            ["pen"],
            g.meals.len(),
            g.meals.iter().sum::<f64>(),
            g.finger_sticks,
            g.calibration_alarms,
            0,
            "Guardian Connect"
        ])]
    );
    assert_no_personal_details(&client, dir.path(), &["gcz7pa", "carelink-export"]).await;
    client.close().await.unwrap();
}

/// A Paradigm-era CareLink export (comma-separated, `M/DD/YY` dates, `Temp Basal Amount (U/h)`,
/// `Programmed Bolus Duration (hh:mm:ss)`, the pump's raw `BasalProfileStart` records): its temp
/// basals become `basal` rows (an absolute rate with its duration, a percent one as a percent),
/// its scheduled rate too, beside the sensor readings and boluses.
#[tokio::test(flavor = "multi_thread")]
async fn paradigm_carelink_temp_basals_become_basal_rows() {
    let dir = TempDir::new("import-paradigm");
    let header = "Index,Date,Time,Timestamp,New Device Time,BG Reading (mg/dL),Linked BG Meter ID,\
        Temp Basal Amount (U/h),Temp Basal Type,Temp Basal Duration (hh:mm:ss),Bolus Type,Bolus \
        Volume Selected (U),Bolus Volume Delivered (U),Programmed Bolus Duration (hh:mm:ss),Prime \
        Type,Prime Volume Delivered (U),Suspend,Rewind,BWZ Estimate (U),BWZ Target High BG \
        (mg/dL),BWZ Target Low BG (mg/dL),BWZ Carb Ratio (grams),BWZ Insulin Sensitivity \
        (mg/dL),BWZ Carb Input (grams),BWZ BG Input (mg/dL),BWZ Correction Estimate (U),BWZ Food \
        Estimate (U),BWZ Active Insulin (U),Alarm,Sensor Calibration BG (mg/dL),Sensor Glucose \
        (mg/dL),ISIG Value,Daily Insulin Total (U),Raw-Type,Raw-Values,Raw-ID,Raw-Upload ID,\
        Raw-Seq Num,Raw-Device Type";
    let width = header.split(',').count();
    let us = |day: &str| {
        let (y, m, d) = (&day[2..4], &day[5..7], &day[8..10]);
        format!("{}/{d}/{y}", m.trim_start_matches('0'))
    };
    let mut text = format!(
        "Name,Zebulon Quattlebaum\nPatient ID,PX-1\nReport Range,10/24/26,to,10/25/26\n\
         Meter:,Paradigm Revel - 723,#ZQ7723\n,\n{header}\n"
    );
    let row = |cells: &[(usize, String)]| {
        let mut fields = vec![String::new(); width];
        for (at, value) in cells {
            fields[*at] = value.clone();
        }
        fields.join(",") + "\n"
    };
    let d = "2026-10-24";
    let when = |hhmmss: &str| {
        vec![
            (1, us(d)),
            (2, hhmmss.to_string()),
            (3, format!("{} {hhmmss}", us(d))),
        ]
    };
    let mut index = 1;
    let mut add = |cells: Vec<(usize, String)>, text: &mut String| {
        let mut all = vec![(0, index.to_string())];
        all.extend(cells);
        text.push_str(&row(&all));
        index += 1;
    };
    let mut cells = when("00:00:00");
    cells.extend([
        (33, "BasalProfileStart".to_string()),
        (
            34,
            "\"PATTERN_DATUM=1, PROFILE_INDEX=0, RATE=0.85, START_TIME=0\"".to_string(),
        ),
    ]);
    add(cells, &mut text);
    let mut cells = when("02:10:00");
    cells.extend([
        (7, "0.5".into()),
        (8, "Absolute".into()),
        (9, "00:30:00".into()),
        (33, "TempBasal".into()),
    ]);
    add(cells, &mut text);
    let mut cells = when("05:00:00");
    cells.extend([
        (7, "70".into()),
        (8, "Percent".into()),
        (9, "01:00:00".into()),
    ]);
    add(cells, &mut text);
    // Two boluses, each with the carbs the wizard was given.
    for (hhmmss, units, grams) in [("07:31:00", "4.2", "40"), ("12:46:00", "2.35", "25")] {
        let mut cells = when(hhmmss);
        cells.extend([
            (10, "Normal".into()),
            (11, units.into()),
            (12, units.into()),
            (13, "0:00:00".into()),
            (23, grams.into()),
        ]);
        add(cells, &mut text);
    }
    for (i, t) in local_times(&[d, "2026-10-26"], 5).into_iter().enumerate() {
        let v = glucose_at(i + 41).stored().clamp(40, 400);
        let mut cells = vec![
            (1, us(&t.day)),
            (2, t.hh_mm_ss()),
            (3, format!("{} {}", us(&t.day), t.hh_mm_ss())),
            (30, v.to_string()),
            (33, "GlucoseSensorData".into()),
        ];
        cells.push((31, "21.3".into()));
        add(cells, &mut text);
    }
    let file = write(dir.path(), "CareLink-Export-1161046540891.csv", &text);
    // The truth, read back from the file as written, by its column names.
    let truth = paradigm_truth(&text);
    assert_eq!(truth.basal.len(), 3);
    assert_eq!(truth.boluses.len(), 2);
    let out = dir.path().join("paradigm.duckdb");
    let (code, said, err) = import(&out, &[], &[&file]);
    assert_eq!(code, 0, "{said}{err}");
    assert!(said.contains("Medtronic CareLink CSV"), "{said}");
    assert!(
        said.contains(&format!("basal +{}", truth.basal.len())),
        "{said}"
    );
    let client = serve_whole(&out, &[]).await;
    assert_stats(
        cgm_stats(&client, None).await,
        Expected::of(truth.cgm.iter().copied()),
    );
    let got = rows(
        &client,
        "SELECT (SELECT list(ts::VARCHAR || ' ' || coalesce(rate_u_per_h::VARCHAR, '-') || ' ' \
         || coalesce(duration_minutes::VARCHAR, '-') || ' ' || basal_type ORDER BY ts) FROM basal), \
         (SELECT list(units ORDER BY ts) FROM insulin_boluses), (SELECT sum(grams) FROM carbs), \
         (SELECT min(ts)::VARCHAR || ' ' || max(ts)::VARCHAR FROM cgm_readings)",
    )
    .await;
    assert_eq!(
        got,
        vec![json!([
            truth.basal,
            truth.boluses,
            truth.carbs_grams,
            format!("{} {}", truth.first, truth.last)
        ])]
    );
    assert_no_personal_details(&client, dir.path(), &["zq7723", "1161046540891"]).await;
    client.close().await.unwrap();
}

/// Sensor wear per local day divides by that day's real length in --time-zone: a fully worn
/// 23-hour spring-forward day is 100 % (it was 95.8 % over 24 hours), a 25-hour day with two
/// hours missing is 23/25 of it, and an ordinary day missing an hour 23/24.
#[tokio::test(flavor = "multi_thread")]
async fn sensor_wear_divides_by_the_local_days_real_length() {
    let dir = TempDir::new("import-wear");
    let days = ["2026-03-28", "2026-03-29", "2026-10-25", "2026-10-26"];
    let (text, readings) = clarity_csv(&days, 0);
    // Two hours missing on the fall-back day, one on the ordinary day after it.
    let gap = |t: &Local| {
        (t.day == "2026-10-25" && (600..720).contains(&t.minute))
            || (t.day == "2026-10-26" && (600..660).contains(&t.minute))
    };
    let kept: String = text
        .lines()
        .filter(|line| {
            !readings
                .iter()
                .any(|(t, _)| gap(t) && line.contains(&format!(",{}T{},EGV", t.day, t.hh_mm_ss())))
        })
        .map(|l| format!("{l}\n"))
        .collect();
    let file = write(dir.path(), "clarity.csv", &kept);
    let out = dir.path().join("wear.duckdb");
    let (code, said, err) = import(&out, &["--time-zone", "Europe/Berlin"], &[&file]);
    assert_eq!(code, 0, "{said}{err}");
    let count = |day: &str| {
        readings
            .iter()
            .filter(|(t, _)| t.day == day && !gap(t))
            .count()
    };
    // Readings × 5 minutes over the day's minutes, as the view rounds it.
    let wear = |day: &str, minutes: f64| {
        ((100.0 * count(day) as f64 * 5.0 / minutes).min(100.0) * 10.0).round() / 10.0
    };
    assert_eq!(count("2026-03-29"), 276);
    let client = serve_whole(&out, &[]).await;
    let got = rows(
        &client,
        "SELECT list(readings ORDER BY day), list(sensor_wear_pct ORDER BY day) FROM cgm_daily_metrics",
    )
    .await;
    assert_eq!(
        got,
        vec![json!([
            days.iter().map(|d| count(d)).collect::<Vec<_>>(),
            [
                wear("2026-03-28", 1440.0),
                wear("2026-03-29", 1380.0),
                wear("2026-10-25", 1500.0),
                wear("2026-10-26", 1440.0)
            ]
        ])]
    );
    assert_eq!(wear("2026-03-29", 1380.0), 100.0);
    assert_eq!(wear("2026-10-25", 1500.0), 92.0);
    let kept_readings: Vec<&(Local, G)> = readings.iter().filter(|(t, _)| !gap(t)).collect();
    assert_stats(
        cgm_stats(&client, None).await,
        Expected::of(kept_readings.iter().map(|(_, g)| g.stored())),
    );
    let span = rows(
        &client,
        "SELECT min(ts)::VARCHAR, max(ts)::VARCHAR, (SELECT sum(units) FROM insulin_boluses), \
         (SELECT sum(grams) FROM carbs) FROM cgm_readings",
    )
    .await;
    let (first, last) = (
        &kept_readings[0].0,
        &kept_readings[kept_readings.len() - 1].0,
    );
    let (units, grams) = clarity_bolus_and_carbs(&kept);
    assert!(units > 0.0 && grams > 0.0);
    assert_eq!(span, vec![json!([stamp(first), stamp(last), units, grams])]);
    assert_no_personal_details(&client, dir.path(), &[]).await;
    client.close().await.unwrap();
}

/// A Dexcom ONE+ (Clarity writes its source device as `iOS D1G7`) is named Dexcom ONE+, not
/// Dexcom G7; its readings count as any Dexcom's.
#[tokio::test(flavor = "multi_thread")]
async fn a_dexcom_one_plus_is_named_from_the_device() {
    let dir = TempDir::new("import-one-plus");
    let (text, readings) = clarity_csv(&["2026-06-01", "2026-06-02"], 3);
    let text = text
        .replace("Android G6", "iOS D1G7")
        .replace("Dexcom G6 Mobile App", "Dexcom ONE+ Mobile App");
    let file = write(dir.path(), "Clarity_Export_Quattlebaum.csv", &text);
    let out = dir.path().join("one.duckdb");
    let (code, said, err) = import(&out, &[], &[&file]);
    assert_eq!(code, 0, "{said}{err}");
    assert!(said.contains("Dexcom Clarity CSV"), "{said}");
    let client = serve_whole(&out, &[]).await;
    assert_stats(
        cgm_stats(&client, None).await,
        Expected::of(readings.iter().map(|(_, g)| g.stored())),
    );
    let got = rows(
        &client,
        "SELECT (SELECT list(DISTINCT device) FROM cgm_readings), \
         (SELECT comment FROM duckdb_tables() WHERE table_name = 'cgm_readings') LIKE \
         '%Dexcom Clarity CSV (Dexcom ONE+)%'",
    )
    .await;
    assert_eq!(got, vec![json!([["Dexcom ONE+"], true])]);
    let span = rows(
        &client,
        "SELECT min(ts)::VARCHAR, max(ts)::VARCHAR, (SELECT sum(units) FROM insulin_boluses), \
         (SELECT sum(grams) FROM carbs) FROM cgm_readings",
    )
    .await;
    let (first, last) = (&readings[0].0, &readings[readings.len() - 1].0);
    let (units, grams) = clarity_bolus_and_carbs(&text);
    assert!(units > 0.0 && grams > 0.0);
    assert_eq!(span, vec![json!([stamp(first), stamp(last), units, grams])]);
    assert_no_personal_details(&client, dir.path(), &["clarity_export"]).await;
    client.close().await.unwrap();
}

/// A CSV that names glucose and insulin but is no export duckgate knows is refused: exit 1, a
/// message naming what was seen and how to report it, and nothing of it imported (alone, no
/// database is written; beside a good export, no table of it exists). `--table` imports it on
/// purpose, as a plain table.
#[tokio::test(flavor = "multi_thread")]
async fn an_unrecognised_glucose_export_is_refused_and_nothing_of_it_imported() {
    let dir = TempDir::new("import-unknown");
    let mut text = String::from("Zeit;Blutzucker (mmol/L);Bolus (IE);Kohlenhydrate (g)\n");
    let mut values = Vec::new();
    for (i, t) in local_times(&["2026-06-01"], 60).into_iter().enumerate() {
        let mmol = 4.0 + (i % 9) as f64;
        text.push_str(&format!(
            "{}.06.2026 {}:00;{};;\n",
            &t.day[8..10],
            &t.hh_mm_ss()[..2],
            format!("{mmol:.1}").replace('.', ",")
        ));
        values.push(mmol);
    }
    let alone = write(dir.path(), "Zebulon_export.csv", &text);
    let out = dir.path().join("refused.duckdb");
    let (code, said, err) = import(&out, &[], &[&alone]);
    assert_eq!(code, 1, "{said}{err}");
    assert!(
        said.contains(
            "Zebulon_export.csv: FAILED: it looks like a CGM, pump or health export (it names \
             \"Blutzucker (mmol/L)\", \"Bolus (IE)\", \"Kohlenhydrate (g)\"), but not one duckgate \
             import knows; nothing of it was imported"
        ),
        "{said}"
    );
    assert!(said.contains("report its header row"), "{said}");
    assert!(said.contains("--table NAME"), "{said}");
    assert!(!out.exists(), "nothing was written");

    let folder = dir.path().join("downloads");
    std::fs::create_dir(&folder).unwrap();
    let (clarity, readings) = clarity_csv(&["2026-06-01"], 0);
    write(&folder, "a_clarity.csv", &clarity);
    write(&folder, "b_unknown.csv", &text);
    let (code, said, err) = import(&out, &[], &[&folder]);
    assert_eq!(code, 1, "{said}{err}");
    assert!(
        said.contains("b_unknown.csv: FAILED: it looks like"),
        "{said}"
    );
    let client = serve_whole(&out, &[]).await;
    assert_stats(
        cgm_stats(&client, None).await,
        Expected::of(readings.iter().map(|(_, g)| g.stored())),
    );
    let tables = rows(
        &client,
        "SELECT list(table_name ORDER BY table_name) FROM duckdb_tables()",
    )
    .await;
    assert_eq!(
        tables,
        vec![json!([[
            "carbs",
            "cgm_readings",
            "device_events",
            "insulin_boluses",
            "long_acting_insulin"
        ]])]
    );
    client.close().await.unwrap();

    let asked = dir.path().join("asked.duckdb");
    let (code, said, err) = import(&asked, &["--table", "meter_log"], &[&alone]);
    assert_eq!(code, 0, "{said}{err}");
    assert!(
        said.contains(&format!("meter_log +{}", values.len())),
        "{said}"
    );
    let client = serve_whole(&asked, &[]).await;
    let got = rows(&client, "SELECT count(*) FROM meter_log").await;
    assert_eq!(got, vec![json!([values.len()])]);
    client.close().await.unwrap();
}

/// One file that fails alone says that nothing was imported (never that "the other files" were),
/// with the next step that fits its cause: an Apple Health export without glucose is told to
/// check that the CGM's app writes glucose to Health, not to re-save a spreadsheet; a LibreView
/// export cut short inside a quoted note is told the line where the quote opened.
#[test]
fn a_single_failed_file_says_nothing_was_imported_and_why() {
    let dir = TempDir::new("import-single-failure");
    let steps_only = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<HealthData locale=\"en_US\">\n \
        <ExportDate value=\"2026-10-28 09:00:00 +0100\"/>\n <Record \
        type=\"HKQuantityTypeIdentifierStepCount\" sourceName=\"Zebulon&apos;s iPhone\" \
        unit=\"count\" startDate=\"2026-10-24 08:00:00 +0200\" endDate=\"2026-10-24 08:10:00 \
        +0200\" value=\"512\"/>\n</HealthData>\n";
    let apple = write(dir.path(), "export.xml", steps_only);
    let out = dir.path().join("none.duckdb");
    let (code, said, err) = import(&out, &[], &[&apple]);
    assert_eq!(code, 1, "{said}{err}");
    assert!(said.starts_with("Nothing was imported:"), "{said}");
    assert!(
        said.contains(
            "export.xml: FAILED: no blood glucose, insulin or carbohydrate records among its 1 \
             records"
        ),
        "{said}"
    );
    assert!(said.contains("writes glucose to Health"), "{said}");
    let all = format!("{said}{err}").to_lowercase();
    assert!(!all.contains("spreadsheet"), "{all}");
    assert!(!all.contains("the other"), "{all}");
    assert!(!out.exists(), "nothing was written");

    // A LibreView export cut short inside a note typed with Enter.
    let libre = libreview_european(
        "Glukose-Werte,Erstellt am,28-10-2026 09:15 UTC,Erstellt von,Zebulon Quattlebaum",
        GERMAN_HEADER,
        &["2026-10-24"],
        false,
        false,
        false,
    );
    let cut = &libre.text[..libre.text.find("Latte").unwrap() + "Latte\r\nmit".len()];
    let opened_on = cut.matches('\n').count();
    let file = write(dir.path(), "Zebulon Quattlebaum_glucose.csv", cut);
    let (code, said, err) = import(&out, &[], &[&file]);
    assert_eq!(code, 1, "{said}{err}");
    assert!(said.starts_with("Nothing was imported:"), "{said}");
    assert!(
        said.contains(&format!(
            "FAILED: it is not valid CSV: a quoted field opened on line {opened_on} is never closed"
        )),
        "{said}"
    );
    assert!(said.contains("download the export again"), "{said}");
    let all = format!("{said}{err}").to_lowercase();
    assert!(
        !all.contains("spreadsheet") && !all.contains("the other"),
        "{all}"
    );
    assert!(!out.exists(), "nothing was written");
}

/// A plain CSV named after a person (`<Name> steps.csv`) becomes a table named from its
/// columns: the name never reaches list_tables or any reply; its columns that look like
/// identifiers (a serial number, a name) are left out and named in the summary, unless
/// `--keep-identifiers`; `--table` names it.
#[tokio::test(flavor = "multi_thread")]
async fn a_plain_csv_named_after_a_person_never_shows_the_name() {
    let dir = TempDir::new("import-generic-name");
    let mut text = String::from("date,steps,Device Serial Number,Patient Name\n");
    let mut steps_total = 0;
    for day in 1..=20 {
        let steps = 4000 + day * 137;
        steps_total += steps;
        text.push_str(&format!(
            "2026-06-{day:02},{steps},8XQ7TZ-{day},Zebulon Quattlebaum\n"
        ));
    }
    let file = write(dir.path(), "Zebulon Quattlebaum steps 2026.csv", &text);
    let out = dir.path().join("steps.duckdb");
    let (code, said, err) = import(&out, &[], &[&file]);
    assert_eq!(code, 0, "{said}{err}");
    assert!(said.contains("CSV (generic)"), "{said}");
    assert!(said.contains("csv_date_steps +20"), "{said}");
    assert!(
        said.contains(
            "left out: columns that look like identifiers (names, serial numbers, IDs): Device \
             Serial Number, Patient Name"
        ),
        "{said}"
    );
    let client = serve_whole(&out, &[]).await;
    let listed = serde_json::to_string(&client.call("list_tables", json!({})).await.unwrap())
        .unwrap()
        .to_lowercase();
    for word in ["zebulon", "quattlebaum", "8xq7tz"] {
        assert!(!listed.contains(word), "{word}: {listed}");
    }
    let got = rows(&client, "SELECT * FROM csv_date_steps ORDER BY date").await;
    assert_eq!(got.len(), 20);
    let all = serde_json::to_string(&got).unwrap().to_lowercase();
    assert!(!all.contains("zebulon") && !all.contains("8xq7tz"), "{all}");
    let sum = rows(&client, "SELECT sum(steps)::BIGINT FROM csv_date_steps").await;
    assert_eq!(sum, vec![json!([steps_total])]);
    client.close().await.unwrap();

    let kept = dir.path().join("kept.duckdb");
    let (code, said, err) = import(&kept, &["--table", "walks", "--keep-identifiers"], &[&file]);
    assert_eq!(code, 0, "{said}{err}");
    let client = serve_whole(&kept, &[]).await;
    let got = rows(
        &client,
        "SELECT count(*), count(DISTINCT \"Device Serial Number\") FROM walks",
    )
    .await;
    assert_eq!(got, vec![json!([20, 20])]);
    client.close().await.unwrap();
}

/// Every fixture of these tests and `import_vendors.rs`, full size, into one folder
/// (`$CARGO_TARGET_TMPDIR/import-every-fixture`), for a folder import of all of them at once:
/// `cargo test --release --test it import_corpus::write_every_fixture -- --ignored`, then
/// `duckgate import --out all.duckdb <that folder>`.
#[test]
#[ignore = "writes fixtures for a manual folder import"]
fn write_every_fixture() {
    use crate::import_vendors::{
        apple_health_xml, carelink_csv, libreview_csv, nightscout_entries, nightscout_treatments,
        tconnect_sections,
    };
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("import-every-fixture");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let days = ["2026-10-24", "2026-10-25", "2026-10-26"];
    write(&dir, "clarity.csv", &clarity_csv(&days, 0).0);
    write(&dir, "libreview-mg.csv", &libreview_csv(&days, false).0);
    // Each LibreView fixture on days of its own: the same device at the same times would be
    // the same readings, which an import adds once.
    let later = ["2026-10-27", "2026-10-28"];
    let latest = ["2026-10-29", "2026-10-30"];
    write(&dir, "libreview-mmol.csv", &libreview_csv(&later, true).0);
    write(
        &dir,
        "libreview-german.csv",
        &libreview_european(
            "Glukose-Werte,Erstellt am,28-10-2026 09:15 UTC,Erstellt von,Zebulon Quattlebaum",
            GERMAN_HEADER,
            &later,
            true,
            true,
            true,
        )
        .text,
    );
    write(
        &dir,
        "libreview-french.csv",
        &libreview_european(
            "Données de glycémie,Généré le,28-10-2026 09:15 UTC,Généré par,Zebulon Quattlebaum",
            FRENCH_HEADER,
            &latest,
            false,
            false,
            false,
        )
        .text,
    );
    // One LibreView export per language, each on two December days of its own.
    for (n, language) in LANGUAGES.iter().enumerate() {
        let first = format!("2026-12-{:02}", 2 * n + 1);
        let second = format!("2026-12-{:02}", 2 * n + 2);
        write(
            &dir,
            &format!("libreview-in-{}.csv", language.name.to_lowercase()),
            &libreview_export(
                language.preamble,
                language.header,
                &[&first, &second],
                language.mmol,
                false,
                false,
                language.when,
            )
            .text,
        );
    }
    let t = tconnect_sections(&days);
    write(
        &dir,
        "tconnect.csv",
        &format!(
            "{}\n{}\n{}\n{}\n{}",
            t.header, t.readings, t.iob, t.basal, t.bolus
        ),
    );
    write(&dir, "carelink-780g.csv", &carelink_csv(&days).0);
    write(&dir, "carelink-guardian.csv", &guardian_connect(&days).text);
    write(
        &dir,
        "nightscout-entries.json",
        &nightscout_entries(&days).0,
    );
    write(&dir, "nightscout-treatments.json", &nightscout_treatments());
    write(&dir, "export.xml", &apple_health_xml().0);
    write(
        &dir,
        "clarity-one-plus.csv",
        &clarity_csv(&["2026-11-01"], 5)
            .0
            .replace("Android G6", "iOS D1G7"),
    );
    write(
        &dir,
        "Zebulon Quattlebaum steps.csv",
        "date,steps,Device Serial Number\n2026-10-24,5120,8XQ7TZ-1\n2026-10-25,6001,8XQ7TZ-1\n",
    );
    write(
        &dir,
        "unknown-meter.csv",
        "Zeit;Blutzucker (mmol/L);Bolus (IE)\n24.10.2026 08:00;5,8;\n",
    );
    eprintln!("wrote every fixture into {}", dir.display());
}
