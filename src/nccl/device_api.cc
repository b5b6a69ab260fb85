// The host functions of NCCL 2.28's device API (nccl_device.h), which NVIDIA's libnccl.so.2
// exports, so that a program linked against them loads Chorus and is told plainly what it
// cannot have. Device-initiated communication needs symmetric device memory windows, which
// Chorus does not have (docs/gpu.md): creating a device communicator or reserving its
// resources returns ncclInvalidUsage naming the function. The team queries answer truthfully
// for what Chorus offers: every rank is in the world team, and no peer is reachable by load and
// store, so the LSA team is the rank alone and the rail team is the world.
//
// The types are declared here with the layout of NVIDIA's headers (nccl_device/core.h): only
// ncclTeam travels by value; the others are passed by pointer and never read.
#include "nccl/api.h"
#include "nccl/comm_handle.h"
#include "nccl/errors.h"

using namespace chorus;
using namespace chorus::nccl;

extern "C" {
struct ncclTeam {
  int nRanks, rank, stride;
};
typedef struct ncclTeam ncclTeam_t;
struct ncclDevCommRequirements;
struct ncclDevComm;
struct ncclDevResourceRequirements;
struct ncclGinBarrierHandle;
struct ncclLsaBarrierHandle;
struct ncclLLA2AHandle;
}

namespace {

ncclResult_t unsupported(const char* fn) {
  return recordError(
      fn, Status::InvalidUsage("the NCCL device API (nccl_device.h: device communicators, "
                               "barriers and LL all-to-all in kernels) is not implemented by "
                               "Chorus; use the host collectives (ncclAllReduce, ncclSend, ...)"));
}

// The world team of `comm`, or an empty team (and the error recorded) when it is no
// communicator.
ncclTeam_t worldOf(const char* fn, ncclComm_t comm) {
  ncclTeam_t t{0, 0, 1};
  (void)guard(fn, [&]() -> Status {
    CommRef c;
    CHORUS_RETURN_IF_ERROR(acquire(comm, &c));
    t.nRanks = c->nranks;
    t.rank = c->rank;
    return Status::Ok();
  });
  return t;
}

}  // namespace

extern "C" ncclResult_t pncclDevCommCreate(ncclComm_t, const ncclDevCommRequirements*,
                                           ncclDevComm*) {
  return unsupported("ncclDevCommCreate");
}
NCCL_WEAK_ALIAS(ncclDevCommCreate);

extern "C" ncclResult_t pncclDevCommDestroy(ncclComm_t, const ncclDevComm*) {
  return unsupported("ncclDevCommDestroy");
}
NCCL_WEAK_ALIAS(ncclDevCommDestroy);

extern "C" ncclResult_t pncclGinBarrierCreateRequirement(ncclComm_t, ncclTeam_t, int,
                                                         ncclGinBarrierHandle*,
                                                         ncclDevResourceRequirements*) {
  return unsupported("ncclGinBarrierCreateRequirement");
}
NCCL_WEAK_ALIAS(ncclGinBarrierCreateRequirement);

extern "C" ncclResult_t pncclLsaBarrierCreateRequirement(ncclTeam_t, int, ncclLsaBarrierHandle*,
                                                         ncclDevResourceRequirements*) {
  return unsupported("ncclLsaBarrierCreateRequirement");
}
NCCL_WEAK_ALIAS(ncclLsaBarrierCreateRequirement);

extern "C" ncclResult_t pncclLLA2ACreateRequirement(int, int, ncclLLA2AHandle*,
                                                    ncclDevResourceRequirements*) {
  return unsupported("ncclLLA2ACreateRequirement");
}
NCCL_WEAK_ALIAS(ncclLLA2ACreateRequirement);

// A count, not a result: -1 (no slots can be had) with the reason kept for ncclGetLastError.
extern "C" int pncclLLA2ACalcSlots(int, int) {
  (void)unsupported("ncclLLA2ACalcSlots");
  return -1;
}
NCCL_WEAK_ALIAS(ncclLLA2ACalcSlots);

extern "C" ncclTeam_t pncclTeamWorld(ncclComm_t comm) {
  return worldOf("ncclTeamWorld", comm);
}
NCCL_WEAK_ALIAS(ncclTeamWorld);

extern "C" ncclTeam_t pncclTeamLsa(ncclComm_t comm) {
  const ncclTeam_t world = worldOf("ncclTeamLsa", comm);
  return ncclTeam_t{world.nRanks > 0 ? 1 : 0, 0, 1};
}
NCCL_WEAK_ALIAS(ncclTeamLsa);

// One rank per LSA team, so the rail (a rank of each LSA team) is the world.
extern "C" ncclTeam_t pncclTeamRail(ncclComm_t comm) {
  return worldOf("ncclTeamRail", comm);
}
NCCL_WEAK_ALIAS(ncclTeamRail);

// Team rank `rank` of `team` as a world rank: this rank plus the distance in team steps.
extern "C" int pncclTeamRankToWorld(ncclComm_t comm, ncclTeam_t team, int rank) {
  return worldOf("ncclTeamRankToWorld", comm).rank + (rank - team.rank) * team.stride;
}
NCCL_WEAK_ALIAS(ncclTeamRankToWorld);

// The same within the LSA team, where this rank is rank 0.
extern "C" int pncclTeamRankToLsa(ncclComm_t comm, ncclTeam_t team, int rank) {
  (void)worldOf("ncclTeamRankToLsa", comm);
  return (rank - team.rank) * team.stride;
}
NCCL_WEAK_ALIAS(ncclTeamRankToLsa);
