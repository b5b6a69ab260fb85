#!/bin/bash
# Did a change make any size slower? Builds two commits side by side and runs the same
# chorus-bench sweeps on both, A and B alternating within every round (and which goes first
# alternating between rounds) so that the machine's drift hits both alike. perf/ab_compare.py
# then prints, per collective, rank count and size, the median time of each over the rounds,
# their ratio, each side's spread and slowest round, and a verdict against a 5% threshold and
# the run-to-run noise.
#
#   perf/ab.sh BASE [NEW] [OUT_DIR]      NEW defaults to HEAD, OUT_DIR to perf/results/ab
#   env: ROUNDS=5  RANKS="2 4"  COLLECTIVES="allreduce allgather reduce_scatter"
#        SIZES="-b 8 -e 256M -f 2"  TIME=0.2 (seconds per size)  AB_DIR=/tmp/chorus-ab (builds)
#        PLACEMENT=oop (or ip: in place)
set -euo pipefail
[ $# -ge 1 ] || { sed -n '2,12p' "$0" >&2; exit 2; }
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BASE=$(git -C "$ROOT" rev-parse --short "$1")
NEW=$(git -C "$ROOT" rev-parse --short "${2:-HEAD}")
OUT=${3:-$ROOT/perf/results/ab}
AB_DIR=${AB_DIR:-/tmp/chorus-ab}
mkdir -p "$OUT" "$AB_DIR"

build_rev() {  # a clean checkout of the commit, built for benchmarking
  local rev=$1 src=$AB_DIR/$1
  [ -d "$src" ] || git -C "$ROOT" worktree add --detach "$src" "$rev" >/dev/null
  cmake -S "$src" -B "$src/build" -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$src/build" -j"$(nproc)" --target chorus-run chorus-bench >/dev/null
}
build_rev "$BASE"
build_rev "$NEW"

source "$ROOT/perf/ab_rounds.sh"
run_side() {  # label coll ranks round
  local rev=$BASE
  [ "$1" = new ] && rev=$NEW
  bench_csv "$AB_DIR/$rev/build/bin" "$2" "$3" "$OUT/$1-$2-$3-r$4.csv"
}

echo "# $(date -u +%FT%TZ) base $BASE vs new $NEW, placement ${PLACEMENT:-oop}," \
  "load: $(cut -d' ' -f1-3 /proc/loadavg)" | tee "$OUT/README.txt"
ab_rounds
