"""One MCP session over stdio with a server started by COMMAND, with nothing but Python's
standard library, so the container route is tested where the official SDKs are not installed.

usage: session.py [--expect served|refused] [--time-zone ZONE] [--rounds N] [--label TEXT]
                  [--budget-bytes N] [--spill-backing disk|memory] -- COMMAND ARG...

served (the default): initialize, the ten tools, server_info (the time zone, landlock and
seccomp in force, and the memory budget and spill place when asked), a count over cgm_readings,
then N round trips of `SELECT 1`; stdin closed, the server must exit 0.
refused: every call must be answered `sandbox_unavailable`, naming the inherited seccomp filter
as what most likely refuses landlock (the server then exits 1).

Prints `session <label>: ok`, the start-up time (spawn to the initialize reply) and the round
trips' median, as one JSON line after it; exits 1 on any failure. Timings are printed, never
checked.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time

TOOLS = {
    "list_tables",
    "list_files",
    "describe_table",
    "query",
    "plot",
    "sample_rows",
    "explain_query",
    "search_schema",
    "list_relationships",
    "server_info",
}


class Failed(Exception):
    pass


def expect(condition: bool, message: str) -> None:
    if not condition:
        raise Failed(message)


class Session:
    def __init__(self, command: list[str]) -> None:
        self.stderr = tempfile.TemporaryFile()
        self.started = time.monotonic()
        self.process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.stderr
        )
        self.next_id = 0

    def send(self, message: dict) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(message).encode() + b"\n")
        self.process.stdin.flush()

    def request(self, method: str, params: dict) -> dict:
        self.next_id += 1
        wanted = self.next_id
        self.send({"jsonrpc": "2.0", "id": wanted, "method": method, "params": params})
        assert self.process.stdout is not None
        while True:
            line = self.process.stdout.readline()
            expect(line != b"", f"{method}: the server closed stdout\n{self.stderr_text()}")
            message = json.loads(line)
            if message.get("id") == wanted:
                expect("error" not in message, f"{method}: {message}")
                return message["result"]

    def call(self, tool: str, arguments: dict) -> dict:
        return self.request("tools/call", {"name": tool, "arguments": arguments})

    def stderr_text(self) -> str:
        self.stderr.seek(0)
        return self.stderr.read().decode(errors="replace")

    def close(self) -> int:
        assert self.process.stdin is not None
        self.process.stdin.close()
        try:
            return self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            raise Failed("the server did not exit within 30 s of stdin closing")


def structured(result: dict) -> dict:
    envelope = result.get("structuredContent")
    expect(isinstance(envelope, dict), f"no structuredContent: {result}")
    return envelope


def served(session: Session, args: argparse.Namespace) -> dict:
    tools = {tool["name"] for tool in session.request("tools/list", {})["tools"]}
    expect(tools == TOOLS, f"tools: {sorted(tools)}")

    info = structured(session.call("server_info", {}))
    expect(info["status"] == "success", f"server_info: {info}")
    data = info["data"]
    if args.time_zone:
        expect(data["time_zone"] == args.time_zone, f"time zone {data['time_zone']}")
    posture = data["posture"]
    expect(posture["landlock"] == "fully_enforced", f"landlock: {posture}")
    expect(posture["seccomp"] is True, f"seccomp: {posture}")
    memory = data["limits"]["memory"]
    if args.budget_bytes:
        expect(
            memory["budget_bytes"] == args.budget_bytes,
            f"memory budget {memory['budget_bytes']}, expected {args.budget_bytes}",
        )
    if args.spill_backing:
        spill = data["limits"]["spill"]
        expect(spill is not None and spill["backing"] == args.spill_backing, f"spill: {spill}")

    counted = structured(
        session.call("query", {"sql": "SELECT count(*) AS n FROM cgm_readings"})
    )
    expect(counted["status"] == "success", f"query: {counted}")
    rows = counted["data"]["rows"]
    expect(rows and rows[0][0] > 0, f"no readings: {rows}")

    round_trips = []
    for _ in range(args.rounds):
        start = time.monotonic()
        answer = structured(session.call("query", {"sql": "SELECT 1 AS one"}))
        round_trips.append((time.monotonic() - start) * 1000)
        expect(answer["status"] == "success", f"SELECT 1: {answer}")
    return {
        "landlock_abi": posture["landlock_abi"],
        "memory_budget_bytes": memory["budget_bytes"],
        "round_trip_ms_p50": round(statistics.median(round_trips), 2) if round_trips else None,
        "round_trips": len(round_trips),
    }


def refused(session: Session) -> dict:
    answer = structured(session.call("query", {"sql": "SELECT 1"}))
    expect(answer["status"] == "error", f"query ran: {answer}")
    error = answer["error"]
    expect(error["kind"] == "sandbox_unavailable", f"error: {error}")
    expect(
        "most likely that filter (a container runtime's seccomp profile" in error["message"],
        f"the refusal does not name the inherited seccomp filter: {error['message']}",
    )
    return {}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--expect", choices=["served", "refused"], default="served")
    parser.add_argument("--time-zone")
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--label", default="container")
    parser.add_argument("--budget-bytes", type=int)
    parser.add_argument("--spill-backing", choices=["disk", "memory"])
    parser.add_argument("command", nargs="+")
    args = parser.parse_args()

    session = Session(args.command)
    try:
        opened = session.request(
            "initialize",
            {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "duckgate-container-check", "version": "1"},
            },
        )
        startup_ms = (time.monotonic() - session.started) * 1000
        expect(opened["serverInfo"]["name"] == "duckgate", f"initialize: {opened}")
        session.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        figures = served(session, args) if args.expect == "served" else refused(session)
        code = session.close()
        wanted = 0 if args.expect == "served" else 1
        expect(code == wanted, f"exit code {code}, expected {wanted}\n{session.stderr_text()}")
    except (Failed, json.JSONDecodeError, KeyError, TypeError) as error:
        print(f"session {args.label}: FAILED: {error}")
        if session.process.poll() is None:
            session.process.kill()
        print(session.stderr_text(), file=sys.stderr)
        return 1
    figures["startup_ms"] = round(startup_ms, 1)
    print(f"session {args.label}: ok")
    print(json.dumps({"label": args.label, **figures}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
