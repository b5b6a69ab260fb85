#!/bin/bash
# Is the selector's pick the fastest algorithm on this machine? Calibrates with chorus-tune, then
# runs perf/algorithms_bench.cc at each rank count over shared memory: every algorithm measured
# beside its prediction, the pick, and a "within 10% (or the noise)" summary per run.
#
#   perf/algorithms.sh [BUILD_DIR] [OUT_DIR]      (defaults: build, perf/results/algorithms)
#   env: RANKS="2 4"  COLLECTIVES="allreduce"  SIZES=8:256M  FACTOR=8  ALSO=64K,1M,64M
#        ROUNDS=5  TARGET_MS=20  TUNE=1 (0: predict from the built-in estimates)
#
# Writes OUT_DIR/<collective>-<ranks>.txt (the table) and .csv, and OUT_DIR/chorus.tune.
set -euo pipefail
BUILD=${1:-build}
OUT=${2:-perf/results/algorithms}
BIN=$BUILD/bin
for tool in chorus-run algorithms_bench; do
  [ -x "$BIN/$tool" ] || { echo "algorithms.sh: $BIN/$tool not built" >&2; exit 2; }
done
mkdir -p "$OUT"
if [ "${TUNE:-1}" = 1 ]; then
  [ -x "$BIN/chorus-tune" ] || { echo "algorithms.sh: $BIN/chorus-tune not built (or TUNE=0)" >&2; exit 2; }
  "$BIN/chorus-run" -n 2 -- "$BIN/chorus-tune" --out "$OUT/chorus.tune" | tee "$OUT/tune.txt"
  export CHORUS_TUNE_FILE=$OUT/chorus.tune
fi
echo "# $(date -u +%FT%TZ) $(git rev-parse --short HEAD 2>/dev/null || echo '?'), load: $(cut -d' ' -f1-3 /proc/loadavg)"
for coll in ${COLLECTIVES:-allreduce}; do
  for n in ${RANKS:-2 4}; do
    "$BIN/chorus-run" -n "$n" --no-tag-output -- "$BIN/algorithms_bench" --collective "$coll" \
      --sizes "${SIZES:-8:256M}" --factor "${FACTOR:-8}" --also "${ALSO:-64K,1M,64M}" \
      --rounds "${ROUNDS:-5}" --target-ms "${TARGET_MS:-20}" --csv "$OUT/$coll-$n.csv" |
      tee "$OUT/$coll-$n.txt"
  done
done
grep -h "^# summary" "$OUT"/*.txt
