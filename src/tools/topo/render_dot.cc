// --dot: a Graphviz picture. Each host is a box holding one box per socket; GPUs and NICs hang
// off PCIe switches under their socket's CPU; NVLink runs through an NVSwitch node when every
// GPU pair is linked; NICs reach a network node. Edge colour and width give the path class, so
// slow paths (across sockets, through the host bridge) stand out. A legend lists the classes
// with their latency and bandwidth estimates.
#include <algorithm>
#include <map>
#include <sstream>

#include "tools/cli/values.h"
#include "tools/topo/render.h"

namespace chorus::topo {

namespace {

using cli::fmt;

struct Style {
  const char* color;
  double width;
  const char* style;
};

// In PathClass order: self, NVLink, one PCIe switch, several, host bridge, across sockets,
// network.
const Style kStyles[kNumPathClasses] = {{"#000000", 1, "solid"},   {"#76b900", 3.5, "solid"},
                                        {"#1f77b4", 2.5, "solid"}, {"#17becf", 2, "solid"},
                                        {"#9467bd", 2, "solid"},   {"#d62728", 3, "bold"},
                                        {"#7f7f7f", 1.5, "dashed"}};

// `extra` carries further attributes, e.g. constraint=false for edges that must not pull
// nodes onto different ranks (the socket link would otherwise put socket 1 below socket 0).
std::string edge(const std::string& a, const std::string& b, PathClass c,
                 const std::string& extra = "") {
  const Style& s = kStyles[int(c)];
  return fmt("  %s -- %s [color=\"%s\", penwidth=%.1f, style=%s%s%s];\n", a.c_str(), b.c_str(),
             s.color, s.width, s.style, extra.empty() ? "" : ", ", extra.c_str());
}

std::string legend(const Topology& t) {
  std::ostringstream o;
  o << "  legend [shape=plaintext, label=<<table border=\"0\" cellborder=\"1\" cellspacing=\"0\" "
       "cellpadding=\"4\"><tr><td colspan=\"2\"><b>path class</b></td><td><b>latency</b></td>"
       "<td><b>bandwidth</b></td></tr>";
  for (int c = 1; c < kNumPathClasses; ++c) {
    LinkParams p = t.link(PathClass(c));
    o << fmt(
        "<tr><td bgcolor=\"%s\" width=\"24\"></td><td align=\"left\">%s</td><td>%.1f us</td>"
        "<td>%.1f GB/s</td></tr>",
        kStyles[c].color, pathClassName(PathClass(c)), p.latencyUs, p.bandwidthGBs);
  }
  o << "</table>>];\n";
  return o.str();
}

void drawHost(const Topology& t, int hi, std::ostream& o, std::ostream& outside) {
  const Host& h = t.hosts[hi];
  std::string p =
      std::string("h").append(std::to_string(hi));  // GCC 12 -Wrestrict false positive on "h" + ...
  o << "  subgraph cluster_" << p << " {\n  label=\""
    << fmt("%s\\n%d socket(s) x %d cores, %d NUMA node(s)", h.name.c_str(), h.sockets,
           h.coresPerSocket, h.numaNodes)
    << "\"; style=\"rounded\"; color=\"#444444\"; fontsize=14;\n";
  std::map<std::string, std::string> switches;  // chain prefix -> node id
  auto switchNode = [&](int socket, const std::string& chain) {
    std::string key = std::to_string(socket) + ":" + chain;
    auto it = switches.find(key);
    if (it != switches.end()) return it->second;
    std::string id = p + "_sw" + std::to_string(switches.size());
    switches[key] = id;
    return id;
  };
  std::ostringstream edges;
  for (int s = 0; s < h.sockets; ++s) {
    std::string cpu = p + "_cpu" + std::to_string(s);
    o << "  subgraph cluster_" << p << "_s" << s << " {\n  label=\"socket " << s
      << "\"; style=\"rounded,dashed\"; color=\"#888888\";\n";
    o << "  " << cpu << " [shape=box, style=\"filled,rounded\", fillcolor=\"#dde7f3\", label=\"CPU "
      << s << "\\n"
      << h.coresPerSocket << " cores\"];\n";
    // One node per switch prefix, linked up to its parent (or the CPU's root complex).
    auto attach = [&](const std::string& chain, const std::string& dev, PathClass leafClass) {
      std::string parent = cpu;
      PathClass up = PathClass::HostBridge;
      size_t start = 0;
      while (start < chain.size()) {
        size_t end = chain.find('/', start);
        if (end == std::string::npos) end = chain.size();
        std::string prefix = chain.substr(0, end);
        bool fresh = switches.find(std::to_string(s) + ":" + prefix) == switches.end();
        std::string node = switchNode(s, prefix);
        if (fresh) {
          o << "  " << node << " [shape=diamond, style=filled, fillcolor=\"#eeeeee\", fontsize=8, "
            << "label=\"PCIe switch\\n"
            << chain.substr(start, end - start) << "\"];\n";
          edges << edge(parent, node, up);
        }
        parent = node;
        up = PathClass::PcieMultiSwitch;
        start = end + 1;
      }
      edges << edge(parent, dev, chain.empty() ? PathClass::HostBridge : leafClass);
    };
    for (size_t g = 0; g < h.gpus.size(); ++g) {
      const Gpu& d = h.gpus[g];
      if (d.socket != s) continue;
      int nic = t.nearestNic(hi, int(g), s);
      std::string id = p + "_g" + std::to_string(g);
      o << "  " << id << " [shape=box, style=filled, fillcolor=\"#c5e89a\", label=\"GPU " << g
        << "\\n"
        << d.busId << (nic >= 0 ? "\\nnic " + h.nics[nic].name : "") << "\"];\n";
      attach(d.pci, id, PathClass::PcieSwitch);
    }
    for (size_t k = 0; k < h.nics.size(); ++k) {
      const Nic& n = h.nics[k];
      if (n.socket != s) continue;
      std::string id = p + "_n" + std::to_string(k);
      o << "  " << id << " [shape=ellipse, style=filled, fillcolor=\"#ffd59e\", label=\""
        << fmt("%s\\n%g Gb/s%s", n.name.c_str(), n.speedGbps, n.rdma ? " RDMA" : "") << "\"];\n";
      attach(n.pci, id, PathClass::PcieSwitch);
      outside << edge(id, "network", PathClass::Network);
    }
    o << "  }\n";
  }
  for (int s = 1; s < h.sockets; ++s)
    edges << edge(p + "_cpu" + std::to_string(s), p + "_cpu" + std::to_string(s - 1),
                  PathClass::CrossSocket, "label=\"socket link\", constraint=false");
  // NVLink: an NVSwitch hub when all GPU pairs are linked, direct edges otherwise.
  size_t g = h.gpus.size(), linked = 0;
  for (size_t i = 0; i < g; ++i)
    for (size_t j = i + 1; j < g; ++j) linked += h.gpuPaths[i][j] == PathClass::NVLink;
  if (g > 2 && linked == g * (g - 1) / 2) {
    o << "  " << p << "_nvs [shape=hexagon, style=filled, fillcolor=\"#76b900\", fontcolor=white, "
      << "label=\"NVSwitch\"];\n";
    for (size_t i = 0; i < g; ++i)
      edges << edge(p + "_g" + std::to_string(i), p + "_nvs", PathClass::NVLink);
  } else {
    for (size_t i = 0; i < g; ++i)
      for (size_t j = i + 1; j < g; ++j)
        if (h.gpuPaths[i][j] == PathClass::NVLink)
          edges << edge(p + "_g" + std::to_string(i), p + "_g" + std::to_string(j),
                        PathClass::NVLink);
  }
  o << edges.str() << "  }\n";
}

}  // namespace

std::string renderDot(const Topology& t, const RenderOptions& opt) {
  std::ostringstream o, outside;
  o << "graph chorus_topology {\n"
    << "  graph [fontname=\"Helvetica\", labelloc=t, fontsize=16, nodesep=0.25, ranksep=0.5, "
       "ordering=out, "
    << "label=\"Chorus topology: " << t.hosts.size() << " host(s), " << t.ranks.size()
    << " rank(s)\"];\n  node [fontname=\"Helvetica\", fontsize=10];\n"
    << "  edge [fontname=\"Helvetica\", fontsize=8];\n";
  int drawn = std::min<int>(int(t.hosts.size()), std::max(1, opt.maxHosts));
  bool anyNic = false;
  for (int h = 0; h < drawn; ++h) {
    drawHost(t, h, o, outside);
    anyNic = anyNic || !t.hosts[h].nics.empty();
  }
  if (anyNic)
    o << "  network [shape=doubleoctagon, style=filled, fillcolor=\"#f0f0f0\", label=\"network"
      << (t.hosts.size() > 1 ? "\\n" + std::to_string(t.hosts.size()) + " hosts" : "") << "\"];\n";
  if (drawn < int(t.hosts.size()))
    o << "  more [shape=box, style=\"dashed,rounded\", label=\"+" << t.hosts.size() - drawn
      << " more host(s)\"];\n"
      << edge("more", "network", PathClass::Network);
  o << outside.str() << legend(t) << "}\n";
  return o.str();
}

}  // namespace chorus::topo
