// Picks the kernel table for this CPU. The tables are built once, lazily, and never change, so
// the executor can hold a plain reference to the result of get().
#include "reduce/reducer.h"

#include <cstring>

#include "common/env.h"
#include "common/log.h"
#include "reduce/kernels.h"

namespace chorus {

namespace {

enum Level { kScalar = 0, kAvx2 = 1, kAvx512 = 2, kNumLevels = 3 };
constexpr const char* kLevelNames[kNumLevels] = {"scalar", "avx2", "avx512"};

// The avx512 TU is compiled with F/BW/VL/DQ plus the AVX2 set, so the compiler may use any of
// them anywhere in it: all must be present, not just the ones the intrinsics name.
Level bestSupportedLevel() {
  __builtin_cpu_init();
  const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
                    __builtin_cpu_supports("f16c");
  if (!avx2) return kScalar;
  const bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
  return avx512 ? kAvx512 : kAvx2;
}

int parseLevel(const char* name) {
  for (int l = 0; l < kNumLevels; ++l)
    if (strcmp(name, kLevelNames[l]) == 0) return l;
  return -1;
}

// All tables the CPU can run, built on first use.
const CpuReducer* const* tables() {
  static const CpuReducer* const* all = [] {
    static CpuReducer storage[kNumLevels];
    static const CpuReducer* ptrs[kNumLevels] = {};
    const Level best = bestSupportedLevel();
    fillScalarKernels(&storage[kScalar]);
    ptrs[kScalar] = &storage[kScalar];
    if (best >= kAvx2) {
      fillAvx2Kernels(&storage[kAvx2]);
      ptrs[kAvx2] = &storage[kAvx2];
    }
    if (best >= kAvx512) {
      fillAvx512Kernels(&storage[kAvx512]);
      ptrs[kAvx512] = &storage[kAvx512];
    }
    return ptrs;
  }();
  return all;
}

int chooseLevel() {
  const int best = bestSupportedLevel();
  auto forced = envString("CHORUS_CPU_ISA");
  if (!forced) return best;
  const int want = parseLevel(forced->c_str());
  if (want < 0) {
    LOG_WARN(kLogInit, "CHORUS_CPU_ISA='%s' is not one of scalar|avx2|avx512; ignored",
             forced->c_str());
    return best;
  }
  if (want > best) {
    LOG_WARN(kLogInit, "CHORUS_CPU_ISA=%s but this CPU supports at most %s; using %s",
             forced->c_str(), kLevelNames[best], kLevelNames[best]);
    return best;
  }
  return want;
}

}  // namespace

const CpuReducer& CpuReducer::get() {
  static const CpuReducer& chosen = []() -> const CpuReducer& {
    const CpuReducer& r = *tables()[chooseLevel()];
    LOG_INFO(kLogInit, "CPU reduction kernels: %s", r.isa());
    return r;
  }();
  return chosen;
}

const CpuReducer* CpuReducer::forIsa(const char* isa) {
  const int level = isa ? parseLevel(isa) : -1;
  return level < 0 ? nullptr : tables()[level];
}

}  // namespace chorus
