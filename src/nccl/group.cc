// ncclGroupStart, ncclGroupEnd, ncclGroupSimulateEnd and the per-thread queue behind them.
#include "nccl/group.h"

#include <vector>

#include "chorus/group.h"
#include "nccl/api.h"
#include "nccl/errors.h"

namespace chorus::nccl {

namespace {

struct Deferred {
  ncclComm* comm;
  OpDesc call;
  CoreCall run;
};

struct GroupState {
  int depth = 0;
  std::vector<Deferred> calls;
  std::vector<ncclComm*> inits;
  Status firstError;
};

thread_local GroupState tGroup;
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

// Runs the queued calls together. Every communicator is held for the whole replay.
Status replay(std::vector<Deferred>& calls) {
  std::vector<CommRef> held;
  for (Deferred& d : calls) {
    CommRef c;
    CHORUS_RETURN_IF_ERROR(acquireReady(d.comm, &c));
    held.push_back(std::move(c));
  }
  chorus::groupStart();
  Status first;
  for (size_t i = 0; i < calls.size(); ++i) {
    Status st = calls[i].run(*held[i]->core);
    if (!st.ok() && first.ok()) first = st;
  }
  Status end = chorus::groupEnd();
  return first.ok() ? end : first;
}

// Leaves one level; at the outermost, hands back everything queued and clears the state.
bool leave(GroupState* taken) {
  if (--tGroup.depth > 0) return false;
  *taken = std::move(tGroup);
  tGroup = GroupState{};
  return true;
}

Status notInGroup(const char* fn) {
  return Status::InvalidUsage(std::string(fn) + " called without a matching ncclGroupStart");
}

Status groupFailed(const Status& st) {
  return Status(st.code(), "not run: an earlier call in this group failed: " + st.message());
}

}  // namespace

int faceGroupDepth() {
  return tGroup.depth;
}

void noteGroupError(const Status& st) {
  if (tGroup.depth > 0 && !tGroupCall && tGroup.firstError.ok()) tGroup.firstError = st;
}

void deferInit(ncclComm* c) {
  tGroup.inits.push_back(c);
}

Status issue(CommRef& c, const OpDesc& call, CoreCall run) {
  if (tGroup.depth == 0) return run(*c->core);
  tGroup.calls.push_back(Deferred{c.get(), call, std::move(run)});
  return Status::Ok();
}

namespace {

Status groupEnd(bool* pending) {
  if (tGroup.depth == 0) return notInGroup("ncclGroupEnd");
  GroupState g;
  if (!leave(&g)) return Status::Ok();
  Status st = finishInits(g.inits, pending);
  if (!g.firstError.ok()) return groupFailed(g.firstError);
  CHORUS_RETURN_IF_ERROR(st);
  return replay(g.calls);
}

constexpr unsigned kSimInfoMagic = 0x74685283;

Status simulateEnd(ncclSimInfo_t* info, bool* pending) {
  if (!info) return Status::InvalidArgument("simInfo is NULL");
  if (info->magic != kSimInfoMagic || info->size < sizeof(ncclSimInfo_t))
    return Status::InvalidArgument("simInfo was not initialised with NCCL_SIM_INFO_INITIALIZER");
  if (tGroup.depth == 0) return notInGroup("ncclGroupSimulateEnd");
  double micros = 0;
  // Calls one after another: an upper bound where the group would overlap them.
  for (const Deferred& d : tGroup.calls) micros += estimateMicros(d.call, *d.comm->core);
  info->estimatedTime = float(micros);
  GroupState g;
  if (!leave(&g)) return Status::Ok();
  // Inits are real work, not simulated; the queued calls are dropped unrun.
  Status st = finishInits(g.inits, pending);
  if (!g.firstError.ok()) return groupFailed(g.firstError);
  return st;
}

}  // namespace
}  // namespace chorus::nccl

using namespace chorus::nccl;

extern "C" ncclResult_t pncclGroupStart() {
  return guard("ncclGroupStart", [] {
    ++tGroup.depth;
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
