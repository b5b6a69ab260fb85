#!/bin/bash
# What the flight recorder costs on the fastest call there is: an 8-byte allreduce on 2 ranks,
# recorder off (CHORUS_TRACE_BUFFER=0) and on (the default 2048), alternating which goes first
# round by round so that drift hits both alike. Prints each run, then medians, spread and the
# slowest run of each, and their ratio.
#   perf/trace_cost.sh [ROUNDS]   (default 7; build/ must hold chorus-run and allreduce-sweep)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=$ROOT/build/bin
runs=$(mktemp)
for round in $(seq 1 "${1:-7}"); do
  order="0 2048"
  ((round % 2)) || order="2048 0"
  for buf in $order; do
    t=$(CHORUS_TRACE_BUFFER=$buf "$BIN/chorus-run" -n 2 --no-tag-output -- \
      "$BIN/allreduce-sweep" -b 8 -e 8 -t 0.5 2>/dev/null | awk '$1 ~ /^[0-9]+$/ {print $5; exit}')
    echo "round $round CHORUS_TRACE_BUFFER=$buf: $t us" | tee -a "$runs"
  done
done
python3 - "$runs" <<'PY'
import statistics, sys
runs = {}
for line in open(sys.argv[1]):
    buf = line.split("=")[1].split(":")[0]
    runs.setdefault(buf, []).append(float(line.split()[-2]))
for buf, v in sorted(runs.items()):
    med = statistics.median(v)
    print(f"CHORUS_TRACE_BUFFER={buf:>4}: median {med:.3f} us, spread {100 * (max(v) - min(v)) / med:.1f}%, "
          f"slowest {max(v):.3f} us over {len(v)} runs")
print(f"on/off: {statistics.median(runs['2048']) / statistics.median(runs['0']):.3f}")
PY
rm -f "$runs"
