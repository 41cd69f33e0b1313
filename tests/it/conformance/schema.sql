-- The database tests/it/conformance.rs serves: what its classes read (stored macros, secure views,
-- nested schemas, quoted names, and columns of the types DuckDB 2.0 can return). Fixed data,
-- no dependence on the time it is built.

CREATE TABLE patients (
    patient_id INTEGER PRIMARY KEY,
    name VARCHAR NOT NULL,
    clinic VARCHAR,
    born DATE
);
INSERT INTO patients VALUES
    (1, 'Ada', 'north', DATE '1984-03-02'),
    (2, 'Bo', 'south', DATE '1991-11-20'),
    (3, 'Cy', 'north', DATE '1975-07-14'),
    (4, 'Di', NULL, DATE '2002-01-31');

-- Readings per patient, year and quarter: the PIVOT classes spread them out.
CREATE TABLE readings (
    patient_id INTEGER REFERENCES patients (patient_id),
    year INTEGER,
    quarter VARCHAR,
    glucose INTEGER,
    taken_at TIMESTAMPTZ
);
INSERT INTO readings
SELECT 1 + (i % 4), 2022 + (i % 3), 'Q' || (1 + (i // 3) % 4), 70 + (i * 37) % 160,
       TIMESTAMPTZ '2024-05-01 08:00:00+00' + i * INTERVAL 97 MINUTE
FROM range(48) t(i);

-- One column per type the value classes return, read back from the file.
CREATE TABLE typed (
    id INTEGER,
    tz_clock TIMETZ,
    ns_clock TIME_NS,
    ns_instant TIMESTAMPTZ_NS,
    span INTERVAL,
    doc JSON,
    shape GEOMETRY,
    anything VARIANT,
    pair STRUCT(a INTEGER, b VARCHAR)
);
INSERT INTO typed VALUES
    (1, TIMETZ '08:30:00+02', TIME_NS '08:30:00.123456789',
     TIMESTAMPTZ_NS '2024-02-29 23:59:59.999999999+00', INTERVAL '300 years',
     '{"dose": 2.5, "note": null}', 'POINT (1 2)', 42::VARIANT, {'a': 1, 'b': 'x'}),
    (2, TIMETZ '23:59:59.999999-11:30', TIME_NS '00:00:00.000000001',
     TIMESTAMPTZ_NS '1970-01-01 00:00:00+00', INTERVAL '-2562047788 hours',
     'null', 'LINESTRING (0 0, 1 1, 2 0)', 'text'::VARIANT, {'a': NULL, 'b': NULL}),
    (3, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
    (4, TIMETZ '00:00:00+00', TIME_NS '23:59:59.999999999',
     TIMESTAMPTZ_NS '1677-09-22 00:00:00+00', INTERVAL '1 month 2 days 3 microseconds',
     '[1, "two", [3]]', 'POLYGON ((0 0, 4 0, 4 4, 0 4, 0 0))',
     {'k': [1, 2], 'when': DATE '2024-01-31'}::VARIANT, {'a': 4, 'b': 'four'});

-- Nested schemas (new in DuckDB 2.0), with a table of the same name at two levels.
CREATE SCHEMA clinic;
CREATE SCHEMA clinic.archive;
CREATE TABLE clinic.visits (visit_id INTEGER, patient_id INTEGER, reason VARCHAR);
INSERT INTO clinic.visits VALUES (1, 1, 'check-up'), (2, 2, 'sensor'), (3, 1, 'pump');
CREATE TABLE clinic.archive.visits (visit_id INTEGER, patient_id INTEGER, reason VARCHAR, closed DATE);
INSERT INTO clinic.archive.visits VALUES (10, 3, 'intake', DATE '2019-05-01'), (11, 4, 'intake', DATE '2020-06-02');
CREATE VIEW clinic.archive.intake AS SELECT patient_id, closed FROM clinic.archive.visits WHERE reason = 'intake';
-- A nested schema's table named like a file extension (DuckDB's own tests call tables `tbl`):
-- the catalog, not the extension, says it is a table.
CREATE TABLE clinic.archive.tbl AS SELECT visit_id, reason FROM clinic.archive.visits;

-- Names that look like paths or several parts, and a schema and table with spaces.
CREATE TABLE "a.b.c" (x INTEGER, y VARCHAR);
INSERT INTO "a.b.c" VALUES (1, 'one'), (2, 'two');
CREATE SCHEMA "Odd Schema";
CREATE TABLE "Odd Schema"."Odd Table" ("Mixed Case" INTEGER, "with ""quote""" VARCHAR);
INSERT INTO "Odd Schema"."Odd Table" VALUES (7, 'q');
CREATE SCHEMA exports;
CREATE TABLE exports.csv (line VARCHAR);
INSERT INTO exports.csv VALUES ('patient_id,glucose'), ('1,98');
CREATE TABLE tables (name VARCHAR);
INSERT INTO tables VALUES ('a table called tables');

-- Secure views: DuckDB plans them as their own operator.
CREATE SECURE VIEW patient_totals AS
    SELECT patient_id, count(*) AS readings, sum(glucose) AS total FROM readings GROUP BY patient_id;
CREATE SECURE VIEW north_patients AS SELECT patient_id, name FROM patients WHERE clinic = 'north';
CREATE SECURE VIEW clinic.archive.secure_intake AS SELECT patient_id FROM clinic.archive.intake;
CREATE VIEW totals_of_north AS
    SELECT t.* FROM patient_totals t JOIN north_patients n USING (patient_id);

-- Stored scalar macros.
CREATE MACRO to_mmol(mg) AS round(mg / 18.0, 1);
CREATE MACRO in_range(g, low := 70, high := 180) AS g BETWEEN low AND high;
CREATE MACRO band(g) AS CASE WHEN g < 70 THEN 'low' WHEN g > 180 THEN 'high' ELSE 'in range' END;
CREATE MACRO add_up(a) AS a, (a, b) AS a + b, (a, b, c) AS a + b + c;
CREATE MACRO doubled(xs) AS list_transform(xs, lambda x: x * 2);
CREATE MACRO clinic.label(p) AS 'patient #' || p;
CREATE MACRO patient_name(p) AS (SELECT name FROM patients WHERE patient_id = p);

-- Stored table macros.
CREATE MACRO readings_of(p) AS TABLE SELECT * FROM readings WHERE patient_id = p;
CREATE MACRO top_readings(n := 3) AS TABLE
    SELECT patient_id, glucose FROM readings ORDER BY glucose DESC, patient_id LIMIT n;
CREATE MACRO squares(n) AS TABLE SELECT i, i * i AS square FROM range(n) t(i);
CREATE MACRO banded() AS TABLE SELECT band(glucose) AS band, count(*) AS n FROM readings GROUP BY ALL;
CREATE MACRO clinic.visits_of(p) AS TABLE SELECT * FROM clinic.visits WHERE patient_id = p;
CREATE MACRO either(which) AS TABLE SELECT name FROM patients WHERE clinic = which;
