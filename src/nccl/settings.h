// What an ncclConfig_t (plus the environment) means for one Chorus communicator.
#pragma once

#include <string>

#include "chorus/config.h"
#include "nccl.h"

namespace chorus::nccl {

struct CommSettings {
  Config core;           // from CHORUS_* and, where Chorus has none set, NCCL_* (config.h)
  bool blocking = true;  // false: init and split return ncclInProgress until done
  std::string commName;  // for log lines only
};

// Reads a caller's ncclConfig_t the way NCCL does: at most `size` bytes are trusted, the magic
// must be NCCL_CONFIG_INITIALIZER's, and fields newer than the caller's `version` are reset to
// their defaults (a program built against an older nccl.h never set them). `user` may be null.
// Values GPUs need (CTAs, cluster sizes, NVLS) are checked for range and otherwise unused.
Status parseConfig(const ncclConfig_t* user, CommSettings* out);

// A child communicator's settings: the parent's when `user` is null, else parsed afresh.
Status childSettings(const CommSettings& parent, const ncclConfig_t* user, CommSettings* out);

}  // namespace chorus::nccl
