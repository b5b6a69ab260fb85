// Writing the topology file format (docs/topology.md). The writer emits the most compact text
// that reloads to the same Topology: identical consecutive hosts become one block with a count,
// paths are written only where they differ from what the PCIe chains and NVLink lines imply,
// and rank placements use the per_gpu / per_host shorthands when they fit.
#include <charconv>
#include <sstream>

#include "topo/topology.h"

namespace chorus::topo {

std::string numberText(double v) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v);  // shortest text that reads back exactly
  return std::string(buf, r.ptr);
}

namespace {

// Host `h` as written inside a block of `count` (names and ids carry a "-i" suffix then).
bool sameShape(const Host& a, const Host& b) {
  Host x = a, y = b;
  x.name.clear(), x.id.clear(), y.name.clear(), y.id.clear();
  return x == y;
}

std::string suffixed(const std::string& base, int i) {
  return base + "-" + std::to_string(i);
}

// How many hosts from `first` on form one repeated block named base-0, base-1, ...
int blockLength(const std::vector<Host>& hosts, size_t first, std::string* base, std::string* id) {
  const std::string& n0 = hosts[first].name;
  if (n0.size() < 3 || n0.compare(n0.size() - 2, 2, "-0") != 0) return 1;
  *base = n0.substr(0, n0.size() - 2);
  const std::string& i0 = hosts[first].id;
  bool ids = !i0.empty();
  if (ids && (i0.size() < 3 || i0.compare(i0.size() - 2, 2, "-0") != 0)) return 1;
  *id = ids ? i0.substr(0, i0.size() - 2) : "";
  int len = 1;
  while (first + len < hosts.size()) {
    const Host& h = hosts[first + len];
    if (h.name != suffixed(*base, len) || h.id != (ids ? suffixed(*id, len) : "") ||
        !sameShape(h, hosts[first]))
      break;
    ++len;
  }
  return len;
}

void writeNvlinkAndPaths(const Host& h, std::ostream& o) {
  size_t g = h.gpus.size();
  Host base = h;
  derivePaths(&base);
  std::vector<std::pair<size_t, size_t>> pairs;
  size_t offDiagonal = g * (g - (g ? 1 : 0)) / 2;
  for (size_t i = 0; i < g; ++i)
    for (size_t j = i + 1; j < g; ++j)
      if (h.gpuPaths[i][j] == PathClass::NVLink && h.gpuPaths[j][i] == PathClass::NVLink)
        pairs.push_back({i, j});
  if (!pairs.empty() && pairs.size() == offDiagonal) {
    o << "  nvlink all\n";
  } else if (!pairs.empty()) {
    o << "  nvlink";
    for (auto [i, j] : pairs) o << ' ' << i << '-' << j;
    o << '\n';
  }
  for (auto [i, j] : pairs) base.gpuPaths[i][j] = base.gpuPaths[j][i] = PathClass::NVLink;
  for (size_t i = 0; i < g; ++i) {
    for (size_t j = 0; j < g; ++j)
      if (h.gpuPaths[i][j] != base.gpuPaths[i][j])
        o << "  path gpu " << i << " gpu " << j << ' ' << pathClassName(h.gpuPaths[i][j]) << '\n';
    for (size_t k = 0; k < h.nics.size(); ++k)
      if (h.gpuNicPaths[i][k] != base.gpuNicPaths[i][k])
        o << "  path gpu " << i << " nic " << k << ' ' << pathClassName(h.gpuNicPaths[i][k])
          << '\n';
  }
}

void writeHost(const Host& h, const std::string& name, const std::string& id, int count,
               std::ostream& o) {
  o << "host " << name;
  if (count > 1) o << " count=" << count;
  if (!id.empty()) o << " id=" << id;
  o << " sockets=" << h.sockets << " cores_per_socket=" << h.coresPerSocket
    << " numa=" << h.numaNodes << '\n';
  for (const Gpu& g : h.gpus) {
    o << "  gpu " << g.busId << " socket=" << g.socket << " numa=" << g.numa;
    if (!g.pci.empty()) o << " pci=" << g.pci;
    if (g.pcieGTs > 0) o << " pcie_gts=" << numberText(g.pcieGTs);
    if (g.pcieWidth > 0) o << " pcie_width=" << g.pcieWidth;
    if (g.nvlinks > 0) o << " nvlinks=" << g.nvlinks;
    if (g.nvlinkGBs > 0) o << " nvlink_gbs=" << numberText(g.nvlinkGBs);
    o << '\n';
  }
  for (const Nic& n : h.nics) {
    o << "  nic " << n.name;
    if (!n.busId.empty()) o << " bus=" << n.busId;
    o << " socket=" << n.socket << " numa=" << n.numa;
    if (!n.pci.empty()) o << " pci=" << n.pci;
    o << " speed_gbps=" << numberText(n.speedGbps) << " rdma=" << (n.rdma ? 1 : 0) << '\n';
  }
  writeNvlinkAndPaths(h, o);
  o << "end\n";
}

void writeRanks(const Topology& t, std::ostream& o) {
  Topology probe;
  probe.hosts = t.hosts;
  placeRanksPerGpu(&probe);
  if (probe.ranks == t.ranks) {
    o << "ranks per_gpu\n";
    return;
  }
  if (!t.hosts.empty() && t.ranks.size() % t.hosts.size() == 0 && !t.ranks.empty()) {
    placeRanksPerHost(&probe, int(t.ranks.size() / t.hosts.size()));
    if (probe.ranks == t.ranks) {
      o << "ranks per_host " << t.ranks.size() / t.hosts.size() << '\n';
      return;
    }
  }
  for (const RankPlace& r : t.ranks)
    o << "rank " << r.host << ' ' << r.socket << ' ' << r.gpu << '\n';
}

}  // namespace

std::string formatEstimates(const Topology& t) {
  std::ostringstream o;
  o << "reduce host_gbs=" << numberText(t.hostReduceGBs)
    << " device_gbs=" << numberText(t.deviceReduceGBs);
  if (t.deviceCopyGBs != 0) o << " device_copy_gbs=" << numberText(t.deviceCopyGBs);
  o << '\n';
  const Topology defaults;
  if (t.stepOverheadUs != defaults.stepOverheadUs || t.deviceMessageBytes != 0) {
    o << "executor step_us=" << numberText(t.stepOverheadUs);
    if (t.deviceMessageBytes != 0) o << " device_message_kib=" << (t.deviceMessageBytes >> 10);
    o << '\n';
  }
  if (t.nvlinkEfficiency != defaults.nvlinkEfficiency || t.nicEfficiency != defaults.nicEfficiency)
    o << "efficiency nvlink=" << numberText(t.nvlinkEfficiency)
      << " nic=" << numberText(t.nicEfficiency) << '\n';
  // Whenever any is set, so that a dump reloads to the same values (tests/fuzz).
  if (t.missGBs != 0 || t.cacheMiB != 0 || t.allMissMiB != 0)
    o << "memory cache_mib=" << numberText(t.cacheMiB)
      << " all_miss_mib=" << numberText(t.allMissMiB) << " miss_gbs=" << numberText(t.missGBs)
      << '\n';
  for (const auto& [c, p] : t.links)
    o << "link " << pathClassName(c) << " latency_us=" << numberText(p.latencyUs)
      << " bandwidth_gbs=" << numberText(p.bandwidthGBs) << '\n';
  return o.str();
}

std::string formatTopology(const Topology& t) {
  std::ostringstream o;
  o << "chorus-topology 1\n" << formatEstimates(t);
  for (size_t h = 0; h < t.hosts.size();) {
    std::string base, id;
    int len = blockLength(t.hosts, h, &base, &id);
    if (len > 1)
      writeHost(t.hosts[h], base, id, len, o);
    else
      writeHost(t.hosts[h], t.hosts[h].name, t.hosts[h].id, 1, o);
    h += len;
  }
  writeRanks(t, o);
  return o.str();
}

}  // namespace chorus::topo
