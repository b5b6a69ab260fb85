// Feeds: the first bytes of a TCP stream (transport/tcp/handshake.h) and the message headers
// after them, to the checks in transport/tcp/handshake_check.h.
//   bytes 0..95: a HELLO record as the accepting rank reads it, and the same bytes as the
//   ACCEPT the connecting rank reads; byte 96: this rank (0..15); byte 97: which ranks it
//   reaches over TCP (bit q % 8 for rank q); byte 98: streams per peer (1..16); byte 99: the
//   chunk size (one of four); the rest, 24 bytes at a time: message headers (WireHeader).
// Checks: no crash, UB or leak; a HELLO that passes names a lower rank this rank reaches and
// a stream in range, so the accepting rank may index its connections with it; a refusal says
// why; a fuzzed ACCEPT passes only with the accepting rank's proof, and with that proof when
// its fields answer the HELLO; a header taken as data fits a chunk and a goodbye is empty.
#include <cstring>
#include <vector>

#include "fuzz_check.h"
#include "transport/tcp/handshake_check.h"

using namespace chorus;

namespace {
const uint8_t kSecret[kSecretBytes] = {9, 8, 7, 6, 5, 4, 3, 2, 1};
const size_t kChunks[] = {0, 4096, 512 << 10, size_t(1) << 32};
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  TcpHello h;
  memset(&h, 0, sizeof h);
  memcpy(&h, data, std::min(size, sizeof h));
  uint8_t knobs[4] = {0, 0, 0, 0};
  if (size > sizeof h) memcpy(knobs, data + sizeof h, std::min(size - sizeof h, sizeof knobs));
  const int rank = knobs[0] % 16;
  std::vector<bool> reach(16);
  for (int q = 0; q < 16; ++q) reach[size_t(q)] = (knobs[1] >> (q % 8)) & 1;
  const int nstreams = knobs[2] % 16 + 1;
  const size_t chunk = kChunks[knobs[3] % 4];

  std::string why;
  if (checkConnectHello(h, rank, reach, nstreams, chunk, &why)) {
    FUZZ_CHECK(h.magic == kTcpHelloMagic && h.kind == kTcpHelloConnect && h.to == rank);
    FUZZ_CHECK(h.from >= 0 && h.from < rank && reach[size_t(h.from)]);
    FUZZ_CHECK(h.stream >= 0 && h.stream < nstreams);
  } else {
    FUZZ_CHECK(!why.empty());
  }

  // The same bytes as an ACCEPT, answering a HELLO this rank sent to rank 1 on stream 0.
  TcpHello sent{};
  sent.magic = kTcpHelloMagic;
  sent.version = kTcpProtocolVersion;
  sent.kind = kTcpHelloConnect;
  sent.from = rank;
  sent.to = 1;
  const bool fieldsAnswer = h.magic == kTcpHelloMagic && h.kind == kTcpHelloAccept && h.from == 1 &&
                            h.to == rank && h.stream == 0;
  const auth::Mac proof = acceptMac(kSecret, sent, h);
  if (checkAccept(h, sent, kSecret, 1, rank, 0))
    FUZZ_CHECK(fieldsAnswer && memcmp(h.mac, proof.data(), proof.size()) == 0);
  memcpy(h.mac, proof.data(), proof.size());
  FUZZ_CHECK(checkAccept(h, sent, kSecret, 1, rank, 0) == fieldsAnswer);

  const size_t headerAt = sizeof h + sizeof knobs;
  for (size_t at = headerAt; at + sizeof(WireHeader) <= size; at += sizeof(WireHeader)) {
    WireHeader w;
    memcpy(&w, data + at, sizeof w);
    switch (classifyHeader(w, chunk)) {
      case TcpHeaderKind::Message:
        FUZZ_CHECK(w.bytes <= chunk && (w.kind == kWireData || w.kind == kWireReady));
        break;
      case TcpHeaderKind::Goodbye:
        FUZZ_CHECK(w.bytes == 0 && w.kind == kTcpGoodbye);
        break;
      case TcpHeaderKind::Malformed:
        FUZZ_CHECK(w.bytes > chunk || (w.kind != kWireData && w.kind != kWireReady));
        break;
    }
  }
  return 0;
}
