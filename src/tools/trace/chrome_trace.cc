#include "tools/trace/chrome_trace.h"

#include <nlohmann/json.hpp>

namespace chorus::trace {

std::string chromeTrace(const std::vector<Dump>& dumps) {
  using nlohmann::json;
  json events = json::array();
  for (const Dump& d : dumps) {
    events.push_back({{"name", "thread_name"},
                      {"ph", "M"},
                      {"pid", 0},
                      {"tid", d.rank},
                      {"args",
                       {{"name", "rank " + std::to_string(d.rank) + " (" + d.host + ", pid " +
                                     std::to_string(d.pid) + ")"}}}});
    for (const Entry& e : d.entries) {
      const int64_t end = e.endNs ? e.endNs : d.steadyNs;
      json args = {{"count", e.count}, {"dtype", e.dtype}, {"state", e.state}};
      if (!e.op.empty()) args["op"] = e.op;
      if (e.root >= 0) args["root"] = e.root;
      if (e.waitRank >= 0)
        args["waiting_on"] =
            "rank " + std::to_string(e.waitRank) + " (step " + std::to_string(e.waitStep) + ")";
      events.push_back({{"name", e.label()},
                        {"cat", e.collective},
                        {"ph", "X"},
                        {"pid", 0},
                        {"tid", d.rank},
                        {"ts", d.wallUs(e.startNs)},
                        {"dur", std::max(0.0, double(end - e.startNs) / 1e3)},
                        {"args", std::move(args)}});
    }
  }
  return json{{"traceEvents", std::move(events)}, {"displayTimeUnit", "ms"}}.dump() + "\n";
}

}  // namespace chorus::trace
