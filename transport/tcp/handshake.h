// The first bytes on every TCP stream, a challenge and response over the job secret
// (bootstrap/auth.h), so the secret never crosses the network:
//   connecting rank -> accepting rank: HELLO  (who it is, which stream, its nonce)
//   accepting rank -> connecting rank: ACCEPT (the same, its own nonce, and an HMAC proving
//                                              the secret over both records)
//   connecting rank -> accepting rank: PROOF  (an HMAC proving the secret over both records)
// The accepting rank takes the stream only after the proof. Anything that is not exactly
// this (a port scanner, another job, a stale rank) is closed and logged.
#pragma once

#include <cstdint>
#include <cstring>

#include "bootstrap/auth.h"
#include "bootstrap/bootstrap.h"

namespace chorus {

inline constexpr uint32_t kTcpHelloMagic = 0x43544843;  // "CHTC"
inline constexpr uint16_t kTcpProtocolVersion = 2;      // 2: challenge and response
inline constexpr uint16_t kTcpHelloConnect = 1, kTcpHelloAccept = 2;

struct TcpHello {
  uint32_t magic;
  uint16_t version;
  uint16_t kind;  // kTcpHelloConnect or kTcpHelloAccept
  int32_t from, to;
  int32_t stream, nstreams;
  uint32_t chunkBytes;
  uint32_t slots;
  uint8_t nonce[auth::kNonceBytes];  // fresh per stream and side
  uint8_t mac[auth::kMacBytes];      // ACCEPT only: the accepting rank's proof
};
static_assert(sizeof(TcpHello) == 96, "the handshake is a fixed 96-byte record");

struct TcpProof {
  uint8_t mac[auth::kMacBytes];
};

inline Status makeHello(uint16_t kind, int from, int to, int stream, int nstreams,
                        uint32_t chunkBytes, uint32_t slots, TcpHello* out) {
  *out = TcpHello{kTcpHelloMagic, kTcpProtocolVersion, kind,  from, to, stream,
                  nstreams,       chunkBytes,          slots, {},   {}};
  return auth::randomBytes(out->nonce, sizeof out->nonce);
}

// The accepting rank's proof, over the HELLO it answers and its ACCEPT (proof zeroed).
inline auth::Mac acceptMac(const uint8_t* secret, const TcpHello& hello, TcpHello accept) {
  memset(accept.mac, 0, sizeof accept.mac);
  return auth::computeMac(secret, "chorus tcp accept",
                          {{&hello, sizeof hello}, {&accept, sizeof accept}});
}

// The connecting rank's proof, over both records as sent.
inline auth::Mac connectMac(const uint8_t* secret, const TcpHello& hello, const TcpHello& accept) {
  return auth::computeMac(secret, "chorus tcp connect",
                          {{&hello, sizeof hello}, {&accept, sizeof accept}});
}

// The WireHeader `kind` (a transport value, from 0x80) that marks a stream's goodbye: the peer is
// shutting down cleanly, so the end of the stream that follows is not a failure.
inline constexpr uint8_t kTcpGoodbye = 0xB7;

}  // namespace chorus
