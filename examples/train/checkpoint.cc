#include "checkpoint.h"

#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cstring>

namespace train {
namespace {

using chorus::Status;

constexpr char kMagic[8] = {'C', 'H', 'T', 'R', 'A', 'I', 'N', '1'};

class Writer {
 public:
  template <typename T>
  void put(const T& v) {
    raw(&v, sizeof v);
  }
  template <typename T>
  void putVec(const std::vector<T>& v) {
    put<uint64_t>(v.size());
    raw(v.data(), v.size() * sizeof(T));
  }
  void raw(const void* p, size_t n) {
    const auto* b = static_cast<const uint8_t*>(p);
    bytes.insert(bytes.end(), b, b + n);
  }
  std::vector<uint8_t> bytes;
};

class Reader {
 public:
  Reader(const uint8_t* p, size_t n) : p_(p), left_(n) {}
  template <typename T>
  bool get(T* v) {
    return raw(v, sizeof *v);
  }
  template <typename T>
  bool getVec(std::vector<T>* v) {
    uint64_t n;
    if (!get(&n) || n > left_ / sizeof(T)) return false;
    v->resize(size_t(n));
    return raw(v->data(), size_t(n) * sizeof(T));
  }
  bool raw(void* dst, size_t n) {
    if (n > left_) return false;
    memcpy(dst, p_, n);
    p_ += n;
    left_ -= n;
    return true;
  }

 private:
  const uint8_t* p_;
  size_t left_;
};

Status writeAll(int fd, const std::vector<uint8_t>& b, const std::string& path) {
  for (size_t off = 0; off < b.size();) {
    ssize_t n = write(fd, b.data() + off, b.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Status::FromErrno(errno, "writing checkpoint " + path);
    off += size_t(n);
  }
  return Status::Ok();
}

}  // namespace

Status saveCheckpoint(const std::string& path, const TrainState& s) {
  Writer w;
  w.raw(kMagic, sizeof kMagic);
  w.putVec(s.dims);
  w.put(s.seed);
  w.put(s.batch);
  w.put(s.epochsDone);
  w.put(s.step);
  w.putVec(s.params);
  w.putVec(s.velocity);
  w.putVec(packRecords(s.history));
  w.putVec(s.stepLoss);
  w.put(uint32_t(crc32(0, w.bytes.data(), uInt(w.bytes.size()))));

  const std::string tmp = path + ".tmp";
  int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Status::FromErrno(errno, "cannot create checkpoint " + tmp);
  Status st = writeAll(fd, w.bytes, tmp);
  if (st.ok() && fsync(fd) != 0) st = Status::FromErrno(errno, "fsync of checkpoint " + tmp);
  close(fd);
  if (st.ok() && rename(tmp.c_str(), path.c_str()) != 0)
    st = Status::FromErrno(errno, "renaming " + tmp + " to " + path);
  if (!st.ok()) {
    unlink(tmp.c_str());
    return st;
  }
  // The rename itself must reach the disk too.
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : path.substr(0, slash + 1);
  int dfd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    fsync(dfd);
    close(dfd);
  }
  return Status::Ok();
}

Status loadCheckpoint(const std::string& path, TrainState* s) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status::FromErrno(errno, "cannot open checkpoint " + path);
  std::vector<uint8_t> b;
  uint8_t chunk[1 << 16];
  for (;;) {
    ssize_t n = read(fd, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      close(fd);
      return Status::FromErrno(errno, "reading checkpoint " + path);
    }
    if (n == 0) break;
    b.insert(b.end(), chunk, chunk + n);
  }
  close(fd);
  const Status bad =
      Status::InvalidArgument(path + " is not a chorus-train checkpoint or is damaged");
  if (b.size() < sizeof kMagic + 4 || memcmp(b.data(), kMagic, sizeof kMagic) != 0) return bad;
  uint32_t crc;
  memcpy(&crc, b.data() + b.size() - 4, 4);
  if (crc != uint32_t(crc32(0, b.data(), uInt(b.size() - 4))))
    return Status::InvalidArgument(path + ": checksum mismatch (damaged checkpoint)");
  std::vector<double> history;
  Reader r(b.data() + sizeof kMagic, b.size() - sizeof kMagic - 4);
  if (!r.getVec(&s->dims) || !r.get(&s->seed) || !r.get(&s->batch) || !r.get(&s->epochsDone) ||
      !r.get(&s->step) || !r.getVec(&s->params) || !r.getVec(&s->velocity) || !r.getVec(&history) ||
      !r.getVec(&s->stepLoss) || s->params.size() != s->velocity.size())
    return bad;
  s->history = unpackRecords(history);
  return Status::Ok();
}

}  // namespace train
