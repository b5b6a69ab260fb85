// chorus-tune: measures, between ranks 0 and 1 and through the public API, the figures the cost
// model (src/tune/cost_model.h) runs on, and writes them as a JSON tuning file (CHORUS_TUNE_FILE
// loads it; docs/json.md). Terms: a one-way time is a ping-pong round trip less its 8-byte return
// leg; the path class is the topology's for ranks 0 and 1 (host_bridge on one host, network across
// two).
// - stepOverheadUs (the executor's cost per message): the slope, against K, of the round trip
//   of K tiny sends posted in one group (K = 1..64): the model serialises them on one channel.
// - latencyUs: the model charges a tiny message the sender's overhead, alpha and the receiver's
//   overhead, so alpha = one-way 8-byte time - 2 overheads (then corrected by the model's own
//   prediction for 8 bytes, which also charges the 16 bytes of copying).
// - bandwidthGBs: the bandwidth at which the model, walked with the figures above, best
//   reproduces the one-way times of 4 and 16 MiB messages (least squares of relative error).
//   Searching through the model keeps its charges (per-chunk overhead, the pipeline's fill and
//   drain) out of the estimate; the plain least-squares line of time against bytes is reported
//   next to it.
// - hostReduceGBs: the rate at which the model, with the figures above, best reproduces a 2-rank
//   allreduce forced to one_shot at 2 and 8 MiB: a send and a receive-reduce of the whole
//   vector on each rank (tools/tune/receive_reduce.h). CpuReducer alone on local arrays (a
//   float32 sum, in place, over 16 MiB, on rank 0) is reported beside it, and is the figure
//   when ranks 0 and 1 do not share memory (across hosts, or CHORUS_TRANSPORT=tcp).
// - cacheMiB, allMissMiB, missGBs (the memory line): every rank copies at once, over host
//   working sets from 16 MiB to 1 GiB (256 MiB with --quick); where the time per byte rises is
//   the cache's end, and by how much, the cost of a byte that misses it (tools/tune/memory.h).
// Other ranks only take part in the barriers. Every wait is bounded by the library's deadlines.
//
//   chorus-run -n 2 -- chorus-tune [--out FILE] [--quick]
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "chorus/chorus.h"
#include "chorus/group.h"
#include "common/clock.h"
#include "core/comm_internals.h"
#include "reduce/reducer.h"
#include "tools/cli/tool.h"
#include "tools/tune/fit.h"
#include "tools/tune/memory.h"
#include "tools/tune/receive_reduce.h"
#include "topo/estimates_json.h"
#include "topo/topology.h"
#include "transport/registry.h"
#include "tune/cost_model.h"

using namespace chorus;
using cli::fmt;
using tune::kMiB;

namespace {

constexpr size_t kTiny = 8;
// The rates the model takes for data in cache are measured on working sets well inside it (a
// 16 MiB one-way touches 32 MiB; the cache of the VM this was written on ends near 128 MiB):
// a measurement at the cache's edge reads whatever the neighbours left of it that minute (64 MiB
// reduced in place here: 14.7 GB/s one day, 8.7 the next). The memory line prices the rest.
constexpr size_t kReduceBytes = 16 * kMiB;
const std::vector<size_t> kLargeSizes = {1 * kMiB, 4 * kMiB, 16 * kMiB, 64 * kMiB};
// Sizes outside [kFitFrom, kFitTo] validate the fit but are not in it.
constexpr size_t kFitFrom = 4 * kMiB, kFitTo = 16 * kMiB;

struct Options {
  std::string out = "chorus.tune";
  bool quick = false;
  bool quiet = false;  // the tuning file and warnings only, no report
};

// Repetitions; every rank derives the same ones from --quick, so their calls match.
struct Effort {
  int tinyIters, burstIters, largeIters, reps;
  std::vector<int> bursts;  // K values
  size_t memoryMaxBytes;    // the largest host working set the memory calibration copies
};

Effort effortFor(bool quick) {
  Effort e;
  if (quick) {
    e = {300, 20, 1, 3, {1, 2, 4, 8, 16, 32, 48, 64}, 256 * kMiB};
  } else {
    e = {5000, 200, 8, 9, {}, 1024 * kMiB};
    for (int k = 1; k <= 64; ++k) e.bursts.push_back(k);
  }
  return e;
}

struct Measured {
  double oneWayTinyUs = 0;
  std::vector<std::pair<int, double>> burstRoundTripUs;  // K, round trip
  std::vector<std::pair<size_t, double>> oneWayLargeUs;  // bytes, one way
  double localReduceGBs = 0;                             // the reducer on local arrays
  std::vector<std::pair<size_t, double>> oneShotUs;      // bytes, 2-rank one_shot allreduce
  tune::MemoryFit memory;
};

struct Line {
  double slope = 0, intercept = 0;
};

Line fitLine(const std::vector<double>& x, const std::vector<double>& y) {
  const double n = double(x.size());
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    sx += x[i], sy += y[i], sxx += x[i] * x[i], sxy += x[i] * y[i];
  }
  const double den = n * sxx - sx * sx;
  Line l;
  l.slope = den != 0 ? (n * sxy - sx * sy) / den : 0;
  l.intercept = (sy - l.slope * sx) / n;
  return l;
}

// Theil-Sen: the median of the slopes between all pairs of points, and the median intercept
// under it; a few points spoilt by load from elsewhere do not move it.
Line robustLine(const std::vector<double>& x, const std::vector<double>& y) {
  std::vector<double> slopes, intercepts;
  for (size_t i = 0; i < x.size(); ++i)
    for (size_t j = i + 1; j < x.size(); ++j)
      if (x[j] != x[i]) slopes.push_back((y[j] - y[i]) / (x[j] - x[i]));
  Line l;
  if (slopes.empty()) return fitLine(x, y);
  l.slope = tune::median(slopes);
  for (size_t i = 0; i < x.size(); ++i) intercepts.push_back(y[i] - l.slope * x[i]);
  l.intercept = tune::median(intercepts);
  return l;
}

// ---- measuring ----

// One leg: `burst` messages of `bytes` in one group (or one plain call when not grouped).
Status leg(Communicator& c, char* buf, size_t bytes, int burst, bool grouped, bool send) {
  const int peer = 1 - c.rank();
  if (!grouped)
    return send ? c.send(buf, bytes, DataType::Uint8, peer)
                : c.recv(buf, bytes, DataType::Uint8, peer);
  groupStart();
  Status first;
  for (int i = 0; i < burst; ++i) {
    char* p = buf + size_t(i) * 64;  // grouped receives get their own bytes
    Status st =
        send ? c.send(p, bytes, DataType::Uint8, peer) : c.recv(p, bytes, DataType::Uint8, peer);
    if (first.ok() && !st.ok()) first = st;
  }
  Status end = groupEnd();
  return first.ok() ? end : first;
}

// Rank 0 pings (the leg above), rank 1 answers with 8 bytes; other ranks do nothing.
Status exchange(Communicator& c, char* buf, size_t bytes, int burst, bool grouped) {
  if (c.rank() > 1) return Status::Ok();
  const int peer = 1 - c.rank();
  if (c.rank() == 0) {
    CHORUS_RETURN_IF_ERROR(leg(c, buf, bytes, burst, grouped, true));
    return c.recv(buf, kTiny, DataType::Uint8, peer);
  }
  CHORUS_RETURN_IF_ERROR(leg(c, buf, bytes, burst, grouped, false));
  return c.send(buf, kTiny, DataType::Uint8, peer);
}

// What one timed loop exchanges: `burst` pings of `bytes` (grouped or one plain call).
struct Round {
  size_t bytes;
  int burst;
  bool grouped;
  int iters;
};

// The mean round trip of `r.iters` exchanges, in microseconds as rank 0 sees it; every rank
// takes part in the barrier that starts it.
Status timeRound(Communicator& c, char* buf, const Round& r, double* us) {
  CHORUS_RETURN_IF_ERROR(c.barrier());
  CHORUS_RETURN_IF_ERROR(exchange(c, buf, r.bytes, r.burst, r.grouped));  // warm-up
  const int64_t t0 = nowNs();
  for (int i = 0; i < r.iters; ++i)
    CHORUS_RETURN_IF_ERROR(exchange(c, buf, r.bytes, r.burst, r.grouped));
  *us = double(nowNs() - t0) / 1e3 / r.iters;
  return Status::Ok();
}

// Every round once per repetition, repetitions outermost, then the median per round: a burst
// of load from elsewhere on the machine spoils one sample of many rounds, not all of one.
Status measureLinks(Communicator& c, const Effort& e, Measured* m) {
  std::vector<char> buf(kLargeSizes.back());  // zero-filled: its pages are touched up front
  std::vector<Round> rounds = {{kTiny, 1, false, e.tinyIters}};
  for (int k : e.bursts) rounds.push_back({kTiny, k, true, e.burstIters});
  for (size_t bytes : kLargeSizes) rounds.push_back({bytes, 1, false, e.largeIters});
  std::vector<std::vector<double>> samples(rounds.size());
  for (int rep = 0; rep < e.reps; ++rep) {
    for (size_t i = 0; i < rounds.size(); ++i) {
      double us = 0;
      CHORUS_RETURN_IF_ERROR(timeRound(c, buf.data(), rounds[i], &us));
      samples[i].push_back(us);
    }
  }
  m->oneWayTinyUs = tune::median(samples[0]) / 2;
  for (size_t i = 1; i < rounds.size(); ++i) {
    const double rt = tune::median(samples[i]);
    if (rounds[i].grouped)
      m->burstRoundTripUs.push_back({rounds[i].burst, rt});
    else
      m->oneWayLargeUs.push_back({rounds[i].bytes, rt - m->oneWayTinyUs});
  }
  return Status::Ok();
}

// GB/s of output: dst = dst + src over 16 MiB of float32 in chunk-sized pieces, the way the
// executor reduces a received chunk into its buffer. The first pass only warms up. The fastest
// pass counts, not the median: the model gives every rank its own engine, and a pass that lost
// its core to another process measures the machine's load (a calibration under load 3 on this
// 2-core VM read 10.3 GB/s against 14.4 quiet, and tipped the 64 MiB picks to the wrong side).
double measureReduce(size_t chunkBytes, int reps) {
  const size_t n = kReduceBytes / sizeof(float);
  std::vector<float> acc(n, 1.0f), in(n, 0.5f);
  const CpuReducer& r = CpuReducer::get();
  const size_t piece = std::max<size_t>(1, chunkBytes / sizeof(float));
  std::vector<double> samples;
  for (int rep = 0; rep <= reps; ++rep) {
    const int64_t t0 = nowNs();
    for (size_t off = 0; off < n; off += piece)
      r.reduce(DataType::Float32, RedOp::Sum, acc.data() + off, acc.data() + off, in.data() + off,
               std::min(piece, n - off));
    const double ns = double(nowNs() - t0);
    if (rep > 0) samples.push_back(double(kReduceBytes) / ns);  // bytes per ns = GB/s
  }
  return *std::max_element(samples.begin(), samples.end());
}

// Whether ranks 0 and 1 talk through shared memory: only then is a one_shot allreduce between
// them a measure of the receive-reduce (over TCP it measures the TCP stack, and a tuning file's
// reduce line is the host's, not the network's).
bool overSharedMemory(const Communicator& c, topo::PathClass pc) {
  return pc != topo::PathClass::Network &&
         transportAllowed(CommInternals::config(c).transport, "shm");
}

// How many of the job's ranks share rank 0's host (they all copy in the memory calibration).
int ranksOnHostOfRank0(const topo::Topology& t, int size) {
  if (t.ranks.empty()) return 1;
  int n = 0;
  for (int r = 0; r < size && r < int(t.ranks.size()); ++r) n += t.ranks[r].host == t.ranks[0].host;
  return std::max(1, n);
}

// ---- deriving the estimates ----

// The model's one-way time for a 2-rank send/recv of `bytes` (the schedules pointToPoint builds).
double predictOneWay(const topo::Topology& t, const CostParams& p, uint64_t bytes) {
  OpDesc d;
  d.coll = Collective::Send;
  d.dtype = DataType::Uint8;
  d.root = 1;
  d.count = bytes;
  std::vector<Schedule> s(2);
  s[0].send(1, input(), bytes);
  s[1].recv(0, output(), bytes);
  return predictTime(d, s, t, p);
}

// The bandwidth (searched over its log) that minimises the relative squared error of the model's
// one-way times against the measured ones; `t` carries every other figure already.
double fitBandwidth(topo::Topology t, topo::PathClass pc, const CostParams& p,
                    const std::vector<std::pair<size_t, double>>& measured) {
  return tune::minimiseOverLog(0.01, 10000.0, [&](double gbs) {
    t.links[pc].bandwidthGBs = gbs;
    double e = 0;
    for (auto [bytes, us] : measured) {
      if (bytes < kFitFrom || bytes > kFitTo) continue;
      const double rel = predictOneWay(t, p, bytes) / us - 1;
      e += rel * rel;
    }
    return e;
  });
}

struct Derived {
  Line burst;  // round trip (us) against K (Theil-Sen)
  Line large;  // one-way (us) against bytes, sizes in the fit (least squares)
  double overheadUs = 0, latencyUs = 0, bandwidthGBs = 0, reduceGBs = 0;
};

Derived derive(const Measured& m, const topo::Topology& base, topo::PathClass pc,
               const CostParams& p) {
  Derived dv;
  std::vector<double> x, y;
  for (auto [k, us] : m.burstRoundTripUs) x.push_back(k), y.push_back(us);
  dv.burst = robustLine(x, y);
  x.clear(), y.clear();
  for (auto [bytes, us] : m.oneWayLargeUs)
    if (bytes >= kFitFrom && bytes <= kFitTo) x.push_back(double(bytes)), y.push_back(us);
  dv.large = fitLine(x, y);

  if (dv.burst.slope < 0.01)
    fprintf(stderr,
            "chorus-tune: warning: the burst slope (%.4f us/message) is noise; is the "
            "machine busy? step_us is set to 0.01, rerun when it is quiet\n",
            dv.burst.slope);
  dv.overheadUs = std::max(0.01, dv.burst.slope);
  topo::Topology t = base;
  t.stepOverheadUs = dv.overheadUs;
  // Below 0.1 us (a one-way time under two burst overheads) the model cannot match both.
  const double alpha0 = std::max(0.1, m.oneWayTinyUs - 2 * dv.overheadUs);
  t.links[pc] = {alpha0, t.link(pc).bandwidthGBs};
  dv.bandwidthGBs = fitBandwidth(t, pc, p, m.oneWayLargeUs);
  t.links[pc].bandwidthGBs = dv.bandwidthGBs;
  // The model's own charge for 8 bytes, so that it reproduces the tiny one-way time exactly.
  dv.latencyUs = std::max(0.1, alpha0 + m.oneWayTinyUs - predictOneWay(t, p, kTiny));
  t.links[pc].latencyUs = dv.latencyUs;
  dv.reduceGBs = m.oneShotUs.empty() ? m.localReduceGBs : tune::fitReduceRate(t, p, m.oneShotUs);
  return dv;
}

// ---- reporting ----

std::string sizeText(size_t bytes) {
  if (bytes >= kMiB && bytes % kMiB == 0) return std::to_string(bytes / kMiB) + " MiB";
  return std::to_string(bytes) + " B";
}

std::string describeRun(const Communicator& c, topo::PathClass pc, bool quick) {
  char host[256] = "?";
  gethostname(host, sizeof host - 1);
  char when[64];
  const time_t now = time(nullptr);
  strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S UTC", gmtime(&now));
  std::ostringstream o;
  double load[1] = {0};
  const int cpus = int(sysconf(_SC_NPROCESSORS_ONLN));
  std::string loadText = getloadavg(load, 1) == 1 ? fmt("load %.2f", load[0]) : "load ?";
  o << "chorus-tune on " << host << " (" << cpus << " cpus, " << loadText << "), " << when << ", "
    << c.size() << " ranks, ranks 0-1 over " << topo::pathClassName(pc) << " ("
    << CommInternals::transportName(c) << ", " << CommInternals::costParams(c).chunkBytes
    << "-byte chunks), reducer " << CpuReducer::get().isa() << (quick ? ", --quick" : "");
  return o.str();
}

// The raw figures, as lines without a leading "# ".
std::vector<std::string> rawLines(const Measured& m, const Derived& dv) {
  std::vector<std::string> l;
  l.push_back("one-way 8 B: " + fmt("%.3f", m.oneWayTinyUs) + " us (ping-pong round trip / 2)");
  const int kLo = m.burstRoundTripUs.front().first, kHi = m.burstRoundTripUs.back().first;
  l.push_back("grouped burst of K 8-byte sends, K=" + std::to_string(kLo) + ".." +
              std::to_string(kHi) + ": round trip " + fmt("%.3f", dv.burst.intercept) + " us + " +
              fmt("%.4f", dv.burst.slope) + " us/message");
  std::string large = "one-way:";
  for (auto [bytes, us] : m.oneWayLargeUs)
    large += fmt(" %s %.1f us;", sizeText(bytes).c_str(), us);
  large.pop_back();
  l.push_back(large);
  l.push_back("least-squares line over " + sizeText(kFitFrom) + ".." + sizeText(kFitTo) + ": " +
              fmt("%.2f", dv.large.intercept) + " us + bytes / " +
              fmt("%.3f", dv.large.slope > 0 ? 1e-3 / dv.large.slope : 0) + " GB/s");
  l.push_back("reducer float32 sum on local arrays, " + sizeText(kReduceBytes) +
              " in place: " + fmt("%.3f", m.localReduceGBs) + " GB/s");
  std::string oneShot = "2-rank allreduce forced to one_shot (float32 sum):";
  for (auto [bytes, us] : m.oneShotUs) oneShot += fmt(" %s %.1f us;", sizeText(bytes).c_str(), us);
  if (m.oneShotUs.empty())
    oneShot += " not run (ranks 0-1 do not share memory; the reducer on local arrays counts)";
  else
    oneShot.pop_back();
  l.push_back(oneShot);
  l.push_back("copy on every rank at once, per host working set: " + describeMemory(m.memory));
  if (m.memory.knee)
    l.push_back("misses begin past " + fmt("%.0f", m.memory.cacheMiB) + " MiB, all miss from " +
                fmt("%.0f", m.memory.allMissMiB) + " MiB; a missed byte costs " +
                fmt("%.4f", 1 / m.memory.missGBs) + " ns");
  else
    l.push_back(
        "no rise in the time per byte up to the largest working set: the memory model "
        "stays as it was");
  return l;
}

Status writeTuningFile(const std::string& path, const std::string& text) {
  std::ofstream f(path);
  if (!f) return Status::FromErrno(errno, "cannot create tuning file '" + path + "'");
  f << text;
  f.close();
  if (!f) return Status::FromErrno(errno, "cannot write tuning file '" + path + "'");
  return Status::Ok();
}

// Whether rank 0 will be able to write `path`, checked before measuring for seconds.
Status checkWritable(const std::string& path) {
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : path.substr(0, slash + 1);
  const bool ok = access(path.c_str(), F_OK) == 0 ? access(path.c_str(), W_OK) == 0
                                                  : access(dir.c_str(), W_OK | X_OK) == 0;
  if (!ok) return Status::FromErrno(errno, "cannot write the tuning file '" + path + "' (--out)");
  return Status::Ok();
}

// Rank 0's verdict on the output file, shared so that every rank stops together.
Status agreeOnOutput(Communicator& c, const std::string& path) {
  Status st = c.rank() == 0 ? checkWritable(path) : Status::Ok();
  int32_t bad = !st.ok(), anyBad = 0;
  CHORUS_RETURN_IF_ERROR(c.allReduce(&bad, &anyBad, 1, DataType::Int32, RedOp::Sum));
  if (!st.ok()) return st;
  // The path is named here too: chorus-run may stop rank 0 before its own message is printed.
  if (anyBad)
    return Status::InvalidArgument("rank 0 cannot write the tuning file '" + path + "' (--out)");
  return Status::Ok();
}

void printFit(const Measured& m, const topo::Topology& before, const topo::Topology& after,
              const CostParams& p) {
  printf("fit: one-way send/recv time, measured vs the cost model (2-rank schedule)\n");
  printf("  %-8s %12s %12s %8s %16s\n", "size", "measured_us", "predicted_us", "error",
         "before_tuning_us");
  std::vector<std::pair<size_t, double>> rows = {{kTiny, m.oneWayTinyUs}};
  for (auto [bytes, us] : m.oneWayLargeUs)
    if (bytes == kMiB || bytes == kLargeSizes.back()) rows.push_back({bytes, us});
  auto row = [](size_t bytes, double us, double pred, double before) {
    printf("  %-8s %12.2f %12.2f %7.1f%% %16.2f\n", sizeText(bytes).c_str(), us, pred,
           100 * (pred / us - 1), before);
  };
  for (auto [bytes, us] : rows)
    row(bytes, us, predictOneWay(after, p, bytes), predictOneWay(before, p, bytes));
  if (!m.oneShotUs.empty()) printf("fit: 2-rank one_shot allreduce, measured vs the cost model\n");
  for (auto [bytes, us] : m.oneShotUs)
    row(bytes, us, tune::predictOneShot(after, p, bytes), tune::predictOneShot(before, p, bytes));
}

// What was measured and the estimates drawn from it, beside the figures they replace.
void printReport(const std::string& run, const std::vector<std::string>& raw,
                 const std::string& out, const Derived& dv, const Measured& m,
                 const topo::Topology& topology, const topo::Topology& tuned, topo::PathClass pc) {
  printf("%s\nmeasured:\n", run.c_str());
  for (const std::string& line : raw) printf("  %s\n", line.c_str());
  printf("estimates (written to %s; use CHORUS_TUNE_FILE=%s):\n", out.c_str(), out.c_str());
  printf("  executor step_us=%.4f   (burst slope)\n", dv.overheadUs);
  printf("  link %s latency_us=%.3f bandwidth_gbs=%.3f   (was %.3g us, %.3g GB/s)\n",
         topo::pathClassName(pc), dv.latencyUs, dv.bandwidthGBs, topology.link(pc).latencyUs,
         topology.link(pc).bandwidthGBs);
  if (m.oneShotUs.empty())
    printf("  reduce host_gbs=%.3f   (was %.3g; the reducer on local arrays)\n", dv.reduceGBs,
           topology.hostReduceGBs);
  else
    printf("  reduce host_gbs=%.3f   (was %.3g; one_shot fit; on local arrays %.3f)\n",
           dv.reduceGBs, topology.hostReduceGBs, m.localReduceGBs);
  if (m.memory.knee)
    printf(
        "  memory cache_mib=%.0f all_miss_mib=%.0f miss_gbs=%.3f   (was %.3g, %.3g MiB, "
        "%.3g GB/s; 0: not modelled)\n",
        tuned.cacheMiB, tuned.allMissMiB, tuned.missGBs, topology.cacheMiB, topology.allMissMiB,
        topology.missGBs);
}

Status calibrate(Communicator& c, const Options& o) {
  const topo::Topology& topology = CommInternals::topology(c);
  const size_t chunkBytes = CommInternals::costParams(c).chunkBytes;
  const Effort e = effortFor(o.quick);
  const topo::PathClass pc = topology.pathBetweenRanks(0, 1);
  CHORUS_RETURN_IF_ERROR(agreeOnOutput(c, o.out));
  Measured m;
  CHORUS_RETURN_IF_ERROR(measureLinks(c, e, &m));
  if (overSharedMemory(c, pc))  // the same on every rank: the topology and the transport agree
    CHORUS_RETURN_IF_ERROR(tune::measureOneShot(c, e.largeIters, e.reps, &m.oneShotUs));
  if (c.rank() == 0) m.localReduceGBs = measureReduce(chunkBytes, e.reps);
  CHORUS_RETURN_IF_ERROR(c.barrier());
  CHORUS_RETURN_IF_ERROR(tune::measureMemory(c, ranksOnHostOfRank0(topology, c.size()), chunkBytes,
                                             e.memoryMaxBytes, std::min(e.reps, 5), &m.memory));
  tune::fitMemory(&m.memory);
  if (c.rank() != 0) return Status::Ok();

  const Derived dv = derive(m, topology, pc, CommInternals::costParams(c));
  topo::Topology tuned = topology;
  tuned.stepOverheadUs = dv.overheadUs;
  tuned.links[pc] = {dv.latencyUs, dv.bandwidthGBs};
  tuned.hostReduceGBs = dv.reduceGBs;
  if (m.memory.knee) {
    tuned.cacheMiB = m.memory.cacheMiB;
    tuned.allMissMiB = m.memory.allMissMiB;
    tuned.missGBs = m.memory.missGBs;
  }

  const std::string run = describeRun(c, pc, o.quick);
  const std::vector<std::string> raw = rawLines(m, dv);
  CHORUS_RETURN_IF_ERROR(writeTuningFile(o.out, topo::formatEstimatesJson(tuned, run, raw)));

  if (!o.quiet) printReport(run, raw, o.out, dv, m, topology, tuned, pc);
  if (pc != topo::PathClass::Network && !overSharedMemory(c, pc))
    printf("note: CHORUS_TRANSPORT=tcp measured TCP, but these figures are filed under %s\n",
           topo::pathClassName(pc));
  // Ranks that share a core spin out their turn before they sleep: a tiny one-way time near
  // the spin budget means the machine is busy, and the figures measure that, not the executor.
  if (pc != topo::PathClass::Network &&
      m.oneWayTinyUs > 0.5e-3 * double(CommInternals::config(c).spinNs))
    printf(
        "warning: one-way 8 B took %.1f us, near the %.0f us spin budget (CHORUS_SPIN_NS): "
        "ranks 0 and 1 seem to share a core (busy machine?); these figures describe that "
        "state. Rerun when the machine is quiet.\n",
        m.oneWayTinyUs, 1e-3 * double(CommInternals::config(c).spinNs));
  if (!o.quiet) printFit(m, topology, tuned, CommInternals::costParams(c));
  fflush(stdout);
  return Status::Ok();
}

}  // namespace

int main(int argc, char** argv) {
  cli::Tool tool("chorus-tune", "[--out FILE] [--quick]   (launch: chorus-run -n 2 -- chorus-tune)",
                 "Measures per-message overhead, latency and bandwidth between ranks 0 and 1, "
                 "the CPU reducer's rate and the memory line, and writes them as a tuning file "
                 "(load it with CHORUS_TUNE_FILE=FILE). Across two hosts: mpirun -np 2 --host "
                 "A,B chorus-tune calibrates the network class.");
  Options o;
  cli::text(tool.app(), "--out", &o.out, "FILE", "the tuning file rank 0 writes");
  tool.app().add_flag("--quick", o.quick, "fewer repetitions (a few seconds; rougher figures)");
  if (int rc = tool.parse(argc, argv); rc >= 0) return rc;
  o.quiet = tool.quiet();
  const char* launch =
      "chorus-tune measures between two ranks: launch it with `chorus-run -n 2 -- chorus-tune` "
      "on one host, or `mpirun -np 2` over two hosts";
  Config config;
  Status st = Config::fromEnvironment(&config);
  std::unique_ptr<Communicator> comm;
  if (st.ok()) st = Communicator::createFromEnvironment(config, &comm);
  if (!st.ok()) {
    fprintf(stderr, "chorus-tune: %s\n%s\n", st.toString().c_str(), launch);
    return 1;
  }
  if (comm->size() < 2) {
    fprintf(stderr, "chorus-tune: only %d rank; %s\n", comm->size(), launch);
    return 1;
  }
  st = calibrate(*comm, o);
  if (!st.ok()) {
    fprintf(stderr, "chorus-tune (rank %d): %s\n", comm->rank(), st.toString().c_str());
    return 1;
  }
  return 0;
}
