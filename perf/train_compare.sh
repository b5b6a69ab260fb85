#!/usr/bin/env bash
# chorus-train's strategies against PyTorch DDP (gloo, CPU) on the same job: Fashion-MNIST, MLP
# 784-512-256-10, SGD lr 0.05 (cosine decay) momentum 0.9, global batch 128, one BLAS thread per rank, on
# the same machine in one run. For every rank count it runs each strategy (ddp with and
# without overlap, zero, tensor, pipeline, and on 4+ ranks the two hybrids) and PyTorch DDP,
# ROUNDS times in alternation, and prints per configuration: test accuracy per epoch (the
# first round's), samples/s as the median over rounds of each run's mean over epochs 2..E
# (epoch 1 includes warm-up) with the spread and the slowest round, the speed-up over ddp on
# 1 rank, the ratio to PyTorch DDP, and parameter + optimiser bytes on the rank
# holding the most.
# Strategies: ddp (overlap as chorus-train decides from the CPUs), ddp-overlap, ddp-no-overlap,
# ddp-shard (--shard-optimizer --bucket-mb 1), zero, tensor, pipeline, hybrid-tensor,
# hybrid-pipeline (all but ddp-shard by default).
#   perf/train_compare.sh [-n "1 2 4"] [-e EPOCHS] [-r ROUNDS] [-s "ddp zero ..."]
#                         [-b BUILD_DIR] [-- extra chorus-train args]
# Timings are only meaningful on a quiet machine: the load average is printed before and after.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${CHORUS_BUILD_DIR:-$ROOT/build}"
RANKS="1 2 4"
EPOCHS=3
ROUNDS=3
STRATEGIES="ddp ddp-overlap ddp-no-overlap zero tensor pipeline hybrid-tensor hybrid-pipeline"
while (($#)); do
  case "$1" in
    -n) RANKS="$2"; shift 2 ;;
    -e) EPOCHS="$2"; shift 2 ;;
    -r) ROUNDS="$2"; shift 2 ;;
    -s) STRATEGIES="$2"; shift 2 ;;
    -b) BUILD="$2"; shift 2 ;;
    --) shift; break ;;
    *) echo "usage: $0 [-n \"1 2 4\"] [-e epochs] [-r rounds] [-s strategies] [-b build_dir]" \
         "[-- chorus-train args]" >&2; exit 2 ;;
  esac
done
EXTRA=("$@")
PY=/usr/bin/python3  # Debian's python3-torch is installed for the system interpreter

if [ ! -x "$BUILD/bin/chorus-train" ]; then
  echo "no $BUILD/bin/chorus-train: build first (./scripts/demo, or cmake --build build)" >&2
  exit 1
fi
if ! "$PY" -c 'import torch' 2>/dev/null; then
  echo "PyTorch is missing: installing Debian's python3-torch (large, once)"
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq python3-torch
fi

# chorus-train arguments of a strategy on n ranks; empty when the layout does not exist there
# (the default model has 3 layers, so a pipeline has at most 3 stages; a hybrid needs 2 x 2).
strategy_args() {
  local s="$1" n="$2"
  case "$s" in
    ddp) echo "--strategy ddp" ;;
    ddp-overlap) echo "--strategy ddp --overlap" ;;
    ddp-no-overlap) echo "--strategy ddp --no-overlap" ;;
    ddp-shard) echo "--strategy ddp --shard-optimizer --bucket-mb 1" ;;
    zero | tensor) echo "--strategy $s" ;;
    pipeline) ((n <= 3)) && echo "--strategy pipeline" || true ;;
    hybrid-*) ((n >= 4 && n % 2 == 0)) && echo "--strategy hybrid --hybrid ${s#hybrid-}" || true ;;
  esac
}

OUT="$(mktemp -d /tmp/train-compare-XXXXXX)"
trap 'rm -rf "$OUT"' EXIT
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
source "$(dirname "${BASH_SOURCE[0]}")/openblas_kernels.sh"
echo "# load before: $(uptime)"
for round in $(seq "$ROUNDS"); do
  for n in $RANKS; do
    for s in $STRATEGIES; do
      args="$(strategy_args "$s" "$n")"
      [ -n "$args" ] || continue
      # shellcheck disable=SC2086
      "$BUILD/bin/chorus-run" -n "$n" -- "$BUILD/bin/chorus-train" --quiet --epochs "$EPOCHS" \
        $args --metrics "$OUT/$s-$n-$round.%r.json" "${EXTRA[@]}" >"$OUT/$s-$n-$round.log" 2>&1 ||
        { echo "chorus-train $args on $n rank(s) failed:" >&2; tail -5 "$OUT/$s-$n-$round.log" >&2; exit 1; }
    done
    if [ "$n" -eq 1 ]; then
      "$PY" "$ROOT/perf/pytorch_ddp.py" --epochs "$EPOCHS" --json "$OUT/torch-$n-$round.0.json" >/dev/null
    else
      # tests/torch/torchrun.py: a free rendezvous port, and the --redirects/--tee 1 that
      # Debian's torch 1.13 on Python 3.11 needs (it cannot parse their default "0").
      "$PY" "$ROOT/tests/torch/torchrun.py" --nproc_per_node "$n" \
        "$ROOT/perf/pytorch_ddp.py" --epochs "$EPOCHS" --json "$OUT/torch-$n-$round.0.json" \
        >/dev/null 2>&1
    fi
    echo "# round $round, $n rank(s) done: $(uptime | sed 's/.*load/load/')"
  done
done
echo "# load after: $(uptime)"
"$PY" "$ROOT/perf/train_compare_table.py" "$OUT" "$ROUNDS" "$RANKS" "$STRATEGIES torch"
