// What a benchmark needs from a communication library, so one harness (sizes, timing, checks,
// tables) runs over Chorus, Open MPI and Gloo alike. Calls are blocking and follow Chorus's
// conventions (counts in elements; in-place when send == recv, allgather's send ==
// recv + rank*count, reduce_scatter's send + rank*count == recv); each backend translates.
// A type or op the library lacks returns Unsupported.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "chorus/status.h"
#include "chorus/types.h"
#include "options.h"

namespace chorus::bench {

// One message of a batch that is posted at once and completed together (bw windows, bibw,
// sendrecv), so every library may overlap them as it would in an application.
struct P2pOp {
  bool send;
  void* buf;
  size_t bytes;
  int peer;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual const char* name() const = 0;
  virtual int rank() const = 0;
  virtual int size() const = 0;

  virtual Status allReduce(const void* s, void* r, size_t count, DataType t, RedOp op) = 0;
  virtual Status reduceScatter(const void* s, void* r, size_t recvCount, DataType t, RedOp op) = 0;
  virtual Status allGather(const void* s, void* r, size_t sendCount, DataType t) = 0;
  virtual Status broadcast(const void* s, void* r, size_t count, DataType t, int root) = 0;
  virtual Status reduce(const void* s, void* r, size_t count, DataType t, RedOp op, int root) = 0;
  virtual Status allToAll(const void* s, void* r, size_t perPeer, DataType t) = 0;
  virtual Status gather(const void* s, void* r, size_t sendCount, DataType t, int root) = 0;
  virtual Status scatter(const void* s, void* r, size_t recvCount, DataType t, int root) = 0;
  virtual Status p2p(const P2pOp* ops, int n) = 0;
  virtual Status barrier() = 0;
};

// The implementations compiled into this binary, "chorus" first.
std::vector<std::string> builtBackends();
// Joins the job the launcher started (chorus-run, mpirun, srun) with the chosen library.
Status makeBackend(const Options& o, std::unique_ptr<Backend>* out);

Status makeChorusBackend(const Options& o, std::unique_ptr<Backend>* out);
Status makeMpiBackend(const Options& o, std::unique_ptr<Backend>* out);
Status makeGlooBackend(const Options& o, std::unique_ptr<Backend>* out);

}  // namespace chorus::bench
