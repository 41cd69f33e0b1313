"""duckgate against the official MCP Python SDK (the `mcp` package), over stdio.

Usage: check_python.py DUCKGATE_BINARY DATABASE

For each protocol revision it starts `duckgate serve --db DATABASE`, connects with the SDK's
`Client`, checks the revision the session speaks, lists the tools (the order duckgate documents),
calls `list_tables`, `describe_table` (a foreign key's target is an object), `query` and `plot`,
and validates each result's structuredContent against the tool's
outputSchema with `jsonschema`. Sessions:

- 2026-07-28, pinned: `mode="2026-07-28"` adopts the revision with no probe; an explicit
  `server/discover` at 2026-07-28 must list it among the supported versions;
- 2026-07-28, negotiated: `mode="auto"` probes `server/discover` and must settle on 2026-07-28;
- 2025-11-25: `mode="legacy"`, the `initialize` handshake. The SDK always offers its newest
  handshake revision there (2025-11-25) and cannot be pinned to an older one.

Prints one line per check and a closing `python-sdk: N passed, N failed`; exits 1 on a failure.
"""

from __future__ import annotations

import asyncio
import base64
import sys
import traceback
from importlib.metadata import version as package_version
from typing import Any

import jsonschema
from mcp import Client, StdioServerParameters

TOOL_ORDER = [
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
]
ALL_VERSIONS = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"]


def expect(condition: bool, message: str) -> None:
    if not condition:
        raise AssertionError(message)


def check_structured(schemas: dict[str, Any], tool: str, result: Any) -> dict[str, Any]:
    structured = result.structured_content
    expect(isinstance(structured, dict), f"{tool}: no structuredContent object: {result!r}")
    jsonschema.validate(structured, schemas[tool])
    return structured


async def session(exe: str, db: str, mode: str, expected_version: str) -> None:
    # Only warnings from the server on stderr (the start-up line repeats for every session).
    server = StdioServerParameters(
        command=exe, args=["serve", "--db", db], env={"DUCKGATE_LOG": "warn"}
    )
    async with Client(server, mode=mode, raise_exceptions=True) as client:
        expect(
            client.protocol_version == expected_version,
            f"negotiated {client.protocol_version}, wanted {expected_version}",
        )
        if expected_version == "2026-07-28":
            raw = await client.session.send_discover("2026-07-28")
            expect(
                raw.get("supportedVersions") == ALL_VERSIONS,
                f"server/discover supportedVersions: {raw.get('supportedVersions')}",
            )
        if mode != "2026-07-28":
            info = client.session.server_info
            expect(info is not None and info.name == "duckgate", f"serverInfo: {info!r}")

        tools = (await client.list_tools()).tools
        names = [tool.name for tool in tools]
        expect(names == TOOL_ORDER, f"tool order: {names}")
        schemas = {}
        for tool in tools:
            expect(tool.output_schema is not None, f"{tool.name} has no outputSchema")
            jsonschema.Draft202012Validator.check_schema(tool.output_schema)
            schemas[tool.name] = tool.output_schema

        tables = await client.call_tool("list_tables", {})
        envelope = check_structured(schemas, "list_tables", tables)
        expect(envelope["status"] == "success", f"list_tables: {envelope}")
        expect(not tables.is_error, "list_tables: isError")

        described = await client.call_tool("describe_table", {"table_name": "cgm_readings"})
        envelope = check_structured(schemas, "describe_table", described)
        expect(envelope["status"] == "success", f"describe_table: {envelope}")
        device = next(c for c in envelope["data"]["columns"] if c["name"] == "device_id")
        expect(
            device["references"] == {"table": "devices", "column": "device_id"},
            f"describe_table: {device}",
        )

        result = await client.call_tool(
            "query", {"sql": "SELECT count(*) AS n FROM cgm_readings"}
        )
        envelope = check_structured(schemas, "query", result)
        expect(envelope["status"] == "success", f"query: {envelope}")
        expect(envelope["data"]["row_count"] == 1, f"query: {envelope}")

        chart = await client.call_tool(
            "plot",
            {"sql": "SELECT read_at, glucose_mg_dl FROM cgm_readings", "kind": "agp"},
        )
        envelope = check_structured(schemas, "plot", chart)
        expect(envelope["status"] == "success", f"plot: {envelope}")
        image = chart.content[0]
        expect(image.type == "image" and image.mime_type == "image/png", f"plot content: {image!r}")
        expect(
            base64.b64decode(image.data).startswith(b"\x89PNG\r\n\x1a\n"),
            "plot: the image is not a PNG",
        )
        expect(len(envelope["data"]["summary"]["rows"]) == 24, f"plot summary: {envelope}")

        refused = await client.call_tool("query", {"sql": "DROP TABLE cgm_readings"})
        envelope = check_structured(schemas, "query", refused)
        expect(envelope["status"] == "refused", f"refused query: {envelope}")
        expect(refused.is_error is True, "refused query: isError is not true")

        # The starter prompts: both listed, each naming the tools it uses, and each one's text.
        prompts = (await client.list_prompts()).prompts
        names = [prompt.name for prompt in prompts]
        expect(names == ["glucose_review", "last_night"], f"prompts: {names}")
        for prompt in prompts:
            for tool in ("list_tables", "describe_table", "query", "plot"):
                expect(tool in (prompt.description or ""), f"{prompt.name} does not name {tool}")
            arguments = {"days": "14"} if prompt.name == "glucose_review" else {}
            got = await client.get_prompt(prompt.name, arguments)
            text = got.messages[0].content.text
            expect("plot with kind" in text, f"{prompt.name}: {text[:200]}")


async def main() -> int:
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    exe, db = sys.argv[1], sys.argv[2]
    print(f"python-sdk: mcp {package_version('mcp')}, jsonschema {package_version('jsonschema')}")
    runs = [
        ("2026-07-28", "2026-07-28", "pinned (mode='2026-07-28')"),
        ("auto", "2026-07-28", "negotiated (mode='auto', server/discover)"),
        ("legacy", "2025-11-25", "initialize (mode='legacy')"),
    ]
    passed = failed = 0
    for mode, expected, how in runs:
        label = f"{expected} {how}: list_tables, describe_table, query, plot (PNG image), outputSchema, prompts"
        try:
            await asyncio.wait_for(session(exe, db, mode, expected), timeout=120)
        except Exception:  # noqa: BLE001 - every failure is reported, then counted
            failed += 1
            print(f"FAIL python-sdk {label}")
            traceback.print_exc()
        else:
            passed += 1
            print(f"ok   python-sdk {label}")
    print(f"python-sdk: {passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
