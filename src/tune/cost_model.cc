#include "tune/cost_model.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <queue>

#include "algorithms/schedule_index.h"
#include "tune/placement.h"

namespace chorus {

namespace {

using topo::PathClass;

// What one rank's step looks like to the walk.
struct StepInfo {
  uint32_t firstPiece = 0;  // index of piece 0 in the flat piece arrays
  int pieces = 1;
  double bytesPerPiece = 0;
  double chunksPerPiece = 0;
  int nextOnChannel = -1;        // next step on the same (peer, direction)
  int match = -1;                // a Send's matching receive step on its peer
  int sender = -1, sentBy = -1;  // a receive's peer rank and matching send step
  // A Send's piece k waits for the receive of piece k - window: the slots hold `window` pieces
  // (at least one, so that a piece is written while the one before it is read out).
  int window = 1 << 30;
  uint32_t firstDependent = 0, endDependent = 0;  // range in the rank's dependents list
  // What the step touches in the rank's buffers, for the memory model: it reads `src`, writes
  // `dst` (a write onto the memory it reads is its own: `dstIsSrc`), and a chunkwise dependency
  // that touched the same memory just before (-1: none) may have left it in cache.
  bool readsSrc = false, writesDst = false, dstIsSrc = false;
  int srcWarmer = -1, dstWarmer = -1;
};

struct Dependent {
  int step;
  int slot;  // which of its dependencies this is
  bool chunkwise;
};

PathClass pathOf(const topo::Topology& topo, int a, int b) {
  const int placed = int(topo.ranks.size());
  if (a >= placed || b >= placed) return a == b ? PathClass::Self : PathClass::HostBridge;
  return topo.pathBetweenRanks(a, b);
}

// In place, the output is the input's memory.
BufferId canonical(const OpDesc& d, BufferId b) {
  return d.inPlace && b == BufferId::Output ? BufferId::Input : b;
}
bool sameMemory(const OpDesc& d, BufRef a, BufRef b) {
  return canonical(d, a.buf) == canonical(d, b.buf) && a.offset == b.offset;
}
bool sameMemory(const OpDesc& d, const Step& s) {
  return sameMemory(d, s.src, s.dst);
}

// GB/s is 1e3 bytes per microsecond.
double us(double bytes, double gbs) {
  return gbs > 0 ? bytes / (gbs * 1e3) : 0.0;
}

// The engine time (before the host's stretch) of `bytes` in `chunks` messages of step `st`,
// whose path is `pc`: what one piece costs in the walk, and summed over a step in the bound.
// `ported`: the bytes cross ports (placement.h), whose time the walk counts apart: the engine
// only hands the message over (a NIC, a GPU's copy engine over NVLink) or copies it out of the
// receive slot; otherwise the engine itself moves it at the path's rate (shared memory).
double engineWork(const OpDesc& d, const topo::Topology& topo, const Place& pl, const Step& st,
                  PathClass pc, bool ported, double bytes, double chunks) {
  const double overhead = chunks * topo.stepOverheadUs;
  const bool network = pc == PathClass::Network;
  switch (st.kind) {
    case StepKind::Copy:
      return sameMemory(d, st) ? 0 : overhead + us(bytes, pl.copyGBs);
    case StepKind::Send:
      if (network) return overhead + (pl.nicReadsMemory ? 0 : us(bytes, pl.copyGBs));
      return overhead + (ported ? 0 : us(bytes, topo.link(pc).bandwidthGBs));
    case StepKind::Recv:
      return overhead + us(bytes, ported ? pl.copyGBs : topo.link(pc).bandwidthGBs);
    case StepKind::RecvReduce:
      return overhead + us(bytes, pl.reduceGBs);
  }
  return 0;
}

Chunking chunkingOf(const OpDesc& d, const CostParams& p) {
  const size_t esize = elementBytes(d);
  return {esize, p.chunkBytes, {}};
}

struct RankInfo : Place {
  ScheduleIndex ix;
  std::vector<StepInfo> steps;
  std::vector<Dependent> dependents;
};

struct Walk {
  const OpDesc& d;
  const std::vector<Schedule>& sched;
  const topo::Topology& topo;
  const CostParams& p;
  int n;
  std::vector<RankInfo> ranks;
  // Flat per piece.
  std::vector<uint8_t> waiting;  // predecessors not yet done
  std::vector<double> ready;     // latest predecessor time so far
  std::vector<int> pieceRank, pieceStep;
  std::vector<double> engineFree;
  // Per port (placement.h): when its outgoing and its incoming side are next free, its rate.
  std::vector<double> portOut, portIn;
  std::vector<double> portGBs;
  // The memory model (Topology::missFraction): per host, the share of a first touch that
  // misses (0: its ranks' buffers fit in cache, and nothing misses), and the bytes its ranks
  // have touched so far; per piece, that count when it ran. An operand a dependency touched
  // before misses by the fraction of its reuse distance (the bytes touched since).
  std::vector<double> hostFirstTouchMisses;
  std::vector<double> hostTouched;
  std::vector<double> pieceTouched;
  uint64_t donePieces = 0;
  double finish = 0;

  // Each rank keeps its own queues, so a rank with many ready pieces (a direct algorithm's P-1
  // sends) costs O(log) per piece rather than a trip through one global heap per piece and
  // engine turn. A global heap of turns says which rank's engine moves next.
  struct Arriving {
    double at;
    uint32_t piece;
    bool operator>(const Arriving& o) const { return at != o.at ? at > o.at : piece > o.piece; }
  };
  template <class T>
  using MinHeap = std::priority_queue<T, std::vector<T>, std::greater<T>>;
  std::vector<MinHeap<Arriving>> arriving;  // predecessors done, by when it may start
  // Ready by the time the engine is free, keyed (piece's position in its step) << 32 | piece:
  // the executor's poll moves every step along a chunk per pass, so the k-th piece of each step
  // goes before the (k+1)-th of any (a chain of reduces stays a piece apart; sends to several
  // peers take turns).
  std::vector<MinHeap<uint64_t>> runnable;
  struct Turn {
    double at;
    int rank;
    bool operator>(const Turn& o) const { return at != o.at ? at > o.at : rank > o.rank; }
  };
  MinHeap<Turn> turns;
  std::vector<double> turnAt;  // the rank's live entry in `turns`; -1 when it has none

  Walk(const OpDesc& desc, const std::vector<Schedule>& s, const topo::Topology& t,
       const CostParams& params)
      : d(desc), sched(s), topo(t), p(params), n(int(s.size())), ranks(n) {}

  PathClass path(int a, int b) const { return pathOf(topo, a, b); }

  void placeRanks() {
    Placement pl = chorus::placeRanks(topo, n);
    for (int r = 0; r < n; ++r) static_cast<Place&>(ranks[r]) = pl.ranks[r];
    portGBs = std::move(pl.portGBs);
    portOut.assign(portGBs.size(), 0);
    portIn.assign(portGBs.size(), 0);
  }

  // Pieces per step and the channel links; returns false when a send has no receive.
  bool layOut() {
    const size_t esize = elementBytes(d);
    const Chunking chunking = chunkingOf(d, p);
    uint64_t total = 0;
    for (int r = 0; r < n; ++r) {
      ranks[r].ix = ScheduleIndex(sched[r], chunking);
      for (int i = 0; i < ranks[r].ix.steps(); ++i)
        total += std::clamp<uint64_t>(ranks[r].ix.chunks(i), 1, uint64_t(p.maxPiecesPerStep));
    }
    int maxPieces = p.maxPiecesPerStep;
    if (total > p.pieceBudget)
      maxPieces = int(std::max<uint64_t>(1, maxPieces * p.pieceBudget / total));

    uint32_t next = 0;
    for (int r = 0; r < n; ++r) {
      const std::vector<Step>& steps = sched[r].steps;
      RankInfo& ri = ranks[r];
      ri.steps.resize(steps.size());
      std::vector<std::vector<Dependent>> deps(steps.size());
      for (size_t i = 0; i < steps.size(); ++i) {
        const Step& st = steps[i];
        StepInfo& si = ri.steps[i];
        const uint64_t chunks = ri.ix.chunks(int(i));
        si.pieces = int(std::clamp<uint64_t>(chunks, 1, uint64_t(maxPieces)));
        si.firstPiece = next;
        next += si.pieces;
        si.bytesPerPiece = double(st.count) * esize / si.pieces;
        si.chunksPerPiece = double(chunks) / si.pieces;
        si.nextOnChannel = ri.ix.next(int(i));
        for (int k = 0; k < Step::kMaxDeps; ++k)
          if (ri.ix.dep(int(i), k) >= 0)
            deps[ri.ix.dep(int(i), k)].push_back({int(i), k, ri.ix.chunkwise(int(i), k)});
        describeOperands(steps, ri.ix, int(i), &si, ri.steps);
      }
      for (size_t i = 0; i < steps.size(); ++i) {
        ri.steps[i].firstDependent = uint32_t(ri.dependents.size());
        ri.dependents.insert(ri.dependents.end(), deps[i].begin(), deps[i].end());
        ri.steps[i].endDependent = uint32_t(ri.dependents.size());
      }
    }
    // The k-th send on a channel meets the k-th receive on its other end.
    for (int r = 0; r < n; ++r) {
      const ScheduleIndex& ix = ranks[r].ix;
      for (int slot = 0; slot < int(ix.peers().size()); ++slot) {
        const int q = ix.peers()[slot];
        const int theirs = ranks[q].ix.channelOf(r, false);
        int recv = theirs < 0 ? -1 : ranks[q].ix.first(theirs);
        for (int i = ix.first(ScheduleIndex::channelId(slot, true)); i >= 0; i = ix.next(i)) {
          if (recv < 0) return false;
          StepInfo& send = ranks[r].steps[i];
          StepInfo& rs = ranks[q].steps[recv];
          send.match = recv;
          send.window = 1 + std::max(1, int(p.windowChunks / std::max(1.0, send.chunksPerPiece)));
          rs.sender = r;
          rs.sentBy = i;
          recv = ranks[q].ix.next(recv);
        }
      }
    }

    waiting.assign(next, 0);
    ready.assign(next, 0);
    pieceRank.resize(next);
    pieceStep.resize(next);
    for (int r = 0; r < n; ++r) {
      const std::vector<Step>& steps = sched[r].steps;
      RankInfo& ri = ranks[r];
      for (size_t i = 0; i < steps.size(); ++i) {
        const StepInfo& si = ri.steps[i];
        for (int k = 0; k < si.pieces; ++k) {
          pieceRank[si.firstPiece + k] = r;
          pieceStep[si.firstPiece + k] = int(i);
          // Piece k > 0 follows piece k - 1, which carries the whole-step waits below.
          waiting[si.firstPiece + k] += k > 0;
          waiting[si.firstPiece + k] += si.match >= 0 && k >= si.window;      // a free slot
          if (steps[i].kind != StepKind::Send && ri.ix.channel(int(i)) >= 0)  // its message
            ++waiting[si.firstPiece + k];
        }
        if (si.nextOnChannel >= 0) ++waiting[ri.steps[si.nextOnChannel].firstPiece];
        for (uint32_t j = si.firstDependent; j < si.endDependent; ++j) {
          const Dependent& dep = ri.dependents[j];
          const StepInfo& di = ri.steps[dep.step];
          if (dep.chunkwise)  // each piece waits for one piece of it (piecesWaiting)
            for (int k = 0; k < di.pieces; ++k) ++waiting[di.firstPiece + k];
          else
            ++waiting[di.firstPiece];
        }
      }
    }
    return true;
  }

  // Fills the memory model's fields of step i (its dependencies are laid out already).
  void describeOperands(const std::vector<Step>& steps, const ScheduleIndex& ix, int i,
                        StepInfo* si, const std::vector<StepInfo>& laid) const {
    const Step& st = steps[i];
    const bool copy = st.kind == StepKind::Copy && !sameMemory(d, st);
    si->readsSrc = st.kind == StepKind::Send || st.kind == StepKind::RecvReduce || copy;
    si->writesDst = st.kind == StepKind::Recv || st.kind == StepKind::RecvReduce || copy;
    si->dstIsSrc = st.kind == StepKind::RecvReduce && sameMemory(d, st);
    for (int k = 0; k < Step::kMaxDeps; ++k) {
      const int dep = ix.dep(i, k);
      if (dep < 0 || !ix.chunkwise(i, k)) continue;  // not chunkwise: long done
      const Step& ds = steps[dep];
      const StepInfo& di = laid[dep];
      auto touched = [&](BufRef r) {
        return (di.readsSrc && sameMemory(d, ds.src, r)) ||
               (di.writesDst && sameMemory(d, ds.dst, r));
      };
      if (si->readsSrc && si->srcWarmer < 0 && touched(st.src)) si->srcWarmer = dep;
      if (si->writesDst && si->dstWarmer < 0 && touched(st.dst)) si->dstWarmer = dep;
    }
  }

  // Per host, the share of a first touch that misses: of the bytes its ranks' buffers span.
  void markHostsThatMiss() {
    const size_t hosts = topo.hosts.size();
    hostFirstTouchMisses.assign(hosts, 0);
    hostTouched.assign(hosts, 0);
    if (topo.missGBs <= 0) return;
    std::vector<double> bytes(hosts, 0);
    const double esize = double(elementBytes(d));
    for (int r = 0; r < n; ++r) {
      if (ranks[r].host < 0) continue;
      std::map<BufferId, uint64_t> extent;  // per buffer: the end of what the rank touches
      for (size_t i = 0; i < sched[r].steps.size(); ++i) {
        const Step& st = sched[r].steps[i];
        const StepInfo& si = ranks[r].steps[i];
        if (si.readsSrc) {
          uint64_t& e = extent[canonical(d, st.src.buf)];
          e = std::max(e, st.src.offset + st.count);
        }
        if (si.writesDst) {
          uint64_t& e = extent[canonical(d, st.dst.buf)];
          e = std::max(e, st.dst.offset + st.count);
        }
      }
      for (auto [buf, end] : extent) bytes[ranks[r].host] += double(end) * esize;
    }
    for (size_t h = 0; h < hosts; ++h) hostFirstTouchMisses[h] = topo.missFraction(bytes[h]);
  }

  // The bytes of a piece that miss the cache (a write that misses costs twice: the line is
  // read for ownership, then written back), and the count of bytes touched on its host.
  double missedBytes(uint32_t piece, const RankInfo& ri, const StepInfo& si, int k) {
    if (ri.host < 0 || hostFirstTouchMisses[ri.host] <= 0) return 0;
    double& touched = hostTouched[ri.host];
    const double bytes = si.bytesPerPiece;
    auto misses = [&](int warmer) {
      if (warmer < 0) return hostFirstTouchMisses[ri.host];
      const StepInfo& wi = ri.steps[warmer];
      return topo.missFraction(touched - pieceTouched[wi.firstPiece + std::min(k, wi.pieces - 1)]);
    };
    double missed = 0;
    const double srcMisses = si.readsSrc ? misses(si.srcWarmer) : 0;
    missed += srcMisses * bytes;
    if (si.dstIsSrc)
      missed += srcMisses * bytes;  // written back
    else if (si.writesDst)
      missed += misses(si.dstWarmer) * 2 * bytes;
    touched += bytes * (int(si.readsSrc) + int(si.writesDst && !si.dstIsSrc));
    pieceTouched[piece] = touched;
    return missed;
  }

  void release(uint32_t piece, double at) {
    ready[piece] = std::max(ready[piece], at);
    if (--waiting[piece] == 0) push(piece);
  }
  void push(uint32_t piece) {
    const int r = pieceRank[piece];
    arriving[r].push({ready[piece], piece});
    scheduleTurn(r);
  }
  // When rank r's engine can next start a piece; a new entry only when that moved earlier (an
  // older entry for a later time then no longer matches turnAt and is skipped).
  void scheduleTurn(int r) {
    double at;
    if (!runnable[r].empty())
      at = engineFree[r];
    else if (!arriving[r].empty())
      at = std::max(engineFree[r], arriving[r].top().at);
    else
      return;
    if (turnAt[r] >= 0 && turnAt[r] <= at) return;
    turnAt[r] = at;
    turns.push({at, r});
  }

  // The piece of step i that piece j of its chunkwise dependent waits for: the one holding the
  // last chunk that piece needs (the index says which). Piece j of P pieces of a step of C chunks
  // ends with chunk ceil((j + 1) C / P) - 1, and chunk x is in piece floor(x P / C).
  int neededPiece(const RankInfo& ri, int i, const Dependent& dep, int j) const {
    const StepInfo& si = ri.steps[i];
    if (ri.ix.chunkElems(i) == ri.ix.chunkElems(dep.step)) return std::min(j, si.pieces - 1);
    const uint64_t c = ri.ix.chunks(dep.step), pieces = uint64_t(ri.steps[dep.step].pieces);
    const uint64_t last = ((uint64_t(j) + 1) * c + pieces - 1) / pieces - 1;
    const uint64_t need = ri.ix.chunksNeeded(dep.step, dep.slot, last);
    return int((need - 1) * uint64_t(si.pieces) / ri.ix.chunks(i));
  }

  // Piece k of step i is done: its chunkwise dependent's pieces that waited for it may go.
  void releaseChunkwise(const RankInfo& ri, int i, const Dependent& dep, int k, double done) {
    const StepInfo& di = ri.steps[dep.step];
    if (ri.ix.chunkElems(i) == ri.ix.chunkElems(dep.step)) {  // cut alike: piece k for piece k
      release(di.firstPiece + std::min(k, di.pieces - 1), done);
      return;
    }
    int lo = 0, hi = di.pieces;  // the first piece that needs piece k or a later one
    while (lo < hi) {
      const int mid = (lo + hi) / 2;
      if (neededPiece(ri, i, dep, mid) < k)
        lo = mid + 1;
      else
        hi = mid;
    }
    for (int j = lo; j < di.pieces && neededPiece(ri, i, dep, j) == k; ++j)
      release(di.firstPiece + j, done);
  }

  void execute(uint32_t piece, double start) {
    const int r = pieceRank[piece], i = pieceStep[piece];
    const Step& st = sched[r].steps[i];
    const RankInfo& ri = ranks[r];
    const StepInfo& si = ri.steps[i];
    const int k = int(piece - si.firstPiece);
    const double bytes = si.bytesPerPiece;
    double arrival = 0;
    PathClass pc = st.kind == StepKind::Copy ? PathClass::Self : path(r, st.peer);
    int out = -1, in = -1;
    const bool ported = st.kind != StepKind::Copy && portsOf(ri, ranks[st.peer], pc, &out, &in);
    const topo::LinkParams link = topo.link(pc);
    const double missed = missedBytes(piece, ri, si, k);
    const double work = engineWork(d, topo, ri, st, pc, ported, bytes, si.chunksPerPiece) +
                        us(missed, topo.missGBs);
    const double done = start + work * ri.stretch;
    engineFree[r] = done;
    finish = std::max(finish, done);
    ++donePieces;

    if (k + 1 < si.pieces) release(piece + 1, done);
    if (k + 1 == si.pieces && si.nextOnChannel >= 0)
      release(ri.steps[si.nextOnChannel].firstPiece, done);
    for (uint32_t j = si.firstDependent; j < si.endDependent; ++j) {
      const Dependent& dep = ri.dependents[j];
      const StepInfo& di = ri.steps[dep.step];
      if (dep.chunkwise)
        releaseChunkwise(ri, i, dep, k, done);
      else if (k + 1 == si.pieces)
        release(di.firstPiece, done);
    }
    if (si.sentBy >= 0) {  // this receive frees a slot for the sender's piece `window` ahead
      const StepInfo& sender = ranks[si.sender].steps[si.sentBy];
      if (k + sender.window < sender.pieces) release(sender.firstPiece + k + sender.window, done);
    }
    if (st.kind == StepKind::Send && si.match >= 0) {
      double wire = done;
      if (ported) {
        // The bytes queue on the sender's port out and on the receiver's port in, each at its
        // own rate, and have arrived once through both; one port does not idle while the
        // other is busy (the network buffers and interleaves packets of concurrent transfers).
        portOut[out] = std::max(done, portOut[out]) + us(bytes, portGBs[out]);
        portIn[in] = std::max(done, portIn[in]) + us(bytes, portGBs[in]);
        wire = std::max(portOut[out], portIn[in]);
      }
      arrival = wire + link.latencyUs * ri.stretch;
      const StepInfo& mi = ranks[st.peer].steps[si.match];
      release(mi.firstPiece + std::min(k, mi.pieces - 1), arrival);
    }
  }

  double run() {
    placeRanks();
    if (!layOut()) return std::numeric_limits<double>::infinity();
    markHostsThatMiss();
    pieceTouched.assign(waiting.size(), 0);
    engineFree.assign(n, 0);
    arriving.assign(n, {});
    runnable.assign(n, {});
    turnAt.assign(n, -1);
    for (uint32_t piece = 0; piece < waiting.size(); ++piece)
      if (waiting[piece] == 0) push(piece);
    while (!turns.empty()) {
      const Turn t = turns.top();
      turns.pop();
      const int r = t.rank;
      if (t.at != turnAt[r]) continue;  // superseded by an earlier turn
      turnAt[r] = -1;
      while (!arriving[r].empty() && arriving[r].top().at <= t.at) {
        const uint32_t piece = arriving[r].top().piece;
        const uint64_t k = piece - ranks[r].steps[pieceStep[piece]].firstPiece;
        runnable[r].push(k << 32 | piece);
        arriving[r].pop();
      }
      const uint32_t piece = uint32_t(runnable[r].top());
      runnable[r].pop();
      execute(piece, t.at);
      scheduleTurn(r);
    }
    return donePieces == waiting.size() ? finish : std::numeric_limits<double>::infinity();
  }
};

}  // namespace

double predictTime(const OpDesc& d, const std::vector<Schedule>& perRank,
                   const topo::Topology& topo, const CostParams& p) {
  if (perRank.empty()) return 0;
  Walk w(d, perRank, topo, p);
  return w.run();
}

// Each clause holds for every finished walk (an unfinished one is +infinity):
// - A rank's engine does its pieces one after another, so the walk ends no earlier than the
//   sum of their work. Summed over a step's pieces, the work is the step's: its chunks times
//   the per-message overhead plus its bytes at its rate, whatever the pieces.
// - A receive piece starts once its message has arrived, at least one link latency after time
//   0; so does every piece that depends on one (through its dependencies or channel order, as
//   a piece waits for a piece of what it depends on). Those pieces, one after another, start no
//   earlier than the smallest latency of the rank's incoming paths.
// - A rank's sends through a port (its NIC, its GPU's NVLink) cross it one after another, at
//   most at the port's rate (other ranks on that port only add to the queue), and the last
//   lands one latency of its path (times its stretch) after it left.
double lowerBoundTime(const OpDesc& d, int size, const std::vector<int>& ranks,
                      const std::vector<Schedule>& schedules, const topo::Topology& topo,
                      const CostParams& p) {
  if (size <= 0 || ranks.empty()) return 0;
  const Placement place = placeRanks(topo, size);
  const size_t esize = elementBytes(d);
  const Chunking chunking = chunkingOf(d, p);
  const double inf = std::numeric_limits<double>::infinity();
  double bound = 0;
  for (size_t i = 0; i < ranks.size() && i < schedules.size(); ++i) {
    const int r = ranks[i];
    const Place& pl = place.ranks.at(r);
    const std::vector<Step>& steps = schedules[i].steps;
    const ScheduleIndex ix(schedules[i], chunking);
    std::vector<uint8_t> afterRecv(steps.size(), 0);
    double all = 0, late = 0, firstArrival = inf;
    std::map<int, std::pair<double, double>> portBytes;  // port -> bytes sent, least latency
    for (int k = 0; k < int(steps.size()); ++k) {
      const Step& st = steps[k];
      // A receive that waits for a message (an empty step waits for nothing).
      const bool recv = st.kind != StepKind::Send && ix.channel(k) >= 0;
      const PathClass pc = st.kind == StepKind::Copy ? PathClass::Self : pathOf(topo, r, st.peer);
      const double bytes = double(st.count) * esize;
      int out = -1, in = -1;
      const bool ported =
          st.kind != StepKind::Copy && portsOf(pl, place.ranks.at(st.peer), pc, &out, &in);
      const double work = engineWork(d, topo, pl, st, pc, ported, bytes, double(ix.chunks(k)));
      bool after = recv;
      for (int j = 0; j < Step::kMaxDeps; ++j)
        if (ix.dep(k, j) >= 0) after = after || afterRecv[ix.dep(k, j)];
      if (ix.prev(k) >= 0) after = after || afterRecv[ix.prev(k)];
      afterRecv[k] = after;
      if (recv)
        firstArrival = std::min(firstArrival, topo.link(pathOf(topo, st.peer, r)).latencyUs);
      all += work;
      if (after) late += work;
      if (st.kind == StepKind::Send && ported && bytes > 0) {  // an empty step sends nothing
        auto [it, fresh] = portBytes.emplace(out, std::pair{0.0, inf});
        it->second.first += bytes;
        it->second.second = std::min(it->second.second, topo.link(pc).latencyUs);
      }
    }
    bound = std::max(bound, all * pl.stretch);
    if (firstArrival < inf) bound = std::max(bound, firstArrival + late * pl.stretch);
    for (const auto& [port, sent] : portBytes)
      bound = std::max(bound, us(sent.first, place.portGBs[port]) + sent.second * pl.stretch);
  }
  // The walk adds the same terms piece by piece in another order; keep clear of its rounding.
  return bound * (1 - 1e-9);
}

}  // namespace chorus
