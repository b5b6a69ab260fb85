// Instructions per warm small call, for perf/call_cost.sh: each rank makes warm-up calls, then
// a measured run of calls between callgrind's start and stop requests (no-ops when not under
// valgrind). Run under chorus-run with valgrind on rank 0 only: the native peer is always
// ahead, so rank 0 seldom waits and the count is the call's own path, not its spinning.
//   call-cost OP BYTES CALLS      OP: allreduce | broadcast | sendrecv
#include <valgrind/callgrind.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "chorus/chorus.h"

using namespace chorus;

namespace {

int fail(const char* what, const Status& st) {
  fprintf(stderr, "call-cost: %s: %s\n", what, st.toString().c_str());
  return 1;
}

Status call(Communicator& c, const std::string& op, std::vector<char>& in, std::vector<char>& out) {
  const size_t bytes = in.size();
  if (op == "allreduce")
    return c.allReduce(in.data(), out.data(), bytes, DataType::Uint8, RedOp::Sum);
  if (op == "broadcast") return c.broadcast(in.data(), out.data(), bytes, DataType::Uint8, 0);
  // sendrecv: a ping-pong between ranks 0 and 1, one message each way per call.
  if (c.rank() == 0) {
    CHORUS_RETURN_IF_ERROR(c.send(in.data(), bytes, DataType::Uint8, 1));
    return c.recv(out.data(), bytes, DataType::Uint8, 1);
  }
  if (c.rank() == 1) {
    CHORUS_RETURN_IF_ERROR(c.recv(out.data(), bytes, DataType::Uint8, 0));
    return c.send(in.data(), bytes, DataType::Uint8, 0);
  }
  return Status::Ok();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4 || (strcmp(argv[1], "allreduce") && strcmp(argv[1], "broadcast") &&
                    strcmp(argv[1], "sendrecv"))) {
    fprintf(stderr, "usage: call-cost allreduce|broadcast|sendrecv BYTES CALLS\n");
    return 2;
  }
  const std::string op = argv[1];
  const size_t bytes = strtoull(argv[2], nullptr, 10);
  const int calls = atoi(argv[3]);
  Config config;
  Status st = Config::fromEnvironment(&config);
  if (!st.ok()) return fail("configuration", st);
  std::unique_ptr<Communicator> comm;
  st = Communicator::createFromEnvironment(config, &comm);
  if (!st.ok()) return fail("init", st);
  std::vector<char> in(bytes, 1), out(bytes);
  for (int i = 0; i < 100 && st.ok(); ++i) st = call(*comm, op, in, out);  // warm: plans, caches
  if (st.ok()) st = comm->barrier();
  CALLGRIND_ZERO_STATS;
  CALLGRIND_START_INSTRUMENTATION;
  for (int i = 0; i < calls && st.ok(); ++i) st = call(*comm, op, in, out);
  CALLGRIND_STOP_INSTRUMENTATION;
  CALLGRIND_DUMP_STATS_AT("measured calls");
  if (!st.ok()) return fail(op.c_str(), st);
  st = comm->barrier();  // rank 0 is slow under valgrind: nobody leaves before it is done
  return st.ok() ? 0 : fail("barrier", st);
}
