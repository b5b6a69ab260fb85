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

namespace chorus::bench {

namespace {

using Fn = void (*)(void*, const void*, const void*, size_t);

// Calls f(T{}) with the C++ type of t; Gloo's reductions exist for these.
template <typename F>
Status withType(DataType t, F&& f) {
  switch (t) {
    case DataType::Int8:
      return f(int8_t{});
    case DataType::Uint8:
      return f(uint8_t{});
    case DataType::Int32:
      return f(int32_t{});
    case DataType::Uint32:
      return f(uint32_t{});
    case DataType::Int64:
      return f(int64_t{});
    case DataType::Uint64:
      return f(uint64_t{});
    case DataType::Float32:
      return f(float{});
    case DataType::Float64:
      return f(double{});
    default:
      return Status::Unsupported(std::string("the Gloo backend has no ") + dataTypeName(t) +
                                 " (use float32, float64 or an integer type)");
  }
}

template <typename T>
Status newFn(RedOp op, Fn* out) {
  switch (op) {
    case RedOp::Sum:
      *out = static_cast<Fn>(&gloo::sum<T>);
      return Status::Ok();
    case RedOp::Prod:
      *out = static_cast<Fn>(&gloo::product<T>);
      return Status::Ok();
    case RedOp::Max:
      *out = static_cast<Fn>(&gloo::max<T>);
      return Status::Ok();
    case RedOp::Min:
      *out = static_cast<Fn>(&gloo::min<T>);
      return Status::Ok();
    default:
      return Status::Unsupported(std::string("Gloo has no ") + redOpName(op) + " reduction");
  }
}

template <typename T>
Status oldFn(RedOp op, const gloo::ReductionFunction<T>** out) {
  switch (op) {
    case RedOp::Sum:
      *out = gloo::ReductionFunction<T>::sum;
      return Status::Ok();
    case RedOp::Prod:
      *out = gloo::ReductionFunction<T>::product;
      return Status::Ok();
    case RedOp::Max:
      *out = gloo::ReductionFunction<T>::max;
      return Status::Ok();
    case RedOp::Min:
      *out = gloo::ReductionFunction<T>::min;
      return Status::Ok();
    default:
      return Status::Unsupported(std::string("Gloo has no ") + redOpName(op) + " reduction");
  }
}

// Gloo reports failures (timeouts, closed pairs) by throwing.
template <typename F>
Status guarded(const char* what, F&& f) {
  try {
    return f();
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
  if (algo_ == "hd") {
    const gloo::ReductionFunction<T>* fn = nullptr;
    CHORUS_RETURN_IF_ERROR(oldFn<T>(op, &fn));
    Cached& c = cached_;
    if (!c.algo || c.kind != 0 || c.ptr != r || c.count != n || c.op != int(op) ||
        c.type != int(sizeof(T))) {
      c = Cached{};
      c.algo =
          std::make_unique<gloo::AllreduceHalvingDoubling<T>>(ctx_, std::vector<T*>{r}, int(n), fn);
      c.ptr = r, c.count = n, c.op = int(op), c.type = int(sizeof(T)), c.kind = 0;
    }
    if (s != r) memcpy(r, s, n * sizeof(T));  // halving-doubling works in place only
    c.algo->run();
    return Status::Ok();
  }
  Fn fn = nullptr;
  CHORUS_RETURN_IF_ERROR(newFn<T>(op, &fn));
  gloo::AllreduceOptions o(ctx_);
  o.setAlgorithm(algo_ == "bcube" ? gloo::AllreduceOptions::Algorithm::BCUBE
                                  : gloo::AllreduceOptions::Algorithm::RING);
  if (s != r) o.setInput(mut(s), n);
  o.setOutput(r, n);
  o.setReduceFunction(fn);
  gloo::allreduce(o);
  return Status::Ok();
}

// Gloo's reduce-scatter (halving-doubling) reduces a whole buffer in place and leaves this
// rank's block at its start: out of place, the input is first copied to scratch; either way
// the block is then moved to where Chorus's convention puts it.
template <typename T>
Status GlooBackend::reduceScatterT(const T* s, T* r, size_t n, RedOp op) {
  const gloo::ReductionFunction<T>* fn = nullptr;
  CHORUS_RETURN_IF_ERROR(oldFn<T>(op, &fn));
  const size_t total = n * size_t(size());
  const bool inPlace = s + size_t(rank()) * n == r;
  Cached& c = cached_;
  if (!c.algo || c.kind != 1 || c.ptr != s || c.count != n || c.op != int(op) ||
      c.type != int(sizeof(T)) || c.scratch.empty() == !inPlace) {
    c = Cached{};
    if (!inPlace) c.scratch.resize(total * sizeof(T));
    T* buf = inPlace ? mut(s) : reinterpret_cast<T*>(c.scratch.data());
    c.algo = std::make_unique<gloo::ReduceScatterHalvingDoubling<T>>(
        ctx_, std::vector<T*>{buf}, int(total), std::vector<int>(size_t(size()), int(n)), fn);
    c.ptr = s, c.count = n, c.op = int(op), c.type = int(sizeof(T)), c.kind = 1;
  }
  T* buf = inPlace ? mut(s) : reinterpret_cast<T*>(c.scratch.data());
  if (!inPlace) memcpy(buf, s, total * sizeof(T));
  c.algo->run();
  if (buf != r) memmove(r, buf, n * sizeof(T));
  return Status::Ok();
}

Status GlooBackend::allReduce(const void* s, void* r, size_t n, DataType t, RedOp op) {
  return guarded("allreduce", [&] {
    return withType(t, [&](auto x) {
      using T = decltype(x);
      return allReduceT(static_cast<const T*>(s), static_cast<T*>(r), n, op);
    });
  });
}

Status GlooBackend::reduceScatter(const void* s, void* r, size_t n, DataType t, RedOp op) {
  return guarded("reduce_scatter", [&] {
    return withType(t, [&](auto x) {
      using T = decltype(x);
      return reduceScatterT(static_cast<const T*>(s), static_cast<T*>(r), n, op);
    });
  });
}

Status GlooBackend::allGather(const void* s, void* r, size_t n, DataType t) {
  return guarded("allgather", [&] {
    return withType(t, [&](auto x) {
      using T = decltype(x);
      gloo::AllgatherOptions o(ctx_);
      T* out = static_cast<T*>(r);
      if (out + size_t(rank()) * n != s) o.setInput(mut(static_cast<const T*>(s)), n);
      o.setOutput(out, n * size_t(size()));
      gloo::allgather(o);
      return Status::Ok();
    });
  });
}

Status GlooBackend::broadcast(const void* s, void* r, size_t n, DataType t, int root) {
  return guarded("broadcast", [&] {
    return withType(t, [&](auto x) {
      using T = decltype(x);
      gloo::BroadcastOptions o(ctx_);
      if (rank() == root && s != r) o.setInput(mut(static_cast<const T*>(s)), n);
      o.setOutput(static_cast<T*>(r), n);
      o.setRoot(root);
      gloo::broadcast(o);
      return Status::Ok();
    });
  });
}

Status GlooBackend::reduce(const void* s, void* r, size_t n, DataType t, RedOp op, int root) {
  return guarded("reduce", [&] {
    return withType(t, [&](auto x) {
      using T = decltype(x);
      Fn fn = nullptr;
      CHORUS_RETURN_IF_ERROR(newFn<T>(op, &fn));
      gloo::ReduceOptions o(ctx_);
      if (s != r) o.setInput(mut(static_cast<const T*>(s)), n);
      o.setOutput(static_cast<T*>(r), n);  // every rank: Gloo uses it as scratch off the root
      o.setRoot(root);
      o.setReduceFunction(fn);
      gloo::reduce(o);
      return Status::Ok();
    });
  });
}

Status GlooBackend::allToAll(const void* s, void* r, size_t n, DataType t) {
  return guarded("alltoall", [&] {
    return withType(t, [&](auto x) {
      using T = decltype(x);
      gloo::AlltoallOptions o(ctx_);
      o.setInput(mut(static_cast<const T*>(s)), n * size_t(size()));
      o.setOutput(static_cast<T*>(r), n * size_t(size()));
      gloo::alltoall(o);
      return Status::Ok();
    });
  });
}

Status GlooBackend::gather(const void* s, void* r, size_t n, DataType t, int root) {
  return guarded("gather", [&] {
    return withType(t, [&](auto x) {
      using T = decltype(x);
      gloo::GatherOptions o(ctx_);
      o.setInput(mut(static_cast<const T*>(s)), n);
      if (rank() == root) o.setOutput(static_cast<T*>(r), n * size_t(size()));
      o.setRoot(root);
      gloo::gather(o);
      return Status::Ok();
    });
  });
}

Status GlooBackend::scatter(const void* s, void* r, size_t n, DataType t, int root) {
  return guarded("scatter", [&] {
    return withType(t, [&](auto x) {
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
  });
}

}  // namespace chorus::bench
