#!/bin/bash
# OSU-style send/recv latency of two Chorus builds and Open MPI, alternating in every round so
# that the machine's drift hits all three alike; then, per size, each one's median over the
# rounds with its fastest and slowest round, and in how many rounds the new build was at
# least as fast as MPI.
#
#   perf/latency_ab.sh BASE_BUILD NEW_BUILD [OUT_FILE]    build dirs (bin/chorus-run, bin/chorus-bench)
#   env: ROUNDS=7  SIZES=1:8K (chorus-bench latency -m)
# A base build of an older commit:
#   git worktree add /tmp/base REV && cmake -S /tmp/base -B /tmp/base/build -DCMAKE_BUILD_TYPE=Release
#   cmake --build /tmp/base/build -j2 --target chorus-run chorus-bench
set -euo pipefail
[ $# -ge 2 ] || { sed -n '2,12p' "$0" >&2; exit 2; }
BASE=$1 NEW=$2
OUT=${3:-/dev/stdout}
sizes=${SIZES:-1:8K}

# One sweep, as "size=us" pairs on one line.
sweep() {
  case $1 in
    base | new)
      local b=$BASE
      [ "$1" = new ] && b=$NEW
      "$b/bin/chorus-run" -n 2 --no-tag-output -- "$b/bin/chorus-bench" latency -m "$sizes" --no-progress ;;
    mpi)
      mpirun --allow-run-as-root --mca btl self,vader -n 2 \
        "$NEW/bin/chorus-bench" latency --impl mpi -m "$sizes" --no-progress ;;
  esac 2>&1 | awk '/^ *[0-9]+ +[0-9.]+ *$/ {printf "%s=%s ", $1, $2}'
}

rounds=$(mktemp)
trap 'rm -f "$rounds"' EXIT
{
  echo "# $(date -u +%FT%TZ) OSU latency (one-way us), 2 ranks: base $BASE, new $NEW, mpi (vader);" \
    "load $(cut -d' ' -f1-3 /proc/loadavg)"
  for round in $(seq 1 "${ROUNDS:-7}"); do
    order="base new mpi"
    ((round % 2)) || order="mpi new base"
    for impl in $order; do echo "round $round $impl $(sweep "$impl")"; done
  done
} > "$rounds"
python3 - "$rounds" <<'EOF' | { cat "$rounds"; cat; } > "$OUT"
import statistics, sys
runs = {}
for line in open(sys.argv[1]):
    if not line.startswith("round"):
        continue
    _, rnd, impl, *pairs = line.split()
    for p in pairs:
        size, us = p.split("=")
        runs.setdefault((int(size), impl), {})[int(rnd)] = float(us)
print("# size: median [fastest, slowest] per build; new <= mpi in how many rounds")
for size in sorted({s for s, _ in runs}):
    cells = []
    for impl in ("base", "new", "mpi"):
        v = list(runs.get((size, impl), {}).values())
        cells.append(f"{impl} {statistics.median(v):.2f} [{min(v):.2f}, {max(v):.2f}]" if v else f"{impl} -")
    new, mpi = runs.get((size, "new"), {}), runs.get((size, "mpi"), {})
    wins = sum(1 for r in new if r in mpi and new[r] <= mpi[r])
    print(f"{size:>7} B  " + "  ".join(cells) + f"  new<=mpi {wins}/{len(new)}")
EOF
