// CHORUS_CHECK_CALLS=2: before a collective moves any data, the ranks allgather what each of
// them was asked to do, and each compares the table. Every rank sees the same table, so every
// rank returns the same InvalidUsage from a mismatched call, senders and bystanders included;
// and since nothing else was sent, the communicator stays usable. The ready notices
// (executor_notices.cc) find most mismatches without this, but only on the ranks that exchange
// data with the one that differs.
#pragma once

#include <cstdint>
#include <vector>

#include "chorus/status.h"
#include "core/op_desc.h"

namespace chorus {

// What must be the same on every rank for one collective call, as it travels.
struct CallPrint {
  uint64_t count = 0;
  int32_t root = -1;                    // rooted collectives only
  uint8_t coll = 0, dtype = 0, op = 0;  // op: reducing collectives only
  uint8_t unused = 0;
  bool operator==(const CallPrint&) const = default;
};
static_assert(sizeof(CallPrint) == 16, "CallPrint travels as bytes");

CallPrint callPrint(const OpDesc& d);

// Ok when every rank's print is the same; otherwise InvalidUsage naming each set of ranks and
// the call it made, the same text on every rank.
Status compareCallPrints(const std::vector<CallPrint>& prints);

}  // namespace chorus
