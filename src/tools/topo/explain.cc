// --explain: for each pair of ranks, the path class, the transport Chorus would pick, and
// why; then the algorithm class for the whole job. Large jobs are summarised by kind of pair.
#include <algorithm>
#include <map>
#include <sstream>

#include "tools/cli/values.h"
#include "tools/topo/render.h"

namespace chorus::topo {

namespace {

using cli::fmt;

struct Choice {
  std::string transport;
  std::string why;
};

Choice nicChoice(const Topology& t, int a, int b) {
  const RankPlace &ra = t.ranks[a], &rb = t.ranks[b];
  int na = t.nearestNic(ra.host, ra.gpu, ra.socket), nb = t.nearestNic(rb.host, rb.gpu, rb.socket);
  if (na < 0 || nb < 0) return {"none", "a host has no NIC: these ranks cannot talk"};
  const Nic &x = t.hosts[ra.host].nics[na], &y = t.hosts[rb.host].nics[nb];
  Choice c;
  c.transport = (x.rdma && y.rdma ? "ibverbs " : "tcp ") + x.name + " <-> " + y.name;
  c.why = "different hosts; nearest NICs to each rank";
  if (!(x.rdma && y.rdma)) c.why += "; no RDMA on both ends";
  if (ra.gpu >= 0 && x.rdma) {
    PathClass gn = t.hosts[ra.host].gpuNicPaths[ra.gpu][na];
    c.why +=
        gn <= PathClass::PcieMultiSwitch
            ? "; GPU and NIC share a PCIe switch: GPUDirect RDMA"
            : std::string("; GPU to NIC is ") + pathClassName(gn) + ": staged through host memory";
  }
  return c;
}

Choice choose(const Topology& t, int a, int b) {
  PathClass c = t.pathBetweenRanks(a, b);
  bool gpus = t.ranks[a].gpu >= 0 && t.ranks[b].gpu >= 0;
  switch (c) {
    case PathClass::Self:
      return {"none", "same device"};
    case PathClass::Network:
      return nicChoice(t, a, b);
    case PathClass::NVLink:
      return {"cuda_ipc", "peer access over NVLink"};
    case PathClass::PcieSwitch:
    case PathClass::PcieMultiSwitch:
      return {"cuda_ipc", "PCIe peer-to-peer below the CPU"};
    case PathClass::HostBridge:
      if (gpus)
        return {"cuda_ipc", "PCIe peer-to-peer through the root complex (slower on some CPUs)"};
      return {"shm", "host memory on one socket"};
    case PathClass::CrossSocket:
      if (gpus)
        return {"shm",
                "peer-to-peer across sockets is slow or refused: staged through host memory"};
      return {"shm", "host memory across the socket link"};
  }
  return {"?", ""};
}

std::string algorithmClass(const Topology& t) {
  std::vector<std::vector<int>> byHost = t.ranksByHost();
  int hosts = 0;
  size_t perHost = 0;
  for (const auto& g : byHost) hosts += !g.empty(), perHost = std::max(perHost, g.size());
  PathClass worstIntra = PathClass::Self, bestIntra = PathClass::Network;
  for (const auto& g : byHost)
    for (size_t i = 0; i < g.size(); ++i)
      for (size_t j = i + 1; j < g.size(); ++j) {
        PathClass c = t.pathBetweenRanks(g[i], g[j]);
        worstIntra = std::max(worstIntra, c);
        bestIntra = std::min(bestIntra, c);
      }
  std::ostringstream o;
  o << "algorithm class: ";
  if (hosts <= 1) {
    o << "flat (one host, " << perHost << " ranks); ";
    if (perHost < 2)
      o << "a single rank: nothing to communicate";
    else if (worstIntra == bestIntra)
      o << "every pair is " << pathClassName(worstIntra)
        << ": ring for large messages, tree or direct for small ones";
    else
      o << "paths range from " << pathClassName(bestIntra) << " to " << pathClassName(worstIntra)
        << ": ring ordered to cross the slow class as few times as possible, or hierarchical by "
           "socket";
  } else {
    o << "hierarchical: " << hosts << " hosts x " << perHost << " ranks; inside a host over "
      << (perHost > 1 ? pathClassName(worstIntra) : "nothing") << " (slowest intra-host path), "
      << "between hosts over the network, one NIC per rank where the host has them (rails)";
  }
  return o.str() + "\n";
}

}  // namespace

std::string explainTopology(const Topology& t) {
  std::ostringstream o;
  int n = int(t.ranks.size());
  if (n <= 16) {
    for (int a = 0; a < n; ++a)
      for (int b = a + 1; b < n; ++b) {
        PathClass c = t.pathBetweenRanks(a, b);
        LinkParams p = t.link(c);
        Choice ch = choose(t, a, b);
        o << fmt("rank %2d - rank %2d: %-17s %5.1f us %7.1f GB/s  %s: %s\n", a, b, pathClassName(c),
                 p.latencyUs, p.bandwidthGBs, ch.transport.c_str(), ch.why.c_str());
      }
  } else {
    // One example per kind of pair, with how many pairs are of that kind.
    std::map<std::pair<PathClass, std::string>, std::pair<long, std::pair<int, int>>> kinds;
    for (int a = 0; a < n; ++a)
      for (int b = a + 1; b < n; ++b) {
        PathClass c = t.pathBetweenRanks(a, b);
        Choice ch = choose(t, a, b);
        auto& k = kinds[{c, ch.transport.substr(0, ch.transport.find(' '))}];
        if (k.first++ == 0) k.second = {a, b};
      }
    for (const auto& [key, v] : kinds) {
      PathClass c = key.first;
      LinkParams p = t.link(c);
      Choice ch = choose(t, v.second.first, v.second.second);
      o << fmt("%-17s %5.1f us %7.1f GB/s  %ld pair(s), e.g. rank %d - rank %d: %s: %s\n",
               pathClassName(c), p.latencyUs, p.bandwidthGBs, v.first, v.second.first,
               v.second.second, ch.transport.c_str(), ch.why.c_str());
    }
  }
  o << algorithmClass(t);
  return o.str();
}

}  // namespace chorus::topo
