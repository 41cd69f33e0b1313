#!/usr/bin/env python3
"""Check tests/it/everyday/corpus.sql with DuckDB's Python package, without cargo.

A developer tool (CI does not run it): use it while writing corpus entries, before the Rust
test (tests/it/everyday_corpus.rs) can run them over MCP.

    python3 tests/it/everyday/check_corpus.py                 # every entry
    python3 tests/it/everyday/check_corpus.py hypo_episodes   # only entries whose name contains this
    python3 tests/it/everyday/check_corpus.py -v              # also print each entry's first rows

It builds the database from tests/it/everyday/schema.sql into a temporary `health.duckdb`, opens it
read-only with the settings duckgate's worker uses (`TimeZone = 'America/New_York'`,
`lambda_syntax = 'ENABLE_SINGLE_ARROW'`), and runs every entry four times: twice with 2 threads,
once with 1 and once with 4. It fails (exit 1) when an entry that must be answered errors, when
the runs disagree (floats within a relative 1e-9; rows as a multiset unless the entry is
`-- ordered: yes`), when `ordered` does not match whether the statement ends in a top-level
ORDER BY, when a result column has a type the Rust test's oracle does not render (TUPLE, UNION,
BLOB, FLOAT, …: cast it in the SQL), or when a result is too large for one MCP reply. It warns
about empty results and slow queries. An entry marked `-- expect: refused` is run too, for
information only. An entry whose answer depends on the clock (now(), current_date, …) is run
once more when its runs differ, as the Rust test does.

Needs only the `duckdb` package (2.0.0 with ICU, as the Rust crate bundles). TIMESTAMPTZ values
are compared as their text: the package needs pytz to return them as Python objects.
"""

import decimal
import json
import math
import os
import re
import sys
import tempfile
import time
from collections import Counter

import duckdb

HERE = os.path.dirname(os.path.abspath(__file__))
SCHEMA = os.path.join(HERE, "schema.sql")
CORPUS = os.path.join(HERE, "corpus.sql")

TIME_ZONE = "America/New_York"
THREAD_RUNS = [2, 2, 1, 4]
MAX_ROWS = 2000
MAX_JSON_BYTES = 256 * 1024
SLOW_SECONDS = 0.25
HEADER_KEYS = {"name", "category", "ordered", "expect", "ask"}
# Result types tests/it/everyday_corpus.rs's oracle does not render (or duckgate refuses): cast them.
UNRENDERED_TYPES = re.compile(
    r"\b(TUPLE|UNION|BLOB|BIT|UUID|TIME WITH TIME ZONE|VARIANT|GEOMETRY|FLOAT|BIGNUM|TIME_NS)\b|\"NULL\""
)
TIME_RELATIVE = re.compile(
    r"now\(\)|current_date|current_timestamp|today\(\)|age\(birth_date\)", re.IGNORECASE
)


class Entry:
    def __init__(self, line):
        self.line = line
        self.headers = {}
        self.sql_lines = []

    @property
    def name(self):
        return self.headers["name"]

    @property
    def category(self):
        return self.headers.get("category", "")

    @property
    def ordered(self):
        return self.headers.get("ordered", "no") == "yes"

    @property
    def expect(self):
        return self.headers.get("expect", "answered")

    @property
    def sql(self):
        lines = list(self.sql_lines)
        # Comment lines after the statement (a section heading) belong to no entry.
        while lines and (not lines[-1].strip() or lines[-1].lstrip().startswith("--")):
            lines.pop()
        text = "\n".join(lines).strip()
        return text[:-1].rstrip() if text.endswith(";") else text


def parse_corpus(path):
    """The same format tests/it/everyday_corpus.rs reads: `-- name:` starts an entry, the
    `-- key: value` lines right after it are its headers, the rest up to the next entry is SQL."""
    entries, errors = [], []
    current = None
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            line = line.rstrip("\n")
            header = re.match(r"^-- (\w+):\s*(.*?)\s*$", line)
            if header and header.group(1) == "name":
                current = Entry(number)
                entries.append(current)
                current.headers["name"] = header.group(2)
                continue
            if current is None:
                continue
            if header and not current.sql_lines:
                key, value = header.groups()
                if key not in HEADER_KEYS:
                    errors.append(f"line {number}: unknown header {key!r}")
                current.headers[key] = value
                continue
            if current.sql_lines or line.strip():
                current.sql_lines.append(line)
    names = Counter(e.name for e in entries)
    for name, count in names.items():
        if count > 1:
            errors.append(f"entry name {name!r} is used {count} times")
    for e in entries:
        if not re.fullmatch(r"[a-z0-9_]+", e.name):
            errors.append(f"line {e.line}: name {e.name!r} is not snake_case")
        if not e.category:
            errors.append(f"{e.name}: no category")
        if e.headers.get("ordered", "no") not in ("yes", "no"):
            errors.append(f"{e.name}: ordered must be yes or no")
        if e.expect not in ("answered", "refused"):
            errors.append(f"{e.name}: expect must be refused (or absent)")
        if not e.sql:
            errors.append(f"{e.name}: no SQL")
        if ";" in e.sql.replace("';'", ""):
            errors.append(f"{e.name}: more than one statement?")
    return entries, errors


def ends_with_top_level_order_by(sql):
    """Whether the statement's own (outermost) query has an ORDER BY."""
    depth = 0
    found = False
    tokens = re.finditer(
        r"'(?:[^']|'')*'|\"(?:[^\"]|\"\")*\"|--[^\n]*|[()]|\bORDER\s+BY\b", sql, re.IGNORECASE
    )
    for t in tokens:
        text = t.group(0)
        if text == "(":
            depth += 1
        elif text == ")":
            depth -= 1
        elif depth == 0 and re.fullmatch(r"ORDER\s+BY", text, re.IGNORECASE):
            found = True
    return found


def canonical(value):
    """A comparable, printable form of a Python value from DuckDB."""
    if isinstance(value, float):
        return value
    if isinstance(value, decimal.Decimal):
        return ("decimal", str(value))
    if isinstance(value, (list, tuple)):
        return [canonical(v) for v in value]
    if isinstance(value, dict):
        return {"__obj__": [[canonical(k), canonical(v)] for k, v in value.items()]}
    if hasattr(value, "isoformat"):
        return value.isoformat()
    if value is None or isinstance(value, (bool, int, str)):
        return value
    return repr(value)


def sort_key(value):
    """Floats rounded, so rows that differ only in the last bits sort alike."""
    def rounded(v):
        if isinstance(v, float):
            return "NaN" if math.isnan(v) else f"{v:.9g}"
        if isinstance(v, list):
            return [rounded(x) for x in v]
        if isinstance(v, dict):
            return {k: rounded(x) for k, x in v.items()}
        return v
    return json.dumps(rounded(value), sort_keys=True, default=str)


def same(a, b):
    if isinstance(a, float) and isinstance(b, float):
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return a == b or abs(a - b) <= 1e-9 * max(abs(a), abs(b))
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


def first_difference(a, b, ordered):
    if not ordered:
        a = sorted(a, key=sort_key)
        b = sorted(b, key=sort_key)
    if len(a) != len(b):
        return f"{len(a)} rows vs {len(b)} rows"
    for i, (x, y) in enumerate(zip(a, b)):
        if not same(x, y):
            return f"row {i}: {x!r} vs {y!r}"
    return None


def run(conn, sql):
    """(column names, column types, canonical rows, seconds)."""
    started = time.perf_counter()
    cursor = conn.execute(sql)
    names = [d[0] for d in cursor.description]
    types = [str(d[1]) for d in cursor.description]
    if any("TIME ZONE" in t for t in types):
        # Without pytz the package cannot return TIMESTAMPTZ; compare those columns as text.
        columns = ", ".join(
            (f"CAST(#{i + 1} AS VARCHAR)" if "TIME ZONE" in t else f"#{i + 1}")
            for i, t in enumerate(types)
        )
        cursor = conn.execute(f"SELECT {columns} FROM ({sql})")
    rows = [canonical(list(r)) for r in cursor.fetchall()]
    return names, types, rows, time.perf_counter() - started


def build_database(directory):
    path = os.path.join(directory, "health.duckdb")
    started = time.perf_counter()
    conn = duckdb.connect(path)
    with open(SCHEMA, encoding="utf-8") as f:
        conn.execute(f.read())
    conn.close()
    return path, time.perf_counter() - started


def main():
    verbose = "-v" in sys.argv[1:]
    only = [a for a in sys.argv[1:] if not a.startswith("-")]
    entries, errors = parse_corpus(CORPUS)
    for error in errors:
        print(f"FORMAT {error}")
    selected = [e for e in entries if not only or any(o in e.name for o in only)]
    failures = list(errors)
    warnings = []

    with tempfile.TemporaryDirectory() as directory:
        path, build_seconds = build_database(directory)
        print(f"built {path} in {build_seconds:.2f} s (DuckDB {duckdb.__version__})")
        if build_seconds > 2:
            warnings.append(f"schema build took {build_seconds:.2f} s")
        conn = duckdb.connect(path, read_only=True)
        conn.execute(f"SET TimeZone = '{TIME_ZONE}'")
        conn.execute("SET lambda_syntax = 'ENABLE_SINGLE_ARROW'")
        total_seconds = 0.0
        for e in selected:
            if e.ordered != ends_with_top_level_order_by(e.sql):
                failures.append(
                    f"{e.name}: ordered: {'yes' if e.ordered else 'no'} but the statement "
                    f"{'does not end' if e.ordered else 'ends'} with a top-level ORDER BY"
                )
            results = []
            try:
                for attempt in range(2):
                    results = []
                    for threads in THREAD_RUNS:
                        conn.execute(f"SET threads = {threads}")
                        results.append((threads, run(conn, e.sql)))
                    first = results[0][1]
                    differences = [
                        (threads, first_difference(first[2], r[2], e.ordered))
                        for threads, r in results[1:]
                    ]
                    differences = [(t, d) for t, d in differences if d]
                    if not differences or not TIME_RELATIVE.search(e.sql):
                        break
            except duckdb.Error as error:
                message = str(error).splitlines()[0]
                if e.expect == "refused":
                    print(f"  {e.name}: DuckDB errors too ({message})")
                else:
                    failures.append(f"{e.name}: {message}\n    {e.sql}")
                continue
            names, types, rows, seconds = results[0][1]
            total_seconds += seconds
            for threads, difference in differences:
                failures.append(
                    f"{e.name}: not deterministic (2 threads vs {threads}): {difference}\n    {e.sql}"
                )
            for threads, r in results[1:]:
                if r[0] != names:
                    failures.append(f"{e.name}: column names change with {threads} threads")
            for name, type_name in zip(names, types):
                if UNRENDERED_TYPES.search(type_name):
                    failures.append(f"{e.name}: column {name} has type {type_name}; cast it")
            if len(set(names)) != len(names):
                warnings.append(f"{e.name}: duplicate column names {names}")
            if not rows:
                warnings.append(f"{e.name}: no rows")
            elif all(v is None for row in rows for v in row):
                warnings.append(f"{e.name}: every value is NULL")
            if len(rows) > MAX_ROWS:
                failures.append(f"{e.name}: {len(rows)} rows (keep it under {MAX_ROWS})")
            size = len(json.dumps(rows, default=str))
            if size > MAX_JSON_BYTES:
                failures.append(f"{e.name}: about {size} bytes of JSON rows")
            if seconds > SLOW_SECONDS:
                warnings.append(f"{e.name}: {seconds * 1000:.0f} ms")
            if verbose:
                print(f"{e.name} [{e.category}] {len(rows)} rows, {seconds * 1000:.1f} ms")
                print(f"    {list(zip(names, types))}")
                for row in rows[:3]:
                    print(f"    {row}")

    by_category = Counter(e.category for e in entries)
    print(f"\n{len(entries)} entries ({sum(e.expect == 'refused' for e in entries)} expected refused):")
    for category, count in sorted(by_category.items()):
        print(f"  {category:24} {count}")
    print(f"ran {len(selected)} entries x {len(THREAD_RUNS)}; first runs took {total_seconds:.2f} s in all")
    for w in warnings:
        print(f"WARN {w}")
    for f in failures:
        print(f"FAIL {f}")
    if failures:
        print(f"\n{len(failures)} failure(s)")
        return 1
    print("\nall entries ran and were deterministic")
    return 0


if __name__ == "__main__":
    sys.exit(main())
