#include "p2p_bench.h"

#include <cstring>
#include <vector>

#include "coll_bench.h"
#include "common/clock.h"
#include "pattern.h"
#include "progress.h"
#include "report.h"

namespace chorus::bench {

namespace {

class P2pRunner {
 public:
  P2pRunner(const Options& o, Backend& b)
      : o_(o),
        b_(b),
        me_(b.rank()),
        peer_(1 - b.rank()),
        active_(b.rank() < 2),
        sbuf_(o.maxBytes ? o.maxBytes : 1),
        rbuf_(o.maxBytes ? o.maxBytes : 1) {}

  // One iteration: a round trip (latency) or a window (bw, bibw).
  Status once(size_t bytes) {
    if (!active_) return Status::Ok();
    if (o_.command == "latency") {
      P2pOp s{true, sbuf_.data(), bytes, peer_}, r{false, rbuf_.data(), bytes, peer_};
      if (me_ == 0) {
        CHORUS_RETURN_IF_ERROR(b_.p2p(&s, 1));
        return b_.p2p(&r, 1);
      }
      CHORUS_RETURN_IF_ERROR(b_.p2p(&r, 1));
      return b_.p2p(&s, 1);
    }
    ops_.clear();
    const bool bi = o_.command == "bibw";
    for (int w = 0; w < o_.window; ++w) {
      if (me_ == 0 || bi) ops_.push_back({true, sbuf_.data(), bytes, peer_});
      if (me_ == 1 || bi) ops_.push_back({false, rbuf_.data(), bytes, peer_});
    }
    CHORUS_RETURN_IF_ERROR(b_.p2p(ops_.data(), int(ops_.size())));
    if (bi) return Status::Ok();
    P2pOp ack{me_ == 1, ack_, sizeof ack_, peer_};  // the window is done when rank 1 says so
    return b_.p2p(&ack, 1);
  }

  // -c: one exchange of patterned bytes, checked on the receiving side(s).
  Status validate(size_t bytes, double* wrong) {
    Pattern pat(DataType::Uint8, RedOp::Sum, 2);
    if (active_) pat.fillMove(sbuf_.data(), bytes, 0, me_);
    memset(rbuf_.data(), 0, bytes);
    CHORUS_RETURN_IF_ERROR(once(bytes));
    const bool received = active_ && (o_.command != "bw" || me_ == 1);
    *wrong = received ? double(pat.wrongMoved(rbuf_.data(), bytes, 0, peer_)) : 0;
    return Status::Ok();
  }

 private:
  const Options& o_;
  Backend& b_;
  const int me_, peer_;
  const bool active_;
  std::vector<char> sbuf_, rbuf_;
  std::vector<P2pOp> ops_;
  char ack_[4] = {};
};

}  // namespace

int runPointToPoint(const Options& o, Backend& b) {
  const int me = b.rank();
  auto fail = [&](const Status& st) {
    fprintf(stderr, "chorus-bench: rank %d: %s (%s): %s\n", me, o.command.c_str(), b.name(),
            st.toString().c_str());
    return 1;
  };
  if (b.size() < 2) return fail(Status::InvalidArgument("needs at least 2 ranks"));
  P2pRunner run(o, b);
  Timer timer(o, b);
  FILE* out = me == 0 ? stdout : fopen("/dev/null", "w");
  P2pReport report(out, o.format, o.full);
  const bool bw = o.command != "latency";
  std::string title = "chorus-bench " + o.command + " (OSU style): impl " + b.name() +
                      (bw ? ", window " + std::to_string(o.window) : std::string()) +
                      ", median of timed iterations";
  report.begin(title, bw);
  Progress progress(me == 0 ? o.progress : 0);
  bool anyWrong = false;
  for (size_t bytes = o.minBytes; bytes <= o.maxBytes; bytes = bytes ? bytes * 2 : 1) {
    progress.update(o.command + " " + sizeLabel(bytes));
    P2pRow row;
    row.impl = b.name();
    row.test = o.command;
    row.ranks = b.size();
    row.bytes = bytes;
    Status st;
    if (o.check) {
      st = run.validate(bytes, &row.wrong);
      if (st.ok()) st = timer.sum(&row.wrong);
    }
    for (int i = 0; st.ok() && i < o.warmup; ++i) st = run.once(bytes);
    int64_t t0 = nowNs();
    if (st.ok()) st = run.once(bytes);
    int iters = 0;
    if (st.ok()) st = timer.iterations(double(nowNs() - t0) / 1e3, &iters);
    if (st.ok()) st = b.barrier();
    std::vector<double> us(static_cast<size_t>(iters));
    for (int i = 0; st.ok() && i < iters; ++i) {
      t0 = nowNs();
      st = run.once(bytes);
      us[size_t(i)] = double(nowNs() - t0) / 1e3;
      if (!bw) us[size_t(i)] /= 2;
    }
    if (st.ok()) st = timer.summarize(us, &row.us);
    if (!st.ok()) return fail(st);
    row.iters = iters;
    const double moved = double(bytes) * o.window * (o.command == "bibw" ? 2 : 1);
    row.mbps = bw && row.us.median > 0 ? moved / row.us.median : 0;  // bytes/us = MB/s
    progress.clear();
    report.row(row);
    anyWrong |= row.wrong > 0;
    if (bytes == 0 && o.maxBytes == 0) break;
  }
  report.end();
  if (out != stdout) fclose(out);
  if (Status st = b.barrier(); !st.ok()) return fail(st);
  return anyWrong ? 3 : 0;
}

}  // namespace chorus::bench
