// Two ranks of one transport inside one process (two threads, each with its own bootstrap),
// and the ping-pong and streaming loops that shm_transport_bench and tcp_transport_bench run
// over them through the Connection interface, below the executor.
#pragma once

#include <benchmark/benchmark.h>
#include <sched.h>

#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <thread>
#include <vector>

#include "bootstrap/bootstrap.h"
#include "common/clock.h"
#include "transport/transport.h"

namespace chorus::perf {

struct TransportPair {
  std::unique_ptr<Bootstrap> bs[2];
  std::unique_ptr<Transport> t[2];
};

// Connects two bootstraps through a fresh root on 127.0.0.1, then runs make(rank) on both
// threads at once (transport setup is collective).
using MakeTransport =
    std::function<Status(Bootstrap*, int rank, Deadline, std::unique_ptr<Transport>*)>;

inline Status connectPair(const MakeTransport& make, TransportPair* p) {
  uint8_t secret[kSecretBytes];
  std::random_device rd;
  for (auto& b : secret) b = uint8_t(rd());
  UniqueId id;
  CHORUS_RETURN_IF_ERROR(makeUniqueId("127.0.0.1", 0, secret, false, &id));
  CHORUS_RETURN_IF_ERROR(startRoot(&id, 30));
  Status err[2];
  std::thread ranks[2];
  for (int r = 0; r < 2; ++r)
    ranks[r] = std::thread([&, r] {
      const Deadline d = Deadline::after(30);
      err[r] = Bootstrap::connect(id, r, 2, d, &p->bs[r]);
      if (err[r].ok()) err[r] = make(p->bs[r].get(), r, d, &p->t[r]);
    });
  for (auto& t : ranks) t.join();
  for (const Status& st : err) CHORUS_RETURN_IF_ERROR(st);
  return Status::Ok();
}

// Spin, then yield: on an oversubscribed machine the peer may need this core to answer.
template <typename F>
void spinUntil(F&& done) {
  for (int i = 0; !done(); ++i)
    if (i > 2000) sched_yield();
}

inline WireHeader headerFor(size_t bytes) {
  WireHeader h{};
  h.bytes = uint32_t(bytes);
  return h;
}

// Run with ->Threads(2): thread k is rank k. Reports one_way_us = round trip / 2.
inline void pingPong(benchmark::State& state, TransportPair* p) {
  const int me = state.thread_index();
  const size_t bytes = size_t(state.range(0));
  Connection* c = p->t[me]->connection(1 - me);
  std::vector<char> buf(bytes ? bytes : 1, char(me));
  const WireHeader h = headerFor(bytes);
  const void* payload = nullptr;
  auto send = [&] { spinUntil([&] { return c->postSend(h, MemRef::host(buf.data()), nullptr); }); };
  auto recv = [&] {
    spinUntil([&] { return c->peek(&payload) != nullptr; });
    if (bytes) memcpy(buf.data(), payload, bytes);
    c->release();
  };
  const int64_t t0 = nowNs();
  for (auto _ : state) {
    if (me == 0)
      send(), recv();
    else
      recv(), send();
  }
  // Only rank 0 reports (threads' counters are summed), in the units OSU's latency uses.
  if (me == 0 && state.iterations() > 0)
    state.counters["one_way_us"] = double(nowNs() - t0) / 1e3 / double(2 * state.iterations());
}

// Rank 0 sends back to back; rank 1 copies each message out and releases its slot.
inline void stream(benchmark::State& state, TransportPair* p) {
  const int me = state.thread_index();
  const size_t bytes = size_t(state.range(0));
  Connection* c = p->t[me]->connection(1 - me);
  std::vector<char> buf(bytes, char(me + 1));
  const WireHeader h = headerFor(bytes);
  const void* payload = nullptr;
  for (auto _ : state) {
    if (me == 0) {
      spinUntil([&] { return c->postSend(h, MemRef::host(buf.data()), nullptr); });
    } else {
      spinUntil([&] { return c->peek(&payload) != nullptr; });
      memcpy(buf.data(), payload, bytes);
      c->release();
    }
  }
  // Counted once, on the receiver: Google Benchmark sums what its threads report.
  if (me == 1) state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(bytes));
}

// The same bytes through one memcpy on one thread: what a perfect single copy would cost.
inline void memcpyOnce(benchmark::State& state) {
  const size_t bytes = size_t(state.range(0));
  std::vector<char> a(bytes, 1), b(bytes);
  for (auto _ : state) {
    memcpy(b.data(), a.data(), bytes);
    benchmark::DoNotOptimize(b.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(bytes));
}

// Registers <name>/pingpong and <name>/stream (up to the transport's largest message) and
// memcpy beside the stream sizes. Google Benchmark's Time column with two threads is wall time
// over both threads' iterations: read one_way_us and bytes_per_second instead.
inline void registerTransport(const char* name, TransportPair* p) {
  const int64_t most = int64_t(p->t[0]->maxPayloadBytes());
  for (int64_t n : {int64_t(8), int64_t(256), int64_t(4096), int64_t(64 << 10)})
    benchmark::RegisterBenchmark((std::string(name) + "/pingpong").c_str(), pingPong, p)
        ->Arg(n)
        ->Threads(2)
        ->UseRealTime();
  for (int64_t n : {int64_t(4096), int64_t(64 << 10), most}) {
    benchmark::RegisterBenchmark((std::string(name) + "/stream").c_str(), stream, p)
        ->Arg(n)
        ->Threads(2)
        ->UseRealTime();
    benchmark::RegisterBenchmark("memcpy", memcpyOnce)->Arg(n);
  }
}

}  // namespace chorus::perf
