// A promise that some work will finish: an operation of the data engine, or a transfer a
// connection was given. Whoever issued the work tests it (DataEngine::test,
// Connection::test); a ticket of 0 means it finished before the call returned, which lets the
// executor skip the test on the paths that copy at once.
#pragma once

#include <cstdint>

namespace chorus {

struct Completion {
  uint64_t ticket = 0;
  bool finished() const { return ticket == 0; }
};

}  // namespace chorus
