// The 128-byte token that lets the ranks of one job find each other: the bootstrap root's
// address plus a random per-job secret. Pass it out of band (MPI_Bcast, a file, a pipe).
#pragma once

#include <cstdint>

#include "chorus/status.h"

namespace chorus {

struct UniqueId {
  uint8_t bytes[128];
};

// Starts a bootstrap root in this process (a background thread that lives until the job's
// ranks have met, or its deadline passes) and describes it in `out`. The root listens on the
// interface chosen by CHORUS_SOCKET_IFNAME (default: the first non-loopback interface, else
// loopback). `timeoutSec` bounds how long the root waits for all ranks.
Status createUniqueId(UniqueId* out, double timeoutSec = 300);

}  // namespace chorus
