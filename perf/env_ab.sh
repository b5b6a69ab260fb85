#!/bin/bash
# Did a setting make anything slower or faster? The same build run with two environments,
# A and B alternating within every round (and which goes first alternating between rounds),
# compared by perf/ab_compare.py as perf/ab.sh compares two commits.
#
#   perf/env_ab.sh "BASE_ENV" "NEW_ENV" [OUT_DIR]   e.g. perf/env_ab.sh CHORUS_STREAM_BYTES=0 ""
#   env: ROUNDS=5  RANKS="2 4"  COLLECTIVES="allreduce allgather reduce_scatter"
#        SIZES="-b 8 -e 256M -f 2"  TIME=0.2 (seconds per size)  BUILD=build
#        PLACEMENT=oop (or ip: in place)
set -euo pipefail
[ $# -ge 2 ] || { sed -n '2,9p' "$0" >&2; exit 2; }
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=$ROOT/${BUILD:-build}/bin
BASE_ENV=$1 NEW_ENV=$2
OUT=${3:-$ROOT/perf/results/env-ab}
mkdir -p "$OUT"

source "$ROOT/perf/ab_rounds.sh"
run_side() {  # label coll ranks round
  local setting=$BASE_ENV
  [ "$1" = new ] && setting=$NEW_ENV
  (
    # shellcheck disable=SC2086 # the settings are NAME=VALUE words
    if [ -n "$setting" ]; then export $setting; fi
    bench_csv "$BIN" "$2" "$3" "$OUT/$1-$2-$3-r$4.csv"
  )
}

echo "# $(date -u +%FT%TZ) $(git -C "$ROOT" rev-parse --short HEAD): base '$BASE_ENV' vs new" \
  "'$NEW_ENV', placement ${PLACEMENT:-oop}, load: $(cut -d' ' -f1-3 /proc/loadavg)" |
  tee "$OUT/README.txt"
ab_rounds
