// Discovery through hwloc: packages, NUMA nodes, cores, the PCI tree with GPUs (by PCI class)
// and NICs (network and OpenFabrics OS devices). The same walk serves a live machine and an
// hwloc XML file; only a live machine is asked (through sysfs) for link and NIC speeds.
#include <algorithm>
#include <set>

#include "common/log.h"
#include "topo/probe.h"

#ifdef CHORUS_HAVE_HWLOC
#include <hwloc.h>

#include <cerrno>
#include <cstring>
#endif

namespace chorus::topo {

#ifndef CHORUS_HAVE_HWLOC

Status probeHwlocLive(Host*, std::string*) {
  return Status::Unsupported("this build of Chorus has no hwloc (configure with libhwloc-dev)");
}
Status probeHwlocXml(const std::string& path, Host*, std::string*) {
  return Status::Unsupported("cannot read hwloc XML file " + path +
                             ": this build of Chorus has no hwloc (configure with libhwloc-dev)");
}

#else

namespace {

std::string pciBusId(const hwloc_obj_t o) {
  char buf[32];
  snprintf(buf, sizeof buf, "%04x:%02x:%02x.%x", o->attr->pcidev.domain, o->attr->pcidev.bus,
           o->attr->pcidev.dev, o->attr->pcidev.func);
  return buf;
}

// PCI-to-PCI bridges above `dev`, top first, without its own downstream port (see
// pciChainFromSysfs: the two must agree).
std::string pciChain(hwloc_obj_t dev) {
  std::vector<std::string> bridges;
  for (hwloc_obj_t p = dev->parent; p && p->type == HWLOC_OBJ_BRIDGE; p = p->parent)
    if (p->attr->bridge.upstream_type == HWLOC_OBJ_BRIDGE_PCI) bridges.push_back(pciBusId(p));
  std::string chain;
  for (size_t i = bridges.size(); i-- > 1;) chain += (chain.empty() ? "" : "/") + bridges[i];
  return chain;
}

struct Walker {
  hwloc_topology_t t;
  bool live;
  int packages;

  // Socket and NUMA node (logical indexes) of the CPU-side object an I/O device hangs off.
  void place(hwloc_obj_t io, int* socket, int* numa) {
    *socket = 0;
    *numa = 0;
    hwloc_obj_t na = hwloc_get_non_io_ancestor_obj(t, io);
    if (!na) return;
    for (int i = 0; i < packages; ++i) {
      hwloc_obj_t pkg = hwloc_get_obj_by_type(t, HWLOC_OBJ_PACKAGE, i);
      if (pkg && na->cpuset && hwloc_bitmap_isincluded(na->cpuset, pkg->cpuset)) *socket = i;
    }
    int os = na->nodeset ? hwloc_bitmap_first(na->nodeset) : -1;
    // A device attached above several nodes (the whole machine) says nothing: keep node 0.
    if (os >= 0 && hwloc_bitmap_weight(na->nodeset) == 1)
      if (hwloc_obj_t n = hwloc_get_numanode_obj_by_os_index(t, unsigned(os)))
        *numa = int(n->logical_index);
  }

  void gpus(Host* h) {
    for (hwloc_obj_t o = hwloc_get_next_pcidev(t, nullptr); o; o = hwloc_get_next_pcidev(t, o)) {
      unsigned cls = o->attr->pcidev.class_id, vendor = o->attr->pcidev.vendor_id;
      // Display (0x03xx) functions of NVIDIA and AMD; NVSwitches are bridges (0x0680).
      if ((cls >> 8) != 0x03 || (vendor != 0x10de && vendor != 0x1002)) continue;
      Gpu g;
      g.busId = pciBusId(o);
      place(o, &g.socket, &g.numa);
      g.pci = pciChain(o);
      if (live) pcieLink(g.busId, &g.pcieGTs, &g.pcieWidth);
      h->gpus.push_back(g);
    }
  }

  void nics(Host* h) {
    std::set<hwloc_obj_t> rdmaParents;
    for (hwloc_obj_t o = hwloc_get_next_osdev(t, nullptr); o; o = hwloc_get_next_osdev(t, o))
      if (o->attr->osdev.type == HWLOC_OBJ_OSDEV_OPENFABRICS) rdmaParents.insert(o->parent);
    for (hwloc_obj_t o = hwloc_get_next_osdev(t, nullptr); o; o = hwloc_get_next_osdev(t, o)) {
      bool rdma = o->attr->osdev.type == HWLOC_OBJ_OSDEV_OPENFABRICS;
      if (!rdma && o->attr->osdev.type != HWLOC_OBJ_OSDEV_NETWORK) continue;
      // An InfiniBand/RoCE port also shows as a network interface; the RDMA device stands for it.
      if (!rdma && rdmaParents.count(o->parent)) continue;
      Nic n;
      n.name = o->name ? o->name : "?";
      n.rdma = rdma;
      hwloc_obj_t pci = o->parent && o->parent->type == HWLOC_OBJ_PCI_DEVICE ? o->parent : nullptr;
      if (pci) {
        n.busId = pciBusId(pci);
        n.pci = pciChain(pci);
        place(pci, &n.socket, &n.numa);
      }
      if (live) n.speedGbps = rdma ? ibRateGbps(n.name) : netSpeedGbps(n.name);
      h->nics.push_back(n);
    }
  }
};

Status walk(hwloc_topology_t t, bool live, const std::string& what, Host* out, std::string* notes) {
  Host h;
  hwloc_obj_t root = hwloc_get_root_obj(t);
  const char* hostName = hwloc_obj_get_info_by_name(root, "HostName");
  h.name = live ? localHostName() : (hostName ? hostName : "host");
  int packages = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PACKAGE);
  int cores = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_CORE);
  int numa = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_NUMANODE);
  h.sockets = packages > 0 ? packages : 1;
  h.coresPerSocket = cores > 0 ? std::max(1, cores / h.sockets) : 1;
  h.numaNodes = numa > 0 ? numa : 1;
  Walker w{t, live, packages};
  w.gpus(&h);
  w.nics(&h);
  derivePaths(&h);
  *notes += "hwloc (" + what + "): " + std::to_string(h.sockets) + " socket(s) x " +
            std::to_string(h.coresPerSocket) + " core(s), " + std::to_string(h.numaNodes) +
            " NUMA node(s), " + std::to_string(h.gpus.size()) + " GPU(s), " +
            std::to_string(h.nics.size()) + " NIC(s)\n";
  *out = std::move(h);
  return Status::Ok();
}

Status load(const std::string& xml, Host* out, std::string* notes) {
  hwloc_topology_t t;
  if (hwloc_topology_init(&t) != 0) return Status::FromErrno(errno, "hwloc_topology_init");
  hwloc_topology_set_io_types_filter(t, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
  Status st;
  if (!xml.empty() && hwloc_topology_set_xml(t, xml.c_str()) != 0)
    st = Status::FromErrno(errno, "hwloc cannot read XML file " + xml);
  else if (hwloc_topology_load(t) != 0)
    st = Status::FromErrno(errno, xml.empty() ? std::string("hwloc cannot load this machine")
                                              : "hwloc cannot load XML file " + xml);
  else
    st = walk(t, xml.empty(), xml.empty() ? "this machine" : xml, out, notes);
  hwloc_topology_destroy(t);
  return st;
}

}  // namespace

Status probeHwlocLive(Host* out, std::string* notes) {
  return load("", out, notes);
}

Status probeHwlocXml(const std::string& path, Host* out, std::string* notes) {
  return load(path, out, notes);
}

#endif

}  // namespace chorus::topo
