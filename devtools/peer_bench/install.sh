#!/usr/bin/env bash
# Install the peer DuckDB MCP servers that run.py compares duckgate against, and the client
# (the official MCP Python SDK) it drives them all with, from PyPI into two venvs here (neither is
# committed):
#   .venv       mcp 2.3.0 (the client), duckdb (builds the database), mcp-server-motherduck
#   .venv-mcp1  mcp-server-duckdb, which needs the SDK's 1.x server API
# A peer that fails to install is reported and skipped; run.py then says it is missing.
# Needs python3 >= 3.11 with venv.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
pip_install() { "$1/bin/python" -m pip install --quiet --disable-pip-version-check -r "$2"; }

python3 -m venv .venv || exit 1
if ! pip_install .venv requirements.txt; then
  echo "peer_bench: installing requirements.txt failed; retrying without the peer" >&2
  .venv/bin/python -m pip install --quiet --disable-pip-version-check "$(grep -E '^mcp==' requirements.txt)" "$(grep -E '^duckdb==' requirements.txt)" || exit 1
fi
python3 -m venv .venv-mcp1 && pip_install .venv-mcp1 requirements-mcp1.txt ||
  echo "peer_bench: mcp-server-duckdb (requirements-mcp1.txt) did not install; run.py will skip it" >&2

for v in .venv .venv-mcp1; do
  [ -x "$v/bin/python" ] && "$v/bin/python" - "$v" <<'PY'
import sys
from importlib.metadata import version, PackageNotFoundError
out = []
for p in ("mcp", "duckdb", "mcp-server-motherduck", "fastmcp", "mcp-server-duckdb"):
    try:
        out.append(f"{p} {version(p)}")
    except PackageNotFoundError:
        pass
print(f"{sys.argv[1]}: " + ", ".join(out))
PY
done
