#include <cstring>

#include "transport/tcp/tcp_transport.h"

namespace chorus {

TcpOptions TcpOptions::fromConfig(const Config& c) {
  TcpOptions o;
  o.ifname = c.socketIfname;
  o.family = c.socketFamily;
  o.nstreams = c.tcpStreams;
  o.chunkBytes = c.tcpChunkBytes;
  o.slots = c.tcpSlots;
  o.zeroCopyBytes = c.tcpZeroCopyBytes;
  o.timeoutSec = c.timeoutSec;
  return o;
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
