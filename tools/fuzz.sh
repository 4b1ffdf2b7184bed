#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/, clang + ASan + UBSan) and runs each for SECONDS,
# one after another, seeded from the test fixtures (tools/make_fuzz_corpora.py). First it
# runs the MLX-free unit tests built on the same sanitized code (heron_unit_sanitized).
#
#   tools/fuzz.sh [SECONDS] [TARGET...]     (default: 30 s, every target)
#
# The corpus each run grows is kept in $BUILD/fuzz-corpus/<target> and reused next time;
# past findings (tests/fixtures/fuzz/<target>/) are replayed with the seeds. A crash
# leaves its input in $BUILD/fuzz-artifacts/<target>/ and makes the script fail.
# Environment: HERON_FUZZ_BUILD_DIR (build-fuzz), HERON_VENV (.venv), CC/CXX (clang-14),
# HERON_FUZZ_UNIT=0 to skip the unit tests (.ci/run: its gcc ASan + UBSan pass ran them).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
SECONDS_EACH=${1:-30}
shift || true
BUILD=${HERON_FUZZ_BUILD_DIR:-$ROOT/build-fuzz}
VENV=${HERON_VENV:-$ROOT/.venv}
ALL=(gguf_header safetensors_header tokenizer_json jinja_template api_request runner_ndjson modelfile
     chat_output json_schema)
TARGETS=("${@:-${ALL[@]}}")

log() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }

log "building fuzz targets in $BUILD"
CC=${CC:-clang-14} CXX=${CXX:-clang++-14} cmake -S . -B "$BUILD" -DHERON_FUZZ=ON \
  -DHERON_BUILD_TESTS=OFF -DHERON_VENV="$VENV" -DCMAKE_BUILD_TYPE=Fuzz \
  -DCMAKE_CXX_FLAGS_FUZZ="-O1 -gline-tables-only" ${HERON_CMAKE_ARGS:-} >/dev/null
UNIT=${HERON_FUZZ_UNIT:-1}
units=()
[ "$UNIT" = 1 ] && units=(heron_unit_sanitized)
cmake --build "$BUILD" -j "$(nproc)" --target "${units[@]}" "${TARGETS[@]/#/fuzz_}"

if [ "$UNIT" = 1 ]; then
  log "MLX-free unit tests under ASan + UBSan"
  "$BUILD/fuzz/heron_unit_sanitized" --gtest_brief=1
fi

log "seed corpora from the fixtures"
"$VENV/bin/python" tools/make_fuzz_corpora.py "$BUILD/fuzz-seeds" >/dev/null

failed=()
summary=()
for t in "${TARGETS[@]}"; do
  corpus=$BUILD/fuzz-corpus/$t artifacts=$BUILD/fuzz-artifacts/$t/ logf=$BUILD/fuzz-$t.log
  findings=$ROOT/tests/fixtures/fuzz/$t  # past crashes: replayed first, never written to
  mkdir -p "$corpus" "$artifacts"
  dirs=("$corpus" "$BUILD/fuzz-seeds/$t")
  [ -d "$findings" ] && dirs+=("$findings")
  log "fuzz_$t for ${SECONDS_EACH}s"
  if "$BUILD/fuzz/fuzz_$t" -max_total_time="$SECONDS_EACH" -timeout=10 -rss_limit_mb=2048 \
      -print_final_stats=1 -artifact_prefix="$artifacts" "${dirs[@]}" \
      >"$logf" 2>&1; then
    status=ok
  else
    status=FAILED
    failed+=("$t")
    tail -40 "$logf" >&2
  fi
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$logf" | grep -o '[0-9]*$' || echo "?")
  cov=$(grep -o 'cov: [0-9]*' "$logf" | tail -1 | grep -o '[0-9]*' || echo "?")
  summary+=("$(printf '%-20s %-7s %12s execs  cov %6s  corpus %5s' "$t" "$status" "$execs" "$cov" \
    "$(ls "$corpus" | wc -l)")")
done
printf '%s\n' "${summary[@]}"
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzzing found problems in: ${failed[*]} (inputs in $BUILD/fuzz-artifacts/)" >&2
  exit 1
fi
