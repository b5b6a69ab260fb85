// NCCL's environment variables. Most are read where Chorus reads its own: Config (NCCL_ALGO,
// NCCL_TOPO_FILE, NCCL_TOPO_DUMP_FILE, NCCL_COMM_BLOCKING, NCCL_SOCKET_IFNAME and
// NCCL_SOCKET_FAMILY for TCP; see config.h) and the logger (NCCL_DEBUG*). Two are copied onto
// their CHORUS_* names, once, before anything reads them, because the bootstrap reads them as
// launch information before any Config exists (ncclGetUniqueId takes none): NCCL_COMM_ID, and
// NCCL_SOCKET_IFNAME for the unique id's address. Chorus's own variable wins when both are set.
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

constexpr EnvAlias kAliases[] = {
    {"NCCL_SOCKET_IFNAME", "CHORUS_SOCKET_IFNAME"},
    {"NCCL_COMM_ID", "CHORUS_COMM_ID"},
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
    logAlsoReadNcclNames();
    // This line is how a user (and the LD_PRELOAD test) tells Chorus answered, not NVIDIA.
    LOG_INFO(kLogInit, "Chorus NCCL face: libnccl.so.2 with the NCCL %d.%d.%d ABI, host memory",
             NCCL_MAJOR, NCCL_MINOR, NCCL_PATCH);
  });
}

// The deprecated NCCL call that re-reads the logging variables.
void resetDebugInit() {
  ensureEnvironment();
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
