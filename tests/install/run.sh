#!/usr/bin/env bash
# Installs the build into a scratch prefix, then builds and runs a consumer project against it
# with find_package(Chorus), and again with pkg-config.
set -euo pipefail
build="$1"; src="$(cd "$(dirname "$0")" && pwd)"
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
