#include "transport/rdma/registration_cache.h"

#include <unistd.h>

namespace chorus {

Status RegistrationCache::acquire(const void* p, size_t bytes, const RdmaRegion** out) {
  const uintptr_t start = reinterpret_cast<uintptr_t>(p);
  const uintptr_t end = start + bytes;
  std::lock_guard<std::mutex> lock(mutex_);
  ++tick_;
  // Spans may overlap, so look at every one starting at or before `start`, nearest first;
  // the few live entries keep this short.
  for (auto it = byStart_.upper_bound(start); it != byStart_.begin();) {
    --it;
    if (it->second.end >= end) {
      ++hits_;
      it->second.lastUse = tick_;
      ++it->second.inUse;
      *out = it->second.region.get();
      return Status::Ok();
    }
  }
  ++misses_;
  const uintptr_t page = uintptr_t(sysconf(_SC_PAGESIZE));
  const uintptr_t first = start & ~(page - 1);
  const uintptr_t last = (end + page - 1) & ~(page - 1);
  std::unique_ptr<RdmaRegion> region;
  CHORUS_RETURN_IF_ERROR(register_(reinterpret_cast<void*>(first), last - first, &region));
  evictIdle();
  auto it = byStart_.emplace(first, Entry{last, std::move(region), tick_, 1});
  *out = it->second.region.get();
  return Status::Ok();
}

void RegistrationCache::release(const RdmaRegion* region) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto& [start, e] : byStart_)
    if (e.region.get() == region) {
      --e.inUse;
      return;
    }
}

void RegistrationCache::evictIdle() {
  while (byStart_.size() >= capacity_) {
    auto victim = byStart_.end();
    for (auto it = byStart_.begin(); it != byStart_.end(); ++it)
      if (it->second.inUse == 0 &&
          (victim == byStart_.end() || it->second.lastUse < victim->second.lastUse))
        victim = it;
    if (victim == byStart_.end()) return;  // all in use: grow past capacity for now
    byStart_.erase(victim);
  }
}

size_t RegistrationCache::entries() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return byStart_.size();
}

}  // namespace chorus
