#!/bin/bash
# Raw TCP throughput next to Chorus's allreduce/allgather bus bandwidth, between two
# namespace-hosts (tests/netns/netns.sh), unshaped and with both links shaped by tbf.
#
#   perf/tcp_bench.sh [BUILD_DIR]        (root; default BUILD_DIR=build)
#   env: RATES="unshaped 1gbit"  SIZE=64M  SECONDS_PER=3  REPEAT=3  NSTREAMS=2 (CHORUS_SOCKET_NSTREAMS)
#        any CHORUS_* variable is passed to the ranks.
#
# Raw: iperf3 with as many parallel streams as Chorus uses (and 1), one way, and both ways at
# once (--bidir). Chorus: chorus-bench with one rank per host; with two ranks busbw equals the
# bytes each rank sends per second in each direction while it receives as many.
#
# Which raw figure to hold busbw against: on real hosts with full-duplex NICs, the one-way
# rate and the per-direction rate of --bidir are the same (the shaped rows show it). Here both
# "hosts" share this machine's cores, and every byte costs a kernel copy on each side, so two
# directions at once get about half the one-way rate: the per-direction --bidir rate (the sum
# of both directions / 2) is the ceiling for a collective that sends and receives at once.
# Each row is the best of REPEAT runs of each, interleaved, so all see the same machine load.
set -euo pipefail
BUILD=${1:-build}
BIN=$BUILD/bin
HERE=$(cd "$(dirname "$0")" && pwd)
NETNS=$HERE/../tests/netns/netns.sh
RATES=${RATES:-"unshaped 1gbit"}
SIZE=${SIZE:-64M}
SECS=${SECONDS_PER:-3}
REPEAT=${REPEAT:-3}
export CHORUS_SOCKET_NSTREAMS=${NSTREAMS:-${CHORUS_SOCKET_NSTREAMS:-2}}
TAG=chorus-$$-bench
for tool in iperf3 "$BIN/chorus-bench"; do
  command -v "$tool" >/dev/null || { echo "tcp_bench: $tool not found" >&2; exit 2; }
done
trap '"$NETNS" down $TAG' EXIT

iperf() {  # PARALLEL [--bidir] -> Gbit/s received (with --bidir: both directions' sum / 2)
  "$NETNS" exec $TAG 1 iperf3 -s -1 -D -p 5201 >/dev/null
  sleep 0.3
  "$NETNS" exec $TAG 0 iperf3 -c 10.77.0.2 -p 5201 -t "$SECS" -P "$1" ${2:-} -J |
    python3 -c 'import json,sys
e = json.load(sys.stdin)["end"]
r = e["sum_received"]["bits_per_second"]
if "sum_received_bidir_reverse" in e: r = (r + e["sum_received_bidir_reverse"]["bits_per_second"]) / 2
print("%.2f" % (r / 1e9))'
}

chorus() {  # COLL -> busbw in Gbit/s
  local out
  out=$(for r in 0 1; do
    "$NETNS" exec $TAG $r env CHORUS_RANK=$r CHORUS_WORLD_SIZE=2 CHORUS_COMM_ID=10.77.0.1:29600 \
      "$BIN/chorus-bench" "$1" -b "$SIZE" -e "$SIZE" --placement oop --csv --no-progress -t "$SECS" &
  done; wait)
  echo "$out" | awk -F, '$1=="chorus" {printf "%.2f\n", $13 * 8}'
}

best() { sort -g | tail -1; }

pct() { echo "100*$1/$2" | bc -l; }
P=$CHORUS_SOCKET_NSTREAMS
printf "# %-9s %8s %8s %9s %10s %10s %7s %7s %9s %9s\n" link "raw_1" "raw_$P" "bidir_$P" \
  allreduce allgather "ar/raw" "ag/raw" "ar/bidir" "ag/bidir"
echo "#           (Gbit/s; raw = best one-way, bidir = per direction with both ways at once)"
for rate in $RATES; do
  "$NETNS" up $TAG 2
  if [ "$rate" != unshaped ]; then "$NETNS" shape $TAG 0 "$rate"; "$NETNS" shape $TAG 1 "$rate"; fi
  r1=() rp=() rb=() ar=() ag=()
  for ((i = 0; i < REPEAT; i++)); do
    r1+=("$(iperf 1)"); rp+=("$(iperf "$P")"); rb+=("$(iperf "$P" --bidir)")
    ar+=("$(chorus allreduce)"); ag+=("$(chorus allgather)")
  done
  b1=$(printf "%s\n" "${r1[@]}" | best); bp=$(printf "%s\n" "${rp[@]}" | best)
  bb=$(printf "%s\n" "${rb[@]}" | best)
  bar=$(printf "%s\n" "${ar[@]}" | best); bag=$(printf "%s\n" "${ag[@]}" | best)
  raw=$(printf "%s\n%s\n" "$b1" "$bp" | best)
  printf "  %-9s %8s %8s %9s %10s %10s %6.0f%% %6.0f%% %8.0f%% %8.0f%%\n" "$rate" "$b1" "$bp" "$bb" \
    "$bar" "$bag" "$(pct "$bar" "$raw")" "$(pct "$bag" "$raw")" "$(pct "$bar" "$bb")" "$(pct "$bag" "$bb")"
  echo "#   all runs: raw1=[${r1[*]}] raw$P=[${rp[*]}] bidir$P=[${rb[*]}] allreduce=[${ar[*]}] allgather=[${ag[*]}] (size $SIZE)"
  "$NETNS" down $TAG
done
