// Topology: what Chorus knows about the machines of a job — hosts, sockets, GPUs, NICs, the
// class of path between any two devices, and a latency/bandwidth estimate per class. It comes
// from discovery (hwloc, NVML/CUDA via dlopen, sysfs) or from a topology file (docs/topology.md),
// and feeds the cost model, the selector, the hierarchical algorithms and chorus-sim/-topo.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "chorus/status.h"

namespace chorus::topo {

// Ordered from nearest to farthest, so comparisons mean "at least as far as".
enum class PathClass : uint8_t {
  Self,             // same device
  NVLink,           // direct NVLink or through NVSwitch
  PcieSwitch,       // through one PCIe switch
  PcieMultiSwitch,  // through several PCIe switches
  HostBridge,       // through the CPU's host bridge (same socket)
  CrossSocket,      // across the socket interconnect (UPI/xGMI)
  Network,          // between hosts
};
inline constexpr int kNumPathClasses = 7;
const char* pathClassName(PathClass c);  // "self", "nvlink", "pcie_switch", ...
bool parsePathClass(const std::string& s, PathClass* out);

struct LinkParams {
  double latencyUs = 0;     // alpha
  double bandwidthGBs = 0;  // 1/beta, GB/s per direction
  bool operator==(const LinkParams&) const = default;
};

struct Gpu {
  std::string busId;  // "0000:17:00.0"
  int socket = 0;
  int numa = 0;
  // PCIe switches between the socket's root complex and the device, top first, joined by '/'
  // ("sw0/sw1"); empty when it hangs off a root port. Devices with the same chain share a switch.
  std::string pci;
  double pcieGTs = 0;  // link speed per lane (sysfs), 0 when unknown
  int pcieWidth = 0;   // lanes, 0 when unknown
  // NVLink ports of the device (H100: 18) and each one's data rate per direction in GB/s
  // (NVLink 4: 25); 0 when unknown. Together they are the device's NVLink bandwidth, which
  // every transfer to or from it over NVLink shares (through an NVSwitch, with any peer).
  int nvlinks = 0;
  double nvlinkGBs = 0;
  bool operator==(const Gpu&) const = default;
};

struct Nic {
  std::string name;   // "mlx5_0", "eth0"
  std::string busId;  // empty for virtual NICs
  int socket = 0;
  int numa = 0;
  double speedGbps = 0;
  bool rdma = false;
  std::string pci;  // as Gpu::pci
  bool operator==(const Nic&) const = default;
};

struct Host {
  std::string name;
  std::string id;  // identity that groups ranks into hosts (hostname:boot id); may be empty
  int sockets = 1;
  int coresPerSocket = 1;
  int numaNodes = 1;
  std::vector<Gpu> gpus;
  std::vector<Nic> nics;
  // gpuPaths[i][j]: path between GPU i and GPU j; gpuNicPaths[i][k]: GPU i to NIC k.
  std::vector<std::vector<PathClass>> gpuPaths;
  std::vector<std::vector<PathClass>> gpuNicPaths;
  bool operator==(const Host&) const = default;
};

// Where one rank runs.
struct RankPlace {
  int host = 0;
  int socket = 0;
  int gpu = -1;  // index into its host's gpus, -1 for a host-memory rank
  bool operator==(const RankPlace&) const = default;
};

struct Topology {
  std::vector<Host> hosts;
  std::vector<RankPlace> ranks;
  std::map<PathClass, LinkParams> links;  // estimates per class (defaults + file + tuning)
  double hostReduceGBs = 20;              // CPU reducer rate (bytes of output per second / 1e9)
  double deviceReduceGBs = 1000;          // GPU reducer rate
  double deviceCopyGBs = 0;               // a copy within GPU memory; 0: link(Self)'s rate
  double stepOverheadUs = 0.3;            // the executor's own cost per message (CPU)
  // The bytes per message of transports between device buffers (CUDA IPC, RDMA from device
  // memory), for the cost model of GPU ranks; 0: the host transports' size (CostParams).
  uint64_t deviceMessageBytes = 0;
  // The share of a port's line rate that carries payload (packet headers, CRC, flow control):
  // an NVLink port moves nvlinks x nvlinkGBs x nvlinkEfficiency, a NIC speed/8 x nicEfficiency.
  double nvlinkEfficiency = 1;
  double nicEfficiency = 1;
  // Host memory past the cache (CPU ranks; docs/topology.md, "memory"): every byte that misses
  // the cache (a read from memory; a write costs its read for ownership and its write-back) adds
  // 1 / missGBs to the engine's work. missGBs 0 (the default) leaves it out.
  double cacheMiB = 0;    // data touched within this many bytes of host traffic stays in cache
  double allMissMiB = 0;  // from this reuse distance on, every byte misses
  double missGBs = 0;
  // The share of bytes that miss when data is reused after `bytes` of the host's traffic (or a
  // working set of that size is swept over and over): 0 up to cacheMiB, 1 from allMissMiB,
  // rising in between linearly in log(bytes), as the calibration measured the curve.
  double missFraction(double bytes) const;
  std::string source;  // "discovered", a file path, ...

  // The class of the path data takes between two ranks (Self for a == b).
  PathClass pathBetweenRanks(int a, int b) const;
  LinkParams link(PathClass c) const;  // falls back to defaultLink(c)
  // A GPU's NVLink bandwidth per direction after efficiency (GB/s); 0 when its links are unknown.
  double nvlinkPortGBs(int host, int gpu) const;
  // The NIC of `host` nearest to `gpu` (or to `socket` when gpu < 0); -1 if the host has none.
  int nearestNic(int host, int gpu, int socket) const;
  // Ranks grouped by host, each group in rank order: result[h] holds host h's ranks (one group
  // per entry of `hosts`, empty for a host without ranks).
  std::vector<std::vector<int>> ranksByHost() const;
  // Ranks of one host grouped by socket: result[s] for socket s of that host.
  std::vector<std::vector<int>> ranksBySocket(int host) const;

  // Everything but `source`, so a dump and its reload compare equal.
  bool sameAs(const Topology& o) const;
};

LinkParams defaultLink(PathClass c);

// Text format described in docs/topology.md; an hwloc XML file is accepted too.
Status loadTopologyFile(const std::string& path, Topology* out);
Status saveTopologyFile(const Topology& t, const std::string& path);
// This host only, one rank per GPU (or one host-memory rank if there are none).
Status discoverLocalHost(Host* out, std::string* notes);
// discoverLocalHost wrapped into a one-host Topology with its ranks placed as above.
Status discoverLocalTopology(Topology* out, std::string* notes);

// The text of a topology file, and its parser (`origin` names the text in error messages).
std::string formatTopology(const Topology& t);
// A number as the file format writes it: the shortest text that reads back to the same double.
std::string numberText(double v);
Status parseTopology(const std::string& text, const std::string& origin, Topology* out);
// The estimates alone (reduce, link, executor and memory lines), as a tuning file holds them
// (CHORUS_TUNE_FILE loads one), and their parser, which lays them over
// `t` and refuses any other line. It reads JSON tuning files too (estimates_json.h).
std::string formatEstimates(const Topology& t);
Status applyEstimates(const std::string& text, const std::string& origin, Topology* t);
Status loadEstimatesFile(const std::string& path, Topology* t);
// Recomputes gpuPaths and gpuNicPaths from the devices' sockets and PCIe chains alone (no
// NVLink: callers mark NVLink pairs afterwards).
void derivePaths(Host* h);
// Places ranks: one per GPU on every host (one host-memory rank for a host without GPUs).
void placeRanksPerGpu(Topology* t);
// Places n host-memory ranks on every host, spread over its sockets in blocks.
void placeRanksPerHost(Topology* t, int n);

}  // namespace chorus::topo
