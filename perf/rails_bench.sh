#!/bin/bash
# Several NICs per host (rails): the same allreduce across two namespace-hosts of two ranks,
# each host with two links on two separate networks (tests/netns/netns.sh up TAG 2 2), every
# link shaped by tbf to RATE, once with CHORUS_SOCKET_IFNAME naming one rail and once naming
# both. With both, local rank i of each host takes rail i (transport/rails.h), so the
# cross-host step of the hierarchical algorithms runs one per rail, in parallel.
#
#   perf/rails_bench.sh [BUILD_DIR]      (root; default BUILD_DIR=build)
#   env: RATE=1gbit  SIZE=64M  ROUNDS=5  SECONDS_PER=3  ALGO=hierarchical_sliced  NET=socket
#        (NET=ofi runs the libfabric transport over its tcp provider instead)
#
# Rounds alternate one rail and two, so both see the same machine; the summary gives each
# side's median busbw with its spread ((max-min)/median), the slowest round, and the median
# and slowest of the per-round ratio two/one.
set -euo pipefail
BUILD=${1:-build}
BIN=$BUILD/bin
HERE=$(cd "$(dirname "$0")" && pwd)
NETNS=$HERE/../tests/netns/netns.sh
RATE=${RATE:-1gbit}
SIZE=${SIZE:-64M}
ROUNDS=${ROUNDS:-5}
SECS=${SECONDS_PER:-3}
ALGO=${ALGO:-hierarchical_sliced}
NET=${NET:-socket}
TAG=chorus-$$-rails
export CHORUS_SECRET=${CHORUS_SECRET:-$(openssl rand -hex 32)}  # the job is not on loopback
command -v "$BIN/chorus-bench" >/dev/null || { echo "rails_bench: $BIN/chorus-bench not found" >&2; exit 2; }
trap '"$NETNS" down $TAG' EXIT
"$NETNS" up $TAG 2 2
for h in 0 1; do "$NETNS" shape $TAG $h "$RATE"; done

# busbw in Gbit/s of one allreduce of SIZE on 2 hosts x 2 ranks, CHORUS_SOCKET_IFNAME=$1.
run() {
  local out port=$((29700 + RANDOM % 200))
  out=$(for r in 0 1 2 3; do
    "$NETNS" exec $TAG $((r / 2)) env CHORUS_RANK=$r CHORUS_WORLD_SIZE=4 \
      CHORUS_COMM_ID=10.77.0.1:$port CHORUS_SOCKET_IFNAME="$1" CHORUS_NET=$NET \
      CHORUS_ALGO=allreduce=$ALGO \
      "$BIN/chorus-bench" allreduce -b "$SIZE" -e "$SIZE" --placement oop --csv --no-progress \
      -t "$SECS" &
  done; wait)
  echo "$out" | awk -F, '$1=="chorus" {printf "%.3f\n", $13 * 8}'
}

one=() two=()
echo "# rails_bench: 2 hosts x 2 ranks, each link $RATE, allreduce $SIZE ($ALGO, CHORUS_NET=$NET)"
echo "# round  one_rail_Gbit/s  two_rails_Gbit/s  two/one"
for ((i = 1; i <= ROUNDS; i++)); do
  a=$(run "=eth0")
  b=$(run "=eth0,eth1")
  one+=("$a") two+=("$b")
  printf "  %5d  %15s  %16s  %7.2f\n" "$i" "$a" "$b" "$(echo "$b/$a" | bc -l)"
done
python3 - "${one[*]}" "${two[*]}" <<'EOF'
import statistics, sys
one = [float(x) for x in sys.argv[1].split()]
two = [float(x) for x in sys.argv[2].split()]
def side(name, v):
    m = statistics.median(v)
    print("# %-9s median %.3f Gbit/s busbw, spread %.0f%%, slowest %.3f" % (name, m, 100 * (max(v) - min(v)) / m, min(v)))
side("one rail", one)
side("two rails", two)
r = [b / a for a, b in zip(one, two)]
print("# two/one  median %.2fx, slowest round %.2fx" % (statistics.median(r), min(r)))
EOF
