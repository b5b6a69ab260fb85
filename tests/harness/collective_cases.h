// The collective case runner shared by the shm, TCP and multi-host suites: which cases each
// collective gets (every dtype x op at small counts, a few large pipelined ones) and how one
// rank runs a case and checks its own result against the sequential reference.
#pragma once

#include <string>
#include <vector>

#include "chorus/communicator.h"

namespace chorus::test {

enum class Coll {
  AllReduce,
  ReduceScatter,
  AllGather,
  Broadcast,
  Reduce,
  AllToAll,
  Gather,
  Scatter,
  SendRecv,
  Barrier
};
extern const char* const kCollNames[10];

struct Case {
  DataType t;
  RedOp op;
  size_t count;
  bool inPlace;
  int root;
};

bool reduces(Coll c);
std::string caseName(Coll c, const Case& k);
std::vector<Case> casesFor(Coll c, int size);
// Runs one case on this rank and checks it; returns "" or what went wrong ("call failed: ..."
// when the call itself returned an error).
std::string runCase(Communicator& comm, Coll c, const Case& k, uint64_t seed);
// Every case of `c` on this communicator; reports up to 10 failures through `report`.
// Returns the number of failed cases.
int runAllCases(Communicator& comm, Coll c, void (*report)(void*, const char*), void* ctx);

}  // namespace chorus::test
