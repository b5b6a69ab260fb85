// The C++ face of Chorus: a Communicator is one rank's membership in a group of `size` ranks.
// Every call returns a Status; collective calls must be made by every rank, in the same order,
// with the same count, type, op and root (a mismatch is reported, not executed). A failed peer
// poisons the communicator: the pending call and every later one fail with an error naming the
// peer. One thread uses a communicator at a time; abort() and asyncError() may be called from
// any thread.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "chorus/config.h"
#include "chorus/status.h"
#include "chorus/types.h"
#include "chorus/unique_id.h"

namespace chorus {

// An op plus, for PreMulSum, the scalar (one element of the call's type, in host memory).
struct Reduction {
  Reduction(RedOp o = RedOp::Sum, const void* s = nullptr) : op(o), scalar(s) {}
  RedOp op;
  const void* scalar;
};

class Communicator {
 public:
  // Joins rank `rank` of `size` through the bootstrap root in `id`.
  static Status create(const UniqueId& id, int rank, int size, const Config& config,
                       std::unique_ptr<Communicator>* out);
  // Rank, size and rendezvous from the launcher's environment (chorus-run, torchrun-style,
  // Open MPI, Slurm); see the README for the variables.
  static Status createFromEnvironment(const Config& config, std::unique_ptr<Communicator>* out);
  ~Communicator();
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

  int rank() const;
  int size() const;
  // The CUDA device that was current when this communicator was created, as NCCL binds one;
  // -1 where CUDA cannot be used (no libchorus_cuda, driver or device). Device buffers are
  // recognised and refused until the device data path exists (docs/gpu.md).
  int cudaDevice() const;

  // Collective over this communicator: ranks passing the same color >= 0 form a new
  // communicator, ordered by (key, old rank); color < 0 (NCCL_SPLIT_NOCOLOR) leaves `out` null.
  Status split(int color, int key, const Config& config, std::unique_ptr<Communicator>* out);

  // A new communicator of every rank not in `exclude`, in their old order, made by those ranks
  // alone: the excluded ranks take no part (they may be dead), and this one may have failed.
  // Every remaining rank passes the same list. An excluded caller gets a null `out`. The first
  // remaining rank hosts the rendezvous; a communicator is shrunk at most once (shrink the
  // result again if needed).
  Status shrink(const std::vector<int>& exclude, const Config& config,
                std::unique_ptr<Communicator>* out);

  // Counts are in elements. In-place: pass the same pointer for send and recv (allgather:
  // send == recv + rank*count; reduce_scatter: send + rank*count == recv).
  Status allReduce(const void* send, void* recv, size_t count, DataType t, Reduction r);
  Status reduceScatter(const void* send, void* recv, size_t recvCount, DataType t, Reduction r);
  Status allGather(const void* send, void* recv, size_t sendCount, DataType t);
  Status broadcast(const void* send, void* recv, size_t count, DataType t, int root);
  Status reduce(const void* send, void* recv, size_t count, DataType t, Reduction r, int root);
  Status allToAll(const void* send, void* recv, size_t countPerPeer, DataType t);
  Status gather(const void* send, void* recv, size_t sendCount, DataType t, int root);
  Status scatter(const void* send, void* recv, size_t recvCount, DataType t, int root);
  Status send(const void* buf, size_t count, DataType t, int peer);
  Status recv(void* buf, size_t count, DataType t, int peer);
  Status barrier();

  // Makes the pending call (on another thread) and all later calls fail with Aborted.
  void abort();
  // The error that poisoned this communicator, or Ok.
  Status asyncError() const;

  // The state behind it (src/core/comm_impl.h); named here only so Chorus's own sources can
  // define it. Nothing outside the class reaches it: Chorus's tools and tests read what they
  // need through CommInternals (src/core/comm_internals.h).
  struct Impl;

 private:
  friend class CommInternals;
  explicit Communicator(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace chorus
