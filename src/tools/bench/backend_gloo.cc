#include "backend_gloo.h"

#include <gloo/allgather.h>
#include <gloo/allreduce.h>
#include <gloo/allreduce_halving_doubling.h>
#include <gloo/alltoall.h>
#include <gloo/broadcast.h>
#include <gloo/gather.h>
#include <gloo/math.h>
#include <gloo/reduce.h>
#include <gloo/reduce_scatter.h>
#include <gloo/scatter.h>

#include <cstring>
#include <exception>

#include "native_type.h"

namespace chorus::bench {

namespace {

using Fn = void (*)(void*, const void*, const void*, size_t);

// Gloo's two generations of reduction functions: plain function pointers for the option-style
// collectives, ReductionFunction objects for the old-style algorithms (halving-doubling).
template <typename T>
struct Reduction {
  Fn fn = nullptr;
  const gloo::ReductionFunction<T>* old = nullptr;
};

template <typename T>
Status reductionOf(RedOp op, Reduction<T>* out) {
  using Old = gloo::ReductionFunction<T>;
  switch (op) {
    case RedOp::Sum:
      *out = {static_cast<Fn>(&gloo::sum<T>), Old::sum};
      return Status::Ok();
    case RedOp::Prod:
      *out = {static_cast<Fn>(&gloo::product<T>), Old::product};
      return Status::Ok();
    case RedOp::Max:
      *out = {static_cast<Fn>(&gloo::max<T>), Old::max};
      return Status::Ok();
    case RedOp::Min:
      *out = {static_cast<Fn>(&gloo::min<T>), Old::min};
      return Status::Ok();
    default:
      return Status::Unsupported(std::string("Gloo has no ") + redOpName(op) + " reduction");
  }
}

// Runs f(T{}) with the C++ type of t. Gloo reports failures (timeouts, closed pairs) by
// throwing.
template <typename F>
Status typed(const char* what, DataType t, F&& f) {
  try {
    return withNativeType(t, f, [t] {
      return Status::Unsupported(std::string("the Gloo backend has no ") + dataTypeName(t) +
                                 " (use float32, float64 or an integer type)");
    });
  } catch (const std::exception& e) {
    return Status::RemoteError(std::string("gloo ") + what + ": " + e.what());
  }
}

template <typename T>
T* mut(const T* p) {
  return const_cast<T*>(p);
}

}  // namespace

template <typename T>
Status GlooBackend::allReduceT(const T* s, T* r, size_t n, RedOp op) {
  Reduction<T> fn;
  CHORUS_RETURN_IF_ERROR(reductionOf<T>(op, &fn));
  if (algo_ == "hd") {
    const Cached::Key key{0, r, n, int(op), sizeof(T), false};
    if (!cached_.algo || cached_.key != key) {
      cached_ = {key, nullptr, {}};  // the old instance goes first
      cached_.algo = std::make_unique<gloo::AllreduceHalvingDoubling<T>>(ctx_, std::vector<T*>{r},
                                                                         int(n), fn.old);
    }
    if (s != r) memcpy(r, s, n * sizeof(T));  // halving-doubling works in place only
    cached_.algo->run();
    return Status::Ok();
  }
  gloo::AllreduceOptions o(ctx_);
  o.setAlgorithm(algo_ == "bcube" ? gloo::AllreduceOptions::Algorithm::BCUBE
                                  : gloo::AllreduceOptions::Algorithm::RING);
  if (s != r) o.setInput(mut(s), n);
  o.setOutput(r, n);
  o.setReduceFunction(fn.fn);
  gloo::allreduce(o);
  return Status::Ok();
}

// Gloo's reduce-scatter (halving-doubling) reduces a whole buffer in place and leaves this
// rank's block at its start: out of place, the input is first copied to scratch; either way
// the block is then moved to where Chorus's convention puts it.
template <typename T>
Status GlooBackend::reduceScatterT(const T* s, T* r, size_t n, RedOp op) {
  Reduction<T> fn;
  CHORUS_RETURN_IF_ERROR(reductionOf<T>(op, &fn));
  const size_t total = n * size_t(size());
  const bool inPlace = s + size_t(rank()) * n == r;
  const Cached::Key key{1, s, n, int(op), sizeof(T), !inPlace};
  if (!cached_.algo || cached_.key != key) {
    cached_ = {key, nullptr, std::vector<char>(inPlace ? 0 : total * sizeof(T))};
    T* buf = inPlace ? mut(s) : reinterpret_cast<T*>(cached_.scratch.data());
    cached_.algo = std::make_unique<gloo::ReduceScatterHalvingDoubling<T>>(
        ctx_, std::vector<T*>{buf}, int(total), std::vector<int>(size_t(size()), int(n)), fn.old);
  }
  T* buf = inPlace ? mut(s) : reinterpret_cast<T*>(cached_.scratch.data());
  if (!inPlace) memcpy(buf, s, total * sizeof(T));
  cached_.algo->run();
  if (buf != r) memmove(r, buf, n * sizeof(T));
  return Status::Ok();
}

Status GlooBackend::allReduce(const void* s, void* r, size_t n, DataType t, RedOp op) {
  return typed("allreduce", t, [&](auto x) {
    using T = decltype(x);
    return allReduceT(static_cast<const T*>(s), static_cast<T*>(r), n, op);
  });
}

Status GlooBackend::reduceScatter(const void* s, void* r, size_t n, DataType t, RedOp op) {
  return typed("reduce_scatter", t, [&](auto x) {
    using T = decltype(x);
    return reduceScatterT(static_cast<const T*>(s), static_cast<T*>(r), n, op);
  });
}

Status GlooBackend::allGather(const void* s, void* r, size_t n, DataType t) {
  return typed("allgather", t, [&](auto x) {
    using T = decltype(x);
    gloo::AllgatherOptions o(ctx_);
    T* out = static_cast<T*>(r);
    if (out + size_t(rank()) * n != s) o.setInput(mut(static_cast<const T*>(s)), n);
    o.setOutput(out, n * size_t(size()));
    gloo::allgather(o);
    return Status::Ok();
  });
}

Status GlooBackend::broadcast(const void* s, void* r, size_t n, DataType t, int root) {
  return typed("broadcast", t, [&](auto x) {
    using T = decltype(x);
    gloo::BroadcastOptions o(ctx_);
    if (rank() == root && s != r) o.setInput(mut(static_cast<const T*>(s)), n);
    o.setOutput(static_cast<T*>(r), n);
    o.setRoot(root);
    gloo::broadcast(o);
    return Status::Ok();
  });
}

Status GlooBackend::reduce(const void* s, void* r, size_t n, DataType t, RedOp op, int root) {
  return typed("reduce", t, [&](auto x) {
    using T = decltype(x);
    Reduction<T> fn;
    CHORUS_RETURN_IF_ERROR(reductionOf<T>(op, &fn));
    gloo::ReduceOptions o(ctx_);
    if (s != r) o.setInput(mut(static_cast<const T*>(s)), n);
    o.setOutput(static_cast<T*>(r), n);  // every rank: Gloo uses it as scratch off the root
    o.setRoot(root);
    o.setReduceFunction(fn.fn);
    gloo::reduce(o);
    return Status::Ok();
  });
}

Status GlooBackend::allToAll(const void* s, void* r, size_t n, DataType t) {
  return typed("alltoall", t, [&](auto x) {
    using T = decltype(x);
    gloo::AlltoallOptions o(ctx_);
    o.setInput(mut(static_cast<const T*>(s)), n * size_t(size()));
    o.setOutput(static_cast<T*>(r), n * size_t(size()));
    gloo::alltoall(o);
    return Status::Ok();
  });
}

Status GlooBackend::gather(const void* s, void* r, size_t n, DataType t, int root) {
  return typed("gather", t, [&](auto x) {
    using T = decltype(x);
    gloo::GatherOptions o(ctx_);
    o.setInput(mut(static_cast<const T*>(s)), n);
    if (rank() == root) o.setOutput(static_cast<T*>(r), n * size_t(size()));
    o.setRoot(root);
    gloo::gather(o);
    return Status::Ok();
  });
}

Status GlooBackend::scatter(const void* s, void* r, size_t n, DataType t, int root) {
  return typed("scatter", t, [&](auto x) {
    using T = decltype(x);
    gloo::ScatterOptions o(ctx_);
    if (rank() == root) {
      std::vector<T*> parts;
      for (int p = 0; p < size(); ++p) parts.push_back(mut(static_cast<const T*>(s)) + p * n);
      o.setInputs(parts, n);
    }
    o.setOutput(static_cast<T*>(r), n);
    o.setRoot(root);
    gloo::scatter(o);
    return Status::Ok();
  });
}

}  // namespace chorus::bench
