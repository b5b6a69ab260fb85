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
OUT=${3:-$ROOT/perf/results/env-ab}
mkdir -p "$OUT"

run_one() {  # label env coll ranks round
  env -- $2 "$BIN/chorus-run" -n "$4" --no-tag-output -- "$BIN/chorus-bench" "$3" \
    ${SIZES:--b 8 -e 256M -f 2} -t "${TIME:-0.2}" --placement "${PLACEMENT:-oop}" -c 0 --no-progress --csv \
    > "$OUT/$1-$3-$4-r$5.csv"
}

echo "# $(date -u +%FT%TZ) $(git -C "$ROOT" rev-parse --short HEAD): base '$1' vs new '$2'," \
  "placement ${PLACEMENT:-oop}," \
  "load: $(cut -d' ' -f1-3 /proc/loadavg)" | tee "$OUT/README.txt"
for round in $(seq 1 "${ROUNDS:-5}"); do
  for coll in ${COLLECTIVES:-allreduce allgather reduce_scatter}; do
    for n in ${RANKS:-2 4}; do
      if ((round % 2)); then
        run_one base "$1" "$coll" "$n" "$round"
        run_one new "$2" "$coll" "$n" "$round"
      else
        run_one new "$2" "$coll" "$n" "$round"
        run_one base "$1" "$coll" "$n" "$round"
      fi
    done
  done
  echo "# round $round done, load: $(cut -d' ' -f1-3 /proc/loadavg)"
done
AB_COLUMN="${PLACEMENT:-oop}_us" python3 "$ROOT/perf/ab_compare.py" "$OUT" | tee -a "$OUT/README.txt"
