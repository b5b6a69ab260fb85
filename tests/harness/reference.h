// Deterministic inputs and a sequential reference for checking collectives. Every rank can
// compute every other rank's input, so each checks its own result without extra traffic.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "chorus/types.h"

namespace chorus::test {

// Fills `n` elements of rank `rank`'s input for a call with this op (prod gets values near 1
// so products of many ranks stay in range; integers stay small).
void fillInput(DataType t, RedOp op, int rank, uint64_t seed, void* buf, size_t n,
               size_t firstIndex = 0);
// One element of what fillInput produced, as a double (exact for every type used here).
double inputValue(DataType t, RedOp op, int rank, uint64_t seed, size_t index);

// Compares got[i] against the reduction over ranks of their inputs at index (indexBase + i).
// Integers must match exactly (arithmetic wraps like the library's); floating point within
// (ranks + 2) unit roundoffs of the sum of magnitudes (sum, avg, premulsum) or of the result
// (prod), exact for min and max. Returns "" or a description of the first few mismatches.
std::string checkReduced(DataType t, RedOp op, const void* premulScalar, int ranks, uint64_t seed,
                         const void* got, size_t n, size_t indexBase);
// Compares got[i] with rank `srcRank`'s input at (indexBase + i), bit for bit.
std::string checkCopied(DataType t, RedOp op, int srcRank, uint64_t seed, const void* got, size_t n,
                        size_t indexBase);

}  // namespace chorus::test
