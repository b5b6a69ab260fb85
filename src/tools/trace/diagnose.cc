#include "tools/trace/diagnose.h"

#include <map>
#include <set>

namespace chorus::trace {
namespace {

std::string rankList(const std::vector<int>& ranks) {
  std::string s;
  for (size_t i = 0; i < ranks.size(); ++i)
    s += (i ? (i + 1 == ranks.size() ? " and " : ", ") : "") + std::to_string(ranks[i]);
  return s;
}

// A rank is stuck when its last call did not finish well and it knows whom it waited on.
const Entry* stuckIn(const Dump* d) {
  const Entry* e = d ? d->last() : nullptr;
  return e && e->state != "done" && e->waitRank >= 0 ? e : nullptr;
}

}  // namespace

Diagnosis diagnose(const std::vector<Dump>& dumps) {
  Diagnosis out;
  if (dumps.empty()) return out;
  const int size = dumps[0].size;
  std::vector<const Dump*> byRank(size_t(size), nullptr);
  for (const Dump& d : dumps) byRank[size_t(d.rank)] = &d;
  for (int r = 0; r < size; ++r)
    if (!byRank[size_t(r)]) out.noDump.push_back(r);

  // Follow each stuck rank's chain to its end.
  std::map<int, std::vector<int>> endsAt;
  for (int r = 0; r < size; ++r) {
    if (!stuckIn(byRank[size_t(r)])) continue;
    std::set<int> seen{r};
    int at = r;
    while (const Entry* e = stuckIn(byRank[size_t(at)])) {
      if (e->waitRank >= size || seen.count(e->waitRank)) break;  // a cycle: stop inside it
      at = e->waitRank;
      seen.insert(at);
    }
    if (at != r) endsAt[at].push_back(r);
  }
  if (endsAt.empty()) {
    out.text = "No rank is stuck waiting on another: every dumped rank's last call " +
               std::string(dumps.size() == size_t(size) ? "" : "(of those that dumped) ") +
               "finished or waited on no one.";
    if (!out.noDump.empty()) out.text += " Ranks " + rankList(out.noDump) + " sent no dump.";
    return out;
  }
  for (auto& [rank, waiters] : endsAt)
    if (out.culprit < 0 || waiters.size() > out.waiters.size()) {
      out.culprit = rank;
      out.waiters = waiters;
    }
  const Entry* theirs = byRank[size_t(out.waiters[0])]->last();
  out.text = "Rank " + std::to_string(out.culprit) + " is the one the others wait on: rank" +
             (out.waiters.size() > 1 ? "s " : " ") + rankList(out.waiters) + " (in " +
             theirs->label() + ") wait" + (out.waiters.size() > 1 ? "" : "s") +
             " on it, directly or through others. ";
  const Dump* c = byRank[size_t(out.culprit)];
  if (!c) {
    out.text +=
        "It sent no dump: it died, hangs outside Chorus, or was not signalled (send it "
        "SIGUSR1, or look at its log).";
  } else if (const Entry* e = c->last(); !e) {
    out.text += "It has made no call on this communicator.";
  } else if (e->state == "done") {
    out.text += "Its last call, " + e->label() + ", finished: it has not made the call the " +
                "others are in (a missing or mismatched call, or it is busy elsewhere).";
  } else {
    out.text += "It is in " + e->label() + " (" + e->state + ") itself, waiting on no rank " +
                "known to the recorder.";
  }
  return out;
}

}  // namespace chorus::trace
