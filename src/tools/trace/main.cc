// chorus-trace: merges the flight recorder dumps of a communicator's ranks (written on timeout,
// abort and SIGUSR1; docs/flight-recorder.md) into one Chrome/Perfetto trace, and says which
// rank the others wait on.
//   chorus-trace [-o trace.json] /tmp/chorus-trace-<comm>-rank*.json
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "tools/cli/tool.h"
#include "tools/trace/chrome_trace.h"
#include "tools/trace/diagnose.h"
#include "tools/trace/dumps.h"

int main(int argc, char** argv) {
  chorus::cli::Tool tool("chorus-trace", "[-o trace.json] DUMP...",
                         "Merges flight recorder dumps (one per rank, written on timeout, abort "
                         "and SIGUSR1 to CHORUS_TRACE_DIR) into a Chrome/Perfetto trace (open it "
                         "in ui.perfetto.dev or chrome://tracing) and names the rank the others "
                         "wait on.");
  std::string outPath = "chorus-trace.json";
  std::vector<std::string> paths;
  chorus::cli::text(tool.app(), "-o,--output", &outPath, "FILE", "the merged trace");
  tool.app()
      .add_option("dumps", paths, "the dumps of one communicator")
      ->required()
      ->type_name("DUMP");
  if (int rc = tool.parse(argc, argv); rc >= 0) return rc;
  std::vector<chorus::trace::Dump> dumps;
  for (const std::string& p : paths) {
    chorus::trace::Dump d;
    chorus::Status st = chorus::trace::readDump(p, &d);
    if (!st.ok()) return fprintf(stderr, "chorus-trace: %s\n", st.message().c_str()), 1;
    if (!dumps.empty() && (d.comm != dumps[0].comm || d.size != dumps[0].size))
      return fprintf(stderr,
                     "chorus-trace: %s is of communicator %s (%d ranks), %s of %s (%d ranks): "
                     "give the dumps of one communicator\n",
                     p.c_str(), d.comm.c_str(), d.size, dumps[0].path.c_str(),
                     dumps[0].comm.c_str(), dumps[0].size),
             1;
    for (const auto& o : dumps)
      if (o.rank == d.rank)
        return fprintf(stderr, "chorus-trace: %s and %s are both rank %d\n", o.path.c_str(),
                       p.c_str(), d.rank),
               1;
    dumps.push_back(std::move(d));
  }
  std::ofstream out(outPath);
  out << chorus::trace::chromeTrace(dumps);
  if (!out) return fprintf(stderr, "chorus-trace: cannot write %s\n", outPath.c_str()), 1;
  if (tool.quiet()) return 0;
  size_t calls = 0;
  for (const auto& d : dumps) calls += d.entries.size();
  printf("%zu dump(s) of communicator %s (%d ranks), %zu calls: trace in %s\n", dumps.size(),
         dumps[0].comm.c_str(), dumps[0].size, calls, outPath.c_str());
  for (const auto& d : dumps) {
    const chorus::trace::Entry* e = d.last();
    printf(
        "  rank %d (%s): %s; last call %s%s\n", d.rank, d.host.c_str(), d.reason.c_str(),
        e ? (e->label() + ", " + e->state).c_str() : "none",
        e && e->waitRank >= 0 ? (", waiting on rank " + std::to_string(e->waitRank)).c_str() : "");
  }
  printf("%s\n", chorus::trace::diagnose(dumps).text.c_str());
  return 0;
}
