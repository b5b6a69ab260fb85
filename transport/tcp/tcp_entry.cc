// The TCP transport's entry in the registry: host memory between any two ranks, below shared
// memory where both reach.
#include "bootstrap/bootstrap.h"
#include "transport/rails.h"
#include "transport/registry.h"
#include "transport/tcp/tcp_transport.h"

namespace chorus {

TransportEntry tcpTransportEntry() {
  TransportEntry e;
  e.name = "tcp";
  e.priority = 100;
  e.net = "socket";
  e.canReach = [](const JobShape&, int, int, MemoryKind kind) { return kind == MemoryKind::Host; };
  e.chunkBytes = [](const Config& c) { return c.tcpChunkBytes; };
  e.mustAgree = [](const Config& c) {
    return "CHORUS_TCP_CHUNK_BYTES=" + std::to_string(c.tcpChunkBytes) +
           " CHORUS_SOCKET_NSTREAMS=" + std::to_string(c.tcpStreams);
  };
  e.create = [](const TransportContext& ctx, std::unique_ptr<Transport>* out) {
    TcpOptions opts = TcpOptions::fromConfig(*ctx.config);
    opts.chunkBytes = ctx.chunkBytes;
    opts.localIndex = localIndexOf(ctx.job->hostOf, ctx.bootstrap->rank());
    TcpHooks hooks;
    hooks.onError = ctx.onError;
    hooks.doorbell = ctx.doorbell;
    hooks.failed = ctx.failed;
    std::unique_ptr<TcpTransport> tcp;
    CHORUS_RETURN_IF_ERROR(TcpTransport::create(ctx.bootstrap, ctx.peers, ctx.job->oneHost(), opts,
                                                std::move(hooks), ctx.deadline, &tcp));
    *out = std::move(tcp);
    return Status::Ok();
  };
  return e;
}

}  // namespace chorus
