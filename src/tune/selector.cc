#include "tune/selector.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

namespace chorus {

std::vector<Schedule> buildAllRanks(const Algorithm& a, const OpDesc& d, int size,
                                    const RankLayout& layout) {
  std::vector<Schedule> out;
  out.reserve(size);
  for (int r = 0; r < size; ++r) out.push_back(a.build(d, r, size, layout));
  return out;
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

std::string Selection::describe() const {
  std::string s;
  char buf[96];
  for (const Candidate& c : candidates) {
    if (!s.empty()) s += "; ";
    if (c.unavailable)
      snprintf(buf, sizeof buf, "%s n/a (%s)", c.algorithm->name, c.unavailable);
    else if (forced)
      snprintf(buf, sizeof buf, "%s", c.algorithm->name);
    else
      snprintf(buf, sizeof buf, "%s %.1f us", c.algorithm->name, c.predictedUs);
    s += buf;
    if (c.algorithm == chosen) s += forced ? " (forced)" : " (picked)";
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
  for (const Algorithm* a : all) {
    Candidate c{a, std::numeric_limits<double>::infinity(), a->why(d, size, layout)};
    // One algorithm needs no prediction.
    if (!c.unavailable)
      c.predictedUs =
          all.size() == 1 ? 0 : predictTime(d, buildAllRanks(*a, d, size, layout), topo, params);
    sel.candidates.push_back(c);
  }
  // Ties keep catalogue order, so every rank picks the same one.
  std::stable_sort(sel.candidates.begin(), sel.candidates.end(),
                   [](const Candidate& a, const Candidate& b) {
                     if (!a.unavailable != !b.unavailable) return !a.unavailable;
                     return a.predictedUs < b.predictedUs;
                   });
  if (sel.candidates.empty() || sel.candidates[0].unavailable)
    return Status::Internal("no algorithm can run " + d.toString());
  sel.chosen = sel.candidates[0].algorithm;
  *out = std::move(sel);
  return Status::Ok();
}

}  // namespace chorus
