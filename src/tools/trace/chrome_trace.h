// The Chrome trace event format (chrome://tracing, ui.perfetto.dev): one track per rank, one
// slice per call; calls still running at dump time end at the dump.
#pragma once

#include <string>
#include <vector>

#include "tools/trace/dumps.h"

namespace chorus::trace {

std::string chromeTrace(const std::vector<Dump>& dumps);

}  // namespace chorus::trace
