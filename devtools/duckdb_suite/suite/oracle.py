"""In-process DuckDB 2.0.0: the builder that runs a test file's statements into a database file,
the read-only snapshots duckgate is served, and the answers DuckDB gives on them."""

from __future__ import annotations

import dataclasses
import os
import shutil
import threading

import duckdb

from . import encode

ALIAS = "testdb"

# Every connection of the run: one DuckDB thread (results in the order one thread produces them,
# as duckgate's workers are run here), no extension loaded or installed behind the test's back,
# no Python variable read as a table.
BASE_CONFIG = {
    "threads": 1,
    "autoinstall_known_extensions": False,
    "autoload_known_extensions": False,
    "allow_community_extensions": False,
    "python_enable_replacements": False,
    "memory_limit": "4GB",
}


class OracleError(Exception):
    """DuckDB could not answer; the message is DuckDB's."""


class NotRenderable(Exception):
    """DuckDB answered, but its answer could not be read losslessly."""


@dataclasses.dataclass
class Answer:
    columns: list
    types: list
    rows: list


def _with_timeout(con, seconds: float, fn):
    timer = threading.Timer(seconds, con.interrupt)
    timer.start()
    try:
        return fn()
    finally:
        timer.cancel()


def _wrappable(sql: str) -> str:
    text = sql.rstrip()
    while text.endswith(";"):
        text = text[:-1].rstrip()
    return text


def answer(con, sql: str, timeout: float, max_rows: int) -> Answer:
    """DuckDB's answer to `sql` on `con`, every value rendered as duckgate documents it."""

    def run():
        try:
            con.execute(sql)
            description = con.description
        except duckdb.Error as e:
            raise OracleError(str(e)) from e
        if not description:
            raise OracleError("the statement returns no result")
        types = [d[1] for d in description]
        columns = [d[0] for d in description]
        twins = [encode.twin_type(t) for t in types]
        unions = [i for i, t in enumerate(types) if t.id == "union"]
        try:
            if any(twins) or unions:
                # Run again, wrapped, with the lossy parts cast to DuckDB's text.
                aliases = ", ".join(encode.quote_ident(f"c{i}") for i in range(len(types)))
                exprs = []
                for i, twin in enumerate(twins):
                    ref = f"q.{encode.quote_ident(f'c{i}')}"
                    exprs.append(f"CAST({ref} AS {twin})" if twin else ref)
                exprs += [f"union_tag(q.{encode.quote_ident(f'c{i}')})" for i in unions]
                wrapped = f"SELECT {', '.join(exprs)} FROM ({_wrappable(sql)}\n) AS q({aliases})"
                try:
                    con.execute(wrapped)
                except duckdb.Error as e:
                    raise NotRenderable(f"the twin query failed: {e}") from e
            raw = con.fetchmany(max_rows + 1)
        except duckdb.Error as e:
            raise OracleError(str(e)) from e
        rows = []
        for r in raw:
            tags = {i: r[len(types) + k] for k, i in enumerate(unions)}
            try:
                rows.append([encode.render(t, v, tags.get(i)) for i, (t, v) in enumerate(zip(types, r))])
            except (ValueError, TypeError, KeyError) as e:
                raise NotRenderable(f"{type(e).__name__}: {e}") from e
        return Answer(columns=columns, types=[str(t) for t in types], rows=rows)

    return _with_timeout(con, timeout, run)


class Builder:
    """The test's own database, as its statements build it: a file named `testdb.duckdb` (so
    that its catalog is `testdb`, as duckgate attaches it), opened read-write."""

    def __init__(self, workdir: str, statement_timeout: float):
        self.workdir = workdir
        self.timeout = statement_timeout
        self.loaded: dict = {}
        self.path = None
        self.root = None
        self.default = None
        self.named: dict = {}
        self.readonly = False
        self.version = None
        self.open(None)

    def _config(self):
        cfg = dict(BASE_CONFIG)
        if self.readonly:
            cfg["access_mode"] = "READ_ONLY"
        if self.version:
            # `load PATH readwrite v1.0.0`: the file is written in that release's storage format.
            cfg["storage_compatibility_version"] = self.version
        return cfg

    def open(self, load_path, readonly: bool = False, version=None):
        self.close()
        key = load_path or f"<fresh {len(self.loaded)}>"
        if key not in self.loaded:
            d = os.path.join(self.workdir, f"db{len(self.loaded)}")
            os.makedirs(d, exist_ok=True)
            self.loaded[key] = os.path.join(d, f"{ALIAS}.duckdb")
        self.path = self.loaded[key]
        self.readonly = readonly
        self.version = version
        self._connect()

    def _connect(self):
        try:
            self.root = duckdb.connect(self.path, config=self._config())
        except duckdb.Error as e:
            raise OracleError(f"cannot open the test database: {e}") from e
        self.root.execute("SET GLOBAL TimeZone = 'UTC'")
        self.default = self.root.cursor()
        self.named = {}

    def restart(self):
        self.close()
        if self.path is not None:
            self._connect()

    def reconnect(self):
        if self.root is None:
            return
        if self.default is not None:
            self.default.close()
        self.default = self.root.cursor()

    def con(self, name):
        """The connection `name` (None: the default one); OracleError when the test's database
        could not be opened (a failed `load`)."""
        if self.root is None:
            raise OracleError("the test database is not open")
        if name is None:
            return self.default
        if name not in self.named:
            self.named[name] = self.root.cursor()
        return self.named[name]

    def execute(self, name, sql: str):
        con = self.con(name)

        def run():
            con.execute(sql)
            # Drain a result so that its execution completes now.
            try:
                con.fetchall()
            except duckdb.Error:
                pass

        return _with_timeout(con, self.timeout, run)

    def close(self):
        for c in list(self.named.values()) + [self.default, self.root]:
            if c is not None:
                try:
                    c.close()
                except duckdb.Error:
                    pass
        self.named = {}
        self.default = None
        self.root = None

    def snapshot(self, directory: str) -> str:
        """A copy of the database as it is now, checkpointed into one file (no WAL) at
        `directory/testdb.duckdb`; the builder itself is left as it is."""
        os.makedirs(directory, exist_ok=True)
        target = os.path.join(directory, f"{ALIAS}.duckdb")
        if not os.path.exists(self.path):
            raise OracleError("the test database has no file yet")
        shutil.copyfile(self.path, target)
        wal = self.path + ".wal"
        if os.path.exists(wal):
            shutil.copyfile(wal, target + ".wal")
        try:
            con = duckdb.connect(target, config=dict(BASE_CONFIG))
            con.execute("CHECKPOINT")
            con.close()
        except duckdb.Error as e:
            raise OracleError(f"cannot checkpoint the snapshot: {e}") from e
        if os.path.exists(target + ".wal"):
            if os.path.getsize(target + ".wal") == 0:
                os.remove(target + ".wal")
            else:
                raise OracleError("the snapshot kept a write-ahead log")
        return target


def reader(path: str):
    """A connection like duckgate's: an in-memory DuckDB with the file attached read-only under
    its name and made the default, external access off, time zone UTC."""
    con = duckdb.connect(":memory:", config=dict(BASE_CONFIG))
    con.execute(f"ATTACH '{path.replace(chr(39), chr(39) * 2)}' AS {ALIAS} (READ_ONLY)")
    con.execute(f"USE {ALIAS}")
    con.execute("SET GLOBAL TimeZone = 'UTC'")
    con.execute("SET enable_external_access = false")
    return con
