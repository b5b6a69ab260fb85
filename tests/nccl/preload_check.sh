#!/bin/sh
# Usage: preload_check.sh <probe> <chorus libnccl.so.2>
# With LD_PRELOAD the probe, linked against NVIDIA's NCCL, must be answered by Chorus (its INFO
# line at NCCL_DEBUG=INFO, and a host-memory allreduce that NVIDIA's library cannot do without
# a GPU). Without it, Chorus must not appear at all.
probe=$1
lib=$2
out=$(LD_PRELOAD="$lib" NCCL_DEBUG=INFO "$probe" 2>&1)
rc=$?
echo "--- with LD_PRELOAD=$lib (exit $rc):"
echo "$out"
echo "$out" | grep -q "Chorus NCCL face" || { echo "FAIL: no Chorus log line"; exit 1; }
echo "$out" | grep -q "host allreduce ok" || { echo "FAIL: host allreduce did not succeed"; exit 1; }
[ "$rc" -eq 0 ] || { echo "FAIL: probe exited $rc"; exit 1; }
plain=$(NCCL_DEBUG=INFO timeout 60 "$probe" 2>&1)
echo "--- without LD_PRELOAD (exit $?, NVIDIA's library; it may fail without a GPU):"
echo "$plain" | tail -5
if echo "$plain" | grep -q "Chorus NCCL face"; then
  echo "FAIL: Chorus answered without the preload: the probe is not linked against NVIDIA's NCCL"
  exit 1
fi
echo PASS
