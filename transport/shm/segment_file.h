// The host's segment as a file in /dev/shm. The leader draws its name, hands it to the local
// ranks and only then creates it, so that whoever survives the leader knows what to unlink.
#pragma once

#include <cstddef>
#include <string>

#include "chorus/status.h"

namespace chorus {

inline constexpr size_t kSegmentNameBytes = 64;

// "/chorus-<pid>-<random>": the creator's pid tells a reader of /dev/shm whose it is.
std::string newSegmentName();
// Creates `name` (0600; never an existing file) with `bytes` of zeros; removes it on failure.
Status createSegmentFile(const char* name, size_t bytes);
// Maps the whole of an existing segment file shared and writable.
Status mapSegmentFile(const char* name, size_t bytes, void** base);

}  // namespace chorus
