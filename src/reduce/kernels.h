// Entry points of the per-ISA kernel translation units. Each fills every entry of a CpuReducer
// with kernels compiled for its instruction set; only reducer.cc calls them, after checking
// that the CPU has that instruction set.
#pragma once

#include "reduce/reducer.h"

namespace chorus {

void fillScalarKernels(CpuReducer* r);  // baseline x86-64 (SSE2)
void fillAvx2Kernels(CpuReducer* r);    // AVX2 + FMA + F16C
void fillAvx512Kernels(CpuReducer* r);  // AVX-512 F/BW/VL/DQ, plus the AVX2 set

}  // namespace chorus
