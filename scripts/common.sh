# Shared by scripts/demo and scripts/test: install what is missing, then build into build/.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${CHORUS_BUILD_DIR:-$ROOT/build}"

# Debian packages the build and the test suite need. Idempotent: only missing ones are
# installed, and apt's lists are refreshed only when something is missing.
CHORUS_PACKAGES=(cmake g++ make pkg-config libgtest-dev libbenchmark-dev iproute2 procps)

ensure_packages() {
  local missing=()
  for p in "${CHORUS_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if ((${#missing[@]})); then
    echo "Installing missing packages: ${missing[*]}"
    local sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}"
  fi
}

build() {
  cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
  cmake --build "$BUILD" -j"$(nproc)"
}
