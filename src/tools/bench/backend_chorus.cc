// The Chorus backend: the public C++ API, exactly as an application calls it.
#include "backend.h"
#include "chorus/chorus.h"
#include "chorus/group.h"

namespace chorus::bench {

namespace {

class ChorusBackend final : public Backend {
 public:
  explicit ChorusBackend(std::unique_ptr<Communicator> c) : c_(std::move(c)) {}
  const char* name() const override { return "chorus"; }
  int rank() const override { return c_->rank(); }
  int size() const override { return c_->size(); }

  Status allReduce(const void* s, void* r, size_t n, DataType t, RedOp op) override {
    return c_->allReduce(s, r, n, t, op);
  }
  Status reduceScatter(const void* s, void* r, size_t n, DataType t, RedOp op) override {
    return c_->reduceScatter(s, r, n, t, op);
  }
  Status allGather(const void* s, void* r, size_t n, DataType t) override {
    return c_->allGather(s, r, n, t);
  }
  Status broadcast(const void* s, void* r, size_t n, DataType t, int root) override {
    return c_->broadcast(s, r, n, t, root);
  }
  Status reduce(const void* s, void* r, size_t n, DataType t, RedOp op, int root) override {
    return c_->reduce(s, r, n, t, op, root);
  }
  Status allToAll(const void* s, void* r, size_t n, DataType t) override {
    return c_->allToAll(s, r, n, t);
  }
  Status gather(const void* s, void* r, size_t n, DataType t, int root) override {
    return c_->gather(s, r, n, t, root);
  }
  Status scatter(const void* s, void* r, size_t n, DataType t, int root) override {
    return c_->scatter(s, r, n, t, root);
  }
  // A group makes the batch concurrent, whatever order the two sides queued it in.
  Status p2p(const P2pOp* ops, int n) override {
    if (n == 1)
      return ops[0].send ? c_->send(ops[0].buf, ops[0].bytes, DataType::Uint8, ops[0].peer)
                         : c_->recv(ops[0].buf, ops[0].bytes, DataType::Uint8, ops[0].peer);
    groupStart();
    Status first;
    for (int i = 0; i < n; ++i) {
      Status st = ops[i].send ? c_->send(ops[i].buf, ops[i].bytes, DataType::Uint8, ops[i].peer)
                              : c_->recv(ops[i].buf, ops[i].bytes, DataType::Uint8, ops[i].peer);
      if (first.ok() && !st.ok()) first = st;
    }
    Status end = groupEnd();
    return first.ok() ? end : first;
  }
  Status barrier() override { return c_->barrier(); }

 private:
  std::unique_ptr<Communicator> c_;
};

}  // namespace

Status makeChorusBackend(const Options&, std::unique_ptr<Backend>* out) {
  Config config;
  CHORUS_RETURN_IF_ERROR(Config::fromEnvironment(&config));
  std::unique_ptr<Communicator> comm;
  CHORUS_RETURN_IF_ERROR(Communicator::createFromEnvironment(config, &comm));
  *out = std::make_unique<ChorusBackend>(std::move(comm));
  return Status::Ok();
}

}  // namespace chorus::bench
