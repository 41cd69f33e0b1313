#!/usr/bin/env bash
# Redraw the README's charts (docs/charts/*.png) with `duckgate plot` on a fresh demo database:
# one chart per kind, each from the query shown beside it here.
#
# usage: devtools/charts.sh [DUCKGATE_BINARY]
#
# DUCKGATE_BINARY defaults to $CARGO_TARGET_DIR/release/duckgate (else target/release/duckgate).
# The demo's readings end when it runs and carry sensor noise, so each run draws slightly
# different data; the layout is the same.
set -euo pipefail
REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
exe="${1:-${CARGO_TARGET_DIR:-$REPO_ROOT/target}/release/duckgate}"
if [ ! -x "$exe" ]; then
  echo "charts: no duckgate binary at $exe (cargo build --release first)" >&2
  exit 1
fi
out="$REPO_ROOT/docs/charts"
mkdir -p "$out"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
db="$scratch/demo.duckdb"
DUCKGATE_LOG=warn "$exe" demo --out "$db" >/dev/null

# The last DAYS days of the demo's readings.
last() { echo "FROM cgm_readings WHERE read_at >= (SELECT max(read_at) FROM cgm_readings) - INTERVAL $1 DAY"; }
# plot KIND FILE ARGS... SQL
plot() {
  local kind=$1 file=$2
  shift 2
  DUCKGATE_LOG=warn "$exe" plot --db "$db" --kind "$kind" --out "$out/$file.png" "$@"
}

plot line line --title "Glucose, last 24 hours" --target 70:180 \
  "SELECT read_at, glucose_mg_dl $(last 1) ORDER BY read_at"
plot line line-90-days --title "Glucose, last 90 days" --target 70:180 \
  "SELECT read_at, glucose_mg_dl $(last 90) ORDER BY read_at"
plot agp agp "SELECT read_at, glucose_mg_dl $(last 14)"
plot tir tir "SELECT glucose_mg_dl $(last 14)"
plot histogram histogram --bins 40 --target 70:180 "SELECT glucose_mg_dl $(last 14)"
plot bar bar --title "Mean glucose per day" \
  "SELECT strftime(read_at::DATE, '%a %d') AS day, round(avg(glucose_mg_dl), 1) AS mean_mg_dl
   $(last 7) GROUP BY read_at::DATE ORDER BY read_at::DATE"
plot scatter scatter --title "Glucose by time of day, last 7 days" \
  "SELECT hour(read_at) + minute(read_at) / 60 AS hour_of_day, glucose_mg_dl $(last 7)"
