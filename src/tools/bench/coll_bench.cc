#include "coll_bench.h"

#include <cstdlib>
#include <cstring>
#include <memory>

#include "chorus/memory.h"
#include "common/clock.h"
#include "pattern.h"
#include "progress.h"

namespace chorus::bench {

namespace {

enum class Coll {
  AllReduce,
  ReduceScatter,
  AllGather,
  Broadcast,
  Reduce,
  AllToAll,
  Gather,
  Scatter,
  SendRecv
};

Coll collOf(const std::string& n) {
  if (n == "reduce_scatter") return Coll::ReduceScatter;
  if (n == "allgather") return Coll::AllGather;
  if (n == "broadcast") return Coll::Broadcast;
  if (n == "reduce") return Coll::Reduce;
  if (n == "alltoall") return Coll::AllToAll;
  if (n == "gather") return Coll::Gather;
  if (n == "scatter") return Coll::Scatter;
  if (n == "sendrecv") return Coll::SendRecv;
  return Coll::AllReduce;
}

bool reduces(Coll c) {
  return c == Coll::AllReduce || c == Coll::ReduceScatter || c == Coll::Reduce;
}
bool rooted(Coll c) {
  return c == Coll::Broadcast || c == Coll::Reduce || c == Coll::Gather || c == Coll::Scatter;
}
// In-place forms Chorus defines (communicator.h); the others have none.
bool hasInPlace(Coll c) {
  return c == Coll::AllReduce || c == Coll::ReduceScatter || c == Coll::AllGather ||
         c == Coll::Broadcast || c == Coll::Reduce;
}

// Sizes as nccl-tests counts them: `total` elements in the larger of the two buffers, `part`
// the count argument of the call (per rank for the scattering and gathering collectives).
struct Shape {
  size_t total = 0, part = 0;
};

Shape shapeOf(Coll c, size_t elems, int P) {
  switch (c) {
    case Coll::ReduceScatter:
    case Coll::AllGather:
    case Coll::AllToAll:
    case Coll::Gather:
    case Coll::Scatter:
      return {elems / P * P, elems / P};
    default:
      return {elems, elems};
  }
}

// A buffer from malloc or, with --alloc shared, from chorus::allocateShared.
struct BufferFree {
  bool shared = false;
  void operator()(void* p) const {
    if (shared)
      (void)freeShared(p);
    else
      free(p);
  }
};
using Buffer = std::unique_ptr<char, BufferFree>;

Buffer allocate(size_t bytes, bool shared) {
  bytes = (bytes + 63) / 64 * 64;
  void* p = nullptr;
  if (shared)
    (void)allocateShared(bytes, &p);
  else
    p = aligned_alloc(64, bytes ? bytes : 64);
  Buffer b(static_cast<char*>(p), BufferFree{shared});
  if (b) memset(b.get(), 0, bytes);  // fault the pages in before anything is timed
  return b;
}

class CollRunner {
 public:
  CollRunner(const Options& o, Backend& b)
      : o_(o),
        b_(b),
        c_(collOf(o.command)),
        P_(b.size()),
        me_(b.rank()),
        es_(dataTypeSize(o.dtype)),
        pat_(o.dtype, o.op, P_),
        timer_(o, b) {}

  Status prepare(size_t maxBytes) {
    send_ = allocate(maxBytes, o_.alloc == "shared");
    recv_ = allocate(maxBytes, o_.alloc == "shared");
    if (!send_ || !recv_) return Status::SystemError("cannot allocate 2 x " + sizeLabel(maxBytes));
    return Status::Ok();
  }

  // One row: both placements at one size.
  Status measure(size_t bytes, CollRow* row) {
    const Shape sh = shapeOf(c_, bytes / es_, P_);
    row->bytes = sh.total * es_;
    row->count = sh.total;
    if (o_.placement != Placement::InPlace) CHORUS_RETURN_IF_ERROR(place(sh, false, &row->oop));
    if (o_.placement != Placement::OutOfPlace && hasInPlace(c_))
      CHORUS_RETURN_IF_ERROR(place(sh, true, &row->ip));
    return Status::Ok();
  }

  Coll coll() const { return c_; }

 private:
  // Pointers for a placement, following Chorus's in-place conventions.
  void pointers(const Shape& sh, bool inPlace, char** s, char** r) const {
    *s = send_.get();
    *r = recv_.get();
    if (!inPlace) return;
    *s = *r;
    if (c_ == Coll::ReduceScatter) *r = *s + size_t(me_) * sh.part * es_;
    if (c_ == Coll::AllGather) *s = *r + size_t(me_) * sh.part * es_;
  }

  Status call(const Shape& sh, const char* s, char* r) {
    const DataType t = o_.dtype;
    const int root = o_.root;
    switch (c_) {
      case Coll::AllReduce:
        return b_.allReduce(s, r, sh.part, t, o_.op);
      case Coll::ReduceScatter:
        return b_.reduceScatter(s, r, sh.part, t, o_.op);
      case Coll::AllGather:
        return b_.allGather(s, r, sh.part, t);
      case Coll::Broadcast:
        return b_.broadcast(s, r, sh.part, t, root);
      case Coll::Reduce:
        return b_.reduce(s, r, sh.part, t, o_.op, root);
      case Coll::AllToAll:
        return b_.allToAll(s, r, sh.part, t);
      case Coll::Gather:
        return b_.gather(s, r, sh.part, t, root);
      case Coll::Scatter:
        return b_.scatter(s, r, sh.part, t, root);
      case Coll::SendRecv: {
        P2pOp ops[2] = {{true, const_cast<char*>(s), sh.part * es_, (me_ + 1) % P_},
                        {false, r, sh.part * es_, (me_ + P_ - 1) % P_}};
        return b_.p2p(ops, 2);
      }
    }
    return Status::Internal("unknown collective");
  }

  void fillInputs(const Shape& sh, char* s) const {
    const size_t n = sh.part;
    switch (c_) {
      case Coll::AllReduce:
      case Coll::Reduce:
        pat_.fillReduce(s, n, 0, me_);
        break;
      case Coll::ReduceScatter:
        pat_.fillReduce(s, sh.total, 0, me_);
        break;
      case Coll::Broadcast:
      case Coll::Scatter:
        if (me_ == o_.root) pat_.fillMove(s, c_ == Coll::Scatter ? sh.total : n, 0, me_);
        break;
      case Coll::AllToAll:
        pat_.fillMove(s, sh.total, 0, me_);
        break;
      default:
        pat_.fillMove(s, n, 0, me_);
        break;  // allgather, gather, sendrecv
    }
  }

  size_t countWrong(const Shape& sh, const char* r) const {
    const size_t n = sh.part;
    size_t bad = 0;
    switch (c_) {
      case Coll::AllReduce:
        return pat_.wrongReduced(r, n, 0);
      case Coll::Reduce:
        return me_ == o_.root ? pat_.wrongReduced(r, n, 0) : 0;
      case Coll::ReduceScatter:
        return pat_.wrongReduced(r, n, size_t(me_) * n);
      case Coll::Broadcast:
        return pat_.wrongMoved(r, n, 0, o_.root);
      case Coll::Scatter:
        return pat_.wrongMoved(r, n, size_t(me_) * n, o_.root);
      case Coll::SendRecv:
        return pat_.wrongMoved(r, n, 0, (me_ + P_ - 1) % P_);
      case Coll::Gather:
        if (me_ != o_.root) return 0;
        [[fallthrough]];
      case Coll::AllGather:
        for (int p = 0; p < P_; ++p) bad += pat_.wrongMoved(r + size_t(p) * n * es_, n, 0, p);
        return bad;
      case Coll::AllToAll:
        for (int p = 0; p < P_; ++p)
          bad += pat_.wrongMoved(r + size_t(p) * n * es_, n, size_t(me_) * n, p);
        return bad;
    }
    return 0;
  }

  Status place(const Shape& sh, bool inPlace, Measure* m) {
    char *s, *r;
    pointers(sh, inPlace, &s, &r);
    m->valid = true;
    if (o_.check) {
      fillInputs(sh, s);
      CHORUS_RETURN_IF_ERROR(call(sh, s, r));
      double w = double(countWrong(sh, r));
      CHORUS_RETURN_IF_ERROR(timer_.sum(&w));
      m->wrong = w;
    }
    for (int i = 0; i < o_.warmup; ++i) CHORUS_RETURN_IF_ERROR(call(sh, s, r));
    int64_t t0 = nowNs();
    CHORUS_RETURN_IF_ERROR(call(sh, s, r));
    int iters = 0;
    CHORUS_RETURN_IF_ERROR(timer_.iterations(double(nowNs() - t0) / 1e3, &iters));
    std::vector<double> us(static_cast<size_t>(iters));
    CHORUS_RETURN_IF_ERROR(b_.barrier());
    for (int i = 0; i < iters; ++i) {
      t0 = nowNs();
      CHORUS_RETURN_IF_ERROR(call(sh, s, r));
      us[size_t(i)] = double(nowNs() - t0) / 1e3;
    }
    CHORUS_RETURN_IF_ERROR(timer_.summarize(us, &m->us));
    m->algbw = m->us.median > 0 ? double(sh.total * es_) / (m->us.median * 1e3) : 0;
    m->busbw = m->algbw * busBwFactor(o_.command, P_);
    return Status::Ok();
  }

  const Options& o_;
  Backend& b_;
  const Coll c_;
  const int P_, me_;
  const size_t es_;
  const Pattern pat_;
  Timer timer_;
  Buffer send_, recv_;
};

}  // namespace

Status Timer::iterations(double oneCallUs, int* iters) {
  if (o_.iters > 0) {
    *iters = o_.iters;
    return Status::Ok();
  }
  double worst = oneCallUs;
  CHORUS_RETURN_IF_ERROR(b_.allReduce(&worst, &worst, 1, DataType::Float64, RedOp::Max));
  double n = o_.budgetSec * 1e6 / (worst > 0.01 ? worst : 0.01);
  *iters = n < 5 ? 5 : n > 1000 ? 1000 : int(n);
  return Status::Ok();
}

Status Timer::summarize(std::vector<double>& us, Summary* out) {
  CHORUS_RETURN_IF_ERROR(
      b_.allReduce(us.data(), us.data(), us.size(), DataType::Float64, RedOp::Max));
  *out = bench::summarize(us);
  return Status::Ok();
}

Status Timer::sum(double* v) {
  return b_.allReduce(v, v, 1, DataType::Float64, RedOp::Sum);
}

int runCollective(const Options& o, Backend& b, std::vector<CollRow>* rows) {
  const int P = b.size(), me = b.rank();
  auto fail = [&](const Status& st) {
    fprintf(stderr, "chorus-bench: rank %d: %s (%s): %s\n", me, o.command.c_str(), b.name(),
            st.toString().c_str());
    return 1;
  };
  if (o.root >= P)
    return fail(
        Status::InvalidArgument("root " + std::to_string(o.root) + " is not below the rank count"));
  CollRunner run(o, b);
  const bool oneRoot = rooted(run.coll());
  if (Status st = run.prepare(o.maxBytes); !st.ok()) return fail(st);
  FILE* out = me == 0 ? stdout : fopen("/dev/null", "w");
  CollReport report(out, o.format, o.full);
  char title[256];
  snprintf(title, sizeof title,
           "chorus-bench %s: impl %s, %d ranks, %s %s%s, warm-up %d, iterations %s, check %s",
           o.command.c_str(), b.name(), P, dataTypeName(o.dtype),
           reduces(run.coll()) ? redOpName(o.op) : "",
           oneRoot ? (", root " + std::to_string(o.root)).c_str() : "", o.warmup,
           o.iters ? std::to_string(o.iters).c_str() : "auto", o.check ? "on" : "off");
  report.begin(title);
  Progress progress(me == 0 ? o.progress : 0);
  bool anyWrong = false;
  for (double bytes = double(o.minBytes); bytes <= double(o.maxBytes) * 1.0001; bytes *= o.factor) {
    if (shapeOf(run.coll(), size_t(bytes) / dataTypeSize(o.dtype), P).part == 0) continue;
    progress.update(o.command + " " + sizeLabel(size_t(bytes)));
    CollRow row;
    row.impl = b.name();
    row.coll = o.command;
    row.ranks = P;
    row.type = dataTypeName(o.dtype);
    row.op = reduces(run.coll()) ? redOpName(o.op) : "none";
    row.root = oneRoot ? o.root : -1;
    if (Status st = run.measure(size_t(bytes), &row); !st.ok()) return fail(st);
    progress.clear();
    report.row(row);
    anyWrong |= row.oop.wrong > 0 || row.ip.wrong > 0;
    rows->push_back(row);
  }
  report.end();
  if (out != stdout) fclose(out);
  if (Status st = b.barrier(); !st.ok()) return fail(st);
  return anyWrong ? 3 : 0;
}

}  // namespace chorus::bench
