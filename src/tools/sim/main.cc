// chorus-sim: for a topology far larger than this machine, prints per size each algorithm's
// predicted time and bus bandwidth and the one the selector picks. It calls selectAlgorithm,
// the library's own code, so its picks are what a job on that topology would run.
//
//   chorus-sim --topo FILE [--collective allreduce|...|all] [--ranks N] [--sizes 8:1G]
//              [--factor 4] [--tune FILE] [--algo allreduce=ring] [--csv] [--walk-all]
//
// Sizes are nccl-tests' sizes in bytes of float32: the whole vector for allreduce, broadcast
// and reduce; the gathered (allgather, gather) or scattered (reduce_scatter, scatter, alltoall)
// total otherwise. Ranks: those the file places (`ranks per_gpu` by default); --ranks N keeps
// the first N of them.
//
// Like the library, it walks only the candidates whose lower bound does not already lose to a
// walked one (selector.h); a skipped one prints as "> X us" with the busbw it cannot exceed.
// --walk-all walks every candidate, whatever CostParams::walkBudget says (slow at 1024 ranks:
// quadratic algorithms are millions of steps), to compare.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "tools/cli/tool.h"
#include "topo/topology.h"
#include "tune/placement.h"
#include "tune/selector.h"

using namespace chorus;

namespace {

bool perRankBlocks(Collective c) {
  return c == Collective::AllGather || c == Collective::ReduceScatter ||
         c == Collective::AllToAll || c == Collective::Gather || c == Collective::Scatter;
}

// nccl-tests' bus bandwidth factor.
double busFactor(Collective c, int n) {
  switch (c) {
    case Collective::AllReduce:
      return 2.0 * (n - 1) / n;
    case Collective::ReduceScatter:
    case Collective::AllGather:
    case Collective::AllToAll:
      return double(n - 1) / n;
    default:
      return 1;
  }
}

void simulate(Collective c, const topo::Topology& t, int n, uint64_t lo, uint64_t hi,
              uint64_t factor, const AlgoOverride& ov, bool csv, bool walkAll) {
  const RankLayout layout = layoutFromTopology(t, n);
  CostParams params;
  params.chunkBytes = assumedMessageBytes(t, n, params.chunkBytes);
  params.pieceBudget = 1 << 18;  // keeps a 1024-rank sweep to seconds per size
  params.skipLosers = !walkAll;
  // A simulation may take seconds per size where a job's first call may not: walk up to 4x
  // the library's budget (hierarchical_sliced at 1024 ranks is 2.2M steps).
  params.walkBudget *= 4;
  if (walkAll) params.walkBudget = UINT64_MAX;
  if (csv)
    printf("collective,ranks,bytes,algorithm,predicted_us,busbw_gbs,picked,bound_us\n");
  else
    printf("# %s on %d ranks (%zu hosts), %s\n", collectiveName(c), n, layout.hosts.size(),
           t.source.c_str());
  for (uint64_t bytes = lo; bytes <= hi; bytes *= factor) {
    OpDesc d;
    d.coll = c;
    d.count = bytes / 4 / (perRankBlocks(c) ? n : 1);
    if (c == Collective::Barrier) d.count = 0;
    if (c == Collective::Broadcast || c == Collective::Reduce || c == Collective::Gather ||
        c == Collective::Scatter)
      d.root = 0;
    Selection sel;
    Status st = selectAlgorithm(d, n, layout, t, params, ov, &sel);
    if (!st.ok()) {
      fprintf(stderr, "chorus-sim: %s\n", st.toString().c_str());
      exit(1);
    }
    if (sel.forced)
      sel.candidates[0].predictedUs =
          predictTime(d, buildAllRanks(*sel.chosen, d, n, layout), t, params);
    if (!csv) printf("%12llu B\n", (unsigned long long)bytes);
    for (const Candidate& k : sel.candidates) {
      const bool picked = k.algorithm == sel.chosen;
      auto busbw = [&](double us) {
        return us > 0 ? double(bytes) / (us * 1e3) * busFactor(c, n) : 0;
      };
      const double shown = k.skipped ? k.boundUs : k.predictedUs;
      if (csv)
        printf("%s,%d,%llu,%s,%.3f,%.3f,%d,%.3f\n", collectiveName(c), n, (unsigned long long)bytes,
               k.algorithm->name, k.unavailable || k.skipped ? -1.0 : k.predictedUs, busbw(shown),
               picked, k.boundUs);
      else if (k.unavailable)
        printf("    %-20s %14s  %s\n", k.algorithm->name, "n/a", k.unavailable);
      else if (k.skipped)
        printf("    %-20s > %10.1f us < %7.2f GB/s  (bound; not walked)\n", k.algorithm->name,
               k.boundUs, busbw(k.boundUs));
      else
        printf("    %-20s %12.1f us %9.2f GB/s%s\n", k.algorithm->name, k.predictedUs,
               busbw(k.predictedUs), picked ? (sel.forced ? "  <- forced" : "  <- picked") : "");
    }
    fflush(stdout);
  }
}

}  // namespace

int main(int argc, char** argv) {
  cli::Tool tool("chorus-sim", "--topo FILE [options]",
                 "Prints, per size, every algorithm's predicted time and bus bandwidth on a "
                 "topology file and the algorithm the selector picks.");
  CLI::App& app = tool.app();
  std::string topoFile, tuneFile, algo, coll = "allreduce";
  int ranks = 0;
  uint64_t lo = 8, hi = uint64_t(1) << 30, factor = 4;
  bool csv = false, walkAll = false;
  cli::text(app, "--topo", &topoFile, "FILE", "the topology file (docs/topology.md)")->required();
  cli::text(app, "--collective", &coll, "NAME|all", "the collective, or all of them");
  cli::integer(app, "--ranks", &ranks, 1, INT32_MAX, "simulate the first N ranks the file places")
      ->default_str("all");
  cli::checked(
      app, "--sizes",
      [&](const std::string& opt, const std::string& v) { cli::parseSizeRange(opt, v, &lo, &hi); },
      "MIN:MAX", "8:1G", "bytes of float32 swept");
  cli::integer(app, "--factor", &factor, 2, INT32_MAX, "size multiplier between rows");
  cli::text(app, "--tune", &tuneFile, "FILE", "a tuning file (chorus-tune) over the topology's");
  cli::text(app, "--algo", &algo, "SPEC", "force algorithms, as CHORUS_ALGO (allreduce=ring)");
  app.add_flag("--csv", csv, "comma-separated values");
  app.add_flag("--walk-all", walkAll, "walk every candidate, even those that cannot win");
  if (int rc = tool.parse(argc, argv); rc >= 0) return rc;

  auto fail = [](const Status& st) {
    fprintf(stderr, "chorus-sim: %s\n", st.toString().c_str());
    return 2;
  };
  topo::Topology t;
  Status st = topo::loadTopologyFile(topoFile, &t);
  if (st.ok() && !tuneFile.empty()) st = topo::loadEstimatesFile(tuneFile, &t);
  if (!st.ok()) return fail(st);
  const int placed = int(t.ranks.size());
  if (ranks == 0) ranks = placed;
  if (ranks < 1 || ranks > placed) {
    fprintf(stderr,
            "chorus-sim: %s places %d ranks, cannot simulate %d (add hosts with count=, or use "
            "'ranks per_host N')\n",
            topoFile.c_str(), placed, ranks);
    return 2;
  }
  AlgoOverride ov;
  if (!(st = AlgoOverride::parse(algo, &ov)).ok()) return fail(st);
  std::vector<Collective> colls;
  Collective c;
  if (coll == "all") {
    for (int k = 0; k <= int(Collective::Barrier); ++k)
      if (Collective(k) != Collective::Send && Collective(k) != Collective::Recv)
        colls.push_back(Collective(k));
  } else if (parseCollectiveKey(coll, &c) && c != Collective::Send && c != Collective::Recv) {
    colls.push_back(c);
  } else {
    return tool.usageError(
        cli::BadValue("--collective", coll, "wants a collective (allreduce, ...) or all").what());
  }
  for (Collective k : colls) simulate(k, t, ranks, lo, hi, factor, ov, csv, walkAll);
  return 0;
}
