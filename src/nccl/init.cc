// Making communicators: unique ids, ncclCommInitRank[Config|Scalable], ncclCommInitAll.
//
// Init is collective, so a blocking init simply runs on the caller's thread. A non-blocking
// one (config->blocking = 0), or one issued inside a group, runs on a thread of its own: the
// handle is returned at once with state ncclInProgress, and ncclCommGetAsyncError (or
// ncclGroupEnd) reports when it is done.
#include <algorithm>
#include <cstring>
#include <thread>
#include <vector>

#include "chorus/group.h"
#include "chorus/unique_id.h"
#include "common/log.h"
#include "engine/cuda_runtime.h"
#include "nccl/api.h"
#include "nccl/comm_handle.h"
#include "nccl/errors.h"
#include "nccl/group.h"

using namespace chorus;
using namespace chorus::nccl;

namespace {

UniqueId toCore(const ncclUniqueId& id) {
  static_assert(sizeof(UniqueId) == sizeof(ncclUniqueId), "the two ids must be the same bytes");
  UniqueId u;
  memcpy(&u, &id, sizeof u);
  return u;
}

// The body of every init; records the outcome in the handle, never throws. An init on its own
// thread has no caller to return an error to, so it records the message for ncclGetLastError.
Status runInit(ncclComm* h, UniqueId id, bool background) noexcept {
  Status st;
  std::unique_ptr<Communicator> core;
  try {
    st = Communicator::create(id, h->rank, h->nranks, h->settings.core, &core);
  } catch (const std::exception& e) {
    st = Status::Internal(std::string("init threw: ") + e.what());
  } catch (...) {
    st = Status::Internal("init threw a non-standard exception");
  }
  if (st.ok()) {
    h->core = std::move(core);
    LOG_INFO(kLogInit, "comm %p rank %d nranks %d%s%s - init complete", (void*)h, h->rank,
             h->nranks, h->settings.commName.empty() ? "" : " name ", h->settings.commName.c_str());
  } else {
    h->initError = st.toString();
    if (background) recordError("ncclCommInitRank", st);
  }
  h->state.store(toResult(st.code()), std::memory_order_release);
  return st;
}

void runInitInBackground(ncclComm* h, UniqueId id) {
  (void)runInit(h, id, true);
}

Status checkInitArgs(ncclComm_t* out, int nranks, int rank) {
  if (!out) return Status::InvalidArgument("comm (the output pointer) is NULL");
  if (nranks < 1) return Status::InvalidArgument("nranks " + std::to_string(nranks) + " < 1");
  if (rank < 0 || rank >= nranks)
    return Status::InvalidArgument("rank " + std::to_string(rank) + " is outside [0, " +
                                   std::to_string(nranks) + ")");
  return Status::Ok();
}

// Creates the handle and runs (or starts) init. *pending: the caller gets ncclInProgress.
Status initRank(ncclComm_t* out, int nranks, const ncclUniqueId& id, int rank,
                const ncclConfig_t* config, bool* pending) {
  CHORUS_RETURN_IF_ERROR(checkInitArgs(out, nranks, rank));
  *out = nullptr;
  auto h = std::make_unique<ncclComm>();
  CHORUS_RETURN_IF_ERROR(parseConfig(config, &h->settings));
  h->rank = rank;
  h->nranks = nranks;
  // As NCCL does: the device current on the calling thread (init may go on on another).
  h->cudaDev = std::max(CudaRuntime::get().currentDevice(), 0);
  const bool inGroup = groupDepth() > 0;
  if (!h->settings.blocking || inGroup) {
    ncclComm* raw = h.release();
    registerComm(raw);
    raw->initThread = std::thread(runInitInBackground, raw, toCore(id));
    if (inGroup) deferInit(raw);
    *pending = !raw->settings.blocking;
    *out = raw;
    return Status::Ok();
  }
  CHORUS_RETURN_IF_ERROR(runInit(h.get(), toCore(id), false));
  registerComm(h.get());
  *out = h.release();
  return Status::Ok();
}

}  // namespace

extern "C" ncclResult_t pncclGetVersion(int* version) {
  return guard("ncclGetVersion", [&]() -> Status {
    if (!version) return Status::InvalidArgument("version is NULL");
    *version = NCCL_VERSION_CODE;
    return Status::Ok();
  });
}
NCCL_WEAK_ALIAS(ncclGetVersion);

extern "C" ncclResult_t pncclGetUniqueId(ncclUniqueId* uniqueId) {
  return guard("ncclGetUniqueId", [&]() -> Status {
    if (!uniqueId) return Status::InvalidArgument("uniqueId is NULL");
    Config cfg;
    CHORUS_RETURN_IF_ERROR(Config::fromEnvironment(&cfg, Config::Names::ChorusThenNccl));
    UniqueId id;
    CHORUS_RETURN_IF_ERROR(createUniqueId(&id, cfg.timeoutSec));
    memcpy(uniqueId, &id, sizeof id);
    return Status::Ok();
  });
}
NCCL_WEAK_ALIAS(ncclGetUniqueId);

extern "C" ncclResult_t pncclCommInitRankConfig(ncclComm_t* comm, int nranks, ncclUniqueId commId,
                                                int rank, ncclConfig_t* config) {
  bool pending = false;
  ncclResult_t r = guard("ncclCommInitRankConfig",
                         [&] { return initRank(comm, nranks, commId, rank, config, &pending); });
  return progressOr(r, pending);
}
NCCL_WEAK_ALIAS(ncclCommInitRankConfig);

extern "C" ncclResult_t pncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId commId,
                                          int rank) {
  return guard("ncclCommInitRank", [&] {
    bool pending = false;  // without a config the communicator is blocking
    return initRank(comm, nranks, commId, rank, nullptr, &pending);
  });
}
NCCL_WEAK_ALIAS(ncclCommInitRank);

// Chorus's bootstrap has one root, so only the first id is used; the others are accepted (a
// rank that made one started a root that simply expires at its deadline).
extern "C" ncclResult_t pncclCommInitRankScalable(ncclComm_t* newcomm, int nranks, int myrank,
                                                  int nId, ncclUniqueId* commIds,
                                                  ncclConfig_t* config) {
  bool pending = false;
  ncclResult_t r = guard("ncclCommInitRankScalable", [&]() -> Status {
    if (nId < 1) return Status::InvalidArgument("nId " + std::to_string(nId) + " < 1");
    if (!commIds) return Status::InvalidArgument("commIds is NULL");
    return initRank(newcomm, nranks, commIds[0], myrank, config, &pending);
  });
  return progressOr(r, pending);
}
NCCL_WEAK_ALIAS(ncclCommInitRankScalable);

namespace {

// One thread per communicator, since each init waits for all the others.
Status initAll(ncclComm_t* comms, int ndev, const int* devlist) {
  if (!comms) return Status::InvalidArgument("comm (the output array) is NULL");
  if (ndev < 1) return Status::InvalidArgument("ndev " + std::to_string(ndev) + " < 1");
  for (int i = 0; devlist && i < ndev; ++i)
    if (devlist[i] < 0)
      return Status::InvalidArgument("devlist[" + std::to_string(i) + "] = " +
                                     std::to_string(devlist[i]) + " is not a device number");
  CommSettings settings;
  CHORUS_RETURN_IF_ERROR(parseConfig(nullptr, &settings));
  UniqueId id;
  CHORUS_RETURN_IF_ERROR(createUniqueId(&id, settings.core.timeoutSec));
  std::vector<std::unique_ptr<ncclComm>> handles(ndev);
  std::vector<Status> results(ndev);
  std::vector<std::thread> threads;
  for (int i = 0; i < ndev; ++i) {
    handles[i] = std::make_unique<ncclComm>();
    handles[i]->rank = i;
    handles[i]->nranks = ndev;
    handles[i]->cudaDev = devlist ? devlist[i] : i;
    handles[i]->settings = settings;
    threads.emplace_back([&, i] { results[i] = runInit(handles[i].get(), id, false); });
  }
  for (std::thread& t : threads) t.join();
  for (int i = 0; i < ndev; ++i)
    if (!results[i].ok()) return results[i].withContext("communicator " + std::to_string(i));
  for (int i = 0; i < ndev; ++i) {
    registerComm(handles[i].get());
    comms[i] = handles[i].release();
  }
  return Status::Ok();
}

}  // namespace

extern "C" ncclResult_t pncclCommInitAll(ncclComm_t* comm, int ndev, const int* devlist) {
  return guard("ncclCommInitAll", [&] { return initAll(comm, ndev, devlist); });
}
NCCL_WEAK_ALIAS(ncclCommInitAll);
