// CSV rows: one header, then one line per size. The column names are the contract that
// `chorus-bench compare` and the tests parse.
#include <cstdio>
#include <cstdlib>
#include <map>
#include <sstream>

#include "report.h"

namespace chorus::bench {

namespace {

std::string num(double v) {
  char b[64];
  snprintf(b, sizeof b, "%.6g", v);
  return b;
}

std::string measureCsv(const Measure& m) {
  if (!m.valid) return ",,,,,";
  return num(m.us.median) + "," + num(m.us.min) + "," + num(m.us.max) + "," + num(m.algbw) + "," +
         num(m.busbw) + "," + num(m.wrong);
}

std::vector<std::string> split(const std::string& line) {
  std::vector<std::string> out;
  std::stringstream ss(line);
  std::string cell;
  while (std::getline(ss, cell, ',')) out.push_back(cell);
  if (!line.empty() && line.back() == ',') out.push_back("");
  return out;
}

}  // namespace

std::string csvHeaderColl() {
  return "impl,coll,ranks,bytes,count,type,redop,root,"
         "oop_us,oop_min_us,oop_max_us,oop_algbw,oop_busbw,oop_wrong,"
         "ip_us,ip_min_us,ip_max_us,ip_algbw,ip_busbw,ip_wrong";
}

std::string csvLineColl(const CollRow& r) {
  return r.impl + "," + r.coll + "," + std::to_string(r.ranks) + "," + std::to_string(r.bytes) +
         "," + std::to_string(r.count) + "," + r.type + "," + r.op + "," + std::to_string(r.root) +
         "," + measureCsv(r.oop) + "," + measureCsv(r.ip);
}

std::string csvHeaderP2p() {
  return "impl,test,ranks,bytes,us,min_us,max_us,mbps,iters,wrong";
}

std::string csvLineP2p(const P2pRow& r) {
  return r.impl + "," + r.test + "," + std::to_string(r.ranks) + "," + std::to_string(r.bytes) +
         "," + num(r.us.median) + "," + num(r.us.min) + "," + num(r.us.max) + "," + num(r.mbps) +
         "," + std::to_string(r.iters) + "," + num(r.wrong);
}

std::vector<CollRow> parseCollCsv(const std::string& text) {
  std::vector<CollRow> rows;
  std::map<std::string, size_t> col;
  std::stringstream ss(text);
  std::string line;
  while (std::getline(ss, line)) {
    if (line.rfind("impl,coll,", 0) == 0) {
      col.clear();
      auto names = split(line);
      for (size_t i = 0; i < names.size(); ++i) col[names[i]] = i;
      continue;
    }
    auto cells = split(line);
    if (col.empty() || cells.size() != col.size()) continue;
    auto s = [&](const char* name) { return cells[col[name]]; };
    auto d = [&](const char* name) { return atof(cells[col[name]].c_str()); };
    CollRow r;
    r.impl = s("impl");
    r.coll = s("coll");
    r.type = s("type");
    r.op = s("redop");
    r.ranks = int(d("ranks"));
    r.root = int(d("root"));
    r.bytes = size_t(d("bytes"));
    r.count = size_t(d("count"));
    for (auto [m, p] : {std::pair{&r.oop, std::string("oop_")}, {&r.ip, std::string("ip_")}}) {
      m->valid = !s((p + "us").c_str()).empty();
      if (!m->valid) continue;
      m->us.median = d((p + "us").c_str());
      m->us.min = d((p + "min_us").c_str());
      m->us.max = d((p + "max_us").c_str());
      m->algbw = d((p + "algbw").c_str());
      m->busbw = d((p + "busbw").c_str());
      m->wrong = d((p + "wrong").c_str());
    }
    rows.push_back(r);
  }
  return rows;
}

}  // namespace chorus::bench
