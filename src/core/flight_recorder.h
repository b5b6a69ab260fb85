// The flight recorder: the last N calls of one communicator (what, which algorithm, when, how
// it ended, and whom a stuck call waits on), kept in a ring so a hang or a failure can be
// explained after the fact. It is dumped as JSON when a call times out, when the communicator
// is aborted, and on SIGUSR1 (every live communicator of the process); `chorus-trace` merges
// the dumps of all ranks into one Chrome/Perfetto trace and names the rank everyone waits on.
//
// Cost: the calling thread writes a few relaxed atomics at the start and the end of a call.
// Entries are seqlocked so a dump from another thread (the signal watcher) never sees half an
// entry and never blocks the caller.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/op_desc.h"

namespace chorus {

class FlightRecorder {
 public:
  enum class State : uint8_t { Running = 1, Done = 2, Failed = 3 };

  // A copy of one entry, as a dump sees it.
  struct Record {
    uint64_t call = 0;   // calls made on this communicator before this one
    uint32_t opSeq = 0;  // the collective sequence number carried in message headers
    OpDesc desc;
    const char* algorithm = "";      // static storage (the algorithm registry's names)
    int64_t startNs = 0, endNs = 0;  // steady clock; endNs 0 while running
    State state = State::Running;
    int waitPeer = -1;  // the peer the call last blocked on, or -1
    int waitStep = -1;  // and the schedule step (1-based)
  };

  // `capacity` 0 records nothing (CHORUS_TRACE_BUFFER=0).
  explicit FlightRecorder(size_t capacity);
  bool enabled() const { return capacity_ != 0; }

  // Calling thread only. begin returns the entry's index for the calls below.
  uint64_t begin(const OpDesc& d, uint32_t opSeq, const char* algorithm, int64_t nowNs);
  void waiting(uint64_t call, int peer, int step);
  void end(uint64_t call, bool ok, int64_t nowNs);
  // The entry begun last (the call running now, when one is).
  uint64_t lastCall() const { return calls_.load(std::memory_order_relaxed) - 1; }

  // Any thread: the entries still in the ring, oldest first.
  std::vector<Record> snapshot() const;

 private:
  struct Slot {
    std::atomic<uint64_t> version{0};  // odd while being written
    std::atomic<uint64_t> call{0}, count{0};
    std::atomic<uint32_t> opSeq{0};
    std::atomic<uint32_t> packed{0};  // coll | dtype << 8 | op << 16 | state << 24
    std::atomic<int32_t> root{0}, waitPeer{-1}, waitStep{-1};
    std::atomic<const char*> algorithm{""};
    std::atomic<int64_t> startNs{0}, endNs{0};
  };
  Slot& slot(uint64_t call) const { return slots_[call % capacity_]; }

  const size_t capacity_;
  std::unique_ptr<Slot[]> slots_;
  std::atomic<uint64_t> calls_{0};
};

// Where and as what a communicator's recorder is dumped.
struct FlightDumpInfo {
  int rank = 0;
  int size = 1;
  std::string commId;  // the same on every rank of the communicator (not the secret)
  std::string host;
  std::string transports;
};

// The dump as JSON (docs/flight-recorder.md): identity, clocks, entries.
std::string flightRecorderJson(const FlightRecorder& r, const FlightDumpInfo& info,
                               const std::string& reason);
// Writes it to CHORUS_TRACE_DIR (default /tmp) as chorus-trace-<commId>-rank<r>.json; returns
// the path, or "" (logged) when it could not be written.
std::string dumpFlightRecorder(const FlightRecorder& r, const FlightDumpInfo& info,
                               const std::string& reason);

// SIGUSR1: communicators register while they live; the first registration installs the handler
// unless the program has its own (or CHORUS_TRACE_SIGNAL=0).
using FlightDumpFn = std::function<void()>;
uint64_t registerFlightDump(FlightDumpFn fn);
void unregisterFlightDump(uint64_t handle);

}  // namespace chorus
