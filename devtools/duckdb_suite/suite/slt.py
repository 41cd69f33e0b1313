"""DuckDB's sqllogictest files, read the way DuckDB's own runner reads them.

The runner is test/sqlite/sqllogic_parser.cpp and sqllogic_test_runner.cpp in DuckDB's
repository. A file is a sequence of records separated by blank lines; a record starts with a
command line (`statement ok`, `query II rowsort`, `loop i 0 10`, `require json`, ...), and
`statement`/`query` records carry SQL up to a `----` line or the record's end. `skipif`/`onlyif`
lines may precede a record. Loops (`loop`, `foreach`) repeat the records up to `endloop`, with
`{name}` (and the older `${name}`) replaced in the SQL.

`read_test` returns either the reason the whole file cannot be used here (a `require` the gateway
cannot satisfy, a concurrent loop, external data) or the flat list of commands a run executes in
order, loops expanded.
"""

from __future__ import annotations

import dataclasses
import os
import re
from typing import Optional

STANDARD_VECTOR_SIZE = 2048
DEFAULT_BLOCK_SIZE = 262144

# `require` parameters that hold for an in-process DuckDB 2.0.0 on 64-bit Linux, as DuckDB's
# runner decides them (CheckRequire): platform facts and switches of the runner's own modes that
# change nothing about a plain run.
REQUIRE_SATISFIED = {
    "notmusl",
    "notmingw",
    "notwindows",
    "64bit",
    "longdouble",
    "noforcestorage",
    "no_force_storage",
    "nothreadsan",
    "skip_reload",
    "no_alternative_verify",
    "no_latest_storage",
    "no_vector_verification",
    "no_extension_autoloading",
    "ram",
    "disk_space",
    "strinline",
}
REQUIRE_UNSATISFIED = {"windows", "mingw", "allow_unsigned_extensions", "vacuum_rebuild_indexes"}

# Text that means a file reads data the run does not have: DuckDB's data directory, remote
# storage, archives to unpack. Such files are left out whole.
EXTERNAL_DATA = re.compile(
    r"""(\{DATA_DIR\}|\{LOCAL_DATA_DIR\}|\{BUILD_DIRECTORY\}|__BUILD_DIRECTORY__|['"]\.?/?data/|https?://|s3a?://|gcs?://|az(ure)?://|abfss?://|hf://|r2://)""",
    re.IGNORECASE,
)


@dataclasses.dataclass
class Command:
    """One command to execute, loops expanded."""

    kind: str  # statement | query | load | restart | reconnect | seed
    line: int  # 1-based line of the command in its file
    sql: str = ""
    expect: str = "ok"  # statement: ok | error | maybe
    connection: Optional[str] = None
    sort: str = "nosort"  # query: nosort | rowsort | valuesort
    columns: int = 0  # query: the column count the test expects
    load_path: Optional[str] = None  # load: the path after keyword replacement
    load_readonly: bool = False
    load_version: Optional[str] = None  # load: the storage version a new file is written in
    source: str = ""  # the file the command was read from (differs for `include`)


@dataclasses.dataclass
class Record:
    line: int
    token: str
    params: list
    sql: str = ""
    conditions: list = dataclasses.field(default_factory=list)
    source: str = ""


class Unusable(Exception):
    """The whole file cannot be run here; the message says why (a short, groupable reason)."""


def _empty_or_comment(line: str) -> bool:
    return line == "" or line.startswith("#")


def _records(text: str, source: str, tests_root: str, env: dict, depth: int = 0) -> list:
    """The file's records in order, with `skipif`/`onlyif` system conditions decided and loop
    conditions kept; `include` is read in place."""
    lines = [line.replace("\r", "") for line in text.split("\n")]
    records = []
    i = 0
    n = len(lines)
    seen_statement = False
    while True:
        if seen_statement:
            while i < n and not _empty_or_comment(lines[i]):
                i += 1
        seen_statement = True
        while i < n and _empty_or_comment(lines[i]):
            i += 1
        if i >= n:
            break
        words = lines[i].split()
        conditions = []
        skip = False
        while words and words[0] in ("skipif", "onlyif"):
            skip_if = words[0] == "skipif"
            if len(words) < 2:
                raise Unusable("malformed skipif/onlyif")
            what = words[1]
            if any(c in what for c in "=<>"):
                for part in what.split("&&"):
                    m = re.match(r"^\s*([^<>=!]+?)\s*(<>|>=|<=|>|<|=)\s*(.*?)\s*$", part)
                    if not m:
                        raise Unusable("malformed loop condition")
                    conditions.append((m.group(1), m.group(2), m.group(3), skip_if))
            elif (what.lower() == "duckdb") == skip_if:
                skip = True
            i += 1
            if i >= n:
                break
            words = lines[i].split()
        if skip or not words:
            continue
        token, params = words[0], words[1:]
        rec = Record(line=i + 1, token=token, params=params, conditions=conditions, source=source)
        if token in ("statement", "query"):
            i += 1
            body = []
            while i < n and not _empty_or_comment(lines[i]) and lines[i] != "----":
                body.append(lines[i])
                i += 1
            rec.sql = "\n".join(body)
            # The expected result (or error) runs to the next empty line, whatever it holds
            # (a result line may start with '#').
            if i < n and lines[i] == "----":
                i += 1
                while i < n and lines[i] != "":
                    i += 1
        elif token == "include":
            if depth > 4 or not params:
                raise Unusable("include")
            path = os.path.join(tests_root, replace_keywords(params[0], env))
            if not os.path.isfile(path):
                raise Unusable("include of a missing file")
            with open(path, encoding="utf-8", errors="replace") as f:
                records.extend(_records(f.read(), params[0], tests_root, env, depth + 1))
            continue
        elif token == "set" and params[:1] == ["variable"] and len(params) == 3:
            # The runner sets these while it parses, so they hold from here on.
            env[params[1]] = params[2]
        elif token == "test-env" and len(params) >= 2:
            env.setdefault(params[0], params[1])
        records.append(rec)
    return records


def replace_keywords(text: str, env: dict) -> str:
    for name, value in env.items():
        text = text.replace("${%s}" % name, value).replace("{%s}" % name, value)
    return text


def _loop_replace(text: str, name: str, value: str) -> str:
    names = name.split(",")
    values = value.split(",") if len(names) > 1 else [value]
    if len(names) != len(values):
        raise Unusable("foreach arity")
    for n_, v in zip(names, values):
        text = text.replace("${%s}" % n_, v).replace("{%s}" % n_, v)
    return text


def _foreach_tokens(params: list) -> list:
    out = []
    for p in params:
        t = p.strip().lower()
        if t.startswith("<variable:"):
            raise Unusable("foreach over a variable")
        if t.startswith("!") and p[1:] in out:
            out.remove(p[1:])
            continue
        group = []
        if t in ("<signed>", "<integral>", "<numeric>", "<alltypes>"):
            group += ["tinyint", "smallint", "integer", "bigint", "hugeint"]
        if t in ("<unsigned>", "<integral>", "<numeric>", "<alltypes>"):
            group += ["utinyint", "usmallint", "uinteger", "ubigint", "uhugeint"]
        if t in ("<numeric>", "<alltypes>"):
            group += ["float", "double"]
        if t == "<alltypes>":
            group += ["bool", "interval", "varchar"]
        if t == "<compression>":
            group += ["none", "uncompressed", "rle", "bitpacking", "dictionary", "fsst", "dict_fsst", "alp", "alprd", "chimp", "patas", "roaring"]
        if t == "<all_types_columns>":
            raise Unusable("foreach <all_types_columns>")
        if group:
            out += group
        else:
            out.append(p)
    return out


def _condition_holds(cond, loops: dict) -> bool:
    name, op, value, _skip_if = cond
    if name not in loops:
        raise Unusable("loop condition outside its loop")
    current = loops[name]
    if op == "=":
        return current == value
    if op == "<>":
        return current != value
    try:
        a, b = int(current), int(value)
    except ValueError:
        raise Unusable("non-numeric loop condition")
    return {">": a > b, "<": a < b, ">=": a >= b, "<=": a <= b}[op]


def read_test(path: str, rel: str, tests_root: str, env: dict, extensions: set) -> list:
    """The commands of the test file at `path` (`rel` relative to the tests root), in order.

    Raises Unusable with the reason when the file needs what this run cannot give: an
    extension the gateway lacks, a `require` it cannot meet, concurrency, external data."""
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    env = dict(env)
    env.setdefault("TEST_NAME", rel)
    env.setdefault("BASE_TEST_NAME", rel.replace("/", "_"))
    records = _records(text, rel, tests_root, env)

    # A first pass over the directives that decide the file as a whole.
    for rec in records:
        if EXTERNAL_DATA.search(rec.sql) or (rec.token == "load" and rec.params and EXTERNAL_DATA.search(rec.params[0])):
            raise Unusable("external data")
        if rec.token == "require":
            if not rec.params:
                raise Unusable("require without a parameter")
            what = rec.params[0]
            if what in REQUIRE_SATISFIED:
                continue
            if what == "vector_size" and len(rec.params) > 1:
                if int(rec.params[1]) <= STANDARD_VECTOR_SIZE:
                    continue
                raise Unusable("require vector_size")
            if what == "exact_vector_size" and len(rec.params) > 1:
                if int(rec.params[1]) == STANDARD_VECTOR_SIZE:
                    continue
                raise Unusable("require exact_vector_size")
            if what == "block_size" and len(rec.params) > 1:
                if int(rec.params[1]) == DEFAULT_BLOCK_SIZE:
                    continue
                raise Unusable("require block_size")
            if what in REQUIRE_UNSATISFIED:
                raise Unusable(f"require {what}")
            if what in extensions:
                continue
            raise Unusable(f"require {what}")
        if rec.token == "require-env":
            raise Unusable("require-env")
        if rec.token in ("concurrentloop", "concurrentforeach"):
            raise Unusable("concurrent loop")
        if rec.token == "unzip":
            raise Unusable("unzip")
        if rec.token == "load" and rec.params and rec.params[0] != ":memory:":
            if not any(k in rec.params[0] for k in ("__TEST_DIR__", "{TEST_DIR}", "{TEMP_DIR}")):
                raise Unusable("load of an existing database file")

    commands: list = []
    halted = False

    def run(block: list, loops: dict):
        nonlocal halted
        i = 0
        skip_level = 0
        while i < len(block) and not halted:
            rec = block[i]
            i += 1
            if rec.token == "mode":
                if rec.params[:1] == ["skip"]:
                    skip_level += 1
                elif rec.params[:1] == ["unskip"]:
                    skip_level = max(0, skip_level - 1)
                continue
            if rec.token in ("loop", "foreach"):
                # Collect the body up to the matching endloop.
                depth = 1
                body = []
                while i < len(block):
                    r = block[i]
                    i += 1
                    if r.token in ("loop", "foreach", "concurrentloop", "concurrentforeach"):
                        depth += 1
                    elif r.token == "endloop":
                        depth -= 1
                        if depth == 0:
                            break
                    body.append(r)
                if skip_level > 0:
                    continue
                name = rec.params[0]
                if rec.token == "loop":
                    values = [str(v) for v in range(int(rec.params[1]), int(rec.params[2]))]
                else:
                    values = _foreach_tokens(rec.params[1:])
                for v in values:
                    if halted:
                        break
                    run(body, {**loops, name: v})
                continue
            if skip_level > 0:
                continue
            if rec.conditions:
                keep = True
                for cond in rec.conditions:
                    holds = _condition_holds(cond, loops)
                    if holds == cond[3]:
                        keep = False
                if not keep:
                    continue
            emit(rec, loops)
        return

    def substitute(text: str, loops: dict) -> str:
        text = replace_keywords(text, env)
        for name, value in loops.items():
            # The runner replaces keywords in a loop's values too (ReplaceLoopIterator).
            text = _loop_replace(text, name, replace_keywords(value, env))
        return text

    def emit(rec: Record, loops: dict):
        nonlocal halted
        t = rec.token
        if t == "statement":
            expect = rec.params[0] if rec.params else "ok"
            if expect == "debug_skip":
                return
            if expect == "debug":
                expect = "maybe"
            commands.append(
                Command(
                    kind="statement",
                    line=rec.line,
                    sql=substitute(rec.sql, loops),
                    expect=expect,
                    connection=rec.params[1] if len(rec.params) > 1 else None,
                    source=rec.source,
                )
            )
        elif t == "query":
            sort = "nosort"
            connection = None
            if len(rec.params) > 1:
                p = rec.params[1]
                if p in ("nosort", "none"):
                    sort = "nosort"
                elif p in ("rowsort", "sort"):
                    sort = "rowsort"
                elif p == "valuesort":
                    sort = "valuesort"
                else:
                    connection = p
            commands.append(
                Command(
                    kind="query",
                    line=rec.line,
                    sql=substitute(rec.sql, loops),
                    connection=connection,
                    sort=sort,
                    columns=len(rec.params[0]) if rec.params else 0,
                    source=rec.source,
                )
            )
        elif t == "load":
            path = substitute(rec.params[0], loops) if rec.params else None
            readonly = len(rec.params) > 1 and rec.params[1].lower() == "readonly"
            version = rec.params[2] if len(rec.params) > 2 else None
            commands.append(
                Command(kind="load", line=rec.line, load_path=path, load_readonly=readonly, load_version=version, source=rec.source)
            )
        elif t == "restart":
            commands.append(Command(kind="restart", line=rec.line, source=rec.source))
        elif t == "reconnect":
            commands.append(Command(kind="reconnect", line=rec.line, source=rec.source))
        elif t == "set" and rec.params[:1] == ["seed"] and len(rec.params) == 2:
            commands.append(Command(kind="seed", line=rec.line, sql=rec.params[1], source=rec.source))
        elif t == "halt":
            halted = True
        # Everything else (require, tags, hash-threshold, sleep, set ignore_error_messages,
        # reset label, continue, test-env, mode output_*) changes nothing a run here depends on.

    run(records, {})
    return commands
