#!/usr/bin/env bash
# Installs the build into a scratch prefix, then builds and runs a consumer project against it
# with find_package(Chorus), and again with pkg-config; and the PyTorch backend where it was built.
#   tests/install/run.sh BUILD_DIR [PYTHON]     PYTHON: the one chorus_torch was built for
set -euo pipefail
build="$1"; python="${2:-/usr/bin/python3}"; src="$(cd "$(dirname "$0")" && pwd)"
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
# The tools come with their man pages (cmake/Manpages.cmake) wherever help2man made them.
if [ -d "$build/man" ]; then
  for page in "$build"/man/*.1; do test -s "$tmp/prefix/share/man/man1/$(basename "$page")"; done
fi
cmake -S "$src" -B "$tmp/consumer" -DCMAKE_PREFIX_PATH="$tmp/prefix" >/dev/null
cmake --build "$tmp/consumer" >/dev/null
LD_LIBRARY_PATH="$tmp/prefix/lib" "$tmp/consumer/consumer_cmake"
export PKG_CONFIG_PATH="$tmp/prefix/lib/pkgconfig"
g++ -std=c++20 "$src/consumer.cc" -o "$tmp/consumer_pc" $(pkg-config --cflags --libs chorus)
LD_LIBRARY_PATH="$tmp/prefix/lib" "$tmp/consumer_pc"
# The PyTorch backend, where it was built: the installed package imports, loads the installed
# libchorus (not the build tree's), and runs a collective.
if [ -f "$build/python/chorus_torch/__init__.py" ]; then
  package=$(dirname "$(find "$tmp/prefix" -path '*/chorus_torch/__init__.py')")
  PYTHONPATH="$(dirname "$package")" PREFIX="$tmp/prefix" STORE="$tmp/store" "$python" - <<'PY'
import os
import torch
import torch.distributed as dist
import chorus_torch
prefix = os.path.realpath(os.environ["PREFIX"])
assert os.path.realpath(chorus_torch.__file__).startswith(prefix), chorus_torch.__file__
dist.init_process_group("chorus", store=dist.FileStore(os.environ["STORE"], 1), rank=0, world_size=1)
t = torch.arange(4, dtype=torch.float32)
dist.all_reduce(t)
assert t.tolist() == [0.0, 1.0, 2.0, 3.0], t
libs = [l.split()[-1] for l in open("/proc/self/maps") if "libchorus.so" in l]
assert libs and all(os.path.realpath(l).startswith(prefix) for l in libs), libs
dist.destroy_process_group()
PY
fi
