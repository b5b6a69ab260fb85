#!/usr/bin/env bash
# scripts/bundle makes a folder that runs elsewhere: bundled, then moved, then run from another
# directory with a bare environment, its programs find their libraries in the bundle and not in
# the build tree, and a 2-rank job and the GPU report script run from it.
#   tests/bundle/run.sh BUILD
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="$1"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

"$root/scripts/bundle" --lean "$work/made" "$build"
mv "$work/made" "$work/moved"  # relocatable: nothing may point at where it was made
b="$work/moved"
[ -x "$b/run" ] || fail "no run wrapper"
[ ! -e "$b/bin/chorus-train" ] || fail "--lean must leave chorus-train out"
for lib in libchorus.so.0 libnccl.so.2; do [ -f "$b/lib/$lib" ] || fail "lib/$lib missing"; done
for lib in "$b"/lib/libc.so* "$b"/lib/libm.so* "$b"/lib/ld-linux* "$b"/lib/libcuda.so*; do
  [ -e "$lib" ] && fail "$lib is the machine's (glibc or the GPU driver) and must not be bundled"
done

# Without the wrapper, each program resolves every non-system library inside the bundle.
for p in "$b"/bin/*; do
  outside="$(env -i ldd "$p" | awk '$2 == "=>" && $3 !~ "^'"$b"'/"' |
    grep -Ev '^\s*(libc|libm|libdl|libpthread|librt|libcuda)\.so' || true)"
  [ -z "$outside" ] || fail "$(basename "$p") loads from outside the bundle: $outside"
done

# From another directory, with a bare environment.
cd /
out="$(env -i PATH=/usr/bin:/bin "$b/run" chorus-run -n 2 -- chorus-bench allreduce -b 8 -e 64K -f 8 -t 0.05 2>&1)" ||
  fail "chorus-run from the bundle failed: $out"
echo "$out" | grep -q "Wrong elements *: 0 OK" || fail "no correct allreduce table: $out"
env -i PATH=/usr/bin:/bin "$b/run" chorus-bench --version | grep -q "^Chorus " || fail "--version"
env -i PATH=/usr/bin:/bin "$b/run" "$b/tests/gpu/run.sh" "$work/report" >/dev/null ||
  fail "the GPU report script failed: $(cat "$work/report/report.txt")"
grep -q "from bundle $b" "$work/report/report.txt" || fail "the report does not name the bundle"
if env -i "$b/run" >/dev/null 2>&1; then fail "run with no command must be refused"; fi
echo "bundle OK: $(du -sh "$b" | cut -f1)"
