"""CPU per `query` call of a duckgate server: the server and every process it starts, together.

Usage: cpu_per_call.py DUCKGATE_BINARY [--calls N] [--rounds R] [--db PATH]

It builds (unless --db is given) a DuckDB file with table `readings` (100,000 rows), then, for
each query (`SELECT 1`, and 1,000 rows x 4 columns of `readings`), runs R rounds of: start
`duckgate serve --db FILE`, initialize over stdio, make N `query` calls back to back, close stdin,
wait for the server to exit. The CPU of the server and all its descendants is read with
getrusage(RUSAGE_CHILDREN) around each round: every duckgate process is reaped by its parent
(workers by the template or the server, the template by the server, the server by this script), so
their user and system time all reach this process. A round with no calls measures start-up and
shutdown, which is subtracted: per-call CPU = (CPU(N calls) - CPU(0 calls)) / N. Prints the median
of the rounds, in ms.

The client here is a minimal JSON-RPC client (its own CPU is not counted): the server does the
same work whichever client sends the lines. Needs Python's `duckdb` module only to build the file.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

QUERIES = {
    "select1": "SELECT 1",
    "rows1000": "SELECT ts, device, glucose, trend FROM readings ORDER BY ts LIMIT 1000",
}


def build_db(path: Path) -> None:
    import duckdb

    con = duckdb.connect(str(path))
    con.execute(
        """CREATE TABLE readings AS
           SELECT TIMESTAMP '2026-01-01' + INTERVAL (i * 5) MINUTE AS ts,
                  'dexcom-g7' AS device,
                  (100 + (i * 37) % 150)::INTEGER AS glucose,
                  ['flat', 'up', 'down'][1 + i % 3] AS trend
           FROM range(100000) t(i)"""
    )
    con.close()


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


class Server:
    def __init__(self, binary: str, db: Path) -> None:
        self.proc = subprocess.Popen(
            [binary, "serve", "--db", str(db)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self.next_id = 0
        self.request(
            "initialize",
            {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "cpu_per_call", "version": "1"},
            },
        )
        self.notify("notifications/initialized")

    def send(self, message: dict) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def notify(self, method: str) -> None:
        self.send({"jsonrpc": "2.0", "method": method})

    def request(self, method: str, params: dict) -> dict:
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        assert self.proc.stdout is not None
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError("the server closed its output")
            reply = json.loads(line)
            if reply.get("id") == self.next_id:
                return reply

    def query(self, sql: str) -> None:
        reply = self.request(
            "tools/call", {"name": "query", "arguments": {"sql": sql, "limit": 1000}}
        )
        result = reply.get("result", {})
        if result.get("isError"):
            raise RuntimeError(f"query failed: {result}")

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


def round_cpu(binary: str, db: Path, sql: str, calls: int) -> float:
    before = children_cpu()
    server = Server(binary, db)
    for _ in range(calls):
        server.query(sql)
    server.close()
    return children_cpu() - before


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("binary")
    parser.add_argument("--calls", type=int, default=150)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--db")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        db = Path(args.db) if args.db else Path(scratch) / "bench.duckdb"
        if not args.db:
            build_db(db)
        print(f"binary {args.binary}; {args.calls} calls x {args.rounds} rounds", file=sys.stderr)
        for name, sql in QUERIES.items():
            per_call = []
            for _ in range(args.rounds):
                idle = round_cpu(args.binary, db, sql, 0)
                busy = round_cpu(args.binary, db, sql, args.calls)
                per_call.append((busy - idle) / args.calls * 1e3)
            print(
                f"{name}: {statistics.median(per_call):.2f} ms of CPU per call "
                f"(rounds: {', '.join(f'{v:.2f}' for v in per_call)})"
            )


if __name__ == "__main__":
    main()
