// Discovery back ends behind discoverLocalHost / loadTopologyFile: hwloc (live or XML), a sysfs
// fallback for builds without hwloc, and GPU probing through NVML / the CUDA driver (dlopen).
#pragma once

#include <string>
#include <vector>

#include "topo/topology.h"

namespace chorus::topo {

// hwloc on this machine (live = true reads sysfs for link and NIC speeds) or from an XML file.
// Without hwloc in the build both return Unsupported.
Status probeHwlocLive(Host* out, std::string* notes);
Status probeHwlocXml(const std::string& path, Host* out, std::string* notes);
// CPU counts, NICs and GPUs from /sys alone.
Status probeSysfs(Host* out, std::string* notes);

// sysfs facts about one PCI device ("0000:17:00.0"); false/empty when unknown.
bool pcieLink(const std::string& busId, double* gts, int* width);
int pciNumaNode(const std::string& busId);  // -1 when unknown
// The switch chain (Gpu::pci) from the device's sysfs path: every bridge above it but its own
// downstream port, so devices behind one switch share the chain.
std::string pciChainFromSysfs(const std::string& busId);
double netSpeedGbps(const std::string& ifname);  // /sys/class/net/X/speed, 0 unknown
double ibRateGbps(const std::string& dev);       // /sys/class/infiniband/X/ports/1/rate
// The NUMA node of a network interface's or an RDMA device's PCI function; -1 when sysfs does
// not say (virtual interfaces, single-node machines).
int netNumaNode(const std::string& ifname);
int ibNumaNode(const std::string& dev);
// "0000:17:00.0" from any spelling (NVML's 8-digit domain, upper case, no domain).
std::string normalizeBusId(const std::string& s);

// What the GPU libraries said; `available` false when neither NVML nor CUDA could be loaded.
struct GpuProbe {
  bool available = false;
  std::string via;                  // "nvml", "cuda"
  std::vector<std::string> busIds;  // in the library's order
  // nvlinkPeers[i]: bus ids at the far end of GPU i's active NVLinks (GPUs or NVSwitches).
  std::vector<std::vector<std::string>> nvlinkPeers;
};
void probeGpus(GpuProbe* out, std::string* notes);

// Merges `gpu` into `h`: GPUs the library saw but PCI did not are added; NVLink pairs marked.
void applyGpuProbe(const GpuProbe& gpu, Host* h, std::string* notes);

// hostname + ":" + boot id.
std::string defaultHostId();
std::string localHostName();

}  // namespace chorus::topo
