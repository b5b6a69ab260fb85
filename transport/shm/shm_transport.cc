#include "transport/shm/shm_transport.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "chorus/memory.h"
#include "common/clock.h"
#include "common/log.h"
#include "core/op_desc.h"
#include "engine/shared_host.h"
#include "transport/futex.h"
#include "transport/shm/cross_memory.h"
#include "transport/shm/segment.h"
#include "transport/shm/segment_file.h"

namespace chorus {

namespace {
SegmentLayout layoutOf(const void* base) {
  auto* h = static_cast<const SegmentHeader*>(base);
  return {h->localSize, h->slotBytes, h->slots};
}

template <typename T>
T* at(void* base, size_t offset) {
  return reinterpret_cast<T*>(static_cast<char*>(base) + offset);
}

}  // namespace

// One direction of traffic each way between this rank and one peer. The writer caches the
// reader's tail, so a busy ring touches the reader's cache line only when its cached view says
// the ring is full; the reader polls the next slot's sequence word, nothing else.
//
// Lending (segment.h, LendNote): where the peer can read this process, a message whose sender
// may keep its memory lent (postSend with a Completion) and whose receiver has posted a
// destination for it may go out as a reference to the payload, which the receiver copies to
// the destination and marks taken:
// - a collective's payload of at least kMappedLendBytes in memory from allocateShared, where
//   the peer maps this process's memory files: copied out of its view of them;
// - an allgather block of at least `lendBytes` in any memory: read by cross-memory attach.
// A rank that waits takes every lent message that has arrived (takeLent), so a sender never
// waits on the receiver's steps: lending cannot deadlock where copying would not.
class ShmTransport::ShmConnection final : public Connection {
 public:
  ShmConnection(void* base, int me, int peer) {
    SegmentLayout L = layoutOf(base);
    slots_ = L.slots;
    stride_ = L.slotStride();
    out_ = at<RingControl>(base, L.ringsOffset()) + me * L.localSize + peer;
    in_ = at<RingControl>(base, L.ringsOffset()) + peer * L.localSize + me;
    outSlots_ = at<char>(base, L.ringSlotsOffset(me, peer));
    inSlots_ = at<char>(base, L.ringSlotsOffset(peer, me));
    peerBell_ = at<DoorbellWord>(base, L.doorbellsOffset()) + peer;
    arrivals_.resize(slots_);
  }

  // Copies into the peer's slot at once (*sent stays finished), or lends the payload.
  bool postSend(const WireHeader& h, MemRef data, Completion* sent) override {
    if (head_ - peerTail_ >= slots_) {
      peerTail_ = out_->tail.load(std::memory_order_acquire);
      if (head_ - peerTail_ >= slots_) return false;
    }
    char* slot = outSlots_ + headSlot_ * stride_;
    auto* sh = reinterpret_cast<SlotHeader*>(slot);
    // The payload first, the header line last: the reader polls that line, and each of its
    // looks takes the line away from us.
    if (h.bytes > kInlineBytes) {
      LendNote* note = noteOf(sh);
      if (sent && lend(h, data, note)) {
        sent->ticket = head_ + 1;  // this message's sequence word: test() finds its slot
      } else {
        memcpy(payloadOf(sh, h.bytes), data.ptr, h.bytes);
        note->state.store(kPayloadInSlot, std::memory_order_relaxed);
      }
    } else if (h.bytes) {
      memcpy(sh->inlinePayload, data.ptr, h.bytes);
    }
    sh->wire = h;
    ++head_;
    if (++headSlot_ == slots_) headSlot_ = 0;
    sh->seq.store(head_, std::memory_order_seq_cst);
    ringPeer();
    return true;
  }

  // A lent message is back once the receiver took it, or released its slot.
  bool test(const Completion& c) const override {
    if (c.finished() || out_->tail.load(std::memory_order_acquire) >= c.ticket) return true;
    const auto* sh =
        reinterpret_cast<const SlotHeader*>(outSlots_ + (c.ticket - 1) % slots_ * stride_);
    return noteOf(sh)->state.load(std::memory_order_acquire) == kTaken;
  }

  const WireHeader* peek(const void** payload) override {
    auto* sh = reinterpret_cast<SlotHeader*>(inSlots_ + tailSlot_ * stride_);
    if (sh->seq.load(std::memory_order_acquire) != tail_ + 1) return nullptr;
    if (sh->wire.bytes <= kInlineBytes) {
      *payload = sh->inlinePayload;
      return &sh->wire;
    }
    Arrival& a = arrivals_[tailSlot_];
    if (a.landedMsg != tail_ + 1 && !land(sh, tailSlot_, tail_ + 1)) return nullptr;
    *payload = a.landed;
    return &sh->wire;
  }

  void release() override {
    ++tail_;
    if (++tailSlot_ == slots_) tailSlot_ = 0;
    in_->tail.store(tail_, std::memory_order_seq_cst);
    ringPeer();  // the peer may be asleep waiting for this credit
  }

  // Posted receives land lent payloads in place; a copied one still comes through its slot.
  uint64_t receiveWindow() const override { return peerPid_ ? slots_ : 0; }
  // Declined for a call that streams its output: the kernel's copy would go through the caches.
  bool postReceive(uint64_t ahead, MemRef where, size_t bytes, bool streamed) override {
    // Inline payloads are never lent: posting one would only publish postedUpTo for nothing.
    if (streamed || lendBytes_ == SIZE_MAX || bytes <= kInlineBytes) return false;
    Arrival& a = arrivals_[(tailSlot_ + ahead) % slots_];
    a.postedMsg = tail_ + 1 + ahead;
    a.where = where.ptr;
    a.bytes = bytes;
    if (a.postedMsg > postedUpTo_) {
      postedUpTo_ = a.postedMsg;
      in_->postedUpTo.store(postedUpTo_, std::memory_order_release);
    }
    return true;
  }

  // Takes every lent message that has arrived into its slot, so the peer has its memory back.
  void takeLent() override {
    for (uint64_t k = 0; k < slots_; ++k) {
      const uint64_t msg = tail_ + 1 + k, slot = (tailSlot_ + k) % slots_;
      auto* sh = reinterpret_cast<SlotHeader*>(inSlots_ + slot * stride_);
      if (sh->seq.load(std::memory_order_acquire) != msg) return;
      if (sh->wire.bytes > kInlineBytes && arrivals_[slot].landedMsg != msg && !land(sh, slot, msg))
        return;
    }
  }

  // After a failure: lent payloads not yet taken are revoked (one being read is waited for, a
  // moment), and posted destinations are forgotten.
  void reclaimLent() override {
    for (uint64_t msg = out_->tail.load(std::memory_order_acquire) + 1; msg <= head_; ++msg) {
      auto* sh = reinterpret_cast<SlotHeader*>(outSlots_ + (msg - 1) % slots_ * stride_);
      if (sh->wire.bytes <= kInlineBytes) continue;
      std::atomic<uint32_t>& state = noteOf(sh)->state;
      uint32_t expect = kLent;
      if (state.compare_exchange_strong(expect, kRevoked)) continue;
      // Taking: the peer is copying right now. A peer that died mid-copy reads nothing more.
      for (Deadline d = Deadline::after(2); state.load() == kTaking && !d.expired();) sched_yield();
    }
    for (Arrival& a : arrivals_) a.postedMsg = 0;
  }

  // One-sided, by cross-memory attach, where the probe at set-up found it allowed; then this
  // rank also takes what the peer lends, and tells it so. `maps`: it can also map the peer's
  // memory files, so the peer may lend from them.
  void enableOneSided(int peerRank, pid_t peerPid, bool maps) {
    peerRank_ = peerRank, peerPid_ = peerPid;
    if (maps) {
      peerBlocks_ = std::make_unique<PeerBlocks>(peerPid, peerName());
      in_->readerMapsShared.store(1, std::memory_order_release);
    }
    in_->readerTakesLent.store(1, std::memory_order_release);
  }
  // Lends the payloads of allgathers whose blocks are at least `bytes` (0: never) once the
  // peer says it takes them; and, unless `bytes` is 0, collectives' payloads in shared memory.
  void setLendBytes(size_t bytes) { lendBytes_ = bytes ? bytes : SIZE_MAX; }
  bool offersOneSided() const override { return peerPid_ != 0; }
  Status put(MemRef src, MemRef remote, size_t bytes, Completion*) override {
    CHORUS_RETURN_IF_ERROR(checkRemote(remote, "put"));
    return crossMemoryWrite(peerPid_, remote.ptr, src.ptr, bytes, peerName());
  }
  Status get(MemRef dst, MemRef remote, size_t bytes, Completion*) override {
    CHORUS_RETURN_IF_ERROR(checkRemote(remote, "get"));
    return crossMemoryRead(peerPid_, dst.ptr, remote.ptr, bytes, peerName());
  }

 private:
  // What this rank knows of the message in each incoming slot.
  struct Arrival {
    uint64_t postedMsg = 0;  // the message whose payload should land at `where` (postReceive)
    char* where = nullptr;
    size_t bytes = 0;
    uint64_t landedMsg = 0;  // the message whose payload is at `landed`
    const char* landed = nullptr;
  };

  // Finds where message `msg` in `slot` is to be read from: its slot, or, lent, wherever it
  // is taken to (its posted destination; its slot where the lengths disagree). False while it
  // cannot be taken: revoked by a sender that failed, or a read that failed (the sender died);
  // the run's deadline or the peer's death ends the wait.
  bool land(SlotHeader* sh, uint64_t slot, uint64_t msg) {
    Arrival& a = arrivals_[slot];
    const uint32_t bytes = sh->wire.bytes;
    LendNote* note = noteOf(sh);
    char* to = payloadOf(sh, bytes);
    if (note->state.load(std::memory_order_acquire) != kPayloadInSlot) {
      if (a.postedMsg == msg && a.bytes == bytes) to = a.where;
      uint32_t expect = kLent;
      if (!note->state.compare_exchange_strong(expect, kTaking)) {
        warnOnce("rank " + std::to_string(peerRank_) + " revoked a message it had lent");
        return false;
      }
      const char* from = nullptr;
      Status st = note->fd >= 0
                      ? mapLent(*note, &from)
                      : crossMemoryRead(peerPid_, to, reinterpret_cast<const char*>(note->at),
                                        bytes, peerName());
      if (!st.ok()) {
        note->state.store(kRevoked);
        warnOnce(st.toString());
        return false;
      }
      if (from) memcpy(to, from, bytes);
      note->state.store(kTaken, std::memory_order_seq_cst);
      ringPeer();  // its sender may sleep until its memory is back
    }
    a.landedMsg = msg;
    a.landed = to;
    return true;
  }
  // Where a payload lent from the peer's memory file is in this rank's view of it.
  Status mapLent(const LendNote& note, const char** from) {
    if (!peerBlocks_ || note.at > note.blockBytes)
      return Status::RemoteError("shm: " + peerName() +
                                 " lent a payload from a memory file this rank cannot map");
    const char* base = nullptr;
    CHORUS_RETURN_IF_ERROR(peerBlocks_->map(note.fd, note.blockId, note.blockBytes, &base));
    *from = base + note.at;
    return Status::Ok();
  }
  void warnOnce(const std::string& what) {
    if (!warned_) LOG_WARN(kLogShm, "shm: %s", what.c_str());
    warned_ = true;
  }

  // Our store before this was seq_cst: the peer either sees it when it re-checks after
  // raising its doorbell's `sleeping`, or we see `sleeping` and wake it.
  void ringPeer() { peerBell_->ringAfterSeqCstStore(); }

  static char* payloadOf(SlotHeader* sh, uint32_t bytes) {
    return bytes <= kInlineBytes ? sh->inlinePayload : reinterpret_cast<char*>(sh + 1);
  }
  static LendNote* noteOf(SlotHeader* sh) { return reinterpret_cast<LendNote*>(sh->inlinePayload); }
  static const LendNote* noteOf(const SlotHeader* sh) {
    return reinterpret_cast<const LendNote*>(sh->inlinePayload);
  }
  std::string peerName() const { return "rank " + std::to_string(peerRank_); }
  Status checkRemote(const MemRef& remote, const char* what) const {
    if (!peerPid_)
      return Status::Unsupported(std::string("shm: one-sided ") + what + " to " + peerName() +
                                 ": the kernel refused cross-memory access to its process at "
                                 "set-up (Yama ptrace_scope, or a seccomp filter)");
    if (remote.kind != MemoryKind::Registered || remote.key != uint32_t(peerPid_))
      return Status::InvalidArgument(std::string("shm: one-sided ") + what + " to " + peerName() +
                                     ": the remote buffer was not registered by that rank's shm "
                                     "transport (ShmTransport::registerMemory)");
    return Status::Ok();
  }

  // Fills `note` where the payload goes out lent (the class comment says when).
  bool lend(const WireHeader& h, MemRef data, LendNote* note) {
    if (out_->postedUpTo.load(std::memory_order_acquire) <= head_) return false;  // not posted
    SharedBlock block;
    if (lendsMapped(h) && SharedHostMemory::get().find(data.ptr, h.bytes, &block)) {
      note->fd = block.fd;
      note->at = uint64_t(data.ptr - block.base);
      note->blockId = block.id;
      note->blockBytes = block.bytes;
    } else if (lendsFor(h) && h.count * dataTypeSize(DataType(h.dtype)) >= lendBytes_ && lends()) {
      note->fd = -1;
      note->at = reinterpret_cast<uint64_t>(data.ptr);
    } else {
      return false;
    }
    note->state.store(kLent, std::memory_order_relaxed);
    return true;
  }

  // Lending pays where every rank sends and receives at once, as in an allgather: one copy
  // instead of two on each core. Where a sender would otherwise idle, its copy into the slot
  // runs beside the receiver's copy out, on the other core, and beats one cross-memory read
  // (2-rank broadcast in place, 256 KiB-16 MiB: 1.1-1.7x slower lent; docs/performance.md).
  // Point-to-point sends keep copying, so a send returns once its payload is in the slots.
  static bool lendsFor(const WireHeader& h) { return h.coll == uint8_t(Collective::AllGather); }
  // A payload the peer copies out of its view of this rank's memory files costs one memcpy
  // instead of two, so every collective lends them; point-to-point sends stay eager. (Reducing
  // straight out of that view, unposted, was slower than out of a slot here: 2-rank
  // reduce_scatter 1.2-1.5x the time, docs/performance.md.)
  bool lendsMapped(const WireHeader& h) {
    if (h.bytes < kMappedLendBytes || lendBytes_ == SIZE_MAX ||
        h.coll == uint8_t(Collective::Send) || h.coll == uint8_t(Collective::Recv))
      return false;
    if (!peerMaps_) peerMaps_ = out_->readerMapsShared.load(std::memory_order_acquire);
    return peerMaps_;
  }
  static constexpr size_t kMappedLendBytes = 16 << 10;

  // Whether the peer takes lent payloads; asked until it says yes (it does so at set-up, which
  // it may finish after this rank), then remembered.
  bool lends() {
    if (!peerTakesLent_) peerTakesLent_ = out_->readerTakesLent.load(std::memory_order_acquire);
    return peerTakesLent_;
  }

  int peerRank_ = -1;
  pid_t peerPid_ = 0;            // 0: no one-sided access to the peer
  size_t lendBytes_ = SIZE_MAX;  // allgather blocks this large or larger are lent (setLendBytes)
  bool peerTakesLent_ = false;
  bool peerMaps_ = false;                   // the peer maps this rank's memory files
  std::unique_ptr<PeerBlocks> peerBlocks_;  // reader side: the peer's memory files, mapped
  uint64_t postedUpTo_ = 0;  // reader side: the last message posted (RingControl::postedUpTo)
  bool warned_ = false;

  uint64_t slots_, stride_;
  RingControl* out_;
  RingControl* in_;
  char* outSlots_;
  char* inSlots_;
  DoorbellWord* peerBell_;
  uint64_t head_ = 0, peerTail_ = 0, headSlot_ = 0;  // writer side: messages posted, ...
  uint64_t tail_ = 0, tailSlot_ = 0;                 // reader side: messages taken, ...
  std::vector<Arrival> arrivals_;                    // reader side, by slot
};

Status ShmTransport::create(Bootstrap* bs, const std::vector<int>& hostOf, const ShmOptions& opts,
                            Doorbell* doorbell, Deadline deadline,
                            std::unique_ptr<ShmTransport>* out) {
  if (opts.slotBytes == 0 || opts.slotBytes % kCacheLine || opts.slots < 1)
    return Status::InvalidArgument(
        "shm: slot size must be a positive multiple of 64 bytes and "
        "there must be at least one slot (CHORUS_SHM_SLOT_BYTES, "
        "CHORUS_SHM_SLOTS)");
  std::unique_ptr<ShmTransport> t(new ShmTransport);
  t->opts_ = opts;
  CHORUS_RETURN_IF_ERROR(t->attach(bs, hostOf, deadline));
  if (t->base_) {
    // Peers ring our word in the segment: the doorbell moves there.
    t->doorbell_ = doorbell;
    doorbell->placeIn(at<DoorbellWord>(t->base_, sizeof(SegmentHeader)) + t->localIndex_);
  }
  *out = std::move(t);
  return Status::Ok();
}

Status ShmTransport::attach(Bootstrap* bs, const std::vector<int>& hostOf, Deadline deadline) {
  rank_ = bs->rank();
  const int size = bs->size();
  localOf_.assign(size, -1);
  int localSize = 0, leader = -1;
  for (int r = 0; r < size; ++r) {
    if (hostOf[r] != hostOf[rank_]) continue;
    if (leader < 0) leader = r;
    if (r == rank_) localIndex_ = localSize;
    localOf_[r] = localSize++;
  }
  SegmentLayout L{uint32_t(localSize), uint32_t(opts_.slotBytes), uint32_t(opts_.slots)};
  bytes_ = L.totalBytes();

  // The leader draws the name and every rank learns it before anything exists in /dev/shm;
  // then the leader creates the segment. Each local rank unlinks the name when this returns,
  // however it returns (shm_unlink is idempotent): survivors of a leader that died after
  // creating it remove it too, which they could not if the name came after the file.
  const bool shared = localSize > 1;
  char name[kSegmentNameBytes] = {};
  if (rank_ == leader && shared) snprintf(name, sizeof name, "%s", newSegmentName().c_str());
  std::vector<char> names(size * kSegmentNameBytes);
  Status st = bs->allgather(name, kSegmentNameBytes, names.data(), deadline);
  const char* myName = &names[leader * kSegmentNameBytes];
  struct UnlinkOnReturn {
    const char* name;
    ~UnlinkOnReturn() {
      if (name[0]) shm_unlink(name);
    }
  } unlinkOnReturn{st.ok() && shared ? myName : ""};

  Status local;
  if (st.ok() && rank_ == leader && shared) local = createSegmentFile(myName, bytes_);
  const uint8_t created = st.ok() && local.ok();
  std::vector<uint8_t> createdBy(size);
  Status told = bs->allgather(&created, 1, createdBy.data(), deadline);
  if (st.ok()) st = told;
  if (st.ok() && shared) {
    if (!createdBy[leader])
      st = local.ok() ? Status::RemoteError("shm: rank " + std::to_string(leader) +
                                            " could not create the host's segment")
                      : local;
    else
      st = mapSegmentFile(myName, bytes_, &base_);
  }
  if (st.ok() && base_ && rank_ == leader) {
    auto* h = static_cast<SegmentHeader*>(base_);
    h->totalBytes = bytes_;
    h->localSize = L.localSize;
    h->slotBytes = L.slotBytes;
    h->slots = L.slots;
    h->magic = kShmMagic;  // published to the others by the exchange that follows
  }
  // Everyone reports whether it mapped, and where a peer can probe it for cross-memory access;
  // after this exchange nobody needs the name any more.
  probeWord_ = kShmMagic;
  // And a memory file of one page holding the same word, for peers to test mapping ours.
  int32_t probeFd = -1;
  SharedBlock probe;
  if (st.ok() && shared && allocateShared(sizeof probeWord_, &probeBlock_).ok() &&
      SharedHostMemory::get().find(probeBlock_, sizeof probeWord_, &probe)) {
    memcpy(probeBlock_, &probeWord_, sizeof probeWord_);
    probeFd = probe.fd;
  }
  struct MapReport {
    uint64_t probeAddr;
    int32_t pid;
    int32_t probeFd;
    uint8_t ok;
  } mine{reinterpret_cast<uint64_t>(&probeWord_), int32_t(getpid()), probeFd, uint8_t(st.ok())},
      none{};
  std::vector<MapReport> reports(size, none);
  Status gathered = bs->allgather(&mine, sizeof mine, reports.data(), deadline);
  CHORUS_RETURN_IF_ERROR(st);
  CHORUS_RETURN_IF_ERROR(gathered);
  for (int r = 0; r < size; ++r)
    if (!reports[r].ok && localOf_[r] >= 0)
      return Status::RemoteError("shm: rank " + std::to_string(r) +
                                 " could not map the host's shared-memory segment");
  if (base_) {
    // The leader wrote the header before the exchange above, which orders it for us.
    if (static_cast<SegmentHeader*>(base_)->magic != kShmMagic)
      return Status::Internal("shm: segment header not initialised");
    conns_.resize(size);
    int oneSided = 0, mapped = 0;
    // A lender waits for its receiver to run; with more local ranks than CPUs that costs a
    // context switch (4 ranks on 2 cores: allreduce of 256 KiB-2 MiB 1.2x slower lent).
    const bool oversubscribed = localSize > std::max(1L, sysconf(_SC_NPROCESSORS_ONLN));
    const size_t lendBytes = oversubscribed ? 0 : opts_.lendBytes;
    for (int r = 0; r < size; ++r) {
      if (localOf_[r] < 0 || r == rank_) continue;
      conns_[r] = std::make_unique<ShmConnection>(base_, localIndex_, localOf_[r]);
      conns_[r]->setLendBytes(lendBytes);
      if (crossMemoryWorks(reports[r].pid, reports[r].probeAddr, kShmMagic)) {
        const bool maps = reports[r].probeFd >= 0 &&
                          peerBlocksWork(reports[r].pid, reports[r].probeFd, kShmMagic);
        conns_[r]->enableOneSided(r, reports[r].pid, maps);
        ++oneSided;
        mapped += maps;
      }
    }
    LOG_INFO(kLogShm,
             "rank %d: one-sided access (cross-memory attach) to %d of %d local peers, whose "
             "memory files %d of them map; allgather blocks of %zu bytes or more lent to those "
             "that can read this rank%s",
             rank_, oneSided, localSize - 1, mapped, lendBytes,
             lendBytes ? "" : " (none: CHORUS_SHM_LEND_BYTES=0, or more local ranks than CPUs)");
  }
  LOG_INFO(kLogShm, "rank %d: shm segment of %zu bytes, %d local ranks, %d slots of %zu bytes",
           rank_, bytes_, localSize, opts_.slots, opts_.slotBytes);
  return Status::Ok();
}

ShmTransport::~ShmTransport() {
  if (doorbell_) doorbell_->placeIn(nullptr);  // before its word is unmapped
  conns_.clear();
  if (base_) munmap(base_, bytes_);
  (void)freeShared(probeBlock_);
}

Status ShmTransport::registerMemory(MemRef local, size_t, MemRef* remote) {
  if (local.kind != MemoryKind::Host)
    return Status::InvalidArgument(std::string("shm: cannot register ") +
                                   memoryKindName(local.kind) + " for one-sided access");
  // The kernel checks every access against the process's mappings, so the process id is all
  // a peer needs besides the address.
  *remote = MemRef{local.ptr, uint32_t(getpid()), -1, MemoryKind::Registered};
  return Status::Ok();
}

Connection* ShmTransport::connection(int peer) {
  if (peer < 0 || size_t(peer) >= conns_.size()) return nullptr;
  return conns_[peer].get();
}

}  // namespace chorus
