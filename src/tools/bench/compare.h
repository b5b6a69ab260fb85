// `chorus-bench compare -n N COLL [options]`: runs the same sweep over every implementation
// built in (Chorus under chorus-run, Open MPI under mpirun with its shared-memory BTL, Gloo
// under chorus-run), each as a separate job of this same binary writing CSV, and prints the
// per-size times side by side with the speedup of Chorus over each baseline.
#pragma once

#include "options.h"

namespace chorus::bench {

int runCompare(const Options& o);

}  // namespace chorus::bench
