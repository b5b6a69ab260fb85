// FNV-1a, 64 bits: a quick digest for names and short texts (job keys, topology files). Not a
// cryptographic hash: nothing that guards against a deliberate collision may rest on it.
#pragma once

#include <cstdint>
#include <string_view>

namespace chorus {

inline uint64_t fnv1a(std::string_view s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

}  // namespace chorus
