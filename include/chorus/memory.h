// Host memory the ranks of one host can read from each other directly.
//
// A buffer from allocateShared lives in a memory file (memfd) that other local ranks map on
// demand, so the shared-memory transport passes its payloads by reference instead of copying
// them into its slots: a peer reduces or copies straight out of this rank's buffer. Use it for
// the buffers of large collectives (ncclMemAlloc returns it on the host path). Any other host
// memory works as well; it is only copied once more.
#pragma once

#include <cstddef>

#include "chorus/status.h"

namespace chorus {

// `bytes` (rounded up to whole pages; 0 gives one page) of zeroed, page-aligned memory.
Status allocateShared(size_t bytes, void** out);
// Frees what allocateShared returned; null is ignored. Peers that mapped it keep their view of
// the pages until they drop it, so the memory is returned to the system once they have.
Status freeShared(void* p);

}  // namespace chorus
