#include "overlap_policy.h"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <vector>

#include "common/fnv1a.h"
#include "topo/probe.h"

namespace train {
namespace {

int cpusAllowed() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return 1;
  return std::max(1, CPU_COUNT(&set));
}

}  // namespace

chorus::Status measureHostShare(chorus::Communicator& comm, HostShare* out) {
  // The host id Chorus's topology uses (host name and boot id), hashed to a fixed size.
  const uint64_t mine = chorus::fnv1a(chorus::topo::defaultHostId());
  std::vector<uint64_t> all(size_t(comm.size()));
  CHORUS_RETURN_IF_ERROR(comm.allGather(&mine, all.data(), 1, chorus::DataType::Uint64)
                             .withContext("counting the ranks on each machine"));
  out->localRanks = int(std::count(all.begin(), all.end(), mine));
  const long online = std::max(1L, sysconf(_SC_NPROCESSORS_ONLN));
  out->cpus = std::max(1, std::min(cpusAllowed(), int(online / out->localRanks)));
  return chorus::Status::Ok();
}

bool overlapPays(const HostShare& h) {
  return h.cpus >= 2;
}

std::string describe(const HostShare& h) {
  return std::to_string(h.localRanks) + " rank(s) on this machine, " + std::to_string(h.cpus) +
         (h.cpus == 1 ? " CPU each" : " CPUs each");
}

}  // namespace train
