# Shared by scripts/demo and scripts/test: install what is missing, then build into build/.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${CHORUS_BUILD_DIR:-$ROOT/build}"

# Debian packages the build and the test suite need. Idempotent: only missing ones are
# installed, and apt's lists are refreshed only when something is missing.
# Build and tests:
CHORUS_PACKAGES=(cmake g++ make pkg-config libgtest-dev libbenchmark-dev iproute2 procps clang-format git
  # the fuzz targets (scripts/fuzz): clang with libFuzzer
  clang libclang-rt-14-dev
  # HMAC-SHA256 for the handshakes (libcrypto); JSON for flight-recorder dumps and the tools
  libssl-dev nlohmann-json3-dev
  # the tools' command line (src/tools/cli) and their man pages
  libcli11-dev help2man
  # optional backends, compiled when present: topology (hwloc), verbs (dlopen'd at run time)
  libhwloc-dev hwloc libibverbs-dev
  # RDMA through libfabric (dlopen'd); its tcp and sockets providers test it without a NIC
  libfabric-dev libfabric-bin
  # baselines for chorus-bench and the multi-host launcher tests
  libopenmpi-dev openmpi-bin libgloo-dev iperf3
  # instructions per call (perf/call_cost.sh); relocatable bundles for other machines (scripts/bundle)
  valgrind patchelf
  # the reference trainer: BLAS, IDX loader, data set; pictures: topology and benchmark plots
  libopenblas-dev zlib1g-dev dataset-fashion-mnist graphviz gnuplot-nox
  # the PyTorch backend (python/chorus_torch) and its tests: Debian's torch 1.13 for /usr/bin/python3
  python3-torch libtorch-dev pybind11-dev python3-dev)

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
