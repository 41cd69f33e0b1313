//! Every DuckDB type comes back as faithful JSON, or is refused with a hint to cast it.

use serde_json::json;

use super::*;

/// Each case: (SQL expression, DuckDB type string, expected JSON).
fn conversion_cases() -> Vec<(&'static str, &'static str, Json)> {
    vec![
        ("true", "BOOLEAN", json!(true)),
        ("(-7)::TINYINT", "TINYINT", json!(-7)),
        ("300::SMALLINT", "SMALLINT", json!(300)),
        ("(-70000)::INTEGER", "INTEGER", json!(-70000)),
        (
            "9007199254740991::BIGINT",
            "BIGINT",
            json!(9007199254740991i64),
        ),
        (
            "9007199254740992::BIGINT",
            "BIGINT",
            json!("9007199254740992"),
        ),
        (
            "(-9223372036854775808)::BIGINT",
            "BIGINT",
            json!("-9223372036854775808"),
        ),
        ("255::UTINYINT", "UTINYINT", json!(255)),
        ("65535::USMALLINT", "USMALLINT", json!(65535)),
        ("4294967295::UINTEGER", "UINTEGER", json!(4294967295u32)),
        (
            "18446744073709551615::UBIGINT",
            "UBIGINT",
            json!("18446744073709551615"),
        ),
        ("42::UBIGINT", "UBIGINT", json!(42)),
        (
            "170141183460469231731687303715884105727::HUGEINT",
            "HUGEINT",
            json!("170141183460469231731687303715884105727"),
        ),
        ("(-5)::HUGEINT", "HUGEINT", json!(-5)),
        (
            "[340282366920938463463374607431768211455::UHUGEINT, 3::UHUGEINT]",
            "UHUGEINT[]",
            json!(["340282366920938463463374607431768211455", 3]),
        ),
        (
            "340282366920938463463374607431768211455::UHUGEINT",
            "UHUGEINT",
            json!("340282366920938463463374607431768211455"),
        ),
        ("1.5::FLOAT", "FLOAT", json!(1.5)),
        ("0.1::FLOAT", "FLOAT", json!(0.1)),
        ("0.1::DOUBLE", "DOUBLE", json!(0.1)),
        ("'NaN'::DOUBLE", "DOUBLE", json!("NaN")),
        ("'inf'::DOUBLE", "DOUBLE", json!("Infinity")),
        ("'-inf'::FLOAT", "FLOAT", json!("-Infinity")),
        ("123.45::DECIMAL(10,2)", "DECIMAL(10,2)", json!("123.45")),
        ("(-0.05)::DECIMAL(4,3)", "DECIMAL(4,3)", json!("-0.050")),
        (
            "12345678901234567890.123456789012345678::DECIMAL(38,18)",
            "DECIMAL(38,18)",
            json!("12345678901234567890.123456789012345678"),
        ),
        ("12345::DECIMAL(38,0)", "DECIMAL(38,0)", json!("12345")),
        (
            "[12345::DECIMAL(38,0)]",
            "DECIMAL(38,0)[]",
            json!(["12345"]),
        ),
        ("[7::HUGEINT]", "HUGEINT[]", json!([7])),
        ("'héllo'", "VARCHAR", json!("héllo")),
        ("'\\x00\\xFFab'::BLOB", "BLOB", json!("AP9hYg==")),
        ("DATE '2024-02-29'", "DATE", json!("2024-02-29")),
        (
            "DATE '0044-03-15' - INTERVAL 100 YEAR",
            "TIMESTAMP",
            json!("-0056-03-15T00:00:00"),
        ),
        ("'infinity'::DATE", "DATE", json!("infinity")),
        ("TIME '13:45:00.5'", "TIME", json!("13:45:00.5")),
        (
            "TIMESTAMP '2024-01-31 13:45:00.123456'",
            "TIMESTAMP",
            json!("2024-01-31T13:45:00.123456"),
        ),
        (
            "TIMESTAMP_S '2024-01-31 13:45:07'",
            "TIMESTAMP_S",
            json!("2024-01-31T13:45:07"),
        ),
        (
            "TIMESTAMP_MS '2024-01-31 13:45:07.25'",
            "TIMESTAMP_MS",
            json!("2024-01-31T13:45:07.25"),
        ),
        (
            "TIMESTAMP_NS '2024-01-31 13:45:07.123456789'",
            "TIMESTAMP_NS",
            json!("2024-01-31T13:45:07.123456789"),
        ),
        (
            "TIMESTAMPTZ '2024-01-31 13:45:00+02'",
            "TIMESTAMP WITH TIME ZONE",
            json!("2024-01-31T11:45:00Z"),
        ),
        ("'infinity'::TIMESTAMP", "TIMESTAMP", json!("infinity")),
        ("'-infinity'::TIMESTAMP", "TIMESTAMP", json!("-infinity")),
        (
            "INTERVAL '1 year 2 months 3 days 04:05:06.5'",
            "INTERVAL",
            json!("P1Y2M3DT4H5M6.5S"),
        ),
        ("INTERVAL '-1 month'", "INTERVAL", json!("P-1M")),
        (
            "'123e4567-e89b-12d3-a456-426614174000'::UUID",
            "UUID",
            json!("123e4567-e89b-12d3-a456-426614174000"),
        ),
        ("'b'::ENUM('a', 'b')", "ENUM('a', 'b')", json!("b")),
        ("[1, 2, NULL]", "INTEGER[]", json!([1, 2, null])),
        ("[[1], []]", "INTEGER[][]", json!([[1], []])),
        ("[1, 2, 3]::INTEGER[3]", "INTEGER[3]", json!([1, 2, 3])),
        (
            "{'a': 1, 'B c': 'x', 'n': {'d': DATE '2024-01-01'}}",
            "STRUCT(a INTEGER, \"B c\" VARCHAR, n STRUCT(d DATE))",
            json!({"a": 1, "B c": "x", "n": {"d": "2024-01-01"}}),
        ),
        (
            "MAP {'k1': 1, 'k2': 2}",
            "MAP(VARCHAR, INTEGER)",
            json!([{"key": "k1", "value": 1}, {"key": "k2", "value": 2}]),
        ),
        (
            "MAP {[1, 2]: 'list key'}",
            "MAP(INTEGER[], VARCHAR)",
            json!([{"key": [1, 2], "value": "list key"}]),
        ),
        (
            "union_value(num := 2)::UNION(num INTEGER, str VARCHAR)",
            "UNION(num INTEGER, str VARCHAR)",
            json!(2),
        ),
        (
            "union_value(str := 'x')::UNION(num INTEGER, str VARCHAR)",
            "UNION(num INTEGER, str VARCHAR)",
            json!("x"),
        ),
        // The member's type decides the rendering where the value's shape fits one member.
        (
            "union_value(t := TIMESTAMPTZ '2024-01-01 00:00:00+00')::UNION(t TIMESTAMPTZ, s VARCHAR)",
            "UNION(t TIMESTAMP WITH TIME ZONE, s VARCHAR)",
            json!("2024-01-01T00:00:00Z"),
        ),
        (
            "union_value(j := '{\"a\": [1, 2]}'::JSON)::UNION(j JSON, n INTEGER)",
            "UNION(j JSON, n INTEGER)",
            json!("{\"a\": [1, 2]}"),
        ),
        (
            "union_value(b := '101'::BIT)::UNION(b BIT, n INTEGER)",
            "UNION(b BIT, n INTEGER)",
            json!("101"),
        ),
        (
            "union_value(d := 1.25::DECIMAL(10, 2))::UNION(d DECIMAL(10,2), s VARCHAR)",
            "UNION(d DECIMAL(10,2), s VARCHAR)",
            json!("1.25"),
        ),
        // Two members of one shape that render differently: the value cannot say which is set.
        (
            "union_value(tz := TIMESTAMPTZ '2024-01-01 00:00:00+00')::UNION(t TIMESTAMP, tz TIMESTAMPTZ)",
            "UNION(t TIMESTAMP, tz TIMESTAMP WITH TIME ZONE)",
            json!("2024-01-01T00:00:00"),
        ),
        // JSON comes back as its text, as DuckDB's clients return it: a JSON null is the text
        // `null`, distinct from SQL NULL, and no number loses a digit.
        (
            "'{\"a\": [1, 2.5, null], \"b\": {\"c\": \"d\"}}'::JSON",
            "JSON",
            json!("{\"a\": [1, 2.5, null], \"b\": {\"c\": \"d\"}}"),
        ),
        ("['{\"x\":1}'::JSON]", "JSON[]", json!(["{\"x\":1}"])),
        (
            "json_extract('{\"foo\": null}', '$.foo')",
            "JSON",
            json!("null"),
        ),
        ("json_extract('{\"foo\": 1}', '$.bar')", "JSON", json!(null)),
        (
            "'{\"id\": 12345678901234567890}'::JSON",
            "JSON",
            json!("{\"id\": 12345678901234567890}"),
        ),
        // Unnamed structs (tuples) are positional, as DuckDB's clients hand them over.
        ("(1, 'a')", "TUPLE(INTEGER, VARCHAR)", json!([1, "a"])),
        (
            "row(1, [2, 3])",
            "TUPLE(INTEGER, INTEGER[])",
            json!([1, [2, 3]]),
        ),
        // INTERVAL across its whole range: beyond about 292 years the Arrow export wraps.
        (
            "INTERVAL '2562047788 hours'",
            "INTERVAL",
            json!("PT2562047788H"),
        ),
        (
            "INTERVAL '178956970 years 7 months 2147483647 days'",
            "INTERVAL",
            json!("P178956970Y7M2147483647D"),
        ),
        ("-INTERVAL '1 day 2 hours'", "INTERVAL", json!("P-1DT-2H")),
        (
            "[INTERVAL '1 microsecond']",
            "INTERVAL[]",
            json!(["PT0.000001S"]),
        ),
        // Types the client library cannot decode, rendered by DuckDB.
        (
            "TIMETZ '13:45:00+02'",
            "TIME WITH TIME ZONE",
            json!("13:45:00+02"),
        ),
        (
            "TIME_NS '13:45:00.123456789'",
            "TIME_NS",
            json!("13:45:00.123456789"),
        ),
        (
            "TIMESTAMPTZ_NS '2024-07-01 12:00:00.123456789+00'",
            "TIMESTAMPTZ_NS",
            json!("2024-07-01T12:00:00.123456789+00:00"),
        ),
        ("1::VARIANT", "VARIANT", json!(1)),
        ("'a'::VARIANT", "VARIANT", json!("a")),
        ("[1, 2]::VARIANT", "VARIANT", json!([1, 2])),
        ("{'k': 'v'}::VARIANT", "VARIANT", json!({"k": "v"})),
        (
            "12345678901234567890::VARIANT",
            "VARIANT",
            json!("12345678901234567890"),
        ),
        ("[1::VARIANT, 'x'::VARIANT]", "VARIANT[]", json!([1, "x"])),
        (
            "{'v': 2::VARIANT, 't': TIMETZ '01:00:00+00'}",
            "STRUCT(v VARIANT, t TIME WITH TIME ZONE)",
            json!({"v": 2, "t": "01:00:00+00"}),
        ),
        // Untyped NULLs inside containers.
        ("[NULL]", "\"NULL\"[]", json!([null])),
        ("{'a': NULL}", "STRUCT(a \"NULL\")", json!({"a": null})),
        ("MAP()", "MAP(\"NULL\", \"NULL\")", json!([])),
        ("([])[1:3]", "\"NULL\"[]", json!([])),
        (
            "{'t': TIMESTAMPTZ '2024-01-01 00:00:00+00'}",
            "STRUCT(t TIMESTAMP WITH TIME ZONE)",
            json!({"t": "2024-01-01T00:00:00Z"}),
        ),
        ("NULL::INTEGER", "INTEGER", json!(null)),
        ("NULL", "\"NULL\"", json!(null)),
    ]
}

#[test]
fn every_duckdb_type_converts_to_faithful_json() {
    let dir = TempDir::new("types");
    let db = small_db(&dir);
    let mut engine = attached(&db, "256MB");
    let mut failures = Vec::new();
    for (expr, want_type, want_json) in conversion_cases() {
        let sql = format!("SELECT {expr} AS v");
        match engine.run_query(&CheckedQuery::with_checks_off(&sql), 10, 1 << 20) {
            Ok(result) => {
                let got_type = &result.columns[0].data_type;
                let got = &result.rows[0][0];
                if got_type != want_type || got != &want_json {
                    failures.push(format!(
                        "{expr}: got {got_type} {got}, want {want_type} {want_json}"
                    ));
                }
            }
            Err(e) => failures.push(format!("{expr}: error {e:?}")),
        }
    }
    assert!(
        failures.is_empty(),
        "conversion mismatches:\n{}",
        failures.join("\n")
    );
}

#[test]
fn bit_and_bignum_come_back_as_text() {
    let dir = TempDir::new("bits");
    let db = small_db(&dir);
    let mut engine = attached(&db, "256MB");
    let (types, row) = one_row(
        &mut engine,
        "SELECT '0101'::BIT AS b, 123456789012345678901234567890123456789012::BIGNUM AS n",
    );
    assert_eq!(types[0].1, "BIT");
    assert_eq!(row[0], json!("0101"));
    assert_eq!(types[1].1, "BIGNUM");
    assert_eq!(row[1], json!("123456789012345678901234567890123456789012"));
}

#[test]
fn user_defined_enum_values_come_back_as_their_text() {
    let dir = TempDir::new("enum");
    let db = make_db(
        &dir,
        "enum.duckdb",
        "CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy'); \
         CREATE TABLE m (v mood); INSERT INTO m VALUES ('happy'), (NULL);",
    );
    let mut engine = attached(&db, "256MB");
    let result = engine
        .run_query(
            &CheckedQuery::with_checks_off("SELECT v FROM m"),
            10,
            1 << 20,
        )
        .unwrap();
    // The type as DuckDB names it, from the plan the judge was shown: its members, which the C
    // API does not expose for a result column.
    assert_eq!(result.columns[0].data_type, "ENUM('sad', 'ok', 'happy')");
    assert_eq!(result.rows, vec![vec![json!("happy")], vec![json!(null)]]);
}

#[test]
fn values_duckdb_renders_keep_their_column_names_order_and_limits() {
    let dir = TempDir::new("rendered");
    let db = small_db(&dir);
    let mut engine = attached(&db, "256MB");
    // Duplicate and odd names, a trailing comment and semicolon, and an ORDER BY the wrapping
    // statement must keep.
    let result = engine
        .run_query(
            &CheckedQuery::with_checks_off(
                "SELECT i AS \"x y\", TIMETZ '01:00:00+00' + INTERVAL (i) HOUR AS x, \
             INTERVAL (i) DAY AS x FROM range(3) t(i) ORDER BY i DESC; -- last",
            ),
            2,
            1 << 20,
        )
        .unwrap();
    let names: Vec<_> = result.columns.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["x y", "x", "x"]);
    let types: Vec<_> = result
        .columns
        .iter()
        .map(|c| c.data_type.as_str())
        .collect();
    assert_eq!(types, ["BIGINT", "TIME WITH TIME ZONE", "INTERVAL"]);
    assert_eq!(
        result.rows,
        vec![
            vec![json!(2), json!("03:00:00+00"), json!("P2D")],
            vec![json!(1), json!("02:00:00+00"), json!("P1D")],
        ]
    );
    assert!(result.truncated);
}

#[test]
fn rendered_text_is_duckdbs_own() {
    let dir = TempDir::new("rendered-text");
    let db = small_db(&dir);
    let mut engine = attached(&db, "256MB");
    for expr in [
        "TIMETZ '23:59:59.999999-15:59'",
        "TIME_NS '00:00:00.000000001'",
        "TIMETZ '12:00:00+05:30'",
    ] {
        let (_, own) = one_row(&mut engine, &format!("SELECT ({expr})::VARCHAR AS v"));
        let (_, rendered) = one_row(&mut engine, &format!("SELECT {expr} AS v"));
        assert_eq!(rendered, own, "{expr}");
    }
}
