#!/usr/bin/env bash
# duckgate against the official MCP SDKs over stdio (check_python.py, check_typescript.ts), at
# protocol 2026-07-28 and 2025-11-25, on a fresh demo database.
#
# usage: run.sh [--if-installed] [--db PATH] [DUCKGATE_BINARY]
#
# DUCKGATE_BINARY defaults to $CARGO_TARGET_DIR/release/duckgate (else target/release/duckgate);
# it may be any program that runs duckgate with the arguments it is given (CI's runs it in a
# container: devtools/container/check.sh). Install the SDKs first with install.sh. With
# --if-installed, an SDK that is not installed is skipped with a message instead of failing the
# run (CI has no network to install them). With --db, the scripts serve that demo database, a
# path as the server sees it, instead of a fresh one `DUCKGATE_BINARY demo` writes.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_ROOT="$(cd "$HERE/../.." && pwd)"

if_installed=false
if [ "${1:-}" = "--if-installed" ]; then
  if_installed=true
  shift
fi
given_db=""
if [ "${1:-}" = "--db" ]; then
  given_db=${2:?--db needs a path}
  shift 2
fi
exe="${1:-${CARGO_TARGET_DIR:-$REPO_ROOT/target}/release/duckgate}"
if [ ! -x "$exe" ]; then
  echo "sdk_compat: no duckgate binary at $exe (cargo build --release first)" >&2
  exit 1
fi

have_python=false
have_typescript=false
[ -x "$HERE/.venv/bin/python" ] && "$HERE/.venv/bin/python" -c 'import mcp, jsonschema' 2>/dev/null &&
  have_python=true
command -v node >/dev/null && [ -d "$HERE/node_modules/@modelcontextprotocol/client" ] &&
  [ -d "$HERE/node_modules/@modelcontextprotocol/sdk" ] && [ -x "$HERE/node_modules/.bin/tsx" ] &&
  have_typescript=true
missing=()
$have_python || missing+=("Python SDK (.venv)")
$have_typescript || missing+=("TypeScript SDK (node_modules, node)")
if [ "${#missing[@]}" -gt 0 ]; then
  joined="$(printf '%s, ' "${missing[@]}")"
  message="not installed: ${joined%, } (devtools/sdk_compat/install.sh installs them; it needs network)"
  if ! $if_installed; then
    echo "sdk_compat: $message" >&2
    exit 1
  fi
  echo "sdk_compat: skipped, $message"
fi
if ! $have_python && ! $have_typescript; then
  exit 0
fi

scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
db="$scratch/demo.duckdb"
if [ -n "$given_db" ]; then
  db=$given_db
# `demo` writes the synthetic CGM database (and drives a session of its own, shown on failure).
elif ! DUCKGATE_LOG=warn "$exe" demo --out "$db" >"$scratch/demo.log" 2>&1; then
  cat "$scratch/demo.log" >&2
  echo "sdk_compat: duckgate demo --out $db failed" >&2
  exit 1
fi

status=0
if $have_python; then
  "$HERE/.venv/bin/python" "$HERE/check_python.py" "$exe" "$db" || status=1
fi
if $have_typescript; then
  (cd "$HERE" && node_modules/.bin/tsx check_typescript.ts "$exe" "$db") || status=1
fi
exit "$status"
