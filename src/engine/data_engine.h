// The data engine: everything the executor does to data goes through it — copy, reduce,
// scale, divide — over memory references, each returning a Completion that the executor
// tests before it counts the work done or lets go of the memory involved. One engine serves a
// memory kind: the CPU engine finishes every operation before it returns; a CUDA engine
// enqueues kernels on a stream and completes on an event, so the same executor runs both.
#pragma once

#include <cstddef>
#include <cstdint>

#include "chorus/status.h"
#include "chorus/types.h"
#include "common/clock.h"
#include "engine/completion.h"
#include "engine/memory.h"

namespace chorus {

class DataEngine {
 public:
  virtual ~DataEngine() = default;
  virtual const char* name() const = 0;
  // Whether this engine can read and write memory of kind `k`.
  virtual bool handles(MemoryKind k) const = 0;

  // dst[0, bytes) = src[0, bytes); the ranges do not overlap.
  virtual Completion copy(MemRef dst, MemRef src, size_t bytes) = 0;
  // The same, written around the caches where the engine can: for a destination too large to
  // stay cached, whose lines a plain copy would read in only to overwrite them.
  virtual Completion copyStreaming(MemRef dst, MemRef src, size_t bytes) {
    return copy(dst, src, bytes);
  }
  // dst[i] = a[i] (op) b[i] for i < n. op is Sum, Prod, Max or Min; dst may alias a or b
  // exactly. Avg and PreMulSum reduce with Sum, then divide or were scaled beforehand.
  virtual Completion reduce(DataType t, RedOp op, MemRef dst, MemRef a, MemRef b, size_t n) = 0;
  // The same, writing dst around the caches where the engine can (see copyStreaming).
  virtual Completion reduceStreaming(DataType t, RedOp op, MemRef dst, MemRef a, MemRef b,
                                     size_t n) {
    return reduce(t, op, dst, a, b, n);
  }
  // dst[i] = src[i] * (*scalar); `scalar` is one host element of type t. dst may alias src.
  virtual Completion scale(DataType t, MemRef dst, MemRef src, size_t n, const void* scalar) = 0;
  // dst[i] = src[i] / divisor (truncating for integers). dst may alias src.
  virtual Completion divide(DataType t, MemRef dst, MemRef src, size_t n, uint64_t divisor) = 0;

  // True once `c` has finished: its destination holds the result and its sources may change.
  virtual bool test(const Completion& c) = 0;
};

// Blocks until `c` has finished, for the steps around a run (staging, Avg's division); the
// executor itself never blocks on a completion.
Status waitFor(DataEngine& engine, const Completion& c, Deadline deadline);

// The engine for memory of kind `k` in this process, or nullptr when this build has none
// (CUDA device memory before the CUDA engine exists).
DataEngine* engineFor(MemoryKind k);

}  // namespace chorus
