#include "algorithms/registry.h"

#include <cstring>

#include "algorithms/algorithms.h"

namespace chorus {

RankLayout RankLayout::fromHostIds(const std::vector<int>& hostOf) {
  RankLayout l;
  l.hostOf = hostOf;
  for (size_t r = 0; r < hostOf.size(); ++r) {
    if (hostOf[r] >= int(l.hosts.size())) l.hosts.resize(hostOf[r] + 1);
    l.hosts[hostOf[r]].push_back(int(r));
  }
  return l;
}
RankLayout RankLayout::flat(int size) {
  return fromHostIds(std::vector<int>(size, 0));
}
RankLayout RankLayout::uniform(int size, int perHost) {
  std::vector<int> h(size);
  for (int r = 0; r < size; ++r) h[r] = r / perHost;
  return fromHostIds(h);
}
bool RankLayout::uniformHosts() const {
  for (const auto& h : hosts)
    if (h.size() != hosts[0].size()) return false;
  return true;
}

namespace {
template <Schedule (*F)(const OpDesc&, int, int)>
Schedule flat(const OpDesc& d, int rank, int size, const RankLayout&) {
  return F(d, rank, size);
}

const char* needUniformHosts(const OpDesc&, int, const RankLayout& l) {
  return l.uniformHosts() ? nullptr : "needs the same number of ranks on every host";
}

// One-shot sums the P vectors in a different order on every rank; in floating point (beyond two
// ranks, where a + b == b + a still holds bitwise) the ranks would end with different results,
// which data-parallel training cannot tolerate.
const char* sameOrderOnEveryRank(const OpDesc& d, int size, const RankLayout&) {
  const bool rounding =
      d.op == RedOp::Sum || d.op == RedOp::Prod || d.op == RedOp::Avg || d.op == RedOp::PreMulSum;
  return size > 2 && rounding && isFloatingPoint(d.dtype)
             ? "reduces in a different order on every rank, so floating-point sums would differ "
               "between ranks beyond 2 ranks"
             : nullptr;
}

using C = Collective;
const std::vector<Algorithm> kAll = {
    {C::AllReduce, "ring", flat<ringAllReduce>},
    {C::AllReduce, "recursive_doubling", flat<recursiveDoublingAllReduce>},
    {C::AllReduce, "rabenseifner", flat<rabenseifnerAllReduce>},
    {C::AllReduce, "one_shot", flat<directOneShotAllReduce>, sameOrderOnEveryRank},
    {C::AllReduce, "two_shot", flat<directTwoShotAllReduce>},
    {C::AllReduce, "double_binary_tree", flat<doubleBinaryTreeAllReduce>},
    {C::AllReduce, "hierarchical_sliced", hierarchicalSlicedAllReduce, needUniformHosts},
    {C::AllReduce, "hierarchical", hierarchicalAllReduce, needUniformHosts},
    {C::ReduceScatter, "ring", flat<ringReduceScatter>},
    {C::ReduceScatter, "recursive_halving", flat<recursiveHalvingReduceScatter>},
    {C::ReduceScatter, "direct", flat<directReduceScatter>},
    {C::ReduceScatter, "hierarchical", hierarchicalReduceScatter, needUniformHosts},
    {C::AllGather, "ring", flat<ringAllGather>},
    {C::AllGather, "recursive_doubling", flat<recursiveDoublingAllGather>},
    {C::AllGather, "bruck", flat<bruckAllGather>},
    {C::AllGather, "direct", flat<directAllGather>},
    {C::AllGather, "hierarchical", hierarchicalAllGather, needUniformHosts},
    {C::Broadcast, "binomial_tree", flat<binomialBroadcast>},
    {C::Broadcast, "chain", flat<chainBroadcast>},
    {C::Broadcast, "scatter_allgather", flat<scatterAllGatherBroadcast>},
    {C::Reduce, "binomial_tree", flat<binomialReduce>},
    {C::Reduce, "chain", flat<chainReduce>},
    {C::AllToAll, "pairwise", flat<pairwiseAllToAll>},
    {C::AllToAll, "bruck", flat<bruckAllToAll>},
    {C::Gather, "linear", flat<linearGather>},
    {C::Gather, "binomial_tree", flat<binomialGather>},
    {C::Scatter, "linear", flat<linearScatter>},
    {C::Scatter, "binomial_tree", flat<binomialScatter>},
    {C::Barrier, "dissemination", flat<disseminationBarrier>},
    {C::Send, "direct", flat<pointToPoint>},
    {C::Recv, "direct", flat<pointToPoint>},
};
}  // namespace

const std::vector<Algorithm>& allAlgorithms() {
  return kAll;
}

std::vector<const Algorithm*> algorithmsFor(Collective c) {
  std::vector<const Algorithm*> out;
  for (const Algorithm& a : kAll)
    if (a.coll == c) out.push_back(&a);
  return out;
}

const Algorithm* findAlgorithm(Collective c, std::string_view name) {
  for (const Algorithm& a : kAll)
    if (a.coll == c && name == a.name) return &a;
  return nullptr;
}

bool parseCollectiveKey(std::string_view s, Collective* out) {
  for (int c = 0; c <= int(Collective::Barrier); ++c)
    if (s == collectiveName(Collective(c))) {
      *out = Collective(c);
      return true;
    }
  return false;
}

Fold Fold::of(int rank, int size) {
  Fold f;
  while (f.p2 * 2 <= size) f.p2 *= 2;
  f.rem = size - f.p2;
  if (rank < 2 * f.rem) {
    f.partner = rank % 2 ? rank - 1 : rank + 1;
    f.virt = rank % 2 ? rank / 2 : -1;
  } else {
    f.virt = rank - f.rem;
  }
  return f;
}

}  // namespace chorus
