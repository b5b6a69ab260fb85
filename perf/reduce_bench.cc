// Throughput of the CPU reduction kernels, next to memcpy on the same buffer sizes: reduce
// reads two buffers and writes one, so at sizes beyond the caches it should approach 1.5x
// memcpy's time per byte of output, i.e. the same GB/s counted as bytes read + written.
//
// Also: scale (PreMulSum's multiply) and divide (Avg's division) per type, reduce in place
// (dst == a, as the executor reduces into the output), and memcpy on two threads at once, the
// machine's copy bandwidth that bounds any shared-memory collective.
//
//   reduce_bench                      the chosen ISA, every type x op, 4 KiB / 256 KiB / 8 MiB
//   reduce_bench --benchmark_filter=float32/sum
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include "reduce/element.h"
#include "reduce/reducer.h"

namespace chorus {
namespace {

const size_t kBytes[] = {4 << 10, 256 << 10, 8 << 20};
const RedOp kOps[] = {RedOp::Sum, RedOp::Prod, RedOp::Max, RedOp::Min};

// Cache-line aligned so that no size pays for split loads the others do not.
struct Buffer {
  explicit Buffer(size_t bytes) : ptr(static_cast<uint8_t*>(aligned_alloc(64, bytes))) {}
  ~Buffer() { free(ptr); }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  uint8_t* get() const { return ptr; }
  uint8_t* ptr;
};

// Values near 1 so Prod neither overflows nor underflows into slow paths while it runs.
void fillOnes(DataType t, void* p, size_t n) {
  for (size_t i = 0; i < n; ++i) storeElement(t, p, i, 1.0 + static_cast<double>(i % 7) / 64);
}

void runReduce(benchmark::State& state, const CpuReducer* r, DataType t, RedOp op, size_t bytes) {
  const size_t n = bytes / dataTypeSize(t);
  Buffer a(bytes), b(bytes), d(bytes);
  fillOnes(t, a.get(), n);
  fillOnes(t, b.get(), n);
  for (auto _ : state) {
    r->reduce(t, op, d.get(), a.get(), b.get(), n);
    benchmark::DoNotOptimize(d.get());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * 3 * bytes));
}

void runMemcpy(benchmark::State& state, size_t bytes) {
  Buffer s(bytes), d(bytes);
  memset(s.get(), 1, bytes);
  for (auto _ : state) {
    memcpy(d.get(), s.get(), bytes);
    benchmark::DoNotOptimize(d.get());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * 2 * bytes));
}

// PreMulSum's scalar and Avg's divisor, each applied in place on one buffer (read + write).
void runScale(benchmark::State& state, const CpuReducer* r, DataType t, bool divide, size_t bytes) {
  const size_t n = bytes / dataTypeSize(t);
  Buffer a(bytes), scalar(16);
  fillOnes(t, a.get(), n);
  storeElement(t, scalar.get(), 0, 1.0);  // 1: repeated runs leave the values as they are
  for (auto _ : state) {
    if (divide)
      r->divide(t, a.get(), a.get(), n, 1);
    else
      r->scale(t, a.get(), a.get(), n, scalar.get());
    benchmark::DoNotOptimize(a.get());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * 2 * bytes));
}

void runReduceInPlace(benchmark::State& state, const CpuReducer* r, size_t bytes) {
  const size_t n = bytes / 4;
  Buffer a(bytes), b(bytes);
  fillOnes(DataType::Float32, a.get(), n);
  memset(b.get(), 0, bytes);  // adding zeros keeps a unchanged however often it runs
  for (auto _ : state) {
    r->reduce(DataType::Float32, RedOp::Sum, a.get(), a.get(), b.get(), n);
    benchmark::DoNotOptimize(a.get());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * 3 * bytes));
}

std::string sizeName(size_t bytes) {
  return bytes >= (1 << 20) ? std::to_string(bytes >> 20) + "MiB"
                            : std::to_string(bytes >> 10) + "KiB";
}

void registerAll() {
  const CpuReducer& best = CpuReducer::get();
  const CpuReducer* scalar = CpuReducer::forIsa("scalar");
  for (size_t bytes : kBytes) {
    benchmark::RegisterBenchmark(("memcpy/" + sizeName(bytes)).c_str(), runMemcpy, bytes)
        ->MinTime(0.05);
    // Each thread its own buffers; bytes_per_second is the sum over both threads.
    benchmark::RegisterBenchmark(("memcpy/" + sizeName(bytes)).c_str(), runMemcpy, bytes)
        ->MinTime(0.05)
        ->Threads(2)
        ->UseRealTime();
    benchmark::RegisterBenchmark(
        (std::string("reduce_inplace/") + best.isa() + "/float32/sum/" + sizeName(bytes)).c_str(),
        runReduceInPlace, &best, bytes)
        ->MinTime(0.05);
    if (scalar != &best) {
      const std::string name = "reduce/scalar/float32/sum/" + sizeName(bytes);
      benchmark::RegisterBenchmark(name.c_str(), runReduce, scalar, DataType::Float32, RedOp::Sum,
                                   bytes)
          ->MinTime(0.05);
    }
    for (int ti = 0; ti < kNumDataTypes; ++ti) {
      const DataType t = static_cast<DataType>(ti);
      for (RedOp op : kOps) {
        const std::string name = std::string("reduce/") + best.isa() + "/" + dataTypeName(t) + "/" +
                                 redOpName(op) + "/" + sizeName(bytes);
        benchmark::RegisterBenchmark(name.c_str(), runReduce, &best, t, op, bytes)->MinTime(0.05);
      }
      for (bool divide : {false, true}) {
        const std::string name = std::string(divide ? "divide/" : "scale/") + best.isa() + "/" +
                                 dataTypeName(t) + "/" + sizeName(bytes);
        benchmark::RegisterBenchmark(name.c_str(), runScale, &best, t, divide, bytes)
            ->MinTime(0.05);
      }
    }
  }
}

}  // namespace
}  // namespace chorus

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  chorus::registerAll();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
