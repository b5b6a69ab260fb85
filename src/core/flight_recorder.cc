#include "core/flight_recorder.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "common/clock.h"
#include "common/env.h"
#include "common/log.h"

namespace chorus {

FlightRecorder::FlightRecorder(size_t capacity)
    : capacity_(capacity), slots_(capacity ? new Slot[capacity] : nullptr) {}

uint64_t FlightRecorder::begin(const OpDesc& d, uint32_t opSeq, const char* algorithm,
                               int64_t nowNs) {
  const uint64_t call = calls_.load(std::memory_order_relaxed);
  calls_.store(call + 1, std::memory_order_relaxed);
  if (!capacity_) return call;
  Slot& s = slot(call);
  const uint64_t v = s.version.load(std::memory_order_relaxed);
  s.version.store(v + 1, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);
  s.call.store(call, std::memory_order_relaxed);
  s.count.store(d.count, std::memory_order_relaxed);
  s.opSeq.store(opSeq, std::memory_order_relaxed);
  s.packed.store(uint32_t(d.coll) | uint32_t(d.dtype) << 8 | uint32_t(d.op) << 16 |
                     uint32_t(State::Running) << 24,
                 std::memory_order_relaxed);
  s.root.store(d.root, std::memory_order_relaxed);
  s.waitPeer.store(-1, std::memory_order_relaxed);
  s.waitStep.store(-1, std::memory_order_relaxed);
  s.algorithm.store(algorithm, std::memory_order_relaxed);
  s.startNs.store(nowNs, std::memory_order_relaxed);
  s.endNs.store(0, std::memory_order_relaxed);
  s.version.store(v + 2, std::memory_order_release);
  return call;
}

void FlightRecorder::waiting(uint64_t call, int peer, int step) {
  if (!capacity_) return;
  Slot& s = slot(call);
  const uint64_t v = s.version.load(std::memory_order_relaxed);
  s.version.store(v + 1, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);
  s.waitPeer.store(peer, std::memory_order_relaxed);
  s.waitStep.store(step, std::memory_order_relaxed);
  s.version.store(v + 2, std::memory_order_release);
}

void FlightRecorder::end(uint64_t call, bool ok, int64_t nowNs) {
  if (!capacity_) return;
  Slot& s = slot(call);
  const uint64_t v = s.version.load(std::memory_order_relaxed);
  s.version.store(v + 1, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);
  const uint32_t packed = s.packed.load(std::memory_order_relaxed) & 0xffffffu;
  s.packed.store(packed | uint32_t(ok ? State::Done : State::Failed) << 24,
                 std::memory_order_relaxed);
  s.endNs.store(nowNs, std::memory_order_relaxed);
  s.version.store(v + 2, std::memory_order_release);
}

std::vector<FlightRecorder::Record> FlightRecorder::snapshot() const {
  std::vector<Record> out;
  const uint64_t calls = calls_.load(std::memory_order_acquire);
  if (!capacity_) return out;
  const uint64_t first = calls > capacity_ ? calls - capacity_ : 0;
  for (uint64_t c = first; c < calls; ++c) {
    const Slot& s = slot(c);
    Record r;
    bool whole = false;
    for (int attempt = 0; attempt < 100 && !whole; ++attempt) {
      const uint64_t v = s.version.load(std::memory_order_acquire);
      if (v & 1) continue;
      r.call = s.call.load(std::memory_order_relaxed);
      r.desc.count = s.count.load(std::memory_order_relaxed);
      r.opSeq = s.opSeq.load(std::memory_order_relaxed);
      const uint32_t packed = s.packed.load(std::memory_order_relaxed);
      r.desc.coll = Collective(packed & 0xff);
      r.desc.dtype = DataType((packed >> 8) & 0xff);
      r.desc.op = RedOp((packed >> 16) & 0xff);
      r.state = State(packed >> 24);
      r.desc.root = s.root.load(std::memory_order_relaxed);
      r.waitPeer = s.waitPeer.load(std::memory_order_relaxed);
      r.waitStep = s.waitStep.load(std::memory_order_relaxed);
      r.algorithm = s.algorithm.load(std::memory_order_relaxed);
      r.startNs = s.startNs.load(std::memory_order_relaxed);
      r.endNs = s.endNs.load(std::memory_order_relaxed);
      std::atomic_thread_fence(std::memory_order_acquire);
      whole = s.version.load(std::memory_order_relaxed) == v;
    }
    // Skipped when it was being rewritten all along, or by a newer call meanwhile.
    if (whole && r.call == c) out.push_back(r);
  }
  return out;
}

namespace {

const char* stateName(FlightRecorder::State s) {
  switch (s) {
    case FlightRecorder::State::Running:
      return "running";
    case FlightRecorder::State::Done:
      return "done";
    case FlightRecorder::State::Failed:
      return "failed";
  }
  return "?";
}

int64_t wallNowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

std::string flightRecorderJson(const FlightRecorder& r, const FlightDumpInfo& info,
                               const std::string& reason) {
  using nlohmann::json;
  json entries = json::array();
  for (const FlightRecorder::Record& e : r.snapshot()) {
    const bool p2p = e.desc.coll == Collective::Send || e.desc.coll == Collective::Recv;
    json j = {{"call", e.call},
              {"collective", collectiveName(e.desc.coll)},
              {"count", e.desc.count},
              {"dtype", dataTypeName(e.desc.dtype)},
              {"algorithm", e.algorithm ? e.algorithm : ""},
              {"state", stateName(e.state)},
              {"start_ns", e.startNs}};
    if (!p2p) j["seq"] = e.opSeq;
    if (e.desc.root >= 0) j[p2p ? "peer" : "root"] = e.desc.root;
    if (e.endNs) j["end_ns"] = e.endNs;
    if (e.waitPeer >= 0) j["waiting_on"] = {{"rank", e.waitPeer}, {"step", e.waitStep}};
    if (e.desc.coll == Collective::AllReduce || e.desc.coll == Collective::Reduce ||
        e.desc.coll == Collective::ReduceScatter)
      j["op"] = redOpName(e.desc.op);
    entries.push_back(std::move(j));
  }
  json dump = {{"format", "chorus-flight-recorder"},
               {"version", 1},
               {"reason", reason},
               {"rank", info.rank},
               {"size", info.size},
               {"comm", info.commId},
               {"host", info.host},
               {"pid", int(getpid())},
               {"transports", info.transports},
               // One reading of both clocks, so tools can place steady-clock times in real time.
               {"clock", {{"steady_ns", nowNs()}, {"wall_ns", wallNowNs()}}},
               {"entries", std::move(entries)}};
  return dump.dump(1);
}

std::string dumpFlightRecorder(const FlightRecorder& r, const FlightDumpInfo& info,
                               const std::string& reason) {
  if (!r.enabled()) return "";
  const std::string dir = envString("CHORUS_TRACE_DIR").value_or("/tmp");
  const std::string path =
      dir + "/chorus-trace-" + info.commId + "-rank" + std::to_string(info.rank) + ".json";
  const std::string text = flightRecorderJson(r, info, reason) + "\n";
  const std::string tmp = path + ".tmp";
  int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  bool ok = fd >= 0;
  for (size_t off = 0; ok && off < text.size();) {
    ssize_t n = write(fd, text.data() + off, text.size() - off);
    if (n < 0 && errno == EINTR) continue;
    ok = n > 0;
    off += ok ? size_t(n) : 0;
  }
  if (fd >= 0) close(fd);
  // Renamed into place, so a reader never sees half a dump.
  if (ok) ok = rename(tmp.c_str(), path.c_str()) == 0;
  if (!ok) {
    LOG_WARN(kLogInit,
             "rank %d: could not write the flight recorder to %s: %s (set "
             "CHORUS_TRACE_DIR to a writable directory)",
             info.rank, path.c_str(), strerror(errno));
    unlink(tmp.c_str());
    return "";
  }
  LOG_WARN(kLogInit,
           "rank %d: flight recorder written to %s; merge all ranks' dumps with "
           "`chorus-trace %s/chorus-trace-%s-rank*.json`",
           info.rank, path.c_str(), dir.c_str(), info.commId.c_str());
  return path;
}

// ---- SIGUSR1 ----

namespace {

// The handler only writes a byte to a pipe (async-signal-safe); a watcher thread does the
// dumping, outside the signal context.
struct SignalDumps {
  std::mutex mu;
  std::map<uint64_t, FlightDumpFn> fns;
  uint64_t next = 1;
  bool installed = false;
  int pipe[2] = {-1, -1};
};

SignalDumps& signalDumps() {
  static SignalDumps* s = new SignalDumps;  // never destroyed: the watcher may outlive exit
  return *s;
}

void onSignal(int) {
  const int saved = errno;
  char b = 1;
  ssize_t n = write(signalDumps().pipe[1], &b, 1);
  (void)n;
  errno = saved;
}

void watcherMain() {
  SignalDumps& s = signalDumps();
  for (;;) {
    char b;
    ssize_t n = read(s.pipe[0], &b, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    std::vector<FlightDumpFn> fns;
    {
      std::lock_guard<std::mutex> g(s.mu);
      for (auto& [id, fn] : s.fns) fns.push_back(fn);
    }
    for (auto& fn : fns) fn();
  }
}

void installOnce(SignalDumps& s) {
  if (s.installed) return;
  s.installed = true;
  std::string error;
  if (envInt("CHORUS_TRACE_SIGNAL", &error).value_or(1) == 0) return;
  struct sigaction old {};
  if (sigaction(SIGUSR1, nullptr, &old) != 0 || old.sa_handler != SIG_DFL ||
      (old.sa_flags & SA_SIGINFO)) {
    LOG_INFO(kLogInit,
             "SIGUSR1 has a handler of the program's: flight recorder dumps only on "
             "timeout and abort");
    return;
  }
  if (pipe2(s.pipe, O_CLOEXEC) != 0) return;
  try {
    std::thread(watcherMain).detach();
  } catch (...) {
    return;
  }
  struct sigaction sa {};
  sa.sa_handler = onSignal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  sigaction(SIGUSR1, &sa, nullptr);
}

}  // namespace

uint64_t registerFlightDump(FlightDumpFn fn) {
  SignalDumps& s = signalDumps();
  std::lock_guard<std::mutex> g(s.mu);
  installOnce(s);
  const uint64_t id = s.next++;
  s.fns.emplace(id, std::move(fn));
  return id;
}

void unregisterFlightDump(uint64_t handle) {
  SignalDumps& s = signalDumps();
  std::lock_guard<std::mutex> g(s.mu);
  s.fns.erase(handle);
}

}  // namespace chorus
