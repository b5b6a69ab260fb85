// Pieces shared by the TCP transport's own files.
#pragma once

#include <cstdint>

#include "common/socket.h"
#include "transport/tcp/handshake.h"
#include "transport/tcp/tcp_transport.h"

namespace chorus {

// A connection accepted whose handshake has not finished yet: first its HELLO arrives, then,
// after this rank's ACCEPT, its PROOF.
struct TcpTransport::Pending {
  Socket sock;
  SockAddr from;
  TcpHello hello{};
  size_t got = 0;
  TcpHello accept{};  // sent once the HELLO passed; the proof must cover it
  bool answered = false;
  TcpProof proof{};
  size_t proofGot = 0;
  Deadline deadline = Deadline::never();
  uint32_t id = 0;
};

inline constexpr double kHandshakeSec = 5;  // a silent stranger is dropped after this
// Unfinished handshakes are capped, per source address and in all, so strangers cannot fill
// the descriptor table; a real rank's streams are all opened by set-up, before strangers count.
inline constexpr size_t kMaxPending = 256;
inline constexpr size_t kMaxPendingPerSource = 64;
inline constexpr uint64_t kPendingTag = uint64_t(1) << 32;  // epoll tag of pending handshakes
inline constexpr uint64_t kListenTag = ~0ull - 1;           // epoll tag of the listener

// Per-stream socket options: no Nagle (latency of small messages), and TCP_USER_TIMEOUT so a
// link that goes dark becomes an error in bounded time rather than endless retransmission.
void tuneStream(int fd, double timeoutSec);

}  // namespace chorus
