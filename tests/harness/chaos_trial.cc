#include "harness/chaos_trial.h"

#include <random>

#include "algorithms/registry.h"

namespace chorus::test {

const char* faultName(FaultKind f) {
  switch (f) {
    case FaultKind::Kill:
      return "kill";
    case FaultKind::Stop:
      return "stop";
    case FaultKind::LinkCut:
      return "link cut";
  }
  return "?";
}

namespace {

// The library's collective behind each case kind; send/recv and barrier have no choice to make.
bool collectiveOf(Coll c, Collective* out) {
  static const Collective map[] = {Collective::AllReduce, Collective::ReduceScatter,
                                   Collective::AllGather, Collective::Broadcast,
                                   Collective::Reduce,    Collective::AllToAll,
                                   Collective::Gather,    Collective::Scatter};
  if (int(c) >= int(std::size(map))) return false;
  *out = map[int(c)];
  return true;
}

}  // namespace

TrialPlan drawTrial(uint64_t seed, FaultKind fault) {
  std::mt19937_64 rng(seed);
  auto pick = [&rng](size_t n) { return size_t(rng() % n); };
  TrialPlan p;
  p.seed = seed;
  p.fault = fault;
  p.coll = Coll(pick(10));
  // Every algorithm of the catalogue, or the selector's own choice.
  Collective c;
  if (collectiveOf(p.coll, &c)) {
    const auto algos = algorithmsFor(c);
    const size_t k = pick(algos.size() + 1);
    if (k < algos.size()) p.algo = std::string(collectiveName(c)) + "=" + algos[k]->name;
  }
  p.transport = fault == FaultKind::LinkCut ? "tcp" : (pick(2) ? "tcp" : "shm");
  static const size_t counts[] = {1, 1000, 65536 + 7, size_t(1) << 20};
  p.count = counts[pick(std::size(counts))];
  p.root = int(pick(size_t(p.ranks)));
  p.victim = int(pick(size_t(p.ranks)));
  // A quarter strike set-up; set-up takes some tens of milliseconds here.
  p.duringSetUp = pick(4) == 0;
  p.afterCalls = p.duringSetUp ? 0 : int(pick(4));
  p.delayUs = int(pick(p.duringSetUp ? 40000 : 5000));
  return p;
}

std::string TrialPlan::describe() const {
  std::string s = "seed=" + std::to_string(seed) + " fault=" + faultName(fault) +
                  " coll=" + kCollNames[int(coll)] + " algo=" + (algo.empty() ? "auto" : algo) +
                  " transport=" + transport + " count=" + std::to_string(count) +
                  " root=" + std::to_string(root) + " ranks=" + std::to_string(ranks) +
                  " victim=" + std::to_string(victim);
  if (duringSetUp) return s + " at=set-up+" + std::to_string(delayUs) + "us";
  return s + " at=" + std::to_string(afterCalls) + "calls+" + std::to_string(delayUs) + "us";
}

}  // namespace chorus::test
