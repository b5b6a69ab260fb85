// The RDMA transport's data path (rdma_transport.h): the executor posts writes and takes what
// landed; the progress thread reports back through written() and the windows.
#include <sched.h>
#include <unistd.h>

#include <cstring>

#include "common/clock.h"
#include "transport/rdma/rdma_transport.h"

namespace chorus {

RdmaConnection::RdmaConnection(RdmaTransport* transport, int peer, int sendSlots, int receiveSlots)
    : t_(transport),
      peer_(peer),
      slots_(sendSlots),
      send_(sendSlots),
      receive_(receiveSlots),
      doneSeq_(new std::atomic<int64_t>[size_t(sendSlots)]),
      busy_(new std::atomic<uint8_t>[size_t(sendSlots)]),
      pending_(new std::atomic<uint8_t>[size_t(sendSlots)]),
      postedSeq_(new uint64_t[size_t(sendSlots)]()),
      lentRegion_(new std::atomic<const RdmaRegion*>[size_t(sendSlots)]),
      postingSeen_(new std::atomic<uint64_t>[size_t(sendSlots)]),
      posted_(new Posted[size_t(receiveSlots)]),
      postingOut_(new std::atomic<uint8_t>[size_t(receiveSlots)]) {
  for (int s = 0; s < sendSlots; ++s) {
    doneSeq_[size_t(s)].store(-1);
    busy_[size_t(s)].store(0);
    pending_[size_t(s)].store(0);
    lentRegion_[size_t(s)].store(nullptr);
    postingSeen_[size_t(s)].store(0);
  }
  for (int s = 0; s < receiveSlots; ++s) postingOut_[size_t(s)].store(0);
}

bool RdmaConnection::postSend(const WireHeader& h, MemRef data, Completion* sent) {
  if (!send_.hasCredit()) return false;
  const uint64_t seq = send_.next();
  const int slot = send_.slotOf(seq);
  if (busy_[size_t(slot)].load(std::memory_order_acquire)) return false;
  const size_t slotBytes = t_->slotBytes();
  char* stage = staging_ + size_t(slot) * slotBytes;
  memcpy(stage, &h, sizeof h);
  // The receiver posted where this payload goes (the posting names the message, so one for an
  // earlier message in this slot does not count) and the lengths agree: write it there.
  const RdmaPosting* posting = nullptr;
  if (h.bytes && postingSeen_[size_t(slot)].load(std::memory_order_acquire) == seq + 1 &&
      postings_[slot].bytes == h.bytes)
    posting = &postings_[slot];
  // Without a posting, a large payload waits while a few writes are still queued: the wire is
  // kept busy all the same, and by the time those are out the receiver's posting may be here.
  if (!posting && t_->postsReceives_ && h.bytes >= t_->opts_.zeroCopyBytes &&
      inFlight_.load(std::memory_order_acquire) >= RdmaTransport::kWritesAheadOfPostings)
    return false;
  const uint32_t direct = posting != nullptr;
  memcpy(stage + RdmaTransport::kDirectMarkAt, &direct, sizeof direct);
  void* desc = t_->staging_.region->desc();
  RdmaGather header{stage, RdmaTransport::kHeaderBytes, desc}, payload{};
  const RdmaRegion* lent = nullptr;
  if (sent && !t_->copyOnly_ && h.bytes >= t_->opts_.zeroCopyBytes && h.bytes &&
      t_->cache_->acquire(data.ptr, h.bytes, &lent).ok()) {
    payload = {data.ptr, h.bytes, lent->desc()};
  } else {
    memcpy(stage + RdmaTransport::kHeaderBytes, data.ptr, h.bytes);
    payload = {stage + RdmaTransport::kHeaderBytes, h.bytes, desc};
  }
  const int writes = posting ? 2 : 1;
  postedSeq_[size_t(slot)] = seq;
  lentRegion_[size_t(slot)].store(lent, std::memory_order_release);
  pending_[size_t(slot)].store(uint8_t(writes), std::memory_order_release);
  busy_[size_t(slot)].store(1, std::memory_order_release);
  inFlight_.fetch_add(writes, std::memory_order_acq_rel);
  send_.before();
  std::string error;
  const int lane = int(seq % uint64_t(t_->opts_.lanes));
  const RdmaTarget fifo{remote_.fifoAddr + uint64_t(slot) * slotBytes, remote_.fifoKey};
  const int64_t imm = encodeImm(ImmKind::kData, t_->rank_, uint32_t(slot));
  void* context = writeContext(RdmaWriteKind::kData, peer_, slot);
  PostResult r;
  if (posting) {
    r = t_->nic_->write(peer_, lane, &payload, 1, {posting->addr, posting->key}, kNoImmediate,
                        writeContext(RdmaWriteKind::kPayload, peer_, slot), &error);
    if (r == PostResult::kPosted &&
        !postHeaderAfterPayload(lane, header, fifo, imm, context, &error)) {
      // The payload is on its way and ends by itself; the header never left.
      send_.notPosted();
      inFlight_.fetch_sub(1, std::memory_order_acq_rel);
      settle(slot);
      t_->raise(Status::SystemError(std::string(t_->name_) + ": rank " + std::to_string(t_->rank_) +
                                    " could not post a message to rank " + std::to_string(peer_) +
                                    ": " + error));
      return false;
    }
  } else if (payload.addr == stage + RdmaTransport::kHeaderBytes) {
    header.bytes += h.bytes;  // staged right behind the header: one piece
    r = t_->nic_->write(peer_, lane, &header, 1, fifo, imm, context, &error);
  } else {
    const RdmaGather gather[2] = {header, payload};
    r = t_->nic_->write(peer_, lane, gather, 2, fifo, imm, context, &error);
  }
  if (r != PostResult::kPosted) {
    send_.notPosted();
    inFlight_.fetch_sub(writes, std::memory_order_acq_rel);
    pending_[size_t(slot)].store(0, std::memory_order_release);
    busy_[size_t(slot)].store(0, std::memory_order_release);
    if (lent) t_->cache_->release(lent);
    if (r == PostResult::kFailed)
      t_->raise(Status::SystemError(std::string(t_->name_) + ": rank " + std::to_string(t_->rank_) +
                                    " could not post a message to rank " + std::to_string(peer_) +
                                    ": " + error));
    else
      t_->nic_->interruptWait();  // the queue is full: let the progress thread drain it
    return false;
  }
  send_.posted();
  if (sent) sent->ticket = lent ? seq + 1 : 0;
  if (lent) t_->zeroCopyWrites_.fetch_add(1, std::memory_order_relaxed);
  if (posting) t_->directWrites_.fetch_add(1, std::memory_order_relaxed);
  return true;
}

bool RdmaConnection::postHeaderAfterPayload(int lane, const RdmaGather& header, RdmaTarget fifo,
                                            int64_t imm, void* context, std::string* error) {
  // Its payload is posted already, so the header cannot wait for a later call: it waits out a
  // full queue here (the progress thread drains it), within the communicator's deadline.
  const Deadline deadline = Deadline::after(t_->opts_.timeoutSec);
  for (;;) {
    const PostResult r = t_->nic_->write(peer_, lane, &header, 1, fifo, imm, context, error);
    if (r == PostResult::kPosted) return true;
    if (r == PostResult::kFailed) return false;
    if (deadline.expired()) {
      *error = "the provider's send queue stayed full for " + std::to_string(t_->opts_.timeoutSec) +
               " s";
      return false;
    }
    t_->nic_->interruptWait();
    sched_yield();
  }
}

bool RdmaConnection::test(const Completion& c) const {
  if (c.finished()) return true;
  const uint64_t seq = c.ticket - 1;
  return doneSeq_[size_t(seq % uint64_t(slots_))].load(std::memory_order_acquire) >= int64_t(seq);
}

void RdmaConnection::written(int slot) {
  if (slot < 0 || slot >= slots_) return;
  settle(slot);
  inFlight_.fetch_sub(1, std::memory_order_acq_rel);
}

void RdmaConnection::settle(int slot) {
  if (pending_[size_t(slot)].fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  // The last of the message's writes: its memory is free, then its slot.
  if (const RdmaRegion* lent = lentRegion_[size_t(slot)].exchange(nullptr))
    t_->cache_->release(lent);
  doneSeq_[size_t(slot)].store(int64_t(postedSeq_[size_t(slot)]), std::memory_order_release);
  busy_[size_t(slot)].store(0, std::memory_order_release);
}

bool RdmaConnection::postingLanded(uint32_t slot) {
  if (slot >= uint32_t(slots_)) return false;
  // The write landed whole before its immediate data came: the posting can be read.
  postingSeen_[slot].store(postings_[slot].seqPlusOne, std::memory_order_release);
  return true;
}

const WireHeader* RdmaConnection::peek(const void** payload) {
  const int slot = receive_.ready();
  if (slot < 0) return nullptr;
  char* at = fifo_ + size_t(slot) * t_->slotBytes();
  auto* h = reinterpret_cast<const WireHeader*>(at);
  if (h->bytes > t_->opts_.chunkBytes) {
    t_->raise(Status::RemoteError(std::string(t_->name_) + ": rank " + std::to_string(peer_) +
                                  " wrote a message of " + std::to_string(h->bytes) +
                                  " bytes, more than the " + std::to_string(t_->opts_.chunkBytes) +
                                  "-byte chunk every rank agreed on"));
    return nullptr;
  }
  *payload = at + RdmaTransport::kHeaderBytes;
  uint32_t direct;
  memcpy(&direct, at + RdmaTransport::kDirectMarkAt, sizeof direct);
  if (direct) {
    const Posted& p = posted_[size_t(slot)];
    if (p.seqPlusOne != receive_.consumed() + 1 || p.bytes != h->bytes) {
      t_->raise(Status::RemoteError(std::string(t_->name_) + ": rank " + std::to_string(peer_) +
                                    " wrote a payload of " + std::to_string(h->bytes) +
                                    " bytes to a destination rank " + std::to_string(t_->rank_) +
                                    " had not posted for it; a peer broke the protocol"));
      return nullptr;
    }
    *payload = p.where;
  }
  return h;
}

void RdmaConnection::release() {
  dropPosting(int(receive_.consumed() % uint64_t(receive_.slots())), false);
  receive_.release();
  t_->flushCredits(*this);
}

uint64_t RdmaConnection::receiveWindow() const {
  return t_->postsReceives_ ? uint64_t(receive_.slots()) : 0;
}

bool RdmaConnection::postReceive(uint64_t ahead, MemRef where, size_t bytes, bool) {
  // Below the zero-copy size the copy out costs less than the posting; ahead of the window the
  // slot is still another message's.
  if (!t_->postsReceives_ || where.kind != MemoryKind::Host || bytes < t_->opts_.zeroCopyBytes ||
      bytes > t_->opts_.chunkBytes || ahead >= uint64_t(receive_.slots()))
    return false;
  const uint64_t seq = receive_.consumed() + ahead;
  const int slot = int(seq % uint64_t(receive_.slots()));
  if (posted_[size_t(slot)].region || postingOut_[size_t(slot)].load(std::memory_order_acquire))
    return false;
  const RdmaRegion* region = nullptr;
  if (!t_->cache_->acquire(where.ptr, bytes, &region).ok()) return false;
  RdmaPosting& source = postingSources_[slot];
  source = {seq + 1, region->remoteAddress(where.ptr), region->key(), bytes};
  postingOut_[size_t(slot)].store(1, std::memory_order_release);
  const RdmaGather g{&source, sizeof source, t_->postingSources_.region->desc()};
  const RdmaTarget target{remote_.postAddr + uint64_t(slot) * sizeof(RdmaPosting), remote_.postKey};
  if (!t_->postControl(peer_, g, target, encodeImm(ImmKind::kPosted, t_->rank_, uint32_t(slot)),
                       writeContext(RdmaWriteKind::kPosting, peer_, slot))) {
    postingOut_[size_t(slot)].store(0, std::memory_order_release);
    t_->cache_->release(region);
    return false;
  }
  posted_[size_t(slot)] = {seq + 1, where.ptr, bytes, region};
  return true;
}

void RdmaConnection::dropPosting(int slot, bool revoke) {
  Posted& p = posted_[size_t(slot)];
  if (!p.region) return;
  if (revoke)
    t_->cache_->revoke(p.region);
  else
    t_->cache_->release(p.region);
  p = Posted{};
}

void RdmaConnection::reclaimLent() {
  // Writes cannot be called back once posted; they end, well or badly, within the provider's
  // own timeouts. Wait for those out of the caller's memory, up to a bound.
  const Deadline deadline = Deadline::after(t_->opts_.timeoutSec < 10 ? t_->opts_.timeoutSec : 10);
  for (;;) {
    bool lentOut = false;
    for (int s = 0; s < slots_; ++s)
      lentOut |= lentRegion_[size_t(s)].load(std::memory_order_acquire) != nullptr;
    if (!lentOut || deadline.expired()) break;
    usleep(200);
  }
  // Destinations this rank posted: the peer may still write into them, so their registrations
  // go, and with them its access.
  for (int s = 0; s < receive_.slots(); ++s) dropPosting(s, true);
}

}  // namespace chorus
