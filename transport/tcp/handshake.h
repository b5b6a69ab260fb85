// The first bytes on every TCP stream: the connecting rank says who it is, which stream this
// is and proves it knows the job secret; the accepting rank answers in kind. Anything that is
// not exactly this (a port scanner, another job, a stale rank) is closed and logged.
#pragma once

#include <cstdint>
#include <cstring>

#include "bootstrap/bootstrap.h"

namespace chorus {

inline constexpr uint32_t kTcpHelloMagic = 0x43544843;  // "CHTC"
inline constexpr uint16_t kTcpProtocolVersion = 1;
inline constexpr uint16_t kTcpHelloConnect = 1, kTcpHelloAccept = 2;

struct TcpHello {
  uint32_t magic;
  uint16_t version;
  uint16_t kind;  // kTcpHelloConnect or kTcpHelloAccept
  int32_t from, to;
  int32_t stream, nstreams;
  uint32_t chunkBytes;
  uint32_t slots;
  uint8_t secret[kSecretBytes];
};
static_assert(sizeof(TcpHello) == 64, "the handshake is a fixed 64-byte record");

inline TcpHello makeHello(uint16_t kind, int from, int to, int stream, int nstreams,
                          uint32_t chunkBytes, uint32_t slots, const uint8_t* secret) {
  TcpHello h{kTcpHelloMagic, kTcpProtocolVersion, kind,  from, to, stream,
             nstreams,       chunkBytes,          slots, {}};
  memcpy(h.secret, secret, kSecretBytes);
  return h;
}

// Constant time, so a stranger learns nothing from how fast it is turned away.
inline bool secretEquals(const uint8_t* a, const uint8_t* b) {
  uint8_t diff = 0;
  for (size_t i = 0; i < kSecretBytes; ++i) diff |= a[i] ^ b[i];
  return diff == 0;
}

// The WireHeader `reserved` value that marks a stream's goodbye: the peer is shutting down
// cleanly, so the end of the stream that follows is not a failure.
inline constexpr uint8_t kTcpGoodbye = 0xB7;

}  // namespace chorus
