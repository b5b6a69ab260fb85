// The verifier: a symbolic executor that runs every rank's schedule for one call together,
// without a network, and proves three things under the execution model of schedule.h.
//  1. Results: each element carries a symbol (which ranks' inputs at which index it sums), and
//     at the end every rank's output must hold exactly what the collective defines.
//  2. No hazards: on each rank, every pair of accesses to the same element where one writes is
//     ordered by that rank's own order (chunk order, dependencies, channel order). Cross-rank
//     causality is deliberately not used: an algorithm that relies on it states a dependency,
//     which costs nothing at run time and keeps the proof local. Hazard-free means the result
//     does not depend on timing, so one simulated run stands for all of them.
//  3. No deadlock with `slots` messages in flight per channel: every enabling condition only
//     ever becomes true, so if one maximal run finishes, every run does.
// Also checked: buffer bounds, no writes to the input, no use of a buffer the caller need not
// pass (a non-root's output in reduce/gather, a non-root's input in broadcast/scatter),
// matching message sizes on every channel, and for barrier that each rank has heard from all.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "algorithms/schedule.h"
#include "chorus/status.h"
#include "core/op_desc.h"

namespace chorus {

struct VerifyOptions {
  // Elements per message that every transport carries (the executor's job-wide size); a
  // schedule's own Schedule::chunkBytes cuts within it.
  uint64_t chunkElems = 1;
  int slots = 1;  // messages in flight per channel before a send must wait
  bool hazards = true;
  uint64_t maxHazardEvents = 1 << 12;  // per rank; larger schedules skip the hazard proof
};

struct VerifyReport {
  uint64_t messages = 0;  // chunks sent, all ranks
  uint64_t elements = 0;  // elements sent, all ranks
  bool hazardsChecked = false;
};

// schedules[r] is rank r's schedule for `d` in a communicator of schedules.size() ranks.
Status verifySchedules(const OpDesc& d, const std::vector<Schedule>& schedules,
                       const VerifyOptions& opts, VerifyReport* report = nullptr);

}  // namespace chorus
