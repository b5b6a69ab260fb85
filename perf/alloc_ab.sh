#!/bin/bash
# Chorus with buffers from malloc against buffers from chorus::allocateShared (--alloc), in
# paired rounds whose order alternates, so that a machine whose speed drifts between runs
# (a shared VM) still gives a fair ratio per round.
#
#   perf/alloc_ab.sh [BUILD_DIR]
#   env: ROUNDS=10 RANKS=2 COLLECTIVES="allgather allreduce reduce_scatter" SIZES="-b 1M -e 16M -f 4"
#        TIME=0.15 (seconds per size) PLACEMENT=oop
# Prints every run (round coll alloc bytes time_us busbw), then per collective and size the
# median time of each, and the median, spread and count of the per-round ratios shared/malloc.
set -euo pipefail
BUILD=${1:-build}
ROUNDS=${ROUNDS:-10}
RANKS=${RANKS:-2}
COLLECTIVES=${COLLECTIVES:-"allgather allreduce reduce_scatter"}
SIZES=${SIZES:-"-b 1M -e 16M -f 4"}
TIME=${TIME:-0.15}
PLACEMENT=${PLACEMENT:-oop}
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for ((r = 1; r <= ROUNDS; r++)); do
  if ((r % 2)); then order="malloc shared"; else order="shared malloc"; fi
  for c in $COLLECTIVES; do
    for a in $order; do
      # shellcheck disable=SC2086
      "$BUILD/bin/chorus-run" -n "$RANKS" -- "$BUILD/bin/chorus-bench" "$c" $SIZES -t "$TIME" \
        --placement "$PLACEMENT" --alloc "$a" --csv --no-progress 2>/dev/null | sed 's/^\[[0-9]*\] //' |
        awk -F, -v r=$r -v c=$c -v a=$a -v ip=$([ "$PLACEMENT" = ip ] && echo 1 || echo 0) \
          '$1=="chorus" {print r, c, a, $4, ip ? $15 : $9, ip ? $19 : $13}' | tee -a "$out"
    done
  done
done
python3 - "$out" <<'PY'
import collections, statistics as st, sys
d = {}
for line in open(sys.argv[1]):
    r, c, a, b, t, bw = line.split()
    d[(int(r), c, int(b), a)] = float(t)
for c, b in sorted({(k[1], k[2]) for k in d}):
    rounds = [r for r in sorted({k[0] for k in d}) if (r, c, b, "malloc") in d and (r, c, b, "shared") in d]
    m = [d[(r, c, b, "malloc")] for r in rounds]
    s = [d[(r, c, b, "shared")] for r in rounds]
    q = [y / x for x, y in zip(m, s)]
    print(f"# {c:15s} {b:>10d} B  malloc {st.median(m):9.1f} us  shared {st.median(s):9.1f} us  "
          f"shared/malloc {st.median(q):.2f} [{min(q):.2f}-{max(q):.2f}], shared faster in "
          f"{sum(x < 1 for x in q)}/{len(q)}")
PY
