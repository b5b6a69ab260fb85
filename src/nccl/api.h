// Shared by every entry-point file of the NCCL face.
//
// NCCL's own arrangement of symbols, kept so tools that interpose on NCCL work on Chorus too:
// pnccl<Name> is the definition, nccl<Name> a weak alias of it. A profiler can define its own
// ncclAllReduce and forward to pncclAllReduce. Only these names leave the library
// (exports.map); everything else is local.
#pragma once

#include <cstring>

#include "nccl.h"

#define NCCL_WEAK_ALIAS(name) \
  extern "C" __attribute__((weak, alias("p" #name))) decltype(p##name) name

// The integer a C caller passed for an enum parameter. C may pass any int (a test passes 99
// for a datatype), and reading an out-of-range value as the C++ enum type is undefined, so
// entry points take enum parameters by reference and read their bytes.
template <class Enum>
int rawValue(const Enum& e) {
  static_assert(sizeof(Enum) == sizeof(int), "NCCL's enums are int-sized");
  int v;
  memcpy(&v, &e, sizeof v);
  return v;
}
