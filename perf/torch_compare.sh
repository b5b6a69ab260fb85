#!/usr/bin/env bash
# The chorus torch.distributed backend against gloo, through torch.distributed, in one run:
#  1. allreduce sweep 8 B .. 64 MiB (perf/torch_allreduce.py: both backends in one job, rounds
#     alternating), with 2 and 4 processes;
#  2. DDP samples/s on perf/pytorch_ddp.py's MLP (Fashion-MNIST, global batch 128, one thread
#     per rank, OpenBLAS kernels that fit the CPU: perf/openblas_kernels.sh), with 2 and 4
#     processes, ROUNDS runs per backend alternating chorus/gloo; each
#     run trains 2 epochs on the first TRAIN samples and the second epoch's samples/s counts.
# Writes JSON and tables into OUT and the plot docs/pytorch.png (gnuplot).
#   perf/torch_compare.sh [-n "2 4"] [-r ROUNDS] [-t TRAIN] [-o OUT] [-b BUILD_DIR] [-B]
# -B pins local rank i to CPU i (both backends alike); torchrun itself leaves ranks unpinned.
# Timings are only meaningful on a quiet machine: the load is printed before and after.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${CHORUS_BUILD_DIR:-$ROOT/build}"
RANKS="2 4"
ROUNDS=5
TRAIN=15360
OUT="$ROOT/perf/results/torch"
BIND=()
while (($#)); do
  case "$1" in
    -n) RANKS="$2"; shift 2 ;;
    -r) ROUNDS="$2"; shift 2 ;;
    -t) TRAIN="$2"; shift 2 ;;
    -o) OUT="$2"; shift 2 ;;
    -b) BUILD="$2"; shift 2 ;;
    -B) BIND=(--bind); shift ;;
    *) echo "usage: $0 [-n \"2 4\"] [-r rounds] [-t train_samples] [-o out_dir] [-b build_dir] [-B]" >&2
       exit 2 ;;
  esac
done
PY=/usr/bin/python3  # Debian's python3-torch is installed for the system interpreter
if [ ! -f "$BUILD/python/chorus_torch/__init__.py" ]; then
  echo "no $BUILD/python/chorus_torch: build first (cmake --build build); CMake says at" \
       "configure time whether it found torch" >&2
  exit 1
fi
export PYTHONPATH="$BUILD/python" OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
# tests/torch/torchrun.py: a free rendezvous port, and the --redirects/--tee Debian's torch needs.
torchrun() {
  local n="$1"; shift
  "$PY" "$ROOT/tests/torch/torchrun.py" --nproc_per_node "$n" "$@" \
    2>/dev/null | sed -n 's/^\[default0\]://p'
}
mkdir -p "$OUT"
{
  echo "# $(date -u +%FT%TZ) $(git -C "$ROOT" rev-parse --short HEAD) on $(getconf _NPROCESSORS_ONLN) CPUs"
  echo "# ranks pinned to CPUs: ${BIND[*]:-no (as torchrun leaves them)}; DDP: $ROUNDS runs per backend, $TRAIN samples"
  source "$ROOT/perf/openblas_kernels.sh"
  echo "# load before: $(uptime)"
  for n in $RANKS; do
    torchrun "$n" "$ROOT/perf/torch_allreduce.py" "${BIND[@]}" --json "$OUT/allreduce-$n.json"
    echo
  done
  for n in $RANKS; do
    for r in $(seq "$ROUNDS"); do
      for b in chorus gloo; do
        torchrun "$n" "$ROOT/perf/pytorch_ddp.py" --backend "$b" --epochs 2 --train-limit "$TRAIN" "${BIND[@]}" \
          --json "$OUT/ddp-$b-$n-$r.json" >/dev/null
      done
    done
  done
  echo "# load after: $(uptime)"
  "$PY" "$ROOT/perf/torch_summary.py" "$OUT" "$ROOT/docs/pytorch.png" $RANKS
} | tee "$OUT/summary.txt"
