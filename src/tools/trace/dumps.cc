#include "tools/trace/dumps.h"

#include <fstream>
#include <nlohmann/json.hpp>

namespace chorus::trace {

std::string Entry::label() const {
  std::string s = collective;
  if (seq >= 0) s += " #" + std::to_string(seq);
  if (peer >= 0) s += " peer " + std::to_string(peer);
  if (!algorithm.empty()) s += " (" + algorithm + ")";
  return s;
}

Status readDump(const std::string& path, Dump* out) {
  std::ifstream f(path);
  if (!f) return Status::InvalidArgument(path + ": cannot be read");
  nlohmann::json j = nlohmann::json::parse(f, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object())
    return Status::InvalidArgument(path + ": not JSON (a truncated dump?)");
  if (j.value("format", "") != "chorus-flight-recorder")
    return Status::InvalidArgument(path + ": not a Chorus flight recorder dump");
  try {
    Dump d;
    d.path = path;
    d.reason = j.value("reason", "");
    d.comm = j.at("comm").get<std::string>();
    d.host = j.value("host", "");
    d.transports = j.value("transports", "");
    d.rank = j.at("rank").get<int>();
    d.size = j.at("size").get<int>();
    d.pid = j.value("pid", 0);
    d.steadyNs = j.at("clock").at("steady_ns").get<int64_t>();
    d.wallNs = j.at("clock").at("wall_ns").get<int64_t>();
    for (const auto& e : j.at("entries")) {
      Entry x;
      x.call = e.at("call").get<uint64_t>();
      x.seq = e.value("seq", int64_t(-1));
      x.collective = e.at("collective").get<std::string>();
      x.count = e.value("count", uint64_t(0));
      x.dtype = e.value("dtype", "");
      x.op = e.value("op", "");
      x.algorithm = e.value("algorithm", "");
      x.state = e.at("state").get<std::string>();
      x.root = e.value("root", -1);
      x.peer = e.value("peer", -1);
      x.startNs = e.at("start_ns").get<int64_t>();
      x.endNs = e.value("end_ns", int64_t(0));
      if (e.contains("waiting_on")) {
        x.waitRank = e["waiting_on"].value("rank", -1);
        x.waitStep = e["waiting_on"].value("step", -1);
      }
      d.entries.push_back(std::move(x));
    }
    if (d.rank < 0 || d.rank >= d.size)
      return Status::InvalidArgument(path + ": rank " + std::to_string(d.rank) +
                                     " out of range for size " + std::to_string(d.size));
    *out = std::move(d);
  } catch (const nlohmann::json::exception& e) {
    return Status::InvalidArgument(path + ": malformed dump: " + e.what());
  }
  return Status::Ok();
}

}  // namespace chorus::trace
