// What Linux's /sys says about PCI links, NICs and CPUs. Used for link speed and width (hwloc
// does not report the negotiated width), NIC speeds, and as the whole discovery when the build
// has no hwloc.
#include <dirent.h>
#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <set>

#include "topo/probe.h"

namespace chorus::topo {

namespace {

std::string readLine(const std::string& path) {
  std::ifstream f(path);
  std::string s;
  std::getline(f, s);
  return s;
}

std::vector<std::string> listDir(const std::string& path) {
  std::vector<std::string> out;
  if (DIR* d = opendir(path.c_str())) {
    while (dirent* e = readdir(d))
      if (e->d_name[0] != '.') out.push_back(e->d_name);
    closedir(d);
  }
  std::sort(out.begin(), out.end());
  return out;
}

bool looksLikeBusId(const std::string& s) {
  unsigned d, b, dev, fn;
  char tail;
  return sscanf(s.c_str(), "%x:%x:%x.%x%c", &d, &b, &dev, &fn, &tail) == 4;
}

std::string realPath(const std::string& p) {
  char buf[PATH_MAX];
  return realpath(p.c_str(), buf) ? std::string(buf) : std::string();
}

}  // namespace

std::string normalizeBusId(const std::string& s) {
  unsigned d = 0, b = 0, dev = 0, fn = 0;
  if (sscanf(s.c_str(), "%x:%x:%x.%x", &d, &b, &dev, &fn) != 4) {
    if (sscanf(s.c_str(), "%x:%x.%x", &b, &dev, &fn) != 3) return s;
    d = 0;
  }
  char out[32];
  snprintf(out, sizeof out, "%04x:%02x:%02x.%x", d, b, dev, fn);
  return out;
}

bool pcieLink(const std::string& busId, double* gts, int* width) {
  std::string dir = "/sys/bus/pci/devices/" + busId + "/";
  std::string speed = readLine(dir + "current_link_speed");  // "16.0 GT/s PCIe"
  std::string w = readLine(dir + "current_link_width");
  if (speed.empty() || w.empty()) return false;
  *gts = atof(speed.c_str());
  *width = atoi(w.c_str());
  return *gts > 0 && *width > 0;
}

int pciNumaNode(const std::string& busId) {
  std::string s = readLine("/sys/bus/pci/devices/" + busId + "/numa_node");
  return s.empty() ? -1 : atoi(s.c_str());
}

std::string pciChainFromSysfs(const std::string& busId) {
  // /sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:08.0/0000:03:00.0
  std::string p = realPath("/sys/bus/pci/devices/" + busId);
  std::vector<std::string> parts;
  for (size_t start = 0; start < p.size();) {
    size_t end = p.find('/', start);
    if (end == std::string::npos) end = p.size();
    std::string part = p.substr(start, end - start);
    if (looksLikeBusId(part)) parts.push_back(part);
    start = end + 1;
  }
  // parts = bridges..., device; drop the device and its own downstream port.
  std::string chain;
  for (size_t i = 0; i + 2 < parts.size(); ++i) chain += (chain.empty() ? "" : "/") + parts[i];
  return chain;
}

double netSpeedGbps(const std::string& ifname) {
  std::string s = readLine("/sys/class/net/" + ifname + "/speed");  // Mb/s, -1 when unknown
  double mbps = s.empty() ? 0 : atof(s.c_str());
  return mbps > 0 ? mbps / 1000 : 0;
}

int netNumaNode(const std::string& ifname) {
  std::string s = readLine("/sys/class/net/" + ifname + "/device/numa_node");
  return s.empty() ? -1 : atoi(s.c_str());
}

int ibNumaNode(const std::string& dev) {
  std::string s = readLine("/sys/class/infiniband/" + dev + "/device/numa_node");
  return s.empty() ? -1 : atoi(s.c_str());
}

double ibRateGbps(const std::string& dev) {
  std::string s =
      readLine("/sys/class/infiniband/" + dev + "/ports/1/rate");  // "400 Gb/sec (4X NDR)"
  return s.empty() ? 0 : atof(s.c_str());
}

std::string localHostName() {
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  return host;
}

std::string defaultHostId() {
  return localHostName() + ":" + readLine("/proc/sys/kernel/random/boot_id");
}

Status probeSysfs(Host* out, std::string* notes) {
  Host h;
  h.name = localHostName();
  std::set<int> packages;
  int cpus = 0;
  for (const std::string& c : listDir("/sys/devices/system/cpu")) {
    if (c.size() < 4 || c.compare(0, 3, "cpu") != 0 || !isdigit(static_cast<unsigned char>(c[3])))
      continue;
    ++cpus;
    std::string pkg = readLine("/sys/devices/system/cpu/" + c + "/topology/physical_package_id");
    packages.insert(pkg.empty() ? 0 : atoi(pkg.c_str()));
  }
  h.sockets = std::max<int>(1, int(packages.size()));
  h.coresPerSocket =
      std::max(1, cpus / h.sockets);  // hardware threads: sysfs alone cannot tell SMT cheaply
  int numa = 0;
  for (const std::string& n : listDir("/sys/devices/system/node"))
    numa +=
        n.compare(0, 4, "node") == 0 && n.size() > 4 && isdigit(static_cast<unsigned char>(n[4]));
  h.numaNodes = std::max(1, numa);
  auto socketOfNuma = [&](int node) {
    return node < 0 ? 0 : std::min(h.sockets - 1, node * h.sockets / h.numaNodes);
  };

  for (const std::string& dev : listDir("/sys/bus/pci/devices")) {
    std::string dir = "/sys/bus/pci/devices/" + dev + "/";
    long cls = strtol(readLine(dir + "class").c_str(), nullptr, 16);
    long vendor = strtol(readLine(dir + "vendor").c_str(), nullptr, 16);
    if ((cls >> 16) != 0x03 || (vendor != 0x10de && vendor != 0x1002)) continue;
    Gpu g;
    g.busId = dev;
    g.numa = std::max(0, pciNumaNode(dev));
    g.socket = socketOfNuma(pciNumaNode(dev));
    g.pci = pciChainFromSysfs(dev);
    pcieLink(dev, &g.pcieGTs, &g.pcieWidth);
    h.gpus.push_back(g);
  }
  std::set<std::string> rdmaBus;
  for (const std::string& ib : listDir("/sys/class/infiniband")) {
    Nic n;
    n.name = ib;
    n.rdma = true;
    n.busId = realPath("/sys/class/infiniband/" + ib + "/device");
    n.busId = n.busId.substr(n.busId.rfind('/') + 1);
    rdmaBus.insert(n.busId);
    n.speedGbps = ibRateGbps(ib);
    h.nics.push_back(n);
  }
  for (const std::string& ifname : listDir("/sys/class/net")) {
    std::string dev = realPath("/sys/class/net/" + ifname + "/device");
    if (dev.empty()) continue;  // lo, bridges, veth, ifb: no device behind them
    Nic n;
    n.name = ifname;
    // A virtio NIC's device is the virtio bus node; its parent is the PCI function.
    std::string bus = dev.substr(dev.rfind('/') + 1);
    if (!looksLikeBusId(bus)) {
      std::string parent = dev.substr(0, dev.rfind('/'));
      bus = parent.substr(parent.rfind('/') + 1);
    }
    n.busId = looksLikeBusId(bus) ? bus : "";
    if (rdmaBus.count(n.busId)) continue;  // the RDMA device already stands for it
    n.speedGbps = netSpeedGbps(ifname);
    h.nics.push_back(n);
  }
  for (Nic& n : h.nics) {
    if (n.busId.empty()) continue;
    n.numa = std::max(0, pciNumaNode(n.busId));
    n.socket = socketOfNuma(pciNumaNode(n.busId));
    n.pci = pciChainFromSysfs(n.busId);
  }
  derivePaths(&h);
  *notes += "sysfs: " + std::to_string(h.sockets) + " socket(s), " + std::to_string(cpus) +
            " cpu(s), " + std::to_string(h.gpus.size()) + " GPU(s), " +
            std::to_string(h.nics.size()) + " NIC(s)\n";
  *out = std::move(h);
  return Status::Ok();
}

}  // namespace chorus::topo
