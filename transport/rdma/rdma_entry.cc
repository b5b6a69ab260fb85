// The RDMA transport's entries in the registry: one protocol (rdma_transport.h) under two
// names, one per provider. "ib" (rdma-core verbs) ranks above "ofi" (libfabric), and both above
// TCP; shared memory still carries pairs on one host. Each is used only where both ranks of a
// pair can open it, so a job whose hosts lack a NIC falls back to TCP, and says so at INFO.
#include <dirent.h>

#include <map>
#include <mutex>

#include "common/log.h"
#include "transport/rails.h"
#include "transport/rdma/rdma_options.h"
#include "transport/rdma/rdma_transport.h"
#include "transport/registry.h"

namespace chorus {

namespace {

using OpenNic = Status (*)(const RdmaNicOptions&, std::unique_ptr<RdmaNic>*);

// Whether CHORUS_NET or CHORUS_TRANSPORT names it: then libfabric's tcp and sockets count.
bool forcedBy(const Config& c, const char* name) {
  return transportForced(c, name);
}

bool rdmaDeviceListed() {
  for (const char* dir : {"/sys/class/infiniband", "/sys/class/cxi"}) {
    DIR* d = opendir(dir);
    if (!d) continue;
    bool any = false;
    while (dirent* e = readdir(d)) any |= e->d_name[0] != '.';
    closedir(d);
    if (any) return true;
  }
  return false;
}

// Whether a NIC opens with these settings; asked once per process and setting, since every
// communicator of a process would get the same answer and opening costs milliseconds.
bool probe(const char* name, OpenNic open, const Config& c, std::string* why) {
  static std::mutex mutex;
  static std::map<std::string, std::pair<bool, std::string>> known;
  const RdmaOptions o = RdmaOptions::fromConfig(c);
  const bool forced = forcedBy(c, name);
  const std::string key = std::string(name) + "|" + o.ofiProvider + "|" + o.ibHca + "|" + o.ifname +
                          "|" + (forced ? "1" : "0");
  // Unasked, look for a device first: loading libfabric's providers costs ~0.3 s, and every
  // RDMA NIC either provider drives (InfiniBand, RoCE, EFA, Omni-Path; Slingshot) is listed
  // in sysfs.
  if (!forced && !rdmaDeviceListed()) {
    *why = "no RDMA device in /sys/class/infiniband or /sys/class/cxi";
    return false;
  }
  std::lock_guard<std::mutex> lock(mutex);
  auto it = known.find(key);
  if (it == known.end()) {
    std::unique_ptr<RdmaNic> nic;
    Status st = open(o.nicOptions(false, forced), &nic);
    it = known.emplace(key, std::make_pair(st.ok(), st.message())).first;
  }
  *why = it->second.second;
  return it->second.first;
}

TransportEntry rdmaEntry(const char* name, int priority) {
  TransportEntry e;
  e.name = name;
  e.priority = priority;
  e.net = name;
  e.canReach = [](const JobShape&, int, int, MemoryKind kind) { return kind == MemoryKind::Host; };
  e.chunkBytes = [](const Config& c) { return c.rdmaChunkBytes; };
  e.mustAgree = [](const Config& c) {
    // Not CHORUS_RDMA_SLOTS: each receiver sizes its own FIFOs and tells its senders.
    return "CHORUS_NET=" + c.net + " CHORUS_RDMA_CHUNK_BYTES=" + std::to_string(c.rdmaChunkBytes) +
           " CHORUS_RDMA_LANES=" + std::to_string(c.rdmaLanes);
  };
  return e;
}

template <OpenNic Open>
Status createRdma(const char* name, const TransportContext& ctx, std::unique_ptr<Transport>* out) {
  RdmaOptions opts = RdmaOptions::fromConfig(*ctx.config);
  opts.chunkBytes = ctx.chunkBytes;
  const bool forced = forcedBy(*ctx.config, name);
  std::unique_ptr<RdmaNic> nic;
  bool any = false;
  for (bool p : ctx.peers) any |= p;
  RdmaNicOptions nicOpts = opts.nicOptions(ctx.job->oneHost(), forced);
  nicOpts.localIndex = localIndexOf(ctx.job->hostOf, ctx.bootstrap->rank());
  Status opened = any ? Open(nicOpts, &nic) : Status::Ok();
  RdmaHooks hooks{ctx.onError, ctx.doorbell, ctx.failed};
  std::unique_ptr<RdmaTransport> t;
  // A rank whose NIC failed to open still takes part in the exchange (with nothing), so the
  // others learn of it at once rather than at their deadline.
  Status st = RdmaTransport::create(ctx.bootstrap, opened.ok() ? ctx.peers : std::vector<bool>(),
                                    std::move(nic), name, opts, std::move(hooks), ctx.deadline, &t);
  CHORUS_RETURN_IF_ERROR(opened.withContext(std::string(name) + " transport"));
  CHORUS_RETURN_IF_ERROR(st);
  *out = std::move(t);
  return Status::Ok();
}

}  // namespace

TransportEntry ibTransportEntry() {
  TransportEntry e = rdmaEntry("ib", 160);
  e.opens = [](const Config& c, std::string* why) { return probe("ib", openVerbsNic, c, why); };
  e.create = [](const TransportContext& ctx, std::unique_ptr<Transport>* out) {
    return createRdma<openVerbsNic>("ib", ctx, out);
  };
  return e;
}

TransportEntry ofiTransportEntry() {
  TransportEntry e = rdmaEntry("ofi", 150);
  e.mustAgree = [](const Config& c) { return "CHORUS_OFI_PROVIDER=" + c.ofiProvider; };
  e.opens = [](const Config& c, std::string* why) { return probe("ofi", openOfiNic, c, why); };
  e.create = [](const TransportContext& ctx, std::unique_ptr<Transport>* out) {
    return createRdma<openOfiNic>("ofi", ctx, out);
  };
  return e;
}

}  // namespace chorus
