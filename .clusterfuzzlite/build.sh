#!/bin/bash -eu
# Builds every cargo-fuzz target of fuzz/ and leaves the fuzzer binaries (and their seed corpora)
# in $OUT, as ClusterFuzzLite/OSS-Fuzz expect. Runs inside the base-builder-rust image, and on a
# developer machine with OUT, SRC and WORK set to scratch folders (stable Rust is taken into
# nightly mode with RUSTC_BOOTSTRAP there).
#
#   OUT=$(mktemp -d) SRC=$(mktemp -d) WORK=$(mktemp -d) bash .clusterfuzzlite/build.sh

# Also when started as `bash build.sh`, which ignores the options on the #! line.
set -euo pipefail

: "${OUT:?OUT must name the folder that receives the fuzzers}"
: "${SRC:?SRC must be set}"
: "${WORK:?WORK must be set}"

# The repository root: this script lives in .clusterfuzzlite/, and the Dockerfile copies the
# tree to $SRC/duckgate and this script to $SRC/.
if [ -f "$(dirname "$0")/../fuzz/Cargo.toml" ]; then
  cd "$(dirname "$0")/.."
else
  cd "$SRC/duckgate"
fi

if ! rustc --version | grep -q nightly; then
  # cargo-fuzz passes -Z flags (sanitizers, coverage); a stable toolchain accepts them only so.
  export RUSTC_BOOTSTRAP=1
fi

# -O: optimised, as the fuzzers run in production mode; debug assertions on so overflows and
# broken invariants in the validator abort instead of wrapping silently.
cargo fuzz build -O --debug-assertions

# Where cargo put the binaries, as cargo itself reports it (honours CARGO_TARGET_DIR).
target_dir="$(cargo metadata --manifest-path fuzz/Cargo.toml --format-version 1 --no-deps |
  grep -o '"target_directory":"[^"]*"' | cut -d'"' -f4)"
triple="$(rustc -vV | sed -n 's/^host: //p')"
bin_dir="$target_dir/$triple/release"

count=0
for target in $(cargo fuzz list); do
  cp "$bin_dir/$target" "$OUT/$target"
  # The committed seeds become the starting corpus ($OUT/<target>_seed_corpus.zip).
  if [ -d "fuzz/corpus/$target" ] && [ -n "$(ls -A "fuzz/corpus/$target")" ]; then
    (cd "fuzz/corpus/$target" && zip -q -r "$OUT/${target}_seed_corpus.zip" .)
  fi
  # A SQL dictionary, when the fuzz workspace ships one.
  if [ -f "fuzz/$target.dict" ]; then
    cp "fuzz/$target.dict" "$OUT/$target.dict"
  elif [ -f fuzz/sql.dict ]; then
    cp fuzz/sql.dict "$OUT/$target.dict"
  fi
  count=$((count + 1))
done

if [ "$count" -eq 0 ]; then
  echo "build.sh: no fuzz targets found in fuzz/" >&2
  exit 1
fi
echo "build.sh: $count fuzzer(s) in $OUT"
