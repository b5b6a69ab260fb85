// GPUs through NVML (bus ids, NVLink peers) or, failing that, the CUDA driver (bus ids only),
// both loaded with dlopen so that Chorus builds and runs where neither is installed. The few
// declarations needed are written out here rather than taken from the vendor headers.
#include <dlfcn.h>

#include <algorithm>

#include "common/log.h"
#include "topo/probe.h"

namespace chorus::topo {

namespace {

// GPU driver libraries stay loaded once opened, even when they turn out unusable: unloading a
// driver is not safe in general, and what it allocated stays attributable (tests/lsan.supp).
void keepLoaded(void*) {}

// nvmlPciInfo_t, as laid out by nvml.h (v2/v3 of nvmlDeviceGetPciInfo).
struct NvmlPciInfo {
  char busIdLegacy[16];
  unsigned domain, bus, device, pciDeviceId, pciSubSystemId;
  char busId[32];
};
using NvmlDevice = void*;
constexpr int kNvmlMaxLinks = 18;

template <typename F>
bool sym(void* lib, const char* name, F* out) {
  *out = reinterpret_cast<F>(dlsym(lib, name));
  return *out != nullptr;
}

bool probeNvml(GpuProbe* out, std::string* notes) {
  void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    *notes += std::string("NVML not available (") + dlerror() + "): no NVLink information\n";
    return false;
  }
  int (*init)() = nullptr, (*shutdown)() = nullptr;
  int (*count)(unsigned*) = nullptr;
  int (*byIndex)(unsigned, NvmlDevice*) = nullptr;
  int (*pciInfo)(NvmlDevice, NvmlPciInfo*) = nullptr;
  int (*linkState)(NvmlDevice, unsigned, int*) = nullptr;
  int (*remotePci)(NvmlDevice, unsigned, NvmlPciInfo*) = nullptr;
  bool ok = sym(lib, "nvmlInit_v2", &init) && sym(lib, "nvmlShutdown", &shutdown) &&
            sym(lib, "nvmlDeviceGetCount_v2", &count) &&
            sym(lib, "nvmlDeviceGetHandleByIndex_v2", &byIndex) &&
            (sym(lib, "nvmlDeviceGetPciInfo_v3", &pciInfo) ||
             sym(lib, "nvmlDeviceGetPciInfo_v2", &pciInfo));
  sym(lib, "nvmlDeviceGetNvLinkState", &linkState);
  if (!sym(lib, "nvmlDeviceGetNvLinkRemotePciInfo_v2", &remotePci))
    sym(lib, "nvmlDeviceGetNvLinkRemotePciInfo", &remotePci);
  unsigned n = 0;
  if (!ok || init() != 0) {
    *notes += "NVML found but could not be initialised: no NVLink information\n";
    keepLoaded(lib);
    return false;
  }
  if (count(&n) == 0) {
    for (unsigned i = 0; i < n; ++i) {
      NvmlDevice d;
      NvmlPciInfo pci{};
      if (byIndex(i, &d) != 0 || pciInfo(d, &pci) != 0) continue;
      out->busIds.push_back(normalizeBusId(pci.busId));
      std::vector<std::string> peers;
      for (unsigned l = 0; linkState && remotePci && l < kNvmlMaxLinks; ++l) {
        int active = 0;
        NvmlPciInfo far{};
        if (linkState(d, l, &active) == 0 && active && remotePci(d, l, &far) == 0)
          peers.push_back(normalizeBusId(far.busId));
      }
      out->nvlinkPeers.push_back(peers);
    }
  }
  shutdown();
  keepLoaded(lib);
  out->available = true;
  out->via = "nvml";
  *notes += "NVML: " + std::to_string(out->busIds.size()) + " GPU(s)\n";
  return true;
}

bool probeCuda(GpuProbe* out, std::string* notes) {
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    *notes += std::string("CUDA driver not available (") + dlerror() + ")\n";
    return false;
  }
  int (*init)(unsigned) = nullptr, (*count)(int*) = nullptr, (*get)(int*, int) = nullptr;
  int (*busId)(char*, int, int) = nullptr;
  bool ok = sym(lib, "cuInit", &init) && sym(lib, "cuDeviceGetCount", &count) &&
            sym(lib, "cuDeviceGet", &get) && sym(lib, "cuDeviceGetPCIBusId", &busId);
  int n = 0;
  if (!ok || init(0) != 0 || count(&n) != 0) {
    *notes += "CUDA driver found but could not be initialised (no device or driver mismatch)\n";
    keepLoaded(lib);
    return false;
  }
  for (int i = 0; i < n; ++i) {
    int dev = 0;
    char id[64] = {};
    if (get(&dev, i) == 0 && busId(id, sizeof id, dev) == 0) {
      out->busIds.push_back(normalizeBusId(id));
      out->nvlinkPeers.emplace_back();
    }
  }
  // The driver stays loaded: unloading it under a process that may use CUDA later is unsafe.
  out->available = true;
  out->via = "cuda";
  *notes += "CUDA driver: " + std::to_string(n) + " GPU(s), NVLink unknown without NVML\n";
  return true;
}

}  // namespace

void probeGpus(GpuProbe* out, std::string* notes) {
  *out = GpuProbe{};
  if (probeNvml(out, notes)) return;
  *out = GpuProbe{};
  probeCuda(out, notes);
}

void applyGpuProbe(const GpuProbe& probe, Host* h, std::string* notes) {
  auto index = [&](const std::string& bus) {
    for (size_t i = 0; i < h->gpus.size(); ++i)
      if (h->gpus[i].busId == bus) return int(i);
    return -1;
  };
  bool added = false;
  for (const std::string& bus : probe.busIds) {
    if (index(bus) >= 0) continue;
    Gpu g;  // PCI did not show it (hidden by a filter or a container): place it from sysfs
    g.busId = bus;
    g.numa = std::max(0, pciNumaNode(bus));
    g.socket = std::min(h->sockets - 1, g.numa * h->sockets / std::max(1, h->numaNodes));
    g.pci = pciChainFromSysfs(bus);
    pcieLink(bus, &g.pcieGTs, &g.pcieWidth);
    h->gpus.push_back(g);
    added = true;
  }
  if (added) {
    std::sort(h->gpus.begin(), h->gpus.end(),
              [](const Gpu& a, const Gpu& b) { return a.busId < b.busId; });
    *notes += probe.via + " listed GPUs the PCI scan missed; added them\n";
  }
  derivePaths(h);
  // NVLink: a direct link to the other GPU, or both GPUs on the NVSwitch fabric (a far end that
  // is not a GPU of this host).
  std::vector<bool> onSwitch(h->gpus.size(), false);
  std::vector<std::vector<std::string>> peers(h->gpus.size());
  for (size_t p = 0; p < probe.busIds.size(); ++p) {
    int i = index(probe.busIds[p]);
    if (i < 0) continue;
    peers[i] = probe.nvlinkPeers[p];
    // Active links only; their rate per link (nvlink_gbs) is left to the topology file.
    h->gpus[i].nvlinks = int(peers[i].size());
    for (const std::string& far : peers[i]) onSwitch[i] = onSwitch[i] || index(far) < 0;
  }
  int pairs = 0;
  for (size_t i = 0; i < h->gpus.size(); ++i)
    for (size_t j = 0; j < h->gpus.size(); ++j) {
      bool direct = std::find(peers[i].begin(), peers[i].end(), h->gpus[j].busId) != peers[i].end();
      if (i != j && (direct || (onSwitch[i] && onSwitch[j]))) {
        h->gpuPaths[i][j] = PathClass::NVLink;
        ++pairs;
      }
    }
  if (pairs) *notes += "NVLink between " + std::to_string(pairs / 2) + " GPU pair(s)\n";
}

}  // namespace chorus::topo
