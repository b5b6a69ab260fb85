#!/bin/bash
# Several "hosts" on one machine for tests and benchmarks: one network namespace per host,
# joined by veth pairs to a bridge that lives in its own switch namespace, so every address is
# inside namespaces we made. Each host also gets its own small tmpfs, to be bind-mounted on
# /dev/shm in a private mount namespace, so ranks of different hosts cannot share memory.
#
#   netns.sh up TAG N [R]      hosts TAG-h0..TAG-h{N-1}: eth0 = 10.77.0.{i+1}/24, fd77::{i+1}/64;
#                              with R rails, also eth1..eth{R-1} = 10.77.{r}.{i+1}/24, each rail
#                              its own bridge (a network of its own, as rail-optimised fabrics)
#   netns.sh down TAG          removes everything of TAG (safe to run twice)
#   netns.sh sweep             removes fixtures whose creating process (TAG=chorus-PID-*) died
#   netns.sh shape TAG I RATE  tbf on both directions of each of host I's links (e.g. 1gbit);
#                              "off" clears
#   netns.sh link TAG I up|down  every link of host I
#   netns.sh exec TAG I CMD... CMD in host I: its netns, its /dev/shm, CHORUS_HOSTID=TAG-hI
#   netns.sh addr I            prints host I's IPv4 address
# Needs root (CAP_SYS_ADMIN, CAP_NET_ADMIN) and iproute2.
set -euo pipefail

SHM_ROOT=/run/chorus-netns

addr() { echo "10.77.${2:-0}.$(($1 + 1))"; }
# The switch's port of host I on rail R.
port() { if [ "$2" = 0 ]; then echo "p$1"; else echo "p$1r$2"; fi; }
# Host I's interfaces, one per rail.
links() { ip -n "$1-h$2" -o link show | awk -F': ' '$2 ~ /^eth[0-9]+@/ {sub(/@.*/, "", $2); print $2}'; }

down() {
  local tag=$1
  for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep -E "^${tag}-(h[0-9]+|sw)$" || true); do
    ip netns del "$ns" 2>/dev/null || true
  done
  if [ -d "$SHM_ROOT/$tag" ]; then
    for d in "$SHM_ROOT/$tag"/h*; do
      [ -d "$d" ] && { umount "$d" 2>/dev/null || true; rmdir "$d" 2>/dev/null || true; }
    done
    rmdir "$SHM_ROOT/$tag" 2>/dev/null || true
  fi
}

sweep() {
  for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep -E '^chorus-[0-9]+-' || true); do
    local pid=${ns#chorus-}; pid=${pid%%-*}
    kill -0 "$pid" 2>/dev/null || down "${ns%-*}"
  done
}

up() {
  local tag=$1 n=$2 rails=${3:-1}
  down "$tag"
  trap 'down "$tag"' ERR
  ip netns add "$tag-sw"
  ip -n "$tag-sw" link set lo up
  for ((r = 0; r < rails; r++)); do
    ip -n "$tag-sw" link add "br$r" type bridge
    ip -n "$tag-sw" link set "br$r" up
  done
  mkdir -p "$SHM_ROOT/$tag"
  for ((i = 0; i < n; i++)); do
    local h="$tag-h$i"
    ip netns add "$h"
    ip -n "$h" link set lo up
    for ((r = 0; r < rails; r++)); do
      ip link add "eth$r" netns "$h" type veth peer name "$(port "$i" "$r")" netns "$tag-sw"
      ip -n "$tag-sw" link set "$(port "$i" "$r")" master "br$r" up
      ip -n "$h" addr add "$(addr "$i" "$r")/24" dev "eth$r"
      ip -n "$h" link set "eth$r" up
    done
    ip -n "$h" addr add "fd77::$((i + 1))/64" dev eth0 nodad
    mkdir -p "$SHM_ROOT/$tag/h$i"
    mount -t tmpfs -o size=1g,mode=1777 "chorus-shm-$h" "$SHM_ROOT/$tag/h$i"
  done
  trap - ERR
}

# tbf on the host's egress and on the switch port's egress (the host's ingress), every rail.
shape() {
  local tag=$1 i=$2 rate=$3 eth
  for eth in $(links "$tag" "$i"); do
    for where in "-n $tag-h$i $eth" "-n $tag-sw $(port "$i" "${eth#eth}")"; do
      set -- $where
      tc "$1" "$2" qdisc del dev "$3" root 2>/dev/null || true
      [ "$rate" = off ] || tc "$1" "$2" qdisc add dev "$3" root tbf rate "$rate" burst 256kb latency 50ms
    done
  done
}

cmd=${1:-}; shift || true
case "$cmd" in
  up) up "$1" "$2" "${3:-1}" ;;
  down) down "$1" ;;
  sweep) sweep ;;
  shape) shape "$1" "$2" "$3" ;;
  link) for eth in $(links "$1" "$2"); do ip -n "$1-h$2" link set "$eth" "$3"; done ;;
  addr) addr "$1" ;;
  exec)
    tag=$1 i=$2; shift 2
    exec ip netns exec "$tag-h$i" unshare -m --propagation private bash -c \
      'mount --bind "$0" /dev/shm && exec env CHORUS_HOSTID="$1" "${@:2}"' \
      "$SHM_ROOT/$tag/h$i" "$tag-h$i" "$@" ;;
  *) sed -n '2,19p' "$0"; exit 2 ;;
esac
