// The job-wide Topology: each host's description (discovered by the lowest rank on it, or read
// from CHORUS_TOPO_FILE) shared through the bootstrap, so that every rank holds the same view.
#pragma once

#include <cstddef>
#include <functional>
#include <string>

#include "topo/topology.h"

namespace chorus::topo {

struct JobTopologyOptions {
  std::string topoFile;  // CHORUS_TOPO_FILE: load this instead of discovering
  std::string dumpFile;  // CHORUS_TOPO_DUMP_FILE: rank 0 writes the job topology here
  std::string hostId;    // CHORUS_HOSTID: empty means hostname:boot id
  std::string gpuBusId;  // this rank's GPU ("0000:17:00.0"), empty for a host-memory rank
  int socket = -1;       // this rank's socket; -1 means the one it is running on now
};

// All ranks call it together with the same `size`. `allgather` is the bootstrap's: every rank
// passes `bytes` of its own and receives size * bytes, rank-major.
using AllgatherFn = std::function<Status(const void* mine, size_t bytes, void* all)>;
Status buildJobTopology(int rank, int size, const JobTopologyOptions& opts,
                        const AllgatherFn& allgather, Topology* out);

// The socket the calling thread runs on (0 when unknown).
int currentSocket();

}  // namespace chorus::topo
