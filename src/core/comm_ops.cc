// The collective entry points: every call checked once (core/call_args.h), then one path
// (Impl::run) for all of them.
#include <bit>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "common/log.h"
#include "core/call_args.h"
#include "core/comm_impl.h"
#include "core/group_queue.h"
#include "engine/cuda_runtime.h"

namespace chorus {

void* ScratchBuffer::get(size_t bytes) {
  if (bytes == 0) bytes = 1;  // callers treat null as out of memory
  if (bytes <= capacity_) return data_;
  free(data_);
  capacity_ = (bytes + 63) & ~size_t(63);
  data_ = aligned_alloc(64, capacity_);
  if (!data_) capacity_ = 0;
  return data_;
}

void Communicator::Impl::fail(const Status& st) {
  {
    std::lock_guard<std::mutex> g(errorMu);
    if (!error.ok()) return;
    error = st;
  }
  failed.store(true, std::memory_order_release);
  doorbell.wake();  // a call may be asleep waiting on a peer
  LOG_WARN(kLogInit, "rank %d: communicator failed: %s", rank, st.toString().c_str());
}

void Communicator::Impl::transportFailed(const Status& st) {
  {
    std::lock_guard<std::mutex> g(errorMu);
    if (!error.ok() || !suspect.ok()) return;
    suspect = st;
    // Long enough for rank 0 to relay a death it saw on the star, short against any timeout.
    suspectGrace = Deadline::after(std::min(0.5, config.timeoutSec / 4));
  }
  LOG_INFO(kLogInit, "rank %d: %s; waiting briefly for a root cause", rank, st.toString().c_str());
  failed.store(true, std::memory_order_release);
  doorbell.wake();
}

Status Communicator::Impl::failureToReport() {
  Status promoted;
  {
    std::lock_guard<std::mutex> g(errorMu);
    if (!error.ok()) return error;
    if (suspect.ok() || !suspectGrace.expired()) return Status::Ok();
    promoted = suspect;
  }
  fail(promoted);
  return currentError();
}

Status Communicator::Impl::currentError() const {
  std::lock_guard<std::mutex> g(errorMu);
  return error.ok() ? suspect : error;
}

Status Communicator::Impl::planFor(const OpDesc& d, const Plan** out) {
  for (const RecentPlan& r : recentPlans)
    if (r.plan && d == r.desc) {
      *out = r.plan;
      return Status::Ok();
    }
  auto it = plans.find(d);
  if (it != plans.end()) {
    *out = remember(d, &it->second);
    return Status::Ok();
  }
  // Size classes are powers of two of the bytes each rank contributes.
  const auto key =
      std::make_tuple(d.coll, d.root, int(std::bit_width(d.count * dataTypeSize(d.dtype))));
  const Algorithm*& algo = choices[key];
  if (!algo) {
    Selection sel;
    Status st = selectAlgorithm(d, size, layout, topology, costParams, algoOverride, &sel);
    if (!st.ok()) {
      choices.erase(key);
      return st.withContext("rank " + std::to_string(rank));
    }
    algo = sel.chosen;
    chunkChoices[key] = sel.chunkBytes;
    if (rank == 0 && sel.candidates.size() > 1)
      LOG_INFO(kLogTune, "%s on %d ranks: %s", d.toString().c_str(), size, sel.describe().c_str());
  }
  // Every rank makes the same choices in the same order, so both ends of each channel cut
  // their steps alike.
  Schedule s = algo->build(d, rank, size, layout);
  s.chunkBytes = chunkChoices[key];
  const Chunking chunking = executor->env().chunking(dataTypeSize(d.dtype));
  it = plans.emplace(d, Plan::make(std::move(s), chunking)).first;
  *out = remember(d, &it->second);
  return Status::Ok();
}

namespace {

std::string pointerText(const void* p) {
  char text[32];
  snprintf(text, sizeof text, "%p", p);
  return text;
}

}  // namespace

// Stage one of the CUDA path: device buffers are recognised, so that the CPU never reads them
// (it would fault, or read garbage), and refused with what to do instead.
Status Communicator::Impl::refuseDeviceMemory(const OpDesc& d, const void* in, const void* out) {
  for (const void* p : {in, out}) {
    int device = -1;
    if (CudaRuntime::get().classify(p, &device) == MemoryKind::CudaDevice)
      return Status::InvalidUsage(
          "rank " + std::to_string(rank) + ": " + d.toString() + ": the buffer at " +
          pointerText(p) + " is memory of CUDA device " + std::to_string(device) +
          ", and collectives on device memory are not built yet (docs/gpu.md): pass host "
          "buffers (ordinary, cudaMallocHost or managed memory)");
  }
  return Status::Ok();
}

Status Communicator::Impl::prepare(const OpDesc& d, const void* in, void* out,
                                   const void* premulScalar, Prepared* p) {
  // (A failure still waiting for its root cause lets the call start: it fails with that cause.)
  if (failed.load(std::memory_order_acquire))
    if (Status st = failureToReport(); !st.ok())
      return st.withContext("rank " + std::to_string(rank) + ": " + d.toString() +
                            " refused, the communicator failed earlier");
  if (cudaDevice >= 0) CHORUS_RETURN_IF_ERROR(refuseDeviceMemory(d, in, out));
  CHORUS_RETURN_IF_ERROR(planFor(d, &p->plan));
  p->desc = d;
  p->out = out;
  // Host memory only, so far: refuseDeviceMemory turned device buffers away above.
  DataEngine* engine = engineFor(MemoryKind::Host);
  const size_t esize = dataTypeSize(d.dtype);
  p->bufs.engine = engine;
  p->bufs.input = MemRef::host(in);
  p->bufs.output = MemRef::host(out);
  if (p->plan->schedule.scratchElems) {
    void* s = scratch.get(p->plan->schedule.scratchElems * esize);
    if (!s) return Status::SystemError("out of memory for scratch space");
    p->bufs.scratch = MemRef::host(s);
  }
  const uint64_t nIn = inputElems(d, size);
  p->op = d.op;
  if (d.op == RedOp::PreMulSum || (d.coll == Collective::AllToAll && in == out && nIn)) {
    // Stage the input: premultiplied, or copied aside so an in-place alltoall can overwrite.
    void* s = staging.get(nIn * esize);
    if (!s) return Status::SystemError("out of memory for the staging buffer");
    const MemRef stage = MemRef::host(s);
    const Completion staged = d.op == RedOp::PreMulSum
                                  ? engine->scale(d.dtype, stage, p->bufs.input, nIn, premulScalar)
                                  : engine->copy(stage, p->bufs.input, nIn * esize);
    CHORUS_RETURN_IF_ERROR(waitFor(*engine, staged, Deadline::after(config.timeoutSec)));
    p->bufs.input = stage;
  }
  if (p->op == RedOp::Avg || p->op == RedOp::PreMulSum) p->op = RedOp::Sum;
  p->seq = isP2p(d) ? 0 : opSeq++;
  p->startNs = nowNs();  // one clock read for the recorder and the call's deadline
  p->recorded = recorder->begin(d, p->seq, p->plan->schedule.algorithm, p->startNs);
  return Status::Ok();
}

void Communicator::Impl::start(const Prepared& p) {
  executor->start(*p.plan, p.desc, p.seq, p.op, p.bufs,
                  Deadline::afterFrom(p.startNs, config.timeoutSec));
}

Status Communicator::Impl::finish(const Prepared& p) {
  const OpDesc& d = p.desc;
  if (d.op != RedOp::Avg || (d.coll == Collective::Reduce && rank != d.root)) {
    recorder->end(p.recorded, true, nowNs());
    return Status::Ok();
  }
  DataEngine& engine = *p.bufs.engine;
  const Completion divided =
      engine.divide(d.dtype, p.bufs.output, p.bufs.output, d.count, uint64_t(size));
  Status st = waitFor(engine, divided, Deadline::after(config.timeoutSec));
  if (st.ok()) recorder->end(p.recorded, true, nowNs());
  return st;
}

Status Communicator::Impl::failedRun(const Status& failure, const Prepared& p) {
  const OpDesc& d = p.desc;
  recorder->end(p.recorded, false, nowNs());
  // A timeout names the peer this rank waited for, which may itself be waiting for the rank at
  // fault; a stopped or cut-off rank is found by asking who still answers. Its name is the
  // error, here and (rank 0 sends it) on every other rank.
  Status st = failure;
  if (st.code() == StatusCode::Timeout && !failureIsKnown.load())
    if (Status silent = bootstrap->findUnresponsive(); !silent.ok()) st = silent;
  fail(st);
  executor->reclaimLent();  // the caller gets its buffers back with the error
  // A failure this rank found itself (a timeout, a lost connection) is news to the others:
  // they may be waiting on a rank that is alive only because it has not noticed yet.
  if (!failureIsKnown.load()) bootstrap->reportError(currentError());
  // Every failed run leaves its story: the rank that timed out and those told of it alike.
  dumpFlightRecorder(std::string(statusCodeName(st.code())) + ": " + st.message());
  return st.withContext("rank " + std::to_string(rank) + ": " + d.toString());
}

Status Communicator::Impl::execute(const Prepared& p) {
  Status st = executor->run(*p.plan, p.desc, p.seq, p.op, p.bufs,
                            Deadline::afterFrom(p.startNs, config.timeoutSec));
  if (st.ok()) st = finish(p);
  return st.ok() ? st : failedRun(st, p);
}

Status Communicator::Impl::prepareAgreement(const CallPrint& mine, Prepared* p) {
  myPrint = mine;
  agreedPrints.resize(size_t(size));
  OpDesc gather;
  gather.coll = Collective::AllGather;
  gather.dtype = DataType::Uint8;
  gather.count = sizeof(CallPrint);
  return prepare(gather, &myPrint, agreedPrints.data(), nullptr, p);
}

Status Communicator::Impl::run(const OpDesc& d, bool inGroup, const void* in, void* out,
                               const void* premulScalar) {
  if (inGroup) return enqueueInGroup(this, d, in, out, premulScalar);
  if (isP2p(d) && p2pAtOnce(d, in, out)) return Status::Ok();
  if (config.checkCalls == 2 && !isP2p(d)) {
    Prepared agree;
    CHORUS_RETURN_IF_ERROR(prepareAgreement(callPrint(d), &agree));
    CHORUS_RETURN_IF_ERROR(execute(agree));
    CHORUS_RETURN_IF_ERROR(agreement().withContext("rank " + std::to_string(rank)));
  }
  Prepared p;
  CHORUS_RETURN_IF_ERROR(prepare(d, in, out, premulScalar, &p));
  return execute(p);
}

bool Communicator::Impl::p2pAtOnce(const OpDesc& d, const void* in, void* out) {
  // Device buffers must be classified and refused (prepare) before the CPU reads them.
  if (d.count == 0 || d.count > Executor::kAtOnceBytes || cudaDevice >= 0) return false;
  // Its plan is made with the first call even so: a later call that must wait takes the
  // general path, and then finds its plan warm instead of allocating one mid-run.
  const Plan* plan = nullptr;
  if (!planFor(d, &plan).ok()) return false;
  const uint32_t bytes = uint32_t(d.count);
  const int64_t startNs = nowNs();
  if (d.coll == Collective::Send ? !executor->sendAtOnce(d.root, in, bytes)
                                 : !executor->receiveAtOnce(d.root, out, bytes))
    return false;
  recorder->end(recorder->begin(d, 0, "direct", startNs), true, nowNs());
  return true;
}

namespace {

// Every call: checked and described once (core/call_args.h), then run.
Status submit(Communicator::Impl& c, const CallArgs& a) {
  OpDesc d;
  const bool inGroup = groupDepth() > 0;
  CHORUS_RETURN_IF_ERROR(checkCall(a, c.rank, c.size, inGroup, &d));
  return c.run(d, inGroup, a.send, a.recv, a.red.scalar);
}

}  // namespace

int Communicator::rank() const {
  return impl_->rank;
}
int Communicator::size() const {
  return impl_->size;
}
int Communicator::cudaDevice() const {
  return impl_->cudaDevice;
}

Status Communicator::allReduce(const void* send, void* recv, size_t count, DataType t,
                               Reduction r) {
  return submit(*impl_, {Collective::AllReduce, send, recv, count, t, r});
}

Status Communicator::reduceScatter(const void* send, void* recv, size_t recvCount, DataType t,
                                   Reduction r) {
  return submit(*impl_, {Collective::ReduceScatter, send, recv, recvCount, t, r});
}

Status Communicator::allGather(const void* send, void* recv, size_t sendCount, DataType t) {
  return submit(*impl_, {Collective::AllGather, send, recv, sendCount, t});
}

Status Communicator::broadcast(const void* send, void* recv, size_t count, DataType t, int root) {
  return submit(*impl_, {Collective::Broadcast, send, recv, count, t, {}, root});
}

Status Communicator::reduce(const void* send, void* recv, size_t count, DataType t, Reduction r,
                            int root) {
  return submit(*impl_, {Collective::Reduce, send, recv, count, t, r, root});
}

Status Communicator::allToAll(const void* send, void* recv, size_t countPerPeer, DataType t) {
  return submit(*impl_, {Collective::AllToAll, send, recv, countPerPeer, t});
}

Status Communicator::gather(const void* send, void* recv, size_t sendCount, DataType t, int root) {
  return submit(*impl_, {Collective::Gather, send, recv, sendCount, t, {}, root});
}

Status Communicator::scatter(const void* send, void* recv, size_t recvCount, DataType t, int root) {
  return submit(*impl_, {Collective::Scatter, send, recv, recvCount, t, {}, root});
}

Status Communicator::send(const void* buf, size_t count, DataType t, int peer) {
  return submit(*impl_, {Collective::Send, buf, nullptr, count, t, {}, peer});
}

Status Communicator::recv(void* buf, size_t count, DataType t, int peer) {
  return submit(*impl_, {Collective::Recv, nullptr, buf, count, t, {}, peer});
}

Status Communicator::barrier() {
  return submit(*impl_, {Collective::Barrier});
}

void Communicator::abort() {
  impl_->fail(Status::Aborted("communicator aborted by the application on rank " +
                              std::to_string(impl_->rank)));
  impl_->dumpFlightRecorder("abort");
}

Status Communicator::asyncError() const {
  return impl_->currentError();
}

}  // namespace chorus
