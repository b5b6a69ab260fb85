#!/bin/bash
# Instructions per warm small call, counted by callgrind: stable where timings drift with the
# machine's load. Rank 0 runs under valgrind, rank 1 natively (always ahead, so rank 0 seldom
# waits and the count is the call's own path). docs/performance.md tracks the figures.
#
#   perf/call_cost.sh [BUILD_DIR]          default build/
#   env: OPS="allreduce broadcast sendrecv"  BYTES=8  CALLS=2000
set -euo pipefail
if [ "${CALL_COST_RANK0:-}" = 1 ]; then  # the wrapper chorus-run starts for each rank
  if [ "$CHORUS_RANK" = 0 ]; then
    exec valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$CALL_COST_OUT" "$@"
  fi
  exec "$@"
fi
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=${1:-$ROOT/build}/bin
[ -x "$BIN/call-cost" ] || { echo "perf/call_cost.sh: build call-cost first" >&2; exit 2; }
command -v valgrind >/dev/null || { echo "perf/call_cost.sh: needs valgrind" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
calls=${CALLS:-2000}
printf "# %-10s %8s %12s   (2 ranks, rank 0 under callgrind, %s warm calls)\n" op bytes Ir/call "$calls"
for op in ${OPS:-allreduce broadcast sendrecv}; do
  CALL_COST_RANK0=1 CALL_COST_OUT="$work/$op.%p" "$BIN/chorus-run" -n 2 --no-tag-output -- \
    "$0" "$BIN/call-cost" "$op" "${BYTES:-8}" "$calls" > "$work/$op.log" 2>&1 ||
    { cat "$work/$op.log" >&2; exit 1; }
  # The dump at the client request ("part 1") holds exactly the measured calls.
  total=$(callgrind_annotate "$work"/"$op".*.1 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}')
  awk -v op="$op" -v b="${BYTES:-8}" -v t="$total" -v n="$calls" 'BEGIN { printf "  %-10s %8s %12.0f\n", op, b, t / n }'
done
