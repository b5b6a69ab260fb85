#!/usr/bin/env bash
# chorus-train against PyTorch DDP (gloo, CPU) on the same job: Fashion-MNIST, MLP
# 784-512-256-10, SGD lr 0.05 momentum 0.9, global batch 128, one BLAS thread per rank.
# Prints accuracy per epoch and throughput side by side for each rank count, plus
# chorus-train's time split with and without overlapping the gradient allreduces.
#   perf/train_compare.sh [-n "1 2 4"] [-e EPOCHS] [-b BUILD_DIR] [-- extra chorus-train args]
# Timings are only meaningful on a quiet machine (check `uptime` first).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${CHORUS_BUILD_DIR:-$ROOT/build}"
RANKS="1 2 4"
EPOCHS=3
while (($#)); do
  case "$1" in
    -n) RANKS="$2"; shift 2 ;;
    -e) EPOCHS="$2"; shift 2 ;;
    -b) BUILD="$2"; shift 2 ;;
    --) shift; break ;;
    *) echo "usage: $0 [-n \"1 2 4\"] [-e epochs] [-b build_dir] [-- chorus-train args]" >&2; exit 2 ;;
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

OUT="$(mktemp -d /tmp/train-compare-XXXXXX)"
trap 'rm -rf "$OUT"' EXIT
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
echo "# load before: $(uptime)"
for n in $RANKS; do
  echo "# $n rank(s): chorus-train (overlap), chorus-train --no-overlap, PyTorch DDP"
  "$BUILD/bin/chorus-run" -n "$n" -- "$BUILD/bin/chorus-train" --quiet --epochs "$EPOCHS" \
    --metrics "$OUT/chorus-$n.json" "${EXTRA[@]}" | grep -v '^\[[1-9]' | sed 's/^/  /'
  "$BUILD/bin/chorus-run" -n "$n" -- "$BUILD/bin/chorus-train" --quiet --epochs "$EPOCHS" \
    --no-overlap --metrics "$OUT/naive-$n.json" "${EXTRA[@]}" >/dev/null
  if [ "$n" -eq 1 ]; then
    "$PY" "$ROOT/perf/pytorch_ddp.py" --epochs "$EPOCHS" --json "$OUT/torch-$n.json" | sed 's/^/  /'
  else
    # --redirects/--tee 1: Debian's torch 1.13 on Python 3.11 cannot parse their default "0"
    # (IntFlag no longer iterates the zero member), and torchrun fails before starting anyone.
    "$PY" -m torch.distributed.run --standalone --nproc_per_node "$n" --redirects 1 --tee 1 \
      "$ROOT/perf/pytorch_ddp.py" --epochs "$EPOCHS" --json "$OUT/torch-$n.json" 2>/dev/null |
      sed -n 's/^\[default0\]://p' | sed 's/^/  /'
  fi
done
echo "# load after: $(uptime)"

"$PY" - "$OUT" $RANKS <<'PYEOF'
import json, sys
out, ranks = sys.argv[1], [int(r) for r in sys.argv[2:]]
def load(kind, n):
    return json.load(open(f"{out}/{kind}-{n}.json"))["epochs"]
print()
print(f"{'ranks':>5} {'epoch':>5} | {'chorus acc':>10} {'samples/s':>10} {'comm':>6} {'exposed':>7}"
      f" | {'no-overlap':>10} {'comm':>6} {'exposed':>7} | {'ddp acc':>8} {'samples/s':>10}"
      f" | {'chorus/ddp':>10}")
base = None
for n in ranks:
    c, v, t = load("chorus", n), load("naive", n), load("torch", n)
    for ec, ev, et in zip(c, v, t):
        share = lambda e, k: 100 * e[k] / e["wall_s"]
        print(f"{n:>5} {ec['epoch']:>5} | {100*ec['test_accuracy']:>9.2f}% {ec['samples_per_s']:>10.0f}"
              f" {share(ec,'comm_s'):>5.0f}% {share(ec,'wait_s'):>6.0f}%"
              f" | {ev['samples_per_s']:>10.0f} {share(ev,'comm_s'):>5.0f}% {share(ev,'wait_s'):>6.0f}%"
              f" | {100*et['test_accuracy']:>7.2f}% {et['samples_per_s']:>10.0f}"
              f" | {ec['samples_per_s']/et['samples_per_s']:>9.2f}x")
    # Epoch 1 includes warm-up; compare the later epochs' mean.
    sps = sum(e["samples_per_s"] for e in c[1:] or c) / len(c[1:] or c)
    if base is None:
        base = sps
    print(f"{'':>5} {'mean':>5} | chorus {sps:.0f} samples/s = {sps/base:.2f}x its first row")
print("comm: share of wall time the communication thread spent in gradient allreduces; "
      "exposed: share the training thread waited for them")
PYEOF
