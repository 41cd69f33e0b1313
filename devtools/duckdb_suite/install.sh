#!/usr/bin/env bash
# The venv run.py needs (not committed): DuckDB 2.0.0's Python wheel from PyPI, the same DuckDB
# release duckgate links. Needs python3 >= 3.10 with venv.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
python3 -m venv .venv
.venv/bin/python -m pip install --quiet --disable-pip-version-check -r requirements.txt
.venv/bin/python -c 'import duckdb; print("duckdb", duckdb.__version__)'
