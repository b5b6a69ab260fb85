// The one executor: runs any rank's Schedule over its connections, chunk by chunk, with every
// wait bounded by a deadline and cut short by a communicator-wide failure. A run is started,
// then polled until done; run() does both and sleeps when idle, while a group drives several
// executors (one per communicator) from one thread by polling them in turn.
#pragma once

#include <atomic>
#include <functional>
#include <vector>

#include "algorithms/schedule.h"
#include "algorithms/schedule_index.h"
#include "chorus/status.h"
#include "common/clock.h"
#include "core/op_desc.h"
#include "engine/cpu_engine.h"
#include "engine/data_engine.h"
#include "transport/doorbell.h"
#include "transport/transport.h"

namespace chorus {

class FlightRecorder;

// Where a run stands on one step.
struct StepProgress {
  uint64_t done = 0;
  uint64_t chunks = 0;
  uint64_t posted = 0;  // a receive's chunks offered to postReceive
  // The engine's work on chunks [done, inflightTo) not yet finished (a receive holds its
  // message until then). Never set on the CPU engine, which finishes before it returns.
  Completion inflight;
  uint64_t inflightTo = 0;
};

// What every run of a schedule starts from, worked out once with its index: a warm call
// copies it instead of walking the schedule (Executor::start).
struct RunStart {
  std::vector<StepProgress> steps;
  std::vector<int> sendHead, recvHead;  // by peer slot: the first step with chunks, or -1
  // By peer slot, for a collective's ready notices (executor_notices.cc): 1 where this rank
  // only receives from the peer (owes it one) / only sends to it (awaits one); and how many.
  std::vector<uint8_t> owesNotice, awaitsNotice;
  size_t noticesOwed = 0, noticesAwaited = 0;
  // By step: 1 where its writes stay in the cache even when the call's output is streamed
  // (ExecEnv::streamBytes): a later step reads them chunk by chunk, straight after.
  std::vector<uint8_t> keepCached;

  static RunStart make(const Schedule& s, const ScheduleIndex& index);
};

// A Schedule and its index (channel order, chunks, what each chunk waits for), worked out once
// when the schedule is cached.
struct Plan {
  Schedule schedule;
  // For the chunking of the executor that runs the plan (ExecEnv::chunking). A plan made
  // without one is indexed when a run starts: grouped point-to-point, built per call anyway.
  ScheduleIndex index;
  RunStart start;  // with the index

  static Plan make(Schedule s);
  static Plan make(Schedule s, const Chunking& c);
};

// A run's buffers, bound to memory, and the engine that touches them (all of one kind).
struct ExecBuffers {
  MemRef input, output, scratch;
  std::vector<MemRef> user;  // BufferId kFirstUserBuffer + k
  DataEngine* engine = nullptr;
};

struct ExecEnv {
  int rank = 0;
  std::vector<Connection*> conns;       // by peer rank
  std::vector<Transport*> transportOf;  // by peer rank: whose connection, for errors
  size_t chunkBytes = 1 << 20;          // the job's message size: every transport carries it
  std::vector<size_t> maxChunkBytesOf;  // by peer rank: the most its transport carries, or 0
  Doorbell* doorbell = nullptr;         // slept on when idle; null: spin only
  // Set when the communicator has an error, or a transport suspects one.
  const std::atomic<bool>* failed = nullptr;
  // Once `failed` is set: the error to fail with now, or Ok while a transport's suspected
  // failure waits for its root cause (the run goes on polling meanwhile).
  std::function<Status()> failure;
  std::function<bool(int)> peerLeft;  // has this peer left the job cleanly?
  int64_t spinNs = 50000;
  // Idle polls that spin without yielding the core before the spin yields (Executor::run).
  uint64_t busyPolls = 64;
  // A call that touches at least this many bytes of the caller's buffers (input and output)
  // writes its output around the caches (0: never).
  size_t streamBytes = 32 << 20;
  bool readyNotices = true;            // Config::checkCalls (executor_notices.cc)
  FlightRecorder* recorder = nullptr;  // told whom a call waits on before each sleep

  // How this job cuts a schedule whose elements are `elementBytes` long.
  Chunking chunking(size_t elementBytes) const {
    return {elementBytes, chunkBytes, maxChunkBytesOf};
  }
};

// Fills RunStart's notice roles for `s` cut as `index` says (executor_notices.cc).
void findNoticeRoles(const Schedule& s, const ScheduleIndex& index, RunStart* start);

class Executor {
 public:
  explicit Executor(ExecEnv env) : env_(std::move(env)) {}

  // Prepares to run `plan` for `desc` (the opSeq-th collective). Avg and PreMulSum arrive here
  // lowered to Sum. Point-to-point plans count in bytes (desc.dtype Uint8). `plan` and `bufs`
  // must outlive the run.
  void start(const Plan& plan, const OpDesc& desc, uint32_t opSeq, RedOp reduceOp,
             const ExecBuffers& bufs, Deadline deadline);
  enum class Poll { Done, Moved, Idle, Failed };
  // One pass over the steps; Failed leaves the error in *err.
  Poll poll(Status* err);
  // For callers that idle: the communicator's failure, the deadline, or a peer this run still
  // needs having left the job. May poll once more (so call poll() again after it).
  Status checkIdle();
  // start + poll until done, spinning then sleeping on the transport when idle.
  Status run(const Plan& plan, const OpDesc& desc, uint32_t opSeq, RedOp reduceOp,
             const ExecBuffers& bufs, Deadline deadline);
  const ExecEnv& env() const { return env_; }

  // A lone point-to-point call, between runs, without a plan, for messages the general path
  // would send whole (at most one chunk for this peer) up to kAtOnceBytes: the send posts its
  // message (the transport copies it now), the receive takes its message if it is there or
  // arrives within the first idle polls (ExecEnv::busyPolls). False where that cannot be done
  // at once (too large, no credit, nothing arrived yet, a header other than the one expected,
  // a failure, memory still lent): the caller then takes the general path, which waits, or
  // reports what differs.
  static constexpr size_t kAtOnceBytes = 4096;
  bool sendAtOnce(int peer, const void* data, uint32_t bytes);
  bool receiveAtOnce(int peer, void* data, uint32_t bytes);
  // After a failed run, before its buffers go back to the caller: makes every connection stop
  // touching memory that this run lent it (postSend) or posted to it (postReceive).
  void reclaimLent();

 private:
  // A chunk whose send the connection has not finished: [begin, end) of a buffer must not be
  // written until conn->test(sent). A run is not done while any is out.
  struct Lent {
    Connection* conn;
    Completion sent;
    int peer;
    const char* begin;
    const char* end;
  };
  static constexpr size_t kMaxLent = 256;  // beyond this, sends copy: each write scans the list
  static constexpr uint64_t kCopyChunksPerPass = 4;

  MemRef ref(BufRef r) const {
    const MemRef* base = r.buf == BufferId::Input     ? &bufs_->input
                         : r.buf == BufferId::Output  ? &bufs_->output
                         : r.buf == BufferId::Scratch ? &bufs_->scratch
                                                      : &bufs_->user[int(r.buf) - kFirstUserBuffer];
    return *base + r.offset * esize_;
  }
  bool finished(int i) const { return state_[i].done == state_[i].chunks; }
  uint64_t footprintBytes(const OpDesc& d) const;
  int skipDone(int i) const;
  // The peer slot of step i's channel (the index numbers channels 2 * slot + isSend).
  int slotOf(int i) const { return index_->channel(i) >> 1; }
  bool depsReady(int i, uint64_t chunk) const;
  uint64_t chunkCount(int i, uint64_t chunk) const;
  bool advanceSend(int i);
  bool advanceRecv(int i, Status* err);
  bool advanceCopy(int i);
  bool inflightFinished(StepProgress& st);
  // The engine's copy and reduce; the CPU engine's inlined (see cpu_).
  // Whether step i writes around the caches: into the output of a call larger than them
  // (streamOutput_), where nothing reads the data straight back.
  bool streams(int i) const {
    return streamOutput_ && (*steps_)[i].dst.buf == BufferId::Output && !fresh_->keepCached[i];
  }
  Completion engineCopy(MemRef dst, MemRef src, size_t bytes, bool streamed) {
    if (streamed)
      return cpu_ ? cpu_->copyStreaming(dst, src, bytes) : engine_->copyStreaming(dst, src, bytes);
    return cpu_ ? cpu_->copy(dst, src, bytes) : engine_->copy(dst, src, bytes);
  }
  // A reduce that accumulates in place (dst is a) keeps to the cache: it has just read those
  // lines, and non-temporal stores to lines in the cache cost more than they save (2-rank
  // in-place reduce_scatter of 256 MiB: 1.7x the time; 4 ranks out of place: 1.2x).
  Completion engineReduce(MemRef dst, MemRef a, MemRef b, size_t n, bool streamed) {
    if (streamed && dst.ptr != a.ptr)
      return cpu_ ? cpu_->reduceStreaming(desc_.dtype, op_, dst, a, b, n)
                  : engine_->reduceStreaming(desc_.dtype, op_, dst, a, b, n);
    return cpu_ ? cpu_->reduce(desc_.dtype, op_, dst, a, b, n)
                : engine_->reduce(desc_.dtype, op_, dst, a, b, n);
  }
  void postReceives(int i, Connection* c, MemRef dst);
  bool lentPending();                                     // drops the returned ones
  bool lentOverlaps(const char* begin, const char* end);  // ... then checks the rest
  bool headerMatches(const WireHeader& h, const Step& s, uint64_t n) const;
  bool goesAtOnce(int peer, uint32_t bytes) const;  // the size rule of both *AtOnce calls
  // What differs between `got`, from `peer`, and the message expected: data of `expectBytes`
  // (for a point-to-point step of `p2pCount` bytes), or a ready notice.
  Status mismatch(const WireHeader& got, int peer, uint64_t p2pCount, uint64_t expectBytes,
                  bool expectNotice = false) const;
  // Posts the notices owed and takes those awaited; a message other than the notice awaited
  // is a mismatch, left in *err.
  bool settleNotices(Status* err);
  bool takeNotice(size_t slot, Status* err);
  int awaitedNoticePeer() const;  // the first peer whose notice this run still awaits, or -1
  std::string blockedOn() const;  // the call and the first step still waiting, for errors
  // The first step still waiting (index, or -1) and its peer.
  int firstWaitingStep() const;
  Status waitingError() const;
  int departedPeer() const;  // a peer an unfinished step needs that has left, or -1
  const char* transportName(int peer) const;
  Status failureNow() const;  // the communicator's failure to report now, if any

  ExecEnv env_;
  // The current run.
  const Plan* plan_ = nullptr;
  const ScheduleIndex* index_ = nullptr;  // the plan's, or ownIndex_ when it has none
  ScheduleIndex ownIndex_;
  RunStart ownStart_;                // with ownIndex_
  const RunStart* fresh_ = nullptr;  // the plan's, or ownStart_
  const std::vector<Step>* steps_ = nullptr;
  OpDesc desc_;
  RedOp op_ = RedOp::Sum;
  const ExecBuffers* bufs_ = nullptr;
  DataEngine* engine_ = nullptr;
  // engine_, when it is the CPU engine, called without a virtual dispatch: through the
  // virtual call a 4-rank 16 KiB reduce_scatter measured 9% slower than the direct reducer
  // call it replaced, inlined 1% (perf/ab.sh against 6f72ed8).
  CpuEngine* cpu_ = nullptr;
  Deadline deadline_ = Deadline::never();
  size_t esize_ = 1;
  bool p2p_ = false;
  bool streamOutput_ = false;  // the call touches at least ExecEnv::streamBytes of buffers
  WireHeader expect_{};
  size_t first_ = 0;  // steps before this are all done
  std::vector<StepProgress> state_;
  std::vector<int> sendHead_, recvHead_;
  std::vector<Lent> lent_;
  // By peer slot: a ready notice this run owes the peer / awaits from it; how many of each.
  std::vector<uint8_t> owesNotice_, awaitsNotice_;
  size_t noticesOwed_ = 0, noticesAwaited_ = 0;
};

}  // namespace chorus
