-- The everyday-analytics test database: three people with type 1 diabetes, their CGM readings
-- every 5 minutes for the last 40 days (ending when the database is built, so "today",
-- "yesterday" and "the last 7 days" have data), basal rate changes, boluses, pump events with a
-- JSON payload, their devices (LIST, STRUCT and MAP columns) and a free-text journal.
--
-- Everything is arithmetic on a 5-minute slot number (seconds since 1970 / 300), so the data is
-- the same on every build except for where the 40-day window falls; there is no random().
-- The daily pattern uses a fixed UTC-5 offset for "local" clock time, so the file does not
-- depend on the time zone of the connection that builds it.
--
-- Used by tests/it/everyday_corpus.rs (built with the duckdb crate) and by
-- tests/it/everyday/check_corpus.py (built with the Python package). Builds in well under 2 s.

-- The slot of the last reading: the current minute, rounded down to 5 minutes. A temporary
-- table so that every statement below sees the same anchor and the file does not keep it.
CREATE TEMP TABLE anchor AS
SELECT (epoch(date_trunc('minute', now()))::BIGINT // 300) AS end_slot;

CREATE TABLE patients (
    patient_id INTEGER PRIMARY KEY,
    display_name VARCHAR NOT NULL,
    birth_date DATE,
    diagnosed_on DATE,
    diabetes_type VARCHAR,
    weight_kg DOUBLE,
    target_low SMALLINT,
    target_high SMALLINT,
    home_time_zone VARCHAR
);
INSERT INTO patients VALUES
    (1, 'Alex Rivera', DATE '1988-04-12', DATE '1999-09-03', 'T1D', 72.5, 70, 180, 'America/New_York'),
    (2, 'Sam Okafor', DATE '2009-11-30', DATE '2016-02-17', 'T1D', 51.0, 70, 180, 'America/New_York'),
    (3, 'Jordan Lee', DATE '1975-06-01', DATE '2021-12-24', 'LADA', 88.2, 80, 160, 'America/Chicago');
COMMENT ON TABLE patients IS 'People whose devices feed this database';

-- One row per 5-minute slot and person, then the glucose shape of that slot.
CREATE TABLE cgm_readings AS
WITH slots AS (
    SELECT p.patient_id, a.end_slot - r.i AS s
    FROM anchor a
    CROSS JOIN (VALUES (1), (2), (3)) p(patient_id)
    CROSS JOIN range(0, 40 * 288) r(i)
    -- Jordan started wearing a CGM 25 days ago.
    WHERE NOT (p.patient_id = 3 AND r.i >= 25 * 288)
),
clock AS (
    SELECT
        patient_id,
        s,
        -- minute of the local (UTC-5) day and the local day number
        (s * 5 - 300) % 1440 AS m,
        (s * 5 - 300) // 1440 AS d,
        -- a sensor lasts 10 days; its first 2 hours are warm-up without readings
        (s + patient_id * 937) // 2880 AS sensor_no,
        (s + patient_id * 937) % 2880 AS sensor_slot
    FROM slots
),
kept AS (
    SELECT * FROM clock
    WHERE sensor_slot >= 24
      -- single dropped readings
      AND (s * 13 + patient_id) % 211 <> 0
      -- Alex loses the signal for 90 minutes every 9th night (lying on the sensor)
      AND NOT (patient_id = 1 AND d % 9 = 4 AND m >= 60 AND m < 150)
),
shaped AS (
    SELECT
        patient_id,
        s,
        sensor_no,
        m,
        d,
        118 + 7 * patient_id + (d * 17 + patient_id * 5) % 31 - 15
        -- dawn phenomenon
        + CASE WHEN m >= 240 AND m < 480 THEN (m - 240) // 8 ELSE 0 END
        -- breakfast, lunch and dinner: a rise over an hour, back down over two
        + CASE WHEN m >= 450 AND m < 510 THEN (m - 450) * (70 + d % 4 * 25) // 60
               WHEN m >= 510 AND m < 630 THEN (70 + d % 4 * 25) - (m - 510) * (70 + d % 4 * 25) // 120
               ELSE 0 END
        + CASE WHEN m >= 750 AND m < 810 THEN (m - 750) * (60 + (d + patient_id) % 3 * 30) // 60
               WHEN m >= 810 AND m < 930 THEN (60 + (d + patient_id) % 3 * 30) - (m - 810) * (60 + (d + patient_id) % 3 * 30) // 120
               ELSE 0 END
        + CASE WHEN m >= 1110 AND m < 1170 THEN (m - 1110) * (80 + (d * patient_id) % 5 * 25) // 60
               WHEN m >= 1170 AND m < 1290 THEN (80 + (d * patient_id) % 5 * 25) - (m - 1170) * (80 + (d * patient_id) % 5 * 25) // 120
               ELSE 0 END
        -- Sam's football practice on even days
        - CASE WHEN patient_id = 2 AND d % 2 = 0 AND m >= 960 AND m < 1050 THEN least(m - 960, 1050 - m) * 2 ELSE 0 END
        -- sensor noise
        + (s * 37 + patient_id * 101) % 7 - 3
        + (s * 7919) % 5 - 2 AS raw_glucose,
        -- a night-time low on every third night: 15 to 45 minutes under 70
        (d + patient_id) % 3 = 0 AND m >= 150 AND m < 165 + 10 * ((d * 7 + patient_id) % 4) AS in_night_low
    FROM kept
),
valued AS (
    SELECT
        patient_id,
        s,
        sensor_no,
        CASE
            WHEN in_night_low THEN 66 - (m - 150) // 2 + (s * 7) % 5
            -- the slide into the low
            WHEN (d + patient_id) % 3 = 0 AND m >= 110 AND m < 150 THEN 110 - (m - 110) + (s * 7) % 5
            ELSE greatest(40, least(400, raw_glucose))
        END::INTEGER AS glucose
    FROM shaped
),
with_previous AS (
    SELECT
        *,
        lag(s) OVER (PARTITION BY patient_id ORDER BY s) AS previous_s,
        glucose - lag(glucose) OVER (PARTITION BY patient_id ORDER BY s) AS delta
    FROM valued
)
SELECT
    row_number() OVER (ORDER BY patient_id, s) AS reading_id,
    patient_id,
    'G7-' || patient_id || '-' || sensor_no AS device_id,
    to_timestamp(s * 300) AS read_at,
    glucose,
    CASE
        WHEN previous_s IS NULL OR s - previous_s > 1 THEN NULL
        WHEN delta >= 15 THEN 'DoubleUp'
        WHEN delta >= 10 THEN 'SingleUp'
        WHEN delta >= 5 THEN 'FortyFiveUp'
        WHEN delta > -5 THEN 'Flat'
        WHEN delta > -10 THEN 'FortyFiveDown'
        WHEN delta > -15 THEN 'SingleDown'
        ELSE 'DoubleDown'
    END AS trend
FROM with_previous
ORDER BY patient_id, s;
COMMENT ON TABLE cgm_readings IS 'Continuous glucose monitor readings, one every 5 minutes while a sensor is on';
COMMENT ON COLUMN cgm_readings.glucose IS 'Sensor glucose in mg/dL';
COMMENT ON COLUMN cgm_readings.trend IS 'Trend arrow; NULL right after a gap';

-- The pump's basal schedule (five segments a day), with a temporary basal before Sam's
-- practice and on some afternoons for the others. Alex's pump history starts 38 days ago, so
-- the first two days of readings have no basal rate to match.
CREATE TABLE basal_rates AS
WITH days AS (
    SELECT p.patient_id, p.factor, (a.end_slot * 5 - 300) // 1440 - r.i AS d
    FROM anchor a
    CROSS JOIN (VALUES (1, 1.0), (2, 0.8), (3, 1.25)) p(patient_id, factor)
    CROSS JOIN range(0, 41) r(i)
    WHERE NOT (p.patient_id = 1 AND r.i > 37)
),
segments AS (
    SELECT d.patient_id, d.d, s.start_minute, (s.rate * d.factor)::DOUBLE AS rate, 'scheduled' AS reason
    FROM days d
    CROSS JOIN (VALUES (0, 0.80), (240, 1.10), (540, 0.90), (900, 0.85), (1260, 0.75)) s(start_minute, rate)
    UNION ALL
    SELECT patient_id, d, 930, round(0.85 * factor * 0.5, 3)::DOUBLE, 'temp_exercise'
    FROM days
    WHERE (patient_id = 2 AND d % 2 = 0) OR (patient_id <> 2 AND (d + patient_id) % 5 = 0)
    UNION ALL
    SELECT patient_id, d, 1050, (0.85 * factor)::DOUBLE, 'resume'
    FROM days
    WHERE (patient_id = 2 AND d % 2 = 0) OR (patient_id <> 2 AND (d + patient_id) % 5 = 0)
)
SELECT
    patient_id,
    to_timestamp((d * 1440 + start_minute + 300) * 60) AS starts_at,
    rate AS units_per_hour,
    reason
FROM segments
WHERE to_timestamp((d * 1440 + start_minute + 300) * 60) <= now()
ORDER BY patient_id, starts_at;
COMMENT ON TABLE basal_rates IS 'Basal rate changes: each rate holds until the next row of the same patient';

-- Meal boluses (lunch skipped now and then), an extended bolus at some dinners and evening
-- corrections.
CREATE TABLE boluses AS
WITH days AS (
    SELECT p.patient_id, p.icr, (a.end_slot * 5 - 300) // 1440 - r.i AS d
    FROM anchor a
    CROSS JOIN (VALUES (1, 10), (2, 15), (3, 8)) p(patient_id, icr)
    CROSS JOIN range(0, 40) r(i)
),
meals AS (
    SELECT patient_id, icr, d, 'breakfast' AS meal, 440 + (d * 7 + patient_id) % 15 AS minute,
           30 + (d * 11 + patient_id * 3) % 40 AS carbs
    FROM days
    UNION ALL
    SELECT patient_id, icr, d, 'lunch', 740 + (d * 5 + patient_id) % 20, 40 + (d * 13 + patient_id) % 35
    FROM days WHERE (d + patient_id) % 6 <> 0
    UNION ALL
    SELECT patient_id, icr, d, 'dinner', 1100 + (d * 3 + patient_id) % 25, 50 + (d * 17 + patient_id * 7) % 60
    FROM days
),
all_boluses AS (
    SELECT patient_id, d, minute, 'meal' AS kind, meal,
           (round(carbs / icr * 20) / 20)::DECIMAL(5, 2) AS units, carbs,
           CASE WHEN meal = 'dinner' AND d % 7 = 3 THEN 120 END AS extended_minutes
    FROM meals
    UNION ALL
    SELECT patient_id, d, 1260 + (d * 11) % 30, 'correction', NULL,
           (1.0 + (d % 3) * 0.5)::DECIMAL(5, 2), NULL, NULL
    FROM days WHERE (d * patient_id) % 4 = 1
)
SELECT
    row_number() OVER (ORDER BY patient_id, d, minute) AS bolus_id,
    patient_id,
    to_timestamp((d * 1440 + minute + 300) * 60) AS given_at,
    kind,
    meal,
    units,
    carbs AS carbs_g,
    extended_minutes
FROM all_boluses
WHERE to_timestamp((d * 1440 + minute + 300) * 60) <= now()
ORDER BY patient_id, given_at;
COMMENT ON COLUMN boluses.units IS 'Insulin units delivered';
COMMENT ON COLUMN boluses.carbs_g IS 'Carbohydrates entered in the bolus wizard, grams';

-- Pump events; `details` is the vendor's JSON payload, with nested objects and arrays.
CREATE TABLE pump_events (
    event_id INTEGER PRIMARY KEY,
    patient_id INTEGER,
    occurred_at TIMESTAMPTZ,
    event_type VARCHAR,
    details JSON
);
INSERT INTO pump_events
WITH days AS (
    SELECT p.patient_id, (a.end_slot * 5 - 300) // 1440 - r.i AS d
    FROM anchor a
    CROSS JOIN (VALUES (1), (2), (3)) p(patient_id)
    CROSS JOIN range(0, 40) r(i)
),
events AS (
    -- a site change every third day
    SELECT patient_id, d, 1140 + patient_id * 5 AS minute, 'site_change' AS event_type,
           json_object(
               'site', json_object(
                   'location', ['abdomen', 'thigh', 'arm'][1 + (d // 3 + patient_id) % 3],
                   'side', CASE WHEN d % 2 = 0 THEN 'left' ELSE 'right' END),
               'cannula_mm', CASE WHEN patient_id = 2 THEN 6 ELSE 9 END,
               'primed_units', 0.3,
               'tags', CASE WHEN d % 4 = 0 THEN json_array('routine', 'new_box') ELSE json_array('routine') END
           ) AS details
    FROM days WHERE (d + patient_id) % 3 = 0
    UNION ALL
    -- alarms
    SELECT patient_id, d, 60 * ((d * 5 + patient_id * 3) % 24) + 17, 'alarm',
           json_object(
               'code', ['LOW_RESERVOIR', 'OCCLUSION', 'LOW_BATTERY', 'SENSOR_LOW', 'SENSOR_HIGH'][1 + (d * 7 + patient_id) % 5],
               'severity', CASE WHEN (d * 7 + patient_id) % 5 IN (1, 3) THEN 'critical' ELSE 'warning' END,
               'acknowledged', (d + patient_id) % 4 <> 0,
               'reservoir_units', CASE WHEN (d * 7 + patient_id) % 5 = 0 THEN 10 + (d % 5) * 2.5 END,
               'tags', json_array(
                   CASE WHEN (60 * ((d * 5 + patient_id * 3) % 24)) < 360 THEN 'night' ELSE 'day' END,
                   CASE WHEN d % 3 = 0 THEN 'repeat' ELSE 'first' END)
           )
    FROM days WHERE (d * 3 + patient_id) % 2 = 0
    UNION ALL
    -- predictive low suspends at night
    SELECT patient_id, d, 140 + (d * patient_id) % 10, 'suspend',
           json_object(
               'reason', 'low_predicted',
               'duration_min', 15 + 5 * ((d + patient_id) % 4),
               'glucose_at_suspend', 70 + (d * 3) % 12,
               'resumed', json_object('by', CASE WHEN d % 5 = 0 THEN 'user' ELSE 'auto' END,
                                      'after_min', 15 + 5 * ((d + patient_id) % 4))
           )
    FROM days WHERE (d + patient_id) % 3 = 0
    UNION ALL
    -- bolus wizard calculations at dinner
    SELECT patient_id, d, 1095 + (d * 3 + patient_id) % 25, 'bolus_wizard',
           json_object(
               'carbs_g', 50 + (d * 17 + patient_id * 7) % 60,
               'bg', 90 + (d * 29 + patient_id * 13) % 160,
               'ratios', json_object('icr', [10, 15, 8][patient_id], 'isf', [45, 60, 35][patient_id]),
               'recommended_units', json_array(
                   round((50 + (d * 17 + patient_id * 7) % 60) / [10, 15, 8][patient_id], 1),
                   round(greatest(0, 90 + (d * 29 + patient_id * 13) % 160 - 120) / [45, 60, 35][patient_id], 1)),
               'override', d % 6 = 1
           )
    FROM days WHERE d % 2 = 1
    UNION ALL
    -- battery reports
    SELECT patient_id, d, 480, 'battery',
           json_object('level_pct', 100 - (d * 9 + patient_id * 11) % 85)
    FROM days WHERE d % 4 = patient_id
)
SELECT
    row_number() OVER (ORDER BY patient_id, d, minute, event_type)::INTEGER,
    patient_id,
    to_timestamp((d * 1440 + minute + 300) * 60),
    event_type,
    details
FROM events
WHERE to_timestamp((d * 1440 + minute + 300) * 60) <= now()
ORDER BY 1;
COMMENT ON COLUMN pump_events.details IS 'Vendor JSON payload of the event';

-- Devices: each CGM sensor seen in the readings, and one insulin pump per person.
CREATE TABLE devices AS
SELECT
    device_id,
    patient_id,
    'cgm' AS kind,
    'Dexcom G7' AS model,
    min(read_at) AS started_at,
    min(read_at) + INTERVAL 10 DAY AS expires_at,
    CASE WHEN patient_id = 2 THEN ['sensor', 'arm', 'overpatch'] ELSE ['sensor', 'abdomen'] END AS tags,
    {'low': 70, 'high': CASE WHEN patient_id = 3 THEN 200 ELSE 250 END, 'urgent_low': 55,
     'rise_alert': patient_id <> 1} AS alert_settings,
    MAP {'calibration_offset': 0.0, 'transmitter_gain': 1.0 + patient_id / 100} AS limits,
    CASE WHEN patient_id = 1 THEN [112, 98] ELSE []::INTEGER[] END AS calibrations
FROM cgm_readings
GROUP BY device_id, patient_id
UNION ALL
SELECT
    'PUMP-' || patient_id,
    patient_id,
    'pump',
    CASE WHEN patient_id = 2 THEN 'Omnipod 5' ELSE 't:slim X2' END,
    TIMESTAMPTZ '2024-01-15 10:00:00+00' + INTERVAL (patient_id * 30) DAY,
    NULL,
    ['pump', 'insulin:' || CASE WHEN patient_id = 3 THEN 'fiasp' ELSE 'humalog' END],
    {'low': 70, 'high': 250, 'urgent_low': 55, 'rise_alert': false},
    MAP {'max_bolus': 10.0 + patient_id, 'max_basal': 2.5, 'insulin_duration_h': 4.0},
    []::INTEGER[]
FROM patients
ORDER BY patient_id, device_id;
COMMENT ON TABLE devices IS 'CGM sensors and insulin pumps';

-- What people typed into the app.
CREATE TABLE journal AS
WITH days AS (
    SELECT p.patient_id, (a.end_slot * 5 - 300) // 1440 - r.i AS d
    FROM anchor a
    CROSS JOIN (VALUES (1), (2), (3)) p(patient_id)
    CROSS JOIN range(0, 40) r(i)
)
SELECT
    row_number() OVER (ORDER BY patient_id, d)::INTEGER AS entry_id,
    patient_id,
    to_timestamp((d * 1440 + 1290 + patient_id * 7 + 300) * 60) AS noted_at,
    [
        'Pizza night, pre-bolused 20 min',
        'Ran 5 km in the afternoon',
        'Sick day: fever 38.2 C, ketones 0.4 mmol/L',
        'Sensor fell off after swimming, replaced',
        'Forgot lunch bolus #oops',
        'Hypo at 3am, treated with 15g carbs',
        'Big work presentation, stressed',
        'Tried new insulin site on the thigh',
        'Birthday cake 60g carbs #party',
        'Long hike 12 km, reduced basal 50%'
    ][1 + (d // 2 * 3 + patient_id * 7) % 10] AS note
FROM days
WHERE (d + patient_id) % 2 = 0
  AND to_timestamp((d * 1440 + 1290 + patient_id * 7 + 300) * 60) <= now()
ORDER BY entry_id;

-- A view people keep around: one row per person and local calendar day.
CREATE VIEW daily_glucose AS
SELECT
    patient_id,
    read_at::DATE AS day,
    count(*) AS readings,
    round(avg(glucose), 1) AS mean_glucose,
    round(100.0 * count(*) FILTER (glucose BETWEEN 70 AND 180) / count(*), 1) AS pct_in_range
FROM cgm_readings
GROUP BY ALL;

DROP TABLE anchor;
