"""One test file, start to end: build its databases, collect DuckDB's answers to its read-only
queries, ask duckgate the same on the same database file, and classify each answer.

Run as `python -m suite.worker CONFIG_JSON`: reads one task (a JSON line naming a test file)
at a time on stdin and writes one JSON line per query, then `{"done": ...}` for the file."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import sys
import time
import traceback

import duckdb

from . import encode, mcp, oracle, slt

MAX_LIMIT = 10_000  # duckgate's largest `query` limit

# The statement types a gateway for read-only queries answers. MULTI is what DuckDB makes of a
# PIVOT without IN (a query for the distinct values, then the pivot).
READ_ONLY_TYPES = {"SELECT", "EXPLAIN", "MULTI"}
# Statement types that leave the database file as it was: no new snapshot after them.
STATE_KEEPING_TYPES = {"SELECT", "EXPLAIN", "SET", "VARIABLE_SET"}

# duckgate's error kinds: a refusal or an error DuckDB itself would not give (the query did run in
# DuckDB) is a refusal; the rest say the gateway could not run it at all.
REFUSAL_KINDS = {"policy_blocked", "multiple_statements", "syntax_error", "unknown_name", "invalid_argument", "database_error"}
GATEWAY_KINDS = {"timeout", "cancelled", "busy", "resource_limit", "internal_error", "sandbox_unavailable", "database_not_found", "database_locked"}


EXPLAIN_ANALYZE = re.compile(r"\s*EXPLAIN\s*(\(\s*)?ANALY[SZ]E", re.IGNORECASE)


def strip_comments(sql: str) -> str:
    return re.sub(r"--[^\n]*|/\*.*?\*/", " ", sql, flags=re.DOTALL)


def statement_types(con, sql: str):
    """DuckDB's own parse of `sql`: the type of each statement, or the parser's error."""
    try:
        statements = con.extract_statements(sql)
    except duckdb.Error as e:
        return None, str(e)
    types = []
    for s in statements:
        try:
            types.append(str(s.type).rsplit(".", 1)[-1])
        except ValueError:
            # A statement type the Python client's enum does not name: not one of ours.
            types.append("OTHER")
    return types, None


def reason_of(message: str, construct) -> str:
    """The first words of a message, with its construct, quoted names, literals and numbers
    blanked, so that refusals of one kind group together (the constructs are counted apart)."""
    first = message.strip().split("\n", 1)[0]
    if construct and construct in first:
        first = first.replace(construct, "‹C›")
    # Quoted text, not apostrophes (DuckDB's, database's).
    first = re.sub(r"(?<![A-Za-z])'[^']*'(?![A-Za-z])|\"[^\"]*\"|`[^`]*`", "…", first)
    first = re.sub(r"\d+", "N", first)
    words = first.split()
    return " ".join(words[:14])


def digest(value) -> str:
    return hashlib.sha1(json.dumps(value, ensure_ascii=False).encode("utf-8")).hexdigest()[:16]


def compare(expected: oracle.Answer, envelope: dict, sort: str):
    """(class, reason, detail) of duckgate's envelope against DuckDB's answer."""
    error = envelope.get("error")
    if error:
        kind = error.get("kind", "?")
        message = error.get("message", "")
        cls = "gateway_error" if kind in GATEWAY_KINDS or kind not in REFUSAL_KINDS else "refused"
        construct = error.get("construct")
        return cls, f"{kind}: {reason_of(message, construct)}", {"message": message[:500], "construct": construct}
    data = envelope.get("data") or {}
    columns = [c.get("name") for c in data.get("columns", [])]
    types = [c.get("type") for c in data.get("columns", [])]
    rows = data.get("rows", [])
    if data.get("truncated"):
        return "different", "rows cut", {"truncated_by": data.get("truncated_by"), "rows": len(rows), "expected_rows": len(expected.rows)}
    if len(columns) != len(expected.columns):
        return "different", "column count", {"expected": expected.columns, "got": columns}
    if len(rows) != len(expected.rows):
        return "different", "row count", {"expected": len(expected.rows), "got": len(rows)}

    def arrange(rs):
        if sort == "rowsort":
            return sorted(rs, key=encode.sort_key)
        if sort == "valuesort":
            return sorted((v for r in rs for v in r), key=encode.sort_key)
        return rs

    want, got = arrange(expected.rows), arrange(rows)
    values_same = encode.same(want, got)
    if values_same:
        if columns != expected.columns:
            return "different", "column names", {"expected": expected.columns, "got": columns}
        if types != expected.types:
            diffs = [(e, g) for e, g in zip(expected.types, types) if e != g]
            return "different", "type name", {"expected": diffs[0][0], "got": diffs[0][1]}
        return "identical", "", None
    if sort == "nosort" and encode.same(sorted(want, key=encode.sort_key), sorted(got, key=encode.sort_key)):
        return "different", "row order", {}
    if encode.same_but_key_order(want, got):
        return "different", "struct field order", _first_difference(expected, want, got, sort)
    if encode.close(want, got):
        detail = _first_difference(expected, want, got, sort)
        return "different", f"float last bits ({detail.get('type', '?')})", detail
    detail = _first_difference(expected, want, got, sort)
    return "different", f"values ({detail.get('type', '?')})", detail


def _first_difference(expected, want, got, sort):
    if sort == "valuesort":
        for w, g in zip(want, got):
            if not encode.same(w, g):
                return {"expected": w, "got": g, "type": "valuesort"}
        return {}
    for r, (wr, gr) in enumerate(zip(want, got)):
        if not isinstance(gr, list) or len(gr) != len(wr):
            return {"row": r, "expected": wr, "got": gr, "type": "row shape"}
        for c, (w, g) in enumerate(zip(wr, gr)):
            if not encode.same(w, g):
                t = expected.types[c]
                return {"row": r, "column": c, "type": re.sub(r"\(.*", "(…)", t), "expected": w, "got": g}
    return {}


class FileRun:
    def __init__(self, cfg: dict, task: dict, emit):
        self.cfg = cfg
        self.task = task
        self.emit = emit
        self.rel = task["rel"]
        self.workdir = os.path.join(cfg["scratch"], f"w{cfg['worker']}")
        self.ids: dict = {}
        self.deadline = time.monotonic() + cfg["file_budget"]

    def record(self, cmd, **fields):
        base = f"{self.rel}:{cmd.line}:{hashlib.sha1(cmd.sql.encode('utf-8')).hexdigest()[:8]}"
        n = self.ids.get(base, 0)
        self.ids[base] = n + 1
        rec = {"id": f"{base}#{n}", "file": self.rel, "line": cmd.line, "sql": cmd.sql, "sort": cmd.sort}
        if cmd.source and cmd.source != self.rel:
            rec["included_from"] = cmd.source
        rec.update(fields)
        self.emit(rec)

    def run(self):
        shutil.rmtree(self.workdir, ignore_errors=True)
        os.makedirs(self.workdir)
        try:
            return self._run()
        finally:
            shutil.rmtree(self.workdir, ignore_errors=True)

    def _run(self):
        env = {
            "TEST_DIR": os.path.join(self.workdir, "testdir"),
            "TEMP_DIR": os.path.join(self.workdir, "testdir"),
            "WORKING_DIRECTORY": self.workdir,
            "UUID": "00000000-0000-0000-0000-000000000000",
            "__TEST_DIR__": os.path.join(self.workdir, "testdir"),
        }
        os.makedirs(env["TEST_DIR"], exist_ok=True)
        try:
            commands = slt.read_test(self.task["path"], self.rel, self.cfg["tests_root"], env, set(self.cfg["extensions"]))
        except slt.Unusable as e:
            return {"file_skipped": str(e)}
        except (ValueError, IndexError, UnicodeError) as e:
            return {"file_skipped": f"unreadable: {type(e).__name__}"}
        for c in commands:
            c.sql = c.sql.replace("__TEST_DIR__", env["TEST_DIR"])
            if c.load_path:
                c.load_path = c.load_path.replace("__TEST_DIR__", env["TEST_DIR"])
        os.chdir(self.workdir)
        try:
            builder = oracle.Builder(self.workdir, self.cfg["statement_timeout"])
        except oracle.OracleError as e:
            return {"file_skipped": f"builder: {e}"}
        segments = []  # [(snapshot path, [(cmd, expected Answer)])]
        state = 0
        snapped_state = None
        current = None  # (path, reader connection, candidates) for the present state
        timed_out = False
        try:
            for cmd in commands:
                if time.monotonic() > self.deadline:
                    timed_out = True
                    if cmd.kind == "query":
                        self.record(cmd, **{"class": "skipped", "reason": "file budget spent"})
                    continue
                if cmd.kind in ("load", "restart", "reconnect", "seed"):
                    try:
                        if cmd.kind == "load":
                            builder.open(cmd.load_path, cmd.load_readonly, cmd.load_version)
                        elif cmd.kind == "restart":
                            builder.restart()
                        elif cmd.kind == "reconnect":
                            builder.reconnect()
                        else:
                            builder.execute(None, f"SELECT setseed({float(cmd.sql)})")
                    except (duckdb.Error, oracle.OracleError, ValueError):
                        pass
                    state += 1
                    continue
                try:
                    con = builder.con(cmd.connection)
                except oracle.OracleError as e:
                    if cmd.kind == "query":
                        self.record(cmd, **{"class": "skipped", "reason": "no test database", "detail": str(e)[:300]})
                    continue
                types, parse_error = statement_types(con, cmd.sql)
                if cmd.kind == "statement":
                    try:
                        builder.execute(cmd.connection, cmd.sql)
                    except duckdb.Error:
                        pass
                    if types is None or any(t not in STATE_KEEPING_TYPES for t in types):
                        state += 1
                    continue
                # A query block.
                if types is None:
                    self.record(cmd, **{"class": "skipped", "reason": "DuckDB cannot parse it", "detail": parse_error[:300]})
                    continue
                if types == ["EXPLAIN"] and EXPLAIN_ANALYZE.match(strip_comments(cmd.sql)):
                    # It runs the query and prints the time each operator took: no fixed answer.
                    self.record(cmd, **{"class": "skipped", "reason": "EXPLAIN ANALYZE (timings)"})
                    continue
                if len(types) != 1 or types[0] not in READ_ONLY_TYPES:
                    try:
                        builder.execute(cmd.connection, cmd.sql)
                    except duckdb.Error:
                        pass
                    if any(t not in STATE_KEEPING_TYPES for t in types):
                        state += 1
                    reason = "several statements" if len(types) != 1 else f"not read-only ({types[0]})"
                    self.record(cmd, **{"class": "skipped", "reason": reason})
                    continue
                if snapped_state != state:
                    snapped_state = state
                    if current and current[1] is not None:
                        current[1].close()
                    try:
                        path = builder.snapshot(os.path.join(self.workdir, f"seg{len(segments)}"))
                        current = (path, oracle.reader(path), [])
                        segments.append(current)
                    except (oracle.OracleError, duckdb.Error) as e:
                        current = (None, None, str(e)[:200])
                if current[0] is None:
                    self.record(cmd, **{"class": "skipped", "reason": "no snapshot", "detail": current[2]})
                    continue
                self._expect(builder, cmd, current, types[0])
        finally:
            if current and current[1] is not None:
                current[1].close()
            builder.close()
            os.chdir(self.cfg["scratch"])
        for path, _, candidates in segments:
            if candidates:
                self._ask_duckgate(path, candidates)
        return {"segments": len(segments), "file_budget_spent": timed_out}

    def _expect(self, builder, cmd, current, statement_type):
        """DuckDB's answer on the snapshot, kept when the test's own session agrees with it (an
        EXPLAIN: when it is the same twice, since a plan's text follows the file's storage and
        statistics, which the snapshot's checkpoint changes)."""
        timeout, max_rows = self.cfg["statement_timeout"], MAX_LIMIT
        if statement_type == "EXPLAIN":
            try:
                first = oracle.answer(current[1], cmd.sql, timeout, max_rows)
                second = oracle.answer(current[1], cmd.sql, timeout, max_rows)
            except oracle.OracleError as e:
                self.record(cmd, **{"class": "skipped", "reason": "DuckDB errs on it", "detail": str(e)[:300]})
                return
            except oracle.NotRenderable as e:
                self.record(cmd, **{"class": "skipped", "reason": "answer not renderable", "detail": str(e)[:300]})
                return
            if not encode.same(first.rows, second.rows):
                self.record(cmd, **{"class": "skipped", "reason": "answer depends on the session or the run"})
                return
            current[2].append((cmd, first))
            return
        try:
            live = oracle.answer(builder.con(cmd.connection), cmd.sql, timeout, max_rows)
            live_error = None
        except oracle.OracleError as e:
            live, live_error = None, str(e)
        except oracle.NotRenderable as e:
            live, live_error = None, f"not renderable: {e}"
        try:
            snap = oracle.answer(current[1], cmd.sql, timeout, max_rows)
        except oracle.OracleError as e:
            reason = "DuckDB errs on it" if live is None else "DuckDB errs on the snapshot only"
            self.record(cmd, **{"class": "skipped", "reason": reason, "detail": str(e)[:300]})
            return
        except oracle.NotRenderable as e:
            self.record(cmd, **{"class": "skipped", "reason": "answer not renderable", "detail": str(e)[:300]})
            return
        if live is None:
            self.record(cmd, **{"class": "skipped", "reason": "DuckDB errs in the test's session only", "detail": (live_error or "")[:300]})
            return
        if len(snap.rows) > max_rows:
            self.record(cmd, **{"class": "skipped", "reason": "more rows than duckgate's largest limit"})
            return
        if live.columns != snap.columns or live.types != snap.types or not encode.same(live.rows, snap.rows):
            # The answer depends on the session (settings, temporary objects, open transactions)
            # or changes from run to run (random, time): no fixed answer to compare with.
            self.record(cmd, **{"class": "skipped", "reason": "answer depends on the session or the run"})
            return
        current[2].append((cmd, snap))

    def _ask_duckgate(self, path, candidates):
        argv = [
            self.cfg["duckgate"], "serve", "--db", path, "--time-zone", "UTC", "--threads", "1",
            "--max-reply-bytes", str(64 * 1024 * 1024), "--timeout", str(int(self.cfg["query_timeout"])),
            "--warm-workers", "1", "--max-concurrent", "1",
        ] + list(self.cfg["duckgate_args"])
        log = os.path.join(self.cfg["out"], "logs", f"duckgate-w{self.cfg['worker']}.log")
        try:
            server = mcp.Server(argv, log)
        except mcp.GatewayFailure as e:
            for cmd, expected in candidates:
                self.record(cmd, **{"class": "gateway_error", "reason": "server did not start", "detail": str(e)[:300]})
            return
        try:
            for cmd, expected in candidates:
                started = time.monotonic()
                try:
                    envelope = server.query(cmd.sql, MAX_LIMIT, self.cfg["query_timeout"] + 30)
                except mcp.GatewayFailure as e:
                    self.record(cmd, **{"class": "gateway_error", "reason": "no usable reply", "detail": str(e)[:300]})
                    server.close()
                    try:
                        server = mcp.Server(argv, log)
                    except mcp.GatewayFailure:
                        server = None
                    if server is None:
                        break
                    continue
                elapsed = time.monotonic() - started
                cls, reason, detail = compare(expected, envelope, cmd.sort)
                fields = {
                    "class": cls,
                    "reason": reason,
                    "expected": {"columns": expected.columns, "types": expected.types, "rows": len(expected.rows), "digest": digest(expected.rows)},
                    "seconds": round(elapsed, 3),
                }
                if detail is not None:
                    fields["detail"] = detail
                if cls != "identical" and envelope.get("data"):
                    data = envelope["data"]
                    fields["got"] = {
                        "columns": [c.get("name") for c in data.get("columns", [])],
                        "types": [c.get("type") for c in data.get("columns", [])],
                        "rows": len(data.get("rows", [])),
                        "digest": digest(data.get("rows", [])),
                    }
                self.record(cmd, **fields)
        finally:
            if server is not None:
                server.close()


def main():
    cfg = json.loads(sys.argv[1])
    os.makedirs(cfg["scratch"], exist_ok=True)
    os.chdir(cfg["scratch"])
    out = sys.stdout

    def emit(rec):
        out.write(json.dumps(rec, ensure_ascii=False) + "\n")
        out.flush()

    for line in sys.stdin:
        task = json.loads(line)
        started = time.monotonic()
        try:
            summary = FileRun(cfg, task, emit).run()
        except Exception:  # noqa: BLE001 - a harness bug must not end the run: it is reported
            summary = {"harness_error": traceback.format_exc()[-2000:]}
        summary["seconds"] = round(time.monotonic() - started, 2)
        emit({"done": task["rel"], **summary})


if __name__ == "__main__":
    main()
