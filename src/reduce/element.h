// Element access by run-time DataType, through double. For tests, reference implementations
// and tools that check results: nothing on a hot path should use these.
#pragma once

#include <cstddef>

#include "chorus/types.h"

namespace chorus {

// Element i of an array of type t, widened exactly (every type but 64-bit integers above 2^53
// fits in a double exactly).
double loadElement(DataType t, const void* base, size_t i);
// Stores v into element i: floating types round to nearest even with the same conversions as
// the kernels (fp8 saturating); integer types truncate toward zero, then wrap modulo 2^bits
// (NaN stores 0), so storing a double never hits the undefined out-of-range cast.
void storeElement(DataType t, void* base, size_t i, double v);
// The unit roundoff u of t (half an ulp of 1.0), for error bounds like n*u*sum|x|; 0 for
// integer types, whose reductions are exact.
double unitRoundoff(DataType t);

}  // namespace chorus
