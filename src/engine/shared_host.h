// The registry behind allocateShared (include/chorus/memory.h): which ranges of this process
// are memory files a local peer can map, and a peer's view of them.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <list>
#include <map>
#include <mutex>
#include <string>

#include "chorus/status.h"

namespace chorus {

// One allocation: its memory file (a descriptor of this process) and where it is mapped.
struct SharedBlock {
  char* base = nullptr;
  size_t bytes = 0;
  int fd = -1;
  uint64_t id = 0;  // unique in this process: a freed block's id is never reused
};

class SharedHostMemory {
 public:
  static SharedHostMemory& get();
  Status allocate(size_t bytes, void** out);
  Status release(void* p);
  // The block holding all of [p, p + bytes), if one does.
  bool find(const void* p, size_t bytes, SharedBlock* out) const;

 private:
  mutable std::mutex mutex_;
  std::map<uintptr_t, SharedBlock> byBase_;
  uint64_t nextId_ = 1;
};

// A local peer's shared blocks as this process maps them: found by the peer's (fd, id), taken
// from its process with pidfd_getfd (the same permission as cross-memory attach), kept for
// reuse; beyond `capacity` the least recently used goes. Used by one thread.
class PeerBlocks {
 public:
  PeerBlocks(pid_t pid, std::string peerName, size_t capacity = 64)
      : pid_(pid), peerName_(std::move(peerName)), capacity_(capacity) {}
  ~PeerBlocks();
  PeerBlocks(const PeerBlocks&) = delete;
  PeerBlocks& operator=(const PeerBlocks&) = delete;
  // The peer's block `id`, which is its descriptor `fd` of `bytes`, mapped here (read-only).
  Status map(int fd, uint64_t id, size_t bytes, const char** base);
  size_t mapped() const { return views_.size(); }

 private:
  struct View {
    uint64_t id;
    const char* base;
    size_t bytes;
  };
  Status open();
  const pid_t pid_;
  const std::string peerName_;
  const size_t capacity_;
  int pidfd_ = -1;
  std::list<View> views_;  // most recently used first
};

// Whether this process can map a peer's memory files: takes the peer's descriptor `fd`, a
// block of one page holding `magic` at its start, and checks it.
bool peerBlocksWork(pid_t pid, int fd, uint64_t magic);

}  // namespace chorus
