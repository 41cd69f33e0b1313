-- What DuckDB's own test suite asks of a read-only gateway, by class, written for
-- tests/it/conformance/schema.sql from DuckDB's documentation.
--
-- tests/it/conformance.rs sends each entry to duckgate's `query` tool over MCP and compares the
-- column names, DuckDB's type names and the rows with the same SQL run on an in-process DuckDB
-- over the same file, in the same time zone (America/New_York).
--
-- Format (the one tests/it/everyday/corpus.sql uses): `-- name:` starts an entry (a unique
-- snake_case name); the `-- key: value` lines right after it are its headers; everything up to
-- the next `-- name:` is one SQL statement (a final `;` is dropped).
--   category: the class the entry belongs to (tests/it/conformance.rs lists the classes)
--   ordered:  yes when the statement orders its rows (a top-level ORDER BY): rows are compared
--             in order; otherwise they are compared as a multiset
--   ask:      what the entry shows (documentation only)

-------------------------------------------------------------------------------------------------
-- VARIANT
-------------------------------------------------------------------------------------------------

-- name: variant_typed_literal
-- category: variant
SELECT VARIANT 'duck' AS v;

-- name: variant_of_an_integer
-- category: variant
SELECT 42::VARIANT AS v;

-- name: variant_of_a_list
-- category: variant
SELECT [1, 2, NULL]::VARIANT AS v;

-- name: variant_of_a_struct
-- category: variant
SELECT {'dose': 2.5, 'unit': 'U'}::VARIANT AS v;

-- name: variant_column_from_the_file
-- category: variant
-- ordered: yes
SELECT id, anything FROM typed ORDER BY id;

-- name: variant_extract_a_field
-- category: variant
SELECT variant_extract(anything, 'k') AS k FROM typed WHERE id = 4;

-- name: variant_list_of_variants
-- category: variant
SELECT [1::VARIANT, 'two'::VARIANT] AS l;

-- name: variant_inside_a_struct
-- category: variant
-- ordered: yes
SELECT {'id': id, 'v': anything} AS s FROM typed ORDER BY id;

-- name: variant_of_dates
-- category: variant
SELECT DATE '2024-01-31'::VARIANT AS d, TIMESTAMP '2024-01-31 10:00:00'::VARIANT AS ts;

-- name: variant_of_a_decimal
-- category: variant
SELECT 12.50::DECIMAL(6, 2)::VARIANT AS d;

-- name: variant_sql_null
-- category: variant
SELECT NULL::VARIANT AS v;

-- name: variant_typeof_each_row
-- category: variant
-- ordered: yes
SELECT id, variant_typeof(anything) AS t FROM typed ORDER BY id;

-- name: variant_of_a_geometry
-- category: variant
SELECT shape::VARIANT AS v FROM typed WHERE id = 1;

-- name: variant_back_to_an_integer
-- category: variant
SELECT anything::INTEGER AS n FROM typed WHERE id = 1;

-------------------------------------------------------------------------------------------------
-- GEOMETRY
-------------------------------------------------------------------------------------------------

-- name: geometry_literal_point
-- category: geometry
SELECT 'POINT (1 2)'::GEOMETRY AS g;

-- name: geometry_column_from_the_file
-- category: geometry
-- ordered: yes
SELECT id, shape FROM typed ORDER BY id;

-- name: geometry_as_text
-- category: geometry
-- ordered: yes
SELECT id, ST_AsText(shape) AS wkt FROM typed ORDER BY id;

-- name: geometry_as_wkb
-- category: geometry
-- ordered: yes
SELECT ST_AsWKB(shape) AS wkb FROM typed ORDER BY id;

-- name: geometry_round_trip_through_wkb
-- category: geometry
-- ordered: yes
SELECT ST_GeomFromWKB(ST_AsWKB(shape)) AS g FROM typed ORDER BY id;

-- name: geometry_from_geojson
-- category: geometry
SELECT ST_GeomFromGeoJSON('{"type": "Point", "coordinates": [3, 4]}') AS g;

-- name: geometry_in_a_map
-- category: geometry
SELECT MAP {'shape': shape} AS m FROM typed WHERE id = 2;

-- name: geometry_in_a_list
-- category: geometry
SELECT list(shape ORDER BY id) AS shapes FROM typed WHERE shape IS NOT NULL;

-- name: geometry_in_a_struct
-- category: geometry
SELECT {'id': id, 'shape': shape} AS s FROM typed WHERE id = 4;

-- name: geometry_equality
-- category: geometry
-- ordered: yes
SELECT id, shape = 'POINT (1 2)'::GEOMETRY AS is_point FROM typed ORDER BY id;

-- name: geometry_linestring_literal
-- category: geometry
SELECT 'LINESTRING (0 0, 10 10)'::GEOMETRY AS g;

-------------------------------------------------------------------------------------------------
-- Read-only built-in table functions
-------------------------------------------------------------------------------------------------

-- name: repeat_a_string
-- category: table_functions
SELECT * FROM repeat('x', 3);

-- name: repeat_with_an_alias
-- category: table_functions
SELECT v FROM repeat(42, 2) AS t(v);

-- name: repeat_row_of_several_values
-- category: table_functions
SELECT * FROM repeat_row(1, 'a', num_rows := 3);

-- name: test_all_types_counts_its_rows
-- category: table_functions
SELECT count(*) AS n FROM test_all_types();

-- name: test_all_types_plain_columns
-- category: table_functions
SELECT bool, tinyint, smallint, "int", bigint, utinyint, usmallint, uint FROM test_all_types();

-- name: range_of_integers
-- category: table_functions
-- ordered: yes
SELECT * FROM range(4) ORDER BY range;

-- name: range_of_timestamps
-- category: table_functions
-- ordered: yes
SELECT * FROM range(DATE '2024-01-01', DATE '2024-01-04', INTERVAL 1 DAY) ORDER BY 1;

-- name: generate_series_with_a_step
-- category: table_functions
FROM generate_series(1, 10, 3);

-- name: unnest_a_list
-- category: table_functions
SELECT * FROM unnest([1, 2, 3]) AS t(x);

-- name: unnest_a_list_of_structs
-- category: table_functions
SELECT * FROM unnest([{'a': 1, 'b': 'x'}, {'a': 2, 'b': 'y'}]);

-- name: duckdb_keywords_lookup
-- category: table_functions
-- ordered: yes
SELECT keyword_name, keyword_category FROM duckdb_keywords()
WHERE keyword_name IN ('select', 'pivot', 'qualify') ORDER BY 1;

-- name: duckdb_tables_of_the_database
-- category: table_functions
-- ordered: yes
SELECT schema_name, table_name FROM duckdb_tables() ORDER BY ALL;

-- name: duckdb_views_of_the_database
-- category: table_functions
-- ordered: yes
SELECT schema_name, view_name FROM duckdb_views() WHERE NOT internal ORDER BY ALL;

-- name: duckdb_schemas_with_their_parents
-- category: table_functions
-- ordered: yes
SELECT schema_name, parent_schema FROM duckdb_schemas() WHERE NOT internal ORDER BY ALL;

-- name: duckdb_functions_lists_the_stored_macros
-- category: table_functions
-- ordered: yes
SELECT DISTINCT function_name, function_type FROM duckdb_functions()
WHERE function_name IN ('to_mmol', 'squares', 'readings_of') ORDER BY ALL;

-- name: pg_timezone_names_lookup
-- category: table_functions
SELECT name, abbrev FROM pg_timezone_names() WHERE name = 'Europe/Paris';

-------------------------------------------------------------------------------------------------
-- pragma_table_info over the database's own tables
-------------------------------------------------------------------------------------------------

-- name: pragma_table_info_quoted_name
-- category: pragma_table_info
SELECT * FROM pragma_table_info('patients');

-- name: pragma_table_info_bare_name
-- category: pragma_table_info
SELECT * FROM pragma_table_info(patients);

-- name: pragma_table_info_some_columns
-- category: pragma_table_info
-- ordered: yes
SELECT name, type FROM pragma_table_info('readings') ORDER BY cid;

-- name: pragma_table_info_schema_qualified
-- category: pragma_table_info
SELECT * FROM pragma_table_info('clinic.visits');

-- name: pragma_table_info_main_qualified
-- category: pragma_table_info
SELECT name FROM pragma_table_info('main.patients');

-- name: pragma_table_info_catalog_qualified
-- category: pragma_table_info
SELECT name FROM pragma_table_info('conformance.main.patients');

-- name: pragma_table_info_of_a_view
-- category: pragma_table_info
SELECT name, type FROM pragma_table_info('totals_of_north');

-- name: pragma_table_info_primary_key
-- category: pragma_table_info
SELECT name FROM pragma_table_info('patients') WHERE pk;

-- name: pragma_table_info_counts_columns
-- category: pragma_table_info
SELECT count(*) AS columns FROM pragma_table_info('typed');

-- name: pragma_table_info_dotted_name
-- category: pragma_table_info
SELECT name FROM pragma_table_info('"a.b.c"');

-- name: pragma_table_info_quoted_schema_and_table
-- category: pragma_table_info
SELECT * FROM pragma_table_info('"Odd Schema"."Odd Table"');

-- name: pragma_table_info_joined_with_duckdb_columns
-- category: pragma_table_info
-- ordered: yes
SELECT p.name, c.data_type
FROM pragma_table_info('patients') p
JOIN duckdb_columns() c ON c.table_name = 'patients' AND c.column_name = p.name
ORDER BY p.cid;

-------------------------------------------------------------------------------------------------
-- Untyped NULL inside LIST, STRUCT, MAP and UNION
-------------------------------------------------------------------------------------------------

-- name: empty_map
-- category: untyped_null_nested
SELECT MAP() AS m;

-- name: empty_list
-- category: untyped_null_nested
SELECT [] AS l;

-- name: slice_of_an_empty_list
-- category: untyped_null_nested
SELECT ([])[1:3] AS l;

-- name: list_of_one_null
-- category: untyped_null_nested
SELECT [NULL] AS l;

-- name: list_of_nulls
-- category: untyped_null_nested
SELECT [NULL, NULL, NULL] AS l;

-- name: struct_with_a_null_field
-- category: untyped_null_nested
SELECT {'a': NULL, 'b': 1} AS s;

-- name: map_with_a_null_value
-- category: untyped_null_nested
SELECT MAP {'k': NULL} AS m;

-- name: union_of_a_null_member
-- category: untyped_null_nested
SELECT union_value(n := NULL) AS u;

-- name: nested_empty_and_null_lists
-- category: untyped_null_nested
SELECT [[], [NULL]] AS l;

-- name: struct_of_empty_things
-- category: untyped_null_nested
SELECT {'list': [], 'map': MAP()} AS s;

-- name: map_from_empty_lists
-- category: untyped_null_nested
SELECT MAP([], []) AS m;

-- name: array_of_nulls
-- category: untyped_null_nested
SELECT array_value(NULL, NULL) AS a;

-------------------------------------------------------------------------------------------------
-- Table macros stored in the database
-------------------------------------------------------------------------------------------------

-- name: table_macro_with_an_argument
-- category: table_macros
-- ordered: yes
FROM readings_of(2) SELECT year, quarter, glucose ORDER BY taken_at;

-- name: table_macro_default_argument
-- category: table_macros
-- ordered: yes
SELECT * FROM top_readings() ORDER BY glucose DESC, patient_id;

-- name: table_macro_named_argument
-- category: table_macros
-- ordered: yes
SELECT * FROM top_readings(n := 5) ORDER BY glucose DESC, patient_id;

-- name: table_macro_over_range
-- category: table_macros
FROM squares(4);

-- name: table_macro_aggregated
-- category: table_macros
SELECT sum(square) AS total FROM squares(10);

-- name: table_macro_calling_a_scalar_macro
-- category: table_macros
-- ordered: yes
FROM banded() ORDER BY band;

-- name: table_macro_in_a_schema
-- category: table_macros
-- ordered: yes
SELECT * FROM clinic.visits_of(1) ORDER BY visit_id;

-- name: table_macro_with_a_string_argument
-- category: table_macros
-- ordered: yes
SELECT name FROM either('north') ORDER BY name;

-- name: table_macro_grouped
-- category: table_macros
SELECT r.patient_id, count(*) AS n FROM readings_of(1) r GROUP BY ALL;

-- name: table_macro_in_a_cte
-- category: table_macros
-- ordered: yes
WITH s AS (FROM squares(3)) SELECT * FROM s ORDER BY i;

-- name: table_macro_joined_with_itself
-- category: table_macros
-- ordered: yes
SELECT a.i, b.square FROM squares(3) a JOIN squares(3) b ON a.i = b.i ORDER BY a.i;

-------------------------------------------------------------------------------------------------
-- Stored scalar macros
-------------------------------------------------------------------------------------------------

-- name: scalar_macro_on_a_constant
-- category: stored_macros
SELECT to_mmol(180) AS mmol;

-- name: scalar_macro_on_a_column
-- category: stored_macros
-- ordered: yes
SELECT glucose, to_mmol(glucose) AS mmol FROM readings WHERE patient_id = 1 ORDER BY taken_at;

-- name: scalar_macro_in_a_filter_clause
-- category: stored_macros
SELECT count(*) FILTER (in_range(glucose)) AS in_range_count FROM readings;

-- name: scalar_macro_named_argument
-- category: stored_macros
SELECT in_range(65, low := 60) AS ok, in_range(65) AS default_ok;

-- name: scalar_macro_as_a_group_key
-- category: stored_macros
-- ordered: yes
SELECT band(glucose) AS b, count(*) AS n FROM readings GROUP BY ALL ORDER BY b;

-- name: scalar_macro_overloads
-- category: stored_macros
SELECT add_up(1) AS one, add_up(1, 2) AS two, add_up(1, 2, 3) AS three;

-- name: scalar_macro_with_a_lambda
-- category: stored_macros
SELECT doubled([1, 2, 3]) AS d;

-- name: scalar_macro_in_a_schema
-- category: stored_macros
-- ordered: yes
SELECT clinic.label(patient_id) AS label FROM patients ORDER BY patient_id;

-- name: scalar_macro_with_a_subquery
-- category: stored_macros
SELECT patient_name(3) AS n;

-- name: scalar_macro_in_where
-- category: stored_macros
-- ordered: yes
SELECT name FROM patients WHERE band(patient_id * 60) = 'in range' ORDER BY name;

-- name: scalar_macro_over_an_aggregate
-- category: stored_macros
SELECT to_mmol(avg(glucose)) AS mean_mmol FROM readings;

-------------------------------------------------------------------------------------------------
-- PIVOT without IN: DuckDB finds the values with a query of its own
-------------------------------------------------------------------------------------------------

-- name: pivot_on_quarter_counts
-- category: pivot_without_in
-- ordered: yes
PIVOT readings ON quarter USING count(*) GROUP BY patient_id ORDER BY patient_id;

-- name: pivot_on_year_average
-- category: pivot_without_in
-- ordered: yes
PIVOT readings ON year USING avg(glucose) GROUP BY patient_id ORDER BY patient_id;

-- name: pivot_of_a_subquery
-- category: pivot_without_in
-- ordered: yes
PIVOT (SELECT patient_id, quarter, glucose FROM readings) ON quarter USING max(glucose)
ORDER BY patient_id;

-- name: pivot_as_a_subquery
-- category: pivot_without_in
-- ordered: yes
SELECT * FROM (PIVOT readings ON year USING count(*) GROUP BY patient_id) ORDER BY patient_id;

-- name: pivot_on_two_columns
-- category: pivot_without_in
-- ordered: yes
PIVOT readings ON year, quarter USING count(*) GROUP BY patient_id ORDER BY patient_id;

-- name: pivot_on_a_column_with_nulls
-- category: pivot_without_in
PIVOT patients ON clinic USING count(*);

-- name: pivot_in_a_cte
-- category: pivot_without_in
-- ordered: yes
WITH p AS (PIVOT readings ON quarter USING min(glucose) GROUP BY year) SELECT * FROM p ORDER BY year;

-- name: pivot_on_an_expression
-- category: pivot_without_in
-- ordered: yes
PIVOT readings ON quarter || '-' || year USING count(*) GROUP BY patient_id ORDER BY patient_id;

-- name: pivot_with_two_aggregates
-- category: pivot_without_in
-- ordered: yes
PIVOT readings ON year USING count(*) AS n, max(glucose) AS top GROUP BY patient_id
ORDER BY patient_id;

-- name: pivot_wider_spelling
-- category: pivot_without_in
-- ordered: yes
PIVOT_WIDER readings ON quarter USING count(*) GROUP BY patient_id ORDER BY patient_id;

-- name: pivot_mixing_listed_and_found_values
-- category: pivot_without_in
-- ordered: yes
PIVOT readings ON year IN (2022, 2023), quarter USING count(*) GROUP BY patient_id
ORDER BY patient_id;

-- name: pivot_on_values_of_a_subquery
-- category: pivot_without_in
-- ordered: yes
PIVOT readings ON quarter IN (SELECT DISTINCT quarter FROM readings WHERE quarter <> 'Q2' ORDER BY 1)
USING sum(glucose) GROUP BY patient_id ORDER BY patient_id;

-- name: pivot_on_numbers_of_a_subquery
-- category: pivot_without_in
-- ordered: yes
PIVOT readings ON year IN (SELECT DISTINCT year FROM readings ORDER BY year DESC)
USING count(*) GROUP BY quarter ORDER BY quarter;

-- name: pivot_in_an_expression_subquery
-- category: pivot_without_in
SELECT (SELECT count(*) FROM (PIVOT readings ON quarter USING count(*) GROUP BY patient_id)) AS n;

-- name: pivot_of_a_cte_source
-- category: pivot_without_in
-- ordered: yes
WITH late AS (SELECT * FROM readings WHERE year > 2022)
PIVOT late ON quarter USING avg(glucose) GROUP BY year ORDER BY year;

-- name: pivot_in_a_union
-- category: pivot_without_in
-- ordered: yes
(PIVOT readings ON quarter USING count(*) GROUP BY year)
UNION ALL (PIVOT readings ON quarter USING max(glucose) GROUP BY year) ORDER BY ALL;

-- name: pivot_of_a_pivot
-- category: pivot_without_in
-- ordered: yes
PIVOT (PIVOT readings ON year USING count(*) GROUP BY patient_id, quarter) ON quarter
USING sum("2022") GROUP BY patient_id ORDER BY patient_id;

-- name: pivot_on_a_boolean_expression
-- category: pivot_without_in
-- ordered: yes
PIVOT readings ON glucose > 150 USING count(*) GROUP BY patient_id ORDER BY patient_id;

-------------------------------------------------------------------------------------------------
-- TIME WITH TIME ZONE
-------------------------------------------------------------------------------------------------

-- name: timetz_cast
-- category: timetz
SELECT '02:30:00+04'::TIMETZ AS t;

-- name: timetz_literal_with_fraction
-- category: timetz
SELECT TIMETZ '23:59:59.999999-11:30' AS t;

-- name: timetz_column_from_the_file
-- category: timetz
-- ordered: yes
SELECT id, tz_clock FROM typed ORDER BY id;

-- name: timetz_in_a_list
-- category: timetz
SELECT [TIMETZ '08:00:00+01', TIMETZ '09:00:00-03'] AS l;

-- name: timetz_in_a_struct
-- category: timetz
SELECT {'at': TIMETZ '12:00:00+00'} AS s;

-- name: timetz_from_a_timestamptz
-- category: timetz
SELECT TIMESTAMPTZ '2024-06-01 12:00:00+00'::TIMETZ AS t;

-- name: timetz_maximum
-- category: timetz
SELECT max(tz_clock) AS latest FROM typed;

-- name: timetz_filtered_and_sorted
-- category: timetz
-- ordered: yes
SELECT tz_clock FROM typed WHERE tz_clock > TIMETZ '06:00:00+00' ORDER BY tz_clock;

-- name: timetz_from_a_time
-- category: timetz
SELECT TIME '10:00:00'::TIMETZ AS t;

-- name: timetz_as_a_map_key
-- category: timetz
SELECT MAP {TIMETZ '01:00:00+01': 'one'} AS m;

-- name: timetz_extreme_offset
-- category: timetz
SELECT '10:00:00+15:59'::TIMETZ AS t;

-------------------------------------------------------------------------------------------------
-- CREATE SECURE VIEW in the database
-------------------------------------------------------------------------------------------------

-- name: secure_view_summed
-- category: secure_views
SELECT sum(total) AS total FROM patient_totals;

-- name: secure_view_all_rows
-- category: secure_views
-- ordered: yes
SELECT * FROM patient_totals ORDER BY patient_id;

-- name: secure_view_from_first
-- category: secure_views
-- ordered: yes
FROM north_patients ORDER BY patient_id;

-- name: secure_view_in_a_nested_schema
-- category: secure_views
SELECT * FROM clinic.archive.secure_intake;

-- name: view_over_secure_views
-- category: secure_views
-- ordered: yes
FROM totals_of_north ORDER BY patient_id;

-- name: secure_views_joined
-- category: secure_views
-- ordered: yes
SELECT n.name, t.total FROM north_patients n JOIN patient_totals t USING (patient_id) ORDER BY 1;

-- name: secure_view_filtered
-- category: secure_views
SELECT count(*) AS n FROM patient_totals WHERE total > 1000;

-- name: secure_view_described
-- category: secure_views
DESCRIBE patient_totals;

-- name: secure_view_in_a_cte
-- category: secure_views
WITH x AS (FROM north_patients) SELECT count(*) AS n FROM x;

-- name: secure_view_maximum
-- category: secure_views
SELECT max(readings) AS most FROM patient_totals;

-- name: secure_view_with_limit_zero
-- category: secure_views
SELECT * FROM patient_totals LIMIT 0;

-------------------------------------------------------------------------------------------------
-- Qualified and quoted names in DESCRIBE
-------------------------------------------------------------------------------------------------

-- name: describe_schema_qualified
-- category: describe_names
DESCRIBE clinic.visits;

-- name: describe_nested_schema
-- category: describe_names
DESCRIBE clinic.archive.visits;

-- name: describe_dotted_quoted_name
-- category: describe_names
DESCRIBE "a.b.c";

-- name: describe_quoted_schema_and_table
-- category: describe_names
DESCRIBE "Odd Schema"."Odd Table";

-- name: describe_main_qualified
-- category: describe_names
DESCRIBE main.patients;

-- name: describe_catalog_qualified
-- category: describe_names
DESCRIBE conformance.main.patients;

-- name: describe_quoted_plain_name
-- category: describe_names
DESCRIBE "patients";

-- name: show_schema_qualified
-- category: describe_names
SHOW clinic.visits;

-- name: describe_view_in_a_nested_schema
-- category: describe_names
DESCRIBE clinic.archive.intake;

-- name: desc_dotted_quoted_name
-- category: describe_names
DESC "a.b.c";

-- name: show_quoted_schema_and_table
-- category: describe_names
SHOW "Odd Schema"."Odd Table";

-- name: describe_table_keyword
-- category: describe_names
DESCRIBE TABLE clinic.visits;

-- name: describe_name_with_a_file_extension
-- category: describe_names
DESCRIBE exports.csv;

-- name: select_from_a_name_with_a_file_extension
-- category: describe_names
SELECT * FROM exports.csv;

-- name: select_from_a_dotted_quoted_name
-- category: describe_names
-- ordered: yes
SELECT * FROM "a.b.c" ORDER BY x;

-- name: summarize_a_dotted_quoted_name_counted
-- category: describe_names
SELECT count(*) AS columns FROM (SUMMARIZE "a.b.c");

-- name: describe_nested_schema_with_the_catalog
-- category: describe_names
DESCRIBE conformance.clinic.archive.visits;

-------------------------------------------------------------------------------------------------
-- FROM values(...)
-------------------------------------------------------------------------------------------------

-- name: values_function_one_value
-- category: from_values
SELECT * FROM values(1);

-- name: values_function_two_columns
-- category: from_values
SELECT * FROM values(1, 'a');

-- name: values_function_several_rows
-- category: from_values
SELECT * FROM values(1), (2), (3);

-- name: values_function_from_first_with_aliases
-- category: from_values
FROM values(1, 2) t(a, b);

-- name: values_function_in_an_expression
-- category: from_values
SELECT a + b AS total FROM values(1, 2) AS t(a, b);

-- name: values_function_joined
-- category: from_values
SELECT * FROM values(1) JOIN values(2) ON true;

-- name: values_function_counted
-- category: from_values
SELECT count(*) AS n FROM values(1), (2), (3);

-- name: values_function_with_null
-- category: from_values
SELECT * FROM values('x', NULL::INTEGER);

-- name: values_function_nested_values
-- category: from_values
SELECT * FROM values([1, 2], {'k': 'v'});

-- name: values_function_table_alias_star
-- category: from_values
SELECT v.* FROM values('a', 1) v(s, n);

-- name: values_without_parentheses
-- category: from_values
SELECT * FROM VALUES (1, 2);

-------------------------------------------------------------------------------------------------
-- Recursive CTE with USING KEY
-------------------------------------------------------------------------------------------------

-- name: using_key_counter
-- category: using_key
WITH RECURSIVE t(k, v) USING KEY (k) AS (
    SELECT 1, 1
    UNION
    SELECT k, v + 1 FROM t WHERE v < 5
)
SELECT * FROM t;

-- name: using_key_per_patient
-- category: using_key
-- ordered: yes
WITH RECURSIVE c(patient_id, n) USING KEY (patient_id) AS (
    SELECT patient_id, 0 FROM patients
    UNION
    SELECT patient_id, n + 1 FROM c WHERE n < patient_id
)
SELECT * FROM c ORDER BY patient_id;

-- name: using_key_shortest_paths
-- category: using_key
-- ordered: yes
WITH RECURSIVE edges(src, dst, w) AS (VALUES (1, 2, 4), (1, 3, 1), (3, 2, 1), (2, 4, 1)),
dist(node, d) USING KEY (node) AS (
    SELECT 1, 0
    UNION
    (SELECT e.dst, min(dist.d + e.w)
     FROM dist JOIN edges e ON e.src = dist.node
     LEFT JOIN recurring.dist r ON r.node = e.dst
     GROUP BY e.dst
     HAVING min(dist.d + e.w) < coalesce(min(r.d), 1000000))
)
SELECT * FROM dist ORDER BY node;

-- name: using_key_running_maximum
-- category: using_key
WITH RECURSIVE m(k, i, best) USING KEY (k) AS (
    SELECT 'all', 0, 0
    UNION
    SELECT k, i + 1, greatest(best, (i * 37) % 11) FROM m WHERE i < 10
)
SELECT * FROM m;

-- name: using_key_two_key_columns
-- category: using_key
-- ordered: yes
WITH RECURSIVE g(a, b, n) USING KEY (a, b) AS (
    SELECT x, y, 0 FROM (VALUES (1, 'p'), (2, 'q')) v(x, y)
    UNION
    SELECT a, b, n + a FROM g WHERE n < 6
)
SELECT * FROM g ORDER BY a, b;

-- name: using_key_union_all
-- category: using_key
WITH RECURSIVE t(k, v) USING KEY (k) AS (
    SELECT 1, 10
    UNION ALL
    SELECT k, v - 3 FROM t WHERE v > 0
)
SELECT * FROM t;

-- name: using_key_counted
-- category: using_key
WITH RECURSIVE t(k, v) USING KEY (k) AS (
    SELECT i, 0 FROM range(5) r(i)
    UNION
    SELECT k, v + 1 FROM t WHERE v < k
)
SELECT count(*) AS keys, sum(v) AS total FROM t;

-- name: using_key_with_a_string_key
-- category: using_key
-- ordered: yes
WITH RECURSIVE w(name, steps) USING KEY (name) AS (
    SELECT name, 0 FROM patients
    UNION
    SELECT name, steps + 1 FROM w WHERE steps < length(name)
)
SELECT * FROM w ORDER BY name;

-- name: using_key_reading_the_database
-- category: using_key
-- ordered: yes
WITH RECURSIVE best(patient_id, top) USING KEY (patient_id) AS (
    SELECT patient_id, 0 FROM patients
    UNION
    (SELECT b.patient_id, max(r.glucose)
     FROM best b JOIN readings r ON r.patient_id = b.patient_id AND r.glucose > b.top
     GROUP BY b.patient_id)
)
SELECT * FROM best ORDER BY patient_id;

-- name: using_key_in_a_subquery
-- category: using_key
SELECT max(v) AS v FROM (
    WITH RECURSIVE t(k, v) USING KEY (k) AS (SELECT 1, 1 UNION SELECT k, v * 2 FROM t WHERE v < 100)
    SELECT * FROM t
);

-------------------------------------------------------------------------------------------------
-- Escape strings E'...'
-------------------------------------------------------------------------------------------------

-- name: escape_string_quote
-- category: escape_strings
SELECT E'it\'s' AS s;

-- name: escape_string_newline
-- category: escape_strings
SELECT E'a\nb' AS s;

-- name: escape_string_tab
-- category: escape_strings
SELECT E'tab\there' AS s;

-- name: escape_string_backslash
-- category: escape_strings
SELECT e'back\\slash' AS s;

-- name: escape_string_hex_escapes
-- category: escape_strings
SELECT E'\x41\x42' AS s;

-- name: escape_string_length
-- category: escape_strings
SELECT length(E'a\tb') AS n;

-- name: escape_string_doubled_quote
-- category: escape_strings
SELECT E'it''s' AS s;

-- name: escape_string_in_a_filter
-- category: escape_strings
SELECT name FROM patients WHERE name = E'Ada';

-- name: escape_string_empty
-- category: escape_strings
SELECT E'' AS empty;

-- name: escape_string_concatenated
-- category: escape_strings
SELECT concat(E'line1\n', 'line2') AS s;

-- name: escape_string_semicolon
-- category: escape_strings
SELECT E'semi;colon' AS s;

-------------------------------------------------------------------------------------------------
-- Nested schemas (s1.s2.t, new in DuckDB 2.0)
-------------------------------------------------------------------------------------------------

-- name: nested_schema_all_rows
-- category: nested_schemas
-- ordered: yes
SELECT * FROM clinic.archive.visits ORDER BY visit_id;

-- name: nested_schema_parent_table
-- category: nested_schemas
-- ordered: yes
SELECT reason FROM clinic.visits ORDER BY visit_id;

-- name: nested_schema_joined
-- category: nested_schemas
SELECT count(*) AS n FROM clinic.archive.visits v JOIN patients p USING (patient_id);

-- name: nested_schema_view
-- category: nested_schemas
-- ordered: yes
FROM clinic.archive.intake ORDER BY patient_id;

-- name: nested_schema_aliased
-- category: nested_schemas
SELECT v.visit_id FROM clinic.archive.visits AS v WHERE v.closed > DATE '2020-01-01';

-- name: nested_schema_both_levels
-- category: nested_schemas
-- ordered: yes
SELECT a.visit_id AS recent, b.visit_id AS archived
FROM clinic.visits a, clinic.archive.visits b
WHERE a.patient_id = 1 AND b.patient_id = 3
ORDER BY 1;

-- name: nested_schema_in_a_cte
-- category: nested_schemas
WITH x AS (SELECT * FROM clinic.archive.visits) SELECT max(closed) AS last_closed FROM x;

-- name: nested_schema_scalar_subquery
-- category: nested_schemas
SELECT (SELECT count(*) FROM clinic.archive.visits) AS n;

-- name: nested_schema_listed
-- category: nested_schemas
SELECT schema_name FROM duckdb_schemas() WHERE parent_schema = 'clinic';

-- name: nested_schema_secure_view
-- category: nested_schemas
SELECT count(*) AS n FROM clinic.archive.secure_intake;

-- name: nested_schema_show_tables_from
-- category: nested_schemas
SHOW TABLES FROM clinic.archive;

-- name: nested_schema_with_the_catalog
-- category: nested_schemas
SELECT count(*) AS n FROM conformance.clinic.archive.visits;

-- name: nested_schema_table_named_like_an_extension
-- category: nested_schemas
-- ordered: yes
SELECT tbl.visit_id, clinic.archive.tbl.reason FROM clinic.archive.tbl ORDER BY visit_id;

-- name: nested_schema_summarized_count
-- category: nested_schemas
SELECT count(*) AS columns FROM (SUMMARIZE clinic.archive.visits);

-------------------------------------------------------------------------------------------------
-- JOIN BY (TYPE ...)
-------------------------------------------------------------------------------------------------

-- name: join_by_inner
-- category: join_by
SELECT * FROM (VALUES (1), (2)) l(a) JOIN BY (TYPE inner) (VALUES (2), (3)) r(b) ON a = b;

-- name: join_by_left
-- category: join_by
SELECT * FROM (VALUES (1), (2)) l(a) JOIN BY (TYPE left) (VALUES (2), (3)) r(b) ON a = b;

-- name: join_by_right
-- category: join_by
SELECT * FROM (VALUES (1), (2)) l(a) JOIN BY (TYPE right) (VALUES (2), (3)) r(b) ON a = b;

-- name: join_by_semi
-- category: join_by
SELECT * FROM (VALUES (1), (2)) l(a) JOIN BY (TYPE semi) (VALUES (2), (3)) r(b) ON a = b;

-- name: join_by_anti
-- category: join_by
SELECT * FROM (VALUES (1), (2)) l(a) JOIN BY (TYPE anti) (VALUES (2), (3)) r(b) ON a = b;

-- name: join_by_mark
-- category: join_by
SELECT * FROM (VALUES (1), (2)) l(a) JOIN BY (TYPE mark) (VALUES (2), (3)) r(b) ON a = b;

-- name: join_by_right_semi
-- category: join_by
SELECT * FROM (VALUES (1), (2)) l(a) JOIN BY (TYPE right_semi) (VALUES (2), (3)) r(b) ON a = b;

-- name: join_by_right_anti
-- category: join_by
SELECT * FROM (VALUES (1), (2)) l(a) JOIN BY (TYPE right_anti) (VALUES (2), (3)) r(b) ON a = b;

-- name: join_by_single
-- category: join_by
SELECT * FROM (VALUES (1), (2)) l(a) JOIN BY (TYPE single) (VALUES (2), (3)) r(b) ON a = b;

-- name: join_by_left_over_tables
-- category: join_by
-- ordered: yes
SELECT p.name, r.glucose
FROM patients p JOIN BY (TYPE left) readings r ON p.patient_id = r.patient_id AND r.glucose > 225
ORDER BY p.name, r.glucose;

-- name: join_by_semi_over_tables
-- category: join_by
-- ordered: yes
SELECT name FROM patients p JOIN BY (TYPE semi) clinic.visits v ON p.patient_id = v.patient_id
ORDER BY name;

-------------------------------------------------------------------------------------------------
-- List slices with a step
-------------------------------------------------------------------------------------------------

-- name: slice_step_whole_list
-- category: slice_step
SELECT [1, 2, 3, 4, 5][:-:2] AS s;

-- name: slice_step_with_bounds
-- category: slice_step
SELECT [1, 2, 3, 4, 5][1:5:2] AS s;

-- name: slice_step_from_the_second
-- category: slice_step
SELECT [1, 2, 3, 4, 5][2:-:2] AS s;

-- name: slice_step_backwards
-- category: slice_step
SELECT [1, 2, 3, 4, 5][:-:-1] AS s;

-- name: slice_step_negative_bounds
-- category: slice_step
SELECT [1, 2, 3, 4, 5][-1:1:-1] AS s;

-- name: slice_step_with_spaces
-- category: slice_step
SELECT [1, 2, 3, 4, 5][ : : 2] AS s;

-- name: slice_step_to_an_end
-- category: slice_step
SELECT [1, 2, 3, 4, 5][:3:2] AS s;

-- name: slice_step_of_three
-- category: slice_step
SELECT [1, 2, 3, 4, 5][1:-:3] AS s;

-- name: slice_step_on_a_column
-- category: slice_step
-- ordered: yes
SELECT patient_id, (list(glucose ORDER BY taken_at))[:-:4] AS every_fourth
FROM readings GROUP BY patient_id ORDER BY patient_id;

-- name: slice_step_without_an_alias
-- category: slice_step
SELECT ([10, 20, 30, 40, 50, 60])[2:5:2];

-- name: slice_step_in_a_filter
-- category: slice_step
SELECT count(*) AS n FROM patients WHERE len([1, 2, 3, 4][:-:2]) = 2;

-------------------------------------------------------------------------------------------------
-- Hex literals X'...'
-------------------------------------------------------------------------------------------------

-- name: hex_literal_as_text
-- category: hex_literals
SELECT X'41'::VARCHAR AS s;

-- name: hex_literal_blob
-- category: hex_literals
SELECT X'4142' AS b;

-- name: hex_literal_lower_case
-- category: hex_literals
SELECT x'00ff' AS b;

-- name: hex_literal_length
-- category: hex_literals
SELECT octet_length(X'010203') AS n;

-- name: hex_literal_empty
-- category: hex_literals
SELECT X'' AS empty;

-- name: hex_literal_word
-- category: hex_literals
SELECT X'48656C6C6F'::VARCHAR AS s;

-- name: hex_literal_hex_again
-- category: hex_literals
SELECT hex(X'CAFE') AS h;

-- name: hex_literal_compared
-- category: hex_literals
SELECT X'0A' = '\x0A'::BLOB AS same;

-- name: hex_literal_in_a_list
-- category: hex_literals
SELECT [X'01', X'02'] AS l;

-- name: hex_literal_digest
-- category: hex_literals
SELECT md5(X'41') AS m;

-------------------------------------------------------------------------------------------------
-- TIME_NS
-------------------------------------------------------------------------------------------------

-- name: time_ns_literal
-- category: time_ns
SELECT TIME_NS '12:00:00.123456789' AS t;

-- name: time_ns_smallest_step
-- category: time_ns
SELECT '00:00:00.000000001'::TIME_NS AS t;

-- name: time_ns_column_from_the_file
-- category: time_ns
-- ordered: yes
SELECT id, ns_clock FROM typed ORDER BY id;

-- name: time_ns_maximum
-- category: time_ns
SELECT max(ns_clock) AS latest FROM typed;

-- name: time_ns_in_a_list
-- category: time_ns
SELECT list(ns_clock ORDER BY id) AS l FROM typed;

-- name: time_ns_in_a_struct
-- category: time_ns
SELECT {'t': ns_clock} AS s FROM typed WHERE id = 1;

-- name: time_ns_to_time
-- category: time_ns
-- ordered: yes
SELECT ns_clock::TIME AS t FROM typed ORDER BY id;

-- name: time_ns_from_time
-- category: time_ns
SELECT TIME '01:02:03'::TIME_NS AS t;

-- name: time_ns_filtered
-- category: time_ns
SELECT ns_clock FROM typed WHERE ns_clock < TIME_NS '01:00:00';

-- name: time_ns_last_nanosecond
-- category: time_ns
SELECT '23:59:59.999999999'::TIME_NS AS t;

-------------------------------------------------------------------------------------------------
-- TIMESTAMPTZ_NS
-------------------------------------------------------------------------------------------------

-- name: timestamptz_ns_literal
-- category: timestamptz_ns
SELECT TIMESTAMPTZ_NS '2024-01-01 12:00:00.123456789+02' AS t;

-- name: timestamptz_ns_column_from_the_file
-- category: timestamptz_ns
-- ordered: yes
SELECT id, ns_instant FROM typed ORDER BY id;

-- name: timestamptz_ns_smallest_step
-- category: timestamptz_ns
SELECT '1970-01-01 00:00:00.000000001+00'::TIMESTAMPTZ_NS AS t;

-- name: timestamptz_ns_maximum
-- category: timestamptz_ns
SELECT max(ns_instant) AS latest FROM typed;

-- name: timestamptz_ns_in_a_list
-- category: timestamptz_ns
SELECT [ns_instant] AS l FROM typed WHERE id = 1;

-- name: timestamptz_ns_to_timestamptz
-- category: timestamptz_ns
-- ordered: yes
SELECT ns_instant::TIMESTAMPTZ AS t FROM typed ORDER BY id;

-- name: timestamptz_ns_to_date
-- category: timestamptz_ns
-- ordered: yes
SELECT ns_instant::DATE AS d FROM typed ORDER BY id;

-- name: timestamptz_ns_from_timestamp_ns
-- category: timestamptz_ns
SELECT TIMESTAMP_NS '2024-01-01 00:00:00.5'::TIMESTAMPTZ_NS AS t;

-- name: timestamptz_ns_in_a_struct
-- category: timestamptz_ns
SELECT {'at': ns_instant} AS s FROM typed WHERE id = 4;

-- name: timestamptz_ns_filtered
-- category: timestamptz_ns
SELECT ns_instant FROM typed WHERE ns_instant > TIMESTAMPTZ_NS '2000-01-01 00:00:00+00';

-------------------------------------------------------------------------------------------------
-- Tagged dollar quotes
-------------------------------------------------------------------------------------------------

-- name: dollar_quote_duck_tag
-- category: dollar_quotes
SELECT $🦆$duck$🦆$ AS s;

-- name: dollar_quote_with_an_apostrophe
-- category: dollar_quotes
SELECT $tag$it's$tag$ AS s;

-- name: dollar_quote_holding_another_tag
-- category: dollar_quotes
SELECT $a$ $b$ $a$ AS s;

-- name: dollar_quote_semicolon
-- category: dollar_quotes
SELECT $x$semi;colon$x$ AS s;

-- name: dollar_quote_two_lines
-- category: dollar_quotes
SELECT $body$line1
line2$body$ AS s;

-- name: dollar_quote_length
-- category: dollar_quotes
SELECT length($t$abc$t$) AS n;

-- name: dollar_quote_concatenated
-- category: dollar_quotes
SELECT $q$a$q$ || $r$b$r$ AS s;

-- name: dollar_quote_in_a_filter
-- category: dollar_quotes
SELECT patient_id FROM patients WHERE name = $n$Ada$n$;

-- name: dollar_quote_underscore_tag
-- category: dollar_quotes
SELECT $_$underscore$_$ AS s;

-- name: dollar_quote_tag_with_digits
-- category: dollar_quotes
SELECT $T1$digits$T1$ AS s;

-- name: dollar_quote_accented_tag
-- category: dollar_quotes
SELECT $é$accent$é$ AS s;

-------------------------------------------------------------------------------------------------
-- CALL of a table function
-------------------------------------------------------------------------------------------------

-- name: call_range
-- category: call
CALL range(10);

-- name: call_range_with_bounds
-- category: call
CALL range(2, 5);

-- name: call_generate_series
-- category: call
CALL generate_series(1, 3);

-- name: call_pragma_table_info
-- category: call
CALL pragma_table_info('patients');

-- name: call_pragma_table_info_bare_name
-- category: call
CALL pragma_table_info(patients);

-- name: call_repeat
-- category: call
CALL repeat('x', 2);

-- name: call_unnest
-- category: call
CALL unnest([1, 2]);

-- name: call_stored_table_macro
-- category: call
CALL squares(3);

-- name: call_stored_table_macro_named_argument
-- category: call
CALL top_readings(n := 2);

-- name: call_empty_range
-- category: call
CALL range(0);

-- name: call_range_of_timestamps
-- category: call
CALL range(DATE '2024-01-01', DATE '2024-01-03', INTERVAL 1 DAY);

-- name: call_lower_case
-- category: call
call range(3);

-------------------------------------------------------------------------------------------------
-- Numbers with underscores (`SELECT 1__2` is 1 named `__2`)
-------------------------------------------------------------------------------------------------

-- name: digits_double_underscore
-- category: digit_separators
SELECT 1__2;

-- name: digits_thousands_separator
-- category: digit_separators
SELECT 1_000 AS n;

-- name: digits_two_double_underscores
-- category: digit_separators
SELECT 1__2__3;

-- name: digits_separator_then_alias
-- category: digit_separators
SELECT 1_000__a;

-- name: digits_trailing_double_underscore
-- category: digit_separators
SELECT 10__;

-- name: digits_decimal_then_alias
-- category: digit_separators
SELECT 1.5__x;

-- name: digits_separated_in_arithmetic
-- category: digit_separators
SELECT 1_000_000 * 2 AS n;

-- name: digits_separated_exponent
-- category: digit_separators
SELECT 1e1_0;

-- name: digits_two_columns
-- category: digit_separators
SELECT 1__2, 2_0__1;

-- name: digits_separated_in_range
-- category: digit_separators
SELECT count(*) AS n FROM range(1_000);

-------------------------------------------------------------------------------------------------
-- DESCRIBE TABLES and the other table listings
-------------------------------------------------------------------------------------------------

-- name: describe_tables
-- category: describe_tables
DESCRIBE TABLES;

-- name: describe_tables_lower_case
-- category: describe_tables
describe tables;

-- name: describe_tables_quoted
-- category: describe_tables
DESCRIBE "tables";

-- name: show_tables
-- category: describe_tables
SHOW TABLES;

-- name: show_all_tables
-- category: describe_tables
SHOW ALL TABLES;

-- name: describe_alone
-- category: describe_tables
DESCRIBE;

-- name: describe_tables_as_a_subquery
-- category: describe_tables
SELECT * FROM (DESCRIBE TABLES) WHERE name LIKE 'p%';

-- name: show_tables_sorted
-- category: describe_tables
-- ordered: yes
FROM (SHOW TABLES) ORDER BY name DESC;

-- name: show_all_tables_counted
-- category: describe_tables
SELECT count(*) AS n FROM (SHOW ALL TABLES);

-- name: show_all_tables_names
-- category: describe_tables
-- ordered: yes
SELECT database, schema, name FROM (SHOW ALL TABLES) ORDER BY ALL;

-- name: show_tables_from_a_schema
-- category: describe_tables
SHOW TABLES FROM clinic;

-------------------------------------------------------------------------------------------------
-- INTERVAL across its whole range
-------------------------------------------------------------------------------------------------

-- name: interval_most_hours
-- category: interval_range
SELECT INTERVAL '2562047788 hours' AS i;

-- name: interval_most_negative_hours
-- category: interval_range
SELECT INTERVAL '-2562047788 hours' AS i;

-- name: interval_three_million_hours
-- category: interval_range
SELECT to_hours(3000000) AS i;

-- name: interval_column_from_the_file
-- category: interval_range
-- ordered: yes
SELECT id, span FROM typed ORDER BY id;

-- name: interval_largest_microseconds
-- category: interval_range
SELECT to_microseconds(9223372036854775807) AS i;

-- name: interval_smallest_microseconds
-- category: interval_range
SELECT to_microseconds(-9223372036854775807) AS i;

-- name: interval_long_in_a_list
-- category: interval_range
SELECT [INTERVAL '3000000 hours', INTERVAL 1 SECOND] AS l;

-- name: interval_long_in_a_struct
-- category: interval_range
SELECT {'span': to_hours(-3000000)} AS s;

-- name: interval_multiplied_past_292_years
-- category: interval_range
SELECT to_hours(1000000) * 4 AS total;

-- name: interval_every_component
-- category: interval_range
SELECT INTERVAL '1 year 2 months 3 days 04:05:06.789' AS i;

-- name: interval_negated_long
-- category: interval_range
SELECT -INTERVAL '2562047788 hours' AS i, INTERVAL '0 seconds' AS zero;

-- name: interval_maximum_of_a_column
-- category: interval_range
SELECT max(span) AS longest, min(span) AS shortest FROM typed;

-------------------------------------------------------------------------------------------------
-- JSON null against SQL NULL
-------------------------------------------------------------------------------------------------

-- name: json_null_extracted
-- category: json_null
SELECT json_extract('{"foo": null}', '$.foo') AS j;

-- name: json_null_cast
-- category: json_null
SELECT 'null'::JSON AS j;

-- name: json_null_array_element
-- category: json_null
SELECT json_extract('[1, null]', '$[1]') AS j;

-- name: json_column_from_the_file
-- category: json_null
-- ordered: yes
SELECT id, doc FROM typed ORDER BY id;

-- name: json_null_member_by_arrow
-- category: json_null
SELECT doc -> '$.note' AS note FROM typed WHERE id = 1;

-- name: json_missing_member
-- category: json_null
SELECT json_extract(doc, '$.missing') AS m FROM typed WHERE id = 1;

-- name: json_null_and_missing_in_a_list
-- category: json_null
SELECT json_extract('{"a": null}', ['$.a', '$.b']) AS l;

-- name: json_object_with_a_null
-- category: json_null
SELECT json_object('k', NULL) AS j;

-- name: json_array_with_a_null
-- category: json_null
SELECT json_array(1, NULL) AS j;

-- name: json_function_of_null_text
-- category: json_null
SELECT json('null') AS j;

-- name: json_null_inside_a_struct
-- category: json_null
SELECT {'j': 'null'::JSON} AS s;

-- name: json_sql_null_beside_json_null
-- category: json_null
SELECT NULL::JSON AS sql_null, 'null'::JSON AS json_null;

-------------------------------------------------------------------------------------------------
-- Unnamed tuples
-------------------------------------------------------------------------------------------------

-- name: tuple_of_two
-- category: unnamed_tuples
SELECT (1, 'a') AS t;

-- name: tuple_by_row
-- category: unnamed_tuples
SELECT row(1, 2, 3) AS t;

-- name: tuple_of_columns
-- category: unnamed_tuples
-- ordered: yes
SELECT (patient_id, name) AS t FROM patients ORDER BY patient_id;

-- name: tuples_in_a_list
-- category: unnamed_tuples
SELECT [(1, 'a'), (2, 'b')] AS l;

-- name: tuple_in_a_struct
-- category: unnamed_tuples
SELECT {'inner': (1, 2)} AS s;

-- name: tuple_with_a_null
-- category: unnamed_tuples
SELECT row(NULL::INTEGER, 1) AS t;

-- name: tuple_inside_a_tuple
-- category: unnamed_tuples
SELECT (1, (2, 3)) AS nested;

-- name: tuple_of_a_date_and_a_text
-- category: unnamed_tuples
SELECT row(DATE '2024-01-31', 'x') AS t;

-- name: tuple_maximum
-- category: unnamed_tuples
SELECT max((glucose, patient_id)) AS top FROM readings;

-- name: tuple_of_one
-- category: unnamed_tuples
SELECT row('x') AS t;

-- name: tuple_without_an_alias
-- category: unnamed_tuples
SELECT (1, 2);

-------------------------------------------------------------------------------------------------
-- What a plan read through json_serialize_plan refused: aggregate states, BIT and BIGNUM
-- constants, USING KEY with aggregates, materialized and lateral CTEs; and method calls
-------------------------------------------------------------------------------------------------

-- name: aggregate_state_finalized_per_patient
-- category: aggregate_states
-- ordered: yes
SELECT patient_id, finalize(avg(glucose) EXPORT_STATE) AS mean FROM readings GROUP BY patient_id ORDER BY patient_id;

-- name: aggregate_state_combined_across_years
-- category: aggregate_states
SELECT finalize(combine(a.s, b.s)) AS lowest FROM (SELECT min(glucose) EXPORT_STATE AS s FROM readings WHERE year = 2022) a, (SELECT min(glucose) EXPORT_STATE AS s FROM readings WHERE year = 2024) b;

-- name: aggregate_state_type_name
-- category: aggregate_states
SELECT typeof(sum(glucose) EXPORT_STATE) AS t FROM readings;

-- name: aggregate_state_count_finalized
-- category: aggregate_states
SELECT finalize(count(*) EXPORT_STATE) AS n FROM readings;

-- name: aggregate_state_quantile
-- category: aggregate_states
SELECT finalize(approx_quantile(glucose, 0.5) EXPORT_STATE) AS median FROM readings;

-- name: aggregate_state_grouped_combine
-- category: aggregate_states
SELECT finalize(combine(s, s)) AS doubled FROM (SELECT sum(glucose) EXPORT_STATE AS s FROM readings WHERE patient_id = 1);

-- name: aggregate_state_value_returned
-- category: aggregate_states
SELECT sum(glucose) EXPORT_STATE AS s FROM readings;

-- name: aggregate_state_list
-- category: aggregate_states
SELECT finalize(list(patient_id ORDER BY patient_id) EXPORT_STATE) AS ids FROM patients;

-- name: aggregate_state_string_agg
-- category: aggregate_states
SELECT finalize(string_agg(name, ',' ORDER BY name) EXPORT_STATE) AS names FROM patients;

-- name: aggregate_state_stddev
-- category: aggregate_states
SELECT round(finalize(stddev_samp(glucose) EXPORT_STATE), 6) AS sd FROM readings;

-- name: bit_constant
-- category: bit_bignum
SELECT '101010'::BIT AS b;

-- name: bit_functions
-- category: bit_bignum
SELECT bit_count('1101'::BIT) AS ones, get_bit('0110'::BIT, 1) AS second, bit_length('1011'::BIT) AS len;

-- name: bit_padded
-- category: bit_bignum
SELECT bitstring('1010', 8) AS padded;

-- name: bit_operators
-- category: bit_bignum
SELECT ('1100'::BIT & '1010'::BIT) AS a, ('1100'::BIT | '1010'::BIT) AS o, xor('1100'::BIT, '1010'::BIT) AS x;

-- name: bit_from_integer
-- category: bit_bignum
SELECT 5::BIT AS five;

-- name: bignum_literal
-- category: bit_bignum
SELECT 4832904823908104981209840981240981277::BIGNUM AS n;

-- name: bignum_type_of_a_huge_literal
-- category: bit_bignum
SELECT typeof(4832904823908104981209840981240981277480948309480934809348) AS t;

-- name: bignum_arithmetic
-- category: bit_bignum
SELECT 99999999999999999999999999999999999999999::BIGNUM + 1 AS n;

-- name: bignum_comparison
-- category: bit_bignum
SELECT 12345678901234567890123456789012345678901::BIGNUM > 1::BIGNUM AS bigger;

-- name: bignum_in_a_list
-- category: bit_bignum
SELECT [1::BIGNUM, 100000000000000000000000000000000000000000::BIGNUM] AS l;

-- name: using_key_with_aggregates
-- category: using_key
WITH RECURSIVE t(k, v) USING KEY (k, max(v)) AS (SELECT 1, 1 UNION SELECT k, v + 1 FROM t WHERE v < 5) SELECT * FROM t;

-- name: table_in_out_summary
-- category: table_functions
SELECT * FROM summary((SELECT glucose FROM readings WHERE patient_id = 1 ORDER BY glucose LIMIT 3));

-- name: cte_materialized_per_patient
-- category: ctes_and_lateral
-- ordered: yes
SELECT * FROM (WITH m AS MATERIALIZED (SELECT patient_id, avg(glucose) AS mean FROM readings GROUP BY patient_id) SELECT * FROM m) ORDER BY patient_id;

-- name: cte_materialized_twice
-- category: ctes_and_lateral
-- ordered: yes
WITH m AS MATERIALIZED (SELECT patient_id, count(*) AS n FROM readings GROUP BY patient_id) SELECT a.patient_id, a.n + b.n AS twice FROM m a JOIN m b USING (patient_id) ORDER BY 1;

-- name: cte_not_materialized
-- category: ctes_and_lateral
-- ordered: yes
WITH m AS NOT MATERIALIZED (SELECT patient_id, max(glucose) AS top FROM readings GROUP BY patient_id) SELECT * FROM m WHERE top > 200 ORDER BY 1;

-- name: cte_materialized_in_a_subquery
-- category: ctes_and_lateral
-- ordered: yes
SELECT patient_id FROM patients WHERE patient_id IN (WITH m AS MATERIALIZED (SELECT DISTINCT patient_id FROM readings WHERE year = 2023) SELECT * FROM m) ORDER BY 1;

-- name: cte_materialized_nested
-- category: ctes_and_lateral
-- ordered: yes
WITH a AS MATERIALIZED (SELECT patient_id, glucose FROM readings), b AS MATERIALIZED (SELECT patient_id, min(glucose) AS low FROM a GROUP BY 1) SELECT * FROM b ORDER BY 1;

-- name: lateral_join_count
-- category: ctes_and_lateral
-- ordered: yes
SELECT p.patient_id, l.n FROM patients p, LATERAL (SELECT count(*) AS n FROM readings r WHERE r.patient_id = p.patient_id) l ORDER BY 1;

-- name: lateral_unnest_list
-- category: ctes_and_lateral
-- ordered: yes
SELECT p.name, u.x FROM patients p, LATERAL unnest([p.patient_id, p.patient_id * 10]) u(x) ORDER BY 1, 2;

-- name: lateral_top_reading
-- category: ctes_and_lateral
-- ordered: yes
SELECT p.name, t.glucose FROM patients p, LATERAL (SELECT glucose FROM readings r WHERE r.patient_id = p.patient_id ORDER BY glucose DESC LIMIT 1) t ORDER BY 1;

-- name: lateral_left_join
-- category: ctes_and_lateral
-- ordered: yes
SELECT p.name, t.reason FROM patients p LEFT JOIN LATERAL (SELECT reason FROM clinic.visits v WHERE v.patient_id = p.patient_id ORDER BY visit_id LIMIT 1) t ON true ORDER BY 1;

-- name: lateral_range
-- category: ctes_and_lateral
-- ordered: yes
SELECT p.patient_id, g.i FROM patients p, LATERAL range(p.patient_id) g(i) ORDER BY 1, 2;

-- name: method_call_on_a_column
-- category: method_calls
-- ordered: yes
SELECT name.upper() AS n FROM patients ORDER BY 1;

-- name: method_call_on_a_qualified_column
-- category: method_calls
-- ordered: yes
SELECT p.name.lower() AS n FROM patients p ORDER BY 1;

-- name: method_call_chain
-- category: method_calls
-- ordered: yes
SELECT p.name.lower().length() AS n FROM patients p ORDER BY 1;

-- name: method_call_on_a_literal
-- category: method_calls
SELECT 'duck'.upper() AS s;

-- name: method_call_on_a_list
-- category: method_calls
SELECT [1, 2, 3].list_transform(x -> x * 2) AS l;

-- name: method_call_with_arguments
-- category: method_calls
-- ordered: yes
SELECT name.replace('a', 'o') AS n FROM patients ORDER BY 1;

-- name: method_call_on_a_date
-- category: method_calls
-- ordered: yes
SELECT born.year() AS y FROM patients ORDER BY 1;

-- name: method_call_in_a_where
-- category: method_calls
-- ordered: yes
SELECT patient_id FROM patients WHERE name.lower().starts_with('b') ORDER BY 1;

-- name: method_call_then_another
-- category: method_calls
-- ordered: yes
SELECT name.left(1).lower() AS n FROM patients ORDER BY 1;

-- name: method_call_on_an_aggregate
-- category: method_calls
SELECT sum(glucose).abs() AS s FROM readings;
