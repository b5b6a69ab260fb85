#include <cstring>

#include "common/env.h"
#include "transport/tcp/tcp_transport.h"

namespace chorus {

Status TcpOptions::fromEnvironment(TcpOptions* out) {
  TcpOptions o = *out;
  std::string err;
  if (auto v = envString("CHORUS_SOCKET_IFNAME")) o.ifname = *v;
  if (auto v = envString("CHORUS_SOCKET_FAMILY"))
    if (!parseFamily(*v, &o.family))
      return Status::InvalidArgument("CHORUS_SOCKET_FAMILY='" + *v +
                                     "': expected 4, 6, ipv4, ipv6 or any");
  if (auto v = envInt("CHORUS_SOCKET_NSTREAMS", &err)) o.nstreams = int(*v);
  if (auto v = envBytes("CHORUS_TCP_CHUNK_BYTES", &err)) o.chunkBytes = size_t(*v);
  if (auto v = envInt("CHORUS_TCP_SLOTS", &err)) o.slots = int(*v);
  if (auto v = envBytes("CHORUS_TCP_ZERO_COPY_BYTES", &err)) o.zeroCopyBytes = size_t(*v);
  if (!err.empty()) return Status::InvalidArgument("configuration: " + err);
  CHORUS_RETURN_IF_ERROR(o.validate());
  *out = o;
  return Status::Ok();
}

Status TcpOptions::validate() const {
  if (nstreams < 1 || nstreams > 16)
    return Status::InvalidArgument("CHORUS_SOCKET_NSTREAMS must be 1..16, not " +
                                   std::to_string(nstreams));
  if (chunkBytes < 64 || chunkBytes % 64 || chunkBytes > (size_t(64) << 20))
    return Status::InvalidArgument(
        "CHORUS_TCP_CHUNK_BYTES must be a multiple of 64 between 64 B "
        "and 64 MiB, not " +
        std::to_string(chunkBytes));
  if (slots < 1 || slots > 1024)
    return Status::InvalidArgument("CHORUS_TCP_SLOTS must be 1..1024, not " +
                                   std::to_string(slots));
  if (!(timeoutSec > 0)) return Status::InvalidArgument("tcp: timeout must be > 0 seconds");
  return Status::Ok();
}

}  // namespace chorus
