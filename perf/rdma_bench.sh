#!/bin/bash
# The RDMA transport over libfabric's tcp provider against Chorus's own TCP transport and
# iperf3, between two namespace-hosts (tests/netns/netns.sh), one rank per host, in one run.
#
#   perf/rdma_bench.sh [BUILD_DIR]      (root; default BUILD_DIR=build)
#   env: SIZE=64M  ROUNDS=5  SECONDS_PER=2  COLLS="allreduce allgather"  CHORUS_OFI_PROVIDER=tcp
#        any CHORUS_* variable is passed to the ranks (CHORUS_RDMA_LANES, CHORUS_SOCKET_NSTREAMS).
#
# Each round measures, interleaved so that all see the same machine load: iperf3 both ways at
# once with 2 streams (per-direction Gbit/s, the ceiling for a collective that sends and
# receives at once: perf/tcp_bench.sh says why), then busbw of each collective over
# CHORUS_NET=socket and CHORUS_NET=ofi. Printed: every round, then per column the median, the
# spread (min..max) and the ratio ofi/socket of each round with its median and slowest.
set -euo pipefail
BUILD=${1:-build}
BIN=$BUILD/bin
HERE=$(cd "$(dirname "$0")" && pwd)
NETNS=$HERE/../tests/netns/netns.sh
SIZE=${SIZE:-64M}
ROUNDS=${ROUNDS:-5}
SECS=${SECONDS_PER:-2}
COLLS=${COLLS:-"allreduce allgather"}
OFI_PROVIDER=${CHORUS_OFI_PROVIDER:-tcp}  # libfabric 1.17 also has "net" (its newer tcp) and "sockets"
TAG=chorus-$$-rdma
export CHORUS_SECRET=${CHORUS_SECRET:-$(openssl rand -hex 32)}  # the job is not on loopback
for tool in iperf3 "$BIN/chorus-bench"; do
  command -v "$tool" >/dev/null || { echo "rdma_bench: $tool not found" >&2; exit 2; }
done
trap '"$NETNS" down $TAG >/dev/null 2>&1 || true' EXIT
"$NETNS" up $TAG 2 >/dev/null

iperf_bidir() {  # -> per-direction Gbit/s with both ways at once, 2 streams
  "$NETNS" exec $TAG 1 iperf3 -s -1 -D -p 5201 >/dev/null
  sleep 0.3
  "$NETNS" exec $TAG 0 iperf3 -c 10.77.0.2 -p 5201 -t "$SECS" -P 2 --bidir -J |
    python3 -c 'import json,sys
e = json.load(sys.stdin)["end"]
print("%.2f" % ((e["sum_received"]["bits_per_second"] + e["sum_received_bidir_reverse"]["bits_per_second"]) / 2e9))'
}

chorus() {  # NET COLL -> busbw in Gbit/s
  local out
  out=$(for r in 0 1; do
    "$NETNS" exec $TAG $r env CHORUS_NET="$1" CHORUS_OFI_PROVIDER="$OFI_PROVIDER" CHORUS_RANK=$r \
      CHORUS_WORLD_SIZE=2 CHORUS_COMM_ID=10.77.0.1:29700 \
      "$BIN/chorus-bench" "$2" -b "$SIZE" -e "$SIZE" --placement oop --csv --no-progress -t "$SECS" &
  done; wait)
  echo "$out" | awk -F, '$1=="chorus" {printf "%.2f\n", $13 * 8}'
}

cols="iperf3_bidir"
for c in $COLLS; do cols="$cols ${c}_socket ${c}_ofi"; done
echo "# round $cols   (Gbit/s; size $SIZE, one rank per host)"
rows=()
for ((i = 1; i <= ROUNDS; i++)); do
  row="$(iperf_bidir)"
  for c in $COLLS; do row="$row $(chorus socket "$c") $(chorus ofi "$c")"; done
  echo "  $i $row"
  rows+=("$row")
done
printf "%s\n" "${rows[@]}" | python3 -c '
import statistics, sys
cols = sys.argv[1].split()
rows = [list(map(float, l.split())) for l in sys.stdin if l.strip()]
for k, name in enumerate(cols):
    v = [r[k] for r in rows]
    print("# %-20s median %6.2f  spread %6.2f..%6.2f" % (name, statistics.median(v), min(v), max(v)))
for k in range(1, len(cols), 2):
    ratio = [r[k + 1] / r[k] for r in rows]
    print("# %-20s ofi/socket per round: %s  median %.2f, slowest %.2f" % (
        cols[k].rsplit("_", 1)[0], " ".join("%.2f" % x for x in ratio),
        statistics.median(ratio), min(ratio)))
    bid = [r[k + 1] / r[0] for r in rows]
    print("# %-20s ofi/iperf3_bidir median %.2f" % ("", statistics.median(bid)))
' "$cols"
