#include "core/executor.h"

#include <sched.h>

#include <cstring>
#include <immintrin.h>

#include "common/log.h"

namespace chorus {

Plan Plan::make(Schedule s) {
  Plan p;
  const int n = int(s.steps.size());
  p.nextOnChannel.assign(n, -1);
  std::vector<int> lastSend, lastRecv;  // parallel to p.peers
  for (int i = 0; i < n; ++i) {
    const Step& st = s.steps[i];
    if (st.kind == StepKind::Copy) continue;
    size_t k = 0;
    while (k < p.peers.size() && p.peers[k] != st.peer) ++k;
    if (k == p.peers.size()) {
      p.peers.push_back(st.peer);
      p.firstSend.push_back(-1);
      p.firstRecv.push_back(-1);
      lastSend.push_back(-1);
      lastRecv.push_back(-1);
    }
    bool isSend = st.kind == StepKind::Send;
    int& first = isSend ? p.firstSend[k] : p.firstRecv[k];
    int& last = isSend ? lastSend[k] : lastRecv[k];
    if (first < 0) first = i;
    if (last >= 0) p.nextOnChannel[last] = i;
    last = i;
  }
  p.schedule = std::move(s);
  return p;
}

// One execution of a plan: the state that lives for one call.
class Executor::Run {
 public:
  Run(Executor& ex, const Plan& plan, const OpDesc& desc, uint32_t opSeq, RedOp op,
      const ExecBuffers& bufs)
      : ex_(ex), env_(ex.env_), plan_(plan), steps_(plan.schedule.steps), desc_(desc), op_(op),
        esize_(dataTypeSize(desc.dtype)) {
    expect_ = WireHeader{desc.count, opSeq, desc.root, 0, uint8_t(desc.coll),
                         uint8_t(desc.dtype), uint8_t(desc.op), 0};
    if (desc.coll == Collective::Send || desc.coll == Collective::Recv) {
      // Point-to-point messages match by order on the channel, not by collective number.
      expect_.coll = uint8_t(Collective::Send);
      expect_.opSeq = 0;
      expect_.root = -1;
    }
    base_[int(BufferId::Input)] = static_cast<char*>(const_cast<void*>(bufs.input));
    base_[int(BufferId::Output)] = static_cast<char*>(bufs.output);
    base_[int(BufferId::Scratch)] = static_cast<char*>(bufs.scratch);
    size_t payload = env_.sleeper ? env_.sleeper->maxPayloadBytes() : (size_t(1) << 20);
    chunkElems_ = payload / esize_;
    auto& state = ex_.state_;
    state.assign(steps_.size(), StepState{});
    for (size_t i = 0; i < steps_.size(); ++i)
      state[i].chunks = (steps_[i].count + chunkElems_ - 1) / chunkElems_;
    ex_.sendHead_.assign(plan.peers.size(), -1);
    ex_.recvHead_.assign(plan.peers.size(), -1);
    for (size_t k = 0; k < plan.peers.size(); ++k) {
      ex_.sendHead_[k] = skipDone(plan.firstSend[k]);
      ex_.recvHead_[k] = skipDone(plan.firstRecv[k]);
    }
  }

  Status execute(Deadline deadline);

 private:
  char* ptr(BufRef r) const { return base_[int(r.buf)] + r.offset * esize_; }
  bool finished(int i) const { return ex_.state_[i].done == ex_.state_[i].chunks; }
  int skipDone(int i) const {
    while (i >= 0 && finished(i)) i = plan_.nextOnChannel[i];
    return i;
  }
  int channel(int peer) const {
    size_t k = 0;
    while (plan_.peers[k] != peer) ++k;
    return int(k);
  }
  bool depsReady(int i, uint64_t chunk) const {
    for (int d : steps_[i].deps) {
      if (d < 0) continue;
      const StepState& ds = ex_.state_[d];
      bool chunkwise = steps_[d].count == steps_[i].count;
      if (chunkwise ? ds.done <= chunk : ds.done < ds.chunks) return false;
    }
    return true;
  }
  uint64_t chunkCount(int i, uint64_t chunk) const {
    uint64_t left = steps_[i].count - chunk * chunkElems_;
    return left < chunkElems_ ? left : chunkElems_;
  }

  bool advance(int i, Status* err);
  bool advanceSend(int i);
  bool advanceRecv(int i, Status* err);
  bool advanceCopy(int i);
  bool pass(bool* allDone, Status* err);
  Status mismatch(const WireHeader& got, int peer) const;
  Status waitingError(const char* what) const;

  Executor& ex_;
  const ExecEnv& env_;
  const Plan& plan_;
  const std::vector<Step>& steps_;
  const OpDesc& desc_;
  RedOp op_;
  size_t esize_;
  uint64_t chunkElems_ = 0;
  WireHeader expect_{};
  char* base_[3] = {};
  size_t first_ = 0;  // steps before this are all done
};

bool Executor::Run::advanceSend(int i) {
  const Step& s = steps_[i];
  const int k = channel(s.peer);
  if (ex_.sendHead_[k] != i) return false;
  StepState& st = ex_.state_[i];
  Connection* c = env_.conns[s.peer];
  bool moved = false;
  while (st.done < st.chunks && depsReady(i, st.done)) {
    WireHeader h = expect_;
    h.bytes = uint32_t(chunkCount(i, st.done) * esize_);
    if (!c->trySend(h, ptr(s.src) + st.done * chunkElems_ * esize_)) break;
    ++st.done;
    moved = true;
  }
  if (finished(i)) ex_.sendHead_[k] = skipDone(plan_.nextOnChannel[i]);
  return moved;
}

bool Executor::Run::advanceRecv(int i, Status* err) {
  const Step& s = steps_[i];
  const int k = channel(s.peer);
  if (ex_.recvHead_[k] != i) return false;
  StepState& st = ex_.state_[i];
  Connection* c = env_.conns[s.peer];
  bool moved = false;
  while (st.done < st.chunks && depsReady(i, st.done)) {
    const void* payload = nullptr;
    const WireHeader* h = c->peek(&payload);
    if (!h) break;
    const uint64_t n = chunkCount(i, st.done);
    if (h->count != expect_.count || h->opSeq != expect_.opSeq || h->coll != expect_.coll ||
        h->dtype != expect_.dtype || h->root != expect_.root ||
        (s.kind == StepKind::RecvReduce && h->op != expect_.op) || h->bytes != n * esize_) {
      *err = mismatch(*h, s.peer);
      return false;
    }
    const uint64_t off = st.done * chunkElems_ * esize_;
    if (s.kind == StepKind::Recv)
      memcpy(ptr(s.dst) + off, payload, h->bytes);
    else
      env_.reducer->reduce(desc_.dtype, op_, ptr(s.dst) + off, ptr(s.src) + off, payload, n);
    c->release();
    ++st.done;
    moved = true;
  }
  if (finished(i)) ex_.recvHead_[k] = skipDone(plan_.nextOnChannel[i]);
  return moved;
}

bool Executor::Run::advanceCopy(int i) {
  const Step& s = steps_[i];
  StepState& st = ex_.state_[i];
  uint64_t from = st.done;
  while (st.done < st.chunks && depsReady(i, st.done)) ++st.done;
  if (st.done == from) return false;
  char* src = ptr(s.src);
  char* dst = ptr(s.dst);
  if (src != dst) {
    uint64_t begin = from * chunkElems_, end = st.done * chunkElems_;
    if (end > s.count) end = s.count;
    memcpy(dst + begin * esize_, src + begin * esize_, (end - begin) * esize_);
  }
  return true;
}

bool Executor::Run::advance(int i, Status* err) {
  switch (steps_[i].kind) {
    case StepKind::Send: return advanceSend(i);
    case StepKind::Recv:
    case StepKind::RecvReduce: return advanceRecv(i, err);
    case StepKind::Copy: return advanceCopy(i);
  }
  return false;
}

bool Executor::Run::pass(bool* allDone, Status* err) {
  bool moved = false;
  *allDone = true;
  for (size_t i = first_; i < steps_.size(); ++i) {
    if (finished(int(i))) {
      if (i == first_) ++first_;
      continue;
    }
    *allDone = false;
    moved |= advance(int(i), err);
    if (!err->ok()) return false;
  }
  return moved;
}

Status Executor::Run::execute(Deadline deadline) {
  Status err;
  bool allDone = false;
  int64_t idleSince = 0;
  for (uint64_t idle = 0;; ++idle) {
    if (pass(&allDone, &err)) {
      idle = 0;
      continue;
    }
    if (!err.ok()) return err;
    if (allDone) return Status::Ok();
    if (env_.failed->load(std::memory_order_relaxed)) return env_.failure();
    // Idle: spin a while (peers are usually just behind), then sleep on the doorbell.
    if (idle == 0) idleSince = nowNs();
    if ((idle & 63) != 63) {
      if (env_.yieldWhileSpinning)
        sched_yield();
      else
        _mm_pause();
      continue;
    }
    const int64_t now = nowNs();
    if (now >= deadline.atNs()) return waitingError("timed out");
    if (now - idleSince < env_.spinNs) continue;
    uint32_t token = env_.sleeper->prepareSleep();
    bool moved = pass(&allDone, &err);
    if (!moved && err.ok() && !allDone && !env_.failed->load()) {
      int64_t left = deadline.atNs() - now;
      env_.sleeper->sleep(token, left < 100000000 ? left : 100000000);
    }
    env_.sleeper->endSleep();
    if (!err.ok()) return err;
    if (moved) idle = 0;
  }
}

Status Executor::Run::mismatch(const WireHeader& got, int peer) const {
  OpDesc theirs;
  theirs.coll = Collective(got.coll);
  theirs.dtype = DataType(got.dtype);
  theirs.op = RedOp(got.op);
  theirs.root = got.root;
  theirs.count = got.count;
  if (theirs.coll == Collective::Send) theirs.root = -1;
  OpDesc mine = desc_;
  if (mine.coll == Collective::Recv) mine.root = -1;
  return Status::InvalidUsage(
      "mismatched calls on rank " + std::to_string(env_.rank) + ": it is in " + mine.toString() +
      " (collective #" + std::to_string(expect_.opSeq) + ") but rank " + std::to_string(peer) +
      " sent data for " + theirs.toString() + " (collective #" + std::to_string(got.opSeq) +
      ", " + std::to_string(got.bytes) + " bytes). Every rank must make the same collective " +
      "calls, with the same count, type, op and root, in the same order");
}

Status Executor::Run::waitingError(const char* what) const {
  std::string where;
  for (size_t i = first_; i < steps_.size(); ++i) {
    if (finished(int(i))) continue;
    const Step& s = steps_[i];
    const StepState& st = ex_.state_[i];
    const char* verb = s.kind == StepKind::Send ? "sending to" : "waiting for data from";
    if (s.kind == StepKind::Copy) continue;
    where = std::string(verb) + " rank " + std::to_string(s.peer) + " over " +
            env_.sleeper->name() + " (step " + std::to_string(i + 1) + " of " +
            std::to_string(steps_.size()) + ", chunk " + std::to_string(st.done + 1) + " of " +
            std::to_string(st.chunks) + ")";
    break;
  }
  return Status::Timeout(std::string(what) + " on rank " + std::to_string(env_.rank) + " in " +
                         desc_.toString() + " (collective #" + std::to_string(expect_.opSeq) +
                         "), " + where + ". Is that rank alive and making the same call? " +
                         "If the job is just slow, raise CHORUS_TIMEOUT");
}

Status Executor::run(const Plan& plan, const OpDesc& desc, uint32_t opSeq, RedOp reduceOp,
                     const ExecBuffers& bufs, Deadline deadline) {
  Run r(*this, plan, desc, opSeq, reduceOp, bufs);
  return r.execute(deadline);
}

}  // namespace chorus
