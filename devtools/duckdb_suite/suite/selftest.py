"""The oracle's rendering checked against the examples duckgate's VALUE_ENCODING gives, through
in-process DuckDB (no duckgate needed): `run.py --self-test`."""

from __future__ import annotations

import os
import tempfile

import duckdb

from . import encode, oracle

# (SQL expression, the JSON value VALUE_ENCODING says duckgate answers for it)
CASES = [
    ("42::BIGINT", 42),
    ("9007199254740991::BIGINT", 9007199254740991),
    ("9007199254740992::BIGINT", "9007199254740992"),
    ("170141183460469231731687303715884105727::HUGEINT", "170141183460469231731687303715884105727"),
    ("1.50::DECIMAL(10,2)", "1.50"),
    ("0.0000001::DECIMAL(18,7)", "0.0000001"),
    ("12345678901234567890.123::DECIMAL(38,3)", "12345678901234567890.123"),
    ("123456789012345678901234567890::BIGNUM", "123456789012345678901234567890"),
    ("0.1::FLOAT", 0.1),
    ("'nan'::DOUBLE", "NaN"),
    ("'-inf'::FLOAT", "-Infinity"),
    ("-0.0::DOUBLE", -0.0),
    ("'\\xAA\\x00'::BLOB", "qgA="),
    ("'0101'::BIT", "0101"),
    ("DATE '2024-01-31'", "2024-01-31"),
    ("DATE '-0044-03-15'", "-0044-03-15"),
    ("'infinity'::DATE", "infinity"),
    ("TIME '13:45:00.5'", "13:45:00.5"),
    ("TIMESTAMP '2024-01-31 13:45:00.5'", "2024-01-31T13:45:00.5"),
    ("'2024-01-01 00:00:00.123456789'::TIMESTAMP_NS", "2024-01-01T00:00:00.123456789"),
    ("'-infinity'::TIMESTAMP", "-infinity"),
    ("TIMESTAMPTZ '2024-01-31 13:45:00.5+02'", "2024-01-31T11:45:00.5Z"),
    ("'2024-01-31 13:45:00.123456789+02'::TIMESTAMPTZ_NS", "2024-01-31T11:45:00.123456789+00:00"),
    ("TIMETZ '13:45:00+02'", "13:45:00+02"),
    ("INTERVAL 1 YEAR + INTERVAL 2 MONTH + INTERVAL 3 DAY + INTERVAL '04:05:06.5'", "P1Y2M3DT4H5M6.5S"),
    ("INTERVAL '-1 month'", "P-1M"),
    ("INTERVAL '0 seconds'", "PT0S"),
    ("INTERVAL '2562047788 hours'", "PT2562047788H"),
    ("'00000000-0000-0000-0000-000000000001'::UUID", "00000000-0000-0000-0000-000000000001"),
    ("'x'::ENUM('x', 'y')", "x"),
    ("'null'::JSON", "null"),
    ("'{\"a\": 1}'::JSON", '{"a": 1}'),
    ("[1, 2]::VARIANT", [1, 2]),
    ("12345678901234567890::VARIANT", "12345678901234567890"),
    ("[1, NULL]", [1, None]),
    ("[1, 2]::INTEGER[2]", [1, 2]),
    ("{'b': 1, 'a': 'x'}", {"b": 1, "a": "x"}),
    ("(1, 'a')", [1, "a"]),
    ("MAP([1, 2], ['a', 'b'])", [{"key": 1, "value": "a"}, {"key": 2, "value": "b"}]),
    ("MAP([[1]], [2])", [{"key": [1], "value": 2}]),
    ("union_value(t := TIMESTAMPTZ '2024-01-01 00:00:00+00')::UNION(t TIMESTAMPTZ, s VARCHAR)", "2024-01-01T00:00:00Z"),
    ("[INTERVAL 1 DAY]", ["P1D"]),
    ("{'i': INTERVAL 1 DAY, 'd': DATE '2024-01-01'}", {"i": "P1D", "d": "2024-01-01"}),
]


def main() -> int:
    failures = 0
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, f"{oracle.ALIAS}.duckdb")
        duckdb.connect(path).close()
        con = oracle.reader(path)
        for sql, want in CASES:
            try:
                answer = oracle.answer(con, f"SELECT {sql}", 60, 10)
                got = answer.rows[0][0]
            except (oracle.OracleError, oracle.NotRenderable) as e:
                got = f"<{type(e).__name__}: {e}>"
            ok = encode.same(got, want)
            failures += not ok
            print(f"{'ok  ' if ok else 'FAIL'} {sql} -> {got!r}" + ("" if ok else f" (want {want!r})"))
    print(f"{len(CASES) - failures} passed, {failures} failed")
    return 1 if failures else 0
