// Feeds: the text of a CHORUS_* setting to the parsers Config::fromEnvironment uses: byte 0
// picks one, the rest is the value.
//   0 parseBytes (CHORUS_*_BYTES: "512K", "4M"), 1 AlgoOverride::parse (CHORUS_ALGO),
//   2 parseFamily (CHORUS_SOCKET_FAMILY), 3 interfaceMatches (CHORUS_SOCKET_IFNAME; the value
//   is "spec\ninterface name")
// Checks: no crash, UB (a size times its suffix overflowing) or leak; a size is never
// negative; a forced algorithm is found again for its collective; a family is AF_UNSPEC,
// AF_INET or AF_INET6; "^spec" matches exactly the names "spec" does not.
#include <sys/socket.h>

#include <string>

#include "common/env.h"
#include "common/socket.h"
#include "fuzz_check.h"
#include "tune/algo_override.h"

using namespace chorus;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const std::string v(reinterpret_cast<const char*>(data + 1), size - 1);
  switch (data[0] % 4) {
    case 0: {
      if (v.find('\0') != std::string::npos) return 0;  // an environment value has none
      auto b = parseBytes(v);
      if (b) FUZZ_CHECK(*b >= 0);
      break;
    }
    case 1: {
      AlgoOverride o;
      if (!AlgoOverride::parse(v, &o).ok()) return 0;
      for (const auto& [c, a] : o.forced) {
        FUZZ_CHECK(a != nullptr);
        FUZZ_CHECK(o.forCollective(c) == a);
      }
      break;
    }
    case 2: {
      int family = -1;
      if (parseFamily(v, &family))
        FUZZ_CHECK(family == AF_UNSPEC || family == AF_INET || family == AF_INET6);
      break;
    }
    default: {
      const size_t nl = v.find('\n');
      const std::string spec = v.substr(0, nl), name = nl == v.npos ? "" : v.substr(nl + 1);
      if (!spec.empty() && spec[0] == '^') return 0;
      std::string negated = "^";
      negated += spec;  // not "^" + spec: GCC 12 warns falsely (-Wrestrict) on that
      FUZZ_CHECK(interfaceMatches(negated, name) == !interfaceMatches(spec, name));
      break;
    }
  }
  return 0;
}
