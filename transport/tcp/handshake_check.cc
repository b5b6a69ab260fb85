#include "transport/tcp/handshake_check.h"

namespace chorus {

bool checkConnectHello(const TcpHello& h, int rank, const std::vector<bool>& reach, int nstreams,
                       size_t chunkBytes, std::string* why) {
  if (h.magic != kTcpHelloMagic) return *why = "not a Chorus TCP handshake", false;
  if (h.version != kTcpProtocolVersion)
    return *why = "protocol version " + std::to_string(h.version) + ", expected " +
                  std::to_string(kTcpProtocolVersion),
           false;
  if (h.kind != kTcpHelloConnect) return *why = "not a connection request", false;
  if (h.to != rank)
    return *why = "addressed to rank " + std::to_string(h.to) + ", this is rank " +
                  std::to_string(rank),
           false;
  if (h.from < 0 || h.from >= rank || size_t(h.from) >= reach.size() || !reach[size_t(h.from)])
    return *why = "rank " + std::to_string(h.from) + " is not expected to connect here", false;
  if (h.nstreams != nstreams || h.chunkBytes != chunkBytes)
    return *why = "rank " + std::to_string(h.from) + " uses " + std::to_string(h.nstreams) +
                  " streams of " + std::to_string(h.chunkBytes) + "-byte chunks, this rank " +
                  std::to_string(nstreams) + " of " + std::to_string(chunkBytes) +
                  " (set CHORUS_SOCKET_NSTREAMS and CHORUS_TCP_CHUNK_BYTES alike)",
           false;
  if (h.stream < 0 || h.stream >= nstreams)
    return *why = "stream " + std::to_string(h.stream) + " out of range", false;
  return true;
}

bool checkAccept(const TcpHello& accept, const TcpHello& sent, const uint8_t* secret, int peer,
                 int rank, int stream) {
  return accept.magic == kTcpHelloMagic && accept.kind == kTcpHelloAccept && accept.from == peer &&
         accept.to == rank && accept.stream == stream &&
         auth::macEquals(accept.mac, acceptMac(secret, sent, accept).data());
}

TcpHeaderKind classifyHeader(const WireHeader& h, size_t chunkBytes) {
  if (h.kind == kTcpGoodbye && h.bytes == 0) return TcpHeaderKind::Goodbye;
  if (h.bytes > chunkBytes || (h.kind != kWireData && h.kind != kWireReady))
    return TcpHeaderKind::Malformed;
  return TcpHeaderKind::Message;
}

}  // namespace chorus
