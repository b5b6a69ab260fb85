// The state behind a Communicator. Split from communicator.h so that internal faces (the NCCL
// ABI, tests) can reach it without widening the public API.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "bootstrap/bootstrap.h"
#include "chorus/communicator.h"
#include "core/call_agreement.h"
#include "core/executor.h"
#include "core/flight_recorder.h"
#include "core/op_desc.h"
#include "topo/topology.h"
#include "transport/doorbell.h"
#include "transport/transport.h"
#include "tune/selector.h"

namespace chorus {

struct JobShape;  // transport/registry.h

// A growable, 64-byte aligned byte buffer for scratch space that lives across calls.
class ScratchBuffer {
 public:
  ~ScratchBuffer() { free(data_); }
  void* get(size_t bytes);

 private:
  void* data_ = nullptr;
  size_t capacity_ = 0;
};

struct Communicator::Impl {
  int rank = 0;
  int size = 1;
  Config config;
  // The executor sleeps on it and every transport rings it; it outlives them all.
  Doorbell doorbell;
  std::unique_ptr<Bootstrap> bootstrap;
  std::vector<std::unique_ptr<Transport>> transports;  // in the order made (registry order)
  std::string transportNames;  // those this rank talks over, "shm+tcp", for logs and tools
  std::unique_ptr<Executor> executor;
  topo::Topology topology;  // the job's machines (and tuned estimates), for the selector
  RankLayout layout;        // the topology's hosts, for hierarchical algorithms
  CostParams costParams;
  AlgoOverride algoOverride;
  // The algorithm chosen per (collective, root, size class): chosen once, logged once.
  std::map<std::tuple<Collective, int, int>, const Algorithm*> choices;
  std::map<std::tuple<Collective, int, int>, size_t> chunkChoices;  // Selection::chunkBytes
  std::unordered_map<OpDesc, Plan, OpDescHash> plans;
  // The plans of the last two different calls: a loop of the same call, or of a send and a
  // receive taking turns, skips the hash (plans never move).
  struct RecentPlan {
    OpDesc desc;
    const Plan* plan = nullptr;
  };
  RecentPlan recentPlans[2];
  const Plan* remember(const OpDesc& d, const Plan* p) {
    recentPlans[1] = recentPlans[0];
    recentPlans[0] = {d, p};
    return p;
  }
  int cudaDevice = -1;  // current on the creating thread; -1 where CUDA is not usable
  uint32_t opSeq = 0;   // collectives issued so far; travels in every message header
  CallPrint myPrint;    // CHORUS_CHECK_CALLS=2: what this rank was asked
  std::vector<CallPrint> agreedPrints;  // and what every rank was, once agreed
  // The last calls, for dumps on timeout, abort and SIGUSR1 (core/flight_recorder.h).
  std::unique_ptr<FlightRecorder> recorder;  // CHORUS_TRACE_BUFFER entries (0: off)
  FlightDumpInfo dumpInfo;
  uint64_t signalDumpHandle = 0;
  // Shrinking after a death needs a rendezvous that no dead rank is part of: every rank reserves
  // a port from init on (bound, not listening, so strangers are refused), and the survivors
  // meet at the first survivor's, which listens only then (comm_shrink.cc).
  Socket recoveryListener;
  std::vector<SockAddr> recoveryAddrs;  // by rank
  int shrinks = 0;
  ScratchBuffer scratch, staging;

  std::atomic<bool> failed{false};
  // Set once a failure notice came through the bootstrap: the job knows of a failure already.
  std::atomic<bool> failureIsKnown{false};
  mutable std::mutex errorMu;
  Status error;  // guarded by errorMu; the first failure wins
  // A transport's lost connection, guarded by errorMu: often a symptom (the peer failed only
  // because a third rank died, which the bootstrap is about to report), so it becomes the
  // error only if no root cause arrives within suspectGrace.
  Status suspect;
  Deadline suspectGrace = Deadline::never();

  Impl();
  ~Impl();
  Status init(const UniqueId& id, int rank, int size, const Config& config);
  Status initOverBootstrap(Deadline deadline);  // init's steps after the bootstrap connected
  Status rootCauseOf(const Status& initFailure);
  // Records the first failure and wakes a call that may be sleeping on a peer.
  void fail(const Status& st);
  // A transport lost a connection (any thread). Records it as the suspect, raises `failed` and
  // wakes the executor; never waits.
  void transportFailed(const Status& st);
  // What a waiting call fails with now: the error; else the suspect once its grace is over
  // (it becomes the error); else Ok, while the grace runs.
  Status failureToReport();
  Status currentError() const;  // the error, or else the suspect
  // Validates nothing: the entry points have. Runs `d` to completion, or queues it when a
  // group is open on this thread.
  Status run(const OpDesc& d, bool inGroup, const void* in, void* out, const void* premulScalar);
  // A lone small send or receive done at once (Executor::sendAtOnce): true if it was.
  bool p2pAtOnce(const OpDesc& d, const void* in, void* out);

  // One call made ready to execute: its plan, bound buffers and lowered op.
  struct Prepared {
    const Plan* plan = nullptr;
    // For plans built per call (grouped point-to-point); a pointer, because a Plan's dozen
    // vectors made and dropped on every other call cost ~100 instructions of an 8 B allreduce.
    std::unique_ptr<Plan> ownedPlan;
    OpDesc desc;
    ExecBuffers bufs;
    RedOp op = RedOp::Sum;
    uint32_t seq = 0;
    void* out = nullptr;
    uint64_t recorded = 0;  // its flight recorder entry
    int64_t startNs = 0;    // when it was prepared; its deadline counts from here
  };
  Status prepare(const OpDesc& d, const void* in, void* out, const void* premulScalar, Prepared* p);
  Status refuseDeviceMemory(const OpDesc& d, const void* in, const void* out);
  // CHORUS_CHECK_CALLS=2 (core/call_agreement.h): the allgather of every rank's `mine`, made
  // ready like a call; once it ran, agreement() says whether all ranks asked for the same.
  Status prepareAgreement(const CallPrint& mine, Prepared* p);
  Status agreement() const { return compareCallPrints(agreedPrints); }
  void start(const Prepared& p);
  // After the executor finished: post-processing (Avg's division).
  Status finish(const Prepared& p);
  // Records a failed run: poisons the communicator and tells the peers if it started here.
  Status failedRun(const Status& st, const Prepared& p);
  // Runs a prepared call to its end, here on the calling thread.
  Status execute(const Prepared& p);
  // Writes the flight recorder (CHORUS_TRACE_DIR); `reason` says why.
  void dumpFlightRecorder(const std::string& reason) const;

 private:
  // The cached plan for `d`, choosing its algorithm on first use; fails only when the override
  // forces an algorithm that cannot run `d`.
  Status planFor(const OpDesc& d, const Plan** out);
  Status loadTuning(Deadline deadline);
  // Host grouping and the settings that must agree across ranks, in one exchange.
  Status exchangeHosts(Deadline deadline, JobShape* job);
  // Makes the registry's transports for this job and fills env's connections
  // (comm_transports.cc).
  Status connectTransports(Deadline deadline, ExecEnv* env);
};

}  // namespace chorus
