// JSON rows (docs/json.md), one object per size, through nlohmann-json.
#include <nlohmann/json.hpp>

#include "report.h"

namespace chorus::bench {

namespace {

using Json = nlohmann::ordered_json;  // keys in the documented order

Json measureJson(const Measure& m) {
  if (!m.valid) return nullptr;
  return {{"time_us", m.us.median}, {"min_us", m.us.min},    {"max_us", m.us.max},
          {"mean_us", m.us.mean},   {"iters", m.us.samples}, {"algbw_gbs", m.algbw},
          {"busbw_gbs", m.busbw},   {"wrong", m.wrong}};
}

}  // namespace

std::string jsonColl(const CollRow& r) {
  const Json j = {{"impl", r.impl},
                  {"coll", r.coll},
                  {"ranks", r.ranks},
                  {"bytes", r.bytes},
                  {"count", r.count},
                  {"type", r.type},
                  {"redop", r.op},
                  {"root", r.root},
                  {"out_of_place", measureJson(r.oop)},
                  {"in_place", measureJson(r.ip)}};
  return j.dump();
}

std::string jsonP2p(const P2pRow& r) {
  const Json j = {{"impl", r.impl},     {"test", r.test},    {"ranks", r.ranks},
                  {"bytes", r.bytes},   {"us", r.us.median}, {"min_us", r.us.min},
                  {"max_us", r.us.max}, {"mbps", r.mbps},    {"iters", r.iters},
                  {"wrong", r.wrong}};
  return j.dump();
}

}  // namespace chorus::bench
