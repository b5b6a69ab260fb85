// The one place a call's arguments are checked and its OpDesc is built. Both faces arrive
// here: the C++ Communicator methods directly, the NCCL face through them, so a call is
// checked once and every refusal reads the same whichever face it came through.
#pragma once

#include <cstddef>

#include "chorus/communicator.h"
#include "core/op_desc.h"

namespace chorus {

// One collective or point-to-point call as its caller made it.
struct CallArgs {
  CallArgs(Collective c, const void* s = nullptr, void* r = nullptr, size_t n = 0,
           DataType t = DataType::Uint8, Reduction red_ = {}, int root_ = -1)
      : coll(c), send(s), recv(r), count(n), type(t), red(red_), root(root_) {}

  Collective coll;
  const void* send;  // a send's buffer; unused by recv and barrier
  void* recv;        // a recv's buffer
  size_t count;      // in the unit the API takes (see OpDesc::count)
  DataType type;
  Reduction red;  // reducing collectives only
  int root;       // rooted collectives: the root; send and recv: the peer
};

// Checks `a` as called on `rank` of `size` ranks (`inGroup`: between groupStart and groupEnd)
// and, when it may run, fills `out`. A refusal is InvalidArgument (InvalidUsage for a barrier
// in a group) whose message names the call, the rank and what is wrong.
Status checkCall(const CallArgs& a, int rank, int size, bool inGroup, OpDesc* out);

}  // namespace chorus
