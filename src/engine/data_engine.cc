#include "engine/data_engine.h"

#include <sched.h>

#include "engine/cpu_engine.h"

namespace chorus {

DataEngine* engineFor(MemoryKind k) {
  return k == MemoryKind::Host ? &CpuEngine::get() : nullptr;
}

}  // namespace chorus

namespace chorus {

Status waitFor(DataEngine& engine, const Completion& c, Deadline deadline) {
  while (!c.finished() && !engine.test(c)) {
    if (deadline.expired())
      return Status::Timeout(std::string("timed out waiting for the ") + engine.name() +
                             " data engine to finish; raise CHORUS_TIMEOUT if it is just slow");
    sched_yield();
  }
  return Status::Ok();
}

}  // namespace chorus
