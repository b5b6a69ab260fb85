// Forcing algorithms: CHORUS_ALGO or Config::algo, "allreduce=ring,allgather=bruck". Names are
// those of the catalogue (algorithms/registry.cc); a name that does not exist is refused when
// the configuration is made, one that cannot run a particular call when that call is made.
#pragma once

#include <map>
#include <string>

#include "algorithms/registry.h"
#include "chorus/status.h"

namespace chorus {

struct AlgoOverride {
  std::map<Collective, const Algorithm*> forced;

  // An empty spec forces nothing. Errors name the bad entry and list the valid choices.
  static Status parse(const std::string& spec, AlgoOverride* out);
  const Algorithm* forCollective(Collective c) const {
    auto it = forced.find(c);
    return it == forced.end() ? nullptr : it->second;
  }
};

// "ring, recursive_doubling, ..." for messages.
std::string algorithmNames(Collective c);

}  // namespace chorus
