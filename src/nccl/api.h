// Shared by every entry-point file of the NCCL face.
//
// NCCL's own arrangement of symbols, kept so tools that interpose on NCCL work on Chorus too:
// pnccl<Name> is the definition, nccl<Name> a weak alias of it. A profiler can define its own
// ncclAllReduce and forward to pncclAllReduce. Only these names leave the library
// (exports.map); everything else is local.
#pragma once

#include "nccl.h"

#define NCCL_WEAK_ALIAS(name) \
  extern "C" __attribute__((weak, alias("p" #name))) decltype(p##name) name
