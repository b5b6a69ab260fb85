// Element values of every NCCL datatype as doubles, so one test body covers all twelve types.
// Only values the type holds exactly are used (small integers, quarters), which keeps every
// expected result exact whatever order the ranks' inputs are combined in.
#pragma once

#include <cstddef>
#include <vector>

#include "nccl.h"

namespace nccltest {

size_t typeSize(ncclDataType_t t);
bool isFloat(ncclDataType_t t);
const char* typeName(ncclDataType_t t);
// Writes v as element i of buf (of type t). v must be exactly representable.
void put(void* buf, size_t i, ncclDataType_t t, double v);
double get(const void* buf, size_t i, ncclDataType_t t);

std::vector<unsigned char> makeBuffer(size_t count, ncclDataType_t t);

}  // namespace nccltest
