#include "transport/shm/shm_transport.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>

#include "common/log.h"
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
  }

  // Copies into the peer's slot at once: *sent stays finished.
  bool postSend(const WireHeader& h, MemRef data, Completion*) override {
    if (head_ - peerTail_ >= slots_) {
      peerTail_ = out_->tail.load(std::memory_order_acquire);
      if (head_ - peerTail_ >= slots_) return false;
    }
    char* slot = outSlots_ + headSlot_ * stride_;
    auto* sh = reinterpret_cast<SlotHeader*>(slot);
    // The payload first, the header line last: the reader polls that line, and each of its
    // looks takes the line away from us.
    if (h.bytes) memcpy(payloadOf(sh, h.bytes), data.ptr, h.bytes);
    sh->wire = h;
    ++head_;
    if (++headSlot_ == slots_) headSlot_ = 0;
    sh->seq.store(head_, std::memory_order_seq_cst);
    ringPeer();
    return true;
  }

  const WireHeader* peek(const void** payload) override {
    auto* sh = reinterpret_cast<SlotHeader*>(inSlots_ + tailSlot_ * stride_);
    if (sh->seq.load(std::memory_order_acquire) != tail_ + 1) return nullptr;
    *payload = payloadOf(sh, sh->wire.bytes);
    return &sh->wire;
  }

  void release() override {
    ++tail_;
    if (++tailSlot_ == slots_) tailSlot_ = 0;
    in_->tail.store(tail_, std::memory_order_seq_cst);
    ringPeer();  // the peer may be asleep waiting for this credit
  }

  // One-sided, by cross-memory attach, where the probe at set-up found it allowed.
  void enableOneSided(int peerRank, pid_t peerPid) { peerRank_ = peerRank, peerPid_ = peerPid; }
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
  // Our store before this was seq_cst: the peer either sees it when it re-checks after
  // raising its doorbell's `sleeping`, or we see `sleeping` and wake it.
  void ringPeer() { peerBell_->ringAfterSeqCstStore(); }

  static char* payloadOf(SlotHeader* sh, uint32_t bytes) {
    return bytes <= kInlineBytes ? sh->inlinePayload : reinterpret_cast<char*>(sh + 1);
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

  int peerRank_ = -1;
  pid_t peerPid_ = 0;  // 0: no one-sided access to the peer

  uint64_t slots_, stride_;
  RingControl* out_;
  RingControl* in_;
  char* outSlots_;
  char* inSlots_;
  DoorbellWord* peerBell_;
  uint64_t head_ = 0, peerTail_ = 0, headSlot_ = 0;  // writer side: messages posted, ...
  uint64_t tail_ = 0, tailSlot_ = 0;                 // reader side: messages taken, ...
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
  struct MapReport {
    uint64_t probeAddr;
    int32_t pid;
    uint8_t ok;
  } mine{reinterpret_cast<uint64_t>(&probeWord_), int32_t(getpid()), uint8_t(st.ok())}, none{};
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
    int oneSided = 0;
    for (int r = 0; r < size; ++r) {
      if (localOf_[r] < 0 || r == rank_) continue;
      conns_[r] = std::make_unique<ShmConnection>(base_, localIndex_, localOf_[r]);
      if (crossMemoryWorks(reports[r].pid, reports[r].probeAddr, kShmMagic)) {
        conns_[r]->enableOneSided(r, reports[r].pid);
        ++oneSided;
      }
    }
    LOG_INFO(kLogShm, "rank %d: one-sided access (cross-memory attach) to %d of %d local peers",
             rank_, oneSided, localSize - 1);
  }
  LOG_INFO(kLogShm, "rank %d: shm segment of %zu bytes, %d local ranks, %d slots of %zu bytes",
           rank_, bytes_, localSize, opts_.slots, opts_.slotBytes);
  return Status::Ok();
}

ShmTransport::~ShmTransport() {
  if (doorbell_) doorbell_->placeIn(nullptr);  // before its word is unmapped
  conns_.clear();
  if (base_) munmap(base_, bytes_);
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
