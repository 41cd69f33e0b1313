#!/usr/bin/env bash
# Install the official MCP SDKs that run.sh drives, into this folder: a Python venv (.venv, from
# requirements.txt) and node_modules (from package-lock.json). Needs PyPI and the npm registry;
# neither folder is committed. Needs python3 >= 3.10 with venv, and node >= 20 with npm.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"

python3 -m venv .venv
.venv/bin/python -m pip install --quiet --disable-pip-version-check -r requirements.txt
.venv/bin/python -c 'from importlib.metadata import version; print("installed mcp", version("mcp"))'

npm ci --no-fund --no-audit
node -e 'for (const p of ["@modelcontextprotocol/client", "@modelcontextprotocol/sdk"]) console.log("installed", p, require(`./node_modules/${p}/package.json`).version)'
