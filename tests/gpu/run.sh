#!/usr/bin/env bash
# On a machine with an NVIDIA GPU: the device tests and the reducer benchmark, as one report.
#   tests/gpu/run.sh [REPORT_DIR]             from a checkout: builds build-gpu/ with CUDA first
#   BUNDLE/run tests/gpu/run.sh [REPORT_DIR]  from a bundle (scripts/bundle): runs its programs
# The report (report.txt, and each step's output) goes to REPORT_DIR, default $OUT or ./gpu-report.
# Every step runs even when one before it failed; the exit status says whether all passed.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
report="${1:-${OUT:-$PWD/gpu-report}}"
mkdir -p "$report"
if [ -n "${CHORUS_BUNDLE:-}" ]; then
  bin="$CHORUS_BUNDLE/bin"
  source_of="bundle $CHORUS_BUNDLE (commit $(cat "$CHORUS_BUNDLE/COMMIT" 2>/dev/null || echo ?))"
else
  root="$(cd "$here/../.." && pwd)"
  build="${CHORUS_GPU_BUILD:-$root/build-gpu}"
  cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DCHORUS_WITH_CUDA=ON >/dev/null &&
    cmake --build "$build" -j"$(nproc)" --target gpu_reduce_test gpu_memory_test reduce_test >"$report/build.txt" 2>&1 ||
    { echo "build failed: $report/build.txt" >&2; exit 1; }
  bin="$build/bin"
  source_of="checkout $root"
fi

failed=0
# step NAME COMMAND...: runs it, keeps its output, and adds a line to the report.
step() {
  local name="$1"
  shift
  local start=$SECONDS
  "$@" >"$report/$name.txt" 2>&1
  local rc=$?
  [ $rc -eq 0 ] || failed=1
  local skipped=""
  grep -q "^\[  SKIPPED \]" "$report/$name.txt" && skipped="  (tests skipped: see the file)"
  printf '%-28s rc=%-3s %4ss  %s%s\n' "$name" "$rc" "$((SECONDS - start))" "$report/$name.txt" \
    "$skipped" | tee -a "$report/report.txt"
}

{
  echo "Chorus GPU report, $(date -u '+%Y-%m-%d %H:%M:%S UTC'), $(hostname), from $source_of"
  if command -v nvidia-smi >/dev/null; then
    nvidia-smi -L 2>&1
    nvidia-smi --query-gpu=driver_version,memory.total --format=csv,noheader 2>&1
  else
    echo "nvidia-smi: not found (no NVIDIA driver here: the device tests will skip)"
  fi
} | tee "$report/report.txt"
step version "$bin/chorus-run" --version
step gpu_reduce_test "$bin/gpu_reduce_test"
step gpu_memory_test "$bin/gpu_memory_test"
step reduce_test "$bin/reduce_test" --gtest_brief=1
echo "all steps passed: $([ $failed -eq 0 ] && echo yes || echo no)" | tee -a "$report/report.txt"
exit $failed
