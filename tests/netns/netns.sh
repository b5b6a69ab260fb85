#!/bin/bash
# Several "hosts" on one machine for tests and benchmarks: one network namespace per host,
# joined by veth pairs to a bridge that lives in its own switch namespace, so every address is
# inside namespaces we made. Each host also gets its own small tmpfs, to be bind-mounted on
# /dev/shm in a private mount namespace, so ranks of different hosts cannot share memory.
#
#   netns.sh up TAG N          hosts TAG-h0..TAG-h{N-1}: eth0 = 10.77.0.{i+1}/24, fd77::{i+1}/64
#   netns.sh down TAG          removes everything of TAG (safe to run twice)
#   netns.sh sweep             removes fixtures whose creating process (TAG=chorus-PID-*) died
#   netns.sh shape TAG I RATE  tbf on both directions of host I's link (e.g. 1gbit); "off" clears
#   netns.sh link TAG I up|down
#   netns.sh exec TAG I CMD... CMD in host I: its netns, its /dev/shm, CHORUS_HOSTID=TAG-hI
#   netns.sh addr I            prints host I's IPv4 address
# Needs root (CAP_SYS_ADMIN, CAP_NET_ADMIN) and iproute2.
set -euo pipefail

SHM_ROOT=/run/chorus-netns

addr() { echo "10.77.0.$(($1 + 1))"; }

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
  local tag=$1 n=$2
  down "$tag"
  trap 'down "$tag"' ERR
  ip netns add "$tag-sw"
  ip -n "$tag-sw" link set lo up
  ip -n "$tag-sw" link add br0 type bridge
  ip -n "$tag-sw" link set br0 up
  mkdir -p "$SHM_ROOT/$tag"
  for ((i = 0; i < n; i++)); do
    local h="$tag-h$i"
    ip netns add "$h"
    ip -n "$h" link set lo up
    ip link add eth0 netns "$h" type veth peer name "p$i" netns "$tag-sw"
    ip -n "$tag-sw" link set "p$i" master br0 up
    ip -n "$h" addr add "$(addr "$i")/24" dev eth0
    ip -n "$h" addr add "fd77::$((i + 1))/64" dev eth0 nodad
    ip -n "$h" link set eth0 up
    mkdir -p "$SHM_ROOT/$tag/h$i"
    mount -t tmpfs -o size=1g,mode=1777 "chorus-shm-$h" "$SHM_ROOT/$tag/h$i"
  done
  trap - ERR
}

# tbf on the host's egress and on the switch port's egress (the host's ingress).
shape() {
  local tag=$1 i=$2 rate=$3
  for where in "-n $tag-h$i eth0" "-n $tag-sw p$i"; do
    set -- $where
    tc "$1" "$2" qdisc del dev "$3" root 2>/dev/null || true
    [ "$rate" = off ] || tc "$1" "$2" qdisc add dev "$3" root tbf rate "$rate" burst 256kb latency 50ms
  done
}

cmd=${1:-}; shift || true
case "$cmd" in
  up) up "$1" "$2" ;;
  down) down "$1" ;;
  sweep) sweep ;;
  shape) shape "$1" "$2" "$3" ;;
  link) ip -n "$1-h$2" link set eth0 "$3" ;;
  addr) addr "$1" ;;
  exec)
    tag=$1 i=$2; shift 2
    exec ip netns exec "$tag-h$i" unshare -m --propagation private bash -c \
      'mount --bind "$0" /dev/shm && exec env CHORUS_HOSTID="$1" "${@:2}"' \
      "$SHM_ROOT/$tag/h$i" "$tag-h$i" "$@" ;;
  *) sed -n '2,16p' "$0"; exit 2 ;;
esac
