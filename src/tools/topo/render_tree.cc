// The readable tree: hosts, sockets, devices under them with their nearest NIC, then the GPU
// path matrices in nvidia-smi's abbreviations, the rank placement and the link estimates.
#include <sstream>

#include "tools/cli/values.h"
#include "tools/topo/render.h"

namespace chorus::topo {

namespace {

using cli::fmt;

// nvidia-smi topo -m's abbreviations, in PathClass order.
const char* const kPathAbbrev[kNumPathClasses] = {"X", "NV", "PIX", "PXB", "PHB", "SYS", "NET"};

const char* pathAbbrev(PathClass c) {
  return kPathAbbrev[int(c)];
}

bool sameShape(const Host& a, const Host& b) {
  Host x = a, y = b;
  x.name = y.name = x.id = y.id = "";
  return x == y;
}

void matrices(const Host& h, std::ostream& o) {
  if (h.gpus.empty()) return;
  o << "  paths      ";
  for (size_t j = 0; j < h.gpus.size(); ++j) o << fmt("%-5s", fmt("g%zu", j).c_str());
  for (size_t k = 0; k < h.nics.size(); ++k) o << fmt("%-5s", fmt("n%zu", k).c_str());
  o << '\n';
  for (size_t i = 0; i < h.gpus.size(); ++i) {
    o << fmt("    g%-7zu", i);
    for (PathClass c : h.gpuPaths[i]) o << fmt("%-5s", pathAbbrev(c));
    for (PathClass c : h.gpuNicPaths[i]) o << fmt("%-5s", pathAbbrev(c));
    o << '\n';
  }
  o << "  (X self, NV nvlink, PIX one PCIe switch, PXB several switches, PHB host bridge, "
       "SYS across sockets)\n";
}

void host(const Topology& t, int hi, std::ostream& o) {
  const Host& h = t.hosts[hi];
  o << fmt("host %d: %s  [%d socket(s) x %d core(s), %d NUMA node(s)]\n", hi, h.name.c_str(),
           h.sockets, h.coresPerSocket, h.numaNodes);
  if (!h.id.empty() && h.id != h.name) o << "  id " << h.id << '\n';
  for (int s = 0; s < h.sockets; ++s) {
    o << fmt("  socket %d\n", s);
    for (size_t g = 0; g < h.gpus.size(); ++g) {
      const Gpu& d = h.gpus[g];
      if (d.socket != s) continue;
      int nic = t.nearestNic(hi, int(g), s);
      o << fmt("    gpu %-2zu %s  numa %d", g, d.busId.c_str(), d.numa);
      if (!d.pci.empty()) o << "  pcie " << d.pci;
      if (d.pcieWidth) o << fmt("  gen %.0f GT/s x%d", d.pcieGTs, d.pcieWidth);
      if (nic >= 0)
        o << "  -> nic " << h.nics[nic].name << " (" << pathClassName(h.gpuNicPaths[g][nic]) << ")";
      o << '\n';
    }
    for (const Nic& n : h.nics) {
      if (n.socket != s) continue;
      o << fmt("    nic %-8s %s  numa %d  %s%s", n.name.c_str(),
               n.busId.empty() ? "(virtual)" : n.busId.c_str(), n.numa,
               n.speedGbps > 0 ? fmt("%g Gb/s", n.speedGbps).c_str() : "speed unknown",
               n.rdma ? "  rdma" : "");
      if (!n.pci.empty()) o << "  pcie " << n.pci;
      o << '\n';
    }
  }
  matrices(h, o);
}

void ranks(const Topology& t, std::ostream& o) {
  std::vector<std::vector<int>> byHost = t.ranksByHost();
  o << "ranks: " << t.ranks.size() << '\n';
  for (size_t h = 0; h < byHost.size(); ++h) {
    if (h == 3 && byHost.size() > 4) {
      o << fmt("  ... %zu more host(s)\n", byHost.size() - 4);
      h = byHost.size() - 1;
    }
    o << fmt("  host %zu:", h);
    for (int r : byHost[h]) {
      const RankPlace& p = t.ranks[r];
      o << fmt(" %d(s%d%s)", r, p.socket, p.gpu >= 0 ? fmt(",g%d", p.gpu).c_str() : "");
    }
    o << '\n';
  }
}

}  // namespace

std::string renderTree(const Topology& t, const RenderOptions& opt) {
  std::ostringstream o;
  o << "topology from " << (t.source.empty() ? "memory" : t.source) << ": " << t.hosts.size()
    << " host(s), " << t.ranks.size() << " rank(s)\n";
  int shown = 0;
  for (size_t h = 0; h < t.hosts.size();) {
    size_t run = 1;
    while (h + run < t.hosts.size() && sameShape(t.hosts[h], t.hosts[h + run])) ++run;
    if (shown < opt.maxHosts) {
      host(t, int(h), o);
      ++shown;
    }
    if (run > 1)
      o << fmt("hosts %zu..%zu (%s .. %s): same as host %zu\n", h + 1, h + run - 1,
               t.hosts[h + 1].name.c_str(), t.hosts[h + run - 1].name.c_str(), h);
    h += run;
  }
  ranks(t, o);
  o << "link estimates (latency, bandwidth per direction):\n";
  for (int c = 0; c < kNumPathClasses; ++c) {
    LinkParams p = t.link(PathClass(c));
    o << fmt("  %-18s %6.2f us  %8.2f GB/s%s\n", pathClassName(PathClass(c)), p.latencyUs,
             p.bandwidthGBs, t.links.count(PathClass(c)) ? "" : "  (default)");
  }
  if (!opt.notes.empty()) o << "discovery notes:\n" << opt.notes;
  return o.str();
}

}  // namespace chorus::topo
