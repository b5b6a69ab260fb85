// New communicators from old: ncclCommSplit and ncclCommShrink. Both are collective over the
// parent and run synchronously; with blocking = 0 the child is returned ready (ncclSuccess is
// a valid answer for a non-blocking call).
#include <algorithm>
#include <vector>

#include "nccl/api.h"
#include "nccl/comm_handle.h"
#include "nccl/errors.h"

using namespace chorus;
using namespace chorus::nccl;

namespace {

// Makes the child handle around what `make` builds from the parent's core (split or shrink).
template <typename Make>
Status childOf(ncclComm& parent, const ncclConfig_t* config, ncclComm_t* newcomm, Make make) {
  auto child = std::make_unique<ncclComm>();
  CHORUS_RETURN_IF_ERROR(childSettings(parent.settings, config, &child->settings));
  std::unique_ptr<Communicator> core;
  CHORUS_RETURN_IF_ERROR(make(child->settings.core, &core));
  if (!core) return Status::Ok();  // not a member: *newcomm stays NULL
  child->rank = core->rank();
  child->nranks = core->size();
  child->cudaDev = parent.cudaDev;
  child->core = std::move(core);
  child->state.store(ncclSuccess, std::memory_order_release);
  registerComm(child.get());
  *newcomm = child.release();
  return Status::Ok();
}

Status checkExcludeList(const ncclComm& c, const int* list, int count, bool* excludesMe) {
  if (count < 0)
    return Status::InvalidArgument("excludeRanksCount " + std::to_string(count) + " < 0");
  if (count > 0 && !list) return Status::InvalidArgument("excludeRanksList is NULL");
  std::vector<int> seen(list, list + count);
  std::sort(seen.begin(), seen.end());
  for (int i = 0; i < count; ++i) {
    if (seen[i] < 0 || seen[i] >= c.nranks)
      return Status::InvalidArgument("excluded rank " + std::to_string(seen[i]) +
                                     " is outside [0, " + std::to_string(c.nranks) + ")");
    if (i && seen[i] == seen[i - 1])
      return Status::InvalidArgument("rank " + std::to_string(seen[i]) + " is excluded twice");
  }
  if (count >= c.nranks) return Status::InvalidArgument("excludeRanksList excludes every rank");
  *excludesMe = std::binary_search(seen.begin(), seen.end(), c.rank);
  return Status::Ok();
}

}  // namespace

static Status splitInto(ncclComm& parent, int color, int key, const ncclConfig_t* config,
                        ncclComm_t* newcomm) {
  // Negative colors other than NOCOLOR are refused by the caller; the core reads any color < 0
  // as "not in a new communicator".
  return childOf(parent, config, newcomm, [&](const Config& c, std::unique_ptr<Communicator>* out) {
    return parent.core->split(color, key, c, out);
  });
}

extern "C" ncclResult_t pncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t* newcomm,
                                       ncclConfig_t* config) {
  return guard("ncclCommSplit", [&]() -> Status {
    CommRef c;
    CHORUS_RETURN_IF_ERROR(acquireReady(comm, &c));
    if (!newcomm) return Status::InvalidArgument("newcomm is NULL");
    *newcomm = nullptr;
    if (color < 0 && color != NCCL_SPLIT_NOCOLOR)
      return Status::InvalidArgument("color " + std::to_string(color) +
                                     " is negative and not NCCL_SPLIT_NOCOLOR");
    return splitInto(*c, color, key, config, newcomm);
  });
}
NCCL_WEAK_ALIAS(ncclCommSplit);

// Shrink: the ranks not listed make a new communicator by themselves (Communicator::shrink),
// so it works after the listed ranks died. NCCL_SHRINK_ABORT first aborts what the parent is
// doing, as NCCL does when a rank failed mid-operation.
extern "C" ncclResult_t pncclCommShrink(ncclComm_t comm, int* excludeRanksList,
                                        int excludeRanksCount, ncclComm_t* newcomm,
                                        ncclConfig_t* config, int shrinkFlags) {
  return guard("ncclCommShrink", [&]() -> Status {
    CommRef c;
    CHORUS_RETURN_IF_ERROR(acquireReady(comm, &c));
    if (!newcomm) return Status::InvalidArgument("newcomm is NULL");
    *newcomm = nullptr;
    if (shrinkFlags != NCCL_SHRINK_DEFAULT && shrinkFlags != NCCL_SHRINK_ABORT)
      return Status::InvalidArgument("shrinkFlags " + std::to_string(shrinkFlags) +
                                     " is not NCCL_SHRINK_DEFAULT or NCCL_SHRINK_ABORT");
    bool excluded = false;
    CHORUS_RETURN_IF_ERROR(checkExcludeList(*c, excludeRanksList, excludeRanksCount, &excluded));
    if (shrinkFlags == NCCL_SHRINK_ABORT) c->core->abort();
    std::vector<int> exclude(excludeRanksList, excludeRanksList + excludeRanksCount);
    return childOf(*c, config, newcomm, [&](const Config& cfg, std::unique_ptr<Communicator>* out) {
      return c->core->shrink(exclude, cfg, out);
    });
  });
}
NCCL_WEAK_ALIAS(ncclCommShrink);
