// Flight recorder dumps (core/flight_recorder.h; format in docs/flight-recorder.md), read back.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "chorus/status.h"

namespace chorus::trace {

struct Entry {
  uint64_t call = 0;
  int64_t seq = -1;  // collectives only
  std::string collective, dtype, op, algorithm, state;
  uint64_t count = 0;
  int root = -1, peer = -1;
  int64_t startNs = 0, endNs = 0;  // steady clock of the dumping host; endNs 0: not finished
  int waitRank = -1, waitStep = -1;
  bool finished() const { return state == "done" || state == "failed"; }
  std::string label() const;  // "allreduce #41 (ring)"
};

struct Dump {
  std::string path, reason, comm, host, transports;
  int rank = -1, size = 0, pid = 0;
  int64_t steadyNs = 0, wallNs = 0;  // one reading of both clocks at dump time
  std::vector<Entry> entries;
  // Steady-clock time on this dump's host -> microseconds of wall time, for one time axis.
  double wallUs(int64_t steady) const { return double(wallNs + (steady - steadyNs)) / 1e3; }
  const Entry* last() const { return entries.empty() ? nullptr : &entries.back(); }
};

Status readDump(const std::string& path, Dump* out);

}  // namespace chorus::trace
