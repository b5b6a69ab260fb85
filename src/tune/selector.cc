#include "tune/selector.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "algorithms/schedule_index.h"

namespace chorus {

std::vector<Schedule> buildAllRanks(const Algorithm& a, const OpDesc& d, int size,
                                    const RankLayout& layout, size_t chunkBytes) {
  std::vector<Schedule> out;
  out.reserve(size);
  for (int r = 0; r < size; ++r) {
    out.push_back(a.build(d, r, size, layout));
    out.back().chunkBytes = chunkBytes;
  }
  return out;
}

Schedule buildSelected(const Selection& sel, const OpDesc& d, int rank, int size,
                       const RankLayout& layout) {
  Schedule s = sel.chosen->build(d, rank, size, layout);
  s.chunkBytes = sel.chunkBytes;
  return s;
}

RankLayout layoutFromTopology(const topo::Topology& t, int size) {
  if (int(t.ranks.size()) < size) return RankLayout::flat(size);
  std::vector<int> hostOf(size);
  std::vector<int> dense(t.hosts.size(), -1);  // topology host -> index among used hosts
  int used = 0;
  for (int r = 0; r < size; ++r) {
    int& h = dense.at(t.ranks[r].host);
    if (h < 0) h = used++;
    hostOf[r] = h;
  }
  return RankLayout::fromHostIds(hostOf);
}

std::vector<int> boundSample(const OpDesc& d, int size) {
  std::vector<int> s = {0, 1, size / 2, size - 1};
  if (d.root >= 0) s.push_back(d.root);
  std::erase_if(s, [&](int r) { return r < 0 || r >= size; });
  std::sort(s.begin(), s.end());
  s.erase(std::unique(s.begin(), s.end()), s.end());
  return s;
}

namespace {
// Roughly the work of walking an algorithm: every rank's steps, from the sampled ranks (each
// step costs a few heap operations per piece, and pieces per step are capped).
double walkCostEstimate(const std::vector<Schedule>& some, int size) {
  size_t steps = 0;
  for (const Schedule& s : some) steps = std::max(steps, s.steps.size());
  return double(steps) * size;
}

// The chunk size for the chosen candidate: the transports' unless a smaller power-of-two
// fraction of it is predicted faster by params.chunkGain. Only where a step spans several
// messages at the transports' size is there pipelining to gain, so small calls walk nothing.
size_t chooseChunk(const OpDesc& d, int size, const RankLayout& layout, const topo::Topology& topo,
                   const CostParams& params, const Candidate& best) {
  if (!params.minChunkBytes || !std::isfinite(best.predictedUs) || best.predictedUs <= 0) return 0;
  const uint64_t bytes = d.count * elementBytes(d);
  if (bytes < 2 * params.chunkBytes) return 0;
  const double bar = best.predictedUs * (1 - params.chunkGain);
  size_t chosen = 0;
  double fastest = bar;
  for (size_t c = params.chunkBytes / 2; c >= params.minChunkBytes && c >= elementBytes(d);
       c /= 2) {
    const double us =
        predictTime(d, buildAllRanks(*best.algorithm, d, size, layout, c), topo, params);
    if (us < fastest) fastest = us, chosen = c;
  }
  return chosen;
}
}  // namespace

std::string Selection::describe() const {
  std::string s;
  char buf[96];
  for (const Candidate& c : candidates) {
    if (!s.empty()) s += "; ";
    if (c.unavailable)
      snprintf(buf, sizeof buf, "%s n/a (%s)", c.algorithm->name, c.unavailable);
    else if (c.skipped)
      snprintf(buf, sizeof buf, "%s > %.1f us (bound)", c.algorithm->name, c.boundUs);
    else if (forced)
      snprintf(buf, sizeof buf, "%s", c.algorithm->name);
    else
      snprintf(buf, sizeof buf, "%s %.1f us", c.algorithm->name, c.predictedUs);
    s += buf;
    if (c.algorithm == chosen) s += forced ? " (forced)" : " (picked)";
    if (c.algorithm == chosen && chunkBytes)
      s += " in " + std::to_string(chunkBytes) + "-byte chunks";
  }
  return s;
}

Status selectAlgorithm(const OpDesc& d, int size, const RankLayout& layout,
                       const topo::Topology& topo, const CostParams& params,
                       const AlgoOverride& override, Selection* out) {
  Selection sel;
  if (const Algorithm* a = override.forCollective(d.coll)) {
    if (const char* why = a->why(d, size, layout)) {
      std::string can;
      for (const Algorithm* b : algorithmsFor(d.coll))
        if (!b->why(d, size, layout)) can += (can.empty() ? "" : ", ") + std::string(b->name);
      return Status::InvalidArgument("CHORUS_ALGO: " + std::string(collectiveName(d.coll)) + "=" +
                                     a->name + " cannot run " + d.toString() + " on " +
                                     std::to_string(size) + " ranks: it " + why +
                                     "; algorithms that can: " + can);
    }
    sel.forced = true;
    sel.chosen = a;
    sel.candidates.push_back({a, 0, nullptr});
    *out = std::move(sel);
    return Status::Ok();
  }
  const std::vector<const Algorithm*> all = algorithmsFor(d.coll);
  const std::vector<int> sample = boundSample(d, size);
  std::vector<size_t> order;  // available candidates, by bound
  std::vector<double> walkCost(all.size(), 0);
  for (const Algorithm* a : all) {
    Candidate c{a, std::numeric_limits<double>::infinity(), a->why(d, size, layout)};
    // One algorithm needs no prediction.
    if (all.size() == 1 && !c.unavailable) c.predictedUs = 0;
    if (!c.unavailable && all.size() > 1) {
      std::vector<Schedule> some;
      for (int r : sample) some.push_back(a->build(d, r, size, layout));
      c.boundUs = lowerBoundTime(d, size, sample, some, topo, params);
      walkCost[sel.candidates.size()] = walkCostEstimate(some, size);
      order.push_back(sel.candidates.size());
    }
    sel.candidates.push_back(c);
  }
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return sel.candidates[a].boundUs < sel.candidates[b].boundUs;
  });
  // The budget only bites when some candidate fits it: a prediction beats none.
  bool anyFits = false;
  for (size_t i : order) anyFits = anyFits || walkCost[i] <= double(params.walkBudget);
  double best = std::numeric_limits<double>::infinity();
  for (size_t i : order) {
    Candidate& c = sel.candidates[i];
    // Strictly greater: one whose bound ties the best might tie it and win on catalogue order.
    if (params.skipLosers && c.boundUs > best) {
      c.skipped = true;
      continue;
    }
    if (anyFits && walkCost[i] > double(params.walkBudget)) {
      c.unavailable =
          "is too costly to predict on this many ranks (its steps, all ranks together, exceed "
          "CostParams::walkBudget) and its lower bound does not rule it out";
      continue;
    }
    c.predictedUs = predictTime(d, buildAllRanks(*c.algorithm, d, size, layout), topo, params);
    best = std::min(best, c.predictedUs);
  }
  // Ties keep catalogue order, so every rank picks the same one.
  std::stable_sort(sel.candidates.begin(), sel.candidates.end(),
                   [](const Candidate& a, const Candidate& b) {
                     if (!a.unavailable != !b.unavailable) return !a.unavailable;
                     if (a.skipped != b.skipped) return !a.skipped;
                     if (a.skipped) return a.boundUs < b.boundUs;
                     return a.predictedUs < b.predictedUs;
                   });
  if (sel.candidates.empty() || sel.candidates[0].unavailable)
    return Status::Internal("no algorithm can run " + d.toString());
  sel.chosen = sel.candidates[0].algorithm;
  sel.chunkBytes = chooseChunk(d, size, layout, topo, params, sel.candidates[0]);
  *out = std::move(sel);
  return Status::Ok();
}

}  // namespace chorus
