// One-sided access to a same-host peer's memory through the kernel's cross-memory attach
// (process_vm_writev / process_vm_readv): one copy straight between the two processes' buffers,
// with no slot in between and nothing for the peer to do. The kernel allows it where the peer
// could be ptraced by us (same user; under Yama's ptrace_scope 1 only from an ancestor), so the
// transport probes each peer once and offers it only where the probe succeeds.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "chorus/status.h"

namespace chorus {

// Whether the 8 bytes at `addr` in process `pid` can be read, and hold `expect`.
bool crossMemoryWorks(pid_t pid, uint64_t addr, uint64_t expect);

// Writes [src, src + bytes) to `to` in process `pid` (or reads `from` there into dst). `who`
// names the peer for the error, which says what failed and what to try.
Status crossMemoryWrite(pid_t pid, char* to, const char* src, size_t bytes, const std::string& who);
Status crossMemoryRead(pid_t pid, char* dst, const char* from, size_t bytes,
                       const std::string& who);

}  // namespace chorus
