// The RDMA transport's data path (rdma_transport.h): the executor posts writes and takes what
// landed; the progress thread reports back through written() and the windows.
#include <unistd.h>

#include <cstring>

#include "common/clock.h"
#include "transport/rdma/rdma_transport.h"

namespace chorus {

void* writeContext(int kind, int peer, int slot);  // rdma_transport.cc

RdmaConnection::RdmaConnection(RdmaTransport* transport, int peer, int sendSlots, int receiveSlots)
    : t_(transport),
      peer_(peer),
      slots_(sendSlots),
      send_(sendSlots),
      receive_(receiveSlots),
      doneSeq_(new std::atomic<int64_t>[size_t(sendSlots)]),
      busy_(new std::atomic<uint8_t>[size_t(sendSlots)]),
      postedSeq_(new uint64_t[size_t(sendSlots)]()),
      lentRegion_(new std::atomic<const RdmaRegion*>[size_t(sendSlots)]) {
  for (int s = 0; s < sendSlots; ++s) {
    doneSeq_[size_t(s)].store(-1);
    busy_[size_t(s)].store(0);
    lentRegion_[size_t(s)].store(nullptr);
  }
}

bool RdmaConnection::postSend(const WireHeader& h, MemRef data, Completion* sent) {
  if (!send_.hasCredit()) return false;
  const uint64_t seq = send_.next();
  const int slot = send_.slotOf(seq);
  if (busy_[size_t(slot)].load(std::memory_order_acquire)) return false;
  const size_t slotBytes = t_->slotBytes();
  char* stage = staging_ + size_t(slot) * slotBytes;
  memcpy(stage, &h, sizeof h);
  void* desc = t_->staging_.region->desc();
  RdmaGather gather[2] = {{stage, RdmaTransport::kHeaderBytes, desc}, {}};
  int n = 1;
  const RdmaRegion* lent = nullptr;
  if (sent && !t_->copyOnly_ && h.bytes >= t_->opts_.zeroCopyBytes && h.bytes &&
      t_->cache_->acquire(data.ptr, h.bytes, &lent).ok()) {
    gather[1] = {data.ptr, h.bytes, lent->desc()};
    n = 2;
  } else {
    memcpy(stage + RdmaTransport::kHeaderBytes, data.ptr, h.bytes);
    gather[0].bytes += h.bytes;
  }
  postedSeq_[size_t(slot)] = seq;
  lentRegion_[size_t(slot)].store(lent, std::memory_order_release);
  busy_[size_t(slot)].store(1, std::memory_order_release);
  inFlight_.fetch_add(1, std::memory_order_acq_rel);
  send_.before();
  std::string error;
  const RdmaTarget target{remote_.fifoAddr + uint64_t(slot) * slotBytes, remote_.fifoKey};
  const PostResult r = t_->nic_->write(peer_, int(seq % uint64_t(t_->opts_.lanes)), gather, n,
                                       target, encodeImm(ImmKind::kData, t_->rank_, uint32_t(slot)),
                                       writeContext(1, peer_, slot), &error);
  if (r != PostResult::kPosted) {
    send_.notPosted();
    inFlight_.fetch_sub(1, std::memory_order_acq_rel);
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
  return true;
}

bool RdmaConnection::test(const Completion& c) const {
  if (c.finished()) return true;
  const uint64_t seq = c.ticket - 1;
  return doneSeq_[size_t(seq % uint64_t(slots_))].load(std::memory_order_acquire) >= int64_t(seq);
}

void RdmaConnection::written(int slot) {
  if (slot < 0 || slot >= slots_) return;
  if (const RdmaRegion* lent = lentRegion_[size_t(slot)].exchange(nullptr))
    t_->cache_->release(lent);
  doneSeq_[size_t(slot)].store(int64_t(postedSeq_[size_t(slot)]), std::memory_order_release);
  busy_[size_t(slot)].store(0, std::memory_order_release);
  inFlight_.fetch_sub(1, std::memory_order_acq_rel);
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
  return h;
}

void RdmaConnection::release() {
  receive_.release();
  t_->flushCredits(*this);
}

void RdmaConnection::reclaimLent() {
  // Writes cannot be called back once posted; they end, well or badly, within the provider's
  // own timeouts. Wait for those out of the caller's memory, up to a bound.
  const Deadline deadline = Deadline::after(t_->opts_.timeoutSec < 10 ? t_->opts_.timeoutSec : 10);
  for (;;) {
    bool lentOut = false;
    for (int s = 0; s < slots_; ++s)
      lentOut |= lentRegion_[size_t(s)].load(std::memory_order_acquire) != nullptr;
    if (!lentOut || deadline.expired()) return;
    usleep(200);
  }
}

}  // namespace chorus
