// ncclGroupStart, ncclGroupEnd and ncclGroupSimulateEnd, on the core's group.
#include "nccl/group.h"

#include <utility>
#include <vector>

#include "core/group_queue.h"
#include "nccl/api.h"
#include "nccl/errors.h"

namespace chorus::nccl {

namespace {

// Not the calls (they wait in the core's queue) but the handles the outermost ncclGroupEnd
// must see to before running them.
struct FaceGroup {
  std::vector<ncclComm*> inits;  // inits started in the group: finished first
  std::vector<ncclComm*> comms;  // communicators the queued calls use: held while they run
};

thread_local FaceGroup tFace;
// Set while a group entry point itself runs: its own errors (a bad simInfo, say) are returned
// by it and do not fail the group the caller may still complete.
thread_local bool tGroupCall = false;

struct GroupCallScope {
  GroupCallScope() { tGroupCall = true; }
  ~GroupCallScope() { tGroupCall = false; }
};

// Waits for the group's blocking inits; non-blocking ones keep running (the caller polls).
Status finishInits(const std::vector<ncclComm*>& inits, bool* pending) {
  Status first;
  for (ncclComm* h : inits) {
    CommRef c;
    if (!acquire(h, &c).ok()) continue;  // destroyed before the group ended: nothing to wait for
    if (!c->settings.blocking) {
      reapInit(c.get());
      if (c->state.load() == ncclInProgress) *pending = true;
      continue;
    }
    joinInit(c.get());
    if (c->state.load() != ncclSuccess && first.ok())
      first =
          Status::RemoteError("rank " + std::to_string(c->rank) + ": init failed: " + c->initError);
  }
  return first;
}

// Holds every communicator the queued calls use, or says which one is no longer usable.
Status hold(const std::vector<ncclComm*>& comms, std::vector<CommRef>* held) {
  for (ncclComm* h : comms) {
    CommRef c;
    CHORUS_RETURN_IF_ERROR(acquireReady(h, &c));
    held->push_back(std::move(c));
  }
  return Status::Ok();
}

Status notInGroup(const char* fn) {
  return Status::InvalidUsage(std::string(fn) + " called without a matching ncclGroupStart");
}

Status groupEnd(bool* pending) {
  const int depth = groupDepth();
  if (depth == 0) return notInGroup("ncclGroupEnd");
  if (depth > 1) return chorus::groupEnd();  // nested: only depth
  FaceGroup g = std::exchange(tFace, FaceGroup{});
  Status inits = finishInits(g.inits, pending);
  std::vector<CommRef> held;
  Status usable = inits.ok() ? hold(g.comms, &held) : Status::Ok();
  if (!inits.ok() || !usable.ok()) {
    // A call that failed earlier in the group is the first error, and is reported first.
    CHORUS_RETURN_IF_ERROR(groupEndWithoutRunning());
    return inits.ok() ? usable : inits;
  }
  return chorus::groupEnd();
}

constexpr unsigned kSimInfoMagic = 0x74685283;

Status simulateEnd(ncclSimInfo_t* info, bool* pending) {
  if (!info) return Status::InvalidArgument("simInfo is NULL");
  if (info->magic != kSimInfoMagic || info->size < sizeof(ncclSimInfo_t))
    return Status::InvalidArgument("simInfo was not initialised with NCCL_SIM_INFO_INITIALIZER");
  const int depth = groupDepth();
  if (depth == 0) return notInGroup("ncclGroupSimulateEnd");
  std::vector<CommRef> held;
  Status usable = hold(tFace.comms, &held);
  if (usable.ok()) info->estimatedTime = float(estimateOpenGroupMicros());
  held.clear();
  if (depth > 1) {
    Status left = groupEndWithoutRunning();  // nested: only depth; the calls stay queued
    return usable.ok() ? left : usable;
  }
  // Inits are real work, not simulated; the queued calls are dropped unrun.
  FaceGroup g = std::exchange(tFace, FaceGroup{});
  Status inits = finishInits(g.inits, pending);
  CHORUS_RETURN_IF_ERROR(groupEndWithoutRunning());
  return inits.ok() ? usable : inits;
}

}  // namespace

void noteGroupError(const Status& st) {
  if (!tGroupCall) failOpenGroup(st);
}

void deferInit(ncclComm* c) {
  tFace.inits.push_back(c);
}

void noteGroupComm(ncclComm* c) {
  for (ncclComm* known : tFace.comms)
    if (known == c) return;
  tFace.comms.push_back(c);
}

}  // namespace chorus::nccl

using namespace chorus::nccl;

extern "C" ncclResult_t pncclGroupStart() {
  return guard("ncclGroupStart", [] {
    chorus::groupStart();
    return chorus::Status::Ok();
  });
}
NCCL_WEAK_ALIAS(ncclGroupStart);

extern "C" ncclResult_t pncclGroupEnd() {
  GroupCallScope scope;
  bool pending = false;
  return progressOr(guard("ncclGroupEnd", [&] { return groupEnd(&pending); }), pending);
}
NCCL_WEAK_ALIAS(ncclGroupEnd);

extern "C" ncclResult_t pncclGroupSimulateEnd(ncclSimInfo_t* simInfo) {
  GroupCallScope scope;
  bool pending = false;
  return progressOr(guard("ncclGroupSimulateEnd", [&] { return simulateEnd(simInfo, &pending); }),
                    pending);
}
NCCL_WEAK_ALIAS(ncclGroupSimulateEnd);
