// chorus-bench: benchmark tables for Chorus, Open MPI and Gloo from one binary.
//   chorus-run -n 2 -- chorus-bench allreduce -b 8 -e 256M
//   mpirun -n 2 chorus-bench allreduce --impl mpi
//   chorus-bench compare -n 2 allreduce          (starts the launchers itself)
#include <cstdio>
#include <string>
#include <vector>

#include "backend.h"
#include "coll_bench.h"
#include "compare.h"
#include "options.h"
#include "p2p_bench.h"
#include "plot.h"

using namespace chorus;
using namespace chorus::bench;

int main(int argc, char** argv) {
  Options o;
  if (int rc = parseOptions(argc, argv, &o); rc >= 0) return rc;
  // `chorus-bench impls`: which libraries this binary can run, one per line (for scripts).
  if (o.command == "impls") {
    for (auto& i : builtBackends()) printf("%s\n", i.c_str());
    return 0;
  }
  if (o.command == "compare") return runCompare(o);

  std::unique_ptr<Backend> b;
  if (Status st = makeBackend(o, &b); !st.ok()) {
    fprintf(stderr, "chorus-bench: %s: %s\n", o.impl.c_str(), st.toString().c_str());
    return 1;
  }
  std::vector<CollRow> rows;
  int code = isCollective(o.command) ? runCollective(o, *b, &rows) : runPointToPoint(o, *b);
  if (!o.plot.empty() && b->rank() == 0 && !rows.empty()) {
    PlotSeries s;
    s.name = b->name();
    for (auto& r : rows) {
      const Measure& m = r.headline();
      s.bytes.push_back(double(r.bytes));
      s.busbw.push_back(m.busbw);
      s.us.push_back(m.us.median);
    }
    std::string err;
    if (!plotSeries(o.plot, o.command + ", " + std::to_string(b->size()) + " ranks", {s}, &err)) {
      fprintf(stderr, "chorus-bench: %s\n", err.c_str());
      if (!code) code = 1;
    }
  }
  b.reset();  // MPI_Finalize / communicator teardown before exit
  return code;
}
