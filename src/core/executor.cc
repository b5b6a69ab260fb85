#include "core/executor.h"

#include <sched.h>

#include <algorithm>

#include "core/flight_recorder.h"

namespace chorus {

Plan Plan::make(Schedule s) {
  Plan p;
  p.schedule = std::move(s);
  return p;
}

Plan Plan::make(Schedule s, const Chunking& c) {
  Plan p;
  p.index = ScheduleIndex(s, c);
  p.start = RunStart::make(s, p.index);
  p.schedule = std::move(s);
  return p;
}

RunStart RunStart::make(const Schedule& s, const ScheduleIndex& index) {
  RunStart r;
  r.steps.resize(s.steps.size());
  for (size_t i = 0; i < s.steps.size(); ++i) r.steps[i].chunks = index.chunks(int(i));
  const auto firstWithChunks = [&](int i) {
    while (i >= 0 && index.chunks(i) == 0) i = index.next(i);
    return i;
  };
  const size_t peers = index.peers().size();
  for (size_t k = 0; k < peers; ++k) {
    r.sendHead.push_back(firstWithChunks(index.first(ScheduleIndex::channelId(int(k), true))));
    r.recvHead.push_back(firstWithChunks(index.first(ScheduleIndex::channelId(int(k), false))));
  }
  findNoticeRoles(s, index, &r);
  r.keepCached.assign(s.steps.size(), 0);
  for (size_t i = 0; i < s.steps.size(); ++i)
    for (int k = 0; k < Step::kMaxDeps; ++k)
      if (index.dep(int(i), k) >= 0 && index.chunkwise(int(i), k))
        r.keepCached[size_t(index.dep(int(i), k))] = 1;
  return r;
}

void Executor::start(const Plan& plan, const OpDesc& desc, uint32_t opSeq, RedOp reduceOp,
                     const ExecBuffers& bufs, Deadline deadline) {
  plan_ = &plan;
  steps_ = &plan.schedule.steps;
  desc_ = desc;
  op_ = reduceOp;
  bufs_ = &bufs;
  engine_ = bufs.engine;
  CpuEngine* cpu = &CpuEngine::get();
  cpu_ = engine_ == cpu ? cpu : nullptr;
  deadline_ = deadline;
  esize_ = dataTypeSize(desc.dtype);
  p2p_ = isP2p(desc);
  // (The footprint is at most twice the largest buffer: small calls skip working it out.)
  streamOutput_ = env_.streamBytes &&
                  2 * desc.count * esize_ * env_.conns.size() >= env_.streamBytes &&
                  footprintBytes(desc) >= env_.streamBytes;
  expect_ =
      WireHeader{desc.count,       opSeq, desc.root, 0, uint8_t(desc.coll), uint8_t(desc.dtype),
                 uint8_t(desc.op), 0};
  if (p2p_) {
    // Point-to-point messages match by order on the channel: no collective number, and each
    // step's own byte count is what the other side must have posted.
    expect_.coll = uint8_t(Collective::Send);
    expect_.opSeq = 0;
    expect_.root = -1;
  }
  index_ = &plan.index;
  fresh_ = &plan.start;
  if (!plan.index.built()) {
    ownIndex_ = ScheduleIndex(plan.schedule, env_.chunking(esize_));
    ownStart_ = RunStart::make(plan.schedule, ownIndex_);
    index_ = &ownIndex_;
    fresh_ = &ownStart_;
  }
  first_ = 0;
  // Copies into vectors that keep their capacity: a warm call allocates nothing.
  state_ = fresh_->steps;
  if (!lent_.empty()) reclaimLent();  // a failed run left some: that memory is not ours now
  sendHead_ = fresh_->sendHead;
  recvHead_ = fresh_->recvHead;
  noticesOwed_ = noticesAwaited_ = 0;
  if (!p2p_ && env_.readyNotices && fresh_->noticesOwed + fresh_->noticesAwaited) {
    owesNotice_ = fresh_->owesNotice;
    awaitsNotice_ = fresh_->awaitsNotice;
    noticesOwed_ = fresh_->noticesOwed;
    noticesAwaited_ = fresh_->noticesAwaited;
  }
}

// The bytes of the caller's buffers that a call touches on this rank: its output, and its
// input unless it works in place.
uint64_t Executor::footprintBytes(const OpDesc& d) const {
  const int ranks = int(env_.conns.size());
  const uint64_t in = inputElems(d, ranks) * esize_, out = outputElems(d, ranks) * esize_;
  return d.inPlace ? std::max(in, out) : in + out;
}

// Whether the engine's outstanding work on this step, if any, has finished; if so it counts.
bool Executor::inflightFinished(StepProgress& st) {
  if (st.inflight.finished()) return true;
  if (!engine_->test(st.inflight)) return false;
  st.inflight = {};
  st.done = st.inflightTo;
  return true;
}

int Executor::skipDone(int i) const {
  while (i >= 0 && finished(i)) i = index_->next(i);
  return i;
}

bool Executor::depsReady(int i, uint64_t chunk) const {
  return index_->depsReady(i, chunk, [&](int d) { return state_[d].done; });
}

uint64_t Executor::chunkCount(int i, uint64_t chunk) const {
  return index_->chunkLen(i, chunk);
}

bool Executor::advanceSend(int i) {
  const Step& s = (*steps_)[i];
  const int k = slotOf(i);
  if (sendHead_[k] != i) return false;
  StepProgress& st = state_[i];
  Connection* c = env_.conns[s.peer];
  const MemRef src = ref(s.src);
  WireHeader h = expect_;
  if (p2p_) h.count = s.count;
  bool moved = false;
  while (st.done < st.chunks && depsReady(i, st.done)) {
    h.bytes = uint32_t(chunkCount(i, st.done) * esize_);
    const MemRef data = src + index_->chunkBegin(i, st.done) * esize_;
    Completion sent;
    if (!c->postSend(h, data, lent_.size() < kMaxLent ? &sent : nullptr)) break;
    if (!sent.finished()) lent_.push_back({c, sent, s.peer, data.ptr, data.ptr + h.bytes});
    ++st.done;
    moved = true;
  }
  if (finished(i)) sendHead_[k] = skipDone(index_->next(i));
  return moved;
}

bool Executor::headerMatches(const WireHeader& h, const Step& s, uint64_t n) const {
  const uint64_t count = p2p_ ? s.count : expect_.count;
  return h.kind == kWireData && h.count == count && h.opSeq == expect_.opSeq &&
         h.coll == expect_.coll && h.dtype == expect_.dtype && h.root == expect_.root &&
         (s.kind != StepKind::RecvReduce || h.op == expect_.op) && h.bytes == n * esize_;
}

bool Executor::advanceRecv(int i, Status* err) {
  const Step& s = (*steps_)[i];
  const int k = slotOf(i);
  if (recvHead_[k] != i) return false;
  StepProgress& st = state_[i];
  Connection* c = env_.conns[s.peer];
  bool moved = false;
  if (!st.inflight.finished()) {
    if (!inflightFinished(st)) return false;
    c->release();  // the engine has finished reading the message
    moved = true;
  }
  const MemRef dst = ref(s.dst);
  const bool reduce = s.kind == StepKind::RecvReduce;
  const MemRef local = reduce ? ref(s.src) : MemRef{};
  // Before looking: a transport that takes payloads when they are looked at lands them there.
  if (!reduce && c->receiveWindow()) postReceives(i, c, dst);
  while (st.done < st.chunks && depsReady(i, st.done)) {
    const void* payload = nullptr;
    const WireHeader* h = c->peek(&payload);
    if (!h) break;
    const uint64_t n = chunkCount(i, st.done);
    if (!headerMatches(*h, s, n)) {
      *err = mismatch(*h, s.peer, s.count, n * esize_);
      return false;
    }
    const uint64_t off = index_->chunkBegin(i, st.done) * esize_;
    const MemRef to = dst + off;
    if (!lent_.empty() && lentOverlaps(to.ptr, to.ptr + n * esize_)) break;
    Completion done;
    if (reduce)
      done = engineReduce(to, local + off, MemRef::host(payload), n, streams(i));
    else if (payload != to.ptr)  // else it landed in place (postReceive)
      done = engineCopy(to, MemRef::host(payload), h->bytes, streams(i));
    moved = true;
    if (!done.finished()) {  // the message stays until the engine has read it
      st.inflight = done;
      st.inflightTo = st.done + 1;
      return moved;
    }
    c->release();
    ++st.done;
  }
  if (finished(i))
    recvHead_[k] = skipDone(index_->next(i));
  else if (!reduce && c->receiveWindow())
    postReceives(i, c, dst);
  return moved;
}

// Offers the connection the destinations of the chunks this receive will take next, as far
// as they may be written now (dependencies met, no memory still lent) and its window reaches.
void Executor::postReceives(int i, Connection* c, MemRef dst) {
  const uint64_t window = c->receiveWindow();
  if (!window) return;
  StepProgress& st = state_[i];
  if (st.posted < st.done) st.posted = st.done;
  while (st.posted < st.chunks && st.posted - st.done < window && depsReady(i, st.posted)) {
    const size_t bytes = chunkCount(i, st.posted) * esize_;
    const MemRef at = dst + index_->chunkBegin(i, st.posted) * esize_;
    if (!lent_.empty() && lentOverlaps(at.ptr, at.ptr + bytes)) return;
    c->postReceive(st.posted - st.done, at, bytes, streams(i));  // declined: through a slot
    ++st.posted;
  }
}

bool Executor::advanceCopy(int i) {
  const Step& s = (*steps_)[i];
  StepProgress& st = state_[i];
  if (!inflightFinished(st)) return false;
  // A bounded slice per pass, so that a large copy (an out-of-place allgather's own block)
  // overlaps the sends and receives after it instead of holding them back.
  const uint64_t limit = std::min(st.chunks, st.done + kCopyChunksPerPass);
  uint64_t to = st.done;
  while (to < limit && depsReady(i, to)) ++to;
  if (to == st.done) return false;
  const MemRef src = ref(s.src);
  const MemRef dst = ref(s.dst);
  if (!src.sameMemory(dst)) {
    uint64_t begin = index_->chunkBegin(i, st.done), end = index_->chunkBegin(i, to);
    if (end > s.count) end = s.count;
    const MemRef at = dst + begin * esize_;
    const size_t bytes = (end - begin) * esize_;
    if (!lent_.empty() && lentOverlaps(at.ptr, at.ptr + bytes)) return false;
    const Completion done = engineCopy(at, src + begin * esize_, bytes, streams(i));
    if (!done.finished()) {
      st.inflight = done;
      st.inflightTo = to;
      return true;
    }
  }
  st.done = to;
  return true;
}

bool Executor::lentPending() {
  for (size_t k = 0; k < lent_.size();) {
    if (lent_[k].conn->test(lent_[k].sent)) {
      lent_[k] = lent_.back();
      lent_.pop_back();
    } else {
      ++k;
    }
  }
  return !lent_.empty();
}

bool Executor::lentOverlaps(const char* begin, const char* end) {
  if (!lentPending()) return false;
  for (const Lent& l : lent_)
    if (begin < l.end && l.begin < end) return true;
  return false;
}

void Executor::reclaimLent() {
  // Posted receives are not tracked one by one: a failed communicator is done with every
  // connection, so all of them give back what they hold.
  for (Connection* c : env_.conns)
    if (c) c->reclaimLent();
  lent_.clear();
}

Executor::Poll Executor::poll(Status* err) {
  bool moved = false, allDone = true;
  if (noticesOwed_ + noticesAwaited_) {  // first: a notice owed goes out before the data
    moved = settleNotices(err);
    if (!err->ok()) return Poll::Failed;
    allDone = noticesOwed_ + noticesAwaited_ == 0;
  }
  for (size_t i = first_; i < steps_->size(); ++i) {
    if (finished(int(i))) {
      if (i == first_) ++first_;
      continue;
    }
    allDone = false;
    switch ((*steps_)[i].kind) {
      case StepKind::Send:
        moved |= advanceSend(int(i));
        break;
      case StepKind::Recv:
      case StepKind::RecvReduce:
        moved |= advanceRecv(int(i), err);
        break;
      case StepKind::Copy:
        moved |= advanceCopy(int(i));
        break;
    }
    if (!err->ok()) return Poll::Failed;
  }
  // The caller may reuse its buffers once this returns Done: nothing may still be lent out.
  if (allDone) return lentPending() ? Poll::Idle : Poll::Done;
  return moved ? Poll::Moved : Poll::Idle;
}

int Executor::departedPeer() const {
  if (!env_.peerLeft) return -1;
  for (size_t i = first_; i < steps_->size(); ++i) {
    const Step& s = (*steps_)[i];
    if (finished(int(i)) || s.kind == StepKind::Copy || !env_.peerLeft(s.peer)) continue;
    // A peer leaves only after posting all it ever sends, so a receive with a message already
    // waiting is blocked on something else (its dependencies), not on the departed peer: in a
    // barrier, a partner may finish and leave while this rank still waits for a third rank.
    const void* payload = nullptr;
    if (s.kind != StepKind::Send && env_.conns[s.peer]->peek(&payload)) continue;
    return s.peer;
  }
  for (size_t k = 0; k < awaitsNotice_.size() && noticesAwaited_; ++k) {
    const int peer = index_->peers()[k];
    const void* payload = nullptr;
    if (awaitsNotice_[k] && env_.peerLeft(peer) && !env_.conns[peer]->peek(&payload)) return peer;
  }
  return -1;
}

Status Executor::failureNow() const {
  return env_.failed->load(std::memory_order_acquire) ? env_.failure() : Status::Ok();
}

Status Executor::checkIdle() {
  CHORUS_RETURN_IF_ERROR(failureNow());
  for (Connection* c : env_.conns)
    if (c) c->takeLent();
  if (deadline_.expired()) return waitingError();
  if (departedPeer() < 0) return Status::Ok();
  // It left after posting everything it ever will: one more pass takes what is there.
  Status err;
  Poll p = poll(&err);
  if (p == Poll::Failed) return err;
  const int gone = departedPeer();
  if (p != Poll::Idle || gone < 0) return Status::Ok();
  return Status::RemoteError("rank " + std::to_string(gone) +
                             " left the job (destroyed its communicator) while rank " +
                             std::to_string(env_.rank) + " still needed it, in " + blockedOn() +
                             ". Every rank must make the same calls before destroying its "
                             "communicator");
}

Status Executor::run(const Plan& plan, const OpDesc& desc, uint32_t opSeq, RedOp reduceOp,
                     const ExecBuffers& bufs, Deadline deadline) {
  start(plan, desc, opSeq, reduceOp, bufs, deadline);
  Status err;
  int64_t idleSince = 0;
  for (uint64_t idle = 0;; ++idle) {
    Poll p = poll(&err);
    if (p == Poll::Done) return Status::Ok();
    if (p == Poll::Failed) return err;
    if (p == Poll::Moved) {
      idle = 0;
      continue;
    }
    CHORUS_RETURN_IF_ERROR(failureNow());
    // Idle: spin a while (peers are usually just behind), then sleep on the doorbell. The spin
    // yields rather than pauses: with PAUSE, whole rounds of an 8-byte allreduce on a 2-core VM
    // ran at ~30 us a call against 0.4, the ranks sleeping and waking each other late
    // (perf/README.md). Most likely the hypervisor's pause-loop exiting, which takes a vCPU
    // running PAUSE in a loop for one waiting on a lock and hands its time away. A yield with
    // nothing else to run returns at once; with another rank on the core, it lets it run.
    //
    // The first idle polls do not even yield: sched_yield costs 0.3 us here, longer than a
    // message takes from core to core (0.2 us), so a reply that lands during it waits for it.
    if (idle == 0) idleSince = nowNs();
    if ((idle & 63) != 63) {
      if (idle >= env_.busyPolls) sched_yield();
      continue;
    }
    CHORUS_RETURN_IF_ERROR(checkIdle());
    // A failure still waiting for its root cause keeps us spinning: it resolves within its
    // grace, unrung.
    if (nowNs() - idleSince < env_.spinNs || !env_.doorbell || env_.failed->load()) continue;
    if (env_.recorder) {  // off the fast path: only before sleeping
      // After the steps, a ready notice: "step" one past the last.
      const int w = firstWaitingStep();
      const int peer = w >= 0 ? (*steps_)[size_t(w)].peer : awaitedNoticePeer();
      if (peer >= 0)
        env_.recorder->waiting(env_.recorder->lastCall(), peer,
                               w >= 0 ? w + 1 : int(steps_->size()) + 1);
    }
    const uint32_t token = env_.doorbell->prepareSleep();
    p = poll(&err);
    if (p == Poll::Idle && !env_.failed->load()) {
      int64_t left = deadline.remainingNs();
      env_.doorbell->sleep(token, left < 100000000 ? left : 100000000);
    }
    env_.doorbell->endSleep();
    if (p == Poll::Done) return Status::Ok();
    if (p == Poll::Failed) return err;
    if (p == Poll::Moved) idle = 0;
  }
}

Status Executor::mismatch(const WireHeader& got, int peer, uint64_t p2pCount, uint64_t expectBytes,
                          bool expectNotice) const {
  // Everything agrees but the message: the two ranks run the same call differently.
  const bool noticeWanted = expectNotice, noticeGot = got.kind == kWireReady;
  if ((got.bytes != expectBytes || noticeGot != noticeWanted) && got.opSeq == expect_.opSeq &&
      got.coll == expect_.coll && got.dtype == expect_.dtype && got.root == expect_.root &&
      got.op == expect_.op && got.count == (p2p_ ? p2pCount : expect_.count)) {
    const std::string how =
        noticeWanted || noticeGot
            ? " run the same call, " + desc_.toString() + ", differently (" +
                  (noticeWanted ? "a ready notice" : std::to_string(expectBytes) + " bytes") +
                  " expected here, " + (noticeGot ? "a ready notice" : "data") + " arrived over "
            : " cut the same call, " + desc_.toString() + ", into messages of different sizes (" +
                  std::to_string(expectBytes) + " bytes expected here, " +
                  std::to_string(got.bytes) + " arrived over ";
    return Status::InvalidUsage("rank " + std::to_string(env_.rank) + " and rank " +
                                std::to_string(peer) + how + transportName(peer) +
                                "): they chose different algorithms or chunk sizes. Give every "
                                "rank the same CHORUS_ALGO, CHORUS_TUNE_FILE and CHORUS_*_BYTES "
                                "settings");
  }
  const OpDesc theirs{.coll = Collective(got.coll),
                      .dtype = DataType(got.dtype),
                      .op = RedOp(got.op),
                      .root = got.root,
                      .count = got.count};
  OpDesc mine = desc_;
  if (p2p_) mine.root = -1;
  return Status::InvalidUsage(
      "mismatched calls on rank " + std::to_string(env_.rank) + ": it is in " + mine.toString() +
      (p2p_ ? "" : " (collective #" + std::to_string(expect_.opSeq) + ")") + " but rank " +
      std::to_string(peer) + (noticeGot ? " is ready to take data for " : " sent data for ") +
      theirs.toString() + (p2p_ ? "" : " (collective #" + std::to_string(got.opSeq) + ")") +
      ". Every rank must make the same collective calls, with the same count, type, op and "
      "root, in the same order (point-to-point counts are in bytes)");
}

int Executor::firstWaitingStep() const {
  for (size_t i = first_; i < steps_->size(); ++i)
    if (!finished(int(i)) && (*steps_)[i].kind != StepKind::Copy) return int(i);
  return -1;
}

std::string Executor::blockedOn() const {
  std::string where;
  if (const int w = firstWaitingStep(); w >= 0) {
    const size_t i = size_t(w);
    const Step& s = (*steps_)[i];
    const StepProgress& st = state_[i];
    const char* verb = s.kind == StepKind::Send ? "sending to" : "waiting for data from";
    where = std::string(", ") + verb + " rank " + std::to_string(s.peer) + " over " +
            transportName(s.peer) + " (step " + std::to_string(i + 1) + " of " +
            std::to_string(steps_->size()) + ", chunk " + std::to_string(st.done + 1) + " of " +
            std::to_string(st.chunks) + ")";
  }
  if (const int peer = awaitedNoticePeer(); where.empty() && peer >= 0)
    where = ", waiting for rank " + std::to_string(peer) + " to say over " + transportName(peer) +
            " that it is in the same call and takes the data this rank sends it";
  if (where.empty() && !lent_.empty())
    where = ", waiting for rank " + std::to_string(env_.rank) + "'s " +
            transportName(lent_.front().peer) + " connection to rank " +
            std::to_string(lent_.front().peer) + " to take the data it sends in place";
  return desc_.toString() + (p2p_ ? "" : " (collective #" + std::to_string(expect_.opSeq) + ")") +
         where;
}

const char* Executor::transportName(int peer) const {
  const Transport* t = size_t(peer) < env_.transportOf.size() ? env_.transportOf[peer] : nullptr;
  return t ? t->name() : "?";
}

Status Executor::waitingError() const {
  return Status::Timeout("timed out on rank " + std::to_string(env_.rank) + " in " + blockedOn() +
                         ". Is that rank alive and making the same call? If the job is just "
                         "slow, raise CHORUS_TIMEOUT");
}

}  // namespace chorus
