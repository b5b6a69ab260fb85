// Feeds: a byte stream, as a peer would send it, to the bootstrap's FrameReader
// (common/socket.h) through a socket pair, in pieces of a size the input chooses.
//   byte 0: the reader's payload limit (16 B, 4 KiB or the default 1 GiB)
//   byte 1: the piece size, 1..256 bytes; the rest: the stream
// Checks: no crash, UB or leak; every frame handed out is exactly the bytes that were sent
// (header then payload, in order), never larger than the limit; a bad header is an error and
// nothing after it is read; what is neither handed out nor refused stays buffered.
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>

#include "common/socket.h"
#include "fuzz_check.h"

using namespace chorus;

namespace {
uint32_t le32(const uint8_t* p) {
  return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  static const uint32_t kLimits[] = {16, 4096, 1u << 30};
  FrameReader reader(kLimits[data[0] % 3]);
  const size_t piece = size_t(data[1]) + 1;
  const uint8_t* stream = data + 2;
  const size_t total = size - 2;

  int fds[2];
  FUZZ_CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, fds) == 0);
  size_t sent = 0, consumed = 0;
  bool failed = false;
  while (!failed) {
    const size_t n = std::min(piece, total - sent);
    if (n) FUZZ_CHECK(send(fds[0], stream + sent, n, MSG_NOSIGNAL) == ssize_t(n));
    sent += n;
    if (sent == total) close(fds[0]);
    bool closed = false;
    FUZZ_CHECK(reader.readAvailable(fds[1], &closed).ok());
    for (;;) {
      Frame f;
      bool got = false;
      if (!reader.next(&f, &got).ok()) {
        // Refused: the header at `consumed` is bad (magic or length) and fully arrived.
        FUZZ_CHECK(sent - consumed >= kFrameHeaderBytes);
        const uint8_t* h = stream + consumed;
        FUZZ_CHECK(le32(h) != kFrameMagic || le32(h + 8) > reader.maxPayload());
        failed = true;
        break;
      }
      if (!got) break;
      const uint8_t* h = stream + consumed;
      FUZZ_CHECK(f.payload.size() <= reader.maxPayload());
      FUZZ_CHECK(consumed + kFrameHeaderBytes + f.payload.size() <= sent);
      FUZZ_CHECK(le32(h) == kFrameMagic && le32(h + 4) == f.type &&
                 le32(h + 8) == f.payload.size());
      FUZZ_CHECK(f.payload.empty() ||
                 memcmp(f.payload.data(), h + kFrameHeaderBytes, f.payload.size()) == 0);
      consumed += kFrameHeaderBytes + f.payload.size();
    }
    if (!failed) FUZZ_CHECK(reader.buffered() == sent - consumed);
    if (sent == total) {
      FUZZ_CHECK(closed || failed);
      break;
    }
  }
  if (sent < total) close(fds[0]);
  close(fds[1]);
  return 0;
}
