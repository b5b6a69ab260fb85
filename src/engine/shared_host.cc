#include "engine/shared_host.h"

#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstring>

#include "chorus/memory.h"

namespace chorus {

namespace {

size_t pageBytes() {
  return size_t(sysconf(_SC_PAGESIZE));
}

// The raw system calls: glibc's wrappers for them are newer than some of the C libraries
// Chorus builds against.
int pidfdOpen(pid_t pid) {
  return int(syscall(SYS_pidfd_open, pid, 0));
}
int pidfdGetfd(int pidfd, int fd) {
  return int(syscall(SYS_pidfd_getfd, pidfd, fd, 0));
}

}  // namespace

SharedHostMemory& SharedHostMemory::get() {
  static auto* memory = new SharedHostMemory;  // never destroyed: frees may come during exit
  return *memory;
}

Status SharedHostMemory::allocate(size_t bytes, void** out) {
  if (!out) return Status::InvalidArgument("allocateShared: out is null");
  *out = nullptr;
  const size_t page = pageBytes();
  if (bytes > SIZE_MAX - page)
    return Status::InvalidArgument("allocateShared: " + std::to_string(bytes) + " bytes overflow");
  const size_t rounded = bytes == 0 ? page : (bytes + page - 1) / page * page;
  const int fd = memfd_create("chorus-shared", MFD_CLOEXEC);
  if (fd < 0) return Status::FromErrno(errno, "allocateShared: memfd_create");
  if (ftruncate(fd, off_t(rounded)) != 0) {
    Status st = Status::FromErrno(
        errno, "allocateShared: sizing a memory file of " + std::to_string(rounded) + " bytes");
    close(fd);
    return st;
  }
  void* p = mmap(nullptr, rounded, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) {
    Status st = Status::FromErrno(errno, "allocateShared: mapping " + std::to_string(rounded) +
                                             " bytes (try a smaller buffer, or ulimit -v)");
    close(fd);
    return st;
  }
  std::lock_guard<std::mutex> lock(mutex_);
  byBase_[reinterpret_cast<uintptr_t>(p)] = {static_cast<char*>(p), rounded, fd, nextId_++};
  *out = p;
  return Status::Ok();
}

Status SharedHostMemory::release(void* p) {
  if (!p) return Status::Ok();
  SharedBlock b;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = byBase_.find(reinterpret_cast<uintptr_t>(p));
    if (it == byBase_.end())
      return Status::InvalidArgument(
          "freeShared: " + std::to_string(reinterpret_cast<uintptr_t>(p)) +
          " is not the start of memory from allocateShared");
    b = it->second;
    byBase_.erase(it);
  }
  munmap(b.base, b.bytes);
  close(b.fd);
  return Status::Ok();
}

bool SharedHostMemory::find(const void* p, size_t bytes, SharedBlock* out) const {
  const uintptr_t start = reinterpret_cast<uintptr_t>(p);
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = byBase_.upper_bound(start);
  if (it == byBase_.begin()) return false;
  --it;
  const SharedBlock& b = it->second;
  if (start + bytes > it->first + b.bytes || start + bytes < start) return false;
  *out = b;
  return true;
}

PeerBlocks::~PeerBlocks() {
  for (const View& v : views_) munmap(const_cast<char*>(v.base), v.bytes);
  if (pidfd_ >= 0) close(pidfd_);
}

Status PeerBlocks::open() {
  if (pidfd_ >= 0) return Status::Ok();
  pidfd_ = pidfdOpen(pid_);
  if (pidfd_ < 0) return Status::FromErrno(errno, "shm: pidfd_open of " + peerName_);
  return Status::Ok();
}

Status PeerBlocks::map(int fd, uint64_t id, size_t bytes, const char** base) {
  for (auto it = views_.begin(); it != views_.end(); ++it)
    if (it->id == id && it->bytes == bytes) {
      views_.splice(views_.begin(), views_, it);
      *base = it->base;
      return Status::Ok();
    }
  CHORUS_RETURN_IF_ERROR(open());
  const int mine = pidfdGetfd(pidfd_, fd);
  if (mine < 0)
    return Status::FromErrno(errno, "shm: taking memory file " + std::to_string(fd) + " of " +
                                        peerName_ + " (pidfd_getfd)");
  void* p = mmap(nullptr, bytes, PROT_READ, MAP_SHARED, mine, 0);
  const int err = errno;
  close(mine);  // the mapping keeps the file
  if (p == MAP_FAILED)
    return Status::FromErrno(
        err, "shm: mapping " + std::to_string(bytes) + " bytes of " + peerName_ + "'s memory");
  if (views_.size() >= capacity_) {
    munmap(const_cast<char*>(views_.back().base), views_.back().bytes);
    views_.pop_back();
  }
  views_.push_front({id, static_cast<const char*>(p), bytes});
  *base = static_cast<const char*>(p);
  return Status::Ok();
}

bool peerBlocksWork(pid_t pid, int fd, uint64_t magic) {
  PeerBlocks blocks(pid, "the probe");
  const char* base = nullptr;
  if (!blocks.map(fd, 0, pageBytes(), &base).ok()) return false;
  uint64_t seen;
  memcpy(&seen, base, sizeof seen);
  return seen == magic;
}

Status allocateShared(size_t bytes, void** out) {
  return SharedHostMemory::get().allocate(bytes, out);
}

Status freeShared(void* p) {
  return SharedHostMemory::get().release(p);
}

}  // namespace chorus
