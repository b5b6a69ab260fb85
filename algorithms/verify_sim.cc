// The verifier's global run: all ranks' schedules advance together, chunk by chunk, over
// symbolic channels holding at most `slots` messages, until nothing can move. Then it checks
// that everything finished (or explains the wait cycle), that no message was left unread and
// that every output holds the expected symbols.
#include <deque>
#include <unordered_map>

#include "algorithms/schedule_index.h"
#include "algorithms/verify.h"
#include "algorithms/verify_internal.h"

namespace chorus {
namespace verify {
namespace {

using Bits = std::vector<uint64_t>;

struct Message {
  std::vector<Sym> data;
  Bits know;  // barrier only: ranks the sending step has heard from
};

struct RankState {
  const Schedule* s = nullptr;
  const ScheduleIndex* ix = nullptr;
  RankMem mem;
  std::vector<Sym> space[3];
  std::vector<uint64_t> done;
  std::vector<std::vector<int>> dependents;
  std::vector<int> head;  // by channel: the step it serves now, or -1
  std::vector<char> queued;
  std::vector<Bits> know;
  bool ready(int i, uint64_t c) const {
    return ix->depsReady(i, c, [&](int d) { return done[d]; });
  }
  bool finished(int i) const { return done[i] == ix->chunks(i); }
};

class Sim {
 public:
  Sim(const OpDesc& d, const std::vector<Schedule>& s, const std::vector<ScheduleIndex>& ix,
      const VerifyOptions& o)
      : d_(d), P_(int(s.size())), o_(o), ranks_(s.size()) {
    barrier_ = d.coll == Collective::Barrier;
    for (int r = 0; r < P_; ++r) setUp(r, s[r], ix[r]);
  }

  std::string run(VerifyReport* rep) {
    for (int r = 0; r < P_; ++r)
      for (int i = int(ranks_[r].s->steps.size()) - 1; i >= 0; --i) wake(r, i);
    while (!work_.empty() && err_.empty()) {
      auto [r, i] = work_.back();
      work_.pop_back();
      ranks_[r].queued[i] = 0;
      tryStep(r, i);
    }
    if (!err_.empty()) return err_;
    if (rep) {
      rep->messages += messages_;
      rep->elements += elements_;
    }
    std::string e = checkFinished();
    if (e.empty()) e = checkResults();
    return e;
  }

 private:
  void setUp(int r, const Schedule& s, const ScheduleIndex& ix) {
    RankState& st = ranks_[r];
    st.s = &s;
    st.ix = &ix;
    st.mem = layoutFor(d_, P_, r, s.scratchElems);
    for (int k = 0; k < 3; ++k) st.space[k].assign(st.mem.spaceSize[k], Sym{});
    if (barrier_)  // the token's value means nothing
      for (Sym& x : st.space[2]) x.def = true;
    const Region& in = st.mem.regions[int(BufferId::Input)];
    if (in.readable)
      for (uint64_t i = 0; i < in.size; ++i) st.space[in.space][in.base + i] = inputSym(r, i);
    const size_t n = s.steps.size();
    st.done.assign(n, 0);
    st.dependents.resize(n);
    st.queued.assign(n, 0);
    if (barrier_) st.know.assign(n, Bits((P_ + 63) / 64, 0));
    for (size_t i = 0; i < n; ++i)
      for (int k = 0; k < Step::kMaxDeps; ++k)
        if (ix.dep(int(i), k) >= 0) st.dependents[ix.dep(int(i), k)].push_back(int(i));
    st.head.resize(ix.channels());
    for (int ch = 0; ch < ix.channels(); ++ch) st.head[ch] = ix.first(ch);
  }

  void wake(int r, int i) {
    if (i < 0 || ranks_[r].queued[i]) return;
    ranks_[r].queued[i] = 1;
    work_.push_back({r, i});
  }

  std::deque<Message>& wire(int from, int to) { return wires_[uint64_t(from) * P_ + to]; }

  Sym* cell(RankState& st, BufRef ref, uint64_t count, bool write) {
    int space;
    uint64_t start;
    resolve(st.mem, ref, count, write, &space, &start);  // checked before the run
    return &st.space[space][start];
  }

  bool read(int r, int i, BufRef ref, uint64_t from, uint64_t len, std::vector<Sym>* out) {
    const Sym* p = cell(ranks_[r], ref, from + len, false) + from;
    out->assign(p, p + len);
    for (uint64_t k = 0; k < len; ++k)
      if (!p[k].def) {
        err_ = "rank " + std::to_string(r) + " step " + std::to_string(i) + " reads " +
               refName({ref.buf, ref.offset + from + k}) + ", which holds no value yet";
        return false;
      }
    return true;
  }

  void learn(RankState& st, int r, int i, const Bits* msg) {
    Bits& k = st.know[i];
    k[r / 64] |= uint64_t(1) << (r % 64);
    auto orIn = [&](const Bits& o) {
      for (size_t w = 0; w < k.size(); ++w) k[w] |= o[w];
    };
    for (int dd : st.s->steps[i].deps)
      if (dd >= 0) orIn(st.know[dd]);
    if (st.ix->prev(i) >= 0) orIn(st.know[st.ix->prev(i)]);
    if (msg) orIn(*msg);
  }

  // Fires one chunk if it can; false if it must wait (or on error).
  bool fire(int r, int i) {
    RankState& st = ranks_[r];
    const Step& s = st.s->steps[i];
    const uint64_t c = st.done[i], from = st.ix->chunkBegin(i, c), len = st.ix->chunkLen(i, c);
    if (!st.ready(i, c)) return false;
    if (st.ix->channel(i) >= 0 && st.head[st.ix->channel(i)] != i) return false;
    std::vector<Sym> buf;
    if (s.kind == StepKind::Send) {
      auto& w = wire(r, s.peer);
      if (int(w.size()) >= o_.slots) return false;
      if (!read(r, i, s.src, from, len, &buf)) return false;
      if (barrier_) learn(st, r, i, nullptr);
      w.push_back({std::move(buf), barrier_ ? st.know[i] : Bits()});
      ++messages_;
      elements_ += len;
    } else if (s.kind == StepKind::Copy) {
      if (!selfCopy(st.mem, s)) {
        if (!read(r, i, s.src, from, len, &buf)) return false;
        std::copy(buf.begin(), buf.end(), cell(st, s.dst, from + len, true) + from);
      }
      if (barrier_) learn(st, r, i, nullptr);
    } else {
      auto& w = wire(s.peer, r);
      if (w.empty()) return false;
      Message& m = w.front();
      if (m.data.size() != len) {
        err_ = "rank " + std::to_string(r) + " step " + std::to_string(i) + " expects a " +
               std::to_string(len) + "-element message from rank " + std::to_string(s.peer) +
               " but the next one it sent has " + std::to_string(m.data.size());
        return false;
      }
      if (s.kind == StepKind::RecvReduce) {
        if (!read(r, i, s.src, from, len, &buf)) return false;
        for (uint64_t k = 0; k < len; ++k) buf[k] = combine(buf[k], m.data[k]);
      } else {
        buf = std::move(m.data);
      }
      std::copy(buf.begin(), buf.end(), cell(st, s.dst, from + len, true) + from);
      if (barrier_) learn(st, r, i, &m.know);
      w.pop_front();
    }
    ++st.done[i];
    return true;
  }

  void tryStep(int r, int i) {
    RankState& st = ranks_[r];
    bool moved = false;
    while (!st.finished(i) && fire(r, i)) moved = true;
    if (!moved) return;
    const Step& s = st.s->steps[i];
    for (int j : st.dependents[i]) wake(r, j);
    const int ch = st.ix->channel(i);
    if (ch < 0) return;
    if (st.finished(i)) {
      st.head[ch] = st.ix->next(i);
      wake(r, st.head[ch]);
    }
    // Data or credit moved: the other end of the wire may go on.
    const RankState& peer = ranks_[s.peer];
    int k = peer.ix->channelOf(r, s.kind != StepKind::Send);
    if (k >= 0) wake(s.peer, peer.head[k]);
  }

  std::string whyWaits(int r, int i, int* nr, int* ni) const {
    const RankState& st = ranks_[r];
    const Step& s = st.s->steps[i];
    const uint64_t c = st.done[i];
    *nr = r;
    for (int k = 0; k < Step::kMaxDeps; ++k) {
      const int dd = st.ix->dep(i, k);
      if (dd >= 0 && st.done[dd] < st.ix->chunksNeeded(i, k, c)) {
        *ni = dd;
        return "waits for its step " + std::to_string(dd);
      }
    }
    const int k = st.ix->channel(i);
    if (k >= 0 && st.head[k] != i) {
      *ni = st.head[k];
      return "waits for its step " + std::to_string(*ni) + " on the same channel";
    }
    const RankState& peer = ranks_[s.peer];
    const int pk = peer.ix->channelOf(r, s.kind != StepKind::Send);
    *nr = s.peer;
    *ni = pk >= 0 ? peer.head[pk] : -1;
    std::string who = "rank " + std::to_string(s.peer);
    if (s.kind == StepKind::Send)
      return "has no free slot: " + who +
             (*ni < 0 ? " posts no further receive from it" : " has not taken its messages");
    return "waits for data: " + who + (*ni < 0 ? " sends it nothing more" : " has not sent it");
  }

  std::string deadlock(int r0, int i0) const {
    std::string out = "deadlock with " + std::to_string(o_.slots) + " slot(s) per channel:";
    int r = r0, i = i0;
    std::vector<std::pair<int, int>> seen;
    for (int hop = 0; hop < 2 * P_ + 8 && i >= 0; ++hop) {
      for (auto& p : seen)
        if (p.first == r && p.second == i) return out + " (a cycle)";
      seen.push_back({r, i});
      int nr, ni;
      std::string why = whyWaits(r, i, &nr, &ni);
      out += "\n  rank " + std::to_string(r) + " step " + std::to_string(i) + " (chunk " +
             std::to_string(ranks_[r].done[i]) + " of " + std::to_string(ranks_[r].ix->chunks(i)) +
             ") " + why;
      r = nr;
      i = ni;
    }
    return out;
  }

  std::string checkFinished() const {
    for (int r = 0; r < P_; ++r)
      for (size_t i = 0; i < ranks_[r].done.size(); ++i)
        if (!ranks_[r].finished(int(i))) return deadlock(r, int(i));
    for (auto& [key, w] : wires_)
      if (!w.empty())
        return "rank " + std::to_string(key / P_) + " sent " + std::to_string(w.size()) +
               " message(s) to rank " + std::to_string(key % P_) + " that it never received";
    return "";
  }

  std::string checkResults() {
    Expected ex(d_, P_);
    for (int r = 0; r < P_; ++r) {
      RankState& st = ranks_[r];
      if (barrier_) {
        Bits all((P_ + 63) / 64, 0);
        all[r / 64] |= uint64_t(1) << (r % 64);
        for (const Bits& k : st.know)
          for (size_t w = 0; w < all.size(); ++w) all[w] |= k[w];
        for (int q = 0; q < P_; ++q)
          if (!((all[q / 64] >> (q % 64)) & 1))
            return "rank " + std::to_string(r) + " leaves the barrier without hearing from rank " +
                   std::to_string(q);
      }
      if (!ex.wants(r)) continue;
      const Region& out = st.mem.regions[int(BufferId::Output)];
      for (uint64_t i = 0; i < ex.outputElems(); ++i) {
        const Sym got = st.space[out.space][out.base + i], want = ex.at(r, i);
        if (got == want) continue;
        std::string what = !got.def          ? "nothing"
                           : got.n != want.n ? std::to_string(got.n) + " contribution(s)"
                                             : "the wrong contributions";
        return "rank " + std::to_string(r) + " output element " + std::to_string(i) + " holds " +
               what + "; expected " + std::to_string(want.n);
      }
    }
    return "";
  }

  OpDesc d_;
  int P_;
  VerifyOptions o_;
  bool barrier_ = false;
  std::vector<RankState> ranks_;
  std::unordered_map<uint64_t, std::deque<Message>> wires_;
  std::vector<std::pair<int, int>> work_;
  std::string err_;
  uint64_t messages_ = 0, elements_ = 0;
};

}  // namespace
}  // namespace verify

Status verifySchedules(const OpDesc& d, const std::vector<Schedule>& schedules,
                       const VerifyOptions& opts, VerifyReport* report) {
  using namespace verify;
  const int P = int(schedules.size());
  auto fail = [&](const std::string& m) {
    return Status::InvalidUsage(std::string(P ? schedules[0].algorithm : "") + " " + d.toString() +
                                " on " + std::to_string(P) + " ranks (chunk " +
                                std::to_string(opts.chunkElems) + "): " + m);
  };
  if (report) report->hazardsChecked = opts.hazards;
  const size_t esize = elementBytes(d);
  const Chunking chunking{esize, size_t(opts.chunkElems) * esize, {}};
  std::vector<ScheduleIndex> ix(P);
  for (int r = 0; r < P; ++r) {
    // Both ends of a channel cut by their schedule's chunkBytes: it must agree.
    if (schedules[r].chunkBytes != schedules[0].chunkBytes)
      return fail("rank " + std::to_string(r) + " cuts messages of " +
                  std::to_string(schedules[r].chunkBytes) + " bytes, rank 0 of " +
                  std::to_string(schedules[0].chunkBytes) + " (Schedule::chunkBytes)");
    RankMem m = layoutFor(d, P, r, schedules[r].scratchElems);
    std::string e = checkStatic(schedules[r], m, r, P);
    bool checked = false;
    if (e.empty()) ix[r] = ScheduleIndex(schedules[r], chunking);
    if (e.empty() && opts.hazards)
      e = checkHazards(schedules[r], ix[r], m, opts.maxHazardEvents, &checked);
    if (report && !checked) report->hazardsChecked = false;
    if (!e.empty()) return fail("rank " + std::to_string(r) + " " + e);
  }
  Sim sim(d, schedules, ix, opts);
  std::string e = sim.run(report);
  return e.empty() ? Status::Ok() : fail(e);
}

}  // namespace chorus
