// A warm call allocates nothing: after a few calls of each kind (plans cached, run state sized),
// the thread that makes 200 more calls of each kind allocates no memory. Counted by replacing
// the global operator new in this test binary, which libchorus's allocations go through too.
#include <gtest/gtest.h>
#include <sys/syscall.h>

#include <cstdlib>
#include <map>
#include <new>
#include <vector>

#include "harness/multirank.h"
#include "harness/syscall_counter.h"

namespace {
thread_local bool counting = false;
thread_local long allocations = 0;
}  // namespace

void* operator new(size_t n) {
  if (counting) ++allocations;
  if (void* p = malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void* operator new[](size_t n) {
  return operator new(n);
}
void* operator new(size_t n, std::align_val_t a) {
  if (counting) ++allocations;
  if (void* p = aligned_alloc(size_t(a), (n + size_t(a) - 1) / size_t(a) * size_t(a))) return p;
  throw std::bad_alloc();
}
void* operator new[](size_t n, std::align_val_t a) {
  return operator new(n, a);
}
void operator delete(void* p) noexcept {
  free(p);
}
void operator delete[](void* p) noexcept {
  free(p);
}
void operator delete(void* p, size_t) noexcept {
  free(p);
}
void operator delete[](void* p, size_t) noexcept {
  free(p);
}
void operator delete(void* p, std::align_val_t) noexcept {
  free(p);
}
void operator delete[](void* p, std::align_val_t) noexcept {
  free(p);
}
void operator delete(void* p, size_t, std::align_val_t) noexcept {
  free(p);
}
void operator delete[](void* p, size_t, std::align_val_t) noexcept {
  free(p);
}

namespace chorus::test {
namespace {

// Every collective once (8 B per rank; with `large`, also a 1 MiB allreduce, several chunks),
// and a send/recv pair between ranks 0 and 1.
Status everyCall(Communicator& c, std::vector<float>& in, std::vector<float>& out,
                 bool large = true) {
  CHORUS_RETURN_IF_ERROR(c.allReduce(in.data(), out.data(), 2, DataType::Float32, RedOp::Sum));
  if (large)
    CHORUS_RETURN_IF_ERROR(
        c.allReduce(in.data(), out.data(), 1 << 18, DataType::Float32, RedOp::Sum));
  CHORUS_RETURN_IF_ERROR(c.broadcast(in.data(), out.data(), 2, DataType::Float32, 0));
  CHORUS_RETURN_IF_ERROR(c.reduce(in.data(), out.data(), 2, DataType::Float32, RedOp::Max, 1));
  CHORUS_RETURN_IF_ERROR(c.reduceScatter(in.data(), out.data(), 2, DataType::Float32, RedOp::Sum));
  CHORUS_RETURN_IF_ERROR(c.allGather(in.data(), out.data(), 2, DataType::Float32));
  CHORUS_RETURN_IF_ERROR(c.allToAll(in.data(), out.data(), 2, DataType::Float32));
  CHORUS_RETURN_IF_ERROR(c.barrier());
  if (c.rank() == 0) {
    CHORUS_RETURN_IF_ERROR(c.send(in.data(), 2, DataType::Float32, 1));
    return c.recv(out.data(), 2, DataType::Float32, 1);
  }
  if (c.rank() == 1) {
    CHORUS_RETURN_IF_ERROR(c.recv(out.data(), 2, DataType::Float32, 0));
    return c.send(in.data(), 2, DataType::Float32, 0);
  }
  return Status::Ok();
}

TEST(WarmCall, AllocatesNothing) {
  auto results = runRanks(3, [](RankContext& ctx) {
    auto comm = ctx.connect();
    if (!comm) return 1;
    std::vector<float> in(1 << 18, 1.0f), out(3 << 18);
    Status st;
    for (int i = 0; i < 5 && st.ok(); ++i) st = everyCall(*comm, in, out);
    counting = true;
    for (int i = 0; i < 200 && st.ok(); ++i) st = everyCall(*comm, in, out);
    counting = false;
    if (!st.ok()) {
      ctx.report("%s", st.toString().c_str());
      return 1;
    }
    if (allocations) ctx.report("%ld allocations in 200 rounds of warm calls", allocations);
    // The count sees the library's allocations: a call of a new count makes its plan.
    const long warm = allocations;
    counting = true;
    st = comm->allReduce(in.data(), out.data(), 3, DataType::Float32, RedOp::Sum);
    counting = false;
    if (!st.ok() || allocations == warm) {
      ctx.report("a cold call counted no allocation (%s)", st.toString().c_str());
      return 1;
    }
    return warm ? 1 : 0;
  });
  EXPECT_EQ(describeFailures(results), "");
}

// A warm small call makes no system call on its way: the calling thread's system calls during
// 200 rounds of every kind of 8-byte call are counted (harness/syscall_counter.h), all but the
// ones a call makes only to wait for a peer that is not there yet (futex sleeps and wakes,
// sched_yield while spinning). A clock read that is no system call (vDSO) is not seen either.
TEST(WarmCall, SmallCallsMakeNoSystemCallButToWait) {
  auto results = runRanks(3, [](RankContext& ctx) {
    auto comm = ctx.connect();
    if (!comm) return 1;
    std::vector<float> in(64, 1.0f), out(192);
    Status st;
    for (int i = 0; i < 5 && st.ok(); ++i) st = everyCall(*comm, in, out, false);
    SyscallCounter counter({SYS_futex, SYS_sched_yield});
    if (!counter.ok()) {
      ctx.report("cannot count system calls here: %s", counter.whyNot().c_str());
      return 77;
    }
    counter.start();
    for (int i = 0; i < 200 && st.ok(); ++i) st = everyCall(*comm, in, out, false);
    const std::map<long, long> made = counter.stop();
    if (!st.ok()) {
      ctx.report("%s", st.toString().c_str());
      return 1;
    }
    if (!made.empty()) {
      ctx.report("system calls in 200 rounds of warm small calls: %s",
                 SyscallCounter::describe(made).c_str());
      return 2;
    }
    // The counter sees this thread's system calls.
    counter.start();
    (void)syscall(SYS_getppid);
    if (counter.stop() != std::map<long, long>{{SYS_getppid, 1}}) {
      ctx.report("getppid() was not counted");
      return 3;
    }
    return 0;
  });
  if (results[0].exitCode == 77) GTEST_SKIP() << results[0].report;
  EXPECT_EQ(describeFailures(results), "");
}

}  // namespace
}  // namespace chorus::test
