#include "tune/cost_model.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <queue>

namespace chorus {

namespace {

using topo::PathClass;

// What one rank's step looks like to the walk.
struct StepInfo {
  uint32_t firstPiece = 0;  // index of piece 0 in the flat piece arrays
  int pieces = 1;
  double bytesPerPiece = 0;
  double chunksPerPiece = 0;
  int nextOnChannel = -1;                         // next step on the same (peer, direction)
  int match = -1;                                 // a Send's matching receive step on its peer
  uint32_t firstDependent = 0, endDependent = 0;  // range in the rank's dependents list
};

struct Dependent {
  int step;
  bool chunkwise;
};

struct RankInfo {
  std::vector<StepInfo> steps;
  std::vector<Dependent> dependents;
  double stretch = 1;    // more ranks than cores on its host
  double copyGBs = 1;    // a local copy
  double reduceGBs = 1;  // a receive-reduce
  int nic = -1;          // index into the NIC resources, for network sends
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
  std::vector<double> nicOut, nicIn;  // per NIC resource
  std::vector<double> nicGBs;
  uint64_t donePieces = 0;
  double finish = 0;

  struct Ready {
    double key;
    uint32_t piece;
    bool operator>(const Ready& o) const { return key > o.key; }
  };
  std::priority_queue<Ready, std::vector<Ready>, std::greater<Ready>> heap;

  Walk(const OpDesc& desc, const std::vector<Schedule>& s, const topo::Topology& t,
       const CostParams& params)
      : d(desc), sched(s), topo(t), p(params), n(int(s.size())), ranks(n) {}

  bool placed(int r) const { return r < int(topo.ranks.size()); }
  PathClass path(int a, int b) const {
    if (!placed(a) || !placed(b)) return a == b ? PathClass::Self : PathClass::HostBridge;
    return topo.pathBetweenRanks(a, b);
  }

  void placeRanks() {
    std::map<int, int> hostRanks;
    for (int r = 0; r < n; ++r)
      if (placed(r) && topo.ranks[r].gpu < 0) ++hostRanks[topo.ranks[r].host];
    std::map<std::pair<int, int>, int> nicIndex;  // (host, nic or -1-rank) -> resource
    for (int r = 0; r < n; ++r) {
      RankInfo& ri = ranks[r];
      ri.copyGBs = topo.link(PathClass::Self).bandwidthGBs;
      ri.reduceGBs = topo.hostReduceGBs;
      double nicSpeed = 0;
      std::pair<int, int> key{-1, -1 - r};
      if (placed(r)) {
        const topo::RankPlace& pl = topo.ranks[r];
        const topo::Host& h = topo.hosts.at(pl.host);
        if (pl.gpu >= 0) ri.reduceGBs = topo.deviceReduceGBs;
        const int cores = std::max(1, h.sockets * h.coresPerSocket);
        if (pl.gpu < 0) ri.stretch = std::max(1.0, double(hostRanks[pl.host]) / cores);
        const int k = topo.nearestNic(pl.host, pl.gpu, pl.socket);
        if (k >= 0) {
          key = {pl.host, k};
          nicSpeed = h.nics[k].speedGbps / 8;
        }
      }
      auto [it, fresh] = nicIndex.emplace(key, int(nicIndex.size()));
      ri.nic = it->second;
      if (fresh) {
        double gbs = topo.link(PathClass::Network).bandwidthGBs;
        if (nicSpeed > 0) gbs = std::min(gbs, nicSpeed);
        nicGBs.push_back(gbs);
      }
    }
    nicOut.assign(nicGBs.size(), 0);
    nicIn.assign(nicGBs.size(), 0);
  }

  // Pieces per step and the channel links; returns false when a send has no receive.
  bool layOut() {
    const size_t esize =
        d.coll == Collective::Send || d.coll == Collective::Recv ? 1 : dataTypeSize(d.dtype);
    const uint64_t chunkElems = std::max<uint64_t>(1, p.chunkBytes / esize);
    auto chunksOf = [&](const Step& s) { return (s.count + chunkElems - 1) / chunkElems; };
    uint64_t total = 0;
    for (const Schedule& s : sched)
      for (const Step& st : s.steps)
        total += std::clamp<uint64_t>(chunksOf(st), 1, uint64_t(p.maxPiecesPerStep));
    int maxPieces = p.maxPiecesPerStep;
    if (total > p.pieceBudget)
      maxPieces = int(std::max<uint64_t>(1, maxPieces * p.pieceBudget / total));

    uint32_t next = 0;
    // Per (from, to): the sends in order; per (to, from): the receives in order.
    std::map<std::pair<int, int>, std::vector<int>> sends, recvs;
    for (int r = 0; r < n; ++r) {
      const std::vector<Step>& steps = sched[r].steps;
      RankInfo& ri = ranks[r];
      ri.steps.resize(steps.size());
      std::map<std::pair<int, bool>, int> lastOnChannel;
      std::vector<std::vector<Dependent>> deps(steps.size());
      for (size_t i = 0; i < steps.size(); ++i) {
        const Step& st = steps[i];
        StepInfo& si = ri.steps[i];
        const uint64_t chunks = chunksOf(st);
        si.pieces = int(std::clamp<uint64_t>(chunks, 1, uint64_t(maxPieces)));
        si.firstPiece = next;
        next += si.pieces;
        si.bytesPerPiece = double(st.count) * esize / si.pieces;
        si.chunksPerPiece = double(chunks) / si.pieces;
        if (st.kind != StepKind::Copy) {
          const bool out = st.kind == StepKind::Send;
          auto [it, fresh] = lastOnChannel.emplace(std::make_pair(st.peer, out), int(i));
          if (!fresh) {
            ri.steps[it->second].nextOnChannel = int(i);
            it->second = int(i);
          }
          (out ? sends[{r, st.peer}] : recvs[{st.peer, r}]).push_back(int(i));
        }
        for (int dep : st.deps)
          if (dep >= 0) deps[dep].push_back({int(i), steps[dep].count == st.count});
      }
      for (size_t i = 0; i < steps.size(); ++i) {
        ri.steps[i].firstDependent = uint32_t(ri.dependents.size());
        ri.dependents.insert(ri.dependents.end(), deps[i].begin(), deps[i].end());
        ri.steps[i].endDependent = uint32_t(ri.dependents.size());
      }
    }
    for (auto& [pair, list] : sends) {
      auto it = recvs.find(pair);
      if (it == recvs.end() || it->second.size() < list.size()) return false;
      for (size_t k = 0; k < list.size(); ++k)
        ranks[pair.first].steps[list[k]].match = it->second[k];
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
          if (steps[i].kind == StepKind::Recv || steps[i].kind == StepKind::RecvReduce)
            ++waiting[si.firstPiece + k];
        }
        if (si.nextOnChannel >= 0) ++waiting[ri.steps[si.nextOnChannel].firstPiece];
        for (uint32_t j = si.firstDependent; j < si.endDependent; ++j) {
          const Dependent& dep = ri.dependents[j];
          const StepInfo& di = ri.steps[dep.step];
          if (dep.chunkwise)
            for (int k = 0; k < di.pieces; ++k) ++waiting[di.firstPiece + k];
          else
            ++waiting[di.firstPiece];
        }
      }
    }
    return true;
  }

  void release(uint32_t piece, double at) {
    ready[piece] = std::max(ready[piece], at);
    if (--waiting[piece] == 0) push(piece);
  }
  void push(uint32_t piece) {
    heap.push({std::max(ready[piece], engineFree[pieceRank[piece]]), piece});
  }

  bool sameMemory(const Step& s) const {
    auto canon = [&](BufferId b) {
      return d.inPlace && b == BufferId::Output ? BufferId::Input : b;
    };
    return canon(s.src.buf) == canon(s.dst.buf) && s.src.offset == s.dst.offset;
  }

  void execute(uint32_t piece, double start) {
    const int r = pieceRank[piece], i = pieceStep[piece];
    const Step& st = sched[r].steps[i];
    const RankInfo& ri = ranks[r];
    const StepInfo& si = ri.steps[i];
    const int k = int(piece - si.firstPiece);
    const double bytes = si.bytesPerPiece;
    const double overhead = si.chunksPerPiece * topo.stepOverheadUs;
    // GB/s is 1e3 bytes per microsecond.
    auto us = [](double b, double gbs) { return gbs > 0 ? b / (gbs * 1e3) : 0.0; };
    double work = 0, arrival = 0;
    PathClass pc = st.kind == StepKind::Copy ? PathClass::Self : path(r, st.peer);
    const bool network = pc == PathClass::Network;
    const topo::LinkParams link = topo.link(pc);
    switch (st.kind) {
      case StepKind::Copy:
        work = sameMemory(st) ? 0 : overhead + us(bytes, ri.copyGBs);
        break;
      case StepKind::Send:
        work = overhead + us(bytes, network ? ri.copyGBs : link.bandwidthGBs);
        break;
      case StepKind::Recv:
        work = overhead + us(bytes, network ? ri.copyGBs : link.bandwidthGBs);
        break;
      case StepKind::RecvReduce:
        work = overhead + us(bytes, ri.reduceGBs);
        break;
    }
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
        release(di.firstPiece + std::min(k, di.pieces - 1), done);
      else if (k + 1 == si.pieces)
        release(di.firstPiece, done);
    }
    if (st.kind == StepKind::Send && si.match >= 0) {
      double wire = done;
      if (network) {
        const int out = ri.nic, in = ranks[st.peer].nic;
        wire = std::max({done, nicOut[out], nicIn[in]}) + us(bytes, nicGBs[out]);
        nicOut[out] = nicIn[in] = wire;
      }
      arrival = wire + link.latencyUs * ri.stretch;
      const StepInfo& mi = ranks[st.peer].steps[si.match];
      release(mi.firstPiece + std::min(k, mi.pieces - 1), arrival);
    }
  }

  double run() {
    placeRanks();
    if (!layOut()) return std::numeric_limits<double>::infinity();
    engineFree.assign(n, 0);
    for (uint32_t piece = 0; piece < waiting.size(); ++piece)
      if (waiting[piece] == 0) push(piece);
    while (!heap.empty()) {
      Ready top = heap.top();
      heap.pop();
      const double start = std::max(ready[top.piece], engineFree[pieceRank[top.piece]]);
      if (start > top.key) {  // its engine got busy since it was queued
        heap.push({start, top.piece});
        continue;
      }
      execute(top.piece, start);
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

}  // namespace chorus
