// --json: the whole Topology for machines (docs/json.md), with the nearest NIC of every GPU
// resolved, through nlohmann-json.
#include <nlohmann/json.hpp>

#include "tools/topo/render.h"

namespace chorus::topo {

namespace {

using Json = nlohmann::ordered_json;  // keys in the documented order

Json matrix(const std::vector<std::vector<PathClass>>& m) {
  Json rows = Json::array();
  for (const auto& row : m) {
    Json r = Json::array();
    for (PathClass c : row) r.push_back(pathClassName(c));
    rows.push_back(r);
  }
  return rows;
}

Json host(const Topology& t, int hi) {
  const Host& h = t.hosts[hi];
  Json gpus = Json::array(), nics = Json::array();
  for (size_t g = 0; g < h.gpus.size(); ++g) {
    const Gpu& d = h.gpus[g];
    gpus.push_back({{"bus_id", d.busId},
                    {"socket", d.socket},
                    {"numa", d.numa},
                    {"pci", d.pci},
                    {"pcie_gts", d.pcieGTs},
                    {"pcie_width", d.pcieWidth},
                    {"nearest_nic", t.nearestNic(hi, int(g), d.socket)}});
  }
  for (const Nic& n : h.nics)
    nics.push_back({{"name", n.name},
                    {"bus_id", n.busId},
                    {"socket", n.socket},
                    {"numa", n.numa},
                    {"pci", n.pci},
                    {"speed_gbps", n.speedGbps},
                    {"rdma", n.rdma}});
  return {{"name", h.name},
          {"id", h.id},
          {"sockets", h.sockets},
          {"cores_per_socket", h.coresPerSocket},
          {"numa_nodes", h.numaNodes},
          {"gpus", gpus},
          {"nics", nics},
          {"gpu_paths", matrix(h.gpuPaths)},
          {"gpu_nic_paths", matrix(h.gpuNicPaths)}};
}

}  // namespace

std::string renderJson(const Topology& t) {
  Json links = Json::object();
  for (int c = 0; c < kNumPathClasses; ++c) {
    const LinkParams p = t.link(PathClass(c));
    links[pathClassName(PathClass(c))] = {{"latency_us", p.latencyUs},
                                          {"bandwidth_gbs", p.bandwidthGBs}};
  }
  Json hosts = Json::array(), ranks = Json::array();
  for (size_t h = 0; h < t.hosts.size(); ++h) hosts.push_back(host(t, int(h)));
  for (const auto& r : t.ranks)
    ranks.push_back({{"host", r.host}, {"socket", r.socket}, {"gpu", r.gpu}});
  const Json j = {{"source", t.source},
                  {"links", links},
                  {"host_reduce_gbs", t.hostReduceGBs},
                  {"device_reduce_gbs", t.deviceReduceGBs},
                  {"hosts", hosts},
                  {"ranks", ranks}};
  return j.dump() + "\n";
}

}  // namespace chorus::topo
