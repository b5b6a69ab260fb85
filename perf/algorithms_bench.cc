// algorithms_bench: does the selector pick the fastest algorithm on this machine? For every size,
// it measures every algorithm that can run the call (each forced through Config::algo on its own
// communicator, as CHORUS_ALGO would), next to the cost model's prediction for it and the
// selector's pick, and says whether the pick is within 10% of the fastest measured (or within
// the run-to-run noise, which it measures: each algorithm is timed in several rounds,
// interleaved with the others so that drift in the machine's load hits all alike).
//
//   chorus-run -n 4 -- algorithms_bench [--collective allreduce] [--sizes 8:256M] [--factor 8]
//                     [--also 64K,1M,64M] [--rounds 5] [--target-ms 20] [--csv FILE]
//
// Sizes are bytes of float32: the whole vector for allreduce, broadcast and reduce; the gathered
// or scattered total for allgather and reduce_scatter (nccl-tests' convention, like chorus-sim).
// Time per call is the slowest rank's average over a batch of calls; the table shows the median
// batch of the rounds. Predictions use the communicator's topology and estimates, so a tuning file
// (CHORUS_TUNE_FILE, written by chorus-tune) changes them exactly as it changes the library's.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "chorus/chorus.h"
#include "common/env.h"
#include "core/comm_internals.h"
#include "tune/selector.h"

using namespace chorus;

namespace {

struct Options {
  Collective coll = Collective::AllReduce;
  uint64_t lo = 8, hi = 256ull << 20, factor = 8;
  std::vector<uint64_t> also = {64ull << 10, 1ull << 20, 64ull << 20};
  int rounds = 5;
  double targetMs = 20;
  std::string csv;
};

int usage(const char* why) {
  fprintf(stderr,
          "algorithms_bench: %s\nusage: chorus-run -n N -- algorithms_bench [--collective "
          "allreduce|allgather|reduce_scatter|broadcast|reduce] [--sizes MIN:MAX] [--factor F] "
          "[--also S,S,...] [--rounds R] [--target-ms MS] [--csv FILE]\n",
          why);
  return 2;
}

bool parseSize(const std::string& s, uint64_t* out) {
  auto v = parseBytes(s);
  if (!v || *v <= 0) return false;
  *out = uint64_t(*v);
  return true;
}

bool parseOptions(int argc, char** argv, Options* o, int* rc) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "-h" || a == "--help") return (*rc = usage("help") - 2), false;
    if (i + 1 >= argc) return (*rc = usage(("missing value after " + a).c_str())), false;
    std::string v = argv[++i];
    bool ok = true;
    if (a == "--collective") {
      ok = parseCollectiveKey(v, &o->coll) &&
           (o->coll == Collective::AllReduce || o->coll == Collective::AllGather ||
            o->coll == Collective::ReduceScatter || o->coll == Collective::Broadcast ||
            o->coll == Collective::Reduce);
    } else if (a == "--sizes") {
      size_t colon = v.find(':');
      ok = colon != std::string::npos && parseSize(v.substr(0, colon), &o->lo) &&
           parseSize(v.substr(colon + 1), &o->hi) && o->lo <= o->hi;
    } else if (a == "--factor") {
      ok = parseSize(v, &o->factor) && o->factor >= 2;
    } else if (a == "--also") {
      o->also.clear();
      for (size_t p = 0; ok && p <= v.size();) {
        size_t comma = std::min(v.find(',', p), v.size());
        uint64_t s = 0;
        ok = parseSize(v.substr(p, comma - p), &s);
        o->also.push_back(s);
        p = comma + 1;
      }
    } else if (a == "--rounds") {
      o->rounds = atoi(v.c_str());
      ok = o->rounds >= 1;
    } else if (a == "--target-ms") {
      o->targetMs = atof(v.c_str());
      ok = o->targetMs > 0;
    } else if (a == "--csv") {
      o->csv = v;
    } else {
      return (*rc = usage(("unknown option " + a).c_str())), false;
    }
    if (!ok) return (*rc = usage(("bad value for " + a + ": " + v).c_str())), false;
  }
  return true;
}

// The call for `bytes`, in the API's units.
OpDesc describe(Collective c, uint64_t bytes, int n) {
  OpDesc d;
  d.coll = c;
  const uint64_t elems = bytes / 4;
  d.count = (c == Collective::AllGather || c == Collective::ReduceScatter) ? elems / n : elems;
  if (c == Collective::Broadcast || c == Collective::Reduce) d.root = 0;
  return d;
}

struct Buffers {
  std::vector<float> in, out;
};

Status call(Communicator& c, const OpDesc& d, Buffers& b) {
  const size_t n = d.count;
  switch (d.coll) {
    case Collective::AllReduce:
      return c.allReduce(b.in.data(), b.out.data(), n, DataType::Float32, RedOp::Sum);
    case Collective::AllGather:
      return c.allGather(b.in.data(), b.out.data(), n, DataType::Float32);
    case Collective::ReduceScatter:
      return c.reduceScatter(b.in.data(), b.out.data(), n, DataType::Float32, RedOp::Sum);
    case Collective::Broadcast:
      return c.broadcast(b.in.data(), b.out.data(), n, DataType::Float32, d.root);
    default:
      return c.reduce(b.in.data(), b.out.data(), n, DataType::Float32, RedOp::Sum, d.root);
  }
}

void resize(const OpDesc& d, int n, Buffers* b) {
  const bool gathers = d.coll == Collective::AllGather;
  const bool scatters = d.coll == Collective::ReduceScatter;
  b->in.assign(d.count * (scatters ? n : 1), 1.0f);
  b->out.assign(d.count * (gathers ? n : 1), 0.0f);
}

double nowUs() {
  using namespace std::chrono;
  return duration<double, std::micro>(steady_clock::now().time_since_epoch()).count();
}

// The slowest rank's time per call over `iters` calls on `c`; `world` agrees on the maximum.
Status timeCalls(Communicator& world, Communicator& c, const OpDesc& d, Buffers& b, int iters,
                 double* us) {
  CHORUS_RETURN_IF_ERROR(c.barrier());
  const double t0 = nowUs();
  for (int i = 0; i < iters; ++i) CHORUS_RETURN_IF_ERROR(call(c, d, b));
  double mine = (nowUs() - t0) / iters;
  return world.allReduce(&mine, us, 1, DataType::Float64, RedOp::Max);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

struct Measured {
  const Algorithm* algorithm;
  double predictedUs;
  std::vector<double> rounds;
  double medianUs() const { return median(rounds); }
  double spread() const {  // (slowest - fastest round) / median
    auto [lo, hi] = std::minmax_element(rounds.begin(), rounds.end());
    return (*hi - *lo) / medianUs();
  }
};

std::string humanBytes(uint64_t b) {
  char buf[32];
  if (b >= (1u << 20) && b % (1u << 20) == 0)
    snprintf(buf, sizeof buf, "%llu MiB", (unsigned long long)(b >> 20));
  else if (b >= 1024 && b % 1024 == 0)
    snprintf(buf, sizeof buf, "%llu KiB", (unsigned long long)(b >> 10));
  else
    snprintf(buf, sizeof buf, "%llu B", (unsigned long long)b);
  return buf;
}

class Bench {
 public:
  Bench(const Options& o, const Config& cfg, Communicator& world)
      : o_(o), cfg_(cfg), world_(world), n_(world.size()) {}

  Status run() {
    std::set<uint64_t> sizes(o_.also.begin(), o_.also.end());
    for (uint64_t b = o_.lo; b <= o_.hi; b *= o_.factor) sizes.insert(b);
    if (world_.rank() == 0 && !o_.csv.empty()) {
      csv_ = fopen(o_.csv.c_str(), "w");
      if (!csv_) return Status::InvalidArgument("cannot write " + o_.csv);
      fprintf(csv_, "collective,ranks,bytes,algorithm,predicted_us,measured_us,spread,picked\n");
    }
    const topo::Topology& topology = CommInternals::topology(world_);
    const std::string& tuneFile = CommInternals::config(world_).tuneFile;
    if (world_.rank() == 0)
      printf("# %s on %d ranks, %s, estimates from %s%s; %d rounds per algorithm\n",
             collectiveName(o_.coll), n_,
             topo::pathClassName(topology.pathBetweenRanks(0, n_ > 1 ? 1 : 0)),
             topology.source.c_str(),
             tuneFile.empty() ? " (no tuning file)" : (" + tuning " + tuneFile).c_str(), o_.rounds);
    for (uint64_t bytes : sizes) {
      OpDesc d = describe(o_.coll, bytes, n_);
      if (d.count == 0) continue;  // fewer than one float per rank
      CHORUS_RETURN_IF_ERROR(measureSize(bytes, d));
    }
    if (world_.rank() == 0) summarise();
    if (csv_) fclose(csv_);
    return Status::Ok();
  }

 private:
  struct Verdict {
    uint64_t bytes;
    std::string picked, fastest;
    double slowdown, noise;
    bool ok;
  };

  Status measureSize(uint64_t bytes, const OpDesc& d) {
    // Every algorithm predicted (no branch and bound), so each has a figure to check.
    CostParams params = CommInternals::costParams(world_);
    params.skipLosers = false;
    Selection sel;
    CHORUS_RETURN_IF_ERROR(selectAlgorithm(d, n_, CommInternals::layout(world_),
                                           CommInternals::topology(world_), params, AlgoOverride{},
                                           &sel));
    std::vector<Measured> ms;
    for (const Candidate& k : sel.candidates)
      if (!k.unavailable && std::isfinite(k.predictedUs))
        ms.push_back({k.algorithm, k.predictedUs, {}});
    Buffers b;
    resize(d, n_, &b);
    std::vector<int> iters(ms.size());
    for (size_t i = 0; i < ms.size(); ++i) {
      Communicator* c = nullptr;
      CHORUS_RETURN_IF_ERROR(commFor(ms[i].algorithm, &c));
      double once = 0;
      CHORUS_RETURN_IF_ERROR(timeCalls(world_, *c, d, b, 1, &once));  // warm-up: plan, pages
      CHORUS_RETURN_IF_ERROR(timeCalls(world_, *c, d, b, 1, &once));
      iters[i] = int(std::clamp(o_.targetMs * 1e3 / std::max(once, 0.01), 1.0, 20000.0));
    }
    for (int r = 0; r < o_.rounds; ++r)
      for (size_t i = 0; i < ms.size(); ++i) {
        Communicator* c = nullptr;
        CHORUS_RETURN_IF_ERROR(commFor(ms[i].algorithm, &c));
        double us = 0;
        CHORUS_RETURN_IF_ERROR(timeCalls(world_, *c, d, b, iters[i], &us));
        ms[i].rounds.push_back(us);
      }
    if (world_.rank() == 0) report(bytes, sel, ms);
    return Status::Ok();
  }

  // One communicator per forced algorithm, made on first use (every rank asks in the same order,
  // since every rank's selector sees the same topology).
  Status commFor(const Algorithm* a, Communicator** out) {
    auto& c = comms_[a];
    if (!c) {
      Config cfg = cfg_;
      cfg.algo = std::string(collectiveName(a->coll)) + "=" + a->name;
      CHORUS_RETURN_IF_ERROR(world_.split(0, world_.rank(), cfg, &c));
    }
    *out = c.get();
    return Status::Ok();
  }

  void report(uint64_t bytes, const Selection& sel, const std::vector<Measured>& ms) {
    const Measured* fastest = &ms[0];
    const Measured* picked = nullptr;
    std::vector<double> spreads;
    for (const Measured& m : ms) {
      if (m.medianUs() < fastest->medianUs()) fastest = &m;
      if (m.algorithm == sel.chosen) picked = &m;
      spreads.push_back(m.spread());
    }
    const double noise = median(spreads);
    printf("%s\n  %-20s %12s %12s %8s %9s\n", humanBytes(bytes).c_str(), "algorithm", "predicted",
           "measured", "spread", "error");
    for (const Measured& m : ms) {
      const double err = (m.predictedUs - m.medianUs()) / m.medianUs();
      printf("  %-20s %9.1f us %9.1f us %7.0f%% %+8.0f%%%s%s\n", m.algorithm->name, m.predictedUs,
             m.medianUs(), 100 * m.spread(), 100 * err, &m == picked ? "  <- picked" : "",
             &m == fastest ? "  (fastest)" : "");
      if (csv_)
        fprintf(csv_, "%s,%d,%llu,%s,%.3f,%.3f,%.4f,%d\n", collectiveName(o_.coll), n_,
                (unsigned long long)bytes, m.algorithm->name, m.predictedUs, m.medianUs(),
                m.spread(), &m == picked);
    }
    Verdict v{bytes, picked ? picked->algorithm->name : "?", fastest->algorithm->name, 0, noise,
              false};
    if (picked) {
      v.slowdown = picked->medianUs() / fastest->medianUs() - 1;
      v.ok = v.slowdown <= std::max(0.10, noise);
    }
    printf("  pick %s is %.1f%% slower than the fastest (noise %.0f%%): %s\n", v.picked.c_str(),
           100 * v.slowdown, 100 * noise, v.ok ? "ok" : "MISS");
    fflush(stdout);
    verdicts_.push_back(v);
  }

  void summarise() const {
    int ok = 0, within10 = 0;
    for (const Verdict& v : verdicts_) {
      ok += v.ok;
      within10 += v.slowdown <= 0.10;
    }
    printf(
        "\n# summary: %s, %d ranks: the pick is within 10%% of the fastest at %d of %zu sizes, "
        "within max(10%%, noise) at %d\n",
        collectiveName(o_.coll), n_, within10, verdicts_.size(), ok);
    for (const Verdict& v : verdicts_)
      if (!v.ok)
        printf("#   %s: picked %s, fastest %s, %.1f%% slower, noise %.0f%%\n",
               humanBytes(v.bytes).c_str(), v.picked.c_str(), v.fastest.c_str(), 100 * v.slowdown,
               100 * v.noise);
  }

  const Options& o_;
  const Config& cfg_;
  Communicator& world_;
  const int n_;
  std::map<const Algorithm*, std::unique_ptr<Communicator>> comms_;
  std::vector<Verdict> verdicts_;
  FILE* csv_ = nullptr;
};

}  // namespace

int main(int argc, char** argv) {
  Options o;
  int rc = 0;
  if (!parseOptions(argc, argv, &o, &rc)) return rc;
  Config cfg;
  std::unique_ptr<Communicator> world;
  Status st = Config::fromEnvironment(&cfg);
  if (st.ok()) st = Communicator::createFromEnvironment(cfg, &world);
  if (st.ok()) st = Bench(o, cfg, *world).run();
  if (!st.ok()) {
    fprintf(stderr, "algorithms_bench: %s\n", st.toString().c_str());
    return 1;
  }
  return 0;
}
