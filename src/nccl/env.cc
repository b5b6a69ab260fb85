// NCCL's environment variables, honoured by copying each onto the Chorus variable that means
// the same thing, before anything in Chorus reads its environment. Chorus's own variable wins
// when both are set (setenv without overwrite). After this the rest of Chorus sees only
// CHORUS_* names: settings still flow through a per-communicator Config, never through NCCL_*
// lookups scattered in the code.
#include <cstdlib>
#include <mutex>

#include "common/log.h"
#include "nccl/errors.h"

namespace chorus::nccl {

namespace {

struct EnvAlias {
  const char* nccl;
  const char* chorus;
};

// NCCL_ALGO and NCCL_PROTO are passed on for the algorithm selector; until it reads them they
// are accepted and ignored (NCCL's protocols LL/LL128/Simple have no host equivalent).
constexpr EnvAlias kAliases[] = {
    {"NCCL_DEBUG", "CHORUS_DEBUG"},
    {"NCCL_DEBUG_SUBSYS", "CHORUS_DEBUG_SUBSYS"},
    {"NCCL_DEBUG_FILE", "CHORUS_DEBUG_FILE"},
    {"NCCL_ALGO", "CHORUS_ALGO"},
    {"NCCL_PROTO", "CHORUS_PROTO"},
    {"NCCL_SOCKET_IFNAME", "CHORUS_SOCKET_IFNAME"},
    {"NCCL_SOCKET_FAMILY", "CHORUS_SOCKET_FAMILY"},
    {"NCCL_COMM_ID", "CHORUS_COMM_ID"},
    {"NCCL_TOPO_FILE", "CHORUS_TOPO_FILE"},
    {"NCCL_TOPO_DUMP_FILE", "CHORUS_TOPO_DUMP_FILE"},
};

void mapVariables() {
  for (const EnvAlias& a : kAliases) {
    const char* v = getenv(a.nccl);
    if (v) setenv(a.chorus, v, /*overwrite=*/0);
  }
}

}  // namespace

void ensureEnvironment() {
  static std::once_flag once;
  std::call_once(once, [] {
    mapVariables();
    logReload();
    // This line is how a user (and the LD_PRELOAD test) tells Chorus answered, not NVIDIA.
    LOG_INFO(kLogInit, "Chorus NCCL face: libnccl.so.2 with the NCCL %d.%d.%d ABI, host memory",
             NCCL_MAJOR, NCCL_MINOR, NCCL_PATCH);
  });
}

// The deprecated NCCL call that re-reads the logging variables. A variable that was mapped
// before keeps its copied value unless the CHORUS_* one is cleared: Chorus's name wins.
void resetDebugInit() {
  mapVariables();
  logReload();
}

}  // namespace chorus::nccl

extern "C" void pncclResetDebugInit() {
  try {
    chorus::nccl::resetDebugInit();
  } catch (...) {
    // Nothing to report through: this call returns void. Logging stays as it was.
  }
}
extern "C" __attribute__((weak, alias("pncclResetDebugInit"))) void ncclResetDebugInit();
