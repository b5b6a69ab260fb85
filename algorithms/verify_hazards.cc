// Per-rank static checks and the hazard proof: the rank's own happens-before order over chunk
// events, as reachability bitsets (steps are listed so that (step, chunk) order is topological),
// then every conflicting pair of accesses to an element must be ordered one way or the other.
#include <algorithm>

#include "algorithms/verify_internal.h"

namespace chorus::verify {

namespace {
std::string at(int i) {
  return "step " + std::to_string(i) + ": ";
}

bool overlapsNotSame(int s1, uint64_t a, int s2, uint64_t b, uint64_t n) {
  return s1 == s2 && a != b && a < b + n && b < a + n;
}
}  // namespace

std::string checkStatic(const Schedule& s, const RankMem& m, int rank, int size) {
  for (int i = 0; i < int(s.steps.size()); ++i) {
    const Step& st = s.steps[i];
    for (int d : st.deps)
      if (d < -1 || d >= i)
        return at(i) + "depends on step " + std::to_string(d) + ", not an earlier one";
    if (st.count == 0) continue;
    if (st.kind != StepKind::Copy && (st.peer < 0 || st.peer >= size || st.peer == rank))
      return at(i) + "peer " + std::to_string(st.peer) + " is not another rank";
    int ss = 0, ds = 0;
    uint64_t sa = 0, da = 0;
    std::string e;
    if (selfCopy(m, st)) {  // touches nothing; it only has to be in bounds
      const Region& r = m.regions[int(st.src.buf)];
      if (st.src.offset + st.count > r.size) return at(i) + refName(st.src) + " is out of bounds";
      continue;
    }
    if (st.kind != StepKind::Recv) e = resolve(m, st.src, st.count, false, &ss, &sa);
    if (e.empty() && st.kind != StepKind::Send) e = resolve(m, st.dst, st.count, true, &ds, &da);
    if (!e.empty()) return at(i) + e;
    if (st.kind != StepKind::Send && st.kind != StepKind::Recv &&
        overlapsNotSame(ss, sa, ds, da, st.count))
      return at(i) + "source and destination overlap without being the same range";
  }
  return "";
}

namespace {
struct Access {
  uint64_t key;  // space << 56 | element
  uint32_t event;
  bool write;
  bool operator<(const Access& o) const { return key < o.key || (key == o.key && event < o.event); }
};

class HazardProof {
 public:
  HazardProof(const Schedule& s, const ScheduleIndex& ix, const RankMem& m)
      : s_(s), ix_(ix), m_(m) {}

  bool build(uint64_t maxEvents) {
    const int n = int(s_.steps.size());
    base_.assign(n + 1, 0);
    for (int i = 0; i < n; ++i) base_[i + 1] = base_[i] + ix_.chunks(i);
    events_ = base_[n];
    if (events_ > maxEvents) return false;
    words_ = (events_ + 63) / 64;
    reach_.assign(events_ * words_, 0);
    for (int i = 0; i < n; ++i)
      for (uint64_t c = 0; c < ix_.chunks(i); ++c) closeOver(i, c);
    return true;
  }

  std::string check() {
    std::vector<Access> acc;
    for (int i = 0; i < int(s_.steps.size()); ++i) addAccesses(i, &acc);
    std::sort(acc.begin(), acc.end());
    for (size_t a = 0; a < acc.size();) {
      size_t b = a;
      while (b < acc.size() && acc[b].key == acc[a].key) ++b;
      std::string e = checkGroup(acc, a, b);
      if (!e.empty()) return e;
      a = b;
    }
    return "";
  }

 private:
  uint64_t* row(uint64_t e) { return &reach_[e * words_]; }
  bool before(uint64_t a, uint64_t b) { return (row(b)[a / 64] >> (a % 64)) & 1; }

  void addPred(uint64_t e, uint64_t p) {
    uint64_t *r = row(e), *q = row(p);
    for (uint64_t w = 0; w < words_; ++w) r[w] |= q[w];
    r[p / 64] |= uint64_t(1) << (p % 64);
  }

  void closeOver(int i, uint64_t c) {
    const uint64_t e = base_[i] + c;
    if (c > 0) addPred(e, e - 1);
    for (int k = 0; k < Step::kMaxDeps; ++k)  // after the last chunk of the dependency it needs
      if (ix_.dep(i, k) >= 0) addPred(e, base_[ix_.dep(i, k)] + ix_.chunksNeeded(i, k, c) - 1);
    if (c == 0 && ix_.prev(i) >= 0) addPred(e, base_[ix_.prev(i) + 1] - 1);
  }

  void addRange(BufRef ref, uint64_t from, uint64_t len, bool write, uint32_t ev,
                std::vector<Access>* acc) {
    int space;
    uint64_t start;
    if (!resolve(m_, ref, from + len, write, &space, &start).empty()) return;
    for (uint64_t k = from; k < from + len; ++k)
      acc->push_back({uint64_t(space) << 56 | (start + k), ev, write});
  }

  void addAccesses(int i, std::vector<Access>* acc) {
    const Step& st = s_.steps[i];
    if (selfCopy(m_, st)) return;  // skipped by the executor
    for (uint64_t c = 0; c < ix_.chunks(i); ++c) {
      const uint64_t from = ix_.chunkBegin(i, c), len = ix_.chunkLen(i, c);
      const uint32_t ev = uint32_t(base_[i] + c);
      if (st.kind != StepKind::Recv) addRange(st.src, from, len, false, ev, acc);
      if (st.kind != StepKind::Send) addRange(st.dst, from, len, true, ev, acc);
    }
  }

  std::string describe(uint32_t ev) const {
    int i = int(std::upper_bound(base_.begin(), base_.end(), uint64_t(ev)) - base_.begin()) - 1;
    return "step " + std::to_string(i) + " chunk " + std::to_string(ev - base_[i]);
  }

  std::string conflict(const Access& w, const Access& o) const {
    const char* spaces[] = {"input", "output", "scratch"};
    return describe(w.event) + " writes " + spaces[w.key >> 56] + " element " +
           std::to_string(w.key & ((uint64_t(1) << 56) - 1)) + " while " + describe(o.event) +
           (o.write ? " writes" : " reads") + " it, and nothing orders them (add a dependency)";
  }

  // Event ids are a topological order, so the writes of an element must form a chain in id
  // order, and each read must fall between its neighbouring writes; transitivity does the
  // rest. Linear in the accesses of the element.
  std::string checkGroup(const std::vector<Access>& acc, size_t a, size_t b) {
    std::vector<size_t> w;
    for (size_t i = a; i < b; ++i)
      if (acc[i].write) w.push_back(i);
    if (w.empty()) return "";
    for (size_t k = 1; k < w.size(); ++k)
      if (acc[w[k - 1]].event != acc[w[k]].event && !before(acc[w[k - 1]].event, acc[w[k]].event))
        return conflict(acc[w[k]], acc[w[k - 1]]);
    size_t next = 0;  // first write with event >= this read's
    for (size_t i = a; i < b; ++i) {
      if (acc[i].write) continue;
      const uint32_t e = acc[i].event;
      while (next < w.size() && acc[w[next]].event < e) ++next;
      if (next > 0 && !before(acc[w[next - 1]].event, e)) return conflict(acc[w[next - 1]], acc[i]);
      size_t after = next;
      while (after < w.size() && acc[w[after]].event == e) ++after;
      if (after < w.size() && !before(e, acc[w[after]].event))
        return conflict(acc[w[after]], acc[i]);
    }
    return "";
  }

  const Schedule& s_;
  const ScheduleIndex& ix_;
  const RankMem& m_;
  std::vector<uint64_t> base_;
  uint64_t events_ = 0, words_ = 0;
  std::vector<uint64_t> reach_;
};
}  // namespace

std::string checkHazards(const Schedule& s, const ScheduleIndex& ix, const RankMem& m,
                         uint64_t maxEvents, bool* checked) {
  HazardProof p(s, ix, m);
  *checked = p.build(maxEvents);
  return *checked ? p.check() : "";
}

}  // namespace chorus::verify
