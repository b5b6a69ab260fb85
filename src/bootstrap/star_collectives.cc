// allgather / broadcast / barrier over the star: contributors send to rank 0, rank 0
// assembles and sends the result to every other rank. Each call takes the next sequence
// number, and every message carries (op, arg, bytes), so calls that do not match across ranks
// are reported instead of mixing data.
#include <cstring>

#include "bootstrap/star.h"

namespace chorus::boot {

DataHeader StarBootstrap::nextHeader(CollOp op, int32_t arg, uint64_t bytes) {
  DataHeader h;
  h.seq = ++seq_;
  h.src = rank_;
  h.op = op;
  h.arg = arg;
  h.bytes = bytes;
  return h;
}

std::string StarBootstrap::callName(const DataHeader& h) const {
  std::string s = std::string("bootstrap ") + collOpName(h.op) + " #" + std::to_string(h.seq);
  if (h.op == CollOp::Broadcast) s += " (root " + std::to_string(h.arg) + ")";
  return s;
}

Status StarBootstrap::allgather(const void* mine, size_t bytes, void* all, Deadline deadline) {
  if (bytes && (!mine || !all)) return Status::InvalidArgument("allgather: null buffer");
  DataHeader h = nextHeader(CollOp::Allgather, 0, bytes);
  std::string ctx = "rank " + std::to_string(rank_) + ": " + callName(h);
  CHORUS_RETURN_IF_ERROR(mailbox_.poisoned().withContext(ctx));
  uint8_t* out = static_cast<uint8_t*>(all);
  if (bytes) memmove(out + size_t(rank_) * bytes, mine, bytes);
  if (size_ == 1) return Status::Ok();
  size_t total = bytes * size_t(size_);
  if (rank_ == 0) {
    std::vector<int> from;
    for (int r = 1; r < size_; ++r) from.push_back(r);
    CHORUS_RETURN_IF_ERROR(gatherAtRoot(h, from, bytes, out, bytes, deadline).withContext(ctx));
    return sendResult(h, out, total, deadline).withContext(ctx);
  }
  CHORUS_RETURN_IF_ERROR(sendData(0, h, mine, bytes, deadline).withContext(ctx));
  Message m;
  CHORUS_RETURN_IF_ERROR(takeResult(h, total, deadline, &m).withContext(ctx));
  if (total) memcpy(out, m.payload.data(), total);
  return Status::Ok();
}

Status StarBootstrap::broadcast(void* data, size_t bytes, int root, Deadline deadline) {
  if (root < 0 || root >= size_)
    return Status::InvalidArgument("broadcast: root " + std::to_string(root) +
                                   " is out of range [0, " + std::to_string(size_) + ")");
  if (bytes && !data) return Status::InvalidArgument("broadcast: null buffer");
  DataHeader h = nextHeader(CollOp::Broadcast, root, bytes);
  std::string ctx = "rank " + std::to_string(rank_) + ": " + callName(h);
  CHORUS_RETURN_IF_ERROR(mailbox_.poisoned().withContext(ctx));
  if (size_ == 1) return Status::Ok();
  uint8_t* buf = static_cast<uint8_t*>(data);
  if (rank_ == 0) {
    if (root != 0)
      CHORUS_RETURN_IF_ERROR(gatherAtRoot(h, {root}, bytes, buf, 0, deadline).withContext(ctx));
    return sendResult(h, buf, bytes, deadline).withContext(ctx);
  }
  if (rank_ == root) CHORUS_RETURN_IF_ERROR(sendData(0, h, buf, bytes, deadline).withContext(ctx));
  // The root waits for the result too: it is how it learns that rank 0 failed the round.
  Message m;
  CHORUS_RETURN_IF_ERROR(takeResult(h, bytes, deadline, &m).withContext(ctx));
  if (rank_ != root && bytes) memcpy(buf, m.payload.data(), bytes);
  return Status::Ok();
}

Status StarBootstrap::barrier(Deadline deadline) {
  DataHeader h = nextHeader(CollOp::Barrier, 0, 0);
  std::string ctx = "rank " + std::to_string(rank_) + ": " + callName(h);
  CHORUS_RETURN_IF_ERROR(mailbox_.poisoned().withContext(ctx));
  if (size_ == 1) return Status::Ok();
  if (rank_ == 0) {
    std::vector<int> from;
    for (int r = 1; r < size_; ++r) from.push_back(r);
    CHORUS_RETURN_IF_ERROR(gatherAtRoot(h, from, 0, nullptr, 0, deadline).withContext(ctx));
    return sendResult(h, nullptr, 0, deadline).withContext(ctx);
  }
  CHORUS_RETURN_IF_ERROR(sendData(0, h, nullptr, 0, deadline).withContext(ctx));
  Message m;
  return takeResult(h, 0, deadline, &m).withContext(ctx);
}

// Rank 0: receives each contribution into out + rank * stride. On any failure the other
// ranks are told at once rather than left to wait for their deadlines.
Status StarBootstrap::gatherAtRoot(const DataHeader& h, const std::vector<int>& from,
                                   size_t eachBytes, uint8_t* out, size_t stride,
                                   Deadline deadline) {
  for (int r : from) {
    Message m;
    Status st = takeData(r, h, eachBytes, deadline, &m);
    if (!st.ok()) {
      failRound(h, st);
      return st;
    }
    if (eachBytes) memcpy(out + size_t(r) * stride, m.payload.data(), eachBytes);
  }
  return Status::Ok();
}

Status StarBootstrap::sendResult(const DataHeader& h, const void* data, size_t bytes,
                                 Deadline deadline) {
  DataHeader out = h;
  out.src = 0;
  Status first;
  for (int r = 1; r < size_; ++r) {
    Status st = sendData(r, out, data, bytes, deadline);
    if (first.ok()) first = st;
  }
  return first;
}

Status StarBootstrap::takeResult(const DataHeader& h, size_t bytes, Deadline deadline, Message* m) {
  return takeData(0, h, bytes, deadline, m);
}

Status StarBootstrap::takeData(int src, const DataHeader& expect, size_t payloadBytes,
                               Deadline deadline, Message* m) {
  Status st = mailbox_.take(src, expect.seq, deadline, m);
  if (st.code() == StatusCode::Timeout && src == 0)  // its word on who kept it waiting may come
    st = mailbox_.take(src, expect.seq, Deadline::after(kVerdictGraceSec), m);
  if (st.code() == StatusCode::Timeout)
    return Status::Timeout("timed out waiting for rank " + std::to_string(src) +
                           (src == 0 ? " (which collects every rank's part; a rank may be late "
                                       "or stuck before this call)"
                                     : " to make this call (is it late, stuck, or making "
                                       "different bootstrap calls?)"));
  CHORUS_RETURN_IF_ERROR(st);
  const DataHeader& got = m->header;
  if (got.flags & kDataIsError) return decodeError(m->payload);
  if (got.op != expect.op || got.arg != expect.arg || got.bytes != expect.bytes) {
    DataHeader theirs = got;
    return Status::InvalidUsage("mismatched bootstrap calls: rank " + std::to_string(src) +
                                " made " + callName(theirs) + " with " + std::to_string(got.bytes) +
                                " bytes, this rank " + callName(expect) + " with " +
                                std::to_string(expect.bytes) +
                                " bytes; all ranks must make the same calls in the same order");
  }
  if (m->payload.size() != payloadBytes)
    return Status::Internal("rank " + std::to_string(src) + " sent " +
                            std::to_string(m->payload.size()) + " bytes, expected " +
                            std::to_string(payloadBytes));
  return Status::Ok();
}

void StarBootstrap::failRound(const DataHeader& h, const Status& st) {
  DataHeader e = h;
  e.src = 0;
  e.flags = kDataIsError;
  Status told(st.code(), "rank 0 could not complete " + callName(h) + ": " + st.message());
  std::vector<uint8_t> p = encodeError(told);
  Deadline d = Deadline::after(1.0);
  for (int r = 1; r < size_; ++r) (void)sendData(r, e, p.data(), p.size(), d);
}

Status StarBootstrap::sendData(int peer, const DataHeader& h, const void* data, size_t bytes,
                               Deadline d) {
  Writer w;
  encodeDataHeader(h, &w);
  w.bytes(data, bytes);
  return send(peer, kData, w.buffer().data(), w.buffer().size(), d);
}

}  // namespace chorus::boot
