// Path classes, default link estimates and the queries on a Topology.
#include "topo/topology.h"

#include <algorithm>
#include <cmath>

namespace chorus::topo {

namespace {
const char* const kPathNames[kNumPathClasses] = {
    "self", "nvlink", "pcie_switch", "pcie_multi_switch", "host_bridge", "cross_socket", "network"};
}  // namespace

const char* pathClassName(PathClass c) {
  int i = static_cast<int>(c);
  return i >= 0 && i < kNumPathClasses ? kPathNames[i] : "unknown";
}

bool parsePathClass(const std::string& s, PathClass* out) {
  for (int i = 0; i < kNumPathClasses; ++i) {
    if (s == kPathNames[i]) {
      *out = static_cast<PathClass>(i);
      return true;
    }
  }
  return false;
}

// Rough H100-era figures, per direction, for what a collective step achieves (not the wire
// rate): enough to rank the classes; files and tuning replace them.
LinkParams defaultLink(PathClass c) {
  switch (c) {
    case PathClass::Self:
      return {0.2, 200};
    case PathClass::NVLink:
      return {1.5, 350};
    case PathClass::PcieSwitch:
      return {2.0, 24};
    case PathClass::PcieMultiSwitch:
      return {2.5, 20};
    case PathClass::HostBridge:
      return {3.0, 16};
    case PathClass::CrossSocket:
      return {4.0, 12};
    case PathClass::Network:
      return {15.0, 10};
  }
  return {15.0, 10};
}

LinkParams Topology::link(PathClass c) const {
  auto it = links.find(c);
  return it != links.end() ? it->second : defaultLink(c);
}

PathClass Topology::pathBetweenRanks(int a, int b) const {
  if (a == b) return PathClass::Self;
  const RankPlace& ra = ranks.at(a);
  const RankPlace& rb = ranks.at(b);
  if (ra.host != rb.host) return PathClass::Network;
  const Host& h = hosts.at(ra.host);
  if (ra.gpu >= 0 && rb.gpu >= 0) {
    if (ra.gpu == rb.gpu) return PathClass::Self;
    return h.gpuPaths.at(ra.gpu).at(rb.gpu);
  }
  // A host-memory rank meets the other through shared memory on its socket's root complex.
  int sa = ra.gpu >= 0 ? h.gpus.at(ra.gpu).socket : ra.socket;
  int sb = rb.gpu >= 0 ? h.gpus.at(rb.gpu).socket : rb.socket;
  return sa == sb ? PathClass::HostBridge : PathClass::CrossSocket;
}

double Topology::nvlinkPortGBs(int host, int gpu) const {
  if (gpu < 0) return 0;
  const Gpu& g = hosts.at(host).gpus.at(gpu);
  return g.nvlinks * g.nvlinkGBs * nvlinkEfficiency;
}

int Topology::nearestNic(int host, int gpu, int socket) const {
  const Host& h = hosts.at(host);
  int best = -1;
  PathClass bestClass = PathClass::Network;
  for (int k = 0; k < int(h.nics.size()); ++k) {
    const Nic& n = h.nics[k];
    PathClass c;
    if (gpu >= 0)
      c = h.gpuNicPaths.at(gpu).at(k);
    else
      c = n.socket == socket ? PathClass::HostBridge : PathClass::CrossSocket;
    // Nearest first; among equals the faster, then RDMA, then the lower index.
    bool better = best < 0 || c < bestClass ||
                  (c == bestClass &&
                   (n.speedGbps > h.nics[best].speedGbps ||
                    (n.speedGbps == h.nics[best].speedGbps && n.rdma && !h.nics[best].rdma)));
    if (better) {
      best = k;
      bestClass = c;
    }
  }
  return best;
}

std::vector<std::vector<int>> Topology::ranksByHost() const {
  std::vector<std::vector<int>> out(hosts.size());
  for (int r = 0; r < int(ranks.size()); ++r) {
    int h = ranks[r].host;
    if (h >= int(out.size())) out.resize(h + 1);
    out[h].push_back(r);
  }
  return out;
}

std::vector<std::vector<int>> Topology::ranksBySocket(int host) const {
  std::vector<std::vector<int>> out(host < int(hosts.size()) ? hosts[host].sockets : 1);
  for (int r = 0; r < int(ranks.size()); ++r) {
    if (ranks[r].host != host) continue;
    int s = std::max(0, ranks[r].socket);
    if (s >= int(out.size())) out.resize(s + 1);
    out[s].push_back(r);
  }
  return out;
}

bool Topology::sameAs(const Topology& o) const {
  return hosts == o.hosts && ranks == o.ranks && links == o.links &&
         hostReduceGBs == o.hostReduceGBs && deviceReduceGBs == o.deviceReduceGBs &&
         deviceCopyGBs == o.deviceCopyGBs && stepOverheadUs == o.stepOverheadUs &&
         deviceMessageBytes == o.deviceMessageBytes && nvlinkEfficiency == o.nvlinkEfficiency &&
         nicEfficiency == o.nicEfficiency && cacheMiB == o.cacheMiB && allMissMiB == o.allMissMiB &&
         missGBs == o.missGBs;
}

double Topology::missFraction(double bytes) const {
  const double mib = bytes / double(1 << 20);
  if (missGBs <= 0 || mib <= cacheMiB) return 0;
  if (mib >= allMissMiB || cacheMiB <= 0) return 1;
  return std::log(mib / cacheMiB) / std::log(allMissMiB / cacheMiB);
}

namespace {
std::vector<std::string> splitChain(const std::string& pci) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start < pci.size()) {
    size_t end = pci.find('/', start);
    if (end == std::string::npos) end = pci.size();
    if (end > start) out.push_back(pci.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

// The PCIe class between two devices from their sockets and switch chains: sharing the whole
// chain means one switch; sharing a prefix means several; sharing nothing means the devices
// meet at the root complex (or across the socket link).
PathClass pciePath(int socketA, const std::string& a, int socketB, const std::string& b) {
  if (socketA != socketB) return PathClass::CrossSocket;
  std::vector<std::string> ca = splitChain(a), cb = splitChain(b);
  size_t k = 0;
  while (k < ca.size() && k < cb.size() && ca[k] == cb[k]) ++k;
  if (k == 0) return PathClass::HostBridge;
  return ca.size() == k && cb.size() == k ? PathClass::PcieSwitch : PathClass::PcieMultiSwitch;
}
}  // namespace

void derivePaths(Host* h) {
  size_t g = h->gpus.size(), n = h->nics.size();
  h->gpuPaths.assign(g, std::vector<PathClass>(g, PathClass::Self));
  h->gpuNicPaths.assign(g, std::vector<PathClass>(n, PathClass::HostBridge));
  for (size_t i = 0; i < g; ++i) {
    const Gpu& a = h->gpus[i];
    for (size_t j = 0; j < g; ++j)
      if (i != j) h->gpuPaths[i][j] = pciePath(a.socket, a.pci, h->gpus[j].socket, h->gpus[j].pci);
    for (size_t k = 0; k < n; ++k)
      h->gpuNicPaths[i][k] = pciePath(a.socket, a.pci, h->nics[k].socket, h->nics[k].pci);
  }
}

void placeRanksPerGpu(Topology* t) {
  t->ranks.clear();
  for (int h = 0; h < int(t->hosts.size()); ++h) {
    const Host& host = t->hosts[h];
    if (host.gpus.empty()) t->ranks.push_back({h, 0, -1});
    for (int g = 0; g < int(host.gpus.size()); ++g) t->ranks.push_back({h, host.gpus[g].socket, g});
  }
}

void placeRanksPerHost(Topology* t, int n) {
  t->ranks.clear();
  for (int h = 0; h < int(t->hosts.size()); ++h) {
    int sockets = std::max(1, t->hosts[h].sockets);
    for (int i = 0; i < n; ++i) t->ranks.push_back({h, int(int64_t(i) * sockets / n), -1});
  }
}

}  // namespace chorus::topo
