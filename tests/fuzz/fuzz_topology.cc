// Feeds: the text of a topology file (docs/topology.md) to parseTopology, as CHORUS_TOPO_FILE
// or chorus-topo/-sim --file load it.
// Checks: no crash, UB, leak or runaway allocation; an accepted topology is consistent (every
// rank on a host, socket and GPU that exist; path tables as large as the device lists) and
// survives a round trip: formatTopology's text parses back to the same topology and formats
// to the same text.
#include <string>

#include "fuzz_check.h"
#include "topo/topology.h"

using namespace chorus::topo;

namespace {
void checkConsistent(const Topology& t) {
  for (const RankPlace& r : t.ranks) {
    FUZZ_CHECK(r.host >= 0 && r.host < int(t.hosts.size()));
    const Host& h = t.hosts[size_t(r.host)];
    FUZZ_CHECK(r.socket >= 0 && r.socket < h.sockets);
    FUZZ_CHECK(r.gpu >= -1 && r.gpu < int(h.gpus.size()));
  }
  for (const Host& h : t.hosts) {
    FUZZ_CHECK(h.gpuPaths.size() == h.gpus.size() && h.gpuNicPaths.size() == h.gpus.size());
    for (size_t g = 0; g < h.gpus.size(); ++g)
      FUZZ_CHECK(h.gpuPaths[g].size() == h.gpus.size() && h.gpuNicPaths[g].size() == h.nics.size());
  }
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  Topology t;
  if (!parseTopology(text, "fuzz", &t).ok()) return 0;
  checkConsistent(t);
  const std::string once = formatTopology(t);
  Topology again;
  FUZZ_CHECK(parseTopology(once, "fuzz", &again).ok());
  FUZZ_CHECK(again.sameAs(t));
  FUZZ_CHECK(formatTopology(again) == once);
  return 0;
}
