// Several NICs per host (rails): which one a rank uses. The nearest to the CPU the rank runs on
// (its NUMA node, where sysfs says), and among the equally near, the one at the rank's place on
// its host: local rank i takes the i-th, modulo their count. Rank i of every host then sits on
// rail i, so the cross-host steps of the hierarchical algorithms (one ring or tree per local
// position) run one per rail, in parallel, as a rail-optimised fabric wants.
#pragma once

#include <string>
#include <vector>

#include "chorus/status.h"
#include "common/socket.h"

namespace chorus {

// Index into `nicNuma` (each NIC's NUMA node, -1 unknown) for the rank at `localIndex` on its
// host, running on NUMA node `myNuma` (-1 unknown). `nicNuma` must not be empty.
size_t chooseRail(const std::vector<int>& nicNuma, int myNuma, int localIndex);

// The NUMA node of the CPU the calling thread runs on, or -1.
int currentNumaNode();

// The interface a rank's sockets use. Where `spec` (CHORUS_SOCKET_IFNAME's syntax) matches
// several interfaces, each is a rail and chooseRail picks; an empty spec takes the first usable
// interface, as a single-rail job always has. *rails says how many there were to choose from.
Status findRailInterface(const std::string& spec, int family, int localIndex, NetInterface* out,
                         std::vector<std::string>* rails);

// For logs: "; rails eth0, eth1 (local rank 1)".
std::string railNote(const std::vector<std::string>& rails, int localIndex);

// The rank's position among the ranks of its host (hostOf[q]: an id per host).
int localIndexOf(const std::vector<int>& hostOf, int rank);

}  // namespace chorus
