// Benchmark tables: one row per message size, printed as it is measured, in the layout people
// already read (nccl-tests for collectives, OSU for point-to-point), or as CSV/JSON for
// scripts. Only rank 0 writes; nothing here knows which library produced the numbers.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "stats.h"

namespace chorus::bench {

enum class Format { Table, Csv, Json };

// One placement (out-of-place or in-place) of a collective at one size.
struct Measure {
  bool valid = false;  // false: this placement was not run ("N/A" in the table)
  Summary us;          // per-iteration time, slowest rank, microseconds
  double algbw = 0;    // GB/s, from the median time
  double busbw = 0;
  double wrong = -1;  // elements that failed the check, summed over ranks; -1: not checked
};

struct CollRow {
  std::string impl, coll, type, op;
  int ranks = 0, root = -1;
  size_t bytes = 0, count = 0;
  Measure oop, ip;
  // The placement that speaks for the row: out-of-place where it ran, else in-place.
  const Measure& headline() const { return oop.valid ? oop : ip; }
};

// OSU point-to-point: latency (one way, us) or bandwidth (MB/s, 10^6 bytes per second).
struct P2pRow {
  std::string impl, test;
  int ranks = 0, iters = 0;
  size_t bytes = 0;
  Summary us;         // per-iteration one-way latency, or time per window
  double mbps = 0;    // bandwidth tests only
  double wrong = -1;  // -c validation: bytes wrong; -1 not checked
};

class CollReport {
 public:
  CollReport(FILE* out, Format f, bool fullStats) : out_(out), fmt_(f), full_(fullStats) {}
  void begin(const std::string& title);
  void row(const CollRow& r);
  void end();  // the closing "# Avg bus bandwidth" line, or the JSON array's close
  double avgBusBw() const { return rows_ ? busSum_ / rows_ : 0; }

 private:
  FILE* out_;
  Format fmt_;
  bool full_;
  int rows_ = 0;
  double busSum_ = 0;
  double wrongSum_ = 0;
};

class P2pReport {
 public:
  P2pReport(FILE* out, Format f, bool fullStats) : out_(out), fmt_(f), full_(fullStats) {}
  void begin(const std::string& title, bool bandwidth);
  void row(const P2pRow& r);
  void end();

 private:
  FILE* out_;
  Format fmt_;
  bool full_;
  bool bw_ = false;
  int rows_ = 0;
};

// Reads back what CollReport wrote as CSV (compare reruns the binary and parses its output).
// Lines that are not data rows are skipped.
std::vector<CollRow> parseCollCsv(const std::string& text);

std::string csvHeaderColl();
std::string csvLineColl(const CollRow& r);
std::string jsonColl(const CollRow& r);
std::string csvHeaderP2p();
std::string csvLineP2p(const P2pRow& r);
std::string jsonP2p(const P2pRow& r);

}  // namespace chorus::bench
