// Two real processes (ranks 0 and 1 of a test::runRanks job) joined by the shared-memory
// transport, for tests below the executor: each rank holds its connection to the other.
#pragma once

#include <sched.h>

#include <memory>

#include "bootstrap/bootstrap.h"
#include "core/op_desc.h"
#include "harness/multirank.h"
#include "transport/shm/shm_transport.h"

namespace chorus::test {

struct ShmPair {
  std::unique_ptr<Bootstrap> bs;
  Doorbell doorbell;
  std::unique_ptr<ShmTransport> shm;
  Connection* conn = nullptr;
};

// Bootstrap, then the transport with `options`; reports and returns false on failure.
inline bool connectShmPair(RankContext& ctx, const ShmOptions& options, ShmPair* p) {
  const Deadline d = Deadline::after(30);
  Status st = Bootstrap::connect(ctx.id, ctx.rank, ctx.size, d, &p->bs);
  if (st.ok()) st = ShmTransport::create(p->bs.get(), {0, 0}, options, &p->doorbell, d, &p->shm);
  if (!st.ok()) {
    ctx.report("set-up: %s", st.toString().c_str());
    return false;
  }
  p->conn = p->shm->connection(1 - ctx.rank);
  return true;
}

// connectShmPair for tests of lending: 0 once connected with cross-memory access to the peer,
// 77 (reported) where the kernel refuses it, 1 where set-up failed.
inline int connectLendingPair(RankContext& ctx, const ShmOptions& options, ShmPair* p) {
  if (!connectShmPair(ctx, options, p)) return 1;
  if (p->conn->receiveWindow()) return 0;
  ctx.report("the kernel refuses cross-memory access between these processes");
  return 77;
}

// The header of a test message of `bytes` for `coll` (of a 1 MiB call of bytes).
inline WireHeader messageHeader(Collective coll, uint32_t bytes) {
  WireHeader h{};
  h.bytes = bytes;
  h.coll = uint8_t(coll);
  h.dtype = uint8_t(DataType::Uint8);
  h.count = 1 << 20;
  return h;
}

// Posts a message, waiting while the ring is full.
inline void postMessage(Connection* c, Collective coll, const void* data, uint32_t bytes,
                        Completion* sent) {
  while (!c->postSend(messageHeader(coll, bytes), MemRef::host(data), sent)) sched_yield();
}

// Waits (up to 20 s) for the next message and returns its payload, still unreleased; null if
// none came.
inline const char* nextPayload(Connection* c) {
  const void* payload = nullptr;
  for (Deadline d = Deadline::after(20); !c->peek(&payload) && !d.expired();) sched_yield();
  return static_cast<const char*>(payload);
}

// Byte i of a test pattern; `salt` tells patterns apart.
inline char patternByte(size_t i, int salt) {
  return char((i * 131 + size_t(salt)) & 0xff);
}

}  // namespace chorus::test
