// Set-up, the progress thread and shutdown of the RDMA transport; the data path is in
// rdma_connection.cc.
#include "transport/rdma/rdma_transport.h"

#include <sched.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>

#include "common/clock.h"
#include "common/log.h"

namespace chorus {

namespace {

// What every rank publishes about itself for each rank q: where q writes its messages and its
// control words. Zero where q is not a peer.
struct RemoteRecord {
  uint64_t fifoAddr, fifoKey, ctrlAddr, ctrlKey, slots;
};

enum class WriteKind : uint64_t { kData = 1, kCredit = 2, kGoodbye = 3 };

}  // namespace

void* writeContext(int kind, int peer, int slot);

Status RdmaTransport::create(Bootstrap* bs, const std::vector<bool>& reach,
                             std::unique_ptr<RdmaNic> nic, const char* name,
                             const RdmaOptions& opts, RdmaHooks hooks, Deadline deadline,
                             std::unique_ptr<RdmaTransport>* out) {
  CHORUS_RETURN_IF_ERROR(opts.validate());
  std::unique_ptr<RdmaTransport> t(new RdmaTransport);
  t->name_ = name;
  t->opts_ = opts;
  t->hooks_ = std::move(hooks);
  t->rank_ = bs->rank();
  t->size_ = bs->size();
  t->nic_ = std::move(nic);
  t->conns_.resize(size_t(t->size_));
  for (int q = 0; q < t->size_; ++q)
    if (q != t->rank_ && q < int(reach.size()) && reach[size_t(q)]) t->peers_.push_back(q);
  if (t->size_ > kMaxImmRanks)
    return Status::Unsupported(std::string(name) + ": at most " + std::to_string(kMaxImmRanks) +
                               " ranks");
  if (!t->peers_.empty() && !t->nic_)
    return Status::Internal(std::string(name) + ": peers to reach but no NIC opened");
  Status local = t->peers_.empty() ? Status::Ok() : t->allocate();
  // Every rank takes part in the exchange, a failed one too, so that the others do not wait
  // for it until their deadline: it publishes nothing and fails after.
  std::vector<RdmaRemote> remotes;
  Status st = t->exchange(bs, deadline, &remotes);
  CHORUS_RETURN_IF_ERROR(local);
  CHORUS_RETURN_IF_ERROR(st);
  CHORUS_RETURN_IF_ERROR(t->connectPeers(remotes));
  if (!t->peers_.empty()) t->thread_ = std::thread([p = t.get()] { p->threadMain(); });
  *out = std::move(t);
  return Status::Ok();
}

Status RdmaTransport::allocateSpan(Span* s, size_t bytes, const char* what) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED)
    return Status::FromErrno(errno, std::string(name_) + ": allocating " + std::to_string(bytes) +
                                        " bytes for the " + what);
  s->base = static_cast<char*>(p);
  s->bytes = bytes;
  return nic_->registerMemory(p, bytes, &s->region)
      .withContext(std::string(name_) + " (" + nic_->describe() + "): the " + what);
}

Status RdmaTransport::allocate() {
  copyOnly_ = nic_->registrationPins() || nic_->maxGather() < 2;
  cache_ = std::make_unique<RegistrationCache>(
      [nic = nic_.get()](void* p, size_t bytes, std::unique_ptr<RdmaRegion>* r) {
        return nic->registerMemory(p, bytes, r);
      },
      64);
  receiveSlots_ = opts_.slotsFor(peers_.size(), slotBytes());
  const size_t ring = size_t(receiveSlots_) * slotBytes();
  CHORUS_RETURN_IF_ERROR(allocateSpan(&fifos_, ring * peers_.size(), "receive FIFOs"));
  CHORUS_RETURN_IF_ERROR(allocateSpan(&ctrl_, kCtrlBytes * size_t(size_), "control words"));
  return allocateSpan(&sources_, kCtrlBytes * size_t(size_), "control sources");
}

// After the exchange, which told each sender how deep its peer's FIFO is.
Status RdmaTransport::connectPeers(const std::vector<RdmaRemote>& remotes) {
  if (peers_.empty()) return Status::Ok();
  size_t staged = 0;
  for (int q : peers_) staged += size_t(remotes[size_t(q)].slots) * slotBytes();
  CHORUS_RETURN_IF_ERROR(allocateSpan(&staging_, staged, "staging rings"));
  char* stage = staging_.base;
  for (size_t i = 0; i < peers_.size(); ++i) {
    const RdmaRemote& r = remotes[size_t(peers_[i])];
    auto c = std::make_unique<RdmaConnection>(this, peers_[i], int(r.slots), receiveSlots_);
    c->remote_ = r;
    c->fifo_ = fifoOf(i);
    c->staging_ = stage;
    stage += size_t(r.slots) * slotBytes();
    conns_[size_t(peers_[i])] = std::move(c);
  }
  LOG_INFO(kLogNet,
           "rank %d: %s over %s to %zu peer(s): %d lane(s), %zu-byte chunks, %d slots per peer "
           "to receive, %s",
           rank_, name_, nic_->describe().c_str(), peers_.size(), opts_.lanes, opts_.chunkBytes,
           receiveSlots_,
           copyOnly_ ? "payloads copied through registered staging"
                     : "large payloads written from the caller's buffers");
  return Status::Ok();
}

Status RdmaTransport::exchange(Bootstrap* bs, Deadline deadline, std::vector<RdmaRemote>* remotes) {
  std::vector<uint8_t> blob;
  Status st;
  if (fifos_.region) {
    std::vector<uint8_t> desc;
    st = nic_->prepare(rank_, size_, peers_, opts_.lanes, &desc);
    if (st.ok()) {
      const uint32_t n = uint32_t(desc.size());
      blob.resize(4 + desc.size() + sizeof(RemoteRecord) * size_t(size_));
      memcpy(blob.data(), &n, 4);
      memcpy(blob.data() + 4, desc.data(), desc.size());
      auto* table = reinterpret_cast<RemoteRecord*>(blob.data() + 4 + desc.size());
      for (size_t i = 0; i < peers_.size(); ++i) {
        const int q = peers_[i];
        char* ctrl = ctrl_.base + kCtrlBytes * size_t(q);
        RemoteRecord r{fifos_.region->remoteAddress(fifoOf(i)), fifos_.region->key(),
                       ctrl_.region->remoteAddress(ctrl), ctrl_.region->key(),
                       uint64_t(receiveSlots_)};
        memcpy(&table[q], &r, sizeof r);
      }
    }
  }
  const uint32_t mine = uint32_t(blob.size());
  std::vector<uint32_t> sizes(static_cast<size_t>(size_));
  CHORUS_RETURN_IF_ERROR(bs->allgather(&mine, sizeof mine, sizes.data(), deadline));
  uint32_t most = 0;
  for (uint32_t s : sizes) most = s > most ? s : most;
  blob.resize(most);
  std::vector<uint8_t> all(size_t(most) * size_t(size_));
  if (most) CHORUS_RETURN_IF_ERROR(bs->allgather(blob.data(), most, all.data(), deadline));
  CHORUS_RETURN_IF_ERROR(st);
  remotes->resize(size_t(size_));
  for (int q : peers_) {
    const uint8_t* theirs = all.data() + size_t(most) * size_t(q);
    uint32_t n = 0;
    if (sizes[size_t(q)] >= 4) memcpy(&n, theirs, 4);
    const size_t need = 4 + size_t(n) + sizeof(RemoteRecord) * size_t(size_);
    if (sizes[size_t(q)] < need)
      return Status::RemoteError(std::string(name_) + ": rank " + std::to_string(q) +
                                 " published no endpoints (it could not open its NIC, or it "
                                 "does not reach this rank over " +
                                 name_ + ")");
    CHORUS_RETURN_IF_ERROR(nic_->connect(q, theirs + 4, n).withContext(name_));
    RemoteRecord r;
    memcpy(&r, theirs + 4 + n + sizeof(RemoteRecord) * size_t(rank_), sizeof r);
    if (r.slots < 2 || r.slots > uint64_t(RdmaOptions::kMaxSlots))
      return Status::RemoteError(std::string(name_) + ": rank " + std::to_string(q) +
                                 " published a FIFO of " + std::to_string(r.slots) +
                                 " slots for rank " + std::to_string(rank_) + "; expected 2.." +
                                 std::to_string(RdmaOptions::kMaxSlots));
    (*remotes)[size_t(q)] = {r.fifoAddr, r.fifoKey, r.ctrlAddr, r.ctrlKey, r.slots};
  }
  return Status::Ok();
}

Connection* RdmaTransport::connection(int peer) {
  return peer >= 0 && peer < size_ ? conns_[size_t(peer)].get() : nullptr;
}

bool RdmaTransport::peerFinished(int peer) const {
  const RdmaConnection* c = peer >= 0 && peer < size_ ? conns_[size_t(peer)].get() : nullptr;
  if (!c) return true;
  return c->goodbyeSeen_.load(std::memory_order_acquire) &&
         c->receive_.consumed() >= c->goodbyeTotal_.load(std::memory_order_acquire);
}

void RdmaTransport::raise(const Status& st) {
  if (raised_.exchange(true)) return;
  if (hooks_.onError) hooks_.onError(st);
  if (hooks_.doorbell) hooks_.doorbell->wake();
}

bool RdmaTransport::writesInFlight() const {
  for (int q : peers_)
    if (conns_[size_t(q)]->inFlight_.load(std::memory_order_relaxed)) return true;
  return false;
}

void RdmaTransport::threadMain() {
  RdmaEvent events[64];
  while (!stop_.load(std::memory_order_acquire)) {
    const int n = nic_->poll(events, 64);
    bool news = false;
    for (int k = 0; k < n; ++k) {
      handle(events[k]);
      news |= events[k].kind != RdmaEvent::kFailed;
    }
    if (creditsOwed_.exchange(false))
      for (int q : peers_) flushCredits(*conns_[size_t(q)]);
    if (news) hooks_.doorbell->ring();
    // Sleep in the provider once nothing is left: it wakes on the next completion, and the
    // executor spins already. Spinning here always measured 81 us against 54 us for an 8-byte
    // ping-pong on 2 cores, where four threads spinning leave none to the work. But while a
    // write of ours is unfinished, yield instead: asleep, libfabric's tcp provider left the
    // CPUs idle with writes queued (18% idle against TCP's 8%), and yielding until they finish
    // gave 64 MiB allgather and allreduce 15-22% more busbw, the 8-byte ping-pong no worse
    // (perf/results/rdma/progress-spin-ab-2026-12-07.txt).
    if (!n) {
      if (writesInFlight())
        sched_yield();
      else
        nic_->waitForEvents(100);
    }
  }
}

void RdmaTransport::handle(const RdmaEvent& e) {
  if (e.kind == RdmaEvent::kArrived) {
    const Imm imm = decodeImm(e.imm);
    RdmaConnection* c = imm.rank < size_ ? conns_[size_t(imm.rank)].get() : nullptr;
    bool ok = c != nullptr;
    if (ok && imm.kind == ImmKind::kData) ok = c->receive_.arrive(imm.value);
    if (ok && imm.kind == ImmKind::kCredit) ok = c->send_.credit(imm.value);
    if (ok && imm.kind == ImmKind::kGoodbye) {
      uint64_t total;
      memcpy(&total, ctrl_.base + kCtrlBytes * size_t(imm.rank) + 8, sizeof total);
      c->goodbyeTotal_.store(total, std::memory_order_release);
      c->goodbyeSeen_.store(true, std::memory_order_release);
    }
    if (!ok)
      raise(Status::RemoteError(std::string(name_) + " (" + nic_->describe() + "): rank " +
                                std::to_string(rank_) + " got a write it did not expect (imm 0x" +
                                [&] {
                                  char b[16];
                                  snprintf(b, sizeof b, "%08x", e.imm);
                                  return std::string(b);
                                }() +
                                ") from rank " + std::to_string(imm.rank) +
                                "; a peer broke the protocol"));
    return;
  }
  const uint64_t ctx = reinterpret_cast<uintptr_t>(e.context);
  const WriteKind kind = WriteKind(ctx >> 56);
  const int peer = int((ctx >> 16) & 0xffffffffu);
  RdmaConnection* c = peer < size_ ? conns_[size_t(peer)].get() : nullptr;
  if (!c) return;
  if (kind == WriteKind::kData)
    c->written(int(ctx & 0xffff));
  else
    c->inFlight_.fetch_sub(1, std::memory_order_acq_rel);
  if (e.kind != RdmaEvent::kFailed) return;
  // A credit or goodbye that fails matters only if data follows, and then that fails too; a
  // peer that has left refuses them, which is no error.
  if (kind != WriteKind::kData || stop_.load()) {
    LOG_INFO(kLogNet, "rank %d: %s control write to rank %d failed: %s", rank_, name_, peer,
             e.error.c_str());
    return;
  }
  raise(Status::SystemError(std::string(name_) + ": rank " + std::to_string(rank_) +
                            " could not write a message to rank " + std::to_string(peer) + ": " +
                            e.error + "; check that rank " + std::to_string(peer) +
                            " is alive and the link between them"));
}

void* writeContext(int kind, int peer, int slot) {
  return reinterpret_cast<void*>(
      uintptr_t(uint64_t(kind) << 56 | uint64_t(peer) << 16 | uint64_t(slot)));
}

bool RdmaTransport::postControl(int peer, const RdmaGather& g, RdmaTarget target, uint32_t imm,
                                void* ctx) {
  RdmaConnection& c = *conns_[size_t(peer)];
  c.inFlight_.fetch_add(1, std::memory_order_acq_rel);
  std::string error;
  PostResult r = nic_->write(peer, 0, &g, 1, target, imm, ctx, &error);
  if (r == PostResult::kPosted) return true;
  c.inFlight_.fetch_sub(1, std::memory_order_acq_rel);
  if (r == PostResult::kFailed)
    LOG_INFO(kLogNet, "rank %d: %s control write to rank %d not posted: %s", rank_, name_, peer,
             error.c_str());
  return false;
}

void RdmaTransport::flushCredits(RdmaConnection& c) {
  for (;;) {
    const uint32_t n = c.receive_.takeCredits(kMaxImmValue);
    if (!n) return;
    RdmaGather g{sources_.base + kCtrlBytes * size_t(c.peer_), 8, sources_.region->desc()};
    RdmaTarget target{c.remote_.ctrlAddr, c.remote_.ctrlKey};
    if (!postControl(c.peer_, g, target, encodeImm(ImmKind::kCredit, rank_, n),
                     writeContext(int(WriteKind::kCredit), c.peer_, 0))) {
      c.receive_.giveBack(n);
      creditsOwed_.store(true);  // the progress thread tries again after its next poll
      return;
    }
  }
}

void RdmaTransport::waitForWrites(double seconds) {
  const Deadline deadline = Deadline::after(seconds);
  for (;;) {
    bool idle = true;
    for (int q : peers_) idle &= conns_[size_t(q)]->inFlight_.load() == 0;
    if (idle || deadline.expired()) return;
    usleep(200);
  }
}

void RdmaTransport::sayGoodbye() {
  for (int q : peers_) {
    RdmaConnection& c = *conns_[size_t(q)];
    char* source = sources_.base + kCtrlBytes * size_t(q) + 8;
    const uint64_t total = c.send_.sent();
    memcpy(source, &total, sizeof total);
    RdmaGather g{source, 8, sources_.region->desc()};
    RdmaTarget target{c.remote_.ctrlAddr + 8, c.remote_.ctrlKey};
    for (int tries = 0; tries < 1000; ++tries) {
      if (postControl(q, g, target, encodeImm(ImmKind::kGoodbye, rank_, 0),
                      writeContext(int(WriteKind::kGoodbye), q, 0)))
        break;
      usleep(100);
    }
  }
}

RdmaTransport::~RdmaTransport() {
  bool failed = raised_.load() || (hooks_.failed && hooks_.failed->load());
  if (thread_.joinable()) {
    // Messages already posted reach their peers before the goodbye that counts them.
    if (!failed) {
      waitForWrites(opts_.timeoutSec);
      sayGoodbye();
      waitForWrites(opts_.timeoutSec < 5 ? opts_.timeoutSec : 5);
    }
    stop_.store(true, std::memory_order_release);
    nic_->interruptWait();
    thread_.join();
    for (int q : peers_) failed |= conns_[size_t(q)]->inFlight_.load() != 0;
  }
  conns_.clear();
  if (nic_) nic_->disconnect(failed);
  cache_.reset();
  for (Span* s : {&fifos_, &staging_, &ctrl_, &sources_}) s->region.reset();
  nic_.reset();
  for (Span* s : {&fifos_, &staging_, &ctrl_, &sources_})
    if (s->base) munmap(s->base, s->bytes);
}

}  // namespace chorus
