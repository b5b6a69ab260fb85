// Discovery of the local host: hwloc when built in (sysfs otherwise), then the GPU libraries.
// Every step that could not run is said at INFO, so a user can see why a path looks slow.
#include <sstream>

#include "common/log.h"
#include "topo/probe.h"

namespace chorus::topo {

namespace {
void logNotes(const std::string& notes) {
  std::istringstream in(notes);
  for (std::string line; std::getline(in, line);) LOG_INFO(kLogInit, "topo: %s", line.c_str());
}
}  // namespace

Status discoverLocalHost(Host* out, std::string* notes) {
  std::string local;
  Host h;
  Status st = probeHwlocLive(&h, &local);
  if (!st.ok()) {
    local += "hwloc unusable (" + st.message() + "); reading sysfs instead\n";
    CHORUS_RETURN_IF_ERROR(probeSysfs(&h, &local));
  }
  GpuProbe gpus;
  probeGpus(&gpus, &local);
  if (gpus.available)
    applyGpuProbe(gpus, &h, &local);
  else if (h.gpus.empty())
    local += "no GPU found: ranks use host memory\n";
  else
    local += std::to_string(h.gpus.size()) + " GPU(s) seen on PCI only: paths from PCIe alone\n";
  int rdma = 0;
  for (const Nic& n : h.nics) rdma += n.rdma;
  if (rdma == 0) local += "no RDMA device: inter-host traffic would use TCP\n";
  h.id = defaultHostId();
  logNotes(local);
  if (notes) *notes += local;
  *out = std::move(h);
  return Status::Ok();
}

Status discoverLocalTopology(Topology* out, std::string* notes) {
  Topology t;
  t.hosts.emplace_back();
  CHORUS_RETURN_IF_ERROR(discoverLocalHost(&t.hosts[0], notes));
  placeRanksPerGpu(&t);
  t.source = "discovered";
  *out = std::move(t);
  return Status::Ok();
}

}  // namespace chorus::topo
