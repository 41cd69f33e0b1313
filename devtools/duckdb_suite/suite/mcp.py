"""A minimal MCP client over stdio for `duckgate serve`: initialize, then `tools/call` of
`query`, reading the reply's structuredContent. JSON-RPC 2.0, one message per line."""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import threading
import time

PROTOCOL_VERSION = "2025-11-25"


class GatewayFailure(Exception):
    """The server gave no usable reply: it died, went silent, or answered out of protocol."""


class Server:
    def __init__(self, argv: list, stderr_path: str, start_timeout: float = 30.0):
        self._stderr = open(stderr_path, "ab")
        self.proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            start_new_session=True,
        )
        self._lines: queue.Queue = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self._next_id = 1
        self.initialize_result = self.request(
            "initialize",
            {
                "protocolVersion": PROTOCOL_VERSION,
                "capabilities": {},
                "clientInfo": {"name": "duckdb-suite", "version": "1"},
            },
            timeout=start_timeout,
        )
        self.notify("notifications/initialized", {})

    def _read(self):
        for line in self.proc.stdout:
            self._lines.put(line)
        self._lines.put(None)

    def notify(self, method: str, params: dict):
        self._send({"jsonrpc": "2.0", "method": method, "params": params})

    def _send(self, message: dict):
        try:
            self.proc.stdin.write((json.dumps(message) + "\n").encode("utf-8"))
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError) as e:
            raise GatewayFailure(f"server closed its input: {e}") from e

    def request(self, method: str, params: dict, timeout: float) -> dict:
        rid = self._next_id
        self._next_id += 1
        self._send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise GatewayFailure(f"no reply to {method} within {timeout:.0f} s")
            try:
                line = self._lines.get(timeout=left)
            except queue.Empty:
                continue
            if line is None:
                code = self.proc.poll()
                raise GatewayFailure(f"server exited (status {code}) before replying to {method}")
            try:
                message = json.loads(line)
            except ValueError as e:
                raise GatewayFailure(f"a stdout line that is not JSON: {line[:200]!r}") from e
            if message.get("id") != rid:
                # A notification (progress, log) or a request from the server: not ours.
                if "method" in message and "id" in message:
                    self._send({"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32601, "message": "not supported"}})
                continue
            if "error" in message:
                raise GatewayFailure(f"JSON-RPC error: {json.dumps(message['error'])[:300]}")
            return message.get("result", {})

    def query(self, sql: str, limit: int, timeout: float) -> dict:
        """The `query` tool's structuredContent (the envelope: status, data, error)."""
        result = self.request("tools/call", {"name": "query", "arguments": {"sql": sql, "limit": limit}}, timeout)
        envelope = result.get("structuredContent")
        if not isinstance(envelope, dict):
            text = " ".join(c.get("text", "") for c in result.get("content", []) if isinstance(c, dict))
            raise GatewayFailure(f"reply without structuredContent: {text[:300]}")
        return envelope

    def close(self):
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.proc.wait()
        self._stderr.close()
