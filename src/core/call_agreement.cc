#include "core/call_agreement.h"

#include "common/rank_list.h"

namespace chorus {

namespace {

bool reduces(Collective c) {
  return c == Collective::AllReduce || c == Collective::ReduceScatter || c == Collective::Reduce;
}

bool rooted(Collective c) {
  return c == Collective::Broadcast || c == Collective::Reduce || c == Collective::Gather ||
         c == Collective::Scatter;
}

std::string describe(const CallPrint& p) {
  return OpDesc{.coll = Collective(p.coll),
                .dtype = DataType(p.dtype),
                .op = RedOp(p.op),
                .root = p.root,
                .count = p.count}
      .toString();
}

}  // namespace

CallPrint callPrint(const OpDesc& d) {
  CallPrint p;
  p.count = d.count;
  p.coll = uint8_t(d.coll);
  p.dtype = uint8_t(d.dtype);
  if (reduces(d.coll)) p.op = uint8_t(d.op);
  if (rooted(d.coll)) p.root = d.root;
  return p;
}

Status compareCallPrints(const std::vector<CallPrint>& prints) {
  std::vector<CallPrint> distinct;
  std::vector<std::vector<int>> ranksOf;
  for (size_t r = 0; r < prints.size(); ++r) {
    size_t k = 0;
    while (k < distinct.size() && !(distinct[k] == prints[r])) ++k;
    if (k == distinct.size()) {
      distinct.push_back(prints[r]);
      ranksOf.emplace_back();
    }
    ranksOf[k].push_back(int(r));
  }
  if (distinct.size() == 1) return Status::Ok();
  std::string calls;
  for (size_t k = 0; k < distinct.size(); ++k)
    calls += std::string(k ? "; " : "") + (ranksOf[k].size() > 1 ? "ranks " : "rank ") +
             rankList(ranksOf[k]) + " called " + describe(distinct[k]);
  return Status::InvalidUsage(
      "mismatched calls, found by every rank before any data moved (CHORUS_CHECK_CALLS=2): " +
      calls +
      ". Every rank must make the same collective calls, with the same count, type, op and root, "
      "in the same order; the communicator is still usable");
}

}  // namespace chorus
