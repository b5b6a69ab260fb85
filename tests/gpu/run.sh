#!/usr/bin/env bash
# On a machine with an NVIDIA GPU: build with CUDA and run the device tests and the reducer
# benchmark. Usage: tests/gpu/run.sh [build-dir]
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="${1:-$root/build-gpu}"
nvidia-smi -L || true
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DCHORUS_WITH_CUDA=ON >/dev/null
cmake --build "$build" -j"$(nproc)" --target gpu_reduce_test reduce_test
"$build/bin/gpu_reduce_test"
"$build/bin/reduce_test" --gtest_brief=1
