#include "algorithms/builder.h"

#include <algorithm>

namespace chorus {

Builder::Builder(const char* name, const OpDesc& d, int rank) {
  s_.algorithm = name;
  // The anchor of joins must be a buffer this rank surely has.
  const bool outMissing =
      (d.coll == Collective::Reduce || d.coll == Collective::Gather) && rank != d.root;
  anchor_ = outMissing ? input() : output();
  anchorOk_ = d.count > 0;
}

Builder::Deps Builder::clean(const Deps& d) {
  Deps out;
  for (int x : d)
    if (x >= 0 && std::find(out.begin(), out.end(), x) == out.end()) out.push_back(x);
  return out;
}

int Builder::join(Deps deps) {
  deps = clean(deps);
  if (deps.empty() || !anchorOk_) return -1;
  while (deps.size() > 2) {  // pairwise tree of joins
    Deps next;
    for (size_t i = 0; i + 1 < deps.size(); i += 2)
      next.push_back(s_.copy(anchor_, anchor_, 1, deps[i], deps[i + 1]));
    if (deps.size() % 2) next.push_back(deps.back());
    deps = next;
  }
  return s_.copy(anchor_, anchor_, 1, deps[0], deps.size() > 1 ? deps[1] : -1);
}

int Builder::add(StepKind k, int peer, BufRef src, BufRef dst, uint64_t n, Deps deps) {
  deps = clean(deps);
  if (n == 0) return join(deps);
  if (deps.size() > 2) deps = {deps[0], join(Deps(deps.begin() + 1, deps.end()))};
  int d0 = deps.size() > 0 ? deps[0] : -1, d1 = deps.size() > 1 ? deps[1] : -1;
  switch (k) {
    case StepKind::Send:
      return s_.send(peer, src, n, d0, d1);
    case StepKind::Recv:
      return s_.recv(peer, dst, n, d0, d1);
    case StepKind::RecvReduce:
      return s_.recvReduce(peer, src, dst, n, d0, d1);
    case StepKind::Copy:
      return s_.copy(src, dst, n, d0, d1);
  }
  return -1;
}

int Builder::send(int peer, BufRef src, uint64_t n, Deps deps) {
  return add(StepKind::Send, peer, src, {}, n, std::move(deps));
}
int Builder::recv(int peer, BufRef dst, uint64_t n, Deps deps) {
  return add(StepKind::Recv, peer, {}, dst, n, std::move(deps));
}
int Builder::recvReduce(int peer, BufRef local, BufRef dst, uint64_t n, Deps deps) {
  return add(StepKind::RecvReduce, peer, local, dst, n, std::move(deps));
}
int Builder::copy(BufRef src, BufRef dst, uint64_t n, Deps deps) {
  return add(StepKind::Copy, -1, src, dst, n, std::move(deps));
}

}  // namespace chorus
