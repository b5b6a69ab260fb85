#include "tune/placement.h"

#include <algorithm>
#include <map>

namespace chorus {

using topo::PathClass;

Placement placeRanks(const topo::Topology& topo, int n) {
  Placement out;
  out.ranks.resize(n);
  auto placed = [&](int r) { return r < int(topo.ranks.size()); };
  std::map<int, int> hostRanks;
  for (int r = 0; r < n; ++r)
    if (placed(r) && topo.ranks[r].gpu < 0) ++hostRanks[topo.ranks[r].host];
  // (host, nic or -1-rank) -> port; (host, gpu) -> port.
  std::map<std::pair<int, int>, int> nicPort, gpuPort;
  auto port = [&](std::map<std::pair<int, int>, int>& index, std::pair<int, int> key, double gbs) {
    auto [it, fresh] = index.emplace(key, int(out.portGBs.size()));
    if (fresh) out.portGBs.push_back(gbs);
    return it->second;
  };
  for (int r = 0; r < n; ++r) {
    Place& ri = out.ranks[r];
    ri.copyGBs = topo.link(PathClass::Self).bandwidthGBs;
    ri.reduceGBs = topo.hostReduceGBs;
    // The network estimate caps a NIC: it is what chorus-tune measures between two hosts.
    double nicGBs = topo.link(PathClass::Network).bandwidthGBs;
    std::pair<int, int> key{-1, -1 - r};
    if (placed(r)) {
      const topo::RankPlace& pl = topo.ranks[r];
      const topo::Host& h = topo.hosts.at(pl.host);
      if (pl.gpu >= 0) ri.reduceGBs = topo.deviceReduceGBs;
      if (pl.gpu >= 0 && topo.deviceCopyGBs > 0) ri.copyGBs = topo.deviceCopyGBs;
      if (pl.gpu < 0) ri.host = pl.host;
      const int cores = std::max(1, h.sockets * h.coresPerSocket);
      if (pl.gpu < 0) ri.stretch = std::max(1.0, double(hostRanks[pl.host]) / cores);
      const int k = topo.nearestNic(pl.host, pl.gpu, pl.socket);
      if (k >= 0) {
        key = {pl.host, k};
        const double line = h.nics[k].speedGbps / 8 * topo.nicEfficiency;
        if (line > 0) nicGBs = std::min(nicGBs, line);
        ri.nicReadsMemory = pl.gpu >= 0 && h.nics[k].rdma;
      }
      const double nvGBs = topo.nvlinkPortGBs(pl.host, pl.gpu);
      if (nvGBs > 0) ri.nvlink = port(gpuPort, {pl.host, pl.gpu}, nvGBs);
    }
    ri.nic = port(nicPort, key, nicGBs);
  }
  return out;
}

bool portsOf(const Place& pa, const Place& pb, PathClass pc, int* from, int* to) {
  if (pc == PathClass::Network) {
    *from = pa.nic, *to = pb.nic;
    return true;
  }
  if (pc == PathClass::NVLink && pa.nvlink >= 0 && pb.nvlink >= 0) {
    *from = pa.nvlink, *to = pb.nvlink;
    return true;
  }
  return false;
}

}  // namespace chorus

namespace chorus {

size_t assumedMessageBytes(const topo::Topology& topo, int n, size_t hostBytes) {
  if (topo.deviceMessageBytes == 0 || n > int(topo.ranks.size())) return hostBytes;
  for (int r = 0; r < n; ++r)
    if (topo.ranks[r].gpu < 0) return hostBytes;
  return size_t(topo.deviceMessageBytes);
}

}  // namespace chorus
