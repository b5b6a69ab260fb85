// Tuning files as JSON (docs/json.md): the estimate lines of docs/topology.md ("reduce
// host_gbs=7.5", "link host_bridge latency_us=0.4 bandwidth_gbs=9") as one object per line kind,
// beside what chorus-tune measured. The line format stays the one parser: JSON is turned into
// its words, so both spellings accept and refuse the same values.
#pragma once

#include <string>
#include <vector>

#include "chorus/status.h"
#include "topo/topology.h"

namespace chorus::topo {

// One estimate line read from JSON: its words, and where it came from ("estimates.reduce").
struct EstimateLine {
  std::string where;
  std::vector<std::string> words;
};

// Whether `text` is a JSON tuning file rather than estimate lines (its first non-blank is '{').
bool isJsonTuning(const std::string& text);
// `t`'s estimates (formatEstimates' lines) as a JSON tuning file; `run` and `measured`
// describe the calibration that found them.
std::string formatEstimatesJson(const Topology& t, const std::string& run,
                                const std::vector<std::string>& measured);
// The estimate lines of a JSON tuning file; an error names `origin` and the entry at fault.
Status estimateLinesFromJson(const std::string& text, const std::string& origin,
                             std::vector<EstimateLine>* lines);

}  // namespace chorus::topo
