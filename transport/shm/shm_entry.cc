// The shared-memory transport's entry in the registry: host memory between ranks of one host.
#include "transport/registry.h"
#include "transport/shm/shm_transport.h"

namespace chorus {

TransportEntry shmTransportEntry() {
  TransportEntry e;
  e.name = "shm";
  e.priority = 200;
  e.canReach = [](const JobShape& job, int a, int b, MemoryKind kind) {
    return kind == MemoryKind::Host && job.sameHost(a, b);
  };
  e.chunkBytes = [](const Config& c) { return c.shmSlotBytes; };
  e.mustAgree = [](const Config& c) {
    return "CHORUS_SHM_SLOT_BYTES=" + std::to_string(c.shmSlotBytes) +
           " CHORUS_SHM_SLOTS=" + std::to_string(c.shmSlots);
  };
  e.create = [](const TransportContext& ctx, std::unique_ptr<Transport>* out) {
    std::unique_ptr<ShmTransport> shm;
    ShmOptions opts{ctx.config->shmSlotBytes, ctx.config->shmSlots, ctx.config->shmLendBytes};
    CHORUS_RETURN_IF_ERROR(ShmTransport::create(ctx.bootstrap, ctx.job->hostOf, opts, ctx.doorbell,
                                                ctx.deadline, &shm));
    *out = std::move(shm);
    return Status::Ok();
  };
  return e;
}

}  // namespace chorus
