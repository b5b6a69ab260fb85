// ProcessGroupChorus: torch.distributed's c10d::ProcessGroup over a Chorus communicator, for
// CPU tensors. Each call checks its tensors on the caller's thread (a bad tensor raises at
// once), then queues the operation on the group's Worker and returns its ChorusWork.
#pragma once

#include <chrono>
#include <memory>
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>
#include <vector>

#include "worker.h"

namespace chorus_torch {

class ProcessGroupChorus : public c10d::ProcessGroup {
 public:
  // Rank 0 makes a Chorus unique id (bootstrap address + job secret) and publishes it in the
  // store torch's rendezvous gave this group; the others read it, then all join. Settings
  // come from the CHORUS_* variables, except that Chorus's deadline is the group's timeout
  // unless CHORUS_TIMEOUT is set.
  static c10::intrusive_ptr<c10d::ProcessGroup> create(const c10::intrusive_ptr<c10d::Store>& store,
                                                       int rank, int size,
                                                       std::chrono::duration<float> timeout);

  ProcessGroupChorus(std::unique_ptr<chorus::Communicator> comm, int rank, int size);
  ~ProcessGroupChorus() override;

  const std::string getBackendName() const override { return "chorus"; }

  c10::intrusive_ptr<c10d::Work> broadcast(std::vector<at::Tensor>& tensors,
                                           const c10d::BroadcastOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allreduce(std::vector<at::Tensor>& tensors,
                                           const c10d::AllreduceOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allreduce_coalesced(
      std::vector<at::Tensor>& tensors, const c10d::AllreduceCoalescedOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> reduce(std::vector<at::Tensor>& tensors,
                                        const c10d::ReduceOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allgather(std::vector<std::vector<at::Tensor>>& outputs,
                                           std::vector<at::Tensor>& inputs,
                                           const c10d::AllgatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> _allgather_base(at::Tensor& output, at::Tensor& input,
                                                 const c10d::AllgatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> gather(std::vector<std::vector<at::Tensor>>& outputs,
                                        std::vector<at::Tensor>& inputs,
                                        const c10d::GatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> scatter(std::vector<at::Tensor>& outputs,
                                         std::vector<std::vector<at::Tensor>>& inputs,
                                         const c10d::ScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> reduce_scatter(std::vector<at::Tensor>& outputs,
                                                std::vector<std::vector<at::Tensor>>& inputs,
                                                const c10d::ReduceScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> _reduce_scatter_base(
      at::Tensor& output, at::Tensor& input, const c10d::ReduceScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> alltoall_base(at::Tensor& output, at::Tensor& input,
                                               std::vector<int64_t>& outputSplits,
                                               std::vector<int64_t>& inputSplits,
                                               const c10d::AllToAllOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> alltoall(std::vector<at::Tensor>& outputs,
                                          std::vector<at::Tensor>& inputs,
                                          const c10d::AllToAllOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> send(std::vector<at::Tensor>& tensors, int dstRank,
                                      int tag) override;
  c10::intrusive_ptr<c10d::Work> recv(std::vector<at::Tensor>& tensors, int srcRank,
                                      int tag) override;
  c10::intrusive_ptr<c10d::Work> barrier(const c10d::BarrierOptions& opts) override;

  // The end of batch_isend_irecv starts the sends and receives it held (see worker.h).
  void endCoalescing(std::vector<c10::intrusive_ptr<c10d::Work>>& reqs) override;

 private:
  // Makes the op's ChorusWork and queues it (or holds it, point-to-point ops).
  c10::intrusive_ptr<c10d::Work> enqueue(c10d::OpType type, const char* name,
                                         std::vector<at::Tensor> outputs, Op op);
  void checkRoot(int64_t root, const char* op) const;
  // Personalised exchange with per-peer element counts and offsets (alltoall with splits,
  // list alltoall): one Chorus group of sends and receives.
  c10::intrusive_ptr<c10d::Work> allToAllV(const char* name, c10d::OpType type, at::Tensor out,
                                           at::Tensor in, std::vector<int64_t> recvCounts,
                                           std::vector<int64_t> sendCounts,
                                           std::function<void()> finish,
                                           std::vector<at::Tensor> outputs);

  // Shared with the works of held ops, which may outlive the group (they hold a weak_ptr).
  std::shared_ptr<Worker> worker_;
};

}  // namespace chorus_torch
