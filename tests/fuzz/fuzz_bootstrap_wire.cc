// Feeds: the payload of a bootstrap frame (bootstrap/wire.h) to the decoder byte 0 selects:
//   0 HELLO, 1 TABLE, 2 ERROR, 3 DATA header, 4 a listener's answer (openAnswer); the rest is
//   the payload.
// Checks: no crash, UB or leak; whatever a decoder accepts re-encodes to bytes that decode to
// the same message and re-encode to themselves (HELLO, TABLE, ERROR, DATA); a DATA header
// re-encodes to its own 28 bytes, padding aside; a HELLO signed with the job secret passes the
// credential check and fails it under another challenge; a fuzzed answer never passes
// openAnswer, and the same bytes sealed by sealAnswer open to themselves.
#include <cstring>

#include "bootstrap/wire.h"
#include "fuzz_check.h"

using namespace chorus;
using namespace chorus::boot;

namespace {

const uint8_t kSecret[kSecretBytes] = {1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11,
                                       12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22,
                                       23, 24, 25, 26, 27, 28, 29, 30, 31};
const auth::Nonce kListenerNonce = {42, 43, 44};

bool sameAddr(const SockAddr& a, const SockAddr& b) {
  return a.len == b.len && memcmp(&a.storage, &b.storage, sizeof a.storage) == 0;
}

void hello(const std::vector<uint8_t>& in) {
  Hello h;
  if (!decodeHello(in, &h).ok() || h.version != kProtocolVersion) return;
  const std::vector<uint8_t> once = encodeHello(h);
  Hello again;
  FUZZ_CHECK(decodeHello(once, &again).ok());
  FUZZ_CHECK(again.nonce == h.nonce && again.mac == h.mac && again.rank == h.rank &&
             again.size == h.size && again.pid == h.pid && again.host == h.host &&
             sameAddr(again.starAddr, h.starAddr));
  FUZZ_CHECK(encodeHello(again) == once);
  // Whatever the fuzzer put in the proof, it does not know the secret...
  (void)checkHelloCredentials(h, kSecret, kListenerNonce);
  // ... but signing makes the same HELLO pass, for this challenge only.
  FUZZ_CHECK(signHello(&h, kSecret, kListenerNonce).ok());
  FUZZ_CHECK(checkHelloCredentials(h, kSecret, kListenerNonce).ok());
  auth::Nonce other = kListenerNonce;
  other[31] ^= 1;
  FUZZ_CHECK(!checkHelloCredentials(h, kSecret, other).ok());
}

void table(const std::vector<uint8_t>& in) {
  Table t;
  if (!decodeTable(in, &t).ok()) return;
  const std::vector<uint8_t> once = encodeTable(t);
  Table again;
  FUZZ_CHECK(decodeTable(once, &again).ok());
  FUZZ_CHECK(sameAddr(again.starAddr, t.starAddr) && again.rank0.pid == t.rank0.pid &&
             again.rank0.host == t.rank0.host);
  FUZZ_CHECK(encodeTable(again) == once);
}

void error(const std::vector<uint8_t>& in) {
  const Status st = decodeError(in);
  FUZZ_CHECK(!st.ok());  // an error frame never reads as success
  const std::vector<uint8_t> once = encodeError(st);
  const Status again = decodeError(once);
  FUZZ_CHECK(again.code() == st.code() && again.message() == st.message());
}

void dataHeader(const std::vector<uint8_t>& in) {
  Reader r(in);
  DataHeader h;
  if (!decodeDataHeader(&r, &h).ok()) {
    FUZZ_CHECK(in.size() < kDataHeaderBytes);
    return;
  }
  FUZZ_CHECK(r.left() == in.size() - kDataHeaderBytes);
  (void)collOpName(h.op);
  Writer w;
  encodeDataHeader(h, &w);
  std::vector<uint8_t> expect(in.begin(), in.begin() + kDataHeaderBytes);
  expect[14] = expect[15] = 0;  // padding
  FUZZ_CHECK(w.buffer() == expect);
}

void answer(const std::vector<uint8_t>& in) {
  Hello h;
  h.nonce = {7, 7, 7};
  Frame f;
  f.type = kTable;
  f.payload = in;
  std::vector<uint8_t> body;
  FUZZ_CHECK(!openAnswer(kSecret, h, kListenerNonce, f, &body).ok());
  f.payload = sealAnswer(kSecret, h, kListenerNonce, kTable, in);
  FUZZ_CHECK(openAnswer(kSecret, h, kListenerNonce, f, &body).ok() && body == in);
  f.type = kReady;  // a proof for one message type does not pass for another
  FUZZ_CHECK(!openAnswer(kSecret, h, kListenerNonce, f, &body).ok());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const std::vector<uint8_t> in(data + 1, data + size);
  switch (data[0] % 5) {
    case 0:
      hello(in);
      break;
    case 1:
      table(in);
      break;
    case 2:
      error(in);
      break;
    case 3:
      dataHeader(in);
      break;
    default:
      answer(in);
      break;
  }
  return 0;
}
