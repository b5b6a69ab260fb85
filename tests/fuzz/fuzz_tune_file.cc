// Feeds: the text of a tuning file (CHORUS_TUNE_FILE, written by chorus-tune: JSON, or the
// estimates lines of docs/topology.md) to applyEstimates, laid over a small two-host topology.
// Checks: no crash, UB or leak; a refused file leaves the topology as it was; an accepted
// one changes nothing but the estimates, and formatEstimates' text and formatEstimatesJson's,
// each laid over the original, give the same topology and format to the same text.
#include <string>

#include "fuzz_check.h"
#include "topo/estimates_json.h"
#include "topo/topology.h"

using namespace chorus::topo;

namespace {
const char kBase[] =
    "chorus-topology 1\n"
    "host node count=2 sockets=2 cores_per_socket=4\n"
    "  gpu 0000:17:00.0 socket=0\n"
    "  gpu 0000:65:00.0 socket=1\n"
    "  nic eth0 socket=0 speed_gbps=100\n"
    "end\n";
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static Topology base = [] {
    Topology t;
    FUZZ_CHECK(parseTopology(kBase, "base", &t).ok());
    return t;
  }();
  const std::string text(reinterpret_cast<const char*>(data), size);
  Topology t = base;
  if (!applyEstimates(text, "fuzz", &t).ok()) {
    FUZZ_CHECK(t.sameAs(base));
    return 0;
  }
  FUZZ_CHECK(t.hosts == base.hosts && t.ranks == base.ranks);
  const std::string once = formatEstimates(t);
  Topology again = base;
  FUZZ_CHECK(applyEstimates(once, "fuzz", &again).ok());
  FUZZ_CHECK(again.sameAs(t));
  FUZZ_CHECK(formatEstimates(again) == once);
  Topology fromJson = base;
  FUZZ_CHECK(applyEstimates(formatEstimatesJson(t, "fuzz", {}), "fuzz", &fromJson).ok());
  FUZZ_CHECK(fromJson.sameAs(t));
  return 0;
}
