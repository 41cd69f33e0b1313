#!/usr/bin/env bash
# The README's container route, run for real with podman (as root) on this machine: the runtime
# image from the binary CI built (Containerfile.binary on a Debian base made here by base.sh, as
# no image registry is reachable), then what a new user does and trips over:
#
#   1. check-sandbox in the container: landlock and seccomp in force;
#   2. a folder the container's user cannot enter: the error names it;
#   3. demo into a mounted folder: the database, and next steps that say they are container paths;
#   4. the README's macOS and Windows entries, started exactly as written (docker → podman, the
#      host folder → this run's), each an MCP session (stdlib client, session.py): the time zone
#      from TZ, landlock enforced, a query, round trips; then the official SDKs' check through
#      the same route where they are installed (devtools/sdk_compat);
#   5. a read-only root file system: with a tmpfs on /tmp (podman's default), and without
#      (refused, naming the read-only file system and the way out) then with --temp-dir on a volume;
#   6. SIGTERM to duckgate as PID 1 (no --init), and through --init: it stops at once;
#   7. a seccomp profile without landlock's calls: duckgate refuses, naming the filter;
#   8. --memory on this cgroup v1 host, without a cgroup namespace of its own: the budget follows,
#      and below about 4 GiB the README's fewer workers;
#   9. a single-file mount: the warning.
# And it prints what it measured: the image's size, start-up and round trips in and out of the
# container.
#
# usage: check.sh DUCKGATE_BINARY   (the shipped build: target/release/duckgate after
#                                    `cargo test --release --workspace`)
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_ROOT="$(cd "$HERE/../.." && pwd)"
exe=$(realpath "${1:?usage: check.sh DUCKGATE_BINARY}")

IMAGE=duckgate                      # the README's image name (podman: localhost/duckgate)
BASE=localhost/duckgate-base:bookworm
CACHE="$HOME/.cache/duckgate/container"
USER_ID=10001                       # the image's user (Containerfile)

log() { printf 'container: %s\n' "$*" >&2; }
fail() { log "FAILED: $*"; exit 1; }

scratch=$(mktemp -d)
cleanup() {
  podman rm -f -t 0 duckgate-check-term duckgate-check-init >/dev/null 2>&1 || true
  rm -rf "$scratch"
}
trap cleanup EXIT

# This machine kind's sandbox lacks CAP_SYS_RESOURCE and has a hybrid cgroup layout: podman's
# default limits (raised RLIMIT_NOFILE and RLIMIT_NPROC) cannot be set, and crun refuses hybrid
# cgroups. So podman reads a configuration of this run's own: runc, and limits it can grant.
# Nothing else differs from podman's defaults (its seccomp profile, its tmpfs for --read-only).
export CONTAINERS_CONF="$scratch/containers.conf"
cat >"$CONTAINERS_CONF" <<EOF
[containers]
default_ulimits = ["nofile=$(ulimit -Hn):$(ulimit -Hn)", "nproc=4096:4096"]
[engine]
runtime = "runc"
EOF
PODMAN=$(command -v podman)
podman --version

# --- the image ------------------------------------------------------------------------------
start=$SECONDS
bash "$HERE/base.sh" "$BASE" "$CACHE"
mkdir "$scratch/context"
cp "$exe" "$scratch/context/duckgate"
podman build --quiet -f "$REPO_ROOT/Containerfile.binary" --build-arg "RUNTIME_IMAGE=$BASE" \
  -t "$IMAGE" "$scratch/context" >/dev/null
rm -rf "$scratch/context"
size=$(podman image inspect --format '{{.Size}}' "$IMAGE")
log "image $IMAGE built in $((SECONDS - start))s: $((size / 1000000)) MB uncompressed ($(podman save "$IMAGE" 2>/dev/null | gzip -1 | wc -c | awk '{printf "%d", $1 / 1000000}') MB as a gzipped archive)"

run=("$PODMAN" run --rm --network none)

# --- 1. check-sandbox ---------------------------------------------------------------------------
report=$("${run[@]}" "$IMAGE" check-sandbox) || fail "check-sandbox in the container: $report"
grep -q "confines its query workers fully here" <<<"$report" || fail "check-sandbox: $report"
log "check-sandbox: $(head -n 1 <<<"$report")"

# --- 2. a folder the container's user cannot enter --------------------------------------------
data="$scratch/health"
mkdir -m 0700 "$data"              # root's, 0700: uid $USER_ID inside cannot enter it
touch "$data/cgm.duckdb"
answer=$("${run[@]}" -v "$data:/data:ro" "$IMAGE" query --db /data/cgm.duckdb "SELECT 1" 2>&1) &&
  fail "a query in a folder the container cannot enter succeeded: $answer"
grep -q "the folder /data is not open to this process (uid $USER_ID" <<<"$answer" ||
  fail "the error does not name the folder it cannot enter: $answer"
log "unreadable folder: $(head -n 1 <<<"$answer" | cut -c1-160)…"
rm "$data/cgm.duckdb"

# --- 3. demo into a mounted folder --------------------------------------------------------------
chown "$USER_ID:$USER_ID" "$data"
demo=$("${run[@]}" -e TZ=America/Chicago -v "$data:/data" "$IMAGE" demo --out /data/cgm.duckdb) ||
  fail "demo in the container: $demo"
[ -f "$data/cgm.duckdb" ] || fail "demo wrote no /data/cgm.duckdb into the mounted folder"
grep -q "These paths are inside the container" <<<"$demo" || fail "demo's next steps: $demo"
grep -q -- '-e TZ=America/Chicago -v /Users/me/health:/data:ro duckgate serve --db /data/cgm.duckdb' \
  <<<"$demo" || fail "demo's Claude Code line: $demo"
log "demo into a mounted folder: ok, next steps name the container's paths"

# --- 4. the README's entries --------------------------------------------------------------------
time_zone_of() { # the TZ=… of an entry's arguments
  local arg
  for arg in "$@"; do case "$arg" in TZ=*) echo "${arg#TZ=}" ;; esac; done
}
for name in macos windows; do
  mapfile -t entry < <(python3 "$HERE/readme_entry.py" "$REPO_ROOT/README.md" "$name" "$PODMAN" "$data")
  [ "${#entry[@]}" -gt 3 ] || fail "no $name entry in the README"
  python3 "$HERE/session.py" --label "readme-$name" --time-zone "$(time_zone_of "${entry[@]}")" \
    -- "${entry[@]}"
done
python3 "$HERE/session.py" --label direct --rounds 20 -- "$exe" serve --db "$data/cgm.duckdb"

# The official SDKs through the same route, where devtools/sdk_compat/install.sh installed them.
wrapper="$scratch/duckgate-in-podman"
cat >"$wrapper" <<EOF
#!/bin/sh
# duckgate in the container, as the README's entry runs it (the SDKs clear the environment).
export CONTAINERS_CONF="$CONTAINERS_CONF"
exec "$PODMAN" run -i --rm --init --network none -e TZ=UTC -e DUCKGATE_LOG -v "$data:/data:ro" "$IMAGE" "\$@"
EOF
chmod 755 "$wrapper"
bash "$REPO_ROOT/devtools/sdk_compat/run.sh" --if-installed --db /data/cgm.duckdb "$wrapper"

# --- 5. a read-only root file system ----------------------------------------------------------
python3 "$HERE/session.py" --label read-only-root --rounds 0 --spill-backing memory -- \
  "${run[@]}" -i --init --read-only -v "$data:/data:ro" "$IMAGE" serve --db /data/cgm.duckdb
answer=$("${run[@]}" -i --read-only --read-only-tmpfs=false -v "$data:/data:ro" "$IMAGE" \
  serve --db /data/cgm.duckdb </dev/null 2>&1) && fail "serve on a read-only root without a tmpfs started"
grep -q "The file system is read-only" <<<"$answer" && grep -q -- "--tmpfs /tmp" <<<"$answer" ||
  fail "read-only root: the error does not say what to do: $answer"
log "read-only root without a tmpfs: refused, naming the read-only file system and --tmpfs"
spill="$scratch/spill"
mkdir -m 0700 "$spill"
chown "$USER_ID:$USER_ID" "$spill"
python3 "$HERE/session.py" --label read-only-root-temp-dir --rounds 0 --spill-backing disk -- \
  "${run[@]}" -i --init --read-only --read-only-tmpfs=false -v "$data:/data:ro" -v "$spill:/spill" \
  "$IMAGE" serve --db /data/cgm.duckdb --temp-dir /spill

# --- 6. SIGTERM --------------------------------------------------------------------------------
descendants() { # PID: the command lines of its descendants, one a line
  local child
  for child in $(pgrep -P "$1" || true); do
    tr '\0' ' ' <"/proc/$child/cmdline" 2>/dev/null && echo
    descendants "$child"
  done
}
# `podman stop` sends SIGTERM, waits (-t), then SIGKILLs: a server that ignored SIGTERM as PID 1
# would be killed and exit 137; one that handled it exits 143. The time it took is printed.
for init in "" --init; do
  name=duckgate-check-term
  [ -n "$init" ] && name=duckgate-check-init
  "$PODMAN" run -d -i --name "$name" $init --network none -v "$data:/data:ro" "$IMAGE" \
    serve --db /data/cgm.duckdb >/dev/null
  pid=$(podman inspect --format '{{.State.Pid}}' "$name")
  # Ready once its template and a spare run (the template's command line is its spares').
  for _ in $(seq 150); do
    [ "$(descendants "$pid" | grep -c -- '--start template' || true)" -ge 2 ] && break
    sleep 0.1
  done
  workers=$(descendants "$pid" | grep -c -- '__worker' || true)
  [ "$workers" -ge 2 ] || fail "SIGTERM ${init:-as PID 1}: no template and spare started"
  before=$(date +%s%N)
  podman stop -t 10 "$name" >/dev/null
  took=$((($(date +%s%N) - before) / 1000000))
  code=$(podman inspect --format '{{.State.ExitCode}}' "$name")
  podman rm "$name" >/dev/null
  [ "$code" = 143 ] || fail "SIGTERM ${init:-as PID 1}: exit code $code, expected 143 (128 + SIGTERM)"
  log "SIGTERM ${init:-to duckgate as PID 1}: $workers processes ended, stopped in ${took} ms, exit code $code"
done

# --- 7. a seccomp profile without landlock ------------------------------------------------------
profile="$scratch/seccomp-no-landlock.json"
python3 - /usr/share/containers/seccomp.json "$profile" <<'EOF'
import json, sys
profile = json.load(open(sys.argv[1]))
for rule in profile["syscalls"]:
    rule["names"] = [n for n in rule["names"] if not n.startswith("landlock_")]
profile["syscalls"] = [rule for rule in profile["syscalls"] if rule["names"]]
json.dump(profile, open(sys.argv[2], "w"))
EOF
report=$("${run[@]}" --security-opt "seccomp=$profile" "$IMAGE" check-sandbox) &&
  fail "check-sandbox under a profile without landlock passed: $report"
grep -q "most likely that filter (a container runtime.s seccomp profile" <<<"$report" ||
  fail "check-sandbox does not name the seccomp filter: $report"
python3 "$HERE/session.py" --label seccomp-without-landlock --expect refused -- \
  "${run[@]}" -i --init --security-opt "seccomp=$profile" -v "$data:/data:ro" "$IMAGE" \
  serve --db /data/cgm.duckdb
log "seccomp profile without landlock: refused, naming the filter"

# --- 8. --memory on a cgroup v1 host ----------------------------------------------------------
python3 "$HERE/session.py" --label memory-4g --rounds 0 --budget-bytes $((2 * 1024 * 1024 * 1024)) -- \
  "${run[@]}" -i --init --memory 4g -v "$data:/data:ro" "$IMAGE" serve --db /data/cgm.duckdb

# Below about 4 GiB the defaults do not fit, and duckgate says which flags to lower (README).
answer=$("${run[@]}" -i --memory 2g -v "$data:/data:ro" "$IMAGE" serve --db /data/cgm.duckdb \
  </dev/null 2>&1) && fail "serve with the default workers in 2 GiB started"
grep -q "lower --max-concurrent or --warm-workers" <<<"$answer" || fail "--memory 2g: $answer"
python3 "$HERE/session.py" --label memory-2g --rounds 0 --budget-bytes $((1024 * 1024 * 1024)) -- \
  "${run[@]}" -i --init --memory 2g -v "$data:/data:ro" "$IMAGE" serve --db /data/cgm.duckdb \
  --max-concurrent 2 --warm-workers 1

# --- 9. a single-file mount ---------------------------------------------------------------------
answer=$("${run[@]}" -i -v "$data/cgm.duckdb:/data/cgm.duckdb:ro" "$IMAGE" serve --db /data/cgm.duckdb \
  </dev/null 2>&1) || fail "serve on a single-file mount: $answer"
grep -q "is mounted as a single file" <<<"$answer" || fail "no single-file mount warning: $answer"
log "single-file mount: warned"

log "container route: all checks passed"
