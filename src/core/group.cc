// Groups: calls queued per thread, then run together. For each communicator the grouped
// point-to-point calls become one schedule whose steps all run concurrently (so every matched
// set of sends and receives completes), followed by its collectives in call order. One loop
// polls every communicator's executor in turn, so a single thread can drive all ranks of a
// single-process job.
#include <sched.h>
#include <time.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "core/group_estimate.h"
#include "core/group_queue.h"

namespace chorus {

namespace {

struct Queued {
  Communicator::Impl* comm;
  OpDesc desc;
  const void* in;
  void* out;
  // PreMulSum's scalar, copied: the caller's may be gone by groupEnd (the NCCL face resolves
  // a custom op into a temporary).
  bool hasScalar;
  alignas(8) unsigned char scalarCopy[8];

  const void* scalar() const { return hasScalar ? scalarCopy : nullptr; }
};

struct GroupState {
  int depth = 0;
  std::vector<Queued> ops;
  Status failed;  // failOpenGroup: the first failure, and the group will run nothing
};
thread_local GroupState tlsGroup;

// Builds one schedule from a communicator's grouped sends and receives (counted in bytes).
// A send to self is paired, in order, with a receive from self and becomes a copy.
Status mergeP2p(Communicator::Impl* c, const std::vector<const Queued*>& ops,
                Communicator::Impl::Prepared* p) {
  Schedule s;
  s.algorithm = "grouped_p2p";
  std::vector<const Queued*> selfSends, selfRecvs;
  for (const Queued* q : ops) {
    const int k = int(p->bufs.user.size());
    const bool isSend = q->desc.coll == Collective::Send;
    p->bufs.user.push_back(MemRef::host(isSend ? q->in : q->out));
    if (q->desc.root == c->rank) {
      (isSend ? selfSends : selfRecvs).push_back(q);
      continue;
    }
    if (isSend)
      s.send(q->desc.root, userBuffer(k), q->desc.count);
    else
      s.recv(q->desc.root, userBuffer(k), q->desc.count);
  }
  if (selfSends.size() != selfRecvs.size())
    return Status::InvalidUsage("group on rank " + std::to_string(c->rank) + ": " +
                                std::to_string(selfSends.size()) + " sends to itself but " +
                                std::to_string(selfRecvs.size()) + " receives from itself");
  for (size_t i = 0; i < selfSends.size(); ++i) {
    if (selfSends[i]->desc.count != selfRecvs[i]->desc.count)
      return Status::InvalidUsage(
          "group on rank " + std::to_string(c->rank) + ": a send to itself of " +
          std::to_string(selfSends[i]->desc.count) + " bytes meets a receive of " +
          std::to_string(selfRecvs[i]->desc.count));
    p->bufs.user.push_back(MemRef::host(selfSends[i]->in));
    p->bufs.user.push_back(MemRef::host(selfRecvs[i]->out));
    const int k = int(p->bufs.user.size());
    s.copy(userBuffer(k - 2), userBuffer(k - 1), selfSends[i]->desc.count);
  }
  p->bufs.engine = engineFor(MemoryKind::Host);
  p->ownedPlan = std::make_unique<Plan>(Plan::make(std::move(s)));
  p->plan = p->ownedPlan.get();
  p->desc = OpDesc{};
  p->desc.coll = Collective::Send;
  p->desc.dtype = DataType::Uint8;
  p->desc.root = -1;
  return Status::Ok();
}

// What one communicator does during groupEnd: its phases, run one after another. The merged
// point-to-point comes first when there is one, then the collectives in call order; with
// CHORUS_CHECK_CALLS=2 each collective is agreed on first, as outside a group
// (core/call_agreement.h), so a rank may group calls that another makes one by one.
struct CommWork {
  Communicator::Impl* comm = nullptr;
  std::vector<const Queued*> p2p, collectives;
  bool agree = false;
  size_t next = 0;  // next phase
  bool running = false, done = false;
  Communicator::Impl::Prepared current;

  size_t perCollective() const { return agree ? 2 : 1; }
  size_t phases() const { return (p2p.empty() ? 0 : 1) + perCollective() * collectives.size(); }
  bool isAgreement(size_t phase) const {
    return agree && !(phase == 0 && !p2p.empty()) && (phase - (p2p.empty() ? 0 : 1)) % 2 == 0;
  }

  Status startNext() {
    current = Communicator::Impl::Prepared{};
    if (next == 0 && !p2p.empty()) {
      if (comm->failed.load())
        if (Status st = comm->failureToReport(); !st.ok())
          return st.withContext("rank " + std::to_string(comm->rank));
      CHORUS_RETURN_IF_ERROR(mergeP2p(comm, p2p, &current));
      current.startNs = nowNs();
      current.recorded =
          comm->recorder->begin(current.desc, 0, "grouped send/recv", current.startNs);
    } else {
      const Queued* q = collectives[(next - (p2p.empty() ? 0 : 1)) / perCollective()];
      if (isAgreement(next))
        CHORUS_RETURN_IF_ERROR(comm->prepareAgreement(callPrint(q->desc), &current));
      else
        CHORUS_RETURN_IF_ERROR(comm->prepare(q->desc, q->in, q->out, q->scalar(), &current));
    }
    comm->start(current);
    running = true;
    return Status::Ok();
  }
};

void idleWait(std::vector<CommWork>& work, int64_t idleSince, uint64_t idle) {
  const CommWork* only = nullptr;
  int active = 0;
  for (const CommWork& w : work)
    if (!w.done) {
      only = &w;
      ++active;
    }
  const ExecEnv& env = only->comm->executor->env();
  if (nowNs() - idleSince < env.spinNs || (idle & 63) != 63) {
    sched_yield();  // not a pause: see Executor::run
    return;
  }
  if (active == 1 && env.doorbell) {
    // One communicator left: sleep on its doorbell like a single call would.
    uint32_t token = env.doorbell->prepareSleep();
    env.doorbell->sleep(token, 1000000);
    env.doorbell->endSleep();
  } else {
    timespec ts{0, 20000};
    nanosleep(&ts, nullptr);
  }
}

Status runGroup(std::vector<Queued>& ops) {
  std::vector<CommWork> work;
  for (const Queued& q : ops) {
    auto it =
        std::find_if(work.begin(), work.end(), [&](const CommWork& w) { return w.comm == q.comm; });
    if (it == work.end()) {
      work.push_back(CommWork{});
      it = work.end() - 1;
      it->comm = q.comm;
    }
    (isP2p(q.desc) ? it->p2p : it->collectives).push_back(&q);
  }
  for (CommWork& w : work) w.agree = !w.collectives.empty() && w.comm->config.checkCalls == 2;
  Status first;
  auto failAll = [&](const Status& st) {
    if (first.ok()) first = st;
    for (CommWork& w : work)
      if (!w.done) {
        if (w.running) (void)w.comm->failedRun(st, w.current);
        w.done = true;
      }
  };
  int64_t idleSince = nowNs();
  for (uint64_t idle = 0;;) {
    bool moved = false, active = false;
    for (CommWork& w : work) {
      if (w.done) continue;
      if (!w.running) {
        if (w.next == w.phases()) {
          w.done = true;
          continue;
        }
        Status st = w.startNext();
        if (!st.ok()) {
          failAll(st);
          break;
        }
      }
      active = true;
      Status err;
      Executor::Poll p = w.comm->executor->poll(&err);
      if (p == Executor::Poll::Failed) {
        Status st = w.comm->failedRun(err, w.current);
        w.running = false;
        w.done = true;
        failAll(st);
        break;
      }
      if (p == Executor::Poll::Done) {
        Status st = w.comm->finish(w.current);
        w.running = false;
        if (!st.ok()) {
          w.done = true;
          failAll(w.comm->failedRun(st, w.current));
          break;
        }
        if (w.isAgreement(w.next++)) {
          // Every rank found the same: the call and the rest of the group are run nowhere,
          // and the communicator stays usable.
          if (Status st = w.comm->agreement(); !st.ok()) {
            w.done = true;
            if (first.ok()) first = st.withContext("rank " + std::to_string(w.comm->rank));
          }
        }
      }
      moved |= p != Executor::Poll::Idle;
    }
    if (!active) break;
    if (moved) {
      idle = 0;
      idleSince = nowNs();
      continue;
    }
    ++idle;
    if ((idle & 63) == 0) {
      for (CommWork& w : work) {
        if (w.done || !w.running) continue;
        Status st = w.comm->executor->checkIdle();
        if (!st.ok()) {
          Status named = w.comm->failedRun(st, w.current);
          w.running = false;
          w.done = true;
          failAll(named);
          break;
        }
      }
    }
    bool anyLeft = std::any_of(work.begin(), work.end(), [](const CommWork& w) { return !w.done; });
    if (!anyLeft) break;
    idleWait(work, idleSince, idle);
  }
  return first;
}

}  // namespace

void groupStart() {
  ++tlsGroup.depth;
}
int groupDepth() {
  return tlsGroup.depth;
}

namespace {

// Leaves one level; at the outermost hands over what was queued (and why it must not run).
bool leave(std::vector<Queued>* ops, Status* failed) {
  GroupState& g = tlsGroup;
  if (--g.depth > 0) return false;
  ops->swap(g.ops);
  g.ops.clear();
  *failed = g.failed;
  g.failed = Status::Ok();
  return true;
}

Status notRun(const Status& st) {
  return Status(st.code(), "not run: an earlier call in this group failed: " + st.message());
}

}  // namespace

Status groupEnd() {
  if (tlsGroup.depth == 0)
    return Status::InvalidUsage("groupEnd() without a matching groupStart()");
  std::vector<Queued> ops;
  Status failed;
  if (!leave(&ops, &failed)) return Status::Ok();
  if (!failed.ok()) return notRun(failed);
  if (ops.empty()) return Status::Ok();
  return runGroup(ops);
}

Status groupEndWithoutRunning() {
  if (tlsGroup.depth == 0)
    return Status::InvalidUsage("groupEnd() without a matching groupStart()");
  std::vector<Queued> ops;
  Status failed;
  if (!leave(&ops, &failed)) return Status::Ok();
  return failed.ok() ? Status::Ok() : notRun(failed);
}

void failOpenGroup(const Status& st) {
  if (tlsGroup.depth > 0 && tlsGroup.failed.ok()) tlsGroup.failed = st;
}

double estimateOpenGroupMicros() {
  double micros = 0;
  // One after another: an upper bound where the group would overlap them.
  for (const Queued& q : tlsGroup.ops) micros += estimateMicros(*q.comm, q.desc);
  return micros;
}

Status enqueueInGroup(Communicator::Impl* comm, const OpDesc& d, const void* in, void* out,
                      const void* premulScalar) {
  std::vector<Queued>& ops = tlsGroup.ops;
  ops.push_back(Queued{comm, d, in, out, premulScalar != nullptr, {}});
  if (premulScalar) memcpy(ops.back().scalarCopy, premulScalar, dataTypeSize(d.dtype));
  return Status::Ok();
}

}  // namespace chorus
