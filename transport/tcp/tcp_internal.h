// Pieces shared by the TCP transport's own files.
#pragma once

#include <cstdint>

#include "common/socket.h"
#include "transport/tcp/handshake.h"
#include "transport/tcp/tcp_transport.h"

namespace chorus {

// A connection accepted whose handshake has not fully arrived yet.
struct TcpTransport::Pending {
  Socket sock;
  SockAddr from;
  TcpHello hello{};
  size_t got = 0;
  Deadline deadline = Deadline::never();
  uint32_t id = 0;
};

inline constexpr double kHandshakeSec = 5;  // a silent stranger is dropped after this
inline constexpr uint64_t kPendingTag = uint64_t(1) << 32;  // epoll tag of pending handshakes

// Per-stream socket options: no Nagle (latency of small messages), and TCP_USER_TIMEOUT so a
// link that goes dark becomes an error in bounded time rather than endless retransmission.
void tuneStream(int fd, double timeoutSec);

}  // namespace chorus
