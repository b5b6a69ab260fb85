// The Gloo backend (TCP transport), split in two files: joining the job and point-to-point
// (backend_gloo_join.cc), and the collectives (backend_gloo.cc). Gloo algorithms are
// templates over the element type, so each call dispatches on DataType here.
#pragma once

#include <gloo/algorithm.h>
#include <gloo/context.h>

#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "backend.h"

namespace chorus::bench {

class GlooBackend final : public Backend {
 public:
  GlooBackend(std::shared_ptr<gloo::Context> ctx, std::string algo)
      : ctx_(std::move(ctx)), algo_(std::move(algo)) {}
  const char* name() const override { return "gloo"; }
  int rank() const override { return ctx_->rank; }
  int size() const override { return ctx_->size; }

  Status allReduce(const void* s, void* r, size_t n, DataType t, RedOp op) override;
  Status reduceScatter(const void* s, void* r, size_t n, DataType t, RedOp op) override;
  Status allGather(const void* s, void* r, size_t n, DataType t) override;
  Status broadcast(const void* s, void* r, size_t n, DataType t, int root) override;
  Status reduce(const void* s, void* r, size_t n, DataType t, RedOp op, int root) override;
  Status allToAll(const void* s, void* r, size_t n, DataType t) override;
  Status gather(const void* s, void* r, size_t n, DataType t, int root) override;
  Status scatter(const void* s, void* r, size_t n, DataType t, int root) override;
  Status p2p(const P2pOp* ops, int n) override;
  Status barrier() override;

  // The old-style algorithms (halving-doubling) bind their buffers when built, which costs
  // pair setup; one instance is kept per (buffer, count, type, op), like a framework would.
  struct Cached {
    // What it was built for: kind (0 allreduce, 1 reduce-scatter), buffer, count, op, element
    // size, and whether it works in scratch.
    using Key = std::tuple<int, const void*, size_t, int, size_t, bool>;
    Key key;
    std::unique_ptr<gloo::Algorithm> algo;
    std::vector<char> scratch;
  };

 private:
  template <typename T>
  Status allReduceT(const T* s, T* r, size_t n, RedOp op);
  template <typename T>
  Status reduceScatterT(const T* s, T* r, size_t n, RedOp op);

  std::shared_ptr<gloo::Context> ctx_;
  std::string algo_;
  Cached cached_;
};

}  // namespace chorus::bench
