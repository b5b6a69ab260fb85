// The element types that have a native C++ form (all but fp16, bf16 and fp8), for the code that
// is a template over them: Gloo's algorithms and the check patterns.
#pragma once

#include <cstdint>

#include "chorus/types.h"

namespace chorus::bench {

// Returns f(T{}) for the C++ type T of t, or otherwise() when t has none.
template <typename F, typename G>
auto withNativeType(DataType t, F&& f, G&& otherwise) {
  switch (t) {
    case DataType::Int8:
      return f(int8_t{});
    case DataType::Uint8:
      return f(uint8_t{});
    case DataType::Int32:
      return f(int32_t{});
    case DataType::Uint32:
      return f(uint32_t{});
    case DataType::Int64:
      return f(int64_t{});
    case DataType::Uint64:
      return f(uint64_t{});
    case DataType::Float32:
      return f(float{});
    case DataType::Float64:
      return f(double{});
    default:
      return otherwise();
  }
}

}  // namespace chorus::bench
