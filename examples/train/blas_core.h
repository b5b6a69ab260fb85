// OpenBLAS picks its kernels from the CPU model at load time. Before 0.3.25 a model it does not
// know sends it to its generic "Prescott" kernels (Debian 12 ships 0.3.21; Intel's Emerald Rapids,
// family 6 model 207, is such a model), which run this trainer's GEMMs about 6x slower.
#pragma once

#include <string>

namespace train {

// When OpenBLAS chose its generic kernels on a CPU with AVX2 or AVX-512 and the user did not set
// OPENBLAS_CORETYPE, restarts this program (same pid, same arguments) with OPENBLAS_CORETYPE
// naming the best kernel family the CPU supports. Returns when nothing needs changing, or when
// the restart failed (after a warning): training then goes on, only slower.
void restartWithFastBlasKernels(char** argv);

// The kernel family OpenBLAS is using, and why: "Cooperlake", or "Cooperlake (OPENBLAS_CORETYPE)".
std::string blasKernels();

}  // namespace train
