// Registrations of the caller's buffers, kept for reuse: registering memory with a NIC costs a
// system call and page-table work, and a training step sends out of the same buffers again and
// again. A lookup finds a cached registration covering the range or registers the pages it
// spans. Entries a posted write still reads are never evicted; beyond `capacity` the least
// recently used idle one is.
//
// Only memory whose pages stay put may be cached where registration pins pages (verbs, EFA):
// a buffer freed and reallocated at the same address would be read through the old pages. The
// transport therefore caches the caller's buffers only on providers that do not pin.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>

#include "transport/rdma/rdma_nic.h"

namespace chorus {

class RegistrationCache {
 public:
  using Register = std::function<Status(void* p, size_t bytes, std::unique_ptr<RdmaRegion>*)>;
  RegistrationCache(Register reg, size_t capacity)
      : register_(std::move(reg)), capacity_(capacity) {}

  // A registration covering [p, p + bytes), marked in use until release(). Thread-safe.
  Status acquire(const void* p, size_t bytes, const RdmaRegion** out);
  void release(const RdmaRegion* region);

  size_t entries() const;
  uint64_t hits() const { return hits_; }
  uint64_t misses() const { return misses_; }

 private:
  struct Entry {
    uintptr_t end;
    std::unique_ptr<RdmaRegion> region;
    uint64_t lastUse;
    int inUse;
  };
  void evictIdle();  // holds mutex_

  Register register_;
  const size_t capacity_;
  mutable std::mutex mutex_;
  std::multimap<uintptr_t, Entry> byStart_;  // registered page spans by first address
  uint64_t tick_ = 0;
  uint64_t hits_ = 0, misses_ = 0;
};

}  // namespace chorus
