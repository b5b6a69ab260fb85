#include "tune/algo_override.h"

namespace chorus {

std::string algorithmNames(Collective c) {
  std::string s;
  for (const Algorithm* a : algorithmsFor(c)) s += (s.empty() ? "" : ", ") + std::string(a->name);
  return s;
}

Status AlgoOverride::parse(const std::string& spec, AlgoOverride* out) {
  AlgoOverride o;
  size_t pos = 0;
  while (pos < spec.size()) {
    size_t end = spec.find(',', pos);
    if (end == std::string::npos) end = spec.size();
    const std::string item = spec.substr(pos, end - pos);
    pos = end + 1;
    if (item.empty()) continue;
    const size_t eq = item.find('=');
    if (eq == std::string::npos)
      return Status::InvalidArgument("CHORUS_ALGO: '" + item +
                                     "' is not collective=algorithm (e.g. allreduce=ring)");
    const std::string key = item.substr(0, eq), name = item.substr(eq + 1);
    Collective c;
    if (!parseCollectiveKey(key, &c) || c == Collective::Send || c == Collective::Recv)
      return Status::InvalidArgument(
          "CHORUS_ALGO: unknown collective '" + key +
          "' (allreduce, reduce_scatter, allgather, broadcast, reduce, alltoall, gather, "
          "scatter, barrier)");
    const Algorithm* a = findAlgorithm(c, name);
    if (!a)
      return Status::InvalidArgument("CHORUS_ALGO: " + key + " has no algorithm '" + name +
                                     "'; choose one of: " + algorithmNames(c));
    o.forced[c] = a;
  }
  *out = std::move(o);
  return Status::Ok();
}

}  // namespace chorus
