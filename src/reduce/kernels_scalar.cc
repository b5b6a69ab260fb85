// Baseline kernels: the shared loops compiled for plain x86-64, where the compiler still
// vectorises the native types with SSE2 and the narrow floats go element by element.
#include "reduce/kernels.h"
#include "reduce/kernels_impl.h"

namespace chorus {

void fillScalarKernels(CpuReducer* r) {
  r->isa_ = "scalar";
  fillAllTypes<Fp16Scalar, Bf16Scalar, E4m3Fast, E5m2Fast>(r);
}

}  // namespace chorus
