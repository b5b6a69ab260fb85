// The executor with one peer, rank 1, played by a HeldConnection, so that the executor's own
// tests can drive it pass by pass and decide when the "transport" moves.
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <vector>

#include "core/executor.h"
#include "harness/held_connection.h"

namespace chorus {

struct OnePeerExecutor {
  // Float buffers of `count` elements, filled with inValue and outValue; messages of lendFrom
  // bytes or more are lent (0: none).
  OnePeerExecutor(size_t lendFrom, size_t count, float inValue, float outValue)
      : conn(lendFrom), in(count, inValue), out(count, outValue) {
    ExecEnv env;
    env.rank = 0;
    env.conns = {nullptr, &conn};
    env.failed = &failed;
    env.failure = [] { return Status::Ok(); };
    executor = std::make_unique<Executor>(std::move(env));
  }
  void start(Schedule s, const OpDesc& d, DataEngine* engine) {
    peerSaysReady(s, d);
    plan = Plan::make(std::move(s));
    bufs.input = MemRef::host(in.data());
    bufs.output = MemRef::host(out.data());
    bufs.engine = engine;
    executor->start(plan, d, 0, RedOp::Sum, bufs, Deadline::after(10));
  }
  // The peer, in the same collective, says so as it starts when it only receives from rank 0
  // (core/executor_notices.cc): rank 0 does not finish without hearing it.
  void peerSaysReady(const Schedule& s, const OpDesc& d) {
    bool sends = false, receives = false;
    for (const Step& step : s.steps) {
      sends |= step.kind == StepKind::Send;
      receives |= step.kind == StepKind::Recv || step.kind == StepKind::RecvReduce;
    }
    if (!sends || receives || d.coll == Collective::Send || d.coll == Collective::Recv) return;
    const WireHeader ready{d.count,       0,         d.root, 0, uint8_t(d.coll), uint8_t(d.dtype),
                           uint8_t(d.op), kWireReady};
    conn.inbox.push_back({ready, {}});
  }
  // One pass, which must not fail.
  Executor::Poll poll() {
    Status err;
    Executor::Poll p = executor->poll(&err);
    EXPECT_TRUE(err.ok()) << err.toString();
    return p;
  }
  // A pass that finishes the last step reports Moved; the next one Done.
  bool finishesWithin(int polls) {
    for (int i = 0; i < polls; ++i)
      if (poll() == Executor::Poll::Done) return true;
    return false;
  }

  std::atomic<bool> failed{false};
  HeldConnection conn;
  std::unique_ptr<Executor> executor;
  Plan plan;
  ExecBuffers bufs;
  std::vector<float> in, out;
};

}  // namespace chorus
