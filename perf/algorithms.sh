#!/bin/bash
# Is the selector's pick the fastest algorithm on this machine? Calibrates with chorus-tune, then
# runs perf/algorithms_bench.cc at each rank count over shared memory: every algorithm measured
# beside its prediction, the pick, and a "within 10% (or the noise)" summary per run.
#
#   perf/algorithms.sh [BUILD_DIR] [OUT_DIR]      (defaults: build, perf/results/algorithms)
#   env: RANKS="2 4"  COLLECTIVES="allreduce"  SIZES=8:256M  FACTOR=8  ALSO=64K,1M,64M
#        ROUNDS=5  TARGET_MS=20  TUNE=1 (0: predict from the built-in estimates)
#        SWEEPS=1 (more: that many whole sweeps on one calibration, then a verdict against the
#                  noise between sweeps, perf/algorithms_across.py)
#
# Writes OUT_DIR/<collective>-<ranks>.txt (the table) and .csv, and OUT_DIR/chorus.tune; with
# SWEEPS > 1 the tables go to OUT_DIR/sweep-K/ and the combined verdict to
# OUT_DIR/<collective>-<ranks>-across.txt.
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
SWEEPS=${SWEEPS:-1}
for sweep in $(seq 1 "$SWEEPS"); do
  dir=$OUT
  [ "$SWEEPS" -gt 1 ] && dir=$OUT/sweep-$sweep && mkdir -p "$dir"
  for coll in ${COLLECTIVES:-allreduce}; do
    for n in ${RANKS:-2 4}; do
      "$BIN/chorus-run" -n "$n" --no-tag-output -- "$BIN/algorithms_bench" --collective "$coll" \
        --sizes "${SIZES:-8:256M}" --factor "${FACTOR:-8}" --also "${ALSO:-64K,1M,64M}" \
        --rounds "${ROUNDS:-5}" --target-ms "${TARGET_MS:-20}" --csv "$dir/$coll-$n.csv" |
        tee "$dir/$coll-$n.txt"
    done
  done
  grep -h "^# summary" "$dir"/*.txt
done
if [ "$SWEEPS" -gt 1 ]; then
  for coll in ${COLLECTIVES:-allreduce}; do
    for n in ${RANKS:-2 4}; do
      python3 "$(dirname "$0")/algorithms_across.py" "$OUT"/sweep-*/"$coll-$n.csv" > "$OUT/$coll-$n-across.txt"
    done
  done
  grep -h "^# across" "$OUT"/*-across.txt
fi
