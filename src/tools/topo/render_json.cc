// --json: the whole Topology for machines, with the nearest NIC of every GPU resolved.
#include <cstdio>
#include <sstream>

#include "tools/topo/render.h"

namespace chorus::topo {

namespace {

std::string str(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\')
      out += '\\', out += c;
    else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else
      out += c;
  }
  return out + "\"";
}

void matrix(const std::vector<std::vector<PathClass>>& m, std::ostream& o) {
  o << '[';
  for (size_t i = 0; i < m.size(); ++i) {
    o << (i ? "," : "") << '[';
    for (size_t j = 0; j < m[i].size(); ++j)
      o << (j ? "," : "") << '"' << pathClassName(m[i][j]) << '"';
    o << ']';
  }
  o << ']';
}

void host(const Topology& t, int hi, std::ostream& o) {
  const Host& h = t.hosts[hi];
  o << "{\"name\":" << str(h.name) << ",\"id\":" << str(h.id) << ",\"sockets\":" << h.sockets
    << ",\"cores_per_socket\":" << h.coresPerSocket << ",\"numa_nodes\":" << h.numaNodes
    << ",\"gpus\":[";
  for (size_t g = 0; g < h.gpus.size(); ++g) {
    const Gpu& d = h.gpus[g];
    o << (g ? "," : "") << "{\"bus_id\":" << str(d.busId) << ",\"socket\":" << d.socket
      << ",\"numa\":" << d.numa << ",\"pci\":" << str(d.pci) << ",\"pcie_gts\":" << d.pcieGTs
      << ",\"pcie_width\":" << d.pcieWidth
      << ",\"nearest_nic\":" << t.nearestNic(hi, int(g), d.socket) << '}';
  }
  o << "],\"nics\":[";
  for (size_t k = 0; k < h.nics.size(); ++k) {
    const Nic& n = h.nics[k];
    o << (k ? "," : "") << "{\"name\":" << str(n.name) << ",\"bus_id\":" << str(n.busId)
      << ",\"socket\":" << n.socket << ",\"numa\":" << n.numa << ",\"pci\":" << str(n.pci)
      << ",\"speed_gbps\":" << n.speedGbps << ",\"rdma\":" << (n.rdma ? "true" : "false") << '}';
  }
  o << "],\"gpu_paths\":";
  matrix(h.gpuPaths, o);
  o << ",\"gpu_nic_paths\":";
  matrix(h.gpuNicPaths, o);
  o << '}';
}

}  // namespace

std::string renderJson(const Topology& t) {
  std::ostringstream o;
  o.precision(17);
  o << "{\"source\":" << str(t.source) << ",\n\"links\":{";
  for (int c = 0; c < kNumPathClasses; ++c) {
    LinkParams p = t.link(PathClass(c));
    o << (c ? "," : "") << '"' << pathClassName(PathClass(c))
      << "\":{\"latency_us\":" << p.latencyUs << ",\"bandwidth_gbs\":" << p.bandwidthGBs << '}';
  }
  o << "},\n\"host_reduce_gbs\":" << t.hostReduceGBs
    << ",\"device_reduce_gbs\":" << t.deviceReduceGBs << ",\n\"hosts\":[\n";
  for (size_t h = 0; h < t.hosts.size(); ++h) {
    o << (h ? ",\n" : "");
    host(t, int(h), o);
  }
  o << "],\n\"ranks\":[";
  for (size_t r = 0; r < t.ranks.size(); ++r)
    o << (r ? "," : "") << "{\"host\":" << t.ranks[r].host << ",\"socket\":" << t.ranks[r].socket
      << ",\"gpu\":" << t.ranks[r].gpu << '}';
  o << "]}\n";
  return o.str();
}

}  // namespace chorus::topo
