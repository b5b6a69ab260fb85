#include "process_group.h"

#include <c10/util/Exception.h>

#include <cstdlib>
#include <cstring>
#include <numeric>

#include "chorus/group.h"
#include "chorus/unique_id.h"
#include "tensor_args.h"

namespace chorus_torch {
namespace {

using c10d::OpType;
using WorkPtr = c10::intrusive_ptr<c10d::Work>;

// Where rank 0 leaves the unique id; the store torch hands a group is already prefixed with
// the group's name, so groups made by new_group() do not collide.
constexpr const char* kUniqueIdKey = "chorus_unique_id";

char* bytes(const at::Tensor& t) {
  return static_cast<char*>(t.data_ptr());
}

// One flat tensor holding `ts` back to back (the contiguous buffer Chorus's list-free calls
// take), made on the worker thread so the call itself returns at once.
at::Tensor flatten(const std::vector<at::Tensor>& ts) {
  std::vector<at::Tensor> flat;
  flat.reserve(ts.size());
  for (const at::Tensor& t : ts) flat.push_back(t.reshape({-1}));
  return at::cat(flat);
}

// Copies consecutive pieces of `flat` into `ts`.
void unflatten(const at::Tensor& flat, std::vector<at::Tensor>& ts) {
  int64_t offset = 0;
  for (at::Tensor& t : ts) {
    t.copy_(flat.narrow(0, offset, t.numel()).view(t.sizes()));
    offset += t.numel();
  }
}

}  // namespace

c10::intrusive_ptr<c10d::ProcessGroup> ProcessGroupChorus::create(
    const c10::intrusive_ptr<c10d::Store>& store, int rank, int size,
    std::chrono::duration<float> timeout) {
  const std::string at = where("init", rank, size);
  chorus::Config config;
  chorus::Status st = chorus::Config::fromEnvironment(&config);
  TORCH_CHECK(st.ok(), at, st.toString());
  if (std::getenv("CHORUS_TIMEOUT") == nullptr) config.timeoutSec = timeout.count();

  chorus::UniqueId id;
  if (rank == 0) {
    st = chorus::createUniqueId(&id, config.timeoutSec);
    TORCH_CHECK(st.ok(), at, "could not start Chorus's bootstrap root: ", st.toString());
    store->set(kUniqueIdKey, std::vector<uint8_t>(id.bytes, id.bytes + sizeof(id.bytes)));
  } else {
    const auto deadline = std::chrono::milliseconds(static_cast<int64_t>(config.timeoutSec * 1e3));
    try {
      store->wait({kUniqueIdKey}, deadline);
    } catch (const std::exception& e) {
      TORCH_CHECK(false, at,
                  "rank 0 did not publish Chorus's unique id in the rendezvous store "
                  "within ",
                  config.timeoutSec,
                  " s (is rank 0 running, and did it import "
                  "chorus_torch?): ",
                  e.what());
    }
    const std::vector<uint8_t> v = store->get(kUniqueIdKey);
    TORCH_CHECK(v.size() == sizeof(id.bytes), at, "the unique id in the store has ", v.size(),
                " bytes, not ", sizeof(id.bytes), "; another job may be sharing this store");
    std::memcpy(id.bytes, v.data(), v.size());
  }
  std::unique_ptr<chorus::Communicator> comm;
  st = chorus::Communicator::create(id, rank, size, config, &comm);
  TORCH_CHECK(st.ok(), at, "joining the Chorus communicator failed: ", st.toString());
  return c10::make_intrusive<ProcessGroupChorus>(std::move(comm), rank, size);
}

ProcessGroupChorus::ProcessGroupChorus(std::unique_ptr<chorus::Communicator> comm, int rank,
                                       int size)
    : ProcessGroup(rank, size), worker_(std::make_shared<Worker>(std::move(comm))) {
  init();
}

ProcessGroupChorus::~ProcessGroupChorus() = default;

void ProcessGroupChorus::checkRoot(int64_t root, const char* op) const {
  TORCH_CHECK(root >= 0 && root < size_, where(op, rank_, size_), "root ", root, " is outside [0, ",
              size_, ")");
}

WorkPtr ProcessGroupChorus::enqueue(OpType type, const char* name, std::vector<at::Tensor> outputs,
                                    Op op) {
  auto work = c10::make_intrusive<ChorusWork>(rank_, type, std::move(outputs));
  op.work = work;
  op.what = "rank " + std::to_string(rank_) + " of " + std::to_string(size_) + ", " + name;
  if (op.p2p) {
    work->setStart([weak = std::weak_ptr<Worker>(worker_)] {
      if (auto w = weak.lock()) w->flush();
    });
    worker_->hold(std::move(op));
    return work;
  }
  std::vector<Op> batch;
  batch.push_back(std::move(op));
  worker_->post(std::move(batch));
  return work;
}

void ProcessGroupChorus::endCoalescing(std::vector<WorkPtr>& /*reqs: already handed out*/) {
  worker_->flush();
}

WorkPtr ProcessGroupChorus::broadcast(std::vector<at::Tensor>& tensors,
                                      const c10d::BroadcastOptions& opts) {
  const at::Tensor& t = single(tensors, "broadcast", rank_, size_);
  checkRoot(opts.rootRank, "broadcast");
  const chorus::DataType dt = chorusType(t, "broadcast", rank_, size_);
  const int root = static_cast<int>(opts.rootRank);
  Op op;
  op.issue = [t, dt, root](chorus::Communicator& c) {
    return c.broadcast(t.data_ptr(), t.data_ptr(), t.numel(), dt, root);
  };
  return enqueue(OpType::BROADCAST, "broadcast", tensors, std::move(op));
}

WorkPtr ProcessGroupChorus::allreduce(std::vector<at::Tensor>& tensors,
                                      const c10d::AllreduceOptions& opts) {
  const at::Tensor& t = single(tensors, "allreduce", rank_, size_);
  const chorus::DataType dt = chorusType(t, "allreduce", rank_, size_);
  at::Tensor scalar;
  const chorus::Reduction r = chorusReduction(opts.reduceOp, t, &scalar, "allreduce", rank_, size_);
  Op op;
  op.issue = [t, dt, r, scalar](chorus::Communicator& c) {
    return c.allReduce(t.data_ptr(), t.data_ptr(), t.numel(), dt, r);
  };
  return enqueue(OpType::ALLREDUCE, "allreduce", tensors, std::move(op));
}

WorkPtr ProcessGroupChorus::allreduce_coalesced(std::vector<at::Tensor>& tensors,
                                                const c10d::AllreduceCoalescedOptions& opts) {
  const char* name = "allreduce_coalesced";
  TORCH_CHECK(!tensors.empty(), where(name, rank_, size_), "no tensors given");
  checkTensors(tensors, tensors[0], false, name, rank_, size_);
  const chorus::DataType dt = chorusType(tensors[0], name, rank_, size_);
  at::Tensor scalar;
  const chorus::Reduction r =
      chorusReduction(opts.reduceOp, tensors[0], &scalar, name, rank_, size_);
  // One call over the tensors packed together, then unpacked: fewer, larger messages.
  auto flat = std::make_shared<at::Tensor>();
  Op op;
  op.issue = [tensors, flat, dt, r, scalar](chorus::Communicator& c) {
    *flat = flatten(tensors);
    return c.allReduce(flat->data_ptr(), flat->data_ptr(), flat->numel(), dt, r);
  };
  op.finish = [tensors, flat]() mutable { unflatten(*flat, tensors); };
  return enqueue(OpType::ALLREDUCE_COALESCED, name, tensors, std::move(op));
}

WorkPtr ProcessGroupChorus::reduce(std::vector<at::Tensor>& tensors,
                                   const c10d::ReduceOptions& opts) {
  const at::Tensor& t = single(tensors, "reduce", rank_, size_);
  checkRoot(opts.rootRank, "reduce");
  const chorus::DataType dt = chorusType(t, "reduce", rank_, size_);
  at::Tensor scalar;
  const chorus::Reduction r = chorusReduction(opts.reduceOp, t, &scalar, "reduce", rank_, size_);
  const int root = static_cast<int>(opts.rootRank);
  // Only the root's tensor receives the result; the others stay as they were.
  void* recv = rank_ == root ? t.data_ptr() : nullptr;
  Op op;
  op.issue = [t, dt, r, scalar, root, recv](chorus::Communicator& c) {
    return c.reduce(t.data_ptr(), recv, t.numel(), dt, r, root);
  };
  return enqueue(OpType::REDUCE, "reduce", tensors, std::move(op));
}

WorkPtr ProcessGroupChorus::allgather(std::vector<std::vector<at::Tensor>>& outputs,
                                      std::vector<at::Tensor>& inputs,
                                      const c10d::AllgatherOptions&) {
  const char* name = "allgather";
  const at::Tensor& in = single(inputs, name, rank_, size_);
  TORCH_CHECK(outputs.size() == 1 && outputs[0].size() == static_cast<size_t>(size_),
              where(name, rank_, size_), "expected one list of ", size_, " output tensors");
  checkTensors(outputs[0], in, true, name, rank_, size_);
  const chorus::DataType dt = chorusType(in, name, rank_, size_);
  at::Tensor flat = at::empty({size_ * in.numel()}, in.options());
  std::vector<at::Tensor> outs = outputs[0];
  Op op;
  op.issue = [in, flat, dt](chorus::Communicator& c) {
    return c.allGather(in.data_ptr(), flat.data_ptr(), in.numel(), dt);
  };
  op.finish = [flat, outs]() mutable { unflatten(flat, outs); };
  return enqueue(OpType::ALLGATHER, name, outputs[0], std::move(op));
}

WorkPtr ProcessGroupChorus::_allgather_base(at::Tensor& output, at::Tensor& input,
                                            const c10d::AllgatherOptions&) {
  const char* name = "allgather_into_tensor";
  checkTensor(input, name, rank_, size_);
  checkTensors({output}, input, false, name, rank_, size_);
  TORCH_CHECK(output.numel() == size_ * input.numel(), where(name, rank_, size_), "the output has ",
              output.numel(), " elements but must have world size x input = ", size_, " x ",
              input.numel());
  const chorus::DataType dt = chorusType(input, name, rank_, size_);
  Op op;
  op.issue = [input, output, dt](chorus::Communicator& c) {
    return c.allGather(input.data_ptr(), output.data_ptr(), input.numel(), dt);
  };
  return enqueue(OpType::_ALLGATHER_BASE, name, {output}, std::move(op));
}

WorkPtr ProcessGroupChorus::gather(std::vector<std::vector<at::Tensor>>& outputs,
                                   std::vector<at::Tensor>& inputs,
                                   const c10d::GatherOptions& opts) {
  const char* name = "gather";
  const at::Tensor& in = single(inputs, name, rank_, size_);
  checkRoot(opts.rootRank, name);
  const int root = static_cast<int>(opts.rootRank);
  const chorus::DataType dt = chorusType(in, name, rank_, size_);
  at::Tensor flat;
  std::vector<at::Tensor> outs;
  if (rank_ == root) {
    TORCH_CHECK(outputs.size() == 1 && outputs[0].size() == static_cast<size_t>(size_),
                where(name, rank_, size_), "the root expects one list of ", size_,
                " output tensors");
    checkTensors(outputs[0], in, true, name, rank_, size_);
    flat = at::empty({size_ * in.numel()}, in.options());
    outs = outputs[0];
  } else {
    TORCH_CHECK(outputs.empty(), where(name, rank_, size_), "only the root (rank ", root,
                ") passes output tensors");
  }
  Op op;
  op.issue = [in, flat, dt, root](chorus::Communicator& c) {
    return c.gather(in.data_ptr(), flat.defined() ? flat.data_ptr() : nullptr, in.numel(), dt,
                    root);
  };
  if (flat.defined()) op.finish = [flat, outs]() mutable { unflatten(flat, outs); };
  return enqueue(OpType::GATHER, name, outs, std::move(op));
}

WorkPtr ProcessGroupChorus::scatter(std::vector<at::Tensor>& outputs,
                                    std::vector<std::vector<at::Tensor>>& inputs,
                                    const c10d::ScatterOptions& opts) {
  const char* name = "scatter";
  const at::Tensor& out = single(outputs, name, rank_, size_);
  checkRoot(opts.rootRank, name);
  const int root = static_cast<int>(opts.rootRank);
  const chorus::DataType dt = chorusType(out, name, rank_, size_);
  std::vector<at::Tensor> ins;
  if (rank_ == root) {
    TORCH_CHECK(inputs.size() == 1 && inputs[0].size() == static_cast<size_t>(size_),
                where(name, rank_, size_), "the root expects one list of ", size_,
                " input tensors");
    checkTensors(inputs[0], out, true, name, rank_, size_);
    ins = inputs[0];
  } else {
    TORCH_CHECK(inputs.empty(), where(name, rank_, size_), "only the root (rank ", root,
                ") passes input tensors");
  }
  Op op;
  op.issue = [ins, out, dt, root](chorus::Communicator& c) {
    const at::Tensor flat = ins.empty() ? at::Tensor() : flatten(ins);
    return c.scatter(flat.defined() ? flat.data_ptr() : nullptr, out.data_ptr(), out.numel(), dt,
                     root);
  };
  return enqueue(OpType::SCATTER, name, outputs, std::move(op));
}

WorkPtr ProcessGroupChorus::reduce_scatter(std::vector<at::Tensor>& outputs,
                                           std::vector<std::vector<at::Tensor>>& inputs,
                                           const c10d::ReduceScatterOptions& opts) {
  const char* name = "reduce_scatter";
  const at::Tensor& out = single(outputs, name, rank_, size_);
  TORCH_CHECK(inputs.size() == 1 && inputs[0].size() == static_cast<size_t>(size_),
              where(name, rank_, size_), "expected one list of ", size_, " input tensors");
  checkTensors(inputs[0], out, true, name, rank_, size_);
  const chorus::DataType dt = chorusType(out, name, rank_, size_);
  at::Tensor scalar;
  const chorus::Reduction r = chorusReduction(opts.reduceOp, out, &scalar, name, rank_, size_);
  std::vector<at::Tensor> ins = inputs[0];
  Op op;
  op.issue = [ins, out, dt, r, scalar](chorus::Communicator& c) {
    const at::Tensor flat = flatten(ins);
    return c.reduceScatter(flat.data_ptr(), out.data_ptr(), out.numel(), dt, r);
  };
  return enqueue(OpType::REDUCE_SCATTER, name, outputs, std::move(op));
}

WorkPtr ProcessGroupChorus::_reduce_scatter_base(at::Tensor& output, at::Tensor& input,
                                                 const c10d::ReduceScatterOptions& opts) {
  const char* name = "reduce_scatter_tensor";
  checkTensor(output, name, rank_, size_);
  checkTensors({input}, output, false, name, rank_, size_);
  TORCH_CHECK(input.numel() == size_ * output.numel(), where(name, rank_, size_), "the input has ",
              input.numel(), " elements but must have world size x output = ", size_, " x ",
              output.numel());
  const chorus::DataType dt = chorusType(output, name, rank_, size_);
  at::Tensor scalar;
  const chorus::Reduction r = chorusReduction(opts.reduceOp, output, &scalar, name, rank_, size_);
  Op op;
  op.issue = [input, output, dt, r, scalar](chorus::Communicator& c) {
    return c.reduceScatter(input.data_ptr(), output.data_ptr(), output.numel(), dt, r);
  };
  return enqueue(OpType::_REDUCE_SCATTER_BASE, name, {output}, std::move(op));
}

WorkPtr ProcessGroupChorus::allToAllV(const char* name, OpType type, at::Tensor out, at::Tensor in,
                                      std::vector<int64_t> recvCounts,
                                      std::vector<int64_t> sendCounts, std::function<void()> finish,
                                      std::vector<at::Tensor> outputs) {
  const chorus::DataType dt = chorusType(in, name, rank_, size_);
  const int size = size_;
  Op op;
  op.issue = [=](chorus::Communicator& c) {
    const size_t es = in.element_size();
    chorus::Status first;
    chorus::groupStart();  // matched sends and receives complete in any posting order
    int64_t sendOff = 0, recvOff = 0;
    for (int p = 0; p < size; ++p) {
      if (sendCounts[p] > 0 && first.ok())
        first = c.send(bytes(in) + sendOff * es, sendCounts[p], dt, p);
      if (recvCounts[p] > 0 && first.ok())
        first = c.recv(bytes(out) + recvOff * es, recvCounts[p], dt, p);
      sendOff += sendCounts[p];
      recvOff += recvCounts[p];
    }
    chorus::Status done = chorus::groupEnd();
    return first.ok() ? done : first;
  };
  op.finish = std::move(finish);
  return enqueue(type, name, std::move(outputs), std::move(op));
}

WorkPtr ProcessGroupChorus::alltoall_base(at::Tensor& output, at::Tensor& input,
                                          std::vector<int64_t>& outputSplits,
                                          std::vector<int64_t>& inputSplits,
                                          const c10d::AllToAllOptions&) {
  const char* name = "all_to_all_single";
  checkTensor(input, name, rank_, size_);
  checkTensors({output}, input, false, name, rank_, size_);
  if (outputSplits.empty() && inputSplits.empty()) {
    TORCH_CHECK(input.numel() == output.numel() && input.numel() % size_ == 0,
                where(name, rank_, size_),
                "without splits the input and output need the same "
                "number of elements, divisible by the world size ",
                size_, " (input ", input.numel(), ", output ", output.numel(), ")");
    const chorus::DataType dt = chorusType(input, name, rank_, size_);
    Op op;
    op.issue = [input, output, dt, size = size_](chorus::Communicator& c) {
      return c.allToAll(input.data_ptr(), output.data_ptr(), input.numel() / size, dt);
    };
    return enqueue(OpType::ALLTOALL_BASE, name, {output}, std::move(op));
  }
  // Splits count rows of dimension 0; an empty list splits that side evenly.
  auto counts = [&](const at::Tensor& t, const std::vector<int64_t>& splits, const char* side) {
    const int64_t rows = t.dim() == 0 ? 1 : t.size(0);
    const int64_t rowElems = rows == 0 ? 0 : t.numel() / rows;
    std::vector<int64_t> out(size_);
    if (splits.empty()) {
      TORCH_CHECK(rows % size_ == 0, where(name, rank_, size_), "the ", side, " has ", rows,
                  " rows, which the world size ", size_, " does not divide; pass ", side,
                  "_split_sizes");
      for (int64_t& n : out) n = rows / size_ * rowElems;
      return out;
    }
    TORCH_CHECK(splits.size() == static_cast<size_t>(size_), where(name, rank_, size_), side,
                "_split_sizes has ", splits.size(), " entries, not one per rank (", size_, ")");
    TORCH_CHECK(std::accumulate(splits.begin(), splits.end(), int64_t{0}) == rows,
                where(name, rank_, size_), side, "_split_sizes add up to ",
                std::accumulate(splits.begin(), splits.end(), int64_t{0}), " but the ", side,
                " has ", rows, " rows");
    for (int p = 0; p < size_; ++p) {
      TORCH_CHECK(splits[p] >= 0, where(name, rank_, size_), "negative split ", splits[p]);
      out[p] = splits[p] * rowElems;
    }
    return out;
  };
  std::vector<int64_t> sendCounts = counts(input, inputSplits, "input");
  std::vector<int64_t> recvCounts = counts(output, outputSplits, "output");
  return allToAllV(name, OpType::ALLTOALL_BASE, output, input, std::move(recvCounts),
                   std::move(sendCounts), nullptr, {output});
}

WorkPtr ProcessGroupChorus::alltoall(std::vector<at::Tensor>& outputs,
                                     std::vector<at::Tensor>& inputs,
                                     const c10d::AllToAllOptions&) {
  const char* name = "all_to_all";
  TORCH_CHECK(
      outputs.size() == static_cast<size_t>(size_) && inputs.size() == static_cast<size_t>(size_),
      where(name, rank_, size_), "expected ", size_, " input and ", size_, " output tensors, got ",
      inputs.size(), " and ", outputs.size());
  checkTensor(inputs[0], name, rank_, size_);
  checkTensors(inputs, inputs[0], false, name, rank_, size_);
  checkTensors(outputs, inputs[0], false, name, rank_, size_);
  std::vector<int64_t> sendCounts, recvCounts;
  int64_t recvTotal = 0;
  for (int p = 0; p < size_; ++p) {
    sendCounts.push_back(inputs[p].numel());
    recvCounts.push_back(outputs[p].numel());
    recvTotal += outputs[p].numel();
  }
  // Packed on the caller's thread: the list is a snapshot of the inputs at call time.
  at::Tensor in = flatten(inputs);
  at::Tensor out = at::empty({recvTotal}, inputs[0].options());
  std::vector<at::Tensor> outs = outputs;
  return allToAllV(
      name, OpType::ALLTOALL, out, in, std::move(recvCounts), std::move(sendCounts),
      [out, outs]() mutable { unflatten(out, outs); }, outputs);
}

WorkPtr ProcessGroupChorus::send(std::vector<at::Tensor>& tensors, int dstRank, int /*tag*/) {
  const at::Tensor& t = single(tensors, "send", rank_, size_);
  checkRoot(dstRank, "send");
  const chorus::DataType dt = chorusType(t, "send", rank_, size_);
  Op op;
  op.p2p = true;
  op.issue = [t, dt, dstRank](chorus::Communicator& c) {
    return c.send(t.data_ptr(), t.numel(), dt, dstRank);
  };
  return enqueue(OpType::SEND, "send", tensors, std::move(op));
}

WorkPtr ProcessGroupChorus::recv(std::vector<at::Tensor>& tensors, int srcRank, int /*tag*/) {
  const at::Tensor& t = single(tensors, "recv", rank_, size_);
  checkRoot(srcRank, "recv");
  const chorus::DataType dt = chorusType(t, "recv", rank_, size_);
  Op op;
  op.p2p = true;
  op.issue = [t, dt, srcRank](chorus::Communicator& c) {
    return c.recv(t.data_ptr(), t.numel(), dt, srcRank);
  };
  return enqueue(OpType::RECV, "recv", tensors, std::move(op));
}

WorkPtr ProcessGroupChorus::barrier(const c10d::BarrierOptions&) {
  Op op;
  op.issue = [](chorus::Communicator& c) { return c.barrier(); };
  return enqueue(OpType::BARRIER, "barrier", {}, std::move(op));
}

}  // namespace chorus_torch
