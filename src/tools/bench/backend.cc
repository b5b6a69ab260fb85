#include "backend.h"

namespace chorus::bench {

std::vector<std::string> builtBackends() {
  std::vector<std::string> v = {"chorus"};
#ifdef CHORUS_BENCH_MPI
  v.push_back("mpi");
#endif
#ifdef CHORUS_BENCH_GLOO
  v.push_back("gloo");
#endif
  return v;
}

Status makeBackend(const Options& o, std::unique_ptr<Backend>* out) {
  if (o.impl == "chorus") return makeChorusBackend(o, out);
#ifdef CHORUS_BENCH_MPI
  if (o.impl == "mpi") return makeMpiBackend(o, out);
#endif
#ifdef CHORUS_BENCH_GLOO
  if (o.impl == "gloo") return makeGlooBackend(o, out);
#endif
  return Status::Unsupported("--impl " + o.impl + ": this chorus-bench was built without it (" +
                             (o.impl == "mpi" ? std::string("install libopenmpi-dev")
                                              : std::string("install libgloo-dev")) +
                             " and re-run cmake)");
}

}  // namespace chorus::bench
