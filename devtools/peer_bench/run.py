"""duckgate against other DuckDB MCP servers, through the official MCP Python SDK, over stdio.

Usage: run.py DUCKGATE_BINARY [--rounds N] [--extra-duckgate-args "ARGS"] [--json PATH]

Run it with devtools/peer_bench/.venv/bin/python (install.sh makes that venv). It builds a fresh
temporary DuckDB file (table `readings`, 100,000 rows), serves that one file read-only with every
server at once (duckgate, and each installed peer), and measures, per server:

- start-up: spawn to `initialize` answered (median of a few fresh spawns), and the first call;
- two queries (`SELECT 1`, and 1,000 rows x 4 columns of `readings`) in three regimes:
  think  - one call, then THINK ms idle, sequentially;
  b2b    - calls back to back, sequentially;
  burst  - 4 calls at once on one session (asyncio.gather), BURST_PAUSE ms between bursts;
  latency is per call (request sent to result parsed by the SDK), p50 and p90 in ms.

Servers take turns in blocks (a block is BLOCK calls or bursts of one server; the order rotates
each round), so slow drift of the machine hits all of them alike. Every session is warmed up first.
A peer that is not installed or does not start is reported and left out. Prints markdown tables,
and with --json writes every sample and summary to a file ("-" for stdout).
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import math
import os
import platform
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from mcp import Client, StdioServerParameters
from mcp.client.session import ClientSession
from mcp.client.stdio import stdio_client

HERE = Path(__file__).resolve().parent
ROWS = 100_000
QUERIES = {
    "select1": "SELECT 1",
    "rows1000": "SELECT ts, device, glucose, trend FROM readings ORDER BY ts LIMIT 1000",
}
REGIMES = ["think", "b2b", "burst"]
BURST = 4


@dataclass
class Spec:
    name: str
    command: list[str]
    tool: str
    arg: str
    note: str
    env: dict[str, str] = field(default_factory=dict)


def server_specs(args: argparse.Namespace, db: str) -> tuple[list[Spec], list[str]]:
    """Every server to measure (duckgate first), and a line for each peer that is missing."""
    extra = shlex.split(args.extra_duckgate_args or "")
    specs = [
        Spec(
            "duckgate",
            [args.duckgate, "serve", "--db", db, *extra],
            "query",
            "sql",
            "defaults" + (f" + {' '.join(extra)}" if extra else ""),
            {"DUCKGATE_LOG": "warn"},
        )
    ]
    missing = []
    motherduck = HERE / ".venv" / "bin" / "mcp-server-motherduck"
    duckdb_srv = HERE / ".venv-mcp1" / "bin" / "mcp-server-duckdb"
    persistent = args.peer_persistent_connections
    if motherduck.exists():
        cmd = [str(motherduck), "--db-path", db, "--max-chars", "10000000"]
        if persistent:
            cmd.append("--no-ephemeral-connections")
        specs.append(
            Spec(
                "mcp-server-motherduck",
                cmd,
                "execute_query",
                "sql",
                "local file, read-only (its default), --max-chars 10000000"
                + (", --no-ephemeral-connections" if persistent else ", a connection per query (default)"),
            )
        )
    else:
        missing.append(f"mcp-server-motherduck: not installed ({motherduck}); run install.sh")
    if duckdb_srv.exists():
        cmd = [str(duckdb_srv), "--db-path", db, "--readonly"]
        if persistent:
            cmd.append("--keep-connection")
        specs.append(
            Spec(
                "mcp-server-duckdb",
                cmd,
                "query",
                "query",
                "--readonly" + (", --keep-connection" if persistent else ", a connection per query (default)"),
            )
        )
    else:
        missing.append(f"mcp-server-duckdb: not installed ({duckdb_srv}); run install.sh")
    return specs, missing


def build_database(path: str) -> None:
    import duckdb

    con = duckdb.connect(path)
    # A CGM-like series: 3 devices, a reading every 5 minutes, glucose 40..399 mg/dL, trend mg/dL/min.
    con.execute(
        f"""
        CREATE TABLE readings AS
        SELECT TIMESTAMP '2025-01-01 00:00:00' + to_minutes(i * 5) AS ts,
               'cgm-' || lpad((i % 3)::VARCHAR, 2, '0') AS device,
               (40 + (i * 7919) % 360)::INTEGER AS glucose,
               round(((i * 104729) % 81 - 40) / 10.0, 1)::DOUBLE AS trend
        FROM range({ROWS}) t(i)
        """
    )
    con.execute("CHECKPOINT")
    con.close()


def pct(samples: list[float], q: float) -> float:
    """The q-quantile (0..1) by linear interpolation, in the samples' unit."""
    s = sorted(samples)
    if not s:
        return math.nan
    k = (len(s) - 1) * q
    lo, hi = math.floor(k), math.ceil(k)
    return s[lo] + (s[hi] - s[lo]) * (k - lo)


class Server:
    """One live session with one server."""

    def __init__(self, spec: Spec, logdir: Path, validate: bool):
        self.spec = spec
        self.log_path = logdir / f"{spec.name}.stderr.log"
        self.validate = validate
        self.client: Client | None = None
        self.errors: list[str] = []
        self.payload_bytes: dict[str, int] = {}

    def params(self) -> StdioServerParameters:
        env = {**os.environ, **self.spec.env}
        return StdioServerParameters(command=self.spec.command[0], args=self.spec.command[1:], env=env)

    async def open(self) -> float:
        """Spawn and initialize; return the seconds that took."""
        log = open(self.log_path, "a", encoding="utf-8")  # noqa: SIM115 - lives as long as the session
        t0 = time.perf_counter()
        client = Client(stdio_client(self.params(), errlog=log), mode="legacy")
        await client.__aenter__()
        elapsed = time.perf_counter() - t0
        self.client = client
        if not self.validate:
            # Skip the SDK's client-side jsonschema check of structuredContent (see README).
            async def no_validation(name: str, result: Any) -> None:
                return None

            client.session.validate_tool_result = no_validation  # type: ignore[method-assign]
        return elapsed

    async def close(self) -> None:
        if self.client is not None:
            try:
                await asyncio.wait_for(self.client.__aexit__(None, None, None), timeout=15)
            except Exception:  # noqa: BLE001 - closing is best effort
                pass
            self.client = None

    async def call(self, query: str) -> float:
        """One timed call, in ms; raises on a transport error or an isError result."""
        assert self.client is not None
        t0 = time.perf_counter()
        result = await self.client.call_tool(self.spec.tool, {self.spec.arg: QUERIES[query]})
        elapsed = (time.perf_counter() - t0) * 1000
        if result.is_error:
            text = " ".join(getattr(c, "text", "") for c in result.content)[:300]
            raise RuntimeError(f"{self.spec.name} {query}: isError: {text}")
        if query not in self.payload_bytes:
            text = sum(len(getattr(c, "text", "")) for c in result.content)
            structured = len(json.dumps(result.structured_content)) if result.structured_content else 0
            self.payload_bytes[query] = text + structured
            if query == "rows1000" and text + structured < 20_000:
                raise RuntimeError(f"{self.spec.name}: 1,000 rows came back as only {text + structured} bytes")
        return elapsed

    def stderr_tail(self, lines: int = 8) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""


async def measure_startup(specs: list[Spec], logdir: Path, spawns: int, validate: bool) -> dict[str, Any]:
    """Fresh spawns, servers interleaved: spawn-to-initialized and the first SELECT 1 after it."""
    out: dict[str, Any] = {s.name: {"init_ms": [], "first_call_ms": [], "error": None} for s in specs}
    for i in range(spawns):
        order = specs[i % len(specs):] + specs[: i % len(specs)]
        for spec in order:
            rec = out[spec.name]
            if rec["error"]:
                continue
            srv = Server(spec, logdir, validate)
            try:
                rec["init_ms"].append(await asyncio.wait_for(srv.open(), timeout=60) * 1000)
                rec["first_call_ms"].append(await asyncio.wait_for(srv.call("select1"), timeout=60))
            except BaseException as e:  # noqa: BLE001 - a peer that fails is reported, not fatal
                if isinstance(e, KeyboardInterrupt):
                    raise
                rec["error"] = f"{type(e).__name__}: {e}"
            finally:
                await srv.close()
    return out


async def run_block(srv: Server, regime: str, query: str, block: int, think: float, pause: float) -> list[float]:
    samples: list[float] = []
    if regime == "think":
        for _ in range(block):
            await asyncio.sleep(think)
            samples.append(await srv.call(query))
    elif regime == "b2b":
        await srv.call(query)  # untimed lead-in: the first call of a block follows an idle gap
        for _ in range(block):
            samples.append(await srv.call(query))
    else:
        for _ in range(block):
            await asyncio.sleep(pause)
            samples.extend(await asyncio.gather(*(srv.call(query) for _ in range(BURST))))
    return samples


async def bench(args: argparse.Namespace) -> dict[str, Any]:
    exe = shutil.which(args.duckgate) or args.duckgate
    if not os.access(exe, os.X_OK):
        sys.exit(f"peer_bench: no executable duckgate at {args.duckgate}")
    args.duckgate = os.path.abspath(exe)
    tmp = Path(tempfile.mkdtemp(prefix="peer_bench-"))
    db = str(tmp / "cgm.duckdb")
    t0 = time.perf_counter()
    build_database(db)
    print(f"database: {db} ({ROWS:,} rows in readings, {os.path.getsize(db) / 1e6:.1f} MB, "
          f"built in {time.perf_counter() - t0:.1f} s)", flush=True)

    specs, missing = server_specs(args, db)
    for line in missing:
        print(f"SKIP {line}", flush=True)
    meta = environment(args, specs)

    print(f"start-up: {args.spawns} fresh spawns per server ...", flush=True)
    startup = await measure_startup(specs, tmp, args.spawns, not args.no_output_validation)
    live: list[Server] = []
    skipped = {}
    for spec in specs:
        if startup[spec.name]["error"]:
            skipped[spec.name] = startup[spec.name]["error"]
            print(f"SKIP {spec.name}: did not start or answer: {startup[spec.name]['error']}\n"
                  f"  stderr tail:\n{Server(spec, tmp, True).stderr_tail()}", flush=True)
            continue
        srv = Server(spec, tmp, not args.no_output_validation)
        try:
            await asyncio.wait_for(srv.open(), timeout=60)
            tools = [t.name for t in (await srv.client.list_tools()).tools]  # type: ignore[union-attr]
            if spec.tool not in tools:
                raise RuntimeError(f"no tool {spec.tool!r} among {tools}")
            warm = [await srv.call(q) for q in QUERIES for _ in range(args.warmup)]
            await asyncio.gather(*(srv.call("select1") for _ in range(BURST)))
            srv.warm_ms = statistics.median(warm)  # type: ignore[attr-defined]
            live.append(srv)
        except Exception as e:  # noqa: BLE001
            skipped[spec.name] = f"{type(e).__name__}: {e}"
            print(f"SKIP {spec.name}: {skipped[spec.name]}", flush=True)
            await srv.close()
    if not live or live[0].spec.name != "duckgate":
        for srv in live:
            await srv.close()
        sys.exit("peer_bench: duckgate did not start; nothing to compare")

    # Rounds per server: fewer for a very slow one, so the whole run stays within a few minutes.
    rounds = {}
    for srv in live:
        slow = srv.warm_ms  # type: ignore[attr-defined]
        r = args.rounds if slow <= args.slow_ms else max(args.block, int(args.rounds * args.slow_ms / slow))
        rounds[srv.spec.name] = r
        if r < args.rounds:
            print(f"note: {srv.spec.name} is slow (warm median {slow:.0f} ms): {r} rounds instead of {args.rounds}")

    samples: dict[str, dict[str, dict[str, list[float]]]] = {
        s.spec.name: {r: {q: [] for q in QUERIES} for r in REGIMES} for s in live
    }
    errors: dict[str, list[str]] = {s.spec.name: [] for s in live}
    think, pause = args.think_ms / 1000, args.burst_pause_ms / 1000
    for regime in REGIMES:
        for query in QUERIES:
            t_start = time.perf_counter()
            n_blocks = math.ceil(args.rounds / args.block)
            for b in range(n_blocks):
                k = b % len(live)
                for srv in live[k:] + live[:k]:
                    name = srv.spec.name
                    want = rounds[name] * (BURST if regime == "burst" else 1)
                    have = len(samples[name][regime][query])
                    if have >= want or len(errors[name]) > 10:
                        continue
                    try:
                        got = await asyncio.wait_for(
                            run_block(srv, regime, query, args.block, think, pause), timeout=300
                        )
                        samples[name][regime][query].extend(got)
                    except Exception as e:  # noqa: BLE001 - counted and shown
                        errors[name].append(f"{regime}/{query}: {type(e).__name__}: {e}")
            print(f"  {regime:5} {query:8} done in {time.perf_counter() - t_start:5.1f} s", flush=True)

    payload = {s.spec.name: s.payload_bytes for s in live}
    for srv in live:
        await srv.close()
    shutil.rmtree(tmp, ignore_errors=True)
    return {
        "meta": meta,
        "servers": {s.name: {"command": s.command, "tool": s.tool, "arg": s.arg, "note": s.note} for s in specs},
        "skipped": skipped | {line.split(":")[0]: line for line in missing},
        "startup": startup,
        "rounds": rounds,
        "samples_ms": samples,
        "errors": errors,
        "payload_bytes": payload,
    }


def environment(args: argparse.Namespace, specs: list[Spec]) -> dict[str, Any]:
    def ver(p: str, venv: str = ".venv") -> str:
        if venv == ".venv":
            try:
                return version(p)
            except PackageNotFoundError:
                return "-"
        py = HERE / venv / "bin" / "python"
        if not py.exists():
            return "-"
        out = subprocess.run([str(py), "-c", f"from importlib.metadata import version; print(version('{p}'))"],
                             capture_output=True, text=True)
        return out.stdout.strip() or "-"

    h = hashlib.sha256()
    with open(args.duckgate, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    dg_version = subprocess.run([args.duckgate, "--version"], capture_output=True, text=True).stdout.strip()
    return {
        "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "machine": f"{platform.machine()}, {os.cpu_count()} cpus, {platform.system()} {platform.release()}",
        "python": platform.python_version(),
        "client": f"mcp {ver('mcp')} (mode='legacy': initialize, protocol 2025-11-25)",
        "duckgate": f"{dg_version} ({args.duckgate}, sha256 {h.hexdigest()[:12]})",
        "duckgate_args": args.extra_duckgate_args or "",
        "peers": {
            "mcp-server-motherduck": ver("mcp-server-motherduck") + f" (fastmcp {ver('fastmcp')}, duckdb {ver('duckdb')})",
            "mcp-server-duckdb": ver("mcp-server-duckdb", ".venv-mcp1")
            + f" (mcp {ver('mcp', '.venv-mcp1')}, duckdb {ver('duckdb', '.venv-mcp1')})",
        },
        "settings": {
            "rounds": args.rounds, "block": args.block, "think_ms": args.think_ms,
            "burst": BURST, "burst_pause_ms": args.burst_pause_ms, "warmup": args.warmup,
            "spawns": args.spawns, "output_validation": not args.no_output_validation,
        },
    }


def summarize(res: dict[str, Any]) -> dict[str, Any]:
    summary: dict[str, Any] = {"regimes": {}, "startup": {}}
    for name, rec in res["startup"].items():
        if rec["init_ms"]:
            summary["startup"][name] = {
                "init_p50_ms": pct(rec["init_ms"], 0.5),
                "first_call_p50_ms": pct(rec["first_call_ms"], 0.5) if rec["first_call_ms"] else math.nan,
                "n": len(rec["init_ms"]),
            }
    for regime in REGIMES:
        for query in QUERIES:
            row: dict[str, Any] = {}
            for name, by_regime in res["samples_ms"].items():
                s = by_regime[regime][query]
                if s:
                    row[name] = {"p50": pct(s, 0.5), "p90": pct(s, 0.9), "n": len(s)}
            peers = {k: v for k, v in row.items() if k != "duckgate"}
            if "duckgate" in row and peers:
                fastest = min(peers, key=lambda k: peers[k]["p50"])
                row["_compare"] = {
                    "duckgate_p50": row["duckgate"]["p50"],
                    "fastest_peer": fastest,
                    "fastest_peer_p50": peers[fastest]["p50"],
                    "ratio": row["duckgate"]["p50"] / peers[fastest]["p50"],
                }
            summary["regimes"][f"{regime}/{query}"] = row
    return summary


REGIME_LABEL = {
    "think": "150 ms think time",
    "b2b": "back to back",
    "burst": "bursts of 4 parallel",
}


def markdown(res: dict[str, Any], summary: dict[str, Any]) -> str:
    meta = res["meta"]
    names = list(res["samples_ms"])
    st = meta["settings"]
    label = dict(REGIME_LABEL, think=f"{st['think_ms']:g} ms think time")
    out = []
    out.append(f"duckgate {meta['duckgate']}; args: `{meta['duckgate_args'] or '(defaults)'}`")
    out.append(f"client: {meta['client']}; {meta['machine']}; python {meta['python']}; {meta['date_utc']}")
    out.append("peers: " + "; ".join(f"{k} {v}" for k, v in meta["peers"].items()))
    out.append(f"rounds per regime and query: {res['rounds']} (bursts: that many bursts of {st['burst']}); "
               f"blocks of {st['block']}; burst pause {st['burst_pause_ms']:g} ms; output validation "
               f"{'on' if st['output_validation'] else 'off'}")
    out.append("")
    out.append("| regime | query | duckgate p50 | fastest peer p50 | ratio |")
    out.append("|---|---|---:|---:|---:|")
    for key, row in summary["regimes"].items():
        regime, query = key.split("/")
        c = row.get("_compare")
        if c:
            out.append(f"| {label[regime]} | {query} | {c['duckgate_p50']:.1f} ms | "
                       f"{c['fastest_peer_p50']:.1f} ms ({c['fastest_peer']}) | {c['ratio']:.2f} |")
    out.append("")
    out.append("| regime | query | " + " | ".join(f"{n} p50 / p90 (n)" for n in names) + " |")
    out.append("|---|---|" + "---:|" * len(names))
    for key, row in summary["regimes"].items():
        regime, query = key.split("/")
        cells = [f"{row[n]['p50']:.1f} / {row[n]['p90']:.1f} ({row[n]['n']})" if n in row else "-" for n in names]
        out.append(f"| {label[regime]} | {query} | " + " | ".join(cells) + " |")
    out.append("")
    out.append("| server | start-up p50 (spawn to initialized) | first SELECT 1 after start p50 | result bytes select1 / rows1000 |")
    out.append("|---|---:|---:|---:|")
    for n, s in summary["startup"].items():
        pb = res["payload_bytes"].get(n, {})
        out.append(f"| {n} | {s['init_p50_ms']:.0f} ms (n={s['n']}) | {s['first_call_p50_ms']:.1f} ms | "
                   f"{pb.get('select1', '-')} / {pb.get('rows1000', '-')} |")
    for n, errs in res["errors"].items():
        if errs:
            out.append(f"\nERRORS {n} ({len(errs)}): " + "; ".join(errs[:5]))
    for n, why in res["skipped"].items():
        out.append(f"\nSKIPPED {n}: {why}")
    return "\n".join(out)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("duckgate", help="path to the duckgate binary")
    p.add_argument("--rounds", type=int, default=60,
                   help="timed calls per server, regime and query (bursts: that many bursts) [60]")
    p.add_argument("--extra-duckgate-args", default="",
                   help='appended to `duckgate serve --db DB`, e.g. "--spawn-workers"')
    p.add_argument("--json", metavar="PATH", help='write samples and summary as JSON ("-": stdout)')
    p.add_argument("--block", type=int, default=10, help="calls (or bursts) per server turn [10]")
    p.add_argument("--think-ms", type=float, default=150, help="idle time before each call, think regime [150]")
    p.add_argument("--burst-pause-ms", type=float, default=100, help="idle time before each burst [100]")
    p.add_argument("--warmup", type=int, default=5, help="untimed calls per query per server first [5]")
    p.add_argument("--spawns", type=int, default=5, help="fresh spawns per server for start-up time [5]")
    p.add_argument("--slow-ms", type=float, default=250,
                   help="a server whose warm call median is above this gets proportionally fewer rounds [250]")
    p.add_argument("--peer-persistent-connections", action="store_true",
                   help="peers keep one DuckDB connection (motherduck --no-ephemeral-connections, "
                        "mcp-server-duckdb --keep-connection) instead of their default, one per query")
    p.add_argument("--no-output-validation", action="store_true",
                   help="skip the SDK's client-side jsonschema check of structuredContent (on by default)")
    argv = sys.argv[1:]
    # Let `--extra-duckgate-args "--spawn-workers"` through: a value that starts with "--" would
    # otherwise be taken for an option.
    for i, a in enumerate(argv[:-1]):
        if a == "--extra-duckgate-args":
            argv[i : i + 2] = [f"{a}={argv[i + 1]}"]
            break
    args = p.parse_args(argv)

    t0 = time.perf_counter()
    res = asyncio.run(bench(args))
    summary = summarize(res)
    res["summary"] = summary
    res["meta"]["wall_s"] = round(time.perf_counter() - t0, 1)
    print()
    print(markdown(res, summary))
    print(f"\nwall time: {res['meta']['wall_s']} s")
    if args.json:
        text = json.dumps(res, indent=1, default=float)
        if args.json == "-":
            print(text)
        else:
            Path(args.json).write_text(text)
            print(f"json: {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
