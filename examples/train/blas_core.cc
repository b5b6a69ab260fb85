#include "blas_core.h"

#include <cblas.h>
#include <strings.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace train {
namespace {

// The OPENBLAS_CORETYPE value for the best kernels this CPU can run, or nullptr when OpenBLAS's
// generic kernels are already the best it has (no AVX2).
const char* bestCoreType() {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512bf16") && __builtin_cpu_supports("avx512vl"))
    return "Cooperlake";
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
      __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq"))
    return "SkylakeX";
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return "Haswell";
  return nullptr;
}

}  // namespace

void restartWithFastBlasKernels(char** argv) {
  if (getenv("OPENBLAS_CORETYPE") != nullptr) return;  // the user's (or our restart's) choice
  if (strcasecmp(openblas_get_corename(), "prescott") != 0) return;
  const char* core = bestCoreType();
  if (core == nullptr) return;
  setenv("OPENBLAS_CORETYPE", core, 1);
  execv("/proc/self/exe", argv);
  fprintf(stderr,
          "chorus-train: warning: OpenBLAS runs its generic kernels on this CPU and restarting "
          "with OPENBLAS_CORETYPE=%s failed (%s); set it yourself for about 6x faster GEMMs\n",
          core, strerror(errno));
}

std::string blasKernels() {
  std::string name = openblas_get_corename();
  if (getenv("OPENBLAS_CORETYPE") != nullptr) name += " (OPENBLAS_CORETYPE)";
  return name;
}

}  // namespace train
