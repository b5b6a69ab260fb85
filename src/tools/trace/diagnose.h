// Who holds the job up: follows each stuck rank's "waiting on" to the rank at the end of the
// chain (one that is not in the call, or sent no dump), and names the one most chains end at.
#pragma once

#include <string>
#include <vector>

#include "tools/trace/dumps.h"

namespace chorus::trace {

struct Diagnosis {
  int culprit = -1;          // the rank the others wait on, or -1
  std::vector<int> waiters;  // ranks whose chains end at it
  std::vector<int> noDump;   // ranks without a dump
  std::string text;          // a paragraph for people
};

// `dumps` are of one communicator (same comm id and size), any subset of its ranks.
Diagnosis diagnose(const std::vector<Dump>& dumps);

}  // namespace chorus::trace
