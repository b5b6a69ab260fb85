// Two real processes (ranks 0 and 1 of a test::runRanks job) joined by the shared-memory
// transport, for tests below the executor: each rank holds its connection to the other.
#pragma once

#include <memory>

#include "bootstrap/bootstrap.h"
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

// Byte i of a test pattern; `salt` tells patterns apart.
inline char patternByte(size_t i, int salt) {
  return char((i * 131 + size_t(salt)) & 0xff);
}

}  // namespace chorus::test
